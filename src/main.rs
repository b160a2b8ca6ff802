//! `grail`: check, explain, test and compile guardrail bindings against
//! policies written in grail; format those policies.
//!
//! This is the only place that picks an output format or exits the process.

use std::io::Write as _;
use std::process::ExitCode;

use camino::Utf8PathBuf;
use clap::{Parser, Subcommand, ValueEnum};

mod analyze;
mod check;
mod compile;
mod documents;
mod explain;
mod fmt;
mod policy;
mod render;
mod sarif;
mod test;

/// grail states and checks the guardrails of autonomous software delivery.
///
/// Rules live in policies written in the grail language; the shipped
/// guardrail library is built in and used unless `--policy` names another.
/// Every finding names its rule, its subject and the line it points at.
#[derive(Parser)]
#[command(name = "grail", version, long_version = LONG_VERSION, about, long_about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check documents (bindings) against the guardrail rules.
    ///
    /// Every rule reports, per subject, PASS, FAIL, UNKNOWN (missing evidence)
    /// or NOT APPLICABLE. Exit status: 0 when nothing FAILs (UNKNOWN allowed
    /// unless --deny-unknown), 1 when something FAILs, 2 when the check could
    /// not run (bad arguments, an unreadable file, a policy that does not
    /// compile). A document that is not well-formed JSON or YAML is a finding
    /// (exit 1), with its line and column.
    ///
    /// Examples:
    ///   grail check examples/org/security.yaml
    ///   grail check --format json examples/bindings/*.yaml --each
    ///   grail check --policy my-policies/ binding.json
    ///   grail check                 # the deployments of grail.toml
    #[command(verbatim_doc_comment)]
    Check(CheckArgs),
    /// Run the fixture pairs that live next to the policy, in `tests/<rule id>/`.
    ///
    /// `fail.*` (or a folder `fail/` checked as one deployment) must make the
    /// rule fire with the outcome it declares; `pass.*` must make it pass; the
    /// twins must differ in one line. Prints one line per failing case and a
    /// closing `N passed, M failed`. Exit status: 0 when every case holds (and,
    /// with --coverage, every rule is both fired and passed by some case),
    /// 1 otherwise, 2 when the policy does not compile.
    ///
    /// Examples:
    ///   grail test --coverage
    ///   grail test --policy my-policies/ --verbose
    #[command(verbatim_doc_comment)]
    Test(TestArgs),
    /// Explain a check: each finding with its derivation, and the effective state.
    ///
    /// For every FAIL and UNKNOWN (or the rule named with --rule), the clauses
    /// the rule went through, the values they read and where each came from
    /// (file:line and layer, or the shipped policy). Then the effective value
    /// of every cell of the classes involved: where it was set, the floor or
    /// ceiling that bounds it, lower-layer values refused, and a value demoted
    /// to the shipped one because a gate failed. For a passing binding it says
    /// what was established and what remains UNKNOWN.
    ///
    /// Examples:
    ///   grail explain examples/bindings/auto-merge-demoted.yaml
    ///   grail explain --class C4 examples/bindings/identical-checkers.yaml
    ///   grail explain --rule topology.checker_count --verbose org.yaml
    #[command(verbatim_doc_comment)]
    Explain(ExplainArgs),
    /// Format policy files (`.grail`) in the style of the shipped library.
    ///
    /// Rewrites each file in place when formatting changes it and prints the
    /// paths it changed. Formatting never changes what a policy means and
    /// keeps every comment. A folder stands for every `.grail` file under it.
    /// A file that does not parse is left as it is, and its errors are printed.
    /// Exit status: 0 when done (with --check: when every file is formatted),
    /// 1 with --check when a file would change, 2 when a file does not parse
    /// or cannot be read or written.
    ///
    /// Examples:
    ///   grail fmt policies/
    ///   grail fmt --check policies/guardrails/matrix.grail
    ///   grail fmt --check policies examples
    #[command(verbatim_doc_comment)]
    Fmt(FmtArgs),
    /// Compile for tools that do not run grail: Cedar, the rules as JSON, JSON Schema.
    ///
    /// --target cedar: the deployment named by FILE... (read as `grail check`
    /// reads it) is checked first; if the check fails, its report is printed
    /// on standard error, nothing is written and the exit status is 1.
    /// Otherwise writes NAME.cedarschema, NAME.cedar (one permit per admission
    /// answer grail allows; Cedar denies the rest) and entities.json, where
    /// NAME is the policy's folder name (`guardrails` for the shipped library).
    /// --target json: the lowered rules as versioned JSON (NAME.ir.json, see
    /// docs/ir.md). --target jsonschema: a JSON Schema (draft 2020-12) per
    /// document kind (KIND.schema.json). The output is the same, byte for
    /// byte, for the same inputs; the files written are listed on standard
    /// output. Exit status: 0 written, 1 refused, 2 could not run.
    ///
    /// Examples:
    ///   grail compile --target cedar --out build/cedar examples/bindings/good.yaml
    ///   grail compile --target cedar --out build/cedar org/security.yaml org/operator.yaml org/repo.yaml
    ///   grail compile --target json --out build/ir
    ///   grail compile --target jsonschema --out .schemas
    #[command(verbatim_doc_comment)]
    Compile(CompileArgs),
    /// Serve the Language Server Protocol on standard input and output.
    ///
    /// Diagnostics, hovers, definitions, references, completion and fixes for
    /// policy files (`.grail`) and the documents they check (`.json`, `.yaml`,
    /// `.yml`, and Markdown work items), and formatting of policy files. The
    /// policy is the workspace's `.grail` files if it has any, otherwise the
    /// shipped library. See README.md to attach an editor.
    Lsp,
    /// Prove the policy: a witness per subject, conflicts, dead rules, fixture pairs, lints.
    ///
    /// Encodes the rules over bounded symbolic documents and asks a SAT solver
    /// (BatSat, through rustsat): for each subject (each document kind, each
    /// key of the maps rules iterate over) a document satisfying every rule,
    /// printed as YAML and confirmed by the checker; when there is none, the
    /// smallest set of rules, floors and types that conflict, every member
    /// with its span; for each rule, a document that fires it (or why none
    /// can: a dead rule) and a passing twin that differs as little as
    /// possible. Lints (warnings): vacuous-every, entries-count,
    /// never-applies, unnormalised-compare. Exit status: 0 when every subject
    /// is satisfiable and no rule is dead, 1 on a conflict or a dead rule,
    /// 2 when the analysis could not run (a policy that does not compile, an
    /// unwritable fixture folder).
    ///
    /// Examples:
    ///   grail analyze
    ///   grail analyze --format json > analysis.json
    ///   grail analyze --policy my-policies/ --emit-fixtures my-policies/generated/
    #[command(verbatim_doc_comment)]
    Analyze(AnalyzeArgs),
}

#[derive(clap::Args)]
struct FmtArgs {
    /// Change nothing: print a diff of each file that would change, and
    /// exit 1 if any would.
    #[arg(long)]
    check: bool,
    /// The policy files to format, or folders of them.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct CompileArgs {
    /// A folder of `.grail` files to use instead of the shipped library.
    #[arg(long, value_name = "DIR")]
    policy: Option<Utf8PathBuf>,
    /// What to compile to.
    #[arg(long, value_enum)]
    target: Target,
    /// The folder to write to (created if missing; files of the same name are replaced).
    #[arg(long, value_name = "DIR")]
    out: Utf8PathBuf,
    /// With --target cedar: a document checked with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// With --target cedar: refuse a deployment with an UNKNOWN too, as `check --deny-unknown` would fail it.
    #[arg(long)]
    deny_unknown: bool,
    /// With --target cedar: the documents of the deployment, read together as `grail check` reads them.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Target {
    /// A Cedar schema, policies and entities answering the policy's admission questions for a deployment.
    Cedar,
    /// The lowered rule set as versioned JSON.
    Json,
    /// A JSON Schema (draft 2020-12) for each document kind.
    Jsonschema,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// A folder of `.grail` files to use instead of the shipped library.
    #[arg(long, value_name = "DIR")]
    policy: Option<Utf8PathBuf>,
    /// How to print the analysis.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write each rule's fixture pair to DIR/<rule id>/fail.* and pass.*.
    #[arg(long, value_name = "DIR")]
    emit_fixtures: Option<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct ExplainArgs {
    /// A folder of `.grail` files to use instead of the shipped library.
    #[arg(long, value_name = "DIR")]
    policy: Option<Utf8PathBuf>,
    /// Explain only this rule's outcomes (every outcome, passes included).
    #[arg(long, value_name = "ID")]
    rule: Option<String>,
    /// Explain only what concerns this key (a work class such as `C3`), and show its effective state.
    #[arg(long, value_name = "KEY")]
    class: Option<String>,
    /// A document checked with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// How to print the explanation.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The whole derivation: every outcome, every value read, every cell.
    #[arg(long, short)]
    verbose: bool,
    /// The documents to explain, read together as one deployment.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct TestArgs {
    /// A folder of `.grail` files, with its fixtures in `DIR/tests/`, instead of the shipped library.
    #[arg(long, value_name = "DIR")]
    policy: Option<Utf8PathBuf>,
    /// Report, per rule, whether some case fires it and some case passes it; fail if one lacks either.
    #[arg(long)]
    coverage: bool,
    /// List every case, not only the failing ones.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// A folder of `.grail` files (or one `.grail` file) to use instead of
    /// the shipped library.
    #[arg(long, value_name = "DIR")]
    policy: Option<Utf8PathBuf>,
    /// How to print the report.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    format: CheckFormat,
    /// Treat UNKNOWN (missing evidence) like FAIL for the exit status.
    #[arg(long)]
    deny_unknown: bool,
    /// Check every file as a deployment of its own: one report per file
    /// (with --format json, one JSON object per line, each with a "file" field).
    #[arg(long)]
    each: bool,
    /// A document checked with every FILE without being one of them: the
    /// binding whose surfaces work items (Markdown) resolve against.
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// Also list the rules that passed or did not apply (human format).
    #[arg(long, short)]
    verbose: bool,
    /// The most of one document that is read, in bytes or with a unit
    /// (`KiB`, `MiB`, `GiB`); a larger document is a finding of the syntax
    /// rule, not read.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_document_size: u64,
    /// The documents to check: bindings and histories (JSON or YAML), work
    /// items (Markdown). None: the deployments of the workspace file
    /// `grail.toml` in the working directory or its parents, with its policy.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Findings with the document's lines, for people.
    Human,
    /// One JSON object (see DESIGN.md), for programs.
    Json,
}

/// The formats of `check`: those of every command, and SARIF.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// Findings with the document's lines, for people.
    Human,
    /// One JSON object (see DESIGN.md), for programs.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

/// `65536`, `64KiB`, `16MiB`, `1GiB` (also `K`, `M`, `G`, `KB`...: always powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("`{text}` is not a size; write bytes, or a number with `KiB`, `MiB` or `GiB`")),
    };
    let n: u64 = number.parse().map_err(|_| format!("`{text}` is not a size; write a number such as `16MiB`"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too large a size"))
}

/// The command could not run: printed as an error, exit status 2.
pub struct Fatal(pub String);

/// `grail --version` says how the shipped library is loaded.
const LONG_VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (shipped library: ", env!("GRAIL_SHIPPED_LIBRARY"), ")");

/// The shipped library, compiled by build.rs (empty when it was not).
static SHIPPED_POLICY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/shipped.policy"));

fn main() -> ExitCode {
    if !SHIPPED_POLICY.is_empty() {
        grail_engine::prebuilt::install(SHIPPED_POLICY);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Test(args) => test::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Lsp => grail_lsp::run_stdio()
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| Fatal(format!("the language server stopped: {e}"))),
        Command::Analyze(args) => analyze::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            let _ = std::io::stdout().flush();
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
