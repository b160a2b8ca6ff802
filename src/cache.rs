//! The policy cache: a `--policy DIR` compiled once and reused across runs.
//!
//! A policy compiled from source without any diagnostic is written as a blob
//! in the shipped library's format (`grail_engine::prebuilt`: the exact paths
//! and texts it was compiled from, then the lowered policy, in postcard) to
//! `<cache>/<key>.policy`, followed by the blob's own SHA-256, where the key is a SHA-256 of grail's version, the
//! shipped blob (which changes with the lowered policy's layout) and every
//! path and byte of the policy's files. The folder is `$GRAIL_CACHE_DIR`,
//! else `$XDG_CACHE_HOME/grail`, else `~/.cache/grail`; `--no-cache` (or an
//! empty `GRAIL_CACHE_DIR`) neither reads nor writes it.
//!
//! A cached blob is never trusted blindly: it is used only when its digest
//! matches (any corrupted byte), it decodes whole and it holds, byte for byte, the files being compiled
//! (`prebuilt::holds`, and `prebuilt::lookup` compares them again), so a
//! changed byte, a collision, a truncated or corrupt file all compile from
//! source, and the blob is written again. Failing to read or write the cache
//! is never an error: it only costs the compilation.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use grail_engine::hir::Policy;
use grail_engine::{Database, PolicySet};
use sha2::{Digest as _, Sha256};

/// Set by `--no-cache`.
static DISABLED: AtomicBool = AtomicBool::new(false);

/// The blob a compilation should write: set by [`read`] when the cache had
/// none usable for the policy.
static MISSED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// `--no-cache`: neither read nor write the cache.
pub fn disable() {
    DISABLED.store(true, Ordering::Relaxed);
}

/// The cache folder, or `None` when caching is off.
fn folder() -> Option<PathBuf> {
    if DISABLED.load(Ordering::Relaxed) {
        return None;
    }
    let var = |name: &str| std::env::var_os(name);
    if let Some(dir) = var("GRAIL_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("grail"));
    }
    var("HOME").filter(|d| !d.is_empty()).map(|home| PathBuf::from(home).join(".cache").join("grail"))
}

/// The key of a policy: grail's version, the shipped blob, then every
/// file's path and text, each prefixed by its length so that no two
/// different sets of files give the same stream.
pub fn key(files: &[(&str, &str)]) -> String {
    let mut hash = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    part(env!("CARGO_PKG_VERSION").as_bytes());
    part(crate::SHIPPED_POLICY);
    part(&(files.len() as u64).to_le_bytes());
    for (path, text) in files {
        part(path.as_bytes());
        part(text.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Looks the policy's files up in the cache; a blob that holds exactly them
/// is installed for `compile_policy`, else the compilation will write one.
pub fn read(files: &[(String, String)]) {
    let Some(dir) = folder() else { return };
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let path = dir.join(format!("{}.policy", key(&files)));
    match std::fs::read(&path).ok().and_then(unseal) {
        Some(blob) if grail_engine::prebuilt::holds(&blob, &files) => grail_engine::prebuilt::install_cached(blob),
        _ => {
            if let Ok(mut missed) = MISSED.lock() {
                *missed = Some(path);
            }
        }
    }
}

/// The blob of a cache file: the file is the blob, then the SHA-256 of the
/// blob, so that a corrupted byte anywhere (even one that would still decode
/// as some policy) is refused.
fn unseal(mut bytes: Vec<u8>) -> Option<Vec<u8>> {
    let at = bytes.len().checked_sub(32)?;
    let (blob, digest) = bytes.split_at(at);
    if Sha256::digest(blob).as_slice() != digest {
        return None;
    }
    bytes.truncate(at);
    Some(bytes)
}

/// After a compilation without diagnostics: writes the blob [`read`] did not
/// find (to a temporary file, then renamed, so a reader never sees half of one).
pub fn write(db: &Database, set: PolicySet, policy: &Policy) {
    let Some(path) = MISSED.lock().ok().and_then(|mut m| m.take()) else { return };
    let files: Vec<(&str, &str)> = set.files(db).iter().map(|f| (f.path(db).as_str(), f.text(db).as_str())).collect();
    let Some(mut bytes) = grail_engine::prebuilt::encode_compiled(&files, policy) else { return };
    let digest = Sha256::digest(&bytes);
    bytes.extend_from_slice(&digest);
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("policy"),
        std::process::id()
    ));
    if std::fs::write(&temporary, &bytes).is_ok() && std::fs::rename(&temporary, &path).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}
