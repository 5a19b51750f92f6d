//! A table's history, as `DESCRIBE HISTORY` shows it: one [`HistoryEntry`] per commit, from
//! the commit's `commitInfo` (the operation, its parameters and metrics, the engine, the
//! time). Pure: a commit file comes in as bytes.
//!
//! `commitInfo` is free-form in the protocol: it is kept whole, as JSON. A commit without one
//! (some writers leave it out) has an entry all the same, its fields empty.

use serde_json::{Map, Value};

use super::path::commit_path;
use crate::error::{DeltaError, Result};

/// One commit of a table's history.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The commit's version.
    pub version: u64,
    /// When it was committed, ms since the epoch: its in-commit timestamp, else the
    /// `timestamp` its writer recorded; `None` when the commit says neither.
    pub timestamp: Option<i64>,
    /// The operation (`WRITE`, `MERGE`, `DELETE`, `OPTIMIZE`, ...), when recorded.
    pub operation: Option<String>,
    /// The whole `commitInfo` object, when the commit has one.
    pub commit_info: Option<Map<String, Value>>,
}

/// The history entry of the commit file of `version`, whose bytes are `commit`: its first
/// `commitInfo` object. A line before it that is not JSON is an error naming the file, as in
/// a load.
pub fn history_entry(version: u64, commit: &[u8]) -> Result<HistoryEntry> {
    let invalid = |line: usize, reason: String| DeltaError::InvalidLog {
        path: commit_path(version),
        reason: format!("line {line}: {reason}"),
    };
    let mut info: Option<Map<String, Value>> = None;
    for (i, line) in commit.split(|&b| b == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let action: Value =
            serde_json::from_slice(line).map_err(|e| invalid(i + 1, e.to_string()))?;
        if let Some(Value::Object(found)) = action.get("commitInfo") {
            // Writers put it first; the rest of a large commit is not decoded.
            info = Some(found.clone());
            break;
        }
    }
    let number = |name: &str| {
        info.as_ref()
            .and_then(|m| m.get(name))
            .and_then(Value::as_i64)
    };
    Ok(HistoryEntry {
        version,
        timestamp: number("inCommitTimestamp").or_else(|| number("timestamp")),
        operation: info
            .as_ref()
            .and_then(|m| m.get("operation"))
            .and_then(Value::as_str)
            .map(str::to_string),
        commit_info: info,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_commit_info_of_a_commit() {
        let commit = br#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","operationParameters":{"mode":"Append"},"engineInfo":"x"}}
{"add":{"path":"a.parquet","size":1,"modificationTime":1,"dataChange":true,"partitionValues":{}}}
"#;
        let e = history_entry(3, commit).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.version, 3);
        assert_eq!(e.timestamp, Some(1_700_000_000_000));
        assert_eq!(e.operation.as_deref(), Some("WRITE"));
        let info = e.commit_info.unwrap_or_default();
        assert_eq!(info["operationParameters"]["mode"], "Append");
    }

    #[test]
    fn prefers_the_in_commit_timestamp_and_tolerates_odd_commit_infos() {
        let ict = br#"{"commitInfo":{"timestamp":1,"inCommitTimestamp":2,"operation":7}}"#;
        let e = history_entry(0, ict).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((e.timestamp, e.operation), (Some(2), None));
        let none = br#"{"add":{"path":"a","size":1,"modificationTime":1,"dataChange":true,"partitionValues":{}}}"#;
        let e = history_entry(1, none).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((e.timestamp, e.commit_info), (None, None));
        let odd = br#"{"commitInfo":"a string"}"#;
        let e = history_entry(2, odd).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.commit_info, None);
    }

    #[test]
    fn a_line_that_is_not_json_names_the_file() {
        let e = history_entry(5, b"not json\n{\"commitInfo\":{}}\n").err();
        let e = e.unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.code(), "invalid_log");
        assert!(e.to_string().contains("00000000000000000005.json"), "{e}");
    }
}
