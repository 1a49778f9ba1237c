//! `warplint server`: a language server on stdio, as `ruff server` is.
//!
//! The main loop ([`run`]) answers requests and keeps the open documents;
//! the analysis runs on one worker ([`worker`]) that waits until edits stop
//! for [`DEBOUNCE`], checks each changed document as `check` checks stdin
//! named as the file (its configuration, headers, project launches), and
//! publishes the diagnostics only if the document has not changed since
//! (a superseded result is dropped; the newer edit is already queued).
//! Code actions and hover read the last published result; "fix all" runs
//! `check --fix` on the buffer. [`convert`] turns facts into protocol values.

mod convert;
mod options;
mod worker;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, PositionEncodingKind, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Url,
    WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};

use convert::Encoding;
pub use options::ServerOptions;

/// Quiet time after an edit before the document is analysed: a burst of
/// keystrokes is analysed once, after its last edit.
const DEBOUNCE: Duration = Duration::from_millis(25);

/// The code action kind of "fix all" (`source.fixAll.warplint`).
const FIX_ALL: &str = "source.fixAll.warplint";

/// An open document: its text, its version, and what the worker last
/// published for it.
struct Document {
    version: i32,
    text: String,
    analysed: Option<worker::Analysed>,
}

/// What the main loop and the worker share.
pub struct State {
    docs: Mutex<HashMap<Url, Document>>,
    options: Mutex<ServerOptions>,
    /// Folders of the workspace (their projects' headers and launches).
    folders: Mutex<Vec<PathBuf>>,
    encoding: Encoding,
    /// `initializationOptions`, under every configuration change.
    init_options: Option<serde_json::Value>,
    /// Headers' parses and preprocessing, kept across edits (keyed by text
    /// and macro state: an edited header is a new key).
    parse_cache: Arc<warplint_analyzer::frontend::cache::ParseCache>,
}

/// Serves on stdin/stdout until the client says `exit`.
pub fn run(jobs: Option<usize>) -> ExitCode {
    let (connection, io) = Connection::stdio();
    let code = match serve(&connection, jobs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail(&format!("language server: {e}")),
    };
    drop(connection);
    let _ = io.join();
    code
}

fn serve(connection: &Connection, jobs: Option<usize>) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let utf8 = PositionEncodingKind::UTF8;
    let encoding = match params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
    {
        Some(kinds) if kinds.contains(&utf8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    };
    let (options, unknown) = ServerOptions::from_value(params.initialization_options.as_ref());
    #[allow(deprecated)] // `root_uri`: clients without workspace folders still send it
    let folders = params
        .workspace_folders
        .iter()
        .flatten()
        .map(|f| &f.uri)
        .chain(params.root_uri.as_ref())
        .filter_map(|u| u.to_file_path().ok())
        .collect::<Vec<_>>();
    let state = Arc::new(State {
        docs: Mutex::new(HashMap::new()),
        options: Mutex::new(options),
        folders: Mutex::new(folders),
        encoding,
        init_options: params.initialization_options.clone(),
        parse_cache: Arc::default(),
    });
    let result = serde_json::json!({
        "capabilities": capabilities(encoding),
        "serverInfo": { "name": "warplint", "version": env!("CARGO_PKG_VERSION") },
    });
    connection
        .initialize_finish(id, result)
        .map_err(|e| e.to_string())?;
    if !unknown.is_empty() {
        show_message(connection, &options::unknown_message(&unknown));
    }
    let (jobs_tx, jobs_rx) = mpsc::channel();
    let worker = {
        let (state, sender) = (state.clone(), connection.sender.clone());
        std::thread::Builder::new()
            .name("warplint-analysis".into())
            .stack_size(crate::MAIN_STACK_BYTES)
            .spawn(move || worker::work(&state, &sender, &jobs_rx, jobs))
            .map_err(|e| e.to_string())?
    };
    let served = main_loop(connection, &state, &jobs_tx);
    drop(jobs_tx);
    let _ = worker.join();
    served
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::new(FIX_ALL),
                CodeActionKind::SOURCE_FIX_ALL,
            ]),
            ..Default::default()
        })),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(lsp_types::OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        ..Default::default()
    }
}

/// Requests and notifications until `shutdown` and `exit`.
fn main_loop(
    connection: &Connection,
    state: &Arc<State>,
    jobs: &mpsc::Sender<worker::Job>,
) -> Result<(), String> {
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection
                    .handle_shutdown(&req)
                    .map_err(|e| e.to_string())?
                {
                    return Ok(());
                }
                let resp = request(state, req);
                let _ = connection.sender.send(resp.into());
            }
            Message::Notification(n) => notification(connection, state, jobs, n),
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn request(state: &Arc<State>, req: Request) -> Response {
    use lsp_types::request::{CodeActionRequest, HoverRequest, Request as _};
    let Request { id, method, params } = req;
    let answer = match method.as_str() {
        HoverRequest::METHOD => parse(params).map(|p| worker::hover(state, p)),
        CodeActionRequest::METHOD => parse(params).map(|p| worker::code_actions(state, p)),
        _ => {
            return Response::new_err(
                id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("warplint does not answer `{method}`"),
            )
        }
    };
    respond(id, answer)
}

fn respond(id: RequestId, answer: Result<serde_json::Value, String>) -> Response {
    match answer {
        Ok(v) => Response::new_ok(id, v),
        Err(e) => Response::new_err(id, lsp_server::ErrorCode::InvalidParams as i32, e),
    }
}

fn parse<T: serde::de::DeserializeOwned>(params: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn notification(
    connection: &Connection,
    state: &Arc<State>,
    jobs: &mpsc::Sender<worker::Job>,
    n: Notification,
) {
    use lsp_types::notification::{
        DidChangeConfiguration, DidChangeTextDocument, DidChangeWorkspaceFolders,
        DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
    };
    let recheck = |uri: Url| {
        let _ = jobs.send(worker::Job::Check(uri));
    };
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let Ok(p) = parse::<lsp_types::DidOpenTextDocumentParams>(n.params) else {
                return;
            };
            let d = p.text_document;
            lock(&state.docs).insert(
                d.uri.clone(),
                Document {
                    version: d.version,
                    text: d.text,
                    analysed: None,
                },
            );
            recheck(d.uri);
        }
        DidChangeTextDocument::METHOD => {
            let Ok(p) = parse::<lsp_types::DidChangeTextDocumentParams>(n.params) else {
                return;
            };
            let uri = p.text_document.uri;
            if let Some(doc) = lock(&state.docs).get_mut(&uri) {
                for change in p.content_changes {
                    apply_change(&mut doc.text, change, state.encoding);
                }
                doc.version = p.text_document.version;
            }
            recheck(uri);
        }
        DidSaveTextDocument::METHOD => {
            // Other documents may include or launch what was saved.
            let _ = jobs.send(worker::Job::Saved);
            let open: Vec<Url> = lock(&state.docs).keys().cloned().collect();
            open.into_iter().for_each(recheck);
        }
        DidCloseTextDocument::METHOD => {
            let Ok(p) = parse::<lsp_types::DidCloseTextDocumentParams>(n.params) else {
                return;
            };
            let uri = p.text_document.uri;
            lock(&state.docs).remove(&uri);
            worker::publish(&connection.sender, uri, Vec::new(), None);
        }
        DidChangeConfiguration::METHOD => {
            let value = options::layered(state.init_options.as_ref(), n.params.get("settings"));
            let (options, unknown) = ServerOptions::from_value(Some(&value));
            if !unknown.is_empty() {
                show_message(connection, &options::unknown_message(&unknown));
            }
            *lock(&state.options) = options;
            let open: Vec<Url> = lock(&state.docs).keys().cloned().collect();
            open.into_iter().for_each(recheck);
        }
        DidChangeWorkspaceFolders::METHOD => {
            let Ok(p) = parse::<lsp_types::DidChangeWorkspaceFoldersParams>(n.params) else {
                return;
            };
            let mut folders = lock(&state.folders);
            let path = |f: &lsp_types::WorkspaceFolder| f.uri.to_file_path().ok();
            let removed: Vec<PathBuf> = p.event.removed.iter().filter_map(path).collect();
            folders.retain(|f| !removed.contains(f));
            folders.extend(p.event.added.iter().filter_map(path));
            let _ = jobs.send(worker::Job::Saved);
        }
        _ => {}
    }
}

/// Applies one edit of `didChange` (the whole text where it has no range).
fn apply_change(
    text: &mut String,
    change: lsp_types::TextDocumentContentChangeEvent,
    encoding: Encoding,
) {
    match change.range {
        None => *text = change.text,
        Some(r) => {
            let index = convert::LineIndex::new(text, encoding);
            let (start, end) = (index.offset(r.start), index.offset(r.end));
            let end = end.max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

/// A message the editor shows (a warning).
fn show_message(connection: &Connection, text: &str) {
    worker::show(&connection.sender, lsp_types::MessageType::WARNING, text);
}

/// A lock that a panicked holder does not poison for the others.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
