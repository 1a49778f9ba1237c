//! Brute-force reference models, written straight from the spec's wording
//! with no shortcuts: every byte of every lane is mapped to its word, bank
//! or sector. Property tests check the fast models against these.

use std::collections::{BTreeMap, BTreeSet};

use super::{Lanes, WARP};

/// Shared memory, compute capability 5.0+: for each group of lanes served
/// together (32 lanes for <= 4 bytes, half-warps for 8, quarter-warps for
/// 16), the largest number of distinct 4-byte words in any one of the 32
/// banks; summed over groups. The ideal is one wavefront per group with an
/// active lane. For 16 bytes, the two quarter-warps of a half-warp that
/// are both active, ask for no more than 32 words counted per quarter, and
/// put no two distinct words in one bank take one wavefront (ideal one).
pub fn shared_modern(lanes: &Lanes, width: u32) -> (u32, u32) {
    let group = if width <= 4 {
        32
    } else if width <= 8 {
        16
    } else {
        8
    };
    // Each group's words, by bank.
    let banks_of = |g: usize| {
        let mut banks: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for a in lanes[g * group..(g + 1) * group].iter().flatten() {
            for byte in *a..*a + width as i64 {
                let word = byte.div_euclid(4);
                banks.entry(word.rem_euclid(32)).or_default().insert(word);
            }
        }
        banks
    };
    let words = |b: &BTreeMap<i64, BTreeSet<i64>>| b.values().map(BTreeSet::len).sum::<usize>();
    let (mut total, mut groups) = (0, 0);
    let mut g = 0;
    while g < WARP / group {
        let banks = banks_of(g);
        if group == 8 && g % 2 == 0 {
            let next = banks_of(g + 1);
            if !banks.is_empty() && !next.is_empty() && words(&banks) + words(&next) <= 32 {
                let mut union = banks.clone();
                for (bank, ws) in &next {
                    union.entry(*bank).or_default().extend(ws.iter().copied());
                }
                if union.values().all(|s| s.len() <= 1) {
                    total += 1;
                    groups += 1;
                    g += 2;
                    continue;
                }
            }
        }
        if !banks.is_empty() {
            groups += 1;
        }
        total += banks.values().map(|s| s.len() as u32).max().unwrap_or(0);
        g += 1;
    }
    (total, groups)
}

/// Global memory, compute capability 5.0+: distinct 32-byte sectors holding
/// any byte an active lane touches.
pub fn global_modern(lanes: &Lanes, width: u32) -> u32 {
    let mut sectors = BTreeSet::new();
    for a in lanes.iter().flatten() {
        for byte in *a..*a + width as i64 {
            sectors.insert(byte.div_euclid(32));
        }
    }
    sectors.len() as u32
}
