//! Reading the documents a command names, and the files their `ref` fields name.

pub use grail_engine::workspace_file::lower_first;
use std::collections::HashSet;
use std::io::Read as _;
use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{AttachedFile, Source};
use grail_engine::{Database, PolicySet, SourceText};

use crate::Fatal;

pub use grail_workspace::{Attacher, DEFAULT_MAX_DOCUMENT_SIZE, DEFAULT_MAX_TOTAL_SIZE};

/// Reads a document named on the command line, at most `limit` bytes of it:
/// a larger file becomes a document that is too large, which the check
/// reports as a finding. Symbolic links are followed, as by any reader. A
/// path that is not a regular file (a FIFO, a device, a socket) is refused
/// before it is opened: opening a FIFO waits for a writer, and a device may
/// never end. One that cannot be read stops the command. The reader is the
/// language server's too (`grail_workspace::read`).
pub fn read_document(db: &Database, path: &Utf8Path, limit: u64) -> Result<SourceText, Fatal> {
    read_source(path, limit).map(|source| source.into_input(db))
}

/// [`read_document`] outside any database.
pub fn read_source(path: &Utf8Path, limit: u64) -> Result<Source, Fatal> {
    grail_workspace::read_source(path.as_std_path(), path.as_str(), limit).map_err(Fatal)
}

/// Opens a document named on the command line, or says why it cannot be
/// read (a folder, a missing file): what stops the command before anything
/// is checked.
pub fn open_document(path: &Utf8Path) -> Result<std::fs::File, Fatal> {
    grail_workspace::open_document(path.as_std_path(), path.as_str()).map_err(Fatal)
}

/// The extensions of the documents a folder named on the command line stands for.
pub const DOCUMENT_EXTENSIONS: [&str; 5] = ["json", "jsonl", "yaml", "yml", "md"];

/// The documents the command line names: a file; `-`, standard input (its
/// attachments resolve against the working directory); a folder, the
/// documents directly in it (`.json`, `.yaml`, `.yml`, `.md`, in name order)
/// less the files a document of the deployment names as attachments.
pub fn read_inputs(db: &Database, set: PolicySet, paths: &[Utf8PathBuf], limit: u64) -> Result<Vec<SourceText>, Fatal> {
    let mut out = Vec::new();
    for path in paths {
        if path.as_str() == "-" {
            out.push(read_stdin(db, limit)?);
        } else if path.is_dir() {
            let folder = read_folder(db, path, limit)?;
            let folder = without_strangers(db, set, folder);
            let attached: HashSet<std::path::PathBuf> = attachments(db, set, &folder, None)
                .into_iter()
                .filter_map(|a| a.read.ok())
                .filter_map(|t| std::fs::canonicalize(t.path(db)).ok())
                .collect();
            let kept: Vec<SourceText> = folder
                .into_iter()
                .filter(|d| std::fs::canonicalize(d.path(db)).is_ok_and(|p| !attached.contains(&p)))
                .collect();
            if kept.is_empty() {
                return Err(Fatal(format!(
                    "cannot check `{path}`: the folder holds no document (`.json`, `.yaml`, `.yml` or `.md`) directly in it"
                )));
            }
            out.extend(kept);
        } else {
            out.push(read_document(db, path, limit)?);
        }
    }
    Ok(out)
}

/// A folder's documents less the files that are no document of the policy,
/// each said on standard error with the reason (never silently): a Markdown
/// file without the record kind's marker (a `README.md`), a JSON or YAML
/// document no kind selects. A file that is malformed stays: its finding is
/// the check's. (`grail check --envelopes`, where every file must carry its
/// marker, reads its folders otherwise: `envelopes.rs`.)
fn without_strangers(db: &Database, set: PolicySet, folder: Vec<SourceText>) -> Vec<SourceText> {
    let compiled = grail_engine::db::compile_policy(db, set);
    let markers: Vec<&str> = compiled.policy.markdown_kinds().map(|(_, marker, _)| marker).collect();
    folder
        .into_iter()
        .filter(|doc| {
            if doc.read_error(db).is_some() || grail_engine::db::document_layers(db, set, *doc).is_some() {
                return true;
            }
            let path = doc.path(db);
            let why = if grail_engine::check::is_markdown(path) {
                let text = doc.text(db);
                match markers.as_slice() {
                    [] => Some("a Markdown file, and the policy reads no Markdown record".to_string()),
                    ms if !ms.iter().any(|m| text.contains(m)) => {
                        Some(format!("no `{}` marker: not a queued item", ms.join("` or `")))
                    }
                    _ => None,
                }
            } else {
                grail_engine::db::load_document(db, *doc)
                    .is_ok()
                    .then(|| "no document kind of the policy selects it".to_string())
            };
            match why {
                Some(why) => {
                    eprintln!("skipped `{path}`: {why}");
                    false
                }
                None => true,
            }
        })
        .collect()
}

/// The documents directly in a folder, in name order; the other files are
/// said on standard error, skipped.
fn read_folder(db: &Database, dir: &Utf8Path, limit: u64) -> Result<Vec<SourceText>, Fatal> {
    let cannot = |e: std::io::Error| Fatal(format!("cannot read folder `{dir}`: {}", lower_first(&e.to_string())));
    let mut entries: Vec<Utf8PathBuf> = Vec::new();
    for entry in dir.read_dir_utf8().map_err(cannot)? {
        entries.push(entry.map_err(cannot)?.into_path());
    }
    entries.sort();
    let mut paths: Vec<Utf8PathBuf> = Vec::new();
    for path in entries {
        if path.is_file() && path.extension().is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e)) {
            paths.push(path);
        } else if path.is_file() {
            eprintln!(
                "skipped `{path}`: not a document (grail reads `.json`, `.jsonl`, `.yaml`, `.yml` and `.md` files)"
            );
        }
    }
    paths.sort();
    paths.iter().map(|p| read_document(db, p, limit)).collect()
}

/// Standard input as the document `-`, at most `limit` bytes of it.
fn read_stdin(db: &Database, limit: u64) -> Result<SourceText, Fatal> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Fatal(format!("cannot read standard input: {}", lower_first(&e.to_string()))))?;
    if bytes.len() as u64 > limit {
        return Ok(SourceText::too_large(db, "-".to_string(), limit, None));
    }
    Ok(SourceText::from_bytes(db, "-".to_string(), bytes))
}

/// Reads the files the documents' `ref` fields name, at most
/// [`DEFAULT_MAX_TOTAL_SIZE`] together (see [`Attacher`]).
pub fn attachments(db: &Database, set: PolicySet, documents: &[SourceText], root: Option<&Path>) -> Vec<AttachedFile> {
    attachments_within(db, set, documents, DEFAULT_MAX_TOTAL_SIZE, root)
}

/// Reads the files the documents' `ref` fields name, each once, at most
/// `budget` bytes together (see [`Attacher`]), under `root` when the
/// invocation gives one; a document's path in the database is its path on disk.
pub fn attachments_within(
    db: &Database,
    set: PolicySet,
    documents: &[SourceText],
    budget: u64,
    root: Option<&Path>,
) -> Vec<AttachedFile> {
    grail_workspace::read::attachments_within(db, set, documents, budget, root, &|p| std::path::PathBuf::from(p))
}

/// `--layer NAME=FILE`: a document of the deployment bound to a layer of its kind.
#[derive(Clone, Debug)]
pub struct LayerArg {
    pub layer: String,
    pub file: camino::Utf8PathBuf,
}

/// Reads `NAME=FILE` (clap's value parser for `--layer`).
pub fn parse_layer(text: &str) -> Result<LayerArg, String> {
    match text.split_once('=') {
        Some((name, file)) if !name.trim().is_empty() && !file.is_empty() => {
            Ok(LayerArg { layer: name.trim().to_string(), file: file.into() })
        }
        _ => Err(format!("`{text}` is not `NAME=FILE`; write for example `--layer security=security.yaml`")),
    }
}

/// `--attach RECORDED=FILE`: a file attached under the path a document records.
#[derive(Clone, Debug)]
pub struct AttachArg {
    pub recorded: String,
    pub file: camino::Utf8PathBuf,
}

/// Reads `RECORDED=FILE` (clap's value parser for `--attach`); the recorded
/// path is everything before the last `=`.
pub fn parse_attach(text: &str) -> Result<AttachArg, String> {
    match text.rsplit_once('=') {
        Some((recorded, file)) if !recorded.is_empty() && !file.is_empty() => {
            Ok(AttachArg { recorded: recorded.to_string(), file: file.into() })
        }
        _ => Err(format!(
            "`{text}` is not `RECORDED=FILE`; write for example `--attach /work/repo/build/report.xml=report.xml`"
        )),
    }
}

/// Reads the `--attach` files, at most `limit` bytes each: a file that
/// cannot be read stops the command (the caller named it).
pub fn given(db: &Database, attach: &[AttachArg], limit: u64) -> Result<Vec<grail_engine::db::GivenFile>, Fatal> {
    attach
        .iter()
        .map(|a| {
            let flag = format!("`--attach {}={}`: ", a.recorded, a.file);
            let read = read_document(db, &a.file, limit).map_err(|Fatal(m)| Fatal(format!("{flag}{m}")))?;
            Ok(grail_engine::db::GivenFile { recorded: a.recorded.clone(), read: Ok(read) })
        })
        .collect()
}

/// The documents of one deployment as the command line names them.
pub struct Named {
    /// Every document, each file once: the positional files, then the files
    /// only `--layer` names, then the `--binding` documents.
    pub documents: Vec<SourceText>,
    /// The documents the report is about (positional and `--layer` files).
    pub shown: Vec<SourceText>,
    /// The `--layer` bindings.
    pub bindings: Vec<grail_engine::db::LayerBinding>,
}

/// Reads the documents of a deployment: `files`, the `--layer` files and
/// the `--binding` files. One file named twice (by two paths to it, or as a
/// positional file and with `--layer`) is one document, so binding one file
/// twice is seen as such (`layer.order`). Each `--layer` names a layer of its
/// file's kind, or the command does not run.
pub fn deployment(
    db: &Database,
    set: PolicySet,
    files: &[camino::Utf8PathBuf],
    layers: &[LayerArg],
    context: &[camino::Utf8PathBuf],
    limit: u64,
) -> Result<Named, Fatal> {
    // Each file once, whichever way it is named: standard input is never the same file twice.
    let mut seen: Vec<(std::path::PathBuf, SourceText)> = Vec::new();
    let mut once = |doc: SourceText| -> (SourceText, bool) {
        let path = doc.path(db);
        if path == "-" {
            return (doc, true);
        }
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| std::path::PathBuf::from(path));
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return (*first, false);
        }
        seen.push((key, doc));
        (doc, true)
    };
    let mut documents = Vec::new();
    for doc in read_inputs(db, set, files, limit)? {
        if let (doc, true) = once(doc) {
            documents.push(doc);
        }
    }
    let mut bindings = Vec::new();
    for arg in layers {
        let flag = format!("`--layer {}={}`: ", arg.layer, arg.file);
        let read = read_document(db, &arg.file, limit).map_err(|Fatal(m)| Fatal(format!("{flag}{m}")))?;
        let (doc, new) = once(read);
        if new {
            documents.push(doc);
        }
        check_layer_name(db, set, doc, arg, &flag)?;
        bindings.push(grail_engine::db::LayerBinding {
            document: doc,
            layer: arg.layer.clone(),
            by: grail_engine::layers::BoundBy::Flag,
        });
    }
    let shown = documents.clone();
    let read = read_inputs(db, set, context, limit).map_err(|Fatal(m)| Fatal(format!("`--binding`: {m}")))?;
    for doc in read {
        if let (doc, true) = once(doc) {
            documents.push(doc);
        }
    }
    Ok(Named { documents, shown, bindings })
}

fn check_layer_name(db: &Database, set: PolicySet, doc: SourceText, arg: &LayerArg, flag: &str) -> Result<(), Fatal> {
    // A document with no kind (unreadable, malformed) is reported by the check itself.
    let Some((kind, layers)) = grail_engine::db::document_layers(db, set, doc) else { return Ok(()) };
    let Some(layers) = layers else {
        return Err(Fatal(format!(
            "{flag}`{}` is a `{kind}` document, and the policy declares no layers for `{kind}`; name it without `--layer`",
            arg.file
        )));
    };
    if layers.contains(&arg.layer) {
        return Ok(());
    }
    let near = grail_engine::suggest::did_you_mean(&arg.layer, layers.iter().map(String::as_str));
    let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
    let list: Vec<String> = layers.iter().map(|l| format!("`{l}`")).collect();
    Err(Fatal(format!(
        "{flag}`{kind}` has no layer `{}` (its layers, most trusted first: {}){hint}",
        arg.layer,
        list.join(", ")
    )))
}

/// What a command gives its deployment besides the documents: the
/// `--attach` files, the time of the check, the parameters of the
/// invocation (`--probe-evidence-root`, `--egress-hosts`, `--credential-roots`),
/// and the file `--evidence` gives under the name `evidence`.
pub struct Call<'a> {
    pub attach: &'a [AttachArg],
    pub now: i128,
    pub invocation: &'a grail_workspace::Invocation,
    pub evidence: Option<&'a Utf8Path>,
}

/// The name `--evidence FILE` (and a deployment's `evidence` in the
/// workspace file) gives its file under.
const EVIDENCE: &str = "evidence";

/// A file given to a deployment under `name`: read as the policy's kind
/// given that name, never chosen by its content. A file that cannot be read
/// is still given, as a document that does not load, with the reason: its
/// kind says what that means (unavailable evidence, or a finding). Refused
/// (exit 2) when no kind of the policy is given that name.
fn given_under(
    db: &Database,
    set: PolicySet,
    flag: &str,
    name: &str,
    path: &Utf8Path,
    limit: u64,
) -> Result<grail_engine::db::NamedDocument, Fatal> {
    let compiled = grail_engine::db::compile_policy(db, set);
    if grail_engine::check::given_kind(&compiled.policy, name).is_none() {
        return Err(Fatal(format!(
            "`{flag} {path}`: the policy reads no document given as `{name}` (no kind says `given \"{name}\"`)"
        )));
    }
    let document = match read_document(db, path, limit) {
        Ok(doc) => doc,
        Err(Fatal(m)) => {
            let why = m.strip_prefix(&format!("cannot read `{path}`: ")).unwrap_or(&m).to_string();
            SourceText::builder(path.to_string(), String::new(), None).unread(Some(why)).new(db)
        }
    };
    Ok(grail_engine::db::NamedDocument { name: name.to_string(), document })
}

/// The file `--evidence` (or a deployment's `evidence`, named by `flag`)
/// gives, as the deployment's documents given under the name `evidence`:
/// none without one.
pub fn given_evidence(
    db: &Database,
    set: PolicySet,
    flag: &str,
    path: Option<&Utf8Path>,
    limit: u64,
) -> Result<Vec<grail_engine::db::NamedDocument>, Fatal> {
    path.map(|p| given_under(db, set, flag, EVIDENCE, p, limit)).into_iter().collect()
}

/// The deployment a command names, put in the database: its documents
/// ([`deployment`]), the files their `ref` fields name, the `--layer`
/// bindings, the `--attach` files, the time of the check and the parameters
/// of the invocation (`--probe-evidence-root`...). Refused (exit 2)
/// when it holds two documents of a kind allowed once. Returns the documents
/// the report is about, and the deployment.
pub fn named_deployment(
    db: &Database,
    set: PolicySet,
    files: &[camino::Utf8PathBuf],
    layers: &[LayerArg],
    context: &[camino::Utf8PathBuf],
    call: Call<'_>,
) -> Result<(Vec<SourceText>, grail_engine::db::Deployment), Fatal> {
    let Call { attach, now, invocation, evidence } = call;
    let named = deployment(db, set, files, layers, context, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let attached = attachments(db, set, &named.documents, invocation.evidence_root.as_deref());
    let evidence = given_evidence(db, set, "--evidence", evidence, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let given = self::given(db, attach, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let deployment = grail_engine::db::Deployment::builder(named.documents, attached)
        .bindings(named.bindings)
        .params(invocation.params.clone())
        .now(Some(now))
        .given(given)
        .named(evidence)
        .new(db);
    crate::tables::refuse_crowded(db, set, deployment)?;
    Ok((named.shown, deployment))
}

/// A deployment of the workspace file put in the database, as
/// [`named_deployment`] puts the one the command line names: its documents
/// and layer bindings, the files their `ref` fields name (under its
/// evidence root), the `--attach` files, the time of the check, its
/// parameters and its `evidence`. Returns its documents and the deployment.
pub fn workspace_deployment(
    db: &Database,
    set: PolicySet,
    named: &crate::workspace::Named,
    attach: &[AttachArg],
    now: i128,
) -> Result<(Vec<SourceText>, grail_engine::db::Deployment), Fatal> {
    let attached = attachments(db, set, &named.documents, named.invocation.evidence_root.as_deref());
    let evidence = given_evidence(db, set, named.evidence_flag, named.evidence.as_deref(), DEFAULT_MAX_DOCUMENT_SIZE)?;
    let given = self::given(db, attach, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let deployment = grail_engine::db::Deployment::builder(named.documents.clone(), attached)
        .bindings(named.bindings.clone())
        .params(named.invocation.params.clone())
        .now(Some(now))
        .given(given)
        .named(evidence)
        .new(db);
    crate::tables::refuse_crowded(db, set, deployment)?;
    Ok((named.documents.clone(), deployment))
}
