//! Layers of trust: documents of one kind, each bound to its layer by the
//! caller (never by its content), merged into one effective document. The most trusted layer sets what it likes; a lower
//! layer sets only the fields every layer may set, and otherwise may only
//! tighten: a value with an order (a `tightest_first` enumeration, a bounded
//! int or bool) at least as tight as the effective value above it. Everything
//! else it tries is refused with a finding, and the value above stands.

use std::sync::Arc;

use grail_lang::ast::Growth;

use crate::conform::{direction, join, tight_enough};
use crate::diagnostic::{Finding, Outcome};
use crate::document::{Node, NodeKind};
use crate::hir::*;
use crate::value::{Origin, Val, ValKind};

pub struct Layering<'a> {
    pub policy: &'a Policy,
    pub layers: &'a LayersDef,
    /// The name (path) of an input.
    pub names: &'a dyn Fn(usize) -> String,
}

/// How the caller bound a document to its layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoundBy {
    /// `--layer NAME=FILE` on the command line.
    Flag,
    /// The workspace file (`grail.toml`).
    Workspace,
    /// A lone document of a `standalone` kind, bound by nothing: the caller
    /// vouches for it by naming it alone (the most trusted layer).
    Standalone,
    /// Bound by nothing, among several documents of its kind: the least trusted layer.
    Unbound,
}

impl BoundBy {
    /// How a report says it: "bound by `--layer`", "unbound, so the lowest layer".
    pub fn describe(self) -> &'static str {
        match self {
            BoundBy::Flag => "bound by `--layer`",
            BoundBy::Workspace => "bound by the workspace file",
            BoundBy::Standalone => "standalone: named alone, the caller vouches for it",
            BoundBy::Unbound => "unbound, so the lowest layer",
        }
    }

    /// The same, as short as a location's note allows: "layer security, by `--layer`".
    pub fn short(self) -> &'static str {
        match self {
            BoundBy::Flag => "by `--layer`",
            BoundBy::Workspace => "by the workspace file",
            BoundBy::Standalone => "standalone",
            BoundBy::Unbound => "unbound",
        }
    }

    /// A stable word for machine-readable output.
    pub fn as_str(self) -> &'static str {
        match self {
            BoundBy::Flag => "flag",
            BoundBy::Workspace => "workspace",
            BoundBy::Standalone => "standalone",
            BoundBy::Unbound => "unbound",
        }
    }
}

/// A binding the caller gives: input `input` is of layer `layer` of its kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    pub input: usize,
    pub layer: String,
    pub by: BoundBy,
}

/// The layer a document of a layered kind was checked as.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DocLayer {
    pub doc: u32,
    /// The document kind's name.
    pub kind: String,
    pub layer: String,
    pub by: BoundBy,
}

/// One document of a layered kind before its layer is known: its input,
/// and the raw tree (for its claim).
pub struct Candidate<'n> {
    pub input: usize,
    pub node: &'n Node,
}

/// Which documents of a layered kind are read, and as which layer: the
/// caller's bindings decide, never the documents. Returns, per candidate, its
/// layer and how it was bound (`None`: not read, an `order` finding says
/// why), and the `order` and `claim` findings.
pub fn assign(
    l: &Layering<'_>,
    candidates: &[Candidate<'_>],
    bindings: &[Bound],
) -> (Vec<Option<(usize, BoundBy)>>, Vec<Finding>) {
    let mut findings = Vec::new();
    let lowest = l.layers.layers.len().saturating_sub(1);
    let order = |findings: &mut Vec<Finding>, input: usize, node: &Node, message: String| {
        // At the document's first key: the whole document would hide the message.
        let at = match &node.kind {
            NodeKind::Map(entries) if !entries.is_empty() => entries[0].key_span,
            _ => node.span,
        };
        findings.push(Finding {
            rule: check_rule(l, CHECK_ORDER),
            outcome: Outcome::Fail,
            subject: (l.names)(input),
            message,
            location: Some((input as u32, at)),
            policy: l.layers.checks[CHECK_ORDER].as_ref().map(|c| c.loc),
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    };
    let kind = &l.policy.documents[l.layers.document as usize].name;
    let mut out: Vec<Option<(usize, BoundBy)>> = vec![None; candidates.len()];
    let mut unbound = Vec::new();
    for (c, cand) in candidates.iter().enumerate() {
        let mine: Vec<&Bound> = bindings.iter().filter(|b| b.input == cand.input).collect();
        match mine.as_slice() {
            [] => unbound.push(c),
            [b] => match l.layers.layers.iter().position(|x| *x == b.layer) {
                Some(i) => out[c] = Some((i, b.by)),
                None => order(
                    &mut findings,
                    cand.input,
                    cand.node,
                    format!(
                        "`{}` is bound to `{}`, which is not a layer of `{kind}` (its layers: {}); it is not read",
                        (l.names)(cand.input),
                        b.layer,
                        l.layers.layers.join(", ")
                    ),
                ),
            },
            many => {
                let names: Vec<String> = many.iter().map(|b| format!("`{}`", b.layer)).collect();
                order(
                    &mut findings,
                    cand.input,
                    cand.node,
                    format!(
                        "`{}` is bound {} times ({}); a file is of one layer, so it is not read",
                        (l.names)(cand.input),
                        many.len(),
                        names.join(", ")
                    ),
                );
            }
        }
    }
    // A separate kind: every unbound document is of the lowest layer, and a layer may have many.
    if l.layers.separate {
        for c in unbound.drain(..) {
            out[c] = Some((lowest, BoundBy::Unbound));
        }
    }
    match unbound.as_slice() {
        [] => {}
        [c] if candidates.len() == 1 && l.layers.standalone => out[*c] = Some((0, BoundBy::Standalone)),
        [c] => out[*c] = Some((lowest, BoundBy::Unbound)),
        many => {
            let names: Vec<String> = many.iter().map(|c| format!("`{}`", (l.names)(candidates[*c].input))).collect();
            for c in many {
                let cand = &candidates[*c];
                order(
                    &mut findings,
                    cand.input,
                    cand.node,
                    format!(
                        "{} documents of `{kind}` are bound to no layer ({}); at most one may be (it is the lowest layer, `{}`), so none of them is read; bind each with `--layer NAME=FILE`",
                        many.len(),
                        names.join(", "),
                        l.layers.layers[lowest]
                    ),
                );
            }
        }
    }
    // Two documents of one layer: neither is read, whatever the order they were named in.
    let shared = if l.layers.separate { 0 } else { l.layers.layers.len() };
    for layer in 0..shared {
        let here: Vec<usize> = (0..candidates.len()).filter(|c| out[*c].map(|(x, _)| x) == Some(layer)).collect();
        if here.len() < 2 {
            continue;
        }
        let names: Vec<String> = here.iter().map(|c| format!("`{}`", (l.names)(candidates[*c].input))).collect();
        for c in &here {
            let how = out[*c].map(|(_, by)| by.describe()).unwrap_or_default();
            order(
                &mut findings,
                candidates[*c].input,
                candidates[*c].node,
                format!(
                    "layer `{}` of `{kind}` has {} documents ({}); this one is {how}; a layer has one document, so none of them is read",
                    l.layers.layers[layer],
                    here.len(),
                    names.join(", ")
                ),
            );
        }
        for c in here {
            out[c] = None;
        }
    }
    if findings.is_empty() {
        findings.push(Finding {
            rule: check_rule(l, CHECK_ORDER),
            outcome: Outcome::Pass,
            subject: "deployment".into(),
            message: String::new(),
            location: candidates.first().map(|c| (c.input as u32, c.node.span)),
            policy: l.layers.checks[CHECK_ORDER].as_ref().map(|c| c.loc),
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    }
    findings.extend(claims(l, candidates, &out));
    (out, findings)
}

/// A document's claim of its layer must name the layer it was bound to.
fn claims(l: &Layering<'_>, candidates: &[Candidate<'_>], layers: &[Option<(usize, BoundBy)>]) -> Vec<Finding> {
    let Some(key) = &l.layers.claim else { return Vec::new() };
    let rule = check_rule(l, CHECK_CLAIM);
    let policy = l.layers.checks[CHECK_CLAIM].as_ref().map(|c| c.loc);
    let mut out = Vec::new();
    for (cand, layer) in candidates.iter().zip(layers) {
        let Some((layer, by)) = layer else { continue };
        let NodeKind::Map(entries) = &cand.node.kind else { continue };
        let bound = &l.layers.layers[*layer];
        // Every spelling of the key counts (a duplicate is still a claim).
        for e in entries.iter().filter(|e| e.key.eq_ignore_ascii_case(key)) {
            let claimed = match &e.value.kind {
                NodeKind::Str(s) => Some(s.as_str()),
                _ => None,
            };
            let (outcome, message) = match claimed {
                Some(c) if c == bound => (Outcome::Pass, String::new()),
                Some(c) => (
                    Outcome::Fail,
                    format!(
                        "`{}` claims layer `{c}`, but it is checked as layer `{bound}` ({}); a claim is never a grant",
                        (l.names)(cand.input),
                        by.describe()
                    ),
                ),
                None => (
                    Outcome::Fail,
                    format!(
                        "`{}` claims its layer with a value that is not a layer name; it is checked as layer `{bound}` ({})",
                        (l.names)(cand.input),
                        by.describe()
                    ),
                ),
            };
            out.push(Finding {
                rule: rule.clone(),
                outcome,
                subject: (l.names)(cand.input),
                message,
                location: Some((cand.input as u32, e.value.span)),
                policy,
                labels: Vec::new(),
                bound: Vec::new(),
                trace: Vec::new(),
                place: crate::diagnostic::Place::default(),
            });
        }
    }
    if out.is_empty() {
        out.push(Finding {
            rule,
            outcome: Outcome::NotApplicable,
            subject: "deployment".into(),
            message: format!("no document claims a layer with `{key}`"),
            location: None,
            policy,
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    }
    out
}

/// Merges the documents `(input, layer, root)`, one per layer, over `base`
/// (the kind's defaults, standing in for the most trusted layer when no
/// document is bound to it). Returns the effective document, the documents
/// in trust order, and the findings of refused values.
pub fn merge(
    l: &Layering<'_>,
    base: Val,
    mut docs: Vec<(usize, usize, Val)>,
) -> (Val, Vec<(usize, Val)>, Vec<Finding>) {
    docs.sort_by_key(|(_, layer, _)| *layer);
    let mut m = Merger { l, findings: Vec::new(), layer_of_doc: Vec::new(), layer: 0 };
    let record = l.policy.documents[l.layers.document as usize].record;
    let mut merged = base;
    let mut ordered = Vec::new();
    for (input, layer, root) in docs {
        m.layer_of_doc.push((input as u32, layer));
        m.layer = layer;
        let refused_before = m.refusals(CHECK_UNTRUSTED);
        merged = m.top(&merged, &root, record);
        if layer > 0 && m.refusals(CHECK_UNTRUSTED) == refused_before {
            m.outcome(CHECK_UNTRUSTED, Outcome::Pass, &(l.names)(input), &root, String::new());
        }
        ordered.push((input, root));
    }
    // Every layer rule has an outcome: its failures, its passes, or why it did not apply.
    let first = ordered.first().map(|(_, v)| v.clone()).unwrap_or_else(Val::unknown);
    let lower = m.layer_of_doc.iter().any(|(_, layer)| *layer > 0);
    for check in [CHECK_LOOSEN, CHECK_UNTRUSTED] {
        let rule = check_rule(l, check);
        if !m.findings.iter().any(|f| f.rule == rule) {
            let why = if lower {
                "no lower layer sets a value this rule judges".to_string()
            } else {
                "no document of a lower layer was checked".to_string()
            };
            m.outcome(check, Outcome::NotApplicable, "deployment", &first, why);
        }
    }
    (merged, ordered, m.findings)
}

fn check_rule(l: &Layering<'_>, check: usize) -> String {
    l.layers.checks[check].as_ref().map(|c| c.rule.clone()).unwrap_or_else(|| "layer".into())
}

struct Merger<'a, 'b> {
    l: &'a Layering<'b>,
    findings: Vec<Finding>,
    layer_of_doc: Vec<(u32, usize)>,
    /// The layer of the document being merged.
    layer: usize,
}

/// A value the document itself set (not a default, not missing, not invalid).
fn set_by_document(v: &Val) -> bool {
    matches!(v.origin, Origin::Document { .. }) && !v.is_absent()
}

impl Merger<'_, '_> {
    fn layer_name(&self, layer: usize) -> &str {
        self.l.layers.layers.get(layer).map(String::as_str).unwrap_or("?")
    }

    /// Who set a value: "layer `security`" or "the shipped default".
    fn setter(&self, v: &Val) -> String {
        match &v.origin {
            Origin::Document { doc, .. } => match self.layer_of_doc.iter().find(|(d, _)| d == doc) {
                Some((_, layer)) => format!("layer `{}`", self.layer_name(*layer)),
                None => "a document".into(),
            },
            Origin::Policy { .. } => "the shipped default".into(),
            _ => "nothing".into(),
        }
    }

    /// How many failures of a layer check were found so far.
    fn refusals(&self, check: usize) -> usize {
        let rule = check_rule(self.l, check);
        self.findings.iter().filter(|f| f.rule == rule && f.outcome == Outcome::Fail).count()
    }

    /// A pass (or not-applicable) outcome of a layer check, located at `at`.
    fn outcome(&mut self, check: usize, outcome: Outcome, subject: &str, at: &Val, message: String) {
        self.findings.push(Finding {
            rule: check_rule(self.l, check),
            outcome,
            subject: subject.into(),
            message,
            location: if outcome == Outcome::Pass { at.origin.document_span() } else { None },
            policy: self.l.layers.checks[check].as_ref().map(|c| c.loc),
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    }

    fn refuse(&mut self, check: usize, over: &Val, base: Option<&Val>, path: &str, message: String) {
        let mut labels = Vec::new();
        if let Some(b) = base
            && let Some((d, s)) = b.origin.document_span()
        {
            labels.push((d, s, format!("set by {}", self.setter(b))));
        }
        self.findings.push(Finding {
            rule: check_rule(self.l, check),
            outcome: Outcome::Fail,
            subject: path.into(),
            message,
            location: over.origin.document_span(),
            policy: self.l.layers.checks[check].as_ref().map(|c| c.loc),
            labels,
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    }

    fn top(&mut self, base: &Val, over: &Val, record: RecordId) -> Val {
        let def = &self.l.policy.records[record as usize];
        let (ValKind::Record(_, bf), ValKind::Record(_, of)) = (&base.kind, &over.kind) else { return base.clone() };
        let mut out: Vec<Val> = bf.to_vec();
        for (i, field) in def.fields.iter().enumerate() {
            let (Some(b), Some(o)) = (bf.get(i), of.get(i)) else { continue };
            if !matches!(o.origin, Origin::Document { .. })
                || self.l.layers.claim.as_deref() == Some(field.name.as_str())
            {
                continue;
            }
            // The most trusted layer's invalid value stays invalid: rules see it as unknown.
            if self.layer == 0 || (self.l.layers.free.contains(&field.name) && !o.is_absent()) {
                out[i] = o.clone();
                continue;
            }
            if o.is_absent() {
                continue;
            }
            if self.l.layers.free.contains(&field.name) {
                out[i] = o.clone();
                continue;
            }
            if let Some((_, only)) = self.l.layers.only.iter().find(|(f, _)| *f == field.name) {
                if *only == self.layer {
                    out[i] = o.clone();
                } else {
                    let message = format!(
                        "`{}` may be set only by layer `{}`; layer `{}` may not set it",
                        field.name,
                        self.layer_name(*only),
                        self.layer_name(self.layer)
                    );
                    self.refuse(CHECK_UNTRUSTED, o, None, &field.name, message);
                }
                continue;
            }
            out[i] = self.tighten(b, o, &field.ty, field, &field.name, &mut Vec::new());
        }
        Val::new(ValKind::Record(record, Arc::new(out)), base.origin.clone())
    }

    /// The value `field` takes where nothing sets it, under the enclosing keys.
    fn default_for(&self, field: &FieldDef, keys: &[(EnumId, u32)]) -> Option<Val> {
        match field.default.as_ref()? {
            DefaultDef::Value(v) => Some(v.clone()),
            DefaultDef::Empty(_) => None,
            DefaultDef::Column { matrix, column, .. } => {
                let m = &self.l.policy.matrices[*matrix as usize];
                let (_, v) = keys.iter().rev().find(|(e, _)| *e == m.key_enum)?;
                m.cells.get(*v as usize)?.get(*column).cloned()
            }
        }
    }

    fn tighten(
        &mut self,
        base: &Val,
        over: &Val,
        ty: &Ty,
        field: &FieldDef,
        path: &str,
        keys: &mut Vec<(EnumId, u32)>,
    ) -> Val {
        if !set_by_document(over) {
            return base.clone();
        }
        match (ty, &over.kind) {
            (Ty::Record(r), ValKind::Record(_, of)) => {
                let def = &self.l.policy.records[*r as usize];
                let bf: Vec<Val> = match &base.kind {
                    ValKind::Record(_, bf) => bf.to_vec(),
                    _ => def
                        .fields
                        .iter()
                        .map(|f| {
                            self.default_for(f, keys).unwrap_or_else(|| match f.optional {
                                // Optional without a default: decidedly absent; required: missing.
                                true => Val::absent(join(path, &f.name), None, Default::default()),
                                false => Val::missing(join(path, &f.name), None, Default::default()),
                            })
                        })
                        .collect(),
                };
                let mut out = bf.clone();
                for (i, f) in def.fields.iter().enumerate() {
                    if let (Some(b), Some(o)) = (bf.get(i), of.get(i)) {
                        out[i] = self.tighten(b, o, &f.ty, f, &join(path, &f.name), keys);
                    }
                }
                let origin = if base.is_absent() { over.origin.clone() } else { base.origin.clone() };
                Val::new(ValKind::Record(*r, Arc::new(out)), origin)
            }
            (Ty::Map(_, vt), ValKind::Map(oe)) => {
                let mut entries: Vec<(Val, Val)> = match &base.kind {
                    ValKind::Map(be) => be.to_vec(),
                    _ => Vec::new(),
                };
                for (k, v) in oe.iter() {
                    if !set_by_document(k) {
                        continue;
                    }
                    let pushed = if let ValKind::Enum(e, x) = k.kind {
                        keys.push((e, x));
                        true
                    } else {
                        false
                    };
                    let here = join(path, &k.display(self.l.policy));
                    let at = entries.iter().position(|(bk, _)| bk.same(k) == Some(true));
                    let b = match at {
                        Some(j) => entries[j].1.clone(),
                        None => self
                            .default_for(field, keys)
                            .unwrap_or_else(|| Val::absent(here.as_str(), None, Default::default())),
                    };
                    let merged = self.tighten(&b, v, vt, field, &here, keys);
                    match at {
                        Some(j) => entries[j].1 = merged,
                        None => entries.push((k.clone(), merged)),
                    }
                    if pushed {
                        keys.pop();
                    }
                }
                let origin = if base.is_absent() && !matches!(base.kind, ValKind::Map(_)) {
                    over.origin.clone()
                } else {
                    base.origin.clone()
                };
                Val::new(ValKind::Map(Arc::new(entries)), origin)
            }
            (Ty::List(elem), ValKind::List(_)) if field.growth.is_some() => {
                self.grow(base, over, elem, field, path, keys)
            }
            _ => {
                let Some(kind) = direction(self.l.policy, ty, Some(field)) else {
                    let message = format!(
                        "layer `{}` sets `{path}`, which has no order to tighten along; only layer `{}` may set it",
                        self.layer_name(self.layer),
                        self.layer_name(0)
                    );
                    self.refuse(CHECK_UNTRUSTED, over, None, path, message);
                    return base.clone();
                };
                let reference = if base.is_absent() { self.default_for(field, keys) } else { Some(base.clone()) };
                let Some(reference) = reference.filter(|r| !r.is_absent()) else { return over.clone() };
                match tight_enough(over, &reference, kind) {
                    Some(false) => {
                        let message = format!(
                            "layer `{}` sets `{path}` to `{}`, looser than `{}` from {}; a lower layer may only tighten",
                            self.layer_name(self.layer),
                            over.display(self.l.policy),
                            reference.display(self.l.policy),
                            self.setter(&reference)
                        );
                        self.refuse(CHECK_LOOSEN, over, Some(&reference), path, message);
                        reference
                    }
                    _ => {
                        self.outcome(CHECK_LOOSEN, Outcome::Pass, path, over, String::new());
                        over.clone()
                    }
                }
            }
        }
    }

    /// A list that tightens in one direction (`grows tighter`, `shrinks
    /// tighter`), set by a lower layer. Entries are matched by identity (a
    /// record's identity field, a scalar's value). Growing: an entry the
    /// layers above do not have is added, one they have is the same entry
    /// and may only tighten, and one left out stays. Shrinking: the lower
    /// layer's list is the effective one when every entry of it is above.
    fn grow(
        &mut self,
        base: &Val,
        over: &Val,
        elem: &Ty,
        field: &FieldDef,
        path: &str,
        keys: &mut Vec<(EnumId, u32)>,
    ) -> Val {
        let ValKind::List(lower) = &over.kind else { return base.clone() };
        let above: Vec<Val> = match &base.kind {
            ValKind::List(b) => b.to_vec(),
            _ => Vec::new(),
        };
        let origin = if matches!(base.kind, ValKind::List(_)) { base.origin.clone() } else { over.origin.clone() };
        let policy = self.l.policy;
        let at = |list: &[Val], v: &Val| list.iter().position(|b| same_entry(policy, b, v, elem));
        if field.growth == Some(Growth::Shrinks) {
            if let Some(added) = lower.iter().find(|o| at(&above, o).is_none()) {
                let message = format!(
                    "layer `{}` adds `{}` to `{path}`, which tightens only by shrinking; a lower layer may only remove entries",
                    self.layer_name(self.layer),
                    added.display(self.l.policy)
                );
                self.refuse(CHECK_LOOSEN, added, Some(base), path, message);
                return base.clone();
            }
            self.outcome(CHECK_LOOSEN, Outcome::Pass, path, over, String::new());
            return over.clone();
        }
        let mut out = above;
        for (i, o) in lower.iter().enumerate() {
            let here = format!("{path}[{i}]");
            match at(&out, o) {
                Some(j) => {
                    let refused = self.refusals(CHECK_LOOSEN);
                    out[j] = self.same_tighter(&out[j], o, elem, &here, keys);
                    if self.refusals(CHECK_LOOSEN) == refused {
                        self.outcome(CHECK_LOOSEN, Outcome::Pass, &here, o, String::new());
                    }
                }
                None => {
                    self.outcome(CHECK_LOOSEN, Outcome::Pass, &here, o, String::new());
                    out.push(o.clone());
                }
            }
        }
        Val::new(ValKind::List(Arc::new(out)), origin)
    }

    /// An entry a lower layer names that the layers above declared: the same
    /// entry, which may gain in its own lists that grow tighter and tighten
    /// its ordered values, and changes nothing else (`loosen` otherwise).
    fn same_tighter(&mut self, above: &Val, lower: &Val, elem: &Ty, path: &str, keys: &mut Vec<(EnumId, u32)>) -> Val {
        let (Ty::Record(r), ValKind::Record(_, af), ValKind::Record(_, lf)) = (elem, &above.kind, &lower.kind) else {
            return above.clone();
        };
        let def = &self.l.policy.records[*r as usize];
        let mut out = af.to_vec();
        for (i, f) in def.fields.iter().enumerate() {
            let (Some(a), Some(l)) = (af.get(i), lf.get(i)) else { continue };
            let here = join(path, &f.name);
            if !set_by_document(l) || a.same(l) == Some(true) {
                continue;
            }
            let grows = matches!(f.ty, Ty::List(_)) && f.growth.is_some();
            if grows || direction(self.l.policy, &f.ty, Some(f)).is_some() || matches!(f.ty, Ty::Record(_)) {
                out[i] = self.tighten(a, l, &f.ty, f, &here, keys);
                continue;
            }
            let message = format!(
                "layer `{}` changes `{here}` from `{}` to `{}`; a lower layer may add to an entry declared above, never change it",
                self.layer_name(self.layer),
                a.display(self.l.policy),
                l.display(self.l.policy)
            );
            self.refuse(CHECK_LOOSEN, l, Some(a), &here, message);
        }
        Val::new(ValKind::Record(*r, Arc::new(out)), above.origin.clone())
    }
}

/// Whether two entries of a list are one thing: records by their identity field, scalars by value.
pub(crate) fn same_entry(policy: &Policy, a: &Val, b: &Val, elem: &Ty) -> bool {
    if let Ty::Record(r) = elem
        && let Some(id) = policy.records[*r as usize].identity
    {
        return match (&a.kind, &b.kind) {
            (ValKind::Record(_, x), ValKind::Record(_, y)) => match (x.get(id), y.get(id)) {
                (Some(x), Some(y)) => x.same(y) == Some(true),
                _ => false,
            },
            _ => false,
        };
    }
    a.same(b) == Some(true)
}
