//! Build settings from `compile_commands.json`: each file's `-I`, `-D` and
//! architectures, in both entry forms, found in `build/` or named with
//! `--compile-commands`; headers take an including entry's settings; a
//! malformed database is an error naming it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, stdout, temp_project, warplint};

/// A conflict only when `USE_WIDE` is defined and `cfg.h` (in `include/`,
/// not beside the file) gives `STRIDE`.
const KERNEL: &str = r#"#include "cfg.h"
__global__ void k(float *a) {
    __shared__ float s[32 * 33];
#ifdef USE_WIDE
    s[threadIdx.x * STRIDE] = a[threadIdx.x];
#else
    s[threadIdx.x] = a[threadIdx.x];
#endif
}
int main() { k<<<1, 32>>>(0); }
"#;

/// A project with a `.git` root, `src/k.cu` and `include/cfg.h`, and
/// `db` (if any) as `build/compile_commands.json`.
fn project(tag: &str, db: Option<&str>) -> PathBuf {
    let mut files = vec![
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("src/k.cu", KERNEL),
        ("include/cfg.h", "#define STRIDE 32\n"),
    ];
    if let Some(db) = db {
        files.push(("build/compile_commands.json", db));
    }
    temp_project(&format!("compiledb-{tag}"), &files)
}

/// One entry for `src/k.cu`, built in `build/`, with `flags` (JSON array
/// items) or as a `command` string.
fn arguments_entry(dir: &Path, flags: &str) -> String {
    format!(
        r#"[{{"directory": "{}", "file": "../src/k.cu",
             "arguments": ["nvcc", {flags}, "-c", "../src/k.cu", "-o", "k.o"]}}]"#,
        dir.join("build").display()
    )
}

fn check(args: &[&str], path: &Path) -> Output {
    let mut all = vec!["check", "--isolated", "--output-format", "json"];
    all.extend_from_slice(args);
    all.push(path.to_str().unwrap());
    warplint(&all)
}

/// The diagnostics' codes and `arch` facts.
fn found(out: &Output) -> Vec<(String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)));
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["arch"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A project whose database is written once its folder is known.
fn with_db(tag: &str, db: impl Fn(&Path) -> String) -> PathBuf {
    let d = project(tag, None);
    std::fs::create_dir_all(d.join("build")).unwrap();
    std::fs::write(d.join("build/compile_commands.json"), db(&d)).unwrap();
    d
}

#[test]
fn arguments_give_include_folders_and_macros() {
    let d = with_db("args", |d| {
        arguments_entry(d, r#""-I../include", "-DUSE_WIDE""#)
    });
    // `--include-search paths`: `cfg.h` is found through the database only.
    let out = check(&["--include-search", "paths"], &d.join("src"));
    assert_eq!(found(&out), [("SM001".into(), "sm_90".into())]);
    assert_eq!(out.status.code(), Some(1));
    // Without the database, `USE_WIDE` is not defined: clean.
    let bare = project("args-bare", None);
    let out = check(&["--include-search", "paths"], &bare.join("src"));
    assert_eq!(found(&out), []);
    // Split spellings read the same.
    let d = with_db("args-split", |d| {
        arguments_entry(d, r#""-I", "../include", "-D", "USE_WIDE=1""#)
    });
    let out = check(&["--include-search", "paths"], &d.join("src"));
    assert_eq!(found(&out), [("SM001".into(), "sm_90".into())]);
}

#[test]
fn command_strings_are_split_as_a_shell_does() {
    let d = with_db("command", |d| {
        format!(
            r#"[{{"directory": "{}", "file": "{}",
                 "command": "/usr/bin/nvcc -I '../include' -D\"USE_WIDE\" -DNAME=\"a b\" -c ../src/k.cu"}}]"#,
            d.join("build").display(),
            d.join("src/k.cu").display(),
        )
    });
    let out = check(&["--include-search", "paths"], &d.join("src"));
    assert_eq!(found(&out), [("SM001".into(), "sm_90".into())]);
    // `-U` after `-D` takes the macro away again.
    let d = with_db("undefine", |d| {
        format!(
            r#"[{{"directory": "{}", "file": "../src/k.cu",
                 "command": "nvcc -I../include -DUSE_WIDE -UUSE_WIDE -c ../src/k.cu"}}]"#,
            d.join("build").display()
        )
    });
    let out = check(&["--include-search", "paths"], &d.join("src"));
    assert_eq!(found(&out), []);
}

#[test]
fn an_explicit_database_is_read_from_a_file_or_a_folder() {
    let d = project("explicit", None);
    let elsewhere = d.join("out/cc");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let db = arguments_entry(&d, r#""-I../include", "-DUSE_WIDE""#);
    // Not where it would be found by itself.
    let out = check(&["--include-search", "paths"], &d.join("src"));
    assert_eq!(found(&out), []);
    std::fs::write(elsewhere.join("compile_commands.json"), &db).unwrap();
    std::fs::write(elsewhere.join("mine.json"), &db).unwrap();
    for given in [elsewhere.join("mine.json"), elsewhere.clone()] {
        let out = check(
            &[
                "--include-search",
                "paths",
                "--compile-commands",
                given.to_str().unwrap(),
            ],
            &d.join("src"),
        );
        assert_eq!(found(&out), [("SM001".into(), "sm_90".into())], "{given:?}");
    }
}

#[test]
fn a_malformed_database_is_an_error_naming_it() {
    for (tag, text, why) in [
        ("syntax", "[{\"directory\": ", "not a compile database"),
        ("shape", "{\"file\": 1}", "not a compile database"),
        (
            "empty-entry",
            "[{\"directory\": \".\", \"file\": \"k.cu\"}]",
            "neither",
        ),
        (
            "quote",
            "[{\"directory\": \".\", \"file\": \"k.cu\", \"command\": \"nvcc 'k.cu\"}]",
            "unclosed",
        ),
    ] {
        let d = project(&format!("bad-{tag}"), Some(text));
        for cmd in ["check", "report"] {
            let out = warplint(&[cmd, "--isolated", d.join("src").to_str().unwrap()]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{tag} {cmd}: {err}");
            assert!(
                err.contains("build/compile_commands.json") && err.contains(why),
                "{tag} {cmd}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    let missing = warplint(&[
        "check",
        "--compile-commands",
        "no/such.json",
        "fixtures/examples",
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no/such.json"));
}

#[test]
fn architectures_come_from_gencode_and_the_command_line_wins() {
    let d = with_db("gencode", |d| {
        arguments_entry(
            d,
            r#""-I../include", "-DUSE_WIDE", "-gencode", "arch=compute_80,code=sm_80",
               "-gencode=arch=compute_70,code=[sm_70,compute_70]""#,
        )
    });
    let src = d.join("src");
    let out = check(&["--include-search", "paths"], &src);
    assert_eq!(found(&out), [("SM001".into(), "sm_80, sm_70".into())]);
    let report = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        src.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&report)).unwrap();
    assert_eq!(v["archs"], serde_json::json!(["sm_80", "sm_70"]));
    let cli = check(&["--include-search", "paths", "--arch", "sm_90"], &src);
    assert_eq!(found(&cli), [("SM001".into(), "sm_90".into())]);
}

#[test]
fn a_header_takes_the_settings_of_a_file_that_includes_it() {
    // The kernel in a header that the database does not list, included by
    // `app/main.cu`, which it does (in another folder: no entry of the
    // header's folder to fall back on).
    let d = project("header", None);
    std::fs::write(
        d.join("src/k.cuh"),
        KERNEL.replace("int main() { k<<<1, 32>>>(0); }\n", ""),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("app")).unwrap();
    std::fs::write(
        d.join("app/main.cu"),
        "#include \"../src/k.cuh\"\nint main() { k<<<1, 32>>>(0); }\n",
    )
    .unwrap();
    std::fs::remove_file(d.join("src/k.cu")).unwrap();
    std::fs::create_dir_all(d.join("build")).unwrap();
    let db = format!(
        r#"[{{"directory": "{}", "file": "../app/main.cu",
             "arguments": ["nvcc", "-I../include", "-DUSE_WIDE", "-c", "../app/main.cu"]}}]"#,
        d.join("build").display()
    );
    std::fs::write(d.join("build/compile_commands.json"), db).unwrap();
    let header = d.join("src/k.cuh");
    let out = check(&["--include-search", "paths"], &header);
    assert_eq!(found(&out), [("SM001".into(), "sm_90".into())]);
}

#[test]
fn project_headers_are_found_unless_the_database_gives_the_folders() {
    // No database: `cfg.h` is found among the project's files by default.
    let bare = project("default-bare", None);
    let out = check(&["-D", "USE_WIDE"], &bare.join("src"));
    assert_eq!(found(&out), [("SM001".into(), "sm_90".into())]);
    // An entry without `-I`: its folders only, so `STRIDE` is not known.
    let d = with_db("default-db", |d| arguments_entry(d, r#""-DUSE_WIDE""#));
    assert_eq!(found(&check(&[], &d.join("src"))), []);
    let asked = check(&["--include-search", "project"], &d.join("src"));
    assert_eq!(found(&asked), [("SM001".into(), "sm_90".into())]);
}
