use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::*;
use crate::limits::pages::check_file;

const NULLABLE: MaxLevels = MaxLevels {
    repetition: 0,
    definition: 1,
};

fn v1(encoding: i32) -> DataPage {
    DataPage {
        num_values: 8,
        encoding,
        levels: LevelLayout::V1 {
            repetition: encoding::RLE,
            definition: encoding::RLE,
        },
    }
}

/// A V1 body: the definition levels (`runs`, prefixed with their length) then `values`.
fn v1_body(runs: &[u8], values: &[u8]) -> Vec<u8> {
    let mut body = u32::try_from(runs.len()).unwrap().to_le_bytes().to_vec();
    body.extend(runs);
    body.extend(values);
    body
}

#[test]
fn level_runs_that_fit_pass() {
    // An RLE run of 5 ones, then one bit-packed group (1 byte at width 1).
    let body = v1_body(&[0x0a, 0x01, 0x03, 0b1010_1010], &[0; 4]);
    assert_eq!(check_data_page(&v1(0), &body, NULLABLE, true, 0), Ok(()));
}

#[test]
fn a_bit_packed_run_past_its_levels_is_refused() {
    // 3 groups declared (3 bytes at width 1), 1 byte follows in the section; the values after
    // the section must not count.
    let body = v1_body(&[0x07, 0xff], &[0; 16]);
    let err = check_data_page(&v1(0), &body, NULLABLE, true, 0).unwrap_err();
    assert!(err.contains("bit-packed run of 3 groups"), "{err}");
}

#[test]
fn an_rle_level_above_the_columns_highest_is_refused() {
    let body = v1_body(&[0x10, 0x02], &[]);
    let err = check_data_page(&v1(0), &body, NULLABLE, true, 0).unwrap_err();
    assert!(err.contains("level 2"), "{err}");
    // At width 2 (highest level 3), level 2 is one the column has.
    let nested = MaxLevels {
        repetition: 0,
        definition: 3,
    };
    assert_eq!(check_data_page(&v1(0), &body, nested, true, 0), Ok(()));
}

#[test]
fn a_level_section_longer_than_its_page_is_refused() {
    let mut body = 100u32.to_le_bytes().to_vec();
    body.extend([0x02, 0x01]);
    let err = check_data_page(&v1(0), &body, NULLABLE, true, 0).unwrap_err();
    assert!(err.contains("100 bytes"), "{err}");
    let short = check_data_page(&v1(0), &[1, 0], NULLABLE, true, 0).unwrap_err();
    assert!(short.contains("length"), "{short}");
}

#[test]
fn a_malformed_run_header_is_refused() {
    let body = v1_body(&[0xff; 11], &[]);
    assert!(check_data_page(&v1(0), &body, NULLABLE, true, 0).is_err());
}

#[test]
fn dictionary_index_widths_over_32_are_refused() {
    let levels = [0x10, 0x01];
    for (encoding, bits, ok) in [
        (encoding::RLE_DICTIONARY, 32, true),
        (encoding::RLE_DICTIONARY, 33, false),
        (encoding::PLAIN_DICTIONARY, 200, false),
        // Plain values start with anything.
        (0, 200, true),
    ] {
        let body = v1_body(&levels, &[bits, 0, 0]);
        let found = check_data_page(&v1(encoding), &body, NULLABLE, true, 0);
        assert_eq!(
            found.is_ok(),
            ok,
            "encoding {encoding}, width {bits}: {found:?}"
        );
    }
    // A required column has no level sections: the width comes first.
    let required = MaxLevels::default();
    assert!(check_data_page(&v1(encoding::RLE_DICTIONARY), &[40], required, true, 0).is_err());
    // All nulls: no values, no width.
    let empty = v1_body(&levels, &[]);
    assert_eq!(
        check_data_page(&v1(encoding::RLE_DICTIONARY), &empty, NULLABLE, true, 0),
        Ok(())
    );
}

#[test]
fn compressed_v1_contents_are_left_to_the_decoder() {
    let body = v1_body(&[0x07, 0xff], &[]);
    assert_eq!(check_data_page(&v1(0), &body, NULLABLE, false, 0), Ok(()));
}

#[test]
fn v2_levels_are_checked_even_with_compressed_values() {
    let v2 = |rep: i32, def: i32, compressed: bool| DataPage {
        num_values: 8,
        encoding: encoding::RLE_DICTIONARY,
        levels: LevelLayout::V2 {
            repetition_bytes: rep,
            definition_bytes: def,
            values_compressed: compressed,
            num_rows: 8,
        },
    };
    // Definition levels: a bit-packed run of 2 groups in 1 byte.
    let bad_levels = [0x05, 0xff, 99];
    assert!(check_data_page(&v2(0, 2, true), &bad_levels, NULLABLE, false, 0).is_err());
    // Fitting levels, then a width of 99: refused only when the values are plain.
    let width = [0x10, 0x01, 99];
    assert_eq!(
        check_data_page(&v2(0, 2, true), &width, NULLABLE, false, 0),
        Ok(())
    );
    assert!(check_data_page(&v2(0, 2, false), &width, NULLABLE, false, 0).is_err());
    assert!(check_data_page(&v2(0, 2, true), &width, NULLABLE, true, 0).is_err());
    // Section lengths that do not fit the page, or are negative.
    assert!(check_data_page(&v2(2, 2, true), &width, NULLABLE, false, 0).is_err());
    assert!(check_data_page(&v2(-1, 2, true), &width, NULLABLE, false, 0).is_err());
}

/// Batches of nullable, nested, repeated and dictionary columns, 3000 rows.
fn shapes() -> RecordBatch {
    let n = 3000;
    let ids: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 7 != 0).then_some(i as i64)),
    ));
    let names: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| (i % 3 != 0).then(|| format!("name {}", i % 40))),
    ));
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for i in 0..n {
        match i % 11 {
            0 => dict.append_null(),
            k => dict.append_value(format!("k{k}")),
        }
    }
    let dict: ArrayRef = Arc::new(dict.finish());
    let mut lists = ListBuilder::new(Int32Builder::new());
    for i in 0..n {
        if i % 5 == 0 {
            lists.append_null();
            continue;
        }
        for j in 0..(i % 4) {
            lists.values().append_option((j != 2).then_some(j));
        }
        lists.append(true);
    }
    let lists: ArrayRef = Arc::new(lists.finish());
    let inner = Fields::from(vec![Field::new("n", DataType::Utf8, true)]);
    let nested: ArrayRef = Arc::new(StructArray::new(
        inner.clone(),
        vec![names.clone()],
        Some((0..n).map(|i| i % 13 != 0).collect()),
    ));
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "dict",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new("list", lists.data_type().clone(), true),
        Field::new("nested", DataType::Struct(inner), true),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![ids, names, dict, lists, nested]).unwrap()
}

/// `batch` written with `props` and its footer, after the page checks passed on it as stored
/// and decompressed (as where a decoder's panic cannot be contained); `case` names it in a
/// failure.
fn written_and_checked(
    batch: &RecordBatch,
    props: WriterProperties,
    case: &str,
) -> (Bytes, parquet::file::metadata::ParquetMetaData) {
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    let data = Bytes::from(out);
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&data)
        .unwrap();
    check_file(&data, &metadata, None, 1 << 30, "f").unwrap_or_else(|e| panic!("{case}: {e}"));
    crate::limits::behave_as_aborting(true);
    let decompressed = check_file(&data, &metadata, None, 1 << 30, "f");
    crate::limits::behave_as_aborting(false);
    decompressed.unwrap_or_else(|e| panic!("{case}, decompressed: {e}"));
    (data, metadata)
}

#[test]
fn files_of_every_shape_and_page_version_pass_and_decode() {
    let batch = shapes();
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        for compression in [Compression::UNCOMPRESSED, Compression::SNAPPY] {
            for dictionary in [true, false] {
                let props = WriterProperties::builder()
                    .set_writer_version(version)
                    .set_compression(compression)
                    .set_dictionary_enabled(dictionary)
                    .set_data_page_row_count_limit(500)
                    .set_write_batch_size(100)
                    .build();
                let case = format!("{version:?} {compression:?} dictionary {dictionary}");
                let (data, _) = written_and_checked(&batch, props, &case);
                let rows: usize = ParquetRecordBatchReaderBuilder::try_new(data)
                    .unwrap()
                    .build()
                    .unwrap()
                    .map(|b| b.unwrap().num_rows())
                    .sum();
                assert_eq!(rows, batch.num_rows(), "{case}");
            }
        }
    }
}

/// A `DELTA_BINARY_PACKED` stream header: block size, miniblocks, value count, first value
/// (already zigzagged), each a varint.
fn delta_header(block: u64, miniblocks: u64, values: u64, first: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for mut v in [block, miniblocks, values, first] {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    out
}

#[test]
fn delta_streams_are_walked_as_the_decoder_reads_them() {
    // One value: the header alone.
    let one = delta_header(128, 4, 1, 10);
    assert_eq!(delta_stream_end(&one, 8, "v"), Ok(Some(one.len())));
    // 129 values: one block (min delta, 4 widths of 8 bits, 4 miniblocks of 32 bytes).
    let mut full = delta_header(128, 4, 129, 0);
    full.push(0);
    full.extend([8, 8, 8, 8]);
    full.extend([0u8; 128]);
    assert_eq!(delta_stream_end(&full, 129, "v"), Ok(Some(full.len())));
    // Only the miniblocks holding values count: 33 values use 2 of 4.
    let mut partial = delta_header(128, 4, 34, 0);
    partial.push(0);
    partial.extend([8, 8, 200, 200]);
    partial.extend([0u8; 64]);
    assert_eq!(delta_stream_end(&partial, 34, "v"), Ok(Some(partial.len())));

    // Miniblocks past the bytes, more values than the page, a varint of 11 bytes.
    let cut = &full[..full.len() - 1];
    let e = delta_stream_end(cut, 129, "v").unwrap_err();
    assert!(e.contains("past the page"), "{e}");
    let e = delta_stream_end(&full, 100, "v").unwrap_err();
    assert!(
        e.contains("129 delta-encoded values in a page of 100"),
        "{e}"
    );
    let mut long = vec![0x80, 0x01, 4];
    long.extend([0xff; 11]);
    assert!(delta_stream_end(&long, u64::MAX, "v").is_err());
    let mut long_delta = delta_header(128, 4, 129, 0);
    long_delta.extend([0x80; 12]);
    assert!(delta_stream_end(&long_delta, 129, "v").is_err());

    // What the decoder refuses itself is left to it.
    assert_eq!(delta_stream_end(&[0x80], 8, "v"), Ok(None));
    assert_eq!(
        delta_stream_end(&delta_header(100, 4, 2, 0), 8, "v"),
        Ok(None)
    );
    assert_eq!(
        delta_stream_end(&delta_header(128, 0, 2, 0), 8, "v"),
        Ok(None)
    );
}

#[test]
fn index_runs_with_overlong_headers_are_refused() {
    let levels = [0x10, 0x01];
    let mut values = vec![3];
    values.extend([0xff; 11]);
    let body = v1_body(&levels, &values);
    let e = check_data_page(&v1(encoding::RLE_DICTIONARY), &body, NULLABLE, true, 0).unwrap_err();
    assert!(e.contains("longer than 10 bytes"), "{e}");
    // Runs that fit (an RLE run of 8 of index 5, a bit-packed group) pass; a header the
    // bytes cut short is the decoder's.
    let fine = v1_body(&levels, &[3, 0x10, 5, 0x03, 0xff, 0xff, 0xff, 0x80]);
    assert_eq!(
        check_data_page(&v1(encoding::RLE_DICTIONARY), &fine, NULLABLE, true, 0),
        Ok(())
    );
}

#[test]
fn bit_packed_index_runs_of_more_values_than_a_u32_counts_are_refused() {
    let levels = [0x10, 0x01];
    // A bit-packed run header (low bit 1) as a varint, then a width-3 group's bytes.
    let run = |groups: u64| {
        let mut header = (groups << 1) | 1;
        let mut values = vec![3];
        while header >= 0x80 {
            values.push((header as u8) | 0x80);
            header >>= 7;
        }
        values.push(header as u8);
        values.extend([0xff; 3]);
        check_data_page(
            &v1(encoding::RLE_DICTIONARY),
            &v1_body(&levels, &values),
            NULLABLE,
            true,
            0,
        )
    };
    // arrow-rs would multiply 2^61 groups by 8 in an i64 (and keep the count in a u32).
    let e = run(1 << 61).unwrap_err();
    assert!(e.contains("bit-packed index run"), "{e}");
    assert!(run(u64::from(u32::MAX / 8) + 1).is_err());
    // Up to the bound it is the decoder's to find the bytes short.
    assert_eq!(run(u64::from(u32::MAX / 8)), Ok(()));
    assert_eq!(run(1), Ok(()));
}

/// The `DELTA_*` and `BYTE_STREAM_SPLIT` encodings as arrow-rs writes them pass, with and
/// without a codec, and decode: integers, lengths of strings, prefixes and suffixes, the
/// byte streams of nullable doubles.
#[test]
fn delta_and_byte_stream_split_files_pass_and_decode() {
    use parquet::basic::Encoding;
    use parquet::schema::types::ColumnPath;
    let n = Int64Array::from_iter((0..3000).map(|i| (i % 7 != 0).then_some(i * 37 - 5000)));
    let s = StringArray::from_iter(
        (0..3000).map(|i| (i % 5 != 0).then(|| format!("key-{:05}", i / 3))),
    );
    let f = arrow_array::Float64Array::from_iter(
        (0..3000).map(|i| (i % 4 != 1).then_some(f64::from(i) / 8.0)),
    );
    let batch = RecordBatch::try_from_iter([
        ("n", Arc::new(n) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
        ("f", Arc::new(f) as ArrayRef),
    ])
    .unwrap();
    for strings in [
        Encoding::DELTA_LENGTH_BYTE_ARRAY,
        Encoding::DELTA_BYTE_ARRAY,
    ] {
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            for compression in [Compression::UNCOMPRESSED, Compression::SNAPPY] {
                let props = WriterProperties::builder()
                    .set_writer_version(version)
                    .set_compression(compression)
                    .set_dictionary_enabled(false)
                    .set_column_encoding(ColumnPath::from("n"), Encoding::DELTA_BINARY_PACKED)
                    .set_column_encoding(ColumnPath::from("s"), strings)
                    .set_column_encoding(ColumnPath::from("f"), Encoding::BYTE_STREAM_SPLIT)
                    .set_data_page_row_count_limit(700)
                    .set_write_batch_size(100)
                    .build();
                let case = format!("{strings:?} {version:?} {compression:?}");
                let (data, metadata) = written_and_checked(&batch, props, &case);
                let encodings: Vec<_> = metadata
                    .row_group(0)
                    .columns()
                    .iter()
                    .map(|c| c.encodings().collect::<Vec<_>>())
                    .collect();
                let listed = format!("{encodings:?}");
                assert!(
                    listed.contains("DELTA_BINARY_PACKED") && listed.contains("BYTE_STREAM_SPLIT"),
                    "{case}: {encodings:?}"
                );
                let decoded: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(data)
                    .unwrap()
                    .build()
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
                let decoded =
                    arrow_select::concat::concat_batches(&batch.schema(), &decoded).unwrap();
                assert_eq!(decoded, batch, "{case}");
            }
        }
    }
}

#[test]
fn byte_stream_split_values_must_cover_the_values_present() {
    let page = |num_values| DataPage {
        num_values,
        encoding: encoding::BYTE_STREAM_SPLIT,
        levels: LevelLayout::V1 {
            repetition: encoding::RLE,
            definition: encoding::RLE,
        },
    };
    // Definition levels: an RLE run of 6 present (level 1), then one bit-packed group of 8
    // levels 1, 0, 1, 0, … (least significant bit first). A page of 8 levels takes the first
    // 2 of the group: 7 present, 28 bytes.
    let runs = [0x0c, 0x01, 0x03, 0b0000_0101];
    for (values, ok) in [(28, true), (27, false), (64, true)] {
        let body = v1_body(&runs, &vec![0u8; values]);
        let found = check_data_page(&page(8), &body, NULLABLE, true, 4);
        assert_eq!(found.is_ok(), ok, "{values} bytes: {found:?}");
    }
    // 14 levels: the 6 of the run and all 8 of the group: 8 present.
    let body = v1_body(&runs, &[0u8; 31]);
    let e = check_data_page(&page(14), &body, NULLABLE, true, 4).unwrap_err();
    assert!(
        e.contains("8 byte-stream-split values of 4 bytes in 31 bytes"),
        "{e}"
    );
    // A required column: every level is a value.
    let required = MaxLevels::default();
    assert!(check_data_page(&page(8), &[0u8; 64], required, true, 8).is_ok());
    assert!(check_data_page(&page(8), &[0u8; 63], required, true, 8).is_err());
    // A width the column does not have is not checked.
    assert!(check_data_page(&page(8), &[0u8; 3], required, true, 0).is_ok());
}
