//! What a run analysed, for its summary: accesses counted by status and,
//! for those that could not be analysed, their reasons grouped by kind
//! (`UnknownReason::kind`) with the names each names and the quoted
//! includes their files did not find. Counted per kernel instantiation, so
//! that a header's kernel that an including file analysed counts once, from
//! there, as its diagnostics do. Words come from `lints::wording::unknowns`.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use std::path::PathBuf;
use warplint_analyzer::finding::{Assumption, Origin, UnknownReason};
use warplint_analyzer::ir::Kernel;

use warplint_analyzer::{AccessReport, FileAnalysis, Status};
use warplint_lints::wording::unknowns::{self, UnknownGroup};

/// Groups of reasons the human summary lists (the largest); the rest are
/// counted on one line.
const REASONS_SHOWN: usize = 5;
/// Names (and missing headers) a listed group shows.
const NAMES_SHOWN: usize = 3;

/// Accesses of one kernel instantiation, or of a whole run, by status.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Tally {
    /// Files analysed (a file that was only a note, or an error, is not).
    pub(super) files: u64,
    pub(super) kernels: u64,
    pub(super) kernels_with_notes: u64,
    pub(super) exact: u64,
    pub(super) assumed: u64,
    pub(super) unknown: u64,
    /// The unknown accesses by the kind of their reason (kept as the
    /// groups alone: the kind is their example's).
    #[serde(with = "by_kind")]
    groups: BTreeMap<&'static str, Group>,
    /// Quoted includes of the run's files found nowhere (a run is not
    /// "all clear" when what they define was never read).
    pub(super) missing_headers: std::collections::BTreeSet<String>,
    /// Syntax errors of files with `__global__` code but no kernel read.
    pub(super) unread: Vec<String>,
}

/// Unknown accesses whose reasons have one kind.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Group {
    example: UnknownReason,
    count: u64,
    /// How many accesses each name accounts for.
    subjects: BTreeMap<String, u64>,
    /// Quoted includes the group's files did not find, with how many of
    /// the group's accesses are in files that miss each.
    missing: BTreeMap<String, u64>,
}

/// [`Tally::groups`] as data: the groups in order, each keyed again by
/// its example's kind when read back.
mod by_kind {
    use super::{BTreeMap, Group};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        m: &BTreeMap<&'static str, Group>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        m.values().collect::<Vec<_>>().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<&'static str, Group>, D::Error> {
        let groups = Vec::<Group>::deserialize(d)?;
        Ok(groups.into_iter().map(|g| (g.example.kind(), g)).collect())
    }
}

/// One kernel instantiation's tally, and where it is defined.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct KernelTally {
    pub(super) name: String,
    /// Its byte offset when it is defined in the file analysed (not in a
    /// header).
    pub(super) own_at: Option<usize>,
    /// For a kernel in a header: what makes it the same analysis whichever
    /// file included it (the header, where the kernel starts there, its
    /// name and launches), so that the run counts it once.
    pub(super) same_as: Option<String>,
    /// Else its header (canonical path) and where it starts there.
    pub(super) from: Option<(PathBuf, usize)>,
    pub(super) tally: Tally,
}

/// The tally of each kernel of `analysis`; `headers` are the file's
/// headers (canonical paths), `missing` the quoted includes it did not
/// find.
pub(super) fn per_kernel(
    analysis: &FileAnalysis,
    headers: &[PathBuf],
    missing: &[String],
) -> Vec<KernelTally> {
    let mut out: Vec<KernelTally> = analysis
        .program
        .kernels
        .iter()
        .zip(analysis.kernel_notes())
        .map(|(k, notes)| KernelTally {
            name: k.display_name.clone(),
            own_at: (k.extent.file == 0).then_some(k.extent.start),
            same_as: headers
                .get((k.extent.file as usize).wrapping_sub(1))
                .map(|h| {
                    let launches: Vec<_> = k.launches.iter().map(|l| (l.block, l.grid)).collect();
                    format!(
                        "{}:{}:{}:{launches:?}",
                        h.display(),
                        k.extent.start,
                        k.display_name
                    )
                }),
            from: headers
                .get((k.extent.file as usize).wrapping_sub(1))
                .map(|h| (h.clone(), k.extent.start)),
            tally: Tally {
                kernels: 1,
                kernels_with_notes: u64::from(notes > 0),
                ..Tally::default()
            },
        })
        .collect();
    for r in &analysis.reports {
        let held = analysis
            .program
            .kernels
            .get(r.kernel)
            .and_then(|k| template_reason(k, r));
        if let Some(k) = out.get_mut(r.kernel) {
            match held {
                Some(reason) => k.tally.count_unknown(&reason, missing),
                None => k.tally.count(r, missing),
            }
        }
    }
    out
}

/// Why `check` counts an access as not analysed although its report has a
/// cost: the cost differs between the values tried for a template
/// parameter no instantiation gives (or one was assumed), which no rule
/// reports ([`warplint_lints::rests_on_template_value`]); it needs the
/// template argument.
pub(super) fn template_reason(k: &Kernel, r: &AccessReport) -> Option<UnknownReason> {
    if r.status == Status::Unknown || !warplint_lints::rests_on_template_value(k, r) {
        return None;
    }
    let name = r.assumptions.iter().find_map(|a| match a {
        Assumption::ParamCondition { name, .. } | Assumption::ParamValue { name, .. }
            if k.params.iter().any(|p| p.template && p.name == *name) =>
        {
            Some(name.clone())
        }
        _ => None,
    })?;
    Some(UnknownReason::DependsOn {
        origin: Origin::TemplateParam {
            name,
            kernel: k.name.clone(),
        },
        differs: false,
    })
}

impl Tally {
    fn count(&mut self, r: &AccessReport, missing: &[String]) {
        match r.status {
            Status::Exact => self.exact += 1,
            Status::Assumed => self.assumed += 1,
            Status::Unknown => match &r.unknown_reason {
                Some(reason) => self.count_unknown(reason, missing),
                None => self.unknown += 1,
            },
        }
    }

    /// An access not analysed, for `reason`.
    fn count_unknown(&mut self, reason: &UnknownReason, missing: &[String]) {
        self.unknown += 1;
        let g = self.groups.entry(reason.kind()).or_insert_with(|| Group {
            example: reason.clone(),
            count: 0,
            subjects: BTreeMap::new(),
            missing: BTreeMap::new(),
        });
        g.count += 1;
        if let Some(s) = unknowns::subject(reason) {
            *g.subjects.entry(s).or_default() += 1;
        }
        for m in missing {
            *g.missing.entry(m.clone()).or_default() += 1;
        }
    }

    pub(super) fn add(&mut self, o: &Tally) {
        self.files += o.files;
        self.kernels += o.kernels;
        self.kernels_with_notes += o.kernels_with_notes;
        self.exact += o.exact;
        self.assumed += o.assumed;
        self.unknown += o.unknown;
        for (kind, g) in &o.groups {
            match self.groups.get_mut(kind) {
                Some(mine) => {
                    mine.count += g.count;
                    for (s, n) in &g.subjects {
                        *mine.subjects.entry(s.clone()).or_default() += n;
                    }
                    for (m, n) in &g.missing {
                        *mine.missing.entry(m.clone()).or_default() += n;
                    }
                }
                None => {
                    self.groups.insert(kind, g.clone());
                }
            }
        }
    }

    pub(super) fn accesses(&self) -> u64 {
        self.analysed() + self.unknown
    }

    /// Accesses with a cost (every status but `unknown`).
    pub(super) fn analysed(&self) -> u64 {
        self.exact + self.assumed
    }

    /// The analysed accesses by status: "80 exact, 40 assumed" (statuses
    /// with none left out).
    pub(super) fn split(&self) -> String {
        [(self.exact, "exact"), (self.assumed, "assumed")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The groups, largest first (ties by kind).
    fn sorted(&self) -> Vec<(&'static str, &Group)> {
        let mut v: Vec<_> = self.groups.iter().map(|(k, g)| (*k, g)).collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        v
    }

    /// The summary's lines about the unknown accesses: the largest groups,
    /// each with what would resolve it, then the rest in one line.
    pub(super) fn reason_lines(&self) -> Vec<String> {
        let sorted = self.sorted();
        let mut lines: Vec<String> = sorted
            .iter()
            .take(REASONS_SHOWN)
            .map(|(_, g)| g.line(NAMES_SHOWN))
            .collect();
        let rest: u64 = sorted
            .iter()
            .skip(REASONS_SHOWN)
            .map(|(_, g)| g.count)
            .sum();
        // Unknown accesses without a recorded reason (never expected).
        let unrecorded = self.unknown - sorted.iter().map(|(_, g)| g.count).sum::<u64>();
        if rest + unrecorded > 0 {
            lines.push(format!("{} for other reasons", rest + unrecorded));
        }
        lines
    }

    /// The counts and every group, for `--statistics` JSON and SARIF.
    pub(super) fn json(&self) -> Value {
        let reasons: Vec<Value> = self
            .sorted()
            .into_iter()
            .map(|(kind, g)| {
                json!({
                    "kind": kind,
                    "count": g.count,
                    "subjects": by_frequency(&g.subjects),
                    "missing_headers": by_frequency(&g.missing),
                    "message": g.line(NAMES_SHOWN),
                })
            })
            .collect();
        json!({
            "files": self.files, "kernels": self.kernels,
            "kernels_with_notes": self.kernels_with_notes, "accesses": self.accesses(),
            "exact": self.exact, "assumed": self.assumed, "unknown": self.unknown,
            "unknown_reasons": reasons, "missing_headers": self.missing_headers,
            "unread_kernel_code": self.unread,
        })
    }
}

/// The names counted, most frequent first (ties in name order).
fn by_frequency(counts: &BTreeMap<String, u64>) -> Vec<&str> {
    let mut v: Vec<(&String, &u64)> = counts.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.into_iter().map(|(s, _)| s.as_str()).collect()
}

impl Group {
    /// Its line, showing `shown` names and headers.
    fn line(&self, shown: usize) -> String {
        let names: Vec<String> = by_frequency(&self.subjects)
            .into_iter()
            .take(shown)
            .map(str::to_string)
            .collect();
        let headers: Vec<String> = by_frequency(&self.missing)
            .into_iter()
            .take(shown)
            .map(|h| format!("`{h}`"))
            .collect();
        unknowns::group(&UnknownGroup {
            example: &self.example,
            count: self.count,
            more_subjects: self.subjects.len() - names.len(),
            subjects: &names,
            more_headers: self.missing.len() - headers.len(),
            missing_headers: &headers,
        })
    }
}
