//! The text filter syntax, parsed into an [`Expr`]: what the CLI (`--filter`) and the
//! JavaScript API accept.
//!
//! ```text
//! filter    := or
//! or        := and ("or" and)*
//! and       := not ("and" not)*
//! not       := "not" not | predicate
//! predicate := operand [ op operand
//!                      | "is" ["not"] "null"
//!                      | ["not"] "in" "(" value ("," value)* ")"
//!                      | ["not"] "between" operand "and" operand ]
//! operand   := "(" filter ")" | column | value
//! column    := name ("." name)*            name: a_b1 or `any text`
//! value     := ["-"|"+"] number | 'string' | true | false | null
//!            | date 'yyyy-MM-dd' | timestamp '...' | timestamp_ntz '...' | X'hex'
//!            | double 'NaN' | float 'Infinity'
//! op        := = | == | != | <> | < | <= | > | >=
//! ```
//!
//! Keywords ignore case. A number with an exponent (`1e3`) is a `double`, one with a point
//! (`10.5`) an exact decimal, others a `long` (or a decimal when too large). Errors name the
//! character position and what was expected there. Parentheses and `not`s nest at most
//! [`MAX_FILTER_DEPTH`] deep (deeper fails with [`DeltaError::LimitExceeded`]).

use super::expr::Expr;
use super::lexer::{syntax_error, tokenize, Token, TokenKind};
use super::literal_text::{parse_date, parse_timestamp};
use super::scalar::Scalar;
use crate::error::{DeltaError, Phase, Result};
use crate::limits::MAX_FILTER_DEPTH;
use crate::schema::types::MAX_DECIMAL_PRECISION;
use crate::schema::PrimitiveType;

/// Parses a filter in the text syntax.
///
/// ```
/// use delta_arrow_reader::predicate::parse_filter;
/// let e = parse_filter("country = 'NL' and amount >= 10.5")?;
/// assert_eq!(e.to_string(), "country = 'NL' and amount >= 10.5");
/// # Ok::<(), delta_arrow_reader::DeltaError>(())
/// ```
pub fn parse_filter(text: &str) -> Result<Expr> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        at: 0,
        depth: 0,
    };
    if matches!(parser.peek().kind, TokenKind::End) {
        return Err(syntax_error(
            1,
            "expected a filter expression, found end of input",
        ));
    }
    let expr = parser.or()?;
    let next = parser.peek();
    if !matches!(next.kind, TokenKind::End) {
        let hint = match next.kind {
            TokenKind::RParen => "(unbalanced parenthesis)",
            _ => "",
        };
        return Err(syntax_error(
            next.pos,
            format!(
                "expected 'and', 'or' or end of input, found {} {hint}",
                next.describe()
            )
            .trim_end(),
        ));
    }
    Ok(expr)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// Parentheses and `not`s open around the token being parsed.
    depth: usize,
}

/// The token returned past the end (never reached: the list ends with `End`).
const END: Token = Token {
    kind: TokenKind::End,
    pos: 0,
};

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens.get(self.at).unwrap_or(&END)
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        self.tokens.get(self.at + ahead).unwrap_or(&END)
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if self.at < self.tokens.len() {
            self.at += 1;
        }
        token
    }

    /// Consumes the keyword `word` if it comes next.
    fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.peek().is_keyword(word);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, what: &str, matches: impl Fn(&TokenKind) -> bool) -> Result<Token> {
        let token = self.advance();
        if matches(&token.kind) {
            Ok(token)
        } else {
            Err(syntax_error(
                token.pos,
                format!("expected {what}, found {}", token.describe()),
            ))
        }
    }

    /// Parses `inner` one level deeper, refusing to go past [`MAX_FILTER_DEPTH`] (the parser
    /// recurses per level, so a bound keeps its stack small).
    fn nested(&mut self, inner: impl FnOnce(&mut Self) -> Result<Expr>) -> Result<Expr> {
        if self.depth >= MAX_FILTER_DEPTH {
            return Err(DeltaError::limit_exceeded(
                "filter nesting depth (parentheses and 'not's)",
                self.depth as u64 + 1,
                MAX_FILTER_DEPTH as u64,
                None,
                Phase::Plan,
            ));
        }
        self.depth += 1;
        let out = inner(self);
        self.depth -= 1;
        out
    }

    fn or(&mut self) -> Result<Expr> {
        let first = self.and()?;
        if !self.peek().is_keyword("or") {
            return Ok(first);
        }
        let mut list = vec![first];
        while self.eat_keyword("or") {
            list.push(self.and()?);
        }
        Ok(Expr::Or(list))
    }

    fn and(&mut self) -> Result<Expr> {
        let first = self.not()?;
        if !self.peek().is_keyword("and") {
            return Ok(first);
        }
        let mut list = Vec::new();
        let mut push = |e: Expr| match e {
            // A `between` (itself an `and`) joins the flat list.
            Expr::And(more) => list.extend(more),
            other => list.push(other),
        };
        push(first);
        while self.eat_keyword("and") {
            push(self.not()?);
        }
        Ok(Expr::And(list))
    }

    fn not(&mut self) -> Result<Expr> {
        if self.eat_keyword("not") {
            return Ok(!self.nested(Self::not)?);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Expr> {
        let left = self.operand()?;
        let next = self.peek().clone();
        if let TokenKind::Op(op) = next.kind {
            self.advance();
            let right = self.operand()?;
            return Ok(left.compare(op, right));
        }
        if self.eat_keyword("is") {
            let negated = self.eat_keyword("not");
            self.expect("'null'", |k| {
                matches!(k, TokenKind::Ident { name, quoted: false } if name.eq_ignore_ascii_case("null"))
            })?;
            return Ok(if negated {
                left.is_not_null()
            } else {
                left.is_null()
            });
        }
        let negated = next.is_keyword("not")
            && (self.peek_at(1).is_keyword("in") || self.peek_at(1).is_keyword("between"));
        if negated {
            self.advance();
        }
        if self.eat_keyword("in") {
            let list = self.in_list()?;
            return Ok(Expr::In {
                expr: Box::new(left),
                list,
                negated,
            });
        }
        if self.eat_keyword("between") {
            let low = self.operand()?;
            self.expect("'and' of 'between ... and ...'", |k| {
                matches!(k, TokenKind::Ident { name, quoted: false } if name.eq_ignore_ascii_case("and"))
            })?;
            let high = self.operand()?;
            let range = left.between(low, high);
            return Ok(if negated { !range } else { range });
        }
        Ok(left)
    }

    fn in_list(&mut self) -> Result<Vec<Scalar>> {
        self.expect("'(' after 'in'", |k| matches!(k, TokenKind::LParen))?;
        let mut list = Vec::new();
        loop {
            let token = self.peek().clone();
            match self.value()? {
                Some(value) => list.push(value),
                None => {
                    return Err(syntax_error(
                        token.pos,
                        format!(
                            "expected a value in the 'in' list, found {}",
                            token.describe()
                        ),
                    ))
                }
            }
            let sep = self.expect("',' or ')' in the 'in' list", |k| {
                matches!(k, TokenKind::Comma | TokenKind::RParen)
            })?;
            if sep.kind == TokenKind::RParen {
                return Ok(list);
            }
        }
    }

    fn operand(&mut self) -> Result<Expr> {
        let token = self.peek().clone();
        if token.kind == TokenKind::LParen {
            self.advance();
            let inner = self.nested(Self::or)?;
            self.expect("')'", |k| matches!(k, TokenKind::RParen))?;
            return Ok(inner);
        }
        if let Some(value) = self.value()? {
            return Ok(Expr::Literal(value));
        }
        match &token.kind {
            TokenKind::Ident { name, quoted } if *quoted || !super::lexer::is_keyword(name) => {
                self.column()
            }
            _ => Err(syntax_error(
                token.pos,
                format!(
                    "expected a column name, a value or '(', found {}",
                    token.describe()
                ),
            )),
        }
    }

    fn column(&mut self) -> Result<Expr> {
        let mut path = Vec::new();
        loop {
            let token = self.expect("a column name", |k| matches!(k, TokenKind::Ident { .. }))?;
            if let TokenKind::Ident { name, .. } = token.kind {
                path.push(name);
            }
            if self.peek().kind != TokenKind::Dot {
                return Ok(Expr::Column(path));
            }
            self.advance();
        }
    }

    /// A literal value if one comes next (`None`, consuming nothing, otherwise).
    fn value(&mut self) -> Result<Option<Scalar>> {
        let token = self.peek().clone();
        let value = match &token.kind {
            TokenKind::Minus | TokenKind::Plus => {
                let number = self.peek_at(1).clone();
                let TokenKind::Number(text) = &number.kind else {
                    return Err(syntax_error(
                        number.pos,
                        format!(
                            "expected a number after '{}', found {}",
                            if token.kind == TokenKind::Minus {
                                "-"
                            } else {
                                "+"
                            },
                            number.describe()
                        ),
                    ));
                };
                let sign = if token.kind == TokenKind::Minus {
                    "-"
                } else {
                    ""
                };
                self.at += 2;
                number_literal(&format!("{sign}{text}"), token.pos)?
            }
            TokenKind::Number(text) => {
                self.at += 1;
                number_literal(text, token.pos)?
            }
            TokenKind::String(s) => {
                self.at += 1;
                Scalar::String(s.clone())
            }
            TokenKind::Ident {
                name,
                quoted: false,
            } => {
                let lower = name.to_ascii_lowercase();
                let value = match lower.as_str() {
                    "true" => Scalar::Boolean(true),
                    "false" => Scalar::Boolean(false),
                    "null" => Scalar::Null(PrimitiveType::Void),
                    _ => {
                        let text_token = self.peek_at(1);
                        let TokenKind::String(text) = &text_token.kind else {
                            return Ok(None);
                        };
                        let value = typed_literal(&lower, text, token.pos, text_token.pos)?;
                        // The type name; the string follows below.
                        self.at += 1;
                        value
                    }
                };
                self.at += 1;
                value
            }
            _ => return Ok(None),
        };
        Ok(Some(value))
    }
}

/// The value of a typed literal `type 'text'`.
fn typed_literal(type_name: &str, text: &str, pos: usize, text_pos: usize) -> Result<Scalar> {
    let bad = |what: &str| syntax_error(text_pos, format!("'{text}' is not a valid {what}"));
    let value = match type_name {
        "date" => Scalar::Date(parse_date(text).ok_or_else(|| bad("date (yyyy-MM-dd)"))?),
        "timestamp" | "timestamp_ltz" | "timestamp_ntz" => {
            let parsed = parse_timestamp(text)
                .filter(|t| !t.truncated)
                .ok_or_else(|| bad("timestamp (yyyy-MM-dd HH:mm:ss[.ffffff][zone])"))?;
            if type_name == "timestamp_ntz" {
                Scalar::TimestampNtz(parsed.micros)
            } else {
                Scalar::Timestamp(parsed.micros)
            }
        }
        "x" | "binary" => Scalar::Binary(parse_hex(text).ok_or_else(|| bad("hex string"))?),
        "double" => Scalar::Double(parse_float(text).ok_or_else(|| bad("double"))?),
        "float" => {
            // Read straight as f32: rounding through f64 first could round twice.
            let value = match parse_float(text) {
                Some(v) if v.is_finite() => text.trim().parse::<f32>().ok(),
                other => other.map(|v| v as f32),
            };
            Scalar::Float(value.ok_or_else(|| bad("float"))?)
        }
        other => {
            return Err(syntax_error(
                pos,
                format!(
                    "unknown literal type '{other}' (expected date, timestamp, \
                     timestamp_ntz, double, float or X)"
                ),
            ))
        }
    };
    Ok(value)
}

fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "inf" | "+infinity" | "+inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => t.parse().ok().filter(|v: &f64| v.is_finite()),
    }
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u32> = text
        .chars()
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()?;
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => u8::try_from(hi * 16 + lo).ok(),
            _ => None,
        })
        .collect()
}

/// The scalar of a number literal (with its sign): a double with an exponent, an exact
/// decimal with a point, else a long (or a decimal beyond the long range).
fn number_literal(text: &str, pos: usize) -> Result<Scalar> {
    if text.contains(['e', 'E']) {
        return text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Scalar::Double)
            .ok_or_else(|| syntax_error(pos, format!("number {text} is out of range")));
    }
    if !text.contains('.') {
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Scalar::Long(v));
        }
    }
    let (int_part, frac_part) = text.split_once('.').unwrap_or((text, ""));
    let negative = int_part.starts_with('-');
    let int_digits = int_part.trim_start_matches('-').trim_start_matches('0');
    let too_long = || {
        syntax_error(
            pos,
            format!(
                "number {text} has more than {MAX_DECIMAL_PRECISION} digits (write it with \
                 an exponent, as in 1.5e40, for a double)"
            ),
        )
    };
    let scale = u8::try_from(frac_part.len()).map_err(|_| too_long())?;
    let precision = int_digits.len() + frac_part.len();
    let precision = u8::try_from(precision.max(1)).map_err(|_| too_long())?;
    if precision > MAX_DECIMAL_PRECISION {
        return Err(too_long());
    }
    let digits = format!("{int_digits}{frac_part}");
    let magnitude: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| too_long())?
    };
    let unscaled = if negative { -magnitude } else { magnitude };
    Scalar::decimal(unscaled, precision, scale).map_err(|e| syntax_error(pos, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicate::expr::{col, column, lit};

    fn parse(text: &str) -> Expr {
        parse_filter(text).unwrap_or_else(|e| Expr::Literal(Scalar::String(e.to_string())))
    }

    fn error(text: &str) -> String {
        match parse_filter(text) {
            Ok(e) => format!("parsed: {e}"),
            Err(e) => e.to_string(),
        }
    }

    fn dec(unscaled: i128, p: u8, s: u8) -> Expr {
        Expr::Literal(Scalar::decimal(unscaled, p, s).unwrap_or(Scalar::Long(-1)))
    }

    #[test]
    fn full_example() -> Result<()> {
        let e = parse(
            "country = 'NL' and amount >= 10.5 and day between '2024-01-01' and '2024-01-31'",
        );
        let expected = col("country")
            .eq(lit("NL"))
            .and(col("amount").gt_eq(dec(105, 3, 1)))
            .and(col("day").gt_eq(lit("2024-01-01")))
            .and(col("day").lt_eq(lit("2024-01-31")));
        assert_eq!(e, expected);
        assert_eq!(
            e.to_string(),
            "country = 'NL' and amount >= 10.5 and day >= '2024-01-01' and day <= '2024-01-31'"
        );
        Ok(())
    }

    #[test]
    fn operators_and_precedence() {
        assert_eq!(
            parse("not (a < 3 or b is null)"),
            !(col("a").lt(lit(3i64)).or(col("b").is_null()))
        );
        assert_eq!(
            parse("a = 1 or b = 2 and c = 3"),
            col("a")
                .eq(lit(1i64))
                .or(col("b").eq(lit(2i64)).and(col("c").eq(lit(3i64))))
        );
        assert_eq!(parse("NOT a IS NOT NULL"), !col("a").is_not_null());
        assert_eq!(parse("name != 'x'"), col("name").not_eq(lit("x")));
        assert_eq!(parse("name <> 'x'"), col("name").not_eq(lit("x")));
        assert_eq!(parse("n == 1"), col("n").eq(lit(1i64)));
        assert_eq!(parse("3 > n"), lit(3i64).gt(col("n")));
        assert_eq!(parse("x in (1, 2, 3)"), col("x").in_list([1i64, 2, 3]));
        assert_eq!(parse("x NOT IN ('a')"), col("x").not_in_list(["a"]));
        assert_eq!(
            parse("x not between 1 and 2"),
            !col("x").between(lit(1i64), lit(2i64))
        );
        assert_eq!(parse("flag"), col("flag"));
        assert_eq!(parse("((flag))"), col("flag"));
        assert_eq!(parse("a.b.c = 1"), column(["a", "b", "c"]).eq(lit(1i64)));
        assert_eq!(
            parse("`my col`.`a.b` = 1 AnD `and` is null"),
            column(["my col", "a.b"])
                .eq(lit(1i64))
                .and(col("and").is_null())
        );
        assert_eq!(
            parse("date = date '2024-01-01'"),
            col("date").eq(lit(Scalar::Date(19723)))
        );
    }

    #[test]
    fn literals() {
        let value = |text: &str| match parse(&format!("x = {text}")) {
            Expr::Compare { right, .. } => *right,
            other => other,
        };
        assert_eq!(value("42"), lit(42i64));
        assert_eq!(value("-42"), lit(-42i64));
        assert_eq!(value("+ 7"), lit(7i64));
        assert_eq!(value("-9223372036854775808"), lit(i64::MIN));
        assert_eq!(
            value("99999999999999999999"),
            dec(99999999999999999999, 20, 0)
        );
        assert_eq!(value("10.50"), dec(1050, 4, 2));
        assert_eq!(value("-0.05"), dec(-5, 2, 2));
        assert_eq!(value(".5"), dec(5, 1, 1));
        assert_eq!(value("1.5e3"), lit(1500.0f64));
        assert_eq!(value("2E-2"), lit(0.02f64));
        assert_eq!(value("'it''s'"), lit("it's"));
        assert_eq!(value("''"), lit(""));
        assert_eq!(value("TRUE"), lit(true));
        assert_eq!(value("false"), lit(false));
        assert_eq!(
            value("Null"),
            lit(Scalar::Null(crate::schema::PrimitiveType::Void))
        );
        assert_eq!(value("DATE '2024-01-01'"), lit(Scalar::Date(19723)));
        assert_eq!(
            value("timestamp '2024-01-01 10:00:00'"),
            lit(Scalar::Timestamp(19723 * 86_400_000_000 + 36_000_000_000))
        );
        assert_eq!(
            value("timestamp_ntz '2024-01-01T00:00:00.000001'"),
            lit(Scalar::TimestampNtz(19723 * 86_400_000_000 + 1))
        );
        assert_eq!(value("X'0aFF'"), lit(vec![10u8, 255]));
        assert_eq!(value("float '1.5'"), lit(1.5f32));
        assert!(matches!(value("double 'NaN'"), Expr::Literal(Scalar::Double(v)) if v.is_nan()));
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "country = 'NL' and amount >= 10.5",
            "not (a < 3 or b is null)",
            "x in (1, 2, 3) or y not in ('a', 'b''c')",
            "`a b`.c = date '2024-01-01' and t > timestamp '2024-01-01 10:00:00.123456Z'",
            "n = timestamp_ntz '2024-01-01 10:00:00' or b = X'00ff' or f = double 'NaN'",
            "(a or b) and not c and d = -1.5 and e = 1.5e300",
            "a is not null and x = null and y = true",
        ] {
            let first = parse(text);
            assert_eq!(first.to_string(), text);
            let again = parse(&first.to_string());
            assert_eq!(again.to_string(), first.to_string());
        }
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            error(""),
            "invalid argument: filter syntax error at character 1: expected a filter \
             expression, found end of input"
        );
        assert_eq!(
            error("a ="),
            "invalid argument: filter syntax error at character 4: expected a column name, \
             a value or '(', found end of input"
        );
        assert!(error("a = 1 b")
            .contains("character 7: expected 'and', 'or' or end of input, found 'b'"));
        assert!(error("(a = 1").contains("character 7: expected ')', found end of input"));
        assert!(error("a = 1)").contains("unbalanced parenthesis"));
        assert!(error("a is 1").contains("character 6: expected 'null', found number 1"));
        assert!(error("a in 1").contains("expected '(' after 'in'"));
        assert!(error("a in (b)").contains("character 7: expected a value in the 'in' list"));
        assert!(error("a in (1 2)").contains("expected ',' or ')'"));
        assert!(error("a between 1 or 2").contains("expected 'and' of 'between"));
        assert!(error("d = date '2024-13-01'")
            .contains("character 10: '2024-13-01' is not a valid date"));
        assert!(error("d = year '2024'").contains("character 5: unknown literal type 'year'"));
        assert!(error("a = - 'x'").contains("expected a number after '-'"));
        assert!(error("and = 1").contains("character 1: expected a column name"));
        assert!(error("a = 1e999").contains("out of range"));
        assert!(error(&format!("a = 0.{}", "1".repeat(39))).contains("more than 38 digits"));
        assert!(error("a.").contains("character 3: expected a column name, found end of input"));
    }

    #[test]
    fn nesting_is_bounded_not_a_stack_overflow() {
        let parens = |n: usize| format!("{}a = 1{}", "(".repeat(n), ")".repeat(n));
        let nots = |n: usize| format!("{}a = 1", "not ".repeat(n));
        let mixed = |n: usize| format!("{}a = 1{}", "not (".repeat(n), ")".repeat(n));
        assert!(parse_filter(&parens(MAX_FILTER_DEPTH)).is_ok());
        assert!(parse_filter(&nots(MAX_FILTER_DEPTH)).is_ok());
        assert!(parse_filter(&mixed(MAX_FILTER_DEPTH / 2)).is_ok());
        for text in [
            parens(10_000),
            nots(10_000),
            mixed(10_000),
            parens(MAX_FILTER_DEPTH + 1),
        ] {
            match parse_filter(&text) {
                Err(DeltaError::LimitExceeded { found, max, .. }) => {
                    assert_eq!((found, max), (129, 128));
                }
                other => panic!("{other:?}"),
            }
        }
        let e = parse_filter(&nots(10_000)).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(
                "limit exceeded: filter nesting depth (parentheses and 'not's) is 129, over the \
                 maximum of 128"
            )
        );
    }
}
