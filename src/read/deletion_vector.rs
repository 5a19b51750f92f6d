//! Deletion vectors: which rows of a data file are logically deleted.
//!
//! A `deletionVector` descriptor in an `add` action says where the vector is
//! ([`dv_source`]): inline in the log (`storageType` `i`, Z85 text), in a file next to the
//! data named by a UUID (`u`: `<prefix><20 Z85 characters>` becomes
//! `<prefix>/deletion_vector_<uuid>.bin`), or in a file at an absolute path (`p`). The caller
//! fetches the byte range a file-based vector asks for and hands it to [`decode_file_range`];
//! inline vectors decode at once with [`decode_inline`]. Nothing here does I/O.
//!
//! Formats (Delta protocol, "Deletion Vector Format" and "Deletion Vector File Storage
//! Format"):
//!
//! - A DV file is one version byte (`1`), then for each vector at its `offset`: a 4-byte
//!   big-endian `dataSize`, `dataSize` bytes of serialized bitmap, and a 4-byte big-endian
//!   CRC-32 of those bytes. `dataSize` equals the descriptor's `sizeInBytes`.
//! - The serialized bitmap is a 4-byte little-endian magic number 1681511377 followed by a
//!   64-bit Roaring bitmap in the portable format: an 8-byte little-endian count of buckets,
//!   then per bucket, in ascending key order, a 4-byte little-endian key (the high 32 bits of
//!   its row indexes, most significant bit 0) and a standard 32-bit Roaring bitmap.
//! - An inline vector is that same serialized bitmap, Z85-encoded after padding with zeros to
//!   a multiple of 4 bytes; `sizeInBytes` is the length before padding. (Vectors written with
//!   the `z85` Rust crate end in a short group instead of padding; both decode.)
//!
//! The result is a [`DeletionVector`]: the set of deleted row indexes (0-based positions in the
//! data file), which turns into a Parquet [`RowSelection`] or a keep mask.

use arrow_array::BooleanArray;
use arrow_buffer::BooleanBufferBuilder;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{redact, DeltaError, Result};
use crate::limits::MAX_DELETION_VECTOR_BYTES;
use crate::log::DeletionVectorDescriptor;

/// Magic number of the portable serialization of a 64-bit Roaring bitmap, as Delta writes it.
const PORTABLE_MAGIC: u32 = 1_681_511_377;

/// Magic number of Delta's older "native" `RoaringBitmapArray` serialization, which the
/// protocol does not define; recognised only to name it in the error.
const NATIVE_MAGIC: u32 = 1_681_511_376;

/// Length of the Z85-encoded UUID at the end of a `u` descriptor's `pathOrInlineDv`.
const ENCODED_UUID_LEN: usize = 20;

/// Where a `u` or `p` vector starts in its file when the descriptor has no `offset`: just after
/// the version byte. (The protocol's descriptor table says "interpret as 0", but byte 0 is the
/// version byte; delta-kernel-rs reads from 1, and writers always write the offset.)
const DEFAULT_OFFSET: u64 = 1;

/// Bytes around a vector's bitmap in a DV file: the 4-byte size before, the 4-byte CRC after.
const FRAME_BYTES: u64 = 8;

/// Smallest serialized bucket: a 4-byte key, a 4-byte cookie and a 4-byte container count.
const MIN_BUCKET_BYTES: usize = 12;

/// Where the bytes of a deletion vector are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DvSource {
    /// Stored inline in the log: the serialized bitmap, already Z85-decoded and cut to
    /// `sizeInBytes` (decode it with [`decode_inline`]).
    Inline(Vec<u8>),
    /// Stored in a file: fetch `size` bytes at `offset` and pass them to [`decode_file_range`].
    File {
        /// For `storageType` `u`: the file's store path relative to the table root, not
        /// percent-encoded (`deletion_vector_<uuid>.bin`, or `<prefix>/deletion_vector_<uuid>.bin`).
        /// For `p`: the absolute URI exactly as in the log, in the same form as an `add.path`
        /// that is an absolute URI (map it to a store path the same way).
        path: String,
        /// Where the vector's 4-byte size prefix starts (the descriptor's `offset`, 1 when
        /// absent).
        offset: u64,
        /// Bytes to fetch: the 4-byte size, `sizeInBytes` bytes of bitmap, the 4-byte CRC-32.
        size: u64,
    },
}

/// Where a descriptor's vector is stored. Checks the descriptor (storage type, sizes, the
/// encoded UUID) but fetches nothing.
pub fn dv_source(descriptor: &DeletionVectorDescriptor) -> Result<DvSource> {
    let size = size_in_bytes(descriptor)?;
    check_cardinality(descriptor)?;
    match descriptor.storage_type.as_str() {
        "i" => Ok(DvSource::Inline(inline_bytes(descriptor, size)?)),
        "u" | "p" => {
            let path = match descriptor.storage_type.as_str() {
                "u" => uuid_relative_path(&descriptor.path_or_inline_dv)?,
                _ => absolute_path(&descriptor.path_or_inline_dv)?,
            };
            let offset = match descriptor.offset {
                None => DEFAULT_OFFSET,
                Some(o) => u64::try_from(o).map_err(|_| {
                    DeltaError::invalid_log(
                        label(descriptor),
                        format!("deletion vector offset {o} is negative"),
                    )
                })?,
            };
            Ok(DvSource::File {
                path,
                offset,
                size: FRAME_BYTES + size as u64,
            })
        }
        other => Err(DeltaError::invalid_log(
            label(descriptor),
            format!(
                "unknown deletion vector storageType {other:?} (expected \"u\", \"i\" or \"p\")"
            ),
        )),
    }
}

/// Decodes an inline (`storageType` `i`) deletion vector.
pub fn decode_inline(descriptor: &DeletionVectorDescriptor) -> Result<DeletionVector> {
    if descriptor.storage_type != "i" {
        return Err(DeltaError::invalid_log(
            label(descriptor),
            format!(
                "storageType {:?} is not an inline deletion vector",
                descriptor.storage_type
            ),
        ));
    }
    let size = size_in_bytes(descriptor)?;
    let expected = check_cardinality(descriptor)?;
    let bytes = inline_bytes(descriptor, size)?;
    let dv = DeletionVector::from_serialized(&bytes, INLINE_LABEL)?;
    dv.check_cardinality(expected, INLINE_LABEL)?;
    Ok(dv)
}

/// Decodes a file-based (`u` or `p`) deletion vector from the bytes [`DvSource::File`] asked
/// for (`path` names the file in errors). Verifies the size prefix against `sizeInBytes`, the
/// CRC-32 checksum, the magic number, the bitmap's structure and the cardinality.
pub fn decode_file_range(
    descriptor: &DeletionVectorDescriptor,
    path: &str,
    bytes: &[u8],
) -> Result<DeletionVector> {
    let shown = redact(path);
    let corrupt = |reason: String| DeltaError::invalid_log(shown.as_str(), reason);
    if !matches!(descriptor.storage_type.as_str(), "u" | "p") {
        return Err(corrupt(format!(
            "storageType {:?} is not a file-based deletion vector",
            descriptor.storage_type
        )));
    }
    let size = size_in_bytes(descriptor)?;
    let expected = check_cardinality(descriptor)?;
    let wanted = size + FRAME_BYTES as usize;
    if bytes.len() != wanted {
        return Err(corrupt(format!(
            "deletion vector range is {} bytes, expected {wanted} (4-byte size, {size} bytes \
             of bitmap, 4-byte checksum); the file may be truncated",
            bytes.len()
        )));
    }
    let stored_size = read_u32_be(bytes, 0).unwrap_or(0);
    if stored_size as usize != size {
        return Err(corrupt(format!(
            "deletion vector size in the file is {stored_size} bytes, the log says {size} \
             (wrong offset or corrupt file)"
        )));
    }
    let data = &bytes[4..4 + size];
    let stored_crc = read_u32_be(bytes, 4 + size).unwrap_or(0);
    let crc = crc32fast::hash(data);
    if crc != stored_crc {
        return Err(corrupt(format!(
            "deletion vector checksum mismatch: the file stores CRC-32 {stored_crc:#010x}, \
             the data has {crc:#010x}"
        )));
    }
    let dv = DeletionVector::from_serialized(data, &shown)?;
    dv.check_cardinality(expected, &shown)?;
    Ok(dv)
}

/// The rows of one data file that a deletion vector deletes: 0-based row indexes in the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletionVector {
    rows: RoaringTreemap,
}

impl DeletionVector {
    /// A vector deleting the given row indexes.
    pub fn from_rows(rows: impl IntoIterator<Item = u64>) -> Self {
        DeletionVector {
            rows: rows.into_iter().collect(),
        }
    }

    /// The deleted rows as a Roaring bitmap.
    pub fn as_treemap(&self) -> &RoaringTreemap {
        &self.rows
    }

    /// Number of deleted rows.
    pub fn cardinality(&self) -> u64 {
        self.rows.len()
    }

    /// Whether no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether row `row` (0-based index in the file) is deleted.
    pub fn contains(&self, row: u64) -> bool {
        self.rows.contains(row)
    }

    /// The deleted row indexes, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.rows.iter()
    }

    /// The largest deleted row index (a vector is only valid for a file with more rows).
    pub fn max_row(&self) -> Option<u64> {
        self.rows.max()
    }

    /// Number of deleted rows among `num_rows` rows starting at `first_row`.
    // One copy for its callers: inlined, each would carry the treemap's range count (size of
    // the wasm).
    #[inline(never)]
    pub fn deleted_in(&self, first_row: u64, num_rows: u64) -> u64 {
        match first_row.checked_add(num_rows) {
            Some(end) => self.rows.range_cardinality(first_row..end),
            None => self.rows.range_cardinality(first_row..),
        }
    }

    /// A Parquet row selection that keeps the rows this vector does not delete.
    ///
    /// `row_groups` lists the row groups to be read, in the order the reader reads them, each as
    /// `(index of its first row in the file, number of rows)`; the selection covers exactly
    /// those rows, as the Parquet reader expects when it reads a subset of row groups. Deleted
    /// indexes outside the listed groups are ignored.
    ///
    /// Row counts beyond `usize::MAX` (possible only on 32-bit targets, where the Parquet reader
    /// cannot address them either) are clamped rather than panicking.
    pub fn row_selection(&self, row_groups: &[(u64, u64)]) -> RowSelection {
        let mut selectors: Vec<RowSelector> = Vec::new();
        for &(first, num_rows) in row_groups {
            let end = first.saturating_add(num_rows);
            let mut cursor = first;
            let mut deleted = self.rows.iter();
            deleted.advance_to(first);
            for row in deleted.take_while(|&row| row < end) {
                push_run(&mut selectors, false, row - cursor);
                push_run(&mut selectors, true, 1);
                cursor = row + 1;
            }
            push_run(&mut selectors, false, end - cursor);
        }
        // The selectors alternate and none is empty, so this conversion merges nothing.
        RowSelection::from(selectors)
    }

    /// A keep mask for `len` consecutive rows starting at row `start_row`: `true` where the row
    /// is kept, `false` where it is deleted.
    pub fn keep_mask(&self, start_row: u64, len: usize) -> BooleanArray {
        let mut mask = BooleanBufferBuilder::new(len);
        mask.append_n(len, true);
        let end = start_row.saturating_add(len as u64);
        let mut deleted = self.rows.iter();
        deleted.advance_to(start_row);
        for row in deleted.take_while(|&row| row < end) {
            // `row - start_row < len`, which is a usize.
            mask.set_bit((row - start_row) as usize, false);
        }
        BooleanArray::new(mask.finish(), None)
    }

    /// Decodes a serialized bitmap: the magic number, then the portable 64-bit Roaring format.
    /// `label` names the vector in errors.
    fn from_serialized(bytes: &[u8], label: &str) -> Result<Self> {
        let corrupt = |reason: String| DeltaError::invalid_log(label, reason);
        let magic = read_u32_le(bytes, 0).ok_or_else(|| {
            corrupt(format!(
                "deletion vector of {} bytes is too short for its 4-byte magic number",
                bytes.len()
            ))
        })?;
        match magic {
            PORTABLE_MAGIC => {}
            NATIVE_MAGIC => {
                return Err(corrupt(format!(
                    "deletion vector uses the native RoaringBitmapArray format (magic \
                     {NATIVE_MAGIC}), which the Delta protocol does not define; only the \
                     portable format (magic {PORTABLE_MAGIC}) is supported"
                )))
            }
            other => {
                return Err(corrupt(format!(
                    "deletion vector has magic number {other}, expected {PORTABLE_MAGIC}"
                )))
            }
        }
        let mut rest = &bytes[4..];
        let count = match read_u64_le(rest, 0) {
            Some(c) => c,
            None => {
                return Err(corrupt(
                    "deletion vector is truncated: no bucket count after the magic number".into(),
                ))
            }
        };
        rest = &rest[8..];
        if count > (rest.len() / MIN_BUCKET_BYTES) as u64 {
            return Err(corrupt(format!(
                "deletion vector claims {count} buckets but only {} bytes follow",
                rest.len()
            )));
        }
        let mut buckets: Vec<(u32, RoaringBitmap)> = Vec::with_capacity(count as usize);
        for i in 0..count {
            let key = read_u32_le(rest, 0).ok_or_else(|| {
                corrupt(format!(
                    "deletion vector is truncated in the key of bucket {i}"
                ))
            })?;
            rest = &rest[4..];
            if key & 0x8000_0000 != 0 {
                return Err(corrupt(format!(
                    "deletion vector bucket key {key:#x} has its most significant bit set"
                )));
            }
            if let Some(&(previous, _)) = buckets.last() {
                if key <= previous {
                    return Err(corrupt(format!(
                        "deletion vector bucket keys are not ascending ({previous} then {key})"
                    )));
                }
            }
            // `Read for &[u8]` advances `rest` past what the bitmap consumed.
            let bitmap = RoaringBitmap::deserialize_from(&mut rest).map_err(|e| {
                corrupt(format!(
                    "deletion vector bucket {i} (key {key}) is not a valid Roaring bitmap: {e}"
                ))
            })?;
            buckets.push((key, bitmap));
        }
        if !rest.is_empty() {
            return Err(corrupt(format!(
                "deletion vector has {} unexpected bytes after its last bucket",
                rest.len()
            )));
        }
        Ok(DeletionVector {
            rows: RoaringTreemap::from_bitmaps(buckets),
        })
    }

    /// Checks that the decoded vector deletes as many rows as the descriptor says.
    fn check_cardinality(&self, expected: u64, label: &str) -> Result<()> {
        let actual = self.cardinality();
        if actual == expected {
            Ok(())
        } else {
            Err(DeltaError::invalid_log(
                label,
                format!(
                    "deletion vector deletes {actual} rows but its descriptor's cardinality is \
                     {expected}"
                ),
            ))
        }
    }
}

impl From<RoaringTreemap> for DeletionVector {
    fn from(rows: RoaringTreemap) -> Self {
        DeletionVector { rows }
    }
}

/// How errors name an inline vector.
const INLINE_LABEL: &str = "inline deletion vector";

/// How errors name the vector of a descriptor, before its bytes are read.
fn label(descriptor: &DeletionVectorDescriptor) -> String {
    match descriptor.storage_type.as_str() {
        "i" => INLINE_LABEL.to_string(),
        "p" => redact(&descriptor.path_or_inline_dv),
        _ => format!("deletion vector {}", descriptor.path_or_inline_dv),
    }
}

/// `sizeInBytes` as a length, refusing negative values.
///
/// The size is checked against what its declared cardinality can need and against
/// [`MAX_DELETION_VECTOR_BYTES`] before anything is fetched or allocated for it.
fn size_in_bytes(descriptor: &DeletionVectorDescriptor) -> Result<usize> {
    let size = u64::try_from(descriptor.size_in_bytes).map_err(|_| {
        DeltaError::invalid_log(
            label(descriptor),
            format!(
                "deletion vector sizeInBytes {} is negative",
                descriptor.size_in_bytes
            ),
        )
    })?;
    let cardinality = check_cardinality(descriptor)?;
    let needed = max_serialized_bytes(cardinality).min(MAX_DELETION_VECTOR_BYTES);
    if size > needed {
        let limit = if needed == MAX_DELETION_VECTOR_BYTES {
            "deletion vector size (bytes)"
        } else {
            "deletion vector size (bytes) for its cardinality"
        };
        return Err(DeltaError::limit_exceeded(
            limit,
            size,
            needed,
            Some(&label(descriptor)),
            crate::error::Phase::Read,
        ));
    }
    usize::try_from(size).map_err(|_| {
        DeltaError::limit_exceeded(
            "deletion vector size (bytes)",
            size,
            usize::MAX as u64,
            Some(&label(descriptor)),
            crate::error::Phase::Read,
        )
    })
}

/// The most bytes a serialized vector of `cardinality` rows takes, generously: the format's
/// header, then per row at worst its own 64-bit key, 32-bit container header and run or array
/// entry (a writer picks bitmaps only where they are smaller than that).
fn max_serialized_bytes(cardinality: u64) -> u64 {
    const HEADER: u64 = 64;
    const PER_ROW: u64 = 40;
    cardinality.saturating_mul(PER_ROW).saturating_add(HEADER)
}

/// `cardinality` as a count, refusing negative values.
fn check_cardinality(descriptor: &DeletionVectorDescriptor) -> Result<u64> {
    u64::try_from(descriptor.cardinality).map_err(|_| {
        DeltaError::invalid_log(
            label(descriptor),
            format!(
                "deletion vector cardinality {} is negative",
                descriptor.cardinality
            ),
        )
    })
}

/// The serialized bitmap of an inline vector: Z85-decoded, padding removed.
fn inline_bytes(descriptor: &DeletionVectorDescriptor, size: usize) -> Result<Vec<u8>> {
    let corrupt = |reason: String| DeltaError::invalid_log(INLINE_LABEL, reason);
    let mut bytes = z85::decode(&descriptor.path_or_inline_dv).map_err(|e| {
        corrupt(format!(
            "inline deletion vector is not valid Z85: {}",
            z85_error(e)
        ))
    })?;
    // The reference writer pads with zeros to a multiple of 4 bytes before encoding; a short
    // final group (see `z85`) decodes to exactly `sizeInBytes`.
    if bytes.len() != size && bytes.len() != size.div_ceil(4) * 4 {
        return Err(corrupt(format!(
            "inline deletion vector decodes to {} bytes but sizeInBytes is {size}",
            bytes.len()
        )));
    }
    bytes.truncate(size);
    Ok(bytes)
}

/// What is wrong with Z85 text, in words.
fn z85_error(e: z85::DecodeError) -> String {
    match e {
        z85::DecodeError::InvalidByte(at, byte) => {
            format!("invalid Z85 character {:?} at {at}", char::from(byte))
        }
        z85::DecodeError::InvalidChunk(at) => {
            format!("the 5 characters at {at} encode more than 32 bits")
        }
        z85::DecodeError::InvalidLength(len) => {
            format!("{len} characters, not a multiple of 5")
        }
        z85::DecodeError::InvalidTail => "an invalid final group".into(),
    }
}

/// The table-relative path of a `u` vector: `<prefix>/deletion_vector_<uuid>.bin`, or
/// `deletion_vector_<uuid>.bin` without a prefix.
fn uuid_relative_path(encoded: &str) -> Result<String> {
    let invalid =
        |reason: String| DeltaError::invalid_log(format!("deletion vector {encoded}"), reason);
    let split = encoded
        .len()
        .checked_sub(ENCODED_UUID_LEN)
        .filter(|&at| encoded.is_char_boundary(at))
        .ok_or_else(|| {
            invalid(format!(
                "pathOrInlineDv {encoded:?} must end with a {ENCODED_UUID_LEN}-character \
                 Z85-encoded UUID"
            ))
        })?;
    let (prefix, uuid_text) = encoded.split_at(split);
    let uuid = z85::decode(uuid_text).map_err(|e| {
        invalid(format!(
            "the UUID in pathOrInlineDv is not valid Z85: {}",
            z85_error(e)
        ))
    })?;
    let uuid: [u8; 16] = uuid
        .try_into()
        .map_err(|_| invalid("the UUID in pathOrInlineDv is not 16 bytes".into()))?;
    let file = format!("deletion_vector_{}.bin", format_uuid(&uuid));
    if prefix.is_empty() {
        return Ok(file);
    }
    // The prefix names a folder under the table root (stores take decoded paths, so it stays
    // as written); it must not climb out of the table.
    let escapes = prefix.starts_with('/')
        || prefix.contains('\\')
        || prefix.split('/').any(|segment| segment == "..");
    if escapes {
        return Err(invalid(format!(
            "the random prefix {prefix:?} of pathOrInlineDv is not a folder inside the table"
        )));
    }
    Ok(format!("{prefix}/{file}"))
}

/// The absolute URI of a `p` vector, checked to be absolute.
fn absolute_path(path: &str) -> Result<String> {
    match url::Url::parse(path) {
        Ok(_) => Ok(path.to_string()),
        Err(e) => Err(DeltaError::invalid_log(
            redact(path),
            format!("deletion vector path with storageType \"p\" is not an absolute URI: {e}"),
        )),
    }
}

/// A UUID in canonical text form: lowercase hex, 8-4-4-4-12.
fn format_uuid(bytes: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Appends a run of `n` rows (skipped or selected), merging with the previous run of the same
/// kind and clamping at `usize::MAX`.
fn push_run(selectors: &mut Vec<RowSelector>, skip: bool, n: u64) {
    if n == 0 {
        return;
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    match selectors.last_mut() {
        Some(last) if last.skip == skip => last.row_count = last.row_count.saturating_add(n),
        _ => selectors.push(if skip {
            RowSelector::skip(n)
        } else {
            RowSelector::select(n)
        }),
    }
}

fn read_u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u64_le(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

#[cfg(test)]
#[path = "deletion_vector_tests.rs"]
mod tests;
