//! Record batches as a grid for the terminal (`dar head`, `dar sql`). Each cell is escaped
//! before the grid measures it, so a value holding a tab, a newline or an escape sequence
//! takes the width it is shown with and every row stays one line, aligned with the others.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::SchemaRef;
use delta_arrow_reader::DeltaError;

use super::arrow_error;
use super::terminal::safe;

/// `batches` (of `schema`) as a grid: a header of the column names, then a line per row.
pub fn format(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<String, DeltaError> {
    let header: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| safe(f.name(), false).into_owned())
        .collect();
    let mut grid = super::info::grid(header);
    // A null reads `null` (as Spark's `show()` prints it), so that it is not taken for an
    // empty string, in a cell or inside a list or struct (`[null, 1]`, not `[, 1]`).
    let options = FormatOptions::default()
        .with_display_error(true)
        .with_null("null");
    for batch in batches {
        let batch = super::text_formats::variants_as_json(batch).map_err(arrow_error)?;
        let columns = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow_error)?;
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| safe(&c.value(row).to_string(), false).into_owned())
                .collect();
            grid.add_row(cells);
        }
    }
    Ok(grid.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, StringArray};

    use super::*;

    #[test]
    fn cells_with_controls_stay_on_one_aligned_line() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![
            Some("tab\there"),
            Some("new\nline"),
            None,
            Some("\u{1b}[2J"),
        ]));
        let n: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
        let batch = RecordBatch::try_from_iter([("s\tname", s), ("n", n)]).unwrap();
        let text = format(&batch.schema(), &[batch]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Border, header, border, 4 rows, border.
        assert_eq!(lines.len(), 8, "{text}");
        let width = lines[0].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() == width), "{text}");
        assert!(text.contains("| tab\\there "), "{text}");
        assert!(text.contains("| new\\nline "), "{text}");
        assert!(text.contains("| \\u{1b}[2J "), "{text}");
        assert!(text.contains("| s\\tname "), "{text}");
        assert!(!text.contains('\t') && !text.contains('\u{1b}'), "{text}");
    }
}
