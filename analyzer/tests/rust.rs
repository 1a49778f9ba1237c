//! Rust-CUDA kernels (`analyzer/src/rust/`): each kernel is analysed next
//! to its CUDA C++ twin, written by hand as nvcc would read the same
//! kernel; every report must cost the same, access by access, and point at
//! the Rust source (its line, its text). What the translation does not read
//! is a note there, and what depends on it is unknown, never guessed.

use warplint_analyzer::finding::NoteKind;
use warplint_analyzer::frontend::Language;
use warplint_analyzer::hardware::Arch;
use warplint_analyzer::{analyze, FileAnalysis, Options};

fn run(src: &str, language: Language) -> FileAnalysis {
    let model = Arch::parse("sm_90").unwrap().model().unwrap();
    let mut options = Options::default();
    options.frontend.language = language;
    analyze(src.as_bytes(), model.as_ref(), &options)
}

/// The reports as compared: array, operation, width, status, cost.
fn costs(a: &FileAnalysis) -> Vec<String> {
    a.reports
        .iter()
        .map(|r| {
            format!(
                "{} {:?} {} {:?} {:?}",
                r.array, r.op, r.width, r.status, r.cost
            )
        })
        .collect()
}

/// `rust` and `cuda` cost the same, and the Rust reports quote the Rust
/// source at the lines given (one per report, in order).
fn twins(rust: &str, cuda: &str, lines: &[u32]) -> FileAnalysis {
    let r = run(rust, Language::Rust);
    let c = run(cuda, Language::Cuda);
    assert!(!r.reports.is_empty(), "no report: {:?}", r.program.notes);
    assert_eq!(costs(&r), costs(&c), "rust notes: {:?}", r.program.notes);
    let at: Vec<u32> = r.reports.iter().map(|x| x.span.line).collect();
    assert_eq!(at, lines);
    for x in &r.reports {
        let quoted = &rust[x.span.start..x.span.end];
        assert_eq!(x.text, quoted);
        assert!(!quoted.contains("threadIdx"), "{quoted}");
    }
    r
}

#[test]
fn transposed_tile_costs_what_its_cuda_twin_does() {
    let rust = r#"
use cuda_std::prelude::*;
const TILE: usize = 32;
#[kernel]
pub unsafe fn transpose(input: &[f32], output: *mut f32, n: usize) {
    #[address_space(shared)]
    static mut BUF: [[f32; TILE]; TILE] = [[0.0; TILE]; TILE];
    let tx = thread::thread_idx_x() as usize;
    let ty = thread::thread_idx_y() as usize;
    let x = thread::block_idx_x() as usize * TILE + tx;
    let y = thread::block_idx_y() as usize * TILE + ty;
    BUF[ty][tx] = input[y * n + x];
    thread::sync_threads();
    *output.add(y * n + x) = BUF[tx][ty];
}
"#;
    let cuda = r#"
const unsigned long long TILE = 32;
__global__ void transpose(const float* input, unsigned long long input__len, float* output, unsigned long long n) {
    __shared__ float BUF[TILE][TILE];
    unsigned long long tx = (unsigned long long)threadIdx.x;
    unsigned long long ty = (unsigned long long)threadIdx.y;
    unsigned long long x = (unsigned long long)blockIdx.x * TILE + tx;
    unsigned long long y = (unsigned long long)blockIdx.y * TILE + ty;
    BUF[ty][tx] = input[y * n + x];
    __syncthreads();
    *(output + (y * n + x)) = BUF[tx][ty];
}
"#;
    let r = twins(rust, cuda, &[12, 12, 14, 14]);
    let o = &r.program.kernels[0].objects;
    let buf = o.iter().find(|o| o.name == "BUF").unwrap();
    assert_eq!(buf.dims, vec![Some(32), Some(32)]);
    // Padding edits the element type's length and the initializer's.
    let dim = buf.inner_dim.unwrap();
    assert_eq!(&rust[dim.start..dim.end], "TILE");
    assert_eq!(
        rust[..dim.start].rsplit('\n').next().unwrap(),
        "    static mut BUF: [[f32; "
    );
    let copies: Vec<&str> = buf
        .dim_copies
        .iter()
        .map(|c| &rust[c.start..c.end])
        .collect();
    assert_eq!(copies, ["TILE"]);
    assert!(buf.dim_copies[0].start > dim.end);
}

#[test]
fn slices_pointers_and_shared_arrays_cost_what_their_twins_do() {
    let rust = r#"
use cuda_std::prelude::*;
#[kernel]
pub unsafe fn k(a: &[f32], b: &mut [u32], p: *mut f64, stride: usize) {
    let s = shared_array![i32; 256];
    let tid = thread::thread_idx_x() as usize;
    let i = thread::index_1d() as usize;
    if i < b.len() {
        b[i] = (a[i * stride] as u32) + 1u32;
    }
    *s.add(tid) = 1;
    let v = p.add(i * 2).read();
    p.add(i).write(v + (*s.add(2 * tid % 256)) as f64);
    for j in (0..64).step_by(8) {
        *s.add(tid + j) += 1;
    }
}
"#;
    let cuda = r#"
__global__ void k(const float* a, unsigned long long a__len, unsigned int* b, unsigned long long b__len, double* p, unsigned long long stride) {
    __shared__ int s[256];
    unsigned long long tid = (unsigned long long)threadIdx.x;
    unsigned long long i = (unsigned long long)(threadIdx.x + blockIdx.x * blockDim.x);
    if (i < b__len) {
        b[i] = (unsigned int)(a[i * stride]) + 1u;
    }
    *(s + tid) = 1;
    double v = *(p + i * 2);
    *(p + i) = v + (double)(*(s + (2 * tid % 256)));
    for (int j = 0; j < 64; j += 8) {
        *(s + (tid + j)) += 1;
    }
}
"#;
    let r = twins(rust, cuda, &[9, 9, 11, 12, 13, 13, 15, 15]);
    let params: Vec<&str> = r.program.kernels[0]
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(params, ["a", "a.len()", "b", "b.len()", "p", "stride"]);
}

#[test]
fn shadowed_names_and_tail_values_are_read_as_rust_means_them() {
    let rust = r#"
#[kernel]
pub unsafe fn k(out: *mut f32) {
    let i = cuda_std::thread::thread_idx_x() as usize;
    let i = i * 2;
    let j = if i < 64 { i } else { 0 };
    *out.add(twice(j)) = 0.0f32;
}
fn twice(x: usize) -> usize {
    x * 2
}
"#;
    let cuda = r#"
__device__ unsigned long long twice(unsigned long long x) { return x * 2; }
__global__ void k(float* out) {
    unsigned long long i = (unsigned long long)threadIdx.x;
    unsigned long long i2 = i * 2;
    unsigned long long j = i2 < 64 ? i2 : 0;
    *(out + twice(j)) = 0.0f;
}
"#;
    twins(rust, cuda, &[7]);
}

/// `match` as a statement (a binding arm with a guard, an or-pattern, a
/// range, a constant) and as a value: as the `if` chain and `?:` nvcc
/// would read.
/// `if let Some(x) = s.get(i)`, `for (j, x) in s.iter().enumerate()` and
/// `for j in (a..b).rev()` are a bounds check, a counted loop over the
/// slice's length and a loop counted down, as nvcc reads them.
#[test]
fn pattern_bound_control_flow_costs_what_its_twin_does() {
    let rust = r#"
use cuda_std::prelude::*;
#[kernel]
pub unsafe fn k(a: &[f32], b: &mut [f32], out: *mut f32) {
    let i = thread::index_1d() as usize;
    if let Some(x) = b.get_mut(i * 2) {
        *x = 1.0;
    }
    if let Some(&v) = a.get(i) {
        *out.add(i) = v;
    } else {
        *out.add(i + 1) = 0.0;
    }
    let mut s = 0.0f32;
    for (j, x) in a.iter().enumerate() {
        s += *x * j as f32;
    }
    for j in (0..8).rev() {
        *out.add(i * 8 + j) = s;
    }
}
"#;
    let cuda = r#"
__global__ void k(const float* a, unsigned long long a__len, float* b, unsigned long long b__len, float* out) {
    unsigned long long i = (unsigned long long)(threadIdx.x + blockIdx.x * blockDim.x);
    { unsigned long long at = i * 2; if (at < b__len) { float* x = &b[at]; *x = 1.0f; } }
    { unsigned long long at2 = i; if (at2 < a__len) { float v = a[at2]; *(out + i) = v; } else { *(out + (i + 1)) = 0.0f; } }
    float s = 0.0f;
    for (unsigned long long j = 0; j < a__len; j += 1) { const float* x = &a[j]; s += (*x) * (float)j; }
    for (long long j = (long long)(8) - 1; j >= (long long)(0); j -= 1) { *(out + (i * 8 + j)) = s; }
}
"#;
    // The two sides' stores to `out` are one, on the `else` line
    // (`nvcc/sink.rs`).
    let r = twins(rust, cuda, &[7, 9, 12, 16, 19]);
    assert!(
        !r.program
            .notes
            .iter()
            .any(|n| matches!(n.kind, NoteKind::RustUnread { .. })),
        "{:?}",
        r.program.notes
    );
}

/// `zip`, `chunks` and `while let` read as loops over slices, each
/// access costing what its hand-written CUDA twin's does, no note.
#[test]
fn zipped_chunked_and_while_let_loops_cost_what_their_twins_do() {
    let rust = r#"
use cuda_std::prelude::*;
#[kernel]
pub unsafe fn k(a: &[f32], b: &mut [f32], out: *mut f32) {
    let i = thread::index_1d() as usize;
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b.iter_mut()) {
        *y = *x + 1.0;
    }
    for c in a.chunks(4) {
        s += c[i % 4];
    }
    let mut j = i;
    while let Some(&v) = a.get(j * 32) {
        s += v;
        j += 1;
    }
    *out.add(i) = s;
}
"#;
    let cuda = r#"
__global__ void k(const float* a, unsigned long long a__len, float* b, unsigned long long b__len, float* out) {
    unsigned long long i = (unsigned long long)(threadIdx.x + blockIdx.x * blockDim.x);
    float s = 0.0f;
    for (unsigned long long q = 0; q < a__len && q < b__len; q += 1) { const float* x = &a[q]; float* y = &b[q]; *y = (*x) + 1.0f; }
    { unsigned long long n = 4; for (unsigned long long q = 0; q * n < a__len; q += 1) { const float* c = a + q * n; unsigned long long c__len = a__len - q * n < n ? a__len - q * n : n; s += c[i % 4]; } }
    unsigned long long j = i;
    while (true) { unsigned long long at = j * 32; if (!(at < a__len)) break; float v = a[at]; s += v; j += 1; }
    *(out + i) = s;
}
"#;
    let r = twins(rust, cuda, &[8, 8, 11, 14, 18]);
    assert!(
        !r.program
            .notes
            .iter()
            .any(|n| matches!(n.kind, NoteKind::RustUnread { .. })),
        "{:?}",
        r.program.notes
    );
}

#[test]
fn match_costs_what_its_if_chain_does() {
    let rust = r#"
const W: usize = 8;
#[kernel]
pub unsafe fn k(out: *mut f32, n: usize) {
    let t = thread::thread_idx_x() as usize;
    match t % 4 {
        0 => *out.add(t * 2) = 1.0,
        1 | 2 => { *out.add(t) = 2.0; }
        W => {}
        r if r < n => *out.add(r * 32 + t) = 3.0,
        _ => {}
    }
    let s = match t { 0..=15 => t * 4, W => 0, _ => t };
    *out.add(s) = 4.0;
}
"#;
    let cuda = r#"
const unsigned long long W = 8;
__global__ void k(float* out, unsigned long long n) {
    unsigned long long t = (unsigned long long)threadIdx.x;
    {
    unsigned long long m = t % 4;
    if ((m == 0)) { *(out + (t * 2)) = 1.0f; }
    else if (((m == 1) || (m == 2))) { *(out + t) = 2.0f; }
    else if ((m == W)) {}
    else if (1 && (m < n)) { unsigned long long r = m; *(out + (r * 32 + t)) = 3.0f; }
    else if (1) {}
    }
    unsigned long long s = ((t >= 0 && t <= 15) ? t * 4 : ((t == W) ? 0 : t));
    *(out + s) = 4.0f;
}
"#;
    let r = twins(rust, cuda, &[7, 8, 10, 14]);
    assert!(
        !r.program
            .notes
            .iter()
            .any(|n| matches!(n.kind, NoteKind::RustUnread { .. })),
        "{:?}",
        r.program.notes
    );
}

#[test]
fn what_the_translation_does_not_read_is_a_note_and_unknown() {
    let rust = r#"
#[kernel]
pub unsafe fn k(out: *mut f32, n: usize) {
    let i = match (n, 1) { (0, _) => 1, _ => 2 };
    match n { IMPORTED => *out.add(n) = 3.0, _ => {} }
    *out.add(i * cuda_std::thread::thread_idx_x() as usize) = 0.0;
    for x in some_iterator() {
        *out.add(x) = 1.0;
    }
}
"#;
    let r = run(rust, Language::Rust);
    let unread: Vec<(u32, &str)> = r
        .program
        .notes
        .iter()
        .filter_map(|n| match &n.kind {
            NoteKind::RustUnread { what } => Some((n.span.line, what.as_str())),
            _ => None,
        })
        .collect();
    // A name the file does not declare, spelled as a constant, is one
    // imported: the arm compares with a value not known.
    assert_eq!(
        unread,
        [(4, "match"), (5, "match"), (7, "for over an iterator")]
    );
    assert_eq!(r.reports.len(), 1);
    assert_eq!(r.reports[0].cost, None, "{:?}", r.reports[0]);
}

#[test]
fn a_file_syn_cannot_parse_is_one_note_without_a_place() {
    let r = run("#[kernel]\npub fn k( {", Language::Rust);
    assert!(r.reports.is_empty());
    let [n] = r.program.notes.as_slice() else {
        panic!("{:?}", r.program.notes);
    };
    assert_eq!(n.span.line, 0);
    assert!(matches!(&n.kind, NoteKind::RustSyntax { message } if message.contains("2:")));
    // Ordinary Rust (no kernel) is not parsed at all.
    let plain = run("fn main() { let x = [; }", Language::Rust);
    assert!(plain.program.notes.is_empty() && plain.reports.is_empty());
    // Nesting too deep for the parser's stack is refused before parsing.
    let deep = format!("#[kernel]\nfn k() {{ {} }}", "(".repeat(100_000));
    let d = run(&deep, Language::Rust);
    assert!(matches!(
        d.program.notes.as_slice(),
        [n] if matches!(n.kind, NoteKind::StatementsTooDeep { .. })
    ));
}

mod garbage {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "#[kernel]\npub unsafe fn k(a: &[f32], o: *mut f32, n: usize) {\n",
        "#[kernel]\nfn g<const N: usize, T>(x: &mut [T]) {\n",
        "fn helper(x: usize) -> usize { x * 2 }\n",
        "const T: usize = 16;\n",
        "#[address_space(shared)]\nstatic mut S: [[f32; T]; T] = [[0.0; T]; T];\n",
        "let s = shared_array![f32; 64];\n",
        "let i = thread::index_1d() as usize;\n",
        "let i = i + thread::thread_idx_y() as usize * n;\n",
        "*o.add(i * 32) = a[i];\n",
        "S[i][0] = *s.add(i % 64);\n",
        "for j in (0..n).step_by(T) { *o.add(j + i) += 1.0; }\n",
        "for j in 0..=4 {\n",
        "while i < n {\n",
        "loop { break; }\n",
        "if i < n { return; } else {\n",
        "let v = if i > 2 { i } else { helper(i) };\n",
        "match i { 0 => {}, _ => {} }\n",
        "let (p, q) = (1, 2);\n",
        "o.add(i).write(o.add(i).read() + 1.0);\n",
        "x.get_unchecked_mut(i);\n",
        "!i; -i; !(i < n); u32::MAX; i.min(n).max(3).wrapping_add(1);\n",
        "}\n",
        "{\n",
        "(((",
        ")))",
        "/* unterminated",
        "\"string with #[kernel]\"",
        "unsafe {\n",
    ];

    /// Statements that parse, for kernels syn accepts.
    const STATEMENTS: &[&str] = &[
        "let i = i + thread::thread_idx_y() as usize * n;",
        "*o.add(i * 32) = a[i];",
        "S[i % T][0] = *s.add(i % 64);",
        "for j in (0..n).step_by(T) { *o.add(j + i) += 1.0; }",
        "for j in 0..=4 { *s.add(j * 2 + i) = 0.0; }",
        "while i < n { *o.add(i) = 1.0; break; }",
        "loop { break; }",
        "if i < n { *o.add(i) = 2.0; } else { return; }",
        "let v = if i > 2 { i } else { helper(i) };",
        "let i = helper(i);",
        "match i { 0 => {}, _ => {} }",
        "match i { 0 => { *o.add(i) = 1.0; } 1 | 2 => *o.add(i + 1) = 2.0, k if k < n => { *o.add(k) = 0.0; } _ => {} }",
        "let v = match i { 0 => 1, 1..=4 => i * 2, T => n, _ => i }; *o.add(v) = 0.0;",
        "let (p, q) = (1, 2);",
        "o.add(i).write(o.add(i).read() + 1.0);",
        "let w = (!i) & 7; *o.add(w) = 0.0;",
        "let m = i.min(n).max(3).wrapping_add(1); *o.add(m) = a[m];",
        "unsafe { *o.add(i + 1) = a[i]; }",
        "let new = i; let class = new.register(1).template(); *o.add(class) = 0.0;",
        "let this = UNIT_POS as usize; *o.add(this + ABSOLUTE_POS) = 1.0;",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Kernels syn accepts, of random statements: the analysis quotes
        /// the Rust source at every report.
        #[test]
        fn rust_kernels_of_random_statements_never_panic(picks in proptest::collection::vec(0..STATEMENTS.len(), 1..12)) {
            let body: String = picks.iter().map(|&i| STATEMENTS[i]).collect::<Vec<_>>().join("\n    ");
            let src = format!(
                "const T: usize = 16;\nfn helper(x: usize) -> usize {{ x * 2 }}\n#[kernel]\npub unsafe fn k(a: &[f32], o: *mut f32, n: usize) {{\n    #[address_space(shared)]\n    static mut S: [[f32; T]; T] = [[0.0; T]; T];\n    let s = shared_array![f32; 64];\n    let i = thread::index_1d() as usize;\n    {body}\n    *o.add(i) = 0.0;\n}}\n"
            );
            let a = run(&src, Language::Rust);
            prop_assert!(!a.reports.is_empty(), "{:?}", a.program.notes);
            // Rust syn accepts is translated to C++ the grammar accepts.
            let unparsed: Vec<_> = a
                .program
                .notes
                .iter()
                .filter(|n| matches!(n.kind, NoteKind::ParseError { .. } | NoteKind::ParseExpected { .. }))
                .collect();
            prop_assert!(unparsed.is_empty(), "{:?}", unparsed);
            for r in &a.reports {
                prop_assert_eq!(&r.text, &src[r.span.start..r.span.end]);
                prop_assert!(r.span.line >= 4);
            }
        }

        /// Never panic, hang or blow up on input: any mixture of kernel
        /// fragments (parsed or not by syn) goes through the Rust front end
        /// and the engine.
        #[test]
        fn rust_fragments_never_panic(picks in proptest::collection::vec(0..PIECES.len(), 0..40)) {
            let src: String = picks.iter().map(|&i| PIECES[i]).collect();
            let a = run(&src, Language::Rust);
            for r in &a.reports {
                prop_assert!(r.span.end <= src.len());
                prop_assert_eq!(&r.text, &src[r.span.start..r.span.end]);
            }
        }
    }
}

#[test]
fn cubecl_kernels_cost_what_their_cuda_twins_do() {
    let rust = r#"
use cubecl::prelude::*;
#[cube(launch)]
fn transpose_tile(input: &Array<f32>, output: &mut Array<f32>, #[comptime] n: u32) {
    let mut tile = SharedMemory::<f32>::new(1024);
    tile[UNIT_POS_Y * 32 + UNIT_POS_X] = input[ABSOLUTE_POS_Y * n + ABSOLUTE_POS_X];
    sync_cube();
    output[ABSOLUTE_POS_X * n + ABSOLUTE_POS_Y] = tile[UNIT_POS_X * 32 + UNIT_POS_Y];
    let new = UNIT_POS * 2;
    output[new] = 0.0;
}
"#;
    let cuda = r#"
__global__ void transpose_tile(const float* input, unsigned long long input__len, float* output, unsigned long long output__len, unsigned int n) {
    __shared__ float tile[1024];
    tile[threadIdx.y * 32 + threadIdx.x] = input[(blockIdx.y * blockDim.y + threadIdx.y) * n + (blockIdx.x * blockDim.x + threadIdx.x)];
    __syncthreads();
    output[(blockIdx.x * blockDim.x + threadIdx.x) * n + (blockIdx.y * blockDim.y + threadIdx.y)] = tile[threadIdx.x * 32 + threadIdx.y];
    unsigned int new_ = (threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) * 2;
    output[new_] = 0.0f;
}
"#;
    twins(rust, cuda, &[6, 6, 8, 8, 10]);
}
