//! The front end: CUDA source (parsed by tree-sitter-cuda) to [`Program`].
//!
//! - [`source`]: the text as parsed and byte offset -> line/column.
//! - [`preprocess`]: text-level preprocessing before parsing: `#if`
//!   resolution, headers entered, spellings the grammar cannot parse.
//! - [`tu`]: the translation-unit pass: macros, types, constants, functions,
//!   kernels, file-scope arrays, launch sites.
//! - [`lower`]: kernel bodies to the IR: values, places, accesses, guards,
//!   loops, inlining of `__device__` functions and macro expansion.
//! - [`types`]: sizes, alignments and struct layout.
//! - [`cuda_types`]: CUDA's own types (vector, fp16/bf16/fp8, curand
//!   states, `wmma::fragment`, `array`), measured.
//! - [`cache`]: header parse trees shared by the files of a run.
//!
//! What nvcc itself does (its predefined macros, merged field accesses)
//! is in [`crate::nvcc`].

pub mod cache;
pub mod cuda_types;
pub(crate) mod fields;
pub(crate) mod lower;
pub(crate) mod preprocess;
pub mod source;
pub(crate) mod tu;
pub mod types;

/// Lowering numbers regions for nvcc's merging of field accesses.
pub(crate) use crate::nvcc::fuse;

pub use tu::{host_arg_values, host_calls_name, host_values_of};

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
    /// The architecture nvcc compiles the device pass for: its predefined
    /// macros ([`crate::nvcc::predefined_macros`]: `__CUDACC__`,
    /// `__CUDA_ARCH__`, …) are defined before [`Options::defines`].
    /// `None`: none of them.
    pub arch: Option<crate::hardware::Arch>,
    /// Extra object-like macros (`-D NAME=VALUE`), after nvcc's; a later
    /// definition of a name replaces an earlier one.
    pub defines: Vec<(String, String)>,
    /// The block a kernel is analysed with when nothing says.
    pub block_defaults: BlockDefaults,
    /// Lower only the kernel of this name (re-analysis of one kernel).
    pub only_kernel: Option<String>,
    /// Lower only the kernels defined in this file (0: the file analysed;
    /// n: its n-th header): a header analysed through a file that includes
    /// it, as that file's build sees it.
    pub only_file: Option<u32>,
    /// Headers the file may include, read by the caller (the analyzer does
    /// no IO): `#include "name"` takes the first one of that name.
    pub headers: Vec<Header>,
    /// Header parse trees shared by the files of one run.
    pub parse_cache: Option<std::sync::Arc<cache::ParseCache>>,
    /// The input is an earlier one with one edit (the fix search's
    /// candidate padding): its tree is reused, tree-sitter reparses
    /// incrementally.
    pub reparse: Option<Reparse>,
    /// Launch sites in other files of the project, for the kernels this
    /// file defines that nothing in it launches (the caller's whole-project
    /// index: [`crate::ir::Program::launch_sites`] of the other files).
    pub project_launches: Vec<crate::ir::ProjectLaunch>,
    /// Host functions of other files whose calls the walk records
    /// ([`crate::ir::Program::host_calls`]), besides this unit's own
    /// launching functions.
    pub host_callees: Vec<String>,
    /// The whole project's calls of launching host functions (the
    /// caller's index), joined with the unit's own to give a launch
    /// argument that is its host function's parameter its values.
    pub host_calls: Vec<crate::ir::HostCall>,
    /// Integer constants other files of the project define with external
    /// linkage, for a unit that only declares them.
    pub extern_values: BTreeMap<String, i64>,
    /// The language of the file: CUDA C++, or Rust kernels
    /// ([`crate::rust`]).
    pub language: Language,
}

/// The language of a file, as the caller decides it (by its extension).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Language {
    #[default]
    Cuda,
    Rust,
}

/// The block shape a kernel is analysed with when no launch, override or
/// `__launch_bounds__` gives one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockDefaults {
    /// For kernels that use only `threadIdx.x`.
    pub one_d: [u64; 3],
    /// For kernels that use `threadIdx.y` or `threadIdx.z`.
    pub two_d: [u64; 3],
}

impl Default for BlockDefaults {
    fn default() -> Self {
        BlockDefaults {
            one_d: [256, 1, 1],
            two_d: [32, 8, 1],
        }
    }
}

impl BlockDefaults {
    /// The default for a kernel that uses these thread dimensions.
    pub fn for_dims(&self, uses_thread_dims: [bool; 3]) -> [u64; 3] {
        if uses_thread_dims[1] || uses_thread_dims[2] {
            self.two_d
        } else {
            self.one_d
        }
    }
}

/// The file as parsed (after preprocessing) and its tree, kept with the
/// analysis so that an edited copy can be reparsed incrementally.
pub struct ParsedMain {
    pub text: Vec<u8>,
    pub tree: tree_sitter::Tree,
    /// What the file's analysis worked out before lowering, for an edit
    /// that cannot change it (see [`tu::build`]).
    pub(crate) prepared: Option<tu::Prepared>,
}

impl std::fmt::Debug for ParsedMain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParsedMain({} bytes)", self.text.len())
    }
}

/// An edit of a parsed file: bytes `start..old_end` of `base`'s input
/// became `start..new_end`.
#[derive(Clone, Debug)]
pub struct Reparse {
    pub base: std::sync::Arc<ParsedMain>,
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

/// `base`'s tree edited to match `text`, when `text` is `base`'s text
/// with exactly the recorded edit (else `None`: parse from scratch).
pub(crate) fn edited_tree(r: &Reparse, text: &[u8]) -> Option<tree_sitter::Tree> {
    let old = &r.base.text;
    let (start, old_end, new_end) = (r.start, r.old_end, r.new_end);
    if start > old_end || old_end > old.len() || start > new_end || new_end > text.len() {
        return None;
    }
    if old.len() - old_end != text.len() - new_end
        || old[..start] != text[..start]
        || old[old_end..] != text[new_end..]
    {
        return None;
    }
    let point = |t: &[u8], at: usize| {
        let row = t[..at].iter().filter(|b| **b == b'\n').count();
        let line_start = t[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        tree_sitter::Point::new(row, at - line_start)
    };
    let mut tree = r.base.tree.clone();
    tree.edit(&tree_sitter::InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old, start),
        old_end_position: point(old, old_end),
        new_end_position: point(text, new_end),
    });
    Some(tree)
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
    // What the analysis would not parse either (see `tu::build`).
    if input.len() > crate::budget::MAX_FILE_BYTES || input.contains(&0) {
        stats.bytes = 0;
        return stats;
    }
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
    match options.language {
        Language::Cuda => tu::build(input, options).0,
        Language::Rust => crate::rust::parse_program(input, options),
    }
}

/// [`parse_program`], also returning the file as parsed: what the fix
/// search's edited copies start from ([`Reparse::base`]). It is the front
/// end's, not the IR's: the IR stays plain data.
pub fn parse_program_keeping_tree(
    input: &[u8],
    options: &Options,
) -> (Program, Option<std::sync::Arc<ParsedMain>>) {
    match options.language {
        Language::Cuda => tu::build(input, options),
        // The fix search's reparse edits the C++ tree; a Rust candidate
        // is translated afresh.
        Language::Rust => (crate::rust::parse_program(input, options), None),
    }
}
