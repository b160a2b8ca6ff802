//! Fixes of findings, computed from the policy, never from message text:
//!
//! - a value looser than its bound (`floor`, `ceiling`): set it to the bound,
//!   the matrix cell for its enclosing key;
//! - an unknown or forbidden key: remove its entry;
//! - a rule whose `require` fails because a value is not in a list the
//!   document declares (`n in x.conflicts`): add it to that
//!   list, for every element that fails, until the finding is gone (for a
//!   `some` that fails, for its first element).
//!
//! Every fix is checked before it is offered: the edited document is checked
//! again and the finding must be gone.

use grail_lang::ast::BoundKind;

use crate::check::{self, Input};
use crate::conform::select_kind;
use crate::db::{PolicySet, SourceText, compile_policy, document_format, load_document};
use crate::diagnostic::{Finding, Outcome};
use crate::document::{self, Format, Limits, Node, NodeKind};
use crate::eval::Evaluator;
use crate::hir::*;
use crate::ide::document::{Seg, node_at, path_to, walk};
use crate::ide::edit;
use crate::ide::{Fix, TextEdit, apply};
use crate::value::{Origin, Truth, Val, ValKind};

pub(super) fn fixes(db: &dyn salsa::Database, set: PolicySet, doc: SourceText, finding: &Finding) -> Vec<Fix> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() || !matches!(finding.outcome, Outcome::Fail | Outcome::Unknown) {
        return Vec::new();
    }
    let policy = &compiled.policy;
    let Ok(root) = load_document(db, doc) else { return Vec::new() };
    let text = doc.text(db);
    let format = document_format(doc.path(db), text);
    let path = doc.path(db);
    let cx = Cx { policy, root, text, format, path };
    let candidates = [cx.bound(finding), cx.remove_key(finding), cx.add_member(finding)];
    candidates.into_iter().flatten().filter(|f| cx.fixes(finding, f)).collect()
}

struct Cx<'a> {
    policy: &'a Policy,
    root: &'a Node,
    text: &'a str,
    format: Format,
    path: &'a str,
}

/// Whether a finding is still reported: the same rule and subject, not passing.
fn still_there(findings: &[Finding], finding: &Finding) -> Option<Finding> {
    findings
        .iter()
        .find(|f| {
            f.rule == finding.rule
                && f.subject == finding.subject
                && matches!(f.outcome, Outcome::Fail | Outcome::Unknown)
        })
        .cloned()
}

/// Checks a text as the document `path`, on its own.
fn recheck(policy: &Policy, path: &str, text: &str, format: Format) -> Vec<Finding> {
    let loaded = document::load(text, format, &Limits::default());
    check::check(policy, &[Input { path, text, loaded: Some(&loaded), given: None, markdown: false }], &[])
}

impl Cx<'_> {
    fn fixes(&self, finding: &Finding, fix: &Fix) -> bool {
        let edited = apply(self.text, &fix.edits);
        still_there(&recheck(self.policy, self.path, &edited, self.format), finding).is_none()
    }

    fn kind(&self) -> Option<DocKindId> {
        select_kind(self.policy, 0, self.root).ok()
    }

    /// A bound finding points at the value: set it to the bound.
    fn bound(&self, finding: &Finding) -> Option<Fix> {
        let (_, span) = finding.location?;
        let path = path_to(self.root, span)?;
        let place = walk(self.policy, self.kind()?, &path);
        let (r, i) = place.field?;
        let field = &self.policy.records[r as usize].fields[i];
        let b = field.bounds.iter().find(|b| b.rule == finding.rule)?;
        let (value, _) = super::document::cell(self.policy, &place.keys, b.matrix, b.column)?;
        let node = node_at(self.root, &path)?;
        let new = edit::scalar_text(&scalar(self.policy, &value.kind)?, self.format);
        let word = match b.kind {
            BoundKind::Floor => "floor",
            BoundKind::Ceiling => "ceiling",
        };
        Some(Fix {
            title: format!("set `{}` to its {word} `{}`", place.path, value.display(self.policy)),
            edits: vec![edit::replace(node, new)],
        })
    }

    /// The rule ids that report unknown and forbidden keys.
    fn is_key_rule(&self, rule: &str) -> bool {
        let p = self.policy;
        let check = |c: &Option<CheckDef>| c.as_ref().is_some_and(|c| c.rule == rule);
        p.documents.iter().any(|d| check(&d.checks[CHECK_UNKNOWN_KEY]) || d.forbids.iter().any(|f| f.rule == rule))
            || p.records.iter().any(|r| check(&r.checks[CHECK_UNKNOWN_KEY]))
    }

    /// An unknown or forbidden key: remove its entry.
    fn remove_key(&self, finding: &Finding) -> Option<Fix> {
        if !self.is_key_rule(&finding.rule) {
            return None;
        }
        let (_, span) = finding.location?;
        let path = path_to(self.root, span)?;
        // A finding at the document's root (an empty path) has no entry to remove.
        let (Some(Seg::Key(key)), parent) = (path.last(), &path[..path.len().checked_sub(1)?]) else { return None };
        let map = node_at(self.root, parent)?;
        let NodeKind::Map(entries) = &map.kind else { return None };
        let index = entries.iter().position(|e| e.key_span == span)?;
        Some(Fix { title: format!("remove `{key}`"), edits: vec![edit::remove_entry(self.text, map, index)?] })
    }

    /// Adds the missing members a failing `require` names, one witness at a time.
    fn add_member(&self, finding: &Finding) -> Option<Fix> {
        let rule = self.policy.rules.iter().find(|r| r.id == finding.rule)?;
        let mut text = self.text.to_string();
        let mut target = finding.clone();
        let mut added: Vec<(String, String, String)> = Vec::new();
        for _ in 0..16 {
            let root = document::load(&text, self.format, &Limits::default()).ok()?;
            let step = Cx { policy: self.policy, root: &root, text: &text, format: self.format, path: self.path };
            let (edit, what) = step.member_edit(rule, &target)?;
            text = apply(&text, &[edit]);
            added.push(what);
            match still_there(&recheck(self.policy, self.path, &text, self.format), &target) {
                None => break,
                Some(next) => target = next,
            }
        }
        let (_, field, owner) = added.first()?.clone();
        let members: Vec<String> = added.iter().map(|(m, ..)| format!("`{m}`")).collect();
        let title = format!("add {} to `{field}` of `{owner}`", members.join(", "));
        Some(Fix { title, edits: vec![diff(self.text, &text)] })
    }

    /// The edit that adds one missing member, and (member, field, owner) for the title.
    fn member_edit(&self, rule: &RuleDef, target: &Finding) -> Option<(TextEdit, (String, String, String))> {
        let loaded = Ok(self.root.clone());
        let run = check::run(
            self.policy,
            &[Input { path: self.path, text: self.text, loaded: Some(&loaded), given: None, markdown: false }],
            &[],
            &[],
            false,
            None,
        );
        let judged = *rule.reads.first()?;
        let root_span = run.single.get(judged as usize)?.as_ref()?.origin.document_span();
        let mut ev = Evaluator {
            policy: self.policy,
            single: &run.single,
            all: &run.all,
            layers: &run.layers,
            prior: &run.findings,
            env: vec![Val::unknown(); rule.slots as usize],
            reads: None,
            fuel: crate::eval::MAX_STEPS_PER_RULE,
            exhausted: false,
            now: None,
            now_read: false,
            given: &run.given,
            params: &run.params,
            calls: None,
        };
        let mut search = Search { rule, target, bound: Vec::new(), root_span, found: None };
        search.clauses(&mut ev, 0);
        let m = search.found?;
        let record = &self.policy.records[m.record as usize];
        let field = &record.fields[m.field];
        let (_, span) = m.owner.origin.document_span()?;
        let owner_path = path_to(self.root, span)?;
        let owner = node_at(self.root, &owner_path)?;
        let NodeKind::Map(entries) = &owner.kind else { return None };
        let item = edit::scalar_text(&m.member.kind, self.format);
        let edit = match entries.iter().find(|e| e.key == field.name) {
            Some(e) if matches!(e.value.kind, NodeKind::List(_)) => edit::append_to_list(self.text, &e.value, &item)?,
            Some(_) => return None,
            None => edit::insert_entry(self.text, owner, &field.name, &format!("[{item}]"), self.format)?,
        };
        let owner_name = m.owner.label(self.policy).unwrap_or_else(|| record.name.clone());
        Some((edit, (m.member.display(self.policy), field.name.clone(), owner_name)))
    }
}

/// A matrix cell as a scalar to write.
fn scalar(policy: &Policy, v: &ValKind) -> Option<ValKind> {
    Some(match v {
        ValKind::Enum(e, x) => ValKind::Str(policy.variant_name(*e, *x).into()),
        ValKind::Int(_) | ValKind::Bool(_) | ValKind::Str(_) | ValKind::Id(_) => v.clone(),
        _ => return None,
    })
}

/// One edit turning `old` into `new`: the span between their common prefix and suffix.
fn diff(old: &str, new: &str) -> TextEdit {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let mut prefix = prefix;
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old.bytes().rev().zip(new.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    TextEdit {
        span: grail_lang::ast::Span::new(prefix, old.len() - suffix),
        text: new[prefix..new.len() - suffix].to_string(),
    }
}

/// A member missing from a list field of a record the document declares.
struct Member {
    member: Val,
    owner: Val,
    record: RecordId,
    field: usize,
}

/// Walks a rule's subjects as evaluation does, to the one `target` reports.
struct Search<'r> {
    rule: &'r RuleDef,
    target: &'r Finding,
    /// Where each value bound by a `for` is, outermost first.
    bound: Vec<Option<(u32, grail_lang::ast::Span)>>,
    root_span: Option<(u32, grail_lang::ast::Span)>,
    found: Option<Member>,
}

impl Search<'_> {
    fn clauses(&mut self, ev: &mut Evaluator<'_>, i: usize) {
        if self.found.is_some() {
            return;
        }
        let Some(clause) = self.rule.clauses.get(i) else { return };
        match clause {
            ClauseDef::For { pattern, domain, filter, .. } => {
                let d = ev.eval(domain);
                let Some(elements) = ev.elements_of(&d, pattern) else { return };
                for values in elements {
                    ev.bind_pattern(pattern, values.clone());
                    if let Some(f) = filter
                        && ev.eval(f).as_truth() != Truth::True
                    {
                        continue;
                    }
                    self.bound.push(values.last().and_then(|v| v.origin.document_span()));
                    ev.bind_pattern(pattern, values);
                    self.clauses(ev, i + 1);
                    self.bound.pop();
                }
            }
            ClauseDef::Let { slot, value, .. } => {
                let v = ev.eval(value);
                ev.env[*slot as usize] = v;
                self.clauses(ev, i + 1);
            }
            ClauseDef::When { guard, .. } => {
                if ev.eval(guard).as_truth() == Truth::True {
                    self.clauses(ev, i + 1);
                }
            }
            ClauseDef::Require { check, message, .. } => {
                if ev.eval(check).as_truth() != Truth::False {
                    return;
                }
                // As evaluation places a finding.
                let location = crate::eval::finding_location(ev, self.rule, &self.bound, self.root_span);
                let mut rendered = String::new();
                for part in &message.parts {
                    match part {
                        TemplatePart::Text(s) => rendered.push_str(s),
                        TemplatePart::Hole(e) => rendered.push_str(&ev.eval(e).display(ev.policy)),
                    }
                }
                if location == self.target.location && rendered == self.target.message {
                    ev.eval(check);
                    self.found = missing_member(ev, check);
                }
            }
        }
    }
}

/// In a false condition, a membership `x in r.f` whose list `f` belongs to a
/// record of the document: adding `x` makes that part true.
fn missing_member(ev: &mut Evaluator<'_>, e: &Expr) -> Option<Member> {
    match &e.kind {
        ExprKind::And(a, b) => {
            if ev.eval(a).as_truth() == Truth::False {
                missing_member(ev, a)
            } else {
                missing_member(ev, b)
            }
        }
        ExprKind::Or(a, b) => missing_member(ev, a).or_else(|| missing_member(ev, b)),
        ExprKind::Quant { every: true, .. } => {
            // A failed `every` leaves the element that failed it bound.
            if ev.eval(e).as_truth() != Truth::False {
                return None;
            }
            let ExprKind::Quant { body, .. } = &e.kind else { return None };
            missing_member(ev, body)
        }
        ExprKind::Quant { every: false, pattern, domain, body } => {
            // A false `some` failed its body for every element: making the
            // first one hold is enough.
            let d = ev.eval(domain);
            let first = ev.elements_of(&d, pattern)?.into_iter().next()?;
            ev.bind_pattern(pattern, first);
            missing_member(ev, body)
        }
        ExprKind::Let { slot, value, body } => {
            let v = ev.eval(value);
            *ev.env.get_mut(*slot as usize)? = v;
            missing_member(ev, body)
        }
        ExprKind::In(x, list) => {
            let ExprKind::Field(base, field) = &list.kind else { return None };
            let owner = ev.eval(base);
            let ValKind::Record(record, _) = owner.kind else { return None };
            if !matches!(owner.origin, Origin::Document { .. }) {
                return None;
            }
            let member = ev.eval(x);
            if !matches!(
                member.kind,
                ValKind::Str(_) | ValKind::Id(_) | ValKind::Int(_) | ValKind::Bool(_) | ValKind::Enum(..)
            ) {
                return None;
            }
            let member = match member.kind {
                ValKind::Enum(en, v) => Val::computed(ValKind::Str(ev.policy.variant_name(en, v).into())),
                _ => member,
            };
            Some(Member { member, owner, record, field: *field })
        }
        _ => None,
    }
}

/// Whether two edits touch: they overlap, or one ends where the other starts
/// (two insertions at one place, or an insertion beside a replacement, have no
/// order that both fixes meant).
fn touch(a: &TextEdit, b: &TextEdit) -> bool {
    a.span.start <= b.span.end && b.span.start <= a.span.end
}

/// Every fix of a document at once: for each failing or unknown finding, its
/// first fix, unless an edit of it touches one already taken, or, applied
/// with those taken, it leaves one of their findings (or its own) reported.
/// `None` when nothing can be fixed.
pub(super) fn fix_all(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Option<(Fix, Vec<Finding>)> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    let text = doc.text(db);
    let format = document_format(doc.path(db), text);
    let path = doc.path(db);
    let mut edits: Vec<TextEdit> = Vec::new();
    let mut fixed: Vec<Finding> = Vec::new();
    for finding in crate::db::check_document(db, set, doc) {
        if finding.location.is_none() || !matches!(finding.outcome, Outcome::Fail | Outcome::Unknown) {
            continue;
        }
        let Some(fix) = fixes(db, set, doc, finding).into_iter().next() else { continue };
        if fix.edits.iter().all(|e| edits.contains(e)) {
            // The same edit fixes an earlier finding too.
            fixed.push(finding.clone());
            continue;
        }
        if fix.edits.iter().any(|e| edits.iter().any(|taken| touch(e, taken))) {
            continue;
        }
        let mut tried = edits.clone();
        tried.extend(fix.edits.iter().cloned());
        let after = recheck(&compiled.policy, path, &apply(text, &tried), format);
        if fixed.iter().chain([finding]).all(|f| still_there(&after, f).is_none()) {
            edits = tried;
            fixed.push(finding.clone());
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|e| e.span.start);
    let n = fixed.len();
    let title = format!("fix {n} finding{}", if n == 1 { "" } else { "s" });
    Some((Fix { title, edits }, fixed))
}
