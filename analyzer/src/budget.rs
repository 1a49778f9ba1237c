//! Every budget the analyzer works within, in one place.
//!
//! Input is untrusted: each recursion, enumeration and expansion is bounded
//! by one of these numbers. When a budget runs out the analyzer says so (an
//! `unknown` result or a note naming the budget: one of the [`Budget`]
//! values at the end), it never panics or hangs. There is no wall-clock budget: a time limit would
//! make the answer depend on the machine's load, and answers are
//! deterministic; per-kernel time is bounded by [`MAX_WORK_PER_KERNEL`].

use crate::finding::Budget;

/// Largest source file read, in bytes. Larger files get a note and are skipped.
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Headers read per translation unit.
pub const MAX_HEADERS: usize = 256;

/// Header text read per translation unit, in bytes. Headers are read
/// breadth first (the file's own includes, then theirs); the first one
/// that would pass this, and all after it, are not read, as if not found.
/// Parsing is most of a file's cost: CUTLASS's examples reach 12 MB of
/// headers (over a second each) once `include-search = "project"` finds
/// them.
pub const MAX_HEADER_BYTES: usize = 4 << 20;

/// Files listed in one project's header index (what a quoted `#include`
/// found on no searched path is looked up in, by the end of its path).
/// The index holds the first files of a sorted walk; past this, the rest
/// are not found through it.
pub const MAX_INDEXED_FILES: usize = 200_000;

/// Files the whole-project launch index reads per run (the run's files,
/// then the rest of their projects'). Past it the rest give no launch
/// sites, and the run says how many were left out.
pub const MAX_LAUNCH_INDEX_FILES: usize = 20_000;

/// Files of the project, none of them in the run, that a header given
/// alone is analysed through (those that launch its kernels first, then by
/// path). Past it the header's kernels are not analysed in the contexts of
/// the other files that include it, and the run says how many there were.
pub const MAX_HEADER_CONTEXTS: usize = 4;

/// Parsed macro expansions kept per thread (by text) for reuse; the set
/// is dropped and started again when full, or past `MAX_SNIPPET_BYTES`.
pub const MAX_SNIPPET_TREES: usize = 4096;

/// Text of the parsed macro expansions kept per thread. A tree takes about
/// 17 times its text, so this bounds the set near 17 MiB per thread (16 MiB
/// of text let a fuzzing worker grow past 900 MB).
pub const MAX_SNIPPET_BYTES: usize = 1 << 20;

/// Header text whose parse trees a run keeps to share between the files
/// that include it (`frontend/cache.rs`); when full, a tree asked for
/// more often takes the place of those asked for less. A tree takes about
/// 17 times its text in memory, so this bounds the cache near 140 MiB.
/// CUTLASS's files each reach 4 MiB of its headers (`MAX_HEADER_BYTES`):
/// at 4 MiB its `check` took 357 s, at 8 MiB 159 s (42 MB more at peak).
pub const MAX_PARSE_CACHE_BYTES: usize = 8 << 20;

/// Distinct header texts whose requests the parse cache counts (16 bytes
/// each); texts first seen past it count as asked for once.
pub const MAX_PARSE_CACHE_COUNTED: usize = 1 << 16;

/// Header text kept by the run-wide cache of preprocessed headers (each
/// header once per state of the macros it was entered with); when full, it
/// starts again.
pub const MAX_PREPROCESSED_CACHE_BYTES: usize = 64 << 20;

/// Deepest syntax nesting the lowering recursion follows (parentheses,
/// nested statements). Deeper subtrees become `unknown`.
pub const MAX_SYNTAX_DEPTH: u32 = 256;

/// Largest symbolic expression (tree nodes) kept; larger ones become `unknown`.
pub const MAX_EXPR_NODES: u32 = 4096;

/// Deepest symbolic expression kept; deeper ones become `unknown`.
pub const MAX_EXPR_DEPTH: u32 = 192;

/// Nested `__device__` function inlining.
pub const MAX_INLINE_DEPTH: u32 = 12;

/// `__device__` calls inlined per kernel (each call site counts).
pub const MAX_INLINED_CALLS: u32 = 512;

/// Nested macro expansion (also stops self-referential macros).
pub const MAX_MACRO_DEPTH: u32 = 16;

/// Macro expansions lowered per kernel (each use of a macro, at any
/// depth, counts): `#define A1 A0 A0`, `#define A2 A1 A1`, ... doubles the
/// work per level, which depth alone does not bound. ggml's mmq kernels
/// use several thousand.
pub const MAX_MACRO_EXPANSIONS: u32 = 65_536;

/// Text one macro use's arguments may grow to when a macro used in its
/// own arguments is expanded there first (C's argument prescan,
/// `lower/macros.rs`): `MAX(MAX(MAX(…)))` doubles it at each level, and
/// an expression past a few thousand nodes is cut anyway. Past it the use
/// is unknown, and said so.
pub const MAX_PRESCAN_BYTES: usize = 16 << 10;

/// Nested `#include` depth (a header that includes a header ...).
pub const MAX_INCLUDE_DEPTH: u32 = 64;

/// Template instantiations analysed per kernel.
pub const MAX_INSTANTIATIONS: usize = 128;

/// Distinct launch configurations analysed per kernel instantiation.
pub const MAX_LAUNCHES_PER_KERNEL: usize = 16;

/// Accesses looked at after a field access for neighbours nvcc would merge
/// with it (`nvcc/fuse.rs`; nvcc's vectorizer also looks only at nearby
/// instructions). When another access to the same element lies past it in
/// the same straight-line region, whether they merge is not known: the
/// accesses are `unknown`, naming this budget.
pub const MAX_FUSE_WINDOW: usize = 64;

/// Iterations enumerated per loop, per entry into that loop. 128 covers
/// a full period of every pattern the hardware has (32 banks; 128-byte
/// lines, even at a 1-byte step); the mean of a longer loop is taken over
/// its first 128 iterations, and the result says so.
pub const MAX_LOOP_ITERATIONS: u64 = 128;

/// Values a launch argument is analysed over when they come from a host
/// loop or from the callers of the host function that launches: past it,
/// evenly spaced ones (the first and the last among them) are, and the
/// result says so. As many as the runs an access gets
/// (`MAX_VALUE_COMBINATIONS`), so that all of them are run.
pub const MAX_HOST_VALUES: usize = MAX_VALUE_COMBINATIONS;

/// Values a host argument is followed to (a loop's, or all the callers'):
/// past it, the argument is not known (the spread of sizes is tried
/// instead, and a note says why).
pub const MAX_HOST_VALUES_SEEN: usize = 1024;

/// Loop iterations run, over all the nested loops, to enumerate the
/// values one host call's argument takes (`for i … for j … run(i % 2)`
/// would otherwise run 128 × 128 × … iterations for two values).
pub const MAX_HOST_LOOP_STEPS: u64 = 1 << 14;

/// Host functions followed up from a launch: the launching function's
/// callers, theirs, and so on (`main` → `run` → `launch` is 2).
pub const MAX_HOST_CALL_DEPTH: usize = 4;

/// Warp-level executions costed per access and launch configuration
/// (warps x blocks x loop iterations). Past it the result says it was cut.
pub const MAX_EXECUTIONS_PER_ACCESS: u64 = 1 << 16;

/// Expression nodes evaluated per access and launch configuration, each
/// node for all 32 lanes of a warp at once (addresses, guards, loop
/// conditions and updates). Past it the result is `unknown`.
pub const MAX_WORK_PER_ACCESS: u64 = 4_000_000;

/// Expression nodes evaluated per kernel instantiation, over all its
/// accesses and launch configurations: the deterministic stand-in for a
/// per-kernel time limit, whatever the number of accesses (250 accesses
/// that each use up `MAX_WORK_PER_ACCESS`). Accesses past it are
/// `unknown`, naming this budget. No kernel of the public corpus comes
/// near it (64 M cut Rodinia's myocyte kernels).
pub const MAX_WORK_PER_KERNEL: u64 = 1_000_000_000;

/// Address size (expression nodes) up to which the engine tries to prove
/// that warps cost what an earlier one did (`symbolic/collapse.rs`; the
/// proof walks the address once per atom). Past it every warp is run:
/// the result is the same, only slower.
pub const MAX_COLLAPSE_ADDRESS_NODES: u32 = 2048;

/// Blocks of the grid enumerated as representatives when the address
/// depends on `blockIdx` (evenly spaced, the first and the last among
/// them). Where a launch's grid has more and the blocks run differ in cost,
/// the result says it rests on the sample (`Assumption::BlocksSampled`); a
/// cost the same in every block run is taken as the grid's.
pub const MAX_BLOCKS_SAMPLED: u64 = 8;

/// Blocks of the grid a barrier's reach is counted in when its conditions
/// read `blockIdx` (evenly spaced, the first and the last among them):
/// more than an access's sample, because a split is often in one block
/// (the one holding the end of the data, `if (i < n)`), and a barrier
/// run is cheap. A split in a block not run is missed, never claimed.
pub const MAX_REACH_BLOCKS: u64 = 128;

/// Pairs of accesses a kernel's lanes may exchange data through that are
/// run (`symbolic/races.rs`), in program order: the rest are not checked,
/// and the first of them is reported unknown with this budget.
pub const MAX_RACE_PAIRS: usize = 256;

/// Largest block the analyzer accepts (the CUDA limit).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Largest padding the fix search tries for a shared array's row, in
/// elements (never more than one sweep of the banks: `bank_row_bytes`);
/// a conflict no smaller padding removes gets advice, not a fix.
pub const MAX_PAD_ELEMENTS: u64 = 32;

/// Header text a run keeps after reading it once (the CLI's memo of the
/// files includes looked at): past it, headers are read again where they
/// are included (speed only).
pub const MAX_RUN_HEADER_TEXT_BYTES: usize = 256 << 20;

/// Access reports a run keeps to hand a kernel's analysis to another file
/// that lowers the same kernel (`symbolic/reuse.rs`); past it, kernels are
/// analysed again (speed only).
pub const MAX_MEMO_REPORTS: usize = 1_000_000;

/// Distinct names read back from a results cache entry as static strings
/// (`interned.rs`); the analyzer and rules have a few hundred. An entry
/// that would pass it is not trusted (analysed again).
pub const MAX_INTERNED_STRINGS: usize = 4096;

/// Bytes of one such name.
pub const MAX_INTERNED_BYTES: usize = 256;

/// Folder levels a walk of the CLI descends below the folder it starts
/// from. A folder at this depth is not searched: discovery says so (an
/// error for that folder); the project header index does without it.
pub const MAX_FOLDER_DEPTH: usize = 64;

/// Re-analyses a file's fix search may run (each padding or pitch candidate
/// is one analysis of one kernel's array). Past it, rules give advice only.
pub const MAX_FIX_REANALYSES_PER_FILE: u32 = 48;

/// Runs of one access over the combinations of representative values of
/// the inputs no launch gives (integer parameters whose value matters, a
/// default block shape; `symbolic/values.rs`). Past it each input is varied
/// alone, the others at their first value, and an assumption says so.
pub const MAX_VALUE_COMBINATIONS: usize = 16;

/// Expression nodes the runs after the first of one access may evaluate,
/// in all (each run under what is left): a kernel whose accesses are
/// costly to run is analysed over fewer values, and an assumption says
/// so. Set so that the corpus takes at most about twice as long as with
/// one run per access.
pub const MAX_VALUE_WORK: u64 = 100_000;

/// Verdicts on whether an assumed value matters for a lane mask, kept per
/// warp (`symbolic/assume.rs`). Past it a verdict is worked out again each
/// time it is asked: the result is the same, only slower.
pub const MAX_RELEVANCE_MEMO: usize = 64;

/// Nested declarator levels (`*`, `&`, `[]`, parentheses around the name)
/// followed when a declaration is read (`frontend/lower/decl.rs`); a
/// deeper declaration is skipped, and a note says so.
pub const MAX_DECLARATOR_DEPTH: u32 = 64;

/// Syntax nodes one scan visits: of a loop, for the variables it assigns
/// (which become loop-carried), and of a launching function, for the
/// pointers it moves off their allocations. Past it the rest is not
/// scanned, and a note says so.
pub const MAX_SCAN_NODES: u32 = 200_000;

/// Pieces one load or store is recorded as when its type has no single
/// access width (a struct read or written whole: one piece per aligned
/// chunk). Past it the rest of the value is not recorded, and a note says so.
pub const MAX_ACCESS_PIECES: u32 = 16;

/// Data members of one struct whose local variables are held in
/// registers member by member (`frontend/lower/objects.rs`). A struct with
/// more is not held: its members read as unknown, and a note says so.
pub const MAX_OBJECT_MEMBERS: usize = 64;

/// Draws of the loaded integers a shared address is computed from
/// (`symbolic/data.rs`): the cost reported is their mean. Fewer are run
/// when the access's execution or work budget runs out first (at least
/// one whole draw, else the access is costed as any other that ran out).
pub const MAX_DATA_DRAWS: u32 = 16;

/// Type aliases followed (`using A = typename B::x;`, `B` an alias too ...)
/// to find the template parameter a type depends on. Past it the value is
/// `unknown`, naming this budget.
pub const MAX_ALIAS_DEPTH: u32 = 4;

/// Most objects one pointer may be chosen among (`c ? A : B`, nested):
/// each access through it is recorded once per object. Past it, the
/// pointer is an unknown value, as a choice the lowering cannot hold.
pub const MAX_POINTER_CHOICES: usize = 4;

/// Syntax nodes of an `if` that nvcc if-converts into selects (one that
/// only assigns values). It is not a budget that cuts work: a larger `if`
/// is a branch, which is the model's answer, so nothing is said.
pub const MAX_IF_CONVERTED_NODES: u32 = 64;

/// Bytes read after `__align__(`, `__cluster_dims__(` or `__maxnreg__(`
/// for the parenthesis that closes it. An attribute whose arguments run
/// longer is left to the parser (an `__align__` then sets no alignment),
/// with a note.
pub const MAX_ATTRIBUTE_ARGUMENT_BYTES: usize = 256;

/// Characters of the qualified name read after a `typename` in an
/// expression (`f(typename It::TensorRef({p, n}))`, a `::` counting once)
/// to find the `(` or `{` of its functional cast. Past it the `typename`
/// stays (the grammar may not parse the cast), with a note.
pub const MAX_TYPENAME_NAME_BYTES: usize = 512;

/// Tokens read after an undefined ALL_CAPS name that opens a parameter,
/// to tell a specifier macro (a type and a name follow it) from the
/// parameter's type. Past it the name is left as it is, with a note.
pub const MAX_PARAMETER_SCAN_TOKENS: usize = 64;

/// Syntax errors of a file (or header) listed as notes, the first in
/// source order; a note after the last says that more follow.
pub const MAX_SYNTAX_ERROR_NOTES: usize = 20;

/// Syntax nodes of one function searched for a `<<<…>>>` launch. Past it
/// the function's launches are not read, with a note.
pub const MAX_LAUNCH_SEARCH_NODES: u32 = 1_000_000;

/// Braces appended to close a truncated file. Past it the rest stay open
/// (the parser recovers as it can), and the note on the closed braces
/// says how many.
pub const MAX_CLOSED_BRACES: usize = 10_000;

/// Declarators (pointers, parentheses, references) walked through to find
/// the name a function definition declares. Past it the function is not
/// read, with a note.
pub const MAX_FUNCTION_DECLARATOR_DEPTH: usize = 16;

/// A budget as findings name it: its name, limit and unit.
const fn named(name: &'static str, limit: u64, unit: &'static str) -> Budget {
    Budget::new(name, limit, unit)
}

pub const FILE_BYTES: Budget = named("MAX_FILE_BYTES", (MAX_FILE_BYTES >> 20) as u64, "MiB");
pub const SYNTAX_DEPTH: Budget = named("MAX_SYNTAX_DEPTH", MAX_SYNTAX_DEPTH as u64, "levels");
pub const EXPR_NODES: Budget = named("MAX_EXPR_NODES", MAX_EXPR_NODES as u64, "nodes");
pub const EXPR_DEPTH: Budget = named("MAX_EXPR_DEPTH", MAX_EXPR_DEPTH as u64, "levels");
pub const INLINE_DEPTH: Budget = named("MAX_INLINE_DEPTH", MAX_INLINE_DEPTH as u64, "nested calls");
pub const INLINED_CALLS: Budget = named(
    "MAX_INLINED_CALLS",
    MAX_INLINED_CALLS as u64,
    "calls per kernel",
);
pub const MACRO_DEPTH: Budget = named("MAX_MACRO_DEPTH", MAX_MACRO_DEPTH as u64, "levels");
pub const MACRO_EXPANSIONS: Budget = named(
    "MAX_MACRO_EXPANSIONS",
    MAX_MACRO_EXPANSIONS as u64,
    "expansions per kernel",
);
pub const PRESCAN_BYTES: Budget = named(
    "MAX_PRESCAN_BYTES",
    (MAX_PRESCAN_BYTES >> 10) as u64,
    "KiB of arguments per macro use",
);
pub const HEADERS: Budget = named("MAX_HEADERS", MAX_HEADERS as u64, "headers per file");
pub const INCLUDE_DEPTH: Budget = named(
    "MAX_INCLUDE_DEPTH",
    MAX_INCLUDE_DEPTH as u64,
    "nested includes",
);
pub const RACE_PAIRS: Budget = named(
    "MAX_RACE_PAIRS",
    MAX_RACE_PAIRS as u64,
    "pairs of accesses per kernel",
);
pub const BLOCKS_SAMPLED: Budget = named(
    "MAX_BLOCKS_SAMPLED",
    MAX_BLOCKS_SAMPLED,
    "blocks per access and launch",
);
pub const FUSE_WINDOW: Budget = named(
    "MAX_FUSE_WINDOW",
    MAX_FUSE_WINDOW as u64,
    "accesses after a field access",
);
pub const INSTANTIATIONS: Budget = named(
    "MAX_INSTANTIATIONS",
    MAX_INSTANTIATIONS as u64,
    "per kernel",
);
pub const HOST_VALUES: Budget = named("MAX_HOST_VALUES", MAX_HOST_VALUES as u64, "values");
pub const HOST_VALUES_SEEN: Budget = named(
    "MAX_HOST_VALUES_SEEN",
    MAX_HOST_VALUES_SEEN as u64,
    "values",
);
pub const HOST_LOOP_STEPS: Budget = named(
    "MAX_HOST_LOOP_STEPS",
    MAX_HOST_LOOP_STEPS,
    "loop iterations",
);
pub const HOST_CALL_DEPTH: Budget = named(
    "MAX_HOST_CALL_DEPTH",
    MAX_HOST_CALL_DEPTH as u64,
    "functions up",
);
pub const LOOP_ITERATIONS: Budget = named("MAX_LOOP_ITERATIONS", MAX_LOOP_ITERATIONS, "iterations");
pub const LAUNCHES_PER_KERNEL: Budget = named(
    "MAX_LAUNCHES_PER_KERNEL",
    MAX_LAUNCHES_PER_KERNEL as u64,
    "per instantiation",
);
pub const DECLARATOR_DEPTH: Budget = named(
    "MAX_DECLARATOR_DEPTH",
    MAX_DECLARATOR_DEPTH as u64,
    "levels",
);
pub const SCAN_NODES: Budget = named("MAX_SCAN_NODES", MAX_SCAN_NODES as u64, "syntax nodes");
pub const ACCESS_PIECES: Budget = named(
    "MAX_ACCESS_PIECES",
    MAX_ACCESS_PIECES as u64,
    "pieces per access",
);
pub const ALIAS_DEPTH: Budget = named("MAX_ALIAS_DEPTH", MAX_ALIAS_DEPTH as u64, "levels");
pub const OBJECT_MEMBERS: Budget = named(
    "MAX_OBJECT_MEMBERS",
    MAX_OBJECT_MEMBERS as u64,
    "data members",
);
pub const POINTER_CHOICES: Budget = named(
    "MAX_POINTER_CHOICES",
    MAX_POINTER_CHOICES as u64,
    "objects per pointer",
);
pub const ATTRIBUTE_ARGUMENT_BYTES: Budget = named(
    "MAX_ATTRIBUTE_ARGUMENT_BYTES",
    MAX_ATTRIBUTE_ARGUMENT_BYTES as u64,
    "bytes",
);
pub const TYPENAME_NAME_BYTES: Budget = named(
    "MAX_TYPENAME_NAME_BYTES",
    MAX_TYPENAME_NAME_BYTES as u64,
    "bytes",
);
pub const PARAMETER_SCAN_TOKENS: Budget = named(
    "MAX_PARAMETER_SCAN_TOKENS",
    MAX_PARAMETER_SCAN_TOKENS as u64,
    "tokens",
);
pub const SYNTAX_ERROR_NOTES: Budget = named(
    "MAX_SYNTAX_ERROR_NOTES",
    MAX_SYNTAX_ERROR_NOTES as u64,
    "notes",
);
pub const LAUNCH_SEARCH_NODES: Budget = named(
    "MAX_LAUNCH_SEARCH_NODES",
    MAX_LAUNCH_SEARCH_NODES as u64,
    "syntax nodes",
);
pub const CLOSED_BRACES: Budget = named("MAX_CLOSED_BRACES", MAX_CLOSED_BRACES as u64, "braces");
pub const FUNCTION_DECLARATOR_DEPTH: Budget = named(
    "MAX_FUNCTION_DECLARATOR_DEPTH",
    MAX_FUNCTION_DECLARATOR_DEPTH as u64,
    "levels",
);
pub const VALUE_COMBINATIONS: Budget = named(
    "MAX_VALUE_COMBINATIONS",
    MAX_VALUE_COMBINATIONS as u64,
    "runs per access",
);
pub const VALUE_WORK: Budget = named(
    "MAX_VALUE_WORK",
    MAX_VALUE_WORK,
    "expression nodes per access",
);
pub const FIX_REANALYSES_PER_FILE: Budget = named(
    "MAX_FIX_REANALYSES_PER_FILE",
    MAX_FIX_REANALYSES_PER_FILE as u64,
    "re-analyses per file",
);

/// `MAX_LOOP_ITERATIONS`, with the limit the engine runs under.
pub const fn loop_iterations(limit: u64) -> Budget {
    named("MAX_LOOP_ITERATIONS", limit, "iterations")
}

/// `MAX_WORK_PER_ACCESS`, with the limit the engine runs under.
pub const fn work_per_access(limit: u64) -> Budget {
    named("MAX_WORK_PER_ACCESS", limit, "expression nodes per access")
}

/// `MAX_EXECUTIONS_PER_ACCESS`, with the limit the engine runs under.
pub const fn executions_per_access(limit: u64) -> Budget {
    named("MAX_EXECUTIONS_PER_ACCESS", limit, "warp-level executions")
}

/// `MAX_WORK_PER_KERNEL`, with the limit the engine runs under.
pub const fn work_per_kernel(limit: u64) -> Budget {
    named("MAX_WORK_PER_KERNEL", limit, "expression nodes per kernel")
}
