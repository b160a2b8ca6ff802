//! Reading the documents a command names, and the files their `ref` fields
//! name: the rules of `grail_workspace`, which the language server shares.

use camino::Utf8Path;
use grail_engine::db::AttachedFile;
use grail_engine::{Database, PolicySet, SourceText};

use crate::Fatal;

/// The default of `--max-document-size` (and the size commands without the
/// flag read up to): 16 MiB.
pub const DEFAULT_MAX_DOCUMENT_SIZE: u64 = grail_workspace::DEFAULT_MAX_DOCUMENT_SIZE;

/// Reads a document named on the command line, at most `limit` bytes of it:
/// a larger file (or an endless stream such as `/dev/zero`) becomes a
/// document that is too large, which the check reports as a finding.
/// Symbolic links are followed, as by any reader. One that cannot be read
/// stops the command.
pub fn read_document(db: &Database, path: &Utf8Path, limit: u64) -> Result<SourceText, Fatal> {
    grail_workspace::read_document(db, path.as_std_path(), path.to_string(), limit).map_err(Fatal)
}

/// Reads the files the documents' `ref` fields name. A path is followed only
/// inside its document's folder, symbolic links included; anything else is
/// refused with the reason, which the rules see as missing evidence.
pub fn attachments(db: &Database, set: PolicySet, documents: &[SourceText]) -> Vec<AttachedFile> {
    grail_workspace::attachments(db, set, documents, &|p| p.into())
}

/// `No such file or directory (os error 2)` reads `no such file or directory (os error 2)`.
pub fn lower_first(s: &str) -> String {
    grail_workspace::lower_first(s)
}
