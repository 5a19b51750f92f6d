//! [`MemoryStore`]: objects held in memory. Used by tests, fixtures and the demo table; it can
//! be told to refuse listing so that it behaves like a static HTTPS host.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, RwLock};

use bytes::Bytes;

use super::{
    check_range_len, check_range_order, past_end, phase_for, BoxFuture, ListEntry, RangeRead,
};
use crate::error::{DeltaError, Result};

#[derive(Debug, Clone)]
struct Object {
    data: Bytes,
    last_modified_ms: i64,
}

/// An in-memory object store rooted at a table.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    objects: Arc<RwLock<BTreeMap<String, Object>>>,
    cannot_list: bool,
}

impl MemoryStore {
    /// An empty store that can list.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same objects, seen through a store that cannot list (like static HTTPS).
    pub fn without_listing(&self) -> Self {
        MemoryStore {
            objects: Arc::clone(&self.objects),
            cannot_list: true,
        }
    }

    /// Adds or replaces an object, with modification time 0.
    pub fn put(&self, path: impl Into<String>, data: impl Into<Bytes>) {
        self.put_with_time(path, data, 0)
    }

    /// Adds or replaces an object with the given modification time (ms since the epoch).
    pub fn put_with_time(&self, path: impl Into<String>, data: impl Into<Bytes>, ms: i64) {
        if let Ok(mut objects) = self.objects.write() {
            objects.insert(
                path.into(),
                Object {
                    data: data.into(),
                    last_modified_ms: ms,
                },
            );
        }
    }

    /// Removes an object; no error if it is absent.
    pub fn delete(&self, path: &str) {
        if let Ok(mut objects) = self.objects.write() {
            objects.remove(path);
        }
    }

    /// Paths of every object, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.objects
            .read()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn lookup(&self, path: &str) -> Result<Object> {
        let objects = self.objects.read().map_err(|_| DeltaError::Io {
            path: path.to_string(),
            message: "memory store lock poisoned".into(),
            phase: phase_for(path),
            transient: false,
        })?;
        objects
            .get(path)
            .cloned()
            .ok_or_else(|| DeltaError::NotFound {
                path: path.to_string(),
                phase: phase_for(path),
            })
    }
}

impl RangeRead for MemoryStore {
    fn get_range(&self, path: &str, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        let result = check_range_order(path, &range)
            .and_then(|()| self.lookup(path))
            .and_then(|o| {
                let len = o.data.len() as u64;
                if range.end > len {
                    return Err(past_end(path, &range, Some(len)));
                }
                let bytes = o.data.slice(range.start as usize..range.end as usize);
                check_range_len(path, &range, &bytes)?;
                Ok(bytes)
            });
        Box::pin(async move { result })
    }

    fn get(&self, path: &str) -> BoxFuture<'_, Result<Bytes>> {
        let result = self.lookup(path).map(|o| o.data);
        Box::pin(async move { result })
    }

    fn size(&self, path: &str) -> BoxFuture<'_, Result<Option<u64>>> {
        let result = self.lookup(path).map(|o| Some(o.data.len() as u64));
        Box::pin(async move { result })
    }

    fn can_list(&self) -> bool {
        !self.cannot_list
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> BoxFuture<'_, Result<Option<Vec<ListEntry>>>> {
        if self.cannot_list {
            return Box::pin(async { Ok(None) });
        }
        let entries = self.objects.read().map(|objects| {
            objects
                .range(prefix.to_string()..)
                .take_while(|(k, _)| k.starts_with(prefix))
                .filter(|(k, _)| start_after.is_none_or(|s| k.as_str() > s))
                .map(|(k, o)| ListEntry {
                    path: k.clone(),
                    size: o.data.len() as u64,
                    last_modified_ms: Some(o.last_modified_ms),
                })
                .collect::<Vec<_>>()
        });
        let result = entries.map(Some).map_err(|_| DeltaError::Io {
            path: prefix.to_string(),
            message: "memory store lock poisoned".into(),
            phase: phase_for(prefix),
            transient: false,
        });
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    #[test]
    fn get_range_list_and_missing() {
        let store = MemoryStore::new();
        store.put("_delta_log/0.json", "hello world");
        store.put("a.parquet", "xyz");
        assert_eq!(
            block_on(store.get_range("_delta_log/0.json", 6..11)).ok(),
            Some(Bytes::from("world"))
        );
        assert!(block_on(store.get_range("a.parquet", 2..5)).is_err());
        let err = block_on(store.get("nope")).err().map(|e| e.code());
        assert_eq!(err, Some("not_found"));
        let listed = block_on(store.list("_delta_log/", None)).ok().flatten();
        assert_eq!(listed.map(|l| l.len()), Some(1));
        let after = block_on(store.list("", Some("_delta_log/0.json")))
            .ok()
            .flatten();
        assert_eq!(after.map(|l| l.len()), Some(1));
        let no_list = store.without_listing();
        assert_eq!(block_on(no_list.list("", None)).ok(), Some(None));
    }
}
