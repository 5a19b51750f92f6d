//! The seam between the scheduler and a Parquet decoder: [`FileDecoder`] turns one file
//! task into its finished batches (deletion vectors, transform, predicate and limit applied).
//! The scheduler holds one decoder per scan; [`DirectDecoder`] is ours (arrow-rs's push
//! decoder over the table's store), and the `kernel` module adds delta_kernel's.

use std::fmt::Debug;
use std::sync::Arc;

use arrow_array::RecordBatch;

use super::file::{read_file_with_metrics, ReadContext};
use super::metrics::DeltaScanMetrics;
use crate::error::Result;
use crate::io::{BoxStream, MaybeSend, MaybeSync};
use crate::plan::FileTask;

/// Decodes the data files of a scan.
pub trait FileDecoder: Debug + MaybeSend + MaybeSync {
    /// The batches of `task`, deletion vectors loaded and counted into `metrics`.
    fn read(
        &self,
        ctx: ReadContext,
        task: FileTask,
        metrics: Option<Arc<DeltaScanMetrics>>,
    ) -> BoxStream<'static, Result<RecordBatch>>;
}

/// Our own decoder: arrow-rs's push decoder, reading only the ranges it needs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirectDecoder;

impl FileDecoder for DirectDecoder {
    fn read(
        &self,
        ctx: ReadContext,
        task: FileTask,
        metrics: Option<Arc<DeltaScanMetrics>>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        read_file_with_metrics(ctx, task, metrics)
    }
}
