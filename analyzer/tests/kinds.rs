//! Every kind of finding (`finding.rs`), and of launch origin, is documented: one value of each
//! variant, its `kind()` looked up in `docs/kinds.md`.

use warplint_analyzer::finding::{
    Assumption, Budget, Condition, Cut, ForEvery, NoteKind, Origin, UnknownReason, ValueSource,
};
use warplint_analyzer::ir::Space;

const B: Budget = Budget::new("MAX_TEST", 1, "units");

fn s() -> String {
    "x".into()
}

/// One value of each variant of [`Origin`].
fn origins() -> Vec<Origin> {
    vec![
        Origin::PointerAsInteger,
        Origin::NotAnInteger,
        Origin::Loaded { array: s() },
        Origin::LoadedPointer { array: s() },
        Origin::IntegerAsPointer,
        Origin::TypeSize { ty: s() },
        Origin::ArrayLayout { array: s() },
        Origin::SubscriptOfNonArray,
        Origin::SubscriptOfUnknownArray,
        Origin::TemplateParam {
            name: s(),
            kernel: s(),
        },
        Origin::TemplateMember {
            member: s(),
            param: s(),
        },
        Origin::ThroughTemplateParam {
            name: s(),
            param: s(),
        },
        Origin::Written { text: s() },
        Origin::Undeclared { name: s() },
        Origin::OutOfBudget {
            what: Box::new(Origin::NestedTooDeeply),
            budget: B,
        },
        Origin::Macro { name: s() },
        Origin::NestedMacro { name: s() },
        Origin::CallThroughTemplateParam {
            callee: s(),
            param: s(),
        },
        Origin::AliasesTooDeep { text: s() },
        Origin::NestedTooDeeply,
        Origin::FloatingPoint,
        Origin::EmptySubscript,
        Origin::AddressOfNonMemory,
        Origin::DerefUnknownPointer,
        Origin::Unparsed,
        Origin::Construct { kind: s() },
        Origin::BranchDependent,
        Origin::FieldOfUnknown { field: s() },
        Origin::FieldNotInMemory { field: s() },
        Origin::FieldOfType {
            field: s(),
            ty: s(),
        },
        Origin::UnsizedPointerArithmetic,
        Origin::Operator { op: s() },
        Origin::CallResult { callee: s() },
        Origin::InlineAsm { instruction: s() },
        Origin::RecursiveCall { function: s() },
        Origin::ActiveThreads {
            group: s(),
            member: s(),
        },
        Origin::DeclarationCondition,
        Origin::DeclarationLoopCondition,
        Origin::DefaultCase,
        Origin::ReturnedInLoop { line: 1 },
        Origin::AfterLoop { name: s(), line: 1 },
        Origin::BeforeAssigned { name: s() },
        Origin::RangeElement { name: s() },
        Origin::Parameter { name: s() },
        Origin::LoopVariable { name: s() },
        Origin::TooComplex { nodes: B, depth: B },
        Origin::Arithmetic,
        Origin::Unrecorded,
    ]
}

/// One value of each variant of [`Assumption`].
fn assumptions() -> Vec<Assumption> {
    vec![
        Assumption::ParamValue {
            name: s(),
            value: 1,
            kernel: s(),
            loaded: Some(Space::Shared),
        },
        Assumption::Grid { grid: [1, 1, 1] },
        Assumption::BlocksSampled {
            sampled: 1,
            blocks: 2,
        },
        Assumption::DefaultBlock {
            block: [1, 1, 1],
            kernel: s(),
        },
        Assumption::LaunchBoundsBlock { threads: 1 },
        Assumption::LocalMemory {
            array: s(),
            decided: true,
        },
        Assumption::UniformData {
            arrays: vec![s()],
            draws: 1,
            low: 100,
            high: 200,
        },
        Assumption::AllocationStart { pointer: s() },
        Assumption::LanesActive {
            origin: Origin::Arithmetic,
        },
        Assumption::LoopTrips {
            line: 1,
            origin: Origin::Arithmetic,
        },
        Assumption::FirstIterations { line: 1, budget: B },
        Assumption::FirstExecutions { budget: B },
        Assumption::NoExit { line: 1 },
        Assumption::KeepsAligned {
            origin: Origin::Arithmetic,
            bytes: 4,
        },
        Assumption::ParamCondition {
            name: s(),
            kernel: s(),
            when: Condition::Odd,
            tried: vec![1, 2],
            source: ValueSource::Spread,
            idle: Vec::new(),
        },
        Assumption::ParamCondition {
            name: s(),
            kernel: s(),
            when: Condition::Odd,
            tried: vec![1, 2],
            source: ValueSource::Loaded {
                space: Space::Shared,
            },
            idle: Vec::new(),
        },
        Assumption::BlockCondition {
            kernel: s(),
            when: vec![[32, 8, 1]],
            tried: vec![[16, 16, 1], [32, 8, 1]],
        },
        Assumption::SomeCombinations { budget: B },
        Assumption::TypeCondition {
            params: vec![s()],
            kernel: s(),
            when: vec![s()],
            tried: vec![s(), s()],
        },
    ]
}

/// The kind of one value of each variant of every finding.
fn kinds() -> Vec<&'static str> {
    let reasons = [
        UnknownReason::DependsOn {
            origin: Origin::Arithmetic,
            differs: true,
        },
        UnknownReason::MergeUndecided {
            first: s(),
            second: s(),
        },
        UnknownReason::BranchUndecided {
            origin: Origin::Arithmetic,
        },
        UnknownReason::OutOfBudget(B),
        UnknownReason::KernelBudgetSpent(B),
        UnknownReason::FixSearchStopped {
            ways: 2.0,
            limit: 1.0,
        },
    ];
    let assumptions = assumptions();
    let for_every = [
        ForEvery::Param {
            name: s(),
            kernel: s(),
            tried: vec![1, 2],
            source: ValueSource::Spread,
        },
        ForEvery::Param {
            name: s(),
            kernel: s(),
            tried: vec![1, 2],
            source: ValueSource::Loaded {
                space: Space::Global,
            },
        },
        ForEvery::Block {
            kernel: s(),
            tried: vec![[16, 16, 1]],
            bound: None,
        },
        ForEvery::Type {
            params: vec![s()],
            kernel: s(),
            tried: vec![s()],
        },
    ];
    let cuts = [
        Cut::AccessPieces { ty: s(), count: 1 },
        Cut::Declarator,
        Cut::LoopScan,
        Cut::LaunchScan,
        Cut::SyntaxErrors,
        Cut::FunctionDeclarator,
        Cut::LaunchSearch { function: s() },
        Cut::HostValues { function: s() },
        Cut::SpecifierMacro { word: s() },
        Cut::TypenameName,
        Cut::AttributeArguments { key: s() },
        Cut::Headers { given: 1 },
        Cut::ObjectMembers { ty: s() },
    ];
    let mut notes = vec![
        NoteKind::FileTooLarge { budget: B },
        NoteKind::BinaryFile,
        NoteKind::GrammarUnavailable,
        NoteKind::ParserGaveUp,
        NoteKind::UnclosedBraces {
            count: 1,
            left_open: 0,
            budget: B,
        },
        NoteKind::ParseError { snippet: s() },
        NoteKind::ParseExpected { node: s() },
        NoteKind::UndefinedInCondition {
            condition: s(),
            name: s(),
        },
        NoteKind::ConditionTooDeep {
            condition: s(),
            budget: B,
        },
        NoteKind::IncludeNotFollowed {
            include: s(),
            budget: B,
        },
        NoteKind::DeclarationsTooDeep { budget: B },
        NoteKind::StatementsTooDeep { budget: B },
        NoteKind::ValueOutOfBudget {
            origin: Origin::Arithmetic,
        },
        NoteKind::ArrayDimension { text: s() },
        NoteKind::BlockTooLarge {
            block: [1, 1, 1],
            max: 1,
        },
        NoteKind::Goto,
        NoteKind::TooManyInstantiations {
            kernel: s(),
            count: 1,
            budget: B,
        },
        NoteKind::TooManyLaunches {
            kernel: s(),
            count: 1,
            budget: B,
        },
    ];
    notes.extend(cuts.map(|what| NoteKind::OutOfBudget { what, budget: B }));
    let mut out: Vec<&'static str> = origins().iter().map(Origin::kind).collect();
    out.extend(reasons.iter().map(UnknownReason::kind));
    out.extend(assumptions.iter().map(Assumption::kind));
    out.extend(for_every.iter().map(ForEvery::kind));
    out.extend(notes.iter().map(NoteKind::kind));
    use warplint_analyzer::ir::LaunchOrigin;
    let origins = [
        LaunchOrigin::LaunchSite,
        LaunchOrigin::Config,
        LaunchOrigin::LaunchBounds,
        LaunchOrigin::Default,
    ];
    out.extend(origins.map(LaunchOrigin::kind));
    out
}

#[test]
fn every_kind_is_documented() {
    let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/kinds.md"));
    for kind in kinds() {
        assert!(
            doc.contains(&format!("- `{kind}`:")),
            "kind `{kind}` is not documented in docs/kinds.md"
        );
    }
}
