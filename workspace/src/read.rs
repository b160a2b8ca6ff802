//! Reading documents and the files they attach: one reader for the command
//! line and the language server, so that a file the one refuses the other
//! refuses too, with the same words.
//!
//! - A path that is not a regular file (a FIFO, a device, a socket) is refused
//!   before it is opened (opening a FIFO waits for a writer, and a device may
//!   never end), and looked at again once opened (it may have been replaced
//!   in between).
//! - A document is read up to a size limit; a larger one becomes a document
//!   that is too large, which the check reports as a finding.
//! - An attachment is followed only inside its document's folder, symbolic
//!   links resolved; each file is read once per check however many fields
//!   name it, and all of them together at most a budget of bytes.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use grail_engine::db::{AttachedFile, Source, document_references};
use grail_engine::workspace_file::lower_first;
use grail_engine::{Database, PolicySet, SourceText};

/// The default of `--max-document-size` (and the size readers without the
/// flag read up to): 16 MiB.
pub const DEFAULT_MAX_DOCUMENT_SIZE: u64 = 16 << 20;

/// The default of `--max-total-size`: what the attachments of one check may
/// hold together, 64 MiB.
pub const DEFAULT_MAX_TOTAL_SIZE: u64 = 64 << 20;

/// The largest file a document's `ref` may name.
pub const MAX_ATTACHED_BYTES: u64 = 16 * 1024 * 1024;

/// What a file that is not a regular file is, for a message; `None` for a regular file.
pub fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
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

/// Opens a document, or says why it cannot be read (a folder, a missing
/// file, a FIFO): `shown` is the path as messages name it.
pub fn open_document(path: &Path, shown: &str) -> Result<std::fs::File, String> {
    let cannot = |e: std::io::Error| format!("cannot read `{shown}`: {}", lower_first(&e.to_string()));
    if path.is_dir() {
        return Err(format!("cannot check `{shown}`: it is a folder; name the documents in it"));
    }
    // Looked at before it is opened: opening a FIFO waits for a writer, and a device may never end.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(format!("cannot read `{shown}`: it is {what}, not a regular file; grail reads files only"));
    }
    std::fs::File::open(path).map_err(cannot)
}

/// Reads a document at `path`, at most `limit` bytes of it, outside any
/// database; named `shown` in the database and in messages.
pub fn read_source(path: &Path, shown: &str, limit: u64) -> Result<Source, String> {
    let cannot = |e: std::io::Error| format!("cannot read `{shown}`: {}", lower_first(&e.to_string()));
    let file = open_document(path, shown)?;
    // The path may have been replaced between the look and the open: look again at what was opened.
    let meta = file.metadata().map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(format!("cannot read `{shown}`: it is {what}, not a regular file; grail reads files only"));
    }
    let size = Some(meta.len());
    // Room for the whole file (as its size says, within the limit) and the
    // one byte past the limit that tells a larger file: read in one go,
    // not grown from a probe of a few bytes.
    let expected = meta.len().min(limit).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Ok(Source::too_large(shown.to_string(), limit, size.filter(|s| *s > limit)));
    }
    Ok(Source::from_bytes(shown.to_string(), bytes))
}

/// [`read_source`], as an input of `db`.
pub fn read_document(db: &Database, path: &Path, shown: String, limit: u64) -> Result<SourceText, String> {
    read_source(path, &shown, limit).map(|source| source.into_input(db))
}

/// Reads the files the documents' `ref` fields name, each once, at most
/// `budget` bytes together. A path is followed only inside its document's
/// folder (or under `root`, the invocation's evidence root, when given),
/// symbolic links included; anything else is refused with the reason, which
/// the rules see as missing evidence. `real_path` maps a
/// document's path (as in the database) to the file on disk.
pub fn attachments_within(
    db: &Database,
    set: PolicySet,
    documents: &[SourceText],
    budget: u64,
    root: Option<&Path>,
    real_path: &dyn Fn(&str) -> PathBuf,
) -> Vec<AttachedFile> {
    let mut attacher = Attacher::new(budget).within(root.map(Path::to_path_buf));
    let mut named = Vec::new();
    for doc in documents {
        let shown = doc.path(db);
        let real = real_path(shown);
        for path in document_references(db, set, *doc) {
            let read = attacher.attach(shown, &real, path);
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
    seen: HashMap<PathBuf, Result<usize, String>>,
    files: Vec<Source>,
    /// The folder every path resolves against, when the invocation gives one
    /// (`--probe-evidence-root`); else each document's own folder.
    root: Option<PathBuf>,
}

impl Attacher {
    pub fn new(limit: u64) -> Attacher {
        Attacher { budget: limit, limit, seen: HashMap::new(), files: Vec::new(), root: None }
    }

    /// Paths resolve under `root` (when given) rather than in each document's
    /// folder: the same refusals hold, with the root as the folder.
    pub fn within(mut self, root: Option<PathBuf>) -> Attacher {
        self.root = root;
        self
    }

    /// The files read, in the order they were first named.
    pub fn into_files(self) -> Vec<Source> {
        self.files
    }

    /// The file a document's `ref` field names (`path`, as written): its
    /// index among the files read, or why it is refused. The document is
    /// `shown` in the database (an attachment is shown under its folder) and
    /// `real` on disk (an attachment is found under its folder).
    pub fn attach(&mut self, shown: &str, real: &Path, path: &str) -> Result<usize, String> {
        // The folder's name in a refusal: the document's, or the evidence root.
        let named = |reason: &str| match &self.root {
            Some(root) => reason.replace("the document's folder", &format!("the evidence root `{}`", root.display())),
            None => reason.to_string(),
        };
        if let Some(reason) = grail_engine::check::path_leaves_folder(path) {
            return Err(named(reason));
        }
        let cannot = |e: std::io::Error| format!("cannot be read: {}", lower_first(&e.to_string()));
        let folder = match &self.root {
            Some(root) => root.as_path(),
            None => real.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
        };
        let target = folder.join(path);
        let real_folder = folder.canonicalize().map_err(cannot)?;
        let real_target = target.canonicalize().map_err(cannot)?;
        if !real_target.starts_with(&real_folder) {
            return Err(named("the path leads out of the document's folder through a symbolic link"));
        }
        if let Some(done) = self.seen.get(&real_target) {
            return done.clone();
        }
        // Shown as the document is shown: its folder (or the evidence root), then the path as written.
        let shown_folder = match &self.root {
            Some(root) => root.as_path(),
            None => Path::new(shown).parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
        };
        let shown_target = shown_folder.join(path).to_string_lossy().into_owned();
        let read = self.read_new(&shown_target, &real_target).map(|source| {
            self.files.push(source);
            self.files.len() - 1
        });
        self.seen.insert(real_target, read.clone());
        read
    }

    fn read_new(&mut self, shown: &str, real: &Path) -> Result<Source, String> {
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
        Ok(Source::from_bytes(shown.to_string(), bytes))
    }
}
