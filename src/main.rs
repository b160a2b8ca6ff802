//! `grail`: check, explain, test and compile guardrail bindings against
//! policies written in grail; format those policies.
//!
//! This is the only place that picks an output format or exits the process.

use std::io::Write as _;
use std::process::ExitCode;

use camino::Utf8PathBuf;
use clap::{Parser, Subcommand, ValueEnum};

/// jemalloc rather than the platform's allocator: a check allocates many
/// small values and frees them per document, which glibc's and musl's
/// allocators make about a quarter of the instructions (BENCHMARKS.md,
/// "The allocator").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main` (the `malloc_conf` string of its
/// manual; `_RJEM_MALLOC_CONF` in the environment still overrides them).
/// `thp:always` asks for transparent huge pages for the heap where the
/// kernel gives them on request (`madvise`, as on most distributions; no
/// effect where they are `never`): a cold check wrote about 850 pages of
/// heap, a page fault each, and spent more of its time in the kernel than
/// in its own code (BENCHMARKS.md, "The cold check: page faults"). Every
/// command but a check of one deployment turns them off ([`no_huge_pages`]).
/// With glibc a check of one deployment gets [`CHECK_MALLOC_CONF`] instead,
/// set before `main` ([`huge_pages_before_main`]).
// INVARIANT: jemalloc reads the symbol as a `const char *` when it starts:
// an `AtomicPtr<u8>` is laid out as a pointer to the C strings below.
#[cfg(not(target_env = "msvc"))]
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: std::sync::atomic::AtomicPtr<u8> =
    std::sync::atomic::AtomicPtr::new(c"thp:always".as_ptr().cast::<u8>().cast_mut());

/// jemalloc's options for a check of one deployment: huge pages, and
/// `lg_extent_max_active_fit:16`, so that the free memory of the heap's
/// reservation ([`heap_in_huge_pages`]) serves small allocations too
/// (by default jemalloc splits a free extent only for a request at least
/// 1/64 of its size, and grew the heap again, by 5 MiB, beside it).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const CHECK_MALLOC_CONF: &std::ffi::CStr = c"thp:always,lg_extent_max_active_fit:16";

mod analyze;
mod authorize;
mod cache;
mod check;
mod compile;
mod completions;
mod doc;
mod documents;
mod envelopes;
mod excerpt;
mod explain;
mod fmt;
mod github;
mod graph;
mod junit;
mod outcome;
mod policy;
mod render;
mod sarif;
mod source;
mod tables;
mod test;
mod workspace;

/// grail states and checks the guardrails of autonomous software delivery.
///
/// Rules live in policies written in the grail language; the shipped
/// guardrail library is built in and used unless `--policy`, or the policy
/// folders of the workspace file grail.toml, name another.
/// Every finding names its rule, its subject and the line it points at.
#[derive(Parser)]
#[command(name = "grail", version, long_version = LONG_VERSION, about, long_about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Neither read nor write the cache of compiled policies (a `--policy DIR`
    /// is compiled once and kept in `$GRAIL_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/grail`, else `~/.cache/grail`).
    #[arg(long, global = true)]
    no_cache: bool,
}

// Each subcommand's arguments are declared when that subcommand is parsed
// or described (`defer`), not every one's on every run: a cold check built
// all of them, with their help texts, before it read a file. (A plain
// comment: a doc comment here would become the help of `grail` itself.)
#[derive(Subcommand)]
#[command(defer = true)]
enum Command {
    /// Check documents (bindings) against the guardrail rules.
    ///
    /// Every rule reports, per subject, PASS, FAIL, UNKNOWN (missing evidence)
    /// or NOT APPLICABLE. Exit status: 0 when nothing FAILs and nothing is
    /// UNKNOWN, 1 when something FAILs or is UNKNOWN (missing evidence is
    /// never a pass; --allow-unknown, or `allow_unknown` in a deployment of
    /// grail.toml, accepts UNKNOWN and the report says so), 2 when the check
    /// could not run (bad arguments, an unreadable file, a policy that does
    /// not compile). A document that is not well-formed JSON or YAML is a
    /// finding (exit 1), with its line and column.
    ///
    /// Examples:
    ///   grail check examples/org/security.yaml
    ///   grail check --layer security=org/security.yaml --layer repo=org/repo.yaml
    ///   grail check --format json examples/bindings/*.yaml --each
    ///   grail check --policy my-policies/ binding.json
    ///   grail check                 # the deployments of grail.toml
    ///
    /// As upstream's checker (node check-security-binding.mjs), with its flags:
    ///   grail check security-binding.json --probe-evidence-root /protected/probes \
    ///       --egress-hosts egress-probe.example.net --credential-roots /home/runner
    /// The transcripts the binding names are then read under /protected/probes
    /// (never outside it); without --probe-evidence-root they are read beside
    /// the binding.
    #[command(verbatim_doc_comment)]
    Check(CheckArgs),
    /// Run the fixture pairs that live next to the policy, in `tests/<rule id>/`.
    ///
    /// `fail.*` (or a folder `fail/` checked as one deployment) must make the
    /// rule fire with the outcome it declares; `pass.*` must make it pass; the
    /// twins must differ in one line. Prints one line per failing case and a
    /// closing `N passed, M failed`. Exit status: 0 when every case holds (and,
    /// with --coverage, every rule is fired by its own `fail` case and passed
    /// by its own `pass` case), 1 otherwise, 2 when the policy does not compile.
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
    /// what was established and what remains UNKNOWN. Exit status as
    /// `grail check`'s: 0 when nothing FAILs or is UNKNOWN (or the UNKNOWN is
    /// allowed with --allow-unknown), 1 otherwise, 2 when it could not run.
    ///
    /// Examples:
    ///   grail explain examples/bindings/auto-merge-demoted.yaml
    ///   grail explain --class C4 examples/bindings/identical-checkers.yaml
    ///   grail explain --rule topology.checker_count --verbose org.yaml
    ///   grail explain --probe-evidence-root /protected/probes --egress-hosts egress-probe.example.net binding.json
    #[command(verbatim_doc_comment)]
    Explain(ExplainArgs),
    /// Format policy files (`.grail`) in the style of the shipped library.
    ///
    /// Rewrites each file in place when formatting changes it and prints the
    /// paths it changed. Formatting never changes what a policy means and
    /// keeps every comment. A folder stands for every `.grail` file under it;
    /// a folder with none is said on standard error (a warning, exit 0, as
    /// ruff does: nothing there is misformatted). A file that does not parse
    /// is left as it is, and its errors are printed.
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
    /// reads it) is checked first; if the check fails (a FAIL, or an UNKNOWN
    /// unless --allow-unknown), its report is printed on standard error,
    /// nothing is written and the exit status is 1.
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
    ///   grail compile --target cedar --out build/cedar --layer security=org/security.yaml \
    ///       --layer operator=org/operator.yaml --layer repo=org/repo.yaml
    ///   grail compile --target json --out build/ir
    ///   grail compile --target jsonschema --out .schemas
    #[command(verbatim_doc_comment)]
    Compile(CompileArgs),
    /// Serve the Language Server Protocol on standard input and output.
    ///
    /// Diagnostics, hovers, definitions, references, completion and fixes for
    /// policy files (`.grail`) and the documents they check (`.json`, `.yaml`,
    /// `.yml`, and Markdown work items), and formatting of policy files. The
    /// policy and the deployments are those of `grail.toml`, found in the
    /// workspace folder or its parents, as `grail check` reads them; without
    /// one, the shipped library, each document checked alone (the server says
    /// so once). See README.md to attach an editor.
    ///
    /// Examples:
    ///   grail lsp
    ///   grail lsp --stdio      (as editors that name the transport start it)
    #[command(verbatim_doc_comment)]
    Lsp(LspArgs),
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
    /// Write the reference of a policy, from the policy itself: kinds, fields, rules, examples.
    ///
    /// Every document kind and record with its fields (type, default, floor
    /// or ceiling), the enumerations and matrices, every rule with its `///`
    /// documentation, the outcome it reports, what it reads and its fixture
    /// pair as the example, and the admission questions. --format markdown
    /// writes DIR/library.md (or prints it without --out); --format html
    /// writes a static site (DIR/index.html, search.js, style.css) whose
    /// search runs in the browser. The output is the same, byte for byte,
    /// for the same policy.
    ///
    /// Examples:
    ///   grail doc --out docs
    ///   grail doc --format html --out build/reference
    ///   grail doc --policy my-policies/ > my-policies.md
    #[command(verbatim_doc_comment)]
    Doc(DocArgs),
    /// Answer one admission question locally, as the compiled Cedar would.
    ///
    /// Reads the deployment as `grail check` does, then answers the request
    /// (an action, and the principal's and resource's attributes) exactly as
    /// the Cedar that `grail compile --target cedar` writes for it: DENY if the
    /// deployment fails the check (a FAIL, or an UNKNOWN unless
    /// --allow-unknown: nothing is compiled), ALLOW when an answer
    /// the policy allows has every attribute of the request's, DENY otherwise,
    /// with the reason. Exit status: 0 ALLOW, 1 DENY, 2 could not run (an
    /// action or attribute no question declares, an unreadable file).
    ///
    /// Examples:
    ///   grail authorize --action dispatch --resource work_class=C2 --resource surface=ci-pool-a examples/org/*.yaml
    ///   grail authorize --action write --principal kind=agent --resource layer=security examples/org/*.yaml
    #[command(verbatim_doc_comment)]
    Authorize(AuthorizeArgs),
    /// Draw a deployment: the verification topology of each class, and its layers.
    ///
    /// For every map of records keyed by an enumeration (a topology per work
    /// class): a cluster per key with a node per slot, labelled with its
    /// fields, an edge for every field naming another slot (the distinctness
    /// relations), and the FAILs and UNKNOWNs about that key (what is
    /// missing). For layered documents: which layer set each value, and what
    /// a layer tried and was refused (dashed, red). As Graphviz DOT, Mermaid,
    /// or SVG laid out by grail itself. Exit status: 0 drawn, 2 could not run.
    ///
    /// Examples:
    ///   grail graph examples/bindings/good.yaml
    ///   grail graph --format mermaid examples/org/security.yaml examples/org/operator.yaml examples/org/repo.yaml
    ///   grail graph --format svg examples/bindings/identical-checkers.yaml > topology.svg
    #[command(verbatim_doc_comment)]
    Graph(GraphArgs),
    /// Print the text of the policy: a rule, a declaration, a file, or write them all out.
    ///
    /// The shipped library is built into grail: the paths that findings,
    /// `explain` and `doc` print for it (`policies/guardrails/merge.grail:22:6`)
    /// are files of grail's own source, not of yours. This command prints
    /// them, for the shipped library or any `--policy`. NAME is a rule id
    /// (its `///` documentation and its whole declaration; a structural check
    /// such as `schema.unknown_key` shows the clause that names it), the name
    /// of a declaration (a document kind, record, enum, matrix, function,
    /// question or table), or a policy file (its path as findings print it,
    /// or its file name alone) with an optional `:LINE` for the lines around
    /// it. Without NAME: the policy's files, their lengths and their rule
    /// ids. With --out: the policy's files and its fixtures (`tests/`) written
    /// under DIR at the same relative paths (a policy named by an absolute
    /// path is refused: run from above it); the command prints the
    /// `--policy` that reads them back as the same policy. Exit status: 0
    /// printed or written, 2 a NAME the policy does not have, or a file that
    /// exists and differs (without --force).
    ///
    /// Examples:
    ///   grail source                                  # the files and their rules
    ///   grail source merge.executor_cap               # a rule, as a help line names it
    ///   grail source policies/guardrails/merge.grail:22
    ///   grail source Binding                          # a document kind's declaration
    ///   grail source --out vendored/                  # a copy to read, edit, --policy
    ///   grail source --policy my-policies/ my.rule
    #[command(verbatim_doc_comment)]
    Source(SourceArgs),
    /// Print a shell completion script for grail.
    ///
    /// Examples:
    ///   grail completions bash > /etc/bash_completion.d/grail
    ///   grail completions zsh > "${fpath[1]}/_grail"
    ///   grail completions fish > ~/.config/fish/completions/grail.fish
    #[command(verbatim_doc_comment)]
    Completions(CompletionsArgs),
    /// Print the manual page of grail (roff), or write one per command to a folder.
    ///
    /// Examples:
    ///   grail man | man -l -
    ///   grail man --out /usr/local/share/man/man1
    #[command(verbatim_doc_comment)]
    Man(ManArgs),
}

#[derive(clap::Args)]
struct SourceArgs {
    /// A folder of `.grail` files, with its fixtures in `DIR/tests/`, instead
    /// of the policy folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one
    /// policy. `--policy shipped` names the shipped library and its fixtures.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// Write the policy's files and fixtures under this folder (created if
    /// missing), at their relative paths, instead of printing.
    #[arg(long, value_name = "DIR", conflicts_with = "name")]
    out: Option<Utf8PathBuf>,
    /// With --out: replace files that exist and differ.
    #[arg(long, requires = "out")]
    force: bool,
    /// A rule id, a declaration's name, or a policy file with an optional `:LINE`.
    #[arg(value_name = "NAME")]
    name: Option<String>,
}

#[derive(clap::Args)]
struct DocArgs {
    /// A folder of `.grail` files, with its fixtures in `DIR/tests/`, instead
    /// of the policy folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one
    /// policy. `--policy shipped` names the shipped library and its fixtures.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// Markdown (one file) or HTML (a static site with search).
    #[arg(long, value_enum, default_value_t = DocFormat::Markdown)]
    format: DocFormat,
    /// The folder to write to (created if missing); without it, Markdown goes to standard output.
    #[arg(long, value_name = "DIR")]
    out: Option<Utf8PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DocFormat {
    /// `library.md`: one Markdown file.
    Markdown,
    /// `index.html`, `search.js`, `style.css`: a static site with client-side search.
    Html,
}

#[derive(clap::Args)]
struct AuthorizeArgs {
    /// Without files: the deployment of grail.toml to read (needed when it declares several).
    #[arg(long, value_name = "NAME")]
    deployment: Option<String>,
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// The action asked about, as a question of the policy names it (`dispatch`, `auto-merge`...).
    #[arg(long, value_name = "ACTION")]
    action: String,
    /// An attribute of the resource, `NAME=VALUE` (repeat for each).
    #[arg(long, value_name = "NAME=VALUE")]
    resource: Vec<String>,
    /// An attribute of the principal, `NAME=VALUE` (repeat for each).
    #[arg(long, value_name = "NAME=VALUE")]
    principal: Vec<String>,
    /// A document read with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// Bind a document to a layer of trust of its kind: `--layer security=security.yaml`
    /// (repeatable; see `check --layer`).
    #[arg(long = "layer", value_name = "NAME=FILE", value_parser = documents::parse_layer)]
    layers: Vec<documents::LayerArg>,
    /// Attach a file under the path a document records for it:
    /// `--attach /work/repo/build/report.xml=report.xml` (repeatable). Rules
    /// read it with `attached(p)` (hashes of artifacts a receipt names);
    /// without it they see missing evidence.
    #[arg(long = "attach", value_name = "RECORDED=FILE", value_parser = documents::parse_attach)]
    attach: Vec<documents::AttachArg>,
    /// Give FILE to the deployment under the name `evidence`: it is read as
    /// the document kind the policy selects by `given "evidence"` (the shipped
    /// library's promotion evidence: evaluation mode), never by its content.
    /// A file that cannot be read is given too, as unavailable evidence when
    /// the kind says so.
    #[arg(long, value_name = "FILE")]
    evidence: Option<Utf8PathBuf>,
    #[command(flatten)]
    invocation: InvocationArgs,
    /// Answer even when the check has an UNKNOWN (missing evidence), as
    /// `compile --allow-unknown` compiles it; what the policy cannot
    /// establish is still refused. Without it, an UNKNOWN denies everything.
    #[arg(long)]
    allow_unknown: bool,
    /// The time of the check that `now()` reads, in RFC 3339
    /// (`2026-08-11T09:00:00Z`), as `compile --now` takes it; without it, the
    /// machine's clock. The answer says which when an outcome read it.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,
    /// How to print the answer.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The documents of the deployment, read together as `grail check` reads them.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct GraphArgs {
    /// Without files: the deployment of grail.toml to read (needed when it declares several).
    #[arg(long, value_name = "NAME")]
    deployment: Option<String>,
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// A document read with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// Bind a document to a layer of trust of its kind: `--layer security=security.yaml`
    /// (repeatable; see `check --layer`).
    #[arg(long = "layer", value_name = "NAME=FILE", value_parser = documents::parse_layer)]
    layers: Vec<documents::LayerArg>,
    /// The time of the check that `now()` reads for the findings drawn, in
    /// RFC 3339 (`2026-08-11T09:00:00Z`), as `check --now` takes it; without
    /// it, the machine's clock.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,
    /// How to draw it.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    format: GraphFormat,
    /// The documents of the deployment, read together as `grail check` reads them.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart (renders in GitHub Markdown).
    Mermaid,
    /// SVG, laid out by grail (no Graphviz needed).
    Svg,
}

#[derive(clap::Args)]
struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(clap::Args)]
struct ManArgs {
    /// Write `grail.1` and a `grail-COMMAND.1` per command into this folder instead.
    #[arg(long, value_name = "DIR")]
    out: Option<Utf8PathBuf>,
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
    /// Without files: the deployment of grail.toml to read (needed when it declares several).
    #[arg(long, value_name = "NAME")]
    deployment: Option<String>,
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// What to compile to.
    #[arg(long, value_enum)]
    target: Target,
    /// The folder to write to (created if missing; files of the same name are replaced).
    #[arg(long, value_name = "DIR")]
    out: Utf8PathBuf,
    /// With --target cedar: a document checked with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// Bind a document to a layer of trust of its kind: `--layer security=security.yaml`
    /// (repeatable). Trust comes from the invocation, never from a document: among
    /// several documents of a layered kind, one bound by nothing is of the lowest layer.
    #[arg(long = "layer", value_name = "NAME=FILE", value_parser = documents::parse_layer)]
    layers: Vec<documents::LayerArg>,
    /// Attach a file under the path a document records for it:
    /// `--attach /work/repo/build/report.xml=report.xml` (repeatable). Rules
    /// read it with `attached(p)` (hashes of artifacts a receipt names);
    /// without it they see missing evidence.
    #[arg(long = "attach", value_name = "RECORDED=FILE", value_parser = documents::parse_attach)]
    attach: Vec<documents::AttachArg>,
    /// Give FILE to the deployment under the name `evidence`: it is read as
    /// the document kind the policy selects by `given "evidence"` (the shipped
    /// library's promotion evidence: evaluation mode), never by its content.
    /// A file that cannot be read is given too, as unavailable evidence when
    /// the kind says so.
    #[arg(long, value_name = "FILE")]
    evidence: Option<Utf8PathBuf>,
    #[command(flatten)]
    invocation: InvocationArgs,
    /// With --target cedar: compile a deployment whose check has an UNKNOWN
    /// (missing evidence), as `check --allow-unknown` passes it; without it,
    /// an UNKNOWN refuses the deployment as a FAIL does.
    #[arg(long)]
    allow_unknown: bool,
    /// With --target cedar: the time of the check that `now()` reads, in RFC 3339
    /// (`2026-08-11T09:00:00Z`); without it, the machine's clock. The report
    /// says which.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,

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
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// How to print the analysis.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write each rule's fixture pair to DIR/<rule id>/fail.* and pass.* (or
    /// folders `fail/` and `pass/`, with `layers.bind` for a kind that counts
    /// only from a layer of trust): the layout `grail test` reads from
    /// `<policy>/tests/`. Only pairs the checker confirms and whose twins are
    /// one line apart are written; the others are named on standard error.
    #[arg(long, value_name = "DIR")]
    emit_fixtures: Option<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct ExplainArgs {
    /// Without files: the deployment of grail.toml to read (needed when it declares several).
    #[arg(long, value_name = "NAME")]
    deployment: Option<String>,
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// Explain only this rule's outcomes (every outcome, passes included).
    #[arg(long, value_name = "ID")]
    rule: Option<String>,
    /// Explain only what concerns this key (a work class such as `C3`), and show its effective state.
    #[arg(long, value_name = "KEY")]
    class: Option<String>,
    /// A document checked with every FILE without being one of them (see `check --binding`).
    #[arg(long, value_name = "FILE")]
    binding: Vec<Utf8PathBuf>,
    /// Bind a document to a layer of trust of its kind: `--layer security=security.yaml`
    /// (repeatable). Trust comes from the invocation, never from a document: among
    /// several documents of a layered kind, one bound by nothing is of the lowest layer.
    #[arg(long = "layer", value_name = "NAME=FILE", value_parser = documents::parse_layer)]
    layers: Vec<documents::LayerArg>,
    /// Attach a file under the path a document records for it:
    /// `--attach /work/repo/build/report.xml=report.xml` (repeatable). Rules
    /// read it with `attached(p)` (hashes of artifacts a receipt names);
    /// without it they see missing evidence.
    #[arg(long = "attach", value_name = "RECORDED=FILE", value_parser = documents::parse_attach)]
    attach: Vec<documents::AttachArg>,
    /// Give FILE to the deployment under the name `evidence`: it is read as
    /// the document kind the policy selects by `given "evidence"` (the shipped
    /// library's promotion evidence: evaluation mode), never by its content.
    /// A file that cannot be read is given too, as unavailable evidence when
    /// the kind says so.
    #[arg(long, value_name = "FILE")]
    evidence: Option<Utf8PathBuf>,
    /// How to print the explanation.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The time of the check that `now()` reads, in RFC 3339
    /// (`2026-08-11T09:00:00Z`); without it, the machine's clock. The report
    /// says which.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,
    /// The whole derivation: every outcome, every value read, every cell.
    #[arg(long, short)]
    verbose: bool,
    /// Exit 0 when the check's worst outcome is UNKNOWN, as `check --allow-unknown` does.
    #[arg(long)]
    allow_unknown: bool,
    #[command(flatten)]
    invocation: InvocationArgs,
    /// The documents to explain, read together as one deployment.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

#[derive(clap::Args)]
struct TestArgs {
    /// A folder of `.grail` files, with its fixtures in `DIR/tests/`, instead
    /// of the policy folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one
    /// policy. `--policy shipped` names the shipped library and its fixtures.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// Report, per rule, whether its own `fail` case fires it and its own `pass` case passes it (another rule's fixtures do not count); fail if one lacks either.
    #[arg(long)]
    coverage: bool,
    /// List every case, not only the failing ones.
    #[arg(long, short)]
    verbose: bool,
    /// The time of the check that `now()` reads in every case that does not
    /// state its own (a folder case's `now.bind`), in RFC 3339
    /// (`2026-08-11T09:00:00Z`); without either, `now()` is missing evidence
    /// (never the machine's clock).
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,
}

#[derive(clap::Args)]
struct LspArgs {
    /// Serve on standard input and output: the only transport, and the
    /// default; accepted because editors name it (VS Code's language client
    /// appends `--stdio` to the command it starts).
    #[arg(long)]
    stdio: bool,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// A folder of `.grail` files (or one file) to use instead of the policy
    /// folders of grail.toml (without one, the shipped library); repeatable, the folders read together as one policy.
    /// `--policy shipped` names the shipped library, so that
    /// `--policy shipped --policy ours/` adds an organisation's rules to it.
    #[arg(long, value_name = "DIR")]
    policy: Vec<Utf8PathBuf>,
    /// How to print the report.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    format: CheckFormat,
    /// The time of the check that `now()` reads, in RFC 3339
    /// (`2026-08-11T09:00:00Z`); without it, the machine's clock. The report
    /// says which.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<i128>,
    /// Accept UNKNOWN (missing evidence): exit 0 when nothing FAILs, the
    /// UNKNOWNs reported as warnings, and the report says they were allowed
    /// (`allow_unknown = true` in a deployment of grail.toml does the same
    /// for that deployment). Without it, an UNKNOWN fails the check.
    #[arg(long)]
    allow_unknown: bool,
    /// Check every file as a deployment of its own: one report per file
    /// (with --format json, one JSON object per line, each with a "file" field).
    #[arg(long)]
    each: bool,
    /// The autonomy binding (`.claude/autonomy/binding.json`): the surfaces
    /// maps and `routines.enabled` that queued items resolve against. Checks
    /// the FILEs as queued items, as upstream's `check-signal-envelope.mjs`
    /// does: only the envelope rules run, every file under a FILE folder
    /// (walked recursively) must carry one marker record, and no record at all
    /// is a finding. The binding is read, not checked as a whole.
    #[arg(long, value_name = "AUTONOMY")]
    binding: Option<Utf8PathBuf>,
    /// The security binding a queued item's stamped class must trace to
    /// (`admission.classification.temporal`); bound to the `security` layer.
    /// Checks the FILEs as queued items, as `--binding` does.
    #[arg(long, value_name = "SECURITY")]
    security_binding: Option<Utf8PathBuf>,
    /// Check the FILEs as queued items (signal envelopes), as upstream's
    /// `check-signal-envelope.mjs` does, without a binding: implied by
    /// `--binding` and `--security-binding`.
    #[arg(long)]
    envelopes: bool,
    /// Bind a document to a layer of trust of its kind: `--layer security=security.yaml`
    /// (repeatable). Trust comes from the invocation, never from a document: among
    /// several documents of a layered kind, one bound by nothing is of the lowest layer.
    #[arg(long = "layer", value_name = "NAME=FILE", value_parser = documents::parse_layer)]
    layers: Vec<documents::LayerArg>,
    /// Attach a file under the path a document records for it:
    /// `--attach /work/repo/build/report.xml=report.xml` (repeatable). Rules
    /// read it with `attached(p)` (hashes of artifacts a receipt names);
    /// without it they see missing evidence.
    #[arg(long = "attach", value_name = "RECORDED=FILE", value_parser = documents::parse_attach)]
    attach: Vec<documents::AttachArg>,
    /// Give FILE to the deployment under the name `evidence`: it is read as
    /// the document kind the policy selects by `given "evidence"` (the shipped
    /// library's promotion evidence: evaluation mode), never by its content.
    /// A file that cannot be read is given too, as unavailable evidence when
    /// the kind says so.
    #[arg(long, value_name = "FILE")]
    evidence: Option<Utf8PathBuf>,
    /// Compare with the previous version of a document: `--base old.yaml`
    /// for the one document checked, `--base security=old.yaml` for the one
    /// bound to a layer (repeatable). What the new version loosens or
    /// removes is the kind's `change` finding (`change.loosen`), located in
    /// the new file with the old value and its line. For a pull request:
    /// `git show origin/main:guardrails.yaml > old.yaml`.
    #[arg(long = "base", value_name = "[NAME=]OLD")]
    base: Vec<String>,
    /// Also list the rules that passed or did not apply (human format).
    #[arg(long, short)]
    verbose: bool,
    /// The most of one document that is read, in bytes or with a unit
    /// (`KiB`, `MiB`, `GiB`); a larger document is a finding of the syntax
    /// rule, not read.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_document_size: u64,
    /// The most that is read of all the files the documents of one check
    /// attach (probe transcripts), together; past it a file is not read, and
    /// its rules see missing evidence.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    max_total_size: u64,
    #[command(flatten)]
    invocation: InvocationArgs,
    /// The documents to check: bindings and histories (JSON or YAML), work
    /// items (Markdown); a folder stands for the documents directly in it
    /// (less the files they attach; a file that is no document of the policy,
    /// such as a `README.md` without a marker, is said and skipped), `-` for
    /// standard input. With `--envelopes` (or `--binding`), the queued items:
    /// a folder is walked recursively and every file in it is an item. None (and no
    /// `--layer`): the deployments of the workspace file `grail.toml` in the
    /// working directory or its parents, with its policy.
    #[arg(value_name = "FILE")]
    files: Vec<Utf8PathBuf>,
}

// The parameters of a check that upstream's checker takes as flags, with
// the same names and meaning; a deployment of grail.toml gives them as
// `probe_evidence_root`, `egress_hosts` and `credential_roots` (a flag
// wins over the key). Rules read each with `param("NAME")`. (A plain
// comment: with the subcommands' arguments deferred, a doc comment here
// would replace the help of each subcommand that flattens these.)
#[derive(clap::Args, Clone, Default)]
pub struct InvocationArgs {
    /// The protected folder where the documents' `ref` fields (probe
    /// transcripts) resolve, instead of each document's own folder: an
    /// absolute path, a `..` escape or a symbolic link out of it is refused.
    /// Give a folder agents cannot write: evidence proves something only from
    /// outside their reach. Rules read it as `param("probe-evidence-root")`.
    #[arg(long, value_name = "DIR")]
    probe_evidence_root: Option<Utf8PathBuf>,
    /// The configured probe targets, comma-separated: each trimmed, in lower
    /// case, one trailing dot dropped, empty entries dropped. Rules read
    /// them as `param("egress-hosts")` (absent without the flag).
    #[arg(long, value_name = "H,H")]
    egress_hosts: Option<String>,
    /// The trusted credential roots, comma-separated (deny by default):
    /// each trimmed, empty entries dropped; a value with no entry is as if
    /// the flag were not given. Rules read them as `param("credential-roots")`.
    #[arg(long, value_name = "R,R")]
    credential_roots: Option<String>,
}

impl InvocationArgs {
    /// The invocation the flags give; an evidence root that is not a folder
    /// stops the command.
    pub fn invocation(&self) -> Result<grail_workspace::Invocation, Fatal> {
        let root = match &self.probe_evidence_root {
            Some(dir) if !dir.is_dir() => {
                let what = if dir.exists() { "is not a folder" } else { "does not exist" };
                return Err(Fatal(format!("`--probe-evidence-root {dir}`: `{dir}` {what}")));
            }
            Some(dir) => Some((dir.as_str(), dir.as_std_path().to_path_buf())),
            None => None,
        };
        Ok(grail_workspace::Invocation::new(
            root,
            self.egress_hosts.as_deref().map(|h| h.split(',')),
            self.credential_roots.as_deref().map(|r| r.split(',')),
        ))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Findings with the document's lines, for people.
    Human,
    /// One JSON object (`verdict`, `summary`, `findings`; see README.md), for programs.
    Json,
}

/// The formats of `check`: those of every command, and SARIF.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// Findings with the document's lines, for people.
    Human,
    /// One JSON object (`verdict`, `summary`, `findings`; see README.md), for programs.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// JUnit XML, for test reporters: a test case per rule and subject (FAIL
    /// and UNKNOWN a failure; NOT APPLICABLE and an allowed UNKNOWN skipped,
    /// with the reason).
    Junit,
    /// GitHub Actions workflow commands: an annotation per FAIL and UNKNOWN
    /// (error; an allowed UNKNOWN a warning).
    Github,
    /// The policy's tables of the documents checked (a row per tuple, a cell
    /// per column, as each `table` declares them), then the counts of findings.
    Table,
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

/// `--now`: an RFC 3339 date-time, read as `timestamp(...)` reads one.
fn parse_now(text: &str) -> Result<i128, String> {
    grail_engine::time::rfc3339_nanos(text).ok_or_else(|| {
        format!("`{text}` is not an RFC 3339 date-time; write one such as `2026-08-11T09:00:00Z` or `2026-08-11T11:00:00.5+02:00`")
    })
}

/// The time of the check: `--now`, or else the machine's clock.
#[derive(Clone, Copy)]
pub struct Clock {
    /// Nanoseconds since the Unix epoch.
    pub nanos: i128,
    /// Given by `--now` (the report is then the same on every run).
    pub given: bool,
}

impl Clock {
    pub fn of(now: Option<i128>) -> Clock {
        match now {
            Some(nanos) => Clock { nanos, given: true },
            None => {
                let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                Clock { nanos: since.map_or(0, |d| d.as_nanos() as i128), given: false }
            }
        }
    }

    /// The report's last line, when the policy reads `now()`.
    pub fn line(&self) -> String {
        let source = if self.given { "--now" } else { "the clock" };
        format!("time of the check: {} ({source})\n", grail_engine::time::show_instant(self.nanos))
    }

    /// The report's `now` field, when the policy reads `now()`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "value": grail_engine::time::show_instant(self.nanos),
            "source": if self.given { "given" } else { "clock" },
        })
    }
}

/// clap's error, and for the flag that is gone, what replaced it.
fn usage_error(e: &clap::Error) -> ExitCode {
    let gone = e.kind() == clap::error::ErrorKind::UnknownArgument
        && std::env::args().any(|a| a == "--deny-unknown" || a.starts_with("--deny-unknown="));
    if !gone {
        e.exit();
    }
    let _ = e.print();
    eprintln!(
        "help: `--deny-unknown` is gone: UNKNOWN (missing evidence) fails the check by default now; \
         drop the flag (`--allow-unknown` accepts UNKNOWN)"
    );
    ExitCode::from(2)
}

/// The command could not run: printed as an error, exit status 2.
pub struct Fatal(pub String);

/// Writes a command's output to standard output. A reader that closed the
/// pipe (`grail doc | head -1`) is no error: nobody reads the rest, and the
/// command's exit status stays what its work decided.
pub fn write_stdout(out: &mut impl std::io::Write, bytes: &[u8]) -> Result<(), Fatal> {
    match out.write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Fatal("cannot write to standard output".into())),
        _ => Ok(()),
    }
}

/// `grail --version` says how the shipped library is loaded.
const LONG_VERSION: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (shipped library: ", env!("GRAIL_SHIPPED_LIBRARY"), ")");

/// The shipped library, compiled by build.rs (empty when it was not).
pub(crate) static SHIPPED_POLICY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/shipped.policy"));

/// Turns transparent huge pages off for the rest of the process. They serve
/// one cold check (`MALLOC_CONF`); a process that allocates and frees much
/// for long (`grail analyze`, the language server, `--each` over many files)
/// would keep whole huge pages for what it has freed: `grail analyze` held
/// 3 to 11 GB instead of 190 MB, and `--each` with four arenas per core 32
/// MB instead of 21. So every command but a `check` of one deployment asks
/// the kernel to give it none (what the heap took before `main` stays).
#[cfg(target_os = "linux")]
fn no_huge_pages() {
    // SAFETY: `PR_SET_THP_DISABLE` takes integers and reads or writes no
    // memory of the process; a kernel without it returns an error, ignored.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(not(target_os = "linux"))]
fn no_huge_pages() {}

/// The bytes a check of one deployment asks the heap for at once, and
/// gives back: 3.5 MiB, which jemalloc serves (with the page it adds to a
/// large allocation) from a new mapping of 4 MiB.
#[cfg(target_os = "linux")]
const HEAP_AHEAD: usize = 7 << 19;
// With jemalloc's extra page, within the 4 MiB class and beyond 3 MiB.
#[cfg(target_os = "linux")]
const _: () = assert!(HEAP_AHEAD + 4096 <= 4 << 20 && HEAP_AHEAD > 3 << 20);

/// Grows the heap of a check of one deployment by [`HEAP_AHEAD`] at once.
/// jemalloc grows its heap by mappings of 2, 2.5, 3, 3.5, 4, 5 ... MiB, and
/// the kernel places an anonymous mapping on a huge page boundary only when
/// its size is a multiple of 2 MiB: the second mapping, 2.5 MiB, began 512
/// KB before a boundary, and the heap a cold check wrote there took a page
/// fault per 4 KB page (about 100 of its 390). One allocation of
/// [`HEAP_AHEAD`], written to nowhere and freed at once, makes that second
/// mapping 4 MiB, on a boundary; its pages stay jemalloc's and what the check allocates
/// next is carved from them, a huge page at a time. The memory is only
/// reserved: what is never written costs no page.
#[cfg(target_os = "linux")]
fn heap_in_huge_pages() {
    let ahead: Vec<u8> = Vec::with_capacity(HEAP_AHEAD);
    drop(std::hint::black_box(ahead));
}

#[cfg(not(target_os = "linux"))]
fn heap_in_huge_pages() {}

/// With glibc, [`no_huge_pages`] is also asked before `main`, before the
/// first allocation: the heap the runtime and the parse of the arguments
/// take would otherwise be huge pages already (4.5 MB more of peak memory
/// for `--each` over 10,000 files). glibc calls the functions of
/// `.init_array` with the program's arguments; the parse in `main` decides
/// again, so a guess here costs time or memory, never a result.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[unsafe(link_section = ".init_array")]
static HUGE_PAGES_BEFORE_MAIN: extern "C" fn(libc::c_int, *const *const libc::c_char) = huge_pages_before_main;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn huge_pages_before_main(argc: libc::c_int, argv: *const *const libc::c_char) {
    if argv.is_null() {
        return;
    }
    // SAFETY: glibc passes `.init_array` functions `argc` and `argv` as
    // `main` gets them: `argc` pointers to NUL-terminated strings.
    let args = (1..usize::try_from(argc).unwrap_or(0))
        .map(|i| unsafe { *argv.add(i) })
        .take_while(|a| !a.is_null())
        .map(|a| unsafe { std::ffi::CStr::from_ptr(a) }.to_bytes());
    if checks_one_deployment(args) {
        // jemalloc starts at the first allocation, after this function: a
        // value stored later would be read by no one, and change nothing.
        MALLOC_CONF.store(CHECK_MALLOC_CONF.as_ptr().cast::<u8>().cast_mut(), std::sync::atomic::Ordering::Relaxed);
    } else {
        no_huge_pages();
    }
}

/// Whether arguments (the program's name left out) ask for a check of one
/// deployment: the first that is not a flag is `check`, and none is `--each`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn checks_one_deployment<'a>(args: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut command = None;
    for arg in args {
        if arg == b"--each" {
            return false;
        }
        if command.is_none() && !arg.starts_with(b"-") {
            command = Some(arg);
        }
    }
    command == Some(b"check".as_slice())
}

fn main() -> ExitCode {
    if !SHIPPED_POLICY.is_empty() {
        grail_engine::prebuilt::install(SHIPPED_POLICY);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    if matches!(&cli.command, Command::Check(args) if !args.each) {
        heap_in_huge_pages();
    } else {
        no_huge_pages();
    }
    if cli.no_cache {
        cache::disable();
    }
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Test(args) => test::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Lsp(_) => grail_lsp::run_stdio()
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| Fatal(format!("the language server stopped: {e}"))),
        Command::Analyze(args) => analyze::run(&args),
        Command::Doc(args) => doc::run(&args),
        Command::Authorize(args) => authorize::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Source(args) => source::run(&args),
        Command::Completions(args) => completions::completions(args.shell),
        Command::Man(args) => completions::man(args.out.as_deref()),
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

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod huge_pages_tests {
    use super::checks_one_deployment;

    #[test]
    fn only_a_check_without_each_is_a_check_of_one_deployment() {
        let one = |args: &[&str]| checks_one_deployment(args.iter().map(|a| a.as_bytes()));
        assert!(one(&["check", "valid.json", "--probe-evidence-root", "."]));
        assert!(one(&["--no-cache", "check", "b.json"]));
        assert!(one(&["check"]));
        assert!(!one(&["check", "--each", "a.json", "b.json"]));
        assert!(!one(&["analyze"]));
        assert!(!one(&["lsp", "--stdio"]));
        assert!(!one(&["explain", "check"]));
        assert!(!one(&["--version"]));
        assert!(!one(&[]));
    }

    /// What jemalloc reads: huge pages as for every command, and free
    /// extents split for requests of any size.
    #[test]
    fn a_check_of_one_deployment_lets_jemalloc_reuse_the_reservation() {
        let text = super::CHECK_MALLOC_CONF.to_str().expect("ASCII");
        let options: Vec<&str> = text.split(',').collect();
        assert_eq!(options, ["thp:always", "lg_extent_max_active_fit:16"]);
    }
}

#[cfg(all(test, target_os = "linux", not(target_env = "msvc")))]
mod heap_ahead_tests {
    use super::{HEAP_AHEAD, heap_in_huge_pages};

    /// The anonymous mappings of the process, as address ranges.
    fn anonymous() -> Vec<(u64, u64)> {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines()
            .filter(|l| l.split_whitespace().nth(5).is_none())
            .filter_map(|l| {
                let (a, b) = l.split_whitespace().next()?.split_once('-')?;
                Some((u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b, 16).ok()?))
            })
            .collect()
    }

    /// Bytes of `after` that no range of `before` covers.
    fn new_bytes(before: &[(u64, u64)], after: &[(u64, u64)]) -> u64 {
        let mut total = 0;
        for &(start, end) in after {
            let mut covered: Vec<(u64, u64)> = before
                .iter()
                .filter(|&&(s, e)| s < end && e > start)
                .map(|&(s, e)| (s.max(start), e.min(end)))
                .collect();
            covered.sort_unstable();
            let (mut at, mut old) = (start, 0);
            for (s, e) in covered {
                old += e.saturating_sub(s.max(at));
                at = at.max(e);
            }
            total += (end - start) - old;
        }
        total
    }

    /// The reservation maps at least its size at once: the heap of a
    /// thread's arena grows by it, not page by page. (Its size is checked
    /// where it is declared: jemalloc's large allocation with its extra
    /// page fits a mapping of 4 MiB, where 4 MiB would take 5.)
    #[test]
    fn a_check_of_one_deployment_grows_the_heap_by_one_mapping_of_4_mib() {
        // A thread of its own, so an arena of its own with nothing retained.
        let grown = std::thread::spawn(|| {
            let before = anonymous();
            heap_in_huge_pages();
            new_bytes(&before, &anonymous())
        })
        .join()
        .expect("the thread ends");
        assert!(grown >= HEAP_AHEAD as u64, "{grown} bytes newly mapped");
    }
}
