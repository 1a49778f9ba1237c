//! Compute capability 5.0 and later (Maxwell … Hopper), measured on an H200.
//!
//! Shared memory: 32 banks of 4 bytes; lanes touching the same word never
//! conflict; 8-byte accesses are served per half-warp and 16-byte ones per
//! quarter-warp (the two of a half-warp together when they fit one
//! conflict-free wavefront); wavefronts = sum over those groups of the
//! largest number of distinct words any bank holds. Global memory: 32-byte
//! sectors.

use super::{
    bank_uses, ideal_sectors, word_range, BankUse, GlobalCost, Lanes, MemoryModel, SharedCost,
    SECTOR,
};
use crate::ir::Space;

pub const BANKS: usize = 32;

#[derive(Clone, Copy, Debug, Default)]
pub struct Modern;

/// Lanes per group served together for an access of `width` bytes.
pub fn group_size(width: u32) -> usize {
    match width {
        0..=4 => 32,
        5..=8 => 16,
        _ => 8,
    }
}

/// The largest number of distinct words (`words` holds no repeats) any
/// bank holds.
fn conflict_degree<'a>(words: impl Iterator<Item = &'a i64>) -> u32 {
    let mut per_bank = [0u32; BANKS];
    for w in words {
        per_bank[w.rem_euclid(BANKS as i64) as usize] += 1;
    }
    per_bank.iter().copied().max().unwrap_or(0)
}

/// Appends the distinct words the active lanes of `group` touch to `out`,
/// sorted; returns how many.
fn group_words(group: &[Option<i64>], width: u32, out: &mut Vec<i64>) -> usize {
    let start = out.len();
    for a in group.iter().flatten() {
        let (first, last) = word_range(*a, width);
        out.extend(first..=last);
    }
    out[start..].sort_unstable();
    let mut kept = start;
    for r in start..out.len() {
        if kept == start || out[r] != out[kept - 1] {
            out[kept] = out[r];
            kept += 1;
        }
    }
    out.truncate(kept);
    kept - start
}

/// Whether two quarter-warps (their distinct words, sorted) are served
/// together in one wavefront: both active, at most a wavefront of words
/// counted per quarter, and no bank holding two distinct words of the two.
fn half_warp_together(a: &[i64], b: &[i64]) -> bool {
    if a.is_empty() || b.is_empty() || a.len() + b.len() > BANKS {
        return false;
    }
    let own = b.iter().filter(|w| a.binary_search(w).is_err());
    conflict_degree(a.iter().chain(own)) == 1
}

impl MemoryModel for Modern {
    fn name(&self) -> &'static str {
        "compute capability 5.0+"
    }

    fn shared(&self, lanes: &Lanes, width: u32) -> SharedCost {
        let gsize = group_size(width);
        // Measured (H200): a group with no active lane takes no wavefront,
        // and Nsight's ideal counts only the groups with an active lane.
        let mut ideal = 0;
        let mut wavefronts = 0;
        // One group's distinct words, or a half-warp's two quarters' (at
        // most 8 lanes x 4 words, 16 x 2 or 32 x 1 a group; more only for
        // odd widths that straddle words).
        let mut words: Vec<i64> = Vec::with_capacity(64);
        let mut groups = lanes.chunks(gsize);
        while let Some(group) = groups.next() {
            words.clear();
            let n = group_words(group, width, &mut words);
            // 16 bytes: the two quarter-warps of a half-warp are served in
            // one wavefront when together they ask for at most a wavefront
            // of words (128 bytes, counted per quarter) and no bank holds
            // two of them (measured: `fixtures/groundtruth/sm_90/q16.cu`).
            let next = if gsize == 8 { groups.next() } else { None };
            if let Some(next) = next {
                group_words(next, width, &mut words);
                let (a, b) = words.split_at(n);
                if half_warp_together(a, b) {
                    wavefronts += 1;
                    ideal += 1;
                    continue;
                }
            }
            for part in [&words[..n], &words[n..]] {
                if !part.is_empty() {
                    ideal += 1;
                    wavefronts += conflict_degree(part.iter());
                }
            }
        }
        SharedCost { wavefronts, ideal }
    }

    fn global(&self, lanes: &Lanes, width: u32) -> GlobalCost {
        let w = width.max(1) as i64;
        let mut sectors: Vec<i64> = Vec::with_capacity(64);
        for a in lanes.iter().flatten() {
            sectors.extend(a.div_euclid(SECTOR)..=a.saturating_add(w - 1).div_euclid(SECTOR));
        }
        sectors.sort_unstable();
        sectors.dedup();
        let n = sectors.len() as u32;
        GlobalCost {
            sectors: n,
            ideal: ideal_sectors(lanes, width),
            transactions: n,
            bytes: n * SECTOR as u32,
        }
    }

    fn shared_banks(&self, lanes: &Lanes, width: u32) -> Vec<BankUse> {
        bank_uses(lanes, width, group_size(width), BANKS as i64, 4)
    }

    fn shared_group(&self, width: u32) -> usize {
        group_size(width)
    }

    fn bank_row_bytes(&self) -> u64 {
        BANKS as u64 * 4
    }

    fn shift_period(&self, space: Space, _width: u32) -> u64 {
        match space {
            Space::Shared => 4,
            Space::Global | Space::Local => SECTOR as u64,
            Space::Constant => 1,
            Space::Generic => super::NO_HARMLESS_SHIFT,
        }
    }
}
