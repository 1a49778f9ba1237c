//! Divergent branches: for each `if`/`else` with work on both sides
//! ([`crate::ir::Branch`]), how many of the warp-level executions that
//! reach it have lanes on both sides (both paths then run, one after the
//! other, each with the other's lanes idle). The branch is run like an
//! access (its guards and loops, every warp of each representative
//! block), its condition evaluated for the lanes that reach it. A guard or
//! condition the engine cannot evaluate makes the answer unknown.

use super::run::{Compiled, Run};
use super::{EngineOptions, Status};
use crate::finding::{Assumption, UnknownReason};
use crate::hardware::MemoryModel;
use crate::ir::{Expr, Inlined, Program, Span};

/// One branch under one launch.
#[derive(Clone, Debug)]
pub struct BranchReport {
    pub kernel: usize,
    pub branch: usize,
    pub launch: usize,
    pub kernel_name: String,
    /// The condition.
    pub span: Span,
    pub text: String,
    pub block: [u64; 3],
    pub grid: [u64; 3],
    pub status: Status,
    pub assumptions: Vec<Assumption>,
    pub unknown_reason: Option<UnknownReason>,
    /// Warp-level executions that reach the branch (some lane active).
    pub executions: u64,
    /// Of those, the ones with lanes on both sides.
    pub divergent: u64,
    /// The first divergent warp met.
    pub sample: Option<BranchSample>,
    pub inlined_at: Option<Inlined>,
}

/// A warp split by a branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchSample {
    pub block: [i64; 3],
    pub warp: u32,
    /// Lanes (bit l: lane l) taking the `if`, and the `else`.
    pub then_lanes: u32,
    pub else_lanes: u32,
}

/// What a branch run counts.
pub(super) struct Tally {
    cond: Expr,
    executions: u64,
    divergent: u64,
    sample: Option<BranchSample>,
}

impl Run<'_> {
    /// One execution of the branch by the lanes of `mask` that pass its
    /// guards (the branch run's `execute`).
    pub(super) fn branch_execute(&mut self, mask: u32) {
        let Some(m) = self.known_mask(&self.a.guards, mask) else {
            return;
        };
        if m == 0 {
            return;
        }
        let Some(cond) = self.branch.as_ref().map(|t| t.cond.clone()) else {
            return;
        };
        let Some(v) = self.eval_known(&cond, m) else {
            return;
        };
        let (then_lanes, else_lanes) = (m & v.truthy(), m & !v.truthy());
        let (w, bid, warp) = (self.weight, self.bid, self.warp);
        let Some(t) = self.branch.as_mut() else {
            return;
        };
        t.executions = t.executions.saturating_add(w);
        if then_lanes != 0 && else_lanes != 0 {
            t.divergent = t.divergent.saturating_add(w);
            t.sample.get_or_insert(BranchSample {
                block: bid,
                warp,
                then_lanes,
                else_lanes,
            });
        }
    }
}

/// Branch `bi` of kernel `ki` under launch `li`.
fn branch_one(
    p: &Program,
    (ki, bi, li): (usize, usize, usize),
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> BranchReport {
    let k = &p.kernels[ki];
    let b = &k.branches[bi];
    let setup = super::reach::one_run_setup(k, li, opts);
    let a = super::reach::stand_in(&b.guards, &b.loops, (b.span, &b.text), &b.inlined_at);
    let c = |v: [i64; 3]| [v[0] as u64, v[1] as u64, v[2] as u64];
    let mut report = BranchReport {
        kernel: ki,
        branch: bi,
        launch: li,
        kernel_name: k.display_name.clone(),
        span: b.span,
        text: b.text.clone(),
        block: c(setup.block),
        grid: c(setup.grid),
        status: Status::Exact,
        assumptions: Vec::new(),
        unknown_reason: None,
        executions: 0,
        divergent: 0,
        sample: None,
        inlined_at: b.inlined_at.clone(),
    };
    if super::reach::block_uniform(k, &a, &[&b.cond]) {
        return report;
    }
    let mut compiled = Compiled::of(k, &a, false);
    let mut run = Run::new((k, &a), &setup, model, opts, None, &mut compiled);
    run.control_mode(&setup);
    run.branch = Some(Tally {
        cond: b.cond.clone(),
        executions: 0,
        divergent: 0,
        sample: None,
    });
    run.all_warps();
    let unknown_reason = super::reach::unsure_reason(&mut run, opts);
    let tally = run.branch.take();
    report.status = super::reach::control_status(&unknown_reason, &run.assumptions);
    report.assumptions = std::mem::take(&mut run.assumptions);
    if let (None, Some(t)) = (&unknown_reason, tally) {
        report.executions = t.executions;
        report.divergent = t.divergent;
        report.sample = t.sample;
    }
    report.unknown_reason = unknown_reason;
    report
}

/// Every branch of every kernel under each of its launches.
pub fn analyze_branches(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> Vec<BranchReport> {
    let opts = super::reach::control_opts(opts);
    super::reach::each_item(
        p,
        |k| k.branches.len(),
        |ki, bi, li| branch_one(p, (ki, bi, li), model, &opts),
    )
}
