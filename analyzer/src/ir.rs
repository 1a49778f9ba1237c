//! The intermediate representation the front end builds and the engine reads.
//!
//! A [`Kernel`] is one instantiation of a `__global__` function with its
//! `__device__` callees inlined: its memory objects, its accesses (each with
//! a symbolic byte offset, the guards that must hold for a lane to execute
//! it, and the loops around it) and the loops' carried variables.

use std::fmt;
use std::rc::Rc;

use crate::budget;
use crate::finding::{NoteKind, Origin};

mod access;
mod control;
mod launch;
pub use access::{
    Access, Hoisted, Inlined, LocalArray, Placement, Removed, RemovedWhy, SassPlacement,
};
pub use control::{Barrier, Branch};
pub use launch::*;

/// A source location: byte offsets plus 1-based line and column (columns
/// count characters, like ruff and rustc).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Span {
    /// Which file: 0 is the file analysed, `n` is [`Program::files`]`[n - 1]`
    /// (a header it includes).
    pub file: u32,
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub const ALL: [Dim; 3] = [Dim::X, Dim::Y, Dim::Z];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self as usize]
    }
}

/// CUDA built-in variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    ThreadIdx(Dim),
    BlockIdx(Dim),
    BlockDim(Dim),
    GridDim(Dim),
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, d) = match self {
            Builtin::ThreadIdx(d) => ("threadIdx", d),
            Builtin::BlockIdx(d) => ("blockIdx", d),
            Builtin::BlockDim(d) => ("blockDim", d),
            Builtin::GridDim(d) => ("gridDim", d),
        };
        write!(f, "{n}.{}", d.name())
    }
}

/// A leaf of a symbolic expression whose value the engine supplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Builtin(Builtin),
    /// A scalar kernel parameter, by index into [`Kernel::params`].
    Param(u32),
    /// A loop-carried variable, by index into [`Kernel::loop_vars`].
    LoopVar(u32),
    /// A value the analyzer cannot know, by index into [`Kernel::unknowns`].
    Unknown(u32),
    /// An expression that exceeded a size budget.
    TooComplex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
    /// CUDA's bit intrinsics on the low `bits` (32: `__popc`, `__clz`,
    /// `__ffs`; 64: their `ll` forms): set bits, leading zero bits, the
    /// 1-based position of the lowest set bit (0 for 0).
    Popc(u8),
    Clz(u8),
    Ffs(u8),
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    LAnd,
    LOr,
    Min,
    Max,
}

#[derive(Debug)]
pub enum ExprKind {
    Const(i64),
    Atom(Atom),
    Un(UnOp, Expr),
    Bin(BinOp, Expr, Expr),
    Select(Expr, Expr, Expr),
}

struct Node {
    kind: ExprKind,
    size: u32,
    depth: u32,
    /// A structural hash of the tree (equal trees, equal hashes), made from
    /// the children's when the node is: [`Expr::digest`].
    hash: u64,
}

impl std::fmt::Debug for Node {
    // The derived form, without the hash.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("kind", &self.kind)
            .field("size", &self.size)
            .field("depth", &self.depth)
            .finish()
    }
}

/// An immutable, shared symbolic integer expression (C semantics on i64:
/// truncating division, comparisons yield 0 or 1).
#[derive(Clone)]
pub struct Expr(Rc<Node>);

thread_local! {
    /// Set while [`with_expr_digests`] runs.
    static DIGESTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every [`Expr`] printed by `Debug` as its digest: a
/// kernel's `Debug` text then stands for it (the kernel memo's key)
/// without writing out each expression tree, shared subtrees again and
/// again.
pub(crate) fn with_expr_digests<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            DIGESTS.with(|d| d.set(self.0));
        }
    }
    let _reset = Reset(DIGESTS.with(|d| d.replace(true)));
    f()
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if DIGESTS.with(std::cell::Cell::get) {
            write!(f, "#{:016x}", self.0.hash)
        } else {
            f.debug_tuple("Expr").field(&self.0).finish()
        }
    }
}

/// The structural hash of a node of `kind` (see [`Node::hash`]).
fn node_hash(kind: &ExprKind) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = foldhash::quality::FixedState::with_seed(0x51_7cc1_b727_220a).build_hasher();
    match kind {
        ExprKind::Const(v) => (0u8, v).hash(&mut h),
        ExprKind::Atom(a) => (1u8, a).hash(&mut h),
        ExprKind::Un(op, a) => (2u8, op, a.0.hash).hash(&mut h),
        ExprKind::Bin(op, a, b) => (3u8, op, a.0.hash, b.0.hash).hash(&mut h),
        ExprKind::Select(c, a, b) => (4u8, c.0.hash, a.0.hash, b.0.hash).hash(&mut h),
    }
    h.finish()
}

impl Expr {
    fn mk(kind: ExprKind) -> Expr {
        let (size, depth) = match &kind {
            ExprKind::Const(_) | ExprKind::Atom(_) => (1, 1),
            ExprKind::Un(_, a) => (a.size() + 1, a.depth() + 1),
            ExprKind::Bin(_, a, b) => (
                a.size().saturating_add(b.size()).saturating_add(1),
                a.depth().max(b.depth()) + 1,
            ),
            ExprKind::Select(c, a, b) => (
                c.size()
                    .saturating_add(a.size())
                    .saturating_add(b.size())
                    .saturating_add(1),
                c.depth().max(a.depth()).max(b.depth()) + 1,
            ),
        };
        if size > budget::MAX_EXPR_NODES || depth > budget::MAX_EXPR_DEPTH {
            return Expr::atom(Atom::TooComplex);
        }
        let hash = node_hash(&kind);
        Expr(Rc::new(Node {
            kind,
            size,
            depth,
            hash,
        }))
    }

    pub fn konst(v: i64) -> Expr {
        Expr::mk(ExprKind::Const(v))
    }
    pub fn atom(a: Atom) -> Expr {
        let kind = ExprKind::Atom(a);
        let hash = node_hash(&kind);
        Expr(Rc::new(Node {
            kind,
            size: 1,
            depth: 1,
            hash,
        }))
    }
    pub fn builtin(b: Builtin) -> Expr {
        Expr::atom(Atom::Builtin(b))
    }
    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }
    pub fn size(&self) -> u32 {
        self.0.size
    }
    pub fn depth(&self) -> u32 {
        self.0.depth
    }
    pub fn as_const(&self) -> Option<i64> {
        match self.kind() {
            ExprKind::Const(v) => Some(*v),
            _ => None,
        }
    }
    /// The node's identity: equal for clones of one expression.
    pub fn identity(&self) -> *const () {
        Rc::as_ptr(&self.0) as *const ()
    }
    pub fn ptr_eq(&self, other: &Expr) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
    /// Structural equality (used to merge branches without a select).
    pub fn same(&self, other: &Expr) -> bool {
        if self.ptr_eq(other) {
            return true;
        }
        match (self.kind(), other.kind()) {
            (ExprKind::Const(a), ExprKind::Const(b)) => a == b,
            (ExprKind::Atom(a), ExprKind::Atom(b)) => a == b && *a != Atom::TooComplex,
            (ExprKind::Un(o1, a1), ExprKind::Un(o2, a2)) => o1 == o2 && a1.same(a2),
            (ExprKind::Bin(o1, a1, b1), ExprKind::Bin(o2, a2, b2)) => {
                o1 == o2 && a1.same(a2) && b1.same(b2)
            }
            (ExprKind::Select(c1, a1, b1), ExprKind::Select(c2, a2, b2)) => {
                c1.same(c2) && a1.same(a2) && b1.same(b2)
            }
            _ => false,
        }
    }

    pub fn un(op: UnOp, a: Expr) -> Expr {
        if let Some(v) = a.as_const() {
            return Expr::konst(eval_un(op, v));
        }
        Expr::mk(ExprKind::Un(op, a))
    }

    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            if let Some(v) = eval_bin(op, x, y) {
                return Expr::konst(v);
            }
        }
        match (op, a.as_const(), b.as_const()) {
            (BinOp::Add, Some(0), _) => return b,
            (
                BinOp::Add | BinOp::Sub | BinOp::Shl | BinOp::Shr | BinOp::Or | BinOp::Xor,
                _,
                Some(0),
            ) => return a,
            (BinOp::Mul, Some(1), _) => return b,
            (BinOp::Mul | BinOp::Div, _, Some(1)) => return a,
            (BinOp::Mul, Some(0), _) | (BinOp::Mul, _, Some(0)) => return Expr::konst(0),
            _ => {}
        }
        Expr::mk(ExprKind::Bin(op, a, b))
    }

    pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
        if let Some(v) = c.as_const() {
            return if v != 0 { a } else { b };
        }
        if a.same(&b) {
            return a;
        }
        Expr::mk(ExprKind::Select(c, a, b))
    }

    pub fn plus(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Add, a, b)
    }
    pub fn minus(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Sub, a, b)
    }
    pub fn times(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Mul, a, b)
    }

    /// This expression with every subexpression [`same`](Self::same) as
    /// `from` replaced by `to`, folded again (`K / 8` with `K` replaced by
    /// 64 is 8). The walk follows the tree, which `MAX_EXPR_NODES` bounds.
    pub fn replaced(&self, from: &Expr, to: &Expr) -> Expr {
        if self.same(from) {
            return to.clone();
        }
        match self.kind() {
            ExprKind::Const(_) | ExprKind::Atom(_) => self.clone(),
            ExprKind::Un(op, a) => Expr::un(*op, a.replaced(from, to)),
            ExprKind::Bin(op, a, b) => Expr::bin(*op, a.replaced(from, to), b.replaced(from, to)),
            ExprKind::Select(c, a, b) => Expr::select(
                c.replaced(from, to),
                a.replaced(from, to),
                b.replaced(from, to),
            ),
        }
    }

    /// Visits every atom (each shared subtree once).
    pub fn visit_atoms(&self, f: &mut dyn FnMut(Atom)) {
        let mut seen: Vec<*const Node> = Vec::new();
        fn go(e: &Expr, seen: &mut Vec<*const Node>, f: &mut dyn FnMut(Atom)) {
            let p = Rc::as_ptr(&e.0);
            if e.size() > 8 {
                if seen.contains(&p) {
                    return;
                }
                seen.push(p);
            }
            match e.kind() {
                ExprKind::Const(_) => {}
                ExprKind::Atom(a) => f(*a),
                ExprKind::Un(_, a) => go(a, seen, f),
                ExprKind::Bin(_, a, b) => {
                    go(a, seen, f);
                    go(b, seen, f);
                }
                ExprKind::Select(c, a, b) => {
                    go(c, seen, f);
                    go(a, seen, f);
                    go(b, seen, f);
                }
            }
        }
        go(self, &mut seen, f)
    }

    pub fn atoms(&self) -> Vec<Atom> {
        let mut v = Vec::new();
        self.visit_atoms(&mut |a| {
            if !v.contains(&a) {
                v.push(a)
            }
        });
        v
    }
}

pub fn eval_un(op: UnOp, v: i64) -> i64 {
    match op {
        UnOp::Neg => v.wrapping_neg(),
        UnOp::Not => (v == 0) as i64,
        UnOp::BitNot => !v,
        UnOp::Popc(bits) => i64::from(low(v, bits).count_ones()),
        UnOp::Clz(bits) => i64::from(low(v, bits).leading_zeros()) - (64 - i64::from(bits)),
        UnOp::Ffs(bits) => match low(v, bits) {
            0 => 0,
            x => i64::from(x.trailing_zeros()) + 1,
        },
    }
}

/// The low `bits` of `v`, unsigned.
fn low(v: i64, bits: u8) -> u64 {
    match bits {
        64.. => v as u64,
        b => (v as u64) & ((1u64 << b) - 1),
    }
}

/// C integer semantics on i64; `None` for division by zero and shifts out of range.
pub fn eval_bin(op: BinOp, x: i64, y: i64) -> Option<i64> {
    Some(match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => {
            if y == 0 {
                return None;
            }
            x.wrapping_div(y)
        }
        BinOp::Rem => {
            if y == 0 {
                return None;
            }
            x.wrapping_rem(y)
        }
        BinOp::Shl => {
            if !(0..64).contains(&y) {
                return None;
            }
            x.wrapping_shl(y as u32)
        }
        BinOp::Shr => {
            if !(0..64).contains(&y) {
                return None;
            }
            x >> y
        }
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Lt => (x < y) as i64,
        BinOp::Le => (x <= y) as i64,
        BinOp::Gt => (x > y) as i64,
        BinOp::Ge => (x >= y) as i64,
        BinOp::Eq => (x == y) as i64,
        BinOp::Ne => (x != y) as i64,
        BinOp::LAnd => (x != 0 && y != 0) as i64,
        BinOp::LOr => (x != 0 || y != 0) as i64,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Shared,
    Global,
    Constant,
    Local,
    /// Memory reached through a pointer whose space the analysis does not
    /// know (CUDA's generic addressing: a pointer loaded per lane, an
    /// integer made a pointer, a name nothing declares). Such an access is
    /// recorded, always unknown, so it is counted and never costed.
    Generic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Shared => "shared",
            Space::Global => "global",
            Space::Constant => "constant",
            Space::Local => "local",
            Space::Generic => "generic",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Load,
    Store,
    Atomic,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Load => "load",
            Op::Store => "store",
            Op::Atomic => "atomic",
        }
    }
}

/// A memory object: a `__shared__`, `__constant__` or local array, or the
/// memory behind a pointer parameter.
#[derive(Clone, Debug)]
pub struct MemObject {
    pub name: String,
    pub space: Space,
    /// Spelling of the element type, as declared (`float`, `struct xyz3`).
    pub elem_type: String,
    pub elem_size: u64,
    /// The element type's alignment in bytes (1 when unknown).
    pub elem_align: u64,
    /// Where the element type's `struct` keyword is written, when the
    /// element is a struct defined in a file (GM004 raises its alignment).
    pub elem_keyword: Option<Span>,
    /// Dimensions outermost first; `None` for an unsized (`extern`, pointer) one.
    pub dims: Vec<Option<u64>>,
    pub decl: Span,
    /// Source text of the declaration (for fixes that rewrite it).
    pub decl_text: String,
    /// Where the innermost dimension's size is written (`33` in
    /// `tile[32][33]`), when it is in the file itself (not in a macro).
    pub inner_dim: Option<Span>,
    /// Other places the innermost dimension is written that a padding
    /// must change alike (a Rust static's initializer `[[0.0; N]; M]`).
    pub dim_copies: Vec<Span>,
    /// Accessed through a `volatile` type somewhere in the kernel (its
    /// declaration, or a pointer or parameter declared `volatile` bound to
    /// its start): nvcc emits every access as written, none merged,
    /// reloaded from a register or hoisted (measured:
    /// `fixtures/sass/vol.gi.sass`). The kernel's other accesses to it are
    /// taken the same way; a `volatile` pointer into the middle of a buffer
    /// (`(volatile int *)(smem_raw + 616)`) marks nothing, as the rest of
    /// the buffer is not accessed through it.
    pub volatile: bool,
    /// A pointer declared `volatile` is bound somewhere into it (at any
    /// offset, a warp's slice `s + 64 * w` too): lanes exchanging data
    /// through it are not reported (`symbolic/races.rs`), though the nvcc
    /// models still merge the rest of it.
    pub volatile_view: bool,
    /// What a pointer the lowering cannot follow to a declaration points
    /// to, the pointer as written (`p.data` of a by-value struct
    /// parameter, `*g_ptr` of a `__device__` pointer, `rows[blockIdx.x]`
    /// loaded from memory): one value for the whole block, taken to be
    /// the start of an allocation, as a pointer parameter is
    /// ([`crate::finding::Assumption::AllocationStart`]).
    pub pointee_of: Option<String>,
}

/// One condition a lane must satisfy: `(cond != 0) == expect`.
#[derive(Clone, Debug)]
pub struct Guard {
    pub cond: Expr,
    pub expect: bool,
    /// Where the condition is written: an `if`'s or a `case`'s condition,
    /// a `return`, `break` or `continue` (`None` for those the lowering
    /// makes itself); it says which condition splits a block's threads at
    /// a barrier ([`Barrier`]).
    pub site: Option<Span>,
    /// A thread that fails it has returned from the kernel (a `return` in
    /// the kernel's own body, not in an inlined function): it exited, and
    /// no barrier waits for it. In a loop's `breaks`, a thread for which
    /// the list holds returns from the kernel.
    pub exits: bool,
}

impl Guard {
    /// The same condition with the same sense.
    pub fn same(&self, other: &Guard) -> bool {
        self.expect == other.expect && self.cond.same(&other.cond)
    }
}

/// A loop with its carried variables: at iteration `k` every lane's state
/// is `next` applied `k` times to `init`.
#[derive(Clone, Debug)]
pub struct Loop {
    pub parent: Option<usize>,
    /// Loop-variable ids ([`Kernel::loop_vars`]).
    pub vars: Vec<u32>,
    pub init: Vec<Expr>,
    pub next: Vec<Expr>,
    /// Checked at the start of each iteration (`for`, `while`).
    pub pre_cond: Option<Expr>,
    /// Checked at the end of each iteration (`do … while`).
    pub post_cond: Option<Expr>,
    /// Guards on the way into the loop.
    pub entry_guards: Vec<Guard>,
    /// A lane leaves the loop after an iteration in which all the guards
    /// of one of these lists held (`break`, `return`).
    pub breaks: Vec<Vec<Guard>>,
    /// The body ends a straight-line region (a barrier, a fence, a
    /// branching math call: [`Access::region`]) somewhere.
    pub splits_regions: bool,
    /// The body holds a barrier, a fence or a call the engine cannot see
    /// (which may write memory): no load is hoisted out of it
    /// (`nvcc/hoist.rs`).
    pub fenced: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct LoopVar {
    pub name: String,
    pub loop_id: usize,
    /// Read after its loop (the loop has a condition, no `break` or
    /// `return`): the engine runs the loop to each lane's exit for the
    /// value. The unknown ([`Kernel::unknowns`], an after-loop origin)
    /// that lanes whose exit it cannot find (the loop budget, an unknown
    /// condition) take instead.
    pub exit_unknown: Option<u32>,
}

/// Why a value is unknown, and what it depends on.
#[derive(Clone, Debug)]
pub struct Unknown {
    pub origin: Origin,
    /// When every active lane of a warp evaluates the witness to the same
    /// value, the unknown is the same for all of them (e.g. a load from a
    /// uniform address). `None`: assume it differs per lane.
    pub witness: Option<Expr>,
    /// The value depends on a template argument that no instantiation in
    /// the file gives: understood, just not instantiated (no note).
    pub dependent: bool,
    /// An integer loaded from memory, this many bits wide: the engine may
    /// draw values for it, uniformly over `0 .. 2^bits`, where the data
    /// decides a shared access's cost (`symbolic/data.rs`).
    pub loaded_bits: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// Pointer parameters point to a global object.
    pub object: Option<usize>,
    pub is_integer: bool,
    /// Every value the parameter's type has, when they are few (a `bool`:
    /// 0 and 1): what the engine tries when no launch gives one.
    pub values: Option<Vec<i64>>,
    /// A value template parameter that no instantiation gives, analysed
    /// as an integer parameter (after the function's own parameters).
    pub template: bool,
    /// Not a parameter of the kernel: an integer every thread of a block
    /// loads from one address of shared memory (a `__shared__` count),
    /// outside any loop. It is one number for the block that no launch
    /// gives, so it is analysed as a parameter is, over representative
    /// values (after the parameters and template values; no launch gives
    /// it). `name` is the loaded expression as written.
    pub loaded: Option<Loaded>,
    /// `values` are those the kernel compares it with (an enum-like
    /// parameter, `frontend/lower/flags.rs`), not every value of its type.
    pub compared: bool,
}

/// Where a [`Param::loaded`] value is loaded from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The memory object read.
    pub array: String,
    pub space: Space,
}

/// A front-end note: something not understood, with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub span: Span,
    pub kind: NoteKind,
}

/// One kernel instantiation.
#[derive(Clone, Debug, Default)]
pub struct Kernel {
    pub name: String,
    /// `name<args>` for template instantiations.
    pub display_name: String,
    pub span: Span,
    /// The whole definition, body included.
    pub extent: Span,
    /// The body's first statement, where nvcc's line table puts what it
    /// issues at the kernel's entry (a load hoisted there).
    pub entry: Option<Span>,
    pub params: Vec<Param>,
    pub objects: Vec<MemObject>,
    pub accesses: Vec<Access>,
    pub loops: Vec<Loop>,
    pub loop_vars: Vec<LoopVar>,
    pub unknowns: Vec<Unknown>,
    pub launches: Vec<Launch>,
    pub launch_bounds: Option<u64>,
    /// Whether the body reads threadIdx.y / threadIdx.z.
    pub uses_thread_dims: [bool; 3],
    /// The notes lowering this instantiation raised (also in
    /// `Program::notes`): one instantiation's unknown type does not mark
    /// its siblings.
    pub lowering_notes: Vec<Note>,
    /// Set on an instantiation that gives a type parameter no known type,
    /// lowered with a representative type for it: the engine puts the
    /// answers of the representative types together.
    pub representative: Option<Representative>,
    /// Source accesses nvcc emits no instruction for (the `nvcc` room
    /// took them out of `accesses`), for `report` to say so.
    pub removed: Vec<Removed>,
    /// Block-wide barriers, in source order.
    pub barriers: Vec<Barrier>,
    /// `if`/`else` statements with work on both sides, in source order.
    pub branches: Vec<Branch>,
    /// The conditions of `if`s with a loop on a side: nvcc does not merge
    /// their two sides' stores (`nvcc/overwrite.rs`; measured,
    /// `fixtures/groundtruth/sm_90/predication.cu`'s `else_only_work`).
    pub branched_ifs: Vec<Span>,
    /// Where nvcc puts each per-thread array that is indexed with a value
    /// not written as a constant (`nvcc::registers`).
    pub locals: Vec<LocalArray>,
}

/// The representative type (`frontend::types::REPRESENTATIVE_TYPES`, one
/// lowering each) an instantiation was lowered with for the type
/// parameters it gives no known type and whose members it does not name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Representative {
    /// The type parameters bound to it.
    pub params: Vec<String>,
    /// The type, spelled.
    pub ty: String,
}

impl Kernel {
    pub fn add_unknown(&mut self, origin: Origin, witness: Option<Expr>) -> Expr {
        self.unknowns.push(Unknown {
            origin,
            witness,
            dependent: false,
            loaded_bits: None,
        });
        Expr::atom(Atom::Unknown((self.unknowns.len() - 1) as u32))
    }

    /// An unknown that depends on a template argument no instantiation
    /// gives (see [`Unknown::dependent`]).
    pub fn add_dependent(&mut self, origin: Origin, witness: Option<Expr>) -> Expr {
        let e = self.add_unknown(origin, witness);
        if let Some(u) = self.unknowns.last_mut() {
            u.dependent = true;
        }
        e
    }

    /// Whether `e` is unknown only through template arguments that no
    /// instantiation gives (at least one, and nothing else unknown).
    pub fn only_dependent(&self, e: &Expr) -> bool {
        let mut any = false;
        let mut other = false;
        e.visit_atoms(&mut |a| match a {
            Atom::Unknown(i) => match self.unknowns.get(i as usize) {
                Some(u) if u.dependent => any = true,
                _ => other = true,
            },
            Atom::Param(i) if self.params.get(i as usize).is_some_and(|p| p.template) => any = true,
            _ => {}
        });
        any && !other
    }
}

/// The front end's result for one translation unit.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub kernels: Vec<Kernel>,
    pub notes: Vec<Note>,
    /// Headers the file includes that were read (by `Span::file` - 1).
    pub files: Vec<String>,
    /// Lines of the file (1-based, inclusive ranges) that conditional
    /// compilation leaves out under this configuration.
    pub skipped_lines: Vec<(u32, u32)>,
    /// Every launch site the file and its headers hold, for the kernels
    /// other files define (the whole-project index).
    pub launch_sites: Vec<SiteRecord>,
    /// The calls of host functions that launch (or that
    /// `FrontendOptions::host_callees` names) made by the host functions
    /// walked ([`HostCall`]).
    pub host_calls: Vec<HostCall>,
    /// The unit's integer constants with external linkage.
    pub extern_consts: Vec<(String, i64)>,
}

#[cfg(test)]
mod tests {
    use super::{eval_un, UnOp};

    /// The values the CUDA Math API documents for the bit intrinsics,
    /// negative `int`s arriving sign-extended.
    #[test]
    fn bit_intrinsics_as_cuda_defines_them() {
        let cases = [
            (UnOp::Ffs(32), 0, 0),
            (UnOp::Ffs(32), 8, 4),
            (UnOp::Ffs(32), i64::from(i32::MIN), 32),
            (UnOp::Ffs(64), 1 << 40, 41),
            (UnOp::Clz(32), 0, 32),
            (UnOp::Clz(32), 1, 31),
            (UnOp::Clz(32), -1, 0),
            (UnOp::Clz(64), 1, 63),
            (UnOp::Popc(32), -1, 32),
            (UnOp::Popc(64), -1, 64),
            (UnOp::Popc(32), 0b1011, 3),
        ];
        for (op, v, want) in cases {
            assert_eq!(eval_un(op, v), want, "{op:?}({v})");
        }
    }

    /// Equal trees built apart print the same digest, different ones
    /// differ, and outside `with_expr_digests` an expression prints as
    /// the derived form did.
    #[test]
    fn expression_digests_stand_for_the_tree() {
        use super::{with_expr_digests, Atom, BinOp, Builtin, Dim, Expr};
        let t = || Expr::builtin(Builtin::ThreadIdx(Dim::X));
        let a = Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, t(), Expr::konst(2)),
            Expr::konst(1),
        );
        let b = Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, t(), Expr::konst(2)),
            Expr::konst(1),
        );
        let c = Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, t(), Expr::konst(1)),
            Expr::konst(2),
        );
        let d = Expr::bin(
            BinOp::Sub,
            Expr::bin(BinOp::Mul, t(), Expr::konst(2)),
            Expr::konst(1),
        );
        let e = Expr::bin(BinOp::Add, Expr::atom(Atom::Param(0)), Expr::konst(1));
        let (da, db, dc, dd, de) = with_expr_digests(|| {
            let f = |x: &Expr| format!("{x:?}");
            (f(&a), f(&b), f(&c), f(&d), f(&e))
        });
        assert!(da.starts_with('#') && da.len() == 17, "{da}");
        assert_eq!(da, db);
        for other in [&dc, &dd, &de] {
            assert_ne!(&da, other);
        }
        assert_eq!(
            format!("{:?}", Expr::konst(3)),
            "Expr(Node { kind: Const(3), size: 1, depth: 1 })"
        );
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(format!("{a:?}").contains("Bin(Add"));
    }
}
