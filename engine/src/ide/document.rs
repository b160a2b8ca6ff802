//! Hover, navigation and completion in documents: what a key or value means
//! under the policy's schema, where its field is declared, what may be typed.

use grail_lang::ast::{BoundKind, Span};

use crate::conform::{Env, Resolved, conform, select_kind};
use crate::db::{PolicySet, SourceText, compile_policy, document_format, load_document};
use crate::document::{self, Format, Limits, Node, NodeKind};
use crate::hir::{DefaultDef, DocKindId, EnumId, FieldDef, Policy, RecordId, Ty};
use crate::ide::edit::scalar_text;
use crate::ide::index::{Symbol, policy_index, ty_name};
use crate::ide::policy::{listed, place as policy_place, word_at};
use crate::ide::{Completion, CompletionKind, Completions, Hover};
use crate::line_index::LineIndex;
use crate::value::{Origin, Val, ValKind};

/// One step down a document: a key of a mapping or an index of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

fn contains(span: Span, offset: usize) -> bool {
    span.start <= offset && offset <= span.end
}

/// The path to what is at `offset`, the node there, and whether the offset is on a key.
pub(super) fn locate(root: &Node, offset: usize) -> (Vec<Seg>, Vec<Span>, bool) {
    let mut path = Vec::new();
    let mut spans = Vec::new();
    let mut node = root;
    loop {
        match &node.kind {
            NodeKind::Map(entries) => {
                if let Some(e) = entries.iter().find(|e| contains(e.key_span, offset)) {
                    path.push(Seg::Key(e.key.clone()));
                    spans.push(e.key_span);
                    return (path, spans, true);
                }
                match entries.iter().find(|e| contains(e.value.span, offset)) {
                    Some(e) => {
                        path.push(Seg::Key(e.key.clone()));
                        spans.push(e.value.span);
                        node = &e.value;
                    }
                    None => return (path, spans, false),
                }
            }
            NodeKind::List(items) => match items.iter().position(|i| contains(i.span, offset)) {
                Some(i) => {
                    path.push(Seg::Index(i));
                    spans.push(items[i].span);
                    node = &items[i];
                }
                None => return (path, spans, false),
            },
            _ => return (path, spans, false),
        }
    }
}

/// The path to the node with exactly `span` (a value), or to the entry whose key has it.
pub(super) fn path_to(root: &Node, span: Span) -> Option<Vec<Seg>> {
    fn walk(node: &Node, span: Span, path: &mut Vec<Seg>) -> bool {
        if node.span == span {
            return true;
        }
        match &node.kind {
            NodeKind::Map(entries) => {
                for e in entries {
                    path.push(Seg::Key(e.key.clone()));
                    if e.key_span == span || walk(&e.value, span, path) {
                        return true;
                    }
                    path.pop();
                }
            }
            NodeKind::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    if walk(item, span, path) {
                        return true;
                    }
                    path.pop();
                }
            }
            _ => {}
        }
        false
    }
    let mut path = Vec::new();
    walk(root, span, &mut path).then_some(path)
}

/// The node at a path.
pub(super) fn node_at<'n>(root: &'n Node, path: &[Seg]) -> Option<&'n Node> {
    let mut node = root;
    for seg in path {
        node = match (&node.kind, seg) {
            (NodeKind::Map(entries), Seg::Key(k)) => &entries.iter().find(|e| &e.key == k)?.value,
            (NodeKind::List(items), Seg::Index(i)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

/// What the schema says about a place in a document.
#[derive(Clone, Debug)]
pub(super) struct Place {
    /// The type of the value here (`Ty::Error` when the schema does not know the place).
    pub ty: Ty,
    /// The field the value belongs to: a record's field, or for a map's or
    /// list's entries, the field holding the map or list.
    pub field: Option<(RecordId, usize)>,
    /// Whether the last step was a key of a map keyed by an enumeration or a string.
    pub map_key: bool,
    /// Enclosing enumeration keys, innermost last (`T2` of `reviews.T2`).
    pub keys: Vec<(EnumId, u32)>,
    /// The path, as subjects name it: `reviews.T2.reviewers[0]`.
    pub path: String,
}

pub(super) fn root_place(policy: &Policy, kind: DocKindId) -> Place {
    let record = policy.documents[kind as usize].record;
    Place { ty: Ty::Record(record), field: None, map_key: false, keys: Vec::new(), path: String::new() }
}

pub(super) fn child(policy: &Policy, place: &Place, seg: &Seg) -> Place {
    let join = |key: &str| if place.path.is_empty() { key.to_string() } else { format!("{}.{key}", place.path) };
    let unknown = |path: String| Place { ty: Ty::Error, field: None, map_key: false, keys: place.keys.clone(), path };
    match (&place.ty, seg) {
        (Ty::Record(r), Seg::Key(k)) => match policy.records.get(*r as usize).and_then(|d| d.field(k)) {
            Some(i) => Place {
                ty: policy.records[*r as usize].fields[i].ty.clone(),
                field: Some((*r, i)),
                map_key: false,
                keys: place.keys.clone(),
                path: join(k),
            },
            None => unknown(join(k)),
        },
        (Ty::Map(key, value), Seg::Key(k)) => {
            let mut keys = place.keys.clone();
            if let Ty::Enum(e) = **key {
                match policy.enums.get(e as usize).and_then(|d| d.variants.iter().position(|v| v == k)) {
                    Some(v) => keys.push((e, v as u32)),
                    None => return unknown(join(k)),
                }
            }
            Place { ty: (**value).clone(), field: place.field, map_key: true, keys, path: join(k) }
        }
        (Ty::List(elem), Seg::Index(i)) => Place {
            ty: (**elem).clone(),
            field: place.field,
            map_key: false,
            keys: place.keys.clone(),
            path: format!("{}[{i}]", place.path),
        },
        (_, Seg::Key(k)) => unknown(join(k)),
        (_, Seg::Index(i)) => unknown(format!("{}[{i}]", place.path)),
    }
}

pub(super) fn walk(policy: &Policy, kind: DocKindId, path: &[Seg]) -> Place {
    path.iter().fold(root_place(policy, kind), |p, seg| child(policy, &p, seg))
}

/// The conformed value at a path.
fn value_at(policy: &Policy, root: &Val, path: &[Seg]) -> Option<Val> {
    let mut v = root.clone();
    for seg in path {
        v = match (&v.kind, seg) {
            (ValKind::Record(r, fields), Seg::Key(k)) => {
                fields.get(policy.records.get(*r as usize)?.field(k)?)?.clone()
            }
            (ValKind::Map(entries), Seg::Key(k)) => {
                entries.iter().find(|(key, _)| key.display(policy) == *k).map(|(_, v)| v.clone())?
            }
            (ValKind::List(items), Seg::Index(i)) => items.get(*i)?.clone(),
            _ => return None,
        };
    }
    Some(v)
}

/// The type of a field as written, with its integer minimum.
pub(super) fn field_type(policy: &Policy, f: &FieldDef) -> String {
    let t = ty_name(policy, &f.ty);
    match f.int_min {
        Some(min) => t.replacen("int", &format!("int >= {min}"), 1),
        None => t,
    }
}

/// The matrix cell for the nearest enclosing key of the matrix's enumeration.
pub(super) fn cell(policy: &Policy, keys: &[(EnumId, u32)], matrix: u32, column: usize) -> Option<(Val, u32)> {
    let m = policy.matrices.get(matrix as usize)?;
    let (_, v) = keys.iter().rev().find(|(e, _)| *e == m.key_enum)?;
    Some((m.cells.get(*v as usize)?.get(column)?.clone(), *v))
}

fn origin_text(db: &dyn salsa::Database, set: PolicySet, text: &str, v: &Val) -> String {
    match &v.origin {
        Origin::Document { span, .. } => {
            let (line, _) = LineIndex::new(text).line_col(text, span.start);
            format!("set in this document, line {line}")
        }
        Origin::Policy { file, span } => {
            format!("policy default, {}", policy_place(db, set, crate::hir::Loc { file: *file, span: *span }))
        }
        Origin::Missing(_) => "absent".into(),
        Origin::Computed => "computed".into(),
    }
}

fn shown(policy: &Policy, v: &Val) -> String {
    if v.is_invalid() { "invalid".into() } else { format!("`{}`", v.display(policy)) }
}

pub(super) fn hover(db: &dyn salsa::Database, set: PolicySet, doc: SourceText, offset: usize) -> Option<Hover> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    let policy = &compiled.policy;
    let root = load_document(db, doc).as_ref().ok()?;
    let kind = select_kind(policy, 0, root).ok()?;
    let (path, spans, on_key) = locate(root, offset);
    let span = *spans.last()?;
    let place = walk(policy, kind, &path);
    let (r, i) = place.field?;
    let record = &policy.records[r as usize];
    let field = &record.fields[i];
    let text = doc.text(db);
    let mut parts = Vec::new();

    let what = if place.map_key && on_key {
        format!("entry of `{}`", field.name)
    } else if matches!(path.last(), Some(Seg::Index(_))) {
        format!("item of `{}`", field.name)
    } else {
        format!("field `{}` of `{}`", field.name, record.name)
    };
    let ty = if place.ty == field.ty { field_type(policy, field) } else { ty_name(policy, &place.ty) };
    parts.push(format!("**`{}`**: `{ty}` · {what}", place.path));
    if !field.docs.is_empty() {
        parts.push(field.docs.join("\n"));
    }
    if let Ty::Enum(e) = &place.ty
        && let Some(def) = policy.enums.get(*e as usize)
    {
        let variants: Vec<String> = def.variants.iter().map(|v| format!("`{v}`")).collect();
        parts.push(format!(
            "`{}`: one of {}{}",
            def.name,
            variants.join(", "),
            if def.docs.is_empty() { String::new() } else { format!(". {}", def.docs.join(" ")) }
        ));
    }

    let none = Default::default();
    let never = |_: &str| Resolved::Refused("not read".into());
    let (value, _) = conform(policy, kind, 0, root, &Env { overrides: &none, resolve: &never, partial: false });
    if let Some(v) = value_at(policy, &value, &path) {
        match &v.kind {
            ValKind::Map(entries) if !entries.is_empty() => {
                let lines: Vec<String> = entries
                    .iter()
                    .map(|(k, x)| {
                        format!("- `{}`: {} ({})", k.display(policy), shown(policy, x), origin_text(db, set, text, x))
                    })
                    .collect();
                parts.push(format!("value:\n{}", lines.join("\n")));
            }
            ValKind::Record(..) | ValKind::List(_) | ValKind::Map(_) => {}
            _ => parts.push(format!("value {} ({})", shown(policy, &v), origin_text(db, set, text, &v))),
        }
    }
    if let Some(DefaultDef::Column { matrix, column, loc }) = &field.default {
        let m = &policy.matrices[*matrix as usize];
        let name = format!("{}.{}", m.name, m.columns[*column].name);
        match cell(policy, &place.keys, *matrix, *column) {
            Some((c, v)) => parts.push(format!(
                "default `{}` (`{name}[{}]`, {})",
                c.display(policy),
                policy.variant_name(m.key_enum, v),
                policy_place(db, set, *loc)
            )),
            None => parts.push(format!("default `{name}`, per `{}`", enum_name(policy, m.key_enum))),
        }
    }
    for b in &field.bounds {
        let m = &policy.matrices[b.matrix as usize];
        let word = match b.kind {
            BoundKind::Floor => "floor",
            BoundKind::Ceiling => "ceiling",
        };
        let name = format!("{}.{}", m.name, m.columns[b.column].name);
        match cell(policy, &place.keys, b.matrix, b.column) {
            Some((c, v)) => parts.push(format!(
                "{word} `{}` (`{name}[{}]`, rule `{}`, {})",
                c.display(policy),
                policy.variant_name(m.key_enum, v),
                b.rule,
                policy_place(db, set, b.loc)
            )),
            None => parts.push(format!("{word} `{name}`, rule `{}`, {}", b.rule, policy_place(db, set, b.loc))),
        }
    }
    let index = policy_index(db, set);
    let mut rules = index.rules_reading(&Symbol::Field { record: record.name.clone(), field: field.name.clone() });
    rules.extend(field.bounds.iter().map(|b| b.rule.clone()));
    rules.extend(field.unique.iter().map(|u| u.rule.clone()));
    rules.sort();
    rules.dedup();
    if !rules.is_empty() {
        parts.push(format!("read by {}", listed(&rules)));
    }
    Some(Hover { markdown: parts.join("\n\n"), span })
}

fn enum_name(policy: &Policy, e: EnumId) -> &str {
    policy.enums.get(e as usize).map_or("?", |d| d.name.as_str())
}

/// The declaration a key or value of a document stands for: a variant for a
/// key of a map keyed by an enumeration or a value of an enumeration, else the field.
pub(super) fn symbol_at(db: &dyn salsa::Database, set: PolicySet, doc: SourceText, offset: usize) -> Option<Symbol> {
    let compiled = compile_policy(db, set);
    let policy = &compiled.policy;
    let root = load_document(db, doc).as_ref().ok()?;
    let kind = select_kind(policy, 0, root).ok()?;
    let (path, _, on_key) = locate(root, offset);
    let place = walk(policy, kind, &path);
    let parent = walk(policy, kind, &path[..path.len().saturating_sub(1)]);
    let variant = |e: EnumId, v: &str| {
        let def = policy.enums.get(e as usize)?;
        def.variants
            .iter()
            .any(|x| x == v)
            .then(|| Symbol::Variant { enumeration: def.name.clone(), variant: v.to_string() })
    };
    if on_key
        && place.map_key
        && let (Ty::Map(k, _), Some(Seg::Key(key))) = (&parent.ty, path.last())
        && let Ty::Enum(e) = **k
    {
        return variant(e, key);
    }
    if !on_key
        && let Ty::Enum(e) = place.ty
        && let Some(NodeKind::Str(s)) = node_at(root, &path).map(|n| &n.kind)
        && let Some(found) = variant(e, s)
    {
        return Some(found);
    }
    let (r, i) = place.field?;
    let record = policy.records.get(r as usize)?;
    Some(Symbol::Field { record: record.name.clone(), field: record.fields.get(i)?.name.clone() })
}

const MARKER: &str = "__grail_complete__";

/// Where the cursor is, found by putting a marker in place of the word there.
struct Context {
    /// The path of the mapping the key is typed in, or of the value typed.
    path: Vec<Seg>,
    key: bool,
    /// The keys the mapping already has.
    present: Vec<String>,
    root: Node,
}

fn find_marker(node: &Node, path: &mut Vec<Seg>) -> Option<(bool, Vec<String>)> {
    match &node.kind {
        NodeKind::Str(s) if s == MARKER => Some((false, Vec::new())),
        NodeKind::Map(entries) => {
            if entries.iter().any(|e| e.key == MARKER) {
                let present = entries.iter().filter(|e| e.key != MARKER).map(|e| e.key.clone()).collect();
                return Some((true, present));
            }
            for e in entries {
                path.push(Seg::Key(e.key.clone()));
                if let Some(found) = find_marker(&e.value, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        NodeKind::List(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                if let Some(found) = find_marker(item, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        _ => None,
    }
}

fn contexts(text: &str, format: Format, word: Span) -> Vec<Context> {
    let candidates: Vec<String> = match format {
        Format::Yaml => vec![format!("{MARKER}: 0"), MARKER.to_string()],
        Format::Json | Format::JsonLines => vec![
            format!("\"{MARKER}\": 0"),
            format!("\"{MARKER}\": 0,"),
            format!(", \"{MARKER}\": 0"),
            format!("\"{MARKER}\""),
            format!("\"{MARKER}\","),
            format!(", \"{MARKER}\""),
        ],
    };
    let mut found: Vec<Context> = Vec::new();
    for c in candidates {
        let edited = format!("{}{c}{}", &text[..word.start], &text[word.end..]);
        let Ok(root) = document::load(&edited, format, &Limits::default()) else { continue };
        let mut path = Vec::new();
        if let Some((key, present)) = find_marker(&root, &mut path)
            && !found.iter().any(|f| f.key == key)
        {
            found.push(Context { path, key, present, root });
        }
    }
    found
}

pub(super) fn completions(
    db: &dyn salsa::Database,
    set: PolicySet,
    doc: SourceText,
    offset: usize,
) -> Option<Completions> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    let policy = &compiled.policy;
    let text = doc.text(db);
    let format = document_format(doc.path(db), text);
    let extra: &[char] = match format {
        Format::Json | Format::JsonLines => &['-', '.', '"'],
        Format::Yaml => &['-', '.'],
    };
    let mut replace = word_at(text, offset, extra);
    // A YAML list item's dash is not part of the word.
    while format == Format::Yaml && text[replace.start..replace.end].starts_with('-') && replace.start < offset {
        replace.start += 1;
    }
    let line_start = text[..replace.start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let before = text[line_start..replace.start].trim_end();
    let value_first = before.ends_with(':') || before.ends_with('[');
    let mut found = contexts(text, format, replace);
    found.sort_by_key(|c| c.key == value_first);
    for cx in found {
        let Ok(kind) = select_kind(policy, 0, &cx.root) else { continue };
        let place = walk(policy, kind, &cx.path);
        let items = if cx.key { keys(policy, &place, &cx.present, format) } else { values(policy, &place, format) };
        if !items.is_empty() {
            return Some(Completions { replace, items });
        }
    }
    Some(Completions { replace, items: Vec::new() })
}

fn key_text(key: &str, format: Format) -> String {
    match format {
        Format::Json | Format::JsonLines => format!("\"{key}\": "),
        Format::Yaml => format!("{}: ", scalar_text(&ValKind::Str(key.into()), format)),
    }
}

fn keys(policy: &Policy, place: &Place, present: &[String], format: Format) -> Vec<Completion> {
    match &place.ty {
        Ty::Record(r) => policy.records[*r as usize]
            .fields
            .iter()
            .filter(|f| !present.contains(&f.name))
            .map(|f| Completion {
                label: f.name.clone(),
                insert: key_text(&f.name, format),
                kind: CompletionKind::Field,
                detail: format!("{}{}", field_type(policy, f), if f.optional { "" } else { " (required)" }),
                docs: f.docs.join("\n"),
            })
            .collect(),
        Ty::Map(k, v) => match **k {
            Ty::Enum(e) => policy.enums[e as usize]
                .variants
                .iter()
                .filter(|x| !present.contains(x))
                .map(|x| Completion {
                    label: x.clone(),
                    insert: key_text(x, format),
                    kind: CompletionKind::Variant,
                    detail: ty_name(policy, v),
                    docs: String::new(),
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn values(policy: &Policy, place: &Place, format: Format) -> Vec<Completion> {
    match &place.ty {
        Ty::Enum(e) => {
            let def = &policy.enums[*e as usize];
            def.variants
                .iter()
                .map(|x| Completion {
                    label: x.clone(),
                    insert: scalar_text(&ValKind::Str(x.as_str().into()), format),
                    kind: CompletionKind::Variant,
                    detail: def.name.clone(),
                    docs: def.docs.join("\n"),
                })
                .collect()
        }
        Ty::Bool => ["true", "false"]
            .iter()
            .map(|b| Completion {
                label: b.to_string(),
                insert: b.to_string(),
                kind: CompletionKind::Value,
                detail: "bool".into(),
                docs: String::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}
