//! Tests of deletion vector descriptors, Z85 and the portable Roaring format, on bytes
//! written here (the corpus's vectors are checked in tests/native/deletion_vectors_corpus.rs).

use super::*;

fn descriptor(
    storage_type: &str,
    path_or_inline_dv: &str,
    offset: Option<i32>,
    size_in_bytes: i32,
    cardinality: i64,
) -> DeletionVectorDescriptor {
    DeletionVectorDescriptor {
        storage_type: storage_type.to_string(),
        path_or_inline_dv: path_or_inline_dv.to_string(),
        offset,
        size_in_bytes,
        cardinality,
    }
}

/// The serialized bitmap of `rows`: magic number, then the portable 64-bit format.
fn serialize(rows: &[u64]) -> Vec<u8> {
    let map: RoaringTreemap = rows.iter().copied().collect();
    let mut out = PORTABLE_MAGIC.to_le_bytes().to_vec();
    map.serialize_into(&mut out).unwrap();
    out
}

/// What a DV file holds for one vector: size, bitmap, CRC-32.
fn frame(bitmap: &[u8]) -> Vec<u8> {
    let mut out = (bitmap.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(bitmap);
    out.extend_from_slice(&crc32fast::hash(bitmap).to_be_bytes());
    out
}

fn file_descriptor(bitmap: &[u8], cardinality: i64) -> DeletionVectorDescriptor {
    descriptor(
        "u",
        "vBn[lx{q8@P<9BNH/isA",
        Some(1),
        bitmap.len() as i32,
        cardinality,
    )
}

fn rows(dv: &DeletionVector) -> Vec<u64> {
    dv.iter().collect()
}

fn selectors(selection: RowSelection) -> Vec<(bool, usize)> {
    Vec::<RowSelector>::from(selection)
        .into_iter()
        .map(|s| (s.skip, s.row_count))
        .collect()
}

fn mask(array: &BooleanArray) -> Vec<bool> {
    array.iter().map(|v| v.unwrap_or(false)).collect()
}

// ---- where a vector is -------------------------------------------------------------

#[test]
fn uuid_relative_paths() {
    // PROTOCOL.md, JSON Example 1: prefix "ab", UUID d2c639aa-8816-431a-aaf6-d3fe2512ff61.
    let d = descriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4), 40, 6);
    assert_eq!(
        dv_source(&d).unwrap(),
        DvSource::File {
            path: "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin".into(),
            offset: 4,
            size: 48,
        }
    );
    // No prefix: the file is at the table root. kernel__table-with-dv-small's file is
    // named deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin.
    let d = descriptor("u", "vBn[lx{q8@P<9BNH/isA", None, 36, 2);
    assert_eq!(
        dv_source(&d).unwrap(),
        DvSource::File {
            path: "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin".into(),
            offset: 1,
            size: 44,
        }
    );
    assert_eq!(
        format_uuid(&[0xAB; 16]),
        "abababab-abab-abab-abab-abababababab"
    );
}

#[test]
fn absolute_paths() {
    // PROTOCOL.md, JSON Example 2.
    let path = "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin";
    let d = descriptor("p", path, Some(4), 40, 6);
    assert_eq!(
        dv_source(&d).unwrap(),
        DvSource::File {
            path: path.into(),
            offset: 4,
            size: 48,
        }
    );
    let d = descriptor("p", "relative/deletion_vector.bin", None, 40, 6);
    let err = dv_source(&d).unwrap_err();
    assert_eq!(err.code(), "invalid_log");
    assert!(err.to_string().contains("absolute URI"), "{err}");
}

#[test]
fn bad_descriptors_are_errors() {
    let bad = [
        descriptor("u", "short", None, 36, 2),
        descriptor("u", "", None, 36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH/is ", None, 36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH/isé", None, 36, 2),
        descriptor("u", "ééééééééééééééééééééé", None, 36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH%nSc1", None, 36, 2),
        descriptor("u", "Bn[lx{q8@P<9BNH##093", None, 36, 2),
        descriptor("u", "../vBn[lx{q8@P<9BNH/isA", None, 36, 2),
        descriptor("u", "/vBn[lx{q8@P<9BNH/isA", None, 36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(-1), 36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(1), -36, 2),
        descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, -2),
        descriptor("x", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 2),
        descriptor("", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 2),
        descriptor("i", "HelloWorl", None, 8, 2),
        descriptor("i", "HelloWorld", None, 12, 2),
        descriptor("i", "HelloWorld", None, 4, 2),
    ];
    for d in bad {
        let err = dv_source(&d).expect_err(&format!("{d:?}"));
        assert_eq!(err.code(), "invalid_log", "{d:?}");
    }
    // The error names what is wrong.
    let err = dv_source(&descriptor("u", "vBn[lx{q8@P<9BNH/is ", None, 36, 2)).unwrap_err();
    assert!(
        err.to_string().contains("invalid Z85 character ' '"),
        "{err}"
    );
    let err = dv_source(&descriptor("x", "abc", None, 36, 2)).unwrap_err();
    assert!(err.to_string().contains("storageType \"x\""), "{err}");
}

// ---- inline vectors ----------------------------------------------------------------

/// PROTOCOL.md, JSON Example 3 (deletes rows 3, 4, 7, 11, 18, 29).
const SPEC_INLINE: &str = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L";

#[test]
fn the_protocol_inline_example() {
    // The example's header is not the format the protocol's appendix defines: its first
    // 4 bytes are 1681511376 in big-endian order (Delta's older "native" layout: bucket
    // count and bitmap size follow as big-endian 32-bit numbers). It decodes as Z85 to the
    // 40 bytes `sizeInBytes` announces, and is refused with a clear error.
    let bytes = z85::decode(SPEC_INLINE).unwrap();
    assert_eq!(bytes.len(), 40);
    assert_eq!(bytes[..4], NATIVE_MAGIC.to_be_bytes());
    assert_eq!(bytes[4..8], 1u32.to_be_bytes());
    assert_eq!(bytes[8..12], 28u32.to_be_bytes());
    let err = decode_inline(&descriptor("i", SPEC_INLINE, None, 40, 6)).unwrap_err();
    assert!(err.to_string().contains("magic number"), "{err}");

    // The example's 32-bit bitmap (its last 28 bytes, the last 35 characters), framed the
    // way the appendix says: little-endian magic, 8-byte little-endian bucket count 1,
    // bucket key 0.
    let mut header = PORTABLE_MAGIC.to_le_bytes().to_vec();
    header.extend_from_slice(&1u64.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    let text = format!("{}{}", z85::encode(header), &SPEC_INLINE[15..]);
    assert!(text.starts_with("^Bg9^"), "{text}");
    let d = descriptor("i", &text, None, 44, 6);
    let dv = decode_inline(&d).unwrap();
    assert_eq!(rows(&dv), [3, 4, 7, 11, 18, 29]);
    assert_eq!(dv.cardinality(), 6);
    assert_eq!(
        dv_source(&d).unwrap(),
        DvSource::Inline(z85::decode(&text).unwrap())
    );
    // A wrong cardinality is an error.
    let err = decode_inline(&descriptor("i", &text, None, 44, 5)).unwrap_err();
    assert!(err.to_string().contains("cardinality is 5"), "{err}");
}

#[test]
fn inline_with_a_short_final_group() {
    // kernel__cdf-table-with-dv: 34 bytes, the last two written as the `z85` crate's short
    // group "##093" (bytes 0x03 0x00: row 3 of a 10-row file).
    let d = descriptor(
        "i",
        "^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093",
        None,
        34,
        1,
    );
    match dv_source(&d).unwrap() {
        DvSource::Inline(bytes) => assert_eq!(bytes.len(), 34),
        other => panic!("{other:?}"),
    }
    assert_eq!(rows(&decode_inline(&d).unwrap()), [3]);
    // The same text with another sizeInBytes is refused.
    for size in [33, 36] {
        let wrong = descriptor("i", &d.path_or_inline_dv, None, size, 1);
        let err = decode_inline(&wrong).unwrap_err();
        assert!(err.to_string().contains("decodes to 34 bytes"), "{err}");
    }
}

#[test]
fn inline_zero_padding_is_cut_to_size_in_bytes() {
    // Delta's reference writer pads with zero bytes to a multiple of 4.
    let bitmap = serialize(&[3]);
    assert_eq!(bitmap.len(), 34);
    let mut padded = bitmap.clone();
    padded.extend_from_slice(&[0, 0]);
    let text = z85::encode(&padded);
    let d = descriptor("i", &text, None, 34, 1);
    assert_eq!(rows(&decode_inline(&d).unwrap()), [3]);
    // Without the cut, the two padding bytes would trail the bitmap.
    let err = decode_inline(&descriptor("i", &text, None, 36, 1)).unwrap_err();
    assert!(err.to_string().contains("unexpected bytes"), "{err}");
}

#[test]
fn inline_round_trip_with_padding() {
    for rows_in in [
        vec![],
        vec![0],
        vec![5, 6, 7, 100_000],
        vec![0, 1 << 32, (1 << 32) + 7, 3 << 33],
    ] {
        let bitmap = serialize(&rows_in);
        let mut padded = bitmap.clone();
        padded.resize(bitmap.len().div_ceil(4) * 4, 0);
        let text = z85::encode(&padded);
        let d = descriptor("i", &text, None, bitmap.len() as i32, rows_in.len() as i64);
        let dv = decode_inline(&d).unwrap();
        assert_eq!(rows(&dv), rows_in);
    }
}

#[test]
fn decode_inline_refuses_file_descriptors() {
    let d = descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 2);
    assert!(decode_inline(&d).is_err());
    let bitmap = serialize(&[1]);
    let i = descriptor("i", "HelloWorld", None, 8, 1);
    assert!(decode_file_range(&i, "x.bin", &frame(&bitmap)).is_err());
}

// ---- file vectors ------------------------------------------------------------------

#[test]
fn file_range_round_trip() {
    let rows_in = [2, 3, 4, 65_536, 1 << 32, (5 << 32) + 1];
    let bitmap = serialize(&rows_in);
    let d = file_descriptor(&bitmap, 6);
    let dv = decode_file_range(&d, "dv.bin", &frame(&bitmap)).unwrap();
    assert_eq!(rows(&dv), rows_in);
    assert_eq!(dv.max_row(), Some((5 << 32) + 1));
    assert!(dv.contains(1 << 32) && !dv.contains(1));
    assert_eq!(dv.deleted_in(0, 5), 3);
    assert_eq!(dv.deleted_in(1 << 32, u64::MAX), 2);
}

#[test]
fn corrupt_files_are_clear_errors() {
    let bitmap = serialize(&[0, 9]);
    let d = file_descriptor(&bitmap, 2);
    let good = frame(&bitmap);
    assert!(decode_file_range(&d, "dv.bin", &good).is_ok());

    // A flipped bit in the bitmap: the checksum catches it, and the message names the file.
    let mut bad = good.clone();
    bad[10] ^= 0x01;
    let err = decode_file_range(&d, "t/deletion_vector_x.bin", &bad).unwrap_err();
    assert_eq!(err.code(), "invalid_log");
    let msg = err.to_string();
    assert!(msg.contains("t/deletion_vector_x.bin"), "{msg}");
    assert!(msg.contains("checksum mismatch"), "{msg}");

    // A flipped bit in the checksum itself.
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x80;
    let err = decode_file_range(&d, "dv.bin", &bad).unwrap_err();
    assert!(err.to_string().contains("checksum mismatch"), "{err}");

    // The size prefix disagrees with sizeInBytes.
    let mut bad = good.clone();
    bad[3] += 1;
    let err = decode_file_range(&d, "dv.bin", &bad).unwrap_err();
    assert!(err.to_string().contains("the log says"), "{err}");

    // The wrong cardinality in the log.
    let err = decode_file_range(&file_descriptor(&bitmap, 3), "dv.bin", &good).unwrap_err();
    assert!(err.to_string().contains("deletes 2 rows"), "{err}");

    // The wrong magic number, with a valid checksum.
    let mut other = bitmap.clone();
    other[0] ^= 0x02;
    let err = decode_file_range(&d, "dv.bin", &frame(&other)).unwrap_err();
    assert!(err.to_string().contains("magic number"), "{err}");

    // Truncated or overlong input, at every length: errors, never panics.
    for len in 0..good.len() {
        let err = decode_file_range(&d, "dv.bin", &good[..len]).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{len}: {err}");
    }
    let mut long = good.clone();
    long.push(0);
    assert!(decode_file_range(&d, "dv.bin", &long).is_err());
}

#[test]
fn malformed_bitmaps_never_panic() {
    let bitmap = serialize(&[1, 2, 3, 1000, 70_000, 1 << 32]);
    // Every truncation of the bitmap, framed with a correct checksum.
    for len in 0..bitmap.len() {
        let cut = &bitmap[..len];
        let d = file_descriptor(cut, 6);
        assert!(
            decode_file_range(&d, "dv.bin", &frame(cut)).is_err(),
            "{len}"
        );
    }
    // Every byte altered, with a correct checksum: decoding may succeed or fail, but never
    // panics, and a success always matches the cardinality.
    for at in 0..bitmap.len() {
        for x in [0x01, 0x80, 0xFF] {
            let mut b = bitmap.clone();
            b[at] ^= x;
            let d = file_descriptor(&b, 6);
            if let Ok(dv) = decode_file_range(&d, "dv.bin", &frame(&b)) {
                assert_eq!(dv.cardinality(), 6);
            }
        }
    }
    // A bucket count far beyond the data.
    let mut huge = PORTABLE_MAGIC.to_le_bytes().to_vec();
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    let err = decode_file_range(&file_descriptor(&huge, 0), "dv.bin", &frame(&huge));
    assert!(err.unwrap_err().to_string().contains("claims"));
}

#[test]
fn bucket_keys_must_ascend_and_stay_positive() {
    let one = |key: u32| {
        let mut b = key.to_le_bytes().to_vec();
        let bitmap: RoaringBitmap = [7u32].into_iter().collect();
        bitmap.serialize_into(&mut b).unwrap();
        b
    };
    let build = |keys: &[u32]| {
        let mut out = PORTABLE_MAGIC.to_le_bytes().to_vec();
        out.extend_from_slice(&(keys.len() as u64).to_le_bytes());
        for &k in keys {
            out.extend(one(k));
        }
        out
    };
    let ok = build(&[0, 3]);
    let dv = decode_file_range(&file_descriptor(&ok, 2), "dv.bin", &frame(&ok)).unwrap();
    assert_eq!(rows(&dv), [7, (3 << 32) + 7]);
    for keys in [&[3, 0][..], &[2, 2][..], &[0x8000_0000][..]] {
        let b = build(keys);
        let err = decode_file_range(&file_descriptor(&b, 2), "dv.bin", &frame(&b));
        assert!(err.is_err(), "{keys:?}");
    }
    let native = [NATIVE_MAGIC.to_le_bytes(), [0; 4]].concat();
    let err = decode_file_range(&file_descriptor(&native, 0), "dv.bin", &frame(&native));
    assert!(err.unwrap_err().to_string().contains("native"));
}

// ---- selections and masks ----------------------------------------------------------

#[test]
fn row_selection_keeps_exactly_the_live_rows() {
    let dv = DeletionVector::from_rows([1, 2, 5, 9]);
    // Row groups of 4, 4 and 2 rows.
    let all = [(0, 4), (4, 4), (8, 2)];
    assert_eq!(
        selectors(dv.row_selection(&all)),
        [
            (false, 1),
            (true, 2),
            (false, 2),
            (true, 1),
            (false, 3),
            (true, 1)
        ]
    );
    // Only the second and third groups: rows 4..10.
    assert_eq!(
        selectors(dv.row_selection(&all[1..])),
        [(false, 1), (true, 1), (false, 3), (true, 1)]
    );
    // Only the first and last groups, rows 0..4 then 8..10.
    assert_eq!(
        selectors(dv.row_selection(&[all[0], all[2]])),
        [(false, 1), (true, 2), (false, 2), (true, 1)]
    );
    // No deletions in a group: one select of the whole group.
    assert_eq!(
        selectors(DeletionVector::default().row_selection(&all)),
        [(false, 10)]
    );
    // Everything deleted.
    let everything = DeletionVector::from_rows(0..10);
    assert_eq!(selectors(everything.row_selection(&all)), [(true, 10)]);
    assert!(!everything.row_selection(&all).selects_any());
    // Empty groups and no groups.
    assert_eq!(selectors(dv.row_selection(&[(0, 0)])), []);
    assert_eq!(selectors(dv.row_selection(&[])), []);
    // Row indexes beyond 2^32.
    let far = DeletionVector::from_rows([(1 << 32) + 1]);
    assert_eq!(
        selectors(far.row_selection(&[((1 << 32) - 2, 5)])),
        [(false, 3), (true, 1), (false, 1)]
    );
    // A group that would run past u64::MAX is clamped, not a panic.
    let _ = far.row_selection(&[(u64::MAX - 1, 5)]);
}

#[test]
fn keep_masks() {
    let dv = DeletionVector::from_rows([1, 2, 5, 9]);
    assert_eq!(
        mask(&dv.keep_mask(0, 10)),
        [true, false, false, true, true, false, true, true, true, false]
    );
    assert_eq!(mask(&dv.keep_mask(4, 4)), [true, false, true, true]);
    assert_eq!(mask(&dv.keep_mask(10, 3)), [true, true, true]);
    assert_eq!(dv.keep_mask(3, 0).len(), 0);
    assert_eq!(arrow_array::Array::null_count(&dv.keep_mask(0, 10)), 0);
    let far = DeletionVector::from_rows([(1 << 32) + 1]);
    assert_eq!(mask(&far.keep_mask(1 << 32, 3)), [true, false, true]);
    assert_eq!(mask(&far.keep_mask(u64::MAX - 1, 2)), [true, true]);
}

/// The Parquet reader, given the selection, returns exactly the rows not deleted, also
/// when it reads a subset of the row groups.
#[test]
fn parquet_reads_exactly_the_live_rows() {
    use arrow_array::{Array, Int64Array, RecordBatch};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    let ids = Int64Array::from_iter_values(0..10);
    let batch = RecordBatch::try_from_iter([("id", Arc::new(ids) as _)]).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(4))
        .build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let data = bytes::Bytes::from(buf);

    let dv = DeletionVector::from_rows([1, 2, 5, 9]);
    let read = |groups: Vec<usize>| -> Vec<i64> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(data.clone()).unwrap();
        let meta = builder.metadata().clone();
        assert_eq!(meta.num_row_groups(), 3);
        let mut first = 0u64;
        let mut starts = Vec::new();
        for rg in meta.row_groups() {
            starts.push((first, rg.num_rows() as u64));
            first += rg.num_rows() as u64;
        }
        let wanted: Vec<(u64, u64)> = groups.iter().map(|&g| starts[g]).collect();
        let reader = builder
            .with_row_groups(groups)
            .with_row_selection(dv.row_selection(&wanted))
            .build()
            .unwrap();
        let mut out = Vec::new();
        for b in reader {
            let b = b.unwrap();
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            assert_eq!(col.null_count(), 0);
            out.extend(col.values().iter().copied());
        }
        out
    };
    assert_eq!(read(vec![0, 1, 2]), [0, 3, 4, 6, 7, 8]);
    assert_eq!(read(vec![1, 2]), [4, 6, 7, 8]);
    assert_eq!(read(vec![0, 2]), [0, 3, 8]);
    assert_eq!(read(vec![2]), [8]);
}

#[test]
fn a_declared_size_past_what_its_rows_need_is_refused_before_any_read() {
    let limit_of = |d: &DeletionVectorDescriptor| match dv_source(d) {
        Err(DeltaError::LimitExceeded {
            limit, found, max, ..
        }) => Some((limit, found, max)),
        _ => None,
    };
    // One deleted row cannot take a megabyte.
    let one_row = descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 1 << 20, 1);
    assert_eq!(
        limit_of(&one_row),
        Some((
            "deletion vector size (bytes) for its cardinality",
            1 << 20,
            104
        ))
    );
    // Nor any vector more than the maximum, whatever its cardinality says.
    let huge = descriptor("u", "vBn[lx{q8@P<9BNH/isA", Some(1), i32::MAX, i64::MAX);
    assert_eq!(
        limit_of(&huge),
        Some((
            "deletion vector size (bytes)",
            i32::MAX as u64,
            crate::limits::MAX_DELETION_VECTOR_BYTES
        ))
    );
    // A real vector of every row of a 100,000-row file (bitmaps) fits its bound.
    let every = serialize(&(0..100_000).collect::<Vec<u64>>());
    let d = file_descriptor(&every, 100_000);
    assert!(dv_source(&d).is_ok(), "{} bytes", every.len());
    // And so does a sparse one of single rows far apart (a container per row).
    let sparse = serialize(&(0..1_000).map(|i| i << 33).collect::<Vec<u64>>());
    let d = file_descriptor(&sparse, 1_000);
    assert!(dv_source(&d).is_ok(), "{} bytes", sparse.len());
}
