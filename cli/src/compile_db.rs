//! `compile_commands.json` (CMake's `-DCMAKE_EXPORT_COMPILE_COMMANDS=ON`,
//! Bear): each file's build settings as the build gives them — include
//! folders (`-I`, `-isystem`, `--include-path`), macros (`-D`, `-U`, in
//! order) and target architectures (`-arch`, `--gpu-architecture`,
//! `-gencode`).
//!
//! Found with `--compile-commands PATH` (the file, or a folder holding it),
//! else in the folder given to the run or one above it up to the project's
//! root (the first with `.git` or a warplint configuration), directly or in
//! `build/`. Entries take both forms (`arguments`, an array; `command`, a
//! string split as a shell would); relative paths are relative to the
//! entry's `directory`. A file the database does not list (a header) takes
//! the settings of an entry whose source includes it, else of the first
//! entry in its folder, else none. A database that cannot be read or
//! parsed is an error naming its path, never a panic; its size is bounded
//! by [`MAX_COMPILE_DB_BYTES`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::includes::normal;
use serde::Deserialize;
use warplint_analyzer::Arch;

/// The largest database read (a CMake project of 10,000 files writes
/// about 20 MiB); a larger one is an error that names this budget.
pub const MAX_COMPILE_DB_BYTES: u64 = 256 << 20;

/// Sources whose `#include`s are read to find which entry a header takes
/// its settings from (each is read at most once per run, up to the
/// analyzer's `MAX_FILE_BYTES`); past it, a header falls back to an entry
/// of its folder.
pub const MAX_INCLUDER_SCAN: usize = 20_000;

/// The file names looked for.
const FILE_NAME: &str = "compile_commands.json";

/// The settings one file is built with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BuildFlags {
    /// Include folders, absolute, in the command's order.
    pub include_dirs: Vec<PathBuf>,
    /// `NAME=VALUE` macros left after the command's `-D`s and `-U`s.
    pub defines: Vec<(String, String)>,
    /// Target architectures the command builds for (those warplint knows).
    pub archs: Vec<String>,
}

/// One entry as the file has it.
#[derive(Deserialize)]
struct RawEntry {
    directory: String,
    file: String,
    arguments: Option<Vec<String>>,
    command: Option<String>,
}

/// A database read: each listed file's settings.
pub struct CompileDb {
    /// (absolute source path, settings), in the file's order.
    entries: Vec<(PathBuf, BuildFlags)>,
    by_file: HashMap<PathBuf, usize>,
    /// Header (absolute) -> the first entry whose source includes it;
    /// built when a file not listed is first asked for.
    includers: std::sync::OnceLock<HashMap<PathBuf, usize>>,
}

/// The database for a run: `explicit` (a file, or a folder holding
/// `compile_commands.json`), else the first found from `paths` up to
/// their project's root. `Err` names the path of one that cannot be read.
pub fn find(paths: &[PathBuf], explicit: Option<&Path>) -> Result<Option<CompileDb>, String> {
    if let Some(p) = explicit {
        let file = if p.is_dir() {
            p.join(FILE_NAME)
        } else {
            p.to_path_buf()
        };
        return CompileDb::load(&file).map(Some);
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let starts: Vec<PathBuf> = if paths.is_empty() {
        vec![cwd.clone()]
    } else {
        paths
            .iter()
            .filter(|p| p.as_os_str() != "-")
            .map(|p| normal(&cwd.join(p)))
            .collect()
    };
    for start in starts {
        let dir = if start.is_dir() {
            start
        } else {
            match start.parent() {
                Some(d) => d.to_path_buf(),
                None => continue,
            }
        };
        for candidate in folders_to_search(&dir) {
            for file in [
                candidate.join(FILE_NAME),
                candidate.join("build").join(FILE_NAME),
            ] {
                if file.is_file() {
                    return CompileDb::load(&file).map(Some);
                }
            }
        }
    }
    Ok(None)
}

/// `dir` and its ancestors up to the first that is a project's root; only
/// `dir` when none above is.
fn folders_to_search(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in dir.ancestors() {
        out.push(a.to_path_buf());
        if crate::includes::ROOT_MARKERS
            .iter()
            .any(|m| a.join(m).exists())
        {
            return out;
        }
    }
    vec![dir.to_path_buf()]
}

impl CompileDb {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<CompileDb, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
        if meta.len() > MAX_COMPILE_DB_BYTES {
            return Err(format!(
                "{shown}: the compile database is larger than the budget \
                 `MAX_COMPILE_DB_BYTES` ({MAX_COMPILE_DB_BYTES} bytes)"
            ));
        }
        let text = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
        let raw: Vec<RawEntry> = serde_json::from_slice(&text)
            .map_err(|e| format!("{shown}: not a compile database: {e}"))?;
        let mut entries = Vec::with_capacity(raw.len());
        for (i, r) in raw.into_iter().enumerate() {
            let words = match (r.arguments, r.command) {
                (Some(a), _) => a,
                (None, Some(c)) => split_command(&c)
                    .map_err(|e| format!("{shown}: entry {i} (`{}`): its command {e}", r.file))?,
                (None, None) => {
                    return Err(format!(
                        "{shown}: entry {i} (`{}`) has neither `arguments` nor `command`",
                        r.file
                    ))
                }
            };
            let dir = normal(
                &std::env::current_dir()
                    .unwrap_or_default()
                    .join(&r.directory),
            );
            let file = normal(&dir.join(&r.file));
            // As the run names its inputs: links resolved where it exists.
            let file = std::fs::canonicalize(&file).unwrap_or(file);
            entries.push((file, flags(&words, &dir)));
        }
        let mut by_file = HashMap::new();
        for (i, (f, _)) in entries.iter().enumerate() {
            by_file.entry(f.clone()).or_insert(i);
        }
        Ok(CompileDb {
            entries,
            by_file,
            includers: std::sync::OnceLock::new(),
        })
    }

    /// The settings of `file` (absolute): its entry's; for a file not
    /// listed, an entry's whose source includes it, else the first entry's
    /// in its folder; `None` when there is none of those.
    pub fn flags_for(&self, file: &Path) -> Option<&BuildFlags> {
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| normal(file));
        let i = self.by_file.get(&file).copied().or_else(|| {
            let includers = self.includers.get_or_init(|| self.scan_includes());
            includers.get(&file).copied().or_else(|| {
                let dir = file.parent()?;
                self.entries
                    .iter()
                    .position(|(f, _)| f.parent() == Some(dir))
            })
        })?;
        self.entries.get(i).map(|(_, f)| f)
    }

    /// Each header an entry's source includes directly (found next to the
    /// source or in its include folders) -> the first such entry.
    fn scan_includes(&self) -> HashMap<PathBuf, usize> {
        let mut out: HashMap<PathBuf, usize> = HashMap::new();
        for (i, (file, flags)) in self.entries.iter().enumerate().take(MAX_INCLUDER_SCAN) {
            let Ok(bytes) = crate::includes::read_source(file) else {
                continue;
            };
            let dir = file.parent().unwrap_or(Path::new(""));
            let text = String::from_utf8_lossy(&bytes);
            for (name, _) in crate::includes::includes(&text) {
                let found = std::iter::once(dir.join(&name))
                    .chain(flags.include_dirs.iter().map(|d| d.join(&name)))
                    .find(|c| c.is_file());
                if let Some(h) = found {
                    let h = std::fs::canonicalize(&h).unwrap_or(h);
                    out.entry(h).or_insert(i);
                }
            }
        }
        out
    }
}

/// A command line split into words as a POSIX shell does: blanks
/// separate, `'…'` keeps everything, `"…"` keeps all but `\"`, `\\`, `\$`
/// and `` \` ``, a backslash outside quotes keeps the next character.
/// `Err` for an unclosed quote.
fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => word.push(x),
                        None => return Err("has an unclosed `'`".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => word.push(x),
                            Some(x) => {
                                word.push('\\');
                                word.push(x);
                            }
                            None => return Err("has an unclosed `\"`".into()),
                        },
                        Some(x) => word.push(x),
                        None => return Err("has an unclosed `\"`".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    word.push(x);
                }
            }
            x => {
                in_word = true;
                word.push(x);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// What an option with a value sets.
#[derive(Clone, Copy)]
enum Kind {
    Include,
    Define,
    Undefine,
    Arch,
    Gencode,
}

/// Options that take a value, as `-I DIR`, `-IDIR` or `--include-path=DIR`.
const VALUED: [(&str, Kind); 14] = [
    ("-I", Kind::Include),
    ("-isystem", Kind::Include),
    ("-iquote", Kind::Include),
    ("-idirafter", Kind::Include),
    ("--include-path", Kind::Include),
    ("--system-include", Kind::Include),
    ("-D", Kind::Define),
    ("--define-macro", Kind::Define),
    ("-U", Kind::Undefine),
    ("--undefine-macro", Kind::Undefine),
    ("-arch", Kind::Arch),
    ("--gpu-architecture", Kind::Arch),
    ("-gencode", Kind::Gencode),
    ("--generate-code", Kind::Gencode),
];

/// Options whose next word belongs to them and means nothing here (host
/// compiler options, the output).
const SKIPPED: [&str; 8] = [
    "-Xcompiler",
    "--compiler-options",
    "-Xptxas",
    "-Xlinker",
    "-o",
    "--output-file",
    "-ccbin",
    "--compiler-bindir",
];

/// The option at `words[i]` with its value, if it is one that matters
/// here, and how many words it takes.
fn option(words: &[String], i: usize) -> (Option<(Kind, &str)>, usize) {
    let w = words[i].as_str();
    if SKIPPED.contains(&w) {
        return (None, 2);
    }
    for (name, kind) in VALUED {
        let Some(rest) = w.strip_prefix(name) else {
            continue;
        };
        if rest.is_empty() {
            return match words.get(i + 1) {
                Some(v) => (Some((kind, v.as_str())), 2),
                None => (None, 1),
            };
        }
        // `--include-path=DIR`, `-arch=sm_80`; one-letter options also
        // glue (`-Idir`, `-DX=1`), long ones only with `=`.
        if let Some(v) = rest.strip_prefix('=') {
            return (Some((kind, v)), 1);
        }
        if name.len() == 2 {
            return (Some((kind, rest)), 1);
        }
    }
    (None, 1)
}

/// The settings `words` (a compile command, compiler first) give, with
/// relative folders taken from `dir`.
fn flags(words: &[String], dir: &Path) -> BuildFlags {
    let mut out = BuildFlags::default();
    let mut i = 1;
    while i < words.len() {
        let (flag, used) = option(words, i);
        i += used;
        let Some((kind, value)) = flag else {
            continue;
        };
        match kind {
            Kind::Include => {
                let d = value;
                let d = normal(&dir.join(d));
                if !out.include_dirs.contains(&d) {
                    out.include_dirs.push(d);
                }
            }
            Kind::Define => {
                let (name, value) = value.split_once('=').unwrap_or((value, "1"));
                if is_macro_name(name) {
                    out.defines.retain(|(n, _)| n != name);
                    out.defines.push((name.to_string(), value.to_string()));
                }
            }
            Kind::Undefine => out.defines.retain(|(n, _)| n != value),
            Kind::Arch => {
                for a in value.split(',') {
                    push_arch(&mut out.archs, a);
                }
            }
            Kind::Gencode => gencode(&mut out.archs, value),
        }
    }
    out
}

/// `arch=compute_80,code=sm_80` (or `code=[sm_80,compute_80]`): the real
/// architectures of `code`, else the virtual one of `arch`.
fn gencode(archs: &mut Vec<String>, spec: &str) {
    let spec = spec.replace(['[', ']', '"', '\''], "");
    let mut virtual_arch = None;
    let mut real = Vec::new();
    let mut key = "";
    for part in spec.split(',') {
        let value = match part.split_once('=') {
            Some((k, v)) => {
                key = k.trim();
                v
            }
            None => part,
        };
        match key {
            "arch" => virtual_arch = Some(value.trim().to_string()),
            "code" if value.trim().starts_with("sm_") => real.push(value.trim().to_string()),
            _ => {}
        }
    }
    if real.is_empty() {
        real.extend(virtual_arch);
    }
    for a in real {
        push_arch(archs, &a);
    }
}

/// Adds `name` when warplint knows it (`native`, `all`, … are skipped).
fn push_arch(archs: &mut Vec<String>, name: &str) {
    let name = name.trim();
    let Ok(a) = Arch::parse(name) else {
        return;
    };
    let canonical = a.to_string();
    if !archs.contains(&canonical) {
        archs.push(canonical);
    }
}

fn is_macro_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn commands_split_as_a_shell_does() {
        assert_eq!(
            words(r#"nvcc -DNAME="a b" 'x y' a\ b "q\"q" -I/inc"#),
            ["nvcc", "-DNAME=a b", "x y", "a b", "q\"q", "-I/inc"]
        );
        assert!(split_command("nvcc 'open").is_err());
        assert!(split_command("nvcc \"open").is_err());
    }

    #[test]
    fn every_spelling_of_the_options_is_read() {
        let w = words(
            "nvcc -I inc -Iinc2 -isystem sys --include-path=p -D A -DB=2 -DC -UC -D 'F(x)=x' \
             -Xcompiler -DHOST -arch=sm_80 -gencode arch=compute_90,code=sm_90 \
             --gpu-architecture compute_75 -arch=native -o k.o -c k.cu",
        );
        let f = flags(&w, Path::new("/p"));
        let dirs: Vec<&str> = f.include_dirs.iter().map(|d| d.to_str().unwrap()).collect();
        assert_eq!(dirs, ["/p/inc", "/p/inc2", "/p/sys", "/p/p"]);
        assert_eq!(
            f.defines,
            [("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(f.archs, ["sm_80", "sm_90", "sm_75"]);
    }

    #[test]
    fn gencode_prefers_the_real_architectures() {
        let mut a = Vec::new();
        gencode(&mut a, "arch=compute_80,code=[sm_80,compute_80]");
        gencode(&mut a, "arch=compute_70,code=compute_70");
        assert_eq!(a, ["sm_80", "sm_70"]);
    }
}
