//! `grail explain`: every finding with its derivation, and the effective
//! state of every cell (a column of the matrix for one key): its value, where
//! it came from, the bound that applies, lower-layer values refused, and
//! whether a failing gate demoted it to the shipped value.

use crate::check::{self, Attachment, Input};
use crate::diagnostic::{Finding, Outcome, Provenance, Read};
use crate::eval::provenance;
use crate::hir::*;
use crate::layers::{Bound, DocLayer};
use crate::question::Decision;
use crate::value::{Origin, Val, ValKind};

/// What `explain` shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Explanation {
    /// Every finding, each with its derivation.
    pub findings: Vec<Finding>,
    /// The effective state, cell by cell.
    pub cells: Vec<Cell>,
    /// The layer of each layered document that was read, and how it was bound.
    pub layers: Vec<DocLayer>,
    /// The answers of the questions about the documents checked, each with
    /// the values its `allow` read.
    pub answers: Vec<(Decision, Vec<Read>)>,
    /// Whether some rule evaluated `now()` (see [`check::Run::now_read`]).
    pub now_read: bool,
}

/// One cell of the effective state, e.g. `merge_policy` of `C3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The document kind whose (merged) document holds the cell.
    pub kind: DocKindId,
    /// The key, e.g. `C3`.
    pub key: String,
    /// The column, e.g. `merge_policy` or `verification_topology.min_checkers`.
    pub column: String,
    /// The effective value.
    pub value: String,
    pub from: Provenance,
    /// A tighten-only bound on the cell: `floor` or `ceiling`, its value and where it is declared.
    pub bounds: Vec<(String, String, Loc)>,
    /// Values a lower layer tried and was refused, with why.
    pub refused: Vec<(String, Option<(u32, grail_lang::ast::Span)>)>,
    /// Set when a rule failed for this cell: the value it falls back to, and the failing rules' messages.
    pub demoted: Option<Demotion>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demotion {
    /// The shipped value the cell falls back to.
    pub to: String,
    pub from: Provenance,
    /// The failing rules and their messages.
    pub because: Vec<(String, String)>,
}

/// Checks a deployment with derivations, and derives the effective state.
pub fn explain(policy: &Policy, inputs: &[Input<'_>], attachments: &[Attachment<'_>]) -> Explanation {
    explain_with(policy, inputs, attachments, &[], None, &[])
}

/// [`explain`], with the caller's layer bindings, time of the check (see
/// [`check::check_with`]) and named parameters (see [`check::run_with_params`]).
pub fn explain_with(
    policy: &Policy,
    inputs: &[Input<'_>],
    attachments: &[Attachment<'_>],
    bindings: &[Bound],
    now: Option<i128>,
    params: &[check::Param],
) -> Explanation {
    let run = check::run_with_params(policy, inputs, attachments, bindings, true, now, params, false);
    let mut cells = Vec::new();
    for (kind, root) in run.single.iter().enumerate() {
        let Some(root) = root else { continue };
        let record = policy.documents[kind].record;
        cells.extend(
            cells_of(policy, record, root, &run.findings).into_iter().map(|c| Cell { kind: kind as DocKindId, ..c }),
        );
    }
    let answers = crate::question::decide_traced(policy, &run);
    Explanation { findings: run.findings, cells, layers: run.layers, answers, now_read: run.now_read }
}

/// The cells of a document: every top-level map keyed by an enumeration,
/// and the scalar fields of the records it holds.
fn cells_of(policy: &Policy, record: RecordId, root: &Val, findings: &[Finding]) -> Vec<Cell> {
    let def = &policy.records[record as usize];
    let ValKind::Record(_, fields) = &root.kind else { return Vec::new() };
    let mut out = Vec::new();
    for (fi, field) in def.fields.iter().enumerate() {
        let (Ty::Map(k, v), Some(map)) = (&field.ty, fields.get(fi)) else { continue };
        let Ty::Enum(_) = **k else { continue };
        let ValKind::Map(entries) = &map.kind else { continue };
        for (key, value) in entries.iter() {
            let key = key.display(policy);
            match (&**v, &value.kind) {
                (Ty::Record(r), ValKind::Record(_, inner)) => {
                    let rdef = &policy.records[*r as usize];
                    for (i, f) in rdef.fields.iter().enumerate() {
                        if matches!(f.ty, Ty::Bool | Ty::Int | Ty::Str | Ty::Id | Ty::Enum(_))
                            && let Some(val) = inner.get(i)
                        {
                            let column = format!("{}.{}", field.name, f.name);
                            let subject = format!("{}.{key}.{}", field.name, f.name);
                            out.push(cell(policy, &key, column, subject, val, f, findings));
                        }
                    }
                }
                (Ty::Record(_), _) => {}
                _ => {
                    let subject = format!("{}.{key}", field.name);
                    out.push(cell(policy, &key, field.name.clone(), subject, value, field, findings));
                }
            }
        }
    }
    out
}

fn cell(
    policy: &Policy,
    key: &str,
    column: String,
    subject: String,
    val: &Val,
    field: &FieldDef,
    findings: &[Finding],
) -> Cell {
    let bounds = field
        .bounds
        .iter()
        .filter_map(|b| {
            let m = &policy.matrices[b.matrix as usize];
            let v = policy.enums.get(m.key_enum as usize)?.variants.iter().position(|x| x == key)?;
            let cell = m.cells.get(v)?.get(b.column)?;
            let kind = match b.kind {
                grail_lang::ast::BoundKind::Floor => "floor",
                grail_lang::ast::BoundKind::Ceiling => "ceiling",
            };
            let loc = cell.origin.loc().unwrap_or(b.loc);
            Some((kind.to_string(), cell.display(policy), loc))
        })
        .collect();
    // The layer rules' findings are refusals of a lower layer's value; the value above stands.
    let layer_rule = |rule: &str| policy.layers.iter().any(|l| l.checks.iter().flatten().any(|c| c.rule == rule));
    // A value the document set that could not be read (a refused `null`, a wrong type) is not in
    // effect: the rules read it as unknown, and so does the effective state; its findings are refusals.
    let invalid = val.is_absent();
    let refused = findings
        .iter()
        .filter(|f| f.subject == subject && f.outcome == Outcome::Fail && (layer_rule(&f.rule) || invalid))
        .map(|f| (f.message.clone(), f.location))
        .collect();
    // A value the documents set that a rule fails for does not take effect: the shipped value stands.
    // A finding is about the cell when its subject is, or when it is at the cell's key path.
    let about = |f: &Finding| f.subject == subject || f.place.paths.as_ref().is_some_and(|p| p.path == subject);
    let because: Vec<(String, String)> = findings
        .iter()
        .filter(|f| about(f) && matches!(f.outcome, Outcome::Fail | Outcome::Unknown) && !layer_rule(&f.rule))
        .map(|f| (f.rule.clone(), f.message.clone()))
        .collect();
    let shipped = shipped_value(policy, field, key);
    let demoted = match (&val.origin, shipped) {
        (Origin::Document { .. }, Some(to)) if !invalid && !because.is_empty() && to.same(val) != Some(true) => {
            Some(Demotion { to: to.display(policy), from: provenance(&to.origin), because })
        }
        _ => None,
    };
    Cell {
        // Set by `explain_with`, which knows the document kind.
        kind: 0,
        key: key.into(),
        column,
        value: val.display(policy),
        from: provenance(&val.origin),
        bounds,
        refused,
        demoted,
    }
}

/// The value the policy gives a field for a key when no document sets it;
/// for a field without a default whose values are a `tightest_first`
/// enumeration, the tightest (what stands when the value set is refused:
/// fail closed).
fn shipped_value(policy: &Policy, field: &FieldDef, key: &str) -> Option<Val> {
    let Some(default) = field.default.as_ref() else {
        let ty = match &field.ty {
            Ty::Map(_, v) => &**v,
            t => t,
        };
        return match ty {
            Ty::Enum(e) if policy.enums.get(*e as usize)?.order == grail_lang::ast::EnumOrder::TightestFirst => {
                Some(Val::computed(ValKind::Enum(*e, 0)))
            }
            _ => None,
        };
    };
    match default {
        DefaultDef::Value(v) => Some(v.clone()),
        DefaultDef::Empty(_) => None,
        DefaultDef::Column { matrix, column, .. } => {
            let m = &policy.matrices[*matrix as usize];
            let v = policy.enums.get(m.key_enum as usize)?.variants.iter().position(|x| x == key)?;
            m.cells.get(v)?.get(*column).cloned()
        }
    }
}

/// Whether a finding's subject is about a key: one of its path segments is the key.
pub fn subject_mentions(subject: &str, key: &str) -> bool {
    subject.split(['.', '[', ']', ',', ' ']).any(|s| s == key)
}
