//! `delta_arrow_reader._native`: the Python extension module behind the
//! `delta_arrow_reader` package (the Python layer in `python/delta_arrow_reader` gives it its
//! documented API).
//!
//! A table is loaded once ([`RawDeltaTable`]); each scan ([`RawScan`]) yields
//! `pyarrow.RecordBatch`es over the Arrow C data interface, decoded on every core by a Tokio
//! runtime shared by the module, while Python waits without holding the GIL. Errors are
//! `delta_arrow_reader.DeltaError` with the reader's stable `code` and `phase`.

use std::collections::HashMap;
use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_pyarrow::PyArrowType;
use arrow_schema::SchemaRef;
use delta_arrow_reader::{
    parse_timestamp, DeltaBatchStream, DeltaError as ReadError, DeltaTable, DeltaTableBuilder,
    OutputTypes, StringType,
};
use futures::StreamExt;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    delta_arrow_reader,
    DeltaError,
    PyException,
    "A Delta table could not be read. `code` names the kind (`not_a_table`, `not_found`, `io`, \
     `invalid_storage_options`, ...), `phase` where it happened (`load`, `plan`, `read`)."
);

/// The runtime every table and scan of the process runs on: one worker per core. A child
/// made by `fork` (Python's `multiprocessing` on Linux) has none of its parent's threads, so
/// it starts a runtime of its own; the parent's is left alone (never dropped: its threads
/// are not the child's to stop).
fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: Mutex<Option<(u32, &'static tokio::runtime::Runtime)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, rt)) = *slot {
        if owner == pid {
            return Ok(rt);
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("delta-arrow-reader")
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the reader's threads: {e}")))?;
    let rt: &'static tokio::runtime::Runtime = Box::leak(Box::new(rt));
    *slot = Some((pid, rt));
    Ok(rt)
}

/// How often a wait looks for a signal (Ctrl-C) to raise.
const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `work` on the runtime without the GIL, looking for signals every [`SIGNAL_CHECK`]:
/// Ctrl-C raises `KeyboardInterrupt` in the waiting thread, and dropping `work` stops it.
fn wait<T>(
    py: Python<'_>,
    rt: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = T> + Send,
) -> PyResult<T>
where
    T: Send,
{
    let mut work = std::pin::pin!(work);
    loop {
        let done = py.detach(|| {
            rt.block_on(async { tokio::time::timeout(SIGNAL_CHECK, work.as_mut()).await.ok() })
        });
        if let Some(out) = done {
            return Ok(out);
        }
        py.check_signals()?;
    }
}

/// A reader error as a Python `DeltaError` carrying `code` and `phase`.
fn to_py(py: Python<'_>, e: ReadError) -> PyErr {
    let err = DeltaError::new_err(e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception object cannot fail but for memory.
    let _ = value.setattr("code", e.code());
    let _ = value.setattr("phase", e.phase().as_str());
    let _ = value.setattr("transient", e.is_transient());
    err
}

/// A loaded table: a snapshot at one version.
#[pyclass(module = "delta_arrow_reader._native", frozen)]
struct RawDeltaTable {
    table: DeltaTable,
}

/// The string type a scan's strings come out as, from its Python name.
fn string_type(name: &str) -> PyResult<StringType> {
    match name {
        "string" | "utf8" => Ok(StringType::Utf8),
        "large_string" | "large_utf8" => Ok(StringType::LargeUtf8),
        "string_view" | "utf8_view" => Ok(StringType::Utf8View),
        other => Err(PyValueError::new_err(format!(
            "strings={other:?}: expected 'string', 'large_string' or 'string_view'"
        ))),
    }
}

/// The Arrow types strings and binaries come out as, from their Python names.
fn output_types(strings: &str, binaries: &str) -> PyResult<OutputTypes> {
    let binaries = match binaries {
        "binary" => delta_arrow_reader::BinaryType::Binary,
        "large_binary" => delta_arrow_reader::BinaryType::LargeBinary,
        "binary_view" => delta_arrow_reader::BinaryType::BinaryView,
        other => {
            return Err(PyValueError::new_err(format!(
                "binaries={other:?}: expected 'binary', 'large_binary' or 'binary_view'"
            )))
        }
    };
    Ok(OutputTypes::new(string_type(strings)?, binaries))
}

/// A batch size given from Python: at least 1.
fn rows_per_batch(n: usize) -> PyResult<usize> {
    match n {
        0 => Err(PyValueError::new_err("batch_size must be above 0")),
        n => Ok(n),
    }
}

#[pymethods]
impl RawDeltaTable {
    /// Loads the table at `location` (a path or a URL), at `version` or at the last version
    /// committed at or before `timestamp` (text, RFC 3339 or `YYYY-MM-DD[ HH:MM:SS]`), else
    /// at its latest version.
    #[new]
    #[pyo3(signature = (location, version=None, timestamp=None, storage_options=None))]
    fn new(
        py: Python<'_>,
        location: String,
        version: Option<u64>,
        timestamp: Option<String>,
        storage_options: Option<HashMap<String, String>>,
    ) -> PyResult<Self> {
        if version.is_some() && timestamp.is_some() {
            return Err(PyValueError::new_err("give version or timestamp, not both"));
        }
        let mut builder = DeltaTableBuilder::new(location)
            .with_storage_options(storage_options.unwrap_or_default());
        if let Some(v) = version {
            builder = builder.with_version(v);
        }
        if let Some(t) = timestamp {
            let at = parse_timestamp(&t).map_err(|e| to_py(py, e))?;
            builder = builder.with_timestamp(at);
        }
        let rt = runtime()?;
        let table = wait(py, rt, builder.load_table())?.map_err(|e| to_py(py, e))?;
        Ok(RawDeltaTable { table })
    }

    /// The snapshot's version.
    fn version(&self) -> u64 {
        self.table.version()
    }

    /// The table's location (credentials and query string removed).
    fn location(&self) -> String {
        self.table.location().to_string()
    }

    /// The snapshot's commit time, ms since the epoch, when the log says it.
    fn timestamp_ms(&self) -> Option<i64> {
        self.table.timestamp_ms()
    }

    /// The Arrow schema of the table's rows (logical names, partition columns included).
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let schema = self.table.schema();
        Ok(PyArrowType(schema.as_ref().clone())
            .into_pyobject(py)?
            .unbind())
    }

    /// The partition columns, in order.
    fn partition_columns(&self) -> Vec<String> {
        self.table.partition_columns().to_vec()
    }

    /// The table's `metaData`: id, name, description, partition columns, configuration,
    /// creation time.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.table.metadata();
        let out = PyDict::new(py);
        out.set_item("id", &m.id)?;
        out.set_item("name", &m.name)?;
        out.set_item("description", &m.description)?;
        out.set_item("partition_columns", &m.partition_columns)?;
        out.set_item("configuration", &m.configuration)?;
        out.set_item("created_time", m.created_time)?;
        Ok(out)
    }

    /// The table's `protocol`: reader and writer versions and features.
    fn protocol<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.table.protocol();
        let out = PyDict::new(py);
        out.set_item("min_reader_version", p.min_reader_version)?;
        out.set_item("min_writer_version", p.min_writer_version)?;
        out.set_item("reader_features", &p.reader_features)?;
        out.set_item("writer_features", &p.writer_features)?;
        Ok(out)
    }

    /// The active data files: path (relative to the table, as the log names it), size,
    /// partition values, modification time, row count from the statistics and whether a
    /// deletion vector hides some of its rows.
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let rt = runtime()?;
        let table = &self.table;
        let files = wait(py, rt, table.active_files())?.map_err(|e| to_py(py, e))?;
        files
            .iter()
            .map(|add| {
                let out = PyDict::new(py);
                out.set_item("path", &add.path)?;
                out.set_item("size", add.size)?;
                let values: HashMap<&String, &Option<String>> =
                    add.partition_values.iter().collect();
                out.set_item("partition_values", values)?;
                out.set_item("modification_time", add.modification_time)?;
                out.set_item(
                    "num_records",
                    add.stats.as_ref().and_then(|s| s.num_records()),
                )?;
                out.set_item("has_deletion_vector", add.deletion_vector.is_some())?;
                Ok(out)
            })
            .collect()
    }

    /// The table's commits up to its version, newest first, at most `limit`: each a dict of
    /// `version`, `timestamp` (ms since the epoch, or None), `operation` and `commit_info`
    /// (the whole `commitInfo` as JSON text, or None).
    #[pyo3(signature = (limit=None))]
    fn history<'py>(
        &self,
        py: Python<'py>,
        limit: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let rt = runtime()?;
        let table = &self.table;
        let entries = wait(py, rt, table.history(limit))?.map_err(|e| to_py(py, e))?;
        entries
            .iter()
            .map(|e| {
                let out = PyDict::new(py);
                out.set_item("version", e.version)?;
                out.set_item("timestamp", e.timestamp)?;
                out.set_item("operation", &e.operation)?;
                let info = e
                    .commit_info
                    .as_ref()
                    .map(|m| serde_json::Value::Object(m.clone()).to_string());
                out.set_item("commit_info", info)?;
                Ok(out)
            })
            .collect()
    }

    /// A scan of the table ([`RawScan`]): `columns` (default all),
    /// `filter` (a SQL-like predicate over columns, e.g. `"year = 2024 and id > 10"`; files
    /// and row groups it rules out are not read), `limit` rows at most, `batch_size` rows per
    /// batch, `strings` the Arrow type of strings and `binaries` of binaries.
    #[pyo3(signature = (columns=None, filter=None, limit=None, batch_size=None, strings="string", binaries="binary"))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each.
    fn scan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<usize>,
        batch_size: Option<usize>,
        strings: &str,
        binaries: &str,
    ) -> PyResult<Py<PyAny>> {
        let mut builder = self
            .table
            .scan()
            .with_output_types(output_types(strings, binaries)?);
        if let Some(columns) = columns {
            builder = builder.with_projection(columns);
        }
        if let Some(filter) = filter {
            builder = builder.with_filter(filter);
        }
        if let Some(n) = limit {
            builder = builder.with_limit(n);
        }
        if let Some(n) = batch_size {
            builder = builder.with_batch_size(rows_per_batch(n)?);
        }
        let rt = runtime()?;
        let scan = wait(py, rt, builder.build())?.map_err(|e| to_py(py, e))?;
        // The partitions are spawned on the module's runtime, so that they use every core.
        let stream = {
            let _entered = rt.enter();
            scan.into_stream()
        };
        RawScan::start(py, rt, stream)
    }

    /// The table's change data feed from version `start` (or from the first version
    /// committed at or after `since`, text as for a table's `timestamp`) to the table's
    /// version ([`RawScan`] of the changed rows, commit by commit): `columns` (the table's
    /// and `_change_type`, `_commit_version`, `_commit_timestamp`; default all), `limit` rows
    /// at most, `batch_size`, `strings` and `binaries` as for a scan.
    #[pyo3(signature = (start=None, since=None, columns=None, limit=None, batch_size=None, strings="string", binaries="binary"))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each.
    fn changes(
        &self,
        py: Python<'_>,
        start: Option<u64>,
        since: Option<String>,
        columns: Option<Vec<String>>,
        limit: Option<usize>,
        batch_size: Option<usize>,
        strings: &str,
        binaries: &str,
    ) -> PyResult<Py<PyAny>> {
        let builder = match (start, since) {
            (Some(v), None) => self.table.changes(v),
            (None, Some(t)) => {
                let at = parse_timestamp(&t).map_err(|e| to_py(py, e))?;
                self.table.changes_since(at)
            }
            _ => {
                return Err(PyValueError::new_err(
                    "give starting_version or starting_timestamp (one of them)",
                ))
            }
        };
        let mut builder = builder.with_output_types(output_types(strings, binaries)?);
        if let Some(columns) = columns {
            builder = builder.with_projection(columns);
        }
        if let Some(n) = limit {
            builder = builder.with_limit(n);
        }
        if let Some(n) = batch_size {
            builder = builder.with_batch_size(rows_per_batch(n)?);
        }
        let rt = runtime()?;
        let changes = wait(py, rt, builder.build())?.map_err(|e| to_py(py, e))?;
        let stream = {
            let _entered = rt.enter();
            changes.into_stream()
        };
        RawScan::start(py, rt, stream)
    }

    fn __repr__(&self) -> String {
        format!(
            "DeltaTable('{}', version={})",
            self.table.location(),
            self.table.version()
        )
    }
}

/// A scan's batches, one `pyarrow.RecordBatch` per `next()`: the Python layer hands it to
/// `pyarrow.RecordBatchReader.from_batches`, so that an error in the middle of a scan is a
/// `DeltaError` with its code. Each batch crosses by the Arrow C data interface (no copy);
/// the wait for it releases the GIL.
#[pyclass(module = "delta_arrow_reader._native", frozen)]
struct RawScan {
    /// `None` once the scan has ended, failed or been closed (dropping the stream stops
    /// every partition's task).
    state: tokio::sync::Mutex<Option<DeltaBatchStream>>,
    schema: SchemaRef,
    runtime: &'static tokio::runtime::Runtime,
    /// The process that started the scan: its tasks run on that process's threads.
    pid: u32,
}

impl RawScan {
    /// The Python object reading `stream` (started on `rt`).
    fn start(
        py: Python<'_>,
        rt: &'static tokio::runtime::Runtime,
        stream: DeltaBatchStream,
    ) -> PyResult<Py<PyAny>> {
        let schema = stream.schema();
        Ok(RawScan {
            state: tokio::sync::Mutex::new(Some(stream)),
            schema,
            runtime: rt,
            pid: std::process::id(),
        }
        .into_pyobject(py)?
        .into_any()
        .unbind())
    }
}

#[pymethods]
impl RawScan {
    /// The schema of the scan's batches.
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyArrowType(self.schema.as_ref().clone())
            .into_pyobject(py)?
            .unbind())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.pid != std::process::id() {
            return Err(PyRuntimeError::new_err(
                "this scan was started in another process (before a fork): start a new scan \
                 of the table in this one",
            ));
        }
        let rt = self.runtime;
        // A Ctrl-C raised while pyarrow drives this iterator from C++ stops the read at the
        // next batch.
        py.check_signals()?;
        let next: Option<std::result::Result<RecordBatch, ReadError>> = wait(py, rt, async {
            let mut state = self.state.lock().await;
            let next = state.as_mut()?.next().await;
            if !matches!(next, Some(Ok(_))) {
                *state = None;
            }
            next
        })?;
        match next {
            Some(Ok(batch)) => Ok(Some(PyArrowType(batch).into_pyobject(py)?.unbind())),
            Some(Err(e)) => Err(to_py(py, e)),
            None => Ok(None),
        }
    }

    /// Stops the scan: its tasks end and its memory is freed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        wait(py, self.runtime, async {
            *self.state.lock().await = None;
        })
    }
}

/// The version of the package's Rust core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawDeltaTable>()?;
    m.add_class::<RawScan>()?;
    m.add("DeltaError", m.py().get_type::<DeltaError>())?;
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    Ok(())
}
