//! What `check` says after its diagnostics: "All checks passed!" only when
//! a file was analysed and every access was; otherwise how many accesses
//! were analysed, how many could not be, the largest reasons and what
//! would resolve each; an empty selection is a warning and exit 0.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, stdout, temp_project, warplint};

const PASSED: &str = "All checks passed!";

fn project(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    temp_project(&format!("summary-{tag}"), files)
}

fn check(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["check", "--isolated"];
    all.extend_from_slice(args);
    all.push(dir.to_str().unwrap());
    warplint(&all)
}

/// A kernel whose stride comes from a header in another folder.
const USES_HEADER: &str = r#"#include "common.h"
__global__ void k(float *a) {
    a[threadIdx.x * STRIDE] = 0;
}
int main() { k<<<1, 128>>>(0); }
"#;

const COMMON_H: &str = "#define STRIDE 1\n";

#[test]
fn a_missing_header_is_named_with_the_flag_that_finds_it() {
    let d = project(
        "missing",
        &[("src/k.cu", USES_HEADER), ("inc/common.h", COMMON_H)],
    );
    let out = check(&d.join("src"), &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains(PASSED), "{text}");
    assert!(
        text.starts_with("None of the 1 access could be analysed:"),
        "{text}"
    );
    // The line names the undeclared name and the header, and the flag.
    let line = text
        .lines()
        .find(|l| l.contains("not declared"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("`STRIDE`"), "{line}");
    assert!(
        line.contains(
            "`common.h` was not found: give its folder with `-I` or use a compile database \
             (`--compile-commands`)"
        ),
        "{line}"
    );
    assert!(text.contains("--show-unknown"), "{text}");
    // Given, the same file is analysed in full.
    let inc = d.join("inc");
    let found = check(&d.join("src"), &["-I", inc.to_str().unwrap()]);
    assert_eq!(stdout(&found), format!("{PASSED}\n"));
    assert_eq!(found.status.code(), Some(0));
}

#[test]
fn an_empty_folder_warns_and_passes_nothing() {
    let d = project("empty", &[("notes.txt", "no CUDA here\n")]);
    let out = check(&d, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("warning: no CUDA files found in") && err.contains(d.to_str().unwrap()),
        "{err}"
    );
    // Machine formats still print their (empty) document.
    let json = check(&d, &["--output-format", "json"]);
    assert_eq!(stdout(&json).trim(), "[]");
}

#[test]
fn unreadable_inputs_are_not_a_pass() {
    let out = warplint(&["check", "--isolated", "no/such/file.cu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!stdout(&out).contains(PASSED), "{}", stdout(&out));
}

#[test]
fn a_clean_file_passes() {
    let out = warplint(&[
        "check",
        "--isolated",
        "fixtures/lints/SM001/valid_transpose_32x33.cu",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), format!("{PASSED}\n"));
}

#[test]
fn a_file_whose_kernels_access_nothing_is_analysed() {
    let d = project(
        "noaccess",
        &[(
            "k.cu",
            "__global__ void k() {}\nint main() { k<<<1, 32>>>(); }\n",
        )],
    );
    let out = check(&d, &[]);
    assert_eq!(stdout(&out), format!("{PASSED}\n"));
    assert_eq!(out.status.code(), Some(0));
}

/// A template kernel that no launch instantiates: its stride is unknown.
const TEMPLATE: &str = r#"template <int D>
__global__ void k(float *a) {
    __shared__ float s[1024];
    s[threadIdx.x * D] = a[threadIdx.x];
    a[threadIdx.x] = s[threadIdx.x];
}
"#;

#[test]
fn unknown_template_parameters_name_the_kernel_and_the_key() {
    let d = project("template", &[("k.cu", TEMPLATE)]);
    let out = check(&d, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains(PASSED), "{text}");
    // Three accesses have a cost, the same in every common block shape
    // tried (no launch gives one); the store to `s` has none.
    assert!(
        text.starts_with(
            "No problems found in the 3 analysed accesses (3 exact); 1 could not be analysed:"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  1 depends on template parameters that no launch gives (`D` of `k`): check it with \
             the file that launches the kernel, or set `[kernel.k] template`"
        ),
        "{text}"
    );
    // The key it names resolves it: 32-way, now a diagnostic.
    std::fs::write(d.join("warplint.toml"), "[kernel.k]\ntemplate = [32]\n").unwrap();
    let cfg = d.join("warplint.toml");
    let set = warplint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        d.join("k.cu").to_str().unwrap(),
    ]);
    let text = stdout(&set);
    assert_eq!(set.status.code(), Some(1), "{text}");
    assert!(text.contains("SM001"), "{text}");
    assert!(!text.contains("could not be analysed"), "{text}");
}

#[test]
fn diagnostics_come_with_the_count_of_what_was_not_analysed() {
    // A conflict and a data-dependent gather in one kernel.
    let src = "__global__ void k(float *o, const int *idx) {\n\
               __shared__ float t[32][32];\n\
               t[threadIdx.x][threadIdx.y] = o[idx[threadIdx.x]];\n\
               o[threadIdx.x] = t[threadIdx.y][threadIdx.x];\n}\n\
               int main() { k<<<1, dim3(32, 32)>>>(0, 0); }\n";
    let d = project("mixed", &[("k.cu", src)]);
    let out = check(&d, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let tail: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Found "))
        .collect();
    assert_eq!(tail[0], "Found 1 diagnostic.", "{text}");
    let analysed = tail
        .iter()
        .find(|l| l.starts_with("Analysed "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        analysed.ends_with("; 1 could not be analysed:"),
        "{analysed}"
    );
    assert!(
        text.contains("1 depends on values loaded from memory (`idx`)"),
        "{text}"
    );
    assert!(!text.contains(PASSED));
    // `--quiet` leaves the diagnostics only.
    let quiet = check(&d, &["--quiet"]);
    let q = stdout(&quiet);
    assert!(
        q.contains("SM001") && !q.contains("Found") && !q.contains("analysed"),
        "{q}"
    );
}

#[test]
fn statistics_and_sarif_carry_the_reasons_as_data() {
    let d = project("data", &[("src/k.cu", USES_HEADER)]);
    let out = check(&d, &["--statistics", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let s = &v["summary"];
    assert_eq!(
        (s["files"].as_u64(), s["unknown"].as_u64()),
        (Some(1), Some(1))
    );
    let reasons = s["unknown_reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert_eq!(reasons[0]["kind"], "undeclared-name");
    assert_eq!(reasons[0]["count"], 1);
    assert_eq!(reasons[0]["subjects"], serde_json::json!(["`STRIDE`"]));
    assert_eq!(
        reasons[0]["missing_headers"],
        serde_json::json!(["common.h"])
    );
    let sarif = check(&d, &["--output-format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    let p = &v["runs"][0]["properties"]["summary"];
    assert_eq!(p["unknown_reasons"][0]["kind"], "undeclared-name");
    assert_eq!(p["accesses"], 1);
}

#[test]
fn a_header_kernel_analysed_through_its_includer_counts_once() {
    // Alone, the header's kernel has no launch for `D`; `main.cu` gives it.
    let header = "template <int D>\n__global__ void k(float *a) { a[threadIdx.x * D] = 0; }\n";
    let main = "#include \"k.cuh\"\nint main() { k<1><<<1, 128>>>(0); }\n";
    let d = project("once", &[("k.cuh", header), ("main.cu", main)]);
    let out = check(&d, &[]);
    assert_eq!(stdout(&out), format!("{PASSED}\n"));
    // The header alone (what pre-commit passes) says what it lacks.
    let alone = warplint(&["check", "--isolated", d.join("k.cuh").to_str().unwrap()]);
    assert!(stdout(&alone).contains("`D` of `k`"), "{}", stdout(&alone));
}
