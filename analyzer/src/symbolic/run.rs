//! One access's run: [`Run`] holds what the enumeration of blocks ×
//! warps × loop iterations needs and adds up; this room makes it, walks
//! the warps of every representative block, evaluates expressions for a
//! whole warp, and costs one execution (active lanes, their addresses,
//! the hardware model's cost, the worst warp so far).

use super::assume::{fail_origin, Said};
use super::data::DataDraw;
use super::eval::{eval32, Assumed, Fail, LaneEnv, Reads, Vals, WarpEnv};
use super::graph::{self, compile};
use super::loops::{invariant_loops, levels};
use super::setup::{blocks, uses_block, Setup};
use super::unknowns::LinearForm;
use super::{collapse, stride, EngineOptions, WarpSample};
use crate::finding::{Assumption, UnknownReason};
use crate::hardware::{Lanes, MemoryModel, WARP};
use crate::ir::{Access, Atom, Expr, Guard, Kernel, Space};

/// The state of one access's run and what it adds up.
pub(super) struct Run<'a> {
    pub(super) k: &'a Kernel,
    pub(super) a: &'a Access,
    model: &'a dyn MemoryModel,
    pub(super) opts: &'a EngineOptions,
    pub(super) setup: &'a Setup,
    pub(super) space: Space,
    pub(super) period: i64,
    pub(super) bid: [i64; 3],
    pub(super) warp: u32,
    /// threadIdx of each lane of the current warp.
    pub(super) tid: [[i64; WARP]; 3],
    /// Current value of every loop variable, per lane.
    pub(super) loop_vals: Vec<Vals>,
    pub(super) iters: Vec<u64>,
    /// Loops (by level) whose iterations all cost the same for this access.
    pub(super) invariant: Vec<bool>,
    /// The loops the access's values depend on, outermost first
    /// ([`levels`]): the enclosing ones and loops before it whose exit
    /// values it reads.
    pub(super) levels: Vec<usize>,
    /// Executions one costed execution stands for (collapsed loops).
    pub(super) weight: u64,
    /// Executions the budget counts: those costed, and those
    /// [`stride`] proved to cost what costed ones did.
    pub(super) evaluated: u64,
    /// Executions the hardware model actually costed.
    pub(super) costed: u64,
    /// Expression nodes evaluated (one node for the whole warp).
    pub(super) work: u64,
    // results
    pub(super) totals: Totals,
    /// What the current warp's run recorded (for [`collapse`]).
    pub(super) trace: collapse::WarpTrace,
    pub(super) max_cost: u32,
    pub(super) max_ways: f64,
    pub(super) worst: Option<WarpSample>,
    /// [`super::AccessReport::min_offset`].
    pub(super) min_offset: Option<i64>,
    pub(super) assumptions: Vec<Assumption>,
    /// Which assumptions are already recorded: each is worded once per
    /// access, not once per warp and iteration.
    pub(super) noted: Vec<Said>,
    /// The values whose `Said::Read` is in `noted` (a set, to skip the
    /// search of `noted` for what is already said).
    pub(super) stated: Reads,
    /// The parameters analysed over representative values whose value the
    /// cost depends on, in the order met (see [`Run::read_matters`]).
    pub(super) matters: Vec<u32>,
    pub(super) unknown: Option<UnknownReason>,
    pub(super) budget_hit: bool,
    /// [`EngineOptions::stop_above_ways`]'s limit, when it names this
    /// access's (shared) array.
    stop_above: Option<f64>,
    /// Stopped by that limit.
    pub(super) stopped: bool,
    /// Values drawn for the loaded integers the address is computed from,
    /// and which draw runs (`data.rs`); `None`: none drawn.
    pub(super) data: Option<DataDraw>,
    pub(super) draw: u64,
    /// The address's coefficient of each atom asked so far, and whether
    /// it reads no loop variable (a few atoms: a list beats hashing).
    pub(super) coeff_cache: Vec<(Atom, Option<Expr>, bool)>,
    /// Verdicts of [`Run::relevant`] that hold for the whole warp (their
    /// coefficients read no loop variable), by value read and mask (at
    /// most [`crate::budget::MAX_RELEVANCE_MEMO`]).
    pub(super) relevance: Vec<(Assumed, u32, bool)>,
    /// The address as `base + sum(coeff * unknown)` over the unknowns in it,
    /// worked out once per access (`None` inside: not linear in them).
    pub(super) linear_form: Option<Option<LinearForm>>,
    /// Scratch for the linear form's coefficients, reused from warp to warp.
    pub(super) coeff_vals: Vec<Vals>,
    /// The access's expressions, compiled ([`graph`]), and what is
    /// remembered of them (shared by the access's runs: [`Compiled`]).
    graph: &'a graph::Graph,
    pub(super) memo: &'a mut graph::Memo,
    /// How the innermost loop's iterations shift the address ([`stride`]).
    pub(super) plan: Option<&'a stride::Plan>,
    uses_block: bool,
    /// [`Compiled`]'s.
    collapse: &'a mut Option<Option<collapse::Static>>,
    /// What the executions of the run of iterations being recorded did.
    pub(super) track: Option<stride::Track>,
    /// A barrier's run: per-thread reach counts, no cost (`reach.rs`).
    pub(super) reach: Option<super::reach::Reach>,
    /// A branch's run: its warps split by its condition (`branches.rs`).
    pub(super) branch: Option<super::branches::Tally>,
    /// A pair of accesses' run: lanes of a warp touching what another
    /// stores (`races.rs`).
    pub(super) pair: Option<super::races::Pair>,
}

/// What the runs of one access share: its expressions compiled, their
/// memo (stale from the start of each warp), the loops that cannot change
/// it. Built once per access, not per run.
pub(super) struct Compiled {
    graph: graph::Graph,
    memo: graph::Memo,
    invariant: Vec<bool>,
    levels: Vec<usize>,
    plan: Option<stride::Plan>,
    /// Whether the access's values read `blockIdx` or `gridDim`.
    uses_block: bool,
    /// The launch-free part of the proof that warps stand for one
    /// another, worked out the first time a run asks.
    collapse: Option<Option<collapse::Static>>,
}

impl Compiled {
    /// Access `a` of `k`; nothing is compiled when it is `unknown` before
    /// any warp runs (`skip`).
    pub(super) fn of(k: &Kernel, a: &Access, skip: bool) -> Compiled {
        let levels = levels(k, a);
        let graph = if skip {
            graph::Graph::new(&[], |_| 0)
        } else {
            compile(k, a, &levels)
        };
        let memo = graph::Memo::new(&graph, levels.len());
        let invariant = invariant_loops(k, a, &levels);
        let plan = if skip {
            None
        } else {
            stride::Plan::of(k, a, &levels, &invariant)
        };
        Compiled {
            graph,
            memo,
            invariant,
            uses_block: uses_block(k, a, &levels),
            levels,
            plan,
            collapse: None,
        }
    }
}

/// The sums over executions a warp's run adds to.
#[derive(Clone, Copy, Default)]
pub(super) struct Totals {
    pub(super) executions: u64,
    /// Predicated executions with no lane active: issued, at no cost.
    pub(super) off: u64,
    /// Such executions where the predication is undecided
    /// (`Access::predication_undecided`).
    pub(super) undecided: u64,
    pub(super) cost: u64,
    pub(super) ideal: u64,
    pub(super) transactions: u64,
    pub(super) bytes: u64,
}

impl Totals {
    /// What was added since `before`.
    pub(super) fn since(self, before: Totals) -> Totals {
        Totals {
            executions: self.executions - before.executions,
            off: self.off - before.off,
            undecided: self.undecided - before.undecided,
            cost: self.cost - before.cost,
            ideal: self.ideal - before.ideal,
            transactions: self.transactions - before.transactions,
            bytes: self.bytes - before.bytes,
        }
    }

    pub(super) fn add(&mut self, o: Totals) {
        self.executions = self.executions.saturating_add(o.executions);
        self.off = self.off.saturating_add(o.off);
        self.undecided = self.undecided.saturating_add(o.undecided);
        self.cost = self.cost.saturating_add(o.cost);
        self.ideal = self.ideal.saturating_add(o.ideal);
        self.transactions = self.transactions.saturating_add(o.transactions);
        self.bytes = self.bytes.saturating_add(o.bytes);
    }
}

/// What a warp's evaluation reads: its lanes' `threadIdx`, the block, the
/// launch and the loop variables (fields of [`Run`], taken apart so that
/// the memo and the work counter stay free to borrow).
fn warp_env<'e>(
    tid: &'e [[i64; WARP]; 3],
    bid: [i64; 3],
    setup: &'e Setup,
    loop_vals: &'e [Vals],
    data: Option<&'e DataDraw>,
) -> WarpEnv<'e> {
    WarpEnv {
        tid,
        bid,
        block: setup.block,
        grid: setup.grid,
        params: &setup.params,
        params_assumed: &setup.params_assumed,
        grid_assumed: setup.grid_assumed,
        loop_vals,
        data,
    }
}

impl Run<'_> {
    /// Evaluates `e` for the whole warp; the assumed values it read are
    /// returned, not recorded.
    pub(super) fn eval_raw(&mut self, e: &Expr) -> (Vals, Reads) {
        let mut reads = Reads::default();
        let env = warp_env(
            &self.tid,
            self.bid,
            self.setup,
            &self.loop_vals,
            self.data.as_ref(),
        );
        let v = match self.graph.root(e) {
            Some(id) => self
                .memo
                .eval(self.graph, id, &env, &mut reads, &mut self.work),
            None => eval32(e, &env, &mut reads, &mut self.work),
        };
        if self.work > self.opts.max_work {
            self.budget_hit = true;
        }
        (v, reads)
    }

    /// `e`'s value for the whole warp, neither recorded nor counted as
    /// work (a look at values the run reads anyway, to plan its work).
    pub(super) fn probe(&self, e: &Expr) -> Vals {
        let env = warp_env(
            &self.tid,
            self.bid,
            self.setup,
            &self.loop_vals,
            self.data.as_ref(),
        );
        eval32(e, &env, &mut Reads::default(), &mut 0)
    }

    /// Evaluates `e` for the whole warp, recording assumed values it read.
    pub(super) fn eval(&mut self, e: &Expr) -> Vals {
        let (v, reads) = self.eval_raw(e);
        self.note_reads(&reads);
        v
    }

    /// Evaluates `e` for one lane (slow path, for unknowns).
    pub(super) fn eval_lane<T>(
        &self,
        l: usize,
        reads: &mut Reads,
        f: impl FnOnce(&LaneEnv, &mut Reads) -> T,
    ) -> T {
        let loop_vals: Vec<Result<i64, Fail>> = self.loop_vals.iter().map(|v| v.get(l)).collect();
        let env = LaneEnv {
            tid: [self.tid[0][l], self.tid[1][l], self.tid[2][l]],
            bid: self.bid,
            block: self.setup.block,
            grid: self.setup.grid,
            params: &self.setup.params,
            params_assumed: &self.setup.params_assumed,
            grid_assumed: self.setup.grid_assumed,
            loop_vals: &loop_vals,
            data: self.data.as_ref().map(|d| (d, l)),
        };
        f(&env, reads)
    }

    /// Lanes of `mask` that pass every guard. A guard that cannot be
    /// evaluated counts as passed (an upper bound on the cost), and says so.
    pub(super) fn mask_of(&mut self, guards: &[Guard], mask: u32) -> u32 {
        let mut m = mask;
        for g in guards {
            if m == 0 {
                break;
            }
            let v = self.eval(&g.cond);
            let truthy = v.truthy();
            let pass = if g.expect { truthy } else { !truthy & !v.err };
            if v.err & m != 0 {
                self.say(Said::ActiveDespite(v.fail), |run| Assumption::LanesActive {
                    origin: fail_origin(run.k, v.fail),
                });
            }
            m &= pass | v.err;
        }
        m
    }

    /// Costs one execution by the lanes of `mask` that pass the access's
    /// guards, adding it (times the weight) to the totals.
    pub(super) fn execute(&mut self, mask: u32) {
        if self.reach.is_some() {
            self.reach_execute(mask);
            return;
        }
        if self.branch.is_some() {
            self.branch_execute(mask);
            return;
        }
        if self.pair.is_some() {
            self.pair_execute(mask);
            return;
        }
        // A predicated access is issued by every warp that reaches its
        // first predicated `if`, lanes active or not (`Access::predicated_from`).
        let a = self.a;
        let split = a.predicated_from.map_or(a.guards.len(), |j| j as usize);
        let (outer, inner) = a.guards.split_at(split.min(a.guards.len()));
        // An early `return`'s guards, which the lowering keeps last: a
        // thread that returned issues nothing.
        let exits = inner.iter().rev().take_while(|g| g.exits).count();
        let (inner, returned) = inner.split_at(inner.len() - exits);
        let reach = self.mask_of(outer, mask);
        let reach = self.mask_of(returned, reach);
        let active = self.mask_of(inner, reach);
        if active == 0 {
            if reach != 0 && !inner.is_empty() {
                let off = if a.predication_undecided {
                    &mut self.totals.undecided
                } else {
                    &mut self.totals.off
                };
                *off = off.saturating_add(self.weight);
            }
            return;
        }
        if self.evaluated >= self.opts.max_executions {
            self.budget_hit = true;
            return;
        }
        self.evaluated += 1;
        let (v, reads) = self.eval_raw(&self.a.offset);
        let mut addrs: Lanes = [None; WARP];
        for (l, slot) in addrs.iter_mut().enumerate() {
            if active & (1 << l) != 0 && v.err & (1 << l) == 0 {
                *slot = Some(v.v[l]);
            }
        }
        // Below the base with nothing assumed but which blocks run: the
        // code itself says the pointer is not the start of an allocation.
        if v.err & active == 0 && reads.iter().all(|r| matches!(r, Assumed::BlockIdx)) {
            if let Some(low) = addrs.iter().flatten().min() {
                self.min_offset = Some(self.min_offset.map_or(*low, |m| m.min(*low)));
                self.trace.min = Some(self.trace.min.map_or(*low, |m| m.min(*low)));
                if let Some(t) = self.track.as_mut() {
                    t.lowest(*low);
                }
            }
        }
        if let Some(t) = self.track.as_mut() {
            t.executed(active, v.err & active != 0, &reads, &addrs);
        }
        if v.err & active != 0 && !self.resolve_unknowns(active, &mut addrs) {
            return;
        }
        // A drawn address outside the array: the data's own range decides.
        if let Some(d) = &self.data {
            let extent = d.extent;
            let width = i64::from(self.a.width);
            if addrs
                .iter()
                .flatten()
                .any(|x| *x < 0 || x.saturating_add(width) > extent)
            {
                let array = d.arrays.first().cloned().unwrap_or_default();
                self.unknown = Some(UnknownReason::DependsOn {
                    origin: crate::finding::Origin::Loaded { array },
                    differs: true,
                });
                return;
            }
        }
        for r in reads.iter() {
            if self.stated.contains(r) {
                continue;
            }
            if self.relevant(r, active) {
                self.read_matters(r);
            }
        }
        if self.space == Space::Local {
            // Per-thread arrays are interleaved word by word across the warp.
            for (l, a) in addrs.iter_mut().enumerate() {
                if let Some(v) = a {
                    *v = v
                        .div_euclid(4)
                        .wrapping_mul(WARP as i64)
                        .wrapping_add(l as i64)
                        .wrapping_mul(4)
                        .wrapping_add(v.rem_euclid(4));
                }
            }
        }
        self.trace.costed(active, &addrs);
        self.costed += 1;
        let (cost, ideal, transactions, bytes) = match self.space {
            Space::Shared => {
                let c = self.model.shared(&addrs, self.a.width);
                (c.wavefronts, c.ideal, 0, 0)
            }
            // A generic access is unknown before any warp runs (`Run::new`).
            Space::Global | Space::Local | Space::Generic => {
                let c = self.model.global(&addrs, self.a.width);
                (c.sectors, c.ideal, c.transactions, c.bytes)
            }
            Space::Constant => (self.model.constant(&addrs, self.a.width), 1, 0, 0),
        };
        let w = self.weight;
        self.totals.add(Totals {
            executions: w,
            off: 0,
            undecided: 0,
            cost: (cost as u64).saturating_mul(w),
            ideal: (ideal as u64).saturating_mul(w),
            transactions: (transactions as u64).saturating_mul(w),
            bytes: (bytes as u64).saturating_mul(w),
        });
        let ways = if ideal > 0 {
            cost as f64 / ideal as f64
        } else {
            0.0
        };
        if ways > self.max_ways {
            self.max_ways = ways;
        }
        if let Some(limit) = self.stop_above {
            if ways > limit {
                self.unknown = Some(UnknownReason::FixSearchStopped { ways, limit });
                self.budget_hit = true;
                self.stopped = true;
            }
        }
        if cost > self.max_cost || self.worst.is_none() {
            self.max_cost = self.max_cost.max(cost);
            self.worst = Some(WarpSample {
                block: self.bid,
                warp: self.warp,
                iterations: self.iters.clone(),
                lanes: addrs,
                cost,
            });
        }
    }
}

impl<'a> Run<'a> {
    /// The run of access `a` under `setup`; `unknown` when the access is
    /// known to be unknown before any warp runs (then nothing is compiled).
    pub(super) fn new(
        (k, a): (&'a Kernel, &'a Access),
        setup: &'a Setup,
        model: &'a dyn MemoryModel,
        opts: &'a EngineOptions,
        unknown: Option<UnknownReason>,
        compiled: &'a mut Compiled,
    ) -> Run<'a> {
        let obj = &k.objects[a.obj];
        let space = obj.space;
        // What an earlier run remembered is stale.
        compiled.memo.touch(0);
        let mut run = Run {
            k,
            a,
            model,
            opts,
            setup,
            space,
            period: model.shift_period(space, a.width).max(1) as i64,
            bid: [0; 3],
            warp: 0,
            tid: [[0; WARP]; 3],
            loop_vals: Vec::new(),
            iters: Vec::new(),
            invariant: compiled.invariant.clone(),
            levels: compiled.levels.clone(),
            weight: 1,
            evaluated: 0,
            costed: 0,
            work: 0,
            totals: Totals::default(),
            trace: collapse::WarpTrace::default(),
            max_cost: 0,
            max_ways: 0.0,
            worst: None,
            min_offset: None,
            assumptions: setup.assumptions.clone(),
            noted: Vec::new(),
            stated: Reads::default(),
            matters: Vec::new(),
            unknown,
            budget_hit: false,
            stop_above: opts
                .stop_above_ways
                .as_ref()
                .filter(|(array, _)| space == Space::Shared && obj.name == *array)
                .map(|(_, limit)| *limit),
            stopped: false,
            data: None,
            draw: 0,
            coeff_cache: Vec::new(),
            relevance: Vec::new(),
            linear_form: None,
            coeff_vals: Vec::new(),
            graph: &compiled.graph,
            memo: &mut compiled.memo,
            plan: compiled.plan.as_ref(),
            uses_block: compiled.uses_block,
            collapse: &mut compiled.collapse,
            track: None,
            reach: None,
            branch: None,
            pair: None,
        };
        if space == Space::Generic && run.unknown.is_none() {
            // The lowering says why (`Access::unknown`); never costed.
            run.unknown = Some(UnknownReason::DependsOn {
                origin: crate::finding::Origin::Unrecorded,
                differs: false,
            });
        }
        if space == Space::Local {
            let decided = k.locals.iter().any(|l| {
                l.obj == a.obj && matches!(l.placement, crate::ir::Placement::Memory { .. })
            });
            run.assume(Assumption::LocalMemory {
                array: obj.name.clone(),
                decided,
            });
        }
        if let Some(pointer) = &obj.pointee_of {
            run.assume(Assumption::AllocationStart {
                pointer: pointer.clone(),
            });
        }
        run
    }

    /// Runs every warp of every representative block (none when the access
    /// is already unknown), until one makes it unknown or a budget runs
    /// out; returns the number of blocks the means are taken over.
    pub(super) fn all_warps(&mut self) -> f64 {
        let b = self.setup.block;
        let threads = (b[0] * b[1] * b[2]).max(1);
        let nwarps = (threads + WARP as i64 - 1) / WARP as i64;
        let block_list = if self.uses_block {
            blocks(self.setup.grid, self.opts.max_blocks)
        } else {
            vec![[0, 0, 0]]
        };
        let nblocks = block_list.len() as f64;
        // Known to be unknown before any warp runs (see `Access::unknown`).
        let block_list = if self.unknown.is_some() {
            Vec::new()
        } else {
            block_list
        };
        // One warp in all: nothing could stand for another.
        let mut collapse =
            if self.opts.collapse && self.data.is_none() && block_list.len() as i64 * nwarps > 1 {
                let (k, a) = (self.k, self.a);
                let levels = &self.levels;
                let st = self
                    .collapse
                    .get_or_insert_with(|| collapse::Static::of(k, a, levels))
                    .take();
                let c = st
                    .as_ref()
                    .map(|st| collapse::Collapse::of(self, st, nwarps as usize));
                *self.collapse = Some(st);
                c
            } else {
                None
            };
        // Each sampled block's cost per ideal, when the grid has more
        // blocks than are run: where they differ, the mean rests on the
        // sample, and the result says so.
        let mut per_block: Vec<(u64, u64)> = Vec::new();
        for bid in block_list {
            self.bid = bid;
            let before = self.totals;
            if let Some(r) = self.reach.as_mut() {
                r.start_block(threads as usize);
            }
            for w in 0..nwarps {
                if !self.one_warp(w, threads, collapse.as_mut()) {
                    return nblocks;
                }
            }
            if self.reach.is_some() {
                self.reach_block_done();
            }
            let t = self.totals.since(before);
            if t.executions > 0 {
                per_block.push((t.cost, t.ideal.max(1)));
            }
        }
        let differ = per_block
            .windows(2)
            .any(|p| p[0].0 as u128 * p[1].1 as u128 != p[1].0 as u128 * p[0].1 as u128);
        if self.setup.blocks_sampled && differ {
            let g = self.setup.grid;
            self.assume(Assumption::BlocksSampled {
                sampled: self.opts.max_blocks,
                blocks: super::setup::blocks_in([g[0] as u64, g[1] as u64, g[2] as u64]),
            });
        }
        nblocks
    }

    /// Runs warp `w` of the current block of `threads` threads, or adds
    /// the totals of a representative `collapse` proves it costs what;
    /// false when the access stops here (unknown, or a budget ran out).
    fn one_warp(
        &mut self,
        w: i64,
        threads: i64,
        collapse: Option<&mut collapse::Collapse>,
    ) -> bool {
        let mask = self.enter_warp(w, threads);
        // A new warp: nothing remembered holds (collapse evaluates too).
        self.memo.touch(0);
        self.relevance.clear();
        if let Some(c) = collapse.as_deref() {
            if c.replay(self, w as usize, mask) {
                return true;
            }
        }
        // Every loop variable idle. Only the variables of the access's
        // levels are ever set, and each level leaves its own idle again, so
        // after the first warp only those are reset (a kernel with inlined
        // calls has hundreds of loop variables, 264 bytes each).
        if self.loop_vals.len() == self.k.loop_vars.len() {
            for &li in &self.levels {
                for &v in &self.k.loops[li].vars {
                    self.loop_vals[v as usize] = super::loops::idle(self.k, v);
                }
            }
        } else {
            self.loop_vals = (0..self.k.loop_vars.len() as u32)
                .map(|v| super::loops::idle(self.k, v))
                .collect();
        }
        if self.reach.is_some() {
            self.reach_exits(mask);
        }
        let before = self.totals;
        self.trace = collapse::WarpTrace::default();
        self.iterate(0, mask);
        if self.budget_hit || self.unknown.is_some() {
            return false;
        }
        if let Some(c) = collapse {
            c.record(self, w as usize, mask, before);
        }
        true
    }

    /// Makes warp `w` the current one: the `threadIdx` of each of its
    /// lanes; returns its lanes that are threads of the block.
    fn enter_warp(&mut self, w: i64, threads: i64) -> u32 {
        let b = self.setup.block;
        self.warp = w as u32;
        if let Some(d) = self.data.as_mut() {
            d.enter(self.draw, self.bid, self.warp);
        }
        let mut mask = 0u32;
        for l in 0..WARP {
            let t = w * WARP as i64 + l as i64;
            if t < threads {
                mask |= 1 << l;
            }
            self.tid[0][l] = t % b[0];
            self.tid[1][l] = (t / b[0]) % b[1];
            self.tid[2][l] = t / (b[0] * b[1]);
        }
        mask
    }
}
