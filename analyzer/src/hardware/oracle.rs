//! Brute-force reference models, written straight from the spec's wording
//! with no shortcuts: every byte of every lane is mapped to its word, bank
//! or sector. Property tests check the fast models against these.

use std::collections::{BTreeMap, BTreeSet};

use super::{Lanes, WARP};

/// Shared memory, compute capability 5.0+: for each group of lanes served
/// together (32 lanes for <= 4 bytes, half-warps for 8, quarter-warps for
/// 16), the largest number of distinct 4-byte words in any one of the 32
/// banks; summed over groups. The ideal is one wavefront per group with an
/// active lane.
pub fn shared_modern(lanes: &Lanes, width: u32) -> (u32, u32) {
    let group = if width <= 4 {
        32
    } else if width <= 8 {
        16
    } else {
        8
    };
    let (mut total, mut groups) = (0, 0);
    for g in 0..WARP / group {
        if lanes[g * group..(g + 1) * group]
            .iter()
            .any(|a| a.is_some())
        {
            groups += 1;
        }
        let mut banks: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for a in lanes[g * group..(g + 1) * group].iter().flatten() {
            let a = *a;
            {
                for byte in a..a + width as i64 {
                    let word = byte.div_euclid(4);
                    banks.entry(word.rem_euclid(32)).or_default().insert(word);
                }
            }
        }
        total += banks.values().map(|s| s.len() as u32).max().unwrap_or(0);
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
