//! What `check` prints once every file is checked: the diagnostics in the
//! chosen format (or `--statistics`), the human summary lines after them,
//! `--show-settings`, and the exit code (0 clean, 1 diagnostics, 2 errors).
//!
//! The summary never says "All checks passed!" unless a file was analysed
//! and every access of the run was: accesses that could not be analysed
//! are counted, with their largest reasons and what would resolve each.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use warplint_lints::Applicability;

use super::inputs::Selected;
use super::tally::Tally;
use super::{CheckArgs, Merged};
use crate::render::{self, FileDiagnostics};
use crate::settings::Settings;
use crate::Format;

/// Prints the run's diagnostics and, for people, the summary; returns the
/// exit code. Both go to stderr where stdout carries stdin's fixed source.
pub(super) fn print(args: &CheckArgs, merged: &Merged, selected: &Selected) -> ExitCode {
    let results = &merged.results;
    let count: usize = results.iter().map(|f| f.diagnostics.len()).sum();
    let human = matches!(args.format, Format::Full | Format::Concise);
    let out = if args.statistics {
        statistics(results, args.format, &merged.tally)
    } else {
        match args.format {
            Format::Full => render::full(
                results,
                render::Style::for_output(args.color, merged.stdin_fixed.is_some()),
            ),
            Format::Concise => render::concise(
                results,
                render::Style::for_output(args.color, merged.stdin_fixed.is_some()).color,
            ),
            Format::Json => render::json_array(results),
            Format::JsonLines => render::json_lines(results),
            Format::Github => render::github(results),
            Format::Sarif => crate::sarif::render(results, selected, merged.tally.json()),
        }
    };
    let mut out = out;
    if human && !args.quiet {
        print_human_summary(&mut out, args, merged, count);
    }
    if merged.stdin_fixed.is_some() {
        eprint!("{out}");
    } else {
        print!("{out}");
    }
    if merged.had_error {
        ExitCode::from(2)
    } else if count > 0 && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--diff`: the fixes as a unified diff; exit 1 when there is one.
pub(super) fn print_diff(args: &CheckArgs, merged: &Merged) -> ExitCode {
    print!("{}", merged.diffs);
    let unsafe_fixes = merged
        .results
        .iter()
        .flat_map(|f| &f.diagnostics)
        .filter(|d| {
            d.fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Unsafe)
        })
        .count();
    if merged.diffs.is_empty() && unsafe_fixes > 0 && !args.unsafe_fixes {
        eprintln!(
            "warplint: no safe fix to show; {unsafe_fixes} unsafe fix{} (padding changes the shared-memory footprint): add --unsafe-fixes to see {}",
            if unsafe_fixes == 1 { "" } else { "es" },
            if unsafe_fixes == 1 { "it" } else { "them" }
        );
    }
    if merged.had_error {
        ExitCode::from(2)
    } else if merged.diffs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The lines after the diagnostics in `full` and `concise`: unknowns
/// (`--show-unknown`), fixes made, the count and what `--fix` would fix,
/// and what could not be analysed.
fn print_human_summary(out: &mut String, args: &CheckArgs, merged: &Merged, count: usize) {
    for u in &merged.unknowns {
        let _ = writeln!(
            out,
            "{}:{}:{}: unknown: {}",
            u.path, u.line, u.column, u.text
        );
    }
    if merged.left_out_assumed > 0 {
        let n = merged.left_out_assumed;
        let _ = writeln!(
            out,
            "{n} finding{} resting on an assumption left out (`--only-proven`).",
            if n == 1 { "" } else { "s" }
        );
    }
    let fixed = merged.fixed;
    if fixed > 0 {
        let _ = writeln!(
            out,
            "Fixed {fixed} diagnostic{} (each re-checked by the engine).",
            if fixed == 1 { "" } else { "s" }
        );
    }
    let t = &merged.tally;
    if count == 0 {
        // Nothing analysed: the errors, or the warning that no file was
        // found, have said why.
        if t.files == 0 {
            return;
        }
        if t.unknown == 0 {
            // Findings left out, or headers never read, are not a pass.
            let verdict = if merged.left_out_assumed > 0 {
                "No proven problems found."
            } else if !t.missing_headers.is_empty() || !t.unread.is_empty() {
                "No problems found in what was read."
            } else {
                "All checks passed!"
            };
            let _ = writeln!(out, "{verdict}");
            print_missing_headers(out, t);
            return;
        }
    } else {
        print_found(out, args, merged, count);
    }
    if t.unknown > 0 {
        print_unknowns(out, args, t, count);
    }
    print_missing_headers(out, t);
}

/// The quoted includes no folder held, and kernel code the parser could
/// not read: what they hold was not analysed.
fn print_missing_headers(out: &mut String, t: &Tally) {
    if !t.unread.is_empty() {
        let shown: Vec<&str> = t.unread.iter().take(5).map(String::as_str).collect();
        let more = t.unread.len() - shown.len();
        let _ = writeln!(
            out,
            "Kernel code could not be read (`__global__` in a file with no kernel parsed); syntax errors at {}{}: those kernels were not analysed.",
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        );
    }
    let n = t.missing_headers.len();
    if n == 0 {
        return;
    }
    let shown: Vec<String> = t
        .missing_headers
        .iter()
        .take(5)
        .map(|h| format!("`{h}`"))
        .collect();
    let more = if n > shown.len() {
        format!(" and {} more", n - shown.len())
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{n} included header{} not found: {}{more}; what {} not read (give its folder with -I DIR, or a compile_commands.json).",
        if n == 1 { "" } else { "s" },
        shown.join(", "),
        if n == 1 { "it defines was" } else { "they define was" }
    );
}

/// "Found N diagnostics." and what `--fix` would fix.
fn print_found(out: &mut String, args: &CheckArgs, merged: &Merged, count: usize) {
    let _ = writeln!(
        out,
        "Found {count} diagnostic{}.",
        if count == 1 { "" } else { "s" }
    );
    let fixable = |a: Applicability| {
        merged
            .results
            .iter()
            .flat_map(|f| &f.diagnostics)
            .filter(move |d| d.fix.as_ref().is_some_and(|x| x.applicability == a))
    };
    let (safe, unsafe_) = (
        fixable(Applicability::Safe).count(),
        fixable(Applicability::Unsafe).count(),
    );
    if safe > 0 {
        let _ = writeln!(out, "[*] {safe} fixable with the `--fix` option.");
    }
    if unsafe_ > 0 && !args.unsafe_fixes {
        let mut why: Vec<&str> = fixable(Applicability::Unsafe)
            .map(|d| warplint_lints::unsafe_why(d.code))
            .collect();
        why.sort_unstable();
        why.dedup();
        let _ = writeln!(
            out,
            "[*] {unsafe_} fixable with `--fix --unsafe-fixes` ({}).",
            why.join("; ")
        );
    }
}

/// How many accesses were analysed and how many could not be, with the
/// largest reasons and what would resolve each.
fn print_unknowns(out: &mut String, args: &CheckArgs, t: &Tally, count: usize) {
    let (analysed, unknown) = (t.analysed(), t.unknown);
    let split = match t.split() {
        s if s.is_empty() => String::new(),
        s => format!(" ({s})"),
    };
    let plural = |n: u64| if n == 1 { "access" } else { "accesses" };
    if analysed == 0 {
        let _ = writeln!(
            out,
            "None of the {unknown} {} could be analysed:",
            plural(unknown)
        );
    } else if count == 0 {
        let _ = writeln!(out,
            "No problems found in the {analysed} analysed {}{split}; {unknown} could not be analysed:",
            plural(analysed)
        );
    } else {
        let _ = writeln!(
            out,
            "Analysed {analysed} of {} accesses{split}; {unknown} could not be analysed:",
            t.accesses()
        );
    }
    for line in t.reason_lines() {
        let _ = writeln!(out, "  {line}");
    }
    if !args.show_unknown {
        let _ = writeln!(out, "Run with `--show-unknown` to list them.");
    }
}

/// `--statistics`: diagnostics counted by rule, and the analysis summary.
fn statistics(results: &[FileDiagnostics], format: Format, sum: &Tally) -> String {
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
        let doc = serde_json::json!({"rules": v, "summary": sum.json()});
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
        sum.accesses(),
        sum.exact,
        sum.assumed,
        sum.unknown
    ));
    out
}

/// `--show-settings`: the configuration and selection a run would use.
pub(super) fn show_settings(s: &Settings, selected: &Selected) -> String {
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
    let b = &s.options.frontend.block_defaults;
    out.push_str(&format!("default-block: {:?}\n", b.one_d));
    out.push_str(&format!("default-block-2d: {:?}\n", b.two_d));
    out.push_str(&format!("default-grid: {:?}\n", e.default_grid));
    out.push_str(&format!(
        "default-param: {}\n",
        e.default_param
            .map_or_else(|| "(representative values)".into(), |p| p.to_string())
    ));
    out.push_str(&format!(
        "instructions: {}\n",
        s.sass.as_ref().map_or_else(
            || "the model's (no --nvcc or --sass)".to_string(),
            |x| x.describe()
        )
    ));
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
