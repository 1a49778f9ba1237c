//! A template kernel whose type parameters no instantiation gives a known
//! type is lowered once per representative type (`Kernel::representative`):
//! reports of one access under one launch are put together here, as
//! `values.rs` puts together the runs of one access over the values no
//! launch gives. Where every type costs the same, the answer holds for
//! each ([`ForEvery::Type`]); else the most wasteful type's answer is
//! reported, `assumed`, with the types it holds for
//! ([`Assumption::TypeCondition`]).
//!
//! Invariants: an access is matched across instantiations by its launch,
//! span, space, operation and its rank among the reports with those; an
//! unknown answer is never the reported one while another type's is known;
//! an access only some instantiations have holds only for those types.

use std::collections::HashMap;

use super::values::waste;
use super::{AccessReport, Status};
use crate::finding::{Assumption, ForEvery};
use crate::ir::{Op, Program, Space, Span};

/// An access of one instantiation: launch, span, space, operation, rank.
type Key = (usize, Span, Space, Op, usize);

/// `reports` with those of each representative instantiation group put
/// together into one per access and launch.
pub(super) fn put_together(p: &Program, reports: Vec<AccessReport>) -> Vec<AccessReport> {
    // The groups: the instantiations of one definition, in lowering order.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        if k.representative.is_none() {
            continue;
        }
        let same = groups.iter().position(|g| {
            let f = &p.kernels[g[0]];
            f.name == k.name && f.extent == k.extent && f.display_name == k.display_name
        });
        let gi = same.unwrap_or_else(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[gi].push(ki);
        group_of.insert(ki, gi);
    }
    if groups.is_empty() {
        return reports;
    }
    let mut out = Vec::with_capacity(reports.len());
    // Per group, per instantiation: its reports by key, keys in order met.
    let mut keyed: Vec<Vec<HashMap<Key, AccessReport>>> = groups
        .iter()
        .map(|g| g.iter().map(|_| HashMap::new()).collect())
        .collect();
    let mut order: Vec<Vec<Key>> = vec![Vec::new(); groups.len()];
    let mut ranks: HashMap<(usize, usize, Span, Space, Op), usize> = HashMap::new();
    for r in reports {
        let Some(&gi) = group_of.get(&r.kernel) else {
            out.push(r);
            continue;
        };
        let inst = groups[gi].iter().position(|k| *k == r.kernel).unwrap_or(0);
        let rank = ranks
            .entry((r.kernel, r.launch, r.span, r.space, r.op))
            .or_insert(0);
        let key = (r.launch, r.span, r.space, r.op, *rank);
        *rank += 1;
        if !order[gi].contains(&key) {
            order[gi].push(key);
        }
        keyed[gi][inst].insert(key, r);
    }
    for (gi, g) in groups.iter().enumerate() {
        let k = &p.kernels[g[0]];
        let tried: Vec<String> = g
            .iter()
            .filter_map(|ki| p.kernels[*ki].representative.as_ref())
            .map(|r| r.ty.clone())
            .collect();
        let params = k
            .representative
            .as_ref()
            .map(|r| r.params.clone())
            .unwrap_or_default();
        for key in &order[gi] {
            let runs: Vec<Option<AccessReport>> =
                keyed[gi].iter_mut().map(|m| m.remove(key)).collect();
            if let Some(r) = combine(runs, &params, &k.name, &tried) {
                out.push(r);
            }
        }
    }
    out
}

/// One access's reports from each instantiation (`None` where that
/// instantiation has no such access) as one report.
fn combine(
    mut runs: Vec<Option<AccessReport>>,
    params: &[String],
    kernel: &str,
    tried: &[String],
) -> Option<AccessReport> {
    let m: Vec<Option<f64>> = runs.iter().map(|r| r.as_ref().and_then(waste)).collect();
    let executes: Vec<bool> = runs
        .iter()
        .map(|r| r.as_ref().is_some_and(|r| r.executions > 0.0))
        .collect();
    let mut eligible: Vec<bool> = (0..m.len())
        .map(|i| m[i].is_some() && executes[i])
        .collect();
    if !eligible.iter().any(|e| *e) {
        eligible = m.iter().map(Option::is_some).collect();
    }
    if !eligible.iter().any(|e| *e) {
        // Unknown (or absent) for every type: the first one's answer.
        return runs.into_iter().flatten().next();
    }
    let max = (0..m.len())
        .filter(|i| eligible[*i])
        .filter_map(|i| m[i])
        .fold(f64::MIN, f64::max);
    let close = |x: Option<f64>| x.is_some_and(|x| (x - max).abs() <= 1e-9 * max.abs().max(1.0));
    let worst: Vec<bool> = m.iter().map(|x| close(*x)).collect();
    let pick = (0..m.len()).find(|i| worst[*i] && eligible[*i])?;
    let mut r = runs[pick].take()?;
    if worst.iter().all(|w| *w) {
        r.for_every.push(ForEvery::Type {
            params: params.to_vec(),
            kernel: kernel.to_string(),
            tried: tried.to_vec(),
        });
    } else {
        if r.status == Status::Exact {
            r.status = Status::Assumed;
        }
        r.assumptions.push(Assumption::TypeCondition {
            params: params.to_vec(),
            kernel: kernel.to_string(),
            when: (0..m.len())
                .filter(|i| worst[*i])
                .filter_map(|i| tried.get(i).cloned())
                .collect(),
            tried: tried.to_vec(),
        });
    }
    Some(r)
}
