//! Lanes of one warp exchanging data through memory with nothing between
//! that orders them (compute capability 7.0 and later schedule the lanes
//! of a warp independently): for two accesses to one object, one a store,
//! in the same loop iteration with no barrier, `__syncwarp()` or fence
//! between ([`crate::ir::Access::epoch`]), whether a lane touches bytes
//! another lane of its warp stores, in one execution of both. The pair is
//! run like an access (the later one's loops, every warp of each
//! representative block). `volatile` objects and atomics are left out; an
//! address or condition the engine cannot evaluate makes the answer
//! unknown, never an exchange.

use super::eval::Vals;
use super::run::{Compiled, Run};
use super::{EngineOptions, Status};
use crate::budget;
use crate::finding::{Assumption, UnknownReason};
use crate::hardware::{MemoryModel, WARP};
use crate::ir::{Access, Guard, Kernel, Op, Program, Space};

/// Two accesses of one kernel under one launch.
#[derive(Clone, Debug)]
pub struct RaceReport {
    pub kernel: usize,
    pub launch: usize,
    pub kernel_name: String,
    /// The accesses, in program order ([`crate::ir::Kernel::accesses`]).
    pub first: usize,
    pub second: usize,
    pub block: [u64; 3],
    pub status: Status,
    pub assumptions: Vec<Assumption>,
    pub unknown_reason: Option<UnknownReason>,
    /// The first exchange found.
    pub sample: Option<Exchange>,
}

/// One lane touching bytes another lane of its warp stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub block: [i64; 3],
    pub warp: u32,
    /// The lane making the first access, and the lane making the second.
    pub first_lane: u32,
    pub second_lane: u32,
    /// Byte offsets into the object each touches (the bytes overlap).
    pub first_offset: i64,
    pub second_offset: i64,
}

/// What a pair run looks for.
pub(super) struct Pair {
    /// The accesses ([`Kernel::accesses`]), earlier first.
    first: usize,
    second: usize,
    pub(super) found: Option<Exchange>,
}

impl<'a> Run<'a> {
    /// Lanes of `mask` passing access `a`'s guards, and its addresses.
    fn lanes_of(&mut self, a: &Access, mask: u32) -> Option<(u32, Vals)> {
        let m = self.known_mask(&a.guards, mask)?;
        Some((m, self.eval_known(&a.offset, m)?))
    }

    /// One execution of both accesses by the lanes of `mask` (the pair
    /// run's `execute`).
    pub(super) fn pair_execute(&mut self, mask: u32) {
        let Some((ai, bi)) = self
            .pair
            .as_ref()
            .filter(|p| p.found.is_none())
            .map(|p| (p.first, p.second))
        else {
            return;
        };
        // The kernel outlives the run: its accesses are read in place.
        let k: &'a Kernel = self.k;
        let (a, b) = (&k.accesses[ai], &k.accesses[bi]);
        let Some((ma, va)) = self.lanes_of(a, mask) else {
            return;
        };
        let Some((mb, vb)) = self.lanes_of(b, mask) else {
            return;
        };
        if ma == 0 || mb == 0 {
            return;
        }
        let (wa, wb) = (i64::from(a.width), i64::from(b.width));
        for i in (0..WARP).filter(|i| ma & (1 << i) != 0) {
            let x = va.v[i];
            for j in (0..WARP).filter(|j| mb & (1 << j) != 0 && *j != i) {
                let y = vb.v[j];
                if x < y + wb && y < x + wa {
                    let (bid, warp) = (self.bid, self.warp);
                    if let Some(p) = self.pair.as_mut() {
                        p.found = Some(Exchange {
                            block: bid,
                            warp,
                            first_lane: i as u32,
                            second_lane: j as u32,
                            first_offset: x,
                            second_offset: y,
                        });
                    }
                    return;
                }
            }
        }
    }
}

/// Whether accesses `a` (earlier) and `b` of `k` may exchange data between
/// lanes with nothing ordering them: one object, not `volatile`, shared or
/// global memory, at least one store and no atomic, the same loops and
/// epoch, both known to the front end.
fn candidate(k: &Kernel, a: &Access, b: &Access) -> bool {
    let obj = &k.objects[a.obj];
    a.obj == b.obj
        && matches!(obj.space, Space::Shared | Space::Global)
        && !obj.volatile
        && !obj.volatile_view
        && (a.op == Op::Store || b.op == Op::Store)
        && a.op != Op::Atomic
        && b.op != Op::Atomic
        && a.epoch == b.epoch
        && a.loops == b.loops
        && a.unknown.is_none()
        && b.unknown.is_none()
        && a.hoisted.is_none()
        && b.hoisted.is_none()
        && !same_place(a, b)
}

/// Whether `a` and `b` touch the same bytes under the same conditions
/// (`x[i] = x[i] + 1`): a lane meets another lane's bytes only where two
/// lanes share an address, which the store itself already does; not run.
fn same_place(a: &Access, b: &Access) -> bool {
    let same_guards =
        a.guards.len() == b.guards.len() && a.guards.iter().zip(&b.guards).all(|(x, y)| x.same(y));
    a.width == b.width && a.offset.same(&b.offset) && (same_guards || lane_injective(a))
}

/// Whether no two lanes of a warp ever touch the same bytes through
/// `a`: its address moves with `threadIdx.x` by a constant step at least
/// its width, and reads nothing else that differs between lanes
/// (`x[i]` with `i = blockIdx.x * blockDim.x + threadIdx.x`).
fn lane_injective(a: &Access) -> bool {
    use crate::ir::{Atom, Builtin, Dim};
    let step = super::linear::coefficient(&a.offset, Atom::Builtin(Builtin::ThreadIdx(Dim::X)))
        .and_then(|c| c.as_const());
    let others = a.offset.atoms().into_iter().any(|x| {
        matches!(
            x,
            Atom::Builtin(Builtin::ThreadIdx(Dim::Y | Dim::Z))
                | Atom::LoopVar(_)
                | Atom::Unknown(_)
                | Atom::TooComplex
        )
    });
    step.is_some_and(|c| c.unsigned_abs() >= u64::from(a.width)) && !others
}

/// Whether every integer parameter `a`'s address and guards read is one
/// launch `l` gives: else which bytes the lanes touch rests on a value
/// tried, and SY002 reports nothing resting on one (not run).
fn given(l: &crate::ir::Launch, a: &Access) -> bool {
    let mut all = true;
    let mut check = |e: &crate::ir::Expr| {
        e.visit_atoms(&mut |x| {
            if let crate::ir::Atom::Param(i) = x {
                all &= l.params.get(i as usize).copied().flatten().is_some();
            }
        })
    };
    check(&a.offset);
    a.guards.iter().for_each(|g| check(&g.cond));
    all
}

/// An access standing for the pair in a run: the later access, with the
/// earlier one's guards and address among its guards, so that the loops
/// both read are run (its guards are not applied: `pair_execute` applies
/// each access's own).
fn stand_in(a: &Access, b: &Access) -> Access {
    let mut s = b.clone();
    s.predicated_from = None;
    s.guards.extend(a.guards.iter().cloned());
    s.guards.push(Guard {
        cond: a.offset.clone(),
        expect: true,
        site: None,
        exits: false,
    });
    s
}

/// The pair (`ai`, `bi`) of kernel `ki` under launch `li`.
fn pair_one(
    p: &Program,
    (ki, ai, bi, li): (usize, usize, usize, usize),
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> RaceReport {
    let k = &p.kernels[ki];
    let (a, b) = (&k.accesses[ai], &k.accesses[bi]);
    let setup = super::reach::one_run_setup(k, li, opts);
    let s = stand_in(a, b);
    let mut compiled = Compiled::of(k, &s, false);
    let mut run = Run::new((k, &s), &setup, model, opts, None, &mut compiled);
    run.control_mode(&setup);
    run.pair = Some(Pair {
        first: ai,
        second: bi,
        found: None,
    });
    run.all_warps();
    let found = run.pair.take().and_then(|p| p.found);
    // An exchange found before a budget cut the run short (the first
    // iterations or executions) is one all the same; lanes taken as
    // active where a condition could not be evaluated are not.
    let unknown_reason = match found {
        Some(_) => run.unknown.take().or_else(|| {
            run.assumptions.iter().find_map(|x| match x {
                Assumption::LanesActive { origin } | Assumption::LoopTrips { origin, .. } => {
                    Some(UnknownReason::DependsOn {
                        origin: origin.clone(),
                        differs: true,
                    })
                }
                _ => None,
            })
        }),
        None => super::reach::unsure_reason(&mut run, opts),
    };
    let status = super::reach::control_status(&unknown_reason, &run.assumptions);
    let c = |v: [i64; 3]| [v[0] as u64, v[1] as u64, v[2] as u64];
    RaceReport {
        kernel: ki,
        launch: li,
        kernel_name: k.display_name.clone(),
        first: ai,
        second: bi,
        block: c(setup.block),
        status,
        assumptions: std::mem::take(&mut run.assumptions),
        sample: if status == Status::Unknown {
            None
        } else {
            found
        },
        unknown_reason,
    }
}

/// Every candidate pair of every kernel under each of its launches (up to
/// `budget::MAX_RACE_PAIRS` pairs a kernel).
pub fn analyze_races(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> Vec<RaceReport> {
    let opts = super::reach::control_opts(opts);
    let mut out = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        let n = k.accesses.len();
        let mut pairs = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| candidate(k, &k.accesses[i], &k.accesses[j]));
        let run: Vec<(usize, usize)> = pairs.by_ref().take(budget::MAX_RACE_PAIRS).collect();
        let cut = pairs.next();
        for li in 0..k.launches.len() {
            let l = &k.launches[li];
            if l.origin == crate::ir::LaunchOrigin::Default {
                // No launch gives the block: which lanes share a warp is
                // not known, and SY002 reports nothing resting on it.
                continue;
            }
            for &(ai, bi) in &run {
                if given(l, &k.accesses[ai]) && given(l, &k.accesses[bi]) {
                    out.push(pair_one(p, (ki, ai, bi, li), model, &opts));
                }
            }
            if let Some((ai, bi)) = cut {
                let l = &k.launches[li];
                out.push(RaceReport {
                    kernel: ki,
                    launch: li,
                    kernel_name: k.display_name.clone(),
                    first: ai,
                    second: bi,
                    block: l.block,
                    status: Status::Unknown,
                    assumptions: Vec::new(),
                    unknown_reason: Some(UnknownReason::OutOfBudget(budget::RACE_PAIRS)),
                    sample: None,
                });
            }
        }
    }
    out
}
