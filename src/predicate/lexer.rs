//! The tokens of the text filter syntax, with the character position of each.
//!
//! Names are letters, digits and `_` (not starting with a digit), or any text in backticks
//! (a backtick inside is doubled). Strings are in single quotes (a quote inside is doubled).
//! Numbers are `12`, `1.5`, `.5`, `1e-3`. Keywords are names, matched ignoring case by the
//! parser. Positions count characters (not bytes) from 1.

use crate::error::{DeltaError, Result};

use super::expr::CompareOp;

/// Words with a meaning in the syntax; a column of one of these names must be quoted.
const KEYWORDS: [&str; 9] = [
    "and", "or", "not", "is", "null", "in", "between", "true", "false",
];

/// Whether `word` is a keyword (ignoring case).
pub(crate) fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// A name; `quoted` when written in backticks (then never a keyword).
    Ident {
        name: String,
        quoted: bool,
    },
    /// A number, as written.
    Number(String),
    /// A string literal, with doubled quotes already undone.
    String(String),
    /// A comparison operator.
    Op(CompareOp),
    LParen,
    RParen,
    Comma,
    Dot,
    Minus,
    Plus,
    /// The end of the text.
    End,
}

/// A token and the position of its first character (1-based).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub pos: usize,
}

impl Token {
    /// Whether this is the unquoted keyword `word`.
    pub(crate) fn is_keyword(&self, word: &str) -> bool {
        matches!(&self.kind, TokenKind::Ident { name, quoted: false } if name.eq_ignore_ascii_case(word))
    }

    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            TokenKind::Ident { name, quoted: true } => format!("`{name}`"),
            TokenKind::Ident { name, .. } => format!("'{name}'"),
            TokenKind::Number(n) => format!("number {n}"),
            TokenKind::String(s) => format!("string '{s}'"),
            TokenKind::Op(op) => format!("'{op}'"),
            TokenKind::LParen => "'('".into(),
            TokenKind::RParen => "')'".into(),
            TokenKind::Comma => "','".into(),
            TokenKind::Dot => "'.'".into(),
            TokenKind::Minus => "'-'".into(),
            TokenKind::Plus => "'+'".into(),
            TokenKind::End => "end of input".into(),
        }
    }
}

/// A syntax error at character `pos`.
pub(crate) fn syntax_error(pos: usize, message: impl std::fmt::Display) -> DeltaError {
    DeltaError::InvalidArgument {
        reason: format!("filter syntax error at character {pos}: {message}"),
    }
}

/// Splits `text` into tokens, ending with [`TokenKind::End`].
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let pos = i + 1;
        let next = chars.get(i + 1).copied();
        let single = |kind: TokenKind| Token { kind, pos };
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (kind, len) = match c {
            '(' => (TokenKind::LParen, 1),
            ')' => (TokenKind::RParen, 1),
            ',' => (TokenKind::Comma, 1),
            '+' => (TokenKind::Plus, 1),
            '-' => (TokenKind::Minus, 1),
            '=' if next == Some('=') => (TokenKind::Op(CompareOp::Eq), 2),
            '=' => (TokenKind::Op(CompareOp::Eq), 1),
            '!' if next == Some('=') => (TokenKind::Op(CompareOp::NotEq), 2),
            '<' if next == Some('>') => (TokenKind::Op(CompareOp::NotEq), 2),
            '<' if next == Some('=') => (TokenKind::Op(CompareOp::LtEq), 2),
            '<' => (TokenKind::Op(CompareOp::Lt), 1),
            '>' if next == Some('=') => (TokenKind::Op(CompareOp::GtEq), 2),
            '>' => (TokenKind::Op(CompareOp::Gt), 1),
            '\'' => {
                let (value, len) = quoted(&chars, i, '\'').ok_or_else(|| {
                    syntax_error(pos, "string literal is not closed (expected ')")
                })?;
                (TokenKind::String(value), len)
            }
            '`' => {
                let (name, len) = quoted(&chars, i, '`')
                    .ok_or_else(|| syntax_error(pos, "quoted name is not closed (expected `)"))?;
                if name.is_empty() {
                    return Err(syntax_error(pos, "empty quoted name ``"));
                }
                (TokenKind::Ident { name, quoted: true }, len)
            }
            '"' => {
                return Err(syntax_error(
                    pos,
                    "unexpected '\"': write strings in 'single quotes' and names with \
                     spaces or dots in `backticks`",
                ))
            }
            '.' if next.is_some_and(|n| n.is_ascii_digit()) && !after_name(&tokens) => {
                number(&chars, i)
            }
            '.' => (TokenKind::Dot, 1),
            c if c.is_ascii_digit() => number(&chars, i),
            c if c.is_alphabetic() || c == '_' => {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_')
                    .count();
                let name: String = chars[i..i + len].iter().collect();
                (
                    TokenKind::Ident {
                        name,
                        quoted: false,
                    },
                    len,
                )
            }
            other => {
                return Err(syntax_error(pos, format!("unexpected character '{other}'")));
            }
        };
        tokens.push(single(kind));
        i += len;
    }
    tokens.push(Token {
        kind: TokenKind::End,
        pos: chars.len() + 1,
    });
    Ok(tokens)
}

/// Whether the last token is a name (then a `.` is a path separator).
fn after_name(tokens: &[Token]) -> bool {
    matches!(
        tokens.last().map(|t| &t.kind),
        Some(TokenKind::Ident { .. })
    )
}

/// The text between the quote at `start` and its closing quote, with doubled quotes undone,
/// and the length in characters including both quotes.
fn quoted(chars: &[char], start: usize, quote: char) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut i = start + 1;
    loop {
        let c = *chars.get(i)?;
        if c == quote {
            if chars.get(i + 1) == Some(&quote) {
                value.push(quote);
                i += 2;
                continue;
            }
            return Some((value, i + 1 - start));
        }
        value.push(c);
        i += 1;
    }
}

/// A number starting at `start`: digits, an optional fraction and an optional exponent.
fn number(chars: &[char], start: usize) -> (TokenKind, usize) {
    let digits_from = |i: usize| {
        chars
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut end = start + digits_from(start);
    if chars.get(end) == Some(&'.') {
        end += 1 + digits_from(end + 1);
    }
    if matches!(chars.get(end), Some('e' | 'E')) {
        let mut exp = end + 1;
        if matches!(chars.get(exp), Some('+' | '-')) {
            exp += 1;
        }
        let exp_digits = digits_from(exp);
        if exp_digits > 0 {
            end = exp + exp_digits;
        }
    }
    let text: String = chars[start..end].iter().collect();
    (TokenKind::Number(text), end - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Result<Vec<TokenKind>> {
        Ok(tokenize(text)?.into_iter().map(|t| t.kind).collect())
    }

    fn ident(name: &str, quoted: bool) -> TokenKind {
        TokenKind::Ident {
            name: name.into(),
            quoted,
        }
    }

    #[test]
    fn tokens() -> Result<()> {
        assert_eq!(
            kinds("a.b <> 'it''s' and `x``y`>=1.5e-3")?,
            vec![
                ident("a", false),
                TokenKind::Dot,
                ident("b", false),
                TokenKind::Op(CompareOp::NotEq),
                TokenKind::String("it's".into()),
                ident("and", false),
                ident("x`y", true),
                TokenKind::Op(CompareOp::GtEq),
                TokenKind::Number("1.5e-3".into()),
                TokenKind::End,
            ]
        );
        assert_eq!(
            kinds("(.5,-2)")?,
            vec![
                TokenKind::LParen,
                TokenKind::Number(".5".into()),
                TokenKind::Comma,
                TokenKind::Minus,
                TokenKind::Number("2".into()),
                TokenKind::RParen,
                TokenKind::End,
            ]
        );
        let tokens = tokenize("été = 1")?;
        assert_eq!(tokens[1].pos, 5);
        assert_eq!(tokens[3].pos, 8);
        Ok(())
    }

    #[test]
    fn errors_name_position() {
        let msg = |t: &str| tokenize(t).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg("a = 'abc").contains("character 5"),
            "{}",
            msg("a = 'abc")
        );
        assert!(msg("a = 'abc").contains("not closed"));
        assert!(msg("a ! b").contains("character 3: unexpected character '!'"));
        assert!(msg("a = \"x\"").contains("single quotes"));
        assert!(msg("`a").contains("not closed"));
    }
}
