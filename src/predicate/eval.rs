//! Exact row evaluation of a bound predicate on a [`RecordBatch`] with Arrow kernels, and the
//! list of columns a predicate reads.
//!
//! Columns are found by logical path (exact name, then ignoring case) and cast to the type
//! the predicate was bound with when the batch has another representation (dictionaries,
//! another time zone name, an older type before widening). Strings and binaries are the
//! exception: a `Utf8View` or `LargeUtf8` column is compared as it is, against the literal
//! converted to its type. Comparisons use
//! SQL's three-valued logic (Kleene `and`/`or`); a row whose result is null is not selected.
//! Floats are compared as SQL does: `-0.0` equals `0.0`, and NaN equals NaN and is greater
//! than every number.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_array::builder::BooleanBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, Datum, RecordBatch, StructArray};
use arrow_schema::{ArrowError, DataType as ArrowDataType};
use arrow_select::filter::prep_null_mask_filter;

use super::bind::{BoundColumn, BoundExpr, BoundLiteral};
use super::expr::CompareOp;
use super::scalar::{normal_f32, normal_f64, Scalar};
use crate::error::{DeltaError, Phase, Result};
use crate::schema::output_types::same_values;

/// Evaluates `predicate` on every row of `batch`: `true` for the rows it selects, `false` for
/// the others (including rows where it is null). The result has no nulls, ready for
/// `arrow_select::filter::filter_record_batch`.
pub fn evaluate(predicate: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let result = eval(predicate, batch)?;
    Ok(if result.null_count() == 0 {
        result
    } else {
        prep_null_mask_filter(&result)
    })
}

impl BoundExpr {
    /// The column paths (logical names, as in the schema) the predicate reads, each once, in
    /// order of first use.
    pub fn columns(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        self.visit_columns(&mut |c| {
            if !out.contains(&c.path) {
                out.push(c.path.clone());
            }
        });
        out
    }

    fn visit_columns(&self, f: &mut impl FnMut(&BoundColumn)) {
        match self {
            BoundExpr::Const(_) => {}
            BoundExpr::Compare { column, .. }
            | BoundExpr::In { column, .. }
            | BoundExpr::IsNull(column)
            | BoundExpr::IsNotNull(column) => f(column),
            BoundExpr::CompareColumns { left, right, .. } => {
                f(left);
                f(right);
            }
            BoundExpr::And(list) | BoundExpr::Or(list) => {
                for e in list {
                    e.visit_columns(f);
                }
            }
            BoundExpr::Not(inner) => inner.visit_columns(f),
        }
    }
}

/// An `in` list of this many values or more is matched row by row through a set of them: one
/// comparison kernel per value costs each batch a pass per value (a list of 80,000 values
/// took minutes).
const IN_SET_MIN: usize = 16;

/// `array`'s rows `in` `values`, three-valued: null for a null row, and for a row in none of
/// them when the list holds a null.
fn in_set(array: &ArrayRef, values: &[BoundLiteral], has_null: bool) -> Result<BooleanArray> {
    let set: HashSet<String> = values.iter().map(|v| v.value.set_key()).collect();
    let mut out = BooleanBuilder::with_capacity(array.len());
    for row in 0..array.len() {
        let value = Scalar::from_array(array.as_ref(), row)?;
        if value.is_null() {
            out.append_null();
        } else if set.contains(&value.set_key()) {
            out.append_value(true);
        } else if has_null {
            out.append_null();
        } else {
            out.append_value(false);
        }
    }
    Ok(out.finish())
}

/// The three-valued result of `e` on each row.
fn eval(e: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let rows = batch.num_rows();
    Ok(match e {
        BoundExpr::Const(Some(b)) => BooleanArray::from(vec![*b; rows]),
        BoundExpr::Const(None) => BooleanArray::new_null(rows),
        BoundExpr::Compare { column, op, value } => {
            let want = column_arrow_type(column)?;
            let array = column_array(batch, column, Some(&want))?;
            compare(*op, &array, &literal_like(&value.array, &array)?)?
        }
        BoundExpr::CompareColumns {
            left,
            op,
            right,
            common,
        } => {
            let want = common.to_arrow();
            let mut l = column_array(batch, left, Some(&want))?;
            let mut r = column_array(batch, right, Some(&want))?;
            if l.data_type() != r.data_type() {
                // Two encodings of strings (or binaries): compare them as the bound type.
                l = cast_to(&l, &want)?;
                r = cast_to(&r, &want)?;
            }
            compare(*op, &l, &r)?
        }
        BoundExpr::In {
            column,
            values,
            has_null,
            negated,
        } => {
            let want = column_arrow_type(column)?;
            let array = column_array(batch, column, Some(&want))?;
            let acc = if values.len() >= IN_SET_MIN {
                in_set(&array, values, *has_null)?
            } else {
                let mut acc = if *has_null {
                    BooleanArray::new_null(rows)
                } else {
                    BooleanArray::from(vec![false; rows])
                };
                for value in values {
                    let like = literal_like(&value.array, &array)?;
                    let hit = compare(CompareOp::Eq, &array, &like)?;
                    acc = or_kleene(&acc, &hit).map_err(arrow)?;
                }
                acc
            };
            if *negated {
                not(&acc).map_err(arrow)?
            } else {
                acc
            }
        }
        BoundExpr::IsNull(column) => is_null(&column_array(batch, column, None)?).map_err(arrow)?,
        BoundExpr::IsNotNull(column) => {
            is_not_null(&column_array(batch, column, None)?).map_err(arrow)?
        }
        BoundExpr::And(list) => {
            let mut acc = BooleanArray::from(vec![true; rows]);
            for item in list {
                acc = and_kleene(&acc, &eval(item, batch)?).map_err(arrow)?;
            }
            acc
        }
        BoundExpr::Or(list) => {
            let mut acc = BooleanArray::from(vec![false; rows]);
            for item in list {
                acc = or_kleene(&acc, &eval(item, batch)?).map_err(arrow)?;
            }
            acc
        }
        BoundExpr::Not(inner) => not(&eval(inner, batch)?).map_err(arrow)?,
    })
}

fn compare(op: CompareOp, left: &dyn Datum, right: &dyn Datum) -> Result<BooleanArray> {
    use arrow_ord::cmp;
    let result = match op {
        CompareOp::Eq => cmp::eq(left, right),
        CompareOp::NotEq => cmp::neq(left, right),
        CompareOp::Lt => cmp::lt(left, right),
        CompareOp::LtEq => cmp::lt_eq(left, right),
        CompareOp::Gt => cmp::gt(left, right),
        CompareOp::GtEq => cmp::gt_eq(left, right),
    };
    result.map_err(arrow)
}

fn column_arrow_type(column: &BoundColumn) -> Result<ArrowDataType> {
    column.data_type.to_arrow()
}

/// The values of `column` in `batch` (null where a struct on its path is null), cast to
/// `want` when given, with floats normalized.
fn column_array(
    batch: &RecordBatch,
    column: &BoundColumn,
    want: Option<&ArrowDataType>,
) -> Result<ArrayRef> {
    let missing = || DeltaError::InvalidArgument {
        reason: format!(
            "the filter column {} is not in the data being filtered",
            column.display_path()
        ),
    };
    let (first, rest) = column.path.split_first().ok_or_else(missing)?;
    let schema = batch.schema();
    let index = schema
        .index_of(first)
        .ok()
        .or_else(|| {
            schema
                .fields()
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(first))
        })
        .ok_or_else(missing)?;
    let mut array = Arc::clone(batch.column(index));
    for name in rest {
        let parent: &StructArray = array.as_struct_opt().ok_or_else(missing)?;
        let child = parent
            .column_by_name(name)
            .or_else(|| {
                parent
                    .column_names()
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(name))
                    .map(|i| parent.column(i))
            })
            .ok_or_else(missing)?;
        let child = Arc::clone(child);
        array = if parent.null_count() > 0 {
            // A field of a null struct is null.
            arrow_select::nullif::nullif(&child, &is_null(parent).map_err(arrow)?).map_err(arrow)?
        } else {
            child
        };
    }
    if let Some(want) = want {
        // A string or binary column stays in its encoding (a view, say): the literal is
        // converted to it instead (see `literal_like`).
        if array.data_type() != want && !same_values(array.data_type(), want) {
            array = cast_to(&array, want)?;
        }
    }
    Ok(normalize_floats(array))
}

/// A bound literal (a length-1 array) as a scalar of `column`'s type when that is another
/// encoding of the same kind (a `Utf8` literal against a `Utf8View` column), so that the
/// column is compared as it was decoded.
fn literal_like(literal: &ArrayRef, column: &ArrayRef) -> Result<arrow_array::Scalar<ArrayRef>> {
    let value = if literal.data_type() != column.data_type()
        && same_values(literal.data_type(), column.data_type())
    {
        cast_to(literal, column.data_type())?
    } else {
        Arc::clone(literal)
    };
    Ok(arrow_array::Scalar::new(value))
}

fn cast_to(array: &ArrayRef, to: &ArrowDataType) -> Result<ArrayRef> {
    crate::schema::cast::cast(array, to).map_err(arrow)
}

/// `-0.0` as `0.0` and every NaN as the positive quiet NaN, matching the bound literals.
fn normalize_floats(array: ArrayRef) -> ArrayRef {
    match array.data_type() {
        ArrowDataType::Float64 => {
            let values = array.as_primitive::<Float64Type>();
            if values.values().iter().any(|v| v.is_nan() || *v == 0.0) {
                Arc::new(values.unary::<_, Float64Type>(normal_f64))
            } else {
                array
            }
        }
        ArrowDataType::Float32 => {
            let values = array.as_primitive::<Float32Type>();
            if values.values().iter().any(|v| v.is_nan() || *v == 0.0) {
                Arc::new(values.unary::<_, Float32Type>(normal_f32))
            } else {
                array
            }
        }
        _ => array,
    }
}

fn arrow(source: ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}
