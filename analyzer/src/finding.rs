//! Findings as data: why a value or an access is not known, what the
//! engine assumed to cost an access, and what the front end did not
//! understand.
//!
//! Everything here is an enum with fields: the names, lines, values and
//! budgets involved, never a sentence. Sentences are made once, at the
//! edge (`warplint_lints::wording`), which is also the only place that
//! names the CLI's flags and configuration keys. Each variant has a
//! stable machine-readable [`kind`](Origin::kind), which the JSON outputs
//! carry beside the text and which tooling (and the fuzz targets) match
//! on instead of the text.

/// A budget of [`crate::budget`] that ran out: its name, its limit and
/// the unit the limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Budget {
    pub name: &'static str,
    pub limit: u64,
    pub unit: &'static str,
}

/// A [`Budget`] as data holds it (read back through [`crate::interned`]).
#[derive(serde::Deserialize)]
struct NamedBudget {
    name: String,
    limit: u64,
    unit: String,
}

impl<'de> serde::Deserialize<'de> for Budget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Budget, D::Error> {
        let b = NamedBudget::deserialize(d)?;
        let named = |s: &str| {
            crate::interned::intern(s)
                .ok_or_else(|| serde::de::Error::custom("too many distinct names"))
        };
        Ok(Budget::new(named(&b.name)?, b.limit, named(&b.unit)?))
    }
}

impl Budget {
    pub const fn new(name: &'static str, limit: u64, unit: &'static str) -> Budget {
        Budget { name, limit, unit }
    }
}

/// What a value the analyzer does not know is: where an unknown comes
/// from (`ir::Unknown::origin`). The same origin explains an unknown
/// access, a condition assumed to hold, a loop run once, an alignment.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Origin {
    /// A pointer converted to an integer.
    PointerAsInteger,
    /// A value that is not an integer where an integer was needed.
    NotAnInteger,
    /// A value loaded from memory (data the analysis cannot know).
    Loaded { array: String },
    /// A pointer loaded from memory (`array`: what it was loaded from) that
    /// the analysis does not follow: loaded per lane, or kept in shared
    /// memory, where the block may have put any pointer.
    LoadedPointer { array: String },
    /// An integer converted to a pointer (`(float *)addr`).
    IntegerAsPointer,
    /// The size of a type that is not defined in this file (a template type
    /// parameter, a type from a header not found).
    TypeSize { ty: String },
    /// The width of a vectorised buffer's elements (CubeCL's `Line`),
    /// which its launches do not give as a constant.
    LineWidth { buffer: String },
    /// The layout of an array one of whose dimensions is not a constant.
    ArrayLayout { array: String },
    /// A subscript of something that is not an array.
    SubscriptOfNonArray,
    /// A subscript of a value that is not a known array.
    SubscriptOfUnknownArray,
    /// A template value parameter that no launch gives.
    TemplateParam { name: String, kernel: String },
    /// A member of a template type parameter that no launch instantiates.
    TemplateMember { member: String, param: String },
    /// A name whose value depends on a template parameter no launch gives.
    ThroughTemplateParam { name: String, param: String },
    /// An expression as written that did not resolve (`sizeof` of an
    /// unknown type, a name bound to several values).
    Written { text: String },
    /// A name that no declaration in this file (or its headers) gives.
    Undeclared { name: String },
    /// What was being worked out when a budget ran out.
    OutOfBudget { what: Box<Origin>, budget: Budget },
    /// A macro (only as what a budget stopped).
    Macro { name: String },
    /// A macro whose expansion nests too deeply (only as what a budget
    /// stopped).
    NestedMacro { name: String },
    /// The result of a call whose value depends on a template parameter no
    /// launch gives (`callee` as written, with its `()`).
    CallThroughTemplateParam { callee: String, param: String },
    /// An expression whose type aliases nest too deeply to find the
    /// template parameter it depends on (only as what a budget stopped).
    AliasesTooDeep { text: String },
    /// An expression nested deeper than the syntax budget.
    NestedTooDeeply,
    /// A floating-point constant.
    FloatingPoint,
    /// `a[]`.
    EmptySubscript,
    /// `&x` of a value that is not in memory.
    AddressOfNonMemory,
    /// `*p` of a pointer that is not known.
    DerefUnknownPointer,
    /// Code the grammar could not parse.
    Unparsed,
    /// A construct the lowering does not model, by its syntax kind in
    /// words ("compound literal expression", "template function").
    Construct { kind: String },
    /// A value that differs with the branch taken, which could not be
    /// merged into a select.
    BranchDependent,
    /// A field of a value that is not known.
    FieldOfUnknown { field: String },
    /// A field of a struct value that is not in memory (a by-value
    /// parameter, a local struct not written field by field).
    FieldNotInMemory { field: String },
    /// A field that the type has not (as far as its definition is known).
    FieldOfType { field: String, ty: String },
    /// Pointer arithmetic on a pointer to a type without a size.
    UnsizedPointerArithmetic,
    /// An operator the lowering does not model.
    Operator { op: String },
    /// The result of a call the analysis does not follow.
    CallResult { callee: String },
    /// An output of inline assembly (`asm("…" : "=r"(x))`), by its first
    /// instruction.
    InlineAsm { instruction: String },
    /// The result of a recursive call.
    RecursiveCall { function: String },
    /// `member` (`thread_rank()`, `num_threads()`) of a cooperative group
    /// made of the threads active at run time: `group` is the call that
    /// made it as written (`coalesced_threads()`, `labeled_partition(…)`,
    /// `binary_partition(…)`).
    ActiveThreads { group: String, member: String },
    /// A declaration used as an `if`/`while` condition.
    DeclarationCondition,
    /// A declaration used as a loop condition.
    DeclarationLoopCondition,
    /// The `default:` case of a switch.
    DefaultCase,
    /// The lanes that left a loop through `return`.
    ReturnedInLoop { line: u32 },
    /// A variable's value after a loop whose trip count is not known.
    AfterLoop { name: String, line: u32 },
    /// A variable read before any assignment the analysis saw.
    BeforeAssigned { name: String },
    /// The element of a range-based `for`.
    RangeElement { name: String },
    /// A parameter of a function walked without its arguments.
    Parameter { name: String },
    /// A loop variable whose value the engine could not compute.
    LoopVariable { name: String },
    /// An expression past the expression-size budgets.
    TooComplex { nodes: Budget, depth: Budget },
    /// A division by zero or an out-of-range shift.
    Arithmetic,
    /// An unknown the engine has no record of (never expected).
    Unrecorded,
}

impl Origin {
    /// The budgets this origin says ran out.
    pub fn budgets(&self) -> Vec<Budget> {
        match self {
            Origin::OutOfBudget { what, budget } => {
                let mut b = what.budgets();
                b.push(*budget);
                b
            }
            Origin::TooComplex { nodes, depth } => vec![*nodes, *depth],
            _ => Vec::new(),
        }
    }

    /// The stable machine-readable name of this kind of origin.
    pub fn kind(&self) -> &'static str {
        match self {
            Origin::PointerAsInteger => "pointer-as-integer",
            Origin::NotAnInteger => "not-an-integer",
            Origin::Loaded { .. } => "loaded-value",
            Origin::LoadedPointer { .. } => "loaded-pointer",
            Origin::IntegerAsPointer => "integer-as-pointer",
            Origin::TypeSize { .. } => "type-size",
            Origin::LineWidth { .. } => "line-width",
            Origin::ArrayLayout { .. } => "array-layout",
            Origin::SubscriptOfNonArray => "subscript-of-non-array",
            Origin::SubscriptOfUnknownArray => "subscript-of-unknown-array",
            Origin::TemplateParam { .. } => "template-parameter",
            Origin::TemplateMember { .. } => "template-member",
            Origin::ThroughTemplateParam { .. } => "template-dependent",
            Origin::Written { .. } => "unresolved-expression",
            Origin::Undeclared { .. } => "undeclared-name",
            Origin::OutOfBudget { .. } => "budget",
            Origin::Macro { .. } => "macro",
            Origin::NestedMacro { .. } => "nested-macro",
            Origin::CallThroughTemplateParam { .. } => "template-dependent",
            Origin::AliasesTooDeep { .. } => "aliases-too-deep",
            Origin::NestedTooDeeply => "nested-too-deeply",
            Origin::FloatingPoint => "floating-point",
            Origin::EmptySubscript => "empty-subscript",
            Origin::AddressOfNonMemory => "address-of-non-memory",
            Origin::DerefUnknownPointer => "dereference-of-unknown-pointer",
            Origin::Unparsed => "unparsed-code",
            Origin::Construct { .. } => "unsupported-construct",
            Origin::BranchDependent => "branch-dependent",
            Origin::FieldOfUnknown { .. } => "field-of-unknown",
            Origin::FieldNotInMemory { .. } => "by-value-field",
            Origin::FieldOfType { .. } => "unknown-field",
            Origin::UnsizedPointerArithmetic => "unsized-pointer-arithmetic",
            Origin::Operator { .. } => "unsupported-operator",
            Origin::CallResult { .. } => "call-result",
            Origin::InlineAsm { .. } => "inline-asm",
            Origin::RecursiveCall { .. } => "recursive-call",
            Origin::ActiveThreads { .. } => "active-threads",
            Origin::DeclarationCondition => "declaration-condition",
            Origin::DeclarationLoopCondition => "declaration-loop-condition",
            Origin::DefaultCase => "default-case",
            Origin::ReturnedInLoop { .. } => "returned-in-loop",
            Origin::AfterLoop { .. } => "after-loop",
            Origin::BeforeAssigned { .. } => "read-before-assigned",
            Origin::RangeElement { .. } => "range-element",
            Origin::Parameter { .. } => "parameter",
            Origin::LoopVariable { .. } => "loop-variable",
            Origin::TooComplex { .. } => "too-complex",
            Origin::Arithmetic => "arithmetic",
            Origin::Unrecorded => "unrecorded",
        }
    }
}

/// Why an access has no cost (`AccessReport::unknown_reason`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum UnknownReason {
    /// The address depends on a value not known; `differs`: it differs
    /// between the lanes of a warp (else it is uniform but its alignment
    /// or its coefficient could not be proved harmless).
    DependsOn { origin: Origin, differs: bool },
    /// Whether nvcc merges two neighbouring accesses into one wider one
    /// depends on a branch or call between them (`nvcc` room).
    MergeUndecided { first: String, second: String },
    /// The access is in a branch of an `if constexpr` whose condition
    /// depends on `origin`: whether nvcc compiles it is not known.
    BranchUndecided { origin: Origin },
    /// A per-access budget ran out.
    OutOfBudget(Budget),
    /// The kernel's accesses before this one spent the per-kernel budget.
    KernelBudgetSpent(Budget),
    /// The fix search stopped the run: a warp is `ways`-way, no better
    /// than the candidate it has to beat.
    FixSearchStopped { ways: f64, limit: f64 },
    /// The SASS runs the access as `opcode`, `width` bytes per lane, where
    /// the model has `modelled` (`nvcc::sass`): the model's cost is not
    /// the hardware's.
    SassWidth {
        opcode: String,
        width: u32,
        modelled: u32,
    },
}

impl UnknownReason {
    /// The budgets this reason says ran out.
    pub fn budgets(&self) -> Vec<Budget> {
        match self {
            UnknownReason::DependsOn { origin, .. } | UnknownReason::BranchUndecided { origin } => {
                origin.budgets()
            }
            UnknownReason::OutOfBudget(b) | UnknownReason::KernelBudgetSpent(b) => vec![*b],
            UnknownReason::MergeUndecided { .. }
            | UnknownReason::FixSearchStopped { .. }
            | UnknownReason::SassWidth { .. } => Vec::new(),
        }
    }

    /// The stable machine-readable name: the origin's kind for
    /// [`UnknownReason::DependsOn`].
    pub fn kind(&self) -> &'static str {
        match self {
            UnknownReason::DependsOn { origin, .. } => origin.kind(),
            UnknownReason::MergeUndecided { .. } => "merge-undecided",
            UnknownReason::BranchUndecided { .. } => "branch-undecided",
            UnknownReason::OutOfBudget(_) | UnknownReason::KernelBudgetSpent(_) => "budget",
            UnknownReason::FixSearchStopped { .. } => "fix-search-stopped",
            UnknownReason::SassWidth { .. } => "sass-width",
        }
    }
}

/// What the engine assumed to cost an access (`AccessReport::assumptions`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assumption {
    /// An integer parameter no launch gives a value, assumed `value`;
    /// `loaded`: the space a block-uniform loaded value
    /// ([`crate::ir::Param::loaded`]) is read from.
    ParamValue {
        name: String,
        value: i64,
        kernel: String,
        loaded: Option<crate::ir::Space>,
    },
    /// The grid, when no launch gives one.
    Grid { grid: [u64; 3] },
    /// The grid a launch gives has more blocks than are run
    /// (`MAX_BLOCKS_SAMPLED`), and the blocks run differ in cost: the cost
    /// is their mean, `sampled` evenly spaced blocks of `blocks`.
    BlocksSampled { sampled: u64, blocks: u64 },
    /// The configured default block, when no launch gives one.
    DefaultBlock { block: [u64; 3], kernel: String },
    /// The block taken from `__launch_bounds__(threads)`.
    LaunchBoundsBlock { threads: u64 },
    /// The array lives in local memory (not in registers): what
    /// `nvcc::registers` decided.
    /// `decided`: a store and a load at run-time indices put it there;
    /// else its placement is not known and the cost is what it would be.
    LocalMemory { array: String, decided: bool },
    /// `pointer`, which the analysis cannot follow to a declaration (a
    /// pointer field of a by-value struct parameter, a pointer loaded from
    /// memory), points to the start of an allocation, as a pointer
    /// parameter is taken to ([`crate::ir::MemObject::pointee_of`]).
    AllocationStart { pointer: String },
    /// The address is computed from integers loaded from `arrays`, which
    /// the expression bounds to the array: the cost is the mean over
    /// `draws` draws of those values, each lane's uniform over the
    /// integer's width and independent (`symbolic/data.rs`); one draw's
    /// cost per ideal (n-way) ranges from `low` to `high` hundredths.
    UniformData {
        arrays: Vec<String>,
        draws: u32,
        low: u32,
        high: u32,
    },
    /// Lanes kept active where a condition could not be evaluated.
    LanesActive { origin: Origin },
    /// A loop whose trip count could not be evaluated, run once.
    LoopTrips { line: u32, origin: Origin },
    /// Only the first iterations of a loop, up to a budget, analysed.
    FirstIterations { line: u32, budget: Budget },
    /// Only the first warp-level executions, up to the budget, are
    /// costed (the first warps and blocks, in order): the cost is theirs.
    FirstExecutions { budget: Budget },
    /// A loop with no visible exit, run once.
    NoExit { line: u32 },
    /// A uniform unknown offset assumed to keep the warp's alignment.
    KeepsAligned { origin: Origin, bytes: u32 },
    /// The cost holds when an integer parameter no launch gives meets
    /// `when`: of the values `tried`, those the cost is the reported one
    /// for (the others cost less, or could not be analysed).
    ParamCondition {
        name: String,
        kernel: String,
        /// Among the values tried under which the access runs (`idle` is
        /// left out of it).
        when: Condition,
        tried: Vec<i64>,
        source: ValueSource,
        /// Values tried under which the access does not run: they neither
        /// meet nor contradict the cost.
        idle: Vec<i64>,
    },
    /// The cost holds for the block shapes `when`, of the common shapes
    /// `tried` for a kernel no launch gives a block.
    BlockCondition {
        kernel: String,
        when: Vec<[u64; 3]>,
        tried: Vec<[u64; 3]>,
    },
    /// Not every combination of the values tried was run (the budget ran
    /// out): each input was varied alone, the others at their first value,
    /// as far as the budget allowed.
    SomeCombinations { budget: Budget },
    /// The cost holds when the type parameters `params` of a template
    /// kernel no instantiation gives a known type are one of `when`, of the
    /// representative types `tried`.
    TypeCondition {
        params: Vec<String>,
        kernel: String,
        when: Vec<String>,
        tried: Vec<String>,
    },
}

/// Where the values tried for an integer parameter no launch gives come
/// from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueSource {
    /// The values the kernel's other launches give it.
    Launches,
    /// The values the callers of the host function that launches pass
    /// for the parameter of it that the launch passes on.
    Callers,
    /// Evenly spaced values among the `passed` ones the callers pass
    /// (more than `budget::MAX_HOST_VALUES`).
    CallersSample { passed: u32 },
    /// All the values of its type (a `bool`: 0 and 1).
    Type,
    /// A spread of sizes, small and large, even and odd.
    Spread,
    /// A pointer compared with `NULL`: 0 for a null pointer, 1 for
    /// another.
    Nullness,
    /// The values an enum-like parameter is compared with, and one equal to
    /// none of them (0 and 1 for one tested as a condition).
    Compared,
    /// The spread of sizes, for an integer the whole block loads from one
    /// address of `space` ([`crate::ir::Param::loaded`]): data no launch
    /// gives, the same for every thread of the block.
    Loaded { space: crate::ir::Space },
}

impl ValueSource {
    /// Whether the values tried are the spread of sizes (a parameter no
    /// launch gives, or a block-uniform loaded value), not values the
    /// program is known to pass.
    pub fn is_spread(self) -> bool {
        matches!(self, ValueSource::Spread | ValueSource::Loaded { .. })
    }
}

/// A set of integers, as simply as it can be said, among the values
/// tried ([`Assumption::ParamCondition`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Condition {
    /// A multiple of the number (a power of two, at least 2: "even").
    MultipleOf(i64),
    Odd,
    AtLeast(i64),
    AtMost(i64),
    OneOf(Vec<i64>),
}

impl Condition {
    /// Whether `v` meets the condition.
    pub fn holds(&self, v: i64) -> bool {
        match self {
            Condition::MultipleOf(k) => *k != 0 && v % k == 0,
            Condition::Odd => v % 2 != 0,
            Condition::AtLeast(m) => v >= *m,
            Condition::AtMost(m) => v <= *m,
            Condition::OneOf(list) => list.contains(&v),
        }
    }
}

/// An input no launch gives for which the cost is the same for every value
/// tried (`AccessReport::for_every`): the finding does not rest on it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ForEvery {
    /// An integer parameter, and the values tried.
    Param {
        name: String,
        kernel: String,
        tried: Vec<i64>,
        source: ValueSource,
    },
    /// The block shape, and the common shapes tried.
    Block {
        kernel: String,
        tried: Vec<[u64; 3]>,
        /// The kernel's `__launch_bounds__`, when the sizes tried are
        /// those up to it.
        bound: Option<u64>,
    },
    /// The type parameters `params` of a template kernel nothing
    /// instantiates, over the representative types `tried`.
    Type {
        params: Vec<String>,
        kernel: String,
        tried: Vec<String>,
    },
}

impl ForEvery {
    /// The stable machine-readable name of this kind of input.
    pub fn kind(&self) -> &'static str {
        match self {
            ForEvery::Param {
                source: ValueSource::Loaded { .. },
                ..
            } => "every-loaded-value",
            ForEvery::Param { .. } => "every-parameter-value",
            ForEvery::Block { .. } => "every-block-shape",
            ForEvery::Type { .. } => "every-representative-type",
        }
    }
}

impl Assumption {
    /// The budgets this assumption says ran out.
    pub fn budgets(&self) -> Vec<Budget> {
        match self {
            Assumption::LanesActive { origin }
            | Assumption::LoopTrips { origin, .. }
            | Assumption::KeepsAligned { origin, .. } => origin.budgets(),
            Assumption::FirstIterations { budget, .. }
            | Assumption::FirstExecutions { budget }
            | Assumption::SomeCombinations { budget } => {
                vec![*budget]
            }
            Assumption::BlocksSampled { .. } => vec![crate::budget::BLOCKS_SAMPLED],
            Assumption::ParamCondition {
                source: ValueSource::CallersSample { .. },
                ..
            } => vec![crate::budget::HOST_VALUES],
            _ => Vec::new(),
        }
    }

    /// The stable machine-readable name of this kind of assumption.
    pub fn kind(&self) -> &'static str {
        match self {
            Assumption::ParamValue { .. } => "parameter-value",
            Assumption::Grid { .. } => "grid",
            Assumption::BlocksSampled { .. } => "blocks-sampled",
            Assumption::DefaultBlock { .. } => "default-block",
            Assumption::LaunchBoundsBlock { .. } => "launch-bounds-block",
            Assumption::LocalMemory { .. } => "local-memory",
            Assumption::UniformData { .. } => "uniform-data",
            Assumption::AllocationStart { .. } => "allocation-start",
            Assumption::LanesActive { .. } => "lanes-active",
            Assumption::LoopTrips { .. } => "loop-trips",
            Assumption::FirstIterations { .. } => "first-iterations",
            Assumption::FirstExecutions { .. } => "first-executions",
            Assumption::NoExit { .. } => "no-exit",
            Assumption::KeepsAligned { .. } => "alignment",
            Assumption::ParamCondition {
                source: ValueSource::Loaded { .. },
                ..
            } => "loaded-value-condition",
            Assumption::ParamCondition { .. } => "parameter-condition",
            Assumption::BlockCondition { .. } => "block-condition",
            Assumption::SomeCombinations { .. } => "some-combinations",
            Assumption::TypeCondition { .. } => "type-condition",
        }
    }
}

/// What the front end did not understand, or stopped at (`ir::Note::kind`).
///
/// Notes at one place are listed in the order of these variants (the
/// derived `Ord`): a parse error before a missing node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NoteKind {
    /// The file is larger than the file budget: not analysed.
    FileTooLarge { budget: Budget },
    /// The file contains NUL bytes: not analysed.
    BinaryFile,
    /// The CUDA grammar could not be loaded (never expected).
    GrammarUnavailable,
    /// tree-sitter returned no tree.
    ParserGaveUp,
    /// The file ends inside `count` unclosed braces, closed for the parse;
    /// `left_open` more past the budget stay open.
    UnclosedBraces {
        count: usize,
        left_open: usize,
        budget: Budget,
    },
    /// Text the grammar could not parse (its first characters).
    ParseError { snippet: String },
    /// A syntax node the grammar expected is missing.
    ParseExpected { node: String },
    /// A conditional depends on a macro not defined here; the first
    /// branch is analysed.
    UndefinedInCondition { condition: String, name: String },
    /// A conditional whose macros nest past the budget; the first branch
    /// is analysed.
    ConditionTooDeep { condition: String, budget: Budget },
    /// Something the front end stopped reading when a budget ran out.
    OutOfBudget { what: Cut, budget: Budget },
    /// An `#include` past the include-depth budget.
    IncludeNotFollowed { include: String, budget: Budget },
    /// Declarations nested past the syntax budget: those inside not read.
    DeclarationsTooDeep { budget: Budget },
    /// Statements nested past the syntax budget: the rest of the block not
    /// analysed.
    StatementsTooDeep { budget: Budget },
    /// A value whose working out ran out of a budget (an
    /// [`Origin::OutOfBudget`]); what depends on it is unknown.
    ValueOutOfBudget { origin: Origin },
    /// An array dimension that is not a known constant (its header may not
    /// have been found).
    ArrayDimension { text: String },
    /// A launch whose block has more threads than a block may have.
    BlockTooLarge { block: [u64; 3], max: u64 },
    /// `goto` is not followed.
    Goto,
    /// More template instantiations of a kernel than the budget.
    TooManyInstantiations {
        kernel: String,
        count: usize,
        budget: Budget,
    },
    /// More launch configurations of a kernel than the budget.
    TooManyLaunches {
        kernel: String,
        count: usize,
        budget: Budget,
    },
    /// A Rust file syn could not parse (its message): not analysed.
    RustSyntax { message: String },
    /// Rust the translation to the IR does not read (`what`, in words:
    /// "match", "for over an iterator"); what depends on it is unknown.
    RustUnread { what: String },
}

impl NoteKind {
    /// The budgets this note says ran out.
    pub fn budgets(&self) -> Vec<Budget> {
        match self {
            NoteKind::ValueOutOfBudget { origin } => origin.budgets(),
            NoteKind::UnclosedBraces {
                left_open, budget, ..
            } if *left_open > 0 => vec![*budget],
            NoteKind::FileTooLarge { budget }
            | NoteKind::ConditionTooDeep { budget, .. }
            | NoteKind::OutOfBudget { budget, .. }
            | NoteKind::IncludeNotFollowed { budget, .. }
            | NoteKind::DeclarationsTooDeep { budget }
            | NoteKind::StatementsTooDeep { budget }
            | NoteKind::TooManyInstantiations { budget, .. }
            | NoteKind::TooManyLaunches { budget, .. } => vec![*budget],
            _ => Vec::new(),
        }
    }

    /// The stable machine-readable name of this kind of note.
    pub fn kind(&self) -> &'static str {
        match self {
            NoteKind::FileTooLarge { .. } => "file-too-large",
            NoteKind::BinaryFile => "binary-file",
            NoteKind::GrammarUnavailable => "grammar-unavailable",
            NoteKind::ParserGaveUp => "parser-gave-up",
            NoteKind::UnclosedBraces { .. } => "unclosed-braces",
            NoteKind::ParseExpected { .. } => "parse-expected",
            NoteKind::ParseError { .. } => "parse-error",
            NoteKind::UndefinedInCondition { .. } => "undefined-in-condition",
            NoteKind::ConditionTooDeep { .. } => "condition-too-deep",
            NoteKind::OutOfBudget { what, .. } => what.kind(),
            NoteKind::IncludeNotFollowed { .. } => "include-not-followed",
            NoteKind::DeclarationsTooDeep { .. } => "declarations-too-deep",
            NoteKind::StatementsTooDeep { .. } => "statements-too-deep",
            NoteKind::ValueOutOfBudget { .. } => "budget",
            NoteKind::ArrayDimension { .. } => "array-dimension",
            NoteKind::BlockTooLarge { .. } => "block-too-large",
            NoteKind::Goto => "goto",
            NoteKind::TooManyInstantiations { .. } => "too-many-instantiations",
            NoteKind::TooManyLaunches { .. } => "too-many-launches",
            NoteKind::RustSyntax { .. } => "rust-syntax",
            NoteKind::RustUnread { .. } => "rust-unread",
        }
    }
}

/// What the front end stopped reading when a budget ran out
/// ([`NoteKind::OutOfBudget`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cut {
    /// An access split into more pieces than the budget: only the first
    /// pieces are recorded.
    AccessPieces { ty: String, count: u64 },
    /// A declarator nested too deeply: its declaration is skipped.
    Declarator,
    /// A loop too large to scan for the variables it assigns.
    LoopScan,
    /// A launching function too large to scan for the pointers it moves.
    LaunchScan,
    /// Syntax errors past the first few, not listed.
    SyntaxErrors,
    /// A function whose declarators nest too deeply: not read.
    FunctionDeclarator,
    /// A function too large to search for launches: its launches not read.
    LaunchSearch { function: String },
    /// A word not read as a specifier macro: the parameter it opens runs on.
    SpecifierMacro { word: String },
    /// The name after a `typename` runs on: not read as a functional cast.
    TypenameName,
    /// An attribute whose arguments run on: not read.
    AttributeArguments { key: String },
    /// More headers given than are read: those past the budget are not.
    Headers { given: u64 },
    /// The values a host call passes to `function` (or its launch
    /// arguments), not followed: a loop, the callers or the values ran
    /// past the budget.
    HostValues { function: String },
    /// A struct with more data members than the budget: its local
    /// variables are not held member by member (their members are
    /// unknown).
    ObjectMembers { ty: String },
}

impl Cut {
    /// The stable machine-readable name of the note.
    pub fn kind(&self) -> &'static str {
        match self {
            Cut::AccessPieces { .. } => "too-many-access-pieces",
            Cut::Declarator => "declarator-too-deep",
            Cut::LoopScan => "loop-too-large",
            Cut::LaunchScan => "launching-function-too-large",
            Cut::SyntaxErrors => "more-syntax-errors",
            Cut::FunctionDeclarator => "function-declarator-too-deep",
            Cut::LaunchSearch { .. } => "launches-not-read",
            Cut::HostValues { .. } => "host-values-not-followed",
            Cut::ObjectMembers { .. } => "object-not-held",
            Cut::SpecifierMacro { .. } => "specifier-macro-not-read",
            Cut::TypenameName => "typename-not-read",
            Cut::AttributeArguments { .. } => "attribute-not-read",
            Cut::Headers { .. } => "headers-not-read",
        }
    }
}
