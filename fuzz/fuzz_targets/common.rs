//! The whole pipeline on one input: front end, engine, every lint (fix
//! search included), for the architecture the first byte picks; with
//! headers, the analysis must not change when the run's cache is used;
//! and the engine must report the same with and without collapsing warps
//! (unless a work budget ran out: collapsing counts less work).

use std::collections::BTreeSet;
use std::sync::Arc;

use warplint_analyzer::finding::UnknownReason;
use warplint_analyzer::frontend::cache::ParseCache;
use warplint_analyzer::hardware::Arch;
use warplint_analyzer::symbolic::{analyze_program, AccessReport};
use warplint_analyzer::{analyze, FileAnalysis, Header, Options};
use warplint_lints::{rules, Context, Thresholds};

const ARCHS: [&str; 4] = ["sm_90", "sm_80", "sm_35", "sm_20"];

pub fn run(data: &[u8], headers: Vec<Header>) {
    let Some((&pick, source)) = data.split_first() else {
        return;
    };
    let Ok(arch) = Arch::parse(ARCHS[pick as usize % ARCHS.len()]) else {
        return;
    };
    let Ok(model) = arch.model() else {
        return;
    };
    let mut options = Options::default();
    // nvcc's predefined macros (`__CUDA_ARCH__`, …) for the architecture.
    options.frontend.arch = Some(arch);
    options.frontend.headers = headers;
    let analysis = analyze(source, model.as_ref(), &options);
    if !options.frontend.headers.is_empty() {
        // The run's shared caches (trees, preprocessed headers, kernels analysed), cold then
        // warm, changes nothing: a difference is a crash.
        let seen = |a: &FileAnalysis| {
            (
                format!("{:?}", a.reports),
                format!("{:?}", a.program.notes),
                a.program.skipped_lines.clone(),
            )
        };
        let want = seen(&analysis);
        let mut shared = options.clone();
        shared.frontend.parse_cache = Some(Arc::new(ParseCache::new()));
        // And the kernels it analysed, handed back on the warm pass.
        shared.engine.kernel_memo = Some(Arc::default());
        for pass in ["cold", "warm"] {
            let a = analyze(source, model.as_ref(), &shared);
            assert!(
                seen(&a) == want,
                "the run's cache ({pass}) changed the analysis"
            );
        }
    }
    // Collapsing warps (`symbolic/collapse.rs`) changes no report.
    let mut every_warp = options.engine.clone();
    every_warp.collapse = false;
    let slow = analyze_program(&analysis.program, model.as_ref(), &every_warp);
    let budgets = [
        "MAX_EXECUTIONS_PER_ACCESS",
        "MAX_WORK_PER_ACCESS",
        "MAX_WORK_PER_KERNEL",
    ];
    let budgeted = |r: &AccessReport| {
        matches!(
            &r.unknown_reason,
            Some(UnknownReason::OutOfBudget(b) | UnknownReason::KernelBudgetSpent(b))
                if budgets.contains(&b.name)
        )
    };
    if !analysis.reports.iter().chain(&slow).any(budgeted) {
        assert!(
            format!("{:?}", analysis.reports) == format!("{slow:?}"),
            "collapsing warps changed the reports"
        );
    }
    let thresholds = Thresholds::default();
    let ctx = Context {
        source,
        analysis: &analysis,
        model: model.as_ref(),
        options: &options,
        arch,
        thresholds: &thresholds,
    };
    let selected: BTreeSet<&'static str> = rules().map(|r| r.code).collect();
    let _ = warplint_lints::check(&ctx, &selected);
}
