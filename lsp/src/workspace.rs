//! What the server knows: the engine database, the policy, and the open
//! documents, each a salsa input. Edits set inputs; the engine recomputes
//! only what depends on them.
//!
//! The policy is the workspace's `.grail` files, open or on disk, when it has
//! any; otherwise the shipped library. Every other open `.json`, `.yaml` or
//! `.yml` file is a document checked against it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use grail_engine::{Database, PolicySet, SourceText};
use salsa::Setter as _;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::position::LineIndex;

/// Folders not searched for policy files.
const SKIPPED: [&str; 3] = ["target", "node_modules", "__pycache__"];
/// At most this many directory entries are read when looking for policy files.
const SCAN_LIMIT: usize = 200_000;

pub struct Workspace {
    pub db: Database,
    pub set: PolicySet,
    /// The URI of each policy file, in the order of the policy set.
    uris: Vec<Option<Uri>>,
    /// Whether the policy is the shipped library.
    shipped: bool,
    roots: Vec<PathBuf>,
    /// Open documents that are not policy files.
    documents: HashMap<Uri, SourceText>,
    /// The version of every open file, policy files included.
    versions: HashMap<Uri, i32>,
}

/// What an edit changed, and so which diagnostics to publish again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changed {
    Nothing,
    /// One document: only its diagnostics.
    Document(Uri),
    /// The policy: every policy file's and every open document's diagnostics.
    Policy,
}

pub fn is_policy(uri: &Uri) -> bool {
    uri.path().as_str().ends_with(".grail")
}

/// Whether a file is a document the server may check: JSON, YAML, or
/// Markdown (a work item, when it carries the marker of a Markdown kind).
pub fn is_document(uri: &Uri) -> bool {
    let path = uri.path().as_str().to_ascii_lowercase();
    [".json", ".yaml", ".yml", ".md", ".markdown"].iter().any(|e| path.ends_with(e))
}

impl Workspace {
    pub fn new(db: Database) -> Workspace {
        let set = PolicySet::new(&db, Vec::new());
        let mut ws = Workspace {
            db,
            set,
            uris: Vec::new(),
            shipped: false,
            roots: Vec::new(),
            documents: HashMap::new(),
            versions: HashMap::new(),
        };
        ws.use_shipped();
        ws
    }

    /// Looks for the workspace's policy files under `roots`.
    pub fn set_roots(&mut self, roots: Vec<PathBuf>) {
        self.roots = roots;
        let mut found = Vec::new();
        let mut budget = SCAN_LIMIT;
        for root in &self.roots {
            scan(root, 0, &mut found, &mut budget);
        }
        found.sort();
        found.dedup();
        let mut files = Vec::new();
        let mut uris = Vec::new();
        for path in found {
            let (Ok(bytes), Some(uri)) = (std::fs::read(&path), Uri::from_file_path(&path)) else { continue };
            files.push(SourceText::from_bytes(&self.db, self.display_path(&path), bytes));
            uris.push(Some(uri));
        }
        if files.is_empty() {
            self.use_shipped();
        } else {
            self.shipped = false;
            self.set.set_files(&mut self.db).to(files);
            self.uris = uris;
        }
    }

    fn use_shipped(&mut self) {
        let files = grail_engine::shipped::sources(&self.db);
        self.uris = shipped_uris();
        self.set.set_files(&mut self.db).to(files);
        self.shipped = true;
    }

    /// A path for messages: relative to the first root that holds it.
    fn display_path(&self, path: &Path) -> String {
        for root in &self.roots {
            if let Ok(rel) = path.strip_prefix(root) {
                return rel.to_string_lossy().into_owned();
            }
        }
        path.to_string_lossy().into_owned()
    }

    fn policy_index(&self, uri: &Uri) -> Option<usize> {
        self.uris.iter().position(|u| u.as_ref() == Some(uri))
    }

    /// The source of an open document or a policy file.
    pub fn source(&self, uri: &Uri) -> Option<SourceText> {
        if let Some(d) = self.documents.get(uri) {
            return Some(*d);
        }
        self.policy_index(uri).map(|i| self.set.files(&self.db)[i])
    }

    pub fn version(&self, uri: &Uri) -> Option<i32> {
        self.versions.get(uri).copied()
    }

    pub fn is_open(&self, uri: &Uri) -> bool {
        self.versions.contains_key(uri)
    }

    /// The URI of policy file `file` of the policy set.
    pub fn policy_uri(&self, file: u32) -> Option<&Uri> {
        self.uris.get(file as usize)?.as_ref()
    }

    /// The URIs of the policy files, for publishing their diagnostics.
    pub fn policy_uris(&self) -> Vec<Uri> {
        if self.shipped {
            // The shipped library compiles; its files are not the user's to fix.
            return Vec::new();
        }
        self.uris.iter().flatten().cloned().collect()
    }

    pub fn open_documents(&self) -> Vec<Uri> {
        self.documents.keys().cloned().collect()
    }

    pub fn open(&mut self, uri: Uri, text: String, version: i32) -> Changed {
        self.versions.insert(uri.clone(), version);
        if is_policy(&uri) {
            return self.set_policy_text(uri, text);
        }
        match self.documents.get(&uri) {
            Some(doc) => {
                doc.set_text(&mut self.db).to(text);
            }
            None => {
                let path = uri.to_file_path().map_or_else(|| uri.as_str().to_string(), |p| self.display_path(&p));
                let doc = SourceText::new(&self.db, path, text, None);
                self.documents.insert(uri.clone(), doc);
            }
        }
        Changed::Document(uri)
    }

    fn set_policy_text(&mut self, uri: Uri, text: String) -> Changed {
        if let Some(i) = self.policy_index(&uri) {
            let file = self.set.files(&self.db)[i];
            if file.text(&self.db) != &text {
                file.set_text(&mut self.db).to(text);
                file.set_read_error(&mut self.db).to(None);
            }
            return Changed::Policy;
        }
        // A policy file the policy does not have yet: the workspace's files are the policy now.
        let path = uri.to_file_path().map_or_else(|| uri.as_str().to_string(), |p| self.display_path(&p));
        let file = SourceText::new(&self.db, path, text, None);
        let mut files = if self.shipped { Vec::new() } else { self.set.files(&self.db).clone() };
        if self.shipped {
            self.uris.clear();
            self.shipped = false;
        }
        files.push(file);
        self.uris.push(Some(uri));
        self.set.set_files(&mut self.db).to(files);
        Changed::Policy
    }

    /// Applies edits to an open file.
    pub fn change(&mut self, uri: &Uri, changes: Vec<TextEdit>, version: i32) -> Changed {
        let Some(source) = self.source(uri) else { return Changed::Nothing };
        let mut text = source.text(&self.db).clone();
        for change in changes {
            match change.range {
                Some(range) => {
                    let span = LineIndex::new(&text).span(&text, range);
                    text.replace_range(span.start..span.end, &change.text);
                }
                None => text = change.text,
            }
        }
        self.versions.insert(uri.clone(), version);
        source.set_text(&mut self.db).to(text);
        if is_policy(uri) && self.policy_index(uri).is_some() {
            Changed::Policy
        } else {
            Changed::Document(uri.clone())
        }
    }

    /// A file is closed: a document is forgotten; a policy file is read from disk
    /// again, or leaves the policy if it is gone.
    pub fn close(&mut self, uri: &Uri) -> Changed {
        self.versions.remove(uri);
        if self.documents.remove(uri).is_some() {
            return Changed::Document(uri.clone());
        }
        if self.policy_index(uri).is_none() || self.shipped {
            return Changed::Nothing;
        }
        self.reload_policy_file(uri)
    }

    /// A policy file changed on disk (created, changed or deleted); an open one keeps its editor text.
    pub fn file_changed_on_disk(&mut self, uri: &Uri) -> Changed {
        if !is_policy(uri) || self.is_open(uri) {
            return Changed::Nothing;
        }
        self.reload_policy_file(uri)
    }

    fn reload_policy_file(&mut self, uri: &Uri) -> Changed {
        let bytes = uri.to_file_path().and_then(|p| std::fs::read(p).ok());
        match (self.policy_index(uri), bytes) {
            (Some(i), Some(bytes)) => {
                let file = self.set.files(&self.db)[i];
                file.set_bytes(&mut self.db, bytes);
            }
            (Some(i), None) => {
                let mut files = self.set.files(&self.db).clone();
                files.remove(i);
                self.uris.remove(i);
                if files.is_empty() {
                    self.use_shipped();
                } else {
                    self.set.set_files(&mut self.db).to(files);
                }
            }
            (None, Some(bytes)) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                return self.set_policy_text(uri.clone(), text);
            }
            (None, None) => return Changed::Nothing,
        }
        Changed::Policy
    }
}

/// A `TextDocumentContentChangeEvent`, by its own name here.
pub type TextEdit = TextDocumentContentChangeEvent;

fn scan(dir: &Path, depth: usize, found: &mut Vec<PathBuf>, budget: &mut usize) {
    if depth > 24 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                scan(&path, depth + 1, found, budget);
            }
        } else if kind.is_file() && name.ends_with(".grail") {
            found.push(path);
        }
    }
}

/// The shipped library, written once to a cache folder so that editors can
/// open the declarations that hovers and definitions point at. `None` for a
/// file that cannot be written.
fn shipped_uris() -> Vec<Option<Uri>> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("grail-{}", env!("CARGO_PKG_VERSION")));
    grail_engine::shipped::FILES
        .iter()
        .map(|(path, text)| {
            let target = base.join(path);
            let current = std::fs::read_to_string(&target).ok();
            if current.as_deref() != Some(*text) {
                std::fs::create_dir_all(target.parent()?).ok()?;
                std::fs::write(&target, text).ok()?;
            }
            Uri::from_file_path(&target)
        })
        .collect()
}
