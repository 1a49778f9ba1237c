//! A pointer chosen between two objects (`w < 4 ? A + i : B + j`, a
//! double buffer picked by a branch) is followed into each: every access
//! through it is one access per object, under its side of the condition.
//! A null pointer on one side is the other side (dereferencing null is
//! undefined). Before, such a pointer was an unknown value and the accesses
//! through it were not recorded at all: a kernel of nothing else got an
//! all-clear. Each cost is worked out by hand in the test's comment
//! (sectors: 32 bytes; banks: 32 of 4 bytes; block 256 threads).

mod common;

use common::{find, run, sectors, ways};
use warplint_analyzer::ir::Op;
use warplint_analyzer::Status;

/// cuda-samples' tensor-core GEMM copies A with warps 0-3 and B with
/// warps 4-7 through one pointer. `A[128 b] + 7 + t`: a warp's 32 floats
/// start 28 bytes into a sector, 5 sectors; `B[...] + 8 + t` starts on a
/// sector, 4. Each object's load runs in half of the warps.
#[test]
fn a_pointer_chosen_per_warp_is_an_access_of_each_object() {
    let a = run(r#"
__global__ void k(const float *A, const float *B, float *out) {
    int w = threadIdx.x / 32;
    const float *p = (w < 4) ? (&A[blockIdx.x * 128] + 7) : (&B[blockIdx.x * 128] + 8);
    out[threadIdx.x] = *(p + threadIdx.x % 32);
}
int main() { k<<<4, 256>>>(0, 0, 0); }
"#);
    let ra = find(&a, "A", Op::Load);
    let rb = find(&a, "B", Op::Load);
    assert_eq!(ra.status, Status::Exact);
    assert_eq!(sectors(ra), 5.0);
    assert_eq!(sectors(rb), 4.0);
    // 4 blocks x 8 warps, half of them each.
    assert_eq!(ra.executions, rb.executions);
    assert_eq!(
        ra.executions + rb.executions,
        find(&a, "out", Op::Store).executions
    );
}

/// `p ? p + off : nullptr` (ggml's optional rows): the access is through
/// `src` where it is not null. `row[2 t]`: 32 floats 8 bytes apart, 256
/// bytes, 8 sectors.
#[test]
fn a_null_side_is_the_other_pointer() {
    let a = run(r#"
__global__ void k(const float *src, float *dst) {
    const float *row = src ? (src + blockIdx.x * 64) : nullptr;
    const float *row2 = src ? &src[blockIdx.x * 64] : NULL;
    float *e = 0;
    if (blockIdx.x > 2) e = dst;
    e[threadIdx.x] = row[threadIdx.x * 2] + row2[threadIdx.x];
}
int main() { float *d; cudaMalloc(&d, 1 << 20); k<<<4, 256>>>(d, d); }
"#);
    let loads: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.array == "src" && r.op == Op::Load)
        .collect();
    assert_eq!(loads.len(), 2, "{:#?}", a.reports);
    let mut s: Vec<f64> = loads.iter().map(|r| sectors(r)).collect();
    s.sort_by(f64::total_cmp);
    assert_eq!(s, [4.0, 8.0]);
    assert_eq!(sectors(find(&a, "dst", Op::Store)), 4.0);
}

/// Two `__shared__` buffers picked by a branch, stored through: the store
/// is recorded once per buffer, each under its side of the branch. The
/// launch passes `flip = 1`: `buf[2 t]` is 2-way in `s0` (lanes t and
/// t + 16 share a bank), and the store to `s1` never runs.
#[test]
fn a_branch_picks_a_shared_buffer() {
    let a = run(r#"
__global__ void k(float *out, int flip) {
    __shared__ float s0[512];
    __shared__ float s1[512];
    float *buf;
    if (flip) buf = s0; else buf = s1;
    buf[threadIdx.x * 2] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s0[threadIdx.x] + s1[threadIdx.x];
}
int main() { k<<<1, 256>>>(0, 1); }
"#);
    let st: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.op == Op::Store && (r.array == "s0" || r.array == "s1"))
        .collect();
    assert_eq!(st.len(), 2, "{:#?}", a.reports);
    assert_eq!(ways(st.iter().find(|r| r.array == "s0").unwrap()), 2.0);
    assert_eq!(st.iter().find(|r| r.array == "s1").unwrap().executions, 0.0);
}

/// A pointer stepped in a loop keeps each object's offset as its own
/// loop variable: `p += 64` moves both sides, so iteration i reads
/// `A[64 i + t]`, never hoisted out of the loop and never the first
/// iteration's address again. 4 iterations, 4 sectors each.
#[test]
fn a_chosen_pointer_is_carried_by_a_loop() {
    let a = run(r#"
__global__ void k(const float *A, const float *B, float *out) {
    const float *p = (threadIdx.x < 128) ? A : B;
    float acc = 0.0f;
    for (int i = 0; i < 4; i++) {
        acc += p[threadIdx.x % 32];
        p += 64;
    }
    out[threadIdx.x] = acc;
}
int main() { k<<<1, 256>>>(0, 0, 0); }
"#);
    let ra = find(&a, "A", Op::Load);
    assert_eq!(ra.status, Status::Exact);
    assert!(ra.hoisted.is_none(), "the address moves every iteration");
    assert_eq!(sectors(ra), 4.0);
    // 4 warps of A x 4 iterations.
    assert_eq!(ra.executions, 16.0);
}

/// Past `MAX_POINTER_CHOICES` objects the pointer is unknown, and says
/// which budget.
#[test]
fn too_many_choices_are_an_unknown_pointer() {
    let a = run(r#"
__global__ void k(const float *A, const float *B, const float *C, const float *D, const float *E, float *out) {
    int w = threadIdx.x / 32;
    const float *p = w == 0 ? A : w == 1 ? B : w == 2 ? C : w == 3 ? D : E;
    out[threadIdx.x] = p[threadIdx.x];
}
int main() { k<<<1, 256>>>(0, 0, 0, 0, 0, 0); }
"#);
    assert!(a.reports.iter().all(|r| r.array != "A"), "{:#?}", a.reports);
    let _ = find(&a, "out", Op::Store);
}

/// A branch that leaves a chosen pointer as it was does not wrap it in
/// another choice: after two `if`s the loads are still one per object
/// (they were lost past the budget, found by review).
#[test]
fn branches_that_do_not_touch_a_choice_keep_it() {
    let a = run(r#"
__global__ void k(const float *A, const float *B, float *out, int n) {
    const float *p = (blockIdx.x & 1) ? A : B;
    if (n > 3) { out[0] = 1.0f; }
    if (n > 5) { out[1] = 1.0f; }
    out[threadIdx.x] = p[threadIdx.x];
}
int main() { k<<<2, 256>>>(0, 0, 0, 0); }
"#);
    let loads = |x: &str| {
        a.reports
            .iter()
            .filter(|r| r.array == x && r.op == Op::Load)
            .count()
    };
    assert_eq!((loads("A"), loads("B")), (1, 1), "{:#?}", a.reports);
}

/// `bias = use_bias ? B : nullptr; if (bias != nullptr) ... bias[t]`:
/// the null side compares as null, so under a launch passing
/// `use_bias = 0` the load never runs.
#[test]
fn a_null_side_compares_as_null() {
    let a = run(r#"
__global__ void k(const float *B, float *out, int use_bias) {
    const float *bias = use_bias ? B : nullptr;
    float acc = 1.0f;
    if (bias != nullptr) acc += bias[threadIdx.x];
    out[threadIdx.x] = acc;
}
int main() { k<<<2, 256>>>(0, 0, 0); }
"#);
    assert_eq!(find(&a, "B", Op::Load).executions, 0.0);
}
