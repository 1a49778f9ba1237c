//! What no launch gives is analysed over representative values, never
//! made up: each case's expected answer is worked out by hand in its
//! comment (banks: 32 of 4 bytes, a 4-byte word `w` is in bank `w % 32`;
//! sectors: 32 bytes, allocations 256-byte aligned), and a property test
//! checks the reported condition against analyses that give each tried
//! value at the launch (an exact answer per value).

use proptest::prelude::*;
use warplint_analyzer::finding::{Assumption, Condition, ForEvery, ValueSource};
use warplint_analyzer::hardware::Modern;
use warplint_analyzer::symbolic::{Cost, EngineOptions};
use warplint_analyzer::{analyze, budget, AccessReport, Options, Status};

const SPREAD: [i64; 7] = [1, 2, 7, 32, 100, 1024, 4099];

fn reports(src: &str) -> Vec<AccessReport> {
    analyze(src.as_bytes(), &Modern, &Options::default()).reports
}

/// The report of the access to `array` under launch `launch`.
fn report(src: &str, array: &str, launch: usize) -> AccessReport {
    reports(src)
        .into_iter()
        .find(|r| r.array == array && r.launch == launch)
        .unwrap_or_else(|| panic!("no access to `{array}` under launch {launch}"))
}

fn ways(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        other => panic!("not a shared cost: {other:?}"),
    }
}

fn sectors_per_ideal(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Global(g)) => g.sectors / g.ideal_sectors,
        other => panic!("not a global cost: {other:?}"),
    }
}

/// The condition stated on parameter `name`, with the values tried.
fn param_condition(r: &AccessReport, name: &str) -> (Condition, Vec<i64>, ValueSource) {
    r.assumptions
        .iter()
        .find_map(|a| match a {
            Assumption::ParamCondition {
                name: n,
                when,
                tried,
                source,
                ..
            } if n == name => Some((when.clone(), tried.clone(), *source)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no condition on `{name}`: {:?}", r.assumptions))
}

fn no_param_value(r: &AccessReport) {
    assert!(
        !r.assumptions.iter().any(|a| matches!(
            a,
            Assumption::ParamValue { .. } | Assumption::DefaultBlock { .. }
        )),
        "a made-up value: {:?}",
        r.assumptions
    );
}

/// `s[threadIdx.x * stride]`, one warp: lane `l` reads word `l * stride`,
/// and the words in one bank are `gcd(stride, 32)` apart in lanes, so the
/// access is `gcd(stride, 32)`-way: stride 1, 7, 4099 → 1-way (odd: conflict
/// free), 2 → 2, 100 → 4, 32 and 1024 → 32. The worst, 32-way, holds for
/// the multiples of 32 among the values tried.
#[test]
fn a_stride_parameter_depends_and_says_when() {
    let src = "__global__ void k(float *out, int stride) {\n\
               __shared__ float s[32 * 4100];\n\
               out[threadIdx.x] = s[threadIdx.x * stride];\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<1, 32>>>(0, n); }\n";
    let r = report(src, "s", 0);
    assert_eq!(r.status, Status::Assumed);
    assert_eq!(ways(&r), 32.0);
    let (when, tried, source) = param_condition(&r, "stride");
    assert_eq!(when, Condition::MultipleOf(32));
    assert_eq!(tried, SPREAD);
    assert_eq!(source, ValueSource::Spread);
    no_param_value(&r);
    // Odd strides are conflict-free, even ones are not: the condition
    // leaves every odd value out.
    for v in [1, 7, 4099] {
        assert!(!when.holds(v));
    }
}

/// `if (threadIdx.x < n) a[blockIdx.x * blockDim.x + threadIdx.x]`, block
/// 256, 4 blocks: the active lanes of a warp are consecutive floats from a
/// multiple of 32 floats (a 128-byte boundary), so however many are active
/// they touch exactly the sectors their bytes need: one sector per ideal
/// sector for every `n`. `n` is read (the guard), so it is varied, and the
/// answer holds for all of it: exact.
#[test]
fn a_coalesced_access_is_exact_for_every_value() {
    let src = "__global__ void k(float *a, int n) {\n\
               if (threadIdx.x < n) a[blockIdx.x * blockDim.x + threadIdx.x] = 0;\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<4, 256>>>(0, n); }\n";
    let r = report(src, "a", 0);
    assert_eq!(r.status, Status::Exact, "{:?}", r.assumptions);
    assert!(r.assumptions.is_empty(), "{:?}", r.assumptions);
    assert_eq!(sectors_per_ideal(&r), 1.0);
    assert_eq!(
        r.for_every,
        vec![ForEvery::Param {
            name: "n".into(),
            kernel: "k".into(),
            tried: SPREAD.to_vec(),
            source: ValueSource::Spread,
        }]
    );
}

/// `a[blockIdx.x * n + threadIdx.x]`, block 256, 4 blocks: block `b`'s
/// warps start at float `b * n`, aligned to a sector (8 floats) when `b * n`
/// is a multiple of 8, else they need 5 sectors for 4. Over blocks 0..3:
/// n = 32, 1024: all aligned (4/4); n = 100: blocks 1 and 3 off by 4 floats
/// (mean 4.5/4); n = 1, 2, 7, 4099: blocks 1, 2 and 3 off (4.75/4). So the
/// access is not coalesced for every `n`. The answer is the one at the
/// typical sizes 32 and 1024 (both aligned: 4/4), holding when `n` is a
/// multiple of 32 among the values tried; the odd and small sizes' waste is
/// not the answer.
#[test]
fn a_row_length_parameter_is_not_coalesced_for_every_value() {
    let src = "__global__ void k(float *a, int n) {\n\
               a[blockIdx.x * n + threadIdx.x] = 0;\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<4, 256>>>(0, n); }\n";
    let r = report(src, "a", 0);
    assert_eq!(r.status, Status::Assumed);
    assert_eq!(sectors_per_ideal(&r), 1.0);
    let (when, _, _) = param_condition(&r, "n");
    assert_eq!(when, Condition::MultipleOf(32));
    assert!(r.for_every.is_empty());
}

/// A `bool` takes 0 and 1 only: `s[threadIdx.x * (wide ? 2 : 1)]` is
/// 2-way when `wide` is 1 (lanes `l` and `l + 16` share a bank), 1-way
/// when it is 0.
#[test]
fn a_bool_parameter_takes_only_zero_and_one() {
    let src = "__global__ void k(float *out, bool wide) {\n\
               __shared__ float s[64];\n\
               out[threadIdx.x] = s[threadIdx.x * (wide ? 2 : 1)];\n}\n\
               int main(int argc, char **argv) { bool w = argc > 1; k<<<1, 32>>>(0, w); }\n";
    let r = report(src, "s", 0);
    assert_eq!(ways(&r), 2.0);
    let (when, tried, source) = param_condition(&r, "wide");
    assert_eq!(tried, vec![0, 1]);
    assert_eq!(source, ValueSource::Type);
    assert_eq!(when, Condition::OneOf(vec![1]));
}

/// A launch that does not give `stride` may pass anything: the values
/// the kernel's other launches give (1 and 4) join the spread, tried
/// 1, 2, 4, 7, 32, 100, 1024, 4099. Stride `v` is `gcd(v, 32)`-way: 1, 2,
/// 4, 1, 32, 4, 32, 1. The answer is the worst at the typical sizes 32 and
/// 1024 (32-way both), holding when `stride` is a multiple of 32.
#[test]
fn values_from_other_launches_join_the_spread() {
    let src = "__global__ void k(float *out, int stride) {\n\
               __shared__ float s[32 * 8];\n\
               out[threadIdx.x] = s[threadIdx.x * stride];\n}\n\
               int main(int argc, char **argv) {\n\
               int n = atoi(argv[1]);\n\
               k<<<1, 32>>>(0, 1);\n k<<<1, 32>>>(0, 4);\n k<<<1, 32>>>(0, n);\n}\n";
    let all = reports(src);
    let unknown_stride = all
        .iter()
        .filter(|r| r.array == "s")
        .find(|r| r.status != Status::Exact)
        .expect("the launch without a value");
    assert_eq!(ways(unknown_stride), 32.0);
    let (when, tried, source) = param_condition(unknown_stride, "stride");
    assert_eq!(tried, vec![1, 2, 4, 7, 32, 100, 1024, 4099]);
    assert_eq!(source, ValueSource::Spread);
    assert_eq!(when, Condition::MultipleOf(32));
    // The two launches that give it are exact, 1-way and 4-way.
    let mut exact: Vec<f64> = all
        .iter()
        .filter(|r| r.array == "s" && r.status == Status::Exact)
        .map(ways)
        .collect();
    exact.sort_by(f64::total_cmp);
    assert_eq!(exact, vec![1.0, 4.0]);
}

/// No launch: a 2-D kernel runs under 16x16, 32x8 and 32x32 (the
/// configured default, 32x8, among them).
/// - `s[threadIdx.y * blockDim.x + threadIdx.x]` is the thread's linear
///   index: a warp reads 32 consecutive words, 1-way under every shape
///   (exact, for every common shape).
/// - `tile[threadIdx.y][threadIdx.x]` of a `[32][32]` tile: under 16x16 a
///   warp holds two rows of 16, words `32y + x` and `32(y+1) + x` share
///   bank `x`: 2-way; under 32x8 and 32x32 a warp is one row: 1-way. The
///   worst holds when the block is 16x16.
/// - `tile[threadIdx.x][threadIdx.y]`, the transposed read: a warp's
///   lanes of one `y` are 32 words apart, one bank: 32-way under 32x8 and
///   32x32; under 16x16 two columns of 16: 16-way. The worst holds when the
///   block is 32x8 or 32x32.
#[test]
fn a_block_no_launch_gives_is_analysed_over_common_shapes() {
    let src = "__global__ void k(float *out) {\n\
               __shared__ float s[1024];\n\
               __shared__ float tile[32][32];\n\
               out[0] = s[threadIdx.y * blockDim.x + threadIdx.x];\n\
               out[1] = tile[threadIdx.y][threadIdx.x];\n\
               out[2] = tile[threadIdx.x][threadIdx.y];\n}\n";
    let all = reports(src);
    let shapes = vec![[16, 16, 1], [32, 8, 1], [32, 32, 1]];
    let s = all.iter().find(|r| r.array == "s").unwrap();
    assert_eq!(s.status, Status::Exact, "{:?}", s.assumptions);
    assert_eq!(ways(s), 1.0);
    assert_eq!(
        s.for_every,
        vec![ForEvery::Block {
            kernel: "k".into(),
            tried: shapes.clone(),
            bound: None,
        }]
    );
    let block_condition = |r: &AccessReport| {
        r.assumptions
            .iter()
            .find_map(|a| match a {
                Assumption::BlockCondition { when, tried, .. } => {
                    Some((when.clone(), tried.clone()))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no block condition: {:?}", r.assumptions))
    };
    let tiles: Vec<&AccessReport> = all.iter().filter(|r| r.array == "tile").collect();
    let rows = tiles
        .iter()
        .find(|r| r.text.contains("[threadIdx.y][threadIdx.x]"))
        .unwrap();
    assert_eq!(rows.status, Status::Assumed);
    assert_eq!(ways(rows), 2.0);
    assert_eq!(rows.block, [16, 16, 1]);
    assert_eq!(block_condition(rows), (vec![[16, 16, 1]], shapes.clone()));
    no_param_value(rows);
    let cols = tiles
        .iter()
        .find(|r| r.text.contains("[threadIdx.x][threadIdx.y]"))
        .unwrap();
    assert_eq!(ways(cols), 32.0);
    assert_eq!(cols.block, [32, 8, 1]);
    assert_eq!(
        block_condition(cols),
        (vec![[32, 8, 1], [32, 32, 1]], shapes)
    );
}

/// A 1-D kernel with no launch runs under 64 to 1024 threads: `s[threadIdx.x]`
/// is 1-way under each.
#[test]
fn a_one_dimensional_block_takes_the_common_sizes() {
    let src = "__global__ void k(float *out) {\n\
               __shared__ float s[1024];\n\
               out[threadIdx.x] = s[threadIdx.x];\n}\n";
    let r = report(src, "s", 0);
    assert_eq!(r.status, Status::Exact);
    assert_eq!(
        r.for_every,
        vec![ForEvery::Block {
            kernel: "k".into(),
            bound: None,
            tried: vec![
                [64, 1, 1],
                [128, 1, 1],
                [256, 1, 1],
                [512, 1, 1],
                [1024, 1, 1]
            ],
        }]
    );
}

/// A 1-D kernel with `__launch_bounds__(384)` and no launch runs under at
/// most 384 threads: the common sizes below it and 384 itself are tried.
/// `s[threadIdx.x]` is 1-way under each (for every size, not assumed);
/// `s[threadIdx.x * (blockDim.x / 64)]` depends on the size (384 threads:
/// stride 6, 2-way; 128: stride 2, 2-way; 256: stride 4, 4-way), so it
/// is reported at the bound, assumed from it.
#[test]
fn a_block_within_launch_bounds_is_tried_up_to_the_bound() {
    let src = "__global__ void __launch_bounds__(384) k(float *out) {\n\
               __shared__ float s[384 * 6];\n\
               out[threadIdx.x] = s[threadIdx.x];\n\
               out[threadIdx.x + 384] = s[threadIdx.x * (blockDim.x / 64)];\n}\n";
    let all = reports(src);
    let s_at = |text: &str| {
        all.iter()
            .find(|r| r.array == "s" && r.text.contains(text))
            .unwrap()
    };
    let free = s_at("s[threadIdx.x]");
    assert_eq!(free.status, Status::Exact, "{:?}", free.assumptions);
    assert_eq!(free.block, [384, 1, 1]);
    assert_eq!(
        free.for_every,
        vec![ForEvery::Block {
            kernel: "k".into(),
            bound: Some(384),
            tried: vec![[64, 1, 1], [128, 1, 1], [256, 1, 1], [384, 1, 1]],
        }]
    );
    let strided = s_at("blockDim");
    assert_eq!(strided.status, Status::Assumed);
    assert_eq!(strided.block, [384, 1, 1]);
    assert_eq!(ways(strided), 2.0);
    assert!(strided.for_every.is_empty());
    assert!(strided
        .assumptions
        .contains(&warplint_analyzer::finding::Assumption::LaunchBoundsBlock { threads: 384 }));
}

/// A value under which the access never executes does not contradict the
/// answer: with `t` of 1024 or 4099 the kernel returns before the store,
/// and under every other value tried the store is 2-way (lanes `l` and
/// `l + 16` share a bank), so it holds for every `t` (rather than "when
/// `t` is at most 100", which the rules would not report since programs
/// run at 1024).
#[test]
fn a_value_where_the_access_never_executes_does_not_contradict_it() {
    let src = "__global__ void k(int t) {\n\
               __shared__ float s[64 + 2];\n\
               if (t >= 1000) return;\n\
               s[threadIdx.x * 2 + t % 2] = 0.0f;\n}\n";
    let r = report(src, "s", 0);
    assert_eq!(ways(&r), 2.0);
    assert!(
        r.for_every
            .iter()
            .any(|f| matches!(f, ForEvery::Param { name, .. } if name == "t")),
        "{:?} {:?}",
        r.for_every,
        r.assumptions
    );
}

/// `1 << log2N` with the spread's first value, 1024, is a shift past the
/// width: undefined, a value no working program passes (cuda-samples
/// fastWalshTransform's `fwtBatch1Kernel`). The first run takes the next
/// smaller spread value instead, and the values that make the address
/// undefined meet the condition vacuously. `(2t) & (N - 1)`: N = 2 or 4
/// puts the lanes on one or two words (1-way); from N = 128 (log2N = 7) it
/// is `2t`, 2-way; 32 and up shift out of range.
#[test]
fn a_value_that_makes_the_address_undefined_is_not_the_answer() {
    let src = "__global__ void k(int log2N) {\n\
               __shared__ float s[4096];\n\
               const int N = 1 << log2N;\n\
               s[(threadIdx.x * 2) & (N - 1)] = 0.0f;\n}\n";
    let r = report(src, "s", 0);
    assert_eq!(r.status, Status::Assumed, "{:?}", r.unknown_reason);
    assert_eq!(ways(&r), 2.0);
    let (when, tried, _) = param_condition(&r, "log2N");
    assert_eq!(tried, SPREAD.to_vec());
    assert_eq!(when, Condition::AtLeast(7));
}

/// Where the spread's first value (1024) for every parameter keeps every
/// lane from the access, and so does varying each alone (the other at
/// 1024), the first run takes the next smaller spread value for all of
/// them (rodinia hotspot's border and iteration counts). At 100: lanes
/// t >= 200 of the 256-thread block store to word 2(2t - 400), a stride of
/// 16 bytes: 56 lanes in two warps, 14 sectors per request where 3.5
/// would do. Before, the answer was "0 sectors".
#[test]
fn a_first_run_that_never_executes_the_access_takes_smaller_values() {
    let src = "__global__ void k(float *g, int a, int b) {\n\
               int x = threadIdx.x - 2 * a;\n\
               int y = threadIdx.x - 2 * b;\n\
               if (x >= 0 && y >= 0) g[(x + y) * 2] = 0;\n}\n";
    let r = report(src, "g", 0);
    assert!(r.executions > 0.0, "{r:?}");
    assert_eq!(r.status, Status::Assumed);
    assert!((sectors_per_ideal(&r) - 4.0).abs() < 1e-9, "{:?}", r.cost);
    assert!(r.assumptions.iter().any(|a| matches!(
        a,
        Assumption::ParamValue { name, value: 100, .. } if name == "b"
    )));
}

/// A pointer compared with `NULL` (llm.c's optional outputs, `if (probs
/// != NULL) probs[...] = ...`): a launch passing `NULL` never runs the
/// store (no waste to report), one passing a buffer runs it; with no
/// launch, both are tried and the answer holds whether it is null or not.
#[test]
fn a_null_pointer_argument_turns_off_what_it_guards() {
    let src = "__global__ void k(float *probs, float *dl) {\n\
               if (probs != NULL) probs[threadIdx.x * 4] = 1.0f;\n\
               if (nullptr != dl) dl[threadIdx.x * 4] = 2.0f;\n}\n\
               int main() { float *d; k<<<1, 32>>>(d, NULL); }\n";
    let probs = report(src, "probs", 0);
    assert_eq!(probs.status, Status::Exact, "{:?}", probs.assumptions);
    assert!((sectors_per_ideal(&probs) - 4.0).abs() < 1e-9);
    let dl = report(src, "dl", 0);
    assert_eq!(dl.executions, 0.0);
    assert!(!dl
        .assumptions
        .iter()
        .any(|a| matches!(a, Assumption::LanesActive { .. })));
    let alone = "__global__ void k(float *probs) {\n\
                 if (probs != NULL) probs[threadIdx.x * 4] = 1.0f;\n}\n";
    let r = report(alone, "probs", 0);
    assert!(r.for_every.iter().any(|f| matches!(
        f,
        ForEvery::Param { name, source: ValueSource::Nullness, .. } if name == "probs"
    )));
}

/// The condition is said over the values under which the access runs; the
/// others are named apart (review round 4: "when `N` is one of 1, 2, 32"
/// where N = 1, 2 run nothing). `w > 2` runs nothing for w = 1 and 2; an
/// even `w` spreads the lanes two words apart (twice the sectors), an odd
/// one does not: a condition that holds for 32, 100 and 1024 and not for
/// 7 and 4099, the access not running for 1 and 2.
#[test]
fn the_condition_leaves_out_values_under_which_the_access_does_not_run() {
    let src = "__global__ void k(float *g, int w) {\n\
               if (w > 2) g[threadIdx.x * (w % 2 == 0 ? 2 : 1)] = 0;\n}\n";
    let r = report(src, "g", 0);
    let idle = r
        .assumptions
        .iter()
        .find_map(|a| match a {
            Assumption::ParamCondition { name, idle, .. } if name == "w" => Some(idle.clone()),
            _ => None,
        })
        .expect("a condition on w");
    assert_eq!(idle, vec![1, 2]);
    let (when, _, _) = param_condition(&r, "w");
    for v in [32, 100, 1024] {
        assert!(when.holds(v), "{when:?} at {v}");
    }
    for v in [7, 4099] {
        assert!(!when.holds(v), "{when:?} at {v}");
    }
}

/// Three stride parameters: 7 × 7 × 7 = 343 combinations, past
/// `MAX_VALUE_COMBINATIONS` (16), so each is varied alone, the others at
/// 1024, as far as the budget goes: the first run and `a`'s 6 other values
/// (7 runs), `b`'s (13); `c`'s would make 19, so `c` stays at 1024, said as
/// an assumed value. The stride is `a + b + c`; with the two others at 1024
/// it is `v + 2048`, a multiple of 32 (32-way) for v = 32 and 1024, else
/// fewer ways (2049, 2055, 6147 odd: 1-way; 2050: 2-way; 2148: 4-way). The
/// first run (stride 3072) is 32-way, and the condition on `a` and on `b`
/// is "a multiple of 32"; the budget is named.
#[test]
fn past_the_combination_budget_each_input_is_varied_alone() {
    let src = "__global__ void k(float *out, int a, int b, int c) {\n\
               __shared__ float s[32 * 8200];\n\
               out[threadIdx.x] = s[threadIdx.x * (a + b + c)];\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]);\n\
               k<<<1, 32>>>(0, n, n, n); }\n";
    assert_eq!(budget::MAX_VALUE_COMBINATIONS, 16);
    let r = report(src, "s", 0);
    assert_eq!(r.status, Status::Assumed);
    assert_eq!(ways(&r), 32.0);
    for p in ["a", "b"] {
        assert_eq!(param_condition(&r, p).0, Condition::MultipleOf(32), "{p}");
    }
    assert!(r.assumptions.contains(&Assumption::ParamValue {
        name: "c".into(),
        value: 1024,
        kernel: "k".into(),
        loaded: None,
    }));
    assert!(r.assumptions.iter().any(|a| matches!(
        a,
        Assumption::SomeCombinations { budget } if budget.name == "MAX_VALUE_COMBINATIONS"
    )));
}

/// `default-param` set: the value is used and assumed, as before.
#[test]
fn a_configured_default_param_is_assumed() {
    let src = "__global__ void k(float *out, int stride) {\n\
               __shared__ float s[32 * 4100];\n\
               out[threadIdx.x] = s[threadIdx.x * stride];\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<1, 32>>>(0, n); }\n";
    let options = Options {
        engine: EngineOptions {
            default_param: Some(6),
            ..EngineOptions::default()
        },
        ..Options::default()
    };
    let r = analyze(src.as_bytes(), &Modern, &options)
        .reports
        .into_iter()
        .find(|r| r.array == "s")
        .unwrap();
    // Stride 6: gcd(6, 32) = 2, 2-way.
    assert_eq!(ways(&r), 2.0);
    assert_eq!(
        r.assumptions,
        vec![Assumption::ParamValue {
            name: "stride".into(),
            value: 6,
            kernel: "k".into(),
            loaded: None,
        }]
    );
    assert!(r.for_every.is_empty());
}

/// How wasteful a report is, by the rules' measure.
fn waste(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        Some(Cost::Global(g)) if g.ideal_sectors > 0.0 => g.sectors / g.ideal_sectors,
        _ => 0.0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Against the oracle of one exact analysis per tried value (the
    /// launch gives it): the reported cost is the worst of those at the
    /// typical sizes 32 and 1024 where the access executes (else of those
    /// where it executes, else of all), and the condition holds exactly for
    /// the values that cost that much (or the finding names the parameter
    /// as holding for every value, and they all cost the same).
    #[test]
    fn the_condition_is_where_the_exact_analyses_cost_the_most(
        mul in 0i64..5, add in 0i64..40, shared in any::<bool>(), guard in any::<bool>()
    ) {
        let body = |n: &str| format!(
            "__global__ void k(float *out, int p) {{\n\
             __shared__ float s[64];\n\
             int i = threadIdx.x * (p * {mul} + 1) + p * {add};\n\
             if ({g}) {access} = 0;\n}}\n\
             int main(int argc, char **argv) {{ int n = atoi(argv[1]); k<<<2, 64>>>(0, {n}); }}\n",
            g = if guard { "threadIdx.x < p" } else { "1" },
            access = if shared { "s[i]" } else { "out[i]" },
        );
        let array = if shared { "s" } else { "out" };
        let r = report(&body("n"), array, 0);
        prop_assume!(r.status != Status::Unknown);
        let runs: Vec<(i64, f64, bool)> = SPREAD
            .iter()
            .map(|v| {
                let e = report(&body(&v.to_string()), array, 0);
                assert_eq!(e.status, Status::Exact, "p = {v}: {:?}", e.assumptions);
                (*v, waste(&e), e.executions > 0.0)
            })
            .collect();
        let pick = |keep: &dyn Fn(&(i64, f64, bool)) -> bool| {
            runs.iter().filter(|r| keep(r)).map(|r| r.1).reduce(f64::max)
        };
        let max = pick(&|r| r.2 && [32, 1024].contains(&r.0))
            .or_else(|| pick(&|r| r.2))
            .or_else(|| pick(&|_| true))
            .unwrap_or(0.0);
        let exact: Vec<f64> = runs.iter().map(|r| r.1).collect();
        prop_assert!((waste(&r) - max).abs() < 1e-9, "{} vs {:?}", waste(&r), exact);
        let every = r.for_every.iter().any(|f| matches!(f, ForEvery::Param { name, .. } if name == "p"));
        let cond = r.assumptions.iter().find_map(|a| match a {
            Assumption::ParamCondition { when, .. } => Some(when.clone()),
            _ => None,
        });
        match cond {
            Some(c) => {
                prop_assert!(!every);
                for (v, w) in SPREAD.iter().zip(&exact) {
                    prop_assert_eq!(c.holds(*v), (w - max).abs() < 1e-9, "p = {}: {:?}", v, &exact);
                }
            }
            None => {
                // Either `p` does not matter (only shifts the warp by whole
                // periods) or it is named: every value costs the same.
                prop_assert!(exact.iter().all(|w| (w - max).abs() < 1e-9), "{:?}", exact);
            }
        }
    }
}

/// Runs that would evaluate more than `MAX_VALUE_WORK` expression nodes
/// after the first: a loop of 128 iterations around an address no warp or
/// iteration can stand for another (an XOR of the lane and the iteration),
/// in 32 warps, costs far more than the budget per run, so the runs stop
/// early, the values not analysed meet no condition, and the budget is
/// named.
#[test]
fn costly_runs_stop_at_the_value_work_budget() {
    let src = "__global__ void k(float *out, int stride) {\n\
               __shared__ float s[1 << 20];\n\
               for (int i = 0; i < 128; i++)\n\
                 out[i] = s[((threadIdx.x * stride) ^ (i * 7 + threadIdx.x / 32)) & 1023];\n}\n\
               int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<1, 1024>>>(0, n); }\n";
    let r = report(src, "s", 0);
    assert_ne!(r.status, Status::Unknown);
    assert!(
        r.assumptions.iter().any(|a| matches!(
            a,
            Assumption::SomeCombinations { budget } if budget.name == "MAX_VALUE_WORK"
        )),
        "{:?}",
        r.assumptions
    );
    assert!(r.for_every.is_empty());
}

/// The values the integer parameters of the only kernel in `src` are
/// tried over, when they are the ones it compares them with.
fn compared(src: &str) -> Vec<(String, Option<Vec<i64>>)> {
    let a = warplint_analyzer::analyze(src.as_bytes(), &Modern, &Options::default());
    a.program.kernels[0]
        .params
        .iter()
        .filter(|p| p.is_integer && p.object.is_none())
        .map(|p| {
            (
                p.name.clone(),
                p.compared.then(|| p.values.clone().unwrap()),
            )
        })
        .collect()
}

/// An enum-like parameter takes the values it is compared with, not the
/// spread: bitonic sort's `dir` is only XORed with a condition and compared
/// with a comparison (0, 1); `mode` is compared with 2 and 5 (2, 5 and 0,
/// equal to neither: the `else`); `n` is also a bound, so it stays a size.
#[test]
fn enum_like_parameters_take_the_values_they_are_compared_with() {
    let src = "__global__ void k(unsigned *s, unsigned dir, int mode, int n) {\n\
               unsigned t = threadIdx.x;\n\
               unsigned ddd = dir ^ ((t & 16) != 0);\n\
               if ((s[t] > s[t + 32]) == ddd) s[t] = 0;\n\
               if (mode == 2) s[2 * t] = 1; else if (mode == 5) s[4 * t] = 1;\n\
               if (n == 0) return;\n\
               for (int i = 0; i < n; i++) s[t * 64 + i] = 2;\n}\n\
               int main(int argc, char **argv) { int v = atoi(argv[1]); k<<<1, 32>>>(0, v, v, v); }\n";
    assert_eq!(
        compared(src),
        [
            ("dir".to_string(), Some(vec![0, 1])),
            ("mode".to_string(), Some(vec![0, 2, 5])),
            ("n".to_string(), None),
        ]
    );
    // `s[2 * t]` (4-byte words 8 bytes apart: 8 sectors, 4 needed) runs
    // when `mode` is 2; `mode` is never tried at a size.
    let r = reports(src)
        .into_iter()
        .find(|r| r.array == "s" && r.text.contains("2 * t"))
        .unwrap();
    assert_eq!(sectors_per_ideal(&r), 2.0);
    assert!(
        !r.assumptions.iter().any(
            |a| matches!(a, Assumption::ParamCondition { tried, .. } if tried.contains(&1024))
        ),
        "{:?}",
        r.assumptions
    );
}

/// Compared with constants, a parameter also takes a value equal to none
/// of them, even when they are 0 and 1: the `else` of `if (mode == 0) …
/// else if (mode == 1) … else …` is a third branch (its 32-sector store is
/// not lost).
#[test]
fn the_else_of_an_enum_like_parameter_is_tried() {
    let src = "__global__ void k(float *out, const float *in, int mode) {\n\
               int i = threadIdx.x;\n\
               if (mode == 0) out[i] = in[i];\n\
               else if (mode == 1) out[i * 2] = in[i];\n\
               else out[i * 32] = in[i];\n}\n\
               int main(int argc, char **argv) { int v = atoi(argv[1]); k<<<1, 32>>>(0, 0, v); }\n";
    assert_eq!(compared(src), [("mode".to_string(), Some(vec![0, 1, 2]))]);
    let r = reports(src)
        .into_iter()
        .find(|r| r.array == "out" && r.text.contains("32"))
        .unwrap();
    assert_eq!(sectors_per_ideal(&r), 8.0);
}
