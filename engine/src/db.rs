//! The salsa database: source texts are inputs; parsing, compiling, loading
//! and checking are tracked queries. Nothing here prints or touches the file
//! system; callers set inputs and read results.

use std::sync::{Arc, Mutex};

use grail_lang::Parsed;

use crate::check;
use crate::diagnostic::{Finding, PolicyDiagnostic, Severity};
use crate::document::{self, Format, Limits, Node, SyntaxError};
use crate::explain::Explanation;
use crate::hir::{Loc, Policy};
use crate::layers::Bound;
use crate::lower::lower;
use crate::question::Decision;

/// One source file: a policy file or a document, by path and text.
#[salsa::input(debug)]
pub struct SourceText {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
    /// Why the file's bytes are not its text (`text` then holds what could be
    /// decoded, and is not read as a document).
    #[returns(copy)]
    pub read_error: Option<ReadError>,
    /// The file's bytes when they are not its text (not UTF-8, or UTF-16):
    /// an attached file is hashed over its exact bytes, never over `text`.
    #[default]
    pub raw: Option<std::sync::Arc<[u8]>>,
    /// Why the caller could not read the file at all (it does not exist, it
    /// is a folder, ...): the file is then a document that does not load.
    #[default]
    #[returns(ref)]
    pub unread: Option<String>,
}

/// Why the bytes of a file could not be taken as its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadError {
    /// Not UTF-8 from this byte on.
    InvalidUtf8 { at: usize },
    /// UTF-16, by its byte order mark.
    Utf16,
    /// Larger than the most the caller reads: `limit` bytes; `size` when known.
    TooLarge { limit: u64, size: Option<u64> },
}

impl SourceText {
    /// A source from the bytes of a file: decoded, or lossily decoded with the
    /// offset of the first byte that is not UTF-8.
    pub fn from_bytes(db: &dyn salsa::Database, path: String, bytes: Vec<u8>) -> SourceText {
        let (text, error, raw) = decode(bytes);
        SourceText::builder(path, text, error).raw(raw).new(db)
    }

    /// Replaces the bytes of a source (an edit), decoded as by [`SourceText::from_bytes`].
    pub fn set_bytes(self, db: &mut Database, bytes: Vec<u8>) {
        use salsa::Setter as _;
        let (text, error, raw) = decode(bytes);
        self.set_text(db).to(text);
        self.set_read_error(db).to(error);
        self.set_raw(db).to(raw);
    }

    /// A file the caller refused to read whole: it holds more than `limit`
    /// bytes (`size`, when the caller knows it).
    pub fn too_large(db: &dyn salsa::Database, path: String, limit: u64, size: Option<u64>) -> SourceText {
        SourceText::new(db, path, String::new(), Some(ReadError::TooLarge { limit, size }))
    }
}

fn show_size_bytes(bytes: u64) -> String {
    format!("{bytes} byte{}", if bytes == 1 { "" } else { "s" })
}

/// The text of a file's bytes, and why it is not all of them.
/// The text of `bytes`, why it is not all of them, and the bytes when it is not.
fn decode(bytes: Vec<u8>) -> (String, Option<ReadError>, Option<std::sync::Arc<[u8]>>) {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return (String::new(), Some(ReadError::Utf16), Some(bytes.into()));
    }
    match String::from_utf8(bytes) {
        Ok(text) => (text, None, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            (text, Some(ReadError::InvalidUtf8 { at }), Some(e.into_bytes().into()))
        }
    }
}

/// `16 MiB`, `1 KiB`, `100 bytes`: a byte count as a person would write it.
pub fn show_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    if bytes >= 1 << 20 {
        return format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64);
    }
    format!("{bytes} byte{}", if bytes == 1 { "" } else { "s" })
}

/// The files of one policy; file `i` is `Loc { file: i, .. }` in diagnostics.
#[salsa::input(debug)]
pub struct PolicySet {
    #[returns(ref)]
    pub files: Vec<SourceText>,
}

/// The documents checked together as one deployment, the files their
/// `ref` fields name, as the caller read them, and the layers the caller
/// bound documents to (`Deployment::builder(..).bindings(..)`; none by default).
#[salsa::input(debug)]
pub struct Deployment {
    #[returns(ref)]
    pub documents: Vec<SourceText>,
    #[returns(ref)]
    pub attachments: Vec<AttachedFile>,
    /// The time of the check, in nanoseconds since the Unix epoch, that
    /// `now()` reads; without it `now()` is missing evidence. The engine
    /// never reads a clock: the caller puts the time in (`--now`, or its clock).
    #[default]
    #[returns(copy)]
    pub now: Option<i128>,
    #[default]
    #[returns(ref)]
    pub bindings: Vec<LayerBinding>,
    /// The files the caller attached under the paths documents record
    /// (`--attach RECORDED=LOCAL`), which `attached(p)` reads.
    #[default]
    #[returns(ref)]
    pub given: Vec<GivenFile>,
    /// Previous versions of documents of the deployment (`--base`), each
    /// compared with its document: what the new version loosens is the
    /// kind's `change` finding.
    #[default]
    #[returns(ref)]
    pub bases: Vec<BaseVersion>,
    /// The named parameters of the invocation (flags, or keys of a deployment
    /// of the workspace file), which `param("name")` reads; one not given is absent.
    #[default]
    #[returns(ref)]
    pub params: Vec<check::Param>,
    /// Files the caller gives the deployment under a name (`--evidence FILE`
    /// gives FILE as `evidence`), each of the kind selected by `given` that
    /// name, never by its content.
    #[default]
    #[returns(ref)]
    pub named: Vec<NamedDocument>,
    /// The invocation asked for Markdown records (`grail check --binding A
    /// TARGET...`): these documents are read as such whatever their names
    /// (every file must carry its marker), and finding none is the kind's
    /// `empty` finding, even when the targets hold no file. `None`: the
    /// documents are read by their names.
    #[default]
    #[returns(ref)]
    pub markdown: Option<Vec<SourceText>>,
}

/// A document the caller gives under a name (see [`Deployment::named`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NamedDocument {
    pub name: String,
    pub document: SourceText,
}

/// The previous version of a document of the deployment (`--base OLD`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BaseVersion {
    pub document: SourceText,
    pub base: SourceText,
}

/// A file the caller attached under a path a document records: read, or
/// refused with the reason.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GivenFile {
    pub recorded: String,
    pub read: Result<SourceText, String>,
}

/// A document of the deployment bound to a layer of its kind by the caller
/// (a `--layer NAME=FILE` flag, or the workspace file).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LayerBinding {
    pub document: SourceText,
    pub layer: String,
    pub by: crate::layers::BoundBy,
}

/// A file a document's `ref` field names: read, or refused with the reason.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttachedFile {
    pub from: SourceText,
    /// The path as the document writes it.
    pub path: String,
    pub read: Result<SourceText, String>,
}

#[salsa::tracked(returns(ref))]
pub fn parse_policy(db: &dyn salsa::Database, file: SourceText) -> Parsed {
    grail_lang::parse(file.text(db))
}

/// A compiled policy and its diagnostics; the policy is usable only when no
/// diagnostic is an error.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    pub policy: Arc<Policy>,
    pub diagnostics: Vec<PolicyDiagnostic>,
}

impl Compiled {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

#[salsa::tracked(returns(ref))]
pub fn compile_policy(db: &dyn salsa::Database, set: PolicySet) -> Compiled {
    let sources = set.files(db);
    if let Some(policy) = crate::prebuilt::lookup(sources.iter().map(|f| (f.path(db).as_str(), f.text(db).as_str()))) {
        return Compiled { policy, diagnostics: Vec::new() };
    }
    let mut diagnostics = Vec::new();
    let mut files = Vec::new();
    for (i, file) in sources.iter().enumerate() {
        let parsed = parse_policy(db, *file);
        for e in &parsed.errors {
            diagnostics.push(PolicyDiagnostic::error(
                "syntax",
                Loc { file: i as u32, span: e.span },
                e.message.clone(),
            ));
        }
        files.push(&parsed.file);
    }
    let lowered = lower(&files);
    diagnostics.extend(lowered.diagnostics);
    Compiled { policy: Arc::new(lowered.policy), diagnostics }
}

/// How a document is read: by its extension, else by its first character.
pub fn document_format(path: &str, text: &str) -> Format {
    document::format_for_path(path).unwrap_or_else(|| {
        if text.trim_start_matches('\u{feff}').trim_start().starts_with(['{', '[']) {
            Format::Json
        } else {
            Format::Yaml
        }
    })
}

#[salsa::tracked(returns(ref))]
pub fn load_document(db: &dyn salsa::Database, doc: SourceText) -> Result<Node, SyntaxError> {
    if let Some(why) = doc.unread(db) {
        let span = grail_lang::ast::Span::new(0, 0);
        return Err(SyntaxError { message: format!("{}{why}", check::UNREAD), span });
    }
    load_text(doc.path(db), doc.text(db), doc.read_error(db))
}

/// What [`load_document`] gives for a file's path, text and read error,
/// outside any database.
pub fn load_text(path: &str, text: &str, read_error: Option<ReadError>) -> Result<Node, SyntaxError> {
    let at_start = grail_lang::ast::Span::new(0, 0);
    match read_error {
        None => {}
        Some(ReadError::InvalidUtf8 { at }) => {
            // The span covers the replacement character that stands for the bad bytes.
            let width = text.get(at..).and_then(|rest| rest.chars().next()).map_or(0, char::len_utf8);
            return Err(SyntaxError {
                message: format!("the document is not valid UTF-8: byte {at} starts an invalid sequence"),
                span: grail_lang::ast::Span::new(at, at + width),
            });
        }
        Some(ReadError::Utf16) => {
            return Err(SyntaxError {
                message: "the document is UTF-16 (it starts with a UTF-16 byte order mark); grail reads UTF-8".into(),
                span: at_start,
            });
        }
        Some(ReadError::TooLarge { limit, size }) => {
            let size = match size {
                Some(size) if show_size(size) == show_size_bytes(size) => show_size(size),
                Some(size) => format!("{} ({size} bytes)", show_size(size)),
                None => format!("more than {}", show_size(limit)),
            };
            return Err(SyntaxError {
                message: format!("the document is {size}, over the {} limit on what is read", show_size(limit)),
                span: at_start,
            });
        }
    }
    document::load(text, document_format(path, text), &Limits::default())
}

/// A file read outside any database: what a [`SourceText`] holds. Checking
/// many documents as a stream (`grail check --each`) keeps them out of the
/// database, which would keep every one to the end of the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub path: String,
    pub text: String,
    pub read_error: Option<ReadError>,
    /// The bytes when they are not the text (see [`SourceText::raw`]).
    pub raw: Option<std::sync::Arc<[u8]>>,
}

impl Source {
    /// As [`SourceText::from_bytes`].
    pub fn from_bytes(path: String, bytes: Vec<u8>) -> Source {
        let (text, read_error, raw) = decode(bytes);
        Source { path, text, read_error, raw }
    }

    /// As [`SourceText::too_large`].
    pub fn too_large(path: String, limit: u64, size: Option<u64>) -> Source {
        Source { path, text: String::new(), read_error: Some(ReadError::TooLarge { limit, size }), raw: None }
    }

    /// The source as a database input.
    pub fn into_input(self, db: &dyn salsa::Database) -> SourceText {
        SourceText::builder(self.path, self.text, self.read_error).raw(self.raw).new(db)
    }

    /// The tree the checker reads, as the queries load it: `None` for a
    /// Markdown file, which the checker reads itself.
    pub fn load(&self) -> Option<Result<Node, SyntaxError>> {
        if check::is_markdown(&self.path) && self.read_error.is_none() {
            None
        } else {
            Some(load_text(&self.path, &self.text, self.read_error))
        }
    }

    /// The checker's input for this source and its [`Source::load`]ed tree.
    pub fn input<'a>(&'a self, loaded: &'a Option<Result<Node, SyntaxError>>) -> check::Input<'a> {
        check::Input { path: &self.path, text: &self.text, loaded: loaded.as_ref(), given: None, markdown: false }
    }
}

fn input<'db>(db: &'db dyn salsa::Database, doc: SourceText) -> check::Input<'db> {
    let path = doc.path(db);
    let loaded =
        if check::is_markdown(path) && doc.read_error(db).is_none() { None } else { Some(load_document(db, doc)) };
    check::Input { path, text: doc.text(db), loaded, given: None, markdown: false }
}

/// The paths a document's `ref` fields name; the caller reads them and puts
/// them in the deployment as [`AttachedFile`]s.
#[salsa::tracked(returns(ref))]
pub fn document_references(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Vec<String> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return Vec::new();
    }
    check::references(&compiled.policy, &input(db, doc))
}

/// Every outcome of every rule for one document checked on its own
/// (document index 0 in the findings), with nothing attached.
#[salsa::tracked(returns(ref))]
pub fn check_document(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Vec<Finding> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return Vec::new();
    }
    check::check(&compiled.policy, &[input(db, doc)], &[])
}

/// One document explained on its own, as [`check_document`] checks it: the
/// effective state that editors show beside the keys it leaves out.
#[salsa::tracked(returns(ref))]
pub fn explain_document(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Explanation {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return Explanation::default();
    }
    crate::explain::explain(&compiled.policy, &[input(db, doc)], &[])
}

/// The findings of a deployment and the documents they point into: the
/// deployment's documents, then the attached files that were read.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub documents: Vec<SourceText>,
    pub findings: Vec<Finding>,
    /// The layer each document of a layered kind was checked as, and how it was bound.
    pub layers: Vec<crate::layers::DocLayer>,
    /// Whether some rule evaluated `now()` (see [`check::Run::now_read`]).
    pub now_read: bool,
}

/// The inputs and attachments of a deployment, as the checker takes them.
type Assembled<'db> = (Vec<SourceText>, Vec<check::Input<'db>>, Vec<check::Attachment<'db>>, Vec<Bound>);

fn assemble<'db>(db: &'db dyn salsa::Database, deployment: Deployment) -> Assembled<'db> {
    let mut documents = deployment.documents(db).clone();
    let bindings: Vec<Bound> = deployment
        .bindings(db)
        .iter()
        .filter_map(|b| {
            let input = documents.iter().position(|d| *d == b.document)?;
            Some(Bound { input, layer: b.layer.clone(), by: b.by })
        })
        .collect();
    let markdown = deployment.markdown(db).as_deref().unwrap_or_default();
    let mut inputs: Vec<check::Input<'_>> = documents
        .iter()
        .map(|d| {
            if markdown.contains(d) {
                check::Input { markdown: true, loaded: None, ..input(db, *d) }
            } else {
                input(db, *d)
            }
        })
        .collect();
    for n in deployment.named(db) {
        documents.push(n.document);
        inputs.push(check::Input { given: Some(&n.name), ..input(db, n.document) });
    }
    let mut attached = Vec::new();
    let mut extra = Vec::new();
    // Each file's text as one shared copy, however many fields name it.
    let mut texts: Vec<(SourceText, std::sync::Arc<str>)> = Vec::new();
    let mut shared = |src: &SourceText| -> std::sync::Arc<str> {
        if let Some((_, t)) = texts.iter().find(|(s, _)| s == src) {
            return t.clone();
        }
        let t: std::sync::Arc<str> = src.text(db).as_str().into();
        texts.push((*src, t.clone()));
        t
    };
    for a in deployment.attachments(db) {
        let Some(from) = documents.iter().position(|d| *d == a.from) else { continue };
        let read = match &a.read {
            Err(reason) => Err(reason.clone()),
            Ok(src) => {
                let index = match extra.iter().position(|e| e == src) {
                    Some(k) => k,
                    None => {
                        extra.push(*src);
                        extra.len() - 1
                    }
                };
                Ok(((documents.len() + index) as u32, load_document(db, *src)))
            }
        };
        let text = a.read.as_ref().map_or_else(|_| "".into(), &mut shared);
        let raw = a.read.as_ref().ok().and_then(|src| src.raw(db).clone());
        attached.push(check::Attachment { from, path: &a.path, read, text, raw });
    }
    for g in deployment.given(db) {
        let read = match &g.read {
            Err(reason) => Err(reason.clone()),
            Ok(src) => {
                extra.push(*src);
                Ok(((documents.len() + extra.len() - 1) as u32, load_document(db, *src)))
            }
        };
        let text = g.read.as_ref().map_or_else(|_| "".into(), &mut shared);
        let raw = g.read.as_ref().ok().and_then(|src| src.raw(db).clone());
        attached.push(check::Attachment { from: check::GIVEN, path: &g.recorded, read, text, raw });
    }
    documents.extend(extra);
    (documents, inputs, attached, bindings)
}

#[salsa::tracked(returns(ref))]
pub fn check_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Report {
    let compiled = compile_policy(db, set);
    let (documents, inputs, ..) = assemble(db, deployment);
    let Some(run) = checked(db, set, deployment) else {
        return Report { documents, findings: Vec::new(), layers: Vec::new(), now_read: false };
    };
    let mut findings = run.findings.clone();
    for b in deployment.bases(db) {
        let Some(i) = documents.iter().position(|d| *d == b.document) else { continue };
        findings.extend(crate::change::compare(&compiled.policy, &inputs[i], i, &input(db, b.base)));
    }
    if !deployment.bases(db).is_empty() {
        let pos = |f: &Finding| f.location.map(|(d, s)| (d, s.start)).unwrap_or((u32::MAX, usize::MAX));
        findings.sort_by_key(pos);
    }
    Report { documents, findings, layers: run.layers.clone(), now_read: run.now_read }
}

/// The check of a deployment, run once for the queries that read it (its
/// report, its tables, its admission decisions): a `grail check` that
/// prints the verdict lines of the tables does not check its documents a
/// second time for them. `None` when the policy does not compile.
#[salsa::tracked(returns(ref))]
fn checked(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Option<check::Run> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    Some(run_of(db, &compiled.policy, deployment))
}

/// The rule id a document's kind reports `change` findings under (`--base`),
/// or why it cannot be compared with a previous version.
pub fn change_rule(db: &dyn salsa::Database, set: PolicySet, doc: SourceText) -> Result<String, String> {
    let compiled = compile_policy(db, set);
    let policy = &compiled.policy;
    let Some((kind, _)) = check::kind_layers(policy, &input(db, doc)) else {
        return Err(format!(
            "`{}` has no kind this policy declares, so it has no previous version to compare",
            doc.path(db)
        ));
    };
    let id = policy.documents.iter().position(|d| d.name == kind).unwrap_or(0) as crate::hir::DocKindId;
    crate::change::change_rule(policy, id)
        .map(|c| c.rule.clone())
        .ok_or_else(|| format!("the policy does not say how a `{kind}` may change over time: its `layers of {kind}` declares no `on change rule`"))
}

/// Why `base` cannot be compared with `doc` as its previous version
/// (`--base`), located in `base`: empty, not JSON or YAML, or not a document
/// of `doc`'s kind. `None` when it can.
pub fn base_unreadable(db: &dyn salsa::Database, set: PolicySet, doc: SourceText, base: SourceText) -> Option<String> {
    let compiled = compile_policy(db, set);
    crate::change::unreadable(&compiled.policy, &input(db, doc), &input(db, base))
}

/// A deployment checked, with the documents rules read (typed values) and
/// every finding: what `grail graph` draws. Empty when the policy does not compile.
pub fn run_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Option<check::Run> {
    checked(db, set, deployment).clone()
}

/// The check of a deployment's documents, as `grail check` runs it (no trace).
fn run_of(db: &dyn salsa::Database, policy: &crate::hir::Policy, deployment: Deployment) -> check::Run {
    let (_, inputs, attached, bindings) = assemble(db, deployment);
    run_assembled(db, policy, deployment, &inputs, &attached, &bindings)
}

/// The check of a deployment's assembled inputs, with its time, parameters
/// and whether it asked for Markdown records.
fn run_assembled(
    db: &dyn salsa::Database,
    policy: &crate::hir::Policy,
    deployment: Deployment,
    inputs: &[check::Input<'_>],
    attached: &[check::Attachment<'_>],
    bindings: &[Bound],
) -> check::Run {
    let asked = deployment.markdown(db).is_some();
    check::run_with_params(policy, inputs, attached, bindings, false, deployment.now(db), deployment.params(db), asked)
}

/// The answers of the policy's admission questions for a deployment.
#[salsa::tracked(returns(ref))]
pub fn decide_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Vec<Decision> {
    // `None` when the policy does not compile.
    let Some(run) = checked(db, set, deployment) else { return Vec::new() };
    let compiled = compile_policy(db, set);
    crate::question::decide(&compiled.policy, run)
}

/// The documents of the deployment that one deployment may not hold
/// together (`at most one per deployment`): the caller's usage error.
#[salsa::tracked(returns(ref))]
pub fn crowded_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Vec<check::Crowded> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return Vec::new();
    }
    let (_, inputs, _, _) = assemble(db, deployment);
    check::crowded(&compiled.policy, &inputs)
}

/// The tables of the policy over a deployment (see [`crate::table`]).
#[salsa::tracked(returns(ref))]
pub fn table_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Vec<crate::table::Table> {
    // `None` when the policy does not compile.
    let Some(run) = checked(db, set, deployment) else { return Vec::new() };
    let compiled = compile_policy(db, set);
    crate::table::tables(&compiled.policy, run)
}

/// A deployment explained: the documents findings point into, and the explanation.
#[derive(Clone, Debug, PartialEq)]
pub struct Explained {
    pub documents: Vec<SourceText>,
    pub explanation: Explanation,
}

#[salsa::tracked(returns(ref))]
pub fn explain_deployment(db: &dyn salsa::Database, set: PolicySet, deployment: Deployment) -> Explained {
    let compiled = compile_policy(db, set);
    let (documents, inputs, attached, bindings) = assemble(db, deployment);
    if compiled.has_errors() {
        return Explained { documents, explanation: Explanation::default() };
    }
    let explanation = crate::explain::explain_with(
        &compiled.policy,
        &inputs,
        &attached,
        &bindings,
        deployment.now(db),
        deployment.params(db),
    );
    Explained { documents, explanation }
}

/// `grail analyze` on a policy: witnesses, conflicts, dead rules, fixture
/// pairs and lints (empty when the policy does not compile).
#[salsa::tracked(returns(ref))]
pub fn analyze_policy(db: &dyn salsa::Database, set: PolicySet) -> Option<crate::analyze::Analysis> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    Some(crate::analyze::analyze(&compiled.policy, crate::analyze::Bounds::default()))
}

/// The engine's database.
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

/// The names of the queries that ran, recorded by [`Database::with_log`].
pub type QueryLog = Arc<Mutex<Vec<String>>>;

impl Database {
    /// A database that records every query execution, for incrementality tests.
    pub fn with_log() -> (Database, QueryLog) {
        let log: QueryLog = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut log) = sink.lock()
            {
                log.push(format!("{database_key:?}"));
            }
        })));
        (Database { storage }, log)
    }
}

/// The kind of a document of a deployment and the layers a `--layer` binding
/// of it may name (see [`check::kind_layers`]); `None` when it has no kind.
pub fn document_layers(
    db: &dyn salsa::Database,
    set: PolicySet,
    doc: SourceText,
) -> Option<(String, Option<Vec<String>>)> {
    let compiled = compile_policy(db, set);
    if compiled.has_errors() {
        return None;
    }
    let (kind, layers) = check::kind_layers(&compiled.policy, &input(db, doc))?;
    Some((kind.to_string(), layers.map(<[String]>::to_vec)))
}
