//! Reading the documents a command names, and the files their `ref` fields name.

use std::io::Read as _;

use std::collections::HashMap;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{AttachedFile, document_references};
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
    if path.is_dir() {
        return Err(Fatal(format!("cannot check `{path}`: it is a folder; name the documents in it")));
    }
    let cannot = |e: std::io::Error| Fatal(format!("cannot read `{path}`: {}", lower_first(&e.to_string())));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(Fatal(format!("cannot read `{path}`: it is {what}, not a regular file; grail reads files only")));
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The path may have been replaced between the look and the open: look again at what was opened.
    let meta = file.metadata().map_err(cannot)?;
    if let Some(what) = not_regular(&meta) {
        return Err(Fatal(format!("cannot read `{path}`: it is {what}, not a regular file; grail reads files only")));
    }
    let size = Some(meta.len());
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Ok(SourceText::too_large(db, path.to_string(), limit, size.filter(|s| *s > limit)));
    }
    Ok(SourceText::from_bytes(db, path.to_string(), bytes))
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

/// Reads the files the documents of one check attach: each file once,
/// however many fields (of however many documents) name it, by its real
/// path; all of them together at most `budget` bytes.
pub struct Attacher {
    /// What may still be read.
    budget: u64,
    limit: u64,
    /// Every file read or refused so far, by its real path (or, refused
    /// before it could be resolved, by the path as written).
    read: HashMap<Utf8PathBuf, Result<SourceText, String>>,
}

impl Attacher {
    pub fn new(limit: u64) -> Attacher {
        Attacher { budget: limit, limit, read: HashMap::new() }
    }

    /// The files the documents' `ref` fields name. A path is followed only
    /// inside its document's folder, symbolic links included; anything else is
    /// refused with the reason, which the rules see as missing evidence.
    pub fn attachments(mut self, db: &Database, set: PolicySet, documents: &[SourceText]) -> Vec<AttachedFile> {
        let mut out = Vec::new();
        for doc in documents {
            for path in document_references(db, set, *doc) {
                let read = self.attach(db, doc.path(db), path);
                out.push(AttachedFile { from: *doc, path: path.clone(), read });
            }
        }
        out
    }

    fn attach(&mut self, db: &Database, document: &str, path: &str) -> Result<SourceText, String> {
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
        if let Some(done) = self.read.get(&real) {
            return done.clone();
        }
        let read = self.read_new(db, &target, &real);
        self.read.insert(real, read.clone());
        read
    }

    fn read_new(&mut self, db: &Database, target: &Utf8Path, real: &Utf8Path) -> Result<SourceText, String> {
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
        Ok(SourceText::from_bytes(db, target.to_string(), bytes))
    }
}

/// `No such file or directory (os error 2)` reads `no such file or directory (os error 2)`.
pub fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
