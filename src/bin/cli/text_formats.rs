//! CSV and JSON lines for every column type a Delta table can hold. Arrow's CSV writer has no
//! nested values and its JSON writer takes only maps with string keys; `dar export` and
//! `dar sql --csv/--json` go through here instead:
//!
//! - in CSV, a nested value (array, struct, map) is one field holding its JSON text, with
//!   every struct field named (a null one as `null`), e.g. `"{""a"":1,""b"":null}"`;
//! - in both, a map is a JSON object whose keys are the map keys as text (`{"1":2}` for a
//!   `map<int,int>`), as Spark's `to_json` writes them, at any depth;
//! - in JSON, a float that is not finite is the string `"NaN"`, `"Infinity"` or
//!   `"-Infinity"` (as Spark and Jackson write them), not `null`, which arrow-json writes
//!   and which reads back as a missing value;
//! - in JSON, a null is written as `null`, in every object (a row, a struct, a map's
//!   value): a column whose values are all null is still there for a reader that takes the
//!   columns from the data;
//! - a Delta `variant` (a struct of `metadata` and `value` binaries) is the JSON it encodes
//!   (`variant_json`), at any depth;
//! - CSV lines are written by `csv_rows`, which keeps a null apart from an empty value.

use std::io::Write;
use std::sync::{Arc, LazyLock};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, MapArray, RecordBatch, StringArray};
use arrow_buffer::ArrowNativeType;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_json::writer::{
    make_encoder, Encoder, EncoderFactory, EncoderOptions, LineDelimited, NullableEncoder,
    WriterBuilder,
};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Schema, SchemaRef};
use delta_arrow_reader::DeltaError;

use super::arrow_error;

/// A JSON lines writer whose maps may have keys of any type and whose non-finite floats
/// are strings (see the module doc).
pub fn json_writer<W: Write>(out: W) -> arrow_json::Writer<W, LineDelimited> {
    WriterBuilder::new()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(TextEncoders))
        .build::<W, LineDelimited>(out)
}

/// `batches` as JSON lines, one object per row.
pub fn json_lines(batches: &[RecordBatch]) -> Result<String, DeltaError> {
    let mut buf = Vec::new();
    let mut w = json_writer(&mut buf);
    for b in batches {
        w.write(b).map_err(arrow_error)?;
    }
    w.finish().map_err(arrow_error)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `batches` as CSV with a header row (`dar sql --csv`).
#[cfg(test)]
pub fn csv_lines(batches: &[RecordBatch]) -> Result<String, DeltaError> {
    csv_piece(batches, true)
}

/// `batches` as CSV lines, after a header row when `header` is set (the first piece of a
/// streamed result).
#[cfg(any(test, feature = "datafusion"))]
pub fn csv_piece(batches: &[RecordBatch], header: bool) -> Result<String, DeltaError> {
    let mut buf = Vec::new();
    let mut w = super::csv_rows::CsvWriter::new(&mut buf, header);
    for b in batches {
        w.write(b).map_err(arrow_error)?;
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `schema` as the CSV writer sees it: nested columns become (nullable) text.
pub fn csv_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| f.data_type().is_nested()) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema.fields().iter().map(csv_field).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn csv_field(field: &FieldRef) -> FieldRef {
    if field.data_type().is_nested() {
        Arc::new(Field::new(field.name(), DataType::Utf8, true))
    } else {
        field.clone()
    }
}

/// `batch` with each nested column replaced by the JSON text of its values (nulls stay
/// null), ready for the CSV writer.
pub fn csv_batch(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    nested_as_json(batch, |f| f.data_type().is_nested())
}

/// `batch` with each column that holds a variant at any depth replaced by its JSON text (the
/// terminal grid, whose own display would show a variant's two binaries).
pub fn variants_as_json(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    nested_as_json(batch, holds_variant)
}

fn holds_variant(field: &Field) -> bool {
    if super::variant_json::is_variant(field) {
        return true;
    }
    match field.data_type() {
        DataType::Struct(children) => children.iter().any(|c| holds_variant(c)),
        DataType::List(item)
        | DataType::LargeList(item)
        | DataType::ListView(item)
        | DataType::LargeListView(item)
        | DataType::FixedSizeList(item, _)
        | DataType::Map(item, _) => holds_variant(item),
        _ => false,
    }
}

/// `batch` with the nested columns that `which` picks replaced by the JSON text of their
/// values (nulls stay null).
fn nested_as_json(
    batch: &RecordBatch,
    which: impl Fn(&Field) -> bool,
) -> Result<RecordBatch, ArrowError> {
    let schema = batch.schema();
    if !schema
        .fields()
        .iter()
        .any(|f| f.data_type().is_nested() && which(f))
    {
        return Ok(batch.clone());
    }
    let options = EncoderOptions::default()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(TextEncoders));
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    let mut fields: Vec<FieldRef> = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if field.data_type().is_nested() && which(field) {
            columns.push(Arc::new(json_texts(field, column.as_ref(), &options)?));
            fields.push(csv_field(field));
        } else {
            columns.push(column.clone());
            fields.push(field.clone());
        }
    }
    let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns)
}

/// The JSON text of each value of `column`; null where the value is null.
fn json_texts(
    field: &FieldRef,
    column: &dyn Array,
    options: &EncoderOptions,
) -> Result<StringArray, ArrowError> {
    let mut encoder = make_encoder(field, column, options)?;
    let mut texts: Vec<Option<String>> = Vec::with_capacity(column.len());
    let mut buffer = Vec::new();
    for row in 0..column.len() {
        if encoder.is_null(row) {
            texts.push(None);
            continue;
        }
        buffer.clear();
        encoder.encode(row, &mut buffer);
        let text = String::from_utf8(std::mem::take(&mut buffer)).map_err(|e| {
            ArrowError::JsonError(format!("a value of '{}' is not UTF-8: {e}", field.name()))
        })?;
        texts.push(Some(text));
    }
    Ok(StringArray::from(texts))
}

/// The encoders that differ from arrow-json's: variants (as the JSON they encode), floats
/// (non-finite ones as strings) and maps
/// (objects keyed by the keys' text: arrow-json refuses keys that are not strings, and
/// leaves out an entry whose value is null unless every null is written); every other type
/// is left to arrow-json's own encoders.
#[derive(Debug)]
struct TextEncoders;

impl EncoderFactory for TextEncoders {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        if matches!(array.data_type(), DataType::Float32 | DataType::Float64) {
            let finite = make_encoder(field, array, &PLAIN)?;
            let encoder = FloatText { array, finite };
            return Ok(Some(NullableEncoder::new(
                Box::new(encoder),
                array.nulls().cloned(),
            )));
        }
        // By the array's type: arrow-json hands a list's values over with the list's field.
        if super::variant_json::is_variant_type(array.data_type()) {
            let raw = make_encoder(field, array, &PLAIN)?;
            let encoder = VariantText {
                array: array.as_struct(),
                raw,
            };
            return Ok(Some(NullableEncoder::new(
                Box::new(encoder),
                array.nulls().cloned(),
            )));
        }
        let DataType::Map(_, _) = array.data_type() else {
            return Ok(None);
        };
        let map = array.as_map();
        let encoder = TextKeyedMap::try_new(map, options)?;
        Ok(Some(NullableEncoder::new(
            Box::new(encoder),
            map.nulls().cloned(),
        )))
    }
}

/// arrow-json's own encoders (no factory), for the values written as it writes them.
static PLAIN: LazyLock<EncoderOptions> = LazyLock::new(EncoderOptions::default);

/// A float column: finite values as arrow-json writes them, the others as strings.
struct FloatText<'a> {
    array: &'a dyn Array,
    finite: NullableEncoder<'a>,
}

impl Encoder for FloatText<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value = match self.array.data_type() {
            DataType::Float32 => f64::from(self.array.as_primitive::<Float32Type>().value(idx)),
            _ => self.array.as_primitive::<Float64Type>().value(idx),
        };
        if value.is_finite() {
            self.finite.encode(idx, out);
        } else if value.is_nan() {
            out.extend_from_slice(b"\"NaN\"");
        } else if value > 0.0 {
            out.extend_from_slice(b"\"Infinity\"");
        } else {
            out.extend_from_slice(b"\"-Infinity\"");
        }
    }
}

/// A variant column: each value as the JSON it encodes (`variant_json`), or as its raw
/// struct of two binaries when its bytes do not decode.
struct VariantText<'a> {
    array: &'a arrow_array::StructArray,
    raw: NullableEncoder<'a>,
}

impl Encoder for VariantText<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        if super::variant_json::write_row(self.array, idx, out).is_err() {
            self.raw.encode(idx, out);
        }
    }
}

/// One map column encoded as JSON objects: a key of a simple type written as its display
/// text (`1`, `2024-01-31`), a nested one (struct, list, map) as its own JSON text, which,
/// unlike a display text such as `{a: 1, b: x, y}`, reads back unambiguously.
struct TextKeyedMap<'a> {
    map: &'a MapArray,
    keys: MapKeys<'a>,
    values: NullableEncoder<'a>,
    key_text: String,
}

/// How a map's keys become the text of JSON object keys.
enum MapKeys<'a> {
    /// Display text.
    Shown(ArrayFormatter<'a>),
    /// JSON text (nested keys), written into `scratch` first.
    Json {
        encoder: NullableEncoder<'a>,
        scratch: Vec<u8>,
    },
}

impl<'a> TextKeyedMap<'a> {
    fn try_new(map: &'a MapArray, options: &'a EncoderOptions) -> Result<Self, ArrowError> {
        let field = |i: usize| {
            map.entries().fields().get(i).ok_or_else(|| {
                ArrowError::InvalidArgumentError("a map without its key or value field".into())
            })
        };
        let keys = if map.keys().data_type().is_nested() {
            MapKeys::Json {
                encoder: make_encoder(field(0)?, map.keys().as_ref(), options)?,
                scratch: Vec::new(),
            }
        } else {
            MapKeys::Shown(ArrayFormatter::try_new(
                map.keys().as_ref(),
                &FormatOptions::default(),
            )?)
        };
        let values = make_encoder(field(1)?, map.values().as_ref(), options)?;
        Ok(Self {
            map,
            keys,
            values,
            key_text: String::new(),
        })
    }

    /// The text of entry `entry`'s key, in `self.key_text`.
    fn key_text(&mut self, entry: usize) {
        self.key_text.clear();
        match &mut self.keys {
            // Writing to a String only fails if the key's Display does; the key is then
            // written empty rather than aborting the export halfway.
            MapKeys::Shown(keys) => {
                let _ = std::fmt::Write::write_fmt(
                    &mut self.key_text,
                    format_args!("{}", keys.value(entry)),
                );
            }
            MapKeys::Json { encoder, scratch } => {
                scratch.clear();
                encoder.encode(entry, scratch);
                self.key_text.push_str(&String::from_utf8_lossy(scratch));
            }
        }
    }
}

impl Encoder for TextKeyedMap<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let offsets = self.map.value_offsets();
        let (start, end) = (offsets[idx].as_usize(), offsets[idx + 1].as_usize());
        out.push(b'{');
        for entry in start..end {
            if entry > start {
                out.push(b',');
            }
            self.key_text(entry);
            // A string's JSON form cannot fail to serialise into a Vec.
            let _ = serde_json::to_writer(&mut *out, &self.key_text);
            out.push(b':');
            if self.values.is_null(entry) {
                out.extend_from_slice(b"null");
            } else {
                self.values.encode(entry, out);
            }
        }
        out.push(b'}');
    }
}

/// A batch of nullable `(name, column)` pairs (the text formats' tests).
#[cfg(test)]
pub fn batch_of(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{BinaryArray, Int32Array, StructArray};
    use arrow_schema::Fields;

    fn int_map() -> ArrayRef {
        let mut b = MapBuilder::new(None, Int32Builder::new(), Int32Builder::new());
        b.keys().append_value(1);
        b.values().append_value(10);
        b.keys().append_value(-2);
        b.values().append_null();
        b.append(true).unwrap_or_else(|e| panic!("{e}"));
        b.append(false).unwrap_or_else(|e| panic!("{e}"));
        b.append(true).unwrap_or_else(|e| panic!("{e}"));
        Arc::new(b.finish())
    }

    fn string_map() -> ArrayRef {
        let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        b.keys().append_value("a\"b");
        b.values().append_value(1);
        // A null value is an entry still (JSON lines left it out before).
        b.keys().append_value("z");
        b.values().append_null();
        b.append(true).unwrap_or_else(|e| panic!("{e}"));
        b.append(true).unwrap_or_else(|e| panic!("{e}"));
        b.append(false).unwrap_or_else(|e| panic!("{e}"));
        Arc::new(b.finish())
    }

    fn list() -> ArrayRef {
        let mut b = ListBuilder::new(Int32Builder::new());
        b.values().append_value(1);
        b.values().append_null();
        b.append(true);
        b.append(false);
        b.append(true);
        Arc::new(b.finish())
    }

    /// A struct holding a map<int,int>: the keys of a nested map are text too.
    fn nested() -> ArrayRef {
        let map = int_map();
        let x: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), None, Some(9)]));
        let fields = Fields::from(vec![
            Field::new("x", DataType::Int32, true),
            Field::new("m", map.data_type().clone(), true),
        ]);
        Arc::new(StructArray::try_new(fields, vec![x, map], None).unwrap_or_else(|e| panic!("{e}")))
    }

    fn batch() -> RecordBatch {
        let id: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        let bytes: ArrayRef = Arc::new(BinaryArray::from(vec![
            Some(b"\x01\xff".as_slice()),
            None,
            Some(b"".as_slice()),
        ]));
        let columns = [
            ("id", id),
            ("bin", bytes),
            ("im", int_map()),
            ("sm", string_map()),
            ("l", list()),
            ("s", nested()),
        ];
        batch_of(columns.to_vec())
    }

    fn csv_text(batch: &RecordBatch) -> String {
        csv_lines(std::slice::from_ref(batch)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn csv_holds_nested_values_as_json_text() {
        let text = csv_text(&batch());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "id,bin,im,sm,l,s");
        assert_eq!(
            lines[1],
            r#"1,01ff,"{""1"":10,""-2"":null}","{""a\""b"":1,""z"":null}","[1,null]","{""x"":7,""m"":{""1"":10,""-2"":null}}""#
        );
        assert_eq!(lines[2], r#"2,,,{},,"{""x"":null,""m"":null}""#);
        // An empty binary value is quoted; a null is an empty field.
        assert_eq!(lines[3], r#"3,"",{},,[],"{""x"":9,""m"":{}}""#);
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn csv_schema_names_every_column_and_types_nested_ones_as_text() {
        let batch = batch();
        let schema = csv_schema(&batch.schema());
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["id", "bin", "im", "sm", "l", "s"]);
        assert_eq!(schema.field(0).data_type(), &DataType::Int32);
        assert_eq!(schema.field(1).data_type(), &DataType::Binary);
        for i in 2..6 {
            assert_eq!(schema.field(i).data_type(), &DataType::Utf8);
        }
        // Without nested columns a batch goes through untouched.
        let flat = batch.project(&[0, 1]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(csv_batch(&flat).unwrap_or_else(|e| panic!("{e}")), flat);
    }

    /// Floats that are not finite stay what they are (strings, as Spark writes them), in
    /// JSON lines and in a nested value's JSON in CSV; finite ones as arrow-json writes them.
    #[test]
    fn non_finite_floats_are_not_null() {
        use arrow_array::{Float32Array, Float64Array, ListArray};
        let doubles: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(1.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            None,
        ]));
        let floats: ArrayRef = Arc::new(Float32Array::from(vec![
            Some(0.25f32),
            Some(f32::NAN),
            None,
            Some(f32::NEG_INFINITY),
            Some(-2.0),
        ]));
        let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(vec![
            Some(vec![Some(f64::NAN), Some(2.0)]),
            None,
            Some(vec![]),
            Some(vec![Some(f64::INFINITY)]),
            Some(vec![None]),
        ]));
        let schema = Arc::new(Schema::new(vec![
            Field::new("d", DataType::Float64, true),
            Field::new("f", DataType::Float32, true),
            Field::new("l", list.data_type().clone(), true),
        ]));
        let batch = RecordBatch::try_new(schema, vec![doubles, floats, list])
            .unwrap_or_else(|e| panic!("{e}"));
        let lines = json_lines(std::slice::from_ref(&batch)).unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<&str> = lines.lines().collect();
        assert_eq!(
            lines,
            [
                r#"{"d":1.5,"f":0.25,"l":["NaN",2.0]}"#,
                r#"{"d":"NaN","f":"NaN","l":null}"#,
                r#"{"d":"Infinity","f":null,"l":[]}"#,
                r#"{"d":"-Infinity","f":"-Infinity","l":["Infinity"]}"#,
                r#"{"d":null,"f":-2.0,"l":[null]}"#,
            ]
        );
        let csv = csv_lines(&[batch]).unwrap_or_else(|e| panic!("{e}"));
        let csv: Vec<&str> = csv.lines().collect();
        assert_eq!(csv[1], r#"1.5,0.25,"[""NaN"",2.0]""#);
        assert_eq!(csv[2], "NaN,NaN,");
    }

    #[test]
    fn json_lines_take_maps_with_keys_of_any_type() {
        let mut out = Vec::new();
        {
            let mut w = json_writer(&mut out);
            w.write(&batch()).unwrap_or_else(|e| panic!("{e}"));
            w.finish().unwrap_or_else(|e| panic!("{e}"));
        }
        let text = String::from_utf8(out).unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
            .collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            serde_json::json!({
                "id": 1, "bin": "01ff", "im": {"1": 10, "-2": null}, "sm": {"a\"b": 1, "z": null},
                "l": [1, null], "s": {"x": 7, "m": {"1": 10, "-2": null}}
            })
        );
        // Nulls are written, in a row and in a struct.
        assert_eq!(
            rows[1],
            serde_json::json!({
                "id": 2, "bin": null, "im": null, "sm": {}, "l": null, "s": {"x": null, "m": null}
            })
        );
        assert_eq!(
            rows[2],
            serde_json::json!({
                "id": 3, "bin": "", "im": {}, "sm": null, "l": [], "s": {"x": 9, "m": {}}
            })
        );
    }

    #[test]
    fn nested_map_keys_are_written_as_their_json_text() {
        use arrow_array::{Int32Array, MapArray, StructArray};
        use arrow_buffer::OffsetBuffer;
        let key_fields = arrow_schema::Fields::from(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Utf8, true),
        ]);
        let keys = StructArray::new(
            key_fields.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
                Arc::new(StringArray::from(vec![Some("x, y"), None])) as ArrayRef,
            ],
            None,
        );
        let entries = arrow_schema::Fields::from(vec![
            Field::new("key", DataType::Struct(key_fields), false),
            Field::new("value", DataType::Int32, true),
        ]);
        let map = MapArray::new(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(entries.clone()),
                false,
            )),
            OffsetBuffer::new(vec![0, 2].into()),
            StructArray::new(
                entries,
                vec![
                    Arc::new(keys) as ArrayRef,
                    Arc::new(Int32Array::from(vec![10, 20])) as ArrayRef,
                ],
                None,
            ),
            None,
            false,
        );
        let batch = batch_of(vec![("m", Arc::new(map) as ArrayRef)]);
        let text = json_lines(&[batch]).unwrap_or_else(|e| panic!("{e}"));
        let row: serde_json::Value =
            serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{text}: {e}"));
        let m = row["m"].as_object().unwrap_or_else(|| panic!("{text}"));
        let keys: Vec<serde_json::Value> = m
            .keys()
            .map(|k| serde_json::from_str(k).unwrap_or_else(|e| panic!("{k}: {e}")))
            .collect();
        assert_eq!(
            keys,
            [
                serde_json::json!({"a": 1, "b": "x, y"}),
                serde_json::json!({"a": 2, "b": null})
            ]
        );
    }
}
