//! Reading the documents a command names, and the files their `ref` fields name.

pub use grail_engine::workspace_file::lower_first;
use std::collections::{HashMap, HashSet};
use std::io::Read as _;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{AttachedFile, Source, document_references};
use grail_engine::{Database, PolicySet, SourceText};

use crate::Fatal;

/// The default of `--max-document-size` (and the size commands without the
/// flag read up to): 16 MiB.
pub const DEFAULT_MAX_DOCUMENT_SIZE: u64 = 16 << 20;

/// Reads a document named on the command line, at most `limit` bytes of it:
/// a larger file becomes a document that is too large, which the check
/// reports as a finding. Symbolic links are followed, as by any reader. A
/// path that is not a regular file (a FIFO, a device, a socket) is refused
/// before it is opened: opening a FIFO waits for a writer, and a device may
/// never end. One that cannot be read stops the command.
pub fn read_document(db: &Database, path: &Utf8Path, limit: u64) -> Result<SourceText, Fatal> {
    read_source(path, limit).map(|source| source.into_input(db))
}

/// [`read_document`] outside any database.
pub fn read_source(path: &Utf8Path, limit: u64) -> Result<Source, Fatal> {
    let cannot = |e: std::io::Error| Fatal(format!("cannot read `{path}`: {}", lower_first(&e.to_string())));
    let file = open_document(path)?;
    // The path may have been replaced between the look and the open: look again at what was opened.
    let meta = file.metadata().map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(Fatal(format!("cannot read `{path}`: it is {what}, not a regular file; grail reads files only")));
    }
    let size = Some(meta.len());
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Ok(Source::too_large(path.to_string(), limit, size.filter(|s| *s > limit)));
    }
    Ok(Source::from_bytes(path.to_string(), bytes))
}

/// Opens a document named on the command line, or says why it cannot be
/// read (a folder, a missing file): what stops the command before anything
/// is checked.
pub fn open_document(path: &Utf8Path) -> Result<std::fs::File, Fatal> {
    let cannot = |e: std::io::Error| Fatal(format!("cannot read `{path}`: {}", lower_first(&e.to_string())));
    if path.is_dir() {
        return Err(Fatal(format!("cannot check `{path}`: it is a folder; name the documents in it")));
    }
    // Looked at before it is opened: opening a FIFO waits for a writer, and a device may never end.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(Fatal(format!("cannot read `{path}`: it is {what}, not a regular file; grail reads files only")));
    }
    std::fs::File::open(path).map_err(cannot)
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
            let attached: HashSet<std::path::PathBuf> = attachments(db, set, &folder)
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

/// The documents directly in a folder, in name order.
fn read_folder(db: &Database, dir: &Utf8Path, limit: u64) -> Result<Vec<SourceText>, Fatal> {
    let cannot = |e: std::io::Error| Fatal(format!("cannot read folder `{dir}`: {}", lower_first(&e.to_string())));
    let mut paths: Vec<Utf8PathBuf> = Vec::new();
    for entry in dir.read_dir_utf8().map_err(cannot)? {
        let path = entry.map_err(cannot)?.into_path();
        if path.is_file() && path.extension().is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e)) {
            paths.push(path);
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

/// What a file that is not a regular file is, for a message; `None` for a regular file.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some(if meta.is_dir() { "a folder" } else { "not a file" })
}

/// The largest file a document's `ref` may name.
const MAX_ATTACHED_BYTES: u64 = 16 * 1024 * 1024;

/// The default of `--max-total-size`: what the attachments of one check may
/// hold together, 64 MiB.
pub const DEFAULT_MAX_TOTAL_SIZE: u64 = 64 << 20;

/// Reads the files the documents' `ref` fields name, at most
/// [`DEFAULT_MAX_TOTAL_SIZE`] together (see [`Attacher`]).
pub fn attachments(db: &Database, set: PolicySet, documents: &[SourceText]) -> Vec<AttachedFile> {
    attachments_within(db, set, documents, DEFAULT_MAX_TOTAL_SIZE)
}

/// Reads the files the documents' `ref` fields name, each once, at most
/// `budget` bytes together. A path is followed only inside its document's
/// folder, symbolic links included; anything else is refused with the
/// reason, which the rules see as missing evidence.
pub fn attachments_within(db: &Database, set: PolicySet, documents: &[SourceText], budget: u64) -> Vec<AttachedFile> {
    let mut attacher = Attacher::new(budget);
    let mut named = Vec::new();
    for doc in documents {
        for path in document_references(db, set, *doc) {
            let read = attacher.attach(doc.path(db), path);
            named.push((*doc, path.clone(), read));
        }
    }
    let files: Vec<SourceText> = attacher.into_files().into_iter().map(|s| s.into_input(db)).collect();
    named.into_iter().map(|(from, path, read)| AttachedFile { from, path, read: read.map(|i| files[i]) }).collect()
}

/// Reads the files the documents of one check attach: each file once,
/// however many fields (of however many documents) name it, by its real
/// path; all of them together at most a budget of bytes. Outside any
/// database: the stream of `check --each` uses it too.
pub struct Attacher {
    /// What may still be read.
    budget: u64,
    limit: u64,
    /// Every file read (its index in `files`) or refused so far, by its real
    /// path (or, refused before it could be resolved, by the path as written).
    seen: HashMap<Utf8PathBuf, Result<usize, String>>,
    files: Vec<Source>,
}

impl Attacher {
    pub fn new(limit: u64) -> Attacher {
        Attacher { budget: limit, limit, seen: HashMap::new(), files: Vec::new() }
    }

    /// The files read, in the order they were first named.
    pub fn into_files(self) -> Vec<Source> {
        self.files
    }

    /// The file a document's `ref` field names (`path`, as written): its
    /// index among the files read, or why it is refused.
    pub fn attach(&mut self, document: &str, path: &str) -> Result<usize, String> {
        if let Some(reason) = grail_engine::check::path_leaves_folder(path) {
            return Err(reason.into());
        }
        let cannot = |e: std::io::Error| format!("cannot be read: {}", lower_first(&e.to_string()));
        let folder = Utf8Path::new(document).parent().filter(|p| !p.as_str().is_empty()).unwrap_or(Utf8Path::new("."));
        let target = folder.join(path);
        let real_folder = folder.canonicalize_utf8().map_err(cannot)?;
        let real = target.canonicalize_utf8().map_err(cannot)?;
        if !real.starts_with(&real_folder) {
            return Err("the path leads out of the document's folder through a symbolic link".into());
        }
        if let Some(done) = self.seen.get(&real) {
            return done.clone();
        }
        let read = self.read_new(&target, &real).map(|source| {
            self.files.push(source);
            self.files.len() - 1
        });
        self.seen.insert(real, read.clone());
        read
    }

    fn read_new(&mut self, target: &Utf8Path, real: &Utf8Path) -> Result<Source, String> {
        let cannot = |e: std::io::Error| format!("cannot be read: {}", lower_first(&e.to_string()));
        let meta = std::fs::metadata(real).map_err(cannot)?;
        if let Some(what) = not_regular(&meta) {
            return Err(format!("it is {what}, not a regular file"));
        }
        if meta.len() > MAX_ATTACHED_BYTES {
            return Err(format!(
                "the file has {} bytes, more than the {MAX_ATTACHED_BYTES} a transcript may have",
                meta.len()
            ));
        }
        if meta.len() > self.budget {
            return Err(format!(
                "the file has {} bytes, and the files attached in this check may hold {} together \
                 (`--max-total-size`) and {} bytes of that are left",
                meta.len(),
                grail_engine::db::show_size(self.limit),
                self.budget
            ));
        }
        let file = std::fs::File::open(real).map_err(cannot)?;
        if not_regular(&file.metadata().map_err(cannot)?).is_some() {
            return Err("it is not a regular file".into());
        }
        let mut bytes = Vec::new();
        // Never more than was allowed, even if the file grew since it was looked at.
        file.take(meta.len().min(self.budget).saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
        if bytes.len() as u64 > meta.len().min(self.budget) {
            return Err("the file grew while it was read".into());
        }
        self.budget -= bytes.len() as u64;
        Ok(Source::from_bytes(target.to_string(), bytes))
    }
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

/// The deployment a command names, put in the database: its documents
/// ([`deployment`]), the files their `ref` fields name, the `--layer`
/// bindings, the `--attach` files and the time of the check. Refused (exit 2)
/// when it holds two documents of a kind allowed once. Returns the documents
/// the report is about, and the deployment.
pub fn named_deployment(
    db: &Database,
    set: PolicySet,
    files: &[camino::Utf8PathBuf],
    layers: &[LayerArg],
    context: &[camino::Utf8PathBuf],
    attach: &[AttachArg],
    now: i128,
) -> Result<(Vec<SourceText>, grail_engine::db::Deployment), Fatal> {
    let named = deployment(db, set, files, layers, context, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let attached = attachments(db, set, &named.documents);
    let given = self::given(db, attach, DEFAULT_MAX_DOCUMENT_SIZE)?;
    let deployment = grail_engine::db::Deployment::builder(named.documents, attached)
        .bindings(named.bindings)
        .now(Some(now))
        .given(given)
        .new(db);
    crate::tables::refuse_crowded(db, set, deployment)?;
    Ok((named.shown, deployment))
}
