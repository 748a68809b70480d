//! The hand-written lexer: source text to tokens with byte spans.
//!
//! Newlines are tokens (they separate statements); the parser ignores them
//! inside parentheses, where a call's arguments may span several lines. Errors
//! (an unknown character, an unterminated string or comment, a malformed
//! number) are reported and lexing goes on, so the parser still sees the rest.

use std::fmt;

use crate::diag::Diagnostic;
use crate::span::{LineIndex, mk_span};
use sim_core::ir::Span;

#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    Ident(String),
    Int(i64),
    Float(f64),
    Str(String),
    // Keywords.
    Param,
    Kernel,
    Fn,
    Let,
    If,
    Else,
    For,
    In,
    While,
    Break,
    Continue,
    Return,
    Compute,
    True,
    False,
    Null,
    Any,
    Rank,
    Size,
    World,
    // Punctuation.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    Dot,
    DotDot,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Assign,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Newline,
    /// Something the lexer could not make sense of (already reported).
    Error,
    Eof,
}

impl TokenKind {
    fn keyword(word: &str) -> Option<TokenKind> {
        Some(match word {
            "param" => TokenKind::Param,
            "kernel" => TokenKind::Kernel,
            "fn" => TokenKind::Fn,
            "let" => TokenKind::Let,
            "if" => TokenKind::If,
            "else" => TokenKind::Else,
            "for" => TokenKind::For,
            "in" => TokenKind::In,
            "while" => TokenKind::While,
            "break" => TokenKind::Break,
            "continue" => TokenKind::Continue,
            "return" => TokenKind::Return,
            "compute" => TokenKind::Compute,
            "true" => TokenKind::True,
            "false" => TokenKind::False,
            "null" => TokenKind::Null,
            "any" => TokenKind::Any,
            "rank" => TokenKind::Rank,
            "size" => TokenKind::Size,
            "world" => TokenKind::World,
            _ => return None,
        })
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TokenKind::Ident(name) => return write!(f, "identifier `{name}`"),
            TokenKind::Int(v) => return write!(f, "number `{v}`"),
            TokenKind::Float(v) => return write!(f, "number `{v}`"),
            TokenKind::Str(_) => "a string",
            TokenKind::Param => "`param`",
            TokenKind::Kernel => "`kernel`",
            TokenKind::Fn => "`fn`",
            TokenKind::Let => "`let`",
            TokenKind::If => "`if`",
            TokenKind::Else => "`else`",
            TokenKind::For => "`for`",
            TokenKind::In => "`in`",
            TokenKind::While => "`while`",
            TokenKind::Break => "`break`",
            TokenKind::Continue => "`continue`",
            TokenKind::Return => "`return`",
            TokenKind::Compute => "`compute`",
            TokenKind::True => "`true`",
            TokenKind::False => "`false`",
            TokenKind::Null => "`null`",
            TokenKind::Any => "`any`",
            TokenKind::Rank => "`rank`",
            TokenKind::Size => "`size`",
            TokenKind::World => "`world`",
            TokenKind::LParen => "`(`",
            TokenKind::RParen => "`)`",
            TokenKind::LBracket => "`[`",
            TokenKind::RBracket => "`]`",
            TokenKind::LBrace => "`{`",
            TokenKind::RBrace => "`}`",
            TokenKind::Comma => "`,`",
            TokenKind::Semi => "`;`",
            TokenKind::Colon => "`:`",
            TokenKind::Dot => "`.`",
            TokenKind::DotDot => "`..`",
            TokenKind::Plus => "`+`",
            TokenKind::Minus => "`-`",
            TokenKind::Star => "`*`",
            TokenKind::Slash => "`/`",
            TokenKind::Percent => "`%`",
            TokenKind::Bang => "`!`",
            TokenKind::Assign => "`=`",
            TokenKind::PlusAssign => "`+=`",
            TokenKind::MinusAssign => "`-=`",
            TokenKind::StarAssign => "`*=`",
            TokenKind::SlashAssign => "`/=`",
            TokenKind::EqEq => "`==`",
            TokenKind::NotEq => "`!=`",
            TokenKind::Lt => "`<`",
            TokenKind::Le => "`<=`",
            TokenKind::Gt => "`>`",
            TokenKind::Ge => "`>=`",
            TokenKind::AndAnd => "`&&`",
            TokenKind::OrOr => "`||`",
            TokenKind::Newline => "end of line",
            TokenKind::Error => "invalid token",
            TokenKind::Eof => "end of file",
        };
        f.write_str(s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Lexes `source` into tokens ending with [`TokenKind::Eof`]; lexical errors
/// are appended to `errors`.
pub fn lex(source: &str, index: &LineIndex, errors: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lexer = Lexer {
        src: source,
        bytes: source.as_bytes(),
        pos: 0,
        index,
        tokens: Vec::new(),
        errors,
    };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a, 'e> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    index: &'a LineIndex,
    tokens: Vec<Token>,
    errors: &'e mut Vec<Diagnostic>,
}

impl Lexer<'_, '_> {
    fn peek_at(&self, offset: usize) -> u8 {
        self.bytes.get(self.pos + offset).copied().unwrap_or(0)
    }

    fn span(&self, start: usize, end: usize) -> Span {
        mk_span(self.index, start, end)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span(start, self.pos);
        self.tokens.push(Token { kind, span });
    }

    fn error(&mut self, start: usize, end: usize, message: String, label: &str) {
        let span = self.span(start, end);
        self.errors
            .push(Diagnostic::new(message, span).with_label(label.to_string()));
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let c = self.bytes[self.pos];
            match c {
                b'\n' => {
                    self.pos += 1;
                    // Zero-width, so that "found end of line" points at the
                    // end of the line rather than spanning two lines.
                    let span = self.span(start, start);
                    self.tokens.push(Token {
                        kind: TokenKind::Newline,
                        span,
                    });
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'/' if self.peek_at(1) == b'/' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b'/' if self.peek_at(1) == b'*' => self.block_comment(),
                b'0'..=b'9' => self.number(),
                b'.' if self.peek_at(1).is_ascii_digit() => self.number(),
                b'"' => self.string(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    while self.pos < self.bytes.len()
                        && (self.bytes[self.pos].is_ascii_alphanumeric()
                            || self.bytes[self.pos] == b'_')
                    {
                        self.pos += 1;
                    }
                    let word = &self.src[start..self.pos];
                    let kind = TokenKind::keyword(word)
                        .unwrap_or_else(|| TokenKind::Ident(word.to_string()));
                    self.push(kind, start);
                }
                _ => self.punct(start, c),
            }
        }
        let end = self.bytes.len();
        self.tokens.push(Token {
            kind: TokenKind::Eof,
            span: self.span(end, end),
        });
    }

    fn punct(&mut self, start: usize, c: u8) {
        let next = self.peek_at(1);
        let (kind, len) = match (c, next) {
            (b'.', b'.') => (TokenKind::DotDot, 2),
            (b'+', b'=') => (TokenKind::PlusAssign, 2),
            (b'-', b'=') => (TokenKind::MinusAssign, 2),
            (b'*', b'=') => (TokenKind::StarAssign, 2),
            (b'/', b'=') => (TokenKind::SlashAssign, 2),
            (b'=', b'=') => (TokenKind::EqEq, 2),
            (b'!', b'=') => (TokenKind::NotEq, 2),
            (b'<', b'=') => (TokenKind::Le, 2),
            (b'>', b'=') => (TokenKind::Ge, 2),
            (b'&', b'&') => (TokenKind::AndAnd, 2),
            (b'|', b'|') => (TokenKind::OrOr, 2),
            (b'(', _) => (TokenKind::LParen, 1),
            (b')', _) => (TokenKind::RParen, 1),
            (b'[', _) => (TokenKind::LBracket, 1),
            (b']', _) => (TokenKind::RBracket, 1),
            (b'{', _) => (TokenKind::LBrace, 1),
            (b'}', _) => (TokenKind::RBrace, 1),
            (b',', _) => (TokenKind::Comma, 1),
            (b';', _) => (TokenKind::Semi, 1),
            (b':', _) => (TokenKind::Colon, 1),
            (b'.', _) => (TokenKind::Dot, 1),
            (b'+', _) => (TokenKind::Plus, 1),
            (b'-', _) => (TokenKind::Minus, 1),
            (b'*', _) => (TokenKind::Star, 1),
            (b'/', _) => (TokenKind::Slash, 1),
            (b'%', _) => (TokenKind::Percent, 1),
            (b'!', _) => (TokenKind::Bang, 1),
            (b'=', _) => (TokenKind::Assign, 1),
            (b'<', _) => (TokenKind::Lt, 1),
            (b'>', _) => (TokenKind::Gt, 1),
            _ => {
                // Skip the whole (possibly multi-byte) character.
                let ch = self
                    .src
                    .get(start..)
                    .and_then(|s| s.chars().next())
                    .unwrap_or('\u{fffd}');
                self.pos += ch.len_utf8().max(1);
                let message = match ch {
                    '&' => "expected `&&`, found a single `&`".to_string(),
                    '|' => "expected `||`, found a single `|`".to_string(),
                    _ => format!("unexpected character `{}`", ch.escape_debug()),
                };
                self.error(start, self.pos, message, "not part of the language");
                self.push(TokenKind::Error, start);
                return;
            }
        };
        self.pos += len;
        self.push(kind, start);
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        loop {
            if self.pos >= self.bytes.len() {
                self.error(
                    start,
                    start + 2,
                    "unterminated block comment".to_string(),
                    "this `/*` has no matching `*/`",
                );
                return;
            }
            if self.bytes[self.pos] == b'*' && self.peek_at(1) == b'/' {
                self.pos += 2;
                return;
            }
            self.pos += 1;
        }
    }

    fn digits(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
    }

    fn number(&mut self) {
        let start = self.pos;
        let mut is_float = false;
        self.digits();
        // A fraction needs a digit after the dot, so `0..n` stays a range.
        if self.peek_at(0) == b'.' && self.peek_at(1).is_ascii_digit() {
            is_float = true;
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek_at(0), b'e' | b'E') {
            let sign = usize::from(matches!(self.peek_at(1), b'+' | b'-'));
            if self.peek_at(1 + sign).is_ascii_digit() {
                is_float = true;
                self.pos += 1 + sign;
                self.digits();
            }
        }
        let next = self.peek_at(0);
        if next.is_ascii_alphanumeric() || next == b'_' {
            while self.pos < self.bytes.len()
                && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let text = &self.src[start..self.pos];
            self.error(
                start,
                self.pos,
                format!("invalid number literal `{text}`"),
                "expected digits, an optional fraction and an optional exponent such as `1e-6`",
            );
            self.push(TokenKind::Error, start);
            return;
        }
        let text = &self.src[start..self.pos];
        let kind = if is_float {
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => TokenKind::Float(v),
                _ => {
                    self.error(
                        start,
                        self.pos,
                        format!("number literal `{text}` is out of range"),
                        "too large for a 64-bit float",
                    );
                    TokenKind::Error
                }
            }
        } else {
            match text.parse::<i64>() {
                Ok(v) => TokenKind::Int(v),
                Err(_) => {
                    self.error(
                        start,
                        self.pos,
                        format!("integer literal `{text}` is too large"),
                        "the largest integer is 9223372036854775807",
                    );
                    TokenKind::Error
                }
            }
        };
        self.push(kind, start);
    }

    fn string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        while let Some(ch) = self.src.get(self.pos..).and_then(|s| s.chars().next()) {
            match ch {
                '"' => {
                    self.pos += 1;
                    self.push(TokenKind::Str(value), start);
                    return;
                }
                '\n' => break,
                '\\' => {
                    let esc_start = self.pos;
                    self.pos += 1;
                    let Some(esc) = self.src.get(self.pos..).and_then(|s| s.chars().next()) else {
                        break;
                    };
                    self.pos += esc.len_utf8();
                    match esc {
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        '\n' => {
                            self.pos -= 1;
                            break;
                        }
                        other => {
                            self.error(
                                esc_start,
                                self.pos,
                                format!("unknown escape `\\{}` in string", other.escape_debug()),
                                "expected one of `\\n`, `\\t`, `\\\\`, `\\\"`",
                            );
                        }
                    }
                }
                _ => {
                    value.push(ch);
                    self.pos += ch.len_utf8();
                }
            }
        }
        self.error(
            start,
            self.pos,
            "unterminated string".to_string(),
            "expected a closing `\"` before the end of the line",
        );
        self.push(TokenKind::Error, start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> (Vec<TokenKind>, usize) {
        let index = LineIndex::new(src);
        let mut errors = Vec::new();
        let toks = lex(src, &index, &mut errors);
        (toks.into_iter().map(|t| t.kind).collect(), errors.len())
    }

    #[test]
    fn numbers() {
        use TokenKind::*;
        assert_eq!(kinds("1000").0, vec![Int(1000), Eof]);
        assert_eq!(kinds("1.5").0, vec![Float(1.5), Eof]);
        assert_eq!(kinds("1e-6").0, vec![Float(1e-6), Eof]);
        assert_eq!(kinds("4.0e-9").0, vec![Float(4.0e-9), Eof]);
        assert_eq!(kinds("2E+3").0, vec![Float(2000.0), Eof]);
        assert_eq!(kinds(".5").0, vec![Float(0.5), Eof]);
        assert_eq!(
            kinds("0..n").0,
            vec![Int(0), DotDot, Ident("n".into()), Eof]
        );
        assert_eq!(kinds("0 .. 10").0, vec![Int(0), DotDot, Int(10), Eof]);
        assert_eq!(
            kinds("s.tag").0,
            vec![Ident("s".into()), Dot, Ident("tag".into()), Eof]
        );
        assert_eq!(
            kinds("a[0]").0,
            vec![Ident("a".into()), LBracket, Int(0), RBracket, Eof]
        );
        let (k, errs) = kinds("12abc");
        assert_eq!((k, errs), (vec![Error, Eof], 1));
        let (k, errs) = kinds("99999999999999999999");
        assert_eq!((k, errs), (vec![Error, Eof], 1));
        assert_eq!(kinds("9223372036854775807").0, vec![Int(i64::MAX), Eof]);
        let (k, errs) = kinds("1e999");
        assert_eq!((k, errs), (vec![Error, Eof], 1));
    }

    #[test]
    fn strings_comments_newlines() {
        use TokenKind::*;
        assert_eq!(
            kinds("print(\"a\\\"b\\n\") // hi\n/* x\ny */ x").0,
            vec![
                Ident("print".into()),
                LParen,
                Str("a\"b\n".into()),
                RParen,
                Newline,
                Ident("x".into()),
                Eof
            ]
        );
        assert_eq!(kinds("\"abc").1, 1);
        assert_eq!(kinds("/* abc").1, 1);
        assert_eq!(kinds("a & b").1, 1);
        assert_eq!(kinds("é").1, 1);
    }

    #[test]
    fn keywords_and_operators() {
        use TokenKind::*;
        assert_eq!(
            kinds("let x += rank <= size && !any || y != world").0,
            vec![
                Let,
                Ident("x".into()),
                PlusAssign,
                Rank,
                Le,
                Size,
                AndAnd,
                Bang,
                Any,
                OrOr,
                Ident("y".into()),
                NotEq,
                World,
                Eof
            ]
        );
    }
}
