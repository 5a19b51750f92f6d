//! Shared helpers for integration tests: the corpus location and its inventory, rows as
//! text for comparisons, the ids of a scan's batches, and deletion vector files.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `../shared/corpus`, beside the project, or the folder `DAR_TEST_CORPUS` names (laid out the
/// same way: `tables/`, `INVENTORY.csv`, optionally `expected/`), to run the corpus tests
/// over other tables. Panics, naming the path, when it is missing: a corpus test never
/// passes by skipping.
pub fn corpus_dir() -> PathBuf {
    let dir = std::env::var_os("DAR_TEST_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus")));
    assert!(
        dir.join("tables").is_dir() && dir.join("INVENTORY.csv").is_file(),
        "the shared corpus is missing: expected {} (with tables/ and INVENTORY.csv) beside \
         the project; check out or unpack the corpus there (see its README.md), never into \
         the project",
        dir.display()
    );
    dir
}

/// Whether the corpus tests run over another folder (`DAR_TEST_CORPUS`): the checks of the
/// shared corpus's own size do not apply there.
pub fn corpus_overridden() -> bool {
    std::env::var_os("DAR_TEST_CORPUS").is_some()
}

/// The folder of one corpus table.
pub fn table_dir(name: &str) -> PathBuf {
    corpus_dir().join("tables").join(name)
}

/// One row of `INVENTORY.csv`.
#[derive(Debug, Clone)]
pub struct InventoryRow {
    pub fields: HashMap<String, String>,
}

impl InventoryRow {
    pub fn get(&self, key: &str) -> &str {
        self.fields.get(key).map(String::as_str).unwrap_or("")
    }
    pub fn name(&self) -> &str {
        self.get("name")
    }
    /// The newest version (`versions` column `a..b`), if any.
    pub fn latest_version(&self) -> Option<u64> {
        self.get("versions").split("..").nth(1)?.parse().ok()
    }
    /// The oldest version with a commit file.
    pub fn first_version(&self) -> Option<u64> {
        self.get("versions").split("..").next()?.parse().ok()
    }
    pub fn active_files(&self) -> Option<usize> {
        self.get("active_files").trim().parse().ok()
    }
    pub fn reader_features(&self) -> Vec<String> {
        self.get("readerFeatures")
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }
    pub fn reader_version(&self) -> Option<i64> {
        self.get("protocol").split('/').next()?.parse().ok()
    }
    /// Why a correct reader must refuse this table, if it must.
    pub fn must_fail(&self, supported: &[&str]) -> Option<String> {
        if self.get("kernel_rs_golden_status").starts_with("negative") {
            return Some("inventory: negative (must error)".into());
        }
        if let Some(f) = self
            .reader_features()
            .into_iter()
            .find(|f| !supported.contains(&f.as_str()))
        {
            return Some(format!("unsupported reader feature {f}"));
        }
        if self.reader_version().is_some_and(|v| v > 3) {
            return Some("reader version above 3".into());
        }
        if let Some(gap) = commit_gap(self.name()) {
            return Some(format!(
                "commit {gap} is missing after the newest checkpoint"
            ));
        }
        let notes = self.get("notes");
        for marker in [
            "no _delta_log",
            "no metaData action",
            "no protocol action",
            "metaData without schemaString",
        ] {
            if notes.contains(marker) {
                return Some(format!("broken log: {marker}"));
            }
        }
        None
    }
}

/// Parses `INVENTORY.csv` (RFC 4180 quoting).
pub fn inventory() -> Vec<InventoryRow> {
    let text = std::fs::read_to_string(corpus_dir().join("INVENTORY.csv"))
        .unwrap_or_else(|e| panic!("cannot read the corpus inventory: {e}"));
    let records = parse_csv(&text);
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    rows.iter()
        .map(|r| InventoryRow {
            fields: header.iter().cloned().zip(r.iter().cloned()).collect(),
        })
        .collect()
}

fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// The first missing commit version after the newest checkpoint of a table's log folder,
/// judged from the file names alone.
pub fn commit_gap(name: &str) -> Option<u64> {
    let dir = table_dir(name).join("_delta_log");
    let mut commits = Vec::new();
    let mut checkpoint = None::<u64>;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some((v, rest)) = file.split_once('.') else {
            continue;
        };
        let Ok(v) = v.parse::<u64>() else { continue };
        if v.to_string().len() > 20 || file.starts_with('.') {
            continue;
        }
        if rest == "json" {
            commits.push(v);
        } else if rest.starts_with("checkpoint") {
            checkpoint = Some(checkpoint.map_or(v, |c| c.max(v)));
        }
    }
    commits.sort_unstable();
    let after: Vec<u64> = commits
        .into_iter()
        .filter(|&v| checkpoint.is_none_or(|c| v > c))
        .collect();
    after
        .windows(2)
        .find(|w| w[1] != w[0] + 1)
        .map(|w| w[0] + 1)
}

/// Tables whose `active_files` in the inventory is known to be wrong, with the right count
/// and why.
pub const INVENTORY_FILE_COUNT_ERRATA: &[(&str, usize, &str)] = &[
    (
        "golden__dv-partitioned-with-checkpoint",
        15,
        "the inventory applies the actions of one commit in file order; commits 14 and 15 each \
         hold an add with a new deletion vector and a remove of the same path without one, and \
         per the protocol the add stays active (reconciliation is by path and DV id)",
    ),
    ("golden__canonicalized-paths-normal-a", 0, CANONICAL_PATHS),
    ("golden__canonicalized-paths-normal-b", 0, CANONICAL_PATHS),
    ("golden__canonicalized-paths-special-a", 0, CANONICAL_PATHS),
    ("golden__canonicalized-paths-special-b", 0, CANONICAL_PATHS),
];

/// Why the four `canonicalized-paths` tables have no active file.
const CANONICAL_PATHS: &str =
    "the remove names the added file in another spelling (`/x` added, `file:/x` or \
     `file:///x` removed): the same file once qualified, as Spark's golden test expects (no \
     active file); delta_kernel compares the strings (the inventory's `skip: BUG: path \
     canonicalization`)";

/// Tables where delta_kernel's active files are known to be wrong and the errata above
/// give the right count: kernel parity checks ours against that count instead.
pub fn kernel_file_count_bug(name: &str) -> Option<usize> {
    INVENTORY_FILE_COUNT_ERRATA
        .iter()
        .find(|e| e.0 == name && e.2 == CANONICAL_PATHS)
        .map(|e| e.1)
}

/// Every table folder of the corpus: (name, canonical path), sorted by name.
pub fn corpus_tables() -> Vec<(String, PathBuf)> {
    let root = corpus_dir().join("tables");
    let mut tables: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read the corpus at {}: {e}", root.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| {
            let path = entry.path();
            let path = path.canonicalize().unwrap_or(path);
            (entry.file_name().to_string_lossy().into_owned(), path)
        })
        .collect();
    tables.sort();
    tables
}

/// A filter on a table's first column that most rows pass, `` `x` is not null `` (a name
/// holding a backtick quoted as the filter syntax quotes it); `None` for a table of no
/// columns.
pub fn first_column_not_null(t: &delta_arrow_reader::DeltaTable) -> Option<String> {
    let first = t.schema().fields().first().map(|f| f.name().clone())?;
    Some(format!("`{}` is not null", first.replace('`', "``")))
}

/// A table's active files as comparable text: path, size, partition values, deletion vector.
pub fn file_set(t: &delta_arrow_reader::DeltaTable) -> std::collections::BTreeSet<String> {
    t.eager_files()
        .unwrap_or_else(|| panic!("file_set needs an eagerly loaded table"))
        .iter()
        .map(|f| {
            format!(
                "{}|{}|{:?}|{:?}",
                f.path, f.size, f.partition_values, f.deletion_vector
            )
        })
        .collect()
}

/// The values of each batch's first column, an `Int64` id (none from a batch whose first
/// column has another type), in batch order.
pub fn ids(batches: &[arrow_array::RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .map(|a| a.values().to_vec())
                .unwrap_or_default()
        })
        .collect()
}

#[path = "../../shared/sorted_rows.rs"]
mod sorted_rows;
pub use sorted_rows::sorted_rows;

/// `batch` as the Parquet file of a table whose reads by page matter: row groups of 50,000
/// rows, pages of 1,000 rows, no dictionary (unique values: a dictionary page would hold the
/// whole column chunk), a page index.
pub fn paged_parquet(batch: &arrow_array::RecordBatch) -> bytes::Bytes {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(50_000))
        .set_data_page_row_count_limit(1_000)
        .set_dictionary_enabled(false)
        .set_write_batch_size(1_000)
        .build();
    delta_arrow_reader::fixture::parquet_bytes_with_properties("part-0.parquet", batch, props)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A deletion vector file marking `rows` deleted: version byte, then size, bitmap (magic +
/// portable 64-bit Roaring), CRC-32; and the bitmap's size (the descriptor's `sizeInBytes`).
pub fn dv_file(rows: impl IntoIterator<Item = u64>) -> (Vec<u8>, usize) {
    delta_arrow_reader::fixture::deletion_vector_file(rows)
}

/// `id` 0..`rows` (long) in one file `part=a/data.parquet` of row groups of `rows_per_group`
/// rows, partition `part = 'a'`, whose deletion vector (at the absolute path
/// `memory://bucket/table/dv.bin`) deletes `deleted`; `stats` is the `add`'s statistics.
/// Read it at `memory://bucket/table/` over the writer's store.
pub fn dv_table(
    rows: u64,
    rows_per_group: usize,
    deleted: &[u64],
    stats: serde_json::Value,
) -> delta_arrow_reader::fixture::TableWriter {
    dv_table_padded(rows, rows_per_group, deleted, stats, None)
}

/// [`dv_table`], with a second data column `pad` of `pad(id)` when given (to make the file
/// as large as a test needs).
pub fn dv_table_padded(
    rows: u64,
    rows_per_group: usize,
    deleted: &[u64],
    stats: serde_json::Value,
    pad: Option<fn(u64) -> String>,
) -> delta_arrow_reader::fixture::TableWriter {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use delta_arrow_reader::fixture::{parquet_bytes_with_row_groups, TableWriter};
    use serde_json::json;

    let mut w = TableWriter::new();
    let mut fields = vec![Field::new("id", DataType::Int64, false)];
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(0..rows as i64))];
    if let Some(pad) = pad {
        fields.push(Field::new("pad", DataType::Utf8, false));
        columns.push(Arc::new(StringArray::from_iter_values((0..rows).map(pad))));
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .unwrap_or_else(|e| panic!("{e}"));
    let path = "part=a/data.parquet";
    let bytes = parquet_bytes_with_row_groups(path, &batch, Some(rows_per_group))
        .unwrap_or_else(|e| panic!("{e}"));
    let size = bytes.len();
    w.store().put(path, bytes);
    let (dv, dv_size) = dv_file(deleted.iter().copied());
    w.store().put("dv.bin", dv);
    let mut schema_fields = vec![json!(
        {"name": "id", "type": "long", "nullable": false, "metadata": {}})];
    if pad.is_some() {
        schema_fields.push(json!(
            {"name": "pad", "type": "string", "nullable": false, "metadata": {}}));
    }
    schema_fields.push(json!(
        {"name": "part", "type": "string", "nullable": true, "metadata": {}}));
    let schema = json!({"type": "struct", "fields": schema_fields});
    let mut actions = TableWriter::create_actions(
        &schema,
        &["part"],
        json!({}),
        json!({"minReaderVersion": 3, "minWriterVersion": 7,
               "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}),
    );
    actions.push(json!({"add": {
        "path": path,
        "partitionValues": {"part": "a"},
        "size": size,
        "modificationTime": 0,
        "dataChange": true,
        "stats": stats.to_string(),
        "deletionVector": {
            "storageType": "p",
            "pathOrInlineDv": "memory://bucket/table/dv.bin",
            "offset": 1,
            "sizeInBytes": dv_size,
            "cardinality": deleted.len(),
        },
    }}));
    w.commit("WRITE", actions);
    w
}

/// Every file under `dir`, at its `/`-separated path relative to `root`, sorted.
pub fn files_under(root: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap_or_else(|e| panic!("{e}"))
                .to_string_lossy()
                .replace('\\', "/");
            files.push((rel, path));
        }
    }
    files.sort();
    files
}

/// The files of a corpus table under `sub` (`""`: all of them; `"_delta_log"`: its log), in
/// a store that lists, at their paths relative to the table.
pub fn table_in_memory(name: &str, sub: &str) -> delta_arrow_reader::io::MemoryStore {
    let root = table_dir(name);
    let store = delta_arrow_reader::io::MemoryStore::new();
    for (rel, path) in files_under(&root, &root.join(sub)) {
        store.put(rel, std::fs::read(&path).unwrap_or_else(|e| panic!("{e}")));
    }
    store
}

/// Prints a report section: `title`, the number of lines, then each line indented.
pub fn print_section(title: &str, lines: &[String]) {
    println!("{title}: {}", lines.len());
    for line in lines {
        println!("  {line}");
    }
}

/// Loads the table at `url` with the storage `options` and scans it whole: its rows,
/// sorted, as text, or the error of the load or the read.
pub async fn rows_over(
    url: &str,
    options: &[(&str, &str)],
) -> Result<Vec<String>, delta_arrow_reader::DeltaError> {
    let options: HashMap<String, String> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let table = delta_arrow_reader::DeltaTableBuilder::new(url)
        .with_storage_options(options)
        .load_table()
        .await?;
    let batches = table
        .scan()
        .build()
        .await?
        .into_stream()
        .collect_batches()
        .await?;
    Ok(sorted_rows(&batches))
}

/// Builds `scan` and reads it to its end: its batches, and the requests and bytes it made.
pub async fn scan_to_end(
    scan: delta_arrow_reader::DeltaScanBuilder,
) -> (Vec<arrow_array::RecordBatch>, delta_arrow_reader::ScanIo) {
    let scan = scan.build().await.unwrap_or_else(|e| panic!("{e}"));
    let (batches, metrics) = read_to_end(scan).await;
    (batches, metrics.io())
}

/// Reads a built `scan` through `into_stream()` to its end: its batches and its metrics.
pub async fn read_to_end(
    scan: delta_arrow_reader::DeltaScan,
) -> (
    Vec<arrow_array::RecordBatch>,
    std::sync::Arc<delta_arrow_reader::DeltaScanMetrics>,
) {
    let metrics = scan.metrics();
    let batches = scan
        .into_stream()
        .collect_batches()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (batches, metrics)
}
