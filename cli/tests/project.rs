//! The whole-project launch index, through the real binary: a kernel
//! defined in a header is analysed under the launch that another file of
//! the project makes, whether the header is checked alone (what a
//! pre-commit hook passes when only the header changed) or with the whole
//! project, and both say the same.

mod common;
use common::{stdout, warplint};

/// `(code, row, message, block)` of every diagnostic `check` prints as
/// JSON for `paths`.
fn diagnostics(paths: &[&str]) -> Vec<(String, u64, String, String)> {
    let mut args = vec!["check", "--isolated", "--output-format", "json"];
    args.extend(paths);
    let o = warplint(&args);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    v.as_array()
        .expect("array")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                d["location"]["row"].as_u64().unwrap_or_default(),
                d["message"].as_str().unwrap_or_default().to_string(),
                d["block"].to_string(),
            )
        })
        .collect()
}

const HEADER: &str = "fixtures/project/src/transpose_tile.cuh";

#[test]
fn a_header_alone_is_analysed_under_the_launch_in_another_file() {
    // main.cu launches it with dim3(16, 16). The store `tile[tx][ty]` of a
    // 16x16 float tile puts lane l at word 16*(l % 16) + l / 16: banks
    // 0, 16 (l < 16) and 1, 17 (l >= 16), eight lanes each: 8-way. Under
    // the 32x8 default it would be 16-way (banks 0 and 16 only).
    let d = diagnostics(&[HEADER]);
    assert_eq!(d.len(), 1, "{d:?}");
    let (code, row, message, block) = &d[0];
    assert_eq!((code.as_str(), *row), ("SM001", 10));
    assert!(
        message.starts_with("8-way bank conflict on `tile`"),
        "{message}"
    );
    assert_eq!(block, "[16,16,1]");
}

#[test]
fn the_header_alone_and_the_whole_project_agree() {
    let alone = diagnostics(&[HEADER]);
    let project = diagnostics(&["fixtures/project/src"]);
    assert_eq!(alone, project);
}

#[test]
fn report_states_the_block_of_the_other_files_launch_without_assuming_it() {
    let o = warplint(&["report", "--isolated", "--format", "json", HEADER]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let tile: Vec<&serde_json::Value> = v["accesses"]
        .as_array()
        .expect("accesses")
        .iter()
        .filter(|a| a["array"] == "tile")
        .collect();
    assert_eq!(tile.len(), 2);
    for a in tile {
        assert_eq!(a["block"].to_string(), "[16,16,1]");
        assert_eq!(a["status"], "exact", "{a}");
        // Where that block comes from: main.cu's launch at line 6.
        assert_eq!(a["launch"]["origin"], "launch-site");
        assert_eq!(a["launch"]["at"], "fixtures/project/src/main.cu:6");
    }
}

const UNITY: &str = "fixtures/project/unity/stride_kernel.cu";

#[test]
fn a_file_only_its_project_includes_is_analysed_as_it_is_included() {
    // stride_kernel.cu names `fp`, which only main.cu defines (as float)
    // before including it, and main.cu launches it with 64 threads. Alone
    // the size of `fp` is unknown; through main.cu the store
    // `buf[2 * tx]` of 4-byte words puts lanes l and l + 16 on bank 2l % 32
    // with different words: 2-way.
    let d = diagnostics(&[UNITY]);
    assert_eq!(d.len(), 1, "{d:?}");
    let (code, row, message, block) = &d[0];
    assert_eq!((code.as_str(), *row), ("SM001", 4));
    assert!(
        message.starts_with("2-way bank conflict on `buf`"),
        "{message}"
    );
    assert_eq!(block, "[64,1,1]");
    assert_eq!(d, diagnostics(&["fixtures/project/unity"]));
}

/// `report --format json` of `paths`.
fn report(paths: &[&str]) -> serde_json::Value {
    let mut args = vec!["report", "--isolated", "--format", "json"];
    args.extend(paths);
    serde_json::from_str(&stdout(&warplint(&args))).expect("json")
}

/// The records of `file` in `report`, as (line, array, op, status, at).
fn records_of(
    report: &serde_json::Value,
    file: &str,
) -> Vec<(u64, String, String, String, String)> {
    report["accesses"]
        .as_array()
        .expect("accesses")
        .iter()
        .filter(|a| a["file"] == file)
        .map(|a| {
            let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
            (
                a["line"].as_u64().unwrap_or_default(),
                s(&a["array"]),
                s(&a["op"]),
                s(&a["status"]),
                s(&a["launch"]["at"]),
            )
        })
        .collect()
}

#[test]
fn report_gives_a_file_its_including_files_context_and_each_record_once() {
    let alone = report(&[UNITY]);
    let records = records_of(&alone, UNITY);
    // Two loads and two stores, none unknown, each under main.cu's launch.
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records {
        assert_ne!(r.3, "unknown", "{r:?}");
        assert_eq!(r.4, "fixtures/project/unity/main.cu:7", "{r:?}");
    }
    // The whole project: the same records for that file (not its analysis
    // alone beside them), and the header that main.cu and other.cu both
    // include listed once.
    let all = report(&["fixtures/project"]);
    assert_eq!(records_of(&all, UNITY), records);
    let tile = records_of(&all, HEADER);
    assert_eq!(tile.len(), 4, "{tile:?}");
    let listed = all["accesses"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(all["summary"]["accesses"].as_u64(), Some(listed));
    let tiles = all["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["name"] == "transpose_tile")
        .count();
    assert_eq!(tiles, 1);
}

#[test]
fn a_header_analysed_through_two_files_is_counted_once() {
    // main.cu and other.cu both include the header (four accesses).
    for paths in [
        vec![HEADER],
        vec![
            HEADER,
            "fixtures/project/src/main.cu",
            "fixtures/project/src/other.cu",
        ],
    ] {
        let mut args = vec!["check", "--isolated", "--output-format", "sarif"];
        args.extend(&paths);
        let v: serde_json::Value = serde_json::from_str(&stdout(&warplint(&args))).expect("sarif");
        let s = &v["runs"][0]["properties"]["summary"];
        assert_eq!(s["accesses"], 4, "{paths:?}: {s}");
        assert_eq!(s["kernels"], 1, "{paths:?}: {s}");
    }
}

#[test]
fn a_kernel_two_includes_down_is_reported_from_the_outermost_file() {
    // work.cu alone reaches scale_kernel.cu without `fp`; main.cu, which
    // includes work.cu after defining it, sees every access. Each access is
    // listed once, from main.cu's analysis: none unknown, under work.cu's
    // launch of 64 threads.
    let all = report(&["fixtures/project/nested"]);
    let records = records_of(&all, "fixtures/project/nested/scale_kernel.cu");
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records {
        assert_ne!(r.3, "unknown", "{r:?}");
        assert_eq!(r.4, "fixtures/project/nested/work.cu:5", "{r:?}");
    }
    assert_eq!(all["summary"]["unknown"], 0, "{}", all["summary"]);
    // `buf[3 * tx]` of 4-byte words: stride 3 is odd, conflict-free; the
    // check agrees, with nothing left unknown.
    let o = warplint(&["check", "--isolated", "fixtures/project/nested"]);
    let out = stdout(&o);
    assert!(out.contains("All checks passed!"), "{out}");
}

const HOST_KERNEL: &str = "fixtures/host_project/scan.cu";

#[test]
fn a_launch_argument_takes_the_values_callers_in_another_file_pass() {
    // `scan_short(…, length)` launches with its parameter `length`;
    // main.cpp calls it for length 4, 8, …, 1024 (a loop whose bounds are
    // `extern const`s scan.cu defines) and, through `scan_twice`, with
    // 2048. The store `s[pos]` is 2-way for segments below 32 lanes.
    let d = diagnostics(&[HOST_KERNEL]);
    assert_eq!(d.len(), 2, "{d:?}");
    for (code, _, message, block) in &d {
        assert_eq!(code, "SM001");
        assert!(
            message.starts_with("2-way bank conflict on `s`")
                && message.ends_with("when `size` is at most 16"),
            "{message}"
        );
        assert_eq!(block, "[256,1,1]");
    }
    let o = warplint(&["check", "--isolated", HOST_KERNEL]);
    assert!(
        stdout(&o).contains(
            "the values the callers of the launching function pass: 4, 8, 16, 32, 64, 128, \
             256, 512, 1024, 2048"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_kernel_file_alone_and_its_project_agree_on_host_values() {
    let alone = diagnostics(&[HOST_KERNEL]);
    let project = diagnostics(&["fixtures/host_project"]);
    assert_eq!(alone, project);
}
