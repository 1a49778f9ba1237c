//! Values after a loop: a variable a loop carries holds, after it, the
//! value it had when each lane left (the loop run to each lane's exit),
//! where the loop has a condition and no `break` or `return`; otherwise
//! (and for lanes whose exit is not found) it stays unknown, said so.
//! Each expected cost comes from the lanes' addresses worked out here by
//! running the kernel's arithmetic directly (the oracle), not from the
//! engine.

mod common;
use common::{find, run};

use warplint_analyzer::finding::{Origin, UnknownReason};
use warplint_analyzer::ir::Op;
use warplint_analyzer::Status;

/// The n-way conflict of one warp's 4-byte shared accesses at word
/// indices `words` (32 banks): the most distinct words on one bank.
fn ways(words: &[u64]) -> f64 {
    let mut per_bank: Vec<Vec<u64>> = vec![Vec::new(); 32];
    for &w in words {
        let bank = &mut per_bank[(w % 32) as usize];
        if !bank.contains(&w) {
            bank.push(w);
        }
    }
    per_bank.iter().map(Vec::len).max().unwrap_or(0) as f64
}

/// A uniform exit value: `offset` doubles once per halving of `d` from
/// 32 (six iterations), so after the loop every lane has 64.
#[test]
fn a_uniform_exit_value_is_the_loops_result() {
    let a = run(r#"
__global__ void k(float *out) {
    __shared__ float s[64 * 32];
    unsigned int offset = 1;
    for (int d = 64 >> 1; d > 0; d >>= 1) {
        offset <<= 1;
    }
    s[threadIdx.x * (offset / 32)] = out[threadIdx.x];
}
int main() { k<<<1, 32>>>(0); }
"#);
    let mut offset = 1u64;
    let mut d = 64 >> 1;
    while d > 0 {
        offset <<= 1;
        d >>= 1;
    }
    let words: Vec<u64> = (0..32).map(|t| t * (offset / 32)).collect();
    let r = find(&a, "s", Op::Store);
    assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
    assert_eq!(common::ways(r), ways(&words));
    assert_eq!(ways(&words), 2.0);
}

/// Per-lane exits: lane `t` runs `t % 4` iterations, each adding 8, so
/// `j` is `8 * (t % 4)` after the loop; and the scan's down-sweep, whose
/// `offset` starts from the up-sweep's exit value (a loop fed by
/// another's exit).
#[test]
fn each_lane_leaves_with_its_own_value_and_loops_chain() {
    let a = run(r#"
__global__ void k(float *out) {
    __shared__ float s[4096];
    __shared__ float u[4096];
    unsigned int t = threadIdx.x;
    int j = 0;
    for (int i = 0; i < (int)(t % 4); i++) {
        j += 8;
    }
    s[j * 4 + t / 4] = 0;
    unsigned int offset = 1;
    for (int d = 16; d > 0; d >>= 1) {
        offset <<= 1;
    }
    for (int d = 1; d < 4; d <<= 1) {
        offset >>= 1;
    }
    u[t * offset] = out[t];
}
int main() { k<<<1, 32>>>(0); }
"#);
    let words: Vec<u64> = (0..32u64).map(|t| 8 * (t % 4) * 4 + t / 4).collect();
    let r = find(&a, "s", Op::Store);
    assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
    assert_eq!(common::ways(r), ways(&words));
    assert_eq!(ways(&words), 4.0);
    // offset: 1 << 5 = 32, then two halvings: 8.
    let mut offset = 1u64;
    let mut d = 16;
    while d > 0 {
        offset <<= 1;
        d >>= 1;
    }
    let mut d = 1;
    while d < 4 {
        offset >>= 1;
        d <<= 1;
    }
    let words: Vec<u64> = (0..32u64).map(|t| t * offset).collect();
    let r = find(&a, "u", Op::Store);
    assert_eq!(r.status, Status::Exact, "{:?}", r.unknown_reason);
    assert_eq!(common::ways(r), ways(&words));
    assert_eq!(ways(&words), 8.0);
}

/// A loop with a `break` has no exit the engine runs to: the value after
/// it stays unknown, and says which variable after which loop.
#[test]
fn after_a_loop_with_a_break_the_value_stays_unknown() {
    let a = run(r#"
__global__ void k(float *out, const int *flags) {
    __shared__ float s[4096];
    int j = 0;
    for (int i = 0; i < 8; i++) {
        if (flags[i]) break;
        j += 1;
    }
    s[threadIdx.x * j] = out[threadIdx.x];
}
int main() { k<<<1, 32>>>(0, 0); }
"#);
    let r = find(&a, "s", Op::Store);
    assert_eq!(r.status, Status::Unknown);
    match &r.unknown_reason {
        Some(UnknownReason::DependsOn {
            origin: Origin::AfterLoop { name, .. },
            ..
        }) => assert_eq!(name, "j"),
        other => panic!("{other:?}"),
    }
}

/// The sectors of one warp's 4-byte global accesses at byte offsets
/// `bytes` from a 256-byte aligned base (32-byte sectors).
fn sectors(bytes: &[u64]) -> f64 {
    let mut s: Vec<u64> = bytes.iter().map(|b| b / 32).collect();
    s.sort_unstable();
    s.dedup();
    s.len() as f64
}

/// A counted loop past the loop budget (128 iterations) jumps to its exit
/// in closed form: `k` from 1 while `k < nz - 1` runs `nz - 2` times, so
/// `c` leaves at `t + (nz - 2)` (rodinia hotspot3D's `W += xy` over the
/// z planes). With nz = 1002 that is `t + 1000`: 4000 bytes, a 32-byte
/// boundary, 4 sectors; nz = 1001 leaves `t + 999`, 3996 bytes: 5 sectors.
/// One iteration more or less would swap them. `temp` does not step: the
/// loop cannot say what it holds after, and an access through it stays
/// unknown.
#[test]
fn a_counted_loop_past_the_budget_jumps_to_its_exit() {
    for (nz, want_shift) in [(1002u64, 1000u64), (1001, 999)] {
        let src = format!(
            "__global__ void k(float *t, const int *g, int nz) {{\n\
             int c = threadIdx.x;\n\
             int temp = 0;\n\
             for (int k = 1; k < nz - 1; ++k) {{\n\
                 temp = g[c];\n\
                 c += 1;\n\
             }}\n\
             t[c] = 1.0f;\n\
             t[temp] = 2.0f;\n\
             }}\n\
             int main() {{ k<<<1, 32>>>(0, 0, {nz}); }}\n"
        );
        let a = run(&src);
        let after: Vec<_> = a.reports.iter().filter(|r| r.array == "t").collect();
        assert_eq!(after.len(), 2);
        assert_eq!(
            after[0].status,
            Status::Exact,
            "{:?}",
            after[0].unknown_reason
        );
        let bytes: Vec<u64> = (0..32).map(|l| 4 * (l + want_shift)).collect();
        assert_eq!(common::sectors(after[0]), sectors(&bytes), "nz = {nz}");
        assert_eq!(after[1].status, Status::Unknown);
    }
}
