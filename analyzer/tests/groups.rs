//! Cooperative groups lowered to the index expressions they are: kernel
//! source in, each access's prediction out. Every expected figure is
//! worked out by hand in the comment above it, from the CUDA Programming
//! Guide's definitions (a block's `thread_rank()` is the linear thread
//! index `x + y·Bx + z·Bx·By`; a tile of `N` takes `N` consecutive ranks of
//! its parent; a grid's rank is the linear block index times the block's
//! threads plus the block rank) and the modern model (32 banks of 4 bytes,
//! 32-byte sectors).

mod common;
use common::{find, run, sectors, ways};

use warplint_analyzer::finding::{Origin, UnknownReason};
use warplint_analyzer::ir::Op;
use warplint_analyzer::{AccessReport, Status};

/// The origin of the unknown an access depends on.
fn unknown_origin(r: &AccessReport) -> &Origin {
    assert_eq!(r.status, Status::Unknown, "`{}` is not unknown", r.text);
    match &r.unknown_reason {
        Some(UnknownReason::DependsOn { origin, .. }) => origin,
        other => panic!("`{}`: {other:?}", r.text),
    }
}

#[test]
fn tiles_of_a_two_dimensional_block() {
    // Block 32x8: warp w is the threads with threadIdx.y == w, so a tile
    // of 32 is one warp: lane l has thread_rank() == l and
    // meta_group_rank() == w, and meta_group_size() == 256 / 32 == 8.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *out) {
    __shared__ float padded[8 * 33];
    __shared__ float rows[8][32];
    __shared__ float cols[32][32];
    __shared__ float cols_padded[32][33];
    __shared__ float strided[32 * 8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    // Words 33w + l: 32 consecutive words, one per bank: no conflict.
    padded[tile.meta_group_rank() * 33 + tile.thread_rank()] = 0.0f;
    // Words 32w + l: consecutive again.
    rows[tile.meta_group_rank()][tile.thread_rank()] = 0.0f;
    // Words 32l + w: every lane in bank w, 32 rows: 32-way.
    cols[tile.thread_rank()][tile.meta_group_rank()] = 0.0f;
    // Words 33l + w: bank (l + w) mod 32, all distinct: no conflict.
    cols_padded[tile.thread_rank()][tile.meta_group_rank()] = 0.0f;
    // Words 8l: banks 0, 8, 16, 24, eight lanes each: 8-way.
    strided[tile.thread_rank() * tile.meta_group_size()] = 0.0f;
    __syncthreads();
    out[0] = padded[0] + rows[0][0] + cols[0][0] + cols_padded[0][0] + strided[0];
}
int main() { k<<<1, dim3(32, 8)>>>(0); }
"#);
    assert_eq!(ways(find(&a, "padded", Op::Store)), 1.0);
    assert_eq!(ways(find(&a, "rows", Op::Store)), 1.0);
    assert_eq!(ways(find(&a, "cols", Op::Store)), 32.0);
    assert_eq!(ways(find(&a, "cols_padded", Op::Store)), 1.0);
    assert_eq!(ways(find(&a, "strided", Op::Store)), 8.0);
    for r in &a.reports {
        assert_eq!(r.status, Status::Exact, "`{}`: {:?}", r.text, r.status);
    }
}

#[test]
fn block_rank_and_size() {
    // Block 256: thread_rank() == threadIdx.x, size() == 256.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *out) {
    __shared__ float by32[256 * 32];
    __shared__ float by_size[256 * 8];
    cg::thread_block block = cg::this_thread_block();
    // Words 32t: every lane in bank 0: 32-way.
    by32[block.thread_rank() * 32] = 0.0f;
    // size() / 32 == 8: words 8t, banks 0, 8, 16, 24: 8-way.
    by_size[threadIdx.x * (block.size() / 32)] = 0.0f;
    // num_threads() is size(): the same 8-way (one word further, or nvcc
    // would not emit the store above, which this one overwrites).
    by_size[threadIdx.x * (block.num_threads() / 32) + 1] = 1.0f;
    __syncthreads();
    // One float per thread, blocks one after another through
    // group_index(): 128 bytes of a warp are 4 sectors.
    out[block.group_index().x * block.size() + block.thread_rank()] = by32[0] + by_size[0];
}
int main() { k<<<4, 256>>>(0); }
"#);
    assert_eq!(ways(find(&a, "by32", Op::Store)), 32.0);
    let by_size: Vec<_> = a
        .reports
        .iter()
        .filter(|r| r.array == "by_size" && r.op == Op::Store)
        .collect();
    assert_eq!(by_size.len(), 2);
    for r in by_size {
        assert_eq!(ways(r), 8.0);
    }
    assert_eq!(sectors(find(&a, "out", Op::Store)), 4.0);
}

#[test]
fn thread_rank_is_linear_over_a_three_dimensional_block() {
    // Block 8x4x2: warp 0 is threads x 0..7, y 0..3, z 0; its ranks
    // x + 8y are 0..31, 128 consecutive bytes: 4 sectors. (A rank that
    // ran x fastest last, 8x + 2y + z, would spread over 8 sectors.)
    // thread_index() is threadIdx: out2 is the same address.
    let a = run(r#"
#include <cooperative_groups.h>
using namespace cooperative_groups;
__global__ void k(float *out, float *out2) {
    thread_block b = this_thread_block();
    out[b.thread_rank()] = 0.0f;
    dim3 t = b.thread_index();
    dim3 d = b.dim_threads();
    out2[t.x + t.y * d.x + t.z * d.x * d.y] = 0.0f;
}
int main() { k<<<1, dim3(8, 4, 2)>>>(0, 0); }
"#);
    assert_eq!(sectors(find(&a, "out", Op::Store)), 4.0);
    assert_eq!(sectors(find(&a, "out2", Op::Store)), 4.0);
}

#[test]
fn tiles_of_tiles_dynamic_tiles_and_temporaries() {
    // Block 256, a tile of 32 is one warp (rank l, the lane).
    // sub = tiled_partition<4>(warp): rank l % 4, meta rank l / 4.
    // Words 32(l % 4) + l / 4: bank l / 4, four lanes each on four rows:
    // 4-way.
    // half = tiled_partition(block, 16): rank l % 16, meta rank
    // (32w + l) / 16 == 2w + l / 16. Words 32(l % 16) + 2w + l / 16: bank
    // 2w + l / 16, two banks of sixteen lanes: 16-way.
    // A thread_rank() of a temporary block: words t, no conflict; a tile
    // of a temporary: words 2l, 2-way.
    let a = run(r#"
#include <cooperative_groups.h>
__global__ void k(float *out) {
    __shared__ float quarter[4 * 32];
    __shared__ float half[16 * 32 + 64];
    __shared__ float flat[256];
    __shared__ float pairs[64];
    auto warp = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
    auto sub = cooperative_groups::tiled_partition<4>(warp);
    quarter[sub.thread_rank() * 32 + sub.meta_group_rank()] = 0.0f;
    cooperative_groups::thread_group h =
        cooperative_groups::tiled_partition(cooperative_groups::this_thread_block(), 16);
    half[h.thread_rank() * 32 + h.meta_group_rank()] = 0.0f;
    flat[cooperative_groups::this_thread_block().thread_rank()] = 0.0f;
    pairs[cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block()).thread_rank() * 2] = 0.0f;
    __syncthreads();
    out[0] = quarter[0] + half[0] + flat[0] + pairs[0];
}
int main() { k<<<1, 256>>>(0); }
"#);
    assert_eq!(ways(find(&a, "quarter", Op::Store)), 4.0);
    assert_eq!(ways(find(&a, "half", Op::Store)), 16.0);
    assert_eq!(ways(find(&a, "flat", Op::Store)), 1.0);
    assert_eq!(ways(find(&a, "pairs", Op::Store)), 2.0);
}

#[test]
fn groups_passed_to_device_functions() {
    // By reference and by value: the tile's rank reaches the callee.
    // Words 2l: 2-way; words 32l: 32-way.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void by_ref(const cg::thread_block_tile<32> &t, float *s) {
    s[t.thread_rank() * 2] = 0.0f;
}
__device__ void by_value(cg::thread_block g, float *s) {
    s[g.thread_rank() * 32] = 0.0f;
}
__global__ void k(float *out) {
    __shared__ float two[64];
    __shared__ float wide[256 * 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    by_ref(warp, two);
    by_value(block, wide);
    block.sync();
    out[0] = two[0] + wide[0];
}
int main() { k<<<1, 256>>>(0); }
"#);
    assert_eq!(ways(find(&a, "two", Op::Store)), 2.0);
    assert_eq!(ways(find(&a, "wide", Op::Store)), 32.0);
}

#[test]
fn grid_group_ranks() {
    // Grid 4 x 256: grid.thread_rank() == 256 * blockIdx.x + threadIdx.x,
    // one float per thread: 4 sectors; with stride 2, 256 bytes: 8.
    // block_rank() is blockIdx.x, num_blocks() is 4: the store of
    // per_block is one word per block, the same for a warp's lanes: 1
    // sector. grid.size() == 1024: `size() - 1 - rank` runs backwards,
    // still 4 sectors.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *out, float *wide, float *per_block, float *back) {
    cg::grid_group grid = cg::this_grid();
    out[grid.thread_rank()] = 0.0f;
    wide[grid.thread_rank() * 2] = 0.0f;
    grid.sync();
    per_block[grid.block_rank() + grid.num_blocks() * grid.block_index().y] = 0.0f;
    back[grid.size() - 1 - grid.thread_rank()] = 0.0f;
}
int main() { k<<<4, 256>>>(0, 0, 0, 0); }
"#);
    assert_eq!(sectors(find(&a, "out", Op::Store)), 4.0);
    assert_eq!(sectors(find(&a, "wide", Op::Store)), 8.0);
    assert_eq!(sectors(find(&a, "per_block", Op::Store)), 1.0);
    assert_eq!(sectors(find(&a, "back", Op::Store)), 4.0);
}

#[test]
fn groups_of_the_active_threads_are_unknown_and_say_so() {
    // Which lanes are active is decided at run time: the rank and the
    // size are unknown, with the group that made them named; no cost.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *out, const int *keys) {
    __shared__ float s[256];
    __shared__ float t[256];
    __shared__ float u[256];
    if (threadIdx.x % 3 == 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        s[active.thread_rank() * 2] = 0.0f;
        auto part = cg::tiled_partition(active, 4);
        t[part.meta_group_rank()] = 0.0f;
    }
    auto label = cg::labeled_partition(cg::tiled_partition<32>(cg::this_thread_block()), keys[threadIdx.x]);
    u[label.thread_rank()] = 0.0f;
    __syncthreads();
    out[threadIdx.x] = s[0] + t[0] + u[0];
}
int main() { k<<<1, 256>>>(0, 0); }
"#);
    for (array, group) in [
        ("s", "cg::coalesced_threads()"),
        ("t", "cg::coalesced_threads()"),
    ] {
        let r = find(&a, array, Op::Store);
        assert!(r.cost.is_none());
        match unknown_origin(r) {
            Origin::ActiveThreads { group: g, member } => {
                assert_eq!(g, group);
                assert_eq!(member, "thread_rank()");
            }
            o => panic!("`{array}`: {o:?}"),
        }
    }
    let u = find(&a, "u", Op::Store);
    assert!(u.cost.is_none());
    assert!(
        matches!(unknown_origin(u), Origin::ActiveThreads { group, .. }
            if group.starts_with("cg::labeled_partition(")),
        "{:?}",
        u.unknown_reason
    );
}

#[test]
fn collectives_stay_unknown() {
    // A shuffle's or a reduction's result is a value another lane had:
    // unknown, as any call result.
    let a = run(r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(float *out) {
    __shared__ float s[1024];
    __shared__ float r[1024];
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    s[warp.shfl((int)threadIdx.x * 7, 3)] = 0.0f;
    r[cg::reduce(warp, (int)threadIdx.x, cg::plus<int>())] = 0.0f;
    __syncthreads();
    out[0] = s[0] + r[0];
}
int main() { k<<<1, 256>>>(0); }
"#);
    for array in ["s", "r"] {
        let r = find(&a, array, Op::Store);
        assert!(
            matches!(unknown_origin(r), Origin::CallResult { .. }),
            "`{array}`: {:?}",
            r.unknown_reason
        );
    }
}

#[test]
fn a_group_kept_through_a_branch() {
    // The tile declared before an `if` is the same group after it (the
    // branch does not make it branch-dependent): words 2l, 2-way.
    let a = run(r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float *out, int n) {
    __shared__ float s[64];
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    float v = 0.0f;
    if (n > 3) {
        v = 1.0f;
    }
    s[warp.thread_rank() * 2] = v;
    __syncthreads();
    out[0] = s[0];
}
int main() { k<<<1, 256>>>(0, 5); }
"#);
    assert_eq!(ways(find(&a, "s", Op::Store)), 2.0);
}

#[test]
fn tiles_nested_past_the_syntax_budget_end_and_say_so() {
    // Each level of nesting is lowered once: 5,000 levels end at
    // `MAX_SYNTAX_DEPTH`, named in a note, and the rank is unknown.
    let depth = 5_000;
    let src = format!(
        "namespace cg = cooperative_groups;\n__global__ void k(float *a) {{ a[{}cg::this_thread_block(){}.thread_rank()] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n",
        "cg::tiled_partition<2>(".repeat(depth),
        ")".repeat(depth)
    );
    let a = run(&src);
    assert!(a
        .program
        .notes
        .iter()
        .flat_map(|n| n.kind.budgets())
        .any(|b| b.name == "MAX_SYNTAX_DEPTH"));
    assert_eq!(find(&a, "a", Op::Store).status, Status::Unknown);
    // Within the budget, 100 tiles of 2 nested: the innermost's rank is
    // the thread's rank % 2, words 0 and 1 for a warp: 1 sector.
    let src = format!(
        "namespace cg = cooperative_groups;\n__global__ void k(float *a) {{ a[{}cg::this_thread_block(){}.thread_rank()] = 0; }}\nint main() {{ k<<<1, 32>>>(0); }}\n",
        "cg::tiled_partition<2>(".repeat(100),
        ")".repeat(100)
    );
    assert_eq!(sectors(find(&run(&src), "a", Op::Store)), 1.0);
}
