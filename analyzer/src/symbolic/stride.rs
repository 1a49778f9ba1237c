//! Iterations of the access's innermost loop proved to cost what an earlier
//! run of them did, and added again rather than run.
//!
//! In `for (i = lane; i < C; i += 32) x[row * C + i]` every iteration moves
//! each lane's address by the same amount, `Δ` (the address's coefficient of
//! each loop variable times its step), and while no lane leaves the loop
//! the same lanes run it. After `q` iterations (the smallest with `q·Δ` a
//! multiple of the hardware's period, [`MemoryModel::shift_period`]) the
//! addresses are the first ones moved by a multiple of the period, so each
//! run of `q` iterations costs what the first did. Two runs of `q` run
//! (from the loop's second iteration); the next whole runs of `q` while
//! every lane stays (worked out in closed form from the loop's condition)
//! are added as the second one's totals, and the loop goes on from there
//! (its tail, where lanes leave, runs).
//!
//! What must hold, once per access ([`Plan::of`]): the loop is the access's
//! last level and not already costed once ([`super::loops::invariant_loops`]);
//! it is counted (`v op bound`, no `break`, no `do … while`) and every
//! variable steps by an amount free of the loop's variables; the address
//! is linear in them with coefficients free of them; the guards read none
//! of them; no operand the evaluator may skip (`0 * _`, `&&`, `||`, a
//! select) hangs on them where the skipped side may read an assumed value
//! (so every iteration reads the same assumed values); not local memory
//! (its layout depends on the lane). Per loop entry: every lane's
//! variables and steps known, `Δ` the same for every lane still in the
//! loop, and addresses far from overflow. Per recorded run of `q`: one
//! active mask, no address failing, and every assumed value the address
//! reads already stated or proved irrelevant for this warp, so the
//! iterations not run would state nothing.
//!
//! The costs in a report do not change, nor (but for one case) the
//! budgets: the executions of the iterations not run are counted as if
//! they ran, and their work as that of the recorded run, recorded twice
//! with the same work (the first may evaluate what later ones find
//! remembered). The case: where a factor that depends on the loop's
//! variables is zero on every lane at an iteration not run, the evaluator
//! skips the other factor there, so that iteration's real work is a few
//! nodes less than the one counted; a work budget (never a cost) may then
//! run out a few nodes sooner. A property test compares reports with and
//! without, [`EngineOptions::stride`].
//!
//! [`MemoryModel::shift_period`]: crate::hardware::MemoryModel::shift_period
//! [`EngineOptions::stride`]: super::EngineOptions::stride

use super::assume::Said;
use super::collapse::{may_be_assumed, reads_only, MAX_MAGNITUDE};
use super::eval::{Reads, Vals};
use super::loops::{counted, step_of, Counted};
use super::run::{Run, Totals};
use crate::hardware::{Lanes, WARP};
use crate::ir::{Access, Atom, BinOp, Expr, ExprKind, Kernel, Space};
use crate::symbolic::linear::coefficient;

/// Why the innermost loop's iterations shift the access's addresses
/// uniformly: worked out once per access.
pub(super) struct Plan {
    counted: Counted,
    /// Each loop variable's step per iteration (free of the loop's variables).
    steps: Vec<Expr>,
    /// The address's coefficient of each loop variable (free of them).
    coeffs: Vec<Expr>,
}

impl Plan {
    /// The plan for access `a`'s last level, when it has one.
    pub(super) fn of(k: &Kernel, a: &Access, levels: &[usize], invariant: &[bool]) -> Option<Plan> {
        let level = levels.len().checked_sub(1)?;
        let li = levels[level];
        if invariant[level] || !a.loops.contains(&li) || k.objects[a.obj].space == Space::Local {
            return None;
        }
        let lp = &k.loops[li];
        let own = |e: &Expr| {
            !reads_only(
                e,
                |x| !matches!(x, Atom::LoopVar(v) if lp.vars.contains(&v)),
            )
        };
        let counted = counted(lp)?;
        if own(&counted.bound) || a.guards.iter().any(|g| own(&g.cond)) {
            return None;
        }
        let mut steps = Vec::with_capacity(lp.vars.len());
        let mut coeffs = Vec::with_capacity(lp.vars.len());
        for (v, next) in lp.vars.iter().zip(&lp.next) {
            steps.push(step_of(*v, next).filter(|d| !own(d))?);
            coeffs.push(coefficient(&a.offset, Atom::LoopVar(*v)).filter(|c| !own(c))?);
        }
        same_reads(&a.offset, &own).then_some(Plan {
            counted,
            steps,
            coeffs,
        })
    }
}

/// True when no operand the warp evaluator may skip depends, for being
/// skipped, on the loop's variables (`own`) while it may read an assumed
/// value: then every iteration reads the same assumed values.
fn same_reads(e: &Expr, own: &impl Fn(&Expr) -> bool) -> bool {
    let reads_assumed = |x: &Expr| !reads_only(x, |a| !may_be_assumed(a));
    match e.kind() {
        ExprKind::Const(_) | ExprKind::Atom(_) => true,
        ExprKind::Un(_, x) => same_reads(x, own),
        ExprKind::Bin(op, x, y) => {
            let skips = matches!(op, BinOp::Mul | BinOp::LAnd | BinOp::LOr);
            !(skips && own(x) && reads_assumed(y)) && same_reads(x, own) && same_reads(y, own)
        }
        ExprKind::Select(c, x, y) => {
            !(own(c) && (reads_assumed(x) || reads_assumed(y)))
                && same_reads(c, own)
                && same_reads(x, own)
                && same_reads(y, own)
        }
    }
}

/// What the executions of a recorded run of iterations did, as far as the
/// runs not made must match it ([`Run::execute`] fills it).
#[derive(Default)]
pub(super) struct Track {
    reads: Reads,
    active: Option<u32>,
    /// Executions with different active masks.
    mixed: bool,
    /// An address failed on an active lane.
    failed: bool,
    /// Range of the addresses costed.
    range: Option<(i64, i64)>,
    /// Lowest address that counted for [`super::AccessReport::min_offset`].
    min: Option<i64>,
}

impl Track {
    /// One execution: the active lanes, their addresses (`None` where the
    /// address failed), the assumed values it read.
    pub(super) fn executed(&mut self, active: u32, failed: bool, reads: &Reads, addrs: &Lanes) {
        self.reads.merge(reads);
        match self.active {
            None => self.active = Some(active),
            Some(m) if m != active => self.mixed = true,
            Some(_) => {}
        }
        self.failed |= failed;
        for a in addrs.iter().flatten() {
            self.range = Some(match self.range {
                None => (*a, *a),
                Some((lo, hi)) => (lo.min(*a), hi.max(*a)),
            });
        }
    }

    /// An execution's lowest address counted for `min_offset`.
    pub(super) fn lowest(&mut self, low: i64) {
        self.min = Some(self.min.map_or(low, |m| m.min(low)));
    }
}

/// A run of `q` iterations being recorded, from iteration `k0`.
pub(super) struct Chunk {
    k0: u64,
    q: u64,
    /// Iterations from `k0` every lane of `inside` runs.
    same: u64,
    inside: u32,
    /// Each lane's address moves by this much per iteration.
    delta: i64,
    /// Each loop variable's step, per lane (`None`: unknown on every lane,
    /// left as it is).
    steps: Vec<Option<Vals>>,
    before: Totals,
    work: u64,
    evaluated: u64,
    /// The work of the first run recorded (the second must match it).
    first: Option<u64>,
}

/// The innermost loop's skipping, through one entry of the loop.
pub(super) enum Stride {
    /// Nothing recorded; `u32` is the mask last tried (none yet: `None`).
    Idle(Option<u32>),
    Recording(Chunk),
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Run<'_> {
    /// At the start of iteration `k` of the access's innermost loop (its
    /// variables hold that iteration's values; `inside` are the lanes still
    /// in it; `limit` is the loop budget): starts recording a run of
    /// iterations, or, at the end of one, adds the runs not made and moves
    /// the variables and `k` past them.
    pub(super) fn stride(
        &mut self,
        plan: &Plan,
        state: &mut Stride,
        (level, k, inside, limit): (usize, &mut u64, u32, u64),
        vars: &[u32],
    ) {
        match state {
            Stride::Idle(tried) => {
                // The first iteration also evaluates what the loop's
                // iterations share (remembered after it): not one to copy.
                if *k >= 1 && *tried != Some(inside) {
                    *tried = Some(inside);
                    if let Some(c) = self.chunk(plan, *k, inside, limit, vars) {
                        self.track = Some(Track::default());
                        *state = Stride::Recording(c);
                    }
                }
            }
            Stride::Recording(c) if *k == c.k0 + c.q && c.first.is_none() => {
                // The first run may evaluate what later ones find
                // remembered (a value a short circuit skipped at the loop's
                // first iteration, a verdict on a new mask): a second run is
                // recorded, and its work must be the first's.
                c.first = Some(self.work - c.work);
                c.k0 = *k;
                c.same -= c.q;
                c.before = self.totals;
                c.work = self.work;
                c.evaluated = self.evaluated;
                self.track = Some(Track::default());
            }
            Stride::Recording(c) if *k == c.k0 + c.q => {
                let track = self.track.take().unwrap_or_default();
                if c.first == Some(self.work - c.work) {
                    self.skip(c, &track, (level, k, inside, limit), vars);
                }
                *state = Stride::Idle(Some(inside));
            }
            Stride::Recording(_) => {}
        }
    }

    /// A run of iterations worth recording from iteration `k`: how far
    /// every lane of `inside` stays, the shift per iteration, its period.
    fn chunk(&self, plan: &Plan, k: u64, inside: u32, limit: u64, vars: &[u32]) -> Option<Chunk> {
        // A variable unknown on every lane stays so (`v + d` fails where
        // `v` does): it is left as it is, and an address that reads it
        // fails (then nothing is skipped).
        let mut steps: Vec<Option<Vals>> = Vec::with_capacity(vars.len());
        let mut coeffs: Vec<Vals> = Vec::with_capacity(vars.len());
        for (i, v) in vars.iter().enumerate() {
            let err = self.loop_vals[*v as usize].err;
            if err == u32::MAX && i != plan.counted.var {
                steps.push(None);
                continue;
            }
            let s = self.probe(&plan.steps[i]);
            let c = self.probe(&plan.coeffs[i]);
            if err != 0 || s.err != 0 || c.err & inside != 0 {
                return None;
            }
            steps.push(Some(s));
            coeffs.push(c);
        }
        let bound = self.probe(&plan.counted.bound);
        let i = &self.loop_vals[vars[plan.counted.var] as usize];
        let s = steps[plan.counted.var].as_ref()?;
        let moving: Vec<&Vals> = steps.iter().flatten().collect();
        let mut same = u64::MAX;
        let mut delta = None;
        for l in 0..WARP {
            if inside & (1 << l) == 0 {
                continue;
            }
            if bound.err & (1 << l) != 0 {
                return None;
            }
            let r = plan.counted.remaining(i.v[l], bound.v[l], s.v[l])?;
            same = same.min(u64::try_from(r).ok()?);
            let mut d = 0i64;
            for (c, s) in coeffs.iter().zip(&moving) {
                d = d.checked_add(c.v[l].checked_mul(s.v[l])?)?;
            }
            match delta {
                None => delta = Some(d),
                Some(x) if x != d => return None,
                Some(_) => {}
            }
        }
        let delta = delta?;
        let period = self.period as u64;
        let q = period / gcd(delta.unsigned_abs() % period, period);
        (same >= 3 * q && k + 3 * q <= limit).then_some(Chunk {
            k0: k,
            q,
            same,
            inside,
            delta,
            steps,
            before: self.totals,
            work: self.work,
            evaluated: self.evaluated,
            first: None,
        })
    }

    /// At the end of recorded run `c` (iteration `k` = `c.k0 + c.q`):
    /// adds the whole runs of `q` that every lane stays for and the budget
    /// allows as `c`'s totals again, when they provably cost the same, and
    /// moves the variables and `k` past them.
    fn skip(
        &mut self,
        c: &Chunk,
        track: &Track,
        (level, k, inside, limit): (usize, &mut u64, u32, u64),
        vars: &[u32],
    ) {
        // The budgets count the iterations not run as if they ran: no more
        // runs are skipped than keep within them, so a budget runs out in
        // the iterations that do run, where it did before.
        let work = self.work - c.work;
        let evaluated = self.evaluated - c.evaluated;
        let fits = |spent: u64, max: u64, per: u64| max.saturating_sub(spent).checked_div(per);
        let n = [
            Some((c.same - c.q).min(limit - *k) / c.q),
            fits(self.work, self.opts.max_work, work),
            fits(self.evaluated, self.opts.max_executions, evaluated),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0);
        // No execution in the run (the guards kept every lane out): no
        // value read to compare, nothing to add but the loop's progress.
        let stated = |run: &Self, r| {
            run.noted.contains(&Said::Read(r))
                || run
                    .relevance
                    .iter()
                    .any(|(x, m, _)| *x == r && Some(*m) == track.active)
        };
        if n == 0
            || inside != c.inside
            || track.mixed
            || track.failed
            || !track.reads.iter().all(|r| stated(self, r))
        {
            return;
        }
        let Some(iterations) = n.checked_mul(c.q) else {
            return;
        };
        let Some(shift) = i64::try_from(iterations)
            .ok()
            .and_then(|x| x.checked_mul(c.delta))
        else {
            return;
        };
        let small = |x: i64| x.unsigned_abs() < MAX_MAGNITUDE as u64;
        let moved = |x: i64| x.checked_add(shift).filter(|y| small(*y));
        let range = match track.range {
            Some((lo, hi)) => match (moved(lo), moved(hi)) {
                (Some(a), Some(b)) if small(lo) && small(hi) => Some((lo.min(a), hi.max(b))),
                _ => return,
            },
            None => None,
        };
        self.work += work * n;
        self.evaluated += evaluated * n;
        let t = self.totals.since(c.before);
        self.totals.add(Totals {
            executions: t.executions.saturating_mul(n),
            off: t.off.saturating_mul(n),
            undecided: t.undecided.saturating_mul(n),
            cost: t.cost.saturating_mul(n),
            ideal: t.ideal.saturating_mul(n),
            transactions: t.transactions.saturating_mul(n),
            bytes: t.bytes.saturating_mul(n),
        });
        if let Some((lo, hi)) = range {
            self.trace.range = Some(match self.trace.range {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        if let Some(m) = track.min {
            let low = m.min(m + shift.min(0));
            self.min_offset = Some(self.min_offset.map_or(low, |x| x.min(low)));
            self.trace.min = Some(self.trace.min.map_or(low, |x| x.min(low)));
        }
        for (v, s) in vars.iter().zip(&c.steps) {
            let Some(s) = s else {
                continue;
            };
            let x = &mut self.loop_vals[*v as usize];
            for l in 0..WARP {
                x.v[l] = x.v[l].wrapping_add((iterations as i64).wrapping_mul(s.v[l]));
            }
        }
        self.memo.touch(level + 1);
        *k += iterations;
    }
}

#[cfg(test)]
mod tests {
    use super::super::run::{Compiled, Run};
    use super::super::setup::Setup;
    use super::super::EngineOptions;
    use crate::hardware::Arch;

    /// Kernel `k`'s access to `g` in `body` (inside `__global__ void
    /// k(float *g, int n, int m)`, launched with 64 threads and `n`, `m`
    /// unknown): whether it has a plan, the executions the budget counts
    /// and those the model costed, with skipping and without.
    fn run(body: &str) -> (bool, [(u64, u64); 2]) {
        let src = format!(
            "__global__ void k(float *g, int n, int m)\n{{\n{body}\n}}\n\
             int main(int argc, char **argv) {{ k<<<1, 64>>>(0, argc, argc); return 0; }}\n"
        );
        let p = crate::frontend::parse_program(src.as_bytes(), &Default::default());
        let k = &p.kernels[0];
        let ai = k
            .accesses
            .iter()
            .position(|a| k.objects[a.obj].name == "g")
            .unwrap();
        let a = &k.accesses[ai];
        let model = Arch::parse("sm_90").unwrap().model().unwrap();
        let mut counts = [(0, 0); 2];
        let mut planned = false;
        for (i, stride) in [true, false].into_iter().enumerate() {
            let opts = EngineOptions {
                stride,
                ..EngineOptions::default()
            };
            let setup = Setup::new(k, 0, &opts);
            let mut compiled = Compiled::of(k, a, false);
            let mut run = Run::new((k, a), &setup, model.as_ref(), &opts, None, &mut compiled);
            planned = run.plan.is_some();
            run.all_warps();
            counts[i] = (run.evaluated, run.costed);
        }
        (planned, counts)
    }

    #[test]
    fn a_strided_loop_is_costed_for_its_first_runs_and_its_tail() {
        let (planned, [fast, slow]) =
            run("for (int i = threadIdx.x; i < 100 * 64 + 7; i += 64) g[i] = 0.0f;");
        assert!(planned);
        // Lanes 0-6 of warp 0 run a 101st iteration; the budget counts
        // every iteration.
        assert_eq!(slow, (101 + 100, 101 + 100));
        assert_eq!(fast.0, slow.0);
        // Three iterations (the first, two recorded runs of one) before the
        // rest is skipped, then the tail.
        assert!(fast.1 <= 2 * 4, "{fast:?}");
    }

    #[test]
    fn a_loop_whose_iterations_differ_is_not_planned() {
        // The guard reads the loop variable.
        assert!(!run("for (int i = 0; i < 100; i++) if (i < n) g[i * 32 + threadIdx.x] = 0.0f;").0);
        // The address is not linear in it.
        assert!(!run("for (int i = 0; i < 100; i++) g[(i * i) % 64 + threadIdx.x] = 0.0f;").0);
        // `i * n` skips reading `n` when `i` is 0.
        assert!(!run("for (int i = 0; i < 100; i++) g[i * n + threadIdx.x] = 0.0f;").0);
        // A `break`.
        assert!(!run("for (int i = 0; i < 100; i++) { if (g[0] > 1.0f) break; g[i + threadIdx.x] = 0.0f; }").0);
        // `n * i` reads `n` before `i`: planned.
        assert!(run("for (int i = 0; i < 100; i++) g[n * i + threadIdx.x] = 0.0f;").0);
        // An accumulator beside the counter: planned.
        assert!(run("float s = 0.0f; for (int i = threadIdx.x; i < n; i += 64) { s += 1.0f; g[i] = s; }").0);
    }
}
