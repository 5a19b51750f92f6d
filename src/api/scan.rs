//! Scans: [`DeltaScanBuilder`] → [`DeltaScan`] → [`DeltaBatchStream`].
//!
//! A scan reads the snapshot's files into record batches of the requested columns, in log
//! order, one file after another with the next file's footer and first ranges fetched while
//! the current one is consumed.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::{self, Stream, StreamExt};

use super::table::DeltaTable;
use crate::error::{DeltaError, Result};
use crate::io::{BoxStream, BoxedStream};
use crate::plan::{plan_columns, plan_tasks, ScanColumns, ScanRequest, TableFacts};
use crate::predicate::{
    bind, evaluate, may_match_file, parse_filter, partition_scalars, BoundExpr, Expr, FileStats,
    StatsColumns,
};
use crate::read::{read_file, FileTask, ReadContext, RowPredicate};

/// Default rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// Configures a scan of one snapshot.
#[derive(Debug, Clone)]
pub struct DeltaScanBuilder {
    table: DeltaTable,
    projection: Option<Vec<String>>,
    predicate: Option<Expr>,
    filter_text: Option<String>,
    limit: Option<usize>,
    batch_size: usize,
}

/// How many files a scan selected and why it left the others out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSelection {
    /// Active files in the snapshot.
    pub files_total: usize,
    /// Files the scan will read.
    pub files_selected: usize,
    /// Files left out because their partition values cannot match the predicate.
    pub skipped_by_partition: usize,
    /// Files left out because their statistics show no row can match.
    pub skipped_by_stats: usize,
}

impl DeltaScanBuilder {
    pub(crate) fn new(table: DeltaTable) -> Self {
        DeltaScanBuilder {
            table,
            projection: None,
            predicate: None,
            filter_text: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
        }
    }

    /// Output only these columns (top-level logical names), in this order.
    pub fn with_projection<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.projection = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Only rows for which `predicate` is true (SQL semantics: null is not true). Files that
    /// cannot hold such rows are skipped using partition values and statistics.
    pub fn with_predicate(mut self, predicate: Expr) -> Self {
        self.predicate = Some(predicate);
        self
    }

    /// Like [`with_predicate`](Self::with_predicate), from the text syntax, e.g.
    /// `country = 'NL' and amount >= 10.5 and day between '2024-01-01' and '2024-01-31'`.
    /// The text is parsed by [`build`](Self::build), which reports syntax errors.
    pub fn with_filter(mut self, filter: impl Into<String>) -> Self {
        self.filter_text = Some(filter.into());
        self
    }

    /// Stop after `n` rows.
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Rows per output batch (at most).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n;
        self
    }

    /// Plans the scan.
    pub fn build(self) -> Result<DeltaScan> {
        if self.batch_size == 0 {
            return Err(DeltaError::InvalidArgument {
                reason: "the batch size must be at least 1".into(),
            });
        }
        let table = &self.table;
        let facts = TableFacts {
            location: table.location(),
            schema: table.delta_schema(),
            partition_columns: table.partition_columns(),
            mode: table.column_mapping_mode(),
        };
        let predicate = match (&self.predicate, &self.filter_text) {
            (Some(_), Some(_)) => {
                return Err(DeltaError::InvalidArgument {
                    reason: "give either a predicate or a filter text, not both".into(),
                })
            }
            (Some(e), None) => Some(bind(e, facts.schema)?),
            (None, Some(text)) => Some(bind(&parse_filter(text)?, facts.schema)?),
            (None, None) => None,
        };
        let predicate_columns = predicate
            .as_ref()
            .map(|p| {
                p.columns()
                    .into_iter()
                    .filter_map(|path| path.into_iter().next())
                    .collect()
            })
            .unwrap_or_default();
        let request = ScanRequest {
            projection: self.projection.clone(),
            predicate_columns,
            limit: self.limit,
        };
        let columns = plan_columns(facts, &request)?;
        let (files, selection) = select_files(facts, table, predicate.as_ref())?;
        let tasks = if self.limit == Some(0) {
            Vec::new()
        } else {
            plan_tasks(facts, &columns.columns, &files, self.limit)?
        };
        Ok(DeltaScan {
            table: self.table.clone(),
            columns,
            tasks,
            selection,
            predicate: predicate.map(Arc::new),
            limit: self.limit,
            batch_size: self.batch_size,
        })
    }
}

/// The files a predicate may match: partition values first (exact), then statistics
/// (conservative: unreadable statistics keep the file).
fn select_files(
    facts: TableFacts<'_>,
    table: &DeltaTable,
    predicate: Option<&BoundExpr>,
) -> Result<(Vec<crate::log::Add>, FileSelection)> {
    let all = table.files();
    let mut selection = FileSelection {
        files_total: all.len(),
        ..Default::default()
    };
    let Some(predicate) = predicate else {
        selection.files_selected = all.len();
        return Ok((all.to_vec(), selection));
    };
    let stats_columns = StatsColumns::for_predicate(facts.schema, facts.mode, predicate)?;
    let no_partitions = std::collections::BTreeMap::new();
    let mut kept = Vec::new();
    for add in all {
        let partitions = partition_scalars(
            &add.partition_values,
            facts.schema,
            facts.partition_columns,
            facts.mode,
        )?;
        if !may_match_file(predicate, &partitions, None) {
            selection.skipped_by_partition += 1;
            continue;
        }
        let stats = match (&add.stats, stats_columns.is_empty()) {
            (Some(json), false) => FileStats::parse(json, &stats_columns)
                .ok()
                .map(|s| s.with_deletion_vector(add.deletion_vector.is_some())),
            _ => None,
        };
        if stats.is_some() && !may_match_file(predicate, &no_partitions, stats.as_ref()) {
            selection.skipped_by_stats += 1;
            continue;
        }
        kept.push(add.clone());
    }
    selection.files_selected = kept.len();
    Ok((kept, selection))
}

/// A planned scan; consumed by [`DeltaScan::into_stream`].
#[derive(Debug)]
pub struct DeltaScan {
    table: DeltaTable,
    columns: ScanColumns,
    tasks: Vec<FileTask>,
    selection: FileSelection,
    predicate: Option<Arc<BoundExpr>>,
    limit: Option<usize>,
    batch_size: usize,
}

impl DeltaScan {
    /// The output schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.columns.output_schema)
    }

    /// The files the scan will read.
    pub fn tasks(&self) -> &[FileTask] {
        &self.tasks
    }

    /// How many files were selected and skipped.
    pub fn file_selection(&self) -> FileSelection {
        self.selection
    }

    /// Starts reading.
    pub fn into_stream(self) -> DeltaBatchStream {
        let row_groups_pruned = Arc::new(AtomicU64::new(0));
        let ctx = ReadContext {
            store: Arc::clone(self.table.store()),
            columns: Arc::clone(&self.columns.columns),
            read_schema: Arc::clone(&self.columns.read_schema),
            output_indices: Arc::clone(&self.columns.output_indices),
            output_schema: Arc::clone(&self.columns.output_schema),
            mode: self.table.column_mapping_mode(),
            batch_size: self.batch_size,
            predicate: self.predicate.clone().map(|p| {
                let f: RowPredicate = Arc::new(move |batch| evaluate(&p, batch));
                f
            }),
            predicate_expr: self.predicate,
            row_groups_pruned: Arc::clone(&row_groups_pruned),
        };
        let schema = Arc::clone(&self.columns.output_schema);
        let files = stream::iter(self.tasks)
            .map(move |task| read_file(ctx.clone(), task))
            .flatten();
        let limited = limit_rows(files, self.limit);
        DeltaBatchStream {
            schema,
            inner: limited.boxed_local_or_send(),
            row_groups_pruned,
        }
    }
}

/// Truncates a batch stream after `limit` rows.
fn limit_rows<S>(inner: S, limit: Option<usize>) -> impl Stream<Item = Result<RecordBatch>>
where
    S: Stream<Item = Result<RecordBatch>>,
{
    let mut left = limit.unwrap_or(usize::MAX);
    inner
        .take_while(move |_| {
            let go = left > 0;
            futures::future::ready(go)
        })
        .map(move |item| {
            item.map(|batch| {
                let keep = batch.num_rows().min(left);
                left -= keep;
                if keep < batch.num_rows() {
                    batch.slice(0, keep)
                } else {
                    batch
                }
            })
        })
}

/// The record batches of a scan.
pub struct DeltaBatchStream {
    schema: SchemaRef,
    inner: BoxStream<'static, Result<RecordBatch>>,
    row_groups_pruned: Arc<AtomicU64>,
}

impl std::fmt::Debug for DeltaBatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaBatchStream")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl DeltaBatchStream {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// Row groups left out so far because their Parquet statistics show that no row matches
    /// the predicate.
    pub fn row_groups_pruned(&self) -> u64 {
        self.row_groups_pruned.load(Ordering::Relaxed)
    }

    /// Reads every remaining batch.
    pub async fn collect_batches(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await {
            out.push(b?);
        }
        Ok(out)
    }
}

impl Stream for DeltaBatchStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl DeltaTable {
    /// Starts configuring a scan of this snapshot.
    pub fn scan(&self) -> DeltaScanBuilder {
        DeltaScanBuilder::new(self.clone())
    }
}
