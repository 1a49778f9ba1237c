//! Hardware cost models: what one warp-level memory instruction costs,
//! given the byte address each active lane touches.
//!
//! Every model implements [`MemoryModel`]; [`Arch::model`] picks one per
//! compute capability. The rules are those of `shared/spec/memory-model.md`.

mod modern;
pub mod oracle;

pub use modern::Modern;

use std::fmt;

use crate::ir::Space;

/// Lanes of a warp.
pub const WARP: usize = 32;

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
    /// Distinct 32-byte sectors (or transactions, for legacy models).
    pub sectors: u32,
    /// Sectors a perfectly packed, aligned warp would need.
    pub ideal: u32,
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
pub trait MemoryModel: Send + Sync {
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
    /// Adding the same multiple of this many bytes to every lane's address
    /// leaves the cost in `space` unchanged (lets the engine reuse costs).
    fn shift_period(&self, space: Space, width: u32) -> u64;
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
            Some((major, minor)) if (1..=12).contains(&major) && minor <= 9 => {
                Ok(Arch { major, minor })
            }
            _ => Err(format!(
                "`{s}` is not an architecture: expected a name like sm_90, sm_80 or sm_75"
            )),
        }
    }

    /// The cost model for this compute capability.
    pub fn model(&self) -> Result<Box<dyn MemoryModel>, String> {
        if self.major >= 5 {
            Ok(Box::new(Modern))
        } else {
            Err(format!(
                "{self} (compute capability {}.{}) needs a pre-Maxwell memory model, which this \
                 version of warplint does not have yet; use sm_50 or later",
                self.major, self.minor
            ))
        }
    }
}

/// Bytes of `width` starting at `addr` cover 4-byte words `first..=last`.
pub(crate) fn word_range(addr: i64, width: u32) -> (i64, i64) {
    let w = width.max(1) as i64;
    (addr.div_euclid(4), addr.saturating_add(w - 1).div_euclid(4))
}
