//! [`VersionPins`]: the version of each object a remote store has answered for, so that
//! the reads of one file agree on which file they read (native only).
//!
//! A Parquet file is read in several requests (its footer, then its pages, maybe by several
//! partitions), and a deletion vector in another. Delta never rewrites a file under the same
//! name, but a store can still answer with another object (a table rewritten in place, a
//! copy replaced while it is read): a footer of one file decoded against the pages of
//! another gives wrong rows, or garbage. So the first answer for an object pins its size,
//! `ETag` and `Last-Modified`, and a later answer that differs is an `io` error naming the
//! file, not data.
//!
//! What counts as another object: another size, or another `ETag` unless both answers give
//! the same `Last-Modified`. Servers behind a load balancer can derive `ETag`s from each
//! node's own inode (the same file copied to every node, its time kept), so another `ETag`
//! with the same time is taken as the same object; a replaced object changes both. Another
//! time alone is the same object too (times can differ by node), and answers without an
//! `ETag` compare by size alone.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use object_store::ObjectMeta;

use crate::error::{DeltaError, Result};

/// The most objects pinned at once: past it the pins start again (a read that spans the
/// restart is not compared), so memory stays bounded on tables of many files.
const MAX_PINNED: usize = 16_384;

/// What an answer said of its object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    size: u64,
    e_tag: Option<String>,
    last_modified: i64,
}

impl Seen {
    fn of(meta: &ObjectMeta) -> Seen {
        Seen {
            size: meta.size,
            e_tag: meta.e_tag.clone(),
            last_modified: meta.last_modified.timestamp_millis(),
        }
    }

    /// Whether `later` describes another object than `self` (see the module documentation).
    fn replaced_by(&self, later: &Seen) -> bool {
        let tags_differ = matches!((&self.e_tag, &later.e_tag), (Some(a), Some(b)) if a != b);
        // A time object_store did not get reads as 0 (the epoch).
        let same_known_time = self.last_modified != 0 && self.last_modified == later.last_modified;
        self.size != later.size || (tags_differ && !same_known_time)
    }
}

/// The objects' first answers, by their path in the table.
#[derive(Debug, Default)]
pub(crate) struct VersionPins {
    seen: Mutex<HashMap<String, Seen>>,
}

impl VersionPins {
    /// Checks an answer for `path` against the first one: an `io` error when the object was
    /// replaced in between. Every pin is then dropped but the new one's, so the table read
    /// again pins what it reads afresh.
    pub(crate) fn check(&self, path: &str, meta: &ObjectMeta) -> Result<()> {
        let now = Seen::of(meta);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let before = match seen.get_mut(path) {
            Some(before) => before,
            None => {
                if seen.len() >= MAX_PINNED {
                    seen.clear();
                }
                seen.insert(path.to_string(), now);
                return Ok(());
            }
        };
        if !before.replaced_by(&now) {
            return Ok(());
        }
        let message = format!(
            "the file changed while it was read: it was {} and is now {}; read the table again",
            describe(before),
            describe(&now)
        );
        // Whatever else was pinned may have been replaced too (a table rewritten in place):
        // the read that follows this error pins afresh.
        seen.clear();
        seen.insert(path.to_string(), now);
        Err(DeltaError::Io {
            path: path.to_string(),
            message,
            phase: super::phase_for(path),
            transient: false,
        })
    }
}

/// `1234 bytes, ETag "x", last modified 2026-12-07T10:00:00Z`, for an error message.
fn describe(seen: &Seen) -> String {
    let mut text = format!("{} bytes", seen.size);
    if let Some(tag) = &seen.e_tag {
        text.push_str(&format!(", ETag {tag}"));
    }
    if seen.last_modified != 0 {
        if let Some(time) = chrono::DateTime::from_timestamp_millis(seen.last_modified) {
            text.push_str(&format!(", last modified {}", time.to_rfc3339()));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(size: u64, e_tag: Option<&str>, seconds: i64) -> ObjectMeta {
        ObjectMeta {
            location: object_store::path::Path::from("t/f.parquet"),
            last_modified: chrono::DateTime::from_timestamp(seconds, 0).unwrap_or_default(),
            size,
            e_tag: e_tag.map(str::to_string),
            version: None,
        }
    }

    #[test]
    fn a_replaced_object_is_an_error_and_then_pinned_anew() {
        let pins = VersionPins::default();
        let path = "part-0.parquet";
        assert!(pins.check(path, &meta(100, Some("\"a\""), 10)).is_ok());
        assert!(pins.check(path, &meta(100, Some("\"a\""), 10)).is_ok());
        let replaced = pins.check(path, &meta(100, Some("\"b\""), 20));
        match replaced {
            Err(DeltaError::Io {
                path: p, message, ..
            }) => {
                assert_eq!(p, path);
                assert!(message.contains("changed while it was read"), "{message}");
                assert!(
                    message.contains("\"a\"") && message.contains("\"b\""),
                    "{message}"
                );
            }
            other => panic!("expected an io error, got {other:?}"),
        }
        // The new object is pinned: the table read again goes on.
        assert!(pins.check(path, &meta(100, Some("\"b\""), 20)).is_ok());
        // Another size is another object, whatever the headers say.
        assert!(pins.check(path, &meta(101, Some("\"b\""), 20)).is_err());
        // Other paths are pinned on their own; a replaced object drops the other pins.
        assert!(pins.check("other.parquet", &meta(5, None, 0)).is_ok());
        assert!(pins.check(path, &meta(1, Some("\"c\""), 30)).is_err());
        assert!(pins.check("other.parquet", &meta(6, None, 0)).is_ok());
    }

    #[test]
    fn one_header_alone_differing_is_the_same_object() {
        let pins = VersionPins::default();
        assert!(pins.check("f", &meta(100, Some("\"node-1\""), 10)).is_ok());
        // ETags by node, the same times.
        assert!(pins.check("f", &meta(100, Some("\"node-2\""), 10)).is_ok());
        // The same ETag, times by node.
        assert!(pins.check("f", &meta(100, Some("\"node-1\""), 99)).is_ok());
        // Another ETag and no time to compare: another object.
        assert!(pins.check("h", &meta(100, Some("\"a\""), 0)).is_ok());
        assert!(pins.check("h", &meta(100, Some("\"b\""), 0)).is_err());
        // No headers at all: by size.
        assert!(pins.check("g", &meta(7, None, 0)).is_ok());
        assert!(pins.check("g", &meta(7, None, 0)).is_ok());
        assert!(pins.check("g", &meta(8, None, 0)).is_err());
    }

    #[test]
    fn pins_stay_bounded() {
        let pins = VersionPins::default();
        for i in 0..(MAX_PINNED + 10) {
            assert!(pins.check(&format!("f{i}"), &meta(1, None, 0)).is_ok());
        }
        let held = pins.seen.lock().map(|s| s.len()).unwrap_or(usize::MAX);
        assert!(held <= MAX_PINNED, "{held}");
    }
}
