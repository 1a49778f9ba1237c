//! `check`'s machine output as a contract: one typed record per diagnostic
//! (`--output-format json` is an array of them, `json-lines` one per line),
//! with a JSON Schema generated from the same types
//! (`warplint debug json-schema`, committed as
//! `docs/schema/diagnostic.schema.json` and checked against real output in
//! the tests). Fields are declared in name order: the output's key order.

use schemars::JsonSchema;
use serde::Serialize;
use warplint_lints::{Applicability, Diagnostic, Severity};

use crate::render::FileDiagnostics;

/// The record format's version: bumped when a field changes meaning or
/// goes away (new fields do not bump it).
pub const RECORD_VERSION: u32 = 1;

/// A line and column (1-based; columns count bytes of the line).
#[derive(Serialize, JsonSchema)]
pub struct Location {
    pub column: u32,
    pub row: u32,
}

fn loc(line: u32, column: u32) -> Location {
    Location { column, row: line }
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeverityName {
    Error,
    Warning,
    Info,
}

/// Whether the finding holds for every value it depends on (`exact`) or
/// rests on an assumption listed in `assumptions` (`assumed`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusName {
    Exact,
    Assumed,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApplicabilityName {
    Safe,
    Unsafe,
    Displayonly,
}

/// One replacement of a fix.
#[derive(Serialize, JsonSchema)]
pub struct EditRecord {
    pub content: String,
    pub end_location: Location,
    pub location: Location,
}

/// A fix, verified by re-analysing the edited file.
#[derive(Serialize, JsonSchema)]
pub struct FixRecord {
    pub applicability: ApplicabilityName,
    pub edits: Vec<EditRecord>,
    pub message: String,
}

/// A secondary location (the array's declaration, …).
#[derive(Serialize, JsonSchema)]
pub struct RelatedRecord {
    pub end_location: Location,
    pub location: Location,
    pub message: String,
}

/// A call an access's function was inlined through.
#[derive(Serialize, JsonSchema)]
pub struct InlinedRecord {
    /// The function inlined.
    pub callee: String,
    /// The file the call is in.
    pub filename: String,
    pub location: Location,
    /// The other calls that inline the same access into the same kernel:
    /// the finding stands for each of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_calls: Vec<CallRecord>,
}

/// A call of an inlined function.
#[derive(Serialize, JsonSchema)]
pub struct CallRecord {
    pub filename: String,
    pub location: Location,
}

/// The instruction a SASS listing shows for the access (`--nvcc`/`--sass`).
#[derive(Serialize, JsonSchema)]
pub struct InstructionRecord {
    pub opcode: String,
    /// The compiler that emitted it (`nvcc 13.0`), or `listing`.
    pub verified_against: String,
}

/// One diagnostic of `warplint check`: ruff's fields (`code`, `name`,
/// `message`, `severity`, `filename`, `location`, `end_location`, `fix`,
/// `url`, `noqa_row`) and warplint's facts.
#[derive(Serialize, JsonSchema)]
pub struct DiagnosticRecord {
    /// The architecture the cost is for (`sm_90`).
    pub arch: String,
    /// The shared or global array accessed.
    pub array: String,
    /// The kind of each assumption (`docs/kinds.md`), in the same order.
    pub assumption_kinds: Vec<String>,
    /// What the finding rests on, worded.
    pub assumptions: Vec<String>,
    /// The block the cost was computed for.
    pub block: [u64; 3],
    /// `SM001`, `GM001`, `GM002`, `RL001`, `CM001`.
    pub code: String,
    pub end_location: Location,
    /// The absolute path of the file the diagnostic is in.
    pub filename: String,
    pub fix: Option<FixRecord>,
    pub help: Option<String>,
    /// Where nvcc hoists the load (its loop's line), when it does.
    pub hoisted_to_line: Option<u32>,
    /// Where the compiled code puts the instruction, when the SASS read
    /// (`--nvcc`, `--sass`) gives it the line of an access merged into it
    /// rather than this one: Nsight Compute counts it there.
    pub counted_on_line: Option<u32>,
    /// The call the access's `__device__` function was inlined through,
    /// when it was (nvcc counts part of an inlined function's
    /// instructions on the call's line).
    pub inlined_at: Option<InlinedRecord>,
    /// Global memory: mean 32-byte sectors a conflict-free access needs.
    pub ideal_sectors: Option<f64>,
    pub instruction: Option<InstructionRecord>,
    /// The kernel whose launch this cost is for.
    pub kernel: String,
    /// Lanes that collide (shared) or the worst warp's lanes (global).
    pub lanes: Vec<u32>,
    pub location: Location,
    /// Shared memory: the worst warp's n-way degree.
    pub max_ways: Option<f64>,
    pub message: String,
    /// The rule's name (`shared-bank-conflict`).
    pub name: String,
    /// The line a `// warplint: ignore[...]` comment suppresses it from.
    pub noqa_row: u32,
    pub notes: Vec<String>,
    pub related: Vec<RelatedRecord>,
    /// Constant memory: mean requests per instruction (one per distinct
    /// address in the warp).
    pub requests: Option<f64>,
    /// Constant memory: the worst warp's requests.
    pub max_requests: Option<f64>,
    /// Global memory: mean 32-byte sectors per request.
    pub sectors: Option<f64>,
    pub severity: SeverityName,
    pub status: StatusName,
    /// The rule's documentation.
    pub url: Option<String>,
    /// The record format's version (1): bumped when a field changes
    /// meaning or goes away.
    #[schemars(range(min = 1, max = 1))]
    pub version: u32,
    /// Shared memory: the mean n-way degree.
    pub ways: Option<f64>,
}

impl DiagnosticRecord {
    pub fn new(f: &FileDiagnostics, d: &Diagnostic) -> DiagnosticRecord {
        let fix = d.fix.as_ref().map(|x| FixRecord {
            applicability: match x.applicability {
                Applicability::Safe => ApplicabilityName::Safe,
                Applicability::Unsafe => ApplicabilityName::Unsafe,
                Applicability::DisplayOnly => ApplicabilityName::Displayonly,
            },
            edits: x
                .edits
                .iter()
                .map(|e| EditRecord {
                    content: e.content.clone(),
                    end_location: loc(e.span.end_line, e.span.end_column),
                    location: loc(e.span.line, e.span.column),
                })
                .collect(),
            message: x.message.clone(),
        });
        let facts = &d.facts;
        DiagnosticRecord {
            arch: facts.arch.clone(),
            array: facts.array.clone(),
            assumption_kinds: facts
                .assumption_kinds
                .iter()
                .map(|k| k.to_string())
                .collect(),
            assumptions: facts.assumptions.clone(),
            block: facts.block,
            code: d.code.to_string(),
            end_location: loc(d.span.end_line, d.span.end_column),
            filename: f.abs_path.clone(),
            fix,
            help: d.help.clone(),
            hoisted_to_line: facts.hoisted_to_line,
            counted_on_line: facts.counted_on_line,
            requests: facts.requests,
            max_requests: facts.max_requests,
            inlined_at: facts.inlined.as_ref().and_then(|i| {
                Some(InlinedRecord {
                    callee: i.callee.clone(),
                    filename: i.path.clone()?,
                    location: loc(i.call.line, i.call.column),
                    other_calls: i
                        .others
                        .iter()
                        .zip(&i.other_paths)
                        .map(|(c, p)| CallRecord {
                            filename: p.clone(),
                            location: loc(c.line, c.column),
                        })
                        .collect(),
                })
            }),
            ideal_sectors: facts.ideal_sectors,
            instruction: facts
                .instruction
                .as_ref()
                .map(|(opcode, compiler)| InstructionRecord {
                    opcode: opcode.clone(),
                    verified_against: compiler.clone().unwrap_or_else(|| "listing".into()),
                }),
            kernel: facts.kernel.clone(),
            lanes: facts.lanes.clone(),
            location: loc(d.span.line, d.span.column),
            max_ways: facts.max_ways,
            message: d.message.clone(),
            name: d.name.to_string(),
            noqa_row: d.span.line,
            notes: d.notes.clone(),
            related: d
                .related
                .iter()
                .map(|r| RelatedRecord {
                    end_location: loc(r.span.end_line, r.span.end_column),
                    location: loc(r.span.line, r.span.column),
                    message: r.message.clone(),
                })
                .collect(),
            sectors: facts.sectors,
            severity: match d.severity {
                Severity::Error => SeverityName::Error,
                Severity::Warning => SeverityName::Warning,
                Severity::Info => SeverityName::Info,
            },
            status: if facts.status == "assumed" {
                StatusName::Assumed
            } else {
                StatusName::Exact
            },
            url: warplint_lints::find(d.code).map(|r| r.url()),
            version: RECORD_VERSION,
            ways: facts.ways,
        }
    }
}

/// The JSON Schema of one record (pretty-printed).
pub fn schema() -> String {
    let s = schemars::schema_for!(DiagnosticRecord);
    serde_json::to_string_pretty(&s).unwrap_or_default() + "\n"
}
