//! grail and cedar-policy side by side on the admission questions, in one
//! run: first the agreement assertion (cedar-policy's authoriser, given the
//! Cedar that `grail compile --target cedar` emits for a deployment, decides
//! every request as grail does), then the timings, printed as one table
//! (median, p95, ratio to the peer).
//!
//!   cargo bench --bench cedar_peer                 # agreement, then the table
//!   cargo bench --bench cedar_peer -- --agree-only # agreement only
//!   cargo bench --bench cedar_peer -- --quick      # fewer samples
//!
//! The deployments and the requests are the differential test's
//! (`tests/cedar.rs`; both include `support/cedar.rs`): every example
//! deployment and 1,200 seeded generated ones; for each question, every
//! combination of the values grail answered for its attributes, an unlisted
//! value and absence. Everything a timed loop reads is prepared before it:
//! the documents' texts, the compiled Cedar texts, and Cedar's requests.

#[path = "support/cedar.rs"]
mod population;
mod support;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use cedar_policy::{Authorizer, Decision as CedarDecision};
use grail_engine::db::{AttachedFile, check_deployment, compile_policy, decide_deployment};
use grail_engine::emit::cedar::{self, Cedar};
use grail_engine::question::Decision;
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText, Summary};
use grail_lang::ast::RequestSide;
use population::{
    Asked, Case, Compiled, POPULATION, asked, cedar_of, cedar_request, deployment, disagreement, example_cases,
    generated, grail_answer, parse_cedar, question_vars, shipped,
};
use support::timing::{Stats, Table, fmt, ratio, sample, sample_timed};

/// A file a document names with `ref`: the document's index, the path as
/// written, and the file's path and text as read (or why it was not).
type Attached = (usize, String, Result<(String, String), String>);

/// One deployment, read, decided, compiled to Cedar and asked every request
/// before anything is timed.
struct Prepared {
    case: Case,
    attached: Vec<Attached>,
    /// The deployment in the preparing database, whose answers are memoised.
    dep: Deployment,
    passes: bool,
    decisions: Vec<Decision>,
    /// The three texts of the Cedar target.
    out: Cedar,
    compiled: Compiled,
    asked: Vec<Asked>,
}

fn prepare(db: &Database, set: PolicySet, case: Case) -> Prepared {
    let policy = compile_policy(db, set).policy.clone();
    let dep = deployment(db, set, &case);
    let documents = dep.documents(db);
    let attached = dep
        .attachments(db)
        .iter()
        .map(|a| {
            let from = documents.iter().position(|d| *d == a.from).expect("an attachment's document");
            let file = a.read.as_ref().map(|s| (s.path(db).clone(), s.text(db).clone())).map_err(Clone::clone);
            (from, a.path.clone(), file)
        })
        .collect();
    let passes = Summary::of(&check_deployment(db, set, dep).findings).verdict() != Outcome::Fail;
    let decisions = decide_deployment(db, set, dep).clone();
    let out = cedar::cedar(&policy, &decisions);
    let compiled = cedar_of(&policy, &decisions, &case.name);
    let asked = asked(&policy, &decisions, &compiled, &case.name);
    Prepared { case, attached, dep, passes, decisions, out, compiled, asked }
}

/// The deployment's documents and attachments as new inputs of `db`: none
/// of its queries is memoised there.
fn fresh(db: &Database, p: &Prepared) -> Deployment {
    let docs: Vec<SourceText> =
        p.case.documents.iter().map(|(path, text)| SourceText::new(db, path.clone(), text.clone(), None)).collect();
    let attached = p
        .attached
        .iter()
        .map(|(from, path, file)| AttachedFile {
            from: docs[*from],
            path: path.clone(),
            read: file.as_ref().map(|(p, t)| SourceText::new(db, p.clone(), t.clone(), None)).map_err(Clone::clone),
        })
        .collect();
    Deployment::new(db, docs, attached)
}

/// A database whose policy is compiled, and nothing else.
fn compiled_database() -> (Database, PolicySet) {
    let db = Database::default();
    let set = shipped(&db);
    assert!(!compile_policy(&db, set).has_errors(), "the shipped library compiles");
    (db, set)
}

/// grail's answer to every request of a deployment, from its answers.
fn answer_all(p: &Prepared, vars: &[(String, Vec<(RequestSide, String)>)], decisions: &[Decision]) -> usize {
    let mut allowed = 0;
    for a in &p.asked {
        let (question, vars) = &vars[a.question];
        allowed += usize::from(grail_answer(question, vars, decisions, &a.request).iter().any(|d| d.allowed));
    }
    allowed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let agree_only = args.iter().any(|a| a == "--agree-only");
    let quick = args.iter().any(|a| a == "--quick");
    let budget = Duration::from_secs(if quick { 2 } else { 8 });
    let load = || {
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').take(3).collect::<Vec<_>>().join(" ")
    };
    let load_before = load();

    // ---- the population, prepared
    let t = Instant::now();
    let (db, set) = compiled_database();
    let policy = compile_policy(&db, set).policy.clone();
    let vars: Vec<(String, Vec<(RequestSide, String)>)> =
        policy.questions.iter().map(|q| (q.id.clone(), question_vars(q))).collect();
    let examples = example_cases();
    let example_count = examples.len();
    let prepared: Vec<Prepared> =
        examples.into_iter().chain((0..POPULATION).map(generated)).map(|case| prepare(&db, set, case)).collect();
    let requests: usize = prepared.iter().map(|p| p.asked.len()).sum();
    let bytes: usize = prepared.iter().flat_map(|p| &p.case.documents).map(|(_, t)| t.len()).sum();
    let permits: usize = prepared.iter().map(|p| p.compiled.policies.policies().count()).sum();
    let prepare_time = t.elapsed();

    // ---- the agreement assertion, before any timing
    let t = Instant::now();
    let authorizer = Authorizer::new();
    // Per question: (allowed, denied).
    let mut per_question: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for p in &prepared {
        for a in &p.asked {
            let response = authorizer.is_authorized(&a.cedar, &p.compiled.policies, &a.entities);
            if a.allowed != (response.decision() == CedarDecision::Allow) || a.matching.len() > 1 {
                eprintln!("agreement FAILED:\n{}", disagreement(&db, set, p.dep, &p.case, a, &p.compiled, &response));
                std::process::exit(1);
            }
            per_question.entry(&vars[a.question].0).or_default()[usize::from(!a.allowed)] += 1;
        }
    }
    // The timed loops decide on new inputs: they must answer as the preparing database did.
    let (fresh_db, fresh_set) = compiled_database();
    for p in &prepared {
        let answers = decide_deployment(&fresh_db, fresh_set, fresh(&fresh_db, p));
        assert_eq!(answers, &p.decisions, "{}: a fresh deployment is answered differently", p.case.name);
    }
    drop(fresh_db);
    let passing = prepared.iter().filter(|p| p.passes).count();
    println!(
        "agreement: cedar-policy's authoriser and grail agree on all {requests} requests of {} deployments ({example_count} examples, {POPULATION} generated; {passing} pass `grail check`; {:.1} MB of documents; {permits} permits; prepared in {:.1} s, compared in {:.1} s)",
        prepared.len(),
        bytes as f64 / 1e6,
        prepare_time.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    for (q, [allowed, denied]) in &per_question {
        println!("  {q}: {allowed} allowed, {denied} denied");
    }
    if agree_only {
        return;
    }

    let (min, max) = if quick { (3, 10) } else { (5, 30) };
    let mut table = Table { rows: Vec::new() };
    let deployments = prepared.len() as f64;
    let each = |s: &Stats| {
        format!(
            "{} per deployment, {} per request",
            fmt(s.median.div_f64(deployments)),
            fmt(s.median.div_f64(requests as f64))
        )
    };

    // ---- from the texts: grail reads each deployment's documents; Cedar reads the compiled texts
    let grail_cold = sample_timed(min, max, budget, || {
        let (db, set) = compiled_database();
        let t = Instant::now();
        for p in &prepared {
            let answers = decide_deployment(&db, set, fresh(&db, p));
            black_box(answer_all(p, &vars, answers));
        }
        t.elapsed() // the database is dropped after the clock stops
    });
    let cedar_cold = sample(1, min, max, budget, || {
        for p in &prepared {
            let c = parse_cedar(&p.out, &p.case.name);
            for a in &p.asked {
                let action = &policy.questions[a.question].action;
                let (entities, request) = cedar_request(&c, action, &a.request, &p.case.name);
                black_box(authorizer.is_authorized(&request, &c.policies, &entities).decision());
            }
        }
    });
    table.row(
        "answer every request, from the texts",
        "grail",
        Some(&grail_cold),
        ratio(&grail_cold, &cedar_cold),
        format!(
            "new inputs per deployment, policy compiled; `decide_deployment`, then each request looked up; {}",
            each(&grail_cold)
        ),
    );
    table.row(
        "",
        "cedar-policy",
        Some(&cedar_cold),
        String::new(),
        format!(
            "per deployment: schema, policies and entities.json parsed; per request: Entities + Request built, `is_authorized`; {}",
            each(&cedar_cold)
        ),
    );

    // ---- inputs already read: grail's answers memoised; Cedar's PolicySet, Entities and Request built
    let grail_warm = sample(1, min, max, budget, || {
        for p in &prepared {
            black_box(answer_all(p, &vars, decide_deployment(&db, set, p.dep)));
        }
    });
    let cedar_warm = sample(1, min, max, budget, || {
        for p in &prepared {
            for a in &p.asked {
                black_box(authorizer.is_authorized(&a.cedar, &p.compiled.policies, &a.entities).decision());
            }
        }
    });
    let memo = sample(10, min, 1000, budget, || {
        for p in &prepared {
            black_box(decide_deployment(&db, set, p.dep).len());
        }
    });
    table.row(
        "answer every request, inputs already read",
        "grail",
        Some(&grail_warm),
        ratio(&grail_warm, &cedar_warm),
        format!(
            "`decide_deployment` memoised ({} for all), then each request looked up in the answers; {}",
            fmt(memo.median),
            each(&grail_warm)
        ),
    );
    table.row(
        "",
        "cedar-policy",
        Some(&cedar_warm),
        String::new(),
        format!("`is_authorized` over pre-built PolicySet, Entities and Request; {}", each(&cedar_warm)),
    );

    // ---- the parts
    let grail_decide = sample_timed(min, max, budget, || {
        let (db, set) = compiled_database();
        let t = Instant::now();
        for p in &prepared {
            black_box(decide_deployment(&db, set, fresh(&db, p)).len());
        }
        t.elapsed()
    });
    table.row(
        "decide every deployment, new inputs",
        "grail",
        Some(&grail_decide),
        "no peer".into(),
        format!(
            "`decide_deployment` alone: read the documents, check, answer every tuple; {:.0} µs per deployment",
            grail_decide.median.as_secs_f64() * 1e6 / deployments
        ),
    );
    let cedar_build = sample(1, min, max, budget, || {
        for p in &prepared {
            let c = parse_cedar(&p.out, &p.case.name);
            for a in &p.asked {
                let action = &policy.questions[a.question].action;
                black_box(cedar_request(&c, action, &a.request, &p.case.name));
            }
        }
    });
    table.row(
        "build Cedar's inputs from the texts",
        "cedar-policy",
        Some(&cedar_build),
        "no peer".into(),
        format!("the first cedar-policy row less `is_authorized`; {}", each(&cedar_build)),
    );
    let emit = sample(1, min, max, budget, || {
        for p in &prepared {
            black_box(cedar::cedar(&policy, &p.decisions));
        }
    });
    table.row(
        "compile the answers to Cedar",
        "grail",
        Some(&emit),
        "no peer".into(),
        format!(
            "`emit::cedar::cedar` on the decided answers (what `compile --target cedar` adds to decide); {:.1} µs per deployment",
            emit.median.as_secs_f64() * 1e6 / deployments
        ),
    );

    println!();
    println!(
        "{} deployments ({example_count} examples, {POPULATION} generated), {requests} requests, {:.1} MB of documents, {permits} permits",
        prepared.len(),
        bytes as f64 / 1e6
    );
    println!("load average (1, 5, 15 min): {load_before} at the start, {} at the end", load());
    println!(
        "samples: from the texts grail {} / cedar {}, already read grail {} / cedar {}, decide {}, build {}, compile {}",
        grail_cold.samples,
        cedar_cold.samples,
        grail_warm.samples,
        cedar_warm.samples,
        grail_decide.samples,
        cedar_build.samples,
        emit.samples
    );
    println!();
    table.print();
}
