//! Entry points for the coverage-guided fuzz targets in `fuzz/` (feature `fuzzing`).
//!
//! Each function takes the fuzzer's bytes, drives one parser or the whole read path with
//! them, and returns nothing: an error is a correct answer to bad input, a panic, a hang or
//! an allocation past the fuzzer's memory limit is a finding. Where an answer can be checked
//! without an oracle (a decoded deletion vector holds its declared cardinality, a scan
//! returns the table's schema and no more rows than the file holds), it is checked here and
//! a wrong answer panics, so that the fuzzer reports it too.
//!
//! Not part of the reader's API: the module exists only for `fuzz/` and its seed maker.

#[cfg(test)]
mod regressions;
mod scan;

pub use scan::{parquet_scan, scan_table, FUZZ_TABLE_SCHEMA};

use crate::log::{decode_commit_actions, DeletionVectorDescriptor, LoadScope};
use crate::read::deletion_vector::{decode_file_range, decode_inline};

/// Run once in each fuzzing process, on the thread that runs the inputs, before the first
/// one. A decoder's panic that the readers contain
/// ([`crate::limits::quiet_contained_panics`]) is then the typed error a user gets, not a
/// finding. With `DAR_FUZZ_STRICT` set the thread behaves as the wasm32 build, which aborts
/// on panic ([`crate::limits::behave_as_aborting`]): page contents are checked decompressed,
/// and a decoder's panic that gets past the checks is a finding.
pub fn init() {
    if std::env::var_os("DAR_FUZZ_STRICT").is_some() {
        crate::limits::behave_as_aborting(true);
    } else {
        crate::limits::quiet_contained_panics();
    }
}

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target by name (the name of its binary in `fuzz/` and of its seed and regression
/// folders).
pub const TARGETS: [(&str, Target); 7] = [
    ("commit_json", commit_json),
    ("last_checkpoint", last_checkpoint),
    ("checkpoint_parquet", checkpoint_parquet),
    ("deletion_vector", deletion_vector),
    ("filter", filter),
    ("schema", schema),
    ("parquet_scan", parquet_scan),
];

/// A commit file: decoded as the loader decodes commits, in both load scopes, and as the
/// change data feed reads a commit (whose files are all change data files or none is).
pub fn commit_json(data: &[u8]) {
    let path = "_delta_log/00000000000000000000.json";
    let all = decode_commit_actions(path, data, LoadScope::ActiveFiles);
    let table_only = decode_commit_actions(path, data, LoadScope::TableOnly);
    // A commit accepted whole is accepted when only protocol and metadata are wanted.
    if all.is_ok() {
        assert!(
            table_only.is_ok(),
            "accepted whole, refused in TableOnly scope"
        );
    }
    commit_changes(data);
}

/// The change data feed's reading of a commit: a commit with a change data file is read from
/// those alone.
fn commit_changes(data: &[u8]) {
    use crate::log::ChangedRows;
    if let Ok(c) = crate::log::commit_changes(0, data) {
        let cdc = c
            .files
            .iter()
            .filter(|f| f.rows == ChangedRows::ChangeData)
            .count();
        assert!(
            cdc == 0 || cdc == c.files.len(),
            "change data files mixed with files derived from add and remove"
        );
    }
}

/// A `_last_checkpoint` file: parsed, and the checkpoint files it names listed.
pub fn last_checkpoint(data: &[u8]) {
    if let Some(hint) = crate::log::LastCheckpointHint::parse(data) {
        let paths = hint.checkpoint_paths();
        assert!(!paths.is_empty(), "a hint names at least one file");
        let _ = hint.without_v2();
    }
}

/// A checkpoint Parquet file held whole: every action kind decoded.
pub fn checkpoint_parquet(data: &[u8]) {
    use crate::log::{parquet_actions, ActionKinds};
    let all = ActionKinds::ADD
        | ActionKinds::REMOVE
        | ActionKinds::METADATA
        | ActionKinds::PROTOCOL
        | ActionKinds::SIDECAR
        | ActionKinds::CHECKPOINT_METADATA;
    let path = "_delta_log/00000000000000000001.checkpoint.parquet";
    let _ = parquet_actions(path, bytes::Bytes::copy_from_slice(data), all);
    let _ = parquet_actions(path, bytes::Bytes::copy_from_slice(data), ActionKinds::ADD);
}

/// A deletion vector. The first byte chooses the form: even, an inline (`i`) vector whose
/// Z85 text is the rest; odd, the bytes of a file-based (`u`) vector. Bytes 1..9 give the
/// declared cardinality and bytes 9..13 the declared size.
pub fn deletion_vector(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let word = |range: std::ops::Range<usize>| -> u64 {
        rest.get(range)
            .unwrap_or(&[])
            .iter()
            .fold(0u64, |n, &b| (n << 8) | u64::from(b))
    };
    let cardinality = (word(0..8) % (1 << 40)) as i64;
    let payload = rest.get(12..).unwrap_or(&[]);
    let declared = i32::try_from(word(8..12) % (1 << 31)).unwrap_or(i32::MAX);
    let descriptor = |storage: &str, text: String, size: i32| DeletionVectorDescriptor {
        storage_type: storage.to_string(),
        path_or_inline_dv: text,
        offset: Some(1),
        size_in_bytes: size,
        cardinality,
    };
    let decoded = if mode % 2 == 0 {
        let text = String::from_utf8_lossy(payload).into_owned();
        // The size of the encoded bitmap, as writers record it (the Z85 text without its
        // padding): most inputs state it exactly, some do not.
        let size = if mode % 4 == 0 {
            i32::try_from(payload.len() * 4 / 5).unwrap_or(i32::MAX)
        } else {
            declared
        };
        decode_inline(&DeletionVectorDescriptor {
            offset: None,
            ..descriptor("i", text, size)
        })
    } else {
        let size = if mode % 4 == 1 {
            i32::try_from(payload.len().saturating_sub(4 + 4)).unwrap_or(i32::MAX)
        } else {
            declared
        };
        let uuid = "ab^-aqEH.-t@S}K{vb[*k^".to_string();
        decode_file_range(&descriptor("u", uuid, size), "deletion_vector.bin", payload)
    };
    if let Ok(dv) = decoded {
        assert_eq!(
            dv.cardinality(),
            cardinality as u64,
            "a decoded deletion vector holds its declared cardinality"
        );
    }
}

/// A filter expression: parsed, then bound to [`FUZZ_TABLE_SCHEMA`].
pub fn filter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = crate::predicate::parse_filter(text) else {
        return;
    };
    let Ok(schema) = crate::schema::parse_schema(FUZZ_TABLE_SCHEMA) else {
        panic!("the fuzz table's schema parses");
    };
    let _ = crate::predicate::bind(&expr, &schema);
    // What parsed prints back as text that parses again.
    let shown = expr.to_string();
    assert!(
        crate::predicate::parse_filter(&shown).is_ok(),
        "{text:?} parsed, its text {shown:?} did not"
    );
}

/// A Delta schema string: parsed, column mapping checked in each mode, converted to Arrow.
pub fn schema(data: &[u8]) {
    use crate::schema::ColumnMappingMode;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(schema) = crate::schema::parse_schema(text) else {
        return;
    };
    let _ = schema.to_arrow();
    for mode in [
        ColumnMappingMode::None,
        ColumnMappingMode::Name,
        ColumnMappingMode::Id,
    ] {
        if crate::schema::validate_column_mapping(&schema, mode).is_ok() {
            let _ = schema.physical_schema(mode);
            let _ = schema.physical_arrow_schema(mode);
        }
    }
}
