//! What no launch gives, analysed over representative values rather than
//! made up: each integer parameter whose value the cost depends on (the
//! values the kernel's launches give it, else every value of its type, else
//! a spread of sizes) and a block no launch gives (the common shapes for
//! the kernel's dimensions, the configured default among them).
//!
//! One access is run for each combination of values (past
//! `MAX_VALUE_COMBINATIONS`, each input alone, the others at their first
//! value). Where every run is as wasteful as the others (the measure the
//! rules judge: the worst warp's n-way degree, sectors per ideal sector,
//! constant requests), the answer holds for every value tried: it is not
//! assumed, and `AccessReport::for_every` names the inputs. Else the most
//! wasteful run where programs usually run is reported (at the typical
//! sizes, where the access executes; else any run where it executes),
//! `assumed`, with the condition over the values tried under which it
//! holds.
//!
//! Invariants: run 0 is the first run, under the values of [`Setup::new`];
//! a parameter that run finds irrelevant is not varied; an unknown run is
//! never the reported one while another is known, and a value whose run is
//! unknown does not meet the condition; a value under which the access
//! never executes meets it (it holds there vacuously: `i < n - 1 - t` with
//! `t` = `n` is no reason to think programs do not run the access), and so
//! does a value that makes the address undefined (`1 << log2N` with
//! `log2N` = 1024: no working program passes it). When the first run's
//! spread values make the address undefined, the first run takes the next
//! smaller spread value; when no run executes the access, the runs start
//! again from the next smaller spread value for every parameter.

use super::access::{run_access, unknown_up_front};
use super::run::Compiled;
use super::setup::Setup;
use super::{AccessReport, Cost, EngineOptions, Status};
use crate::budget;
use crate::finding::{Assumption, Budget, Condition, ForEvery, Origin, UnknownReason, ValueSource};
use crate::hardware::MemoryModel;
use crate::ir::Kernel;

/// A spread of sizes: small and large, odd and even, powers of two and one
/// just past a power of two.
const SPREAD: [i64; 7] = [1, 2, 7, 32, 100, 1024, 4099];
/// The sizes most kernels run on (powers of two: a warp, a large row):
/// the answer is the most wasteful run at these sizes (where the access
/// executes), the condition saying for which values tried it holds; a
/// waste only at odd or small sizes is not the answer.
const TYPICAL: [i64; 2] = [32, 1024];
/// The spread's value in the first run: 1024, the value assumed before
/// the spread (a large power of two: loops bounded by the parameter run).
const SPREAD_FIRST: i64 = 1024;
/// Common shapes of a block that uses only `threadIdx.x`.
const BLOCKS_1D: [[u64; 3]; 5] = [
    [64, 1, 1],
    [128, 1, 1],
    [256, 1, 1],
    [512, 1, 1],
    [1024, 1, 1],
];
/// Whether some common 1-D block is smaller than `__launch_bounds__(n)`:
/// else the bound is the only size to try.
pub(super) fn below_bound(n: u64) -> bool {
    BLOCKS_1D.iter().any(|s| s[0] < n)
}

/// Common shapes of a block that uses `threadIdx.y` or `threadIdx.z`.
const BLOCKS_2D: [[u64; 3]; 3] = [[16, 16, 1], [32, 8, 1], [32, 32, 1]];

/// What the launch gives of its host function's callers' values:
/// [`crate::ir::Launch::param_sets`] and `param_sampled`.
pub(super) type Given<'a> = (&'a [Vec<i64>], &'a [u32]);

/// The values tried for parameter `i` of `k` when a launch does not give
/// it, ascending, and where they come from: every value of its type (a
/// `bool`), else the spread with the values the kernel's other launches
/// give it (a launch that gives none may pass anything: another launch's
/// constant is one more representative value, not the only one).
pub(super) fn tried(k: &Kernel, given: Given, i: usize) -> (Vec<i64>, ValueSource) {
    // The values the launching host function's callers pass (a sample of
    // them past the budget).
    if let Some(v) = given.0.get(i).filter(|v| !v.is_empty()) {
        let source = match given.1.get(i).copied().unwrap_or(0) {
            0 => ValueSource::Callers,
            passed => ValueSource::CallersSample { passed },
        };
        return (v.clone(), source);
    }
    if let Some(p) = k.params.get(i) {
        if let Some(v) = p.values.clone().filter(|v| !v.is_empty()) {
            let source = if p.object.is_some() {
                ValueSource::Nullness
            } else if p.compared {
                ValueSource::Compared
            } else {
                ValueSource::Type
            };
            return (v, source);
        }
    }
    let mut values: Vec<i64> = k
        .launches
        .iter()
        .filter_map(|l| l.params.get(i).copied().flatten())
        .chain(SPREAD)
        .collect();
    values.sort_unstable();
    values.dedup();
    let source = match k.params.get(i).and_then(|p| p.loaded.as_ref()) {
        Some(l) => ValueSource::Loaded { space: l.space },
        None => ValueSource::Spread,
    };
    (values, source)
}

/// The space parameter `i` of `k` is loaded from, when it is a
/// block-uniform loaded value ([`crate::ir::Param::loaded`]).
pub(super) fn loaded_space(k: &Kernel, i: u32) -> Option<crate::ir::Space> {
    k.params.get(i as usize)?.loaded.as_ref().map(|l| l.space)
}

/// The value parameter `i` of `k` takes in the first run: the spread's
/// [`SPREAD_FIRST`], else the largest value tried.
pub(super) fn first(k: &Kernel, given: Given, i: usize) -> i64 {
    match tried(k, given, i) {
        (_, s) if s.is_spread() => SPREAD_FIRST,
        (v, _) => v.last().copied().unwrap_or(0),
    }
}

/// An input the runs vary.
enum Which {
    /// Parameter `index`, over `values`.
    Param {
        index: usize,
        values: Vec<i64>,
        source: ValueSource,
    },
    /// The block, over common shapes (those up to `bound` threads, and
    /// `bound` itself, when the kernel's `__launch_bounds__` gives it).
    Block {
        shapes: Vec<[u64; 3]>,
        bound: Option<u64>,
    },
}

/// An input and the index of its value in the first run.
struct Input {
    which: Which,
    first: usize,
}

impl Input {
    fn len(&self) -> usize {
        match &self.which {
            Which::Param { values, .. } => values.len(),
            Which::Block { shapes, .. } => shapes.len(),
        }
    }

    /// The finding that the cost is the same for every value tried.
    fn for_every(&self, k: &Kernel) -> ForEvery {
        match &self.which {
            Which::Param {
                index,
                values,
                source,
            } => ForEvery::Param {
                name: param_name(k, *index),
                kernel: k.name.clone(),
                tried: values.clone(),
                source: *source,
            },
            Which::Block { shapes, bound } => ForEvery::Block {
                kernel: k.name.clone(),
                tried: shapes.clone(),
                bound: *bound,
            },
        }
    }

    /// The assumption that the input takes one of the values `holds`
    /// (indices, ascending), said over the values under which the access
    /// runs (`idle`: those under which it does not).
    fn condition(&self, k: &Kernel, holds: &[usize], idle: &[usize]) -> Assumption {
        match &self.which {
            Which::Param {
                index,
                values,
                source,
            } => {
                let vals =
                    |is: Vec<usize>| -> Vec<i64> { is.into_iter().map(|i| values[i]).collect() };
                let running: Vec<usize> = holds
                    .iter()
                    .copied()
                    .filter(|h| !idle.contains(h))
                    .collect();
                // Said over every value when none is idle, or none that
                // runs the access meets it.
                let (domain, met, idle) = if idle.is_empty() || running.is_empty() {
                    (values.clone(), vals(holds.to_vec()), Vec::new())
                } else {
                    let runs = (0..values.len()).filter(|i| !idle.contains(i)).collect();
                    (vals(runs), vals(running), vals(idle.to_vec()))
                };
                Assumption::ParamCondition {
                    name: param_name(k, *index),
                    kernel: k.name.clone(),
                    when: condition(&domain, &met),
                    tried: values.clone(),
                    source: *source,
                    idle,
                }
            }
            // A block within launch bounds is reported at the bound.
            Which::Block {
                bound: Some(threads),
                ..
            } => Assumption::LaunchBoundsBlock { threads: *threads },
            Which::Block { shapes, .. } => Assumption::BlockCondition {
                kernel: k.name.clone(),
                when: holds.iter().map(|h| shapes[*h]).collect(),
                tried: shapes.clone(),
            },
        }
    }

    /// The assumption that the input has its first value (an input the
    /// budget left out of the runs).
    fn as_first(&self, k: &Kernel, setup: &Setup) -> Assumption {
        match &self.which {
            Which::Param { index, values, .. } => Assumption::ParamValue {
                name: param_name(k, *index),
                value: values[self.first],
                kernel: k.name.clone(),
                loaded: loaded_space(k, *index as u32),
            },
            Which::Block {
                bound: Some(threads),
                ..
            } => Assumption::LaunchBoundsBlock { threads: *threads },
            Which::Block { shapes, .. } => Assumption::DefaultBlock {
                block: shapes.get(self.first).copied().unwrap_or([
                    setup.block[0] as u64,
                    setup.block[1] as u64,
                    setup.block[2] as u64,
                ]),
                kernel: k.name.clone(),
            },
        }
    }
}

fn param_name(k: &Kernel, i: usize) -> String {
    k.params
        .get(i)
        .map(|p| p.name.clone())
        .unwrap_or_else(|| "?".into())
}

/// The inputs to vary: the block when no launch gives it, then the
/// parameters the first run found the cost depends on (`matters`), value
/// template parameters before the function's own, and values the block
/// loads ([`crate::ir::Param::loaded`]) after them.
fn inputs(k: &Kernel, setup: &Setup, matters: &[u32]) -> Vec<Input> {
    let mut out = Vec::new();
    if setup.block_varied {
        let two_d = k.uses_thread_dims[1] || k.uses_thread_dims[2];
        let b = setup.block;
        let configured = [b[0] as u64, b[1] as u64, b[2] as u64];
        let bound = setup.block_bound.then_some(configured[0]);
        let mut shapes = match bound {
            Some(n) => BLOCKS_1D.iter().copied().filter(|s| s[0] < n).collect(),
            None if two_d => BLOCKS_2D.to_vec(),
            None => BLOCKS_1D.to_vec(),
        };
        if !shapes.contains(&configured) {
            shapes.push(configured);
            shapes.sort_by_key(|s| (s[0] * s[1] * s[2], s[0]));
        }
        let first = shapes.iter().position(|s| *s == configured).unwrap_or(0);
        out.push(Input {
            which: Which::Block { shapes, bound },
            first,
        });
    }
    // Template parameters first: their values are the ones the answer
    // must not rest on unvaried (see `lints::rests_on_template_value`).
    // Values the block loads last: where the budget cuts the runs, a
    // kernel's own parameters are the ones varied.
    let template = |i: &u32| k.params.get(*i as usize).is_some_and(|p| p.template);
    let loaded = |i: &u32| {
        k.params
            .get(*i as usize)
            .is_some_and(|p| p.loaded.is_some())
    };
    let ordered = matters
        .iter()
        .filter(|i| template(i))
        .chain(matters.iter().filter(|i| !template(i) && !loaded(i)))
        .chain(matters.iter().filter(|i| loaded(i)));
    for &i in ordered {
        let index = i as usize;
        let (values, source) = tried(k, setup.given(), index);
        let value = setup.params.get(index).copied();
        let first = values.iter().position(|v| Some(*v) == value).unwrap_or(0);
        out.push(Input {
            which: Which::Param {
                index,
                values,
                source,
            },
            first,
        });
    }
    out
}

/// The combinations of value indices to run: the first run's, then each
/// input alone (the others at their first value), for as many inputs as
/// [`budget::MAX_VALUE_COMBINATIONS`] allows, then, when the whole product
/// fits, the rest of it. Also says how many inputs (the first ones) the
/// runs vary and whether they are the whole product.
fn combinations(inputs: &[Input]) -> (Vec<Vec<usize>>, usize, bool) {
    let max = budget::MAX_VALUE_COMBINATIONS;
    let first: Vec<usize> = inputs.iter().map(|x| x.first).collect();
    let mut out = vec![first.clone()];
    let mut varied = 0;
    for (i, x) in inputs.iter().enumerate() {
        if out.len() + x.len() - 1 > max {
            break;
        }
        varied += 1;
        for v in (0..x.len()).filter(|v| *v != x.first) {
            let mut c = first.clone();
            c[i] = v;
            out.push(c);
        }
    }
    let product = inputs
        .iter()
        .try_fold(1usize, |n, x| n.checked_mul(x.len()).filter(|n| *n <= max));
    if product.is_none() {
        return (out, varied, false);
    }
    let mut c = vec![0usize; inputs.len()];
    loop {
        // Not the first, and not one input alone: a run not made yet.
        if c.iter().zip(&first).filter(|(a, b)| a != b).count() > 1 {
            out.push(c.clone());
        }
        // The next combination, the last input fastest.
        let mut j = inputs.len();
        loop {
            if j == 0 {
                return (out, inputs.len(), true);
            }
            j -= 1;
            c[j] += 1;
            if c[j] < inputs[j].len() {
                break;
            }
            c[j] = 0;
        }
    }
}

/// The setup of a run with the values `combo` of `inputs`: only the varied
/// parameters are left to [`Setup::quantified`] (another whose value turns
/// out to matter is assumed at its first value).
fn setup_for(first: &Setup, inputs: &[Input], combo: &[usize]) -> Setup {
    let mut s = first.clone();
    s.quantified.iter_mut().for_each(|q| *q = false);
    for (x, &c) in inputs.iter().zip(combo) {
        match &x.which {
            Which::Param { index, values, .. } => {
                if let Some(p) = s.params.get_mut(*index) {
                    *p = values[c];
                }
                if let Some(q) = s.quantified.get_mut(*index) {
                    *q = true;
                }
            }
            Which::Block { shapes, .. } => {
                let b = shapes[c];
                s.block = [b[0] as i64, b[1] as i64, b[2] as i64];
            }
        }
    }
    s
}

/// One access under one launch, over representative values of what the
/// launch does not give (see the module's documentation); also says
/// whether the fix search's limit stopped it.
pub(super) fn analyze_access(
    k: &Kernel,
    ids: (usize, usize, usize),
    setup: &Setup,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    kernel_work: &mut u64,
) -> (AccessReport, bool) {
    let (r, stopped) = analyze_from(k, ids, setup, model, opts, kernel_work);
    let idle = |r: &AccessReport| r.status != Status::Unknown && r.executions == 0.0;
    if stopped || !idle(&r) {
        return (r, stopped);
    }
    // No run executes the access: the spread's first value for every
    // parameter keeps every lane from it, and so does varying each alone
    // (rodinia hotspot's border and iteration counts at 1024 put every
    // block outside the grid). The runs start again from the next smaller
    // spread value for all of them that runs it.
    for s in smaller_firsts(k, setup) {
        let (again, stopped) = analyze_from(k, ids, &s, model, opts, kernel_work);
        if stopped || !idle(&again) {
            return (again, stopped);
        }
    }
    (r, false)
}

/// [`analyze_access`] from the first run under `setup`.
fn analyze_from(
    k: &Kernel,
    ids: (usize, usize, usize),
    setup: &Setup,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    kernel_work: &mut u64,
) -> (AccessReport, bool) {
    let a = &k.accesses[ids.1];
    let skip = unknown_up_front(a, opts, *kernel_work).is_some();
    let mut compiled = Compiled::of(k, a, skip);
    let (mut first, stopped, mut matters) =
        run_access(k, ids, setup, model, opts, kernel_work, &mut compiled);
    let mut instead = None;
    if !stopped && undefined(&first) {
        // The spread's first value makes the address undefined (`1 <<
        // log2N` with `log2N` = 1024): no working program passes it. The
        // first run takes the next smaller spread value instead.
        for s in smaller_firsts(k, setup) {
            let (r, stopped, m) = run_access(k, ids, &s, model, opts, kernel_work, &mut compiled);
            if stopped {
                return (r, true);
            }
            if !undefined(&r) {
                (first, matters, instead) = (r, m, Some(s));
                break;
            }
        }
    }
    let setup = instead.as_ref().unwrap_or(setup);
    if stopped || first.status == Status::Unknown {
        return (first, stopped);
    }
    let inputs = inputs(k, setup, &matters);
    if inputs.is_empty() {
        return (first, false);
    }
    let (combos, varied, product) = combinations(&inputs);
    let (inputs, left_out) = inputs.split_at(varied);
    // The kernel's work budget is charged with the first run only; the
    // others share `MAX_VALUE_WORK`, each run under what is left of it.
    let mut left = budget::MAX_VALUE_WORK;
    let mut cut = (!product).then_some(budget::VALUE_COMBINATIONS);
    let mut rest = Vec::new();
    for combo in &combos[1..] {
        let limit = opts.max_work.min(left);
        if limit == 0 {
            cut = Some(budget::VALUE_WORK);
            break;
        }
        let s = setup_for(setup, inputs, &combo[..varied]);
        let capped = EngineOptions {
            max_work: limit,
            ..opts.clone()
        };
        let mut work = *kernel_work;
        let (r, stopped, _) = run_access(k, ids, &s, model, &capped, &mut work, &mut compiled);
        if stopped {
            return (r, true);
        }
        let spent = work - *kernel_work;
        left = left.saturating_sub(spent);
        if r.status == Status::Unknown && spent > limit && limit < opts.max_work {
            // Cut by what was left: not analysed, rather than unknown.
            cut = Some(budget::VALUE_WORK);
            rest.push(None);
        } else {
            rest.push(Some(r));
        }
    }
    rest.resize(combos.len() - 1, None);
    let combos: Vec<&[usize]> = combos.iter().map(|c| &c[..varied]).collect();
    let mut r = combine(k, inputs, &combos, first, rest, cut);
    for x in left_out {
        let a = x.as_first(k, setup);
        if !r.assumptions.contains(&a) {
            r.assumptions.push(a);
        }
    }
    (r, false)
}

/// Whether a run is unknown because the values tried make the address
/// undefined (a division by zero, a shift past the width): a value no
/// working program passes, which meets any condition vacuously.
fn undefined(r: &AccessReport) -> bool {
    r.status == Status::Unknown
        && matches!(
            r.unknown_reason,
            Some(UnknownReason::DependsOn {
                origin: Origin::Arithmetic,
                ..
            })
        )
}

/// `setup` with each smaller spread value, largest first, for every
/// parameter it runs at the spread's first value (none when there is no
/// such parameter).
fn smaller_firsts<'a>(k: &'a Kernel, setup: &'a Setup) -> impl Iterator<Item = Setup> + 'a {
    SPREAD
        .iter()
        .rev()
        .filter(|v| **v < SPREAD_FIRST)
        .map_while(move |v| with_spread_first(k, setup, *v))
}

/// `setup` with `v` for each parameter it runs at the spread's first
/// value; `None` when there is none.
fn with_spread_first(k: &Kernel, setup: &Setup, v: i64) -> Option<Setup> {
    let mut s = setup.clone();
    let mut changed = false;
    for (i, p) in s.params.iter_mut().enumerate() {
        let spread = tried(k, setup.given(), i).1.is_spread();
        if spread && *p == SPREAD_FIRST && setup.quantified.get(i) == Some(&true) {
            *p = v;
            changed = true;
        }
    }
    changed.then_some(s)
}

/// How wasteful a run is, by the measure the rules judge; `None` when it
/// is unknown.
pub(super) fn waste(r: &AccessReport) -> Option<f64> {
    if r.status == Status::Unknown {
        return None;
    }
    Some(match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        Some(Cost::Global(g)) if g.ideal_sectors > 0.0 => g.sectors / g.ideal_sectors,
        Some(Cost::Constant(c)) => c.requests,
        _ => 0.0,
    })
}

/// The report of the runs of `combos` (the first, then the `rest`, `None`
/// where a run was not made): the most wasteful known one (the first run if it is
/// among them), with what holds for every value tried and the conditions
/// under which it holds. `cut`: the budget that kept the runs from being
/// the whole product.
fn combine(
    k: &Kernel,
    inputs: &[Input],
    combos: &[&[usize]],
    first: AccessReport,
    mut rest: Vec<Option<AccessReport>>,
    cut: Option<Budget>,
) -> AccessReport {
    let m: Vec<Option<f64>> = std::iter::once(waste(&first))
        .chain(rest.iter().map(|r| r.as_ref().and_then(waste)))
        .collect();
    // The runs the answer is chosen from: those at typical sizes whose
    // access executes, else those whose access executes, else all.
    let executes: Vec<bool> = std::iter::once(Some(&first))
        .chain(rest.iter().map(Option::as_ref))
        .map(|r| r.is_some_and(|r| r.executions > 0.0))
        .collect();
    let typical_run = |c: &[usize]| {
        inputs.iter().zip(c).all(|(x, &v)| match &x.which {
            Which::Param { values, source, .. } if source.is_spread() => {
                TYPICAL.contains(&values[v])
            }
            Which::Block { bound: Some(_), .. } => v == x.first,
            _ => true,
        })
    };
    let known = |r: usize| m[r].is_some();
    let runs = 0..m.len();
    let mut eligible: Vec<bool> = runs
        .clone()
        .map(|r| known(r) && executes[r] && typical_run(combos[r]))
        .collect();
    if !eligible.iter().any(|e| *e) {
        eligible = runs.clone().map(|r| known(r) && executes[r]).collect();
    }
    if !eligible.iter().any(|e| *e) {
        eligible = runs.map(known).collect();
    }
    let max = m
        .iter()
        .zip(&eligible)
        .filter(|(_, e)| **e)
        .filter_map(|(x, _)| *x)
        .reduce(f64::max)
        .unwrap_or(0.0);
    // The runs as wasteful as the answer (the condition says which); a
    // known run whose access does not execute (`i < n - t` with `t = n`)
    // does not contradict it.
    // Nor does a run whose values make the address undefined.
    let vacuous: Vec<bool> = std::iter::once(Some(&first))
        .chain(rest.iter().map(Option::as_ref))
        .map(|r| r.is_some_and(undefined))
        .collect();
    let worst: Vec<bool> = m
        .iter()
        .zip(&executes)
        .zip(&vacuous)
        .map(|((x, runs), vacuous)| {
            *vacuous || x.is_some_and(|x| !*runs || (x - max).abs() <= 1e-9 * max.abs().max(1.0))
        })
        .collect();
    // The first run is known (else the caller returned it).
    let pick = (0..m.len())
        .position(|r| worst[r] && eligible[r])
        .unwrap_or(0);
    let p = combos[pick];
    let separable = cut.is_some() || is_product(inputs, combos, &worst);
    let mut for_every = Vec::new();
    let mut conditions = Vec::new();
    let close =
        |x: Option<f64>, to: f64| x.is_some_and(|x| (x - to).abs() <= 1e-9 * to.abs().max(1.0));
    let start = combos[0];
    for (i, x) in inputs.iter().enumerate() {
        if !separable {
            conditions.push(x.condition(k, &[p[i]], &[]));
            continue;
        }
        if cut.is_some() && p != start && p[i] == start[i] {
            // Varied alone, from the first run's values: the reported run
            // differs from it in another input. Input `i` is said only if
            // its own sweep shows that it matters.
            let same = on_line(combos, start, i, |r| close(m[r], m[0].unwrap_or(0.0)));
            if same.len() == x.len() {
                for_every.push(x.for_every(k));
            } else {
                conditions.push(x.condition(k, &[p[i]], &[]));
            }
            continue;
        }
        let holds = on_line(combos, p, i, |r| worst[r]);
        if holds.len() == x.len() {
            for_every.push(x.for_every(k));
        } else {
            let idle = on_line(combos, p, i, |r| m[r].is_some() && !executes[r]);
            conditions.push(x.condition(k, &holds, &idle));
        }
    }
    let mut r = match pick.checked_sub(1).and_then(|i| rest.get_mut(i)?.take()) {
        Some(r) => r,
        None => first,
    };
    if let Some(budget) = cut {
        conditions.push(Assumption::SomeCombinations { budget });
    }
    if !conditions.is_empty() {
        r.status = Status::Assumed;
    }
    for a in conditions {
        if !r.assumptions.contains(&a) {
            r.assumptions.push(a);
        }
    }
    r.for_every = for_every;
    r
}

/// The values of input `i` (ascending, each once) of the runs that differ
/// from `center` in input `i` alone (or not at all) and that `keep`
/// accepts (by run index).
fn on_line(
    combos: &[&[usize]],
    center: &[usize],
    i: usize,
    keep: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut out: Vec<usize> = combos
        .iter()
        .enumerate()
        .filter(|(r, c)| {
            keep(*r)
                && c.iter()
                    .zip(center)
                    .enumerate()
                    .all(|(j, (a, b))| j == i || a == b)
        })
        .map(|(_, c)| c[i])
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether the most wasteful runs (`worst`, of the whole product
/// `combos`) are all the combinations of their values of each input, so
/// that a condition on each input says exactly when.
fn is_product(inputs: &[Input], combos: &[&[usize]], worst: &[bool]) -> bool {
    let mut seen: Vec<Vec<bool>> = inputs.iter().map(|x| vec![false; x.len()]).collect();
    let mut count = 0usize;
    for (c, _) in combos.iter().zip(worst).filter(|(_, w)| **w) {
        count += 1;
        for (s, v) in seen.iter_mut().zip(c.iter()) {
            s[*v] = true;
        }
    }
    let product = seen
        .iter()
        .map(|s| s.iter().filter(|x| **x).count())
        .try_fold(1usize, |n, x| n.checked_mul(x));
    product == Some(count)
}

/// The values of `tried` (ascending) that are in `met`, as simply as they
/// can be said: a multiple of the largest power of two that gives exactly
/// them, odd, at least or at most a value, else the list. A single value is
/// said as itself.
fn condition(tried: &[i64], met: &[i64]) -> Condition {
    let exactly = |f: &dyn Fn(i64) -> bool| tried.iter().all(|t| f(*t) == met.contains(t));
    if met.len() >= 2 {
        let mut best = None;
        let mut k = 2i64;
        while k <= (1 << 40) {
            if exactly(&|t| t % k == 0) {
                best = Some(k);
            }
            k *= 2;
        }
        if let Some(k) = best {
            return Condition::MultipleOf(k);
        }
        if exactly(&|t| t % 2 != 0) {
            return Condition::Odd;
        }
        let (lo, hi) = (met[0], met[met.len() - 1]);
        if exactly(&|t| t >= lo) {
            return Condition::AtLeast(lo);
        }
        if exactly(&|t| t <= hi) {
            return Condition::AtMost(hi);
        }
    }
    Condition::OneOf(met.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_said_as_simply_as_the_tried_values_allow() {
        let s = SPREAD;
        let c = |met: &[i64]| condition(&s, met);
        assert_eq!(c(&[2, 32, 100, 1024]), Condition::MultipleOf(2));
        assert_eq!(c(&[32, 100, 1024]), Condition::MultipleOf(4));
        assert_eq!(c(&[32, 1024]), Condition::MultipleOf(32));
        assert_eq!(c(&[1, 7, 4099]), Condition::Odd);
        assert_eq!(c(&[32, 100, 1024, 4099]), Condition::AtLeast(32));
        assert_eq!(c(&[1, 2, 7]), Condition::AtMost(7));
        assert_eq!(c(&[1, 100]), Condition::OneOf(vec![1, 100]));
        assert_eq!(c(&[1024]), Condition::OneOf(vec![1024]));
        // Every form means exactly the values met, among those tried.
        for mask in 1u32..(1 << s.len()) - 1 {
            let met: Vec<i64> = (0..s.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| s[i])
                .collect();
            let cond = c(&met);
            for t in s {
                assert_eq!(cond.holds(t), met.contains(&t), "{met:?} {cond:?} {t}");
            }
        }
    }
}
