//! Which kind of the policy a document is, for an editor that judges only
//! the documents the policy has a kind for (a `package.json` has none to a
//! policy whose kinds all want a `kind` key; a Kubernetes manifest's
//! `kind: Deployment` names none of them).
//!
//! A document that parses is selected as `grail check` selects it
//! ([`crate::conform::select_kind`]). One that does not parse, being typed,
//! is selected by its top-level keys read leniently from its lines, so that
//! a half-written binding is judged (its syntax error shown) from the moment
//! it is opened, and a half-written manifest is not.

use grail_lang::ast::Span;

use super::{Marker, markdown_marker};
use crate::db::{PolicySet, SourceText};
use crate::document::{Entry, Node, NodeKind};

/// What kind a document is to the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocumentKind {
    /// A kind's selector (or a Markdown kind's marker) picks it: its name (`Binding`).
    Of(String),
    /// No kind's selector picks it: a mapping none of whose selectors match
    /// (a Kubernetes manifest's `kind: Deployment`), no mapping at all (a
    /// list, a scalar, an empty file), or a Markdown file without a marker.
    None,
    /// The policy does not compile: no kind can be known.
    Unknown,
}

/// The kind of a document, by the policy's selectors, as `grail check`
/// selects it; a Markdown file by its marker line ([`markdown_marker`]: a
/// line that is nearly a marker counts, so that the slip is said); a JSON
/// or YAML document that does not parse by the top-level keys its lines show.
pub fn document_kind(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> DocumentKind {
    let compiled = crate::db::compile_policy(db, set);
    if compiled.has_errors() {
        return DocumentKind::Unknown;
    }
    if crate::check::is_markdown(doc.path(db)) {
        return match markdown_marker(db, set, doc) {
            Marker::Marked { kind } | Marker::NearMiss { kind, .. } => DocumentKind::Of(kind),
            Marker::Unmarked => DocumentKind::None,
        };
    }
    let lenient;
    let root = match crate::db::load_document(db, doc) {
        Ok(root) => root,
        Err(_) => {
            let entries = top_level_keys(doc.text(db));
            if entries.is_empty() {
                return DocumentKind::None;
            }
            lenient = Node { span: Span::new(0, 0), kind: NodeKind::Map(entries) };
            &lenient
        }
    };
    match crate::conform::select_kind(&compiled.policy, 0, root) {
        Ok(kind) => compiled
            .policy
            .documents
            .get(kind as usize)
            .map_or(DocumentKind::None, |d| DocumentKind::Of(d.name.clone())),
        Err(_) => DocumentKind::None,
    }
}

/// The top-level keys of a JSON or YAML text that may not parse, each with
/// its value when that is a string on the key's own line (what a selector's
/// `key == "value"` test reads), else null. A text whose first character is
/// `{` is read as JSON, any other as YAML in block style.
fn top_level_keys(text: &str) -> Vec<Entry> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('{') { json_keys(text) } else { yaml_keys(text) }
}

fn entry(key: String, value: Option<String>) -> Entry {
    let span = Span::new(0, 0);
    let kind = value.map_or(NodeKind::Null, NodeKind::Str);
    Entry { key, key_span: span, value: Node { span, kind } }
}

/// `key: value` lines in column 0 (no indentation, no list item, no comment).
fn yaml_keys(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with([' ', '\t', '#', '-', '{', '[', '}', ']']) || line == "..." {
            continue;
        }
        let (key, rest) = match line.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let Some(end) = line[1..].find(q) else { continue };
                (line[1..1 + end].to_string(), &line[2 + end..])
            }
            _ => {
                let Some(colon) = line.find(": ").or_else(|| line.strip_suffix(':').map(str::len)) else { continue };
                (line[..colon].trim_end().to_string(), &line[colon..])
            }
        };
        let Some(value) = rest.trim_start().strip_prefix(':') else { continue };
        let value = value.split(" #").next().unwrap_or_default().trim();
        let value = match value.chars().next() {
            None => None,
            Some(q @ ('"' | '\'')) => value[1..].find(q).map(|end| value[1..1 + end].to_string()),
            Some('{' | '[' | '&' | '*' | '!' | '|' | '>') => None,
            Some(_) => Some(value.to_string()),
        };
        out.push(entry(key, value));
    }
    out
}

/// The keys of the outermost object, and their string values.
fn json_keys(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The last string read at depth 1 where a key may stand, and whether a `:` followed it.
    let mut key: Option<String> = None;
    let mut expect_key = false;
    let mut chars = text.char_indices().peekable();
    let read_string = |chars: &mut std::iter::Peekable<std::str::CharIndices>| {
        let mut s = String::new();
        while let Some((_, c)) = chars.next() {
            match c {
                '"' => return Some(s),
                '\\' => {
                    if let Some((_, e)) = chars.next() {
                        s.push(e);
                    }
                }
                '\n' => return None,
                c => s.push(c),
            }
        }
        None
    };
    while let Some((_, c)) = chars.next() {
        match c {
            '{' | '[' => {
                depth += 1;
                expect_key = depth == 1 && c == '{';
                if let Some(k) = key.take() {
                    out.push(entry(k, None));
                }
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expect_key = true,
            ':' if depth == 1 => {}
            '"' => {
                let Some(s) = read_string(&mut chars) else { continue };
                if depth != 1 {
                    continue;
                }
                if expect_key {
                    key = Some(s);
                    expect_key = false;
                } else if let Some(k) = key.take() {
                    out.push(entry(k, Some(s)));
                }
            }
            c if c.is_whitespace() => {}
            _ => {
                if depth == 1
                    && !expect_key
                    && let Some(k) = key.take()
                {
                    out.push(entry(k, None));
                }
            }
        }
    }
    if let Some(k) = key {
        out.push(entry(k, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<(String, Option<String>)> {
        top_level_keys(text)
            .into_iter()
            .map(|e| {
                let value = match e.value.kind {
                    NodeKind::Str(s) => Some(s),
                    _ => None,
                };
                (e.key, value)
            })
            .collect()
    }

    fn some(k: &str, v: &str) -> (String, Option<String>) {
        (k.into(), Some(v.into()))
    }

    fn none(k: &str) -> (String, Option<String>) {
        (k.into(), None)
    }

    #[test]
    fn yaml_keys_are_read_from_the_lines_in_column_zero() {
        let text = "# a binding being typed\nschema_version: \"1.0\"\nkind: pipeline # a comment\ntiers: {T1: hard\n  nested: x\n- item\n'quoted key': 'v'\nroles:\n";
        assert_eq!(
            keys(text),
            [
                some("schema_version", "1.0"),
                some("kind", "pipeline"),
                none("tiers"),
                some("quoted key", "v"),
                none("roles")
            ]
        );
    }

    #[test]
    fn json_keys_are_the_outermost_objects() {
        let text =
            "{\n  \"kind\": \"rollbacks\",\n  \"events\": [{\"kind\": \"inner\"}],\n  \"n\": 3,\n  \"broken\": [\n";
        assert_eq!(keys(text), [some("kind", "rollbacks"), none("events"), none("n"), none("broken")]);
    }
}
