//! Every lint on its fixtures (fixtures/lints/<CODE>/{invalid,valid}_*.cu):
//! invalid cases raise the rule, valid ones are clean, and the full output
//! (miette, unicode without colour, 80 columns) matches its snapshot.

mod common;

use common::{root, stdout, temp_project, warplint};

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

/// GM004 on structs in a header: the finding is re-checked by analysing
/// the kernel with the header's struct aligned, and offered as help only
/// (a fix edits the file checked); a template is not reported (one
/// declaration serves instances of other sizes); a struct a macro writes is not reported (its keyword is not
/// in the text); a 12-byte struct is not reported (padding measured
/// slower); nor a whole element loaded into a variable, or a changed
/// variable stored (nvcc moves the fields used, measured); nor fields
/// every lane reads alike (one sector per instruction either way).
#[test]
fn underaligned_structs_in_a_header() {
    let dir = temp_project(
        "gm004-header",
        &[
            (
                "types.h",
                "#pragma once\n\
                 struct Particle { float x, y, z; int id; };\n\
                 #define DEFINE_PAIR(name) struct name { float a, b; }\n\
                 DEFINE_PAIR(Pair);\n\
                 template <typename T> struct Vec2 { T a, b; };\n\
                 struct Point { float x, y, z; };\n",
            ),
            (
                "k.cu",
                "#include \"types.h\"\n\
                 __global__ void copy(const Particle *in, Particle *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 out[i] = in[i];\n}\n\
                 __global__ void pairs(const Pair *in, float *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 out[i] = in[i].a * in[i].b;\n}\n\
                 __global__ void vecs(const Vec2<float> *in, float *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 out[i] = in[i].a * in[i].b;\n}\n\
                 __global__ void points(const Point *in, Point *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 out[i] = in[i];\n}\n\
                 __global__ void one_field(const Particle *in, float *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 Particle v = in[i];\n\
                 out[i] = v.x;\n}\n\
                 __global__ void changed(const Particle *in, Particle *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 Particle v = in[i];\n\
                 v.x += 1.0f;\n\
                 out[i] = v;\n}\n\
                 __global__ void shared_by_all(const Particle *in, float *out) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 out[i] = in[blockIdx.x].x * in[blockIdx.x].y;\n}\n\
                 int main() { copy<<<64, 256>>>(0, 0); pairs<<<64, 256>>>(0, 0);\n\
                 shared_by_all<<<64, 256>>>(0, 0);\n\
                 vecs<<<64, 256>>>(0, 0); points<<<64, 256>>>(0, 0);\n\
                 one_field<<<64, 256>>>(0, 0); changed<<<64, 256>>>(0, 0); }\n",
            ),
        ],
    );
    let file = dir.join("k.cu");
    let out = warplint(&[
        "check",
        "--isolated",
        "--select",
        "GM004",
        "--output-format",
        "json",
        file.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let found: Vec<(String, u64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["array"].as_str().unwrap().to_string(),
                d["location"]["row"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, vec![("out".into(), 4), ("in".into(), 4)], "{v:#}");
    for d in v.as_array().unwrap() {
        assert!(d["fix"].is_null(), "a header is not edited: {d:#}");
    }
    let help = v[0]["help"].as_str().unwrap();
    assert!(help.contains("`struct __align__(16) Particle`"), "{help}");
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .contains("4 stores of 4 bytes (64 sectors per warp); aligned to 16 bytes, 1 store of 16 bytes (16 sectors)"),
        "{}",
        v[0]["message"]
    );
}
