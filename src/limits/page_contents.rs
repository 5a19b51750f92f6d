//! The contents of a data page, checked where they lie in plain bytes before a decoder reads
//! them: the repetition and definition levels, and the bit width of dictionary indexes.
//!
//! Levels are run-length / bit-packed hybrid runs. A bit-packed run declares its groups of 8
//! values, and arrow-rs slices that many bytes unchecked (a run past the end of the levels
//! panics in its bit iterator); an RLE run's value must be a level the column has. A
//! dictionary-encoded page starts its values with the bit width of the indexes, and arrow-rs
//! asserts it is at most 32 (indexes are `i32`). Such a page is refused with a Parquet
//! error naming what is wrong.
//!
//! Levels and values are plain bytes in a column chunk stored without a codec; in a V2
//! page the levels always are, and the values are when the page says it is not compressed.
//! Compressed contents are checked here only once decompressed, which [`super::pages`] does
//! where a decoder's panic cannot be contained (wasm32): elsewhere a second decompression
//! would double the cost of a scan, and the native readers contain a decoder's panic on them
//! instead ([`super::decoder_panics`]).

/// `Encoding` values of the Parquet format this check reads.
mod encoding {
    pub(super) const PLAIN_DICTIONARY: i32 = 2;
    pub(super) const RLE: i32 = 3;
    pub(super) const BIT_PACKED: i32 = 4;
    pub(super) const RLE_DICTIONARY: i32 = 8;
}

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

/// Checks the body of a data page (`body`, its stored bytes) of a column with `max` levels;
/// `plain_chunk` says the chunk has no codec. `Err` says what is wrong.
pub(crate) fn check_data_page(
    page: &DataPage,
    body: &[u8],
    max: MaxLevels,
    plain_chunk: bool,
) -> Result<(), String> {
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
                        check_runs(section, level, name)?;
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
            check_index_width(page.encoding, rest)
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
                check_runs(rep, max.repetition, "repetition")?;
            }
            if max.definition > 0 {
                check_runs(def, max.definition, "definition")?;
            }
            if values_compressed && !plain_chunk {
                return Ok(());
            }
            check_index_width(page.encoding, values)
        }
    }
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
/// RLE run's value a level up to `max`.
fn check_runs(section: &[u8], max: i16, name: &str) -> Result<(), String> {
    let bits = bit_width(max);
    let value_bytes = usize::from(bits.div_ceil(8));
    let mut at = 0usize;
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
            at += value_bytes;
        }
    }
    Ok(())
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

/// Checks the bit width that starts the values of a dictionary-encoded page.
fn check_index_width(values_encoding: i32, values: &[u8]) -> Result<(), String> {
    let dictionary = matches!(
        values_encoding,
        encoding::PLAIN_DICTIONARY | encoding::RLE_DICTIONARY
    );
    match values.first() {
        Some(&bits) if dictionary && bits > MAX_INDEX_BITS => Err(format!(
            "dictionary indexes of bit width {bits} (at most {MAX_INDEX_BITS})"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "page_contents_tests.rs"]
mod tests;
