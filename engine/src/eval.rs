//! Evaluates lowered rules over conformed documents, in three-valued logic:
//! an absent value makes what depends on it unknown, never true.

use foldhash::{HashMap, HashSet};
use std::sync::Arc;

use grail_lang::ast::Span;

use crate::diagnostic::{Finding, KeyPaths, Outcome, Provenance, Read, Step};
use crate::hir::*;
use crate::value::{Absence, FileVal, IdKey, Origin, Truth, Val, ValKind};

/// The documents a rule is evaluated over.
pub struct Roots<'a> {
    /// Per document kind, the one document (a layered kind's merged one)
    /// rules read through the kind's binder; `None` when the deployment has none.
    pub single: &'a [Option<Val>],
    /// Per document kind, every document of that kind, and its name.
    pub all: &'a [Vec<(String, Val)>],
    /// The layer each document of a layered kind was checked as.
    pub layers: &'a [crate::layers::DocLayer],
    /// The time of the check, in nanoseconds since the epoch, as the caller
    /// gave it; `now()` is missing evidence without it.
    pub now: Option<i128>,
    /// The files the invocation attached under recorded paths (`attached(p)`).
    pub given: &'a [Given],
    /// The named parameters of the invocation (`param("name")`), each a list of strings.
    pub params: &'a [Param],
    /// Set when some rule evaluated `now()`: the report then states the time of the check.
    pub now_read: std::cell::Cell<bool>,
    /// Where a PASS is counted instead of built, when the caller needs only
    /// the counts (`None`: every PASS is a [`Finding`], for `--verbose`,
    /// explanations and tests). A PASS is never what a later rule's `holds`
    /// reads, so counting it changes no other outcome.
    pub passes: Option<&'a std::cell::Cell<usize>>,
    /// The results of policy functions computed so far for these documents,
    /// which every rule evaluated over them reuses (see [`Memo`]).
    pub memo: Memo,
}

impl<'a> Roots<'a> {
    /// Documents alone: no layers, no time of check, no attached files or
    /// parameters, every PASS built, nothing memoised yet.
    pub fn of(single: &'a [Option<Val>], all: &'a [Vec<(String, Val)>]) -> Roots<'a> {
        Roots {
            single,
            all,
            layers: &[],
            now: None,
            given: &[],
            params: &[],
            now_read: Default::default(),
            passes: None,
            memo: Default::default(),
        }
    }
}

/// Per document set, the results of the calls of policy functions (see
/// [`CallHead`]): per judged document and function, the arguments of up to
/// [`MEMO_PER_FUNCTION`] calls and what evaluating the body gave: its value
/// (origins included), the steps it took and whether it read `now()`. A hit
/// takes the same steps and reads `now()` as the evaluation did, so the
/// limits and the report's time are as without it; when it is not within
/// the rule's steps left the body is evaluated. Explaining (values read are
/// recorded) never uses it.
#[derive(Default)]
pub struct Memo(std::cell::RefCell<HashMap<MemoKey, Vec<Memoised>>>);

/// The judged kind, the judged document's index among the subjects of the
/// kind, and the function.
type MemoKey = (DocKindId, usize, (u32, u32));

struct Memoised {
    /// The [`fingerprint`] of `args`: most argument lists that differ are
    /// told apart by it, without comparing values.
    print: u64,
    args: Vec<Val>,
    value: Val,
    steps: u64,
    now_read: bool,
}

/// The distinct argument lists kept per function and document: a function
/// called in a quantifier with a new argument per element is evaluated, not
/// looked up in a long list.
pub const MEMO_PER_FUNCTION: usize = 16;

/// The most arguments of a memoised call; a call of more is evaluated.
const MEMO_ARGS: usize = 8;

/// What an evaluator memoises in: the rule's calls and the judged document.
#[derive(Clone, Copy)]
pub struct Calls<'a> {
    pub heads: &'a [CallHead],
    pub memo: &'a Memo,
    pub subject: (DocKindId, usize),
}

/// Whether two values are the same value from the same place: a shared
/// list or record is compared by address first.
fn identical(a: &Val, b: &Val) -> bool {
    if a.origin != b.origin {
        return false;
    }
    match (&a.kind, &b.kind) {
        (ValKind::List(x), ValKind::List(y)) if Arc::ptr_eq(x, y) => true,
        (ValKind::Record(r, x), ValKind::Record(q, y)) if r == q && Arc::ptr_eq(x, y) => true,
        (ValKind::Map(x), ValKind::Map(y)) | (ValKind::Pairs(x), ValKind::Pairs(y)) if Arc::ptr_eq(x, y) => true,
        _ => a.kind == b.kind,
    }
}

/// A summary of a value that two [`identical`] values share: its origin,
/// and what of its kind is cheap to read (a scalar's value, a string's
/// length). Values that differ in it are not identical.
fn fingerprint(v: &Val) -> u64 {
    let place = |file: u32, span: Span| (u64::from(file) << 44) ^ ((span.start as u64) << 22) ^ span.end as u64;
    let origin = match &v.origin {
        Origin::Document { doc, span } => place(*doc, *span),
        Origin::Policy { file, span } => !place(*file, *span),
        Origin::Computed => 1,
        Origin::Missing(m) => 2 ^ ((m.what.len() as u64) << 8),
    };
    let kind = match &v.kind {
        ValKind::Bool(b) => 3 + u64::from(*b),
        ValKind::Int(i) => *i as u64,
        ValKind::Enum(e, x) => (u64::from(*e) << 32) | u64::from(*x),
        ValKind::Str(s) | ValKind::Id(s) => s.len() as u64,
        _ => 0,
    };
    origin.rotate_left(29) ^ kind
}

/// A named parameter of the invocation, which `param("name")` reads: the
/// caller's flags or workspace file give it, as a list of strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
}

impl Param {
    /// The parameter of a list flag's value, split at commas as upstream's
    /// checker splits it: each entry trimmed, empty entries dropped, and the
    /// entries of `egress-hosts` in lower case without one trailing dot.
    /// `credential-roots` with no entry left is as if not given (`None`).
    pub fn from_flag(name: &str, value: &str) -> Option<Param> {
        let entry = |e: &str| -> Option<String> {
            let e = e.trim();
            let e = if name == "egress-hosts" {
                let lower = e.to_lowercase();
                lower.strip_suffix('.').unwrap_or(&lower).to_string()
            } else {
                e.to_string()
            };
            (!e.is_empty()).then_some(e)
        };
        let values: Vec<String> = value.split(',').filter_map(entry).collect();
        (name != "credential-roots" || !values.is_empty()).then(|| Param { name: name.into(), values })
    }
}

/// A file the invocation attached under the path a document records
/// (`--attach RECORDED=LOCAL`): its text, or why it was not read.
#[derive(Clone, Debug, PartialEq)]
pub struct Given {
    pub recorded: String,
    pub text: Result<Arc<str>, String>,
    /// The file's bytes when they are not UTF-8 text.
    pub raw: Option<Arc<[u8]>>,
}

/// The most steps one rule may take over one deployment: an expression
/// evaluated, a subject judged, a pair formed. A rule over `pairs` of a list
/// grows with the square of the list, and a binding is written by whoever
/// opens the pull request; past this budget the rule stops with one FAIL that
/// says so: what was not judged cannot pass, and an UNKNOWN would let a
/// binding turn its failures into exit 0 by growing. The shipped library
/// takes a few thousand steps per rule on the examples.
pub const MAX_STEPS_PER_RULE: u64 = 1_000_000;

/// A function reading a text spends a step per this many bytes of it (as
/// `lines` does), and `split` a step per part besides: a 14 MiB string read
/// once per level of 300 levels is work the rule's steps account for, not
/// a free step each time.
pub const BYTES_PER_STEP: u64 = 64;

/// The most bytes of a value a message shows: a longer one is cut, with its size said.
pub const MAX_SHOWN_BYTES: usize = 1024;

/// Evaluates one rule over each document of the kind it judges (its first
/// read); every outcome (pass, fail, unknown, not applicable) is pushed.
/// `prior` holds the findings of the rules evaluated before, for `holds`.
pub fn evaluate_rule(
    policy: &Policy,
    rule: &RuleDef,
    roots: &Roots<'_>,
    prior: &[Finding],
    trace: bool,
    out: &mut Vec<Finding>,
) {
    evaluate_rule_within(policy, rule, roots, prior, trace, out, MAX_STEPS_PER_RULE);
}

/// [`evaluate_rule`] with a budget of `steps`; returns the steps taken.
pub fn evaluate_rule_within(
    policy: &Policy,
    rule: &RuleDef,
    roots: &Roots<'_>,
    prior: &[Finding],
    trace: bool,
    out: &mut Vec<Finding>,
    steps: u64,
) -> u64 {
    let mut fuel = steps;
    let Some(&judged) = rule.reads.first() else { return 0 };
    // A layered kind is judged once, merged; any other kind once per document.
    let binder = policy.documents.get(judged as usize).map_or("", |d| d.binder.as_str());
    // A document judged on its own is named by its file; a merged one by its binder.
    let layered = policy.layers.iter().any(|l| l.document == judged && !l.separate);
    let merged = match roots.single.get(judged as usize) {
        Some(Some(merged)) if layered => Some((binder, merged)),
        _ => None,
    };
    let each = match merged {
        Some(_) => &[][..],
        None => roots.all.get(judged as usize).map_or(&[][..], Vec::as_slice),
    };
    let subjects = merged.into_iter().chain(each.iter().map(|(n, v)| (n.as_str(), v)));
    for (index, (name, subject)) in subjects.enumerate() {
        // The documents as the roots hold them, unless the judged one is not
        // the one they hold for its kind (one of several): then a copy with it.
        let own: Vec<Option<Val>>;
        let single: &[Option<Val>] = match roots.single.get(judged as usize) {
            Some(Some(held)) if identical(held, subject) => roots.single,
            _ => {
                let mut copy = roots.single.to_vec();
                copy[judged as usize] = Some(subject.clone());
                own = copy;
                &own
            }
        };
        let mut ev = Evaluator {
            policy,
            single,
            all: roots.all,
            layers: roots.layers,
            prior,
            env: vec![Val::unknown(); rule.slots as usize],
            reads: trace.then(Vec::new),
            fuel,
            exhausted: false,
            now: roots.now,
            now_read: false,
            given: roots.given,
            params: roots.params,
            calls: (!trace && !rule.calls.is_empty()).then_some(Calls {
                heads: &rule.calls,
                memo: &roots.memo,
                subject: (judged, index),
            }),
        };
        let root_span = subject.origin.document_span();
        let mut walk = Walk {
            rule,
            out,
            subject: Segments::default(),
            bound: Vec::new(),
            anchors: Vec::new(),
            absent: None,
            default_subject: name,
            binder,
            root_span,
            steps: Vec::new(),
            reporting: Vec::new(),
            passes: roots.passes,
        };
        walk.clauses(&mut ev, 0);
        fuel = ev.fuel;
        if ev.now_read {
            roots.now_read.set(true);
        }
        if ev.exhausted {
            walk.out.push(Finding {
                rule: rule.id.clone(),
                outcome: Outcome::Fail,
                subject: walk.default_subject.to_string(),
                message: format!(
                    "this rule stopped after {steps} steps: the document is too large for it to judge, and what \
                     is not judged cannot pass"
                ),
                location: root_span,
                policy: Some(rule.loc),
                labels: Vec::new(),
                bound: Vec::new(),
                trace: Vec::new(),
                place: crate::diagnostic::Place::default(),
            });
            break;
        }
    }
    steps - fuel
}

/// Where a finding of `rule` is placed: the document span of its `at`, else
/// that of the last value bound by its `for` clauses, else the document
/// (`root`). A subject from the policy's defaults is nowhere in the document.
pub fn finding_location(
    ev: &mut Evaluator<'_>,
    rule: &RuleDef,
    bound: &[Option<(u32, Span)>],
    root: Option<(u32, Span)>,
) -> Option<(u32, Span)> {
    finding_place(ev, rule, bound, root).0
}

/// [`finding_location`], and the keys below it that the finding is about
/// when its `at` is absent (see [`crate::diagnostic::Place::below`]).
pub fn finding_place(
    ev: &mut Evaluator<'_>,
    rule: &RuleDef,
    bound: &[Option<(u32, Span)>],
    root: Option<(u32, Span)>,
) -> (Option<(u32, Span)>, Box<str>) {
    if let Some(at) = &rule.at {
        let v = ev.eval(at);
        if let Some(location) = v.origin.document_span() {
            let below = match &v.origin {
                Origin::Missing(m) => m.below.clone(),
                _ => Box::default(),
            };
            return (Some(location), below);
        }
    }
    (bound.last().copied().unwrap_or(root), Box::default())
}

struct Walk<'r, 'o> {
    rule: &'r RuleDef,
    out: &'o mut Vec<Finding>,
    /// Subject path segments: `verification_topology`, `.C3`, `[reviewer-a]`.
    subject: Segments,
    /// Where each value bound by a `for` is, outermost first (`None`: not in a document).
    bound: Vec<Option<(u32, Span)>>,
    /// Beside `bound`, for an entry of a map that the document does not
    /// hold (a key the policy's defaults fill): the map's place and the
    /// keys below it, which place the finding's key path.
    anchors: Vec<Option<(u32, Span, Box<str>)>>,
    /// For the finding about to be emitted, when it is about a collection
    /// the document leaves out: where that collection would be.
    absent: Option<(u32, Span, Box<str>)>,
    default_subject: &'r str,
    /// The judged kind's binder: the path of a finding placed nowhere in a document.
    binder: &'r str,
    /// The judged document, where a rule without `for` points.
    root_span: Option<(u32, Span)>,
    /// The clauses passed on the way here (only when tracing).
    steps: Vec<Step>,
    /// The reasons of the `when ... else report` clauses whose guard was
    /// false on the way here: a FAIL or UNKNOWN is then reported as NOT
    /// APPLICABLE with the innermost reason.
    reporting: Vec<String>,
    /// Where a PASS is counted instead of built (see [`Roots::passes`]).
    passes: Option<&'o std::cell::Cell<usize>>,
}

/// A finding's subject being written, segment by segment, in one string:
/// a segment per element of a `for` is written over the last one, never
/// allocated on its own.
#[derive(Default)]
struct Segments {
    text: String,
    /// Where each segment starts in `text`.
    starts: Vec<usize>,
}

impl Segments {
    fn len(&self) -> usize {
        self.starts.len()
    }

    fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    fn push(&mut self, segment: &str) {
        self.begin().push_str(segment);
    }

    /// Starts a segment: the string to write it to.
    fn begin(&mut self) -> &mut String {
        self.starts.push(self.text.len());
        &mut self.text
    }

    /// Keeps the first `n` segments.
    fn truncate(&mut self, n: usize) {
        if let Some(&end) = self.starts.get(n) {
            self.text.truncate(end);
            self.starts.truncate(n);
        }
    }
}

impl Walk<'_, '_> {
    fn subject(&self) -> String {
        if self.subject.is_empty() { self.default_subject.to_string() } else { self.subject.text.clone() }
    }

    fn emit(&mut self, ev: &mut Evaluator<'_>, outcome: Outcome, message: String) {
        // Out of steps, the values are unknown for want of work, not of
        // evidence: the one FAIL the rule then reports says so.
        if !ev.spend(16) {
            return;
        }
        if outcome == Outcome::Pass
            && let Some(passes) = self.passes
        {
            // Counted, not built. Its `at` is evaluated all the same, so the
            // steps the rule takes, and whether it read `now()`, are those of
            // a PASS built: the other outcomes cannot tell the difference.
            if let Some(at) = &self.rule.at {
                ev.eval(at);
            }
            passes.set(passes.get() + 1);
            return;
        }
        let (location, mut below) = finding_place(ev, self.rule, &self.bound, self.root_span);
        let mut anchor = None;
        if let Some((doc, span, keys)) = self.absent.take() {
            (anchor, below) = (Some((doc, span)), keys);
        } else if location.is_none()
            && let Some(Some((doc, span, keys))) = self.anchors.last()
        {
            (anchor, below) = (Some((*doc, *span)), keys.clone());
        }
        // Placed nowhere in a document (its subject is the policy's defaults): about the document.
        let paths = (location.is_none() && anchor.is_none() && outcome != Outcome::Pass)
            .then(|| Box::new(KeyPaths { path: self.binder.to_string(), attachment_path: None, related: Vec::new() }));
        let (outcome, message, reported) = match self.reporting.last() {
            Some(why) if matches!(outcome, Outcome::Fail | Outcome::Unknown) => {
                let said = format!("{why}: {message}");
                (Outcome::NotApplicable, said, Some(message.into_boxed_str()))
            }
            _ => (outcome, message, None),
        };
        self.out.push(Finding {
            rule: self.rule.id.clone(),
            outcome,
            subject: self.subject(),
            message,
            location,
            policy: Some(self.rule.loc),
            labels: Vec::new(),
            // The judged document is bound too: `holds` asked of a whole document sees every finding in it.
            bound: {
                let mut bound = Vec::with_capacity(1 + self.bound.len());
                bound.extend(self.root_span.into_iter().chain(self.bound.iter().flatten().copied()));
                bound
            },
            trace: self.steps.clone(),
            place: crate::diagnostic::Place { anchor, below, by_identity: !self.rule.at_by_position, paths, reported },
        });
    }

    /// Records a clause passed (when tracing), with what it read since the
    /// last; `describe` gives the clause and its result, and is called only
    /// when tracing (checking builds no trace text).
    fn step(&mut self, ev: &mut Evaluator<'_>, describe: impl FnOnce(&Evaluator<'_>) -> (String, String)) -> bool {
        if ev.reads.is_none() {
            return false;
        }
        let (clause, result) = describe(ev);
        let Some(reads) = ev.reads.as_mut() else { return false };
        let taken = last_reads(std::mem::take(reads));
        self.steps.push(Step { clause, result, reads: taken });
        true
    }

    fn pop_step(&mut self, ev: &Evaluator<'_>) {
        if ev.reads.is_some() {
            self.steps.pop();
        }
    }

    fn clauses(&mut self, ev: &mut Evaluator<'_>, i: usize) {
        let Some(clause) = self.rule.clauses.get(i) else { return };
        if let Some(reads) = ev.reads.as_mut() {
            reads.clear();
        }
        match clause {
            ClauseDef::For { pattern, names, domain, filter, label } => {
                let d = ev.eval(domain);
                let Some(elements) = ev.elements(&d, pattern) else {
                    // Absent or missing is not applicable; present but unreadable is missing evidence.
                    if let Some(what) = d.origin.missing().filter(|_| !d.is_invalid()) {
                        // The finding is about the collection that is not there: its key path says where.
                        if let Origin::Missing(m) = &d.origin {
                            self.absent = m.doc.map(|doc| (doc, m.span, m.below.clone()));
                        }
                        self.emit(ev, Outcome::NotApplicable, concat(&["`", what, "` is absent"]));
                    } else if d.is_known_absent() {
                        self.emit(ev, Outcome::NotApplicable, concat(&["`", &domain.text, "` is absent"]));
                    } else {
                        // The rule's own names (`model_slots(t)`) mean nothing to
                        // the document's author: say what is wrong with the document.
                        let why = match d.is_invalid() {
                            true => INVALID_READ,
                            false => "a collection it goes through could not be established",
                        };
                        self.emit(ev, Outcome::Unknown, concat(&["cannot be established: ", why]));
                    }
                    return;
                };
                let depth = self.subject.len();
                if self.subject.is_empty()
                    && let Some(l) = label
                {
                    self.subject.push(l);
                }
                let base = self.subject.len();
                let mut any = false;
                // What the domain read belongs to every element's step, and nothing else does.
                let domain_reads = ev.reads.as_mut().map(std::mem::take);
                for (n, (values, name)) in elements.into_iter().enumerate() {
                    if ev.exhausted {
                        break;
                    }
                    if let Some(reads) = &domain_reads {
                        ev.reads = Some(reads.clone());
                    }
                    if let Some(f) = filter {
                        ev.bind_ref(pattern, &values);
                        match ev.eval(f).as_truth() {
                            Truth::True => {}
                            Truth::False => continue,
                            Truth::Unknown => {
                                // Said in the document's terms, as a guard's is, never by the rule's names.
                                let why = ev.first_missing(f).unwrap_or_else(|| UNESTABLISHED.into());
                                self.emit(
                                    ev,
                                    Outcome::Unknown,
                                    concat(&["cannot tell whether the rule applies: ", &why]),
                                );
                                continue;
                            }
                        }
                    }
                    any = true;
                    self.subject.truncate(base);
                    let (open, close) = if self.subject.is_empty() {
                        ("", "")
                    } else if matches!(pattern, PatternDef::Entry(..)) || (label.is_some() && base == depth + 1) {
                        (".", "")
                    } else {
                        ("[", "]")
                    };
                    // Written in place after the segments before it: no string per element.
                    let segment = self.subject.begin();
                    segment.push_str(open);
                    match (name, pattern) {
                        (Some(name), _) => segment.push_str(&name),
                        (None, PatternDef::Entry(..)) => push_label(segment, &values[0], n, ev.policy),
                        (None, _) => {
                            for (k, v) in values.iter().enumerate() {
                                if k > 0 {
                                    segment.push_str(", ");
                                }
                                push_label(segment, v, n, ev.policy);
                            }
                        }
                    }
                    segment.push_str(close);
                    let at = values.last().and_then(|v| v.origin.document_span());
                    self.anchors.push(match (at, pattern) {
                        (None, PatternDef::Entry(..)) => anchor(&d, &values[0], ev.policy),
                        _ => None,
                    });
                    self.bound.push(at);
                    let traced = self.step(ev, |ev| {
                        let shown: Vec<String> = names
                            .iter()
                            .zip(values.iter())
                            .map(|(n, v)| format!("{n} = {}", v.display(ev.policy)))
                            .collect();
                        (format!("for {} in {}", names.join(", "), domain.text), shown.join(", "))
                    });
                    ev.bind(pattern, values);
                    self.clauses(ev, i + 1);
                    if traced {
                        self.steps.pop();
                    }
                    self.bound.pop();
                    self.anchors.pop();
                }
                self.subject.truncate(depth);
                if !any {
                    let why = match filter {
                        Some(f) => concat(&["no element of `", &domain.text, "` satisfies `", &f.text, "`"]),
                        None => concat(&["`", &domain.text, "` is empty"]),
                    };
                    self.emit(ev, Outcome::NotApplicable, why);
                }
            }
            ClauseDef::Let { slot, name, value } => {
                let v = ev.eval(value);
                let traced = self.step(ev, |ev| (format!("let {name} = {}", value.text), v.display(ev.policy)));
                ev.env[*slot as usize] = v;
                self.clauses(ev, i + 1);
                if traced {
                    self.steps.pop();
                }
            }
            ClauseDef::When { guard, reason, report } => match ev.eval(guard).as_truth() {
                Truth::True => {
                    let traced = self.step(ev, |_| (format!("when {}", guard.text), "true".into()));
                    self.clauses(ev, i + 1);
                    if traced {
                        self.steps.pop();
                    }
                }
                Truth::False => {
                    let shown = if *report { "false: reported, not a finding" } else { "false" };
                    let traced = self.step(ev, |_| (format!("when {}", guard.text), shown.into()));
                    let message = match reason {
                        Some(t) => ev.render(t),
                        None => concat(&["`", &guard.text, "` does not hold"]),
                    };
                    if *report {
                        // The rule judges on, and what it finds is reported.
                        self.reporting.push(message);
                        self.clauses(ev, i + 1);
                        self.reporting.pop();
                    } else {
                        self.emit(ev, Outcome::NotApplicable, message);
                    }
                    if traced {
                        self.steps.pop();
                    }
                }
                Truth::Unknown => {
                    self.step(ev, |_| (format!("when {}", guard.text), "unknown".into()));
                    let why = ev.first_missing(guard).unwrap_or_else(|| UNESTABLISHED.into());
                    self.emit(ev, Outcome::Unknown, concat(&["cannot tell whether the rule applies: ", &why]));
                    self.pop_step(ev);
                }
            },
            ClauseDef::Require { check, fail, message, .. } => {
                let truth = ev.eval(check).as_truth();
                let result = match truth {
                    Truth::True => "true",
                    Truth::False => "false",
                    Truth::Unknown => "unknown",
                };
                let traced = self.step(ev, |_| (format!("require {}", check.text), result.into()));
                // Explaining a requirement that failed: the first of its conjuncts that did, with what it read.
                let first = traced && truth == Truth::False && self.first_false(ev, check);
                match truth {
                    Truth::True => self.emit(ev, Outcome::Pass, String::new()),
                    Truth::False => {
                        let m = ev.render(message);
                        self.emit(ev, if *fail { Outcome::Fail } else { Outcome::Unknown }, m);
                    }
                    Truth::Unknown => {
                        let why = ev.first_missing(check).unwrap_or_else(|| UNESTABLISHED.into());
                        self.emit(ev, Outcome::Unknown, concat(&["cannot be established: ", &why]));
                    }
                }
                if first {
                    self.steps.pop();
                }
                if traced {
                    self.steps.pop();
                }
            }
        }
    }

    /// When explaining: records the first conjunct of a false requirement
    /// that is false (`first false: ...`), with the values it read; false
    /// when the requirement is not a conjunction.
    fn first_false(&mut self, ev: &mut Evaluator<'_>, check: &Expr) -> bool {
        let mut conjuncts = Vec::new();
        conjuncts_of(check, &mut conjuncts);
        if conjuncts.len() < 2 {
            return false;
        }
        if let Some(reads) = ev.reads.as_mut() {
            reads.clear();
        }
        for c in conjuncts {
            if ev.eval(c).as_truth() == Truth::False {
                return self.step(ev, |_| (format!("first false: {}", c.text), "false".into()));
            }
            if let Some(reads) = ev.reads.as_mut() {
                reads.clear();
            }
        }
        false
    }
}

/// The parts one after the other, in a string allocated once at its size
/// (`format!` guesses a size and grows it, once per message of a finding).
fn concat(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.push_str(p);
    }
    out
}

/// The conjuncts of `a and b and ...`, in the order written.
fn conjuncts_of<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::And(a, b) => {
            conjuncts_of(a, out);
            conjuncts_of(b, out);
        }
        _ => out.push(e),
    }
}

/// The one or two values a pattern binds for one element of a domain
/// (inline: no allocation per element).
struct Bound {
    vals: [Val; 2],
    len: usize,
}

impl Bound {
    fn one(a: Val) -> Bound {
        Bound { vals: [a, Val::unknown()], len: 1 }
    }

    fn two(a: Val, b: Val) -> Bound {
        Bound { vals: [a, b], len: 2 }
    }
}

impl std::ops::Deref for Bound {
    type Target = [Val];

    fn deref(&self) -> &[Val] {
        &self.vals[..self.len]
    }
}

/// Why a value a rule needed is unknown, in the document's terms: a missing
/// key by its path; a value of the document that is invalid as such (its
/// type finding says what is wrong); never a name of the rule's own.
fn missing_what(v: &Val) -> String {
    match &v.origin {
        _ if v.is_invalid() => INVALID_READ.into(),
        // A file that was not read says which and why.
        Origin::Missing(m) if m.what.starts_with('`') => m.what.to_string(),
        Origin::Missing(m) => format!("`{}` is absent", m.what),
        _ => UNESTABLISHED.into(),
    }
}

/// `shown` cut at [`MAX_SHOWN_BYTES`] (on a character boundary), its size said.
fn cut(shown: &str) -> std::borrow::Cow<'_, str> {
    if shown.len() <= MAX_SHOWN_BYTES {
        return std::borrow::Cow::Borrowed(shown);
    }
    let mut end = MAX_SHOWN_BYTES;
    while !shown.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes in all)", &shown[..end], shown.len()))
}

/// An UNKNOWN's reason when a value the rule reads is invalid in the document.
const INVALID_READ: &str = "a value it reads is invalid (the type finding at that value says why)";
/// An UNKNOWN's reason when nothing more precise is known.
const UNESTABLISHED: &str = "a value it reads could not be established";

pub struct Evaluator<'a> {
    pub policy: &'a Policy,
    pub single: &'a [Option<Val>],
    pub all: &'a [Vec<(String, Val)>],
    /// The layer each document of a layered kind was checked as (for `bound_to`).
    pub layers: &'a [crate::layers::DocLayer],
    /// Findings of the rules evaluated before this one.
    pub prior: &'a [Finding],
    pub env: Vec<Val>,
    /// The values read, when explaining.
    pub reads: Option<Vec<Read>>,
    /// Steps left (see [`MAX_STEPS_PER_RULE`]).
    pub fuel: u64,
    /// A step was refused: from then on every value is unknown.
    pub exhausted: bool,
    /// The time of the check (see [`Roots::now`]).
    pub now: Option<i128>,
    /// Whether `now()` was evaluated (see [`Roots::now_read`]).
    pub now_read: bool,
    /// The files the invocation attached (see [`Roots::given`]).
    pub given: &'a [Given],
    /// The named parameters of the invocation (see [`Roots::params`]).
    pub params: &'a [Param],
    /// Where function results are memoised; `None` evaluates every call.
    pub calls: Option<Calls<'a>>,
}

impl<'a> Evaluator<'a> {
    /// A built-in function over evaluated arguments.
    fn builtin(&mut self, b: Builtin, vals: Vec<Val>) -> Val {
        use ValKind as V;
        if b == Builtin::IsNull {
            return Val::bool(matches!(vals[0].kind, V::Null));
        }
        // Only the condition and the branch it picks matter.
        if b == Builtin::Choose {
            return match vals[0].as_truth() {
                Truth::True => vals[1].clone(),
                Truth::False => vals[2].clone(),
                Truth::Unknown => vals[0].clone(),
            };
        }
        // What is not there makes the result not there, with its reason:
        // unknown if an argument is, else absent (absent in, absent out).
        if let Some(unknown) = vals.iter().find(|v| v.is_unknown()) {
            return unknown.clone();
        }
        if let Some(absent) = vals.iter().find(|v| v.is_known_absent()) {
            // An absent path matches no glob.
            if b == Builtin::MatchesGlob {
                return Val::bool(false);
            }
            return absent.clone();
        }
        if !vals.iter().all(|v| self.read(v)) {
            return Val::unknown();
        }
        let origin = vals[0].origin.clone();
        let string = |v: &Val| -> Option<Arc<str>> {
            match &v.kind {
                V::Str(s) | V::Id(s) => Some(s.clone()),
                V::File(f) => Some(f.path.clone()),
                _ => None,
            }
        };
        let content = |v: &Val| -> Option<Arc<str>> {
            match &v.kind {
                V::File(f) => Some(f.text.clone()),
                V::Str(s) | V::Id(s) => Some(s.clone()),
                _ => None,
            }
        };
        let out = |kind: V| Val::new(kind, origin.clone());
        let not_there = |what: String| Val::missing(what, None, Span::default());
        match b {
            Builtin::IsNull => Val::bool(false),
            Builtin::Sha256 => match &vals[0].kind {
                // A file is hashed over its exact bytes, once however many fields name it.
                V::File(f) => out(V::Str(f.sha256())),
                V::Str(s) | V::Id(s) => out(V::Str(crate::value::sha256_hex(s.as_bytes()).into())),
                _ => Val::unknown(),
            },
            Builtin::Text | Builtin::Lines | Builtin::ReplaceLine if matches!(&vals[0].kind, V::File(f) if f.raw.is_some()) => {
                not_there(format!("the text of `{}` (the file is not UTF-8 text)", vals[0].display(self.policy)))
            }
            Builtin::Text => match &vals[0].kind {
                V::File(f) => out(V::Str(f.text.clone())),
                _ => not_there(format!("`{}` (not an attached file)", vals[0].display(self.policy))),
            },
            Builtin::Lines => match content(&vals[0]) {
                Some(t) => {
                    if !self.spend(t.len() as u64 / BYTES_PER_STEP) {
                        return Val::unknown();
                    }
                    let lines = t.lines().map(|l| out(V::Str(l.into()))).collect();
                    out(V::List(Arc::new(lines)))
                }
                None => Val::unknown(),
            },
            Builtin::Replace => match (string(&vals[0]), string(&vals[1]), string(&vals[2])) {
                (Some(s), Some(from), Some(to)) if !from.is_empty() => out(V::Str(s.replace(&*from, &to).into())),
                _ => Val::unknown(),
            },
            Builtin::ReplaceLine => match (content(&vals[0]), vals[1].as_int(), string(&vals[2])) {
                (Some(t), Some(n), Some(to)) => {
                    if !self.spend(t.len() as u64 / BYTES_PER_STEP) {
                        return Val::unknown();
                    }
                    match usize::try_from(n.to_i128().unwrap_or(-1)).ok().and_then(|n| replace_line(&t, n, &to)) {
                        Some(s) => out(V::Str(s.into())),
                        None => Val::absent(
                            format!(
                                "line {} of `{}` (it has no such line)",
                                vals[1].display(self.policy),
                                vals[0].display(self.policy)
                            ),
                            None,
                            Span::default(),
                        ),
                    }
                }
                _ => Val::unknown(),
            },
            Builtin::MatchesGlob => match (string(&vals[0]), string(&vals[1])) {
                (Some(p), Some(g)) => match (crate::paths::parse(&p), glob(&g)) {
                    // A path is matched as it resolves (`evidence/../secrets/x` is
                    // `secrets/x`); one that climbs above the folder the glob is
                    // over (`../x`) is outside it, and matches nothing.
                    (Some(path), Ok(m)) => Val::bool(!path.climbs() && m.is_match(path.to_string())),
                    (None, _) => not_there(format!("whether `{p}` matches `{g}` (`{p}` is not a path)")),
                    (_, Err(e)) => not_there(format!("whether `{p}` matches `{g}` (`{g}` is not a glob: {e})")),
                },
                _ => Val::unknown(),
            },
            Builtin::ResolvePath => match (string(&vals[0]), string(&vals[1])) {
                (Some(base), Some(p)) => out(V::Str(resolve_path(&base, &p).into())),
                _ => Val::unknown(),
            },
            Builtin::RelativePath => match (string(&vals[0]), string(&vals[1])) {
                (Some(p), Some(base)) => match relative_path(&p, &base) {
                    Some(r) => out(V::Str(r.into())),
                    // Not below it is a decided fact.
                    None => {
                        Val::absent(format!("`{p}` relative to `{base}` (it is not below it)"), None, Span::default())
                    }
                },
                _ => Val::unknown(),
            },
            Builtin::Flatten => match &vals[0].kind {
                V::List(lists) => {
                    let mut all = Vec::new();
                    for l in lists.iter() {
                        match &l.kind {
                            V::List(items) => all.extend(items.iter().cloned()),
                            // An absent entry holds nothing.
                            _ if l.is_known_absent() => {}
                            // An entry that is not there makes the whole unknown, never shorter.
                            _ => return l.clone(),
                        }
                    }
                    out(V::List(Arc::new(all)))
                }
                _ => Val::unknown(),
            },
            Builtin::Ip | Builtin::HostIp | Builtin::Hostname | Builtin::Tld | Builtin::NormalizePath => {
                let Some(s) = string(&vals[0]) else { return Val::unknown() };
                let (read, what) = match b {
                    Builtin::Ip => (crate::net::ip(&s), "an IP address"),
                    Builtin::HostIp => (crate::net::host_ip(&s), "a host written as an IP address"),
                    Builtin::Hostname => (crate::net::hostname(&s), "a host name"),
                    Builtin::Tld => (crate::net::tld(&s), "a host name"),
                    _ => (crate::paths::normalize(&s), "a path"),
                };
                match read {
                    Some(r) => out(V::Str(r.into())),
                    // A host name is decidedly no address; anything else is unreadable.
                    None if b == Builtin::HostIp && crate::net::hostname(&s).is_some() => {
                        Val::absent(format!("an address in `{s}` (a host name)"), None, Span::default())
                    }
                    None => not_there(format!("`{s}` (not {what})")),
                }
            }
            Builtin::Show => out(V::Str(vals[0].display(self.policy).into())),
            Builtin::Choose => Val::unknown(),
            Builtin::Join => match (&vals[0].kind, string(&vals[1])) {
                (V::List(items), Some(sep)) => {
                    // An entry that is not there makes the whole unknown, never shorter.
                    if let Some(gap) = items.iter().find(|v| v.is_absent()) {
                        return gap.clone();
                    }
                    let parts: Vec<String> = items.iter().map(|v| v.display(self.policy)).collect();
                    out(V::Str(parts.join(&*sep).into()))
                }
                _ if vals[0].is_known_absent() => out(V::Str("".into())),
                _ => Val::unknown(),
            },
            Builtin::Net => match string(&vals[0]) {
                Some(s) => match crate::net::parse_net(&s) {
                    Some(n) => out(V::Str(n.to_string().into())),
                    None => not_there(format!("`{s}` (not a network: {})", crate::net::net_error(&s))),
                },
                None => Val::unknown(),
            },
            Builtin::InNet | Builtin::InDomain | Builtin::PathUnder => {
                let (Some(x), Some(y)) = (string(&vals[0]), string(&vals[1])) else { return Val::unknown() };
                let (decided, what) = match b {
                    Builtin::InNet => (crate::net::in_net(&x, &y), "is not an IP address"),
                    Builtin::InDomain => (crate::net::in_domain(&x, &y), "is not a host name"),
                    _ => {
                        (crate::paths::under(&x, &y), "is not a path, or one of the two is relative and the other not")
                    }
                };
                match decided {
                    Some(d) => Val::bool(d),
                    None => not_there(format!("whether `{x}` is in `{y}` (one of them {what})")),
                }
            }
            Builtin::EmbeddedIpv4 | Builtin::PathParts => {
                let Some(s) = string(&vals[0]) else { return Val::unknown() };
                let read = match b {
                    Builtin::EmbeddedIpv4 => crate::net::parse_ip(&s)
                        .map(|a| crate::net::embedded_ipv4(a).iter().map(ToString::to_string).collect::<Vec<_>>()),
                    _ => crate::paths::parts(&s),
                };
                match read {
                    Some(items) => out(V::List(Arc::new(items.into_iter().map(|i| out(V::Str(i.into()))).collect()))),
                    None if b == Builtin::EmbeddedIpv4 => not_there(format!("`{s}` (not an IP address)")),
                    None => not_there(format!("`{s}` (not a path)")),
                }
            }
            Builtin::TimestampMillis => match string(&vals[0]) {
                Some(s) => match crate::time::rfc3339_millis(&s) {
                    Some(t) => out(V::Time(t.into())),
                    None => not_there(format!("`{s}` (not an RFC 3339 date-time with at most three fraction digits)")),
                },
                None => Val::unknown(),
            },
            Builtin::Attached => {
                let Some(p) = string(&vals[0]) else { return Val::unknown() };
                match self.given.iter().find(|g| g.recorded == *p) {
                    Some(Given { text: Ok(text), raw, .. }) => {
                        out(V::File(Arc::new(FileVal::new(p, text.clone(), raw.clone()))))
                    }
                    Some(Given { text: Err(reason), .. }) => not_there(format!("`{p}` ({reason})")),
                    None => not_there(format!("`{p}` (no file was attached for it: `--attach {p}=FILE`)")),
                }
            }
        }
    }

    /// Takes `cost` steps; false, and no steps left, when there are not enough.
    fn spend(&mut self, cost: u64) -> bool {
        match self.fuel.checked_sub(cost) {
            Some(left) if !self.exhausted => {
                self.fuel = left;
                true
            }
            _ => {
                self.fuel = 0;
                self.exhausted = true;
                false
            }
        }
    }

    /// The bindings a pattern takes over a domain (for questions).
    pub fn elements_of(&self, domain: &Val, pattern: &PatternDef) -> Option<Vec<Vec<Val>>> {
        Some(self.elements(domain, pattern)?.into_iter().map(|(v, _)| v.to_vec()).collect())
    }

    /// Binds a pattern's variables.
    pub fn bind_pattern(&mut self, pattern: &PatternDef, values: Vec<Val>) {
        self.bind_ref(pattern, &values);
    }

    fn bind_ref(&mut self, pattern: &PatternDef, values: &[Val]) {
        let get = |i: usize| values.get(i).cloned().unwrap_or_else(Val::unknown);
        match *pattern {
            PatternDef::One(a) => self.env[a as usize] = get(0),
            PatternDef::Entry(a, b) | PatternDef::Pair(a, b) => {
                self.env[a as usize] = get(0);
                self.env[b as usize] = get(1);
            }
        }
    }

    fn bind(&mut self, pattern: &PatternDef, values: Bound) {
        let [first, second] = values.vals;
        match *pattern {
            PatternDef::One(a) => self.env[a as usize] = first,
            PatternDef::Entry(a, b) | PatternDef::Pair(a, b) => {
                self.env[a as usize] = first;
                self.env[b as usize] = second;
            }
        }
    }

    /// The bindings a pattern takes over a domain, each with a name when the
    /// element has one of its own (a document); `None` when the domain is unknown.
    fn elements(&self, domain: &Val, pattern: &PatternDef) -> Option<Vec<(Bound, Option<String>)>> {
        if let ValKind::Docs(k) = &domain.kind {
            let docs = self.all.get(*k as usize)?;
            return Some(docs.iter().map(|(name, v)| (Bound::one(v.clone()), Some(name.clone()))).collect());
        }
        Some(self.plain_elements(domain, pattern)?.into_iter().map(|v| (v, None)).collect())
    }

    fn plain_elements(&self, domain: &Val, pattern: &PatternDef) -> Option<Vec<Bound>> {
        Some(match (&domain.kind, pattern) {
            (ValKind::List(items), PatternDef::Entry(..)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| Bound::two(Val::computed(ValKind::Int(i as i64)), v.clone()))
                .collect(),
            (ValKind::List(items), _) => items.iter().map(|v| Bound::one(v.clone())).collect(),
            (ValKind::Map(entries), PatternDef::Entry(..)) => {
                entries.iter().map(|(k, v)| Bound::two(k.clone(), v.clone())).collect()
            }
            (ValKind::Map(entries), _) => entries.iter().map(|(k, _)| Bound::one(k.clone())).collect(),
            (ValKind::Domain(e), _) => {
                let n = self.policy.enums.get(*e as usize).map_or(0, |d| d.variants.len());
                (0..n as u32).map(|v| Bound::one(Val::computed(ValKind::Enum(*e, v)))).collect()
            }
            (ValKind::Pairs(pairs), _) => pairs.iter().map(|(a, b)| Bound::two(a.clone(), b.clone())).collect(),
            _ => return None,
        })
    }

    pub(crate) fn render(&mut self, t: &Template) -> String {
        // Room for the texts and a short value per hole: most messages are written without growing.
        let room = t.parts.iter().map(|p| if let TemplatePart::Text(s) = p { s.len() } else { 24 }).sum();
        let mut out = String::with_capacity(room);
        for part in &t.parts {
            match part {
                TemplatePart::Text(s) => out.push_str(s),
                TemplatePart::Hole(e) => {
                    let v = self.eval(e);
                    // A string or a variant, the common values, shown without a copy of its own.
                    let policy = self.policy;
                    let shown: std::borrow::Cow<'_, str> = match &v.kind {
                        ValKind::Str(s) | ValKind::Id(s) => crate::value::shown(s),
                        ValKind::Enum(en, x) => std::borrow::Cow::Borrowed(policy.variant_name(*en, *x)),
                        _ => std::borrow::Cow::Owned(v.display(policy)),
                    };
                    self.spend(shown.len() as u64 / BYTES_PER_STEP);
                    out.push_str(&cut(&shown));
                }
            }
        }
        out
    }

    /// Spends the steps reading the text of `v` takes (see
    /// [`BYTES_PER_STEP`]); false when the rule's steps ran out. A file is
    /// read by its path here (`lines` spends for its content itself, and its
    /// SHA-256 is computed once).
    fn read(&mut self, v: &Val) -> bool {
        match &v.kind {
            ValKind::Str(s) | ValKind::Id(s) => self.spend(s.len() as u64 / BYTES_PER_STEP),
            _ => !self.exhausted,
        }
    }

    /// The invalid value of a document that makes `e` unknown, if that is why
    /// (a missing value is left unknown: absent is not the same as not applicable).
    fn invalid_read(&mut self, e: &Expr) -> Option<Val> {
        self.first_absent(e, true).filter(Val::is_invalid)
    }

    /// The first finding of the rules `patterns` name, evaluated before,
    /// about the subject at `at` that failed, is unknown, or was reported.
    fn broken(&self, patterns: &[String], at: (u32, Span)) -> Option<&Finding> {
        self.prior.iter().find(|f| {
            (matches!(f.outcome, Outcome::Fail | Outcome::Unknown) || f.place.reported.is_some())
                && f.bound.contains(&at)
                && patterns.iter().any(|p| crate::lower::rule_matches(p, &f.rule))
        })
    }

    /// The first value an expression reads that is unknown (else absent),
    /// for UNKNOWN messages.
    pub fn first_missing(&mut self, e: &Expr) -> Option<String> {
        self.first_absent(e, true).or_else(|| self.first_absent(e, false)).map(|v| missing_what(&v))
    }

    /// The first value an expression reads that is unknown (missing, or
    /// invalid in its document), or with `unknown` false absent in any way,
    /// as it was read.
    fn first_absent(&mut self, e: &Expr, unknown: bool) -> Option<Val> {
        let children: Vec<&Expr> = match &e.kind {
            ExprKind::Field(b, _) | ExprKind::Column(b, _) => vec![b],
            ExprKind::MapGet(a, b) => vec![a, b],
            ExprKind::MatrixRow(_, b) | ExprKind::Not(b) | ExprKind::Present(b) | ExprKind::Count(b) => vec![b],
            ExprKind::Empty(b)
            | ExprKind::Pairs(b)
            | ExprKind::Lower(b)
            | ExprKind::Distinct(b)
            | ExprKind::Entries(b)
            | ExprKind::ParseInt(b)
            | ExprKind::Url(_, b)
            | ExprKind::Trim(b)
            | ExprKind::Timestamp(b)
            | ExprKind::DurationOf(_, b)
            | ExprKind::Fold { list: b, .. }
            | ExprKind::Matches(b, _)
            | ExprKind::Holds(_, b)
            | ExprKind::Failure(_, b)
            | ExprKind::Reason(b)
            | ExprKind::BoundTo(b, _) => vec![b],
            ExprKind::ListGet(a, b) | ExprKind::Split(a, b) | ExprKind::TrimSuffix(a, b) | ExprKind::Mul(a, b) => {
                vec![a, b]
            }
            ExprKind::Builtin(_, args) => args.iter().collect(),
            ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::Compare(_, a, b)
            | ExprKind::Tighter(a, b)
            | ExprKind::In(a, b)
            | ExprKind::Concat(a, b)
            | ExprKind::Add(a, b)
            | ExprKind::Sub(a, b)
            | ExprKind::Max(a, b)
            | ExprKind::Min(a, b) => vec![a, b],
            ExprKind::Coalesce(a, b) => {
                // An invalid value is not replaced by the default: it is why the result is unknown.
                let x = self.eval(a);
                if x.is_invalid() {
                    return Some(x);
                }
                vec![b]
            }
            ExprKind::Let { value, body, .. } => {
                let v = self.eval(value);
                let found = self.first_absent(value, unknown);
                if let ExprKind::Let { slot, .. } = &e.kind {
                    self.env[*slot as usize] = v;
                }
                return found.or_else(|| self.first_absent(body, unknown));
            }
            ExprKind::CountBy { domain, .. }
            | ExprKind::Quant { domain, .. }
            | ExprKind::Comprehension { domain, .. } => vec![domain],
            _ => vec![],
        };
        for c in children {
            if let Some(found) = self.first_absent(c, unknown) {
                return Some(found);
            }
        }
        let v = self.eval(e);
        // An invalid value, whatever computed it (a comprehension over an entry
        // of the wrong type), is why: its type finding says what is wrong.
        if unknown && v.is_invalid() {
            return Some(v);
        }
        if (if unknown { v.is_unknown() } else { v.is_absent() })
            && matches!(
                e.kind,
                ExprKind::Field(..)
                    | ExprKind::MapGet(..)
                    | ExprKind::Var(_)
                    | ExprKind::Column(..)
                    | ExprKind::Now
                    | ExprKind::Param(_)
                    | ExprKind::Builtin(..)
                    | ExprKind::Url(..)
                    | ExprKind::ParseInt(..)
                    | ExprKind::Timestamp(..)
            )
        {
            return Some(v);
        }
        None
    }

    pub fn eval(&mut self, e: &Expr) -> Val {
        if !self.spend(1) {
            return Val::unknown();
        }
        // A leaf does not recurse, so it needs no look at the stack: most of
        // the expressions evaluated are literals and bound variables.
        let v = match &e.kind {
            ExprKind::Lit(v) => v.clone(),
            ExprKind::Var(s) => self.env.get(*s as usize).cloned().unwrap_or_else(Val::unknown),
            _ => stacker::maybe_grow(crate::lower::RED_ZONE, crate::lower::STACK_SEGMENT, || self.eval_inner(e)),
        };
        if let Some(reads) = self.reads.as_mut()
            && matches!(
                e.kind,
                ExprKind::Field(..) | ExprKind::MapGet(..) | ExprKind::Column(..) | ExprKind::ListGet(..)
            )
        {
            reads.push(Read { expr: e.text.to_string(), value: v.display(self.policy), from: provenance(&v.origin) });
        }
        v
    }

    fn eval_inner(&mut self, e: &Expr) -> Val {
        use ValKind as V;
        match &e.kind {
            ExprKind::Lit(v) => v.clone(),
            ExprKind::Var(s) => self.env.get(*s as usize).cloned().unwrap_or_else(Val::unknown),
            ExprKind::Doc(k) => self.single.get(*k as usize).cloned().flatten().unwrap_or_else(|| {
                // Judged without that document: what the rule needs of it is missing evidence.
                let name = self.policy.documents.get(*k as usize).map(|d| d.name.as_str()).unwrap_or("?");
                Val::missing(
                    format!("{} (no `{name}` document was checked with this one)", e.text),
                    None,
                    Span::default(),
                )
            }),
            // No document of the kind was checked: every document of it is missing evidence, not none.
            ExprKind::Docs(k) if self.all.get(*k as usize).is_none_or(Vec::is_empty) => {
                let name = self.policy.documents.get(*k as usize).map(|d| d.name.as_str()).unwrap_or("?");
                Val::missing(format!("{} (no `{name}` document was checked)", e.text), None, Span::default())
            }
            ExprKind::Docs(k) => Val::computed(V::Docs(*k)),
            ExprKind::ListGet(list, index) => {
                let l = self.eval(list);
                let i = self.eval(index);
                match (&l.kind, &i.kind) {
                    (V::List(items), V::Int(n)) => usize::try_from(*n)
                        .ok()
                        .and_then(|n| items.get(n).cloned())
                        .unwrap_or_else(|| absent_below(&l, &e.text, format!("[{n}]"))),
                    // An index past 64 bits is past the end of every list.
                    (V::List(_), V::BigInt(n)) => absent_below(&l, &e.text, format!("[{n}]")),
                    _ if l.is_unknown() => l,
                    _ if i.is_absent() => i,
                    _ if l.is_absent() => l,
                    _ => Val::unknown(),
                }
            }
            ExprKind::Matrix(m) => Val::computed(V::Matrix(*m)),
            ExprKind::Domain(en) => Val::computed(V::Domain(*en)),
            // A field of a bound variable (`r.name`): read in place,
            // with the step the variable's evaluation takes, not through a copy of the record.
            ExprKind::Field(base, i) if matches!(base.kind, ExprKind::Var(_)) => {
                let ExprKind::Var(s) = base.kind else { return Val::unknown() };
                if !self.spend(1) {
                    return Val::unknown();
                }
                match self.env.get(s as usize) {
                    Some(b) => match &b.kind {
                        V::Record(_, fields) => fields.get(*i).cloned().unwrap_or_else(Val::unknown),
                        _ if b.is_absent() => b.clone(),
                        _ => Val::unknown(),
                    },
                    None => Val::unknown(),
                }
            }
            ExprKind::Field(base, i) => {
                let b = self.eval(base);
                match &b.kind {
                    V::Record(_, fields) => fields.get(*i).cloned().unwrap_or_else(Val::unknown),
                    _ if b.is_absent() => b,
                    _ => Val::unknown(),
                }
            }
            ExprKind::Column(row, i) => {
                let r = self.eval(row);
                match r.kind {
                    V::Row(m, v) => self
                        .policy
                        .matrices
                        .get(m as usize)
                        .and_then(|d| d.cells.get(v as usize)?.get(*i).cloned())
                        .unwrap_or_else(Val::unknown),
                    _ if r.is_absent() => r,
                    _ => Val::unknown(),
                }
            }
            ExprKind::MatrixRow(m, key) => {
                let k = self.eval(key);
                match k.kind {
                    V::Enum(_, v) => Val::computed(V::Row(*m, v)),
                    V::Absent(_) => k,
                    _ => Val::unknown(),
                }
            }
            ExprKind::MapGet(base, key) => {
                let b = self.eval(base);
                let k = self.eval(key);
                match &b.kind {
                    // An entry under a key that is not there is as absent or unknown as the key.
                    V::Map(_) if k.is_absent() => k,
                    V::Map(entries) => entries
                        .iter()
                        .find(|(ek, _)| ek.same(&k) == Some(true))
                        .map(|(_, v)| v.clone())
                        .unwrap_or_else(|| {
                            let mut key = String::new();
                            match &k.kind {
                                V::Str(s) | V::Id(s) => crate::keypath::push_key(&mut key, s),
                                V::Enum(en, x) => crate::keypath::push_key(&mut key, self.policy.variant_name(*en, *x)),
                                _ => {}
                            }
                            absent_below(&b, &e.text, key)
                        }),
                    _ if b.is_absent() => b,
                    _ => Val::unknown(),
                }
            }
            ExprKind::Not(x) => Val::truth(match self.eval(x).as_truth() {
                Truth::True => Truth::False,
                Truth::False => Truth::True,
                Truth::Unknown => Truth::Unknown,
            }),
            ExprKind::And(a, b) => {
                let x = self.eval(a).as_truth();
                if x == Truth::False {
                    return Val::bool(false);
                }
                let y = self.eval(b).as_truth();
                Val::truth(match (x, y) {
                    (_, Truth::False) => Truth::False,
                    (Truth::True, Truth::True) => Truth::True,
                    _ => Truth::Unknown,
                })
            }
            ExprKind::Or(a, b) => {
                let x = self.eval(a).as_truth();
                if x == Truth::True {
                    return Val::bool(true);
                }
                let y = self.eval(b).as_truth();
                Val::truth(match (x, y) {
                    (_, Truth::True) => Truth::True,
                    (Truth::False, Truth::False) => Truth::False,
                    _ => Truth::Unknown,
                })
            }
            ExprKind::Compare(cmp, a, b) => {
                // A bound variable compared with a literal (`x == "a"`): both
                // read where they are held, with the two steps their evaluations take.
                if let (ExprKind::Var(s), ExprKind::Lit(y), Cmp::Eq | Cmp::Ne) = (&a.kind, &b.kind, cmp)
                    && self.spend(1)
                    && self.spend(1)
                {
                    let same = match self.env.get(*s as usize) {
                        Some(x) => x.same(y),
                        None => Val::unknown().same(y),
                    };
                    return match cmp {
                        Cmp::Eq => same.map_or_else(Val::unknown, Val::bool),
                        _ => same.map_or_else(Val::unknown, |s| Val::bool(!s)),
                    };
                }
                let x = self.eval(a);
                // A literal is compared where the policy holds it, with the step its evaluation takes.
                let owned;
                let y = match &b.kind {
                    ExprKind::Lit(lit) if self.spend(1) => lit,
                    _ => {
                        owned = self.eval(b);
                        &owned
                    }
                };
                match cmp {
                    Cmp::Eq => x.same(y).map_or_else(Val::unknown, Val::bool),
                    Cmp::Ne => x.same(y).map_or_else(Val::unknown, |s| Val::bool(!s)),
                    // An absence is decided: it is neither less nor more than anything.
                    _ if x.is_known_absent() || y.is_known_absent() => Val::bool(false),
                    // Null is decided: it is neither less nor more than anything.
                    _ if (matches!(x.kind, V::Null) && !y.is_absent())
                        || (matches!(y.kind, V::Null) && !x.is_absent()) =>
                    {
                        Val::bool(false)
                    }
                    _ => match order(&x, y) {
                        None => Val::unknown(),
                        Some(o) => Val::bool(match cmp {
                            Cmp::Lt => o.is_lt(),
                            Cmp::Le => o.is_le(),
                            Cmp::Gt => o.is_gt(),
                            _ => o.is_ge(),
                        }),
                    },
                }
            }
            ExprKind::Tighter(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                if x.is_known_absent() || y.is_known_absent() {
                    return Val::bool(false);
                }
                order(&x, &y).map_or_else(Val::unknown, |o| Val::bool(o.is_lt()))
            }
            ExprKind::In(x, coll) => {
                let v = self.eval(x);
                // An absence is in nothing.
                if v.is_known_absent() {
                    return Val::bool(false);
                }
                // `x in {"a", "b"}`: the literals are read in place, no list is built.
                if let ExprKind::List(items) = &coll.kind
                    && items.iter().all(|i| matches!(i.kind, ExprKind::Lit(_)))
                {
                    return member(
                        &v,
                        items.iter().filter_map(|i| match &i.kind {
                            ExprKind::Lit(l) => Some(l),
                            _ => None,
                        }),
                    );
                }
                let c = self.eval(coll);
                match &c.kind {
                    V::List(items) => member(&v, items.iter()),
                    V::Map(entries) => member(&v, entries.iter().map(|(k, _)| k)),
                    V::Domain(en) => match v.kind {
                        V::Enum(f, _) => Val::bool(f == *en),
                        _ => Val::unknown(),
                    },
                    // An absent collection holds nothing.
                    _ if c.is_known_absent() => member(&v, std::iter::empty()),
                    _ => Val::unknown(),
                }
            }
            ExprKind::Coalesce(a, b) => {
                // A default stands in for an absent value or missing evidence,
                // never for an invalid value: a wrong type is no safe default.
                let x = self.eval(a);
                if x.is_absent() && !x.is_invalid() { self.eval(b) } else { x }
            }
            ExprKind::Concat(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                // The documents of a kind are a list too (`histories ++ [...]`).
                let entries = |v: &Val| -> Option<Vec<Val>> {
                    match &v.kind {
                        V::List(p) => Some(p.to_vec()),
                        // An absent list holds nothing.
                        V::Absent(Absence::Known) => Some(Vec::new()),
                        V::Docs(k) => Some(self.all.get(*k as usize)?.iter().map(|(_, d)| d.clone()).collect()),
                        _ => None,
                    }
                };
                match (entries(&x), entries(&y)) {
                    (Some(p), Some(q)) => Val::computed(V::List(Arc::new(p.into_iter().chain(q).collect()))),
                    _ => Val::unknown(),
                }
            }
            ExprKind::Add(a, b) | ExprKind::Sub(a, b) | ExprKind::Mul(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                arithmetic(&e.kind, &x, &y)
            }
            ExprKind::Present(x) => {
                // Whether an invalid value is there is unknown: never a known
                // absence (an invalid enumeration value never reads as a value left out).
                let v = self.eval(x);
                if v.is_invalid() { v } else { Val::bool(!v.is_absent()) }
            }
            // There and of its type: an invalid value is as good as none, decidedly.
            ExprKind::Valid(x) => Val::bool(!self.eval(x).is_absent()),
            ExprKind::Count(x) => {
                let c = self.eval(x);
                match &c.kind {
                    V::List(items) => match distinct(self.policy, items) {
                        Some(d) => Val::computed(V::Int(d.len() as i64)),
                        None => Val::unknown(),
                    },
                    V::Map(entries) => Val::computed(V::Int(entries.len() as i64)),
                    V::Domain(en) => Val::computed(V::Int(
                        self.policy.enums.get(*en as usize).map_or(0, |d| d.variants.len()) as i64,
                    )),
                    // An absent collection holds nothing.
                    V::Absent(Absence::Known) => Val::computed(V::Int(0)),
                    _ if c.is_absent() => c,
                    _ => Val::unknown(),
                }
            }
            ExprKind::CountBy { slot, domain, key } => {
                let d = self.eval(domain);
                let V::List(items) = &d.kind else {
                    return if d.is_known_absent() { Val::computed(V::Int(0)) } else { Val::unknown() };
                };
                let mut keys = Vec::with_capacity(items.len());
                for item in items.iter() {
                    self.env[*slot as usize] = item.clone();
                    keys.push(self.eval(key));
                }
                let mut seen = Seen::default();
                for k in &keys {
                    match k.id_key(self.policy) {
                        Some(id) => {
                            seen.insert(id);
                        }
                        None => return Val::unknown(),
                    }
                }
                Val::computed(V::Int(seen.len() as i64))
            }
            ExprKind::Empty(x) => {
                let c = self.eval(x);
                match &c.kind {
                    V::List(items) => Val::bool(items.is_empty()),
                    V::Map(entries) => Val::bool(entries.is_empty()),
                    V::Absent(Absence::Known) => Val::bool(true),
                    _ => c,
                }
            }
            ExprKind::Max(a, b) | ExprKind::Min(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                // Absent in, absent out (unknown first).
                if let Some(v) =
                    [&x, &y].into_iter().find(|v| v.is_unknown()).or([&x, &y].into_iter().find(|v| v.is_absent()))
                {
                    return v.clone();
                }
                match order(&x, &y) {
                    None => Val::unknown(),
                    Some(o) => {
                        let take_x = if matches!(e.kind, ExprKind::Max(..)) { o.is_ge() } else { o.is_le() };
                        if take_x { x } else { y }
                    }
                }
            }
            ExprKind::Pairs(x) => {
                let c = self.eval(x);
                let V::List(items) = &c.kind else {
                    return if c.is_known_absent() { Val::computed(V::Pairs(Arc::new(Vec::new()))) } else { c };
                };
                let Some(d) = distinct(self.policy, items) else { return Val::unknown() };
                let n = d.len() as u64;
                if !self.spend(n.saturating_mul(n.saturating_sub(1)) / 2) {
                    return Val::unknown();
                }
                let mut pairs = Vec::new();
                for i in 0..d.len() {
                    for j in i + 1..d.len() {
                        pairs.push((d[i].clone(), d[j].clone()));
                    }
                }
                Val::computed(V::Pairs(Arc::new(pairs)))
            }
            ExprKind::Distinct(x) => {
                let c = self.eval(x);
                let V::List(items) = &c.kind else { return c };
                match distinct(self.policy, items) {
                    Some(d) => Val::new(V::List(Arc::new(d)), c.origin.clone()),
                    None => Val::unknown(),
                }
            }
            ExprKind::Entries(x) => {
                let c = self.eval(x);
                match &c.kind {
                    V::List(items) => Val::computed(V::Int(items.len() as i64)),
                    V::Absent(Absence::Known) => Val::computed(V::Int(0)),
                    _ => c,
                }
            }
            ExprKind::Split(s, sep) => {
                let (v, p) = (self.eval(s), self.eval(sep));
                match (&v.kind, &p.kind) {
                    (V::Str(s) | V::Id(s), V::Str(p)) if !p.is_empty() => {
                        // Counted before the parts are made: a step per part, and the reading.
                        if !self.read(&v) || !self.spend(s.matches(&**p).count() as u64 + 1) {
                            return Val::unknown();
                        }
                        let parts = s.split(&**p).map(|part| Val::new(V::Str(part.into()), v.origin.clone())).collect();
                        Val::new(V::List(Arc::new(parts)), v.origin.clone())
                    }
                    _ if v.is_absent() => v,
                    _ if p.is_absent() => p,
                    _ => Val::unknown(),
                }
            }
            ExprKind::TrimSuffix(s, suffix) => {
                let (v, p) = (self.eval(s), self.eval(suffix));
                if !self.read(&v) {
                    return Val::unknown();
                }
                match (&v.kind, &p.kind) {
                    (V::Str(s) | V::Id(s), V::Str(p)) => {
                        Val::new(V::Str(s.strip_suffix(&**p).unwrap_or(s).into()), v.origin.clone())
                    }
                    _ if v.is_absent() => v,
                    _ if p.is_absent() => p,
                    _ => Val::unknown(),
                }
            }
            ExprKind::Trim(s) => {
                let v = self.eval(s);
                if !self.read(&v) {
                    return Val::unknown();
                }
                match &v.kind {
                    V::Str(s) | V::Id(s) => Val::new(V::Str(s.trim().into()), v.origin.clone()),
                    _ => v,
                }
            }
            ExprKind::Url(part, s) => {
                let v = self.eval(s);
                if !self.read(&v) {
                    return Val::unknown();
                }
                // A part the URL lacks is decidedly absent; a text that is no
                // URL is missing evidence. Neither is an invalid value of the document.
                let (doc, span) = v.origin.document_span().map_or((None, Span::default()), |(d, s)| (Some(d), s));
                match v.as_str() {
                    Some(s) => match crate::url::url_part(s, *part) {
                        Ok(Some(u)) => Val::new(V::Str(u.into()), v.origin.clone()),
                        Ok(None) => Val::absent(e.text.as_str(), doc, span),
                        Err(_) => Val::missing(format!("`{}` (not a URL)", crate::value::shown(s)), doc, span),
                    },
                    None if v.is_absent() => v,
                    None => Val::unknown(),
                }
            }
            ExprKind::ParseInt(s) => {
                let v = self.eval(s);
                if !self.read(&v) {
                    return Val::unknown();
                }
                match &v.kind {
                    V::Str(s) | V::Id(s) => match crate::int::parse_decimal(s) {
                        Some(i) => Val::new(i.into(), v.origin.clone()),
                        // Not an integer: missing evidence, never an invalid value of the document.
                        None => {
                            let (doc, span) =
                                v.origin.document_span().map_or((None, Span::default()), |(d, s)| (Some(d), s));
                            Val::missing(format!("`{}` (not an integer)", crate::value::shown(s)), doc, span)
                        }
                    },
                    _ => v,
                }
            }
            ExprKind::Timestamp(s) => {
                let v = self.eval(s);
                if !self.read(&v) {
                    return Val::unknown();
                }
                match &v.kind {
                    V::Str(s) | V::Id(s) => match crate::time::rfc3339_nanos(s) {
                        Some(t) => Val::new(V::Time(t.into()), v.origin.clone()),
                        // Malformed: missing evidence, never an invalid value of the document.
                        None => {
                            let (doc, span) =
                                v.origin.document_span().map_or((None, Span::default()), |(d, s)| (Some(d), s));
                            Val::missing(format!("`{}` (not an RFC 3339 date-time)", crate::value::shown(s)), doc, span)
                        }
                    },
                    _ => v,
                }
            }
            ExprKind::Fold { op, list, durations } => {
                let l = self.eval(list);
                // An absent list holds nothing.
                let items: &[Val] = match &l.kind {
                    V::List(items) => items,
                    V::Absent(Absence::Known) => &[],
                    _ => return l,
                };
                // An absent entry makes the result absent; an unknown one unknown.
                if let Some(v) = items.iter().find(|v| v.is_unknown()).or(items.iter().find(|v| v.is_absent())) {
                    return v.clone();
                }
                fold(*op, items, *durations).unwrap_or_else(|| match items.is_empty() {
                    // The least of nothing is not there: what needs it is missing evidence.
                    true => {
                        let (doc, span) =
                            l.origin.document_span().map_or((None, Span::default()), |(d, s)| (Some(d), s));
                        Val::missing(e.text.as_str(), doc, span)
                    }
                    false => Val::unknown(),
                })
            }
            ExprKind::Now => {
                self.now_read = true;
                match self.now {
                    Some(t) => Val::computed(V::Time(t.into())),
                    None => Val::missing("now() (the time of the check was not given)", None, Span::default()),
                }
            }
            ExprKind::Param(name) => match self.params.iter().find(|p| p.name == *name) {
                Some(p) => {
                    let values = p.values.iter().map(|v| Val::computed(V::Str(v.as_str().into()))).collect();
                    Val::computed(V::List(Arc::new(values)))
                }
                None => {
                    Val::absent(format!("param(\"{name}\") (the invocation did not give it)"), None, Span::default())
                }
            },
            ExprKind::DurationOf(unit, n) => {
                let v = self.eval(n);
                match &v.kind {
                    V::Int(n) => Val::new(V::Duration((i128::from(*n) * i128::from(*unit)).into()), v.origin.clone()),
                    // Past 64 bits: exact within 128-bit nanoseconds, unknown past them.
                    V::BigInt(_) => match v.as_int().and_then(|n| n.to_i128()?.checked_mul(i128::from(*unit))) {
                        Some(d) => Val::new(V::Duration(d.into()), v.origin.clone()),
                        None => Val::unknown(),
                    },
                    _ => v,
                }
            }
            ExprKind::Matches(s, re) => {
                let v = self.eval(s);
                if !self.read(&v) {
                    return Val::unknown();
                }
                match &v.kind {
                    V::Str(s) | V::Id(s) => re.is_match(s).map_or_else(Val::unknown, Val::bool),
                    // An absent string matches nothing.
                    V::Absent(Absence::Known) => Val::bool(false),
                    _ => Val::unknown(),
                }
            }
            ExprKind::BoundTo(x, layer) => {
                let v = self.eval(x);
                // Only a value read from a document counts; a default, a literal or a missing value did not come from one.
                let bound = match &v.origin {
                    Origin::Document { doc, .. } if !v.is_absent() => self
                        .layers
                        .iter()
                        .any(|l| l.doc == *doc && l.layer == *layer && l.by != crate::layers::BoundBy::Unbound),
                    _ => false,
                };
                Val::bool(bound)
            }
            ExprKind::Reason(x) => {
                let v = self.eval(x);
                let text = match &v.origin {
                    _ if !v.is_absent() => "present".to_string(),
                    _ if v.is_invalid() => "the value is invalid".to_string(),
                    // A file that was not read says which and why; anything else is missing.
                    Origin::Missing(m) if m.what.starts_with('`') => m.what.to_string(),
                    Origin::Missing(m) => format!("`{}` is absent", m.what),
                    _ => "it is unknown".to_string(),
                };
                Val::computed(V::Str(text.into()))
            }
            ExprKind::Holds(patterns, x) => {
                let v = self.eval(x);
                let Some(at) = v.origin.document_span() else { return Val::unknown() };
                Val::bool(self.broken(patterns, at).is_none())
            }
            ExprKind::Failure(patterns, x) => {
                let v = self.eval(x);
                let Some(at) = v.origin.document_span() else { return Val::unknown() };
                // The rules in the order the list names them: the first pattern with a finding decides.
                let first = patterns.iter().find_map(|p| self.broken(std::slice::from_ref(p), at));
                match first {
                    Some(f) => {
                        let said = f.place.reported.as_deref().unwrap_or(&f.message);
                        Val::computed(V::Str(said.into()))
                    }
                    None => Val::computed(V::Absent(crate::value::Absence::Known)),
                }
            }
            ExprKind::Builtin(b, args) => {
                let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
                self.builtin(*b, vals)
            }
            ExprKind::Lower(x) => {
                let v = self.eval(x);
                if !self.read(&v) {
                    return Val::unknown();
                }
                match &v.kind {
                    V::Str(s) | V::Id(s) => Val::new(V::Str(s.to_lowercase().into()), v.origin.clone()),
                    V::Absent(_) => v,
                    _ => Val::unknown(),
                }
            }
            ExprKind::List(items) => Val::computed(V::List(Arc::new(items.iter().map(|i| self.eval(i)).collect()))),
            ExprKind::Quant { every, pattern, domain, body } => {
                let d = self.eval(domain);
                // Over an absent collection as over an empty one.
                if d.is_known_absent() {
                    return Val::bool(*every);
                }
                let Some(elements) = self.elements(&d, pattern) else { return unknown_below(d) };
                let mut unknown = false;
                for (values, _) in elements {
                    self.bind(pattern, values);
                    match (self.eval(body).as_truth(), every) {
                        (Truth::False, true) => return Val::bool(false),
                        (Truth::True, false) => return Val::bool(true),
                        (Truth::Unknown, _) => unknown = true,
                        _ => {}
                    }
                }
                if unknown { Val::unknown() } else { Val::bool(*every) }
            }
            ExprKind::Comprehension { value, pattern, domain, filter } => {
                let d = self.eval(domain);
                if d.is_known_absent() {
                    return Val::computed(V::List(Arc::new(Vec::new())));
                }
                let Some(elements) = self.elements(&d, pattern) else { return unknown_below(d) };
                let mut out = Vec::new();
                for (values, _) in elements {
                    self.bind(pattern, values);
                    if let Some(f) = filter {
                        match self.eval(f).as_truth() {
                            Truth::True => {}
                            Truth::False => continue,
                            // Unknown because of an invalid value of the document: say so
                            // where the list is used, not by the rule's own names.
                            Truth::Unknown => return self.invalid_read(f).unwrap_or_else(Val::unknown),
                        }
                    }
                    out.push(self.eval(value));
                }
                Val::computed(V::List(Arc::new(out)))
            }
            ExprKind::Let { slot, value, body } => {
                if let Some(calls) = self.calls
                    && let Ok(at) = calls.heads.binary_search_by_key(slot, |c| c.slot)
                {
                    return self.call(calls, calls.heads[at], e);
                }
                let v = self.eval(value);
                if let Some(s) = self.env.get_mut(*slot as usize) {
                    *s = v;
                }
                self.eval(body)
            }
        }
    }

    /// A memoised call (see [`Memo`]), `head` its first `Let`, whose step
    /// is taken: the arguments evaluated and bound as the lets would, then
    /// the result the same arguments gave before, else the body's.
    fn call(&mut self, calls: Calls<'_>, call: CallHead, head: &Expr) -> Val {
        // The arguments are bound as the lets would bind them, and compared
        // where they are bound: a hit copies no argument.
        let mut e = head;
        let mut slots = [0usize; MEMO_ARGS];
        let mut bound = 0;
        for i in 0..call.args {
            let ExprKind::Let { slot, value, body } = &e.kind else { break };
            if i > 0 && !self.spend(1) {
                return Val::unknown();
            }
            let v = self.eval(value);
            if let Some(s) = self.env.get_mut(*slot as usize) {
                *s = v;
                if let Some(kept) = slots.get_mut(bound) {
                    *kept = *slot as usize;
                }
                bound += 1;
            }
            e = body;
        }
        // A call of more arguments, or one not bound as lowered, is evaluated (the memo changes no result).
        if bound != call.args as usize || bound > MEMO_ARGS {
            return self.eval(e);
        }
        let args = &slots[..bound];
        let key = (calls.subject.0, calls.subject.1, call.func);
        let print = args.iter().fold(0u64, |acc, &s| acc.rotate_left(23) ^ fingerprint(&self.env[s]));
        let full = {
            let memo = calls.memo.0.borrow();
            let kept = memo.get(&key);
            if let Some(hit) = kept.and_then(|m| {
                m.iter().find(|m| m.print == print && m.args.iter().zip(args).all(|(a, &s)| identical(a, &self.env[s])))
            }) && !self.exhausted
                && hit.steps <= self.fuel
            {
                self.fuel -= hit.steps;
                self.now_read |= hit.now_read;
                return hit.value.clone();
            }
            kept.is_some_and(|m| m.len() >= MEMO_PER_FUNCTION)
        };
        // The arguments are copied only when there is room to keep them.
        let stored: Option<Vec<Val>> = (!full).then(|| args.iter().map(|&s| self.env[s].clone()).collect());
        let (fuel, now_read) = (self.fuel, std::mem::replace(&mut self.now_read, false));
        let value = self.eval(e);
        let read = self.now_read;
        self.now_read |= now_read;
        if !self.exhausted
            && let Some(args) = stored
        {
            let mut memo = calls.memo.0.borrow_mut();
            let kept = memo.entry(key).or_default();
            if kept.len() < MEMO_PER_FUNCTION {
                kept.push(Memoised { print, args, value: value.clone(), steps: fuel - self.fuel, now_read: read });
            }
        }
        value
    }
}

/// Writes a value's label (see [`Val::label`]), or the element's index when
/// it has none, without a string of its own for the common cases.
fn push_label(out: &mut String, v: &Val, n: usize, policy: &Policy) {
    let id = match &v.kind {
        ValKind::Record(r, fields) => {
            policy.records.get(*r as usize).and_then(|d| d.identity).and_then(|i| fields.get(i))
        }
        _ => Some(v),
    };
    match id.map(|v| &v.kind) {
        Some(ValKind::Str(s) | ValKind::Id(s)) => out.push_str(&crate::value::shown(s)),
        Some(ValKind::Enum(e, x)) => out.push_str(policy.variant_name(*e, *x)),
        _ => match v.label(policy) {
            Some(l) => out.push_str(&l),
            None => {
                use std::fmt::Write as _;
                let _ = write!(out, "{n}");
            }
        },
    }
}

/// `v in items`: true when an item is `v`; unknown when none is but one (or
/// `v`) cannot be compared; false otherwise.
fn member<'v>(v: &Val, items: impl Iterator<Item = &'v Val>) -> Val {
    if v.is_known_absent() {
        return Val::bool(false);
    }
    let mut unknown = v.is_absent();
    for item in items {
        match item.same(v) {
            Some(true) => return Val::bool(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown { Val::unknown() } else { Val::bool(false) }
}

/// The absence of something below `parent`. Below an absent, unknown or
/// invalid parent it is absent, unknown or invalid in the same way; below a
/// present parent (a map without the entry, a list without the index) it is
/// decidedly absent, located at the parent.
/// Where the entry of `map` under `key` would be, for an entry the document
/// does not hold: the nearest node of the map that is there, and the keys
/// below it.
fn anchor(map: &Val, key: &Val, policy: &Policy) -> Option<(u32, Span, Box<str>)> {
    let (doc, span, mut below) = match &map.origin {
        Origin::Document { doc, span } => (*doc, *span, String::new()),
        Origin::Missing(m) => (m.doc?, m.span, m.below.to_string()),
        _ => return None,
    };
    match &key.kind {
        ValKind::Str(s) | ValKind::Id(s) => crate::keypath::push_key(&mut below, s),
        ValKind::Enum(e, x) => crate::keypath::push_key(&mut below, policy.variant_name(*e, *x)),
        _ => return None,
    }
    Some((doc, span, below.into()))
}

/// `below` is the missing entry's key or index, as a key path suffix.
fn absent_below(parent: &Val, what: &str, below: String) -> Val {
    if parent.is_absent() {
        return parent.clone();
    }
    match &parent.origin {
        Origin::Document { doc, span } => Val::lacking_below(Absence::Known, what, Some(*doc), *span, below.into()),
        // A collection the document leaves out, filled by the policy's defaults.
        Origin::Missing(m) if m.doc.is_some() => {
            Val::lacking_below(Absence::Known, what, m.doc, m.span, format!("{}{below}", m.below).into())
        }
        _ => Val::absent(what, None, Span::default()),
    }
}

/// What is read through a value that is no collection: as absent, unknown
/// or invalid as the value is, else unknown.
fn unknown_below(v: Val) -> Val {
    if v.is_absent() { v } else { Val::unknown() }
}

/// `sum`, `min` or `max` of a list of ints or durations; `None` when an
/// entry is not one (absent or invalid: unknown) or, for `min` and `max`,
/// when the list is empty. Sums of durations saturate; a sum of ints is exact
/// within `i128` and `None` past it.
pub(crate) fn fold(op: FoldOp, items: &[Val], durations: bool) -> Option<Val> {
    if !durations {
        return fold_ints(op, items);
    }
    let mut acc: Option<i128> = None;
    for item in items {
        let n = match item.kind {
            ValKind::Int(i) => i128::from(i),
            ValKind::Duration(d) => d.get(),
            _ => return None,
        };
        acc = Some(match (op, acc) {
            (_, None) => n,
            (FoldOp::Sum, Some(a)) => a.saturating_add(n),
            (FoldOp::Min, Some(a)) => a.min(n),
            (FoldOp::Max, Some(a)) => a.max(n),
        });
    }
    let n = match (op, acc) {
        (FoldOp::Sum, None) => 0,
        (_, None) => return None,
        (_, Some(n)) => n,
    };
    Some(Val::computed(if durations {
        ValKind::Duration(n.into())
    } else {
        ValKind::Int(n.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }))
}

/// `sum`, `min` or `max` of ints of any size: `min` and `max` exact at any
/// size, `sum` within `i128` (`None` past it, or for an entry not an int).
fn fold_ints(op: FoldOp, items: &[Val]) -> Option<Val> {
    if op == FoldOp::Sum {
        let mut sum: i128 = 0;
        for item in items {
            sum = sum.checked_add(item.as_int()?.to_i128()?)?;
        }
        return Some(Val::computed(crate::int::from_i128(sum).into()));
    }
    let mut best: Option<&Val> = None;
    for item in items {
        let n = item.as_int()?;
        let better = match best.and_then(Val::as_int) {
            None => true,
            Some(b) if op == FoldOp::Min => n.cmp(&b).is_lt(),
            Some(b) => n.cmp(&b).is_gt(),
        };
        if better {
            best = Some(item);
        }
    }
    best.map(|b| Val::computed(b.kind.clone()))
}

/// `a + b`, `a - b`, `a * b` over ints, instants and durations (the types
/// lowering admits); unknown when an operand is absent or of another kind.
/// Ints are exact within `i128` (of any size beyond 64 bits) and unknown
/// past it; instants and durations are 128-bit nanoseconds.
pub(crate) fn arithmetic(op: &ExprKind, x: &Val, y: &Val) -> Val {
    use ValKind as V;
    // Absent in, absent out: unknown when a side is unknown, else absent when a side is.
    if let Some(v) = [x, y].into_iter().find(|v| v.is_unknown()).or([x, y].into_iter().find(|v| v.is_absent())) {
        return v.clone();
    }
    let (add, sub) = (matches!(op, ExprKind::Add(..)), matches!(op, ExprKind::Sub(..)));
    let kind = match (x.as_int().and_then(|p| p.to_i128()), y.as_int().and_then(|q| q.to_i128())) {
        (Some(p), Some(q)) => {
            let n = if add {
                p.checked_add(q)
            } else if sub {
                p.checked_sub(q)
            } else {
                p.checked_mul(q)
            };
            return match n {
                Some(n) => Val::computed(crate::int::from_i128(n).into()),
                None => Val::unknown(),
            };
        }
        _ => (&x.kind, &y.kind),
    };
    let kind = match kind {
        (V::Str(p) | V::Id(p), V::Str(q) | V::Id(q)) if add => V::Str(format!("{p}{q}").into()),
        (V::Time(p), V::Time(q)) if sub => V::Duration(p.get().saturating_sub(q.get()).into()),
        (V::Time(p), V::Duration(q)) if add => V::Time(p.get().saturating_add(q.get()).into()),
        (V::Duration(p), V::Time(q)) if add => V::Time(p.get().saturating_add(q.get()).into()),
        (V::Time(p), V::Duration(q)) if sub => V::Time(p.get().saturating_sub(q.get()).into()),
        (V::Duration(p), V::Duration(q)) if add => V::Duration(p.get().saturating_add(q.get()).into()),
        (V::Duration(p), V::Duration(q)) if sub => V::Duration(p.get().saturating_sub(q.get()).into()),
        (V::Duration(p), V::Int(q)) | (V::Int(q), V::Duration(p)) if !add && !sub => {
            V::Duration(p.get().saturating_mul(i128::from(*q)).into())
        }
        _ => return Val::unknown(),
    };
    Val::computed(kind)
}

/// Order of two ints or two variants of one enumeration (declaration order).
fn order(a: &Val, b: &Val) -> Option<std::cmp::Ordering> {
    match (&a.kind, &b.kind) {
        (ValKind::Int(_) | ValKind::BigInt(_), ValKind::Int(_) | ValKind::BigInt(_)) => {
            Some(a.as_int()?.cmp(&b.as_int()?))
        }
        (ValKind::Time(x), ValKind::Time(y)) | (ValKind::Duration(x), ValKind::Duration(y)) => {
            Some(x.get().cmp(&y.get()))
        }
        (ValKind::Enum(e, x), ValKind::Enum(f, y)) if e == f => Some(x.cmp(y)),
        _ => None,
    }
}

/// The first entry of every distinct identity; `None` if an identity is unknown.
fn distinct(policy: &Policy, items: &[Val]) -> Option<Vec<Val>> {
    let mut seen = Seen::default();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if seen.insert(item.id_key(policy)?) {
            out.push(item.clone());
        }
    }
    Some(out)
}

/// The last value read of each expression, in reading order: after a
/// quantifier, the element that decided it.
pub(crate) fn last_reads(mut reads: Vec<Read>) -> Vec<Read> {
    let mut seen = std::collections::HashSet::new();
    reads.reverse();
    reads.retain(|r| seen.insert(r.expr.clone()));
    reads.reverse();
    reads
}

/// A set of identities, without allocating a key per entry: a scan while
/// small (lists of slots are), a hash set beyond.
#[derive(Default)]
pub(crate) struct Seen<'v> {
    few: Vec<IdKey<'v>>,
    many: HashSet<IdKey<'v>>,
}

impl<'v> Seen<'v> {
    /// Whether `id` is new (and now seen).
    pub(crate) fn insert(&mut self, id: IdKey<'v>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&id) {
                return false;
            }
            if self.few.len() < 32 {
                self.few.push(id);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(id)
    }

    pub(crate) fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }
}

/// An origin as explanations show it.
pub fn provenance(origin: &Origin) -> Provenance {
    match origin {
        Origin::Document { doc, span } => Provenance::Document(*doc, *span),
        Origin::Policy { file, span } => Provenance::Policy(Loc { file: *file, span: *span }),
        Origin::Computed => Provenance::Computed,
        Origin::Missing(m) => Provenance::Missing(m.what.to_string()),
    }
}

/// A glob over `/`-separated paths: `*` and `?` stay within a segment, `**`
/// crosses segments (`evidence/**` matches everything below `evidence`).
/// `text` with its line `n` (0-based, counted as `str::lines` counts them:
/// a line ends at `\n` or `\r\n`, a last line without an end is a line)
/// replaced by `to`, every line end kept as written; `None` when the text
/// has no line `n`.
pub fn replace_line(text: &str, n: usize, to: &str) -> Option<String> {
    let (mut start, mut index) = (0, 0);
    for line in text.split_inclusive('\n') {
        if index == n {
            let end = line.strip_suffix("\r\n").or_else(|| line.strip_suffix('\n')).unwrap_or(line).len();
            return Some(format!("{}{to}{}", &text[..start], &text[start + end..]));
        }
        start += line.len();
        index += 1;
    }
    None
}

pub fn glob(pattern: &str) -> Result<globset::GlobMatcher, String> {
    // A glob is matched against normalised paths, which hold no `.` or `..`
    // segment and no empty one: a pattern with one could never match.
    if pattern.split('/').enumerate().any(|(i, s)| s == "." || s == ".." || (s.is_empty() && i > 0)) {
        return Err("it has a `.`, `..` or empty segment, and a normalised path never does".into());
    }
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

/// `p` against the folder `base` (unless `p` is absolute), with `.` and
/// `..` resolved by their text (a `..` at the root stays at the root).
pub fn resolve_path(base: &str, p: &str) -> String {
    let joined = if p.starts_with('/') || base.is_empty() { p.to_string() } else { format!("{base}/{p}") };
    let absolute = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            _ => parts.push(part),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// `p` relative to the folder `base`, both resolved first; `None` when `p`
/// is not `base` or below it.
pub fn relative_path(p: &str, base: &str) -> Option<String> {
    let (p, base) = (resolve_path("", p), resolve_path("", base));
    if p == base {
        return Some(".".into());
    }
    let prefix = if base.ends_with('/') { base } else { format!("{base}/") };
    p.strip_prefix(&prefix).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{self, Format, Limits};

    /// A policy of one document kind (`items`, `a`, `b`: strings) and `rules`,
    /// with a function of one argument that takes a few steps.
    fn policy(rules: &str) -> Policy {
        let source = format!(
            r#"
document Doc as doc where kind == "doc" {{
  on syntax rule doc.syntax
  on duplicate_key rule doc.duplicate_key
  on unknown_key rule doc.unknown_key
  on type rule doc.type
  kind: string
  a?: string
  b?: string
  items?: list string default []
}}
fn long(s) = s != "" and s != "-" and s != "--" and s != "---"
{rules}
"#
        );
        let parsed = grail_lang::parse(&source);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let lowered = crate::lower::lower(&[&parsed.file]);
        assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
        lowered.policy
    }

    /// The conformed document of `json`.
    fn document(policy: &Policy, json: &str) -> Val {
        let node = document::load(json, Format::Json, &Limits::default()).expect("the test's JSON is well formed");
        let none = Checks::default();
        let never = |_: &str| crate::conform::Resolved::Refused("not read".into());
        let env = crate::conform::Env { overrides: &none, resolve: &never, partial: false };
        crate::conform::conform(policy, 0, 0, &node, &env).0
    }

    /// Evaluates `rule` over `doc` with `memo`: its outcomes and the steps it took.
    fn evaluate(policy: &Policy, rule: &str, doc: &Val, memo: Memo, trace: bool) -> (Vec<Outcome>, u64, Memo) {
        let single = [Some(doc.clone())];
        let all = [vec![("doc.json".to_string(), doc.clone())]];
        let roots = Roots { memo, ..Roots::of(&single, &all) };
        let rule = policy.rules.iter().find(|r| r.id == rule).expect("the rule");
        let mut out = Vec::new();
        let steps = evaluate_rule_within(policy, rule, &roots, &[], trace, &mut out, MAX_STEPS_PER_RULE);
        (out.iter().map(|f| f.outcome).collect(), steps, roots.memo)
    }

    /// The argument lists kept for the one memoised function.
    fn kept(memo: &Memo) -> usize {
        memo.0.borrow().values().map(Vec::len).sum()
    }

    /// A second rule calling the function with the same argument takes the
    /// value the first computed (here replaced, to tell), and spends the
    /// steps the evaluation took, so its steps are those of no memo at all.
    #[test]
    fn a_hit_reuses_the_value_and_spends_the_recorded_steps() {
        let p = policy(
            "rule r.first\n  require long(doc.a)\n    else fail \"short\"\n\
             rule r.second\n  require long(doc.a)\n    else fail \"short\"\n",
        );
        let doc = document(&p, r#"{"kind": "doc", "a": "abcd"}"#);
        let (_, alone, _) = evaluate(&p, "r.second", &doc, Memo::default(), false);
        let (first, _, memo) = evaluate(&p, "r.first", &doc, Memo::default(), false);
        assert_eq!(first, [Outcome::Pass]);
        assert_eq!(kept(&memo), 1);
        let (second, steps, memo) = evaluate(&p, "r.second", &doc, memo, false);
        assert_eq!(second, [Outcome::Pass]);
        assert_eq!(steps, alone, "a hit spends the steps the evaluation took");
        assert_eq!(kept(&memo), 1, "a hit keeps nothing more");
        // The value kept is the value given: made false, the second rule fails.
        for kept in memo.0.borrow_mut().values_mut().flatten() {
            kept.value = Val::bool(false);
        }
        let (second, steps, _) = evaluate(&p, "r.second", &doc, memo, false);
        assert_eq!(second, [Outcome::Fail]);
        assert_eq!(steps, alone);
    }

    /// A function called with a new argument per element keeps the first
    /// [`MEMO_PER_FUNCTION`] argument lists, and evaluates the rest.
    #[test]
    fn at_most_sixteen_argument_lists_are_kept() {
        let p = policy("rule r.each\n  for i in doc.items\n  require long(i)\n    else fail \"short\"\n");
        let items: Vec<String> = (0..20).map(|i| format!("\"{}\"", "-".repeat(i))).collect();
        let doc = document(&p, &format!(r#"{{"kind": "doc", "items": [{}]}}"#, items.join(", ")));
        let (outcomes, steps, memo) = evaluate(&p, "r.each", &doc, Memo::default(), false);
        assert_eq!(kept(&memo), MEMO_PER_FUNCTION);
        let fails = outcomes.iter().filter(|o| **o == Outcome::Fail).count();
        assert_eq!((outcomes.len(), fails), (20, 4), "\"\" to \"---\" are short");
        // Again over the same memo: the same outcomes, steps, and nothing more kept.
        let (again, again_steps, memo) = evaluate(&p, "r.each", &doc, memo, false);
        assert_eq!((again, again_steps), (outcomes, steps));
        assert_eq!(kept(&memo), MEMO_PER_FUNCTION);
    }

    /// Arguments equal in value but read from different places are
    /// different arguments: a result keeps its arguments' origins.
    #[test]
    fn equal_values_of_different_origins_are_different_arguments() {
        let p = policy("rule r.both\n  require long(doc.a) and long(doc.b) and long(doc.a)\n    else fail \"short\"\n");
        let doc = document(&p, r#"{"kind": "doc", "a": "same", "b": "same"}"#);
        let (outcomes, _, memo) = evaluate(&p, "r.both", &doc, Memo::default(), false);
        assert_eq!(outcomes, [Outcome::Pass]);
        assert_eq!(kept(&memo), 2, "`doc.a` twice is one argument list, `doc.b` another");
    }

    /// Explaining records the values each step reads: it never takes a
    /// result from the memo, nor keeps one.
    #[test]
    fn explaining_bypasses_the_memo() {
        let p = policy("rule r.first\n  require long(doc.a) and long(doc.a)\n    else fail \"short\"\n");
        let doc = document(&p, r#"{"kind": "doc", "a": "abcd"}"#);
        let (_, _, memo) = evaluate(&p, "r.first", &doc, Memo::default(), true);
        assert_eq!(kept(&memo), 0);
        let (_, _, memo) = evaluate(&p, "r.first", &doc, Memo::default(), false);
        assert_eq!(kept(&memo), 1);
        for kept in memo.0.borrow_mut().values_mut().flatten() {
            kept.value = Val::bool(false);
        }
        let (outcomes, _, _) = evaluate(&p, "r.first", &doc, memo, true);
        assert_eq!(outcomes, [Outcome::Pass], "the value kept is not read while explaining");
    }
}
