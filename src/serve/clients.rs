//! Connections per client address: counted in while a connection is served, and refused
//! past [`ServeConfig::max_connections_per_client`](super::ServeConfig).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// Open connections by client address; clones share the counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct Clients {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Clients {
    /// Counts a connection from `ip` in, unless that client already holds `max`: then
    /// `None`.
    pub(crate) fn admit(&self, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let mut open = self.lock();
        let count = open.entry(ip).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: self.clone(),
            ip,
        })
    }

    /// The counts, even if a thread panicked while holding them.
    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One admitted connection; counted out when dropped.
#[derive(Debug)]
pub(crate) struct ClientSlot {
    clients: Clients,
    ip: IpAddr,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self.clients.lock();
        if let Some(count) = open.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_bound_per_address() {
        let clients = Clients::default();
        let a: IpAddr = [127, 0, 0, 1].into();
        let b: IpAddr = [127, 0, 0, 2].into();
        let first = clients.admit(a, 2);
        let second = clients.admit(a, 2);
        assert!(first.is_some() && second.is_some());
        assert!(clients.admit(a, 2).is_none());
        assert!(
            clients.admit(b, 2).is_some(),
            "another client is not affected"
        );
        drop(first);
        assert!(
            clients.admit(a, 2).is_some(),
            "a closed connection frees its slot"
        );
        drop(second);
        assert!(
            clients.lock().get(&a).is_none(),
            "no entry left once all are closed"
        );
    }
}
