//! Protocol validation: may this reader read the table?
//!
//! Reader versions 1 to 3 are supported. Version 3 lists its reader features, and each must be
//! one this reader implements; the first one that is not is named in an
//! [`DeltaError::UnsupportedFeature`] error.

use super::actions::Protocol;
use crate::error::{DeltaError, Result};

/// Reader features this reader implements.
pub const SUPPORTED_READER_FEATURES: &[&str] = &[
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantType",
    "variantType-preview",
];

/// Checks that this reader can read a table with `protocol`.
pub fn validate_reader_protocol(protocol: &Protocol) -> Result<()> {
    match protocol.min_reader_version {
        1 | 2 => Ok(()),
        3 => {
            let features = protocol.reader_features.as_deref().unwrap_or_default();
            match features
                .iter()
                .find(|f| !SUPPORTED_READER_FEATURES.contains(&f.as_str()))
            {
                Some(f) => Err(DeltaError::UnsupportedFeature { feature: f.clone() }),
                None => Ok(()),
            }
        }
        v => Err(DeltaError::UnsupportedReaderVersion { version: v }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(reader: i64, features: Option<&[&str]>) -> Protocol {
        Protocol {
            min_reader_version: reader,
            min_writer_version: 7,
            reader_features: features.map(|f| f.iter().map(|s| s.to_string()).collect()),
            writer_features: None,
        }
    }

    #[test]
    fn versions_and_features() {
        assert!(validate_reader_protocol(&protocol(1, None)).is_ok());
        assert!(validate_reader_protocol(&protocol(2, None)).is_ok());
        assert!(validate_reader_protocol(&protocol(3, Some(&["deletionVectors"]))).is_ok());
        let e = validate_reader_protocol(&protocol(3, Some(&["deletionVectors", "catalogOwned"])));
        assert!(
            matches!(e, Err(DeltaError::UnsupportedFeature { feature }) if feature == "catalogOwned")
        );
        let e = validate_reader_protocol(&protocol(99, None))
            .err()
            .map(|e| e.code());
        assert_eq!(e, Some("unsupported_reader_version"));
        let e = validate_reader_protocol(&protocol(0, None))
            .err()
            .map(|e| e.code());
        assert_eq!(e, Some("unsupported_reader_version"));
    }
}
