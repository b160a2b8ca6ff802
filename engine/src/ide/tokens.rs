//! Semantic tokens of a policy file: what each word, string, number, comment
//! and operator of its text is, for an editor to colour.
//!
//! Names are classified from the symbol index (a rule id, a function, a
//! type, an enumeration's variant, a field, a variable), so that a name is
//! coloured as what it resolves to; whatever the index does not hold is read
//! from the text: keywords, strings (with the `{holes}` of a message read as
//! code), numbers, comments, operators, and a name followed by `(` (a call of
//! a built-in). A text that does not parse still gets its lexical tokens.

use grail_lang::ast::Span;

use super::index::{PolicyIndex, Symbol, policy_index};
use crate::db::{PolicySet, SourceText};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Keyword,
    /// A rule id: of a rule, a question, a table, or a check or bound that reports under it.
    Rule,
    Function,
    /// A document kind, a record, an enumeration or a matrix.
    Type,
    EnumMember,
    /// A field of a record or a column of a matrix.
    Field,
    Variable,
    String,
    Number,
    Comment,
    Operator,
}

/// One token: its span (on one line), what it is, and whether it declares
/// its name or is a `///` documentation comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Span,
    pub kind: TokenKind,
    pub declaration: bool,
    pub documentation: bool,
}

/// The semantic tokens of a policy file, in source order and without
/// overlaps; none for a file that is not one of the policy's.
pub fn semantic_tokens(db: &dyn salsa::Database, set: PolicySet, file: SourceText) -> Vec<Token> {
    let Some(index) = set.files(db).iter().position(|f| *f == file) else { return Vec::new() };
    tokens(file.text(db), index as u32, policy_index(db, set))
}

/// Words the grammar reads as keywords somewhere (`as`, `where`, `default`...),
/// besides the reserved ones and the structural checks' names
/// (`hir::CHECK_DESCRIPTIONS`); a declared name that is spelled like one is
/// in the index and classified from there.
const CONTEXTUAL: &[&str] = &[
    "layers",
    "question",
    "table",
    "tightest_first",
    "ordered",
    "identity",
    "as",
    "where",
    "absent",
    "present",
    "markdown",
    "after",
    "lines",
    "into",
    "most",
    "one",
    "per",
    "deployment",
    "on",
    "forbid",
    "key",
    "anywhere",
    "null",
    "grows",
    "shrinks",
    "tighter",
    "invalid",
    "default",
    "floor",
    "ceiling",
    "unique",
    "ref",
    "map",
    "list",
    "int",
    "by",
    "columns",
    "of",
    "trusted",
    "from",
    "layer",
    "claimed",
    "standalone",
    "separate",
    "only",
    "sets",
    "any",
    "action",
    "allow",
    "principal",
    "resource",
    "row",
    "column",
    "detail",
    "fail",
    "unknown",
];

// The reserved words (`grail_lang::parser::RESERVED`) are never a name, even
// before `(` (`count(xs)`, `in (a, b)`); any other keyword before `(` is a
// built-in's name (`present(x)`).
use grail_lang::parser::RESERVED;

/// A structural check's name (`syntax`, `unknown_key`...), a keyword of a `checks` block.
fn is_check_name(word: &str) -> bool {
    crate::hir::CHECK_DESCRIPTIONS.iter().any(|(name, _)| *name == word)
}

/// The words after which a dotted name is a rule id.
const BEFORE_RULE_ID: &[&str] = &["rule", "question", "table"];

/// Nested `{holes}` read as code at most this deep; deeper, a message is a plain string.
const MAX_HOLE_DEPTH: usize = 16;

fn of_symbol(symbol: &Symbol) -> TokenKind {
    match symbol {
        Symbol::Enum(_) | Symbol::Record(_) | Symbol::Matrix(_) => TokenKind::Type,
        Symbol::Variant { .. } => TokenKind::EnumMember,
        Symbol::Field { .. } | Symbol::Column { .. } => TokenKind::Field,
        Symbol::Function(_) => TokenKind::Function,
        Symbol::Rule(_) => TokenKind::Rule,
        Symbol::Local(_) => TokenKind::Variable,
    }
}

/// The tokens of `text`, policy file `file` of the policy that `index` indexes.
pub fn tokens(text: &str, file: u32, index: &PolicyIndex) -> Vec<Token> {
    // The names the index knows in this file, by where they start; a declaration wins over a use.
    let mut named: Vec<(Span, TokenKind, bool)> = index
        .decls
        .iter()
        .filter(|d| d.loc.file == file)
        .map(|d| (d.loc.span, of_symbol(&d.symbol), true))
        .chain(index.uses.iter().filter(|u| u.loc.file == file).map(|u| (u.loc.span, of_symbol(&u.symbol), false)))
        .filter(|(span, _, _)| span.start < span.end && span.end <= text.len())
        .collect();
    named.sort_by_key(|(span, _, declaration)| (span.start, !declaration));
    named.dedup_by_key(|(span, _, _)| span.start);
    let mut lexer = Lexer { text, bytes: text.as_bytes(), named, out: Vec::new(), last_word: None };
    lexer.code(0, text.len(), 0);
    lexer.out
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    named: Vec<(Span, TokenKind, bool)>,
    out: Vec<Token>,
    /// The last word read, to tell a message from a string and a rule id from a field access.
    last_word: Option<&'a str>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Lexer<'a> {
    fn push(&mut self, start: usize, end: usize, kind: TokenKind) {
        self.push_token(Token { span: Span::new(start, end), kind, declaration: false, documentation: false });
    }

    fn push_token(&mut self, token: Token) {
        // INVARIANT: tokens are pushed in source order; one that would overlap the last is dropped.
        if token.span.start < token.span.end && self.out.last().is_none_or(|t| t.span.end <= token.span.start) {
            self.out.push(token);
        }
    }

    /// The index's name starting at `at`, if any.
    fn named_at(&self, at: usize) -> Option<(Span, TokenKind, bool)> {
        let i = self.named.partition_point(|(s, _, _)| s.start < at);
        self.named.get(i).filter(|(s, _, _)| s.start == at).copied()
    }

    /// Reads code from `at` to `end`; inside a message's hole (`depth > 0`),
    /// up to its closing `}`. Returns where it stopped.
    fn code(&mut self, mut at: usize, end: usize, depth: usize) -> usize {
        let mut braces = 0usize;
        while at < end {
            if let Some((span, kind, declaration)) = self.named_at(at)
                && span.end <= end
            {
                self.push_token(Token { span, kind, declaration, documentation: false });
                self.last_word = self.text.get(span.start..span.end);
                at = span.end;
                // The rest of a word the name is the start of.
                while at < end && is_ident(self.bytes[at]) {
                    at += 1;
                }
                continue;
            }
            let b = self.bytes[at];
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => at += 1,
                b'/' if self.bytes.get(at + 1) == Some(&b'/') => {
                    let stop = self.text[at..end].find(['\n', '\r']).map_or(end, |i| at + i);
                    let documentation = self.text[at..].starts_with("///");
                    self.push_token(Token {
                        span: Span::new(at, stop),
                        kind: TokenKind::Comment,
                        declaration: false,
                        documentation,
                    });
                    at = stop;
                }
                b'"' => {
                    let message = matches!(self.last_word, Some("fail" | "unknown" | "else" | "report"));
                    at = self.string(at, end, message && depth < MAX_HOLE_DEPTH, depth);
                    self.last_word = None;
                }
                b'0'..=b'9' => {
                    let stop = at + self.bytes[at..end].iter().take_while(|b| is_ident(**b)).count();
                    self.push(at, stop, TokenKind::Number);
                    at = stop;
                }
                b'{' if depth > 0 => {
                    braces += 1;
                    at += 1;
                }
                b'}' if depth > 0 => {
                    if braces == 0 {
                        return at;
                    }
                    braces -= 1;
                    at += 1;
                }
                _ if is_ident_start(b) => at = self.word(at, end),
                _ => {
                    let two = self.text.get(at..at + 2).unwrap_or("");
                    let len = if ["==", "!=", "<=", ">=", "??", "++", "->"].contains(&two) {
                        2
                    } else if b"<>+-*=?".contains(&b) {
                        1
                    } else {
                        0
                    };
                    if len > 0 {
                        self.push(at, at + len, TokenKind::Operator);
                    }
                    // Any other byte (punctuation, or part of a character outside ASCII) is skipped.
                    at += len.max(1);
                    while at < end && !self.text.is_char_boundary(at) {
                        at += 1;
                    }
                }
            }
        }
        end
    }

    /// A name, a keyword or a rule id at `at`.
    fn word(&mut self, at: usize, end: usize) -> usize {
        let word_end = at + self.bytes[at..end].iter().take_while(|b| is_ident(**b)).count();
        let word = &self.text[at..word_end];
        if self.last_word.is_some_and(|w| BEFORE_RULE_ID.contains(&w)) && self.bytes.get(word_end) == Some(&b'.') {
            // A dotted rule id the index does not hold (the policy does not compile).
            let mut stop = word_end;
            while self.bytes.get(stop) == Some(&b'.') && self.bytes.get(stop + 1).is_some_and(|b| is_ident_start(*b)) {
                stop += 1 + self.bytes[stop + 1..end].iter().take_while(|b| is_ident(**b)).count();
            }
            self.push(at, stop, TokenKind::Rule);
            self.last_word = None;
            return stop;
        }
        let after = self.text[word_end..end].trim_start_matches([' ', '\t']);
        if after.starts_with('(') && !RESERVED.contains(&word) && self.last_word != Some("fn") {
            // A call the index does not resolve: a built-in.
            self.push(at, word_end, TokenKind::Function);
        } else if RESERVED.contains(&word) || CONTEXTUAL.contains(&word) || is_check_name(word) {
            self.push(at, word_end, TokenKind::Keyword);
        }
        self.last_word = Some(word);
        word_end
    }

    /// A string from its opening quote at `at`; a message's holes are read as code.
    fn string(&mut self, at: usize, end: usize, message: bool, depth: usize) -> usize {
        let mut piece = at;
        let mut i = at + 1;
        while i < end {
            match self.bytes[i] {
                // An escape; a backslash at the end of a line ends the string there, as the line does.
                b'\\' if !matches!(self.bytes.get(i + 1), Some(b'\n' | b'\r')) => i += 2,
                b'"' => {
                    self.push(piece, i + 1, TokenKind::String);
                    return i + 1;
                }
                b'\n' | b'\r' => break,
                b'\\' => {
                    i += 1;
                    break;
                }
                b'{' if message => {
                    self.push(piece, i, TokenKind::String);
                    let close = self.code(i + 1, end, depth + 1);
                    i = close + 1;
                    piece = i.min(end);
                }
                _ => i += 1,
            }
        }
        // An unterminated string runs to the end of its line.
        let stop = i.min(end);
        self.push(piece, stop, TokenKind::String);
        stop
    }
}
