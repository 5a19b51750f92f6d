//! The last 8 bytes of a Parquet file, checked before a footer decoder trusts them: they
//! must be the magic `PAR1` after the metadata's length, and that length must fit in the
//! file. A truncated file, or one that is not Parquet at all, is named as such instead of
//! as a footer of absurd length. (The messages are short: they are in the browser's module,
//! whose size is budgeted.)

/// The fewest bytes a Parquet file holds: the magic `PAR1` at both ends and the footer's
/// length (4 + 4 + 4).
pub(crate) const MIN_PARQUET_SIZE: u64 = 12;

/// What is wrong with the end of a Parquet file of `size` bytes whose last bytes are `tail`
/// (at least 8 of them; fewer are left to the decoder), if anything.
pub(crate) fn problem(tail: &[u8], size: u64) -> Option<String> {
    let at = tail.len().checked_sub(8)?;
    let end = tail.get(at..)?;
    let (len, magic) = end.split_at(4);
    if magic != b"PAR1" {
        return Some(format!(
            "the file of {size} bytes (its size in the log) does not end with the Parquet \
             magic 'PAR1': that size is wrong, or the file is truncated, encrypted or not a \
             Parquet file"
        ));
    }
    let declared = u64::from(u32::from_le_bytes(<[u8; 4]>::try_from(len).ok()?));
    // The magic at both ends and the length besides the metadata.
    (declared + MIN_PARQUET_SIZE > size).then(|| {
        format!(
            "the footer declares {declared} bytes of metadata, more than the file of {size} \
             bytes holds (it is truncated)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(len: u32, magic: &[u8; 4]) -> Vec<u8> {
        let mut t = b"whatever".to_vec();
        t.extend_from_slice(&len.to_le_bytes());
        t.extend_from_slice(magic);
        t
    }

    #[test]
    fn a_sound_end_passes() {
        assert_eq!(problem(&tail(100, b"PAR1"), 112), None);
        assert_eq!(problem(&tail(0, b"PAR1"), 12), None);
        assert_eq!(problem(b"PAR1", 4), None, "too short: left to the decoder");
    }

    #[test]
    fn truncated_foreign_and_encrypted_files_are_named() {
        let cut = problem(&tail(100, b"PAR1"), 111).unwrap_or_default();
        assert!(
            cut.contains("declares 100 bytes") && cut.contains("truncated"),
            "{cut}"
        );
        for magic in [b"\x00\x01ab", b"}]}}", b"PARE"] {
            let other = problem(&tail(100, magic), 1000).unwrap_or_default();
            assert!(other.contains("not a Parquet file"), "{other}");
        }
    }
}
