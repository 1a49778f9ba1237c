//! Control flow as the rules see it. Which threads of a block reach each
//! `__syncthreads()`: the engine's per-thread counts (`symbolic/reach.rs`)
//! against a brute-force oracle that runs every thread of the block, and
//! the cases that keep a thread out of the count (it returned) or the
//! answer unknown (data). Which warps an `if`/`else` splits
//! (`symbolic/branches.rs`), against the same brute force per warp.

mod common;

use common::run;
use proptest::prelude::*;
use warplint_analyzer::Status;

/// A kernel whose barrier thread `t` reaches `trip(t) · cond(t)` times:
/// in a loop of `trip` iterations (a constant, or `t % l`, or none), under
/// `if (t % m < r)` (or none).
#[derive(Debug, Clone)]
struct Case {
    block: i64,
    cond: Option<(i64, i64)>,
    trip: Trip,
    /// Threads `t >= exit_from` return before the loop.
    exit_from: Option<i64>,
}

#[derive(Debug, Clone, Copy)]
enum Trip {
    None,
    Const(i64),
    Modulo(i64),
}

impl Case {
    fn source(&self) -> String {
        let exit = self
            .exit_from
            .map(|e| format!("    if (t >= {e}) return;\n"))
            .unwrap_or_default();
        let barrier = match self.cond {
            Some((m, r)) => format!("if (t % {m} < {r}) {{ s[t] = 1; __syncthreads(); }}"),
            None => "s[t] = 1; __syncthreads();".to_string(),
        };
        let body = match self.trip {
            Trip::None => format!("    {barrier}\n"),
            Trip::Const(n) => format!("    for (int k = 0; k < {n}; k++) {{ {barrier} }}\n"),
            Trip::Modulo(l) => format!("    for (int k = 0; k < t % {l}; k++) {{ {barrier} }}\n"),
        };
        format!(
            "__global__ void k(float *x) {{\n    __shared__ float s[1024];\n    int t = threadIdx.x;\n{exit}{body}    x[t] = s[t];\n}}\nint main() {{ k<<<1, {}>>>(0); }}\n",
            self.block
        )
    }

    /// Per thread that goes on: how many times it reaches the barrier.
    fn oracle(&self) -> Vec<u64> {
        (0..self.block)
            .filter(|t| self.exit_from.is_none_or(|e| *t < e))
            .map(|t| {
                let trip = match self.trip {
                    Trip::None => 1,
                    Trip::Const(n) => n,
                    Trip::Modulo(l) => t % l,
                };
                let cond = self.cond.is_none_or(|(m, r)| t % m < r);
                if cond {
                    trip as u64
                } else {
                    0
                }
            })
            .collect()
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just(32i64), Just(64), Just(96), Just(256)],
        prop_oneof![
            Just(None),
            (1i64..70, 0i64..70).prop_map(|(m, r)| Some((m, r))),
        ],
        prop_oneof![
            Just(Trip::None),
            (0i64..5).prop_map(Trip::Const),
            (1i64..6).prop_map(Trip::Modulo),
        ],
        prop_oneof![Just(None), (1i64..300).prop_map(Some)],
    )
        .prop_map(|(block, cond, trip, exit_from)| Case {
            block,
            cond,
            trip,
            exit_from,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn reach_counts_match_every_thread_run_alone(c in case()) {
        let a = run(&c.source());
        let b = &a.barriers[0];
        prop_assert_eq!(b.status, Status::Exact, "{:?}", b.unknown_reason);
        let counts = c.oracle();
        let (lo, hi) = (counts.iter().min(), counts.iter().max());
        match (&b.split, lo, hi) {
            (Some(s), Some(lo), Some(hi)) => {
                prop_assert!(lo != hi, "split claimed, oracle uniform: {:?}", s);
                prop_assert_eq!(s.reached.1, *hi);
                prop_assert_eq!(s.missed.1, *lo);
                let reaching = counts.iter().filter(|n| *n == hi).count() as u64;
                prop_assert_eq!(s.reaching, reaching);
                prop_assert_eq!(s.threads, counts.len() as u64);
            }
            (None, lo, hi) => prop_assert_eq!(lo, hi, "a split the engine missed"),
            (Some(s), _, _) => prop_assert!(false, "split with no thread going on: {:?}", s),
        }
    }
}

/// The condition that splits the block is named: the `if`'s condition.
#[test]
fn the_splitting_condition_is_named() {
    let a = run(r#"
__global__ void k(float *x, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    if (n > 4) {
        if (t < 100) {
            s[t] = x[t];
            __syncthreads();
        }
    }
    x[t] = s[t];
}
int main() { k<<<1, 256>>>(0, 8); }
"#);
    let s = a.barriers[0].split.as_ref().expect("a split");
    let site = s.site.expect("a site");
    assert_eq!(site.line, 6);
    assert_eq!(s.reached.0, [0, 0, 0]);
    assert_eq!(s.missed.0, [100, 0, 0]);
    assert_eq!(s.reaching, 100);
}

/// Conditions the engine cannot evaluate leave the barrier unknown, with
/// no split; a condition the whole block shares is no split.
#[test]
fn data_is_unknown_and_uniform_conditions_are_no_split() {
    let a = run(r#"
__global__ void data(float *x, const int *f) {
    __shared__ float s[256];
    if (f[threadIdx.x]) { s[threadIdx.x] = 1; __syncthreads(); }
    x[threadIdx.x] = s[0];
}
__global__ void uniform(float *x, int n) {
    __shared__ float s[256];
    if (blockIdx.x < n && n > 3) { s[threadIdx.x] = 1; __syncthreads(); }
    for (int k = 0; k < n; k++) { s[threadIdx.x] += 1; __syncthreads(); }
    x[threadIdx.x] = s[0];
}
int main() { data<<<1, 256>>>(0, 0); uniform<<<8, 256>>>(0, 5); }
"#);
    let data = &a.barriers[0];
    assert_eq!(data.status, Status::Unknown);
    assert!(data.split.is_none());
    for b in &a.barriers[1..] {
        assert_eq!(b.status, Status::Exact, "{:?}", b.unknown_reason);
        assert!(b.split.is_none(), "line {}: {:?}", b.span.line, b.split);
    }
    assert_eq!(a.barriers.len(), 3);
}

/// Threads that return from the kernel are not waited for, wherever the
/// `return` is: in a loop (before or after the barrier), in the `else` of
/// the `if` holding the barrier. None of these is a split.
#[test]
fn returns_from_the_kernel_anywhere_are_exits() {
    let a = run(r#"
__global__ void in_loop(float *x, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    for (int j = 0; j < n; j++) {
        if (t >= 128) return;
        s[t] = x[j * 256 + t];
        __syncthreads();
    }
}
__global__ void after_barrier(float *x) {
    __shared__ float s[256];
    int t = threadIdx.x;
    for (int k = 0; k < 4; k++) {
        s[t] = x[t];
        __syncthreads();
        if (t >= 128 && k == 1) return;
    }
}
__global__ void else_returns(float *x) {
    __shared__ float s[64];
    int t = threadIdx.x;
    if (t < 64) { s[t] = x[t]; __syncthreads(); x[t] = s[63 - t]; }
    else { return; }
}
int main() { in_loop<<<1, 256>>>(0, 4); after_barrier<<<1, 256>>>(0); else_returns<<<2, 256>>>(0); }
"#);
    assert_eq!(a.barriers.len(), 3);
    for b in &a.barriers {
        assert_ne!(
            b.status,
            Status::Unknown,
            "{}: {:?}",
            b.kernel_name,
            b.unknown_reason
        );
        assert!(b.split.is_none(), "{}: {:?}", b.kernel_name, b.split);
    }
}

/// A return in an inlined function is not an exit: the thread goes on.
#[test]
fn a_return_from_a_device_function_is_not_an_exit() {
    let a = run(r#"
__device__ void work(float *s, int t) {
    if (t >= 64) return;
    s[t] *= 2.0f;
    __syncthreads();
}
__global__ void k(float *x) {
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x];
    work(s, threadIdx.x);
    x[threadIdx.x] = s[threadIdx.x];
}
int main() { k<<<1, 256>>>(0); }
"#);
    let s = a.barriers[0].split.as_ref().expect("a split");
    assert_eq!((s.reaching, s.threads), (64, 256));
}

/// The block holding the end of the data: 100 blocks, `n` ends in block
/// 37 (37·256 + 100): its threads 100..255 skip the barrier.
#[test]
fn a_split_in_one_block_of_many_is_found() {
    let a = run(r#"
__global__ void k(float *x, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n) {
        s[threadIdx.x] = x[i];
        __syncthreads();
        x[i] = s[255 - threadIdx.x];
    }
}
int main() { k<<<100, 256>>>(0, 9572); }
"#);
    let s = a.barriers[0].split.as_ref().expect("a split");
    assert_eq!(s.block, [37, 0, 0]);
    assert_eq!((s.reaching, s.threads), (100, 256));
}

/// A return on a value a loop computed (`lim` = 64 after the loop):
/// threads 64.. exit, whatever guard the barrier has after it; `t < 64`
/// is then every thread that goes on, `t < 32` half of them.
#[test]
fn a_return_on_a_value_a_loop_computed_is_an_exit() {
    let kernel = |bound: u32| {
        format!(
            "__global__ void k(float *x) {{\n    __shared__ float s[256];\n    int t = threadIdx.x;\n    int lim = 256;\n    for (int j = 0; j < 3; j++) lim -= 64;\n    if (t >= lim) return;\n    s[t] = x[t];\n    if (t < {bound}) __syncthreads();\n    x[t] = s[t ^ 1];\n}}\nint main() {{ k<<<1, 256>>>(0); }}\n"
        )
    };
    let all = run(&kernel(64));
    assert_eq!(all.barriers[0].status, Status::Exact);
    assert!(
        all.barriers[0].split.is_none(),
        "{:?}",
        all.barriers[0].split
    );
    let half = run(&kernel(32));
    let s = half.barriers[0].split.as_ref().expect("a split");
    assert_eq!((s.reaching, s.threads), (32, 64));
}

/// `if (t % m < r)` with a runtime loop on each side, in blocks of `b`
/// threads: the warps split are those holding lanes on both sides, by
/// brute force over every warp.
#[test]
fn branch_splits_match_every_warp_run_alone() {
    for (m, r, b) in [
        (2, 1, 256),
        (32, 16, 256),
        (64, 32, 256),
        (4, 1, 96),
        (256, 40, 256),
        (3, 1, 64),
    ] {
        let src = format!(
            "__global__ void k(float *x, int n) {{\n    int t = threadIdx.x;\n    float v = x[t];\n    if (t % {m} < {r}) {{ for (int j = 0; j < n; j++) v += 1.0f; }}\n    else {{ for (int j = 0; j < n; j++) v -= 1.0f; }}\n    x[t] = v;\n}}\nint main() {{ k<<<1, {b}>>>(0, 8); }}\n"
        );
        let a = run(&src);
        assert_eq!(a.branches.len(), 1, "{src}");
        let br = &a.branches[0];
        assert_eq!(br.status, Status::Exact, "{:?}", br.unknown_reason);
        let warps = (b + 31) / 32;
        let split = (0..warps)
            .filter(|w| {
                let lanes: Vec<i64> = (w * 32..((w + 1) * 32).min(b)).collect();
                let taken = lanes.iter().filter(|t| *t % m < r).count();
                taken > 0 && taken < lanes.len()
            })
            .count() as u64;
        assert_eq!(
            (br.executions, br.divergent),
            (warps as u64, split),
            "m {m} r {r} b {b}"
        );
    }
}

/// Only an `if` with an `else`, both sides holding work nvcc branches
/// around, is a branch: short sides (an inline `asm` store too), constant
/// loops and a lone `if` are not recorded.
#[test]
fn only_work_on_both_sides_is_a_branch() {
    let a = run(r#"
__global__ void k(float *x, int n) {
    int t = threadIdx.x;
    float v = x[t];
    if (t % 2) v = v * 3.0f; else v = v + 1.0f;
    if (t % 2) { for (int j = 0; j < 16; j++) v += 1.0f; } else { for (int j = 0; j < 16; j++) v -= 1.0f; }
    if (t % 2) { for (int j = 0; j < n; j++) v += 1.0f; }
    if (t % 2) { for (int j = 0; j < n; j++) v += 1.0f; } else { v = v / x[t + 1]; }
    if (t % 2) { asm volatile("st.shared.u32 [%0], %1;" :: "r"(t), "r"(t) : "memory"); }
    else { asm volatile("st.shared.u32 [%0], %1;" :: "r"(t + 4), "r"(t) : "memory"); }
    x[t] = v;
}
int main() { k<<<1, 64>>>(0, 8); }
"#);
    let lines: Vec<u32> = a.branches.iter().map(|b| b.span.line).collect();
    assert_eq!(lines, [8]);
}

/// `s[t] = v; w = s[(t + d) % 32]` in one warp: lane t reads what lane
/// t + d wrote, another lane for every d but 0; with `__syncwarp()` or a
/// shuffle between, the two accesses are in different epochs and are not
/// a pair at all.
#[test]
fn lanes_reading_another_lanes_store_are_found() {
    for d in 0..32 {
        let a = run(&format!(
            "__global__ void k(float *x) {{\n    __shared__ float s[32];\n    int t = threadIdx.x;\n    s[t] = x[t];\n    x[t] = s[(t + {d}) % 32];\n}}\nint main() {{ k<<<1, 32>>>(0); }}\n"
        ));
        let found: Vec<_> = a.races.iter().filter_map(|r| r.sample).collect();
        if d == 0 {
            assert!(found.is_empty(), "{found:?}");
            continue;
        }
        let x = found.first().unwrap_or_else(|| panic!("d {d}: none"));
        // The first pair found: a writer and a reader of the same word.
        assert_eq!(x.first_offset, x.second_offset, "d {d}");
        assert_eq!((x.second_lane + d) % 32, x.first_lane, "d {d}: {x:?}");
    }
    for between in [
        "__syncwarp();",
        "__syncthreads();",
        "v = __shfl_xor_sync(0xffffffff, v, 1);",
    ] {
        let a = run(&format!(
            "__global__ void k(float *x) {{\n    __shared__ float s[32];\n    int t = threadIdx.x;\n    float v = x[t];\n    s[t] = v;\n    {between}\n    x[t] = s[(t + 1) % 32] + v;\n}}\nint main() {{ k<<<1, 32>>>(0); }}\n"
        ));
        assert!(a.races.is_empty(), "{between}: {:?}", a.races.len());
    }
}

/// The last warp of a reduction: lane 0 reads `s[16]` after lane 16
/// stored it; through a `volatile` pointer the array is left out.
#[test]
fn the_last_warp_reduction_exchanges_unless_volatile() {
    let body = |decl: &str, name: &str| {
        format!(
            "__global__ void k(float *out) {{\n    __shared__ float s[64];\n    int t = threadIdx.x;\n    s[t] = t;\n    __syncthreads();\n    if (t < 32) {{\n        {decl}\n        {name}[t] += {name}[t + 16];\n        {name}[t] += {name}[t + 8];\n    }}\n    if (t == 0) *out = s[0];\n}}\nint main() {{ k<<<1, 64>>>(0); }}\n"
        )
    };
    let plain = run(&body("", "s"));
    let hit = plain
        .races
        .iter()
        .filter_map(|r| r.sample)
        .any(|x| x.first_offset == 16 * 4 && x.second_offset == 16 * 4);
    assert!(hit, "{:?}", plain.races);
    let vol = run(&body("volatile float *v = s;", "v"));
    assert!(vol.races.iter().all(|r| r.sample.is_none()));
}
