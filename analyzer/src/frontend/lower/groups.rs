//! Cooperative groups as the index expressions they are.
//!
//! A group (`this_thread_block()`, `this_grid()`, `tiled_partition<N>(g)`
//! and `tiled_partition(g, n)`, `coalesced_threads()`,
//! `labeled_partition(g, l)`, `binary_partition(g, p)`, with or without
//! `cooperative_groups::` or an alias of it) is a [`Val::Group`]: the
//! calling thread's rank in it and its size as symbolic integers, and for
//! a tile its rank and count among its parent's tiles. Its members are
//! those expressions (the CUDA Programming Guide, Cooperative Groups): a
//! block's `thread_rank()` is `threadIdx` made linear over `blockDim`; a
//! tile's is its parent's rank modulo `N`, its `meta_group_rank()` the
//! parent's rank divided by `N`, so tiles of tiles compose; a grid's is the
//! linear block index times the block's threads plus the block rank.
//! `sync()` (and `cg::sync(g)`) is a barrier, as `__syncthreads()` is.
//!
//! A group of the threads active at run time has an unknown rank and size
//! ([`Origin::ActiveThreads`]), and so has anything partitioned from it.
//! Collectives (`shfl`, `ballot`, `any`, `cg::reduce`, …) are not members
//! here: their results stay unknown call results.
//!
//! Invariant: for a call that neither makes a group nor is a member of
//! one, [`Lowerer::group_call`] lowers nothing (it looks a name up, and
//! lowers an argument only once it is known to make a group), so the
//! call's usual lowering sees it untouched.

use tree_sitter::Node;

use super::{Lowerer, Src, Val};
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::ir::{BinOp, Builtin, Dim, Expr};

/// The functions that make a group (or synchronise one), by short name.
const MAKERS: &[&str] = &[
    "this_thread_block",
    "this_grid",
    "tiled_partition",
    "coalesced_threads",
    "labeled_partition",
    "binary_partition",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Block,
    Grid,
    Tile,
    /// Made of the threads active at run time.
    Active,
}

/// A cooperative group, as the calling thread sees it.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    kind: Kind,
    /// `thread_rank()`.
    rank: Expr,
    /// `num_threads()`, `size()`.
    size: Expr,
    /// A tile's `meta_group_rank()` and `meta_group_size()`.
    meta: Option<(Expr, Expr)>,
}

/// `threadIdx`, `blockIdx`, `blockDim` or `gridDim` as a triple.
pub(super) fn triple(b: fn(Dim) -> Builtin) -> [Expr; 3] {
    Dim::ALL.map(|d| Expr::builtin(b(d)))
}

/// `i.x + i.y·n.x + i.z·n.x·n.y`: index `i` made linear in a box of `n`.
pub(super) fn linear(i: &[Expr; 3], n: &[Expr; 3]) -> Expr {
    let row = Expr::times(i[1].clone(), n[0].clone());
    let plane = Expr::times(i[2].clone(), Expr::times(n[0].clone(), n[1].clone()));
    Expr::plus(Expr::plus(i[0].clone(), row), plane)
}

/// `n.x·n.y·n.z`.
fn volume(n: &[Expr; 3]) -> Expr {
    Expr::times(Expr::times(n[0].clone(), n[1].clone()), n[2].clone())
}

impl Group {
    fn block() -> Group {
        let dim = triple(Builtin::BlockDim);
        Group {
            kind: Kind::Block,
            rank: linear(&triple(Builtin::ThreadIdx), &dim),
            size: volume(&dim),
            meta: None,
        }
    }

    fn grid() -> Group {
        let block = Group::block();
        let grid = triple(Builtin::GridDim);
        let block_rank = linear(&triple(Builtin::BlockIdx), &grid);
        Group {
            kind: Kind::Grid,
            rank: Expr::plus(Expr::times(block_rank, block.size.clone()), block.rank),
            size: Expr::times(volume(&grid), block.size),
            meta: None,
        }
    }

    /// The tile of `n` consecutive ranks of `parent` the thread is in.
    fn tile(parent: &Group, n: Expr) -> Group {
        let rank = |op| Expr::bin(op, parent.rank.clone(), n.clone());
        let rounded_up = Expr::minus(Expr::plus(parent.size.clone(), n.clone()), Expr::konst(1));
        let count = Expr::bin(BinOp::Div, rounded_up, n.clone());
        Group {
            kind: Kind::Tile,
            rank: rank(BinOp::Rem),
            meta: Some((rank(BinOp::Div), count)),
            size: n,
        }
    }

    /// `cond ? a : b`, when both are groups of one kind.
    pub(super) fn select(cond: &Expr, a: Group, b: Group) -> Option<Group> {
        if a.kind != b.kind {
            return None;
        }
        let sel = |x: Expr, y: Expr| Expr::select(cond.clone(), x, y);
        let meta = match (a.meta, b.meta) {
            (Some((r, c)), Some((s, d))) => Some((sel(r, s), sel(c, d))),
            (None, None) => None,
            _ => return None,
        };
        Some(Group {
            kind: a.kind,
            rank: sel(a.rank, b.rank),
            size: sel(a.size, b.size),
            meta,
        })
    }
}

/// The short name of a called function and its template arguments:
/// `cg::tiled_partition<32>` is `tiled_partition` with `<32>`.
fn callee<'n>(f: Node<'n>, src: &Src) -> Option<(String, Option<Node<'n>>)> {
    let mut f = f;
    while f.node_kind() == "qualified_identifier" {
        f = f.field("name")?;
    }
    match f.node_kind() {
        "identifier" => Some((src.text(f), None)),
        "template_function" => Some((src.text(f.field("name")?), f.field("arguments"))),
        _ => None,
    }
}

impl<'a, 't> Lowerer<'a, 't> {
    /// A call that makes a group, synchronises one or reads a member of
    /// one: its value. `None`, with nothing lowered, for any other call.
    pub(super) fn group_call(&mut self, n: Node, f: Node, args: &[Node], src: &Src) -> Option<Val> {
        if f.node_kind() == "field_expression" {
            return self.group_member(n, f, args, src);
        }
        let (name, targs) = callee(f, src)?;
        Some(match (name.as_str(), args.len(), targs) {
            ("this_thread_block", 0, _) => Val::Group(Group::block()),
            ("this_grid", 0, _) => Val::Group(Group::grid()),
            ("coalesced_threads", 0, _) => Val::Group(self.active(n, src)),
            ("labeled_partition" | "binary_partition", 2, _) => {
                for a in args {
                    self.rv(*a, src);
                }
                Val::Group(self.active(n, src))
            }
            ("tiled_partition", 1, Some(t)) => {
                let parent = self.group_arg(args[0], src)?;
                let size = self.tile_size(t, src);
                self.tile(f, parent, size, src)
            }
            ("tiled_partition", 2, None) => {
                let parent = self.group_arg(args[0], src)?;
                let size = self.int(args[1], src);
                self.tile(f, parent, size, src)
            }
            ("sync", 1, None) => {
                match self.group_arg(args[0], src)? {
                    Val::Group(g) if g.kind == Kind::Block => self.barrier(n, src),
                    _ => self.fence(),
                }
                Val::Void
            }
            _ => return None,
        })
    }

    /// `g.member(…)` of a group `g`; `None`, with nothing lowered, when
    /// `g` is not one.
    fn group_member(&mut self, n: Node, f: Node, args: &[Node], src: &Src) -> Option<Val> {
        let arrow = f.field("operator").is_some_and(|o| o.node_kind() == "->");
        let (Some(obj), Some(member), false) = (f.field("argument"), f.field("field"), arrow)
        else {
            return None;
        };
        let Val::Group(g) = self.group_arg(obj, src)? else {
            return Some(self.unknown_method(f, args, src));
        };
        let member = src.text(member);
        let at = |b: fn(Dim) -> Builtin| Val::Dim3(triple(b));
        Some(match (g.kind, member.as_str(), g.meta) {
            (_, "thread_rank", _) => Val::Int(g.rank),
            (_, "size" | "num_threads", _) => Val::Int(g.size),
            (_, "meta_group_rank", Some((rank, _))) => Val::Int(rank),
            (_, "meta_group_size", Some((_, count))) => Val::Int(count),
            (Kind::Block, "sync", _) => {
                self.barrier(n, src);
                Val::Void
            }
            (_, "sync", _) => {
                self.fence();
                Val::Void
            }
            (Kind::Block, "group_index", _) | (Kind::Grid, "block_index", _) => {
                at(Builtin::BlockIdx)
            }
            (Kind::Block, "thread_index", _) => {
                self.k.uses_thread_dims = [true; 3];
                at(Builtin::ThreadIdx)
            }
            (Kind::Block, "dim_threads" | "group_dim", _) => at(Builtin::BlockDim),
            (Kind::Grid, "dim_blocks" | "group_dim", _) => at(Builtin::GridDim),
            (Kind::Grid, "block_rank", _) => Val::Int(linear(
                &triple(Builtin::BlockIdx),
                &triple(Builtin::GridDim),
            )),
            (Kind::Grid, "num_blocks", _) => Val::Int(volume(&triple(Builtin::GridDim))),
            _ => self.unknown_method(f, args, src),
        })
    }

    /// The group an argument or the object of a member call is: a name
    /// bound to one, or a call that makes one, lowered (its value is not a
    /// group only when a budget ran out in it). `None`, with nothing
    /// lowered, for anything else: a caller that got `Some` must not lower
    /// `n` again (nested calls would be lowered twice per level).
    fn group_arg(&mut self, n: Node, src: &Src) -> Option<Val> {
        let mut n = n;
        while n.node_kind() == "parenthesized_expression" {
            n = n.named(0)?;
        }
        match n.node_kind() {
            "identifier" => match self.lookup(&src.text(n)) {
                Some(b) if matches!(b.val, Val::Group(_)) => Some(b.val.clone()),
                _ => None,
            },
            "call_expression" => {
                let (name, _) = callee(n.field("function")?, src)?;
                // Through `expr`, which bounds the nesting.
                MAKERS.contains(&name.as_str()).then(|| self.expr(n, src))
            }
            _ => None,
        }
    }

    /// The tile of `size` of `parent`, made by a call to `f`; an unknown
    /// result when `parent` is not a group (a budget ran out in it).
    fn tile(&mut self, f: Node, parent: Val, size: Expr, src: &Src) -> Val {
        match parent {
            Val::Group(g) => Val::Group(Group::tile(&g, size)),
            _ => self.unknown_val(Origin::CallResult {
                callee: src.text(f),
            }),
        }
    }

    /// `N` of `tiled_partition<N>`: a constant, a template parameter or
    /// any integer expression.
    fn tile_size(&mut self, list: Node, src: &Src) -> Expr {
        let Some(a) = list.named(0) else {
            let text = src.text(list);
            return self.unknown(Origin::Written { text }, Some(Expr::konst(0)));
        };
        if a.node_kind() == "type_descriptor" {
            let text = src.text(a);
            let v = self.ident(text.trim(), a, src);
            return self.as_int(v);
        }
        self.int(a, src)
    }

    /// A group of the threads active at run time, made by the call `n`.
    fn active(&mut self, n: Node, src: &Src) -> Group {
        let group = src.text(n);
        let origin = |member: &str| Origin::ActiveThreads {
            group: group.clone(),
            member: member.into(),
        };
        // The active threads of a warp that reach `coalesced_threads()`
        // together all count the same number; the ranks differ, and so do
        // the sizes of the parts of a labeled or binary partition.
        let coalesced = callee_is(n, src, "coalesced_threads");
        let size_witness = coalesced.then(|| Expr::konst(0));
        Group {
            kind: Kind::Active,
            rank: self.unknown(origin("thread_rank()"), None),
            size: self.unknown(origin("num_threads()"), size_witness),
            meta: None,
        }
    }
}

/// Whether the call `n` calls `name` (however qualified).
fn callee_is(n: Node, src: &Src, name: &str) -> bool {
    n.field("function")
        .and_then(|f| callee(f, src))
        .is_some_and(|(c, _)| c == name)
}
