//! Parity with `delta_kernel` 0.30.1 (default engine, arrow 59) over the shared corpus.
//!
//! For every table in `../shared/corpus/tables` and several versions of it (the latest, and for
//! tables with history also the oldest version with a log file, a middle one and the one before
//! the latest), the snapshot of `delta_kernel` is the oracle. Where kernel loads a snapshot, our
//! `DeltaTableBuilder::load_table` must give:
//!
//! - the same version;
//! - the same Arrow schema as kernel's logical schema converted to Arrow: field names, data
//!   types and nullability, recursively (field metadata is ignored);
//! - the same active files, compared as a multiset of (path, size, partition values, deletion
//!   vector descriptor).
//!
//! Where kernel fails (snapshot or scan), the table is not counted as passed or failed: it is
//! listed with kernel's error, and with whether we fail too or load it ("kernel cannot load, we
//! load"). Every mismatch is collected and the test fails at the end with a full report.
//!
//! Kernel's engine is synchronous (it blocks on its own background Tokio runtime), so every
//! kernel call runs in `tokio::task::spawn_blocking`, never on the async workers.
//!
//! Run: `cargo test --features kernel --test native kernel_parity -- --nocapture`.

use crate::common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, MapArray, StructArray};
use arrow_schema::{DataType, Field, Schema};

use delta_arrow_reader::DeltaTableBuilder;
use delta_kernel::engine::arrow_conversion::TryFromKernel;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::Snapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;

/// How long our reader may take for one snapshot before it counts as a failure (a hang).
const OUR_LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// At most this many differing files are listed per side and snapshot in the report.
const MAX_LISTED_FILES: usize = 8;

// ---------------------------------------------------------------------------------------------
// The compared view of a snapshot
// ---------------------------------------------------------------------------------------------

/// A deletion vector descriptor, as both sides give it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Dv {
    storage_type: String,
    path_or_inline_dv: String,
    offset: Option<i32>,
    size_in_bytes: i32,
    cardinality: i64,
}

/// One active file, normalised (see [`normalise_partition_values`]).
///
/// Paths are compared exactly as written in the log (`add.path`, percent-encoded relative path
/// or absolute URI): kernel's scan rows carry the raw `add.path` column, and our `Add::path` is
/// the raw `add.path` too, so no decoding is applied to either side. (The report says when two
/// paths differ only by percent-encoding.)
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FileKey {
    path: String,
    size: i64,
    partition_values: BTreeMap<String, Option<String>>,
    dv: Option<Dv>,
}

impl std::fmt::Display for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (size {}", self.path, self.size)?;
        if !self.partition_values.is_empty() {
            let pv: Vec<String> = self
                .partition_values
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => format!("{k}={v:?}"),
                    None => format!("{k}=null"),
                })
                .collect();
            write!(f, ", partitions {{{}}}", pv.join(", "))?;
        }
        if let Some(dv) = &self.dv {
            write!(
                f,
                ", dv {}:{}@{:?} size {} card {}",
                dv.storage_type, dv.path_or_inline_dv, dv.offset, dv.size_in_bytes, dv.cardinality
            )?;
        }
        write!(f, ")")
    }
}

/// Normalises partition values the same way on both sides: keys are the physical partition
/// column names as written in `add.partitionValues` (both sides keep them as they are), and an
/// empty string becomes `None`, because the protocol defines an empty partition value as null
/// (kernel's raw scan map keeps `""`, a reader may already have turned it into null).
fn normalise_partition_values(
    values: impl IntoIterator<Item = (String, Option<String>)>,
) -> BTreeMap<String, Option<String>> {
    values
        .into_iter()
        .map(|(k, v)| (k, v.filter(|s| !s.is_empty())))
        .collect()
}

/// What is compared of one snapshot.
#[derive(Debug)]
struct View {
    version: u64,
    schema: Schema,
    /// Sorted.
    files: Vec<FileKey>,
}

/// Which version to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Latest,
    Version(u64),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Latest => write!(f, "latest"),
            Target::Version(v) => write!(f, "v{v}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel side (synchronous: run only inside spawn_blocking)
// ---------------------------------------------------------------------------------------------

type KernelEngine = delta_kernel_default_engine::DefaultEngine<
    delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor,
>;

fn kernel_engine() -> KernelEngine {
    DefaultEngineBuilder::new(Arc::new(LocalFileSystem::new())).build()
}

/// Loads `target` of the table at `table_url` with kernel. Errors are kernel's message, with the
/// stage (snapshot, schema, scan) that failed.
fn kernel_view(
    engine: &KernelEngine,
    table_url: &url::Url,
    target: Target,
) -> Result<View, String> {
    let mut builder = Snapshot::builder_for(table_url.as_str());
    if let Target::Version(v) = target {
        builder = builder.at_version(v);
    }
    let snapshot = builder
        .build(engine)
        .map_err(|e| format!("snapshot: {e}"))?;
    let version = snapshot.version();
    let kernel_schema = snapshot.schema();
    let schema = Schema::try_from_kernel(kernel_schema.as_ref())
        .map_err(|e| format!("schema to arrow: {e}"))?;

    let scan = snapshot
        .scan_builder()
        .build()
        .map_err(|e| format!("scan builder: {e}"))?;
    let mut files = Vec::new();
    for metadata in scan
        .scan_metadata(engine)
        .map_err(|e| format!("scan metadata: {e}"))?
    {
        let metadata = metadata.map_err(|e| format!("scan metadata: {e}"))?;
        let (data, selection) = metadata.scan_files.into_parts();
        let data = ArrowEngineData::try_from_engine_data(data)
            .map_err(|e| format!("scan metadata is not arrow: {e}"))?;
        collect_scan_rows(data.record_batch(), &selection, &mut files)?;
    }
    files.sort();
    Ok(View {
        version,
        schema,
        files,
    })
}

/// Reads the selected rows of one batch of kernel's scan metadata.
///
/// The rows follow kernel's `SCAN_ROW_SCHEMA`: `path`, `size`, `modificationTime`, `stats`,
/// `deletionVector {storageType, pathOrInlineDv, offset, sizeInBytes, cardinality}`,
/// `fileConstantValues {partitionValues: map<string, string?>, ...}`. The batch is read
/// directly (rather than through `visit_scan_files`) because `ScanFile` exposes neither the
/// deletion vector descriptor (it is `pub(crate)` in `DvInfo`) nor null partition values (its
/// `HashMap<String, String>` drops them).
fn collect_scan_rows(
    batch: &arrow_array::RecordBatch,
    selection: &[bool],
    out: &mut Vec<FileKey>,
) -> Result<(), String> {
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| format!("scan row has no '{name}' column: {:?}", batch.schema()))
    };
    let paths = column("path")?;
    let sizes = column("size")?;
    let dvs = column("deletionVector")?
        .as_struct_opt()
        .ok_or("deletionVector is not a struct")?;
    let constants = column("fileConstantValues")?
        .as_struct_opt()
        .ok_or("fileConstantValues is not a struct")?;
    let partition_values = constants
        .column_by_name("partitionValues")
        .ok_or("fileConstantValues has no partitionValues")?
        .as_map_opt()
        .ok_or("partitionValues is not a map")?;

    for row in 0..batch.num_rows() {
        // A selection vector shorter than the batch selects the rows it does not cover.
        if !selection.get(row).copied().unwrap_or(true) {
            continue;
        }
        let Some(path) = string_at(paths.as_ref(), row)? else {
            continue; // not an add (kernel's own visitor skips these too)
        };
        let size = int_at(sizes.as_ref(), row)?.ok_or_else(|| format!("{path}: null size"))?;
        out.push(FileKey {
            partition_values: normalise_partition_values(map_at(partition_values, row)?),
            dv: dv_at(dvs, row)?,
            path,
            size,
        });
    }
    Ok(())
}

fn string_at(array: &dyn Array, row: usize) -> Result<Option<String>, String> {
    if array.is_null(row) {
        return Ok(None);
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Ok(Some(a.value(row).to_string()));
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Ok(Some(a.value(row).to_string()));
    }
    if let Some(a) = array.as_string_view_opt() {
        return Ok(Some(a.value(row).to_string()));
    }
    Err(format!(
        "expected a string column, got {}",
        array.data_type()
    ))
}

fn int_at(array: &dyn Array, row: usize) -> Result<Option<i64>, String> {
    if array.is_null(row) {
        return Ok(None);
    }
    if let Some(a) = array.as_primitive_opt::<Int64Type>() {
        return Ok(Some(a.value(row)));
    }
    if let Some(a) = array.as_primitive_opt::<Int32Type>() {
        return Ok(Some(i64::from(a.value(row))));
    }
    Err(format!(
        "expected an integer column, got {}",
        array.data_type()
    ))
}

fn dv_at(dvs: &StructArray, row: usize) -> Result<Option<Dv>, String> {
    if dvs.is_null(row) {
        return Ok(None);
    }
    let field = |name: &str| {
        dvs.column_by_name(name)
            .ok_or_else(|| format!("deletionVector has no '{name}'"))
    };
    // Like kernel's own visitor: a descriptor is present when its storage type is.
    let Some(storage_type) = string_at(field("storageType")?.as_ref(), row)? else {
        return Ok(None);
    };
    let path_or_inline_dv = string_at(field("pathOrInlineDv")?.as_ref(), row)?
        .ok_or("deletionVector.pathOrInlineDv is null")?;
    let offset = int_at(field("offset")?.as_ref(), row)?;
    let size_in_bytes =
        int_at(field("sizeInBytes")?.as_ref(), row)?.ok_or("deletionVector.sizeInBytes is null")?;
    let cardinality =
        int_at(field("cardinality")?.as_ref(), row)?.ok_or("deletionVector.cardinality is null")?;
    Ok(Some(Dv {
        storage_type,
        path_or_inline_dv,
        offset: offset.map(|o| o as i32),
        size_in_bytes: size_in_bytes as i32,
        cardinality,
    }))
}

fn map_at(map: &MapArray, row: usize) -> Result<Vec<(String, Option<String>)>, String> {
    if map.is_null(row) {
        return Ok(Vec::new());
    }
    let entries = map.value(row);
    let (keys, values) = (entries.column(0), entries.column(1));
    (0..entries.len())
        .map(|i| {
            let key = string_at(keys.as_ref(), i)?.ok_or("null partition key")?;
            Ok((key, string_at(values.as_ref(), i)?))
        })
        .collect()
}

/// Kernel's results for each target of one table. A panic inside kernel counts as a kernel
/// failure of that target.
fn kernel_views(table_url: url::Url, targets: Vec<Target>) -> Vec<Result<View, String>> {
    let engine = kernel_engine();
    targets
        .into_iter()
        .map(|target| {
            catch_unwind(AssertUnwindSafe(|| {
                kernel_view(&engine, &table_url, target)
            }))
            .unwrap_or_else(|panic| Err(format!("kernel panicked: {}", panic_message(&panic))))
            // Kernel appends a stack backtrace on the following lines when RUST_BACKTRACE
            // is set: keep the message only.
            .map_err(|e| e.lines().next().unwrap_or_default().trim_end().to_string())
        })
        .collect()
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".into())
}

// ---------------------------------------------------------------------------------------------
// Our side
// ---------------------------------------------------------------------------------------------

/// Reader features outside DESIGN.md's scope that kernel reads: tables that need them are
/// refused by design with `unsupported_feature`, listed by the test, and not counted as
/// mismatches.
const OUT_OF_SCOPE_READER_FEATURES: &[&str] = &["variantShredding-preview", "variantShredding"];

fn out_of_scope(our_err: &str) -> Option<&'static str> {
    if !our_err.starts_with("[unsupported_feature]") {
        return None;
    }
    OUT_OF_SCOPE_READER_FEATURES
        .iter()
        .find(|f| our_err.contains(&format!("'{f}'")))
        .copied()
}

async fn our_view(table_dir: String, target: Target) -> Result<View, String> {
    // Spawned so that a panic in the reader is reported as a failure of this snapshot.
    let task = tokio::spawn(async move {
        let mut builder = DeltaTableBuilder::new(table_dir);
        if let Target::Version(v) = target {
            builder = builder.with_version(v);
        }
        let table = builder
            .load_table_with_eager_scan_metadata()
            .await
            .map_err(|e| format!("[{}] {e}", e.code()))?;
        let mut files: Vec<FileKey> = table
            .eager_files()
            .unwrap_or_default()
            .iter()
            .map(|add| FileKey {
                path: add.path.clone(),
                size: add.size,
                partition_values: normalise_partition_values(add.partition_values.clone()),
                dv: add.deletion_vector.as_ref().map(|dv| Dv {
                    storage_type: dv.storage_type.clone(),
                    path_or_inline_dv: dv.path_or_inline_dv.clone(),
                    offset: dv.offset,
                    size_in_bytes: dv.size_in_bytes,
                    cardinality: dv.cardinality,
                }),
            })
            .collect();
        files.sort();
        Ok(View {
            version: table.version(),
            schema: table.schema().as_ref().clone(),
            files,
        })
    });
    match tokio::time::timeout(OUR_LOAD_TIMEOUT, task).await {
        Err(_) => Err(format!("timed out after {OUR_LOAD_TIMEOUT:?}")),
        Ok(Err(join)) if join.is_panic() => {
            Err(format!("panicked: {}", panic_message(&join.into_panic())))
        }
        Ok(Err(join)) => Err(format!("task failed: {join}")),
        Ok(Ok(result)) => result,
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

/// Compares two Arrow schemas: names, types and nullability, recursively; metadata ignored.
fn compare_schemas(ours: &Schema, kernel: &Schema, out: &mut Vec<String>) {
    compare_field_lists(
        "",
        ours.fields().iter().map(|f| f.as_ref()),
        kernel.fields().iter().map(|f| f.as_ref()),
        out,
    );
}

fn compare_field_lists<'a>(
    parent: &str,
    ours: impl ExactSizeIterator<Item = &'a Field>,
    kernel: impl ExactSizeIterator<Item = &'a Field>,
    out: &mut Vec<String>,
) {
    let ours: Vec<&Field> = ours.collect();
    let kernel: Vec<&Field> = kernel.collect();
    if ours.len() != kernel.len() {
        out.push(format!(
            "schema{}: {} fields {:?} (ours) vs {} fields {:?} (kernel)",
            if parent.is_empty() {
                String::new()
            } else {
                format!(" at '{parent}'")
            },
            ours.len(),
            ours.iter().map(|f| f.name()).collect::<Vec<_>>(),
            kernel.len(),
            kernel.iter().map(|f| f.name()).collect::<Vec<_>>(),
        ));
    }
    for (o, k) in ours.iter().zip(kernel.iter()) {
        compare_fields(parent, o, k, out);
    }
}

fn compare_fields(parent: &str, ours: &Field, kernel: &Field, out: &mut Vec<String>) {
    let path = if parent.is_empty() {
        ours.name().clone()
    } else {
        format!("{parent}.{}", ours.name())
    };
    if ours.name() != kernel.name() {
        out.push(format!(
            "schema: field name '{path}' (ours) vs '{}' (kernel)",
            kernel.name()
        ));
    }
    if ours.is_nullable() != kernel.is_nullable() {
        out.push(format!(
            "schema: '{path}' nullable {} (ours) vs {} (kernel)",
            ours.is_nullable(),
            kernel.is_nullable()
        ));
    }
    compare_types(&path, ours.data_type(), kernel.data_type(), out);
}

fn compare_types(path: &str, ours: &DataType, kernel: &DataType, out: &mut Vec<String>) {
    match (ours, kernel) {
        (DataType::Struct(o), DataType::Struct(k)) => compare_field_lists(
            path,
            o.iter().map(|f| f.as_ref()),
            k.iter().map(|f| f.as_ref()),
            out,
        ),
        (DataType::List(o), DataType::List(k))
        | (DataType::LargeList(o), DataType::LargeList(k))
        | (DataType::ListView(o), DataType::ListView(k))
        | (DataType::LargeListView(o), DataType::LargeListView(k)) => {
            compare_fields(path, o, k, out)
        }
        (DataType::FixedSizeList(o, on), DataType::FixedSizeList(k, kn)) => {
            if on != kn {
                out.push(format!(
                    "schema: '{path}' fixed list size {on} (ours) vs {kn} (kernel)"
                ));
            }
            compare_fields(path, o, k, out)
        }
        (DataType::Map(o, o_sorted), DataType::Map(k, k_sorted)) => {
            if o_sorted != k_sorted {
                out.push(format!(
                    "schema: '{path}' map keys_sorted {o_sorted} (ours) vs {k_sorted} (kernel)"
                ));
            }
            compare_fields(path, o, k, out)
        }
        (o, k) if o == k => {}
        (o, k) => out.push(format!("schema: '{path}' type {o} (ours) vs {k} (kernel)")),
    }
}

/// Multiset difference of two sorted lists: (only in `a`, only in `b`).
fn sorted_diff<'a>(a: &'a [FileKey], b: &'a [FileKey]) -> (Vec<&'a FileKey>, Vec<&'a FileKey>) {
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(x);
                i += 1;
            }
            (Some(_), Some(y)) => {
                only_b.push(y);
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(x);
                i += 1;
            }
            (None, Some(y)) => {
                only_b.push(y);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    (only_a, only_b)
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn compare_files(ours: &[FileKey], kernel: &[FileKey], out: &mut Vec<String>) {
    let (only_ours, only_kernel) = sorted_diff(ours, kernel);
    if only_ours.is_empty() && only_kernel.is_empty() {
        return;
    }
    let mut text = format!(
        "files: {} active (ours) vs {} (kernel); {} only in ours, {} only in kernel",
        ours.len(),
        kernel.len(),
        only_ours.len(),
        only_kernel.len()
    );
    for (side, list) in [
        ("only in ours", &only_ours),
        ("only in kernel", &only_kernel),
    ] {
        for f in list.iter().take(MAX_LISTED_FILES) {
            let _ = write!(text, "\n        {side}: {f}");
        }
        if list.len() > MAX_LISTED_FILES {
            let _ = write!(
                text,
                "\n        {side}: ... {} more",
                list.len() - MAX_LISTED_FILES
            );
        }
    }
    // Hints for common kinds of difference.
    let same_path = |a: &FileKey, b: &FileKey| a.path == b.path;
    let decoded_same = |a: &FileKey, b: &FileKey| {
        a.path != b.path && percent_decode(&a.path) == percent_decode(&b.path)
    };
    if only_ours
        .iter()
        .any(|o| only_kernel.iter().any(|k| same_path(o, k)))
    {
        text.push_str(
            "\n        hint: some files are on both sides with different size/partition values/DV",
        );
    }
    if only_ours
        .iter()
        .any(|o| only_kernel.iter().any(|k| decoded_same(o, k)))
    {
        text.push_str("\n        hint: some paths differ only by percent-encoding");
    }
    out.push(text);
}

fn compare_views(ours: &View, kernel: &View) -> Vec<String> {
    let mut out = Vec::new();
    if ours.version != kernel.version {
        out.push(format!(
            "version {} (ours) vs {} (kernel)",
            ours.version, kernel.version
        ));
    }
    compare_schemas(&ours.schema, &kernel.schema, &mut out);
    compare_files(&ours.files, &kernel.files, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

/// Versions that have a commit or checkpoint file in `_delta_log` (sorted, unique).
fn log_versions(table: &Path) -> Vec<u64> {
    let mut versions: Vec<u64> = std::fs::read_dir(table.join("_delta_log"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let (digits, rest) = name.split_at_checked(20)?;
                    // Commits, classic/multi-part/v2 checkpoints; not .crc, not compacted logs.
                    let is_log_file = rest == ".json" || rest.starts_with(".checkpoint.");
                    if !is_log_file || !digits.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    digits.parse().ok()
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort_unstable();
    versions.dedup();
    versions
}

/// The latest version, then for tables with history: the oldest version with a log file, the
/// middle one, and the last one before the newest.
fn targets_for(table: &Path) -> Vec<Target> {
    let versions = log_versions(table);
    let mut targets = vec![Target::Latest];
    if versions.len() >= 2 {
        let older = &versions[..versions.len() - 1];
        for v in [older[0], older[older.len() / 2], older[older.len() - 1]] {
            if !targets.contains(&Target::Version(v)) {
                targets.push(Target::Version(v));
            }
        }
    }
    targets
}

fn short(text: &str) -> String {
    const MAX: usize = 400;
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= MAX {
        one_line
    } else {
        format!("{}...", one_line.chars().take(MAX).collect::<String>())
    }
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Report {
    tables_passed: usize,
    tables_failed: usize,
    snapshots_compared: usize,
    snapshots_failed: usize,
    /// Table (and target) where kernel cannot load: kernel's error and our outcome.
    kernel_cannot_load: Vec<String>,
    /// Tables whose latest version kernel cannot load (not counted as passed or failed).
    kernel_cannot_load_tables: Vec<String>,
    /// Of the snapshots kernel cannot load, the ones we load.
    we_load_kernel_cannot: Vec<String>,
    mismatches: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_parity_over_corpus() {
    let tables = common::corpus_tables();
    assert!(
        !tables.is_empty(),
        "no tables in {}",
        common::corpus_dir().join("tables").display()
    );
    let mut report = Report::default();
    let started = Instant::now();

    for (name, dir) in &tables {
        let table_started = Instant::now();
        let targets = targets_for(dir);
        let url = url::Url::from_directory_path(dir)
            .unwrap_or_else(|()| panic!("not an absolute path: {}", dir.display()));
        let kernel = {
            let targets = targets.clone();
            tokio::task::spawn_blocking(move || kernel_views(url, targets))
        };
        let dir_text = dir.to_string_lossy().into_owned();
        let mut ours = Vec::new();
        for &target in &targets {
            ours.push(our_view(dir_text.clone(), target).await);
        }
        let ours_elapsed = table_started.elapsed();
        let kernel = kernel.await.expect("kernel task failed");
        let kernel_elapsed = table_started.elapsed();

        let mut table_compared = false;
        let mut table_ok = true;
        for ((target, kernel), ours) in targets.iter().zip(kernel).zip(ours) {
            let label = format!("{name} @ {target}");
            match (kernel, ours) {
                (Err(kernel_err), ours) => {
                    if *target == Target::Latest {
                        report.kernel_cannot_load_tables.push(name.clone());
                    }
                    let ours_text = match &ours {
                        Ok(view) => {
                            let line = format!(
                                "{label}: kernel cannot load, we load (v{}, {} files); kernel: {}",
                                view.version,
                                view.files.len(),
                                short(&kernel_err)
                            );
                            report.we_load_kernel_cannot.push(line);
                            format!("we load v{}", view.version)
                        }
                        Err(e) => format!("we fail too: {}", short(e)),
                    };
                    report.kernel_cannot_load.push(format!(
                        "{label}: kernel: {} | {ours_text}",
                        short(&kernel_err)
                    ));
                }
                (Ok(kernel), Err(our_err)) if out_of_scope(&our_err).is_some() => {
                    let feature = out_of_scope(&our_err).unwrap_or_default();
                    println!(
                        "out of scope: {label}: kernel loads v{}, we refuse by design \
                         (reader feature {feature}, outside DESIGN.md's scope)",
                        kernel.version
                    );
                }
                (Ok(kernel), Err(our_err)) => {
                    table_compared = true;
                    table_ok = false;
                    report.snapshots_compared += 1;
                    report.snapshots_failed += 1;
                    report.mismatches.push(format!(
                        "{label}: kernel loads v{} ({} files) but we fail: {}",
                        kernel.version,
                        kernel.files.len(),
                        our_err
                    ));
                }
                (Ok(kernel), Ok(ours)) => {
                    table_compared = true;
                    report.snapshots_compared += 1;
                    let diffs = match common::kernel_file_count_bug(name) {
                        // delta_kernel's answer is known wrong: ours must be the right count.
                        Some(want) if ours.files.len() == want && kernel.files.len() != want => {
                            println!(
                                "kernel parity: {label}: {} active files (kernel {}: a known \
                                 kernel bug, see INVENTORY_FILE_COUNT_ERRATA)",
                                ours.files.len(),
                                kernel.files.len()
                            );
                            Vec::new()
                        }
                        _ => compare_views(&ours, &kernel),
                    };
                    if !diffs.is_empty() {
                        table_ok = false;
                        report.snapshots_failed += 1;
                        let mut text = format!("{label}:");
                        for d in diffs {
                            let _ = write!(text, "\n    - {d}");
                        }
                        report.mismatches.push(text);
                    }
                }
            }
        }
        if table_compared {
            if table_ok {
                report.tables_passed += 1;
            } else {
                report.tables_failed += 1;
            }
        }
        if kernel_elapsed > Duration::from_secs(5) {
            println!(
                "kernel parity: {name}: {} snapshots took {kernel_elapsed:.1?} \
                 (ours done after {ours_elapsed:.1?}, kernel ran alongside)",
                targets.len()
            );
        }
    }

    println!();
    println!(
        "kernel parity: {} tables, {} snapshots compared ({} differ) in {:.1?}",
        tables.len(),
        report.snapshots_compared,
        report.snapshots_failed,
        started.elapsed()
    );
    println!(
        "kernel cannot load the latest version of {} tables: {}",
        report.kernel_cannot_load_tables.len(),
        report.kernel_cannot_load_tables.join(", ")
    );
    common::print_section("kernel cannot load (snapshots)", &report.kernel_cannot_load);
    common::print_section(
        "kernel cannot load, we load (snapshots)",
        &report.we_load_kernel_cannot,
    );
    if !report.mismatches.is_empty() {
        common::print_section("mismatches (snapshots)", &report.mismatches);
    }
    println!(
        "kernel parity: {} passed, {} failed",
        report.tables_passed, report.tables_failed
    );

    assert!(
        report.mismatches.is_empty(),
        "kernel parity: {} of {} compared snapshots differ from delta_kernel ({} tables failed):\n{}",
        report.snapshots_failed,
        report.snapshots_compared,
        report.tables_failed,
        report.mismatches.join("\n")
    );
}
