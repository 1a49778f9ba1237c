//! An access through a pointer whose space the analysis does not know is
//! recorded as a `generic` access, unknown for the reason the pointer
//! gives, so that it is counted and never taken for all clear. Before,
//! nothing was recorded for it: a kernel made of such accesses was
//! summarised as "0 unknown".
//!
//! The pointers: one loaded per lane (`rows[threadIdx.x]`), one kept in
//! shared memory (the block may have put any pointer there), an integer
//! made a pointer (`(float *)addr`), a name nothing declares (an array
//! from a header not read), and a call's result the analysis does not
//! follow.

mod common;

use common::{find, run, sectors};
use warplint_analyzer::finding::{Origin, UnknownReason};
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::{AccessReport, FileAnalysis, Status};

/// The generic accesses of `a`, as (text, op, origin kind, differs).
fn generic(a: &FileAnalysis) -> Vec<(String, Op, &'static str, bool)> {
    a.reports
        .iter()
        .filter(|r| r.space == Space::Generic)
        .map(|r| {
            assert_eq!(r.status, Status::Unknown, "{r:#?}");
            assert!(r.cost.is_none(), "{r:#?}");
            match &r.unknown_reason {
                Some(UnknownReason::DependsOn { origin, differs }) => {
                    (r.text.clone(), r.op, origin.kind(), *differs)
                }
                other => panic!("`{}`: {other:?}", r.text),
            }
        })
        .collect()
}

fn origin(r: &AccessReport) -> &Origin {
    match &r.unknown_reason {
        Some(UnknownReason::DependsOn { origin, .. }) => origin,
        other => panic!("`{}`: {other:?}", r.text),
    }
}

#[test]
fn a_pointer_loaded_per_lane_is_generic_and_unknown() {
    let a = run(r#"
__global__ void k(float **rows, float *out) {
    float *r = rows[threadIdx.x];
    out[threadIdx.x] = r[3];
    r[1] = 2.0f;
}
int main() { k<<<2, 128>>>(0, 0); }
"#);
    assert_eq!(
        generic(&a),
        vec![
            ("r[3]".into(), Op::Load, "loaded-pointer", true),
            ("r[1] = 2.0f".into(), Op::Store, "loaded-pointer", true),
        ]
    );
    let r = find(&a, "rows[threadIdx.x]", Op::Load);
    assert_eq!(
        origin(r),
        &Origin::LoadedPointer {
            array: "rows".into()
        }
    );
    // The accesses the analysis does follow are costed as before.
    assert_eq!(sectors(find(&a, "rows", Op::Load)), 8.0);
    assert_eq!(sectors(find(&a, "out", Op::Store)), 4.0);
}

#[test]
fn a_pointer_kept_in_shared_memory_is_generic() {
    let a = run(r#"
__global__ void k(float *buf, float *out) {
    __shared__ float *sp;
    if (threadIdx.x == 0) sp = buf;
    __syncthreads();
    out[threadIdx.x] = sp[threadIdx.x];
}
int main() { k<<<2, 128>>>(0, 0); }
"#);
    // The shared slot is uniform: the pointer does not differ between lanes.
    assert_eq!(
        generic(&a),
        vec![("sp[threadIdx.x]".into(), Op::Load, "loaded-pointer", false)]
    );
}

#[test]
fn an_integer_made_a_pointer_is_generic() {
    let a = run(r#"
__global__ void k(unsigned long long addr, unsigned long long base) {
    float *p = (float *)addr;
    p[threadIdx.x] = 1.0f;
    reinterpret_cast<float *>(base + threadIdx.x * 4)[0] = 2.0f;
    float *z = (float *)0;
    if (z) z[threadIdx.x] = 3.0f;
}
int main() { k<<<2, 128>>>(0, 0); }
"#);
    // A parameter is not an address: it is never tried over the spread
    // of sizes as if it were one (no cost for any value of `addr`); the
    // null pointer is not a generic access.
    assert_eq!(
        generic(&a),
        vec![
            (
                "p[threadIdx.x] = 1.0f".into(),
                Op::Store,
                "integer-as-pointer",
                false
            ),
            (
                "reinterpret_cast<float *>(base + threadIdx.x * 4)[0] = 2.0f".into(),
                Op::Store,
                "integer-as-pointer",
                true
            ),
        ]
    );
}

#[test]
fn a_name_nothing_declares_is_a_generic_array() {
    let a = run(r#"
__global__ void k(float *g) {
    missing_buf[threadIdx.x] = g[threadIdx.x];
    *missing_ptr = 1.0f;
    float *q = missing_call(g);
    q[threadIdx.x] = 0.0f;
}
int main() { k<<<2, 128>>>(0); }
"#);
    assert_eq!(
        generic(&a),
        vec![
            (
                "missing_buf[threadIdx.x] = g[threadIdx.x]".into(),
                Op::Store,
                "undeclared-name",
                false
            ),
            (
                "*missing_ptr = 1.0f".into(),
                Op::Store,
                "undeclared-name",
                false
            ),
            (
                "q[threadIdx.x] = 0.0f".into(),
                Op::Store,
                "call-result",
                false
            ),
        ]
    );
    assert_eq!(sectors(find(&a, "g", Op::Load)), 4.0);
}

/// A store through a generic pointer may write any global or shared
/// bytes: nvcc reloads after it, and so does the model (the second load of
/// `a[t]` is not removed), while with no store between it is.
#[test]
fn a_generic_store_keeps_a_reload() {
    let a = run(r#"
__global__ void k(float *a, float *out, float **rows) {
    float x = a[threadIdx.x];
    rows[threadIdx.x][0] = 1.0f;
    float y = a[threadIdx.x];
    out[threadIdx.x] = x + y;
}
__global__ void k2(float *a, float *out) {
    float x = a[threadIdx.x];
    float y = a[threadIdx.x];
    out[threadIdx.x] = x + y;
}
int main() { k<<<2, 128>>>(0, 0, 0); k2<<<2, 128>>>(0, 0); }
"#);
    let loads = |kernel: &str| {
        a.reports
            .iter()
            .filter(|r| r.kernel_name == kernel && r.array == "a" && r.op == Op::Load)
            .filter(|r| r.cost.is_some())
            .count()
    };
    assert_eq!(loads("k"), 2);
    assert_eq!(loads("k2"), 1);
}

/// A store through a generic pointer may write a `__shared__` count the
/// block loaded before it: `n` read after it is another input, so
/// `b - a` is not 0 (32 sectors for `b - a + 1 = 8`, assumed), where
/// forgetting that gave 4 sectors, exact.
#[test]
fn a_generic_store_forgets_shared_values() {
    let a = run(r#"
__global__ void k(float *out, const int *src, int **ptrs) {
  __shared__ int n; __shared__ int *sp;
  if (threadIdx.x == 0) { n = src[blockIdx.x]; sp = ptrs[blockIdx.x]; }
  __syncthreads();
  int a = n;  *sp = 7;  int b = n;
  out[threadIdx.x * (b - a + 1)] = 1.0f;
}
int main() { k<<<2, 128>>>(0, 0, 0); }
"#);
    let st = find(&a, "out", Op::Store);
    assert_eq!(st.status, Status::Assumed);
    assert_eq!(sectors(st), 32.0);
}

/// `*(int *)&f` of a register value accesses no memory: no generic
/// access, and the second load of `in[2 t]` is still not emitted.
#[test]
fn the_address_of_a_register_value_is_not_generic() {
    let a = run(r#"
__global__ void k(const float *in, float *out) {
  int t = threadIdx.x;
  float x = in[2 * t];
  float f = x;
  *(int *)&f = 0;
  float y = in[2 * t];
  out[t] = x + y + f;
}
int main() { k<<<2, 128>>>(0, 0); }
"#);
    assert!(generic(&a).is_empty(), "{:?}", generic(&a));
    let costed = a
        .reports
        .iter()
        .filter(|r| r.array == "in" && r.cost.is_some())
        .count();
    assert_eq!(costed, 1);
}

/// A call's result subscripted, and a name nothing declares subscripted
/// twice, are generic accesses too.
#[test]
fn a_call_result_and_a_nested_subscript_are_generic() {
    let a = run(r#"
__device__ float *get_ptr(int i);
__global__ void k() {
  get_ptr(threadIdx.x)[threadIdx.x * 32] = 1.0f;
  FOO[threadIdx.x][1] = 2.0f;
}
int main() { k<<<2, 128>>>(); }
"#);
    let kinds: Vec<_> = generic(&a).into_iter().map(|g| g.2).collect();
    assert_eq!(kinds, vec!["call-result", "undeclared-name"]);
}
