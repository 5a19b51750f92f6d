//! Rows of record batches as sorted text, to compare scans whose row order is not meaningful
//! (shared by the native and the wasm32 test binaries).

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};

/// Every row of `batches` as `a|b|c` (nulls as `NULL`), sorted: row order is not meaningful.
pub fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let formatters: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| {
                ArrayFormatter::try_new(c.as_ref(), &options).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}
