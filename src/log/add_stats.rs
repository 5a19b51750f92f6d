//! [`AddStats`]: a data file's statistics as the log holds them. A commit's `add.stats` is a
//! JSON string; a checkpoint may carry the same statistics as a typed struct
//! (`add.stats_parsed`), which is kept as it is, a row of the checkpoint's Arrow column, and
//! read typed by file skipping (`predicate::FileStats::from_add`) without a detour through
//! JSON text. The JSON form of parsed statistics is written only when something asks for the
//! protocol's text (serialising the action, `dar files --json`).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, StructArray};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The statistics of one data file.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum AddStats {
    /// The `stats` JSON string (`numRecords`, `minValues`, `maxValues`, `nullCount`,
    /// `tightBounds`).
    Json(String),
    /// A checkpoint's `stats_parsed` struct, typed.
    Parsed(ParsedStats),
}

impl AddStats {
    /// The statistics as the protocol's JSON text; `None` when parsed statistics have no
    /// JSON form (their row is null).
    pub fn json(&self) -> Option<Cow<'_, str>> {
        match self {
            AddStats::Json(s) => Some(Cow::Borrowed(s)),
            AddStats::Parsed(p) => p.to_json().map(Cow::Owned),
        }
    }

    /// `numRecords`, when present and not negative.
    pub fn num_records(&self) -> Option<u64> {
        match self {
            AddStats::Json(s) => {
                #[derive(Deserialize)]
                struct Counts {
                    #[serde(rename = "numRecords")]
                    num_records: Option<u64>,
                }
                serde_json::from_str::<Counts>(s).ok()?.num_records
            }
            AddStats::Parsed(p) => p.num_records(),
        }
    }
}

impl fmt::Debug for AddStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddStats::Json(s) => f.debug_tuple("Json").field(s).finish(),
            AddStats::Parsed(p) => f.debug_tuple("Parsed").field(&p.to_json()).finish(),
        }
    }
}

impl From<String> for AddStats {
    fn from(json: String) -> Self {
        AddStats::Json(json)
    }
}

impl From<&str> for AddStats {
    fn from(json: &str) -> Self {
        AddStats::Json(json.to_string())
    }
}

impl Serialize for AddStats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.json() {
            Some(text) => serializer.serialize_str(&text),
            None => serializer.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for AddStats {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(AddStats::Json)
    }
}

/// One row of a checkpoint's `add.stats_parsed` column (a struct of `numRecords`,
/// `minValues`, `maxValues`, `nullCount` and `tightBounds`, keyed by physical column names).
/// Clones share the column.
#[derive(Clone)]
pub struct ParsedStats {
    column: Arc<StructArray>,
    row: usize,
}

impl ParsedStats {
    /// Row `row` of `column`; `None` when the row is out of bounds or null.
    pub fn new(column: Arc<StructArray>, row: usize) -> Option<Self> {
        (row < column.len() && column.is_valid(row)).then_some(ParsedStats { column, row })
    }

    /// The `stats_parsed` column and the row of this file in it.
    pub fn row(&self) -> (&StructArray, usize) {
        (&self.column, self.row)
    }

    /// The named field of the struct (`numRecords`, `minValues`, …) if present.
    pub fn field(&self, name: &str) -> Option<&Arc<dyn Array>> {
        self.column.column_by_name(name)
    }

    /// `numRecords`, when present, not null and not negative.
    pub fn num_records(&self) -> Option<u64> {
        let array = self.field("numRecords")?;
        if array.is_null(self.row) {
            return None;
        }
        let n = arrow_array::cast::AsArray::as_primitive_opt::<arrow_array::types::Int64Type>(
            array.as_ref(),
        )?
        .value(self.row);
        u64::try_from(n).ok()
    }

    /// The statistics as the protocol's JSON text, as a writer would have put them in
    /// `add.stats`.
    pub fn to_json(&self) -> Option<String> {
        super::checkpoint::stats_json(&self.column, self.row)
    }
}

impl PartialEq for ParsedStats {
    fn eq(&self, other: &Self) -> bool {
        self.column.slice(self.row, 1) == other.column.slice(other.row, 1)
    }
}

impl fmt::Debug for ParsedStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParsedStats")
            .field("row", &self.row)
            .field("json", &self.to_json())
            .finish()
    }
}
