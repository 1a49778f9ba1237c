//! Compute capability 2.x (seed 000 F.4).
//!
//! Shared memory: 32 banks of 4 bytes, whole-warp requests, any number of
//! words multicast (F.4.3); 64-bit accesses conflict only between threads
//! of one half-warp (F.4.3.2); 128-bit accesses: 1 + the most threads of a
//! quarter-warp with different addresses in one bank.
//!
//! Global memory: 128-byte L1 lines (`-dlcm=ca`, the default) or 32-byte L2
//! segments (`-dlcm=cg`); 8-byte words are requested per half-warp, 16-byte
//! words per quarter-warp, each broken into line requests (F.4.2).

use super::{
    bank_uses, distinct_addresses, ideal_sectors, word_range, BankUse, GlobalCost, Lanes,
    MemoryModel, SharedCost, SECTOR, WARP,
};
use crate::ir::Space;

pub const BANKS: i64 = 32;

#[derive(Clone, Copy, Debug)]
pub struct Fermi {
    /// Cached in L1: 128-byte transactions; else L2 only: 32-byte ones.
    pub l1_cached: bool,
}

/// The largest number of distinct 4-byte words any of the 32 banks holds
/// for these lanes; `None` when no lane is active.
pub(crate) fn max_words_per_bank(lanes: &[Option<i64>], width: u32, banks: i64) -> Option<u32> {
    let mut words: Vec<i64> = Vec::new();
    for a in lanes.iter().flatten() {
        let (f, l) = word_range(*a, width);
        words.extend(f..=l);
    }
    if words.is_empty() {
        return None;
    }
    words.sort_unstable();
    words.dedup();
    let mut per = vec![0u32; banks as usize];
    for w in words {
        per[w.rem_euclid(banks) as usize] += 1;
    }
    per.into_iter().max()
}

/// Transactions of `line` bytes for requests of `group` lanes.
pub(crate) fn line_transactions(lanes: &Lanes, width: u32, group: usize, line: i64) -> u32 {
    let w = width.max(1) as i64;
    let mut total = 0;
    for g in lanes.chunks(group) {
        let mut ls: Vec<i64> = Vec::new();
        for a in g.iter().flatten() {
            ls.extend(a.div_euclid(line)..=a.saturating_add(w - 1).div_euclid(line));
        }
        ls.sort_unstable();
        ls.dedup();
        total += ls.len() as u32;
    }
    total
}

/// 2.x/3.x global cost: requests per warp, half- or quarter-warp, each
/// broken into 128-byte L1 lines or 32-byte L2 segments.
pub(crate) fn cached_global(lanes: &Lanes, width: u32, l1_cached: bool) -> GlobalCost {
    let line = global_line(l1_cached);
    let transactions = line_transactions(lanes, width, request_group(width), line as i64);
    let bytes = transactions * line as u32;
    GlobalCost {
        sectors: bytes.div_ceil(SECTOR as u32),
        ideal: ideal_sectors(lanes, width),
        transactions,
        bytes,
    }
}

/// The unit a 2.x/3.x global load is served in: a 128-byte L1 line or a
/// 32-byte L2 segment.
pub(crate) fn global_line(l1_cached: bool) -> u64 {
    if l1_cached {
        128
    } else {
        32
    }
}

/// How 2.x/3.x global loads are cached, as the diagnostics say it.
pub(crate) fn global_mode(l1_cached: bool) -> String {
    if l1_cached {
        "L1-cached global loads".into()
    } else {
        "L2-only global loads".into()
    }
}

/// Lanes per request for an access of `width` bytes on 2.x (global and
/// shared) and 3.x (global).
pub(crate) fn request_group(width: u32) -> usize {
    match width {
        0..=4 => WARP,
        5..=8 => 16,
        _ => 8,
    }
}

impl MemoryModel for Fermi {
    fn name(&self) -> &'static str {
        "compute capability 2.x"
    }

    fn shared(&self, lanes: &Lanes, width: u32) -> SharedCost {
        let group = request_group(width);
        let extra = u32::from(width > 8);
        let (mut wavefronts, mut ideal) = (0, 0);
        for g in lanes.chunks(group) {
            if let Some(m) = max_words_per_bank(g, width, BANKS) {
                ideal += 1;
                wavefronts += m + extra;
            }
        }
        SharedCost { wavefronts, ideal }
    }

    fn global(&self, lanes: &Lanes, width: u32) -> GlobalCost {
        cached_global(lanes, width, self.l1_cached)
    }

    fn constant(&self, lanes: &Lanes, _width: u32) -> u32 {
        distinct_addresses(lanes)
    }

    fn shared_banks(&self, lanes: &Lanes, width: u32) -> Vec<BankUse> {
        bank_uses(lanes, width, request_group(width), BANKS, 4)
    }

    fn shared_group(&self, width: u32) -> usize {
        request_group(width)
    }

    fn bank_row_bytes(&self) -> u64 {
        BANKS as u64 * 4
    }

    fn shift_period(&self, space: Space, _width: u32) -> u64 {
        match space {
            Space::Shared => 4,
            Space::Global | Space::Local => global_line(self.l1_cached),
            Space::Constant => 1,
            Space::Generic => super::NO_HARMLESS_SHIFT,
        }
    }

    fn sector_based(&self) -> bool {
        false
    }

    fn mode(&self, space: Space) -> Option<String> {
        matches!(space, Space::Global | Space::Local).then(|| global_mode(self.l1_cached))
    }
}
