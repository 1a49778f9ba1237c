//! Every named budget of `budget.rs`, run out on purpose: the analysis
//! ends, and what it could not finish is `unknown` or a note that names
//! the budget (so a user can tell a limit of warplint from a limit of the
//! code). The budgets the CLI applies are exercised through it:
//! `MAX_FILE_BYTES` by its robustness tests (a 17 MiB file), `MAX_HEADERS`,
//! `MAX_HEADER_BYTES` and `MAX_INDEXED_FILES` by `cli/tests/check.rs`.

use warplint_analyzer::finding::Budget;
use warplint_analyzer::hardware::Modern;
use warplint_analyzer::{analyze, budget, FileAnalysis, Header, Options};

/// The budgets the analysis said ran out (in notes, unknown reasons and
/// assumptions), as "budget `NAME`" lines.
fn said(a: &FileAnalysis) -> String {
    let mut budgets: Vec<Budget> = a
        .program
        .notes
        .iter()
        .flat_map(|n| n.kind.budgets())
        .collect();
    for r in &a.reports {
        budgets.extend(r.unknown_reason.iter().flat_map(|u| u.budgets()));
        budgets.extend(r.assumptions.iter().flat_map(|a| a.budgets()));
    }
    let names: Vec<String> = budgets
        .iter()
        .map(|b| format!("budget `{}`", b.name))
        .collect();
    names.join("\n")
}

fn run_with(src: &str, options: &Options) -> String {
    said(&analyze(src.as_bytes(), &Modern, options))
}

fn run(src: &str) -> String {
    run_with(src, &Options::default())
}

fn assert_names(text: &str, name: &str) {
    assert!(
        text.contains(&format!("budget `{name}`")),
        "`{name}` not named in:\n{text}"
    );
}

#[test]
fn syntax_depth_of_a_hundred_thousand_nested_expressions() {
    let depth = 100_000;
    let parens = format!(
        "__global__ void k(float *a) {{ a[{}threadIdx.x{}] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    assert_names(&run(&parens), "MAX_SYNTAX_DEPTH");
    let chain = format!(
        "__global__ void k(float *a) {{ a[threadIdx.x{}] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n",
        " + 1".repeat(depth)
    );
    assert_names(&run(&chain), "MAX_SYNTAX_DEPTH");
    let blocks = format!(
        "__global__ void k(float *a) {{ {} a[threadIdx.x] = 0; {} }}\n",
        "if (threadIdx.x < 64) {".repeat(2000),
        "}".repeat(2000)
    );
    assert_names(&run(&blocks), "MAX_SYNTAX_DEPTH");
}

#[test]
fn expression_size() {
    // Each level doubles the expression: 2^20 nodes if kept.
    let mut defs = String::from("#define E0 threadIdx.x\n");
    for i in 1..=20 {
        defs.push_str(&format!("#define E{i} (E{} ^ E{})\n", i - 1, i - 1));
    }
    let big = format!(
        "{defs}__global__ void k(float *a) {{ a[E20 & 31] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    let text = run(&big);
    assert!(
        text.contains("budget `MAX_MACRO_EXPANSIONS`") || text.contains("budget `MAX_EXPR_NODES`"),
        "{text}"
    );
}

/// `#define M0 base`, then `M1` .. `M40`, each `(previous + 1)`: a chain
/// deeper than MAX_MACRO_DEPTH.
fn macro_chain(base: &str) -> String {
    let mut defs = format!("#define M0 {base}\n");
    for i in 1..=40 {
        defs.push_str(&format!("#define M{i} (M{} + 1)\n", i - 1));
    }
    defs
}

#[test]
fn macro_depth_and_expansions() {
    let defs = macro_chain("threadIdx.x");
    let src = format!(
        "{defs}__global__ void k(float *a) {{ a[M40] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_MACRO_DEPTH");
    // Tripling at every level: 3^11 uses within the depth budget.
    let mut defs = String::from("#define D0 threadIdx.x\n");
    for i in 1..=11 {
        defs.push_str(&format!("#define D{i} (D{j} - D{j} + D{j})\n", j = i - 1));
    }
    let src = format!(
        "{defs}__global__ void k(float *a) {{ a[D11 + threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_MACRO_EXPANSIONS");
    // Macros in `#if` conditions nest past the budget too.
    let defs = macro_chain("1");
    let src = format!(
        "{defs}#if M40 > 0\n#endif\n__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\n"
    );
    assert_names(&run(&src), "MAX_MACRO_DEPTH");
}

#[test]
fn include_depth() {
    let n = budget::MAX_INCLUDE_DEPTH + 6;
    let headers: Vec<Header> = (0..n)
        .map(|i| Header {
            name: format!("h{i}.cuh"),
            path: format!("h{i}.cuh"),
            text: format!("#include \"h{}.cuh\"\n#define LAST {i}\n", i + 1).into_bytes(),
        })
        .collect();
    let mut options = Options::default();
    options.frontend.headers = headers;
    let src = "#include \"h0.cuh\"\n__global__ void k(float *a) { a[threadIdx.x] = 0; }\n";
    assert_names(&run_with(src, &options), "MAX_INCLUDE_DEPTH");
}

#[test]
fn inlining_depth_and_calls() {
    let mut fns = String::from("__device__ int f0(int x) { return x; }\n");
    for i in 1..=30 {
        fns.push_str(&format!(
            "__device__ int f{i}(int x) {{ return f{}(x) + 1; }}\n",
            i - 1
        ));
    }
    let src = format!(
        "{fns}__global__ void k(float *a) {{ a[f30(threadIdx.x)] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_INLINE_DEPTH");
    let calls = "s += g(threadIdx.x); ".repeat(budget::MAX_INLINED_CALLS as usize + 10);
    let src = format!(
        "__device__ int g(int x) {{ return x; }}\n__global__ void k(float *a) {{ int s = 0; {calls} a[s] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_INLINED_CALLS");
}

#[test]
fn instantiations_and_launches() {
    let launches: String = (0..budget::MAX_INSTANTIATIONS + 4)
        .map(|i| format!("k<{i}><<<1, 32>>>(0); "))
        .collect();
    let src = format!(
        "template <int N> __global__ void k(float *a) {{ a[threadIdx.x * N] = 0; }}\nint main() {{ {launches} }}\n"
    );
    assert_names(&run(&src), "MAX_INSTANTIATIONS");
    let launches: String = (0..budget::MAX_LAUNCHES_PER_KERNEL + 4)
        .map(|i| format!("k<<<1, {}>>>(0); ", 32 * (i + 1)))
        .collect();
    let src = format!(
        "__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\nint main() {{ {launches} }}\n"
    );
    assert_names(&run(&src), "MAX_LAUNCHES_PER_KERNEL");
}

#[test]
fn engine_budgets() {
    // A loop longer than MAX_LOOP_ITERATIONS: the first ones are costed.
    let src = "__global__ void k(float *a) { for (int i = 0; i < 100000; ++i) a[i * 32 + threadIdx.x] = 0; }\nint main() { k<<<1, 32>>>(0); }\n";
    assert_names(&run(src), "MAX_LOOP_ITERATIONS");
    // Nested loops past the executions per access.
    let src = "__global__ void k(float *a) { for (int i = 0; i < 1000; ++i) for (int j = 0; j < 1000; ++j) for (int l = 0; l < 1000; ++l) a[(i + j + l) * 32 + threadIdx.x] = 0; }\nint main() { k<<<64, 1024>>>(0); }\n";
    let mut options = Options::default();
    options.engine.max_executions = 1000;
    assert_names(&run_with(src, &options), "MAX_EXECUTIONS_PER_ACCESS");
    let mut options = Options::default();
    options.engine.max_work = 5000;
    assert_names(&run_with(src, &options), "MAX_WORK_PER_ACCESS");
    // The kernel's budget: the first access may finish, later ones not.
    let src = "__global__ void k(float *a, float *b, float *c) { for (int i = 0; i < 100; ++i) { a[i * 32 + threadIdx.x] = 0; b[i * 64 + threadIdx.x] = 0; c[i * 96 + threadIdx.x] = 0; } }\nint main() { k<<<1, 256>>>(0, 0, 0); }\n";
    let mut options = Options::default();
    options.engine.max_kernel_work = 2000;
    let a = analyze(src.as_bytes(), &Modern, &options);
    assert!(a.reports[0].unknown_reason.is_none(), "{:?}", a.reports[0]);
    assert_names(&said(&a), "MAX_WORK_PER_KERNEL");
    // With the default budgets the same kernel is fully costed.
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    assert!(a.reports.iter().all(|r| r.unknown_reason.is_none()));
}

/// The lowering's budgets. Two are not here: `MAX_IF_CONVERTED_NODES` is
/// the size of an `if` nvcc if-converts, not a cut (a larger `if` is a
/// branch, and nothing is said); `MAX_SCAN_NODES` in a launching function
/// is `a_launching_function_past_the_scan_budget_says_so`.
#[test]
fn lowering_budgets() {
    // A declarator nested past MAX_DECLARATOR_DEPTH.
    let stars = "*".repeat(budget::MAX_DECLARATOR_DEPTH as usize + 10);
    let src = format!(
        "__global__ void k(float *a) {{ int {stars}p; a[threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_DECLARATOR_DEPTH");
    // A loop whose body has more syntax nodes than MAX_SCAN_NODES.
    let zeros = "0, ".repeat(budget::MAX_SCAN_NODES as usize / 2 + 10);
    let src = format!(
        "__global__ void k(float *a) {{ int s = 0; for (int i = 0; i < 4; ++i) {{ s += 1; int big[] = {{ {zeros} }}; }} a[s + threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_SCAN_NODES");
    // A struct read and written whole, in more pieces than MAX_ACCESS_PIECES.
    let words = budget::MAX_ACCESS_PIECES + 8;
    let src = format!(
        "struct S {{ float v[{words}]; }};\n__global__ void k(S *a, S *b) {{ a[threadIdx.x] = b[threadIdx.x]; }}\nint main() {{ k<<<1, 32>>>(0, 0); }}\n"
    );
    assert_names(&run(&src), "MAX_ACCESS_PIECES");
    // Type aliases nested past MAX_ALIAS_DEPTH over a template parameter
    // no launch instantiates.
    let depth = budget::MAX_ALIAS_DEPTH + 3;
    let mut aliases = String::from("using A0 = typename T::x; ");
    for i in 1..=depth {
        aliases.push_str(&format!("using A{i} = typename A{}::x; ", i - 1));
    }
    let src = format!(
        "template <typename T> __global__ void k(float *a) {{ {aliases} a[sizeof(A{depth}) * threadIdx.x] = 0; }}\n"
    );
    assert_names(&run(&src), "MAX_ALIAS_DEPTH");
    // An alias that names itself (`cub::BlockRadixRank<...>`) comes round
    // again: not followed twice, so not a budget run out.
    let src = "template <typename T> __global__ void k(float *a) { using R = ns::R<T>; a[sizeof(R) * threadIdx.x] = 0; }\n";
    let text = run(src);
    assert!(!text.contains("MAX_ALIAS_DEPTH"), "{text}");
}

#[test]
fn scans_before_parsing() {
    // An `__align__(…)` whose arguments do not close within the window.
    let args = format!(
        "{}1",
        "1 + ".repeat(budget::MAX_ATTRIBUTE_ARGUMENT_BYTES / 4 + 10)
    );
    let src = format!(
        "struct __align__({args}) S {{ float x; }};\n__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_ATTRIBUTE_ARGUMENT_BYTES");
    // A functional cast through a dependent name longer than the scan.
    let targs = "B, ".repeat(budget::MAX_TYPENAME_NAME_BYTES / 3 + 10);
    let src = format!(
        "__global__ void k(float *a) {{ a[threadIdx.x] = f(typename A<{targs}B>::T(1)); }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_TYPENAME_NAME_BYTES");
    // An undefined specifier macro opening a parameter whose type is longer
    // than the scan.
    let targs = "int, ".repeat(budget::MAX_PARAMETER_SCAN_TOKENS + 10);
    let src = format!(
        "__global__ void k(GRID_CONST Foo<{targs}int> p, float *a) {{ a[threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0, 0); }}\n"
    );
    assert_names(&run(&src), "MAX_PARAMETER_SCAN_TOKENS");
}

#[test]
fn scans_of_the_syntax_tree() {
    // More syntax errors than are listed.
    let src = "int a @;\n".repeat(budget::MAX_SYNTAX_ERROR_NOTES + 10);
    assert_names(&run(&src), "MAX_SYNTAX_ERROR_NOTES");
    // A host function too large to search for its launches (the launch is
    // the last node the search would reach).
    let statements = "x;".repeat(budget::MAX_LAUNCH_SEARCH_NODES as usize / 3 + 10);
    let src = format!(
        "__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\nint main() {{ k<<<1, 32>>>(0); {statements} }}\n"
    );
    assert_names(&run(&src), "MAX_LAUNCH_SEARCH_NODES");
}

#[test]
fn truncated_files_and_deep_declarators() {
    // More braces left open than are closed.
    let open = "{ ".repeat(budget::MAX_CLOSED_BRACES + 10);
    let src = format!("__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\nvoid f() {open}\n");
    assert_names(&run(&src), "MAX_CLOSED_BRACES");
    // A function returning a pointer nested past the declarator depth.
    let stars = "*".repeat(budget::MAX_FUNCTION_DECLARATOR_DEPTH + 4);
    let src = format!(
        "__device__ float {stars}f() {{ return 0; }}\n__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\n"
    );
    assert_names(&run(&src), "MAX_FUNCTION_DECLARATOR_DEPTH");
}

/// An `#if` whose expression nests deeper than `MAX_SYNTAX_DEPTH` (a
/// hundred thousand parentheses overflowed the stack before the budget):
/// its first branch is analysed and the note names the budget.
#[test]
fn an_if_condition_nested_past_the_syntax_budget() {
    let open = "(".repeat(100_000);
    let close = ")".repeat(100_000);
    let src = format!(
        "#if {open}1{close}\n#define S 2\n#else\n#define S 1\n#endif\n__global__ void k(float *a) {{ __shared__ float s[64]; s[threadIdx.x * S] = a[threadIdx.x]; }}\nint main() {{ k<<<1, 32>>>(0); }}\n"
    );
    assert_names(&run(&src), "MAX_SYNTAX_DEPTH");
    // Within the budget the condition is evaluated (no note).
    let src = "#if ((((1))))\n#define S 2\n#else\n#define S 1\n#endif\n__global__ void k(float *a) { __shared__ float s[64]; s[threadIdx.x * S] = a[threadIdx.x]; }\nint main() { k<<<1, 32>>>(0); }\n";
    assert!(!run(src).contains("MAX_SYNTAX_DEPTH"));
}

/// A launching function too large to scan for pointers it moves off their
/// allocation (`MAX_SCAN_NODES`): the note of the host walk is reported
/// (the walk's other notes are about host code and are not).
#[test]
fn a_launching_function_past_the_scan_budget_says_so() {
    // One named node per element: the walk visits only named children.
    let zeros = "0, ".repeat(budget::MAX_SCAN_NODES as usize + 10);
    let src = format!(
        "__global__ void k(float *a) {{ a[threadIdx.x] = 0; }}\nvoid host(float *p) {{ int big[] = {{ {zeros} }}; k<<<1, 32>>>(p); }}\n"
    );
    assert_names(&run(&src), "MAX_SCAN_NODES");
    let src = "__global__ void k(float *a) { a[threadIdx.x] = 0; }\nvoid host(float *p) { int small[] = { 0, 0 }; k<<<1, 32>>>(p); }\n";
    assert!(!run(src).contains("MAX_SCAN_NODES"));
}

/// `MAX_FUSE_WINDOW`: `.x` and `.y` of one `float4` with more loads of
/// another array between them than the window holds: whether nvcc merges
/// them is not known, and both say so; with fewer between, they merge.
#[test]
fn fields_of_one_element_past_the_fuse_window() {
    let kernel = |between: usize| {
        let loads: String = (0..between)
            .map(|i| format!("    acc += t[threadIdx.x + {i}];\n"))
            .collect();
        format!(
            "__global__ void k(const float4 *in, float *out, const float *t) {{\n\
             \x20   float acc = in[threadIdx.x].x;\n{loads}\
             \x20   acc += in[threadIdx.x].y;\n    out[threadIdx.x] = acc;\n}}\n\
             void r() {{ k<<<1, 32>>>(0, 0, 0); }}\n"
        )
    };
    let past = run(&kernel(budget::MAX_FUSE_WINDOW + 1));
    assert_names(&past, "MAX_FUSE_WINDOW");
    let within = run(&kernel(budget::MAX_FUSE_WINDOW - 2));
    assert!(!within.contains("MAX_FUSE_WINDOW"), "{within}");
}

/// `MAX_BLOCKS_SAMPLED`: a launch of 64 blocks, more than are run. Where
/// the block index shifts the warp by 12 bytes (not a whole number of
/// sectors), the cost rests on the blocks sampled and says so; by 1,024
/// bytes it does not depend on the block, and nothing is said.
#[test]
fn blocks_past_the_sample_where_the_block_index_matters() {
    let kernel = |stride: u32| {
        format!(
            "__global__ void k(float *a) {{ a[blockIdx.x * {stride} + threadIdx.x] = 0; }}\n\
             void r(float *a) {{ k<<<64, 32>>>(a); }}\n"
        )
    };
    assert_names(&run(&kernel(3)), "MAX_BLOCKS_SAMPLED");
    let aligned = run(&kernel(256));
    assert!(!aligned.contains("MAX_BLOCKS_SAMPLED"), "{aligned}");
}

/// `MAX_HEADERS`, for a caller that gives the analyzer more headers than
/// it reads (the CLI never does): a note names the budget, and the file is
/// still analysed.
#[test]
fn more_headers_than_are_read() {
    let headers: Vec<Header> = (0..budget::MAX_HEADERS + 1)
        .map(|i| Header {
            name: format!("h{i}.cuh"),
            path: format!("h{i}.cuh"),
            text: Vec::new(),
        })
        .collect();
    let mut options = Options::default();
    options.frontend.headers = headers;
    let src = "__global__ void k(float *a) { a[threadIdx.x] = 0; }\n";
    let a = analyze(src.as_bytes(), &Modern, &options);
    assert_names(&said(&a), "MAX_HEADERS");
    assert!(a.program.notes.iter().all(|n| n.span.line >= 1));
    assert_eq!(a.reports.len(), 1);
}

/// `MAX_LOOP_ITERATIONS` and `MAX_HOST_VALUES` in a host loop whose
/// values a launch argument takes: past them, the argument is not known
/// and a note names the budget; within them, no note.
#[test]
fn host_values_past_their_loop_and_value_budgets() {
    let program = |bound: u64, arg: &str| {
        format!(
            "__global__ void k(float *a, int n) {{ a[threadIdx.x * n] = 0; }}
void run(float *a, int n) {{ k<<<1, 32>>>(a, n); }}
int main() {{ for (int n = 1; n <= {bound}; n++) run(0, {arg}); return 0; }}
"
        )
    };
    // Four values, one iteration too many.
    let iterations = budget::MAX_LOOP_ITERATIONS;
    assert_names(
        &run(&program(iterations + 1, "n % 4 + 1")),
        "MAX_LOOP_ITERATIONS",
    );
    // Past MAX_HOST_VALUES the values tried are a sample, and said so.
    let values = budget::MAX_HOST_VALUES as u64;
    assert_names(&run(&program(values + 1, "n")), "MAX_HOST_VALUES");
    let within = run(&program(values - 1, "n"));
    assert!(!within.contains("MAX_HOST"), "{within}");
    // Past MAX_HOST_VALUES_SEEN they are not followed (a note).
    let many = "__global__ void k(float *a, int n) { a[threadIdx.x * n] = 0; }
void run(float *a, int n) { k<<<1, 32>>>(a, n); }
int main() { for (int i = 0; i < 100; i++) for (int j = 0; j < 100; j++) run(0, i * 100 + j + 1); return 0; }
";
    assert_names(&run(many), "MAX_HOST_VALUES_SEEN");
    // Three nested loops of 100 for two values: a million iterations,
    // stopped by MAX_HOST_LOOP_STEPS, not run to the end.
    let nested = "__global__ void k(float *a, int n) { a[threadIdx.x * n] = 0; }
void run(float *a, int n) { k<<<1, 32>>>(a, n); }
int main() { for (int i = 0; i < 100; i++) for (int j = 0; j < 100; j++) for (int l = 0; l < 100; l++) run(0, (i + j + l) % 2 + 1); return 0; }
";
    assert_names(&run(nested), "MAX_HOST_LOOP_STEPS");
    assert!(!within.contains("MAX_LOOP_ITERATIONS"), "{within}");
}

/// Past `MAX_EXECUTIONS_PER_ACCESS` the executions costed so far stand
/// for the access (`first-executions`), as a loop's first iterations do
/// past `MAX_LOOP_ITERATIONS`: `assumed`, with their cost, not `unknown`.
#[test]
fn the_first_executions_stand_for_the_access_past_their_budget() {
    use warplint_analyzer::finding::Assumption;
    use warplint_analyzer::symbolic::Cost;
    use warplint_analyzer::Status;
    let src = "__global__ void k(float *a) { for (int i = 0; i < 1000; ++i) for (int j = 0; j < 1000; ++j) a[(i * 1000 + j) * 64 + threadIdx.x * 2] = 0; }\nint main() { k<<<64, 1024>>>(0); }\n";
    let mut options = Options::default();
    options.engine.max_executions = 1000;
    let a = analyze(src.as_bytes(), &Modern, &options);
    let r = &a.reports[0];
    assert_eq!(r.status, Status::Assumed, "{:?}", r.unknown_reason);
    assert!(
        r.assumptions
            .iter()
            .any(|x| matches!(x, Assumption::FirstExecutions { budget } if budget.limit == 1000)),
        "{:?}",
        r.assumptions
    );
    // Every execution: 32 lanes 8 bytes apart, 256 bytes, 8 sectors
    // where 4 would do.
    match &r.cost {
        Some(Cost::Global(g)) => assert_eq!((g.sectors, g.ideal_sectors), (8.0, 4.0)),
        other => panic!("{other:?}"),
    }
}
