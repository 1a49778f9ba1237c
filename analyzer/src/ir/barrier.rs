//! A barrier every thread of a block must reach (`__syncthreads()`, a
//! block group's `sync()`): where it is, and the conditions and loops a
//! thread reaches it under (the engine's `symbolic/reach.rs` counts, per
//! thread, how many times each one does).

use super::{Guard, Inlined, Span};

#[derive(Clone, Debug)]
pub struct Barrier {
    /// The call.
    pub span: Span,
    /// The call's text (`__syncthreads()`, `block.sync()`).
    pub text: String,
    /// The conditions a thread reaches it under, each with where it is
    /// written ([`Guard::site`]).
    pub guards: Vec<Guard>,
    /// Per guard: a thread that fails it has returned from the kernel
    /// (it exited, and no barrier waits for it: the guide's rule is for
    /// threads that go on).
    pub exits: Vec<bool>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
    /// The call through which the function holding it was inlined.
    pub inlined_at: Option<Inlined>,
}
