//! Text a store or a server sent (an error body, a backend's message) made fit for an error
//! message: one line, bounded, and free of secrets. Pure.
//!
//! What is removed, whatever the store:
//! - query strings and user-info of URLs (see [`redact`]): signed URLs carry signatures;
//! - the contents of the XML elements S3-compatible services echo on a refused signature
//!   (`AWSAccessKeyId`, `StringToSign`, `SignatureProvided`, `CanonicalRequest`, ...);
//! - the values of credential-bearing keys, written `key=value`, `key: value` or as JSON
//!   (`X-Amz-Signature`, `Credential`, `sig`, `AccountKey`, `token`, ...), and a whole
//!   `Authorization` header's value;
//! - AWS access key ids (`AKIA…`, `ASIA…`) wherever they stand.
//!
//! Control characters become spaces (so a server cannot write to the terminal through an
//! error), and the text is cut to [`MAX_STORE_MESSAGE_CHARS`] characters.

use super::redact;

/// Longest store message kept in an error, in characters; the rest is counted, not copied.
pub const MAX_STORE_MESSAGE_CHARS: usize = 512;

/// Bytes of a store's text looked at at all: an error body of 50 MB is cut to this before
/// anything else is done with it.
const SCANNED_BYTES: usize = 64 << 10;

/// What stands in for a removed secret.
const REDACTED: &str = "[redacted]";

/// XML elements whose contents are secrets or reveal them (S3 `SignatureDoesNotMatch` and
/// `InvalidAccessKeyId` bodies).
const SECRET_ELEMENTS: [&str; 9] = [
    "AWSAccessKeyId",
    "StringToSign",
    "StringToSignBytes",
    "SignatureProvided",
    "CanonicalRequest",
    "CanonicalRequestBytes",
    "SecretAccessKey",
    "SessionToken",
    "Signature",
];

/// Keys whose values are secrets, compared without case. Longer keys come first so that
/// `x-amz-signature` is matched before `signature`.
const SECRET_KEYS: [&str; 18] = [
    "x-amz-security-token",
    "x-amz-credential",
    "x-amz-signature",
    "sharedaccesssignature",
    "aws_secret_access_key",
    "aws_session_token",
    "secret_access_key",
    "awsaccesskeyid",
    "client_secret",
    "access_token",
    "accountkey",
    "credential",
    "signature",
    "password",
    "secret",
    "token",
    "sig",
    "key",
];

/// `text` as an error message may hold it (see the module documentation).
pub fn store_message(text: &str) -> String {
    let total_chars = text.chars().count();
    let scanned = cut_at_char(text, SCANNED_BYTES);
    let mut out = redact(scanned);
    out = redact_elements(&out);
    out = redact_authorization(&out);
    out = redact_keys(&out);
    out = redact_access_key_ids(&out);
    let line = one_line(&out);
    let kept: String = line.chars().take(MAX_STORE_MESSAGE_CHARS).collect();
    let shown = kept.chars().count();
    let dropped = total_chars.saturating_sub(shown);
    if line.chars().count() > shown || scanned.len() < text.len() {
        format!("{kept}… ({dropped} more characters)")
    } else {
        kept
    }
}

/// `e`'s text followed by those of its causes it does not already hold: a store's "error
/// sending request" then says why (`… tcp connect error: Connection refused (os error 111)`).
#[cfg(not(target_arch = "wasm32"))]
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    // A cycle of causes is not possible in safe code, but a long chain is cut all the same.
    for _ in 0..16 {
        let Some(cause) = source else { break };
        let part = cause.to_string();
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `<Name>secret</Name>` as `<Name>[redacted]</Name>`; an element left open (a body cut
/// short) is redacted to the end.
fn redact_elements(text: &str) -> String {
    let mut out = text.to_string();
    for name in SECRET_ELEMENTS {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let mut from = 0;
        while let Some(at) = out[from..].find(&open) {
            let start = from + at + open.len();
            let end = out[start..].find(&close).map_or(out.len(), |e| start + e);
            out.replace_range(start..end, REDACTED);
            from = start + REDACTED.len();
        }
    }
    out
}

/// The value of an `Authorization` header (`Authorization: AWS4-HMAC-SHA256 Credential=…`)
/// up to the end of its line.
fn redact_authorization(text: &str) -> String {
    let mut out = text.to_string();
    let mut from = 0;
    loop {
        let lower = out.to_ascii_lowercase();
        let Some(at) = lower[from..].find("authorization") else {
            return out;
        };
        let after = from + at + "authorization".len();
        let rest = &out[after..];
        let value_at = rest
            .strip_prefix("\": \"")
            .or_else(|| rest.strip_prefix("\":\""))
            .or_else(|| rest.strip_prefix(": "))
            .or_else(|| rest.strip_prefix(':'))
            .or_else(|| rest.strip_prefix('='))
            .map(|value| out.len() - value.len());
        let Some(start) = value_at else {
            from = after;
            continue;
        };
        let end = out[start..]
            .find(['\n', '\r', '"', '<'])
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, REDACTED);
        from = start + REDACTED.len();
    }
}

/// `key=value`, `key: value` and `"key": "value"` of every [`SECRET_KEYS`] key, as
/// `key=[redacted]` (and so on). A key must stand on its own: `monkey=1` is not `key=1`.
fn redact_keys(text: &str) -> String {
    let mut out = text.to_string();
    for key in SECRET_KEYS {
        let mut from = 0;
        loop {
            let lower = out.to_ascii_lowercase();
            let Some(at) = lower[from..].find(key) else {
                break;
            };
            let key_start = from + at;
            let after = key_start + key.len();
            let standalone = out[..key_start]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_' && c != '-');
            let value_start = standalone.then(|| value_start(&out, after)).flatten();
            let Some(start) = value_start else {
                from = after;
                continue;
            };
            let end = out[start..]
                .find(|c: char| c.is_whitespace() || "&;,\"'<>)".contains(c))
                .map_or(out.len(), |e| start + e);
            if end > start && &out[start..end] != REDACTED {
                out.replace_range(start..end, REDACTED);
            }
            from = start + REDACTED.len().min(out.len() - start);
        }
    }
    out
}

/// Where the value after a key ending at `after` starts: after `=`, `:` (and spaces) or
/// `":"` with optional spaces and an opening quote; `None` when no separator follows.
fn value_start(text: &str, after: usize) -> Option<usize> {
    let rest = &text[after..];
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let rest = rest.trim_start_matches(' ');
    let rest = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':'))?;
    let rest = rest.trim_start_matches(' ');
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    Some(text.len() - rest.len())
}

/// Every AWS access key id (`AKIA` or `ASIA` and 16 upper-case letters or digits).
fn redact_access_key_ids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 20 <= bytes.len() {
        let prefix = &bytes[i..i + 4];
        let is_id = (prefix == b"AKIA" || prefix == b"ASIA")
            && bytes[i + 4..i + 20]
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if is_id {
            out.push_str(&text[copied..i]);
            out.push_str(REDACTED);
            i += 20;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Control characters as spaces, runs of white space as one.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_control() || c.is_whitespace() {
            if !space && !out.is_empty() {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a message and an optional cause.
    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn causes_follow_the_message_once() {
        let refused = Chain("Connection refused (os error 111)", None);
        let connect = Chain("tcp connect error", Some(Box::new(refused)));
        // A cause the message already quotes is not repeated.
        let request = Chain(
            "error sending request: tcp connect error",
            Some(Box::new(connect)),
        );
        assert_eq!(
            with_causes(&request),
            "error sending request: tcp connect error: Connection refused (os error 111)"
        );
        assert_eq!(with_causes(&Chain("alone", None)), "alone");
    }

    const S3_BODY: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message><AWSAccessKeyId>AKIAIOSFODNN7EXAMPLE</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256\n20260101T000000Z\n20260101/us-east-1/s3/aws4_request\n5f1e</StringToSign><SignatureProvided>fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024</SignatureProvided><StringToSignBytes>41 57 53 34</StringToSignBytes><CanonicalRequest>GET\n/bucket/key\nX-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101</CanonicalRequest><RequestId>4442587FB7D0A2F9</RequestId></Error>";

    #[test]
    fn an_s3_signature_error_keeps_its_code_and_loses_its_secrets() {
        let m = store_message(S3_BODY);
        for secret in [
            "AKIAIOSFODNN7EXAMPLE",
            "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
            "aws4_request",
            "41 57 53 34",
            "/bucket/key",
        ] {
            assert!(!m.contains(secret), "{secret} in {m}");
        }
        assert!(m.contains("<Code>SignatureDoesNotMatch</Code>"), "{m}");
        assert!(m.contains("4442587FB7D0A2F9"), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }

    #[test]
    fn keys_headers_and_urls_are_redacted() {
        let cases = [
            ("GET https://h/b/k?X-Amz-Signature=abc123 failed", "abc123"),
            ("x-amz-security-token: FQoGZXIvYXdzEJr", "FQoGZXIvYXdzEJr"),
            (
                "Authorization: AWS4-HMAC-SHA256 Credential=AKID/2026, Signature=beef",
                "beef",
            ),
            ("{\"client_secret\": \"hunter2\", \"ok\": 1}", "hunter2"),
            (
                "AccountKey=c2VjcmV0Cg==;EndpointSuffix=core",
                "c2VjcmV0Cg==",
            ),
            ("se=2026&sig=Zm9vYmFy&sp=r", "Zm9vYmFy"),
            ("key ASIAABCDEFGHIJKLMNOP in use", "ASIAABCDEFGHIJKLMNOP"),
            ("password = swordfish", "swordfish"),
        ];
        for (text, secret) in cases {
            let m = store_message(text);
            assert!(!m.contains(secret), "{text:?} gave {m:?}");
            // A URL loses its whole query string instead.
            assert!(
                m.contains(REDACTED) || text.contains("://"),
                "{text:?} gave {m:?}"
            );
        }
        // Words that only contain a key are kept.
        assert_eq!(
            store_message("monkey=1 keyboard: 2"),
            "monkey=1 keyboard: 2"
        );
        assert_eq!(
            store_message("503 Service Unavailable"),
            "503 Service Unavailable"
        );
    }

    #[test]
    fn a_huge_body_is_cut_and_control_characters_go() {
        let body = format!("\u{1b}]0;owned\u{7}\u{1b}[31mred{}", "x".repeat(50 << 20));
        let m = store_message(&body);
        assert!(
            m.chars().count() < MAX_STORE_MESSAGE_CHARS + 40,
            "{}",
            m.len()
        );
        assert!(m.ends_with("more characters)"), "{m}");
        assert!(!m.chars().any(char::is_control), "{m:?}");
        // An element cut open by the scan limit is redacted to the end.
        let open = format!("<SignatureProvided>{}", "f".repeat(SCANNED_BYTES * 2));
        assert!(!store_message(&open).contains("fff"));
        // Multi-byte text is cut on a character boundary.
        let wide = "é".repeat(SCANNED_BYTES);
        assert!(store_message(&wide).starts_with('é'));
    }
}
