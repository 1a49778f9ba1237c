//! Shared addresses computed from integers loaded from memory
//! (`symbolic/data.rs`): where the expression keeps every value inside
//! the array (a mask, a byte), the access is run over draws of the data,
//! each lane's uniform and independent, and its mean cost is reported
//! with the `uniform-data` assumption; anywhere else the data's own range
//! decides and the access stays `unknown`. The first case is cuda-samples'
//! histogram64 on 32 banks (measured 2.00-way on an H200).

mod common;

use common::{find, run, ways};
use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::Op;
use warplint_analyzer::Status;

fn drawn(r: &warplint_analyzer::AccessReport) -> Option<(u32, u32, u32)> {
    r.assumptions.iter().find_map(|a| match a {
        Assumption::UniformData {
            draws, low, high, ..
        } => Some((*draws, *low, *high)),
        _ => None,
    })
}

/// histogram64's byte counters: lane `l` counts at `threadPos(l) + 64
/// bin`. Lanes `l` and `l + 16` share a word (bytes 0 and 1) when their
/// bins are equal, and collide 2-way when the bins differ but are equal
/// mod 2 (64 bytes is 16 banks); no other pair can meet. With 16 such
/// pairs, a draw without any is rare: about 2-way.
#[test]
fn histogram_bins_from_loaded_bytes_cost_what_the_data_makes_them() {
    let a = run(r#"
typedef unsigned int uint;
typedef unsigned char uchar;
__global__ void hist(uint *d_Data) {
    const uint threadPos = ((threadIdx.x & ~63) << 0) | ((threadIdx.x & 15) << 2) | ((threadIdx.x & 48) >> 4);
    __shared__ uchar s_Hist[64 * 64];
    uchar *base = s_Hist + threadPos;
    uint data = d_Data[blockIdx.x * 64 + threadIdx.x];
    base[((data >> 2) & 0x3FU) * 64]++;
}
int main() { hist<<<4, 64>>>(0); }
"#);
    let r = find(&a, "s_Hist", Op::Load);
    assert_eq!(r.status, Status::Assumed, "{:?}", r.unknown_reason);
    let (draws, low, high) = drawn(r).expect("a uniform-data assumption");
    assert_eq!(draws, 16);
    assert!(low >= 100 && high <= 200, "{low} {high}");
    assert!((1.9..=2.0).contains(&ways(r)), "{}", ways(r));
}

/// Where each lane's bank does not depend on the data (`lane + 32 k`),
/// every draw is conflict-free: the draws find what holds for any data.
#[test]
fn a_bank_the_data_does_not_move_is_conflict_free_in_every_draw() {
    let a = run(r#"
__global__ void k(const unsigned *in, float *out) {
    __shared__ float s[32 * 8];
    unsigned d = in[threadIdx.x];
    out[threadIdx.x] = s[threadIdx.x + 32 * (d & 7)];
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let r = find(&a, "s", Op::Load);
    assert_eq!(r.status, Status::Assumed);
    assert_eq!(drawn(r), Some((16, 100, 100)));
    assert_eq!(ways(r), 1.0);
}

/// A table of 256 floats indexed by a loaded byte: 32 lanes over 32
/// banks at random collide about 3.5-way (the expected largest bin of 32
/// balls in 32 bins), never 1-way in practice and never near 32.
#[test]
fn a_table_indexed_by_random_bytes_collides() {
    let a = run(r#"
__global__ void k(const unsigned char *in, float *out) {
    __shared__ float lut[256];
    out[threadIdx.x] = lut[in[threadIdx.x]];
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let r = find(&a, "lut", Op::Load);
    assert_eq!(r.status, Status::Assumed, "{:?}", r.unknown_reason);
    let (_, low, high) = drawn(r).expect("drawn");
    assert!(low >= 200 && high <= 800, "{low} {high}");
    assert!((2.5..=4.5).contains(&ways(r)), "{}", ways(r));
}

/// Values the address does not keep inside the array (a whole `uint` as
/// an index), and global arrays (whose extent is not known), are the
/// data's to decide: unknown, as before.
#[test]
fn what_the_address_does_not_bound_stays_unknown() {
    let a = run(r#"
__global__ void k(const unsigned *in, float *out, float *g) {
    __shared__ float s[1024];
    unsigned d = in[threadIdx.x];
    out[threadIdx.x] = s[d];
    out[threadIdx.x + 32] = g[d & 63];
}
int main() { k<<<1, 32>>>(0, 0, 0); }
"#);
    assert_eq!(find(&a, "s", Op::Load).status, Status::Unknown);
    assert_eq!(find(&a, "g", Op::Load).status, Status::Unknown);
}

/// The brute-force oracle: `samples` warps of uniformly random 32-bit
/// values, each lane's word `lane * a + (d & m) * b`, costed by counting
/// the distinct words of the fullest bank (32 banks of 4 bytes, one word
/// broadcast), averaged. Its own generator, not the engine's.
fn oracle(a: u64, m: u64, b: u64, samples: u32) -> f64 {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut total = 0u64;
    for _ in 0..samples {
        let mut banks: Vec<Vec<u64>> = vec![Vec::new(); 32];
        for lane in 0..32u64 {
            let d = next() & 0xFFFF_FFFF;
            let w = lane * a + (d & m) * b;
            let bank = &mut banks[(w % 32) as usize];
            if !bank.contains(&w) {
                bank.push(w);
            }
        }
        total += banks.iter().map(Vec::len).max().unwrap_or(1) as u64;
    }
    total as f64 / f64::from(samples)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// The drawn mean of `s[lane * a + (d & m) * b]` matches the
    /// oracle's, within what 16 draws of 8 warps can vary.
    #[test]
    fn drawn_bank_conflicts_match_a_brute_force_oracle(
        a in 0u64..4,
        bits in 1u32..7,
        b in 1u64..40,
    ) {
        let m = (1u64 << bits) - 1;
        let size = 32 * a + m * b + 1;
        let src = format!(r#"
__global__ void k(const unsigned *in, float *out) {{
    __shared__ float s[{size}];
    unsigned d = in[blockIdx.x * 256 + threadIdx.x];
    out[threadIdx.x] = s[threadIdx.x % 32 * {a} + (d & {m}) * {b}];
}}
int main() {{ k<<<1, 256>>>(0, 0); }}
"#);
        let r = run(&src);
        let got = find(&r, "s", Op::Load);
        proptest::prop_assert_eq!(got.status, Status::Assumed);
        let want = oracle(a, m, b, 20_000);
        let ours = ways(got);
        proptest::prop_assert!(
            (ours - want).abs() <= 0.3 + 0.1 * want,
            "a {} m {} b {}: drawn {} oracle {}", a, m, b, ours, want
        );
    }
}
