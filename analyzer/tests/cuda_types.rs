//! CUDA's own types against their measurement: every line of
//! `fixtures/groundtruth/types/cuda_types.sm_90.txt` (sizeof, alignof and
//! num_elements printed by nvcc 13.0's host and sm_90 device passes) is
//! checked through the front end as a kernel spells the type, so the table
//! in `frontend/cuda_types.rs` cannot drift from the measurement; and a few
//! analyses whose accesses used to be unknown (`type-size`) for want of one
//! of these sizes.

use warplint_analyzer::frontend::cuda_types::{self, Arg};
use warplint_analyzer::frontend::types::Ty;
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::{analyze, AccessReport, FileAnalysis, Options, Status};

const MEASURED: &str = include_str!("../../fixtures/groundtruth/types/cuda_types.sm_90.txt");

/// One measured line: the type as the measuring program spelled it.
struct Line {
    ty: String,
    size: u64,
    align: u64,
    num_elements: i64,
}

fn measured() -> Vec<Line> {
    MEASURED
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "a measured line has four columns: {l:?}");
            Line {
                ty: f[0].to_string(),
                size: f[1].parse().unwrap(),
                align: f[2].parse().unwrap(),
                num_elements: f[3].parse().unwrap(),
            }
        })
        .collect()
}

fn run(src: &str) -> FileAnalysis {
    analyze(
        src.as_bytes(),
        &warplint_analyzer::hardware::Modern,
        &Options::default(),
    )
}

#[test]
fn the_measurement_is_whole() {
    let lines = measured();
    // 212 types printed; the header names the six fragments mma.h does not
    // declare (sub-byte and b1 fragments exist in one layout only).
    assert_eq!(lines.len(), 212);
    assert!(MEASURED.contains("release 13.0"));
    assert!(lines
        .iter()
        .all(|l| l.size >= 1 && l.align.is_power_of_two()));
}

/// Each measured type, spelled as measured (after `using namespace
/// nvcuda::wmma;`), sized by the front end as the type of a shared
/// variable: its size is the object's element size times its inner
/// dimensions (an `array<T, N>` is laid out as `T[N]`), its alignment the
/// element's.
#[test]
fn every_measured_size_and_alignment_is_the_front_ends() {
    let lines = measured();
    let mut src = String::from("using namespace nvcuda::wmma;\n__global__ void k() {\n");
    for (i, l) in lines.iter().enumerate() {
        src.push_str(&format!("    __shared__ {} t{i}[1];\n", l.ty));
    }
    src.push_str("}\n");
    let a = run(&src);
    let k = &a.program.kernels[0];
    let mut wrong = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let name = format!("t{i}");
        let o = k.objects.iter().find(|o| o.name == name).unwrap();
        let inner: Option<u64> = o.dims[1..].iter().copied().product();
        let got = inner.map(|n| (o.elem_size * n, o.elem_align));
        // A zero-length array is sized by neither library alike
        // (`std::array<float, 0>` is 1 byte, `cuda::std::array<float, 0>`
        // 4): it stays unknown (no element size) rather than guessed.
        let expect = if l.ty.ends_with(",0>") {
            Some((0, 1))
        } else {
            Some((l.size, l.align))
        };
        if got != expect {
            wrong.push(format!("{}: front end {got:?}, measured {expect:?}", l.ty));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The template arguments of a measured `fragment<…>` line as the table
/// reads them: integers, and types known by their spelling alone.
fn fragment_args(spelled: &str) -> Vec<(String, Option<i64>)> {
    let inner = spelled
        .strip_prefix("fragment<")
        .and_then(|s| s.strip_suffix('>'))
        .unwrap();
    inner
        .split(',')
        .map(|a| (a.to_string(), a.parse().ok()))
        .collect()
}

#[test]
fn every_measured_fragment_has_its_num_elements() {
    let mut checked = 0;
    for l in measured().iter().filter(|l| l.ty.starts_with("fragment<")) {
        let parsed = fragment_args(&l.ty);
        let tys: Vec<Ty> = parsed
            .iter()
            .map(|(text, _)| Ty::Unknown(text.clone()))
            .collect();
        let args: Vec<Arg> = parsed
            .iter()
            .zip(&tys)
            .map(|((text, v), t)| match v {
                Some(v) => Arg::Value(*v),
                None => Arg::Type(t, text),
            })
            .collect();
        let f =
            cuda_types::fragment(&args).unwrap_or_else(|| panic!("{} is not in the table", l.ty));
        assert_eq!(
            (f.size, f.align, f.num_elements as i64),
            (l.size, l.align, l.num_elements),
            "{}",
            l.ty
        );
        checked += 1;
    }
    assert_eq!(checked, 75);
}

/// The table keys fragments without their layout: measured, the layout
/// changes neither size, alignment nor element count.
#[test]
fn a_fragments_layout_changes_nothing_measured() {
    let lines = measured();
    let mut pairs = 0;
    for l in lines.iter().filter(|l| l.ty.contains(",row_major>")) {
        let col = l.ty.replace(",row_major>", ",col_major>");
        if let Some(c) = lines.iter().find(|c| c.ty == col) {
            assert_eq!(
                (l.size, l.align, l.num_elements),
                (c.size, c.align, c.num_elements),
                "{}",
                l.ty
            );
            pairs += 1;
        }
    }
    assert_eq!(pairs, 28);
}

/// The measured size and alignment of `ty`.
fn size_align(ty: &str) -> (u64, u64) {
    let l = measured().into_iter().find(|l| l.ty == ty).unwrap();
    (l.size, l.align)
}

/// The reports of the accesses to `array` by `op`, in source order.
fn reports<'a>(a: &'a FileAnalysis, array: &str, op: Op) -> Vec<&'a AccessReport> {
    let found: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.array == array && r.op == op)
        .collect();
    assert!(!found.is_empty(), "no {op:?} of `{array}`");
    found
}

/// Each lane's byte offset in the worst warp of a report.
fn lanes(r: &AccessReport) -> Vec<i64> {
    let w = r
        .worst
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", r.unknown_reason));
    w.lanes.iter().map(|l| l.unwrap()).collect()
}

/// Distinct 32-byte sectors a warp touches (lanes at `offsets`, each
/// `width` bytes, from a base aligned to a sector).
fn sectors(offsets: &[i64], width: i64) -> f64 {
    let mut s: Vec<i64> = offsets
        .iter()
        .flat_map(|o| [o.div_euclid(32), (o + width - 1).div_euclid(32)])
        .collect();
    s.sort_unstable();
    s.dedup();
    s.len() as f64
}

fn global_sectors(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(warplint_analyzer::symbolic::Cost::Global(g)) => g.sectors,
        other => panic!("not a global cost: {other:?} ({:?})", r.unknown_reason),
    }
}

/// A `curandState` copied from global memory into a shared array (the
/// shape of the curand samples: one state per thread): global memory moves
/// it in pieces as wide as its alignment (8), and the shared array, which
/// nvcc places 16-byte aligned, in 16-byte pieces; lane `l`'s piece `j` at
/// `l * sizeof + j * width` (48 and 8 measured; the pieces are nvcc 13.0's:
/// six `LDG.E.64` and three `STS.128`, `fixtures/sass/curand_copy.gi.sass`).
/// Before the table the element size was unknown (`type-size`).
#[test]
fn a_shared_curand_state_array_is_strided_by_its_measured_size() {
    let (size, align) = size_align("curandState");
    let a = run(r#"
__global__ void init(curandState *states) {
    __shared__ curandState s[64];
    s[threadIdx.x] = states[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    states[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];
}
int main() { init<<<4, 64>>>(0); }
"#);
    for (array, op, width) in [("s", Op::Store, 16), ("states", Op::Load, align)] {
        let rs = reports(&a, array, op);
        assert_eq!(
            rs.len() as u64,
            size / width,
            "{array}: one access per piece"
        );
        for (j, r) in rs.iter().enumerate() {
            assert_eq!(
                r.status,
                Status::Exact,
                "{array} {j}: {:?}",
                r.unknown_reason
            );
            assert_eq!(u64::from(r.width), width);
            let l = lanes(r);
            for (lane, off) in l.iter().enumerate() {
                assert_eq!(*off - l[0], lane as i64 * size as i64);
            }
            assert_eq!(l[0] % size as i64, (j as u64 * width) as i64);
        }
    }
    // 32 lanes 48 bytes apart, 8 bytes each: the sectors a warp's piece
    // touches, counted from first principles.
    let r = reports(&a, "states", Op::Load)[0];
    assert_eq!(global_sectors(r), sectors(&lanes(r), align as i64));
}

/// An `__nv_fp8x4_e4m3` array (4 bytes, 4-aligned: one 32-bit access a
/// lane, 128 contiguous bytes a warp, 4 sectors) and a
/// `cuda::std::array<float, 4>` array read one float at a time (16 bytes a
/// lane: 16 sectors for 32 lanes).
#[test]
fn fp8_quads_and_arrays_of_floats_are_sized_in_global_memory() {
    let (q, _) = size_align("__nv_fp8x4_e4m3");
    let (arr, _) = size_align("cuda::std::array<float,4>");
    let a = run(r#"
__global__ void k(const __nv_fp8x4_e4m3 *in, __nv_fp8x4_e4m3 *out,
                  const cuda::std::array<float, 4> *v, float *w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
    w[i] = v[i][2];
}
int main() { k<<<8, 128>>>(0, 0, 0, 0); }
"#);
    let r = reports(&a, "in", Op::Load)[0];
    assert_eq!(u64::from(r.width), q);
    let l = lanes(r);
    assert_eq!(l[1] - l[0], q as i64);
    assert_eq!(global_sectors(r), sectors(&l, q as i64));
    assert_eq!(global_sectors(r), 4.0);
    let r = reports(&a, "v", Op::Load)[0];
    assert_eq!(r.width, 4);
    let l = lanes(r);
    assert_eq!((l[0], l[1] - l[0]), (8, arr as i64));
    assert_eq!(global_sectors(r), sectors(&l, 4));
    assert_eq!(global_sectors(r), 16.0);
}

/// Per-thread arrays of wmma fragments indexed by a loop (`c[i]` in
/// cuda-samples' tensor-core GEMMs, whose shape is spelled with macros)
/// and a per-thread `cuda::std::array<float, 4>`, each also written and read
/// at a data index after the loop (so local memory, `nvcc::registers`):
/// one fragment (measured size and alignment) or one float apart per index.
/// The accumulator's element type is the kernel's template parameter,
/// instantiated as `half` (a half accumulator: not the float one's size).
#[test]
fn per_thread_fragment_and_array_locals_are_sized() {
    let (frag, falign) = size_align("fragment<matrix_a,16,16,16,half,row_major>");
    let (hacc, _) = size_align("fragment<accumulator,16,16,16,half>");
    assert_ne!(hacc, size_align("fragment<accumulator,16,16,16,float>").0);
    let a = run(r#"
#define M 16
#define N 16
#define K 16
using namespace nvcuda;
template <typename T>
__global__ void k(const int *n, float *out) {
    wmma::fragment<wmma::matrix_a, M, N, K, half, wmma::row_major> a[4];
    wmma::fragment<wmma::accumulator, M, N, K, T> c[4];
    cuda::std::array<float, 4> acc;
    for (int i = 0; i < n[0]; i++) {
        wmma::fill_fragment(c[i], 0.0f);
        wmma::load_matrix_sync(a[i], 0, 16);
        acc[i] = out[i];
    }
    a[n[1]] = a[0];
    out[1] = acc[n[2]];
}
int main() { k<half><<<1, 32>>>(0, 0); }
"#);
    let k = &a.program.kernels[0];
    let obj = |n: &str| k.objects.iter().find(|o| o.name == n).unwrap();
    assert_eq!(obj("a").space, Space::Local);
    assert_eq!((obj("a").elem_size, obj("a").elem_align), (frag, falign));
    assert_eq!(obj("c").elem_size, hacc);
    assert_eq!(
        (obj("acc").elem_size, obj("acc").dims.clone()),
        (4, vec![Some(4)])
    );
    // The fragment passed to `load_matrix_sync` is read in pieces as wide
    // as its alignment; before the table, one unknown (`type-size`) access.
    let rs = reports(&a, "a", Op::Load);
    assert_eq!(rs.len() as u64, frag / falign);
    for r in rs.iter().chain(&reports(&a, "acc", Op::Store)) {
        assert_ne!(r.status, Status::Unknown, "{:?}", r.unknown_reason);
    }
    assert!(rs.iter().all(|r| u64::from(r.width) == falign));
    assert_eq!(reports(&a, "acc", Op::Store)[0].width, 4);
}

/// A file's own definition of a name the table knows wins: a project's
/// `struct curandState` (4 bytes), `struct half2` (8) and its own `array`
/// template (laid out as the file defines it: four floats and an int, not
/// `std::array`'s 16 bytes) are not read as CUDA's.
#[test]
fn a_files_own_definition_wins_over_the_table() {
    let a = run(r#"
struct curandState { float seed; };
struct half2 { float x, y; };
template <typename T, int N> struct array { T v[N]; int extra; };
__global__ void k() {
    __shared__ curandState s[8];
    __shared__ half2 p[8];
    __shared__ array<float, 4> t[8];
    __shared__ __half h[8];
}
"#);
    let k = &a.program.kernels[0];
    let obj = |n: &str| k.objects.iter().find(|o| o.name == n).unwrap();
    assert_eq!(obj("s").elem_size, 4);
    assert_eq!(obj("p").elem_size, 8, "the file's half2 is two floats");
    assert_eq!(
        obj("t").elem_size,
        20,
        "the file's own template is sized by its own layout, not as std::array"
    );
    assert_eq!(obj("h").elem_size, size_align("__half").0);
}

/// A struct template aligned by an expression of its arguments
/// (`alignas(sizeof(T) * N)`, as CUTLASS's `AlignedArray` and the Rust
/// front end's lines write it) is laid out with that alignment once the
/// arguments are bound: a `<float, 4>` element is one 16-byte access per
/// lane, a `<float, 2>` one 8-byte access; without the `alignas`, each is
/// moved in 4-byte pieces (its natural alignment).
#[test]
fn a_struct_templates_alignas_is_read_with_its_arguments() {
    let src = |align: &str, n: u32| {
        format!(
            "template <typename T, int N> struct {align} vec {{ T v[N]; }};\n\
             __global__ void k(const vec<float, {n}> *in, vec<float, {n}> *out) {{\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             out[i] = in[i];\n}}\n\
             void run(const vec<float, {n}> *a, vec<float, {n}> *b) {{ k<<<4, 256>>>(a, b); }}\n"
        )
    };
    let widths = |text: &str| -> Vec<u32> {
        let a = run(text);
        reports(&a, "in", Op::Load)
            .iter()
            .map(|r| r.width)
            .collect()
    };
    assert_eq!(widths(&src("alignas(sizeof(T) * N)", 4)), vec![16]);
    assert_eq!(widths(&src("alignas(sizeof(T) * N)", 2)), vec![8]);
    assert_eq!(widths(&src("", 4)), vec![4; 4]);
}
