//! From source text to a [`SourceFile`]. Parsing never fails: a broken item
//! becomes a [`ParseError`] and the items around it are still returned.

use pest::Parser as _;
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest_derive::Parser;
use std::sync::LazyLock;

use crate::ast::*;

#[derive(Parser)]
#[grammar = "grail.pest"]
struct GrailParser;

/// A syntax error: a message (lower case, no final period) and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub span: Span,
}

/// The result of parsing one file: every item that parsed, and the errors of
/// the ones that did not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub file: SourceFile,
    pub errors: Vec<ParseError>,
}

/// The words that start a top-level item. An item starts in column 0.
pub const ITEM_KEYWORDS: [&str; 9] =
    ["enum", "record", "document", "matrix", "fn", "rule", "layers", "question", "table"];

/// Parses a whole file, recovering at every top-level item.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for chunk in item_chunks(text) {
        let source = &text[chunk.start..chunk.end];
        if chunk.is_item {
            match parse_item(source, chunk.start) {
                Ok(item) => parsed.file.items.push(item),
                Err(error) => parsed.errors.push(error),
            }
        } else if let Some(span) = stray_text(source, chunk.start) {
            parsed.errors.push(ParseError {
                message: format!(
                    "expected an item (one of {}) at the start of a line",
                    ITEM_KEYWORDS.map(|k| format!("`{k}`")).join(", ")
                ),
                span,
            });
        }
    }
    parsed
}

struct Chunk {
    start: usize,
    end: usize,
    is_item: bool,
}

/// Cuts the text before every line that starts an item (with the `///`
/// documentation lines right above it).
fn item_chunks(text: &str) -> Vec<Chunk> {
    let mut line_starts = vec![0];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    line_starts.retain(|&s| s < text.len());

    let line = |i: usize| -> &str {
        let start = line_starts[i];
        let end = line_starts.get(i + 1).copied().unwrap_or(text.len());
        &text[start..end]
    };
    let starts_item = |l: &str| {
        ITEM_KEYWORDS.iter().any(|k| {
            l.strip_prefix(k).is_some_and(|rest| rest.starts_with(|c: char| c.is_whitespace()) || rest.is_empty())
        })
    };

    let mut cuts = Vec::new();
    for i in 0..line_starts.len() {
        if starts_item(line(i)) {
            let mut first = i;
            while first > 0 && line(first - 1).starts_with("///") {
                first -= 1;
            }
            cuts.push(line_starts[first]);
        }
    }

    let mut chunks = Vec::new();
    let first_cut = cuts.first().copied().unwrap_or(text.len());
    if first_cut > 0 {
        chunks.push(Chunk { start: 0, end: first_cut, is_item: false });
    }
    for (n, &start) in cuts.iter().enumerate() {
        let end = cuts.get(n + 1).copied().unwrap_or(text.len());
        chunks.push(Chunk { start, end, is_item: true });
    }
    chunks
}

/// The first text that is neither blank nor a comment, if any.
fn stray_text(source: &str, offset: usize) -> Option<Span> {
    let mut at = 0;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim();
        if !trimmed.is_empty() && !trimmed.starts_with("//") {
            let lead = line.len() - line.trim_start().len();
            let start = offset + at + lead;
            return Some(Span::new(start, start + line.trim_end().len() - lead));
        }
        at += line.len();
    }
    None
}

/// The deepest an item's syntax may nest: each expression node, clause and
/// declaration is one level, and each operator of an expression one more.
/// The builder, the lowering and every later walk recurse over the tree, so
/// this bounds their stack; real items stay far below it (the shipped
/// library's deepest is under 40).
pub const MAX_NESTING: usize = 256;

/// The most steps pest may take on one item. PEG parsing backtracks: an
/// unclosed bracket deep in an expression can make it retry every
/// alternative at every level, which is exponential. The shipped library's
/// largest item takes a few thousand steps.
pub const MAX_PARSE_STEPS: usize = 2_000_000;

fn parse_item(source: &str, offset: usize) -> Result<Item, ParseError> {
    pest::set_call_limit(std::num::NonZeroUsize::new(MAX_PARSE_STEPS));
    let mut pairs = GrailParser::parse(Rule::file_item, source).map_err(|e| to_error(e, source, offset))?;
    let b = Builder { offset };
    let pair = pairs
        .next()
        .ok_or_else(|| ParseError { message: "expected an item".into(), span: Span::new(offset, offset) })?;
    check_nesting(&pair, offset)?;
    Ok(b.item(pair))
}

/// Refuses an item nested deeper than [`MAX_NESTING`], before the recursive
/// builder sees it. Walks pest's flat pre-order list of pairs with a stack of
/// open ends, so the walk itself does not recurse.
fn check_nesting(item: &Pair<'_, Rule>, offset: usize) -> Result<(), ParseError> {
    // Each operator is one more level of the tree the Pratt parser builds.
    let is_operator =
        |r: Rule| is_infix(r) || matches!(r, Rule::not_op | Rule::field_access | Rule::index | Rule::call_args);
    // (end of the pair, nesting inside it)
    let mut open: Vec<(usize, usize)> = Vec::new();
    for pair in item.clone().into_inner().flatten() {
        let span = pair.as_span();
        while open.last().is_some_and(|(end, _)| *end <= span.start()) {
            open.pop();
        }
        let mut depth = open.last().map_or(1, |(_, d)| *d) + 1;
        if pair.as_rule() == Rule::expr {
            depth += pair.clone().into_inner().filter(|p| is_operator(p.as_rule())).count();
        }
        if depth > MAX_NESTING {
            let at = offset + span.start();
            let width = span.as_str().chars().next().map_or(0, char::len_utf8);
            return Err(ParseError {
                message: format!("this item nests deeper than {MAX_NESTING} levels"),
                span: Span::new(at, at + width),
            });
        }
        open.push((span.end(), depth));
    }
    Ok(())
}

fn to_error(error: pest::error::Error<Rule>, source: &str, offset: usize) -> ParseError {
    use pest::error::{ErrorVariant, InputLocation};
    let span = match error.location {
        // A position is shown as the character there, if any.
        InputLocation::Pos(p) => {
            // The word there, or its one character.
            let rest = source.get(p..).unwrap_or_default();
            let word = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let width = if word > 0 { word } else { rest.chars().next().map_or(0, char::len_utf8) };
            Span::new(offset + p, offset + p + width)
        }
        InputLocation::Span((a, b)) => Span::new(offset + a, offset + b),
    };
    let mut span = span;
    let at = span.start - offset;
    if source.get(at..).is_some_and(|rest| rest.trim().is_empty()) {
        // At the end of the item: point just after its last word, not at the next line.
        let end = offset + source.trim_end().len();
        span = Span::new(end, end);
    }
    let message = match &error.variant {
        ErrorVariant::ParsingError { .. } if unclosed_string(source, at) => {
            "this string is not closed: a string ends with `\"` on the line it starts".to_string()
        }
        ErrorVariant::ParsingError { positives, negatives: _ } => {
            let mut wanted: Vec<&str> = positives.iter().filter_map(|r| describe(*r)).collect();
            wanted.sort_unstable();
            wanted.dedup();
            let found = found(source, at);
            match wanted.len() {
                0 => format!("unexpected {found}"),
                1 => format!("expected {}, found {found}", wanted[0]),
                _ => {
                    let last = wanted.pop().unwrap_or_default();
                    format!("expected {} or {}, found {found}", wanted.join(", "), last)
                }
            }
        }
        ErrorVariant::CustomError { message } if message.contains("call limit") => {
            format!("this item takes more than {MAX_PARSE_STEPS} steps to parse; look for an unclosed bracket")
        }
        ErrorVariant::CustomError { message } if message.contains("stack limit") => {
            format!("this item nests deeper than {MAX_NESTING} levels")
        }
        ErrorVariant::CustomError { message } => message.clone(),
    };
    ParseError { message, span }
}

/// What stands at byte `at` of an item, for "found ...": a word or a
/// character in backticks, "the keyword `in`", or "the end of the item".
fn found(source: &str, at: usize) -> String {
    let rest = source.get(at..).unwrap_or_default();
    let Some(first) = rest.chars().next() else { return "the end of the item".into() };
    if rest.trim().is_empty() {
        return "the end of the item".into();
    }
    let word: String = if first.is_ascii_alphanumeric() || first == '_' {
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
    } else {
        first.to_string()
    };
    let shown: String = word.chars().take(40).flat_map(char::escape_debug).collect();
    if RESERVED.contains(&word.as_str()) { format!("the keyword `{shown}`") } else { format!("`{shown}`") }
}

/// Whether the line up to byte `at` holds a `"` that is not closed (outside
/// a `//` comment).
fn unclosed_string(source: &str, at: usize) -> bool {
    let Some(before) = source.get(..at) else { return false };
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let rest_of_line = source.get(at..).and_then(|r| r.split('\n').next()).unwrap_or_default();
    let mut open = false;
    let mut chars = line.chars().chain(rest_of_line.chars()).peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if open => {
                chars.next();
            }
            '"' => open = !open,
            '/' if !open && chars.peek() == Some(&'/') => return false,
            _ => {}
        }
    }
    open
}

/// The binary operators of expressions.
fn is_infix(r: Rule) -> bool {
    matches!(
        r,
        Rule::coalesce
            | Rule::or_op
            | Rule::and_op
            | Rule::eq
            | Rule::ne
            | Rule::le
            | Rule::ge
            | Rule::lt
            | Rule::gt
            | Rule::not_in
            | Rule::in_op
            | Rule::tighter
            | Rule::looser
            | Rule::concat
            | Rule::add
            | Rule::sub
            | Rule::mul
    )
}

/// What a grammar rule is called in an error message.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::ident | Rule::named_type => "a name",
        Rule::rule_id => "a rule identifier such as `topology.checker_count`",
        Rule::string | Rule::template => "a string",
        Rule::int => "an integer",
        Rule::bool => "`true` or `false`",
        Rule::expr => "an expression",
        Rule::enum_order => "`tightest_first` or `ordered`",
        Rule::variant => "a variant",
        Rule::identity => "`identity`",
        Rule::selector => "`where KEY absent`, `where KEY present` or `where KEY == \"value\"`",
        Rule::key_test => "`KEY absent`, `KEY present` or `KEY == \"value\"`",
        Rule::check_rule => "`on`",
        Rule::check_kind => "`syntax`, `duplicate_key`, `unknown_key` or `type`",
        Rule::forbid => "`forbid`",
        Rule::field | Rule::field_name => "a field",
        Rule::optional_mark => "`?`",
        Rule::type_expr | Rule::map_type | Rule::list_type | Rule::int_type => "a type",
        Rule::default_clause => "`default`",
        Rule::bound_clause | Rule::bound_kind => "`floor` or `ceiling`",
        Rule::unique_clause => "`unique`",
        Rule::columns => "`columns`",
        Rule::column_decl => "a column",
        Rule::row | Rule::row_key => "a row",
        Rule::cell => "a cell value",
        Rule::for_clause => "`for`",
        Rule::when_clause => "`when`",
        Rule::let_clause => "`let`",
        Rule::require_clause => "`require`",
        Rule::at_clause => "`at`",
        Rule::else_kw => "`else`",
        Rule::outcome => "`fail` or `unknown`",
        Rule::pattern | Rule::pair_pattern => "a name to bind",
        Rule::field_access => "`.`",
        Rule::index => "`[`",
        r if is_infix(r) => "an operator",
        Rule::layers_decl => "an item",
        Rule::layer_line => "`layer`",
        Rule::only_line => "`only`",
        Rule::free_line => "`any layer sets`",
        Rule::claim_line => "`claimed by`",
        Rule::standalone_line => "`standalone`",
        Rule::separate_line => "`separate`",
        Rule::trusted_line => "`trusted from`",
        Rule::invalid_clause => "`invalid rule`",
        Rule::lines_clause => "`lines into`",
        Rule::or_null => "`or null`",
        Rule::or_one => "`or one`",
        Rule::complete_clause => "`complete`",
        Rule::markdown_selector => "`in markdown after`",
        Rule::given_selector => "`given`",
        Rule::list_clause => "`list into`",
        Rule::unreadable_clause => "`on unreadable missing`",
        Rule::question_decl => "an item",
        Rule::question_var => "`for`",
        Rule::table_decl => "an item",
        Rule::table_row => "`row`",
        Rule::table_column => "`column`",
        Rule::table_detail => "`detail`",
        Rule::table_line => "`line`",
        Rule::at_most_one => "`at most one per deployment`",
        Rule::request_attr | Rule::request_side => "`principal.NAME` or `resource.NAME`",
        Rule::ref_type => "a type",
        Rule::EOI => "the end of the item",
        Rule::enum_decl
        | Rule::record_decl
        | Rule::document_decl
        | Rule::matrix_decl
        | Rule::fn_decl
        | Rule::rule_decl => "an item",
        _ => return None,
    })
}

static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::or_op, Assoc::Left))
        .op(Op::infix(Rule::and_op, Assoc::Left))
        .op(Op::prefix(Rule::not_op))
        .op(Op::infix(Rule::eq, Assoc::Left)
            | Op::infix(Rule::ne, Assoc::Left)
            | Op::infix(Rule::lt, Assoc::Left)
            | Op::infix(Rule::le, Assoc::Left)
            | Op::infix(Rule::gt, Assoc::Left)
            | Op::infix(Rule::ge, Assoc::Left)
            | Op::infix(Rule::in_op, Assoc::Left)
            | Op::infix(Rule::not_in, Assoc::Left)
            | Op::infix(Rule::tighter, Assoc::Left)
            | Op::infix(Rule::looser, Assoc::Left))
        .op(Op::infix(Rule::coalesce, Assoc::Left))
        .op(Op::infix(Rule::add, Assoc::Left)
            | Op::infix(Rule::sub, Assoc::Left)
            | Op::infix(Rule::concat, Assoc::Left))
        .op(Op::infix(Rule::mul, Assoc::Left))
        .op(Op::postfix(Rule::field_access) | Op::postfix(Rule::index) | Op::postfix(Rule::call_args))
});

/// Builds the tree from pest pairs. The grammar guarantees the shape of every
/// pair, so the accessors below only meet the children the grammar allows.
struct Builder {
    offset: usize,
}

impl Builder {
    fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(self.offset + s.start(), self.offset + s.end())
    }

    fn name(&self, pair: Pair<'_, Rule>) -> Name {
        Name { text: pair.as_str().to_string(), span: self.span(&pair) }
    }

    /// A name from an `ident | string` choice: the string's contents.
    fn name_or_string(&self, pair: Pair<'_, Rule>) -> Name {
        let span = self.span(&pair);
        let inner = pair.into_inner().next();
        match inner {
            Some(p) if p.as_rule() == Rule::string => Name { text: unescape(string_body(&p)), span },
            Some(p) => Name { text: p.as_str().to_string(), span },
            None => Name { text: String::new(), span },
        }
    }

    fn item(&self, pair: Pair<'_, Rule>) -> Item {
        match pair.as_rule() {
            Rule::enum_decl => Item::Enum(self.enum_decl(pair)),
            Rule::record_decl => Item::Record(self.record_decl(pair)),
            Rule::document_decl => Item::Document(self.document_decl(pair)),
            Rule::matrix_decl => Item::Matrix(self.matrix_decl(pair)),
            Rule::fn_decl => Item::Fn(self.fn_decl(pair)),
            Rule::layers_decl => Item::Layers(self.layers_decl(pair)),
            Rule::question_decl => Item::Question(self.question_decl(pair)),
            Rule::table_decl => Item::Table(self.table_decl(pair)),
            _ => Item::Rule(self.rule_decl(pair)),
        }
    }

    fn docs(&self, pairs: &mut std::iter::Peekable<Pairs<'_, Rule>>) -> Vec<String> {
        let mut docs = Vec::new();
        while let Some(p) = pairs.next_if(|p| p.as_rule() == Rule::doc) {
            let text = p.into_inner().next().map(|t| t.as_str()).unwrap_or("");
            docs.push(text.strip_prefix(' ').unwrap_or(text).trim_end().to_string());
        }
        docs
    }

    fn enum_decl(&self, pair: Pair<'_, Rule>) -> EnumDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name(it.next().expect("enum name"));
        let mut order = EnumOrder::None;
        let mut variants = Vec::new();
        for p in it {
            match p.as_rule() {
                Rule::enum_order => {
                    order = if p.as_str() == "ordered" { EnumOrder::Ordered } else { EnumOrder::TightestFirst }
                }
                _ => variants.push(self.name_or_string(p)),
            }
        }
        EnumDecl { docs, name, order, variants, span }
    }

    fn check_rule(&self, pair: Pair<'_, Rule>) -> CheckRule {
        let span = self.span(&pair);
        let mut it = pair.into_inner();
        let kind = match it.next().map(|p| p.as_str()) {
            Some("syntax") => CheckKind::Syntax,
            Some("duplicate_key") => CheckKind::DuplicateKey,
            Some("unknown_key") => CheckKind::UnknownKey,
            Some("missing_key") => CheckKind::MissingKey,
            Some("empty") => CheckKind::Empty,
            Some("loosen") => CheckKind::Loosen,
            Some("untrusted") => CheckKind::Untrusted,
            Some("order") => CheckKind::Order,
            Some("claim") => CheckKind::Claim,
            Some("change") => CheckKind::Change,
            _ => CheckKind::Type,
        };
        let next = it.next().expect("rule id or allow");
        if next.as_rule() == Rule::check_allow {
            let rule = Name { text: String::new(), span: self.span(&next) };
            return CheckRule { kind, rule, allow: true, span };
        }
        let rule = self.name(next);
        CheckRule { kind, rule, allow: false, span }
    }

    fn record_decl(&self, pair: Pair<'_, Rule>) -> RecordDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name(it.next().expect("record name"));
        let mut decl = RecordDecl { docs, name, identity: None, checks: vec![], fields: vec![], span };
        for p in it {
            match p.as_rule() {
                Rule::identity => {
                    decl.identity = p.into_inner().next().map(|n| self.name(n));
                }
                Rule::check_rule => decl.checks.push(self.check_rule(p)),
                _ => decl.fields.push(self.field(p)),
            }
        }
        decl
    }

    fn document_decl(&self, pair: Pair<'_, Rule>) -> DocumentDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name(it.next().expect("document name"));
        let binder = self.name(it.next().expect("binder"));
        let all_binder =
            it.next_if(|p| p.as_rule() == Rule::all_binder).and_then(|p| p.into_inner().next()).map(|n| self.name(n));
        let selector = it.next().expect("selector");
        let selector = if selector.as_rule() == Rule::markdown_selector {
            let mut s = selector.into_inner();
            let marker = s.next().expect("marker");
            let marker = Name { text: unescape(string_body(&marker)), span: self.span(&marker) };
            let rule = self.name(s.next().expect("rule id"));
            Selector::Markdown { marker, rule }
        } else if selector.as_rule() == Rule::given_selector {
            let name = selector.into_inner().next().expect("given name");
            Selector::Given(Name { text: unescape(string_body(&name)), span: self.span(&name) })
        } else {
            let mut tests = Vec::new();
            for t in selector.into_inner().filter(|p| p.as_rule() == Rule::key_test) {
                let span = self.span(&t);
                let mut s = t.into_inner();
                let key = self.name(s.next().expect("selector key"));
                let test = match s.next() {
                    Some(v) if v.as_rule() == Rule::string => {
                        let span = self.span(&v);
                        KeyCond::Equals(Name { text: unescape(string_body(&v)), span })
                    }
                    Some(v) if v.as_rule() == Rule::selector_present => KeyCond::Present,
                    _ => KeyCond::Absent,
                };
                tests.push(KeyTest { key, test, span });
            }
            Selector::Keys(tests)
        };
        let mut decl = DocumentDecl {
            docs,
            name,
            binder,
            all_binder,
            selector,
            checks: vec![],
            forbids: vec![],
            at_most_one: None,
            fields: vec![],
            lines_into: None,
            list_into: None,
            unreadable_missing: None,
            span,
        };
        for p in it {
            match p.as_rule() {
                Rule::check_rule => decl.checks.push(self.check_rule(p)),
                Rule::lines_clause => decl.lines_into = p.into_inner().next().map(|n| self.name(n)),
                Rule::list_clause => decl.list_into = p.into_inner().next().map(|n| self.name(n)),
                Rule::unreadable_clause => decl.unreadable_missing = Some(self.span(&p)),
                Rule::forbid => {
                    let span = self.span(&p);
                    let mut f = p.into_inner();
                    let key = f.next().expect("forbidden key");
                    let key = Name { text: unescape(string_body(&key)), span: self.span(&key) };
                    let rule = self.name(f.next().expect("rule id"));
                    decl.forbids.push(Forbid { key, rule, span });
                }
                Rule::at_most_one => decl.at_most_one = Some(self.span(&p)),
                _ => decl.fields.push(self.field(p)),
            }
        }
        decl
    }

    fn field(&self, pair: Pair<'_, Rule>) -> Field {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name_or_string(it.next().expect("field name"));
        let optional = it.next_if(|p| p.as_rule() == Rule::optional_mark).is_some();
        let ty = self.type_expr(it.next().expect("field type"));
        let nullable = it.next_if(|p| p.as_rule() == Rule::or_null).map(|p| self.span(&p));
        let one = it.next_if(|p| p.as_rule() == Rule::or_one).map(|p| self.span(&p));
        let mut field = Field {
            docs,
            name,
            optional,
            ty,
            nullable,
            one,
            complete: None,
            default: None,
            bounds: vec![],
            unique: None,
            invalid: None,
            growth: None,
            span,
        };
        for p in it {
            match p.as_rule() {
                Rule::default_clause => {
                    let v = p.into_inner().next().expect("default value");
                    field.default = Some(match v.as_rule() {
                        Rule::column_ref => DefaultValue::Column(self.column_ref(v)),
                        Rule::empty_list => DefaultValue::EmptyList(self.span(&v)),
                        Rule::empty_map => DefaultValue::EmptyMap(self.span(&v)),
                        _ => DefaultValue::Literal(self.literal(v)),
                    });
                }
                Rule::bound_clause => {
                    let span = self.span(&p);
                    let mut b = p.into_inner();
                    let kind = match b.next().map(|k| k.as_str()) {
                        Some("ceiling") => BoundKind::Ceiling,
                        _ => BoundKind::Floor,
                    };
                    let column = self.column_ref(b.next().expect("column"));
                    let rule = self.name(b.next().expect("rule id"));
                    field.bounds.push(Bound { kind, column, rule, span });
                }
                Rule::invalid_clause => field.invalid = p.into_inner().next().map(|r| self.name(r)),
                Rule::complete_clause => field.complete = Some(self.span(&p)),
                Rule::growth_clause => {
                    let span = self.span(&p);
                    let growth = match p.into_inner().next().map(|k| k.as_str()) {
                        Some("shrinks") => Growth::Shrinks,
                        _ => Growth::Grows,
                    };
                    field.growth = Some((growth, span));
                }
                _ => field.unique = p.into_inner().next().map(|r| self.name(r)),
            }
        }
        field
    }

    fn column_ref(&self, pair: Pair<'_, Rule>) -> ColumnRef {
        let span = self.span(&pair);
        let mut it = pair.into_inner();
        let matrix = self.name(it.next().expect("matrix"));
        let column = self.name(it.next().expect("column"));
        ColumnRef { matrix, column, span }
    }

    fn type_expr(&self, pair: Pair<'_, Rule>) -> TypeExpr {
        let inner = pair.into_inner().next().expect("type");
        let span = self.span(&inner);
        match inner.as_rule() {
            Rule::map_type => {
                let mut it = inner.into_inner();
                let key = self.name(it.next().expect("key type"));
                let value = self.type_expr(it.next().expect("value type"));
                TypeExpr::Map(key, Box::new(value), span)
            }
            Rule::list_type => {
                let elem = self.type_expr(inner.into_inner().next().expect("element type"));
                TypeExpr::List(Box::new(elem), span)
            }
            Rule::ref_type => TypeExpr::Ref(self.name(inner.into_inner().next().expect("record")), span),
            Rule::int_type => {
                let min = inner.into_inner().find(|p| p.as_rule() == Rule::int).map(|p| parse_int(p.as_str()));
                TypeExpr::Int { min, span }
            }
            _ => TypeExpr::Named(self.name(inner)),
        }
    }

    fn matrix_decl(&self, pair: Pair<'_, Rule>) -> MatrixDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name(it.next().expect("matrix name"));
        let key_enum = self.name(it.next().expect("key enum"));
        let columns = it
            .next()
            .expect("columns")
            .into_inner()
            .map(|c| {
                let mut c = c.into_inner();
                let name = self.name(c.next().expect("column name"));
                let ty = self.name(c.next().expect("column type"));
                Column { name, ty }
            })
            .collect();
        let rows = it
            .map(|r| {
                let span = self.span(&r);
                let mut r = r.into_inner();
                let key = self.name_or_string(r.next().expect("row key"));
                let cells = r.map(|c| self.literal(c.into_inner().next().expect("cell value"))).collect();
                Row { key, cells, span }
            })
            .collect();
        MatrixDecl { docs, name, key_enum, columns, rows, span }
    }

    fn literal(&self, pair: Pair<'_, Rule>) -> Literal {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::int => Literal::Int(parse_int(pair.as_str()), span),
            Rule::bool => Literal::Bool(pair.as_str() == "true", span),
            Rule::string => Literal::Str(unescape(string_body(&pair)), span),
            _ => Literal::Name(self.name(pair)),
        }
    }

    fn question_decl(&self, pair: Pair<'_, Rule>) -> QuestionDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let id = self.name(it.next().expect("question id"));
        let action = it.next().expect("action");
        let action = Name { text: unescape(string_body(&action)), span: self.span(&action) };
        let mut vars = Vec::new();
        let mut allow = None;
        for p in it {
            if p.as_rule() == Rule::question_var {
                let span = self.span(&p);
                let mut v = p.into_inner();
                let pattern = self.pattern(v.next().expect("pattern"));
                let domain = self.expr(v.next().expect("domain"));
                let mut attr = v.next().expect("attribute").into_inner();
                let side = match attr.next().map(|s| s.as_str()) {
                    Some("principal") => RequestSide::Principal,
                    _ => RequestSide::Resource,
                };
                let attribute = self.name(attr.next().expect("attribute name"));
                vars.push(QuestionVar { pattern, domain, side, attribute, span });
            } else {
                allow = Some(self.expr(p));
            }
        }
        let allow = allow.expect("allow");
        QuestionDecl { docs, id, action, vars, allow, span }
    }

    fn table_decl(&self, pair: Pair<'_, Rule>) -> TableDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let id = self.name(it.next().expect("table id"));
        let (mut clauses, mut row, mut columns, mut detail, mut line) = (vec![], None, vec![], None, None);
        for p in it {
            match p.as_rule() {
                Rule::table_row | Rule::table_column => {
                    let span = self.span(&p);
                    let is_row = p.as_rule() == Rule::table_row;
                    let mut c = p.into_inner();
                    let name = self.name_or_string(c.next().expect("column name"));
                    let value = self.expr(c.next().expect("column value"));
                    let column = TableColumn { name, value, span };
                    if is_row {
                        row = Some(column);
                    } else {
                        columns.push(column);
                    }
                }
                Rule::table_detail => {
                    let span = self.span(&p);
                    let value = self.expr(p.into_inner().next().expect("detail"));
                    detail = Some((value, span));
                }
                Rule::table_line => {
                    let span = self.span(&p);
                    line = Some((self.template(p.into_inner().next().expect("line")), span));
                }
                _ => clauses.push(self.clause(p)),
            }
        }
        let row = row.expect("row");
        TableDecl { docs, id, clauses, row, columns, detail, line, span }
    }

    fn layers_decl(&self, pair: Pair<'_, Rule>) -> LayersDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let document = self.name(it.next().expect("document kind"));
        let mut decl = LayersDecl {
            docs,
            document,
            claim: None,
            standalone: None,
            separate: None,
            trusted: None,
            layers: vec![],
            only: vec![],
            free: vec![],
            checks: vec![],
            span,
        };
        for p in it {
            match p.as_rule() {
                Rule::check_rule => decl.checks.push(self.check_rule(p)),
                Rule::layer_line => {
                    let mut l = p.into_inner();
                    let name = self.name(l.next().expect("layer name"));
                    decl.layers.push(LayerDecl { name });
                }
                Rule::claim_line => {
                    let mut l = p.into_inner();
                    decl.claim = Some(self.name(l.next().expect("claim key")));
                }
                Rule::standalone_line => decl.standalone = Some(self.span(&p)),
                Rule::separate_line => decl.separate = Some(self.span(&p)),
                Rule::trusted_line => {
                    let mut l = p.into_inner();
                    let layer = self.name(l.next().expect("layer"));
                    let rule = self.name(l.next().expect("rule id"));
                    decl.trusted = Some((layer, rule));
                }
                Rule::only_line => {
                    let mut l = p.into_inner();
                    let layer = self.name(l.next().expect("layer"));
                    decl.only.push((layer, l.map(|f| self.name(f)).collect()));
                }
                _ => decl.free.extend(p.into_inner().map(|f| self.name(f))),
            }
        }
        decl
    }

    fn fn_decl(&self, pair: Pair<'_, Rule>) -> FnDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let name = self.name(it.next().expect("fn name"));
        let mut params = Vec::new();
        let mut body = None;
        for p in it {
            match p.as_rule() {
                Rule::ident => params.push(self.name(p)),
                _ => body = Some(self.expr(p)),
            }
        }
        let body = body.expect("fn body");
        FnDecl { docs, name, params, body, span }
    }

    fn rule_decl(&self, pair: Pair<'_, Rule>) -> RuleDecl {
        let span = self.span(&pair);
        let mut it = pair.into_inner().peekable();
        let docs = self.docs(&mut it);
        let id = self.name(it.next().expect("rule id"));
        let clauses = it.map(|c| self.clause(c)).collect();
        RuleDecl { docs, id, clauses, span }
    }

    fn clause(&self, pair: Pair<'_, Rule>) -> Clause {
        let span = self.span(&pair);
        let rule = pair.as_rule();
        let mut it = pair.into_inner();
        match rule {
            Rule::for_clause => {
                let pattern = self.pattern(it.next().expect("pattern"));
                let domain = self.expr(it.next().expect("domain"));
                let filter = it.next().map(|f| self.expr(f));
                Clause::For { pattern, domain, filter, span }
            }
            Rule::when_clause => {
                let guard = self.expr(it.next().expect("guard"));
                let mut report = false;
                let reason = it.next().and_then(|t| {
                    if t.as_rule() == Rule::report_kw {
                        report = true;
                        it.next().map(|t| self.template(t))
                    } else {
                        Some(self.template(t))
                    }
                });
                Clause::When { guard, reason, report, span }
            }
            Rule::let_clause => {
                let name = self.name(it.next().expect("name"));
                let value = self.expr(it.next().expect("value"));
                Clause::Let { name, value, span }
            }
            Rule::require_clause => {
                let mut it = it.filter(|p| p.as_rule() != Rule::else_kw);
                let check = self.expr(it.next().expect("check"));
                let outcome = match it.next().map(|o| o.as_str()) {
                    Some("unknown") => Outcome::Unknown,
                    _ => Outcome::Fail,
                };
                let message = self.template(it.next().expect("message"));
                Clause::Require { check, outcome, message, span }
            }
            _ => {
                let location = self.expr(it.next().expect("location"));
                let positional = it.next().is_some_and(|p| p.as_rule() == Rule::at_position);
                Clause::At { location, positional, span }
            }
        }
    }

    fn pattern(&self, pair: Pair<'_, Rule>) -> Pattern {
        let mut it = pair.into_inner();
        let first = it.next().expect("pattern name");
        if first.as_rule() == Rule::pair_pattern {
            let mut p = first.into_inner();
            let a = self.name(p.next().expect("first"));
            let b = self.name(p.next().expect("second"));
            return Pattern::Pair(a, b);
        }
        let a = self.name(first);
        match it.next() {
            Some(b) => Pattern::Entry(a, self.name(b)),
            None => Pattern::One(a),
        }
    }

    fn template(&self, pair: Pair<'_, Rule>) -> Template {
        let span = self.span(&pair);
        let parts = pair
            .into_inner()
            .map(|p| match p.as_rule() {
                Rule::template_hole => TemplatePart::Hole(self.expr(p.into_inner().next().expect("hole"))),
                _ => TemplatePart::Text(unescape(p.as_str())),
            })
            .collect();
        Template { parts, span }
    }

    fn expr(&self, pair: Pair<'_, Rule>) -> Expr {
        PRATT
            .map_primary(|p| self.primary(p))
            .map_prefix(|op, rhs| {
                let span = self.span(&op).join(rhs.span);
                Expr { kind: ExprKind::Not(Box::new(rhs)), span }
            })
            .map_postfix(|lhs, op| {
                let span = lhs.span.join(self.span(&op));
                let kind = match op.as_rule() {
                    Rule::field_access => {
                        ExprKind::Field(Box::new(lhs), self.name(op.into_inner().next().expect("field")))
                    }
                    Rule::call_args => {
                        let args = op.into_inner().map(|e| self.expr(e)).collect();
                        match lhs.kind {
                            ExprKind::Name(name) => ExprKind::Call(name, args),
                            // The grammar puts arguments only after a name.
                            _ => unreachable!("call arguments after {:?}", lhs.kind),
                        }
                    }
                    _ => ExprKind::Index(Box::new(lhs), Box::new(self.expr(op.into_inner().next().expect("index")))),
                };
                Expr { kind, span }
            })
            .map_infix(|lhs, op, rhs| {
                let op = match op.as_rule() {
                    Rule::coalesce => BinOp::Coalesce,
                    Rule::or_op => BinOp::Or,
                    Rule::and_op => BinOp::And,
                    Rule::eq => BinOp::Eq,
                    Rule::ne => BinOp::Ne,
                    Rule::lt => BinOp::Lt,
                    Rule::le => BinOp::Le,
                    Rule::gt => BinOp::Gt,
                    Rule::ge => BinOp::Ge,
                    Rule::in_op => BinOp::In,
                    Rule::not_in => BinOp::NotIn,
                    Rule::tighter => BinOp::TighterThan,
                    Rule::looser => BinOp::LooserThan,
                    Rule::concat => BinOp::Concat,
                    Rule::add => BinOp::Add,
                    Rule::mul => BinOp::Mul,
                    _ => BinOp::Sub,
                };
                let span = lhs.span.join(rhs.span);
                Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span }
            })
            .parse(pair.into_inner())
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> Expr {
        let span = self.span(&pair);
        let kind = match pair.as_rule() {
            Rule::int | Rule::bool | Rule::string => ExprKind::Lit(self.literal(pair)),
            Rule::ident => ExprKind::Name(self.name(pair)),
            Rule::paren => return self.expr(pair.into_inner().next().expect("inner")),
            Rule::quantifier => {
                let mut it = pair.into_inner();
                let kind = match it.next().map(|k| k.as_str()) {
                    Some("some") => Quantifier::Some,
                    _ => Quantifier::Every,
                };
                let pattern = self.pattern(it.next().expect("pattern"));
                let domain = Box::new(self.expr(it.next().expect("domain")));
                let body = Box::new(self.expr(it.next().expect("body")));
                ExprKind::Quant { kind, pattern, domain, body }
            }
            Rule::count_by => {
                let mut it = pair.into_inner();
                let var = self.name(it.next().expect("var"));
                let domain = Box::new(self.expr(it.next().expect("domain")));
                let key = Box::new(self.expr(it.next().expect("key")));
                ExprKind::CountBy { var, domain, key }
            }
            Rule::list_lit => {
                let mut it = pair.into_inner();
                match (it.next(), it.peek().map(|p| p.as_rule())) {
                    (Some(value), Some(Rule::comprehension)) => {
                        let mut it = it.next().expect("comprehension").into_inner();
                        let value = Box::new(self.expr(value));
                        let pattern = self.pattern(it.next().expect("pattern"));
                        let domain = Box::new(self.expr(it.next().expect("domain")));
                        let filter = it.next().map(|f| Box::new(self.expr(f)));
                        ExprKind::Comprehension { value, pattern, domain, filter }
                    }
                    (first, _) => ExprKind::List(first.into_iter().chain(it).map(|e| self.expr(e)).collect()),
                }
            }
            Rule::set_lit => ExprKind::Set(pair.into_inner().map(|e| self.expr(e)).collect()),
            _ => {
                // count_call: `count` called as a function.
                let name = Name { text: "count".to_string(), span: Span::new(span.start, span.start + "count".len()) };
                let args = pair.into_inner().next().expect("arguments").into_inner();
                ExprKind::Call(name, args.map(|e| self.expr(e)).collect())
            }
        };
        Expr { kind, span }
    }
}

fn string_body<'a>(pair: &Pair<'a, Rule>) -> &'a str {
    let s = pair.as_str();
    s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(s)
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An integer literal; the grammar admits only digits, so the only failure is
/// overflow, which saturates (the engine's range checks see the extreme value).
fn parse_int(s: &str) -> i64 {
    s.parse::<i64>().unwrap_or(if s.starts_with('-') { i64::MIN } else { i64::MAX })
}

/// A comment in the source: from `//` to the end of its line (the newline
/// excluded). `doc` marks a `///` line the parser reads as the documentation
/// of the item or field below it; any other `///` line is an ordinary comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comment {
    pub span: Span,
    pub doc: bool,
}

/// Every comment of a file, in source order. In an item that parses, a
/// comment is what the grammar skips as one, so `//` inside a string or a
/// message is not one; in an item that does not parse, comments are found by
/// a scan of each line that skips over strings (best effort).
pub fn comments(text: &str) -> Vec<Comment> {
    let mut comments = Vec::new();
    for chunk in item_chunks(text) {
        let source = &text[chunk.start..chunk.end];
        let parsed = if chunk.is_item { GrailParser::parse(Rule::file_item, source).ok() } else { None };
        match parsed {
            Some(pairs) => {
                // The text no pair covers (keywords, punctuation, whitespace
                // and comments) holds no string, so a `//` there starts a comment.
                let mut covered: Vec<(usize, usize)> = Vec::new();
                for pair in pairs.flatten() {
                    let span = pair.as_span();
                    if pair.as_rule() == Rule::doc {
                        let span = Span::new(chunk.start + span.start(), chunk.start + span.end());
                        comments.push(Comment { span, doc: true });
                        covered.push((span.start, span.end));
                    } else if pair.clone().into_inner().next().is_none() {
                        covered.push((chunk.start + span.start(), chunk.start + span.end()));
                    }
                }
                covered.sort_unstable();
                let mut at = chunk.start;
                for (start, end) in covered {
                    if start > at {
                        scan_gap(text, at, start, &mut comments);
                    }
                    at = at.max(end);
                }
                scan_gap(text, at, chunk.end, &mut comments);
            }
            None => scan_lines(text, chunk.start, chunk.end, &mut comments),
        }
    }
    comments.sort_by_key(|c| c.span.start);
    comments
}

/// The comments in `text[start..end]`, a stretch that holds no string.
fn scan_gap(text: &str, start: usize, end: usize, out: &mut Vec<Comment>) {
    let mut at = start;
    while let Some(found) = text[at..end].find("//") {
        let begin = at + found;
        let stop = text[begin..].find('\n').map_or(text.len(), |n| begin + n);
        out.push(Comment { span: Span::new(begin, stop), doc: false });
        at = stop.min(end);
    }
}

/// The comments in `text[start..end]` by a scan that skips strings.
fn scan_lines(text: &str, start: usize, end: usize, out: &mut Vec<Comment>) {
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'\n' => in_string = false,
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => {
                let stop = text[i..end].find('\n').map_or(end, |n| i + n);
                out.push(Comment { span: Span::new(i, stop), doc: false });
                i = stop;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The spans of the expressions the source writes in parentheses (the tree
/// drops the parentheses), sorted. Items that do not parse are skipped.
pub fn parenthesized(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for chunk in item_chunks(text).into_iter().filter(|c| c.is_item) {
        let Ok(pairs) = GrailParser::parse(Rule::file_item, &text[chunk.start..chunk.end]) else { continue };
        let b = Builder { offset: chunk.start };
        for pair in pairs.flatten().filter(|p| p.as_rule() == Rule::paren) {
            if let Some(inner) = pair.into_inner().next() {
                spans.push(b.expr(inner).span);
            }
        }
    }
    spans.sort_unstable();
    spans.dedup();
    spans
}

/// The reserved words of the grammar (`keyword` in `grail.pest`): never a
/// name. The editor's highlighting reads them from here.
pub const RESERVED: [&str; 24] = [
    "enum",
    "record",
    "document",
    "matrix",
    "fn",
    "rule",
    "for",
    "when",
    "let",
    "require",
    "else",
    "at",
    "in",
    "not",
    "and",
    "or",
    "every",
    "some",
    "count",
    "true",
    "false",
    "if",
    "tighter_than",
    "looser_than",
];
