//! [`ParquetRead`]: the sans-io read of one Parquet checkpoint file by byte ranges.
//!
//! It asks for the file's last [`CHECKPOINT_TAIL`] bytes (the footer, and all of a small
//! file), then more of the footer if it is longer, then the column chunks of the action
//! columns wanted (see [`ActionKinds`]) in every row group, in one round, nearby chunks
//! merged into one range. Bytes already in hand are not asked for again. arrow-rs's
//! `ParquetMetaDataPushDecoder` decodes the footer and `ParquetPushDecoder` the columns; the
//! batches become actions as in [`parquet_actions`](super::parquet_actions), which is this
//! read with the whole file pushed at once.

use std::mem;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::push_decoder::{ParquetPushDecoder, ParquetPushDecoderBuilder, PushBuffers};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataPushDecoder};
use parquet::DecodeResult;

use super::{check_action_columns, decode_batch, wanted_leaves, ActionKinds, BATCH_ROWS};
use crate::error::{DeltaError, Phase, Result};
use crate::limits::decoder_panics::contain;
use crate::limits::map_groups::footer_for_decoder;
use crate::limits::pages::{check_chunk_bounds, check_pages, reader_options, ChunkFacts};
use crate::limits::DEFAULT_MAX_PAGE_BYTES as MAX_PAGE_BYTES;
use crate::log::actions::Action;
use crate::log::step::Step;

/// Bytes asked for from the end of a checkpoint file first: its footer, and all of a small
/// file (as the read path's footer hint).
pub const CHECKPOINT_TAIL: u64 = 64 * 1024;

/// Column chunks closer than this are asked for as one range.
const MERGE_GAP: u64 = 8 * 1024;

/// The smallest Parquet file: magic, footer length, magic.
const MIN_PARQUET_LEN: u64 = 12;

/// What a [`ParquetRead`] needs next: byte ranges of the file, or its actions.
pub(crate) type ParquetStep = Step<Range<u64>, Vec<Action>>;

/// Where a read is.
enum Stage {
    /// Nothing asked yet.
    Start,
    /// The footer being decoded.
    Footer(Box<ParquetMetaDataPushDecoder>),
    /// The wanted columns being decoded.
    Columns(Box<ParquetPushDecoder>),
    /// Every action decoded, not yet handed out.
    Decoded,
    /// The actions handed out (or a step failed).
    Done,
}

/// The read of one Parquet checkpoint file of known size.
pub(crate) struct ParquetRead {
    path: String,
    size: u64,
    tail: u64,
    want: ActionKinds,
    stage: Stage,
    /// Bytes pushed while the footer decodes, handed to the column decoder (a small file's
    /// tail holds its column chunks too).
    pushed: Vec<(Range<u64>, Bytes)>,
    actions: Vec<Action>,
    /// Rows decoded so far (errors name rows of the file).
    rows: usize,
    /// Wanted column chunks whose page headers are not checked yet: each is checked against
    /// the limits (see `limits::pages`) once its bytes are in, before the decoder sees them.
    unchecked: Vec<(Range<u64>, ChunkFacts)>,
}

impl std::fmt::Debug for ParquetRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetRead")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("actions", &self.actions.len())
            .finish_non_exhaustive()
    }
}

impl ParquetRead {
    /// A read of the actions of the kinds in `want` from the file at `path` of `size` bytes,
    /// asking first for its last `tail` bytes.
    pub(crate) fn new(path: &str, size: u64, want: ActionKinds, tail: u64) -> Self {
        ParquetRead {
            path: path.to_string(),
            size,
            tail: tail.max(MIN_PARQUET_LEN),
            want,
            stage: Stage::Start,
            pushed: Vec::new(),
            actions: Vec::new(),
            rows: 0,
            unchecked: Vec::new(),
        }
    }

    /// The file read.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Takes bytes `range` of the file (a range asked for, or any range inside the file).
    pub(crate) fn push_range(&mut self, range: Range<u64>, data: Bytes) -> Result<()> {
        if range.end > self.size || range.start > range.end {
            return Err(self.invalid(format!(
                "bytes {}..{} were pushed, outside the file of {} bytes",
                range.start, range.end, self.size
            )));
        }
        if data.len() as u64 != range.end - range.start {
            return Err(self.invalid(format!(
                "bytes {}..{} were pushed as {} bytes",
                range.start,
                range.end,
                data.len()
            )));
        }
        if range.end == self.size {
            self.check_footer_length(&data)?;
        }
        match &mut self.stage {
            Stage::Footer(decoder) => {
                decoder
                    .push_range(range.clone(), data.clone())
                    .map_err(|e| self.parquet_error(e))?;
                self.pushed.push((range, data));
            }
            Stage::Columns(_) => {
                self.check_pages(&range, &data)?;
                if let Stage::Columns(decoder) = &mut self.stage {
                    decoder
                        .push_range(range, data)
                        .map_err(|e| DeltaError::Parquet {
                            path: self.path.clone(),
                            phase: Phase::Load,
                            source: e,
                        })?;
                }
            }
            Stage::Start => self.pushed.push((range, data)),
            Stage::Decoded | Stage::Done => {}
        }
        Ok(())
    }

    /// Advances as far as the bytes pushed allow.
    pub(crate) fn poll(&mut self) -> Result<ParquetStep> {
        loop {
            let stage = mem::replace(&mut self.stage, Stage::Done);
            let (next, need) = match stage {
                Stage::Start => self.on_start()?,
                Stage::Footer(decoder) => self.on_footer(decoder)?,
                Stage::Columns(decoder) => self.on_columns(decoder)?,
                Stage::Decoded => return Ok(Step::Ready(mem::take(&mut self.actions))),
                Stage::Done => {
                    return Err(DeltaError::InvalidArgument {
                        reason: format!("the read of {} was polled after it finished", self.path),
                    })
                }
            };
            self.stage = next;
            if !need.is_empty() {
                return Ok(Step::Need(need));
            }
        }
    }

    /// [`Stage::Start`]: asks for the tail, unless it was pushed already.
    fn on_start(&mut self) -> Result<(Stage, Vec<Range<u64>>)> {
        if self.size < MIN_PARQUET_LEN {
            return Err(self.parquet_error(ParquetError::General(format!(
                "file of {} bytes is too small to be Parquet",
                self.size
            ))));
        }
        let mut decoder = ParquetMetaDataPushDecoder::try_new(self.size)
            .map_err(|e| self.parquet_error(e))?
            .with_page_index_policy(PageIndexPolicy::Skip);
        for (range, data) in &self.pushed {
            decoder
                .push_range(range.clone(), data.clone())
                .map_err(|e| self.parquet_error(e))?;
        }
        let tail = self.size.saturating_sub(self.tail)..self.size;
        let need = self.missing(vec![tail]);
        Ok((Stage::Footer(Box::new(decoder)), need))
    }

    /// [`Stage::Footer`]: decodes the footer, then asks for the wanted column chunks.
    fn on_footer(
        &mut self,
        mut decoder: Box<ParquetMetaDataPushDecoder>,
    ) -> Result<(Stage, Vec<Range<u64>>)> {
        match self.contained(|| decoder.try_decode())? {
            DecodeResult::NeedsData(ranges) => {
                let need = self.inside(ranges)?;
                Ok((Stage::Footer(decoder), need))
            }
            DecodeResult::Data(metadata) => self.plan_columns(metadata),
            DecodeResult::Finished => {
                Err(self.parquet_error(ParquetError::General("no footer decoded".into())))
            }
        }
    }

    /// The column decoder for the wanted leaves, and the chunks it needs that are not in hand.
    fn plan_columns(&mut self, metadata: ParquetMetaData) -> Result<(Stage, Vec<Range<u64>>)> {
        check_chunk_bounds(&metadata, self.size, &self.path, Phase::Load)?;
        let schema = metadata.file_metadata().schema_descr();
        check_action_columns(&self.path, schema, self.want)?;
        let leaves = wanted_leaves(schema, self.want);
        if leaves.is_empty() {
            return Ok((Stage::Decoded, Vec::new()));
        }
        // Most rows of a big checkpoint are adds; reserve for them, within what the file's
        // size and a sane bound allow (the row count comes from the file).
        if self.want.contains(ActionKinds::ADD) {
            let rows = usize::try_from(metadata.file_metadata().num_rows()).unwrap_or(0);
            let by_size = usize::try_from(self.size / 8).unwrap_or(usize::MAX);
            self.actions.reserve(rows.min(by_size).min(1 << 20));
        }
        self.unchecked = metadata
            .row_groups()
            .iter()
            .flat_map(|rg| {
                let rows = rg.num_rows();
                leaves
                    .iter()
                    .filter_map(move |&i| Some((rg.columns().get(i)?, rows)))
            })
            .map(|(c, rows)| {
                let (start, len) = c.byte_range();
                (start..start.saturating_add(len), ChunkFacts::of(c, rows))
            })
            .collect();
        let chunks: Vec<Range<u64>> = self.unchecked.iter().map(|(r, _)| r.clone()).collect();
        let need = merge(self.inside(chunks)?, MERGE_GAP);
        let mask = ProjectionMask::leaves(schema, leaves);
        let mut buffers = PushBuffers::new(self.size);
        for (range, data) in mem::take(&mut self.pushed) {
            self.check_pages(&range, &data)?;
            buffers.push_range(range, data);
        }
        let options = reader_options();
        let metadata =
            footer_for_decoder(&Arc::new(metadata)).map_err(|e| self.parquet_error(e))?;
        let decoder = self.contained(|| {
            ParquetPushDecoderBuilder::try_new_decoder_with_options(metadata, options).and_then(
                |b| {
                    b.with_projection(mask)
                        .with_batch_size(BATCH_ROWS)
                        .with_buffers(buffers)
                        .build()
                },
            )
        })?;
        Ok((Stage::Columns(Box::new(decoder)), need))
    }

    /// [`Stage::Columns`]: decodes batches into actions until the decoder needs bytes or
    /// is done.
    fn on_columns(
        &mut self,
        mut decoder: Box<ParquetPushDecoder>,
    ) -> Result<(Stage, Vec<Range<u64>>)> {
        loop {
            match self.contained(|| decoder.try_decode())? {
                DecodeResult::NeedsData(ranges) => {
                    let need = self.inside(ranges)?;
                    return Ok((Stage::Columns(decoder), need));
                }
                DecodeResult::Data(batch) => {
                    let base = self.rows;
                    decode_batch(&batch, self.want, &mut self.actions).map_err(
                        |(row, reason)| {
                            let reason = match row {
                                Some(row) => format!("row {}: {reason}", base + row),
                                None => reason,
                            };
                            DeltaError::invalid_log(&self.path, reason)
                        },
                    )?;
                    self.rows += batch.num_rows();
                }
                DecodeResult::Finished => return Ok((Stage::Decoded, Vec::new())),
            }
        }
    }

    /// Checks the page headers of the wanted column chunks that lie wholly in `data` (bytes
    /// `range` of the file). A chunk is fetched whole or lies in the tail, so each is checked
    /// once its bytes are in.
    fn check_pages(&mut self, range: &Range<u64>, data: &Bytes) -> Result<()> {
        let mut result = Ok(());
        let path = &self.path;
        self.unchecked.retain(|(chunk, facts)| {
            if result.is_err() || chunk.start < range.start || chunk.end > range.end {
                return true;
            }
            let at = |offset: u64| usize::try_from(offset - range.start).unwrap_or(usize::MAX);
            if let Some(bytes) = data.get(at(chunk.start)..at(chunk.end)) {
                result = check_pages(bytes, *facts, MAX_PAGE_BYTES, path, Phase::Load);
            }
            false
        });
        result
    }

    /// `ranges` less those inside bytes already pushed.
    fn missing(&self, ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
        let held = |r: &Range<u64>| {
            self.pushed
                .iter()
                .any(|(p, _)| p.start <= r.start && r.end <= p.end)
        };
        ranges.into_iter().filter(|r| !held(r)).collect()
    }

    /// `ranges` (asked for by a decoder, from the footer), refused when one lies outside
    /// the file: the footer is corrupt.
    fn inside(&self, ranges: Vec<Range<u64>>) -> Result<Vec<Range<u64>>> {
        match ranges.iter().find(|r| r.end > self.size || r.start > r.end) {
            Some(r) => Err(self.invalid(format!(
                "the footer points at bytes {}..{}, outside the file of {} bytes",
                r.start, r.end, self.size
            ))),
            None => Ok(self.missing(ranges)),
        }
    }

    /// Refuses a file whose end (`end`) is not a Parquet footer that fits in it (see
    /// [`parquet_tail`](crate::limits::parquet_tail)): the footer decoder computes where the
    /// metadata starts from it.
    fn check_footer_length(&self, end: &[u8]) -> Result<()> {
        match crate::limits::parquet_tail::problem(end, self.size) {
            Some(problem) => Err(self.parquet_error(ParquetError::General(problem))),
            None => Ok(()),
        }
    }

    /// A call into a decoder: its error, or its panic on the file's contents (see
    /// [`contain`]), a Parquet error naming the file.
    fn contained<T>(
        &self,
        decode: impl FnOnce() -> std::result::Result<T, ParquetError>,
    ) -> Result<T> {
        match contain(decode) {
            Ok(result) => result.map_err(|e| self.parquet_error(e)),
            Err(panic) => Err(self.parquet_error(ParquetError::General(format!(
                "the decoder failed on the file's contents: {panic}"
            )))),
        }
    }

    fn parquet_error(&self, source: ParquetError) -> DeltaError {
        DeltaError::Parquet {
            path: self.path.clone(),
            phase: Phase::Load,
            source,
        }
    }

    fn invalid(&self, reason: String) -> DeltaError {
        DeltaError::invalid_log(&self.path, reason)
    }
}

/// `ranges` sorted, those less than `gap` bytes apart merged into one.
fn merge(mut ranges: Vec<Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    ranges.sort_unstable_by_key(|r| r.start);
    ranges.into_iter().fold(Vec::new(), |mut out, r| {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
        out
    })
}
