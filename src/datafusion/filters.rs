//! DataFusion filters as the reader's predicates, and how exactly the reader applies them.
//!
//! A filter converts when it is built from columns of the table, literals, comparisons,
//! `and`/`or`/`not`, `is [not] null`, `[not] between` and `[not] in (...)`. The reader
//! evaluates a converted predicate exactly on every row (SQL semantics: a row is kept only
//! when the predicate is true), after skipping files and row groups, so a filter that
//! converts with the same meaning is [`TableProviderFilterPushDown::Exact`].
//!
//! Where the meanings could differ the filter does not convert: float comparisons (the
//! reader orders `-0.0 = 0.0` and every NaN alike, Arrow's kernels do not), literals that
//! only approximate a value of the column's type (a nanosecond timestamp against the
//! reader's microseconds), casts other than widening an integer, and anything else
//! (functions, `like`, arithmetic). Inside an `and`, a part that does not convert is left
//! out: the rest selects a superset of the rows, which is enough to skip files and rows, so
//! the filter is [`TableProviderFilterPushDown::Inexact`] (DataFusion filters again).
//! Everything else is [`TableProviderFilterPushDown::Unsupported`].

use arrow_schema::{DataType, Schema, TimeUnit};
use datafusion::logical_expr::{BinaryExpr, Expr as DfExpr, Operator, TableProviderFilterPushDown};
use datafusion::scalar::ScalarValue;

use crate::predicate::{CompareOp, Expr, Scalar};
use crate::schema::PrimitiveType;

/// A predicate converted from a DataFusion filter.
struct Converted {
    expr: Expr,
    /// Whether it selects exactly the rows the filter does (else a superset).
    exact: bool,
}

impl Converted {
    fn exact(expr: Expr) -> Option<Self> {
        Some(Converted { expr, exact: true })
    }
}

/// How the reader applies `filter` for a table of `schema` (the table's Arrow schema).
pub fn classify_filter(filter: &DfExpr, schema: &Schema) -> TableProviderFilterPushDown {
    match convert(filter, schema) {
        Some(c) if c.exact => TableProviderFilterPushDown::Exact,
        Some(_) => TableProviderFilterPushDown::Inexact,
        None => TableProviderFilterPushDown::Unsupported,
    }
}

/// The reader's predicate for `filter` and whether it is exact (else it selects a superset
/// of the rows); `None` when nothing of it converts.
pub fn to_delta_predicate(filter: &DfExpr, schema: &Schema) -> Option<(Expr, bool)> {
    convert(filter, schema).map(|c| (c.expr, c.exact))
}

fn convert(filter: &DfExpr, schema: &Schema) -> Option<Converted> {
    match filter {
        DfExpr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => {
                let parts = [convert(left, schema), convert(right, schema)];
                let exact = parts.iter().all(|p| p.as_ref().is_some_and(|c| c.exact));
                let kept: Vec<Expr> = parts.into_iter().flatten().map(|c| c.expr).collect();
                let expr = kept.into_iter().reduce(Expr::and)?;
                Some(Converted { expr, exact })
            }
            Operator::Or => {
                let (l, r) = (convert(left, schema)?, convert(right, schema)?);
                Some(Converted {
                    exact: l.exact && r.exact,
                    expr: l.expr.or(r.expr),
                })
            }
            _ => Converted::exact(comparison(left, *op, right, schema)?),
        },
        DfExpr::Not(inner) => {
            // The negation of a superset is not a superset: only exact parts negate.
            let c = convert(inner, schema).filter(|c| c.exact)?;
            Converted::exact(Expr::Not(Box::new(c.expr)))
        }
        DfExpr::IsNull(inner) => Converted::exact(Expr::IsNull(Box::new(column(inner, schema)?.0))),
        DfExpr::IsNotNull(inner) => {
            Converted::exact(Expr::IsNotNull(Box::new(column(inner, schema)?.0)))
        }
        DfExpr::Between(b) => {
            let low = comparison(&b.expr, Operator::GtEq, &b.low, schema)?;
            let high = comparison(&b.expr, Operator::LtEq, &b.high, schema)?;
            let both = low.and(high);
            Converted::exact(if b.negated {
                Expr::Not(Box::new(both))
            } else {
                both
            })
        }
        DfExpr::InList(list) => {
            let (col, ty) = comparable_column(&list.expr, schema)?;
            let values = list
                .list
                .iter()
                .map(|v| literal_for(v, &ty))
                .collect::<Option<Vec<Scalar>>>()?;
            Converted::exact(Expr::In {
                expr: Box::new(col),
                list: values,
                negated: list.negated,
            })
        }
        // A boolean constant, null included: DataFusion's simplifier writes `x in (1, null)`
        // as `x = 1 or null` and `x not in (1, null)` as `x != 1 and null` after the filter
        // was classified, and a filter once classified exact must still convert exactly
        // when the scan is planned (DataFusion no longer filters it).
        DfExpr::Literal(ScalarValue::Boolean(value), _) => {
            Converted::exact(Expr::Literal(match value {
                Some(b) => Scalar::Boolean(*b),
                None => Scalar::Null(PrimitiveType::Boolean),
            }))
        }
        DfExpr::Literal(ScalarValue::Null, _) => {
            Converted::exact(Expr::Literal(Scalar::Null(PrimitiveType::Boolean)))
        }
        // A bare boolean column: true rows.
        DfExpr::Column(_) => {
            let (col, ty) = column(filter, schema)?;
            (ty == DataType::Boolean).then_some(())?;
            Converted::exact(col)
        }
        _ => None,
    }
}

fn compare_op(op: Operator) -> Option<CompareOp> {
    Some(match op {
        Operator::Eq => CompareOp::Eq,
        Operator::NotEq => CompareOp::NotEq,
        Operator::Lt => CompareOp::Lt,
        Operator::LtEq => CompareOp::LtEq,
        Operator::Gt => CompareOp::Gt,
        Operator::GtEq => CompareOp::GtEq,
        _ => return None,
    })
}

/// `left op right` between a column and a literal (either side) or two columns of one type.
fn comparison(left: &DfExpr, op: Operator, right: &DfExpr, schema: &Schema) -> Option<Expr> {
    let op = compare_op(op)?;
    match (
        comparable_column(left, schema),
        comparable_column(right, schema),
    ) {
        (Some((l, lt)), Some((r, rt))) => (lt == rt).then(|| l.compare(op, r)),
        (Some((l, ty)), None) => Some(l.compare(op, literal_for(right, &ty)?)),
        (None, Some((r, ty))) => Some(r.compare(op.flip(), literal_for(left, &ty)?)),
        (None, None) => None,
    }
}

/// A top-level column of the table (through a widening integer cast), and its type.
fn column(expr: &DfExpr, schema: &Schema) -> Option<(Expr, DataType)> {
    match expr {
        DfExpr::Column(c) => {
            let field = schema.field_with_name(&c.name).ok()?;
            Some((
                crate::predicate::col(c.name.clone()),
                field.data_type().clone(),
            ))
        }
        DfExpr::Cast(cast) => {
            let (col, from) = column(&cast.expr, schema)?;
            let to = cast.field.data_type();
            (integer_width(&from)? <= integer_width(to)?).then(|| (col, to.clone()))
        }
        _ => None,
    }
}

/// A column compared by value: not a float (see the module doc), not nested.
fn comparable_column(expr: &DfExpr, schema: &Schema) -> Option<(Expr, DataType)> {
    let (col, ty) = column(expr, schema)?;
    let ok = !(ty.is_floating() || ty.is_nested());
    ok.then_some((col, ty))
}

fn integer_width(ty: &DataType) -> Option<u8> {
    Some(match ty {
        DataType::Int8 => 1,
        DataType::Int16 => 2,
        DataType::Int32 => 4,
        DataType::Int64 => 8,
        _ => return None,
    })
}

/// A literal the reader compares with a column of type `column` with the same meaning as
/// DataFusion does.
fn literal_for(expr: &DfExpr, column: &DataType) -> Option<Scalar> {
    let DfExpr::Literal(value, _) = expr else {
        return None;
    };
    if !literal_fits(value, column) {
        return None;
    }
    let array = value.to_array().ok()?;
    Scalar::from_array(array.as_ref(), 0).ok()
}

fn literal_fits(value: &ScalarValue, column: &DataType) -> bool {
    let literal = value.data_type();
    if value.is_null() {
        // A comparison with null is null on both sides.
        return literal == *column || literal == DataType::Null;
    }
    let is_string =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let is_binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    match (column, &literal) {
        (c, l) if integer_width(c).is_some() => integer_width(l).is_some(),
        (DataType::Decimal128(_, _), l) => {
            matches!(l, DataType::Decimal128(_, _)) || integer_width(l).is_some()
        }
        (c, l) if is_string(c) => is_string(l),
        (c, l) if is_binary(c) => is_binary(l),
        (DataType::Boolean, DataType::Boolean) | (DataType::Date32, DataType::Date32) => true,
        (DataType::Timestamp(_, ctz), DataType::Timestamp(unit, ltz)) => {
            let whole_micros = match (unit, value) {
                (TimeUnit::Nanosecond, ScalarValue::TimestampNanosecond(Some(ns), _)) => {
                    ns % 1000 == 0
                }
                (TimeUnit::Nanosecond, _) => false,
                _ => true,
            };
            ctz.is_some() == ltz.is_some() && whole_micros
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::Field;
    use datafusion::logical_expr::{cast, col, lit, Expr as DfExpr};

    use super::*;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("small", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC"))),
                true,
            ),
        ])
    }

    fn class(e: &DfExpr) -> TableProviderFilterPushDown {
        classify_filter(e, &schema())
    }

    fn upper(e: DfExpr) -> DfExpr {
        datafusion::functions::string::expr_fn::upper(e)
    }

    #[test]
    fn exact_where_the_reader_filters_rows_with_the_same_meaning() {
        use TableProviderFilterPushDown::Exact;
        for e in [
            col("id").eq(lit(3i64)),
            lit(3i64).lt(col("id")),
            col("name").not_eq(lit("a")),
            col("id").gt(lit(1i64)).and(col("name").is_null()),
            col("id").lt(lit(1i64)).or(col("small").gt_eq(lit(5i32))),
            col("id").between(lit(1i64), lit(5i64)),
            col("id").not_between(lit(1i64), lit(5i64)),
            col("name").in_list(vec![lit("a"), lit("b")], false),
            col("name").in_list(vec![lit("a")], true),
            col("flag"),
            DfExpr::Not(Box::new(col("flag"))),
            col("x").is_not_null(),
            col("id").eq(cast(col("small"), DataType::Int64)),
            cast(col("small"), DataType::Int64).eq(lit(7i64)),
            col("day").gt(lit(ScalarValue::Date32(Some(19000)))),
            col("ts").gt_eq(lit(ScalarValue::TimestampMillisecond(
                Some(1_700_000_000_000),
                Some(Arc::from("UTC")),
            ))),
        ] {
            assert_eq!(class(&e), Exact, "{e}");
        }
        let (p, exact) = to_delta_predicate(&lit(3i64).lt(col("id")), &schema())
            .unwrap_or_else(|| panic!("converts"));
        assert!(exact);
        assert_eq!(p.to_string(), "id > 3");
    }

    /// What DataFusion's simplifier makes of `in`/`not in` lists holding a null after the
    /// filter was classified: still exact, with SQL's meaning (a null is not true).
    #[test]
    fn null_constants_after_simplification_stay_exact() {
        use TableProviderFilterPushDown::Exact;
        let null = || lit(ScalarValue::Boolean(None));
        for e in [
            col("id").in_list(vec![lit(1i64), lit(ScalarValue::Int64(None))], false),
            col("id").eq(lit(1i64)).or(null()),
            col("id").not_eq(lit(1i64)).and(null()),
            DfExpr::Not(Box::new(col("id").eq(lit(1i64)).or(null()))),
            null(),
            lit(true),
            lit(ScalarValue::Null),
        ] {
            assert_eq!(class(&e), Exact, "{e}");
        }
        let (p, exact) = to_delta_predicate(&col("id").eq(lit(1i64)).or(null()), &schema())
            .unwrap_or_else(|| panic!("converts"));
        assert!(exact);
        assert_eq!(p.to_string(), "id = 1 or null");
    }

    #[test]
    fn inexact_when_only_part_of_an_and_converts() {
        use TableProviderFilterPushDown::Inexact;
        let e = col("id").gt(lit(1i64)).and(upper(col("name")).eq(lit("A")));
        assert_eq!(class(&e), Inexact);
        let (p, exact) = to_delta_predicate(&e, &schema()).unwrap_or_else(|| panic!("converts"));
        assert!(!exact);
        assert_eq!(p.to_string(), "id > 1");
        // Inside an `or` both sides still convert, one of them loosely.
        let e = e.or(col("id").eq(lit(0i64)));
        assert_eq!(class(&e), Inexact);
    }

    #[test]
    fn unsupported_where_meanings_could_differ_or_nothing_converts() {
        use TableProviderFilterPushDown::Unsupported;
        for e in [
            upper(col("name")).eq(lit("A")),
            col("x").gt(lit(0.0f64)),
            col("x").eq(col("x")),
            col("name").like(lit("a%")),
            (col("id") + lit(1i64)).eq(lit(3i64)),
            col("id").eq(lit("3")),
            col("id").eq(col("name")),
            col("ts").gt(lit(ScalarValue::TimestampNanosecond(
                Some(1_700_000_000_000_000_001),
                Some(Arc::from("UTC")),
            ))),
            col("ts").gt(lit(ScalarValue::TimestampMicrosecond(Some(1), None))),
            cast(col("id"), DataType::Int32).eq(lit(1i32)),
            col("missing").eq(lit(1i64)),
            col("name"),
            // A negated loose part would select too few rows.
            DfExpr::Not(Box::new(
                col("id").gt(lit(1i64)).and(upper(col("name")).eq(lit("A"))),
            )),
            upper(col("name")).eq(lit("A")).or(col("id").eq(lit(1i64))),
        ] {
            assert_eq!(class(&e), Unsupported, "{e}");
        }
    }
}
