//! Z85, the Base85 variant of ZeroMQ RFC 32 that the Delta protocol uses for inline deletion
//! vectors and for the UUIDs in deletion vector file names.
//!
//! Every 4 bytes, read as a big-endian `u32`, become 5 characters: base-85 digits, most
//! significant first, drawn from [`ALPHABET`]. Decoding needs a multiple of 5 characters;
//! encoding needs a multiple of 4 bytes. Delta's reference writer pads inline vectors with zero
//! bytes to a multiple of 4 and records the real size in `sizeInBytes`.
//!
//! One extension, for inline vectors written with the `z85` Rust crate (delta-kernel-rs test
//! tables have them): a final group that starts with 1 to 3 `#` characters encodes only the last
//! 3 to 1 bytes, its value read from the characters after the `#`s. Under RFC 32 such a group is
//! invalid (any group starting with `#`, digit 84, exceeds 32 bits), so the two never clash.

use std::fmt;

/// The 85 characters of Z85, in digit order (`'0'` is 0, `'#'` is 84).
pub(crate) const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Digit value of `#`, the last character of the alphabet.
const HASH: u8 = 84;

/// Marks a byte that is not a Z85 character in [`DIGITS`].
const INVALID: u8 = 0xFF;

/// Digit value of each ASCII byte, or [`INVALID`].
const DIGITS: [u8; 128] = {
    let mut table = [INVALID; 128];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Why a string is not valid Z85.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Z85Error {
    /// A character outside the Z85 alphabet, at a character position.
    InvalidChar {
        /// The character.
        ch: char,
        /// Its position, counted in characters from 0.
        position: usize,
    },
    /// The number of characters is not a multiple of 5.
    BadLength(usize),
    /// A 5-character group whose value does not fit in 32 bits.
    Overflow {
        /// Character position of the group's first character.
        position: usize,
    },
    /// The number of bytes to encode is not a multiple of 4.
    #[cfg(test)]
    BadInputLength(usize),
}

impl fmt::Display for Z85Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Z85Error::InvalidChar { ch, position } => {
                write!(f, "invalid Z85 character {ch:?} at position {position}")
            }
            Z85Error::BadLength(n) => {
                write!(
                    f,
                    "Z85 text must be a multiple of 5 characters long, got {n}"
                )
            }
            Z85Error::Overflow { position } => write!(
                f,
                "the Z85 group at position {position} does not fit in 32 bits"
            ),
            #[cfg(test)]
            Z85Error::BadInputLength(n) => {
                write!(f, "Z85 encodes a multiple of 4 bytes, got {n}")
            }
        }
    }
}

impl std::error::Error for Z85Error {}

/// Decodes Z85 text: 4 bytes per 5 characters.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, Z85Error> {
    let mut digits = Vec::with_capacity(text.len());
    for (position, ch) in text.chars().enumerate() {
        let digit = if ch.is_ascii() {
            DIGITS[ch as usize]
        } else {
            INVALID
        };
        if digit == INVALID {
            return Err(Z85Error::InvalidChar { ch, position });
        }
        digits.push(digit);
    }
    if !digits.len().is_multiple_of(5) {
        return Err(Z85Error::BadLength(digits.len()));
    }
    let mut out = Vec::with_capacity(digits.len() / 5 * 4);
    let groups = digits.len() / 5;
    for (group, chunk) in digits.chunks_exact(5).enumerate() {
        let position = group * 5;
        let value = chunk.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
        if let Ok(value) = u32::try_from(value) {
            out.extend_from_slice(&value.to_be_bytes());
            continue;
        }
        // A final group led by 1 to 3 `#` stands for the last 3 to 1 bytes (see the module
        // documentation). No RFC 32 group starts with `#`: it would exceed 32 bits.
        let hashes = chunk.iter().take_while(|&&d| d == HASH).count();
        if group + 1 != groups || !(1..=3).contains(&hashes) {
            return Err(Z85Error::Overflow { position });
        }
        let kept = 4 - hashes;
        let value = chunk[hashes..]
            .iter()
            .fold(0u64, |acc, &d| acc * 85 + u64::from(d));
        if value >> (8 * kept) != 0 {
            return Err(Z85Error::Overflow { position });
        }
        out.extend_from_slice(&value.to_be_bytes()[8 - kept..]);
    }
    Ok(out)
}

/// Encodes bytes as Z85 text (only tests need it: the reader never writes).
#[cfg(test)]
pub(crate) fn encode(bytes: &[u8]) -> Result<String, Z85Error> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Z85Error::BadInputLength(bytes.len()));
    }
    let mut out = String::with_capacity(bytes.len() / 4 * 5);
    for chunk in bytes.chunks_exact(4) {
        let mut value = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let mut group = [0u8; 5];
        for slot in group.iter_mut().rev() {
            *slot = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        out.extend(group.iter().map(|&b| char::from(b)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_32_test_vector() {
        // ZeroMQ RFC 32: these 8 bytes encode as "HelloWorld".
        let bytes = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(encode(&bytes).as_deref(), Ok("HelloWorld"));
        assert_eq!(decode("HelloWorld"), Ok(bytes.to_vec()));
    }

    #[test]
    fn delta_protocol_uuid_example() {
        // PROTOCOL.md, "JSON Example 1": the 20 characters after the prefix "ab" encode
        // the UUID d2c639aa-8816-431a-aaf6-d3fe2512ff61.
        let uuid = [
            0xd2, 0xc6, 0x39, 0xaa, 0x88, 0x16, 0x43, 0x1a, 0xaa, 0xf6, 0xd3, 0xfe, 0x25, 0x12,
            0xff, 0x61,
        ];
        assert_eq!(decode("^-aqEH.-t@S}K{vb[*k^"), Ok(uuid.to_vec()));
        assert_eq!(encode(&uuid).as_deref(), Ok("^-aqEH.-t@S}K{vb[*k^"));
    }

    #[test]
    fn round_trips_every_byte_value() {
        let bytes: Vec<u8> = (0..=255u8)
            .chain([0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0])
            .collect();
        let text = encode(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text.len(), bytes.len() / 4 * 5);
        assert!(text.bytes().all(|b| ALPHABET.contains(&b)));
        assert_eq!(decode(&text), Ok(bytes));
        assert_eq!(encode(&[]).as_deref(), Ok(""));
        assert_eq!(decode(""), Ok(vec![]));
    }

    #[test]
    fn extremes() {
        assert_eq!(encode(&[0; 4]).as_deref(), Ok("00000"));
        // u32::MAX is the largest group: 85^5 - 1 does not fit.
        assert_eq!(decode("%nSc0"), Ok(vec![0xFF; 4]));
        assert_eq!(encode(&[0xFF; 4]).as_deref(), Ok("%nSc0"));
        assert_eq!(decode("%nSc1"), Err(Z85Error::Overflow { position: 0 }));
        assert_eq!(decode("#####"), Err(Z85Error::Overflow { position: 0 }));
        assert_eq!(
            decode("00000#####"),
            Err(Z85Error::Overflow { position: 5 })
        );
    }

    #[test]
    fn short_final_groups() {
        // `z85` crate tails: 1 to 3 leading `#` mark the missing leading bytes of the last
        // group. From kernel__cdf-table-with-dv: "##093" is the two bytes 0x03 0x00.
        assert_eq!(decode("##093"), Ok(vec![0x03, 0x00]));
        assert_eq!(
            decode("Hello##093"),
            Ok(vec![0x86, 0x4F, 0xD2, 0x6F, 0x03, 0x00])
        );
        assert_eq!(decode("#0003"), Ok(vec![0, 0, 3]));
        assert_eq!(decode("###03"), Ok(vec![3]));
        // The value must fit in the bytes left: 256 does not fit in one byte.
        assert_eq!(decode("###31"), Err(Z85Error::Overflow { position: 0 }));
        assert_eq!(decode("###30"), Ok(vec![255]));
        // Only the last group may be short.
        assert_eq!(
            decode("##093Hello"),
            Err(Z85Error::Overflow { position: 0 })
        );
        for tail in [[0x12u8].as_slice(), &[0xAB, 0xCD], &[1, 2, 3]] {
            let mut padded = vec![0u8; 4 - tail.len()];
            padded.extend_from_slice(tail);
            let mut text = encode(&padded).unwrap_or_else(|e| panic!("{e}"));
            text.replace_range(..4 - tail.len(), &"#".repeat(4 - tail.len()));
            assert_eq!(decode(&text), Ok(tail.to_vec()), "{text}");
        }
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(decode("Hello"), Ok(vec![0x86, 0x4F, 0xD2, 0x6F]));
        assert_eq!(decode("Hell"), Err(Z85Error::BadLength(4)));
        assert_eq!(decode("HelloW"), Err(Z85Error::BadLength(6)));
        assert_eq!(
            decode("Hel\"o"),
            Err(Z85Error::InvalidChar {
                ch: '"',
                position: 3
            })
        );
        assert_eq!(
            decode("Hel o"),
            Err(Z85Error::InvalidChar {
                ch: ' ',
                position: 3
            })
        );
        assert_eq!(
            decode("Helé0"),
            Err(Z85Error::InvalidChar {
                ch: 'é',
                position: 3
            })
        );
        assert_eq!(
            decode("\u{7f}0000").map_err(|e| e.to_string()),
            Err("invalid Z85 character '\\u{7f}' at position 0".to_string())
        );
        assert_eq!(encode(&[1, 2, 3]), Err(Z85Error::BadInputLength(3)));
        assert!(Z85Error::BadLength(4).to_string().contains("multiple of 5"));
    }
}
