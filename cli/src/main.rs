//! The `warplint` command line.

mod config;
mod discover;
mod report;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use warplint_analyzer::{analyze, Arch, FrontendOptions, Options};

use report::{FileNote, FileResult};

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
    /// List every shared/global memory access with its predicted cost.
    Report(ReportArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Files or folders (folders are searched for .cu and .cuh files).
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Target architecture, e.g. sm_90 (default: the config's, else sm_90).
    #[arg(long)]
    arch: Option<String>,
    /// Configuration file (default: warplint.toml found from the current directory up).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Ignore any configuration file.
    #[arg(long, conflicts_with = "config")]
    isolated: bool,
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("warplint: error: {msg}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Report(args) => report_cmd(args),
    }
}

fn report_cmd(args: ReportArgs) -> ExitCode {
    let cfg = if args.isolated {
        config::Config::default()
    } else {
        let path = match &args.config {
            Some(p) => Some(p.clone()),
            None => std::env::current_dir()
                .ok()
                .and_then(|d| config::discover(&d)),
        };
        match path {
            Some(p) => match config::load(&p) {
                Ok(c) => c,
                Err(e) => return fail(&e),
            },
            None => config::Config::default(),
        }
    };
    let arch_name = args
        .arch
        .clone()
        .or(cfg.analysis.arch.clone())
        .unwrap_or_else(|| "sm_90".into());
    let arch = match Arch::parse(&arch_name) {
        Ok(a) => a,
        Err(e) => return fail(&e),
    };
    let model = match arch.model() {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let options = Options {
        frontend: FrontendOptions {
            kernels: cfg.kernel_overrides(),
            defines: cfg
                .analysis
                .defines
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        },
        engine: cfg.engine_options(),
    };
    let (files, errors) = discover::files(&args.paths);
    let mut had_error = !errors.is_empty();
    for e in &errors {
        eprintln!("warplint: error: {e}");
    }
    let mut results = Vec::new();
    for f in files {
        let path = f.display().to_string();
        let bytes = match std::fs::read(&f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("warplint: error: {path}: {e}");
                had_error = true;
                continue;
            }
        };
        let analysis = analyze(&bytes, model.as_ref(), &options);
        let notes: Vec<FileNote> = analysis
            .program
            .notes
            .iter()
            .map(|n| FileNote {
                line: n.span.line,
                column: n.span.column,
                message: n.message.clone(),
            })
            .collect();
        if analysis.program.notes.iter().any(|n| n.span.line == 0) {
            had_error = true;
        }
        results.push(FileResult {
            path,
            reports: analysis.reports,
            notes,
        });
    }
    let out = match args.format {
        Format::Json => report::json(arch, &results),
        Format::Table => {
            for f in &results {
                for n in &f.notes {
                    if n.line == 0 {
                        eprintln!("{}: note: {}", f.path, n.message);
                    } else {
                        eprintln!("{}:{}:{}: note: {}", f.path, n.line, n.column, n.message);
                    }
                }
            }
            report::table(&results)
        }
    };
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
