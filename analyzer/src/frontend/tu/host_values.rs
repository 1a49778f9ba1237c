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
use crate::ir::{HostArg, HostArgs, HostCall, Note};

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
                .filter(|d| wanted.iter().any(|w| calls_name(text_of(d), w)))
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

    /// Each launch argument that is over its host function's parameters
    /// takes the values the calls pass (the unit's own and, where the
    /// index gives them, the whole project's), less those the launch's
    /// conditions rule out; a budget that stops them is a note.
    pub(super) fn fill_host_values(
        &self,
        sites: &mut [LaunchSite],
        calls: &[HostCall],
        options: &Options,
    ) -> Vec<Note> {
        let mut notes: Vec<Note> = Vec::new();
        let all: Vec<HostCall> = calls.iter().chain(&options.host_calls).cloned().collect();
        for s in sites {
            let Some(h) = s.host.as_mut() else {
                continue;
            };
            for i in 0..h.params.len() {
                let known = h.values.get(i).is_some_and(|v| !v.is_empty());
                if known || h.params[i].is_none() {
                    continue;
                }
                match arg_values(&all, h, i) {
                    Ok(found) => h.set_values(i, found),
                    Err(Some(budget)) => {
                        let what = Cut::HostValues {
                            function: h.function.clone(),
                        };
                        let kind = NoteKind::OutOfBudget { what, budget };
                        if !notes.iter().any(|n| n.kind == kind) {
                            notes.push(Note { span: s.span, kind });
                        }
                    }
                    Err(None) => {}
                }
            }
        }
        notes
    }
}

/// The values launch argument `i` of a launch in host function
/// `h.function` takes: per call of that function, the expression the
/// argument is over the values the call passes (those the launch's
/// conditions rule out left out; a parameter the call passes on from its
/// own caller takes what the callers pass), joined over the calls.
/// `Err(None)` when not known (nothing calls it, a call passes a value not
/// known, or two of the parameters each take several values in one call);
/// `Err(Some(budget))` when a budget stops it.
pub fn arg_values(calls: &[HostCall], h: &HostArgs, i: usize) -> Result<Vec<i64>, Option<Budget>> {
    let Some(Some(e)) = h.params.get(i) else {
        return Err(None);
    };
    let mut out = Vec::new();
    let mut any = false;
    for c in calls.iter().filter(|c| c.callee == h.function) {
        any = true;
        let mut sets = Vec::new();
        for p in e.params() {
            let v = match c.args.get(p as usize).ok_or(None)? {
                HostArg::Values(v) => v.clone(),
                HostArg::Param(q) => values_of(calls, &c.caller, *q)?,
                HostArg::Unknown => return Err(None),
            };
            sets.push((p, h.admitted(p, &v)));
        }
        out.extend(e.over(&sets).ok_or(None)?);
        out.sort_unstable();
        out.dedup();
        if out.len() > budget::MAX_HOST_VALUES_SEEN {
            return Err(Some(budget::HOST_VALUES_SEEN));
        }
    }
    if any {
        Ok(out)
    } else {
        Err(None)
    }
}

/// Whether `text` calls `name`: the name (not part of a longer one),
/// blanks, `(`. A byte search, for choosing the functions and files to
/// read for calls (here and in the CLI's project index).
pub fn calls_name(text: &[u8], name: &str) -> bool {
    let n = name.as_bytes();
    if n.is_empty() {
        return false;
    }
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    // memmem, not a compare at every byte (that was 9% of a ggml run).
    memchr::memmem::find_iter(text, n).any(|i| {
        let before = i == 0 || !ident(text[i - 1]);
        let next = text[i + n.len()..]
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        before && next == Some(&b'(')
    })
}

/// The text of function `d`.
fn text_of<'t>(d: &FuncDef<'t>) -> &'t [u8] {
    d.src
        .text
        .get(d.node.start_byte()..d.node.end_byte())
        .unwrap_or(&[])
}

/// The values parameter `param` of host function `function` takes, as
/// `calls` pass them (ascending). `Err(None)` when nothing calls it or a
/// call passes a value not known; `Err(Some(budget))` when the callers go
/// up past `budget::MAX_HOST_CALL_DEPTH` or more than
/// `budget::MAX_HOST_VALUES_SEEN` values come out.
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
        if out.len() > budget::MAX_HOST_VALUES_SEEN {
            return Err(Some(budget::HOST_VALUES_SEEN));
        }
    }
    if any {
        Ok(())
    } else {
        Err(None)
    }
}

#[cfg(test)]
mod tests {
    use super::calls_name;

    #[test]
    fn a_call_is_the_name_alone_then_a_parenthesis() {
        assert!(calls_name(b"x = run (a, b);", "run"));
        assert!(calls_name(b"run(a);", "run"));
        assert!(!calls_name(b"rerun(a);", "run"));
        assert!(!calls_name(b"int run;", "run"));
        assert!(!calls_name(b"run_fast(a); runs(b)", "run"));
    }
}
