//! [`Step`]: the one answer every state machine of the log gives when polled.
//!
//! The snapshot loader, the commit probe, the timestamp search and the checkpoint reader all
//! speak it: `poll()` returns either the requests the caller must answer before polling
//! again, or the machine's output. The shape is arrow-rs's `DecodeResult` (`NeedsData` /
//! `Data`), without its `Finished`: a machine of the log yields one output, then is done.

/// What a sans-io state machine needs next, or what it made.
///
/// `R` is a request (a [`LogRequest`](super::LogRequest), a commit version, a byte range),
/// `T` the output. Exhaustive on purpose: a driver handles exactly these two cases.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a step says what the caller must do next"]
pub enum Step<R, T> {
    /// Answer these requests (through the machine's `push_*` methods), then poll again.
    Need(Vec<R>),
    /// The machine is done: its output.
    Ready(T),
}

impl<R, T> Step<R, T> {
    /// The same step with the output mapped by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Step<R, U> {
        match self {
            Step::Need(requests) => Step::Need(requests),
            Step::Ready(output) => Step::Ready(f(output)),
        }
    }
}
