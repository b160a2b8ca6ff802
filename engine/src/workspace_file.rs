//! The workspace file `grail.toml`: which policy a bare `grail check` and the
//! editor use, and the named deployments they check. Text in, data out: the
//! caller finds the file, reads it, and resolves the paths against its folder.
//!
//! ```toml
//! [policy]
//! folders = ["shipped", "policies/org"]
//!
//! [deployments.northwind]
//! layers = { security = "org/security.yaml", repo = "org/repo.yaml" }
//! items = ["org/items"]
//! histories = ["org/history/step-002.yaml"]
//! documents = []
//! allow_unknown = false   # true: its UNKNOWN outcomes do not fail the check
//! probe_evidence_root = "org/evidence"          # `--probe-evidence-root`
//! egress_hosts = ["egress-probe.example.net"]   # `--egress-hosts`
//! credential_roots = ["/home/runner"]           # `--credential-roots`
//! evidence = "org/promotion-evidence.json"   # given as `evidence`, as `--evidence` gives it
//! ```
//!
//! Layer names are not checked here: the policy declares its layers, and the
//! check refuses a name it does not declare.

use std::collections::BTreeMap;

use grail_lang::ast::Span;
use serde::Deserialize;
use toml::Spanned;

/// The name of the workspace file.
pub const FILE_NAME: &str = "grail.toml";

/// The name that stands for the shipped library among the policy folders.
pub const SHIPPED: &str = "shipped";

/// A parsed `grail.toml`. Every path is as written, relative to the file's folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceFile {
    /// The policy folders compiled together (`shipped` for the built-in
    /// library); the shipped library alone when the file names none.
    pub policy: Vec<Located>,
    /// Whether the file names the policy (`[policy] folders`), or the default stands.
    pub policy_declared: bool,
    pub deployments: Vec<DeploymentSpec>,
}

/// A string of the file and where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub value: String,
    pub span: Span,
}

/// One named deployment: documents checked together, as one `grail check` of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeploymentSpec {
    pub name: Located,
    /// `(layer, file)`: the file bound to the layer, as `--layer NAME=FILE` binds it.
    pub layers: Vec<(Located, Located)>,
    /// Work items (Markdown), files or folders, resolved against the deployment's bindings.
    pub items: Vec<Located>,
    /// Workflow histories.
    pub histories: Vec<Located>,
    /// Any other document of the deployment, unbound.
    pub documents: Vec<Located>,
    /// `allow_unknown = true`: the deployment's UNKNOWN outcomes do not fail
    /// the check, as `grail check --allow-unknown` (the report says the file allowed them).
    pub allow_unknown: bool,
    /// The folder where the documents' `ref` fields resolve, as
    /// `--probe-evidence-root DIR` gives it (also `param("probe-evidence-root")`).
    pub probe_evidence_root: Option<Located>,
    /// `param("egress-hosts")`, as `--egress-hosts` gives it.
    pub egress_hosts: Option<Vec<Located>>,
    /// `param("credential-roots")`, as `--credential-roots` gives it.
    pub credential_roots: Option<Vec<Located>>,
    /// `evidence = "FILE"`: the file given to the deployment under the name
    /// `evidence`, as `grail check --evidence FILE` gives it.
    pub evidence: Option<Located>,
}

impl DeploymentSpec {
    /// Every path of the deployment: layered files first (in the file's
    /// order of layer names), then documents, items, histories.
    pub fn paths(&self) -> impl Iterator<Item = &Located> {
        self.layers.iter().map(|(_, p)| p).chain(&self.documents).chain(&self.items).chain(&self.histories)
    }
}

/// Why a workspace file cannot be used, located in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceFileError {
    pub message: String,
    pub span: Option<Span>,
    pub help: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    policy: Option<RawPolicy>,
    #[serde(default)]
    deployments: BTreeMap<Spanned<String>, RawDeployment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    folders: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeployment {
    #[serde(default)]
    layers: BTreeMap<Spanned<String>, Spanned<OneOrMore>>,
    #[serde(default)]
    items: Vec<Spanned<String>>,
    #[serde(default)]
    histories: Vec<Spanned<String>>,
    #[serde(default)]
    documents: Vec<Spanned<String>>,
    #[serde(default)]
    allow_unknown: bool,
    probe_evidence_root: Option<Spanned<String>>,
    egress_hosts: Option<Vec<Spanned<String>>>,
    credential_roots: Option<Vec<Spanned<String>>>,
    evidence: Option<Spanned<String>>,
    /// Upstream's names for the two bindings (`--binding`,
    /// `--security-binding` of its envelope checker): the autonomy binding is
    /// one more document, the security binding the `security` layer.
    autonomy_binding: Option<Spanned<String>>,
    security_binding: Option<Spanned<String>>,
}

/// A layer's file, or its files: one document of each kind that has the
/// layer (`security = ["security.yaml", "leases.yaml"]`: the security
/// binding and the queue's dispatch records).
enum OneOrMore {
    One(String),
    More(Vec<Spanned<String>>),
}

impl<'de> Deserialize<'de> for OneOrMore {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Files;
        impl<'de> serde::de::Visitor<'de> for Files {
            type Value = OneOrMore;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a file, or a list of files")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMore, E> {
                Ok(OneOrMore::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMore, A::Error> {
                let mut files = Vec::new();
                while let Some(f) = seq.next_element::<Spanned<String>>()? {
                    files.push(f);
                }
                Ok(OneOrMore::More(files))
            }
        }
        d.deserialize_any(Files)
    }
}

/// The files of one layer, each where it is written.
fn layer_files(value: Spanned<OneOrMore>) -> Vec<Located> {
    let span = value.span();
    match value.into_inner() {
        OneOrMore::One(f) => vec![Located { value: f, span: Span::new(span.start, span.end) }],
        OneOrMore::More(fs) => fs.into_iter().map(located).collect(),
    }
}

fn located(s: Spanned<String>) -> Located {
    let span = s.span();
    Located { value: s.into_inner(), span: Span::new(span.start, span.end) }
}

/// Parses the text of a `grail.toml`.
pub fn parse(text: &str) -> Result<WorkspaceFile, WorkspaceFileError> {
    let raw: Raw = toml::from_str(text).map_err(|e| WorkspaceFileError {
        message: lower_first(e.message().trim_end_matches('.')),
        span: e.span().map(|r| Span::new(r.start, r.end)),
        help: Some(
            "a `grail.toml` has a `[policy]` table with `folders`, and `[deployments.NAME]` tables with \
             `layers`, `items`, `histories`, `documents`, `allow_unknown`, `probe_evidence_root`, \
             `egress_hosts`, `credential_roots`, `evidence`, `autonomy_binding` and `security_binding`"
                .into(),
        ),
    })?;
    let (policy, policy_declared) = match raw.policy.and_then(|p| p.folders) {
        Some(folders) => (folders.into_iter().map(located).collect::<Vec<_>>(), true),
        None => (vec![Located { value: SHIPPED.into(), span: Span::new(0, 0) }], false),
    };
    if policy_declared && policy.is_empty() {
        return Err(WorkspaceFileError {
            message: "`folders` names no policy folder".into(),
            span: None,
            help: Some(format!("write `folders = [\"{SHIPPED}\"]` for the shipped library, or leave `folders` out")),
        });
    }
    let mut seen: Vec<&Located> = Vec::new();
    for folder in &policy {
        if let Some(first) = seen.iter().find(|f| f.value == folder.value) {
            return Err(WorkspaceFileError {
                message: format!("the policy folder `{}` is named twice", folder.value),
                span: Some(folder.span),
                help: Some(format!("it is first named at byte {}; name each folder once", first.span.start)),
            });
        }
        seen.push(folder);
    }
    let mut deployments = Vec::new();
    for (name, d) in raw.deployments {
        let mut layers: Vec<(Located, Located)> = Vec::new();
        for (layer, files) in d.layers {
            let layer = located(layer);
            for file in layer_files(files) {
                layers.push((layer.clone(), file));
            }
        }
        if let Some(security) = d.security_binding.map(located) {
            layers.push((Located { value: "security".into(), span: security.span }, security));
        }
        let mut documents: Vec<Located> = d.documents.into_iter().map(located).collect();
        documents.extend(d.autonomy_binding.map(located));
        deployments.push(DeploymentSpec {
            name: located(name),
            layers,
            items: d.items.into_iter().map(located).collect(),
            histories: d.histories.into_iter().map(located).collect(),
            documents,
            allow_unknown: d.allow_unknown,
            probe_evidence_root: d.probe_evidence_root.map(located),
            egress_hosts: d.egress_hosts.map(|v| v.into_iter().map(located).collect()),
            credential_roots: d.credential_roots.map(|v| v.into_iter().map(located).collect()),
            evidence: d.evidence.map(located),
        });
    }
    for d in &deployments {
        let mut paths: Vec<&Located> = Vec::new();
        for p in d.paths() {
            if let Some(first) = paths.iter().find(|q| q.value == p.value) {
                return Err(WorkspaceFileError {
                    message: format!("deployment `{}` names `{}` twice", d.name.value, p.value),
                    span: Some(p.span),
                    help: Some(format!(
                        "a file is one document of a deployment; it is first named at byte {}",
                        first.span.start
                    )),
                });
            }
            paths.push(p);
        }
        if paths.is_empty() {
            return Err(WorkspaceFileError {
                message: format!("deployment `{}` names no document", d.name.value),
                span: Some(d.name.span),
                help: Some("give it `layers`, `documents`, `items` or `histories`".into()),
            });
        }
    }
    Ok(WorkspaceFile { policy, policy_declared, deployments })
}

/// `No such file or directory (os error 2)` reads `no such file or directory (os error 2)`:
/// an error of the standard library as the middle of a sentence.
pub fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_is_read_with_its_spans() {
        let text = r#"[policy]
folders = ["shipped", "org-rules"]

[deployments.north]
layers = { security = "org/security.yaml", repo = "org/repo.yaml" }
items = ["org/items"]
histories = ["org/history/step-002.yaml"]
"#;
        let file = parse(text).expect("parses");
        assert!(file.policy_declared);
        let folders: Vec<&str> = file.policy.iter().map(|f| f.value.as_str()).collect();
        assert_eq!(folders, ["shipped", "org-rules"]);
        let d = &file.deployments[0];
        assert_eq!(d.name.value, "north");
        let layers: Vec<(&str, &str)> = d.layers.iter().map(|(k, v)| (k.value.as_str(), v.value.as_str())).collect();
        assert_eq!(layers, [("repo", "org/repo.yaml"), ("security", "org/security.yaml")]);
        let (_, repo) = &d.layers[0];
        assert_eq!(&text[repo.span.start..repo.span.end], "\"org/repo.yaml\"");
        let paths: Vec<&str> = d.paths().map(|p| p.value.as_str()).collect();
        assert_eq!(paths, ["org/repo.yaml", "org/security.yaml", "org/items", "org/history/step-002.yaml"]);
    }

    #[test]
    fn without_a_policy_table_the_shipped_library_stands() {
        let file = parse("[deployments.a]\ndocuments = [\"a.yaml\"]\n").expect("parses");
        assert!(!file.policy_declared);
        assert_eq!(file.policy[0].value, SHIPPED);
        assert!(!file.deployments[0].allow_unknown, "UNKNOWN fails unless the file says otherwise");
    }

    #[test]
    fn a_deployment_may_allow_unknown_and_only_as_a_boolean() {
        let file = parse("[deployments.a]\ndocuments = [\"a.yaml\"]\nallow_unknown = true\n").expect("parses");
        assert!(file.deployments[0].allow_unknown);
        let text = "[deployments.a]\ndocuments = [\"a.yaml\"]\nallow_unknown = \"yes\"\n";
        let e = parse(text).expect_err("refused");
        let span = e.span.expect("located");
        assert_eq!(&text[span.start..span.end], "\"yes\"", "{e:?}");
        // Not a key of the whole file: each deployment says it for itself.
        assert!(parse("allow_unknown = true\n[deployments.a]\ndocuments = [\"a.yaml\"]\n").is_err());
    }

    #[test]
    fn a_deployment_may_give_the_parameters_of_the_invocation() {
        let text = "[deployments.a]\ndocuments = [\"a.json\"]\nprobe_evidence_root = \"evidence\"\n\
                    egress_hosts = [\"a.example\", \"b.example\"]\ncredential_roots = [\"/home/runner\"]\n";
        let d = &parse(text).expect("parses").deployments[0];
        assert_eq!(d.probe_evidence_root.as_ref().map(|l| l.value.as_str()), Some("evidence"));
        let hosts: Vec<&str> = d.egress_hosts.iter().flatten().map(|l| l.value.as_str()).collect();
        assert_eq!(hosts, ["a.example", "b.example"]);
        let roots: Vec<&str> = d.credential_roots.iter().flatten().map(|l| l.value.as_str()).collect();
        assert_eq!(roots, ["/home/runner"]);
        let bare = &parse("[deployments.a]\ndocuments = [\"a.json\"]\n").expect("parses").deployments[0];
        assert!(bare.probe_evidence_root.is_none() && bare.egress_hosts.is_none() && bare.credential_roots.is_none());
        // A list, never one comma-separated string.
        assert!(parse("[deployments.a]\ndocuments = [\"a.json\"]\negress_hosts = \"a,b\"\n").is_err());
    }

    #[test]
    fn upstreams_two_bindings_are_a_document_and_the_security_layer() {
        let text = "[deployments.a]\nautonomy_binding = \".claude/autonomy/binding.json\"\n\
                    security_binding = \"security.json\"\nitems = [\"items\"]\n";
        let d = &parse(text).expect("parses").deployments[0];
        let docs: Vec<&str> = d.documents.iter().map(|l| l.value.as_str()).collect();
        assert_eq!(docs, [".claude/autonomy/binding.json"]);
        let layers: Vec<(&str, &str)> = d.layers.iter().map(|(l, f)| (l.value.as_str(), f.value.as_str())).collect();
        assert_eq!(layers, [("security", "security.json")]);
        // With the queue's records beside it: both bound to `security`, each of its kind.
        let both = "[deployments.a]\nsecurity_binding = \"s.json\"\nlayers = { security = \"leases.yaml\" }\n";
        let d = &parse(both).expect("parses").deployments[0];
        let layers: Vec<(&str, &str)> = d.layers.iter().map(|(l, f)| (l.value.as_str(), f.value.as_str())).collect();
        assert_eq!(layers, [("security", "leases.yaml"), ("security", "s.json")]);
        // A layer may bind one document of each kind that has it.
        let two = "[deployments.a]\nlayers = { security = [\"s.json\", \"leases.yaml\"], repo = \"r.yaml\" }\n";
        let d = &parse(two).expect("parses").deployments[0];
        let layers: Vec<(&str, &str)> = d.layers.iter().map(|(l, f)| (l.value.as_str(), f.value.as_str())).collect();
        assert_eq!(layers, [("repo", "r.yaml"), ("security", "s.json"), ("security", "leases.yaml")]);
    }

    #[test]
    fn an_unknown_key_is_located() {
        let text = "[deployments.a]\ndocuments = [\"a.yaml\"]\nlayer = {}\n";
        let e = parse(text).expect_err("refused");
        let span = e.span.expect("located");
        assert_eq!(&text[span.start..span.end], "layer", "{e:?}");
        assert!(e.message.starts_with("unknown field `layer`"), "{}", e.message);
    }

    #[test]
    fn a_syntax_error_is_located() {
        let e = parse("[policy\n").expect_err("refused");
        assert!(e.span.is_some(), "{e:?}");
    }

    #[test]
    fn a_file_named_twice_in_a_deployment_is_refused() {
        let text = "[deployments.a]\nlayers = { security = \"s.yaml\" }\ndocuments = [\"s.yaml\"]\n";
        let e = parse(text).expect_err("refused");
        assert_eq!(e.message, "deployment `a` names `s.yaml` twice");
        let span = e.span.expect("located");
        assert_eq!(&text[span.start..span.end], "\"s.yaml\"");
        assert!(span.start > text.find("documents").unwrap_or(0));
    }

    #[test]
    fn an_empty_deployment_and_an_empty_policy_are_refused() {
        assert_eq!(parse("[deployments.a]\n").expect_err("refused").message, "deployment `a` names no document");
        assert_eq!(parse("[policy]\nfolders = []\n").expect_err("refused").message, "`folders` names no policy folder");
        let twice = parse("[policy]\nfolders = [\"p\", \"p\"]\n").expect_err("refused");
        assert_eq!(twice.message, "the policy folder `p` is named twice");
    }
}
