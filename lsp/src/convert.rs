//! The engine's data as protocol types: diagnostics, locations, completions,
//! edits. Positions go through [`crate::position`].

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::hir::Loc;
use grail_engine::ide::{self, Completion, CompletionKind, TextEdit};
use grail_engine::{Deployment, Finding, Outcome, PolicyDiagnostic, Severity, SourceText};
use grail_lang::ast::Span;
use tower_lsp_server::ls_types::{
    self as lsp, CompletionItem, CompletionItemKind, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity,
    Documentation, Location, MarkupContent, MarkupKind, NumberOrString, Range, Uri,
};

use crate::position::LineIndex;
use crate::workspace::{Config, Owner, Workspace, is_document, is_workspace_file};

/// The protocol range of a span of a file.
pub fn range(ws: &Workspace, file: SourceText, span: Span) -> Range {
    let text = file.text(&ws.db);
    LineIndex::new(text).range(text, span)
}

/// The location of a span of a policy file, if the file has a URI.
pub fn policy_location(ws: &Workspace, loc: Loc) -> Option<Location> {
    let uri = ws.policy_uri(loc.file)?.clone();
    let file = *ws.set.files(&ws.db).get(loc.file as usize)?;
    Some(Location::new(uri, range(ws, file, loc.span)))
}

/// The diagnostics of a file: a policy file's compile diagnostics, a
/// document's failing and unknown findings, those `grail check` reports
/// located in it (for a document of a deployment, the deployment's; for one
/// alone, those of `grail check FILE`; none for a document the server does
/// not judge, whose `owner` says so), or what is wrong with the workspace file.
pub fn diagnostics(ws: &Workspace, uri: &Uri, owner: &Owner) -> Vec<Diagnostic> {
    let mut out = own_diagnostics(ws, uri, owner);
    out.extend(attached_findings(ws, uri));
    out
}

/// The findings located in a file that checks attach (a probe transcript a
/// binding's `ref` names): `grail check` reports them in that file, so the
/// editor shows them there, whether the file is open or not.
fn attached_findings(ws: &Workspace, uri: &Uri) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (deployment, allowed, sources) in ws.attaching(uri) {
        let report = check_deployment(&ws.db, ws.set, deployment);
        for f in report.findings.iter().filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown)) {
            let Some(source) = f.location.and_then(|(d, _)| report.documents.get(d as usize)) else { continue };
            if sources.contains(source) {
                let d = finding(ws, uri, *source, &report.documents, f, allowed);
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
    out
}

/// The diagnostics of a file of the server's own (see [`diagnostics`]).
fn own_diagnostics(ws: &Workspace, uri: &Uri, owner: &Owner) -> Vec<Diagnostic> {
    if is_workspace_file(uri) {
        return workspace_file(ws, uri);
    }
    let Some(source) = ws.source(uri) else { return Vec::new() };
    let compiled = compile_policy(&ws.db, ws.set);
    if let Some(file) = ws.set.files(&ws.db).iter().position(|f| *f == source) {
        let mut out: Vec<Diagnostic> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.loc.file as usize == file)
            .map(|d| policy_diagnostic(ws, source, d))
            .collect();
        // A diagnostic located in another file that points into this one (a name declared
        // twice: the other declaration) is shown here too, at that place.
        for d in compiled.diagnostics.iter().filter(|d| d.loc.file as usize != file) {
            for (loc, label) in d.labels.iter().filter(|(loc, _)| loc.file as usize == file) {
                let mut here = policy_diagnostic(ws, source, d);
                here.range = range(ws, source, loc.span);
                here.message = format!("{} ({label})", here.message);
                out.push(here);
            }
        }
        return out;
    }
    if !is_document(uri) || !owner.judged() {
        return Vec::new();
    }
    if compiled.has_errors() {
        let n = compiled.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
        let mut d = Diagnostic::new_simple(
            Range::default(),
            format!(
                "the policy does not compile ({n} error{}), so this document is not checked",
                if n == 1 { "" } else { "s" }
            ),
        );
        d.severity = Some(DiagnosticSeverity::WARNING);
        d.source = Some("grail".into());
        d.code = Some(NumberOrString::String("policy".into()));
        return vec![d];
    }
    let Some((deployment, allowed)) = ws.checked_in(uri) else { return Vec::new() };
    if ws.deployment_of(uri).is_some() {
        // A deployment that holds two documents of a kind allowed once is refused, as
        // `grail check` refuses it: said at both documents, and nothing else checked.
        let docs = deployment.documents(&ws.db);
        let crowded = grail_engine::db::crowded_deployment(&ws.db, ws.set, deployment);
        if !crowded.is_empty() {
            let name = |i: u32| docs.get(i as usize).map(|d| d.path(&ws.db).clone()).unwrap_or_default();
            return crowded
                .iter()
                .flat_map(|c| [(c, c.first), (c, c.second)])
                .filter(|(_, (d, _))| docs.get(*d as usize) == Some(&source))
                .map(|(c, (_, span))| Diagnostic {
                    range: range(ws, source, grail_lang::ast::Span::new(span.start, span.start)),
                    severity: Some(DiagnosticSeverity::ERROR),
                    code: Some(NumberOrString::String("at-most-one".into())),
                    source: Some("grail".into()),
                    message: format!(
                        "this deployment holds two `{}` documents, `{}` and `{}`; one check holds at most one, so none is checked\nhelp: put each in a deployment of its own in grail.toml",
                        c.kind,
                        name(c.first.0),
                        name(c.second.0)
                    ),
                    ..Diagnostic::default()
                })
                .collect();
        }
        return findings(ws, uri, source, deployment, allowed);
    }
    let mut out = Vec::new();
    // A Markdown file is a work item only with the marker line a Markdown kind
    // of the policy names; any other Markdown file (a README) is not checked.
    // A line that is nearly a marker is said, and the file checked as `grail check` would.
    if grail_engine::check::is_markdown(source.path(&ws.db)) {
        match ide::markdown_marker(&ws.db, ws.set, source) {
            ide::Marker::Marked { .. } => {}
            ide::Marker::Unmarked => return Vec::new(),
            ide::Marker::NearMiss { span, marker, .. } => out.push(Diagnostic {
                range: range(ws, source, span),
                severity: Some(DiagnosticSeverity::WARNING),
                code: Some(NumberOrString::String("marker".into())),
                source: Some("grail".into()),
                message: format!(
                    "this line is nearly the work-item marker `{marker}`, but not it: the file is read as a \
                     work item without its marker\nhelp: write the marker line exactly `{marker}`"
                ),
                ..Diagnostic::default()
            }),
        }
    }
    out.extend(findings(ws, uri, source, deployment, allowed));
    out
}

/// The findings of `deployment` that `grail check` reports (FAIL and
/// UNKNOWN) located in `source`, as diagnostics; one of the deployment as a
/// whole is shown on its first document.
fn findings(ws: &Workspace, uri: &Uri, source: SourceText, deployment: Deployment, allowed: bool) -> Vec<Diagnostic> {
    let report = check_deployment(&ws.db, ws.set, deployment);
    let first = deployment.documents(&ws.db).first().copied();
    report
        .findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
        .filter(|f| match f.location {
            Some((d, _)) => report.documents.get(d as usize) == Some(&source),
            None => first == Some(source),
        })
        .map(|f| finding(ws, uri, source, &report.documents, f, allowed))
        .collect()
}

/// The severity of a finding, as `grail check` weighs it: a FAIL fails the
/// check, and so does an UNKNOWN (missing evidence) unless the caller
/// allows it (`allow_unknown` in grail.toml), when it is a warning, as the
/// report of `grail check --allow-unknown` calls it.
pub fn severity(outcome: Outcome, allowed: bool) -> DiagnosticSeverity {
    match outcome {
        Outcome::Unknown if allowed => DiagnosticSeverity::WARNING,
        Outcome::Fail | Outcome::Unknown => DiagnosticSeverity::ERROR,
        Outcome::Pass | Outcome::NotApplicable => DiagnosticSeverity::HINT,
    }
}

/// What the server says of a document on its first line (a code lens): whose
/// it is. `None` for a document it does not judge.
pub fn owner_lens(ws: &Workspace, owner: &Owner) -> Option<lsp::CodeLens> {
    let file = grail_workspace::FILE_NAME;
    let title = match owner {
        Owner::Member { deployment, layer, kind } => {
            let kind = kind.as_ref().map(|k| format!("`{k}` ")).unwrap_or_default();
            let layer = layer.as_ref().map(|l| format!(", layer `{l}`")).unwrap_or_default();
            format!("grail: {kind}of deployment `{deployment}`{layer} ({file})")
        }
        Owner::Alone { kind } => {
            let why = match &ws.config {
                Config::Loaded => format!("no deployment of {file} names it"),
                Config::Missing => format!("no {file}"),
                Config::Invalid { .. } => format!("{file} cannot be used"),
            };
            format!("grail: `{kind}`, checked alone ({why})")
        }
        Owner::Claimed(_) | Owner::NotGrails => return None,
    };
    Some(lsp::CodeLens {
        range: Range::default(),
        // A title with no command to run: it says, it does nothing when clicked.
        command: Some(lsp::Command { title, command: String::new(), arguments: None }),
        data: None,
    })
}

/// The diagnostic of a workspace file that cannot be used, at its place.
fn workspace_file(ws: &Workspace, uri: &Uri) -> Vec<Diagnostic> {
    let Config::Invalid { path, error } = &ws.config else { return Vec::new() };
    if Uri::from_file_path(path).as_ref() != Some(uri) {
        return Vec::new();
    }
    let (message, span, text) = match error {
        grail_workspace::Error::Invalid { text, error, .. } => {
            let help = error.help.as_ref().map(|h| format!("\nhelp: {h}")).unwrap_or_default();
            (format!("{}{help}", error.message), error.span.unwrap_or_default(), text.as_str())
        }
        grail_workspace::Error::Read { .. } => (error.summary(), Span::default(), ""),
    };
    vec![Diagnostic {
        range: LineIndex::new(text).range(text, span),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String("workspace".into())),
        source: Some("grail".into()),
        message,
        ..Diagnostic::default()
    }]
}

fn policy_diagnostic(ws: &Workspace, source: SourceText, d: &PolicyDiagnostic) -> Diagnostic {
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter_map(|(loc, label)| {
            Some(DiagnosticRelatedInformation { location: policy_location(ws, *loc)?, message: label.clone() })
        })
        .collect();
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    Diagnostic {
        range: range(ws, source, d.loc.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("grail".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

/// A finding of a document as a diagnostic; `documents` are those the
/// finding's locations index (the deployment's, attachments included);
/// `allowed`: its deployment allows UNKNOWN outcomes.
pub fn finding(
    ws: &Workspace,
    uri: &Uri,
    source: SourceText,
    documents: &[SourceText],
    f: &Finding,
    allowed: bool,
) -> Diagnostic {
    let mut related = Vec::new();
    if let Some(location) = f.policy.and_then(|loc| policy_location(ws, loc)) {
        related.push(DiagnosticRelatedInformation { location, message: format!("rule `{}` is declared here", f.rule) });
    }
    for (d, span, label) in &f.labels {
        let Some(doc) = documents.get(*d as usize).copied() else { continue };
        let target = if doc == source { Some(uri.clone()) } else { ws.uri_of(doc) };
        let Some(target) = target else { continue };
        related.push(DiagnosticRelatedInformation {
            location: Location::new(target, range(ws, doc, *span)),
            message: label.clone(),
        });
    }
    let span = f.location.map(|(_, s)| s).unwrap_or_default();
    Diagnostic {
        range: range(ws, source, span),
        severity: Some(severity(f.outcome, allowed)),
        code: Some(NumberOrString::String(f.rule.clone())),
        source: Some("grail".into()),
        message: f.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

pub fn text_edit(ws: &Workspace, source: SourceText, e: &TextEdit) -> lsp::TextEdit {
    lsp::TextEdit { range: range(ws, source, e.span), new_text: e.text.clone() }
}

pub fn completion(ws: &Workspace, source: SourceText, replace: Span, c: &Completion) -> CompletionItem {
    let kind = match c.kind {
        CompletionKind::Field => CompletionItemKind::FIELD,
        CompletionKind::Variant => CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Value => CompletionItemKind::VALUE,
        CompletionKind::Enum => CompletionItemKind::ENUM,
        CompletionKind::Record => CompletionItemKind::STRUCT,
        CompletionKind::Matrix => CompletionItemKind::CONSTANT,
        CompletionKind::Function => CompletionItemKind::FUNCTION,
        CompletionKind::Column => CompletionItemKind::PROPERTY,
        CompletionKind::Variable => CompletionItemKind::VARIABLE,
    };
    CompletionItem {
        label: c.label.clone(),
        kind: Some(kind),
        detail: (!c.detail.is_empty()).then(|| c.detail.clone()),
        documentation: (!c.docs.is_empty())
            .then(|| Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: c.docs.clone() })),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: range(ws, source, replace),
            new_text: c.insert.clone(),
        })),
        // What the client compares with the typed word: the inserted text, quotes included.
        filter_text: Some(c.insert.trim_end().trim_end_matches(':').to_string()),
        ..CompletionItem::default()
    }
}

pub fn symbol_kind(kind: ide::SymbolKind) -> lsp::SymbolKind {
    match kind {
        ide::SymbolKind::Enum => lsp::SymbolKind::ENUM,
        ide::SymbolKind::Variant => lsp::SymbolKind::ENUM_MEMBER,
        ide::SymbolKind::Record => lsp::SymbolKind::STRUCT,
        ide::SymbolKind::Field => lsp::SymbolKind::FIELD,
        ide::SymbolKind::Matrix => lsp::SymbolKind::CONSTANT,
        ide::SymbolKind::Column => lsp::SymbolKind::PROPERTY,
        ide::SymbolKind::Function => lsp::SymbolKind::FUNCTION,
        ide::SymbolKind::Rule => lsp::SymbolKind::EVENT,
    }
}

/// An outline entry as a document symbol.
pub fn outline(ws: &Workspace, source: SourceText, item: &ide::OutlineItem) -> lsp::DocumentSymbol {
    #[allow(deprecated)]
    lsp::DocumentSymbol {
        name: item.name.clone(),
        detail: None,
        kind: symbol_kind(item.kind),
        tags: None,
        deprecated: None,
        range: range(ws, source, item.span),
        selection_range: range(ws, source, item.name_span),
        children: (!item.children.is_empty()).then(|| item.children.iter().map(|c| outline(ws, source, c)).collect()),
    }
}

/// The token types of the semantic tokens legend, in the order their indices name them.
pub const TOKEN_TYPES: [lsp::SemanticTokenType; 11] = [
    lsp::SemanticTokenType::KEYWORD,
    // A rule id: a namespaced name (`topology.checker_count`), which themes colour.
    lsp::SemanticTokenType::NAMESPACE,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::OPERATOR,
];

/// The token modifiers of the legend: bit 0 and bit 1 of a token's modifiers.
pub const TOKEN_MODIFIERS: [lsp::SemanticTokenModifier; 2] =
    [lsp::SemanticTokenModifier::DECLARATION, lsp::SemanticTokenModifier::DOCUMENTATION];

pub fn token_legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend { token_types: TOKEN_TYPES.to_vec(), token_modifiers: TOKEN_MODIFIERS.to_vec() }
}

fn token_type(kind: ide::TokenKind) -> u32 {
    match kind {
        ide::TokenKind::Keyword => 0,
        ide::TokenKind::Rule => 1,
        ide::TokenKind::Function => 2,
        ide::TokenKind::Type => 3,
        ide::TokenKind::EnumMember => 4,
        ide::TokenKind::Field => 5,
        ide::TokenKind::Variable => 6,
        ide::TokenKind::String => 7,
        ide::TokenKind::Number => 8,
        ide::TokenKind::Comment => 9,
        ide::TokenKind::Operator => 10,
    }
}

/// Semantic tokens in the protocol's encoding: each token's line and start
/// relative to the previous token's, lengths in UTF-16 code units.
pub fn semantic_tokens(text: &str, tokens: &[ide::Token]) -> Vec<lsp::SemanticToken> {
    let lines = LineIndex::new(text);
    let mut out = Vec::with_capacity(tokens.len());
    let mut previous = lsp::Position::new(0, 0);
    for t in tokens {
        let range = lines.range(text, t.span);
        // INVARIANT: the engine's tokens lie on one line each; one that does not is left out.
        if range.start.line != range.end.line || range.end.character <= range.start.character {
            continue;
        }
        let delta_line = range.start.line - previous.line;
        let delta_start =
            if delta_line == 0 { range.start.character - previous.character } else { range.start.character };
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length: range.end.character - range.start.character,
            token_type: token_type(t.kind),
            token_modifiers_bitset: u32::from(t.declaration) | (u32::from(t.documentation) << 1),
        });
        previous = range.start;
    }
    out
}

/// An inlay hint of a document, set apart from the text before it.
pub fn inlay_hint(ws: &Workspace, source: SourceText, h: &ide::InlayHint) -> lsp::InlayHint {
    let text = source.text(&ws.db);
    lsp::InlayHint {
        position: LineIndex::new(text).position(text, h.offset),
        label: lsp::InlayHintLabel::String(h.label.clone()),
        kind: None,
        text_edits: None,
        tooltip: Some(lsp::InlayHintTooltip::MarkupContent(MarkupContent {
            kind: MarkupKind::Markdown,
            value: h.tooltip.clone(),
        })),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    }
}
