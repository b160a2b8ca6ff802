//! `grail graph`: a deployment drawn, as DOT, Mermaid or SVG (laid out here,
//! no system dependency).
//!
//! What is drawn comes from the policy's types, not from names: for every
//! map of records keyed by an enumeration (a topology per work class), a
//! cluster per key, holding a node per entry of each list of identified
//! records inside (the slots), labelled with its scalar fields (the roles),
//! and an edge for every field whose values name the identity of another
//! entry of the same list (the distinctness relations), labelled with the
//! field's name read as words, a trailing `from` left to the arrow
//! (`distinct_model_from` is "distinct model"); the FAILs and UNKNOWNs whose
//! subject is that key are drawn in it (what is missing), with a dotted red
//! edge to each entry a finding is about: one its location or the values
//! its rule was judging lie in, or one its subject names by identity
//! (`verification_topology.C4[reviewer-a, reviewer-b]`).
//! For a layered deployment, a cluster of its layers: an edge from each layer
//! to every effective value it set, and a dashed red one to every value it
//! tried to set and was refused.
//!
//! The SVG is laid out here: nodes in columns by the longest chain of edges
//! inside their cluster, each edge label put at the first place along its
//! edge (then above or below it) where its box overlaps no node, no cluster
//! title and no other label. A box is estimated from the font size and the
//! characters ([`text_width`]); `tests/commands.rs` estimates every label of
//! the example organisation's drawing the same way and finds no two overlapping.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::process::ExitCode;

use grail_engine::db::{explain_deployment, run_deployment};
use grail_engine::diagnostic::Provenance;
use grail_engine::hir::{CHECK_SYNTAX, Policy, Ty};
use grail_engine::value::{Val, ValKind};
use grail_engine::{Database, Deployment, Outcome};

use crate::documents::{DEFAULT_MAX_DOCUMENT_SIZE, attachments, deployment};
use crate::{Fatal, GraphArgs, GraphFormat};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Settings,
    Problem,
    Layer,
}

struct Node {
    id: String,
    lines: Vec<String>,
    style: Style,
}

struct Cluster {
    label: String,
    nodes: Vec<Node>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EdgeKind {
    /// A field of an entry naming another entry (`distinct_model_from`).
    Relation,
    /// A layer set a value.
    Sets,
    /// A layer tried to set a value and was refused.
    Refused,
    /// A finding is about an entry: unlabelled, dotted.
    About,
}

struct Edge {
    from: String,
    to: String,
    label: String,
    kind: EdgeKind,
}

#[derive(Default)]
struct Graph {
    clusters: Vec<Cluster>,
    edges: Vec<Edge>,
}

pub fn run(args: &GraphArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let from_file = args.files.is_empty() && args.layers.is_empty();
    let setup = crate::workspace::Setup::resolve(&args.policy, from_file)?;
    let (set, compiled) = setup.load(&db)?;
    let now = crate::Clock::of(args.now).nanos;
    let (sources, shown, deployment) = if from_file {
        let named = setup.deployment(
            &db,
            compiled,
            "graph",
            args.deployment.as_deref(),
            &crate::InvocationArgs::default(),
            None,
        )?;
        let (documents, deployment) = crate::documents::workspace_deployment(&db, set, &named, &[], now)?;
        (documents.clone(), documents, deployment)
    } else {
        let named = deployment(&db, set, &args.files, &args.layers, &args.binding, DEFAULT_MAX_DOCUMENT_SIZE)?;
        let attached = attachments(&db, set, &named.documents, None);
        let (sources, shown) = (named.documents.clone(), named.shown.clone());
        let deployment =
            Deployment::builder(named.documents, attached).bindings(named.bindings).now(Some(now)).new(&db);
        crate::tables::refuse_crowded(&db, set, deployment)?;
        (sources, shown, deployment)
    };
    let Some(run) = run_deployment(&db, set, deployment) else {
        return Err(Fatal("the policy does not compile".into()));
    };
    let policy = &compiled.policy;
    // A document that does not parse has nothing to draw: its syntax finding,
    // as `grail check` reports it, and exit 1 (never an empty drawing).
    let syntax: Vec<&str> =
        policy.documents.iter().filter_map(|d| d.checks[CHECK_SYNTAX].as_ref().map(|c| c.rule.as_str())).collect();
    let unreadable: Vec<grail_engine::diagnostic::Finding> = run
        .findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail && f.subject == "document" && syntax.contains(&f.rule.as_str()))
        .cloned()
        .collect();
    if !unreadable.is_empty() {
        let shipped = setup.shipped(&db, set);
        let text = crate::render::human(&db, set, &shipped, &sources, &shown, &unreadable, None, false);
        eprint!("{text}");
        eprintln!("error: nothing to draw: a document does not parse (`grail check` reports the same)");
        return Ok(ExitCode::from(1));
    }
    let mut graph = Graph::default();
    let mut ids = 0usize;
    let mut fresh = || {
        ids += 1;
        format!("n{ids}")
    };
    for root in run.single.iter().flatten() {
        topology(policy, root, &run.findings, &mut graph, &mut fresh);
    }
    if !run.layers.is_empty() {
        let explained = explain_deployment(&db, set, deployment);
        let e = &explained.explanation;
        let mut layer_nodes: Vec<Node> = Vec::new();
        let mut layer_of: HashMap<u32, String> = HashMap::new();
        let mut by_name: BTreeMap<String, String> = BTreeMap::new();
        for l in &e.layers {
            let (doc, name) = (&l.doc, &l.layer);
            let id = by_name.entry(name.clone()).or_insert_with(|| {
                let id = fresh();
                let path = explained.documents.get(*doc as usize).map(|d| d.path(&db).clone()).unwrap_or_default();
                layer_nodes.push(Node {
                    id: id.clone(),
                    lines: vec![format!("layer {name}"), path],
                    style: Style::Layer,
                });
                id
            });
            layer_of.insert(*doc, id.clone());
        }
        let mut values = Vec::new();
        for c in &e.cells {
            let setter = match &c.from {
                Provenance::Document(doc, _) => layer_of.get(doc).cloned(),
                _ => None,
            };
            let refusers: Vec<String> =
                c.refused.iter().filter_map(|(_, at)| at.and_then(|(d, _)| layer_of.get(&d).cloned())).collect();
            if setter.is_none() && refusers.is_empty() {
                continue;
            }
            let id = fresh();
            let mut lines = vec![format!("{} {}", c.key, c.column), format!("= {}", c.value)];
            if let Some(d) = &c.demoted {
                lines.push(format!("demoted to {}", d.to));
            }
            for (message, _) in &c.refused {
                lines.push(format!("refused: {message}"));
            }
            let problem = c.demoted.is_some() || !c.refused.is_empty();
            values.push(Node { id: id.clone(), lines, style: if problem { Style::Problem } else { Style::Plain } });
            if let Some(from) = setter {
                graph.edges.push(Edge { from, to: id.clone(), label: "sets".into(), kind: EdgeKind::Sets });
            }
            for from in refusers {
                graph.edges.push(Edge { from, to: id.clone(), label: "refused".into(), kind: EdgeKind::Refused });
            }
        }
        layer_nodes.extend(values);
        graph.clusters.push(Cluster { label: "layers".into(), nodes: layer_nodes });
    }
    let text = match args.format {
        GraphFormat::Dot => dot(&graph),
        GraphFormat::Mermaid => mermaid(&graph),
        GraphFormat::Svg => svg(&graph),
    };
    crate::write_stdout(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn record_fields<'p, 'v>(policy: &'p Policy, v: &'v Val) -> Option<(&'p grail_engine::hir::RecordDef, &'v [Val])> {
    let ValKind::Record(r, fields) = &v.kind else { return None };
    Some((policy.records.get(*r as usize)?, fields.as_slice()))
}

fn scalar(policy: &Policy, v: &Val) -> Option<String> {
    match &v.kind {
        ValKind::Bool(_) | ValKind::Int(_) | ValKind::Str(_) | ValKind::Enum(..) => Some(v.display(policy)),
        _ => None,
    }
}

/// An entry of a list of identified records drawn as a node (a slot).
struct Entry {
    id: String,
    /// Its identity, as shown.
    name: String,
    /// Where the entry is, to know which findings point into it.
    at: Option<(u32, grail_lang::ast::Span)>,
}

/// The clusters of one document's maps of records keyed by an enumeration.
fn topology(
    policy: &Policy,
    root: &Val,
    findings: &[grail_engine::Finding],
    graph: &mut Graph,
    fresh: &mut impl FnMut() -> String,
) {
    let Some((record, fields)) = record_fields(policy, root) else { return };
    for (def, value) in record.fields.iter().zip(fields) {
        let Ty::Map(key_ty, value_ty) = &def.ty else { continue };
        if !matches!(**key_ty, Ty::Enum(_)) || !matches!(**value_ty, Ty::Record(_)) {
            continue;
        }
        let ValKind::Map(entries) = &value.kind else { continue };
        for (key, entry) in entries.iter() {
            let Some((inner, inner_fields)) = record_fields(policy, entry) else { continue };
            let key = key.display(policy);
            let mut nodes = Vec::new();
            let mut settings = Vec::new();
            let mut drawn: Vec<Entry> = Vec::new();
            for (f, v) in inner.fields.iter().zip(inner_fields) {
                if let Some(s) = scalar(policy, v) {
                    settings.push(format!("{}: {s}", f.name));
                    continue;
                }
                // A list of identified records: a node per entry.
                let Ty::List(item) = &f.ty else { continue };
                let Ty::Record(item_record) = **item else { continue };
                let Some(item_def) = policy.records.get(item_record as usize) else { continue };
                let Some(identity) = item_def.identity else { continue };
                let ValKind::List(items) = &v.kind else { continue };
                let mut entry_ids: Vec<(String, String, Vec<Val>)> = Vec::new();
                for item in items.iter() {
                    let ValKind::Record(_, values) = &item.kind else { continue };
                    let Some(name) = values.get(identity).and_then(|x| scalar(policy, x)) else { continue };
                    let id = fresh();
                    drawn.push(Entry { id: id.clone(), name: name.clone(), at: item.origin.document_span() });
                    entry_ids.push((id, name, values.as_ref().clone()));
                }
                for (id, name, values) in &entry_ids {
                    let mut lines = vec![name.clone()];
                    for (i, (fd, fv)) in item_def.fields.iter().zip(values).enumerate() {
                        if i == identity {
                            continue;
                        }
                        if let Some(s) = scalar(policy, fv) {
                            lines.push(format!("{}: {s}", fd.name));
                        }
                        // Values naming another entry: an edge each.
                        let named: Vec<String> = match &fv.kind {
                            ValKind::List(xs) => xs.iter().filter_map(|x| scalar(policy, x)).collect(),
                            ValKind::Str(_) => scalar(policy, fv).into_iter().collect(),
                            _ => Vec::new(),
                        };
                        for n in named {
                            if let Some((to, _, _)) = entry_ids.iter().find(|(other, on, _)| on == &n && other != id) {
                                graph.edges.push(Edge {
                                    from: id.clone(),
                                    to: to.clone(),
                                    label: relation_label(&fd.name),
                                    kind: EdgeKind::Relation,
                                });
                                lines.retain(|l| !l.starts_with(&format!("{}: ", fd.name)));
                            }
                        }
                    }
                    nodes.push(Node { id: id.clone(), lines, style: Style::Plain });
                }
            }
            if !settings.is_empty() {
                nodes.insert(0, Node { id: fresh(), lines: settings, style: Style::Settings });
            }
            let subject = format!("{}.{key}", def.name);
            for f in findings.iter().filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown)) {
                let Some(rest) = f.subject.strip_prefix(&subject) else { continue };
                if !(rest.is_empty() || rest.starts_with(['.', '['])) {
                    continue;
                }
                let word = if f.outcome == Outcome::Fail { "FAIL" } else { "UNKNOWN" };
                let mut lines = vec![format!("{word} {}", f.rule)];
                lines.extend(wrap(&f.message, 48));
                let id = fresh();
                for e in drawn.iter().filter(|e| is_about(f, rest, e)) {
                    graph.edges.push(Edge {
                        from: id.clone(),
                        to: e.id.clone(),
                        label: String::new(),
                        kind: EdgeKind::About,
                    });
                }
                nodes.push(Node { id, lines, style: Style::Problem });
            }
            graph.clusters.push(Cluster { label: format!("{} {key}", def.name), nodes });
        }
    }
}

/// A relation's label: its field's name read as words, without a trailing
/// `from`, which the arrow says (`distinct_model_from` is "distinct model").
fn relation_label(field: &str) -> String {
    let words: Vec<&str> = field.split('_').filter(|w| !w.is_empty()).collect();
    match words.split_last() {
        Some((&"from", rest)) if !rest.is_empty() => rest.join(" "),
        _ => words.join(" "),
    }
}

/// Whether finding `f` is about entry `e`: where it points, or a value its
/// rule was judging, lies in the entry; or `rest`, its subject below the
/// cluster's key, names the entry's identity in a `[...]` segment.
fn is_about(f: &grail_engine::Finding, rest: &str, e: &Entry) -> bool {
    let inside = |(doc, span): (u32, grail_lang::ast::Span)| {
        e.at.is_some_and(|(d, at)| d == doc && at.start <= span.start && span.end <= at.end)
    };
    let spans = f.location.into_iter().chain(f.bound.iter().copied()).chain(f.labels.iter().map(|(d, s, _)| (*d, *s)));
    if spans.into_iter().any(inside) {
        return true;
    }
    rest.split('[').skip(1).filter_map(|seg| seg.split(']').next()).any(|seg| seg.split(", ").any(|n| n == e.name))
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

// ------------------------------------------------------------------ DOT

fn dot_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn dot(g: &Graph) -> String {
    let mut out = String::from(
        "digraph grail {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
    );
    for (i, c) in g.clusters.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{i} {{\n    label={};", dot_string(&c.label));
        for n in &c.nodes {
            let fill = match n.style {
                Style::Plain => "#ffffff",
                Style::Settings => "#eef3fb",
                Style::Problem => "#fde8e8",
                Style::Layer => "#e8f5e9",
            };
            let _ = writeln!(out, "    {} [label={}, fillcolor=\"{fill}\"];", n.id, dot_string(&n.lines.join("\n")));
        }
        out.push_str("  }\n");
    }
    for e in &g.edges {
        let style = match e.kind {
            EdgeKind::Relation | EdgeKind::Sets => "",
            EdgeKind::Refused => ", style=dashed, color=\"#c62828\"",
            EdgeKind::About => ", style=dotted, color=\"#c62828\"",
        };
        let label = if e.label.is_empty() { String::new() } else { format!("label={}", dot_string(&e.label)) };
        let sep = if label.is_empty() { style.trim_start_matches(", ") } else { style };
        let _ = writeln!(out, "  {} -> {} [{label}{sep}];", e.from, e.to);
    }
    out.push_str("}\n");
    out
}

// ------------------------------------------------------------------ Mermaid

fn mermaid_text(s: &str) -> String {
    s.replace('&', "#amp;").replace('"', "#quot;").replace('<', "#lt;").replace('>', "#gt;")
}

fn mermaid(g: &Graph) -> String {
    let mut out = String::from("flowchart LR\n");
    let mut classes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (i, c) in g.clusters.iter().enumerate() {
        let _ = writeln!(out, "  subgraph c{i}[\"{}\"]", mermaid_text(&c.label));
        for n in &c.nodes {
            let lines: Vec<String> = n.lines.iter().map(|l| mermaid_text(l)).collect();
            let _ = writeln!(out, "    {}[\"{}\"]", n.id, lines.join("<br/>"));
            let class = match n.style {
                Style::Plain => continue,
                Style::Settings => "settings",
                Style::Problem => "problem",
                Style::Layer => "layer",
            };
            classes.entry(class).or_default().push(&n.id);
        }
        out.push_str("  end\n");
    }
    for e in &g.edges {
        let arrow = if matches!(e.kind, EdgeKind::Refused | EdgeKind::About) { "-.->" } else { "-->" };
        if e.label.is_empty() {
            let _ = writeln!(out, "  {} {arrow} {}", e.from, e.to);
        } else {
            let _ = writeln!(out, "  {} {arrow}|\"{}\"| {}", e.from, mermaid_text(&e.label), e.to);
        }
    }
    // Refused values and what findings are about, red as in the other formats.
    let red: Vec<String> = g
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, EdgeKind::Refused | EdgeKind::About))
        .map(|(i, _)| i.to_string())
        .collect();
    if !red.is_empty() {
        let _ = writeln!(out, "  linkStyle {} stroke:#c62828", red.join(","));
    }
    out.push_str("  classDef settings fill:#eef3fb,stroke:#5472a8\n  classDef problem fill:#fde8e8,stroke:#c62828\n  classDef layer fill:#e8f5e9,stroke:#2e7d32\n");
    for (class, ids) in classes {
        let _ = writeln!(out, "  class {} {class}", ids.join(","));
    }
    out
}

// ------------------------------------------------------------------ SVG

/// The font size of nodes' and clusters' text, and of edge labels.
const FONT: f64 = 12.0;
const EDGE_FONT: f64 = 10.0;
const LINE_H: f64 = 16.0;
const PAD: f64 = 8.0;
const GAP_X: f64 = 70.0;
const GAP_Y: f64 = 18.0;

/// The width a text is given: 0.6 em per character, more than the average
/// character of Helvetica or Arial takes (bold included), so that a box
/// holds its text. The layout and the test of overlaps estimate alike.
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// An axis-aligned box.
#[derive(Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    /// The box of a text whose baseline is at `y`, starting at `x` or centred
    /// on it: from one em above the baseline to a quarter em below it.
    fn of_text(x: f64, y: f64, text: &str, size: f64, centred: bool) -> Rect {
        let w = text_width(text, size);
        let x0 = if centred { x - w / 2.0 } else { x };
        Rect { x0, y0: y - size, x1: x0 + w, y1: y + size * 0.25 }
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A cubic Bézier curve: an edge's path.
struct Curve([(f64, f64); 4]);

impl Curve {
    fn at(&self, t: f64) -> (f64, f64) {
        let [a, b, c, d] = self.0;
        let u = 1.0 - t;
        let (k0, k1, k2, k3) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
        (k0 * a.0 + k1 * b.0 + k2 * c.0 + k3 * d.0, k0 * a.1 + k1 * b.1 + k2 * c.1 + k3 * d.1)
    }

    fn path(&self) -> String {
        let [a, b, c, d] = self.0;
        format!("M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", a.0, a.1, b.0, b.1, c.0, c.1, d.0, d.1)
    }
}

/// The curve of an edge between two node boxes (x, y, w, h): from the
/// source's right side to the target's left when the target is to the right,
/// from the source's left side to the target's right when it is to the left,
/// and around the right of both when they share a column.
fn curve((ax, ay, aw, ah): (f64, f64, f64, f64), (bx, by, bw, bh): (f64, f64, f64, f64)) -> Curve {
    let (sy, ty) = (ay + ah / 2.0, by + bh / 2.0);
    if bx > ax + aw {
        let (sx, tx) = (ax + aw, bx);
        let mid = (sx + tx) / 2.0;
        Curve([(sx, sy), (mid, sy), (mid, ty), (tx, ty)])
    } else if bx + bw < ax {
        let (sx, tx) = (ax, bx + bw);
        let mid = (sx + tx) / 2.0;
        Curve([(sx, sy), (mid, sy), (mid, ty), (tx, ty)])
    } else {
        let (sx, tx) = (ax + aw, bx + bw);
        let out = sx.max(tx) + 40.0;
        Curve([(sx, sy), (out, sy), (out, ty), (tx, ty)])
    }
}

/// Where along its curve a label is tried after its ends: the middle, then
/// outwards towards both ends.
const LABEL_AT: [f64; 11] = [0.5, 0.62, 0.38, 0.74, 0.26, 0.86, 0.14, 0.56, 0.44, 0.68, 0.32];

/// Which end of an edge its label is tried at first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// Beside the arrow's head: where the edges of a fan out of one node part.
    Head,
    /// Beside its tail: where the edges of a fan into one node part.
    Tail,
    /// The middle first: an edge of no fan.
    Middle,
}

/// The baseline of an edge label: the first place whose box overlaps
/// nothing in `taken`, tried at the end `first` says (beside the arrow's head
/// or tail, above or below the line entering or leaving the node), then along
/// the curve from the middle outwards; failing all, the nearest place above
/// or below the middle that is free (there is one: below everything taken,
/// at the latest).
fn place_label(curve: &Curve, label: &str, first: End, taken: &[Rect]) -> (f64, f64) {
    let free = |x: f64, y: f64| {
        let r = Rect::of_text(x, y, label, EDGE_FONT, true);
        r.y0 >= 0.0 && r.x0 >= 0.0 && !taken.iter().any(|o| o.overlaps(&r))
    };
    let half = text_width(label, EDGE_FONT) / 2.0;
    let [p0, p1, p2, p3] = curve.0;
    // Beside an end, on the side the curve leaves it towards.
    let beside = |(x, y): (f64, f64), towards: (f64, f64)| {
        let side = if towards.0 < x { -1.0 } else { 1.0 };
        (x + side * (6.0 + half), y)
    };
    let (head, tail) = (beside(p3, p2), beside(p0, p1));
    let mut tries: Vec<(f64, f64)> = match first {
        End::Head => vec![head, tail],
        End::Tail => vec![tail, head],
        End::Middle => Vec::new(),
    };
    tries.extend(LABEL_AT.iter().map(|t| curve.at(*t)));
    if first == End::Middle {
        tries.extend([head, tail]);
    }
    for (x, y) in tries {
        // A label is never cut by the left edge of the drawing.
        let x = x.max(half + 4.0);
        for baseline in [y - 3.0, y + EDGE_FONT + 2.0] {
            if free(x, baseline) {
                return (x, baseline);
            }
        }
    }
    let (x, y) = curve.at(0.5);
    let x = x.max(half + 4.0);
    let step = EDGE_FONT * 1.25 + 2.0;
    let lowest = taken.iter().map(|r| r.y1).fold(y, f64::max);
    let mut k = 1.0;
    loop {
        for baseline in [y - 3.0 - k * step, y - 3.0 + k * step] {
            if free(x, baseline) {
                return (x, baseline);
            }
        }
        // INVARIANT: past the lowest box taken, the place below is free.
        if y - 3.0 + k * step - EDGE_FONT > lowest {
            return (x, y - 3.0 + k * step);
        }
        k += 1.0;
    }
}

/// A layered layout: in each cluster, a node's column is the longest chain of
/// edges inside the cluster that leads to it (a finding before the entries it
/// is about, so that its edges enter them on the side the relations do not
/// leave from); the nodes of a column stack up; the clusters stack up too. The
/// gap after a column is wide enough for the labels of the edges leaving it.
fn svg(g: &Graph) -> String {
    let size = |n: &Node| {
        let w = n.lines.iter().map(|l| text_width(l, FONT)).fold(FONT, f64::max) + 2.0 * PAD;
        let h = n.lines.len().max(1) as f64 * LINE_H + PAD;
        (w, h)
    };
    let mut boxes: HashMap<&str, (f64, f64, f64, f64)> = HashMap::new();
    let mut frames = Vec::new();
    let mut y = 10.0;
    for c in &g.clusters {
        let inside: Vec<&str> = c.nodes.iter().map(|n| n.id.as_str()).collect();
        let mut rank: HashMap<&str, usize> = inside.iter().map(|id| (*id, 0)).collect();
        for _ in 0..inside.len() {
            for e in &g.edges {
                let (a, b) = (&e.from, &e.to);
                if let (Some(&ra), Some(&rb)) = (rank.get(a.as_str()), rank.get(b.as_str()))
                    && rb < ra + 1
                    && ra + 1 < inside.len()
                {
                    rank.insert(b.as_str(), ra + 1);
                }
            }
        }
        let columns = rank.values().copied().max().unwrap_or(0) + 1;
        let top = y + 28.0;
        let mut x = 20.0;
        let mut right: f64 = 0.0;
        let mut bottom = top;
        for col in 0..columns {
            let mut cy = top;
            let mut col_w: f64 = 0.0;
            for n in c.nodes.iter().filter(|n| rank.get(n.id.as_str()) == Some(&col)) {
                let (w, h) = size(n);
                boxes.insert(&n.id, (x, cy, w, h));
                cy += h + GAP_Y;
                col_w = col_w.max(w);
            }
            bottom = bottom.max(cy);
            right = right.max(x + col_w);
            let widest = g
                .edges
                .iter()
                .filter(|e| rank.get(e.from.as_str()) == Some(&col))
                .map(|e| text_width(&e.label, EDGE_FONT))
                .fold(0.0, f64::max);
            x += col_w + GAP_X.max(widest + 30.0);
        }
        let frame_w = right.max(text_width(&c.label, FONT) + 30.0);
        frames.push((10.0, y, frame_w, bottom - y, &c.label));
        y = bottom + 20.0;
    }

    // What a label may not cover: the nodes, the clusters' titles, the labels placed.
    let mut taken: Vec<Rect> = boxes
        .values()
        .map(|&(x, y, w, h)| Rect { x0: x - 2.0, y0: y - 2.0, x1: x + w + 2.0, y1: y + h + 2.0 })
        .collect();
    taken.extend(frames.iter().map(|(x, y, _, _, label)| Rect::of_text(x + 10.0, y + 18.0, label, FONT, false)));
    let mut width: f64 = 200.0;
    let mut height: f64 = y;
    for (x, y, w, h, _) in &frames {
        width = width.max(x + w + 10.0);
        height = height.max(y + h + 10.0);
    }
    for &(x, y, w, h) in boxes.values() {
        width = width.max(x + w + 10.0);
        height = height.max(y + h + 10.0);
    }
    let mut edges = String::new();
    for e in &g.edges {
        let (Some(&a), Some(&b)) = (boxes.get(e.from.as_str()), boxes.get(e.to.as_str())) else { continue };
        let curve = curve(a, b);
        for (x, _) in curve.0 {
            width = width.max(x + 10.0);
        }
        let (stroke, marker, dash) = match e.kind {
            EdgeKind::Relation | EdgeKind::Sets => ("#555555", "arrow", ""),
            EdgeKind::Refused => ("#c62828", "refused", " stroke-dasharray=\"5,4\""),
            EdgeKind::About => ("#c62828", "refused", " stroke-dasharray=\"2,3\""),
        };
        let _ = write!(
            edges,
            "<g class=\"edge\" data-from=\"{}\" data-to=\"{}\"><path d=\"{}\" fill=\"none\" stroke=\"{stroke}\"{dash} marker-end=\"url(#{marker})\"/>",
            e.from,
            e.to,
            curve.path()
        );
        if !e.label.is_empty() {
            // A fan out of one node parts at the heads, a fan into one at the tails.
            let out = g.edges.iter().filter(|o| o.from == e.from && !o.label.is_empty()).count();
            let into = g.edges.iter().filter(|o| o.to == e.to && !o.label.is_empty()).count();
            let first = match out.cmp(&into) {
                std::cmp::Ordering::Greater => End::Head,
                std::cmp::Ordering::Less => End::Tail,
                std::cmp::Ordering::Equal => End::Middle,
            };
            let (x, y) = place_label(&curve, &e.label, first, &taken);
            let r = Rect::of_text(x, y, &e.label, EDGE_FONT, true);
            width = width.max(r.x1 + 10.0);
            height = height.max(r.y1 + 10.0);
            taken.push(r);
            let _ = write!(
                edges,
                "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{EDGE_FONT}\" fill=\"{stroke}\" text-anchor=\"middle\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                xml(&e.label)
            );
        }
        edges.push_str("</g>\n");
    }
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"{FONT}\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker>\n<marker id=\"refused\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c62828\"/></marker></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    );
    for (x, y, w, h, label) in &frames {
        let _ = writeln!(
            out,
            "<g class=\"cluster\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"6\" fill=\"#fafafa\" stroke=\"#bbbbbb\"/><text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{}</text></g>",
            x + 10.0,
            y + 18.0,
            xml(label)
        );
    }
    out.push_str(&edges);
    for c in &g.clusters {
        for n in &c.nodes {
            let Some(&(x, y, w, h)) = boxes.get(n.id.as_str()) else { continue };
            let (fill, stroke) = match n.style {
                Style::Plain => ("#ffffff", "#555555"),
                Style::Settings => ("#eef3fb", "#5472a8"),
                Style::Problem => ("#fde8e8", "#c62828"),
                Style::Layer => ("#e8f5e9", "#2e7d32"),
            };
            let _ = write!(
                out,
                "<g class=\"node\" id=\"{}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
                n.id
            );
            for (i, l) in n.lines.iter().enumerate() {
                let weight = if i == 0 { " font-weight=\"bold\"" } else { "" };
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\"{weight}>{}</text>",
                    x + PAD,
                    y + PAD / 2.0 + LINE_H * (i as f64 + 1.0) - 4.0,
                    xml(l)
                );
            }
            out.push_str("</g>\n");
        }
    }
    out.push_str("</svg>\n");
    out
}
