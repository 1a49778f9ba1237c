//! Warp shuffles against a brute-force oracle: a kernel stores to shared
//! memory at an index read from another lane (`__shfl_sync` and its
//! `_xor`/`_up`/`_down` forms, any width, the source or offset a constant
//! or a lane-dependent value; and the PTX `shfl.sync.idx` broadcast a
//! kernel may write in inline assembly). The oracle runs every warp lane
//! by lane with the PTX ISA's `shfl.sync` rule (source lane `j`, the
//! lane's own value where `j` falls outside what the mode allows) and
//! costs each warp with the byte-level model.

use proptest::prelude::*;
use warplint_analyzer::hardware::{oracle, Lanes, Modern, WARP};
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, Options, Status};

#[derive(Clone, Copy, Debug)]
enum Mode {
    Idx,
    Xor,
    Up,
    Down,
}

#[derive(Debug)]
struct Case {
    mode: Mode,
    width: i64,
    /// The value shuffled: `a·tx + b·ty + c`.
    value: [i64; 3],
    /// The source lane, mask or offset: `k`, or `(tx + k) % 32` when
    /// `lane_dependent`.
    k: i64,
    lane_dependent: bool,
    block: [i64; 2],
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(Mode::Idx),
            Just(Mode::Xor),
            Just(Mode::Up),
            Just(Mode::Down)
        ],
        prop_oneof![Just(2i64), Just(4), Just(8), Just(16), Just(32)],
        (0i64..9, 0i64..40, 0i64..5),
        0i64..40,
        any::<bool>(),
        prop_oneof![
            Just([32i64, 1]),
            Just([64, 1]),
            Just([16, 4]),
            Just([8, 8]),
            Just([48, 2])
        ],
    )
        .prop_map(|(mode, width, (a, b, c), k, lane_dependent, block)| Case {
            mode,
            width,
            value: [a, b, c],
            k,
            lane_dependent,
            block,
        })
}

fn source(c: &Case) -> String {
    let f = match c.mode {
        Mode::Idx => "__shfl_sync",
        Mode::Xor => "__shfl_xor_sync",
        Mode::Up => "__shfl_up_sync",
        Mode::Down => "__shfl_down_sync",
    };
    let [a, b, k0] = c.value;
    let k = if c.lane_dependent {
        format!("(threadIdx.x + {}) % 32", c.k)
    } else {
        c.k.to_string()
    };
    format!(
        "__global__ void k(float *g)\n{{\n    __shared__ float s[2048];\n    int v = {a} * threadIdx.x + {b} * threadIdx.y + {k0};\n    int w = {f}(0xffffffffu, v, {k}, {width});\n    s[w] = 0.0f;\n}}\nvoid run() {{ k<<<1, dim3({bx}, {by})>>>(0); }}\n",
        width = c.width,
        bx = c.block[0],
        by = c.block[1],
    )
}

/// The value thread `t` (linear) reads, by the PTX ISA's rule.
fn shuffled(c: &Case, t: i64) -> i64 {
    let value = |t: i64| {
        let (tx, ty) = (t % c.block[0], t / c.block[0]);
        c.value[0] * tx + c.value[1] * ty + c.value[2]
    };
    let lane = t % 32;
    let tx = t % c.block[0];
    let b = if c.lane_dependent {
        (tx + c.k) % 32
    } else {
        c.k
    };
    let first = lane & !(c.width - 1) & 31;
    let last = first + c.width - 1;
    let (j, ok) = match c.mode {
        Mode::Idx => (first | (b & (c.width - 1)), true),
        Mode::Xor => (lane ^ (b & 31), (lane ^ (b & 31)) <= last),
        Mode::Up => (lane - (b & 31), lane - (b & 31) >= first),
        Mode::Down => (lane + (b & 31), lane + (b & 31) <= last),
    };
    value(if ok { t - lane + j } else { t })
}

/// The mean wavefronts of the store over every warp of the block.
fn oracle_wavefronts(c: &Case) -> f64 {
    let threads = c.block[0] * c.block[1];
    let warps = threads / 32;
    let mut sum = 0u64;
    for warp in 0..warps {
        let mut lanes: Lanes = [None; WARP];
        for (l, slot) in lanes.iter_mut().enumerate() {
            *slot = Some(shuffled(c, warp * 32 + l as i64) * 4);
        }
        sum += oracle::shared_modern(&lanes, 4).0 as u64;
    }
    sum as f64 / warps as f64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn shuffles_match_brute_force(c in case()) {
        let src = source(&c);
        let a = analyze(src.as_bytes(), &Modern, &Options::default());
        let r = a.reports.iter().find(|r| r.space == Space::Shared && r.op == Op::Store);
        let Some(r) = r else {
            return Err(TestCaseError::fail(format!("no store in\n{src}")));
        };
        prop_assert_eq!(r.status, Status::Exact, "{:?}\n{}", r.unknown_reason, src);
        let got = match &r.cost {
            Some(Cost::Shared(s)) => s.wavefronts,
            other => return Err(TestCaseError::fail(format!("cost {other:?}\n{src}"))),
        };
        let want = oracle_wavefronts(&c);
        prop_assert!((got - want).abs() < 1e-9, "predicted {} oracle {}\n{}", got, want, src);
    }
}

/// The broadcast a kernel writes in PTX (flashinfer's `make_warp_uniform`)
/// gives each lane lane 0's value: `warp` is the same on every lane, so
/// `s[lane * 4 + warp]` is lane `l` at word `4l + w`: lanes `l` and `l + 8`
/// share bank `4l % 32`, 4-way. The lane id read with `mov.u32 %0,
/// %laneid` is `threadIdx.x % 32` in a 1-D block.
#[test]
fn the_ptx_broadcast_and_lane_id_are_followed() {
    let src = r#"
__device__ int make_warp_uniform(int x) {
  int result;
  asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1F, 0xFFFFFFFF;" : "=r"(result) : "r"(x));
  return result;
}
__device__ unsigned lane_id() {
  unsigned l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
__global__ void k() {
  __shared__ float s[4 * 64];
  int warp = make_warp_uniform(threadIdx.x / 32);
  int lane = lane_id();
  s[lane * 4 + warp] = 1.0f;
}
void run() { k<<<1, 128>>>(); }
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let r = &a.reports[0];
    assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
    match &r.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 4.0),
        other => panic!("{other:?}"),
    }
}

/// Other inline assembly writes values the analysis does not know, said
/// as such (not "read before assigned").
#[test]
fn other_inline_assembly_outputs_are_unknown_as_such() {
    let src = r#"
__global__ void k(float *g) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  g[smid * 32 + threadIdx.x] = 0.0f;
}
void run() { k<<<1, 32>>>(0); }
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let r = &a.reports[0];
    assert_eq!(r.status, Status::Unknown);
    let kind = r.unknown_reason.as_ref().map(|u| u.kind());
    assert_eq!(kind, Some("inline-asm"));
}

/// A shuffle reads only the thread dimensions of the value it moves: a
/// 1-D kernel with no launch that shuffles keeps its 1-D reading, so its
/// `__launch_bounds__(128)` gives the block (not the 2-D default 32x8).
/// Lane `l` of warp `w` stores at word 2(32w + (l ^ 1)): lanes `l` and
/// `l + 16` share a bank with different words, 2-way.
#[test]
fn a_shuffle_keeps_a_one_dimensional_kernel_one_dimensional() {
    let src = r#"
__global__ void __launch_bounds__(128) k(float *x) {
  __shared__ float s[2 * 128];
  int t = threadIdx.x;
  int u = __shfl_xor_sync(0xffffffff, t, 1);
  s[u * 2] = x[t];
}
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let r = a
        .reports
        .iter()
        .find(|r| r.space == Space::Shared && r.op == Op::Store)
        .expect("a shared store");
    assert_eq!(r.block, [128, 1, 1]);
    match &r.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 2.0),
        other => panic!("{other:?}"),
    }
}
