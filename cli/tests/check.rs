//! `warplint check` end to end: exit codes, output formats, selection,
//! suppressions, stdin, fixes, configuration.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{root, stderr, stdout, warplint};

const TRANSPOSE: &str = "fixtures/lints/SM001/invalid_transpose_32x32.cu";

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warplint-check-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn exit_codes() {
    let clean = warplint(&[
        "check",
        "--isolated",
        "fixtures/lints/SM001/valid_transpose_32x33.cu",
    ]);
    assert_eq!(clean.status.code(), Some(0));
    let dirty = warplint(&["check", "--isolated", TRANSPOSE]);
    assert_eq!(dirty.status.code(), Some(1));
    let zero = warplint(&["check", "--isolated", "--exit-zero", TRANSPOSE]);
    assert_eq!(zero.status.code(), Some(0));
    let missing = warplint(&["check", "--isolated", "no/such.cu"]);
    assert_eq!(missing.status.code(), Some(2));
    let bad = warplint(&["check", "--isolated", "--select", "XY9", TRANSPOSE]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("XY9"));
}

#[test]
fn json_uses_ruff_field_names_and_warplint_facts() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        "fixtures/examples/transpose.cu",
    ]);
    let v = json(&out);
    let sm = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "SM001")
        .unwrap();
    for key in [
        "code",
        "name",
        "message",
        "severity",
        "filename",
        "location",
        "end_location",
        "fix",
        "url",
        "noqa_row",
    ] {
        assert!(sm.get(key).is_some(), "missing {key}");
    }
    assert_eq!(sm["name"], "shared-bank-conflict");
    assert_eq!(sm["location"], serde_json::json!({"row": 35, "column": 38}));
    assert!(std::path::Path::new(sm["filename"].as_str().unwrap()).is_absolute());
    assert_eq!(sm["kernel"], "transposeCoalesced");
    assert_eq!(sm["array"], "tile");
    assert_eq!(sm["arch"], "sm_90");
    assert_eq!(sm["block"], serde_json::json!([32, 8, 1]));
    assert_eq!(sm["max_ways"], 32.0);
    let gm = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "GM001")
        .unwrap();
    assert_eq!(gm["sectors"], 32.0);
    assert_eq!(gm["ideal_sectors"], 4.0);
    assert!(gm["fix"].is_null());
}

#[test]
fn json_lines_is_one_object_per_line() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json-lines",
        "fixtures/examples",
    ]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 5);
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["code"].is_string());
    }
}

#[test]
fn github_annotations_are_escaped() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "github",
        "fixtures/examples/transpose.cu",
    ]);
    let text = stdout(&out);
    let line = text.lines().find(|l| l.contains("SM001")).unwrap();
    assert!(line.starts_with("::error title=warplint (SM001%2C exact),file=fixtures/examples/transpose.cu,line=35,endLine=35,col=38,"), "{line}");
    // The help line is joined with an escaped newline; no raw newline inside.
    assert!(
        line.contains("%0A  help: pad the innermost dimension"),
        "{line}"
    );
    assert_eq!(text.lines().count(), 2);
}

#[test]
fn sarif_is_valid_2_1_0() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "sarif",
        "fixtures/examples",
    ]);
    let text = stdout(&out);
    let v = json(&out);
    // The published schema's `language` pattern is not a valid regex (a
    // known erratum: an unbalanced `]`); correct it before compiling.
    let schema_text =
        std::fs::read_to_string(root().join("cli/tests/data/sarif-schema-2.1.0.json"))
            .unwrap()
            .replace(
                "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$",
                "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$",
            );
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    // The validator does reject a broken document.
    let mut broken = v.clone();
    broken["version"] = serde_json::json!("2.0");
    broken["runs"][0]["results"][0]["level"] = serde_json::json!("loud");
    assert!(validator.iter_errors(&broken).count() >= 2);
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF 2.1.0 schema violations:\n{}\n{text}",
        errors.join("\n")
    );
    let run = &v["runs"][0];
    assert_eq!(v["version"], "2.1.0");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        vec![
            "GM001", "GM002", "SM001", "RL001", "CM001", "SY001", "CF001", "SY002", "GM003",
            "GM004", "LM001"
        ]
    );
    for r in run["results"].as_array().unwrap() {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.starts_with("fixtures/examples/"), "{uri}");
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize],
            r["ruleId"]
        );
    }
}

#[test]
fn selection_by_code_prefix_name_and_all() {
    let codes = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["check", "--isolated", "--output-format", "json"];
        a.extend_from_slice(args);
        a.push("fixtures/examples");
        let v = json(&warplint(&a));
        let mut c: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(codes(&[]), vec!["GM001", "GM002", "SM001"]);
    assert_eq!(codes(&["--select", "GM"]), vec!["GM001", "GM002"]);
    assert_eq!(codes(&["--select", "shared-bank-conflict"]), vec!["SM001"]);
    assert_eq!(
        codes(&["--select", "ALL", "--ignore", "GM001,GM002"]),
        vec!["SM001"]
    );
    assert_eq!(
        codes(&["--select", "SM001", "--extend-select", "GM002"]),
        vec!["GM002", "SM001"]
    );
}

#[test]
fn inline_suppressions() {
    let src = std::fs::read_to_string(root().join(TRANSPOSE)).unwrap();
    let access_line = "    out[(blockIdx.x * TILE";
    let variants = [
        (
            "same line",
            src.replace(
                "tile[threadIdx.x][threadIdx.y];",
                "tile[threadIdx.x][threadIdx.y]; // warplint: ignore[SM001]",
            ),
            true,
        ),
        (
            "line before",
            src.replace(
                access_line,
                &format!(
                    "    // warplint: ignore[shared-bank-conflict] -- on purpose\n{access_line}"
                ),
            ),
            true,
        ),
        ("file", format!("// warplint: file-ignore[SM]\n{src}"), true),
        (
            "nolint",
            src.replace(
                "tile[threadIdx.x][threadIdx.y];",
                "tile[threadIdx.x][threadIdx.y]; // NOLINT(warplint-SM001)",
            ),
            true,
        ),
        (
            "nolintnextline",
            src.replace(
                access_line,
                &format!("    // NOLINTNEXTLINE(warplint-*)\n{access_line}"),
            ),
            true,
        ),
        (
            "bare nolint is clang-tidy's",
            src.replace(
                "tile[threadIdx.x][threadIdx.y];",
                "tile[threadIdx.x][threadIdx.y]; // NOLINT",
            ),
            false,
        ),
        (
            "other code",
            src.replace(
                "tile[threadIdx.x][threadIdx.y];",
                "tile[threadIdx.x][threadIdx.y]; // warplint: ignore[GM001]",
            ),
            false,
        ),
    ];
    let dir = temp_dir("suppress");
    for (what, text, suppressed) in variants {
        let p = dir.join("k.cu");
        std::fs::write(&p, text).unwrap();
        let out = warplint(&[
            "check",
            "--isolated",
            "--output-format",
            "concise",
            p.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(if suppressed { 0 } else { 1 }),
            "{what}: {}",
            stdout(&out)
        );
    }
}

/// `warplint check ARGS -` with `src` on stdin, run in the repository root.
fn check_stdin(args: &[&str], src: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warplint"))
        .arg("check")
        .args(args)
        .arg("-")
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(src).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn stdin_with_a_filename() {
    let src = std::fs::read(root().join(TRANSPOSE)).unwrap();
    let args = [
        "--isolated",
        "--output-format",
        "concise",
        "--stdin-filename",
        "kernels/t.cu",
    ];
    let out = check_stdin(&args, &src);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("kernels/t.cu:10:87: SM001"),
        "{}",
        stdout(&out)
    );
}

/// Fix-on-save: with `--fix`, stdout is exactly the source (fixed where a
/// fix applied, unchanged where none did) and the diagnostics and summary
/// go to stderr, as ruff does.
#[test]
fn stdin_fix_prints_only_the_source_on_stdout() {
    let src = std::fs::read_to_string(root().join(TRANSPOSE)).unwrap();
    let base = ["--isolated", "--stdin-filename", "t.cu", "--fix"];
    // Padding is an unsafe fix: nothing applies, the text comes back as is.
    let out = check_stdin(&base, src.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), src);
    assert!(stderr(&out).contains("SM001"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Found 1 diagnostic."));
    let mut unsafe_ = base.to_vec();
    unsafe_.push("--unsafe-fixes");
    let out = check_stdin(&unsafe_, src.as_bytes());
    let fixed = stdout(&out);
    assert_eq!(
        fixed,
        src.replace("tile[TILE][TILE];", "tile[TILE][TILE + 1];")
    );
    assert!(
        stderr(&out).contains("Fixed 1 diagnostic"),
        "{}",
        stderr(&out)
    );
    // Every output format keeps stdout for the source.
    let mut json = unsafe_.clone();
    json.extend(["--output-format", "json"]);
    let out = check_stdin(&json, src.as_bytes());
    assert_eq!(stdout(&out), fixed);
    assert!(stderr(&out).trim_start().starts_with('['));
}

#[test]
fn diff_then_fix_round_trip() {
    let dir = temp_dir("fix");
    let p = dir.join("t.cu");
    let original = std::fs::read_to_string(root().join(TRANSPOSE)).unwrap();
    std::fs::write(&p, &original).unwrap();
    let path = p.to_str().unwrap();
    // Safe fixes only: padding is unsafe, nothing changes.
    let out = warplint(&["check", "--isolated", "--fix", path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    // --diff shows the padding and writes nothing.
    let out = warplint(&["check", "--isolated", "--diff", "--unsafe-fixes", path]);
    assert_eq!(out.status.code(), Some(1));
    let diff = stdout(&out);
    assert!(
        diff.contains("-    __shared__ float tile[TILE][TILE];"),
        "{diff}"
    );
    assert!(
        diff.contains("+    __shared__ float tile[TILE][TILE + 1];"),
        "{diff}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    // --fix --unsafe-fixes writes it; the fixed file analyses clean.
    let out = warplint(&["check", "--isolated", "--fix", "--unsafe-fixes", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains("tile[TILE][TILE + 1]"));
    let out = warplint(&["check", "--isolated", path]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn rule_command() {
    let out = warplint(&["rule", "SM001"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("# shared-bank-conflict (SM001)"));
    assert!(text.contains("## Why is this bad?"));
    let out = warplint(&[
        "rule",
        "uncoalesced-global-access",
        "--output-format",
        "json",
    ]);
    assert_eq!(json(&out)["code"], "GM001");
    assert_eq!(warplint(&["rule", "ZZ999"]).status.code(), Some(2));
}

#[test]
fn the_example_config_parses_and_drives_settings() {
    let out = warplint(&[
        "check",
        "--config",
        "config.example.toml",
        "--show-settings",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("arch: sm_90"), "{text}");
    assert!(
        text.contains(
            "select: CF001, CM001, GM001, GM002, GM003, GM004, LM001, RL001, SM001, SY001, SY002"
        ),
        "{text}"
    );
}

#[test]
fn thresholds_from_config_change_severity() {
    let dir = temp_dir("thresholds");
    let cfg = dir.join("warplint.toml");
    std::fs::write(&cfg, "[lint.thresholds]\nshared-ways-warning = 64\n").unwrap();
    let out = warplint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--select",
        "SM001",
        TRANSPOSE,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn statistics_and_env_format() {
    let out = warplint(&["check", "--isolated", "--statistics", "fixtures/examples"]);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("3\tGM001\t[ ] uncoalesced-global-access")),
        "{text}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_warplint"))
        .args(["check", "--isolated", TRANSPOSE])
        .env("WARPLINT_OUTPUT_FORMAT", "json")
        .current_dir(root())
        .output()
        .unwrap();
    assert!(json(&out).is_array());
}

#[test]
fn excludes_and_force_exclude() {
    let code = |args: &[&str]| {
        let mut a = vec!["check", "--isolated"];
        a.extend_from_slice(args);
        warplint(&a).status.code()
    };
    assert_eq!(
        code(&["--exclude", "invalid_*", "fixtures/lints/SM001"]),
        Some(0)
    );
    assert_eq!(code(&["fixtures/lints/SM001"]), Some(1));
    // A file named on the command line is checked unless --force-exclude.
    assert_eq!(code(&["--exclude", "invalid_*", TRANSPOSE]), Some(1));
    assert_eq!(
        code(&["--exclude", "invalid_*", "--force-exclude", TRANSPOSE]),
        Some(0)
    );
}

#[test]
fn gitignore_is_honoured_and_order_is_deterministic() {
    let dir = temp_dir("walk");
    let bad = std::fs::read_to_string(root().join(TRANSPOSE)).unwrap();
    std::fs::create_dir_all(dir.join("skip")).unwrap();
    std::fs::create_dir_all(dir.join("src/a")).unwrap();
    std::fs::write(dir.join(".gitignore"), "skip/\n").unwrap();
    std::fs::write(dir.join("skip/k.cu"), &bad).unwrap();
    for i in 0..12 {
        std::fs::write(dir.join(format!("src/a/k{i:02}.cu")), &bad).unwrap();
    }
    let run = |jobs: &str| {
        let out = warplint(&[
            "check",
            "--isolated",
            "--output-format",
            "concise",
            "-j",
            jobs,
            dir.to_str().unwrap(),
        ]);
        stdout(&out)
    };
    let one = run("1");
    assert!(!one.contains("skip/"), "{one}");
    assert_eq!(one.lines().filter(|l| l.contains("SM001")).count(), 12);
    assert_eq!(one, run("4"));
}

#[test]
fn nearest_config_per_file_and_per_file_ignores() {
    let dir = temp_dir("nearest");
    let bad = std::fs::read_to_string(root().join(TRANSPOSE)).unwrap();
    std::fs::create_dir_all(dir.join("quiet")).unwrap();
    std::fs::create_dir_all(dir.join("loud/tests")).unwrap();
    std::fs::write(
        dir.join("warplint.toml"),
        "[lint.per-file-ignores]\n\"**/tests/**\" = [\"SM001\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("quiet/warplint.toml"),
        "[lint]\nignore = [\"SM\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("quiet/a.cu"), &bad).unwrap();
    std::fs::write(dir.join("loud/b.cu"), &bad).unwrap();
    std::fs::write(dir.join("loud/tests/c.cu"), &bad).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warplint"))
        .args(["check", "--output-format", "concise", "."])
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("loud/b.cu"), "{text}");
    assert!(!text.contains("quiet/a.cu"), "{text}");
    assert!(!text.contains("tests/c.cu"), "{text}");
}

#[test]
fn several_archs_are_merged_where_they_agree() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        "--arch",
        "sm_80",
        "--arch",
        "sm_90",
        TRANSPOSE,
    ]);
    let text = stdout(&out);
    assert!(text.contains("sm_80, sm_90, block 32x32x1"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("SM001")).count(), 1);
    // Different outcomes are one diagnostic naming each.
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        "--arch",
        "sm_35,sm_90,sm_13",
        TRANSPOSE,
    ]);
    let text = stdout(&out);
    assert_eq!(
        text.lines().filter(|l| l.contains(": SM001")).count(),
        1,
        "{text}"
    );
    // A 32x32 block is 1024 threads: over 1.x's 512 only.
    assert!(
        text.contains("RL001 launch of `transpose` with 1024 threads per block, over the 512 a block may have on sm_13 — clean on"),
        "{text}"
    );
    assert!(text.contains("16-way bank conflict on `tile` (load of 4 bytes; sm_35 (4-byte banks), sm_13, block 32x32x1) — 32-way on sm_90"), "{text}");
    // 64-bit mode on 3.x is a setting.
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        "--arch",
        "sm_35",
        "--bank-mode",
        "8",
        TRANSPOSE,
    ]);
    assert!(stdout(&out).contains("sm_35"), "{}", stdout(&out));
    let out = warplint(&["check", "--isolated", "--arch", "sm_42", TRANSPOSE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("valid: sm_10"), "{}", stderr(&out));
}

#[test]
fn template_arguments_from_config() {
    let dir = temp_dir("template");
    std::fs::write(
        dir.join("k.cu"),
        "template <int T>\n__global__ void k(float *o) {\n    __shared__ float s[T][T];\n    o[0] = s[threadIdx.x][0];\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("warplint.toml"),
        "[kernel.k]\nblock = [32, 1, 1]\ntemplate = [32]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_warplint"))
        .args(["check", "--output-format", "json", "k.cu"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v[0]["code"], "SM001", "{v}");
    assert_eq!(v[0]["kernel"], "k<32>");
    assert_eq!(v[0]["max_ways"], 32.0);
}

#[test]
fn show_unknown_lists_what_was_not_analysed_and_quiet_drops_the_summary() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--show-unknown",
        "fixtures/lints/GM001/valid_gather.cu",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("unknown: load of `in` in `gather` not analysed: the address depends on a value loaded from `idx`"), "{text}");
    let out = warplint(&[
        "check",
        "--isolated",
        "--quiet",
        "--output-format",
        "concise",
        TRANSPOSE,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("SM001") && !text.contains("Found"));
}

#[test]
fn config_arch_list_and_bank_mode() {
    let dir = temp_dir("archlist");
    let cfg = dir.join("warplint.toml");
    std::fs::write(
        &cfg,
        "[analysis]\narch = [\"sm_35\", \"sm_90\"]\nbank-mode = 8\n",
    )
    .unwrap();
    let out = warplint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--output-format",
        "concise",
        TRANSPOSE,
    ]);
    let text = stdout(&out);
    assert!(text.contains("sm_35 (8-byte banks)"), "{text}");
    assert!(text.contains("sm_90"), "{text}");
    std::fs::write(&cfg, "[analysis]\nbank-mode = 6\n").unwrap();
    let out = warplint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--arch",
        "sm_35",
        TRANSPOSE,
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn includes_macros_types_and_device_functions_from_headers() {
    let run = |args: &[&str]| {
        let mut a = vec!["check", "--isolated", "--output-format", "json"];
        a.extend_from_slice(args);
        a.push("fixtures/includes/includes.cu");
        json(&warplint(&a))
    };
    let v = run(&["-I", "fixtures/includes/include"]);
    let files: Vec<(&str, &str, u64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["filename"].as_str().unwrap(),
                d["location"]["row"].as_u64().unwrap(),
            )
        })
        .collect();
    // The conflict inside the header's col() is reported in the header.
    assert!(
        files
            .iter()
            .any(|(c, f, row)| *c == "SM001" && f.ends_with("include/tile.cuh") && *row == 8),
        "{files:?}"
    );
    // Struct from the header (8-byte Pair), macro chain through a cycle and
    // a header found next to the file: STRIDE = 3 -> 12 sectors.
    assert!(
        files
            .iter()
            .any(|(c, f, _)| *c == "GM001" && f.ends_with("includes.cu")),
        "{files:?}"
    );
    let report = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "-I",
        "fixtures/includes/include",
        "fixtures/includes/includes.cu",
    ]);
    let doc = json(&report);
    let store = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["array"] == "out")
        .unwrap();
    assert_eq!(store["global"]["sectors"], 12);
    assert_eq!(doc["summary"]["kernels_with_notes"], 0);
    // An access in the header is located in the header, not in the file
    // that includes it.
    let in_header: Vec<_> = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["line"] == 8 && a["array"] == "t")
        .map(|a| a["file"].as_str().unwrap())
        .collect();
    assert!(
        !in_header.is_empty() && in_header.iter().all(|f| f.ends_with("include/tile.cuh")),
        "{in_header:?}"
    );
    // Without -I, and the project's files not searched, the header is not
    // found: TILE is unknown and said so.
    let report = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--include-search",
        "paths",
        "fixtures/includes/includes.cu",
    ]);
    let doc = json(&report);
    assert!(
        doc["notes"].to_string().contains("TILE"),
        "{}",
        doc["notes"]
    );
}

/// `report` JSON for `args`: the kernels with notes, and the ways of the
/// store to the shared array `t` (null when there is none).
fn notes_and_store_ways(args: &[&str]) -> (u64, serde_json::Value) {
    let doc = json(&warplint(args));
    let store = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["array"] == "t" && a["op"] == "store")
        .cloned()
        .unwrap_or_default();
    (
        doc["summary"]["kernels_with_notes"].as_u64().unwrap(),
        store["shared"]["ways"].clone(),
    )
}

/// `#include <common.cuh>` naming a file beside the includer is read (builds
/// that pass `-I.` find it so); an `-I` folder still comes first, and a name
/// found nowhere stays unread.
#[test]
fn angle_bracket_includes_fall_back_to_the_including_folder() {
    let dir = temp_dir("angle");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(dir.join("common.cuh"), "#define PITCH 33\n").unwrap();
    std::fs::write(dir.join("inc/common.cuh"), "#define PITCH 32\n").unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include <common.cuh>\n#include <cstdio>\n__global__ void k(float *o) {\n    __shared__ float t[32 * PITCH];\n    t[threadIdx.x * PITCH] = 0;\n    o[threadIdx.x] = t[threadIdx.x];\n}\nvoid run(float *o) { k<<<1, 32>>>(o); }\n",
    )
    .unwrap();
    let k = dir.join("k.cu");
    let summary = |extra: &[&str]| {
        let mut args = vec!["report", "--isolated", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(k.to_str().unwrap());
        let (notes, ways) = notes_and_store_ways(&args);
        (serde_json::json!(notes), ways)
    };
    // Beside the file: PITCH 33, conflict-free, nothing unknown.
    assert_eq!(summary(&[]), (serde_json::json!(0), serde_json::json!(1)));
    // On the include path first: PITCH 32, 32-way.
    let inc = dir.join("inc");
    assert_eq!(
        summary(&["-I", inc.to_str().unwrap()]),
        (serde_json::json!(0), serde_json::json!(32))
    );
}

/// `--include-search project` (or `include-search = "project"`) finds a
/// quoted include that no searched folder holds among the project's files
/// by the end of its path: `"lib/tile.cuh"` is `include/lib/tile.cuh` of
/// the repository. A name two files end with equally near is not guessed;
/// the nearer of two is taken. It is the default; `paths` searches only
/// the folders.
#[test]
fn project_include_search_finds_headers_by_path_suffix() {
    let dir = temp_dir("project-search");
    for d in [".git", "include/lib", "src/deep", "a/sub", "b"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("include/lib/tile.cuh"), "#define PITCH 32\n").unwrap();
    // The same name in two folders: 33 in `a/`, 32 in `b/`.
    std::fs::write(dir.join("a/pitch.cuh"), "#define WIDE 33\n").unwrap();
    std::fs::write(dir.join("b/pitch.cuh"), "#define WIDE 32\n").unwrap();
    let kernel = |include: &str, macro_: &str| {
        format!("#include \"{include}\"\n__global__ void k(float *o) {{\n    __shared__ float t[32 * {macro_}];\n    t[threadIdx.x * {macro_}] = 0;\n    o[threadIdx.x] = t[threadIdx.x];\n}}\nvoid run(float *o) {{ k<<<1, 32>>>(o); }}\n")
    };
    std::fs::write(dir.join("src/deep/k.cu"), kernel("lib/tile.cuh", "PITCH")).unwrap();
    std::fs::write(dir.join("a/sub/near.cu"), kernel("pitch.cuh", "WIDE")).unwrap();
    std::fs::write(dir.join("src/tie.cu"), kernel("pitch.cuh", "WIDE")).unwrap();
    // (kernels with notes, ways of the store) for `file` after `extra`.
    let summary = |extra: &[&str], file: &str| {
        let mut args = vec!["report", "--format", "json"];
        if !extra.contains(&"--config") {
            args.push("--isolated");
        }
        args.extend_from_slice(extra);
        let path = dir.join(file);
        args.push(path.to_str().unwrap());
        notes_and_store_ways(&args)
    };
    let project: &[&str] = &["--include-search", "project"];
    // Found through the index: PITCH 32, a 32-way conflict, no note.
    assert_eq!(
        summary(project, "src/deep/k.cu"),
        (0, serde_json::json!(32))
    );
    // The default; with `paths` only the folders are searched: PITCH is
    // unknown, a note.
    assert_eq!(summary(&[], "src/deep/k.cu"), (0, serde_json::json!(32)));
    assert_eq!(
        summary(&["--include-search", "paths"], "src/deep/k.cu").0,
        1
    );
    // `a/sub/near.cu` is nearer `a/pitch.cuh` (WIDE 33: conflict-free).
    assert_eq!(summary(project, "a/sub/near.cu"), (0, serde_json::json!(1)));
    // `src/tie.cu` is as near to both: neither is taken.
    assert_eq!(summary(project, "src/tie.cu").0, 1);
    // The configuration key does what the flag does; the flag wins.
    std::fs::write(
        dir.join("warplint.toml"),
        "[analysis]\ninclude-search = \"paths\"\n",
    )
    .unwrap();
    let cfg = dir.join("warplint.toml");
    let cfg = cfg.to_str().unwrap();
    assert_eq!(summary(&["--config", cfg], "src/deep/k.cu").0, 1);
    assert_eq!(
        summary(
            &["--config", cfg, "--include-search", "project"],
            "src/deep/k.cu"
        )
        .0,
        0
    );
    std::fs::write(
        dir.join("warplint.toml"),
        "[analysis]\ninclude-search = \"everywhere\"\n",
    )
    .unwrap();
    let out = warplint(&["check", "--config", cfg, dir.join("src").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("include-search"), "{}", stderr(&out));
    // With no `.git` or configuration above, the project is the folder
    // named on the command line; a file named alone has none.
    std::fs::remove_file(dir.join("warplint.toml")).unwrap();
    std::fs::remove_dir_all(dir.join(".git")).unwrap();
    let whole = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--include-search",
        "project",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(json(&whole)["summary"]["kernels_with_notes"], 1);
    assert_eq!(summary(project, "src/deep/k.cu").0, 1);
}

/// `MAX_HEADER_BYTES`: headers are read breadth first until their text
/// would pass the budget; that header and the ones after it are not read.
#[test]
fn header_text_past_its_budget_is_not_read() {
    let dir = temp_dir("header-bytes");
    let mut big = String::from("#pragma once\n");
    let line = format!("// {}\n", "x".repeat(1021));
    while big.len() <= warplint_analyzer::budget::MAX_HEADER_BYTES {
        big.push_str(&line);
    }
    std::fs::write(dir.join("big.cuh"), big).unwrap();
    std::fs::write(dir.join("tile.cuh"), "#define PITCH 32\n").unwrap();
    let kernel = "__global__ void k(float *o) {\n    __shared__ float t[32 * PITCH];\n    t[threadIdx.x * PITCH] = 0;\n    o[threadIdx.x] = t[threadIdx.x];\n}\nvoid run(float *o) { k<<<1, 32>>>(o); }\n";
    let notes = |includes: &str| {
        let f = dir.join("k.cu");
        std::fs::write(&f, format!("{includes}{kernel}")).unwrap();
        let out = warplint(&[
            "report",
            "--isolated",
            "--format",
            "json",
            f.to_str().unwrap(),
        ]);
        let warned = stderr(&out).contains("(MAX_HEADER_BYTES); the rest were not read");
        let doc = json(&out);
        (
            doc["summary"]["kernels_with_notes"].as_u64().unwrap(),
            warned,
        )
    };
    // `tile.cuh` first: read, PITCH known; the budget still stops the
    // reading (of nothing else), and the run says so.
    assert_eq!(
        notes("#include \"tile.cuh\"\n#include \"big.cuh\"\n"),
        (0, true)
    );
    // After the header that passes the budget: not read, PITCH unknown.
    assert_eq!(
        notes("#include \"big.cuh\"\n#include \"tile.cuh\"\n"),
        (1, true)
    );
    // Without the big header nothing is cut, and nothing is said.
    assert_eq!(notes("#include \"tile.cuh\"\n"), (0, false));
}

/// `MAX_HEADERS`: a chain of more headers than the budget; the run says
/// that the rest were not read (check and report alike).
#[test]
fn headers_past_their_count_are_not_read_and_the_run_says_so() {
    let dir = temp_dir("header-count");
    let n = warplint_analyzer::budget::MAX_HEADERS + 2;
    for i in 0..n {
        let next = if i + 1 < n {
            format!("#include \"h{}.cuh\"\n", i + 1)
        } else {
            String::new()
        };
        std::fs::write(dir.join(format!("h{i}.cuh")), next).unwrap();
    }
    let f = dir.join("k.cu");
    std::fs::write(
        &f,
        "#include \"h0.cuh\"\n__global__ void k(float *o) { o[threadIdx.x] = 0; }\n",
    )
    .unwrap();
    for cmd in ["check", "report"] {
        let out = warplint(&[cmd, "--isolated", f.to_str().unwrap()]);
        let said = format!(
            "includes more than {} headers (MAX_HEADERS)",
            warplint_analyzer::budget::MAX_HEADERS
        );
        assert!(stderr(&out).contains(&said), "{cmd}: {}", stderr(&out));
    }
}

#[test]
fn config_include_folders() {
    let dir = temp_dir("include-config");
    std::fs::write(
        dir.join("warplint.toml"),
        format!(
            "[analysis]\ninclude = [\"{}\"]\n",
            root().join("fixtures/includes/include").display()
        ),
    )
    .unwrap();
    let cfg = dir.join("warplint.toml");
    let out = warplint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--output-format",
        "concise",
        "fixtures/includes/includes.cu",
    ]);
    assert!(stdout(&out).contains("tile.cuh:8:"), "{}", stdout(&out));
}

/// Every output format, every run: the same bytes with one worker or four,
/// on all the fixtures (headers and includes too).
#[test]
fn every_format_is_identical_across_runs_and_worker_counts() {
    let fixtures = root().join("fixtures");
    let fixtures = fixtures.to_str().unwrap();
    let run = |args: &[&str], jobs: &str| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["-j", jobs, fixtures]);
        let out = warplint(&all);
        (out.status.code(), stdout(&out))
    };
    let mut checked = 0;
    // Each format's diagnostics in full, and its `--statistics` counts.
    for format in ["full", "concise", "json", "json-lines", "sarif", "github"] {
        for extra in [None, Some("--statistics")] {
            if extra.is_some() && matches!(format, "sarif" | "github") {
                continue; // refused: SARIF carries the counts, GitHub has none
            }
            let mut args = vec!["check", "--isolated", "--output-format", format];
            args.extend(extra);
            let first = run(&args, "1");
            assert!(!first.1.is_empty(), "{format} {extra:?}: no output");
            assert_eq!(
                first,
                run(&args, "4"),
                "{format} {extra:?}: -j 1 and -j 4 differ"
            );
            assert_eq!(
                first,
                run(&args, "4"),
                "{format} {extra:?}: two -j 4 runs differ"
            );
            checked += 1;
        }
    }
    for format in ["json", "table"] {
        let args = ["report", "--isolated", "--format", format];
        let first = run(&args, "1");
        assert_eq!(
            first,
            run(&args, "3"),
            "report {format}: -j 1 and -j 3 differ"
        );
        checked += 1;
    }
    // The project's header index is built by whichever worker needs it
    // first: the answer does not depend on which.
    let args = [
        "check",
        "--isolated",
        "--output-format",
        "json",
        "--include-search",
        "project",
    ];
    let first = run(&args, "1");
    assert_eq!(
        first,
        run(&args, "4"),
        "include search: -j 1 and -j 4 differ"
    );
    checked += 1;
    assert_eq!(checked, 13); // check: 6 formats, 4 with --statistics; report: 2; include search
}

/// The fix search's re-analyses per file are a budget: arrays searched
/// after it ran out get no fix, and their diagnostics say why (the ones
/// searched before keep their verified fix).
#[test]
fn a_fix_search_past_its_budget_says_so() {
    let dir = temp_dir("fix-budget");
    let mut src = String::new();
    let kernels = warplint_analyzer::budget::MAX_FIX_REANALYSES_PER_FILE + 8;
    for i in 0..kernels {
        src.push_str(&format!(
            "__global__ void t{i}(float *o) {{\n    __shared__ float tile{i}[32][32];\n    tile{i}[threadIdx.y][threadIdx.x] = 1;\n    __syncthreads();\n    o[threadIdx.x] = tile{i}[threadIdx.x][threadIdx.y];\n}}\n"
        ));
    }
    src.push_str("int main() {\n");
    for i in 0..kernels {
        src.push_str(&format!("    t{i}<<<1, dim3(32, 32)>>>(0);\n"));
    }
    src.push_str("}\n");
    let file = dir.join("many.cu");
    std::fs::write(&file, src).unwrap();
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        file.to_str().unwrap(),
    ]);
    let v = json(&out);
    let sm: Vec<&serde_json::Value> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "SM001")
        .collect();
    let says = |d: &serde_json::Value| {
        d["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("MAX_FIX_REANALYSES_PER_FILE"))
    };
    let first = sm.first().expect("a conflict");
    assert!(!first["fix"].is_null(), "the first array gets its fix");
    assert!(!says(first));
    let last = sm.last().unwrap();
    assert!(last["fix"].is_null(), "the last array is past the budget");
    assert!(says(last), "{last:#}");
    // Every diagnostic either has a fix or says why not.
    assert!(sm.iter().all(|d| !d["fix"].is_null() || says(d)));
}

/// `MAX_INDEXED_FILES`: a project with more files than its index holds;
/// a quoted include not found beside the file makes the run index the
/// project, and it says that the index was cut.
#[test]
fn a_project_past_the_index_budget_is_said_to_be_cut() {
    let dir = temp_dir("index-budget");
    std::fs::write(dir.join("warplint.toml"), "").unwrap();
    let many = dir.join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..=warplint_analyzer::budget::MAX_INDEXED_FILES {
        std::fs::write(many.join(format!("f{i}")), "").unwrap();
    }
    let f = dir.join("k.cu");
    std::fs::write(
        &f,
        "#include \"nowhere.cuh\"\n__global__ void k(float *o) { o[threadIdx.x] = 0; }\n",
    )
    .unwrap();
    let out = warplint(&["check", f.to_str().unwrap()]);
    // The many files go (they would slow every later walk of the folder).
    let _ = std::fs::remove_dir_all(&many);
    assert!(
        stderr(&out).contains("(MAX_INDEXED_FILES); headers past them are not found by name"),
        "{}",
        stderr(&out)
    );
}

/// `--show-unknown` places an access of a header's kernel in that header.
#[test]
fn show_unknown_places_a_header_access_in_the_header() {
    let dir = temp_dir("unknown-header");
    std::fs::write(
        dir.join("gather.cuh"),
        "__global__ void g(const float *in, const int *idx, float *out) {\n    out[threadIdx.x] = in[idx[threadIdx.x]];\n}\n",
    )
    .unwrap();
    let f = dir.join("k.cu");
    std::fs::write(
        &f,
        "#include \"gather.cuh\"\nvoid r() { g<<<1, 32>>>(0, 0, 0); }\n",
    )
    .unwrap();
    let out = warplint(&["check", "--isolated", "--show-unknown", f.to_str().unwrap()]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("load of `in`"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("gather.cuh:2:"), "{line}");
}

/// A finding that rests on an assumption says so in every format, ranks one
/// level below the same cost proven (configurable), and `--only-proven`
/// leaves it out without calling the run a pass.
#[test]
fn assumed_findings_are_marked_and_ranked_below_proven_ones() {
    let dir = common::temp_project(
        "assumed",
        &[(
            "k.cu",
            "__global__ void strided(float *a, int s)\n{\n    a[threadIdx.x * s] = 0.0f;\n}\n\n\
             __global__ void exact_stride(float *a)\n{\n    a[threadIdx.x * 32] = 0.0f;\n}\n",
        )],
    );
    let k = dir.join("k.cu");
    let k = k.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--isolated", k];
        args.extend_from_slice(extra);
        warplint(&args)
    };
    let out = run(&["--output-format", "concise"]);
    let text = stdout(&out);
    assert!(
        text.contains(":3:5: GM001 ") && text.contains("(assumed)\n"),
        "{text}"
    );
    assert!(
        text.contains(":8:5: GM001 ") && !text.lines().nth(1).unwrap().contains("(assumed)"),
        "{text}"
    );
    // The same 12.5% efficiency: an error when proven, a warning assumed.
    let v = json(&run(&["--output-format", "json"]));
    let sev: Vec<(&str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["status"].as_str().unwrap(),
                d["severity"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(sev, [("assumed", "warning"), ("exact", "error")]);
    let sarif = json(&run(&["--output-format", "sarif"]));
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(results[0]["properties"]["status"], "assumed");
    assert!(results[0]["properties"]["assumptions"][0].is_string());
    assert_eq!(results[1]["properties"]["status"], "exact");
    let gh = stdout(&run(&["--output-format", "github"]));
    assert!(
        gh.starts_with("::warning title=warplint (GM001%2C assumed)"),
        "{gh}"
    );
    // assumed-severity = "same": ranked as if proven.
    let cfg = dir.join("warplint.toml");
    std::fs::write(&cfg, "[lint]\nassumed-severity = \"same\"\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let out = warplint(&["check", "--config", cfg, "--output-format", "json", k]);
    assert_eq!(json(&out)[0]["severity"], "error");
    std::fs::write(cfg, "[lint]\nassumed-severity = \"loud\"\n").unwrap();
    let out = warplint(&["check", "--config", cfg, k]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("loud"), "{}", stderr(&out));
    // --only-proven: the exact finding alone, and the run says what it left out.
    let out = run(&["--only-proven", "--output-format", "concise"]);
    let text = stdout(&out);
    assert_eq!(
        text.lines().filter(|l| l.contains("GM001")).count(),
        1,
        "{text}"
    );
    assert!(
        text.contains("1 finding resting on an assumption left out"),
        "{text}"
    );
    let only_assumed = common::temp_project(
        "assumed-only",
        &[(
            "k.cu",
            "__global__ void strided(float *a, int s)\n{\n    a[threadIdx.x * s] = 0.0f;\n}\n",
        )],
    );
    let out = warplint(&[
        "check",
        "--isolated",
        "--only-proven",
        only_assumed.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !stdout(&out).contains("All checks passed"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("No proven problems found."),
        "{}",
        stdout(&out)
    );
}

/// Every option works with every format or is refused, and a flag that
/// cannot apply says so instead of doing nothing.
#[test]
fn options_that_would_do_nothing_warn_or_are_refused() {
    let refused = [
        ["--show-unknown", "--output-format", "json"],
        ["--show-unknown", "--output-format", "sarif"],
        ["--statistics", "--output-format", "sarif"],
        ["--statistics", "--output-format", "github"],
    ];
    for extra in refused {
        let mut args = vec!["check", "--isolated", TRANSPOSE];
        args.extend(extra);
        let out = warplint(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            stderr(&out).contains(extra[0]),
            "{extra:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{extra:?}");
    }
    let out = warplint(&[
        "check",
        "--isolated",
        "--bank-mode",
        "8",
        "-I",
        "no/such/dir",
        TRANSPOSE,
    ]);
    let err = stderr(&out);
    assert!(err.contains("--bank-mode 8 is ignored"), "{err}");
    assert!(err.contains("-I no/such/dir: no such folder"), "{err}");
    let out = warplint(&[
        "check",
        "--isolated",
        "--arch",
        "sm_35",
        "--bank-mode",
        "8",
        TRANSPOSE,
    ]);
    assert!(!stderr(&out).contains("is ignored"), "{}", stderr(&out));
    // --diff with only an unsafe fix: nothing on stdout, a hint on stderr.
    let out = warplint(&["check", "--isolated", "--diff", TRANSPOSE]);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("add --unsafe-fixes to see it"),
        "{}",
        stderr(&out)
    );
    // A bad value in the configuration names the file; --show-settings shows
    // the configuration nearest to the path, as check applies it.
    let dir = common::temp_project(
        "badarch",
        &[
            ("warplint.toml", "[analysis]\narch = \"sm_999\"\n"),
            ("sub/k.cu", ""),
        ],
    );
    let k = dir.join("sub/k.cu");
    let out = warplint(&["check", k.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("warplint.toml: `sm_999`"),
        "{}",
        stderr(&out)
    );
    std::fs::write(dir.join("warplint.toml"), "[analysis]\narch = \"sm_80\"\n").unwrap();
    let out = warplint(&["check", "--show-settings", k.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(
        text.contains("warplint.toml") && text.contains("arch: sm_80"),
        "{text}"
    );
}

/// NOLINTBEGIN/END ranges suppress; a comment naming no rule, and one that
/// suppresses nothing while its rule ran, are named on stderr.
#[test]
fn suppression_ranges_unknown_names_and_unused_comments() {
    let dir = common::temp_project(
        "suppress-range",
        &[(
            "k.cu",
            "__global__ void k(float *a)\n{\n    // NOLINTBEGIN(warplint-GM001)\n    a[threadIdx.x * 32] = 0.0f;\n\
             \x20   // NOLINTEND(warplint-GM001)\n    a[threadIdx.x * 64] = 0.0f; // warplint: ignore[SM999]\n\
             \x20   a[threadIdx.x] = 1.0f; // warplint: ignore[GM001]\n}\n",
        )],
    );
    let k = dir.join("k.cu");
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        k.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(!text.contains(":4:"), "the range suppresses line 4: {text}");
    assert!(text.contains(":6:5: GM001"), "{text}");
    let err = stderr(&out);
    assert!(
        err.contains("k.cu:6: `warplint: ignore[SM999]` names no rule: SM999"),
        "{err}"
    );
    assert!(
        err.contains("k.cu:7: unused suppression `warplint: ignore[GM001]`"),
        "{err}"
    );
    assert!(!err.contains("NOLINTBEGIN"), "{err}");
    // GM001 not selected: its comment is not called unused.
    let out = warplint(&[
        "check",
        "--isolated",
        "--select",
        "SM001",
        k.to_str().unwrap(),
    ]);
    assert!(!stderr(&out).contains("unused"), "{}", stderr(&out));
}

/// A file whose quoted include is found nowhere is never "all clear": the
/// summary names the header and how to give its folder (JSON too).
#[test]
fn a_missing_header_is_never_an_all_clear() {
    let dir = common::temp_project(
        "missing-header",
        &[(
            "k.cu",
            "#include \"nothere.cuh\"\n__global__ void k(float *a) { a[threadIdx.x] = 0; }\n",
        )],
    );
    let k = dir.join("k.cu");
    let out = warplint(&["check", "--isolated", k.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text.contains("All checks passed"), "{text}");
    assert!(
        text.contains("No problems found in what was read."),
        "{text}"
    );
    assert!(
        text.contains("1 included header not found: `nothere.cuh`"),
        "{text}"
    );
    let out = warplint(&[
        "check",
        "--isolated",
        "--statistics",
        "--output-format",
        "json",
        k.to_str().unwrap(),
    ]);
    assert_eq!(json(&out)["summary"]["missing_headers"][0], "nothere.cuh");
}

/// Colour: `--color always`, or FORCE_COLOR under `auto`, colours the full
/// format; a pipe under `auto` (and `never`, whatever FORCE_COLOR says) gets
/// none; words (suggested code) are never broken across lines.
#[test]
fn colour_follows_the_flag_and_the_environment() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_warplint"));
        c.args(["check", "--isolated"]).args(args).arg(TRANSPOSE);
        c.env_remove("NO_COLOR").env_remove("FORCE_COLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        stdout(&c.current_dir(root()).output().unwrap())
    };
    let esc = |s: &str| s.contains('\u{1b}');
    assert!(!esc(&run(&[], &[])));
    assert!(esc(&run(&["--color", "always"], &[])));
    assert!(esc(&run(&[], &[("FORCE_COLOR", "1")])));
    assert!(!esc(&run(&["--color", "never"], &[("FORCE_COLOR", "1")])));
    // Concise output is coloured as ruff's, and plain text is the same.
    let coloured = run(&["--output-format", "concise", "--color", "always"], &[]);
    assert!(esc(&coloured));
    let plain = run(&["--output-format", "concise"], &[]);
    let stripped: String = {
        let mut out = String::new();
        let mut chars = coloured.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    assert_eq!(stripped, plain);
    assert!(!esc(&run(
        &["--output-format", "json", "--color", "always"],
        &[]
    )));
    // Words are never broken across lines: the suggested declaration's
    // tokens stay whole.
    let plain = run(&[], &[]);
    assert!(plain.contains("`__shared__"), "{plain}");
    assert!(plain.contains("tile[TILE][TILE"), "{plain}");
    assert!(!plain.contains("tile[TILE]\n"), "{plain}");
}

/// The JSON output is a contract: every record of a run over all the
/// fixtures validates against the schema generated from its types, which is
/// the one committed in docs/schema/ (regenerate with `warplint debug
/// json-schema > docs/schema/diagnostic.schema.json`).
#[test]
fn json_records_follow_the_committed_schema() {
    let generated = stdout(&warplint(&["debug", "json-schema"]));
    let committed =
        std::fs::read_to_string(root().join("docs/schema/diagnostic.schema.json")).unwrap();
    assert_eq!(
        generated, committed,
        "docs/schema/diagnostic.schema.json is stale"
    );
    let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let out = warplint(&["check", "--isolated", "--output-format", "json", "fixtures"]);
    let records = json(&out);
    let records = records.as_array().unwrap();
    assert!(records.len() > 100);
    assert!(records.iter().any(|r| !r["fix"].is_null()));
    assert!(records.iter().any(|r| r["status"] == "assumed"));
    for r in records {
        let errors: Vec<String> = validator.iter_errors(r).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}\n{r}");
        assert_eq!(r["version"], 1);
    }
    // A record missing a field, or with a status outside the two, fails.
    let mut bad = records[0].clone();
    bad["status"] = "maybe".into();
    assert!(!validator.is_valid(&bad));
    bad.as_object_mut().unwrap().remove("status");
    assert!(!validator.is_valid(&bad));
}

/// SARIF's partialFingerprints follow a finding when lines are added above
/// it (code scanning then tracks it across commits), and differ between
/// findings.
#[test]
fn sarif_fingerprints_survive_moved_lines() {
    let src = std::fs::read_to_string(root().join("fixtures/examples/transpose.cu")).unwrap();
    let dir = common::temp_project("fingerprints", &[("t.cu", &src)]);
    let t = dir.join("t.cu");
    let prints = |text: &str| {
        std::fs::write(&t, text).unwrap();
        let out = warplint(&[
            "check",
            "--isolated",
            "--output-format",
            "sarif",
            t.to_str().unwrap(),
        ]);
        let v = json(&out);
        v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["partialFingerprints"]["warplintFinding/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let before = prints(&src);
    let after = prints(&format!("// a comment\n\n\n{src}"));
    assert!(before.len() >= 2);
    let mut distinct: Vec<&String> = before.iter().map(|(p, _)| p).collect();
    distinct.dedup();
    assert_eq!(distinct.len(), before.len(), "{before:?}");
    for ((p0, l0), (p1, l1)) in before.iter().zip(&after) {
        assert_eq!(p0, p1);
        assert_eq!(l0 + 3, *l1);
    }
}

/// One finding once: an access reached from several kernels (a device
/// function inlined into two, a template instantiated twice) is one
/// diagnostic that names the other kernels.
#[test]
fn one_finding_names_every_kernel_it_covers() {
    let dir = common::temp_project(
        "kernels-once",
        &[
            (
                "d.cu",
                "__device__ void put(float *a) { a[threadIdx.x * 32] = 0.0f; }\n\
                 __global__ void first(float *a) { put(a); }\n\
                 __global__ void second(float *a) { put(a); }\n\
                 void run(float *a) { first<<<1, 32>>>(a); second<<<1, 32>>>(a); }\n",
            ),
            (
                "t.cu",
                "template <int S>\n__global__ void k(float *a) { a[threadIdx.x * 32] = 0.0f; }\n\
                 void run(float *a) { k<1><<<1, 32>>>(a); k<2><<<1, 32>>>(a); }\n",
            ),
        ],
    );
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        dir.to_str().unwrap(),
    ]);
    let v = json(&out);
    let records = v.as_array().unwrap();
    assert_eq!(records.len(), 2, "{v}");
    let notes = |i: usize| records[i]["notes"].to_string();
    assert!(notes(0).contains("the same for `second`"), "{}", notes(0));
    assert_eq!(records[0]["kernel"], "first");
    assert!(notes(1).contains("also in `k<2>`"), "{}", notes(1));
}

/// `--add-noqa` acknowledges every finding in place: the next run is clean,
/// and running it again adds nothing.
#[test]
fn add_noqa_acknowledges_every_finding() {
    let src = std::fs::read_to_string(root().join("fixtures/examples/reduction.cu")).unwrap();
    let dir = common::temp_project("add-noqa", &[("r.cu", &src)]);
    let r = dir.join("r.cu");
    let r = r.to_str().unwrap();
    let before = warplint(&["check", "--isolated", r]);
    assert_eq!(before.status.code(), Some(1));
    let out = warplint(&["check", "--isolated", "--add-noqa", r]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Added 1 suppression comment in 1 file."),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(r).unwrap();
    assert!(text.contains("  // warplint: ignore[SM001]\n"), "{text}");
    assert_eq!(text.lines().count(), src.lines().count());
    let after = warplint(&["check", "--isolated", r]);
    assert_eq!(after.status.code(), Some(0), "{}", stdout(&after));
    assert!(!stderr(&after).contains("unused"), "{}", stderr(&after));
    let again = warplint(&["check", "--isolated", "--add-noqa", r]);
    assert!(stdout(&again).starts_with("Added 0 suppression comments in 0 files."));
    assert_eq!(std::fs::read_to_string(r).unwrap(), text);
}

/// Kernels the parser could not read are not an all-clear: the run names
/// the syntax errors of a file with `__global__` code and no kernel read.
#[test]
fn unreadable_kernel_code_is_never_an_all_clear() {
    let dir = common::temp_project(
        "unread",
        &[(
            "m.cu",
            "#define K(name) __global__ void name(float *a) { a[threadIdx.x * 32] = 0.0f; }\n\
             K(first) K(second)\n",
        )],
    );
    let out = warplint(&["check", "--isolated", dir.join("m.cu").to_str().unwrap()]);
    let text = stdout(&out);
    assert!(!text.contains("All checks passed"), "{text}");
    assert!(text.contains("Kernel code could not be read"), "{text}");
    assert!(text.contains("m.cu:2:"), "{text}");
}

/// SY002 is a rule of compute capability 7.0 and later: lanes of a warp
/// ran in lockstep before Volta.
#[test]
fn unsynchronized_warp_exchange_is_reported_from_sm_70_only() {
    let fixture = "fixtures/lints/SY002/invalid_last_warp_reduction.cu";
    let codes = |arch: &str| {
        let out = warplint(&[
            "check",
            "--isolated",
            "--select",
            "SY002",
            "--arch",
            arch,
            "--output-format",
            "json",
            fixture,
        ]);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        doc.as_array().map_or(0, |a| a.len())
    };
    assert_eq!(codes("sm_60"), 0);
    assert_eq!(codes("sm_70"), 1);
    assert_eq!(codes("sm_90"), 1);
}

/// `--show-unknown` also lists the barriers and branches the engine could
/// not follow (SY001, CF001): a condition on loaded data is unknown, never
/// "all clear" in silence.
#[test]
fn show_unknown_lists_barriers_and_branches_on_data() {
    for (fixture, what) in [
        (
            "fixtures/lints/SY001/valid_condition_from_data.cu",
            "unknown: barrier `__syncthreads()` in `flagged` not analysed: which threads reach it depends on a value loaded from `flags`",
        ),
        (
            "fixtures/lints/CF001/valid_condition_from_data.cu",
            "unknown: branch on `flags[t]` in `flagged` not analysed: which side each thread takes depends on a value loaded from `flags`",
        ),
    ] {
        let out = warplint(&["check", "--isolated", "--show-unknown", fixture]);
        assert_eq!(out.status.code(), Some(0), "{fixture}");
        let text = stdout(&out);
        assert!(text.contains(what), "{fixture}: {text}");
        assert!(text.contains("`flags`"), "{fixture}: {text}");
    }
}
