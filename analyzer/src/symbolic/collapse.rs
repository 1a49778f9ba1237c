//! Warps and blocks that cost what an earlier one did, proved so and not
//! run again.
//!
//! A warp of an access often differs from one already run (its
//! *representative*) only by where its addresses lie: the same active lanes,
//! the same guards and loop trips, every address moved by one amount that
//! is a multiple of the hardware's period ([`MemoryModel::shift_period`]),
//! so each of its executions costs what the representative's did. Its
//! totals are the representative's, added again. Once per access:
//! - the address is split as `V + R` (`split`): `V` reads only
//!   `threadIdx`, `blockIdx` and launch constants, `R` no `threadIdx` or
//!   `blockIdx`, and neither an unknown; so a warp's addresses are the
//!   representative's moved by `V' - V`, lane by lane, when `R` is the same;
//! - the values the control computes (loop variables' initial values and
//!   updates, for the enclosing loops and those the address reads) and the
//!   conditions that read loop variables may read `threadIdx`/`blockIdx`
//!   only in dimensions where both warps agree lane by lane (checked per
//!   warp): then loop variables, and so `R`, are the same;
//! - the other conditions (guards, loop entries and exits that read no loop
//!   variable) are compared per warp: the same lanes true, the same lanes
//!   failing (and why), the same assumed values read.
//!
//! Per warp, besides: the same active lanes, one shift `V' - V` for every
//! active lane, a multiple of the period (zero for local memory, whose
//! layout depends on the lane), addresses that stay far from overflow, the
//! same short circuits where a deciding operand (of `*`, `&&`, `||`, a
//! select) depends on the warp (so the address reads the same assumed
//! values), and every assumed value
//! the address may read either stated already or proved irrelevant for
//! this warp as well (see `Run::irrelevant`). A warp that fails any of
//! these runs. Reports are identical with and without (a property test
//! runs both); only the work counted against the budgets is smaller.
//!
//! [`MemoryModel::shift_period`]: crate::hardware::MemoryModel::shift_period

use super::assume::{judged_atoms, Said};
use super::eval::{Assumed, Fail, Reads};
use super::loops::reachable_atoms;
use super::run::{Run, Totals};
use crate::hardware::{Lanes, WARP};
use crate::ir::{Atom, BinOp, Builtin, Dim, Expr, ExprKind, Kernel, Space, UnOp};
use std::collections::HashSet;

/// Addresses whose magnitude reaches this are never shifted (the models
/// add widths to them).
pub(super) const MAX_MAGNITUDE: i64 = 1 << 61;

/// `threadIdx.x/y/z`, then `blockIdx.x/y/z`.
const VARYING: [Builtin; 6] = [
    Builtin::ThreadIdx(Dim::X),
    Builtin::ThreadIdx(Dim::Y),
    Builtin::ThreadIdx(Dim::Z),
    Builtin::BlockIdx(Dim::X),
    Builtin::BlockIdx(Dim::Y),
    Builtin::BlockIdx(Dim::Z),
];

fn varying(a: Atom) -> bool {
    matches!(a, Atom::Builtin(b) if VARYING.contains(&b))
}

/// Atoms whose value is one for the whole launch.
fn launch_constant(a: Atom) -> bool {
    matches!(
        a,
        Atom::Param(_) | Atom::Builtin(Builtin::BlockDim(_) | Builtin::GridDim(_))
    )
}

/// Atoms whose read may be an assumption (stated in the report).
pub(super) fn may_be_assumed(a: Atom) -> bool {
    matches!(
        a,
        Atom::Param(_) | Atom::Builtin(Builtin::BlockIdx(_) | Builtin::GridDim(_))
    )
}

/// What the access's run in one warp did, as far as another warp standing
/// for it must match.
struct Rep {
    bid: [i64; 3],
    tid: [[i64; WARP]; 3],
    mask: u32,
    /// The warp-dependent part of the address, per lane.
    v: [i64; WARP],
    conds: Vec<Cond>,
    /// How each pivot decided.
    pivots: Vec<u8>,
    totals: Totals,
    /// Lowest address recorded for `min_offset`, in this warp's run.
    min: Option<i64>,
    /// Union of the active masks the access executed with.
    seen: u32,
    /// Range of the addresses costed.
    range: Option<(i64, i64)>,
}

/// A condition's outcome for a warp, on the lanes of its mask.
#[derive(PartialEq)]
struct Cond {
    truthy: u32,
    err: u32,
    fail: Option<Fail>,
    reads: Reads,
}

/// What a warp's run records, for [`Collapse::record`].
#[derive(Clone, Copy, Default)]
pub(super) struct WarpTrace {
    pub min: Option<i64>,
    pub seen: u32,
    pub range: Option<(i64, i64)>,
}

impl WarpTrace {
    pub fn costed(&mut self, active: u32, lanes: &Lanes) {
        self.seen |= active;
        for a in lanes.iter().flatten() {
            self.range = Some(match self.range {
                None => (*a, *a),
                Some((lo, hi)) => (lo.min(*a), hi.max(*a)),
            });
        }
    }
}

pub(super) struct Collapse {
    /// Which of [`VARYING`] the computed control reads: equal lane by lane
    /// in both warps.
    fixed: [bool; 6],
    /// Conditions free of loop variables that read a varying atom.
    conds: Vec<Expr>,
    /// `V` of the address (see the module comment).
    v: Expr,
    /// `V`'s coefficient of each of [`VARYING`], when it is linear in them
    /// with launch-constant coefficients: the shift is then worked out
    /// from the index differences, without evaluating `V`.
    linear: Option<[i64; 6]>,
    /// Where the address's short circuits depend on the warp.
    pivots: Vec<(Pivot, Expr)>,
    /// Assumed values the address may read.
    assumable: Vec<Assumed>,
    period: i64,
    local: bool,
    reps: Vec<Rep>,
    /// The representatives of each warp index (one per block at most).
    by_warp: Vec<Vec<usize>>,
}

/// Whether every atom `e` reads passes `f`.
pub(super) fn reads_only(e: &Expr, f: impl Fn(Atom) -> bool) -> bool {
    let mut ok = true;
    e.visit_atoms(&mut |a| ok &= f(a));
    ok
}

/// `(V, R)` with `e == V + R` (wrapping): `V` reads only varying and
/// launch-constant atoms, `R` no varying atom; `None` when `e` does not
/// split so (a product of two warp-dependent factors, a division of one).
fn split(e: &Expr) -> Option<(Expr, Expr)> {
    let warp_free = reads_only(e, |a| !varying(a));
    if warp_free {
        return Some((Expr::konst(0), e.clone()));
    }
    if reads_only(e, |a| varying(a) || launch_constant(a)) {
        return Some((e.clone(), Expr::konst(0)));
    }
    let constant = |x: &Expr| reads_only(x, launch_constant);
    match e.kind() {
        ExprKind::Un(UnOp::Neg, a) => {
            let (v, r) = split(a)?;
            Some((Expr::un(UnOp::Neg, v), Expr::un(UnOp::Neg, r)))
        }
        ExprKind::Bin(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let (va, ra) = split(a)?;
            let (vb, rb) = split(b)?;
            Some((Expr::bin(*op, va, vb), Expr::bin(*op, ra, rb)))
        }
        ExprKind::Bin(BinOp::Mul, a, c) if constant(c) => {
            let (v, r) = split(a)?;
            Some((Expr::times(v, c.clone()), Expr::times(r, c.clone())))
        }
        ExprKind::Bin(BinOp::Mul, c, a) if constant(c) => {
            let (v, r) = split(a)?;
            Some((Expr::times(c.clone(), v), Expr::times(c.clone(), r)))
        }
        ExprKind::Bin(BinOp::Shl, a, c) if c.as_const().is_some_and(|s| (0..64).contains(&s)) => {
            let (v, r) = split(a)?;
            Some((
                Expr::bin(BinOp::Shl, v, c.clone()),
                Expr::bin(BinOp::Shl, r, c.clone()),
            ))
        }
        _ => None,
    }
}

/// Where the address's evaluation short-circuits on an operand that
/// depends on the warp (`0 * _`, `0 && _`, `1 || _` in every lane, a
/// select's branches), skipping operands that may read an assumed value:
/// one warp could skip a read another makes. The operand and what decides.
#[derive(Clone, Copy, PartialEq)]
enum Pivot {
    /// `*` and `&&`: every lane zero (none failing).
    AllZero,
    /// `||`: every lane nonzero.
    AllTrue,
    /// A select: which branches some lane takes.
    Branches,
    /// `*` and `&&` whose operand also reads loop variables, split as
    /// `V + R` with `R` the same in every lane: it is never zero in every
    /// lane when `V` takes two values (or fails somewhere). The expression
    /// is `V`; a warp where `V` is one value cannot be decided.
    Spread,
}

impl Pivot {
    fn decide(self, x: &super::eval::Vals) -> Option<u8> {
        let t = x.truthy();
        Some(match self {
            Pivot::AllZero => (t == 0 && x.err == 0) as u8,
            Pivot::AllTrue => (t == u32::MAX) as u8,
            Pivot::Branches => (t != 0) as u8 | (((!t & !x.err) != 0) as u8) << 1,
            Pivot::Spread => {
                let spread = x.err != 0 || x.v.iter().any(|v| *v != x.v[0]);
                return spread.then_some(1);
            }
        })
    }
}

/// The address's pivots (see [`Pivot`]); `None` when a deciding operand
/// reads more than varying and launch-constant atoms and is not a
/// [`Pivot::Spread`] (it could not be decided once per warp).
fn pivots(k: &Kernel, e: &Expr) -> Option<Vec<(Pivot, Expr)>> {
    let mut out = Vec::new();
    let mut seen: HashSet<*const ()> = HashSet::new();
    let mut work = vec![e.clone()];
    let assumed = |x: &Expr| !reads_only(x, |a| !may_be_assumed(a));
    while let Some(e) = work.pop() {
        if !seen.insert(e.identity()) {
            continue;
        }
        let (pivot, decider, skipped) = match e.kind() {
            ExprKind::Const(_) | ExprKind::Atom(_) => continue,
            ExprKind::Un(_, a) => {
                work.push(a.clone());
                continue;
            }
            ExprKind::Bin(op, a, b) => {
                work.push(a.clone());
                work.push(b.clone());
                let p = match op {
                    BinOp::Mul | BinOp::LAnd => Pivot::AllZero,
                    BinOp::LOr => Pivot::AllTrue,
                    _ => continue,
                };
                (p, a, assumed(b))
            }
            ExprKind::Select(c, a, b) => {
                work.extend([c.clone(), a.clone(), b.clone()]);
                (Pivot::Branches, c, assumed(a) || assumed(b))
            }
        };
        if skipped && !reads_only(decider, |x| !varying(x)) {
            if reads_only(decider, |x| varying(x) || launch_constant(x)) {
                out.push((pivot, decider.clone()));
                continue;
            }
            if pivot != Pivot::AllZero {
                return None;
            }
            // `R` the same in every lane: no threadIdx behind it.
            let (v, r) = split(decider)?;
            let uniform = reachable_atoms(k, &[&r], &[])
                .into_iter()
                .all(|a| !matches!(a, Atom::Builtin(Builtin::ThreadIdx(_))));
            if !uniform {
                return None;
            }
            out.push((Pivot::Spread, v));
        }
    }
    Some(out)
}

/// What a proof for an access is made of that no launch changes: worked
/// out once per access ([`Static::of`]), finished per run by
/// [`Collapse::of`].
pub(super) struct Static {
    fixed: [bool; 6],
    conds: Vec<Expr>,
    v: Expr,
    /// `V`'s coefficient of each of [`VARYING`] when it reads only launch
    /// constants (evaluated per run).
    coeffs: Vec<Option<Expr>>,
    pivots: Vec<(Pivot, Expr)>,
}

impl Static {
    /// The launch-free part of the proof for access `a` of `k` (its loop
    /// levels `levels`), or `None` when warps of it cannot stand for one
    /// another.
    pub(super) fn of(k: &Kernel, a: &crate::ir::Access, levels: &[usize]) -> Option<Static> {
        let offset = &a.offset;
        if offset.size() > crate::budget::MAX_COLLAPSE_ADDRESS_NODES
            || !reads_only(offset, |x| {
                !matches!(x, Atom::Unknown(_) | Atom::TooComplex)
            })
        {
            return None;
        }
        let (v, _) = split(offset)?;
        let pivots = pivots(k, offset)?;
        // Conditions and computed values of the control.
        let mut conds: Vec<&Expr> = a.guards.iter().map(|g| &g.cond).collect();
        let mut values: Vec<&Expr> = Vec::new();
        for &li in levels {
            let lp = &k.loops[li];
            conds.extend(lp.entry_guards.iter().map(|g| &g.cond));
            conds.extend(lp.pre_cond.iter());
            conds.extend(lp.post_cond.iter());
            conds.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
            values.extend(lp.init.iter());
            values.extend(lp.next.iter());
        }
        let (plain, looped): (Vec<&Expr>, Vec<&Expr>) = conds
            .into_iter()
            .partition(|c| reads_only(c, |x| !matches!(x, Atom::LoopVar(_))));
        values.extend(looped);
        let mut vars: Vec<u32> = Vec::new();
        offset.visit_atoms(&mut |x| {
            if let Atom::LoopVar(v) = x {
                vars.push(v);
            }
        });
        let computed = reachable_atoms(k, &values, &vars);
        let mut fixed = [false; 6];
        for (i, b) in VARYING.iter().enumerate() {
            fixed[i] = computed.contains(&Atom::Builtin(*b));
        }
        let conds: Vec<Expr> = plain
            .into_iter()
            .filter(|c| !reads_only(c, |x| !varying(x)))
            .cloned()
            .collect();
        let coeffs = VARYING
            .iter()
            .map(|b| {
                super::linear::coefficient(&v, Atom::Builtin(*b))
                    .filter(|c| reads_only(c, launch_constant))
            })
            .collect();
        Some(Static {
            fixed,
            conds,
            v,
            coeffs,
            pivots,
        })
    }
}

impl Collapse {
    /// The proof for `run`'s access under its launch, from the access's
    /// launch-free part `st`.
    pub fn of(run: &mut Run, st: &Static, nwarps: usize) -> Collapse {
        let offset = &run.a.offset;
        // Assumed values the address may read, and how to judge them.
        let setup = run.setup;
        let mut assumable = Vec::new();
        offset.visit_atoms(&mut |x| {
            let read = match x {
                Atom::Param(i) => setup
                    .params_assumed
                    .get(i as usize)
                    .copied()
                    .unwrap_or(true)
                    .then_some(Assumed::Param(i)),
                Atom::Builtin(Builtin::BlockIdx(_)) => {
                    setup.grid_assumed.then_some(Assumed::BlockIdx)
                }
                Atom::Builtin(Builtin::GridDim(_)) => {
                    setup.grid_assumed.then_some(Assumed::GridDim)
                }
                _ => None,
            };
            if let Some(r) = read {
                if !assumable.contains(&r) {
                    assumable.push(r);
                }
            }
        });
        let mut linear = Some([0i64; 6]);
        for (i, c) in st.coeffs.iter().enumerate() {
            let c = c.as_ref().map(|c| run.eval_raw(c).0).filter(|c| c.err == 0);
            match (c, linear.as_mut()) {
                (Some(c), Some(l)) => l[i] = c.v[0],
                _ => linear = None,
            }
        }
        Collapse {
            fixed: st.fixed,
            conds: st.conds.clone(),
            v: st.v.clone(),
            linear,
            pivots: st.pivots.clone(),
            assumable,
            period: run.period.max(1),
            local: run.space == Space::Local,
            reps: Vec::new(),
            by_warp: vec![Vec::new(); nwarps],
        }
    }

    /// What the current warp of `run` computes once: `V`, the plain
    /// conditions' outcomes on `mask`, the pivots' short circuits.
    #[allow(clippy::type_complexity)]
    fn observe(&self, run: &mut Run, mask: u32) -> ([i64; WARP], u32, Vec<Cond>, Option<Vec<u8>>) {
        let (v, err) = match self.linear {
            Some(_) => ([0; WARP], 0),
            None => {
                let (v, _) = run.eval_raw(&self.v);
                (v.v, v.err)
            }
        };
        let conds = self
            .conds
            .iter()
            .map(|c| {
                let (x, reads) = run.eval_raw(c);
                let err = x.err & mask;
                Cond {
                    truthy: x.truthy() & mask,
                    err,
                    fail: (err != 0).then_some(x.fail),
                    reads,
                }
            })
            .collect();
        let pivots = self
            .pivots
            .iter()
            .map(|(p, e)| {
                let (x, _) = run.eval_raw(e);
                p.decide(&x)
            })
            .collect();
        (v, err, conds, pivots)
    }

    /// Records the warp `run` just ran (`warp`, `mask`) as a representative.
    pub fn record(&mut self, run: &mut Run, warp: usize, mask: u32, before: Totals) {
        let (v, err, conds, pivots) = self.observe(run, mask);
        let Some(pivots) = pivots.filter(|_| err & mask == 0) else {
            return;
        };
        let t = run.trace;
        self.reps.push(Rep {
            bid: run.bid,
            tid: run.tid,
            mask,
            v,
            conds,
            pivots,
            totals: run.totals.since(before),
            min: t.min,
            seen: t.seen,
            range: t.range,
        });
        if let Some(list) = self.by_warp.get_mut(warp) {
            list.push(self.reps.len() - 1);
        }
    }

    /// When the warp set up in `run` (`warp`, `mask`) costs what a
    /// representative did, adds that representative's totals to `run` and
    /// returns true; else false (the warp must run).
    pub fn replay(&self, run: &mut Run, warp: usize, mask: u32) -> bool {
        // The first warp run, and this warp index in the blocks before.
        let same_index = self.by_warp.get(warp).map(Vec::as_slice).unwrap_or(&[]);
        let candidates = std::iter::once(0).chain(same_index.iter().copied().filter(|i| *i != 0));
        let mut mine = None;
        for r in candidates.filter_map(|i| self.reps.get(i)) {
            if !self.agrees(r, run, mask) {
                continue;
            }
            let (v, err, conds, pivots) = mine.get_or_insert_with(|| self.observe(run, mask));
            if *err & mask != 0 || *conds != r.conds || pivots.as_ref() != Some(&r.pivots) {
                continue;
            }
            let Some(shift) = self.shift(r, v, run, mask) else {
                continue;
            };
            if !self.irrelevant_here(run, r.seen) {
                continue;
            }
            run.totals.add(r.totals);
            if let Some(m) = r.min {
                let m = m + shift;
                run.min_offset = Some(run.min_offset.map_or(m, |x| x.min(m)));
            }
            return true;
        }
        false
    }

    /// The same active lanes, and the same `threadIdx`/`blockIdx` where
    /// the computed control reads them.
    fn agrees(&self, r: &Rep, run: &Run, mask: u32) -> bool {
        r.mask == mask
            && (0..3).all(|d| !self.fixed[3 + d] || r.bid[d] == run.bid[d])
            && (0..3).all(|d| {
                !self.fixed[d]
                    || (0..WARP)
                        .filter(|l| mask & (1 << l) != 0)
                        .all(|l| r.tid[d][l] == run.tid[d][l])
            })
    }

    /// The shift from representative `r` to `run`'s current warp, whose
    /// `V` is `v` (unless `V` is linear), when it is one for every active
    /// lane, a multiple of the period and safe.
    fn shift(&self, r: &Rep, v: &[i64; WARP], run: &Run, mask: u32) -> Option<i64> {
        let mut shift: Option<i64> = None;
        for l in (0..WARP).filter(|l| mask & (1 << l) != 0) {
            let s = match &self.linear {
                // V' - V, in the ring both are computed in.
                Some(c) => (0..3).fold(0i64, |s, d| {
                    let dt = run.tid[d][l].wrapping_sub(r.tid[d][l]);
                    let db = run.bid[d].wrapping_sub(r.bid[d]);
                    s.wrapping_add(c[d].wrapping_mul(dt))
                        .wrapping_add(c[3 + d].wrapping_mul(db))
                }),
                None => v[l].checked_sub(r.v[l])?,
            };
            match shift {
                None => shift = Some(s),
                Some(x) if x != s => return None,
                _ => {}
            }
        }
        let s = shift.unwrap_or(0);
        if (self.local && s != 0)
            || s.rem_euclid(self.period) != 0
            || s.unsigned_abs() >= MAX_MAGNITUDE.unsigned_abs()
        {
            return None;
        }
        // `i64::MIN` has no `abs`: compare magnitudes unsigned.
        let small = |x: i64| x.unsigned_abs() < MAX_MAGNITUDE.unsigned_abs();
        let safe = |x: i64| small(x) && small(x + s);
        if let Some((lo, hi)) = r.range {
            if !safe(lo) || !safe(hi) {
                return None;
            }
        }
        if r.min.is_some_and(|m| !safe(m)) {
            return None;
        }
        Some(s)
    }

    /// Every assumed value the address may read and no warp has stated yet
    /// is irrelevant for `run`'s current warp on the lanes `seen` (so it
    /// would not be stated here either).
    fn irrelevant_here(&self, run: &mut Run, seen: u32) -> bool {
        for r in &self.assumable {
            // gridDim is stated whenever read, and this warp reads what
            // its representative read.
            if *r == Assumed::GridDim || run.noted.contains(&Said::Read(*r)) {
                continue;
            }
            let (atoms, n) = judged_atoms(*r);
            for atom in &atoms[..n] {
                match run.coeff_entry(*atom) {
                    // Not linear in it: relevant whenever read, so stated
                    // already had the representative read it.
                    (None, _) => continue,
                    // Reads a loop variable (the address has no unknown):
                    // cannot be judged once for the warp.
                    (Some(_), false) => return false,
                    // What every execution of this warp would find, on
                    // every lane it executes with (see `Run::irrelevant`).
                    (Some(_), true) => {
                        if !run.irrelevant(*atom, seen) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}
