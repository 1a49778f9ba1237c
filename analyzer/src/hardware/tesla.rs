//! Compute capability 1.x (seed 000 F.3).
//!
//! Shared memory: 16 banks of 4 bytes; a warp's request is two half-warp
//! requests with no conflicts between them; each is served in steps, one
//! broadcast word per step plus one thread per other bank (F.3.3.2); 8- and
//! 16-bit accesses conflict within a word (F.3.3.3); wider accesses are
//! split into 32-bit requests (F.3.3.4).
//!
//! Global memory, per half-warp: on 1.0/1.1 one 64-byte (4-byte words),
//! 128-byte (8-byte) or two 128-byte (16-byte) transactions when the k-th
//! thread accesses the k-th word of one aligned segment, else one 32-byte
//! transaction per thread (F.3.2.1); on 1.2/1.3 the segment protocol with
//! 128 → 64 → 32-byte reduction (F.3.2.2).

use super::{
    bank_uses, distinct_addresses, ideal_sectors, BankUse, GlobalCost, Lanes, MemoryModel,
    SharedCost, SECTOR,
};
use crate::ir::Space;

pub const BANKS: i64 = 16;
pub const HALF: usize = 16;

#[derive(Clone, Copy, Debug)]
pub struct Tesla {
    /// 1.2/1.3's segment protocol (else 1.0/1.1's strict coalescing).
    pub segments: bool,
}

/// Steps to serve one half-warp's 32-bit request (F.3.3.2): each step picks
/// a broadcast word (the one most remaining threads ask for; the guide
/// leaves the choice open) and serves every thread in it plus one thread
/// of every other bank.
pub fn broadcast_steps(addrs: &[(usize, i64)]) -> u32 {
    let mut remaining: Vec<(usize, i64)> = addrs.to_vec();
    let mut steps = 0;
    while !remaining.is_empty() {
        steps += 1;
        let mut words: Vec<i64> = remaining.iter().map(|(_, a)| a.div_euclid(4)).collect();
        words.sort_unstable();
        let mut best = (0usize, i64::MAX);
        let mut i = 0;
        while i < words.len() {
            let mut j = i;
            while j < words.len() && words[j] == words[i] {
                j += 1;
            }
            if j - i > best.0 {
                best = (j - i, words[i]);
            }
            i = j;
        }
        let bword = best.1;
        let bbank = bword.rem_euclid(BANKS);
        let mut served_banks: Vec<i64> = Vec::new();
        remaining.retain(|(_, a)| {
            let w = a.div_euclid(4);
            if w == bword {
                return false;
            }
            let bank = w.rem_euclid(BANKS);
            if bank != bbank && !served_banks.contains(&bank) {
                served_banks.push(bank);
                return false;
            }
            true
        });
    }
    steps
}

/// 1.0/1.1 (F.3.2.1): the transactions of one half-warp, with their bytes.
pub fn strict_half(lanes: &[Option<i64>], width: u32) -> (u32, u32) {
    let active: Vec<(usize, i64)> = lanes
        .iter()
        .enumerate()
        .filter_map(|(k, a)| a.map(|a| (k, a)))
        .collect();
    if active.is_empty() {
        return (0, 0);
    }
    let w = width as i64;
    let (align, coalesced) = match width {
        4 => (64, (1, 64)),
        8 => (128, (1, 128)),
        16 => (128, (2, 256)),
        _ => (0, (0, 0)),
    };
    if align > 0 {
        let (k0, a0) = active[0];
        // Addresses near the ends of the range (a random kernel's) have
        // no lane-0 start: not sequential.
        let start = a0.checked_sub(k0 as i64 * w);
        let sequential = start.is_some_and(|start| {
            start.rem_euclid(align) == 0
                && active
                    .iter()
                    .all(|(k, a)| start.checked_add(*k as i64 * w) == Some(*a))
        });
        if sequential {
            return coalesced;
        }
    }
    let n = active.len() as u32;
    (n, n * 32)
}

/// 1.2/1.3 (F.3.2.2): the segment protocol for one half-warp.
pub fn segments_half(lanes: &[Option<i64>], width: u32) -> (u32, u32) {
    let seg: i64 = match width {
        1 => 32,
        2 => 64,
        _ => 128,
    };
    let w = width.max(1) as i64;
    let mut remaining: Vec<i64> = lanes.iter().flatten().copied().collect();
    let (mut transactions, mut bytes) = (0u32, 0u32);
    while let Some(&lowest) = remaining.first() {
        let start = lowest.div_euclid(seg) * seg;
        let served: Vec<i64> = remaining
            .iter()
            .copied()
            .filter(|a| *a >= start && *a < start + seg)
            .collect();
        let lo = served.iter().copied().min().unwrap_or(start);
        let hi = served.iter().map(|a| a + w).max().unwrap_or(start + seg);
        let (mut s, mut size) = (start, seg);
        while size > 32 {
            let half = size / 2;
            if hi <= s + half {
                size = half;
            } else if lo >= s + half {
                s += half;
                size = half;
            } else {
                break;
            }
        }
        transactions += 1;
        bytes += size as u32;
        remaining.retain(|a| !(*a >= start && *a < start + seg));
    }
    (transactions, bytes)
}

impl MemoryModel for Tesla {
    fn name(&self) -> &'static str {
        if self.segments {
            "compute capability 1.2/1.3"
        } else {
            "compute capability 1.0/1.1"
        }
    }

    fn shared(&self, lanes: &Lanes, width: u32) -> SharedCost {
        // Wider accesses become 32-bit requests (F.3.3.4).
        let parts = (width.max(4) / 4) as i64;
        let mut wavefronts = 0;
        let mut ideal = 0;
        for p in 0..parts {
            for half in lanes.chunks(HALF) {
                let addrs: Vec<(usize, i64)> = half
                    .iter()
                    .enumerate()
                    .filter_map(|(l, a)| a.map(|a| (l, if width > 4 { a + 4 * p } else { a })))
                    .collect();
                if addrs.is_empty() {
                    continue;
                }
                ideal += 1;
                wavefronts += broadcast_steps(&addrs);
            }
        }
        SharedCost { wavefronts, ideal }
    }

    fn global(&self, lanes: &Lanes, width: u32) -> GlobalCost {
        let (mut transactions, mut bytes) = (0, 0);
        for half in lanes.chunks(HALF) {
            let (t, b) = if self.segments {
                segments_half(half, width)
            } else {
                strict_half(half, width)
            };
            transactions += t;
            bytes += b;
        }
        GlobalCost {
            sectors: bytes.div_ceil(SECTOR as u32),
            ideal: ideal_sectors(lanes, width),
            transactions,
            bytes,
        }
    }

    fn constant(&self, lanes: &Lanes, _width: u32) -> u32 {
        lanes.chunks(HALF).map(distinct_addresses).sum()
    }

    fn shared_banks(&self, lanes: &Lanes, width: u32) -> Vec<BankUse> {
        bank_uses(lanes, width.min(4), HALF, BANKS, 4)
    }

    fn shared_group(&self, _width: u32) -> usize {
        HALF
    }

    fn bank_row_bytes(&self) -> u64 {
        BANKS as u64 * 4
    }

    fn shift_period(&self, space: Space, _width: u32) -> u64 {
        match space {
            Space::Shared => 4,
            // Segments up to 256 bytes (two 128-byte transactions).
            Space::Global | Space::Local => 256,
            Space::Constant => 1,
            Space::Generic => super::NO_HARMLESS_SHIFT,
        }
    }

    fn sector_based(&self) -> bool {
        false
    }
}
