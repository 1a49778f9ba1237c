//! The lane → bank picture of a conflicting warp: which lanes collide in
//! which bank, as a small table readable in a terminal.

use warplint_analyzer::hardware::{BankUse, MemoryModel, WARP};
use warplint_analyzer::symbolic::WarpSample;

use crate::lane_ranges;

/// Rows shown before the rest is summarised.
const MAX_ROWS: usize = 4;

/// The banks that set the conflict degree in the worst group of lanes.
pub fn worst_banks(model: &dyn MemoryModel, sample: &WarpSample, width: u32) -> Vec<BankUse> {
    let banks = model.shared_banks(&sample.lanes, width);
    let max = banks.iter().map(|b| b.words.len()).max().unwrap_or(0);
    banks.into_iter().filter(|b| b.words.len() == max).collect()
}

/// The table, or `None` when no bank holds more than one word.
pub fn bank_table(model: &dyn MemoryModel, sample: &WarpSample, width: u32) -> Option<String> {
    let worst = worst_banks(model, sample, width);
    let words = worst.first().map(|b| b.words.len()).unwrap_or(0);
    if words < 2 {
        return None;
    }
    // Lanes served in half- or quarter-warps: the table says which.
    let group = model.shared_group(width);
    let grouped = group < WARP;
    let group_name = if group * 2 == WARP { "half" } else { "quarter" };
    let mut out = format!(
        "lanes → banks, warp {} of block ({}, {}, {}){}:\n",
        sample.warp,
        sample.block[0],
        sample.block[1],
        sample.block[2],
        if sample.iterations.is_empty() {
            String::new()
        } else {
            format!(
                ", loop iteration {}",
                sample
                    .iterations
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            )
        }
    );
    if grouped {
        out.push_str(&format!(" {group_name:>7} │ bank │ words │ lanes\n"));
        out.push_str("─────────┼──────┼───────┼──────────────\n");
    } else {
        out.push_str(" bank │ words │ lanes\n");
        out.push_str("──────┼───────┼──────────────\n");
    }
    for b in worst.iter().take(MAX_ROWS) {
        if grouped {
            out.push_str(&format!(
                " {:>7} │ {:>4} │ {:>5} │ {}\n",
                b.group,
                b.bank,
                b.words.len(),
                lane_ranges(b.lanes)
            ));
        } else {
            out.push_str(&format!(
                " {:>4} │ {:>5} │ {}\n",
                b.bank,
                b.words.len(),
                lane_ranges(b.lanes)
            ));
        }
    }
    if worst.len() > MAX_ROWS {
        out.push_str(&format!(
            " … {} more bank{} with {words} words each\n",
            worst.len() - MAX_ROWS,
            if worst.len() - MAX_ROWS == 1 { "" } else { "s" }
        ));
    }
    Some(out.trim_end().to_string())
}
