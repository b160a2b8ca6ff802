//! `grail source`: the text of a policy, printed or written out.
//!
//! The shipped library is built into grail (its source text and fixtures are
//! embedded in the binary), so the paths that findings, `explain` and `doc`
//! name for it are files of grail's own source, not files a user has. This
//! command prints them from the policy the invocation names, shipped or not:
//! the list of its files, a rule's or a declaration's text, a file or the
//! lines around one of its lines; or writes the files and fixtures to a
//! folder that `--policy` reads back as the same policy.

use std::fmt::Write as _;
use std::process::ExitCode;

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use grail_engine::hir::Policy;
use grail_engine::{Database, PolicySet};

use crate::{Fatal, SourceArgs, policy};

/// The lines printed on each side of the line `FILE:LINE` names.
const AROUND: usize = 5;

pub fn run(args: &SourceArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let setup = crate::workspace::Setup::resolve(&args.policy, false)?;
    let (set, compiled) = setup.load(&db)?;
    let files: Vec<File<'_>> = set.files(&db).iter().map(|f| File::new(f.path(&db), f.text(&db))).collect();
    let text = match (&args.out, &args.name) {
        (Some(out), _) => write_out(&db, set, &setup.dirs, out, args.force)?,
        (None, None) => list(&files, &compiled.policy),
        (None, Some(name)) => show(name, &files, &compiled.policy)?,
    };
    crate::write_stdout(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// One policy file: its path as findings print it, its text, its lines.
struct File<'a> {
    path: &'a str,
    text: &'a str,
    lines: Vec<&'a str>,
}

impl<'a> File<'a> {
    fn new(path: &'a str, text: &'a str) -> File<'a> {
        File { path, text, lines: text.lines().collect() }
    }

    /// The file name alone (`escalation.grail`).
    fn name(&self) -> &'a str {
        self.path.rsplit(['/', '\\']).next().unwrap_or(self.path)
    }

    /// The 1-based line of a byte offset.
    fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1
    }

    /// The text of 1-based line `n` (empty past the end).
    fn line(&self, n: usize) -> &'a str {
        n.checked_sub(1).and_then(|i| self.lines.get(i)).copied().unwrap_or("")
    }

    /// Lines `first..=last` with their numbers, `mark` flagged with `>`, under a `path:line` header.
    fn excerpt(&self, out: &mut String, header: usize, first: usize, last: usize, mark: Option<usize>) {
        let _ = writeln!(out, "{}:{header}", self.path);
        let width = last.to_string().len();
        for n in first..=last {
            let flag = if mark == Some(n) { '>' } else { ' ' };
            let _ = writeln!(out, "{flag}{n:>width$} | {}", self.line(n));
        }
    }
}

/// Every file, its length and the rule ids declared in it, one per line.
fn list(files: &[File<'_>], policy: &Policy) -> String {
    let ids = policy.rule_ids();
    let places = policy.rule_locations();
    let width = files.iter().map(|f| f.path.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (i, f) in files.iter().enumerate() {
        let mut mine: Vec<&str> = Vec::new();
        for (id, _) in places.iter().filter(|(_, loc)| loc.file as usize == i) {
            if !mine.contains(id) {
                mine.push(id);
            }
        }
        let rules = if mine.is_empty() { "no rule".to_string() } else { mine.join(", ") };
        let _ = writeln!(out, "{:<width$}  {:>4} lines  {rules}", f.path, f.lines.len());
    }
    let total: usize = files.iter().map(|f| f.lines.len()).sum();
    let _ = writeln!(
        out,
        "{} files, {total} lines, {} rule ids; `grail source NAME` prints a rule, a declaration or a file",
        files.len(),
        ids.len()
    );
    out
}

/// The text NAME stands for: a declaration (a rule by its id, or any item
/// by its name), the clause a structural rule id names, or a file, whole or
/// around `:LINE`.
fn show(name: &str, files: &[File<'_>], policy: &Policy) -> Result<String, Fatal> {
    if let Some((file, line)) = name.rsplit_once(':')
        && let Ok(line) = line.parse::<usize>()
    {
        let f = find_file(file, files)?.ok_or_else(|| unknown_file(file, files))?;
        if line == 0 || line > f.lines.len() {
            return Err(Fatal(format!("`{}` has {} lines; there is no line {line}", f.path, f.lines.len())));
        }
        let mut out = String::new();
        f.excerpt(&mut out, line, line.saturating_sub(AROUND).max(1), (line + AROUND).min(f.lines.len()), Some(line));
        return Ok(out);
    }
    let mut out = String::new();
    // Declarations: a rule by its id, every other item by its name.
    for f in files {
        for item in grail_lang::parse(f.text).file.items {
            if item.name().text != name {
                continue;
            }
            let span = item.span();
            let header = f.line_of(item.name().span.start);
            let mut first = f.line_of(span.start);
            while first > 1 && f.line(first - 1).trim_start().starts_with("///") {
                first -= 1;
            }
            let mut last = f.line_of(span.end.saturating_sub(1)).max(header);
            while last > header && (f.line(last).trim().is_empty() || is_plain_comment(f.line(last))) {
                last -= 1;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            f.excerpt(&mut out, header, first, last, Some(header));
        }
    }
    if !out.is_empty() {
        return Ok(out);
    }
    // A rule id of a structural check: each clause that names it, in its declaration.
    for (_, loc) in policy.rule_locations().into_iter().filter(|(id, _)| *id == name) {
        let Some(f) = files.get(loc.file as usize) else { continue };
        if !out.is_empty() {
            out.push('\n');
        }
        let line = f.line_of(loc.span.start);
        let within = grail_lang::parse(f.text)
            .file
            .items
            .into_iter()
            .find(|i| i.span().start <= loc.span.start && loc.span.start < i.span().end);
        if let Some(item) = within {
            let _ = writeln!(
                out,
                "`{name}` is named by a clause of `{0}` (`grail source {0}` prints it whole)",
                item.name().text
            );
        }
        f.excerpt(&mut out, line, line.saturating_sub(AROUND).max(1), (line + AROUND).min(f.lines.len()), Some(line));
    }
    if !out.is_empty() {
        return Ok(out);
    }
    if let Some(f) = find_file(name, files)? {
        let mut out = String::new();
        f.excerpt(&mut out, 1, 1, f.lines.len().max(1), None);
        return Ok(out);
    }
    Err(unknown(name, files, policy))
}

/// FILE of `FILE:LINE` is no file of the policy's: the nearest file name, if one is near.
fn unknown_file(file: &str, files: &[File<'_>]) -> Fatal {
    let names = files.iter().flat_map(|f| [f.path, f.name()]);
    let near = grail_engine::suggest::did_you_mean(file, names);
    let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
    Fatal(format!("the policy has no file `{file}`{hint}\nhelp: `grail source` lists the policy's files"))
}

/// A `//` comment that is not documentation.
fn is_plain_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//") && !t.starts_with("///")
}

/// The file `name` names: its path as findings print it, or its file name
/// alone when one file of the policy has it.
fn find_file<'f, 'a>(name: &str, files: &'f [File<'a>]) -> Result<Option<&'f File<'a>>, Fatal> {
    if let Some(f) = files.iter().find(|f| f.path == name) {
        return Ok(Some(f));
    }
    let named: Vec<&File<'_>> = files.iter().filter(|f| f.name() == name).collect();
    match named.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        several => Err(Fatal(format!(
            "several policy files are named `{name}`: {}; name one by its path",
            several.iter().map(|f| format!("`{}`", f.path)).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// NAME is nothing of the policy's: the nearest name it has, if one is near.
fn unknown(name: &str, files: &[File<'_>], policy: &Policy) -> Fatal {
    let mut names: Vec<String> = policy.rule_ids().iter().map(|(id, _)| id.to_string()).collect();
    for f in files {
        names.extend(grail_lang::parse(f.text).file.items.iter().map(|i| i.name().text.clone()));
        names.push(f.path.to_string());
        names.push(f.name().to_string());
    }
    let near = grail_engine::suggest::did_you_mean(name, names.iter().map(String::as_str));
    let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
    Fatal(format!(
        "the policy has no rule, declaration or file `{name}`{hint}\nhelp: `grail source` lists the policy's files and rule ids"
    ))
}

/// One file to write: its path under the folder, its text, whether it is a fixture.
struct Out {
    path: Utf8PathBuf,
    text: String,
    fixture: bool,
}

/// `--out DIR`: the policy's files and its fixtures under DIR at the paths
/// they have (relative to the working directory; the shipped library's
/// under `policies/guardrails/`), so that `--policy DIR/FOLDER` for each
/// folder is the same policy with the same fixtures. A file that exists and
/// differs is refused, before anything is written, unless `force`.
fn write_out(
    db: &Database,
    set: PolicySet,
    dirs: &[Utf8PathBuf],
    out: &Utf8Path,
    force: bool,
) -> Result<String, Fatal> {
    let shipped_folder = grail_engine::shipped::FILES
        .first()
        .and_then(|(p, _)| Utf8Path::new(p).parent())
        .unwrap_or(Utf8Path::new("policies/guardrails"))
        .to_owned();
    let mut files: Vec<Out> = Vec::new();
    for f in set.files(db) {
        files.push(Out { path: relative(f.path(db))?, text: f.text(db).clone(), fixture: false });
    }
    let mut folders: Vec<Utf8PathBuf> = Vec::new();
    let named: Vec<Utf8PathBuf> = if dirs.is_empty() { vec![policy::SHIPPED.into()] } else { dirs.to_vec() };
    for dir in &named {
        let (folder, fixtures) = if dir.as_str() == policy::SHIPPED {
            let fixtures =
                grail_engine::shipped::FIXTURES.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
            (shipped_folder.clone(), fixtures)
        } else if dir.is_dir() {
            (relative(dir.as_str())?, crate::test::read_fixtures(dir)?)
        } else {
            (relative(dir.as_str())?, Vec::new())
        };
        for (p, text) in fixtures {
            files.push(Out { path: folder.join(p), text, fixture: true });
        }
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    // One path once: the same text twice (a folder named twice) is one file.
    let mut unique: Vec<Out> = Vec::new();
    for f in files {
        match unique.iter().find(|u| u.path == f.path) {
            Some(u) if u.text == f.text => {}
            Some(_) => return Err(Fatal(format!("two files of the policy would be written to `{}`", f.path))),
            None => unique.push(f),
        }
    }

    let mut same = 0;
    let mut differ = Vec::new();
    let mut todo = Vec::new();
    for f in &unique {
        let target = out.join(&f.path);
        if target.is_dir() {
            return Err(Fatal(format!("`{target}` is a folder; the policy has a file there")));
        }
        match std::fs::read(&target) {
            Ok(bytes) if bytes == f.text.as_bytes() => same += 1,
            Ok(_) => {
                differ.push(target.clone());
                todo.push((target, f));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => todo.push((target, f)),
            Err(e) => {
                return Err(Fatal(format!(
                    "cannot read `{target}`: {}",
                    crate::documents::lower_first(&e.to_string())
                )));
            }
        }
    }
    if !differ.is_empty() && !force {
        let shown: Vec<String> = differ.iter().take(5).map(|p| format!("`{p}`")).collect();
        let more = if differ.len() > 5 { format!(" and {} more", differ.len() - 5) } else { String::new() };
        let one = differ.len() == 1;
        return Err(Fatal(format!(
            "{} file{} under `{out}` differ{} from the policy's: {}{more}; nothing was written\nhelp: `--force` replaces {}",
            differ.len(),
            if one { "" } else { "s" },
            if one { "s" } else { "" },
            shown.join(", "),
            if one { "it" } else { "them" }
        )));
    }
    for (target, f) in &todo {
        let cannot = |e: std::io::Error| {
            Fatal(format!("cannot write `{target}`: {}", crate::documents::lower_first(&e.to_string())))
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(cannot)?;
        }
        std::fs::write(target, &f.text).map_err(cannot)?;
    }

    let policy_files = unique.iter().filter(|f| !f.fixture).count();
    let fixtures = unique.len() - policy_files;
    let mut text = format!(
        "wrote {} of {} files under {out} ({policy_files} policy files, {fixtures} fixture files)",
        todo.len(),
        unique.len()
    );
    if same > 0 {
        let _ = write!(text, "; {same} were already the same");
    }
    if !differ.is_empty() {
        let _ = write!(text, "; {} replaced", differ.len());
    }
    let flags: Vec<String> = folders.iter().map(|f| format!("--policy {}", out.join(f))).collect();
    let _ = writeln!(text, "\nthe same policy and fixtures: {} (grail check, test, explain...)", flags.join(" "));
    Ok(text)
}

/// A path kept as it is under the folder written to: relative, and inside it.
fn relative(path: &str) -> Result<Utf8PathBuf, Fatal> {
    let p = Utf8Path::new(path);
    let inside = p.components().all(|c| matches!(c, Utf8Component::Normal(_) | Utf8Component::CurDir));
    if !inside || p.as_str().is_empty() {
        return Err(Fatal(format!(
            "`{path}` is not a path inside the working directory, so it has no place under `--out`\nhelp: run from a folder above the policy and name it by a relative path"
        )));
    }
    Ok(p.components().filter(|c| !matches!(c, Utf8Component::CurDir)).collect())
}
