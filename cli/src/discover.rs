//! Which files to analyse: the paths given, folders recursed into for
//! `.cu` and `.cuh` files, in a stable (sorted) order.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use warplint_analyzer::budget::MAX_FOLDER_DEPTH;

/// Exclusion globs; a folder or file matching one is skipped.
pub fn excludes(globs: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob =
            Glob::new(g.trim_start_matches("./")).map_err(|e| format!("exclude `{g}`: {e}"))?;
        b.add(glob);
    }
    b.build().map_err(|e| e.to_string())
}

fn excluded(set: &GlobSet, p: &Path) -> bool {
    let s = p.to_string_lossy();
    let s = s.trim_start_matches("./");
    set.is_match(s) || p.file_name().is_some_and(|n| set.is_match(n))
}

/// `files` without the excluded ones; explicitly named files are kept
/// unless `force` (what pre-commit needs).
pub fn filter(paths: &[PathBuf], set: &GlobSet, force: bool) -> (Vec<PathBuf>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.is_dir() {
            if !(force && excluded(set, p)) {
                walk_excluding(p, set, &mut out, &mut errors, 0);
            }
        } else if p.is_file() {
            if !(force && excluded(set, p)) {
                out.push(p.clone());
            }
        } else {
            errors.push(not_checkable(p));
        }
    }
    out.sort();
    out.dedup();
    (out, errors)
}

fn walk_excluding(
    dir: &Path,
    set: &GlobSet,
    out: &mut Vec<PathBuf>,
    errors: &mut Vec<String>,
    depth: u32,
) {
    let mut found = Vec::new();
    walk(dir, &mut found, errors, depth);
    out.extend(
        found
            .into_iter()
            .filter(|f| !f.ancestors().any(|a| a != dir && excluded(set, a))),
    );
}

/// Why a path named on the command line is neither a file nor a folder.
fn not_checkable(p: &Path) -> String {
    match std::fs::metadata(p) {
        Ok(_) => format!("{}: not a regular file or folder", p.display()),
        Err(e) => format!("{}: {e}", p.display()),
    }
}

pub const EXTENSIONS: [&str; 2] = ["cu", "cuh"];

/// Rust sources: searched in folders only within a crate that depends on
/// Rust-CUDA's `cuda_std` (kernels) or `cust` (the host code that launches
/// them) or on `cubecl` ([`gpu_crate`]); a file named on the command line
/// is always taken.
pub const RUST_EXTENSION: &str = "rs";

/// The language a file is analysed as, by its extension.
pub fn language(path: &Path) -> warplint_analyzer::frontend::Language {
    match path.extension().and_then(|x| x.to_str()) {
        Some(RUST_EXTENSION) => warplint_analyzer::frontend::Language::Rust,
        _ => warplint_analyzer::frontend::Language::Cuda,
    }
}

/// Whether the nearest `Cargo.toml` above `file` names `cuda_std`,
/// `cust` or `cubecl` (a dependency, read as text); each manifest read once per
/// walk (`seen`).
fn gpu_crate(
    file: &Path,
    seen: &std::sync::Mutex<std::collections::HashMap<PathBuf, bool>>,
) -> bool {
    let Some(dir) = file
        .ancestors()
        .skip(1)
        .find(|a| a.join("Cargo.toml").is_file())
    else {
        return false;
    };
    if let Some(known) = seen.lock().ok().and_then(|m| m.get(dir).copied()) {
        return known;
    }
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let gpu = text.lines().any(|l| {
        let key = l.split(['=', '.', ' ']).next().unwrap_or("").trim();
        matches!(key, "cuda_std" | "cuda-std" | "cust") || key.starts_with("cubecl")
    });
    if let Ok(mut m) = seen.lock() {
        m.insert(dir.to_path_buf(), gpu);
    }
    gpu
}

/// Expands `paths` into files. Hidden folders and `target/` are skipped
/// while recursing; a file named explicitly is always taken.
pub fn files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out, &mut errors, 0);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            errors.push(not_checkable(p));
        }
    }
    out.sort();
    out.dedup();
    (out, errors)
}

/// A walk of `dir` as discovery does it: `.gitignore`, `.ignore` and
/// `.git/info/exclude` honoured, hidden entries and `target/` skipped,
/// links not followed, `MAX_FOLDER_DEPTH` levels at most.
pub fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(dir);
    b.hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .require_git(false)
        .follow_links(false)
        .max_depth(Some(MAX_FOLDER_DEPTH))
        .filter_entry(|e| e.file_name() != "target");
    b
}

/// Every `.cu`/`.cuh` under `dir`, honouring `.gitignore`, `.ignore` and
/// `.git/info/exclude` (the `ignore` crate's parallel walker); hidden
/// entries and `target/` are skipped, and a folder too deep to search is
/// an error.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<String>, _depth: u32) {
    let found = std::sync::Mutex::new(Vec::new());
    let errs = std::sync::Mutex::new(Vec::new());
    let crates = std::sync::Mutex::new(std::collections::HashMap::new());
    walker(dir).build_parallel().run(|| {
        Box::new(|entry| {
            match entry {
                Ok(e) => {
                    let p = e.path();
                    if e.depth() == MAX_FOLDER_DEPTH && e.file_type().is_some_and(|t| t.is_dir()) {
                        if let Ok(mut v) = errs.lock() {
                            v.push(format!(
                                "{}: not searched (a walk descends at most {MAX_FOLDER_DEPTH} folder levels below {})",
                                p.display(),
                                dir.display()
                            ));
                        }
                    }
                    let ext = p.extension().and_then(|x| x.to_str());
                    let ok = e.file_type().is_some_and(|t| t.is_file())
                        && (ext.is_some_and(|x| EXTENSIONS.contains(&x))
                            || (ext == Some(RUST_EXTENSION) && gpu_crate(p, &crates)));
                    if ok {
                        if let Ok(mut v) = found.lock() {
                            v.push(p.to_path_buf());
                        }
                    }
                }
                Err(err) => {
                    if let Ok(mut v) = errs.lock() {
                        v.push(err.to_string());
                    }
                }
            }
            ignore::WalkState::Continue
        })
    });
    out.extend(found.into_inner().unwrap_or_default());
    errors.extend(errs.into_inner().unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_too_deep_to_search_is_an_error() {
        let root = std::env::temp_dir().join(format!("warplint-deep-{}", std::process::id()));
        let mut deep = root.clone();
        for i in 0..MAX_FOLDER_DEPTH + 1 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(root.join("top.cu"), "").unwrap();
        std::fs::write(deep.join("deep.cu"), "").unwrap();
        let (found, errors) = files(std::slice::from_ref(&root));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(found, vec![root.join("top.cu")]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("not searched"), "{errors:?}");
    }
}
