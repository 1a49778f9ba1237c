//! Checking one input, on a worker thread: read it, analyse and lint it
//! (suppressions applied), note the kernels it lowered from headers, apply
//! fixes, drop per-file ignores, and hand back its diagnostics split
//! between the file and the headers they are in. Nothing is printed here.

use std::path::{Path, PathBuf};

use warplint_analyzer::{analyze, FileAnalysis, Header, MemoryModel, Options, Status};
use warplint_lints::{Context, Diagnostic};

use super::archs::across_archs;
use super::inputs::{absolute, Input, Resolved, Selected};
use super::tally::KernelTally;
use super::CheckArgs;
use crate::cache::Cache;
use crate::includes::{ProjectHeaders, Reached};
use crate::project::{LaunchIndex, UnitSites};
use crate::render::FileDiagnostics;
use crate::settings::Settings;
use crate::suppress::Suppressions;

/// An unknown result, for `--show-unknown`.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct UnknownNote {
    pub(super) path: String,
    pub(super) line: u32,
    pub(super) column: u32,
    pub(super) text: String,
}

/// What checking one input produced (built on a worker thread); what the
/// results cache keeps of a unit.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Outcome {
    pub(super) file: Option<FileDiagnostics>,
    pub(super) unknowns: Vec<UnknownNote>,
    pub(super) diff: String,
    pub(super) fixed: usize,
    /// Source of stdin under `--fix` (fixed where a fix applied), printed
    /// instead of written: the only thing on stdout.
    pub(super) stdin_fixed: Option<Vec<u8>>,
    pub(super) errors: Vec<String>,
    /// What the run says of this file on stderr as warnings (a budget that
    /// stopped the reading of its headers).
    pub(super) warnings: Vec<String>,
    /// Each kernel instantiation's accesses, by status and reason.
    pub(super) kernels: Vec<KernelTally>,
    /// Diagnostics in headers the file includes.
    pub(super) headers: Vec<FileDiagnostics>,
    /// The unit analysed (canonical path).
    pub(super) unit: PathBuf,
    /// Kernels this file's analysis lowered from headers.
    pub(super) covered: Vec<crate::project::Extent>,
    /// `keep_hovers`: the file's own accesses, as hover shows them (a run
    /// that keeps them uses no cache).
    #[serde(skip)]
    pub(super) hovers: Vec<crate::hover::HoverEntry>,
    /// Quoted includes of the file (and its headers) found nowhere.
    pub(super) missing_headers: Vec<String>,
    /// Suppression comments of the file that name no rule or suppressed
    /// nothing (the file's absolute path, the comment).
    pub(super) idle: Vec<(String, crate::suppress::Idle)>,
    /// Where the parser could not read a file that has `__global__` code but
    /// gave no kernel (`path:line:col` of each syntax error).
    pub(super) unread: Vec<String>,
}

/// The syntax errors of a file whose text has `__global__` but from which
/// no kernel was read: its kernels are hidden from the run, which cannot
/// call it clean.
fn unread_kernels(analysis: &FileAnalysis, bytes: &[u8], path: &str) -> Vec<String> {
    use warplint_analyzer::finding::NoteKind;
    let own_kernels = analysis.program.kernels.iter().any(|k| k.extent.file == 0);
    if own_kernels || !bytes.windows(10).any(|w| w == b"__global__") {
        return Vec::new();
    }
    analysis
        .program
        .notes
        .iter()
        .filter(|n| n.span.file == 0)
        .filter(|n| {
            matches!(
                n.kind,
                NoteKind::ParseError { .. }
                    | NoteKind::ParseExpected { .. }
                    | NoteKind::ParserGaveUp
            )
        })
        .map(|n| format!("{path}:{}:{}", n.span.line, n.span.column))
        .collect()
}

/// Reads `input` (a file that cannot be read, gone since discovery or
/// without permission, is an error for that file; the rest go on), finds
/// its headers and checks it.
pub(super) fn check_input(
    mut input: Input,
    args: &CheckArgs,
    cfg: &Resolved,
    project: &ProjectHeaders,
    index: &LaunchIndex,
    cache: Option<&Cache>,
) -> Outcome {
    let read = match (input.error.take(), input.stdin_bytes.take()) {
        (Some(e), _) => Err(e),
        (None, Some(b)) => Ok(b),
        (None, None) => crate::includes::read_source(Path::new(&input.path))
            .map_err(|e| format!("{}: {e}", input.path)),
    };
    match read {
        Ok(bytes) => {
            let s = &cfg.settings;
            let reached = crate::includes::headers_for(
                Path::new(&input.path),
                &bytes,
                &s.include_dirs,
                project,
                s.project_includes,
            );
            let sites = index.for_unit(Path::new(&input.path), &bytes, &reached.headers);
            let cached = cache
                .filter(|_| !input.stdin && cfg.settings.sass.is_none())
                .map(|c| (c, unit_key(c, &input, &bytes, &reached, &sites, args, cfg)));
            if let Some((c, (name, key))) = &cached {
                if let Some(o) = c.get::<Outcome>("unit", name, key) {
                    return o;
                }
            }
            let o = match input.context_of.take() {
                Some(header) => check_context(&input.path, &bytes, reached, &header, sites, cfg),
                None => check_one(input, bytes, reached, sites, args, cfg),
            };
            if let Some((c, (name, key))) = &cached {
                c.put("unit", name, key, &o);
            }
            o
        }
        Err(e) => Outcome {
            errors: vec![e],
            ..Outcome::default()
        },
    }
}

/// The results cache's name for `input`'s entry (the file, and the run
/// file it is a context of) and the key of everything its outcome is
/// computed from (see [`crate::cache`]): settings and the options that
/// change an outcome, the file, every header it read or missed, and the
/// other files' launch sites that reach its kernels.
fn unit_key(
    cache: &Cache,
    input: &Input,
    bytes: &[u8],
    reached: &Reached,
    sites: &UnitSites,
    args: &CheckArgs,
    cfg: &Resolved,
) -> (String, String) {
    let name = format!("{}\0{}\0{:?}", input.path, input.abs, input.context_of);
    let mut k = cache.key("unit");
    k.text(&crate::cache::settings_fingerprint(
        &cfg.settings,
        &cfg.selected,
    ))
    .text(&format!("{}", args.show_unknown))
    .text(&name)
    .bytes(bytes);
    for h in &reached.headers {
        k.text(&h.name).text(&h.path).bytes(&h.text);
    }
    k.text(&format!(
        "{:?}|{:?}|{:?}|{:?}",
        reached.canonical, reached.missing, reached.cut, sites
    ));
    (name, k.finish())
}

/// A file of the project checked as it includes `header`, a run file (its
/// canonical path): only the kernels defined there are lowered, and only
/// the diagnostics in it kept. Nothing is fixed (the run file's own check
/// fixes what its analysis finds).
fn check_context(
    path: &str,
    bytes: &[u8],
    reached: Reached,
    header: &Path,
    project_launches: UnitSites,
    cfg: &Resolved,
) -> Outcome {
    let mut o = Outcome {
        unit: crate::includes::canonical(Path::new(path)),
        ..Outcome::default()
    };
    let Some(i) = reached.canonical.iter().position(|c| c == header) else {
        return o;
    };
    let id = i as u32 + 1;
    let s = &cfg.settings;
    let mut options = s.options.clone();
    options.frontend.headers = reached.headers;
    project_launches.apply(&mut options.frontend);
    options.frontend.only_file = Some(id);
    o.warnings.extend(crate::sass::attach(
        s,
        &mut options,
        Path::new(path),
        bytes,
        &reached.canonical,
    ));
    let (analysis, diagnostics, _) = lint(
        bytes,
        &options,
        s.arch,
        &s.thresholds,
        cfg.model.as_ref(),
        &cfg.selected,
    );
    if analysis.program.notes.iter().any(|n| n.span.line == 0) {
        return o;
    }
    o.kernels = super::tally::per_kernel(&analysis, &reached.canonical, &reached.missing);
    o.covered = crate::project::header_extents(&analysis.program.kernels, &reached.canonical);
    let mut diagnostics = if s.archs.len() > 1 {
        across_archs(bytes, &options, s, &cfg.selected, diagnostics)
    } else {
        diagnostics
    };
    diagnostics.retain(|d| d.span.file == id);
    per_file_ignores(s, &options.frontend.headers[i].path, &mut diagnostics);
    related_elsewhere_as_notes(&mut diagnostics, path, &options.frontend.headers);
    o.headers = header_diagnostics(&diagnostics, &options.frontend.headers);
    o
}

/// One input being checked, with its configuration.
struct Unit<'a> {
    path: String,
    stdin: bool,
    /// The configuration's options, with this file's headers.
    options: Options,
    args: &'a CheckArgs,
    cfg: &'a Resolved,
}

impl Unit<'_> {
    /// `bytes` analysed and linted as this file, with its configuration,
    /// and its own suppression comments with what each suppressed.
    fn lint(&self, bytes: &[u8]) -> (FileAnalysis, Vec<Diagnostic>, Suppressions) {
        let s = &self.cfg.settings;
        lint(
            bytes,
            &self.options,
            s.arch,
            &s.thresholds,
            self.cfg.model.as_ref(),
            &self.cfg.selected,
        )
    }

    /// `--fix` and `--diff`: applies the fixes that do not overlap, each
    /// verified by re-linting; with `--diff` the change is only described.
    /// A fixed file is written (stdin's text is kept for printing), and
    /// `bytes` and `diagnostics` become the fixed source's.
    fn apply_fixes(
        &self,
        o: &mut Outcome,
        bytes: &mut Vec<u8>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<(), String> {
        // An edited source is not what nvcc compiled: the model alone
        // re-checks it.
        let mut plain = self.options.clone();
        plain.sass = None;
        let s = &self.cfg.settings;
        let relint = |b: &[u8]| {
            lint(
                b,
                &plain,
                s.arch,
                &s.thresholds,
                self.cfg.model.as_ref(),
                &self.cfg.selected,
            )
            .1
        };
        let (new, n) = crate::fix::fix_source(bytes, diagnostics, self.args.unsafe_fixes, &relint);
        if n == 0 {
            return Ok(());
        }
        let path = &self.path;
        if self.args.diff {
            o.diff = crate::fix::unified_diff(
                path,
                &String::from_utf8_lossy(bytes),
                &String::from_utf8_lossy(&new),
            );
            return Ok(());
        }
        if self.stdin {
            o.stdin_fixed = Some(new.clone());
        } else if let Err(e) = crate::fix::write_atomically(Path::new(path), &new) {
            return Err(format!("{path}: could not write the fix: {e}"));
        }
        let before = diagnostics.len();
        *diagnostics = relint(&new);
        o.fixed = before.saturating_sub(diagnostics.len()).max(n);
        *bytes = new;
        Ok(())
    }
}

/// Checks one read input: its diagnostics, those of its headers, and what
/// the run needs to merge them with the other files'.
fn check_one(
    input: Input,
    mut bytes: Vec<u8>,
    reached: Reached,
    project_launches: UnitSites,
    args: &CheckArgs,
    cfg: &Resolved,
) -> Outcome {
    let Input {
        path, abs, stdin, ..
    } = input;
    let settings = &cfg.settings;
    let mut options = settings.options.clone();
    options.frontend.language = crate::discover::language(Path::new(&path));
    options.frontend.headers = reached.headers;
    project_launches.apply(&mut options.frontend);
    let sass_warning = crate::sass::attach(
        settings,
        &mut options,
        Path::new(&path),
        &bytes,
        &reached.canonical,
    );
    let unit = Unit {
        path,
        stdin,
        options,
        args,
        cfg,
    };
    let mut o = Outcome {
        unit: PathBuf::from(&abs),
        warnings: reached
            .cut
            .map(|c| format!("{}: {c}", unit.path))
            .into_iter()
            .chain(sass_warning)
            .collect(),
        // `--fix` on stdin prints the source, fixed or not, and nothing
        // else on stdout (an editor replaces its buffer with it).
        stdin_fixed: (unit.stdin && args.fix && !args.diff).then(|| bytes.clone()),
        ..Outcome::default()
    };
    let (analysis, mut diagnostics, own) = unit.lint(&bytes);
    // Several architectures lint again per arch: a comment used by one
    // only would look unused.
    if settings.archs.len() == 1 {
        let idle = own.idle(&|code| cfg.selected.contains(code));
        let path = &unit.path;
        o.warnings.extend(
            idle.iter()
                .map(|i| format!("{path}:{}: {}", i.line, i.describe())),
        );
        o.idle = idle.into_iter().map(|i| (abs.clone(), i)).collect();
    }
    o.kernels = super::tally::per_kernel(&analysis, &reached.canonical, &reached.missing);
    o.missing_headers.clone_from(&reached.missing);
    o.unread = unread_kernels(&analysis, &bytes, &unit.path);
    o.covered = crate::project::header_extents(&analysis.program.kernels, &reached.canonical);
    if settings.archs.len() > 1 {
        diagnostics = across_archs(&bytes, &unit.options, settings, &cfg.selected, diagnostics);
    }
    // A note without a line is about the whole file (it was not analysed):
    // the file's notes become its errors.
    if analysis.program.notes.iter().any(|n| n.span.line == 0) {
        for n in &analysis.program.notes {
            let note = warplint_lints::wording::note(&n.kind);
            o.errors.push(format!("{}: {note}", unit.path));
        }
        return o;
    }
    if args.show_unknown {
        o.unknowns = unknown_notes(&analysis, &unit.path, &unit.options.frontend.headers);
    }
    if args.keep_hovers {
        let arch = settings.arch.to_string();
        o.hovers = crate::hover::entries(&analysis, cfg.model.as_ref(), &arch, &abs);
    }
    drop(analysis);
    if args.fix || args.diff {
        if let Err(e) = unit.apply_fixes(&mut o, &mut bytes, &mut diagnostics) {
            o.errors.push(e);
            return o;
        }
    }
    per_file_ignores(settings, &unit.path, &mut diagnostics);
    let Unit { path, options, .. } = unit;
    related_elsewhere_as_notes(&mut diagnostics, &path, &options.frontend.headers);
    // Diagnostics in included headers are reported against the header.
    let (mine, theirs): (Vec<Diagnostic>, Vec<Diagnostic>) =
        diagnostics.into_iter().partition(|d| d.span.file == 0);
    o.headers = header_diagnostics(&theirs, &options.frontend.headers);
    o.file = Some(FileDiagnostics {
        path,
        abs_path: abs,
        // Only a file with something to show keeps its text (a corpus run
        // would otherwise hold every file's source until the end).
        source: if mine.is_empty() {
            String::new()
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        },
        diagnostics: mine,
    });
    o
}

/// `--show-unknown`: the accesses the engine could not cost, and why, each
/// at the file it is in (`path`, or one of its `headers`).
fn unknown_notes(analysis: &FileAnalysis, path: &str, headers: &[Header]) -> Vec<UnknownNote> {
    let kernels = &analysis.program.kernels;
    let held = |r: &warplint_analyzer::AccessReport| {
        kernels
            .get(r.kernel)
            .and_then(|k| super::tally::template_reason(k, r))
    };
    let file_of = |span: warplint_analyzer::ir::Span| match span.file {
        0 => path.to_string(),
        n => headers
            .get(n as usize - 1)
            .map_or_else(|| path.to_string(), |h| h.path.clone()),
    };
    let why = |reason: Option<&warplint_analyzer::finding::UnknownReason>| {
        reason
            .map(warplint_lints::wording::unknown_reason)
            .unwrap_or_default()
    };
    let mut notes: Vec<UnknownNote> = analysis
        .reports
        .iter()
        .filter_map(|r| match r.status {
            Status::Unknown => Some((r, r.unknown_reason.clone())),
            _ => held(r).map(|reason| (r, Some(reason))),
        })
        .map(|(r, reason)| UnknownNote {
            path: file_of(r.span),
            line: r.span.line,
            column: r.span.column,
            text: format!(
                "{} of `{}` in `{}` not analysed: {}",
                r.op.name(),
                r.array,
                r.kernel_name,
                why(reason.as_ref())
            ),
        })
        .collect();
    // The barriers (SY001) and branches (CF001) the engine could not
    // follow: once each per kernel.
    let control = analysis
        .barriers
        .iter()
        .map(|b| {
            (
                b.span,
                &b.kernel_name,
                &b.unknown_reason,
                format!("barrier `{}`", b.text),
                "which threads reach it",
            )
        })
        .chain(analysis.branches.iter().map(|b| {
            (
                b.span,
                &b.kernel_name,
                &b.unknown_reason,
                format!("branch on `{}`", b.text),
                "which side each thread takes",
            )
        }));
    let mut seen: Vec<(warplint_analyzer::ir::Span, &String)> = Vec::new();
    // Which threads take them is what is unknown, not an address.
    let control_why =
        |reason: &warplint_analyzer::finding::UnknownReason, unknown: &str| match reason {
            warplint_analyzer::finding::UnknownReason::DependsOn { origin, .. } => format!(
                "{unknown} depends on {}",
                warplint_lints::wording::origin(origin)
            ),
            other => warplint_lints::wording::unknown_reason(other),
        };
    for (span, kernel, reason, what, unknown) in control {
        let Some(reason) = reason else { continue };
        if seen.contains(&(span, kernel)) {
            continue;
        }
        seen.push((span, kernel));
        notes.push(UnknownNote {
            path: file_of(span),
            line: span.line,
            column: span.column,
            text: format!(
                "{what} in `{kernel}` not analysed: {}",
                control_why(reason, unknown)
            ),
        });
    }
    notes
}

/// Drops the diagnostics that `[lint.per-file-ignores]` ignores for `path`.
fn per_file_ignores(settings: &Settings, path: &str, diagnostics: &mut Vec<Diagnostic>) {
    let rel = path.trim_start_matches("./");
    for (glob, rules) in &settings.config.lint.per_file_ignores {
        let matched = globset::Glob::new(glob.trim_start_matches("./"))
            .map(|g| g.compile_matcher().is_match(rel))
            .unwrap_or(false);
        if matched {
            diagnostics.retain(|d| !rules.iter().any(|r| crate::suppress::matches(r, d)));
        }
    }
}

/// A label in another file than its diagnostic (a kernel's parameter
/// declared in the .cu, the access in a header it includes) cannot be
/// drawn in that file's snippet: it becomes a note naming its file. The
/// call an inlined access came through is named the same way.
fn related_elsewhere_as_notes(diagnostics: &mut [Diagnostic], path: &str, headers: &[Header]) {
    let paths: Vec<&str> = std::iter::once(path)
        .chain(headers.iter().map(|h| h.path.as_str()))
        .collect();
    for d in diagnostics {
        // The call an inlined access came through, named with its file.
        if let Some(i) = d.facts.inlined.as_mut() {
            let file = paths.get(i.call.file as usize).copied().unwrap_or("?");
            i.path = Some(absolute(Path::new(file)));
            let mut spans = vec![i.call];
            for o in &i.others {
                let f = paths.get(o.file as usize).copied().unwrap_or("?");
                i.other_paths.push(absolute(Path::new(f)));
                spans.push(*o);
            }
            // In source order.
            spans.sort_by_key(|c| (c.file, c.line, c.column));
            let calls: Vec<String> = spans
                .iter()
                .map(|c| {
                    let f = paths.get(c.file as usize).copied().unwrap_or("?");
                    format!("{f}:{}:{}", c.line, c.column)
                })
                .collect();
            let calls = match calls.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("the calls at {} and {last}", rest.join(", "))
                }
                _ => format!("the call at {}", calls.join("")),
            };
            d.notes.insert(
                0,
                format!(
                    "in `{}`, inlined into `{}` by {calls}",
                    i.callee, d.facts.kernel
                ),
            );
        }
        let (here, elsewhere): (Vec<_>, Vec<_>) = std::mem::take(&mut d.related)
            .into_iter()
            .partition(|r| r.span.file == d.span.file);
        d.related = here;
        for r in elsewhere {
            let file = paths.get(r.span.file as usize).copied().unwrap_or("?");
            d.notes.insert(
                0,
                format!("{} at {file}:{}:{}", r.message, r.span.line, r.span.column),
            );
        }
    }
}

/// The diagnostics in included headers, grouped by header, each header
/// with its text.
fn header_diagnostics(theirs: &[Diagnostic], headers: &[Header]) -> Vec<FileDiagnostics> {
    let mut out = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let ds: Vec<Diagnostic> = theirs
            .iter()
            .filter(|d| d.span.file as usize == i + 1)
            .cloned()
            .collect();
        if !ds.is_empty() {
            out.push(FileDiagnostics {
                path: h.path.clone(),
                abs_path: absolute(Path::new(&h.path)),
                source: String::from_utf8_lossy(&h.text).into_owned(),
                diagnostics: ds,
            });
        }
    }
    out
}

/// Analyses and lints one source; suppressed diagnostics are dropped. Also
/// returns the file's own suppression comments, with what each suppressed.
pub(super) fn lint(
    bytes: &[u8],
    options: &warplint_analyzer::Options,
    arch: warplint_analyzer::Arch,
    thresholds: &warplint_lints::Thresholds,
    model: &dyn MemoryModel,
    selected: &Selected,
) -> (FileAnalysis, Vec<Diagnostic>, Suppressions) {
    let analysis = analyze(bytes, model, options);
    let ctx = Context {
        source: bytes,
        analysis: &analysis,
        model,
        options,
        arch,
        thresholds,
    };
    // Suppressions are read from the file each diagnostic is in, only for
    // the headers that have one (a file includes megabytes of headers).
    let mut suppressions: Vec<Option<Suppressions>> = Vec::new();
    suppressions.resize_with(options.frontend.headers.len() + 1, || None);
    suppressions[0] = Some(Suppressions::parse(&String::from_utf8_lossy(bytes)));
    let diagnostics = warplint_lints::check(&ctx, selected)
        .into_iter()
        .filter(|d| {
            let i = d.span.file as usize;
            let text = match i {
                0 => Some(bytes),
                _ => options
                    .frontend
                    .headers
                    .get(i - 1)
                    .map(|h| h.text.as_slice()),
            };
            let (Some(slot), Some(text)) = (suppressions.get_mut(i), text) else {
                return true;
            };
            let s = slot.get_or_insert_with(|| Suppressions::parse(&String::from_utf8_lossy(text)));
            !s.suppresses(d)
        })
        .collect();
    let own = suppressions.swap_remove(0).unwrap_or_default();
    (analysis, diagnostics, own)
}
