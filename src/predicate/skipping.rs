//! Conservative file skipping: whether a data file may hold a row that a bound predicate
//! selects, judged from its partition values (exact) and statistics (bounds).
//!
//! [`may_match_file`] answers `false` only when the file provably has no matching row. Rules:
//!
//! - SQL three-valued logic: a comparison never matches a null; `is null` can match only if
//!   `nullCount > 0` (or unknown); `not` is pushed down (`not (x < 3)` is `x >= 3`).
//! - Missing statistics, or a value that does not parse, mean "may match".
//! - String bounds may be truncated prefixes: a value that starts with the max may exceed it.
//! - Timestamp bounds have millisecond precision: they are widened by 1 ms each way.
//! - Decimal bounds of 2^50 units or more are widened by a double's rounding (writers that
//!   keep decimals as doubles write such digits inexactly), and an i64 end is no bound.
//! - Float bounds say nothing about NaN (NaN sorts above every number), so the max never
//!   rules out `>`, `>=` or `!=`.
//! - Row and null counts may include rows a deletion vector removed (`tightBounds` false, or
//!   [`FileStats::with_deletion_vector`]); "every row is null" is then not concluded.
//! - Partition values are exact.

use std::cmp::Ordering;

use super::bind::{BoundColumn, BoundExpr};
use super::expr::CompareOp;
use super::partition_values::TypedPartitionValues;
use super::scalar::Scalar;
use super::stats::FileStats;

/// Microseconds a millisecond-precision timestamp statistic may be off by.
const TIMESTAMP_SLACK_MICROS: i64 = 1000;

/// Whether a file may hold a row that `predicate` selects.
///
/// `partition_values` are the file's typed partition values; `stats` its parsed statistics,
/// if any.
pub fn may_match_file(
    predicate: &BoundExpr,
    partition_values: &TypedPartitionValues,
    stats: Option<&FileStats>,
) -> bool {
    if stats.and_then(|s| s.num_records) == Some(0) {
        return false;
    }
    let file = File {
        partition_values,
        stats,
    };
    file.may(predicate, false)
}

struct File<'a> {
    partition_values: &'a TypedPartitionValues,
    stats: Option<&'a FileStats>,
}

impl File<'_> {
    /// Whether `e` (negated when `negate`) may be true for some row.
    fn may(&self, e: &BoundExpr, negate: bool) -> bool {
        match e {
            BoundExpr::Const(v) => v.is_some_and(|b| b != negate),
            BoundExpr::And(list) if !negate => list.iter().all(|c| self.may(c, false)),
            BoundExpr::And(list) => list.iter().any(|c| self.may(c, true)),
            BoundExpr::Or(list) if !negate => list.iter().any(|c| self.may(c, false)),
            BoundExpr::Or(list) => list.iter().all(|c| self.may(c, true)),
            BoundExpr::Not(inner) => self.may(inner, !negate),
            BoundExpr::IsNull(c) if !negate => !self.facts(c).no_nulls,
            BoundExpr::IsNull(c) => !self.facts(c).all_null,
            BoundExpr::IsNotNull(c) if !negate => !self.facts(c).all_null,
            BoundExpr::IsNotNull(c) => !self.facts(c).no_nulls,
            BoundExpr::Compare { column, op, value } => {
                let op = if negate { op.negate() } else { *op };
                self.facts(column).may_compare(op, &value.value)
            }
            BoundExpr::CompareColumns { left, right, .. } => {
                !self.facts(left).all_null && !self.facts(right).all_null
            }
            BoundExpr::In {
                column,
                values,
                has_null,
                negated,
            } => {
                let facts = self.facts(column);
                if negated != &negate {
                    // `not in`: true only when different from every value, and never with a
                    // null in the list.
                    !has_null
                        && values
                            .iter()
                            .all(|v| facts.may_compare(CompareOp::NotEq, &v.value))
                } else {
                    values
                        .iter()
                        .any(|v| facts.may_compare(CompareOp::Eq, &v.value))
                }
            }
        }
    }

    /// What is known of `column` in this file.
    fn facts(&self, column: &BoundColumn) -> Facts {
        if let [name] = column.path.as_slice() {
            if let Some(value) = self.partition_values.get(name) {
                return Facts::exact(value, column);
            }
        }
        match self.stats {
            Some(stats) => Facts::from_stats(stats, column),
            None => Facts::default(),
        }
    }
}

/// What is known of one column in one file.
#[derive(Debug, Default)]
struct Facts {
    /// No non-null value is below this.
    lower: Option<Scalar>,
    /// No non-null value is above this (but see `upper_is_prefix`, `nan_above`).
    upper: Option<Scalar>,
    /// The upper bound is a string that values may extend (a truncated max).
    upper_is_prefix: bool,
    /// NaN values may exist beyond the upper bound.
    nan_above: bool,
    /// Every row is null.
    all_null: bool,
    /// No row is null.
    no_nulls: bool,
}

impl Facts {
    /// The facts of a partition column whose value is `value` in every row.
    fn exact(value: &Scalar, column: &BoundColumn) -> Facts {
        if value.is_null() {
            return Facts {
                all_null: true,
                ..Facts::default()
            };
        }
        if column.primitive() != Some(&value.data_type()) {
            return Facts::default();
        }
        let value = value.clone().normalized();
        Facts {
            lower: Some(value.clone()),
            upper: Some(value),
            no_nulls: true,
            ..Facts::default()
        }
    }

    fn from_stats(stats: &FileStats, column: &BoundColumn) -> Facts {
        let Some(col) = stats.column(&column.path) else {
            return Facts::default();
        };
        let all_null = stats.counts_are_exact()
            && matches!((col.null_count, stats.num_records), (Some(n), Some(r)) if n == r);
        let mut facts = Facts {
            lower: col.min.clone().map(Scalar::normalized),
            upper: col.max.clone().map(Scalar::normalized),
            all_null,
            no_nulls: col.null_count == Some(0),
            ..Facts::default()
        };
        match column.primitive() {
            Some(crate::schema::PrimitiveType::String) => facts.upper_is_prefix = true,
            Some(crate::schema::PrimitiveType::Float | crate::schema::PrimitiveType::Double) => {
                facts.nan_above = true
            }
            _ => {}
        }
        facts.lower = facts.lower.and_then(|v| widen(v, false));
        facts.upper = facts.upper.and_then(|v| widen(v, true));
        facts
    }

    /// Whether some row may satisfy `column op value` (`value` not null).
    fn may_compare(&self, op: CompareOp, value: &Scalar) -> bool {
        if self.all_null {
            return false;
        }
        let value = value.clone().normalized();
        match op {
            CompareOp::Lt => self.lower_cmp(&value).is_none_or(Ordering::is_lt),
            CompareOp::LtEq => self.lower_cmp(&value).is_none_or(Ordering::is_le),
            CompareOp::Gt => self.nan_above || self.may_exceed(&value, false),
            CompareOp::GtEq => self.nan_above || self.may_exceed(&value, true),
            CompareOp::Eq => {
                let nan = matches!(value, Scalar::Float(v) if v.is_nan())
                    || matches!(value, Scalar::Double(v) if v.is_nan());
                self.lower_cmp(&value).is_none_or(Ordering::is_le)
                    && ((nan && self.nan_above) || self.may_exceed(&value, true))
            }
            CompareOp::NotEq => {
                let single = !self.upper_is_prefix
                    && !self.nan_above
                    && self.lower_cmp(&value) == Some(Ordering::Equal)
                    && self.upper_cmp(&value) == Some(Ordering::Equal);
                !single
            }
        }
    }

    /// `lower` compared with `value` (`None` when unknown).
    fn lower_cmp(&self, value: &Scalar) -> Option<Ordering> {
        self.lower.as_ref()?.compare(value)
    }

    /// `upper` compared with `value` (`None` when unknown).
    fn upper_cmp(&self, value: &Scalar) -> Option<Ordering> {
        self.upper.as_ref()?.compare(value)
    }

    /// Whether some value may be above `value` (or equal to it, when `or_equal`), given the
    /// upper bound.
    fn may_exceed(&self, value: &Scalar, or_equal: bool) -> bool {
        let Some(ordering) = self.upper_cmp(value) else {
            return true;
        };
        if ordering.is_gt() || (or_equal && ordering.is_eq()) {
            return true;
        }
        // A truncated max `abc` stands for values such as `abcz`: any value starting with it
        // may still be reached.
        match (&self.upper, value) {
            (Some(Scalar::String(max)), Scalar::String(v)) if self.upper_is_prefix => {
                v.starts_with(max.as_str())
            }
            _ => false,
        }
    }
}

/// A bound moved outwards by how far its writer may have been off (`up` for a maximum):
/// timestamps by 1 ms (millisecond statistics); decimals of 2^50 units or more by over a
/// double's rounding, because writers that keep decimals as doubles (delta-rs) write
/// digits a double does not hold, and no bound at all where such a writer clamped an
/// unscaled value to the i64 range. Other values as they are.
fn widen(value: Scalar, up: bool) -> Option<Scalar> {
    let sign: i64 = if up { 1 } else { -1 };
    Some(match value {
        Scalar::Timestamp(v) => Scalar::Timestamp(v.saturating_add(sign * TIMESTAMP_SLACK_MICROS)),
        Scalar::TimestampNtz(v) => {
            Scalar::TimestampNtz(v.saturating_add(sign * TIMESTAMP_SLACK_MICROS))
        }
        Scalar::Decimal(v, d) if v.unsigned_abs() >= 1 << 50 => {
            if v == i128::from(i64::MAX) || v == i128::from(i64::MIN) {
                return None;
            }
            // Under 2^78: the shift leaves no sign bit to lose.
            let slack = (v.unsigned_abs() >> 50) as i128 + 1;
            Scalar::Decimal(v.saturating_add(i128::from(sign) * slack), d)
        }
        other => other,
    })
}
