//! What nvcc does that the analysis must do the same way: the macros it
//! defines before the first line of a translation unit ([`predefined`]),
//! and the code it generates for neighbouring field accesses, which it
//! merges into one wider access (`fuse`), for neighbouring shared elements
//! (`neighbours`), for loops it unrolls over
//! consecutive shared-memory elements (`unroll`), the loads it does
//! not emit again (`reload`), the stores it turns into one store of a
//! select (`overwrite`), the two sides of an `if`/`else` it sinks into
//! one access at a selected address (`sink`), and the per-thread arrays
//! it keeps in registers
//! (`registers`). Every fact here is nvcc's, for
//! the CUDA release warplint stands in for (see [`predefined::CUDA_VERSION`]).

pub(crate) mod disjoint;
pub(crate) mod fuse;
pub(crate) mod hoist;
pub(crate) mod neighbours;
pub(crate) mod overwrite;
pub mod predefined;
pub(crate) mod registers;
pub(crate) mod reload;
pub mod sass;
pub(crate) mod sink;
pub(crate) mod unroll;

pub use predefined::predefined_macros;
pub use registers::THREAD_REGISTERS;

/// Removes the accesses `drop` marks, saying why in `Kernel::removed`: the
/// hardware runs no instruction for them (merged into a neighbour, or a
/// value already in a register).
fn drop_marked(k: &mut crate::ir::Kernel, drop: &[Option<crate::ir::RemovedWhy>]) {
    for (a, why) in k.accesses.iter().zip(drop) {
        if let Some(why) = why {
            k.removed.push(crate::ir::Removed {
                obj: a.obj,
                op: a.op,
                span: a.span,
                text: a.text.clone(),
                why: why.clone(),
            });
        }
    }
    let mut i = 0;
    k.accesses.retain(|_| {
        i += 1;
        drop.get(i - 1).is_none_or(Option::is_none)
    });
}
