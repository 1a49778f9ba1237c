//! Data the address depends on: a shared access whose address is computed
//! from integers loaded from memory (a histogram's bin, a table's index)
//! costs what the data makes it. Where the address expression itself
//! bounds those values to the array (a mask, a shift, a byte) — every
//! drawn address lands inside it — the access is run over
//! `budget::MAX_DATA_DRAWS` draws of the values, each lane's independent
//! and uniform over the loaded integer's width, and its mean cost is
//! reported with the assumption that says so
//! ([`crate::finding::Assumption::UniformData`]). Where a drawn address
//! falls outside the array, the data's own range (which the analysis does
//! not know) decides, and the access stays `unknown`. Global accesses are
//! never drawn: an allocation's extent is not known.

use crate::ir::{Access, Atom, Kernel, Space};

/// The loaded integers one access's draws give values to, and the current
/// draw.
#[derive(Clone, Debug)]
pub struct DataDraw {
    /// Each drawn unknown with its width in bits.
    pub units: Vec<(u32, u32)>,
    /// The array each was loaded from, as the assumption names it.
    pub arrays: Vec<String>,
    /// The draw's seed: which draw, block and warp.
    pub seed: u64,
    /// The accessed object's size in bytes: a drawn address outside it
    /// ends the draws.
    pub extent: i64,
}

/// SplitMix64's finaliser: a well-mixed 64-bit value of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl DataDraw {
    /// The draws of access `a` of `k`, when its address depends on loaded
    /// integers only and it is a shared access to an array of known size;
    /// `None` otherwise.
    pub fn of(k: &Kernel, a: &Access) -> Option<DataDraw> {
        let obj = k.objects.get(a.obj)?;
        if obj.space != Space::Shared {
            return None;
        }
        let mut extent = obj.elem_size as i64;
        for d in &obj.dims {
            extent = extent.checked_mul(i64::try_from((*d)?).ok()?)?;
        }
        let mut units = Vec::new();
        let mut ok = true;
        a.offset.visit_atoms(&mut |x| {
            if let Atom::Unknown(u) = x {
                match k.unknowns.get(u as usize).and_then(|un| un.loaded_bits) {
                    Some(bits) if !units.iter().any(|(v, _)| *v == u) => units.push((u, bits)),
                    Some(_) => {}
                    None => ok = false,
                }
            }
        });
        if !ok || units.is_empty() {
            return None;
        }
        let mut arrays: Vec<String> = units
            .iter()
            .filter_map(|(u, _)| match &k.unknowns[*u as usize].origin {
                crate::finding::Origin::Loaded { array } => Some(array.clone()),
                _ => None,
            })
            .collect();
        arrays.sort();
        arrays.dedup();
        Some(DataDraw {
            units,
            arrays,
            seed: 0,
            extent,
        })
    }

    /// Sets the draw for draw `draw`, block `bid` and warp `warp`.
    pub fn enter(&mut self, draw: u64, bid: [i64; 3], warp: u32) {
        let mut s = mix(draw);
        for b in bid {
            s = mix(s ^ b as u64);
        }
        self.seed = mix(s ^ u64::from(warp));
    }

    /// Lane `lane`'s value of unknown `u` in the current draw; `None` for
    /// an unknown this access does not draw.
    pub fn value(&self, u: u32, lane: usize) -> Option<i64> {
        let bits = self.units.iter().find(|x| x.0 == u)?.1;
        let h = mix(self.seed ^ mix(u64::from(u) << 8 | lane as u64));
        Some((h & ((1u64 << bits) - 1)) as i64)
    }
}
