//! The formatter: a `.grail` file printed again in the style of the shipped
//! library.
//!
//! Two spaces indent the members of a declaration and the clauses of a rule
//! or a question; four the continuation of a field (`default`, `floor`,
//! `ceiling`) and the `else` of a clause; a `require`, `when` or `allow` too
//! long for [`WIDTH`] breaks before its loosest `and`s (or `or`s), and inside
//! a parenthesized operand or after a quantifier's `:`, each time four spaces
//! further in. One blank line separates items; inside an item, the blank
//! lines of the source are kept (at most one in a row). Matrix rows are
//! aligned in columns; enumerations hold their variants on one line.
//! Expressions keep the parentheses the source wrote
//! ([`parser::parenthesized`]) and get no other.
//!
//! Comments are not in the syntax tree. They are read from the source
//! ([`parser::comments`]) and put back beside the line printed from the code
//! they were beside: a comment at the end of a line stays at the end of that
//! line, a comment on its own line stays above the code below it, and a
//! comment from inside code printed on one line (an enumeration, a clause)
//! moves above that code.
//!
//! Invariants, checked on every call and tested on the shipped library and
//! the examples of the language reference: the formatted text parses to the
//! same tree (spans aside), holds the same comments, and formats to itself.

use crate::ast::*;
use crate::parser::{self, Comment, ParseError};
use crate::print::{self, Printer};

/// The width the formatter keeps a `require`, `when` or `allow` within, by
/// breaking its condition. Other lines are not broken.
pub const WIDTH: usize = 100;
/// The indentation of members and clauses, and of each continuation.
const STEP: usize = 2;

/// `text` formatted. A file that does not parse cleanly is refused: its parse
/// errors are returned and nothing is formatted.
pub fn format(text: &str) -> Result<String, Vec<ParseError>> {
    let parsed = parser::parse(text);
    if !parsed.errors.is_empty() {
        return Err(parsed.errors);
    }
    let comments = parser::comments(text);
    let parenthesized = parser::parenthesized(text);
    let written = |e: &Expr| parenthesized.binary_search(&e.span).is_ok();
    let printer = Printer::keeping(&written);
    let mut layout = Layout { text, comments: &comments, printer: &printer, lines: Vec::new() };
    layout.file(&parsed.file);
    layout.attach_comments();
    let formatted = layout.render();
    verify(text, &parsed.file, &comments, &formatted)
        .map_err(|message| vec![ParseError { message, span: Span::new(0, 0) }])?;
    Ok(formatted)
}

/// Whether two trees are the same but for their spans.
pub fn same_syntax(a: &SourceFile, b: &SourceFile) -> bool {
    shape(a) == shape(b)
}

/// A tree as text without its spans: two trees that differ only in where
/// their nodes are have the same shape.
pub fn shape(file: &SourceFile) -> String {
    erase_spans(&format!("{file:#?}"))
}

/// The texts of the ordinary comments of `text` (not the `///`
/// documentation, which is in the tree), sorted.
pub fn comment_texts(text: &str) -> Vec<String> {
    texts_of(text, &parser::comments(text))
}

fn texts_of(text: &str, comments: &[Comment]) -> Vec<String> {
    let mut texts: Vec<String> =
        comments.iter().filter(|c| !c.doc).map(|c| text[c.span.start..c.span.end].trim_end().to_string()).collect();
    texts.sort();
    texts
}

/// The formatter's promises, checked before its output is handed out: a bug
/// here refuses to format rather than change a policy or drop a comment.
fn verify(text: &str, tree: &SourceFile, comments: &[Comment], formatted: &str) -> Result<(), String> {
    const BUG: &str = "the file is left as it is (a bug in the formatter)";
    let again = parser::parse(formatted);
    if let Some(error) = again.errors.first() {
        return Err(format!("the formatted text does not parse ({}); {BUG}", error.message));
    }
    if !same_syntax(tree, &again.file) {
        return Err(format!("formatting would change the meaning of the file; {BUG}"));
    }
    if texts_of(text, comments) != comment_texts(formatted) {
        return Err(format!("formatting would lose or change a comment; {BUG}"));
    }
    Ok(())
}

/// Replaces every `Span { start: N, end: N }` of a debug text with `_`.
fn erase_spans(debug: &str) -> String {
    const OPEN: &str = "Span {";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let close = after.find('}').unwrap_or(after.len());
        let inside = &after[..close];
        let is_span = inside.contains("start:")
            && inside.contains("end:")
            && inside.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || ",:startend".contains(c));
        if is_span && close < after.len() {
            out.push('_');
            rest = &after[close + 1..];
        } else {
            out.push_str(OPEN);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Whether a blank line goes before a line (before its leading comments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gap {
    /// Always one (between items).
    Forced,
    /// One if the source has one there.
    Kept,
    /// Never (after an opening line, inside a continuation).
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Code,
    /// A closing brace: comments above it stay inside the braces.
    Close,
    /// No text: where the indented comments after the last clause of a
    /// rule or a question go.
    RuleEnd,
    /// No text: where the comments at the end of the file go.
    End,
}

/// One output line and the source it was printed from.
#[derive(Debug)]
struct Line {
    indent: usize,
    text: String,
    /// The source of the code on this line: comments inside it cannot stay
    /// beside it and move above the line `hoist`.
    src: Span,
    gap: Gap,
    /// The indentation of the comments above it.
    comment_indent: usize,
    /// The first line of the node this line belongs to.
    hoist: usize,
    kind: Kind,
    /// Comments printed on their own lines above this one.
    above: Vec<usize>,
    /// A comment printed at the end of this line.
    trailing: Option<usize>,
}

struct Layout<'a> {
    text: &'a str,
    comments: &'a [Comment],
    /// Keeps the parentheses the source writes.
    printer: &'a Printer<'a>,
    lines: Vec<Line>,
}

/// A member of a declaration: a line of its own (a check, a `forbid`, a
/// layer), or a field.
enum Member<'a> {
    Line(Span, String),
    Field(&'a Field),
}

impl Member<'_> {
    fn start(&self) -> usize {
        match self {
            Member::Line(span, _) => span.start,
            Member::Field(f) => f.span.start,
        }
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

impl<'a> Layout<'a> {
    fn push(&mut self, indent: usize, text: String, src: Span, gap: Gap, hoist: usize) -> usize {
        let src = Span::new(src.start, self.tight_end(src.start, src.end));
        self.lines.push(Line {
            indent,
            text,
            src,
            gap,
            comment_indent: indent,
            hoist,
            kind: Kind::Code,
            above: Vec::new(),
            trailing: None,
        });
        self.lines.len() - 1
    }

    fn pseudo(&mut self, kind: Kind, at: usize, comment_indent: usize) {
        let i = self.push(comment_indent, String::new(), Span::new(at, at), Gap::Kept, self.lines.len());
        self.lines[i].kind = kind;
    }

    /// `end` moved back over the whitespace and comments before it (but not
    /// before `start`). The spans of fields, clauses, rows and rules reach
    /// over the whitespace and comments after them.
    fn tight_end(&self, start: usize, mut end: usize) -> usize {
        loop {
            let trimmed = start.max(self.text[..end].trim_end().len());
            match self.comments.iter().find(|c| c.span.start > start && c.span.start < trimmed && trimmed <= c.span.end)
            {
                Some(c) => end = c.span.start,
                None => return trimmed,
            }
        }
    }

    /// The first position at or after `pos` that is neither whitespace nor
    /// a comment.
    fn next_code(&self, mut pos: usize) -> usize {
        loop {
            let rest = &self.text[pos..];
            pos += rest.len() - rest.trim_start().len();
            match self.comments.iter().find(|c| c.span.start == pos) {
                Some(c) => pos = c.span.end,
                None => return pos,
            }
        }
    }

    /// The position of the `{` that opens a declaration's body, the first
    /// code after `pos`.
    fn open_brace(&self, pos: usize) -> usize {
        // INVARIANT: the file parsed, so the code after a header is its `{`.
        let at = self.next_code(pos);
        debug_assert_eq!(self.text.as_bytes().get(at), Some(&b'{'), "a body opens after the header");
        at
    }

    /// A name as written: quoted if the source quotes it.
    fn name(&self, name: &Name) -> String {
        if self.text[name.span.start..].starts_with('"') { print::quote(&name.text) } else { name.text.clone() }
    }

    /// The `///` lines of a node: `docs` as the tree has them, placed where
    /// the documentation comments between `from` and `to` are.
    fn docs(&mut self, docs: &[String], from: usize, to: usize, indent: usize, gap: Gap, hoist: usize) {
        let spans: Vec<Span> = self
            .comments
            .iter()
            .filter(|c| c.doc && c.span.start >= from && c.span.start < to)
            .map(|c| c.span)
            .collect();
        for (i, doc) in docs.iter().enumerate() {
            let src = spans.get(i).copied().unwrap_or(Span::new(from, from));
            // `/// text`, but a rule of slashes stays one.
            let space = if doc.is_empty() || doc.starts_with('/') { "" } else { " " };
            let text = format!("///{space}{doc}");
            self.push(indent, text, src, if i == 0 { gap } else { Gap::Never }, hoist);
        }
    }

    /// Where an item's keyword is: after its documentation.
    fn keyword_start(&self, span: Span, name: &Name) -> usize {
        let last_doc =
            self.comments.iter().rev().find(|c| c.doc && c.span.start >= span.start && c.span.end <= name.span.start);
        match last_doc {
            Some(doc) => self.next_code(doc.span.end),
            None => span.start,
        }
    }

    /// An item's documentation and its first line, `text`, printed from the
    /// source from its keyword to `end`. Returns the index of that line.
    fn head(&mut self, docs: &[String], span: Span, name: &Name, text: String, end: usize, gap: Gap) -> usize {
        let first = self.lines.len();
        self.docs(docs, span.start, name.span.start, 0, gap, first);
        let gap = if docs.is_empty() { gap } else { Gap::Never };
        let src = Span::new(self.keyword_start(span, name), end);
        self.push(0, text, src, gap, first)
    }

    /// The rest of a declaration whose line `open` ends in `{`: what
    /// `inside` prints, and `}`; or `{}` on that line if it prints nothing.
    fn body(&mut self, open: usize, span: Span, inside: impl FnOnce(&mut Self)) {
        inside(self);
        if self.lines.len() == open + 1 {
            let line = &mut self.lines[open];
            line.text.push('}');
            line.src.end = span.end;
        } else {
            let close = self.push(0, "}".to_string(), Span::new(span.end - 1, span.end), Gap::Kept, self.lines.len());
            self.lines[close].kind = Kind::Close;
            self.lines[close].comment_indent = STEP;
        }
    }

    fn file(&mut self, file: &SourceFile) {
        for (i, item) in file.items.iter().enumerate() {
            let gap = if i == 0 { Gap::Kept } else { Gap::Forced };
            match item {
                Item::Enum(d) => {
                    let mut text = format!("enum {}", d.name.text);
                    match d.order {
                        EnumOrder::None => {}
                        EnumOrder::Ordered => text.push_str(" ordered"),
                        EnumOrder::TightestFirst => text.push_str(" tightest_first"),
                    }
                    let variants: Vec<String> = d.variants.iter().map(|v| self.name(v)).collect();
                    if variants.is_empty() {
                        text.push_str(" {}");
                    } else {
                        text.push_str(&format!(" {{ {} }}", variants.join(" ")));
                    }
                    self.head(&d.docs, d.span, &d.name, text, d.span.end, gap);
                }
                Item::Record(d) => {
                    let header = match &d.identity {
                        Some(id) => format!("record {} identity {} {{", d.name.text, id.text),
                        None => format!("record {} {{", d.name.text),
                    };
                    let brace = self.open_brace(d.identity.as_ref().unwrap_or(&d.name).span.end);
                    let open = self.head(&d.docs, d.span, &d.name, header, brace + 1, gap);
                    let members = self.schema_members(&d.checks, &[], &d.fields);
                    self.body(open, d.span, |l| l.members(members));
                }
                Item::Document(d) => {
                    let mut header = format!("document {} as {}", d.name.text, d.binder.text);
                    if let Some(all) = &d.all_binder {
                        header.push_str(&format!(", {}", all.text));
                    }
                    let after = match &d.selector {
                        Selector::Keys(tests) => {
                            let shown: Vec<String> = tests
                                .iter()
                                .map(|t| match &t.test {
                                    KeyCond::Absent => format!("{} absent", t.key.text),
                                    KeyCond::Present => format!("{} present", t.key.text),
                                    KeyCond::Equals(v) => format!("{} == {}", t.key.text, print::quote(&v.text)),
                                })
                                .collect();
                            header.push_str(&format!(" where {}", shown.join(" and ")));
                            tests.last().map_or(d.binder.span.end, |t| t.span.end)
                        }
                        Selector::Markdown { marker, rule } => {
                            let marker = print::quote(&marker.text);
                            header.push_str(&format!(" in markdown after {marker} rule {}", rule.text));
                            rule.span.end
                        }
                        Selector::Given(name) => {
                            header.push_str(&format!(" given {}", print::quote(&name.text)));
                            name.span.end
                        }
                    };
                    header.push_str(" {");
                    let brace = self.open_brace(after);
                    let open = self.head(&d.docs, d.span, &d.name, header, brace + 1, gap);
                    let mut members = self.schema_members(&d.checks, &d.forbids, &d.fields);
                    if let Some(into) = &d.lines_into {
                        members.push(Member::Line(into.span, format!("lines into {}", into.text)));
                    }
                    if let Some(into) = &d.list_into {
                        members.push(Member::Line(into.span, format!("list into {}", into.text)));
                    }
                    if let Some(span) = d.unreadable_missing {
                        members.push(Member::Line(span, "on unreadable missing".into()));
                    }
                    if let Some(span) = d.at_most_one {
                        members.push(Member::Line(span, "at most one per deployment".into()));
                    }
                    self.body(open, d.span, |l| l.members(members));
                }
                Item::Matrix(d) => {
                    let header = format!("matrix {} by {} {{", d.name.text, d.key_enum.text);
                    let brace = self.open_brace(d.key_enum.span.end);
                    let open = self.head(&d.docs, d.span, &d.name, header, brace + 1, gap);
                    self.body(open, d.span, |l| l.matrix_body(d, brace));
                }
                Item::Layers(d) => {
                    let header = format!("layers of {} {{", d.document.text);
                    let brace = self.open_brace(d.document.span.end);
                    let open = self.head(&d.docs, d.span, &d.document, header, brace + 1, gap);
                    let members = self.layer_members(d);
                    self.body(open, d.span, |l| l.members(members));
                }
                Item::Question(d) => {
                    self.head(&d.docs, d.span, &d.id, format!("question {}", d.id.text), d.id.span.end, gap);
                    let first = self.lines.len();
                    self.push(
                        STEP,
                        format!("action {}", print::quote(&d.action.text)),
                        d.action.span,
                        Gap::Never,
                        first,
                    );
                    for var in &d.vars {
                        let side = match var.side {
                            RequestSide::Principal => "principal",
                            RequestSide::Resource => "resource",
                        };
                        let (pattern, domain) = (print::pattern(&var.pattern), self.printer.expr(&var.domain));
                        let text = format!("for {pattern} in {domain} as {side}.{}", var.attribute.text);
                        self.push(STEP, text, var.span, Gap::Kept, self.lines.len());
                    }
                    self.guarded("allow", &d.allow, None, d.allow.span, Gap::Kept);
                    let next = file.items.get(i + 1).map_or(self.text.len(), |n| n.span().start);
                    self.pseudo(Kind::RuleEnd, next, STEP);
                }
                Item::Table(d) => {
                    self.head(&d.docs, d.span, &d.id, format!("table {}", d.id.text), d.id.span.end, gap);
                    for (k, clause) in d.clauses.iter().enumerate() {
                        self.clause(clause, if k == 0 { Gap::Never } else { Gap::Kept });
                    }
                    let row_gap = if d.clauses.is_empty() { Gap::Never } else { Gap::Kept };
                    for (k, c) in std::iter::once(&d.row).chain(&d.columns).enumerate() {
                        let keyword = if k == 0 { "row" } else { "column" };
                        let text = format!("{keyword} {} = {}", self.name(&c.name), self.printer.expr(&c.value));
                        self.push(STEP, text, c.span, if k == 0 { row_gap } else { Gap::Kept }, self.lines.len());
                    }
                    if let Some((value, span)) = &d.detail {
                        let text = format!("detail {}", self.printer.expr(value));
                        self.push(STEP, text, *span, Gap::Kept, self.lines.len());
                    }
                    if let Some((line, span)) = &d.line {
                        let text = format!("line {}", self.printer.template(line));
                        self.push(STEP, text, *span, Gap::Kept, self.lines.len());
                    }
                    let next = file.items.get(i + 1).map_or(self.text.len(), |n| n.span().start);
                    self.pseudo(Kind::RuleEnd, next, STEP);
                }
                Item::Fn(d) => {
                    let params: Vec<&str> = d.params.iter().map(|p| p.text.as_str()).collect();
                    let text = format!("fn {}({}) = {}", d.name.text, params.join(", "), self.printer.expr(&d.body));
                    self.head(&d.docs, d.span, &d.name, text, d.span.end, gap);
                }
                Item::Rule(d) => {
                    self.head(&d.docs, d.span, &d.id, format!("rule {}", d.id.text), d.id.span.end, gap);
                    for (k, clause) in d.clauses.iter().enumerate() {
                        self.clause(clause, if k == 0 { Gap::Never } else { Gap::Kept });
                    }
                    // Indented comments after the last clause, up to the next item, stay in the rule.
                    let next = file.items.get(i + 1).map_or(self.text.len(), |n| n.span().start);
                    self.pseudo(Kind::RuleEnd, next, STEP);
                }
            }
        }
        self.pseudo(Kind::End, self.text.len(), 0);
    }

    /// Members in the order of the source (the tree groups them by kind).
    fn members(&mut self, mut members: Vec<Member<'_>>) {
        members.sort_by_key(Member::start);
        for (k, member) in members.into_iter().enumerate() {
            let gap = if k == 0 { Gap::Never } else { Gap::Kept };
            match member {
                Member::Line(span, text) => {
                    self.push(STEP, text, span, gap, self.lines.len());
                }
                Member::Field(f) => self.field(f, gap),
            }
        }
    }

    /// The members of a record or a document kind.
    fn schema_members<'f>(&self, checks: &[CheckRule], forbids: &[Forbid], fields: &'f [Field]) -> Vec<Member<'f>> {
        let mut members: Vec<Member<'f>> = checks.iter().map(check).collect();
        members.extend(forbids.iter().map(|f| {
            Member::Line(f.span, format!("forbid key {} anywhere rule {}", print::quote(&f.key.text), f.rule.text))
        }));
        members.extend(fields.iter().map(Member::Field));
        members
    }

    /// The lines of a `layers` declaration. The tree keeps the fields of
    /// every `any layer sets` line in one list: a field follows the one
    /// before it on its line when only a comma is between them.
    fn layer_members(&self, d: &LayersDecl) -> Vec<Member<'static>> {
        let mut members: Vec<Member<'static>> = d.checks.iter().map(check).collect();
        for layer in &d.layers {
            members.push(Member::Line(layer.name.span, format!("layer {}", layer.name.text)));
        }
        if let Some(span) = d.standalone {
            members.push(Member::Line(span, "standalone".into()));
        }
        if let Some(span) = d.separate {
            members.push(Member::Line(span, "separate".into()));
        }
        if let Some((layer, rule)) = &d.trusted {
            members.push(Member::Line(layer.span, format!("trusted from {} rule {}", layer.text, rule.text)));
        }
        if let Some(key) = &d.claim {
            members.push(Member::Line(key.span, format!("claimed by {}", key.text)));
        }
        for (layer, fields) in &d.only {
            let end = fields.last().map_or(layer.span.end, |f| f.span.end);
            let names: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
            let text = format!("only {} sets {}", layer.text, names.join(", "));
            members.push(Member::Line(Span::new(layer.span.start, end), text));
        }
        let mut lines: Vec<Vec<&Name>> = Vec::new();
        for field in &d.free {
            let comma = lines.last().and_then(|l| l.last()).map(|prev| self.next_code(prev.span.end));
            let same_line =
                comma.is_some_and(|c| self.text[c..].starts_with(',') && self.next_code(c + 1) == field.span.start);
            match lines.last_mut() {
                Some(line) if same_line => line.push(field),
                _ => lines.push(vec![field]),
            }
        }
        for line in lines {
            let names: Vec<&str> = line.iter().map(|f| f.text.as_str()).collect();
            let span = Span::new(line[0].span.start, line[line.len() - 1].span.end);
            members.push(Member::Line(span, format!("any layer sets {}", names.join(", "))));
        }
        members
    }

    /// A field on one line, or, when it has a bound or is too long, with each
    /// clause on a line of its own below it.
    fn field(&mut self, f: &Field, gap: Gap) {
        let first = self.lines.len();
        self.docs(&f.docs, f.span.start, f.name.span.start, STEP, gap, first);
        let gap = if f.docs.is_empty() { gap } else { Gap::Never };
        let optional = if f.optional { "?" } else { "" };
        let null = if f.nullable.is_some() {
            " or null"
        } else if f.one.is_some() {
            " or one"
        } else {
            ""
        };
        let head = format!("{}{optional}: {}{null}", self.name(&f.name), print::type_expr(&f.ty));
        let mut clauses: Vec<(Span, String)> = Vec::new();
        if let Some(default) = &f.default {
            clauses.push(match default {
                DefaultValue::Column(c) => (c.span, format!("default {}.{}", c.matrix.text, c.column.text)),
                DefaultValue::Literal(l) => (l.span(), format!("default {}", print::literal(l))),
                DefaultValue::EmptyList(span) => (*span, "default []".to_string()),
                DefaultValue::EmptyMap(span) => (*span, "default {}".to_string()),
            });
        }
        for b in &f.bounds {
            let kind = match b.kind {
                BoundKind::Floor => "floor",
                BoundKind::Ceiling => "ceiling",
            };
            clauses.push((
                b.span,
                format!("{kind} {}.{} rule {}", b.column.matrix.text, b.column.column.text, b.rule.text),
            ));
        }
        if let Some(rule) = &f.unique {
            clauses.push((rule.span, format!("unique rule {}", rule.text)));
        }
        if let Some(rule) = &f.invalid {
            clauses.push((rule.span, format!("invalid rule {}", rule.text)));
        }
        if let Some(span) = f.complete {
            clauses.push((span, "complete".to_string()));
        }
        if let Some((growth, span)) = f.growth {
            let kind = match growth {
                Growth::Grows => "grows",
                Growth::Shrinks => "shrinks",
            };
            clauses.push((span, format!("{kind} tighter")));
        }
        clauses.sort_by_key(|(span, _)| span.start);
        let one_line = clauses.iter().fold(head.clone(), |line, (_, clause)| format!("{line} {clause}"));
        if f.bounds.is_empty() && STEP + width(&one_line) <= WIDTH {
            self.push(STEP, one_line, Span::new(f.name.span.start, f.span.end), gap, first);
        } else {
            let end = f.nullable.or(f.one).map_or(f.ty.span().end, |s| s.end);
            self.push(STEP, head, Span::new(f.name.span.start, end), gap, first);
            for (span, clause) in clauses {
                self.push(2 * STEP, clause, span, Gap::Never, first);
            }
        }
    }

    /// `columns`, wrapped under the first column into as few lines as fit
    /// and of balanced lengths, and the rows with their cells aligned.
    fn matrix_body(&mut self, d: &MatrixDecl, brace: usize) {
        const COLUMNS: &str = "columns ";
        let room = WIDTH - STEP - COLUMNS.len();
        let texts: Vec<String> = d
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}: {}{}", c.name.text, c.ty.text, if i + 1 == d.columns.len() { "" } else { "," }))
            .collect();
        let widths: Vec<usize> = texts.iter().map(|t| width(t)).collect();
        let lines = wrap(&widths, room, room).len();
        let total = widths.iter().sum::<usize>() + widths.len().saturating_sub(1);
        let target = total.div_ceil(lines.max(1));

        let first = self.lines.len();
        let mut start = self.next_code(brace + 1);
        for (k, range) in wrap(&widths, room, target).into_iter().enumerate() {
            let prefix = if k == 0 { COLUMNS.to_string() } else { " ".repeat(COLUMNS.len()) };
            let text = format!("{prefix}{}", texts[range.clone()].join(" "));
            if k > 0 {
                start = d.columns[range.start].name.span.start;
            }
            self.push(STEP, text, Span::new(start, d.columns[range.end - 1].ty.span.end), Gap::Never, first);
        }

        let keys: Vec<String> = d.rows.iter().map(|r| format!("{}:", self.name(&r.key))).collect();
        let cells: Vec<Vec<String>> = d.rows.iter().map(|r| r.cells.iter().map(print::literal).collect()).collect();
        let key_width = keys.iter().map(|k| width(k)).max().unwrap_or(0);
        let mut widths: Vec<usize> = Vec::new();
        for row in &cells {
            for (i, cell) in row.iter().enumerate() {
                if i == widths.len() {
                    widths.push(0);
                }
                widths[i] = widths[i].max(width(cell));
            }
        }
        for ((row, key), cells) in d.rows.iter().zip(&keys).zip(&cells) {
            let mut text = format!("{key:<key_width$}");
            for (i, cell) in cells.iter().enumerate() {
                text.push(' ');
                text.push_str(&format!("{cell:<w$}", w = widths[i]));
            }
            let hoist = self.lines.len();
            self.push(STEP, text.trim_end().to_string(), row.span, Gap::Kept, hoist);
        }
    }

    fn clause(&mut self, clause: &Clause, gap: Gap) {
        let first = self.lines.len();
        match clause {
            Clause::For { pattern, domain, filter, span } => {
                let mut text = format!("for {} in {}", print::pattern(pattern), self.printer.expr(domain));
                if let Some(filter) = filter {
                    text.push_str(&format!(" if {}", self.printer.expr(filter)));
                }
                self.push(STEP, text, *span, gap, first);
            }
            Clause::Let { name, value, span } => {
                self.push(STEP, format!("let {} = {}", name.text, self.printer.expr(value)), *span, gap, first);
            }
            Clause::At { location, positional, span } => {
                let by = if *positional { " by position" } else { "" };
                self.push(STEP, format!("at {}{by}", self.printer.expr(location)), *span, gap, first);
            }
            Clause::When { guard, reason, report, span } => {
                let report = if *report { "report " } else { "" };
                let otherwise = reason.as_ref().map(|r| (format!("else {report}{}", self.printer.template(r)), r.span));
                self.guarded("when", guard, otherwise, *span, gap);
            }
            Clause::Require { check, outcome, message, span } => {
                let outcome = match outcome {
                    Outcome::Fail => "fail",
                    Outcome::Unknown => "unknown",
                };
                let otherwise = Some((format!("else {outcome} {}", self.printer.template(message)), message.span));
                self.guarded("require", check, otherwise, *span, gap);
            }
        }
    }

    /// `when`, `require` or `allow`: on one line if it fits; else its `else` on a
    /// line of its own, and its condition broken (see [`Layout::broken`]) if
    /// that alone is too long.
    fn guarded(&mut self, keyword: &str, condition: &Expr, otherwise: Option<(String, Span)>, span: Span, gap: Gap) {
        let first = self.lines.len();
        let head = format!("{keyword} {}", self.printer.expr(condition));
        let one_line = match &otherwise {
            Some((text, _)) => format!("{head} {text}"),
            None => head,
        };
        if STEP + width(&one_line) <= WIDTH {
            self.push(STEP, one_line, span, gap, first);
            return;
        }
        let parens = self.printer.parenthesized(condition);
        let lines = self.broken(condition, parens, &format!("{keyword} "), "", STEP);
        for (k, (indent, text, src)) in lines.into_iter().enumerate() {
            if k == 0 {
                self.push(indent, text, Span::new(span.start, src.end), gap, first);
            } else {
                self.push(indent, text, src, Gap::Never, first);
            }
        }
        if let Some((text, src)) = otherwise {
            self.push(2 * STEP, text, src, Gap::Never, first);
        }
    }

    /// The lines of `head`, `e` (in parentheses if `parens`) and `tail`, the
    /// first at `indent`: one line if it fits in [`WIDTH`]; else, for a chain
    /// of `and`s (or `or`s), as many operands on a line as fit, each line
    /// after the first at four more spaces and led by the operator; for a
    /// quantifier, its head, then its body at four more spaces. An operand or
    /// a body too long for a line of its own is broken the same way.
    fn broken(&self, e: &Expr, parens: bool, head: &str, tail: &str, indent: usize) -> Vec<(usize, String, Span)> {
        let wrap = |text: String| if parens { format!("({text})") } else { text };
        let flat = format!("{head}{}{tail}", wrap(self.printer.bare(e)));
        if indent + width(&flat) <= WIDTH {
            return vec![(indent, flat, e.span)];
        }
        let head = format!("{head}{}", if parens { "(" } else { "" });
        let tail = format!("{}{tail}", if parens { ")" } else { "" });
        if let Some((op, operands)) = self.printer.chain(e) {
            let last = operands.len() - 1;
            let mut lines = Vec::new();
            // The line being filled, if one may take another operand.
            let mut open: Option<(usize, String, Span)> = None;
            for (k, operand) in operands.iter().enumerate() {
                let text = self.printer.bare(operand.expr);
                let text = if operand.parens { format!("({text})") } else { text };
                let tail = if k == last { tail.as_str() } else { "" };
                if let Some((at, line, src)) = &mut open {
                    let longer = format!("{line} {} {text}{tail}", op.symbol());
                    if *at + width(&longer) <= WIDTH {
                        *line = longer;
                        src.end = operand.expr.span.end;
                        continue;
                    }
                }
                lines.extend(open.take());
                let (head, at) =
                    if k == 0 { (head.clone(), indent) } else { (format!("{} ", op.symbol()), indent + 2 * STEP) };
                let alone = format!("{head}{text}{tail}");
                if at + width(&alone) <= WIDTH {
                    open = Some((at, alone, operand.expr.span));
                } else {
                    lines.extend(self.broken(operand.expr, operand.parens, &head, tail, at));
                }
            }
            lines.extend(open);
            return lines;
        }
        if let Some((quantifier, body)) = self.printer.quantifier(e) {
            let mut lines = vec![(indent, format!("{head}{quantifier}"), Span::new(e.span.start, body.span.start))];
            lines.extend(self.broken(body, self.printer.parenthesized(body), "", &tail, indent + 2 * STEP));
            return lines;
        }
        vec![(indent, flat, e.span)]
    }

    /// Gives every ordinary comment a line: the line whose code it is in
    /// (above that line's node), the line it ends (trailing), or the line
    /// below it (above that line).
    fn attach_comments(&mut self) {
        let text = self.text;
        for (ci, comment) in self.comments.iter().enumerate() {
            if comment.doc {
                continue;
            }
            let at = comment.span.start;
            let is_code = |l: &Line| matches!(l.kind, Kind::Code | Kind::Close);
            if let Some(inside) = self.lines.iter().position(|l| is_code(l) && l.src.start < at && at < l.src.end) {
                let hoist = self.lines[inside].hoist;
                self.lines[hoist].above.push(ci);
                continue;
            }
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let own_line = text[line_start..at].trim().is_empty();
            if !own_line {
                let before = self
                    .lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| is_code(l) && l.src.end <= at)
                    .max_by_key(|(_, l)| l.src.end)
                    .map(|(i, _)| i);
                if let Some(i) = before
                    && !text[self.lines[i].src.end..at].contains('\n')
                    && self.lines[i].trailing.is_none()
                {
                    self.lines[i].trailing = Some(ci);
                    continue;
                }
            }
            let indented = at > line_start;
            let below = self
                .lines
                .iter()
                .position(|l| l.src.start >= comment.span.end && (l.kind != Kind::RuleEnd || indented))
                .unwrap_or(self.lines.len() - 1);
            self.lines[below].above.push(ci);
        }
    }

    /// Whether the source has a blank line between `from` and `to`, with
    /// nothing but whitespace there.
    fn blank_between(&self, from: usize, to: usize) -> bool {
        if from > to {
            return false;
        }
        let between = &self.text[from..to];
        between.trim().is_empty() && between.matches('\n').count() >= 2
    }

    fn render(&self) -> String {
        let mut out = String::new();
        // Where the last printed thing ends in the source; `None` at the top.
        let mut last: Option<usize> = None;
        for line in &self.lines {
            let mut above = line.above.clone();
            above.sort_by_key(|&c| self.comments[c].span.start);
            above.dedup();
            // A comment from inside the line's node is glued to the line.
            let glued = |c: usize| self.comments[c].span.start >= line.src.start;
            let mut first = true;
            let mut after_glued = false;
            let elements =
                above.iter().map(Some).chain((!matches!(line.kind, Kind::RuleEnd | Kind::End)).then_some(None));
            for element in elements {
                let (start, end) = match element {
                    Some(&c) if glued(c) => (line.src.start, self.comments[c].span.end),
                    Some(&c) => (self.comments[c].span.start, self.comments[c].span.end),
                    None => (line.src.start, line.src.end),
                };
                let blank = match last {
                    None => false,
                    _ if after_glued => false,
                    _ if element.is_none() && line.kind == Kind::Close => false,
                    Some(from) if first => match line.gap {
                        Gap::Forced => true,
                        Gap::Kept => self.blank_between(from, start),
                        Gap::Never => false,
                    },
                    Some(from) => self.blank_between(from, start),
                };
                if blank {
                    out.push('\n');
                }
                first = false;
                match element {
                    Some(&c) => {
                        let span = self.comments[c].span;
                        out.push_str(&" ".repeat(line.comment_indent));
                        out.push_str(self.text[span.start..span.end].trim_end());
                        after_glued = glued(c);
                        last = Some(end);
                    }
                    None => {
                        out.push_str(&" ".repeat(line.indent));
                        out.push_str(&line.text);
                        last = Some(end);
                        if let Some(c) = line.trailing {
                            let span = self.comments[c].span;
                            out.push(' ');
                            out.push_str(self.text[span.start..span.end].trim_end());
                            last = Some(span.end);
                        }
                    }
                }
                out.push('\n');
            }
        }
        out
    }
}

/// Items of the given widths, separated by a space, cut into lines: a line
/// takes the next item while it fits in `room` and ends nearer `target` with
/// it than without it.
fn wrap(widths: &[usize], room: usize, target: usize) -> Vec<std::ops::Range<usize>> {
    let mut lines = Vec::new();
    let (mut start, mut len) = (0, 0);
    for (i, &w) in widths.iter().enumerate() {
        let longer = len + 1 + w;
        let takes = i > start && longer <= room && longer.saturating_sub(target) < target.saturating_sub(len);
        if takes {
            len = longer;
        } else {
            if i > start {
                lines.push(start..i);
                start = i;
            }
            len = w;
        }
    }
    if start < widths.len() {
        lines.push(start..widths.len());
    }
    lines
}

/// `on KIND rule ID`, or `on KIND allow`.
fn check<'f>(c: &CheckRule) -> Member<'f> {
    if c.allow {
        return Member::Line(c.span, format!("on {} allow", c.kind.keyword()));
    }
    Member::Line(c.span, format!("on {} rule {}", c.kind.keyword(), c.rule.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `input` formats to `expected`, which formats to itself.
    #[track_caller]
    fn check(input: &str, expected: &str) {
        let formatted = format(input).unwrap_or_else(|e| panic!("refused: {e:?}"));
        assert_eq!(formatted, expected, "formatted:\n{formatted}");
        assert_eq!(format(&formatted).as_deref(), Ok(expected), "not idempotent");
    }

    const MESSY: &str = r#"// Header comment, kept at the top.
// Second line.


/// Tiers.
enum Tier ordered {
  T1 // lowest
  T2
  "T 3"
}
// Between items, about the matrix.
/// Limits.
matrix limits by Tier { columns strength: Strength, min_reviewers: int, needs_audit: bool
  T1: soft 1 false   // trailing on a row
  T2: hard 10 false
    "T 3": hard 2 true
}



document Pipeline as pipeline where kind == "pipe{line}" { // opens the body
  on syntax rule pipe.syntax
  on duplicate_key rule pipe.duplicate_key
  forbid key "by//pass" anywhere rule pipe.no_bypass // not // a string


  // About the version.
  version: string // trailing
  reviews?: map Tier -> Review default limits.reviews floor limits.floor rule pipe.floor // after floor
  ///Doc of hosts
  // a comment between doc and field
  hosts?:list string
     default []
  // dangling at the end of the body
}
fn f(x)=x.a??x.b   // trailing on fn
rule pipe.long // after the id
  for t, r in pipeline.reviews
  // before when
  when present(r.reviewers) else "no {t} reviewers // not a comment"
  let teams = count(x in r.reviewers by x.team)
  require (present(r.reviewers) or teams >= 1) and (every x in r.reviewers: x.name != "" and teams > 0 and limits[t].needs_audit)
    else fail "{t}: \{bad\}"
  at r.reviewers
  // an indented comment after the last clause

// a comment at the end of the file
"#;

    #[test]
    fn a_messy_policy_is_formatted() {
        let formatted = format(MESSY).expect("parses");
        insta::assert_snapshot!(formatted);
        assert_eq!(format(&formatted).as_deref(), Ok(formatted.as_str()), "not idempotent");
    }

    #[test]
    fn a_table_and_a_kind_held_once_are_formatted() {
        check(
            "document D as d where kind absent {\n at   most one  per deployment\n  a: int }\n/// Doc.\ntable t.x\nfor x in d.xs   if x.a > 1\n  let y = x.a\nrow \"the name\"=x.name // the key\ncolumn a= y\n  detail   x.items\n",
            "document D as d where kind absent {\n  at most one per deployment\n  a: int\n}\n\n/// Doc.\ntable t.x\n  for x in d.xs if x.a > 1\n  let y = x.a\n  row \"the name\" = x.name // the key\n  column a = y\n  detail x.items\n",
        );
    }

    #[test]
    fn every_comment_is_kept() {
        let formatted = format(MESSY).expect("parses");
        assert_eq!(comment_texts(MESSY), comment_texts(&formatted));
        assert_eq!(comment_texts(MESSY).len(), 17, "`//` in strings and messages is not a comment");
    }

    #[test]
    fn comments_stay_where_they_were() {
        check(
            "// top\n\nenum A { a } // after a\n// above B\nenum B { b }\n",
            "// top\n\nenum A { a } // after a\n\n// above B\nenum B { b }\n",
        );
        // A comment inside code printed on one line moves above that code.
        check("enum A {\n  a // first\n  b\n}\n", "// first\nenum A { a b }\n");
        check(
            "rule a.b\n  require x // why\n    else fail \"m\"\n",
            "rule a.b\n  // why\n  require x else fail \"m\"\n",
        );
        // A comment at the end of a body stays inside it; one after a rule's
        // last clause stays with the rule when indented.
        check(
            "record R {\n  a: int\n  // a: string\n}\nrule a.b\n  require x else fail \"m\"\n  // at x\nrule a.c\n  require x else fail \"m\"\n// at the end\n",
            "record R {\n  a: int\n  // a: string\n}\n\nrule a.b\n  require x else fail \"m\"\n  // at x\n\nrule a.c\n  require x else fail \"m\"\n// at the end\n",
        );
    }

    #[test]
    fn blank_lines_separate_items_and_are_kept_inside_them() {
        check(
            "enum A { a }\n\n\n\nenum B { b }\nrecord R {\n\n  a: int\n\n\n\n  b: int\n\n}\n",
            "enum A { a }\n\nenum B { b }\n\nrecord R {\n  a: int\n\n  b: int\n}\n",
        );
    }

    #[test]
    fn a_field_with_a_bound_puts_each_clause_on_its_own_line() {
        check(
            "record R {\n  a?: int >= 1 default m.a floor m.b rule r.a\n  b?: list string\n    default []\n  c: list S unique rule r.c\n}\n",
            "record R {\n  a?: int >= 1\n    default m.a\n    floor m.b rule r.a\n  b?: list string default []\n  c: list S unique rule r.c\n}\n",
        );
    }

    #[test]
    fn a_long_condition_breaks_at_its_loosest_operator() {
        let long = "rule a.b\n  require present(binding.escalation_routes) and \"verification-divergence\" in binding.escalation_routes else fail \"m\"\n";
        check(
            long,
            "rule a.b\n  require present(binding.escalation_routes)\n      and \"verification-divergence\" in binding.escalation_routes\n    else fail \"m\"\n",
        );
        // Short enough without its `else`: only the `else` moves.
        check(
            "rule a.b\n  when a or b else \"a reason that is long enough to need a line of its own, surely, as it goes on and on\"\n",
            "rule a.b\n  when a or b\n    else \"a reason that is long enough to need a line of its own, surely, as it goes on and on\"\n",
        );
    }

    #[test]
    fn parentheses_are_kept_and_none_are_added() {
        check("fn f(x) = (a and b) or ((c))\n", "fn f(x) = (a and b) or (c)\n");
        check("fn f(x) = a and (b or c)\n", "fn f(x) = a and (b or c)\n");
        // A quantifier's body runs to the end: last, it needs none.
        check("fn f(x) = a and some b in x: b or c\n", "fn f(x) = a and some b in x: b or c\n");
        check("fn f(x) = not (every a in x: a) or x\n", "fn f(x) = not (every a in x: a) or x\n");
    }

    #[test]
    fn a_long_condition_breaks_inside_parentheses_and_after_a_quantifier() {
        let input = "rule a.b\n  require present(item.first_long_field_name) or (matches(item.second_long_field_name, \"^x\") and item.third_field == \"temporal\") else fail \"m\"\n  require some name, t in binding.triggers.surfaces: name == item.source_surface and t.class == \"temporal\" else fail \"m\"\n";
        check(
            input,
            "rule a.b
  require present(item.first_long_field_name)
      or (matches(item.second_long_field_name, \"^x\") and item.third_field == \"temporal\")
    else fail \"m\"
  require some name, t in binding.triggers.surfaces:
      name == item.source_surface and t.class == \"temporal\"
    else fail \"m\"
",
        );
    }

    #[test]
    fn messages_and_names_keep_their_escapes_and_quotes() {
        check(
            "enum Host { \"self-hosted\" cloud }\nrule a.b\n  require x else fail \"\\{\\\"1.0\\\"\\} `{x.y}`\\n\"\n",
            "enum Host { \"self-hosted\" cloud }\n\nrule a.b\n  require x else fail \"\\{\\\"1.0\\\"\\} `{x.y}`\\n\"\n",
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused() {
        let errors = format("enum A { a }\nrule broken\n  require\n").expect_err("refused");
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[test]
    fn nothing_and_only_comments_are_formatted_too() {
        check("", "");
        check("\n\n// only\n\n\n// comments   \n", "// only\n\n// comments\n");
    }

    #[test]
    fn the_check_catches_a_lost_comment_or_a_changed_tree() {
        let text = "enum A { a } // c\n";
        let tree = parser::parse(text).file;
        let comments = parser::comments(text);
        assert_eq!(verify(text, &tree, &comments, "enum A { a } // c\n"), Ok(()));
        assert!(verify(text, &tree, &comments, "enum A { a }\n").is_err());
        assert!(verify(text, &tree, &comments, "enum A { b } // c\n").is_err());
        assert!(verify(text, &tree, &comments, "enum A { a // c\n").is_err());
    }
}
