//! Hover, navigation and completion in policy files.

use crate::db::{PolicySet, compile_policy, parse_policy};
use crate::hir::{Loc, Policy};
use crate::ide::index::{PolicyIndex, Symbol, policy_index, ty_name};
use crate::ide::{Completion, CompletionKind, Completions, Hover};
use crate::line_index::LineIndex;

pub(super) fn symbol_at(db: &dyn salsa::Database, set: PolicySet, file: u32, offset: usize) -> Option<Symbol> {
    policy_index(db, set).at(file, offset).map(|(s, _)| s.clone())
}

pub(super) fn hover(db: &dyn salsa::Database, set: PolicySet, file: u32, offset: usize) -> Option<Hover> {
    let index = policy_index(db, set);
    let Some((symbol, span)) = index.at(file, offset) else { return builtin_hover(db, set, file, offset) };
    let markdown = describe(db, set, index, symbol)?;
    Some(Hover { markdown, span })
}

/// A hover on the name of a built-in function where it is called.
fn builtin_hover(db: &dyn salsa::Database, set: PolicySet, file: u32, offset: usize) -> Option<Hover> {
    let text = set.files(db).get(file as usize)?.text(db);
    let span = word_at(text, offset, &[]);
    let name = text.get(span.start..span.end).filter(|n| !n.is_empty())?;
    let called = text[span.end..].trim_start().starts_with('(');
    let declared = policy_index(db, set).decls.iter().any(|d| d.symbol == Symbol::Function(name.to_string()));
    let f = crate::builtins::function(name).filter(|_| called && !declared)?;
    Some(Hover { markdown: builtin_markdown(f), span })
}

fn builtin_markdown(f: &crate::builtins::Function) -> String {
    format!("```grail\n{}\n```\n\nbuilt-in: {}", f.signatures.join("\n"), f.doc)
}

/// The call the cursor is in: the function, its signatures, and which argument the cursor is at.
pub(super) fn signature_help(
    db: &dyn salsa::Database,
    set: PolicySet,
    file: u32,
    offset: usize,
) -> Option<super::SignatureHelp> {
    let text = set.files(db).get(file as usize)?.text(db);
    let (name_end, argument) = open_call(text.get(..offset.min(text.len()))?)?;
    let span = word_at(text, name_end, &[]);
    let name = text.get(span.start..span.end).filter(|n| !n.is_empty())?;
    let index = policy_index(db, set);
    let declared = index.decls.iter().find(|d| d.symbol == Symbol::Function(name.to_string()));
    let (signatures, doc) = match (declared, crate::builtins::function(name)) {
        (Some(d), _) => {
            let head = source(db, set, d.item, 1);
            let head = head.split(") =").next().unwrap_or(&head).trim_start_matches("fn ").to_string() + ")";
            (vec![head], d.docs.join("\n"))
        }
        (None, Some(f)) => (f.signatures.iter().map(|s| s.to_string()).collect(), f.doc.to_string()),
        (None, None) => return None,
    };
    Some(super::SignatureHelp { signatures, doc, argument })
}

/// In `before` (the text up to the cursor), the end of the name of the
/// innermost call still open, and how many of its arguments come before the
/// cursor; none outside a call.
fn open_call(before: &str) -> Option<(usize, usize)> {
    let bytes = before.as_bytes();
    let (mut depth, mut commas, mut quoted) = (0usize, 0usize, false);
    let mut i = bytes.len();
    // Strings are read backwards too: a quote toggles, an escaped one does not.
    while i > 0 {
        i -= 1;
        let c = bytes[i];
        if c == b'\n' && !quoted && depth == 0 {
            // A call never spans an item's first column; stop at a line that starts an item.
            if before[i + 1..].starts_with(|ch: char| ch.is_ascii_alphabetic()) {
                return None;
            }
        }
        if c == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            quoted = !quoted;
            continue;
        }
        if quoted {
            continue;
        }
        match c {
            b')' | b']' | b'}' => depth += 1,
            b'[' | b'{' if depth == 0 => return None,
            b'[' | b'{' => depth -= 1,
            b'(' if depth == 0 => {
                let name_end = before[..i].trim_end().len();
                let named = before[..name_end].ends_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
                return named.then_some((name_end, commas));
            }
            b'(' => depth -= 1,
            b',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// The text of a declaration, without its doc comments, at most `max_lines` lines.
pub(super) fn source(db: &dyn salsa::Database, set: PolicySet, loc: Loc, max_lines: usize) -> String {
    let Some(file) = set.files(db).get(loc.file as usize) else { return String::new() };
    let text = file.text(db);
    let body = text.get(loc.span.start..loc.span.end.min(text.len())).unwrap_or_default();
    let lines: Vec<&str> = body.lines().skip_while(|l| l.trim_start().starts_with("///")).collect();
    let mut out: Vec<&str> = lines.iter().take(max_lines).copied().collect();
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    let mut s = out.join("\n");
    if lines.len() > max_lines {
        s.push_str("\n…");
    }
    s
}

/// `path:line` of a policy location.
pub(super) fn place(db: &dyn salsa::Database, set: PolicySet, loc: Loc) -> String {
    let Some(file) = set.files(db).get(loc.file as usize) else { return String::new() };
    let text = file.text(db);
    let (line, _) = LineIndex::new(text).line_col(text, loc.span.start);
    format!("{}:{line}", file.path(db))
}

fn code(s: &str) -> String {
    format!("```grail\n{s}\n```")
}

fn docs(lines: &[String]) -> Option<String> {
    if lines.is_empty() { None } else { Some(lines.join("\n")) }
}

/// The Markdown description of a symbol.
pub(super) fn describe(
    db: &dyn salsa::Database,
    set: PolicySet,
    index: &PolicyIndex,
    symbol: &Symbol,
) -> Option<String> {
    let compiled = compile_policy(db, set);
    let policy: &Policy = &compiled.policy;
    let decl = index.decl(symbol);
    let mut parts: Vec<String> = Vec::new();
    match symbol {
        Symbol::Enum(_) | Symbol::Matrix(_) | Symbol::Function(_) => {
            let decl = decl?;
            parts.push(code(&source(db, set, decl.item, 30)));
            parts.extend(docs(&decl.docs));
        }
        Symbol::Variant { enumeration, variant } => {
            let def = policy.enums.iter().find(|e| &e.name == enumeration)?;
            let position = def.variants.iter().position(|v| v == variant)?;
            parts.push(format!("variant `{variant}` of `{enumeration}` ({} of {})", position + 1, def.variants.len()));
            if let Some(d) = index.decl(&Symbol::Enum(enumeration.clone())) {
                parts.push(code(&source(db, set, d.item, 3)));
                parts.extend(docs(&d.docs));
            }
        }
        Symbol::Record(name) => {
            let decl = decl?;
            let header = source(db, set, decl.item, 1);
            parts.push(code(header.trim_end_matches('{').trim_end()));
            parts.extend(docs(&decl.docs));
            if let Some(r) = policy.records.iter().find(|r| &r.name == name) {
                let fields: Vec<String> =
                    r.fields.iter().map(|f| format!("`{}{}`", f.name, if f.optional { "?" } else { "" })).collect();
                if !fields.is_empty() {
                    parts.push(format!("fields: {}", fields.join(", ")));
                }
            }
        }
        Symbol::Field { record, field } => {
            let decl = decl?;
            parts.push(format!("field `{field}` of `{record}`"));
            parts.push(code(&source(db, set, decl.item, 10)));
            parts.extend(docs(&decl.docs));
            let rules = index.rules_reading(symbol);
            if !rules.is_empty() {
                parts.push(format!("read by {}", listed(&rules)));
            }
        }
        Symbol::Column { matrix, column } => {
            let def = policy.matrices.iter().find(|m| &m.name == matrix)?;
            let i = def.columns.iter().position(|c| &c.name == column)?;
            parts.push(code(&format!("{column}: {}", ty_name(policy, &def.columns[i].ty))));
            parts.push(format!("column of matrix `{matrix}`"));
            let cells: Vec<String> = def
                .cells
                .iter()
                .enumerate()
                .map(|(v, row)| {
                    let value = row.get(i).map(|c| c.display(policy)).unwrap_or_default();
                    format!("{} `{value}`", policy.variant_name(def.key_enum, v as u32))
                })
                .collect();
            parts.push(cells.join(" · "));
            let rules = index.rules_reading(symbol);
            if !rules.is_empty() {
                parts.push(format!("read by {}", listed(&rules)));
            }
        }
        Symbol::Rule(id) => {
            let decl = decl?;
            parts.extend(docs(&decl.docs));
            parts.push(code(&source(db, set, decl.item, 30)));
            parts.push(format!("rule `{id}`, {}", place(db, set, decl.loc)));
        }
        Symbol::Local(loc) => {
            let file = set.files(db).get(loc.file as usize)?;
            let name = file.text(db).get(loc.span.start..loc.span.end)?.to_string();
            let ty = decl.and_then(|d| d.ty.as_ref()).map(|t| ty_name(policy, t));
            parts.push(code(&match ty {
                Some(t) => format!("{name}: {t}"),
                None => name,
            }));
            parts.push("variable".into());
        }
    }
    Some(parts.join("\n\n"))
}

/// `` `a`, `b` ``
pub(super) fn listed(items: &[String]) -> String {
    items.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
}

/// The identifier characters around `offset`: the word a completion replaces.
pub(super) fn word_at(text: &str, offset: usize, extra: &[char]) -> grail_lang::ast::Span {
    let ok = |c: char| c.is_alphanumeric() || c == '_' || extra.contains(&c);
    let offset = offset.min(text.len());
    let mut start = offset;
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    let at = start;
    for (i, c) in text[..at].char_indices().rev() {
        if !ok(c) {
            break;
        }
        start = i;
    }
    let mut end = at;
    for (i, c) in text[at..].char_indices() {
        if !ok(c) {
            break;
        }
        end = at + i + c.len_utf8();
    }
    grail_lang::ast::Span::new(start, end)
}

pub(super) fn completions(db: &dyn salsa::Database, set: PolicySet, file: u32, offset: usize) -> Option<Completions> {
    let source = *set.files(db).get(file as usize)?;
    let text = source.text(db);
    let replace = word_at(text, offset, &[]);
    let index = policy_index(db, set);
    let compiled = compile_policy(db, set);
    let policy = &compiled.policy;
    let mut items: Vec<Completion> = Vec::new();
    let mut push = |label: &str, kind: CompletionKind, detail: String, docs: &[String]| {
        if !items.iter().any(|c: &Completion| c.label == label) {
            items.push(Completion {
                label: label.to_string(),
                insert: label.to_string(),
                kind,
                detail,
                docs: docs.join("\n"),
            });
        }
    };
    let after_dot = text[..replace.start].ends_with('.');
    if after_dot {
        // The base is being typed, so it may not parse: offer every field and column.
        for r in &policy.records {
            for f in &r.fields {
                push(&f.name, CompletionKind::Field, format!("{}: {}", r.name, ty_name(policy, &f.ty)), &f.docs);
            }
        }
        for m in &policy.matrices {
            for c in &m.columns {
                push(&c.name, CompletionKind::Column, format!("{} column: {}", m.name, ty_name(policy, &c.ty)), &[]);
            }
        }
        return Some(Completions { replace, items });
    }
    // Variables declared earlier in the item around the cursor.
    let parsed = parse_policy(db, source);
    if let Some(item) = parsed.file.items.iter().find(|i| i.span().start <= offset && offset <= i.span().end) {
        for d in &index.decls {
            if let Symbol::Local(loc) = &d.symbol
                && loc.file == file
                && item.span().start <= loc.span.start
                && loc.span.end <= offset
                && let Some(name) = text.get(loc.span.start..loc.span.end)
            {
                let ty = d.ty.as_ref().map(|t| ty_name(policy, t)).unwrap_or_default();
                push(name, CompletionKind::Variable, ty, &[]);
            }
        }
    }
    for d in &policy.documents {
        push(&d.binder, CompletionKind::Record, format!("document {}", d.name), &d.docs);
    }
    for m in &policy.matrices {
        push(
            &m.name,
            CompletionKind::Matrix,
            format!("matrix by {}", policy.enums.get(m.key_enum as usize).map_or("", |e| e.name.as_str())),
            &m.docs,
        );
    }
    for e in &policy.enums {
        push(&e.name, CompletionKind::Enum, "enum".into(), &e.docs);
    }
    for r in &policy.records {
        if !policy.documents.iter().any(|d| d.name == r.name) {
            push(&r.name, CompletionKind::Record, "record".into(), &r.docs);
        }
    }
    for d in &index.decls {
        if let Symbol::Function(name) = &d.symbol {
            push(name, CompletionKind::Function, "fn".into(), &d.docs);
        }
    }
    for f in crate::builtins::FUNCTIONS {
        push(f.name, CompletionKind::Function, f.signatures.join(", "), &[f.doc.to_string()]);
    }
    Some(Completions { replace, items })
}
