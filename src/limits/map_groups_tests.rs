use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ParquetMetaDataReader;

use super::*;

/// A map of strings to strings with a null map, an empty map and maps of one and two
/// entries (one value null).
fn string_map() -> ArrayRef {
    let mut b = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    b.keys().append_value("a");
    b.values().append_value("1");
    b.append(true).unwrap_or_else(|e| panic!("{e}"));
    b.append(false).unwrap_or_else(|e| panic!("{e}"));
    b.append(true).unwrap_or_else(|e| panic!("{e}"));
    b.keys().append_value("b");
    b.values().append_null();
    b.keys().append_value("c");
    b.values().append_value("3");
    b.append(true).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(b.finish())
}

/// A list of maps of strings to integers: a map inside a repeated field.
fn list_of_maps() -> ArrayRef {
    let map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    let mut b = ListBuilder::new(map);
    b.values().keys().append_value("x");
    b.values().values().append_value(7);
    b.values().append(true).unwrap_or_else(|e| panic!("{e}"));
    b.values().append(false).unwrap_or_else(|e| panic!("{e}"));
    b.append(true);
    b.append(false);
    b.append(true);
    b.values().keys().append_value("y");
    b.values().values().append_null();
    b.values().append(true).unwrap_or_else(|e| panic!("{e}"));
    b.append(true);
    Arc::new(b.finish())
}

fn parquet(columns: Vec<(&str, ArrayRef)>) -> (Bytes, Arc<ParquetMetaData>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap_or_else(|e| panic!("{e}"));
    let mut buf = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap_or_else(|e| panic!("{e}"));
    writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    let data = Bytes::from(buf);
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&data)
        .unwrap_or_else(|e| panic!("{e}"));
    (data, Arc::new(metadata))
}

fn decode(data: &Bytes, metadata: Arc<ParquetMetaData>) -> RecordBatch {
    let options = super::super::pages::reader_options();
    let reader = ArrowReaderMetadata::try_new(metadata, options).unwrap_or_else(|e| panic!("{e}"));
    ParquetRecordBatchReaderBuilder::new_with_metadata(data.clone(), reader)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
        .next()
        .unwrap_or_else(|| panic!("no batch"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_map_decoded_from_its_groups_is_the_map() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 4]));
    let (data, metadata) = parquet(vec![("id", ids), ("m", string_map())]);
    let annotated = decode(&data, Arc::clone(&metadata));
    let grouped = decode(
        &data,
        without_map_annotations(&metadata).unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(grouped.column(0), annotated.column(0));
    let group = grouped.column(1);
    assert!(
        matches!(group.data_type(), DataType::Struct(_)),
        "{}",
        group.data_type()
    );
    let map = map_of_groups(group.as_ref())
        .unwrap_or_else(|| panic!("not the groups of a map: {}", group.data_type()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&map, annotated.column(1).as_map());
    assert_eq!(map.null_count(), 1);
    assert_eq!(map.value_length(3), 2);
}

#[test]
fn maps_inside_lists_keep_their_levels() {
    let (data, metadata) = parquet(vec![("lm", list_of_maps())]);
    let annotated = decode(&data, Arc::clone(&metadata));
    let grouped = decode(
        &data,
        without_map_annotations(&metadata).unwrap_or_else(|e| panic!("{e}")),
    );
    let (want, got) = (
        annotated.column(0).as_list::<i32>(),
        grouped.column(0).as_list::<i32>(),
    );
    assert_eq!(want.offsets(), got.offsets());
    assert_eq!(want.nulls(), got.nulls());
    let map = map_of_groups(got.values().as_ref())
        .unwrap_or_else(|| panic!("not the groups of a map: {}", got.values().data_type()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&map, want.values().as_map());
}

#[test]
fn a_file_without_maps_keeps_its_metadata() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    let (_, metadata) = parquet(vec![("id", ids)]);
    let same = without_map_annotations(&metadata).unwrap_or_else(|e| panic!("{e}"));
    assert!(Arc::ptr_eq(&same, &metadata));
}

#[test]
fn only_map_annotations_are_removed() {
    let (_, metadata) = parquet(vec![("m", string_map()), ("lm", list_of_maps())]);
    let grouped = without_map_annotations(&metadata).unwrap_or_else(|e| panic!("{e}"));
    let root = grouped.file_metadata().schema_descr().root_schema_ptr();
    assert!(!has_map_group(&root));
    let lm = &root.get_fields()[1];
    assert_eq!(lm.get_basic_info().converted_type(), ConvertedType::LIST);
    let before = metadata.file_metadata().schema_descr();
    let after = grouped.file_metadata().schema_descr();
    assert_eq!(before.num_columns(), after.num_columns());
    for i in 0..before.num_columns() {
        let (b, a) = (before.column(i), after.column(i));
        assert_eq!(b.path(), a.path());
        assert_eq!(
            (b.max_def_level(), b.max_rep_level()),
            (a.max_def_level(), a.max_rep_level())
        );
    }
}

#[test]
fn other_shapes_are_not_maps() {
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    assert!(map_of_groups(ids.as_ref()).is_none());
    let lists = list_of_maps();
    assert!(map_of_groups(lists.as_ref()).is_none());
}
