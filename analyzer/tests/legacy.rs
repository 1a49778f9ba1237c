//! The pre-Maxwell models against the guide's own examples (seed 000,
//! Appendix F), each test named after its section, and property tests that
//! are sentences of the guide.

use proptest::prelude::*;
use warplint_analyzer::hardware::{Arch, Lanes, MemoryModel, ModelOptions, WARP};

fn model(arch: &str) -> Box<dyn MemoryModel> {
    Arch::parse(arch).unwrap().model().unwrap()
}

fn kepler(bank_bytes: u32) -> Box<dyn MemoryModel> {
    Arch::parse("sm_35")
        .unwrap()
        .model_with(ModelOptions {
            bank_bytes: Some(bank_bytes),
            l1_cached: None,
        })
        .unwrap()
}

fn lanes(f: impl Fn(i64) -> i64) -> Lanes {
    let mut l = [None; WARP];
    for (i, a) in l.iter_mut().enumerate() {
        *a = Some(f(i as i64));
    }
    l
}

/// n-way degree: wavefronts over the conflict-free ideal.
fn ways(m: &dyn MemoryModel, l: &Lanes, width: u32) -> f64 {
    let c = m.shared(l, width);
    c.wavefronts as f64 / c.ideal as f64
}

#[test]
fn f_3_3_1_strided_32_bit_access_16_banks() {
    // Conflict-free only for odd strides; otherwise 16/(16/gcd(16, s)) ways.
    let m = model("sm_10");
    for (s, want) in [
        (1, 1.0),
        (2, 2.0),
        (3, 1.0),
        (4, 4.0),
        (5, 1.0),
        (8, 8.0),
        (16, 16.0),
        (17, 1.0),
    ] {
        assert_eq!(
            ways(m.as_ref(), &lanes(|t| 4 * s * t), 4),
            want,
            "stride {s}"
        );
    }
}

#[test]
fn f_4_3_1_strided_32_bit_access_32_banks() {
    let m = model("sm_20");
    for (s, want) in [
        (1, 1.0),
        (2, 2.0),
        (3, 1.0),
        (4, 4.0),
        (32, 32.0),
        (33, 1.0),
    ] {
        assert_eq!(
            ways(m.as_ref(), &lanes(|t| 4 * s * t), 4),
            want,
            "stride {s}"
        );
    }
}

#[test]
fn figure_f_2_strides_one_two_three() {
    // Left/middle/right: strides 1, 2, 3 are conflict-free on 3.0; the
    // middle one is 2-way on 2.x and on 1.x.
    let stride = |s: i64| lanes(move |t| 4 * s * t);
    for s in [1, 2, 3] {
        assert_eq!(
            ways(kepler(4).as_ref(), &stride(s), 4),
            1.0,
            "3.0, stride {s}"
        );
    }
    assert_eq!(ways(model("sm_20").as_ref(), &stride(2), 4), 2.0);
    assert_eq!(ways(model("sm_13").as_ref(), &stride(2), 4), 2.0);
    assert_eq!(ways(model("sm_20").as_ref(), &stride(3), 4), 1.0);
    assert_eq!(ways(model("sm_13").as_ref(), &stride(3), 4), 1.0);
}

#[test]
fn f_3_3_2_broadcast_and_figure_f_3() {
    // All threads of a half-warp reading one word: conflict-free.
    assert_eq!(ways(model("sm_10").as_ref(), &lanes(|_| 40), 4), 1.0);
    // Figure F-3 middle: threads 3, 4, 6, 7 and 9 read the same word within
    // bank 5; every other thread reads a word of a bank of its own.
    let mut middle: Lanes = [None; WARP];
    let others_half0 = [0usize, 1, 2, 5, 8, 10, 11, 12, 13, 14, 15];
    let banks_half0 = [0i64, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11];
    for (t, b) in others_half0.iter().zip(banks_half0) {
        middle[*t] = Some(4 * (b + 64));
    }
    for t in [3, 4, 6, 7, 9] {
        middle[t] = Some(4 * 5);
    }
    for (t, slot) in middle.iter_mut().enumerate().skip(16) {
        *slot = Some(4 * (t as i64 + 96));
    }
    for arch in ["sm_10", "sm_20", "sm_30", "sm_90"] {
        assert_eq!(ways(model(arch).as_ref(), &middle, 4), 1.0, "{arch}");
    }
    // Figure F-3 right: groups of threads each reading one word of a bank:
    // conflict-free on 2.x and 3.0, 2-way on 1.x (one broadcast word per step).
    let right = lanes(|t| if t % 16 < 8 { 4 * 12 } else { 4 * 20 });
    assert_eq!(ways(model("sm_20").as_ref(), &right, 4), 1.0);
    assert_eq!(ways(kepler(4).as_ref(), &right, 4), 1.0);
    assert_eq!(ways(model("sm_11").as_ref(), &right, 4), 2.0);
}

#[test]
fn f_3_3_3_and_f_4_3_char_arrays() {
    // `shared[tid]` of char: bank conflicts on 1.x, none on 2.x.
    assert!(ways(model("sm_10").as_ref(), &lanes(|t| t), 1) > 1.0);
    assert_eq!(ways(model("sm_10").as_ref(), &lanes(|t| t), 1), 4.0);
    assert_eq!(ways(model("sm_20").as_ref(), &lanes(|t| t), 1), 1.0);
    // `shared[4 * tid]`: no conflicts on 1.x.
    assert_eq!(ways(model("sm_10").as_ref(), &lanes(|t| 4 * t), 1), 1.0);
}

#[test]
fn f_3_3_4_and_f_4_3_2_doubles_and_structs() {
    // `double shared[tid]`: 2-way on 1.x (two 32-bit requests of stride 2),
    // no conflicts on 2.x.
    assert_eq!(ways(model("sm_13").as_ref(), &lanes(|t| 8 * t), 8), 2.0);
    assert_eq!(ways(model("sm_20").as_ref(), &lanes(|t| 8 * t), 8), 1.0);
    // struct {float x, y, z;} read member by member: stride 3, conflict-free;
    // struct {float x, y;}: stride 2, conflicts (1.x).
    for member in 0..3 {
        assert_eq!(
            ways(model("sm_10").as_ref(), &lanes(|t| 12 * t + 4 * member), 4),
            1.0
        );
    }
    assert_eq!(ways(model("sm_10").as_ref(), &lanes(|t| 8 * t), 4), 2.0);
    // 2.x: three 32-bit reads of the 12-byte struct, stride 3: no conflicts.
    assert_eq!(ways(model("sm_20").as_ref(), &lanes(|t| 12 * t), 4), 1.0);
}

#[test]
fn f_4_3_2_128_bit_plus_one() {
    // One thread per bank in each quarter-warp still costs 2 ways.
    assert_eq!(ways(model("sm_20").as_ref(), &lanes(|t| 16 * t), 16), 2.0);
    // Two threads with different addresses per bank in a quarter: 3 ways.
    assert_eq!(ways(model("sm_20").as_ref(), &lanes(|t| 32 * t), 16), 3.0);
}

#[test]
fn f_5_3_1_64_bit_mode_fewer_conflicts_than_2x_for_64_bit() {
    let fermi = model("sm_20");
    let k8 = kepler(8);
    for s in [1, 2, 4, 8, 16] {
        let l = lanes(|t| 8 * s * t);
        let (a, b) = (k8.shared(&l, 8).wavefronts, fermi.shared(&l, 8).wavefronts);
        assert!(a < b, "stride {s}: 3.x 64-bit mode {a} vs 2.x {b}");
    }
}

#[test]
fn f_5_3_2_32_bit_mode_pairs_i_and_i_plus_32() {
    // Words i and i + 32 of one 64-word segment do not conflict...
    let l = lanes(|t| 4 * (if t % 2 == 0 { t / 2 } else { t / 2 + 32 }));
    assert_eq!(ways(kepler(4).as_ref(), &l, 4), 1.0);
    assert_eq!(ways(model("sm_20").as_ref(), &l, 4), 2.0);
    // ...but words 32 apart across a 64-word boundary do.
    let l = lanes(|t| 4 * (if t % 2 == 0 { 32 + t / 2 } else { 64 + t / 2 }));
    assert_eq!(ways(kepler(4).as_ref(), &l, 4), 2.0);
}

fn global(arch: &str, l: &Lanes) -> (u32, u32) {
    let c = model(arch).global(l, 4);
    (c.transactions, c.bytes)
}

#[test]
fn f_3_2_1_f_3_2_2_f_4_2_three_warp_patterns() {
    let aligned = lanes(|k| 4 * k);
    // Aligned, permuted within the 128-byte segment (neighbours swapped).
    let permuted = lanes(|k| 4 * (k ^ 1));
    let misaligned = lanes(|k| 4 * k + 4);
    // 1.0/1.1: one 64-byte transaction per half-warp when thread k reads
    // word k of the segment; otherwise 16 separate 32-byte ones per half.
    assert_eq!(global("sm_10", &aligned), (2, 128));
    assert_eq!(global("sm_10", &permuted), (32, 1024));
    assert_eq!(global("sm_10", &misaligned), (32, 1024));
    // 1.2/1.3: one transaction per segment, reduced to the half used:
    // 2 x 64 B aligned or permuted; misaligned, the first half-warp spans
    // both halves of its 128-byte segment (128 B), the second needs 64 B
    // plus 32 B for the word that falls into the next segment.
    assert_eq!(global("sm_12", &aligned), (2, 128));
    assert_eq!(global("sm_13", &permuted), (2, 128));
    assert_eq!(global("sm_13", &misaligned), (3, 224));
    // 2.x, cached in L1: 128-byte lines per warp request.
    assert_eq!(global("sm_20", &aligned), (1, 128));
    assert_eq!(global("sm_20", &permuted), (1, 128));
    assert_eq!(global("sm_20", &misaligned), (2, 256));
    // 2.x with -dlcm=cg and 3.x by default: 32-byte segments.
    let cg = Arch::parse("sm_20")
        .unwrap()
        .model_with(ModelOptions {
            bank_bytes: None,
            l1_cached: Some(false),
        })
        .unwrap();
    assert_eq!(cg.global(&misaligned, 4).transactions, 5);
    assert_eq!(global("sm_35", &aligned), (4, 128));
    assert_eq!(global("sm_35", &misaligned), (5, 160));
}

#[test]
fn f_4_2_wide_words_are_split_per_half_and_quarter_warp() {
    // 8-byte words: two half-warp requests of one 128-byte line each.
    assert_eq!(model("sm_20").global(&lanes(|k| 8 * k), 8).transactions, 2);
    // 16-byte words: four quarter-warp requests.
    assert_eq!(
        model("sm_20").global(&lanes(|k| 16 * k), 16).transactions,
        4
    );
    // 1.0/1.1, 16-byte words: two 128-byte transactions per half-warp.
    assert_eq!(
        model("sm_10").global(&lanes(|k| 16 * k), 16).transactions,
        4
    );
}

#[test]
fn constant_memory_serialises_per_distinct_address() {
    // 1.x counts per half-warp.
    assert_eq!(model("sm_10").constant(&lanes(|_| 0), 4), 2);
    assert_eq!(model("sm_20").constant(&lanes(|_| 0), 4), 1);
    assert_eq!(model("sm_20").constant(&lanes(|t| 4 * t), 4), 32);
}

#[test]
fn limits_and_names() {
    let l = Arch::parse("sm_13").unwrap().limits();
    assert_eq!(
        (l.banks, l.static_shared_per_block, l.max_threads_per_block),
        (16, 16 << 10, 512)
    );
    assert_eq!(
        Arch::parse("sm_90").unwrap().limits().max_shared_per_block,
        227 << 10
    );
    for ok in ["sm_35", "compute_35", "35", "3.5"] {
        assert_eq!(
            Arch::parse(ok).unwrap(),
            Arch { major: 3, minor: 5 },
            "{ok}"
        );
    }
    assert_eq!(Arch::parse("sm_90a").unwrap(), Arch { major: 9, minor: 0 });
    let err = Arch::parse("sm_42").unwrap_err();
    assert!(err.contains("valid: sm_10, sm_11"), "{err}");
}

fn width() -> impl Strategy<Value = u32> {
    prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(16)]
}

fn pattern(w: u32) -> impl Strategy<Value = Lanes> {
    (proptest::collection::vec(0i64..512, WARP), any::<u32>()).prop_map(move |(idx, active)| {
        let mut l: Lanes = [None; WARP];
        for i in 0..WARP {
            if active & (1 << i) != 0 || i == 0 {
                l[i] = Some(idx[i] * w as i64);
            }
        }
        l
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// For 4-byte accesses, 2.x and 5.0+ agree (both: 32 banks, any number
    /// of words multicast).
    #[test]
    fn sm20_and_sm90_agree_on_32_bit(l in pattern(4)) {
        prop_assert_eq!(model("sm_20").shared(&l, 4), model("sm_90").shared(&l, 4));
    }

    /// F.5.3.1: in 64-bit mode, 64-bit accesses never cost more than on 2.x.
    #[test]
    fn kepler_64_bit_mode_never_worse_for_64_bit(l in pattern(8)) {
        prop_assert!(kepler(8).shared(&l, 8).wavefronts <= model("sm_20").shared(&l, 8).wavefronts);
    }

    /// F.5.3.2: in 32-bit mode, no access costs more than on 2.x.
    #[test]
    fn kepler_32_bit_mode_never_worse(w in width(), seed in proptest::collection::vec(0i64..512, WARP)) {
        let l = lanes(|t| seed[t as usize] * w as i64);
        prop_assert!(kepler(4).shared(&l, w).wavefronts <= model("sm_20").shared(&l, w).wavefronts);
    }

    /// F.3.2.2: 1.2/1.3 coalesce at least as well as 1.0/1.1.
    #[test]
    fn sm10_never_fewer_transactions_than_sm12(w in width(), seed in proptest::collection::vec(0i64..256, 16), active in any::<u16>()) {
        let mut l: Lanes = [None; WARP];
        for i in 0..16 {
            if active & (1 << i) != 0 {
                l[i] = Some(seed[i] * w as i64);
            }
        }
        prop_assert!(model("sm_10").global(&l, w).transactions >= model("sm_12").global(&l, w).transactions);
    }
}

#[test]
fn k_4_3_strides_and_irregular_patterns_on_5x() {
    // Left/middle/right of the strided figure: 1 conflict-free, 2 two-way,
    // 3 conflict-free; the irregular figure's three patterns conflict-free.
    let m = model("sm_50");
    let stride = |s: i64| lanes(move |t| 4 * s * t);
    assert_eq!(ways(m.as_ref(), &stride(1), 4), 1.0);
    assert_eq!(ways(m.as_ref(), &stride(2), 4), 2.0);
    assert_eq!(ways(m.as_ref(), &stride(3), 4), 1.0);
    let permutation = lanes(|t| 4 * ((t * 13 + 7) % 32));
    assert_eq!(ways(m.as_ref(), &permutation, 4), 1.0);
    let right = lanes(|t| if t % 16 < 8 { 4 * 12 } else { 4 * 20 });
    assert_eq!(ways(m.as_ref(), &right, 4), 1.0);
}

#[test]
fn k_3_2_global_caching_on_3x() {
    // L2 only (the default for global loads on 3.x): 32-byte transactions;
    // with -dlcm=ca on 3.5/3.7: 128-byte lines.
    let strided = lanes(|k| 128 * k);
    assert_eq!(model("sm_35").global(&strided, 4).bytes, 32 * 32);
    let l1 = Arch::parse("sm_37")
        .unwrap()
        .model_with(ModelOptions {
            bank_bytes: None,
            l1_cached: Some(true),
        })
        .unwrap();
    assert_eq!(l1.global(&strided, 4).bytes, 32 * 128);
}

#[test]
fn k_3_3_sub_words_of_one_word_never_conflict() {
    // 64-bit mode: any sub-words of one 64-bit word are served together.
    let l = lanes(|t| 8 * (t / 4) + 2 * (t % 4));
    assert_eq!(ways(kepler(8).as_ref(), &l, 2), 1.0);
    // 32-bit mode: sub-words of one 32-bit word.
    let l = lanes(|t| t);
    assert_eq!(ways(kepler(4).as_ref(), &l, 1), 1.0);
}
