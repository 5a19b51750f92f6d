//! [`Expr`]: the typed, unbound filter expression, with its builder functions and its text
//! form.
//!
//! Expressions are built in code (`col("a").eq(lit(3)).and(col("b").is_null())`) or parsed
//! from text ([`super::parse_filter`]); [`fmt::Display`] writes the text syntax back, so that
//! parsing the output gives an expression with the same meaning. An expression names columns
//! by their logical path and is checked against a schema only when bound
//! ([`super::bind`]).

use std::fmt;

use super::scalar::Scalar;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `!=` (also written `<>`)
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 6] = [
        CompareOp::Eq,
        CompareOp::NotEq,
        CompareOp::Lt,
        CompareOp::LtEq,
        CompareOp::Gt,
        CompareOp::GtEq,
    ];

    /// The operator's symbol in the text syntax.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::NotEq => "!=",
            CompareOp::Lt => "<",
            CompareOp::LtEq => "<=",
            CompareOp::Gt => ">",
            CompareOp::GtEq => ">=",
        }
    }

    /// The operator that is true exactly when this one is false (for non-null operands):
    /// `<` gives `>=`.
    pub fn negate(self) -> CompareOp {
        match self {
            CompareOp::Eq => CompareOp::NotEq,
            CompareOp::NotEq => CompareOp::Eq,
            CompareOp::Lt => CompareOp::GtEq,
            CompareOp::LtEq => CompareOp::Gt,
            CompareOp::Gt => CompareOp::LtEq,
            CompareOp::GtEq => CompareOp::Lt,
        }
    }

    /// The operator with its operands swapped: `a < b` is `b > a`.
    pub fn flip(self) -> CompareOp {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::LtEq => CompareOp::GtEq,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::GtEq => CompareOp::LtEq,
            other => other,
        }
    }
}

impl fmt::Display for CompareOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A filter expression over the logical columns of a table.
///
/// Evaluation follows SQL's three-valued logic: a comparison with a null is null, and a row
/// is selected only when the whole expression is true.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// A column, by its path of logical names (`["a", "b"]` is the field `b` of the struct
    /// column `a`).
    Column(Vec<String>),
    /// A constant.
    Literal(Scalar),
    /// `left op right`.
    Compare {
        /// The operator.
        op: CompareOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// True when every operand is (an empty list is true).
    And(Vec<Expr>),
    /// True when any operand is (an empty list is false).
    Or(Vec<Expr>),
    /// Logical negation.
    Not(Box<Expr>),
    /// `expr is null`.
    IsNull(Box<Expr>),
    /// `expr is not null`.
    IsNotNull(Box<Expr>),
    /// `expr [not] in (list...)`.
    In {
        /// The value looked up.
        expr: Box<Expr>,
        /// The values it is compared with.
        list: Vec<Scalar>,
        /// Whether this is `not in`.
        negated: bool,
    },
}

/// The top-level column `name` (not split at dots; see [`column()`] for nested fields).
pub fn col(name: impl Into<String>) -> Expr {
    Expr::Column(vec![name.into()])
}

/// The column at `path`, a list of logical names from the top level down into structs.
pub fn column<I, S>(path: I) -> Expr
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    Expr::Column(path.into_iter().map(Into::into).collect())
}

/// A literal value.
pub fn lit(value: impl Into<Scalar>) -> Expr {
    Expr::Literal(value.into())
}

impl From<Scalar> for Expr {
    fn from(value: Scalar) -> Self {
        Expr::Literal(value)
    }
}

impl Expr {
    /// A comparison `self op other`.
    pub fn compare(self, op: CompareOp, other: impl Into<Expr>) -> Expr {
        Expr::Compare {
            op,
            left: Box::new(self),
            right: Box::new(other.into()),
        }
    }

    /// `self = other`.
    pub fn eq(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::Eq, other)
    }

    /// `self != other`.
    pub fn not_eq(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::NotEq, other)
    }

    /// `self < other`.
    pub fn lt(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::Lt, other)
    }

    /// `self <= other`.
    pub fn lt_eq(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::LtEq, other)
    }

    /// `self > other`.
    pub fn gt(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::Gt, other)
    }

    /// `self >= other`.
    pub fn gt_eq(self, other: impl Into<Expr>) -> Expr {
        self.compare(CompareOp::GtEq, other)
    }

    /// `self between low and high`, that is `self >= low and self <= high`.
    pub fn between(self, low: impl Into<Expr>, high: impl Into<Expr>) -> Expr {
        Expr::And(vec![self.clone().gt_eq(low), self.lt_eq(high)])
    }

    /// `self and other`; nested `and`s are flattened into one list.
    pub fn and(self, other: Expr) -> Expr {
        let mut list = match self {
            Expr::And(list) => list,
            other => vec![other],
        };
        match other {
            Expr::And(more) => list.extend(more),
            other => list.push(other),
        }
        Expr::And(list)
    }

    /// `self or other`; nested `or`s are flattened into one list.
    pub fn or(self, other: Expr) -> Expr {
        let mut list = match self {
            Expr::Or(list) => list,
            other => vec![other],
        };
        match other {
            Expr::Or(more) => list.extend(more),
            other => list.push(other),
        }
        Expr::Or(list)
    }

    /// `self is null`.
    pub fn is_null(self) -> Expr {
        Expr::IsNull(Box::new(self))
    }

    /// `self is not null`.
    pub fn is_not_null(self) -> Expr {
        Expr::IsNotNull(Box::new(self))
    }

    /// `self in (values...)`.
    pub fn in_list<I, V>(self, values: I) -> Expr
    where
        I: IntoIterator<Item = V>,
        V: Into<Scalar>,
    {
        Expr::In {
            expr: Box::new(self),
            list: values.into_iter().map(Into::into).collect(),
            negated: false,
        }
    }

    /// `self not in (values...)`.
    pub fn not_in_list<I, V>(self, values: I) -> Expr
    where
        I: IntoIterator<Item = V>,
        V: Into<Scalar>,
    {
        match self.in_list(values) {
            Expr::In { expr, list, .. } => Expr::In {
                expr,
                list,
                negated: true,
            },
            other => other,
        }
    }

    /// The binding strength of the expression's top operator in the text syntax (higher
    /// binds tighter).
    fn precedence(&self) -> u8 {
        match self {
            Expr::Or(list) if list.len() > 1 => 1,
            Expr::And(list) if list.len() > 1 => 2,
            Expr::Not(_) => 3,
            Expr::Compare { .. } | Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::In { .. } => 4,
            Expr::Or(list) | Expr::And(list) => list.first().map_or(5, Expr::precedence),
            Expr::Column(_) | Expr::Literal(_) => 5,
        }
    }
}

impl std::ops::Not for Expr {
    type Output = Expr;

    /// `not self`.
    fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }
}

/// Writes `expr`, in parentheses when it binds looser than `min`.
fn write_operand(f: &mut fmt::Formatter<'_>, expr: &Expr, min: u8) -> fmt::Result {
    if expr.precedence() < min {
        write!(f, "({expr})")
    } else {
        write!(f, "{expr}")
    }
}

fn write_list(
    f: &mut fmt::Formatter<'_>,
    list: &[Expr],
    keyword: &str,
    min: u8,
    empty: &str,
) -> fmt::Result {
    if list.is_empty() {
        return f.write_str(empty);
    }
    for (i, item) in list.iter().enumerate() {
        if i > 0 {
            write!(f, " {keyword} ")?;
        }
        write_operand(f, item, min)?;
    }
    Ok(())
}

/// Writes a column path, with backticks around names that are not plain identifiers.
pub(crate) fn write_path(f: &mut fmt::Formatter<'_>, path: &[String]) -> fmt::Result {
    for (i, name) in path.iter().enumerate() {
        if i > 0 {
            f.write_str(".")?;
        }
        if is_plain_identifier(name) {
            f.write_str(name)?;
        } else {
            write!(f, "`{}`", name.replace('`', "``"))?;
        }
    }
    Ok(())
}

/// Whether `name` can be written without backticks: letters, digits and `_`, not starting
/// with a digit, and not a keyword of the syntax.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_');
    starts_well && chars.all(|c| c.is_alphanumeric() || c == '_') && !super::lexer::is_keyword(name)
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(path) => write_path(f, path),
            Expr::Literal(value) => write!(f, "{value}"),
            Expr::Compare { op, left, right } => {
                write_operand(f, left, 5)?;
                write!(f, " {op} ")?;
                write_operand(f, right, 5)
            }
            Expr::And(list) => write_list(f, list, "and", 3, "true"),
            Expr::Or(list) => write_list(f, list, "or", 2, "false"),
            Expr::Not(inner) => {
                f.write_str("not ")?;
                write_operand(f, inner, 3)
            }
            Expr::IsNull(inner) => {
                write_operand(f, inner, 5)?;
                f.write_str(" is null")
            }
            Expr::IsNotNull(inner) => {
                write_operand(f, inner, 5)?;
                f.write_str(" is not null")
            }
            Expr::In {
                expr,
                list,
                negated,
            } => {
                write_operand(f, expr, 5)?;
                f.write_str(if *negated { " not in (" } else { " in (" })?;
                for (i, value) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{value}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_and_display() {
        let e = col("country")
            .eq(lit("NL"))
            .and(col("amount").gt_eq(lit(10i64)))
            .and(col("x").is_null().or(col("y").lt(lit(2.5f64))));
        assert_eq!(
            e.to_string(),
            "country = 'NL' and amount >= 10 and (x is null or y < 2.5)"
        );
        assert!(matches!(&e, Expr::And(list) if list.len() == 3));
        let e = !(col("a").lt(lit(3i32)).or(col("b").is_not_null()));
        assert_eq!(e.to_string(), "not (a < 3 or b is not null)");
        let e = !col("a").eq(lit(1i32));
        assert_eq!(e.to_string(), "not a = 1");
        let e = column(["my col", "in.ner"]).in_list([1i64, 2]);
        assert_eq!(e.to_string(), "`my col`.`in.ner` in (1, 2)");
        let e = col("and").not_in_list(["a"]);
        assert_eq!(e.to_string(), "`and` not in ('a')");
        let e = col("d").between(lit(1i32), lit(5i32));
        assert_eq!(e.to_string(), "d >= 1 and d <= 5");
        assert_eq!(Expr::And(vec![]).to_string(), "true");
        assert_eq!(Expr::Or(vec![]).to_string(), "false");
        let e = Expr::Or(vec![col("a").is_null()]).and(col("b").is_null());
        assert_eq!(e.to_string(), "a is null and b is null");
    }

    #[test]
    fn operators() {
        for op in CompareOp::ALL {
            assert_eq!(op.negate().negate(), op);
            assert_eq!(op.flip().flip(), op);
        }
        assert_eq!(CompareOp::Lt.flip(), CompareOp::Gt);
        assert_eq!(CompareOp::Lt.negate(), CompareOp::GtEq);
    }
}
