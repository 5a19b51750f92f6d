//! HTTP/1.1 message framing: parsing a request head from bytes, writing a response head.
//!
//! Sans-io: [`parse_head`] looks at a buffer and says "need more", "here is a request and
//! how many bytes it took", or "this is malformed" (with the status to answer). Bare `LF`
//! line ends are accepted; obsolete line folding, whitespace before a header's colon and
//! non-token methods are refused.

use std::fmt::Write as _;

/// Largest request head accepted (request line plus headers).
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// Longest request line accepted (414 past it).
const MAX_REQUEST_LINE: usize = 8 * 1024;
/// Most headers accepted in one request.
const MAX_HEADERS: usize = 100;

/// HTTP version of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    Http10,
    Http11,
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    pub method: String,
    pub target: String,
    pub version: Version,
    /// Header names lower-cased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first header named `name` (lower-case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// All values of header `name`, in order.
    fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True if the `Connection` header lists `token`.
    fn connection_has(&self, token: &str) -> bool {
        self.headers_named("connection")
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// Whether the connection may stay open after this request's response.
    pub(crate) fn keep_alive(&self) -> bool {
        match self.version {
            Version::Http11 => !self.connection_has("close"),
            Version::Http10 => self.connection_has("keep-alive"),
        }
    }

    /// The request body's framing: its length, or an error status if it cannot be framed.
    pub(crate) fn body_length(&self) -> Result<u64, HeadError> {
        if self.header("transfer-encoding").is_some() {
            return Err(HeadError::new(
                501,
                "request bodies with Transfer-Encoding are not supported",
            ));
        }
        let mut length = None;
        for value in self.headers_named("content-length") {
            for part in value.split(',') {
                let part = part.trim();
                let n: u64 = if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                    part.parse()
                        .map_err(|_| HeadError::new(400, "bad Content-Length"))?
                } else {
                    return Err(HeadError::new(400, "bad Content-Length"));
                };
                if length.is_some_and(|l| l != n) {
                    return Err(HeadError::new(400, "conflicting Content-Length"));
                }
                length = Some(n);
            }
        }
        Ok(length.unwrap_or(0))
    }
}

/// A malformed request: the status to answer with, and a short reason for the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadError {
    pub status: u16,
    pub reason: &'static str,
}

impl HeadError {
    pub(crate) fn new(status: u16, reason: &'static str) -> Self {
        HeadError { status, reason }
    }
}

/// Parses one request head from the start of `buf`.
///
/// `Ok(None)`: incomplete, read more (unless `buf` is already [`MAX_HEAD`] long, which is an
/// error reported here). `Ok(Some((request, n)))`: the head took `n` bytes. Empty lines
/// before the request line are skipped (RFC 9112 §2.2).
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(Request, usize)>, HeadError> {
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let line_len = buf[start..]
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(buf.len() - start);
    if line_len > MAX_REQUEST_LINE {
        return Err(HeadError::new(414, "request line too long"));
    }
    let Some(end) = find_head_end(&buf[start..]) else {
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::new(431, "request head too large"));
        }
        return Ok(None);
    };
    if start + end > MAX_HEAD {
        return Err(HeadError::new(431, "request head too large"));
    }
    let head = &buf[start..start + end];
    let mut lines = head.split(|&b| b == b'\n').map(|l| match l {
        [rest @ .., b'\r'] => rest,
        l => l,
    });
    let request_line = lines.next().unwrap_or_default();
    let (method, target, version) = parse_request_line(request_line)?;
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Err(HeadError::new(431, "too many headers"));
        }
        headers.push(parse_header(line)?);
    }
    let request = Request {
        method,
        target,
        version,
        headers,
    };
    Ok(Some((request, start + end)))
}

/// Finds the end of a head (just past the empty line), accepting `\r\n` or bare `\n`.
fn find_head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(off) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + off;
        let next = nl + 1;
        match buf.get(next..) {
            Some([b'\n', ..]) => return Some(next + 1),
            Some([b'\r', b'\n', ..]) => return Some(next + 2),
            _ => i = next,
        }
    }
    None
}

fn parse_request_line(line: &[u8]) -> Result<(String, String, Version), HeadError> {
    let bad = || HeadError::new(400, "malformed request line");
    let line = std::str::from_utf8(line).map_err(|_| bad())?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(bad());
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad());
    }
    let version = match version {
        "HTTP/1.1" => Version::Http11,
        "HTTP/1.0" => Version::Http10,
        v if v.starts_with("HTTP/") => {
            return Err(HeadError::new(505, "HTTP version not supported"))
        }
        _ => return Err(bad()),
    };
    Ok((method.to_string(), target.to_string(), version))
}

fn parse_header(line: &[u8]) -> Result<(String, String), HeadError> {
    let bad = || HeadError::new(400, "malformed header");
    if matches!(line.first(), Some(b' ' | b'\t')) {
        // Obsolete line folding (RFC 9112 §5.2).
        return Err(bad());
    }
    let colon = line.iter().position(|&b| b == b':').ok_or_else(bad)?;
    let name = &line[..colon];
    if name.is_empty() || !name.iter().copied().all(is_token_byte) {
        return Err(bad());
    }
    let value = &line[colon + 1..];
    if value.iter().any(|&b| b == b'\r' || b == 0) {
        return Err(bad());
    }
    // Header names are ASCII tokens; values may carry any octets, kept losslessly where
    // they are UTF-8.
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    let value = String::from_utf8_lossy(value).trim().to_string();
    Ok((name, value))
}

/// `tchar` from RFC 9110 §5.6.2.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The reason phrase for a status code this server sends.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        206 => "Partial Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// A response head under construction.
#[derive(Debug, Clone)]
pub(crate) struct ResponseHead {
    pub status: u16,
    headers: Vec<(&'static str, String)>,
}

impl ResponseHead {
    pub(crate) fn new(status: u16) -> Self {
        ResponseHead {
            status,
            headers: Vec::with_capacity(16),
        }
    }

    /// Adds a header. Values come from this server, never raw from a request, except
    /// ones already parsed as header values (which hold no CR or LF).
    pub(crate) fn header(&mut self, name: &'static str, value: impl Into<String>) -> &mut Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The value of a header already set.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Serializes the status line and headers, ending with the empty line.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut s = String::with_capacity(64 + self.headers.len() * 48);
        let _ = write!(s, "HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            let _ = write!(s, "{name}: {value}\r\n");
        }
        s.push_str("\r\n");
        s.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<(Request, usize)>, HeadError> {
        parse_head(s.as_bytes())
    }

    #[test]
    fn simple_get() {
        let raw = "GET /a/b.json?x=1 HTTP/1.1\r\nHost: h\r\nRange: bytes=0-9\r\n\r\nNEXT";
        let (req, n) = parse(raw).unwrap().unwrap();
        assert_eq!(n, raw.len() - 4);
        assert_eq!(req.method, "GET");
        assert_eq!(req.target, "/a/b.json?x=1");
        assert_eq!(req.version, Version::Http11);
        assert_eq!(req.header("host"), Some("h"));
        assert_eq!(req.header("range"), Some("bytes=0-9"));
        assert!(req.keep_alive());
        assert_eq!(req.body_length(), Ok(0));
    }

    #[test]
    fn incomplete_needs_more() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: h\r\n").unwrap(), None);
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: h\r\n\r").unwrap(), None);
    }

    #[test]
    fn bare_lf_and_leading_empty_lines() {
        let raw = "\r\n\nHEAD /x HTTP/1.0\nConnection: Keep-Alive\n\n";
        let (req, n) = parse(raw).unwrap().unwrap();
        assert_eq!(n, raw.len());
        assert_eq!(req.method, "HEAD");
        assert_eq!(req.version, Version::Http10);
        assert!(req.keep_alive());
    }

    #[test]
    fn connection_tokens() {
        let (req, _) = parse("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!req.keep_alive());
        let (req, _) = parse("GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!req.keep_alive());
    }

    #[test]
    fn malformed_heads() {
        for raw in [
            "GET /\r\n\r\n",
            "GET  / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1 x\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n",
            "GET / FOO/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nNo-Colon\r\n\r\n",
            "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET / HTTP/1.1\r\nName : x\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\n: empty\r\n\r\n",
            "GET /\x01 HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
        ] {
            assert_eq!(parse(raw).unwrap_err().status, 400, "{raw:?}");
        }
        assert_eq!(parse("GET / HTTP/2.0\r\n\r\n").unwrap_err().status, 505);
    }

    #[test]
    fn non_utf8_request_line_is_refused() {
        let mut raw = b"GET /\xff HTTP/1.1\r\n\r\n".to_vec();
        assert_eq!(parse_head(&raw).unwrap_err().status, 400);
        raw.clear();
    }

    #[test]
    fn size_limits() {
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_REQUEST_LINE));
        assert_eq!(parse(&long).unwrap_err().status, 414);
        let line_only = format!("GET /{}", "a".repeat(MAX_REQUEST_LINE));
        assert_eq!(parse(&line_only).unwrap_err().status, 414);
        let big_header = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(parse(&big_header).unwrap_err().status, 431);
        let ok_line = format!(
            "GET /{} HTTP/1.1\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE - 20)
        );
        assert!(parse(&ok_line).unwrap().is_some());
        let mut many = String::from("GET / HTTP/1.1\r\n");
        for i in 0..=MAX_HEADERS {
            many.push_str(&format!("X-{i}: v\r\n"));
        }
        many.push_str("\r\n");
        assert_eq!(parse(&many).unwrap_err().status, 431);
    }

    #[test]
    fn body_framing() {
        let req = |h: &str| {
            parse(&format!("POST / HTTP/1.1\r\n{h}\r\n\r\n"))
                .unwrap()
                .unwrap()
                .0
        };
        assert_eq!(req("Content-Length: 5").body_length(), Ok(5));
        assert_eq!(req("Content-Length: 5, 5").body_length(), Ok(5));
        assert_eq!(
            req("Content-Length: 5, 6")
                .body_length()
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            req("Content-Length: -1").body_length().unwrap_err().status,
            400
        );
        assert_eq!(
            req("Transfer-Encoding: chunked")
                .body_length()
                .unwrap_err()
                .status,
            501
        );
    }

    #[test]
    fn response_head_bytes() {
        let mut head = ResponseHead::new(206);
        head.header("Content-Length", "3")
            .header("Content-Range", "bytes 0-2/10");
        assert_eq!(head.get("content-length"), Some("3"));
        assert_eq!(
            String::from_utf8(head.to_bytes()).unwrap(),
            "HTTP/1.1 206 Partial Content\r\nContent-Length: 3\r\nContent-Range: bytes 0-2/10\r\n\r\n"
        );
    }
}
