//! `grail test`: the fixtures that live next to a policy, in
//! `tests/<rule id>/`, and the coverage they give.
//!
//! A case is `fail.<ext>` (or a folder `fail/`) that must make the rule fire
//! with the outcome it declares (FAIL, or UNKNOWN for a rule that reports
//! missing evidence), and `pass.<ext>` (or `pass/`) that must make it pass.
//! `fail-NAME` pairs with `pass-NAME`. A folder is one deployment: every
//! document in it, except the files another one names through a `ref`. The two
//! twins of a pair must differ in one line: a fixture pair shows what one
//! change does.
//!
//! A folder case binds its documents to layers of trust as `--layer` does,
//! with a file [`LAYERS_FILE`] (`layers.bind`): one `NAME=FILE` per line, FILE
//! relative to the folder, `#` starting a comment. A document it does not
//! name is unbound, as on the command line. The file is not a document, and
//! it counts in the twins' distance like any other file of the case.
//!
//! A folder case states the time of the check that `now()` reads, as `--now`
//! does, with a file [`NOW_FILE`] (`now.bind`): one RFC 3339 date-time, `#`
//! starting a comment. It wins over the time `grail test --now` gives every
//! case; a case with neither reads `now()` as missing evidence (never the
//! machine's clock, so a case's outcome is the same on every run).
//!
//! A folder case gives the parameters of the invocation that `param("name")`
//! reads, as `--probe-evidence-root`, `--egress-hosts` and
//! `--credential-roots` do, with a file [`PARAMS_FILE`] (`params.bind`): one
//! `NAME=VALUE` per line, VALUE read as the flag's value is (split at
//! commas, each entry trimmed). Its `ref` fields resolve in the case's
//! folder, which stands for the evidence root.
//!
//! A fixture is text, so a file of a folder case whose bytes are not UTF-8
//! text (a binary artifact, a file with a stray `0xFF`) is written as
//! `NAME.hex` ([`HEX_SUFFIX`]): the bytes its pairs of hex digits spell,
//! white space and `#` comments aside. It stands for the file `NAME`,
//! wherever `attach.bind` or a `ref` names it, and is never a document.

use std::collections::{BTreeMap, BTreeSet};

use crate::check::{self, Attachment, Input, is_markdown};
use crate::diagnostic::{Finding, Outcome};
use crate::document::{self, Limits, Node, SyntaxError};
use crate::hir::{ClauseDef, Policy};
use crate::layers::{Bound, BoundBy};

/// The suffix of a folder case's file written as hex digits: `report.xml.hex`
/// is the file `report.xml`, with the bytes the digits spell.
pub const HEX_SUFFIX: &str = ".hex";

/// A file's bytes, kept when they are not UTF-8 text.
type Bytes = std::sync::Arc<[u8]>;

/// The bytes a [`HEX_SUFFIX`] file spells: pairs of hex digits, white space
/// and `#` comments aside; `Err` names the first thing that is not a digit.
fn hex_bytes(path: &str, text: &str) -> Result<Vec<u8>, String> {
    let mut digits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for c in line.split('#').next().unwrap_or("").chars().filter(|c| !c.is_whitespace()) {
            let d = c.to_digit(16).ok_or_else(|| format!("{path}:{}: `{c}` is not a hex digit", n + 1))?;
            digits.push(d as u8);
        }
    }
    if digits.len() % 2 == 1 {
        return Err(format!("{path}: an odd number of hex digits; a byte is two"));
    }
    Ok(digits.chunks(2).map(|p| p[0] * 16 + p[1]).collect())
}

/// The file of a folder case that binds its documents to layers.
pub const LAYERS_FILE: &str = "layers.bind";
/// The file of a folder case that attaches files under recorded paths, as
/// `--attach` does: one `RECORDED=FILE` per line (split at the last `=`).
/// The files it names are not documents.
pub const ATTACH_FILE: &str = "attach.bind";
/// The file of a folder case that states the time of the check, as `--now`
/// does: one RFC 3339 date-time. It is not a document.
pub const NOW_FILE: &str = "now.bind";
/// The file of a folder case that gives documents their previous versions,
/// as `--base` does: one `NEW=OLD` per line, both relative to the folder.
/// The previous versions are not documents.
pub const BASE_FILE: &str = "base.bind";
/// The file of a folder case that gives the parameters of the invocation,
/// as `--probe-evidence-root`, `--egress-hosts` and `--credential-roots`
/// do: one `NAME=VALUE` per line. It is not a document.
pub const PARAMS_FILE: &str = "params.bind";

/// A file of the policy's folder: its path relative to the folder, and its text.
pub struct File<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

/// One fixture: a document (or folder of documents) and what it must do to a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub rule: String,
    /// `fail` or `pass`, with its suffix: `fail`, `pass-dup`.
    pub name: String,
    pub fires: bool,
    /// The files of the case: one, or the files of its folder.
    pub files: Vec<String>,
}

/// What running a case showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    pub case: Case,
    /// `None` when the case holds; otherwise what went wrong.
    pub problem: Option<String>,
    /// Every outcome of the case's rule.
    pub outcomes: Vec<Outcome>,
}

/// Per rule: whether some case made it fire and some made it pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub fires: bool,
    pub passes: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestReport {
    pub results: Vec<CaseResult>,
    /// Pairs whose twins differ in more than one line, and folders that name no rule.
    pub problems: Vec<String>,
    pub coverage: BTreeMap<String, Coverage>,
}

impl TestReport {
    pub fn failed(&self) -> usize {
        self.results.iter().filter(|r| r.problem.is_some()).count() + self.problems.len()
    }

    /// Rules without a case that fires them or one that passes them.
    pub fn uncovered(&self) -> Vec<(&str, &Coverage)> {
        self.coverage.iter().filter(|(_, c)| !c.fires || !c.passes).map(|(r, c)| (r.as_str(), c)).collect()
    }
}

/// The outcome a rule's failing fixture must produce: UNKNOWN for a rule
/// that reports missing evidence, FAIL for every other.
pub fn violation_outcome(policy: &Policy, rule: &str) -> Outcome {
    let declares_unknown = policy
        .rules
        .iter()
        .filter(|r| r.id == rule)
        .any(|r| r.clauses.iter().any(|c| matches!(c, ClauseDef::Require { fail: false, .. })));
    if declares_unknown { Outcome::Unknown } else { Outcome::Fail }
}

/// Whether a file or folder name under `tests/<rule>/` names a case.
fn is_case_name(stem: &str) -> bool {
    stem == "fail" || stem == "pass" || stem.starts_with("fail-") || stem.starts_with("pass-")
}

/// The files under `tests/<rule>/` that name no case (`failing.yaml`, a
/// folder `ok/`): never silently left out, each is a problem of the run.
pub fn misnamed(files: &[File<'_>]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for f in files {
        let Some(rest) = f.path.strip_prefix("tests/") else { continue };
        let mut parts = rest.splitn(3, '/');
        let (Some(rule), Some(name)) = (parts.next(), parts.next()) else { continue };
        let folder = parts.next().is_some();
        let stem = if folder { name } else { name.rsplit_once('.').map_or(name, |(stem, _)| stem) };
        if !is_case_name(stem) {
            out.insert(format!("tests/{rule}/{name}{}", if folder { "/" } else { "" }));
        }
    }
    out.into_iter().collect()
}

/// Finds the cases among a policy folder's files.
pub fn discover(files: &[File<'_>]) -> Vec<Case> {
    let mut cases: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for f in files {
        let Some(rest) = f.path.strip_prefix("tests/") else { continue };
        let mut parts = rest.splitn(3, '/');
        let (Some(rule), Some(name)) = (parts.next(), parts.next()) else { continue };
        let inner = parts.next();
        let stem = match inner {
            // tests/<rule>/<case>/<file>: a folder case
            Some(_) => name.to_string(),
            None => match name.rsplit_once('.') {
                Some((stem, _)) => stem.to_string(),
                None => continue,
            },
        };
        if !is_case_name(&stem) {
            continue;
        }
        cases.entry((rule.to_string(), stem)).or_default().push(f.path.to_string());
    }
    cases.into_iter().map(|((rule, name), files)| Case { fires: name.starts_with("fail"), rule, name, files }).collect()
}

/// Runs every case against the policy and measures coverage of `rules`;
/// `now()` reads a case's [`NOW_FILE`], else `now` (nanoseconds since the
/// epoch, see [`check::check_with`]), else is missing evidence.
pub fn run(policy: &Policy, rules: &[String], files: &[File<'_>], now: Option<i128>) -> TestReport {
    let cases = discover(files);
    let mut report = TestReport::default();
    for rule in rules {
        report.coverage.insert(rule.clone(), Coverage::default());
    }
    let known: BTreeSet<&str> = rules.iter().map(String::as_str).collect();
    let mut unknown_rules = BTreeSet::new();
    for case in &cases {
        if !known.contains(case.rule.as_str()) {
            unknown_rules.insert(case.rule.clone());
            continue;
        }
        let findings = match run_case(policy, case, files, now) {
            Ok(findings) => findings,
            Err(problem) => {
                report.results.push(CaseResult { case: case.clone(), problem: Some(problem), outcomes: Vec::new() });
                continue;
            }
        };
        let outcomes: Vec<Outcome> = findings.iter().filter(|f| f.rule == case.rule).map(|f| f.outcome).collect();
        // Coverage counts a rule's own fixture pair only: its `fail` case
        // firing it, its `pass` case passing it. Another rule's fixture that
        // happens to fire it proves nothing of its own twins.
        if let Some(c) = report.coverage.get_mut(&case.rule) {
            let fired = outcomes.iter().any(|o| matches!(o, Outcome::Fail | Outcome::Unknown));
            if case.fires && fired {
                c.fires = true;
            }
            if !case.fires && !fired && outcomes.contains(&Outcome::Pass) {
                c.passes = true;
            }
        }
        let problem = judge(policy, case, &findings);
        report.results.push(CaseResult { case: case.clone(), problem, outcomes });
    }
    for rule in unknown_rules {
        report.problems.push(format!("tests/{rule}/ names no rule of the policy"));
    }
    for path in misnamed(files) {
        report.problems.push(format!(
            "{path} is no case: a case is a file or folder named `fail`, `pass`, `fail-NAME` or `pass-NAME` (the twins of a pair)"
        ));
    }
    for case in cases.iter().filter(|c| c.fires) {
        let twin_name = case.name.replacen("fail", "pass", 1);
        let Some(twin) = cases.iter().find(|c| c.rule == case.rule && c.name == twin_name) else {
            report.problems.push(format!("tests/{}/{}: no twin `{twin_name}`", case.rule, case.name));
            continue;
        };
        let lines = twin_distance(case, twin, files);
        if lines > 1 {
            report.problems.push(format!(
                "tests/{}/{} and {twin_name} differ in {lines} lines; twins differ in one",
                case.rule, case.name
            ));
        }
    }
    report
}

/// Why a case does not hold, if it does not.
fn judge(policy: &Policy, case: &Case, findings: &[Finding]) -> Option<String> {
    let mine: Vec<&Finding> = findings.iter().filter(|f| f.rule == case.rule).collect();
    let describe = || {
        if mine.is_empty() {
            return "no outcome at all".to_string();
        }
        mine.iter()
            .map(|f| {
                let message = if f.message.is_empty() { String::new() } else { format!(": {}", f.message) };
                format!("{} {}{message}", f.outcome.as_str(), f.subject)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    if case.fires {
        let want = violation_outcome(policy, &case.rule);
        if !mine.iter().any(|f| f.outcome == want) {
            return Some(format!("expected {} for {}, got {}", want.as_str(), case.rule, describe()));
        }
    } else if mine.iter().any(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
        || !mine.iter().any(|f| f.outcome == Outcome::Pass)
    {
        return Some(format!("expected {} to pass, got {}", case.rule, describe()));
    }
    None
}

fn file<'a>(files: &'a [File<'a>], path: &str) -> Option<&'a File<'a>> {
    files.iter().find(|f| f.path == path)
}

fn load(f: &File<'_>) -> Option<Result<Node, SyntaxError>> {
    if is_markdown(f.path) {
        return None;
    }
    let format = document::format_for_path(f.path).unwrap_or(document::Format::Yaml);
    Some(document::load(f.text, format, &Limits::default()))
}

/// `a/b/../c` as `a/c`; `None` if it climbs out.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The lines of a folder case's [`LAYERS_FILE`] or [`ATTACH_FILE`]: (name, path of the file of the case).
fn case_bindings(case: &Case, files: &[File<'_>], manifest_name: &str) -> Result<Vec<(String, String)>, String> {
    let Some(manifest) = case.files.iter().find(|p| p.rsplit('/').next() == Some(manifest_name)) else {
        return Ok(Vec::new());
    };
    let folder = manifest.rsplit_once('/').map_or("", |(d, _)| d);
    let text = file(files, manifest).map_or("", |f| f.text);
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let split = if manifest_name == ATTACH_FILE { line.rsplit_once('=') } else { line.split_once('=') };
        let Some((layer, path)) = split.filter(|(l, p)| !l.trim().is_empty() && !p.trim().is_empty()) else {
            let form = if manifest_name == ATTACH_FILE { "RECORDED=FILE" } else { "NAME=FILE" };
            return Err(format!("{manifest}:{}: `{line}` is not `{form}`", n + 1));
        };
        let target = normalise(&format!("{folder}/{}", path.trim())).unwrap_or_default();
        let hex = manifest_name == ATTACH_FILE && case.files.contains(&format!("{target}{HEX_SUFFIX}"));
        if !case.files.contains(&target) && !hex {
            return Err(format!("{manifest}:{}: `{}` is not a file of the case", n + 1, path.trim()));
        }
        out.push((layer.trim().to_string(), target));
    }
    Ok(out)
}

/// The time of the check a folder case states in its [`NOW_FILE`], if it has one.
fn case_now(case: &Case, files: &[File<'_>]) -> Result<Option<i128>, String> {
    let Some(manifest) = case.files.iter().find(|p| p.rsplit('/').next() == Some(NOW_FILE)) else {
        return Ok(None);
    };
    let text = file(files, manifest).map_or("", |f| f.text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(n, l)| (n, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((n, line)) = lines.next() else {
        return Err(format!("{manifest}: states no time; write one RFC 3339 date-time such as `2026-08-11T09:00:00Z`"));
    };
    if let Some((m, _)) = lines.next() {
        return Err(format!("{manifest}:{}: a second time; the file states one", m + 1));
    }
    match crate::time::rfc3339_nanos(line) {
        Some(t) => Ok(Some(t)),
        None => Err(format!(
            "{manifest}:{}: `{line}` is not an RFC 3339 date-time; write one such as `2026-08-11T09:00:00Z`",
            n + 1
        )),
    }
}

/// The parameters a folder case's [`PARAMS_FILE`] gives, if it has one.
fn case_params(case: &Case, files: &[File<'_>]) -> Result<Vec<crate::check::Param>, String> {
    let Some(manifest) = case.files.iter().find(|p| p.rsplit('/').next() == Some(PARAMS_FILE)) else {
        return Ok(Vec::new());
    };
    let text = file(files, manifest).map_or("", |f| f.text);
    let mut out: Vec<crate::check::Param> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once('=').filter(|(n, _)| !n.trim().is_empty()) else {
            return Err(format!("{manifest}:{}: `{line}` is not `NAME=VALUE`", n + 1));
        };
        let name = name.trim();
        if out.iter().any(|p| p.name == name) {
            return Err(format!("{manifest}:{}: `{name}` is given twice", n + 1));
        }
        out.extend(crate::check::Param::from_flag(name, value));
    }
    Ok(out)
}

/// Checks a case's documents as one deployment, with the files they name
/// attached and the layers its [`LAYERS_FILE`] binds, at the time its
/// [`NOW_FILE`] states, else at `now`; `Err` when one of those files is not
/// well formed.
pub fn run_case(policy: &Policy, case: &Case, files: &[File<'_>], now: Option<i128>) -> Result<Vec<Finding>, String> {
    let binds = case_bindings(case, files, LAYERS_FILE)?;
    let given = case_bindings(case, files, ATTACH_FILE)?;
    let bases = case_bindings(case, files, BASE_FILE)?;
    let now = case_now(case, files)?.or(now);
    let params = case_params(case, files)?;
    let members: Vec<&File<'_>> = case
        .files
        .iter()
        .filter(|p| {
            !matches!(p.rsplit('/').next(), Some(LAYERS_FILE | ATTACH_FILE | BASE_FILE | NOW_FILE | PARAMS_FILE))
                && !p.ends_with(HEX_SUFFIX)
        })
        .filter(|p| !given.iter().any(|(_, g)| g == *p))
        .filter(|p| !bases.iter().any(|(_, b)| b == *p))
        .filter_map(|p| file(files, p))
        .collect();
    // The files written as hex digits: (the path they stand for, their text as
    // the command line reads it, their bytes when those are not UTF-8 text).
    let mut spelled: Vec<(String, String, Option<Bytes>)> = Vec::new();
    for p in case.files.iter().filter(|p| p.ends_with(HEX_SUFFIX)) {
        let bytes = hex_bytes(p, file(files, p).map_or("", |f| f.text))?;
        let (text, raw) = match String::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(e.into_bytes().into())),
        };
        spelled.push((p[..p.len() - HEX_SUFFIX.len()].to_string(), text, raw));
    }
    // A file's text and its bytes when they are not UTF-8 text, as written or as spelled.
    let content = |path: &str| -> Option<(&str, Option<Bytes>)> {
        file(files, path)
            .map(|f| (f.text, None))
            .or_else(|| spelled.iter().find(|(p, ..)| p == path).map(|(_, t, r)| (t.as_str(), r.clone())))
    };
    let loaded: Vec<Option<Result<Node, SyntaxError>>> = members.iter().map(|f| load(f)).collect();
    // The files some member names through a `ref` are attachments, not documents.
    let mut named: Vec<(usize, String, String)> = Vec::new();
    for (i, f) in members.iter().enumerate() {
        let input = Input { path: f.path, text: f.text, loaded: loaded[i].as_ref(), given: None, markdown: false };
        let folder = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        for r in check::references(policy, &input) {
            let target = normalise(&format!("{folder}/{r}")).unwrap_or_default();
            named.push((i, r, target));
        }
    }
    let documents: Vec<usize> =
        (0..members.len()).filter(|i| !named.iter().any(|(_, _, t)| t == members[*i].path)).collect();
    let inputs: Vec<Input<'_>> = documents
        .iter()
        .map(|&i| Input {
            path: members[i].path,
            text: members[i].text,
            loaded: loaded[i].as_ref(),
            given: None,
            markdown: false,
        })
        .collect();
    let mut extra: Vec<(String, Result<Node, SyntaxError>)> = Vec::new();
    for (_, _, target) in &named {
        if !extra.iter().any(|(p, _)| p == target)
            && let Some((text, _)) = content(target)
        {
            // An attached file is read as the command line reads it, whatever its name
            // (a Markdown Plan named by a `ref string` too: its text is what counts).
            let format = crate::db::document_format(target, text);
            extra.push((target.clone(), document::load(text, format, &Limits::default())));
        }
    }
    let mut attachments = Vec::new();
    for (from, written, target) in &named {
        let Some(at) = documents.iter().position(|d| d == from) else { continue };
        let read = match check::path_leaves_folder(written) {
            Some(reason) => Err(reason.to_string()),
            None => match extra.iter().position(|(p, _)| p == target) {
                Some(k) => Ok(((inputs.len() + k) as u32, &extra[k].1)),
                None => Err("cannot be read: no such file".to_string()),
            },
        };
        let (text, raw) = match &read {
            Ok(_) => content(target).unwrap_or(("", None)),
            Err(_) => ("", None),
        };
        attachments.push(Attachment { from: at, path: written, read, text: text.into(), raw });
    }
    // The files the case attaches under recorded paths; they are not documents.
    let unread: Result<Node, SyntaxError> =
        Err(SyntaxError { message: "not a document".into(), span: grail_lang::ast::Span::default() });
    for (recorded, target) in &given {
        let (text, raw) = content(target).unwrap_or(("", None));
        attachments.push(Attachment {
            from: check::GIVEN,
            path: recorded,
            read: Ok((u32::MAX, &unread)),
            text: text.into(),
            raw,
        });
    }
    let bindings: Vec<Bound> = binds
        .into_iter()
        .filter_map(|(layer, target)| {
            let input = documents.iter().position(|&d| members[d].path == target)?;
            Some(Bound { input, layer, by: BoundBy::Flag })
        })
        .collect();
    let mut findings =
        check::run_with_params(policy, &inputs, &attachments, &bindings, false, now, &params, false).findings;
    let manifest = case.files.iter().find(|p| p.rsplit('/').next() == Some(BASE_FILE));
    let folder = manifest.and_then(|p| p.rsplit_once('/')).map_or("", |(d, _)| d);
    for (new, old) in &bases {
        let new = normalise(&format!("{folder}/{new}")).unwrap_or_default();
        let Some(i) = inputs.iter().position(|x| x.path == new) else {
            return Err(format!("{BASE_FILE}: `{new}` is not a document of the case"));
        };
        let Some(f) = file(files, old) else { continue };
        let loaded = load(f);
        let previous = Input { path: f.path, text: f.text, loaded: loaded.as_ref(), given: None, markdown: false };
        findings.extend(crate::change::compare(policy, &inputs[i], i, &previous));
    }
    Ok(findings)
}

/// How many lines differ between two twins (files matched by name).
fn twin_distance(a: &Case, b: &Case, files: &[File<'_>]) -> usize {
    let rel = |case: &Case, path: &str| -> String {
        let prefix = format!("tests/{}/{}", case.rule, case.name);
        path.strip_prefix(&prefix).unwrap_or(path).trim_start_matches(['/', '.']).to_string()
    };
    let mut names: BTreeSet<String> = a.files.iter().map(|p| rel(a, p)).collect();
    names.extend(b.files.iter().map(|p| rel(b, p)));
    let text = |case: &Case, name: &str| -> &str {
        case.files.iter().find(|p| rel(case, p) == name).and_then(|p| file(files, p)).map_or("", |f| f.text)
    };
    names.iter().map(|n| differing_lines(text(a, n), text(b, n))).sum()
}

/// How many lines differ between two texts, on the longer side: the lines
/// outside their longest common subsequence (two changed lines far apart are
/// two, not the span between them). Past 4,000 lines between the common
/// first and last lines, the span itself.
pub fn differing_lines(a: &str, b: &str) -> usize {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if a.len().max(b.len()) > 4000 {
        return a.len().max(b.len());
    }
    // The longest common subsequence, one row at a time.
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y { diagonal + 1 } else { above.max(row[j]) };
            diagonal = above;
        }
    }
    let common = row[b.len()];
    (a.len() - common).max(b.len() - common)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twins_one_line_apart() {
        assert_eq!(differing_lines("a\nb\nc\n", "a\nB\nc\n"), 1);
        assert_eq!(differing_lines("a\nc\n", "a\nb\nc\n"), 1);
        assert_eq!(differing_lines("a\nb\nc\n", "x\nb\ny\n"), 2);
        // Two changed lines far apart are two, not the span between them.
        assert_eq!(differing_lines("a\nX\nc\nd\ne\nY\nf\n", "a\nx\nc\nd\ne\ny\nf\n"), 2);
        assert_eq!(differing_lines("a\nb\n", "a\nb\n"), 0);
    }

    #[test]
    fn hex_spells_bytes() {
        assert_eq!(hex_bytes("a.hex", "# a comment\n3c 2f\nFF0a # end\n"), Ok(vec![0x3c, 0x2f, 0xff, 0x0a]));
        assert_eq!(hex_bytes("a.hex", "3c 2"), Err("a.hex: an odd number of hex digits; a byte is two".into()));
        assert_eq!(hex_bytes("a.hex", "\n3g"), Err("a.hex:2: `g` is not a hex digit".into()));
    }

    #[test]
    fn paths_normalise_inside_the_folder() {
        assert_eq!(normalise("tests/r/fail/./probes/../t.json").as_deref(), Some("tests/r/fail/t.json"));
        assert_eq!(normalise("../x"), None);
    }
}
