//! Template kernels whose type parameters no instantiation gives a known
//! type are analysed under each representative type (`float`, `__half`,
//! `double`) and the answers put together: the same for each ("for every
//! type tried"), else the most wasteful with the types it holds for.
//!
//! The oracle is the same kernel instantiated explicitly with each type
//! (`template __global__ void k<float>(…);`), analysed as any instantiated
//! kernel is: the representative answer must be the most wasteful of those,
//! and its condition must name exactly the types that cost that much.

use warplint_analyzer::finding::{Assumption, ForEvery};
use warplint_analyzer::hardware::Modern;
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, AccessReport, Options, Status};

const TYPES: [&str; 3] = ["float", "__half", "double"];

/// A kernel over `T` with a strided shared store, a coalesced global load
/// and, only for 8-byte types, a second strided store.
const KERNEL: &str = r#"
template <typename T>
__global__ void k(const T *in, T *out) {
  __shared__ T s[256 * 4];
  int t = threadIdx.x;
  s[t * 2] = in[blockIdx.x * 256 + t];
  if constexpr (sizeof(T) == 8) {
    s[t * 3] = in[t];
  }
  __syncthreads();
  out[blockIdx.x * 256 + t] = s[t];
}
"#;

fn reports(src: &str) -> Vec<AccessReport> {
    analyze(src.as_bytes(), &Modern, &Options::default()).reports
}

/// The worst warp's n-way degree, or sectors per ideal sector.
fn waste(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        Some(Cost::Global(g)) => g.sectors / g.ideal_sectors,
        other => panic!("no cost: {other:?}"),
    }
}

/// The report of the access at `line`, column `col`, of `kernel`.
fn at<'a>(rs: &'a [AccessReport], kernel: &str, line: u32, col: u32) -> Option<&'a AccessReport> {
    rs.iter()
        .find(|r| r.kernel_name == kernel && r.span.line == line && r.span.column == col)
}

/// Each access of the representative analysis against the explicit
/// instantiations, type by type.
#[test]
fn the_answer_is_the_most_wasteful_type_and_says_which_types() {
    let rep = reports(KERNEL);
    let inst: String = TYPES
        .iter()
        .map(|t| format!("template __global__ void k<{t}>(const {t} *, {t} *);\n"))
        .collect();
    let explicit = reports(&format!("{KERNEL}{inst}"));
    // The accesses: line 6 (store, load), 8 (store, load), 11 (store, load).
    let sites = [(6, 3), (6, 14), (8, 5), (8, 16), (11, 3), (11, 31)];
    for (line, col) in sites {
        let per_type: Vec<Option<f64>> = TYPES
            .iter()
            .map(|t| {
                // An instantiation's name spells `__half` as `half`.
                let name = format!("k<{}>", t.trim_start_matches("__"));
                at(&explicit, &name, line, col).map(waste)
            })
            .collect();
        let r = at(&rep, "k<T>", line, col)
            .unwrap_or_else(|| panic!("no representative report at {line}:{col}"));
        let max = per_type.iter().flatten().copied().fold(f64::MIN, f64::max);
        assert_eq!(waste(r), max, "{line}:{col} {per_type:?}");
        let worst: Vec<String> = TYPES
            .iter()
            .zip(&per_type)
            .filter(|(_, w)| **w == Some(max))
            .map(|(t, _)| t.to_string())
            .collect();
        let condition = r.assumptions.iter().find_map(|a| match a {
            Assumption::TypeCondition {
                when,
                tried,
                params,
                ..
            } => {
                assert_eq!(params, &["T".to_string()]);
                assert_eq!(tried, &TYPES.map(String::from).to_vec());
                Some(when.clone())
            }
            _ => None,
        });
        if worst.len() == TYPES.len() {
            assert_eq!(condition, None, "{line}:{col}");
            assert!(
                r.for_every
                    .iter()
                    .any(|f| matches!(f, ForEvery::Type { .. })),
                "{line}:{col}: {:?}",
                r.for_every
            );
        } else {
            assert_eq!(condition, Some(worst), "{line}:{col} {per_type:?}");
            assert_eq!(r.status, Status::Assumed);
        }
    }
    // The strided store differs between the types (it is the case the
    // test is about), and the 8-byte-only store holds for `double` alone.
    let strided = at(&rep, "k<T>", 6, 3).unwrap();
    assert!(!strided
        .for_every
        .iter()
        .any(|f| matches!(f, ForEvery::Type { .. })));
    let only_double = at(&rep, "k<T>", 8, 5).unwrap();
    assert!(only_double
        .assumptions
        .contains(&Assumption::TypeCondition {
            params: vec!["T".into()],
            kernel: "k".into(),
            when: vec!["double".into()],
            tried: TYPES.map(String::from).to_vec(),
        }));
}

/// A type parameter whose members the kernel names stands for a traits
/// type: no representative stands for it, and what depends on it stays
/// unknown, said as such.
#[test]
fn a_traits_parameter_is_not_represented() {
    let src = r#"
template <typename KT>
__global__ void k(const typename KT::elem *in, float *out) {
  out[threadIdx.x] = in[threadIdx.x * KT::stride];
}
"#;
    let rs = reports(src);
    let load = at(&rs, "k<KT>", 4, 22).expect("the load");
    assert_eq!(load.status, Status::Unknown);
    assert!(load.assumptions.is_empty() && load.for_every.is_empty());
}

/// A launch from a host function template passes the host's own type
/// parameter: no known type, so the representatives stand for it, and the
/// launch's block (256) is kept.
#[test]
fn a_launch_with_the_host_templates_own_type_is_represented() {
    let src = r#"
template <typename T, int mode>
__global__ void fill(T *data) {
  __shared__ T s[512];
  s[threadIdx.x * 2] = data[threadIdx.x];
}
template <typename T, int mode>
void run(T *data) { fill<T, mode><<<4, 256>>>(data); }
"#;
    let rs = reports(src);
    let store = at(&rs, "fill<T, mode>", 5, 3).expect("the shared store");
    assert_eq!(store.block, [256, 1, 1]);
    assert_ne!(store.status, Status::Unknown, "{:?}", store.unknown_reason);
    assert!(store
        .assumptions
        .iter()
        .any(|a| matches!(a, Assumption::TypeCondition { .. })));
}

/// A device function template called without template arguments takes `T`
/// from its `T *` parameter's argument, a shared array passed as the
/// pointer it decays to (cuda-samples' eigenvalues `compactIntervals`):
/// `s[2 * t]` costs 2-way on 4-byte floats (word `2t`: lanes `l` and
/// `l + 16` share a bank) and nothing on 2-byte shorts (byte `4t`, word
/// `t`: one lane a bank); the `T s[]` spelling deduces the same.
#[test]
fn a_device_template_takes_its_type_from_an_array_argument() {
    let src = r#"
template <class T> __device__ void put(T *s) { s[threadIdx.x * 2] = 0; }
template <class T> __device__ void put_arr(T s[]) { s[threadIdx.x * 2] = 0; }
__global__ void k() {
  __shared__ float f[256];
  __shared__ short h[256];
  put(f);
  put(h);
  __syncthreads(); // else nvcc drops the first store, overwritten below
  put_arr(f);
}
void run() { k<<<1, 128>>>(); }
"#;
    let rs = reports(src);
    let ways = |array: &str, line: u32| {
        let r = rs
            .iter()
            .find(|r| r.array == array && r.span.line == line)
            .unwrap_or_else(|| panic!("no store to `{array}` at line {line}"));
        assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
        waste(r)
    };
    assert_eq!(ways("f", 2), 2.0);
    assert_eq!(ways("h", 2), 1.0);
    assert_eq!(ways("f", 3), 2.0);
}

/// A value template parameter that no instantiation gives is analysed as
/// an integer parameter no launch gives: over representative values. The
/// oracle is the kernel instantiated explicitly with each value tried:
/// the answer is the most wasteful of them, and its condition holds for
/// exactly the values that cost that much.
#[test]
fn a_value_template_parameter_no_instantiation_gives_is_varied() {
    let kernel = r#"
template <int S>
__global__ void k(const float *in) {
  __shared__ float s[64 * 4200];
  s[threadIdx.x * S] = in[threadIdx.x];
}
"#;
    let store = |src: &str| -> AccessReport {
        reports(src)
            .into_iter()
            .find(|r| r.array == "s")
            .expect("the store to s")
    };
    let open = store(kernel);
    assert_eq!(open.status, Status::Assumed, "{:?}", open.unknown_reason);
    let condition = open
        .assumptions
        .iter()
        .find_map(|a| match a {
            Assumption::ParamCondition {
                name, when, tried, ..
            } if name == "S" => Some((when.clone(), tried.clone())),
            _ => None,
        })
        .expect("a condition on S");
    let (when, tried) = condition;
    let per_value: Vec<(i64, f64)> = tried
        .iter()
        .map(|&v| {
            let src = format!("{kernel}template __global__ void k<{v}>(const float *);\n");
            (v, waste(&store(&src)))
        })
        .collect();
    let worst = per_value.iter().map(|x| x.1).fold(0.0, f64::max);
    assert_eq!(waste(&open), worst);
    for (v, w) in per_value {
        assert_eq!(when.holds(v), w == worst, "S = {v}: {w} vs {worst}");
    }
}
