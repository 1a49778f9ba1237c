//! Several `--arch`es in one run: each site is reported once, naming the
//! architectures that share its outcome and the others' outcomes after it.

use warplint_analyzer::ir::Space;
use warplint_lints::Diagnostic;

use super::file::lint;
use super::inputs::Selected;
use crate::settings::Settings;

/// Diagnostics for every selected architecture, one per site: the
/// architectures where the outcome is the same are named together, the
/// others' outcomes follow ("… — 16-way on sm_35 (4-byte banks)").
pub(super) fn across_archs(
    bytes: &[u8],
    options: &warplint_analyzer::Options,
    settings: &Settings,
    selected: &Selected,
    first: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    // The model settings that matter for a rule's memory space.
    let label = |a: &warplint_analyzer::Arch, code: &str| {
        let space = if code.starts_with("SM") {
            Space::Shared
        } else {
            Space::Global
        };
        match settings.model(*a).ok().and_then(|m| m.mode(space)) {
            Some(mode) => format!("{a} ({mode})"),
            None => a.to_string(),
        }
    };
    let mut per_arch: Vec<(warplint_analyzer::Arch, Vec<Diagnostic>)> =
        vec![(settings.archs[0], first)];
    // The SASS is the first architecture's.
    let mut options = options.clone();
    options.sass = None;
    let options = &options;
    for a in &settings.archs[1..] {
        let Ok(model) = settings.model(*a) else {
            continue;
        };
        let diagnostics = lint(
            bytes,
            options,
            *a,
            &settings.thresholds,
            model.as_ref(),
            selected,
        );
        per_arch.push((*a, diagnostics.1));
    }
    type Site = (&'static str, warplint_analyzer::ir::Span, String, String);
    let site = |d: &Diagnostic| -> Site {
        (
            d.code,
            d.span,
            d.facts.kernel.clone(),
            d.facts.array.clone(),
        )
    };
    let outcome = |d: &Diagnostic| match (d.facts.max_ways, d.facts.sectors) {
        (Some(w), _) => format!("{}-way", warplint_lints::fmt_num(w)),
        (_, Some(s)) => format!("{} sectors", warplint_lints::fmt_num(s)),
        // A finding of no cost figure (RL001) is its message, less the
        // architecture it names: equal ones group.
        _ => d.message.replacen(&format!(" on {}", d.facts.arch), "", 1),
    };
    let mut sites: Vec<Site> = Vec::new();
    for (_, ds) in &per_arch {
        for d in ds {
            if !sites.contains(&site(d)) {
                sites.push(site(d));
            }
        }
    }
    let mut out = Vec::new();
    for key in sites {
        // (outcome, architectures, a diagnostic with that outcome)
        let mut groups: Vec<(String, Vec<String>, Option<&Diagnostic>)> = Vec::new();
        for (arch, ds) in &per_arch {
            let d = ds.iter().find(|d| site(d) == key);
            let o = d.map(outcome).unwrap_or_else(|| "clean".into());
            let name = label(arch, key.0);
            match groups.iter_mut().find(|g| g.0 == o) {
                Some(g) => g.1.push(name),
                None => groups.push((o, vec![name], d)),
            }
        }
        let Some(primary) = groups.iter().position(|g| g.2.is_some()) else {
            continue;
        };
        let (_, archs, d) = &groups[primary];
        let Some(d) = d else { continue };
        let mut m = (*d).clone();
        let names = archs.join(", ");
        if m.message.contains(&d.facts.arch) {
            m.message = m.message.replacen(&d.facts.arch, &names, 1);
        } else {
            m.message = format!("{} on {names}", m.message);
        }
        // Machine outputs name the architectures without their modes.
        m.facts.arch = names;
        let others: Vec<String> = groups
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != primary)
            .map(|(_, (o, a, _))| format!("{o} on {}", a.join(", ")))
            .collect();
        if !others.is_empty() {
            m.message = format!("{} — {}", m.message, others.join("; "));
        }
        out.push(m);
    }
    out.sort_by(|a, b| (a.span.start, a.code, &a.message).cmp(&(b.span.start, b.code, &b.message)));
    out
}
