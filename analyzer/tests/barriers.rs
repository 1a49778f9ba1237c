//! Which threads of a block reach each `__syncthreads()`: the engine's
//! per-thread counts (`symbolic/reach.rs`) against a brute-force oracle
//! that runs every thread of the block, and the cases that keep a thread
//! out of the count (it returned) or the answer unknown (data).

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
