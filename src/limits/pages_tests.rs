use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaDataReader;

use super::*;
use crate::fixture::{parquet_without_page_index, patch_first_page_header, PageHeaderPatch};

const MIB: u64 = 1 << 20;

/// A compact-protocol page header: type, sizes and, for a dictionary page, `num_values`.
fn header(page_type: i32, uncompressed: i32, compressed: i32, dict_values: Option<i32>) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, v: i32) {
        let mut v = ((i64::from(v) << 1) ^ (i64::from(v) >> 63)) as u64;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut out = Vec::new();
    for v in [page_type, uncompressed, compressed] {
        out.push(0x15);
        varint(&mut out, v);
    }
    if let Some(n) = dict_values {
        // Field 7 (delta 4 from field 3): struct { 1: num_values, 2: encoding PLAIN }.
        out.push(0x4c);
        out.push(0x15);
        varint(&mut out, n);
        out.push(0x15);
        varint(&mut out, 0);
        out.push(0);
    }
    out.push(0);
    out
}

fn facts(total: u64, value_bytes: u64) -> ChunkFacts {
    ChunkFacts {
        total_uncompressed: total,
        value_eighths: value_bytes * 8,
        levels: MaxLevels::default(),
        codec: Compression::SNAPPY,
        rows: 1 << 20,
        decompress: false,
        value_width: value_bytes,
    }
}

/// A compact-protocol header of a V1 data page of `values` values, its definition levels
/// RLE-encoded.
fn data_page_header(values: i32, uncompressed: i32, compressed: i32) -> Vec<u8> {
    let mut out = header(0, uncompressed, compressed, None);
    out.pop();
    // Field 5 (delta 2 from field 3): struct { 1: num_values, 2: encoding PLAIN,
    // 3: definition RLE, 4: repetition RLE }.
    out.push(0x2c);
    for v in [values, 0, 3, 3] {
        out.push(0x15);
        out.extend(zigzag(v));
    }
    out.extend([0, 0]);
    out
}

fn zigzag(v: i32) -> Vec<u8> {
    let mut v = ((i64::from(v) << 1) ^ (i64::from(v) >> 63)) as u64;
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Facts of a nullable, flat column of `rows` rows compressed with snappy.
fn nullable(rows: u64, decompress: bool) -> ChunkFacts {
    ChunkFacts {
        levels: MaxLevels {
            repetition: 0,
            definition: 1,
        },
        rows,
        decompress,
        ..facts(1 << 20, 8)
    }
}

/// `plain` compressed as parquet's writers compress it with `codec`.
fn compress(codec: Compression, plain: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match codec {
        Compression::SNAPPY => snap::raw::Encoder::new()
            .compress_vec(plain)
            .unwrap_or_else(|e| panic!("{e}")),
        Compression::GZIP(_) => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            w.write_all(plain).unwrap_or_else(|e| panic!("{e}"));
            w.finish().unwrap_or_else(|e| panic!("{e}"))
        }
        Compression::BROTLI(_) => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 1, 22);
                w.write_all(plain).unwrap_or_else(|e| panic!("{e}"));
            }
            out
        }
        Compression::LZ4_RAW => lz4_flex::block::compress(plain),
        Compression::ZSTD(_) => zstd::bulk::compress(plain, 1).unwrap_or_else(|e| panic!("{e}")),
        other => panic!("no compressor for {other:?} here"),
    }
}

/// The codecs with a compressor in [`compress`].
fn codecs() -> [Compression; 5] {
    [
        Compression::SNAPPY,
        Compression::GZIP(Default::default()),
        Compression::BROTLI(Default::default()),
        Compression::LZ4_RAW,
        Compression::ZSTD(Default::default()),
    ]
}

/// A V1 data page of `values` values whose definition levels are `levels`, compressed with
/// `codec`.
fn compressed_page(codec: Compression, values: i32, levels: &[u8], plain_values: &[u8]) -> Vec<u8> {
    let mut plain = u32::try_from(levels.len())
        .unwrap_or(0)
        .to_le_bytes()
        .to_vec();
    plain.extend(levels);
    plain.extend(plain_values);
    let body = compress(codec, &plain);
    let len = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let mut page = data_page_header(values, len(plain.len()), len(body.len()));
    page.extend(body);
    page
}

fn snappy_page(values: i32, levels: &[u8], plain_values: &[u8]) -> Vec<u8> {
    compressed_page(Compression::SNAPPY, values, levels, plain_values)
}

#[test]
fn compressed_contents_are_checked_decompressed_where_panics_abort() {
    for codec in codecs() {
        let check = |bytes: &[u8], decompress| {
            let facts = ChunkFacts {
                codec,
                ..nullable(100, decompress)
            };
            check_pages(bytes, facts, MIB, "f", Phase::Read)
        };
        // Definition levels: a bit-packed run of 3 groups (3 bytes at width 1) in 1 byte.
        let bad = compressed_page(codec, 8, &[0x07, 0xff], &[0; 8]);
        assert!(
            check(&bad, false).is_ok(),
            "{codec:?}: left to the contained decoder"
        );
        let e = message(check(&bad, true));
        assert!(e.contains("bit-packed run of 3 groups"), "{codec:?}: {e}");
        // Levels that fit (an RLE run of 8 ones) pass both ways, as does a body that does not
        // decompress (the decoder's own error).
        let good = compressed_page(codec, 8, &[0x10, 0x01], &[0; 64]);
        assert!(
            check(&good, false).is_ok() && check(&good, true).is_ok(),
            "{codec:?}"
        );
        let mut garbled = data_page_header(8, 100, 6);
        garbled.extend([0xff; 6]);
        assert!(check(&garbled, true).is_ok(), "{codec:?}");
    }
}

#[test]
fn page_values_past_the_row_groups_rows_are_refused() {
    let page = |values| snappy_page(values, &[0x10, 0x01], &[0; 64]);
    let check = |bytes: &[u8], facts| check_pages(bytes, facts, MIB, "f", Phase::Read);
    assert!(check(&page(8), nullable(8, false)).is_ok());
    let e = message(check(&page(9), nullable(8, false)));
    assert!(e.contains("9 values") && e.contains("of 8 rows"), "{e}");
    // Two pages of 5 in a row group of 8 rows; the values of a repeated column are not rows.
    let two = [page(5), page(5)].concat();
    assert!(check(&two, nullable(8, false)).is_err());
    let repeated = ChunkFacts {
        levels: MaxLevels {
            repetition: 1,
            definition: 1,
        },
        ..nullable(8, false)
    };
    assert!(check(&two, repeated).is_ok());
    assert!(check(&page(-1), nullable(8, false)).is_err());
}

#[test]
fn written_files_pass_where_page_contents_are_checked_decompressed() -> Result<()> {
    crate::limits::behave_as_aborting(true);
    for codec in [
        Compression::SNAPPY,
        Compression::LZ4_RAW,
        Compression::GZIP(Default::default()),
        Compression::BROTLI(Default::default()),
        Compression::ZSTD(Default::default()),
    ] {
        let file = parquet_file(codec);
        check(&file)?;
        // Not passed for want of decompressing: every data page of every chunk decompresses
        // to its declared size.
        let metadata = ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::copy_from_slice(&file))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut pages = 0;
        for chunk in metadata.row_groups().iter().flat_map(|rg| rg.columns()) {
            let (start, len) = chunk.byte_range();
            let bytes = &file[start as usize..(start + len) as usize];
            let mut at = 0;
            while let Some((header, n)) = bytes.get(at..).and_then(|b| read_header(b).ok()) {
                let (size, stored) = (
                    header.uncompressed.unwrap_or(0),
                    header.compressed.unwrap_or(0),
                );
                let body = &bytes[at + n..at + n + stored as usize];
                if let Some(page) = &header.data {
                    let plain = decompressed_body(page, body, size as u64, codec);
                    assert_eq!(plain.map(|p| p.len()), Some(size as usize), "{codec:?}");
                    pages += 1;
                }
                at += n + stored as usize;
            }
        }
        assert!(pages >= 2, "{codec:?}: {pages} data pages");
    }
    crate::limits::behave_as_aborting(false);
    Ok(())
}

fn code(r: Result<()>) -> Option<&'static str> {
    r.err().map(|e| e.code())
}

/// The text of `r`'s error; empty when it is `Ok`.
fn message(r: Result<()>) -> String {
    r.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn pages_within_their_chunk_and_the_maximum_pass() {
    let mut bytes = header(2, 800, 10, Some(100));
    bytes.extend([0; 10]);
    bytes.extend(data_page_header(100, 1000, 5));
    bytes.extend([0; 5]);
    let checked = check_pages(&bytes, facts(4096, 8), MIB, "f", Phase::Read);
    assert!(checked.is_ok(), "{checked:?}");
}

#[test]
fn a_data_page_without_the_header_struct_of_its_type_is_refused() {
    // Type 0 (V1) with no data page header at all; type 3 (V2) with a V1 header.
    let mut v2_as_v1 = data_page_header(100, 1000, 5);
    v2_as_v1[1] = 6; // the type's zigzag varint: 3
    for bytes in [header(0, 1000, 5, None), v2_as_v1] {
        let mut page = bytes;
        page.extend([0; 5]);
        let found = message(check_pages(&page, facts(4096, 8), MIB, "f", Phase::Read));
        assert!(found.contains("without the data page header"), "{found}");
    }
}

#[test]
fn a_page_over_the_maximum_or_its_chunk_is_refused() {
    let two_gib = header(0, i32::MAX, 10, None);
    let e = check_pages(&two_gib, facts(u64::MAX, 8), 256 * MIB, "f", Phase::Read);
    match e {
        Err(DeltaError::LimitExceeded {
            limit, found, max, ..
        }) => {
            assert_eq!(limit, "page uncompressed size");
            assert_eq!((found, max), (i32::MAX as u64, 256 * MIB));
        }
        other => panic!("{other:?}"),
    }
    let over_chunk = header(0, 5000, 10, None);
    assert_eq!(
        code(check_pages(
            &over_chunk,
            facts(4096, 8),
            MIB,
            "f",
            Phase::Read
        )),
        Some("limit_exceeded")
    );
    // The second page is checked too.
    let mut two = data_page_header(10, 100, 3);
    two.extend([0; 3]);
    two.extend(header(0, 5000, 10, None));
    assert_eq!(
        code(check_pages(&two, facts(4096, 8), MIB, "f", Phase::Read)),
        Some("limit_exceeded")
    );
}

#[test]
fn a_dictionary_of_more_values_than_its_page_holds_is_refused() {
    let bomb = header(2, 800, 10, Some(i32::MAX));
    assert_eq!(
        code(check_pages(&bomb, facts(4096, 8), MIB, "f", Phase::Read)),
        Some("limit_exceeded")
    );
    // 100 values of 8 bytes fit 800 bytes, 101 do not; booleans take a bit each.
    let full = header(2, 800, 10, Some(100));
    assert!(check_pages(&full, facts(4096, 8), MIB, "f", Phase::Read).is_ok());
    let over = header(2, 800, 10, Some(101));
    assert!(check_pages(&over, facts(4096, 8), MIB, "f", Phase::Read).is_err());
    let bits = header(2, 100, 10, Some(800));
    let boolean = ChunkFacts {
        value_eighths: 1,
        ..facts(4096, 8)
    };
    assert!(check_pages(&bits, boolean, MIB, "f", Phase::Read).is_ok());
}

#[test]
fn unreadable_headers_are_refused_unless_the_fetch_cut_them_short() {
    let walk = || PageWalk::new(facts(10, 8), MIB, "f", Phase::Read, None);
    // A negative size is the decoder's own error; no bytes, no page.
    for bytes in [vec![], header(0, -5, 10, None)] {
        assert!(check_pages(&bytes, facts(10, 8), MIB, "f", Phase::Read).is_ok());
    }
    // Cut short, or not Thrift, in bytes that run to the chunk's end: refused (arrow-rs's
    // own reader can spin skipping what such a header declares).
    let list_of_a_billion = [0x19, 0xf8, 0x80, 0x80, 0x80, 0x04];
    for bytes in [vec![0x15], vec![0xff; 40], list_of_a_billion.to_vec()] {
        let e = message(check_pages(&bytes, facts(10, 8), MIB, "f", Phase::Read));
        assert!(e.contains("a page header that"), "{bytes:?}: {e}");
    }
    // Cut short by the end of a range fetched in part: left to the decoder.
    assert!(walk_pages(&[0x15], walk(), false).is_ok());
    assert!(walk_pages(&list_of_a_billion, walk(), false).is_ok());
    assert!(walk_pages(&[0xff; 40], walk(), false).is_err());
}

/// A file of 2,000 rows (ids and a dictionary-encoded string column).
fn parquet_file(codec: Compression) -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let ids = Int64Array::from_iter_values((0..2000).map(|i| i % 50));
    let s = StringArray::from_iter_values((0..2000).map(|i| format!("v{}", i % 7)));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(ids), Arc::new(s)])
        .unwrap_or_else(|e| panic!("{e}"));
    parquet_without_page_index(&[batch], codec).unwrap_or_else(|e| panic!("{e}"))
}

fn check(file: &[u8]) -> Result<()> {
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::copy_from_slice(file))
        .unwrap_or_else(|e| panic!("{e}"));
    check_file(file, &metadata, None, DEFAULT_PAGE, "part-0.parquet")
}

const DEFAULT_PAGE: u64 = crate::limits::DEFAULT_MAX_PAGE_BYTES;

#[test]
fn written_files_pass_and_patched_ones_do_not() -> Result<()> {
    for codec in [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::LZ4_RAW,
        Compression::BROTLI(Default::default()),
        Compression::ZSTD(Default::default()),
    ] {
        let file = parquet_file(codec);
        check(&file)?;
        let huge = patch_first_page_header(
            &file,
            PageHeaderPatch {
                uncompressed_page_size: Some(i32::MAX),
                ..Default::default()
            },
        )?;
        assert_eq!(code(check(&huge)), Some("limit_exceeded"), "{codec:?}");
        let dict = patch_first_page_header(
            &file,
            PageHeaderPatch {
                dictionary_num_values: Some(i32::MAX),
                ..Default::default()
            },
        )?;
        let e = message(check(&dict));
        assert!(
            e.contains("dictionary page num_values is 2147483647"),
            "{e}"
        );
        assert!(e.contains("part-0.parquet"), "{e}");
    }
    Ok(())
}

#[test]
fn a_dictionary_of_no_values_in_some_bytes_is_refused() {
    // A fuzzing finding: arrow-rs divides the page's bytes by its value count.
    let check = |h: &[u8], facts: ChunkFacts| code(check_pages(h, facts, MIB, "f", Phase::Read));
    let framed_empty = header(2, 0, 5, Some(0));
    assert_eq!(
        check(&framed_empty, facts(4096, 8)),
        None,
        "a codec's frame of no bytes"
    );
    let plain = ChunkFacts {
        codec: Compression::UNCOMPRESSED,
        ..facts(4096, 8)
    };
    assert_eq!(
        check(&framed_empty, plain),
        Some("parquet"),
        "5 stored bytes, no codec"
    );
    assert_eq!(
        check(&header(2, 10, 5, Some(0)), facts(4096, 8)),
        Some("parquet")
    );
    assert_eq!(
        check(&header(2, 10, 5, Some(-3)), facts(4096, 8)),
        Some("parquet")
    );
    assert_eq!(
        check(&header(2, 0, 0, Some(0)), plain),
        None,
        "an empty dictionary"
    );
}

/// A file of 2,000 rows in pages of at most 100 rows, with its page index: its bytes and
/// its footer with the offset index read.
fn paged_file(codec: Compression) -> (Vec<u8>, ParquetMetaData) {
    use parquet::file::metadata::PageIndexPolicy;
    use parquet::file::properties::WriterProperties;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let ids = Int64Array::from_iter_values(0..2000);
    let s = StringArray::from_iter((0..2000).map(|i| (i % 3 != 0).then(|| format!("v{}", i % 7))));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(ids), Arc::new(s)])
        .unwrap_or_else(|e| panic!("{e}"));
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .build();
    let mut file = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut file, schema, Some(props))
        .unwrap_or_else(|e| panic!("{e}"));
    writer.write(&batch).unwrap_or_else(|e| panic!("{e}"));
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&Bytes::copy_from_slice(&file))
        .unwrap_or_else(|e| panic!("{e}"));
    (file, metadata)
}

/// `metadata` with the page locations of column `column` of row group 0 changed by `edit`.
fn with_locations(
    metadata: &ParquetMetaData,
    column: usize,
    edit: impl Fn(&mut Vec<parquet::file::page_index::offset_index::PageLocation>),
) -> ParquetMetaData {
    let mut index = metadata
        .offset_index()
        .cloned()
        .unwrap_or_else(|| panic!("no offset index"));
    let mut pages = index[0][column].page_locations().clone();
    edit(&mut pages);
    index[0][column] = parquet::file::page_index::offset_index::OffsetIndexMetaData {
        page_locations: pages,
        unencoded_byte_array_data_bytes: None,
    };
    metadata
        .clone()
        .into_builder()
        .set_offset_index(Some(index))
        .build()
}

/// The pages each fetched as the decoder fetches them when it selects pages: the chunk's
/// dictionary page, then one range per page the offset index names.
fn check_page_by_page(file: &[u8], metadata: &ParquetMetaData) -> Result<()> {
    let index = ChunkIndex::new(metadata);
    let mut ranges = Vec::new();
    for chunk in &index.chunks {
        let first = chunk.pages.first().map_or(chunk.end, |&(offset, _)| offset);
        ranges.push((chunk.start, first));
        ranges.extend(
            chunk
                .pages
                .iter()
                .map(|&(offset, size)| (offset, offset + size)),
        );
    }
    let fetched = ranges.iter().filter(|(s, e)| e > s).map(|&(s, e)| {
        let (s_at, e_at) = (s as usize, (e as usize).min(file.len()));
        (s, &file[s_at..e_at])
    });
    index.check_ranges(fetched, DEFAULT_PAGE, "part-0.parquet", Phase::Read)
}

#[test]
fn pages_are_checked_where_the_offset_index_places_them() -> Result<()> {
    for codec in codecs() {
        let (file, metadata) = paged_file(codec);
        let pages = metadata
            .offset_index()
            .map_or(0, |i| i[0][1].page_locations().len());
        assert!(pages >= 10, "{codec:?}: {pages} pages");
        check_chunk_bounds(&metadata, file.len() as u64, "part-0.parquet", Phase::Read)?;
        check_file(&file, &metadata, None, DEFAULT_PAGE, "part-0.parquet")?;
        check_page_by_page(&file, &metadata)?;

        // A page the index gives one byte less than its header and body take.
        let short = with_locations(&metadata, 1, |p| p[3].compressed_page_size -= 1);
        check_chunk_bounds(&short, file.len() as u64, "part-0.parquet", Phase::Read)?;
        for result in [
            check_file(&file, &short, None, DEFAULT_PAGE, "part-0.parquet"),
            check_page_by_page(&file, &short),
        ] {
            let e = message(result);
            assert!(e.contains("the page index gives it"), "{codec:?}: {e}");
        }
        // A page placed inside the one before it.
        let inside = with_locations(&metadata, 1, |p| p[4].offset = p[3].offset + 2);
        let e = message(check_chunk_bounds(
            &inside,
            file.len() as u64,
            "part-0.parquet",
            Phase::Read,
        ));
        assert!(
            e.contains("page 4 of column 1 in row group 0"),
            "{codec:?}: {e}"
        );
    }
    Ok(())
}

#[test]
fn page_locations_outside_their_column_chunk_are_refused() {
    let (file, metadata) = paged_file(Compression::SNAPPY);
    let size = file.len() as u64;
    let chunk_of = |c: usize| metadata.row_group(0).column(c);
    let next_chunk = chunk_of(1)
        .dictionary_page_offset()
        .unwrap_or(chunk_of(1).data_page_offset());
    let cases: Vec<(&str, ParquetMetaData)> = vec![
        (
            "the last page of column 0 runs into column 1",
            with_locations(&metadata, 0, |p| {
                let last = p.len() - 1;
                p[last].compressed_page_size += 1;
            }),
        ),
        (
            "a page of column 0 placed in column 1's bytes",
            with_locations(&metadata, 0, |p| {
                let last = p.len() - 1;
                p[last].offset = next_chunk + 10;
            }),
        ),
        (
            "column 1's first page placed before its dictionary page ends",
            with_locations(&metadata, 1, |p| p[0].offset -= 1),
        ),
    ];
    for (what, bad) in cases {
        let e = message(check_chunk_bounds(
            &bad,
            size,
            "part-0.parquet",
            Phase::Read,
        ));
        assert!(
            e.contains("does not follow the page before it inside its column chunk"),
            "{what}: {e}"
        );
    }
}

/// A V1 data page header of 8 values in `encoding`, its body `compressed` bytes.
fn encoded_page_header(encoding: i32, compressed: i32) -> Vec<u8> {
    let mut out = header(0, compressed, compressed, None);
    out.pop();
    out.push(0x2c);
    for v in [8, encoding, 3, 3] {
        out.push(0x15);
        out.extend(zigzag(v));
    }
    out.extend([0, 0]);
    out
}

#[test]
fn a_dictionary_encoded_page_needs_a_dictionary_page_before_it() {
    // Values of a required column: index width 1, an RLE run of 8 zeros.
    let body = [1u8, 0x10, 0];
    let mut page = encoded_page_header(encoding::RLE_DICTIONARY, body.len() as i32);
    page.extend(body);
    let plain = ChunkFacts {
        codec: Compression::UNCOMPRESSED,
        ..facts(4096, 8)
    };
    let e = message(check_pages(&page, plain, MIB, "f", Phase::Read));
    assert!(e.contains("without a dictionary page"), "{e}");
    // After a dictionary page of 1 value (8 bytes) it passes.
    let mut chunk = header(2, 8, 8, Some(1));
    chunk.extend([0u8; 8]);
    chunk.extend(&page);
    assert!(check_pages(&chunk, plain, MIB, "f", Phase::Read).is_ok());
    // A walk that starts inside a chunk does not know: left to the decoder.
    let inside = PageWalk::new(plain, MIB, "f", Phase::Read, None);
    assert!(walk_pages(&page, inside, true).is_ok());
    // PLAIN values need none.
    let mut plain_page = encoded_page_header(0, 8);
    plain_page.extend([0u8; 8]);
    assert!(check_pages(&plain_page, plain, MIB, "f", Phase::Read).is_ok());
}

#[test]
fn plain_pages_have_only_their_level_sections_decompressed_for_the_checks() {
    for codec in codecs() {
        let levels = [0x10, 0x01];
        let values = [7u8; 64];
        let plain_page = |facts: ChunkFacts, encoding: i32| {
            let mut plain = 2u32.to_le_bytes().to_vec();
            plain.extend(levels);
            plain.extend(values);
            let body = compress(codec, &plain);
            let data = DataPage {
                num_values: 8,
                encoding,
                levels: LevelLayout::V1 {
                    repetition: encoding::RLE,
                    definition: encoding::RLE,
                },
            };
            checked_body(&data, &body, plain.len() as u64, facts).map(|b| (b, plain))
        };
        let nullable = ChunkFacts {
            codec,
            ..nullable(8, true)
        };
        // Plain values: the length prefix and the definition levels only.
        let (got, plain) = plain_page(nullable, 0).unwrap_or_default();
        assert_eq!(got, plain[..6], "{codec:?}");
        // Dictionary indexes are checked: the whole body.
        let (got, plain) = plain_page(nullable, encoding::RLE_DICTIONARY).unwrap_or_default();
        assert_eq!(got, plain, "{codec:?}");
        // A column without levels whose values are plain: nothing to read.
        let required = ChunkFacts {
            levels: MaxLevels::default(),
            ..nullable
        };
        assert!(plain_page(required, 0).is_none(), "{codec:?}");
    }
    // Repetition and definition levels, each with its length, then the values.
    let mut plain = 3u32.to_le_bytes().to_vec();
    plain.extend([0x02, 0x00, 0x0e]);
    plain.extend(2u32.to_le_bytes());
    plain.extend([0x10, 0x01]);
    plain.extend([1u8; 40]);
    let page = DataPage {
        num_values: 8,
        encoding: 0,
        levels: LevelLayout::V1 {
            repetition: encoding::RLE,
            definition: encoding::RLE,
        },
    };
    let max = MaxLevels {
        repetition: 1,
        definition: 1,
    };
    let first = |n: usize| Some(plain[..n.min(plain.len())].to_vec());
    assert_eq!(v1_levels_len(&page, max, first), Some(13));
    // A length past the page: as much as there is, for the check to refuse.
    plain[0] = 0xff;
    let first = |n: usize| Some(plain[..n.min(plain.len())].to_vec());
    assert_eq!(v1_levels_len(&page, max, first), Some(plain.len()));
}
