//! What the engine answers, per access and launch: [`AccessReport`] with
//! its [`Status`] and [`Cost`], and the [`EngineOptions`] it runs under.
//! A report whose status is `unknown` carries no cost and no worst warp.

use crate::budget;
use crate::finding::{Assumption, ForEvery, UnknownReason};
use crate::hardware::Lanes;
use crate::ir::{Op, Space, Span};

/// Defaults and budgets of the engine (see [`crate::budget`]).
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Grid when nothing says.
    pub default_grid: [u64; 3],
    /// Value assumed for an integer parameter nothing gives a value to;
    /// `None` (the default): the access is analysed over representative
    /// values (`values.rs`) and the answer says for which it holds.
    pub default_param: Option<i64>,
    /// Analyse a kernel no launch gives a block over the common block
    /// shapes for its dimensions (the default); false: under the front
    /// end's default block alone, assumed.
    pub vary_default_block: bool,
    pub max_loop_iterations: u64,
    pub max_executions: u64,
    pub max_blocks: u64,
    /// Expression nodes evaluated per access (each for a whole warp).
    pub max_work: u64,
    /// Expression nodes evaluated per kernel instantiation, all accesses.
    pub max_kernel_work: u64,
    /// Analyse only the accesses to arrays of this name (re-analysis for fixes).
    pub only_array: Option<String>,
    /// Fix search: stop analysing an access to the shared array of this
    /// name as soon as one warp's n-way degree exceeds the number (the
    /// access becomes `unknown`): the search only needs to know that a
    /// candidate does no better than the best so far.
    pub stop_above_ways: Option<(String, f64)>,
    /// Do not run again a warp or block proved to cost what an earlier
    /// one did (`collapse.rs`); off only to test that the proof holds.
    pub collapse: bool,
    /// Add runs of the innermost loop's iterations proved to cost what the
    /// first run did rather than run them (`stride.rs`); off only to test
    /// that the proof holds.
    pub stride: bool,
    /// Kernels already analysed in this run, shared by its files
    /// (`reuse.rs`); `None`: every kernel is analysed.
    pub kernel_memo: Option<std::sync::Arc<super::reuse::KernelMemo>>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            default_grid: [2, 2, 1],
            default_param: None,
            vary_default_block: true,
            max_loop_iterations: budget::MAX_LOOP_ITERATIONS,
            max_executions: budget::MAX_EXECUTIONS_PER_ACCESS,
            max_blocks: budget::MAX_BLOCKS_SAMPLED,
            max_work: budget::MAX_WORK_PER_ACCESS,
            max_kernel_work: budget::MAX_WORK_PER_KERNEL,
            only_array: None,
            stop_above_ways: None,
            collapse: true,
            stride: true,
            kernel_memo: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Exact,
    Assumed,
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Exact => "exact",
            Status::Assumed => "assumed",
            Status::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SharedStats {
    /// Mean wavefronts per executed warp-level instruction.
    pub wavefronts: f64,
    /// Mean wavefronts a conflict-free access by the same lanes needs: one
    /// per group of lanes served together (32, 16 or 8) with an active lane.
    pub ideal_wavefronts: f64,
    /// `wavefronts / ideal_wavefronts`: the n-way conflict degree.
    pub ways: f64,
    pub max_wavefronts: u32,
    pub max_ways: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GlobalStats {
    /// Mean 32-byte sectors per executed warp-level instruction.
    pub sectors: f64,
    pub ideal_sectors: f64,
    pub max_sectors: u32,
    /// Mean memory transactions per instruction (legacy architectures:
    /// summed over the half- or quarter-warp requests).
    pub transactions: f64,
    /// Mean bytes those transactions move.
    pub bytes: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstantStats {
    /// Mean serialised requests (distinct addresses) per instruction.
    pub requests: f64,
    pub max_requests: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cost {
    Shared(SharedStats),
    /// Global and local memory.
    Global(GlobalStats),
    Constant(ConstantStats),
}

/// The warp with the worst cost, for pictures and explanations.
#[derive(Clone, Debug, PartialEq)]
pub struct WarpSample {
    pub block: [i64; 3],
    pub warp: u32,
    /// Iteration number of each enclosing loop, outermost first.
    pub iterations: Vec<u64>,
    /// Byte offset from the array's base touched by each lane.
    pub lanes: Lanes,
    pub cost: u32,
}

/// The prediction for one access under one launch configuration.
#[derive(Clone, Debug)]
pub struct AccessReport {
    pub kernel: usize,
    pub access: usize,
    pub launch: usize,
    pub kernel_name: String,
    pub array: String,
    pub space: Space,
    pub op: Op,
    pub width: u32,
    pub span: Span,
    pub text: String,
    pub block: [u64; 3],
    pub grid: [u64; 3],
    /// Warp-level executions per block the means are taken over.
    pub executions: f64,
    /// Warp-level executions per block that issue the instruction with no
    /// lane active (a predicated `if` side the warp's lanes all fail):
    /// no cost, and not among `executions`; Nsight Compute counts them
    /// among its executed instructions.
    pub predicated_off: f64,
    /// As `predicated_off`, where whether nvcc predicates the side is
    /// undecided (measured both ways): the warps that issue the
    /// instruction with no lane active if it does; in no mean.
    pub undecided_off: f64,
    pub status: Status,
    /// What the cost rests on, each once (in the order met; outputs word
    /// and sort them).
    pub assumptions: Vec<Assumption>,
    /// Inputs no launch gives over whose every tried value the cost is the
    /// same: the answer does not rest on them.
    pub for_every: Vec<ForEvery>,
    pub unknown_reason: Option<UnknownReason>,
    pub cost: Option<Cost>,
    pub worst: Option<WarpSample>,
    /// The lowest byte offset from the array's base that an analysed lane
    /// touched, over the warps whose address needed no assumption (beyond
    /// which blocks run). Below zero, the pointer cannot be the start of an
    /// allocation (`g_s[threadIdx.x - 1]`), so its alignment is not known.
    pub min_offset: Option<i64>,
    /// [`crate::ir::Access::inlined_at`].
    pub inlined_at: Option<crate::ir::Inlined>,
    /// [`crate::ir::Access::hoisted`]: the loop nvcc hoists the load out
    /// of, and the line it is counted on.
    pub hoisted: Option<crate::ir::Hoisted>,
    /// What the compiled code runs for it, where a SASS listing was given
    /// ([`crate::Options::sass`], `nvcc::sass`).
    pub sass: Option<crate::nvcc::sass::SassCheck>,
}

impl From<SharedStats> for Cost {
    fn from(s: SharedStats) -> Cost {
        Cost::Shared(s)
    }
}
