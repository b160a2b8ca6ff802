//! Agreement with upstream's checker, measured on its own corpus
//! (`tests/data/upstream/`, see its README.md and docs/upstream.md).
//!
//! Per fixture of `oracle.json`: `grail check` with the fixture's arguments,
//! run in `fixtures/security-binding/` as upstream's checker was, compared
//! with what that checker said: the exit status, the finding paths in both
//! directions (core paths, and all paths), and for the fixtures it accepts
//! the verdict lines against the JSON report's `verdicts`. The table prints
//! with `cargo test --test upstream -- --nocapture`.
//!
//! A ratchet, never a skip: `agreement.toml` lists every fixture with what it
//! agrees on today. The test fails when a fixture does worse than listed,
//! and when one does better (so the list stays true); it prints the line to
//! write. `GRAIL_UPSTREAM_UPDATE=1` writes the file from the results,
//! keeping the reasons already written.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

#[allow(dead_code, reason = "these tests read the message maps only")]
mod common;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream")
}

/// A path of a finding in one canonical form: keys joined by `.`, a key
/// quoted (as a JSON string) only when it holds a character outside
/// `[A-Za-z0-9_-]` or is empty, list positions `[n]`, list entries named
/// by their name `["name"]`. Upstream's prose forms map to it: `X key "k"`
/// is `X."k"`, and `A and B` (two entries in conflict) is the later one,
/// `B`, with `A` related (second of the pair). `None` when the text is not
/// a path (a quote left open, a bracket not closed).
fn canonical(path: &str) -> Option<(String, Option<String>)> {
    if let Some((first, second)) = path.split_once(" and ") {
        let (second, _) = canonical(second)?;
        let (first, _) = canonical(first)?;
        return Some((second, Some(first)));
    }
    let path = match path.split_once(" key ") {
        Some((map, key)) => format!("{map}.{key}"),
        None => path.to_string(),
    };
    let mut out = String::new();
    let mut rest = path.as_str();
    let mut first = true;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let close = if inner.starts_with('"') { string_end(inner)? } else { 0 };
            let end = close + inner[close..].find(']')?;
            let entry = &inner[..end];
            if entry.starts_with('"') {
                let name: String = serde_json::from_str(entry).ok()?;
                write!(out, "[{}]", serde_json::to_string(&name).ok()?).ok()?;
            } else {
                write!(out, "[{}]", entry.trim()).ok()?;
            }
            rest = &inner[end + 1..];
            continue;
        }
        if !first {
            rest = rest.strip_prefix('.')?;
        }
        first = false;
        let key = if rest.starts_with('"') {
            let end = string_end(rest)?;
            let key: String = serde_json::from_str(&rest[..end]).ok()?;
            rest = &rest[end..];
            key
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = rest[..end].to_string();
            rest = &rest[end..];
            key
        };
        if !out.is_empty() {
            out.push('.');
        }
        if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            out.push_str(&key);
        } else {
            out.push_str(&serde_json::to_string(&key).ok()?);
        }
    }
    Some((out, None))
}

/// The path of an upstream finding line (without its `- `): the text before
/// its first `:`, with the key its message names where the message is
/// about one key of that object: `binding: required key executor_class
/// missing` is at `executor_class`, `merge_policy: unknown key "C6"` at
/// `merge_policy."C6"`. A finding's path points at the key it is about.
fn key_in_prose(finding: &str) -> String {
    let (prose, message) = finding.split_once(':').unwrap_or((finding, ""));
    let message = message.trim_start();
    let key = if let Some(rest) = message.strip_prefix("unknown key ") {
        rest.get(..string_end(rest).unwrap_or(0)).map(str::to_string).filter(|k| !k.is_empty())
    } else if let Some(rest) = message.strip_prefix("required key ") {
        rest.split_once(' ').map(|(k, _)| serde_json::to_string(k).unwrap_or_default()).filter(|_| prose == "binding")
    } else {
        None
    };
    match key {
        Some(k) if prose == "binding" => k,
        Some(k) => format!("{prose}.{k}"),
        None => prose.to_string(),
    }
}

#[test]
fn a_message_about_one_key_points_at_it() {
    assert_eq!(key_in_prose("binding: required key executor_class missing"), "\"executor_class\"");
    assert_eq!(key_in_prose("merge_policy: unknown key \"C6\" (additionalProperties: false)"), "merge_policy.\"C6\"");
    assert_eq!(key_in_prose("merge_policy.C1: required key missing"), "merge_policy.C1");
    assert_eq!(key_in_prose("admission.rules[2]: disposition \"x\" is more permissive"), "admission.rules[2]");
    assert_eq!(canonical(&key_in_prose("binding: unknown key \"layer\"")).map(|(p, _)| p), Some("layer".to_string()));
}

/// The end (one past the closing quote) of the JSON string `s` starts with.
fn string_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i + 1),
            _ => escaped = false,
        }
    }
    None
}

#[test]
fn paths_are_read_in_one_canonical_form() {
    let c = |p: &str| canonical(p).map(|(p, r)| (p, r.unwrap_or_default()));
    let same = |p: &str, want: &str| assert_eq!(c(p), Some((want.to_string(), String::new())), "{p}");
    same("merge_policy.C1", "merge_policy.C1");
    same("binding", "binding");
    same("escalation_severity_routes key \"critical\"", "escalation_severity_routes.critical");
    same("escalation_severity_routes.\"critical\"", "escalation_severity_routes.critical");
    same("admission.classification.tracker-vcs-event.\"label\"", "admission.classification.tracker-vcs-event.label");
    same(
        "admission.classification.temporal.\"ci-health-review\".run_link_prefix",
        "admission.classification.temporal.ci-health-review.run_link_prefix",
    );
    same(
        "admission.classification.temporal.\"Doc-Freshness-Sweep/advisory\"",
        "admission.classification.temporal.\"Doc-Freshness-Sweep/advisory\"",
    );
    same("a.\"b.c\".\"d e\".\"\"", "a.\"b.c\".\"d e\".\"\"");
    same(
        "verification_topology.C3.roles[\"reviewer-b\"].distinct_model_from",
        "verification_topology.C3.roles[\"reviewer-b\"].distinct_model_from",
    );
    same("verification_topology.C3.roles[1].requires_modality", "verification_topology.C3.roles[1].requires_modality");
    same("isolation_bindings.ci-pool-a.L2", "isolation_bindings.ci-pool-a.L2");
    assert_eq!(
        c("admission.rules[5] and admission.rules[6]"),
        Some(("admission.rules[6]".to_string(), "admission.rules[5]".to_string()))
    );
    assert_eq!(c("a.\"open"), None);
    assert_eq!(c("a[1"), None);
}

/// Where a path belongs: `isolation` under `isolation_bindings` (not built
/// yet: issue 38), else `core`.
fn area(path: &str) -> &'static str {
    let head = path.split(['.', '[']).next().unwrap_or("");
    if head == "isolation_bindings" { "isolation" } else { "core" }
}

#[test]
fn areas_follow_the_first_key() {
    assert_eq!(area("isolation_bindings.ci-pool-a.L2"), "isolation");
    assert_eq!(area("isolation_bindings"), "isolation");
    assert_eq!(area("merge_policy.C2"), "core");
    assert_eq!(area("binding"), "core");
}

/// A fixture of the oracle and what upstream's checker said about it.
struct Fixture {
    name: String,
    args: Vec<String>,
    exit: i32,
    stderr: Vec<String>,
    stdout: Vec<String>,
}

fn fixtures() -> Vec<Fixture> {
    let text = std::fs::read_to_string(corpus().join("oracle.json")).expect("oracle.json is in the corpus");
    let oracle: Value = serde_json::from_str(&text).expect("oracle.json is JSON");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect()
    };
    let mut out: Vec<Fixture> = oracle["fixtures"]
        .as_object()
        .expect("oracle.json has `fixtures`")
        .iter()
        .map(|(name, f)| Fixture {
            name: name.clone(),
            args: strings(&f["args"]),
            exit: f["exit"].as_i64().expect("an exit status") as i32,
            stderr: strings(&f["stderr_lines"]),
            stdout: strings(&f["stdout_lines"]),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// How far one fixture agrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Differs,
    CoreAgrees,
    Agrees,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Differs => "differs",
            State::CoreAgrees => "core-agrees",
            State::Agrees => "agrees",
        }
    }

    fn parse(s: &str) -> Option<State> {
        [State::Differs, State::CoreAgrees, State::Agrees].into_iter().find(|x| x.as_str() == s)
    }
}

/// One fixture compared.
struct Compared {
    name: String,
    exit_agrees: bool,
    grail_exit: i32,
    upstream_exit: i32,
    /// Upstream's paths grail does not report, and grail's upstream does not, with their areas.
    missing: BTreeSet<String>,
    extra: BTreeSet<String>,
    /// For a fixture upstream accepts: whether the verdicts are the same.
    verdicts_agree: Option<bool>,
    /// The rules of grail's FAIL and UNKNOWN findings that have no path.
    pathless: BTreeSet<String>,
    /// The fixture is checked in evaluation mode (`--evidence`).
    evaluation: bool,
    /// Upstream finding lines the message map of docs/upstream.md does not
    /// hold to grail's findings: no row matches, or grail reports the path
    /// with none of the row's rules.
    unmapped: Vec<String>,
}

impl Compared {
    fn core_agrees(&self) -> bool {
        self.missing.iter().chain(&self.extra).all(|p| area(p) != "core")
    }

    fn paths_agree(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty()
    }

    fn state(&self) -> State {
        if self.exit_agrees && self.paths_agree() && self.verdicts_agree != Some(false) {
            State::Agrees
        } else if self.core_agrees() {
            State::CoreAgrees
        } else {
            State::Differs
        }
    }

    /// A first reason, in words, for a fixture that does not agree (the
    /// file's reasons are reviewed by hand; this only seeds new ones).
    fn guessed_reason(&self) -> String {
        let mut why = Vec::new();
        if self.evaluation && self.grail_exit == 2 {
            why.push("evaluation mode (`--evidence`) not built yet");
        }
        if self.pathless.iter().any(|r| r.starts_with("schema.")) {
            why.push("the binding format is grail's own: issue 37");
        }
        if !self.pathless.is_empty() {
            why.push("grail's findings carry no path yet");
        }
        if self.missing.iter().chain(&self.extra).any(|p| area(p) == "isolation") {
            why.push("isolation findings: issue 38");
        }
        if self.verdicts_agree == Some(false) {
            why.push("verdicts not reported yet");
        }
        if why.is_empty() {
            why.push("exit status differs");
        }
        why.join("; ")
    }
}

const GRAIL: &str = env!("CARGO_BIN_EXE_grail");

fn compare(f: &Fixture) -> Compared {
    let dir = corpus().join("fixtures/security-binding");
    let out = Command::new(GRAIL)
        .current_dir(&dir)
        .arg("check")
        .args(&f.args)
        .args(["--format", "json"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run grail on {}: {e}", f.name));
    let grail_exit = out.status.code().unwrap_or(-1);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);

    let mut upstream = BTreeSet::new();
    for line in &f.stderr {
        let Some(finding) = line.strip_prefix("- ") else { continue };
        let prose = key_in_prose(finding);
        let path = canonical(&prose).map_or_else(|| prose.to_string(), |(p, _)| p);
        upstream.insert(path);
    }
    let mut ours = BTreeSet::new();
    let mut pathless = BTreeSet::new();
    let mut rules_at: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for finding in report["findings"].as_array().into_iter().flatten() {
        if !matches!(finding["outcome"].as_str(), Some("fail" | "unknown")) {
            continue;
        }
        match finding["path"].as_str() {
            Some(p) => {
                let p = canonical(p).map_or_else(|| p.to_string(), |(p, _)| p);
                rules_at.entry(p.clone()).or_default().insert(finding["rule"].as_str().unwrap_or("").to_string());
                ours.insert(p);
            }
            None => {
                pathless.insert(finding["rule"].as_str().unwrap_or("").to_string());
                ours.insert("(no path)".to_string());
            }
        }
    }
    let mut unmapped = Vec::new();
    for line in &f.stderr {
        let Some(finding) = line.strip_prefix("- ") else { continue };
        let path = key_in_prose(finding);
        let path = canonical(&path).map_or(path, |(p, _)| p);
        match message_rules(finding) {
            None => unmapped.push(format!("no row of the message map matches `{finding}`")),
            Some(rules) => {
                if let Some(ours) = rules_at.get(&path)
                    && !ours.iter().any(|r| rules.contains(r))
                {
                    unmapped.push(format!("at `{path}` grail reports {ours:?}, the map says {rules:?}: `{finding}`"));
                }
            }
        }
    }
    let verdicts_agree = (f.exit == 0).then(|| {
        let mut want: Vec<&str> = f.stdout.iter().filter_map(|l| l.strip_prefix("- ")).collect();
        let mut have: Vec<&str> = match report["verdicts"].as_array() {
            Some(v) => v.iter().filter_map(Value::as_str).collect(),
            None => return false,
        };
        want.sort_unstable();
        have.sort_unstable();
        want == have
    });
    Compared {
        name: f.name.clone(),
        exit_agrees: grail_exit == f.exit,
        grail_exit,
        upstream_exit: f.exit,
        missing: upstream.difference(&ours).cloned().collect(),
        extra: ours.difference(&upstream).cloned().collect(),
        verdicts_agree,
        pathless,
        evaluation: f.args.iter().any(|a| a == "--evidence"),
        unmapped,
    }
}

/// The message map of docs/upstream.md: the text a message holds, and the
/// rules that report it.
fn message_map() -> &'static [(String, Vec<String>)] {
    static MAP: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    MAP.get_or_init(|| common::message_table("Finding messages and the rules that report them"))
}

/// The rules the message map names for an upstream finding line: the row
/// with the longest text the line holds.
fn message_rules(finding: &str) -> Option<&'static [String]> {
    message_map()
        .iter()
        .filter(|(text, _)| finding.contains(text.as_str()))
        .max_by_key(|(text, _)| text.len())
        .map(|(_, rules)| rules.as_slice())
}

#[test]
fn the_message_map_names_rules_of_the_library() {
    let library = common::library_text();
    let map = message_map();
    assert!(map.len() > 40, "the message map has {} rows", map.len());
    for (text, rules) in map {
        assert!(!rules.is_empty(), "the row `{text}` names no rule");
        for r in rules {
            assert!(
                library.contains(&format!("rule {r}\n")) || library.contains(&format!("rule {r}")),
                "the row `{text}` names `{r}`, which no rule of the library is"
            );
        }
    }
}

/// Every fixture compared, on every core twice over.
fn compare_all(fixtures: &[Fixture]) -> Vec<Compared> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = fixtures.get(i) else { break };
                    let c = compare(f);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push(c);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by(|a, b| a.name.cmp(&b.name));
    results
}

/// The family of a fixture: its name up to the first `-` (the manifest has no grouping).
fn family(name: &str) -> &str {
    name.split(['-', '.']).next().unwrap_or(name)
}

fn table(results: &[Compared]) -> String {
    let mut rows: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for c in results {
        let row = rows.entry(family(&c.name)).or_default();
        row[0] += 1;
        row[1] += usize::from(c.exit_agrees);
        row[2] += usize::from(c.core_agrees());
        row[3] += usize::from(c.state() == State::Agrees);
    }
    let mut text = String::new();
    let _ = writeln!(text, "{:<12} {:>8} {:>6} {:>10} {:>6}", "family", "fixtures", "exit", "core paths", "full");
    let mut total = [0usize; 4];
    for (family, row) in &rows {
        let _ = writeln!(text, "{family:<12} {:>8} {:>6} {:>10} {:>6}", row[0], row[1], row[2], row[3]);
        for (t, r) in total.iter_mut().zip(row) {
            *t += r;
        }
    }
    let _ = writeln!(text, "{:<12} {:>8} {:>6} {:>10} {:>6}", "total", total[0], total[1], total[2], total[3]);
    text
}

/// What `agreement.toml` lists for one fixture.
struct Listed {
    exit: bool,
    state: State,
    reason: String,
    divergence: Option<String>,
}

fn ratchet_path() -> PathBuf {
    corpus().join("agreement.toml")
}

fn listed() -> BTreeMap<String, Listed> {
    let Ok(text) = std::fs::read_to_string(ratchet_path()) else { return BTreeMap::new() };
    let file: toml::Table = toml::from_str(&text).expect("agreement.toml is TOML");
    let mut out = BTreeMap::new();
    for (name, entry) in file.get("fixtures").and_then(|f| f.as_table()).into_iter().flatten() {
        let text = |k: &str| entry.get(k).and_then(|v| v.as_str()).map(String::from);
        let state = text("state").and_then(|s| State::parse(&s));
        let state = state.unwrap_or_else(|| panic!("agreement.toml: `{name}` has no valid `state`"));
        let exit = entry.get("exit").and_then(|v| v.as_bool());
        let exit = exit.unwrap_or_else(|| panic!("agreement.toml: `{name}` has no `exit` (true or false)"));
        out.insert(
            name.clone(),
            Listed { exit, state, reason: text("reason").unwrap_or_default(), divergence: text("divergence") },
        );
    }
    out
}

/// One line of `agreement.toml`.
fn line(name: &str, exit: bool, state: State, reason: &str, divergence: Option<&str>) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut l = format!("{} = {{ exit = {exit}, state = {}", q(name), q(state.as_str()));
    if state != State::Agrees || !reason.is_empty() {
        let _ = write!(l, ", reason = {}", q(reason));
    }
    if let Some(d) = divergence {
        let _ = write!(l, ", divergence = {}", q(d));
    }
    l.push_str(" }");
    l
}

const HEADER: &str = "\
# What grail agrees on with upstream's checker, per fixture of oracle.json
# (see docs/upstream.md). `exit`: the exit status is the same; `state`:
# `agrees` (exit status, every finding path both ways, and the verdicts of a
# fixture upstream accepts), `core-agrees` (the finding paths outside
# `isolation_bindings`, both ways), or `differs`. Each fixture that does not
# agree says why in `reason`; a fixture where grail refuses on purpose what
# upstream accepts names the divergence of docs/upstream.md in `divergence`.
# tests/upstream.rs fails when a fixture does worse or better than listed.
# GRAIL_UPSTREAM_UPDATE=1 cargo test --test upstream rewrites this file from
# the results, keeping the reasons written; review it after.

[fixtures]
";

#[test]
fn grail_agrees_with_upstream_as_listed() {
    let started = std::time::Instant::now();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 185, "the oracle holds {} fixtures", fixtures.len());
    let results = compare_all(&fixtures);
    let elapsed = started.elapsed();
    println!("{}", table(&results));
    println!("{} fixtures in {:.1} s", results.len(), elapsed.as_secs_f64());

    let listed = listed();
    if std::env::var_os("GRAIL_UPSTREAM_UPDATE").is_some() {
        let mut text = HEADER.to_string();
        for c in &results {
            let old = listed.get(&c.name);
            let state = c.state();
            let reason = match old {
                Some(l) if !l.reason.is_empty() && state != State::Agrees => l.reason.clone(),
                _ if state == State::Agrees => String::new(),
                _ => c.guessed_reason(),
            };
            let divergence = old.and_then(|l| l.divergence.as_deref());
            text.push_str(&line(&c.name, c.exit_agrees, state, &reason, divergence));
            text.push('\n');
        }
        std::fs::write(ratchet_path(), text).expect("agreement.toml written");
        println!("wrote {}", ratchet_path().display());
        return;
    }

    let mut wrong = Vec::new();
    for c in &results {
        let state = c.state();
        let Some(l) = listed.get(&c.name) else {
            wrong.push(format!(
                "{} is not listed; add:\n  {}",
                c.name,
                line(&c.name, c.exit_agrees, state, &c.guessed_reason(), None)
            ));
            continue;
        };
        let detail = || {
            format!(
                "  exit: grail {} (upstream {})\n  upstream only: {:?}\n  grail only: {:?}\n  verdicts agree: {:?}",
                c.grail_exit, c.upstream_exit, c.missing, c.extra, c.verdicts_agree
            )
        };
        let now = line(&c.name, c.exit_agrees, state, &l.reason, l.divergence.as_deref());
        if state < l.state || (l.exit && !c.exit_agrees) {
            wrong.push(format!(
                "{} does worse than listed (listed exit {} state {}):\n{}",
                c.name,
                l.exit,
                l.state.as_str(),
                detail()
            ));
        } else if state > l.state || (!l.exit && c.exit_agrees) {
            let reason = if state == State::Agrees { "" } else { &l.reason };
            wrong.push(format!(
                "{} does better than listed: write in agreement.toml\n  {}",
                c.name,
                line(&c.name, c.exit_agrees, state, reason, l.divergence.as_deref())
            ));
        } else if state != State::Agrees && l.reason.trim().is_empty() {
            wrong.push(format!("{} does not agree and says not why: write a reason\n  {now}", c.name));
        }
    }
    for name in listed.keys() {
        if !results.iter().any(|c| c.name == *name) {
            wrong.push(format!("{name} is listed in agreement.toml but is no fixture of the oracle"));
        }
    }
    // The message map of docs/upstream.md holds for every finding line.
    for c in &results {
        wrong.extend(c.unmapped.iter().map(|u| format!("{}: {u}", c.name)));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
