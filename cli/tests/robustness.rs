//! Garbage in: every file is untrusted. Whatever the input, warplint ends
//! with a note and an exit code of 0 or 2: never a panic, a crash or a hang.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{stderr, stdout, warplint};

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warplint-robustness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn run_on(name: &str, bytes: &[u8]) -> Output {
    let p = scratch(name, bytes);
    let path = p.to_string_lossy().into_owned();
    let out = warplint(&["report", "--isolated", "--format", "json", &path]);
    let err = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0) | Some(2)),
        "{name}: exit {:?}\n{err}",
        out.status
    );
    assert!(!err.contains("panicked"), "{name}: {err}");
    // The output is still a well-formed report.
    if out.status.code() == Some(0) {
        let _: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    }
    out
}

fn notes(out: &Output) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    doc["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| n["message"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn empty_file() {
    let out = run_on("empty.cu", b"");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn binary_file_gets_a_note_and_exit_2() {
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let out = run_on("blob.cu", &bytes);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        notes(&out).iter().any(|n| n.contains("binary")),
        "{:?}",
        notes(&out)
    );
}

#[test]
fn truncated_source_still_reports_what_it_can() {
    let src =
        std::fs::read_to_string(common::root().join("fixtures/examples/transpose.cu")).unwrap();
    // Cut in the middle of the third kernel: the first two are whole.
    let third = src
        .find("__global__ void transposeNoBankConflicts")
        .unwrap();
    let out = run_on("truncated.cu", &src.as_bytes()[..third + 200]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernels: std::collections::BTreeSet<String> = doc["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kernel"].as_str().unwrap().to_string())
        .collect();
    assert!(
        kernels.contains("transposeNaive") && kernels.contains("transposeCoalesced"),
        "{kernels:?}"
    );
    assert!(
        notes(&out).iter().any(|n| n.contains("unclosed brace")),
        "{:?}",
        notes(&out)
    );
    // Cut inside an expression of the first kernel.
    let first = src.find("odata[x * width").unwrap();
    let out = run_on("truncated2.cu", &src.as_bytes()[..first + 12]);
    assert!(!notes(&out).is_empty());
}

#[test]
fn ten_thousand_nested_parentheses() {
    let depth = 10_000;
    let src = format!(
        "__global__ void k(float *a) {{ a[{}threadIdx.x{}] = 0; }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let out = run_on("deep.cu", src.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &doc["accesses"][0];
    assert_eq!(a["status"], "unknown", "{a}");
}

#[test]
fn deeply_nested_blocks_and_statements() {
    let depth = 5_000;
    let src = format!(
        "__global__ void k(float *a) {{ {} a[threadIdx.x] = 0; {} }}\n",
        "if (threadIdx.x < 64) {".repeat(depth),
        "}".repeat(depth)
    );
    run_on("blocks.cu", src.as_bytes());
}

#[test]
fn non_utf8_source() {
    let mut src = b"// caf\xe9 \xff\xfe\n__global__ void k(float *a) { a[threadIdx.x * 2] = 0; /* \xc3\x28 */ }\n".to_vec();
    src.extend_from_slice(b"int main() { k<<<1, 64>>>(0); }\n");
    let out = run_on("latin1.cu", &src);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["accesses"][0]["global"]["sectors"], 8);
}

#[test]
fn self_referential_macros_and_runaway_expressions() {
    let mut src = String::from("#define A A + 1\n#define B(x) B(x)\n__global__ void k(float *a) {\n int x = threadIdx.x;\n");
    for _ in 0..200 {
        src.push_str(" x = x * 3 + x;\n");
    }
    src.push_str(" a[A] = 0; a[B(1)] = 1; a[x] = 2;\n for (;;) { a[threadIdx.x] = 3; }\n while (1) { a[0] = 4; }\n}\n");
    run_on("runaway.cu", src.as_bytes());
}

#[test]
fn huge_loop_bounds_stay_within_budget() {
    let src = "__global__ void k(float *a) {\n for (long long i = 0; i < (1LL << 62); i++)\n  for (long long j = 0; j < (1LL << 62); j++)\n   a[threadIdx.x * i + j] = 0;\n}\nint main() { k<<<1, 1024>>>(0); }\n";
    let out = run_on("huge.cu", src.as_bytes());
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn missing_path_is_exit_2() {
    let out = warplint(&["report", "--isolated", "no/such/file.cu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).to_lowercase().contains("no such file"));
}

/// A kernel with one uncoalesced store (GM001), for runs that must still
/// check it next to files that cannot be.
const GOOD: &[u8] =
    b"__global__ void k(float *x) { x[threadIdx.x * 2] = 0; }\nint main() { k<<<1, 32>>>(0); }\n";

/// `check` and `report` on `bad` and a good file: `bad` is an error of its
/// own (its name on stderr, exit code 2), the good file is still checked.
fn rest_is_checked(bad: &str, why: &str) {
    // One good file per caller: tests run in parallel.
    let name: String = bad.chars().filter(char::is_ascii_alphanumeric).collect();
    let good = scratch(&format!("good-{name}.cu"), GOOD);
    let good = good.to_string_lossy().into_owned();
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        bad,
        &good,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
    assert!(err.contains(bad) && err.contains(why), "{bad}: {err}");
    assert!(stdout(&out).contains("GM001"), "{bad}: {}", stdout(&out));
    let out = warplint(&["report", "--isolated", "--format", "json", bad, &good]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    // Said on stderr, or as the file's note in the report.
    let noted = doc["notes"].as_array().is_some_and(|n| {
        n.iter()
            .any(|n| n["message"].as_str().unwrap_or("").contains(why))
    });
    assert!(err.contains(bad) || noted, "{bad}: {err}");
    let accesses = doc["accesses"].as_array().expect("accesses");
    assert!(accesses.iter().any(|a| a["file"] == good.as_str()), "{bad}");
}

/// A file that is listed but fails to read (as one that vanished or lost
/// its permissions after discovery does): `/proc/self/mem` is a regular
/// file whose first read fails with EIO even for root, so the test holds
/// where permissions do not (CI runs as root).
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_file_is_an_error_and_the_rest_is_checked() {
    rest_is_checked("/proc/self/mem", "error");
}

#[test]
fn a_missing_file_is_an_error_and_the_rest_is_checked() {
    let gone = scratch("gone.cu", b"");
    std::fs::remove_file(&gone).unwrap();
    rest_is_checked(&gone.to_string_lossy(), "os error");
}

/// A named pipe would block a reader forever: named, it is an error; in a
/// folder, it is not a source file.
#[cfg(unix)]
#[test]
fn a_named_pipe_never_blocks() {
    let dir = std::env::temp_dir().join(format!("warplint-robustness-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.cu");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    rest_is_checked(&fifo.to_string_lossy(), "not a regular file");
    std::fs::write(dir.join("good.cu"), GOOD).unwrap();
    let d = dir.to_string_lossy().into_owned();
    let out = warplint(&["check", "--isolated", "--output-format", "concise", &d]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("GM001"));
}

/// 100 MB of source: a note for that file (read no further than the
/// budget), the rest checked.
#[test]
fn a_huge_file_is_a_note_and_the_rest_is_checked() {
    let mut big = String::with_capacity(100 << 20);
    while big.len() < 100 << 20 {
        big.push_str("__device__ int f(int x) { return x * 3 + 1; } // padding padding\n");
    }
    let p = scratch("hundred_mb.cu", big.as_bytes());
    drop(big);
    let path = p.to_string_lossy().into_owned();
    rest_is_checked(&path, "MAX_FILE_BYTES");
    let out = warplint(&["debug", "parse-only", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn huge_grids_and_launch_bounds() {
    let src = "__global__ void __launch_bounds__(1000000) k(float *a) {\n a[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x + threadIdx.x * 3] = 0;\n}\nint main() { k<<<dim3(1 << 30, 1 << 30, 64), 1024>>>(0); k<<<dim3(2147483647, 65535, 65535), dim3(1024, 1024, 64)>>>(0); }\n";
    let out = run_on("grid.cu", src.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Stride-3 floats: 12 sectors when a warp starts on a sector, 13 when not.
    let s = doc["accesses"][0]["global"]["sectors"].as_f64().unwrap();
    assert!((12.0..=13.0).contains(&s), "{s}");
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_and_the_rest_is_analysed() {
    let dir =
        std::env::temp_dir().join(format!("warplint-robustness-links-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::write(
        dir.join("a/k.cu"),
        "__global__ void k(float *x) { x[threadIdx.x * 2] = 0; }\nint main() { k<<<1, 32>>>(0); }\n",
    )
    .unwrap();
    // A loop back to the top, a link to itself, and a link to nothing.
    let _ = std::os::unix::fs::symlink(&dir, dir.join("a/b/up"));
    let _ = std::os::unix::fs::symlink(dir.join("a/b/self"), dir.join("a/b/self"));
    let _ = std::os::unix::fs::symlink(dir.join("gone.cu"), dir.join("a/dangling.cu"));
    for cmd in [
        &["check", "--isolated", "--output-format", "concise"][..],
        &["debug", "parse-only"][..],
    ] {
        let mut args = cmd.to_vec();
        let d = dir.to_string_lossy().into_owned();
        args.push(&d);
        let out = warplint(&args);
        let err = stderr(&out);
        assert!(
            matches!(out.status.code(), Some(0) | Some(1) | Some(2)),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // The real file once, whatever the links.
        if cmd[0] == "check" {
            assert_eq!(text.matches("k.cu:1:").count(), 1, "{text}");
        } else {
            assert!(text.starts_with("parsed 1 files"), "{text}");
        }
    }
}
