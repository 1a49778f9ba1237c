//! The bundled example kernels, end to end: `warplint report` on each,
//! compared with its reviewed snapshot in fixtures/snapshots/.

mod common;

use common::{root, stdout, warplint};

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("fixtures/examples"))
        .expect("fixtures/examples")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    v.sort();
    v
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(root().join("fixtures/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn every_example_report_matches_its_snapshot() {
    let names = examples();
    assert!(names.len() >= 6, "examples: {names:?}");
    for name in names {
        let path = format!("fixtures/examples/{name}");
        let out = warplint(&["report", "--isolated", "--format", "json", &path]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{path}: {}",
            common::stderr(&out)
        );
        let stem = name.trim_end_matches(".cu").to_string();
        settings().bind(|| insta::assert_snapshot!(format!("report_{stem}"), stdout(&out)));
    }
}

#[test]
fn table_of_all_examples_matches_its_snapshot() {
    let out = warplint(&["report", "--isolated", "fixtures/examples"]);
    assert_eq!(out.status.code(), Some(0));
    settings().bind(|| insta::assert_snapshot!("report_table", stdout(&out)));
}

/// The headline predictions the issue asks for, checked by value so a
/// snapshot update cannot silently accept a regression.
#[test]
fn classic_kernels_headline_numbers() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "fixtures/examples",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let find = |kernel: &str, array: &str, op: &str, line: u64| {
        doc["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| {
                a["kernel"] == kernel && a["array"] == array && a["op"] == op && a["line"] == line
            })
            .unwrap_or_else(|| panic!("{kernel} {array} {op} line {line}"))
            .clone()
    };
    // Tiled transpose: the transposed read of tile[32][32] is 32-way; [32][33] is conflict-free.
    assert_eq!(
        find("transposeCoalesced", "tile", "load", 35)["shared"]["ways"],
        32
    );
    assert_eq!(
        find("transposeNoBankConflicts", "tile", "load", 55)["shared"]["ways"],
        1
    );
    // Naive transpose: the strided store needs 32 sectors per request.
    assert_eq!(
        find("transposeNaive", "odata", "store", 15)["global"]["sectors"],
        32
    );
    assert_eq!(
        find("transposeNaive", "idata", "load", 15)["global"]["sectors"],
        4
    );
    // Interleaved reduction conflicts, sequential does not.
    assert!(
        find("reduceInterleaved", "sdata", "load", 17)["shared"]["max_ways"]
            .as_f64()
            .unwrap()
            >= 8.0
    );
    assert_eq!(
        find("reduceSequential", "sdata", "load", 34)["shared"]["max_ways"],
        1
    );
    // AoS: one float out of a 16-byte struct touches 16 sectors instead of 4.
    assert_eq!(
        find("centerOfMassAoS", "p", "load", 12)["global"]["sectors"],
        16
    );
    // The indirect gather is unknown, with its reason, and carries no cost.
    let g = find("gather", "in", "load", 7);
    assert_eq!(g["status"], "unknown");
    assert!(g["global"].is_null());
    assert!(g["unknown_reason"].as_str().unwrap().contains("idx"));
    // Template block size: each instantiation gets its own block.
    let m = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["array"] == "As" && a["op"] == "load")
        .count();
    assert_eq!(m, 2);
}
