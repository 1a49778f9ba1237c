//! The whole-project index as the analyzer sees it: a file's launch sites
//! as plain data ([`launch_sites`]), and another file's sites giving the
//! launch of a kernel this file defines but does not launch
//! (`FrontendOptions::project_launches`).

use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{LaunchOrigin, ProjectLaunch, SiteAt, SiteRecord, TemplateArg};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, launch_sites, FileAnalysis, Header, Options, Status};

/// A kernel header: one store whose bank conflicts depend on the block
/// (`t[i][0]` with rows of 32 floats: every lane of a warp hits bank 0).
const HEADER: &str = "#pragma once\n\
    __global__ void scale(float *a, int n) {\n\
        __shared__ float t[1024][32];\n\
        t[threadIdx.x][0] = a[threadIdx.x];\n\
    }\n";

fn header() -> Header {
    Header {
        name: "k.cuh".into(),
        path: "src/k.cuh".into(),
        text: HEADER.as_bytes().to_vec(),
    }
}

/// `text` analysed with `sites` of other files.
fn with_sites(text: &str, sites: Vec<ProjectLaunch>) -> FileAnalysis {
    let mut o = Options::default();
    o.frontend.project_launches = sites;
    analyze(text.as_bytes(), &Modern, &o)
}

/// The site `main.cu:7` launching `kernel` with `block` (template `targs`).
fn site(kernel: &str, targs: Vec<TemplateArg>, block: [u64; 3]) -> ProjectLaunch {
    ProjectLaunch {
        site: SiteRecord {
            kernel: kernel.into(),
            targs,
            grid: Some([1, 1, 1]),
            block: Some(block),
            args: vec![None, Some(5)],
            offset_args: vec![false, false],
            span: Default::default(),
            kernel_file: Some(1),
            host: None,
        },
        at: SiteAt {
            path: "src/main.cu".into(),
            line: 7,
        },
    }
}

#[test]
fn a_file_records_its_launch_sites_and_which_file_defines_the_kernel() {
    let main = "#include \"k.cuh\"\n\
                __global__ void local(float *a) { a[threadIdx.x] = 0; }\n\
                __global__ void declared(float *a);\n\
                void run(float *a) {\n\
                    scale<<<2, 64>>>(a, 9);\n\
                    local<<<1, dim3(32, 4)>>>(a);\n\
                    declared<<<1, 128>>>(a);\n\
                }\n";
    let mut o = Options::default();
    o.frontend.headers = vec![header()];
    let sites = launch_sites(main.as_bytes(), &o.frontend);
    let by = |k: &str| {
        sites
            .iter()
            .find(|s| s.kernel == k)
            .unwrap_or_else(|| panic!("no site of {k}: {sites:?}"))
    };
    // `scale` is defined in the header (file 1), `local` in the file itself
    // (file 0); `declared` only declared: any definition of it may be it.
    assert_eq!(by("scale").kernel_file, Some(1));
    assert_eq!(by("scale").block, Some([64, 1, 1]));
    assert_eq!(by("scale").grid, Some([2, 1, 1]));
    assert_eq!(by("scale").args, vec![None, Some(9)]);
    assert_eq!(by("scale").span.line, 5);
    assert_eq!(by("local").kernel_file, Some(0));
    assert_eq!(by("local").block, Some([32, 4, 1]));
    assert_eq!(by("declared").kernel_file, None);
    // Only the sites: nothing is lowered.
    let a = analyze(main.as_bytes(), &Modern, &o);
    assert_eq!(a.program.launch_sites, sites);
}

#[test]
fn a_header_alone_takes_the_block_of_a_launch_in_another_file() {
    // Alone, the header's kernel runs under the 1-D default (256 threads,
    // an assumption); with the project's launch it runs under 64x1x1,
    // from the site, and says where that is.
    let alone = with_sites(HEADER, Vec::new());
    let k = &alone.program.kernels[0];
    assert_eq!(k.launches[0].origin, LaunchOrigin::Default);
    let a = with_sites(HEADER, vec![site("scale", Vec::new(), [64, 1, 1])]);
    let k = &a.program.kernels[0];
    assert_eq!(k.launches.len(), 1);
    let l = &k.launches[0];
    assert_eq!((l.block, l.origin), ([64, 1, 1], LaunchOrigin::LaunchSite));
    assert_eq!(l.params, vec![None, Some(5)]);
    assert_eq!(
        l.elsewhere,
        Some(SiteAt {
            path: "src/main.cu".into(),
            line: 7
        })
    );
    let store = a.reports.iter().find(|r| r.array == "t").expect("store");
    assert_eq!(store.status, Status::Exact);
    assert_eq!(store.block, [64, 1, 1]);
    // 32 lanes, one bank: 32 wavefronts.
    match &store.cost {
        Some(Cost::Shared(s)) => assert_eq!(s.ways, 32.0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_file_that_launches_the_kernel_keeps_its_own_launches() {
    let text = format!("{HEADER}void run(float *a) {{ scale<<<1, 128>>>(a, 3); }}\n");
    let a = with_sites(&text, vec![site("scale", Vec::new(), [64, 1, 1])]);
    let k = &a.program.kernels[0];
    assert_eq!(k.launches.len(), 1);
    assert_eq!(k.launches[0].block, [128, 1, 1]);
    assert_eq!(k.launches[0].elsewhere, None);
}

#[test]
fn a_template_kernel_is_instantiated_with_another_files_arguments() {
    // `s[threadIdx.x * 4]`: for 4-byte `float`s lane l is at bank 4l mod
    // 32, 8 banks of 4 lanes each (4-way); for 1-byte `char`s at byte 4l,
    // a bank each (no conflict).
    let text = "template <typename T, int N>\n\
                __global__ void tk(T *a) {\n\
                    __shared__ T s[N];\n\
                    s[threadIdx.x * 4] = a[threadIdx.x];\n\
                }\n";
    let args = |t: &str| vec![TemplateArg::Type(t.into()), TemplateArg::Value(256)];
    let a = with_sites(
        text,
        vec![
            site("tk", args("float"), [64, 1, 1]),
            site("tk", args("char"), [64, 1, 1]),
        ],
    );
    let names: Vec<&str> = a
        .program
        .kernels
        .iter()
        .map(|k| k.display_name.as_str())
        .collect();
    assert_eq!(names, ["tk<float, 256>", "tk<char, 256>"]);
    let ways: Vec<f64> = a
        .reports
        .iter()
        .filter(|r| r.array == "s")
        .map(|r| {
            assert_eq!(r.status, Status::Exact, "{r:?}");
            match &r.cost {
                Some(Cost::Shared(s)) => s.ways,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert_eq!(ways, [4.0, 1.0]);
}

#[test]
fn a_type_the_file_does_not_know_stays_a_type_whose_size_is_unknown() {
    let text = "template <typename T>\n\
                __global__ void tk(T *a) { a[threadIdx.x] = a[0]; }\n";
    let a = with_sites(
        text,
        vec![site(
            "tk",
            vec![TemplateArg::Type("Elsewhere".into())],
            [64, 1, 1],
        )],
    );
    let r = a.reports.iter().find(|r| r.array == "a").expect("access");
    assert_eq!(r.status, Status::Unknown);
    assert_eq!(
        r.unknown_reason.as_ref().map(|u| u.kind()),
        Some("type-size")
    );
}

#[test]
fn file_scope_macro_uses_that_define_launching_functions_give_launch_sites() {
    // Token pasting names the kernel; the uses follow one another with no
    // `;` (the parser reads them as an error); the second macro's chevrons
    // are spaced as a code formatter leaves them.
    let text = "#define TILE 16\n\
                __global__ void k_a(float *x) { x[threadIdx.y * TILE + threadIdx.x] = 0; }\n\
                __global__ void k_b(float *x) { x[threadIdx.x] = 0; }\n\
                #define BIND(tag, T) \\\n\
                  void run_##tag(T *x) { dim3 block(TILE, TILE); \\\n\
                    k_##tag<<<1, block>>>(x); }\n\
                #define BIND1(tag, T, n) \\\n\
                  void run1_##tag(T *x) { k_##tag < < < 1, n * 32 > > > (x); }\n\
                BIND(a, float)\n\
                BIND1(b, float, 4)\n";
    let a = analyze(text.as_bytes(), &Modern, &Options::default());
    let launch = |name: &str| {
        let k = a
            .program
            .kernels
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"));
        (k.launches[0].block, k.launches[0].origin)
    };
    assert_eq!(launch("k_a"), ([16, 16, 1], LaunchOrigin::LaunchSite));
    assert_eq!(launch("k_b"), ([128, 1, 1], LaunchOrigin::LaunchSite));
    // Reported at the macro's use.
    let lines: Vec<u32> = a.program.launch_sites.iter().map(|s| s.span.line).collect();
    assert_eq!(lines, [9, 10]);
}

#[test]
fn launches_through_kernel_variables_and_the_runtime_launch_api() {
    let text = "template <int N> __global__ void tk(float *a) {\n\
                    __shared__ float s[N]; s[threadIdx.x] = a[0];\n\
                }\n\
                __global__ void plain(float *a) { a[threadIdx.x] = 0; }\n\
                void run(float *a) {\n\
                    auto kernel = tk<128>;\n\
                    kernel<<<1, 64>>>(a);\n\
                }\n\
                void run_api(float *a) {\n\
                    void *args[] = {&a};\n\
                    cudaLaunchKernel((void *)plain, dim3(2), dim3(32, 4), args, 0, 0);\n\
                    auto k2 = &tk<256>;\n\
                    cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(k2), 1, 96, args, 0, 0);\n\
                }\n";
    let a = analyze(text.as_bytes(), &Modern, &Options::default());
    let mut got: Vec<(String, [u64; 3], LaunchOrigin)> = a
        .program
        .kernels
        .iter()
        .flat_map(|k| {
            k.launches
                .iter()
                .map(|l| (k.display_name.clone(), l.block, l.origin))
        })
        .collect();
    got.sort_by(|x, y| x.0.cmp(&y.0));
    let site = LaunchOrigin::LaunchSite;
    assert_eq!(
        got,
        [
            ("plain".to_string(), [32, 4, 1], site),
            ("tk<128>".to_string(), [64, 1, 1], site),
            ("tk<256>".to_string(), [96, 1, 1], site),
        ]
    );
}

#[test]
fn an_explicit_instantiation_instantiates_a_kernel_and_travels_to_other_files() {
    let text = "template <typename T, int N> __global__ void tk(T *a) {\n\
                    __shared__ T s[N]; s[threadIdx.x * 4] = a[0];\n\
                }\n\
                template __global__ void tk<float, 256>(float *a);\n";
    let a = analyze(text.as_bytes(), &Modern, &Options::default());
    let k: Vec<(&str, LaunchOrigin)> = a
        .program
        .kernels
        .iter()
        .map(|k| (k.display_name.as_str(), k.launches[0].origin))
        .collect();
    // Instantiated with its arguments; no launch says a block, and the
    // conflict is the same in every common block shape tried: exact.
    assert_eq!(k, [("tk<float, 256>", LaunchOrigin::Default)]);
    let s = a.reports.iter().find(|r| r.array == "s").expect("store");
    assert_eq!(s.status, Status::Exact);
    match &s.cost {
        Some(Cost::Shared(c)) => assert_eq!(c.ways, 4.0),
        other => panic!("{other:?}"),
    }
    // As a site for the file that defines the kernel.
    let sites = launch_sites(text.as_bytes(), &Options::default().frontend);
    assert_eq!(sites.len(), 1);
    assert_eq!(
        sites[0].targs,
        [TemplateArg::Type("float".into()), TemplateArg::Value(256)]
    );
    assert_eq!((sites[0].block, sites[0].kernel_file), (None, Some(0)));
}
