//! The scenarios: which table, which columns, which filter, and how each reader expresses
//! them (our text filter, SQL, or a check done on the rows).

use delta_arrow_reader::DeltaScanBuilder;
use delta_arrow_reader::DeltaTable;

use crate::lineitem::{Layout, FIRST_YEAR, PARTITION_COLUMN};

/// What a scenario measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Read rows: time to the last batch.
    Scan,
    /// Open the table and list its active files.
    LogLoad,
}

/// A row filter of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// `lo <= l_orderkey < hi`.
    Orderkeys(i64, i64),
    /// `l_year = year` (a partition column).
    Year(i32),
}

impl Filter {
    /// The filter in our text syntax.
    pub fn text(&self) -> String {
        match self {
            Filter::Orderkeys(lo, hi) => format!("l_orderkey >= {lo} and l_orderkey < {hi}"),
            Filter::Year(y) => format!("{PARTITION_COLUMN} = {y}"),
        }
    }

    /// The filter as a SQL condition.
    pub fn sql(&self) -> String {
        match self {
            Filter::Orderkeys(lo, hi) => format!("l_orderkey >= {lo} AND l_orderkey < {hi}"),
            Filter::Year(y) => format!("{PARTITION_COLUMN} = {y}"),
        }
    }
}

/// One benchmark scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Short name (`--only`, `--cell`).
    pub name: &'static str,
    /// What the table's row shows.
    pub title: String,
    /// What it measures.
    pub kind: Kind,
    /// The table: a folder name of the generated set, or `corpus:NAME`.
    pub table: &'static str,
    /// Read over the loopback HTTP server (50 ms per request) instead of the local disk.
    pub http: bool,
    /// Output columns (`None`: all).
    pub projection: Option<&'static [&'static str]>,
    /// Row filter.
    pub filter: Option<Filter>,
}

impl Scenario {
    /// Our scan of `table` with this scenario's projection and filter.
    pub fn scan_builder(&self, table: &DeltaTable) -> DeltaScanBuilder {
        let mut builder = table.scan();
        if let Some(columns) = self.projection {
            builder = builder.with_projection(columns.iter().copied());
        }
        if let Some(f) = self.filter {
            builder = builder.with_filter(f.text());
        }
        builder
    }
}

/// The 3-column projection.
pub const PROJECTION: &[&str] = &["l_orderkey", "l_extendedprice", "l_shipmode"];

/// The corpus table of the 300k-file log load.
pub const CORPUS_300K: &str = "kernel__300k-add-files-100-col-partitioned";

/// Every scenario, in the order printed.
pub fn all(layout: Layout, commits: u64) -> Vec<Scenario> {
    let (lo, hi) = layout.selective_orderkeys();
    let year = FIRST_YEAR + 3;
    let scan = |name, title: String, table, projection, filter| Scenario {
        name,
        title,
        kind: Kind::Scan,
        table,
        http: false,
        projection,
        filter,
    };
    vec![
        scan("full", "full scan".into(), "lineitem", None, None),
        scan(
            "projection",
            format!("3-column projection ({})", PROJECTION.join(", ")),
            "lineitem",
            Some(PROJECTION),
            None,
        ),
        scan(
            "selective",
            format!("1% selective: {lo} <= l_orderkey < {hi}"),
            "lineitem",
            None,
            Some(Filter::Orderkeys(lo, hi)),
        ),
        scan(
            "partition",
            format!("partition-pruned: {PARTITION_COLUMN} = {year}"),
            "lineitem",
            None,
            Some(Filter::Year(year)),
        ),
        scan(
            "dv",
            "full scan, deletion vectors on 10% of rows".into(),
            "lineitem_dv",
            None,
            None,
        ),
        scan(
            "onefile",
            format!(
                "full scan of a one-file table ({} rows, {} row groups)",
                layout.one_file().rows_per_file,
                layout
                    .one_file()
                    .rows_per_file
                    .div_ceil(layout.rows_per_group)
            ),
            "lineitem_onefile",
            None,
            None,
        ),
        scan(
            "onegroup",
            format!(
                "full scan of a one-file table of one row group ({} rows)",
                layout.one_row_group().rows_per_file
            ),
            "lineitem_onerowgroup",
            None,
            None,
        ),
        Scenario {
            name: "log300k",
            title: format!("300k-file log: open + list active files ({CORPUS_300K})"),
            kind: Kind::LogLoad,
            table: "corpus:kernel__300k-add-files-100-col-partitioned",
            http: false,
            projection: None,
            filter: None,
        },
        Scenario {
            name: "log10k",
            title: format!("{commits} commits, no checkpoint, HTTP 50 ms: open + list"),
            kind: Kind::LogLoad,
            table: "commits10k",
            http: true,
            projection: None,
            filter: None,
        },
        Scenario {
            name: "http",
            title: "full scan over HTTP, 50 ms per request (first batch / total)".into(),
            kind: Kind::Scan,
            table: "lineitem",
            http: true,
            projection: None,
            filter: None,
        },
    ]
}

impl Scenario {
    /// The SQL query of a scan scenario over table `lineitem`.
    pub fn sql(&self) -> String {
        let columns = self.projection.map_or("*".to_string(), |c| c.join(", "));
        match self.filter {
            Some(f) => format!("SELECT {columns} FROM lineitem WHERE {}", f.sql()),
            None => format!("SELECT {columns} FROM lineitem"),
        }
    }
}
