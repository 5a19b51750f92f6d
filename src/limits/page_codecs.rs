//! A Parquet page's compressed contents decompressed for the page checks, where a decoder's
//! panic cannot be contained (see [`super::decoder_panics`]): the same libraries and framings
//! parquet's own codecs decode with (snappy raw blocks, gzip members, brotli, LZ4 in Hadoop
//! frames or an LZ4 frame or a raw block, LZ4 raw blocks, zstd frames).
//!
//! Output is bounded by the page's declared uncompressed size, which [`super::pages`] has
//! checked against the limits before; contents that do not decompress to exactly that size
//! give `None`, and the decoder then fails on them with its own error.

use std::cell::OnceCell;
use std::io::Read;

use parquet::basic::Compression;

/// `compressed` decompressed with `codec` to exactly `size` bytes; `None` when it does not
/// decompress so (or the codec is one the reader does not decode: LZO).
pub(crate) fn decompress(codec: Compression, compressed: &[u8], size: usize) -> Option<Vec<u8>> {
    let out = match codec {
        Compression::UNCOMPRESSED => compressed.to_vec(),
        Compression::SNAPPY => {
            let mut out = vec![0; size];
            let n = snap::raw::Decoder::new()
                .decompress(compressed, &mut out)
                .ok()?;
            out.truncate(n);
            out
        }
        Compression::GZIP(_) => read_at_most(flate2::read::MultiGzDecoder::new(compressed), size)?,
        Compression::BROTLI(_) => {
            read_at_most(brotli::Decompressor::new(compressed, size.max(1)), size)?
        }
        Compression::LZ4 => lz4_hadoop(compressed, size)
            .or_else(|| read_at_most(lz4_flex::frame::FrameDecoder::new(compressed), size))
            .or_else(|| lz4_block(compressed, size))?,
        Compression::LZ4_RAW => lz4_block(compressed, size)?,
        Compression::ZSTD(_) => zstd::bulk::decompress(compressed, size).ok()?,
        Compression::LZO => return None,
    };
    (out.len() == size).then_some(out)
}

/// A page's compressed contents, whose first bytes are asked for (the page checks read a
/// page's level sections, which come first): snappy's by a decoder that stops at them, other
/// codecs' cut from one whole decompression, made at the first ask and kept for the next.
pub(crate) struct Prefixes<'a> {
    codec: Compression,
    compressed: &'a [u8],
    /// The declared decompressed size.
    size: usize,
    whole: OnceCell<Option<Vec<u8>>>,
}

impl<'a> Prefixes<'a> {
    pub(crate) fn new(codec: Compression, compressed: &'a [u8], size: usize) -> Self {
        Prefixes {
            codec,
            compressed,
            size,
            whole: OnceCell::new(),
        }
    }

    /// The first `want` bytes decompressed; fewer when the contents are shorter, `None` when
    /// they do not decompress that far (another codec: do not decompress to their size).
    pub(crate) fn first(&self, want: usize) -> Option<Vec<u8>> {
        if self.codec == Compression::SNAPPY {
            return super::snappy_prefix::prefix(self.compressed, want.min(self.size));
        }
        let whole = self
            .whole
            .get_or_init(|| decompress(self.codec, self.compressed, self.size))
            .as_ref()?;
        whole.get(..want.min(whole.len())).map(<[u8]>::to_vec)
    }
}

/// Everything `reader` gives, up to one byte more than `size` (enough to tell contents that
/// decompress to more than declared).
fn read_at_most(reader: impl Read, size: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(size);
    reader
        .take(u64::try_from(size).ok()?.saturating_add(1))
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// One raw LZ4 block of at most `size` bytes decompressed.
fn lz4_block(compressed: &[u8], size: usize) -> Option<Vec<u8>> {
    let mut out = vec![0; size];
    let n = lz4_flex::block::decompress_into(compressed, &mut out).ok()?;
    out.truncate(n);
    Some(out)
}

/// Hadoop's LZ4 framing: frames of a 4-byte big-endian decompressed size, a 4-byte
/// big-endian compressed size and one raw LZ4 block, at most `size` bytes in all.
fn lz4_hadoop(mut input: &[u8], size: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(size);
    while !input.is_empty() {
        let (sizes, rest) = input.split_first_chunk::<8>()?;
        let (expected, stored) = sizes.split_at(4);
        let expected = usize::try_from(u32::from_be_bytes(expected.try_into().ok()?)).ok()?;
        let stored = usize::try_from(u32::from_be_bytes(stored.try_into().ok()?)).ok()?;
        let block = rest.get(..stored)?;
        let start = out.len();
        let end = start.checked_add(expected).filter(|&end| end <= size)?;
        out.resize(end, 0);
        let n = lz4_flex::block::decompress_into(block, out.get_mut(start..)?).ok()?;
        if n != expected {
            return None;
        }
        input = rest.get(stored..)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that compresses, of `n` bytes.
    fn text(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"delta arrow "[i % 12]).collect()
    }

    #[test]
    fn hadoop_frames_and_raw_blocks_of_lz4() {
        let plain = text(5000);
        let block = lz4_flex::block::compress(&plain);
        assert_eq!(lz4_block(&block, plain.len()).as_deref(), Some(&plain[..]));
        let mut framed = Vec::new();
        for half in plain.chunks(2500) {
            let b = lz4_flex::block::compress(half);
            framed.extend(u32::try_from(half.len()).unwrap_or(0).to_be_bytes());
            framed.extend(u32::try_from(b.len()).unwrap_or(0).to_be_bytes());
            framed.extend(b);
        }
        assert_eq!(
            decompress(Compression::LZ4, &framed, plain.len()).as_deref(),
            Some(&plain[..])
        );
        // A frame declaring more than the page's size, or cut short, is not decompressed.
        assert!(lz4_hadoop(&framed, 4999).is_none());
        assert!(lz4_hadoop(&framed[..framed.len() - 3], plain.len()).is_none());
        assert_eq!(
            decompress(Compression::LZ4, &block, plain.len()).as_deref(),
            Some(&plain[..]),
            "a raw block, parquet's last fallback"
        );
    }

    #[test]
    fn contents_of_another_size_than_declared_are_none() {
        let plain = text(3000);
        let snappy = snap::raw::Encoder::new()
            .compress_vec(&plain)
            .unwrap_or_default();
        assert_eq!(
            decompress(Compression::SNAPPY, &snappy, 3000).as_deref(),
            Some(&plain[..])
        );
        assert!(decompress(Compression::SNAPPY, &snappy, 2999).is_none());
        assert!(decompress(Compression::SNAPPY, &snappy, 3001).is_none());
        let zstd = zstd::bulk::compress(&plain, 3).unwrap_or_default();
        assert!(decompress(Compression::ZSTD(Default::default()), &zstd, 3000).is_some());
        assert!(decompress(Compression::ZSTD(Default::default()), &zstd, 100).is_none());
        assert!(decompress(Compression::SNAPPY, &[0xff; 20], 3000).is_none());
        assert!(decompress(Compression::LZO, &plain, 3000).is_none());
    }
}
