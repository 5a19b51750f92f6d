//! From a request target to a file under the served directories.
//!
//! The target's query and fragment are dropped, the path is percent-decoded, split into
//! segments and checked: `..` (however encoded), a leading `//` (an absolute path in
//! disguise), empty interior segments, backslashes and NUL bytes are refused. The
//! remaining segments are joined onto the root, or onto the directory of the longest
//! mount whose URL prefix they start with. Nothing here touches the file system.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a request target was refused (answered with 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathError {
    /// Not an origin-form (`/…`) or absolute-form (`http://host/…`) target.
    BadTarget,
    /// A bad `%` escape, or bytes that are not UTF-8, or a NUL byte.
    BadEncoding,
    /// `..`, an absolute path, a backslash, or an empty segment inside the path.
    Traversal,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathError::BadTarget => "bad request target",
            PathError::BadEncoding => "bad percent-encoding in path",
            PathError::Traversal => "path escapes the served directory",
        })
    }
}

/// The path part of a request target: as sent (without query) and as checked segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestPath {
    /// The path as the client sent it, still percent-encoded, without query or fragment.
    pub raw: String,
    /// Decoded, checked segments; empty for `/`.
    pub segments: Vec<String>,
}

/// Splits the path off a request target (origin-form or absolute-form) without checking it.
pub(crate) fn raw_path(target: &str) -> &str {
    let mut path = target;
    for scheme in ["http://", "https://"] {
        let head = path.get(..scheme.len());
        if let (Some(head), Some(rest)) = (head, path.get(scheme.len()..)) {
            if !head.eq_ignore_ascii_case(scheme) {
                continue;
            }
            path = rest.find('/').map_or("/", |i| &rest[i..]);
            break;
        }
    }
    let end = path.find(['?', '#']).unwrap_or(path.len());
    &path[..end]
}

/// Parses and checks a request target.
pub(crate) fn parse_target(target: &str) -> Result<RequestPath, PathError> {
    let raw = raw_path(target);
    if !raw.starts_with('/') {
        return Err(PathError::BadTarget);
    }
    let decoded = percent_decode(raw)?;
    if decoded.starts_with("//") {
        return Err(PathError::Traversal);
    }
    let parts: Vec<&str> = decoded[1..].split('/').collect();
    let last = parts.len() - 1;
    let mut segments = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        match *part {
            // A trailing slash names a directory; an interior `//` is refused.
            "" if i == last => {}
            "" => return Err(PathError::Traversal),
            "." => {}
            ".." => return Err(PathError::Traversal),
            seg => {
                if seg.contains('\\') || !is_plain_name(seg) {
                    return Err(PathError::Traversal);
                }
                segments.push(seg.to_string());
            }
        }
    }
    Ok(RequestPath {
        raw: raw.to_string(),
        segments,
    })
}

/// True if `seg` is one normal path component (no root, prefix, `.` or `..`).
fn is_plain_name(seg: &str) -> bool {
    let mut comps = Path::new(seg).components();
    matches!(
        (comps.next(), comps.next()),
        (Some(Component::Normal(_)), None)
    )
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits, a NUL byte or a result that
/// is not UTF-8 is an error.
fn percent_decode(s: &str) -> Result<String, PathError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex);
            let lo = bytes.get(i + 2).copied().and_then(hex);
            match (hi, lo) {
                (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                _ => return Err(PathError::BadEncoding),
            }
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    if out.contains(&0) {
        return Err(PathError::BadEncoding);
    }
    String::from_utf8(out).map_err(|_| PathError::BadEncoding)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Maps checked segments to a file: the root, or a directory mounted under a URL prefix.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    root: PathBuf,
    /// Mounts as (prefix segments, directory), longest prefix first.
    mounts: Vec<(Vec<String>, PathBuf)>,
}

impl Resolver {
    /// Builds a resolver; a mount prefix is split like a URL path (`"/tables/"` and
    /// `"tables"` are the same) and must consist of plain names.
    pub(crate) fn new(root: PathBuf, mounts: &[(String, PathBuf)]) -> Result<Self, String> {
        let mut normalized = Vec::with_capacity(mounts.len());
        for (prefix, dir) in mounts {
            let segs: Vec<String> = prefix
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .map(str::to_string)
                .collect();
            if segs.iter().any(|s| s == ".." || !is_plain_name(s)) {
                return Err(format!("invalid mount prefix {prefix:?}"));
            }
            normalized.push((segs, dir.clone()));
        }
        normalized.sort_by_key(|(segs, _)| std::cmp::Reverse(segs.len()));
        Ok(Resolver {
            root,
            mounts: normalized,
        })
    }

    /// The file system path for checked segments.
    pub(crate) fn resolve(&self, segments: &[String]) -> PathBuf {
        let (base, rest) = self
            .mounts
            .iter()
            .find(|(prefix, _)| segments.starts_with(prefix))
            .map_or((&self.root, segments), |(prefix, dir)| {
                (dir, &segments[prefix.len()..])
            });
        let mut path = base.clone();
        for seg in rest {
            path.push(seg);
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(target: &str) -> Result<Vec<String>, PathError> {
        parse_target(target).map(|p| p.segments)
    }

    #[test]
    fn plain_paths() {
        assert_eq!(segs("/").unwrap(), Vec::<String>::new());
        assert_eq!(segs("/a/b.json").unwrap(), ["a", "b.json"]);
        assert_eq!(segs("/a/b/").unwrap(), ["a", "b"]);
        assert_eq!(segs("/a/./b").unwrap(), ["a", "b"]);
    }

    #[test]
    fn query_and_fragment_are_dropped() {
        let p = parse_target("/t/x.parquet?X-Amz-Signature=abc#frag").unwrap();
        assert_eq!(p.raw, "/t/x.parquet");
        assert_eq!(p.segments, ["t", "x.parquet"]);
        assert_eq!(segs("/t?a=/../../x").unwrap(), ["t"]);
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(segs("/a%20b/c%3Dd").unwrap(), ["a b", "c=d"]);
        assert_eq!(segs("/x=%C3%A9").unwrap(), ["x=é"]);
        // %2F acts as a separator after decoding.
        assert_eq!(segs("/a%2Fb").unwrap(), ["a", "b"]);
        assert_eq!(segs("/100%").unwrap_err(), PathError::BadEncoding);
        assert_eq!(segs("/%zz").unwrap_err(), PathError::BadEncoding);
        assert_eq!(segs("/%ff").unwrap_err(), PathError::BadEncoding);
        assert_eq!(segs("/a%00b").unwrap_err(), PathError::BadEncoding);
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
        ] {
            assert_eq!(segs(t).unwrap_err(), PathError::Traversal, "{t}");
        }
    }

    #[test]
    fn target_forms() {
        assert_eq!(segs("*").unwrap_err(), PathError::BadTarget);
        assert_eq!(segs("a/b").unwrap_err(), PathError::BadTarget);
        assert_eq!(segs("").unwrap_err(), PathError::BadTarget);
        assert_eq!(segs("http://127.0.0.1:1/a/b?q").unwrap(), ["a", "b"]);
        assert_eq!(segs("HTTP://host").unwrap(), Vec::<String>::new());
        // Multi-byte text where a scheme would be: no panic on a char boundary.
        assert_eq!(raw_path("héllo://x"), "héllo://x");
        assert_eq!(raw_path("ht"), "ht");
    }

    #[test]
    fn resolves_root_and_longest_mount() {
        let r = Resolver::new(
            PathBuf::from("/srv/www"),
            &[
                ("/tables".to_string(), PathBuf::from("/data/t")),
                ("tables/big/".to_string(), PathBuf::from("/data/big")),
            ],
        )
        .unwrap();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            r.resolve(&s(&["index.html"])),
            PathBuf::from("/srv/www/index.html")
        );
        assert_eq!(
            r.resolve(&s(&["tables", "a", "x.json"])),
            PathBuf::from("/data/t/a/x.json")
        );
        assert_eq!(
            r.resolve(&s(&["tables", "big", "x.json"])),
            PathBuf::from("/data/big/x.json")
        );
        // A prefix matches whole segments only.
        assert_eq!(
            r.resolve(&s(&["tablesX", "y"])),
            PathBuf::from("/srv/www/tablesX/y")
        );
        assert_eq!(r.resolve(&s(&["tables"])), PathBuf::from("/data/t"));
    }

    #[test]
    fn bad_mount_prefix() {
        assert!(Resolver::new(
            PathBuf::from("/"),
            &[("/a/../b".into(), PathBuf::from("/x"))]
        )
        .is_err());
    }
}
