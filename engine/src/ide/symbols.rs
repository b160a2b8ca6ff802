//! The policy's declarations as an outline, a list to search, folds, and
//! the edits of a rename: all read from the symbol index.

use grail_lang::ast::Span;

use super::index::{Symbol, policy_index};
use crate::db::PolicySet;
use crate::hir::Loc;

/// What a declaration is, for an outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Enum,
    Variant,
    Record,
    Field,
    Matrix,
    Column,
    Function,
    Rule,
}

/// One entry of an outline: a declaration, and the declarations inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineItem {
    pub name: String,
    pub kind: SymbolKind,
    /// The whole item.
    pub span: Span,
    /// Its name.
    pub name_span: Span,
    pub children: Vec<OutlineItem>,
}

/// A declaration anywhere in the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceSymbol {
    pub name: String,
    pub kind: SymbolKind,
    pub loc: Loc,
    /// The item it belongs to (the record of a field...), when it has one.
    pub container: Option<String>,
}

fn describe(symbol: &Symbol) -> Option<(String, SymbolKind, Option<String>)> {
    Some(match symbol {
        Symbol::Enum(n) => (n.clone(), SymbolKind::Enum, None),
        Symbol::Variant { enumeration, variant } => (variant.clone(), SymbolKind::Variant, Some(enumeration.clone())),
        Symbol::Record(n) => (n.clone(), SymbolKind::Record, None),
        Symbol::Field { record, field } => (field.clone(), SymbolKind::Field, Some(record.clone())),
        Symbol::Matrix(n) => (n.clone(), SymbolKind::Matrix, None),
        Symbol::Column { matrix, column } => (column.clone(), SymbolKind::Column, Some(matrix.clone())),
        Symbol::Function(n) => (n.clone(), SymbolKind::Function, None),
        Symbol::Rule(n) => (n.clone(), SymbolKind::Rule, None),
        Symbol::Local(_) => return None,
    })
}

/// The outline of policy file `file`: its items in source order, each with
/// the variants, fields or columns it declares. A rule id that a field or a
/// structural check reports under is a child of its item, not an item.
pub fn outline(db: &dyn salsa::Database, set: PolicySet, file: u32) -> Vec<OutlineItem> {
    let index = policy_index(db, set);
    let mut items: Vec<OutlineItem> = Vec::new();
    let mut decls: Vec<_> = index.decls.iter().filter(|d| d.loc.file == file).collect();
    decls.sort_by_key(|d| (d.item.span.start, std::cmp::Reverse(d.item.span.end)));
    for d in decls {
        let Some((name, kind, _)) = describe(&d.symbol) else { continue };
        let entry = OutlineItem { name, kind, span: d.item.span, name_span: d.loc.span, children: Vec::new() };
        match items.last_mut() {
            Some(parent) if parent.span.start <= d.item.span.start && d.item.span.end <= parent.span.end => {
                parent.children.push(entry)
            }
            _ => items.push(entry),
        }
    }
    items
}

/// The declarations whose name contains `query` (case-insensitive; every one for an empty query).
pub fn workspace_symbols(db: &dyn salsa::Database, set: PolicySet, query: &str) -> Vec<WorkspaceSymbol> {
    let index = policy_index(db, set);
    let query = query.to_lowercase();
    let mut out: Vec<WorkspaceSymbol> = Vec::new();
    for d in &index.decls {
        let Some((name, kind, container)) = describe(&d.symbol) else { continue };
        if !name.to_lowercase().contains(&query) {
            continue;
        }
        // A rule id declared by a rule and reported by checks elsewhere: listed once per place.
        if out.iter().any(|s| s.loc == d.loc) {
            continue;
        }
        out.push(WorkspaceSymbol { name, kind, loc: d.loc, container });
    }
    out
}

/// The items of policy file `file` that span more than one line, as folds.
pub fn folds(db: &dyn salsa::Database, set: PolicySet, file: u32) -> Vec<Span> {
    let Some(source) = set.files(db).get(file as usize) else { return Vec::new() };
    let text = source.text(db);
    let multiline = |s: &Span| text.get(s.start..s.end.min(text.len())).is_some_and(|t| t.contains('\n'));
    let mut out = Vec::new();
    for item in outline(db, set, file) {
        if multiline(&item.span) {
            out.push(item.span);
        }
        out.extend(item.children.iter().map(|c| c.span).filter(|s| multiline(s)));
    }
    out
}

/// Why a rename is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameError(pub String);

/// The name at `offset` of policy file `file` that can be renamed, and its span.
pub fn rename_target(db: &dyn salsa::Database, set: PolicySet, file: u32, offset: usize) -> Option<(Symbol, Span)> {
    let index = policy_index(db, set);
    let (symbol, span) = index.at(file, offset)?;
    Some((symbol.clone(), span))
}

/// The edits that rename the name at `offset` of policy file `file` to
/// `new_name` everywhere in the policy: its declarations and every use.
pub fn rename(
    db: &dyn salsa::Database,
    set: PolicySet,
    file: u32,
    offset: usize,
    new_name: &str,
) -> Result<Vec<Loc>, RenameError> {
    let index = policy_index(db, set);
    let Some((symbol, _)) = index.at(file, offset) else {
        return Err(RenameError("there is no name to rename here".into()));
    };
    let valid = match symbol {
        Symbol::Rule(_) => is_rule_id(new_name),
        Symbol::Variant { .. } | Symbol::Field { .. } => is_name(new_name) || is_quoted(new_name),
        _ => is_name(new_name),
    };
    if !valid {
        let what = if matches!(symbol, Symbol::Rule(_)) { "a rule id (`area.name`)" } else { "a name" };
        return Err(RenameError(format!("`{new_name}` is not {what}")));
    }
    let taken = index.decls.iter().any(|d| {
        describe(&d.symbol).is_some_and(|(n, k, c)| {
            n == new_name
                && Some(k) == describe(symbol).map(|(_, k, _)| k)
                && c == describe(symbol).and_then(|(_, _, c)| c)
        })
    });
    if taken {
        return Err(RenameError(format!("`{new_name}` is already declared")));
    }
    let mut locs: Vec<Loc> = index.decls.iter().filter(|d| &d.symbol == symbol).map(|d| d.loc).collect();
    locs.extend(index.uses_of(symbol));
    locs.sort_by_key(|l| (l.file, l.span.start));
    locs.dedup();
    Ok(locs)
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && grail_lang::parse(&format!("fn {s}() = 1\n")).errors.is_empty()
}

fn is_quoted(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('"') && s.ends_with('"') && !s[1..s.len() - 1].contains(['"', '\\', '\n'])
}

fn is_rule_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let mut c = p.chars();
            c.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
