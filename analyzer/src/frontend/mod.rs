//! The front end: CUDA source (parsed by tree-sitter-cuda) to [`Program`].
//!
//! - [`source`]: the text as parsed and byte offset -> line/column.
//! - [`tu`]: the translation-unit pass: macros, types, constants, functions,
//!   kernels, file-scope arrays, launch sites; `#if` resolution.
//! - [`lower`]: kernel bodies to the IR: values, places, accesses, guards,
//!   loops, inlining of `__device__` functions and macro expansion.
//! - [`types`]: sizes, alignments and struct layout.
//! - `fuse`: neighbouring field accesses of one element that nvcc merges.
//! - [`cache`]: header parse trees shared by the files of a run.

pub mod cache;
pub(crate) mod fuse;
pub(crate) mod lower;
pub(crate) mod preprocess;
pub mod source;
pub(crate) mod tu;
pub mod types;

use std::collections::BTreeMap;

use crate::ir::Program;

/// A per-kernel override from the configuration (`[kernel.NAME]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelOverride {
    pub block: Option<[u64; 3]>,
    pub grid: Option<[u64; 3]>,
    /// Values of scalar parameters, by name.
    pub params: BTreeMap<String, i64>,
    /// Template arguments (integer values, in order) used when no launch
    /// in the file instantiates the kernel.
    pub template: Vec<i64>,
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Overrides keyed by kernel name.
    pub kernels: BTreeMap<String, KernelOverride>,
    /// Extra object-like macros (`-D NAME=VALUE`).
    pub defines: Vec<(String, String)>,
    /// Lower only the kernel of this name (re-analysis of one kernel).
    pub only_kernel: Option<String>,
    /// Headers the file may include, read by the caller (the analyzer does
    /// no IO): `#include "name"` takes the first one of that name.
    pub headers: Vec<Header>,
    /// Header parse trees shared by the files of one run.
    pub parse_cache: Option<std::sync::Arc<cache::ParseCache>>,
}

/// A header's text, as the caller found it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// The name as written in `#include "..."`.
    pub name: String,
    /// Where it was found, for reports.
    pub path: String,
    pub text: Vec<u8>,
}

/// What parsing alone saw in one file (`warplint debug parse-only`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub bytes: u64,
    pub nodes: u64,
    /// Whether the tree has an ERROR or MISSING node.
    pub has_error: bool,
}

/// Parses `input` with tree-sitter-cuda and nothing else: no
/// preprocessing, no headers, no lowering. The floor of the pipeline's
/// cost, for benchmarks.
pub fn parse_only(input: &[u8]) -> ParseStats {
    let mut stats = ParseStats {
        bytes: input.len() as u64,
        ..ParseStats::default()
    };
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .is_err()
    {
        return stats;
    }
    if let Some(tree) = parser.parse(input, None) {
        let root = tree.root_node();
        stats.has_error = root.has_error();
        stats.nodes = root.descendant_count() as u64;
    }
    stats
}

/// Parses one translation unit and lowers every kernel in it.
pub fn parse_program(input: &[u8], options: &Options) -> Program {
    tu::build(input, options)
}
