//! The whole project's host values: a launch whose argument is a
//! parameter of the host function it is in (`scanExclusiveShort(…, uint
//! arrayLength)` launching `k<<<…>>>(…, arrayLength)`) takes the values
//! that function's callers pass, wherever they are — `main.cpp`'s `for
//! (uint len = MIN_SHORT_ARRAY_SIZE; len <= MAX_SHORT_ARRAY_SIZE; len <<=
//! 1)` included, its bounds `extern const`s defined in another file.
//!
//! After the launch index read every file's sites, the parameters no
//! call in the site's own unit gives values for are looked up: the
//! project's files that name one of those functions (`.cu`, `.cuh` and
//! the host sources `.cpp`, `.cc`, `.cxx`, `.c`) are read again for their
//! calls of them ([`warplint_analyzer::host_facts`]), and the callers that
//! pass their own parameters on are looked up the same way, up to
//! `budget::MAX_HOST_CALL_DEPTH` functions up. Functions are matched by
//! name: two host functions of one name in different files are one.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use warplint_analyzer::ir::{HostArg, HostCall, HostFacts, SiteRecord};
use warplint_analyzer::{budget, host_calls_name as calls_name, host_values_of};

use crate::includes::{canonical, headers_for, ProjectHeaders};
use crate::settings::Settings;

/// Host sources read for calls (besides `.cu`/`.cuh`).
pub const HOST_EXTENSIONS: [&str; 4] = ["cpp", "cc", "cxx", "c"];

/// What the project's callers give: their calls of the launching
/// functions asked about (and of those that pass their parameters on),
/// and the integer constants defined with external linkage (a name two
/// files define differently is left out).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct HostValues {
    pub calls: Vec<HostCall>,
    pub extern_values: BTreeMap<String, i64>,
}

/// One unit's facts as the launch index read them.
pub struct UnitFacts {
    pub unit: PathBuf,
    pub calls: Vec<HostCall>,
    pub extern_consts: Vec<(String, i64)>,
}

/// A file to read again for calls, with its settings.
pub struct HostSource<'a> {
    pub path: PathBuf,
    pub settings: &'a Settings,
}

/// The (function, parameter) pairs whose values the sites' own units did
/// not find.
fn wanted<'s>(sites: impl Iterator<Item = &'s SiteRecord>) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    for s in sites {
        let Some(h) = &s.host else {
            continue;
        };
        for (i, e) in h.params.iter().enumerate() {
            let found = h.values.get(i).is_some_and(|v| !v.is_empty());
            if let (Some(e), false) = (e, found) {
                for p in e.params() {
                    out.insert((h.function.clone(), p));
                }
            }
        }
    }
    out
}

/// The project's host values for `sites`, from the units' facts read so
/// far (`units`) and the files of `sources` that name a function asked
/// about.
pub fn resolve<'s>(
    sites: impl Iterator<Item = &'s SiteRecord>,
    units: Vec<UnitFacts>,
    sources: &[HostSource],
    project: &ProjectHeaders,
) -> HostValues {
    let mut out = HostValues::default();
    let mut externs: BTreeMap<String, Option<i64>> = BTreeMap::new();
    let add_externs = |list: &[(String, i64)], externs: &mut BTreeMap<String, Option<i64>>| {
        for (n, v) in list {
            let e = externs.entry(n.clone()).or_insert(Some(*v));
            if *e != Some(*v) {
                *e = None;
            }
        }
    };
    let mut calls: HashMap<PathBuf, Vec<HostCall>> = HashMap::new();
    for u in units {
        add_externs(&u.extern_consts, &mut externs);
        calls.insert(u.unit, u.calls);
    }
    let wanted = wanted(sites);
    let extern_values = |externs: &BTreeMap<String, Option<i64>>| -> BTreeMap<String, i64> {
        externs
            .iter()
            .filter_map(|(n, v)| v.map(|v| (n.clone(), v)))
            .collect()
    };
    if wanted.is_empty() {
        out.extern_values = extern_values(&externs);
        return out;
    }
    let mut callees: BTreeSet<String> = wanted.iter().map(|(f, _)| f.clone()).collect();
    let mut asked: BTreeSet<String> = BTreeSet::new();
    let mut texts: HashMap<PathBuf, Vec<u8>> = HashMap::new();
    for _ in 0..budget::MAX_HOST_CALL_DEPTH {
        let new: Vec<String> = callees.difference(&asked).cloned().collect();
        if new.is_empty() {
            break;
        }
        asked.extend(new.iter().cloned());
        let names: Vec<String> = callees.iter().cloned().collect();
        let known = extern_values(&externs);
        use rayon::prelude::*;
        for s in sources {
            if !texts.contains_key(&s.path) {
                let t = crate::includes::read_source(&s.path).unwrap_or_default();
                texts.insert(s.path.clone(), t);
            }
        }
        let read: Vec<(PathBuf, HostFacts)> = sources
            .par_iter()
            .filter(|s| {
                texts
                    .get(&s.path)
                    .is_some_and(|t| new.iter().any(|n| calls_name(t, n)))
            })
            .map(|s| {
                let bytes = texts.get(&s.path).cloned().unwrap_or_default();
                (
                    canonical(&s.path),
                    facts_of(s, &bytes, &names, &known, project),
                )
            })
            .collect();
        for (unit, f) in read {
            add_externs(&f.extern_consts, &mut externs);
            calls.insert(unit, f.calls);
        }
        // A caller that passes its own parameter on: its callers say.
        for c in calls.values().flatten() {
            if c.args.iter().any(|a| matches!(a, HostArg::Param(_))) {
                callees.insert(c.caller.clone());
            }
        }
    }
    let mut all: Vec<HostCall> = calls
        .into_values()
        .flatten()
        .filter(|c| callees.contains(&c.callee))
        .collect();
    all.sort();
    all.dedup();
    for (f, p) in &wanted {
        if let Err(Some(b)) = host_values_of(&all, f, *p) {
            eprintln!(
                "warplint: warning: the values the project passes to `{f}` are not followed \
                 (the budget `{}` ({} {}) ran out): its launches' arguments are tried over \
                 the spread of sizes",
                b.name, b.limit, b.unit
            );
        }
    }
    out.calls = all;
    out.extern_values = extern_values(&externs);
    out
}

/// The calls of `names` in the unit of `s` (its text `bytes`), read with
/// its headers and the project's `extern` constants.
fn facts_of(
    s: &HostSource,
    bytes: &[u8],
    names: &[String],
    externs: &BTreeMap<String, i64>,
    project: &ProjectHeaders,
) -> HostFacts {
    let settings = s.settings;
    let reached = headers_for(
        &s.path,
        bytes,
        &settings.include_dirs,
        project,
        settings.project_includes,
    );
    let mut options = settings.options.frontend.clone();
    options.language = crate::discover::language(&s.path);
    options.headers = reached.headers;
    options.host_callees = names.to_vec();
    options.extern_values = externs.clone();
    warplint_analyzer::host_facts(bytes, &options)
}

/// The host sources (`HOST_EXTENSIONS`) under `root`, as discovery walks.
pub fn host_files(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::discover::walker(root)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| HOST_EXTENSIONS.contains(&x))
        })
        .collect();
    out.sort();
    out
}
