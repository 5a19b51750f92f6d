//! How each of the load tests' concurrent scans ends (shared by the native and the wasm32
//! load tests): completed, dropped after a few batches, or cancelled by a deadline, from a
//! fixed pseudo-random sequence so that a failing round can be replayed.

/// How one scan of a round ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Complete,
    /// Dropped after this many batches.
    DropAfter(usize),
    /// Cancelled by a deadline of this many milliseconds.
    Deadline(u64),
}

/// The fates of the `scans` scans of `round`, from the sequence `seed` starts; deadlines of
/// 1 to `max_deadline_ms` milliseconds.
pub fn fates(seed: u64, round: usize, scans: usize, max_deadline_ms: u64) -> Vec<Fate> {
    let mut state = seed ^ round as u64;
    (0..scans)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 3 {
                0 => Fate::Complete,
                1 => Fate::DropAfter((state >> 8) as usize % 4),
                _ => Fate::Deadline(1 + (state >> 8) % max_deadline_ms),
            }
        })
        .collect()
}
