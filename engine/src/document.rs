//! Loading JSON and YAML binding documents into a generic tree whose nodes carry
//! exact byte spans into the source text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use jsonc_parser::ParseStringErrorKind;
use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use jsonc_parser::errors::{ParseError, ParseErrorKind};
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};

mod fast_json;

/// A byte range into the document text (the same span type as the language's).
pub use grail_lang::ast::Span;

/// A value in a loaded document.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub kind: NodeKind,
}

impl Node {
    /// The value as JSON, without its spans (a duplicate key keeps its last value).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Int(i) => Value::from(*i),
            // JSON values here are 64-bit numbers: the nearest one.
            NodeKind::BigInt(i) => i.parse::<f64>().map_or(Value::Null, Value::from),
            NodeKind::Float(f) => Value::from(*f),
            NodeKind::Str(s) => Value::String(s.clone()),
            NodeKind::List(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeKind::Map(entries) => {
                Value::Object(entries.iter().map(|e| (e.key.clone(), e.value.to_json())).collect())
            }
        }
    }
}

/// The value of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits, as its canonical decimal text (see [`crate::int`]).
    BigInt(String),
    Float(f64),
    Str(String),
    List(Vec<Node>),
    /// Entries in source order; duplicates are KEPT (the caller reports and handles them).
    Map(Vec<Entry>),
}

/// One key/value pair of a map.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

/// The syntax of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    /// JSON Lines: one JSON value per line. The tree is a list of the lines'
    /// values, each located in the file; blank lines are skipped.
    JsonLines,
}

/// A document that could not be read: message is lower case, no final period, user input in backticks.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
}

/// Limits; `Default` gives: max_depth 128, max_alias_expansions 10_000 (YAML aliases expanded at most this many nodes in total; an alias bomb is refused with a SyntaxError).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_depth: usize,
    pub max_alias_expansions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 128, max_alias_expansions: 10_000 }
    }
}

/// Parses `text` as a single JSON or YAML document.
pub fn load(text: &str, format: Format, limits: &Limits) -> Result<Node, SyntaxError> {
    // The parsers are third-party code; a panic in them must not take the caller down.
    let result = catch_unwind(AssertUnwindSafe(|| match format {
        Format::Json => load_json(text, limits),
        Format::Yaml => load_yaml(text, limits),
        Format::JsonLines => load_json_lines(text, limits),
    }));
    match result {
        Ok(result) => result,
        Err(_) => Err(error("the document could not be parsed", Span::default())),
    }
}

/// Guess the format from a file name: `.json` -> Json, `.yaml`/`.yml` -> Yaml, otherwise None.
pub fn format_for_path(path: &str) -> Option<Format> {
    let ext = std::path::Path::new(path).extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("json") {
        Some(Format::Json)
    } else if ext.eq_ignore_ascii_case("jsonl") {
        Some(Format::JsonLines)
    } else if ext.eq_ignore_ascii_case("yaml") || ext.eq_ignore_ascii_case("yml") {
        Some(Format::Yaml)
    } else {
        None
    }
}

fn error(message: impl Into<String>, span: Span) -> SyntaxError {
    SyntaxError { message: message.into(), span }
}

fn depth_error(max_depth: usize, span: Span) -> SyntaxError {
    error(format!("nesting deeper than {max_depth} levels"), span)
}

fn empty_error() -> SyntaxError {
    error("the document is empty", Span::default())
}

/// The span of the character starting at byte `at` (empty at the end of the text).
fn char_span(text: &str, at: usize) -> Span {
    let len = text.get(at..).and_then(|rest| rest.chars().next()).map_or(0, char::len_utf8);
    Span { start: at, end: at + len }
}

/// User text for a message: truncated, control characters escaped.
fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    let mut out: String = text.chars().take(MAX_CHARS).flat_map(char::escape_debug).collect();
    if text.chars().nth(MAX_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Turns a parser's message into our style: lower-case start, no final period.
fn restyle(message: &str) -> String {
    let trimmed = message.trim().trim_end_matches('.');
    let mut chars = trimmed.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => "syntax error".to_string(),
    }
}

// ---------------------------------------------------------------------------
// JSON

fn strict_json_options() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// One JSON value per line, each located in the whole file; a line that is
/// not one JSON value is the error, at that line.
fn load_json_lines(text: &str, limits: &Limits) -> Result<Node, SyntaxError> {
    let mut lines = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if line.trim().is_empty() || (start == 0 && line.trim() == "\u{feff}") {
            continue;
        }
        let body = line.strip_suffix('\n').unwrap_or(line);
        let body = body.strip_suffix('\r').unwrap_or(body);
        match load_json(body, limits) {
            Ok(mut node) => {
                shift(&mut node, start);
                lines.push(node);
            }
            Err(mut e) => {
                e.span = Span::new(e.span.start + start, e.span.end + start);
                e.message = format!("line {}: {}", text[..start].matches('\n').count() + 1, e.message);
                return Err(e);
            }
        }
    }
    if lines.is_empty() {
        return Err(empty_error());
    }
    Ok(Node { span: Span::new(0, text.len()), kind: NodeKind::List(lines) })
}

/// Moves every span of a tree by `by` bytes.
pub fn shift(node: &mut Node, by: usize) {
    node.span = Span::new(node.span.start + by, node.span.end + by);
    match &mut node.kind {
        NodeKind::List(items) => items.iter_mut().for_each(|n| shift(n, by)),
        NodeKind::Map(entries) => {
            for e in entries {
                e.key_span = Span::new(e.key_span.start + by, e.key_span.end + by);
                shift(&mut e.value, by);
            }
        }
        _ => {}
    }
}

fn load_json(text: &str, limits: &Limits) -> Result<Node, SyntaxError> {
    let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    // Most documents are plain strict JSON, which one pass reads straight into the tree;
    // anything else, errors included, goes the general way below.
    if let Some(node) = fast_json::read(text, bom, limits.max_depth) {
        return Ok(node);
    }
    load_json_generally(text, bom, limits)
}

/// Loads JSON with a prescan, jsonc-parser and a conversion of its tree; this is the
/// path that accepts exactly strict JSON and words every error.
fn load_json_generally(text: &str, bom: usize, limits: &Limits) -> Result<Node, SyntaxError> {
    let body = text.get(bom..).unwrap_or_default();
    let shift = |mut e: SyntaxError| {
        e.span.start += bom;
        e.span.end += bom;
        e
    };

    // jsonc-parser accepts a few things strict JSON does not (raw control characters in
    // strings, non-JSON whitespace) and only limits nesting at its own depth, so scan first.
    let issue = prescan_json(body, limits.max_depth);
    let parsed = match parse_to_ast(body, &CollectOptions::default(), &strict_json_options()) {
        Ok(parsed) => parsed,
        Err(e) => {
            let e = json_error(body, &e);
            // Report whichever problem comes first in the text.
            return Err(shift(match issue {
                Some(issue) if issue.span.start <= e.span.start => issue,
                _ => e,
            }));
        }
    };
    if let Some(issue) = issue {
        return Err(shift(issue));
    }
    match parsed.value {
        Some(value) => json_node(value, bom, 0, limits.max_depth),
        None => Err(empty_error()),
    }
}

/// Finds strictness violations jsonc-parser lets through and nesting beyond `max_depth`.
fn prescan_json(body: &str, max_depth: usize) -> Option<SyntaxError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in body.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if c < ' ' {
                return Some(error(
                    format!("unescaped control character `U+{:04X}` in string", u32::from(c)),
                    char_span(body, at),
                ));
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth > max_depth {
                    return Some(depth_error(max_depth, char_span(body, at)));
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ' ' | '\t' | '\n' | '\r' => {}
            c if c.is_whitespace() => {
                return Some(error(
                    format!("unexpected whitespace character `U+{:04X}`", u32::from(c)),
                    char_span(body, at),
                ));
            }
            _ => {}
        }
    }
    None
}

fn json_error(body: &str, e: &ParseError) -> SyntaxError {
    let range = e.range();
    let span = Span { start: range.start, end: range.end.max(range.start) };
    let source = body.get(span.start..span.end).unwrap_or_default();
    let message = match e.kind() {
        ParseErrorKind::String(kind) => match kind {
            ParseStringErrorKind::InvalidEscapeInSingleQuoteString
            | ParseStringErrorKind::InvalidEscapeInDoubleQuoteString
            | ParseStringErrorKind::InvalidEscape => {
                let escape: String = source.chars().take(2).collect();
                format!("invalid escape `{}` in string", quote(&escape))
            }
            ParseStringErrorKind::ExpectedFourHexDigits => "expected four hex digits after `\\u`".to_string(),
            ParseStringErrorKind::ExpectedTwoHexDigits => "expected two hex digits after `\\x`".to_string(),
            ParseStringErrorKind::InvalidUnicodeEscapeSequence(detail) => match detail.split_once(' ') {
                Some((hex, why)) => {
                    format!("invalid unicode escape `\\u{}` {}", quote(hex), quote(why))
                }
                None => format!("invalid unicode escape `\\u{}`", quote(detail)),
            },
            ParseStringErrorKind::UnterminatedStringLiteral => "unterminated string".to_string(),
        },
        ParseErrorKind::UnexpectedWord => format!("unexpected word `{}`", quote(source)),
        ParseErrorKind::UnexpectedToken if !source.is_empty() => {
            format!("unexpected token `{}`", quote(source))
        }
        ParseErrorKind::NestingDepthExceeded => "nesting deeper than the JSON parser allows".to_string(),
        ParseErrorKind::MultipleRootJsonValues => "unexpected content after the JSON value".to_string(),
        ParseErrorKind::ExpectedColonAfterObjectKey => "expected `:` after the key".to_string(),
        other => restyle(&other.to_string()),
    };
    error(message, span)
}

fn json_node(value: ast::Value<'_>, offset: usize, depth: usize, max_depth: usize) -> Result<Node, SyntaxError> {
    let range = value.range();
    let span = Span { start: range.start + offset, end: range.end.max(range.start) + offset };
    let bracket = Span { start: span.start, end: (span.start + 1).min(span.end) };
    let kind = match value {
        ast::Value::NullKeyword(_) => NodeKind::Null,
        ast::Value::BooleanLit(b) => NodeKind::Bool(b.value),
        ast::Value::StringLit(s) => NodeKind::Str(s.value.into_owned()),
        ast::Value::NumberLit(n) => {
            json_number(n.value).ok_or_else(|| error(format!("number `{}` is out of range", quote(n.value)), span))?
        }
        ast::Value::Array(array) => {
            if depth >= max_depth {
                return Err(depth_error(max_depth, bracket));
            }
            let items = array
                .elements
                .into_iter()
                .map(|element| json_node(element, offset, depth + 1, max_depth))
                .collect::<Result<Vec<_>, _>>()?;
            NodeKind::List(items)
        }
        ast::Value::Object(object) => {
            if depth >= max_depth {
                return Err(depth_error(max_depth, bracket));
            }
            let mut entries = Vec::with_capacity(object.properties.len());
            for property in object.properties {
                let key_range = property.name.range();
                let key_span =
                    Span { start: key_range.start + offset, end: key_range.end.max(key_range.start) + offset };
                let value = json_node(property.value, offset, depth + 1, max_depth)?;
                entries.push(Entry { key: property.name.into_string(), key_span, value });
            }
            NodeKind::Map(entries)
        }
    };
    Ok(Node { span, kind })
}

/// A JSON number: an integer (of any size) is `Int` or `BigInt`, everything else finite is `Float`.
fn json_number(text: &str) -> Option<NodeKind> {
    if !text.contains(['.', 'e', 'E'])
        && let Some(int) = crate::int::parse_decimal(text)
    {
        return Some(int_node(int));
    }
    finite_float(text)
}

fn int_node(int: crate::int::OwnedInt) -> NodeKind {
    match int {
        crate::int::OwnedInt::Small(i) => NodeKind::Int(i),
        crate::int::OwnedInt::Big(s) => NodeKind::BigInt(s),
    }
}

fn finite_float(text: &str) -> Option<NodeKind> {
    text.parse::<f64>().ok().filter(|f| f.is_finite()).map(NodeKind::Float)
}

// ---------------------------------------------------------------------------
// YAML

/// Maps saphyr-parser's character indices to byte offsets.
enum Offsets {
    Ascii(usize),
    Table(Vec<usize>),
}

impl Offsets {
    fn new(text: &str) -> Self {
        if text.is_ascii() {
            Offsets::Ascii(text.len())
        } else {
            let mut table: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
            table.push(text.len());
            Offsets::Table(table)
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        match self {
            Offsets::Ascii(len) => char_index.min(*len),
            Offsets::Table(table) => table.get(char_index).or(table.last()).copied().unwrap_or(0),
        }
    }

    fn span(&self, span: saphyr_parser::Span) -> Span {
        let start = self.byte(span.start.index());
        let end = self.byte(span.end.index()).max(start);
        Span { start, end }
    }
}

/// A node that has been fully read, with what is needed to place it (or expand an alias to it).
#[derive(Clone)]
struct Built {
    node: Node,
    /// The scalar's string, for use as a mapping key; `None` for collections.
    key: Option<String>,
    /// Number of nodes in the tree.
    size: usize,
    /// Collection nesting inside the node (0 for a scalar).
    height: usize,
}

enum FrameKind {
    Seq(Vec<Node>),
    Map { entries: Vec<Entry>, key: Option<(String, Span)> },
}

/// A collection being read.
struct Frame {
    kind: FrameKind,
    start: usize,
    last_end: usize,
    anchor: usize,
    size: usize,
    height: usize,
}

struct YamlBuilder<'t> {
    text: &'t str,
    offsets: Offsets,
    limits: Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Built>,
    expanded: usize,
}

/// What a YAML tag asks for.
enum TagKind<'a> {
    /// The non-specific tag `!`.
    NonSpecific,
    /// A tag of the YAML core schema, by its suffix (`str`, `int`, ...).
    Core(&'a str),
    Other,
}

const CORE_TAG_PREFIX: &str = "tag:yaml.org,2002:";

fn tag_kind(tag: &Tag) -> TagKind<'_> {
    if tag.handle.is_empty() && tag.suffix == "!" {
        TagKind::NonSpecific
    } else if tag.handle == CORE_TAG_PREFIX {
        TagKind::Core(&tag.suffix)
    } else if let Some(suffix) = tag.suffix.strip_prefix(CORE_TAG_PREFIX).filter(|_| tag.handle.is_empty()) {
        TagKind::Core(suffix)
    } else {
        TagKind::Other
    }
}

fn load_yaml(text: &str, limits: &Limits) -> Result<Node, SyntaxError> {
    let mut builder = YamlBuilder {
        text,
        offsets: Offsets::new(text),
        limits: *limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
        expanded: 0,
    };
    let mut parser = Parser::new_from_str(text);
    let mut root = None;
    let mut seen_document = false;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| builder.scan_error(&e))?;
        let span = builder.offsets.span(span);
        let built = match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => continue,
            Event::DocumentStart(_) => {
                if seen_document {
                    return Err(error("more than one YAML document", span));
                }
                seen_document = true;
                continue;
            }
            Event::Alias(id) => builder.alias(id, span)?,
            Event::Scalar(value, style, anchor, tag) => builder.scalar(value, style, anchor, tag.as_deref(), span)?,
            Event::SequenceStart(anchor, tag) => {
                builder.open(FrameKind::Seq(Vec::new()), anchor, tag.as_deref(), span)?;
                continue;
            }
            Event::MappingStart(anchor, tag) => {
                let kind = FrameKind::Map { entries: Vec::new(), key: None };
                builder.open(kind, anchor, tag.as_deref(), span)?;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => builder.close(span)?,
        };
        if let Some(node) = builder.place(built)? {
            root = Some(node);
        }
    }
    root.ok_or_else(empty_error)
}

impl YamlBuilder<'_> {
    fn scan_error(&self, e: &ScanError) -> SyntaxError {
        let at = self.offsets.byte(e.marker().index());
        let span = char_span(self.text, at);
        if e.info() == "recursion limit exceeded" {
            // saphyr-parser allows at most 255 nested flow collections.
            return depth_error(self.limits.max_depth.min(255), span);
        }
        if e.info().contains("unknown anchor") {
            let rest = self.text.get(at..).unwrap_or_default();
            let len = rest.find(|c: char| c.is_whitespace() || ",[]{}".contains(c)).unwrap_or(rest.len());
            let span = Span { start: at, end: at + len };
            return error(format!("unknown YAML alias `{}`", quote(self.source(span))), span);
        }
        if matches!(e.info(), "invalid character in stream" | "found unprintable character") {
            let c = self.text.get(at..).and_then(|rest| rest.chars().next()).unwrap_or('\0');
            return error(format!("character `U+{:04X}` is not allowed in YAML", u32::from(c)), span);
        }
        error(yaml_message(e.info()), span)
    }

    fn source(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    /// Skips `&anchor` and `!tag` properties from `start`, returning the tag's span and the
    /// start of the node's content. Never goes past `limit`.
    fn properties(&self, start: usize, limit: usize) -> (Option<Span>, usize) {
        let bytes = self.text.as_bytes();
        let limit = limit.min(bytes.len());
        let mut at = start;
        let mut tag = None;
        while at < limit {
            let Some(&first) = bytes.get(at) else { break };
            if first != b'&' && first != b'!' {
                break;
            }
            let token_start = at;
            if bytes.get(at + 1) == Some(&b'<') {
                // Verbatim tag `!<...>`.
                while at < limit && bytes.get(at) != Some(&b'>') {
                    at += 1;
                }
                at = (at + 1).min(limit);
            } else {
                while at < limit
                    && !matches!(
                        bytes.get(at),
                        None | Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}')
                    )
                {
                    at += 1;
                }
            }
            if first == b'!' {
                tag = Some(Span { start: token_start, end: at });
            }
            // Whitespace and comments between properties and content.
            while at < limit {
                match bytes.get(at) {
                    Some(b' ' | b'\t' | b'\r' | b'\n') => at += 1,
                    Some(b'#') => {
                        while at < limit && !matches!(bytes.get(at), Some(b'\n' | b'\r')) {
                            at += 1;
                        }
                    }
                    _ => break,
                }
            }
        }
        (tag, at)
    }

    /// The end of a quoted scalar starting at `span.start`, or `span.end` if not found.
    fn closing_quote(&self, span: Span, double: bool) -> usize {
        let bytes = self.text.as_bytes();
        let quote = if double { b'"' } else { b'\'' };
        let mut at = span.start + 1;
        while at < span.end {
            match bytes.get(at) {
                Some(b'\\') if double => at += 2,
                Some(&b) if b == quote => {
                    if !double && bytes.get(at + 1) == Some(&b'\'') {
                        at += 2;
                    } else {
                        return at + 1;
                    }
                }
                _ => at += 1,
            }
        }
        span.end
    }

    fn unsupported_tag(&self, tag: &Tag, tag_span: Span) -> SyntaxError {
        let written = self.source(tag_span);
        let name = if written.is_empty() { format!("{}{}", tag.handle, tag.suffix) } else { written.to_string() };
        error(format!("unsupported YAML tag `{}`", quote(&name)), tag_span)
    }

    fn misplaced_tag(&self, tag_span: Span, what: &str) -> SyntaxError {
        error(format!("YAML tag `{}` cannot be used on {what}", quote(self.source(tag_span))), tag_span)
    }

    fn scalar(
        &mut self,
        value: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        event_span: Span,
    ) -> Result<Built, SyntaxError> {
        let (tag_span, start) = if anchor != 0 || tag.is_some() {
            self.properties(event_span.start, event_span.end)
        } else {
            (None, event_span.start)
        };
        let mut span = Span { start, end: event_span.end.max(start) };
        if value.is_empty() && style == ScalarStyle::Plain {
            // An empty scalar borrows the span of whatever token follows it.
            span.end = span.start;
        }
        if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) {
            // The event's span runs on over trailing blanks and comments.
            span.end = self.closing_quote(span, style == ScalarStyle::DoubleQuoted);
        }
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
            let trimmed = self.source(span).trim_end_matches(['\n', '\r']).len();
            span.end = span.start + trimmed;
        }
        let tag_span = tag_span.unwrap_or(Span { start: event_span.start, end: start });
        let kind = self.scalar_kind(&value, style, tag, tag_span, span)?;
        let built = Built { node: Node { span, kind }, key: Some(value.into_owned()), size: 1, height: 0 };
        self.remember(anchor, &built);
        Ok(built)
    }

    /// The value of a scalar, by its tag or else by the core schema for plain scalars.
    fn scalar_kind(
        &self,
        value: &str,
        style: ScalarStyle,
        tag: Option<&Tag>,
        tag_span: Span,
        span: Span,
    ) -> Result<NodeKind, SyntaxError> {
        let out_of_range = || error(format!("number `{}` is out of range", quote(value)), span);
        let Some(tag) = tag else {
            return if style == ScalarStyle::Plain {
                resolve_plain(value).ok_or_else(out_of_range)
            } else {
                Ok(NodeKind::Str(value.to_string()))
            };
        };
        match tag_kind(tag) {
            TagKind::NonSpecific | TagKind::Core("str") => Ok(NodeKind::Str(value.to_string())),
            TagKind::Core(core @ ("null" | "bool" | "int" | "float")) => {
                match (core, resolve_plain(value).ok_or_else(out_of_range)?) {
                    ("null", kind @ NodeKind::Null)
                    | ("bool", kind @ NodeKind::Bool(_))
                    | ("int", kind @ (NodeKind::Int(_) | NodeKind::BigInt(_)))
                    | ("float", kind @ NodeKind::Float(_)) => Ok(kind),
                    // An integer written under `!!float` is still a float.
                    ("float", NodeKind::Int(int)) => Ok(NodeKind::Float(int as f64)),
                    ("float", NodeKind::BigInt(int)) => finite_float(&int).ok_or_else(out_of_range),
                    _ => Err(error(format!("`{}` is not a valid `!!{core}`", quote(value)), span)),
                }
            }
            TagKind::Core("seq" | "map") => Err(self.misplaced_tag(tag_span, "a scalar")),
            TagKind::Core(_) | TagKind::Other => Err(self.unsupported_tag(tag, tag_span)),
        }
    }

    fn alias(&mut self, id: usize, span: Span) -> Result<Built, SyntaxError> {
        let Some(anchored) = self.anchors.get(&id) else {
            let name = quote(self.source(span));
            let message = if self.stack.iter().any(|frame| frame.anchor == id) {
                format!("YAML alias `{name}` refers to a node that contains it")
            } else {
                format!("unknown YAML alias `{name}`")
            };
            return Err(error(message, span));
        };
        if self.stack.len().saturating_add(anchored.height) > self.limits.max_depth {
            return Err(depth_error(self.limits.max_depth, span));
        }
        let expanded = self.expanded.saturating_add(anchored.size);
        if expanded > self.limits.max_alias_expansions {
            return Err(error(
                format!("YAML alias expansion exceeds {} nodes", self.limits.max_alias_expansions),
                span,
            ));
        }
        self.expanded = expanded;
        let mut node = anchored.node.clone();
        node.span = span;
        Ok(Built { node, key: anchored.key.clone(), size: anchored.size, height: anchored.height })
    }

    fn open(&mut self, kind: FrameKind, anchor: usize, tag: Option<&Tag>, event_span: Span) -> Result<(), SyntaxError> {
        let (tag_span, start) = if anchor != 0 || tag.is_some() {
            self.properties(event_span.start, event_span.end)
        } else {
            (None, event_span.start)
        };
        if let Some(tag) = tag {
            let tag_span = tag_span.unwrap_or(Span { start: event_span.start, end: start });
            let (what, expected) = match kind {
                FrameKind::Seq(_) => ("a sequence", "seq"),
                FrameKind::Map { .. } => ("a mapping", "map"),
            };
            match tag_kind(tag) {
                TagKind::NonSpecific => {}
                TagKind::Core(core) if core == expected => {}
                TagKind::Core("str" | "null" | "bool" | "int" | "float" | "seq" | "map") => {
                    return Err(self.misplaced_tag(tag_span, what));
                }
                TagKind::Core(_) | TagKind::Other => {
                    return Err(self.unsupported_tag(tag, tag_span));
                }
            }
        }
        if self.stack.len() >= self.limits.max_depth {
            return Err(depth_error(self.limits.max_depth, char_span(self.text, start)));
        }
        self.stack.push(Frame { kind, start, last_end: event_span.end.max(start), anchor, size: 1, height: 1 });
        Ok(())
    }

    fn close(&mut self, event_span: Span) -> Result<Built, SyntaxError> {
        let Some(frame) = self.stack.pop() else {
            return Err(error("unbalanced YAML collection end", event_span));
        };
        let bytes = self.text.as_bytes();
        let flow = matches!(bytes.get(frame.start), Some(b'[' | b'{'))
            && matches!(bytes.get(event_span.start), Some(b']' | b'}'));
        let end = if flow { event_span.end } else { frame.last_end };
        let span = Span { start: frame.start, end: end.max(frame.start) };
        let kind = match frame.kind {
            FrameKind::Seq(items) => NodeKind::List(items),
            FrameKind::Map { entries, key: None } => NodeKind::Map(entries),
            FrameKind::Map { key: Some((_, key_span)), .. } => {
                return Err(error("a mapping key has no value", key_span));
            }
        };
        let built = Built { node: Node { span, kind }, key: None, size: frame.size, height: frame.height };
        self.remember(frame.anchor, &built);
        Ok(built)
    }

    fn remember(&mut self, anchor: usize, built: &Built) {
        if anchor != 0 {
            self.anchors.insert(anchor, built.clone());
        }
    }

    /// Puts a finished node into the enclosing collection; returns it if it is the root.
    fn place(&mut self, built: Built) -> Result<Option<Node>, SyntaxError> {
        let Some(frame) = self.stack.last_mut() else {
            return Ok(Some(built.node));
        };
        frame.size = frame.size.saturating_add(built.size);
        frame.height = frame.height.max(built.height.saturating_add(1));
        frame.last_end = frame.last_end.max(built.node.span.end);
        match &mut frame.kind {
            FrameKind::Seq(items) => items.push(built.node),
            FrameKind::Map { entries, key } => match key.take() {
                Some((key, key_span)) => entries.push(Entry { key, key_span, value: built.node }),
                None => match built.key {
                    Some(text) => *key = Some((text, built.node.span)),
                    None => return Err(error("a mapping key must be a scalar", built.node.span)),
                },
            },
        }
        Ok(None)
    }
}

/// The YAML scanner's messages that people meet most, said in terms of what
/// to do; the others restyled.
fn yaml_message(info: &str) -> String {
    match info {
        "while parsing a block mapping, did not find expected key" => {
            "expected a key here: a line of a mapping must line up with the keys above it".into()
        }
        "mapping values are not allowed in this context" => {
            "unexpected `:`: a mapping cannot start here; quote the value, or put the key on a line of its own".into()
        }
        "block sequence entries are not allowed in this context" => {
            "unexpected `-`: a list cannot start here; put it on a line of its own, under its key".into()
        }
        "while parsing a block collection, did not find expected '-' indicator" => {
            "expected `-` here: the entries of a list must line up".into()
        }
        "while parsing a flow mapping, did not find expected ',' or '}'" => {
            "expected `,` or `}` in this `{...}` mapping; is a `}` missing?".into()
        }
        "while parsing a flow sequence, expected ',' or ']'" => {
            "expected `,` or `]` in this `[...]` list; is a `]` missing?".into()
        }
        "tabs disallowed within this context (block indentation)" => {
            "a tab in the indentation: YAML indents with spaces only".into()
        }
        "while parsing a node, did not find expected node content" => "expected a value here".into(),
        other => restyle(other),
    }
}

/// Resolves a plain scalar by the YAML 1.2 core schema; `None` if it is a number out of range.
fn resolve_plain(text: &str) -> Option<NodeKind> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(NodeKind::Null),
        "true" | "True" | "TRUE" => return Some(NodeKind::Bool(true)),
        "false" | "False" | "FALSE" => return Some(NodeKind::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(NodeKind::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(NodeKind::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(NodeKind::Float(f64::NAN)),
        _ => {}
    }
    let is_digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(octal) = text.strip_prefix("0o").filter(|s| is_digits(s, 8)) {
        return i128::from_str_radix(octal, 8).ok().map(|i| int_node(crate::int::from_i128(i)));
    }
    if let Some(hex) = text.strip_prefix("0x").filter(|s| is_digits(s, 16)) {
        return i128::from_str_radix(hex, 16).ok().map(|i| int_node(crate::int::from_i128(i)));
    }
    let (sign, unsigned) = match text.strip_prefix(['-', '+']) {
        Some(rest) => (text.get(..1).unwrap_or_default(), rest),
        None => ("", text),
    };
    if is_digits(unsigned, 10) {
        return crate::int::parse_decimal(text).map(int_node);
    }
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let mantissa_ok = match fraction {
        Some(fraction) => {
            (whole.is_empty() || is_digits(whole, 10))
                && (fraction.is_empty() || is_digits(fraction, 10))
                && !(whole.is_empty() && fraction.is_empty())
        }
        None => is_digits(whole, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| is_digits(e.strip_prefix(['-', '+']).unwrap_or(e), 10));
    if !(mantissa_ok && exponent_ok) {
        return Some(NodeKind::Str(text.to_string()));
    }
    let normalized = format!(
        "{sign}{}.{}e{}",
        if whole.is_empty() { "0" } else { whole },
        fraction.filter(|f| !f.is_empty()).unwrap_or("0"),
        exponent.unwrap_or("0"),
    );
    finite_float(&normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Node {
        match load(text, Format::Json, &Limits::default()) {
            Ok(node) => node,
            Err(e) => panic!("unexpected error {e:?} for {text:?}"),
        }
    }

    fn yaml(text: &str) -> Node {
        match load(text, Format::Yaml, &Limits::default()) {
            Ok(node) => node,
            Err(e) => panic!("unexpected error {e:?} for {text:?}"),
        }
    }

    fn json_err(text: &str) -> SyntaxError {
        load_json(text, &Limits::default()).expect_err("expected a syntax error")
    }

    fn yaml_err(text: &str) -> SyntaxError {
        load_yaml(text, &Limits::default()).expect_err("expected a syntax error")
    }

    fn src(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    fn entries(node: &Node) -> &[Entry] {
        match &node.kind {
            NodeKind::Map(entries) => entries,
            other => panic!("expected a map, got {other:?}"),
        }
    }

    fn items(node: &Node) -> &[Node] {
        match &node.kind {
            NodeKind::List(items) => items,
            other => panic!("expected a list, got {other:?}"),
        }
    }

    fn get<'n>(node: &'n Node, key: &str) -> &'n Node {
        match entries(node).iter().find(|e| e.key == key) {
            Some(entry) => &entry.value,
            None => panic!("no key {key}"),
        }
    }

    fn str_node(s: &str) -> NodeKind {
        NodeKind::Str(s.to_string())
    }

    #[test]
    fn json_spans_of_keys_and_values() {
        let text = r#"{ "name": "web", "ports": [80, 443], "tls": {"on": true}, "x": null }"#;
        let root = json(text);
        assert_eq!(src(text, root.span), text);
        let e = entries(&root);
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].key, "name");
        assert_eq!(src(text, e[0].key_span), r#""name""#);
        assert_eq!(src(text, e[0].value.span), r#""web""#);
        assert_eq!(e[0].value.kind, str_node("web"));
        assert_eq!(src(text, e[1].value.span), "[80, 443]");
        let ports = items(&e[1].value);
        assert_eq!(src(text, ports[1].span), "443");
        assert_eq!(ports[1].kind, NodeKind::Int(443));
        assert_eq!(src(text, e[2].value.span), r#"{"on": true}"#);
        assert_eq!(get(&e[2].value, "on").kind, NodeKind::Bool(true));
        assert_eq!(src(text, e[3].value.span), "null");
        assert_eq!(e[3].value.kind, NodeKind::Null);
    }

    #[test]
    fn json_non_ascii_before_value_and_escapes() {
        let text = "{\"é😀\": \"caf\\u00e9 😀\", \"k\": 12}";
        let root = json(text);
        let e = entries(&root);
        assert_eq!(e[0].key, "é😀");
        assert_eq!(src(text, e[0].key_span), "\"é😀\"");
        assert_eq!(e[0].value.kind, str_node("café 😀"));
        assert_eq!(src(text, e[0].value.span), "\"caf\\u00e9 😀\"");
        assert_eq!(src(text, e[1].value.span), "12");
    }

    #[test]
    fn json_bom_is_skipped() {
        let text = "\u{feff}{\"a\": 1}";
        let root = json(text);
        assert_eq!(src(text, root.span), "{\"a\": 1}");
        assert_eq!(src(text, entries(&root)[0].value.span), "1");
        let err = json_err("\u{feff}{\"a\" 1}");
        assert_eq!(err.span.start, 8);
    }

    #[test]
    fn json_duplicate_keys_are_kept_in_order() {
        let text = r#"{"a": 1, "b": 2, "a": 3}"#;
        let root = json(text);
        let keys: Vec<_> = entries(&root).iter().map(|e| (e.key.as_str(), e.value.kind.clone())).collect();
        assert_eq!(keys, [("a", NodeKind::Int(1)), ("b", NodeKind::Int(2)), ("a", NodeKind::Int(3))]);
        assert_eq!(entries(&root)[2].key_span.start, 17);
    }

    #[test]
    fn json_numbers() {
        let root = json("[0, -0, 1.5, -2e3, 9223372036854775807, 9223372036854775808, 1e-400]");
        let kinds: Vec<_> = items(&root).iter().map(|n| n.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                NodeKind::Int(0),
                NodeKind::Int(0),
                NodeKind::Float(1.5),
                NodeKind::Float(-2000.0),
                NodeKind::Int(i64::MAX),
                NodeKind::BigInt("9223372036854775808".into()),
                NodeKind::Float(0.0),
            ]
        );
        let err = json_err("[1, 1e400]");
        assert_eq!(err.message, "number `1e400` is out of range");
        assert_eq!(err.span, Span { start: 4, end: 9 });
    }

    #[test]
    fn json_syntax_errors_are_located() {
        let err = json_err("{\n  \"a\": \n}");
        assert_eq!(err.span.start, 10, "{err:?}");
        assert!(!err.message.is_empty());
        assert!(err.message.starts_with(char::is_lowercase), "{err:?}");
        assert!(!err.message.ends_with('.'));

        let err = json_err("[1, 2");
        assert_eq!(err.message, "unterminated array");
        assert_eq!(err.span.start, 0);

        let err = json_err("\"abc");
        assert_eq!(err.message, "unterminated string");

        let err = json_err("[1] [2]");
        assert_eq!(err.span.start, 4);
    }

    #[test]
    fn json_extensions_are_rejected() {
        let cases = [
            ("[1, 2,]", 5),
            ("{\"a\": 1,}", 7),
            ("[1] // c", 4),
            ("/* c */ [1]", 0),
            ("{a: 1}", 1),
            ("['a']", 1),
            ("[0x10]", 1),
            ("[+1]", 1),
            ("[.5]", 1),
            ("[5.]", 1),
            ("[NaN]", 1),
            ("[-Infinity]", 1),
            ("[1 2]", 2),
            ("[\"\\x41\"]", 2),
        ];
        for (text, at) in cases {
            let err = json_err(text);
            assert_eq!(err.span.start, at, "{text}: {err:?}");
        }
        assert_eq!(json_err("[1, 2,]").message, "trailing commas are not allowed");
        assert_eq!(json_err("[1] // c").message, "comments are not allowed");
        assert_eq!(json_err("[NaN ]").message, "unexpected word `NaN`");
        assert_eq!(json_err("[NaN]").message, "unexpected token `NaN`");
        assert_eq!(json_err("[\0]").message, "unexpected token `\\0`");
    }

    #[test]
    fn json_rejects_nul_control_characters_and_odd_whitespace() {
        let err = json_err("[1,\0 2]");
        assert_eq!(err.span.start, 3);
        let err = json_err("[\"a\tb\"]");
        assert_eq!(err.message, "unescaped control character `U+0009` in string");
        assert_eq!(err.span, Span { start: 3, end: 4 });
        let err = json_err("[1,\u{a0}2]");
        assert_eq!(err.message, "unexpected whitespace character `U+00A0`");
        assert_eq!(err.span, Span { start: 3, end: 5 });
        let err = json_err("[1,\u{b}2]");
        assert_eq!(err.span.start, 3);
        // An earlier syntax error wins over a later strictness problem.
        let err = json_err("[1,, \"\t\"]");
        assert_eq!(err.span.start, 3);
        // Escaped control characters are fine.
        assert_eq!(json("\"a\\u0000\\t\"").kind, str_node("a\0\t"));
    }

    #[test]
    fn json_conversion_checks_depth_too() {
        let parsed = parse_to_ast("[[1]]", &CollectOptions::default(), &strict_json_options());
        let value = parsed.ok().and_then(|p| p.value).expect("valid JSON");
        let err = json_node(value, 3, 0, 1).expect_err("too deep");
        assert_eq!(err.span, Span { start: 4, end: 5 });
    }

    #[test]
    fn json_empty_document() {
        assert_eq!(json_err("").message, "the document is empty");
        assert_eq!(json_err(" \n\t").message, "the document is empty");
    }

    #[test]
    fn json_deep_nesting_is_refused() {
        let deep = "[".repeat(100_000);
        let err = json_err(&deep);
        assert_eq!(err.message, "nesting deeper than 128 levels");
        assert_eq!(err.span, Span { start: 128, end: 129 });

        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(json_err(&deep).message, "nesting deeper than 128 levels");

        let deep = "{\"a\":".repeat(100_000);
        assert_eq!(json_err(&deep).message, "nesting deeper than 128 levels");

        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        json(&ok);
        let over = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(json_err(&over).span.start, 128);

        // Brackets inside strings do not count.
        let text = format!("[\"{}\"]", "[".repeat(1000));
        json(&text);

        let limits = Limits { max_depth: 2, ..Limits::default() };
        let err = load("[[[1]]]", Format::Json, &limits).expect_err("too deep");
        assert_eq!(err.message, "nesting deeper than 2 levels");
    }

    #[test]
    fn yaml_spans_of_keys_and_values() {
        let text = "name: web\nports:\n  - 80\n  - \"443\"\nflow: {a: [1, 2], 'b': x}\nempty:\nlast: end\n";
        let root = yaml(text);
        let e = entries(&root);
        assert_eq!(src(text, root.span), text.trim_end());
        assert_eq!(e[0].key, "name");
        assert_eq!(src(text, e[0].key_span), "name");
        assert_eq!(src(text, e[0].value.span), "web");
        assert_eq!(src(text, e[1].value.span), "- 80\n  - \"443\"");
        let ports = items(&e[1].value);
        assert_eq!(ports[0].kind, NodeKind::Int(80));
        assert_eq!(src(text, ports[1].span), "\"443\"");
        assert_eq!(ports[1].kind, str_node("443"));
        assert_eq!(src(text, e[2].value.span), "{a: [1, 2], 'b': x}");
        let flow = entries(&e[2].value);
        assert_eq!(src(text, flow[0].value.span), "[1, 2]");
        assert_eq!(flow[1].key, "b");
        assert_eq!(src(text, flow[1].key_span), "'b'");
        assert_eq!(e[3].value.kind, NodeKind::Null);
        assert_eq!(e[3].value.span.start, e[3].value.span.end);
        assert_eq!(src(text, e[4].value.span), "end");
    }

    #[test]
    fn yaml_block_scalars_and_properties() {
        let text = "a: |\n  one\n  two\n\n\nb: &x !!str 12\nc: &y\n  k: v\nd: !!map {k: v}\n";
        let root = yaml(text);
        let a = get(&root, "a");
        assert_eq!(a.kind, str_node("one\ntwo\n"));
        assert_eq!(src(text, a.span), "one\n  two");
        let b = get(&root, "b");
        assert_eq!(b.kind, str_node("12"));
        assert_eq!(src(text, b.span), "12");
        assert_eq!(src(text, get(&root, "c").span), "k: v");
        assert_eq!(src(text, get(&root, "d").span), "{k: v}");
    }

    #[test]
    fn yaml_non_ascii_before_value() {
        let text = "# é😀 comment 😀\ntitle: \"é😀\" # 😀 é\nnext: café😀\nafter: 3\nlist: [é, 😀, x]\n";
        let root = yaml(text);
        let e = entries(&root);
        assert_eq!(src(text, e[0].key_span), "title");
        assert_eq!(src(text, e[0].value.span), "\"é😀\"");
        assert_eq!(src(text, e[1].value.span), "café😀");
        assert_eq!(e[1].value.kind, str_node("café😀"));
        assert_eq!(src(text, e[2].key_span), "after");
        assert_eq!(src(text, e[2].value.span), "3");
        let list = items(&e[3].value);
        assert_eq!(src(text, list[1].span), "😀");
        assert_eq!(src(text, list[2].span), "x");
    }

    #[test]
    fn yaml_quoted_scalar_spans_stop_at_the_closing_quote() {
        let text = "a: 'x''y'  # c\nb: \"m\\\"n\"   \nc: [\"p\"  , 'q' ]\nd: \"multi\n  line\"  # c\n";
        let root = yaml(text);
        assert_eq!(get(&root, "a").kind, str_node("x'y"));
        assert_eq!(src(text, get(&root, "a").span), "'x''y'");
        assert_eq!(get(&root, "b").kind, str_node("m\"n"));
        assert_eq!(src(text, get(&root, "b").span), "\"m\\\"n\"");
        let c = items(get(&root, "c"));
        assert_eq!(src(text, c[0].span), "\"p\"");
        assert_eq!(src(text, c[1].span), "'q'");
        assert_eq!(src(text, get(&root, "c").span), "[\"p\"  , 'q' ]");
        assert_eq!(src(text, get(&root, "d").span), "\"multi\n  line\"");
    }

    #[test]
    fn yaml_bom_and_crlf() {
        let text = "\u{feff}a: 1\r\nb: é\r\n";
        let root = yaml(text);
        let e = entries(&root);
        assert_eq!(src(text, e[0].key_span), "a");
        assert_eq!(src(text, e[1].value.span), "é");
    }

    #[test]
    fn yaml_scalar_types() {
        let text = "[\"1.0\", 1.0, K1, ~, null, '', true, False, 12, -3, +4, 0o17, 0x1F, .inf, -.Inf, .nan, 1e3, .5, 1., yes, 'true', 007, 9223372036854775808, 0x, 1_000, '12']";
        let root = yaml(text);
        let kinds: Vec<_> = items(&root).iter().map(|n| n.kind.clone()).collect();
        let expected = [
            str_node("1.0"),
            NodeKind::Float(1.0),
            str_node("K1"),
            NodeKind::Null,
            NodeKind::Null,
            str_node(""),
            NodeKind::Bool(true),
            NodeKind::Bool(false),
            NodeKind::Int(12),
            NodeKind::Int(-3),
            NodeKind::Int(4),
            NodeKind::Int(15),
            NodeKind::Int(31),
            NodeKind::Float(f64::INFINITY),
            NodeKind::Float(f64::NEG_INFINITY),
        ];
        assert_eq!(kinds[..expected.len()], expected);
        assert!(matches!(kinds[15], NodeKind::Float(f) if f.is_nan()));
        let rest = [
            NodeKind::Float(1000.0),
            NodeKind::Float(0.5),
            NodeKind::Float(1.0),
            str_node("yes"),
            str_node("true"),
            NodeKind::Int(7),
            NodeKind::BigInt("9223372036854775808".into()),
            str_node("0x"),
            str_node("1_000"),
            str_node("12"),
        ];
        assert_eq!(kinds[16..], rest);

        let literal = yaml("|\n  1.0\n");
        assert_eq!(literal.kind, str_node("1.0\n"));
        // Integers past 64 bits are exact; a hexadecimal or octal one is read within 128 bits.
        assert_eq!(yaml("0xFFFFFFFFFFFFFFFFFF").kind, NodeKind::BigInt("4722366482869645213695".into()));
        assert_eq!(yaml("-00018446744073709551617").kind, NodeKind::BigInt("-18446744073709551617".into()));
        assert_eq!(yaml("!!float 18446744073709551617").kind, NodeKind::Float(18_446_744_073_709_551_617.0));
        let err = yaml_err("a: 0x100000000000000000000000000000000");
        assert_eq!(err.message, "number `0x100000000000000000000000000000000` is out of range");
        assert_eq!(err.span.start, 3);
        assert_eq!(yaml_err("a: 1e400").message, "number `1e400` is out of range");
    }

    #[test]
    fn yaml_keys() {
        let text = "1: one\n\"q k\": two\n~: three\ntrue: four\n";
        let root = yaml(text);
        let keys: Vec<_> = entries(&root).iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["1", "q k", "~", "true"]);
        assert_eq!(src(text, entries(&root)[1].key_span), "\"q k\"");

        let err = yaml_err("? [1, 2]\n: x\n");
        assert_eq!(err.message, "a mapping key must be a scalar");
        assert_eq!(err.span, Span { start: 2, end: 8 });
        let err = yaml_err("{{a: 1}: x}");
        assert_eq!(err.message, "a mapping key must be a scalar");
        assert_eq!(err.span, Span { start: 1, end: 7 });
    }

    #[test]
    fn yaml_duplicate_keys_are_kept_in_order() {
        let root = yaml("a: 1\nb: 2\na: 3\n<<: {c: 4}\n");
        let keys: Vec<_> = entries(&root).iter().map(|e| (e.key.as_str(), e.value.kind.clone())).collect();
        assert_eq!(keys[..3], [("a", NodeKind::Int(1)), ("b", NodeKind::Int(2)), ("a", NodeKind::Int(3))]);
        assert_eq!(keys[3].0, "<<");
    }

    #[test]
    fn yaml_aliases_are_expanded() {
        let text = "base: &b {x: 1, y: [2]}\nname: &n web\nuse: *b\nagain: *n\n*n : key\n";
        let root = yaml(text);
        let e = entries(&root);
        let used = get(&root, "use");
        assert_eq!(src(text, used.span), "*b");
        assert_eq!(used.kind, get(&root, "base").kind);
        assert_eq!(src(text, entries(used)[0].value.span), "1");
        let again = get(&root, "again");
        assert_eq!(again.kind, str_node("web"));
        assert_eq!(src(text, again.span), "*n");
        assert_eq!(e[4].key, "web");
        assert_eq!(src(text, e[4].key_span), "*n");

        let err = yaml_err("a: *nope, x");
        assert_eq!(err.message, "unknown YAML alias `*nope`");
        assert_eq!(err.span.start, 3);
        let err = yaml_err("a: &r [1, *r]");
        assert_eq!(err.message, "YAML alias `*r` refers to a node that contains it");
        assert_eq!(src("a: &r [1, *r]", err.span), "*r");
        let err = yaml_err("a: &k [1]\n*k : x\n");
        assert_eq!(err.message, "a mapping key must be a scalar");
    }

    #[test]
    fn yaml_alias_bomb_is_refused() {
        let text = "\
a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
";
        let started = std::time::Instant::now();
        let err = yaml_err(text);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(err.message, "YAML alias expansion exceeds 10000 nodes");
        assert_eq!(src(text, err.span), "*d");

        let limits = Limits { max_alias_expansions: 5, ..Limits::default() };
        let err = load("a: &a [1, 2]\nb: *a\nc: *a\n", Format::Yaml, &limits).expect_err("cap");
        assert_eq!(err.message, "YAML alias expansion exceeds 5 nodes");
        assert_eq!(err.span.start, 22);
    }

    #[test]
    fn yaml_aliases_cannot_exceed_depth() {
        let limits = Limits { max_depth: 3, ..Limits::default() };
        let text = "a: &a [1]\nb: [*a]\nc: [[*a]]\n";
        let err = load(text, Format::Yaml, &limits).expect_err("too deep");
        assert_eq!(err.message, "nesting deeper than 3 levels");
        assert_eq!(src(text, err.span), "*a");
        assert_eq!(err.span.start, 23);
    }

    #[test]
    fn yaml_deep_nesting_is_refused() {
        for deep in [
            "[".repeat(100_000),
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
            "{a: ".repeat(100_000),
            format!("{}x", "- ".repeat(100_000)),
        ] {
            let err = yaml_err(&deep);
            assert_eq!(err.message, "nesting deeper than 128 levels");
        }
        let err = yaml_err(&"[".repeat(200));
        assert_eq!(err.message, "nesting deeper than 128 levels");
        assert_eq!(err.span, Span { start: 128, end: 129 });
        yaml(&format!("{}{}", "[".repeat(128), "]".repeat(128)));
        let mut nested = String::new();
        for level in 0..200 {
            nested.push_str(&" ".repeat(level));
            nested.push_str("k:\n");
        }
        assert_eq!(yaml_err(&nested).message, "nesting deeper than 128 levels");
    }

    #[test]
    fn yaml_documents() {
        assert_eq!(yaml_err("").message, "the document is empty");
        assert_eq!(yaml_err("# just a comment\n").message, "the document is empty");
        assert_eq!(yaml_err("\n\n").message, "the document is empty");
        assert_eq!(yaml("---\n").kind, NodeKind::Null);
        assert_eq!(yaml("--- a\n...\n").kind, str_node("a"));

        let text = "a: 1\n---\nb: 2\n";
        let err = yaml_err(text);
        assert_eq!(err.message, "more than one YAML document");
        assert_eq!(src(text, err.span), "---");
        let err = yaml_err("a\n...\nb\n");
        assert_eq!(err.message, "more than one YAML document");
        assert_eq!(err.span.start, 6);
    }

    #[test]
    fn yaml_tags() {
        let text = "a: !custom 5\n";
        let err = yaml_err(text);
        assert_eq!(err.message, "unsupported YAML tag `!custom`");
        assert_eq!(src(text, err.span), "!custom");
        let text = "a: &x !custom [1]\n";
        let err = yaml_err(text);
        assert_eq!(src(text, err.span), "!custom");
        assert_eq!(yaml_err("!!binary aGk=").message, "unsupported YAML tag `!!binary`");
        assert_eq!(yaml_err("!!str [1]").message, "YAML tag `!!str` cannot be used on a sequence");
        assert_eq!(yaml_err("!!int abc").message, "`abc` is not a valid `!!int`");
        assert_eq!(yaml("!!int \"12\"").kind, NodeKind::Int(12));
        assert_eq!(yaml("!!float 1").kind, NodeKind::Float(1.0));
        assert_eq!(yaml("!!str true").kind, str_node("true"));
        assert_eq!(yaml("! 12").kind, str_node("12"));
        assert_eq!(yaml("!<tag:yaml.org,2002:str> 12").kind, str_node("12"));
        assert_eq!(yaml("!!null ~").kind, NodeKind::Null);
        let text = "x: !!seq\n  - 1\n";
        assert_eq!(src(text, get(&yaml(text), "x").span), "- 1");
    }

    #[test]
    fn yaml_syntax_errors_are_located() {
        let text = "a: 1\nb: [1, 2\n";
        let err = yaml_err(text);
        assert!(err.message.starts_with(char::is_lowercase), "{err:?}");
        assert!(err.span.start >= 10, "{err:?}");
        let text = "k: é\na: b: c\n";
        let err = yaml_err(text);
        assert_eq!(err.span, Span { start: 10, end: 11 }, "{err:?}");
        let err = yaml_err("a: 1\n\0");
        assert_eq!(err.span.start, 5);
        let err = yaml_err("a: \"é");
        assert!(err.span.end <= 6);
    }

    #[test]
    fn format_from_path() {
        assert_eq!(format_for_path("x/binding.json"), Some(Format::Json));
        assert_eq!(format_for_path("binding.yaml"), Some(Format::Yaml));
        assert_eq!(format_for_path("a.b/binding.YML"), Some(Format::Yaml));
        assert_eq!(format_for_path("binding.toml"), None);
        assert_eq!(format_for_path("json"), None);
        assert_eq!(format_for_path(""), None);
    }

    /// Checks every span in the tree indexes the text on character boundaries.
    fn check_spans(text: &str, node: &Node) {
        assert!(text.get(node.span.start..node.span.end).is_some(), "{node:?}");
        match &node.kind {
            NodeKind::List(items) => items.iter().for_each(|n| check_spans(text, n)),
            NodeKind::Map(entries) => {
                for e in entries {
                    assert!(text.get(e.key_span.start..e.key_span.end).is_some());
                    check_spans(text, &e.value);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn mangled_input_never_panics() {
        let seeds = [
            "{\"a\": [1, 2.5, {\"é\": null}], \"b\": \"x\\u00e9\", \"c\": true}",
            "a: &x [1, {b: 'c'}]\nd: *x\ne: |\n  é😀\nf: !!str 1\n? [k]\n: v\n- - x\n",
            "--- !t\n%YAML 1.2\n...\n\"\\x\" &a *a [{]}: #\t\r\n",
        ];
        let alphabet: Vec<char> = "{}[]:,\"'\\-?&*!|>#%@` \t\n\r0aé😀\u{feff}\0.e+".chars().collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..3000 {
            let seed = seeds[round % seeds.len()];
            let mut chars: Vec<char> = seed.chars().collect();
            for _ in 0..(1 + next() % 6) {
                let at = (next() as usize) % (chars.len() + 1);
                let c = alphabet[(next() as usize) % alphabet.len()];
                match next() % 3 {
                    0 => chars.insert(at, c),
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ if at < chars.len() => chars[at] = c,
                    _ => chars.push(c),
                }
            }
            let text: String = chars.into_iter().collect();
            for result in [load_json(&text, &Limits::default()), load_yaml(&text, &Limits::default())] {
                match result {
                    Ok(node) => check_spans(&text, &node),
                    Err(e) => {
                        assert!(text.get(e.span.start..e.span.end).is_some(), "{e:?} {text:?}");
                        assert!(!e.message.is_empty() && !e.message.ends_with('.'));
                    }
                }
            }
        }
    }
}
