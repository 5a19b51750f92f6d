//! Reading row groups ahead: when the decoder reads a file's row groups whole, the read of
//! one row group also fetches the same column chunks of the row groups after it, up to a
//! byte budget, so one round trip serves several row groups (over HTTP each request costs
//! one; a file of 80 row groups took 80 of them in a row). The bytes go into the decoder's
//! buffers, which it takes a row group's chunks from without asking again. A file's first
//! request brings a quarter of the budget ahead, so its decoding starts after a short
//! transfer; while it decodes, the next row groups are fetched up to the whole budget
//! ([`ReadAhead::speculate`]).
//!
//! It stays exact: read-ahead happens only while every request the decoder makes is the
//! whole chunks of the row group it plans (as this module computed them). Any other request
//! (the decoder found a reason to read less) turns it off for the file, and what was fetched
//! ahead and not yet used is dropped. Pure: it only decides ranges.

use std::ops::Range;

use parquet::file::metadata::ParquetMetaData;

/// The first fetch of a file brings `1 / FIRST_FETCH_SHARE` of the budget ahead.
const FIRST_FETCH_SHARE: u64 = 4;

/// The whole column chunks of a file's row groups, and how far ahead they were fetched.
#[derive(Debug)]
pub(crate) struct ReadAhead {
    /// Each row group read, in read order, with the ranges of its decoded column chunks
    /// (sorted) and their span (first chunk's start to last chunk's end).
    groups: Vec<(usize, Vec<Range<u64>>, Range<u64>)>,
    /// Bytes fetched ahead with one request at most.
    budget: u64,
    /// Position in `groups` after the last row group fetched (ahead or asked for).
    fetched_until: usize,
    /// Where the fetch made by [`speculate`](Self::speculate) starts, until it
    /// [`arrived`](Self::arrived).
    in_flight_from: Option<usize>,
    /// Position in `groups` of the row group of the last fetch the decoder asked for.
    asked_at: Option<usize>,
}

/// What to do for a request of the decoder.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// Fetch these: the ranges asked for, then the chunks of later row groups.
    Fetch(Vec<Range<u64>>),
    /// The row group asked for is in the fetch still in flight: wait for it.
    Wait,
    /// The request was not a row group's whole chunks: fetch what was asked, stop reading
    /// ahead, and drop what was fetched ahead and not used yet.
    Stop(Vec<Range<u64>>),
}

impl ReadAhead {
    /// For `row_groups` (in read order) of the file `parquet`, decoding the leaf columns
    /// `leaves`; `None` when there is nothing to read ahead (no budget, one row group, a
    /// chunk without a valid range).
    pub(crate) fn new(
        parquet: &ParquetMetaData,
        row_groups: &[usize],
        leaves: &[usize],
        budget: u64,
    ) -> Option<ReadAhead> {
        if budget == 0 || row_groups.len() < 2 || leaves.is_empty() {
            return None;
        }
        let mut groups = Vec::with_capacity(row_groups.len());
        for &rg in row_groups {
            let group = parquet.row_groups().get(rg)?;
            let mut ranges = Vec::with_capacity(leaves.len());
            for &leaf in leaves {
                let chunk = group.columns().get(leaf)?;
                let start = chunk
                    .dictionary_page_offset()
                    .unwrap_or_else(|| chunk.data_page_offset());
                let start = u64::try_from(start).ok()?;
                let len = u64::try_from(chunk.compressed_size()).ok()?;
                ranges.push(start..start.checked_add(len)?);
            }
            ranges.sort_by_key(|r| (r.start, r.end));
            // What fetching the group holds in memory: the span of its chunks, since a
            // remote read joins the gaps between them (see `coalesce`).
            let span = match (ranges.first(), ranges.iter().map(|r| r.end).max()) {
                (Some(first), Some(end)) => first.start..end,
                _ => 0..0,
            };
            groups.push((rg, ranges, span));
        }
        Some(ReadAhead {
            groups,
            budget,
            fetched_until: 0,
            in_flight_from: None,
            asked_at: None,
        })
    }

    /// The position of `row_group` at or after `from`.
    fn position(&self, row_group: Option<usize>, from: usize) -> Option<usize> {
        let row_group = row_group?;
        (from..self.groups.len()).find(|&i| self.groups.get(i).is_some_and(|g| g.0 == row_group))
    }

    /// The chunks of the row groups from `from` on, as many as `budget` bytes hold (the
    /// span from the first chunk to the last, gaps included, as a remote read fetches them),
    /// and the position after the last one taken.
    fn take_from(&self, from: usize, budget: u64) -> (Vec<Range<u64>>, usize) {
        let mut ranges = Vec::new();
        let mut next = from;
        let (mut lowest, mut highest) = (u64::MAX, 0u64);
        while let Some((_, chunks, span)) = self.groups.get(next) {
            let (low, high) = (lowest.min(span.start), highest.max(span.end));
            if high.saturating_sub(low) > budget {
                break;
            }
            (lowest, highest) = (low, high);
            ranges.extend(chunks.iter().cloned());
            next += 1;
        }
        (ranges, next)
    }

    /// What to do when the decoder asks for `asked` to plan `row_group` (as
    /// `peek_next_row_group` named it).
    pub(crate) fn on_request(&mut self, row_group: Option<usize>, asked: Vec<Range<u64>>) -> Ahead {
        if let Some(from) = self.in_flight_from {
            if self
                .position(row_group, from)
                .is_some_and(|i| i < self.fetched_until)
            {
                return Ahead::Wait;
            }
        }
        let mut sorted = asked.clone();
        sorted.sort_by_key(|r| (r.start, r.end));
        let at = self
            .position(row_group, self.fetched_until)
            .filter(|&i| self.groups.get(i).is_some_and(|g| g.1 == sorted));
        let Some(at) = at else {
            return Ahead::Stop(asked);
        };
        // The first fetch of the file brings a quarter of the budget ahead, so that decoding
        // starts after a short transfer; `speculate` fetches the rest while it decodes (a
        // browser scan of 16 MiB requests waited for the whole first one before decoding).
        let budget = if self.fetched_until == 0 {
            self.budget / FIRST_FETCH_SHARE
        } else {
            self.budget
        };
        let (more, next) = self.take_from(at + 1, budget);
        self.fetched_until = next;
        self.asked_at = Some(at);
        let mut ranges = asked;
        ranges.extend(more);
        Ahead::Fetch(ranges)
    }

    /// The chunks to fetch now, before the decoder asks, when what is fetched ahead of the
    /// row group it plans next (`upcoming`) is under half the budget: the next row groups,
    /// up to the budget. `None` while a fetch is in flight, or when nothing is left.
    /// `upcoming` is `None` while the decoder waits for the row group it asked for last: the
    /// rest is then fetched beside that first, short, request (a browser scan waited for
    /// it to arrive before asking for more, and then for the rest before decoding on).
    pub(crate) fn speculate(&mut self, upcoming: Option<usize>) -> Option<Vec<Range<u64>>> {
        if self.in_flight_from.is_some() || self.fetched_until >= self.groups.len() {
            return None;
        }
        let at = match upcoming {
            Some(_) => self.position(upcoming, 0)?,
            None => self.asked_at?,
        };
        if at >= self.fetched_until {
            // The decoder will ask for it itself.
            return None;
        }
        let staged: u64 = (at..self.fetched_until)
            .filter_map(|i| self.groups.get(i).map(|g| g.2.end - g.2.start))
            .fold(0, u64::saturating_add);
        if staged.saturating_mul(2) > self.budget {
            return None;
        }
        let (ranges, next) = self.take_from(self.fetched_until, self.budget);
        if ranges.is_empty() {
            return None;
        }
        self.in_flight_from = Some(self.fetched_until);
        self.fetched_until = next;
        Some(ranges)
    }

    /// The fetch [`speculate`](Self::speculate) made is in the decoder's buffers.
    pub(crate) fn arrived(&mut self) {
        self.in_flight_from = None;
    }
}

/// The leaf columns (indexes in the file's schema) under the top-level columns `roots`.
pub(crate) fn leaves_of(parquet: &ParquetMetaData, roots: &[usize]) -> Vec<usize> {
    let schema = parquet.file_metadata().schema_descr();
    (0..schema.num_columns())
        .filter(|&leaf| roots.contains(&schema.get_column_root_idx(leaf)))
        .collect()
}

#[cfg(test)]
#[path = "read_ahead_tests.rs"]
mod tests;
