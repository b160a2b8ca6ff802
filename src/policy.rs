//! Which policy a command uses: the shipped library, or a folder of `.grail` files.

use std::collections::HashSet;
use std::path::PathBuf;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{Compiled, compile_policy};
use grail_engine::{Database, PolicySet, SourceText};

use crate::Fatal;
use crate::documents::lower_first;
use crate::render;

/// Puts the policy's files into the database: the shipped library, every
/// `.grail` file under a folder, or one `.grail` file.
pub fn load(db: &Database, dir: Option<&Utf8Path>) -> Result<PolicySet, Fatal> {
    let files = match dir {
        None => grail_engine::shipped::sources(db),
        Some(dir) => {
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
            let mut files = Vec::new();
            for p in paths {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| Fatal(format!("cannot read `{p}`: {}", lower_first(&e.to_string()))))?;
                files.push((p.to_string(), text));
            }
            crate::cache::read(&files);
            files.into_iter().map(|(path, text)| SourceText::new(db, path, text, None)).collect()
        }
    };
    Ok(PolicySet::new(db, files))
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
pub fn name(db: &Database, set: PolicySet, dir: Option<&Utf8Path>) -> String {
    let folder = match dir {
        Some(dir) => dir.canonicalize_utf8().ok().and_then(|p| p.file_name().map(str::to_string)),
        None => set
            .files(db)
            .first()
            .and_then(|f| Utf8Path::new(f.path(db)).parent().and_then(|p| p.file_name()).map(str::to_string)),
    };
    folder.filter(|n| !n.is_empty()).unwrap_or_else(|| "policy".into())
}
