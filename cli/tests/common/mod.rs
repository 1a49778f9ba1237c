//! Helpers for tests that run the real `warplint` binary (each test file
//! uses a different subset).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (fixtures paths are relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Runs `warplint ARGS` in the workspace root, ignoring any config file.
pub fn warplint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warplint"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run warplint")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh folder in the temporary directory holding `files` (path
/// relative to it, text); `tag` names it within this test process.
pub fn temp_project(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warplint-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (name, text) in files {
        let p = d.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

/// How many accesses a `report --format json` document lists as removed
/// for `why` (`registers`, `not-in-sass`, …).
pub fn removed(doc: &serde_json::Value, why: &str) -> usize {
    doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["removed"].as_array().unwrap())
        .filter(|r| r["why"] == why)
        .count()
}

/// `warplint report --isolated --format json` on `path`, parsed.
pub fn report_json(path: &std::path::Path) -> serde_json::Value {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        path.to_str().unwrap(),
    ]);
    serde_json::from_str(&stdout(&out)).unwrap()
}
