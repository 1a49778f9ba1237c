//! Objects of the file's structs held in registers (`lower/objects.rs`):
//! a constructor's member initializers and body, methods that read and
//! write members (through `this->` too, and through other methods), an
//! object passed by reference, array members in local memory, and loops
//! that call methods. The shape is cuda-samples' interval (`global_stack`
//! and `local_stack`), whose stores were not recorded at all before.
//! Struct template instances are laid out with their arguments, and a
//! method declared in a class takes no room in its objects.
//! Costs by hand: 32-byte sectors; a warp of 32 lanes.

mod common;

use common::{find, run, sectors};
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::Status;

const STACK: &str = r#"
template <class T, int THREADS> class global_stack {
    T  *buf;
    int free_index;
public:
    __device__ global_stack(T *b, int thread_id) : buf(b), free_index(thread_id) {}
    __device__ void push(T const &v) { buf[free_index] = v; advance(); }
    __device__ void advance() { free_index += THREADS; }
    __device__ int size() { return free_index / THREADS; }
};
"#;

fn with_stack(kernel: &str) -> warplint_analyzer::FileAnalysis {
    run(&format!("{STACK}{kernel}"))
}

/// `buf[free_index]` with `free_index = thread_id` from the member
/// initializer: consecutive lanes, consecutive floats, 4 sectors. The
/// method's `THREADS` is the struct's template argument.
#[test]
fn a_constructor_and_a_method_give_the_members_values() {
    let a = with_stack(
        r#"
__global__ void k(float *out, int *n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    global_stack<float, 65536> result(out, t);
    result.push(1.0f);
    n[t] = result.size();
}
int main() { k<<<16, 64>>>(0, 0); }
"#,
    );
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!(sectors(s), 4.0);
    let n = find(&a, "n", Op::Store);
    assert_eq!(n.status, Status::Exact);
}

/// The object passed by reference to a function that pushes in a loop:
/// each iteration's `free_index` is the last one's plus `THREADS`, and
/// the caller's object sees the pushes (`result.size()` after it). With
/// `THREADS` 1 the lanes' pushes interleave: lane `t`'s k-th push is
/// `t + k`, still one warp-wide run of 32 floats per iteration.
#[test]
fn an_object_passed_by_reference_is_the_callers() {
    let a = with_stack(
        r#"
template <int THREADS>
__device__ void fill(global_stack<float, THREADS> &result, int count) {
    for (int k = 0; k < count; k++) {
        result.push(2.0f);
    }
}
__global__ void k(float *out, float *out2) {
    int t = threadIdx.x * 32;
    global_stack<float, 1> result(out, t);
    fill<1>(result, 4);
    out2[result.size()] = 0.0f;
}
int main() { k<<<1, 32>>>(0, 0); }
"#,
    );
    // Lane t pushes to 32 t + k: each iteration's store is 32 floats
    // 128 bytes apart, 32 sectors.
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!(sectors(s), 32.0);
    // After 4 pushes, `size()` is 32 t + 4: the caller's object moved.
    let after = find(&a, "out2", Op::Store);
    assert_eq!(after.status, Status::Exact, "{:?}", after.unknown_reason);
    assert_eq!(sectors(after), 32.0);
}

/// `S v(a, b);` that the grammar reads as a function declaration (the
/// arguments are plain names) is still the object constructed.
#[test]
fn a_constructor_read_as_a_function_declaration() {
    let a = with_stack(
        r#"
__global__ void k(float *out, int base) {
    int t = threadIdx.x;
    global_stack<float, 32> result(out, t);
    result.push(0.0f);
}
int main() { k<<<1, 32>>>(0, 0); }
"#,
    );
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!(sectors(s), 4.0);
}

/// `this->i = i` in a method whose parameter shadows the member sets the
/// member; the element stride 32 then makes 32 sectors.
#[test]
fn this_names_the_member_a_parameter_shadows() {
    let a = run(r#"
struct cursor {
    int i;
    __device__ void set(int i) { this->i = i * 32; }
    __device__ int at() const { return this->i; }
};
__global__ void k(float *out) {
    cursor c;
    c.set(threadIdx.x);
    out[c.at()] = 1.0f;
}
int main() { k<<<1, 32>>>(0); }
"#);
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!(sectors(s), 32.0);
}

/// An array member is an object of local memory per variable (before, its
/// name was "not declared"), and a default member initializer counts.
#[test]
fn an_array_member_is_local_memory() {
    let a = run(r#"
template <class T, int N> class local_stack {
    T buf[N];
    int tos = -1;
public:
    __device__ void push(T const &v) { buf[++tos] = v; }
    __device__ T pop() { return buf[tos--]; }
};
__global__ void k(float *in, float *out) {
    local_stack<float, 8> st;
    st.push(in[threadIdx.x]);
    out[threadIdx.x] = st.pop();
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let s = find(&a, "st.buf", Op::Store);
    assert_eq!(s.space, Space::Local);
    assert!(s.unknown_reason.is_none(), "{:?}", s.unknown_reason);
    let l = find(&a, "st.buf", Op::Load);
    assert_eq!(l.space, Space::Local);
    assert_eq!(find(&a, "out", Op::Store).status, Status::Exact);
}

/// A method that returns before its end leaves members the analysis
/// cannot know: what it assigned is unknown, never a made-up value.
#[test]
fn a_method_that_returns_early_leaves_its_members_unknown() {
    let a = run(r#"
struct cursor {
    int i;
    __device__ cursor(int s) : i(s) {}
    __device__ void step(int c) { if (c > 3) return; i += 32; }
};
__global__ void k(float *out, const int *flags) {
    cursor c(threadIdx.x);
    c.step(flags[threadIdx.x]);
    out[c.i] = 1.0f;
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Unknown);
}

/// A loop that calls a method but never changes a member leaves it as it
/// was, even when the loop's trip count is not known (a `break`).
#[test]
fn a_member_a_loop_does_not_change_keeps_its_value() {
    let a = with_stack(
        r#"
__global__ void k(float *out, float *out2, const int *flags) {
    global_stack<float, 32> result(out, threadIdx.x);
    for (int k = 0; k < 100; k++) {
        if (flags[k] > 0) break;
        result.size();
    }
    result.push(1.0f);
}
int main() { k<<<1, 32>>>(0, 0, 0); }
"#,
    );
    let s = find(&a, "out", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!(sectors(s), 4.0);
}

/// `ivl<double>` (a struct template the file defines) is laid out with
/// its argument: two doubles, 16 bytes, stored as two 8-byte pieces whose
/// lanes are 16 bytes apart: 16 sectors each where 8 would do. Before, its
/// size was not known (unknown).
#[test]
fn a_struct_template_instance_has_a_layout() {
    let a = run(r#"
template <class T> struct ivl { T lo, hi; };
template <class T>
__global__ void k(ivl<T> *b, ivl<T> x) { b[threadIdx.x] = x; }
int main() { k<double><<<1, 32>>>(0, {}); }
"#);
    let s = find(&a, "b", Op::Store);
    assert_eq!(s.status, Status::Exact, "{:?}", s.unknown_reason);
    assert_eq!((s.width, sectors(s)), (8, 16.0));
}

/// A method declared in the class (`float get() const;`, `T const &lo()
/// const;`) and a static member take no room: `p[t].b` of an 8-byte
/// struct loads 4-byte words 8 bytes apart, 8 sectors (12 if the method
/// were a member).
#[test]
fn methods_declared_in_a_class_take_no_room() {
    let a = run(r#"
struct P {
    float a;
    __device__ float get() const;
    __device__ float const &ref() const;
    static const int K = 3;
    float b;
};
__global__ void k(P *p, float *out) { out[threadIdx.x] = p[threadIdx.x].b; }
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let l = find(&a, "p", Op::Load);
    assert_eq!(l.status, Status::Exact, "{:?}", l.unknown_reason);
    assert_eq!(sectors(l), 8.0);
}

/// What could loop or blow up ends, said: a struct template naming
/// itself through a pointer, one that instantiates itself with ever other
/// arguments (`R<K - 1>`, no specialisation to stop it), a constructor
/// that constructs its own type, and a struct with more data members than
/// `MAX_OBJECT_MEMBERS` (a note names the budget).
#[test]
fn self_reference_and_budgets_end() {
    let members: String = (0..warplint_analyzer::budget::MAX_OBJECT_MEMBERS + 1)
        .map(|i| format!("int m{i}; "))
        .collect();
    let src = format!(
        r#"
template <class T> struct node {{ node<T> *next; T v; }};
template <int K> struct R {{ R<K - 1> r; int x; }};
struct Again {{
    int i;
    __device__ Again(int j) : i(j) {{ Again other(j + 1); i = other.i; }}
}};
struct Wide {{ {members} __device__ int first() const {{ return m0; }} }};
__global__ void k(node<float> *p, R<8> *q, float *out) {{
    out[threadIdx.x] = p[threadIdx.x].v;
    out[threadIdx.x + 32] = (float)q[threadIdx.x].x;
    Again a(threadIdx.x);
    out[a.i] = 1.0f;
    Wide w;
    out[w.first()] = 2.0f;
}}
int main() {{ k<<<1, 32>>>(0, 0, 0); }}
"#
    );
    let a = run(&src);
    // node<float> is laid out (a pointer and a float: 16 bytes).
    let p = find(&a, "p", Op::Load);
    assert_eq!(p.status, Status::Exact, "{:?}", p.unknown_reason);
    assert!(a
        .program
        .notes
        .iter()
        .any(|n| n.kind.kind() == "object-not-held"));
}
