//! Driving the Parquet decoder of one open file, row group by row group.
//!
//! The sans-io `ParquetPushDecoder` hands out one row group decoder at a time and says which
//! byte ranges the next one needs. [`RowGroupReads`] asks for the next row group as soon as the
//! current one is handed out, so its read is in flight while the current one decodes (the read
//! is polled between batches; a store starts its request on the first poll). Nearby ranges
//! are coalesced into one request (see `coalesce`: nearer for local files than for remote
//! objects).
//!
//! Deleted rows come out one of two ways: as the decoder's row selection (set when the file is
//! opened), or, for deletes scattered in short runs, dropped from each decoded batch by a
//! keep mask ([`DeletedRows`]), which needs the file row of every batch: the decoder says
//! which row group it hands out next, and batches follow each other within it.

use std::collections::VecDeque;
use std::ops::Range;
use std::task::Poll;

use arrow_array::RecordBatch;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReader;
use parquet::arrow::push_decoder::ParquetPushDecoder;
use parquet::errors::ParquetError;
use parquet::DecodeResult;

use super::coalesce::{coalesce, slice};
use super::deletion_vector::DeletionVector;
use super::read_ahead::{Ahead, ReadAhead};
use super::row_filter::{take_error, ErrorSlot};
use crate::error::{DeltaError, Phase, Result};
use crate::io::{BoxFuture, Store, NEAR_GAP};
use crate::limits::decoder_panics::contain;
use crate::limits::pages::ChunkIndex;

/// The page headers of every range fetched, checked before the decoder sees them.
pub(crate) struct PageCheck {
    /// The file's column chunks.
    pub(crate) chunks: ChunkIndex,
    /// The largest uncompressed page allowed.
    pub(crate) max_page_bytes: u64,
}

/// Deleted rows dropped from decoded batches by a keep mask.
pub(crate) struct DeletedRows {
    deleted: DeletionVector,
    /// The file row of the first row of each row group of the file.
    row_group_starts: Vec<u64>,
}

impl DeletedRows {
    pub(crate) fn new(deleted: DeletionVector, row_group_starts: Vec<u64>) -> DeletedRows {
        DeletedRows {
            deleted,
            row_group_starts,
        }
    }

    /// `batch`, whose first row is file row `first_row`, without its deleted rows.
    fn apply(&self, batch: RecordBatch, first_row: u64) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        if self.deleted.deleted_in(first_row, rows as u64) == 0 {
            return Ok(batch);
        }
        let keep = self.deleted.keep_mask(first_row, rows);
        arrow_select::filter::filter_record_batch(&batch, &keep).map_err(|source| {
            DeltaError::Arrow {
                phase: Phase::Read,
                source,
            }
        })
    }
}

/// A row group whose data is in, being decoded.
struct RowGroupRead {
    reader: ParquetRecordBatchReader,
    /// The file row of its next batch's first row (kept only with [`DeletedRows`]).
    next_row: u64,
}

/// How far a file's reads run ahead of its decoding.
pub(crate) struct Lookahead {
    /// Whether the next row group is read while one decodes (off when a limit is applied
    /// after decoding: a head-like scan would read a row group it then drops).
    pub(crate) next: bool,
    /// Later row groups fetched with a row group's read (see `read_ahead`).
    pub(crate) groups: Option<ReadAhead>,
}

/// A read of the ranges the decoder asked for, in flight while earlier rows decode.
struct PendingRead {
    ranges: Vec<Range<u64>>,
    read: Option<BoxFuture<'static, Result<Vec<Bytes>>>>,
    done: Option<Result<Vec<Bytes>>>,
    /// Started by read-ahead before the decoder asked.
    ahead: bool,
}

impl PendingRead {
    /// Starts reading `ranges`; `whole_chunks` when they are the whole column chunks of row
    /// groups read ahead (see `coalesce` for what that changes).
    fn start(
        store: &Store,
        path: &str,
        ranges: Vec<Range<u64>>,
        whole_chunks: bool,
    ) -> PendingRead {
        let gap = if whole_chunks {
            store.read_ahead_gap().max(NEAR_GAP)
        } else {
            NEAR_GAP
        };
        let (store, path, asked) = (store.clone(), path.to_string(), ranges.clone());
        PendingRead {
            ranges,
            read: Some(Box::pin(
                async move { fetch(&store, &path, &asked, gap).await },
            )),
            done: None,
            ahead: false,
        }
    }

    /// Polls the read once without waiting, keeping its answer once it is in.
    async fn advance(&mut self) {
        futures::future::poll_fn(|cx| {
            if let Some(read) = self.read.as_mut() {
                if let Poll::Ready(out) = read.as_mut().poll(cx) {
                    self.read = None;
                    self.done = Some(out);
                }
            }
            Poll::Ready(())
        })
        .await
    }

    /// Waits for the read: the ranges asked for and their bytes.
    async fn finish(mut self) -> Result<(Vec<Range<u64>>, Vec<Bytes>)> {
        let data = match (self.done.take(), self.read.take()) {
            (Some(done), _) => done?,
            (None, Some(read)) => read.await?,
            (None, None) => Vec::new(),
        };
        Ok((self.ranges, data))
    }
}

/// Fetches `ranges` of `path`, coalescing those under `gap` apart: their bytes, in the
/// order asked.
async fn fetch(store: &Store, path: &str, ranges: &[Range<u64>], gap: u64) -> Result<Vec<Bytes>> {
    let merged = coalesce(ranges, gap);
    let fetches = merged.iter().map(|(r, _)| store.get_range(path, r.clone()));
    let data = futures::future::try_join_all(fetches).await?;
    let mut out = vec![Bytes::new(); ranges.len()];
    for ((fetched, members), bytes) in merged.iter().zip(data.iter()) {
        for &i in members {
            out[i] = slice(fetched, bytes, &ranges[i]).ok_or_else(|| DeltaError::Io {
                path: path.to_string(),
                message: "a coalesced read returned fewer bytes than asked".into(),
                phase: Phase::Read,
                transient: false,
            })?;
        }
    }
    Ok(out)
}

/// The decoding of one file's row groups, the next one's read in flight.
pub(crate) struct RowGroupReads {
    decoder: ParquetPushDecoder,
    store: Store,
    path: String,
    /// Row groups whose data is in, oldest first: the one being decoded and, when its data
    /// was already buffered, the next.
    ready: VecDeque<RowGroupRead>,
    pending: Option<PendingRead>,
    /// A read of later row groups started before the decoder asked (see `read_ahead`).
    speculative: Option<PendingRead>,
    /// The decoder has handed out its last row group.
    planned_all: bool,
    /// Whether the next row group is read while one decodes (off when a limit is applied
    /// after decoding: a head-like scan would read a row group it then drops).
    read_ahead: bool,
    /// Later row groups fetched with a row group's read (see `read_ahead`), while on.
    ahead: Option<ReadAhead>,
    masked: Option<DeletedRows>,
    /// With `masked`: the first file row of the row group being planned.
    announced: Option<u64>,
    /// Errors of the row filter, reported as they are.
    filter_errors: ErrorSlot,
    pages: PageCheck,
    /// Set when a decoder panicked on the file's contents: every later call fails the same.
    failed: Option<String>,
}

impl RowGroupReads {
    pub(crate) fn new(
        decoder: ParquetPushDecoder,
        store: Store,
        path: &str,
        lookahead: Lookahead,
        masked: Option<DeletedRows>,
        filter_errors: ErrorSlot,
        pages: PageCheck,
    ) -> RowGroupReads {
        RowGroupReads {
            decoder,
            store,
            path: path.to_string(),
            ready: VecDeque::with_capacity(2),
            pending: None,
            speculative: None,
            planned_all: false,
            read_ahead: lookahead.next,
            ahead: lookahead.groups,
            masked,
            announced: None,
            filter_errors,
            pages,
            failed: None,
        }
    }

    /// The error for a decoder's panic on the file's contents (see [`contain`]); the file's
    /// reads end with it.
    fn panicked(&mut self, panic: String) -> DeltaError {
        self.ready.clear();
        self.pending = None;
        self.speculative = None;
        self.planned_all = true;
        let reason = format!("the decoder failed on the file's contents: {panic}");
        self.failed = Some(reason.clone());
        self.parquet_error(ParquetError::General(reason))
    }

    fn parquet_error(&self, source: ParquetError) -> DeltaError {
        take_error(&self.filter_errors).unwrap_or_else(|| DeltaError::Parquet {
            path: self.path.clone(),
            phase: Phase::Read,
            source,
        })
    }

    /// Asks the decoder for row groups until one is ready to decode and (with read-ahead) the
    /// read of the next one has started.
    fn plan(&mut self) -> Result<()> {
        while self.pending.is_none()
            && !self.planned_all
            && (self.ready.is_empty() || (self.read_ahead && self.ready.len() < 2))
        {
            // With masked deletes, the file rows of a row group's batches need to know which
            // row group it is: the decoder says so at the boundary, before planning it. Read-
            // ahead needs to know which row group a request is for.
            let announce = self.masked.is_some() && self.announced.is_none();
            let upcoming = if announce || self.ahead.is_some() {
                contain(|| self.decoder.peek_next_row_group())
                    .map_err(|panic| self.panicked(panic))?
                    .map_err(|e| self.parquet_error(e))?
            } else {
                None
            };
            if announce {
                let starts = self.masked.as_ref().map(|m| &m.row_group_starts);
                self.announced = upcoming.and_then(|i| starts?.get(i).copied());
            }
            let step = contain(|| self.decoder.try_next_reader())
                .map_err(|panic| self.panicked(panic))?
                .map_err(|e| self.parquet_error(e))?;
            match step {
                DecodeResult::NeedsData(asked) => {
                    let ahead = self.ahead.as_mut();
                    let (ranges, whole_chunks) =
                        match ahead.map(|a| a.on_request(upcoming, asked.clone())) {
                            None => (asked, false),
                            Some(Ahead::Fetch(ranges)) => (ranges, true),
                            Some(Ahead::Wait) => {
                                // The row group is in the read already in flight.
                                self.pending = self.speculative.take();
                                continue;
                            }
                            Some(Ahead::Stop(asked)) => {
                                // What was fetched ahead and not used stays out of memory.
                                self.ahead = None;
                                self.speculative = None;
                                self.decoder.clear_all_ranges();
                                (asked, false)
                            }
                        };
                    self.pending = Some(PendingRead::start(
                        &self.store,
                        &self.path,
                        ranges,
                        whole_chunks,
                    ));
                }
                DecodeResult::Data(reader) => {
                    let next_row = match (&self.masked, self.announced.take()) {
                        (None, _) => 0,
                        (Some(_), Some(row)) => row,
                        (Some(_), None) => {
                            return Err(self.parquet_error(ParquetError::General(
                                "the decoder handed out a row group it did not announce".into(),
                            )))
                        }
                    };
                    self.ready.push_back(RowGroupRead { reader, next_row });
                }
                DecodeResult::Finished => self.planned_all = true,
            }
        }
        self.speculate()
    }

    /// Starts reading later row groups ahead when what is buffered ahead of the decoder
    /// runs low (see `read_ahead`).
    fn speculate(&mut self) -> Result<()> {
        if self.planned_all || self.speculative.is_some() || self.ahead.is_none() {
            return Ok(());
        }
        let upcoming = contain(|| self.decoder.peek_next_row_group())
            .map_err(|panic| self.panicked(panic))?
            .map_err(|e| self.parquet_error(e))?;
        if let Some(ranges) = self.ahead.as_mut().and_then(|a| a.speculate(upcoming)) {
            let mut read = PendingRead::start(&self.store, &self.path, ranges, true);
            read.ahead = true;
            self.speculative = Some(read);
        }
        Ok(())
    }

    /// Checks the pages of fetched ranges and hands them to the decoder; `ahead` when they
    /// are the read started before the decoder asked.
    fn push(&mut self, ranges: Vec<Range<u64>>, data: Vec<Bytes>, ahead: bool) -> Result<()> {
        let fetched = ranges.iter().zip(&data).map(|(r, b)| (r.start, &b[..]));
        self.pages.chunks.check_ranges(
            fetched,
            self.pages.max_page_bytes,
            &self.path,
            Phase::Read,
        )?;
        if ahead {
            if let Some(a) = self.ahead.as_mut() {
                a.arrived();
            }
        }
        contain(|| self.decoder.push_ranges(ranges, data))
            .map_err(|panic| self.panicked(panic))?
            .map_err(|e| self.parquet_error(e))
    }

    /// Hands the read started ahead to the decoder once it is in (waiting for nothing).
    async fn take_speculative(&mut self) -> Result<()> {
        let Some(read) = self.speculative.as_mut() else {
            return Ok(());
        };
        read.advance().await;
        if read.done.is_none() {
            return Ok(());
        }
        let Some(read) = self.speculative.take() else {
            return Ok(());
        };
        if self.planned_all {
            // The decoder is done (a limit, the last row group): nothing to hand over.
            return Ok(());
        }
        let (ranges, data) = read.finish().await?;
        self.push(ranges, data, true)
    }

    /// The next decoded batch of the file's columns (deleted rows dropped when masked; a batch
    /// may then be empty), or `None` at the end of the file.
    pub(crate) async fn next(&mut self) -> Result<Option<RecordBatch>> {
        if let Some(reason) = &self.failed {
            return Err(self.parquet_error(ParquetError::General(reason.clone())));
        }
        loop {
            self.plan()?;
            if let Some(pending) = self.pending.as_mut() {
                pending.advance().await;
            }
            self.take_speculative().await?;
            let Some(row_group) = self.ready.front_mut() else {
                // Nothing to decode: wait for the data asked for, or the file is done.
                let Some(pending) = self.pending.take() else {
                    return Ok(None);
                };
                let ahead = pending.ahead;
                let (ranges, data) = pending.finish().await?;
                self.push(ranges, data, ahead)?;
                continue;
            };
            let decoded = match contain(|| row_group.reader.next()) {
                Ok(decoded) => decoded,
                Err(panic) => return Err(self.panicked(panic)),
            };
            let first_row = row_group.next_row;
            match decoded {
                Some(Ok(batch)) => {
                    row_group.next_row += batch.num_rows() as u64;
                    return match &self.masked {
                        Some(masked) => masked.apply(batch, first_row).map(Some),
                        None => Ok(Some(batch)),
                    };
                }
                Some(Err(e)) => {
                    return Err(self.parquet_error(ParquetError::ArrowError(e.to_string())))
                }
                None => {
                    self.ready.pop_front();
                }
            }
        }
    }
}
