//! [`TableLocation`]: where a table lives, normalised once.
//!
//! A location is a URL (`file://`, `http(s)://`, `s3://`, ...) or, natively, a local path
//! (relative paths are made absolute against the current directory). The normalised form is a
//! URL whose path ends with `/`, so that relative log and data paths join under it.

use std::fmt;

use url::Url;

use crate::error::{redact, DeltaError, Result};

/// A normalised table root.
#[derive(Clone, PartialEq, Eq)]
pub struct TableLocation {
    url: Url,
}

impl fmt::Debug for TableLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TableLocation({self})")
    }
}

impl fmt::Display for TableLocation {
    /// The location with query string and credentials removed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(self.url.as_str()))
    }
}

impl TableLocation {
    /// Parses a path or URL.
    pub fn parse(location: &str) -> Result<TableLocation> {
        // Spaces around a URL are not part of it (URL parsers drop them); a path is taken
        // byte for byte: `sales ` and `sales` may be two tables.
        let trimmed = location.trim();
        if trimmed.is_empty() {
            return Err(DeltaError::InvalidLocation {
                location: location.to_string(),
                reason: "the location is empty".into(),
            });
        }
        // `file:/path`, the short form of a file URL (RFC 8089), is one too.
        let has_scheme = trimmed.split_once("://").is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }) || trimmed
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("file:/"));
        let mut url = if has_scheme {
            Url::parse(trimmed).map_err(|e| DeltaError::InvalidLocation {
                location: redact(trimmed),
                reason: e.to_string(),
            })?
        } else {
            local_path_url(location)?
        };
        if url.scheme() == "file"
            && url
                .host_str()
                .is_some_and(|h| !h.is_empty() && h != "localhost")
        {
            return Err(DeltaError::InvalidLocation {
                location: redact(trimmed),
                reason: "a file URL names another host: only file:///path or \
                         file://localhost/path is read from this machine"
                    .into(),
            });
        }
        if url.cannot_be_a_base() {
            return Err(DeltaError::InvalidLocation {
                location: redact(trimmed),
                reason: "not a hierarchical URL".into(),
            });
        }
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(TableLocation { url })
    }

    /// The normalised URL (path ends with `/`). It may carry a query string: do not print it;
    /// use `Display`.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The URL scheme (`file`, `https`, `s3`, ...).
    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The URL of a path relative to the table root.
    pub fn join(&self, relative: &str) -> Result<Url> {
        self.url
            .join(relative)
            .map_err(|e| DeltaError::InvalidLocation {
                location: redact(relative),
                reason: e.to_string(),
            })
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn local_path_url(path: &str) -> Result<Url> {
    use std::path::{Component, PathBuf};
    let absolute = std::path::absolute(path).map_err(|e| DeltaError::InvalidLocation {
        location: path.to_string(),
        reason: e.to_string(),
    })?;
    // Resolve `.` and `..` lexically (the table need not exist yet to be named).
    let mut normal = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    Url::from_directory_path(&normal).map_err(|_| DeltaError::InvalidLocation {
        location: path.to_string(),
        reason: "cannot turn the path into a file URL".into(),
    })
}

#[cfg(target_arch = "wasm32")]
fn local_path_url(path: &str) -> Result<Url> {
    Err(DeltaError::InvalidLocation {
        location: path.to_string(),
        reason: "a table location must be an http(s) URL".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_urls() {
        let l = TableLocation::parse("s3://bucket/tables/t").map(|l| l.url().to_string());
        assert_eq!(l.ok().as_deref(), Some("s3://bucket/tables/t/"));
        let l = TableLocation::parse("https://h.example/t/?sig=secret");
        let l = l.ok();
        assert_eq!(
            l.as_ref().map(|l| l.to_string()).as_deref(),
            Some("https://h.example/t/")
        );
        let joined = l
            .and_then(|l| l.join("_delta_log/x.json").ok())
            .map(|u| u.path().to_string());
        assert_eq!(joined.as_deref(), Some("/t/_delta_log/x.json"));
        assert!(TableLocation::parse("").is_err());
        let short = TableLocation::parse("file:/t/x").map(|l| l.url().to_string());
        assert_eq!(short.ok().as_deref(), Some("file:///t/x/"));
        // Another host's file is not read from this machine's disk.
        assert!(TableLocation::parse("file://otherhost/t").is_err());
        let local = TableLocation::parse("file://localhost/t").map(|l| l.url().path().to_string());
        assert_eq!(local.ok().as_deref(), Some("/t/"));
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn local_paths_become_file_urls() {
        let l = TableLocation::parse("/tmp/a/../b/./c").map(|l| l.url().path().to_string());
        assert_eq!(l.ok().as_deref(), Some("/tmp/b/c/"));
        let l = TableLocation::parse("/tmp/some table").ok();
        assert_eq!(l.as_ref().map(|l| l.scheme()), Some("file"));
        assert_eq!(
            l.map(|l| l.url().path().to_string()).as_deref(),
            Some("/tmp/some%20table/")
        );
        // A path is taken as written: a space at its end is part of the folder's name.
        let l = TableLocation::parse("/tmp/sales ").map(|l| l.url().path().to_string());
        assert_eq!(l.ok().as_deref(), Some("/tmp/sales%20/"));
        let l = TableLocation::parse(" sales").map(|l| l.url().path().to_string());
        assert!(l.is_ok_and(|p| p.ends_with("/%20sales/")));
    }
}
