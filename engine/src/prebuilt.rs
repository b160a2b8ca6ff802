//! A policy compiled ahead of time: the shipped library, compiled when the
//! `grail` binary is built, so that a cold process does not parse and lower
//! it again (about four fifths of a cold `grail check`).
//!
//! A blob holds the exact source it was compiled from (every file's path and
//! text) followed by the lowered [`Policy`], both in postcard. It is used
//! only for a policy set whose files are, byte for byte, the ones it holds:
//! anything else, including one changed character, compiles from source as
//! before. The result is the one compilation would give (tested in
//! `engine/tests/prebuilt.rs`), so `compile_policy` stays a function of its
//! inputs. A policy with any diagnostic, even a warning, is never prebuilt.

use std::sync::{Arc, OnceLock};

use crate::db::{PolicySet, SourceText, compile_policy};
use crate::hir::Policy;

static INSTALLED: OnceLock<&'static [u8]> = OnceLock::new();

/// Compiles `files` (path, text) and encodes the result; `None` when the
/// policy has a diagnostic (it is then always compiled from source).
pub fn encode(files: &[(&str, &str)]) -> Option<Vec<u8>> {
    let db = crate::Database::default();
    let set = PolicySet::new(
        &db,
        files.iter().map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None)).collect(),
    );
    let compiled = compile_policy(&db, set);
    if !compiled.diagnostics.is_empty() {
        return None;
    }
    let mut bytes = postcard::to_stdvec(&files).ok()?;
    bytes.extend(postcard::to_stdvec(&*compiled.policy).ok()?);
    Some(bytes)
}

/// Makes a blob made by [`encode`] available to every database of the
/// process. The first call wins; later calls return false.
pub fn install(bytes: &'static [u8]) -> bool {
    INSTALLED.set(bytes).is_ok()
}

/// Whether a blob has been installed.
pub fn installed() -> bool {
    INSTALLED.get().is_some()
}

/// The prebuilt policy for exactly these files, if one is installed.
pub(crate) fn lookup<'t>(mut files: impl ExactSizeIterator<Item = (&'t str, &'t str)>) -> Option<Arc<Policy>> {
    let bytes = INSTALLED.get()?;
    let (built, rest): (Vec<(&str, &str)>, &[u8]) = postcard::take_from_bytes(bytes).ok()?;
    if built.len() != files.len() || !built.iter().all(|b| files.next() == Some(*b)) {
        return None;
    }
    // A blob that does not decode (it cannot happen for one this binary
    // built) leaves compilation to the source.
    postcard::from_bytes::<Policy>(rest).ok().map(Arc::new)
}

/// The policy of a blob made by [`encode`], whatever files it was built from.
pub fn decode(bytes: &[u8]) -> Option<Policy> {
    let (_, rest): (Vec<(&str, &str)>, &[u8]) = postcard::take_from_bytes(bytes).ok()?;
    postcard::from_bytes(rest).ok()
}
