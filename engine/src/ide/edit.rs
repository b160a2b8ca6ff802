//! Text edits of JSON and YAML documents that keep their layout: a value
//! replaced, an item appended to a list, an entry added to or removed from a
//! mapping, in flow style (`[a, b]`, `{k: v}`, all of JSON) or YAML block style.

use grail_lang::ast::Span;

use crate::document::{Format, Node, NodeKind};
use crate::ide::TextEdit;
use crate::value::ValKind;

/// A scalar as the document's syntax writes it: JSON strings quoted; YAML
/// strings plain where YAML would read them back as the same string.
pub(super) fn scalar_text(v: &ValKind, format: Format) -> String {
    match v {
        ValKind::Bool(b) => b.to_string(),
        ValKind::Int(i) => i.to_string(),
        ValKind::BigInt(i) => i.to_string(),
        ValKind::Str(s) | ValKind::Id(s) => {
            let quoted = serde_json::to_string(s.as_ref()).unwrap_or_else(|_| format!("\"{s}\""));
            if format == Format::Json || !plain_yaml(s) { quoted } else { s.to_string() }
        }
        _ => String::new(),
    }
}

/// Whether YAML reads `s`, written plain, as the string `s`.
fn plain_yaml(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    let reserved = ["true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf"];
    first_ok && rest_ok && !reserved.contains(&s.to_ascii_lowercase().as_str())
}

/// Whether a collection node is written in flow style (`[..]`, `{..}`).
fn is_flow(text: &str, node: &Node) -> bool {
    matches!(text.as_bytes().get(node.span.start), Some(b'[' | b'{'))
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

fn line_end(text: &str, at: usize) -> usize {
    text[at.min(text.len())..].find(['\n', '\r']).map_or(text.len(), |i| at + i)
}

/// The end of a node's text, without trailing blanks and line breaks.
fn content_end(text: &str, span: Span) -> usize {
    let end = span.end.min(text.len());
    span.start.max(text[..end].trim_end().len())
}

/// The indentation of a block item starting at `at`, with `- ` turned into blanks.
fn indent_at(text: &str, at: usize) -> String {
    text[line_start(text, at)..at].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect()
}

/// The indentation of the dash of a block list item whose value starts at `at`.
fn dash_indent(text: &str, at: usize) -> String {
    let start = line_start(text, at);
    let prefix = &text[start..at];
    let dash = prefix.rfind('-').unwrap_or(0);
    prefix[..dash].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect()
}

/// Replaces a value.
pub(super) fn replace(node: &Node, new: String) -> TextEdit {
    TextEdit { span: node.span, text: new }
}

/// Appends an item (already written as text) to a list.
pub(super) fn append_to_list(text: &str, list: &Node, item: &str) -> Option<TextEdit> {
    let NodeKind::List(items) = &list.kind else { return None };
    if is_flow(text, list) {
        return Some(match items.last() {
            Some(last) => {
                let at = content_end(text, last.span);
                TextEdit { span: Span::new(at, at), text: format!(", {item}") }
            }
            None => {
                let close = list.span.start + text[list.span.start..list.span.end.min(text.len())].rfind(']')?;
                TextEdit { span: Span::new(close, close), text: item.to_string() }
            }
        });
    }
    let (first, last) = (items.first()?, items.last()?);
    let at = line_end(text, content_end(text, last.span));
    Some(TextEdit { span: Span::new(at, at), text: format!("\n{}- {item}", dash_indent(text, first.span.start)) })
}

/// Adds `key: value` (both already written as text) to a mapping.
pub(super) fn insert_entry(text: &str, map: &Node, key: &str, value: &str, format: Format) -> Option<TextEdit> {
    let NodeKind::Map(entries) = &map.kind else { return None };
    let key = match format {
        Format::Json | Format::JsonLines => serde_json::to_string(key).ok()?,
        Format::Yaml => scalar_text(&ValKind::Str(key.into()), format),
    };
    if is_flow(text, map) {
        return Some(match entries.last() {
            Some(last) => {
                let at = content_end(text, last.value.span);
                let first_line = line_start(text, map.span.start);
                if line_start(text, last.key_span.start) != first_line {
                    // One entry per line: a new line at the last entry's indentation.
                    let indent = indent_at(text, last.key_span.start);
                    TextEdit { span: Span::new(at, at), text: format!(",\n{indent}{key}: {value}") }
                } else {
                    TextEdit { span: Span::new(at, at), text: format!(", {key}: {value}") }
                }
            }
            None => {
                let open = map.span.start + 1;
                TextEdit { span: Span::new(open, open), text: format!("{key}: {value}") }
            }
        });
    }
    let (first, last) = (entries.first()?, entries.last()?);
    let at = line_end(text, content_end(text, last.value.span).max(last.key_span.end));
    Some(TextEdit {
        span: Span::new(at, at),
        text: format!("\n{}{key}: {value}", indent_at(text, first.key_span.start)),
    })
}

/// Removes entry `index` of a mapping, with its line when it has one of its own.
pub(super) fn remove_entry(text: &str, map: &Node, index: usize) -> Option<TextEdit> {
    let NodeKind::Map(entries) = &map.kind else { return None };
    let entry = entries.get(index)?;
    let value_end = content_end(text, entry.value.span).max(entry.key_span.end);
    if !is_flow(text, map) {
        let start = line_start(text, entry.key_span.start);
        if text[start..entry.key_span.start].trim().is_empty() {
            // The key's lines, with the line break that ends them.
            let end = line_end(text, value_end);
            let end = if text[end..].starts_with("\r\n") { end + 2 } else { (end + 1).min(text.len()) };
            return Some(TextEdit { span: Span::new(start, end), text: String::new() });
        }
        // The first key of a list item (`- key: value`): up to the next key.
        return Some(match entries.get(index + 1) {
            Some(next) => TextEdit { span: Span::new(entry.key_span.start, next.key_span.start), text: String::new() },
            None => TextEdit { span: Span::new(entry.key_span.start, value_end), text: "{}".into() },
        });
    }
    Some(match (index.checked_sub(1).and_then(|i| entries.get(i)), entries.get(index + 1)) {
        (_, Some(next)) => TextEdit { span: Span::new(entry.key_span.start, next.key_span.start), text: String::new() },
        (Some(prev), None) => {
            TextEdit { span: Span::new(content_end(text, prev.value.span), value_end), text: String::new() }
        }
        (None, None) => TextEdit { span: Span::new(entry.key_span.start, value_end), text: String::new() },
    })
}
