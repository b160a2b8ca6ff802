//! grail-workspace: the file system side of grail, shared by the command line
//! and the language server so that both read the same files the same way.
//!
//! - the workspace file `grail.toml`: found in a folder or its parents, parsed
//!   by [`grail_engine::workspace_file`];
//! - the policy folders it names (`shipped` for the built-in library);
//! - the documents of its deployments (a folder stands for the documents
//!   directly in it);
//! - the files documents attach by their `ref` fields: only inside the
//!   document's folder, symbolic links resolved, at most 16 MiB each, each
//!   read once, 64 MiB together; and the documents themselves, a FIFO or a
//!   device refused before it is opened (`read`, which the command line uses
//!   too);
//! - the well-known formats that claim a JSON or YAML file that is not
//!   grail's (`foreign`: workflows, package manifests), for the editor.
//!
//! Nothing here prints or exits: errors are returned as text for the caller.

pub use grail_engine::workspace_file::lower_first;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use grail_engine::db::AttachedFile;
use grail_engine::workspace_file::{self, DeploymentSpec, Located, WorkspaceFile, WorkspaceFileError};
use grail_engine::{Database, PolicySet, SourceText};

pub use grail_engine::workspace_file::FILE_NAME;

pub mod foreign;
pub mod params;
pub mod read;

pub use params::Invocation;

pub use read::{
    Attacher, DEFAULT_MAX_DOCUMENT_SIZE, DEFAULT_MAX_TOTAL_SIZE, MAX_ATTACHED_BYTES, not_regular, open_document,
    read_document, read_source,
};

/// The extensions of the documents a folder of a deployment stands for.
const DOCUMENT_EXTENSIONS: [&str; 6] = ["json", "jsonl", "yaml", "yml", "md", "markdown"];

/// A workspace file found on disk, parsed.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The file itself.
    pub path: PathBuf,
    /// Its folder, against which its paths resolve.
    pub root: PathBuf,
    pub text: String,
    pub file: WorkspaceFile,
}

/// Why a workspace file cannot be used.
#[derive(Clone, Debug)]
pub enum Error {
    /// The file cannot be read.
    Read { path: PathBuf, message: String },
    /// The file does not parse, or refers to something that is not there: located in its text.
    Invalid { path: PathBuf, text: String, error: WorkspaceFileError },
}

impl Error {
    /// One line for people: `grail.toml:3:12: message`.
    pub fn summary(&self) -> String {
        match self {
            Error::Read { path, message } => format!("cannot read `{}`: {message}", path.display()),
            Error::Invalid { path, text, error } => {
                let at = error.span.map(|s| {
                    let before = &text[..s.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!(":{line}:{column}")
                });
                let help = error.help.as_ref().map(|h| format!("\nhelp: {h}")).unwrap_or_default();
                format!("{}{}: {}{help}", path.display(), at.unwrap_or_default(), error.message)
            }
        }
    }
}

/// The workspace file in `start` or the nearest of its parents.
pub fn find(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|dir| dir.join(FILE_NAME)).find(|p| p.is_file())
}

/// Reads and parses the workspace file at `path`.
pub fn load(path: &Path) -> Result<Workspace, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Read { path: path.to_owned(), message: lower_first(&e.to_string()) })?;
    let file = workspace_file::parse(&text).map_err(|error| Error::Invalid {
        path: path.to_owned(),
        text: text.clone(),
        error,
    })?;
    let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Workspace { path: path.to_owned(), root, text, file })
}

impl Workspace {
    fn invalid(&self, at: &Located, message: String, help: Option<String>) -> Error {
        Error::Invalid {
            path: self.path.clone(),
            text: self.text.clone(),
            error: WorkspaceFileError { message, span: Some(at.span).filter(|s| s.end > s.start), help },
        }
    }

    /// A path of the file, resolved against its folder.
    pub fn resolve(&self, p: &Located) -> PathBuf {
        self.root.join(&p.value)
    }

    /// The policy files, in the order of the folders: `(path, text)`; the
    /// shipped library's under its own paths.
    pub fn policy_files(&self) -> Result<Vec<PolicyFile>, Error> {
        let mut out = Vec::new();
        for folder in &self.file.policy {
            if folder.value == workspace_file::SHIPPED {
                out.extend(grail_engine::shipped::FILES.iter().map(|(path, text)| PolicyFile {
                    path: PathBuf::from(path),
                    text: text.to_string(),
                    shipped: true,
                }));
                continue;
            }
            let dir = self.resolve(folder);
            let mut paths = Vec::new();
            if dir.is_file() {
                paths.push(dir.clone());
            } else if let Err(e) = collect_policy(&dir, &mut paths, &mut HashSet::new()) {
                return Err(self.invalid(folder, format!("cannot read policy folder `{}`: {e}", folder.value), None));
            }
            if paths.is_empty() {
                return Err(self.invalid(
                    folder,
                    format!("`{}` holds no `.grail` file", folder.value),
                    Some(format!(
                        "name a folder of policy files, or `{}` for the shipped library",
                        workspace_file::SHIPPED
                    )),
                ));
            }
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    self.invalid(
                        folder,
                        format!("cannot read `{}`: {}", p.display(), lower_first(&e.to_string())),
                        None,
                    )
                })?;
                out.push(PolicyFile { path: p, text, shipped: false });
            }
        }
        Ok(out)
    }

    /// Every layer the file binds is one the policy declares (`declared`).
    pub fn check_layer_names(&self, declared: &[String]) -> Result<(), Error> {
        for d in &self.file.deployments {
            for (layer, _) in &d.layers {
                if !declared.contains(&layer.value) {
                    let known = declared.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ");
                    return Err(self.invalid(
                        layer,
                        format!(
                            "deployment `{}` binds layer `{}`, which the policy does not declare",
                            d.name.value, layer.value
                        ),
                        Some(if known.is_empty() {
                            "the policy declares no layers".into()
                        } else {
                            format!("the policy's layers are {known}")
                        }),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What the deployment gives its check besides its documents: the
    /// parameters its keys set, and the folder where `ref` fields resolve
    /// (`probe_evidence_root`, against the file's folder; it must be a folder).
    pub fn invocation(&self, d: &DeploymentSpec) -> Result<Invocation, Error> {
        let root = match &d.probe_evidence_root {
            Some(p) => {
                let path = self.resolve(p);
                if !path.is_dir() {
                    let what = if path.exists() { "is not a folder" } else { "does not exist" };
                    return Err(self.invalid(
                        p,
                        format!("`probe_evidence_root` `{}` of deployment `{}` {what}", p.value, d.name.value),
                        Some(format!("paths are relative to the folder of `{}`", FILE_NAME)),
                    ));
                }
                Some((p.value.as_str(), path))
            }
            None => None,
        };
        fn strings(v: &Option<Vec<Located>>) -> Option<Vec<&str>> {
            v.as_ref().map(|v| v.iter().map(|l| l.value.as_str()).collect())
        }
        Ok(Invocation::new(root, strings(&d.egress_hosts), strings(&d.credential_roots)))
    }

    /// The documents of a deployment, each with the layer it is bound to:
    /// a folder stands for the documents directly in it, sorted by name.
    pub fn documents(&self, d: &DeploymentSpec) -> Result<Vec<Member>, Error> {
        let mut out = Vec::new();
        let mut push = |p: &Located, layer: Option<&Located>| -> Result<(), Error> {
            let path = self.resolve(p);
            if path.is_dir() && layer.is_none() {
                let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                    .map_err(|e| {
                        self.invalid(p, format!("cannot read `{}`: {}", p.value, lower_first(&e.to_string())), None)
                    })?
                    .flatten()
                    .map(|e| e.path())
                    .filter(|f| {
                        f.is_file()
                            && f.extension()
                                .and_then(|e| e.to_str())
                                .is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
                    })
                    .collect();
                files.sort();
                out.extend(files.into_iter().map(|path| Member { path, layer: None }));
                return Ok(());
            }
            if !path.is_file() {
                let what = if path.exists() { "is not a file" } else { "does not exist" };
                return Err(self.invalid(
                    p,
                    format!("`{}` of deployment `{}` {what}", p.value, d.name.value),
                    Some(format!("paths are relative to the folder of `{}`", FILE_NAME)),
                ));
            }
            out.push(Member { path, layer: layer.map(|l| l.value.clone()) });
            Ok(())
        };
        for (layer, p) in &d.layers {
            push(p, Some(layer))?;
        }
        for p in d.documents.iter().chain(&d.items).chain(&d.histories) {
            push(p, None)?;
        }
        Ok(out)
    }
}

/// A policy file to put in the database.
#[derive(Clone, Debug)]
pub struct PolicyFile {
    pub path: PathBuf,
    pub text: String,
    /// One of the shipped library's.
    pub shipped: bool,
}

/// A document of a deployment and the layer the workspace file binds it to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub path: PathBuf,
    pub layer: Option<String>,
}

/// Every `.grail` file under `dir`. A folder reached twice (a symbolic link
/// back up the tree) is read once: a loop of links ends.
pub fn collect_policy(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut HashSet<PathBuf>) -> Result<(), String> {
    let cannot = |e: std::io::Error| lower_first(&e.to_string());
    if !seen.insert(dir.canonicalize().map_err(cannot)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let path = entry.map_err(cannot)?.path();
        if path.is_dir() {
            collect_policy(&path, out, seen)?;
        } else if path.extension().is_some_and(|e| e == "grail") {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads the files the documents' `ref` fields name, as `grail check` does
/// (see [`read::attachments_within`]), at most [`DEFAULT_MAX_TOTAL_SIZE`]
/// together, under `root` when given (else each document's folder).
/// `real_path` maps a document's path (as in the database) to the file on disk.
pub fn attachments(
    db: &Database,
    set: PolicySet,
    documents: &[SourceText],
    root: Option<&Path>,
    real_path: &dyn Fn(&str) -> PathBuf,
) -> Vec<AttachedFile> {
    read::attachments_within(db, set, documents, DEFAULT_MAX_TOTAL_SIZE, root, real_path)
}

/// The time of a check that is given none (`--now`): the clock, in
/// nanoseconds since the Unix epoch, as `now()` reads it.
pub fn clock() -> i128 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_nanos() as i128)
}

/// The name `--evidence FILE`, and a deployment's `evidence` key, give their file under.
pub const EVIDENCE: &str = "evidence";

/// The file a deployment's `evidence` key names, as `grail check` gives it:
/// under the name [`EVIDENCE`], read as the policy's kind given that name;
/// a file that cannot be read is given as a document that does not load,
/// with the reason. `None` when no kind of the policy is given that name
/// (`grail check` then stops, exit 2).
pub fn given_evidence(
    db: &Database,
    set: PolicySet,
    path: &Path,
    shown: String,
) -> Option<grail_engine::db::NamedDocument> {
    let compiled = grail_engine::db::compile_policy(db, set);
    grail_engine::check::given_kind(&compiled.policy, EVIDENCE)?;
    let document = match read_document(db, path, shown.clone(), DEFAULT_MAX_DOCUMENT_SIZE) {
        Ok(doc) => doc,
        Err(m) => {
            let why = m.strip_prefix(&format!("cannot read `{shown}`: ")).unwrap_or(&m).to_string();
            SourceText::builder(shown, String::new(), None).unread(Some(why)).new(db)
        }
    };
    Some(grail_engine::db::NamedDocument { name: EVIDENCE.to_string(), document })
}

/// `path` as shown in reports: relative to `base` when under it.
pub fn shown(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).to_string_lossy().into_owned()
}
