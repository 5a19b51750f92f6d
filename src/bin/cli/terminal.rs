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

#[cfg(test)]
mod tests {
    use super::*;

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
