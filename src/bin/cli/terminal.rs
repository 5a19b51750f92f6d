//! Text for the terminal: every string from a table, a log or a server is printed with its
//! control characters escaped, so a partition value, a path or an error body cannot move the
//! cursor, retitle the window, or hide text (ANSI and OSC sequences, bidi overrides).
//!
//! Human formats (grids, `info`, errors) are always escaped; data formats (CSV and JSON lines
//! of `dar sql`) only when standard output is a terminal, so a file or a pipe gets the data
//! as it is.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use delta_arrow_reader::DeltaError;

/// Whether `c` is shown escaped: C0 and C1 controls and DEL (other than newline and tab when
/// `keep_lines`), and the bidirectional overrides and isolates.
fn escaped(c: char, keep_lines: bool) -> bool {
    (c.is_control() && !(keep_lines && (c == '\n' || c == '\t')))
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with the characters [`escaped`] written as `\n`, `\t`, `\r` or `\u{..}`.
pub fn safe(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| escaped(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c, keep_lines) {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                _ => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Writes `text` to standard output; `false` when the reader closed the pipe early (`dar
/// files | head`, a streamed `dar sql --csv | head`): it has all it wanted, so the command
/// ends quietly (without computing the rest), as a pipe's writer ends on SIGPIPE. Any other
/// failure (a full disk, a revoked terminal) is an error: output the user asked for was
/// lost.
fn write_stdout(text: &str) -> Result<bool, DeltaError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(super::output::io_error(
            std::path::Path::new("standard output"),
            e,
        )),
    }
}

/// Writes a piece of a streamed result (JSON lines, CSV): as it is into a file or a pipe,
/// escaped on a terminal; `false` when the reader has closed the pipe.
pub fn print_data_piece(text: &str) -> Result<bool, DeltaError> {
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        write_stdout(&safe(text, true))
    } else {
        write_stdout(text)
    }
}

/// Writes one line to standard error. A message nobody can read any more (stderr closed,
/// `2>&1 | head`) is dropped: the command's outcome is its exit status, never a panic.
pub fn message(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Prints human-readable text (lines kept, everything else escaped).
pub fn print_text(text: &str) -> Result<(), DeltaError> {
    write_stdout(&safe(text, true)).map(|_| ())
}

/// A writer for a terminal: what it is given goes on with [`safe`]'s escapes (lines kept), so
/// an export to the screen cannot move the cursor, set the title or clear it. Bytes that are
/// not UTF-8 are written as `\x..`; a character cut between two writes waits for its end.
pub struct TerminalSafe<W: Write> {
    inner: W,
    /// The start of a character whose other bytes have not come yet (at most 3 bytes).
    pending: Vec<u8>,
}

impl<W: Write> TerminalSafe<W> {
    /// Escapes what is written before it reaches `inner`.
    pub fn new(inner: W) -> Self {
        TerminalSafe {
            inner,
            pending: Vec::new(),
        }
    }

    /// Escapes and writes the complete characters of `bytes`; keeps an incomplete last one.
    fn pass(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            match std::str::from_utf8(bytes) {
                Ok(text) => return self.inner.write_all(safe(text, true).as_bytes()),
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    let text = std::str::from_utf8(valid).unwrap_or_default();
                    self.inner.write_all(safe(text, true).as_bytes())?;
                    let Some(bad) = e.error_len() else {
                        // A character cut at the end: wait for the rest.
                        self.pending.extend_from_slice(rest);
                        return Ok(());
                    };
                    let (bad, after) = rest.split_at(bad.min(rest.len()));
                    for b in bad {
                        write!(self.inner, "\\x{b:02x}")?;
                    }
                    bytes = after;
                }
            }
        }
        Ok(())
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            self.pass(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(buf);
            self.pass(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for TerminalSafe<W> {
    /// A character never completed is shown as its bytes.
    fn drop(&mut self) {
        for b in std::mem::take(&mut self.pending) {
            let _ = write!(self.inner, "\\x{b:02x}");
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_writer_escapes_across_writes() {
        let mut out = Vec::new();
        {
            let mut w = TerminalSafe::new(&mut out);
            let text = "a,\u{1b}[2J\nü\u{9b}x\n".as_bytes();
            // Byte by byte: every character is cut between writes.
            for b in text {
                let _ = w.write_all(std::slice::from_ref(b));
            }
            let _ = w.write_all(&[0xff, b'z', 0xc3]);
        }
        assert_eq!(
            String::from_utf8_lossy(&out),
            "a,\\u{1b}[2J\nü\\u{9b}x\n\\xffz\\xc3"
        );
    }

    #[test]
    fn controls_and_overrides_are_escaped() {
        assert!(matches!(
            safe("plain text, ünïcode", true),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            safe("a\u{1b}]0;pwned\u{7}b", true),
            "a\\u{1b}]0;pwned\\u{7}b"
        );
        assert_eq!(safe("x\u{1b}[2Jy", false), "x\\u{1b}[2Jy");
        assert_eq!(safe("l1\nl2\tx\r", true), "l1\nl2\tx\\r");
        assert_eq!(safe("l1\nl2\tx", false), "l1\\nl2\\tx");
        assert_eq!(safe("\u{9b}31m\u{7f}", true), "\\u{9b}31m\\u{7f}");
        assert_eq!(safe("abc\u{202e}fed", true), "abc\\u{202e}fed");
    }
}
