//! grail-engine: compiles grail policies and checks documents against them.
//!
//! The engine knows nothing of editors, terminals or processes: it never
//! prints, never exits, and reads no file. Callers put source texts into the
//! [`db::Database`] and read findings back as data.

pub mod analyze;
pub mod builtins;
pub mod change;
pub mod check;
pub mod conform;
pub mod db;
pub mod diagnostic;
pub mod document;
pub mod emit;
pub mod eval;
pub mod explain;
pub mod hir;
pub mod ide;
pub mod int;
pub mod keypath;
pub mod layers;
pub mod line_index;
pub mod lower;
pub mod net;
pub mod paths;
pub mod prebuilt;
pub mod question;
pub mod suggest;
pub mod table;
pub mod testing;
pub mod time;
pub mod url;
pub mod value;
pub mod workspace_file;

/// What the engine's unit tests share.
#[cfg(test)]
pub(crate) mod test_files {
    use std::path::PathBuf;

    /// The files under the repository's folders `dirs` whose extension is
    /// one of `extensions`, with their text, sorted by path.
    pub(crate) fn repository_files(dirs: &[&str], extensions: &[&str]) -> Vec<(PathBuf, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut pending: Vec<_> = dirs.iter().map(|dir| root.join(dir)).collect();
        let mut files = Vec::new();
        while let Some(dir) = pending.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else { continue };
            for entry in listing.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e))
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    files.push((path, text));
                }
            }
        }
        files.sort();
        files
    }
}

/// The shipped guardrail library, embedded at build time.
pub mod shipped {
    include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

    use crate::{PolicySet, SourceText};

    /// The library's files as inputs of `db`, in the order of [`FILES`].
    pub fn sources(db: &dyn salsa::Database) -> Vec<SourceText> {
        FILES.iter().map(|(path, text)| SourceText::new(db, path.to_string(), text.to_string(), None)).collect()
    }

    /// The library as a policy set of `db`.
    pub fn policy_set(db: &dyn salsa::Database) -> PolicySet {
        PolicySet::new(db, sources(db))
    }
}

pub use db::{Database, Deployment, PolicySet, ReadError, SourceText};
pub use diagnostic::{Finding, Outcome, PolicyDiagnostic, Severity, Summary};
pub use line_index::LineIndex;
