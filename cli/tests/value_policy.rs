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

/// The scan tree of cuda-samples' eigenvalues over a `__shared__` count
/// `n`: the count is one number for the block, tried over the spread (at
/// 1024: 16-way, stated as the condition), and the configuration gives it
/// by name as it gives a parameter (`[kernel.scan.params] n = 256`: levels
/// of 128, 64, ... lanes at offsets 1, 2, ...; the worst warp 4-way, mean
/// 2.25 over the levels' warps), then exact, no longer assumed.
#[test]
fn a_shared_count_is_tried_and_the_configuration_gives_it() {
    let kernel = "__global__ void scan(unsigned short *out, const unsigned int *total) {\n\
        __shared__ unsigned int n;\n\
        __shared__ unsigned short s[4096];\n\
        if (threadIdx.x == 0) n = total[0];\n\
        __syncthreads();\n\
        unsigned int offset = 1;\n\
        for (int d = n >> 1; d > 0; d >>= 1) {\n\
            __syncthreads();\n\
            if (threadIdx.x < d) {\n\
                unsigned int ai = offset * (2 * threadIdx.x + 1) - 1;\n\
                out[threadIdx.x] = s[ai];\n\
            }\n\
            offset <<= 1;\n\
        }\n\
    }\n\
    int main() { scan<<<1, 256>>>(0, 0); }\n";
    let d = temp_project("values-shared-count", &[("k.cu", kernel)]);
    let path = d.join("k.cu").display().to_string();
    let json = |args: &[&str]| -> Vec<serde_json::Value> {
        let o = warplint(args);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        v.as_array().expect("array").clone()
    };
    let tried = json(&["check", "--isolated", "--output-format", "json", &path]);
    assert_eq!(tried.len(), 1, "{tried:?}");
    let m = tried[0]["message"].as_str().unwrap();
    assert!(m.starts_with("16-way bank conflict on `s`"), "{m}");
    assert!(m.contains("when `n` is 1024"), "{m}");
    assert_eq!(tried[0]["status"], "assumed");
    assert!(tried[0]["assumption_kinds"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("loaded-value-condition")));
    let config = d.join("warplint.toml");
    std::fs::write(&config, "[kernel.scan.params]\nn = 256\n").unwrap();
    let config = config.display().to_string();
    let given = json(&[
        "check",
        "--config",
        &config,
        "--output-format",
        "json",
        &path,
    ]);
    assert_eq!(given.len(), 1, "{given:?}");
    let m = given[0]["message"].as_str().unwrap();
    assert!(m.starts_with("4-way bank conflict on `s`"), "{m}");
    assert!(m.contains("mean 2.25-way"), "{m}");
    assert_eq!(given[0]["status"], "exact");
}
