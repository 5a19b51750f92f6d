//! The contents of a data page, checked where they lie in plain bytes before a decoder reads
//! them: the repetition and definition levels, dictionary indexes and `DELTA_*` streams.
//!
//! Levels are run-length / bit-packed hybrid runs. A bit-packed run declares its groups of 8
//! values, and arrow-rs slices that many bytes unchecked (a run past the end of the levels
//! panics in its bit iterator); an RLE run's value must be a level the column has. A
//! dictionary-encoded page starts its values with the bit width of the indexes, and arrow-rs
//! asserts it is at most 32 (indexes are `i32`); its runs follow. arrow-rs's bit reader
//! asserts that a varint (a run header, a delta stream's header and block deltas) takes at
//! most 10 bytes, counts a bit-packed run's values (groups × 8) in an `i64` that must not
//! overflow, and the delta decoders size buffers by the value count a stream declares.
//! Such a page is refused with a Parquet error naming what is wrong.
//!
//! Levels and values are plain bytes in a column chunk stored without a codec; in a V2
//! page the levels always are, and the values are when the page says it is not compressed.
//! Compressed contents are checked here only once decompressed, which [`super::pages`] does
//! where a decoder's panic cannot be contained (wasm32): elsewhere a second decompression
//! would double the cost of a scan, and the native readers contain a decoder's panic on them
//! instead ([`super::decoder_panics`]).

/// `Encoding` values of the Parquet format this check reads.
pub(crate) mod encoding {
    pub(crate) const PLAIN_DICTIONARY: i32 = 2;
    pub(crate) const RLE: i32 = 3;
    pub(super) const BIT_PACKED: i32 = 4;
    pub(super) const DELTA_BINARY_PACKED: i32 = 5;
    pub(super) const DELTA_LENGTH_BYTE_ARRAY: i32 = 6;
    pub(super) const DELTA_BYTE_ARRAY: i32 = 7;
    pub(crate) const RLE_DICTIONARY: i32 = 8;
    pub(super) const BYTE_STREAM_SPLIT: i32 = 9;
}

/// Longest varint arrow-rs's bit reader reads: 10 bytes (it asserts on an 11th).
const MAX_VARINT_BYTES: usize = 10;

/// The most groups of 8 values a bit-packed run of dictionary indexes may declare: their
/// values counted in a `u32`, as arrow-rs's decoder keeps them.
const MAX_BIT_PACKED_GROUPS: u64 = (u32::MAX / 8) as u64;

/// The largest bit width of dictionary indexes (they decode to `i32`).
const MAX_INDEX_BITS: u8 = 32;

/// The highest repetition and definition levels of a column.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MaxLevels {
    pub(crate) repetition: i16,
    pub(crate) definition: i16,
}

/// Where a data page keeps its levels, as its header says.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LevelLayout {
    /// `DataPageHeader`: each level section (repetition first) is in the page body, an RLE
    /// section prefixed with its length in 4 bytes.
    V1 { repetition: i32, definition: i32 },
    /// `DataPageHeaderV2`: the level sections' lengths are in the header, their bytes first
    /// in the page and never compressed.
    V2 {
        repetition_bytes: i32,
        definition_bytes: i32,
        values_compressed: bool,
        /// The rows the page holds.
        num_rows: i32,
    },
}

/// What a data page header says of its contents.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataPage {
    pub(crate) num_values: i32,
    /// Encoding of the values.
    pub(crate) encoding: i32,
    pub(crate) levels: LevelLayout,
}

/// Checks the body of a data page (`body`, its stored bytes) of a column with `max` levels
/// whose values take `value_bytes` each (0 when they do not have one width); `plain_chunk`
/// says the chunk has no codec. `Err` says what is wrong.
pub(crate) fn check_data_page(
    page: &DataPage,
    body: &[u8],
    max: MaxLevels,
    plain_chunk: bool,
    value_bytes: u64,
) -> Result<(), String> {
    let levels = u64::try_from(page.num_values).unwrap_or(0);
    // Values present (levels at the highest definition), where the levels tell.
    let mut present = (max.definition <= 0).then_some(levels);
    match page.levels {
        LevelLayout::V1 {
            repetition,
            definition,
        } => {
            if !plain_chunk {
                return Ok(());
            }
            let mut rest = body;
            for (name, level, enc) in [
                ("repetition", max.repetition, repetition),
                ("definition", max.definition, definition),
            ] {
                if level <= 0 {
                    continue;
                }
                match enc {
                    encoding::RLE => {
                        let (section, after) = prefixed_section(rest, name)?;
                        let at_max = check_runs(section, level, name, levels)?;
                        if name == "definition" {
                            present = Some(at_max);
                        }
                        rest = after;
                    }
                    encoding::BIT_PACKED => {
                        let bits = u64::from(bit_width(level));
                        let values = u64::try_from(page.num_values).unwrap_or(0);
                        let len = usize::try_from(values.saturating_mul(bits).div_ceil(8))
                            .unwrap_or(usize::MAX);
                        // Past the end is the decoder's own error; nothing after it to read.
                        let Some(after) = rest.get(len..) else {
                            return Ok(());
                        };
                        rest = after;
                    }
                    // An encoding levels cannot have: the decoder refuses it.
                    _ => return Ok(()),
                }
            }
            check_values(page, rest, present, value_bytes)
        }
        LevelLayout::V2 {
            repetition_bytes,
            definition_bytes,
            values_compressed,
            ..
        } => {
            let lengths = (
                usize::try_from(repetition_bytes),
                usize::try_from(definition_bytes),
            );
            let (Ok(rep_len), Ok(def_len)) = lengths else {
                return Err(format!(
                    "level sections of {repetition_bytes} and {definition_bytes} bytes"
                ));
            };
            let Some(values) = rep_len
                .checked_add(def_len)
                .and_then(|levels| body.get(levels..))
            else {
                return Err(format!(
                    "level sections of {rep_len} and {def_len} bytes run past the page's {} \
                     bytes",
                    body.len()
                ));
            };
            let (rep, def) = body.split_at(rep_len);
            let def = def.get(..def_len).unwrap_or_default();
            if max.repetition > 0 {
                check_runs(rep, max.repetition, "repetition", levels)?;
            }
            if max.definition > 0 {
                present = Some(check_runs(def, max.definition, "definition", levels)?);
            }
            if values_compressed && !plain_chunk {
                return Ok(());
            }
            check_values(page, values, present, value_bytes)
        }
    }
}

/// Whether [`check_data_page`] reads a page's values (not only its levels): dictionary
/// indexes, `DELTA_*` streams and byte-stream-split values of one width are checked; plain
/// values are not.
pub(crate) fn values_checked(page: &DataPage, value_bytes: u64) -> bool {
    match page.encoding {
        encoding::BYTE_STREAM_SPLIT => value_bytes > 0,
        encoding::PLAIN_DICTIONARY
        | encoding::RLE_DICTIONARY
        | encoding::DELTA_BINARY_PACKED
        | encoding::DELTA_LENGTH_BYTE_ARRAY
        | encoding::DELTA_BYTE_ARRAY => true,
        _ => false,
    }
}

/// How many first bytes of a V1 page's body [`check_data_page`] reads when its values are
/// not checked: its level sections (repetition, then definition, each an RLE section
/// prefixed with its length, or bit-packed levels). `first(n)` gives the body's first `n`
/// bytes (fewer when the body is shorter, `None` when they cannot be had). `None`: no level
/// section to read.
pub(crate) fn v1_levels_len(
    page: &DataPage,
    max: MaxLevels,
    first: impl Fn(usize) -> Option<Vec<u8>>,
) -> Option<usize> {
    let LevelLayout::V1 {
        repetition,
        definition,
    } = page.levels
    else {
        return None;
    };
    let mut len = 0usize;
    for (level, enc) in [(max.repetition, repetition), (max.definition, definition)] {
        if level <= 0 {
            continue;
        }
        match enc {
            encoding::RLE => {
                let head = first(len.checked_add(4)?)?;
                let Some(prefix) = head.get(len..).and_then(|b| b.first_chunk::<4>()) else {
                    // Shorter than its length prefix: the check refuses it from these bytes.
                    return Some(head.len());
                };
                let section = usize::try_from(u32::from_le_bytes(*prefix)).ok()?;
                len = len.checked_add(4)?.checked_add(section)?;
            }
            encoding::BIT_PACKED => {
                let bits = u64::from(bit_width(level));
                let values = u64::try_from(page.num_values).unwrap_or(0);
                let bytes = usize::try_from(values.saturating_mul(bits).div_ceil(8)).ok()?;
                len = len.checked_add(bytes)?;
            }
            // An encoding levels cannot have: the check stops there.
            _ => break,
        }
    }
    (len > 0).then_some(len)
}

/// A level section prefixed with its length (4 bytes, little-endian), and the bytes after it.
fn prefixed_section<'a>(bytes: &'a [u8], name: &str) -> Result<(&'a [u8], &'a [u8]), String> {
    let Some((prefix, rest)) = bytes.split_first_chunk::<4>() else {
        return Err(format!(
            "the {name} levels' length does not fit in the page"
        ));
    };
    let len = u32::from_le_bytes(*prefix);
    match usize::try_from(len).ok().filter(|&l| l <= rest.len()) {
        Some(len) => Ok(rest.split_at(len)),
        None => Err(format!(
            "{name} levels of {len} bytes run past the page's {} bytes left",
            rest.len()
        )),
    }
}

/// Bits of a level up to `max`.
fn bit_width(max: i16) -> u8 {
    (16 - max.leading_zeros()) as u8
}

/// Checks the hybrid runs of a level section: each bit-packed run within the section, each
/// RLE run's value a level up to `max`. Returns how many of the first `levels` levels are
/// `max`.
fn check_runs(section: &[u8], max: i16, name: &str, levels: u64) -> Result<u64, String> {
    let bits = bit_width(max);
    let value_bytes = usize::from(bits.div_ceil(8));
    let mut at = 0usize;
    // Levels read so far, and how many of them are `max`.
    let (mut read, mut at_max) = (0u64, 0u64);
    while at < section.len() {
        let (header, len) = uleb128(section.get(at..).unwrap_or_default())
            .ok_or_else(|| format!("a malformed run header in the {name} levels"))?;
        at += len;
        let left = section.len() - at;
        if header & 1 == 1 {
            // Groups of 8 values take `bits` bytes each.
            let bytes = (header >> 1).saturating_mul(u64::from(bits));
            if bytes > left as u64 {
                return Err(format!(
                    "a bit-packed run of {} groups of {name} levels needs {bytes} bytes, \
                     {left} are left",
                    header >> 1
                ));
            }
            let run = section.get(at..at + bytes as usize).unwrap_or_default();
            let wanted = (header >> 1)
                .saturating_mul(8)
                .min(levels.saturating_sub(read));
            at_max += packed_equal(run, bits, wanted, max as u64);
            read = read.saturating_add((header >> 1).saturating_mul(8));
            at += bytes as usize;
        } else {
            let Some(value) = section.get(at..at + value_bytes) else {
                return Err(format!("an RLE run of {name} levels has no value"));
            };
            let level = value
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            if level > max as u64 {
                return Err(format!(
                    "an RLE run of {name} level {level}, the column's highest is {max}"
                ));
            }
            let run = (header >> 1).min(levels.saturating_sub(read));
            if level == max as u64 {
                at_max = at_max.saturating_add(run);
            }
            read = read.saturating_add(header >> 1);
            at += value_bytes;
        }
    }
    Ok(at_max)
}

/// How many of the first `count` values bit-packed at `bits` bits each (least significant
/// bit first) in `run` equal `value`.
fn packed_equal(run: &[u8], bits: u8, count: u64, value: u64) -> u64 {
    let bits = u64::from(bits);
    let mut equal = 0;
    for i in 0..count {
        let mut v = 0u64;
        for b in 0..bits {
            let bit = i * bits + b;
            let byte = run
                .get(usize::try_from(bit / 8).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or(0);
            v |= u64::from((byte >> (bit % 8)) & 1) << b;
        }
        if v == value {
            equal += 1;
        }
    }
    equal
}

/// An unsigned LEB128 varint of at most 10 bytes at the start of `bytes`, and its length.
fn uleb128(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Checks the values of a data page, in plain bytes, where their encoding has a structure a
/// decoder trusts: dictionary indexes (their bit width, then hybrid runs) and the
/// `DELTA_*` encodings (streams of varints and bit-packed miniblocks, of at most the page's
/// values: a decoder sizes buffers by the count a stream declares).
fn check_values(
    page: &DataPage,
    values: &[u8],
    present: Option<u64>,
    value_bytes: u64,
) -> Result<(), String> {
    let most = u64::try_from(page.num_values).unwrap_or(0);
    match page.encoding {
        // Each byte of a value in its own stream, the streams as long as the values: the
        // decoder indexes them by the values the levels say are present, unchecked.
        encoding::BYTE_STREAM_SPLIT if value_bytes > 0 => match present {
            Some(present) if (values.len() as u64) / value_bytes < present => Err(format!(
                "{present} byte-stream-split values of {value_bytes} bytes in {} bytes",
                values.len()
            )),
            _ => Ok(()),
        },
        encoding::PLAIN_DICTIONARY | encoding::RLE_DICTIONARY => check_indexes(values),
        encoding::DELTA_BINARY_PACKED | encoding::DELTA_LENGTH_BYTE_ARRAY => {
            delta_stream_end(values, most, "values").map(|_| ())
        }
        encoding::DELTA_BYTE_ARRAY => {
            // Prefix lengths, then the suffixes: their lengths, then their bytes.
            let Some(end) = delta_stream_end(values, most, "prefix lengths")? else {
                return Ok(());
            };
            let suffixes = values.get(end..).unwrap_or_default();
            delta_stream_end(suffixes, most, "suffix lengths").map(|_| ())
        }
        _ => Ok(()),
    }
}

/// Checks dictionary indexes: their bit width (the first byte) at most 32, and the run headers
/// of the hybrid runs after it varints the decoder reads. Runs are walked to the end of the
/// bytes; a run cut short by the end is the decoder's own error.
fn check_indexes(values: &[u8]) -> Result<(), String> {
    let Some((&bits, runs)) = values.split_first() else {
        return Ok(());
    };
    if bits > MAX_INDEX_BITS {
        return Err(format!(
            "dictionary indexes of bit width {bits} (at most {MAX_INDEX_BITS})"
        ));
    }
    let value_bytes = usize::from(bits.div_ceil(8));
    let mut at = 0usize;
    while at < runs.len() {
        let Some((header, len)) = varint(runs.get(at..).unwrap_or_default(), "an index run")?
        else {
            return Ok(());
        };
        at = at.saturating_add(len);
        let run_bytes = if header & 1 == 1 {
            let groups = header >> 1;
            // arrow-rs counts a run's values as groups × 8 in an i64, then a u32: no page
            // holds more values than that.
            if groups > MAX_BIT_PACKED_GROUPS {
                return Err(format!(
                    "a bit-packed index run of {groups} groups of 8 values (at most \
                     {MAX_BIT_PACKED_GROUPS})"
                ));
            }
            groups.saturating_mul(u64::from(bits))
        } else {
            value_bytes as u64
        };
        at = at.saturating_add(usize::try_from(run_bytes).unwrap_or(usize::MAX));
    }
    Ok(())
}

/// A varint at the start of `bytes` and its length; `Ok(None)` when the bytes end inside it
/// (the decoder stops there with an error), `Err` when it is longer than
/// [`MAX_VARINT_BYTES`] (the decoder asserts). `what` names it in the error.
fn varint(bytes: &[u8], what: &str) -> Result<Option<(u64, usize)>, String> {
    match uleb128(bytes) {
        Some(found) => Ok(Some(found)),
        None if bytes.len() >= MAX_VARINT_BYTES => Err(format!(
            "{what} whose varint is longer than {MAX_VARINT_BYTES} bytes"
        )),
        None => Ok(None),
    }
}

/// Walks a `DELTA_BINARY_PACKED` stream at the start of `bytes` as arrow-rs's decoder reads
/// it: its header (block size, miniblocks per block, value count, first value), then each
/// block (minimum delta, miniblock bit widths, miniblocks) until the values are all there.
/// `Ok(Some(end))` is where the stream ends; `Ok(None)` when the decoder stops on it with an
/// error of its own (bytes ending early, a header it refuses); `Err` for a varint longer than
/// it reads, more values than `most`, or blocks whose miniblocks run past the bytes (a
/// consumer slices past them).
fn delta_stream_end(bytes: &[u8], most: u64, what: &str) -> Result<Option<usize>, String> {
    let mut at = 0usize;
    let next = |at: &mut usize| -> Result<Option<u64>, String> {
        let found = varint(bytes.get(*at..).unwrap_or_default(), what)?;
        Ok(found.map(|(value, len)| {
            *at += len;
            value
        }))
    };
    let mut header = [0u64; 4];
    for field in &mut header {
        match next(&mut at)? {
            Some(value) => *field = value,
            None => return Ok(None),
        }
    }
    let [block_size, miniblocks, total, _first] = header;
    if total > most {
        return Err(format!(
            "{what} of {total} delta-encoded values in a page of {most} values"
        ));
    }
    let valid = miniblocks > 0
        && block_size % 128 == 0
        && block_size % miniblocks == 0
        && (block_size / miniblocks) % 32 == 0
        && usize::try_from(block_size).is_ok()
        && usize::try_from(miniblocks).is_ok();
    if !valid {
        return Ok(None);
    }
    let per_miniblock = block_size / miniblocks;
    let mut remaining = total.saturating_sub(1);
    while remaining > 0 {
        if next(&mut at)?.is_none() {
            return Ok(None);
        }
        let widths_end = at.saturating_add(usize::try_from(miniblocks).unwrap_or(usize::MAX));
        let Some(widths) = bytes.get(at..widths_end) else {
            return Ok(None);
        };
        let mut end = widths_end as u64;
        for &width in widths {
            // The widths of miniblocks past the last value are ignored (the decoder zeroes
            // them); a wider one than any integer is the decoder's own error.
            if remaining > 0 {
                if width > 64 {
                    return Ok(None);
                }
                end = end.saturating_add(u64::from(width).saturating_mul(per_miniblock) / 8);
            }
            remaining = remaining.saturating_sub(per_miniblock);
        }
        if end > bytes.len() as u64 {
            return Err(format!(
                "{what} in delta-encoded blocks that end at byte {end}, past the page's {} \
                 bytes",
                bytes.len()
            ));
        }
        at = end as usize;
    }
    Ok(Some(at))
}

#[cfg(test)]
#[path = "page_contents_tests.rs"]
mod tests;
