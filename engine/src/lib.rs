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
