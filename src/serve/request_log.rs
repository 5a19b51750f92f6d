//! `--log`: one line per request on standard error, written by a thread of its own.
//!
//! A request never waits for the log: its line is handed to the writer through a bounded
//! queue, and dropped when the queue is full (stderr a pipe nobody reads, a terminal paused
//! with Ctrl-S). Writing from the request handlers blocked every connection once the pipe's
//! 64 KiB filled. The writer says how many lines it dropped before the next it writes.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;

/// Lines waiting for the writer before new ones are dropped.
const QUEUED_LINES: usize = 4096;

/// The sending side of the log; the writer thread ends when it is dropped.
#[derive(Debug)]
pub(crate) struct RequestLog {
    lines: SyncSender<String>,
    dropped: Arc<AtomicU64>,
}

impl RequestLog {
    /// Starts the writer thread, writing to standard error.
    pub(crate) fn to_stderr() -> io::Result<RequestLog> {
        Self::to(io::stderr)
    }

    /// Starts the writer thread, writing each line to what `out` gives.
    fn to<W: Write>(out: impl Fn() -> W + Send + 'static) -> io::Result<RequestLog> {
        let (lines, queued) = sync_channel::<String>(QUEUED_LINES);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("dar-serve-log".into())
            .spawn(move || {
                for line in queued {
                    let mut out = out();
                    let missed = counted.swap(0, Ordering::Relaxed);
                    // A log nobody reads any more (stderr closed) does not stop the serving.
                    if missed > 0 {
                        let _ = writeln!(out, "({missed} log lines dropped: stderr not read)");
                    }
                    let _ = writeln!(out, "{line}");
                }
            })?;
        Ok(RequestLog { lines, dropped })
    }

    /// Queues `line` for the writer, or counts it dropped when the queue is full.
    pub(crate) fn line(&self, line: String) {
        if let Err(TrySendError::Full(_)) = self.lines.try_send(line) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Condvar, Mutex};

    /// A writer that blocks until `open` is set, then collects what it is given.
    #[derive(Clone, Default)]
    struct Gate {
        open: Arc<(Mutex<bool>, Condvar)>,
        text: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let (open, changed) = &*self.open;
            let mut is_open = open.lock().unwrap_or_else(|p| p.into_inner());
            while !*is_open {
                is_open = changed.wait(is_open).unwrap_or_else(|p| p.into_inner());
            }
            self.text
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_blocked_writer_never_blocks_a_request_and_drops_are_counted() {
        let gate = Gate::default();
        let writer = gate.clone();
        let log = RequestLog::to(move || writer.clone()).unwrap_or_else(|e| panic!("{e}"));
        // The writer is stuck on the first line; the queue fills and the rest are dropped,
        // each call returning at once.
        let started = std::time::Instant::now();
        for i in 0..(QUEUED_LINES + 500) {
            log.line(format!("GET /{i}"));
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let dropped = log.dropped.load(Ordering::Relaxed);
        assert!((499..=501).contains(&dropped), "{dropped}");
        {
            let (open, changed) = &*gate.open;
            *open.lock().unwrap_or_else(|p| p.into_inner()) = true;
            changed.notify_all();
        }
        let written = || {
            String::from_utf8_lossy(&gate.text.lock().unwrap_or_else(|p| p.into_inner()))
                .into_owned()
        };
        let wait_for = |what: &str| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !written().contains(what) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "never written: {what}"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        // The queued lines are written, then the count of those dropped, before a new one.
        wait_for(&format!("GET /{}\n", QUEUED_LINES - 1));
        log.line("GET /last".into());
        wait_for("GET /last");
        let text = written();
        // The first line is written, whether the writer took it before or after the drops.
        assert!(text.contains("GET /0\n"), "{}", &text[..80.min(text.len())]);
        let notice = text
            .find("log lines dropped")
            .unwrap_or_else(|| panic!("no notice"));
        assert!(notice < text.find("GET /last").unwrap_or(0));
    }
}
