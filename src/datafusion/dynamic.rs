//! Dynamic partition pruning: file tasks skipped, just before admission, when the latest
//! value of a filter DataFusion pushed into the scan (a hash join's build side, a TopK
//! threshold, or a plain filter) proves that no row of the task can match.
//!
//! The proof uses partition values only: each filter is evaluated on a one-row batch holding
//! the task's partition values (other columns null). A task is skipped only when the filter
//! reads partition columns alone, every one of them has a non-null value in the task, and the
//! result is false. Any doubt — a data column, a missing or null value, an evaluation error,
//! a result that is not a boolean — reads the task.

use std::sync::Arc;

use arrow_array::{new_null_array, Array, BooleanArray, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;

use crate::plan::FileTask;
use crate::predicate::TypedPartitionValues;
use crate::read::scheduler::AdmitCheck;

/// Whether a file with partition values `values` may hold a row `filter` (over the output
/// columns, `schema`) selects. `false` only when the partition values prove that none can.
pub fn partition_values_may_match(
    filter: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
    values: &TypedPartitionValues,
) -> bool {
    let Ok(current) = snapshot_physical_expr(Arc::clone(filter)) else {
        return true;
    };
    let known = |i: usize| {
        schema
            .fields()
            .get(i)
            .and_then(|f| values.get(f.name()))
            .is_some_and(|v| !v.is_null())
    };
    if !collect_columns(&current).iter().all(|c| known(c.index())) {
        return true;
    }
    let Some(batch) = one_row(schema, values) else {
        return true;
    };
    let Ok(result) = current.evaluate(&batch).and_then(|v| v.into_array(1)) else {
        return true;
    };
    let Some(result) = result.as_any().downcast_ref::<BooleanArray>() else {
        return true;
    };
    !(result.len() == 1 && result.is_valid(0) && !result.value(0))
}

/// One row: the partition values, nulls elsewhere (every field nullable). `None` when a
/// value does not convert to its column's type.
fn one_row(schema: &Schema, values: &TypedPartitionValues) -> Option<RecordBatch> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        columns.push(match values.array(field.name(), field.data_type()).ok()? {
            Some(v) => v,
            None => new_null_array(field.data_type(), 1),
        });
        fields.push(Field::new(field.name(), field.data_type().clone(), true));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).ok()
}

/// The scheduler's admission check for `filters` over an output `schema`: a task is read
/// unless one of the filters proves it holds no matching row.
pub(crate) fn admit_check(filters: Vec<Arc<dyn PhysicalExpr>>, schema: SchemaRef) -> AdmitCheck {
    Arc::new(move |task: &FileTask| {
        filters
            .iter()
            .all(|f| partition_values_may_match(f, &schema, &task.partition_values))
    })
}

#[cfg(test)]
mod tests {
    use arrow_schema::DataType;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{binary, col, lit, DynamicFilterPhysicalExpr};

    use super::*;
    use crate::predicate::Scalar;
    use crate::schema::PrimitiveType;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("part", DataType::Utf8, true),
        ])
    }

    fn part(v: Option<&str>) -> TypedPartitionValues {
        let value = match v {
            Some(v) => Scalar::String(v.into()),
            None => Scalar::Null(PrimitiveType::String),
        };
        TypedPartitionValues::from_entries([("part".to_string(), value)])
    }

    /// A dynamic filter over `part`, updated to `part = value`.
    fn dynamic(value: &str) -> Arc<dyn PhysicalExpr> {
        let s = schema();
        let part_col = col("part", &s).unwrap_or_else(|e| panic!("{e}"));
        let filter = Arc::new(DynamicFilterPhysicalExpr::new(
            vec![Arc::clone(&part_col)],
            lit(true),
        ));
        let eq = binary(part_col, Operator::Eq, lit(value), &s).unwrap_or_else(|e| panic!("{e}"));
        filter.update(eq).unwrap_or_else(|e| panic!("{e}"));
        filter
    }

    #[test]
    fn partition_values_that_prove_no_match_skip() {
        let s = schema();
        let f = dynamic("a");
        assert!(partition_values_may_match(&f, &s, &part(Some("a"))));
        assert!(!partition_values_may_match(&f, &s, &part(Some("b"))));
        // Before the build side is done, the filter is `true`.
        let pending: Arc<dyn PhysicalExpr> = Arc::new(DynamicFilterPhysicalExpr::new(
            vec![col("part", &s).unwrap_or_else(|e| panic!("{e}"))],
            lit(true),
        ));
        assert!(partition_values_may_match(&pending, &s, &part(Some("b"))));
    }

    #[test]
    fn any_doubt_reads_the_task() {
        let s = schema();
        let f = dynamic("a");
        // A null or missing partition value.
        assert!(partition_values_may_match(&f, &s, &part(None)));
        assert!(partition_values_may_match(
            &f,
            &s,
            &TypedPartitionValues::none()
        ));
        // A value of another column only.
        let other = TypedPartitionValues::from_entries([("id".to_string(), Scalar::Long(1))]);
        assert!(partition_values_may_match(&f, &s, &other));
        // A data column.
        let on_data = binary(
            col("id", &s).unwrap_or_else(|e| panic!("{e}")),
            Operator::Eq,
            lit(5i64),
            &s,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(partition_values_may_match(&on_data, &s, &part(Some("b"))));
        // An expression that fails to evaluate (a string compared with a number).
        let failing: Arc<dyn PhysicalExpr> =
            Arc::new(datafusion::physical_expr::expressions::BinaryExpr::new(
                col("part", &s).unwrap_or_else(|e| panic!("{e}")),
                Operator::Eq,
                lit(5i64),
            ));
        assert!(partition_values_may_match(&failing, &s, &part(Some("b"))));
        // Not a boolean.
        assert!(partition_values_may_match(&lit(3i64), &s, &part(Some("b"))));
    }
}
