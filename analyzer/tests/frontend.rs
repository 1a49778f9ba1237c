//! The front end's reach: each capability of the CUDA subset warplint
//! reads, checked through the predictions it leads to.

mod common;
use common::{find, run, sectors, ways};

use warplint_analyzer::finding::{Assumption, NoteKind, Origin, UnknownReason};
use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, AccessReport, FileAnalysis, Options, Status};

/// The macro a note says a conditional depends on, when it is one.
fn undefined(kind: &NoteKind) -> Option<&str> {
    match kind {
        NoteKind::UndefinedInCondition { name, .. } => Some(name),
        _ => None,
    }
}

#[test]
fn array_sizes_from_defines_constexpr_enums_sizeof_and_templates() {
    let a = run(r#"
#define W 32
constexpr int P = 33;
enum { Q = 16 };
template <int T>
__global__ void k(float *out) {
    __shared__ float a[32][W];
    __shared__ float b[32][P];
    __shared__ float c[32][Q * 2 + 1];
    __shared__ float d[32][sizeof(double) * 4];
    __shared__ float e[32][T];
    out[0] = a[threadIdx.x][0] + b[threadIdx.x][0] + c[threadIdx.x][0] + d[threadIdx.x][0] + e[threadIdx.x][0];
}
int main() { k<64><<<1, 32>>>(0); }
"#);
    assert_eq!(ways(find(&a, "a", Op::Load)), 32.0);
    assert_eq!(ways(find(&a, "b", Op::Load)), 1.0);
    assert_eq!(ways(find(&a, "c", Op::Load)), 1.0);
    assert_eq!(ways(find(&a, "d", Op::Load)), 32.0);
    assert_eq!(ways(find(&a, "e", Op::Load)), 32.0);
    assert_eq!(find(&a, "e", Op::Load).kernel_name, "k<64>");
}

#[test]
fn dynamic_shared_constant_and_local_arrays() {
    let a = run(r#"
__constant__ float coef[64];
__global__ void k(float *out) {
    extern __shared__ float dyn[];
    float r[64];
    int t = threadIdx.x;
    r[t % 64] = coef[t] + coef[3];
    dyn[t * 2] = r[(t + 1) % 64];
    out[t] = dyn[t];
}
int main() { k<<<1, 32, 256>>>(0); }
"#);
    assert_eq!(ways(find(&a, "dyn", Op::Store)), 2.0);
    let consts: Vec<_> = a.reports.iter().filter(|r| r.array == "coef").collect();
    assert_eq!(consts.len(), 2);
    let req: Vec<f64> = consts
        .iter()
        .map(|r| match &r.cost {
            Some(Cost::Constant(c)) => c.requests,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(req, vec![32.0, 1.0]);
    let local = find(&a, "r", Op::Store);
    assert_eq!(local.space, Space::Local);
    // Stored and loaded at different run-time indices, too many elements
    // for predicated moves: local memory, by the model (an assumption).
    assert_eq!(local.status, Status::Assumed);
    assert!(local
        .assumptions
        .iter()
        .any(|a| matches!(a, Assumption::LocalMemory { decided: true, .. })));
    // Eight elements written at masked indices: registers (measured).
    let small = run(r#"
__global__ void k(float *out) {
    float r[8];
    int t = threadIdx.x;
    r[t % 8] = out[t];
    out[t] = r[(t + 1) % 8];
}
int main() { k<<<1, 32>>>(0); }
"#);
    assert!(small.reports.iter().all(|r| r.array != "r"));
}

#[test]
fn element_types_typedefs_structs_and_casts() {
    let a = run(r#"
#include <cstdint>
typedef float real;
using vec = float4;
struct __align__(16) P3 { float x, y, z; };
struct Pair { int a; double b; };
__global__ void k(const __half *h, const int2 *i2, const uint8_t *u8, const real *r,
                  const vec *v, const P3 *p, const Pair *q, const float *f, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = (float)h[i] + i2[i].x + u8[i] + r[i] + v[i].y + p[i].z + q[i].b
             + reinterpret_cast<const float4 *>(f)[i].w;
}
int main() { k<<<4, 128>>>(0, 0, 0, 0, 0, 0, 0, 0, 0); }
"#);
    let w = |n: &str| find(&a, n, Op::Load).width;
    assert_eq!(
        (
            w("h"),
            w("i2"),
            w("u8"),
            w("r"),
            w("v"),
            w("p"),
            w("q"),
            w("f")
        ),
        (2, 4, 1, 4, 4, 4, 8, 4)
    );
    assert_eq!(sectors(find(&a, "h", Op::Load)), 2.0);
    assert_eq!(sectors(find(&a, "i2", Op::Load)), 8.0); // .x of 8-byte int2
    assert_eq!(sectors(find(&a, "u8", Op::Load)), 1.0);
    assert_eq!(sectors(find(&a, "p", Op::Load)), 16.0); // __align__(16): 16-byte stride
    assert_eq!(sectors(find(&a, "q", Op::Load)), 16.0); // {int, double} is 16 bytes
    assert_eq!(sectors(find(&a, "f", Op::Load)), 16.0); // float4 view, .w of each
}

#[test]
fn access_forms() {
    let a = run(r#"
struct S { float v; int n; };
__global__ void k(float *p, S *s, float4 *q, int *cnt) {
    __shared__ float sh[256];
    int i = threadIdx.x;
    float x = *(p + i * 2);
    x += s[i].v;
    x += q[i].x;
    sh[i] += x;
    atomicAdd(&cnt[i % 4], 1);
    p[i] = sh[i];
}
int main() { k<<<1, 64>>>(0, 0, 0, 0); }
"#);
    assert_eq!(sectors(find(&a, "p", Op::Load)), 8.0);
    assert_eq!(sectors(find(&a, "s", Op::Load)), 8.0);
    assert_eq!(sectors(find(&a, "q", Op::Load)), 16.0);
    // `+=` on shared memory is a load and a store.
    find(&a, "sh", Op::Load);
    find(&a, "sh", Op::Store);
    let at = find(&a, "cnt", Op::Atomic);
    assert_eq!(sectors(at), 1.0);
}

#[test]
fn loops_guards_and_early_return() {
    let a = run(r#"
__global__ void k(float *out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    int stride = 16;
    while (stride > 0) {
        s[t * stride] = 0;
        stride >>= 1;
    }
    if (t >= 16)
        return;
    out[0] = s[t * 32];
}
int main() { k<<<1, 32>>>(0); }
"#);
    // stride 16, 8, 4, 2, 1: 16 + 8 + 4 + 2 + 1 = 31 wavefronts in 5 executions.
    let st = find(&a, "s", Op::Store);
    assert_eq!(st.executions, 5.0);
    assert!((ways(st) - 31.0 / 5.0).abs() < 1e-9);
    // After `if (t >= 16) return;` only 16 lanes read: 16 distinct words, one bank.
    assert_eq!(ways(find(&a, "s", Op::Load)), 16.0);
}

/// A `__device__` function that assigns to a reference parameter sets the
/// caller's variable (cuda-samples convolutionFFT2D's `udivmod(i, DX / 2,
/// x)` with `uint &rem`); one that may return before the end leaves it
/// as it was (here unassigned: unknown, said so). CUDA's bit intrinsics
/// are evaluated per lane (`dividend >>= __ffs(divisor) - 1`).
#[test]
fn reference_parameters_set_the_callers_variables() {
    let a = run(r#"
__device__ void udivmod(unsigned &d, unsigned s, unsigned &r) {
    r = d & (s - 1);
    d >>= (__ffs(s) - 1);
}
__device__ void maybe(unsigned d, unsigned &r) {
    if (d > 100) return;
    r = d;
}
__global__ void k(float2 *out, float *log) {
    unsigned x, i = blockIdx.x * blockDim.x + threadIdx.x;
    udivmod(i, 64, x);
    out[i * 64 + x] = make_float2(0, 0);
    unsigned y;
    maybe(threadIdx.x, y);
    log[y] = 0;
    log[__popc(threadIdx.x) + 32 * (31 - __clz(threadIdx.x + 1))] = 1;
}
int main() { k<<<4, 256>>>(0, 0); }
"#);
    // i / 64 * 64 + i % 64 = i: 32 lanes of 8 bytes, 8 sectors.
    let st = find(&a, "out", Op::Store);
    assert_eq!(st.status, Status::Exact, "{:?}", st.unknown_reason);
    assert_eq!(sectors(st), 8.0);
    let logs: Vec<&AccessReport> = a.reports.iter().filter(|r| r.array == "log").collect();
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[0].status, Status::Unknown);
    assert!(matches!(
        &logs[0].unknown_reason,
        Some(UnknownReason::DependsOn {
            origin: Origin::BeforeAssigned { .. },
            ..
        })
    ));
    // Word `popc(t) + 32 * floor(log2(t + 1))`: in the first warp the row
    // `floor(log2(t + 1))` is 0..5 and `popc(t)` at most 5, so each lane's
    // word is in the first sector of its row: 6 sectors, the most of any
    // warp (the second warp's rows are 5 and 6).
    let bits = logs[1];
    assert_eq!(bits.status, Status::Exact, "{:?}", bits.unknown_reason);
    match &bits.cost {
        Some(Cost::Global(g)) => assert_eq!(g.max_sectors, 6),
        other => panic!("{other:?}"),
    }
}

/// tree-sitter puts a comment wherever it appears, as a named child: between
/// `else` and its `{` (cuda-samples eigenvalues' `scanInitial`), between
/// arguments, parameters and launch settings. None of them is the branch,
/// argument or setting it sits beside.
#[test]
fn comments_are_never_branches_arguments_or_parameters() {
    let a = run(r#"
__device__ void put(float *s, /* the slot */ int i, float v) { s[i] = v; }
__global__ void k(const float *g, // input
                  int pitch /* words */) {
    __shared__ float s[2048];
    __shared__ float w[2048];
    if (g[threadIdx.x] > 0) {
        s[threadIdx.x] = 1;
    }
    else // both children are open
    {
        w[threadIdx.x * pitch] = 2;
    }
    put(s, /* doubled */ threadIdx.x * 4, 3);
}
int main() { k<<<1, /* one warp */ 32>>>(0, /* pitch */ 2); }
"#);
    // The else branch is analysed, under the launch's pitch 2 and block 32.
    let w = find(&a, "w", Op::Store);
    assert_eq!(w.block, [32, 1, 1]);
    assert_eq!(ways(w), 2.0);
    // `put`'s `i` is the second argument, not the comment before it.
    let s = a
        .reports
        .iter()
        .filter(|r| r.array == "s" && r.op == Op::Store)
        .map(ways)
        .fold(0.0, f64::max);
    assert_eq!(s, 4.0);
}
#[test]
fn macros_if_branches_and_device_functions() {
    let a = run(r#"
#define TILE 32
#define AT(r, c) ((r) * PITCH + (c))
#if TILE >= 32
#define PITCH 33
#else
#define PITCH 32
#endif
__device__ float get(const float *t, int r, int c) { return t[AT(r, c)]; }
__global__ void k(float *out) {
    __shared__ float t[TILE * PITCH];
    out[threadIdx.x] = get(t, threadIdx.x, 0);
}
int main() { k<<<1, 32>>>(0); }
"#);
    assert_eq!(ways(find(&a, "t", Op::Load)), 1.0);
}

#[test]
fn launch_configuration_sources() {
    let a = run(r#"
const int ROWS = 8;
__global__ void k2d(float *out) {
    __shared__ float s[32][32];
    out[0] = s[threadIdx.x][threadIdx.y];
}
__global__ void __launch_bounds__(64) kb(float *out) {
    __shared__ float s[64 * 4];
    out[0] = s[threadIdx.x * 4];
}
__global__ void kd(float *out) {
    __shared__ float s[2048];
    out[0] = s[threadIdx.x * 2];
}
int main() {
    dim3 b(32, ROWS);
    k2d<<<dim3(2, 2), b>>>(0);
}
"#);
    let r = find(&a, "s", Op::Load);
    assert_eq!(r.block, [32, 8, 1]);
    assert_eq!(r.status, Status::Exact);
    let kb = a
        .reports
        .iter()
        .find(|r| r.kernel_name == "kb" && r.array == "s")
        .unwrap();
    assert_eq!(kb.block, [64, 1, 1]);
    assert_eq!(kb.status, Status::Assumed);
    assert!(kb
        .assumptions
        .iter()
        .any(|s| matches!(s, Assumption::LaunchBoundsBlock { .. })));
    let kd = a
        .reports
        .iter()
        .find(|r| r.kernel_name == "kd" && r.array == "s")
        .unwrap();
    // No launch: `s[threadIdx.x * 2]` is 2-way in every warp under every
    // common block size, so the answer holds for all of them (the
    // configured default, 256, reported).
    assert_eq!(kd.block, [256, 1, 1]);
    assert_eq!(kd.status, Status::Exact);
    assert_eq!(kd.for_every.len(), 1);
}

#[test]
fn parameters_from_launch_sites_and_unknown_data() {
    let a = run(r#"
__global__ void k(const float *in, float *out, const int *idx, int pitch, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * pitch] + in[idx[0] + i] + in[idx[i]];
}
int main() { k<<<4, 128>>>(0, 0, 0, 2, 77); }
"#);
    let loads: Vec<_> = a.reports.iter().filter(|r| r.array == "in").collect();
    assert_eq!(sectors(loads[0]), 8.0);
    assert_eq!(loads[0].status, Status::Exact);
    // idx[0] is the same for the whole warp: only the alignment is assumed.
    assert_eq!(loads[1].status, Status::Assumed);
    assert_eq!(sectors(loads[1]), 4.0);
    // idx[i] differs per lane: unknown, no cost.
    assert_eq!(loads[2].status, Status::Unknown);
    assert!(loads[2].cost.is_none());
}

/// A warp-uniform unknown chosen by a warp-uniform condition (`r == 0 ?
/// 0 : (int)scale`, a parameter the engine does not evaluate) still only
/// shifts the warp; chosen by a per-lane condition it does not.
#[test]
fn uniform_unknowns_through_uniform_selects() {
    let a = run(r#"
__global__ void k(float scale, int *out, int *out2, const int *in) {
    int r = blockIdx.x;
    int start = r == 0 ? 0 : (int)scale;
    out[start + threadIdx.x] = in[threadIdx.x];
    int lane_start = threadIdx.x < 16 ? 0 : (int)scale;
    out2[lane_start + threadIdx.x] = 0;
}
int main() { k<<<4, 128>>>(0, 0, 0, 0); }
"#);
    let shifted = find(&a, "out", Op::Store);
    assert_eq!(
        shifted.status,
        Status::Assumed,
        "{:?}",
        shifted.unknown_reason
    );
    assert_eq!(sectors(shifted), 4.0);
    assert!(
        shifted
            .assumptions
            .iter()
            .any(|s| matches!(s, Assumption::KeepsAligned { .. })),
        "{:?}",
        shifted.assumptions
    );
    let per_lane = find(&a, "out2", Op::Store);
    assert_eq!(per_lane.status, Status::Unknown);
    assert!(per_lane.cost.is_none());
}

#[test]
fn parse_errors_become_notes_and_the_rest_is_analysed() {
    let a = run(r#"
__global__ void broken(float *a) { a[threadIdx.x] = @@@ ; }
__global__ void fine(float *a) { a[threadIdx.x * 32] = 0; }
int main() { fine<<<1, 32>>>(0); }
"#);
    assert!(!a.program.notes.is_empty());
    let r = a.reports.iter().find(|r| r.kernel_name == "fine").unwrap();
    assert_eq!(sectors(r), 32.0);
}

/// PolyBench-style host code: `dim3 block(BX, BY);` with macro arguments
/// parses as a function declaration, and the grid is `ceil(n / b)`.
#[test]
fn vexing_parse_and_ceil_grid() {
    let a = run(r#"
#define N 500
#define BX 32
#define BY 8
__global__ void k(float *c) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N)
        c[i * N + j] = 0;
}
void host(float *c) {
    dim3 block(BX, BY);
    dim3 grid((size_t)(ceil(((float)N) / ((float)block.x))), (size_t)(ceil(((float)N) / ((float)block.y))));
    k<<<grid, block>>>(c);
}
"#);
    let r = find(&a, "c", Op::Store);
    assert_eq!((r.block, r.grid), ([32, 8, 1], [16, 63, 1]));
    // Rows of 500 floats start at every offset of a sector, so the blocks
    // differ in cost, and 8 of the grid's 1,008 are run: the mean rests on
    // them, and says so.
    assert_eq!(r.status, Status::Assumed);
    assert_eq!(
        r.assumptions,
        vec![Assumption::BlocksSampled {
            sampled: 8,
            blocks: 1008
        }]
    );
}

#[test]
fn attributes_the_grammar_lacks_and_a_missing_final_newline() {
    let a = run("__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128) __maxnreg__(32) k(float *a) {\n    auto f = [=] __device__ (int i) { return i; };\n    a[threadIdx.x * 2] = 0;\n}\n#include \"x.h\"");
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let r = find(&a, "a", Op::Store);
    assert_eq!(r.block, [128, 1, 1]);
    assert_eq!(sectors(r), 8.0);
    // Offsets are unchanged: the access is still at line 3, column 5.
    assert_eq!((r.span.line, r.span.column), (3, 5));
}

#[test]
fn pragmas_between_a_loop_header_and_its_body() {
    // flashinfer's `moe_bgmv_impl.cuh`: a pragma between two loop headers
    // is a syntax error to the grammar; the pragma lines are blanked and
    // every position after them is unchanged.
    let src = "__global__ void k(float *a) {\n  __shared__ float s[4][32];\n#pragma unroll\n  for (int i = 0; i < 4; ++i)\n#pragma unroll\n    for (int j = 0; j < 2; ++j) s[i][threadIdx.x * 2 + j] = 0;\n  a[threadIdx.x] = s[0][threadIdx.x];\n}\nint main() { k<<<1, 32>>>(0); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let store = find(&a, "s", Op::Store);
    assert_eq!((store.span.line, store.span.column), (6, 33));
    // The two stores of `j` are one 8-byte store (`nvcc/unroll.rs`), each
    // lane's 8 bytes beside the next: no conflict.
    assert_eq!(store.width, 8);
    assert_eq!(ways(store), 1.0);
    let load = find(&a, "s", Op::Load);
    assert_eq!((load.span.line, load.span.column), (7, 20));
}

#[test]
fn unknown_if_conditions_keep_the_first_branch_and_say_so() {
    let a = run("#if SOME_HEADER_FLAG > 2\n#define STRIDE 2\n#else\n#define STRIDE 1\n#endif\n__global__ void k(float *a) { a[threadIdx.x * STRIDE] = 0; }\nint main() { k<<<1, 32>>>(0); }\n");
    assert_eq!(sectors(find(&a, "a", Op::Store)), 8.0);
    assert!(
        a.program
            .notes
            .iter()
            .any(|n| undefined(&n.kind) == Some("SOME_HEADER_FLAG") && n.span.line == 1),
        "{:?}",
        a.program.notes
    );
    // A definite condition leaves no note.
    let b = run("#define FLAG 3\n#if FLAG > 2\n#define STRIDE 2\n#endif\n__global__ void k(float *a) { a[threadIdx.x * STRIDE] = 0; }\n");
    assert!(b.program.notes.is_empty(), "{:?}", b.program.notes);
}

/// A file whose shared stride is chosen by `#ifdef __CUDA_ARCH__` and
/// `__CUDA_ARCH__ >= 800`: its store's sectors under `arch` (nvcc's
/// predefined macros) and `defines`.
fn arch_branch_sectors(arch: Option<&str>, defines: &[(&str, &str)]) -> f64 {
    let src = "#ifdef __CUDA_ARCH__\n#if __CUDA_ARCH__ >= 800\n#define S 2\n#else\n#define S 4\n#endif\n#else\n#define S 8\n#endif\n__global__ void k(float *a) { a[threadIdx.x * S] = 0; }\nint main() { k<<<1, 32>>>(0); }\n";
    let mut o = Options::default();
    o.frontend.arch = arch.map(|a| warplint_analyzer::Arch::parse(a).unwrap());
    o.frontend.defines = defines
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let a = analyze(src.as_bytes(), &Modern, &o);
    sectors(find(&a, "a", Op::Store))
}

#[test]
fn defines_select_branches() {
    let with = |defs: &[(&str, &str)]| arch_branch_sectors(None, defs);
    assert_eq!(with(&[]), 32.0); // stride 8: host pass
    assert_eq!(with(&[("__CUDA_ARCH__", "900")]), 8.0);
    assert_eq!(with(&[("__CUDA_ARCH__", "700")]), 16.0);
}

#[test]
fn template_parameters_take_their_defaults() {
    // No launch in the file: NUM_THREADS falls back to its default 256, and
    // T to float.
    let a = run("#define WARP_SIZE 32\ntemplate <typename T = float, const int NUM_THREADS = 256>\n__global__ void k(T *a) {\n    constexpr int NUM_WARPS = (NUM_THREADS + WARP_SIZE - 1) / WARP_SIZE;\n    __shared__ T s[NUM_WARPS][33];\n    a[threadIdx.x] = s[threadIdx.x % NUM_WARPS][0];\n}\n");
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let r = find(&a, "s", Op::Load);
    assert_eq!(r.kernel_name, "k<float, 256>");
    assert_eq!(r.width, 4);
    assert_eq!(ways(r), 1.0);
}

#[test]
fn split_braces_across_if_branches_and_note_positions() {
    // Braces opened in both branches: resolved before parsing, so the
    // kernel parses whole; the note for the unknown condition is at its line.
    let a = run("int x;\n\n#if USE_FAST_PATH\n__global__ void k(float *a) {\n#else\n__global__ void k(float *a, int unused) {\n#endif\n    a[threadIdx.x * 32] = 0;\n}\nint main() { k<<<1, 32>>>(0); }\n");
    let r = find(&a, "a", Op::Store);
    assert_eq!(sectors(r), 32.0);
    assert_eq!(r.span.line, 8);
    let n = a
        .program
        .notes
        .iter()
        .find(|n| undefined(&n.kind) == Some("USE_FAST_PATH"))
        .unwrap();
    assert_eq!((n.span.line, n.span.column), (3, 1));
    assert_eq!(a.program.notes.len(), 1, "{:?}", a.program.notes);
}

#[test]
fn a_type_parameter_bound_to_a_struct_template_instance_reads_its_members() {
    // flashinfer's `allToAllMetadataDevice<PipelineConfig, ...>` after
    // `using PipelineConfig = PipelineConfig<4, 16>;`: the parameter is
    // named like the template; each launch's arguments (through an alias
    // or written out) are the ones its members are read with. An inlined function whose own
    // parameter is bound to another instance reads that one.
    let src = r#"
template <int UNIT_IN, int UNROLL_IN>
struct PipelineConfig {
  static constexpr int UNIT_SIZE = UNIT_IN;
};
template <int N>
struct Other {
  static constexpr int UNIT_SIZE = N;
};
template <typename Cfg>
__device__ void put(float *s) { s[threadIdx.x * Cfg::UNIT_SIZE] = 1; }
template <typename PipelineConfig, typename T>
__global__ void k(T *out) {
  __shared__ T buf[PipelineConfig::UNIT_SIZE * 32];
  buf[threadIdx.x * PipelineConfig::UNIT_SIZE] = out[threadIdx.x];
  put<Other<8>>(buf);
  out[threadIdx.x] = buf[threadIdx.x];
}
void run(float *o, int unit) {
  if (unit == 4) {
    using PipelineConfig = PipelineConfig<4, 16>;
    k<PipelineConfig, float><<<1, 32>>>(o);
  } else {
    k<PipelineConfig<2, 16>, float><<<1, 32>>>(o);
  }
}
"#;
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let ways_at = |kernel: &str, line: u32| {
        let r = a
            .reports
            .iter()
            .find(|r| {
                a.program.kernels[r.kernel].display_name == kernel
                    && r.span.line == line
                    && r.array == "buf"
            })
            .unwrap_or_else(|| panic!("no report for {kernel} at {line}"));
        ways(r)
    };
    assert_eq!(ways_at("k<PipelineConfig<4, 16>, float>", 15), 4.0);
    assert_eq!(ways_at("k<PipelineConfig<2, 16>, float>", 15), 2.0);
    assert_eq!(ways_at("k<PipelineConfig<4, 16>, float>", 11), 8.0);
}

#[test]
fn explicit_template_arguments_of_inlined_calls_are_bound() {
    // ggml's `block_reduce<SUM, block_size>(val, s_sum)`: with 32 threads
    // the shared exchange never runs; with 64 it does. cuda-samples'
    // `ComparatorExtended<sortDir>(..., sortDir)`: a condition on the
    // argument short-circuits a read.
    let src = r#"
enum class method { SUM, MAX };
template <method M, int W>
__device__ float reduce(float v, float *s) {
  if (W > 32) {
    s[threadIdx.x / 32] = v;
    v = s[threadIdx.x % 32];
  }
  return v;
}
template <int B>
__global__ void k(float *o) {
  __shared__ float s[32];
  o[threadIdx.x] = reduce<method::SUM, B>(o[threadIdx.x], s);
}
void run(float *o) {
  k<32><<<1, 32>>>(o);
  k<64><<<1, 64>>>(o);
}
"#;
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let shared_in = |kernel: &str| {
        a.reports
            .iter()
            .filter(|r| a.program.kernels[r.kernel].display_name == kernel && r.array == "s")
            .count()
    };
    assert_eq!(shared_in("k<32>"), 0);
    assert_eq!(shared_in("k<64>"), 2);
    // Parameters not given take their defaults, which may read the ones
    // before them (ggml's `warp_reduce_sum<width = WARP_SIZE>`,
    // `ggml_cuda_memcpy_1<nbytes, alignment = 0>`).
    let b = run(r#"
template <int A, int B = A * 2, int C = 7>
__device__ void put(float *s) { s[threadIdx.x * B + C - 7] = 1; }
__global__ void k(float *o) {
  __shared__ float s[32 * 64];
  put<8>(s);
  o[threadIdx.x] = s[threadIdx.x];
}
void run(float *o) { k<<<1, 32>>>(o); }
"#);
    assert!(b.program.notes.is_empty(), "{:?}", b.program.notes);
    assert_eq!(ways(find(&b, "s", Op::Store)), 16.0);
}

#[test]
fn launch_blocks_fixed_by_switch_cases_and_conditions() {
    // threadFenceReduction's `switch (threads) { case 64: k<64><<<g,
    // dimBlock>>>` with `dim3 dimBlock(threads)`: each launch runs with the
    // case's block. A case the one before falls into is entered for both
    // values, so its block stays unknown (the default, 256); an assignment
    // (`sqrt_block_size = 16;` in llm.c) is a value like any other.
    let src = r#"
template <unsigned int N>
__global__ void k(const float *g, float *o) {
  unsigned int i = blockIdx.x * (N * 2) + threadIdx.x;
  o[i] = g[i];
}
__global__ void m(float *o) { o[threadIdx.x] = 0; }
__global__ void f(float *o) { o[threadIdx.x] = 1; }
void run(int threads, int side, const float *g, float *o) {
  dim3 dimBlock(threads, 1, 1);
  switch (threads) {
  case 64:
    k<64><<<8, dimBlock>>>(g, o);
    break;
  case 2:
    k<2><<<8, dimBlock>>>(g, o);
    break;
  case 8:
    o = 0;
  case 4:
    f<<<8, dimBlock>>>(o);
    break;
  }
  if (side == 128) {
    m<<<1, side>>>(o);
  }
  side = 16;
  dim3 sq(side, side);
  m<<<1, sq>>>(o);
}
"#;
    let a = run(src);
    let blocks = |kernel: &str| {
        let mut b: Vec<[u64; 3]> = a
            .reports
            .iter()
            .filter(|r| a.program.kernels[r.kernel].display_name == kernel)
            .map(|r| r.block)
            .collect();
        b.sort();
        b.dedup();
        b
    };
    assert_eq!(blocks("k<64>"), vec![[64, 1, 1]]);
    assert_eq!(blocks("k<2>"), vec![[2, 1, 1]]);
    assert_eq!(blocks("f"), vec![[256, 1, 1]]);
    assert_eq!(blocks("m"), vec![[16, 16, 1], [128, 1, 1]]);
}

#[test]
fn static_constants_of_structs_and_struct_templates() {
    // llm.c's Packed128: `x128::size` through a typedef of a template.
    let a = run(r#"
template<class ElementType>
struct alignas(16) Packed128 {
    static constexpr const size_t size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
};
typedef Packed128<float> f128;
using h128 = Packed128<half>;
struct Tile { static constexpr int N = 32; };
__global__ void k(float *out) {
    __shared__ float a[f128::size][33];
    __shared__ float b[Packed128<double>::size * 16];
    __shared__ float c[h128::size][Tile::N];
    out[0] = a[threadIdx.x % 4][0] + b[threadIdx.x * 2] + c[0][threadIdx.x];
}
int main() { k<<<1, 32>>>(0); }
"#);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let dims = |name: &str| {
        a.program.kernels[0]
            .objects
            .iter()
            .find(|o| o.name == name)
            .unwrap()
            .dims
            .clone()
    };
    assert_eq!(dims("a"), vec![Some(4), Some(33)]);
    assert_eq!(dims("b"), vec![Some(32)]);
    assert_eq!(dims("c"), vec![Some(8), Some(32)]);
}

/// A macro used in its own arguments is expanded there first, as C's
/// argument prescan does (cuda-samples' dct8x8:
/// `IMAD(IMAD(blockIdx.y, H, row), stride, ...)`); it was a call nothing
/// defines. `x = IMAD(IMAD(t, 2, 0), 2, 0)` is `4t`: shorts 8 bytes apart,
/// 32 lanes over 256 bytes, 8 sectors where 2 would do; the same through a
/// macro that uses another (`TWICE(TWICE(t))`).
#[test]
fn a_macro_used_in_its_own_arguments_is_expanded_there_first() {
    let a = run(r#"
#define IMAD(a, b, c) (((a) * (b)) + (c))
#define TWICE(a) IMAD(a, 2, 0)
__global__ void k(short *out, short *out2) {
    int x = IMAD(IMAD(threadIdx.x, 2, 0), 2, 0);
    out[x] = 1;
    int y = TWICE(TWICE(threadIdx.x));
    out2[y] = 1;
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    for array in ["out", "out2"] {
        let r = find(&a, array, Op::Store);
        assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
        assert_eq!(sectors(r), 8.0, "{array}");
    }
}

#[test]
fn macros_used_as_specifiers_do_not_derail_the_kernel() {
    let a = run("#define CUTLASS_DEVICE __forceinline__ __device__\n#define MY_KERNEL_ATTRS __global__\n#define API\nCUTLASS_DEVICE float get(const float *p, int i) { return p[i]; }\nAPI MY_KERNEL_ATTRS void k(float *a) { a[threadIdx.x] = get(a, threadIdx.x * 2); }\nint main() { k<<<1, 32>>>(0); }\n");
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    assert_eq!(a.program.kernels.len(), 1);
    let r = find(&a, "a", Op::Load);
    assert_eq!(sectors(r), 8.0);
    // The load in get() is reported at its own place: line 4.
    assert_eq!(r.span.line, 4);
    // CUTLASS's `CUTLASS_GRID_CONSTANT TmaA const tma_a` once the header
    // defining it as `__grid_constant__` is found.
    let b = run("#define CUTE_GRID_CONSTANT __grid_constant__
#define CUTLASS_GRID_CONSTANT CUTE_GRID_CONSTANT
__global__ void k(float *a, CUTLASS_GRID_CONSTANT int const n) { a[threadIdx.x * 2] = n; }
int main() { k<<<1, 32>>>(0, 4); }
");
    assert!(b.program.notes.is_empty(), "{:?}", b.program.notes);
    assert_eq!(sectors(find(&b, "a", Op::Store)), 8.0);
    // Macros naming each other eight times over (8^16 words if followed
    // whole): a bounded look, a note, the kernel still analysed.
    let c = run("#define A B B B B B B B B\n#define B A A A A A A A A\n__global__ void k(float *a, A int n) { a[threadIdx.x] = 0; }\n");
    assert_eq!(c.program.notes.len(), 1, "{:?}", c.program.notes);
    assert_eq!(sectors(find(&c, "a", Op::Store)), 4.0);
}

#[test]
fn template_dependent_dimensions_are_not_notes_but_undefined_names_are() {
    // Without an instantiation, dimensions from template arguments are
    // understood (no note) and the inner stride still decides the cost; an
    // identifier declared nowhere is a note at the dimension.
    let src = "template <typename Ktraits, int N>\n__global__ void k(float *a) {\n    enum { LDGS = Ktraits::LDGS, PITCH = 32 };\n    constexpr int M = N * 2;\n    __shared__ float s[LDGS][PITCH];\n    __shared__ float t[M][33];\n    __shared__ float v[UNDEFINED_THING];\n    a[threadIdx.x] = s[threadIdx.x][0] + t[threadIdx.x][1] + v[threadIdx.x];\n}\n";
    let a = run(src);
    let lines: Vec<u32> = a.program.notes.iter().map(|n| n.span.line).collect();
    assert_eq!(lines, vec![7], "{:?}", a.program.notes);
    assert!(
        matches!(&a.program.notes[0].kind, NoteKind::ArrayDimension { text } if text == "UNDEFINED_THING"),
        "{:?}",
        a.program.notes
    );
    assert_eq!(ways(find(&a, "s", Op::Load)), 32.0);
    assert_eq!(ways(find(&a, "t", Op::Load)), 1.0);
    // With the instantiation the local enum takes the struct's value.
    let inst = format!(
        "struct Traits {{ static constexpr int LDGS = 4; }};\n{src}int main() {{ k<Traits, 8><<<1, 32>>>(0); }}\n"
    );
    let b = run(&inst);
    assert_eq!(b.program.notes.len(), 1, "{:?}", b.program.notes);
    assert_eq!(find(&b, "s", Op::Load).kernel_name, "k<Traits, 8>");
    assert_eq!(ways(find(&b, "s", Op::Load)), 32.0);
}

#[test]
fn lone_macro_lines_do_not_derail_the_kernel() {
    // Statement macros without `;` (defined or not), an attribute macro
    // from a missing header after a template header, and a pragma macro
    // before a loop: the kernel parses whole, the launch inside the
    // `PERF_BEGIN` block gives the block shape, and lines stay where they
    // are although newlines became `;`.
    let src = "#define PERF_BEGIN { int t0 = 0;\n#define PERF_END(name) (void)t0; }\n#define CHECK(x) do { if ((x) != 0) return; } while (0)\n\ntemplate <int N>\nCUTE_HOST_DEVICE\nvoid helper(float *a) { a[threadIdx.x * N] = 0; }\n\n__global__ void k(float *a, int n) {\n  __shared__ float tile[32][32];\n  CUTLASS_PRAGMA_UNROLL\n  for (int i = 0; i < 4; ++i) {\n    tile[threadIdx.x][i] = a[threadIdx.x * 32 + i];\n  }\n  SOME_BARRIER()\n  a[threadIdx.x] = tile[threadIdx.x][0];\n}\n\nint main() {\n  float *d;\n  CHECK(cudaMalloc(&d, 4))\n  PERF_BEGIN\n  k<<<1, 64>>>(d, 4);\n  PERF_END(\"k\")\n}\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let store = find(&a, "tile", Op::Store);
    assert_eq!(store.block, [64, 1, 1]);
    assert_eq!((store.span.line, store.span.column), (13, 5));
    // nvcc unrolls the four stores of a row into one 16-byte store
    // (`nvcc/unroll.rs`): rows 128 bytes apart put each quarter-warp's 8
    // lanes on banks 0-3, 8-way (measured: `unrolled_shared.cu`).
    assert_eq!(store.width, 16);
    assert_eq!(ways(store), 8.0);
    let load = find(&a, "tile", Op::Load);
    assert_eq!((load.span.line, load.span.column), (16, 20));
    // A line that continues an expression is left alone.
    let b = run(
        "__global__ void k(float *a) {\n  float x = 1.0f;\n  a[threadIdx.x] = x\n    + SCALE;\n}\n",
    );
    assert!(b.program.notes.is_empty(), "{:?}", b.program.notes);
}

#[test]
fn dimensions_through_aliases_sizeof_and_template_calls_are_dependent() {
    let src = "template <typename T> __device__ constexpr int elemPerCopy() { return 16 / sizeof(T); }\ntemplate <typename MT, typename T>\n__global__ void k(float *a) {\n    using KV = typename MT::KV;\n    static constexpr int N_V = KV::D_NOPE / KV::TILE;\n    constexpr int E = sizeof(T) * 2;\n    constexpr int C = elemPerCopy<typename MT::KV>();\n    __shared__ float s[N_V][32];\n    __shared__ float t[E][33];\n    __shared__ float w[C][C];\n    __shared__ float u[NOT_HERE];\n    __shared__ float v[cosize_v<MT>];\n    __shared__ float x[detail::STAGES_v<MT>];\n    a[threadIdx.x] = s[threadIdx.x][0] + t[threadIdx.x][1] + u[threadIdx.x] + w[0][threadIdx.x] + v[threadIdx.x];\n}\n";
    let a = run(src);
    let lines: Vec<u32> = a.program.notes.iter().map(|n| n.span.line).collect();
    assert_eq!(lines, vec![11], "{:?}", a.program.notes);
    assert_eq!(ways(find(&a, "s", Op::Load)), 32.0);
    // `w`'s row length is unknown: its accesses say why instead of a cost.
    let w = find(&a, "w", Op::Load);
    assert!(w.cost.is_none());
    assert!(
        matches!(
            &w.unknown_reason,
            Some(UnknownReason::DependsOn { origin: Origin::ArrayLayout { array }, .. }) if array == "w"
        ),
        "{:?}",
        w.unknown_reason
    );
}

#[test]
fn function_like_specifier_macros_expand_in_place() {
    // `SAMPLING_LAUNCH_BOUNDS(n)` stands for `__launch_bounds__(n)`
    // (written in place, as it fits, so the kernel keeps its bounds);
    // `ATTR(x)` expands to nothing.
    let src = "#define SAMPLING_LAUNCH_BOUNDS(block_threads) __launch_bounds__(block_threads)\n#define ATTR(x)\n__global__ SAMPLING_LAUNCH_BOUNDS(128) void k(float *a) {\n  a[threadIdx.x * 2] = 0;\n}\n__global__ ATTR(1) void j(float *b) { b[threadIdx.x] = 0; }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let k = a.program.kernels.iter().find(|k| k.name == "k").expect("k");
    assert_eq!(k.launch_bounds, Some(128));
    let store = find(&a, "a", Op::Store);
    assert_eq!(store.block, [128, 1, 1]);
    assert_eq!(sectors(store), 8.0);
    assert_eq!(sectors(find(&a, "b", Op::Store)), 4.0);
}

#[test]
fn skipped_lines_are_the_inactive_ones_only() {
    // A directive's continuation line and a macro line the preprocessor
    // blanks (`CUTE_UNROLL`) are not left out by conditional compilation.
    let src = "#if defined(NOT_SET) && \\\n  (1 > 0)\nint a;\n\nint b;\n#endif\n__global__ void k(float *x) {\n  CUTE_UNROLL\n  for (int i = 0; i < 2; ++i) x[i] = 0;\n}\n";
    let a = run(src);
    assert_eq!(a.program.skipped_lines, vec![(3, 5)]);
}

/// The fix search's early stop: the first warp of `tile` past the limit
/// ends the analysis (that access unknown, nothing after it analysed);
/// under the limit the result is the full one.
#[test]
fn fix_search_stops_at_the_first_warp_past_the_limit() {
    let src = r#"
__global__ void k(float *out) {
    __shared__ float tile[32][32];
    __shared__ float other[64];
    tile[threadIdx.x][0] = 1.0f;
    other[threadIdx.x] = tile[0][threadIdx.x];
    out[threadIdx.x] = other[threadIdx.x];
}
int main() { k<<<1, 64>>>(0); }
"#;
    let mut o = Options::default();
    o.engine.stop_above_ways = Some(("tile".into(), 4.0));
    let a = analyze(src.as_bytes(), &Modern, &o);
    let first = &a.reports[0];
    assert_eq!(first.array, "tile");
    assert_eq!(first.status, Status::Unknown);
    assert!(first
        .unknown_reason
        .as_ref()
        .is_some_and(|r| r.kind() == "fix-search-stopped"));
    assert_eq!(a.reports.len(), 1, "nothing analysed after the stop");
    o.engine.stop_above_ways = Some(("tile".into(), 32.0));
    let full = analyze(src.as_bytes(), &Modern, &o);
    assert_eq!(ways(&full.reports[0]), 32.0);
    assert_eq!(full.reports.len(), run(src).reports.len());
}

#[test]
fn dim3_fields_assigned_on_the_host_set_the_launch() {
    // dwtHaar1D: `dim3 block_size;` then `block_size.x = ...` in branches.
    let src = |else_value: &str| {
        format!(
            "__global__ void k(float *a) {{ __shared__ float s[1024]; s[2 * threadIdx.x] = a[threadIdx.x]; }}\n\
             void host(float *a, int n) {{\n    dim3 block;\n    dim3 grid;\n    if (n < 512) {{\n        block.x = 64;\n    }} else {{\n        block.x = {else_value};\n    }}\n    grid.x = 4;\n    k<<<grid, block>>>(a);\n}}\n"
        )
    };
    // Both branches agree: the block is known.
    let a = run(&src("64"));
    let r = find(&a, "s", Op::Store);
    assert_eq!((r.block, r.grid), ([64, 1, 1], [4, 1, 1]));
    assert_eq!(r.status, Status::Exact);
    assert_eq!(ways(r), 2.0);
    // They differ (one is only known at run time): the block is not known,
    // never the default-constructed 1x1x1; the store is 2-way in every warp
    // under each common block size, so that holds for every one.
    let a = run(&src("n"));
    let r = find(&a, "s", Op::Store);
    assert_ne!(r.block, [1, 1, 1]);
    assert_eq!(r.status, Status::Exact);
    assert_eq!(ways(r), 2.0);
    assert!(r
        .for_every
        .iter()
        .any(|f| matches!(f, warplint_analyzer::finding::ForEvery::Block { .. })));
}

#[test]
fn alternative_operator_words_in_conditions() {
    // flashinfer's deep_gemm: `#if (defined(__CUDA_ARCH__) and (__CUDA_ARCH__ == 900))`.
    let a = run("#define ARCH 900\n#if (defined(ARCH) and (ARCH >= 800)) and not defined(NO_STRIDE)\n#define STRIDE 2\n#else\n#define STRIDE 1\n#endif\n__global__ void k(float *a) { a[threadIdx.x * STRIDE] = 0; }\nint main() { k<<<1, 32>>>(0); }\n");
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    assert_eq!(sectors(find(&a, "a", Op::Store)), 8.0);
}

#[test]
fn members_of_local_aliases_and_full_specialisations() {
    // ThunderKittens: `using K = fwd_attend_ker_tile_dims<D>;` then
    // `K::stages`, with a `template <> struct …<64>` specialisation.
    let src = "template <int D> struct Dims { static constexpr int stages = 2; };\n\
               template <> struct Dims<64> { static constexpr int stages = 4; };\n\
               template <int D> __global__ void k(float *a) {\n\
                   using K = Dims<D>;\n\
                   __shared__ float s[32][K::stages * 8];\n\
                   s[threadIdx.x][0] = a[threadIdx.x];\n\
               }\n\
               int main() { k<64><<<1, 32>>>(0); k<128><<<1, 32>>>(0); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let mut by_kernel: Vec<(String, f64)> = a
        .reports
        .iter()
        .filter(|r| r.array == "s")
        .map(|r| (r.kernel_name.clone(), ways(r)))
        .collect();
    by_kernel.sort_by(|x, y| x.0.cmp(&y.0));
    // k<64>: the specialisation, a 32-word row (32-way); k<128>: the
    // primary template, a 16-word row (16-way).
    assert_eq!(
        by_kernel,
        vec![("k<128>".to_string(), 16.0), ("k<64>".to_string(), 32.0)]
    );
}

#[test]
fn three_template_closers_are_not_a_launch() {
    // ThunderKittens: `al.allocate<col_vec<st_fl<CHUNK_SIZE, ATTN_D>>>()`.
    let src = "#define CH 64\n#define AD 128\n\
               template <class T> struct col_vec {}; template <int A, int B> struct st_fl {};\n\
               struct Al { template <class T> T &allocate(); };\n\
               template <class T> __global__ void k(float *a) {\n\
               \x20   Al al;\n\
               \x20   col_vec<st_fl<CH, AD>> (&q) = al.allocate<col_vec<st_fl<CH, AD>>>();\n\
               \x20   a[threadIdx.x * 2] = 0;\n\
               }\n\
               int main() { k<col_vec<st_fl<1, 2>>><<<1, 32>>>(0); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let r = find(&a, "a", Op::Store);
    // The launch is still read (block 32), and the access is where it was.
    assert_eq!(r.block, [32, 1, 1]);
    assert_eq!((r.span.line, r.span.column), (8, 5));
    assert_eq!(sectors(r), 8.0);
}

#[test]
fn undefined_specifier_macros_in_parameter_lists() {
    // CUTLASS: `CUTLASS_GRID_CONSTANT TmaA const tma_a`, the macro from a
    // header that is not here. An ALL_CAPS type (`DWORD n`, `UINT32 const
    // m`) and an expression (`MASK_BITS & x & y`) are left alone.
    let src = "typedef int DWORD; typedef unsigned UINT32;\n\
               template <class TmaA>\n\
               __global__ void k(float *a, // a comment\n  CUTLASS_GRID_CONSTANT TmaA const tma_a, DWORD n, UINT32 const m) {\n\
               \x20   a[threadIdx.x * 2 + (MASK_BITS & n & m)] = n;\n\
               }\n\
               int main() { k<int><<<1, 32>>>(0, 0, 1, 2); }\n";
    let a = run(src);
    assert!(
        a.program.notes.iter().all(|n| !matches!(
            n.kind,
            NoteKind::ParseError { .. } | NoteKind::ParseExpected { .. }
        )),
        "{:?}",
        a.program.notes
    );
    let r = find(&a, "a", Op::Store);
    assert_eq!((r.span.line, r.span.column), (5, 5));
    assert_eq!(a.program.kernels[0].params.len(), 4);
}

#[test]
fn string_macros_glued_to_string_literals() {
    // Rodinia mummergpu: `printf("In node ("fNID"): %c\n", ...)` with
    // `#define fNID "%d"`. C++11 lexes `"("fNID` as a literal with a
    // suffix; compilers read the macro. An undefined suffix and a `_`
    // user-defined literal are left as written.
    let src = "#define fNID \"%d\"\n\
               #define XPRINTF(...) printf(__VA_ARGS__)\n\
               __global__ void k(float *a, int n) {\n\
               \x20   XPRINTF(\"In node (\"fNID\"): %d\\n\", n, n);\n\
               \x20   printf(\"at \"fNID, n);\n\
               \x20   a[threadIdx.x * 2] = n;\n\
               }\n\
               int main() { k<<<1, 32>>>(0, 1); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let r = find(&a, "a", Op::Store);
    assert_eq!((r.span.line, r.span.column), (6, 5));
    assert_eq!(sectors(r), 8.0);
}

#[test]
fn a_note_counts_for_the_instantiation_that_raised_it() {
    // CUTLASS ldsm.cu: `k<uint32_t>`, `k<uint64_t>` and `k<uint128_t>`, the
    // last a type from a header that is not here. Its unknown size is a
    // note of that instantiation only; a parse error inside the kernel is
    // everyone's.
    let src = "template <class T> __global__ void k(float *a) {\n\
               \x20   constexpr int n = sizeof(T) / 4;\n\
               \x20   __shared__ float s[32 * n];\n\
               \x20   s[threadIdx.x] = a[threadIdx.x];\n\
               }\n\
               int main() { k<unsigned><<<1, 32>>>(0); k<uint128_t><<<1, 32>>>(0); k<double><<<1, 32>>>(0); }\n";
    let a = run(src);
    let names: Vec<_> = a
        .program
        .kernels
        .iter()
        .map(|k| k.display_name.clone())
        .collect();
    let notes = a.kernel_notes();
    let noted: Vec<_> = names
        .iter()
        .zip(&notes)
        .filter(|(_, n)| **n > 0)
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(noted, vec!["k<uint128_t>"], "{names:?} {notes:?}");
    assert_eq!(a.summary().kernels_with_notes, 1);
    let broken = src.replace(
        "constexpr int n",
        "constexpr int n = ) +;\n    constexpr int m",
    );
    let a = run(&broken);
    assert!(
        a.kernel_notes().iter().all(|n| *n > 0),
        "{:?}",
        a.program.notes
    );
}

#[test]
fn functional_casts_to_scalar_types() {
    // CUTLASS predicate_vector.cu: `result |= (unsigned(pred) << bit)`;
    // `(unsigned(` derails the grammar, and `int(x)` / `uint32_t(x)` were
    // calls of unknown functions.
    let src = "typedef unsigned short u16;\n\
               __global__ void k(float *a, bool p) {\n\
               \x20   unsigned r = (unsigned(p) << 3);\n\
               \x20   unsigned (*f)(int) = 0;\n\
               \x20   a[int(threadIdx.x) * 2 + (unsigned (r) & 0)] = sizeof(unsigned);\n\
               \x20   a[u16(threadIdx.x) * 4 + 1024] = 0;\n\
               }\n\
               int main() { k<<<1, 32>>>(0, 1); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    let stores: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.array == "a")
        .map(|r| (r.span.line, r.status, sectors(r)))
        .collect();
    assert_eq!(
        stores,
        vec![(5, Status::Exact, 8.0), (6, Status::Exact, 16.0)]
    );
}

#[test]
fn functional_casts_through_dependent_types() {
    // CUTLASS dump_reg_shmem.cu: `It it(typename It::Ref({p, It::packed({R,
    // C})}), t);`. Declarations through `typename` keep their types.
    let src = "struct Dims { using Elem = double; struct Ref { Ref(float *, int); }; static int packed(int, int); };\n\
               struct It { It(Dims::Ref, int); };\n\
               template <typename D>\n\
               __global__ void k(float *a, typename D::Elem *b) {\n\
               \x20   It it(\n\
               \x20       typename D::Ref(\n\
               \x20           {a, D::packed(\n\
               \x20                   {64, 32})}),\n\
               \x20       1);\n\
               \x20   typename D::Elem *c = b;\n\
               \x20   c[threadIdx.x] = 0;\n\
               \x20   a[threadIdx.x * 2] = 0;\n\
               }\n\
               int main() { k<Dims><<<1, 32>>>(0, 0); }\n";
    let a = run(src);
    assert!(a.program.notes.is_empty(), "{:?}", a.program.notes);
    // Floats at a stride of 2: 8 sectors. `c` is still a pointer to the
    // member type (which member types of a template parameter are is not
    // followed yet: unknown, and said so).
    assert_eq!(sectors(find(&a, "a", Op::Store)), 8.0);
    let c = find(&a, "b", Op::Store);
    assert_eq!(c.status, Status::Unknown);
    assert!(
        format!("{:?}", c.unknown_reason).contains("\"typename D::Elem\""),
        "{:?}",
        c.unknown_reason
    );
}

#[test]
fn static_members_that_use_their_siblings_and_brace_initialisers() {
    // ThunderKittens: `constexpr int WARPGROUP_WARPS{4};` in a header and
    // `struct absmax_config { static constexpr int NUM_WARPGROUPS = 4;
    // static constexpr int NUM_WARPS = NUM_WARPGROUPS * WARPGROUP_WARPS; }`.
    // A member defined through itself stays unknown; a chain of members
    // each using the one before twice is evaluated once per member.
    let chain: String = (1..48)
        .map(|i| format!(" static constexpr int M{i} = M{} + M{};", i - 1, i - 1))
        .collect();
    let src = format!(
        "namespace kittens {{ constexpr int WARPGROUP_WARPS{{4}}; }}\n\
         using namespace kittens;\n\
         namespace q {{\n\
         struct absmax_config {{ static constexpr int NUM_WARPGROUPS = 4; static constexpr int NUM_WARPS = NUM_WARPGROUPS * WARPGROUP_WARPS; }};\n\
         struct loop {{ static constexpr int N = N + 1; }};\n\
         struct chain {{ static constexpr int M0 = 1;{chain} }};\n\
         __global__ void k(float *a) {{\n\
         \x20   __shared__ float s[absmax_config::NUM_WARPS][16];\n\
         \x20   __shared__ float t[loop::N];\n\
         \x20   __shared__ float u[chain::M47 % 64 + 32];\n\
         \x20   s[threadIdx.x % 16][threadIdx.x / 16] = t[0] + u[threadIdx.x];\n\
         }}\n\
         }}\n\
         int main() {{ q::k<<<1, 32>>>(0); }}\n"
    );
    let a = run(&src);
    let notes: Vec<_> = a.program.notes.iter().map(|n| n.span.line).collect();
    assert_eq!(notes, vec![9], "{:?}", a.program.notes);
    // 16-float rows, lanes 0..15 walk down a column: the even rows share
    // banks 0/1, the odd ones 16/17: 8-way (a wrong row count would not
    // change that, the declared shape would: 16 x 16 = 256 floats).
    let s = find(&a, "s", Op::Store);
    assert_eq!(ways(s), 8.0);
    assert_eq!(s.status, Status::Exact);
    assert_eq!(find(&a, "u", Op::Load).status, Status::Exact);
}

#[test]
fn files_of_a_run_share_their_headers_parse_trees() {
    use std::sync::Arc;
    use warplint_analyzer::frontend::cache::ParseCache;
    use warplint_analyzer::Header;
    let header = Header {
        name: "tile.cuh".into(),
        path: "tile.cuh".into(),
        text: b"#define PITCH 32\n__device__ void put(float *t, float v) { t[threadIdx.x * PITCH] = v; }\n"
            .to_vec(),
    };
    let files = [
        "#include \"tile.cuh\"\n__global__ void a(float *x) { __shared__ float t[1024]; put(t, x[threadIdx.x]); }\nint main() { a<<<1, 32>>>(0); }\n",
        "#include \"tile.cuh\"\n__global__ void b(float *y) { __shared__ float t[2048]; put(t, y[threadIdx.x]); }\nint main() { b<<<1, 32>>>(0); }\n",
    ];
    let cache = Arc::new(ParseCache::new());
    let with = |cache: Option<Arc<ParseCache>>, src: &str| {
        let mut o = Options::default();
        o.frontend.headers = vec![header.clone()];
        o.frontend.parse_cache = cache;
        let a = analyze(src.as_bytes(), &Modern, &o);
        a.reports
            .iter()
            .map(|r| {
                (
                    r.span,
                    r.array.clone(),
                    r.cost.clone().map(|c| format!("{c:?}")),
                )
            })
            .collect::<Vec<_>>()
    };
    for src in files {
        let shared = with(Some(Arc::clone(&cache)), src);
        assert_eq!(shared, with(None, src));
        assert!(shared.iter().any(|(s, a, _)| s.file == 1 && a == "t"));
    }
    // One header text, parsed once for both files.
    assert_eq!(cache.len(), 1);
}

/// Files of a run share their headers' conditional compilation: a header
/// entered in the same state (macros defined, headers entered) is replayed
/// from the run's cache, with its nested include, its macros (which the
/// including file then uses), its left-out branches and its notes (an
/// unknown `#if`); in another state (a macro defined before the include),
/// or where its nested include finds nothing, it is processed again. Every
/// report, note and left-out line equals the analysis without a cache, and
/// a second pass over the same files adds no entry.
#[test]
fn files_of_a_run_share_their_headers_preprocessing() {
    use std::sync::Arc;
    use warplint_analyzer::frontend::cache::ParseCache;
    use warplint_analyzer::Header;
    let outer = Header {
        name: "outer.cuh".into(),
        path: "outer.cuh".into(),
        text: b"#pragma once\n#include \"inner.cuh\"\n#ifdef WIDE\n#define PITCH (INNER * 2)\n#else\n#define PITCH INNER\n#endif\n#if SOMETHING_UNKNOWN\nint unknown_mode;\n#endif\n".to_vec(),
    };
    let inner = Header {
        name: "inner.cuh".into(),
        path: "inner.cuh".into(),
        text: b"#define INNER 32\n".to_vec(),
    };
    let kernel = "__global__ void k(float *x) { __shared__ float t[64 * 64]; t[threadIdx.x * PITCH] = x[threadIdx.x]; }\nint main() { k<<<1, 32>>>(0); }\n";
    let plain = format!("#include \"outer.cuh\"\n{kernel}");
    let wide = format!("#define WIDE\n#include \"outer.cuh\"\n{kernel}");
    let with = |cache: Option<&Arc<ParseCache>>, src: &str, headers: &[&Header]| {
        let mut o = Options::default();
        o.frontend.headers = headers.iter().map(|h| (*h).clone()).collect();
        o.frontend.parse_cache = cache.cloned();
        let a = analyze(src.as_bytes(), &Modern, &o);
        (
            a.reports
                .iter()
                .map(|r| format!("{r:?}"))
                .collect::<Vec<_>>(),
            format!("{:?}", a.program.notes),
            a.program.skipped_lines.clone(),
        )
    };
    let cache = Arc::new(ParseCache::new());
    let both: &[&Header] = &[&outer, &inner];
    let cases: [(&str, &[&Header]); 4] = [
        (&plain, both),
        (&plain, both),
        (&wide, both),
        // The nested include finds nothing here: not replayed.
        (&plain, &[&outer]),
    ];
    for (src, headers) in cases {
        assert_eq!(with(Some(&cache), src, headers), with(None, src, headers));
    }
    // `outer` in two states (and without `inner`), `inner` in two.
    let kept = cache.preprocessed_len();
    assert!(kept >= 3, "{kept}");
    for (src, headers) in cases {
        assert_eq!(with(Some(&cache), src, headers), with(None, src, headers));
    }
    assert_eq!(
        cache.preprocessed_len(),
        kept,
        "nothing new on a second pass"
    );
    // The macros from the headers reached the kernel: PITCH 32 and 64.
    let ways = |src: &str| {
        let (r, notes, _) = with(Some(&cache), src, both);
        assert!(
            notes.contains("SOMETHING_UNKNOWN") && notes.contains("file: 1"),
            "{notes}"
        );
        r.iter()
            .find(|x| x.contains("array: \"t\""))
            .cloned()
            .unwrap_or_default()
    };
    assert!(ways(&plain).contains("max_ways: 32.0"), "{}", ways(&plain));
    assert!(ways(&wide).contains("max_ways: 32.0"));
}

#[test]
fn an_edited_copy_reparsed_incrementally_analyses_as_from_scratch() {
    use warplint_analyzer::frontend::Reparse;
    let src = "#define N 32\n__global__ void t(float *o, const float *i) {\n    __shared__ float tile[N][N];\n    tile[threadIdx.y][threadIdx.x] = i[threadIdx.y * N + threadIdx.x];\n    __syncthreads();\n    o[threadIdx.y * N + threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\nint main() { t<<<1, dim3(32, 32)>>>(0, 0); }\n";
    let first = run(src);
    let base = first.parsed.clone().expect("the tree is kept");
    let at = src.find("[N][N]").unwrap() + 4;
    let summary = |a: &FileAnalysis| {
        a.reports
            .iter()
            .map(|r| (r.span, r.array.clone(), format!("{:?}", r.cost)))
            .collect::<Vec<_>>()
    };
    for (replacement, ways_after) in [("N + 1", 1.0), ("N + 2", 2.0), ("(N)", 32.0)] {
        let edited = format!("{}{}{}", &src[..at], replacement, &src[at + 1..]);
        let mut o = Options::default();
        let scratch = analyze(edited.as_bytes(), &Modern, &o);
        o.frontend.reparse = Some(Reparse {
            base: base.clone(),
            start: at,
            old_end: at + 1,
            new_end: at + replacement.len(),
        });
        let incremental = analyze(edited.as_bytes(), &Modern, &o);
        assert_eq!(summary(&incremental), summary(&scratch), "{replacement}");
        let load = incremental
            .reports
            .iter()
            .find(|r| r.array == "tile" && r.op == Op::Load)
            .unwrap();
        assert_eq!(ways(load), ways_after, "{replacement}");
    }
}

/// The fix search's candidates reuse what the unedited file's analysis
/// prepared (conditionals resolved in the file and its header, launches):
/// with a header, an `#if` on an unknown macro after the edit (a note whose
/// offset moves), a left-out branch, and launches after the edit, every
/// report, note, launch and left-out line equals a from-scratch analysis
/// of the edited text; an edit in a left-out branch, one that adds a
/// directive character, or one outside an array dimension (the pitch
/// search's edit of a constant that a `#if` or a launch reads) falls back
/// to preprocessing again, with the same result.
#[test]
fn candidates_reuse_the_preparation_and_analyse_as_from_scratch() {
    use warplint_analyzer::frontend::{Header, Reparse};
    let header = Header {
        name: "tile.cuh".into(),
        path: "tile.cuh".into(),
        text:
            b"#pragma once\n#define N 32\n#ifdef WIDE\n#define M 64\n#else\n#define M 16\n#endif\n"
                .to_vec(),
    };
    let src = "#include \"tile.cuh\"\n__global__ void t(float *o, const float *i, int n) {\n    __shared__ float tile[N][N];\n    __shared__ float other[M][N];\n    tile[threadIdx.y][threadIdx.x] = i[threadIdx.y * n + threadIdx.x];\n    other[threadIdx.x % M][threadIdx.y] = 1;\n    __syncthreads();\n    o[threadIdx.y * N + threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\nstruct __align__(16) Pair { float a, b; };\n__global__ void late(Pair *p) { p[threadIdx.x].a = 0; }\n#if SOMETHING_UNKNOWN\nint mode = 1;\n#endif\n#if 0\n__global__ void gone(float *a) { __shared__ float g[32][32]; a[0] = g[threadIdx.x][0]; }\n#endif\n#define PITCH 32\n#if PITCH > 32\n#define Q 2\n#else\n#define Q 1\n#endif\nconst int W = 32;\n__global__ void p(float *a) { __shared__ float s[128]; s[threadIdx.x * Q] = a[threadIdx.x]; }\n__global__ void w(float *a) { __shared__ float s[128]; s[threadIdx.x * 2] = a[threadIdx.x]; }\nint main() { t<<<2, dim3(32, 32)>>>(0, 0, 4096); late<<<1, 32>>>(0); p<<<1, PITCH>>>(0); w<<<1, W>>>(0); }\n";
    let options = || {
        let mut o = Options::default();
        o.frontend.headers = vec![header.clone()];
        o
    };
    let base = analyze(src.as_bytes(), &Modern, &options());
    let parsed = base.parsed.clone().expect("the tree is kept");
    let everything = |a: &FileAnalysis| {
        let reports: Vec<String> = a.reports.iter().map(|r| format!("{r:?}")).collect();
        let launches: Vec<String> = a
            .program
            .kernels
            .iter()
            .map(|k| format!("{:?}", k.launches))
            .collect();
        (
            reports,
            launches,
            format!("{:?}", a.program.notes),
            a.program.skipped_lines.clone(),
        )
    };
    let at = src.find("tile[N][N]").unwrap() + 8;
    let gone = src.find("g[32][32]").unwrap() + 5;
    // The pitch search edits a constant's value: one a `#if` and a launch
    // read (`#define PITCH 32`), one a launch reads (`const int W = 32`).
    let pitch = src.find("PITCH 32").unwrap() + 6;
    let width = src.find("W = 32").unwrap() + 4;
    for (start, end, replacement) in [
        (at, at + 1, "N + 1"),
        (at, at + 1, "N+16"),
        (at, at + 1, "(N)"),
        (at, at + 1, "7"),
        // Longer than the distance from `struct` to its `__align__`.
        (at, at + 1, "N + 0 + 0 + 0 + 0 + 0 + 0 + 0 + 0 + 0"),
        // In a left-out branch, a directive character, a name the replaced
        // text did not have: prepared again.
        (gone, gone + 2, "33"),
        (at, at + 1, "N #"),
        (at, at + 1, "N + M"),
        (pitch, pitch + 2, "33"),
        (width, width + 2, "33"),
    ] {
        let edited = format!("{}{}{}", &src[..start], replacement, &src[end..]);
        let scratch = analyze(edited.as_bytes(), &Modern, &options());
        let mut o = options();
        o.frontend.reparse = Some(Reparse {
            base: parsed.clone(),
            start,
            old_end: end,
            new_end: start + replacement.len(),
        });
        let candidate = analyze(edited.as_bytes(), &Modern, &o);
        assert_eq!(
            everything(&candidate),
            everything(&scratch),
            "{replacement}"
        );
    }
    // The base itself saw the header, the unknown `#if` and the launch.
    assert!(base
        .program
        .notes
        .iter()
        .any(|n| undefined(&n.kind) == Some("SOMETHING_UNKNOWN")));
    assert!(!base.program.skipped_lines.is_empty());
    assert!(base
        .reports
        .iter()
        .any(|r| r.array == "other" && r.grid == [2, 1, 1]));
    // `__align__(16)` (after the edit) makes a `Pair` 16 bytes: 16 sectors.
    let late = base.reports.iter().find(|r| r.array == "p").expect("late");
    assert!(
        matches!(&late.cost, Some(Cost::Global(g)) if g.max_sectors == 16),
        "{late:?}"
    );
}

#[test]
fn spaced_launch_chevrons_are_a_launch() {
    // Rodinia particlefilter: `likelihood_kernel << < num_blocks, threads >> > (…)`.
    let a = run("__global__ void k(float *a) { a[threadIdx.x * 2] = 0; }\nvoid host(float *a) {\n    int threads = 64;\n    k << < 4, threads >> > (a);\n}\n");
    let r = find(&a, "a", Op::Store);
    assert_eq!((r.block, r.grid), ([64, 1, 1], [4, 1, 1]));
    assert_eq!(r.status, Status::Exact);
}

#[test]
fn nvcc_predefined_macros_for_the_architecture() {
    // The same file as `defines_select_branches`: with `arch` set, nvcc's
    // macros are defined (`__CUDA_ARCH__` from the architecture), and a
    // define given after them replaces one.
    let with = |arch: &str, defs: &[(&str, &str)]| arch_branch_sectors(Some(arch), defs);
    assert_eq!(with("sm_90", &[]), 8.0);
    assert_eq!(with("sm_70", &[]), 16.0);
    assert_eq!(with("sm_70", &[("__CUDA_ARCH__", "900")]), 8.0);
    let macros = warplint_analyzer::nvcc::predefined_macros(
        warplint_analyzer::Arch::parse("sm_86").unwrap(),
    );
    assert!(macros.contains(&("__CUDA_ARCH__".into(), "860".into())));
    assert!(macros.contains(&("__CUDACC__".into(), "1".into())));
}

/// One launch resolver decides every kernel's block and records why: a
/// launch site, a configured override, `__launch_bounds__`, else the
/// default for the kernel's dimensions (also where a site's block is not
/// known); the engine only reads the decision.
#[test]
fn one_resolver_decides_each_launch_block_and_says_why() {
    use warplint_analyzer::finding::Assumption;
    use warplint_analyzer::frontend::BlockDefaults;
    use warplint_analyzer::ir::LaunchOrigin;
    use warplint_analyzer::KernelOverride;
    let src = "__global__ void site(float *a) { a[threadIdx.x] = 0; }\n\
               __global__ void unknown_site(float *a) { a[threadIdx.x] = 0; }\n\
               __global__ void __launch_bounds__(64) bounded(float *a) { a[threadIdx.x] = 0; }\n\
               __global__ void plain(float *a) { a[threadIdx.x] = 0; }\n\
               __global__ void flat2d(float *a) { a[threadIdx.y * 32 + threadIdx.x] = 0; }\n\
               __global__ void configured(float *a) { a[threadIdx.x] = 0; }\n\
               void host(float *p, int n) { site<<<4, 128>>>(p); unknown_site<<<4, n>>>(p); }\n";
    let mut options = Options::default();
    options.frontend.block_defaults = BlockDefaults {
        one_d: [96, 1, 1],
        two_d: [16, 4, 1],
    };
    options.frontend.kernels.insert(
        "configured".into(),
        KernelOverride {
            block: Some([48, 1, 1]),
            ..KernelOverride::default()
        },
    );
    let a = analyze(src.as_bytes(), &Modern, &options);
    let launch = |name: &str| {
        let k = a
            .program
            .kernels
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"));
        assert_eq!(k.launches.len(), 1, "{name}: {:?}", k.launches);
        (k.launches[0].block, k.launches[0].origin)
    };
    assert_eq!(launch("site"), ([128, 1, 1], LaunchOrigin::LaunchSite));
    assert_eq!(launch("unknown_site"), ([96, 1, 1], LaunchOrigin::Default));
    assert_eq!(launch("bounded"), ([64, 1, 1], LaunchOrigin::LaunchBounds));
    assert_eq!(launch("plain"), ([96, 1, 1], LaunchOrigin::Default));
    assert_eq!(launch("flat2d"), ([16, 4, 1], LaunchOrigin::Default));
    assert_eq!(launch("configured"), ([48, 1, 1], LaunchOrigin::Config));
    // The engine runs each access under that block (a default one among
    // the common shapes, which all cost the same here: the first tried is
    // reported), and states the assumption, or that the answer holds for
    // every common shape, exactly when the block rests on one.
    for (name, assumed) in [
        ("site", false),
        ("unknown_site", true),
        ("bounded", true),
        ("plain", true),
        ("flat2d", true),
        ("configured", false),
    ] {
        let ki = a
            .program
            .kernels
            .iter()
            .position(|k| k.name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"));
        let r = a
            .reports
            .iter()
            .find(|r| r.kernel == ki)
            .unwrap_or_else(|| panic!("no report for {name}"));
        let (block, _) = launch(name);
        assert_eq!(r.block, block, "{name}");
        let says = r.assumptions.iter().any(|s| {
            matches!(
                s,
                Assumption::DefaultBlock { .. }
                    | Assumption::LaunchBoundsBlock { .. }
                    | Assumption::BlockCondition { .. }
            )
        }) || r
            .for_every
            .iter()
            .any(|f| matches!(f, warplint_analyzer::finding::ForEvery::Block { .. }));
        assert_eq!(says, assumed, "{name}: {:?}", r.assumptions);
    }
}

/// The system headers' `uint` and `clock_t` (64-bit Linux, where CUDA
/// runs) and the runtime's object handles are sized without their
/// headers: an array of each is costed, not unknown.
#[test]
fn system_typedefs_are_sized_without_their_headers() {
    let a = run(
        "__global__ void k(clock_t *t, uint *u, cudaTextureObject_t *o) {\n\
                 t[threadIdx.x] = 0; u[threadIdx.x] = 0; o[threadIdx.x] = 0;\n}\n\
                 void r() { k<<<1, 32>>>(0, 0, 0); }\n",
    );
    for (array, width, sectors_) in [("t", 8, 8.0), ("u", 4, 4.0), ("o", 8, 8.0)] {
        let r = find(&a, array, Op::Store);
        assert_eq!(r.status, Status::Exact, "{array}: {:?}", r.unknown_reason);
        assert_eq!(r.width, width, "{array}");
        // 32 lanes of `width` contiguous bytes: 32 * width / 32 sectors.
        assert_eq!(sectors(r), sectors_, "{array}");
    }
}

/// Macros are read once, by the preprocessor, and the translation-unit
/// pass applies its `#define`s and `#undef`s where its walk meets them
/// (kernels are lowered after the walk, under the table it left): the
/// header's `PITCH 32` replaced through `#undef` by 33 (conflict-free),
/// its `WIDTH 32` kept (32-way), whether the header was processed or
/// replayed from the run's cache; a variadic macro's `...` is no
/// parameter, so `__VA_ARGS__` takes the arguments after the named ones
/// (the launch in them gives `n` its value).
#[test]
fn macros_are_read_once_and_met_in_source_order() {
    use std::sync::Arc;
    use warplint_analyzer::frontend::cache::ParseCache;
    use warplint_analyzer::Header;
    let header = Header {
        name: "pitch.cuh".into(),
        path: "pitch.cuh".into(),
        text: b"#define PITCH 32\n#define WIDTH 32\n#define WITH(name, ...) { constexpr int name = 2; __VA_ARGS__ }\n".to_vec(),
    };
    let src = "#include \"pitch.cuh\"\n\
#undef PITCH\n\
#define PITCH 33\n\
__global__ void k(float *x, int n) {\n\
    __shared__ float t[64 * 64]; t[threadIdx.x * WIDTH] = 0;\n\
    __shared__ float u[64 * 64]; u[threadIdx.x * PITCH] = x[threadIdx.x * n];\n\
}\n\
int main() { WITH(two, k<<<1, 32>>>(0, two);); }\n";
    let cache = Arc::new(ParseCache::new());
    for cached in [None, Some(&cache), Some(&cache)] {
        let mut o = Options::default();
        o.frontend.headers = vec![header.clone()];
        o.frontend.parse_cache = cached.cloned();
        let a = analyze(src.as_bytes(), &Modern, &o);
        assert_eq!(ways(find(&a, "t", Op::Store)), 32.0);
        assert_eq!(ways(find(&a, "u", Op::Store)), 1.0);
        // `n` is 2 at the launch: a stride-2 float load, 8 sectors.
        let x = find(&a, "x", Op::Load);
        assert_eq!(sectors(x), 8.0, "{:?}", x.assumptions);
    }
    assert!(cache.preprocessed_len() >= 1);
}

/// Only one branch of an `if constexpr` is compiled: where its condition
/// reads a value not known here, which one is not known, and the accesses
/// in either branch are unknown (saying so), not assumed to run; where the
/// condition is a constant, or a template parameter analysed by value, each
/// run takes its branch.
#[test]
fn an_undecided_if_constexpr_leaves_its_branches_unknown() {
    let a = run(r#"
template <int nbytes>
__device__ void cpy(char *dst) {
    if constexpr (nbytes == 1) {
        dst[0] = 0;
    } else {
        ((int *) dst)[0] = 0;
    }
}
template <int W>
__global__ void k(float *x) {
    __shared__ char t[4096];
    cpy<UNKNOWN_SIZE>(t + threadIdx.x * 4);
    __shared__ int u[4096];
    if constexpr (sizeof(float) == 4) { u[threadIdx.x * 2] = 0; }
    __shared__ int v[4096];
    if constexpr (W == 1) { v[threadIdx.x * 2] = 0; }
}
int main() { k<1><<<1, 32>>>(0); }
"#);
    let t: Vec<&AccessReport> = a.reports.iter().filter(|r| r.array == "t").collect();
    assert_eq!(t.len(), 2);
    for r in t {
        assert_eq!(r.status, Status::Unknown);
        assert_eq!(
            r.unknown_reason.as_ref().map(|x| x.kind()),
            Some("branch-undecided")
        );
    }
    assert_eq!(ways(find(&a, "u", Op::Store)), 2.0);
    assert_eq!(ways(find(&a, "v", Op::Store)), 2.0);
}

/// Files of a run share the analysis of a kernel they lower alike
/// (`symbolic/reuse.rs`): a header's kernel analysed for one file is handed
/// to the next, at its own kernel index; where a macro changes the
/// kernel, or the header has another file number, it is analysed again.
/// Every report equals the analysis without the memo.
#[test]
fn files_of_a_run_share_the_analysis_of_a_kernel_lowered_alike() {
    use std::sync::Arc;
    use warplint_analyzer::symbolic::reuse::KernelMemo;
    use warplint_analyzer::Header;
    // The header launches its kernel itself (as template libraries do), so
    // the kernel and its launch are the same text wherever it is included.
    let tile = Header {
        name: "tile.cuh".into(),
        path: "tile.cuh".into(),
        text: b"#ifndef PITCH\n#define PITCH 32\n#endif\n__global__ void col(float *x) { __shared__ float t[32 * 33]; t[threadIdx.x * PITCH] = x[threadIdx.x]; }\ninline void go() { col<<<1, 32>>>(0); }\n"
            .to_vec(),
    };
    let other = Header {
        name: "other.cuh".into(),
        path: "other.cuh".into(),
        text: b"#define UNUSED 1\n".to_vec(),
    };
    let a = "#include \"tile.cuh\"\n";
    // Its own kernel first: the header's kernel has index 1 here.
    let b = "__global__ void own(float *y) { y[threadIdx.x * 2] = 0; }\nint f() { own<<<1, 32>>>(0); return 0; }\n#include \"tile.cuh\"\n";
    // Another pitch: another kernel.
    let c = "#define PITCH 33\n#include \"tile.cuh\"\n";
    // The same kernel text, its header numbered 2.
    let d = "#include \"other.cuh\"\n#include \"tile.cuh\"\n";
    let run = |memo: Option<&Arc<KernelMemo>>, src: &str, headers: Vec<Header>| {
        let mut o = Options::default();
        o.frontend.headers = headers;
        o.engine.kernel_memo = memo.cloned();
        let r = analyze(src.as_bytes(), &Modern, &o).reports;
        r.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>()
    };
    let memo = Arc::new(KernelMemo::new());
    let cases = [
        (a, vec![tile.clone()], 1),
        (b, vec![tile.clone()], 1),
        (a, vec![tile.clone()], 1),
        (c, vec![tile.clone()], 2),
        (d, vec![other.clone(), tile.clone()], 3),
    ];
    for (src, headers, kept) in cases {
        let shared = run(Some(&memo), src, headers.clone());
        assert_eq!(shared, run(None, src, headers), "{src}");
        assert!(!shared.is_empty());
        // b adds nothing: the header's kernel was handed over, and its own
        // (in the file analysed, met once per run) is not kept.
        assert_eq!(memo.len(), kept, "{src}");
    }
}

/// A macro nested in its own arguments past `MAX_PRESCAN_BYTES` (each
/// level of `MAX(MAX(…), x)` doubles the text) is not expanded there: the
/// inner uses stay calls the analysis does not know, as without the
/// prescan, the budget is named, and the run stays quick.
#[test]
fn a_prescan_past_its_budget_is_named_and_cheap() {
    let mut e = "s[threadIdx.x]".to_string();
    for i in 1..=16 {
        e = format!("MAX({e}, s[threadIdx.x + {i}])");
    }
    let src = format!(
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\
         __global__ void k(float *out) {{\n    __shared__ float s[64];\n    out[threadIdx.x] = {e};\n}}\n\
         int main() {{ k<<<1, 32>>>(0); }}\n"
    );
    let a = run(&src);
    assert!(
        a.program
            .notes
            .iter()
            .any(|n| format!("{:?}", n.kind).contains("MAX_PRESCAN_BYTES")),
        "{:?}",
        a.program.notes
    );
    // The outermost use's own operand is still read.
    assert!(a.reports.iter().any(|r| r.array == "s"));
}

/// `store_matrix_sync` of a float accumulator: four 8-byte stores (rows
/// of 16 floats, 64 bytes apart: 2-way, measured in
/// fixtures/groundtruth/sm_90/wmma.cu), also inside a helper whose fragment
/// parameter shares its name with the kernel's `half` fragment, and with
/// the layout through a macro (cuda-samples' `C_LAYOUT`); a layout held in
/// a variable is not known, so that call records nothing.
#[test]
fn wmma_stores_by_fragment_type_not_by_name() {
    let a = run(r#"
#include <mma.h>
using namespace nvcuda;
#define C_LAYOUT wmma::mem_row_major
__device__ void put(float *p, wmma::fragment<wmma::accumulator, 16, 16, 16, float> &c) {
    wmma::store_matrix_sync(p, c, 16, C_LAYOUT);
}
__global__ void k(float *out) {
    __shared__ float s[16 * 16];
    __shared__ float t[16 * 16];
    wmma::fragment<wmma::accumulator, 16, 16, 16, half> c;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> f;
    wmma::fill_fragment(f, 1.0f);
    put(s, f);
    wmma::layout_t l = wmma::mem_col_major;
    wmma::store_matrix_sync(t, f, 16, l);
}
int main() { k<<<1, 32>>>(0); }
"#);
    let s: Vec<&AccessReport> = a.reports.iter().filter(|r| r.array == "s").collect();
    assert_eq!(s.len(), 4, "{s:?}");
    assert!(s.iter().all(|r| r.width == 8 && ways(r) == 2.0));
    assert!(a.reports.iter().all(|r| r.array != "t"));
}

/// A fragment's dimensions spelled as template parameters (LeetCUDA's
/// `fragment<matrix_a, WMMA_M, WMMA_N, WMMA_K, half, row_major>` in a
/// kernel launched as `k<16, 16, 16>`) are read as any name is: the tile
/// `s_b` of rows 32 halves (64 bytes) apart is one `ldmatrix`, 4-way (in
/// fixtures/groundtruth/sm_90/wmma.cu, a tile whose `ldmatrix` lines are
/// 64 bytes apart, `ld_matrix_a_f16_row_major_32`, measured 4-way; a
/// row-major B's lines are its rows the same way, as `_16`, `_64` and `_72`
/// of B measured alike to A's).
#[test]
fn wmma_fragment_dimensions_from_template_parameters() {
    let a = run(r#"
#include <mma.h>
using namespace nvcuda;
template <int WM, int WN, int WK>
__global__ void k(float *out) {
    __shared__ half s_b[16][32];
    wmma::fragment<wmma::matrix_b, WM, WN, WK, half, wmma::row_major> b;
    wmma::load_matrix_sync(b, &s_b[0][0], 32);
    out[threadIdx.x] = 0.0f;
}
int main() { k<16, 16, 16><<<1, 32>>>(0); }
"#);
    let r = find(&a, "s_b", Op::Load);
    assert_eq!(r.width, 16);
    assert_eq!(ways(r), 4.0);
}
