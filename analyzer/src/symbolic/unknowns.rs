//! Unknown values in an address: one that is the same for the whole warp
//! and enters the address with one coefficient only shifts the warp (its
//! cost is known, with the assumption that the shift keeps the alignment);
//! any other makes the access `unknown`, saying which value it waits for.
//! Decided for the whole warp through the address's linear form when it
//! has one, else lane by lane.

use super::assume::{fail_origin, Said};
use super::eval::{eval_lin, Reads, Vals};
use super::linear;
use super::run::Run;
use crate::finding::{Assumption, UnknownReason};
use crate::hardware::{Lanes, WARP};
use crate::ir::{Atom, Expr};

/// An address split into its part free of unknowns and one coefficient
/// expression per unknown it contains.
pub(super) struct LinearForm {
    base: Expr,
    terms: Vec<(u32, Expr)>,
}

impl LinearForm {
    /// The linear form of `offset` in its unknowns; `None` when some
    /// unknown has no coefficient (it does not enter linearly).
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

impl Run<'_> {
    /// Handles unknowns in the address: a value that is the same for the
    /// whole warp and enters the address linearly with the same
    /// coefficient in every lane only shifts the warp. Returns false (and
    /// records why) when the address cannot be known.
    pub(super) fn resolve_unknowns(&mut self, active: u32, addrs: &mut Lanes) -> bool {
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
                    self.unknown = Some(UnknownReason::DependsOn {
                        origin: fail_origin(self.k, f),
                        differs: false,
                    });
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
        let why = &k.unknowns[u as usize].origin;
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
            self.unknown = Some(UnknownReason::DependsOn {
                origin: why.clone(),
                differs: true,
            });
            return false;
        }
        if coeffs.first().is_some_and(|c| c % self.period != 0) {
            self.say(Said::KeepsAligned(u), |run| Assumption::KeepsAligned {
                origin: why.clone(),
                bytes: run.period as u32,
            });
        }
        true
    }
}
