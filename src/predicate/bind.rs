//! Binding: an [`Expr`] checked against a table's logical schema, giving a [`BoundExpr`]
//! whose columns are resolved and whose literals have the column's type.
//!
//! Columns are matched by exact name, then ignoring case; an unknown name is an error that
//! lists close names. Literals are coerced to the column type ([`super::coerce`]); a
//! literal that falls between two values of the type becomes an exact comparison
//! (`byte_col < 300` is `byte_col <= 127`). Comparisons with a null literal are null. A bare
//! boolean column is the predicate `column = true`. Trivial `and`/`or` operands (`true`,
//! `false`) are folded away.

use std::collections::HashSet;
use std::fmt;

use arrow_array::ArrayRef;

use super::coerce::{coerce, Coerced};
use super::expr::{CompareOp, Expr};
use super::scalar::Scalar;
use crate::error::{DeltaError, Result};
use crate::schema::{DataType, PrimitiveType, StructField, StructType};

/// A column resolved in the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundColumn {
    /// The logical names from the top level down, as the schema spells them.
    pub path: Vec<String>,
    /// The column's type.
    pub data_type: DataType,
    /// Whether the column (or a struct on its path) may be null.
    pub nullable: bool,
}

impl BoundColumn {
    /// The primitive type of the column, if it is primitive.
    pub fn primitive(&self) -> Option<&PrimitiveType> {
        self.data_type.as_primitive()
    }

    /// The dotted path, with backticks where a name needs them.
    pub fn display_path(&self) -> String {
        Expr::Column(self.path.clone()).to_string()
    }
}

/// A literal of a column's type, with its length-1 Arrow array for the comparison kernels.
#[derive(Debug, Clone)]
pub struct BoundLiteral {
    /// The value, of the column's type.
    pub value: Scalar,
    /// The value as a length-1 array of the column's Arrow type.
    pub array: ArrayRef,
}

impl BoundLiteral {
    /// A literal with its array.
    pub fn new(value: Scalar) -> Result<Self> {
        let array = value.to_array()?;
        Ok(BoundLiteral { value, array })
    }
}

impl PartialEq for BoundLiteral {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// A predicate bound to a schema: ready for file skipping
/// (`may_match_file`) and row evaluation ([`super::evaluate`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BoundExpr {
    /// A constant: true, false or null.
    Const(Option<bool>),
    /// `column op value`; the value is never null.
    Compare {
        /// The column.
        column: BoundColumn,
        /// The operator.
        op: CompareOp,
        /// The value, of the column's type.
        value: BoundLiteral,
    },
    /// `left op right` between two columns, compared in type `common`.
    CompareColumns {
        /// The left column.
        left: BoundColumn,
        /// The operator.
        op: CompareOp,
        /// The right column.
        right: BoundColumn,
        /// The type both sides are cast to.
        common: PrimitiveType,
    },
    /// `column [not] in (values...)`.
    In {
        /// The column.
        column: BoundColumn,
        /// The non-null values, of the column's type.
        values: Vec<BoundLiteral>,
        /// Whether the list also held a null (then `not in` is never true).
        has_null: bool,
        /// Whether this is `not in`.
        negated: bool,
    },
    /// `column is null`.
    IsNull(BoundColumn),
    /// `column is not null`.
    IsNotNull(BoundColumn),
    /// All operands true.
    And(Vec<BoundExpr>),
    /// Any operand true.
    Or(Vec<BoundExpr>),
    /// Negation (three-valued: `not null` is null).
    Not(Box<BoundExpr>),
}

impl Expr {
    /// Binds this expression to a table's logical schema; see [`bind`].
    pub fn bind(&self, schema: &StructType) -> Result<BoundExpr> {
        bind(self, schema)
    }
}

/// Binds `expr` to a table's logical `schema`: resolves columns and coerces literals to
/// their column types. Unknown columns, type mismatches and non-boolean filters are
/// [`DeltaError::InvalidArgument`] errors.
pub fn bind(expr: &Expr, schema: &StructType) -> Result<BoundExpr> {
    Ok(match expr {
        Expr::Column(path) => {
            let column = resolve(path, schema)?;
            match column.primitive() {
                Some(PrimitiveType::Boolean) => BoundExpr::Compare {
                    column,
                    op: CompareOp::Eq,
                    value: BoundLiteral::new(Scalar::Boolean(true))?,
                },
                _ => {
                    return Err(invalid(format!(
                        "column {} ({}) is not a boolean and cannot be a filter on its own; \
                         compare it with a value, as in {} = ...",
                        column.display_path(),
                        column.data_type,
                        column.display_path()
                    )))
                }
            }
        }
        Expr::Literal(Scalar::Boolean(b)) => BoundExpr::Const(Some(*b)),
        Expr::Literal(Scalar::Null(_)) => BoundExpr::Const(None),
        Expr::Literal(other) => {
            return Err(invalid(format!(
                "the value {other} is not a boolean and cannot be a filter on its own"
            )))
        }
        Expr::Compare { op, left, right } => bind_compare(*op, left, right, schema)?,
        Expr::And(list) => and_of(
            list.iter()
                .map(|e| bind(e, schema))
                .collect::<Result<Vec<_>>>()?,
        ),
        Expr::Or(list) => or_of(
            list.iter()
                .map(|e| bind(e, schema))
                .collect::<Result<Vec<_>>>()?,
        ),
        Expr::Not(inner) => match bind(inner, schema)? {
            BoundExpr::Const(v) => BoundExpr::Const(v.map(|b| !b)),
            other => BoundExpr::Not(Box::new(other)),
        },
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
            let want_null = matches!(expr, Expr::IsNull(_));
            match inner.as_ref() {
                Expr::Column(path) => {
                    let column = resolve(path, schema)?;
                    if want_null {
                        BoundExpr::IsNull(column)
                    } else {
                        BoundExpr::IsNotNull(column)
                    }
                }
                Expr::Literal(value) => BoundExpr::Const(Some(value.is_null() == want_null)),
                other => {
                    return Err(invalid(format!(
                        "'is null' applies to a column, not to ({other})"
                    )))
                }
            }
        }
        Expr::In {
            expr,
            list,
            negated,
        } => bind_in(expr, list, *negated, schema)?,
    })
}

fn bind_compare(
    op: CompareOp,
    left: &Expr,
    right: &Expr,
    schema: &StructType,
) -> Result<BoundExpr> {
    match (left, right) {
        (Expr::Column(path), Expr::Literal(value)) => {
            compare_literal(resolve(path, schema)?, op, value)
        }
        (Expr::Literal(value), Expr::Column(path)) => {
            compare_literal(resolve(path, schema)?, op.flip(), value)
        }
        (Expr::Column(l), Expr::Column(r)) => {
            compare_columns(resolve(l, schema)?, op, resolve(r, schema)?)
        }
        (Expr::Literal(l), Expr::Literal(r)) => compare_constants(l, op, r),
        (l, r) => {
            let odd = if matches!(l, Expr::Column(_) | Expr::Literal(_)) {
                r
            } else {
                l
            };
            Err(invalid(format!(
                "a comparison takes a column or a value on each side, found ({odd})"
            )))
        }
    }
}

/// `column op value`, with `value` coerced to the column type.
fn compare_literal(column: BoundColumn, op: CompareOp, value: &Scalar) -> Result<BoundExpr> {
    let ty = comparable_type(&column)?;
    if value.is_null() || ty == PrimitiveType::Void {
        return Ok(BoundExpr::Const(None));
    }
    let coerced = coerce(value, &ty).ok_or_else(|| mismatch(&column, value))?;
    Ok(match coerced {
        Coerced::Exact(v) => compare(column, op, v)?,
        Coerced::Above(floor) => match op {
            CompareOp::Lt | CompareOp::LtEq => compare(column, CompareOp::LtEq, floor)?,
            CompareOp::Gt | CompareOp::GtEq => compare(column, CompareOp::Gt, floor)?,
            CompareOp::Eq => never(column),
            CompareOp::NotEq => unless_null(column),
        },
        Coerced::BelowAll => match op {
            CompareOp::Lt | CompareOp::LtEq | CompareOp::Eq => never(column),
            CompareOp::Gt | CompareOp::GtEq | CompareOp::NotEq => unless_null(column),
        },
    })
}

fn compare(column: BoundColumn, op: CompareOp, value: Scalar) -> Result<BoundExpr> {
    Ok(BoundExpr::Compare {
        column,
        op,
        value: BoundLiteral::new(value)?,
    })
}

/// False for every non-null value of `column`, null for a null one.
fn never(column: BoundColumn) -> BoundExpr {
    BoundExpr::And(vec![BoundExpr::IsNull(column), BoundExpr::Const(None)])
}

/// True for every non-null value of `column`, null for a null one.
fn unless_null(column: BoundColumn) -> BoundExpr {
    BoundExpr::Or(vec![BoundExpr::IsNotNull(column), BoundExpr::Const(None)])
}

fn bind_in(expr: &Expr, list: &[Scalar], negated: bool, schema: &StructType) -> Result<BoundExpr> {
    let Expr::Column(path) = expr else {
        return Err(invalid(format!(
            "'in' applies to a column, not to ({expr})"
        )));
    };
    let column = resolve(path, schema)?;
    let ty = comparable_type(&column)?;
    if ty == PrimitiveType::Void {
        return Ok(BoundExpr::Const(None));
    }
    let mut values: Vec<BoundLiteral> = Vec::new();
    // Repeated values are kept once, found by their key (the values all have the column's
    // type by then): a list of 100,000 values binds in linear time, not quadratic.
    let mut seen: HashSet<String> = HashSet::new();
    let mut has_null = false;
    for value in list {
        if value.is_null() {
            has_null = true;
            continue;
        }
        // A value the column cannot hold equals no row: it is left out.
        if let Coerced::Exact(v) = coerce(value, &ty).ok_or_else(|| mismatch(&column, value))? {
            if seen.insert(v.set_key()) {
                values.push(BoundLiteral::new(v)?);
            }
        }
    }
    Ok(match (values.is_empty(), has_null, negated) {
        (true, true, _) => BoundExpr::Const(None),
        (true, false, false) => never(column),
        (true, false, true) => unless_null(column),
        _ => BoundExpr::In {
            column,
            values,
            has_null,
            negated,
        },
    })
}

fn compare_columns(left: BoundColumn, op: CompareOp, right: BoundColumn) -> Result<BoundExpr> {
    let (l, r) = (comparable_type(&left)?, comparable_type(&right)?);
    if l == PrimitiveType::Void || r == PrimitiveType::Void {
        return Ok(BoundExpr::Const(None));
    }
    let common = common_type(l, r).ok_or_else(|| {
        invalid(format!(
            "cannot compare column {} ({l}) with column {} ({r})",
            left.display_path(),
            right.display_path()
        ))
    })?;
    Ok(BoundExpr::CompareColumns {
        left,
        op,
        right,
        common,
    })
}

/// The type two column types are compared in.
fn common_type(l: PrimitiveType, r: PrimitiveType) -> Option<PrimitiveType> {
    use PrimitiveType as P;
    let integer = |t: P| matches!(t, P::Byte | P::Short | P::Integer | P::Long);
    let float = |t: P| matches!(t, P::Float | P::Double);
    if l == r {
        Some(l)
    } else if integer(l) && integer(r) {
        Some(P::Long)
    } else if (integer(l) || float(l)) && (integer(r) || float(r)) {
        Some(P::Double)
    } else if matches!(
        (l, r),
        (P::Timestamp, P::TimestampNtz) | (P::TimestampNtz, P::Timestamp)
    ) {
        Some(P::Timestamp)
    } else {
        None
    }
}

/// A comparison of two constants, folded.
fn compare_constants(left: &Scalar, op: CompareOp, right: &Scalar) -> Result<BoundExpr> {
    if left.is_null() || right.is_null() {
        return Ok(BoundExpr::Const(None));
    }
    let bad = || {
        invalid(format!(
            "cannot compare {left} with {right}: the types differ"
        ))
    };
    let ordering = match coerce(right, &left.data_type()).ok_or_else(bad)? {
        Coerced::Exact(r) => left.compare(&r).ok_or_else(bad)?,
        // `right` lies strictly between `floor` and the next value, so differs from `left`.
        Coerced::Above(floor) => match left.compare(&floor).ok_or_else(bad)? {
            std::cmp::Ordering::Greater => std::cmp::Ordering::Greater,
            _ => std::cmp::Ordering::Less,
        },
        Coerced::BelowAll => std::cmp::Ordering::Greater,
    };
    Ok(BoundExpr::Const(Some(op_holds(op, ordering))))
}

/// Whether `a op b` holds when `a` compares to `b` as `ordering`.
pub(crate) fn op_holds(op: CompareOp, ordering: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CompareOp::Eq => ordering == Equal,
        CompareOp::NotEq => ordering != Equal,
        CompareOp::Lt => ordering == Less,
        CompareOp::LtEq => ordering != Greater,
        CompareOp::Gt => ordering == Greater,
        CompareOp::GtEq => ordering != Less,
    }
}

/// The primitive type of a column that is compared with something.
fn comparable_type(column: &BoundColumn) -> Result<PrimitiveType> {
    match column.primitive() {
        Some(PrimitiveType::Variant) | None => Err(invalid(format!(
            "cannot compare column {} ({}): only columns of primitive types can be compared",
            column.display_path(),
            column.data_type
        ))),
        Some(ty) => Ok(*ty),
    }
}

fn mismatch(column: &BoundColumn, value: &Scalar) -> DeltaError {
    invalid(format!(
        "cannot compare column {} ({}) with {value}",
        column.display_path(),
        column.data_type
    ))
}

/// `and` of bound operands: `true` operands dropped, a `false` operand wins, nested `and`s
/// flattened.
pub(crate) fn and_of(list: Vec<BoundExpr>) -> BoundExpr {
    let mut out = Vec::with_capacity(list.len());
    for e in list {
        match e {
            BoundExpr::Const(Some(true)) => {}
            BoundExpr::Const(Some(false)) => return BoundExpr::Const(Some(false)),
            BoundExpr::And(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    match out.len() {
        0 => BoundExpr::Const(Some(true)),
        1 => out.pop().unwrap_or(BoundExpr::Const(Some(true))),
        _ => BoundExpr::And(out),
    }
}

/// `or` of bound operands: `false` operands dropped, a `true` operand wins, nested `or`s
/// flattened.
pub(crate) fn or_of(list: Vec<BoundExpr>) -> BoundExpr {
    let mut out = Vec::with_capacity(list.len());
    for e in list {
        match e {
            BoundExpr::Const(Some(false)) => {}
            BoundExpr::Const(Some(true)) => return BoundExpr::Const(Some(true)),
            BoundExpr::Or(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    match out.len() {
        0 => BoundExpr::Const(Some(false)),
        1 => out.pop().unwrap_or(BoundExpr::Const(Some(false))),
        _ => BoundExpr::Or(out),
    }
}

/// Resolves a column path: each name matched exactly, then ignoring case.
fn resolve(path: &[String], schema: &StructType) -> Result<BoundColumn> {
    let mut resolved = Vec::with_capacity(path.len());
    let mut current = schema;
    let mut nullable = false;
    let mut field: Option<&StructField> = None;
    for name in path {
        if let Some(parent) = field {
            current = match &parent.data_type {
                DataType::Struct(s) => s,
                other => {
                    return Err(invalid(format!(
                        "column {} ({other}) is not a struct and has no field '{name}'",
                        Expr::Column(resolved.clone())
                    )))
                }
            };
        }
        let found = current
            .field(name)
            .ok_or_else(|| unknown_column(&resolved, name, current))?;
        nullable |= found.nullable;
        resolved.push(found.name.clone());
        field = Some(found);
    }
    let field = field.ok_or_else(|| invalid("empty column path"))?;
    Ok(BoundColumn {
        path: resolved,
        data_type: field.data_type.clone(),
        nullable,
    })
}

pub(crate) fn unknown_column(parent: &[String], name: &str, within: &StructType) -> DeltaError {
    let what = if parent.is_empty() {
        format!("unknown column '{name}'")
    } else {
        format!(
            "struct column {} has no field '{name}'",
            Expr::Column(parent.to_vec())
        )
    };
    let target = name.to_lowercase();
    let mut close: Vec<(usize, &str)> = within
        .field_names()
        .map(|n| (edit_distance(&target, &n.to_lowercase()), n))
        .filter(|(d, n)| {
            let n = n.to_lowercase();
            *d <= 2.max(target.chars().count() / 3)
                || (target.len() >= 3 && n.contains(&target))
                || (n.len() >= 3 && target.contains(&n))
        })
        .collect();
    close.sort();
    let quote = |names: Vec<&str>| {
        names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !close.is_empty() {
        let names = close.into_iter().take(5).map(|(_, n)| n).collect();
        return invalid(format!("{what}; did you mean {}?", quote(names)));
    }
    let names: Vec<&str> = within.field_names().take(20).collect();
    let more = if within.len() > 20 { ", ..." } else { "" };
    invalid(format!("{what}; the columns are {}{more}", quote(names)))
}

/// Levenshtein distance between two strings, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let left = row.get(j).copied().unwrap_or(usize::MAX);
            let cost = diagonal + usize::from(ca != *cb);
            diagonal = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = cost
                    .min(above.saturating_add(1))
                    .min(left.saturating_add(1));
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

fn invalid(reason: impl Into<String>) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: reason.into(),
    }
}

impl BoundExpr {
    /// The expression in unbound form (column paths and typed literals), e.g. to print it.
    pub fn to_expr(&self) -> Expr {
        let column = |c: &BoundColumn| Expr::Column(c.path.clone());
        match self {
            BoundExpr::Const(Some(b)) => Expr::Literal(Scalar::Boolean(*b)),
            BoundExpr::Const(None) => Expr::Literal(Scalar::Null(PrimitiveType::Void)),
            BoundExpr::Compare {
                column: c,
                op,
                value,
            } => column(c).compare(*op, Expr::Literal(value.value.clone())),
            BoundExpr::CompareColumns {
                left, op, right, ..
            } => column(left).compare(*op, column(right)),
            BoundExpr::In {
                column: c,
                values,
                has_null,
                negated,
            } => {
                let mut list: Vec<Scalar> = values.iter().map(|v| v.value.clone()).collect();
                if *has_null {
                    list.push(Scalar::Null(PrimitiveType::Void));
                }
                Expr::In {
                    expr: Box::new(column(c)),
                    list,
                    negated: *negated,
                }
            }
            BoundExpr::IsNull(c) => column(c).is_null(),
            BoundExpr::IsNotNull(c) => column(c).is_not_null(),
            BoundExpr::And(list) => Expr::And(list.iter().map(BoundExpr::to_expr).collect()),
            BoundExpr::Or(list) => Expr::Or(list.iter().map(BoundExpr::to_expr).collect()),
            BoundExpr::Not(inner) => !inner.to_expr(),
        }
    }
}

impl fmt::Display for BoundExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_expr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicate::parse_filter;

    fn schema() -> Result<StructType> {
        Ok(StructType::new([
            StructField::new("country", PrimitiveType::String, true),
            StructField::new("amount", PrimitiveType::decimal(10, 2)?, true),
            StructField::new("day", PrimitiveType::Date, true),
            StructField::new("ts", PrimitiveType::Timestamp, true),
            StructField::new("id", PrimitiveType::Long, false),
            StructField::new("small", PrimitiveType::Byte, true),
            StructField::new("score", PrimitiveType::Double, true),
            StructField::new("active", PrimitiveType::Boolean, true),
            StructField::new("Mixed Case", PrimitiveType::Integer, true),
            StructField::new(
                "s",
                StructType::new([StructField::new("inner", PrimitiveType::Long, true)]),
                true,
            ),
            StructField::new("tags", DataType::array(PrimitiveType::String, true), true),
        ]))
    }

    fn bound(text: &str) -> String {
        let result = schema().and_then(|s| parse_filter(text)?.bind(&s));
        match result {
            Ok(b) => b.to_string(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn coerces_literals() {
        assert_eq!(bound("amount >= 10.5"), "amount >= 10.50");
        assert_eq!(bound("amount = 3"), "amount = 3.00");
        assert_eq!(bound("amount > '7.125'"), "amount > 7.12");
        assert_eq!(bound("day = '2024-01-01'"), "day = date '2024-01-01'");
        assert_eq!(
            bound("day between '2024-01-01' and '2024-01-31'"),
            "day >= date '2024-01-01' and day <= date '2024-01-31'"
        );
        assert_eq!(
            bound("ts >= '2024-01-01'"),
            "ts >= timestamp '2024-01-01 00:00:00Z'"
        );
        assert_eq!(bound("id = 7"), "id = 7");
        assert_eq!(bound("7 < id"), "id > 7");
        assert_eq!(bound("score < 1"), "score < 1.0");
        assert_eq!(bound("small < 300"), "small <= 127");
        assert_eq!(bound("small = 300"), "small is null and null");
        assert_eq!(bound("small != -300"), "small is not null or null");
        assert_eq!(bound("id > 2.5"), "id > 2");
        assert_eq!(bound("id in (1, 2.5, 1, null)"), "id in (1, null)");
        assert_eq!(bound("id in (2.5)"), "id is null and null");
        assert_eq!(bound("id = null"), "null");
        assert_eq!(bound("active"), "active = true");
        assert_eq!(bound("not active and true"), "not active = true");
        assert_eq!(bound("id = 1 or 1 = 1"), "true");
        assert_eq!(bound("1 < 0.5 or id is null"), "id is null");
        assert_eq!(bound("COUNTRY = 'NL'"), "country = 'NL'");
        assert_eq!(bound("`mixed case` = 1"), "`Mixed Case` = 1");
        assert_eq!(bound("S.Inner > 1"), "s.inner > 1");
        assert_eq!(bound("id = small"), "id = small");
        assert_eq!(bound("tags is not null"), "tags is not null");
        assert_eq!(bound("null is null"), "true");
    }

    #[test]
    fn explains_errors() {
        assert_eq!(
            bound("amount = 'abc'"),
            "invalid argument: cannot compare column amount (decimal(10,2)) with 'abc'"
        );
        assert_eq!(
            bound("amout > 1"),
            "invalid argument: unknown column 'amout'; did you mean 'amount'?"
        );
        assert!(bound("zzzzzz = 1").contains("the columns are 'country', 'amount'"));
        assert!(bound("s.nope = 1")
            .contains("struct column s has no field 'nope'; the columns are 'inner'"));
        assert!(bound("id.x = 1").contains("column id (long) is not a struct"));
        assert!(bound("country = 1").contains("cannot compare column country (string) with 1"));
        assert!(bound("day = 'soon'").contains("cannot compare column day (date) with 'soon'"));
        assert!(bound("tags = 'a'").contains("only columns of primitive types"));
        assert!(bound("id").contains("column id (long) is not a boolean"));
        assert!(bound("5").contains("the value 5 is not a boolean"));
        assert!(bound("id = country")
            .contains("cannot compare column id (long) with column country (string)"));
        assert!(bound("(id = 1) = true").contains("a comparison takes a column or a value"));
        assert!(bound("'a' = 1").contains("cannot compare 'a' with 1"));
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }
}
