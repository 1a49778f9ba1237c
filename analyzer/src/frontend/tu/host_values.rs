//! The values a launch argument takes when it is a parameter of the host
//! function that launches: the unit's functions that call a launching
//! function are walked too (and theirs, up to
//! `budget::MAX_HOST_CALL_DEPTH`), their calls recorded
//! (`lower/host_calls.rs`), and each such argument takes the values every
//! call passes, or stays unknown when one passes a value the analysis
//! cannot know. The whole-project index joins the calls of every file the
//! same way ([`values_of`]) and gives the result to each unit
//! (`Options::host_values`).

use std::collections::BTreeSet;

use super::super::lower::Lowerer;
use super::super::Options;
use super::{FuncDef, LaunchSite, Tu};
use crate::budget;
use crate::finding::{Budget, Cut, NoteKind};
use crate::ir::{HostArg, HostCall, Note};

impl<'t> Tu<'t> {
    /// Walks the unit's host functions that call a function of
    /// `host_callees` (other than `walked`, already walked for their
    /// launches), records their calls, and goes on with the callers of
    /// those that pass their own parameters on. A launch they make by
    /// inlining a launching function is one more site.
    pub(super) fn follow_callers(
        &mut self,
        walked: &[FuncDef<'t>],
        sites: &mut Vec<LaunchSite>,
        calls: &mut Vec<HostCall>,
        notes: &mut Vec<Note>,
    ) {
        let mut done: BTreeSet<String> = walked.iter().map(|d| d.name.clone()).collect();
        let mut asked: BTreeSet<String> = BTreeSet::new();
        for _ in 0..budget::MAX_HOST_CALL_DEPTH {
            let wanted: Vec<String> = self
                .host_callees
                .iter()
                .filter(|c| !asked.contains(*c))
                .cloned()
                .collect();
            if wanted.is_empty() {
                break;
            }
            asked.extend(wanted.iter().cloned());
            let callers: Vec<FuncDef<'t>> = self
                .functions
                .values()
                .flatten()
                .filter(|d| !d.is_kernel && !done.contains(&d.name))
                .filter(|d| wanted.iter().any(|w| calls_name(d, w)))
                .cloned()
                .collect();
            for def in callers {
                done.insert(def.name.clone());
                let mut lw = Lowerer::new(self);
                sites.extend(lw.host_launches(def.node, def.src));
                calls.append(&mut lw.host_calls);
                notes.extend(lw.notes.into_iter().filter(|n| {
                    matches!(
                        n.kind,
                        NoteKind::OutOfBudget {
                            what: Cut::HostValues { .. },
                            ..
                        }
                    )
                }));
            }
            // A caller that passes its own parameter on: its callers say.
            let passing: Vec<String> = calls
                .iter()
                .filter(|c| c.args.iter().any(|a| matches!(a, HostArg::Param(_))))
                .map(|c| c.caller.clone())
                .collect();
            self.host_callees.extend(passing);
        }
    }

    /// Each launch argument that is a parameter of its host function
    /// takes the values the callers pass: the whole project's, where the
    /// index gives them (it looks only for those the unit's own calls do
    /// not give), else this unit's calls'.
    pub(super) fn fill_host_values(
        &self,
        sites: &mut [LaunchSite],
        calls: &[HostCall],
        options: &Options,
    ) -> Vec<Note> {
        let mut notes = Vec::new();
        for s in sites {
            let Some(h) = s.host.as_mut() else {
                continue;
            };
            let mut values = std::mem::take(&mut h.values);
            values.resize(h.params.len(), Vec::new());
            for (p, v) in h.params.iter().zip(values.iter_mut()) {
                let Some(p) = *p else {
                    continue;
                };
                if !v.is_empty() {
                    continue;
                }
                let project = options
                    .host_values
                    .as_ref()
                    .and_then(|m| m.get(&(h.function.clone(), p)).cloned());
                let found = match project.map_or_else(|| values_of(calls, &h.function, p), Ok) {
                    Ok(found) => found,
                    Err(cut) => {
                        if let Some(budget) = cut {
                            let what = Cut::HostValues {
                                function: h.function.clone(),
                            };
                            let kind = NoteKind::OutOfBudget { what, budget };
                            if !notes.iter().any(|n: &Note| n.kind == kind) {
                                notes.push(Note { span: s.span, kind });
                            }
                        }
                        Vec::new()
                    }
                };
                *v = h.admitted(p, &found);
            }
            h.values = values;
        }
        notes
    }
}

/// Whether the text of `d` calls `name`: the name, blanks, `(`.
fn calls_name(d: &FuncDef, name: &str) -> bool {
    let text = d
        .src
        .text
        .get(d.node.start_byte()..d.node.end_byte())
        .unwrap_or(&[]);
    let n = name.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i + n.len() <= text.len() {
        if &text[i..i + n.len()] == n && (i == 0 || !ident(text[i - 1])) {
            let rest = &text[i + n.len()..];
            let next = rest.iter().find(|b| !b.is_ascii_whitespace());
            if next == Some(&b'(') {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// The values parameter `param` of host function `function` takes, as
/// `calls` pass them (ascending). `Err(None)` when nothing calls it or a
/// call passes a value not known; `Err(Some(budget))` when the callers go
/// up past `budget::MAX_HOST_CALL_DEPTH` or more than
/// `budget::MAX_HOST_VALUES` values come out.
pub fn values_of(
    calls: &[HostCall],
    function: &str,
    param: u32,
) -> Result<Vec<i64>, Option<Budget>> {
    let mut out = Vec::new();
    collect(calls, function, param, 0, &mut out)?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn collect(
    calls: &[HostCall],
    function: &str,
    param: u32,
    depth: usize,
    out: &mut Vec<i64>,
) -> Result<(), Option<Budget>> {
    if depth > budget::MAX_HOST_CALL_DEPTH {
        return Err(Some(budget::HOST_CALL_DEPTH));
    }
    let mut any = false;
    for c in calls.iter().filter(|c| c.callee == function) {
        any = true;
        match c.args.get(param as usize).ok_or(None)? {
            HostArg::Values(v) => out.extend(v),
            HostArg::Param(q) => collect(calls, &c.caller, *q, depth + 1, out)?,
            HostArg::Unknown => return Err(None),
        }
        out.sort_unstable();
        out.dedup();
        if out.len() > budget::MAX_HOST_VALUES {
            return Err(Some(budget::HOST_VALUES));
        }
    }
    if any {
        Ok(())
    } else {
        Err(None)
    }
}
