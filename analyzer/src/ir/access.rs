//! Memory accesses as the source writes them ([`Access`]), and the ones
//! nvcc emits no instruction for ([`Removed`], with why).

use super::{Expr, Guard, Op, Span};
use crate::finding::UnknownReason;

/// A memory access in the source.
#[derive(Clone, Debug)]
pub struct Access {
    pub obj: usize,
    pub op: Op,
    /// Bytes moved by one lane (1, 2, 4, 8 or 16).
    pub width: u32,
    /// Byte offset from the object's base.
    pub offset: Expr,
    pub guards: Vec<Guard>,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
    pub span: Span,
    /// Source text of the access expression.
    pub text: String,
    /// Accesses with different numbers have something between them that
    /// certainly keeps nvcc from merging them (a barrier or fence, a call to
    /// a math function whose implementation branches); see
    /// `nvcc/fuse.rs`.
    pub region: u32,
    /// Branches, loops and calls the engine cannot see into, counted up to
    /// this access: a different count means one lies between two accesses,
    /// and whether nvcc still merges them is not known (an `if` may become
    /// a select, a constant loop may unroll).
    pub undecided: u32,
    /// Set when the cost cannot be known for a reason found before the
    /// engine runs (whether nvcc merges it with a neighbour).
    pub unknown: Option<UnknownReason>,
    /// Iterations of an unrolled loop nvcc merges into this access
    /// (`nvcc/unroll.rs`; 1 when none): the source moves `width /
    /// unrolled` bytes, and the merge holds only while the address stays
    /// aligned to `width`.
    pub unrolled: u32,
    /// The call through which the `__device__` function holding this
    /// access was inlined (the innermost one; `None` in the kernel's own
    /// body).
    pub inlined_at: Option<Inlined>,
    /// The loop nvcc hoists this load out of (`nvcc/hoist.rs`): it runs
    /// once per entry of that loop, no longer in its `loops`.
    pub hoisted: Option<Hoisted>,
    /// A store that is the whole body of an `if` without `else` (`if (c)
    /// x[i] = 0;`): where the thread has just stored the same bytes, nvcc
    /// stores a select of the two values instead, unconditionally, counted
    /// on the `if`'s line, this span (`nvcc/overwrite.rs`).
    pub select_at: Option<Span>,
    /// Barriers, `__syncwarp()`s, fences and calls the analysis cannot see
    /// lowered before this access: two accesses with the same epoch in the
    /// same loop iteration have nothing between them that orders one
    /// lane's access against another's (`symbolic/races.rs`).
    pub epoch: u32,
    /// Made by a cache-hinted intrinsic (`__ldg`, `__stcs`, …): its own
    /// instruction, never merged with a neighbour (measured: two `__ldg`s
    /// of `.x` and `.y` stay two `LDG.E.CONSTANT`).
    pub hinted: bool,
    /// The access sits in `if` sides nvcc predicates rather than branches
    /// around, from guard `j` of `guards` on (each later guard is such a
    /// side's): every warp that reaches guard `j` issues the instruction,
    /// also one with no lane left active, at no cost
    /// (`frontend/lower/predicate.rs`; measured,
    /// `fixtures/groundtruth/sm_90/predication.cu`).
    pub predicated_from: Option<u32>,
    /// nvcc was measured both to predicate a side like this one and to
    /// branch around it: the warps that would issue [`Self::predicated_from`]'s
    /// instruction with no lane active are counted apart, neither claimed
    /// nor denied (`AccessReport::undecided_off`).
    pub predication_undecided: bool,
}

/// A load nvcc hoists out of a loop: the loop, and the line Nsight Compute
/// counts the load on (the loop's, or the kernel's first statement's when
/// the load is the kernel's first memory instruction; measured,
/// `fixtures/groundtruth/sm_90/hoistline.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hoisted {
    pub from: Span,
    pub counted: Span,
}

/// Where an access's `__device__` function was inlined.
#[derive(Clone, Debug, PartialEq)]
pub struct Inlined {
    /// The call expression.
    pub call: Span,
    pub callee: String,
    /// The kernel runs this function's body more than once: the call sits
    /// in a loop, or the kernel calls the function from several places.
    /// nvcc then gives part of the copies' instructions the call's line
    /// (it merged or moved them across copies), and Nsight Compute counts
    /// them there (cuda-samples histogram64's `addByte` calls,
    /// sortingNetworks' `Comparator` in its loops); a function inlined
    /// once keeps its lines (`fixtures/groundtruth/sm_90/fields_of_vectors.cu`).
    pub repeated: bool,
}

/// A source access nvcc emits no instruction for.
#[derive(Clone, Debug, PartialEq)]
pub struct Removed {
    pub obj: usize,
    pub op: Op,
    pub span: Span,
    pub text: String,
    pub why: RemovedWhy,
}

/// Why nvcc emits no instruction for an access.
#[derive(Clone, Debug, PartialEq)]
pub enum RemovedWhy {
    /// Merged into the wider access at `into` (neighbouring fields or
    /// elements, an unrolled loop).
    Merged { into: Span },
    /// The value is already in a register: loaded at `from` with nothing
    /// between that may write it.
    Reloaded { from: Span },
    /// The value the thread stored at `from` (on every path).
    Forwarded { from: Span },
    /// The compiled code has no instruction of its space and operation on
    /// its line (`nvcc::sass`): nvcc merged it into a neighbour on another
    /// line, reused a value, or proved it dead. `compiler`: which built
    /// the SASS (`None`: a listing given).
    NotInSass { compiler: Option<String> },
    /// An element of a per-thread array nvcc keeps in registers
    /// (`nvcc::registers`): no memory instruction.
    Registers,
}

impl RemovedWhy {
    /// The stable name (`report`'s `why`).
    pub fn kind(&self) -> &'static str {
        match self {
            RemovedWhy::Merged { .. } => "merged",
            RemovedWhy::Reloaded { .. } => "reloaded",
            RemovedWhy::Forwarded { .. } => "forwarded",
            RemovedWhy::NotInSass { .. } => "not-in-sass",
            RemovedWhy::Registers => "registers",
        }
    }

    /// Where the instruction that stands for it is, when known.
    pub fn at(&self) -> Option<Span> {
        match self {
            RemovedWhy::Merged { into } => Some(*into),
            RemovedWhy::Reloaded { from } | RemovedWhy::Forwarded { from } => Some(*from),
            RemovedWhy::NotInSass { .. } | RemovedWhy::Registers => None,
        }
    }
}

/// Where nvcc puts a per-thread array (`nvcc::registers`), and why.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// Every index is a constant once nvcc unrolls the loops of constant
    /// trip count, or only the stores' (or only the loads') are not: in
    /// registers.
    Registers,
    /// A store and a load index it with values known only at run time: it
    /// is addressed, in local memory. The two accesses, and the loop of
    /// run-time trip count one of them depends on, if any.
    Memory {
        store: Span,
        load: Span,
        runtime_loop: Option<Span>,
    },
    /// Larger than the registers a thread has
    /// (`nvcc::registers::THREAD_REGISTERS` words): part of it spills to
    /// local memory.
    TooLarge { words: u64 },
    /// An index depends on a loop whose trip count is neither a constant
    /// nor clearly set at run time: not known.
    Unknown,
}

/// A per-thread array's placement.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalArray {
    pub obj: usize,
    /// The model's (`nvcc::registers`).
    pub placement: Placement,
    /// What the compiled code says, where a listing was there
    /// (`nvcc::sass`): it decides over the model.
    pub sass: Option<SassPlacement>,
}

/// Where the SASS puts a per-thread array: the local-memory instructions
/// (`LDL`, `STL`) on the lines of its accesses; none: in registers.
#[derive(Clone, Debug, PartialEq)]
pub struct SassPlacement {
    /// Which compiler built the listing (`None`: a listing given).
    pub compiler: Option<String>,
    /// Each access with local instructions on its line, and their opcodes.
    pub local: Vec<(Span, Vec<String>)>,
}
