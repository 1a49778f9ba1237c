//! What the language server shows on hover over an access: its space,
//! width and instruction, its cost (n-way and the lane → bank table of the
//! worst warp, or sectors per request against the ideal), the lanes, the
//! launch it was analysed under, and what it rests on. Worded here, once,
//! from the analysis's facts; `check` keeps these only when asked
//! (`CheckArgs::keep_hovers`).

use warplint_analyzer::finding::Assumption;
use warplint_analyzer::hardware::WARP;
use warplint_analyzer::symbolic::{AccessReport, Cost};
use warplint_analyzer::{FileAnalysis, MemoryModel, Status};
use warplint_lints::{fmt_num, lane_ranges, picture, wording};

/// One access of a file: where it is (bytes of the file) and its hover text
/// (Markdown).
#[derive(Clone, Debug)]
pub struct HoverEntry {
    /// The file the access is in (absolute path).
    pub path: String,
    pub start: usize,
    pub end: usize,
    pub markdown: String,
}

/// The hover of every access in the analysed file itself (not its headers).
pub fn entries(
    analysis: &FileAnalysis,
    model: &dyn MemoryModel,
    arch: &str,
    path: &str,
) -> Vec<HoverEntry> {
    analysis
        .reports
        .iter()
        .filter(|r| r.span.file == 0)
        .map(|r| HoverEntry {
            path: path.to_string(),
            start: r.span.start,
            end: r.span.end,
            markdown: markdown(r, model, arch),
        })
        .collect()
}

/// The hover text of one access.
fn markdown(r: &AccessReport, model: &dyn MemoryModel, arch: &str) -> String {
    let mut out = format!(
        "**{} {} of `{}`** ({} bytes per lane) in `{}`\n\n",
        r.space.name(),
        r.op.name(),
        r.array,
        r.width,
        r.kernel_name
    );
    let [bx, by, bz] = r.block;
    let assumed = |grid: bool| {
        let hit = r.assumptions.iter().any(|a| match a {
            Assumption::Grid { .. } => grid,
            Assumption::DefaultBlock { .. } | Assumption::LaunchBoundsBlock { .. } => !grid,
            _ => false,
        });
        if hit {
            " (assumed)"
        } else {
            ""
        }
    };
    out.push_str(&format!(
        "{arch}, block {bx}x{by}x{bz}{}, grid {}x{}x{}{}\n\n",
        assumed(false),
        r.grid[0],
        r.grid[1],
        r.grid[2],
        assumed(true)
    ));
    match (&r.status, &r.cost) {
        (Status::Unknown, _) | (_, None) => {
            let why = r
                .unknown_reason
                .as_ref()
                .map_or_else(|| "no warp runs it".to_string(), wording::unknown_reason);
            out.push_str(&format!("cost: unknown ({why})\n"));
            return out;
        }
        (_, Some(cost)) => out.push_str(&cost_lines(r, cost, model)),
    }
    let status = match r.status {
        Status::Exact => "exact: holds for every value it depends on",
        _ => "assumed: rests on the values below",
    };
    out.push_str(&format!("\nstatus: {status}\n"));
    for line in warplint_lints::assumption_notes(r) {
        out.push_str(&format!("- {line}\n"));
    }
    out
}

/// The cost, the worst warp's lanes and, for a shared conflict, its banks.
fn cost_lines(r: &AccessReport, cost: &Cost, model: &dyn MemoryModel) -> String {
    let mut out = match cost {
        Cost::Shared(s) => format!(
            "cost: **{}-way** ({} wavefronts per request, {} needed; worst warp {}-way)\n",
            fmt_num(s.ways),
            fmt_num(s.wavefronts),
            fmt_num(s.ideal_wavefronts),
            fmt_num(s.max_ways)
        ),
        Cost::Global(g) if model.sector_based() => format!(
            "cost: **{} sectors** per request, {} needed ({}% efficiency)\n",
            fmt_num(g.sectors),
            fmt_num(g.ideal_sectors),
            fmt_num(if g.sectors > 0.0 {
                100.0 * g.ideal_sectors / g.sectors
            } else {
                100.0
            })
        ),
        Cost::Global(g) => format!(
            "cost: **{} transactions** ({} bytes) per request\n",
            fmt_num(g.transactions),
            fmt_num(g.bytes)
        ),
        Cost::Constant(c) => format!(
            "cost: **{} serialised requests** per instruction\n",
            fmt_num(c.requests)
        ),
    };
    let Some(w) = &r.worst else { return out };
    let active = (0..WARP)
        .filter(|&l| w.lanes[l].is_some())
        .fold(0u32, |m, l| m | 1 << l);
    out.push_str(&format!(
        "\nworst warp: warp {} of block ({}, {}, {}), lanes {}\n",
        w.warp,
        w.block[0],
        w.block[1],
        w.block[2],
        lane_ranges(active)
    ));
    if matches!(cost, Cost::Shared(_)) {
        if let Some(table) = picture::bank_table(model, w, r.width) {
            out.push_str(&format!("\n```text\n{}\n```\n", table.trim_end()));
        }
    }
    out
}
