//! The expressions one access evaluates (its address, its guards, the
//! control of its loops), compiled once into a graph of distinct nodes so
//! that the warp evaluator remembers what did not change.
//!
//! Each node has a *level*: 0 when it reads no variable of the access's
//! loops, `l + 1` when the deepest loop whose variables it reads is the
//! `l`-th enclosing one (outermost first). A node's value can only change
//! when a variable of a loop at its level or above is assigned, or when the
//! warp changes; [`Memo`] keeps one value per node with the *epoch* of its
//! level it was computed in, and [`Memo::touch`] starts a new epoch for the
//! levels an assignment reaches. So a guard that only reads `threadIdx` is
//! computed once per warp, not once per loop iteration, and a
//! subexpression shared by the address and a guard once per epoch.
//!
//! Only nodes worth it are remembered: one used by a node that changes
//! more often (a loop-invariant part), one used twice (shared), and a root
//! evaluated deeper than its level. Evaluation is otherwise that of
//! [`eval32`](super::eval::eval32), operand by operand through
//! [`eval_view`]: the same lanes, the same short circuits, the same values
//! read (a remembered node hands back what it read), one unit of work per
//! node visited (a remembered value counts one).

use std::collections::HashMap;

use super::eval::{eval_view, view, Reads, Vals, View, WarpEnv};
use crate::ir::{Access, Atom, Expr, Kernel};

/// Identity of an [`Expr`] node (its shared allocation).
type Key = *const ();

/// Hashes a [`Key`] in one multiplication (the root lookup runs at every
/// evaluation; addresses are not chosen by the input, so no defence
/// against collisions is needed).
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        // The high bits are the well-mixed ones; the table indexes by the low.
        self.0.rotate_left(32)
    }
}

type KeyMap<V> = HashMap<Key, V, std::hash::BuildHasherDefault<KeyHasher>>;

fn key(e: &Expr) -> Key {
    e.identity()
}

#[derive(Clone, Copy)]
struct Node {
    view: View<u32>,
    level: u32,
    /// Worth remembering (see the module comment).
    memo: bool,
}

pub(crate) struct Graph {
    nodes: Vec<Node>,
    /// Root expressions by identity.
    roots: KeyMap<u32>,
}

impl Graph {
    /// Compiles `roots`, each with the loop depth it is evaluated at (0:
    /// outside every loop; `l + 1`: once per iteration of the `l`-th
    /// loop); `level_of_var` gives a loop variable's level (0 for a
    /// variable of a loop that does not enclose the access: it never
    /// changes while the access runs).
    pub fn new(roots: &[(&Expr, u32)], level_of_var: impl Fn(u32) -> u32) -> Graph {
        let mut g = Graph {
            nodes: Vec::new(),
            roots: KeyMap::default(),
        };
        let mut ids: KeyMap<u32> = KeyMap::default();
        // How often each node is used, and the deepest level it is used at.
        let mut uses: Vec<(u32, u32)> = Vec::new();
        for (e, depth) in roots {
            let id = g.intern(e, &mut ids, &mut uses, &level_of_var);
            let u = &mut uses[id as usize];
            u.0 += 1;
            u.1 = u.1.max(*depth);
            g.roots.insert(key(e), id);
        }
        for (n, (count, used_at)) in g.nodes.iter_mut().zip(uses) {
            let leaf = matches!(n.view, View::Const(_) | View::Atom(_));
            n.memo = !leaf && (count > 1 || used_at > n.level);
        }
        g
    }

    fn intern(
        &mut self,
        e: &Expr,
        ids: &mut KeyMap<u32>,
        uses: &mut Vec<(u32, u32)>,
        level_of_var: &impl Fn(u32) -> u32,
    ) -> u32 {
        if let Some(id) = ids.get(&key(e)) {
            return *id;
        }
        // Operands first (depth bounded by `MAX_EXPR_DEPTH`).
        let mut operand = |c: &Expr, parent_level: &mut u32| {
            let id = self.intern(c, ids, uses, level_of_var);
            *parent_level = (*parent_level).max(self.nodes[id as usize].level);
            id
        };
        let mut level = 0u32;
        let v = match view(e) {
            View::Const(c) => View::Const(c),
            View::Atom(a) => {
                if let Atom::LoopVar(v) = a {
                    level = level_of_var(v);
                }
                View::Atom(a)
            }
            View::Un(op, a) => View::Un(op, operand(a, &mut level)),
            View::Bin(op, a, b) => {
                let a = operand(a, &mut level);
                View::Bin(op, a, operand(b, &mut level))
            }
            View::Select(c, a, b) => {
                let c = operand(c, &mut level);
                let a = operand(a, &mut level);
                View::Select(c, a, operand(b, &mut level))
            }
        };
        // Each operand use counts, at the level of its user.
        let id = self.nodes.len() as u32;
        let (ops, n) = match v {
            View::Const(_) | View::Atom(_) => ([0; 3], 0),
            View::Un(_, a) => ([a, 0, 0], 1),
            View::Bin(_, a, b) => ([a, b, 0], 2),
            View::Select(c, a, b) => ([c, a, b], 3),
        };
        for op in &ops[..n] {
            let u = &mut uses[*op as usize];
            u.0 += 1;
            u.1 = u.1.max(level);
        }
        self.nodes.push(Node {
            view: v,
            level,
            memo: false,
        });
        uses.push((0, 0));
        ids.insert(key(e), id);
        id
    }

    /// The node of a root given to [`Graph::new`].
    pub fn root(&self, e: &Expr) -> Option<u32> {
        self.roots.get(&key(e)).copied()
    }
}

/// Remembered values, per node, with the epoch they belong to.
pub(crate) struct Memo {
    slots: Vec<Option<(u64, Vals, Reads)>>,
    /// The current epoch of each level.
    epochs: Vec<u64>,
    clock: u64,
}

impl Memo {
    pub fn new(g: &Graph, levels: usize) -> Memo {
        Memo {
            slots: vec![None; g.nodes.len()],
            epochs: vec![0; levels + 1],
            clock: 0,
        }
    }

    /// Something nodes of `level` and deeper read has changed (a loop
    /// variable of the loop at `level - 1` was assigned; 0: a new warp).
    pub fn touch(&mut self, level: usize) {
        self.clock += 1;
        for e in self.epochs.iter_mut().skip(level) {
            *e = self.clock;
        }
    }

    /// Node `id` for the whole warp (see the module comment).
    pub fn eval(
        &mut self,
        g: &Graph,
        id: u32,
        env: &WarpEnv,
        reads: &mut Reads,
        work: &mut u64,
    ) -> Vals {
        let n = g.nodes[id as usize];
        if !n.memo {
            return eval_view(n.view, env, reads, work, &mut |c, reads, work| {
                self.eval(g, c, env, reads, work)
            });
        }
        let epoch = self.epochs[n.level as usize];
        if let Some((at, v, r)) = &self.slots[id as usize] {
            if *at == epoch {
                *work += 1;
                reads.merge(r);
                return *v;
            }
        }
        let mut own = Reads::default();
        let v = eval_view(n.view, env, &mut own, work, &mut |c, reads, work| {
            self.eval(g, c, env, reads, work)
        });
        reads.merge(&own);
        self.slots[id as usize] = Some((epoch, v, own));
        v
    }
}

/// The expressions `a` evaluates, each at the loop depth it is evaluated
/// at (see [`Graph::new`]).
pub(super) fn compile(k: &Kernel, a: &Access, levels: &[usize]) -> Graph {
    let depth = levels.len() as u32;
    let mut roots: Vec<(&Expr, u32)> = vec![(&a.offset, depth)];
    roots.extend(a.guards.iter().map(|g| (&g.cond, depth)));
    let mut level_of: HashMap<u32, u32> = HashMap::new();
    for (l, &li) in levels.iter().enumerate() {
        let lp = &k.loops[li];
        let l = l as u32;
        for v in &lp.vars {
            level_of.insert(*v, l + 1);
        }
        roots.extend(lp.entry_guards.iter().map(|g| (&g.cond, l)));
        roots.extend(lp.init.iter().map(|e| (e, l)));
        roots.extend(lp.pre_cond.iter().map(|e| (e, l + 1)));
        roots.extend(lp.post_cond.iter().map(|e| (e, l + 1)));
        roots.extend(lp.breaks.iter().flatten().map(|g| (&g.cond, l + 1)));
        roots.extend(lp.next.iter().map(|e| (e, l + 1)));
    }
    Graph::new(&roots, |v| level_of.get(&v).copied().unwrap_or(0))
}
