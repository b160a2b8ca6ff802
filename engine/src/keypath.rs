//! Key paths: where a finding is in its document, as a path of keys
//! (`a.b[2]."x.y"`). A key is written as it is when it is made of ASCII
//! letters, digits, `_` and `-`, else quoted as a JSON string; a list
//! position is `[n]`; an entry of a list of records that declare an
//! `identity` is `["name"]` in a finding of a rule, its position in a
//! structural finding. The document itself is its kind's binder name
//! (`team` for `document Team as team`); a path inside it does not
//! start with that name.
//!
//! The paths are computed once, when the findings of a check are finished
//! ([`place_findings`]), for the findings a report lists (every outcome but
//! PASS), from the loaded trees: the node at a finding's span, typed by the
//! policy as it is descended into, then the keys below it that the document
//! does not hold ([`crate::diagnostic::Place::below`]).

use grail_lang::ast::Span;

use crate::diagnostic::{Finding, KeyPaths, Outcome};
use crate::document::{Node, NodeKind};
use crate::hir::{Policy, Ty};

/// Appends `key` as one step of a path: `.key`, or `."k.ey"` when it needs quotes.
pub fn push_key(out: &mut String, key: &str) {
    out.push('.');
    if !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        out.push_str(key);
    } else {
        push_quoted(out, key);
    }
}

/// Appends a list position: `[n]`.
pub fn push_index(out: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(out, "[{i}]");
}

/// Appends a list entry named by its identity: `["name"]`.
pub fn push_name(out: &mut String, name: &str) {
    out.push('[');
    push_quoted(out, name);
    out.push(']');
}

fn push_quoted(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::from(s).to_string());
}

/// A path as it is shown: without the leading `.` of its first key, or
/// `root` when it is empty.
fn finish(mut path: String, root: &str) -> String {
    if path.is_empty() {
        return root.to_string();
    }
    if path.starts_with('.') {
        path.remove(0);
    }
    path
}

/// The path, below `root` (read as `ty`), of the node at `span`: a value's
/// span or an entry's key span. When no node has exactly that span, the path
/// of the innermost one that holds it. Entries of lists of records with an
/// identity are named by it when `by_identity`.
pub fn locate(policy: &Policy, root: &Node, ty: Option<&Ty>, span: Span, by_identity: bool) -> String {
    // Room for a usual path, so that it is not grown key by key.
    let mut out = String::with_capacity(64);
    let (mut node, mut ty) = (root, ty);
    let holds = |outer: Span| outer.start <= span.start && span.end <= outer.end;
    loop {
        if node.span == span {
            return out;
        }
        match &node.kind {
            NodeKind::Map(entries) => {
                let Some(e) = entries.iter().find(|e| e.key_span == span || holds(e.value.span)) else {
                    return out;
                };
                push_key(&mut out, &e.key);
                ty = ty.and_then(|t| entry_ty(policy, t, &e.key));
                if e.key_span == span {
                    return out;
                }
                node = &e.value;
            }
            NodeKind::List(items) => {
                let Some((i, item)) = items.iter().enumerate().find(|(_, item)| holds(item.span)) else {
                    return out;
                };
                let elem = match ty {
                    Some(Ty::List(elem)) => Some(&**elem),
                    _ => None,
                };
                match elem.filter(|_| by_identity).and_then(|t| identity(policy, t, item)) {
                    Some(name) => push_name(&mut out, name),
                    None => push_index(&mut out, i),
                }
                (node, ty) = (item, elem);
            }
            _ => return out,
        }
    }
}

/// The type of the value at `key` of a value of type `ty`.
fn entry_ty<'p>(policy: &'p Policy, ty: &'p Ty, key: &str) -> Option<&'p Ty> {
    match ty {
        Ty::Record(r) => {
            let def = policy.records.get(*r as usize)?;
            def.field(key).map(|f| &def.fields[f].ty)
        }
        Ty::Map(_, v) => Some(v),
        _ => None,
    }
}

/// The identity an entry of type `ty` declares, when its record has one and
/// the entry gives it as a string.
fn identity<'n>(policy: &Policy, ty: &Ty, item: &'n Node) -> Option<&'n str> {
    let Ty::Record(r) = ty else { return None };
    let def = policy.records.get(*r as usize)?;
    let name = &def.fields[def.identity?].name;
    let NodeKind::Map(entries) = &item.kind else { return None };
    match &entries.iter().find(|e| e.key == *name)?.value.kind {
        NodeKind::Str(s) => Some(s),
        _ => None,
    }
}

/// The path, below `root` (read as `ty`), of the first `ref` field whose
/// value is `target`, and the type its file is read as.
fn naming<'p>(policy: &'p Policy, root: &Node, ty: &'p Ty, target: &str) -> Option<(String, &'p Ty)> {
    fn walk<'p>(
        policy: &'p Policy,
        node: &Node,
        ty: &'p Ty,
        is_ref: bool,
        target: &str,
        out: &mut String,
    ) -> Option<&'p Ty> {
        match (&node.kind, ty) {
            (NodeKind::Str(s), _) if is_ref && s == target => Some(ty),
            (NodeKind::Map(entries), Ty::Record(r)) => {
                let def = policy.records.get(*r as usize)?;
                entries.iter().find_map(|e| {
                    let f = &def.fields[def.field(&e.key)?];
                    let len = out.len();
                    push_key(out, &e.key);
                    let found = walk(policy, &e.value, &f.ty, f.is_ref, target, out);
                    if found.is_none() {
                        out.truncate(len);
                    } else if f.is_ref && matches!(e.value.kind, NodeKind::Str(_)) {
                        // The entry that names the file is the record holding the field.
                        out.truncate(len);
                    }
                    found
                })
            }
            (NodeKind::Map(entries), Ty::Map(_, v)) => entries.iter().find_map(|e| {
                let len = out.len();
                push_key(out, &e.key);
                let found = walk(policy, &e.value, v, is_ref, target, out);
                if found.is_none() {
                    out.truncate(len);
                }
                found
            }),
            (NodeKind::List(items), Ty::List(elem)) => items.iter().enumerate().find_map(|(i, item)| {
                let len = out.len();
                push_index(out, i);
                let found = walk(policy, item, elem, false, target, out);
                if found.is_none() {
                    out.truncate(len);
                }
                found
            }),
            _ => None,
        }
    }
    let mut out = String::new();
    walk(policy, root, ty, false, target, &mut out).map(|t| (out, t))
}

/// A document a finding may point into.
pub struct Tree<'a> {
    /// Its index in the deployment.
    pub doc: u32,
    pub root: &'a Node,
    /// What it is read as: a document kind's record, or `None` when the kind
    /// is not known.
    pub ty: Option<Ty>,
    /// The path of the document itself (its kind's binder name).
    pub binder: &'a str,
    /// For an attached file: the document that names it, and the path as written there.
    pub named_by: Option<(u32, &'a str)>,
}

/// The paths of findings that point at no tree.
pub struct Fallback<'a> {
    /// A finding in a document that could not be read.
    pub unread: &'a str,
    /// A finding with no location.
    pub nowhere: &'a str,
}

/// Fills [`crate::diagnostic::Place::paths`] for every finding that is not a
/// PASS and has none yet.
pub fn place_findings(policy: &Policy, trees: &[Tree<'_>], fallback: Fallback<'_>, findings: &mut [Finding]) {
    let tree = |doc: u32| trees.iter().find(|t| t.doc == doc);
    for f in findings.iter_mut().filter(|f| f.outcome != Outcome::Pass && f.place.paths.is_none()) {
        let by_identity = f.place.by_identity;
        let bound = std::mem::take(&mut f.bound);
        // The path of (doc, span) plus `below`, and the path inside an attached file.
        let place = |doc: u32, span: Span, below: &str| -> (String, Option<String>) {
            let Some(t) = tree(doc) else { return (fallback.unread.to_string(), None) };
            let mut inner = locate(policy, t.root, t.ty.as_ref(), span, by_identity);
            inner.push_str(below);
            let Some((from, written)) = t.named_by else { return (finish(inner, t.binder), None) };
            let attachment = (!inner.is_empty()).then(|| finish(inner, ""));
            // The entry the rule was judging when it read the file (several may name one file),
            // else the first entry that names it.
            if let Some(n) = tree(from)
                && let Some((_, s)) = bound.iter().rev().find(|(d, _)| *d == from)
            {
                return (finish(locate(policy, n.root, n.ty.as_ref(), *s, by_identity), n.binder), attachment);
            }
            let entry = tree(from).and_then(|n| Some((n, naming(policy, n.root, n.ty.as_ref()?, written)?)));
            let Some((n, (entry, _))) = entry else { return (fallback.unread.to_string(), None) };
            (finish(entry, n.binder), attachment)
        };
        let (path, attachment_path) = match f.place.anchor.or(f.location) {
            Some((doc, span)) => place(doc, span, &f.place.below),
            None => (fallback.nowhere.to_string(), None),
        };
        let related = f.labels.iter().map(|(doc, span, _)| place(*doc, *span, "").0).collect();
        f.place.paths = Some(Box::new(KeyPaths { path, attachment_path, related }));
        f.bound = bound;
    }
}

/// The type an attached file named at `written` by document `from` is read as.
pub fn attached_ty(policy: &Policy, from: &Tree<'_>, written: &str) -> Option<Ty> {
    naming(policy, from.root, from.ty.as_ref()?, written).map(|(_, t)| t.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_when_they_need_it() {
        let mut out = String::new();
        for k in ["plain", "with-dash_1", "x.y", "a:b", "a b", "", "é"] {
            push_key(&mut out, k);
        }
        assert_eq!(out, r#".plain.with-dash_1."x.y"."a:b"."a b".""."é""#);
        let mut out = String::new();
        push_name(&mut out, "b\"c");
        push_index(&mut out, 3);
        assert_eq!(out, r#"["b\"c"][3]"#);
    }
}
