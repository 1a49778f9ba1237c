//! The expansion on kernels written as tokens (proc_macro2 runs outside
//! the compiler here): what it adds, and where.

use std::str::FromStr;

use proc_macro2::TokenStream;

use super::expand;

fn ts(s: &str) -> TokenStream {
    TokenStream::from_str(s).unwrap()
}

/// The messages of the `compile_error!`s (or deprecation notes) added
/// after the item.
fn added(out: &TokenStream, item: &str) -> String {
    let all = out.to_string();
    let item = ts(item).to_string();
    assert!(
        all.starts_with(&item),
        "the item is passed through first:\n{all}"
    );
    all[item.len()..].to_string()
}

const TRANSPOSE: &str = r#"
#[kernel]
pub unsafe fn transpose(input: &[f32], output: *mut f32, n: usize) {
    #[address_space(shared)]
    static mut TILE_BUF: [[f32; 32]; 32] = [[0.0; 32]; 32];
    let tx = thread::thread_idx_x() as usize;
    let ty = thread::thread_idx_y() as usize;
    let x = thread::block_idx_x() as usize * 32 + tx;
    let y = thread::block_idx_y() as usize * 32 + ty;
    TILE_BUF[ty][tx] = input[y * n + x];
    thread::sync_threads();
    *output.add(y * n + x) = TILE_BUF[tx][ty];
}
"#;

/// The column read of a 32 x 32 tile under a 32 x 8 block is a proven
/// 32-way conflict: one error, with the padding warplint re-checked.
#[test]
fn a_proven_conflict_is_a_compile_error_with_its_fix() {
    let out = expand(ts("block = (32, 8, 1), params(n = 1024)"), ts(TRANSPOSE));
    let added = added(&out, TRANSPOSE);
    assert_eq!(added.matches("compile_error").count(), 1, "{added}");
    assert!(added.contains("warplint SM001"), "{added}");
    assert!(
        added.contains("32-way bank conflict on `TILE_BUF`"),
        "{added}"
    );
    assert!(added.contains("fix (re-checked by warplint)"), "{added}");
    assert!(added.contains("33"), "the padded row: {added}");
}

/// Padded, the same kernel is clean: nothing is added.
#[test]
fn a_clean_kernel_adds_nothing() {
    let padded = TRANSPOSE.replace(
        "[[f32; 32]; 32] = [[0.0; 32]; 32]",
        "[[f32; 33]; 32] = [[0.0; 33]; 32]",
    );
    let out = expand(ts("block = (32, 8, 1), params(n = 1024)"), ts(&padded));
    assert_eq!(added(&out, &padded), "");
}

/// `level = "warn"`: a used deprecated item carries the message.
#[test]
fn warn_level_gives_a_deprecation_warning() {
    let out = expand(
        ts(r#"block = (32, 8, 1), params(n = 1024), level = "warn""#),
        ts(TRANSPOSE),
    );
    let added = added(&out, TRANSPOSE);
    assert!(!added.contains("compile_error"), "{added}");
    assert!(added.contains("deprecated"), "{added}");
    assert!(added.contains("32-way bank conflict"), "{added}");
}

/// With no block given, the cost rests on the block shapes tried: an
/// assumption, left to `warplint check`.
#[test]
fn a_finding_that_rests_on_an_assumption_is_not_an_error() {
    let out = expand(ts("params(n = 1024)"), ts(TRANSPOSE));
    assert_eq!(added(&out, TRANSPOSE), "");
}

/// A constant the kernel reads from outside is given with `consts`; the
/// function without `#[kernel]` is taken as one.
#[test]
fn consts_and_an_unmarked_function() {
    let item = r#"
pub unsafe fn block_copy(input: &[f32], output: *mut f32) {
    let tile = shared_array![f32; 1024];
    let tx = thread::thread_idx_x() as usize;
    *tile.add(tx * STRIDE) = input[tx];
    thread::sync_threads();
    *output.add(tx) = *tile.add(tx * STRIDE);
}
"#;
    let out = expand(ts("block = 32, consts(STRIDE = 32)"), ts(item));
    let added = added(&out, item);
    assert_eq!(added.matches("compile_error").count(), 2, "{added}");
    assert!(added.contains("32-way bank conflict on `tile`"), "{added}");
    let odd = expand(ts("block = 32, consts(STRIDE = 33)"), ts(item));
    assert_eq!(super::tests::added(&odd, item), "");
}

/// A CubeCL kernel: the `#[cube]` attribute marks it. Over a generic
/// element type the cost rests on the types tried: not an error.
#[test]
fn a_cubecl_kernel() {
    let item = r#"
#[cube(launch)]
fn strided(input: &Array<f32>, output: &mut Array<f32>) {
    output[ABSOLUTE_POS * 32] = input[ABSOLUTE_POS];
}
"#;
    let out = expand(ts("block = 256, grid = 4"), ts(item));
    let added = added(&out, item);
    assert!(added.contains("warplint GM001"), "{added}");
    assert!(added.contains("uncoalesced store of `output`"), "{added}");
    let generic = item
        .replace("strided(", "strided<F: Float>(")
        .replace("Array<f32>", "Array<F>");
    let out = expand(ts("block = 256, grid = 4"), ts(&generic));
    assert_eq!(super::tests::added(&out, &generic), "");
}

/// What cannot be checked says so at the attribute, and the item stays.
#[test]
fn misuse_is_an_error_that_says_what_to_write() {
    let s = "struct S;";
    let out = expand(ts("block = 32"), ts(s));
    assert!(added(&out, s).contains("goes on a kernel function"));
    let f = "fn k() {}";
    let out = expand(ts("block = (32, 0)"), ts(f));
    assert!(added(&out, f).contains("positive"));
    let out = expand(ts(r#"block = 32, arch = "sm_99""#), ts(f));
    assert!(
        added(&out, f).contains("not an architecture"),
        "{}",
        added(&out, f)
    );
}
