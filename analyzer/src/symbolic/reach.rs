//! Barriers: how many times each thread of a block reaches each
//! `__syncthreads()` ([`crate::ir::Barrier`]). The barrier is run like an
//! access (its guards, its loops, every warp of every representative
//! block), but each execution counts, per thread, the lanes that reach it
//! instead of costing an address. Threads of one block that go on (have
//! not returned from the kernel) and reach it a different number of times
//! split the block at the barrier: the guide's "conditional code … only
//! if the conditional evaluates identically across the entire thread
//! block". A condition the engine cannot evaluate makes the answer
//! unknown, never a split.

use super::assume::fail_origin;
use super::eval::Vals;
use super::run::{Compiled, Run};
use super::setup::Setup;
use super::{EngineOptions, Status};
use crate::finding::{Assumption, UnknownReason};
use crate::hardware::{MemoryModel, WARP};
use crate::ir::{Access, Atom, Builtin, Expr, Guard, Inlined, Kernel, Op, Program, Span};

/// One barrier under one launch.
#[derive(Clone, Debug)]
pub struct BarrierReport {
    pub kernel: usize,
    pub barrier: usize,
    pub launch: usize,
    pub kernel_name: String,
    pub span: Span,
    pub text: String,
    pub block: [u64; 3],
    pub grid: [u64; 3],
    /// `Exact`: for the launch as given; `Assumed`: under the stated
    /// assumptions (a parameter's value, the block); `Unknown`: see
    /// `unknown_reason` (then no split is claimed).
    pub status: Status,
    pub assumptions: Vec<Assumption>,
    pub unknown_reason: Option<UnknownReason>,
    /// The first block found split, if any.
    pub split: Option<Split>,
    pub inlined_at: Option<Inlined>,
}

/// A block whose threads that go on reach a barrier different numbers of
/// times.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub block: [i64; 3],
    /// A thread that reaches it the most times, and how many.
    pub reached: ([i64; 3], u64),
    /// A thread that reaches it the fewest times, and how many.
    pub missed: ([i64; 3], u64),
    /// Threads reaching it the most times, of the `threads` that go on.
    pub reaching: u64,
    pub threads: u64,
    /// Where the condition that kept `missed` away is written (an `if`,
    /// a `case`, a `break` or `continue`); `None` when no guard did: it
    /// left an enclosing loop sooner (`loop_line`).
    pub site: Option<Span>,
    /// The innermost enclosing loop's line, when there is one.
    pub loop_line: Option<u32>,
}

/// What a reach run counts in the current block.
#[derive(Default)]
pub(super) struct Reach {
    /// Per thread of the block: times it reached the barrier.
    counts: Vec<u64>,
    /// Per thread: it returned from the kernel ([`crate::ir::Guard::exits`]).
    exited: Vec<bool>,
    /// Per thread: the guards (bit i: guard i, the first 64) that kept it
    /// from the barrier at least once.
    kept: Vec<u64>,
    pub(super) split: Option<Split>,
}

impl Reach {
    pub(super) fn start_block(&mut self, threads: usize) {
        self.counts = vec![0; threads];
        self.exited = vec![false; threads];
        self.kept = vec![0; threads];
    }
}

impl<'a> Run<'a> {
    /// Makes this run a reach run (per-thread counts, no cost).
    fn reach_mode(&mut self, setup: &Setup) {
        self.control_mode(setup);
        self.reach = Some(Reach::default());
    }

    /// A barrier's or branch's run reads no address: nothing about the
    /// stand-in's object is unknown or assumed.
    pub(super) fn control_mode(&mut self, setup: &Setup) {
        self.space = crate::ir::Space::Shared;
        self.unknown = None;
        self.assumptions = setup.assumptions.clone();
    }

    /// Marks the current warp's lanes of `mask` as returned from the
    /// kernel.
    pub(super) fn reach_exited(&mut self, mask: u32) {
        let warp = self.warp as usize * WARP;
        if let Some(r) = self.reach.as_mut() {
            for l in 0..WARP {
                if mask & (1 << l) != 0 && warp + l < r.exited.len() {
                    r.exited[warp + l] = true;
                }
            }
        }
    }

    /// At a warp's start: its lanes (of `mask`) that returned from the
    /// kernel before the barrier, by its exit guards evaluated before any
    /// loop runs (a thread that never enters the barrier's loop has exited
    /// all the same). A guard that reads what a loop computes is left to
    /// the loop (`reach_execute`, and the loop's return-breaks in
    /// `loops.rs`).
    pub(super) fn reach_exits(&mut self, mask: u32) {
        let mut gone = 0u32;
        for g in self.a.guards.iter().filter(|g| g.exits) {
            let v = self.probe(&g.cond);
            let pass = if g.expect { v.truthy() } else { !v.truthy() };
            gone |= mask & !pass & !v.err;
        }
        self.reach_exited(gone);
    }

    /// `e` for the lanes of `mask`; `None`, with the run unknown, where it
    /// cannot be evaluated for one of them (a barrier's, branch's or
    /// pair's run claims nothing it could not evaluate).
    pub(super) fn eval_known(&mut self, e: &Expr, mask: u32) -> Option<Vals> {
        let v = self.eval(e);
        if v.err & mask != 0 {
            self.unknown = Some(UnknownReason::DependsOn {
                origin: fail_origin(self.k, v.fail),
                differs: true,
            });
            return None;
        }
        Some(v)
    }

    /// Lanes of `mask` passing `guards`; `None`, with the run unknown,
    /// where one cannot be evaluated for a lane still in.
    pub(super) fn known_mask(&mut self, guards: &[Guard], mask: u32) -> Option<u32> {
        let mut m = mask;
        for g in guards {
            let v = self.eval_known(&g.cond, m)?;
            m &= if g.expect { v.truthy() } else { !v.truthy() };
        }
        Some(m)
    }

    /// One execution of the barrier by the lanes of `mask` that pass its
    /// guards: counted per thread (the reach run's `execute`).
    pub(super) fn reach_execute(&mut self, mask: u32) {
        let mut m = mask;
        let mut kept: Vec<(usize, u32)> = Vec::new();
        let mut gone = 0u32;
        // The exits first, over every lane here: a thread one removes has
        // returned, whatever the other guards say; one it cannot tell
        // about (a return inside an earlier loop) is left to the loop's
        // return-breaks.
        for g in self.a.guards.iter().filter(|g| g.exits) {
            let v = self.eval(&g.cond);
            let pass = if g.expect { v.truthy() } else { !v.truthy() };
            gone |= m & !pass & !v.err;
            m &= pass | v.err;
        }
        for (gi, g) in self.a.guards.iter().enumerate() {
            if g.exits {
                continue;
            }
            let Some(v) = self.eval_known(&g.cond, m) else {
                return;
            };
            let truthy = v.truthy();
            let pass = if g.expect { truthy } else { !truthy };
            let out = m & !pass;
            if out != 0 {
                kept.push((gi, out));
            }
            m &= pass;
        }
        self.reach_exited(gone);
        let warp = self.warp as usize * WARP;
        let weight = self.weight;
        let Some(r) = self.reach.as_mut() else {
            return;
        };
        for l in 0..WARP {
            let t = warp + l;
            if t >= r.counts.len() {
                break;
            }
            let bit = 1u32 << l;
            if m & bit != 0 {
                r.counts[t] = r.counts[t].saturating_add(weight);
            }
            for &(gi, out) in &kept {
                if out & bit != 0 && gi < 64 {
                    r.kept[t] |= 1 << gi;
                }
            }
        }
    }

    /// At the end of a block: the first split found, if this block has
    /// one among its threads that go on.
    pub(super) fn reach_block_done(&mut self) {
        let bid = self.bid;
        let b = self.setup.block;
        let loop_line = self.a.loops.last().map(|&l| self.k.loops[l].span.line);
        let sites: Vec<Option<Span>> = self.a.guards.iter().map(|g| g.site).collect();
        let Some(r) = self.reach.as_mut() else {
            return;
        };
        if r.split.is_some() {
            return;
        }
        let on: Vec<usize> = (0..r.counts.len()).filter(|&t| !r.exited[t]).collect();
        let (Some(&hi), Some(&lo)) = (
            on.iter()
                .max_by_key(|&&t| (r.counts[t], std::cmp::Reverse(t))),
            on.iter().min_by_key(|&&t| (r.counts[t], t)),
        ) else {
            return;
        };
        if r.counts[hi] == r.counts[lo] {
            return;
        }
        let tid = |t: usize| {
            let t = t as i64;
            [t % b[0], (t / b[0]) % b[1], t / (b[0] * b[1])]
        };
        // The first guard that kept `lo` away and never `hi`; else the
        // first that kept `lo` away.
        let only = r.kept[lo] & !r.kept[hi];
        let pick = if only != 0 { only } else { r.kept[lo] };
        let site = (pick != 0)
            .then(|| sites.get(pick.trailing_zeros() as usize).copied().flatten())
            .flatten();
        r.split = Some(Split {
            block: bid,
            reached: (tid(hi), r.counts[hi]),
            missed: (tid(lo), r.counts[lo]),
            reaching: on.iter().filter(|&&t| r.counts[t] == r.counts[hi]).count() as u64,
            threads: on.len() as u64,
            site,
            loop_line,
        });
    }
}

/// The assumptions under which a reach run's answer is no answer: a
/// condition or a trip count it could not evaluate (taken as run), or
/// only some iterations or executions run.
fn unsure(a: &Assumption) -> bool {
    matches!(
        a,
        Assumption::LanesActive { .. }
            | Assumption::LoopTrips { .. }
            | Assumption::FirstIterations { .. }
            | Assumption::FirstExecutions { .. }
            | Assumption::NoExit { .. }
    )
}

/// Whether every thread of a block reaches the barrier stood in for by
/// `a` equally often whatever the launch: nothing its guards and loops'
/// control read (through loop variables' values and the loops whose exit
/// values they read) differs between threads of a block: no `threadIdx`,
/// no unknown. Such a barrier is not run (the common case, and the cost of
/// a run over every warp).
/// `extra`: more expressions read (a branch's condition).
pub(super) fn block_uniform(k: &Kernel, a: &Access, extra: &[&Expr]) -> bool {
    let levels = super::loops::levels(k, a);
    let mut roots: Vec<&Expr> = a.guards.iter().map(|g| &g.cond).collect();
    roots.extend(extra.iter().copied());
    let mut vars = Vec::new();
    for &li in levels.iter().chain(&a.loops) {
        let lp = &k.loops[li];
        roots.extend(lp.pre_cond.iter().chain(&lp.post_cond));
        roots.extend(lp.entry_guards.iter().map(|g| &g.cond));
        roots.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
        roots.extend(lp.init.iter().chain(&lp.next));
        vars.extend(lp.vars.iter().copied());
    }
    super::loops::reachable_atoms(k, &roots, &vars)
        .iter()
        .all(|x| match x {
            Atom::Builtin(b) => !matches!(b, Builtin::ThreadIdx(_)),
            Atom::Param(_) => true,
            // Its own loop's control is among the roots.
            Atom::LoopVar(v) => k
                .loop_vars
                .get(*v as usize)
                .is_some_and(|lv| levels.contains(&lv.loop_id) || a.loops.contains(&lv.loop_id)),
            Atom::Unknown(_) | Atom::TooComplex => false,
        })
}

/// Launch `li` of `k` for one run, at the first value of what no launch
/// gives: each read of one is an assumption stated with the answer (a
/// barrier's or branch's run is not repeated over values).
pub(super) fn one_run_setup(k: &Kernel, li: usize, opts: &EngineOptions) -> Setup {
    let mut setup = Setup::new(k, li, opts);
    setup.quantified.iter_mut().for_each(|q| *q = false);
    if setup.block_varied {
        setup.assumptions.push(Assumption::DefaultBlock {
            block: k.launches[li].block,
            kernel: k.name.clone(),
        });
    }
    setup
}

/// Why a finished barrier or branch run has no answer: what it recorded,
/// a budget it ran out of, or an assumption that makes it no answer
/// ([`unsure`]).
pub(super) fn unsure_reason(run: &mut Run, opts: &EngineOptions) -> Option<UnknownReason> {
    let reason = run.unknown.take().or_else(|| {
        run.budget_hit
            .then_some(UnknownReason::OutOfBudget(crate::budget::work_per_access(
                opts.max_work,
            )))
    });
    reason.or_else(|| {
        run.assumptions.iter().find(|x| unsure(x)).map(|x| match x {
            Assumption::LanesActive { origin } | Assumption::LoopTrips { origin, .. } => {
                UnknownReason::DependsOn {
                    origin: origin.clone(),
                    differs: true,
                }
            }
            _ => {
                UnknownReason::OutOfBudget(crate::budget::loop_iterations(opts.max_loop_iterations))
            }
        })
    })
}

/// The reach of barrier `bi` of kernel `ki` under launch `li`.
fn reach_one(
    p: &Program,
    (ki, bi, li): (usize, usize, usize),
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> BarrierReport {
    let k = &p.kernels[ki];
    let b = &k.barriers[bi];
    let setup = one_run_setup(k, li, opts);
    let a = stand_in(&b.guards, &b.loops, (b.span, &b.text), &b.inlined_at);
    let c = |v: [i64; 3]| [v[0] as u64, v[1] as u64, v[2] as u64];
    let mut report = BarrierReport {
        kernel: ki,
        barrier: bi,
        launch: li,
        kernel_name: k.display_name.clone(),
        span: b.span,
        text: b.text.clone(),
        block: c(setup.block),
        grid: c(setup.grid),
        status: Status::Exact,
        assumptions: Vec::new(),
        unknown_reason: None,
        split: None,
        inlined_at: b.inlined_at.clone(),
    };
    if block_uniform(k, &a, &[]) {
        return report;
    }
    let mut compiled = Compiled::of(k, &a, false);
    let mut run = Run::new((k, &a), &setup, model, opts, None, &mut compiled);
    run.reach_mode(&setup);
    run.all_warps();
    let unknown_reason = unsure_reason(&mut run, opts);
    let split = run.reach.take().and_then(|r| r.split);
    report.status = control_status(&unknown_reason, &run.assumptions);
    report.assumptions = std::mem::take(&mut run.assumptions);
    report.split = split.filter(|_| unknown_reason.is_none());
    report.unknown_reason = unknown_reason;
    report
}

/// `one` for item `i` of every kernel (its first `count` items) under
/// each of the kernel's launches, in order; kernels with no memory object
/// are left out (a run reads its stand-in's object, never its address).
pub(super) fn each_item<T>(
    p: &Program,
    count: impl Fn(&Kernel) -> usize,
    mut one: impl FnMut(usize, usize, usize) -> T,
) -> Vec<T> {
    let mut out = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if k.objects.is_empty() {
            continue;
        }
        for li in 0..k.launches.len() {
            for i in 0..count(k) {
                out.push(one(ki, i, li));
            }
        }
    }
    out
}

/// An access standing for a barrier or a branch in a run: its guards and
/// loops, no address (object 0 is never read by such a run).
pub(super) fn stand_in(
    guards: &[crate::ir::Guard],
    loops: &[usize],
    (span, text): (Span, &str),
    inlined_at: &Option<Inlined>,
) -> Access {
    Access {
        obj: 0,
        op: Op::Load,
        width: 4,
        offset: Expr::konst(0),
        guards: guards.to_vec(),
        loops: loops.to_vec(),
        span,
        text: text.to_string(),
        region: 0,
        undecided: 0,
        unknown: None,
        unrolled: 1,
        inlined_at: inlined_at.clone(),
        hoisted: None,
        select_at: None,
        epoch: 0,
        hinted: false,
        predicated_from: None,
        predication_undecided: false,
    }
}

/// A barrier's, branch's or pair's run's status: unknown with a reason,
/// else exact unless it assumed something.
pub(super) fn control_status(unknown: &Option<UnknownReason>, assumed: &[Assumption]) -> Status {
    if unknown.is_some() {
        Status::Unknown
    } else if assumed.is_empty() {
        Status::Exact
    } else {
        Status::Assumed
    }
}

/// The engine options of such runs: every warp runs (a warp does not
/// stand for another's lanes or threads).
pub(super) fn control_opts(opts: &EngineOptions) -> EngineOptions {
    EngineOptions {
        collapse: false,
        stride: false,
        ..opts.clone()
    }
}

/// Every barrier of every kernel under each of its launches.
pub fn analyze_barriers(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> Vec<BarrierReport> {
    // Every warp runs: nothing stands for another thread's count.
    let opts = EngineOptions {
        max_blocks: opts.max_blocks.max(crate::budget::MAX_REACH_BLOCKS),
        ..control_opts(opts)
    };
    each_item(
        p,
        |k| k.barriers.len(),
        |ki, bi, li| reach_one(p, (ki, bi, li), model, &opts),
    )
}
