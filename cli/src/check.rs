//! `warplint check`: lint files, print diagnostics, exit 0/1/2.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use warplint_analyzer::{analyze, Status};
use warplint_lints::{Context, Diagnostic};

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
    pub arch: Option<String>,
    pub statistics: bool,
    pub show_settings: bool,
    pub quiet: bool,
    pub stdin_filename: Option<String>,
    pub show_unknown: bool,
    pub config: ConfigArgs,
}

/// An unknown result, for `--show-unknown`.
struct UnknownNote {
    path: String,
    line: u32,
    column: u32,
    text: String,
}

pub fn run(args: CheckArgs) -> std::process::ExitCode {
    let settings = match settings::resolve(&args.config, args.arch.as_deref()) {
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
    let model = match settings.arch.model() {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    // Inputs: files, or stdin for `-`.
    let mut inputs: Vec<(String, String, Vec<u8>)> = Vec::new();
    let mut had_error = false;
    let stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            return fail(&format!("stdin: {e}"));
        }
        let name = args.stdin_filename.clone().unwrap_or_else(|| "-".into());
        inputs.push((name.clone(), absolute(Path::new(&name)), buf));
    }
    let paths: Vec<PathBuf> = args.paths.iter().filter(|p| p.as_os_str() != "-").cloned().collect();
    if !paths.is_empty() || !stdin {
        let paths = if paths.is_empty() { vec![PathBuf::from(".")] } else { paths };
        let (files, errors) = discover::files(&paths);
        for e in &errors {
            eprintln!("warplint: error: {e}");
        }
        if !errors.is_empty() {
            return std::process::ExitCode::from(2);
        }
        for f in files {
            match std::fs::read(&f) {
                Ok(b) => inputs.push((f.display().to_string(), absolute(&f), b)),
                Err(e) => {
                    eprintln!("warplint: error: {}: {e}", f.display());
                    had_error = true;
                }
            }
        }
    }
    let mut results = Vec::new();
    let mut unknowns = Vec::new();
    for (path, abs, bytes) in inputs {
        let analysis = analyze(&bytes, model.as_ref(), &settings.options);
        if analysis.program.notes.iter().any(|n| n.span.line == 0) {
            for n in &analysis.program.notes {
                eprintln!("warplint: error: {path}: {}", n.message);
            }
            had_error = true;
            continue;
        }
        let ctx = Context {
            source: &bytes,
            analysis: &analysis,
            model: model.as_ref(),
            options: &settings.options,
            arch: settings.arch,
            thresholds: &settings.thresholds,
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let suppressions = Suppressions::parse(&text);
        let diagnostics: Vec<Diagnostic> = warplint_lints::check(&ctx, &selected)
            .into_iter()
            .filter(|d| !suppressions.suppresses(d))
            .collect();
        if args.show_unknown {
            for r in analysis.reports.iter().filter(|r| r.status == Status::Unknown) {
                unknowns.push(UnknownNote {
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
        results.push(FileDiagnostics {
            path,
            abs_path: abs,
            source: text,
            diagnostics,
        });
    }
    let count: usize = results.iter().map(|f| f.diagnostics.len()).sum();
    let human = matches!(args.format, Format::Full | Format::Concise);
    let out = if args.statistics {
        statistics(&results, args.format)
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
    if !(args.quiet && human) {
        print!("{out}");
    }
    if human && !args.quiet {
        for u in &unknowns {
            println!("{}:{}:{}: unknown: {}", u.path, u.line, u.column, u.text);
        }
        if count == 0 {
            println!("All checks passed!");
        } else {
            let fixable = results
                .iter()
                .flat_map(|f| &f.diagnostics)
                .filter(|d| d.fix.is_some())
                .count();
            println!("Found {count} diagnostic{}.", if count == 1 { "" } else { "s" });
            if fixable > 0 {
                println!(
                    "[*] {fixable} fixable with the `--fix --unsafe-fixes` option (padding changes the shared-memory footprint)."
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

fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .map(|a| a.display().to_string())
        .unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p).display().to_string())
                .unwrap_or_else(|_| p.display().to_string())
        })
}

fn statistics(results: &[FileDiagnostics], format: Format) -> String {
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
        return serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for (code, (n, name, fixable)) in rows {
        let mark = if fixable > 0 { "[*]" } else { "[ ]" };
        out.push_str(&format!("{n}\t{code}\t{mark} {name}\n"));
    }
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
    out.push_str(&format!("arch: {}\n", s.arch));
    out.push_str(&format!("select: {}\n", selected.iter().copied().collect::<Vec<_>>().join(", ")));
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
        out.push_str(&format!("kernel.{k}: block {:?}, grid {:?}, params {:?}\n", o.block, o.grid, o.params));
    }
    out.trim_end().to_string()
}
