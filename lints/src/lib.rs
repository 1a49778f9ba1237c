//! warplint's lint rules. Each rule lives in its own module under
//! `rules/` and is listed once in [`LINTS`]; the CLI, `warplint rule` and
//! SARIF rule descriptions all read from it.
//!
//! Lints read the engine's [`AccessReport`]s; they never re-derive hardware
//! facts, and a fix they offer is checked by re-running the analysis on the
//! edited source.

mod advice;
pub mod diagnostic;
pub mod padding;
pub mod picture;
mod rules;
pub mod wording;

use std::collections::BTreeSet;

use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::{Access, Kernel, MemObject, Span};
use warplint_analyzer::{AccessReport, Arch, FileAnalysis, MemoryModel, Options, Status};

pub use diagnostic::{Applicability, Diagnostic, Edit, Facts, Fix, Label, Severity};
pub use rules::LINTS;

/// Metadata of one rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable code, e.g. `SM001`.
    pub code: &'static str,
    /// Kebab-case name, read as "allow <name>".
    pub name: &'static str,
    /// One line.
    pub summary: &'static str,
    /// Markdown: What it does / Why is this bad? / Example / Use instead /
    /// Fix safety / Options.
    pub doc: &'static str,
    /// Whether the rule can offer an automatic fix.
    pub fixable: bool,
}

impl Rule {
    pub fn url(&self) -> String {
        format!("https://warplint.dev/rules/{}", self.name)
    }
}

/// One rule's check.
pub trait Lint: Sync {
    fn rule(&self) -> &'static Rule;
    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>);
}

/// Severity thresholds (configurable).
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// Worst-warp n-way degree from which SM001 warns.
    pub shared_ways_warning: f64,
    /// … and from which it is an error.
    pub shared_ways_error: f64,
    /// Sector efficiency (ideal / actual) at or below which GM001 warns.
    pub global_efficiency_warning: f64,
    /// … and at or below which it is an error.
    pub global_efficiency_error: f64,
    /// The severity of a finding that rests on an assumption.
    pub assumed_severity: AssumedSeverity,
}

/// The severity of a finding that rests on an assumption, from the one the
/// same cost would have if proven.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AssumedSeverity {
    /// One level below (error → warning → info): the default.
    #[default]
    Lower,
    /// As if proven.
    Same,
    /// This one, whatever the cost.
    Fixed(Severity),
}

impl AssumedSeverity {
    pub fn apply(self, proven: Severity) -> Severity {
        match self {
            AssumedSeverity::Lower => match proven {
                Severity::Error => Severity::Warning,
                Severity::Warning | Severity::Info => Severity::Info,
            },
            AssumedSeverity::Same => proven,
            AssumedSeverity::Fixed(s) => s,
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            shared_ways_warning: 2.0,
            shared_ways_error: 8.0,
            global_efficiency_warning: 0.5,
            global_efficiency_error: 0.125,
            assumed_severity: AssumedSeverity::default(),
        }
    }
}

/// What a lint sees of one file.
pub struct Context<'a> {
    pub source: &'a [u8],
    pub analysis: &'a FileAnalysis,
    pub model: &'a dyn MemoryModel,
    /// The options the file was analysed with (fixes re-run them).
    pub options: &'a Options,
    pub arch: Arch,
    pub thresholds: &'a Thresholds,
}

/// The size the rules take as what programs run at, for a parameter no
/// launch gives (a large power of two, the value assumed before values
/// were tried): a cost that holds only at other sizes of the spread is not
/// reported.
pub const REPORTED_SIZE: i64 = 1024;

/// Whether a report's cost holds where programs usually run: where it rests
/// on a parameter tried over the spread of sizes, at [`REPORTED_SIZE`];
/// where it rests on a block no launch gives, in most of the common shapes
/// tried; where it rests on the types of a template kernel nothing
/// instantiates, for most of the representative types. Values other
/// launches give, and a `bool`'s two, are real.
pub fn typical(r: &AccessReport) -> bool {
    r.assumptions.iter().all(|a| match a {
        Assumption::ParamCondition {
            when,
            tried,
            source,
            idle,
            ..
        } if source.is_spread() => {
            !tried.contains(&REPORTED_SIZE)
                || when.holds(REPORTED_SIZE)
                || idle.contains(&REPORTED_SIZE)
        }
        Assumption::BlockCondition { when, tried, .. } => 2 * when.len() > tried.len(),
        Assumption::TypeCondition { when, tried, .. } => 2 * when.len() > tried.len(),
        _ => true,
    })
}

/// Whether a report's cost rests on a value made up for a value template
/// parameter that no instantiation gives ([`warplint_analyzer::ir::Param::template`]):
/// it differs between the values tried, or one was assumed. Such a
/// parameter is a tile size or a count whose real values the spread of
/// sizes does not stand for; a cost the same for every value tried rests
/// on none.
pub fn rests_on_template_value(k: &Kernel, r: &AccessReport) -> bool {
    let template = |name: &str| k.params.iter().any(|p| p.template && p.name == name);
    r.assumptions.iter().any(|a| match a {
        Assumption::ParamCondition { name, .. } | Assumption::ParamValue { name, .. } => {
            template(name)
        }
        _ => false,
    })
}

impl Context<'_> {
    /// Reports the lints may act on: never `unknown` ones, nor those whose
    /// cost holds only for values or block shapes programs rarely run on
    /// ([`typical`]) or rests on a made-up template argument
    /// ([`rests_on_template_value`]).
    pub fn known_reports(&self) -> impl Iterator<Item = &AccessReport> {
        let kernels = &self.analysis.program.kernels;
        self.analysis.reports.iter().filter(|r| {
            r.status != Status::Unknown
                && typical(r)
                && !kernels
                    .get(r.kernel)
                    .is_some_and(|k| rests_on_template_value(k, r))
        })
    }

    /// The kernel, access and array a report is about.
    pub fn site_of(&self, r: &AccessReport) -> (&Kernel, &Access, &MemObject) {
        let k = &self.analysis.program.kernels[r.kernel];
        let access = &k.accesses[r.access];
        (k, access, &k.objects[access.obj])
    }
}

/// Reports of one source location: the same access of the same kernel
/// under several launches, or the load and the store of `a[i] += x`.
pub struct Site<'a> {
    /// The report with the worst cost (by `key`).
    pub worst: &'a AccessReport,
    /// `load`, `store`, `load and store`, …
    pub ops: String,
    /// The other kernels (instantiations, launches) of the group, each once.
    pub also: Vec<String>,
}

impl Site<'_> {
    /// The note naming the other kernels the finding covers, if any.
    pub fn also_note(&self) -> Option<String> {
        (!self.also.is_empty()).then(|| wording::also_in_kernels(&self.also))
    }
}

/// Groups `reports` by (kernel definition, span, array) and picks the
/// worst of each by `cost` (larger is worse): one diagnostic per source
/// access, whichever launch or template instantiation makes it worst.
pub fn sites<'a>(
    ctx: &Context,
    reports: impl Iterator<Item = &'a AccessReport>,
    cost: impl Fn(&AccessReport) -> f64,
) -> Vec<Site<'a>> {
    let kernels = &ctx.analysis.program.kernels;
    let definition = |r: &AccessReport| kernels.get(r.kernel).map(|k| k.span);
    let mut groups: Vec<Vec<&'a AccessReport>> = Vec::new();
    for r in reports {
        match groups.iter_mut().find(|g| {
            definition(g[0]) == definition(r) && g[0].span == r.span && g[0].array == r.array
        }) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let mut ops: Vec<&str> = g.iter().map(|r| r.op.name()).collect();
            ops.sort_unstable();
            ops.dedup();
            let worst = g
                .iter()
                .copied()
                .fold(None::<&AccessReport>, |best, r| match best {
                    Some(b) if cost(b) >= cost(r) => Some(b),
                    _ => Some(r),
                })
                .unwrap_or(g[0]);
            let mut also: Vec<String> = Vec::new();
            for r in &g {
                if r.kernel_name != worst.kernel_name && !also.contains(&r.kernel_name) {
                    also.push(r.kernel_name.clone());
                }
            }
            Site {
                worst,
                ops: ops.join(" and "),
                also,
            }
        })
        .collect()
}

/// One cause, one finding: a GM001 finding on an access GM004 reports
/// (its pieces are what the struct's alignment splits) is left to GM004,
/// whose fix removes it.
fn yield_to_alignment(out: &mut Vec<Diagnostic>) {
    let covered: Vec<(Span, String)> = out
        .iter()
        .filter(|d| d.code == "GM004")
        .flat_map(|d| {
            std::iter::once(d.span)
                .chain(d.related.iter().map(|l| l.span))
                .map(|s| (s, d.facts.array.clone()))
        })
        .collect();
    out.retain(|d| {
        d.code != "GM001"
            || !covered
                .iter()
                .any(|(s, a)| *s == d.span && *a == d.facts.array)
    });
}

/// Why a rule's unsafe fix is unsafe, in a few words.
pub fn unsafe_why(code: &str) -> &'static str {
    match code {
        "GM004" => "alignment can change the layout of structs that contain the type",
        _ => "padding changes the shared-memory footprint",
    }
}

/// Every rule, in code order.
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    LINTS.iter().map(|l| l.rule())
}

/// Looks a rule up by code or name.
pub fn find(key: &str) -> Option<&'static Rule> {
    rules().find(|r| r.code.eq_ignore_ascii_case(key) || r.name == key)
}

/// Resolves ruff-style selectors (code, code prefix, name, `ALL`) to codes.
pub fn resolve_selection(
    select: &[String],
    extend_select: &[String],
    ignore: &[String],
) -> Result<BTreeSet<&'static str>, String> {
    fn matching(sel: &str) -> Result<Vec<&'static str>, String> {
        let s = sel.trim();
        let hits: Vec<&'static str> = rules()
            .filter(|r| {
                s.eq_ignore_ascii_case("ALL")
                    || r.name == s
                    || r.code
                        .to_ascii_uppercase()
                        .starts_with(&s.to_ascii_uppercase())
            })
            .map(|r| r.code)
            .collect();
        if hits.is_empty() || s.is_empty() {
            Err(format!("unknown rule selector `{sel}`"))
        } else {
            Ok(hits)
        }
    }
    let mut set = BTreeSet::new();
    let base: Vec<String> = if select.is_empty() {
        vec!["ALL".into()]
    } else {
        select.to_vec()
    };
    for s in base.iter().chain(extend_select) {
        set.extend(matching(s)?);
    }
    for s in ignore {
        for c in matching(s)? {
            set.remove(c);
        }
    }
    Ok(set)
}

/// Runs the selected lints on one analysed file; diagnostics come back in
/// source order.
pub fn check(ctx: &Context, selected: &BTreeSet<&'static str>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for lint in LINTS {
        if selected.contains(lint.rule().code) {
            lint.check(ctx, &mut out);
        }
    }
    yield_to_alignment(&mut out);
    for d in &mut out {
        if d.facts.status == Status::Assumed.name() {
            d.severity = ctx.thresholds.assumed_severity.apply(d.severity);
        }
    }
    out.sort_by(|a, b| (a.span.start, a.code, &a.message).cmp(&(b.span.start, b.code, &b.message)));
    // The same finding for several kernels (instantiations, launches) is
    // reported once, naming the others.
    let mut others: Vec<Vec<String>> = Vec::new();
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(out.len());
    for d in out {
        match kept.last() {
            Some(k) if k.span == d.span && k.code == d.code && k.message == d.message => {
                let list = others.last_mut().expect("one list per kept diagnostic");
                if d.facts.kernel != k.facts.kernel && !list.contains(&d.facts.kernel) {
                    list.push(d.facts.kernel);
                }
            }
            _ => {
                kept.push(d);
                others.push(Vec::new());
            }
        }
    }
    for (d, list) in kept.iter_mut().zip(others) {
        if !list.is_empty() {
            d.notes.push(wording::same_in_kernels(&list));
        }
    }
    kept
}

/// `a-b` ranges for a set of lanes: `0-15, 17, 20-21`.
pub fn lane_ranges(mask: u32) -> String {
    let mut parts = Vec::new();
    let mut l = 0;
    while l < 32 {
        if mask & (1 << l) == 0 {
            l += 1;
            continue;
        }
        let start = l;
        while l + 1 < 32 && mask & (1 << (l + 1)) != 0 {
            l += 1;
        }
        parts.push(if start == l {
            start.to_string()
        } else {
            format!("{start}-{l}")
        });
        l += 1;
    }
    parts.join(", ")
}

/// `1`, `2.5`: a number as people write it.
pub fn fmt_num(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// The facts common to every diagnostic about one report.
pub fn facts(ctx: &Context, r: &AccessReport) -> Facts {
    let (assumptions, assumption_kinds) = wording::assumptions(&r.assumptions).into_iter().unzip();
    Facts {
        kernel: r.kernel_name.clone(),
        array: r.array.clone(),
        arch: ctx.arch.to_string(),
        block: r.block,
        assumptions,
        assumption_kinds,
        status: r.status.name().to_string(),
        instruction: r
            .sass
            .as_ref()
            .map(|c| (c.opcode.clone(), c.compiler.clone())),
        hoisted_to_line: r.hoisted.map(|h| h.counted.line),
        counted_on_line: r.sass.as_ref().and_then(|c| c.counted_at).map(|s| s.line),
        inlined: r.inlined_at.as_ref().map(|i| diagnostic::InlinedAt {
            callee: i.callee.clone(),
            call: i.call,
            path: None,
            others: other_calls(ctx, r, i.call),
            other_paths: Vec::new(),
        }),
        ..Facts::default()
    }
}

/// The calls other than `call` that inline the access `r` reports on
/// into the same kernel definition (the reports one finding stands for),
/// in source order.
fn other_calls(
    ctx: &Context,
    r: &AccessReport,
    call: warplint_analyzer::ir::Span,
) -> Vec<warplint_analyzer::ir::Span> {
    let kernels = &ctx.analysis.program.kernels;
    let definition = |x: &AccessReport| kernels.get(x.kernel).map(|k| k.span);
    let mut out: Vec<warplint_analyzer::ir::Span> = ctx
        .analysis
        .reports
        .iter()
        .filter(|x| x.span == r.span && x.array == r.array && definition(x) == definition(r))
        .filter_map(|x| x.inlined_at.as_ref().map(|i| i.call))
        .filter(|c| *c != call)
        .collect();
    out.sort_by_key(|c| (c.file, c.line, c.column));
    out.dedup_by_key(|c| (c.file, c.line, c.column));
    out
}

/// What the instruction that runs `r` is, as notes: the source accesses
/// nvcc merged into it (`k`'s removed accesses merged into its span), and
/// the SASS it was verified against.
pub fn instruction_notes(k: &warplint_analyzer::ir::Kernel, r: &AccessReport) -> Vec<String> {
    // Of the same array: two arrays' accesses on one line merge each into
    // its own instruction.
    let obj = k.accesses.get(r.access).map(|a| a.obj);
    let covered: Vec<String> = k
        .removed
        .iter()
        .filter(|x| Some(x.obj) == obj)
        .filter(|x| matches!(x.why, warplint_analyzer::ir::RemovedWhy::Merged { into } if into == r.span))
        .map(|x| format!("`{}` (line {})", x.text, x.span.line))
        .fold(Vec::new(), |mut v: Vec<String>, x| {
            // The pieces of one struct copy say it once.
            if !v.contains(&x) {
                v.push(x);
            }
            v
        });
    // A conditional overwrite nvcc stores as a select (`nvcc/overwrite.rs`).
    let select = k
        .accesses
        .get(r.access)
        .filter(|a| a.select_at == Some(r.span))
        .map(|a| a.text.clone());
    let merged = match (covered.is_empty(), select) {
        (true, Some(text)) => Some(format!(
            "nvcc stores the `if`'s result as a select, for every lane: `{text}` runs \
             unconditionally, counted on the `if`'s line"
        )),
        (false, Some(text)) => Some(format!(
            "nvcc stores the `if`'s result as a select, for every lane: {} and `{text}` are one \
             {}-byte store, counted on the `if`'s line",
            covered.join(", "),
            r.width
        )),
        (false, None) => Some(format!(
            "nvcc merges {} into this {}-byte access: one instruction runs for them",
            covered.join(", "),
            r.width
        )),
        (true, None) => None,
    };
    let verified = r.sass.as_ref().map(|c| {
        let by = wording::sass_by(c.compiler.as_ref());
        match c.modelled {
            Some(m) => format!(
                "{by} runs it as `{}` ({} bytes per lane, where warplint modelled {m}): \
                 costed as that instruction",
                c.opcode, c.width
            ),
            None => match c.counted_at {
                Some(_) if !c.in_loop.is_empty() => format!(
                    "verified against {by}: `{}` runs it, on {} of its loop (nvcc unrolled \
                     it and put the copies there), where Nsight Compute counts it",
                    c.opcode,
                    wording::lines_list(c.in_loop.iter().map(|s| s.line))
                ),
                Some(at) => format!(
                    "verified against {by}: `{}` runs it, on line {} (the line of an access \
                     merged into it), where Nsight Compute counts it",
                    c.opcode, at.line
                ),
                None => format!("verified against {by}: `{}` runs it on this line", c.opcode),
            },
        }
    });
    let hoisted = r.hoisted.as_ref().map(wording::hoisted);
    merged.into_iter().chain(hoisted).chain(verified).collect()
}

/// The assumptions lines appended to a diagnostic's notes, and the inputs
/// the finding holds for every value of.
pub fn assumption_notes(r: &AccessReport) -> Vec<String> {
    let assumed = wording::assumptions(&r.assumptions)
        .into_iter()
        .map(|(a, _)| format!("assumed: {a}"));
    let every = wording::for_every_list(&r.for_every)
        .into_iter()
        .map(|(f, _)| format!("holds {f}"));
    assumed.chain(every).collect()
}
