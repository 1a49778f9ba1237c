//! `warplint check`: lint files, print diagnostics, exit 0/1/2.
//!
//! The driver: settings and inputs ([`inputs`]), every input checked on the
//! worker pool ([`file`]; several `--arch`es merged in [`archs`]), the
//! outcomes merged (kernels reported once, headers' diagnostics once), then
//! printed ([`summary`]). Workers print nothing: what a file produced is
//! printed by the driver and `summary`, in the order of the inputs.

mod archs;
mod file;
mod inputs;
mod summary;
mod tally;

use std::path::PathBuf;
use std::process::ExitCode;

use warplint_lints::Diagnostic;

use crate::includes::ProjectHeaders;
use crate::project::LaunchIndex;
use crate::render::FileDiagnostics;
use crate::settings::{self, ConfigArgs};
use crate::{fail, Format};
use file::{Outcome, UnknownNote};
use inputs::Resolved;
pub use inputs::{gather, Input};

pub struct CheckArgs {
    pub paths: Vec<PathBuf>,
    pub select: Vec<String>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub format: Format,
    pub exit_zero: bool,
    pub color: crate::render::ColorChoice,
    pub arch: Vec<String>,
    pub statistics: bool,
    pub show_settings: bool,
    pub quiet: bool,
    pub stdin_filename: Option<String>,
    pub show_unknown: bool,
    pub only_proven: bool,
    pub fix: bool,
    pub unsafe_fixes: bool,
    pub diff: bool,
    pub add_noqa: bool,
    pub exclude: Vec<String>,
    pub force_exclude: bool,
    pub jobs: Option<usize>,
    /// `--no-cache`: neither read nor write the results cache.
    pub no_cache: bool,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    pub model: crate::settings::ModelFlags,
    pub config: ConfigArgs,
    /// The text checked as `-` (the language server's buffer); `None`
    /// reads stdin.
    pub stdin_text: Option<Vec<u8>>,
    /// Keep what hover shows of each access of the files run ([`Merged::hovers`]).
    pub keep_hovers: bool,
    /// Header parses and preprocessing kept from earlier runs (the language
    /// server's, across edits); `None`: one cache per configuration and run.
    /// Keyed by text and macro state, so sharing changes no answer.
    pub parse_cache: Option<std::sync::Arc<warplint_analyzer::frontend::cache::ParseCache>>,
}

/// Every outcome of a run put together, files in path order.
pub struct Merged {
    pub results: Vec<FileDiagnostics>,
    unknowns: Vec<UnknownNote>,
    diffs: String,
    fixed: usize,
    had_error: bool,
    /// Errors (`true`) and warnings for stderr, in the order of the inputs.
    pub messages: Vec<(bool, String)>,
    /// stdin's source under `--fix`, the only thing then on stdout.
    pub stdin_fixed: Option<Vec<u8>>,
    /// `keep_hovers`: each access of the run's files, as hover shows it.
    pub hovers: Vec<crate::hover::HoverEntry>,
    /// `--only-proven`: findings left out for resting on an assumption.
    left_out_assumed: usize,
    /// Suppression comments that name no rule or suppressed nothing (the
    /// file's absolute path, the comment).
    pub idle: Vec<(String, crate::suppress::Idle)>,
    tally: tally::Tally,
}

/// Runs `warplint check`; the exit code is 0 (clean), 1 (diagnostics) or
/// 2 (errors).
pub fn run(args: CheckArgs) -> ExitCode {
    match check(&args) {
        Ok(code) | Err(code) => code,
    }
}

/// The whole run; `Err` is an error that stops it (already said).
fn check(args: &CheckArgs) -> Result<ExitCode, ExitCode> {
    refuse_unsupported(args).map_err(|e| fail(&e))?;
    let settings = settings::resolve_with(&args.config, &args.arch, args.model.clone())
        .map_err(|e| fail(&e))?;
    let selected = inputs::selection(&settings, args).map_err(|e| fail(&e))?;
    if args.show_settings {
        // What the first path is checked with: its nearest configuration.
        let shown = match inputs::nearest_config(args) {
            Some(config) => {
                let config = ConfigArgs {
                    config: Some(config),
                    isolated: false,
                };
                settings::resolve_with(&config, &args.arch, args.model.clone())
                    .map_err(|e| fail(&e))?
            }
            None => settings,
        };
        let selected = inputs::selection(&shown, args).map_err(|e| fail(&e))?;
        println!("{}", summary::show_settings(&shown, &selected));
        return Ok(ExitCode::SUCCESS);
    }
    for w in settings::ignored_flags(&settings, &args.model) {
        eprintln!("warplint: warning: {w}");
    }
    let inputs = inputs::gather(args, &settings)?;
    if inputs.is_empty() {
        // As ruff does: a warning, and exit 0.
        eprintln!(
            "warplint: warning: no CUDA files found in {}",
            inputs::shown_paths(args)
        );
    }
    let pool = crate::worker_pool(args.jobs).map_err(|e| fail(&e))?;
    let project = crate::includes::ProjectHeaders::new(&args.paths);
    let merged = run_inputs(args, &settings, inputs, &pool, &project).map_err(|e| fail(&e))?;
    project.warn_if_truncated();
    for (error, m) in &merged.messages {
        let level = if *error { "error" } else { "warning" };
        eprintln!("warplint: {level}: {m}");
    }
    if let Some(b) = &merged.stdin_fixed {
        use std::io::Write as _;
        let _ = std::io::stdout().write_all(b);
    }
    if args.diff {
        return Ok(summary::print_diff(args, &merged));
    }
    if args.add_noqa {
        return Ok(add_noqa(&merged));
    }
    Ok(summary::print(args, &merged, &selected))
}

/// Checks `inputs` with their project's launches and contexts, on `pool`;
/// prints nothing (what the command line or the language server shows of
/// it is theirs to say). `Err` is an error that stops the run.
pub fn run_inputs(
    args: &CheckArgs,
    settings: &settings::Settings,
    inputs: Vec<Input>,
    pool: &rayon::ThreadPool,
    project: &ProjectHeaders,
) -> Result<Merged, String> {
    // stdin named as a file finds its compile database as that file does.
    let mut starts = args.paths.clone();
    starts.extend(args.stdin_filename.as_ref().map(PathBuf::from));
    let db = crate::compile_db::find(&starts, args.model.compile_commands.as_deref())?;
    let mut table = Vec::new();
    let mut which = inputs::configurations(args, settings, &inputs, db.as_ref(), &mut table)?;
    // Runs that write files, or keep what no entry holds, use no cache.
    let cache = (!(args.no_cache || args.fix || args.diff || args.add_noqa || args.keep_hovers)
        && settings.sass.is_none())
    .then(|| crate::cache::Cache::open(args.cache_dir.as_deref(), settings));
    let index = launch_index(&inputs, &table, &which, project, pool, cache.as_ref());
    // A run file that only other files of its project include is also
    // checked as they include it.
    let contexts = inputs::contexts(&inputs, &index);
    which.extend(inputs::configurations(
        args,
        settings,
        &contexts,
        db.as_ref(),
        &mut table,
    )?);
    let mut inputs = inputs;
    inputs.extend(contexts);
    let run = Run {
        table: &table,
        pool,
        project,
        index: &index,
        cache: cache.as_ref(),
    };
    let mut outcomes = check_all(args, inputs, which, &run);
    report_kernels_once(&mut outcomes, &index);
    let left_out = if args.only_proven {
        only_proven(&mut outcomes)
    } else {
        0
    };
    let mut merged = merge(outcomes);
    merged.left_out_assumed = left_out;
    Ok(merged)
}

/// `--add-noqa`: every line with a diagnostic acknowledged in its file.
fn add_noqa(merged: &Merged) -> ExitCode {
    use std::collections::{BTreeMap, BTreeSet};
    let (mut lines, mut files, mut failed) = (0, 0, merged.had_error);
    for f in &merged.results {
        let mut codes: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
        for d in &f.diagnostics {
            codes.entry(d.span.line).or_default().insert(d.code);
        }
        if codes.is_empty() {
            continue;
        }
        let path = std::path::Path::new(&f.abs_path);
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("warplint: error: {}: {e}", f.path);
                failed = true;
                continue;
            }
        };
        let added = crate::noqa::add(&text, &codes);
        for l in &added.skipped {
            eprintln!(
                "warplint: warning: {}:{l}: not acknowledged: a comment there would change the code (a macro continuation or a block comment)",
                f.path
            );
        }
        if added.lines == 0 {
            continue;
        }
        if let Err(e) = crate::fix::write_atomically(path, added.text.as_bytes()) {
            eprintln!("warplint: error: {}: {e}", f.path);
            failed = true;
            continue;
        }
        lines += added.lines;
        files += 1;
    }
    println!(
        "Added {lines} suppression comment{} in {files} file{}.",
        if lines == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" }
    );
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// Options that do nothing with the output format chosen are refused
/// rather than ignored.
fn refuse_unsupported(args: &CheckArgs) -> Result<(), String> {
    let human = matches!(args.format, Format::Full | Format::Concise);
    let name = format!("{:?}", args.format).to_lowercase();
    if args.show_unknown && !human {
        return Err(format!(
            "--show-unknown lists unknown accesses in the full and concise formats, not in {name}; \
             `warplint report --format json` gives every access with its status and reason"
        ));
    }
    if args.add_noqa && args.paths.iter().any(|p| p.as_os_str() == "-") {
        return Err("--add-noqa writes the files it checks; stdin has none".into());
    }
    if args.statistics && matches!(args.format, Format::Sarif | Format::Github) {
        return Err(format!(
            "--statistics prints a table (full, concise) or JSON (json, json-lines), not {name}; \
             SARIF always carries the counts in runs[0].properties.summary"
        ));
    }
    Ok(())
}

/// The launch sites of the inputs and the rest of their projects.
fn launch_index(
    inputs: &[Input],
    table: &[Resolved],
    which: &[usize],
    project: &ProjectHeaders,
    pool: &rayon::ThreadPool,
    cache: Option<&crate::cache::Cache>,
) -> LaunchIndex {
    let sources = inputs
        .iter()
        .zip(which)
        .filter(|(input, _)| input.error.is_none())
        .map(|(input, i)| crate::project::Source {
            path: PathBuf::from(&input.path),
            bytes: input.stdin_bytes.clone(),
            settings: &table[*i].settings,
        })
        .collect();
    let index = pool.install(|| LaunchIndex::build(sources, project, cache));
    index.warn_if_full();
    index
}

/// What every input of a run is checked with.
struct Run<'a> {
    table: &'a [Resolved],
    pool: &'a rayon::ThreadPool,
    project: &'a ProjectHeaders,
    index: &'a LaunchIndex,
    cache: Option<&'a crate::cache::Cache>,
}

/// Checks every input on the worker pool (`-j`), with a progress bar.
fn check_all(args: &CheckArgs, inputs: Vec<Input>, which: Vec<usize>, run: &Run) -> Vec<Outcome> {
    let progress = crate::progress::Progress::new(inputs.len(), args.format);
    let outcomes: Vec<Outcome> = run.pool.install(|| {
        use rayon::prelude::*;
        inputs
            .into_par_iter()
            .zip(which)
            .map(|(input, i)| {
                let o = file::check_input(
                    input,
                    args,
                    &run.table[i],
                    run.project,
                    run.index,
                    run.cache,
                );
                progress.tick();
                o
            })
            .collect()
    });
    progress.finish();
    outcomes
}

/// A kernel that a unit with more of the build's context analysed is
/// reported from there only ([`crate::project::Covered`]): a file's own
/// kernel from a file that includes it (with its macros and launches), a
/// header's kernel from a file that includes the file that includes it.
fn report_kernels_once(outcomes: &mut [Outcome], index: &LaunchIndex) {
    let covered =
        crate::project::Covered::new(outcomes.iter().map(|o| (&o.unit, o.covered.as_slice())));
    for o in outcomes {
        let Some(f) = o.file.as_mut() else { continue };
        let kernels = o.kernels.iter().map(|k| (k.own_at, k.from.as_ref()));
        let superseded = covered.superseded(index, &o.unit, kernels);
        let gone: Vec<String> = o
            .kernels
            .iter()
            .zip(&superseded)
            .filter(|(_, s)| **s)
            .map(|(k, _)| k.name.clone())
            .collect();
        let mut i = 0;
        o.kernels.retain(|_| {
            i += 1;
            !superseded[i - 1]
        });
        let keep = |d: &Diagnostic| !gone.contains(&d.facts.kernel);
        f.diagnostics.retain(keep);
        for h in &mut o.headers {
            h.diagnostics.retain(keep);
        }
    }
}

/// `--only-proven`: findings that rest on an assumption are left out;
/// returns how many (a header's counted as often as it is reached).
fn only_proven(outcomes: &mut [Outcome]) -> usize {
    let proven = |d: &Diagnostic| d.facts.status != warplint_analyzer::Status::Assumed.name();
    let mut left_out = 0;
    let files = outcomes
        .iter_mut()
        .flat_map(|o| o.file.iter_mut().chain(o.headers.iter_mut()));
    for f in files {
        let before = f.diagnostics.len();
        f.diagnostics.retain(proven);
        left_out += before - f.diagnostics.len();
    }
    left_out
}

/// Puts the outcomes together in input order (each file's errors and fixed
/// stdin are printed as it is reached), then sorts the files by path.
fn merge(outcomes: Vec<Outcome>) -> Merged {
    let mut m = Merged {
        results: Vec::new(),
        unknowns: Vec::new(),
        diffs: String::new(),
        fixed: 0,
        had_error: false,
        messages: Vec::new(),
        stdin_fixed: None,
        hovers: Vec::new(),
        left_out_assumed: 0,
        idle: Vec::new(),
        tally: tally::Tally::default(),
    };
    // A header's kernel that several files analysed alike counts once.
    let mut counted = std::collections::HashSet::new();
    for o in outcomes {
        m.tally.files += u64::from(o.file.is_some());
        m.tally.missing_headers.extend(o.missing_headers);
        m.tally.unread.extend(o.unread);
        m.idle.extend(o.idle);
        for k in &o.kernels {
            if k.same_as.as_ref().is_none_or(|s| counted.insert(s.clone())) {
                m.tally.add(&k.tally);
            }
        }
        m.had_error |= !o.errors.is_empty();
        m.messages.extend(o.errors.into_iter().map(|e| (true, e)));
        m.messages
            .extend(o.warnings.into_iter().map(|w| (false, w)));
        m.stdin_fixed = m.stdin_fixed.or(o.stdin_fixed);
        m.hovers.extend(o.hovers);
        m.diffs.push_str(&o.diff);
        m.fixed += o.fixed;
        m.unknowns.extend(o.unknowns);
        m.results.extend(o.file);
        for h in o.headers {
            merge_header(&mut m.results, h);
        }
    }
    m.results.sort_by(|a, b| a.path.cmp(&b.path));
    m
}

/// A header's diagnostics once, however many files include it.
fn merge_header(results: &mut Vec<FileDiagnostics>, h: FileDiagnostics) {
    let Some(r) = results.iter_mut().find(|r| r.abs_path == h.abs_path) else {
        results.push(h);
        return;
    };
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
