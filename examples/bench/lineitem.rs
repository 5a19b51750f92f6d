//! The lineitem-like rows of the benchmark table: TPC-H's `lineitem` columns and types
//! (longs, an int, decimals, one-letter flags, dates, short and free-text strings), generated
//! from a fixed seed, clustered by `l_orderkey` so that file and row-group statistics can
//! prune a range of it, and partitioned by `l_year` (the ship date's year).

use std::sync::Arc;

use arrow_array::builder::{
    Date32Builder, Decimal128Builder, Int32Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde_json::{json, Value};

use crate::rng::SplitMix64;

/// The seed of every benchmark table.
pub const SEED: u64 = 0x00DA_BE4C_0000_0001;

/// The first year; years run `FIRST_YEAR..FIRST_YEAR + YEARS`.
pub const FIRST_YEAR: i32 = 1992;

/// Year partitions.
pub const YEARS: usize = 7;

/// Lines per order: `l_orderkey` is `row / LINES_PER_ORDER + 1` over the whole table.
pub const LINES_PER_ORDER: u64 = 4;

/// The partition column.
pub const PARTITION_COLUMN: &str = "l_year";

/// How big the table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Data files per year partition.
    pub files_per_year: usize,
    /// Rows per data file.
    pub rows_per_file: usize,
    /// Rows per row group.
    pub rows_per_group: usize,
}

impl Layout {
    /// About 16M rows in 56 files of 4 row groups (about 530 MB).
    pub const FULL: Layout = Layout {
        files_per_year: 8,
        rows_per_file: 285_715,
        rows_per_group: 72_000,
    };
    /// A small table for smoke runs.
    pub const QUICK: Layout = Layout {
        files_per_year: 2,
        rows_per_file: 12_000,
        rows_per_group: 4_000,
    };

    /// The layout of `lineitem_onefile`: the rows of one year of this layout in one file
    /// (its `l_orderkey`s are those of the first year of `lineitem`).
    pub fn one_file(&self) -> Layout {
        Layout {
            files_per_year: 1,
            rows_per_file: self.files_per_year * self.rows_per_file,
            rows_per_group: self.rows_per_group,
        }
    }

    /// The layout of `lineitem_onerowgroup`: the rows of [`Layout::one_file`] in one row
    /// group (as writers that cut row groups by bytes, 128 MiB and more, leave them).
    pub fn one_row_group(&self) -> Layout {
        let one = self.one_file();
        Layout {
            rows_per_group: one.rows_per_file,
            ..one
        }
    }

    /// Data files in the table.
    pub fn files(&self) -> usize {
        self.files_per_year * YEARS
    }

    /// Rows in the table.
    pub fn rows(&self) -> u64 {
        (self.files() * self.rows_per_file) as u64
    }

    /// The year of file `file`.
    pub fn year_of(&self, file: usize) -> i32 {
        FIRST_YEAR + (file / self.files_per_year) as i32
    }

    /// `l_orderkey` of row `row` of file `file`.
    pub fn orderkey(&self, file: usize, row: usize) -> i64 {
        ((file * self.rows_per_file + row) as u64 / LINES_PER_ORDER + 1) as i64
    }

    /// An `l_orderkey` range `[lo, hi)` holding 1% of the rows, inside the fourth year.
    pub fn selective_orderkeys(&self) -> (i64, i64) {
        let orders = self.rows() / LINES_PER_ORDER;
        let lo = (orders * 55 / 100) as i64;
        (lo, lo + (orders / 100) as i64)
    }
}

/// The data file schema (without the partition column).
pub fn file_schema() -> SchemaRef {
    let dec = || DataType::Decimal128(12, 2);
    Arc::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_partkey", DataType::Int64, false),
        Field::new("l_suppkey", DataType::Int64, false),
        Field::new("l_linenumber", DataType::Int32, false),
        Field::new("l_quantity", dec(), false),
        Field::new("l_extendedprice", dec(), false),
        Field::new("l_discount", dec(), false),
        Field::new("l_tax", dec(), false),
        Field::new("l_returnflag", DataType::Utf8, false),
        Field::new("l_linestatus", DataType::Utf8, false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_commitdate", DataType::Date32, false),
        Field::new("l_receiptdate", DataType::Date32, false),
        Field::new("l_shipinstruct", DataType::Utf8, false),
        Field::new("l_shipmode", DataType::Utf8, false),
        Field::new("l_comment", DataType::Utf8, false),
    ]))
}

/// The Delta schema: the file columns and `l_year`.
pub fn delta_schema() -> Value {
    let types = [
        ("l_orderkey", "long"),
        ("l_partkey", "long"),
        ("l_suppkey", "long"),
        ("l_linenumber", "integer"),
        ("l_quantity", "decimal(12,2)"),
        ("l_extendedprice", "decimal(12,2)"),
        ("l_discount", "decimal(12,2)"),
        ("l_tax", "decimal(12,2)"),
        ("l_returnflag", "string"),
        ("l_linestatus", "string"),
        ("l_shipdate", "date"),
        ("l_commitdate", "date"),
        ("l_receiptdate", "date"),
        ("l_shipinstruct", "string"),
        ("l_shipmode", "string"),
        ("l_comment", "string"),
        (PARTITION_COLUMN, "integer"),
    ];
    let fields: Vec<Value> = types
        .iter()
        .map(|(name, t)| json!({"name": name, "type": t, "nullable": true, "metadata": {}}))
        .collect();
    json!({"type": "struct", "fields": fields})
}

const INSTRUCT: &[&str] = &[
    "DELIVER IN PERSON",
    "COLLECT COD",
    "NONE",
    "TAKE BACK RETURN",
];
const MODES: &[&str] = &["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
const WORDS: &[&str] = &[
    "furiously",
    "carefully",
    "quickly",
    "blithely",
    "slyly",
    "ironic",
    "regular",
    "final",
    "pending",
    "express",
    "special",
    "bold",
    "even",
    "silent",
    "unusual",
    "deposits",
    "requests",
    "packages",
    "accounts",
    "instructions",
    "theodolites",
    "pinto",
    "beans",
    "foxes",
    "ideas",
    "dependencies",
    "excuses",
    "platelets",
    "asymptotes",
    "courts",
    "dolphins",
    "multipliers",
    "warthogs",
    "frets",
    "dinos",
    "somas",
    "patterns",
    "braids",
    "haggle",
    "sleep",
    "wake",
    "cajole",
    "nag",
    "use",
    "boost",
    "affix",
    "detect",
    "nod",
    "integrate",
    "maintain",
    "among",
    "about",
    "above",
    "across",
    "after",
    "along",
    "the",
];

/// Days since the epoch of January 1st of `year`.
fn jan_first(year: i32) -> i32 {
    chrono::NaiveDate::from_ymd_opt(year, 1, 1)
        .map(|d| (d - chrono::NaiveDate::default()).num_days() as i32)
        .unwrap_or(0)
}

/// Column builders for one batch, and the file statistics as they fill.
struct Builders {
    ints: [Int64Builder; 3],
    linenumber: Int32Builder,
    decimals: [Decimal128Builder; 4],
    strings: [StringBuilder; 5],
    dates: [Date32Builder; 3],
}

impl Builders {
    fn new(rows: usize) -> Self {
        let dec =
            || Decimal128Builder::with_capacity(rows).with_data_type(DataType::Decimal128(12, 2));
        let text = |bytes| StringBuilder::with_capacity(rows, rows * bytes);
        Builders {
            ints: std::array::from_fn(|_| Int64Builder::with_capacity(rows)),
            linenumber: Int32Builder::with_capacity(rows),
            decimals: [dec(), dec(), dec(), dec()],
            strings: [text(1), text(1), text(17), text(5), text(27)],
            dates: std::array::from_fn(|_| Date32Builder::with_capacity(rows)),
        }
    }

    fn finish(mut self) -> Vec<ArrayRef> {
        let [o, p, s] = &mut self.ints;
        let [q, e, d, t] = &mut self.decimals;
        let [rf, ls, si, sm, c] = &mut self.strings;
        let [sd, cd, rd] = &mut self.dates;
        let decimal = |b: &mut Decimal128Builder| -> ArrayRef { Arc::new(b.finish()) };
        vec![
            Arc::new(o.finish()),
            Arc::new(p.finish()),
            Arc::new(s.finish()),
            Arc::new(self.linenumber.finish()),
            decimal(q),
            decimal(e),
            decimal(d),
            decimal(t),
            Arc::new(rf.finish()),
            Arc::new(ls.finish()),
            Arc::new(sd.finish()),
            Arc::new(cd.finish()),
            Arc::new(rd.finish()),
            Arc::new(si.finish()),
            Arc::new(sm.finish()),
            Arc::new(c.finish()),
        ]
    }
}

/// Generates the rows of one data file, batch by batch.
pub struct FileRows {
    layout: Layout,
    file: usize,
    next_row: usize,
    rng: SplitMix64,
    comment: String,
    stats: Stats,
}

impl FileRows {
    /// The rows of data file `file` of `layout`.
    pub fn new(layout: Layout, file: usize) -> Self {
        FileRows {
            layout,
            file,
            next_row: 0,
            rng: SplitMix64::new(SEED, file as u64),
            comment: String::with_capacity(64),
            stats: Stats::default(),
        }
    }

    /// The next batch of at most `max_rows` rows, `None` after the last.
    pub fn next_batch(&mut self, max_rows: usize) -> Option<RecordBatch> {
        let n = max_rows.min(self.layout.rows_per_file - self.next_row);
        if n == 0 {
            return None;
        }
        let mut b = Builders::new(n);
        let year_start = jan_first(self.layout.year_of(self.file));
        let year_days = jan_first(self.layout.year_of(self.file) + 1) - year_start;
        for row in self.next_row..self.next_row + n {
            let r = &mut self.rng;
            let orderkey = self.layout.orderkey(self.file, row);
            let linenumber =
                ((self.file * self.layout.rows_per_file + row) as u64 % LINES_PER_ORDER + 1) as i32;
            let partkey = r.range(1, 2_000_000);
            let quantity = r.range(1, 50);
            let price = 90_000 + (partkey % 20_000) * 50 + r.range(0, 99);
            let ship = year_start + r.range(0, i64::from(year_days) - 1) as i32;
            let commit = ship + r.range(-30, 60) as i32;
            let receipt = ship + r.range(1, 30) as i32;
            b.ints[0].append_value(orderkey);
            b.ints[1].append_value(partkey);
            b.ints[2].append_value(r.range(1, 100_000));
            b.linenumber.append_value(linenumber);
            b.decimals[0].append_value(i128::from(quantity * 100));
            b.decimals[1].append_value(i128::from(quantity * price));
            b.decimals[2].append_value(i128::from(r.range(0, 10)));
            b.decimals[3].append_value(i128::from(r.range(0, 8)));
            b.strings[0].append_value(r.pick(&["R", "A", "N"]));
            b.strings[1].append_value(if ship > jan_first(1995) + 170 {
                "O"
            } else {
                "F"
            });
            b.strings[2].append_value(r.pick(INSTRUCT));
            b.strings[3].append_value(r.pick(MODES));
            b.dates[0].append_value(ship);
            b.dates[1].append_value(commit);
            b.dates[2].append_value(receipt);
            let len = r.range(10, 43) as usize;
            self.comment.clear();
            while self.comment.len() < len {
                if !self.comment.is_empty() {
                    self.comment.push(' ');
                }
                self.comment.push_str(r.pick(WORDS));
            }
            self.comment.truncate(len);
            b.strings[4].append_value(&self.comment);
            self.stats
                .add(orderkey, partkey, quantity, [ship, commit, receipt]);
        }
        self.next_row += n;
        let columns = b.finish();
        RecordBatch::try_new(file_schema(), columns).ok()
    }

    /// The file's `stats` (min, max, null counts) once every batch was taken.
    pub fn stats(&self) -> Value {
        self.stats.to_json()
    }
}

/// Running min and max of the columns the log's statistics describe.
#[derive(Default)]
struct Stats {
    orderkey: Option<(i64, i64)>,
    partkey: Option<(i64, i64)>,
    quantity: Option<(i64, i64)>,
    dates: [Option<(i32, i32)>; 3],
}

fn widen<T: Ord + Copy>(slot: &mut Option<(T, T)>, v: T) {
    *slot = Some(match *slot {
        None => (v, v),
        Some((lo, hi)) => (lo.min(v), hi.max(v)),
    });
}

fn date_text(days: i32) -> String {
    (chrono::NaiveDate::default() + chrono::Duration::days(i64::from(days)))
        .format("%Y-%m-%d")
        .to_string()
}

impl Stats {
    fn add(&mut self, orderkey: i64, partkey: i64, quantity: i64, dates: [i32; 3]) {
        widen(&mut self.orderkey, orderkey);
        widen(&mut self.partkey, partkey);
        widen(&mut self.quantity, quantity);
        for (slot, d) in self.dates.iter_mut().zip(dates) {
            widen(slot, d);
        }
    }

    fn to_json(&self) -> Value {
        let mut min = serde_json::Map::new();
        let mut max = serde_json::Map::new();
        let pairs = [("l_orderkey", self.orderkey), ("l_partkey", self.partkey)];
        for (name, v) in pairs {
            if let Some((lo, hi)) = v {
                min.insert(name.into(), json!(lo));
                max.insert(name.into(), json!(hi));
            }
        }
        if let Some((lo, hi)) = self.quantity {
            min.insert("l_quantity".into(), json!(lo as f64));
            max.insert("l_quantity".into(), json!(hi as f64));
        }
        let names = ["l_shipdate", "l_commitdate", "l_receiptdate"];
        for (name, v) in names.iter().zip(self.dates) {
            if let Some((lo, hi)) = v {
                min.insert((*name).into(), json!(date_text(lo)));
                max.insert((*name).into(), json!(date_text(hi)));
            }
        }
        let nulls: serde_json::Map<String, Value> = file_schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), json!(0)))
            .collect();
        json!({"minValues": min, "maxValues": max, "nullCount": nulls})
    }
}
