//! Launches that host code builds: host function templates that launch
//! kernels, instantiated explicitly (`template void reduce<float>(…);`, as
//! cuda-samples' reduction does), each walked with its template arguments
//! bound so the kernels it launches are instantiated with them; and
//! `cudaLaunchKernelEx` with a configuration assigned field by field (as
//! flashinfer's norm launches do).

use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, AccessReport, Options, Status};

const SRC: &str = r#"
template <class T> __global__ void spread(const T *in) {
    __shared__ T s[64 * 8];
    s[threadIdx.x * 8] = in[threadIdx.x];
}

template <class T> void launch(const T *in) {
    spread<T><<<1, 64>>>(in);
}

template void launch<float>(const float *);
template void launch<double>(const double *);
"#;

fn store<'a>(reports: &'a [AccessReport], kernel: &str) -> &'a AccessReport {
    reports
        .iter()
        .find(|r| r.kernel_name == kernel && r.space == Space::Shared && r.op == Op::Store)
        .unwrap_or_else(|| {
            let names: Vec<_> = reports.iter().map(|r| &r.kernel_name).collect();
            panic!("no shared store in `{kernel}`: {names:?}")
        })
}

#[test]
fn each_explicit_instantiation_of_a_launching_host_template_instantiates_its_kernels() {
    let a = analyze(SRC.as_bytes(), &Modern, &Options::default());
    // float: lane t writes word 8t, bank 8t % 32: four banks, eight lanes
    // each with different words: 8-way.
    let f = store(&a.reports, "spread<float>");
    assert_eq!(f.status, Status::Exact, "{:?}", f.unknown_reason);
    assert_eq!(f.block, [64, 1, 1]);
    match &f.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 8.0),
        other => panic!("{other:?}"),
    }
    // double: 8-byte words at a 64-byte stride; each half-warp (16 lanes)
    // puts lanes on banks 16t % 32 and the next: two bank pairs, eight
    // lanes each: 8 wavefronts per half-warp where 1 is ideal: 8-way.
    let d = store(&a.reports, "spread<double>");
    assert_eq!(d.status, Status::Exact, "{:?}", d.unknown_reason);
    assert_eq!(d.width, 8);
    match &d.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 8.0),
        other => panic!("{other:?}"),
    }
    // Nothing is left with the template parameter unbound.
    assert!(
        a.reports.iter().all(|r| r.status != Status::Unknown),
        "{:?}",
        a.reports
            .iter()
            .map(|r| (&r.kernel_name, &r.unknown_reason))
            .collect::<Vec<_>>()
    );
}

#[test]
fn launch_kernel_ex_takes_the_block_assigned_to_its_configuration() {
    let src = r#"
template <int VEC, typename T>
__global__ void norm_kernel(T *x, int d) {
  __shared__ T s[32 * 4];
  s[threadIdx.x * 4] = x[threadIdx.x];
}

void launch(float *x, int d, cudaStream_t stream) {
  cudaLaunchConfig_t config;
  config.gridDim = 8;
  config.blockDim = dim3(32, 4);
  config.stream = stream;
  auto kernel = norm_kernel<4, float>;
  cudaLaunchKernelEx(&config, kernel, x, d);
}
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    // Block 32x4: a warp is one row of 32 threads; lane t writes word 4t,
    // bank 4t % 32: eight banks, four lanes each: 4-way.
    let r = store(&a.reports, "norm_kernel<4, float>");
    assert_eq!(r.block, [32, 4, 1]);
    assert_eq!(r.grid, [8, 1, 1]);
    assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
    match &r.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 4.0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_launch_whose_block_is_not_known_takes_the_launch_bounds_of_a_one_dimensional_kernel() {
    // The block is a macro the build defines (flashinfer's kda decode):
    // the kernel's __launch_bounds__(128) gives [128, 1, 1], not the 2-D
    // default, since it reads only threadIdx.x. Lane l writes word
    // 2(32w + l): lanes l and l + 16 share bank 2l % 32 with different
    // words: 2-way.
    let src = r#"
__global__ void __launch_bounds__(128) k(float *x) {
  __shared__ float s[2 * 128];
  int t = threadIdx.x;
  s[t * 2] = x[t];
}
void run(float *x) {
  const dim3 block(LAUNCH_THREADS, 1, 1);
  k<<<1, block>>>(x);
}
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let r = store(&a.reports, "k");
    assert_eq!(r.block, [128, 1, 1]);
    let launch = &a.program.kernels[0].launches[0];
    assert_eq!(
        launch.origin,
        warplint_analyzer::ir::LaunchOrigin::LaunchBounds
    );
    match &r.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 2.0),
        other => panic!("{other:?}"),
    }
}

/// A host function that launches only through a macro used in its body
/// (`RUN(k, x, 2)`, the launch in the macro, not in the function's text)
/// is walked for launches; a macro that expands to statements and is used
/// with no `;` before the next statement (`LAUNCH(64) break;`, as
/// LeetCUDA's dispatch macros write) is read as a statement; and a block
/// computed from the switched value (`dim3 block((K) / 8)` under `case
/// 64:` of `switch ((K))`) takes each case's value: one instantiation per
/// case, each with its own block.
#[test]
fn launches_through_macros_in_host_bodies_take_each_cases_block() {
    let src = r#"
#define RUN(kern, ...) kern<<<1, 32>>>(__VA_ARGS__)
#define LAUNCH(K) \
  spread<(K) / 8><<<grid, block>>>(x, (K));
#define DISPATCH(N, K) \
  dim3 block((K) / 8); \
  dim3 grid((N)); \
  switch ((K)) { \
  case 64: \
    LAUNCH(64) break; \
  case 256: \
    LAUNCH(256) break; \
  default: \
    break; \
  }
__global__ void strided(float *x, int n) { x[threadIdx.x * n] = 0; }
template <int T> __global__ void spread(float *x, int K) {
    __shared__ float s[T * 64];
    s[threadIdx.x * 8] = x[threadIdx.x];
}
void run(float *x, int n) {
    RUN(strided, x, 2);
}
void dispatch(float *x, int rows, int cols) {
    const int N = rows;
    const int K = cols;
    DISPATCH(N, K)
}
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let strided = a
        .reports
        .iter()
        .find(|r| r.kernel_name == "strided")
        .expect("strided");
    assert_eq!(strided.block, [32, 1, 1]);
    assert_eq!(strided.status, Status::Exact, "{:?}", strided.assumptions);
    for (kernel, block) in [("spread<8>", 8), ("spread<32>", 32)] {
        let s = store(&a.reports, kernel);
        assert_eq!(s.block, [block, 1, 1], "{kernel}");
    }
}

/// An integer argument that the conditions around the launch fix takes
/// that value (`topk` under `if (experts == 256 && topk == 8)`, a
/// conjunction of equalities), through `<<<…>>>` and `cudaLaunchKernelEx`
/// alike; elsewhere it stays unknown (the store is analysed over the
/// spread of sizes and says so).
#[test]
fn launch_arguments_take_the_values_their_conditions_fix() {
    let src = r#"
__global__ void route(unsigned char *out, int topk) {
    if (threadIdx.x < topk) out[blockIdx.x * 512 + threadIdx.x * 16] = 1;
}
__global__ void route_ex(unsigned char *out, int topk) {
    if (threadIdx.x < topk) out[blockIdx.x * 512 + threadIdx.x * 16] = 1;
}
void launch(unsigned char *out, int experts, int topk) {
    if (experts == 256 && topk == 8) {
        route<<<4, 32>>>(out, topk);
        cudaLaunchConfig_t config;
        config.gridDim = 4;
        config.blockDim = 32;
        cudaLaunchKernelEx(&config, route_ex, out, topk);
    }
}
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    for kernel in ["route", "route_ex"] {
        let r = a
            .reports
            .iter()
            .find(|r| r.kernel_name == kernel)
            .expect(kernel);
        // Eight lanes, 16 bytes apart: 128 bytes, 4 sectors, no assumption.
        assert_eq!(r.status, Status::Exact, "{kernel}: {:?}", r.assumptions);
        match &r.cost {
            Some(Cost::Global(g)) => assert_eq!(g.sectors, 4.0, "{kernel}"),
            other => panic!("{kernel}: {other:?}"),
        }
    }
}
