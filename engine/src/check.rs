//! Checking a deployment: every document loaded and typed by its kind,
//! conformed to its schema, the documents of a layered kind merged by trust,
//! then every rule evaluated, in the order `holds` requires.

use std::borrow::Cow;

use grail_lang::ast::Span;

use crate::conform::{Env, Resolved, conform, select_kind, structural};
use crate::diagnostic::{Finding, Outcome, Place};
use crate::document::{self, Format, Limits, Node, NodeKind, SyntaxError};
pub use crate::eval::Param;
use crate::eval::{Roots, evaluate_rule};
use crate::hir::*;
use crate::keypath::{Fallback, Tree, place_findings};
use crate::layers::{Bound, Candidate, DocLayer, Layering, assign, merge};
use crate::value::Val;

/// One document of a deployment.
pub struct Input<'a> {
    pub path: &'a str,
    pub text: &'a str,
    /// The parsed document, for JSON and YAML; Markdown is read here, with
    /// the marker the policy declares.
    pub loaded: Option<&'a Result<Node, SyntaxError>>,
    /// The name the invocation gave the file under (`--evidence FILE` gives
    /// it as `evidence`): the file is of the kind selected by `given` that
    /// name, and of no other; `None` for a document chosen by its content.
    pub given: Option<&'a str>,
    /// Read as a Markdown record whatever the file's name (the targets of
    /// `grail check --binding`, where every file must carry its marker).
    pub markdown: bool,
}

/// A file a document's `ref` field names, as the caller found it.
pub struct Attachment<'a> {
    /// The index of the input whose field names it.
    pub from: usize,
    /// The path as written in the document.
    pub path: &'a str,
    /// The file parsed (its document index in the findings), or why it was not read.
    pub read: Result<(u32, &'a Result<Node, SyntaxError>), String>,
    /// The file's text, as read (empty when it was not read): one copy per
    /// file, shared by every attachment of it and every value read from it.
    pub text: std::sync::Arc<str>,
    /// The file's bytes when they are not UTF-8 text (`text` is then not its content).
    pub raw: Option<std::sync::Arc<[u8]>>,
}

/// Whether a file is read as Markdown.
pub fn is_markdown(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("md") || ext.eq_ignore_ascii_case("markdown"))
}

/// The paths a document's `ref` fields name (read them, then check with them attached).
pub fn references(policy: &Policy, input: &Input<'_>) -> Vec<String> {
    let Some((kind, node)) = parse(policy, 0, input).ok().flatten() else { return Vec::new() };
    // Conform asks for a file only at a key that names a `ref` field (a
    // defaulted field names none): a document with no such key names no file.
    if !names_any(&node, policy.derived.ref_keys(policy)) {
        return Vec::new();
    }
    // The paths conform would ask a resolver for, found without conforming.
    let mut paths = crate::conform::references(policy, kind, &node);
    // Each path once, however many fields name it, in the order first named.
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// The defaults of a layered kind, its origins pointing at document `top`:
/// the conform of an empty document, computed once per policy and reused (a
/// check of many files pays it once, not once per file).
fn defaults(policy: &Policy, kind: DocKindId, top: u32) -> Val {
    let key = (kind, top);
    if let Ok(kept) = policy.derived.defaults.lock()
        && let Some((_, v)) = kept.iter().find(|(k, _)| *k == key)
    {
        return v.clone();
    }
    let empty = Node { span: Span::default(), kind: NodeKind::Map(Vec::new()) };
    let never = |_: &str| Resolved::Refused("not read".into());
    let none = Checks::default();
    let (base, _) = conform(policy, kind, top, &empty, &Env { overrides: &none, resolve: &never, partial: false });
    if let Ok(mut kept) = policy.derived.defaults.lock()
        && kept.len() < Derived::KEPT
        && !kept.iter().any(|(k, _)| *k == key)
    {
        kept.push((key, base.clone()));
    }
    base
}

/// Whether some mapping of the tree has one of `keys` as a key (a loop, not
/// recursion: a tree is as deep as its loader allows).
fn names_any(node: &Node, keys: &[String]) -> bool {
    if keys.is_empty() {
        return false;
    }
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match &n.kind {
            NodeKind::Map(entries) => {
                for e in entries {
                    if keys.contains(&e.key) {
                        return true;
                    }
                    stack.push(&e.value);
                }
            }
            NodeKind::List(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// Every outcome for a deployment. Document `i` of the findings is input `i`;
/// attachments have the indices their [`Attachment::read`] gives.
pub fn check(policy: &Policy, inputs: &[Input<'_>], attachments: &[Attachment<'_>]) -> Vec<Finding> {
    run(policy, inputs, attachments, &[], false, None).findings
}

/// [`check`] with what the caller gives: its layer bindings, and the time of
/// the check, in nanoseconds since the epoch, that `now()` reads (without
/// it, `now()` is missing evidence).
pub fn check_with(
    policy: &Policy,
    inputs: &[Input<'_>],
    attachments: &[Attachment<'_>],
    bindings: &[Bound],
    now: Option<i128>,
) -> Vec<Finding> {
    run(policy, inputs, attachments, bindings, false, now).findings
}

/// The kind of a document and the layers a binding of it may name, for the
/// caller to check a `--layer NAME=FILE` before running: `None` when the
/// document has no kind (it is unreadable, or of no kind the policy declares).
pub fn kind_layers<'p>(policy: &'p Policy, input: &Input<'_>) -> Option<(&'p str, Option<&'p [String]>)> {
    let (kind, _) = parse(policy, 0, input).ok().flatten()?;
    let layers = policy.layers.iter().find(|l| l.document == kind).map(|l| l.layers.as_slice());
    Some((policy.documents[kind as usize].name.as_str(), layers))
}

/// What checking a deployment established.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub findings: Vec<Finding>,
    /// Per document kind, the document rules read (a layered kind's merged one).
    pub single: Vec<Option<Val>>,
    /// Per document kind, every document of that kind, and its name.
    pub all: Vec<Vec<(String, Val)>>,
    /// The layer of each input of a layered kind that was read, and how it was bound.
    pub layers: Vec<DocLayer>,
    /// The time of the check the rules read (see [`check_with`]).
    pub now: Option<i128>,
    /// Whether some rule evaluated `now()`: an outcome may depend on the time
    /// of the check, so the report states it.
    pub now_read: bool,
    /// The files the invocation attached under recorded paths (see [`GIVEN`]).
    pub given: Vec<crate::eval::Given>,
    /// The named parameters of the invocation (see [`run_with_params`]).
    pub params: Vec<Param>,
    /// The PASS outcomes counted and not built, which `findings` does not
    /// hold (see [`run_wanting`]); 0 otherwise.
    pub passes: usize,
}

impl Run {
    /// The count of each outcome, the passes counted included.
    pub fn summary(&self) -> crate::diagnostic::Summary {
        let mut s = crate::diagnostic::Summary::of(&self.findings);
        s.pass += self.passes;
        s
    }
}

/// The `from` of an [`Attachment`] the invocation gives under the path a
/// document records (`--attach RECORDED=LOCAL`), named by no field of any
/// document: `attached(p)` reads it.
pub const GIVEN: usize = usize::MAX;

/// Checks a deployment; with `trace`, every rule finding carries its derivation.
/// `bindings` bind inputs to layers of their kind (nothing in a document
/// does); `now` is the time of the check (see [`check_with`]).
pub fn run(
    policy: &Policy,
    inputs: &[Input<'_>],
    attachments: &[Attachment<'_>],
    bindings: &[Bound],
    trace: bool,
    now: Option<i128>,
) -> Run {
    run_with_params(policy, inputs, attachments, bindings, trace, now, &[], false)
}

/// [`run`] with the named parameters of the invocation, which `param("name")`
/// reads (a parameter not among them is absent). `records_asked`: the
/// invocation asked for Markdown records (`grail check --binding A TARGET...`),
/// so finding none is the kind's `empty` finding even when the targets
/// hold no file at all.
#[allow(clippy::too_many_arguments)]
pub fn run_with_params(
    policy: &Policy,
    inputs: &[Input<'_>],
    attachments: &[Attachment<'_>],
    bindings: &[Bound],
    trace: bool,
    now: Option<i128>,
    params: &[Param],
    records_asked: bool,
) -> Run {
    run_wanting(policy, inputs, attachments, bindings, trace, now, params, records_asked, true)
}

/// [`run_with_params`], with every PASS a [`Finding`] (`passes_built`) or
/// only counted in [`Run::passes`], for a caller that needs of a PASS only
/// that there was one (a report that lists no PASS: `grail check --each` in
/// JSON, or human without `--verbose`). The other findings, their order and
/// their key paths are the same either way.
#[allow(clippy::too_many_arguments)]
pub fn run_wanting(
    policy: &Policy,
    inputs: &[Input<'_>],
    attachments: &[Attachment<'_>],
    bindings: &[Bound],
    trace: bool,
    now: Option<i128>,
    params: &[Param],
    records_asked: bool,
    passes_built: bool,
) -> Run {
    // Room for the structural findings and a finding or two per rule: a
    // document's findings are rarely moved to a larger buffer.
    let mut findings = Vec::with_capacity(policy.rules.len() * 2 + 64);
    let kinds = policy.documents.len();
    let mut markdown_inputs = records_asked;
    // Every input with a kind: (input index, kind, tree).
    let mut parsed: Vec<(usize, DocKindId, Cow<'_, Node>)> = Vec::new();
    // Given documents that are unavailable: (input index, kind, why).
    let mut unavailable_docs: Vec<(usize, DocKindId, String)> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        markdown_inputs |= is_markdown(input.path) || input.markdown;
        if let Some((kind, why)) = unavailable(policy, input) {
            unavailable_docs.push((i, kind, why));
            continue;
        }
        match parse(policy, i as u32, input) {
            Ok(Some(p)) => {
                // The record was found after its one marker: the marker rule passes.
                if let SelectorDef::Markdown { rule, .. } = &policy.documents[p.0 as usize].selector {
                    findings.push(Finding {
                        rule: rule.rule.clone(),
                        outcome: Outcome::Pass,
                        subject: input.path.to_string(),
                        message: String::new(),
                        location: Some((i as u32, p.1.span)),
                        policy: Some(rule.loc),
                        labels: Vec::new(),
                        bound: Vec::new(),
                        trace: Vec::new(),
                        place: crate::diagnostic::Place::default(),
                    });
                }
                parsed.push((i, p.0, p.1));
            }
            Ok(None) => {}
            Err(f) => findings.push(*f),
        }
    }
    let names = |i: usize| inputs.get(i).map(|x| x.path.to_string()).unwrap_or_default();

    // The layer of every document of a layered kind, from the bindings alone;
    // `None` for a document that is not read (an `order` finding says why).
    let mut layer_of: Vec<Option<(usize, crate::layers::BoundBy)>> = vec![None; parsed.len()];
    let mut layer_names = Vec::new();
    // Per kind: the first document refused as untrusted (`trusted from`), and why.
    let mut refused: Vec<Option<(usize, Span, String)>> = vec![None; kinds];
    for l in &policy.layers {
        let members: Vec<usize> = (0..parsed.len()).filter(|&p| parsed[p].1 == l.document).collect();
        if members.is_empty() {
            continue;
        }
        let candidates: Vec<Candidate<'_>> =
            members.iter().map(|&p| Candidate { input: parsed[p].0, node: &parsed[p].2 }).collect();
        let layering = Layering { policy, layers: l, names: &names };
        let (assigned, layer_findings) = assign(&layering, &candidates, bindings);
        findings.extend(layer_findings);
        for (&p, mut a) in members.iter().zip(assigned) {
            // A kind trusted only from a layer: a document bound below it is the rule's finding, and not read.
            if let (Some((top, check)), Some((layer, by))) = (&l.trusted, a) {
                let input = parsed[p].0;
                let below = layer > *top;
                findings.push(Finding {
                    rule: check.rule.clone(),
                    outcome: if below { Outcome::Fail } else { Outcome::Pass },
                    subject: names(input),
                    message: if below {
                        format!(
                            "`{}` is checked as layer `{}` ({}), below `{}`, the only layers a `{}` is read from; nothing in it counts",
                            names(input),
                            l.layers[layer],
                            by.describe(),
                            l.layers[*top],
                            policy.documents[l.document as usize].name
                        )
                    } else {
                        String::new()
                    },
                    location: Some((input as u32, first_key(&parsed[p].2))),
                    policy: Some(check.loc),
                    labels: Vec::new(),
                    bound: Vec::new(),
                    trace: Vec::new(),
                    place: crate::diagnostic::Place::default(),
                });
                if below {
                    refused[l.document as usize].get_or_insert_with(|| {
                        let why = format!(
                            "`{}` is not read: it is of layer `{}` ({}), and a `{}` counts only from `{}`",
                            names(input),
                            l.layers[layer],
                            by.describe(),
                            policy.documents[l.document as usize].name,
                            l.layers[*top]
                        );
                        (input, first_key(&parsed[p].2), why)
                    });
                    layer_names.push(DocLayer {
                        doc: input as u32,
                        kind: policy.documents[l.document as usize].name.clone(),
                        layer: l.layers[layer].clone(),
                        by,
                    });
                    a = None;
                }
            }
            layer_of[p] = a;
            if let Some((layer, by)) = a {
                layer_names.push(DocLayer {
                    doc: parsed[p].0 as u32,
                    kind: policy.documents[l.document as usize].name.clone(),
                    layer: l.layers[layer].clone(),
                    by,
                });
            }
        }
    }

    // Per kind: (input index, layer, conformed root).
    let mut by_kind: Vec<Vec<(usize, usize, Val)>> = vec![Vec::new(); kinds];
    // The structural PASS outcomes conform counted instead of building them.
    let mut conformed_passes = 0;
    for (p, (i, kind, node)) in parsed.iter().enumerate() {
        let i = *i;
        let layering = policy.layers.iter().find(|l| l.document == *kind);
        let layer = layer_of[p].map_or(0, |(x, _)| x);
        // A separate kind's documents are each read as they are: nothing of theirs is another layer's.
        let merged = layering.filter(|l| !l.separate);
        let none = Checks::default();
        // Below the most trusted layer, an unknown key is the layer's finding.
        let overrides = match merged {
            Some(l) if layer > 0 => {
                let mut o = Checks::default();
                o[CHECK_UNKNOWN_KEY] = l.checks[CHECK_UNKNOWN_KEY].clone();
                o
            }
            _ => none,
        };
        let resolve = |path: &str| resolve(attachments, i, path);
        // Its PASS outcomes counted, not built, when only their number is wanted.
        let (root, structural, passed) = crate::conform::conform_counting(
            policy,
            *kind,
            i as u32,
            node,
            &Env { overrides: &overrides, resolve: &resolve, partial: merged.is_some() && layer > 0 },
            !passes_built,
        );
        conformed_passes += passed;
        findings.extend(structural);
        // A document of a layered kind that has no layer is not read.
        if layering.is_some() && layer_of[p].is_none() {
            continue;
        }
        by_kind[*kind as usize].push((i, layer, root));
    }

    // An unavailable given document is there, and its root is missing evidence, with the reason.
    for (i, kind, why) in unavailable_docs {
        by_kind[kind as usize].push((i, 0, Val::missing(why, None, Span::default())));
    }

    // One root per layered kind, merged by trust; every kind keeps its documents.
    let mut single: Vec<Option<Val>> = vec![None; kinds];
    let mut all: Vec<Vec<(String, Val)>> = vec![Vec::new(); kinds];
    for (kind, docs) in by_kind.into_iter().enumerate() {
        let layered = policy.layers.iter().find(|l| l.document as usize == kind && !l.separate);
        if docs.is_empty() && !(layered.is_some() && parsed.iter().any(|(_, k, _)| *k as usize == kind)) {
            continue;
        }
        match layered {
            Some(l) => {
                // The defaults stand in for the most trusted layer, as if it said nothing.
                let top = docs.iter().min_by_key(|(_, layer, _)| *layer).map_or(0, |(i, _, _)| *i as u32);
                let base = defaults(policy, kind as DocKindId, top);
                let layering = Layering { policy, layers: l, names: &names };
                let (merged, ordered, layer_findings) = merge(&layering, base, docs);
                findings.extend(layer_findings);
                all[kind] = ordered.into_iter().map(|(i, v)| (names(i), v)).collect();
                single[kind] = Some(merged);
            }
            None => {
                if docs.len() == 1 {
                    single[kind] = Some(docs[0].2.clone());
                }
                all[kind] = docs.into_iter().map(|(i, _, v)| (names(i), v)).collect();
            }
        }
    }

    // A kind that must be found: judged when the deployment was about it.
    for (kind, def) in policy.documents.iter().enumerate() {
        let Some(check) = &def.checks[CHECK_EMPTY] else { continue };
        let asked = markdown_inputs && matches!(def.selector, SelectorDef::Markdown { .. });
        if !asked && all[kind].is_empty() {
            continue;
        }
        let (outcome, message) = if all[kind].is_empty() {
            (
                Outcome::Fail,
                format!("no `{}` was found in the documents checked; nothing verified is not a pass", def.name),
            )
        } else {
            (Outcome::Pass, String::new())
        };
        findings.push(Finding {
            rule: check.rule.clone(),
            outcome,
            subject: "deployment".into(),
            message,
            location: None,
            policy: Some(check.loc),
            labels: Vec::new(),
            bound: Vec::new(),
            trace: Vec::new(),
            place: Place::about(&def.binder),
        });
    }

    let given: Vec<crate::eval::Given> = attachments
        .iter()
        .filter(|a| a.from == GIVEN)
        .map(|a| crate::eval::Given {
            recorded: a.path.to_string(),
            text: match &a.read {
                Ok(_) => Ok(a.text.clone()),
                Err(reason) => Err(reason.clone()),
            },
            raw: a.raw.clone(),
        })
        .collect();
    let counted = std::cell::Cell::new(0);
    let roots = Roots {
        single: &single,
        all: &all,
        layers: &layer_names,
        now,
        given: &given,
        params,
        now_read: Default::default(),
        passes: (!passes_built).then_some(&counted),
        memo: Default::default(),
    };
    // The structural PASS findings counted, before the rules that read the
    // findings so far (`holds` reads no PASS).
    if !passes_built {
        let before = findings.len();
        findings.retain(|f| f.outcome != Outcome::Pass);
        counted.set(before - findings.len() + conformed_passes);
    }
    // One buffer for every rule's findings, moved into `findings` after each.
    let mut out = Vec::new();
    for rule in &policy.rules {
        // A rule that judges a kind whose every document was refused as untrusted
        // cannot establish anything: missing evidence, never a pass and never silence.
        if let Some(&kind) = rule.reads.first()
            && all[kind as usize].is_empty()
            && let Some((input, span, why)) = &refused[kind as usize]
        {
            findings.push(Finding {
                rule: rule.id.clone(),
                outcome: Outcome::Unknown,
                subject: names(*input),
                message: format!("cannot be established: {why}"),
                location: Some((*input as u32, *span)),
                policy: Some(rule.loc),
                labels: Vec::new(),
                bound: Vec::new(),
                trace: Vec::new(),
                place: crate::diagnostic::Place::default(),
            });
            continue;
        }
        evaluate_rule(policy, rule, &roots, &findings, trace, &mut out);
        findings.append(&mut out);
    }
    // Sorted by position, rule, subject (stable); each position computed
    // once, and indices moved rather than findings.
    // The index comes last in the key, so an unstable sort gives the stable order.
    let pos = |f: &Finding| f.location.map(|(d, s)| (d, s.start)).unwrap_or((u32::MAX, usize::MAX));
    let mut order: Vec<((u32, usize), &str, &str, usize)> =
        findings.iter().enumerate().map(|(i, f)| (pos(f), f.rule.as_str(), f.subject.as_str(), i)).collect();
    order.sort_unstable();
    let order: Vec<usize> = order.into_iter().map(|(.., i)| i).collect();
    let mut slots: Vec<Option<Finding>> = findings.into_iter().map(Some).collect();
    // Collected into room for all of them: a `filter_map` gives no size to collect into.
    let mut findings: Vec<Finding> = Vec::with_capacity(slots.len());
    findings.extend(order.into_iter().filter_map(|i| slots[i].take()));
    if findings.iter().any(|f| f.outcome != Outcome::Pass) {
        place(policy, &parsed, attachments, &mut findings);
    }
    let now_read = roots.now_read.get();
    let passes = counted.get();
    Run { findings, single, all, layers: layer_names, now, now_read, given, params: params.to_vec(), passes }
}

/// Computes the key paths of the findings a report lists, over the trees
/// of the documents and of the files their `ref` fields name.
fn place(
    policy: &Policy,
    parsed: &[(usize, DocKindId, Cow<'_, Node>)],
    attachments: &[Attachment<'_>],
    findings: &mut [Finding],
) {
    let mut trees: Vec<Tree<'_>> = parsed
        .iter()
        .map(|(i, kind, node)| {
            let def = &policy.documents[*kind as usize];
            Tree { doc: *i as u32, root: node, ty: Some(Ty::Record(def.record)), binder: &def.binder, named_by: None }
        })
        .collect();
    let documents = trees.len();
    for a in attachments {
        if let Ok((doc, Ok(root))) = &a.read {
            let from = trees[..documents].iter().find(|t| t.doc as usize == a.from);
            let ty = from.and_then(|t| crate::keypath::attached_ty(policy, t, a.path));
            let binder = from.map_or("", |t| t.binder);
            trees.push(Tree { doc: *doc, root, ty, binder, named_by: Some((a.from as u32, a.path)) });
        }
    }
    // A document that could not be read is named as a document of the kind
    // an empty one would be (else the policy's first kind); a finding placed
    // nowhere, as a document of the first kind read.
    let empty = Node { span: Span::default(), kind: NodeKind::Map(Vec::new()) };
    let binder = |k: DocKindId| policy.documents.get(k as usize).map_or("document", |d| d.binder.as_str());
    let unread = binder(select_kind(policy, 0, &empty).unwrap_or(0));
    let nowhere = parsed.first().map_or(unread, |(_, k, _)| binder(*k));
    place_findings(policy, &trees, Fallback { unread, nowhere }, findings);
}

/// A document's kind and tree, or the finding that says why it has none;
/// `Ok(None)` for a document with nothing to check.
/// Two documents of a kind declared `at most one per deployment`, which one
/// deployment may not hold together: a usage error of the caller's, not a
/// finding about either document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crowded {
    /// The kind's name.
    pub kind: String,
    /// The first document of the kind and where its top level starts.
    pub first: (u32, Span),
    /// A later one.
    pub second: (u32, Span),
    /// The declaration `at most one per deployment`.
    pub loc: crate::hir::Loc,
}

/// Every document after the first of a kind that allows at most one per
/// deployment, paired with the first, in the order of the inputs.
pub fn crowded(policy: &Policy, inputs: &[Input<'_>]) -> Vec<Crowded> {
    let mut first: Vec<Option<(u32, Span)>> = vec![None; policy.documents.len()];
    let mut out = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Ok(Some((kind, node))) = parse(policy, i as u32, input) else { continue };
        let def = &policy.documents[kind as usize];
        let Some(loc) = def.at_most_one else { continue };
        let here = (i as u32, node.span);
        match first[kind as usize] {
            None => first[kind as usize] = Some(here),
            Some(f) => out.push(Crowded { kind: def.name.clone(), first: f, second: here, loc }),
        }
    }
    out
}

pub(crate) fn parse<'a>(
    policy: &Policy,
    doc: u32,
    input: &Input<'a>,
) -> Result<Option<(DocKindId, Cow<'a, Node>)>, Box<Finding>> {
    if let Some(name) = input.given {
        return given(policy, doc, input, name);
    }
    if is_markdown(input.path) || input.markdown {
        let Some((kind, def)) =
            policy.documents.iter().enumerate().find(|(_, d)| matches!(d.selector, SelectorDef::Markdown { .. }))
        else {
            let check = crate::conform::unknown_kind(policy).and_then(|d| d.checks[CHECK_SYNTAX].clone());
            return Err(Box::new(structural(
                check.as_ref(),
                "document",
                "this policy reads no Markdown document".into(),
                doc,
                Span::new(0, 0),
            )));
        };
        let SelectorDef::Markdown { marker, rule } = &def.selector else { return Ok(None) };
        let (start, end) = match extract(input.text, marker) {
            Ok(span) => span,
            Err((message, span)) => return Err(Box::new(structural(Some(rule), "document", message, doc, span))),
        };
        return match document::load(&input.text[start..end], Format::Json, &Limits::default()) {
            Ok(mut node) => {
                document::shift(&mut node, start);
                Ok(Some((kind as DocKindId, Cow::Owned(node))))
            }
            Err(e) => {
                let check = def.checks[CHECK_SYNTAX].clone();
                let span = Span::new(e.span.start + start, e.span.end + start);
                Err(Box::new(structural(check.as_ref(), "document", e.message, doc, span)))
            }
        };
    }
    let Some(loaded) = input.loaded else { return Ok(None) };
    match loaded {
        Err(e) => {
            // The document's kind cannot be known; the kind an empty mapping is of reports it.
            let check = crate::conform::unknown_kind(policy).and_then(|d| d.checks[CHECK_SYNTAX].clone());
            Err(Box::new(structural(check.as_ref(), "document", e.message.clone(), doc, e.span)))
        }
        Ok(root) if document::format_for_path(input.path) == Some(Format::JsonLines) => json_lines(policy, doc, root),
        Ok(root) => select_kind(policy, doc, root).map(|kind| Some((kind, Cow::Borrowed(root)))),
    }
}

/// The kind a file given under `name` is of: the one selected by `given`
/// that name.
pub fn given_kind<'p>(policy: &'p Policy, name: &str) -> Option<(DocKindId, &'p DocumentDef)> {
    policy
        .documents
        .iter()
        .enumerate()
        .find(|(_, d)| matches!(&d.selector, SelectorDef::Given { name: n } if n == name))
        .map(|(k, d)| (k as DocKindId, d))
}

/// A file given under a name: of the kind given that name, read as JSON or
/// YAML whatever its extension says; a list root is the record its `list
/// into` field holds. A file that cannot be read or parsed, or whose root is
/// not of the kind's shape, is the kind's `syntax` or `type` finding, or,
/// when the kind says `on unreadable missing`, nothing to check here (see
/// [`unavailable`]).
fn given<'a>(
    policy: &Policy,
    doc: u32,
    input: &Input<'a>,
    name: &str,
) -> Result<Option<(DocKindId, Cow<'a, Node>)>, Box<Finding>> {
    let Some((kind, def)) = given_kind(policy, name) else {
        let check = crate::conform::unknown_kind(policy).and_then(|d| d.checks[CHECK_SYNTAX].clone());
        let message = format!("no document kind of the policy is given as `{name}`");
        return Err(Box::new(structural(check.as_ref(), "document", message, doc, Span::new(0, 0))));
    };
    if def.unreadable_missing && unavailable(policy, input).is_some() {
        return Ok(None);
    }
    let root = match input.loaded {
        Some(Ok(root)) => root,
        Some(Err(e)) => {
            let check = def.checks[CHECK_SYNTAX].clone();
            return Err(Box::new(structural(check.as_ref(), "document", e.message.clone(), doc, e.span)));
        }
        None => {
            let check = def.checks[CHECK_SYNTAX].clone();
            let message = format!("a `{}` is read as JSON or YAML, not as Markdown", def.name);
            return Err(Box::new(structural(check.as_ref(), "document", message, doc, Span::new(0, 0))));
        }
    };
    if let Some(shape) = misshapen(def, root) {
        let check = def.checks[CHECK_TYPE].clone();
        return Err(Box::new(structural(check.as_ref(), "document", shape, doc, root.span)));
    }
    Ok(Some((kind, list_root(def, root))))
}

/// Why a document's root is not of its kind's shape: a kind with `list
/// into` is a list, any other a mapping.
fn misshapen(def: &DocumentDef, root: &Node) -> Option<String> {
    let is = match &root.kind {
        NodeKind::Map(_) => "a mapping",
        NodeKind::List(_) => "a list",
        NodeKind::Null => "null",
        NodeKind::Str(_) => "a string",
        NodeKind::Bool(_) => "a boolean",
        _ => "a number",
    };
    match (&def.list_into, &root.kind) {
        (Some(_), NodeKind::List(_)) | (None, NodeKind::Map(_)) => None,
        (Some(_), _) => Some(format!("a `{}` is a list, and this document is {is}", def.name)),
        (None, _) => Some(format!("a `{}` is a mapping of keys to values, and this document is {is}", def.name)),
    }
}

/// The tree of a document whose root is a list, as the record whose `list
/// into` field holds it (located where the list is).
fn list_root<'a>(def: &DocumentDef, root: &'a Node) -> Cow<'a, Node> {
    match (&def.list_into, &root.kind) {
        (Some(into), NodeKind::List(_)) => Cow::Owned(Node {
            span: root.span,
            kind: NodeKind::Map(vec![crate::document::Entry {
                key: into.clone(),
                key_span: Span::new(root.span.start, root.span.start),
                value: root.clone(),
            }]),
        }),
        _ => Cow::Borrowed(root),
    }
}

/// How the message of a file the caller could not read starts (see
/// [`crate::db::SourceText::unread`]).
pub const UNREAD: &str = "cannot be read: ";

/// A given file whose kind says `on unreadable missing`, and which cannot
/// be read or parsed, or whose root is not of the kind's shape: its kind,
/// and why, as `reason(x)` shows it (`` `evidence.json` unavailable (not
/// JSON or YAML: ...) ``).
pub fn unavailable(policy: &Policy, input: &Input<'_>) -> Option<(DocKindId, String)> {
    let (kind, def) = given_kind(policy, input.given?)?;
    if !def.unreadable_missing {
        return None;
    }
    let why = match input.loaded {
        None => "a Markdown file".to_string(),
        Some(Err(e)) if e.message.starts_with(UNREAD) => e.message.clone(),
        Some(Err(e)) => {
            let (line, column) = crate::LineIndex::new(input.text).line_col(input.text, e.span.start);
            format!("not JSON or YAML: {} at line {line}, column {column}", e.message)
        }
        Some(Ok(root)) => misshapen(def, root)?,
    };
    Some((kind, format!("`{}` unavailable ({why})", input.path)))
}

/// Where a finding about a whole document points: its first key.
fn first_key(node: &Node) -> Span {
    match &node.kind {
        NodeKind::Map(entries) if !entries.is_empty() => entries[0].key_span,
        _ => node.span,
    }
}

/// A JSON Lines document: its first line is the header (which the kind is
/// selected by), and every further line an entry of the list the kind's
/// `lines into` names. The tree is the header with that list added, each
/// entry located at its line.
fn json_lines<'a>(policy: &Policy, doc: u32, root: &Node) -> Result<Option<(DocKindId, Cow<'a, Node>)>, Box<Finding>> {
    let NodeKind::List(lines) = &root.kind else { return Ok(None) };
    let Some((header, entries)) = lines.split_first() else { return Ok(None) };
    let kind = select_kind(policy, doc, header)?;
    let def = &policy.documents[kind as usize];
    let NodeKind::Map(fields) = &header.kind else { return Ok(Some((kind, Cow::Owned(header.clone())))) };
    if entries.is_empty() {
        return Ok(Some((kind, Cow::Owned(header.clone()))));
    }
    let Some(into) = &def.lines_into else {
        let message = format!(
            "a `{}` is read from its first line alone; this file has {} more (the kind says no `lines into`)",
            def.name,
            entries.len()
        );
        return Err(Box::new(structural(def.checks[CHECK_SYNTAX].as_ref(), "document", message, doc, entries[0].span)));
    };
    let list_span = Span::new(entries[0].span.start, entries[entries.len() - 1].span.end);
    let mut fields = fields.clone();
    fields.push(crate::document::Entry {
        key: into.clone(),
        key_span: Span::new(entries[0].span.start, entries[0].span.start),
        value: Node { span: list_span, kind: NodeKind::List(entries.to_vec()) },
    });
    Ok(Some((kind, Cow::Owned(Node { span: header.span, kind: NodeKind::Map(fields) }))))
}

/// The span of the fenced record bound to the one marker, or a message and where.
///
/// As the autonomy plugin's envelope checker reads a queued item: the marker
/// is found as text, anywhere in the file (in a comment, a code block or a
/// line of prose alike), and must occur exactly once. After it, white space
/// (blank lines, an indent) and then the opening fence `` ```json ``, the rest
/// of that line white space; the record is every line after it up to the
/// first line that starts with `` ``` ``.
pub fn extract(text: &str, marker: &str) -> Result<(usize, usize), (String, Span)> {
    let Some(m) = text.find(marker) else {
        return Err((format!("no `{marker}` marker record found"), Span::new(0, 0)));
    };
    let after = m + marker.len();
    if let Some(second) = text[after..].find(marker) {
        let at = after + second;
        let count = 2 + text[at + marker.len()..].matches(marker).count();
        return Err((
            format!("`{marker}` appears {count} times; exactly one marker record is allowed"),
            Span::new(at, at + marker.len()),
        ));
    }
    let not_followed =
        || (format!("`{marker}` is not immediately followed by its fenced JSON record (```json)"), Span::new(m, after));
    let rest = &text[after..];
    let fence = after + (rest.len() - rest.trim_start().len());
    let Some(info) = text[fence..].strip_prefix("```json") else { return Err(not_followed()) };
    // The rest of the fence's line is white space up to a line break; of the
    // white space that follows, the record starts after the last line break
    // from which a closing fence is found (a regular expression's backtracking).
    let blank = &info[..info.len() - info.trim_start().len()];
    let opened = fence + "```json".len();
    for (i, _) in blank.match_indices('\n').collect::<Vec<_>>().into_iter().rev() {
        let start = opened + i + 1;
        if let Some(close) = text[start..].find("\n```") {
            return Ok((start, start + close));
        }
    }
    Err(not_followed())
}

fn resolve<'a>(attachments: &'a [Attachment<'a>], from: usize, path: &str) -> Resolved<'a> {
    match attachments.iter().find(|a| a.from == from && a.path == path) {
        None => Resolved::Refused("not read".into()),
        Some(a) => match &a.read {
            Err(reason) => Resolved::Refused(reason.clone()),
            Ok((doc, Ok(root))) => Resolved::Loaded { doc: *doc, root, text: a.text.clone(), raw: a.raw.clone() },
            Ok((doc, Err(e))) => {
                Resolved::Broken { doc: *doc, error: e.clone(), text: a.text.clone(), raw: a.raw.clone() }
            }
        },
    }
}

/// Why a path in a document may not be followed, judged on its text alone:
/// absolute, or climbing out of the document's folder.
pub fn path_leaves_folder(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("the path is empty");
    }
    if path.starts_with('/') || path.starts_with('\\') || path.as_bytes().get(1) == Some(&b':') {
        return Some("the path is absolute; it must be relative to the document's folder");
    }
    let mut depth: i64 = 0;
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => depth -= 1,
            _ => depth += 1,
        }
        if depth < 0 {
            return Some("the path leaves the document's folder");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn tree(json: &str) -> Node {
        document::load(json, Format::Json, &Limits::default()).expect("the test's JSON is well formed")
    }

    /// The paths conform asks a resolver that reads nothing for: what
    /// [`references`] stands for.
    fn references_by_conform(policy: &Policy, input: &Input<'_>) -> Vec<String> {
        let Some((kind, node)) = parse(policy, 0, input).ok().flatten() else { return Vec::new() };
        let asked = RefCell::new(Vec::new());
        let resolve = |path: &str| {
            asked.borrow_mut().push(path.to_string());
            Resolved::Refused("not read".into())
        };
        let none = Checks::default();
        conform(policy, kind, 0, &node, &Env { overrides: &none, resolve: &resolve, partial: false });
        asked.into_inner()
    }

    /// The shipped library, lowered from its files.
    fn library() -> Policy {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/guardrails");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .expect("the library's folder")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "grail"))
            .collect();
        paths.sort();
        let parsed: Vec<_> =
            paths.iter().map(|p| grail_lang::parse(&std::fs::read_to_string(p).expect("a library file"))).collect();
        let files: Vec<_> = parsed.iter().map(|p| &p.file).collect();
        crate::lower::lower(&files).policy
    }

    /// Every JSON and YAML document under the given folders of the repository.
    fn repository_documents() -> Vec<(String, String)> {
        crate::test_files::repository_files(&["examples", "tests", "policies"], &["json", "yaml", "yml"])
            .into_iter()
            .map(|(path, text)| (path.display().to_string(), text))
            .collect()
    }

    /// The walk that finds the files a document names asks for the paths
    /// conform asks for, in the same order, on every document of the
    /// repository and on hand-written ones that reach each turn of the
    /// descent (a rest map, a duplicate key, a map of references, an
    /// inline record, `or one`), under the shipped library.
    #[test]
    fn references_are_the_paths_conform_asks_for() {
        let policy = library();
        let mut files = repository_documents();
        assert!(files.len() > 100, "only {} documents found", files.len());
        for text in [
            r#"{"history": "h.json", "plan": "p.md", "plan_versions": {"a": "a.md", "b": ["x"], "a": "c.md"}}"#,
            r#"{"history": {"kind": "history"}, "plan": "p.md", "plan": "q.md", "plan_versions": "v.md"}"#,
            r#"{"probe_evidence": "t.json", "probe_evidence": "u.json", "other": {"probe_evidence": "v.json"}}"#,
            r#"{"probe_evidence": ["t.json"], "package_path": "pkg.tgz", "ref": "r.txt", "*": {"ref": "s"}}"#,
        ] {
            files.push(("made.json".into(), text.into()));
        }
        let mut named = 0;
        for (path, text) in &files {
            let format = if path.ends_with(".json") { Format::Json } else { Format::Yaml };
            let loaded = document::load(text, format, &Limits::default());
            let input = Input { path, text, loaded: Some(&loaded), given: None, markdown: false };
            let by_conform = references_by_conform(&policy, &input);
            let mut once = by_conform.clone();
            let mut seen = std::collections::HashSet::new();
            once.retain(|p| seen.insert(p.clone()));
            assert_eq!(references(&policy, &input), once, "{path}");
            let Some((kind, node)) = parse(&policy, 0, &input).ok().flatten() else { continue };
            assert_eq!(crate::conform::references(&policy, kind, &node), by_conform, "{path}");
            named += usize::from(!by_conform.is_empty());
        }
        assert!(named > 20, "only {named} documents name a file");
    }

    /// Conform with its PASS outcomes counted gives their number, the same
    /// value and the same other findings, on every document of the repository.
    #[test]
    fn conform_counts_the_passes_it_would_build() {
        let policy = library();
        let mut counted_some = 0;
        for (path, text) in repository_documents() {
            let format = if path.ends_with(".json") { Format::Json } else { Format::Yaml };
            let loaded = document::load(&text, format, &Limits::default());
            let input = Input { path: &path, text: &text, loaded: Some(&loaded), given: None, markdown: false };
            let Some((kind, node)) = parse(&policy, 0, &input).ok().flatten() else { continue };
            let never = |_: &str| Resolved::Refused("not read".into());
            let none = Checks::default();
            let env = Env { overrides: &none, resolve: &never, partial: false };
            let (value, built) = conform(&policy, kind, 0, &node, &env);
            let (counted_value, rest, counted) = crate::conform::conform_counting(&policy, kind, 0, &node, &env, true);
            let (passes, others): (Vec<Finding>, Vec<Finding>) =
                built.into_iter().partition(|f| f.outcome == Outcome::Pass);
            assert_eq!((counted, &rest), (passes.len(), &others), "{path}");
            assert_eq!(counted_value, value, "{path}");
            counted_some += usize::from(counted > 0);
        }
        assert!(counted_some > 100, "only {counted_some} documents have a structural PASS");
    }

    /// A `ref` field's key is found however deep it is, under lists and
    /// mappings; a value that spells it is not a key.
    #[test]
    fn a_ref_key_is_found_at_any_depth_and_only_as_a_key() {
        let keys = ["probe".to_string(), "history".to_string()];
        assert!(names_any(&tree(r#"{"a": [{"b": {"probe": "p.json"}}]}"#), &keys));
        assert!(names_any(&tree(r#"[[{"history": 1}]]"#), &keys));
        assert!(!names_any(&tree(r#"{"a": [{"b": {"probes": "probe"}}], "c": ["history"]}"#), &keys));
        assert!(!names_any(&tree(r#"{"probe": "p.json"}"#), &[]));
    }

    /// A string function spends steps by the bytes it reads: reading an
    /// 8 MiB field once per entry of 300 stops the rule (one FAIL) rather
    /// than doing 2.4 GB of work, and the message that shows the value
    /// shows its first KiB and its size.
    #[test]
    fn reading_a_long_string_many_times_stops_the_rule() {
        let source = r#"
document Doc as doc where kind == "doc" {
  on syntax rule doc.syntax
  on duplicate_key rule doc.duplicate_key
  on unknown_key rule doc.unknown_key
  on type rule doc.type
  kind: string
  big: string
  levels: list string
}
rule doc.split
  for l in doc.levels
  require entries(split(doc.big, ",")) == 1
    else fail "{l}"
rule doc.shown
  require doc.big == ""
    else fail "{doc.big}"
"#;
        let parsed = grail_lang::parse(source);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let policy = crate::lower::lower(&[&parsed.file]).policy;
        let levels: Vec<String> = (0..300).map(|i| format!("\"l{i}\"")).collect();
        let big = "x".repeat(8 << 20);
        let text = format!("{{\"kind\": \"doc\", \"big\": \"{big}\", \"levels\": [{}]}}", levels.join(", "));
        let loaded = document::load(&text, Format::Json, &Limits::default());
        let inputs = [Input { path: "doc.json", text: &text, loaded: Some(&loaded), given: None, markdown: false }];
        let run = run_with_params(&policy, &inputs, &[], &[], false, None, &[], false);
        let split: Vec<&Finding> = run.findings.iter().filter(|f| f.rule == "doc.split").collect();
        assert!(split.iter().any(|f| f.outcome == Outcome::Fail && f.message.contains("stopped")), "{split:?}");
        assert!(split.len() < 300, "the rule went on after its steps ran out");
        let shown = run.findings.iter().find(|f| f.rule == "doc.shown").expect("the rule is judged");
        assert_eq!(shown.outcome, Outcome::Fail);
        assert_eq!(shown.message, format!("{}… ({} bytes in all)", &big[..crate::eval::MAX_SHOWN_BYTES], big.len()));
    }

    /// The files a document's fields name, every one of them.
    fn files(v: &Val, out: &mut Vec<std::sync::Arc<crate::value::FileVal>>) {
        use crate::value::ValKind as V;
        match &v.kind {
            V::File(f) => out.push(f.clone()),
            V::List(xs) | V::Record(_, xs) => xs.iter().for_each(|x| files(x, out)),
            V::Map(es) | V::Pairs(es) => es.iter().for_each(|(k, x)| {
                files(k, out);
                files(x, out);
            }),
            _ => {}
        }
    }

    /// A file named by many fields is one value in the check, whose text is
    /// the one copy the attachments share (issue 40, class 8: a copy per
    /// field took 1.55 GB for 100 fields naming one 16 MB file), and its
    /// SHA-256 is computed once for all of them.
    #[test]
    fn many_fields_naming_one_file_share_one_value_and_one_text() {
        let source = r#"
document Run as run where kind == "run" {
  on syntax rule run.syntax
  on duplicate_key rule run.duplicate_key
  on unknown_key rule run.unknown_key
  on type rule run.type
  kind: string
  evidence: list Evidence
}
record Evidence {
  "ref": ref string
}
rule run.hashed
  for e in run.evidence
  require sha256(e["ref"]) == "0"
    else fail "hashed {sha256(e["ref"])}"
"#;
        let parsed = grail_lang::parse(source);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let lowered = crate::lower::lower(&[&parsed.file]);
        assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
        let policy = lowered.policy;
        const FIELDS: usize = 200;
        let entries: Vec<String> = (0..FIELDS)
            .map(|i| format!("{{\"ref\": \"{}\"}}", if i % 2 == 0 { "big.txt" } else { "./big.txt" }))
            .collect();
        let text = format!("{{\"kind\": \"run\", \"evidence\": [{}]}}", entries.join(", "));
        let loaded = document::load(&text, Format::Json, &Limits::default());
        let inputs = [Input { path: "run.json", text: &text, loaded: Some(&loaded), given: None, markdown: false }];
        let big: std::sync::Arc<str> = "x".repeat(1 << 20).into();
        let file: Result<Node, SyntaxError> = document::load("x", Format::Yaml, &Limits::default());
        let attachments: Vec<Attachment<'_>> = ["big.txt", "./big.txt"]
            .into_iter()
            .map(|path| Attachment { from: 0, path, read: Ok((1, &file)), text: big.clone(), raw: None })
            .collect();
        let run = run_with_params(&policy, &inputs, &attachments, &[], false, None, &[], false);

        let mut named = Vec::new();
        for (_, doc) in run.all.iter().flatten() {
            files(doc, &mut named);
        }
        assert_eq!(named.len(), FIELDS, "every field names the file");
        // One value per path as written (two spellings here), each holding the shared text.
        for f in &named {
            assert!(std::sync::Arc::ptr_eq(&f.text, &big), "a field's value holds a copy of the file's text");
            let first = named.iter().find(|g| g.path == f.path).expect("the path is named");
            assert!(std::sync::Arc::ptr_eq(f, first), "two fields naming `{}` hold two values", f.path);
        }
        // The text is held by the attachments, the two values, and this test: never once per field.
        assert_eq!(std::sync::Arc::strong_count(&big), 1 + attachments.len() + 2);
        // Hashed once per value, and every field's finding says the same digest.
        assert!(named.iter().all(|f| f.digest.get().is_some()));
        let digest = named[0].sha256();
        let failed: Vec<&Finding> = run.findings.iter().filter(|f| f.rule == "run.hashed").collect();
        assert_eq!(failed.len(), FIELDS);
        assert!(failed.iter().all(|f| f.outcome == Outcome::Fail && f.message == format!("hashed {digest}")));
    }
}
