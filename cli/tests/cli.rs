//! The command line: arguments, architecture selection, configuration.

mod common;

use common::{stderr, stdout, warplint};

#[test]
fn unknown_arch_is_a_usage_error() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--arch",
        "sm_9x",
        "fixtures/examples/gather.cu",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not an architecture"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn several_archs_give_one_record_per_access_and_arch() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--arch",
        "sm_13",
        "--arch",
        "sm_90",
        "fixtures/lints/GM002/invalid_offset_one.cu",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["archs"], serde_json::json!(["sm_13", "sm_90"]));
    let loads: Vec<&serde_json::Value> = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["op"] == "load")
        .collect();
    assert_eq!(loads.len(), 2);
    // Legacy records carry transactions and bytes; 5.0+ ones sectors.
    assert_eq!(loads[0]["arch"], "sm_13");
    assert_eq!(loads[0]["global"]["transactions"], 3);
    assert_eq!(loads[0]["global"]["bytes"], 224);
    assert!(loads[0]["global"]["sectors"].is_null());
    assert_eq!(loads[1]["arch"], "sm_90");
    assert_eq!(loads[1]["global"]["sectors"], 5);
}

#[test]
fn json_names_the_arch() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--arch",
        "sm_80",
        "fixtures/examples/gather.cu",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["arch"], "sm_80");
    assert_eq!(doc["version"], 1);
}

fn temp_project(config: &str, source: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "warplint-cli-{}-{}",
        std::process::id(),
        config.len() * 31 + source.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("warplint.toml"), config).unwrap();
    std::fs::write(dir.join("k.cu"), source).unwrap();
    dir
}

const NO_LAUNCH: &str = "__global__ void k(float *a, int pitch) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][threadIdx.y] = a[threadIdx.y * pitch + threadIdx.x];\n}\n";

/// The store `t[threadIdx.x][threadIdx.y]` is 32-way under 32x8 and 32x32
/// (a warp's 32 lanes of one `y` are one column, one bank) and 16-way under
/// 16x16 (two columns of 16): the worst is reported with its condition.
#[test]
fn without_a_launch_the_block_is_tried_over_common_shapes_and_said() {
    let dir = temp_project("", NO_LAUNCH);
    let cfg = dir.join("warplint.toml");
    let src = dir.join("k.cu");
    let out = warplint(&[
        "report",
        "--format",
        "json",
        "--config",
        cfg.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let a = &doc["accesses"][0];
    assert_eq!(a["status"], "assumed");
    assert_eq!(a["block"], serde_json::json!([32, 8, 1]));
    let text = a["assumptions"].to_string();
    assert!(
        text.contains("the block is 32x8 or 32x32 (not 16x16)"),
        "{text}"
    );
    assert_eq!(
        a["assumption_kinds"],
        serde_json::json!(["block-condition"])
    );
}

#[test]
fn config_override_gives_block_and_params() {
    let dir = temp_project(
        "[kernel.k]\nblock = [32, 4, 1]\nparams = { pitch = 1024 }\n",
        NO_LAUNCH,
    );
    let cfg = dir.join("warplint.toml");
    let src = dir.join("k.cu");
    let out = warplint(&[
        "report",
        "--format",
        "json",
        "--config",
        cfg.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for a in doc["accesses"].as_array().unwrap() {
        assert_eq!(a["block"], serde_json::json!([32, 4, 1]));
        // blockIdx is not used, pitch is given: nothing is assumed.
        assert_eq!(a["status"], "exact", "{a}");
    }
    let store = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["op"] == "store")
        .unwrap();
    assert_eq!(store["shared"]["ways"], 32);
}

#[test]
fn unknown_config_keys_are_rejected() {
    let dir = temp_project("[kernel.k]\nblok = [32, 4, 1]\n", NO_LAUNCH);
    let cfg = dir.join("warplint.toml");
    let out = warplint(&[
        "report",
        "--config",
        cfg.to_str().unwrap(),
        dir.join("k.cu").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("blok"), "{}", stderr(&out));
}

#[test]
fn folders_are_searched_for_cu_and_cuh() {
    let out = warplint(&["report", "--isolated", "--format", "json", "fixtures"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let files: std::collections::BTreeSet<String> = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file"].as_str().unwrap().to_string())
        .collect();
    assert!(files.iter().any(|f| f.ends_with("transpose.cu")));
    assert!(files.iter().any(|f| f.ends_with("calib.cu")));
}

#[test]
fn report_summary_and_defines_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("warplint-cli-defs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.cu");
    std::fs::write(
        &src,
        "#ifndef STRIDE\n#define STRIDE 1\n#endif\n__global__ void k(float *a) { a[threadIdx.x * STRIDE] = 0; }\nint main() { k<<<1, 32>>>(0); }\n",
    )
    .unwrap();
    let sectors = |extra: &[&str]| {
        let mut args = vec!["report", "--isolated", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(src.to_str().unwrap());
        let out = warplint(&args);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        (
            doc["accesses"][0]["global"]["sectors"].as_f64(),
            doc["summary"].clone(),
        )
    };
    let (s, summary) = sectors(&[]);
    assert_eq!(s, Some(4.0));
    assert_eq!(
        summary,
        serde_json::json!({"files": 1, "kernels": 1, "kernels_with_notes": 0, "accesses": 1, "exact": 1, "assumed": 0, "unknown": 0})
    );
    assert_eq!(sectors(&["-D", "STRIDE=4"]).0, Some(16.0));
    assert_eq!(sectors(&["-DSTRIDE=2"]).0, Some(8.0));
    let out = warplint(&["report", "--isolated", "-D", "2BAD", src.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn report_lists_kernels_and_nvcc_version_macros_are_defined() {
    let dir = std::env::temp_dir().join(format!("warplint-cli-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.cu");
    // The version test selects the stride; `k2` has a note (a size from a
    // header that is not there), `k1` none; a note in a header included by
    // the file is not counted against a kernel at the same offset.
    // The header's note sits at offset 130 of the header, inside `k1`'s
    // extent (offsets 112..169) in the including file.
    let header = format!("{}\n#if UNKNOWN_FLAG\n#endif\n", " ".repeat(129));
    std::fs::write(dir.join("h.cuh"), header).unwrap();
    std::fs::write(
        &src,
        "#include \"h.cuh\"\n#if __CUDACC_VER_MAJOR__ >= 12 && CUDART_VERSION >= 12000\n#define S 1\n#else\n#define S 2\n#endif\n__global__ void k1(float *a) { a[threadIdx.x * S] = 0; }\n__global__ void k2(float *a) { __shared__ float t[FROM_HEADER]; a[threadIdx.x] = t[threadIdx.x]; }\nint main() { k1<<<1, 32>>>(0); k2<<<1, 32>>>(0); }\n#ifdef NOT_DEFINED_FLAG\n__global__ void off(float *a) {\n\n#if 1\n  a[0] = 1;\n#endif\n}\n#endif\n",
    )
    .unwrap();
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        src.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["accesses"][0]["global"]["sectors"].as_f64(), Some(4.0));
    let kernels: Vec<(String, u64, u64)> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_string(),
                k["line"].as_u64().unwrap(),
                k["notes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(kernels, vec![("k1".into(), 7, 0), ("k2".into(), 8, 1)]);
    assert_eq!(doc["summary"]["kernels_with_notes"], 1);
    // The left-out kernel is one range (blank lines and nested directives
    // inside it do not split it); the `#else` branch holds only a directive.
    let skipped = &doc["skipped"];
    assert_eq!(skipped.as_array().unwrap().len(), 1, "{skipped}");
    assert_eq!(skipped[0]["lines"], serde_json::json!([11, 16]));
    assert!(doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["file"].as_str().unwrap().ends_with("h.cuh")));
}

#[test]
fn a_kernel_in_a_header_is_checked_through_the_file_that_launches_it() {
    let dir = std::env::temp_dir().join(format!("warplint-cli-through-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("q.cuh"),
        "__global__ void q(short *p, int s) {\n    p[(blockIdx.y * 8 + threadIdx.y) * s + blockIdx.x * 8 + threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.cu"),
        "#include \"q.cuh\"\nvoid run(short *p) { q<<<dim3(4, 4), dim3(8, 8)>>>(p, 1024); }\n",
    )
    .unwrap();
    let blocks = |args: &[&str]| -> Vec<serde_json::Value> {
        let mut all = vec!["report", "--isolated", "--format", "json"];
        all.extend_from_slice(args);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&warplint(&all))).unwrap();
        doc["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["block"].clone())
            .collect()
    };
    // The folder's report has the header's kernel with the launch of
    // `main.cu` (and, as a record of the header on its own, the assumed one).
    assert!(blocks(&[dir.to_str().unwrap()]).contains(&serde_json::json!([8, 8, 1])));
    // The header on its own has no launch: the block is tried over the
    // common shapes, and the most wasteful is reported (16x16: each row of
    // 16 shorts of block x = 1 straddles two sectors).
    assert_eq!(
        blocks(&[dir.join("q.cuh").to_str().unwrap()]),
        vec![serde_json::json!([16, 16, 1])]
    );
    // `check` reports the kernel from the file that includes and launches
    // it: the launched 8x8 block does not straddle sectors, and the
    // header's own analysis gives way.
    let codes = |path: &std::path::Path| -> Vec<String> {
        let out = warplint(&[
            "check",
            "--isolated",
            "--output-format",
            "json",
            path.to_str().unwrap(),
        ]);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        doc.as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !codes(&dir).contains(&"GM002".to_string()),
        "{:?}",
        codes(&dir)
    );
}

#[test]
fn a_declaration_in_another_file_is_named_not_drawn_in_the_wrong_one() {
    // Rodinia myocyte: the access is in a header, the kernel parameter in
    // the .cu that includes it. The label used to quote the header's text
    // at the parameter's offset.
    let dir = std::env::temp_dir().join(format!("warplint-cli-elsewhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("body.cuh"),
        "// a long comment line that sits where the parameter is in main.cu\n__device__ void body(float *p) {\n    p[threadIdx.x * 64] = 1.0f;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.cu"),
        "#include \"body.cuh\"\n__global__ void k(float *values) { body(values); }\nvoid run(float *v) { k<<<4, 128>>>(v); }\n",
    )
    .unwrap();
    let out = warplint(&["check", "--isolated", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(text.contains("body.cuh:3:5"), "{text}");
    let main = dir.join("main.cu");
    let want = format!("`values` declared here at {}:2:19", main.display());
    assert!(text.contains(&want), "{text}");
    assert!(!text.contains("(line 2)"), "{text}");
}

#[test]
fn debug_parse_only_counts_files_bytes_and_syntax_errors() {
    let dir = std::env::temp_dir().join(format!("warplint-cli-parse-only-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let good = "__global__ void k(float *a) { a[threadIdx.x] = 0; }\n";
    let broken = "__global__ void k(float *a) { a[threadIdx.x = ; }\n";
    std::fs::write(dir.join("good.cu"), good).unwrap();
    std::fs::write(dir.join("sub/broken.cuh"), broken).unwrap();
    std::fs::write(dir.join("notes.txt"), "not CUDA").unwrap();
    let out = warplint(&["debug", "parse-only", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let bytes = good.len() + broken.len();
    assert!(
        text.starts_with(&format!("parsed 2 files, {bytes} bytes, ")),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("; 1 with syntax errors"),
        "{text}"
    );
    // A path that is not there is an error (exit 2), the rest still parsed.
    let out = warplint(&["debug", "parse-only", dir.to_str().unwrap(), "/no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).starts_with("parsed 2 files"));
}

/// `--follow-includes`: the headers the named files reach are parsed too,
/// each distinct one once (a header two files include counts once; a named
/// file another includes is not counted again).
#[test]
fn debug_parse_only_follows_includes_once_each() {
    let h1 = "#pragma once\n__device__ float twice(float x) { return 2 * x; }\n";
    let h2 = "#include \"../h1.cuh\"\n#define N 4\n";
    let a = "#include \"h1.cuh\"\n#include \"sub/h2.cuh\"\n__global__ void k(float *p) { p[0] = twice(N); }\n";
    let b = "#include \"h1.cuh\"\n__global__ void q(float *p) { p[1] = twice(1); }\n";
    let dir = common::temp_project(
        "follow",
        &[("h1.cuh", h1), ("sub/h2.cuh", h2), ("a.cu", a), ("b.cu", b)],
    );
    let paths = [dir.join("a.cu"), dir.join("b.cu")];
    let p: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    let out = warplint(&[
        "debug",
        "parse-only",
        "--isolated",
        "--follow-includes",
        p[0],
        p[1],
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = h1.len() + h2.len() + a.len() + b.len();
    let want = format!("parsed 4 files (2 named, 2 distinct headers), {bytes} bytes, ");
    assert!(stdout(&out).starts_with(&want), "{}", stdout(&out));
    // The whole folder: the headers are named files, parsed once.
    let out = warplint(&[
        "debug",
        "parse-only",
        "--isolated",
        "--follow-includes",
        dir.to_str().unwrap(),
    ]);
    let want = format!("parsed 4 files (4 named, 0 distinct headers), {bytes} bytes, ");
    assert!(stdout(&out).starts_with(&want), "{}", stdout(&out));
}

/// `report --format json` carries, beside each sentence, its kind from
/// `docs/kinds.md`: an unknown access's `unknown_kind`, `assumption_kinds`
/// parallel to `assumptions`, `for_every_kinds` parallel to `for_every`,
/// and each note's `kind` (on a file whose header is not found: the
/// project's files are not searched).
#[test]
fn json_report_gives_the_kinds_of_reasons_assumptions_and_notes() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        "--include-search",
        "paths",
        "fixtures/includes/includes.cu",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let accesses = doc["accesses"].as_array().unwrap();
    let unknown: Vec<&str> = accesses
        .iter()
        .filter_map(|a| a["unknown_kind"].as_str())
        .collect();
    assert!(unknown.contains(&"array-layout"), "{unknown:?}");
    assert!(unknown.contains(&"undeclared-name"), "{unknown:?}");
    for a in accesses {
        assert_eq!(a["unknown_reason"].is_null(), a["unknown_kind"].is_null());
        let texts = a["assumptions"].as_array().unwrap();
        let kinds = a["assumption_kinds"].as_array().unwrap();
        assert_eq!(texts.len(), kinds.len(), "{a}");
        let every = a["for_every"].as_array().unwrap();
        let kinds = a["for_every_kinds"].as_array().unwrap();
        assert_eq!(every.len(), kinds.len(), "{a}");
        // No block is made up: a kernel no launch gives one is analysed
        // over the common shapes.
        assert!(!a["assumption_kinds"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("default-block")));
    }
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["kind"] == "array-dimension"),
        "{notes:?}"
    );
}

/// nvcc's line table gives part of an inlined `__device__` function's
/// instructions the line of its call when the kernel runs the function's
/// body more than once (Nsight Compute counts them there: cuda-samples
/// histogram64's `addByte` calls, sortingNetworks' `Comparator` in its
/// loops). `report` names the call on each inlined access (`inlined_at`)
/// and, for such a call, puts a second record of the same instruction on
/// the call's line, unless that line has an access of its own of the same
/// space and operation. A function inlined once keeps its own lines
/// (measured: `fixtures/groundtruth/sm_90/fields_of_vectors.cu`).
#[test]
fn an_inlined_access_is_also_recorded_on_its_call_line() {
    let src = "__device__ void bump(float *s, int i) { s[i] += 1.0f; }\n\
__device__ float get(const float *g, int i) { return g[i]; }\n\
__device__ float once(const float *g, int i) { return g[i * 2]; }\n\
__global__ void k(const float *g, float *out) {\n\
    __shared__ float s[64 * 32];\n\
    for (int r = 0; r < 4; r++) {\n\
        bump(s, threadIdx.x * 2 + r);\n\
    }\n\
    float a = get(g, threadIdx.x * 32) + get(g, threadIdx.x * 8) + g[threadIdx.x];\n\
    float b = once(g, threadIdx.x);\n\
    out[threadIdx.x] = a + b;\n\
}\n\
int main() { k<<<1, 32>>>(0, 0); }\n";
    let dir = std::env::temp_dir().join(format!("warplint-inlined-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.cu");
    std::fs::write(&path, src).unwrap();
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let records = doc["accesses"].as_array().unwrap();
    let at = |line: u64, op: &str| -> Vec<&serde_json::Value> {
        records
            .iter()
            .filter(|r| r["line"] == line && r["op"] == op)
            .collect()
    };
    // `s[i] += 1` in `bump` (line 1), called in a loop, is a 2-way load
    // and store: each is recorded on line 1, naming the call on line 7,
    // and again on line 7.
    for op in ["load", "store"] {
        let own = at(1, op);
        assert_eq!(own.len(), 1, "{op}: {own:?}");
        assert_eq!(own[0]["inlined_at"]["line"], 7);
        assert!(own[0].get("attribution").is_none());
        let call = at(7, op);
        assert_eq!(call.len(), 1, "{op}: {call:?}");
        assert_eq!(call[0]["attribution"], "call-site");
        assert_eq!(call[0]["inlined_from"]["line"], 1);
        assert_eq!(call[0]["shared"]["ways"], own[0]["shared"]["ways"]);
        assert_eq!(call[0]["shared"]["ways"], 2);
    }
    // Line 9 calls `get` twice but loads `g[threadIdx.x]` itself: `get`'s
    // strided loads (line 2) are not put there too.
    let line9 = at(9, "load");
    assert_eq!(line9.len(), 1, "{line9:?}");
    assert!(line9[0].get("attribution").is_none());
    assert_eq!(at(2, "load").len(), 2);
    assert!(at(2, "load").iter().all(|r| r["inlined_at"]["line"] == 9));
    // `once` is inlined once: its load stays on line 3 only.
    assert_eq!(at(3, "load")[0]["inlined_at"]["line"], 10);
    assert!(at(10, "load").is_empty(), "{:?}", at(10, "load"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// An access nvcc emits no instruction for is not dropped silently:
/// `report` lists it under its kernel (`removed`: where, why, and where
/// the instruction that stands for it is) and the table closes with it.
/// `twice` loads `a[i]` on lines 7 and 9 with nothing between (measured:
/// one LDG, `fixtures/groundtruth/sm_90/reload.cu`).
#[test]
fn a_removed_access_is_reported_as_removed_with_why() {
    let path = "fixtures/groundtruth/sm_90/reload.cu";
    let out = warplint(&["report", "--isolated", "--format", "json", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let twice = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "twice")
        .expect("kernel twice");
    let removed = twice["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0]["line"], 9);
    assert_eq!(removed[0]["why"], "reloaded");
    assert_eq!(removed[0]["at"]["line"], 7);
    assert!(!doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["kernel"] == "twice" && a["line"] == 9));
    let text = stdout(&warplint(&["report", "--isolated", path]));
    assert!(
        text.contains("no instruction (nvcc):")
            && text.contains("reload.cu:9:15 (twice `a`, load): the value loaded at line 7"),
        "{text}"
    );
}

/// A merged access names the source accesses it stands for: in
/// `neighbours.cu`, `s[2 * t] = a; s[2 * t + 1] = b;` is one 8-byte store
/// (measured: one STS.64), reported on the second line, covering the first.
#[test]
fn a_merged_access_names_the_accesses_it_covers() {
    let path = "fixtures/groundtruth/sm_90/neighbours.cu";
    let out = warplint(&["report", "--isolated", "--format", "json", path]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let merged = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["line"] == 12 && a["op"] == "store")
        .expect("the store on line 12");
    assert_eq!(merged["access_bytes"], 8);
    assert_eq!(merged["covers"][0]["line"], 11, "{merged}");
    assert_eq!(merged["covers"].as_array().map(Vec::len), Some(1));
}

/// A load nvcc hoists out of its loop (measured: `hoist.cu`'s
/// `shared_invariant`, once per warp, counted on the loop's line 14) is
/// recorded once, on the loop's line, naming its own line and the loop;
/// the text report and its diagnostic say so.
#[test]
fn a_hoisted_load_is_recorded_on_its_loop_line_and_says_so() {
    let path = "fixtures/groundtruth/sm_90/hoist.cu";
    let out = warplint(&["report", "--isolated", "--format", "json", path]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let of = |line: u64| -> Vec<&serde_json::Value> {
        doc["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                a["kernel"] == "shared_invariant"
                    && a["array"] == "s"
                    && a["line"] == line
                    && a["op"] == "load"
            })
            .collect()
    };
    assert!(of(15).is_empty(), "{:?}", of(15));
    let at_loop = of(14);
    assert_eq!(at_loop.len(), 1, "{at_loop:?}");
    assert_eq!(at_loop[0]["attribution"], "hoisted");
    assert_eq!(at_loop[0]["hoisted_from"]["line"], 15);
    assert_eq!(at_loop[0]["hoisted_out_of"]["line"], 14);
    assert_eq!(at_loop[0]["executions"], 8, "once per warp");
    let text = stdout(&warplint(&["report", "--isolated", path]));
    assert!(
        text.contains("hoist.cu:15:")
            && text.contains("  moved: nvcc hoists this load out of the loop at line 14"),
        "{text}"
    );
    let check = warplint(&["check", "--isolated", "--output-format", "json", path]);
    let diags: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
    let d = diags
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kernel"] == "shared_invariant")
        .expect("the 2-way load");
    assert_eq!(d["hoisted_to_line"], 14);
    assert!(
        d["notes"]
            .to_string()
            .contains("nvcc hoists this load out of the loop at line 14"),
        "{d}"
    );
}

#[test]
fn an_access_of_an_inlined_function_names_the_call_it_came_through() {
    // The access is in `body` (a header); the kernel calls it from main.cu.
    // nvcc counts part of an inlined function's instructions on the call's
    // line, and the user needs to know which call: the text says it, and
    // the JSON gives the call's file and position.
    let dir = std::env::temp_dir().join(format!("warplint-cli-inlined-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("body.cuh"),
        "__device__ void body(float *p) {\n    p[threadIdx.x * 64] = 1.0f;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.cu"),
        "#include \"body.cuh\"\n__global__ void k(float *values) {\n    body(values);\n}\nvoid run(float *v) { k<<<4, 128>>>(v); }\n",
    )
    .unwrap();
    let out = warplint(&["check", "--isolated", dir.to_str().unwrap()]);
    let text = stdout(&out);
    let main = dir.join("main.cu");
    let want = format!(
        "in `body`, inlined into `k` by the call at {}:3:5",
        main.display()
    );
    assert!(text.contains(&want), "{text}");
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        dir.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let d = &v.as_array().expect("array")[0];
    assert_eq!(d["location"]["row"], 2, "{d}");
    assert_eq!(d["inlined_at"]["callee"], "body", "{d}");
    assert_eq!(d["inlined_at"]["location"]["row"], 3, "{d}");
    let called_in = d["inlined_at"]["filename"].as_str().unwrap_or_default();
    assert!(called_in.ends_with("main.cu"), "{d}");
}

/// A device function called from several places in one kernel makes one
/// finding, which names every call: the text note lists them, and the
/// JSON record's `inlined_at` carries the others in `other_calls`.
#[test]
fn a_finding_in_a_function_called_twice_names_both_calls() {
    let dir = std::env::temp_dir().join(format!("warplint-cli-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("main.cu"),
        "__device__ void body(float *p, int k) {\n    p[threadIdx.x * 64 + k] = 1.0f;\n}\n__global__ void k(float *values) {\n    body(values, 0);\n    body(values, 1);\n}\nvoid run(float *v) { k<<<4, 128>>>(v); }\n",
    )
    .unwrap();
    let out = warplint(&["check", "--isolated", dir.to_str().unwrap()]);
    let text = stdout(&out);
    let main = dir.join("main.cu");
    let want = format!(
        "in `body`, inlined into `k` by the calls at {0}:5:5 and {0}:6:5",
        main.display()
    );
    assert!(text.contains(&want), "{text}");
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        dir.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let all = v.as_array().expect("array");
    assert_eq!(all.len(), 1, "{v}");
    let d = &all[0];
    assert_eq!(d["inlined_at"]["location"]["row"], 5, "{d}");
    let others = d["inlined_at"]["other_calls"]
        .as_array()
        .expect("other calls");
    assert_eq!(others.len(), 1, "{d}");
    assert_eq!(others[0]["location"]["row"], 6, "{d}");
    assert!(others[0]["filename"]
        .as_str()
        .unwrap_or_default()
        .ends_with("main.cu"));
}
