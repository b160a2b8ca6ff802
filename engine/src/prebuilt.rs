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

use std::sync::{Arc, OnceLock, RwLock};

use crate::db::{PolicySet, SourceText, compile_policy};
use crate::hir::Policy;

static INSTALLED: OnceLock<&'static [u8]> = OnceLock::new();

/// Blobs read from the policy cache (`grail --policy DIR`), beside the shipped one.
static CACHED: RwLock<Vec<&'static [u8]>> = RwLock::new(Vec::new());

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
    encode_compiled(files, &compiled.policy)
}

/// The blob of a policy already compiled from `files` (path, text), as
/// [`encode`] makes it; the caller vouches that compiling `files` gave
/// `policy` with no diagnostic.
pub fn encode_compiled(files: &[(&str, &str)], policy: &Policy) -> Option<Vec<u8>> {
    let mut bytes = postcard::to_stdvec(&files).ok()?;
    bytes.extend(postcard::to_stdvec(policy).ok()?);
    Some(bytes)
}

/// Whether `bytes` is a whole blob for exactly these files: their paths and
/// texts, byte for byte, then a policy that decodes with nothing left over.
/// A truncated or corrupt blob, or one of other files, is not.
pub fn holds(bytes: &[u8], files: &[(&str, &str)]) -> bool {
    let Ok((built, rest)) = postcard::take_from_bytes::<Vec<(&str, &str)>>(bytes) else { return false };
    built.as_slice() == files && matches!(postcard::take_from_bytes::<Policy>(rest), Ok((_, [])))
}

/// Makes a blob read from the policy cache available to every database of
/// the process, beside the shipped one. The caller checks it first
/// ([`holds`]); [`lookup`] compares the files again before using it.
pub fn install_cached(bytes: Vec<u8>) {
    if let Ok(mut cached) = CACHED.write() {
        cached.push(Box::leak(bytes.into_boxed_slice()));
    }
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
pub(crate) fn lookup<'t>(files: impl ExactSizeIterator<Item = (&'t str, &'t str)> + Clone) -> Option<Arc<Policy>> {
    let cached = CACHED.read().map(|c| c.clone()).unwrap_or_default();
    INSTALLED.get().into_iter().chain(cached.iter()).find_map(|bytes| lookup_in(bytes, files.clone()))
}

/// A file of the blob's copy of the library: its path and text, as bytes.
type FileBytes<'b> = (&'b [u8], &'b [u8]);

fn lookup_in<'t>(
    bytes: &'static [u8],
    mut files: impl ExactSizeIterator<Item = (&'t str, &'t str)>,
) -> Option<Arc<Policy>> {
    // Compared as bytes: the files are text already, so the blob's copy need
    // not be validated as UTF-8 first (postcard writes a string as its bytes).
    let (built, rest): (Vec<FileBytes<'_>>, &[u8]) = postcard::take_from_bytes(bytes).ok()?;
    if built.len() != files.len()
        || !built.iter().all(|b| files.next().is_some_and(|(p, t)| (p.as_bytes(), t.as_bytes()) == *b))
    {
        return None;
    }
    // A blob that does not decode (it cannot happen for one this binary
    // built, nor for a cached one that [`holds`] accepted) leaves
    // compilation to the source. The blob lives as long as the process, so
    // the rules' clauses are not copied out of it.
    crate::hir::read_lasting::<Policy>(rest).ok().map(Arc::new)
}

/// The policy of a blob made by [`encode`], whatever files it was built from.
pub fn decode(bytes: &[u8]) -> Option<Policy> {
    let (_, rest): (Vec<(&str, &str)>, &[u8]) = postcard::take_from_bytes(bytes).ok()?;
    postcard::from_bytes(rest).ok()
}
