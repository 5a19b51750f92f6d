//! The limits that hold hostile input to bounded memory, stack and time, in one place.
//!
//! Counts and sizes a file declares are checked before they size an allocation; parsers of
//! nested text stop at a depth. Every limit fails the same way, with
//! [`DeltaError::LimitExceeded`](crate::DeltaError::LimitExceeded) (code `limit_exceeded`),
//! which names the limit, the value found, the maximum and the file.
//!
//! | Limit | Default | Option |
//! |---|---|---|
//! | Uncompressed size of one Parquet page (data files and checkpoints) | [`DEFAULT_MAX_PAGE_BYTES`] (256 MiB) | `DeltaScanExecutionOptions::max_page_bytes` (data files) |
//! | Uncompressed size of a page against its column chunk's declared total | the chunk's total | none: a file's own sizes |
//! | Values of a dictionary page against what its uncompressed bytes can hold | the page's size ÷ the value's width | none: a file's own sizes |
//! | Nesting of a filter (parentheses and `not`s) | [`MAX_FILTER_DEPTH`] | none |
//! | Nesting of JSON: commit lines, `schemaString` | [`MAX_JSON_DEPTH`] (`serde_json`'s own) | none |
//! | Length of one line of a commit or JSON checkpoint | [`MAX_LOG_LINE_BYTES`] (64 MiB) | none |
//! | Declared size of a deletion vector, against its cardinality | 64 + 40 bytes per deleted row | none: a file's own sizes |
//! | Declared size of a deletion vector | [`MAX_DELETION_VECTOR_BYTES`] (512 MiB) | none |
//! | Commits one load replays after its checkpoint | [`DEFAULT_MAX_COMMITS_PER_LOAD`] (100,000) | `DeltaTableBuilder::with_max_commits` |
//! | A data page's values (a flat column) and a V2 page's rows, against its row group's rows | the row group's rows | none: a file's own sizes |
//!
//! Where a decoder's panic cannot be contained (wasm32), page contents are also checked
//! decompressed and map columns are decoded from their Parquet groups
//! (the modules `decoder_panics` and `map_groups`).
//!
//! A Delta schema nests through its JSON: a nested struct takes three JSON levels (field,
//! type, fields list), so [`MAX_JSON_DEPTH`] allows about 40 levels of structs in structs.

#![deny(clippy::disallowed_methods, clippy::disallowed_types)] // see clippy.toml

pub(crate) mod decoder_panics;
pub(crate) mod json_depth;
pub(crate) mod map_groups;
mod page_codecs;
pub(crate) mod page_contents;
mod page_header;
pub(crate) mod pages;
pub(crate) mod parquet_tail;
mod snappy_prefix;
pub(crate) mod thrift;

pub use decoder_panics::{behave_as_aborting, quiet_contained_panics};

/// Default of the largest uncompressed size of one Parquet page: 256 MiB. Writers cut pages
/// at about 1 MiB; a page holding one huge binary value can be larger.
pub const DEFAULT_MAX_PAGE_BYTES: u64 = 256 << 20;

/// Largest `add.size` a data file may declare: 2^44 bytes (16 TiB), hundreds of times the
/// largest Parquet files seen in practice. A larger size is a corrupt log: a reader that
/// believed it would plan billions of byte ranges before reading a byte.
pub const MAX_DATA_FILE_BYTES: u64 = 1 << 44;

/// Most rows of a data file whose deletion vector one commit changed, read as a change data
/// feed: 2^32. The rows read are every row but the changed ones, kept as a bitmap of the
/// file's rows (a few MiB at this bound); a footer claiming more is refused before it is built.
pub const MAX_CHANGED_FILE_ROWS: u64 = 1 << 32;

/// Deepest nesting of a text filter: parentheses and `not`s together.
pub const MAX_FILTER_DEPTH: usize = 128;

/// Longest line of a commit file (or a JSON checkpoint): 64 MiB. One action is one line; the
/// largest real ones (an `add` with statistics of thousands of columns, a `metaData` with
/// a wide schema) are a few MiB.
pub const MAX_LOG_LINE_BYTES: usize = 64 << 20;

/// Largest declared size of one deletion vector: 512 MiB, twice the vector of every row of a
/// file of 2^31 rows stored as bitmaps.
pub const MAX_DELETION_VECTOR_BYTES: u64 = 512 << 20;

/// Default of the most commits one load replays after its checkpoint (or from version 0):
/// 100,000. Writers checkpoint every 10 to 100 commits; a log of more commits without one
/// takes minutes to replay over a network, and a store that answers every path (a web server
/// with a fallback page) would otherwise be probed without end. Raise it with
/// `DeltaTableBuilder::with_max_commits` (`--max-commits N` in `dar`).
pub const DEFAULT_MAX_COMMITS_PER_LOAD: u64 = 100_000;

/// Deepest nesting of JSON arrays and objects in a log line or a schema string: 127, the
/// recursion limit `serde_json` keeps on (this crate never enables its `unbounded_depth`).
pub const MAX_JSON_DEPTH: usize = 127;
