//! The whole pipeline on one input: front end, engine, every lint (fix
//! search included), for the architecture the first byte picks.

use std::collections::BTreeSet;

use warplint_analyzer::hardware::Arch;
use warplint_analyzer::{analyze, Header, Options};
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
    options.frontend.headers = headers;
    let analysis = analyze(source, model.as_ref(), &options);
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
