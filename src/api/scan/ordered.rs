//! Reads in the log's order on every core ([`DeltaScan::into_ordered_stream`]): the files
//! cut into ranges dealt to the partitions in turn, each partition reading ahead within a
//! bound while it waits for its turn.

use super::DeltaScan;
use crate::api::batch_stream::DeltaBatchStream;

/// The largest byte range of a file one task of [`DeltaScan::into_ordered_stream`] reads
/// natively: about two row groups of the benchmark's files (whole files of 11 MB took 50-70%
/// longer than an unordered read; ranges of 8 MiB as long; 4 MiB and 2 MiB 30% longer: each
/// range reads its file's footer again).
pub const ORDERED_TASK_BYTES: u64 = 8 << 20;

/// The most batches a partition of an ordered read reads ahead (see
/// [`DeltaScan::into_ordered_stream`]): enough to hold a range of [`ORDERED_TASK_BYTES`]
/// of the benchmark's table whole while it waits for its turn.
pub const ORDERED_BATCHES_AHEAD: usize = 16;

/// About how many bytes of batches a partition of an ordered read holds ahead, at most (a
/// table of wide rows reads fewer batches ahead, never fewer than
/// `batches_ahead_per_partition`), and [`ORDERED_AHEAD_BYTES_ALL`] for all partitions
/// together, whichever is less.
pub const ORDERED_AHEAD_BYTES: u64 = 32 << 20;

/// About how many bytes of batches all partitions of an ordered read hold ahead together, at
/// most: a machine of many cores reads fewer batches ahead per partition.
pub const ORDERED_AHEAD_BYTES_ALL: u64 = 256 << 20;

impl DeltaScan {
    /// Starts reading, as [`into_stream`](Self::into_stream), with the batches in the scan's
    /// task order even without a limit: the files in the log's order, each file's rows in
    /// its order, so the same snapshot gives the same rows in the same order every time (an
    /// export that can be compared byte for byte).
    ///
    /// Natively, on a multi-thread runtime, it still decodes on every core: the files are
    /// cut into byte ranges of at most [`ORDERED_TASK_BYTES`] (or `max_task_bytes`, when
    /// smaller; each range reads the row groups it owns) dealt to the partitions in turn,
    /// and each partition reads more
    /// batches ahead than `batches_ahead_per_partition` (up to [`ORDERED_BATCHES_AHEAD`],
    /// within about [`ORDERED_AHEAD_BYTES`] of batches as the files' sizes and row counts
    /// estimate them), so that a range waits whole for its turn while the next is decoded.
    /// That read-ahead is the memory it costs over `into_stream`.
    pub fn into_ordered_stream(self) -> DeltaBatchStream {
        let ahead = self.execution.batches_ahead_per_partition;
        #[cfg(not(target_arch = "wasm32"))]
        if self.limit.is_none()
            && crate::api::spawn::partitions_run_in_parallel()
            && self.target > 1
        {
            let ahead = ahead.max(self.ordered_batches_ahead());
            let max = ORDERED_TASK_BYTES.min(self.execution.max_task_bytes);
            return self
                .in_task_order()
                .cap_task_bytes(max)
                .dealt_in_turn()
                .merged(true, ahead);
        }
        self.merged(true, ahead)
    }

    /// The scan as one group of all its tasks in their order, so that cutting them into
    /// ranges ([`Self::cap_task_bytes`], which numbers the pieces group by group) keeps the
    /// log's order in the tasks' numbers.
    #[cfg(not(target_arch = "wasm32"))]
    fn in_task_order(mut self) -> Self {
        self.partitions = vec![(0..self.tasks.len()).collect()];
        self
    }

    /// The batches a partition of an ordered read reads ahead: as many of the scan's batches
    /// as about [`ORDERED_AHEAD_BYTES`] hold (less on many partitions, see
    /// [`ORDERED_AHEAD_BYTES_ALL`]), at most [`ORDERED_BATCHES_AHEAD`]. A batch's
    /// size is estimated from the files: their bytes per row, for the columns read, times 3
    /// (what decoding takes compressed Parquet to, about). Files without row counts: half
    /// the most.
    #[cfg(not(target_arch = "wasm32"))]
    fn ordered_batches_ahead(&self) -> usize {
        let (bytes, rows) = self.tasks.iter().fold((0u64, Some(0u64)), |(b, r), t| {
            (
                b.saturating_add(t.size),
                r.zip(t.num_records).map(|(r, n)| r.saturating_add(n)),
            )
        });
        let Some(rows) = rows.filter(|&r| r > 0) else {
            return ORDERED_BATCHES_AHEAD / 2;
        };
        let all = self.table.delta_schema().fields.len().max(1) as f64;
        let read = self.columns.output_schema.fields().len().min(all as usize) as f64;
        let row_bytes = 3.0 * bytes as f64 / rows as f64 * (read / all);
        let batch_bytes = (row_bytes * self.batch_size as f64).max(1.0);
        let partitions = self.target.max(1) as u64;
        let budget = ORDERED_AHEAD_BYTES.min(ORDERED_AHEAD_BYTES_ALL / partitions);
        let fit = (budget as f64 / batch_bytes) as usize;
        fit.min(ORDERED_BATCHES_AHEAD)
    }

    /// The tasks dealt anew, one by one in order, to as many partitions as the target and an
    /// ordered merge allow (task `i` to partition `i % n`): neighbours in the log are read
    /// side by side.
    #[cfg(not(target_arch = "wasm32"))]
    fn dealt_in_turn(mut self) -> Self {
        let count = self
            .target
            .min(self.merge_safe())
            .min(self.tasks.len())
            .max(1);
        let mut partitions = vec![Vec::new(); count];
        for i in 0..self.tasks.len() {
            if let Some(group) = partitions.get_mut(i % count) {
                group.push(i);
            }
        }
        self.partitions = partitions;
        self.metrics.set_partitions_planned(self.partitions.len());
        self
    }
}
