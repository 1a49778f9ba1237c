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
    let project = diagnostics(&["fixtures/project"]);
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
