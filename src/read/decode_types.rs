//! The Arrow schema a data file is decoded as: the Parquet reader's own inference from the
//! Parquet types (never from a writer's embedded Arrow schema, see [`reader_options`]), with
//! INT96 timestamps as microseconds and BYTE_ARRAY columns in the scan's string and binary
//! types ([`OutputTypes`]), given to the reader as its schema hint
//! (`ArrowReaderOptions::with_schema`). So `Utf8View`, say, comes straight out of the
//! decoder, which then builds views over its decoded pages instead of copying every value
//! into one offset buffer; no cast runs after decoding.
//!
//! The Parquet reader accepts only some hints (a BYTE_ARRAY string as any string encoding, an
//! unannotated BYTE_ARRAY as any string or binary encoding). Should it refuse one, the file
//! is decoded under the INT96 hint alone and the transform converts the columns (see
//! `schema::cast`): the same values, one copy more.

use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::file::metadata::ParquetMetaData;

use super::file::int96_as_micros;
use crate::error::{DeltaError, Phase, Result};
use crate::limits::map_groups::footer_for_decoder;
use crate::limits::pages::reader_options;
use crate::schema::OutputTypes;

/// `schema` with its string and binary columns in `output`'s types (see
/// [`OutputTypes::file_hint`]); `None` when nothing changes.
pub(crate) fn output_types_hint(schema: &Schema, output: OutputTypes) -> Option<SchemaRef> {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_data_type(output.file_hint(f.data_type()))
        })
        .collect();
    let changed = fields
        .iter()
        .zip(schema.fields().iter())
        .any(|(a, b)| a.data_type() != b.data_type());
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// The reader metadata of a file: its Arrow schema with INT96 as microseconds and strings and
/// binaries decoded as `output` asks.
pub(crate) fn reader_metadata(
    metadata: &Arc<ParquetMetaData>,
    path: &str,
    output: OutputTypes,
) -> Result<ArrowReaderMetadata> {
    let error = |source| DeltaError::Parquet {
        path: path.to_string(),
        phase: Phase::Read,
        source,
    };
    let options = reader_options();
    let metadata = &footer_for_decoder(metadata).map_err(error)?;
    let plain =
        ArrowReaderMetadata::try_new(Arc::clone(metadata), options.clone()).map_err(error)?;
    let int96 = int96_as_micros(metadata, plain.schema());
    let base = int96.clone().unwrap_or_else(|| Arc::clone(plain.schema()));
    if let Some(hint) = output_types_hint(&base, output) {
        let hinted =
            ArrowReaderMetadata::try_new(Arc::clone(metadata), options.clone().with_schema(hint));
        if let Ok(hinted) = hinted {
            return Ok(hinted);
        }
    }
    match int96 {
        Some(hint) => ArrowReaderMetadata::try_new(Arc::clone(metadata), options.with_schema(hint))
            .map_err(error),
        None => Ok(plain),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{
        ArrayRef, BinaryArray, LargeStringArray, RecordBatch, StringArray, StructArray,
    };
    use arrow_schema::{DataType, Fields};
    use bytes::Bytes;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataReader;

    /// A file with a string, a binary, a large string (its Arrow schema embedded), a struct of
    /// a string and a list of strings.
    fn file() -> Bytes {
        let inner = Fields::from(vec![Field::new("s", DataType::Utf8, true)]);
        let strings: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
        let mut items = ListBuilder::new(StringBuilder::new());
        items.values().append_value("x");
        items.append(true);
        items.append(false);
        let batch = RecordBatch::try_from_iter(vec![
            ("name", Arc::clone(&strings)),
            (
                "raw",
                Arc::new(BinaryArray::from(vec![Some(b"\x00".as_slice()), None])) as ArrayRef,
            ),
            (
                "big",
                Arc::new(LargeStringArray::from(vec![Some("b"), Some("c")])) as ArrayRef,
            ),
            (
                "st",
                Arc::new(StructArray::new(inner, vec![strings], None)) as ArrayRef,
            ),
            ("tags", Arc::new(items.finish()) as ArrayRef),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let mut buf = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap_or_else(|e| panic!("{e}"));
        writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
        writer.close().unwrap_or_else(|e| panic!("{e}"));
        Bytes::from(buf)
    }

    fn decoded(output: OutputTypes) -> RecordBatch {
        let data = file();
        let metadata = ParquetMetaDataReader::new()
            .parse_and_finish(&data)
            .unwrap_or_else(|e| panic!("{e}"));
        let reader = reader_metadata(&Arc::new(metadata), "f.parquet", output)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut batches = ParquetRecordBatchReaderBuilder::new_with_metadata(data, reader)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        batches
            .next()
            .unwrap_or_else(|| panic!("no batch"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_decoder_produces_the_output_types_at_every_depth() {
        let batch = decoded(OutputTypes::VIEWS);
        let types: Vec<String> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(types[0], "Utf8View");
        assert_eq!(types[1], "BinaryView");
        assert_eq!(types[2], "Utf8View", "the embedded LargeUtf8 is overridden");
        assert!(
            types[3].contains("Utf8View") && !types[3].contains("Utf8,"),
            "{}",
            types[3]
        );
        assert!(types[4].contains("Utf8View"), "{}", types[4]);
        let plain = decoded(OutputTypes::PLAIN);
        assert_eq!(plain.schema().field(2).data_type(), &DataType::Utf8);
        assert_eq!(plain.schema().field(0).data_type(), &DataType::Utf8);
        // The same values either way.
        for c in 0..batch.num_columns() {
            let a = crate::schema::cast::cast(batch.column(c), plain.column(c).data_type())
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&a, plain.column(c), "column {c}");
        }
    }

    #[test]
    fn no_hint_when_nothing_changes() {
        let schema = Schema::new(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        assert!(output_types_hint(&schema, OutputTypes::PLAIN).is_none());
        let hint = output_types_hint(&schema, OutputTypes::VIEWS).unwrap_or_else(|| panic!());
        assert_eq!(hint.field(1).data_type(), &DataType::Utf8View);
        assert_eq!(hint.field(0).data_type(), &DataType::Int64);
    }
}
