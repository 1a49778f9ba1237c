//! Hardware cost models: what one warp-level memory instruction costs,
//! given the byte address each active lane touches.
//!
//! Every model implements [`MemoryModel`]; [`Arch::model`] picks one per
//! compute capability. The rules are those of `shared/spec/memory-model.md`.

mod fermi;
mod kepler;
mod modern;
pub mod oracle;
mod tesla;

pub use fermi::Fermi;
pub use kepler::Kepler;
pub use modern::Modern;
pub use tesla::Tesla;

use std::fmt;

use crate::ir::Space;

/// Lanes of a warp.
pub const WARP: usize = 32;

/// The shift period of memory no model costs ([`Space::Generic`]): no
/// shift is known to leave its cost unchanged.
pub(crate) const NO_HARMLESS_SHIFT: u64 = 1 << 40;

/// Bytes of a sector, the unit global costs are counted in
/// ([`GlobalCost::sectors`]).
pub(crate) const SECTOR: i64 = 32;

/// Byte address touched by each lane; `None` for an inactive lane.
pub type Lanes = [Option<i64>; WARP];

/// Shared-memory cost of one warp-level instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedCost {
    pub wavefronts: u32,
    /// Wavefronts a conflict-free access of this width needs.
    pub ideal: u32,
}

/// Global-memory cost of one warp-level instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalCost {
    /// Bytes moved in 32-byte units: distinct sectors on sector-based
    /// architectures, transaction bytes / 32 on legacy ones.
    pub sectors: u32,
    /// Sectors a perfectly packed, aligned warp would need.
    pub ideal: u32,
    /// Memory transactions (summed over the half- or quarter-warp requests
    /// an architecture splits a warp into).
    pub transactions: u32,
    /// Bytes those transactions move.
    pub bytes: u32,
}

/// Bytes the active lanes ask for (lanes reading one address share it),
/// in 32-byte units rounded up: the ideal of every global model.
pub(crate) fn ideal_sectors(lanes: &Lanes, width: u32) -> u32 {
    // At most 32 addresses: sorted in place on the stack, no allocation.
    let mut addrs = [0i64; WARP];
    let mut n = 0;
    for a in lanes.iter().flatten() {
        addrs[n] = *a;
        n += 1;
    }
    let addrs = &mut addrs[..n];
    addrs.sort_unstable();
    let distinct = addrs
        .iter()
        .enumerate()
        .filter(|(i, a)| *i == 0 || addrs[i - 1] != **a)
        .count();
    ((distinct as i64 * width.max(1) as i64 + SECTOR - 1) / SECTOR) as u32
}

/// How one bank of one group of lanes served together is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankUse {
    /// Group of lanes served together (0 for 4-byte accesses; the half- or
    /// quarter-warp for 8- and 16-byte ones).
    pub group: u32,
    pub bank: u32,
    /// Distinct words the bank must deliver (sorted).
    pub words: Vec<i64>,
    /// Lanes touching the bank.
    pub lanes: u32,
}

/// The cost model of one architecture family.
pub trait MemoryModel: Send + Sync + std::fmt::Debug {
    /// Human name, e.g. "compute capability 5.0+".
    fn name(&self) -> &'static str;
    fn shared(&self, lanes: &Lanes, width: u32) -> SharedCost;
    fn global(&self, lanes: &Lanes, width: u32) -> GlobalCost;
    /// Serialised requests of a `__constant__` access: one per distinct address.
    fn constant(&self, lanes: &Lanes, width: u32) -> u32 {
        let _ = width;
        let mut v: Vec<i64> = lanes.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v.len() as u32
    }
    /// Which lanes use which bank, for explaining a conflict.
    fn shared_banks(&self, lanes: &Lanes, width: u32) -> Vec<BankUse>;
    /// Lanes served together by a shared access of `width` bytes (the
    /// warp, a half- or a quarter-warp): the groups of [`Self::shared_banks`].
    fn shared_group(&self, width: u32) -> usize;
    /// Bytes of one sweep of the shared-memory banks (the number of banks
    /// times the bank width): two addresses this far apart are in one bank.
    fn bank_row_bytes(&self) -> u64;
    /// Bytes of the unit [`GlobalCost::sectors`] counts in: the 32-byte
    /// sector (the legacy models count their transactions' bytes in it).
    fn sector_bytes(&self) -> u32 {
        SECTOR as u32
    }
    /// Adding the same multiple of this many bytes to every lane's address
    /// leaves the cost in `space` unchanged (lets the engine reuse costs).
    fn shift_period(&self, space: Space, width: u32) -> u64;
    /// Whether global costs are 32-byte sectors (5.0+) rather than the
    /// transactions of the legacy architectures.
    fn sector_based(&self) -> bool {
        true
    }
    /// A short description of the model's settings that matter for
    /// accesses to `space`, for messages (e.g. "8-byte banks").
    fn mode(&self, space: Space) -> Option<String> {
        let _ = space;
        None
    }
}

/// Settings of the legacy models that are set outside the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelOptions {
    /// Shared-memory bank width on 3.x (`cudaSharedMemBankSizeFourByte` or
    /// `…EightByte`): 4 (default) or 8.
    pub bank_bytes: Option<u32>,
    /// Global loads cached in L1 (128-byte lines) rather than L2 only
    /// (32-byte segments). Default: L1 on 2.x (`-dlcm=ca`), L2 on 3.x.
    pub l1_cached: Option<bool>,
}

/// Architecture limits later lints need (seed 000 Table F-2, seed 004
/// Table 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub warp_size: u32,
    pub banks: u32,
    /// Static shared memory per block, bytes.
    pub static_shared_per_block: u32,
    /// Largest shared memory per block with an opt-in, bytes.
    pub max_shared_per_block: u32,
    pub max_threads_per_block: u32,
}

/// A compute capability, e.g. `sm_90` = 9.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
}

impl Default for Arch {
    fn default() -> Self {
        Arch { major: 9, minor: 0 }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

impl Arch {
    /// Parses `sm_90`, `sm_90a`, `compute_80`, `86` or `8.6`.
    pub fn parse(s: &str) -> Result<Arch, String> {
        let t = s.trim().to_ascii_lowercase();
        let body = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))
            .unwrap_or(&t);
        let body = body.trim_end_matches(['a', 'f']);
        let parsed = if let Some((a, b)) = body.split_once('.') {
            a.parse::<u32>().ok().zip(b.parse::<u32>().ok())
        } else if body.len() >= 2 && body.len() <= 3 && body.chars().all(|c| c.is_ascii_digit()) {
            let (a, b) = body.split_at(body.len() - 1);
            a.parse::<u32>().ok().zip(b.parse::<u32>().ok())
        } else {
            None
        };
        match parsed {
            Some((major, minor)) if Arch::KNOWN.contains(&(major, minor)) => {
                Ok(Arch { major, minor })
            }
            _ => Err(format!(
                "`{s}` is not an architecture warplint knows; valid: {}",
                Arch::valid_names()
            )),
        }
    }

    /// The cost model for this compute capability, with default settings.
    pub fn model(&self) -> Result<Box<dyn MemoryModel>, String> {
        self.model_with(ModelOptions::default())
    }

    /// The cost model for this compute capability.
    pub fn model_with(&self, o: ModelOptions) -> Result<Box<dyn MemoryModel>, String> {
        if !Arch::KNOWN.contains(&(self.major, self.minor)) {
            return Err(format!(
                "`{self}` is not a compute capability warplint knows; valid: {}",
                Arch::valid_names()
            ));
        }
        if let Some(b) = o.bank_bytes {
            if b != 4 && b != 8 {
                return Err(format!("bank mode {b}: expected 4 or 8 (bytes per bank)"));
            }
        }
        Ok(match self.major {
            1 => Box::new(Tesla {
                segments: self.minor >= 2,
            }),
            2 => Box::new(Fermi {
                l1_cached: o.l1_cached.unwrap_or(true),
            }),
            3 => Box::new(Kepler {
                bank_bytes: o.bank_bytes.unwrap_or(4),
                l1_cached: o.l1_cached.unwrap_or(false),
            }),
            _ => Box::new(Modern),
        })
    }

    /// Compute capabilities in the guide and since.
    pub const KNOWN: &'static [(u32, u32)] = &[
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 0),
        (2, 1),
        (3, 0),
        (3, 2),
        (3, 5),
        (3, 7),
        (5, 0),
        (5, 2),
        (5, 3),
        (6, 0),
        (6, 1),
        (6, 2),
        (7, 0),
        (7, 2),
        (7, 5),
        (8, 0),
        (8, 6),
        (8, 7),
        (8, 9),
        (9, 0),
        (10, 0),
        (10, 1),
        (10, 3),
        (11, 0),
        (12, 0),
        (12, 1),
    ];

    pub fn valid_names() -> String {
        Arch::KNOWN
            .iter()
            .map(|(a, b)| format!("sm_{a}{b}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Limits of this compute capability.
    pub fn limits(&self) -> Limits {
        let (banks, static_shared, max_shared, threads) = match (self.major, self.minor) {
            (1, _) => (16, 16 << 10, 16 << 10, 512),
            (2, _) => (32, 48 << 10, 48 << 10, 1024),
            (3, 7) => (32, 48 << 10, 48 << 10, 1024),
            (3, _) => (32, 48 << 10, 48 << 10, 1024),
            (5, _) | (6, _) => (32, 48 << 10, 48 << 10, 1024),
            (7, 0) | (7, 2) => (32, 48 << 10, 96 << 10, 1024),
            (7, 5) => (32, 48 << 10, 64 << 10, 1024),
            (8, 0) => (32, 48 << 10, 163 << 10, 1024),
            (8, 6) | (8, 9) => (32, 48 << 10, 99 << 10, 1024),
            (8, 7) => (32, 48 << 10, 163 << 10, 1024),
            _ => (32, 48 << 10, 227 << 10, 1024),
        };
        Limits {
            warp_size: 32,
            banks,
            static_shared_per_block: static_shared,
            max_shared_per_block: max_shared,
            max_threads_per_block: threads,
        }
    }
}

/// Bytes of `width` starting at `addr` cover 4-byte words `first..=last`.
pub(crate) fn word_range(addr: i64, width: u32) -> (i64, i64) {
    let w = width.max(1) as i64;
    (addr.div_euclid(4), addr.saturating_add(w - 1).div_euclid(4))
}

/// Which lanes use which bank, for `banks` banks of `unit` bytes, lanes
/// served in groups of `group`.
pub(crate) fn bank_uses(
    lanes: &Lanes,
    width: u32,
    group: usize,
    banks: i64,
    unit: i64,
) -> Vec<BankUse> {
    let mut out: Vec<BankUse> = Vec::new();
    for (g, chunk) in lanes.chunks(group).enumerate() {
        let start = out.len();
        for (i, a) in chunk.iter().enumerate() {
            let Some(a) = a else { continue };
            let lane = g * group + i;
            let first = a.div_euclid(unit);
            let last = a.saturating_add(width.max(1) as i64 - 1).div_euclid(unit);
            for u in first..=last {
                let bank = u.rem_euclid(banks) as u32;
                let slot = match out[start..].iter().position(|b| b.bank == bank) {
                    Some(p) => start + p,
                    None => {
                        out.push(BankUse {
                            group: g as u32,
                            bank,
                            words: Vec::new(),
                            lanes: 0,
                        });
                        out.len() - 1
                    }
                };
                let b = &mut out[slot];
                if !b.words.contains(&u) {
                    b.words.push(u);
                }
                b.lanes |= 1 << lane;
            }
        }
    }
    for b in &mut out {
        b.words.sort_unstable();
    }
    out.sort_by_key(|b| (b.group, b.bank));
    out
}

/// Distinct requests to the same address count once: serialised constant
/// requests of one group of lanes.
pub(crate) fn distinct_addresses(lanes: &[Option<i64>]) -> u32 {
    let mut v: Vec<i64> = lanes.iter().flatten().copied().collect();
    v.sort_unstable();
    v.dedup();
    v.len() as u32
}
