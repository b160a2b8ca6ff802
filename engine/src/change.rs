//! Tighten-only over time (`grail check --base OLD NEW`): a new version of a
//! document compared with its previous one, field by field, in the
//! directions the policy declares. An ordered value (a `tightest_first`
//! enumeration, an int or bool with a floor or ceiling) may only tighten; a
//! list or map declared `grows tighter` may only gain entries (matched by
//! identity) and `shrinks tighter` only lose them; anything else that changes
//! has no declared direction and is the kind's `change` finding too (fail
//! closed: the policy must say). Files a document names (`ref`) are evidence,
//! not settings, and are not compared.

use std::sync::Arc;

use grail_lang::ast::{Growth, Span};

use crate::check::{Input, parse};
use crate::conform::{Env, conform, direction, join, tight_enough};
use crate::diagnostic::{Finding, Outcome};
use crate::document::{Node, NodeKind};
use crate::hir::*;
use crate::value::{Origin, Val, ValKind};

/// The index the previous version's values carry as their document: it is
/// never one of the deployment's documents.
const OLD: u32 = u32::MAX - 1;

/// The findings of comparing `new` (input `new_index` of the deployment)
/// with its previous version `old`: the kind's `change` rule FAILs where the
/// new version loosens or removes, and PASSes once when it does not. The
/// previous version is read as strictly as the new one: one that cannot be
/// read as a document of the new one's kind (see [`unreadable`]) is one FAIL
/// saying why, and each structural finding of its own (a value not of its
/// type, an unknown or duplicate key) is a FAIL naming it as the previous
/// version's, so a value the old file does not hold validly never compares
/// as if it were absent. Empty when `new` cannot be read (its own findings
/// say why) or its kind declares no `change` rule (the caller says so
/// before checking).
pub fn compare(policy: &Policy, new: &Input<'_>, new_index: usize, old: &Input<'_>) -> Vec<Finding> {
    let Ok(Some((kind, new_node))) = parse(policy, new_index as u32, new) else {
        return Vec::new();
    };
    let Some(rule) = change_rule(policy, kind) else { return Vec::new() };
    let at = Some((new_index as u32, Span::new(0, 0)));
    let finding = |outcome: Outcome, subject: String, message: String| Finding {
        rule: rule.rule.clone(),
        outcome,
        subject,
        message,
        location: at,
        policy: Some(rule.loc),
        labels: Vec::new(),
        bound: Vec::new(),
        trace: Vec::new(),
        place: crate::diagnostic::Place::default(),
    };
    let old_node = match previous(policy, kind, old) {
        Ok(node) => node,
        Err(why) => return vec![finding(Outcome::Fail, new.path.to_string(), why)],
    };
    let none = Checks::default();
    let never = |_: &str| crate::conform::Resolved::Refused("not compared".into());
    let env = Env { overrides: &none, resolve: &never, partial: false };
    let (new_root, _) = conform(policy, kind, new_index as u32, &new_node, &env);
    let (old_root, old_findings) = conform(policy, kind, OLD, &old_node, &env);
    let record = policy.documents[kind as usize].record;
    let mut v = Versions { policy, rule, old, findings: Vec::new() };
    for f in old_findings.iter().filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown)) {
        let span = f.location.map_or(Span::new(0, 0), |(_, s)| s);
        let message = format!(
            "the previous version does not conform, so it cannot show what the new version may not loosen: {}: {} (`{}` of the previous version)",
            located(old, span),
            f.message,
            f.rule,
        );
        let mut base = finding(Outcome::Fail, format!("previous version: {}", f.subject), message);
        // At the same key of the new version, or the nearest one it has.
        base.location = Some((new_index as u32, nearest(&new_node, &f.subject)));
        v.findings.push(base);
    }
    v.walk(&old_root, &new_root, &Ty::Record(record), None, "", at);
    if v.findings.is_empty() {
        v.findings.push(finding(Outcome::Pass, new.path.to_string(), String::new()));
    }
    v.findings
}

/// Why `old` cannot be compared with `new` as its previous version, located
/// in `old` (`old.yaml:3:1: ...`): it is empty, not JSON or YAML, not a
/// mapping, of no kind the policy declares, or of another kind than `new`.
/// `None` when it can be read (its structural findings, if any, are
/// [`compare`]'s), or when `new` itself cannot be.
pub fn unreadable(policy: &Policy, new: &Input<'_>, old: &Input<'_>) -> Option<String> {
    let Ok(Some((kind, _))) = parse(policy, u32::MAX, new) else { return None };
    previous(policy, kind, old).err()
}

/// The previous version's tree, when it is a document of `kind`.
fn previous<'a>(policy: &Policy, kind: DocKindId, old: &Input<'a>) -> Result<std::borrow::Cow<'a, Node>, String> {
    let empty = old.text.trim().is_empty() || matches!(old.loaded, Some(Ok(n)) if n.kind == NodeKind::Null);
    if empty {
        return Err(format!(
            "{}: the previous version is empty: it holds no document to compare with",
            located(old, Span::new(0, 0))
        ));
    }
    let (old_kind, node) = match parse(policy, OLD, old) {
        Ok(Some(found)) => found,
        Ok(None) => {
            return Err(format!(
                "{}: the previous version is not a document this policy reads",
                located(old, Span::new(0, 0))
            ));
        }
        Err(f) => {
            let span = f.location.map_or(Span::new(0, 0), |(_, s)| s);
            return Err(format!("{}: the previous version cannot be read: {}", located(old, span), f.message));
        }
    };
    if old_kind != kind {
        let name = |k: DocKindId| policy.documents[k as usize].name.clone();
        return Err(format!(
            "{}: the previous version is a `{}`, and the new version a `{}`",
            located(old, Span::new(0, 0)),
            name(old_kind),
            name(kind)
        ));
    }
    Ok(node)
}

/// The span of the value at a key path (`a.b[2].c`) of a document, or of
/// the nearest key on the way that it has (the document itself at worst).
fn nearest(root: &Node, path: &str) -> Span {
    let mut node = root;
    for segment in path.split('.') {
        let (key, indexes) = segment.split_once('[').map_or((segment, ""), |(k, rest)| (k, rest));
        let mut next = match &node.kind {
            NodeKind::Map(entries) if !key.is_empty() => entries.iter().find(|e| e.key == key).map(|e| &e.value),
            _ if key.is_empty() => Some(node),
            _ => None,
        };
        for index in indexes.split('[').map(|i| i.trim_end_matches(']')).filter(|i| !i.is_empty()) {
            next = match (next.map(|n| &n.kind), index.parse::<usize>()) {
                (Some(NodeKind::List(items)), Ok(i)) => items.get(i),
                _ => None,
            };
        }
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    node.span
}

/// `old.yaml:3:5`: where a span of the previous version is, by line and column (1-based).
fn located(old: &Input<'_>, span: Span) -> String {
    let before = old.text.get(..span.start).unwrap_or(old.text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{}:{line}:{column}", old.path)
}

/// The rule a kind's `change` findings carry (`on change rule ID` in its layers).
pub fn change_rule(policy: &Policy, kind: DocKindId) -> Option<&CheckDef> {
    policy.layers.iter().find(|l| l.document == kind)?.checks[CHECK_CHANGE].as_ref()
}

struct Versions<'a> {
    policy: &'a Policy,
    rule: &'a CheckDef,
    old: &'a Input<'a>,
    findings: Vec<Finding>,
}

impl Versions<'_> {
    /// Where a value of the previous version was: `old.yaml:12`.
    fn was(&self, v: &Val) -> String {
        match &v.origin {
            Origin::Document { doc, span, .. } if *doc == OLD => {
                let line = self.old.text.get(..span.start).map_or(0, |t| t.matches('\n').count()) + 1;
                format!("{}:{line}", self.old.path)
            }
            Origin::Policy { .. } => "the policy's default".into(),
            _ => self.old.path.to_string(),
        }
    }

    fn loosen(&mut self, path: &str, at: Option<(u32, Span)>, message: String) {
        self.findings.push(Finding {
            rule: self.rule.rule.clone(),
            outcome: Outcome::Fail,
            subject: if path.is_empty() { "document".into() } else { path.to_string() },
            message,
            location: at,
            policy: Some(self.rule.loc),
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: crate::diagnostic::Place::default(),
        });
    }

    fn show(&self, v: &Val) -> String {
        v.display(self.policy)
    }

    fn walk(&mut self, old: &Val, new: &Val, ty: &Ty, field: Option<&FieldDef>, path: &str, near: Option<(u32, Span)>) {
        let here = new.origin.document_span().filter(|_| !new.is_absent()).or(near);
        match (old.is_absent(), new.is_absent()) {
            (true, true) => return,
            (false, true) => {
                let message =
                    format!("`{path}` was `{}` ({}) and the new version removes it", self.show(old), self.was(old));
                return self.loosen(path, here, message);
            }
            (true, false) => {
                // Something new where nothing was: a record is judged field by field; a list or
                // map that grows tighter and an ordered value have a direction to add in.
                let grows =
                    field.and_then(|f| f.growth) == Some(Growth::Grows) && matches!(ty, Ty::List(_) | Ty::Map(..));
                if matches!(ty, Ty::Record(_)) {
                    self.fields(old, new, ty, path, here);
                } else if !grows && direction(self.policy, ty, field).is_none() {
                    let message = format!(
                        "the new version adds `{path}` (`{}`), which has no declared direction: the policy does not say that adding it tightens",
                        self.show(new)
                    );
                    self.loosen(path, here, message);
                }
                return;
            }
            (false, false) => {}
        }
        match ty {
            Ty::Record(_) => self.fields(old, new, ty, path, here),
            Ty::Map(_, vt) => {
                let (ValKind::Map(oe), ValKind::Map(ne)) = (&old.kind, &new.kind) else { return };
                let growth = field.and_then(|f| f.growth);
                for (k, ov) in oe.iter() {
                    let key = join(path, &k.display(self.policy));
                    match ne.iter().find(|(nk, _)| nk.same(k) == Some(true)) {
                        Some((_, nv)) => self.walk(ov, nv, vt, field, &key, here),
                        None if growth == Some(Growth::Shrinks) => {}
                        None => {
                            let message = format!(
                                "`{key}` was `{}` ({}) and the new version removes it",
                                self.show(ov),
                                self.was(ov)
                            );
                            self.loosen(&key, here, message);
                        }
                    }
                }
                for (k, nv) in ne.iter() {
                    if oe.iter().any(|(ok, _)| ok.same(k) == Some(true)) || growth == Some(Growth::Grows) {
                        continue;
                    }
                    let key = join(path, &k.display(self.policy));
                    let at = k.origin.document_span().or(here);
                    let message = format!(
                        "the new version adds `{key}` (`{}`) to a map the policy does not declare `grows tighter`",
                        self.show(nv)
                    );
                    self.loosen(&key, at, message);
                }
            }
            Ty::List(elem) => {
                let (ValKind::List(oe), ValKind::List(ne)) = (&old.kind, &new.kind) else { return };
                match field.and_then(|f| f.growth) {
                    None => {
                        if old.same(new) != Some(true) {
                            let message = format!(
                                "`{path}` was `{}` ({}) and is `{}`: a list the policy does not say grows or shrinks tighter may not change",
                                self.show(old),
                                self.was(old),
                                self.show(new)
                            );
                            self.loosen(path, here, message);
                        }
                    }
                    Some(growth) => {
                        let policy = self.policy;
                        let find = |list: &Arc<Vec<Val>>, v: &Val| {
                            list.iter().position(|x| crate::layers::same_entry(policy, x, v, elem))
                        };
                        for (i, ov) in oe.iter().enumerate() {
                            let entry = format!("{path}[{i}]");
                            match find(ne, ov) {
                                Some(j) => self.walk(ov, &ne[j], elem, None, &entry, here),
                                None if growth == Growth::Shrinks => {}
                                None => {
                                    let message = format!(
                                        "`{path}` had {} ({}), and the new version removes it: the list only grows tighter",
                                        self.show(ov),
                                        self.was(ov)
                                    );
                                    self.loosen(&entry, here, message);
                                }
                            }
                        }
                        if growth == Growth::Shrinks {
                            for (j, nv) in ne.iter().enumerate() {
                                if find(oe, nv).is_none() {
                                    let message = format!(
                                        "the new version adds {} to `{path}`, which only shrinks tighter",
                                        self.show(nv)
                                    );
                                    let at = nv.origin.document_span().or(here);
                                    self.loosen(&format!("{path}[{j}]"), at, message);
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                if old.same(new) == Some(true) {
                    return;
                }
                let order = direction(self.policy, ty, field);
                let looser = match order {
                    Some(kind) => tight_enough(new, old, kind) == Some(false),
                    None => true,
                };
                if looser {
                    let how = if order.is_some() { "looser" } else { "a change the policy declares no direction for" };
                    let message = format!(
                        "`{path}` was `{}` ({}) and is `{}`: {how}; a new version may only tighten",
                        self.show(old),
                        self.was(old),
                        self.show(new)
                    );
                    self.loosen(path, here, message);
                }
            }
        }
    }

    fn fields(&mut self, old: &Val, new: &Val, ty: &Ty, path: &str, here: Option<(u32, Span)>) {
        let Ty::Record(r) = ty else { return };
        let def = &self.policy.records[*r as usize];
        let ValKind::Record(_, nf) = &new.kind else { return };
        let of: Vec<Val> = match &old.kind {
            ValKind::Record(_, of) => of.to_vec(),
            _ => def.fields.iter().map(|f| Val::missing(f.name.as_str(), None, Span::default())).collect(),
        };
        for (i, f) in def.fields.iter().enumerate() {
            let (Some(o), Some(n)) = (of.get(i), nf.get(i)) else { continue };
            self.walk(o, n, &f.ty, Some(f), &join(path, &f.name), here);
        }
    }
}
