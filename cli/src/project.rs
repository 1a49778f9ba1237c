//! The whole project's launch sites, gathered once per run before any file
//! is analysed, so that a kernel is analysed under the launches that reach
//! it wherever they are: a header checked alone takes the block of the
//! `.cu` file that launches its kernel, as the project's build does.
//!
//! The index reads the run's files and the other `.cu`/`.cuh` files of
//! their projects (the project as `--include-search project` finds it: the
//! nearest folder with `.git` or a warplint configuration) that hold a
//! `<<<` launch or call the runtime's launch API. Each file gives its launch sites through the analyzer
//! ([`warplint_analyzer::launch_sites`]: the front end alone, no kernel
//! lowered). A site is offered to a file whose unit defines the kernel it
//! launches: the site's unit saw the definition in that file or one of its
//! headers, or saw none (only a declaration, or nothing) and the file is
//! in the site's folder and names the kernel; the analyzer then also asks
//! that such a site pass as many arguments as the kernel has parameters.
//! The analyzer takes other files' sites only for a kernel the file itself
//! has no site of.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use warplint_analyzer::ir::{HostFacts, Kernel, ProjectLaunch, SiteAt, SiteRecord};
use warplint_analyzer::{budget, FrontendOptions, Header};

use crate::host_index::{self, HostSource, HostValues, UnitFacts};

use crate::includes::{canonical, headers_for, ProjectHeaders};
use crate::settings::Settings;

/// One file to read launch sites from, with the settings to read it under.
pub struct Source<'a> {
    pub path: PathBuf,
    /// The text when it is not on disk (stdin).
    pub bytes: Option<Vec<u8>>,
    pub settings: &'a Settings,
}

/// A site, with the canonical path of the file that defines its kernel as
/// the site's unit saw it (`None`: only declared there).
struct Entry {
    launch: ProjectLaunch,
    defined_in: Option<PathBuf>,
    /// The canonical path of the file the site is in.
    site_file: PathBuf,
}

/// One file of the projects as the index read it: its path as given or
/// found, and the files that define the kernels its unit launches.
struct UnitRead {
    path: PathBuf,
    launches: HashSet<PathBuf>,
}

/// Every launch site of the run's projects, by kernel name, and which of
/// their files include which.
#[derive(Default)]
pub struct LaunchIndex {
    by_kernel: HashMap<String, Vec<Entry>>,
    /// The units read, by canonical path.
    units: HashMap<PathBuf, UnitRead>,
    /// Each header (canonical path) and the units that reach it.
    includers: HashMap<PathBuf, Vec<PathBuf>>,
    /// Canonical paths already asked for (a file system call each).
    canonical: Mutex<HashMap<String, PathBuf>>,
    /// Files not read because the index was full.
    left_out: usize,
    /// The values the project's callers pass to launching functions.
    host: HostValues,
}

/// What the index gives one unit: the other files' launch sites of its
/// kernels, and the project's host values.
#[derive(Clone, Debug, Default)]
pub struct UnitSites {
    pub launches: Vec<ProjectLaunch>,
    pub host: HostValues,
}

impl UnitSites {
    /// Sets what the unit's analysis takes from the index.
    pub fn apply(self, o: &mut FrontendOptions) {
        o.project_launches = self.launches;
        o.host_calls = self.host.calls;
        o.extern_values = self.host.extern_values;
    }
}

/// Whether `text` may hold a launch: a `<<<` (Rust-CUDA's `launch!` too),
/// the runtime's launch API by name, or CubeCL's `k::launch…`.
fn may_launch(text: &[u8]) -> bool {
    text.windows(3).any(|w| w == b"<<<")
        || text.windows(10).any(|w| w == b"cudaLaunch")
        || text.windows(8).any(|w| w == b"::launch")
}

impl LaunchIndex {
    /// The index of `sources` and of the other files of their projects,
    /// read on the current thread pool.
    pub fn build(
        sources: Vec<Source>,
        project: &ProjectHeaders,
        cache: Option<&crate::cache::Cache>,
    ) -> LaunchIndex {
        use rayon::prelude::*;
        let (sources, roots) = with_project_files(sources, project);
        let mut index = LaunchIndex::default();
        let keep = sources.len().min(budget::MAX_LAUNCH_INDEX_FILES);
        index.left_out = sources.len() - keep;
        let found: Vec<(PathBuf, Vec<PathBuf>, Vec<Entry>, UnitFacts)> = sources[..keep]
            .par_iter()
            .map(|s| sites_of(s, project, cache))
            .collect();
        let mut seen = HashSet::new();
        let mut entries = Vec::new();
        let mut facts = Vec::new();
        for ((unit, headers, found, f), s) in found.into_iter().zip(&sources) {
            facts.push(f);
            for h in headers {
                index.includers.entry(h).or_default().push(unit.clone());
            }
            let launches = found.iter().filter_map(|e| e.defined_in.clone()).collect();
            let path = s.path.clone();
            index.units.insert(unit, UnitRead { path, launches });
            entries.extend(found);
        }
        for e in entries {
            // The same site seen through two including files is one site.
            if !seen.insert(key(&e)) {
                continue;
            }
            index
                .by_kernel
                .entry(e.launch.site.kernel.clone())
                .or_default()
                .push(e);
        }
        // The files read again for calls of launching functions: the
        // CUDA files read, then the projects' host sources.
        let mut host_sources: Vec<HostSource> = sources[..keep]
            .iter()
            .filter(|s| s.bytes.is_none())
            .map(|s| HostSource {
                path: s.path.clone(),
                settings: s.settings,
            })
            .collect();
        for (root, settings) in &roots {
            for path in host_index::host_files(root) {
                host_sources.push(HostSource { path, settings });
            }
        }
        let sites = index.by_kernel.values().flatten().map(|e| &e.launch.site);
        index.host = host_index::resolve(sites, facts, &host_sources, project);
        index
    }

    /// The sites for the unit of `path` (its text `bytes`, its `headers`):
    /// those whose kernel is defined, as the site's unit saw it, in this
    /// file or one of its headers, and those whose unit saw no definition,
    /// in this file's folder, of a kernel this file's text names.
    pub fn for_unit(&self, path: &Path, bytes: &[u8], headers: &[Header]) -> UnitSites {
        let mut launches = self.launches_for(path, bytes, headers);
        // A site's arguments the project's callers give values for.
        for l in &mut launches {
            let Some(h) = l.site.host.as_mut() else {
                continue;
            };
            for i in 0..h.params.len() {
                if h.values.get(i).is_none_or(Vec::is_empty) {
                    let found = warplint_analyzer::host_arg_values(&self.host.calls, h, i);
                    h.set_values(i, found.unwrap_or_default());
                }
            }
        }
        UnitSites {
            launches,
            host: self.host.clone(),
        }
    }

    fn launches_for(&self, path: &Path, bytes: &[u8], headers: &[Header]) -> Vec<ProjectLaunch> {
        if self.by_kernel.is_empty() {
            return Vec::new();
        }
        let own = self.canonical_of(&path.display().to_string());
        let folder = own.parent();
        let mut mine: HashSet<PathBuf> =
            headers.iter().map(|h| self.canonical_of(&h.path)).collect();
        mine.insert(own.clone());
        let text = String::from_utf8_lossy(bytes);
        let mut out = Vec::new();
        let unit_crate = crate_root(&own);
        for list in self.by_kernel.values() {
            // Rust sites reach a kernel by its name alone: where the
            // unit's own crate launches it, other crates' launches of a
            // function of that name (CubeCL's tests of each backend) are
            // not its.
            let mut rust: Vec<&Entry> = Vec::new();
            for e in list {
                let take = match &e.defined_in {
                    Some(d) => mine.contains(d),
                    None => {
                        if rust_defines(&e.site_file, &own, &text, &e.launch.site.kernel) {
                            rust.push(e);
                            false
                        } else {
                            e.site_file.parent() == folder
                                && text.contains(e.launch.site.kernel.as_str())
                        }
                    }
                };
                if take {
                    out.push(e.launch.clone());
                }
            }
            let same = |e: &&Entry| unit_crate.is_some() && crate_root(&e.site_file) == unit_crate;
            let own_crate = rust.iter().any(same);
            out.extend(
                rust.into_iter()
                    .filter(|e| !own_crate || same(e))
                    .map(|e| e.launch.clone()),
            );
        }
        out.sort();
        out
    }

    /// The files of the project each of the run's `files` is analysed
    /// through as well as alone, when no file of the run includes it (the
    /// run then analyses it there): those of the project that include it,
    /// the ones that launch its kernels first, at most
    /// `MAX_HEADER_CONTEXTS` (the run says when a file has more). Each as
    /// (index in `files`, the including file as read).
    pub fn contexts(&self, files: &[&Path]) -> Vec<(usize, PathBuf)> {
        let own: Vec<PathBuf> = files
            .iter()
            .map(|f| self.canonical_of(&f.display().to_string()))
            .collect();
        let run: HashSet<&PathBuf> = own.iter().collect();
        let mut out = Vec::new();
        for (i, own) in own.iter().enumerate() {
            let Some(list) = self.includers.get(own) else {
                continue;
            };
            let others: Vec<&PathBuf> = list.iter().filter(|u| *u != own).collect();
            if others.iter().any(|u| run.contains(*u)) {
                continue;
            }
            let mut ranked: Vec<(bool, &PathBuf)> = others
                .iter()
                .filter_map(|u| self.units.get(*u))
                .map(|u| (!u.launches.contains(own), &u.path))
                .collect();
            ranked.sort();
            ranked.dedup();
            if ranked.len() > budget::MAX_HEADER_CONTEXTS {
                eprintln!(
                    "warplint: note: {} is included by {} files of its project, none of them in this run; it was analysed as {} of them include it (MAX_HEADER_CONTEXTS)",
                    files[i].display(),
                    ranked.len(),
                    budget::MAX_HEADER_CONTEXTS
                );
            }
            out.extend(
                ranked
                    .into_iter()
                    .take(budget::MAX_HEADER_CONTEXTS)
                    .map(|(_, p)| (i, p.clone())),
            );
        }
        out
    }

    /// The units of the projects (canonical paths) that include `file`
    /// (canonical), itself left out.
    pub fn includers_of(&self, file: &Path) -> Vec<PathBuf> {
        self.includers
            .get(file)
            .map(|l| l.iter().filter(|u| u.as_path() != file).cloned().collect())
            .unwrap_or_default()
    }

    /// Says on stderr when the index was full.
    pub fn warn_if_full(&self) {
        if self.left_out > 0 {
            eprintln!(
                "warplint: warning: {} files of the project were not read for launch sites (MAX_LAUNCH_INDEX_FILES is {})",
                self.left_out,
                budget::MAX_LAUNCH_INDEX_FILES
            );
        }
    }

    fn canonical_of(&self, path: &str) -> PathBuf {
        if let Ok(mut m) = self.canonical.lock() {
            return m
                .entry(path.to_string())
                .or_insert_with(|| canonical(Path::new(path)))
                .clone();
        }
        canonical(Path::new(path))
    }
}

/// The folder of the nearest `Cargo.toml` above `file`: its crate.
fn crate_root(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|d| d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
}

/// Whether a Rust host file's launch (`site_file`, a `launch!` naming
/// `kernel` by `get_function`) reaches the Rust file `unit` (its `text`):
/// the host and kernel crates of Rust-CUDA are apart (`src/main.rs`,
/// `kernels/src/lib.rs`), so any Rust file of the project that defines a
/// function of that name.
fn rust_defines(site_file: &Path, unit: &Path, text: &str, kernel: &str) -> bool {
    let rs = |p: &Path| {
        p.extension()
            .is_some_and(|x| x == crate::discover::RUST_EXTENSION)
    };
    rs(site_file) && rs(unit) && {
        let needle = format!("fn {kernel}");
        text.match_indices(&needle).any(|(i, _)| {
            !text[i + needle.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    }
}

/// A kernel an analysis lowered from a header: the header's canonical
/// path and the kernel's byte extent there.
pub type Extent = (PathBuf, usize, usize);

/// The kernels of `kernels` lowered from headers, each header by its
/// canonical path (`canonical`, by file id less one).
pub fn header_extents(kernels: &[Kernel], canonical: &[PathBuf]) -> Vec<Extent> {
    kernels
        .iter()
        .filter(|k| k.extent.file != 0)
        .filter_map(|k| {
            let c = canonical.get(k.extent.file as usize - 1)?;
            Some((c.clone(), k.extent.start, k.extent.end))
        })
        .collect()
}

/// The kernels each unit's analysis lowered from headers, by header. A
/// kernel gives way to another unit's analysis of it made with more of the
/// build's context: a file's own kernel to a unit that includes the file
/// (its macros and launches), and a header's kernel that a unit analysed
/// to a unit that includes that unit (which sees everything it sees, and
/// what comes before).
#[derive(Default)]
pub struct Covered(HashMap<PathBuf, Vec<(usize, usize, PathBuf)>>);

impl Covered {
    /// `units`: each unit's canonical path and the extents it lowered.
    pub fn new<'a>(units: impl Iterator<Item = (&'a PathBuf, &'a [Extent])>) -> Covered {
        let mut map: HashMap<PathBuf, Vec<(usize, usize, PathBuf)>> = HashMap::new();
        for (unit, extents) in units {
            for (p, start, end) in extents {
                map.entry(p.clone())
                    .or_default()
                    .push((*start, *end, unit.clone()));
            }
        }
        Covered(map)
    }

    /// For each kernel `unit` analysed (at `own_at` in the unit's file, or
    /// at `from` in one of its headers), whether another unit's analysis
    /// of it is reported instead ([`Covered::supersedes`]).
    pub fn superseded<'k>(
        &self,
        index: &LaunchIndex,
        unit: &Path,
        kernels: impl Iterator<Item = (Option<usize>, Option<&'k (PathBuf, usize)>)>,
    ) -> Vec<bool> {
        let including = index.includers_of(unit);
        kernels
            .map(|(own_at, from)| self.supersedes(unit, &including, own_at, from))
            .collect()
    }

    /// Whether the kernel that `unit` analysed (at `own_at` in the unit's
    /// file, or at `from` in one of its headers) is reported from another
    /// unit's analysis (see [`Covered`]); `including` are the units that
    /// include `unit` ([`LaunchIndex::includers_of`]).
    fn supersedes(
        &self,
        unit: &Path,
        including: &[PathBuf],
        own_at: Option<usize>,
        from: Option<&(PathBuf, usize)>,
    ) -> bool {
        if let Some(at) = own_at {
            return self.covers(unit, at);
        }
        let Some((header, at)) = from else {
            return false;
        };
        self.0.get(header).is_some_and(|r| {
            r.iter()
                .any(|(a, b, u)| *a <= *at && *at < *b && including.contains(u))
        })
    }

    /// Whether byte `at` of `file` (canonical) lies in a kernel that a unit
    /// other than the file itself lowered from it.
    pub fn covers(&self, file: &Path, at: usize) -> bool {
        self.0
            .get(file)
            .is_some_and(|r| r.iter().any(|(a, b, u)| *a <= at && at < *b && u != file))
    }
}

/// What makes a site the same one, whichever unit it was seen in (a
/// header's number differs from one including file to the next).
fn key(e: &Entry) -> impl std::hash::Hash + Eq {
    let s = &e.launch.site;
    (
        e.site_file.clone(),
        s.span.start,
        e.defined_in.clone(),
        (s.kernel.clone(), s.targs.clone(), s.grid, s.block),
        (s.args.clone(), s.offset_args.clone()),
    )
}

/// `sources` and, after them, the `.cu`/`.cuh` files of their projects
/// that are not among them, under the settings of the first source of
/// each project.
#[allow(clippy::type_complexity)]
fn with_project_files<'a>(
    sources: Vec<Source<'a>>,
    project: &ProjectHeaders,
) -> (Vec<Source<'a>>, Vec<(PathBuf, &'a Settings)>) {
    let mut seen: HashSet<PathBuf> = sources.iter().map(|s| canonical(&s.path)).collect();
    let mut roots: Vec<(PathBuf, &'a Settings)> = Vec::new();
    for s in &sources {
        if s.bytes.is_some() {
            continue;
        }
        if let Some(root) = project.root_for(&s.path) {
            if !roots.iter().any(|(r, _)| *r == root) {
                roots.push((root, s.settings));
            }
        }
    }
    let mut out = sources;
    // Shown relative to the current folder when under it, as files given
    // on the command line usually are.
    let cwd = std::env::current_dir().unwrap_or_default();
    for (root, settings) in &roots {
        let (files, _) = crate::discover::files(std::slice::from_ref(root));
        for f in files {
            if seen.insert(canonical(&f)) {
                out.push(Source {
                    path: f.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(f),
                    bytes: None,
                    settings,
                });
            }
        }
    }
    (out, roots)
}

/// One file's canonical path, the canonical paths of the headers its unit
/// reaches, its launch sites (none when it cannot be read or holds no
/// `<<<`, nor do its headers) and its host facts.
fn sites_of(
    s: &Source,
    project: &ProjectHeaders,
    cache: Option<&crate::cache::Cache>,
) -> (PathBuf, Vec<PathBuf>, Vec<Entry>, UnitFacts) {
    let unit = canonical(&s.path);
    let none = |unit: &PathBuf| UnitFacts {
        unit: unit.clone(),
        calls: Vec::new(),
        extern_consts: Vec::new(),
    };
    let bytes = match &s.bytes {
        Some(b) => b.clone(),
        None => match crate::includes::read_source(&s.path) {
            Ok(b) => b,
            Err(_) => return (unit.clone(), Vec::new(), Vec::new(), none(&unit)),
        },
    };
    let settings = s.settings;
    let reached = headers_for(
        &s.path,
        &bytes,
        &settings.include_dirs,
        project,
        settings.project_includes,
    );
    let (headers, reached) = (reached.headers, reached.canonical);

    if !may_launch(&bytes) && !headers.iter().any(|h| may_launch(&h.text)) {
        let facts = none(&unit);
        return (unit, reached, Vec::new(), facts);
    }
    let mut options = settings.options.frontend.clone();
    options.language = crate::discover::language(&s.path);
    options.headers = headers;
    let facts = launch_sites(&s.path, &bytes, &options, settings, cache);
    let records = facts.sites;
    let path_of = |file: u32| -> String {
        match file {
            0 => s.path.display().to_string(),
            n => options
                .headers
                .get(n as usize - 1)
                .map(|h| h.path.clone())
                .unwrap_or_default(),
        }
    };
    // A file id's canonical path, as the reading of the headers found it.
    let canon = |file: u32| match file {
        0 => unit.clone(),
        n => reached
            .get(n as usize - 1)
            .cloned()
            .unwrap_or_else(|| canonical(Path::new(&path_of(n)))),
    };
    let entries = records
        .into_iter()
        .map(|site: SiteRecord| Entry {
            defined_in: site.kernel_file.map(&canon),
            site_file: canon(site.span.file),
            launch: ProjectLaunch {
                at: SiteAt {
                    path: path_of(site.span.file),
                    line: site.span.line,
                },
                site,
            },
        })
        .collect();
    let facts = UnitFacts {
        unit: unit.clone(),
        calls: facts.calls,
        extern_consts: facts.extern_consts,
    };
    (unit, reached, entries, facts)
}

/// The launch sites and host facts of the unit of `path` (its text
/// `bytes`, its headers in `options`), from the results cache when they
/// were read under the same settings from the same texts.
fn launch_sites(
    path: &Path,
    bytes: &[u8],
    options: &warplint_analyzer::FrontendOptions,
    settings: &Settings,
    cache: Option<&crate::cache::Cache>,
) -> HostFacts {
    let Some(cache) = cache.filter(|_| settings.sass.is_none()) else {
        return warplint_analyzer::host_facts(bytes, options);
    };
    let name = path.display().to_string();
    let mut k = cache.key("host-facts");
    k.text(&crate::cache::settings_fingerprint(settings, &()))
        .text(&name)
        .bytes(bytes);
    for h in &options.headers {
        k.text(&h.name).text(&h.path).bytes(&h.text);
    }
    let key = k.finish();
    if let Some(facts) = cache.get("host-facts", &name, &key) {
        return facts;
    }
    let facts = warplint_analyzer::host_facts(bytes, options);
    cache.put("host-facts", &name, &key, &facts);
    facts
}
