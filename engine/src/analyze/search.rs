//! The questions of the analysis, asked of one incremental solver under
//! assumptions: every rule and schema check is gated by an assumption
//! literal, so a core names the rules, floors and types to blame.

use std::collections::{BTreeMap, BTreeSet};

use rustsat::types::Lit;

use super::formula::{Answer, B, Builder, Formula};
use super::model::{self, CheckKind, Model, Node};
use super::symbolic::{Ev, RuleSym};
use super::*;
use crate::check::{self, Input};
use crate::diagnostic::{Finding, Outcome, PolicyDiagnostic, Severity};
use crate::document::{self, Format, Limits};
use crate::hir::*;
use crate::testing::violation_outcome;

/// A rule or a schema check: something that can fire, gated by `gate`.
#[derive(Clone)]
struct Unit {
    member: Member,
    gate: Lit,
    /// Fires with its declared violation.
    fire: B,
    /// Fails or is unknown.
    bad: B,
    /// Applies and passes for some subject.
    pass: B,
    /// Every guard held for some subject (rules only).
    reach: B,
    /// The document kinds it reads (rules only).
    reads: Vec<DocKindId>,
    sym: Option<RuleSym>,
}

struct Search<'p> {
    b: Builder,
    policy: &'p Policy,
    model: Model,
    units: Vec<Unit>,
    /// Type gates: a member and its assumption literal.
    types: Vec<(Member, Lit)>,
}

/// A subject: a name, what it requires, the kind it is about.
struct SubjectDef {
    name: String,
    require: Vec<B>,
    kind: DocKindId,
}

impl<'p> Search<'p> {
    /// The bounded deployment, every rule and check encoded and gated.
    fn new(policy: &'p Policy, bounds: Bounds) -> Search<'p> {
        let flow = flow::analyse(policy);
        let mut b = Builder::default();
        let model = model::build(&mut b, policy, &flow, bounds);
        let syms: Vec<RuleSym> = {
            let mut ev = Ev::new(&mut b, policy, &model.docs);
            policy.rules.iter().map(|r| ev.rule(r)).collect()
        };
        let mut units = Vec::new();
        for c in &model.checks {
            let gate = b.fresh();
            let fire = b.or(c.fires.clone());
            let passes = b.or(c.passes.clone());
            let pass = b.and2(passes, fire.negate());
            b.clause(&[B::L(gate).negate(), fire.negate()]);
            let kind = match c.kind {
                CheckKind::Floor => MemberKind::Floor,
                CheckKind::Ceiling => MemberKind::Ceiling,
                CheckKind::Unique => MemberKind::Unique,
            };
            units.push(Unit {
                member: Member { id: c.rule.clone(), kind, loc: c.loc, note: String::new() },
                gate,
                fire,
                bad: fire,
                pass,
                reach: B::T,
                reads: Vec::new(),
                sym: None,
            });
        }
        for (rule, sym) in policy.rules.iter().zip(syms) {
            let gate = b.fresh();
            // A rule the encoding only approximates constrains no other: what it
            // would forbid is not known, so it cannot make another rule dead or a
            // subject unsatisfiable.
            if sym.approximate.is_empty() {
                b.clause(&[B::L(gate).negate(), sym.bad.negate()]);
            }
            let pass = b.and2(sym.pass, sym.bad.negate());
            units.push(Unit {
                member: Member { id: rule.id.clone(), kind: MemberKind::Rule, loc: rule.loc, note: String::new() },
                gate,
                fire: sym.fire,
                bad: sym.bad,
                pass,
                reach: sym.reach,
                reads: rule.reads.clone(),
                sym: Some(sym),
            });
        }
        let types = model
            .types
            .iter()
            .map(|t| (Member { id: t.what.clone(), kind: MemberKind::Type, loc: t.loc, note: String::new() }, t.gate))
            .collect();
        Search { b, policy, model, units, types }
    }

    /// The makings of a second search that answers every question as one
    /// built anew from the policy would (see `Builder::fork`), for another
    /// thread (`Fork::search`): a copy of the formula, cheaper than
    /// building it again.
    fn fork(&self) -> Fork<'p> {
        Fork {
            formula: self.b.fork(),
            policy: self.policy,
            model: self.model.clone(),
            units: self.units.clone(),
            types: self.types.clone(),
        }
    }
}

/// A search without its solvers, which stay on the thread that made them.
struct Fork<'p> {
    formula: Formula,
    policy: &'p Policy,
    model: Model,
    units: Vec<Unit>,
    types: Vec<(Member, Lit)>,
}

impl<'p> Fork<'p> {
    fn search(self) -> Search<'p> {
        let Fork { formula, policy, model, units, types } = self;
        Search { b: Builder::from(formula), policy, model, units, types }
    }
}

/// How many searches ask the rules, each its fixed share, in parallel.
const SEARCHES: usize = 2;

/// What the witnesses of one subject weigh, in units asked (a unit: a rule
/// or schema check, its "fires" question and its twin), when the shares are
/// made. On the shipped library a subject's witnesses took the time of one
/// to three units (BENCHMARKS.md, "`grail analyze`: the shares weighed");
/// one keeps more of the first search's share, and so more of its answers,
/// as they were (with two or three, one more fixture pair came out two
/// lines apart).
const SUBJECT_WEIGHT: usize = 1;

/// The units each search asks, in order: fixed by the number of units and
/// subjects alone, never by the machine's core count or timing (what a
/// solver learnt from the units before decides the model it gives a later
/// one, so fixed shares keep the output the same on every machine). By
/// position, every SEARCHES-th unit; the first search, which finds the
/// witnesses first, keeps a prefix of its share so that its load (the
/// witnesses counted at `SUBJECT_WEIGHT` units a subject) is as near the
/// others' as it can be, and the rest of its share is dealt, in order, to
/// the others after their own.
fn shares(units: usize, subjects: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = (0..SEARCHES).map(|k| (k..units).step_by(SEARCHES).collect()).collect();
    let witnesses = subjects * SUBJECT_WEIGHT;
    let fair = (units + witnesses).div_ceil(SEARCHES);
    let keep = fair.saturating_sub(witnesses).min(out[0].len());
    let rest = out[0].split_off(keep);
    for (u, k) in rest.into_iter().zip((1..SEARCHES).cycle()) {
        out[k].push(u);
    }
    out
}

/// Asks the rules `units` of one search, in order.
fn ask(s: &mut Search<'_>, units: Vec<usize>) -> Vec<(usize, RuleReport, Vec<PolicyDiagnostic>)> {
    units
        .into_iter()
        .map(|u| {
            let mut diagnostics = Vec::new();
            let report = s.rule(u, &mut diagnostics);
            (u, report, diagnostics)
        })
        .collect()
}

pub fn run(policy: &Policy, bounds: Bounds) -> Analysis {
    let mut analysis = Analysis {
        bounds,
        subjects: Vec::new(),
        conflicts: Vec::new(),
        rules: Vec::new(),
        structural: Vec::new(),
        diagnostics: Vec::new(),
        stats: Stats::default(),
    };
    // The search built here finds the witnesses, then asks its share of the
    // rules (`shares`).
    let mut s = Search::new(policy, bounds);
    let defs = s.subjects();
    let mut shares = shares(s.units.len(), defs.len()).into_iter();
    let mine = shares.next().unwrap_or_default();
    // Each other search is a fork of this one before its first question
    // (`Search::fork`), as if built anew, and asks its share on a thread of
    // its own at once: it never sees the witnesses.
    let forks: Vec<(Fork<'_>, Vec<usize>)> = shares.map(|share| (s.fork(), share)).collect();
    let (mut asked, stats) = std::thread::scope(|scope| {
        let others: Vec<_> = forks
            .into_iter()
            .map(|(fork, share)| {
                scope.spawn(move || {
                    let mut t = fork.search();
                    let done = ask(&mut t, share);
                    (done, t.b.solves)
                })
            })
            .collect();
        for def in &defs {
            let subject = s.witness(def, &mut analysis.conflicts);
            analysis.subjects.push(subject);
        }
        let mut done = ask(&mut s, mine);
        let mut solves = s.b.solves;
        for h in others {
            // A share that panicked passes its panic on, as the same code on
            // this thread would have.
            let (more, more_solves) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            done.extend(more);
            solves += more_solves;
        }
        (done, Stats { variables: s.b.vars(), clauses: s.b.clauses, solves })
    });
    asked.sort_by_key(|(u, _, _)| *u);
    for (_, report, mut diagnostics) in asked {
        analysis.diagnostics.append(&mut diagnostics);
        analysis.rules.push(report);
    }
    // Rules in the order the policy declares them.
    let order: Vec<String> = policy.rule_ids().into_iter().map(|(id, _)| id.to_string()).collect();
    analysis.rules.sort_by_key(|r| order.iter().position(|o| *o == r.id).unwrap_or(usize::MAX));
    for (id, loc) in policy.rule_ids() {
        if !analysis.rules.iter().any(|r| r.id == id) {
            analysis.structural.push((id.to_string(), loc));
        }
    }
    for c in &analysis.conflicts {
        analysis.diagnostics.push(conflict_diagnostic(c));
    }
    for r in &analysis.rules {
        if let Status::Dead(members) = &r.status {
            analysis.diagnostics.push(dead_diagnostic(r, members));
        }
    }
    analysis.stats = stats;
    analysis
}

fn conflict_diagnostic(c: &Conflict) -> PolicyDiagnostic {
    let names: Vec<String> = c.members.iter().map(|m| format!("`{}`", m.id)).collect();
    let loc = c.members.first().map(|m| m.loc).unwrap_or_default();
    let subjects = c.subjects.join(", ");
    let message = match names.as_slice() {
        [] => format!("no document satisfies the schema for {subjects}"),
        [one] => format!("{one} can never hold for {subjects}"),
        [a, b] => format!("{a} and {b} cannot both hold for {subjects}"),
        _ => format!("{} cannot all hold together for {subjects}", names.join(", ")),
    };
    let mut d =
        PolicyDiagnostic { code: "conflict", severity: Severity::Error, message, loc, labels: Vec::new(), help: None };
    let mut help = Vec::new();
    if c.members.len() > 1 {
        help.push(
            "no document satisfies them all, and dropping any one of them admits one: the set is minimal".to_string(),
        );
    }
    for m in &c.members {
        d.labels.push((m.loc, format!("{} `{}`", m.kind.as_str(), m.id)));
        if !m.note.is_empty() {
            help.push(format!("a document that satisfies the others fails `{}`: {}", m.id, m.note));
        }
    }
    if !help.is_empty() {
        d.help = Some(help.join("\n"));
    }
    d
}

fn dead_diagnostic(r: &RuleReport, members: &[Member]) -> PolicyDiagnostic {
    let mut d = PolicyDiagnostic::error(
        "dead-rule",
        r.loc,
        format!("`{}` can never fire: no document within the bounds violates it", r.id),
    );
    for m in members {
        d.labels.push((m.loc, format!("{} `{}` prevents it", m.kind.as_str(), m.id)));
    }
    d.help = Some(if members.is_empty() {
        "its requirement holds, or its guards fail, for every document the schema admits".into()
    } else {
        format!(
            "a document that fires it would break {}",
            members.iter().map(|m| format!("{} `{}`", m.kind.as_str(), m.id)).collect::<Vec<_>>().join(" and ")
        )
    });
    d
}

impl Search<'_> {
    fn gates(&self) -> Vec<B> {
        let mut out: Vec<B> = self.units.iter().map(|u| B::L(u.gate)).collect();
        out.extend(self.types.iter().map(|(_, l)| B::L(*l)));
        out
    }

    /// The member an assumption literal gates, if any.
    fn member_of(&self, lit: Lit) -> Option<Member> {
        self.units
            .iter()
            .find(|u| u.gate == lit)
            .map(|u| u.member.clone())
            .or_else(|| self.types.iter().find(|(_, l)| *l == lit).map(|(m, _)| m.clone()))
    }

    fn subjects(&self) -> Vec<SubjectDef> {
        let mut out = Vec::new();
        for (k, d) in self.policy.documents.iter().enumerate() {
            out.push(SubjectDef {
                name: d.name.clone(),
                require: vec![self.model.docs[k].present],
                kind: k as DocKindId,
            });
        }
        // Every key of an enumeration-keyed map that a rule iterates over, at the top of a document.
        let mut maps: BTreeMap<(DocKindId, EnumId), BTreeSet<usize>> = BTreeMap::new();
        for r in &self.policy.rules {
            for c in r.clauses.iter() {
                let ClauseDef::For { domain, .. } = c else { continue };
                let ExprKind::Field(base, i) = &domain.kind else { continue };
                let ExprKind::Doc(k) = base.kind else { continue };
                let record = &self.policy.records[self.policy.documents[k as usize].record as usize];
                if let Some(Ty::Map(key, _)) = record.fields.get(*i).map(|f| &f.ty)
                    && let Ty::Enum(e) = **key
                {
                    maps.entry((k, e)).or_default().insert(*i);
                }
            }
        }
        for ((k, e), fields) in maps {
            let Node::Record { fields: nodes, .. } = &self.model.docs[k as usize].node else { continue };
            let doc = &self.policy.documents[k as usize];
            for (v, variant) in self.policy.enums[e as usize].variants.iter().enumerate() {
                let mut require = vec![self.model.docs[k as usize].present];
                for i in &fields {
                    if let Some((_, Node::Map { entries, .. })) = nodes.get(*i)
                        && let Some((Node::Scalar { present, .. }, _)) = entries.get(v)
                    {
                        require.push(*present);
                    }
                }
                let names: Vec<&str> = fields.iter().map(|i| nodes[*i].0.as_str()).collect();
                out.push(SubjectDef {
                    name: format!("{} {variant} ({})", doc.name, names.join(", ")),
                    require,
                    kind: k,
                });
            }
        }
        out
    }

    /// Solves with `hard` and as many of `soft` as possible; the soft ones
    /// kept, or `Err(core)` (assumption literals) when `hard` alone is unsatisfiable.
    fn relax(&mut self, hard: &[B], soft: &mut Vec<B>) -> Result<(), Vec<Lit>> {
        soft.retain(|x| *x != B::T);
        loop {
            if soft.contains(&B::F) {
                soft.retain(|x| *x != B::F);
                continue;
            }
            let mut all = hard.to_vec();
            all.extend(soft.iter().copied());
            match self.b.solve(&all) {
                Answer::Sat => return Ok(()),
                Answer::Unsat(core) => {
                    let before = soft.len();
                    soft.retain(|x| !matches!(x, B::L(l) if core.contains(l)));
                    if soft.len() == before {
                        return Err(core);
                    }
                }
            }
        }
    }

    /// The deployment of the solver's last model: each document's tree, file
    /// name and the layer it is bound to (a kind whose layers are separate is
    /// bound to its most trusted layer: the analysis asks what a document the
    /// caller trusts can do).
    fn drawn(&self) -> Vec<Drawn> {
        let mut out = Vec::new();
        for (k, d) in self.policy.documents.iter().enumerate() {
            let dm = &self.model.docs[k];
            if !self.b.value(dm.present) {
                continue;
            }
            let Some(tree) = model::decode(self.policy, &self.b, &dm.node) else { continue };
            let layer = self
                .policy
                .layers
                .iter()
                .find(|l| l.separate && l.document as usize == k)
                .and_then(|l| l.layers.first().cloned());
            let (path, marker) = match &d.selector {
                SelectorDef::Markdown { marker, .. } => (format!("{}.md", d.binder), Some(marker.clone())),
                _ => (format!("{}.yaml", d.binder), None),
            };
            let given = match &d.selector {
                SelectorDef::Given { name } => Some(name.clone()),
                _ => None,
            };
            // `list into FIELD`: the document is the list the field holds.
            let tree = match (&d.list_into, tree) {
                (Some(field), model::Out::Map(fields)) => {
                    fields.into_iter().find(|(k, _)| k == field).map_or(model::Out::List(Vec::new()), |(_, v)| v)
                }
                (_, tree) => tree,
            };
            out.push(Drawn { path, tree, marker, layer, given });
        }
        out
    }

    /// The deployment of the solver's last model, as files.
    fn documents(&self) -> Vec<DocText> {
        self.drawn().iter().map(|d| d.text(false)).collect()
    }

    /// The files the documents name by `ref`: a symbolic document names them
    /// by `ref string`, and the analysis takes each one a document could
    /// follow as readable, with the text [`ATTACHED`] (its content is never read).
    fn attached(&self, inputs: &[Input<'_>]) -> Vec<(usize, String)> {
        inputs
            .iter()
            .enumerate()
            .flat_map(|(i, input)| check::references(self.policy, input).into_iter().map(move |p| (i, p)))
            .filter(|(_, p)| check::path_leaves_folder(p).is_none())
            .collect()
    }

    /// The files `docs` name by `ref`, for a fixture to carry.
    fn attached_paths(&self, docs: &[DocText]) -> Vec<String> {
        let loaded = load(docs);
        let inputs = inputs(docs, &loaded);
        let mut paths: Vec<String> = self.attached(&inputs).into_iter().map(|(_, p)| p).collect();
        paths.sort();
        paths.dedup();
        paths.retain(|p| !docs.iter().any(|d| d.path == *p));
        paths
    }

    /// What the real checker says about a deployment.
    fn check(&self, docs: &[DocText]) -> Vec<Finding> {
        let loaded = load(docs);
        let inputs = inputs(docs, &loaded);
        let named = self.attached(&inputs);
        let read: Result<document::Node, document::SyntaxError> =
            document::load(ATTACHED, Format::Yaml, &Limits::default());
        let attachments: Vec<check::Attachment<'_>> = named
            .iter()
            .map(|(from, path)| check::Attachment {
                from: *from,
                path,
                read: Ok((inputs.len() as u32, &read)),
                text: ATTACHED.into(),
                raw: None,
            })
            .collect();
        let bindings: Vec<crate::layers::Bound> = docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let layer = d.layer.clone()?;
                Some(crate::layers::Bound { input: i, layer, by: crate::layers::BoundBy::Flag })
            })
            .collect();
        check::check_with(self.policy, &inputs, &attachments, &bindings, None)
    }

    fn witness(&mut self, def: &SubjectDef, conflicts: &mut Vec<Conflict>) -> Subject {
        let mut hard = def.require.clone();
        hard.extend(self.gates());
        let mut subject =
            Subject { name: def.name.clone(), witness: None, problem: None, applies: Vec::new(), conflict: None };
        if let Answer::Unsat(core) = self.b.solve(&hard) {
            let members = self.shrink(&def.require, &core);
            let mut with_notes = Vec::new();
            for m in &members {
                let others: Vec<Lit> = members.iter().filter(|x| *x != m).copied().collect();
                let mut trial = def.require.clone();
                trial.extend(others.iter().map(|l| B::L(*l)));
                let mut member = self.member_of(*m).unwrap_or(Member {
                    id: "?".into(),
                    kind: MemberKind::Type,
                    loc: Loc::default(),
                    note: String::new(),
                });
                if self.b.solve(&trial) == Answer::Sat {
                    let docs = self.documents();
                    let findings = self.check(&docs);
                    if let Some(f) = findings
                        .iter()
                        .find(|f| f.rule == member.id && matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
                    {
                        member.note = format!("{} ({})", f.message, f.subject);
                    }
                }
                with_notes.push(member);
            }
            let ids: Vec<String> = with_notes.iter().map(|m| m.id.clone()).collect();
            match conflicts.iter().position(|c| c.members.iter().map(|m| m.id.clone()).collect::<Vec<_>>() == ids) {
                Some(i) => {
                    conflicts[i].subjects.push(def.name.clone());
                    subject.conflict = Some(i);
                }
                None => {
                    conflicts.push(Conflict { subjects: vec![def.name.clone()], members: with_notes });
                    subject.conflict = Some(conflicts.len() - 1);
                }
            }
            return subject;
        }
        // Prefer a small deployment in which every rule of the kind applies.
        let mut soft: Vec<B> = Vec::new();
        for (k, d) in self.model.docs.iter().enumerate() {
            if k as DocKindId != def.kind {
                soft.push(d.present.negate());
            }
        }
        for u in &self.units {
            if u.reads.first() != Some(&def.kind) {
                continue;
            }
            match &u.sym {
                Some(s) if !s.approximate.is_empty() => soft.push(u.reach.negate()),
                _ => soft.push(u.pass),
            }
        }
        if self.relax(&hard, &mut soft).is_err() {
            subject.problem = Some("the solver lost the witness it had found".into());
            return subject;
        }
        hard.extend(soft);
        self.smallest(&hard);
        subject.applies = self
            .units
            .iter()
            .filter(|u| u.member.kind == MemberKind::Rule && self.b.value(u.pass))
            .map(|u| u.member.id.clone())
            .collect();
        let docs = self.documents();
        let findings = self.check(&docs);
        // A rule the encoding approximates is not held to the witness: what
        // it needs is beyond the analysis (its report says which part).
        let approximated = |rule: &str| {
            self.units.iter().any(|u| u.member.id == rule && u.sym.as_ref().is_some_and(|s| !s.approximate.is_empty()))
        };
        let wrong: Vec<String> = findings
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown) && !approximated(&f.rule))
            .map(|f| format!("{} {} {}: {}", f.rule, f.outcome.as_str(), f.subject, f.message))
            .collect();
        if !wrong.is_empty() {
            subject.problem = Some(format!("the checker does not confirm the witness: {}", wrong.join("; ")));
        }
        subject.witness = Some(docs);
        subject
    }

    /// Re-solves `hard` for a locally smallest document: as few atoms true
    /// as the cores allow (a witness without clutter). Keeps a model.
    fn smallest(&mut self, hard: &[B]) {
        let mut off: Vec<B> = self.model.atoms.iter().filter(|a| self.b.value(B::L(**a))).map(|a| B::L(!*a)).collect();
        // A few rounds: each drops the atoms a core says must stay.
        for _ in 0..64 {
            let mut all = hard.to_vec();
            all.extend(off.iter().copied());
            match self.b.solve(&all) {
                Answer::Sat => return,
                Answer::Unsat(core) => {
                    let before = off.len();
                    off.retain(|x| !matches!(x, B::L(l) if core.contains(l)));
                    if off.len() == before {
                        break;
                    }
                }
            }
        }
        let _ = self.b.solve(hard);
    }

    /// A minimal subset of the gates in `core` that is unsatisfiable with
    /// `fixed` (deletion-based: drop one member, re-solve).
    fn shrink(&mut self, fixed: &[B], core: &[Lit]) -> Vec<Lit> {
        let gates: BTreeSet<Lit> =
            self.gates().iter().filter_map(|g| if let B::L(l) = g { Some(*l) } else { None }).collect();
        let mut members: Vec<Lit> = core.iter().filter(|l| gates.contains(l)).copied().collect();
        let mut i = 0;
        while i < members.len() {
            let trial: Vec<Lit> = members.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| *l).collect();
            let mut assume = fixed.to_vec();
            assume.extend(trial.iter().map(|l| B::L(*l)));
            match self.b.solve(&assume) {
                Answer::Unsat(core2) => {
                    members = trial.into_iter().filter(|l| core2.contains(l)).collect();
                    // The core of the smaller set may have dropped members before `i`; start over there.
                    i = i.min(members.len());
                }
                Answer::Sat => i += 1,
            }
        }
        members
    }

    fn rule(&mut self, u: usize, diagnostics: &mut Vec<PolicyDiagnostic>) -> RuleReport {
        let unit = &self.units[u];
        let (approximate, pooled) = match &unit.sym {
            Some(s) => (s.approximate.iter().cloned().collect(), s.pooled.iter().cloned().collect()),
            None => (Vec::new(), Vec::new()),
        };
        let mut report = RuleReport {
            id: unit.member.id.clone(),
            loc: unit.member.loc,
            kind: unit.member.kind,
            status: Status::Fires,
            approximate,
            pooled,
            fires_with: Vec::new(),
            fixture: None,
        };
        let (fire, reach, is_rule) = (unit.fire, unit.reach, unit.member.kind == MemberKind::Rule);
        // Floors, ceilings and types always hold; the other rules may give way.
        let mut hard = vec![fire];
        let mut bounds: Vec<B> = Vec::new();
        for (i, x) in self.units.iter().enumerate() {
            if i != u && x.member.kind != MemberKind::Rule {
                bounds.push(B::L(x.gate));
            }
        }
        bounds.extend(self.types.iter().map(|(_, l)| B::L(*l)));
        hard.extend(bounds.iter().copied());

        let mut soft: Vec<B> = Vec::new();
        for (k, d) in self.model.docs.iter().enumerate() {
            if !self.units[u].reads.contains(&(k as DocKindId)) {
                soft.push(d.present.negate());
            }
        }
        let others: Vec<(Lit, String)> = self
            .units
            .iter()
            .enumerate()
            .filter(|(i, x)| *i != u && x.member.kind == MemberKind::Rule)
            .map(|(_, x)| (x.gate, x.member.id.clone()))
            .collect();
        soft.extend(others.iter().map(|(l, _)| B::L(*l)));
        let relaxed = self.relax(&hard, &mut soft);
        if let Err(core) = relaxed {
            // An approximated rule's guards are not known either: no warning is a verdict on them.
            if is_rule && report.approximate.is_empty() && report.pooled.is_empty() {
                let mut reach_hard = vec![reach];
                reach_hard.extend(bounds.iter().copied());
                if let Answer::Unsat(_) = self.b.solve(&reach_hard) {
                    let mut d = PolicyDiagnostic {
                        code: "never-applies",
                        severity: Severity::Warning,
                        message: format!("the guards of `{}` make it NOT APPLICABLE for every document", report.id),
                        loc: report.loc,
                        labels: Vec::new(),
                        help: Some("a `when` (or the `for` domains) never holds under the schema, floors and types; the rule checks nothing".into()),
                    };
                    d.labels.push((report.loc, "never reaches `require`".into()));
                    diagnostics.push(d);
                }
            }
            let members = self.shrink(&[fire], &core);
            let members: Vec<Member> = members.iter().filter_map(|l| self.member_of(*l)).collect();
            let approximate = !report.approximate.is_empty() || !report.pooled.is_empty();
            report.status = if approximate { Status::NotShown(members) } else { Status::Dead(members) };
            return report;
        }
        // The relaxed model is the failing document as it is: the atoms are
        // tried false first, so it is small already. Smallest-model rounds
        // here cost about 13 calls a rule and left as many atoms true as
        // before them, or more (BENCHMARKS.md, "fewer solver calls").
        report.fires_with = self
            .units
            .iter()
            .enumerate()
            .filter(|(i, x)| *i != u && x.member.kind == MemberKind::Rule && self.b.value(x.bad))
            .map(|(_, x)| x.member.id.clone())
            .collect();
        let fail_drawn = self.drawn();
        let fail_docs: Vec<DocText> = fail_drawn.iter().map(|d| d.text(false)).collect();
        let want = if is_rule { violation_outcome(self.policy, &report.id) } else { Outcome::Fail };
        let findings = self.check(&fail_docs);
        if !findings.iter().any(|f| f.rule == report.id && f.outcome == want) {
            report.status = Status::Unconfirmed(format!(
                "the checker does not give `{}` {} on the document the solver found: {}",
                report.id,
                want.as_str(),
                describe(&findings, &report.id)
            ));
            return report;
        }
        let fail_values: Vec<bool> = self.model.atoms.iter().map(|a| self.b.value(B::L(*a))).collect();
        let bad_before: Vec<bool> = self.units.iter().map(|x| self.b.value(x.bad)).collect();
        report.fixture = self.twin(u, &bounds, &fail_values, &bad_before, fail_drawn, want);
        report
    }

    /// The passing twin of a failing deployment: the rule applies and passes,
    /// and as few document atoms as possible differ. When the pair is more
    /// than one line apart, or the checker does not confirm it (a rule the
    /// encoding approximates), one more round from the twin's side: the
    /// failing deployment closest to the twin, and the twin closest to that;
    /// the closer confirmed pair is kept.
    fn twin(
        &mut self,
        u: usize,
        bounds: &[B],
        fail_values: &[bool],
        bad_before: &[bool],
        fail: Vec<Drawn>,
        want: Outcome,
    ) -> Option<Fixture> {
        // The rules that held in the failing twin keep holding, if they can.
        let keep: Vec<B> = self
            .units
            .iter()
            .enumerate()
            .filter(|(i, x)| *i != u && x.member.kind == MemberKind::Rule && !bad_before[*i])
            .map(|(_, x)| B::L(x.gate))
            .collect();
        let mut passing = vec![self.units[u].pass];
        passing.extend(bounds.iter().copied());
        let distance = self.closest(&passing, &keep, fail_values)?;
        let mut best = self.pair(u, fail, self.drawn(), distance, want);
        if best.problem.is_some() || pair_lines(&best) > 1 {
            let pass_values: Vec<bool> = self.model.atoms.iter().map(|a| self.b.value(B::L(*a))).collect();
            let mut firing = vec![self.units[u].fire];
            firing.extend(bounds.iter().copied());
            if self.closest(&firing, &keep, &pass_values).is_some() {
                let fail_values: Vec<bool> = self.model.atoms.iter().map(|a| self.b.value(B::L(*a))).collect();
                let fail = self.drawn();
                if let Some(distance) = self.closest(&passing, &keep, &fail_values) {
                    let other = self.pair(u, fail, self.drawn(), distance, want);
                    if other.problem.is_none() && (best.problem.is_some() || pair_lines(&other) < pair_lines(&best)) {
                        best = other;
                    }
                }
            }
        }
        Some(best)
    }

    /// Leaves in the solver a model of `hard` (and of as many of `keep` as
    /// can hold) with as few document atoms as possible different from
    /// `target`; how many differ.
    fn closest(&mut self, hard: &[B], keep: &[B], target: &[bool]) -> Option<usize> {
        let mut soft = keep.to_vec();
        // Keep what the target has; everything else the solver leaves out unless needed.
        let same: Vec<B> = self.model.atoms.iter().zip(target).filter(|(_, v)| **v).map(|(a, _)| B::L(*a)).collect();
        soft.extend(same.iter().copied());
        self.relax(hard, &mut soft).ok()?;
        let kept: BTreeSet<B> = soft.iter().copied().collect();
        let mut changed: Vec<Lit> = same
            .iter()
            .filter(|s| !kept.contains(s))
            .filter_map(|s| if let B::L(l) = s { Some(!*l) } else { None })
            .collect();
        for (a, v) in self.model.atoms.iter().zip(target) {
            if !*v && self.b.value(B::L(*a)) {
                changed.push(*a);
            }
        }
        let differs = |b: &Builder| changed.iter().filter(|d| b.value(B::L(**d))).count();
        let mut best = differs(&self.b);
        // Cardinality over the atoms that changed: the least bound that holds,
        // found by halving the interval between a bound known to fail (below
        // `lo`) and one known to hold (`best`); the last model is kept when it
        // is the answer's.
        if best > 1 {
            let limits = self.b.at_most(&changed, best);
            let mut assume = hard.to_vec();
            assume.extend(soft.iter().copied());
            let mut lo = 1;
            let mut held = true;
            while lo < best {
                let mid = (lo + best) / 2;
                let mut trial = assume.clone();
                trial.push(limits[mid]);
                held = self.b.solve(&trial) == Answer::Sat;
                if held {
                    best = differs(&self.b).min(mid);
                } else {
                    lo = mid + 1;
                }
            }
            if !held {
                let mut trial = assume;
                trial.push(limits[best]);
                if self.b.solve(&trial) != Answer::Sat {
                    return None;
                }
            }
        }
        Some(self.model.atoms.iter().zip(target).filter(|(a, v)| self.b.value(B::L(**a)) != **v).count())
    }

    /// A fixture pair as files, written together so that the twins are as few
    /// lines apart as their difference allows, and what the checker says of it.
    fn pair(&self, u: usize, fail: Vec<Drawn>, pass: Vec<Drawn>, distance: usize, want: Outcome) -> Fixture {
        let (fail, pass) = twins(&fail, &pass);
        let id = &self.units[u].member.id;
        let fail_findings = self.check(&fail);
        let pass_findings = self.check(&pass);
        let mine: Vec<&Finding> = own(self.policy, id, &pass_findings);
        let passes = mine.iter().any(|f| f.outcome == Outcome::Pass)
            && !mine.iter().any(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown));
        let problem = if !fail_findings.iter().any(|f| f.rule == *id && f.outcome == want) {
            Some(format!(
                "the checker does not give `{id}` {} on the failing twin as written: {}",
                want.as_str(),
                describe(&fail_findings, id)
            ))
        } else if !passes {
            Some(format!("the checker does not pass `{id}` on the twin: {}", describe(&pass_findings, id)))
        } else {
            None
        };
        let attached = (self.attached_paths(&fail), self.attached_paths(&pass));
        Fixture { fail, pass, attached, distance, problem }
    }
}

type Loaded = Option<Result<document::Node, document::SyntaxError>>;

/// The documents read as the checker reads them (a Markdown record is read by the checker itself).
fn load(docs: &[DocText]) -> Vec<Loaded> {
    docs.iter()
        .map(|d| (!check::is_markdown(&d.path)).then(|| document::load(&d.text, Format::Yaml, &Limits::default())))
        .collect()
}

fn inputs<'a>(docs: &'a [DocText], loaded: &'a [Loaded]) -> Vec<Input<'a>> {
    docs.iter()
        .zip(loaded)
        .map(|(d, l)| Input {
            path: &d.path,
            text: &d.text,
            loaded: l.as_ref(),
            given: d.given.as_deref(),
            markdown: false,
        })
        .collect()
}

impl Fixture {
    /// How many lines apart the twins are, as `grail test` counts them (a
    /// file in one twin only counts every line; so does a `layers.bind` line).
    pub fn lines_apart(&self) -> usize {
        pair_lines(self)
    }
}

fn pair_lines(f: &Fixture) -> usize {
    let files = |docs: &[DocText], attached: &[String]| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = docs.iter().map(|d| (d.path.clone(), d.text.clone())).collect();
        out.extend(attached.iter().map(|p| (p.clone(), ATTACHED.to_string())));
        let bound: String = docs.iter().filter_map(|d| Some(format!("{}={}\n", d.layer.as_ref()?, d.path))).collect();
        out.push((crate::testing::LAYERS_FILE.to_string(), bound));
        out
    };
    let (a, b) = (files(&f.fail, &f.attached.0), files(&f.pass, &f.attached.1));
    let mut names: BTreeSet<&str> = a.iter().map(|(p, _)| p.as_str()).collect();
    names.extend(b.iter().map(|(p, _)| p.as_str()));
    let text =
        |xs: &[(String, String)], n: &str| xs.iter().find(|(p, _)| p == n).map(|(_, t)| t.clone()).unwrap_or_default();
    names.iter().map(|n| crate::testing::differing_lines(&text(&a, n), &text(&b, n))).sum()
}

/// The text the analysis gives a file a document names by `ref`.
pub const ATTACHED: &str = "{}";

/// A document of a model: its file name, what it says, the Markdown marker
/// it is written under (if it is a Markdown kind), its layer.
struct Drawn {
    path: String,
    tree: model::Out,
    marker: Option<String>,
    layer: Option<String>,
    given: Option<String>,
}

impl Drawn {
    /// The file; a Markdown record's JSON on one line when `compact`.
    fn text(&self, compact: bool) -> DocText {
        let text = match &self.marker {
            Some(marker) => {
                let json = model::json(&self.tree);
                let json = if compact { serde_json::to_string(&json) } else { serde_json::to_string_pretty(&json) };
                format!("{marker}\n```json\n{}\n```\n", json.unwrap_or_default())
            }
            None => model::yaml(&self.tree),
        };
        DocText { path: self.path.clone(), text, layer: self.layer.clone(), given: self.given.clone() }
    }
}

/// The two deployments of a fixture pair as files, each document of one
/// written together with its namesake in the other (see `model::yaml_twins`).
fn twins(fail: &[Drawn], pass: &[Drawn]) -> (Vec<DocText>, Vec<DocText>) {
    let mut a: Vec<DocText> = fail.iter().map(|d| d.text(false)).collect();
    let mut b: Vec<DocText> = pass.iter().map(|d| d.text(false)).collect();
    // Twins that differ in more than one file cannot be one line apart: they stay as readable as they are.
    let same = |x: &DocText, ys: &[DocText]| ys.iter().any(|y| y.path == x.path && y.text == x.text);
    let differing =
        a.iter().filter(|x| !same(x, &b)).count() + b.iter().filter(|y| !a.iter().any(|x| x.path == y.path)).count();
    if differing > 1 {
        return (a, b);
    }
    for (i, f) in fail.iter().enumerate() {
        let Some(j) = pass.iter().position(|p| p.path == f.path) else { continue };
        let p = &pass[j];
        if crate::testing::differing_lines(&a[i].text, &b[j].text) <= 1 {
            continue;
        }
        match f.marker {
            Some(_) => (a[i], b[j]) = (f.text(true), p.text(true)),
            None => (a[i].text, b[j].text) = model::yaml_twins(&f.tree, &p.tree),
        }
    }
    (a, b)
}

fn describe(findings: &[Finding], rule: &str) -> String {
    let mine: Vec<String> = findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| {
            let m = if f.message.is_empty() { String::new() } else { format!(": {}", f.message) };
            format!("{} {}{m}", f.outcome.as_str(), f.subject)
        })
        .collect();
    if mine.is_empty() { "no outcome at all".into() } else { mine.join("; ") }
}

/// A sample on which the encoding and the checker disagree about a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub rule: String,
    /// What the symbolic evaluation says of the sample (`bad`, `fires`, `passes`: true or false).
    pub encoded: String,
    /// What `check::check` gives for the rule on the decoded documents.
    pub checked: String,
    pub documents: Vec<DocText>,
}

/// The symbolic evaluation (`symbolic.rs`) against the checker (`eval.rs`)
/// on random documents within the bounds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Differential {
    /// Samples drawn, and those compared (a sample whose documents do not decode is not).
    pub samples: usize,
    pub compared: usize,
    /// The rules and schema checks the encoding states exactly: compared on every sample.
    pub exact: Vec<String>,
    /// Rules left out, with the constructs the encoding over-approximates.
    pub left_out: Vec<(String, Vec<String>)>,
    /// Per compared id: samples on which the checker gave FAIL or UNKNOWN, and PASS.
    pub bad: BTreeMap<String, usize>,
    pub passed: BTreeMap<String, usize>,
    pub disagreements: Vec<Disagreement>,
    /// Solver calls made.
    pub solves: usize,
}

/// Draws `samples` random deployments within `bounds` (each document atom
/// assumed true, false or left free at random, the assumptions the schema
/// refuses dropped), decodes each into files and checks them with the real
/// checker, and compares, rule by rule, what the encoding says of that very
/// assignment: FAIL or UNKNOWN somewhere (`bad`), the declared violation
/// (`fires`), a PASS somewhere (`passes`). Types hold in every sample (the
/// analysis assumes them too); floors, ceilings and rules are free.
/// The findings of the rule `id` itself: a structural check that names the
/// same id (a field's `invalid rule ID`) reports the document's text, which
/// the encoding does not state.
fn own<'f>(policy: &Policy, id: &str, findings: &'f [Finding]) -> Vec<&'f Finding> {
    let loc = policy.rules.iter().find(|r| r.id == id).map(|r| r.loc);
    findings.iter().filter(|f| f.rule == id && (loc.is_none() || f.policy == loc)).collect()
}

pub fn differential(policy: &Policy, bounds: Bounds, seed: u64, samples: usize) -> Differential {
    let mut s = Search::new(policy, bounds);
    let mut out = Differential { samples, ..Differential::default() };
    // The ids compared: every unit of an id encoded exactly.
    let mut ids: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (u, unit) in s.units.iter().enumerate() {
        ids.entry(unit.member.id.clone()).or_default().push(u);
    }
    ids.retain(|id, us| {
        let approximate: Vec<String> = us
            .iter()
            .filter_map(|u| s.units[*u].sym.as_ref())
            .flat_map(|sym| sym.approximate.iter().cloned())
            .collect();
        if approximate.is_empty() {
            return true;
        }
        out.left_out.push((id.clone(), approximate));
        false
    });
    out.exact = ids.keys().cloned().collect();
    let types: Vec<B> = s.types.iter().map(|(_, l)| B::L(*l)).collect();
    let mut rng = seed;
    for _ in 0..samples {
        let mut soft: Vec<B> = Vec::new();
        for d in &s.model.docs {
            // Each kind there in about half the samples, drawn part by part.
            if splitmix(&mut rng).is_multiple_of(2) {
                soft.push(d.present.negate());
            } else {
                draw(&d.node, &mut rng, &mut soft);
            }
        }
        if s.relax(&types, &mut soft).is_err() {
            break; // the types alone admit no deployment: nothing to draw
        }
        let present = s.model.docs.iter().filter(|d| s.b.value(d.present)).count();
        let documents = s.documents();
        if documents.len() != present {
            continue;
        }
        out.compared += 1;
        let findings = s.check(&documents);
        for (id, us) in &ids {
            let mine: Vec<&Finding> = own(s.policy, id, &findings);
            let checked_bad = mine.iter().any(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown));
            let checked_pass = mine.iter().any(|f| f.outcome == Outcome::Pass);
            *out.bad.entry(id.clone()).or_default() += usize::from(checked_bad);
            *out.passed.entry(id.clone()).or_default() += usize::from(checked_pass);
            let encoded_bad = us.iter().any(|u| s.b.value(s.units[*u].bad));
            let mut wrong: Vec<(&str, bool, bool)> = vec![("bad", encoded_bad, checked_bad)];
            if let [u] = us.as_slice()
                && let Some(sym) = &s.units[*u].sym
            {
                // The declared violation is seen in the outcome only when it is
                // FAIL: an `else unknown` rule is UNKNOWN as well when its
                // requirement cannot be established, which `bad` compares.
                if violation_outcome(policy, id) == Outcome::Fail {
                    wrong.push(("fires", s.b.value(sym.fire), mine.iter().any(|f| f.outcome == Outcome::Fail)));
                }
                wrong.push(("passes", s.b.value(sym.pass), checked_pass));
            }
            wrong.retain(|(_, e, c)| e != c);
            if wrong.is_empty() {
                continue;
            }
            let say = |pick: fn(&(&str, bool, bool)) -> bool| {
                wrong.iter().map(|w| format!("{} {}", w.0, pick(w))).collect::<Vec<_>>().join(", ")
            };
            out.disagreements.push(Disagreement {
                rule: id.clone(),
                encoded: say(|w| w.1),
                checked: format!("{} ({})", say(|w| w.2), describe(&findings, id)),
                documents: documents.clone(),
            });
        }
    }
    out.solves = s.b.solves;
    out
}

/// A random document of the shape of `node`, as assumptions: each optional
/// part there or not, each list and map of a random length within its bound,
/// each scalar one of its values. What the schema refuses (a required part
/// left out, two equal keys) is dropped by `relax`.
fn draw(node: &Node, rng: &mut u64, out: &mut Vec<B>) {
    let there = |present: B, rng: &mut u64, out: &mut Vec<B>| {
        let on = !splitmix(rng).is_multiple_of(4);
        out.push(if on { present } else { present.negate() });
        on
    };
    match node {
        Node::Scalar { present, alts } => {
            if alts.is_empty() || !there(*present, rng, out) {
                return;
            }
            let pick = (splitmix(rng) % alts.len() as u64) as usize;
            out.push(alts[pick].1);
        }
        Node::Record { present, fields } => {
            if there(*present, rng, out) {
                for (_, f) in fields {
                    draw(f, rng, out);
                }
            }
        }
        Node::List { present, entries } => {
            if !there(*present, rng, out) {
                return;
            }
            let n = (splitmix(rng) % (entries.len() as u64 + 1)) as usize;
            for (i, e) in entries.iter().enumerate() {
                if i < n {
                    draw(e, rng, out);
                } else {
                    out.push(presence(e).negate());
                    break;
                }
            }
        }
        Node::Map { present, entries } => {
            if !there(*present, rng, out) {
                return;
            }
            for (k, v) in entries {
                draw(k, rng, out);
                draw(v, rng, out);
            }
        }
    }
}

fn presence(node: &Node) -> B {
    match node {
        Node::Scalar { present, .. }
        | Node::Record { present, .. }
        | Node::List { present, .. }
        | Node::Map { present, .. } => *present,
    }
}

/// SplitMix64: a small, seeded, reproducible stream.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_deal_every_unit_once_and_weigh_the_witnesses() {
        for (units, subjects) in [(0, 0), (1, 0), (5, 2), (20, 0), (213, 31), (213, 200)] {
            let shares = shares(units, subjects);
            assert_eq!(shares.len(), SEARCHES);
            let mut all: Vec<usize> = shares.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..units).collect::<Vec<_>>(), "{units} units: each asked once");
            // The first search keeps a prefix of its share by position, in order:
            // what it answers for them is what it answered before the shares were weighed.
            let by_position: Vec<usize> = (0..units).step_by(SEARCHES).collect();
            assert!(by_position.starts_with(&shares[0]), "{units} units");
            // The others ask their own share first, in order, then what the first gave up.
            for (k, share) in shares.iter().enumerate().skip(1) {
                let own: Vec<usize> = (k..units).step_by(SEARCHES).collect();
                assert!(share.starts_with(&own), "{units} units, search {k}");
            }
        }
        // Witnesses weigh: 213 units and 31 subjects at SUBJECT_WEIGHT each.
        let [first, second] = <[Vec<usize>; 2]>::try_from(shares(213, 31)).expect("two searches");
        let loads = (first.len() + 31 * SUBJECT_WEIGHT, second.len());
        assert!(loads.0.abs_diff(loads.1) <= 1, "{loads:?}");
        assert!(first.len() < second.len());
        // With no subject, the shares are by position alone.
        assert_eq!(shares(6, 0), vec![vec![0, 2, 4], vec![1, 3, 5]]);
    }
}
