//! `grail fmt`: policy files in the style of the shipped library
//! (`grail_lang::format`).

use std::io::Write as _;

use grail_engine::workspace_file::lower_first;
use std::fmt::Write as _;
use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};

use crate::{Fatal, FmtArgs, render};

pub fn run(args: &FmtArgs) -> Result<ExitCode, Fatal> {
    let files = collect(&args.files)?;
    let mut stdout = std::io::stdout().lock();
    let mut changed = 0;
    let mut failed = 0;
    for path in &files {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: cannot read `{path}`: {}", lower_first(&e.to_string()));
                failed += 1;
                continue;
            }
        };
        let formatted = match grail_lang::format(&text) {
            Ok(formatted) => formatted,
            Err(errors) => {
                eprint!("{}", render::syntax_errors(path.as_str(), &text, &errors));
                failed += 1;
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        changed += 1;
        let report = if args.check {
            diff(path, &text, &formatted)
        } else if let Err(e) = std::fs::write(path, &formatted) {
            eprintln!("error: cannot write `{path}`: {}", lower_first(&e.to_string()));
            failed += 1;
            continue;
        } else {
            format!("{path}\n")
        };
        crate::write_stdout(&mut stdout, report.as_bytes())?;
    }
    let _ = stdout.flush();
    if failed > 0 {
        return Err(Fatal(if failed == 1 {
            "1 file is left as it was: it cannot be read or does not parse".to_string()
        } else {
            format!("{failed} files are left as they were: they cannot be read or do not parse")
        }));
    }
    if args.check && changed > 0 {
        let files = if changed == 1 { "1 file" } else { &format!("{changed} files") };
        eprintln!("{files} would be reformatted (run `grail fmt` without --check)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The files named, a folder standing for every `.grail` file under it.
fn collect(paths: &[Utf8PathBuf]) -> Result<Vec<Utf8PathBuf>, Fatal> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found)?;
            if found.is_empty() {
                // As ruff does: said, not an error (a folder of no policy has nothing to misformat).
                eprintln!("warning: no .grail file under `{path}`: nothing to format");
            }
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(Fatal(format!("cannot format `{path}`: no such file or folder")));
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    Ok(files)
}

fn walk(dir: &Utf8Path, out: &mut Vec<Utf8PathBuf>) -> Result<(), Fatal> {
    let entries = dir.read_dir_utf8().map_err(|e| Fatal(format!("cannot read folder `{dir}`: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| Fatal(format!("cannot read folder `{dir}`: {e}")))?;
        let path = entry.path();
        if path.is_dir() {
            walk(path, out)?;
        } else if path.extension() == Some("grail") {
            out.push(path.to_owned());
        }
    }
    Ok(())
}

/// The changed lines of `before` and `after` as a unified diff, three lines
/// of context around each change.
fn diff(path: &Utf8Path, before: &str, after: &str) -> String {
    const CONTEXT: usize = 3;
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let edits = edits(&old, &new);
    let mut out = format!("--- {path}\n+++ {path} (formatted)\n");
    let mut i = 0;
    while i < edits.len() {
        if edits[i].0 == ' ' {
            i += 1;
            continue;
        }
        // A hunk: from CONTEXT lines before this change to CONTEXT lines after
        // the last change that is at most 2 * CONTEXT lines further on.
        let start = i.saturating_sub(CONTEXT);
        let mut end = i;
        let mut quiet = 0;
        let mut j = i;
        while j < edits.len() && quiet <= 2 * CONTEXT {
            if edits[j].0 == ' ' {
                quiet += 1;
            } else {
                quiet = 0;
                end = j + 1;
            }
            j += 1;
        }
        let end = (end + CONTEXT).min(edits.len());
        let hunk = &edits[start..end];
        let old_start = edits[..start].iter().filter(|e| e.0 != '+').count() + 1;
        let new_start = edits[..start].iter().filter(|e| e.0 != '-').count() + 1;
        let old_len = hunk.iter().filter(|e| e.0 != '+').count();
        let new_len = hunk.iter().filter(|e| e.0 != '-').count();
        let _ = writeln!(out, "@@ -{old_start},{old_len} +{new_start},{new_len} @@");
        for (mark, line) in hunk {
            let _ = writeln!(out, "{mark}{line}");
        }
        i = end;
    }
    out
}

/// The shortest edit script from `old` to `new`: each line kept (` `),
/// removed (`-`) or added (`+`), by longest common subsequence.
fn edits<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(char, &'a str)> {
    // Common lines at both ends need no table.
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut out: Vec<(char, &str)> = old[..head].iter().map(|l| (' ', *l)).collect();
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        // Too large to align line by line: all out, all in.
        out.extend(a.iter().map(|l| ('-', *l)));
        out.extend(b.iter().map(|l| ('+', *l)));
    } else {
        // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
        let width = b.len() + 1;
        let mut lcs = vec![0u32; (a.len() + 1) * width];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * width + j] = if a[i] == b[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                out.push((' ', a[i]));
                (i, j) = (i + 1, j + 1);
            } else if i < a.len() && (j == b.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
                out.push(('-', a[i]));
                i += 1;
            } else {
                out.push(('+', b[j]));
                j += 1;
            }
        }
    }
    out.extend(old[old.len() - tail..].iter().map(|l| (' ', *l)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_the_changed_lines_with_context() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
        insta::assert_snapshot!(diff(Utf8Path::new("x.grail"), before, after), @r"
        --- x.grail
        +++ x.grail (formatted)
        @@ -2,9 +2,10 @@
         b
         c
         d
        -e
        +E
         f
         g
         h
         i
         j
        +k
        ");
    }

    #[test]
    fn distant_changes_are_separate_hunks() {
        let before: String = (0..30).map(|i| format!("l{i}\n")).collect();
        let after = before.replace("l3\n", "three\n").replace("l25\n", "twenty-five\n");
        let out = diff(Utf8Path::new("x.grail"), &before, &after);
        assert_eq!(out.matches("@@ -").count(), 2, "{out}");
        assert!(out.contains("@@ -1,7 +1,7 @@"), "{out}");
        assert!(out.contains("@@ -23,7 +23,7 @@"), "{out}");
    }
}
