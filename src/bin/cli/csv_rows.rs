//! CSV that keeps a null apart from an empty value: a null is an empty field, an empty text
//! or binary value is a quoted empty field (`""`), as PostgreSQL's `COPY … CSV` and
//! Python's `csv` module write them. Arrow's CSV writer writes both as an empty field (its
//! `csv` crate quotes an empty field only when it is a record's only one), so the fields are
//! quoted here; each value is formatted by Arrow's display formatter with the options Arrow's
//! CSV writer uses by default, and a nested value is its JSON text (`text_formats`).
//!
//! A field is quoted when it holds a comma, a double quote (doubled inside), a carriage
//! return or a line feed, or when it is an empty value; lines end with `\n`.

use std::io::Write;

use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, SchemaRef};

use super::text_formats::{csv_batch, csv_schema};

/// Writes batches as CSV lines to `out`, after a header row (once) when asked for.
pub struct CsvWriter<W: Write> {
    out: W,
    header_due: bool,
    line: Vec<u8>,
    value: String,
}

impl<W: Write> CsvWriter<W> {
    /// A writer that starts with a header row when `header` is set.
    pub fn new(out: W, header: bool) -> Self {
        CsvWriter {
            out,
            header_due: header,
            line: Vec::new(),
            value: String::new(),
        }
    }

    /// Writes the header when it is still due, then every row of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        let batch = csv_batch(batch)?;
        self.line.clear();
        if self.header_due {
            self.header_due = false;
            push_header(&mut self.line, &batch.schema());
        }
        let options = FormatOptions::default().with_null("");
        let columns = batch.columns();
        let formatters = columns
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            for (i, (column, formatter)) in columns.iter().zip(&formatters).enumerate() {
                if i > 0 {
                    self.line.push(b',');
                }
                if column.is_null(row) {
                    continue;
                }
                self.value.clear();
                formatter.value(row).write(&mut self.value).map_err(|e| {
                    ArrowError::CsvError(format!(
                        "cannot format row {}, column {}: {e}",
                        row + 1,
                        i + 1
                    ))
                })?;
                push_field(&mut self.line, &self.value);
            }
            self.line.push(b'\n');
        }
        self.out
            .write_all(&self.line)
            .map_err(|e| ArrowError::IoError(e.to_string(), e))
    }

    /// The header alone (when still due) for a result of no rows, so its columns are known.
    pub fn write_header_of(&mut self, schema: &SchemaRef) -> Result<(), ArrowError> {
        if !self.header_due {
            return Ok(());
        }
        self.write(&RecordBatch::new_empty(csv_schema(schema)))
    }

    /// The output, to flush.
    pub fn into_inner(self) -> W {
        self.out
    }
}

fn push_header(line: &mut Vec<u8>, schema: &SchemaRef) {
    for (i, field) in schema.fields().iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        push_field(line, field.name());
    }
    line.push(b'\n');
}

/// `text` as one CSV field of a value that is not null: quoted when empty or when it holds a
/// comma, quote, CR or LF.
fn push_field(line: &mut Vec<u8>, text: &str) {
    let quote = text.is_empty()
        || text
            .bytes()
            .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'));
    if !quote {
        line.extend_from_slice(text.as_bytes());
        return;
    }
    line.push(b'"');
    for b in text.bytes() {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BinaryArray, Int32Array, StringArray, StringViewArray};

    use super::*;

    fn text(batches: &[RecordBatch], header: bool) -> String {
        let mut out = Vec::new();
        let mut w = CsvWriter::new(&mut out, header);
        for b in batches {
            w.write(b).unwrap_or_else(|e| panic!("{e}"));
        }
        String::from_utf8(out).unwrap_or_else(|e| panic!("{e}"))
    }

    fn batch() -> RecordBatch {
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "id",
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])),
            ),
            (
                "s",
                Arc::new(StringArray::from(vec![Some(""), None, Some("a,\"b\"\nc")])),
            ),
            (
                "v",
                Arc::new(StringViewArray::from(vec![None, Some(""), Some("x")])),
            ),
            (
                "b",
                Arc::new(BinaryArray::from(vec![
                    Some(&b""[..]),
                    None,
                    Some(&b"\x01\xff"[..]),
                ])),
            ),
        ];
        super::super::text_formats::batch_of(columns)
    }

    #[test]
    fn a_null_is_an_empty_field_and_an_empty_value_is_quoted() {
        assert_eq!(
            text(&[batch()], true),
            "id,s,v,b\n1,\"\",,\"\"\n,,\"\",\n3,\"a,\"\"b\"\"\nc\",x,01ff\n"
        );
    }

    #[test]
    fn the_header_comes_once_and_only_when_asked() {
        let b = batch();
        let two = text(&[b.clone(), b.clone()], true);
        assert_eq!(two.matches("id,s,v,b").count(), 1);
        // A header, then 3 rows a batch, one of them over two lines.
        assert_eq!(two.lines().count(), 9);
        assert!(!text(&[b], false).contains("id,s,v,b"));
    }

    #[test]
    fn no_rows_still_write_the_header() {
        let schema = batch().schema();
        let mut out = Vec::new();
        let mut w = CsvWriter::new(&mut out, true);
        w.write_header_of(&schema).unwrap_or_else(|e| panic!("{e}"));
        w.write_header_of(&schema).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out), "id,s,v,b\n");
    }
}
