//! Data file paths as the protocol gives them: `add.path` (and an absolute deletion vector
//! path) is a percent-encoded path relative to the table root, or an absolute URI. Stores
//! take decoded paths relative to the root. Pure: the root comes in as a URL.

use percent_encoding::percent_decode_str;

use crate::error::{DeltaError, Result};
use url::Url;

/// The store path (relative to the table root `root`) of a data file named `path` in the log.
pub fn data_file_path(root: &Url, path: &str) -> Result<String> {
    let is_absolute = path.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if is_absolute {
        let root = root.as_str();
        let root = root.split('?').next().unwrap_or(root);
        let within = path.strip_prefix(root).or_else(|| {
            // `file:/x` and `file:///x` name the same place.
            let alt = root.replacen(":///", ":/", 1);
            path.strip_prefix(alt.as_str())
        });
        return match within {
            Some(rel) => decode(rel),
            None => Err(DeltaError::Unsupported {
                what: format!(
                    "data file {} lies outside the table location",
                    crate::error::redact(path)
                ),
            }),
        };
    }
    decode(path.trim_start_matches('/'))
}

fn decode(path: &str) -> Result<String> {
    percent_decode_str(path)
        .decode_utf8()
        .map(|p| p.into_owned())
        .map_err(|_| DeltaError::InvalidLog {
            path: path.to_string(),
            reason: "the data file path is not valid percent-encoded UTF-8".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_relative_and_absolute_paths() {
        let loc = Url::parse("file:///t/x/").unwrap_or_else(|e| panic!("{e}"));
        let p = |s: &str| data_file_path(&loc, s).ok();
        assert_eq!(p("a%20b/c%3D1.parquet").as_deref(), Some("a b/c=1.parquet"));
        assert_eq!(
            p("file:///t/x/part.parquet").as_deref(),
            Some("part.parquet")
        );
        assert_eq!(p("file:/t/x/p%25.parquet").as_deref(), Some("p%.parquet"));
        assert!(data_file_path(&loc, "s3://other/part.parquet").is_err());
    }
}
