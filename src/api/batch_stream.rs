//! [`DeltaBatchStream`]: the record batches of a scan, from its merged partitions or from
//! one, cut to the scan's row limit (shared by every stream of the scan), counted in its
//! metrics as they are handed out.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::{Stream, StreamExt};

use crate::error::Result;
use crate::io::BoxStream;
use crate::read::metrics::DeltaScanMetrics;

/// The record batches of a scan (all partitions, or one).
pub struct DeltaBatchStream {
    schema: SchemaRef,
    /// `None` once ended: dropping it releases every queued stream and permit.
    inner: Option<BoxStream<'static, Result<RecordBatch>>>,
    /// Rows the scan may still return, shared by its streams.
    limit: Option<Arc<AtomicUsize>>,
    metrics: Arc<DeltaScanMetrics>,
}

impl std::fmt::Debug for DeltaBatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaBatchStream")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl DeltaBatchStream {
    /// The stream of `inner`'s batches, of `schema`, within the rows `limit` has left.
    pub(super) fn new(
        schema: SchemaRef,
        inner: BoxStream<'static, Result<RecordBatch>>,
        limit: Option<Arc<AtomicUsize>>,
        metrics: Arc<DeltaScanMetrics>,
    ) -> Self {
        DeltaBatchStream {
            schema,
            inner: Some(inner),
            limit,
            metrics,
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// Row groups left out so far because their Parquet statistics show that no row matches
    /// the predicate.
    pub fn row_groups_pruned(&self) -> u64 {
        self.metrics.row_groups_pruned()
    }

    /// The scan's metrics; they stay readable after the stream is dropped.
    pub fn metrics(&self) -> Arc<DeltaScanMetrics> {
        Arc::clone(&self.metrics)
    }

    /// Reads every remaining batch.
    pub async fn collect_batches(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await {
            out.push(b?);
        }
        Ok(out)
    }

    /// Takes up to `rows` from the shared limit; how many were granted.
    fn take_rows(&self, rows: usize) -> usize {
        let Some(left) = &self.limit else { return rows };
        let mut granted = 0;
        let _ = left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| {
            granted = rows.min(l);
            Some(l - granted)
        });
        granted
    }
}

impl Stream for DeltaBatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this
            .limit
            .as_ref()
            .is_some_and(|l| l.load(Ordering::Acquire) == 0)
        {
            // The limit is reached: stop reading at once.
            this.inner = None;
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(batch))) => {
                let keep = this.take_rows(batch.num_rows());
                if keep == 0 && batch.num_rows() > 0 {
                    this.inner = None;
                    return Poll::Ready(None);
                }
                let batch = if keep < batch.num_rows() {
                    batch.slice(0, keep)
                } else {
                    batch
                };
                this.metrics.batch_emitted(batch.num_rows());
                Poll::Ready(Some(Ok(batch)))
            }
            Poll::Ready(None) => {
                this.inner = None;
                Poll::Ready(None)
            }
            other => other,
        }
    }
}
