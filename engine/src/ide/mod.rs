//! Queries for editors: what is at an offset of a policy file or a document,
//! where it is declared and used, what may be typed there, and how a finding
//! can be fixed.
//!
//! Everything here answers with plain data (byte spans, policy locations,
//! strings); the language server converts it to its protocol. A file is a
//! policy file when it is one of the files of the [`PolicySet`]; any other
//! file is a document checked against that policy.

mod document;
mod edit;
mod fix;
mod hints;
pub mod index;
mod kind;
mod policy;
mod symbols;
mod tokens;

use grail_lang::ast::Span;

use crate::db::{PolicySet, SourceText};
use crate::diagnostic::Finding;
use crate::hir::Loc;

pub use hints::{InlayHint, inlay_hints};
pub use index::{Decl, PolicyIndex, Symbol, Use, policy_index};
pub use kind::{DocumentKind, document_kind};
pub use symbols::{
    OutlineItem, RenameError, SymbolKind, WorkspaceSymbol, folds, outline, rename, rename_target, workspace_symbols,
};
pub use tokens::{Token, TokenKind, semantic_tokens};

/// What a hover shows: Markdown, about the text at `span`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub markdown: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A key of a record.
    Field,
    /// A variant of an enumeration (a value, or a key of a map keyed by it).
    Variant,
    /// `true`, `false`.
    Value,
    Enum,
    Record,
    Matrix,
    Function,
    Column,
    Variable,
}

/// One thing that may be typed at the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    /// The text that replaces [`Completions::replace`].
    pub insert: String,
    pub kind: CompletionKind,
    /// A type, or a one-line description.
    pub detail: String,
    pub docs: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completions {
    /// The partly typed word at the cursor, which a completion replaces.
    pub replace: Span,
    pub items: Vec<Completion>,
}

/// The call the cursor is in: each form of the function, what it does, and
/// the argument the cursor is at (0 for the first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureHelp {
    pub signatures: Vec<String>,
    pub doc: String,
    pub argument: usize,
}

/// Signature help at `offset` of a policy file: inside the parentheses of a
/// call of a built-in or a declared function. Documents have none.
pub fn signature_help(
    db: &dyn salsa::Database,
    set: PolicySet,
    file: SourceText,
    offset: usize,
) -> Option<SignatureHelp> {
    policy::signature_help(db, set, policy_file(db, set, file)?, offset)
}

/// Replace `span` of a text by `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub span: Span,
    pub text: String,
}

/// A change to one document that makes a finding go away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<TextEdit>,
}

/// Applies edits that do not overlap to a text.
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut edits: Vec<&TextEdit> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_string();
    for e in edits {
        let start = e.span.start.min(out.len());
        let end = e.span.end.clamp(start, out.len());
        out.replace_range(start..end, &e.text);
    }
    out
}

/// The index of `file` in the policy, if it is a policy file.
fn policy_file(db: &dyn salsa::Database, set: PolicySet, file: SourceText) -> Option<u32> {
    set.files(db).iter().position(|f| *f == file).map(|i| i as u32)
}

/// The hover at `offset` of a policy file or a document.
pub fn hover(db: &dyn salsa::Database, set: PolicySet, file: SourceText, offset: usize) -> Option<Hover> {
    match policy_file(db, set, file) {
        Some(f) => policy::hover(db, set, f, offset),
        None => document::hover(db, set, file, offset),
    }
}

/// Where the name at `offset` is declared (for a document key: its schema field).
pub fn definition(db: &dyn salsa::Database, set: PolicySet, file: SourceText, offset: usize) -> Vec<Loc> {
    let symbol = match policy_file(db, set, file) {
        Some(f) => policy::symbol_at(db, set, f, offset),
        None => document::symbol_at(db, set, file, offset),
    };
    let index = policy_index(db, set);
    symbol.and_then(|s| index.decl(&s)).map(|d| vec![d.loc]).unwrap_or_default()
}

/// Every use of the name at `offset` (for a document key: where rules read its field).
pub fn references(
    db: &dyn salsa::Database,
    set: PolicySet,
    file: SourceText,
    offset: usize,
    include_declaration: bool,
) -> Vec<Loc> {
    let symbol = match policy_file(db, set, file) {
        Some(f) => policy::symbol_at(db, set, f, offset),
        None => document::symbol_at(db, set, file, offset),
    };
    let Some(symbol) = symbol else { return Vec::new() };
    let index = policy_index(db, set);
    let mut locs = Vec::new();
    if include_declaration && let Some(d) = index.decl(&symbol) {
        locs.push(d.loc);
    }
    for l in index.uses_of(&symbol) {
        if !locs.contains(&l) {
            locs.push(l);
        }
    }
    locs
}

/// What may be typed at `offset`.
pub fn completions(db: &dyn salsa::Database, set: PolicySet, file: SourceText, offset: usize) -> Option<Completions> {
    match policy_file(db, set, file) {
        Some(f) => policy::completions(db, set, f, offset),
        None => document::completions(db, set, file, offset),
    }
}

/// The fixes of one finding of `doc` (as [`crate::db::check_document`] reports it).
/// Every fix offered is checked: applied, the finding is gone.
pub fn fixes(db: &dyn salsa::Database, set: PolicySet, doc: SourceText, finding: &Finding) -> Vec<Fix> {
    fix::fixes(db, set, doc, finding)
}

/// Every fix of a document at once, with the findings it fixes: the first
/// fix of each finding whose edits touch none of the others', kept only if,
/// applied together, each of those findings is gone. `None` when nothing can
/// be fixed.
pub fn fix_all(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Option<(Fix, Vec<Finding>)> {
    fix::fix_all(db, set, doc)
}

/// What a Markdown file is to the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Marker {
    /// It carries the marker line of one of the policy's Markdown kinds (named): a work item.
    Marked { kind: String },
    /// A line of it is nearly a marker (`v2` for `v1`, a slip of the hand):
    /// most likely a work item whose marker is wrong, which would otherwise
    /// go unchecked without a word.
    NearMiss { span: Span, marker: String, kind: String },
    /// Any other Markdown file (a README): not checked.
    Unmarked,
}

/// Whether a Markdown file is a work item of the policy, or nearly one.
pub fn markdown_marker(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Marker {
    let compiled = crate::db::compile_policy(db, set);
    let kinds: Vec<(&str, &str)> =
        compiled.policy.markdown_kinds().map(|(d, marker, _)| (marker, d.name.as_str())).collect();
    let kind_of = |marker: &str| kinds.iter().find(|(m, _)| *m == marker).map_or(String::new(), |(_, k)| k.to_string());
    let text = doc.text(db);
    if let Some(line) = text.lines().find(|l| kinds.iter().any(|(m, _)| *m == l.trim())) {
        return Marker::Marked { kind: kind_of(line.trim()) };
    }
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if !trimmed.is_empty()
            && let Some(marker) = crate::suggest::did_you_mean(trimmed, kinds.iter().map(|(m, _)| *m))
        {
            let start = at + line.find(trimmed).unwrap_or(0);
            let span = Span::new(start, start + trimmed.len());
            return Marker::NearMiss { span, marker: marker.to_string(), kind: kind_of(marker) };
        }
        at += line.len();
    }
    Marker::Unmarked
}

/// The places in a document that name a file it attaches (`ref` fields, such
/// as a probe transcript): the span of the path, and the path as written.
pub fn document_links(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Vec<(Span, String)> {
    let references = crate::db::document_references(db, set, doc);
    if references.is_empty() {
        return Vec::new();
    }
    let Ok(root) = crate::db::load_document(db, doc) else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match &node.kind {
            crate::document::NodeKind::Str(s) if references.contains(s) => out.push((node.span, s.clone())),
            crate::document::NodeKind::List(items) => stack.extend(items.iter()),
            crate::document::NodeKind::Map(entries) => stack.extend(entries.iter().map(|e| &e.value)),
            _ => {}
        }
    }
    out.sort_by_key(|(s, _)| s.start);
    out
}
