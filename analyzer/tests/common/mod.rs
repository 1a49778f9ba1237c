//! What the analyzer's integration tests share: analysing a source with
//! the default options on the modern model, finding a report, reading its
//! cost (each test file uses some of them).
#![allow(dead_code)]

use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::Op;
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, AccessReport, FileAnalysis, Options};

pub fn run(src: &str) -> FileAnalysis {
    analyze(src.as_bytes(), &Modern, &Options::default())
}

/// The first report of an `op` of `array`.
pub fn find<'a>(a: &'a FileAnalysis, array: &str, op: Op) -> &'a AccessReport {
    a.reports
        .iter()
        .find(|r| r.array == array && r.op == op)
        .unwrap_or_else(|| {
            panic!(
                "no {op:?} of `{array}` in {:#?}",
                a.reports
                    .iter()
                    .map(|r| (&r.array, r.op))
                    .collect::<Vec<_>>()
            )
        })
}

/// A shared access's n-way degree (mean over executions).
pub fn ways(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.ways,
        other => panic!(
            "`{}`: not a shared cost: {other:?} ({:?})",
            r.text, r.unknown_reason
        ),
    }
}

/// A global access's sectors per request (mean over executions).
pub fn sectors(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Global(g)) => g.sectors,
        other => panic!(
            "`{}`: not a global cost: {other:?} ({:?})",
            r.text, r.unknown_reason
        ),
    }
}
