//! What a lint reports: the diagnostic model every output format renders.

use warplint_analyzer::ir::Span;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Whether a fix may be applied without asking (ruff's terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Applicability {
    Safe,
    /// Changes behaviour beyond the diagnostic (e.g. the shared-memory footprint).
    Unsafe,
    /// Advice only: shown, never applied.
    DisplayOnly,
}

impl Applicability {
    pub fn name(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
            Applicability::DisplayOnly => "displayonly",
        }
    }
}

/// Replace bytes `start..end` of the file with `content`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Edit {
    pub span: Span,
    pub content: String,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fix {
    pub applicability: Applicability,
    pub message: String,
    pub edits: Vec<Edit>,
}

/// A secondary location with its own message.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

impl Label {
    /// Where the array a finding is about is declared.
    pub fn declaration(obj: &warplint_analyzer::ir::MemObject) -> Label {
        Label {
            span: obj.decl,
            message: format!("`{}` declared here", obj.name),
        }
    }
}

/// The measured facts behind a diagnostic, for machine outputs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Facts {
    pub kernel: String,
    pub array: String,
    pub arch: String,
    pub block: [u64; 3],
    /// Shared memory: mean and worst n-way degree.
    pub ways: Option<f64>,
    pub max_ways: Option<f64>,
    /// Global memory: mean sectors per request and the ideal.
    pub sectors: Option<f64>,
    pub ideal_sectors: Option<f64>,
    /// Constant memory: mean and worst requests per instruction (one per
    /// distinct address in the warp).
    #[serde(default)]
    pub requests: Option<f64>,
    #[serde(default)]
    pub max_requests: Option<f64>,
    /// Lanes that collide (shared) or the worst warp's lanes (global).
    pub lanes: Vec<u32>,
    pub assumptions: Vec<String>,
    /// The kind of each of [`Facts::assumptions`], in the same order.
    #[serde(deserialize_with = "warplint_analyzer::interned::deserialize_vec")]
    pub assumption_kinds: Vec<warplint_analyzer::interned::Name>,
    pub status: String,
    /// The instruction that runs the access, where the compiled code was
    /// read (`--nvcc`, `--sass`): its opcode, and the compiler that built
    /// it (`None`: a listing given).
    pub instruction: Option<(String, Option<String>)>,
    /// The line of the loop nvcc hoists the load out of.
    pub hoisted_to_line: Option<u32>,
    /// The line the compiled code puts the instruction on, where it is not
    /// the access's own (read from the SASS: a merged access's line).
    #[serde(default)]
    pub counted_on_line: Option<u32>,
    /// The access is in a `__device__` function inlined into the kernel:
    /// the call it came through.
    #[serde(default)]
    pub inlined: Option<InlinedAt>,
}

/// The call through which an access's function was inlined.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InlinedAt {
    /// The function inlined.
    pub callee: String,
    /// The call, in the analysed unit's file numbering.
    pub call: warplint_analyzer::ir::Span,
    /// The call's file (absolute), once the caller of the rules names it.
    pub path: Option<String>,
    /// The other calls that inline the same access of the same kernel
    /// (one finding for all of them), in source order.
    #[serde(default)]
    pub others: Vec<warplint_analyzer::ir::Span>,
    /// Their files (absolute), as `path`.
    #[serde(default)]
    pub other_paths: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    #[serde(deserialize_with = "warplint_analyzer::interned::deserialize")]
    pub code: warplint_analyzer::interned::Name,
    #[serde(deserialize_with = "warplint_analyzer::interned::deserialize")]
    pub name: warplint_analyzer::interned::Name,
    pub severity: Severity,
    /// Lowercase, names the pattern and the cost.
    pub message: String,
    pub span: Span,
    /// Label on the primary span.
    pub label: String,
    pub related: Vec<Label>,
    /// Extra lines: the lane picture, assumptions.
    pub notes: Vec<String>,
    /// What to do, in one line.
    pub help: Option<String>,
    pub fix: Option<Fix>,
    pub facts: Facts,
}
