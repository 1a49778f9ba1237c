//! Every lint on its fixtures (fixtures/lints/<CODE>/{invalid,valid}_*.cu):
//! invalid cases raise the rule, valid ones are clean, and the full output
//! (miette, unicode without colour, 80 columns) matches its snapshot.

mod common;

use common::{root, stdout, warplint};

fn cases() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for rule in std::fs::read_dir(root().join("fixtures/lints"))
        .unwrap()
        .flatten()
    {
        let code = rule.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(rule.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") {
                v.push((code.clone(), name));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_rule_has_invalid_and_valid_fixtures() {
    let cases = cases();
    for r in warplint_rules() {
        assert!(
            cases
                .iter()
                .any(|(c, n)| *c == r && n.starts_with("invalid_")),
            "{r}: no invalid_ fixture"
        );
        assert!(
            cases
                .iter()
                .any(|(c, n)| *c == r && n.starts_with("valid_")),
            "{r}: no valid_ fixture"
        );
    }
}

fn warplint_rules() -> Vec<String> {
    let out = warplint(&["rule", "--all", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn lint_fixtures_match_their_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("fixtures/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    for (code, name) in cases() {
        let path = format!("fixtures/lints/{code}/{name}");
        let out = warplint(&["check", "--isolated", "--output-format", "full", &path]);
        let text = stdout(&out);
        if name.starts_with("invalid_") {
            assert_eq!(out.status.code(), Some(1), "{path}:\n{text}");
            assert!(
                text.contains(&code),
                "{path} does not raise {code}:\n{text}"
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{path}:\n{text}");
            // Clean, or clean where analysed (a data-dependent gather is
            // unknown, and said so).
            assert!(
                text.starts_with("All checks passed!") || text.starts_with("No problems found in"),
                "{path}:\n{text}"
            );
        }
        let stem = name.trim_end_matches(".cu");
        settings.bind(|| insta::assert_snapshot!(format!("check_{code}_{stem}"), text));
    }
}

/// The fix the transpose fixture is offered: the padded declaration,
/// verified by the engine.
#[test]
fn transpose_gets_the_33_padding_fix() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        "fixtures/lints/SM001/invalid_transpose_32x32.cu",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = &v[0];
    assert_eq!(d["code"], "SM001");
    assert_eq!(d["max_ways"], 32.0);
    assert_eq!(d["fix"]["applicability"], "unsafe");
    assert_eq!(d["fix"]["edits"][0]["content"], "TILE + 1");
    assert!(
        d["help"].as_str().unwrap().contains("tile[TILE][TILE + 1]"),
        "{}",
        d["help"]
    );
    assert_eq!(d["lanes"].as_array().unwrap().len(), 32);
}
