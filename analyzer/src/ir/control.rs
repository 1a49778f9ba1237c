//! Control flow the rules look at as such, not through memory: a barrier
//! every thread of a block must reach (`__syncthreads()`, a block group's
//! `sync()`), with the conditions and loops a thread reaches it under (the
//! engine's `symbolic/reach.rs` counts, per thread, how many times each
//! one does); and an `if`/`else` with work on both sides, whose condition
//! the engine evaluates per warp (`symbolic/branches.rs`).

use super::{Expr, Guard, Inlined, Span};

#[derive(Clone, Debug)]
pub struct Barrier {
    /// The call.
    pub span: Span,
    /// The call's text (`__syncthreads()`, `block.sync()`).
    pub text: String,
    /// The conditions a thread reaches it under, each with where it is
    /// written ([`Guard::site`]).
    /// A thread failing one marked [`Guard::exits`] has returned from the
    /// kernel: no barrier waits for it.
    pub guards: Vec<Guard>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
    /// The call through which the function holding it was inlined.
    pub inlined_at: Option<Inlined>,
}

/// An `if` with an `else`, each side holding work nvcc branches around
/// rather than predicates (measured, `fixtures/lints/CF001/MEASURED.md`):
/// a loop whose trip count is not a constant, a call or division whose
/// code branches.
#[derive(Clone, Debug)]
pub struct Branch {
    /// The condition.
    pub span: Span,
    pub text: String,
    pub cond: Expr,
    /// The conditions the `if` is reached under.
    pub guards: Vec<Guard>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
    pub inlined_at: Option<Inlined>,
}
