//! The warp engine: for each access, each launch configuration, each
//! representative block, each warp and each enumerated loop iteration, the
//! 32 lane addresses and the active mask, costed by a hardware model.
//!
//! Results are three-valued ([`Status`]): `exact` for the given launch,
//! `assumed` when they rest on stated assumptions (a default block shape, a
//! parameter's value, a sampled loop), `unknown` when the address depends
//! on data or a budget ran out; unknown results carry no cost.

mod collapse;
pub mod eval;
mod graph;
pub mod linear;

use std::collections::{BTreeSet, HashMap};

use crate::budget;
use crate::hardware::{Lanes, MemoryModel, WARP};
use crate::ir::{
    Access, Atom, Builtin, Dim, Expr, Guard, Kernel, LaunchOrigin, Op, Program, Space, Span,
};
use eval::{eval32, eval_lin, Assumed, Fail, LaneEnv, Reads, Vals, WarpEnv};

/// Defaults and budgets of the engine (see [`crate::budget`]).
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Block shape when nothing says (kernels that use only `threadIdx.x`).
    pub default_block: [u64; 3],
    /// Block shape when nothing says, for kernels that use `threadIdx.y`/`z`.
    pub default_block_2d: [u64; 3],
    /// Grid when nothing says.
    pub default_grid: [u64; 3],
    /// Value assumed for an integer parameter nothing gives a value to.
    pub default_param: i64,
    pub max_loop_iterations: u64,
    pub max_executions: u64,
    pub max_blocks: u64,
    /// Expression nodes evaluated per access (each for a whole warp).
    pub max_work: u64,
    /// Expression nodes evaluated per kernel instantiation, all accesses.
    pub max_kernel_work: u64,
    /// Analyse only the accesses to arrays of this name (re-analysis for fixes).
    pub only_array: Option<String>,
    /// Fix search: stop analysing an access to the shared array of this
    /// name as soon as one warp's n-way degree exceeds the number (the
    /// access becomes `unknown`): the search only needs to know that a
    /// candidate does no better than the best so far.
    pub stop_above_ways: Option<(String, f64)>,
    /// Do not run again a warp or block proved to cost what an earlier
    /// one did (`collapse.rs`); off only to test that the proof holds.
    pub collapse: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            default_block: [256, 1, 1],
            default_block_2d: [32, 8, 1],
            default_grid: [2, 2, 1],
            default_param: 1024,
            max_loop_iterations: budget::MAX_LOOP_ITERATIONS,
            max_executions: budget::MAX_EXECUTIONS_PER_ACCESS,
            max_blocks: budget::MAX_BLOCKS_SAMPLED,
            max_work: budget::MAX_WORK_PER_ACCESS,
            max_kernel_work: budget::MAX_WORK_PER_KERNEL,
            only_array: None,
            stop_above_ways: None,
            collapse: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Exact,
    Assumed,
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Exact => "exact",
            Status::Assumed => "assumed",
            Status::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SharedStats {
    /// Mean wavefronts per executed warp-level instruction.
    pub wavefronts: f64,
    /// Mean wavefronts a conflict-free access by the same lanes needs: one
    /// per group of lanes served together (32, 16 or 8) with an active lane.
    pub ideal_wavefronts: f64,
    /// `wavefronts / ideal_wavefronts`: the n-way conflict degree.
    pub ways: f64,
    pub max_wavefronts: u32,
    pub max_ways: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GlobalStats {
    /// Mean 32-byte sectors per executed warp-level instruction.
    pub sectors: f64,
    pub ideal_sectors: f64,
    pub max_sectors: u32,
    /// Mean memory transactions per instruction (legacy architectures:
    /// summed over the half- or quarter-warp requests).
    pub transactions: f64,
    /// Mean bytes those transactions move.
    pub bytes: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstantStats {
    /// Mean serialised requests (distinct addresses) per instruction.
    pub requests: f64,
    pub max_requests: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cost {
    Shared(SharedStats),
    /// Global and local memory.
    Global(GlobalStats),
    Constant(ConstantStats),
}

/// The warp with the worst cost, for pictures and explanations.
#[derive(Clone, Debug, PartialEq)]
pub struct WarpSample {
    pub block: [i64; 3],
    pub warp: u32,
    /// Iteration number of each enclosing loop, outermost first.
    pub iterations: Vec<u64>,
    /// Byte offset from the array's base touched by each lane.
    pub lanes: Lanes,
    pub cost: u32,
}

/// The prediction for one access under one launch configuration.
#[derive(Clone, Debug)]
pub struct AccessReport {
    pub kernel: usize,
    pub access: usize,
    pub launch: usize,
    pub kernel_name: String,
    pub array: String,
    pub space: Space,
    pub op: Op,
    pub width: u32,
    pub span: Span,
    pub text: String,
    pub block: [u64; 3],
    pub grid: [u64; 3],
    /// Warp-level executions per block the means are taken over.
    pub executions: f64,
    pub status: Status,
    pub assumptions: Vec<String>,
    pub unknown_reason: Option<String>,
    pub cost: Option<Cost>,
    pub worst: Option<WarpSample>,
    /// The lowest byte offset from the array's base that an analysed lane
    /// touched, over the warps whose address needed no assumption (beyond
    /// which blocks run). Below zero, the pointer cannot be the start of an
    /// allocation (`g_s[threadIdx.x - 1]`), so its alignment is not known.
    pub min_offset: Option<i64>,
}

/// Analyses every access of every kernel under each of its launches.
pub fn analyze_program(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> Vec<AccessReport> {
    let mut out = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        let mut kernel_work = 0u64;
        for (li, _) in k.launches.iter().enumerate() {
            let setup = Setup::new(k, li, opts);
            for ai in 0..k.accesses.len() {
                if let Some(only) = &opts.only_array {
                    if k.objects[k.accesses[ai].obj].name != *only {
                        continue;
                    }
                }
                let (r, stopped) =
                    analyze_access(k, (ki, ai, li), &setup, model, opts, &mut kernel_work);
                out.push(r);
                if stopped {
                    // The fix search has its answer for this candidate.
                    return out;
                }
            }
        }
    }
    out.sort_by(|a, b| {
        (a.span.start, a.kernel, a.launch, a.access).cmp(&(
            b.span.start,
            b.kernel,
            b.launch,
            b.access,
        ))
    });
    out
}

/// The launch configuration, resolved to numbers.
struct Setup {
    block: [i64; 3],
    grid: [i64; 3],
    params: Vec<i64>,
    params_assumed: Vec<bool>,
    grid_assumed: bool,
    assumptions: Vec<String>,
}

impl Setup {
    fn new(k: &Kernel, li: usize, opts: &EngineOptions) -> Setup {
        let l = &k.launches[li];
        let mut assumptions = Vec::new();
        let block = match (l.block, l.origin) {
            (Some(b), LaunchOrigin::LaunchBounds) => {
                assumptions.push(format!(
                    "block [{}, 1, 1] assumed from __launch_bounds__({})",
                    b[0], b[0]
                ));
                b
            }
            (Some(b), _) => b,
            (None, _) => {
                let b = if k.uses_thread_dims[1] || k.uses_thread_dims[2] {
                    opts.default_block_2d
                } else {
                    opts.default_block
                };
                assumptions.push(format!(
                    "block [{}, {}, {}] assumed: no launch of `{}` in this file gives one \
                     (set `[kernel.{}] block`)",
                    b[0], b[1], b[2], k.name, k.name
                ));
                b
            }
        };
        let (grid, grid_assumed) = match l.grid {
            Some(g) => (g, false),
            None => (opts.default_grid, true),
        };
        let params: Vec<i64> = (0..k.params.len())
            .map(|i| {
                l.params
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or(opts.default_param)
            })
            .collect();
        let params_assumed = (0..k.params.len())
            .map(|i| l.params.get(i).copied().flatten().is_none())
            .collect();
        let c = |v: [u64; 3]| [v[0] as i64, v[1] as i64, v[2] as i64];
        Setup {
            block: c(block),
            grid: c(grid),
            params,
            params_assumed,
            grid_assumed,
            assumptions,
        }
    }
}

struct Run<'a> {
    k: &'a Kernel,
    a: &'a Access,
    model: &'a dyn MemoryModel,
    opts: &'a EngineOptions,
    setup: &'a Setup,
    space: Space,
    period: i64,
    bid: [i64; 3],
    warp: u32,
    /// threadIdx of each lane of the current warp.
    tid: [[i64; WARP]; 3],
    /// Current value of every loop variable, per lane.
    loop_vals: Vec<Vals>,
    iters: Vec<u64>,
    /// Loops (by level) whose iterations all cost the same for this access.
    invariant: Vec<bool>,
    /// Executions one costed execution stands for (collapsed loops).
    weight: u64,
    /// Executions actually costed (the budget counts these).
    evaluated: u64,
    /// Expression nodes evaluated (one node for the whole warp).
    work: u64,
    // results
    totals: Totals,
    /// What the current warp's run recorded (for [`collapse`]).
    trace: collapse::WarpTrace,
    max_cost: u32,
    max_ways: f64,
    worst: Option<WarpSample>,
    /// [`AccessReport::min_offset`].
    min_offset: Option<i64>,
    assumptions: BTreeSet<String>,
    /// Which assumptions are already recorded: each is worded once per
    /// access, not once per warp and iteration.
    noted: Vec<Said>,
    unknown: Option<String>,
    budget_hit: bool,
    /// [`EngineOptions::stop_above_ways`]'s limit, when it names this
    /// access's (shared) array.
    stop_above: Option<f64>,
    /// Stopped by that limit.
    stopped: bool,
    /// The address's coefficient of each atom asked so far, and whether
    /// it reads no loop variable (a few atoms: a list beats hashing).
    coeff_cache: Vec<(Atom, Option<Expr>, bool)>,
    /// Verdicts of [`Run::relevant`] that hold for the whole warp (their
    /// coefficients read no loop variable), by value read and mask.
    relevance: Vec<(Assumed, u32, bool)>,
    /// The address as `base + sum(coeff * unknown)` over the unknowns in it,
    /// worked out once per access (`None` inside: not linear in them).
    linear_form: Option<Option<LinearForm>>,
    /// Scratch for the linear form's coefficients, reused from warp to warp.
    coeff_vals: Vec<Vals>,
    /// The access's expressions, compiled ([`graph`]), and what is
    /// remembered of them.
    graph: graph::Graph,
    memo: graph::Memo,
}

/// Verdicts on assumed values remembered per warp (by lane mask).
const MAX_RELEVANCE_MEMO: usize = 64;

/// The sums over executions a warp's run adds to.
#[derive(Clone, Copy, Default)]
struct Totals {
    executions: u64,
    cost: u64,
    ideal: u64,
    transactions: u64,
    bytes: u64,
}

impl Totals {
    /// What was added since `before`.
    fn since(self, before: Totals) -> Totals {
        Totals {
            executions: self.executions - before.executions,
            cost: self.cost - before.cost,
            ideal: self.ideal - before.ideal,
            transactions: self.transactions - before.transactions,
            bytes: self.bytes - before.bytes,
        }
    }

    fn add(&mut self, o: Totals) {
        self.executions = self.executions.saturating_add(o.executions);
        self.cost = self.cost.saturating_add(o.cost);
        self.ideal = self.ideal.saturating_add(o.ideal);
        self.transactions = self.transactions.saturating_add(o.transactions);
        self.bytes = self.bytes.saturating_add(o.bytes);
    }
}

/// An address split into its part free of unknowns and one coefficient
/// expression per unknown it contains.
struct LinearForm {
    base: Expr,
    terms: Vec<(u32, Expr)>,
}

impl LinearForm {
    fn of(offset: &Expr) -> Option<LinearForm> {
        let mut units: Vec<u32> = Vec::new();
        offset.visit_atoms(&mut |a| {
            if let Atom::Unknown(u) = a {
                if !units.contains(&u) {
                    units.push(u);
                }
            }
        });
        units.sort_unstable();
        let atoms: Vec<Atom> = units.iter().map(|u| Atom::Unknown(*u)).collect();
        let terms = units
            .iter()
            .zip(&atoms)
            .map(|(u, a)| Some((*u, linear::coefficient(offset, *a)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(LinearForm {
            base: linear::zeroed(offset, &atoms),
            terms,
        })
    }
}

/// The identity of an assumption the enumeration records (its text is
/// built once, the first time).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Said {
    Read(Assumed),
    ActiveDespite(Fail),
    TripDependsOn(u32, Fail),
    FirstIterations(u32),
    NoExit(u32),
    KeepsAligned(u32),
}

fn fail_reason(k: &Kernel, f: Fail) -> String {
    match f {
        Fail::Unknown(u) => k
            .unknowns
            .get(u as usize)
            .map(|x| x.reason.clone())
            .unwrap_or_else(|| "an unknown value".into()),
        Fail::LoopVar(v) => format!(
            "loop variable `{}`",
            k.loop_vars
                .get(v as usize)
                .map(|x| x.name.as_str())
                .unwrap_or("?")
        ),
        Fail::TooComplex => format!(
            "an expression too large to follow (past the {} or the {})",
            budget::named("MAX_EXPR_NODES", budget::MAX_EXPR_NODES, "nodes"),
            budget::named("MAX_EXPR_DEPTH", budget::MAX_EXPR_DEPTH, "levels")
        ),
        Fail::Arith => "a division by zero or an out-of-range shift".into(),
    }
}

impl<'a> Run<'a> {
    /// Evaluates `e` for the whole warp; the assumed values it read are
    /// returned, not recorded.
    fn eval_raw(&mut self, e: &Expr) -> (Vals, Reads) {
        let mut reads = Reads::default();
        let env = WarpEnv {
            tid: &self.tid,
            bid: self.bid,
            block: self.setup.block,
            grid: self.setup.grid,
            params: &self.setup.params,
            params_assumed: &self.setup.params_assumed,
            grid_assumed: self.setup.grid_assumed,
            loop_vals: &self.loop_vals,
        };
        let v = match self.graph.root(e) {
            Some(id) => self
                .memo
                .eval(&self.graph, id, &env, &mut reads, &mut self.work),
            None => eval32(e, &env, &mut reads, &mut self.work),
        };
        if self.work > self.opts.max_work {
            self.budget_hit = true;
        }
        (v, reads)
    }

    /// Evaluates `e` for the whole warp, recording assumed values it read.
    fn eval(&mut self, e: &Expr) -> Vals {
        let (v, reads) = self.eval_raw(e);
        self.note_reads(&reads);
        v
    }

    /// Evaluates `e` for one lane (slow path, for unknowns).
    fn eval_lane<T>(
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
        };
        f(&env, reads)
    }

    fn note_reads(&mut self, reads: &Reads) {
        for r in reads.iter() {
            self.say(Said::Read(r), |run| run.assumed_text(r));
        }
    }

    /// Records an assumption once; `text` runs only the first time.
    fn say(&mut self, key: Said, text: impl FnOnce(&Self) -> String) {
        if !self.noted.contains(&key) {
            self.noted.push(key);
            let t = text(self);
            self.assumptions.insert(t);
        }
    }

    fn assumed_text(&self, r: Assumed) -> String {
        match r {
            Assumed::Param(i) => {
                let name = self
                    .k
                    .params
                    .get(i as usize)
                    .map(|p| p.name.as_str())
                    .unwrap_or("?");
                format!(
                    "`{name}` assumed {} (no launch gives it a constant; set `[kernel.{}.params] {name}`)",
                    self.opts.default_param, self.k.name
                )
            }
            Assumed::BlockIdx | Assumed::GridDim => {
                let g = self.setup.grid;
                format!(
                    "grid [{}, {}, {}] assumed: no launch in this file gives one",
                    g[0], g[1], g[2]
                )
            }
        }
    }

    /// Lanes of `mask` that pass every guard. A guard that cannot be
    /// evaluated counts as passed (an upper bound on the cost), and says so.
    fn mask_of(&mut self, guards: &[Guard], mask: u32) -> u32 {
        let mut m = mask;
        for g in guards {
            if m == 0 {
                break;
            }
            let v = self.eval(&g.cond);
            let truthy = v.truthy();
            let pass = if g.expect { truthy } else { !truthy & !v.err };
            if v.err & m != 0 {
                self.say(Said::ActiveDespite(v.fail), |run| {
                    let why = fail_reason(run.k, v.fail);
                    format!("lanes assumed active where a condition depends on {why}")
                });
            }
            m &= pass | v.err;
        }
        m
    }

    /// Lanes of `mask` for which `cond` holds; an unknown condition keeps
    /// the lane for one iteration (`unknown_trip` is set).
    fn loop_cond(&mut self, cond: &Expr, mask: u32, line: u32, unknown_trip: &mut bool) -> u32 {
        let v = self.eval(cond);
        if v.err & mask != 0 {
            *unknown_trip = true;
            self.say(Said::TripDependsOn(line, v.fail), |run| {
                let why = fail_reason(run.k, v.fail);
                format!(
                    "the loop at line {line} runs a number of times that depends on {why}; one iteration analysed"
                )
            });
        }
        mask & (v.truthy() | v.err)
    }

    fn iterate(&mut self, level: usize, mask: u32) {
        if self.budget_hit || mask == 0 {
            return;
        }
        if level == self.a.loops.len() {
            self.execute(mask);
            return;
        }
        let lp = &self.k.loops[self.a.loops[level]];
        let line = lp.span.line;
        let invariant = self.invariant[level];
        let mut groups: Vec<(u32, u64)> = Vec::new();
        let entry = self.mask_of(&lp.entry_guards, mask);
        if entry == 0 {
            return;
        }
        for (i, e) in lp.vars.iter().zip(&lp.init) {
            let v = self.eval(e);
            self.loop_vals[*i as usize] = v;
            self.memo.touch(level + 1);
        }
        let mut inside = entry;
        let mut k = 0u64;
        let limit = self.opts.max_loop_iterations;
        let mut unknown_trip = false;
        loop {
            if self.budget_hit {
                return;
            }
            if k >= limit {
                self.say(Said::FirstIterations(line), |_| {
                    format!(
                        "only the first {limit} iterations of the loop at line {line} are analysed \
                         ({})",
                        budget::named("MAX_LOOP_ITERATIONS", limit, "iterations")
                    )
                });
                break;
            }
            if unknown_trip && k >= 1 {
                break;
            }
            if let Some(c) = &lp.pre_cond {
                inside = self.loop_cond(c, inside, line, &mut unknown_trip);
            }
            if inside == 0 {
                break;
            }
            if invariant {
                // Same cost every iteration: count, cost once per lane mask.
                match groups.iter_mut().find(|g| g.0 == inside) {
                    Some(g) => g.1 += 1,
                    None => groups.push((inside, 1)),
                }
            } else {
                self.iters.push(k);
                self.iterate(level + 1, inside);
                self.iters.pop();
                if self.budget_hit {
                    return;
                }
            }
            // Lanes that break leave; the rest advance.
            let mut stay = inside;
            for b in &lp.breaks {
                let mut all = inside;
                for g in b {
                    let v = self.eval(&g.cond);
                    let holds = if g.expect {
                        v.truthy()
                    } else {
                        !v.truthy() & !v.err
                    };
                    all &= holds;
                }
                stay &= !all;
            }
            if let Some(pc) = &lp.post_cond {
                stay = self.loop_cond(pc, stay, line, &mut unknown_trip);
            }
            if let ([var], [next]) = (&lp.vars[..], &lp.next[..]) {
                // One variable (the common case): no buffer for the update.
                let v = self.eval(next);
                self.loop_vals[*var as usize] = v;
            } else {
                // Several: every update reads the old values.
                let next: Vec<Vals> = lp.next.iter().map(|e| self.eval(e)).collect();
                for (i, v) in lp.vars.iter().zip(next) {
                    self.loop_vals[*i as usize] = v;
                }
            }
            self.memo.touch(level + 1);
            inside = stay;
            k += 1;
            if lp.pre_cond.is_none() && lp.post_cond.is_none() && lp.breaks.is_empty() {
                self.say(Said::NoExit(line), |_| {
                    format!("the loop at line {line} has no visible exit; one iteration analysed")
                });
                break;
            }
        }
        for i in &lp.vars {
            self.loop_vals[*i as usize] = Vals::failed(Fail::LoopVar(*i));
        }
        self.memo.touch(level + 1);
        for (m, count) in groups {
            let saved = self.weight;
            self.weight = self.weight.saturating_mul(count);
            self.iters.push(0);
            self.iterate(level + 1, m);
            self.iters.pop();
            self.weight = saved;
            if self.budget_hit {
                return;
            }
        }
    }

    fn coeff(&mut self, atom: Atom) -> Option<Expr> {
        self.coeff_entry(atom).0
    }

    /// [`Self::coeff`], and whether the coefficient reads no loop variable.
    fn coeff_entry(&mut self, atom: Atom) -> (Option<Expr>, bool) {
        if let Some((_, c, free)) = self.coeff_cache.iter().find(|(x, _, _)| *x == atom) {
            return (c.clone(), *free);
        }
        let c = linear::coefficient(&self.a.offset, atom);
        let mut free = true;
        if let Some(c) = &c {
            c.visit_atoms(&mut |x| free &= !matches!(x, Atom::LoopVar(_)));
        }
        self.coeff_cache.push((atom, c.clone(), free));
        (c, free)
    }

    /// Whether the cost depends on the assumed value `r` for the lanes
    /// `active` (see [`Self::irrelevant`]); remembered for the warp when
    /// that cannot change from one iteration to the next.
    fn relevant(&mut self, r: Assumed, active: u32) -> bool {
        if let Some((_, _, v)) = self
            .relevance
            .iter()
            .find(|(x, m, _)| *x == r && *m == active)
        {
            return *v;
        }
        if r == Assumed::GridDim {
            return true;
        }
        let (atoms, n) = judged_atoms(r);
        let mut relevant = false;
        let mut warp_wide = true;
        for atom in &atoms[..n] {
            warp_wide &= self.coeff_entry(*atom).1;
            if !self.irrelevant(*atom, active) {
                relevant = true;
                break;
            }
        }
        if warp_wide && self.relevance.len() < MAX_RELEVANCE_MEMO {
            self.relevance.push((r, active, relevant));
        }
        relevant
    }

    /// True when the assumed atom only shifts the whole warp by multiples
    /// of the hardware period (so the cost does not depend on its value).
    fn irrelevant(&mut self, atom: Atom, mask: u32) -> bool {
        let Some(c) = self.coeff(atom) else {
            return false;
        };
        let (v, reads) = self.eval_raw(&c);
        if v.err & mask != 0 || !reads.is_empty() {
            return false;
        }
        let mut first = None;
        for l in 0..WARP {
            if mask & (1 << l) == 0 {
                continue;
            }
            match first {
                None => first = Some(v.v[l]),
                Some(f) if f != v.v[l] => return false,
                _ => {}
            }
        }
        first.map(|v| v % self.period == 0).unwrap_or(true)
    }

    fn execute(&mut self, mask: u32) {
        let guards = &self.a.guards;
        let active = self.mask_of(guards, mask);
        if active == 0 {
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
            }
        }
        if v.err & active != 0 && !self.resolve_unknowns(active, &mut addrs) {
            return;
        }
        for r in reads.iter() {
            if self.noted.contains(&Said::Read(r)) {
                continue;
            }
            if self.relevant(r, active) {
                self.say(Said::Read(r), |run| run.assumed_text(r));
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
        let (cost, ideal, transactions, bytes) = match self.space {
            Space::Shared => {
                let c = self.model.shared(&addrs, self.a.width);
                (c.wavefronts, c.ideal, 0, 0)
            }
            Space::Global | Space::Local => {
                let c = self.model.global(&addrs, self.a.width);
                (c.sectors, c.ideal, c.transactions, c.bytes)
            }
            Space::Constant => (self.model.constant(&addrs, self.a.width), 1, 0, 0),
        };
        let w = self.weight;
        self.totals.add(Totals {
            executions: w,
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
                self.unknown = Some(format!(
                    "the fix search stopped: a warp is {ways}-way, no better than {limit}"
                ));
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

    /// Handles unknowns in the address: a value that is the same for the
    /// whole warp and enters the address linearly with the same
    /// coefficient in every lane only shifts the warp. Returns false (and
    /// records why) when the address cannot be known.
    fn resolve_unknowns(&mut self, active: u32, addrs: &mut Lanes) -> bool {
        if let Some(done) = self.resolve_unknowns_warp(active, addrs) {
            return done;
        }
        let mut lins = Vec::new();
        for l in 0..WARP {
            if active & (1 << l) == 0 {
                lins.push(None);
                continue;
            }
            let mut reads = Reads::default();
            let offset = &self.a.offset;
            let r = self.eval_lane(l, &mut reads, |env, reads| eval_lin(offset, env, reads));
            match r {
                Ok(lin) => lins.push(Some(lin)),
                Err(f) => {
                    let why = fail_reason(self.k, f);
                    self.unknown = Some(format!("the address depends on {why}"));
                    return false;
                }
            }
        }
        let mut units: Vec<u32> = lins
            .iter()
            .flatten()
            .flat_map(|l| l.terms.iter().map(|t| t.0))
            .collect();
        units.sort_unstable();
        units.dedup();
        for u in units {
            let coeffs: Vec<i64> = lins
                .iter()
                .flatten()
                .map(|l| l.terms.iter().find(|t| t.0 == u).map(|t| t.1).unwrap_or(0))
                .collect();
            if !self.shifts_warp(u, &coeffs, active) {
                return false;
            }
        }
        for (l, lin) in lins.into_iter().enumerate() {
            addrs[l] = lin.map(|x| x.c);
        }
        true
    }

    /// The same for the whole warp at once, through the address's linear
    /// form: `None` when that form does not exist, or some lane's base or
    /// coefficient fails, or the address is not known (the lane-by-lane
    /// path then decides and says why).
    fn resolve_unknowns_warp(&mut self, active: u32, addrs: &mut Lanes) -> Option<bool> {
        let form = match self.linear_form.take() {
            Some(form) => form,
            None => LinearForm::of(&self.a.offset),
        };
        let mut coeffs = std::mem::take(&mut self.coeff_vals);
        coeffs.clear();
        let done = form
            .as_ref()
            .and_then(|f| self.resolve_through(f, &mut coeffs, active, addrs));
        self.coeff_vals = coeffs;
        self.linear_form = Some(form);
        done
    }

    /// [`Self::resolve_unknowns_warp`] with the linear form at hand;
    /// `coeffs` is an empty buffer kept from warp to warp.
    fn resolve_through(
        &mut self,
        form: &LinearForm,
        coeffs: &mut Vec<Vals>,
        active: u32,
        addrs: &mut Lanes,
    ) -> Option<bool> {
        // Reads of assumed values are judged by `execute` from the full
        // address, as on the lane-by-lane path.
        let (b, _) = self.eval_raw(&form.base);
        if b.err & active != 0 {
            return None;
        }
        // Every coefficient first (any failing lane sends the access to the
        // lane-by-lane path before anything is recorded), then the checks.
        for (_, c) in &form.terms {
            let (v, _) = self.eval_raw(c);
            if v.err & active != 0 {
                return None;
            }
            coeffs.push(v);
        }
        for ((u, _), v) in form.terms.iter().zip(coeffs.iter()) {
            let mut lane_coeffs = [0i64; WARP];
            let mut n = 0;
            for l in (0..WARP).filter(|l| active & (1 << l) != 0) {
                lane_coeffs[n] = v.v[l];
                n += 1;
            }
            let lane_coeffs = &lane_coeffs[..n];
            if lane_coeffs.iter().any(|c| *c != 0) && !self.shifts_warp(*u, lane_coeffs, active) {
                // The lane-by-lane path names the unknown a reader should
                // look at first; it runs once, as the access stops here.
                self.unknown = None;
                return None;
            }
        }
        for (l, slot) in addrs.iter_mut().enumerate() {
            *slot = (active & (1 << l) != 0).then_some(b.v[l]);
        }
        Some(true)
    }

    /// True when unknown `u`, entering the active lanes' addresses with
    /// coefficients `coeffs`, is one value for the whole warp with one
    /// coefficient (it only shifts the warp); else records why not.
    fn shifts_warp(&mut self, u: u32, coeffs: &[i64], active: u32) -> bool {
        let same_coeff = coeffs.windows(2).all(|w| w[0] == w[1]);
        let k = self.k;
        let why = &k.unknowns[u as usize].reason;
        let uniform = match k.unknowns[u as usize].witness.as_ref() {
            None => false,
            Some(w) => {
                let v = self.eval(w);
                let mut first = None;
                let mut same = v.err & active == 0;
                for l in 0..WARP {
                    if active & (1 << l) == 0 {
                        continue;
                    }
                    match first {
                        None => first = Some(v.v[l]),
                        Some(f) if f != v.v[l] => same = false,
                        _ => {}
                    }
                }
                same
            }
        };
        if !(uniform && same_coeff) {
            self.unknown = Some(format!(
                "the address depends on {why}, which differs between lanes"
            ));
            return false;
        }
        if coeffs.first().is_some_and(|c| c % self.period != 0) {
            self.say(Said::KeepsAligned(u), |run| {
                format!(
                    "the offset from {why} is assumed to keep the warp {}-byte aligned",
                    run.period
                )
            });
        }
        true
    }
}

/// The expressions `a` evaluates, each at the loop depth it is evaluated
/// at (see [`graph::Graph::new`]).
fn compile(k: &Kernel, a: &Access) -> graph::Graph {
    let depth = a.loops.len() as u32;
    let mut roots: Vec<(&Expr, u32)> = vec![(&a.offset, depth)];
    roots.extend(a.guards.iter().map(|g| (&g.cond, depth)));
    let mut level_of: HashMap<u32, u32> = HashMap::new();
    for (l, &li) in a.loops.iter().enumerate() {
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
    graph::Graph::new(&roots, |v| level_of.get(&v).copied().unwrap_or(0))
}

/// For each enclosing loop (outermost first): true when none of its
/// variables reaches the access's address, guards or the conditions of the
/// loops inside it (directly or through other loop variables), so every
/// iteration costs the same.
fn invariant_loops(k: &Kernel, a: &Access) -> Vec<bool> {
    (0..a.loops.len())
        .map(|level| {
            let mut roots: Vec<&Expr> = vec![&a.offset];
            roots.extend(a.guards.iter().map(|g| &g.cond));
            for &li in &a.loops[level + 1..] {
                let lp = &k.loops[li];
                roots.extend(lp.pre_cond.iter());
                roots.extend(lp.post_cond.iter());
                roots.extend(lp.entry_guards.iter().map(|g| &g.cond));
                roots.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
            }
            let relevant = relevant_vars(k, &roots);
            !k.loops[a.loops[level]]
                .vars
                .iter()
                .any(|v| relevant.contains(v))
        })
        .collect()
}

/// Loop variables `roots` depend on, through the variables' own updates.
fn relevant_vars(k: &Kernel, roots: &[&Expr]) -> BTreeSet<u32> {
    reachable_atoms(k, roots, &[])
        .into_iter()
        .filter_map(|a| match a {
            Atom::LoopVar(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// Every atom `roots` read, following loop variables (theirs and `vars`)
/// to their initial values and updates.
fn reachable_atoms(k: &Kernel, roots: &[&Expr], vars: &[u32]) -> Vec<Atom> {
    let mut atoms: Vec<Atom> = Vec::new();
    let mut done: BTreeSet<u32> = BTreeSet::new();
    let mut work: Vec<Expr> = roots.iter().map(|e| (*e).clone()).collect();
    let mut follow = |v: u32, work: &mut Vec<Expr>| {
        if !done.insert(v) {
            return;
        }
        let Some(info) = k.loop_vars.get(v as usize) else {
            return;
        };
        let lp = &k.loops[info.loop_id];
        if let Some(i) = lp.vars.iter().position(|x| *x == v) {
            work.extend(lp.init.get(i).cloned());
            work.extend(lp.next.get(i).cloned());
        }
    };
    for v in vars {
        follow(*v, &mut work);
    }
    while let Some(e) = work.pop() {
        for a in e.atoms() {
            if let Atom::LoopVar(v) = a {
                follow(v, &mut work);
            }
            if !atoms.contains(&a) {
                atoms.push(a);
            }
        }
    }
    atoms
}

/// The atoms whose coefficients decide whether an assumed value matters
/// (see [`Run::irrelevant`]), the first `n` of the array; none for
/// `gridDim`, which always does.
fn judged_atoms(r: Assumed) -> ([Atom; 3], usize) {
    let block = |d| Atom::Builtin(Builtin::BlockIdx(d));
    match r {
        Assumed::Param(i) => ([Atom::Param(i); 3], 1),
        Assumed::BlockIdx => ([block(Dim::X), block(Dim::Y), block(Dim::Z)], 3),
        Assumed::GridDim => ([Atom::TooComplex; 3], 0),
    }
}

fn uses_block(k: &Kernel, a: &Access) -> bool {
    let mut exprs: Vec<&Expr> = vec![&a.offset];
    exprs.extend(a.guards.iter().map(|g| &g.cond));
    for &li in &a.loops {
        let lp = &k.loops[li];
        exprs.extend(lp.init.iter());
        exprs.extend(lp.next.iter());
        exprs.extend(lp.pre_cond.iter());
        exprs.extend(lp.post_cond.iter());
        exprs.extend(lp.entry_guards.iter().map(|g| &g.cond));
        exprs.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
    }
    exprs.iter().any(|e| {
        e.atoms()
            .iter()
            .any(|x| matches!(x, Atom::Builtin(Builtin::BlockIdx(_) | Builtin::GridDim(_))))
    })
}

/// Representative blocks: all of a small grid, else evenly spaced ones
/// including the first and the last.
fn blocks(grid: [i64; 3], max: u64) -> Vec<[i64; 3]> {
    let (gx, gy, gz) = (
        grid[0].max(1) as u64,
        grid[1].max(1) as u64,
        grid[2].max(1) as u64,
    );
    let total = gx.saturating_mul(gy).saturating_mul(gz);
    let pick: Vec<u64> = if total <= max {
        (0..total).collect()
    } else {
        // i * (total - 1) can overflow u64 for huge grids: compute in u128.
        let mut v: Vec<u64> = (0..max as u128)
            .map(|i| (i * (total as u128 - 1) / (max as u128 - 1).max(1)) as u64)
            .collect();
        v.dedup();
        v
    };
    pick.into_iter()
        .map(|i| {
            [
                (i % gx) as i64,
                ((i / gx) % gy) as i64,
                (i / gx / gy) as i64,
            ]
        })
        .collect()
}

/// One access under one launch; `kernel_work` is what the kernel's
/// accesses evaluated so far (past `max_kernel_work` the access is
/// `unknown` without being run).
fn analyze_access(
    k: &Kernel,
    (ki, ai, li): (usize, usize, usize),
    setup: &Setup,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    kernel_work: &mut u64,
) -> (AccessReport, bool) {
    let a = &k.accesses[ai];
    let obj = &k.objects[a.obj];
    let space = obj.space;
    // Unknown up front: its own reason, or the kernel's work budget spent.
    let unknown = a.unknown.clone().or_else(|| {
        (*kernel_work >= opts.max_kernel_work).then(|| {
            format!(
                "the kernel's accesses before this one used up the {}",
                budget::named(
                    "MAX_WORK_PER_KERNEL",
                    opts.max_kernel_work,
                    "expression nodes per kernel"
                )
            )
        })
    });
    // Nothing is evaluated for such an access: nothing to compile.
    let graph = match unknown {
        None => compile(k, a),
        Some(_) => graph::Graph::new(&[], |_| 0),
    };
    let memo = graph::Memo::new(&graph, a.loops.len());
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
        invariant: invariant_loops(k, a),
        weight: 1,
        evaluated: 0,
        work: 0,
        totals: Totals::default(),
        trace: collapse::WarpTrace::default(),
        max_cost: 0,
        max_ways: 0.0,
        worst: None,
        min_offset: None,
        assumptions: setup.assumptions.iter().cloned().collect(),
        noted: Vec::new(),
        unknown,
        budget_hit: false,
        stop_above: opts
            .stop_above_ways
            .as_ref()
            .filter(|(array, _)| space == Space::Shared && obj.name == *array)
            .map(|(_, limit)| *limit),
        stopped: false,
        coeff_cache: Vec::new(),
        relevance: Vec::new(),
        linear_form: None,
        coeff_vals: Vec::new(),
        graph,
        memo,
    };
    if space == Space::Local {
        run.assumptions.insert(format!(
            "`{}` assumed to live in local memory (arrays whose indices are all known once loops \
             unroll are kept in registers)",
            obj.name
        ));
    }
    let b = setup.block;
    let threads = (b[0] * b[1] * b[2]).max(1);
    let nwarps = (threads + WARP as i64 - 1) / WARP as i64;
    let block_list = if uses_block(k, a) {
        blocks(setup.grid, opts.max_blocks)
    } else {
        vec![[0, 0, 0]]
    };
    let nblocks = block_list.len() as f64;
    // Known to be unknown before any warp runs (see `Access::unknown`).
    let block_list = if run.unknown.is_some() {
        Vec::new()
    } else {
        block_list
    };
    // One warp in all: nothing could stand for another.
    let mut collapse = if opts.collapse && block_list.len() as i64 * nwarps > 1 {
        collapse::Collapse::of(&mut run, nwarps as usize)
    } else {
        None
    };
    'outer: for bid in block_list {
        run.bid = bid;
        for w in 0..nwarps {
            run.warp = w as u32;
            let mut mask = 0u32;
            for l in 0..WARP {
                let t = w * WARP as i64 + l as i64;
                if t < threads {
                    mask |= 1 << l;
                }
                run.tid[0][l] = t % b[0];
                run.tid[1][l] = (t / b[0]) % b[1];
                run.tid[2][l] = t / (b[0] * b[1]);
            }
            // A new warp: nothing remembered holds (collapse evaluates too).
            run.memo.touch(0);
            run.relevance.clear();
            if let Some(c) = collapse.as_ref() {
                if c.replay(&mut run, w as usize, mask) {
                    continue;
                }
            }
            run.loop_vals = vec![Vals::failed(Fail::TooComplex); k.loop_vars.len()];
            let before = run.totals;
            run.trace = collapse::WarpTrace::default();
            run.iterate(0, mask);
            if run.budget_hit || run.unknown.is_some() {
                break 'outer;
            }
            if let Some(c) = collapse.as_mut() {
                c.record(&mut run, w as usize, mask, before);
            }
        }
    }
    let mut unknown_reason = run.unknown.take();
    if run.budget_hit && unknown_reason.is_none() {
        unknown_reason = Some(if run.work > opts.max_work {
            format!(
                "the {} ran out",
                budget::named(
                    "MAX_WORK_PER_ACCESS",
                    opts.max_work,
                    "expression nodes per access"
                )
            )
        } else {
            format!(
                "the {} ran out",
                budget::named(
                    "MAX_EXECUTIONS_PER_ACCESS",
                    opts.max_executions,
                    "warp-level executions"
                )
            )
        });
    }
    let status = if unknown_reason.is_some() {
        Status::Unknown
    } else if !run.assumptions.is_empty() {
        Status::Assumed
    } else {
        Status::Exact
    };
    let t = run.totals;
    let n = t.executions.max(1) as f64;
    let mean = t.cost as f64 / n;
    let cost = if unknown_reason.is_some() {
        None
    } else {
        Some(match space {
            Space::Shared => SharedStats {
                wavefronts: mean,
                ideal_wavefronts: t.ideal as f64 / n,
                ways: if t.ideal == 0 {
                    0.0
                } else {
                    t.cost as f64 / t.ideal as f64
                },
                max_wavefronts: run.max_cost,
                max_ways: run.max_ways,
            }
            .into(),
            Space::Global | Space::Local => Cost::Global(GlobalStats {
                sectors: mean,
                ideal_sectors: t.ideal as f64 / n,
                max_sectors: run.max_cost,
                transactions: t.transactions as f64 / n,
                bytes: t.bytes as f64 / n,
            }),
            Space::Constant => Cost::Constant(ConstantStats {
                requests: mean,
                max_requests: run.max_cost,
            }),
        })
    };
    let c = |v: [i64; 3]| [v[0] as u64, v[1] as u64, v[2] as u64];
    let stopped = run.stopped;
    *kernel_work = kernel_work.saturating_add(run.work);
    let report = AccessReport {
        kernel: ki,
        access: ai,
        launch: li,
        kernel_name: k.display_name.clone(),
        array: obj.name.clone(),
        space,
        op: a.op,
        width: a.width,
        span: a.span,
        text: a.text.clone(),
        block: c(setup.block),
        grid: c(setup.grid),
        executions: t.executions as f64 / nblocks,
        status,
        assumptions: run.assumptions.into_iter().collect(),
        unknown_reason,
        cost,
        worst: if status == Status::Unknown {
            None
        } else {
            run.worst
        },
        min_offset: run.min_offset,
    };
    (report, stopped)
}

impl From<SharedStats> for Cost {
    fn from(s: SharedStats) -> Cost {
        Cost::Shared(s)
    }
}
