//! `warplint server` driven over stdio as an editor drives it: initialize,
//! didOpen → publishDiagnostics, codeAction (quick fix, fix all), hover,
//! didChange (incremental, superseded edits) → publishDiagnostics,
//! didChangeConfiguration, shutdown and exit.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::{root, temp_project};
use serde_json::{json, Value};

/// How long a test waits for one message before it fails.
const WAIT: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications read while waiting for something else.
    seen: Vec<Value>,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_warplint"))
            .arg("server")
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start warplint server");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = channel();
        std::thread::spawn(move || loop {
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    len = v.parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            if out.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 1,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its response's `result`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let m = self.recv(deadline);
            if m.get("id") == Some(&json!(id)) {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
            self.seen.push(m);
        }
    }

    fn recv(&self, deadline: Instant) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming
            .recv_timeout(left)
            .expect("the server answered in time")
    }

    /// The next publishDiagnostics for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let is_it = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        };
        if let Some(i) = self.seen.iter().position(is_it) {
            return self.seen.remove(i)["params"]["diagnostics"]
                .as_array()
                .unwrap()
                .clone();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let m = self.recv(deadline);
            if is_it(&m) {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
            self.seen.push(m);
        }
    }
}

impl Client {
    /// The next notification of `method` (read past others, kept).
    fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.seen.iter().position(|m| m["method"] == method) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let m = self.recv(deadline);
            if m["method"] == method {
                return m;
            }
            self.seen.push(m);
        }
    }
}

/// Applies LSP text edits (UTF-16 positions; ASCII text here) to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let ch = p["character"].as_u64().unwrap() as usize;
        text.split_inclusive('\n')
            .take(line)
            .map(str::len)
            .sum::<usize>()
            + ch
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, t);
    }
    out
}

fn codes(ds: &[Value]) -> Vec<String> {
    let mut c: Vec<String> = ds
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    c.sort();
    c
}

#[test]
fn an_editor_session() {
    let text = std::fs::read_to_string(root().join("fixtures/examples/transpose.cu")).unwrap();
    let dir = temp_project("server", &[("k.cu", &text)]);
    let path = dir.join("k.cu");
    let uri = format!("file://{}", path.display());
    let folder = format!("file://{}", dir.display());
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": folder,
            "workspaceFolders": [{"uri": folder, "name": "k"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
            "initializationOptions": {"settings": {"isolated": true}},
        }),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16", "{init}");
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(init["serverInfo"]["name"], "warplint");
    c.notify("initialized", json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "cuda", "version": 1, "text": text}}),
    );
    let sm = diagnostics_as_check_says(&mut c, &uri, &path, &text);
    hover_shows_the_cost(&mut c, &uri, &sm);
    let edits = fixes_apply(&mut c, &uri, &text, &sm);
    edits_and_settings(&mut c, &uri, &text, &edits);
    idle_suppressions(&mut c, &dir);
    untitled_and_errors(&mut c, &text);
    shutdown(c);
}

/// didOpen's diagnostics are check's, at the same places; the SM001 one.
fn diagnostics_as_check_says(
    c: &mut Client,
    uri: &str,
    path: &std::path::Path,
    text: &str,
) -> Value {
    let ds = c.diagnostics(uri, 1);
    // What `check` says of the same file, at the same places.
    let cli = common::warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        path.to_str().unwrap(),
    ]);
    let cli: Vec<Value> = serde_json::from_slice(&cli.stdout).unwrap();
    let at = |code: &Value, line: &Value| format!("{code}@{line}");
    let mut want: Vec<String> = cli
        .iter()
        .map(|d| {
            at(
                &d["code"],
                &json!(d["location"]["row"].as_u64().unwrap() - 1),
            )
        })
        .collect();
    let mut got: Vec<String> = ds
        .iter()
        .map(|d| at(&d["code"], &d["range"]["start"]["line"]))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(codes(&ds).contains(&"SM001".to_string()));
    let sm = ds.iter().find(|d| d["code"] == "SM001").unwrap().clone();
    // The read of the tile by column, on its own line (0-based 34).
    assert_eq!(sm["range"]["start"]["line"], 34, "{sm}");
    let line = text.lines().nth(34).unwrap();
    let col = line.find("tile[threadIdx.x]").unwrap();
    assert_eq!(sm["range"]["start"]["character"], col, "{sm}");
    assert_eq!(sm["source"], "warplint");
    assert!(sm["message"].as_str().unwrap().contains("32-way"), "{sm}");
    assert_eq!(sm["data"]["status"], "exact", "{sm}");
    assert!(sm["codeDescription"]["href"]
        .as_str()
        .unwrap()
        .contains("shared-bank-conflict"));

    sm
}

fn hover_shows_the_cost(c: &mut Client, uri: &str, sm: &Value) {
    // Hover on the conflicting read: its cost and the lane → bank table.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": sm["range"]["start"]}),
    );
    let md = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains("**shared load of `tile`**"), "{md}");
    assert!(md.contains("**32-way**"), "{md}");
    assert!(md.contains("lanes → banks"), "{md}");
    assert!(md.contains("sm_90, block 32x8x1, grid"), "{md}");
    // The table's code fence is closed on a line of its own.
    let fence_lines = md
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    assert_eq!(fence_lines, 2, "{md}");
    assert!(md.lines().any(|l| l == "```"), "{md}");
    // Nothing under a blank line.
    let none = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 0}}),
    );
    assert_eq!(none, Value::Null);
}

/// The quick fix and "fix all"; returns the quick fix's edits.
fn fixes_apply(c: &mut Client, uri: &str, text: &str, sm: &Value) -> Vec<Value> {
    // The quick fix pads the tile; applied as an edit, the conflict is gone.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": sm["range"],
               "context": {"diagnostics": [sm], "only": ["quickfix"]}}),
    );
    let fix = &actions.as_array().unwrap()[0];
    assert_eq!(fix["kind"], "quickfix", "{actions}");
    assert!(fix["title"].as_str().unwrap().contains("unsafe"), "{fix}");
    let edits = fix["edit"]["changes"][&uri].as_array().unwrap().clone();
    let fixed = apply(text, &edits);
    assert!(
        fixed.contains("tile[TILE_DIM][TILE_DIM + 1];\n\n    int x"),
        "{fixed}"
    );
    // Padding is unsafe: "fix all" (safe fixes only) offers nothing.
    let all = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": sm["range"],
               "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    assert_eq!(all, json!([]));
    // With `unsafeFixes`, "fix all" is `check --fix --unsafe-fixes` on the
    // buffer: the whole text, padded.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"warplint": {"isolated": true, "unsafeFixes": true}}}),
    );
    c.diagnostics(uri, 1);
    let all = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": sm["range"],
               "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    assert_eq!(all[0]["kind"], "source.fixAll.warplint", "{all}");
    let whole = all[0]["edit"]["changes"][&uri].as_array().unwrap();
    assert_eq!(apply(text, whole), fixed);

    edits
}

fn edits_and_settings(c: &mut Client, uri: &str, text: &str, edits: &[Value]) {
    // Incremental edits: version 2 brings the conflict back in another
    // form, version 3 (sent at once) applies the fix. The result published
    // last is version 3's.
    let grown = text.replace("BLOCK_ROWS 8", "BLOCK_ROWS 4");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"text": grown}]}),
    );
    let back = apply(&grown, edits);
    let edit = &edits[0];
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3},
               "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]}),
    );
    let ds = c.diagnostics(uri, 3);
    assert_eq!(codes(&ds), ["GM001"], "{}", Value::from(ds));
    assert!(back.contains("BLOCK_ROWS 4"));

    // Settings from the client: only SM001 selected.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"warplint": {"isolated": true, "select": ["SM001"]}}}),
    );
    let ds = c.diagnostics(uri, 3);
    assert_eq!(codes(&ds), Vec::<String>::new());
}

fn idle_suppressions(c: &mut Client, dir: &std::path::Path) {
    // Suppression comments that do nothing are diagnostics of their own:
    // an unused one a faded hint, one naming no rule a warning.
    let s_path = dir.join("s.cu");
    let s_uri = format!("file://{}", s_path.display());
    let s_text = "__global__ void k(float *a)\n{\n    a[threadIdx.x] = 0.0f; // warplint: ignore[SM001]\n    \
                  a[threadIdx.x + 1] = 0.0f; // warplint: ignore[SM999]\n}\n";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": s_uri, "languageId": "cuda", "version": 1, "text": s_text}}),
    );
    let ds = c.diagnostics(&s_uri, 1);
    let mut got: Vec<(String, u64, u64)> = ds
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["severity"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("unknown-rule".to_string(), 3, 2),
            ("unused-suppression".to_string(), 2, 4)
        ],
        "{}",
        Value::from(ds.clone())
    );
    let unused = ds
        .iter()
        .find(|d| d["code"] == "unused-suppression")
        .unwrap();
    assert_eq!(unused["tags"], json!([1]));
}

fn untitled_and_errors(c: &mut Client, text: &str) {
    // A buffer never saved is checked too.
    let untitled = "untitled:Untitled-1";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": untitled, "languageId": "cuda", "version": 1, "text": text}}),
    );
    assert_eq!(codes(&c.diagnostics(untitled, 1)), ["SM001"]);
    // A setting that stops every check is shown to the user.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"warplint": {"arch": "sm_999"}}}),
    );
    let shown = c.notification("window/showMessage");
    assert_eq!(shown["params"]["type"], 1, "{shown}");
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("sm_999"),
        "{shown}"
    );
}

fn shutdown(mut c: Client) {
    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}
