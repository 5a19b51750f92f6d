//! The benchmark's tables, written with the project's fixture writer and cached under
//! `$HOME/.cache/dar-bench/v<GENERATOR_VERSION>-<size>/`: `lineitem` (year partitions, JSON
//! stats, one commit per year, a checkpoint), `lineitem_dv` (the same data files, hard-linked,
//! with deletion vectors on 10% of the rows), `lineitem_onefile` (one year's rows in one
//! file, for a table of fewer files than cores), `lineitem_onerowgroup` (the same rows in one
//! row group) and `commits10k` (one `add` per commit, no checkpoint). Generation is
//! deterministic (fixed seeds, fixed commit times); a finished set is renamed into place, so
//! an interrupted run leaves no half table behind.

use std::path::{Path, PathBuf};

use delta_arrow_reader::fixture::{
    deletion_vector_file, uuid_deletion_vector, ParquetFileWriter, TableWriter,
};
use serde_json::{json, Value};

use crate::lineitem::{delta_schema, file_schema, FileRows, Layout, PARTITION_COLUMN, SEED};
use crate::rng::SplitMix64;

/// Bump when the generated tables change: the cache is keyed by it.
pub const GENERATOR_VERSION: u32 = 1;

/// Rows handed to the Parquet writer at once.
const BATCH_ROWS: usize = 65_536;

/// Where the tables of one size are.
#[derive(Debug, Clone)]
pub struct Tables {
    /// The folder holding the tables.
    pub root: PathBuf,
    /// Their size.
    pub layout: Layout,
    /// Commits of the `commits10k` table.
    pub commits: u64,
}

impl Tables {
    /// The tables for `quick` or full runs under `cache` (not generated yet).
    pub fn new(cache: &Path, quick: bool) -> Self {
        let (layout, commits, size) = if quick {
            (Layout::QUICK, 300, "quick")
        } else {
            (Layout::FULL, 10_000, "full")
        };
        Tables {
            root: cache.join(format!("v{GENERATOR_VERSION}-{size}")),
            layout,
            commits,
        }
    }

    /// The folder of table `name`.
    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Generates the tables unless a finished set is cached. Says on stderr what it does.
    pub fn ensure(&self) -> Result<(), String> {
        if self.root.join("COMPLETE").exists() {
            // Sets generated before the one-file tables existed get them beside the others.
            return self.ensure_one_file_tables();
        }
        let staging = self
            .root
            .with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        eprintln!(
            "generating the benchmark tables in {} (once; {} rows)…",
            self.root.display(),
            self.layout.rows()
        );
        let started = std::time::Instant::now();
        let adds = write_lineitem(&staging.join("lineitem"), self.layout)?;
        write_lineitem_dv(&staging, self.layout, &adds)?;
        write_lineitem_onefile(&staging.join(ONE_FILE), self.layout)?;
        write_lineitem_onerowgroup(&staging.join(ONE_ROW_GROUP), self.layout)?;
        write_commits(&staging.join("commits10k"), self.commits)?;
        std::fs::write(staging.join("COMPLETE"), format!("{GENERATOR_VERSION}\n"))
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_dir_all(&self.root);
        std::fs::rename(&staging, &self.root).map_err(|e| e.to_string())?;
        eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());
        Ok(())
    }

    /// Writes `lineitem_onefile` and `lineitem_onerowgroup` into a finished set that lacks
    /// them (each staged, then renamed into place).
    fn ensure_one_file_tables(&self) -> Result<(), String> {
        type Write = fn(&Path, Layout) -> Result<(), String>;
        let tables: [(&str, Write); 2] = [
            (ONE_FILE, write_lineitem_onefile),
            (ONE_ROW_GROUP, write_lineitem_onerowgroup),
        ];
        for (name, write) in tables {
            let dir = self.dir(name);
            if dir.exists() {
                continue;
            }
            let staging = dir.with_extension(format!("tmp-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&staging);
            eprintln!("generating {} (once)…", dir.display());
            write(&staging, self.layout)?;
            std::fs::rename(&staging, &dir).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The folder of the one-file table.
const ONE_FILE: &str = "lineitem_onefile";
/// The folder of the one-file table of one row group.
const ONE_ROW_GROUP: &str = "lineitem_onerowgroup";

/// One data file's path, relative to the table root.
fn data_path(layout: Layout, file: usize) -> String {
    format!(
        "{PARTITION_COLUMN}={}/part-{file:05}-lineitem.snappy.parquet",
        layout.year_of(file)
    )
}

/// Writes data file `file` under `dir`; returns (size, stats).
fn write_data_file(dir: &Path, layout: Layout, file: usize) -> Result<(u64, Value), String> {
    let path = dir.join(data_path(layout, file));
    let mut writer = ParquetFileWriter::create(&path, file_schema(), Some(layout.rows_per_group))
        .map_err(|e| e.to_string())?;
    let mut rows = FileRows::new(layout, file);
    while let Some(batch) = rows.next_batch(BATCH_ROWS) {
        writer.write(&batch).map_err(|e| e.to_string())?;
    }
    let size = writer.finish().map_err(|e| e.to_string())?;
    Ok((size, rows.stats()))
}

/// The `create_actions` of a lineitem table with `protocol`.
fn create(protocol: Value) -> Vec<Value> {
    TableWriter::create_actions(&delta_schema(), &[PARTITION_COLUMN], json!({}), protocol)
}

/// Commits `adds` one year per commit after `create`, then a checkpoint of the last.
fn commit_by_year(
    dir: &Path,
    layout: Layout,
    create: Vec<Value>,
    adds: &[Value],
) -> Result<(), String> {
    let mut w = TableWriter::new();
    let mut snapshot = create.clone();
    w.commit("CREATE TABLE", create);
    for year in adds.chunks(layout.files_per_year) {
        w.commit("WRITE", year.to_vec());
        snapshot.extend(year.iter().cloned());
    }
    w.write_checkpoint(&snapshot).map_err(|e| e.to_string())?;
    w.write_to_dir(dir).map_err(|e| e.to_string())
}

/// Writes the lineitem table (files on as many threads as there are cores); returns its
/// `add` actions in file order.
pub fn write_lineitem(dir: &Path, layout: Layout) -> Result<Vec<Value>, String> {
    let files = layout.files();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, u64, Value)> = Vec::with_capacity(files);
    std::thread::scope(|s| -> Result<(), String> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let f = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if f >= files {
                            return Ok(out);
                        }
                        let (size, stats) = write_data_file(dir, layout, f)?;
                        out.push((f, size, stats));
                    }
                })
            })
            .collect();
        for w in workers {
            let part: Result<Vec<_>, String> = w
                .join()
                .map_err(|_| "a generator thread panicked".to_string())?;
            done.extend(part?);
        }
        Ok(())
    })?;
    done.sort_by_key(|d| d.0);
    let w = TableWriter::new();
    let adds: Vec<Value> = done
        .into_iter()
        .map(|(f, size, stats)| {
            w.add_action(
                &data_path(layout, f),
                size,
                layout.rows_per_file,
                json!({"l_year": layout.year_of(f).to_string()}),
                Some(stats),
            )
        })
        .collect();
    commit_by_year(
        dir,
        layout,
        create(json!({"minReaderVersion": 1, "minWriterVersion": 2})),
        &adds,
    )?;
    Ok(adds)
}

/// Writes `lineitem_onefile`: the rows of one year of `layout` in one data file (row groups
/// of `layout.rows_per_group` rows), one commit and a checkpoint.
pub fn write_lineitem_onefile(dir: &Path, layout: Layout) -> Result<(), String> {
    write_one_file_table(dir, layout.one_file())
}

/// Writes `lineitem_onerowgroup`: the rows of `lineitem_onefile` in one row group.
pub fn write_lineitem_onerowgroup(dir: &Path, layout: Layout) -> Result<(), String> {
    write_one_file_table(dir, layout.one_row_group())
}

/// A table of one data file of `one`'s rows, one commit and a checkpoint.
fn write_one_file_table(dir: &Path, one: Layout) -> Result<(), String> {
    let (size, stats) = write_data_file(dir, one, 0)?;
    let add = TableWriter::new().add_action(
        &data_path(one, 0),
        size,
        one.rows_per_file,
        json!({"l_year": one.year_of(0).to_string()}),
        Some(stats),
    );
    commit_by_year(
        dir,
        one,
        create(json!({"minReaderVersion": 1, "minWriterVersion": 2})),
        &[add],
    )
}

/// The rows deleted in file `file`: each row with probability 1/10, from a fixed seed.
pub fn deleted_rows(layout: Layout, file: usize) -> Vec<u64> {
    let mut rng = SplitMix64::new(SEED ^ 0xDE1E_7ED0, file as u64);
    (0..layout.rows_per_file as u64)
        .filter(|_| rng.next_u64().is_multiple_of(10))
        .collect()
}

/// Writes `lineitem_dv` beside `lineitem` under `root`: the same data files (hard links, or
/// copies where links fail), each with a deletion vector file.
pub fn write_lineitem_dv(root: &Path, layout: Layout, adds: &[Value]) -> Result<(), String> {
    let dir = root.join("lineitem_dv");
    let mut dv_adds = Vec::with_capacity(adds.len());
    for (f, add) in adds.iter().enumerate() {
        let rel = data_path(layout, f);
        let (from, to) = (root.join("lineitem").join(&rel), dir.join(&rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(|e| e.to_string())?;
        }
        let rows = deleted_rows(layout, f);
        let cardinality = rows.len() as u64;
        let (bytes, size) = deletion_vector_file(rows);
        let (descriptor, dv_path) = uuid_deletion_vector(f as u32, size, cardinality);
        std::fs::write(dir.join(dv_path), bytes).map_err(|e| e.to_string())?;
        let mut add = add.clone();
        add["add"]["deletionVector"] = descriptor;
        dv_adds.push(add);
    }
    let protocol = json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]});
    let mut actions = create(protocol);
    if let Some(meta) = actions.get_mut(1) {
        meta["metaData"]["configuration"] = json!({"delta.enableDeletionVectors": "true"});
    }
    commit_by_year(&dir, layout, actions, &dv_adds)
}

/// Writes a table of `commits` commits (the first creates it, each later one adds one small
/// file) and no checkpoint. Its data files are tiny: the scenario only opens the table.
pub fn write_commits(dir: &Path, commits: u64) -> Result<(), String> {
    let schema = json!({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": true, "metadata": {}}]});
    let mut w = TableWriter::new();
    w.commit(
        "CREATE TABLE",
        TableWriter::create_actions(
            &schema,
            &[],
            json!({}),
            json!({"minReaderVersion": 1, "minWriterVersion": 2}),
        ),
    );
    for v in 1..commits {
        let stats = json!({"minValues": {"id": v}, "maxValues": {"id": v}, "nullCount": {"id": 0}});
        let add = w.add_action(
            &format!("part-{v:05}.parquet"),
            600,
            1,
            json!({}),
            Some(stats),
        );
        w.commit("WRITE", vec![add]);
    }
    w.write_to_dir(dir).map_err(|e| e.to_string())
}
