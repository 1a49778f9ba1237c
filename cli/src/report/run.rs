//! The `report` command: each file (and each file of the project that a
//! run file is analysed through) analysed on every architecture on the
//! worker pool, then put together (a kernel reported once, a header's
//! records once however many files include it) and printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use warplint_analyzer::analyze;

use super::{FileNote, FileResult};
use crate::{
    compile_db, discover, fail, includes, project, settings, worker_pool, ReportArgs, ReportFormat,
};

/// One file to analyse for `report`, read, with its headers and the
/// project's launches of its kernels.
struct Unit<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    reached: includes::Reached,
    sites: crate::project::UnitSites,
    /// Analysed only for the kernels of this header (canonical path): a
    /// file of the project that includes a file of the run.
    context_of: Option<&'a Path>,
}

/// Analyses one file on every architecture for `report` (`None`: a file
/// analysed for a header it turns out not to include).
fn report_file(unit: Unit, build: &ReportBuild) -> Option<FileResult> {
    let path = unit.path.display().to_string();
    let mut file_options = build.settings.options.clone();
    // The header this file is analysed for, by file id.
    let only = match unit.context_of {
        Some(h) => Some(unit.reached.canonical.iter().position(|c| c == h)? as u32 + 1),
        None => None,
    };
    file_options.frontend.only_file = only;
    file_options.frontend.language = crate::discover::language(unit.path);
    file_options.frontend.headers = unit.reached.headers;
    unit.sites.apply(&mut file_options.frontend);
    if let Some(w) = crate::sass::attach(
        &build.settings,
        &mut file_options,
        unit.path,
        unit.bytes,
        &unit.reached.canonical,
    ) {
        eprintln!("warplint: warning: {w}");
    }
    let header_paths: Vec<String> = file_options
        .frontend
        .headers
        .iter()
        .map(|h| h.path.clone())
        .collect();
    // The file's and its headers' paths by file id, for launch sites.
    let names: Vec<String> = std::iter::once(path.clone())
        .chain(header_paths.iter().cloned())
        .collect();
    let mut result = FileResult {
        path,
        canonical: includes::canonical(unit.path),
        context: only.is_some(),
        covered: Vec::new(),
        header_paths,
        runs: Vec::new(),
        notes: Vec::new(),
        kernels: Vec::new(),
        skipped_lines: Vec::new(),
        summary: warplint_analyzer::Summary::default(),
    };
    let mine = |file: u32| only.is_none_or(|id| id == file);
    for (i, (a, model)) in build.models.iter().enumerate() {
        let analysis = analyze(unit.bytes, model.as_ref(), &file_options);
        if i == 0 {
            result.summary = analysis.summary();
            result.summary.files = u64::from(only.is_none());
            result.notes = analysis
                .program
                .notes
                .iter()
                .filter(|n| mine(n.span.file))
                .map(|n| FileNote {
                    at: (n.span.file == 0).then_some(n.span.start),
                    file: n.span.file,
                    line: n.span.line,
                    column: n.span.column,
                    message: warplint_lints::wording::note(&n.kind),
                    kind: n.kind.kind(),
                })
                .collect();
            if only.is_none() {
                result.skipped_lines = analysis.program.skipped_lines.clone();
            }
            result.covered =
                project::header_extents(&analysis.program.kernels, &unit.reached.canonical);
            result.kernels = analysis
                .program
                .kernels
                .iter()
                .zip(analysis.kernel_notes())
                .map(|(k, notes)| super::KernelRecord {
                    own_at: (k.extent.file == 0).then_some(k.extent.start),
                    from: unit
                        .reached
                        .canonical
                        .get((k.extent.file as usize).wrapping_sub(1))
                        .map(|h| (h.clone(), k.extent.start)),
                    file: k.span.file,
                    line: k.span.line,
                    column: k.span.column,
                    name: k.display_name.clone(),
                    notes,
                    launches: k
                        .launches
                        .iter()
                        .map(|l| {
                            super::launch_json(l, |f| {
                                names.get(f as usize).cloned().unwrap_or_default()
                            })
                        })
                        .collect(),
                    removed: k
                        .removed
                        .iter()
                        .filter(|r| mine(r.span.file))
                        .map(|r| {
                            super::removed_json(k, r, |f| {
                                names.get(f as usize).cloned().unwrap_or_default()
                            })
                        })
                        .collect(),
                })
                .collect();
        }
        let mut reports = analysis.reports;
        reports.retain(|r| mine(r.span.file));
        result.runs.push(super::ArchRun {
            arch: *a,
            sector_based: model.sector_based(),
            reports,
        });
    }
    Some(result)
}

/// One file's outcome as `report` keeps it until it prints.
enum Reported {
    Json(super::JsonParts),
    Records(FileResult),
}

/// The settings and models of one distinct build of `report`'s files.
struct ReportBuild {
    build: Option<compile_db::BuildFlags>,
    settings: settings::Settings,
    models: Vec<(
        warplint_analyzer::Arch,
        Box<dyn warplint_analyzer::MemoryModel>,
    )>,
}

/// Each file's build (an index into the returned table, each distinct
/// compile-database setting resolved once; the first is the run's own).
fn report_builds(
    args: &ReportArgs,
    files: &[PathBuf],
) -> Result<(Vec<ReportBuild>, Vec<usize>), String> {
    let given = args.model.flags()?;
    let resolve = |build: Option<compile_db::BuildFlags>| -> Result<ReportBuild, String> {
        let flags = settings::ModelFlags {
            build: build.clone(),
            ..given.clone()
        };
        let settings = settings::resolve_with(&args.config.args(), &args.arch, flags)?;
        let mut models = Vec::new();
        for a in &settings.archs {
            models.push((*a, settings.model(*a)?));
        }
        Ok(ReportBuild {
            build,
            settings,
            models,
        })
    };
    let mut table = vec![resolve(None)?];
    let Some(db) = compile_db::find(&args.paths, args.model.compile_commands.as_deref())? else {
        return Ok((table, vec![0; files.len()]));
    };
    let mut which = Vec::with_capacity(files.len());
    for f in files {
        let build = db
            .flags_for(&std::path::absolute(f).unwrap_or_else(|_| f.clone()))
            .cloned();
        let i = match table.iter().position(|t| t.build == build) {
            Some(i) => i,
            None => {
                table.push(resolve(build)?);
                table.len() - 1
            }
        };
        which.push(i);
    }
    Ok((table, which))
}

pub fn report_cmd(args: ReportArgs) -> ExitCode {
    let (files, errors) = discover::files(&args.paths);
    let (builds, which) = match report_builds(&args, &files) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    if let Ok(flags) = args.model.flags() {
        for w in settings::ignored_flags(&builds[0].settings, &flags) {
            eprintln!("warplint: warning: {w}");
        }
    }
    let arch = builds[0].settings.arch;
    let mut had_error = !errors.is_empty();
    for e in &errors {
        eprintln!("warplint: error: {e}");
    }
    let pool = match worker_pool(args.jobs) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let project = includes::ProjectHeaders::new(&args.paths);
    let sources = files
        .iter()
        .zip(&which)
        .map(|(f, &i)| project::Source {
            path: f.clone(),
            bytes: None,
            settings: &builds[i].settings,
        })
        .collect();
    let index = pool.install(|| project::LaunchIndex::build(sources, &project, None));
    index.warn_if_full();
    let json = matches!(args.format, ReportFormat::Json);
    // Each file of the run, then each file of the project a run file is
    // analysed through (with the run file's build), with that run file.
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let contexts = index.contexts(&paths);
    let jobs: Vec<(&Path, usize, Option<PathBuf>)> = files
        .iter()
        .zip(&which)
        .map(|(f, &i)| (f.as_path(), i, None))
        .chain(contexts.iter().map(|(i, u)| {
            (
                u.as_path(),
                which[*i],
                Some(includes::canonical(&files[*i])),
            )
        }))
        .collect();
    // For JSON, each file becomes its text where it was analysed: a run
    // holds the report's text, not every access record.
    type Outcome = Option<(bool, Option<String>, Reported)>;
    let outcomes: Vec<Result<Outcome, String>> = pool.install(|| {
        use rayon::prelude::*;
        jobs.par_iter()
            .map(|(f, i, context_of)| {
                let b = &builds[*i];
                let bytes = match includes::read_source(f) {
                    Ok(b) => b,
                    Err(_) if context_of.is_some() => return Ok(None),
                    Err(e) => return Err(format!("{}: {e}", f.display())),
                };
                let reached = includes::headers_for(
                    f,
                    &bytes,
                    &b.settings.include_dirs,
                    &project,
                    b.settings.project_includes,
                );
                let sites = index.for_unit(f, &bytes, &reached.headers);
                // A budget that stopped the reading of a run file's headers.
                let warning = match (reached.cut, context_of) {
                    (Some(c), None) => Some(format!("{}: {c}", f.display())),
                    _ => None,
                };
                let unit = Unit {
                    path: f,
                    bytes: &bytes,
                    reached,
                    sites,
                    context_of: context_of.as_deref(),
                };
                let Some(r) = report_file(unit, b) else {
                    return Ok(None);
                };
                let file_note = !r.context && r.notes.iter().any(|n| n.line == 0);
                Ok(Some(if json {
                    (file_note, warning, Reported::Json(super::json_parts(&r)))
                } else {
                    (file_note, warning, Reported::Records(r))
                }))
            })
            .collect()
    });
    let mut results = Vec::new();
    let mut parts = Vec::new();
    for o in outcomes {
        match o {
            Ok(None) => {}
            Ok(Some((file_note, warning, r))) => {
                had_error |= file_note;
                if let Some(w) = warning {
                    eprintln!("warplint: warning: {w}");
                }
                match r {
                    Reported::Json(p) => parts.push(p),
                    Reported::Records(r) => results.push(r),
                }
            }
            Err(e) => {
                eprintln!("warplint: error: {e}");
                had_error = true;
            }
        }
    }
    project.warn_if_truncated();
    super::settle(&mut parts, &index);
    super::settle_records(&mut results, &index);
    let printed = if json {
        print_json(arch, &parts)
    } else {
        print_table(&results)
    };
    if !printed {
        return ExitCode::from(2);
    }
    if had_error {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The JSON document on stdout; false when it could not be written.
fn print_json(arch: warplint_analyzer::Arch, parts: &[super::JsonParts]) -> bool {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    super::write_json(&mut stdout, arch, parts)
        .and_then(|_| stdout.flush())
        .is_ok()
}

/// The notes on stderr and the table on stdout; false when it could not
/// be written.
fn print_table(results: &[FileResult]) -> bool {
    for f in results {
        for n in &f.notes {
            if n.line == 0 {
                eprintln!("{}: note: {}", f.path, n.message);
            } else {
                eprintln!(
                    "{}:{}:{}: note: {}",
                    f.path_of(n.file),
                    n.line,
                    n.column,
                    n.message
                );
            }
        }
    }
    let out = super::table(results);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
        .is_ok()
}
