//! A pointer given by a struct the file defines: the temporary `S<T>()`
//! converted to a pointer (`operator T *()`), and a method of a variable of
//! the struct's type (`smem.getPointer()`), each of the specialisation the
//! template arguments pick. This is how cuda-samples reaches its dynamic
//! shared memory (`SharedMemory<T>`); before, the pointer was a call's
//! result and every access through it was lost (later: generic, unknown).
//! Costs by hand: 32 banks of 4 bytes.

mod common;

use common::{find, run, ways};
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::Status;

const SHARED_MEMORY: &str = r#"
template <class T> struct SharedMemory {
  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
  __device__ inline operator const T *() const { extern __shared__ int __smem[]; return (T *)__smem; }
};
template <> struct SharedMemory<double> {
  __device__ inline operator double *() { extern __shared__ double __smem_d[]; return (double *)__smem_d; }
};
"#;

/// `sdata[2 t]` of floats: lanes t and t + 16 share a bank, 2-way. Of
/// doubles (the specialisation's `__smem_d`), 16 bytes apart: a warp's
/// 512 bytes are 4 wavefronts where 2 would do, 2-way too.
#[test]
fn a_struct_temporary_converted_to_a_pointer() {
    let a = run(&format!(
        "{SHARED_MEMORY}{}",
        r#"
template <class T> __global__ void reduce(T *g, T *out) {
  T *sdata = SharedMemory<T>();
  sdata[threadIdx.x] = g[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = sdata[threadIdx.x * 2];
}
int main() { reduce<float><<<4, 128>>>(0, 0); reduce<double><<<4, 128>>>(0, 0); }
"#
    ));
    let f = find(&a, "__smem", Op::Load);
    assert_eq!((f.kernel_name.as_str(), f.width), ("reduce<float>", 4));
    assert_eq!(ways(f), 2.0);
    assert_eq!(ways(find(&a, "__smem", Op::Store)), 1.0);
    let d = find(&a, "__smem_d", Op::Load);
    assert_eq!((d.kernel_name.as_str(), d.width), ("reduce<double>", 8));
    assert_eq!(ways(d), 2.0);
    assert!(a.reports.iter().all(|r| r.space != Space::Generic));
}

/// `smem.getPointer()` of the specialisation for `float` and for `int`:
/// `sdata[3 t]` is conflict-free (3 is odd).
#[test]
fn a_method_of_a_struct_variable() {
    let a = run(r#"
template <typename T> struct SharedMemory {
  __device__ T *getPointer() { return NULL; }
};
template <> struct SharedMemory<float> {
  __device__ float *getPointer() { extern __shared__ float s_float[]; return s_float; }
};
template <> struct SharedMemory<int> {
  __device__ int *getPointer() { extern __shared__ int s_int[]; return s_int; }
};
template <class T> __global__ void k(T *g, T *out) {
  SharedMemory<T> smem;
  T *sdata = smem.getPointer();
  sdata[threadIdx.x] = g[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = sdata[threadIdx.x * 3];
}
int main() { k<float><<<1, 64>>>(0, 0); k<int><<<1, 64>>>(0, 0); }
"#);
    for (array, kernel) in [("s_float", "k<float>"), ("s_int", "k<int>")] {
        let r = find(&a, array, Op::Load);
        assert_eq!(r.kernel_name, kernel);
        assert_eq!(r.status, Status::Exact);
        assert_eq!(ways(r), 1.0);
    }
}

/// A struct without a conversion to a pointer, or a method it does not
/// have, is a call the analysis does not follow: what is accessed through
/// the result is generic and unknown, as before.
#[test]
fn what_the_struct_does_not_define_stays_a_call_result() {
    let a = run(r#"
struct Box { int n; };
struct Holder { __device__ float *get() { extern __shared__ float s[]; return s; } };
__global__ void k(float *out) {
  float *p = Box();
  p[threadIdx.x] = 1.0f;
  Holder h;
  float *q = h.other();
  q[threadIdx.x] = 2.0f;
  float *r = h.get();
  r[threadIdx.x] = 3.0f;
}
int main() { k<<<1, 64>>>(0); }
"#);
    let generic: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.space == Space::Generic)
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(
        generic,
        vec!["p[threadIdx.x] = 1.0f", "q[threadIdx.x] = 2.0f"]
    );
    assert_eq!(ways(find(&a, "s", Op::Store)), 1.0);
}

/// An inner `B s;` shadows the outer `A s;` only inside its block, and an
/// inlined function's parameter `B &s` is the object passed (`t`, a `B`),
/// not the caller's `A s`: `B::get` runs, never the wrong struct's method.
#[test]
fn a_struct_variable_is_scoped() {
    let a = run(r#"
struct A { __device__ float *get() { extern __shared__ float sa[]; return sa; } };
struct B { __device__ float *get() { extern __shared__ float sb[]; return sb + threadIdx.x * 31; } };
__device__ float use(B &s) { return s.get()[1]; }
__global__ void k(float *out) {
  A s;
  { B s; out[threadIdx.x] = s.get()[0]; }
  float *r = s.get();
  out[threadIdx.x + 128] = r[threadIdx.x];
  B t;
  out[threadIdx.x + 256] = use(t);
}
int main() { k<<<2, 128>>>(0); }
"#);
    // Inside the block `sb`, after it `sa` (`sa[t]`: 1-way).
    let lines = |name: &str| -> Vec<u32> {
        let mut v: Vec<u32> = a
            .reports
            .iter()
            .filter(|r| r.array == name && r.op == Op::Load)
            .map(|r| r.span.line)
            .collect();
        v.sort();
        v
    };
    assert_eq!(lines("sb"), vec![4, 7]);
    assert_eq!(lines("sa"), vec![9]);
    assert_eq!(ways(find(&a, "sa", Op::Load)), 1.0);
    // In `use`, `s` is `t`: B's `sb[31 t + 1]`, 31 odd, 1-way.
    let callee: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.span.line == 4)
        .map(|r| (r.space, r.status, ways(r)))
        .collect();
    assert_eq!(callee, vec![(Space::Shared, Status::Exact, 1.0)]);
}
