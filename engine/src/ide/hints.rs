//! Inlay hints in documents: the effective value of each top-level key that
//! the policy gives a default or a floor and the document leaves out, and of
//! each such key left out inside an entry of a map keyed by an enumeration
//! (`min_checkers` of a topology's `C4`). The
//! values are the effective state of `grail explain` ([`crate::explain::Cell`],
//! of the document's deployment when it has one, layers applied), never
//! computed again here, so that the editor and `explain` agree.

use crate::db::{
    Deployment, PolicySet, SourceText, compile_policy, explain_deployment, explain_document, load_document,
};
use crate::diagnostic::Provenance;
use crate::document::NodeKind;
use crate::explain::Cell;
use crate::hir::Ty;

/// A hint shown at `offset` of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: usize,
    pub label: String,
    /// Markdown: each value and where it comes from.
    pub tooltip: String,
}

/// At most this many keys of a map are shown in a label; the tooltip has them all.
const MAX_SHOWN: usize = 6;

/// The hints of document `doc`, checked alone or, given its deployment, with it.
pub fn inlay_hints(
    db: &dyn salsa::Database,
    set: PolicySet,
    doc: SourceText,
    deployment: Option<Deployment>,
) -> Vec<InlayHint> {
    if set.files(db).contains(&doc) || crate::check::is_markdown(doc.path(db)) {
        return Vec::new();
    }
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return Vec::new();
    }
    let policy = &compiled.policy;
    let Ok(root) = load_document(db, doc) else { return Vec::new() };
    let NodeKind::Map(entries) = &root.kind else { return Vec::new() };
    let Ok(kind) = crate::conform::select_kind(policy, 0, root) else { return Vec::new() };
    let (cells, documents): (&[Cell], &[SourceText]) = match deployment {
        Some(d) => {
            let explained = explain_deployment(db, set, d);
            (&explained.explanation.cells, &explained.documents)
        }
        None => (&explain_document(db, set, doc).cells, std::slice::from_ref(&doc)),
    };
    let text = doc.text(db);
    // The end of the mapping's first line: where a key left out is said.
    let start = root.span.start.min(text.len());
    let offset = text[start..].find(['\n', '\r']).map_or(text.len(), |i| start + i);
    let record = &policy.records[policy.documents[kind as usize].record as usize];
    let mut hints = Vec::new();
    for field in &record.fields {
        if (field.default.is_none() && field.bounds.is_empty()) || entries.iter().any(|e| e.key == field.name) {
            continue;
        }
        let mut values: Vec<(&str, String, String)> = cells
            .iter()
            .filter(|c| c.kind == kind && c.column == field.name)
            .filter_map(|c| effective(db, c, documents).map(|(value, from)| (c.key.as_str(), value, from)))
            .collect();
        if values.is_empty() {
            continue;
        }
        // In the order of the enumeration that keys the map, not the order the layers merged in.
        if let Ty::Map(key, _) = &field.ty
            && let Ty::Enum(e) = **key
            && let Some(e) = policy.enums.get(e as usize)
        {
            values.sort_by_key(|(k, ..)| e.variants.iter().position(|v| v == k));
        }
        let mut shown: Vec<String> = values.iter().take(MAX_SHOWN).map(|(k, v, _)| format!("{k}: {v}")).collect();
        if values.len() > MAX_SHOWN {
            shown.push("…".into());
        }
        let label = format!("{}: {{{}}} ({})", field.name, shown.join(", "), origins(&values));
        let tooltip = tooltip(format!("`{}` is left out", field.name), &values);
        hints.push(InlayHint { offset, label, tooltip });
    }
    hints.extend(inner_hints(db, policy, kind, entries, cells, documents, text));
    hints
}

/// The keys left out inside each entry of a map keyed by an enumeration
/// (`min_checkers` of `verification_topology.C4`), said at the end of the
/// line of the entry's key, with the value the effective state gives.
fn inner_hints(
    db: &dyn salsa::Database,
    policy: &crate::hir::Policy,
    kind: crate::hir::DocKindId,
    entries: &[crate::document::Entry],
    cells: &[Cell],
    documents: &[SourceText],
    text: &str,
) -> Vec<InlayHint> {
    let record = &policy.records[policy.documents[kind as usize].record as usize];
    let mut hints = Vec::new();
    for field in &record.fields {
        let Ty::Map(key, value) = &field.ty else { continue };
        let (Ty::Enum(_), Ty::Record(inner)) = (&**key, &**value) else { continue };
        let Some(map) = entries.iter().find(|e| e.key == field.name) else { continue };
        let NodeKind::Map(items) = &map.value.kind else { continue };
        for item in items {
            let NodeKind::Map(written) = &item.value.kind else { continue };
            let mut values: Vec<(&str, String, String)> = Vec::new();
            for f in &policy.records[*inner as usize].fields {
                if (f.default.is_none() && f.bounds.is_empty()) || written.iter().any(|e| e.key == f.name) {
                    continue;
                }
                let column = format!("{}.{}", field.name, f.name);
                let cell = cells.iter().find(|c| c.kind == kind && c.key == item.key && c.column == column);
                if let Some((value, from)) = cell.and_then(|c| effective(db, c, documents)) {
                    values.push((f.name.as_str(), value, from));
                }
            }
            if values.is_empty() {
                continue;
            }
            let start = item.key_span.start.min(text.len());
            let offset = text[start..].find(['\n', '\r']).map_or(text.len(), |i| start + i);
            let shown: Vec<String> = values.iter().map(|(k, v, _)| format!("{k}: {v}")).collect();
            let label = format!("{} ({})", shown.join(", "), origins(&values));
            let tooltip = tooltip(format!("left out of `{}.{}`", field.name, item.key), &values);
            hints.push(InlayHint { offset, label, tooltip });
        }
    }
    hints
}

/// Where the values come from, each once, in their order: `default, repo.yaml`.
fn origins(values: &[(&str, String, String)]) -> String {
    let mut origins: Vec<&str> = Vec::new();
    for (_, _, from) in values {
        if !origins.contains(&from.as_str()) {
            origins.push(from);
        }
    }
    origins.join(", ")
}

/// A hint's tooltip (Markdown): what is left out, then each value and where it comes from.
fn tooltip(left_out: String, values: &[(&str, String, String)]) -> String {
    let mut tooltip = format!("{left_out}; in effect:\n");
    for (k, v, from) in values {
        let from = if from == "default" { "the policy's default".to_string() } else { format!("`{from}`") };
        tooltip.push_str(&format!("\n- `{k}`: `{v}`, from {from}"));
    }
    tooltip
}

/// A cell's value in effect and where it comes from (`default`, or the path
/// of the document that set it); a value that a failing rule demotes falls
/// back to the shipped one, as `explain` says. `None` for a computed or
/// missing value, which no hint shows.
fn effective(db: &dyn salsa::Database, c: &Cell, documents: &[SourceText]) -> Option<(String, String)> {
    let (value, from) = match &c.demoted {
        Some(d) => (&d.to, &d.from),
        None => (&c.value, &c.from),
    };
    let from = match from {
        Provenance::Policy(_) => "default".to_string(),
        Provenance::Document(d, _) => documents.get(*d as usize)?.path(db).clone(),
        Provenance::Computed | Provenance::Missing(_) => return None,
    };
    Some((value.clone(), from))
}
