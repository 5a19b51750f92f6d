//! Map columns decoded as the groups they are stored as, where a decoder's panic cannot be
//! contained.
//!
//! arrow-rs's map reader unwraps what its inner list reader returns, so a map whose key and
//! value columns disagree (their level runs give different numbers of entries for a row) is
//! a panic there, not an error; the same disagreement in a list of structs is an error. Where
//! panics abort (wasm32, [`super::decoder_panics::contained`] false), the readers hand the
//! decoder a footer whose map groups carry no `MAP` or `MAP_KEY_VALUE` annotation
//! ([`without_map_annotations`]): a map `m` then decodes as the struct
//! `m { key_value: list<struct<key, value>> }` its Parquet groups describe, through readers
//! that return every inconsistency as an error, and [`map_of_groups`] rebuilds the map from
//! that struct (the same buffers: offsets, entries and nulls are not copied).
//!
//! The leaves keep their columns, levels and order, so projections, page checks and
//! statistics see the same file.

use std::sync::Arc;

use arrow_array::{Array, ListArray, MapArray, StructArray};
use arrow_schema::{ArrowError, DataType, Field};
use parquet::basic::ConvertedType;
use parquet::errors::Result as ParquetResult;
use parquet::file::metadata::{
    FileMetaData, ParquetMetaData, ParquetMetaDataBuilder, RowGroupMetaData,
};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

/// Whether the group `t` is annotated as a map (or as a map's repeated key/value group).
fn is_map_group(t: &Type) -> bool {
    t.is_group()
        && matches!(
            t.get_basic_info().converted_type(),
            ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE
        )
}

/// Whether any group under `t` (or `t`) is annotated as a map.
fn has_map_group(t: &Type) -> bool {
    is_map_group(t) || (t.is_group() && t.get_fields().iter().any(|f| has_map_group(f)))
}

/// `t` with the map annotations of every group under it removed (other annotations, names,
/// repetitions and field ids kept); the primitive leaves are shared, not copied.
fn unannotated(t: &TypePtr) -> ParquetResult<TypePtr> {
    if !t.is_group() || !has_map_group(t) {
        return Ok(Arc::clone(t));
    }
    let info = t.get_basic_info();
    let fields = t
        .get_fields()
        .iter()
        .map(unannotated)
        .collect::<ParquetResult<Vec<_>>>()?;
    let mut builder = Type::group_type_builder(info.name()).with_fields(fields);
    if info.has_repetition() {
        builder = builder.with_repetition(info.repetition());
    }
    if !is_map_group(t) {
        builder = builder
            .with_converted_type(info.converted_type())
            .with_logical_type(info.logical_type_ref().cloned());
    }
    if info.has_id() {
        builder = builder.with_id(Some(info.id()));
    }
    Ok(Arc::new(builder.build()?))
}

/// The footer a decoder on this thread is given: `metadata` itself where a decoder's panic
/// is contained, else [`without_map_annotations`].
pub(crate) fn footer_for_decoder(
    metadata: &Arc<ParquetMetaData>,
) -> ParquetResult<Arc<ParquetMetaData>> {
    if super::decoder_panics::contained() {
        return Ok(Arc::clone(metadata));
    }
    without_map_annotations(metadata)
}

/// `metadata` with no group annotated as a map, or `metadata` itself when none is. The row
/// groups, column chunks and page index are the file's; only the schema tree they hang
/// from differs.
pub(crate) fn without_map_annotations(
    metadata: &Arc<ParquetMetaData>,
) -> ParquetResult<Arc<ParquetMetaData>> {
    let file = metadata.file_metadata();
    let root = file.schema_descr().root_schema_ptr();
    if !has_map_group(&root) {
        return Ok(Arc::clone(metadata));
    }
    let schema = Arc::new(SchemaDescriptor::new(unannotated(&root)?));
    let file_metadata = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        file.key_value_metadata().cloned(),
        Arc::clone(&schema),
        file.column_orders().cloned(),
    );
    let row_groups = metadata
        .row_groups()
        .iter()
        .map(|rg| {
            let mut builder = RowGroupMetaData::builder(Arc::clone(&schema))
                .set_num_rows(rg.num_rows())
                .set_total_byte_size(rg.total_byte_size())
                .set_sorting_columns(rg.sorting_columns().cloned())
                .set_column_metadata(rg.columns().to_vec());
            if let Some(ordinal) = rg.ordinal() {
                builder = builder.set_ordinal(ordinal);
            }
            if let Some(offset) = rg.file_offset() {
                builder = builder.set_file_offset(offset);
            }
            builder.build()
        })
        .collect::<ParquetResult<Vec<_>>>()?;
    let rebuilt = ParquetMetaDataBuilder::new(file_metadata)
        .set_row_groups(row_groups)
        .set_column_index(metadata.column_index().cloned())
        .set_offset_index(metadata.offset_index().cloned())
        .build();
    Ok(Arc::new(rebuilt))
}

/// The map a map column decoded without its annotation stands for: `data` is the struct of
/// its one repeated key/value group, a list of structs of two fields. `None` when `data` has
/// another shape (it was not such a map); an error when the map cannot be built from it (a
/// key/value struct with nulls, say).
pub(crate) fn map_of_groups(data: &dyn Array) -> Option<Result<MapArray, ArrowError>> {
    let group = data.as_any().downcast_ref::<StructArray>()?;
    let [only] = group.columns() else {
        return None;
    };
    let list = only.as_any().downcast_ref::<ListArray>()?;
    let entries = list.values().as_any().downcast_ref::<StructArray>()?;
    if entries.num_columns() != 2 {
        return None;
    }
    let DataType::List(item) = list.data_type() else {
        return None;
    };
    let field = Arc::new(Field::new(item.name(), entries.data_type().clone(), false));
    // The list of a repeated group has no nulls of its own; a null map is a null group.
    let nulls = group.nulls().cloned();
    Some(MapArray::try_new(
        field,
        list.offsets().clone(),
        entries.clone(),
        nulls,
        false,
    ))
}

#[cfg(test)]
#[path = "map_groups_tests.rs"]
mod tests;
