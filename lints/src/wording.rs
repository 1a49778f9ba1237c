//! The one place where findings become sentences.
//!
//! The analyzer reports why something is unknown, what it assumed and what
//! it did not understand as data (`warplint_analyzer::finding`); every
//! output (diagnostics, `report`, the language server) words them here. This
//! is also the only place that names the CLI's flags and configuration keys
//! (`-I`, `--include-search project`, `[kernel.K] block`, `[analysis.defines]`).

use std::fmt::Write;

pub mod dialect;
mod lists;
pub mod unknowns;
pub use lists::{and_list, lines_list, sass_by};

use warplint_analyzer::finding::{
    Assumption, Budget, Condition, Cut, ForEvery, NoteKind, Origin, UnknownReason, ValueSource,
};

/// "budget `MAX_SYNTAX_DEPTH` (256 levels)".
pub fn budget(b: &Budget) -> String {
    format!("budget `{}` ({} {})", b.name, b.limit, b.unit)
}

/// What an unknown value is, as a noun phrase ("a value loaded from `x`").
pub fn origin(o: &Origin) -> String {
    let mut s = String::new();
    write_origin(&mut s, o);
    s
}

fn write_origin(s: &mut String, o: &Origin) {
    // `write!` to a String cannot fail.
    let _ = match o {
        Origin::PointerAsInteger => write!(s, "a pointer used as an integer"),
        Origin::NotAnInteger => write!(s, "a value that is not an integer"),
        Origin::Loaded { array } => write!(s, "a value loaded from `{array}`"),
        Origin::LoadedPointer { array } => write!(s, "a pointer loaded from `{array}`"),
        Origin::IntegerAsPointer => write!(s, "an integer converted to a pointer"),
        Origin::TypeSize { ty } => write!(
            s,
            "the size of `{ty}`, a type not defined in the files read"
        ),
        Origin::LineWidth { buffer } => write!(
            s,
            "the line width of `{buffer}` (the vectorisation factor its launch gives, not a \
             constant there)"
        ),
        Origin::ArrayLayout { array } => write!(
            s,
            "the layout of `{array}`, one of whose dimensions is not a known constant"
        ),
        Origin::SubscriptOfNonArray => write!(s, "subscript of a non-array value"),
        Origin::SubscriptOfUnknownArray => {
            write!(s, "subscript of a value that is not a known array")
        }
        Origin::TemplateParam { name, kernel } => write!(
            s,
            "template parameter `{name}` (no launch of `{kernel}` gives it a value)"
        ),
        Origin::TemplateMember { member, param } => write!(
            s,
            "`{member}`, a member of template parameter `{param}`, which no launch instantiates"
        ),
        Origin::ThroughTemplateParam { name, param } => {
            write!(s, "`{name}`, which depends on template parameter `{param}`")
        }
        Origin::Written { text } => write!(s, "`{text}`"),
        Origin::Undeclared { name } => {
            write!(s, "`{name}`, which is not declared in the files read")
        }
        Origin::OutOfBudget { what, budget: b } => {
            write_origin(s, what);
            write!(s, " (the {} ran out)", budget(b))
        }
        Origin::Macro { name } => write!(s, "macro `{name}`"),
        Origin::NestedMacro { name } => write!(s, "macro `{name}`, which nests too deeply"),
        Origin::CallThroughTemplateParam { callee, param } => write!(
            s,
            "the result of `{callee}`, which depends on template parameter `{param}`"
        ),
        Origin::AliasesTooDeep { text } => write!(
            s,
            "`{text}`, whose type aliases nest too deeply to find the template parameter it \
             depends on"
        ),
        Origin::NestedTooDeeply => write!(s, "an expression nested too deeply"),
        Origin::FloatingPoint => write!(s, "a floating-point constant"),
        Origin::EmptySubscript => write!(s, "an empty subscript"),
        Origin::AddressOfNonMemory => write!(s, "the address of a value that is not in memory"),
        Origin::DerefUnknownPointer => write!(s, "a dereference of an unknown pointer"),
        Origin::Unparsed => write!(s, "code that could not be parsed"),
        Origin::Construct { kind } => write!(s, "a {kind}"),
        Origin::BranchDependent => write!(s, "a value that depends on the branch taken"),
        Origin::FieldOfUnknown { field } => write!(s, "field `{field}` of an unknown value"),
        Origin::FieldNotInMemory { field } => {
            write!(s, "field `{field}` of a value not in memory")
        }
        Origin::FieldOfType { field, ty } => write!(s, "field `{field}` of `{ty}`"),
        Origin::UnsizedPointerArithmetic => {
            write!(s, "arithmetic on a pointer to an unsized type")
        }
        Origin::Operator { op } => write!(s, "operator `{op}`"),
        Origin::CallResult { callee } => write!(s, "the result of `{callee}`"),
        Origin::InlineAsm { instruction } => {
            write!(s, "a value inline assembly writes (`{instruction}`)")
        }
        Origin::RecursiveCall { function } => {
            write!(s, "the result of `{function}` (a recursive call)")
        }
        Origin::ActiveThreads { group, member } => write!(
            s,
            "`{member}` of `{group}`, which depends on which threads are active at run time"
        ),
        Origin::DeclarationCondition => write!(s, "a declaration used as a condition"),
        Origin::DeclarationLoopCondition => write!(s, "a declaration used as a loop condition"),
        Origin::DefaultCase => write!(s, "the `default:` case of a switch"),
        Origin::ReturnedInLoop { line } => {
            write!(s, "lanes that returned inside the loop at line {line}")
        }
        Origin::AfterLoop { name, line } => {
            write!(s, "the value of `{name}` after the loop at line {line}")
        }
        Origin::BeforeAssigned { name } => write!(s, "`{name}` before it is assigned"),
        Origin::RangeElement { name } => write!(s, "range element `{name}`"),
        Origin::Parameter { name } => write!(s, "parameter `{name}`"),
        Origin::LoopVariable { name } => write!(s, "loop variable `{name}`"),
        Origin::TooComplex { nodes, depth } => write!(
            s,
            "an expression too large to follow (past the {} or the {})",
            budget(nodes),
            budget(depth)
        ),
        Origin::Arithmetic => write!(s, "a division by zero or an out-of-range shift"),
        Origin::Unrecorded => write!(s, "an unknown value"),
    };
}

/// Why an access has no cost, as a sentence.
pub fn unknown_reason(r: &UnknownReason) -> String {
    match r {
        UnknownReason::DependsOn { origin: o, differs } => format!(
            "the address depends on {}{}",
            origin(o),
            if *differs {
                ", which differs between lanes"
            } else {
                ""
            }
        ),
        UnknownReason::BranchUndecided { origin: o } => format!(
            "whether nvcc compiles this branch of an `if constexpr`: its condition depends on {}",
            origin(o)
        ),
        UnknownReason::MergeUndecided { first, second } => format!(
            "whether nvcc merges `{first}` and `{second}` into one wider access: it depends on \
             the branch or call between them"
        ),
        UnknownReason::OutOfBudget(b) => format!("the {} ran out", budget(b)),
        UnknownReason::KernelBudgetSpent(b) => format!(
            "the kernel's accesses before this one used up the {}",
            budget(b)
        ),
        UnknownReason::FixSearchStopped { ways, limit } => {
            format!("the fix search stopped: a warp is {ways}-way, no better than {limit}")
        }
        UnknownReason::SassWidth {
            opcode,
            width,
            modelled,
        } => format!(
            "the compiled code runs it as `{opcode}` ({width} bytes per lane), where warplint              modelled {modelled}-byte accesses"
        ),
    }
}

/// What the engine assumed, as a sentence (naming the configuration key
/// that would replace the assumption where there is one).
/// The note on a finding reported once for several kernels.
pub fn same_in_kernels(kernels: &[String]) -> String {
    format!(
        "the same for {}",
        list(kernels.iter().map(|k| format!("`{k}`")))
    )
}

/// The note on a finding whose other instantiations or launches of the same
/// kernel are covered by it (the worst is the one reported).
pub fn also_in_kernels(kernels: &[String]) -> String {
    format!(
        "also in {} (the worst of them is shown)",
        list(kernels.iter().map(|k| format!("`{k}`")))
    )
}

pub fn assumption(a: &Assumption) -> String {
    match a {
        Assumption::ParamValue {
            name,
            value,
            kernel,
            loaded,
        } => format!(
            "`{name}` = {value} ({}; set `[kernel.{kernel}.params] {name}`)",
            match loaded {
                Some(space) => format!(
                    "the whole block loads it from one address of {} memory, so no launch gives \
                     it",
                    space.name()
                ),
                None => "no launch gives it a constant".into(),
            }
        ),
        Assumption::BlocksSampled { sampled, blocks } => format!(
            "the cost differs between blocks: its mean over {sampled} evenly spaced blocks of the \
             grid's {blocks} ({})",
            budget(&warplint_analyzer::budget::BLOCKS_SAMPLED)
        ),
        Assumption::Grid { grid: g } => format!(
            "grid [{}, {}, {}] (no launch found gives one)",
            g[0], g[1], g[2]
        ),
        Assumption::DefaultBlock { block: b, kernel } => format!(
            "block [{}, {}, {}] (no launch of `{kernel}` found gives one; set \
             `[kernel.{kernel}] block`)",
            b[0], b[1], b[2]
        ),
        Assumption::LaunchBoundsBlock { threads } => {
            format!("block [{threads}, 1, 1], from __launch_bounds__({threads})")
        }
        Assumption::AllocationStart { pointer } => format!(
            "`{pointer}` points to the start of an allocation (a pointer the analysis does \
             not follow to a declaration; one value for the whole block)"
        ),
        Assumption::LocalMemory {
            array,
            decided: true,
        } => format!(
            "nvcc puts `{array}` in local memory (a store and a load index it with values \
             known only at run time; nvcc's choice, measured but not read from the compiled \
             code)"
        ),
        Assumption::LocalMemory {
            array,
            decided: false,
        } => format!(
            "`{array}` is in local memory, as costed (whether nvcc keeps it in registers \
             is not known: a loop it may or may not unroll, an element size or an index \
             not measured)"
        ),
        Assumption::UniformData {
            arrays,
            draws,
            low,
            high,
        } => {
            let names: Vec<String> = arrays.iter().map(|a| format!("`{a}`")).collect();
            let range = if low == high {
                format!("{}-way in each", hundredths(*low))
            } else {
                format!("from {}-way to {}-way", hundredths(*low), hundredths(*high))
            };
            format!(
                "the values loaded from {} are uniformly distributed, each lane's its own (the \
                 cost is the mean of {draws} draws, {range}; the address keeps them inside the \
                 array, so the data decides only how often lanes collide: skewed data, where \
                 lanes share values, collides less, and values that meet in one bank more)",
                names.join(" and "),
            )
        }
        Assumption::LanesActive { origin: o } => {
            format!("lanes active where a condition depends on {}", origin(o))
        }
        Assumption::LoopTrips { line, origin: o } => format!(
            "the loop at line {line} runs a number of times that depends on {}; one iteration \
             analysed",
            origin(o)
        ),
        Assumption::FirstIterations { line, budget: b } => format!(
            "only the first {} iterations of the loop at line {line} are analysed ({})",
            b.limit,
            budget(b)
        ),
        Assumption::FirstExecutions { budget: b } => format!(
            "only the first {} warp-level executions (the first warps and blocks, in order) \
             are analysed ({})",
            b.limit,
            budget(b)
        ),
        Assumption::NoExit { line } => {
            format!("the loop at line {line} has no visible exit; one iteration analysed")
        }
        Assumption::KeepsAligned { origin: o, bytes } => format!(
            "the offset from {} keeps the warp {bytes}-byte aligned",
            origin(o)
        ),
        Assumption::ParamCondition {
            name,
            kernel,
            when,
            tried,
            source,
            idle,
        } => format!(
            "{} (the cost differs between the values tried, {}{}; set \
             `[kernel.{kernel}.params] {name}`)",
            param_condition(name, when, *source),
            values_tried(tried, *source),
            if idle.is_empty() {
                String::new()
            } else {
                format!(
                    "; the access does not run for {}",
                    list(idle.iter().map(i64::to_string))
                )
            }
        ),
        Assumption::BlockCondition {
            kernel,
            when,
            tried,
        } => format!(
            "{} (the cost differs between the common shapes tried; no launch of `{kernel}` \
             gives a block: set `[kernel.{kernel}] block`)",
            block_condition(when, tried)
        ),
        Assumption::TypeCondition {
            params,
            kernel,
            when,
            tried,
        } => format!(
            "{} (the cost differs between the types tried, {}: no instantiation of `{kernel}` \
             gives {} a type)",
            type_condition(params, when),
            list(tried.iter().cloned()),
            if params.len() == 1 { "it" } else { "them" }
        ),
        Assumption::SomeCombinations { budget: b } => format!(
            "not every combination of the values tried was analysed: each input no launch \
             gives was varied alone, the others at their first value, as far as the {} allowed",
            budget(b)
        ),
    }
}

/// "the values other launches give it: 64, 128".
fn values_tried(tried: &[i64], source: ValueSource) -> String {
    let list = list(tried.iter().map(i64::to_string));
    match source {
        ValueSource::Launches => format!("the values other launches give it: {list}"),
        ValueSource::Callers => {
            format!("the values the callers of the launching function pass: {list}")
        }
        ValueSource::CallersSample { passed } => format!(
            "{} evenly spaced values of the {passed} the callers of the launching function \
             pass ({}): {list}",
            tried.len(),
            budget(&warplint_analyzer::budget::HOST_VALUES)
        ),
        ValueSource::Type => format!("every value of its type: {list}"),
        ValueSource::Compared => {
            format!("{list}: the kernel only tests it as a condition or compares it with constants")
        }
        ValueSource::Spread => format!("{list}; no launch gives it a constant"),
        ValueSource::Nullness => "a null pointer and another; no launch passes `NULL`".into(),
        ValueSource::Loaded { space } => format!(
            "{list}; the whole block loads it from one address of {} memory, so no launch \
             gives it",
            space.name()
        ),
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// "`stride` is even"; "`probs` is not null".
fn param_condition(name: &str, c: &Condition, source: ValueSource) -> String {
    if source == ValueSource::Nullness {
        return match c.holds(0) {
            true => format!("`{name}` is null"),
            false => format!("`{name}` is not null"),
        };
    }
    match c {
        Condition::MultipleOf(2) => format!("`{name}` is even"),
        Condition::MultipleOf(k) => format!("`{name}` is a multiple of {k}"),
        Condition::Odd => format!("`{name}` is odd"),
        Condition::AtLeast(m) => format!("`{name}` is at least {m}"),
        Condition::AtMost(m) => format!("`{name}` is at most {m}"),
        Condition::OneOf(v) if v.len() == 1 => format!("`{name}` is {}", v[0]),
        Condition::OneOf(v) => format!("`{name}` is one of {}", list(v.iter().map(i64::to_string))),
    }
}

/// A block shape as people write it: "256" threads, "32x8".
fn shape(s: &[u64; 3]) -> String {
    match s {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

/// "a, b or c".
fn or(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => v.join(""),
    }
}

fn one_d(shapes: &[[u64; 3]]) -> bool {
    shapes.iter().all(|s| s[1] == 1 && s[2] == 1)
}

/// "the block is 32x8 (not 16x16 or 32x32)".
fn block_condition(when: &[[u64; 3]], tried: &[[u64; 3]]) -> String {
    let is: Vec<String> = when.iter().map(shape).collect();
    let not: Vec<String> = tried
        .iter()
        .filter(|s| !when.contains(s))
        .map(shape)
        .collect();
    if one_d(tried) {
        format!(
            "the block has {} threads (not {})",
            or(is.into_iter()),
            or(not.into_iter())
        )
    } else {
        format!(
            "the block is {} (not {})",
            or(is.into_iter()),
            or(not.into_iter())
        )
    }
}

/// "`T` is __half or double"; "`T` and `U` are double".
fn type_condition(params: &[String], when: &[String]) -> String {
    let names = params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>();
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!(
        "{} {verb} {}",
        names.join(" and "),
        or(when.iter().cloned())
    )
}

/// The conditions among `list` under which a finding holds, as the end of
/// its message: " when `stride` is even and the block is 32x8"; empty
/// when there are none.
pub fn when(list: &[Assumption]) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .filter_map(|a| match a {
            Assumption::ParamCondition {
                name, when, source, ..
            } => Some(param_condition(name, when, *source)),
            Assumption::BlockCondition { when, tried, .. } => {
                let b = block_condition(when, tried);
                Some(b.split(" (").next().unwrap_or(&b).to_string())
            }
            Assumption::TypeCondition { params, when, .. } => Some(type_condition(params, when)),
            _ => None,
        })
        .collect();
    parts.sort_unstable();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" when {}", parts.join(" and "))
    }
}

/// An input the cost does not depend on, as a sentence: "for every `n`
/// (tried 1, 2, 7, 32, 100, 1024, 4099)".
pub fn for_every(f: &ForEvery) -> String {
    match f {
        ForEvery::Param {
            name,
            tried,
            source,
            ..
        } => {
            let values = list(tried.iter().map(i64::to_string));
            match source {
                ValueSource::Launches => {
                    format!("for every value of `{name}` other launches give ({values})")
                }
                ValueSource::Callers => format!(
                    "for every value of `{name}` the callers of the launching function pass \
                     ({values})"
                ),
                ValueSource::CallersSample { passed } => format!(
                    "for every value of `{name}` tried, {} evenly spaced of the {passed} the \
                     callers of the launching function pass ({values})",
                    tried.len()
                ),
                ValueSource::Nullness => format!("whether `{name}` is null or not"),
                ValueSource::Compared => format!(
                    "for every `{name}` (tried {values}: the kernel only tests it or compares it \
                     with constants)"
                ),
                ValueSource::Loaded { space } => format!(
                    "for every value of `{name}`, which the whole block loads from {} memory \
                     (tried {values})",
                    space.name()
                ),
                _ => format!("for every `{name}` (tried {values})"),
            }
        }
        ForEvery::Type { params, tried, .. } => {
            let names = params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>();
            let (each, it) = if names.len() == 1 {
                ("", "it")
            } else {
                (", the same for each", "them")
            };
            format!(
                "for every type tried for {} ({}{each}: no instantiation gives {it} a type)",
                names.join(" and "),
                list(tried.iter().cloned())
            )
        }
        ForEvery::Block { tried, bound, .. } => {
            let shapes = list(tried.iter().map(shape));
            if let Some(n) = bound {
                format!(
                    "for every common block size up to its __launch_bounds__({n}) (tried \
                     {shapes} threads)"
                )
            } else if one_d(tried) {
                format!("for every common block size (tried {shapes} threads)")
            } else {
                format!("for every common block shape (tried {shapes})")
            }
        }
    }
}

/// A report's inputs it holds for every value of, as every output lists
/// them: worded, sorted, with their kinds.
pub fn for_every_list(list: &[ForEvery]) -> Vec<(String, &'static str)> {
    let mut out: Vec<_> = list.iter().map(|f| (for_every(f), f.kind())).collect();
    out.sort_unstable();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// A report's assumptions as every output lists them: worded, sorted by
/// their text, each text once, with its kind.
pub fn assumptions(list: &[Assumption]) -> Vec<(String, &'static str)> {
    let mut out: Vec<_> = list.iter().map(|a| (assumption(a), a.kind())).collect();
    out.sort_unstable();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// A front-end note, as a sentence (naming the flag or key that would
/// help where there is one).
pub fn note(n: &NoteKind) -> String {
    match n {
        NoteKind::FileTooLarge { budget: b } => {
            format!("file is larger than the {}; not analysed", budget(b))
        }
        NoteKind::BinaryFile => "file contains NUL bytes (binary?); not analysed".into(),
        NoteKind::GrammarUnavailable => {
            "internal error: the CUDA grammar could not be loaded".into()
        }
        NoteKind::ParserGaveUp => "the parser gave up on this file".into(),
        NoteKind::UnclosedBraces {
            count,
            left_open,
            budget: b,
        } => {
            let mut s = format!(
                "the file ends inside {count} unclosed brace{}; analysed as if closed here",
                if *count == 1 { "" } else { "s" }
            );
            if *left_open > 0 {
                let _ = write!(
                    s,
                    " ({left_open} more left open: the {} ran out)",
                    budget(b)
                );
            }
            s
        }
        NoteKind::ParseExpected { node } => format!("could not parse: expected `{node}` here"),
        NoteKind::ParseError { snippet } => {
            format!("could not parse `{snippet}`; analysing the rest")
        }
        NoteKind::UndefinedInCondition { condition, name } => format!(
            "`#if {condition}` depends on `{name}`, which is not defined here; its first branch \
             is analysed (define it with -D or [analysis.defines])"
        ),
        NoteKind::ConditionTooDeep {
            condition,
            budget: b,
        } => note(&NoteKind::UndefinedInCondition {
            condition: condition.clone(),
            name: if b.name == warplint_analyzer::budget::MACRO_DEPTH.name {
                format!("(macros nested past the {})", budget(b))
            } else {
                format!("(an expression nested past the {})", budget(b))
            },
        }),
        NoteKind::OutOfBudget { what, budget: b } => cut(what, b),
        NoteKind::IncludeNotFollowed { include, budget: b } => {
            format!("`{include}` is not followed: the {} ran out", budget(b))
        }
        NoteKind::DeclarationsTooDeep { budget: b } => format!(
            "declarations nested too deeply; those inside are not read (the {} ran out)",
            budget(b)
        ),
        NoteKind::StatementsTooDeep { budget: b } => format!(
            "statements nested too deeply; the rest of this block is not analysed (the {} ran \
             out)",
            budget(b)
        ),
        NoteKind::ValueOutOfBudget { origin: o } => {
            format!("{}; what depends on it is unknown", origin(o))
        }
        NoteKind::ArrayDimension { text } => format!(
            "array dimension `{text}` is not a known constant here (in a header that was not \
             found? give its folder with -I or try --include-search project; or set it in \
             [analysis.defines])"
        ),
        NoteKind::BlockTooLarge { block: b, max } => format!(
            "block [{}, {}, {}] has more than {max} threads; launch ignored",
            b[0], b[1], b[2]
        ),
        NoteKind::Goto => {
            "`goto` is not followed; the code after it is analysed as if reached".into()
        }
        NoteKind::TooManyInstantiations {
            kernel,
            count,
            budget: b,
        } => format!(
            "`{kernel}` has {count} template instantiations; only the first {} are analysed \
             (the {} ran out)",
            b.limit,
            budget(b)
        ),
        NoteKind::TooManyLaunches {
            kernel,
            count,
            budget: b,
        } => format!(
            "`{kernel}` is launched with {count} configurations; only the first {} are analysed \
             (the {} ran out)",
            b.limit,
            budget(b)
        ),
        NoteKind::RustSyntax { message } => {
            format!("could not parse this Rust file ({message}); it is not analysed")
        }
        NoteKind::RustUnread { what } => {
            format!("this Rust {what} is not read yet; what depends on it is unknown")
        }
    }
}

/// A [`NoteKind::OutOfBudget`] note: what was not read, and the budget.
fn cut(what: &Cut, b: &Budget) -> String {
    let b = budget(b);
    // Notes of the lowering: what stopped, the budget, what is done instead.
    let lowered = |what: String, then: &str| format!("{what} (the {b} ran out); {then}");
    match what {
        Cut::AccessPieces { ty, count } => lowered(
            format!("an access to `{ty}` in {count} pieces"),
            "only its first pieces are recorded",
        ),
        Cut::Declarator => lowered(
            "a declarator nested too deeply".into(),
            "its declaration is skipped",
        ),
        Cut::LoopScan => lowered(
            "a loop too large to scan for the variables it assigns".into(),
            "a variable assigned past that point is taken as unchanged by the loop",
        ),
        Cut::LaunchScan => lowered(
            "a launching function too large to scan for the pointers it moves".into(),
            "a pointer moved past that point is taken as aligned",
        ),
        Cut::SyntaxErrors => format!("more syntax errors follow, not listed (the {b} ran out)"),
        Cut::Headers { given } => {
            format!("{given} headers were given; those past the {b} are not read")
        }
        Cut::FunctionDeclarator => {
            format!("a function whose declarators nest past the {b} is not read")
        }
        Cut::LaunchSearch { function } => {
            format!("the launches in `{function}` are not read (the {b} ran out)")
        }
        Cut::HostValues { function } => format!(
            "the values passed to `{function}` are not followed (the {b} ran out): its \
             launches' arguments are tried over the spread of sizes"
        ),
        Cut::SpecifierMacro { word } => format!(
            "`{word}` is not read as a specifier macro: the parameter it opens runs past the {b}"
        ),
        Cut::TypenameName => format!(
            "the name after this `typename` runs past the {b}: not read as a functional cast"
        ),
        Cut::AttributeArguments { key } => {
            format!("`{key}(…)` is not read: its arguments run past the {b}")
        }
        Cut::ObjectMembers { ty } => format!(
            "variables of `{ty}` are not followed member by member: it has more data members \
             than the {b}, so its members are unknown"
        ),
    }
}

/// A number of hundredths, as a reader reads it (`2`, `1.5`, `3.47`).
fn hundredths(x: u32) -> String {
    let (whole, frac) = (x / 100, x % 100);
    match frac {
        0 => format!("{whole}"),
        f if f % 10 == 0 => format!("{whole}.{}", f / 10),
        f => format!("{whole}.{f:02}"),
    }
}

/// `line 7`, `lines 57 and 62`, `lines 3, 5 and 9`.
/// A load nvcc hoists out of its loop: where it runs, and the line Nsight
/// Compute counts it on.
pub fn hoisted(h: &warplint_analyzer::ir::Hoisted) -> String {
    let counted = if h.counted == h.from {
        " (Nsight Compute counts it on that line)".to_string()
    } else {
        format!(
            " (it is the kernel's first memory instruction: Nsight Compute counts it on \
             line {}, the kernel's first statement)",
            h.counted.line
        )
    };
    format!(
        "nvcc hoists this load out of the loop at line {}: it runs once each time the loop \
         is entered, not in every iteration{counted}",
        h.from.line,
    )
}

#[cfg(test)]
mod tests {
    //! The sentences are a contract (`report` JSON keeps them): each is
    //! checked against the text the outputs carried before findings became
    //! data, copied from `report --format json` on the public corpus.
    use super::*;

    fn origins() -> Vec<(Origin, &'static str)> {
        vec![
            (
                Origin::TypeSize {
                    ty: "typename Ktraits::compute_t".into(),
                },
                "the size of `typename Ktraits::compute_t`, a type not defined in the files read",
            ),
            (
                Origin::TemplateParam {
                    name: "Has_subset".into(),
                    kernel: "ln_bwd_kernel".into(),
                },
                "template parameter `Has_subset` (no launch of `ln_bwd_kernel` gives it a value)",
            ),
            (
                Origin::TemplateMember {
                    member: "Ktraits::LDGS".into(),
                    param: "Ktraits".into(),
                },
                "`Ktraits::LDGS`, a member of template parameter `Ktraits`, which no launch \
                 instantiates",
            ),
            (
                Origin::OutOfBudget {
                    what: Box::new(Origin::CallResult { callee: "f".into() }),
                    budget: Budget::new("MAX_INLINED_CALLS", 512, "calls per kernel"),
                },
                "the result of `f` (the budget `MAX_INLINED_CALLS` (512 calls per kernel) ran out)",
            ),
            (
                Origin::TooComplex {
                    nodes: Budget::new("MAX_EXPR_NODES", 4096, "nodes"),
                    depth: Budget::new("MAX_EXPR_DEPTH", 192, "levels"),
                },
                "an expression too large to follow (past the budget `MAX_EXPR_NODES` (4096 \
                 nodes) or the budget `MAX_EXPR_DEPTH` (192 levels))",
            ),
        ]
    }

    #[test]
    fn origins_read_as_before() {
        for (o, text) in origins() {
            assert_eq!(origin(&o), text, "{o:?}");
        }
    }

    #[test]
    fn reasons_assumptions_and_notes_read_as_before() {
        let o = Origin::TypeSize {
            ty: "typename Ktraits::compute_t".into(),
        };
        assert_eq!(
            unknown_reason(&UnknownReason::DependsOn {
                origin: o.clone(),
                differs: true
            }),
            "the address depends on the size of `typename Ktraits::compute_t`, a type not \
             defined in the files read, which differs between lanes"
        );
        let cases = [
            (
                assumption(&Assumption::DefaultBlock {
                    block: [256, 1, 1],
                    kernel: "ln_bwd_kernel".into(),
                }),
                "block [256, 1, 1] (no launch of `ln_bwd_kernel` found gives one; \
                 set `[kernel.ln_bwd_kernel] block`)",
            ),
            (
                assumption(&Assumption::FirstIterations {
                    line: 12,
                    budget: Budget::new("MAX_LOOP_ITERATIONS", 128, "iterations"),
                }),
                "only the first 128 iterations of the loop at line 12 are analysed (budget \
                 `MAX_LOOP_ITERATIONS` (128 iterations))",
            ),
            (
                assumption(&Assumption::LoopTrips {
                    line: 94,
                    origin: o,
                }),
                "the loop at line 94 runs a number of times that depends on the size of \
                 `typename Ktraits::compute_t`, a type not defined in the files read; one iteration \
                 analysed",
            ),
            (
                note(&NoteKind::UnclosedBraces {
                    count: 1,
                    left_open: 0,
                    budget: Budget::new("MAX_CLOSED_BRACES", 10_000, "braces"),
                }),
                "the file ends inside 1 unclosed brace; analysed as if closed here",
            ),
            (
                note(&NoteKind::UnclosedBraces {
                    count: 3,
                    left_open: 0,
                    budget: Budget::new("MAX_CLOSED_BRACES", 10_000, "braces"),
                }),
                "the file ends inside 3 unclosed braces; analysed as if closed here",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn conditions_and_what_holds_for_every_value() {
        let spread = vec![1, 2, 7, 32, 100, 1024, 4099];
        let stride = Assumption::ParamCondition {
            name: "stride".into(),
            kernel: "k".into(),
            when: Condition::MultipleOf(2),
            tried: spread.clone(),
            source: ValueSource::Spread,
            idle: Vec::new(),
        };
        let block = Assumption::BlockCondition {
            kernel: "k".into(),
            when: vec![[32, 8, 1], [32, 32, 1]],
            tried: vec![[16, 16, 1], [32, 8, 1], [32, 32, 1]],
        };
        assert_eq!(
            when(&[block.clone(), stride.clone()]),
            " when `stride` is even and the block is 32x8 or 32x32"
        );
        assert_eq!(when(&[]), "");
        let types = |params: &[&str], when: &[&str]| Assumption::TypeCondition {
            params: params.iter().map(|p| p.to_string()).collect(),
            kernel: "k".into(),
            when: when.iter().map(|t| t.to_string()).collect(),
            tried: vec!["float".into(), "__half".into(), "double".into()],
        };
        assert_eq!(
            when(&[types(&["T"], &["float", "double"])]),
            " when `T` is float or double"
        );
        assert_eq!(
            assumption(&types(&["T", "U"], &["double"])),
            "`T` and `U` are double (the cost differs between the types tried, float, __half, \
             double: no instantiation of `k` gives them a type)"
        );
        let every_type = |params: Vec<String>| ForEvery::Type {
            params,
            kernel: "k".into(),
            tried: vec!["float".into(), "__half".into()],
        };
        assert_eq!(
            for_every(&every_type(vec!["T".into()])),
            "for every type tried for `T` (float, __half: no instantiation gives it a type)"
        );
        assert_eq!(
            for_every(&every_type(vec!["T".into(), "U".into()])),
            "for every type tried for `T` and `U` (float, __half, the same for each: no \
             instantiation gives them a type)"
        );
        assert_eq!(
            assumption(&stride),
            "`stride` is even (the cost differs between the values tried, 1, 2, 7, 32, 100, \
             1024, 4099; no launch gives it a constant; set `[kernel.k.params] stride`)"
        );
        assert_eq!(
            assumption(&block),
            "the block is 32x8 or 32x32 (not 16x16) (the cost differs between the common \
             shapes tried; no launch of `k` gives a block: set `[kernel.k] block`)"
        );
        let sizes = Assumption::BlockCondition {
            kernel: "k".into(),
            when: vec![[1024, 1, 1]],
            tried: vec![[64, 1, 1], [256, 1, 1], [1024, 1, 1]],
        };
        assert_eq!(when(&[sizes]), " when the block has 1024 threads");
        assert_eq!(
            for_every(&ForEvery::Param {
                name: "n".into(),
                kernel: "k".into(),
                tried: spread,
                source: ValueSource::Spread,
            }),
            "for every `n` (tried 1, 2, 7, 32, 100, 1024, 4099)"
        );
        assert_eq!(
            for_every(&ForEvery::Param {
                name: "n".into(),
                kernel: "k".into(),
                tried: vec![64, 128],
                source: ValueSource::Launches,
            }),
            "for every value of `n` other launches give (64, 128)"
        );
        assert_eq!(
            for_every(&ForEvery::Block {
                kernel: "k".into(),
                tried: vec![[16, 16, 1], [32, 8, 1], [32, 32, 1]],
                bound: None,
            }),
            "for every common block shape (tried 16x16, 32x8, 32x32)"
        );
        assert_eq!(
            for_every(&ForEvery::Block {
                kernel: "k".into(),
                tried: vec![[64, 1, 1], [128, 1, 1], [192, 1, 1]],
                bound: Some(192),
            }),
            "for every common block size up to its __launch_bounds__(192) (tried 64, 128, 192 \
             threads)"
        );
        for (c, said) in [
            (Condition::MultipleOf(32), "`n` is a multiple of 32"),
            (Condition::Odd, "`n` is odd"),
            (Condition::AtLeast(32), "`n` is at least 32"),
            (Condition::AtMost(7), "`n` is at most 7"),
            (Condition::OneOf(vec![1024]), "`n` is 1024"),
            (Condition::OneOf(vec![1, 2, 7]), "`n` is one of 1, 2, 7"),
        ] {
            assert_eq!(param_condition("n", &c, ValueSource::Spread), said);
        }
        let null = |c: Condition| param_condition("p", &c, ValueSource::Nullness);
        assert_eq!(null(Condition::OneOf(vec![1])), "`p` is not null");
        assert_eq!(null(Condition::OneOf(vec![0])), "`p` is null");
    }
}
