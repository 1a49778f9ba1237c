//! An integer every thread of a block loads from one address of shared
//! memory, outside any loop (a `__shared__` count), is one number for the
//! block that no launch gives: it is analysed as a parameter no launch
//! gives is, over the spread of sizes (1, 2, 7, 32, 100, 1024, 4099), and
//! said to be loaded. Each case's answer is worked out by hand in its
//! comment (banks: 32 of 4 bytes; sectors: 32 bytes).

mod common;

use common::{find, run, sectors};
use warplint_analyzer::finding::{Assumption, ForEvery, ValueSource};
use warplint_analyzer::ir::{Kernel, Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{AccessReport, Status};

fn max_ways(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        other => panic!("not a shared cost: {other:?} ({:?})", r.unknown_reason),
    }
}

/// The names of the kernel's loaded inputs, in order.
fn loaded(k: &Kernel) -> Vec<&str> {
    k.params
        .iter()
        .filter(|p| p.loaded.is_some())
        .map(|p| p.name.as_str())
        .collect()
}

/// The scan tree of cuda-samples' eigenvalues (`scanSumBlocks`): the
/// number of elements is a `__shared__` count, so the loop's trip count is
/// data. Before, one iteration was analysed (offset 1: lanes 4 bytes
/// apart, 1-way). Now the count is tried: at 1024 (256 threads) iteration
/// k has `d = 512 >> k` lanes at `offset = 2^k`; `s[ai]` is ushort
/// `offset * (2t + 1) - 1`, word `offset * t + (offset - 1) / 2`: at
/// offset 16 (d = 32, one full warp) words `16t + 7`, banks 7 and 23, 16
/// lanes each: 16-way; at offset 32 (d = 16) all 16 lanes in one bank:
/// 16-way; beyond, fewer lanes. The worst warp is 16-way at 1024.
#[test]
fn a_scan_tree_over_a_shared_count_runs_every_level() {
    let a = run(r#"
__global__ void scan(unsigned short *out, const unsigned int *total) {
    __shared__ unsigned int n;
    __shared__ unsigned short s[4096];
    if (threadIdx.x == 0) n = total[0];
    __syncthreads();
    unsigned int offset = 1;
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (threadIdx.x < d) {
            unsigned int ai = offset * (2 * threadIdx.x + 1) - 1;
            unsigned int bi = offset * (2 * threadIdx.x + 2) - 1;
            s[bi] = s[bi] + s[ai];
        }
        offset <<= 1;
    }
    out[threadIdx.x] = s[threadIdx.x];
}
int main() { scan<<<1, 256>>>(0, 0); }
"#);
    let k = &a.program.kernels[0];
    assert_eq!(loaded(k), ["n"]);
    let p = k.params.iter().find(|p| p.name == "n").unwrap();
    assert_eq!(p.loaded.as_ref().map(|l| l.space), Some(Space::Shared));
    let r = a
        .reports
        .iter()
        .find(|r| r.array == "s" && r.op == Op::Load && r.text.contains("ai"))
        .unwrap();
    assert_eq!(max_ways(r), 16.0, "{:?}", r.assumptions);
    assert_eq!(r.status, Status::Assumed);
    assert!(
        r.assumptions.iter().any(|x| matches!(
            x,
            Assumption::ParamCondition {
                name,
                source: ValueSource::Loaded { space: Space::Shared },
                when,
                ..
            } if name == "n" && when.holds(1024)
        )),
        "{:?}",
        r.assumptions
    );
    assert!(
        !r.assumptions
            .iter()
            .any(|x| matches!(x, Assumption::LoopTrips { .. })),
        "the loop's trips are no longer unknown: {:?}",
        r.assumptions
    );
}

/// A loaded trip count (below 32, so no loop budget is met) whose every
/// iteration costs the same: `s[t][i]` on rows of 33 words is 1-way at any
/// `i`, and `out[i * 32 + t]` 4 sectors: the answer holds for every value
/// of `rows_here` tried, so it is exact, and says so.
#[test]
fn a_cost_the_same_for_every_loaded_value_is_not_assumed() {
    let a = run(r#"
__global__ void rows(float *out, const int *counts) {
    __shared__ float s[32][33];
    __shared__ int rows_here;
    if (threadIdx.x == 0) rows_here = counts[blockIdx.x];
    __syncthreads();
    int m = rows_here & 31;
    for (int i = 0; i < m; i++)
        out[i * 32 + threadIdx.x] = s[threadIdx.x][i];
}
int main() { rows<<<1, 32>>>(0, 0); }
"#);
    let load = find(&a, "s", Op::Load);
    assert_eq!(max_ways(load), 1.0);
    let store = find(&a, "out", Op::Store);
    assert_eq!(sectors(store), 4.0);
    for r in [load, store] {
        assert_eq!(r.status, Status::Exact, "{:?}", r.assumptions);
        assert!(
            r.for_every.iter().any(|f| matches!(
                f,
                ForEvery::Param {
                    name,
                    source: ValueSource::Loaded { space: Space::Shared },
                    ..
                } if name == "rows_here"
            )),
            "{:?}",
            r.for_every
        );
    }
}

/// Loads that are not one number for the block stay unknown: one inside a
/// loop (it may change from one iteration to the next), one whose address
/// differs between threads, one of a float, one of global memory (a
/// range's start and end, `cu_seqlens[i]` and `cu_seqlens[i + 1]`, tried
/// independently would mostly be empty ranges).
#[test]
fn loads_in_loops_per_thread_of_floats_or_global_stay_unknown() {
    let a = run(r#"
__global__ void k(float *out, const int *counts, const int *starts) {
    __shared__ int c[64];
    __shared__ float scale;
    c[threadIdx.x] = counts[threadIdx.x];
    __syncthreads();
    for (int j = 0; j < 4; j++) {
        int m = c[0];
        out[m + threadIdx.x] = 0.0f;
    }
    int mine = c[threadIdx.x];
    out[mine] = 1.0f;
    int f = (int)scale;
    out[f + threadIdx.x] = 2.0f;
    int start = starts[blockIdx.x], end = starts[blockIdx.x + 1];
    for (int i = start + threadIdx.x; i < end; i += 32)
        out[i] = 3.0f;
}
int main() { k<<<1, 32>>>(0, 0, 0); }
"#);
    assert!(loaded(&a.program.kernels[0]).is_empty());
    let per_thread = a
        .reports
        .iter()
        .find(|r| r.array == "out" && r.text.contains("mine"))
        .unwrap();
    assert_eq!(per_thread.status, Status::Unknown);
}

/// A second load of the same place with no store to its object between is
/// the same input; after a store it is another.
#[test]
fn a_place_loaded_twice_is_one_input_until_a_store() {
    let a = run(r#"
__global__ void k(float *out, const int *counts) {
    __shared__ int n[2];
    if (threadIdx.x < 2) n[threadIdx.x] = counts[threadIdx.x];
    __syncthreads();
    int a = n[1];
    int b = n[1];
    out[a + b + threadIdx.x] = 0.0f;
    if (threadIdx.x == 0) n[1] = counts[5];
    __syncthreads();
    int c = n[1];
    out[c + threadIdx.x] = 1.0f;
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    assert_eq!(loaded(&a.program.kernels[0]), ["n[1]", "n[1]"]);
}

/// A loaded flag is tried as 0 and 1 (the spread has no 0): `if
/// (!s_skip)` runs the 32-sector store when the flag is 0.
#[test]
fn a_shared_flag_is_tried_as_zero_and_one() {
    let a = run(r#"
__global__ void k(float *out, const float *in) {
    __shared__ int s_skip;
    if (threadIdx.x == 0) s_skip = in[0] == 0.0f;
    __syncthreads();
    if (!s_skip) out[threadIdx.x * 32] = in[threadIdx.x];
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let p = a.program.kernels[0]
        .params
        .iter()
        .find(|p| p.name == "s_skip")
        .unwrap();
    assert_eq!(p.values.as_deref(), Some(&[0, 1][..]));
    let r = find(&a, "out", Op::Store);
    assert_eq!(sectors(r), 32.0, "{:?}", r.assumptions);
}

/// What the analysis cannot see may write shared memory between two
/// loads (a call it does not inline, a barrier after another thread's
/// store): the second load is another input. A value the kernel stored
/// itself (`s_stride = 33`) is not data: its loads stay unknown, never
/// tried over the spread (which would report a 32-way conflict at 32).
#[test]
fn writes_the_analysis_cannot_see_and_known_stores() {
    let a = run(r#"
__device__ void bump(int *p);
__global__ void k(float *out, const int *in) {
    __shared__ int s_n;
    __shared__ float buf[4096];
    if (threadIdx.x == 0) s_n = in[blockIdx.x];
    __syncthreads();
    int a = s_n;
    if (threadIdx.x == 0) bump(&s_n);
    int b = s_n;
    buf[threadIdx.x * (b - a)] = 1.0f;
}
__global__ void known(float *out) {
    __shared__ int s_stride;
    __shared__ float buf[4096];
    if (threadIdx.x == 0) s_stride = 33;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x * s_stride];
}
int main() { k<<<1, 32>>>(0, 0); known<<<1, 32>>>(0); }
"#);
    assert_eq!(loaded(&a.program.kernels[0]), ["s_n", "s_n"]);
    assert!(loaded(&a.program.kernels[1]).is_empty());
    let r = a
        .reports
        .iter()
        .find(|r| r.kernel_name == "known" && r.array == "buf")
        .unwrap();
    assert_eq!(r.status, Status::Unknown);
}

/// A field of a vector loaded from memory is a loaded value too (before,
/// cuda-samples' histogram64 said "a field of a value not in memory"):
/// the bin `data.x` picks is data, drawn over the loaded integer's width
/// (`data_draws.rs`), and the assumption names `in`.
#[test]
fn a_field_of_a_loaded_vector_is_a_loaded_value() {
    let a = run(r#"
__global__ void h(uint4 *in, unsigned n) {
    __shared__ unsigned char s[64 * 64];
    for (unsigned pos = threadIdx.x; pos < n; pos += blockDim.x) {
        uint4 data = in[pos];
        s[threadIdx.x + ((data.x >> 2) & 63) * 64]++;
    }
}
int main() { h<<<1, 64>>>(0, 4096); }
"#);
    for op in [Op::Load, Op::Store] {
        let r = find(&a, "s", op);
        assert_eq!(r.status, Status::Assumed, "{:?}", r.unknown_reason);
        let from: Vec<&str> = r
            .assumptions
            .iter()
            .filter_map(|x| match x {
                warplint_analyzer::finding::Assumption::UniformData { arrays, .. } => {
                    Some(arrays.iter().map(String::as_str))
                }
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(from, ["in"]);
    }
}
