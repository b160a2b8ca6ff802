//! What an invocation takes from the workspace file `grail.toml`: its
//! policy folders (every command that takes a policy, unless `--policy`
//! names one) and its deployments (every command that reads a deployment,
//! when no file is named). Flags win; what comes from the file is said on
//! standard error in the words `grail check` uses (`deployment `NAME`
//! (grail.toml)`), so that standard output stays what the format promises.

use std::path::PathBuf;

use camino::Utf8PathBuf;
use grail_engine::db::{Compiled, LayerBinding};
use grail_engine::layers::BoundBy;
use grail_engine::{Database, PolicySet, SourceText};
use grail_workspace::{FILE_NAME, Invocation, Workspace};

use crate::{Fatal, InvocationArgs, policy, render};

/// What a command names to check, besides its policy: its command line's
/// files, layers and `--binding` documents, and its other flags.
pub struct Asked<'a> {
    /// The command, for messages (`explain`).
    pub command: &'static str,
    /// `--deployment NAME`.
    pub deployment: Option<&'a str>,
    pub files: &'a [Utf8PathBuf],
    pub layers: &'a [crate::documents::LayerArg],
    pub binding: &'a [Utf8PathBuf],
    pub attach: &'a [crate::documents::AttachArg],
    pub invocation: &'a InvocationArgs,
    pub evidence: Option<&'a Utf8PathBuf>,
    /// The time of the check.
    pub now: i128,
}

/// The policy and the workspace file of one invocation.
pub struct Setup {
    /// The workspace file found (when it was needed), and the working
    /// directory its paths are shown against.
    workspace: Option<(Workspace, PathBuf)>,
    /// The policy folders as `policy::load` reads them (`shipped` for the
    /// library; empty: the shipped library alone).
    pub dirs: Vec<Utf8PathBuf>,
    /// The policy is the workspace file's (no `--policy` was given).
    from_file: bool,
}

/// One deployment of the workspace file, read: its documents and what its
/// keys give the check (the flags of the invocation winning over them).
pub struct Named {
    pub name: String,
    pub documents: Vec<SourceText>,
    pub bindings: Vec<LayerBinding>,
    /// The deployment's `allow_unknown`.
    pub allow_unknown: bool,
    /// The parameters and evidence root: the flags, over the deployment's keys.
    pub invocation: Invocation,
    /// `--evidence`, else the deployment's `evidence`, and which gave it.
    pub evidence: Option<Utf8PathBuf>,
    pub evidence_flag: &'static str,
}

impl Setup {
    /// Resolves the policy of an invocation: `--policy` when given, else
    /// the folders of the workspace file found in the working directory or
    /// its parents, else the shipped library. `deployments` says the
    /// invocation names no document, so it reads the file's deployments
    /// (and needs the file even with `--policy`). A workspace file that is
    /// not needed is not read; one that is needed and cannot be used stops
    /// the command.
    pub fn resolve(flags: &[Utf8PathBuf], deployments: bool) -> Result<Setup, Fatal> {
        if !flags.is_empty() && !deployments {
            return Ok(Setup { workspace: None, dirs: flags.to_vec(), from_file: false });
        }
        let cwd = std::env::current_dir().map_err(|e| Fatal(format!("cannot read the working directory: {e}")))?;
        let workspace = match grail_workspace::find(&cwd) {
            Some(path) => Some((grail_workspace::load(&path).map_err(|e| invalid(&e))?, cwd)),
            None => None,
        };
        let (dirs, from_file) = match (&workspace, flags.is_empty()) {
            (Some((ws, cwd)), true) => {
                let dirs = ws
                    .file
                    .policy
                    .iter()
                    .map(|f| {
                        if f.value == policy::SHIPPED {
                            Utf8PathBuf::from(policy::SHIPPED)
                        } else {
                            Utf8PathBuf::from(grail_workspace::shown(&ws.resolve(f), cwd))
                        }
                    })
                    .collect();
                (dirs, true)
            }
            _ => (flags.to_vec(), false),
        };
        Ok(Setup { workspace, dirs, from_file })
    }

    /// Puts the policy into the database and compiles it (a policy that
    /// does not compile stops the command), saying on standard error where
    /// it came from when the workspace file gave it.
    pub fn load<'db>(&self, db: &'db Database) -> Result<(PolicySet, &'db Compiled), Fatal> {
        if let (true, Some((ws, _))) = (self.from_file, &self.workspace) {
            // Located errors (a folder that is not there, or holds no policy) first.
            ws.policy_files().map_err(|e| invalid(&e))?;
            eprintln!("{}", self.policy_line());
        }
        let set = policy::load(db, &self.dirs)?;
        let compiled = policy::compile(db, set)?;
        Ok((set, compiled))
    }

    /// `policy `shipped`, `ours` (grail.toml)`: where the policy came from.
    fn policy_line(&self) -> String {
        let folders: Vec<String> = self.dirs.iter().map(|d| format!("`{d}`")).collect();
        format!("policy {} ({FILE_NAME})", folders.join(", "))
    }

    /// Which of the policy's files are the shipped library's.
    pub fn shipped(&self, db: &Database, set: PolicySet) -> Vec<bool> {
        policy::shipped_files(db, set, &self.dirs)
    }

    /// The deployments of the workspace file, read, for `command` (named in
    /// the error when there is no workspace file): every one, or the one
    /// `only` names.
    #[allow(clippy::too_many_arguments, reason = "the inputs of a deployment, as `grail check` takes them")]
    pub fn deployments(
        &self,
        db: &Database,
        compiled: &Compiled,
        command: &str,
        only: Option<&str>,
        flags: &Invocation,
        evidence: Option<&Utf8PathBuf>,
        max_document_size: u64,
    ) -> Result<Vec<Named>, Fatal> {
        let Some((ws, cwd)) = &self.workspace else {
            let cwd = std::env::current_dir().unwrap_or_default();
            return Err(Fatal(format!(
                "no documents named, and no `{FILE_NAME}` in `{}` or its parents\nhelp: name the documents \
                 (`grail {command} org.yaml`), or write a `{FILE_NAME}` that names them, such as\n\n\
                 [policy]\n\
                 folders = [\"shipped\"]  # the built-in library; add folders of your own rules\n\n\
                 [deployments.main]\n\
                 layers = {{ security = \"security.yaml\" }}  # each file bound to its layer\n\
                 documents = [\"autonomy.yaml\"]             # documents checked with them\n\n\
                 (paths relative to `{FILE_NAME}`; the full reference is docs/workspace.md, in the repository \
                 and in the release archive)",
                cwd.display()
            )));
        };
        let shown = |p: &std::path::Path| grail_workspace::shown(p, cwd);
        let declared: Vec<String> = compiled.policy.layers.iter().flat_map(|l| l.layers.iter().cloned()).collect();
        ws.check_layer_names(&declared).map_err(|e| invalid(&e))?;
        if ws.file.deployments.is_empty() {
            return Err(Fatal(format!(
                "`{}` declares no deployment\nhelp: add a `[deployments.NAME]` table naming its documents",
                shown(&ws.path)
            )));
        }
        if let Some(name) = only
            && !ws.file.deployments.iter().any(|d| d.name.value == name)
        {
            return Err(Fatal(format!(
                "`{}` declares no deployment `{name}` (its deployments: {})",
                shown(&ws.path),
                names(ws)
            )));
        }
        let mut out = Vec::new();
        for d in ws.file.deployments.iter().filter(|d| only.is_none_or(|n| d.name.value == n)) {
            let invocation = flags.clone().over(&ws.invocation(d).map_err(|e| invalid(&e))?);
            let mut documents = Vec::new();
            let mut bindings = Vec::new();
            for m in ws.documents(d).map_err(|e| invalid(&e))? {
                let doc =
                    grail_workspace::read_document(db, &m.path, shown(&m.path), max_document_size).map_err(Fatal)?;
                if let Some(layer) = m.layer {
                    bindings.push(LayerBinding { document: doc, layer, by: BoundBy::Workspace });
                }
                documents.push(doc);
            }
            out.push(Named {
                name: d.name.value.clone(),
                documents,
                bindings,
                allow_unknown: d.allow_unknown,
                invocation,
                // The flag wins over the file, as `--allow-unknown` does.
                evidence: match (evidence, &d.evidence) {
                    (Some(flag), _) => Some(flag.clone()),
                    (None, Some(p)) => Some(Utf8PathBuf::from(shown(&ws.resolve(p)))),
                    (None, None) => None,
                },
                evidence_flag: if evidence.is_some() { "--evidence" } else { "evidence =" },
            });
        }
        Ok(out)
    }

    /// The one deployment a command that reads one (explain, graph,
    /// authorize, compile) takes from the workspace file: the one
    /// `--deployment` names, or the file's only one. Said on standard error.
    pub fn deployment(
        &self,
        db: &Database,
        compiled: &Compiled,
        command: &str,
        only: Option<&str>,
        flags: &InvocationArgs,
        evidence: Option<&Utf8PathBuf>,
    ) -> Result<Named, Fatal> {
        let flags = flags.invocation()?;
        let mut all = self.deployments(
            db,
            compiled,
            command,
            only,
            &flags,
            evidence,
            crate::documents::DEFAULT_MAX_DOCUMENT_SIZE,
        )?;
        if all.len() > 1 {
            let ws = self.workspace.as_ref().map(|(ws, _)| names(ws)).unwrap_or_default();
            return Err(Fatal(format!(
                "`{FILE_NAME}` declares {} deployments ({ws}); `grail {command}` reads one\nhelp: name it with `--deployment NAME`, or name its documents",
                all.len()
            )));
        }
        let one = all.remove(0);
        eprintln!("deployment `{}` ({FILE_NAME})", one.name);
        Ok(one)
    }
}

/// The deployments of the file, as a list: "`a`, `b`".
fn names(ws: &Workspace) -> String {
    ws.file.deployments.iter().map(|d| format!("`{}`", d.name.value)).collect::<Vec<_>>().join(", ")
}

/// A workspace file that cannot be used: located in it, exit 2.
pub fn invalid(e: &grail_workspace::Error) -> Fatal {
    match e {
        grail_workspace::Error::Invalid { path, text, error } => {
            eprint!("{}", render::workspace_error(&path.to_string_lossy(), text, error));
            Fatal(format!("`{}` cannot be used", path.display()))
        }
        grail_workspace::Error::Read { .. } => Fatal(e.summary()),
    }
}

impl Setup {
    /// The deployment a command checks: the workspace file's when
    /// `from_file` (the command line names no document), else the one the
    /// command line names. With its documents, and whether the workspace
    /// file's deployment allows UNKNOWN (`allow_unknown`).
    pub fn asked_deployment(
        &self,
        db: &Database,
        set: PolicySet,
        compiled: &Compiled,
        from_file: bool,
        asked: Asked<'_>,
    ) -> Result<(Vec<SourceText>, grail_engine::db::Deployment, bool), Fatal> {
        if from_file {
            let named =
                self.deployment(db, compiled, asked.command, asked.deployment, asked.invocation, asked.evidence)?;
            let (shown, deployment) = crate::documents::workspace_deployment(db, set, &named, asked.attach, asked.now)?;
            return Ok((shown, deployment, named.allow_unknown));
        }
        let (shown, deployment) = crate::documents::named_deployment(
            db,
            set,
            asked.files,
            asked.layers,
            asked.binding,
            crate::documents::Call {
                attach: asked.attach,
                now: asked.now,
                invocation: &asked.invocation.invocation()?,
                evidence: asked.evidence.map(|e| e.as_path()),
            },
        )?;
        Ok((shown, deployment, false))
    }
}
