//! Tables: values read from a deployment's documents, a row per tuple of a
//! table's `for` clauses and a cell per column, as the policy declares them.
//! A table shows values; it judges nothing and adds nothing up.

use crate::check::Run;
use crate::diagnostic::Provenance;
use crate::eval::{Evaluator, provenance};
use crate::hir::{ClauseDef, Policy, TableBody};
use crate::value::{Origin, Truth, Val, ValKind};

/// A table of a deployment: its declaration's id and documentation, its
/// column names (the row's first) and its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub id: String,
    pub docs: Vec<String>,
    /// The name of the row column, then the name of every column.
    pub columns: Vec<String>,
    /// The source of the `detail` expression, if the table has one.
    pub detail: Option<String>,
    pub rows: Vec<Row>,
}

/// One row: the value that names it, a cell per column, and the values its
/// `detail` lists (empty without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: Cell,
    pub cells: Vec<Cell>,
    pub detail: Vec<Cell>,
    /// The row as a verdict line, for a table with `line`.
    pub line: Option<String>,
}

/// A value as a table shows it, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// How the value reads; `None` when it is absent.
    pub text: Option<String>,
    pub from: Provenance,
}

/// Every table whose documents the deployment has, in declaration order;
/// the rows in the order of the documents and of their entries.
pub fn tables(policy: &Policy, run: &Run) -> Vec<Table> {
    let mut out = Vec::new();
    for t in &policy.tables {
        if t.reads.iter().any(|k| run.all.get(*k as usize).is_none_or(Vec::is_empty)) {
            continue;
        }
        let mut ev = Evaluator {
            policy,
            single: &run.single,
            all: &run.all,
            layers: &run.layers,
            prior: &run.findings,
            env: vec![Val::unknown(); t.slots as usize],
            reads: None,
            fuel: crate::eval::MAX_STEPS_PER_RULE,
            exhausted: false,
            now: run.now,
            now_read: false,
            given: &run.given,
            params: &run.params,
            calls: None,
        };
        let body = &*t.body;
        let mut rows = Vec::new();
        walk(body, 0, &mut ev, &mut rows);
        let mut columns = vec![body.row.name.clone()];
        columns.extend(body.columns.iter().map(|c| c.name.clone()));
        let detail = body.detail.as_ref().map(|d| d.text.to_string());
        out.push(Table { id: t.id.clone(), docs: t.docs.clone(), columns, detail, rows });
    }
    out
}

/// The verdict lines of `tables`: the `line` of every row of every table
/// that has one, tables in declaration order, rows in their order.
pub fn verdicts(tables: &[Table]) -> Vec<String> {
    tables.iter().flat_map(|t| t.rows.iter().filter_map(|r| r.line.clone())).collect()
}

fn walk(t: &TableBody, i: usize, ev: &mut Evaluator<'_>, rows: &mut Vec<Row>) {
    if ev.exhausted {
        return;
    }
    match t.clauses.get(i) {
        None => {
            let key = cell(ev.policy, &ev.eval(&t.row.value));
            let cells = t.columns.iter().map(|c| cell(ev.policy, &ev.eval(&c.value))).collect();
            let detail = match &t.detail {
                Some(d) => match ev.eval(d) {
                    Val { kind: ValKind::List(items), .. } => items.iter().map(|v| cell(ev.policy, v)).collect(),
                    other => vec![cell(ev.policy, &other)],
                },
                None => Vec::new(),
            };
            let line = t.line.as_ref().map(|l| ev.render(l));
            rows.push(Row { key, cells, detail, line });
        }
        Some(ClauseDef::Let { slot, value, .. }) => {
            let v = ev.eval(value);
            ev.env[*slot as usize] = v;
            walk(t, i + 1, ev, rows);
        }
        Some(ClauseDef::For { pattern, domain, filter, .. }) => {
            let domain = ev.eval(domain);
            // An unknown or absent domain has no rows.
            let Some(elements) = ev.elements_of(&domain, pattern) else { return };
            for values in elements {
                ev.bind_pattern(pattern, values);
                if filter.as_ref().is_some_and(|f| ev.eval(f).as_truth() != Truth::True) {
                    continue;
                }
                walk(t, i + 1, ev, rows);
            }
        }
        // INVARIANT: a table has only `for` and `let` clauses (the grammar's).
        Some(_) => walk(t, i + 1, ev, rows),
    }
}

/// A value as a cell: scalars as messages show them; a record as its fields
/// as `name: value` in declaration order, an absent field with what is missing.
fn cell(policy: &Policy, v: &Val) -> Cell {
    let text = match &v.kind {
        ValKind::Absent(_) => None,
        ValKind::Record(r, fields) => {
            let names = policy.records.get(*r as usize).map(|d| d.fields.as_slice()).unwrap_or_default();
            let parts: Vec<String> = names
                .iter()
                .zip(fields.iter())
                .map(|(n, f)| match (&f.kind, &f.origin) {
                    (ValKind::Absent(_), Origin::Missing(m)) => format!("{}: (absent: {})", n.name, m.what),
                    _ => format!("{}: {}", n.name, f.display(policy)),
                })
                .collect();
            Some(parts.join(", "))
        }
        _ => Some(v.display(policy)),
    };
    Cell { text, from: provenance(&v.origin) }
}
