//! Assumptions: each keyed ([`Said`]) and worded once per access, the
//! first time it is met. An assumed value (a parameter, the grid) is
//! stated only when the cost depends on it: [`Run::relevant`] asks whether
//! it only shifts the whole warp by a multiple of the model's period.

use super::eval::{Assumed, Fail, Reads};
use super::linear;
use super::run::Run;
use crate::budget;
use crate::finding::{Assumption, Origin};
use crate::hardware::WARP;
use crate::ir::{Atom, Builtin, Dim, Expr, Kernel};

/// The identity of an assumption the enumeration records (its text is
/// built once, the first time).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Said {
    Read(Assumed),
    ActiveDespite(Fail),
    TripDependsOn(u32, Fail),
    FirstIterations(u32),
    FirstExecutions,
    NoExit(u32),
    KeepsAligned(u32),
}

/// What a failed evaluation depends on.
pub(super) fn fail_origin(k: &Kernel, f: Fail) -> Origin {
    match f {
        Fail::Unknown(u) => k
            .unknowns
            .get(u as usize)
            .map(|x| x.origin.clone())
            .unwrap_or(Origin::Unrecorded),
        Fail::LoopVar(v) => Origin::LoopVariable {
            name: k
                .loop_vars
                .get(v as usize)
                .map(|x| x.name.clone())
                .unwrap_or_else(|| "?".into()),
        },
        Fail::TooComplex => Origin::TooComplex {
            nodes: budget::EXPR_NODES,
            depth: budget::EXPR_DEPTH,
        },
        Fail::Arith => Origin::Arithmetic,
    }
}

impl Run<'_> {
    /// Records the assumed values `reads` names (each once).
    pub(super) fn note_reads(&mut self, reads: &Reads) {
        if reads.within(&self.stated) {
            return;
        }
        for r in reads.iter() {
            self.read_matters(r);
        }
    }

    /// Records, once, that the cost depends on the value `r` read: the
    /// assumption that it has its value, or, for a parameter analysed over
    /// representative values ([`super::setup::Setup::quantified`]), the
    /// parameter in [`Run::matters`].
    pub(super) fn read_matters(&mut self, r: Assumed) {
        if self.stated.contains(r) {
            return;
        }
        self.stated.add(r);
        if let Assumed::Param(i) = r {
            if self.setup.quantified.get(i as usize) == Some(&true) {
                if !self.noted.contains(&Said::Read(r)) {
                    self.noted.push(Said::Read(r));
                    self.matters.push(i);
                }
                return;
            }
        }
        self.say(Said::Read(r), |run| run.assumed(r));
    }

    /// Records an assumption once; `made` runs only the first time.
    pub(super) fn say(&mut self, key: Said, made: impl FnOnce(&Self) -> Assumption) {
        if !self.noted.contains(&key) {
            self.noted.push(key);
            let a = made(self);
            self.assume(a);
        }
    }

    /// Records an assumption, unless the same one is recorded already.
    pub(super) fn assume(&mut self, a: Assumption) {
        if !self.assumptions.contains(&a) {
            self.assumptions.push(a);
        }
    }

    /// The assumption that `r` has its assumed value.
    pub(super) fn assumed(&self, r: Assumed) -> Assumption {
        match r {
            Assumed::Param(i) => {
                let name = self
                    .k
                    .params
                    .get(i as usize)
                    .map(|p| p.name.clone())
                    .unwrap_or_else(|| "?".into());
                Assumption::ParamValue {
                    name,
                    value: self.setup.params.get(i as usize).copied().unwrap_or(0),
                    kernel: self.k.name.clone(),
                    loaded: super::values::loaded_space(self.k, i),
                }
            }
            Assumed::BlockIdx | Assumed::GridDim => {
                let g = self.setup.grid;
                Assumption::Grid {
                    grid: [g[0] as u64, g[1] as u64, g[2] as u64],
                }
            }
        }
    }

    /// The address's coefficient of `atom` (remembered).
    fn coeff(&mut self, atom: Atom) -> Option<Expr> {
        self.coeff_entry(atom).0
    }

    /// [`Self::coeff`], and whether the coefficient reads no loop variable.
    pub(super) fn coeff_entry(&mut self, atom: Atom) -> (Option<Expr>, bool) {
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
    pub(super) fn relevant(&mut self, r: Assumed, active: u32) -> bool {
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
        if warp_wide && self.relevance.len() < budget::MAX_RELEVANCE_MEMO {
            self.relevance.push((r, active, relevant));
        }
        relevant
    }

    /// True when the assumed atom only shifts the whole warp by multiples
    /// of the hardware period (so the cost does not depend on its value).
    pub(super) fn irrelevant(&mut self, atom: Atom, mask: u32) -> bool {
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
}

/// The atoms whose coefficients decide whether an assumed value matters
/// (see [`Run::irrelevant`]), the first `n` of the array; none for
/// `gridDim`, which always does.
pub(super) fn judged_atoms(r: Assumed) -> ([Atom; 3], usize) {
    let block = |d| Atom::Builtin(Builtin::BlockIdx(d));
    match r {
        Assumed::Param(i) => ([Atom::Param(i); 3], 1),
        Assumed::BlockIdx => ([block(Dim::X), block(Dim::Y), block(Dim::Z)], 3),
        Assumed::GridDim => ([Atom::TooComplex; 3], 0),
    }
}
