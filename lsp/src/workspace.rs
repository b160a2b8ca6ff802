//! What the server knows: the engine database, the policy, the deployments
//! and the open documents, each a salsa input. Edits set inputs; the engine
//! recomputes only what depends on them.
//!
//! The workspace file `grail.toml` (found in a workspace folder or its
//! parents, as `grail check` finds it in its working directory) says what the
//! policy is and which documents are checked together: the same file, read
//! by the same code (`grail_workspace`), so that the editor and CI agree.
//! Without one, the policy is the shipped library and every open `.json`,
//! `.jsonl`, `.yaml`, `.yml` or marked Markdown file is checked alone.
//!
//! Every document is checked as `grail check` checks it, so that the editor
//! shows what CI reports: a member with its deployment (its layer bindings,
//! parameters, evidence root, `evidence` and `allow_unknown`), a document
//! alone as `grail check FILE` run in its folder; either way with the files
//! its `ref` fields name, read by the command line's reader
//! (`grail_workspace::attachments`), and the clock as the time of the check.
//!
//! Either way a document is judged only when it is grail's ([`Owner`]):
//! named by a deployment, or picked by a kind of the policy and claimed by
//! no well-known format (`grail_workspace::foreign`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use grail_engine::db::{AttachedFile, document_references};
use grail_engine::{Database, Deployment, PolicySet, SourceText, ide};
use salsa::Setter as _;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::position::LineIndex;

pub struct Workspace {
    pub db: Database,
    pub set: PolicySet,
    /// The URI of each policy file, in the order of the policy set.
    uris: Vec<Option<Uri>>,
    /// Whether each policy file is one of the shipped library's (not the user's to fix).
    shipped_files: Vec<bool>,
    /// The folders whose `.grail` files are the policy (none: the shipped library alone).
    policy_folders: Vec<PathBuf>,
    roots: Vec<PathBuf>,
    /// What the workspace file said.
    pub config: Config,
    /// Open documents that belong to no deployment, each checked alone.
    documents: HashMap<Uri, Alone>,
    /// The deployments of the workspace file.
    deployments: Vec<DeploymentState>,
    /// The deployment of each member document.
    member_of: HashMap<Uri, usize>,
    /// The version of every open file, policy files included.
    versions: HashMap<Uri, i32>,
    /// The kind each open document checked alone last had: while the policy
    /// does not compile no kind can be known, and a document judged before
    /// stays judged (it shows that the policy does not compile).
    last_kind: HashMap<Uri, String>,
    /// The files that checks stopped attaching since the server last asked
    /// ([`Workspace::take_detached`]): what they showed there must be published again.
    detached: Vec<Uri>,
}

/// Whose a document is, and so whether the server judges it: named by the
/// workspace file, or picked by a kind of the policy and claimed by no
/// well-known format (docs/workspace.md, "Which files the editor judges").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Named by the workspace file: a member of deployment `deployment`,
    /// bound to `layer` or not, of `kind` when it parses. Judged with its deployment.
    Member { deployment: String, layer: Option<String>, kind: Option<String> },
    /// Named by no deployment, and a kind of the policy picks it: judged alone.
    Alone { kind: String },
    /// A well-known format claims it (a GitHub workflow, a package manifest): not judged.
    Claimed(&'static str),
    /// No kind of the policy picks it: not judged.
    NotGrails,
}

impl Owner {
    /// Whether the server shows anything of the document: diagnostics, hovers, completions, fixes.
    pub fn judged(&self) -> bool {
        matches!(self, Owner::Member { .. } | Owner::Alone { .. })
    }
}

/// The workspace file, as found.
#[derive(Clone, Debug)]
pub enum Config {
    /// None in the workspace folders or their parents.
    Missing,
    Loaded,
    /// Found, but it cannot be used: the shipped library stands, documents alone.
    Invalid {
        path: PathBuf,
        error: grail_workspace::Error,
    },
}

/// An open document that no deployment names, checked alone as `grail
/// check FILE` checks it: a deployment of it alone, with the files its `ref`
/// fields name (read in its folder) and the time of its last edit.
struct Alone {
    source: SourceText,
    deployment: Deployment,
    /// The files attached by `ref` fields: the reference and the URI of the file read.
    attached: Vec<(AttachedFile, Option<Uri>)>,
}

struct DeploymentState {
    name: String,
    /// The member documents, in the order of the workspace file.
    members: Vec<(Uri, SourceText, PathBuf)>,
    /// The layer the workspace file binds each member to, beside `members`.
    layers: Vec<Option<String>>,
    deployment: Deployment,
    /// The files attached by `ref` fields: the reference and the URI of the file read.
    attached: Vec<(AttachedFile, Option<Uri>)>,
    /// The parameters its keys give, and the folder where `ref` fields resolve.
    invocation: grail_workspace::Invocation,
    /// Its `allow_unknown`: its UNKNOWN outcomes do not fail the check.
    allow_unknown: bool,
    /// The file its `evidence` key gives under the name `evidence`.
    evidence: Option<PathBuf>,
}

/// What an edit changed, and so which diagnostics to publish again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changed {
    Nothing,
    /// One document checked alone: only its diagnostics.
    Document(Uri),
    /// A document of a deployment: every member's diagnostics.
    Deployment(usize),
    /// The policy or the workspace file: everything.
    Policy,
}

pub fn is_policy(uri: &Uri) -> bool {
    uri.path().as_str().ends_with(".grail")
}

/// Whether a file is the workspace file.
pub fn is_workspace_file(uri: &Uri) -> bool {
    uri.path().as_str().ends_with(&format!("/{}", grail_workspace::FILE_NAME))
}

/// Whether a file is a document the server may check: JSON, YAML, or
/// Markdown (a work item, when it carries the marker of a Markdown kind).
pub fn is_document(uri: &Uri) -> bool {
    let path = uri.path().as_str().to_ascii_lowercase();
    [".json", ".jsonl", ".yaml", ".yml", ".md", ".markdown"].iter().any(|e| path.ends_with(e))
}

impl Workspace {
    pub fn new(db: Database) -> Workspace {
        let set = PolicySet::new(&db, Vec::new());
        let mut ws = Workspace {
            db,
            set,
            uris: Vec::new(),
            shipped_files: Vec::new(),
            policy_folders: Vec::new(),
            roots: Vec::new(),
            config: Config::Missing,
            documents: HashMap::new(),
            deployments: Vec::new(),
            member_of: HashMap::new(),
            versions: HashMap::new(),
            last_kind: HashMap::new(),
            detached: Vec::new(),
        };
        ws.use_shipped();
        ws
    }

    /// Reads the workspace file of `roots` (the first found, from the first root).
    pub fn set_roots(&mut self, roots: Vec<PathBuf>) {
        self.roots = roots;
        self.reload_config();
    }

    /// Reads the workspace file again: the policy and the deployments follow it.
    pub fn reload_config(&mut self) {
        let found = self.roots.iter().find_map(|r| grail_workspace::find(r));
        // Documents of the old deployments that are open stay open, checked alone or in their new deployment.
        let open_members: Vec<(Uri, String)> = self
            .deployments
            .iter()
            .flat_map(|d| d.members.iter())
            .filter(|(uri, _, _)| self.versions.contains_key(uri))
            .map(|(uri, source, _)| (uri.clone(), source.text(&self.db).clone()))
            .collect();
        self.deployments.clear();
        self.member_of.clear();
        let Some(path) = found else {
            self.config = Config::Missing;
            self.use_shipped();
            self.reopen(open_members);
            return;
        };
        match grail_workspace::load(&path).and_then(|ws| ws.policy_files().map(|files| (ws, files))) {
            Err(error) => {
                self.config = Config::Invalid { path, error };
                self.use_shipped();
            }
            Ok((file, policy)) => match self.load_deployments(&file) {
                Err(error) => {
                    self.config = Config::Invalid { path, error };
                    self.use_shipped();
                }
                Ok(()) => {
                    self.config = Config::Loaded;
                    self.policy_folders = file
                        .file
                        .policy
                        .iter()
                        .filter(|f| f.value != grail_engine::workspace_file::SHIPPED)
                        .map(|f| file.resolve(f))
                        .collect();
                    self.set_policy(policy);
                    let compiled = grail_engine::db::compile_policy(&self.db, self.set);
                    let declared: Vec<String> =
                        compiled.policy.layers.iter().flat_map(|l| l.layers.iter().cloned()).collect();
                    if let Err(error) = file.check_layer_names(&declared) {
                        self.config = Config::Invalid { path, error };
                        // Open members go back to being checked alone.
                        let mut open = open_members;
                        for d in std::mem::take(&mut self.deployments) {
                            for (uri, source, _) in d.members {
                                if self.versions.contains_key(&uri) && !open.iter().any(|(u, _)| *u == uri) {
                                    open.push((uri, source.text(&self.db).clone()));
                                }
                            }
                        }
                        self.member_of.clear();
                        self.use_shipped();
                        self.reopen(open);
                        return;
                    }
                    for k in 0..self.deployments.len() {
                        self.give_evidence(k);
                        self.refresh_attachments(k, true);
                    }
                }
            },
        }
        self.reopen(open_members);
    }

    fn reopen(&mut self, open: Vec<(Uri, String)>) {
        for (uri, text) in open {
            let version = self.versions.get(&uri).copied().unwrap_or(0);
            self.open(uri, text, version);
        }
    }

    fn load_deployments(&mut self, file: &grail_workspace::Workspace) -> Result<(), grail_workspace::Error> {
        let mut states = Vec::new();
        for d in &file.file.deployments {
            let mut members = Vec::new();
            let mut layers = Vec::new();
            // Each member bound to the layer the workspace file gives it: trust from the invocation.
            let mut bindings = Vec::new();
            for m in file.documents(d)? {
                let Some(uri) = Uri::from_file_path(&m.path) else { continue };
                let source = match self.documents.get(&uri) {
                    Some(open) => open.source,
                    None => {
                        let shown = self.display_path(&m.path);
                        grail_workspace::read_document(
                            &self.db,
                            &m.path,
                            shown.clone(),
                            grail_workspace::DEFAULT_MAX_DOCUMENT_SIZE,
                        )
                        .unwrap_or_else(|_| SourceText::new(&self.db, shown, String::new(), None))
                    }
                };
                if let Some(layer) = &m.layer {
                    bindings.push(grail_engine::db::LayerBinding {
                        document: source,
                        layer: layer.clone(),
                        by: grail_engine::layers::BoundBy::Workspace,
                    });
                }
                members.push((uri, source, m.path));
                layers.push(m.layer);
            }
            let documents = members.iter().map(|(_, s, _)| *s).collect();
            let invocation = file.invocation(d)?;
            let deployment = Deployment::builder(documents, Vec::new())
                .bindings(bindings)
                .params(invocation.params.clone())
                .now(Some(grail_workspace::clock()))
                .new(&self.db);
            states.push(DeploymentState {
                name: d.name.value.clone(),
                members,
                layers,
                deployment,
                attached: Vec::new(),
                invocation,
                allow_unknown: d.allow_unknown,
                evidence: d.evidence.as_ref().map(|p| file.resolve(p)),
            });
        }
        for (k, d) in states.iter().enumerate() {
            for (uri, _, _) in &d.members {
                self.member_of.entry(uri.clone()).or_insert(k);
                // An open document that is a member is now checked with its deployment.
                self.documents.remove(uri);
            }
        }
        self.deployments = states;
        Ok(())
    }

    fn set_policy(&mut self, files: Vec<grail_workspace::PolicyFile>) {
        let shipped = shipped_uris();
        let mut sources = Vec::new();
        self.uris.clear();
        self.shipped_files.clear();
        for f in files {
            if f.shipped {
                let i = grail_engine::shipped::FILES.iter().position(|(p, _)| Path::new(p) == f.path);
                self.uris.push(i.and_then(|i| shipped.get(i).cloned().flatten()));
                sources.push(SourceText::new(&self.db, f.path.to_string_lossy().into_owned(), f.text, None));
            } else {
                self.uris.push(Uri::from_file_path(&f.path));
                sources.push(SourceText::new(&self.db, self.display_path(&f.path), f.text, None));
            }
            self.shipped_files.push(f.shipped);
        }
        self.set.set_files(&mut self.db).to(sources);
    }

    fn use_shipped(&mut self) {
        let files = grail_engine::shipped::sources(&self.db);
        self.uris = shipped_uris();
        self.shipped_files = vec![true; files.len()];
        self.policy_folders.clear();
        self.set.set_files(&mut self.db).to(files);
    }

    /// Reads again the files the members of deployment `k` attach, when the
    /// references changed (or `force`, after a change on disk).
    fn refresh_attachments(&mut self, k: usize, force: bool) -> bool {
        let Some(d) = self.deployments.get(k) else { return false };
        let documents: Vec<(SourceText, Option<PathBuf>)> =
            d.members.iter().map(|(_, s, p)| (*s, Some(p.clone()))).collect();
        if !force && !references_changed(&self.db, self.set, &documents, &d.attached) {
            return false;
        }
        let root = d.invocation.evidence_root.clone();
        let with_uris = read_attachments(&self.db, self.set, &documents, root.as_deref());
        let list: Vec<AttachedFile> = with_uris.iter().map(|(a, _)| a.clone()).collect();
        let deployment = d.deployment;
        deployment.set_attachments(&mut self.db).to(list);
        let had = std::mem::replace(&mut self.deployments[k].attached, with_uris);
        let gone = no_longer_attached(had, &self.deployments[k].attached);
        self.detach(gone);
        true
    }

    /// Reads again the files a document checked alone attaches, when its
    /// references changed (or `force`, after a change on disk): in its
    /// folder, as `grail check FILE` run there reads them.
    fn refresh_alone(&mut self, uri: &Uri, force: bool) -> bool {
        let Some(alone) = self.documents.get(uri) else { return false };
        let documents = [(alone.source, uri.to_file_path().map(|p| p.into_owned()))];
        if !force && !references_changed(&self.db, self.set, &documents, &alone.attached) {
            return false;
        }
        let with_uris = read_attachments(&self.db, self.set, &documents, None);
        let list: Vec<AttachedFile> = with_uris.iter().map(|(a, _)| a.clone()).collect();
        let deployment = alone.deployment;
        deployment.set_attachments(&mut self.db).to(list);
        if let Some(alone) = self.documents.get_mut(uri) {
            let had = std::mem::replace(&mut alone.attached, with_uris);
            let gone = no_longer_attached(had, &alone.attached);
            self.detach(gone);
        }
        true
    }

    /// Remembers files that a check stopped attaching, each once.
    fn detach(&mut self, gone: impl IntoIterator<Item = Uri>) {
        for uri in gone {
            if !self.detached.contains(&uri) {
                self.detached.push(uri);
            }
        }
    }

    /// The files that checks stopped attaching since the last call: their
    /// diagnostics (findings those checks located there) are published again.
    pub fn take_detached(&mut self) -> Vec<Uri> {
        std::mem::take(&mut self.detached)
    }

    /// Every file that some check attaches now.
    pub fn attached_anywhere(&self) -> std::collections::HashSet<Uri> {
        let all =
            self.deployments.iter().flat_map(|d| &d.attached).chain(self.documents.values().flat_map(|a| &a.attached));
        all.filter_map(|(_, u)| u.clone()).collect()
    }

    /// Gives deployment `k` the file its `evidence` key names, as `grail
    /// check` gives it (none when the policy reads no `evidence`).
    fn give_evidence(&mut self, k: usize) {
        let Some(d) = self.deployments.get(k) else { return };
        let named: Vec<_> = d
            .evidence
            .as_ref()
            .and_then(|p| grail_workspace::given_evidence(&self.db, self.set, p, self.display_path(p)))
            .into_iter()
            .collect();
        let deployment = d.deployment;
        deployment.set_named(&mut self.db).to(named);
    }

    /// The time of the check of `deployment` is now: it is checked again after an edit.
    fn stamp(&mut self, deployment: Deployment) {
        deployment.set_now(&mut self.db).to(Some(grail_workspace::clock()));
    }

    /// After a policy edit, what documents attach may have changed: read again what did.
    fn refresh_all(&mut self) {
        for k in 0..self.deployments.len() {
            self.refresh_attachments(k, false);
        }
        let alone: Vec<Uri> = self.documents.keys().cloned().collect();
        for uri in alone {
            self.refresh_alone(&uri, false);
        }
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

    /// The source of an open document, a deployment's member or a policy file.
    pub fn source(&self, uri: &Uri) -> Option<SourceText> {
        if let Some(d) = self.documents.get(uri) {
            return Some(d.source);
        }
        if let Some(k) = self.member_of.get(uri) {
            return self.deployments[*k].members.iter().find(|(u, _, _)| u == uri).map(|(_, s, _)| *s);
        }
        self.policy_index(uri).map(|i| self.set.files(&self.db)[i])
    }

    pub fn version(&self, uri: &Uri) -> Option<i32> {
        self.versions.get(uri).copied()
    }

    pub fn is_open(&self, uri: &Uri) -> bool {
        self.versions.contains_key(uri)
    }

    /// The index of a policy file in the policy set.
    pub fn policy_file(&self, uri: &Uri) -> Option<u32> {
        self.policy_index(uri).map(|i| i as u32)
    }

    /// The URI of policy file `file` of the policy set.
    pub fn policy_uri(&self, file: u32) -> Option<&Uri> {
        self.uris.get(file as usize)?.as_ref()
    }

    /// The URIs of the user's policy files, for publishing their diagnostics.
    pub fn policy_uris(&self) -> Vec<Uri> {
        // The shipped library compiles; its files are not the user's to fix.
        self.uris.iter().zip(&self.shipped_files).filter(|(_, s)| !**s).filter_map(|(u, _)| u.clone()).collect()
    }

    pub fn open_documents(&self) -> Vec<Uri> {
        self.documents.keys().cloned().collect()
    }

    /// The deployment a document belongs to, and its name.
    pub fn deployment_of(&self, uri: &Uri) -> Option<(Deployment, &str)> {
        let d = &self.deployments[*self.member_of.get(uri)?];
        Some((d.deployment, d.name.as_str()))
    }

    /// The deployment a document is checked in, as `grail check` checks it:
    /// its deployment's, or one of it alone; and whether its UNKNOWN
    /// outcomes are allowed (the deployment's `allow_unknown`).
    pub fn checked_in(&self, uri: &Uri) -> Option<(Deployment, bool)> {
        if let Some(&k) = self.member_of.get(uri) {
            let d = &self.deployments[k];
            return Some((d.deployment, d.allow_unknown));
        }
        self.documents.get(uri).map(|a| (a.deployment, false))
    }

    /// Whose document `uri` is (see [`Owner`]). A document checked alone is
    /// judged by the kind the policy gives its text (`ide::document_kind`:
    /// one that does not parse by its top-level keys), or, while the policy
    /// does not compile, by the kind it had before.
    pub fn owner(&mut self, uri: &Uri) -> Owner {
        if let Some(&k) = self.member_of.get(uri) {
            let d = &self.deployments[k];
            let at = d.members.iter().position(|(u, _, _)| u == uri);
            let kind = at.and_then(|i| match ide::document_kind(&self.db, self.set, d.members[i].1) {
                ide::DocumentKind::Of(kind) => Some(kind),
                _ => None,
            });
            let layer = at.and_then(|i| d.layers.get(i).cloned().flatten());
            return Owner::Member { deployment: d.name.clone(), layer, kind };
        }
        if !is_document(uri) {
            return Owner::NotGrails;
        }
        if let Some(format) = uri.to_file_path().and_then(|p| grail_workspace::foreign::claimed_by(&p)) {
            return Owner::Claimed(format);
        }
        let Some(source) = self.documents.get(uri).map(|a| a.source) else { return Owner::NotGrails };
        match ide::document_kind(&self.db, self.set, source) {
            ide::DocumentKind::Of(kind) => {
                self.last_kind.insert(uri.clone(), kind.clone());
                Owner::Alone { kind }
            }
            ide::DocumentKind::None => {
                self.last_kind.remove(uri);
                Owner::NotGrails
            }
            ide::DocumentKind::Unknown => match self.last_kind.get(uri) {
                Some(kind) => Owner::Alone { kind: kind.clone() },
                None => Owner::NotGrails,
            },
        }
    }

    /// Whether an open document checked alone is judged, as [`Workspace::owner`] says.
    fn judged_alone(&self, uri: &Uri, source: SourceText) -> bool {
        if !is_document(uri) || uri.to_file_path().and_then(|p| grail_workspace::foreign::claimed_by(&p)).is_some() {
            return false;
        }
        match ide::document_kind(&self.db, self.set, source) {
            ide::DocumentKind::Of(_) => true,
            ide::DocumentKind::None => false,
            ide::DocumentKind::Unknown => self.last_kind.contains_key(uri),
        }
    }

    /// The source of a file the server answers requests about: a policy file,
    /// or a document it judges ([`Owner::judged`]).
    pub fn judged_source(&mut self, uri: &Uri) -> Option<SourceText> {
        let source = self.source(uri)?;
        if self.policy_index(uri).is_some() || self.owner(uri).judged() {
            return Some(source);
        }
        None
    }

    /// The checks that attach the file `uri` (a deployment's, or a document's
    /// alone): each deployment, whether it allows UNKNOWN outcomes, and the
    /// sources read from the file, in which its findings may be located.
    pub fn attaching(&self, uri: &Uri) -> Vec<(Deployment, bool, Vec<SourceText>)> {
        let read = |attached: &[(AttachedFile, Option<Uri>)]| -> Vec<SourceText> {
            attached.iter().filter(|(_, u)| u.as_ref() == Some(uri)).filter_map(|(a, _)| a.read.clone().ok()).collect()
        };
        let deployments = self.deployments.iter().map(|d| (d.deployment, d.allow_unknown, read(&d.attached)));
        // A document the server does not judge shows nothing, in itself or in what it attaches
        // (asked only of those that attach the file: the question reads the document's kind).
        let alone = self
            .documents
            .iter()
            .map(|(u, a)| (u, a, read(&a.attached)))
            .filter(|(u, a, sources)| !sources.is_empty() && self.judged_alone(u, a.source))
            .map(|(_, a, sources)| (a.deployment, false, sources));
        deployments.chain(alone).filter(|(_, _, sources)| !sources.is_empty()).collect()
    }

    /// The files the check of what `changed` names attaches: their
    /// diagnostics (the findings located in them) are published with it.
    pub fn attached_uris(&self, changed: &Changed) -> Vec<Uri> {
        let attached: &[(AttachedFile, Option<Uri>)] = match changed {
            Changed::Document(uri) => self.documents.get(uri).map_or(&[], |a| a.attached.as_slice()),
            Changed::Deployment(k) => self.deployments.get(*k).map_or(&[], |d| d.attached.as_slice()),
            Changed::Policy => return self.all_attached_uris(),
            Changed::Nothing => &[],
        };
        let mut out: Vec<Uri> = Vec::new();
        for uri in attached.iter().filter_map(|(_, u)| u.clone()) {
            if !out.contains(&uri) {
                out.push(uri);
            }
        }
        out
    }

    fn all_attached_uris(&self) -> Vec<Uri> {
        let mut out: Vec<Uri> = Vec::new();
        let all =
            self.deployments.iter().flat_map(|d| &d.attached).chain(self.documents.values().flat_map(|a| &a.attached));
        for uri in all.filter_map(|(_, u)| u.clone()) {
            if !out.contains(&uri) {
                out.push(uri);
            }
        }
        out
    }

    /// Whether the server shows `uri` as a file of its own: a policy file, a member, an open document.
    pub fn is_own(&self, uri: &Uri) -> bool {
        self.policy_index(uri).is_some() || self.member_of.contains_key(uri) || self.documents.contains_key(uri)
    }

    /// Every member of deployment `k`, open or not: their diagnostics are published.
    pub fn members(&self, k: usize) -> Vec<Uri> {
        self.deployments.get(k).map(|d| d.members.iter().map(|(u, _, _)| u.clone()).collect()).unwrap_or_default()
    }

    /// Every member of every deployment.
    pub fn all_members(&self) -> Vec<Uri> {
        (0..self.deployments.len()).flat_map(|k| self.members(k)).collect()
    }

    /// The URI of a file a report points into: a member, or a file it attaches.
    pub fn uri_of(&self, source: SourceText) -> Option<Uri> {
        for d in &self.deployments {
            if let Some((u, _, _)) = d.members.iter().find(|(_, s, _)| *s == source) {
                return Some(u.clone());
            }
            if let Some((_, u)) = d.attached.iter().find(|(a, _)| a.read.as_ref().ok() == Some(&source)) {
                return u.clone();
            }
        }
        for (uri, alone) in &self.documents {
            if alone.source == source {
                return Some(uri.clone());
            }
            if let Some((_, u)) = alone.attached.iter().find(|(a, _)| a.read.as_ref().ok() == Some(&source)) {
                return u.clone();
            }
        }
        None
    }

    pub fn open(&mut self, uri: Uri, text: String, version: i32) -> Changed {
        self.versions.insert(uri.clone(), version);
        if is_policy(&uri) {
            return self.set_policy_text(uri, text);
        }
        if let Some(&k) = self.member_of.get(&uri) {
            let source = self.source(&uri).expect("a member has a source");
            if source.text(&self.db) != &text || source.read_error(&self.db).is_some() {
                source.set_text(&mut self.db).to(text);
                source.set_read_error(&mut self.db).to(None);
            }
            self.stamp(self.deployments[k].deployment);
            self.refresh_attachments(k, false);
            return Changed::Deployment(k);
        }
        match self.documents.get(&uri) {
            Some(alone) => {
                let (source, deployment) = (alone.source, alone.deployment);
                source.set_text(&mut self.db).to(text);
                self.stamp(deployment);
            }
            None => {
                let path = uri.to_file_path().map_or_else(|| uri.as_str().to_string(), |p| self.display_path(&p));
                let source = SourceText::new(&self.db, path, text, None);
                let deployment =
                    Deployment::builder(vec![source], Vec::new()).now(Some(grail_workspace::clock())).new(&self.db);
                self.documents.insert(uri.clone(), Alone { source, deployment, attached: Vec::new() });
            }
        }
        self.refresh_alone(&uri, true);
        Changed::Document(uri)
    }

    /// Whether a `.grail` file belongs to the policy: it is under one of its folders.
    fn in_policy_folders(&self, uri: &Uri) -> bool {
        let Some(path) = uri.to_file_path() else { return false };
        self.policy_folders.iter().any(|f| path.starts_with(f))
    }

    fn set_policy_text(&mut self, uri: Uri, text: String) -> Changed {
        if let Some(i) = self.policy_index(&uri) {
            let file = self.set.files(&self.db)[i];
            if file.text(&self.db) != &text {
                file.set_text(&mut self.db).to(text);
                file.set_read_error(&mut self.db).to(None);
                self.refresh_all();
            }
            return Changed::Policy;
        }
        if !self.in_policy_folders(&uri) {
            // A `.grail` file outside the policy's folders is not part of the policy.
            return Changed::Nothing;
        }
        // A new file of a policy folder: it joins the policy.
        let path = uri.to_file_path().map_or_else(|| uri.as_str().to_string(), |p| self.display_path(&p));
        let file = SourceText::new(&self.db, path, text, None);
        let mut files = self.set.files(&self.db).clone();
        files.push(file);
        self.uris.push(Some(uri));
        self.shipped_files.push(false);
        self.set.set_files(&mut self.db).to(files);
        self.refresh_all();
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
            self.refresh_all();
            return Changed::Policy;
        }
        if let Some(&k) = self.member_of.get(uri) {
            self.stamp(self.deployments[k].deployment);
            self.refresh_attachments(k, false);
            return Changed::Deployment(k);
        }
        if let Some(deployment) = self.documents.get(uri).map(|a| a.deployment) {
            self.stamp(deployment);
            self.refresh_alone(uri, false);
        }
        Changed::Document(uri.clone())
    }

    /// A file is closed: a document is forgotten; a member or a policy file
    /// is read from disk again (a policy file leaves the policy if it is gone).
    pub fn close(&mut self, uri: &Uri) -> Changed {
        self.versions.remove(uri);
        self.last_kind.remove(uri);
        if let Some(alone) = self.documents.remove(uri) {
            self.detach(alone.attached.into_iter().filter_map(|(_, u)| u));
            return Changed::Document(uri.clone());
        }
        if self.member_of.contains_key(uri) {
            return self.reload_member(uri);
        }
        if self.policy_index(uri).is_none()
            || self.shipped_files.get(self.policy_index(uri).unwrap_or(0)) == Some(&true)
        {
            return Changed::Nothing;
        }
        self.reload_policy_file(uri)
    }

    /// A file changed on disk (created, changed or deleted); an open one keeps its editor text.
    pub fn file_changed_on_disk(&mut self, uri: &Uri) -> Changed {
        if is_workspace_file(uri) {
            self.reload_config();
            return Changed::Policy;
        }
        if self.is_open(uri) {
            return Changed::Nothing;
        }
        if self.member_of.contains_key(uri) {
            return self.reload_member(uri);
        }
        if let Some(k) = self.deployments.iter().position(|d| d.attached.iter().any(|(_, u)| u.as_ref() == Some(uri))) {
            self.refresh_attachments(k, true);
            return Changed::Deployment(k);
        }
        let attaching: Option<Uri> = self
            .documents
            .iter()
            .find(|(_, a)| a.attached.iter().any(|(_, u)| u.as_ref() == Some(uri)))
            .map(|(u, _)| u.clone());
        if let Some(by) = attaching {
            self.refresh_alone(&by, true);
            return Changed::Document(by);
        }
        if !is_policy(uri) {
            return Changed::Nothing;
        }
        self.reload_policy_file(uri)
    }

    fn reload_member(&mut self, uri: &Uri) -> Changed {
        let Some(&k) = self.member_of.get(uri) else { return Changed::Nothing };
        let Some(source) = self.source(uri) else { return Changed::Nothing };
        // Read as `grail check` reads it: a FIFO or a device refused unopened, a large file capped.
        let shown = source.path(&self.db).clone();
        let read = uri
            .to_file_path()
            .and_then(|p| grail_workspace::read_source(&p, &shown, grail_workspace::DEFAULT_MAX_DOCUMENT_SIZE).ok());
        match read {
            Some(read) => {
                source.set_text(&mut self.db).to(read.text);
                source.set_read_error(&mut self.db).to(read.read_error);
            }
            None => {
                source.set_text(&mut self.db).to(String::new());
            }
        }
        self.stamp(self.deployments[k].deployment);
        self.refresh_attachments(k, false);
        Changed::Deployment(k)
    }

    fn reload_policy_file(&mut self, uri: &Uri) -> Changed {
        // A FIFO or a device is refused unopened, as for documents.
        let bytes = uri.to_file_path().and_then(|p| {
            let mut file = grail_workspace::open_document(&p, &p.to_string_lossy()).ok()?;
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
            Some(bytes)
        });
        match (self.policy_index(uri), bytes) {
            (Some(i), Some(bytes)) => {
                let file = self.set.files(&self.db)[i];
                file.set_bytes(&mut self.db, bytes);
            }
            (Some(i), None) => {
                let mut files = self.set.files(&self.db).clone();
                files.remove(i);
                self.uris.remove(i);
                self.shipped_files.remove(i);
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

/// Whether the `ref` fields of `documents` name other files than those `had` holds.
fn references_changed(
    db: &Database,
    set: PolicySet,
    documents: &[(SourceText, Option<PathBuf>)],
    had: &[(AttachedFile, Option<Uri>)],
) -> bool {
    let wanted = documents
        .iter()
        .flat_map(|(doc, _)| document_references(db, set, *doc).iter().map(move |p| (*doc, p.as_str())));
    !wanted.eq(had.iter().map(|(a, _)| (a.from, a.path.as_str())))
}

/// The files the `ref` fields of `documents` (each with its file on disk,
/// when it has one) name, read by the command line's reader: under `root`
/// when given, else in each document's folder; each with the URI of the file read.
fn read_attachments(
    db: &Database,
    set: PolicySet,
    documents: &[(SourceText, Option<PathBuf>)],
    root: Option<&Path>,
) -> Vec<(AttachedFile, Option<Uri>)> {
    let real: HashMap<String, PathBuf> =
        documents.iter().filter_map(|(s, p)| Some((s.path(db).clone(), p.clone()?))).collect();
    let sources: Vec<SourceText> = documents.iter().map(|(s, _)| *s).collect();
    let attached = grail_workspace::attachments(db, set, &sources, root, &|shown| {
        real.get(shown).cloned().unwrap_or_else(|| PathBuf::from(shown))
    });
    attached
        .into_iter()
        .map(|a| {
            let from = real.get(a.from.path(db)).cloned();
            let folder = root.map(Path::to_path_buf).or_else(|| from.and_then(|p| p.parent().map(Path::to_path_buf)));
            let uri = folder.and_then(|f| Uri::from_file_path(f.join(&a.path)));
            (a, uri)
        })
        .collect()
}

/// A `TextDocumentContentChangeEvent`, by its own name here.
pub type TextEdit = TextDocumentContentChangeEvent;

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

impl Workspace {
    /// The workspace file's URI, when it is found but cannot be used (its diagnostic is published).
    pub fn workspace_file_uri(&self) -> Option<Uri> {
        match &self.config {
            Config::Invalid { path, .. } => Uri::from_file_path(path),
            _ => None,
        }
    }

    /// What to tell the user once, at the start, about the workspace file.
    pub fn config_message(&self) -> Option<(tower_lsp_server::ls_types::MessageType, String)> {
        use tower_lsp_server::ls_types::MessageType;
        match &self.config {
            Config::Loaded => None,
            Config::Missing => Some((
                MessageType::INFO,
                format!(
                    "grail: no `{}` in the workspace or its parents: the shipped library, each document checked alone",
                    grail_workspace::FILE_NAME
                ),
            )),
            Config::Invalid { error, .. } => Some((
                MessageType::ERROR,
                format!(
                    "grail: {}; until it is fixed, the shipped library, each document checked alone",
                    error.summary().lines().next().unwrap_or_default()
                ),
            )),
        }
    }
}

/// The files of `had` that `now` does not attach.
fn no_longer_attached(had: Vec<(AttachedFile, Option<Uri>)>, now: &[(AttachedFile, Option<Uri>)]) -> Vec<Uri> {
    had.into_iter().filter_map(|(_, u)| u).filter(|u| !now.iter().any(|(_, n)| n.as_ref() == Some(u))).collect()
}
