//! A thread that reads back what it just stored reads its own value: the
//! condition `if (x[t])` after `x[t] = t % 2` splits the warp by `t % 2`,
//! not by data. The value is forwarded only where nothing else may have
//! written the place between (another store, a barrier, a call the
//! analysis cannot see, a loop's other iterations), where the store ran
//! whenever the load runs, and for integers at least 4 bytes wide. Each
//! case's answer is worked out by hand (sectors: 32 bytes).

mod common;

use common::{run, sectors};
use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::Op;
use warplint_analyzer::{AccessReport, FileAnalysis, Status};

/// The store to `y`, the access under the condition.
fn guarded_store(a: &FileAnalysis) -> &AccessReport {
    a.reports
        .iter()
        .find(|r| r.array == "y" && r.op == Op::Store)
        .expect("a store to y")
}

/// Whether the report assumed lanes active where a condition reads data.
fn assumed_data_lanes(r: &AccessReport) -> bool {
    r.assumptions
        .iter()
        .any(|x| matches!(x, Assumption::LanesActive { .. }))
}

/// `x[t] = t % 2` then `if (x[t])`: the odd lanes store `y[8t]`, ints 32
/// bytes apart: 16 lanes, 16 sectors, for every warp, nothing assumed.
#[test]
fn a_value_the_thread_stored_decides_its_lanes() {
    let a = run(r#"
__global__ void k(int *x, int *y) {
    int t = threadIdx.x;
    x[t] = t % 2;
    if (x[t])
        y[t * 8] = 1;
}
int main() { k<<<1, 64>>>(0, 0); }
"#);
    let r = guarded_store(&a);
    assert_eq!(sectors(r), 16.0, "{:?}", r.assumptions);
    assert!(!assumed_data_lanes(r), "{:?}", r.assumptions);
    assert_eq!(r.status, Status::Exact);
}

/// The measured case (`fixtures/groundtruth/sm_90/overwrite.cu`,
/// `else_branch`): `ind[i*8] = i*37 + k` then `if (ind[i*8] >= m)`. With
/// k = 3 and m = 5000, lanes i ≤ 135 take the `else` (i·37 + 3 < 5000):
/// four full warps (32 sectors each) and 8 lanes of the fifth (8
/// sectors), a mean of 136 / 5 = 27.2 sectors, as the H200 counted.
#[test]
fn the_measured_else_branch_runs_where_the_stored_value_says() {
    let a = run(r#"
__global__ void else_branch(int *ind, int *y, int m, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ind[i * 8] = i * 37 + k;
    if (ind[i * 8] >= m)
        ind[i * 8] = 0;
    else
        y[i * 8 + 1] = 1;
}
int main() { else_branch<<<64, 256>>>(0, 0, 5000, 3); }
"#);
    let r = guarded_store(&a);
    assert!((sectors(r) - 27.2).abs() < 1e-9, "{}", sectors(r));
    assert!(!assumed_data_lanes(r), "{:?}", r.assumptions);
}

/// What keeps the value from being forwarded: the load then reads data,
/// and which lanes run is assumed (every lane: 32 sectors).
#[test]
fn a_value_another_write_may_have_changed_is_data() {
    let cases = [
        // A barrier: another thread may have written x[t].
        (
            "x[t] = t % 2; __syncthreads(); if (x[t]) y[t * 8] = 1;",
            "int",
        ),
        // A store through another pointer, which may be the same memory.
        ("x[t] = t % 2; z[t] = 0; if (x[t]) y[t * 8] = 1;", "int"),
        // A store to another element of x (it may be x[t] for some lane).
        ("x[t] = t % 2; x[t + 1] = 0; if (x[t]) y[t * 8] = 1;", "int"),
        // The store ran only for some lanes.
        ("if (t < 16) x[t] = t % 2; if (x[t]) y[t * 8] = 1;", "int"),
        // A loop's earlier iteration stored it, or the code before it.
        (
            "x[t] = t % 2; for (int j = 0; j < 4; j++) { if (x[t]) y[t * 8] = j; x[t] = j; }",
            "int",
        ),
        // A call the analysis cannot see.
        ("x[t] = t % 2; opaque(z); if (x[t]) y[t * 8] = 1;", "int"),
        // A narrow integer: the store truncates.
        ("x[t] = t % 2; if (x[t]) y[t * 8] = 1;", "char"),
        // A volatile place: another thread may write it between.
        ("x[t] = t % 2; if (x[t]) y[t * 8] = 1;", "volatile int"),
    ];
    for (body, ty) in cases {
        let src = format!(
            "__device__ void opaque(int *p);\n\
             __global__ void k({ty} *x, int *y, int *z) {{\n\
                 int t = threadIdx.x;\n\
                 {body}\n\
             }}\n\
             int main() {{ k<<<1, 64>>>(0, 0, 0); }}\n"
        );
        let a = run(&src);
        let r = guarded_store(&a);
        assert!(assumed_data_lanes(r), "{ty}: {body}: {:?}", r.assumptions);
        assert_eq!(sectors(r), 32.0, "{ty}: {body}");
    }
}
