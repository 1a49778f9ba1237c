//! What nvcc emits for source accesses: loops it unrolls over consecutive
//! shared-memory elements become vector accesses (`nvcc/unroll.rs`), and a
//! load of an address already loaded is not emitted (`nvcc/reload.rs`);
//! both measured in `fixtures/groundtruth/sm_90/`, which the calibration
//! test compares line by line. Here: what keeps them from happening.

use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::{analyze, AccessReport, Options, Status};

fn store(src: &str) -> AccessReport {
    analyze(src.as_bytes(), &Modern, &Options::default())
        .reports
        .into_iter()
        .find(|r| r.space == Space::Shared && r.op == Op::Store)
        .expect("a shared store")
}

const MERGED: &str = "__global__ void k(const float *in) {\n\
    __shared__ float s[1024];\n\
    for (int k = 0; k < 8; k++) {\n\
      s[threadIdx.x * 8 + k] = in[k];\n\
    }\n}\n\
    void run(const float *in) { k<<<1, 128>>>(in); }\n";

/// Eight floats per thread: two 16-byte stores a warp, in the first and
/// fifth iterations.
#[test]
fn eight_consecutive_floats_are_two_16_byte_stores() {
    let r = store(MERGED);
    assert_eq!(r.width, 16);
    assert_eq!(r.executions, 4.0 * 2.0, "4 warps, 2 stores each");
}

/// A barrier in the body, a trip count not a multiple of the vector, or a
/// start the vector is not aligned to keep the 4-byte stores.
#[test]
fn a_barrier_an_odd_trip_count_or_a_misaligned_start_keeps_them_apart() {
    let barrier = MERGED.replace("in[k];\n", "in[k];\n__syncthreads();\n");
    assert_eq!(store(&barrier).width, 4);
    let odd = MERGED.replace("k < 8", "k < 3");
    assert_eq!(store(&odd).width, 4);
    let shifted = MERGED.replace("threadIdx.x * 8 + k", "threadIdx.x * 8 + 1 + k");
    assert_eq!(store(&shifted).width, 4);
    // Two elements in, the start is 8-byte aligned: 8-byte stores.
    let half = MERGED.replace("threadIdx.x * 8 + k", "threadIdx.x * 8 + 2 + k");
    assert_eq!(store(&half).width, 8);
}

/// A load of an address already loaded is not emitted again
/// (`nvcc/reload.rs`, measured in `fixtures/groundtruth/sm_90/reload.cu`):
/// unless a store that may write it, or a barrier, lies between.
#[test]
fn a_reload_is_dropped_unless_a_store_or_barrier_lies_between() {
    let loads = |body: &str| {
        let src = format!(
            "__global__ void k(const float *a, float *b, float *o) {{\n\
             int t = threadIdx.x;\n{body}\n}}\n\
             void run(const float *a, float *b, float *o) {{ k<<<1, 64>>>(a, b, o); }}\n"
        );
        analyze(src.as_bytes(), &Modern, &Options::default())
            .reports
            .iter()
            .filter(|r| r.array == "a" && r.op == Op::Load)
            .count()
    };
    assert_eq!(
        loads("float x = a[2 * t];\nfloat z = a[2 * t];\no[t] = x + z;"),
        1
    );
    assert_eq!(
        loads("float x = a[2 * t];\nb[t] = x;\nfloat z = a[2 * t];\no[t] = x + z;"),
        2
    );
    assert_eq!(
        loads("float x = a[2 * t];\n__syncthreads();\nfloat z = a[2 * t];\no[t] = x + z;"),
        2
    );
    // Another address is another load.
    assert_eq!(
        loads("float x = a[2 * t];\nfloat z = a[2 * t + 1];\no[t] = x + z;"),
        2
    );
}

/// A load of what the thread just stored is forwarded (no load), unless
/// the store is under an `if` the load is not, or a store that may alias
/// lies between (`nvcc/reload.rs`, measured in
/// `fixtures/groundtruth/sm_90/forward.cu`).
#[test]
fn a_stored_value_is_forwarded_to_a_later_load() {
    let loads = |body: &str| {
        let src = format!(
            "__global__ void k(float *a, float *b, float *o, int n) {{\n\
             int t = threadIdx.x;\n{body}\n}}\n\
             void run(float *a, float *b, float *o) {{ k<<<1, 64>>>(a, b, o, 9); }}\n"
        );
        analyze(src.as_bytes(), &Modern, &Options::default())
            .reports
            .iter()
            .filter(|r| r.array == "a" && r.op == Op::Load)
            .count()
    };
    assert_eq!(loads("a[2 * t] = 1.0f;\no[t] = a[2 * t];"), 0);
    assert_eq!(loads("a[2 * t] = 1.0f;\nb[t] = 2.0f;\no[t] = a[2 * t];"), 1);
    assert_eq!(loads("if (t < n) a[2 * t] = 1.0f;\no[t] = a[2 * t];"), 1);
    // Stored on both branches of an if/else: forwarded
    // (`fixtures/groundtruth/sm_90/forward_branches.cu`), in a loop too;
    // on one branch, or on both of two different conditions, loaded.
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nelse a[2 * t] = 2.0f;\no[t] = a[2 * t];"),
        0
    );
    assert_eq!(
        loads(
            "for (int y = 0; y < 4; y++) {\nif (t < y + n) a[2 * t + y] = 0;\n\
             else a[2 * t + y] = 2.0f;\no[t] += a[2 * t + y];\n}"
        ),
        0
    );
    // After a `break` (llm.c's softmax: its guard comes after the branch's).
    assert_eq!(
        loads(
            "for (int y = 0; y < 4; y++) {\nif (y >= n) break;\n\
             if (t < y + n) a[2 * t + y] = 0;\nelse a[2 * t + y] = 2.0f;\n\
             o[t] += a[2 * t + y];\n}"
        ),
        0
    );
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nelse b[t] = 2.0f;\no[t] = a[2 * t];"),
        1
    );
    assert_eq!(
        loads("if (t < n) a[2 * t] = 1.0f;\nif (t > n) a[2 * t] = 2.0f;\no[t] = a[2 * t];"),
        1
    );
}

/// Checked against a SASS listing (`nvcc::sass`), a report becomes what
/// the instruction on its line says: verified where the width is the
/// model's, costed again as the instruction where nvcc emits another
/// width, and removed, with why, where its line has no instruction of its
/// space and operation.
#[test]
fn a_listing_verifies_widens_or_removes_each_report() {
    use std::sync::Arc;
    use warplint_analyzer::ir::RemovedWhy;
    use warplint_analyzer::nvcc::sass::{parse, Sass};
    let src = "__global__ void k(float *out) {\n\
        __shared__ float s[1024];\n\
        int t = threadIdx.x; s[t] = t; __syncthreads();\n\
        out[t] = s[(t * 2) % 1024];\n\
        }\n\
        void run(float *o) { k<<<1, 128>>>(o); }\n";
    let listing = "\
.text._Z1kPf:
\t//## File \"/somewhere/k.cu\", line 3
        /*0010*/                   STS [R0], R2 ;
\t//## File \"/somewhere/k.cu\", line 4
        /*0020*/                   LDS.64 R4, [R3] ;
";
    let sass = Sass {
        listing: parse(listing),
        file_ids: vec![Some(0)],
        compiler: Some("nvcc 13.0".into()),
    };
    let plain = analyze(src.as_bytes(), &Modern, &Options::default());
    assert_eq!(plain.reports.len(), 3);
    let of_plain = |a: &warplint_analyzer::FileAnalysis, space, op| {
        a.reports
            .iter()
            .find(|r| r.space == space && r.op == op)
            .cloned()
            .expect("a report")
    };
    let options = Options {
        sass: Some(Arc::new(sass)),
        ..Options::default()
    };
    let a = analyze(src.as_bytes(), &Modern, &options);
    let of = |space, op| a.reports.iter().find(|r| r.space == space && r.op == op);
    let store = of(Space::Shared, Op::Store).expect("the shared store");
    assert_eq!(store.sass.as_ref().map(|c| c.opcode.as_str()), Some("STS"));
    assert!(store.cost.is_some());
    // The 4-byte load nvcc emits as `LDS.64`: costed as that instruction
    // (`2t * 4` bytes aligned down to 8: lanes 8 bytes apart, two
    // wavefronts as a conflict-free 8-byte access needs).
    let load = of(Space::Shared, Op::Load).expect("the shared load");
    assert_eq!(load.width, 8);
    assert_eq!(load.unknown_reason, None);
    let c = load.sass.as_ref().expect("checked");
    assert_eq!(
        (c.opcode.as_str(), c.width, c.modelled),
        ("LDS.64", 8, Some(4))
    );
    match &load.cost {
        Some(warplint_analyzer::symbolic::Cost::Shared(s)) => {
            assert_eq!((s.wavefronts, s.ideal_wavefronts), (2.0, 2.0), "{s:?}");
        }
        other => panic!("{other:?}"),
    }
    let four = of_plain(&plain, Space::Shared, Op::Load);
    assert_eq!(four.width, 4);
    assert!(of(Space::Global, Op::Store).is_none());
    let removed = &a.program.kernels[0].removed;
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].span.line, 4);
    assert_eq!(
        removed[0].why,
        RemovedWhy::NotInSass {
            compiler: Some("nvcc 13.0".into())
        }
    );
}

/// The report of the load of `s` in `src`.
fn load_of_s(src: &str) -> AccessReport {
    analyze(src.as_bytes(), &Modern, &Options::default())
        .reports
        .into_iter()
        .find(|r| r.array == "s" && r.op == Op::Load)
        .expect("the load of s")
}

/// The shared load in `for j < n` of `BODY`, analysed with `extra` in the
/// loop body: whether nvcc hoists it (`nvcc/hoist.rs`, measured in
/// `fixtures/groundtruth/sm_90/hoist.cu`) and how often it runs a block.
fn hoisted_with(extra: &str, index: &str) -> (bool, f64) {
    let src = format!(
        "__global__ void k(float *out, const float *in, int n) {{\n\
         __shared__ float s[1024];\n\
         __shared__ float w[64];\n\
         int t = threadIdx.x;\n\
         s[t] = t; w[t % 64] = t;\n\
         __syncthreads();\n\
         float acc = 0;\n\
         for (int j = 0; j < n; j++) {{\n\
           acc += s[{index}] * w[j % 64];\n\
           {extra}\n\
         }}\n\
         out[t] = acc;\n\
         }}\n\
         void run(float *o, const float *i) {{ k<<<1, 256>>>(o, i, 64); }}\n"
    );
    let r = load_of_s(&src);
    (r.hoisted.is_some(), r.executions)
}

/// A load whose address does not change in its loop runs once, before it:
/// unless a barrier in the loop orders memory, something in the loop may
/// write what it reads, or its address or a guard of its own changes.
#[test]
fn an_invariant_load_is_hoisted_out_of_its_loop_unless_something_stops_it() {
    let once = (true, 8.0);
    let every = |h: (bool, f64)| !h.0 && h.1 == 8.0 * 64.0;
    assert_eq!(hoisted_with("", "(t * 2) % 1024"), once);
    assert!(every(hoisted_with("__syncthreads();", "(t * 2) % 1024")));
    // A store to the same array stops it only where it may write the
    // loaded bytes (measured in `hoist2.cu`): the other parity, another
    // residue modulo 16 or a constant distance never do; `(t + 1)` meets
    // `2t` at `t = 1`.
    assert_eq!(
        hoisted_with("s[(t * 2 + 1) % 1024] = acc;", "(t * 2) % 1024"),
        once
    );
    assert_eq!(
        hoisted_with("s[(t * 2 + 1 + 2 * j) % 1024] = acc;", "(t * 2) % 1024"),
        once
    );
    assert_eq!(
        hoisted_with("s[(t * 4 + 2) % 1024] = acc;", "(t * 4) % 1024"),
        once
    );
    assert_eq!(hoisted_with("s[t * 2 + 64] = acc;", "t * 2"), once);
    assert!(every(hoisted_with(
        "s[(t + 1) % 1024] = acc;",
        "(t * 2) % 1024"
    )));
    assert!(every(hoisted_with(
        "s[(t * 2 + j) % 1024] = acc;",
        "(t * 2) % 1024"
    )));
    assert!(every(hoisted_with("s[t * 2 + 1] = acc;", "t * 2 + 1")));
    assert!(every(hoisted_with("", "(t + j) % 1024")));
    // A store to another shared array or to global memory does not stop it.
    assert_eq!(hoisted_with("w[t % 64] = acc;", "(t * 2) % 1024"), once);
    assert_eq!(hoisted_with("out[j] = acc;", "(t * 2) % 1024"), once);
}

/// Under a condition on the loop's variable, the invariant load stays in
/// the loop (it does not run in every iteration).
#[test]
fn a_load_under_a_condition_on_the_loop_stays_in_it() {
    let src = "__global__ void k(float *out, int n) {\n\
        __shared__ float s[1024];\n\
        int t = threadIdx.x; s[t] = t; __syncthreads();\n\
        float acc = 0;\n\
        for (int j = 0; j < n; j++) {\n\
          if (j % 2 == 0) acc += s[(t * 2) % 1024];\n\
        }\n\
        out[t] = acc;\n\
        }\n\
        void run(float *o) { k<<<1, 256>>>(o, 64); }\n";
    let r = load_of_s(src);
    assert!(r.hoisted.is_none());
    assert_eq!(r.executions, 8.0 * 32.0, "every other of 64 iterations");
}

/// A `volatile` pointer to the start of a shared array makes its accesses
/// emitted as written (no merged pair); one into the middle of a raw
/// buffer (`(volatile int *)(smem_raw + 616)`, flashinfer's TMEM address
/// slot) leaves the buffer's other accesses as nvcc merges them.
#[test]
fn a_volatile_alias_keeps_its_array_unmerged_unless_it_points_inside_it() {
    let widths = |alias: &str| -> Vec<u32> {
        let src = format!(
            "__global__ void k(float *out) {{\n\
             __shared__ float s[1024];\n\
             int t = threadIdx.x;\n\
             {alias}\n\
             s[2 * t] = t;\n\
             s[2 * t + 1] = t;\n\
             __syncthreads();\n\
             out[t] = s[t];\n\
             }}\n\
             void run(float *o) {{ k<<<1, 256>>>(o); }}\n"
        );
        analyze(src.as_bytes(), &Modern, &Options::default())
            .reports
            .iter()
            .filter(|r| r.array == "s" && r.op == Op::Store)
            .map(|r| r.width)
            .collect()
    };
    assert_eq!(widths(""), vec![8]);
    assert_eq!(widths("volatile float *vs = s; vs[0] = 1;"), vec![4, 4, 4]);
    assert_eq!(
        widths("volatile int *slot = (volatile int *)(s + 616); *slot = 1;"),
        vec![4, 8],
        "the slot's own 4-byte store, then the merged pair"
    );
}

/// cuda-samples' shfl_scan: the four fields of a `uint4` read through a
/// reference, each passed through a function that builds a `uchar4` with
/// `make_uchar4`, are one 16-byte load (measured: `LDG.E.128` on the first
/// field's line). A vector constructor is no call that stops merging.
#[test]
fn fields_merge_across_a_vector_constructor() {
    let src = r#"
__device__ uchar4 split(unsigned in) {
    return make_uchar4(in & 0xff, (in >> 8) & 0xff, (in >> 16) & 0xff, in >> 24);
}
__global__ void k(const uint4 *in, unsigned *out) {
    const uint4 &data = in[threadIdx.x];
    const uchar4 a = split(data.x);
    const uchar4 b = split(data.y);
    const uchar4 c = split(data.z);
    const uchar4 d = split(data.w);
    out[threadIdx.x] = a.x + b.y + c.z + d.w;
}
int main() { k<<<1, 256>>>(0, 0); }
"#;
    let a = analyze(src.as_bytes(), &Modern, &Options::default());
    let loads: Vec<&AccessReport> = a
        .reports
        .iter()
        .filter(|r| r.array == "in" && r.op == Op::Load)
        .collect();
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0].width, 16);
    assert_ne!(
        loads[0].status,
        Status::Unknown,
        "{:?}",
        loads[0].unknown_reason
    );
}

/// Which fields of one aligned element nvcc reads with one load: a load
/// may cover bytes it does not use, one field's worth at most (measured,
/// `fixtures/groundtruth/align/gaps.cu`: `.x .y .w` of a `float4` one
/// `LDG.E.128`; `.x .z`, `.x .w`, `.y .w` two `LDG.E`; `.x .y .z` of a
/// `uchar4` one 4-byte load).
#[test]
fn a_load_covers_at_most_one_unused_field() {
    let widths = |ty: &str, fields: &[&str]| -> Vec<u32> {
        let reads: Vec<String> = fields.iter().map(|f| format!("in[i].{f}")).collect();
        let src = format!(
            "__global__ void k(const {ty} *in, float *out) {{\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             out[i] = {};\n}}\n\
             int main() {{ k<<<1, 256>>>(0, 0); }}\n",
            reads.join(" * ")
        );
        let a = analyze(src.as_bytes(), &Modern, &Options::default());
        a.reports
            .iter()
            .filter(|r| r.array == "in")
            .map(|r| r.width)
            .collect()
    };
    assert_eq!(widths("float4", &["x", "y", "w"]), vec![16]);
    assert_eq!(widths("float4", &["x", "y", "z", "w"]), vec![16]);
    assert_eq!(widths("float4", &["x", "y"]), vec![8]);
    assert_eq!(widths("float4", &["x", "z"]), vec![4, 4]);
    assert_eq!(widths("float4", &["x", "w"]), vec![4, 4]);
    assert_eq!(widths("float4", &["y", "w"]), vec![4, 4]);
    assert_eq!(widths("uchar4", &["x", "y", "z"]), vec![4]);
    assert_eq!(widths("uchar4", &["x", "w"]), vec![1, 1]);
}

/// Where a per-thread array lives (`nvcc/registers.rs`): a loop bounded by
/// a count loaded from memory is a loop of run-time trip count (the array
/// stored and read back in two such loops is in local memory, decided); a
/// loop whose condition also reads data besides its bound (a top-k
/// insertion) leaves the placement unknown (measured in local memory, not
/// modelled); a constant loop keeps it in registers (no access left).
#[test]
fn per_thread_arrays_are_placed_by_their_loops() {
    let placement = |body: &str| -> Vec<warplint_analyzer::ir::Placement> {
        let src = format!(
            "__global__ void k(const int *counts, const float *in, float *out) {{\n\
             float a[8];\n{body}\n}}\n\
             int main() {{ k<<<4, 256>>>(0, 0, 0); }}\n"
        );
        let r = analyze(src.as_bytes(), &Modern, &Options::default());
        r.program.kernels[0]
            .locals
            .iter()
            .map(|l| l.placement.clone())
            .collect()
    };
    use warplint_analyzer::ir::Placement;
    let loaded = placement(
        "int cnt = counts[blockIdx.x];\n\
         for (int i = 0; i < cnt; i++) a[i] = in[i * 256 + threadIdx.x];\n\
         float s = 0;\n\
         for (int i = 0; i < cnt; i++) s += a[cnt - 1 - i];\n\
         out[threadIdx.x] = s;",
    );
    assert!(
        matches!(loaded.as_slice(), [Placement::Memory { .. }]),
        "{loaded:?}"
    );
    let topk = placement(
        "for (int i = 0; i < 8; i++) a[i] = 1e30f;\n\
         float v = in[threadIdx.x];\n\
         int j = 7;\n\
         while (j > 0 && a[j - 1] > v) { a[j] = a[j - 1]; j--; }\n\
         a[j] = v;\n\
         out[threadIdx.x] = a[0];",
    );
    assert_eq!(topk, vec![Placement::Unknown]);
    let constant = placement(
        "for (int i = 0; i < 8; i++) a[i] = in[i * 256 + threadIdx.x];\n\
         float s = 0;\n\
         for (int i = 0; i < 8; i++) s += a[7 - i];\n\
         out[threadIdx.x] = s;",
    );
    assert_eq!(constant, vec![Placement::Registers]);
}

/// The executions and predicated-off executions per block of the store to
/// `a` in `body`, followed by `after` (1 block of 8 warps, `n` = 64: the
/// first 2 warps take `t < n`).
fn issued(body: &str, after: &str) -> (f64, f64) {
    let r = store_to_a(body, after);
    (r.executions, r.predicated_off)
}

/// The executions per block that issue the store to `a` with no lane
/// active if nvcc predicates its side, where that is undecided.
fn undecided(body: &str, after: &str) -> f64 {
    store_to_a(body, after).undecided_off
}

/// The report of the store to `a` (see [`issued`]).
fn store_to_a(body: &str, after: &str) -> AccessReport {
    let src = format!(
        "__global__ void k(float *a, const float *b, float *out, int n, int m) {{\n\
         int t = threadIdx.x;\n{body}\n{after}\n}}\n\
         void run(float *a, const float *b, float *o) {{ k<<<1, 256>>>(a, b, o, 64, m_of()); }}\n"
    );
    analyze(src.as_bytes(), &Modern, &Options::default())
        .reports
        .into_iter()
        .find(|r| r.array == "a" && r.op == Op::Store)
        .expect("the store to a")
}

/// Which `if` sides nvcc predicates, as measured
/// (`fixtures/groundtruth/sm_90/predication*.cu`): the 6 warps whose lanes
/// all fail a predicated side still issue its instruction; a side nvcc
/// branches around is issued by the 2 warps with an active lane only.
#[test]
fn an_if_side_is_predicated_only_where_measured() {
    let out = "out[t] = 1.0f;";
    let predicated = (2.0, 6.0);
    let branched = (2.0, 0.0);
    assert_eq!(issued("if (t < n) a[t] = 0.0f;", out), predicated);
    let two = "if (t < n) { a[t] = 0.0f; a[t + 256] = 1.0f; }";
    assert_eq!(issued(two, out), predicated);
    let nested = "if (t < n) { if (t < 32) a[t * 2] = 0.0f; }";
    assert_eq!(issued(nested, out), (1.0, 7.0), "one warp takes both");
    let else_side = "if (t >= n) out[t + 256] = 1.0f; else a[t * 2] = 0.0f;";
    assert_eq!(issued(else_side, out), predicated);
    // Up to about eight instructions: six stores of zero (and the base's
    // two), a vector constructor; four stores of four constants are nine.
    let six = (0..6)
        .map(|i| format!("a[t + {}] = 0.0f;", 256 * i))
        .collect::<String>();
    assert_eq!(issued(&format!("if (t < n) {{ {six} }}"), out), predicated);
    let vector = "if (t < n) ((float4 *)a)[t] = make_float4(1, 2, 3, 4);";
    assert_eq!(issued(vector, out), predicated);
    assert_eq!(
        issued("if (t < n) a[t] = fminf((float)t, 3.0f);", out),
        predicated
    );
    // Two stores to each of two arrays, eight: measured predicated and
    // branched around, undecided; at seven, predicated.
    let two =
        "if (t < n) { a[t] = 0.0f; a[t + 256] = 0.0f; out[t + 256] = 0.0f; out[t + 512] = 0.0f; }";
    assert_eq!(issued(two, out), branched);
    assert_eq!(undecided(two, out), 6.0);
    let seven = "if (t < n) { a[t] = 0.0f; a[t + 256] = 0.0f; out[t + 256] = 0.0f; }";
    assert_eq!(issued(seven, out), predicated);
    assert_eq!(undecided(seven, out), 0.0);
    let four = "if (t < n) { a[t] = 0; a[t + 256] = 1; a[t + 512] = 2; a[t + 768] = 3; }";
    assert_eq!(issued(four, out), branched);
    let arith = "if (t < n) a[t] = t * 1.5f + t * t * 0.5f - t * 0.25f + 3.0f * t;";
    assert_eq!(issued(arith, out), branched);
    // A global load, a call, a division, a loop on either side, a nested
    // `if` beside other work, an `else if`.
    assert_eq!(issued("if (t < n) a[t] = expf((float)t);", out), branched);
    assert_eq!(issued("if (t < n) a[t] = t / n;", out), branched);
    let beside = "if (t < n) { a[t + 512] = 1.0f; if (t < 32) a[t] = 0.0f; }";
    assert_eq!(issued(beside, out).1, 0.0);
    let chain = "if (t < 32) out[t + 256] = 0.0f; else if (t < n) a[t] = 1.0f;";
    assert_eq!(issued(chain, out).1, 0.0);
    assert_eq!(issued("if (t < n) a[t] = b[t * 2];", out), branched);
    let looped = "if (t < n) a[t] = 1.0f; else { float s = 0; for (int i = 0; i < m; i++) s += b[i]; out[t] = s; }";
    assert_eq!(issued(looped, out), branched);
    assert_eq!(issued("if (t < n) a[t] = b[0] / b[1];", out), branched);
    // After an early `return` (measured, `predication_return.cu`): the 7
    // warps with a thread left issue it; the 8th returned whole.
    let early = "if (t >= 200) return; if (t < n) a[t] = 0.0f;";
    assert_eq!(issued(early, out), (2.0, 5.0));
    // The kernel's last statement: nvcc exits the failing threads. Of a
    // last `if`/`else` it predicates one side, measured to be either:
    // both are undecided, the record the branched reading.
    assert_eq!(issued("if (t < n) a[t] = 0.0f;", ""), branched);
    assert_eq!(undecided("if (t < n) a[t] = 0.0f;", ""), 0.0);
    let tail_else = "if (t < n) out[t + 256] = 1.0f; else a[t] = 0.0f;";
    assert_eq!(issued(tail_else, ""), (6.0, 0.0));
    assert_eq!(undecided(tail_else, ""), 2.0);
    let tail_then = "if (t < n) a[t] = 0.0f; else out[t + 256] = 1.0f;";
    assert_eq!(issued(tail_then, ""), branched);
    assert_eq!(undecided(tail_then, ""), 6.0);
    assert_eq!(undecided(tail_then, out), 0.0, "not at the end: a branch");
    // A constant loop in the side is unrolled, each copy predicated
    // (`const_loop2_in_side`); a loop of run-time trip count is branched
    // around, and so are both sides of an `if`/`else` with a loop.
    let unrolled = "if (t < n) { for (int k = 0; k < 2; k++) a[t + 256 * k] = k; }";
    assert_eq!(issued(unrolled, out), (4.0, 12.0));
    let runtime = "if (t < n) { for (int k = 0; k < m; k++) a[t + 256 * k] = k; }";
    assert_eq!(issued(runtime, out).1, 0.0);
    let ifelse =
        "if (t < n) { for (int k = 0; k < 2; k++) a[t + 256 * k] = k; } else out[t] = 2.0f;";
    assert_eq!(issued(ifelse, out).1, 0.0);
    // Unrolled eight times, the copies are too many.
    let long = "if (t < n) { for (int k = 0; k < 8; k++) a[t + 256 * k] = k; }";
    assert_eq!(issued(long, out).1, 0.0);
    // A barrier after it is code after it.
    assert_eq!(
        issued("if (t < n) a[t] = 0.0f;", "__syncthreads();"),
        predicated
    );
    // In a loop of run-time trip count nvcc unrolls by four and branches
    // around the iterations' sides together; a constant loop it unrolls
    // whole, each side predicated.
    let runtime = "for (int i = 0; i < m; i++) { if (t < n) a[t + 256 * i] = i; }";
    assert_eq!(issued(runtime, out).1, 0.0);
    let constant = "for (int i = 0; i < 4; i++) { if (t < n * i) a[t + 256 * i] = i; }";
    assert_eq!(
        issued(constant, out),
        (12.0, 20.0),
        "0, 2, 4, 6 of 8 warps at i = 0..3"
    );
    // A condition the constant loop does not change: unswitched.
    let invariant = "for (int i = 0; i < 4; i++) { if (t < n) a[t + 256 * i] = i; }";
    assert_eq!(issued(invariant, out).1, 0.0);
}

/// The stores to `a` of `body` then `after` (1 block of 8 warps, `n` = 64):
/// each one's executions per block.
fn stores_to_a(body: &str, after: &str) -> Vec<f64> {
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         int t = threadIdx.x;\n{body}\n{after}\n}}\n\
         void run(float *a, float *o) {{ k<<<1, 256>>>(a, o, 64); }}\n"
    );
    analyze(src.as_bytes(), &Modern, &Options::default())
        .reports
        .into_iter()
        .filter(|r| r.array == "a" && r.op == Op::Store)
        .map(|r| r.executions)
        .collect()
}

/// An `if`/`else` whose sides store to one array is one store at a
/// selected address, run by every warp (measured, `nvcc/sink.rs`), the
/// sides paired from their ends; not where a side overwrites a store
/// just made.
#[test]
fn an_if_elses_alike_sides_sink_into_one_access() {
    let pair = "if (t < n) a[t] = 1.0f; else a[t + 256] = 2.0f;";
    assert_eq!(stores_to_a(pair, "out[t] = 1.0f;"), vec![8.0]);
    assert_eq!(stores_to_a(pair, ""), vec![8.0], "at the kernel's end too");
    // Paired from the ends: the `then` side's second store and the
    // `else` store are one; the first stays on its side.
    let uneven = "if (t < n) { a[t] = 0.0f; a[t + 256] = 1.0f; } else a[t + 512] = 2.0f;";
    assert_eq!(stores_to_a(uneven, "out[t] = 1.0f;"), vec![2.0, 8.0]);
    // Directly in another `if`'s block: two branches (fdtd2d); after an
    // early `return`, one store.
    let nested = format!("if (t < 128) {{ {pair} }}");
    assert_eq!(stores_to_a(&nested, "out[t] = 1.0f;").len(), 2);
    let early = format!("if (t >= 200) return; {pair}");
    assert_eq!(stores_to_a(&early, "out[t] = 1.0f;").len(), 1);
    // A store over what the thread stored just before stays apart.
    let over = "a[t] = 3.0f; if (t < n) a[t] = 1.0f; else a[t + 256] = 2.0f;";
    assert_eq!(stores_to_a(over, "out[t] = 1.0f;").len(), 3);
}
