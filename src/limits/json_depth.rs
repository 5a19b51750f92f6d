//! The nesting depth of JSON text, found in one pass without parsing it: what turns
//! `serde_json`'s "recursion limit exceeded" into a typed [`LimitExceeded`] error.
//!
//! [`LimitExceeded`]: crate::DeltaError::LimitExceeded

use super::MAX_JSON_DEPTH;
use crate::error::{DeltaError, Phase};

/// The first depth past `max` that `json` reaches (brackets inside strings do not count), or
/// `None` when it stays within `max`. Malformed text is measured as far as it goes.
pub(crate) fn depth_past(json: &[u8], max: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The [`DeltaError::LimitExceeded`] for `json` when it nests deeper than [`MAX_JSON_DEPTH`]
/// (call it when `serde_json` refused the text, to tell depth from other errors).
pub(crate) fn too_deep(json: &[u8], what: &'static str, path: Option<&str>) -> Option<DeltaError> {
    let found = depth_past(json, MAX_JSON_DEPTH)?;
    Some(DeltaError::limit_exceeded(
        what,
        found as u64,
        MAX_JSON_DEPTH as u64,
        path,
        Phase::Load,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_brackets_outside_strings() {
        assert_eq!(depth_past(br#"{"a": [1, {"b": "[[[["}]}"#, 3), None);
        assert_eq!(depth_past(br#"{"a": [1, {"b": 2}]}"#, 2), Some(3));
        assert_eq!(depth_past(br#"{"a": "\"[[", "b": [[]]}"#, 2), Some(3));
        assert_eq!(depth_past(br#"[][][]"#, 1), None);
    }

    #[test]
    fn agrees_with_serde_json() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let at = nest(MAX_JSON_DEPTH);
        assert!(serde_json::from_str::<serde_json::Value>(&at).is_ok());
        assert_eq!(depth_past(at.as_bytes(), MAX_JSON_DEPTH), None);
        let past = nest(MAX_JSON_DEPTH + 1);
        assert!(serde_json::from_str::<serde_json::Value>(&past).is_err());
        let e = too_deep(past.as_bytes(), "JSON nesting depth", Some("x.json"));
        assert_eq!(e.map(|e| e.code()), Some("limit_exceeded"));
    }
}
