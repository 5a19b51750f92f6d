//! From what a data file holds to what the table's logical schema says, batch by batch.
//!
//! A data file stores columns under their physical names (column mapping), possibly with
//! older or narrower types (schema evolution, type widening), timestamps in any unit (INT96,
//! milliseconds, nanoseconds), and without the partition columns. [`FileTransform`] is
//! computed once per file from the file's Arrow schema and applied to every batch:
//! it selects each logical column by physical name (or Parquet field id in id mode), renames
//! nested fields to their logical names, casts to the logical Arrow type, fills columns the
//! file lacks with nulls, and materialises partition columns as constants.
//!
//! A constant or all-null column is built once per file at the first batch's length and
//! reused by every later batch of that length or shorter (shared, or a zero-copy slice):
//! building it per batch wrote a partition value's bytes once per row of the table.

use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::{
    new_null_array, Array, ArrayRef, ListArray, MapArray, RecordBatch, RecordBatchOptions,
    StructArray,
};
use arrow_schema::{DataType, Fields, Schema, SchemaRef};

use super::file_fields::{arrow_field_id, FileFields};
use crate::error::{DeltaError, Phase, Result};
use crate::plan::ReadColumn;
use crate::schema::{ColumnMappingMode, DataType as DeltaType, StructField};

/// Where an output column comes from.
#[derive(Debug, Clone)]
pub enum ColumnSource {
    /// Column `index` of the file batch, converted to the output field.
    File {
        /// Index in the projected file schema.
        index: usize,
    },
    /// A partition column: the same value on every row (a length-1 array).
    Constant(ArrayRef),
    /// The file does not have the column: nulls.
    Missing,
}

/// How to turn one file's batches into output batches.
#[derive(Debug, Clone)]
pub struct FileTransform {
    output: SchemaRef,
    sources: Vec<ColumnSource>,
    /// For each source, the constant or null column last built (see the module doc).
    built: Vec<Built>,
}

/// The array last built for a column that is the same on every row, reused by later
/// batches that are no longer than it. A clone starts empty.
#[derive(Debug, Default)]
struct Built(Mutex<Option<ArrayRef>>);

impl Clone for Built {
    fn clone(&self) -> Self {
        Built::default()
    }
}

impl Built {
    /// The column for a batch of `rows` rows: the one built before when it is long enough
    /// (sliced to `rows`), else `build(rows)`, kept for later batches.
    fn get(
        &self,
        rows: usize,
        build: impl FnOnce(usize) -> std::result::Result<ArrayRef, arrow_schema::ArrowError>,
    ) -> Result<ArrayRef> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.as_ref() {
            Some(a) if a.len() == rows => return Ok(Arc::clone(a)),
            Some(a) if a.len() > rows => return Ok(a.slice(0, rows)),
            _ => {}
        }
        let array = build(rows).map_err(arrow_error)?;
        *slot = Some(Arc::clone(&array));
        Ok(array)
    }
}

/// The field's column mapping id, when it has a valid one.
fn field_id(field: &StructField) -> Option<i64> {
    crate::schema::field_id(field, ColumnMappingMode::Name)
        .ok()
        .flatten()
        .map(i64::from)
}

/// Finds the file field for a logical field: by physical name, and in id mode by field id.
pub(crate) fn find_in_file(
    file: &FileFields<'_>,
    field: &StructField,
    mode: ColumnMappingMode,
) -> Option<usize> {
    if mode == ColumnMappingMode::Id {
        if let Some(i) = field_id(field).and_then(|id| file.with_id(id)) {
            return Some(i);
        }
    }
    // The load checked every field's physical name (`schema::validate_column_mapping`).
    let name = crate::schema::physical_name(field, mode).ok()?;
    file.named(name)
}

/// Refuses a data file without Parquet field ids when the table maps columns by them
/// (column mapping mode `id`) and a column read from the file has one: the protocol requires
/// a reader to refuse such a file or return nulls for it, and nulls would pass for data. A
/// file with some field ids is read (a column it lacks is one added after it was written).
pub(crate) fn require_field_ids(
    file: &Schema,
    columns: &[ReadColumn],
    mode: ColumnMappingMode,
    path: &str,
) -> Result<()> {
    if mode != ColumnMappingMode::Id
        || file.fields().iter().any(|f| arrow_field_id(f).is_some())
        || !columns
            .iter()
            .any(|c| !c.partition && field_id(&c.field).is_some())
    {
        return Ok(());
    }
    Err(DeltaError::InvalidSchema {
        reason: format!(
            "data file {path} has no Parquet field ids, and the table finds its columns by \
             field id (column mapping mode `id`): the protocol requires a reader to refuse \
             such a file"
        ),
    })
}

/// The top-level file columns the logical columns need, in file order (for the projection
/// mask), given the file's Arrow schema.
pub fn needed_file_columns(
    file: &Schema,
    columns: &[ReadColumn],
    mode: ColumnMappingMode,
) -> Vec<usize> {
    let index = FileFields::new(file.fields());
    let mut idx: Vec<usize> = columns
        .iter()
        .filter(|c| !c.partition)
        .filter_map(|c| find_in_file(&index, &c.field, mode))
        .collect();
    idx.sort_unstable();
    idx.dedup();
    idx
}

/// [`needed_file_columns`] and the file's schema projected to them (the schema of the
/// batches a reader of those columns returns).
pub fn projected_file_schema(
    file: &Schema,
    columns: &[ReadColumn],
    mode: ColumnMappingMode,
) -> (Vec<usize>, Schema) {
    let roots = needed_file_columns(file, columns, mode);
    let projected = Schema::new(
        roots
            .iter()
            .map(|&i| file.field(i).clone())
            .collect::<Vec<_>>(),
    );
    (roots, projected)
}

impl FileTransform {
    /// Plans the transform for a file whose projected batches have schema `projected` (the
    /// file columns listed by [`needed_file_columns`], in file order). `partition_values`
    /// holds, for each partition column of `columns`, its value in this file (a length-1
    /// array of the column's Arrow type).
    pub fn new(
        output: SchemaRef,
        columns: &[ReadColumn],
        partition_values: &[Option<ArrayRef>],
        projected: &Schema,
        mode: ColumnMappingMode,
    ) -> Self {
        let index = FileFields::new(projected.fields());
        let sources = columns
            .iter()
            .zip(partition_values.iter().chain(std::iter::repeat(&None)))
            .map(|(c, value)| match (c.partition, value) {
                (true, Some(v)) => ColumnSource::Constant(Arc::clone(v)),
                (true, None) => ColumnSource::Missing,
                (false, _) => match find_in_file(&index, &c.field, mode) {
                    Some(index) => ColumnSource::File { index },
                    None => ColumnSource::Missing,
                },
            })
            .collect::<Vec<_>>();
        let built = sources.iter().map(|_| Built::default()).collect();
        FileTransform {
            output,
            sources,
            built,
        }
    }

    /// [`new`](Self::new) for the data file at `path`, checked before any row is decoded:
    /// every column the file holds must convert to its table type (see
    /// [`crate::schema::cast`]). A file whose `long` column the log calls `float`, or
    /// `string`, contradicts the log, and is refused naming the column and the file; values
    /// that do not fit (a long beyond an int's range) are still found as they are converted.
    pub fn for_file(
        output: SchemaRef,
        columns: &[ReadColumn],
        partition_values: &[Option<ArrayRef>],
        projected: &Schema,
        mode: ColumnMappingMode,
        path: &str,
    ) -> Result<Self> {
        let transform = Self::new(output, columns, partition_values, projected, mode);
        transform.check_file_types(projected, columns, path)?;
        Ok(transform)
    }

    /// The check of [`for_file`](Self::for_file).
    fn check_file_types(
        &self,
        projected: &Schema,
        columns: &[ReadColumn],
        path: &str,
    ) -> Result<()> {
        for ((source, col), out) in self.sources.iter().zip(columns).zip(self.output.fields()) {
            let ColumnSource::File { index } = source else {
                continue;
            };
            let Some(held) = projected.fields().get(*index) else {
                continue;
            };
            let empty = arrow_array::new_empty_array(held.data_type());
            if conform(&empty, &col.field.data_type, out.data_type()).is_err() {
                return Err(DeltaError::invalid_log(
                    crate::error::redact(path),
                    format!(
                        "column `{}` of the data file holds {} values, which the table's type \
                         {} cannot hold",
                        col.field.name,
                        held.data_type(),
                        col.field.data_type
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Converts one file batch.
    pub fn apply(&self, batch: &RecordBatch, columns: &[ReadColumn]) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let mut arrays = Vec::with_capacity(self.sources.len());
        for (((source, built), col), out) in self
            .sources
            .iter()
            .zip(&self.built)
            .zip(columns)
            .zip(self.output.fields().iter())
        {
            let array = match source {
                ColumnSource::File { index } => {
                    let data = batch.column(*index);
                    conform(data, &col.field.data_type, out.data_type()).map_err(|e| match e {
                        DeltaError::Arrow { phase, source } => DeltaError::Arrow {
                            phase,
                            source: arrow_schema::ArrowError::CastError(format!(
                                "column `{}`: {source}",
                                col.field.name
                            )),
                        },
                        other => other,
                    })?
                }
                ColumnSource::Constant(value) => {
                    built.get(rows, |n| super::constant::repeat_value(value, n))?
                }
                ColumnSource::Missing => {
                    built.get(rows, |n| Ok(new_null_array(out.data_type(), n)))?
                }
            };
            arrays.push(array);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(Arc::clone(&self.output), arrays, &options)
            .map_err(arrow_error)
    }
}

fn arrow_error(source: arrow_schema::ArrowError) -> DeltaError {
    DeltaError::Arrow {
        phase: Phase::Read,
        source,
    }
}

/// Converts a file array to the output type: nested fields are matched by (physical) name
/// and renamed, missing nested fields become nulls, leaves are cast.
fn conform(data: &ArrayRef, delta: &DeltaType, target: &DataType) -> Result<ArrayRef> {
    if data.data_type() == target {
        return Ok(Arc::clone(data));
    }
    match (delta, target) {
        (DeltaType::Struct(st), DataType::Struct(out_fields)) => {
            let Some(file_struct) = data.as_any().downcast_ref::<StructArray>() else {
                return cast(data, target);
            };
            let file_fields = file_struct.fields().clone();
            let mut children = Vec::with_capacity(out_fields.len());
            for (sub, out) in st.fields.iter().zip(out_fields.iter()) {
                let child = match find_nested(&file_fields, sub) {
                    Some(i) => conform(file_struct.column(i), &sub.data_type, out.data_type())?,
                    None => new_null_array(out.data_type(), file_struct.len()),
                };
                children.push(child);
            }
            let nulls = file_struct.nulls().cloned();
            let out =
                StructArray::try_new(out_fields.clone(), children, nulls).map_err(arrow_error)?;
            Ok(Arc::new(out))
        }
        (DeltaType::Array(at), DataType::List(out_item)) => {
            let Some(list) = data.as_any().downcast_ref::<ListArray>() else {
                return cast(data, target);
            };
            let values = conform(list.values(), &at.element_type, out_item.data_type())?;
            let out = ListArray::try_new(
                Arc::clone(out_item),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )
            .map_err(arrow_error)?;
            Ok(Arc::new(out))
        }
        (DeltaType::Map(mt), DataType::Map(out_entries, sorted)) => {
            // Decoded from its groups where panics abort (see `limits::map_groups`).
            let grouped = crate::limits::map_groups::map_of_groups(data.as_ref())
                .transpose()
                .map_err(arrow_error)?;
            let Some(map) = grouped
                .as_ref()
                .or_else(|| data.as_any().downcast_ref::<MapArray>())
            else {
                return cast(data, target);
            };
            let DataType::Struct(kv) = out_entries.data_type() else {
                return cast(data, target);
            };
            let (Some(kf), Some(vf)) = (kv.first(), kv.get(1)) else {
                return cast(data, target);
            };
            let keys = conform(map.keys(), &mt.key_type, kf.data_type())?;
            let values = conform(map.values(), &mt.value_type, vf.data_type())?;
            let entries =
                StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(arrow_error)?;
            let out = MapArray::try_new(
                Arc::clone(out_entries),
                map.offsets().clone(),
                entries,
                map.nulls().cloned(),
                *sorted,
            )
            .map_err(arrow_error)?;
            Ok(Arc::new(out))
        }
        _ => cast(data, target),
    }
}

/// Finds a nested field by physical name (any mode: a nested field without a physical name
/// is stored under its logical name).
fn find_nested(file: &Fields, field: &StructField) -> Option<usize> {
    let physical = crate::schema::physical_name(field, ColumnMappingMode::Name).ok();
    if let Some(id) = field_id(field) {
        if let Some(i) = file.iter().position(|f| arrow_field_id(f) == Some(id)) {
            return Some(i);
        }
    }
    physical
        .and_then(|p| file.iter().position(|f| f.name() == p))
        .or_else(|| file.iter().position(|f| f.name() == &field.name))
        .or_else(|| {
            file.iter()
                .position(|f| f.name().eq_ignore_ascii_case(&field.name))
        })
}

/// `data` as `target` (see [`crate::schema::cast`]); a failure names both types.
pub(crate) fn cast(data: &ArrayRef, target: &DataType) -> Result<ArrayRef> {
    crate::schema::cast::cast(data, target).map_err(|e| DeltaError::Arrow {
        phase: Phase::Read,
        source: arrow_schema::ArrowError::CastError(format!(
            "cannot convert column data from {} to {target}: {e}",
            data.data_type()
        )),
    })
}

#[cfg(test)]
mod tests {
    use arrow_schema::Field;

    use super::*;
    use crate::schema::parse_schema;
    use crate::schema::PARQUET_FIELD_ID_KEY;
    use arrow_array::{cast::AsArray, Int32Array, Int64Array, StringArray};

    fn mapped_schema() -> crate::schema::StructType {
        let json = r#"{"type":"struct","fields":[
          {"name":"id","type":"long","nullable":true,"metadata":{
            "delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1a"}},
          {"name":"info","type":{"type":"struct","fields":[
              {"name":"city","type":"string","nullable":true,"metadata":{
                "delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3c"}},
              {"name":"zip","type":"string","nullable":true,"metadata":{
                "delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-4d"}}]},
           "nullable":true,"metadata":{
            "delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2b"}},
          {"name":"added_later","type":"string","nullable":true,"metadata":{
            "delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-5e"}},
          {"name":"part","type":"integer","nullable":true,"metadata":{
            "delta.columnMapping.id":6,"delta.columnMapping.physicalName":"col-6f"}}]}"#;
        parse_schema(json).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The output schema of `columns`: their Arrow fields in order.
    fn output_schema(columns: &[ReadColumn]) -> SchemaRef {
        Arc::new(Schema::new(
            columns
                .iter()
                .map(|c| Arc::clone(&c.arrow))
                .collect::<Vec<_>>(),
        ))
    }

    #[test]
    fn a_file_column_its_table_type_cannot_hold_is_refused_before_decoding() {
        let json = r#"{"type":"struct","fields":[
          {"name":"id","type":"double","nullable":true,"metadata":{}},
          {"name":"tag","type":"string","nullable":true,"metadata":{}},
          {"name":"big","type":"float","nullable":true,"metadata":{}}]}"#;
        let schema = parse_schema(json).unwrap_or_else(|e| panic!("{e}"));
        let columns = ReadColumn::all_of(&schema, &[]);
        let output = output_schema(&columns);
        let check = |fields: Vec<Field>| {
            let file = Schema::new(fields);
            FileTransform::for_file(
                Arc::clone(&output),
                &columns,
                &[],
                &file,
                ColumnMappingMode::None,
                "part-0.parquet",
            )
            .map(|_| ())
        };
        // An int widened to double, a float, a string: the table's types.
        let good = check(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("tag", DataType::Utf8View, true),
            Field::new("big", DataType::Float32, true),
        ]);
        assert!(good.is_ok(), "{good:?}");
        // A long the log calls float: digits would be lost, so the file contradicts the log.
        let e = check(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("tag", DataType::Utf8View, true),
            Field::new("big", DataType::Int64, true),
        ])
        .err()
        .map(|e| (e.code(), e.to_string()));
        let (code, message) = e.unwrap_or_else(|| panic!("a long read as float passed"));
        assert_eq!(code, "invalid_log");
        assert!(
            message.contains("part-0.parquet") && message.contains("`big`"),
            "{message}"
        );
        assert!(
            message.contains("Int64") && message.contains("float"),
            "{message}"
        );
        // A long the log calls string.
        let e = check(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("tag", DataType::Int64, true),
        ]);
        assert!(
            matches!(e, Err(DeltaError::InvalidLog { ref reason, .. }) if reason.contains("`tag`"))
        );
    }

    #[test]
    fn renames_nested_physical_columns_casts_and_fills() {
        let schema = mapped_schema();
        let columns = ReadColumn::all_of(&schema, &["part"]);
        let output = output_schema(&columns);
        // What the file holds: physical names; `zip` missing inside the struct; `id` written
        // as int32 before a type widening to long; no `added_later` column at all.
        let inner = Fields::from(vec![Field::new("col-3c", DataType::Utf8, true)]);
        let file_schema = Schema::new(vec![
            Field::new("col-1a", DataType::Int32, true),
            Field::new("col-2b", DataType::Struct(inner.clone()), true),
        ]);
        let info = StructArray::try_new(
            inner,
            vec![Arc::new(StringArray::from(vec![Some("Delft"), None])) as ArrayRef],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let batch = RecordBatch::try_new(
            Arc::new(file_schema.clone()),
            vec![Arc::new(Int32Array::from(vec![7, 8])), Arc::new(info)],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mode = ColumnMappingMode::Name;
        assert_eq!(
            needed_file_columns(&file_schema, &columns, mode),
            vec![0, 1]
        );
        let part: ArrayRef = Arc::new(Int32Array::from(vec![42]));
        let partition_values = vec![None, None, None, Some(part)];
        let t = FileTransform::new(output, &columns, &partition_values, &file_schema, mode);
        let out = t.apply(&batch, &columns).unwrap_or_else(|e| panic!("{e}"));
        let out_schema = out.schema();
        let names: Vec<&str> = out_schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["id", "info", "added_later", "part"]);
        let ids = out
            .column(0)
            .as_primitive::<arrow_array::types::Int64Type>();
        assert_eq!(ids, &Int64Array::from(vec![7, 8]));
        let info = out.column(1).as_struct();
        assert_eq!(info.fields()[0].name(), "city");
        assert_eq!(info.column(0).as_string::<i32>().value(0), "Delft");
        assert_eq!(
            info.column(1).null_count(),
            2,
            "zip is missing in the file: nulls"
        );
        assert_eq!(out.column(2).null_count(), 2);
        let parts = out
            .column(3)
            .as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!(parts.values().to_vec(), vec![42, 42]);
    }

    #[test]
    fn constant_and_missing_columns_are_built_once_and_fit_every_batch_length() {
        let schema = mapped_schema();
        let columns = ReadColumn::all_of(&schema, &["part"]);
        let output = output_schema(&columns);
        let file_schema = Schema::new(vec![Field::new("col-1a", DataType::Int64, true)]);
        let batch = |n: i64| {
            RecordBatch::try_new(
                Arc::new(file_schema.clone()),
                vec![Arc::new(Int64Array::from((0..n).collect::<Vec<_>>())) as ArrayRef],
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let part: ArrayRef = Arc::new(Int32Array::from(vec![42]));
        let values = vec![None, None, None, Some(part)];
        let mode = ColumnMappingMode::Name;
        let t = FileTransform::new(output, &columns, &values, &file_schema, mode);
        // Full batches, a short one, a longer one than before, a full one again, an empty one.
        let mut parts_seen = Vec::new();
        for n in [5, 5, 2, 9, 5, 0] {
            let out = t
                .apply(&batch(n), &columns)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(out.num_rows(), n as usize);
            let parts = out
                .column(3)
                .as_primitive::<arrow_array::types::Int32Type>();
            assert_eq!(parts.len(), n as usize);
            assert_eq!(parts.null_count(), 0);
            assert!(parts.values().iter().all(|&v| v == 42), "{parts:?}");
            let missing = out.column(2);
            assert_eq!(
                (missing.len(), missing.null_count()),
                (n as usize, n as usize)
            );
            assert_eq!(missing.data_type(), &DataType::Utf8);
            parts_seen.push(parts.values().as_ptr());
        }
        // The first two batches share one buffer: the value was written once for both.
        assert_eq!(parts_seen[0], parts_seen[1]);
        assert_eq!(parts_seen[0], parts_seen[2], "a shorter batch gets a slice");
        assert_ne!(
            parts_seen[2], parts_seen[3],
            "a longer batch gets a new column"
        );
        assert_eq!(parts_seen[3], parts_seen[4]);
        // A clone of the transform starts without what the original built.
        let copy = t.clone();
        let out = copy
            .apply(&batch(3), &columns)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.column(3).len(), 3);
    }

    #[test]
    fn id_mode_matches_by_field_id_before_name() {
        let schema = mapped_schema();
        let columns = ReadColumn::all_of(&schema, &["part"]);
        let mut meta = std::collections::HashMap::new();
        meta.insert(PARQUET_FIELD_ID_KEY.to_string(), "1".to_string());
        // The physical name changed (e.g. a rewrite), but the field id still matches.
        let file = Schema::new(vec![
            Field::new("renamed", DataType::Int64, true).with_metadata(meta),
            Field::new("col-1a", DataType::Utf8, true),
        ]);
        assert_eq!(
            needed_file_columns(&file, &columns[..1], ColumnMappingMode::Id),
            vec![0]
        );
        assert_eq!(
            needed_file_columns(&file, &columns[..1], ColumnMappingMode::Name),
            vec![1]
        );
    }

    #[test]
    fn id_mode_refuses_a_file_without_field_ids() {
        let schema = mapped_schema();
        let columns = ReadColumn::all_of(&schema, &["part"]);
        let mut meta = std::collections::HashMap::new();
        meta.insert(PARQUET_FIELD_ID_KEY.to_string(), "1".to_string());
        let bare = Schema::new(vec![Field::new("col-1a", DataType::Int64, true)]);
        let with_ids = Schema::new(vec![
            Field::new("col-1a", DataType::Int64, true).with_metadata(meta)
        ]);
        let refused = require_field_ids(&bare, &columns[..1], ColumnMappingMode::Id, "f.parquet");
        match refused {
            Err(DeltaError::InvalidSchema { reason }) => {
                assert!(
                    reason.contains("f.parquet") && reason.contains("field ids"),
                    "{reason}"
                )
            }
            other => panic!("expected invalid_schema, got {other:?}"),
        }
        // Field ids present (even for other columns), name mode, or no file column read: read.
        assert!(require_field_ids(&with_ids, &columns[..1], ColumnMappingMode::Id, "f").is_ok());
        assert!(require_field_ids(&bare, &columns[..1], ColumnMappingMode::Name, "f").is_ok());
        assert!(require_field_ids(&bare, &[], ColumnMappingMode::Id, "f").is_ok());
    }

    #[test]
    fn timestamps_change_unit_and_zone_label_without_a_zone_database() {
        use arrow_array::TimestampNanosecondArray;
        let data: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![1_500_000_000i64]));
        let target = DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()));
        let out = cast(&data, &target).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.data_type(), &target);
        let v = out.as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        assert_eq!(v.value(0), 1_500_000);
        let bad: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        assert!(cast(&bad, &DataType::Int64).is_err());
    }
}
