//! The engine does not run again a warp or block it proves to cost what
//! an earlier one did (`symbolic/collapse.rs`). Random kernels (indices
//! over `threadIdx`, `blockIdx`, parameters a launch gives or not, loop
//! variables, with divisions, shifts, selects and short circuits; guards
//! and loop bounds over the same) are analysed with and without that, on
//! every memory model: every report must be the same, field by field
//! (costs, executions, the worst warp, assumptions, lowest offset).
//! The same for runs of a loop's iterations that cost what the first run
//! did (`symbolic/stride.rs`): strided loops of every shape, with and
//! without.

use proptest::prelude::*;
use warplint_analyzer::finding::Assumption;
use warplint_analyzer::hardware::Arch;
use warplint_analyzer::{analyze, FileAnalysis, Options};

#[derive(Clone, Debug)]
enum E {
    Leaf(&'static str),
    C(i64),
    Bin(&'static str, Box<E>, Box<E>),
    Select(Box<E>, Box<E>, Box<E>),
}

impl E {
    fn c(&self) -> String {
        match self {
            E::Leaf(s) => (*s).into(),
            E::C(v) => v.to_string(),
            E::Bin(op, a, b) => format!("({} {op} {})", a.c(), b.c()),
            E::Select(c, a, b) => format!("(({}) ? {} : {})", c.c(), a.c(), b.c()),
        }
    }
}

const LEAVES: [&str; 12] = [
    "tx",
    "ty",
    "bx",
    "by",
    "i",
    "n",
    "m",
    "(int)blockDim.x",
    "(int)gridDim.x",
    "lane",
    "(by + 8)",
    "(tx / 32 + 8)",
];

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        4 => (0..LEAVES.len()).prop_map(|i| E::Leaf(LEAVES[i])),
        2 => (-3i64..40).prop_map(E::C),
        1 => prop_oneof![Just(8i64), Just(32), Just(64)].prop_map(E::C),
    ];
    leaf.prop_recursive(3, 10, 2, |inner| {
        let op = prop_oneof![
            4 => Just("+"),
            2 => Just("-"),
            4 => Just("*"),
            1 => Just("/"),
            1 => Just("%"),
            1 => Just("&"),
            1 => Just("^"),
            1 => Just("<<"),
            1 => Just(">>"),
            1 => Just("&&"),
            1 => Just("||"),
            1 => Just("<"),
        ];
        prop_oneof![
            6 => (op, inner.clone(), inner.clone())
                .prop_map(|(o, a, b)| E::Bin(o, Box::new(a), Box::new(b))),
            1 => (inner.clone(), inner.clone(), inner)
                .prop_map(|(c, a, b)| E::Select(Box::new(c), Box::new(a), Box::new(b))),
        ]
    })
}

#[derive(Debug)]
struct Case {
    shared: E,
    global: E,
    guard: Option<E>,
    bound: &'static str,
    block: [i64; 2],
    grid: Option<[i64; 2]>,
    m_known: bool,
    ty: &'static str,
}

fn case() -> impl Strategy<Value = Case> {
    (
        expr(),
        expr(),
        proptest::option::of(expr()),
        prop_oneof![
            Just("3"),
            Just("n / 256"),
            Just("m % 5"),
            Just("tx % 3 + 1")
        ],
        prop_oneof![
            Just([32i64, 1]),
            Just([128, 1]),
            Just([256, 1]),
            Just([16, 16]),
            Just([32, 8]),
            Just([48, 2]),
            Just([100, 1]),
        ],
        proptest::option::of(prop_oneof![Just([2i64, 2]), Just([3, 1]), Just([40, 3])]),
        any::<bool>(),
        prop_oneof![Just("float"), Just("double"), Just("char"), Just("float4")],
    )
        .prop_map(
            |(shared, global, guard, bound, block, grid, m_known, ty)| Case {
                shared,
                global,
                guard,
                bound,
                block,
                grid,
                m_known,
                ty,
            },
        )
}

fn source(c: &Case) -> String {
    let guard = match &c.guard {
        Some(g) => format!("if ({})", g.c()),
        None => String::new(),
    };
    let grid = match c.grid {
        Some([x, y]) => format!("dim3({x}, {y})"),
        None => "grid".into(),
    };
    let m = if c.m_known { "7" } else { "argc" };
    format!(
        "__global__ void k({t} *g, int n, int m)\n{{\n    __shared__ {t} s[4096];\n    \
         int tx = threadIdx.x;\n    int ty = threadIdx.y;\n    int bx = blockIdx.x;\n    \
         int by = blockIdx.y;\n    int lane = threadIdx.x % 32;\n    \
         for (int i = 0; i < {bound}; i++) {guard} {{\n        {t} v = s[({si}) & 4095];\n        \
         g[{gi}] = v;\n    }}\n}}\n\
         int main(int argc, char **argv) {{\n    dim3 grid(argc, 2);\n    \
         k<<<{grid}, dim3({bx}, {by})>>>(0, argc, {m});\n    return 0;\n}}\n",
        t = c.ty,
        bound = c.bound,
        si = c.shared.c(),
        gi = c.global.c(),
        bx = c.block[0],
        by = c.block[1],
    )
}

/// `src` analysed for `arch` with collapsing on, then off.
fn with_and_without(src: &str, arch: &str) -> (FileAnalysis, FileAnalysis) {
    with_and_without_by(src, arch, |o| o.engine.collapse = false)
}

/// `src` analysed for `arch` with the default options, then with `off`.
fn with_and_without_by(
    src: &str,
    arch: &str,
    off: impl Fn(&mut Options),
) -> (FileAnalysis, FileAnalysis) {
    let model = Arch::parse(arch).unwrap().model().unwrap();
    let mut options = Options::default();
    let fast = analyze(src.as_bytes(), model.as_ref(), &options);
    off(&mut options);
    let slow = analyze(src.as_bytes(), model.as_ref(), &options);
    (fast, slow)
}

/// Every report of the two analyses of `src` for `arch` is the same,
/// field by field.
fn same_reports(
    src: &str,
    arch: &str,
    (fast, slow): (FileAnalysis, FileAnalysis),
) -> Result<(), TestCaseError> {
    prop_assert_eq!(fast.reports.len(), slow.reports.len());
    for (f, s) in fast.reports.iter().zip(&slow.reports) {
        prop_assert_eq!(format!("{f:?}"), format!("{s:?}"), "{}\n{}", arch, src);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn collapsed_warps_report_what_running_them_reports(c in case()) {
        let src = source(&c);
        for arch in ["sm_90", "sm_35", "sm_20", "sm_13", "sm_10"] {
            same_reports(&src, arch, with_and_without(&src, arch))?;
        }
    }
}

#[derive(Debug)]
struct Strided {
    shared: E,
    global: E,
    coeff: &'static str,
    guard: Option<E>,
    start: &'static str,
    bound: &'static str,
    step: &'static str,
    outer: bool,
    block: [i64; 2],
    ty: &'static str,
}

fn strided() -> impl Strategy<Value = Strided> {
    let pick = |xs: &'static [&'static str]| (0..xs.len()).prop_map(move |i| xs[i]);
    (
        (
            expr(),
            expr(),
            pick(&["1", "2", "32", "n", "(tx & 1)", "-1"]),
        ),
        proptest::option::of(expr()),
        pick(&["0", "tx", "lane", "tx * 2", "n % 7", "by"]),
        pick(&["300", "n", "n / 3 + 40", "tx % 3 + 200", "m * 64", "4000"]),
        pick(&["1", "32", "(int)blockDim.x", "3", "m % 4 + 1", "n"]),
        any::<bool>(),
        prop_oneof![Just([64i64, 1]), Just([32, 2]), Just([100, 1])],
        prop_oneof![Just("float"), Just("char"), Just("double"), Just("float4")],
    )
        .prop_map(
            |((shared, global, coeff), guard, start, bound, step, outer, block, ty)| Strided {
                shared,
                global,
                coeff,
                guard,
                start,
                bound,
                step,
                outer,
                block,
                ty,
            },
        )
}

fn strided_source(c: &Strided) -> String {
    let guard = match &c.guard {
        Some(g) => format!("if ({})", g.c()),
        None => String::new(),
    };
    let outer = if c.outer {
        "for (int j = 0; j < 3; j++)"
    } else {
        ""
    };
    format!(
        "__global__ void k({t} *g, int n, int m)\n{{\n    __shared__ {t} s[4096];\n    \
         int tx = threadIdx.x;\n    int ty = threadIdx.y;\n    int bx = blockIdx.x;\n    \
         int by = blockIdx.y;\n    int lane = threadIdx.x % 32;\n    float acc = 0.0f;\n    \
         {outer} for (int i = {start}; i < {bound}; i += {step}) {guard} {{\n        \
         acc += 1.0f;\n        {t} v = s[({si}) + i * {c}];\n        g[({gi}) + i * {c}] = v;\n    }}\n}}\n\
         int main(int argc, char **argv) {{\n    \
         k<<<dim3(2, 2), dim3({bx}, {by})>>>(0, argc, argc);\n    return 0;\n}}\n",
        t = c.ty,
        start = c.start,
        bound = c.bound,
        step = c.step,
        c = c.coeff,
        si = c.shared.c(),
        gi = c.global.c(),
        bx = c.block[0],
        by = c.block[1],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn skipped_iterations_report_what_running_them_reports(c in strided()) {
        let src = strided_source(&c);
        for arch in ["sm_90", "sm_35", "sm_13"] {
            same_reports(&src, arch, with_and_without_by(&src, arch, |o| o.engine.stride = false))?;
        }
    }
}

/// A parameter whose coefficient is a multiple of the period in the first
/// block (`(0 + 8) * 4` bytes) and not in the second (`9 * 4`): the second
/// block reads it where it matters, so it is stated (the second block is
/// aligned only for `n` a multiple of 8: a condition on `n`), although the
/// second block's addresses are the first's moved by `n * 4` bytes.
#[test]
fn an_assumption_only_a_later_block_needs_is_still_stated() {
    let src = "__global__ void k(float *g, int n)\n{\n    g[(blockIdx.y + 8) * n + threadIdx.x] = 0.0f;\n}\n\
               int main(int argc, char **argv) { k<<<dim3(1, 2), 256>>>(0, argc); return 0; }\n";
    let (fast, slow) = with_and_without(src, "sm_90");
    let said = |a: &FileAnalysis| {
        a.reports[0]
            .assumptions
            .iter()
            .any(|s| matches!(s, Assumption::ParamCondition { name, .. } if name == "n"))
    };
    assert!(said(&slow), "{:?}", slow.reports[0].assumptions);
    assert!(said(&fast), "{:?}", fast.reports[0].assumptions);
}

/// `((i & 1) - blockIdx.y) * n` is zero in every lane at `i = 0` in the
/// first block and at `i = 1` in the second: each block skips reading `n`
/// at another iteration, so where the lowest offset is recorded (only
/// executions that read no assumed value count) differs, although the
/// second block's addresses are the first's moved by `-n * 4` bytes.
#[test]
fn a_short_circuit_at_another_iteration_keeps_a_block_from_standing_for_another() {
    let src = "__global__ void k(float *g, int n)\n{\n    for (int i = 0; i < 2; i++)\n        \
               g[((i & 1) - (int)blockIdx.y) * n + (int)threadIdx.x - 1] = 0.0f;\n}\n\
               int main(int argc, char **argv) { k<<<dim3(1, 2), 32>>>(0, argc); return 0; }\n";
    let (fast, slow) = with_and_without(src, "sm_90");
    assert_eq!(
        slow.reports[0].min_offset,
        Some(-4),
        "{:?}",
        slow.reports[0]
    );
    assert_eq!(format!("{:?}", fast.reports), format!("{:?}", slow.reports));
}

/// Addresses near the ends of the 64-bit range: warps whose shift would
/// overflow are run, not replayed, and nothing panics (debug builds check
/// overflow).
#[test]
fn huge_offsets_are_run_not_shifted() {
    for (index, n) in [
        ("(long long)threadIdx.x * n + 9223372036854775000LL", "argc"),
        (
            "(long long)blockIdx.x * 4611686018427387904LL + threadIdx.x",
            "argc",
        ),
        ("(long long)threadIdx.y * -9223372036854775807LL - 2", "3"),
        ("(long long)threadIdx.y * (-9223372036854775807LL - 1)", "3"),
    ] {
        let src = format!(
            "__global__ void k(char *g, long long n)\n{{\n    g[{index}] = 0;\n}}\n\
             int main(int argc, char **argv) {{ k<<<dim3(4, 2), dim3(32, 4)>>>(0, {n}); return 0; }}\n"
        );
        for arch in ["sm_90", "sm_20"] {
            let (fast, slow) = with_and_without(&src, arch);
            assert_eq!(
                format!("{:?}", fast.reports),
                format!("{:?}", slow.reports),
                "{src}"
            );
        }
    }
}
