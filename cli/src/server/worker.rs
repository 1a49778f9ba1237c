//! The analysis worker: checks changed documents (debounced, superseded
//! results dropped), publishes their diagnostics, and answers hover and
//! code actions from what it published.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};

use crossbeam_channel::Sender as ClientSender;
use lsp_server::{Message, Notification};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Hover, HoverContents,
    HoverParams, MarkupContent, MarkupKind, PublishDiagnosticsParams, TextEdit, Url, WorkspaceEdit,
};
use serde_json::Value;
use warplint_lints::Diagnostic;

use super::convert::{self, LineIndex};
use super::{lock, State, DEBOUNCE, FIX_ALL};
use crate::check::{self, Merged};
use crate::hover::HoverEntry;
use crate::includes::ProjectHeaders;

/// What the main loop asks of the worker.
pub enum Job {
    /// Analyse this document's current text.
    Check(Url),
    /// A file was saved or the folders changed: headers and launches on
    /// disk are read again.
    Saved,
}

/// The result published for one version of a document.
pub struct Analysed {
    text: String,
    diagnostics: Vec<Diagnostic>,
    hovers: Vec<HoverEntry>,
}

/// Runs until the main loop drops its end of `jobs`.
pub fn work(
    state: &State,
    client: &ClientSender<Message>,
    jobs: &Receiver<Job>,
    threads: Option<usize>,
) {
    let Ok(pool) = crate::worker_pool(threads) else {
        return;
    };
    let mut project = project_headers(state);
    while let Ok(first) = jobs.recv() {
        // Debounce: gather what arrives until the edits pause.
        let mut batch = vec![first];
        loop {
            match jobs.recv_timeout(DEBOUNCE) {
                Ok(j) => batch.push(j),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if batch.iter().any(|j| matches!(j, Job::Saved)) {
            project = project_headers(state);
        }
        let mut uris: Vec<Url> = Vec::new();
        for j in batch {
            if let Job::Check(u) = j {
                if !uris.contains(&u) {
                    uris.push(u);
                }
            }
        }
        for uri in uris {
            check_document(state, client, &pool, &project, uri);
        }
    }
}

/// The project header index of the workspace's folders (rebuilt on save).
fn project_headers(state: &State) -> ProjectHeaders {
    ProjectHeaders::new(&lock(&state.folders))
}

/// Analyses `uri`'s current text and publishes its diagnostics, unless the
/// document changed or closed meanwhile (its newer job is queued).
fn check_document(
    state: &State,
    client: &ClientSender<Message>,
    pool: &rayon::ThreadPool,
    project: &ProjectHeaders,
    uri: Url,
) {
    let Some((version, text)) = lock(&state.docs)
        .get(&uri)
        .map(|d| (d.version, d.text.clone()))
    else {
        return;
    };
    // A buffer not saved anywhere (`untitled:`) is checked as stdin.
    let path = uri.to_file_path().ok();
    let options = lock(&state.options).clone();
    let run = analyse(
        state,
        &options,
        path.as_deref(),
        &text,
        false,
        pool,
        project,
    );
    let (diagnostics, hovers, idle) = match run {
        Ok(m) => mine(client, m, path.as_deref(), &text),
        Err(e) => {
            // A setting or configuration file that stops every check: said
            // where the user sees it; the last diagnostics stay.
            show(
                client,
                lsp_types::MessageType::ERROR,
                &format!("warplint: {e}"),
            );
            return;
        }
    };
    let mut docs = lock(&state.docs);
    let Some(doc) = docs.get_mut(&uri).filter(|d| d.version == version) else {
        return; // superseded
    };
    let index = LineIndex::new(&text, state.encoding);
    let lsp = diagnostics
        .iter()
        .map(|d| convert::diagnostic(&uri, &index, d))
        .chain(idle.iter().map(|i| convert::idle_suppression(&index, i)))
        .collect();
    publish(client, uri, lsp, Some(version));
    doc.analysed = Some(Analysed {
        text,
        diagnostics,
        hovers,
    });
}

/// What a run says of the buffer of `path` (`None`: unsaved) with `text`:
/// its diagnostics, hovers and idle suppressions; the run's messages are
/// logged (idle suppressions are diagnostics instead).
fn mine(
    client: &ClientSender<Message>,
    m: Merged,
    path: Option<&Path>,
    text: &str,
) -> (Vec<Diagnostic>, Vec<HoverEntry>, Vec<crate::suppress::Idle>) {
    let name = path.map_or_else(|| "-".to_string(), |p| p.display().to_string());
    let abs = m
        .results
        .iter()
        .find(|f| f.path == name)
        .map(|f| f.abs_path.clone())
        .unwrap_or(name);
    for (error, msg) in &m.messages {
        if !m.idle.iter().any(|(_, i)| msg.ends_with(&i.describe())) {
            log(client, *error, msg);
        }
    }
    let idle = m
        .idle
        .into_iter()
        .filter(|(p, _)| *p == abs)
        .map(|(_, i)| i)
        .collect();
    let diagnostics = m
        .results
        .into_iter()
        .filter(|f| f.abs_path == abs)
        // A context's result read the file from disk: only kept where that
        // is the buffer's text.
        .filter(|f| f.source.is_empty() || f.source == text)
        .flat_map(|f| f.diagnostics)
        .collect();
    let hovers = m.hovers.into_iter().filter(|h| h.path == abs).collect();
    (diagnostics, hovers, idle)
}

/// `check` on one buffer, as stdin named as its file.
fn analyse(
    state: &State,
    options: &super::ServerOptions,
    path: Option<&Path>,
    text: &str,
    fix: bool,
    pool: &rayon::ThreadPool,
    project: &ProjectHeaders,
) -> Result<Merged, String> {
    let name = path.map(|p| p.display().to_string());
    let args = options.check_args(name.as_deref(), text, fix, &state.parse_cache);
    let settings = crate::settings::resolve_with(&args.config, &args.arch, args.model.clone())?;
    let inputs = check::gather(&args, &settings)
        .map_err(|_| "the buffer could not be read as stdin".to_string())?;
    check::run_inputs(&args, &settings, inputs, pool, project)
}

pub fn publish(
    client: &ClientSender<Message>,
    uri: Url,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let n = Notification::new("textDocument/publishDiagnostics".into(), params);
    let _ = client.send(n.into());
}

/// A message the editor shows.
pub fn show(client: &ClientSender<Message>, typ: lsp_types::MessageType, text: &str) {
    let params = lsp_types::ShowMessageParams {
        typ,
        message: text.to_string(),
    };
    let _ = client.send(Notification::new("window/showMessage".into(), params).into());
}

fn log(client: &ClientSender<Message>, error: bool, text: &str) {
    let params = lsp_types::LogMessageParams {
        typ: if error {
            lsp_types::MessageType::ERROR
        } else {
            lsp_types::MessageType::WARNING
        },
        message: format!("warplint: {text}"),
    };
    let _ = client.send(Notification::new("window/logMessage".into(), params).into());
}

/// The accesses under the cursor, as their cost, lanes and banks.
pub fn hover(state: &State, p: HoverParams) -> Value {
    let pos = p.text_document_position_params;
    let docs = lock(&state.docs);
    let Some(a) = docs
        .get(&pos.text_document.uri)
        .and_then(|d| d.analysed.as_ref())
    else {
        return Value::Null;
    };
    let index = LineIndex::new(&a.text, state.encoding);
    let at = index.offset(pos.position);
    let under: Vec<&HoverEntry> = a
        .hovers
        .iter()
        .filter(|h| h.start <= at && at <= h.end)
        .collect();
    let Some(narrowest) = under.iter().map(|h| h.end - h.start).min() else {
        return Value::Null;
    };
    let shown: Vec<&HoverEntry> = under
        .into_iter()
        .filter(|h| h.end - h.start == narrowest)
        .collect();
    let mut text: Vec<&str> = shown.iter().map(|h| h.markdown.as_str()).collect();
    text.dedup();
    let h = Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text.join("\n---\n\n"),
        }),
        range: Some(index.range(shown[0].start, shown[0].end)),
    };
    serde_json::to_value(h).unwrap_or(Value::Null)
}

/// Quick fixes of the diagnostics in the range asked about, and "fix all"
/// (the buffer's safe fixes, each re-checked, as `check --fix` on it). Fix
/// all re-runs the check, so it is offered only when asked for by kind
/// (on save, or a source-action menu), not on every cursor move.
pub fn code_actions(state: &State, p: CodeActionParams) -> Value {
    let uri = p.text_document.uri;
    let only = p.context.only.clone();
    let named = |kind: &CodeActionKind| {
        only.as_ref()
            .is_some_and(|o| o.iter().any(|k| kind.as_str().starts_with(k.as_str())))
    };
    let wants = |kind: &CodeActionKind| only.is_none() || named(kind);
    let mut actions: Vec<CodeActionOrCommand> = Vec::new();
    let (text, fixes) = {
        let docs = lock(&state.docs);
        let Some(a) = docs.get(&uri).and_then(|d| d.analysed.as_ref()) else {
            return Value::Array(Vec::new());
        };
        let index = LineIndex::new(&a.text, state.encoding);
        let (from, to) = (index.offset(p.range.start), index.offset(p.range.end));
        if wants(&CodeActionKind::QUICKFIX) {
            actions.extend(
                a.diagnostics
                    .iter()
                    .filter(|d| d.span.start <= to && from <= d.span.end)
                    .filter_map(|d| convert::quick_fix(&uri, &index, d))
                    .map(CodeActionOrCommand::CodeAction),
            );
        }
        let options = lock(&state.options);
        let fixable = a.diagnostics.iter().any(|d| {
            d.fix
                .as_ref()
                .is_some_and(|f| options.fix_all_applies(f.applicability))
        });
        (a.text.clone(), fixable)
    };
    if fixes && named(&CodeActionKind::new(FIX_ALL)) {
        if let Some(action) = fix_all(state, &uri, &text) {
            actions.push(CodeActionOrCommand::CodeAction(action));
        }
    }
    serde_json::to_value(actions).unwrap_or(Value::Null)
}

/// The whole buffer replaced by its fixed text, where a fix applies.
fn fix_all(state: &State, uri: &Url, text: &str) -> Option<CodeAction> {
    let path = uri.to_file_path().ok();
    let options = lock(&state.options).clone();
    let pool = crate::worker_pool(Some(1)).ok()?;
    let project = project_headers(state);
    let fixed = analyse(
        state,
        &options,
        path.as_deref(),
        text,
        true,
        &pool,
        &project,
    )
    .ok()?
    .stdin_fixed?;
    let fixed = String::from_utf8(fixed).ok()?;
    if fixed == text {
        return None;
    }
    let index = LineIndex::new(text, state.encoding);
    let edit = TextEdit::new(index.range(0, text.len()), fixed);
    Some(CodeAction {
        title: "warplint: fix all auto-fixable problems".into(),
        kind: Some(CodeActionKind::new(FIX_ALL)),
        edit: Some(WorkspaceEdit::new(
            [(uri.clone(), vec![edit])].into_iter().collect(),
        )),
        ..CodeAction::default()
    })
}
