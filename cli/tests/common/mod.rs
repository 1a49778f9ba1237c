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
