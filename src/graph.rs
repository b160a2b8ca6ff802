//! `grail graph`: a deployment drawn, as DOT, Mermaid or SVG (laid out here,
//! no system dependency).
//!
//! What is drawn comes from the policy's types, not from names: for every
//! map of records keyed by an enumeration (a topology per work class), a
//! cluster per key, holding a node per entry of each list of identified
//! records inside (the slots), labelled with its scalar fields (the roles),
//! and an edge for every field whose values name the identity of another
//! entry of the same list (the distinctness relations); the FAILs and
//! UNKNOWNs whose subject is that key are drawn in it (what is missing).
//! For a layered deployment, a cluster of its layers: an edge from each layer
//! to every effective value it set, and a dashed red one to every value it
//! tried to set and was refused.

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

struct Edge {
    from: String,
    to: String,
    label: String,
    refused: bool,
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
                graph.edges.push(Edge { from, to: id.clone(), label: "sets".into(), refused: false });
            }
            for from in refusers {
                graph.edges.push(Edge { from, to: id.clone(), label: "refused".into(), refused: true });
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
                    entry_ids.push((fresh(), name, values.as_ref().clone()));
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
                                    label: fd.name.clone(),
                                    refused: false,
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
                if f.subject == subject || f.subject.starts_with(&format!("{subject}.")) {
                    let word = if f.outcome == Outcome::Fail { "FAIL" } else { "UNKNOWN" };
                    let mut lines = vec![format!("{word} {}", f.rule)];
                    lines.extend(wrap(&f.message, 48));
                    nodes.push(Node { id: fresh(), lines, style: Style::Problem });
                }
            }
            graph.clusters.push(Cluster { label: format!("{} {key}", def.name), nodes });
        }
    }
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
        let style = if e.refused { ", style=dashed, color=\"#c62828\"" } else { "" };
        let _ = writeln!(out, "  {} -> {} [label={}{style}];", e.from, e.to, dot_string(&e.label));
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
        let arrow = if e.refused { "-.->" } else { "-->" };
        let _ = writeln!(out, "  {} {arrow}|\"{}\"| {}", e.from, mermaid_text(&e.label), e.to);
    }
    out.push_str("  classDef settings fill:#eef3fb,stroke:#5472a8\n  classDef problem fill:#fde8e8,stroke:#c62828\n  classDef layer fill:#e8f5e9,stroke:#2e7d32\n");
    for (class, ids) in classes {
        let _ = writeln!(out, "  class {} {class}", ids.join(","));
    }
    out
}

// ------------------------------------------------------------------ SVG

const CHAR_W: f64 = 7.0;
const LINE_H: f64 = 16.0;
const PAD: f64 = 8.0;
const GAP_X: f64 = 70.0;
const GAP_Y: f64 = 18.0;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A layered layout: in each cluster, a node's column is the longest chain of
/// edges inside the cluster that leads to it; the nodes of a column stack up;
/// the clusters stack up too.
fn svg(g: &Graph) -> String {
    let size = |n: &Node| {
        let w = n.lines.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64 * CHAR_W + 2.0 * PAD;
        let h = n.lines.len().max(1) as f64 * LINE_H + PAD;
        (w, h)
    };
    let mut boxes: HashMap<&str, (f64, f64, f64, f64)> = HashMap::new();
    let mut frames = Vec::new();
    let mut y = 10.0;
    let mut width: f64 = 200.0;
    for c in &g.clusters {
        let inside: Vec<&str> = c.nodes.iter().map(|n| n.id.as_str()).collect();
        let mut rank: HashMap<&str, usize> = inside.iter().map(|id| (*id, 0)).collect();
        for _ in 0..inside.len() {
            for e in &g.edges {
                if let (Some(&a), Some(&b)) = (rank.get(e.from.as_str()), rank.get(e.to.as_str()))
                    && b < a + 1
                    && a + 1 < inside.len()
                {
                    rank.insert(e.to.as_str(), a + 1);
                }
            }
        }
        let columns = rank.values().copied().max().unwrap_or(0) + 1;
        let top = y + 28.0;
        let mut x = 20.0;
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
            x += col_w + GAP_X;
        }
        let frame_w = (x - GAP_X + 10.0).max(c.label.chars().count() as f64 * CHAR_W + 30.0);
        frames.push((10.0, y, frame_w, bottom - y, &c.label));
        width = width.max(frame_w + 20.0);
        y = bottom + 20.0;
    }
    let height = y;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker>\n<marker id=\"refused\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c62828\"/></marker></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
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
    for e in &g.edges {
        let (Some(&(ax, ay, aw, ah)), Some(&(bx, by, _, bh))) = (boxes.get(e.from.as_str()), boxes.get(e.to.as_str()))
        else {
            continue;
        };
        let (sx, sy) = (ax + aw, ay + ah / 2.0);
        let (tx, ty) = (bx, by + bh / 2.0);
        let path = if tx > sx + 10.0 {
            let mid = (sx + tx) / 2.0;
            format!("M{sx:.1},{sy:.1} C{mid:.1},{sy:.1} {mid:.1},{ty:.1} {tx:.1},{ty:.1}")
        } else {
            // Same column or backwards: around the right.
            let out_x = sx.max(bx + 40.0) + 40.0;
            format!("M{sx:.1},{sy:.1} C{out_x:.1},{sy:.1} {out_x:.1},{ty:.1} {:.1},{ty:.1}", tx + aw.min(40.0))
        };
        let (stroke, marker, dash) =
            if e.refused { ("#c62828", "refused", " stroke-dasharray=\"5,4\"") } else { ("#555555", "arrow", "") };
        let _ = writeln!(
            out,
            "<g class=\"edge\"><path d=\"{path}\" fill=\"none\" stroke=\"{stroke}\"{dash} marker-end=\"url(#{marker})\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"{stroke}\" text-anchor=\"middle\">{}</text></g>",
            (sx + tx) / 2.0,
            (sy + ty) / 2.0 - 4.0,
            xml(&e.label)
        );
    }
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
