//! The sm_50+ model against the measured H200 facts of
//! shared/spec/memory-model.md, and against the brute-force oracle.

use proptest::prelude::*;
use warplint_analyzer::hardware::{oracle, Lanes, MemoryModel, Modern, WARP};

fn lanes(f: impl Fn(i64) -> i64) -> Lanes {
    let mut l = [None; WARP];
    for (i, a) in l.iter_mut().enumerate() {
        *a = Some(f(i as i64));
    }
    l
}

#[test]
fn shared_measured_on_h200() {
    let m = Modern;
    // (element bytes, stride in elements, measured wavefronts)
    let cases = [
        (4, 1, 1),
        (4, 2, 2),
        (4, 3, 1),
        (4, 32, 32),
        (4, 33, 1),
        (8, 1, 2),
        (8, 2, 4),
        (16, 1, 4),
        (16, 2, 8),
        (16, 3, 4),
        (1, 1, 1),
        (1, 4, 1),
        (1, 8, 2),
        (2, 1, 1),
    ];
    for (w, stride, want) in cases {
        let c = m.shared(&lanes(|l| l * stride * w as i64), w);
        assert_eq!(c.wavefronts, want, "width {w} stride {stride}");
    }
    // Broadcast: every lane reads one word.
    assert_eq!(m.shared(&lanes(|_| 20), 4).wavefronts, 1);
}

#[test]
fn global_measured_on_h200() {
    let m = Modern;
    let cases = [
        (4, 1, 0, 4),
        (4, 1, 4, 5),
        (4, 2, 0, 8),
        (4, 32, 0, 32),
        (8, 1, 0, 8),
        (16, 1, 0, 16),
        (1, 1, 0, 1),
    ];
    for (w, stride, off, want) in cases {
        let c = m.global(&lanes(|l| off + l * stride * w as i64), w);
        assert_eq!(c.sectors, want, "width {w} stride {stride} offset {off}");
    }
    // in[gid / 32]: one address for the whole warp.
    assert_eq!(m.global(&lanes(|_| 64), 4).sectors, 1);
}

#[test]
fn inactive_lanes_issue_nothing() {
    let m = Modern;
    let none: Lanes = [None; WARP];
    assert_eq!(m.shared(&none, 4).wavefronts, 0);
    assert_eq!(m.global(&none, 4).sectors, 0);
    let mut half = lanes(|l| l * 128);
    for a in half.iter_mut().skip(16) {
        *a = None;
    }
    assert_eq!(m.shared(&half, 4).wavefronts, 16);
}

/// Measured (fixtures/groundtruth/sm_90/probe1): a half- or quarter-warp
/// with no active lane costs nothing, and the ideal counts active groups.
#[test]
fn partially_active_wide_accesses() {
    let m = Modern;
    let only = |lo: usize, hi: usize, w: u32, stride: i64| {
        let mut l: Lanes = [None; WARP];
        for (i, a) in l.iter_mut().enumerate().take(hi).skip(lo) {
            *a = Some(i as i64 * stride * w as i64);
        }
        m.shared(&l, w)
    };
    let c = only(0, 16, 8, 1);
    assert_eq!((c.wavefronts, c.ideal), (1, 1));
    let c = only(16, 32, 8, 1);
    assert_eq!((c.wavefronts, c.ideal), (1, 1));
    let c = only(0, 8, 16, 1);
    assert_eq!((c.wavefronts, c.ideal), (1, 1));
    let c = only(0, 16, 8, 2);
    assert_eq!((c.wavefronts, c.ideal), (2, 1));
}

fn width() -> impl Strategy<Value = u32> {
    prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(16)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The fast model agrees with the byte-by-byte oracle on arbitrary
    /// (naturally aligned) lane addresses and activity.
    #[test]
    fn modern_matches_oracle(
        w in width(),
        idx in proptest::collection::vec(-300i64..3000, WARP),
        active in any::<u32>(),
    ) {
        let mut l: Lanes = [None; WARP];
        for i in 0..WARP {
            if active & (1 << i) != 0 {
                l[i] = Some(idx[i] * w as i64);
            }
        }
        let m = Modern;
        let fast = m.shared(&l, w);
        let (slow, ideal) = oracle::shared_modern(&l, w);
        prop_assert_eq!(fast.wavefronts, slow);
        prop_assert_eq!(fast.ideal, ideal);
        prop_assert_eq!(m.global(&l, w).sectors, oracle::global_modern(&l, w));
    }
}

/// Every model's settings the lints ask for, one per family and bank mode.
fn models() -> Vec<(String, Box<dyn MemoryModel>)> {
    use warplint_analyzer::hardware::{Arch, ModelOptions};
    let mut out = Vec::new();
    for (arch, bank_bytes) in [
        ("sm_13", None),
        ("sm_20", None),
        ("sm_35", Some(4)),
        ("sm_35", Some(8)),
        ("sm_90", None),
    ] {
        let o = ModelOptions {
            bank_bytes,
            ..ModelOptions::default()
        };
        let model = Arch::parse(arch).unwrap().model_with(o).unwrap();
        out.push((format!("{arch} {bank_bytes:?}"), model));
    }
    out
}

/// The facts the lints read from a model agree with its own bank
/// pictures and costs: one sweep of the banks holds `limits().banks`
/// banks, addresses a sweep apart share a bank, `shared_banks` groups the
/// lanes as `shared_group` says, and the ideal global cost counts
/// `sector_bytes` units.
#[test]
fn lint_facts_match_the_models() {
    use warplint_analyzer::hardware::Arch;
    for (name, m) in models() {
        let arch = Arch::parse(name.split(' ').next().unwrap()).unwrap();
        let row = m.bank_row_bytes() as i64;
        let banks = arch.limits().banks as i64;
        let bank_bytes = row / banks;
        let bank_of = |a: i64| {
            let mut l: Lanes = [None; WARP];
            l[0] = Some(a);
            m.shared_banks(&l, 4)[0].bank
        };
        let mut seen: Vec<u32> = (0..banks).map(|b| bank_of(b * bank_bytes)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as i64, banks, "{name}: banks in one sweep");
        for a in [0, 4, 12, 100, 1000, -8] {
            assert_eq!(bank_of(a), bank_of(a + row), "{name}: address {a}");
            assert_eq!(bank_of(a), bank_of(a + 5 * row), "{name}: address {a}");
        }
        for width in [1, 4, 8, 16] {
            let group = m.shared_group(width);
            let uses = m.shared_banks(&lanes(|l| l * width as i64), width);
            let groups = uses.iter().map(|b| b.group).max().unwrap() as usize + 1;
            assert_eq!(groups, WARP / group, "{name}: width {width}");
            for b in &uses {
                let in_group = (u64::MAX >> (64 - group)) << (b.group as usize * group);
                assert_eq!(u64::from(b.lanes) & !in_group, 0, "{name}: width {width}");
            }
        }
        let s = m.sector_bytes() as i64;
        assert_eq!(m.global(&lanes(|_| 0), s as u32).ideal, 1, "{name}");
        assert_eq!(m.global(&lanes(|l| l * s), s as u32).ideal, 32, "{name}");
        assert_eq!(
            m.global(&lanes(|l| l * 4), 4).ideal as i64,
            128 / s,
            "{name}"
        );
        if m.sector_based() {
            // A unit-stride warp started half a sector in needs one more.
            let aligned = m.global(&lanes(|l| l * 4), 4).sectors;
            let off = m.global(&lanes(|l| s / 2 + l * 4), 4).sectors;
            assert_eq!(off, aligned + 1, "{name}");
        }
    }
}
