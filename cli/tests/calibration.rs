//! warplint against the hardware: every case of the H200 calibration
//! (fixtures/groundtruth/sm_90, measured with Nsight Compute) within 5%,
//! as shared/groundtruth/check.py compares them.

mod common;

use std::collections::HashMap;

use common::{root, stdout, warplint};

#[test]
fn sm_90_calibration_matches_the_h200() {
    let truth_path = root().join("fixtures/groundtruth/sm_90/calib.truth.json");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(truth_path).expect("truth")).expect("json");
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--arch",
        "sm_90",
        "fixtures/groundtruth/sm_90/calib.cu",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let mut preds: HashMap<(u64, String, String), Vec<(f64, f64)>> = HashMap::new();
    for a in doc["accesses"].as_array().unwrap() {
        let space = a["space"].as_str().unwrap().to_string();
        let key = if space == "shared" {
            "wavefronts"
        } else {
            "sectors"
        };
        if let Some(v) = a[&space][key].as_f64() {
            let w = a["executions"].as_f64().unwrap_or(1.0);
            preds
                .entry((
                    a["line"].as_u64().unwrap(),
                    space,
                    a["op"].as_str().unwrap().to_string(),
                ))
                .or_default()
                .push((v, w));
        }
    }
    let cases = truth["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 41);
    let mut misses = Vec::new();
    for c in cases {
        let space = c["space"].as_str().unwrap().to_string();
        let want = if space == "shared" {
            c["wavefronts"].as_f64()
        } else {
            c["sectors"].as_f64()
        }
        .unwrap();
        let key = (
            c["line"].as_u64().unwrap(),
            space,
            c["op"].as_str().unwrap().to_string(),
        );
        let got = preds.get(&key).and_then(|p| {
            let w: f64 = p.iter().map(|x| x.1).sum();
            (w > 0.0).then(|| p.iter().map(|x| x.0 * x.1).sum::<f64>() / w)
        });
        match got {
            Some(g) if (g - want).abs() <= 0.05 * want.max(1e-9) => {}
            _ => misses.push(format!("{} measured {want} predicted {got:?}", c["name"])),
        }
    }
    assert!(
        misses.is_empty(),
        "{} of 41 missed:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
