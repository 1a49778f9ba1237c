//! Compute capability 3.x (seed 000 F.5, seed 004 K.3).
//!
//! Shared memory: 32 banks, 64 bits per bank per clock, in one of two
//! addressing modes: 64-bit mode (successive 64-bit words map to successive
//! banks; threads in one 64-bit word never conflict, F.5.3.1) or 32-bit mode
//! (successive 32-bit words; words i and j = i + 32 in one 64-word aligned
//! segment do not conflict either, F.5.3.2). Up to 8 bytes per lane a warp
//! is served at once; 16-byte accesses per half-warp.
//!
//! Global memory: as 2.x, cached in L2 only (32-byte segments) by default
//! for global loads on 3.x, in L1 (128-byte lines) when configured (K.3.2).

use super::fermi::{cached_global, global_line, global_mode};
use super::{
    bank_uses, distinct_addresses, BankUse, GlobalCost, Lanes, MemoryModel, SharedCost, WARP,
};
use crate::ir::Space;

pub const BANKS: i64 = 32;

#[derive(Clone, Copy, Debug)]
pub struct Kepler {
    /// 4 (32-bit mode, the default) or 8 (64-bit mode).
    pub bank_bytes: u32,
    pub l1_cached: bool,
}

impl Kepler {
    /// The unit two lanes must share to be served together, and its bank.
    fn key(&self, word4: i64) -> (i64, i64) {
        if self.bank_bytes == 8 {
            let w8 = word4.div_euclid(2);
            (w8, w8.rem_euclid(BANKS))
        } else {
            // Words i and i + 32 of one 64-word segment share a slot.
            let key = word4.div_euclid(64) * 64 + word4.rem_euclid(32);
            (key, word4.rem_euclid(BANKS))
        }
    }
}

impl MemoryModel for Kepler {
    fn name(&self) -> &'static str {
        "compute capability 3.x"
    }

    fn shared(&self, lanes: &Lanes, width: u32) -> SharedCost {
        let group = self.shared_group(width);
        let (mut wavefronts, mut ideal) = (0, 0);
        for g in lanes.chunks(group) {
            let mut keys: Vec<(i64, i64)> = Vec::new();
            for a in g.iter().flatten() {
                let (f, l) = super::word_range(*a, width);
                keys.extend((f..=l).map(|w| self.key(w)));
            }
            if keys.is_empty() {
                continue;
            }
            keys.sort_unstable();
            keys.dedup();
            let mut per = [0u32; BANKS as usize];
            for (_, bank) in keys {
                per[bank as usize] += 1;
            }
            ideal += 1;
            wavefronts += per.iter().copied().max().unwrap_or(0);
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
        bank_uses(
            lanes,
            width,
            self.shared_group(width),
            BANKS,
            self.bank_bytes as i64,
        )
    }

    fn shared_group(&self, width: u32) -> usize {
        if width > 8 {
            WARP / 2
        } else {
            WARP
        }
    }

    fn bank_row_bytes(&self) -> u64 {
        BANKS as u64 * u64::from(self.bank_bytes)
    }

    fn shift_period(&self, space: Space, _width: u32) -> u64 {
        match space {
            // A shift by 8 bytes keeps both modes' pairing; 256 keeps the
            // 64-word segments of the 32-bit mode.
            Space::Shared => 256,
            Space::Global | Space::Local => global_line(self.l1_cached),
            Space::Constant => 1,
            Space::Generic => super::NO_HARMLESS_SHIFT,
        }
    }

    fn sector_based(&self) -> bool {
        false
    }

    fn mode(&self, space: Space) -> Option<String> {
        match space {
            Space::Shared => Some(format!("{}-byte banks", self.bank_bytes)),
            Space::Global | Space::Local => Some(global_mode(self.l1_cached)),
            Space::Constant | Space::Generic => None,
        }
    }
}
