//! `#[warplint::check(...)]`: warplint's analysis of one Rust GPU kernel
//! (Rust-CUDA `#[kernel]` or CubeCL `#[cube]`) while `cargo build` compiles
//! it. A finding that holds for every value (warplint's `exact`: no
//! assumption) is a compile error at the access, or a warning
//! (`level = "warn"`), with its help and the fix warplint re-checked.
//!
//! ```ignore
//! // Cargo.toml: warplint = { package = "warplint-macros", version = "0.1" }
//! #[warplint::check(block = (32, 8, 1))]
//! #[kernel]
//! pub unsafe fn transpose(input: &[f32], output: *mut f32, n: usize) { ... }
//! ```
//!
//! Arguments (all optional but `block`, which a kernel's launch would give):
//! - `block = (x, y, z)`, `(x, y)` or `x`; `grid = ...` the same;
//! - `arch = "sm_90"` (default `sm_90`);
//! - `level = "error"` (default) or `"warn"`;
//! - `params(n = 1024, ...)`: values of scalar parameters (a slice's length
//!   is `"a.len()" = 1024`);
//! - `consts(TILE = 32, ...)`: the `usize` constants the kernel reads from
//!   outside its body (an attribute sees only the function).
//!
//! The item is passed through unchanged. The attribute marks the function
//! as a kernel for the analysis when it has no `#[kernel]` or `#[cube]`.
//! Findings that rest on an assumption (a value not given, data) are left
//! to `warplint check`, which says what they assume.
//!
//! The work is in [`expand`]: proc_macro2 tokens in and out, so the unit
//! tests run it without a compiler.

mod args;
mod expand;
mod flat;

#[proc_macro_attribute]
pub fn check(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::expand(attr.into(), item.into()).into()
}
