//! A bounded reader of the Thrift compact protocol, just enough to walk a Parquet page header:
//! read `i32` fields and skip every other field without allocating.
//!
//! `parquet` 59 keeps its own Thrift decoder and `PageHeader` crate-private, and decoding a
//! header through a general Thrift library would allocate what the header declares
//! (statistics of any length); this reader only moves a cursor over a borrowed slice, with a
//! bound on struct nesting, so a hostile header costs no memory and little time.

/// Deepest nesting skipped, as deep as `parquet`'s own reader goes (a page header's statistics
/// sit at depth 3).
const MAX_NESTING: usize = 64;

/// Why a header could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThriftError {
    /// The bytes end inside the header.
    Truncated,
    /// The bytes are not a valid compact-protocol struct (or nest too deep).
    Malformed,
}

/// Compact-protocol element types (the low nibble of a field header).
pub(crate) mod kind {
    pub(crate) const STOP: u8 = 0;
    pub(crate) const TRUE: u8 = 1;
    pub(crate) const FALSE: u8 = 2;
    pub(crate) const BYTE: u8 = 3;
    pub(crate) const I16: u8 = 4;
    pub(crate) const I32: u8 = 5;
    pub(crate) const I64: u8 = 6;
    pub(crate) const DOUBLE: u8 = 7;
    pub(crate) const BINARY: u8 = 8;
    pub(crate) const LIST: u8 = 9;
    pub(crate) const SET: u8 = 10;
    pub(crate) const MAP: u8 = 11;
    pub(crate) const STRUCT: u8 = 12;
}

/// A cursor over compact-protocol bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    fn byte(&mut self) -> Result<u8, ThriftError> {
        let b = *self.bytes.get(self.at).ok_or(ThriftError::Truncated)?;
        self.at += 1;
        Ok(b)
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), ThriftError> {
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(ThriftError::Truncated);
        }
        self.at += n as usize;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most 10 bytes.
    fn varint(&mut self) -> Result<u64, ThriftError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ThriftError::Malformed)
    }

    /// A zigzag varint (`i16`, `i32` and `i64` alike).
    pub(crate) fn signed(&mut self) -> Result<i64, ThriftError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A zigzag varint that must fit an `i32`.
    pub(crate) fn i32(&mut self) -> Result<i32, ThriftError> {
        i32::try_from(self.signed()?).map_err(|_| ThriftError::Malformed)
    }

    /// The next field header of a struct: `None` at its stop byte, else the field id and the
    /// element type. `last` is the id of the previous field (ids are delta-encoded).
    pub(crate) fn field(&mut self, last: i16) -> Result<Option<(i16, u8)>, ThriftError> {
        let header = self.byte()?;
        let kind = header & 0x0f;
        if kind == kind::STOP {
            return Ok(None);
        }
        let delta = header >> 4;
        let id = match delta {
            0 => i16::try_from(self.signed()?).map_err(|_| ThriftError::Malformed)?,
            d => last
                .checked_add(i16::from(d))
                .ok_or(ThriftError::Malformed)?,
        };
        Ok(Some((id, kind)))
    }

    /// Skips one value of type `kind` (a struct field's value: booleans carry theirs in the
    /// type, so they take no bytes).
    pub(crate) fn skip(&mut self, kind: u8) -> Result<(), ThriftError> {
        self.skip_value(kind, 0, false)
    }

    fn skip_value(&mut self, kind: u8, depth: usize, in_list: bool) -> Result<(), ThriftError> {
        if depth > MAX_NESTING {
            return Err(ThriftError::Malformed);
        }
        match kind {
            // In a list a boolean takes a byte; as a field it is its type nibble.
            kind::TRUE | kind::FALSE => match in_list {
                true => self.skip_bytes(1),
                false => Ok(()),
            },
            kind::BYTE => self.skip_bytes(1),
            kind::I16 | kind::I32 | kind::I64 => self.varint().map(drop),
            kind::DOUBLE => self.skip_bytes(8),
            kind::BINARY => {
                let len = self.varint()?;
                self.skip_bytes(len)
            }
            kind::LIST | kind::SET => {
                let header = self.byte()?;
                let elem = header & 0x0f;
                let count = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                self.skip_many(elem, count, depth)
            }
            kind::MAP => {
                let count = self.varint()?;
                if count == 0 {
                    return Ok(());
                }
                let types = self.byte()?;
                for _ in 0..count {
                    self.skip_value(types >> 4, depth + 1, true)?;
                    self.skip_value(types & 0x0f, depth + 1, true)?;
                }
                Ok(())
            }
            kind::STRUCT => self.skip_struct(depth + 1),
            _ => Err(ThriftError::Malformed),
        }
    }

    /// Skips `count` elements of a list; each takes at least a byte (or bit, for none: a
    /// count past the bytes left fails before looping).
    fn skip_many(&mut self, elem: u8, count: u64, depth: usize) -> Result<(), ThriftError> {
        if count > (self.bytes.len() - self.at) as u64 {
            return Err(ThriftError::Truncated);
        }
        for _ in 0..count {
            self.skip_value(elem, depth + 1, true)?;
        }
        Ok(())
    }

    /// Skips a struct whose field headers start here, through its stop byte.
    pub(crate) fn skip_struct(&mut self, depth: usize) -> Result<(), ThriftError> {
        if depth > MAX_NESTING {
            return Err(ThriftError::Malformed);
        }
        let mut last = 0;
        while let Some((id, kind)) = self.field(last)? {
            self.skip_value(kind, depth, false)?;
            last = id;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_skips_nested_values() {
        // field 1: i32 -3; field 2: binary "ab"; field 3: list<i32> [1, 2];
        // field 4: struct { field 1: true }; field 20 (long form): i64 5; stop.
        let bytes = [
            0x15, 0x05, 0x18, 0x02, b'a', b'b', 0x19, 0x25, 0x02, 0x04, 0x1c, 0x11, 0x00, 0x06,
            0x28, 0x0a, 0x00,
        ];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.field(0), Ok(Some((1, kind::I32))));
        assert_eq!(r.i32(), Ok(-3));
        assert_eq!(r.field(1), Ok(Some((2, kind::BINARY))));
        r.skip(kind::BINARY).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.field(2), Ok(Some((3, kind::LIST))));
        r.skip(kind::LIST).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.field(3), Ok(Some((4, kind::STRUCT))));
        r.skip(kind::STRUCT).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.field(4), Ok(Some((20, kind::I64))));
        assert_eq!(r.signed(), Ok(5));
        assert_eq!(r.field(20), Ok(None));
        assert_eq!(r.position(), bytes.len());
    }

    #[test]
    fn hostile_bytes_fail_without_allocating() {
        // A binary declaring 2^62 bytes, a list declaring 2^40 elements, endless varints and
        // structs nested past the bound.
        let huge_binary = [0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
        let mut r = Reader::new(&huge_binary);
        assert_eq!(r.skip_struct(0), Err(ThriftError::Truncated));
        let huge_list = [0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
        assert_eq!(
            Reader::new(&huge_list).skip_struct(0),
            Err(ThriftError::Truncated)
        );
        let endless = [
            0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert_eq!(
            Reader::new(&endless).skip_struct(0),
            Err(ThriftError::Malformed)
        );
        let nested = [0x1c; 100];
        assert_eq!(
            Reader::new(&nested).skip_struct(0),
            Err(ThriftError::Malformed)
        );
        // Lists of lists, each of one element.
        let mut lists = vec![0x19];
        lists.extend([0x19; 10_000]);
        assert_eq!(
            Reader::new(&lists).skip_struct(0),
            Err(ThriftError::Malformed)
        );
    }
}
