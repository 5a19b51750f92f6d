//! [`DeltaTableProvider`]: a [`DeltaTable`] snapshot as a DataFusion table, and
//! [`register_table`].

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::DFSchema;
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr as DfExpr, TableProviderFilterPushDown};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use super::exec::DeltaScanExec;
use super::filters::{classify_filter, to_delta_predicate};
use super::options::{scan_output_types, scan_target_partitions, ScanOptions};
use super::statistics::scan_statistics;
use super::to_df_error;
use crate::api::{machine_caps, DeltaTable};
use crate::predicate::Expr;
use crate::schema::OutputTypes;

/// A Delta table snapshot that DataFusion can query. Every scan reads the same snapshot; load
/// the table again (and register it again) for a newer version.
#[derive(Debug, Clone)]
pub struct DeltaTableProvider {
    table: DeltaTable,
    options: ScanOptions,
    output_types: OutputTypes,
    schema: SchemaRef,
}

impl DeltaTableProvider {
    /// A provider scanning `table` with `options` (checked here). Strings and binaries are
    /// read as `options.output_types`, views when not given (DataFusion's default).
    pub fn try_new(table: DeltaTable, options: ScanOptions) -> crate::Result<Self> {
        Self::with_session_views(table, options, true)
    }

    /// A provider whose output types, when `options` give none, follow the session's
    /// `schema_force_view_types`.
    fn with_session_views(
        table: DeltaTable,
        options: ScanOptions,
        force_view_types: bool,
    ) -> crate::Result<Self> {
        options.validate()?;
        let output_types = scan_output_types(&options, force_view_types);
        let schema = Arc::new(output_types.apply_schema(&table.schema()));
        Ok(DeltaTableProvider {
            table,
            options,
            output_types,
            schema,
        })
    }

    /// The table snapshot.
    pub fn table(&self) -> &DeltaTable {
        &self.table
    }

    /// The scan options.
    pub fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// The Arrow types strings and binaries are read as.
    pub fn output_types(&self) -> OutputTypes {
        self.output_types
    }
}

/// Registers `table` in `ctx` as `name` (replacing a table of that name) with `options`.
/// Without `options.output_types`, strings and binaries are views when `ctx` forces view types
/// (`datafusion.execution.parquet.schema_force_view_types`, on by default), else `Utf8` and
/// `Binary`.
pub fn register_table(
    ctx: &SessionContext,
    name: &str,
    table: DeltaTable,
    options: ScanOptions,
) -> Result<()> {
    let force_views = ctx
        .state()
        .config_options()
        .execution
        .parquet
        .schema_force_view_types;
    let provider =
        DeltaTableProvider::with_session_views(table, options, force_views).map_err(to_df_error)?;
    ctx.register_table(name, Arc::new(provider))?;
    Ok(())
}

#[async_trait]
impl TableProvider for DeltaTableProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&DfExpr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| classify_filter(f, &self.schema))
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[DfExpr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let config = state.config();
        let target =
            scan_target_partitions(&self.options, machine_caps(), config.target_partitions())
                .map_err(to_df_error)?;
        let mut execution = self.options.execution_options.clone();
        execution.target_partitions = Some(target);
        let mut builder = self
            .table
            .scan()
            .with_execution_options(execution)
            .with_output_types(self.output_types)
            .with_batch_size(config.batch_size().max(1));
        // Filters DataFusion handed over that do not convert exactly any more: it rewrites
        // filters after asking how they push down (`x in (1, null)` becomes `x = 1 or
        // null`), and drops its own filter for one once called exact. They are applied
        // above the scan (a filter applied twice is the same filter), never lost.
        let mut predicates: Vec<Expr> = Vec::with_capacity(filters.len());
        let mut residual: Vec<DfExpr> = Vec::new();
        for f in filters {
            let converted = to_delta_predicate(f, &self.schema);
            if !converted.as_ref().is_some_and(|(_, exact)| *exact) {
                residual.push(f.clone());
            }
            predicates.extend(converted.map(|(e, _)| e));
        }
        let wanted: Vec<usize> = match projection {
            Some(indexes) => indexes.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let mut read = wanted.clone();
        for f in &residual {
            for c in f.column_refs() {
                if let Ok(i) = self.schema.index_of(&c.name) {
                    if !read.contains(&i) {
                        read.push(i);
                    }
                }
            }
        }
        let output: SchemaRef = Arc::new(self.schema.project(&read)?);
        if projection.is_some() || read.len() != wanted.len() {
            let names: Vec<String> = if read.is_empty() {
                // Row counts only: read one column, preferring a partition column.
                self.count_column().into_iter().collect()
            } else {
                output.fields().iter().map(|f| f.name().clone()).collect()
            };
            builder = builder.with_projection(names);
        }
        if let Some(predicate) = predicates.into_iter().reduce(Expr::and) {
            builder = builder.with_predicate(predicate);
        }
        // DataFusion keeps its own limit above the scan; with filters still to apply here the
        // scan must not stop at it.
        if let Some(n) = limit.filter(|_| residual.is_empty()) {
            builder = builder.with_limit(n);
        }
        let scan = builder.build().await.map_err(to_df_error)?;
        let statistics = scan_statistics(
            scan.files(),
            &output,
            self.table.delta_schema(),
            self.table.partition_columns(),
            self.table.column_mapping_mode(),
            scan.filters_rows() || limit.is_some(),
        );
        let exec: Arc<dyn ExecutionPlan> = Arc::new(DeltaScanExec::new(
            scan,
            Arc::clone(&output),
            statistics,
            self.options.intra_file_repartitioning,
        ));
        let Some(residual) = conjunction(residual) else {
            return Ok(exec);
        };
        let df_schema = DFSchema::try_from(Arc::clone(&output))?;
        let predicate = state.create_physical_expr(residual, &df_schema)?;
        let filtered: Arc<dyn ExecutionPlan> = Arc::new(FilterExec::try_new(predicate, exec)?);
        if read.len() == wanted.len() {
            return Ok(filtered);
        }
        // Back to the columns asked for, without those read for the filters alone.
        let columns: Vec<(Arc<dyn PhysicalExpr>, String)> = (0..wanted.len())
            .map(|i| {
                let name = output.field(i).name().clone();
                let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&name, i));
                (column, name)
            })
            .collect();
        Ok(Arc::new(ProjectionExec::try_new(columns, filtered)?))
    }
}

impl DeltaTableProvider {
    /// The cheapest column to read when only row counts are needed.
    fn count_column(&self) -> Option<String> {
        let partitions = self.table.partition_columns();
        partitions.first().cloned().or_else(|| {
            let schema: &Schema = &self.schema;
            schema.fields().first().map(|f| f.name().clone())
        })
    }
}
