//! Launch sites: the host functions that launch (found while the pass
//! reads functions), the launches in them, and the launches a kernel
//! instantiation is analysed with (its launch sites, a configured
//! `[kernel.NAME]` block, or `__launch_bounds__`).

use tree_sitter::Node;

use super::super::fields::Fields;
use super::super::lower::{Lowerer, Src};
use super::super::types::Ty;
use super::super::Options;
use super::{FuncDef, LaunchSite, TArg, Tu};
use crate::budget;
use crate::finding::{Cut, NoteKind};
use crate::ir::{HostCall, Kernel, Launch, LaunchOrigin, Note, ProjectLaunch};

impl<'t> Tu<'t> {
    /// Launch sites in the functions that launch (and those that
    /// file-scope macro uses make) (only those that name
    /// `only` when the analysis is of one kernel), and the notes of the
    /// budgets their walk ran out of that can change a launch (the walk's
    /// other notes, and a host access cut into pieces, are about host code,
    /// which is not analysed).
    pub(super) fn find_launches(
        &mut self,
        root: Node<'t>,
        options: &Options,
    ) -> (Vec<LaunchSite>, Vec<Note>, Vec<HostCall>) {
        let only = options.only_kernel.as_deref();
        let mut out = self.macro_launches(root, self.src);
        let fns = std::mem::take(&mut self.launch_fns);
        self.host_callees = fns
            .iter()
            .map(|d| d.name.clone())
            .chain(options.host_callees.iter().cloned())
            .collect();
        let mut calls = Vec::new();
        let (kernel_sites, host_insts) = self.explicit_instantiations(&fns);
        out.extend(kernel_sites);
        if let Some(name) = only.filter(|n| !n.is_empty()) {
            out.retain(|s| s.kernel == name);
        }
        let mut notes: Vec<Note> = Vec::new();
        for def in &fns {
            let (f, source) = (def.node, def.src);
            if let Some(name) = only {
                let text = source.text.get(f.start_byte()..f.end_byte()).unwrap_or(&[]);
                if !name.is_empty() && !text.windows(name.len()).any(|w| w == name.as_bytes()) {
                    continue;
                }
            }
            // A host function template is walked once per explicit
            // instantiation of it, its parameters bound; else once, as
            // written.
            let mut insts: Vec<Option<&Vec<TArg>>> = host_insts
                .iter()
                .filter(|(n, _)| *n == def.name && !def.tparams.is_empty())
                .map(|(_, t)| Some(t))
                .collect();
            if insts.len() > budget::MAX_INSTANTIATIONS {
                let kind = NoteKind::TooManyInstantiations {
                    kernel: def.name.clone(),
                    count: insts.len(),
                    budget: budget::INSTANTIATIONS,
                };
                notes.push(Note {
                    span: source.span(f.start_byte(), f.end_byte()),
                    kind,
                });
                insts.truncate(budget::MAX_INSTANTIATIONS);
            }
            if insts.is_empty() {
                insts.push(None);
            }
            for targs in insts {
                let mut lw = Lowerer::new(self);
                out.extend(match targs {
                    Some(t) => lw.host_template_launches(def, t),
                    None => lw.host_launches(f, source),
                });
                calls.append(&mut lw.host_calls);
                // A budget run out, and a launch's block too large to run
                // (RL001 reports it: the launch fails).
                notes.extend(lw.notes.into_iter().filter(|n| {
                    (!n.kind.budgets().is_empty() && !host_access_note(&n.kind))
                        || matches!(n.kind, NoteKind::BlockTooLarge { .. })
                }));
            }
        }
        self.follow_callers(&fns, &mut out, &mut calls, &mut notes);
        notes.extend(self.fill_host_values(&mut out, &calls, options));
        (out, notes, calls)
    }
}

impl<'t> Tu<'t> {
    /// Each explicit instantiation of a kernel (`template __global__ void
    /// k<float, 128>(float *);`) as a site that gives its template
    /// arguments and no configuration: the kernel is instantiated with
    /// them, under the default block unless a launch gives one. And each
    /// of a host function template among `fns` (`template void
    /// reduce<float>(…);`), by name, with its template arguments.
    #[allow(clippy::type_complexity)]
    fn explicit_instantiations(
        &mut self,
        fns: &[FuncDef<'t>],
    ) -> (Vec<LaunchSite>, Vec<(String, Vec<TArg>)>) {
        let insts = std::mem::take(&mut self.instantiations);
        let mut out = Vec::new();
        let mut host = Vec::new();
        for (n, source) in insts {
            let Some(tf) = n
                .field("declarator")
                .filter(|d| d.node_kind() == "function_declarator")
                .and_then(|d| d.field("declarator"))
                .filter(|d| d.node_kind() == "template_function")
            else {
                continue;
            };
            let src = Src::of(source);
            let Some(name) = tf.field("name").map(|x| src.text(x)) else {
                continue;
            };
            let name = name.rsplit("::").next().unwrap_or(&name).to_string();
            let kernel = self.kernels.iter().any(|d| d.is_kernel && d.name == name);
            let launcher = fns.iter().any(|d| !d.tparams.is_empty() && d.name == name);
            if !kernel && !launcher {
                continue;
            }
            let targs = match tf.field("arguments") {
                Some(a) => Lowerer::new(self).template_args(a, &src),
                None => Vec::new(),
            };
            if !kernel {
                if !host.iter().any(|(n, t)| *n == name && *t == targs) {
                    host.push((name, targs));
                }
                continue;
            }
            // One whose arguments are all unknown here instantiates
            // nothing the kernel's own definition does not.
            let unknown = |t: &TArg| matches!(t, TArg::Unknown(_) | TArg::Type(Ty::Unknown(_)));
            if !targs.is_empty() && targs.iter().all(unknown) {
                continue;
            }
            out.push(LaunchSite {
                kernel: name,
                targs,
                grid: None,
                block: None,
                args: Vec::new(),
                offset_args: Vec::new(),
                span: source.span(n.start_byte(), n.end_byte()),
                host: None,
            });
        }
        (out, host)
    }
}

/// A note about a host access (not analysed, so nothing depends on it).
fn host_access_note(kind: &NoteKind) -> bool {
    matches!(
        kind,
        NoteKind::OutOfBudget {
            what: Cut::AccessPieces { .. },
            ..
        }
    )
}

/// The block of a launch that gives none: `__launch_bounds__(N)` as
/// `[N, 1, 1]` for a kernel that reads only `threadIdx.x`, else the
/// configured default.
fn fallback_block(kernel: &Kernel, default_block: [u64; 3]) -> ([u64; 3], LaunchOrigin) {
    let one_d = !kernel.uses_thread_dims[1] && !kernel.uses_thread_dims[2];
    match kernel.launch_bounds {
        Some(n) if one_d => ([n, 1, 1], LaunchOrigin::LaunchBounds),
        _ => (default_block, LaunchOrigin::Default),
    }
}

/// The launches `kernel` (an instantiation of `def` with `targs`) is
/// analysed with, each with its block decided and why: a configured block,
/// else its distinct launch sites (where a site's block is not known, the
/// [`fallback_block`]), else one launch with the fallback block. The one
/// place a kernel's block is decided.
pub(super) fn launches_for(
    kernel: &Kernel,
    def: &FuncDef,
    targs: &[TArg],
    sites: &[LaunchSite],
    project: &[(&ProjectLaunch, Vec<TArg>)],
    options: &Options,
) -> Vec<Launch> {
    let named = |values: &std::collections::BTreeMap<String, i64>, base: &mut Vec<Option<i64>>| {
        for (i, p) in kernel.params.iter().enumerate() {
            if let Some(v) = values.get(&p.name) {
                base[i] = Some(*v);
            }
        }
    };
    let nparams = kernel.params.len();
    let default_block = options.block_defaults.for_dims(kernel.uses_thread_dims);
    if let Some(ov) = options.kernels.get(&kernel.name) {
        if let Some(block) = ov.block {
            let mut params = vec![None; nparams];
            named(&ov.params, &mut params);
            return vec![Launch {
                grid: ov.grid,
                block,
                params,
                offset_args: Vec::new(),
                span: None,
                origin: LaunchOrigin::Config,
                elsewhere: None,
                param_sets: Vec::new(),
                param_sampled: Vec::new(),
            }];
        }
    }
    let mut out: Vec<Launch> = Vec::new();
    let here = sites
        .iter()
        .filter(|s| s.kernel == def.name && super::own_targs(def, &s.targs) == targs)
        .map(|s| {
            let sets = sets_of(&s.host);
            (
                s.grid,
                s.block,
                &s.args,
                &s.offset_args,
                Some(s.span),
                None,
                sets,
            )
        });
    // Other files' sites, given only when this file has none of the kernel.
    let there = project
        .iter()
        .filter(|(_, t)| super::own_targs(def, t) == targs)
        .map(|(p, _)| {
            let s = &p.site;
            let at = Some(p.at.clone());
            let sets = sets_of(&s.host);
            (s.grid, s.block, &s.args, &s.offset_args, None, at, sets)
        });
    // A launch's arguments are the function's own parameters, by position:
    // never a template value or a value the block loads, which come after
    // them (an overload with more parameters launched under this name).
    let declared = kernel
        .params
        .iter()
        .take_while(|p| !p.template && p.loaded.is_none())
        .count();
    for (grid, site_block, args, offset_args, span, elsewhere, sets) in here.chain(there) {
        let mut params: Vec<Option<i64>> = (0..nparams)
            .map(|i| args.get(i).copied().flatten().filter(|_| i < declared))
            .collect();
        if let Some(ov) = options.kernels.get(&kernel.name) {
            named(&ov.params, &mut params);
        }
        // Values from the callers, for a parameter nothing else gives.
        let (sets, sampled) = sets;
        let given = |i: usize| i < declared && params[i].is_none();
        let param_sets: Vec<Vec<i64>> = (0..nparams)
            .map(|i| match sets.get(i) {
                Some(v) if given(i) => v.clone(),
                _ => Vec::new(),
            })
            .collect();
        let (param_sets, param_sampled) = if param_sets.iter().all(Vec::is_empty) {
            (Vec::new(), Vec::new())
        } else {
            let n = (0..nparams)
                .map(|i| sampled.get(i).copied().filter(|_| given(i)).unwrap_or(0))
                .collect();
            (param_sets, n)
        };
        let (block, origin) = match site_block {
            Some(b) => (b, LaunchOrigin::LaunchSite),
            None => fallback_block(kernel, default_block),
        };
        let l = Launch {
            grid,
            block,
            params,
            offset_args: offset_args.clone(),
            span,
            origin,
            elsewhere,
            param_sets,
            param_sampled,
        };
        // A site whose block is not known and one that gives the default
        // block stay two launches (they say different things).
        if !out.iter().any(|o| {
            o.grid == l.grid
                && o.block == l.block
                && o.origin == l.origin
                && o.params == l.params
                && o.param_sets == l.param_sets
        }) {
            out.push(l);
        }
    }
    if out.is_empty() {
        let mut params = vec![None; nparams];
        let ov = options.kernels.get(&kernel.name);
        if let Some(ov) = ov {
            named(&ov.params, &mut params);
        }
        let (block, origin) = fallback_block(kernel, default_block);
        out.push(Launch {
            grid: ov.and_then(|o| o.grid),
            block,
            params,
            offset_args: Vec::new(),
            span: None,
            origin,
            elsewhere: None,
            param_sets: Vec::new(),
            param_sampled: Vec::new(),
        });
    }
    out
}

/// Per launch argument, the values the callers of the launching host
/// function pass for it (empty: none known), and how many there were where
/// those are a sample.
fn sets_of(host: &Option<crate::ir::HostArgs>) -> (Vec<Vec<i64>>, Vec<u32>) {
    host.as_ref()
        .map(|h| (h.values.clone(), h.sampled.clone()))
        .unwrap_or_default()
}

/// Whether `text` names the runtime's launch API (`cudaLaunchKernel`,
/// `cudaLaunchCooperativeKernel`).
pub(crate) fn launch_api_named(text: &[u8]) -> bool {
    let name = b"cudaLaunch";
    text.windows(name.len()).any(|w| w == name)
}

/// Whether `text` has `<<` followed (after blanks) by `<`.
pub(super) fn launch_chevrons(text: &[u8]) -> bool {
    let mut i = 0;
    while i + 1 < text.len() {
        if text[i] == b'<' && text[i + 1] == b'<' {
            let mut j = i + 2;
            while j < text.len() && text[j].is_ascii_whitespace() {
                j += 1;
            }
            if text.get(j) == Some(&b'<') {
                return true;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    false
}

/// Whether the syntax under `n` holds a `<<<…>>>` launch (`None`: not
/// known, `budget::MAX_LAUNCH_SEARCH_NODES` ran out).
pub(super) fn contains_launch(n: Node) -> Option<bool> {
    let mut stack = vec![n];
    let mut visited = 0u32;
    while let Some(x) = stack.pop() {
        visited += 1;
        if visited > budget::MAX_LAUNCH_SEARCH_NODES {
            return None;
        }
        if x.node_kind() == "kernel_call_syntax" {
            return Some(true);
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    Some(false)
}
