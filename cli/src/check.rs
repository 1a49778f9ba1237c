//! `warplint check`: lint files, print diagnostics, exit 0/1/2.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use warplint_analyzer::ir::Space;
use warplint_analyzer::{analyze, FileAnalysis, MemoryModel, Status};
use warplint_lints::{Applicability, Context, Diagnostic};

use crate::render::{self, FileDiagnostics};
use crate::settings::{self, ConfigArgs, Settings};
use crate::suppress::Suppressions;
use crate::{discover, fail, Format};

pub struct CheckArgs {
    pub paths: Vec<PathBuf>,
    pub select: Vec<String>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub format: Format,
    pub exit_zero: bool,
    pub arch: Vec<String>,
    pub statistics: bool,
    pub show_settings: bool,
    pub quiet: bool,
    pub stdin_filename: Option<String>,
    pub show_unknown: bool,
    pub fix: bool,
    pub unsafe_fixes: bool,
    pub diff: bool,
    pub exclude: Vec<String>,
    pub force_exclude: bool,
    pub jobs: Option<usize>,
    pub model: crate::settings::ModelFlags,
    pub config: ConfigArgs,
}

/// An unknown result, for `--show-unknown`.
struct UnknownNote {
    path: String,
    line: u32,
    column: u32,
    text: String,
}

type Selected = std::collections::BTreeSet<&'static str>;

/// A configuration file (or none), with what it resolves to.
type Resolved = (Option<PathBuf>, Settings, Selected, Box<dyn MemoryModel>);

/// What checking one input produced (built on a worker thread).
#[derive(Default)]
struct Outcome {
    file: Option<FileDiagnostics>,
    unknowns: Vec<UnknownNote>,
    diff: String,
    fixed: usize,
    /// Fixed source of stdin, printed instead of written.
    stdin_fixed: Option<Vec<u8>>,
    errors: Vec<String>,
    summary: warplint_analyzer::Summary,
    /// Diagnostics in headers the file includes.
    headers: Vec<FileDiagnostics>,
    /// Kernels this file's analysis lowered from headers: (canonical header
    /// path, byte extent in the header).
    covered: Vec<(PathBuf, usize, usize)>,
    /// Kernels defined in the file itself: (display name, byte offset).
    own_kernels: Vec<(String, usize)>,
}

struct Input {
    path: String,
    abs: String,
    /// The text of stdin; a file is read by the worker that checks it, so
    /// a run holds only the files (and headers) being checked at the time.
    stdin_bytes: Option<Vec<u8>>,
    stdin: bool,
    /// A path given or found that cannot be checked, and why.
    error: Option<String>,
}

pub fn run(args: CheckArgs) -> std::process::ExitCode {
    let settings = match settings::resolve_with(&args.config, &args.arch, args.model.clone()) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let selected = match settings.selection(
        &settings::split_list(&args.select),
        &settings::split_list(&args.extend_select),
        &settings::split_list(&args.ignore),
    ) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if args.show_settings {
        println!("{}", show_settings(&settings, &selected));
        return std::process::ExitCode::SUCCESS;
    }
    let inputs = match gather_inputs(&args, &settings) {
        Ok(i) => i,
        Err(code) => return code,
    };
    // The nearest configuration to each file wins (unless --config/--isolated).
    let mut table: Vec<Resolved> = Vec::new();
    let mut which: Vec<usize> = Vec::new();
    for input in &inputs {
        let nearest = if args.config.config.is_some()
            || args.config.isolated
            || input.stdin
            || input.error.is_some()
        {
            settings.config_path.clone()
        } else {
            Path::new(&input.abs)
                .parent()
                .and_then(crate::config::discover)
        };
        let idx = match table.iter().position(|t| t.0 == nearest) {
            Some(i) => i,
            None => {
                let cfg = ConfigArgs {
                    config: nearest.clone(),
                    isolated: nearest.is_none(),
                };
                let s = if nearest == settings.config_path {
                    settings::resolve_with(&args.config, &args.arch, args.model.clone())
                } else {
                    settings::resolve_with(&cfg, &args.arch, args.model.clone())
                };
                let s = match s {
                    Ok(s) => s,
                    Err(e) => return fail(&e),
                };
                let sel = match s.selection(
                    &settings::split_list(&args.select),
                    &settings::split_list(&args.extend_select),
                    &settings::split_list(&args.ignore),
                ) {
                    Ok(x) => x,
                    Err(e) => return fail(&e),
                };
                let model = match s.model(s.arch) {
                    Ok(m) => m,
                    Err(e) => return fail(&e),
                };
                table.push((nearest, s, sel, model));
                table.len() - 1
            }
        };
        which.push(idx);
    }
    let pool = match crate::worker_pool(args.jobs) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let project = crate::includes::ProjectHeaders::new(&args.paths);
    let progress = crate::progress::Progress::new(inputs.len(), args.format);
    let outcomes: Vec<Outcome> = pool.install(|| {
        use rayon::prelude::*;
        inputs
            .into_par_iter()
            .zip(which)
            .map(|(mut input, i)| {
                let (_, s, sel, model) = &table[i];
                // A file that cannot be read (gone since discovery, no
                // permission) is an error for that file; the rest go on.
                let read = match (input.error.take(), input.stdin_bytes.take()) {
                    (Some(e), _) => Err(e),
                    (None, Some(b)) => Ok(b),
                    (None, None) => crate::includes::read_source(Path::new(&input.path))
                        .map_err(|e| format!("{}: {e}", input.path)),
                };
                let o = match read {
                    Ok(bytes) => {
                        let headers = crate::includes::headers_for(
                            Path::new(&input.path),
                            &bytes,
                            &s.include_dirs,
                            s.project_includes.then_some(&project),
                        );
                        check_one(input, bytes, headers, &args, s, model.as_ref(), sel)
                    }
                    Err(e) => Outcome {
                        errors: vec![e],
                        ..Outcome::default()
                    },
                };
                progress.tick();
                o
            })
            .collect()
    });
    progress.finish();
    // A kernel in a header that a file of the run includes and analyses
    // (with its launches and macros) is reported from there only: the
    // header's own analysis, with an assumed launch, keeps just the kernels
    // no including file reached.
    let mut covered: std::collections::HashMap<PathBuf, Vec<(usize, usize)>> =
        std::collections::HashMap::new();
    for o in &outcomes {
        for (p, start, end) in &o.covered {
            covered.entry(p.clone()).or_default().push((*start, *end));
        }
    }
    let mut outcomes = outcomes;
    for o in &mut outcomes {
        let Some(f) = o.file.as_mut() else { continue };
        let Some(ranges) = covered.get(&crate::includes::canonical(Path::new(&f.abs_path))) else {
            continue;
        };
        // Kernels defined in this file that an including file analysed.
        let gone: Vec<&String> = o
            .own_kernels
            .iter()
            .filter(|(_, at)| ranges.iter().any(|(a, b)| a <= at && at < b))
            .map(|(name, _)| name)
            .collect();
        let keep = |d: &Diagnostic| !gone.contains(&&d.facts.kernel);
        f.diagnostics.retain(keep);
        for h in &mut o.headers {
            h.diagnostics.retain(keep);
        }
    }
    let mut results = Vec::new();
    let mut unknowns = Vec::new();
    let mut diffs = String::new();
    let mut fixed = 0usize;
    let mut had_error = false;
    let mut summary = warplint_analyzer::Summary::default();
    for o in outcomes {
        summary.add(&o.summary);
        for e in &o.errors {
            eprintln!("warplint: error: {e}");
        }
        had_error |= !o.errors.is_empty();
        if let Some(b) = &o.stdin_fixed {
            print!("{}", String::from_utf8_lossy(b));
        }
        diffs.push_str(&o.diff);
        fixed += o.fixed;
        unknowns.extend(o.unknowns);
        results.extend(o.file);
        // A header's diagnostics once, however many files include it.
        for h in o.headers {
            match results.iter_mut().find(|r| r.abs_path == h.abs_path) {
                Some(r) => {
                    if r.source.is_empty() {
                        r.source = h.source;
                    }
                    for d in h.diagnostics {
                        if !r
                            .diagnostics
                            .iter()
                            .any(|x| x.span == d.span && x.code == d.code && x.message == d.message)
                        {
                            r.diagnostics.push(d);
                        }
                    }
                    r.diagnostics
                        .sort_by(|a, b| (a.span.start, a.code).cmp(&(b.span.start, b.code)));
                }
                None => results.push(h),
            }
        }
    }
    results.sort_by(|a, b| a.path.cmp(&b.path));
    if args.diff {
        print!("{diffs}");
        return if had_error {
            std::process::ExitCode::from(2)
        } else if diffs.is_empty() {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::from(1)
        };
    }
    let count: usize = results.iter().map(|f| f.diagnostics.len()).sum();
    let human = matches!(args.format, Format::Full | Format::Concise);
    let out = if args.statistics {
        statistics(&results, args.format, &summary)
    } else {
        match args.format {
            Format::Full => render::full(&results),
            Format::Concise => render::concise(&results),
            Format::Json => render::json_array(&results),
            Format::JsonLines => render::json_lines(&results),
            Format::Github => render::github(&results),
            Format::Sarif => crate::sarif::render(&results, &selected),
        }
    };
    print!("{out}");
    if human && !args.quiet {
        for u in &unknowns {
            println!("{}:{}:{}: unknown: {}", u.path, u.line, u.column, u.text);
        }
        if fixed > 0 {
            println!(
                "Fixed {fixed} diagnostic{} (each re-checked by the engine).",
                if fixed == 1 { "" } else { "s" }
            );
        }
        if count == 0 {
            println!("All checks passed!");
        } else {
            println!(
                "Found {count} diagnostic{}.",
                if count == 1 { "" } else { "s" }
            );
            let fixable = |a: Applicability| {
                results
                    .iter()
                    .flat_map(|f| &f.diagnostics)
                    .filter(|d| d.fix.as_ref().is_some_and(|x| x.applicability == a))
                    .count()
            };
            let (safe, unsafe_) = (fixable(Applicability::Safe), fixable(Applicability::Unsafe));
            if safe > 0 {
                println!("[*] {safe} fixable with the `--fix` option.");
            }
            if unsafe_ > 0 && !args.unsafe_fixes {
                println!(
                    "[*] {unsafe_} fixable with `--fix --unsafe-fixes` (padding changes the shared-memory footprint)."
                );
            }
        }
    }
    if had_error {
        std::process::ExitCode::from(2)
    } else if count > 0 && !args.exit_zero {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// Files (discovered, excluded; read later, one by one) and stdin.
fn gather_inputs(
    args: &CheckArgs,
    settings: &Settings,
) -> Result<Vec<Input>, std::process::ExitCode> {
    let mut inputs = Vec::new();
    let stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            return Err(fail(&format!("stdin: {e}")));
        }
        let name = args.stdin_filename.clone().unwrap_or_else(|| "-".into());
        inputs.push(Input {
            abs: absolute(Path::new(&name)),
            path: name,
            stdin_bytes: Some(buf),
            stdin: true,
            error: None,
        });
    }
    let paths: Vec<PathBuf> = args
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    if paths.is_empty() && stdin {
        return Ok(inputs);
    }
    let paths = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    };
    let mut globs = settings.config.exclude.clone();
    globs.extend(settings::split_list(&args.exclude));
    let set = discover::excludes(&globs).map_err(|e| fail(&e))?;
    // A path that cannot be walked or read is an error of its own (said
    // at the end, exit code 2); the others are still checked.
    let (files, errors) = discover::filter(&paths, &set, args.force_exclude);
    inputs.extend(errors.into_iter().map(|e| Input {
        path: String::new(),
        abs: String::new(),
        stdin_bytes: None,
        stdin: false,
        error: Some(e),
    }));
    for f in files {
        inputs.push(Input {
            path: f.display().to_string(),
            abs: absolute(&f),
            stdin_bytes: None,
            stdin: false,
            error: None,
        });
    }
    Ok(inputs)
}

#[allow(clippy::too_many_arguments)]
fn check_one(
    input: Input,
    mut bytes: Vec<u8>,
    headers: Vec<warplint_analyzer::Header>,
    args: &CheckArgs,
    settings: &Settings,
    model: &dyn MemoryModel,
    selected: &std::collections::BTreeSet<&'static str>,
) -> Outcome {
    let Input {
        path, abs, stdin, ..
    } = input;
    let mut o = Outcome::default();
    let mut options = settings.options.clone();
    options.frontend.headers = headers;
    let (analysis, mut diagnostics) = lint(
        &bytes,
        &options,
        settings.arch,
        &settings.thresholds,
        model,
        selected,
    );
    o.summary = analysis.summary();
    // Each header's canonical path once (a file system call), not per kernel.
    let mut canonical: Vec<Option<PathBuf>> = vec![None; options.frontend.headers.len()];
    for k in &analysis.program.kernels {
        if k.extent.file == 0 {
            o.own_kernels.push((k.display_name.clone(), k.extent.start));
            continue;
        }
        let i = k.extent.file as usize - 1;
        let (Some(h), Some(slot)) = (options.frontend.headers.get(i), canonical.get_mut(i)) else {
            continue;
        };
        let path = slot.get_or_insert_with(|| crate::includes::canonical(Path::new(&h.path)));
        o.covered.push((path.clone(), k.extent.start, k.extent.end));
    }
    if settings.archs.len() > 1 {
        diagnostics = across_archs(&bytes, &options, settings, selected, diagnostics);
    }
    if analysis.program.notes.iter().any(|n| n.span.line == 0) {
        for n in &analysis.program.notes {
            o.errors.push(format!("{path}: {}", n.message));
        }
        return o;
    }
    if args.show_unknown {
        for r in analysis
            .reports
            .iter()
            .filter(|r| r.status == Status::Unknown)
        {
            o.unknowns.push(UnknownNote {
                path: path.clone(),
                line: r.span.line,
                column: r.span.column,
                text: format!(
                    "{} of `{}` in `{}` not analysed: {}",
                    r.op.name(),
                    r.array,
                    r.kernel_name,
                    r.unknown_reason.clone().unwrap_or_default()
                ),
            });
        }
    }
    drop(analysis);
    if args.fix || args.diff {
        let relint = |b: &[u8]| {
            lint(
                b,
                &options,
                settings.arch,
                &settings.thresholds,
                model,
                selected,
            )
            .1
        };
        let (new, n) = crate::fix::fix_source(&bytes, &diagnostics, args.unsafe_fixes, &relint);
        if n > 0 {
            if args.diff {
                o.diff = crate::fix::unified_diff(
                    &path,
                    &String::from_utf8_lossy(&bytes),
                    &String::from_utf8_lossy(&new),
                );
            } else {
                if stdin {
                    o.stdin_fixed = Some(new.clone());
                } else if let Err(e) = crate::fix::write_atomically(Path::new(&path), &new) {
                    o.errors
                        .push(format!("{path}: could not write the fix: {e}"));
                    return o;
                }
                let before = diagnostics.len();
                diagnostics = lint(
                    &new,
                    &options,
                    settings.arch,
                    &settings.thresholds,
                    model,
                    selected,
                )
                .1;
                o.fixed = before.saturating_sub(diagnostics.len()).max(n);
                bytes = new;
            }
        }
    }
    let rel = path.trim_start_matches("./");
    for (glob, rules) in &settings.config.lint.per_file_ignores {
        let matched = globset::Glob::new(glob.trim_start_matches("./"))
            .map(|g| g.compile_matcher().is_match(rel))
            .unwrap_or(false);
        if matched {
            diagnostics.retain(|d| !rules.iter().any(|r| crate::suppress::matches(r, d)));
        }
    }
    // A label in another file than its diagnostic (a kernel's parameter
    // declared in the .cu, the access in a header it includes) cannot be
    // drawn in that file's snippet: it becomes a note naming its file.
    let paths: Vec<&str> = std::iter::once(path.as_str())
        .chain(options.frontend.headers.iter().map(|h| h.path.as_str()))
        .collect();
    for d in &mut diagnostics {
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
    // Diagnostics in included headers are reported against the header.
    let (mine, theirs): (Vec<Diagnostic>, Vec<Diagnostic>) =
        diagnostics.into_iter().partition(|d| d.span.file == 0);
    for (i, h) in options.frontend.headers.iter().enumerate() {
        let ds: Vec<Diagnostic> = theirs
            .iter()
            .filter(|d| d.span.file as usize == i + 1)
            .cloned()
            .collect();
        if !ds.is_empty() {
            o.headers.push(FileDiagnostics {
                path: h.path.clone(),
                abs_path: absolute(Path::new(&h.path)),
                source: String::from_utf8_lossy(&h.text).into_owned(),
                diagnostics: ds,
            });
        }
    }
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

/// Diagnostics for every selected architecture, one per site: the
/// architectures where the outcome is the same are named together, the
/// others' outcomes follow ("… — 16-way on sm_35 (4-byte banks)").
fn across_archs(
    bytes: &[u8],
    options: &warplint_analyzer::Options,
    settings: &Settings,
    selected: &std::collections::BTreeSet<&'static str>,
    first: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    // The model settings that matter for a rule's memory space.
    let label = |a: &warplint_analyzer::Arch, code: &str| {
        let space = if code.starts_with("SM") {
            Space::Shared
        } else {
            Space::Global
        };
        match settings.model(*a).ok().and_then(|m| m.mode(space)) {
            Some(mode) => format!("{a} ({mode})"),
            None => a.to_string(),
        }
    };
    let mut per_arch: Vec<(warplint_analyzer::Arch, Vec<Diagnostic>)> =
        vec![(settings.archs[0], first)];
    for a in &settings.archs[1..] {
        let Ok(model) = settings.model(*a) else {
            continue;
        };
        let diagnostics = lint(
            bytes,
            options,
            *a,
            &settings.thresholds,
            model.as_ref(),
            selected,
        );
        per_arch.push((*a, diagnostics.1));
    }
    type Site = (&'static str, warplint_analyzer::ir::Span, String, String);
    let site = |d: &Diagnostic| -> Site {
        (
            d.code,
            d.span,
            d.facts.kernel.clone(),
            d.facts.array.clone(),
        )
    };
    let outcome = |d: &Diagnostic| match (d.facts.max_ways, d.facts.sectors) {
        (Some(w), _) => format!("{}-way", warplint_lints::fmt_num(w)),
        (_, Some(s)) => format!("{} sectors", warplint_lints::fmt_num(s)),
        _ => d.message.clone(),
    };
    let mut sites: Vec<Site> = Vec::new();
    for (_, ds) in &per_arch {
        for d in ds {
            if !sites.contains(&site(d)) {
                sites.push(site(d));
            }
        }
    }
    let mut out = Vec::new();
    for key in sites {
        // (outcome, architectures, a diagnostic with that outcome)
        let mut groups: Vec<(String, Vec<String>, Option<&Diagnostic>)> = Vec::new();
        for (arch, ds) in &per_arch {
            let d = ds.iter().find(|d| site(d) == key);
            let o = d.map(outcome).unwrap_or_else(|| "clean".into());
            let name = label(arch, key.0);
            match groups.iter_mut().find(|g| g.0 == o) {
                Some(g) => g.1.push(name),
                None => groups.push((o, vec![name], d)),
            }
        }
        let Some(primary) = groups.iter().position(|g| g.2.is_some()) else {
            continue;
        };
        let (_, archs, d) = &groups[primary];
        let Some(d) = d else { continue };
        let mut m = (*d).clone();
        let names = archs.join(", ");
        if m.message.contains(&d.facts.arch) {
            m.message = m.message.replacen(&d.facts.arch, &names, 1);
        } else {
            m.message = format!("{} on {names}", m.message);
        }
        // Machine outputs name the architectures without their modes.
        m.facts.arch = names;
        let others: Vec<String> = groups
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != primary)
            .map(|(_, (o, a, _))| format!("{o} on {}", a.join(", ")))
            .collect();
        if !others.is_empty() {
            m.message = format!("{} — {}", m.message, others.join("; "));
        }
        out.push(m);
    }
    out.sort_by(|a, b| (a.span.start, a.code, &a.message).cmp(&(b.span.start, b.code, &b.message)));
    out
}

/// Analyses and lints one source; suppressed diagnostics are dropped.
fn lint(
    bytes: &[u8],
    options: &warplint_analyzer::Options,
    arch: warplint_analyzer::Arch,
    thresholds: &warplint_lints::Thresholds,
    model: &dyn MemoryModel,
    selected: &std::collections::BTreeSet<&'static str>,
) -> (FileAnalysis, Vec<Diagnostic>) {
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
    // the files that have one (a file includes megabytes of headers).
    let mut suppressions: Vec<Option<Suppressions>> = Vec::new();
    suppressions.resize_with(options.frontend.headers.len() + 1, || None);
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
    (analysis, diagnostics)
}

fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .map(|a| a.display().to_string())
        .unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p).display().to_string())
                .unwrap_or_else(|_| p.display().to_string())
        })
}

fn statistics(
    results: &[FileDiagnostics],
    format: Format,
    sum: &warplint_analyzer::Summary,
) -> String {
    let mut by: BTreeMap<&str, (usize, &str, usize)> = BTreeMap::new();
    for d in results.iter().flat_map(|f| &f.diagnostics) {
        let e = by.entry(d.code).or_insert((0, d.name, 0));
        e.0 += 1;
        if d.fix.is_some() {
            e.2 += 1;
        }
    }
    let mut rows: Vec<_> = by.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    if matches!(format, Format::Json | Format::JsonLines) {
        let v: Vec<_> = rows
            .iter()
            .map(|(code, (n, name, fixable))| {
                serde_json::json!({"code": code, "name": name, "count": n,
                    "fixable": *fixable > 0, "fixable_count": fixable,
                    "url": warplint_lints::find(code).map(|r| r.url())})
            })
            .collect();
        let doc = serde_json::json!({
            "rules": v,
            "summary": {
                "files": sum.files, "kernels": sum.kernels, "kernels_with_notes": sum.kernels_with_notes,
                "accesses": sum.accesses, "exact": sum.exact, "assumed": sum.assumed, "unknown": sum.unknown,
            },
        });
        return serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for (code, (n, name, fixable)) in rows {
        let mark = if fixable > 0 { "[*]" } else { "[ ]" };
        out.push_str(&format!("{n}\t{code}\t{mark} {name}\n"));
    }
    out.push_str(&format!(
        "{} files, {} kernels ({} with notes), {} accesses: {} exact, {} assumed, {} unknown\n",
        sum.files,
        sum.kernels,
        sum.kernels_with_notes,
        sum.accesses,
        sum.exact,
        sum.assumed,
        sum.unknown
    ));
    out
}

fn show_settings(s: &Settings, selected: &std::collections::BTreeSet<&str>) -> String {
    let e = &s.options.engine;
    let mut out = String::new();
    out.push_str(&format!(
        "config file: {}\n",
        s.config_path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(none)".into())
    ));
    out.push_str(&format!(
        "arch: {}\n",
        s.archs
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "select: {}\n",
        selected.iter().copied().collect::<Vec<_>>().join(", ")
    ));
    out.push_str(&format!("default-block: {:?}\n", e.default_block));
    out.push_str(&format!("default-block-2d: {:?}\n", e.default_block_2d));
    out.push_str(&format!("default-grid: {:?}\n", e.default_grid));
    out.push_str(&format!("default-param: {}\n", e.default_param));
    let t = &s.thresholds;
    out.push_str(&format!(
        "thresholds: shared-ways-warning = {}, shared-ways-error = {}, global-efficiency-warning = {}, global-efficiency-error = {}\n",
        t.shared_ways_warning, t.shared_ways_error, t.global_efficiency_warning, t.global_efficiency_error
    ));
    for (k, o) in &s.options.frontend.kernels {
        out.push_str(&format!(
            "kernel.{k}: block {:?}, grid {:?}, params {:?}\n",
            o.block, o.grid, o.params
        ));
    }
    out.trim_end().to_string()
}
