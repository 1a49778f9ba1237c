//! warplint's analysis library. Pure: text in, facts out; no file IO, no
//! printing (`analyzer/clippy.toml` makes either a clippy error).
//!
//! [`analyze`] runs the whole pipeline on one translation unit: the front
//! end ([`frontend`]) lowers CUDA source to the [`ir`]; the engine
//! ([`symbolic`]) evaluates the 32 lane addresses of every warp of every
//! access and costs them with a [`hardware`] model. [`nvcc`] holds what
//! nvcc does that the analysis follows (predefined macros, merged field
//! accesses).

pub mod budget;
pub mod finding;
pub mod frontend;
pub mod hardware;
pub mod interned;
pub mod ir;
pub mod nvcc;
pub mod rust;
pub mod symbolic;

pub use frontend::{
    parse_only, parse_program, Header, KernelOverride, Options as FrontendOptions, ParseStats,
};
pub use hardware::{Arch, MemoryModel};
pub use symbolic::{analyze_program, AccessReport, EngineOptions, Status};

/// Everything the engine and front end need to know beyond the source.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub frontend: FrontendOptions,
    pub engine: EngineOptions,
    /// What nvcc compiled the file to, where known: each report is checked
    /// against its instructions ([`nvcc::sass::check`]).
    pub sass: Option<std::sync::Arc<nvcc::sass::Sass>>,
}

/// The result of analysing one translation unit.
#[derive(Clone, Debug, Default)]
pub struct FileAnalysis {
    pub program: ir::Program,
    pub reports: Vec<AccessReport>,
    /// Every block-wide barrier under each launch: which threads reach it
    /// (none for a fix search's candidate, which asks about one array).
    pub barriers: Vec<symbolic::BarrierReport>,
    /// Every `if`/`else` with work on both sides under each launch: how
    /// many warps it splits (none for a fix search's candidate).
    pub branches: Vec<symbolic::BranchReport>,
    /// Pairs of accesses lanes of a warp may exchange data through with
    /// nothing ordering them, under each launch (none for a fix search's
    /// candidate).
    pub races: Vec<symbolic::RaceReport>,
    /// The file as the front end parsed it (kept for the fix search's
    /// incremental reparse of an edited copy, [`frontend::Reparse`]).
    pub parsed: Option<std::sync::Arc<frontend::ParsedMain>>,
}

/// Counts over one or more analysed files (`report`'s `summary`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: u64,
    /// Kernel instantiations analysed.
    pub kernels: u64,
    /// Kernels with a note (something not understood) inside them.
    pub kernels_with_notes: u64,
    pub accesses: u64,
    pub exact: u64,
    pub assumed: u64,
    pub unknown: u64,
}

impl Summary {
    pub fn add(&mut self, o: &Summary) {
        self.files += o.files;
        self.kernels += o.kernels;
        self.kernels_with_notes += o.kernels_with_notes;
        self.accesses += o.accesses;
        self.exact += o.exact;
        self.assumed += o.assumed;
        self.unknown += o.unknown;
    }
}

impl FileAnalysis {
    /// How many notes (things not understood) fall inside each kernel of
    /// [`ir::Program::kernels`], in order.
    pub fn kernel_notes(&self) -> Vec<usize> {
        let kernels = &self.program.kernels;
        // A note some instantiation's lowering raised counts for the
        // instantiations that raised it; the others (parse errors,
        // preprocessor notes) for every kernel whose extent holds them.
        let notes = &self.program.notes;
        let lowered: Vec<bool> = notes
            .iter()
            .map(|n| kernels.iter().any(|k| k.lowering_notes.contains(n)))
            .collect();
        kernels
            .iter()
            .map(|k| {
                notes
                    .iter()
                    .zip(&lowered)
                    .filter(|(n, &lowered)| {
                        n.span.file == k.extent.file
                            && n.span.start >= k.extent.start
                            && n.span.start < k.extent.end
                            && (!lowered || k.lowering_notes.contains(n))
                    })
                    .count()
            })
            .collect()
    }

    /// This file's counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            files: 1,
            kernels: self.program.kernels.len() as u64,
            kernels_with_notes: self.kernel_notes().iter().filter(|&&n| n > 0).count() as u64,
            ..Summary::default()
        };
        for r in &self.reports {
            s.accesses += 1;
            match r.status {
                Status::Exact => s.exact += 1,
                Status::Assumed => s.assumed += 1,
                Status::Unknown => s.unknown += 1,
            }
        }
        s
    }
}

/// The launch sites of one translation unit, no kernel lowered or
/// analysed: what the whole-project index reads from a file (see
/// [`FrontendOptions::project_launches`]).
pub fn launch_sites(source: &[u8], options: &FrontendOptions) -> Vec<ir::SiteRecord> {
    host_facts(source, options).sites
}

/// What one unit gives the whole-project index: its launch sites, its
/// calls of launching functions (and of `options.host_callees`), and its
/// integer constants with external linkage. The front end alone: no
/// kernel is lowered.
pub fn host_facts(source: &[u8], options: &FrontendOptions) -> ir::HostFacts {
    let mut o = options.clone();
    // A name no kernel has: every launching function is walked, no kernel
    // is lowered.
    o.only_kernel = Some(String::new());
    let p = frontend::parse_program(source, &o);
    ir::HostFacts {
        sites: p.launch_sites,
        calls: p.host_calls,
        extern_consts: p.extern_consts,
    }
}

pub use frontend::{host_arg_values, host_calls_name, host_values_of};

/// Analyses one CUDA translation unit with the given hardware model.
pub fn analyze(source: &[u8], model: &dyn MemoryModel, options: &Options) -> FileAnalysis {
    let (mut program, parsed) = frontend::parse_program_keeping_tree(source, &options.frontend);
    let mut reports = analyze_program(&program, model, &options.engine);
    if let Some(sass) = &options.sass {
        nvcc::sass::check(sass, &mut program, &mut reports, model, &options.engine);
    }
    let e = &options.engine;
    let whole = e.only_array.is_none() && e.stop_above_ways.is_none();
    let (barriers, branches, races) = if whole {
        (
            symbolic::analyze_barriers(&program, model, e),
            symbolic::analyze_branches(&program, model, e),
            symbolic::analyze_races(&program, model, e),
        )
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    FileAnalysis {
        program,
        reports,
        barriers,
        branches,
        races,
        parsed,
    }
}
