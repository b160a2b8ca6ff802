//! The protocol handlers. Each converts positions, calls one engine query and
//! converts back; none holds logic of its own.
//!
//! The workspace sits behind one mutex and the server handles one message at
//! a time (see [`crate::serve`]), so edits apply in the order they are sent.
//! Engine calls run under [`guarded`]: a panic in a query becomes an error
//! answer and a log message, never a crash.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use grail_engine::db::check_document;
use grail_engine::{Database, Outcome, ide};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::convert;
use crate::position::LineIndex;
use crate::workspace::{Changed, Workspace, is_document, is_policy};

pub struct Backend {
    client: Client,
    workspace: Arc<Mutex<Workspace>>,
    /// Whether the client lets the server ask to be told of changes to `.grail` files on disk.
    watch_files: AtomicBool,
    /// Counts policy edits: a re-check of the open documents stops when a newer edit arrives.
    generation: Arc<AtomicU64>,
    /// The files whose last published diagnostics were not empty: after a
    /// change of the policy or the workspace file, those no longer judged are cleared.
    shown: Arc<Mutex<HashSet<Uri>>>,
    /// Whether the client lets the server ask it to fetch code lenses again.
    refresh_lenses: AtomicBool,
}

/// Runs `f` on the workspace; a panic becomes `None` and a log message.
async fn guarded<T>(
    client: &Client,
    workspace: &Mutex<Workspace>,
    what: &str,
    f: impl FnOnce(&mut Workspace) -> T,
) -> Option<T> {
    let result = {
        // A panic while the lock was held leaves the inputs as they were set; go on with them.
        let mut ws = workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        catch_unwind(AssertUnwindSafe(|| f(&mut ws)))
    };
    match result {
        Ok(v) => Some(v),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            client.log_message(MessageType::ERROR, format!("grail: {what} failed: {message}")).await;
            None
        }
    }
}

/// Computes and publishes the diagnostics of `uris`, one at a time (an
/// empty list for a file the server does not judge, which clears what it showed).
async fn publish_each(
    client: &Client,
    workspace: &Mutex<Workspace>,
    shown: &Mutex<HashSet<Uri>>,
    uris: Vec<Uri>,
    stale: impl Fn() -> bool,
) {
    for uri in uris {
        if stale() {
            return;
        }
        let computed = guarded(client, workspace, "diagnostics", |ws| {
            let owner = ws.owner(&uri);
            (convert::diagnostics(ws, &uri, &owner), ws.version(&uri))
        });
        if let Some((diagnostics, version)) = computed.await {
            {
                let mut shown = shown.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if diagnostics.is_empty() {
                    shown.remove(&uri);
                } else {
                    shown.insert(uri.clone());
                }
            }
            client.publish_diagnostics(uri, diagnostics, version).await;
        }
        // Let the messages that arrived meanwhile be read.
        tokio::task::yield_now().await;
    }
}

impl Backend {
    pub fn new(client: Client, db: Database) -> Backend {
        Backend {
            client,
            workspace: Arc::new(Mutex::new(Workspace::new(db))),
            watch_files: AtomicBool::new(false),
            generation: Arc::new(AtomicU64::new(0)),
            shown: Arc::new(Mutex::new(HashSet::new())),
            refresh_lenses: AtomicBool::new(false),
        }
    }

    async fn guarded<T>(&self, what: &str, f: impl FnOnce(&mut Workspace) -> T) -> Option<T> {
        guarded(&self.client, &self.workspace, what, f).await
    }

    /// Publishes the diagnostics that a change affects. After a policy edit,
    /// the policy files' come at once and the open documents' in a task of
    /// their own, which a newer policy edit stops.
    async fn publish(&self, changed: Changed) {
        match changed {
            Changed::Nothing => {}
            Changed::Document(_) | Changed::Deployment(_) => {
                // The document, or every member (an edit in one file changes what is shown in the
                // others), then the files the check attaches, where some findings are located,
                // and those shown before only for what attached them (which may no longer).
                let uris = self.with_attached(&changed).await;
                publish_each(&self.client, &self.workspace, &self.shown, uris, || false).await;
            }
            Changed::Policy => {
                let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
                let (policy, mut documents) = self
                    .guarded("diagnostics", |ws| {
                        let mut policy = ws.policy_uris();
                        policy.extend(ws.workspace_file_uri());
                        let mut documents = ws.all_members();
                        documents.extend(ws.open_documents());
                        for uri in ws.attached_uris(&Changed::Policy).into_iter().chain(ws.take_detached()) {
                            if !documents.contains(&uri) {
                                documents.push(uri);
                            }
                        }
                        (policy, documents)
                    })
                    .await
                    .unwrap_or_default();
                // A file shown with diagnostics that is no longer a member nor open (the
                // workspace file stopped naming it): published again, empty.
                let before: Vec<Uri> =
                    self.shown.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).iter().cloned().collect();
                for uri in before {
                    if !policy.contains(&uri) && !documents.contains(&uri) {
                        documents.push(uri);
                    }
                }
                publish_each(&self.client, &self.workspace, &self.shown, policy, || false).await;
                if self.refresh_lenses.load(Ordering::Relaxed) {
                    // Whose each document is may have changed with the workspace file.
                    let _ = self.client.code_lens_refresh().await;
                }
                let (client, workspace, shown, current) =
                    (self.client.clone(), self.workspace.clone(), self.shown.clone(), self.generation.clone());
                tokio::spawn(async move {
                    let stale = || current.load(Ordering::SeqCst) != generation;
                    publish_each(&client, &workspace, &shown, documents, stale).await;
                });
            }
        }
    }

    /// The files to publish after `changed`: its own, then the files its
    /// check attaches, then those a check stopped attaching, and any other
    /// file shown before for an attachment alone that no check attaches now.
    /// (The files other checks attach are left alone: `changed` moves none
    /// of their findings, and publishing them all after every edit made an
    /// edit's cost grow with the number of open documents.)
    async fn with_attached(&self, changed: &Changed) -> Vec<Uri> {
        let shown: Vec<Uri> =
            self.shown.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).iter().cloned().collect();
        self.guarded("diagnostics", |ws| {
            let mut uris = match changed {
                Changed::Document(uri) => vec![uri.clone()],
                Changed::Deployment(k) => ws.members(*k),
                _ => Vec::new(),
            };
            let attached = ws.attached_anywhere();
            let stray: Vec<Uri> = shown.into_iter().filter(|u| !ws.is_own(u) && !attached.contains(u)).collect();
            for uri in ws.attached_uris(changed).into_iter().chain(ws.take_detached()).chain(stray) {
                if !uris.contains(&uri) {
                    uris.push(uri);
                }
            }
            uris
        })
        .await
        .unwrap_or_default()
    }

    /// The engine source and byte offset of a position in an open file the
    /// server answers for (a policy file, or a document it judges).
    fn at(ws: &mut Workspace, uri: &Uri, position: Position) -> Option<(grail_engine::SourceText, usize)> {
        let source = ws.judged_source(uri)?;
        let text = source.text(&ws.db);
        Some((source, LineIndex::new(text).offset(text, position)))
    }
}

/// The code action kind of every fix of a document at once.
const FIX_ALL: &str = "source.fixAll.grail";

/// Whether the client asks for actions of `kind`: it asks for all, or for a
/// kind that `kind` is or refines (`source` and `source.fixAll` take `source.fixAll.grail`).
fn wanted(only: &Option<Vec<CodeActionKind>>, kind: &CodeActionKind) -> bool {
    let kind = kind.as_str();
    only.as_ref().is_none_or(|only| {
        only.iter().any(|o| kind == o.as_str() || kind.strip_prefix(o.as_str()).is_some_and(|r| r.starts_with('.')))
    })
}

fn internal(what: &str) -> Error {
    let mut e = Error::internal_error();
    e.message = format!("grail: {what} failed").into();
    e
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let mut roots: Vec<std::path::PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .collect();
        #[allow(deprecated)]
        if roots.is_empty()
            && let Some(p) = params.root_uri.as_ref().and_then(|u| u.to_file_path())
        {
            roots.push(p.into_owned());
        }
        let watch = params.capabilities.workspace.as_ref().and_then(|w| w.did_change_watched_files.as_ref());
        self.watch_files.store(watch.and_then(|w| w.dynamic_registration).unwrap_or(false), Ordering::Relaxed);
        let lenses = params.capabilities.workspace.as_ref().and_then(|w| w.code_lens.as_ref());
        self.refresh_lenses.store(lenses.and_then(|l| l.refresh_support).unwrap_or(false), Ordering::Relaxed);
        self.guarded("initialize", |ws| ws.set_roots(roots)).await.ok_or_else(|| internal("initialize"))?;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::INCREMENTAL)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                signature_help_provider: Some(SignatureHelpOptions {
                    trigger_characters: Some(vec!["(".into(), ",".into()]),
                    retrigger_characters: None,
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![".".into(), ":".into()]),
                    ..CompletionOptions::default()
                }),
                document_formatting_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                document_link_provider: Some(DocumentLinkOptions {
                    resolve_provider: Some(false),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
                    SemanticTokensOptions {
                        legend: convert::token_legend(),
                        range: Some(false),
                        full: Some(SemanticTokensFullOptions::Bool(true)),
                        work_done_progress_options: WorkDoneProgressOptions::default(),
                    },
                )),
                inlay_hint_provider: Some(OneOf::Left(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::from(FIX_ALL)]),
                    ..CodeActionOptions::default()
                })),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo { name: "grail".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if self.watch_files.load(Ordering::Relaxed) {
            // Policy files, the workspace file, and the documents of its deployments and their attachments.
            let globs = ["**/*.grail", "**/grail.toml", "**/*.{json,jsonl,yaml,yml,md,markdown}"];
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: globs
                    .iter()
                    .map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String((*g).into()), kind: None })
                    .collect(),
            };
            let registration = Registration {
                id: "grail-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                self.client.log_message(MessageType::WARNING, format!("grail: cannot watch policy files: {e}")).await;
            }
        }
        // Said once, not as a diagnostic on every file.
        if let Some((kind, message)) = self.guarded("initialized", |ws| ws.config_message()).await.flatten() {
            self.client.show_message(kind, message).await;
        }
        // Policy files and deployments on disk have diagnostics before anyone opens them.
        self.publish(Changed::Policy).await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let changed = self.guarded("didOpen", |ws| ws.open(doc.uri, doc.text, doc.version)).await;
        self.publish(changed.unwrap_or(Changed::Nothing)).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let doc = params.text_document;
        let changed = self.guarded("didChange", |ws| ws.change(&doc.uri, params.content_changes, doc.version)).await;
        self.publish(changed.unwrap_or(Changed::Nothing)).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let changed = self.guarded("didClose", |ws| ws.close(&uri)).await.unwrap_or(Changed::Nothing);
        if let Changed::Document(uri) = &changed {
            // A closed document is no longer checked: clear what was shown, of it and of what it attached.
            self.shown.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(uri);
            self.client.publish_diagnostics(uri.clone(), Vec::new(), None).await;
            let stray = self.with_attached(&Changed::Nothing).await;
            publish_each(&self.client, &self.workspace, &self.shown, stray, || false).await;
        } else {
            self.publish(changed).await;
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let mut policy = false;
        let mut deployments = Vec::new();
        for change in params.changes {
            match self.guarded("didChangeWatchedFiles", |ws| ws.file_changed_on_disk(&change.uri)).await {
                Some(Changed::Policy) => policy = true,
                Some(Changed::Deployment(k)) if !deployments.contains(&k) => deployments.push(k),
                _ => {}
            }
        }
        if policy {
            self.publish(Changed::Policy).await;
        } else {
            for k in deployments {
                self.publish(Changed::Deployment(k)).await;
            }
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        self.guarded("hover", |ws| {
            let (source, offset) = Self::at(ws, &p.text_document.uri, p.position)?;
            let h = ide::hover(&ws.db, ws.set, source, offset)?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: h.markdown }),
                range: Some(convert::range(ws, source, h.span)),
            })
        })
        .await
        .ok_or_else(|| internal("hover"))
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let p = params.text_document_position_params;
        self.guarded("signatureHelp", |ws| {
            let (source, offset) = Self::at(ws, &p.text_document.uri, p.position)?;
            let help = ide::signature_help(&ws.db, ws.set, source, offset)?;
            let signatures = help
                .signatures
                .iter()
                .map(|label| {
                    let parameters = grail_engine::builtins::parameters(label)
                        .into_iter()
                        .map(|p| ParameterInformation {
                            label: ParameterLabel::Simple(p.to_string()),
                            documentation: None,
                        })
                        .collect();
                    SignatureInformation {
                        label: label.clone(),
                        documentation: Some(Documentation::MarkupContent(MarkupContent {
                            kind: MarkupKind::Markdown,
                            value: help.doc.clone(),
                        })),
                        parameters: Some(parameters),
                        active_parameter: None,
                    }
                })
                .collect();
            Some(SignatureHelp { signatures, active_signature: Some(0), active_parameter: Some(help.argument as u32) })
        })
        .await
        .ok_or_else(|| internal("signatureHelp"))
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        self.guarded("definition", |ws| {
            let (source, offset) = Self::at(ws, &p.text_document.uri, p.position)?;
            let locations: Vec<Location> = ide::definition(&ws.db, ws.set, source, offset)
                .into_iter()
                .filter_map(|loc| convert::policy_location(ws, loc))
                .collect();
            (!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations))
        })
        .await
        .ok_or_else(|| internal("definition"))
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let include = params.context.include_declaration;
        self.guarded("references", |ws| {
            let (source, offset) = Self::at(ws, &p.text_document.uri, p.position)?;
            let locations: Vec<Location> = ide::references(&ws.db, ws.set, source, offset, include)
                .into_iter()
                .filter_map(|loc| convert::policy_location(ws, loc))
                .collect();
            Some(locations)
        })
        .await
        .ok_or_else(|| internal("references"))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        self.guarded("completion", |ws| {
            let (source, offset) = Self::at(ws, &p.text_document.uri, p.position)?;
            let c = ide::completions(&ws.db, ws.set, source, offset)?;
            let items = c.items.iter().map(|i| convert::completion(ws, source, c.replace, i)).collect();
            Some(CompletionResponse::List(CompletionList { is_incomplete: false, items }))
        })
        .await
        .ok_or_else(|| internal("completion"))
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let uri = params.text_document.uri;
        self.guarded("formatting", |ws| {
            // The formatter of `grail fmt`; a file that does not parse is left as it is.
            let source = ws.source(&uri).filter(|_| is_policy(&uri))?;
            let text = source.text(&ws.db);
            let formatted = grail_lang::format(text).ok()?;
            if formatted == *text {
                return Some(Vec::new());
            }
            let range = convert::range(ws, source, grail_lang::ast::Span::new(0, text.len()));
            Some(vec![TextEdit { range, new_text: formatted }])
        })
        .await
        .ok_or_else(|| internal("formatting"))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let range = params.range;
        let only = params.context.only;
        self.guarded("codeAction", |ws| {
            let source = ws.judged_source(&uri)?;
            let text = source.text(&ws.db);
            // The whole lines of the range: a fix is offered wherever the cursor is on the finding's line.
            let lines = LineIndex::new(text);
            let requested =
                lines.span(text, Range::new(Position::new(range.start.line, 0), Position::new(range.end.line + 1, 0)));
            let mut actions = Vec::new();
            // Fixes are found and proved on the document alone (`ide::fixes`); the diagnostics
            // they name have the severity the document's deployment gives them.
            let allowed = ws.checked_in(&uri).is_some_and(|(_, allowed)| allowed);
            let documents = [source];
            let edit = |edits: &[ide::TextEdit]| WorkspaceEdit {
                changes: Some(HashMap::from([(
                    uri.clone(),
                    edits.iter().map(|e| convert::text_edit(ws, source, e)).collect(),
                )])),
                ..WorkspaceEdit::default()
            };
            let findings = if wanted(&only, &CodeActionKind::QUICKFIX) {
                check_document(&ws.db, ws.set, source).as_slice()
            } else {
                &[]
            };
            for f in findings {
                let Some((_, span)) = f.location else { continue };
                let overlaps = span.start < requested.end.max(requested.start + 1) && requested.start <= span.end;
                if !overlaps || !matches!(f.outcome, Outcome::Fail | Outcome::Unknown) {
                    continue;
                }
                for fix in ide::fixes(&ws.db, ws.set, source, f) {
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: fix.title,
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![convert::finding(ws, &uri, source, &documents, f, allowed)]),
                        edit: Some(edit(&fix.edits)),
                        is_preferred: Some(true),
                        ..CodeAction::default()
                    }));
                }
            }
            let fix_all = CodeActionKind::from(FIX_ALL);
            if wanted(&only, &fix_all)
                && !is_policy(&uri)
                && let Some((fix, fixed)) = ide::fix_all(&ws.db, ws.set, source)
            {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: fix.title,
                    kind: Some(fix_all),
                    diagnostics: Some(
                        fixed.iter().map(|f| convert::finding(ws, &uri, source, &documents, f, allowed)).collect(),
                    ),
                    edit: Some(edit(&fix.edits)),
                    ..CodeAction::default()
                }));
            }
            Some(actions)
        })
        .await
        .ok_or_else(|| internal("codeAction"))
    }

    async fn semantic_tokens_full(&self, params: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri;
        self.guarded("semanticTokens", |ws| {
            let source = ws.source(&uri).filter(|_| is_policy(&uri))?;
            let tokens = ide::semantic_tokens(&ws.db, ws.set, source);
            let data = convert::semantic_tokens(source.text(&ws.db), &tokens);
            Some(SemanticTokensResult::Tokens(SemanticTokens { result_id: None, data }))
        })
        .await
        .ok_or_else(|| internal("semanticTokens"))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let range = params.range;
        self.guarded("inlayHint", |ws| {
            let source = ws.judged_source(&uri).filter(|_| is_document(&uri))?;
            let deployment = ws.deployment_of(&uri).map(|(d, _)| d);
            let text = source.text(&ws.db);
            let wanted = LineIndex::new(text).span(text, range);
            let hints = ide::inlay_hints(&ws.db, ws.set, source, deployment)
                .iter()
                .filter(|h| wanted.start <= h.offset && h.offset <= wanted.end)
                .map(|h| convert::inlay_hint(ws, source, h))
                .collect();
            Some(hints)
        })
        .await
        .ok_or_else(|| internal("inlayHint"))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        self.guarded("codeLens", |ws| {
            let owner = ws.owner(&uri);
            Some(convert::owner_lens(ws, &owner).into_iter().collect())
        })
        .await
        .ok_or_else(|| internal("codeLens"))
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        self.guarded("documentSymbol", |ws| {
            let file = ws.policy_file(&uri)?;
            let source = ws.source(&uri)?;
            let items = ide::outline(&ws.db, ws.set, file);
            Some(DocumentSymbolResponse::Nested(items.iter().map(|i| convert::outline(ws, source, i)).collect()))
        })
        .await
        .ok_or_else(|| internal("documentSymbol"))
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        self.guarded("workspaceSymbol", |ws| {
            let found = ide::workspace_symbols(&ws.db, ws.set, &params.query);
            #[allow(deprecated)]
            let symbols: Vec<SymbolInformation> = found
                .iter()
                .filter_map(|s| {
                    Some(SymbolInformation {
                        name: s.name.clone(),
                        kind: convert::symbol_kind(s.kind),
                        tags: None,
                        deprecated: None,
                        location: convert::policy_location(ws, s.loc)?,
                        container_name: s.container.clone(),
                    })
                })
                .collect();
            Some(WorkspaceSymbolResponse::Flat(symbols))
        })
        .await
        .ok_or_else(|| internal("workspaceSymbol"))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let uri = params.text_document.uri;
        self.guarded("foldingRange", |ws| {
            let file = ws.policy_file(&uri)?;
            let source = ws.source(&uri)?;
            let folds = ide::folds(&ws.db, ws.set, file)
                .into_iter()
                .map(|span| {
                    let r = convert::range(ws, source, span);
                    FoldingRange {
                        start_line: r.start.line,
                        end_line: r.end.line,
                        kind: Some(FoldingRangeKind::Region),
                        ..FoldingRange::default()
                    }
                })
                .collect();
            Some(folds)
        })
        .await
        .ok_or_else(|| internal("foldingRange"))
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> Result<Option<PrepareRenameResponse>> {
        self.guarded("prepareRename", |ws| {
            let file = ws.policy_file(&params.text_document.uri)?;
            let (source, offset) = Self::at(ws, &params.text_document.uri, params.position)?;
            let (_, span) = ide::rename_target(&ws.db, ws.set, file, offset)?;
            Some(PrepareRenameResponse::Range(convert::range(ws, source, span)))
        })
        .await
        .ok_or_else(|| internal("prepareRename"))
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let p = params.text_document_position;
        let new_name = params.new_name;
        let answer = self
            .guarded("rename", |ws| {
                let Some(file) = ws.policy_file(&p.text_document.uri) else { return Ok(None) };
                let Some((_, offset)) = Self::at(ws, &p.text_document.uri, p.position) else { return Ok(None) };
                let locs = ide::rename(&ws.db, ws.set, file, offset, &new_name)?;
                let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
                for loc in locs {
                    let Some(location) = convert::policy_location(ws, loc) else { continue };
                    changes
                        .entry(location.uri)
                        .or_default()
                        .push(TextEdit { range: location.range, new_text: new_name.clone() });
                }
                Ok(Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }))
            })
            .await
            .ok_or_else(|| internal("rename"))?;
        answer.map_err(|e: ide::RenameError| Error::invalid_params(e.0))
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        let uri = params.text_document.uri;
        self.guarded("documentLink", |ws| {
            let source = ws.judged_source(&uri)?;
            let folder = uri.to_file_path()?.parent()?.to_path_buf();
            let links = ide::document_links(&ws.db, ws.set, source)
                .into_iter()
                .map(|(span, path)| DocumentLink {
                    range: convert::range(ws, source, span),
                    target: Uri::from_file_path(folder.join(&path)),
                    tooltip: Some(format!("open `{path}`")),
                    data: None,
                })
                .collect();
            Some(links)
        })
        .await
        .ok_or_else(|| internal("documentLink"))
    }
}
