//! The engine's data as protocol types: diagnostics, locations, completions,
//! edits. Positions go through [`crate::position`].

use grail_engine::db::{check_document, compile_policy};
use grail_engine::hir::{Loc, SelectorDef};
use grail_engine::ide::{Completion, CompletionKind, TextEdit};
use grail_engine::{Finding, Outcome, PolicyDiagnostic, Severity, SourceText};
use grail_lang::ast::Span;
use tower_lsp_server::ls_types::{
    self as lsp, CompletionItem, CompletionItemKind, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity,
    Documentation, Location, MarkupContent, MarkupKind, NumberOrString, Range, Uri,
};

use crate::position::LineIndex;
use crate::workspace::{Workspace, is_document};

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

/// The diagnostics of a file: a policy file's compile diagnostics, or a
/// document's failing and unknown findings.
pub fn diagnostics(ws: &Workspace, uri: &Uri) -> Vec<Diagnostic> {
    let Some(source) = ws.source(uri) else { return Vec::new() };
    let compiled = compile_policy(&ws.db, ws.set);
    if let Some(file) = ws.set.files(&ws.db).iter().position(|f| *f == source) {
        return compiled
            .diagnostics
            .iter()
            .filter(|d| d.loc.file as usize == file)
            .map(|d| policy_diagnostic(ws, source, d))
            .collect();
    }
    if !is_document(uri) {
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
    // A Markdown file is a work item only with the marker line a Markdown kind
    // of the policy names; any other Markdown file (a README) is not checked.
    if grail_engine::check::is_markdown(source.path(&ws.db)) {
        let text = source.text(&ws.db);
        let marked = compiled.policy.documents.iter().any(|d| match &d.selector {
            SelectorDef::Markdown { marker, .. } => text.lines().any(|l| l.trim() == marker),
            _ => false,
        });
        if !marked {
            return Vec::new();
        }
    }
    check_document(&ws.db, ws.set, source)
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
        .map(|f| finding(ws, uri, source, f))
        .collect()
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

/// A finding of a document as a diagnostic.
pub fn finding(ws: &Workspace, uri: &Uri, source: SourceText, f: &Finding) -> Diagnostic {
    let mut related = Vec::new();
    if let Some(location) = f.policy.and_then(|loc| policy_location(ws, loc)) {
        related.push(DiagnosticRelatedInformation { location, message: format!("rule `{}` is declared here", f.rule) });
    }
    for (_, span, label) in &f.labels {
        related.push(DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), range(ws, source, *span)),
            message: label.clone(),
        });
    }
    let span = f.location.map(|(_, s)| s).unwrap_or_default();
    Diagnostic {
        range: range(ws, source, span),
        severity: Some(if f.outcome == Outcome::Fail {
            DiagnosticSeverity::ERROR
        } else {
            DiagnosticSeverity::WARNING
        }),
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
