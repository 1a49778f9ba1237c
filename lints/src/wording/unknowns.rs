//! The run summary's lines about accesses that could not be analysed: what
//! a group of them depends on (one kind of reason, with the names its
//! reasons name) and what would resolve it — a header's folder with `-I` or
//! a compile database, a `-D`, a configuration key — where something would.
//!
//! The caller groups the accesses by [`UnknownReason::kind`] and counts the
//! names ([`subject`]); only words are made here, from the reasons' data.

use warplint_analyzer::finding::{Origin, UnknownReason};

/// One kind of reason why accesses could not be analysed, as a run's
/// summary groups them.
pub struct UnknownGroup<'a> {
    /// A reason of the group (every reason of a group has its kind).
    pub example: &'a UnknownReason,
    /// How many accesses.
    pub count: u64,
    /// The names the group's reasons are about ([`subject`]), most
    /// frequent first (a few of them), and how many others there are.
    pub subjects: &'a [String],
    pub more_subjects: usize,
    /// Quoted includes the group's files did not find (a few), and how
    /// many others.
    pub missing_headers: &'a [String],
    pub more_headers: usize,
}

/// What a reason is about, as the summary names it ("`D` of `k`",
/// "`STRIDE`"): reasons of one kind are counted by it. `None` for a reason
/// that names nothing.
pub fn subject(r: &UnknownReason) -> Option<String> {
    match r {
        UnknownReason::DependsOn { origin, .. } | UnknownReason::BranchUndecided { origin } => {
            origin_subject(origin)
        }
        UnknownReason::MergeUndecided { first, second } => {
            Some(format!("`{first}` and `{second}`"))
        }
        UnknownReason::OutOfBudget(b) | UnknownReason::KernelBudgetSpent(b) => {
            Some(format!("`{}`", b.name))
        }
        UnknownReason::FixSearchStopped { .. } => None,
        UnknownReason::SassWidth { opcode, .. } => Some(format!("`{opcode}`")),
    }
}

fn origin_subject(o: &Origin) -> Option<String> {
    let name = match o {
        Origin::TemplateParam { name, kernel } => return Some(format!("`{name}` of `{kernel}`")),
        Origin::FieldOfType { field, ty } => return Some(format!("`{field}` of `{ty}`")),
        Origin::OutOfBudget { budget, .. } => budget.name,
        Origin::TooComplex { nodes, .. } => nodes.name,
        Origin::Construct { kind } => return Some(kind.clone()),
        Origin::TemplateMember { member: n, .. }
        | Origin::ThroughTemplateParam { name: n, .. }
        | Origin::CallThroughTemplateParam { callee: n, .. }
        | Origin::AliasesTooDeep { text: n }
        | Origin::Written { text: n }
        | Origin::TypeSize { ty: n }
        | Origin::LineWidth { buffer: n }
        | Origin::Undeclared { name: n }
        | Origin::ArrayLayout { array: n }
        | Origin::Loaded { array: n }
        | Origin::FieldOfUnknown { field: n }
        | Origin::FieldNotInMemory { field: n }
        | Origin::Operator { op: n }
        | Origin::CallResult { callee: n }
        | Origin::InlineAsm { instruction: n }
        | Origin::RecursiveCall { function: n }
        | Origin::AfterLoop { name: n, .. }
        | Origin::BeforeAssigned { name: n }
        | Origin::RangeElement { name: n }
        | Origin::Parameter { name: n }
        | Origin::LoopVariable { name: n }
        | Origin::Macro { name: n }
        | Origin::NestedMacro { name: n } => n.as_str(),
        _ => return None,
    };
    Some(format!("`{name}`"))
}

/// What a group's accesses depend on (a noun phrase), what would resolve
/// it when something would, and whether it may come from a header the file
/// did not find (then the missing headers are named; else, for some, the
/// general advice about headers).
struct Predicate {
    what: &'static str,
    hint: Option<String>,
    header: Header,
}

/// What a group says about headers.
enum Header {
    /// Nothing: the group's values do not come from headers.
    No,
    /// The missing headers, if any.
    Missing,
    /// The missing headers, else this advice.
    MissingElse(&'static str),
}

fn predicate(r: &UnknownReason, kernel: Option<&str>) -> Predicate {
    let plain = |what: &'static str| Predicate {
        what,
        hint: None,
        header: Header::No,
    };
    let o = match r {
        UnknownReason::DependsOn { origin, .. } => origin,
        UnknownReason::MergeUndecided { .. } => {
            return plain("whether nvcc merges neighbouring field accesses")
        }
        UnknownReason::BranchUndecided { .. } => {
            return plain("which branch of an `if constexpr` nvcc compiles")
        }
        UnknownReason::OutOfBudget(_) | UnknownReason::KernelBudgetSpent(_) => {
            return plain("budgets that ran out")
        }
        UnknownReason::FixSearchStopped { .. } => return plain("the fix search, which stopped"),
        UnknownReason::SassWidth { .. } => {
            return plain("instructions nvcc emits with another width than the model's")
        }
    };
    let launch = "check it with the file that launches the kernel";
    let advised = |what, hint: String, header| Predicate {
        what,
        hint: Some(hint),
        header,
    };
    match o {
        Origin::TemplateParam { .. } => advised(
            "template parameters that no launch gives",
            format!(
                "{launch}, or set `[kernel.{}] template`",
                kernel.unwrap_or("NAME")
            ),
            Header::No,
        ),
        Origin::TemplateMember { .. }
        | Origin::ThroughTemplateParam { .. }
        | Origin::CallThroughTemplateParam { .. }
        | Origin::AliasesTooDeep { .. } => advised(
            "template parameters that no launch instantiates",
            launch.into(),
            Header::No,
        ),
        Origin::LineWidth { .. } => advised(
            "line widths that no launch gives as a constant",
            "give the launch's vectorisation factor as a literal or a `const`".into(),
            Header::No,
        ),
        Origin::TypeSize { .. } => advised(
            "the size of types not defined in the files read",
            format!("if a template parameter, {launch}"),
            Header::MissingElse("a type from a header needs that header's folder with `-I`"),
        ),
        Origin::Undeclared { .. } => advised(
            "names not declared in the files read",
            "a macro? define it with `-D` or `[analysis.defines]`".into(),
            Header::MissingElse("from a header? give its folder with `-I`"),
        ),
        Origin::ArrayLayout { .. } => advised(
            "the layout of arrays with a dimension that is not a known constant",
            "define the dimension's macros with `-D` or `[analysis.defines]`".into(),
            Header::Missing,
        ),
        Origin::FieldOfType { .. } | Origin::Written { .. } | Origin::CallResult { .. } => {
            Predicate {
                header: Header::Missing,
                ..plain(match o {
                    Origin::FieldOfType { .. } => "fields of types not fully known",
                    Origin::Written { .. } => "expressions that did not resolve",
                    _ => "results of calls that are not followed",
                })
            }
        }
        Origin::Loaded { .. } | Origin::LoadedPointer { .. } => Predicate {
            hint: Some("data, known only when the program runs".into()),
            ..plain("values loaded from memory")
        },
        Origin::FieldNotInMemory { .. } | Origin::FieldOfUnknown { .. } => {
            plain("fields of struct values not in memory")
        }
        Origin::BeforeAssigned { .. } => plain("variables read before any assignment seen"),
        Origin::PointerAsInteger => plain("pointers used as integers"),
        Origin::IntegerAsPointer => plain("integers converted to pointers"),
        Origin::InlineAsm { .. } => plain("values written by inline assembly"),
        Origin::AfterLoop { .. } => plain("values after loops whose trip count is not known"),
        Origin::OutOfBudget { .. } | Origin::TooComplex { .. } => plain("budgets that ran out"),
        _ => plain("values the analysis does not model"),
    }
}

/// `items` in backticks already, joined: "`a`, `b` and 3 more".
fn list(items: &[String], more: usize) -> String {
    let mut s = items.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// One line of the summary: "18 depend on names not declared in the files
/// read (`STRIDE`, `TILE`): a macro? define it with `-D` or
/// `[analysis.defines]`; `common.h` was not found: give its folder with
/// `-I`".
pub fn group(g: &UnknownGroup) -> String {
    let kernel = match g.example {
        UnknownReason::DependsOn {
            origin: Origin::TemplateParam { kernel, .. },
            ..
        } if g.subjects.len() == 1 && g.more_subjects == 0 => Some(kernel.as_str()),
        _ => None,
    };
    let p = predicate(g.example, kernel);
    let missing = if g.missing_headers.is_empty() {
        None
    } else {
        let one = g.missing_headers.len() == 1 && g.more_headers == 0;
        Some(format!(
            "{} {} not found: give {} with `-I` or use a compile database \
             (`--compile-commands`)",
            list(g.missing_headers, g.more_headers),
            if one { "was" } else { "were" },
            if one { "its folder" } else { "their folders" },
        ))
    };
    let header = match (p.header, missing) {
        (Header::No, _) | (Header::Missing, None) => None,
        (Header::Missing | Header::MissingElse(_), Some(m)) => Some(m),
        (Header::MissingElse(advice), None) => Some(advice.to_string()),
    };
    let hints: Vec<String> = p.hint.into_iter().chain(header).collect();
    let verb = if g.count == 1 { "depends" } else { "depend" };
    let mut s = format!("{} {verb} on {}", g.count, p.what);
    if !g.subjects.is_empty() {
        s.push_str(&format!(" ({})", list(g.subjects, g.more_subjects)));
    }
    if !hints.is_empty() {
        s.push_str(": ");
        s.push_str(&hints.join("; "));
    }
    s
}
