//! The `warplint` command line.

mod check;
mod compile_db;
mod config;
mod discover;
mod fix;
mod includes;
mod progress;
mod project;
mod render;
mod report;
mod rule;
mod sarif;
mod settings;
mod suppress;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use warplint_analyzer::analyze;

use report::{FileNote, FileResult};
use settings::ConfigArgs;

#[derive(Parser)]
#[command(
    name = "warplint",
    version,
    about = "Static analysis of CUDA memory-access patterns: shared-memory bank conflicts and global-memory coalescing"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lint CUDA files: bank conflicts, uncoalesced and misaligned global accesses.
    Check(CheckCli),
    /// List every shared/global memory access with its predicted cost.
    Report(ReportArgs),
    /// Explain a rule (`warplint rule SM001`) or list them all (`--all`).
    Rule(RuleArgs),
    /// Tools for measuring warplint itself.
    #[command(subcommand)]
    Debug(DebugCommand),
}

#[derive(Subcommand)]
enum DebugCommand {
    /// Discover and parse every file (same walker and thread pool as
    /// `check`), nothing else: the floor of the pipeline's cost.
    ParseOnly(ParseOnlyArgs),
}

#[derive(clap::Args)]
struct ParseOnlyArgs {
    /// Files or folders (folders are searched for .cu and .cuh files).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Files parsed in parallel (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    Table,
    Json,
}

/// Output formats of `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Full,
    Concise,
    Json,
    JsonLines,
    Sarif,
    Github,
}

#[derive(clap::Args)]
struct ConfigFlags {
    /// Configuration file (default: warplint.toml found from the current directory up).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Ignore any configuration file.
    #[arg(long, conflicts_with = "config")]
    isolated: bool,
}

impl ConfigFlags {
    fn args(&self) -> ConfigArgs {
        ConfigArgs {
            config: self.config.clone(),
            isolated: self.isolated,
        }
    }
}

/// Settings of the legacy models.
#[derive(clap::Args)]
struct ModelArgs {
    /// Shared-memory bank width on compute capability 3.x, in bytes (4 or 8).
    #[arg(long, value_name = "4|8")]
    bank_mode: Option<u32>,
    /// Global loads on 2.x/3.x: cached in L1 (128-byte lines) or L2 only (32-byte).
    #[arg(long, value_name = "l1|l2", value_parser = ["l1", "l2"])]
    global_caching: Option<String>,
    /// Define a macro, as nvcc's -D: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// A folder `#include` searches, as nvcc's -I.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Where a quoted `#include` found in no such folder is looked for:
    /// `project` (the project's files, by the end of their path; the
    /// default for a file the compile database does not give settings) or
    /// `paths` (nowhere else; the default for one it does).
    #[arg(long, value_name = "paths|project", value_parser = ["paths", "project"])]
    include_search: Option<String>,
    /// compile_commands.json (or a folder holding it) giving each file's
    /// -I, -D and -arch (default: found in the folder given or one above,
    /// up to the project root, or its build/). -I, -D, --arch and the
    /// configuration win over it.
    #[arg(long, value_name = "PATH")]
    compile_commands: Option<PathBuf>,
}

impl ModelArgs {
    fn flags(&self) -> settings::ModelFlags {
        settings::ModelFlags {
            bank_mode: self.bank_mode,
            global_caching: self.global_caching.as_deref().map(|c| c == "l1"),
            defines: self.define.clone(),
            include_dirs: self.include.clone(),
            include_search: self.include_search.clone(),
            compile_commands: self.compile_commands.clone(),
            build: None,
        }
    }
}

#[derive(clap::Args)]
struct CheckCli {
    /// Files or folders (folders are searched for .cu and .cuh); `-` reads stdin.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Rules to run: codes, prefixes, names or ALL (comma-separated).
    #[arg(long, value_name = "RULES")]
    select: Vec<String>,
    /// Rules to add to the selection.
    #[arg(long, value_name = "RULES")]
    extend_select: Vec<String>,
    /// Rules to leave out.
    #[arg(long, value_name = "RULES")]
    ignore: Vec<String>,
    /// Output format.
    #[arg(
        long,
        value_enum,
        env = "WARPLINT_OUTPUT_FORMAT",
        default_value = "full"
    )]
    output_format: Format,
    /// Exit 0 even when there are diagnostics.
    #[arg(long)]
    exit_zero: bool,
    /// Target architecture, e.g. sm_90; repeat (or comma-separate) to check
    /// several and see where they differ.
    #[arg(long)]
    arch: Vec<String>,
    /// Count diagnostics per rule instead of listing them.
    #[arg(long)]
    statistics: bool,
    /// Print the resolved settings and exit.
    #[arg(long)]
    show_settings: bool,
    /// Print the diagnostics only, without the summary.
    #[arg(short, long)]
    quiet: bool,
    /// The file name to report for source read from stdin.
    #[arg(long)]
    stdin_filename: Option<String>,
    /// Also list accesses warplint could not analyse (never diagnostics).
    #[arg(long)]
    show_unknown: bool,
    /// Apply safe fixes (each re-checked by re-analysing the edited file).
    #[arg(long)]
    fix: bool,
    /// With --fix or --diff, also apply unsafe fixes (padding).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Show the fixes as a unified diff instead of writing them.
    #[arg(long)]
    diff: bool,
    /// Globs of files or folders to skip (added to the config's `exclude`).
    #[arg(long, value_name = "GLOBS")]
    exclude: Vec<String>,
    /// Apply excludes to files named on the command line too (pre-commit).
    #[arg(long)]
    force_exclude: bool,
    /// Files analysed in parallel (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    config: ConfigFlags,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Files or folders (folders are searched for .cu and .cuh files).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: ReportFormat,
    /// Target architecture, e.g. sm_90 (default: the config's, else sm_90);
    /// repeat for one record per access and architecture.
    #[arg(long)]
    arch: Vec<String>,
    /// Files analysed in parallel (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    config: ConfigFlags,
}

#[derive(clap::Args)]
struct RuleArgs {
    /// A rule code or name.
    #[arg(required_unless_present = "all")]
    rule: Option<String>,
    /// Every rule.
    #[arg(long)]
    all: bool,
    /// text or json.
    #[arg(long, default_value = "text")]
    output_format: String,
}

/// Stack of each worker thread. Not a budget: the analyzer's depth limits
/// (`budget::MAX_SYNTAX_DEPTH` and the like) are what stop deep inputs;
/// this is room for the recursion they allow.
const WORKER_STACK_BYTES: usize = 64 << 20;

/// Stack of the thread `main` runs the command on (settings, merging,
/// rendering; files are analysed on the workers), for the same reason.
const MAIN_STACK_BYTES: usize = 256 << 20;

/// The threads files are analysed on (`-j N`, default one per core), with
/// room on their stacks for deeply nested syntax.
pub fn worker_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .stack_size(WORKER_STACK_BYTES)
        .build()
        .map_err(|e| format!("could not start worker threads: {e}"))
}

pub fn fail(msg: &str) -> ExitCode {
    eprintln!("warplint: error: {msg}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep inputs recurse; give the work a generous stack.
    let handle = std::thread::Builder::new()
        .stack_size(MAIN_STACK_BYTES)
        .spawn(move || match cli.command {
            Command::Check(a) => check::run(check::CheckArgs {
                paths: a.paths,
                select: a.select,
                extend_select: a.extend_select,
                ignore: a.ignore,
                format: a.output_format,
                exit_zero: a.exit_zero,
                arch: a.arch,
                statistics: a.statistics,
                show_settings: a.show_settings,
                quiet: a.quiet,
                stdin_filename: a.stdin_filename,
                show_unknown: a.show_unknown,
                fix: a.fix,
                unsafe_fixes: a.unsafe_fixes,
                diff: a.diff,
                exclude: a.exclude,
                force_exclude: a.force_exclude,
                jobs: a.jobs,
                model: a.model.flags(),
                config: a.config.args(),
            }),
            Command::Report(a) => report_cmd(a),
            Command::Rule(a) => rule_cmd(a),
            Command::Debug(DebugCommand::ParseOnly(a)) => parse_only_cmd(a),
        });
    match handle.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => fail("internal error (the analysis thread stopped); please report this file"),
    }
}

/// `warplint debug parse-only`: one line of counts on stdout.
fn parse_only_cmd(a: ParseOnlyArgs) -> ExitCode {
    let (files, errors) = discover::files(&a.paths);
    for e in &errors {
        eprintln!("warplint: error: {e}");
    }
    let pool = match worker_pool(a.jobs) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let stats: Vec<Result<warplint_analyzer::ParseStats, String>> = pool.install(|| {
        use rayon::prelude::*;
        files
            .par_iter()
            .map(|f| {
                includes::read_source(f)
                    .map(|b| warplint_analyzer::parse_only(&b))
                    .map_err(|e| format!("{}: {e}", f.display()))
            })
            .collect()
    });
    let (mut n, mut bytes, mut nodes, mut with_errors, mut unreadable) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    for s in stats {
        match s {
            Ok(s) => {
                n += 1;
                bytes += s.bytes;
                nodes += s.nodes;
                with_errors += s.has_error as u64;
            }
            Err(e) => {
                eprintln!("warplint: error: {e}");
                unreadable += 1;
            }
        }
    }
    println!(
        "parsed {n} files, {bytes} bytes, {nodes} syntax nodes; {with_errors} with syntax errors"
    );
    if errors.is_empty() && unreadable == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn rule_cmd(a: RuleArgs) -> ExitCode {
    let rules: Vec<&warplint_lints::Rule> = if a.all {
        warplint_lints::rules().collect()
    } else {
        let key = a.rule.unwrap_or_default();
        match warplint_lints::find(&key) {
            Some(r) => vec![r],
            None => return fail(&format!("unknown rule `{key}`")),
        }
    };
    match a.output_format.as_str() {
        "json" => {
            let v: Vec<_> = rules.iter().map(|r| rule::json(r)).collect();
            let v = if a.all {
                serde_json::json!(v)
            } else {
                v[0].clone()
            };
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
        "text" => {
            let texts: Vec<String> = rules.iter().map(|r| rule::text(r)).collect();
            print!("{}", texts.join("\n"));
        }
        other => return fail(&format!("unknown output format `{other}` (text or json)")),
    }
    ExitCode::SUCCESS
}

/// Analyses one file on every architecture for `report`.
fn report_file(
    f: &std::path::Path,
    models: &[(
        warplint_analyzer::Arch,
        Box<dyn warplint_analyzer::MemoryModel>,
    )],
    options: &warplint_analyzer::Options,
    bytes: &[u8],
    headers: Vec<warplint_analyzer::Header>,
    project_launches: Vec<warplint_analyzer::ir::ProjectLaunch>,
) -> FileResult {
    let path = f.display().to_string();
    let mut file_options = options.clone();
    file_options.frontend.headers = headers;
    file_options.frontend.project_launches = project_launches;
    let header_paths = file_options
        .frontend
        .headers
        .iter()
        .map(|h| h.path.clone())
        .collect();
    // The file's and its headers' paths by file id, for launch sites.
    let names: Vec<String> = std::iter::once(path.clone())
        .chain(file_options.frontend.headers.iter().map(|h| h.path.clone()))
        .collect();
    let mut result = FileResult {
        path,
        header_paths,
        runs: Vec::new(),
        notes: Vec::new(),
        kernels: Vec::new(),
        skipped_lines: Vec::new(),
        summary: warplint_analyzer::Summary::default(),
    };
    for (i, (a, model)) in models.iter().enumerate() {
        let analysis = analyze(bytes, model.as_ref(), &file_options);
        let s = analysis.summary();
        if i == 0 {
            result.summary = s;
            result.notes = analysis
                .program
                .notes
                .iter()
                .map(|n| FileNote {
                    file: n.span.file,
                    line: n.span.line,
                    column: n.span.column,
                    message: warplint_lints::wording::note(&n.kind),
                    kind: n.kind.kind(),
                })
                .collect();
            result.skipped_lines = analysis.program.skipped_lines.clone();
            result.kernels = analysis
                .program
                .kernels
                .iter()
                .zip(analysis.kernel_notes())
                .map(|(k, notes)| report::KernelRecord {
                    file: k.span.file,
                    line: k.span.line,
                    column: k.span.column,
                    name: k.display_name.clone(),
                    notes,
                    launches: k
                        .launches
                        .iter()
                        .map(|l| {
                            report::launch_json(l, |f| {
                                names.get(f as usize).cloned().unwrap_or_default()
                            })
                        })
                        .collect(),
                })
                .collect();
        } else {
            result.summary.accesses += s.accesses;
            result.summary.exact += s.exact;
            result.summary.assumed += s.assumed;
            result.summary.unknown += s.unknown;
        }
        result.runs.push(report::ArchRun {
            arch: *a,
            sector_based: model.sector_based(),
            reports: analysis.reports,
        });
    }
    result
}

/// One file's outcome as `report` keeps it until it prints.
enum Reported {
    Json(report::JsonParts),
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
    let resolve = |build: Option<compile_db::BuildFlags>| -> Result<ReportBuild, String> {
        let flags = settings::ModelFlags {
            build: build.clone(),
            ..args.model.flags()
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

fn report_cmd(args: ReportArgs) -> ExitCode {
    let (files, errors) = discover::files(&args.paths);
    let (builds, which) = match report_builds(&args, &files) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
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
    let index = pool.install(|| project::LaunchIndex::build(sources, &project));
    index.warn_if_full();
    let json = matches!(args.format, ReportFormat::Json);
    // For JSON, each file becomes its text where it was analysed: a run
    // holds the report's text, not every access record.
    let outcomes: Vec<Result<(bool, Reported), String>> = pool.install(|| {
        use rayon::prelude::*;
        files
            .par_iter()
            .zip(&which)
            .map(|(f, &i)| {
                let b = &builds[i];
                let bytes =
                    includes::read_source(f).map_err(|e| format!("{}: {e}", f.display()))?;
                let headers = includes::headers_for(
                    f,
                    &bytes,
                    &b.settings.include_dirs,
                    b.settings.project_includes.then_some(&project),
                )
                .headers;
                let sites = index.for_unit(f, &bytes, &headers);
                let r = report_file(f, &b.models, &b.settings.options, &bytes, headers, sites);
                let file_note = r.notes.iter().any(|n| n.line == 0);
                Ok(if json {
                    (file_note, Reported::Json(report::json_parts(&r)))
                } else {
                    (file_note, Reported::Records(r))
                })
            })
            .collect()
    });
    let mut results = Vec::new();
    let mut parts = Vec::new();
    for o in outcomes {
        match o {
            Ok((file_note, r)) => {
                had_error |= file_note;
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
    if json {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        if report::write_json(&mut stdout, arch, &parts)
            .and_then(|_| stdout.flush())
            .is_err()
        {
            return ExitCode::from(2);
        }
        return if had_error {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    // The table.
    for f in &results {
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
    let out = report::table(&results);
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    if had_error {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
