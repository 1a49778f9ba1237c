//! One run of an access under one launch: what makes it `unknown` before
//! anything runs, its run, and the report made of the run's totals (means per
//! executed warp-level instruction, maxima, the worst warp). An `unknown`
//! report carries no cost and no worst warp.

use super::assume::Said;
use super::data::DataDraw;
use super::run::{Compiled, Run};
use super::setup::Setup;
use super::{AccessReport, ConstantStats, Cost, EngineOptions, GlobalStats, SharedStats, Status};
use crate::budget;
use crate::finding::{Assumption, Origin, UnknownReason};
use crate::hardware::MemoryModel;
use crate::ir::{Access, Kernel, Space};

/// One run of an access under one launch (one value of each input
/// `values.rs` varies); `kernel_work` is what the kernel's accesses
/// evaluated so far (past `max_kernel_work` the access is `unknown`
/// without being run). Also says whether the fix search's limit stopped
/// it ([`EngineOptions::stop_above_ways`]), and which parameters analysed
/// over representative values the cost depends on ([`Run::matters`]).
pub(super) fn run_access(
    k: &Kernel,
    (ki, ai, li): (usize, usize, usize),
    setup: &Setup,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    kernel_work: &mut u64,
    compiled: &mut Compiled,
) -> (AccessReport, bool, Vec<u32>) {
    let a = &k.accesses[ai];
    let unknown = unknown_up_front(a, opts, *kernel_work);
    let up_front = unknown.is_some();
    let mut run = Run::new((k, a), setup, model, opts, unknown, compiled);
    let nblocks = run.all_warps();
    *kernel_work = kernel_work.saturating_add(run.work);
    let first = finish(run, (ki, ai, li), nblocks);
    let loaded = matches!(
        first.0.unknown_reason,
        Some(UnknownReason::DependsOn {
            origin: Origin::Loaded { .. },
            ..
        })
    );
    if loaded && !up_front && opts.stop_above_ways.is_none() {
        let ids = (ki, ai, li);
        if let Some(drawn) = drawn_run(k, ids, setup, model, opts, kernel_work, compiled) {
            return drawn;
        }
    }
    first
}

/// A finished run's report over `nblocks` blocks, whether the fix
/// search's limit stopped it, and the parameters its cost depends on.
fn finish(
    mut run: Run,
    ids: (usize, usize, usize),
    nblocks: f64,
) -> (AccessReport, bool, Vec<u32>) {
    let unknown_reason = run.unknown_reason();
    let stopped = run.stopped;
    let matters = std::mem::take(&mut run.matters);
    (report(run, ids, nblocks, unknown_reason), stopped, matters)
}

/// The run of access `ai` over draws of the loaded integers its address
/// is computed from (`data.rs`); `None` when it has none to draw, or a
/// drawn address falls outside the array (the data's own range decides:
/// the access stays as the plain run left it).
fn drawn_run(
    k: &Kernel,
    (ki, ai, li): (usize, usize, usize),
    setup: &Setup,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    kernel_work: &mut u64,
    compiled: &mut Compiled,
) -> Option<(AccessReport, bool, Vec<u32>)> {
    let a = &k.accesses[ai];
    let data = DataDraw::of(k, a)?;
    let arrays = data.arrays.clone();
    let mut run = Run::new((k, a), setup, model, opts, None, compiled);
    run.data = Some(data);
    let mut nblocks = 0.0;
    let mut per_draw: Vec<f64> = Vec::new();
    for draw in 0..budget::MAX_DATA_DRAWS {
        run.draw = u64::from(draw);
        let before = run.totals;
        let n = run.all_warps();
        if run.unknown.is_some() {
            *kernel_work = kernel_work.saturating_add(run.work);
            return None;
        }
        if run.budget_hit && draw > 0 {
            // A draw cut short: the whole ones stand.
            run.totals = before;
            run.budget_hit = false;
            break;
        }
        nblocks += n;
        let t = run.totals.since(before);
        if t.ideal > 0 {
            per_draw.push(t.cost as f64 / t.ideal as f64);
        }
        if run.budget_hit {
            break;
        }
    }
    *kernel_work = kernel_work.saturating_add(run.work);
    let hundredths = |x: f64| (x * 100.0).round().clamp(0.0, f64::from(u32::MAX)) as u32;
    let low = per_draw.iter().copied().fold(f64::INFINITY, f64::min);
    let high = per_draw.iter().copied().fold(0.0, f64::max);
    if !per_draw.is_empty() {
        run.assume(Assumption::UniformData {
            arrays,
            draws: per_draw.len() as u32,
            low: hundredths(low),
            high: hundredths(high),
        });
    }
    Some(finish(run, (ki, ai, li), nblocks.max(1.0)))
}

/// Unknown up front: the access's own reason, or the kernel's work budget
/// spent.
pub(super) fn unknown_up_front(
    a: &Access,
    opts: &EngineOptions,
    kernel_work: u64,
) -> Option<UnknownReason> {
    a.unknown.clone().or_else(|| {
        (kernel_work >= opts.max_kernel_work).then(|| {
            UnknownReason::KernelBudgetSpent(budget::work_per_kernel(opts.max_kernel_work))
        })
    })
}

impl Run<'_> {
    /// Why the access is unknown: what the run recorded, else the budget
    /// it ran out of; `None` when it is known.
    fn unknown_reason(&mut self) -> Option<UnknownReason> {
        let unknown_reason = self.unknown.take();
        if !self.budget_hit || unknown_reason.is_some() {
            return unknown_reason;
        }
        let opts = self.opts;
        // The executions ran out, not the work, after some were costed:
        // the cost is theirs, and said so.
        if self.work <= opts.max_work && self.costed > 0 {
            let b = budget::executions_per_access(opts.max_executions);
            self.say(Said::FirstExecutions, |_| Assumption::FirstExecutions {
                budget: b,
            });
            return None;
        }
        Some(UnknownReason::OutOfBudget(if self.work > opts.max_work {
            budget::work_per_access(opts.max_work)
        } else {
            budget::executions_per_access(opts.max_executions)
        }))
    }

    /// The run's means (per executed warp-level instruction) and maxima,
    /// in the terms of the access's memory space.
    fn cost(&self) -> Cost {
        let t = self.totals;
        let n = t.executions.max(1) as f64;
        let mean = t.cost as f64 / n;
        match self.space {
            Space::Shared => SharedStats {
                wavefronts: mean,
                ideal_wavefronts: t.ideal as f64 / n,
                ways: if t.ideal == 0 {
                    0.0
                } else {
                    t.cost as f64 / t.ideal as f64
                },
                max_wavefronts: self.max_cost,
                max_ways: self.max_ways,
            }
            .into(),
            Space::Global | Space::Local | Space::Generic => Cost::Global(GlobalStats {
                sectors: mean,
                ideal_sectors: t.ideal as f64 / n,
                max_sectors: self.max_cost,
                transactions: t.transactions as f64 / n,
                bytes: t.bytes as f64 / n,
            }),
            Space::Constant => Cost::Constant(ConstantStats {
                requests: mean,
                max_requests: self.max_cost,
            }),
        }
    }
}

/// The report of a finished run over `nblocks` blocks.
fn report(
    run: Run,
    (ki, ai, li): (usize, usize, usize),
    nblocks: f64,
    unknown_reason: Option<UnknownReason>,
) -> AccessReport {
    let (k, a, setup) = (run.k, run.a, run.setup);
    let status = if unknown_reason.is_some() {
        Status::Unknown
    } else if !run.assumptions.is_empty() {
        Status::Assumed
    } else {
        Status::Exact
    };
    let cost = unknown_reason.is_none().then(|| run.cost());
    let c = |v: [i64; 3]| [v[0] as u64, v[1] as u64, v[2] as u64];
    AccessReport {
        kernel: ki,
        access: ai,
        launch: li,
        kernel_name: k.display_name.clone(),
        array: k.objects[a.obj].name.clone(),
        space: run.space,
        op: a.op,
        width: a.width,
        span: a.span,
        text: a.text.clone(),
        block: c(setup.block),
        grid: c(setup.grid),
        executions: run.totals.executions as f64 / nblocks,
        predicated_off: run.totals.off as f64 / nblocks,
        undecided_off: run.totals.undecided as f64 / nblocks,
        status,
        assumptions: run.assumptions,
        for_every: Vec::new(),
        unknown_reason,
        cost,
        worst: if status == Status::Unknown {
            None
        } else {
            run.worst
        },
        min_offset: run.min_offset,
        inlined_at: a.inlined_at.clone(),
        hoisted: a.hoisted,
        sass: None,
    }
}
