//! What nvcc emits for source accesses: loops it unrolls over consecutive
//! shared-memory elements become vector accesses (`nvcc/unroll.rs`), and a
//! load of an address already loaded is not emitted (`nvcc/reload.rs`);
//! both measured in `fixtures/groundtruth/sm_90/`, which the calibration
//! test compares line by line. Here: what keeps them from happening.

use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::{analyze, AccessReport, Options};

fn store(src: &str) -> AccessReport {
    analyze(src.as_bytes(), &Modern, &Options::default())
        .reports
        .into_iter()
        .find(|r| r.space == Space::Shared && r.op == Op::Store)
        .expect("a shared store")
}

const MERGED: &str = "__global__ void k(const float *in) {\n\
    __shared__ float s[1024];\n\
    for (int k = 0; k < 8; k++) {\n\
      s[threadIdx.x * 8 + k] = in[k];\n\
    }\n}\n\
    void run(const float *in) { k<<<1, 128>>>(in); }\n";

/// Eight floats per thread: two 16-byte stores a warp, in the first and
/// fifth iterations.
#[test]
fn eight_consecutive_floats_are_two_16_byte_stores() {
    let r = store(MERGED);
    assert_eq!(r.width, 16);
    assert_eq!(r.executions, 4.0 * 2.0, "4 warps, 2 stores each");
}

/// A barrier in the body, a trip count not a multiple of the vector, or a
/// start the vector is not aligned to keep the 4-byte stores.
#[test]
fn a_barrier_an_odd_trip_count_or_a_misaligned_start_keeps_them_apart() {
    let barrier = MERGED.replace("in[k];\n", "in[k];\n__syncthreads();\n");
    assert_eq!(store(&barrier).width, 4);
    let odd = MERGED.replace("k < 8", "k < 3");
    assert_eq!(store(&odd).width, 4);
    let shifted = MERGED.replace("threadIdx.x * 8 + k", "threadIdx.x * 8 + 1 + k");
    assert_eq!(store(&shifted).width, 4);
    // Two elements in, the start is 8-byte aligned: 8-byte stores.
    let half = MERGED.replace("threadIdx.x * 8 + k", "threadIdx.x * 8 + 2 + k");
    assert_eq!(store(&half).width, 8);
}

/// A load of an address already loaded is not emitted again
/// (`nvcc/reload.rs`, measured in `fixtures/groundtruth/sm_90/reload.cu`):
/// unless a store that may write it, or a barrier, lies between.
#[test]
fn a_reload_is_dropped_unless_a_store_or_barrier_lies_between() {
    let loads = |body: &str| {
        let src = format!(
            "__global__ void k(const float *a, float *b, float *o) {{\n\
             int t = threadIdx.x;\n{body}\n}}\n\
             void run(const float *a, float *b, float *o) {{ k<<<1, 64>>>(a, b, o); }}\n"
        );
        analyze(src.as_bytes(), &Modern, &Options::default())
            .reports
            .iter()
            .filter(|r| r.array == "a" && r.op == Op::Load)
            .count()
    };
    assert_eq!(
        loads("float x = a[2 * t];\nfloat z = a[2 * t];\no[t] = x + z;"),
        1
    );
    assert_eq!(
        loads("float x = a[2 * t];\nb[t] = x;\nfloat z = a[2 * t];\no[t] = x + z;"),
        2
    );
    assert_eq!(
        loads("float x = a[2 * t];\n__syncthreads();\nfloat z = a[2 * t];\no[t] = x + z;"),
        2
    );
    // Another address is another load.
    assert_eq!(
        loads("float x = a[2 * t];\nfloat z = a[2 * t + 1];\no[t] = x + z;"),
        2
    );
}

/// A load of what the thread just stored is forwarded (no load), unless
/// the store is under an `if` the load is not, or a store that may alias
/// lies between (`nvcc/reload.rs`, measured in
/// `fixtures/groundtruth/sm_90/forward.cu`).
#[test]
fn a_stored_value_is_forwarded_to_a_later_load() {
    let loads = |body: &str| {
        let src = format!(
            "__global__ void k(float *a, float *b, float *o, int n) {{\n\
             int t = threadIdx.x;\n{body}\n}}\n\
             void run(float *a, float *b, float *o) {{ k<<<1, 64>>>(a, b, o, 9); }}\n"
        );
        analyze(src.as_bytes(), &Modern, &Options::default())
            .reports
            .iter()
            .filter(|r| r.array == "a" && r.op == Op::Load)
            .count()
    };
    assert_eq!(loads("a[2 * t] = 1.0f;\no[t] = a[2 * t];"), 0);
    assert_eq!(loads("a[2 * t] = 1.0f;\nb[t] = 2.0f;\no[t] = a[2 * t];"), 1);
    assert_eq!(loads("if (t < n) a[2 * t] = 1.0f;\no[t] = a[2 * t];"), 1);
    // Stored on both branches of an if/else: forwarded
    // (`fixtures/groundtruth/sm_90/forward_branches.cu`), in a loop too;
    // on one branch, or on both of two different conditions, loaded.
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nelse a[2 * t] = 2.0f;\no[t] = a[2 * t];"),
        0
    );
    assert_eq!(
        loads(
            "for (int y = 0; y < 4; y++) {\nif (t < y + n) a[2 * t + y] = 0;\n\
             else a[2 * t + y] = 2.0f;\no[t] += a[2 * t + y];\n}"
        ),
        0
    );
    // After a `break` (llm.c's softmax: its guard comes after the branch's).
    assert_eq!(
        loads(
            "for (int y = 0; y < 4; y++) {\nif (y >= n) break;\n\
             if (t < y + n) a[2 * t + y] = 0;\nelse a[2 * t + y] = 2.0f;\n\
             o[t] += a[2 * t + y];\n}"
        ),
        0
    );
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nelse b[t] = 2.0f;\no[t] = a[2 * t];"),
        1
    );
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nif (t > n) a[2 * t] = 2.0f;\no[t] = a[2 * t];"),
        1
    );
}
