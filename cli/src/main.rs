//! The `warplint` command line.

mod cache;
mod check;
mod compile_db;
mod config;
mod discover;
mod fix;
mod floor;
mod host_index;
mod hover;
mod includes;
mod noqa;
mod progress;
mod project;
mod record;
mod render;
mod report;
mod rule;
mod sarif;
mod sass;
mod server;
mod settings;
mod suppress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

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
    /// Run as a language server on stdio (diagnostics, quick fixes, hover).
    Server(ServerArgs),
    /// Remove the results cache (`.warplint_cache`).
    Clean(CleanArgs),
    /// Tools for measuring warplint itself and for its integrations.
    #[command(subcommand)]
    Debug(DebugCommand),
}

#[derive(Subcommand)]
enum DebugCommand {
    /// Discover and parse every file (same walker and thread pool as
    /// `check`), nothing else: the floor of the pipeline's cost.
    ParseOnly(ParseOnlyArgs),
    /// Print the JSON Schema of a `check --output-format json` record.
    JsonSchema,
}

#[derive(clap::Args)]
struct ParseOnlyArgs {
    /// Files or folders (folders are searched for .cu and .cuh files).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Files parsed in parallel (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Also parse every header the files reach (as `check` finds them),
    /// each distinct file once: the floor for a tool that honours includes.
    #[arg(long)]
    follow_includes: bool,
    /// A folder `#include` searches, as nvcc's -I (with --follow-includes).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// `project` or `paths`, as for `check` (with --follow-includes).
    #[arg(long, value_name = "paths|project", value_parser = ["paths", "project"])]
    include_search: Option<String>,
    /// Ignore any configuration file (its include folders).
    #[arg(long)]
    isolated: bool,
}

#[derive(clap::Args)]
struct ServerArgs {
    /// Threads a document's analysis may use (default: one per core).
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
    /// Compile each file with this nvcc (`-lineinfo`) and check the model
    /// against the instructions it emits (nvdisasm beside it or on PATH);
    /// `auto` finds nvcc on PATH or in $CUDA_HOME. Costs a compile per file.
    #[arg(long, value_name = "PATH|auto")]
    nvcc: Option<String>,
    /// Check the model against this SASS listing (`nvdisasm -gi` of a
    /// cubin built with `-lineinfo`) instead of compiling.
    #[arg(long, value_name = "FILE", conflicts_with = "nvcc")]
    sass: Option<PathBuf>,
}

impl ModelArgs {
    fn flags(&self) -> Result<settings::ModelFlags, String> {
        Ok(settings::ModelFlags {
            bank_mode: self.bank_mode,
            global_caching: self.global_caching.as_deref().map(|c| c == "l1"),
            defines: self.define.clone(),
            include_dirs: self.include.clone(),
            include_search: self.include_search.clone(),
            compile_commands: self.compile_commands.clone(),
            build: None,
            sass: sass::SassSource::resolve(self.nvcc.as_deref(), self.sass.as_deref())?,
        })
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
    /// Colour in the full format: `auto` (on a terminal, unless NO_COLOR is
    /// set; FORCE_COLOR forces it), `always` or `never`.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    color: render::ColorChoice,
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
    /// Report only findings that hold for every value they depend on (a
    /// strict CI gate): those resting on an assumption are left out.
    #[arg(long)]
    only_proven: bool,
    /// Apply safe fixes (each re-checked by re-analysing the edited file).
    #[arg(long)]
    fix: bool,
    /// With --fix or --diff, also apply unsafe fixes (padding).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Show the fixes as a unified diff instead of writing them.
    #[arg(long)]
    diff: bool,
    /// Acknowledge every current finding: add `// warplint: ignore[CODES]`
    /// to each line with a diagnostic (in the files, written in place).
    #[arg(long, conflicts_with_all = ["fix", "diff"])]
    add_noqa: bool,
    /// Globs of files or folders to skip (added to the config's `exclude`).
    #[arg(long, value_name = "GLOBS")]
    exclude: Vec<String>,
    /// Apply excludes to files named on the command line too (pre-commit).
    #[arg(long)]
    force_exclude: bool,
    /// Files analysed in parallel (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Neither read nor write the results cache.
    #[arg(long)]
    no_cache: bool,
    /// The results cache's folder (default: `.warplint_cache` at the
    /// project root, or the configuration's `cache-dir`).
    #[arg(long, env = "WARPLINT_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    config: ConfigFlags,
}

#[derive(clap::Args)]
struct CleanArgs {
    /// The cache's folder (default: that of the configuration found from
    /// the current folder, as `check` finds it).
    #[arg(long, env = "WARPLINT_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(flatten)]
    config: ConfigFlags,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Files or folders (folders are searched for .cu and .cuh files).
    #[arg(default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(crate) format: ReportFormat,
    /// Target architecture, e.g. sm_90 (default: the config's, else sm_90);
    /// repeat for one record per access and architecture.
    #[arg(long)]
    pub(crate) arch: Vec<String>,
    /// Files analysed in parallel (default: one per core).
    #[arg(short, long)]
    pub(crate) jobs: Option<usize>,
    #[command(flatten)]
    pub(crate) model: ModelArgs,
    #[command(flatten)]
    pub(crate) config: ConfigFlags,
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
pub(crate) const MAIN_STACK_BYTES: usize = 256 << 20;

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
            Command::Check(a) => match a.model.flags() {
                Err(e) => fail(&e),
                Ok(model) => check::run(check::CheckArgs {
                    paths: a.paths,
                    select: a.select,
                    extend_select: a.extend_select,
                    ignore: a.ignore,
                    format: a.output_format,
                    exit_zero: a.exit_zero,
                    color: a.color,
                    arch: a.arch,
                    statistics: a.statistics,
                    show_settings: a.show_settings,
                    quiet: a.quiet,
                    stdin_filename: a.stdin_filename,
                    show_unknown: a.show_unknown,
                    only_proven: a.only_proven,
                    fix: a.fix,
                    unsafe_fixes: a.unsafe_fixes,
                    diff: a.diff,
                    add_noqa: a.add_noqa,
                    exclude: a.exclude,
                    force_exclude: a.force_exclude,
                    jobs: a.jobs,
                    no_cache: a.no_cache,
                    cache_dir: a.cache_dir,
                    model,
                    config: a.config.args(),
                    stdin_text: None,
                    keep_hovers: false,
                    parse_cache: None,
                }),
            },
            Command::Report(a) => report::run::report_cmd(a),
            Command::Rule(a) => rule_cmd(a),
            Command::Server(a) => server::run(a.jobs),
            Command::Clean(a) => clean_cmd(&a),
            Command::Debug(DebugCommand::ParseOnly(a)) => floor::parse_only_cmd(a),
            Command::Debug(DebugCommand::JsonSchema) => {
                print!("{}", record::schema());
                ExitCode::SUCCESS
            }
        });
    match handle.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => fail("internal error (the analysis thread stopped); please report this file"),
    }
}

/// `warplint clean`: removes the results cache the configuration found
/// from here (or `--cache-dir`) names.
fn clean_cmd(a: &CleanArgs) -> ExitCode {
    let settings =
        match settings::resolve_with(&a.config.args(), &[], settings::ModelFlags::default()) {
            Ok(s) => s,
            Err(e) => return fail(&e),
        };
    match cache::clean(a.cache_dir.as_deref(), &settings) {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
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
