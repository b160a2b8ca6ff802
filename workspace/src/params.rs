//! The parameters of an invocation that upstream's checker takes as flags
//! (`--probe-evidence-root`, `--egress-hosts`, `--credential-roots`), read
//! from the command line or from a deployment of `grail.toml`, and split as
//! upstream's checker splits them. Rules read each with `param("name")`; the
//! evidence root is also the folder where the documents' `ref` fields resolve.

use std::path::PathBuf;

use grail_engine::check::Param;

/// The name `param` reads the evidence root under.
pub const PROBE_EVIDENCE_ROOT: &str = "probe-evidence-root";
/// The name `param` reads the configured probe targets under.
pub const EGRESS_HOSTS: &str = "egress-hosts";
/// The name `param` reads the trusted credential roots under.
pub const CREDENTIAL_ROOTS: &str = "credential-roots";

/// What an invocation gives a deployment besides its documents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Invocation {
    /// The named parameters, in the order of [`PROBE_EVIDENCE_ROOT`],
    /// [`EGRESS_HOSTS`], [`CREDENTIAL_ROOTS`]; one not given is left out.
    pub params: Vec<Param>,
    /// The folder where the documents' `ref` fields resolve, instead of each
    /// document's own folder (on disk: for a workspace file, resolved against
    /// its folder).
    pub evidence_root: Option<PathBuf>,
}

impl Invocation {
    /// The invocation of the three values as written: the root's path, and
    /// the entries of each list (a flag's value split at commas).
    pub fn new<'a>(
        root: Option<(&str, PathBuf)>,
        egress_hosts: Option<impl IntoIterator<Item = &'a str>>,
        credential_roots: Option<impl IntoIterator<Item = &'a str>>,
    ) -> Invocation {
        let mut params = Vec::new();
        let mut evidence_root = None;
        if let Some((written, on_disk)) = root {
            params.push(Param { name: PROBE_EVIDENCE_ROOT.into(), values: vec![written.to_string()] });
            evidence_root = Some(on_disk);
        }
        // Entries hold no comma (the flag's value was split at them), so joining is lossless.
        let joined = |entries: Vec<&str>| entries.join(",");
        params.extend(egress_hosts.and_then(|h| Param::from_flag(EGRESS_HOSTS, &joined(h.into_iter().collect()))));
        // As upstream: a value with no entry is as if the flag were not given.
        params.extend(
            credential_roots.and_then(|r| Param::from_flag(CREDENTIAL_ROOTS, &joined(r.into_iter().collect()))),
        );
        Invocation { params, evidence_root }
    }

    /// This invocation, with what `under` gives that this one does not (the
    /// command line's flags over a deployment's keys).
    pub fn over(mut self, under: &Invocation) -> Invocation {
        for p in &under.params {
            if !self.params.iter().any(|q| q.name == p.name) {
                self.params.push(p.clone());
            }
        }
        if self.evidence_root.is_none() {
            self.evidence_root.clone_from(&under.evidence_root);
        }
        let order = |p: &Param| [PROBE_EVIDENCE_ROOT, EGRESS_HOSTS, CREDENTIAL_ROOTS].iter().position(|n| *n == p.name);
        self.params.sort_by_key(order);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(inv: &Invocation, name: &str) -> Option<Vec<String>> {
        inv.params.iter().find(|p| p.name == name).map(|p| p.values.clone())
    }

    const NONE: Option<[&str; 0]> = None;

    #[test]
    fn hosts_are_trimmed_lowered_and_lose_one_trailing_dot() {
        let inv = Invocation::new(None, Some(" Probe.Example.NET. ,,a.example..,  ".split(',')), NONE);
        assert_eq!(values(&inv, EGRESS_HOSTS), Some(vec!["probe.example.net".into(), "a.example.".into()]));
        // Given, even with no entry left: the configured set is empty.
        let empty = Invocation::new(None, Some(" , ".split(',')), NONE);
        assert_eq!(values(&empty, EGRESS_HOSTS), Some(vec![]));
    }

    #[test]
    fn credential_roots_without_an_entry_are_not_given() {
        let inv = Invocation::new(None, NONE, Some(" /home/runner ,, /Root/ ".split(',')));
        assert_eq!(values(&inv, CREDENTIAL_ROOTS), Some(vec!["/home/runner".into(), "/Root/".into()]));
        let empty = Invocation::new(None, NONE, Some(" ,".split(',')));
        assert_eq!(values(&empty, CREDENTIAL_ROOTS), None);
    }

    #[test]
    fn the_root_is_a_parameter_and_the_folder_of_references() {
        let inv = Invocation::new(Some(("./evidence", PathBuf::from("/x/evidence"))), NONE, NONE);
        assert_eq!(values(&inv, PROBE_EVIDENCE_ROOT), Some(vec!["./evidence".into()]));
        assert_eq!(inv.evidence_root, Some(PathBuf::from("/x/evidence")));
    }

    #[test]
    fn flags_win_over_the_file() {
        let file = Invocation::new(Some(("e", PathBuf::from("/w/e"))), Some(["a.example"]), Some(["/r"]));
        let flags = Invocation::new(None, Some(["b.example"]), NONE);
        let both = flags.over(&file);
        assert_eq!(values(&both, EGRESS_HOSTS), Some(vec!["b.example".into()]));
        assert_eq!(values(&both, CREDENTIAL_ROOTS), Some(vec!["/r".into()]));
        assert_eq!(both.evidence_root, Some(PathBuf::from("/w/e")));
        let names: Vec<&str> = both.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, [PROBE_EVIDENCE_ROOT, EGRESS_HOSTS, CREDENTIAL_ROOTS]);
    }
}
