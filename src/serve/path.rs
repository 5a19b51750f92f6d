//! From a request path to a file under the served directories.
//!
//! The path is percent-decoded and split into segments; `..` (however encoded), a leading
//! `//` (an absolute path in disguise), empty interior segments, backslashes and NUL bytes
//! are refused. The segments are joined onto the root, or onto the directory of the longest
//! mount whose URL prefix they start with (whole segments). What is found there is served
//! only if it is a regular file (or a directory's index file) and, unless symlinks may be
//! followed anywhere, its real path (symlinks resolved) lies inside a served directory: a
//! FIFO, a device or a link to `~/.ssh` is refused before anything opens it.

use std::io;
use std::path::{Component, Path, PathBuf};

use percent_encoding::percent_decode_str;

use super::config::ServeConfig;

/// Decoded, checked segments of a request path (`/` gives none); `None` if the path is not
/// origin-form or would leave the served directory.
pub(crate) fn segments(path: &str) -> Option<Vec<String>> {
    let decoded = percent_decode_str(path.strip_prefix('/')?)
        .decode_utf8()
        .ok()?;
    if decoded.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = decoded.split('/').collect();
    let last = parts.len() - 1;
    let mut segments = Vec::with_capacity(parts.len());
    for (i, part) in parts.into_iter().enumerate() {
        match part {
            // A trailing slash names a directory; an interior `//` is refused.
            "" if i == last => {}
            "." => {}
            seg if is_plain_name(seg) && !seg.contains(['\\', '\0']) => {
                segments.push(seg.to_string())
            }
            _ => return None,
        }
    }
    Some(segments)
}

/// True if `seg` is one normal path component (not empty, no root, prefix, `.` or `..`).
fn is_plain_name(seg: &str) -> bool {
    let mut comps = Path::new(seg).components();
    matches!(
        (comps.next(), comps.next()),
        (Some(Component::Normal(_)), None)
    )
}

/// What a lookup found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A regular file to serve, by its real path.
    File(PathBuf),
    /// A directory's index file, by its real path: served for a path ending in `/`; a path
    /// without it is redirected there, so that the page's relative links resolve.
    Index(PathBuf),
    /// Nothing there, or a directory without an index file (404).
    Missing,
    /// There, but not served: not a regular file, or outside the served directories (403).
    Refused,
}

/// Maps checked segments to files: the root, or a directory mounted under a URL prefix.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    /// The root's real path.
    root: PathBuf,
    /// Mounts as (prefix segments, real directory), longest prefix first.
    mounts: Vec<(Vec<String>, PathBuf)>,
    index: Option<String>,
    follow_symlinks: bool,
}

impl Resolver {
    /// Resolves the served directories (each must exist and be a directory) and splits the
    /// mount prefixes as URL paths are (`"/tables/"` and `"tables"` are the same, and
    /// `"/sales%202024"` is the folder name `sales 2024`), so that they compare with the
    /// decoded segments of requests.
    pub(crate) fn new(config: &ServeConfig) -> io::Result<Self> {
        let mut mounts = Vec::with_capacity(config.mounts.len());
        for (prefix, dir) in &config.mounts {
            let Some(segs) = segments(&format!("/{}", prefix.trim_start_matches('/'))) else {
                let msg = format!("invalid mount prefix {prefix:?}");
                return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
            };
            mounts.push((segs, real_dir(dir)?));
        }
        mounts.sort_by_key(|(segs, _)| std::cmp::Reverse(segs.len()));
        Ok(Resolver {
            root: real_dir(&config.root)?,
            mounts,
            index: config.index.clone(),
            follow_symlinks: config.follow_symlinks,
        })
    }

    /// The real path of the served directory that `segments` name, if they name one.
    pub(crate) async fn directory(&self, segments: &[String]) -> Option<PathBuf> {
        self.check(&self.local_path(segments)).await.err()
    }

    /// Where `segments` lie on disk (not yet checked).
    fn local_path(&self, segments: &[String]) -> PathBuf {
        let (base, rest) = self
            .mounts
            .iter()
            .find(|(prefix, _)| segments.starts_with(prefix))
            .map_or((&self.root, segments), |(prefix, dir)| {
                (dir, &segments[prefix.len()..])
            });
        rest.iter().fold(base.clone(), |p, seg| p.join(seg))
    }

    /// The file to serve for checked segments.
    pub(crate) async fn lookup(&self, segments: &[String]) -> Lookup {
        match self.check(&self.local_path(segments)).await {
            Err(dir) => match &self.index {
                Some(index) => match self.check(&dir.join(index)).await {
                    Ok(Lookup::File(file)) => Lookup::Index(file),
                    Ok(other) => other,
                    Err(_) => Lookup::Missing,
                },
                None => Lookup::Missing,
            },
            Ok(found) => found,
        }
    }

    /// Resolves `path`; `Err(real path)` for a directory allowed to be served.
    async fn check(&self, path: &Path) -> Result<Lookup, PathBuf> {
        let Ok(real) = tokio::fs::canonicalize(path).await else {
            return Ok(Lookup::Missing);
        };
        let inside = |dir: &PathBuf| real.starts_with(dir);
        if !self.follow_symlinks && !inside(&self.root) && !self.mounts.iter().any(|m| inside(&m.1))
        {
            return Ok(Lookup::Refused);
        }
        match tokio::fs::metadata(&real).await {
            Ok(meta) if meta.is_file() => Ok(Lookup::File(real)),
            Ok(meta) if meta.is_dir() => Err(real),
            Ok(_) => Ok(Lookup::Refused),
            Err(_) => Ok(Lookup::Missing),
        }
    }
}

/// The real path of a served directory.
fn real_dir(dir: &Path) -> io::Result<PathBuf> {
    let real = std::fs::canonicalize(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    if real.is_dir() {
        Ok(real)
    } else {
        let msg = format!("not a directory: {}", dir.display());
        Err(io::Error::new(io::ErrorKind::NotFound, msg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Option<Vec<String>> {
        segments(path)
    }

    #[test]
    fn plain_paths() {
        assert_eq!(segs("/").unwrap(), Vec::<String>::new());
        assert_eq!(segs("/a/b.json").unwrap(), ["a", "b.json"]);
        assert_eq!(segs("/a/b/").unwrap(), ["a", "b"]);
        assert_eq!(segs("/a/./b").unwrap(), ["a", "b"]);
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(segs("/a%20b/c%3Dd").unwrap(), ["a b", "c=d"]);
        assert_eq!(segs("/x=%C3%A9").unwrap(), ["x=é"]);
        // %2F acts as a separator after decoding.
        assert_eq!(segs("/a%2Fb").unwrap(), ["a", "b"]);
        assert_eq!(segs("/%ff"), None);
        assert_eq!(segs("/a%00b"), None);
    }

    #[test]
    fn traversal_is_refused() {
        for t in [
            "/..",
            "/../etc/passwd",
            "/a/../../b",
            "/a/..",
            "/%2e%2e/secret",
            "/%2E%2E/secret",
            "/.%2e/secret",
            "/a/%2e%2e%2f%2e%2e/secret",
            "/..%2fsecret",
            "//etc/passwd",
            "/%2Fetc/passwd",
            "/a//b",
            "/a\\..\\b",
            "/a%5c..%5cb",
            "*",
            "a/b",
            "",
        ] {
            assert_eq!(segs(t), None, "{t}");
        }
    }

    /// A mount prefix is a URL path: percent-encoded names match the decoded request; a
    /// directory with an index file is found as such.
    #[tokio::test]
    async fn mount_prefixes_are_decoded_and_indexes_found() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("sales 2024");
        std::fs::create_dir_all(table.join("_delta_log")).unwrap();
        std::fs::write(table.join("_delta_log/0.json"), "{}").unwrap();
        std::fs::write(table.join("index.html"), "<p>").unwrap();
        let config = ServeConfig::new(dir.path())
            .with_mount("/sales%202024", &table)
            .with_mount("/100%25", &table)
            .with_index("index.html");
        let resolver = Resolver::new(&config).unwrap();
        for prefix in ["/sales%202024", "/100%25"] {
            let found = resolver
                .lookup(&segs(&format!("{prefix}/_delta_log/0.json")).unwrap())
                .await;
            assert!(matches!(found, Lookup::File(_)), "{prefix}: {found:?}");
            let found = resolver.lookup(&segs(prefix).unwrap()).await;
            assert!(matches!(found, Lookup::Index(_)), "{prefix}: {found:?}");
        }
    }

    #[test]
    fn bad_mount_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let config = ServeConfig::new(dir.path()).with_mount("/a/../b", dir.path());
        assert!(Resolver::new(&config).is_err());
    }
}
