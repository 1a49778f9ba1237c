//! Reading the headers a file includes (the analyzer does no IO):
//! `#include "name"` is looked up next to the including file, then in the
//! `-I`/config `include` folders; `#include <name>` in those folders, then
//! next to the including file (a project header named with angle brackets,
//! as builds that pass `-I.` allow: `#include <common.cu>`). A quoted
//! include found on none of those is looked up in the project's files by
//! the end of its path ([`ProjectHeaders`]): `"flashinfer/utils.cuh"` is
//! `include/flashinfer/utils.cuh` of the repository, as the build's `-I
//! include` would find it. System headers are not read: they are on no
//! searched path. Each header is read once per file, which also stops
//! include cycles.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use warplint_analyzer::budget;
use warplint_analyzer::Header;

/// `(name, quoted)` of every `#include` in `text`.
pub(crate) fn includes(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim_start();
        let (open, close, quoted) = match rest.chars().next() {
            Some('"') => ('"', '"', true),
            Some('<') => ('<', '>', false),
            _ => continue,
        };
        let inner = &rest[open.len_utf8()..];
        if let Some(end) = inner.find(close) {
            out.push((inner[..end].to_string(), quoted));
        }
    }
    out
}

/// The headers a file reaches, and the quoted includes found nowhere.
#[derive(Default)]
pub struct Reached {
    /// Every header found, breadth first (span file ids 1, 2, …).
    pub headers: Vec<Header>,
    /// Each header's canonical path (links and `..` resolved).
    pub canonical: Vec<PathBuf>,
    /// Quoted includes (project headers, as nvcc's `"…"` search implies)
    /// found on no searched path, each once, in the order met. Angle
    /// includes are system headers, read nowhere, so never missing.
    pub missing: Vec<String>,
    /// The budget that stopped the reading of headers, if one did.
    pub cut: Option<HeaderCut>,
}

/// A budget that stopped the reading of a file's headers (the headers past
/// it are not read, as if not found).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderCut {
    /// `MAX_HEADERS` headers were read.
    Count,
    /// `MAX_HEADER_BYTES` bytes of header text were read.
    Bytes,
}

impl std::fmt::Display for HeaderCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderCut::Count => write!(
                f,
                "includes more than {} headers (MAX_HEADERS); the rest were not read",
                budget::MAX_HEADERS
            ),
            HeaderCut::Bytes => write!(
                f,
                "includes more than {} MiB of headers (MAX_HEADER_BYTES); the rest were not read",
                budget::MAX_HEADER_BYTES >> 20
            ),
        }
    }
}

/// Every header reachable from `file` through `#include`, breadth first,
/// and the quoted includes not found. With `search`, the quoted includes
/// no searched folder holds are looked for in `project`'s files; the
/// files looked at are read through `project`'s memo (once per run).
pub fn headers_for(
    file: &Path,
    bytes: &[u8],
    include_dirs: &[PathBuf],
    project: &ProjectHeaders,
    search: bool,
) -> Reached {
    let mut out: Vec<Header> = Vec::new();
    let mut keys: Vec<PathBuf> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    // Each folder to search from and the includes met there.
    let mut queue: VecDeque<(PathBuf, Arc<Includes>)> = VecDeque::new();
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    // The project's index, looked up the first time an include needs it.
    let mut index: Option<Option<Arc<Index>>> = None;
    // Header text read so far (`MAX_HEADER_BYTES`).
    let mut read = 0usize;
    queue.push_back((dir, Arc::new(includes(&String::from_utf8_lossy(bytes)))));
    while let Some((dir, met)) = queue.pop_front() {
        for (name, quoted) in met.iter().cloned() {
            if out.len() >= budget::MAX_HEADERS {
                return Reached {
                    headers: out,
                    canonical: keys,
                    missing,
                    cut: Some(HeaderCut::Count),
                };
            }
            let mut candidates = Vec::new();
            if quoted {
                candidates.push(dir.join(&name));
            }
            candidates.extend(include_dirs.iter().map(|d| d.join(&name)));
            if !quoted {
                candidates.push(dir.join(&name));
            }
            let found = candidates
                .into_iter()
                .find_map(|c| project.file(&c).map(|f| (c, f)))
                .or_else(|| {
                    let project = Some(project).filter(|_| search && quoted)?;
                    let index = index.get_or_insert_with(|| project.index_for(file));
                    let found = index.as_ref()?.find(&name, &dir)?;
                    // Indexed, so a file: one that went since is skipped.
                    let f = project
                        .file(&found)
                        .unwrap_or_else(|| Arc::new(Looked::gone(&found)));
                    Some((found, f))
                });
            let Some((found, f)) = found else {
                if quoted && !missing.contains(&name) {
                    missing.push(name);
                }
                continue;
            };
            let key = f.canonical.clone();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let Some(text) = &f.text else {
                continue;
            };
            if text.len() > budget::MAX_FILE_BYTES {
                continue;
            }
            read += text.len();
            if read > budget::MAX_HEADER_BYTES {
                return Reached {
                    headers: out,
                    canonical: keys,
                    missing,
                    cut: Some(HeaderCut::Bytes),
                };
            }
            let next_dir = found.parent().map(Path::to_path_buf).unwrap_or_default();
            queue.push_back((next_dir, f.includes()));
            // Shown without `dir/../`: one header, one name, however it
            // was reached (unless a link makes the short name another file).
            let shown = normal(&found);
            let shown = if shown != found && canonical(&shown) != key {
                found
            } else {
                shown
            };
            keys.push(key);
            out.push(Header {
                name,
                path: shown.display().to_string(),
                text: text.to_vec(),
            });
        }
    }
    Reached {
        headers: out,
        canonical: keys,
        missing,
        cut: None,
    }
}

/// A file's `#include`s: each name, and whether it is quoted.
type Includes = Vec<(String, bool)>;

/// A file an include looked at: its canonical path and its text (`None`:
/// it could not be read).
pub struct Looked {
    canonical: PathBuf,
    text: Option<Arc<[u8]>>,
    /// Its `#include`s, found the first time they are asked for.
    includes: OnceLock<Arc<Includes>>,
}

impl Looked {
    fn new(path: &Path, text: Option<Arc<[u8]>>) -> Looked {
        Looked {
            canonical: canonical(path),
            text,
            includes: OnceLock::new(),
        }
    }

    fn gone(path: &Path) -> Looked {
        Looked::new(path, None)
    }

    fn includes(&self) -> Arc<Includes> {
        self.includes
            .get_or_init(|| {
                let text = self.text.as_deref().unwrap_or_default();
                Arc::new(includes(&String::from_utf8_lossy(text)))
            })
            .clone()
    }
}

/// The files includes looked at in a run, by the path looked at (`None`:
/// not a file), so that a header that many files include is read once.
/// Bounded by `MAX_RUN_HEADER_TEXT_BYTES` of text: past it, files are read
/// each time (speed only).
#[derive(Default)]
struct Looks {
    by_path: HashMap<PathBuf, Option<Arc<Looked>>>,
    bytes: usize,
}

/// A source file's bytes, at most one past the analyzer's
/// `MAX_FILE_BYTES`: a larger file is only ever a note, so a 100 MB file
/// costs 16 MiB of memory, not 100.
pub fn read_source(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(budget::MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// `path` with links and `..` resolved where it exists.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The files of each project a run reaches, by name, for quoted includes
/// that no searched folder holds. A file's project is the nearest folder
/// above it with `.git` or a warplint configuration, else the folder named
/// on the command line that holds it; each project is walked once per run
/// (when an include first needs it), honouring ignore files like file
/// discovery does.
pub struct ProjectHeaders {
    /// Folders named on the command line, absolute.
    cli_dirs: Vec<PathBuf>,
    /// The current folder, to show found headers relative to it as the
    /// other lookups do.
    cwd: PathBuf,
    /// Folder -> its project's root.
    roots: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
    /// Root -> its index.
    indexes: Mutex<HashMap<PathBuf, Arc<OnceLock<Arc<Index>>>>>,
    /// Files includes looked at.
    looks: Mutex<Looks>,
}

/// Markers of a project's root folder.
pub(crate) const ROOT_MARKERS: [&str; 3] = [
    ".git",
    crate::config::FILE_NAMES[0],
    crate::config::FILE_NAMES[1],
];

impl ProjectHeaders {
    pub fn new(paths: &[PathBuf]) -> Self {
        let cwd = std::env::current_dir().unwrap_or_default();
        let cli_dirs = paths
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| absolute(&cwd, p))
            .collect();
        ProjectHeaders {
            cli_dirs,
            cwd,
            roots: Mutex::new(HashMap::new()),
            indexes: Mutex::new(HashMap::new()),
            looks: Mutex::new(Looks::default()),
        }
    }

    /// `path` if it is a file: its canonical path and text, read once per
    /// run.
    pub fn file(&self, path: &Path) -> Option<Arc<Looked>> {
        if let Some(l) = self.looks.lock().ok()?.by_path.get(path) {
            return l.clone();
        }
        let looked = path
            .is_file()
            .then(|| Arc::new(Looked::new(path, read_source(path).ok().map(Arc::from))));
        if let Ok(mut m) = self.looks.lock() {
            let size = looked
                .as_ref()
                .and_then(|l| l.text.as_ref())
                .map_or(0, |t| t.len());
            if m.bytes + size <= budget::MAX_RUN_HEADER_TEXT_BYTES {
                m.bytes += size;
                m.by_path.insert(path.to_path_buf(), looked.clone());
            }
        }
        looked
    }

    /// The root folder of `file`'s project, if it has one.
    pub fn root_for(&self, file: &Path) -> Option<PathBuf> {
        let dir = absolute(&self.cwd, file.parent()?);
        self.root_of(&dir)
    }

    /// The index of `file`'s project, if it has one.
    /// Says on stderr which projects had more files than their index
    /// holds (`MAX_INDEXED_FILES`): a header past it is not found by name.
    pub fn warn_if_truncated(&self) {
        let Ok(m) = self.indexes.lock() else { return };
        let mut roots: Vec<&PathBuf> = m
            .iter()
            .filter(|(_, cell)| cell.get().is_some_and(|i| i.truncated))
            .map(|(root, _)| root)
            .collect();
        roots.sort();
        for root in roots {
            eprintln!(
                "warplint: warning: {} has more than {} files (MAX_INDEXED_FILES); headers past them are not found by name",
                root.display(),
                budget::MAX_INDEXED_FILES
            );
        }
    }

    fn index_for(&self, file: &Path) -> Option<Arc<Index>> {
        let dir = absolute(&self.cwd, file.parent()?);
        let root = self.root_of(&dir)?;
        let cell = {
            let mut m = self.indexes.lock().ok()?;
            m.entry(root.clone()).or_default().clone()
        };
        // Built outside the map's lock: other projects go on meanwhile;
        // threads of the same project wait for the one walk.
        Some(
            cell.get_or_init(|| Arc::new(Index::build(&root, self.shown(&root), &self.cwd)))
                .clone(),
        )
    }

    fn root_of(&self, dir: &Path) -> Option<PathBuf> {
        if let Some(r) = self.roots.lock().ok()?.get(dir) {
            return r.clone();
        }
        let marked = dir
            .ancestors()
            .find(|a| ROOT_MARKERS.iter().any(|m| a.join(m).exists()));
        let root = match marked {
            Some(r) => Some(r.to_path_buf()),
            // The outermost folder named on the command line that holds it.
            None => self
                .cli_dirs
                .iter()
                .filter(|c| dir.starts_with(c))
                .min_by_key(|c| c.components().count())
                .cloned(),
        };
        self.roots
            .lock()
            .ok()?
            .insert(dir.to_path_buf(), root.clone());
        root
    }

    /// `root` as found headers are shown: relative to the current folder
    /// when under it.
    fn shown(&self, root: &Path) -> PathBuf {
        root.strip_prefix(&self.cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| root.to_path_buf())
    }
}

/// `p` made absolute against `cwd`, `.` and `..` components resolved in
/// the text (links are not followed: a root is where the files appear).
fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    normal(&cwd.join(p))
}

/// `p` with `.` and `..` resolved in the text (links are not followed); a
/// relative path keeps the `..` that climb above its start.
pub(crate) fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// One project's files by name: each name's paths relative to the root,
/// in walk (sorted) order.
pub struct Index {
    /// The root as found headers are shown.
    shown: PathBuf,
    /// The root, absolute.
    root: PathBuf,
    /// The current folder, which relative folders are read from.
    cwd: PathBuf,
    by_name: HashMap<OsString, Vec<PathBuf>>,
    /// Whether the walk stopped at `MAX_INDEXED_FILES`.
    truncated: bool,
}

impl Index {
    fn build(root: &Path, shown: PathBuf, cwd: &Path) -> Index {
        let mut by_name: HashMap<OsString, Vec<PathBuf>> = HashMap::new();
        let mut count = 0usize;
        let mut truncated = false;
        let walk = crate::discover::walker(root)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walk.flatten() {
            if count >= budget::MAX_INDEXED_FILES {
                truncated = true;
                break;
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            count += 1;
            by_name
                .entry(entry.file_name().to_os_string())
                .or_default()
                .push(rel.to_path_buf());
        }
        Index {
            shown,
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            by_name,
            truncated,
        }
    }

    /// The project file `name` (an include's text) names, for an include in
    /// `dir`: the files whose path ends with `name`'s components, the one
    /// sharing the most leading folders with `dir`; none when two tie (an
    /// ambiguous name is not guessed) or `name` climbs with `..`.
    fn find(&self, name: &str, dir: &Path) -> Option<PathBuf> {
        let want: Vec<&str> = name
            .split(['/', '\\'])
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if want.is_empty() || want.contains(&"..") {
            return None;
        }
        let last = want.last()?;
        let candidates = self.by_name.get(std::ffi::OsStr::new(last))?;
        let dir = self.relative(dir);
        let mut best: Option<(usize, &PathBuf)> = None;
        let mut tie = false;
        for c in candidates {
            let comps: Vec<&std::ffi::OsStr> = c.iter().collect();
            if comps.len() < want.len()
                || !comps[comps.len() - want.len()..]
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| *a == std::ffi::OsStr::new(b))
            {
                continue;
            }
            let shared = match &dir {
                Some(d) => c
                    .parent()
                    .map(|p| p.iter().zip(d.iter()).take_while(|(a, b)| a == b).count())
                    .unwrap_or(0),
                None => 0,
            };
            match best {
                Some((s, _)) if s > shared => {}
                Some((s, _)) if s == shared => tie = true,
                _ => {
                    best = Some((shared, c));
                    tie = false;
                }
            }
        }
        match best {
            Some((_, c)) if !tie => Some(self.shown.join(c)),
            _ => None,
        }
    }

    /// `dir` (as the including file's folder is written) relative to the
    /// root, when under it.
    fn relative(&self, dir: &Path) -> Option<PathBuf> {
        absolute(&self.cwd, dir)
            .strip_prefix(&self.root)
            .ok()
            .map(Path::to_path_buf)
    }
}
