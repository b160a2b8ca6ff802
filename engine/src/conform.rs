//! Reads a loaded document through its schema: every key and value checked
//! against its declared type, defaults filled in from the policy, tighten-only
//! bounds enforced. The result is a typed [`Val`] tree with provenance, and
//! the structural findings (syntax, duplicate and unknown keys, types,
//! forbidden keys, bounds, uniqueness), each under the rule id the policy gave it.

// Keyed by what documents say: a hash seeded per process, and cheaper than SipHash.
use foldhash::{HashMap, HashMapExt as _, HashSet, HashSetExt as _};
use std::sync::Arc;

use grail_lang::ast::{BoundKind, Span};

use crate::diagnostic::{Finding, Outcome};
use crate::document::{Node, NodeKind, SyntaxError};
use crate::hir::*;
use crate::suggest::did_you_mean;
use crate::value::{Absence, FileVal, IdKey, Origin, Val, ValKind, same_identifier};

/// Which document kind a document is, by the policy's selectors; `Err` is a
/// finding explaining why it is none.
pub fn select_kind(policy: &Policy, doc: u32, root: &Node) -> Result<DocKindId, Box<Finding>> {
    let type_rule = |p: &Policy| unknown_kind(p).and_then(|d| d.checks[CHECK_TYPE].clone());
    let NodeKind::Map(entries) = &root.kind else {
        let check = type_rule(policy);
        return Err(Box::new(structural(
            check.as_ref(),
            "document",
            "a document must be a mapping of keys to values".into(),
            doc,
            root.span,
        )));
    };
    let get = |key: &str| entries.iter().find(|e| e.key == key);
    for (i, d) in policy.documents.iter().enumerate() {
        let matches = match &d.selector {
            SelectorDef::Keys(tests) => tests.iter().all(|t| match &t.test {
                KeyCondDef::Absent => get(&t.key).is_none(),
                KeyCondDef::Present => get(&t.key).is_some(),
                KeyCondDef::Equals(v) => {
                    get(&t.key).is_some_and(|e| matches!(&e.value.kind, NodeKind::Str(s) if s == v))
                }
            }),
            // Markdown kinds are chosen by the file's format, and given kinds
            // by the name the invocation gives a file under, never by keys.
            SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => false,
        };
        if matches {
            return Ok(i as DocKindId);
        }
    }
    let kinds: Vec<String> = policy
        .documents
        .iter()
        .filter_map(|d| match &d.selector {
            SelectorDef::Keys(tests) => Some(
                tests
                    .iter()
                    .map(|t| match &t.test {
                        KeyCondDef::Equals(v) => format!("`{}: {v}`", t.key),
                        KeyCondDef::Absent => format!("no `{}` key", t.key),
                        KeyCondDef::Present => format!("a `{}` key", t.key),
                    })
                    .collect::<Vec<_>>()
                    .join(" and "),
            ),
            SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => None,
        })
        .collect();
    let (span, shown) = policy
        .documents
        .iter()
        .find_map(|d| d.selector.tests().iter().find_map(|t| get(&t.key).map(|e| (e.value.span, t.key.clone()))))
        .unwrap_or((root.span, "document".into()));
    Err(Box::new(structural(
        type_rule(policy).as_ref(),
        &shown,
        format!("the document is of no kind this policy knows; a document has {}", kinds.join(" or ")),
        doc,
        span,
    )))
}

/// The kind whose structural rules report a document whose kind cannot be
/// known (it does not parse, or is no mapping): the kind an empty mapping is
/// of (the shipped library's security binding, the document a user checks
/// first), else the first kind. Never a kind picked by declaration order
/// alone, which would point the finding's help at an unrelated clause.
pub fn unknown_kind(policy: &Policy) -> Option<&DocumentDef> {
    let selected = policy.documents.iter().enumerate().find(|(_, d)| match &d.selector {
        SelectorDef::Keys(tests) => tests.iter().all(|t| matches!(t.test, KeyCondDef::Absent)),
        SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => false,
    });
    selected.map(|(_, d)| d).or_else(|| policy.documents.first())
}

/// What a `ref` field's path turned out to be.
pub enum Resolved<'a> {
    /// The file, read and parsed: document `doc` of the deployment.
    Loaded { doc: u32, root: &'a Node, text: std::sync::Arc<str>, raw: Option<std::sync::Arc<[u8]>> },
    /// The file was read but is not well-formed (as JSON or YAML: its text
    /// is still the content of a `ref string`).
    Broken { doc: u32, error: SyntaxError, text: std::sync::Arc<str>, raw: Option<std::sync::Arc<[u8]>> },
    /// The file was not read, and why.
    Refused(String),
}

/// What conforming a document needs besides the policy and the document.
pub struct Env<'a> {
    /// Structural rule ids that replace the document kind's (a lower layer's `unknown_key`).
    pub overrides: &'a Checks,
    /// Resolves a `ref` field's path.
    pub resolve: &'a dyn Fn(&str) -> Resolved<'a>,
    /// A lower layer's document: a partial document of its kind's shape,
    /// whose required keys may be left out (the layers above say them).
    pub partial: bool,
}

pub(crate) fn structural(check: Option<&CheckDef>, subject: &str, message: String, doc: u32, span: Span) -> Finding {
    Finding {
        rule: check.map(|c| c.rule.clone()).unwrap_or_else(|| "schema".into()),
        outcome: Outcome::Fail,
        subject: subject.into(),
        message,
        location: Some((doc, span)),
        policy: check.map(|c| c.loc),
        labels: Vec::new(),
        bound: Vec::new(),
        trace: Vec::new(),
        place: crate::diagnostic::Place::default(),
    }
}

/// Conforms a document of kind `kind` (its index in the deployment is `doc`).
/// Every structural rule of the kind gets an outcome: its failures, or a pass.
pub fn conform(policy: &Policy, kind: DocKindId, doc: u32, root: &Node, env: &Env<'_>) -> (Val, Vec<Finding>) {
    let (value, findings, _) = conform_counting(policy, kind, doc, root, env, false);
    (value, findings)
}

/// [`conform`], with its PASS outcomes counted instead of built when
/// `count` (for a caller that needs only their number: see
/// `check::run_wanting`); the count is the number of PASS findings
/// [`conform`] gives.
pub(crate) fn conform_counting(
    policy: &Policy,
    kind: DocKindId,
    doc: u32,
    root: &Node,
    env: &Env<'_>,
    count: bool,
) -> (Val, Vec<Finding>, usize) {
    let def = &policy.documents[kind as usize];
    let mut checks: [Option<&CheckDef>; CHECK_KINDS] = std::array::from_fn(|i| def.checks[i].as_ref());
    for (i, c) in env.overrides.iter().enumerate() {
        if c.is_some() {
            checks[i] = c.as_ref();
        }
    }
    let mut cx = Cx {
        policy,
        env,
        doc,
        findings: Vec::new(),
        overrides: env.overrides,
        checks,
        open: false,
        keys: Vec::new(),
        bound_subjects: HashMap::new(),
        unique_subjects: HashMap::new(),
        shape: shape(policy),
        walked: HashSet::new(),
        attached: HashMap::new(),
        files: HashMap::new(),
        synthesized: String::new(),
    };
    cx.forbidden(root, &mut Vec::new());
    let value = cx.value(root, &Ty::Record(def.record), None, "");

    // A pass for every structural rule that found nothing.
    // The rule ids are borrowed from the policy and the findings, not copied.
    let mut rules: Vec<(&str, Loc)> = Vec::with_capacity(32);
    for c in checks.iter().take(CHECK_MISSING_KEY + 1).flatten() {
        rules.push((&c.rule, c.loc));
    }
    for f in cx.shape.forbids(policy) {
        rules.push((&f.rule, f.loc));
    }
    let records = &cx.shape.reachable[kind as usize];
    for r in records.iter().skip(1).map(|r| &policy.records[*r as usize]) {
        rules.extend(r.checks.iter().flatten().map(|c| (c.rule.as_str(), c.loc)));
    }
    for r in records.iter().map(|r| &policy.records[*r as usize]) {
        rules.extend(r.fields.iter().filter_map(|f| f.invalid.as_ref()).map(|c| (c.rule.as_str(), c.loc)));
    }
    let mut findings = std::mem::take(&mut cx.findings);
    let failed: HashSet<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut counted = 0;
    let mut passes = Vec::with_capacity(if count { 0 } else { rules.len() });
    for (rule, loc) in rules {
        if !failed.contains(rule) && seen.insert(rule) {
            if count {
                counted += 1;
            } else {
                passes.push(pass(rule, "document", loc, None));
            }
        }
    }
    findings.append(&mut passes);
    // Bounds and uniqueness: a pass per subject checked, or not applicable.
    let empty = HashMap::new();
    for r in records.iter().map(|r| &policy.records[*r as usize]) {
        for f in &r.fields {
            let mut checks: Vec<(&str, Loc, &Subjects)> = Vec::new();
            for b in &f.bounds {
                checks.push((&b.rule, b.loc, cx.bound_subjects.get(&b.rule).unwrap_or(&empty)));
            }
            if let Some(u) = &f.unique {
                checks.push((&u.rule, u.loc, cx.unique_subjects.get(&u.rule).unwrap_or(&empty)));
            }
            for (rule, loc, subjects) in checks {
                if !seen.insert(rule) {
                    continue;
                }
                if subjects.is_empty() {
                    findings.push(Finding {
                        rule: rule.into(),
                        outcome: Outcome::NotApplicable,
                        subject: "document".into(),
                        message: format!("the document sets no `{}`", f.name),
                        location: None,
                        policy: Some(loc),
                        labels: vec![],
                        bound: vec![],
                        trace: Vec::new(),
                        place: crate::diagnostic::Place::about(&def.binder),
                    });
                }
                if count {
                    counted += subjects.values().filter(|(o, _)| *o == Outcome::Pass).count();
                    continue;
                }
                let mut passed: Vec<(&String, &Option<Span>)> =
                    subjects.iter().filter(|(_, (o, _))| *o == Outcome::Pass).map(|(s, (_, sp))| (s, sp)).collect();
                passed.sort();
                for (subject, span) in passed {
                    findings.push(pass(rule, subject, loc, span.map(|s| (doc, s))));
                }
            }
        }
    }
    (value, findings, counted)
}

/// What conforming needs of a policy besides the document, computed once
/// per policy and kept in it (`Derived::conform`): not once per document, as
/// every document of a `--each` run is conformed against the same policy.
pub(crate) struct Shape {
    /// The forbidden keys of every document kind, sorted by key, each as the
    /// document kind and index of its first declaration (see [`Shape::forbid`]).
    forbids: Vec<(u32, u32)>,
    /// Bit `n % 64` set for each length `n` of a forbidden key: most keys
    /// of a document are refused by their length alone.
    forbid_lengths: u64,
    /// Per document kind, the records its values can hold, its own first.
    reachable: Vec<Vec<RecordId>>,
    /// Per record, whether a value of it can hold a `ref` field, at any depth.
    refs: Vec<bool>,
    /// Per record, the [`signature`] of each field's name, in order: a key
    /// is compared with the names whose signature is its own.
    names: Vec<Vec<u64>>,
}

impl Shape {
    fn of(policy: &Policy) -> Shape {
        // A key forbidden `anywhere` is refused in every document the policy
        // reads, of any kind, and in every file a document's `ref` field
        // names. The first declaration of a key names its rule.
        let mut forbids: Vec<(u32, u32)> = Vec::new();
        for (d, doc) in policy.documents.iter().enumerate() {
            for (i, f) in doc.forbids.iter().enumerate() {
                let known = forbids.iter().any(|&(e, j)| policy.documents[e as usize].forbids[j as usize].key == f.key);
                if !known {
                    forbids.push((d as u32, i as u32));
                }
            }
        }
        let key = |&(d, i): &(u32, u32)| policy.documents[d as usize].forbids[i as usize].key.as_str();
        forbids.sort_by(|a, b| key(a).cmp(key(b)));
        let forbid_lengths = forbids.iter().fold(0u64, |m, f| m | 1 << (key(f).len() % 64));
        let reachable = policy.documents.iter().map(|d| reachable(policy, d.record)).collect();
        // A record holds a `ref` field if one of its fields is one, or holds
        // a record that does: settled by passes until nothing changes (the
        // records may refer to each other in a cycle).
        let mut refs = vec![false; policy.records.len()];
        loop {
            let mut changed = false;
            for (r, def) in policy.records.iter().enumerate() {
                if !refs[r] && def.fields.iter().any(|f| f.is_ref || ty_refs(&refs, &f.ty)) {
                    refs[r] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let names = policy.records.iter().map(|r| r.fields.iter().map(|f| signature(&f.name)).collect()).collect();
        Shape { forbids, forbid_lengths, reachable, refs, names }
    }

    /// The index of record `r`'s field named `key` (the first, as [`RecordDef::field`] finds it).
    fn field(&self, r: RecordId, def: &RecordDef, key: &str) -> Option<usize> {
        let Some(names) = self.names.get(r as usize) else { return def.field(key) };
        let sig = signature(key);
        names.iter().enumerate().find(|&(i, n)| *n == sig && def.fields[i].name == key).map(|(i, _)| i)
    }

    /// The forbidden keys, in the order of their keys.
    fn forbids<'p>(&self, policy: &'p Policy) -> impl Iterator<Item = &'p ForbidDef> {
        self.forbids.iter().map(|&(d, i)| &policy.documents[d as usize].forbids[i as usize])
    }

    /// The declaration that forbids `key`, if one does.
    fn forbid<'p>(&self, policy: &'p Policy, key: &str) -> Option<&'p ForbidDef> {
        if self.forbid_lengths & (1 << (key.len() % 64)) == 0 {
            return None;
        }
        self.forbids(policy).find(|f| f.key == key)
    }
}

/// A name's length and its first and last bytes, in one word: two names
/// that differ in one of them are not compared byte by byte.
fn signature(name: &str) -> u64 {
    let b = name.as_bytes();
    let (first, last) = (b.first().copied().unwrap_or(0), b.last().copied().unwrap_or(0));
    (b.len() as u64) << 16 | u64::from(first) << 8 | u64::from(last)
}

/// Whether a value of `ty` can hold a `ref` field (`refs`: per record).
fn ty_refs(refs: &[bool], ty: &Ty) -> bool {
    match ty {
        Ty::Record(r) => refs.get(*r as usize).copied().unwrap_or(false),
        Ty::List(t) | Ty::Map(_, t) => ty_refs(refs, t),
        _ => false,
    }
}

/// The policy's [`Shape`], computed on first use.
fn shape(policy: &Policy) -> &Shape {
    policy.derived.conform.get_or_init(|| Shape::of(policy))
}

/// The records a document kind's values can hold, its own first.
fn reachable(policy: &Policy, root: RecordId) -> Vec<RecordId> {
    fn walk(policy: &Policy, ty: &Ty, out: &mut Vec<RecordId>) {
        match ty {
            Ty::Record(r) if !out.contains(r) => {
                out.push(*r);
                for f in &policy.records[*r as usize].fields {
                    walk(policy, &f.ty, out);
                }
            }
            Ty::List(t) | Ty::Map(_, t) => walk(policy, t, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(policy, &Ty::Record(root), &mut out);
    out
}

/// The paths a document's `ref` fields name, in the order [`conform`] asks
/// its resolver for them (each as often as it asks), without conforming it:
/// the same descent through the schema, with no values built and no
/// findings, and none into a value whose type holds no `ref` field.
/// Files named in the files it names are not followed (the resolver that
/// reads nothing, which this stands for, refuses them).
// INVARIANT: follows `Cx::record`, `Cx::map`, `Cx::value` and
// `Cx::reference` step for step wherever they can reach `reference`; the
// unit tests compare the two on every document of the repository.
pub fn references(policy: &Policy, kind: DocKindId, root: &Node) -> Vec<String> {
    let mut walk = Refs { policy, shape: shape(policy), out: Vec::new() };
    if let Some(def) = policy.documents.get(kind as usize) {
        walk.value(root, &Ty::Record(def.record), None);
    }
    walk.out
}

struct Refs<'a> {
    policy: &'a Policy,
    shape: &'a Shape,
    out: Vec<String>,
}

impl Refs<'_> {
    fn value(&mut self, node: &Node, ty: &Ty, field: Option<&FieldDef>) {
        // A `ref` field's own type may hold no record (`map K -> ref string`).
        if !field.is_some_and(|f| f.is_ref) && !ty_refs(&self.shape.refs, ty) {
            return;
        }
        match (ty, &node.kind) {
            (Ty::Record(r), NodeKind::Map(entries)) => self.record(*r, entries),
            (Ty::List(elem), NodeKind::List(items)) => {
                for item in items {
                    self.value(item, elem, field);
                }
            }
            (Ty::Map(k, v), NodeKind::Map(entries)) => self.map(k, v, entries, field),
            (Ty::List(elem), _) if field.is_some_and(|f| f.one) && !matches!(node.kind, NodeKind::Null) => {
                self.value(node, elem, field)
            }
            _ => {}
        }
    }

    /// `ty` is the type the field's path names (a map's value type for `map K -> ref T`).
    fn reference(&mut self, node: &Node, ty: &Ty, field: &FieldDef) {
        match &node.kind {
            NodeKind::Str(target) => self.out.push(target.clone()),
            _ => self.value(node, ty, Some(field)),
        }
    }

    fn record(&mut self, r: RecordId, entries: &[crate::document::Entry]) {
        let def = &self.policy.records[r as usize];
        let duplicated = duplicated(entries, false);
        let rest = def.field("*").filter(|&fi| matches!(def.fields[fi].ty, Ty::Map(..)));
        let mut others: Vec<&crate::document::Entry> = Vec::new();
        let mut rest_set = false;
        for (i, e) in entries.iter().enumerate() {
            if self.shape.forbid(self.policy, &e.key).is_some() {
                continue;
            }
            let Some(fi) = self.shape.field(r, def, &e.key) else {
                if let Some(Ty::Map(_, value_ty)) = rest.map(|ri| &def.fields[ri].ty)
                    && (!matches!(**value_ty, Ty::Record(_)) || matches!(e.value.kind, NodeKind::Map(_)))
                {
                    others.push(e);
                }
                continue;
            };
            rest_set |= Some(fi) == rest;
            let field = &def.fields[fi];
            if duplicated.contains(&i) || (field.nullable && matches!(e.value.kind, NodeKind::Null)) {
                continue;
            }
            if field.is_ref {
                self.reference(&e.value, &field.ty, field);
            } else {
                self.value(&e.value, &field.ty, Some(field));
            }
        }
        if let Some(ri) = rest
            && !others.is_empty()
            && !rest_set
            && let Ty::Map(key_ty, value_ty) = &def.fields[ri].ty
        {
            let others: Vec<crate::document::Entry> = others.into_iter().cloned().collect();
            self.map(key_ty, value_ty, &others, Some(&def.fields[ri]));
        }
    }

    fn map(&mut self, key_ty: &Ty, value_ty: &Ty, entries: &[crate::document::Entry], field: Option<&FieldDef>) {
        if !field.is_some_and(|f| f.is_ref) && !ty_refs(&self.shape.refs, value_ty) {
            return;
        }
        let duplicated = duplicated(entries, *key_ty == Ty::Id);
        let mut keys: Vec<Val> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if self.shape.forbid(self.policy, &e.key).is_some() {
                continue;
            }
            let located = |kind| Val::new(kind, Origin::Document { doc: 0, span: e.key_span });
            let key = match key_ty {
                Ty::Enum(en) => match self.policy.enums[*en as usize].variants.iter().position(|v| *v == e.key) {
                    Some(v) => located(ValKind::Enum(*en, v as u32)),
                    None => continue,
                },
                Ty::Id if !is_identifier(&e.key) => continue,
                Ty::Id => located(ValKind::Id(e.key.as_str().into())),
                _ => located(ValKind::Str(e.key.as_str().into())),
            };
            if duplicated.contains(&i) {
                keys.push(key);
                continue;
            }
            if keys.iter().any(|k| k.same(&key) == Some(true)) {
                continue;
            }
            keys.push(key);
            match field {
                Some(f) if f.is_ref => self.reference(&e.value, value_ty, f),
                _ => self.value(&e.value, value_ty, field),
            }
        }
    }
}

/// The indices of the entries whose key appears earlier or later too, as
/// [`Cx::duplicates`] finds them, without reporting them.
fn duplicated(entries: &[crate::document::Entry], nocase: bool) -> HashSet<usize> {
    repeated_keys(entries, nocase).into_iter().flat_map(|(later, first)| [later, first]).collect()
}

/// Each entry whose key appeared earlier, with the first entry of that key,
/// `(later, first)`, in the entries' order. Keys that are identifiers
/// (`nocase`) are one key in any case. A small mapping is compared pair by
/// pair, which allocates nothing when no key repeats; a larger one through
/// a map of the keys seen.
fn repeated_keys(entries: &[crate::document::Entry], nocase: bool) -> Vec<(usize, usize)> {
    let same = |a: &str, b: &str| if nocase { same_identifier(a, b) } else { a == b };
    let mut pairs = Vec::new();
    if entries.len() <= 16 {
        for (i, e) in entries.iter().enumerate() {
            if let Some(j) = entries[..i].iter().position(|f| same(&f.key, &e.key)) {
                pairs.push((i, j));
            }
        }
        return pairs;
    }
    let mut first: HashMap<IdKey<'_>, usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        let key = if nocase { IdKey::Id(&e.key) } else { IdKey::Str(&e.key) };
        match first.get(&key) {
            Some(&j) => pairs.push((i, j)),
            None => {
                first.insert(key, i);
            }
        }
    }
    pairs
}

fn pass(rule: &str, subject: &str, loc: Loc, location: Option<(u32, Span)>) -> Finding {
    Finding {
        rule: rule.into(),
        outcome: Outcome::Pass,
        subject: subject.into(),
        message: String::new(),
        location,
        policy: Some(loc),
        labels: vec![],
        bound: vec![],
        trace: Vec::new(),
        place: crate::diagnostic::Place::default(),
    }
}

/// Per subject checked: its outcome and where it is.
type Subjects = HashMap<String, (Outcome, Option<Span>)>;

struct Cx<'a, 'r> {
    policy: &'a Policy,
    env: &'a Env<'r>,
    /// Rule ids that win over a record's own (a lower layer's).
    overrides: &'a Checks,
    doc: u32,
    findings: Vec<Finding>,
    /// The structural rule ids in force for the record being read.
    checks: [Option<&'a CheckDef>; CHECK_KINDS],
    /// The record being read is open (`on unknown_key allow`, its own or
    /// an enclosing record's, unless it names an `unknown_key` rule).
    open: bool,
    /// Enclosing enumeration keys (`C3` of `verification_topology.C3`), innermost last.
    keys: Vec<(EnumId, u32)>,
    /// Per bound rule, each subject checked and its outcome.
    bound_subjects: HashMap<String, Subjects>,
    unique_subjects: HashMap<String, Subjects>,
    /// Every forbidden key of the policy, and the rest of its [`Shape`].
    shape: &'a Shape,
    /// The attached files already searched for forbidden keys (a file named twice is searched once).
    walked: HashSet<u32>,
    /// Attached files already read, by file, type and enclosing keys: a file
    /// named by many fields is conformed once (and its findings reported once).
    attached: HashMap<AttachedKey, Val>,
    /// The files `ref string` fields name, by file and path as written:
    /// every field that names one shares one value.
    files: HashMap<(u32, String), std::sync::Arc<FileVal>>,
    /// The keys of the left-out values being read as empty, outermost
    /// first, as a key path suffix: they have no node of their own, so what
    /// is missing inside them is placed below the node that lacks them.
    synthesized: String,
}

/// An attached file as it is conformed: the file, the type it is read as,
/// and the enumeration keys around the field that names it.
type AttachedKey = (u32, Ty, Vec<(EnumId, u32)>);

/// One step of a path into a document: a key, or an index into a list.
enum Segment<'n> {
    Key(&'n str),
    Index(usize),
}

/// `a.b[2].c`, as [`join`] and list indices write it.
fn render_path(path: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Segment::Key(k) if out.is_empty() => out.push_str(k),
            Segment::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Segment::Index(i) => {
                use std::fmt::Write as _;
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// `a.b` from `a` and `b`; `b` alone at the top.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        return key.to_string();
    }
    // Built by hand: `format!` costs several times as much, once per key of every document.
    let mut joined = String::with_capacity(path.len() + 1 + key.len());
    joined.push_str(path);
    joined.push('.');
    joined.push_str(key);
    joined
}

/// `a.b[2]` from `a.b` and 2: the path allocated once, not through `format!`.
fn indexed(path: &str, i: usize) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    out.push_str(path);
    crate::keypath::push_index(&mut out, i);
    out
}

fn describe(node: &Node) -> String {
    match &node.kind {
        NodeKind::Null => "null".into(),
        NodeKind::Bool(b) => format!("`{b}`"),
        NodeKind::Int(i) => format!("`{i}`"),
        NodeKind::BigInt(i) => format!("`{i}`"),
        NodeKind::Float(f) if f.abs() >= 1e16 => format!("the number `{f:e}`"),
        // `1.0` is read as a number: say it as written, not as `1`.
        NodeKind::Float(f) if f.fract() == 0.0 => format!("the number `{f:.1}`"),
        NodeKind::Float(f) => format!("the number `{f}`"),
        NodeKind::Str(s) => format!("the string `{s}`"),
        NodeKind::List(_) => "a list".into(),
        NodeKind::Map(_) => "a mapping".into(),
    }
}

impl<'a> Cx<'a, '_> {
    fn fail(&mut self, check: usize, subject: &str, message: String, span: Span) {
        let f = structural(self.checks[check], subject, message, self.doc, span);
        self.findings.push(f);
    }

    fn located(&self, kind: ValKind, span: Span) -> Val {
        Val::new(kind, Origin::Document { doc: self.doc, span })
    }

    /// An invalid value: marked as such (unknown to rules, `present` and
    /// `??` included), located for explanations.
    fn invalid(&self, span: Span) -> Val {
        Val::invalid(self.doc, span)
    }

    fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "a boolean".into(),
            Ty::Int => "an integer".into(),
            Ty::Str => "a string".into(),
            Ty::Id => "an identifier (a string, not empty, without white space or control characters)".into(),
            Ty::Enum(e) => {
                let d = &self.policy.enums[*e as usize];
                let vs: Vec<String> = d.variants.iter().map(|v| format!("`{v}`")).collect();
                format!("one of {}", vs.join(", "))
            }
            Ty::Record(_) | Ty::Map(..) => "a mapping".into(),
            Ty::List(_) => "a list".into(),
            _ => "a value".into(),
        }
    }

    fn type_error(&mut self, node: &Node, ty: &Ty, path: &str) -> Val {
        let want = self.ty_name(ty);
        let mut message = format!("`{path}` must be {want}, found {}", describe(node));
        if let (Ty::Str, NodeKind::Int(_) | NodeKind::BigInt(_) | NodeKind::Float(_) | NodeKind::Bool(_)) =
            (ty, &node.kind)
        {
            message.push_str("; quote it to write a string");
        }
        if let (Ty::Enum(e), NodeKind::Str(s)) = (ty, &node.kind) {
            let d = &self.policy.enums[*e as usize];
            if let Some(near) = did_you_mean(s, d.variants.iter().map(String::as_str)) {
                message.push_str(&format!("; did you mean `{near}`?"));
            }
        }
        self.fail(CHECK_TYPE, path, message, node.span);
        self.invalid(node.span)
    }

    /// Reports every forbidden key, wherever it is. The path is kept as
    /// segments and written out only for a key that is reported.
    fn forbidden<'n>(&mut self, node: &'n Node, path: &mut Vec<Segment<'n>>) {
        if self.shape.forbids.is_empty() {
            return;
        }
        match &node.kind {
            NodeKind::Map(entries) => {
                for e in entries {
                    path.push(Segment::Key(&e.key));
                    if let Some(f) = self.shape.forbid(self.policy, &e.key) {
                        let here = render_path(path);
                        self.findings.push(Finding {
                            rule: f.rule.clone(),
                            outcome: Outcome::Fail,
                            subject: here,
                            message: format!("`{}` is not accepted anywhere: a bound has no escape key", e.key),
                            location: Some((self.doc, e.key_span)),
                            policy: Some(f.loc),
                            labels: vec![],
                            bound: vec![],
                            trace: Vec::new(),
                            place: crate::diagnostic::Place::default(),
                        });
                    }
                    self.forbidden(&e.value, path);
                    path.pop();
                }
            }
            NodeKind::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Segment::Index(i));
                    self.forbidden(item, path);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    fn is_forbidden(&self, key: &str) -> bool {
        self.shape.forbid(self.policy, key).is_some()
    }

    /// `field` is the field being read, for its integer minimum, default and bounds.
    fn value(&mut self, node: &Node, ty: &Ty, field: Option<&FieldDef>, path: &str) -> Val {
        let int_min = field.and_then(|f| f.int_min);
        match (ty, &node.kind) {
            (Ty::Error, _) => self.invalid(node.span),
            (Ty::Bool, NodeKind::Bool(b)) => self.located(ValKind::Bool(*b), node.span),
            (Ty::Int, NodeKind::Int(_) | NodeKind::BigInt(_)) => {
                // Beyond 64 bits: below every minimum when negative, above it otherwise.
                let (kind, below, shown) = match &node.kind {
                    NodeKind::BigInt(i) => (ValKind::BigInt(i.as_str().into()), i.starts_with('-'), i.to_string()),
                    NodeKind::Int(i) => (ValKind::Int(*i), int_min.is_some_and(|min| *i < min), i.to_string()),
                    _ => return self.invalid(node.span),
                };
                if let Some(min) = int_min
                    && below
                {
                    self.fail(
                        CHECK_TYPE,
                        path,
                        format!("`{path}` must be an integer of at least {min}, found `{shown}`"),
                        node.span,
                    );
                    return self.invalid(node.span);
                }
                self.located(kind, node.span)
            }
            (Ty::Str, NodeKind::Str(s)) if s.is_empty() && field.is_some_and(|f| f.nonempty) => {
                self.fail(CHECK_TYPE, path, format!("`{path}` must not be empty"), node.span);
                self.invalid(node.span)
            }
            (Ty::Str, NodeKind::Str(s)) => self.located(ValKind::Str(s.as_str().into()), node.span),
            (Ty::Id, NodeKind::Str(s)) if is_identifier(s) => self.located(ValKind::Id(s.as_str().into()), node.span),
            (Ty::Enum(e), NodeKind::Str(s)) => {
                match self.policy.enums[*e as usize].variants.iter().position(|v| v == s) {
                    Some(v) => self.located(ValKind::Enum(*e, v as u32), node.span),
                    None => self.type_error(node, ty, path),
                }
            }
            (Ty::Record(r), NodeKind::Map(entries)) => self.record(*r, entries, node.span, path),
            (Ty::List(elem), NodeKind::List(items)) => {
                let mut vals: Vec<Val> = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    // The path is written out only for what needs it (an error, a record).
                    let v = match self.scalar(item, elem, field) {
                        Some(v) => v,
                        None => self.value(item, elem, field, &indexed(path, i)),
                    };
                    vals.push(v);
                }
                if let Some(u) = field.and_then(|f| f.unique.as_ref()) {
                    self.unique(u, &vals, path, node.span);
                }
                self.located(ValKind::List(Arc::new(vals)), node.span)
            }
            (Ty::Map(k, v), NodeKind::Map(entries)) => self.map(k, v, entries, field, node.span, path),
            // `or one`: a single value stands for a list of one.
            (Ty::List(elem), _) if field.is_some_and(|f| f.one) && !matches!(node.kind, NodeKind::Null) => {
                let one = self.value(node, elem, field, path);
                self.located(ValKind::List(Arc::new(vec![one])), node.span)
            }
            _ => self.type_error(node, ty, path),
        }
    }

    /// A well-typed scalar, read as [`Cx::value`] reads it, without a path;
    /// `None` for anything else (which `value` then reads, path and all).
    fn scalar(&self, node: &Node, ty: &Ty, field: Option<&FieldDef>) -> Option<Val> {
        let int_min = field.and_then(|f| f.int_min);
        Some(match (ty, &node.kind) {
            (Ty::Bool, NodeKind::Bool(b)) => self.located(ValKind::Bool(*b), node.span),
            (Ty::Int, NodeKind::Int(i)) if int_min.is_none_or(|m| *i >= m) => self.located(ValKind::Int(*i), node.span),
            (Ty::Int, NodeKind::BigInt(i)) if int_min.is_none() || !i.starts_with('-') => {
                self.located(ValKind::BigInt(i.as_str().into()), node.span)
            }
            (Ty::Str, NodeKind::Str(s)) if !(s.is_empty() && field.is_some_and(|f| f.nonempty)) => {
                self.located(ValKind::Str(s.as_str().into()), node.span)
            }
            (Ty::Id, NodeKind::Str(s)) if is_identifier(s) => self.located(ValKind::Id(s.as_str().into()), node.span),
            (Ty::Enum(e), NodeKind::Str(s)) => {
                let v = self.policy.enums[*e as usize].variants.iter().position(|v| v == s)?;
                self.located(ValKind::Enum(*e, v as u32), node.span)
            }
            _ => return None,
        })
    }

    fn unique(&mut self, check: &CheckDef, vals: &[Val], path: &str, span: Span) {
        let mut seen: HashMap<crate::value::IdKey<'_>, &Val> = HashMap::new();
        let mut clean = true;
        for v in vals {
            let Some(id) = v.id_key(self.policy) else { continue };
            if let Some(first) = seen.get(&id) {
                clean = false;
                let here = v.origin.document_span().map(|(_, s)| s).unwrap_or(span);
                let label = v.label(self.policy).unwrap_or_default();
                let mut f = structural(
                    Some(check),
                    &format!("{path}[{label}]"),
                    format!("`{label}` is declared twice in `{path}`; it counts once"),
                    self.doc,
                    here,
                );
                if let Some((d, s)) = first.origin.document_span() {
                    f.labels.push((d, s, "first declared here".into()));
                }
                self.findings.push(f);
            } else {
                seen.insert(id, v);
            }
        }
        if clean {
            self.unique_subjects
                .entry(check.rule.clone())
                .or_default()
                .insert(path.into(), (Outcome::Pass, Some(span)));
        }
    }

    fn map(
        &mut self,
        key_ty: &Ty,
        value_ty: &Ty,
        entries: &[crate::document::Entry],
        field: Option<&FieldDef>,
        span: Span,
        path: &str,
    ) -> Val {
        let duplicated = self.duplicates(entries, path, *key_ty == Ty::Id);
        let mut out: Vec<(Val, Val)> = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if self.is_forbidden(&e.key) {
                continue;
            }
            let key = match key_ty {
                Ty::Enum(en) => match self.policy.enums[*en as usize].variants.iter().position(|v| *v == e.key) {
                    Some(v) => self.located(ValKind::Enum(*en, v as u32), e.key_span),
                    None => {
                        let d = &self.policy.enums[*en as usize];
                        let vs: Vec<String> = d.variants.iter().map(|v| format!("`{v}`")).collect();
                        let mut message =
                            format!("unknown key `{}` in `{path}`; the keys are {}", e.key, vs.join(", "));
                        if let Some(near) = did_you_mean(&e.key, d.variants.iter().map(String::as_str)) {
                            message = format!("unknown key `{}` in `{path}`; did you mean `{near}`?", e.key);
                        }
                        self.fail(CHECK_UNKNOWN_KEY, &join(path, &e.key), message, e.key_span);
                        continue;
                    }
                },
                Ty::Id if !is_identifier(&e.key) => {
                    let message =
                        format!("the key `{}` in `{path}` must be {}", e.key.escape_debug(), self.ty_name(key_ty));
                    self.fail(CHECK_TYPE, &join(path, &e.key), message, e.key_span);
                    continue;
                }
                Ty::Id => self.located(ValKind::Id(e.key.as_str().into()), e.key_span),
                _ => self.located(ValKind::Str(e.key.as_str().into()), e.key_span),
            };
            if duplicated.contains(&i) {
                out.push((key, self.invalid(e.value.span)));
                continue;
            }
            if out.iter().any(|(k, _)| k.same(&key) == Some(true)) {
                continue; // a duplicate, already reported and kept as unknown
            }
            let pushed = if let ValKind::Enum(en, v) = key.kind {
                self.keys.push((en, v));
                true
            } else {
                false
            };
            // A well-typed scalar with no bound to check needs no path written out.
            if field.is_none_or(|f| !f.is_ref && f.bounds.is_empty())
                && let Some(val) = self.scalar(&e.value, value_ty, field)
            {
                if pushed {
                    self.keys.pop();
                }
                out.push((key, val));
                continue;
            }
            let here = join(path, &e.key);
            let val = match field {
                // `map K -> ref T`: each value names a file, read as the field's values are.
                Some(f) if f.is_ref => {
                    let each = FieldDef { ty: value_ty.clone(), ..f.clone() };
                    self.reference(&e.value, &each, &here)
                }
                _ => self.value(&e.value, value_ty, field, &here),
            };
            if let Some(f) = field {
                self.bounds(f, &val, &here);
            }
            if pushed {
                self.keys.pop();
            }
            out.push((key, val));
        }
        // `complete`: every variant is a required key; a missing one is missing evidence.
        if let (Ty::Enum(en), Some(true), false) = (key_ty, field.map(|f| f.complete), self.env.partial) {
            let count = self.policy.enums[*en as usize].variants.len() as u32;
            for v in 0..count {
                if !out.iter().any(|(k, _)| matches!(k.kind, ValKind::Enum(_, x) if x == v)) {
                    let name = self.policy.variant_name(*en, v);
                    let here = join(path, name);
                    let check = if self.checks[CHECK_MISSING_KEY].is_some() { CHECK_MISSING_KEY } else { CHECK_TYPE };
                    self.fail(check, &here, format!("`{path}` requires the key `{name}`"), span);
                    let val = Val::missing(here, Some(self.doc), span);
                    out.push((Val::new(ValKind::Enum(*en, v), val.origin.clone()), val));
                }
            }
        }
        // Absent is not a hole: every key of the enumeration takes its default.
        if let (Ty::Enum(en), Some(default)) = (key_ty, field.and_then(|f| f.default.as_ref())) {
            let count = self.policy.enums[*en as usize].variants.len() as u32;
            for v in 0..count {
                if !out.iter().any(|(k, _)| matches!(k.kind, ValKind::Enum(_, x) if x == v)) {
                    self.keys.push((*en, v));
                    let name = self.policy.variant_name(*en, v);
                    let val = self.default(default, &join(path, name), span, self.below(name));
                    self.keys.pop();
                    out.push((Val::new(ValKind::Enum(*en, v), val.origin.clone()), val));
                }
            }
        }
        self.located(ValKind::Map(Arc::new(out)), span)
    }

    /// Indices of entries whose key appears earlier too; each is reported.
    /// Keys that are identifiers (`nocase`) are one key in any case.
    fn duplicates(&mut self, entries: &[crate::document::Entry], path: &str, nocase: bool) -> HashSet<usize> {
        let mut dup = HashSet::new();
        for (i, j) in repeated_keys(entries, nocase) {
            dup.insert(i);
            dup.insert(j);
            let e = &entries[i];
            let here = join(path, &e.key);
            let mut f = structural(
                self.checks[CHECK_DUPLICATE_KEY],
                &here,
                format!(
                    "key `{}` appears twice in {}; readers would disagree on which one counts, so neither does",
                    e.key,
                    if path.is_empty() { "the document".to_string() } else { format!("`{path}`") }
                ),
                self.doc,
                e.key_span,
            );
            f.labels.push((self.doc, entries[j].key_span, "first here".into()));
            self.findings.push(f);
        }
        dup
    }

    fn record(&mut self, r: RecordId, entries: &[crate::document::Entry], span: Span, path: &str) -> Val {
        let def = &self.policy.records[r as usize];
        let saved = self.checks;
        let saved_open = self.open;
        if def.open {
            self.open = true;
        } else if def.checks[CHECK_UNKNOWN_KEY].is_some() {
            self.open = false;
        }
        for (i, c) in def.checks.iter().enumerate() {
            if let Some(c) = c
                && self.overrides[i].is_none()
            {
                self.checks[i] = Some(c);
            }
        }
        let duplicated = self.duplicates(entries, path, false);
        let mut fields: Vec<Option<Val>> = vec![None; def.fields.len()];
        // A field named `*` (a map) holds every key the record does not
        // declare; of a map of records, those whose value is a mapping.
        let rest = def.field("*").filter(|&fi| matches!(def.fields[fi].ty, Ty::Map(..)));
        let mut others: Vec<crate::document::Entry> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if self.is_forbidden(&e.key) {
                continue;
            }
            let Some(fi) = self.shape.field(r, def, &e.key) else {
                if let Some(Ty::Map(_, value_ty)) = rest.map(|ri| &def.fields[ri].ty)
                    && (!matches!(**value_ty, Ty::Record(_)) || matches!(e.value.kind, NodeKind::Map(_)))
                {
                    others.push(e.clone());
                    continue;
                }
                let here = join(path, &e.key);
                // A selector key (`kind`) is part of every document; an open
                // record (`on unknown_key allow`) ignores the keys it does not declare.
                if self.open || (path.is_empty() && self.is_selector_key(&e.key)) {
                    continue;
                }
                let mut message = if path.is_empty() {
                    format!("unknown key `{}` at the top level", e.key)
                } else {
                    format!("unknown key `{}` in `{path}`", e.key)
                };
                if let Some(near) = did_you_mean(&e.key, def.fields.iter().map(|f| f.name.as_str())) {
                    message.push_str(&format!("; did you mean `{near}`?"));
                }
                self.fail(CHECK_UNKNOWN_KEY, &here, message, e.key_span);
                continue;
            };
            if duplicated.contains(&i) {
                fields[fi] = Some(self.invalid(e.value.span));
                continue;
            }
            let field = &def.fields[fi];
            // A field may name the rule its own type findings are of.
            let outer_type = field.invalid.as_ref().map(|c| self.checks[CHECK_TYPE].replace(c));
            let restore = |cx: &mut Self| {
                if let Some(t) = outer_type {
                    cx.checks[CHECK_TYPE] = t;
                }
            };
            // Null is a value of its own where the field admits it.
            if field.nullable && matches!(e.value.kind, NodeKind::Null) {
                fields[fi] = Some(self.located(ValKind::Null, e.value.span));
                restore(self);
                continue;
            }
            if !field.is_ref
                && field.bounds.is_empty()
                && let Some(v) = self.scalar(&e.value, &field.ty, Some(field))
            {
                fields[fi] = Some(v);
                restore(self);
                continue;
            }
            let here = join(path, &e.key);
            let val = if field.is_ref {
                self.reference(&e.value, field, &here)
            } else {
                self.value(&e.value, &field.ty, Some(field), &here)
            };
            if !matches!(field.ty, Ty::Map(..)) && !field.bounds.is_empty() {
                self.bounds(field, &val, &here);
            }
            restore(self);
            fields[fi] = Some(val);
        }
        if let Some(ri) = rest
            && !others.is_empty()
            && fields[ri].is_none()
            && let Ty::Map(key_ty, value_ty) = &def.fields[ri].ty
        {
            fields[ri] = Some(self.map(key_ty, value_ty, &others, Some(&def.fields[ri]), span, path));
        }
        let mut out = Vec::with_capacity(fields.len());
        for (fi, v) in fields.into_iter().enumerate() {
            let field = &def.fields[fi];
            out.push(match v {
                Some(v) => v,
                None => {
                    let here = join(path, &field.name);
                    let below = self.below(&field.name);
                    match &field.default {
                        Some(DefaultDef::Empty(loc)) => {
                            // Read as if the document had written it empty, so that its own defaults apply.
                            let empty = Node { span, kind: NodeKind::Map(Vec::new()) };
                            let outer = std::mem::replace(&mut self.synthesized, below.into());
                            let mut v = self.value(&empty, &field.ty, Some(field), &here);
                            self.synthesized = outer;
                            v.origin = Origin::policy(*loc);
                            v
                        }
                        Some(d) if !matches!(field.ty, Ty::Map(..)) => self.default(d, &here, span, below),
                        Some(_) => {
                            // A map left out entirely: every key takes its default.
                            let outer = std::mem::replace(&mut self.synthesized, below.to_string());
                            let mut m = match &field.ty {
                                Ty::Map(k, vt) => self.map(k, vt, &[], Some(field), span, &here),
                                _ => Val::unknown(),
                            };
                            self.synthesized = outer;
                            m.origin = Val::lacking_below(Absence::Unknown, here, Some(self.doc), span, below).origin;
                            m
                        }
                        None => {
                            if !field.optional && !self.env.partial {
                                let check = if self.checks[CHECK_MISSING_KEY].is_some() {
                                    CHECK_MISSING_KEY
                                } else {
                                    CHECK_TYPE
                                };
                                self.fail(
                                    check,
                                    &here,
                                    if path.is_empty() {
                                        format!("the key `{}` is required", field.name)
                                    } else {
                                        format!("`{path}` requires the key `{}`", field.name)
                                    },
                                    span,
                                );
                                if let Some(f) = self.findings.last_mut() {
                                    f.place.below = below.clone();
                                }
                                // Required and left out: missing evidence.
                                Val::lacking_below(Absence::Unknown, here, Some(self.doc), span, below)
                            } else {
                                // Optional without a default: a decided absence.
                                Val::lacking_below(Absence::Known, here, Some(self.doc), span, below)
                            }
                        }
                    }
                }
            });
        }
        self.checks = saved;
        self.open = saved_open;
        self.located(ValKind::Record(r, Arc::new(out)), span)
    }

    fn is_selector_key(&self, key: &str) -> bool {
        self.policy.documents.iter().any(|d| d.selector.tests().iter().any(|t| t.key == key))
    }

    /// A `ref` field: the record inline, or the file its path names. A `ref
    /// string` names a file of any content, which the policy does not read:
    /// its value is the path as written when the file was read, and absent,
    /// with the reason, when it was not.
    fn reference(&mut self, node: &Node, field: &FieldDef, path: &str) -> Val {
        let NodeKind::Str(target) = &node.kind else {
            return self.value(node, &field.ty, Some(field), path);
        };
        if field.ty == Ty::Str {
            return match (self.env.resolve)(target) {
                Resolved::Loaded { doc, text, raw, .. } | Resolved::Broken { doc, text, raw, .. } => {
                    let file = self
                        .files
                        .entry((doc, target.clone()))
                        .or_insert_with(|| std::sync::Arc::new(FileVal::new(target.as_str().into(), text, raw)))
                        .clone();
                    self.located(ValKind::File(file), node.span)
                }
                Resolved::Refused(reason) => Val::missing(format!("`{target}` ({reason})"), Some(self.doc), node.span),
            };
        }
        match (self.env.resolve)(target) {
            Resolved::Loaded { doc, root, .. } => {
                let key = (doc, field.ty.clone(), self.keys.clone());
                if let Some(done) = self.attached.get(&key) {
                    return done.clone();
                }
                let outer = std::mem::replace(&mut self.doc, doc);
                // The attached file is a document too: no escape key in it either.
                if self.walked.insert(doc) {
                    self.forbidden(root, &mut Vec::new());
                }
                let val = self.value(root, &field.ty, Some(field), path);
                self.doc = outer;
                self.attached.insert(key, val.clone());
                val
            }
            Resolved::Broken { doc, error, .. } => {
                // A broken file named by many fields is reported once.
                if self.walked.insert(doc) {
                    let f = structural(self.checks[CHECK_SYNTAX], path, error.message, doc, error.span);
                    self.findings.push(f);
                }
                self.invalid(node.span)
            }
            Resolved::Refused(reason) => Val::missing(format!("`{target}` ({reason})"), Some(self.doc), node.span),
        }
    }

    /// The matrix row for the nearest enclosing key of the matrix's enumeration.
    /// Borrowed from the policy: a bound is compared, not copied, per value checked.
    fn cell(&self, matrix: MatrixId, column: usize) -> Option<&'a Val> {
        let policy: &'a Policy = self.policy;
        let m = &policy.matrices[matrix as usize];
        let (_, v) = self.keys.iter().rev().find(|(e, _)| *e == m.key_enum)?;
        m.cells.get(*v as usize)?.get(column)
    }

    /// The value of a key left out: its default `d`. `below` is the key, as
    /// [`Cx::below`] writes it.
    fn default(&self, d: &DefaultDef, path: &str, span: Span, below: Box<str>) -> Val {
        let missing = || Val::lacking_below(Absence::Unknown, path, Some(self.doc), span, below.clone());
        match d {
            DefaultDef::Value(v) => v.clone(),
            DefaultDef::Empty(_) => missing(),
            DefaultDef::Column { matrix, column, .. } => self.cell(*matrix, *column).cloned().unwrap_or_else(missing),
        }
    }

    /// The keys from the node at hand to `key` below it, as a key path
    /// suffix: `key` alone, or below the keys of a left-out value being
    /// read as empty (which has no node of its own).
    fn below(&self, key: &str) -> Box<str> {
        // Sized for the key unquoted, so that the common case allocates once.
        let mut out = String::with_capacity(self.synthesized.len() + 1 + key.len());
        out.push_str(&self.synthesized);
        crate::keypath::push_key(&mut out, key);
        out.into()
    }

    /// Checks a value the document set against the field's tighten-only bounds.
    fn bounds(&mut self, field: &FieldDef, val: &Val, path: &str) {
        if !matches!(val.origin, Origin::Document { .. }) || val.is_absent() {
            return;
        }
        for b in &field.bounds {
            let Some(bound) = self.cell(b.matrix, b.column) else { continue };
            let Some(ok) = tight_enough(val, bound, b.kind) else { continue };
            let span = val.origin.document_span().map(|(_, s)| s);
            // The rule's id is copied once per document, not once per value checked.
            if !self.bound_subjects.contains_key(b.rule.as_str()) {
                self.bound_subjects.insert(b.rule.clone(), HashMap::new());
            }
            let Some(entry) = self.bound_subjects.get_mut(b.rule.as_str()) else { continue };
            if ok {
                entry.insert(path.into(), (Outcome::Pass, span));
                continue;
            }
            entry.insert(path.into(), (Outcome::Fail, span));
            let word = match b.kind {
                BoundKind::Floor => "floor",
                BoundKind::Ceiling => "ceiling",
            };
            let (v, w) = (val.display(self.policy), bound.display(self.policy));
            let relation = match val.kind {
                ValKind::Int(_) | ValKind::BigInt(_) if b.kind == BoundKind::Floor => "below",
                ValKind::Int(_) | ValKind::BigInt(_) => "above",
                _ => "looser than",
            };
            let matrix = &self.policy.matrices[b.matrix as usize];
            self.findings.push(Finding {
                // The refused value is the subject, so that `holds` sees it.
                bound: span.map(|s| vec![(self.doc, s)]).unwrap_or_default(),
                rule: b.rule.clone(),
                outcome: Outcome::Fail,
                subject: path.into(),
                message: format!("`{path}` is `{v}`, {relation} its {word} `{w}` ({}.{}); a binding may tighten a {word}, never loosen it", matrix.name, matrix.columns[b.column].name),
                location: span.map(|s| (self.doc, s)),
                policy: Some(b.loc),
                labels: vec![],
                trace: Vec::new(),
                place: crate::diagnostic::Place::default(),
            });
        }
    }
}

/// The direction a scalar of `ty` in `field` tightens along, if it has one:
/// a `tightest_first` enumeration, or an int or bool with a floor or ceiling.
/// Layers (a lower layer may only tighten) and versions (`--base`) judge by it.
pub(crate) fn direction(policy: &Policy, ty: &Ty, field: Option<&FieldDef>) -> Option<BoundKind> {
    match ty {
        Ty::Enum(e) if policy.enums[*e as usize].order == grail_lang::ast::EnumOrder::TightestFirst => {
            Some(BoundKind::Floor)
        }
        Ty::Int | Ty::Bool => field?.bounds.first().map(|b| b.kind),
        _ => None,
    }
}

/// Whether `v` is at `bound` or tighter; `None` when either is unknown.
pub fn tight_enough(v: &Val, bound: &Val, kind: BoundKind) -> Option<bool> {
    match (&v.kind, &bound.kind) {
        // Tightest first: a smaller index is tighter, whether the bound is a floor or a ceiling.
        (ValKind::Enum(e, a), ValKind::Enum(f, b)) if e == f => Some(a <= b),
        (ValKind::Int(_) | ValKind::BigInt(_), ValKind::Int(_) | ValKind::BigInt(_)) => {
            let order = v.as_int()?.cmp(&bound.as_int()?);
            Some(if kind == BoundKind::Floor { order.is_ge() } else { order.is_le() })
        }
        (ValKind::Bool(a), ValKind::Bool(b)) => Some(if kind == BoundKind::Floor { a >= b } else { a <= b }),
        _ => None,
    }
}
