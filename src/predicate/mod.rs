//! Filter predicates: the expression type, the text filter syntax, binding to a table schema,
//! file skipping with partition values and statistics, and exact row evaluation.

mod expr;
mod lexer;
mod literal_text;
mod parse;
mod scalar;

pub use expr::{col, column, lit, CompareOp, Expr};
pub use parse::parse_filter;
pub use scalar::Scalar;
