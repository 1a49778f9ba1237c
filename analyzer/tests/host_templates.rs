//! Host function templates that launch kernels, instantiated explicitly
//! (`template void reduce<float>(…);`, as cuda-samples' reduction does):
//! each instantiation is walked with its template arguments bound, so the
//! kernels it launches are instantiated with them.

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
