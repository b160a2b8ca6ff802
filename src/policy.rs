//! Which policy a command uses: the shipped library, or a folder of `.grail` files.

use std::collections::HashSet;
use std::path::PathBuf;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{Compiled, compile_policy};
use grail_engine::{Database, PolicySet, SourceText};

use crate::Fatal;
use crate::documents::lower_first;
use crate::render;

/// What `--policy shipped` names: the library embedded in grail.
pub const SHIPPED: &str = grail_engine::workspace_file::SHIPPED;

/// Which files of `set` are the shipped library's, by their index in the
/// set: none unless the invocation names the library (no `--policy`, or
/// `--policy shipped`), and then those `load` took from the binary, the
/// ones whose path and text are the library's byte for byte (as
/// `grail_engine::prebuilt` recognises it). A user's file is a file the
/// user can open; the library's is printed by `grail source`.
pub fn shipped_files(db: &Database, set: PolicySet, dirs: &[Utf8PathBuf]) -> Vec<bool> {
    let named = dirs.is_empty() || dirs.iter().any(|d| d.as_str() == SHIPPED);
    set.files(db).iter().map(|f| named && is_library_file(f.path(db), f.text(db))).collect()
}

/// Whether (path, text) is one of the shipped library's files, byte for byte.
pub fn is_library_file(path: &str, text: &str) -> bool {
    grail_engine::shipped::FILES.iter().any(|(p, t)| *p == path && *t == text)
}

/// Puts the policy's files into the database: the shipped library, every
/// `.grail` file under each folder named (or the one `.grail` file), or
/// several of them together (`--policy shipped --policy ours/`). A name
/// declared in two of them is one error, located in both.
pub fn load(db: &Database, dirs: &[Utf8PathBuf]) -> Result<PolicySet, Fatal> {
    if dirs.is_empty() {
        return Ok(PolicySet::new(db, grail_engine::shipped::sources(db)));
    }
    let mut sources = Vec::new();
    let mut read: Vec<(String, String)> = Vec::new();
    let mut seen_shipped = false;
    for dir in dirs {
        if dir.as_str() == SHIPPED {
            if !std::mem::replace(&mut seen_shipped, true) {
                sources.extend(grail_engine::shipped::sources(db));
            }
            continue;
        }
        if !dir.exists() {
            return Err(Fatal(format!(
                "there is no policy folder `{dir}`\nhelp: name a folder of `.grail` files, or `--policy {SHIPPED}` for the shipped library"
            )));
        }
        let mut paths = Vec::new();
        if dir.is_file() {
            paths.push(dir.to_owned());
        } else {
            collect(dir, &mut paths, &mut HashSet::new())?;
        }
        if paths.is_empty() {
            return Err(Fatal(format!("`{dir}` holds no `.grail` file")));
        }
        paths.sort();
        for p in paths {
            if read.iter().any(|(q, _)| *q == p.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&p)
                .map_err(|e| Fatal(format!("cannot read `{p}`: {}", lower_first(&e.to_string()))))?;
            read.push((p.to_string(), text));
        }
    }
    if !read.is_empty() && !seen_shipped {
        crate::cache::read(&read);
    }
    sources.extend(read.into_iter().map(|(path, text)| SourceText::new(db, path, text, None)));
    Ok(PolicySet::new(db, sources))
}

/// The fixtures of the policy (`tests/` of each folder, the shipped
/// library's own for `shipped`), by their path relative to their folder. A
/// case that two folders both hold is refused: one of them would be lost.
pub fn fixtures(dirs: &[Utf8PathBuf]) -> Result<Vec<(String, String)>, Fatal> {
    let shipped = || grail_engine::shipped::FIXTURES.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    if dirs.is_empty() {
        return Ok(shipped());
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for dir in dirs {
        let mine: Vec<(String, String)> =
            if dir.as_str() == SHIPPED { shipped() } else { crate::test::read_fixtures(dir)? };
        for (path, text) in mine {
            if out.iter().any(|(p, _)| *p == path) {
                return Err(Fatal(format!(
                    "the fixture `{path}` is in two of the policy folders (`{dir}` and another); a case belongs to one"
                )));
            }
            out.push((path, text));
        }
    }
    out.sort();
    Ok(out)
}

/// Every `.grail` file under `dir`. A folder reached twice (a symbolic link
/// back up the tree) is read once: a loop of links ends.
fn collect(dir: &Utf8Path, out: &mut Vec<Utf8PathBuf>, seen: &mut HashSet<PathBuf>) -> Result<(), Fatal> {
    let cannot =
        |e: std::io::Error| Fatal(format!("cannot read policy folder `{dir}`: {}", lower_first(&e.to_string())));
    if !seen.insert(dir.as_std_path().canonicalize().map_err(cannot)?) {
        return Ok(());
    }
    let entries = dir.read_dir_utf8().map_err(cannot)?;
    for entry in entries {
        let entry = entry.map_err(cannot)?;
        let path = entry.path();
        if path.is_dir() {
            collect(path, out, seen)?;
        } else if path.extension() == Some("grail") {
            out.push(path.to_owned());
        }
    }
    Ok(())
}

/// Compiles the policy; a policy with errors stops the command (exit 2)
/// after its diagnostics are printed on standard error.
pub fn compile(db: &Database, set: PolicySet) -> Result<&Compiled, Fatal> {
    let compiled = compile_policy(db, set);
    if !compiled.diagnostics.is_empty() {
        eprint!("{}", render::policy_diagnostics(db, set, &compiled.diagnostics));
    }
    if compiled.diagnostics.is_empty() {
        crate::cache::write(db, set, &compiled.policy);
    }
    if compiled.has_errors() {
        let n = compiled.diagnostics.iter().filter(|d| d.severity == grail_engine::Severity::Error).count();
        return Err(Fatal(format!("the policy does not compile ({n} error{})", if n == 1 { "" } else { "s" })));
    }
    Ok(compiled)
}

/// The policy's name, which names the files `compile` writes: the folder of
/// the shipped library's files, or the last component of `--policy DIR`.
pub fn name(db: &Database, set: PolicySet, dirs: &[Utf8PathBuf]) -> String {
    let mine: Vec<&Utf8PathBuf> = dirs.iter().filter(|d| d.as_str() != SHIPPED).collect();
    let folder = match mine.as_slice() {
        [dir] => dir.canonicalize_utf8().ok().and_then(|p| p.file_name().map(str::to_string)),
        [] => set
            .files(db)
            .first()
            .and_then(|f| Utf8Path::new(f.path(db)).parent().and_then(|p| p.file_name()).map(str::to_string)),
        _ => Some("policy".to_string()),
    };
    folder.filter(|n| !n.is_empty()).unwrap_or_else(|| "policy".into())
}
