//! `warplint report`: every access with its prediction, as JSON (the
//! contract in `shared/groundtruth/README.md`) or as a table.

pub mod run;

use serde_json::{json, Map, Value};
use warplint_analyzer::ir::Span;
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{AccessReport, Arch};
use warplint_lints::wording;

/// One file's predictions on one architecture.
pub struct ArchRun {
    pub arch: Arch,
    /// Sector-based global model (5.0+) or legacy transactions.
    pub sector_based: bool,
    pub reports: Vec<AccessReport>,
}

/// One analysed file, as the reporters see it.
pub struct FileResult {
    pub path: String,
    /// Its canonical path.
    pub canonical: std::path::PathBuf,
    /// Analysed only for a header of the run that it includes (not itself
    /// one of the run's files).
    pub context: bool,
    /// The kernels its analysis lowered from headers (see
    /// [`crate::project::Covered`]).
    pub covered: Vec<(std::path::PathBuf, usize, usize)>,
    /// Paths of the headers it includes (span file ids 1, 2, …).
    pub header_paths: Vec<String>,
    pub runs: Vec<ArchRun>,
    pub notes: Vec<FileNote>,
    /// The kernels analysed (instantiations from the first architecture).
    pub kernels: Vec<KernelRecord>,
    /// Line ranges conditional compilation leaves out.
    pub skipped_lines: Vec<(u32, u32)>,
    /// Counts (kernels and notes from the first architecture's analysis,
    /// accesses over every architecture).
    pub summary: warplint_analyzer::Summary,
}

impl FileResult {
    /// The path of file id `file` (0: this file).
    pub fn path_of(&self, file: u32) -> &str {
        match file {
            0 => &self.path,
            n => self
                .header_paths
                .get(n as usize - 1)
                .map(String::as_str)
                .unwrap_or(&self.path),
        }
    }

    /// Every (run, report), by source position then architecture.
    pub fn records(&self) -> Vec<(&ArchRun, &AccessReport)> {
        let mut v: Vec<(usize, &ArchRun, &AccessReport)> = self
            .runs
            .iter()
            .enumerate()
            .flat_map(|(i, run)| run.reports.iter().map(move |r| (i, run, r)))
            .collect();
        v.sort_by_key(|(i, _, r)| (r.span.start, r.kernel, r.access, r.launch, *i));
        v.into_iter().map(|(_, run, r)| (run, r)).collect()
    }
}

/// One analysed kernel (instantiation) and how many notes fall inside it.
pub struct KernelRecord {
    /// Where its extent starts when it is defined in the file analysed.
    pub own_at: Option<usize>,
    /// Else its header (canonical path) and where it starts there.
    pub from: Option<(std::path::PathBuf, usize)>,
    pub file: u32,
    pub line: u32,
    pub column: u32,
    pub name: String,
    pub notes: usize,
    /// Each launch it is analysed under, as JSON: its block, why that
    /// block (`origin`), and where the launch site is (`at`).
    pub launches: Vec<Value>,
    /// The source accesses nvcc emits no instruction for, as JSON
    /// ([`removed_json`]).
    pub removed: Vec<Value>,
}

/// A source access nvcc emits no instruction for, as `report` JSON states
/// it: where, which array and operation, why (`merged`, `reloaded`,
/// `forwarded`, `not-in-sass`) and where the instruction that stands for it
/// is (`at`, null where not known).
pub fn removed_json(
    k: &warplint_analyzer::ir::Kernel,
    r: &warplint_analyzer::ir::Removed,
    path_of: impl Fn(u32) -> String,
) -> Value {
    let at = r.why.at();
    json!({
        "file": path_of(r.span.file),
        "line": r.span.line,
        "column": r.span.column,
        "array": k.objects.get(r.obj).map(|o| o.name.as_str()).unwrap_or("?"),
        "op": r.op.name(),
        "text": r.text,
        "why": r.why.kind(),
        "at": at.map(|at| json!({"file": path_of(at.file), "line": at.line, "column": at.column})),
    })
}

/// A launch as `report` JSON states it; `path_of` names a file id.
pub fn launch_json(l: &warplint_analyzer::ir::Launch, path_of: impl Fn(u32) -> String) -> Value {
    let at = match (&l.elsewhere, &l.span) {
        (Some(e), _) => json!(format!("{}:{}", e.path, e.line)),
        (None, Some(s)) => json!(format!("{}:{}", path_of(s.file), s.line)),
        (None, None) => Value::Null,
    };
    json!({"block": l.block, "grid": l.grid, "origin": l.origin.kind(), "at": at})
}

pub struct FileNote {
    /// Its byte offset when it is in the file analysed.
    pub at: Option<usize>,
    pub file: u32,
    pub line: u32,
    pub column: u32,
    pub message: String,
    /// The note's stable kind (`NoteKind::kind`).
    pub kind: &'static str,
}

fn num(v: f64) -> Value {
    let r = (v * 1000.0).round() / 1000.0;
    if r.fract() == 0.0 && r.abs() < 1e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

/// The access's cost object: means per executed warp-level instruction,
/// those issued with no lane active included (at no cost; `undecided`:
/// those too whose predication is undecided), and maxima.
fn cost_json(run: &ArchRun, r: &AccessReport, undecided: bool) -> (String, Value) {
    let key = r.space.name().to_string();
    let issued = r.executions + r.predicated_off + if undecided { r.undecided_off } else { 0.0 };
    let share = if issued > 0.0 {
        r.executions / issued
    } else {
        1.0
    };
    let mean = |v: f64| num(v * share);
    let v = match &r.cost {
        None => Value::Null,
        Some(Cost::Shared(s)) => json!({
            "wavefronts": mean(s.wavefronts),
            "ideal_wavefronts": mean(s.ideal_wavefronts),
            "ways": num(s.ways),
            "max_wavefronts": s.max_wavefronts,
            "max_ways": num(s.max_ways),
        }),
        Some(Cost::Global(g)) if run.sector_based => json!({
            "sectors": mean(g.sectors),
            "ideal_sectors": mean(g.ideal_sectors),
            "max_sectors": g.max_sectors,
        }),
        Some(Cost::Global(g)) => json!({
            "transactions": mean(g.transactions),
            "bytes": mean(g.bytes),
            "ideal_sectors": mean(g.ideal_sectors),
        }),
        Some(Cost::Constant(c)) => json!({
            "requests": mean(c.requests),
            "max_requests": c.max_requests,
        }),
    };
    (key, v)
}

pub fn access_json(path: &str, run: &ArchRun, r: &AccessReport) -> Value {
    let mut m = Map::new();
    m.insert("file".into(), json!(path));
    m.insert("arch".into(), json!(run.arch.to_string()));
    m.insert("line".into(), json!(r.span.line));
    m.insert("column".into(), json!(r.span.column));
    m.insert("end_line".into(), json!(r.span.end_line));
    m.insert("end_column".into(), json!(r.span.end_column));
    m.insert("kernel".into(), json!(r.kernel_name));
    m.insert("array".into(), json!(r.array));
    m.insert("space".into(), json!(r.space.name()));
    m.insert("op".into(), json!(r.op.name()));
    m.insert("access_bytes".into(), json!(r.width));
    m.insert("block".into(), json!(r.block));
    m.insert("grid".into(), json!(r.grid));
    // Nsight Compute counts a predicated instruction issued with no lane
    // active among the executed ones: so do the record's executions and
    // means (`predicated_off` says how many).
    m.insert("executions".into(), num(r.executions + r.predicated_off));
    if r.predicated_off > 0.0 {
        m.insert("predicated_off".into(), num(r.predicated_off));
    }
    // Where nvcc was measured both to predicate such a side and to branch
    // around it: the record is the branched reading, this the other.
    if r.undecided_off > 0.0 {
        let (key, cost) = cost_json(run, r, true);
        m.insert(
            "if_predicated".into(),
            json!({
                "predicated_off": num(r.undecided_off),
                "executions": num(r.executions + r.predicated_off + r.undecided_off),
                key: cost,
            }),
        );
    }
    m.insert("status".into(), json!(r.status.name()));
    let (assumptions, kinds): (Vec<_>, Vec<_>) =
        wording::assumptions(&r.assumptions).into_iter().unzip();
    m.insert("assumptions".into(), json!(assumptions));
    m.insert("assumption_kinds".into(), json!(kinds));
    let (every, kinds): (Vec<_>, Vec<_>) =
        wording::for_every_list(&r.for_every).into_iter().unzip();
    m.insert("for_every".into(), json!(every));
    m.insert("for_every_kinds".into(), json!(kinds));
    if let Some(u) = &r.unknown_reason {
        m.insert("unknown_reason".into(), json!(wording::unknown_reason(u)));
        m.insert("unknown_kind".into(), json!(u.kind()));
    }
    if let Some(c) = &r.sass {
        m.insert(
            "sass".into(),
            json!({
                "opcode": c.opcode,
                "width": c.width,
                "compiler": c.compiler,
                "modelled_bytes": c.modelled,
            }),
        );
    }
    let (k, v) = cost_json(run, r, false);
    m.insert(k, v);
    Value::Object(m)
}

/// Each access's item (and its call-site record, where it has one), its
/// kernel and status. A call-site record is left out where the call's line
/// has an access of its own of the same space and operation: that access
/// is what the line certainly runs, and how many of the inlined
/// instructions nvcc gives the line instead of the callee's is not known
/// (rodinia streamcluster's `d_dist(...) * p[tid].weight`).
fn access_items(f: &FileResult) -> Vec<(String, usize, warplint_analyzer::Status)> {
    use std::collections::HashSet;
    let records = f.records();
    let direct: HashSet<_> = records
        .iter()
        .map(|(_, r)| (r.span.file, r.span.line, r.space, r.op))
        .collect();
    let mut out = Vec::with_capacity(records.len());
    for (run, r) in records {
        let mut v = access_json(f.path_of(r.span.file), run, r);
        let launch = f
            .kernels
            .get(r.kernel)
            .and_then(|k| k.launches.get(r.launch));
        if let (Some(l), Some(m)) = (launch, v.as_object_mut()) {
            m.insert("launch".into(), l.clone());
        }
        let covers = covered(f, r);
        if let (false, Some(m)) = (covers.is_empty(), v.as_object_mut()) {
            m.insert("covers".into(), Value::Array(covers));
        }
        let at_call = r
            .inlined_at
            .as_ref()
            .map(|i| (i, call_site_json(&mut v, f.path_of(i.call.file), i.call)))
            .filter(|(i, _)| {
                i.repeated && !direct.contains(&(i.call.file, i.call.line, r.space, r.op))
            });
        let at_loop = r.hoisted.map(|h| {
            let files = (f.path_of(h.counted.file), f.path_of(h.from.file));
            hoisted_json(&v, files, h)
        });
        // The further lines of a loop the SASS has the instruction's
        // copies on: a record on each.
        let also: Vec<Value> = r
            .sass
            .iter()
            .flat_map(|c| c.in_loop.iter().skip(1))
            .map(|s| sass_line_json(&v, f.path_of(s.file), *s))
            .collect();
        let at_sass = r
            .sass
            .as_ref()
            .and_then(|c| c.counted_at)
            .map(|s| sass_line_json(&v, f.path_of(s.file), s));
        // A hoisted load, or an instruction the SASS puts on another line,
        // is reported once: on the line it is counted on, naming the
        // access (`hoisted_from`, `counted_from`), never also on its own.
        let mut first = at_loop.or(at_sass).unwrap_or(v);
        if let (Some(m), false) = (first.as_object_mut(), also.is_empty()) {
            let lines: Vec<Value> = also.iter().map(|a| a["line"].clone()).collect();
            m.insert("also_counted_at_lines".into(), Value::Array(lines));
        }
        out.push((item(&first), r.kernel, r.status));
        for moved in at_call.map(|(_, c)| c).into_iter().chain(also) {
            out.push((item(&moved), r.kernel, r.status));
        }
    }
    out
}

/// The source accesses a merged access stands for (`covers`: each one's
/// line, column and text), from its kernel's `removed`.
fn covered(f: &FileResult, r: &AccessReport) -> Vec<Value> {
    let path = f.path_of(r.span.file);
    let removed = f.kernels.get(r.kernel).map(|k| &k.removed[..]);
    removed
        .unwrap_or_default()
        .iter()
        .filter(|x| {
            x["why"] == "merged"
                && x["at"]["file"] == path
                && x["at"]["line"] == r.span.line
                && x["at"]["column"] == r.span.column
        })
        .map(|x| json!({"line": x["line"], "column": x["column"], "text": x["text"]}))
        .collect()
}

/// An access inlined from a `__device__` function: its record names the
/// call (`inlined_at`), and a second record puts the same instruction on
/// the call's line (`"attribution": "call-site"`, `inlined_from` the
/// access), since nvcc's line table gives part of an inlined function's
/// instructions the line of the call, and Nsight Compute counts them there.
/// Returns the second record.
fn call_site_json(v: &mut Value, call_file: &str, call: Span) -> Value {
    let to = Moved {
        file: call_file,
        at: call,
        end: (call.end_line, call.end_column),
        attribution: "call-site",
        from_key: "inlined_from",
    };
    let second = to.record(v);
    if let Some(m) = v.as_object_mut() {
        m.insert("inlined_at".into(), to.position());
    }
    second
}

/// A load nvcc hoists out of a loop: its record on the line Nsight Compute
/// counts it on (`"attribution": "hoisted"`, `hoisted_from` the access,
/// `hoisted_out_of` the loop): the loop's, or the kernel's first
/// statement's when it is the kernel's first memory instruction
/// (`fixtures/groundtruth/sm_90/hoist.cu`, `hoistline.cu`). The record
/// spans that position only.
fn hoisted_json(
    v: &Value,
    (counted_file, loop_file): (&str, &str),
    h: warplint_analyzer::ir::Hoisted,
) -> Value {
    let l = h.counted;
    let to = Moved {
        file: counted_file,
        at: l,
        end: (l.line, l.column),
        attribution: "hoisted",
        from_key: "hoisted_from",
    };
    let mut c = to.record(v);
    if let Some(m) = c.as_object_mut() {
        let out_of = json!({"file": loop_file, "line": h.from.line, "column": h.from.column});
        m.insert("hoisted_out_of".into(), out_of);
    }
    c
}

/// An access whose instruction the SASS read puts on another line (that
/// of an access merged into it, or of its loop's copies): its record on
/// that line (`"attribution": "sass"`, `counted_from`), where Nsight
/// Compute counts it (`fixtures/groundtruth/sm_90/overwrite2.cu`).
fn sass_line_json(v: &Value, file: &str, s: Span) -> Value {
    let to = Moved {
        file,
        at: s,
        end: (s.end_line, s.end_column),
        attribution: "sass",
        from_key: "counted_from",
    };
    to.record(v)
}

/// Where another record of an access puts it (the line Nsight Compute
/// counts its instruction on), and the key that names the access there.
struct Moved<'a> {
    file: &'a str,
    at: Span,
    end: (u32, u32),
    attribution: &'a str,
    /// Set on the new record: where the access is.
    from_key: &'a str,
}

impl Moved<'_> {
    /// Where the new record is.
    fn position(&self) -> Value {
        json!({"file": self.file, "line": self.at.line, "column": self.at.column})
    }

    /// `v`'s record at this position, naming `v`'s own.
    fn record(&self, v: &Value) -> Value {
        let mut c = v.clone();
        if let Some(cm) = c.as_object_mut() {
            let own = json!({"file": v["file"], "line": v["line"], "column": v["column"]});
            cm.insert("file".into(), json!(self.file));
            cm.insert("line".into(), json!(self.at.line));
            cm.insert("column".into(), json!(self.at.column));
            cm.insert("end_line".into(), json!(self.end.0));
            cm.insert("end_column".into(), json!(self.end.1));
            cm.insert("attribution".into(), json!(self.attribution));
            cm.insert(self.from_key.into(), own);
        }
        c
    }
}

/// A kernel's item, where it is defined, and whether it holds a note.
struct KernelItem {
    text: String,
    own_at: Option<usize>,
    from: Option<(std::path::PathBuf, usize)>,
    noted: bool,
}

/// One file's share of the JSON report, rendered by the worker that
/// analysed it (each item pretty-printed at its depth in the document), so
/// that a run holds text, not every access record, until it prints.
pub struct JsonParts {
    archs: Vec<String>,
    summary: warplint_analyzer::Summary,
    canonical: std::path::PathBuf,
    covered: Vec<(std::path::PathBuf, usize, usize)>,
    kernels: Vec<KernelItem>,
    /// Each access's item, its kernel (index) and status.
    accesses: Vec<(String, usize, warplint_analyzer::Status)>,
    /// Each note's item and its offset in this file (if here).
    notes: Vec<(String, Option<usize>)>,
    skipped: Vec<String>,
}

/// An element of one of the document's arrays, as serde_json lays it out
/// there (four spaces deeper than at the top).
fn item(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

pub fn json_parts(f: &FileResult) -> JsonParts {
    JsonParts {
        archs: f.runs.iter().map(|r| r.arch.to_string()).collect(),
        summary: f.summary,
        canonical: f.canonical.clone(),
        covered: f.covered.clone(),
        skipped: f
            .skipped_lines
            .iter()
            .map(|(a, b)| item(&json!({"file": f.path, "lines": [a, b]})))
            .collect(),
        accesses: access_items(f),
        kernels: f
            .kernels
            .iter()
            .map(|k| {
                let text = item(&json!({
                    "file": f.path_of(k.file), "line": k.line, "column": k.column,
                    "name": k.name, "notes": k.notes, "launches": k.launches,
                    "removed": k.removed,
                }));
                KernelItem {
                    text,
                    own_at: k.own_at,
                    from: k.from.clone(),
                    noted: k.notes > 0,
                }
            })
            .collect(),
        notes: f
            .notes
            .iter()
            .map(|n| {
                let text = item(&json!({"file": f.path_of(n.file), "line": n.line, "column": n.column, "message": n.message, "kind": n.kind}));
                (text, n.at)
            })
            .collect(),
    }
}

/// A text's fingerprint, for dropping repeated items without keeping a
/// second copy of each.
fn fingerprint(text: &str) -> (usize, u64) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    (text.len(), h.finish())
}

/// The run's outcomes put together: a kernel that a unit with more of the
/// build's context analysed is reported from there only
/// ([`crate::project::Covered`]), an item that several files' analyses
/// gave (a header's kernel under the same launch) once, and each file's
/// summary counts what it keeps.
pub fn settle(parts: &mut [JsonParts], index: &crate::project::LaunchIndex) {
    use std::collections::HashSet;
    let covered =
        crate::project::Covered::new(parts.iter().map(|p| (&p.canonical, p.covered.as_slice())));
    let (mut kernels, mut accesses, mut notes) = (HashSet::new(), HashSet::new(), HashSet::new());
    for p in parts.iter_mut() {
        let own = &p.canonical;
        let defined = p.kernels.iter().map(|k| (k.own_at, k.from.as_ref()));
        let gone = covered.superseded(index, own, defined);
        p.accesses.retain(|(text, k, _)| {
            !gone.get(*k).copied().unwrap_or(false) && accesses.insert(fingerprint(text))
        });
        let mut i = 0;
        p.kernels.retain(|k| {
            i += 1;
            !gone[i - 1] && kernels.insert(fingerprint(&k.text))
        });
        p.notes.retain(|(text, at)| {
            !at.is_some_and(|at| covered.covers(own, at)) && notes.insert(fingerprint(text))
        });
        let s = &mut p.summary;
        s.kernels = p.kernels.len() as u64;
        s.kernels_with_notes = p.kernels.iter().filter(|k| k.noted).count() as u64;
        s.accesses = p.accesses.len() as u64;
        let count = |st| p.accesses.iter().filter(|a| a.2 == st).count() as u64;
        s.exact = count(warplint_analyzer::Status::Exact);
        s.assumed = count(warplint_analyzer::Status::Assumed);
        s.unknown = count(warplint_analyzer::Status::Unknown);
    }
}

/// [`settle`] for the table (repeated rows are dropped as it is drawn).
pub fn settle_records(results: &mut [FileResult], index: &crate::project::LaunchIndex) {
    let covered =
        crate::project::Covered::new(results.iter().map(|r| (&r.canonical, r.covered.as_slice())));
    for f in results.iter_mut() {
        let own = f.canonical.clone();
        let kernels = f.kernels.iter().map(|k| (k.own_at, k.from.as_ref()));
        let gone = covered.superseded(index, &own, kernels);
        for run in &mut f.runs {
            run.reports
                .retain(|r| !gone.get(r.kernel).copied().unwrap_or(false));
        }
        f.notes
            .retain(|n| !n.at.is_some_and(|at| covered.covers(&own, at)));
    }
}
/// The JSON report of `files` (in order), written as it is assembled.
pub fn write_json(
    out: &mut impl std::io::Write,
    arch: Arch,
    files: &[JsonParts],
) -> std::io::Result<()> {
    let archs: Vec<String> = files
        .first()
        .map(|f| f.archs.clone())
        .unwrap_or_else(|| vec![arch.to_string()]);
    let mut sum = warplint_analyzer::Summary::default();
    for f in files {
        sum.add(&f.summary);
    }
    // The small members laid out by serde_json; each array stands in as a
    // placeholder line, replaced by its items.
    const ARRAYS: [&str; 4] = ["kernels", "accesses", "notes", "skipped"];
    let mut doc = json!({
        "version": 1,
        "arch": arch.to_string(),
        "archs": archs,
        "summary": {
            "files": sum.files,
            "kernels": sum.kernels,
            "kernels_with_notes": sum.kernels_with_notes,
            "accesses": sum.accesses,
            "exact": sum.exact,
            "assumed": sum.assumed,
            "unknown": sum.unknown,
        },
    });
    for name in ARRAYS {
        doc[name] = json!(format!("\u{0}{name}"));
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
    for line in text.lines() {
        let body = line.strip_suffix(',').unwrap_or(line);
        let array = ARRAYS
            .into_iter()
            .find(|name| body == format!("  \"{name}\": \"\\u0000{name}\""));
        let Some(name) = array else {
            writeln!(out, "{line}")?;
            continue;
        };
        let items = files.iter().flat_map(|f| match name {
            "kernels" => f.kernels.iter().map(|k| &k.text).collect::<Vec<_>>(),
            "accesses" => f.accesses.iter().map(|a| &a.0).collect(),
            "notes" => f.notes.iter().map(|n| &n.0).collect(),
            _ => f.skipped.iter().collect(),
        });
        write!(out, "  \"{name}\": [")?;
        let mut first = true;
        for it in items {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            out.write_all(it.as_bytes())?;
            first = false;
        }
        if !first {
            write!(out, "\n  ")?;
        }
        writeln!(out, "]{}", if body.len() < line.len() { "," } else { "" })?;
    }
    Ok(())
}

/// The cost column: ways for shared memory, sectors for global.
pub fn cost_text(run: &ArchRun, r: &AccessReport) -> String {
    match &r.cost {
        None => "-".into(),
        Some(Cost::Shared(s)) => {
            let ways = (s.ways * 100.0).round() / 100.0;
            if s.max_ways > s.ways + 1e-9 {
                format!("{ways}-way (max {})", (s.max_ways * 100.0).round() / 100.0)
            } else {
                format!("{ways}-way")
            }
        }
        Some(Cost::Global(g)) if !run.sector_based => {
            let t = (g.transactions * 100.0).round() / 100.0;
            let b = (g.bytes * 100.0).round() / 100.0;
            format!("{t} transactions ({b} bytes)")
        }
        Some(Cost::Global(g)) => {
            let s = (g.sectors * 100.0).round() / 100.0;
            let i = (g.ideal_sectors * 100.0).round() / 100.0;
            let unit = if s == 1.0 { "sector" } else { "sectors" };
            format!("{s} {unit} (ideal {i})")
        }
        Some(Cost::Constant(c)) => format!("{} requests", (c.requests * 100.0).round() / 100.0),
    }
}

pub fn table(files: &[FileResult]) -> String {
    let header = [
        "location", "kernel", "array", "space", "op", "bytes", "block", "cost", "status",
    ];
    let multi = files.iter().any(|f| f.runs.len() > 1);
    let mut rows: Vec<[String; 9]> = Vec::new();
    for f in files {
        for (run, r) in f.records() {
            let cost = if multi {
                format!("{}: {}", run.arch, cost_text(run, r))
            } else {
                cost_text(run, r)
            };
            rows.push([
                format!(
                    "{}:{}:{}",
                    f.path_of(r.span.file),
                    r.span.line,
                    r.span.column
                ),
                r.kernel_name.clone(),
                r.array.clone(),
                r.space.name().into(),
                r.op.name().into(),
                r.width.to_string(),
                format!("{}x{}x{}", r.block[0], r.block[1], r.block[2]),
                cost,
                r.status.name().into(),
            ]);
        }
    }
    // A header's row once, however many files include it.
    let mut seen = std::collections::HashSet::new();
    rows.retain(|row| seen.insert(row.clone()));
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    let mut details = String::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        for (_, r) in f.records() {
            if r.assumptions.is_empty()
                && r.unknown_reason.is_none()
                && r.for_every.is_empty()
                && r.hoisted.is_none()
            {
                continue;
            }
            let mut block = String::new();
            block.push_str(&format!(
                "{}:{}:{} ({} `{}`)\n",
                f.path_of(r.span.file),
                r.span.line,
                r.span.column,
                r.kernel_name,
                r.array
            ));
            if let Some(u) = &r.unknown_reason {
                block.push_str(&format!("  unknown: {}\n", wording::unknown_reason(u)));
            }
            for (a, _) in wording::assumptions(&r.assumptions) {
                block.push_str(&format!("  assumed: {a}\n"));
            }
            if let Some(h) = &r.hoisted {
                block.push_str(&format!("  moved: {}\n", wording::hoisted(h)));
            }
            if seen.insert(block.clone()) {
                details.push_str(&block);
            }
            for (f, _) in wording::for_every_list(&r.for_every) {
                details.push_str(&format!("  holds {f}\n"));
            }
        }
    }
    if !details.is_empty() {
        out.push('\n');
        out.push_str(&details);
    }
    let removed = removed_lines(files);
    if !removed.is_empty() {
        out.push_str("\nno instruction (nvcc):\n");
        out.push_str(&removed);
    }
    out
}

/// The table's closing list of source accesses nvcc emits no instruction
/// for: where, and what stands for it.
fn removed_lines(files: &[FileResult]) -> String {
    let mut out = String::new();
    for f in files {
        for k in &f.kernels {
            for r in &k.removed {
                let s = |v: &Value| v.as_str().unwrap_or("").to_string();
                let n = |v: &Value| v.as_u64().unwrap_or(0);
                let why = match s(&r["why"]).as_str() {
                    "merged" => "merged into the access at",
                    "reloaded" => "the value loaded at",
                    "not-in-sass" => "no instruction on its line in the SASS",
                    "registers" => "kept in registers, no memory instruction",
                    _ => "the value stored at",
                };
                let at = match n(&r["at"]["line"]) {
                    0 => String::new(),
                    line => format!(" line {line}"),
                };
                out.push_str(&format!(
                    "  {}:{}:{} ({} `{}`, {}): {why}{at}\n",
                    s(&r["file"]),
                    n(&r["line"]),
                    n(&r["column"]),
                    k.name,
                    s(&r["array"]),
                    s(&r["op"]),
                ));
            }
        }
    }
    out
}
