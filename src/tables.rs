//! The policy's tables (`table` items) as `grail check --format table` and
//! `grail explain` show them, and the usage error of a deployment that holds
//! two documents of a kind allowed once. What a table shows is the policy's:
//! this module lays cells out and names where each came from, nothing more.

use std::fmt::Write as _;

use grail_engine::db::crowded_deployment;
use grail_engine::diagnostic::Provenance;
use grail_engine::table::{Cell, Table};
use grail_engine::{Database, Deployment, LineIndex, PolicySet, SourceText};

use crate::{Fatal, render};

/// How an absent cell reads: missing, never a grade.
const ABSENT: &str = "(absent)";

/// Refuses a deployment holding two documents of a kind declared `at most
/// one per deployment` (exit 2), each pair printed with its lines.
pub fn refuse_crowded(db: &Database, set: PolicySet, deployment: Deployment) -> Result<(), Fatal> {
    let crowded = crowded_deployment(db, set, deployment);
    let Some(first) = crowded.first() else { return Ok(()) };
    let docs = deployment.documents(db);
    for c in crowded {
        eprint!("{}", render::crowded(db, set, docs, c));
    }
    let name = |i: u32| docs.get(i as usize).map(|d| d.path(db).clone()).unwrap_or_default();
    Err(Fatal(format!(
        "one check holds at most one `{}` document, and `{}` and `{}` are two",
        first.kind,
        name(first.first.0),
        name(first.second.0)
    )))
}

/// `path:line:column` of a cell read from a document; empty otherwise.
fn at(db: &Database, docs: &[SourceText], p: &Provenance) -> String {
    match p {
        Provenance::Document(i, span) => match docs.get(*i as usize) {
            Some(d) => {
                let text = d.text(db);
                let (line, column) = LineIndex::new(text).line_col(text, span.start);
                format!("{}:{line}:{column}", d.path(db))
            }
            None => String::new(),
        },
        _ => String::new(),
    }
}

/// The first sentence of a table's documentation, after `: `.
fn summary(docs: &[String]) -> String {
    let joined = docs.join(" ");
    let first = joined.split_inclusive(". ").next().unwrap_or_default().trim();
    if first.is_empty() { String::new() } else { format!(": {first}") }
}

fn text(c: &Cell) -> &str {
    c.text.as_deref().unwrap_or(ABSENT)
}

/// The tables as text: per table its id and first line of documentation,
/// then its columns aligned, each row ending with where its key was read.
pub fn human(db: &Database, docs: &[SourceText], tables: &[Table]) -> String {
    let mut out = String::new();
    if tables.is_empty() {
        out.push_str("no table of the policy reads the documents checked\n");
    }
    for t in tables {
        let _ = writeln!(out, "table {}{}", t.id, summary(&t.docs));
        let mut lines: Vec<Vec<String>> = vec![t.columns.iter().cloned().chain(["at".to_string()]).collect()];
        for r in &t.rows {
            let mut line = vec![text(&r.key).to_string()];
            line.extend(r.cells.iter().map(|c| text(c).to_string()));
            line.push(at(db, docs, &r.key.from));
            lines.push(line);
        }
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|i| lines.iter().map(|l| l.get(i).map_or(0, |c| c.chars().count())).max().unwrap_or(0))
            .collect();
        for l in &lines {
            let mut s = String::new();
            for (i, c) in l.iter().enumerate() {
                let _ = write!(s, "  {c:<w$}", w = widths[i]);
            }
            let _ = writeln!(out, "{}", s.trim_end());
        }
        if t.rows.is_empty() {
            let _ = writeln!(out, "  (no rows)");
        }
        // The verdict line of each row, for a table with `line`.
        for line in t.rows.iter().filter_map(|r| r.line.as_deref()) {
            let _ = writeln!(out, "  - {line}");
        }
        out.push('\n');
    }
    out
}

/// The tables as `grail explain` shows them: per row, each cell with where
/// it was read, then the values the table's `detail` lists.
pub fn explained(db: &Database, docs: &[SourceText], tables: &[Table]) -> String {
    let mut out = String::new();
    for t in tables {
        let _ = writeln!(out, "\ntable {}{}", t.id, summary(&t.docs));
        for r in &t.rows {
            let _ = writeln!(out, "  {} {}  ({})", t.columns[0], text(&r.key), from(db, docs, &r.key.from));
            for (name, c) in t.columns[1..].iter().zip(&r.cells) {
                let _ = writeln!(out, "    {name}: {}  ({})", text(c), from(db, docs, &c.from));
            }
            if let Some(detail) = &t.detail {
                let none = if r.detail.is_empty() { " none" } else { "" };
                let _ = writeln!(out, "    {detail}:{none}");
            }
            for c in &r.detail {
                let _ = writeln!(out, "      - {}  ({})", text(c), from(db, docs, &c.from));
            }
            if let Some(line) = &r.line {
                let _ = writeln!(out, "    verdict: {line}");
            }
        }
    }
    out
}

/// Where a cell came from, for explanations.
fn from(db: &Database, docs: &[SourceText], p: &Provenance) -> String {
    match p {
        Provenance::Document(..) => at(db, docs, p),
        Provenance::Policy(_) => "the policy".into(),
        Provenance::Computed => "computed".into(),
        Provenance::Missing(what) => format!("absent: {what}"),
    }
}

/// The tables as JSON, for `grail explain --format json`.
pub fn json(db: &Database, docs: &[SourceText], tables: &[Table]) -> serde_json::Value {
    let cell = |c: &Cell| serde_json::json!({"value": c.text, "from": from(db, docs, &c.from)});
    serde_json::Value::Array(
        tables
            .iter()
            .map(|t| {
                let rows: Vec<serde_json::Value> = t
                    .rows
                    .iter()
                    .map(|r| {
                        let mut cells = serde_json::Map::new();
                        cells.insert(t.columns[0].clone(), cell(&r.key));
                        for (name, c) in t.columns[1..].iter().zip(&r.cells) {
                            cells.insert(name.clone(), cell(c));
                        }
                        let mut row = serde_json::json!({"cells": cells, "detail": r.detail.iter().map(cell).collect::<Vec<_>>()});
                        if let Some(line) = &r.line {
                            row["line"] = serde_json::Value::String(line.clone());
                        }
                        row
                    })
                    .collect();
                serde_json::json!({"table": t.id, "columns": t.columns, "rows": rows})
            })
            .collect(),
    )
}
