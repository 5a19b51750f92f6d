//! The first bytes of a raw snappy block, decompressed without the rest.
//!
//! The page checks read a data page's level sections, which come first in its body: for a
//! page whose values are not checked (plain values), decompressing the whole body only to
//! read its first bytes would cost one more decompression of every page where the checks
//! decompress (wasm32). A snappy block is a sequence of literals and back-references into
//! the output written so far, so any prefix of the output can be produced from the elements
//! before it. The `snap` crate decompresses whole blocks only, hence this small decoder of
//! the raw format (a varint of the decompressed length, then the elements).
//!
//! It produces the same bytes as a whole decompression for a valid block; for an invalid one
//! it gives `None` or bytes the decoder's own decompression then refuses.

/// The first `want` bytes of the raw snappy block `block` (fewer when the block declares
/// fewer); `None` when the block is malformed before they are written.
pub(crate) fn prefix(block: &[u8], want: usize) -> Option<Vec<u8>> {
    let (declared, mut at) = varint(block)?;
    let want = want.min(usize::try_from(declared).ok()?);
    let mut out: Vec<u8> = Vec::with_capacity(want);
    while out.len() < want {
        let tag = *block.get(at)?;
        at += 1;
        match tag & 0b11 {
            0 => {
                let len = match tag >> 2 {
                    n @ 0..=59 => usize::from(n) + 1,
                    n => {
                        let bytes = usize::from(n - 59);
                        let raw = block.get(at..at.checked_add(bytes)?)?;
                        at += bytes;
                        let mut v = 0usize;
                        for (i, &b) in raw.iter().enumerate() {
                            v |= usize::from(b) << (8 * i);
                        }
                        v.checked_add(1)?
                    }
                };
                let literal = block.get(at..at.checked_add(len)?)?;
                at += len;
                let take = len.min(want - out.len());
                out.extend_from_slice(literal.get(..take)?);
            }
            kind => {
                let (len, offset) = match kind {
                    1 => {
                        let low = *block.get(at)?;
                        at += 1;
                        (
                            usize::from((tag >> 2) & 0b111) + 4,
                            (usize::from(tag >> 5) << 8) | usize::from(low),
                        )
                    }
                    2 => {
                        let raw = block.get(at..at + 2)?;
                        at += 2;
                        (
                            usize::from(tag >> 2) + 1,
                            usize::from(u16::from_le_bytes([raw[0], raw[1]])),
                        )
                    }
                    _ => {
                        let raw = block.get(at..at + 4)?;
                        at += 4;
                        let offset = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
                        (usize::from(tag >> 2) + 1, usize::try_from(offset).ok()?)
                    }
                };
                if offset == 0 || offset > out.len() {
                    return None;
                }
                let take = len.min(want - out.len());
                let from = out.len() - offset;
                // The source may overlap what this copy writes (a run): byte by byte then.
                for i in 0..take {
                    let b = *out.get(from + i)?;
                    out.push(b);
                }
            }
        }
    }
    Some(out)
}

/// A little-endian base-128 varint of at most 5 bytes (a `u32`), and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(5).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (value <= u64::from(u32::MAX)).then_some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes with runs, repeats far back and literals, as pages hold.
    fn sample(n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        let mut x = 12345u32;
        while out.len() < n {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            match x % 4 {
                0 => out.extend(std::iter::repeat_n((x >> 8) as u8, (x % 97) as usize)),
                1 => out.extend_from_slice(&x.to_le_bytes()),
                _ => {
                    let back = out.len().min(70_000);
                    let start = out.len() - back / 2;
                    let copy: Vec<u8> = out[start..].iter().take(40).copied().collect();
                    out.extend(copy);
                }
            }
        }
        out.truncate(n);
        out
    }

    /// `plain` as one raw snappy block, as `snap` writes it.
    fn compressed(plain: &[u8]) -> Vec<u8> {
        snap::raw::Encoder::new()
            .compress_vec(plain)
            .unwrap_or_default()
    }

    #[test]
    fn every_prefix_is_what_a_whole_decompression_starts_with() {
        for n in [0, 1, 7, 64, 1000, 70_000, 200_000] {
            let plain = sample(n);
            let block = compressed(&plain);
            for want in [
                0, 1, 4, 5, 8, 63, 64, 65, 999, 65_536, 70_000, 200_000, 300_000,
            ] {
                let got = prefix(&block, want);
                assert_eq!(
                    got.as_deref(),
                    Some(&plain[..want.min(n)]),
                    "n {n} want {want}"
                );
            }
        }
    }

    #[test]
    fn long_literals_and_far_copies_decode() {
        // Incompressible bytes make literals with 1- to 3-byte lengths.
        let mut x = 7u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let mut plain = noise.clone();
        plain.extend_from_slice(&noise[..5000]);
        let block = compressed(&plain);
        assert_eq!(prefix(&block, plain.len()).as_deref(), Some(&plain[..]));
        assert_eq!(prefix(&block, 100_100).as_deref(), Some(&plain[..100_100]));
    }

    #[test]
    fn malformed_blocks_are_none_not_a_panic() {
        let plain = sample(5000);
        let block = compressed(&plain);
        // Cut anywhere: the bytes before the cut decode, a prefix past it does not.
        for cut in 0..block.len().min(300) {
            let _ = prefix(&block[..cut], 5000);
        }
        assert!(prefix(&[], 1).is_none());
        assert!(
            prefix(&[0xff; 6], 1).is_none(),
            "a varint longer than 5 bytes"
        );
        // A copy before any output, and one further back than the output.
        assert!(prefix(&[10, 0b0000_0001, 1], 4).is_none());
        assert!(prefix(&[10, 0, b'a', 0b0000_0001, 2], 5).is_none());
        // Every byte string of a few bytes: never a panic.
        for a in 0..=255u8 {
            for b in [0u8, 1, 2, 3, 0x3c, 0xf0, 0xfc, 0xfd, 0xfe, 0xff] {
                let _ = prefix(&[8, a, b, a, b, 1, 2, 3], 8);
                let _ = prefix(&[200, 1, a, b, 0xff, 0xff, 0xff], 100);
            }
        }
    }
}
