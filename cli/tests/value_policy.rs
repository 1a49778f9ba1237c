//! What `check` reports for a parameter no launch gives, tried over the
//! spread of sizes: a waste that holds at the size programs run at (1024)
//! is reported with the condition under which it holds; one that holds
//! only at other sizes of the spread is not.

mod common;
use common::{stdout, temp_project, warplint};

/// `check --output-format json` of one kernel in a file of its own
/// project, as (code, message) pairs.
fn diagnostics(tag: &str, kernel: &str) -> Vec<(String, String)> {
    let d = temp_project(tag, &[("k.cu", kernel)]);
    let path = d.join("k.cu");
    let o = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        &path.display().to_string(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    v.as_array()
        .expect("array")
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (s("code"), s("message"))
        })
        .collect()
}

#[test]
fn a_waste_at_large_sizes_is_reported_with_its_condition() {
    // `s[tx * (n / 32)]`: n = 32 gives stride 1 (1-way), n = 1024 stride 32
    // (every lane on bank 0 with a different word: 32-way); the answer is
    // the worst at the typical sizes, 32-way, and it holds at 1024.
    let d = diagnostics(
        "values-large",
        "__global__ void k(float *a, int n) {\n    __shared__ float s[32 * 32];\n    s[threadIdx.x * (n / 32)] = a[threadIdx.x];\n}\n",
    );
    let sm: Vec<&(String, String)> = d.iter().filter(|(c, _)| c == "SM001").collect();
    assert_eq!(sm.len(), 1, "{d:?}");
    assert!(
        sm[0].1.starts_with("32-way bank conflict on `s`"),
        "{}",
        sm[0].1
    );
    assert!(sm[0].1.contains("when `n`"), "{}", sm[0].1);
}

#[test]
fn a_waste_only_at_small_sizes_is_not_reported() {
    // `s[tx * (1024 / n)]`: n = 32 gives stride 32 (32-way), n = 1024
    // stride 1: a conflict only at a size below the one programs run at.
    let d = diagnostics(
        "values-small",
        "__global__ void k(float *a, int n) {\n    __shared__ float s[32 * 32];\n    s[threadIdx.x * (1024 / n)] = a[threadIdx.x];\n}\n",
    );
    assert!(d.iter().all(|(c, _)| c != "SM001"), "{d:?}");
}
