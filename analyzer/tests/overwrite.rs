//! Stores nvcc does not emit as written (`nvcc/overwrite.rs`), each case
//! measured on an H200 (`fixtures/groundtruth/sm_90/overwrite*.cu`):
//! `x = v; if (c) x = w;` is one store of a select on the `if`'s line,
//! for every lane; a store overwritten before anything reads it is not
//! emitted; an aliasing load between, an `else`, or a pair directly in
//! another `if`'s block keeps the stores as written.

mod common;

use common::run;
use warplint_analyzer::ir::{Op, RemovedWhy};
use warplint_analyzer::Status;

/// (line, status) of each store of `kernel`, in line order.
fn stores(a: &warplint_analyzer::FileAnalysis, kernel: &str) -> Vec<(u32, Status)> {
    let mut v: Vec<(u32, Status)> = a
        .reports
        .iter()
        .filter(|r| r.kernel_name == kernel && r.op == Op::Store)
        .map(|r| (r.span.line, r.status))
        .collect();
    v.sort_by_key(|x| x.0);
    v.dedup();
    v
}

/// The lines of `kernel`'s accesses removed as merged.
fn merged(a: &warplint_analyzer::FileAnalysis, kernel: &str) -> Vec<u32> {
    let k = a
        .program
        .kernels
        .iter()
        .find(|k| k.display_name == kernel)
        .expect("kernel");
    k.removed
        .iter()
        .filter(|r| matches!(r.why, RemovedWhy::Merged { .. }))
        .map(|r| r.span.line)
        .collect()
}

const KERNELS: &str = r#"
__global__ void reload_cond(int *ind, int m, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ind[i * 8] = abs(i * 37 + k);
    if (ind[i * 8] >= m)
        ind[i * 8] = 0;
}
__global__ void other_cond(int *ind, const int *flag, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ind[i * 8] = i * 37 + k;
    if (flag[i] > 0)
        ind[i * 8] = 0;
}
__global__ void else_branch(int *ind, int m, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ind[i * 8] = i * 37 + k;
    if (ind[i * 8] >= m)
        ind[i * 8] = 0;
    else
        ind[i * 8 + 1] = 1;
}
__global__ void outer_guard(double *s, int m)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        s[j * 8] = j * 0.5;
        if (s[j * 8] <= 3.0)
            s[j * 8] = 1.0;
    }
}
__global__ void overwritten(double *s)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    s[j * 8] = j * 0.25;
    s[j * 8] = sqrt(s[j * 8]);
    if (s[j * 8] <= 3.0) {
        s[j * 8] = 1.0;
    }
}
__global__ void in_guarded_loop(int *ind, int n, int m, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int y = 0; y < count; y++) {
            ind[i * count + y] = abs(i * 37 + y);
            if (ind[i * count + y] >= m)
                ind[i * count + y] = 0;
        }
    }
}
int main() {
    reload_cond<<<64, 256>>>(0, 5000, 3);
    other_cond<<<64, 256>>>(0, 0, 3);
    else_branch<<<64, 256>>>(0, 5000, 3);
    outer_guard<<<8, 256>>>(0, 2048);
    overwritten<<<64, 256>>>(0);
    in_guarded_loop<<<64, 256>>>(0, 16384, 5000, 8);
}
"#;

#[test]
fn a_conditional_overwrite_is_one_store_of_a_select_on_the_if_line() {
    let a = run(KERNELS);
    // One store, on the `if`'s line (6), for every lane: exact.
    assert_eq!(stores(&a, "reload_cond"), [(6, Status::Exact)]);
    assert_eq!(merged(&a, "reload_cond"), [5]);
    // Every store of the thread's value is replaced: the last one runs.
    assert_eq!(stores(&a, "overwritten"), [(39, Status::Exact)]);
    assert_eq!(merged(&a, "overwritten"), [37, 38]);
    // In a loop's body, the loop in an `if` (rodinia particlefilter).
    assert_eq!(stores(&a, "in_guarded_loop"), [(49, Status::Exact)]);
    assert_eq!(merged(&a, "in_guarded_loop"), [48]);
}

#[test]
fn what_keeps_the_stores_as_written() {
    let a = run(KERNELS);
    // A load that may alias between: both stores, the second for every
    // lane on the `if`'s line.
    assert_eq!(
        stores(&a, "other_cond"),
        [(12, Status::Exact), (13, Status::Exact)]
    );
    assert!(merged(&a, "other_cond").is_empty());
    // An `else`: a branch, each store on its own line.
    let lines: Vec<u32> = stores(&a, "else_branch").iter().map(|s| s.0).collect();
    assert_eq!(lines, [19, 21, 23]);
    // Directly in another `if`'s block: a branch.
    let lines: Vec<u32> = stores(&a, "outer_guard").iter().map(|s| s.0).collect();
    assert_eq!(lines, [29, 31]);
    assert!(merged(&a, "outer_guard").is_empty());
}
