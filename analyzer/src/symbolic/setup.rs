//! Under what an access runs: a launch resolved to numbers ([`Setup`]:
//! block, grid, parameters, with the assumptions that stand in for what
//! the launch does not give), and the representative blocks an access is
//! run in (all of a small grid, else evenly spaced ones; only block 0 when
//! the access reads neither `blockIdx` nor `gridDim`).

use super::{values, EngineOptions};
use crate::finding::Assumption;
use crate::ir::{Access, Atom, Builtin, Expr, Kernel, LaunchOrigin};

/// The launch configuration, resolved to numbers.
#[derive(Clone)]
pub(super) struct Setup {
    pub(super) block: [i64; 3],
    pub(super) grid: [i64; 3],
    pub(super) params: Vec<i64>,
    pub(super) params_assumed: Vec<bool>,
    /// Per parameter: no launch gives it and the access is analysed over
    /// its representative values (`values.rs`), so a read of it that
    /// matters is recorded ([`super::run::Run::matters`]), not assumed.
    pub(super) quantified: Vec<bool>,
    /// No launch gives the block: the access is analysed over the common
    /// shapes (`values.rs`), and no block is assumed.
    pub(super) block_varied: bool,
    /// Whether the block is the kernel's `__launch_bounds__` (varied, it
    /// is varied up to the bound and reported at it).
    pub(super) block_bound: bool,
    pub(super) grid_assumed: bool,
    /// The grid (given) has more blocks than are run
    /// (`EngineOptions::max_blocks`, `MAX_BLOCKS_SAMPLED`): where the block
    /// index matters, the cost rests on the blocks sampled.
    pub(super) blocks_sampled: bool,
    pub(super) assumptions: Vec<Assumption>,
    /// [`crate::ir::Launch::param_sets`].
    pub(super) sets: Vec<Vec<i64>>,
    /// [`crate::ir::Launch::param_sampled`].
    pub(super) sampled: Vec<u32>,
}

impl Setup {
    /// What the launch gives of its host function's callers' values.
    pub(super) fn given(&self) -> values::Given<'_> {
        (&self.sets, &self.sampled)
    }
}

impl Setup {
    /// Launch `li` of `k`, with the defaults of `opts` where it says
    /// nothing; a parameter no launch gives takes its first representative
    /// value ([`values::first`]) unless `opts` sets one.
    pub(super) fn new(k: &Kernel, li: usize, opts: &EngineOptions) -> Setup {
        let l = &k.launches[li];
        let mut assumptions = Vec::new();
        // The front end decided the block (`Launch::origin` says why);
        // what rests on an assumption is stated here.
        let block = l.block;
        // A default block is varied over common shapes, a block from
        // launch bounds over the common sizes up to the bound.
        let block_bound = l.origin == LaunchOrigin::LaunchBounds && values::below_bound(block[0]);
        let block_varied =
            (block_bound || l.origin == LaunchOrigin::Default) && opts.vary_default_block;
        match l.origin {
            LaunchOrigin::LaunchBounds if !block_varied => {
                assumptions.push(Assumption::LaunchBoundsBlock { threads: block[0] })
            }
            LaunchOrigin::Default if !block_varied => assumptions.push(Assumption::DefaultBlock {
                block,
                kernel: k.name.clone(),
            }),
            _ => {}
        }
        let (grid, grid_assumed) = match l.grid {
            Some(g) => (g, false),
            None => (opts.default_grid, true),
        };
        let given = |i: usize| l.params.get(i).copied().flatten();
        let params: Vec<i64> = (0..k.params.len())
            .map(|i| {
                given(i)
                    .or(opts.default_param)
                    .unwrap_or_else(|| values::first(k, (&l.param_sets, &l.param_sampled), i))
            })
            .collect();
        let params_assumed: Vec<bool> = (0..k.params.len()).map(|i| given(i).is_none()).collect();
        let quantified = params_assumed
            .iter()
            .map(|a| *a && opts.default_param.is_none())
            .collect();
        let c = |v: [u64; 3]| [v[0] as i64, v[1] as i64, v[2] as i64];
        Setup {
            block: c(block),
            grid: c(grid),
            params,
            params_assumed,
            quantified,
            block_varied,
            block_bound,
            grid_assumed,
            blocks_sampled: !grid_assumed && blocks_in(grid) > opts.max_blocks,
            assumptions,
            sets: l.param_sets.clone(),
            sampled: l.param_sampled.clone(),
        }
    }
}

/// The number of blocks of `grid` (each dimension at least 1).
pub(super) fn blocks_in(grid: [u64; 3]) -> u64 {
    grid.iter().fold(1u64, |n, d| n.saturating_mul((*d).max(1)))
}

/// Whether the access reads `blockIdx` or `gridDim` (in its address, its
/// guards or its loops' control): else block 0 stands for every block.
pub(super) fn uses_block(k: &Kernel, a: &Access, levels: &[usize]) -> bool {
    let mut exprs: Vec<&Expr> = vec![&a.offset];
    exprs.extend(a.guards.iter().map(|g| &g.cond));
    for &li in levels {
        let lp = &k.loops[li];
        exprs.extend(lp.init.iter());
        exprs.extend(lp.next.iter());
        exprs.extend(lp.pre_cond.iter());
        exprs.extend(lp.post_cond.iter());
        exprs.extend(lp.entry_guards.iter().map(|g| &g.cond));
        exprs.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
    }
    exprs.iter().any(|e| {
        e.atoms()
            .iter()
            .any(|x| matches!(x, Atom::Builtin(Builtin::BlockIdx(_) | Builtin::GridDim(_))))
    })
}

/// Representative blocks: all of a small grid, else evenly spaced ones
/// including the first and the last.
pub(super) fn blocks(grid: [i64; 3], max: u64) -> Vec<[i64; 3]> {
    let (gx, gy, gz) = (
        grid[0].max(1) as u64,
        grid[1].max(1) as u64,
        grid[2].max(1) as u64,
    );
    let total = gx.saturating_mul(gy).saturating_mul(gz);
    let pick: Vec<u64> = if total <= max {
        (0..total).collect()
    } else {
        // i * (total - 1) can overflow u64 for huge grids: compute in u128.
        let mut v: Vec<u64> = (0..max as u128)
            .map(|i| (i * (total as u128 - 1) / (max as u128 - 1).max(1)) as u64)
            .collect();
        v.dedup();
        v
    };
    pick.into_iter()
        .map(|i| {
            [
                (i % gx) as i64,
                ((i / gx) % gy) as i64,
                (i / gx / gy) as i64,
            ]
        })
        .collect()
}
