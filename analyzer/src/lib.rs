//! warplint's analysis library. Pure: text in, facts out; no file IO, no
//! printing.
//!
//! [`analyze`] runs the whole pipeline on one translation unit: the front
//! end ([`frontend`]) lowers CUDA source to the [`ir`]; the engine
//! ([`symbolic`]) evaluates the 32 lane addresses of every warp of every
//! access and costs them with a [`hardware`] model.

pub mod budget;
pub mod frontend;
pub mod hardware;
pub mod ir;
pub mod symbolic;

pub use frontend::{parse_program, KernelOverride, Options as FrontendOptions};
pub use hardware::{Arch, MemoryModel};
pub use symbolic::{analyze_program, AccessReport, EngineOptions, Status};

/// Everything the engine and front end need to know beyond the source.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub frontend: FrontendOptions,
    pub engine: EngineOptions,
}

/// The result of analysing one translation unit.
#[derive(Clone, Debug, Default)]
pub struct FileAnalysis {
    pub program: ir::Program,
    pub reports: Vec<AccessReport>,
}

/// Analyses one CUDA translation unit with the given hardware model.
pub fn analyze(source: &[u8], model: &dyn MemoryModel, options: &Options) -> FileAnalysis {
    let program = parse_program(source, &options.frontend);
    let reports = analyze_program(&program, model, &options.engine);
    FileAnalysis { program, reports }
}
