//! Filter predicates: the expression type, the text filter syntax, binding to a table
//! schema, file skipping with partition values and statistics, and exact row evaluation.
//!
//! Everything here is pure: no I/O, no async, no clock. The path of a filter:
//!
//! ```text
//! text ──parse_filter──► Expr ──bind(schema)──► BoundExpr ─┬─ may_match_file(partition values, FileStats) ─► keep file?
//!  (or built in code: col("a").gt(lit(3)))                 └─ evaluate(RecordBatch) ─► BooleanArray (rows)
//! ```
//!
//! - [`Expr`], [`Scalar`] and the builders [`col`], [`column()`], [`lit`].
//! - [`parse_filter`]: the text syntax (`country = 'NL' and amount >= 10.5`).
//! - [`bind`]: column resolution and literal coercion against the logical schema.
//! - [`FileStats`] and [`StatsColumns`]: a file's statistics (`add.stats` JSON or a
//!   checkpoint's typed `stats_parsed`) read once per file.
//! - [`TypedPartitionValues`]: a file's partition values, parsed once to their types.
//! - `may_match_file` (crate-internal): conservative file skipping.
//! - [`evaluate`]: exact row selection with Arrow kernels; [`BoundExpr::columns`] lists the
//!   columns a predicate reads.
#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

pub(crate) mod bind;
mod coerce;
mod eval;
mod expr;
mod lexer;
mod literal_text;
mod parse;
mod partition_values;
mod scalar;
mod skipping;
mod stats;

#[cfg(test)]
mod eval_tests;
#[cfg(test)]
mod skipping_tests;

// Built in code or parsed from text; bound to a table schema and evaluated on its batches.
pub use bind::{bind, BoundColumn, BoundExpr, BoundLiteral};
pub use eval::evaluate;
pub use expr::{col, column, lit, CompareOp, Expr};
pub use parse::parse_filter;
pub use partition_values::TypedPartitionValues;
pub use scalar::Scalar;

pub(crate) use skipping::may_match_file;
pub use stats::{ColumnStats, FileStats, StatsColumns};
