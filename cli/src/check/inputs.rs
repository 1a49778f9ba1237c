//! What `check` runs on: the files found under the paths given (excludes
//! applied; each read later by the worker that checks it) and stdin, and
//! the configuration nearest to each of them.

use std::io::Read;
use std::path::{Path, PathBuf};

use warplint_analyzer::MemoryModel;

use super::CheckArgs;
use crate::compile_db::{BuildFlags, CompileDb};
use crate::settings::{self, ConfigArgs, Settings};
use crate::{discover, fail};

/// Rule codes selected for a run.
pub(super) type Selected = std::collections::BTreeSet<&'static str>;

/// One file (or stdin) to check.
pub struct Input {
    pub(super) path: String,
    pub(super) abs: String,
    /// The text of stdin; a file is read by the worker that checks it, so
    /// a run holds only the files (and headers) being checked at the time.
    pub(super) stdin_bytes: Option<Vec<u8>>,
    pub(super) stdin: bool,
    /// A path given or found that cannot be checked, and why.
    pub(super) error: Option<String>,
    /// A file of the project, not of the run, checked only for the kernels
    /// of this run file (canonical path) that it includes: the run file as
    /// that file's build sees it (macros, launches).
    pub(super) context_of: Option<PathBuf>,
}

/// A configuration file (or none) and a file's settings from the compile
/// database (or none), with what they resolve to.
pub(super) struct Resolved {
    pub(super) config_path: Option<PathBuf>,
    build: Option<BuildFlags>,
    pub(super) settings: Settings,
    pub(super) selected: Selected,
    pub(super) model: Box<dyn MemoryModel>,
}

/// The rules `settings` selects, with the command line's flags on top.
pub(super) fn selection(settings: &Settings, args: &CheckArgs) -> Result<Selected, String> {
    settings.selection(
        &settings::split_list(&args.select),
        &settings::split_list(&args.extend_select),
        &settings::split_list(&args.ignore),
    )
}

/// Files (discovered, excluded; read later, one by one) and stdin.
pub fn gather(args: &CheckArgs, settings: &Settings) -> Result<Vec<Input>, std::process::ExitCode> {
    let mut inputs = Vec::new();
    let stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin {
        let mut buf = Vec::new();
        if let Some(text) = &args.stdin_text {
            buf.clone_from(text);
        } else if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            return Err(fail(&format!("stdin: {e}")));
        }
        let name = args.stdin_filename.clone().unwrap_or_else(|| "-".into());
        inputs.push(Input {
            abs: absolute(Path::new(&name)),
            path: name,
            stdin_bytes: Some(buf),
            stdin: true,
            error: None,
            context_of: None,
        });
    }
    let paths: Vec<PathBuf> = args
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    if paths.is_empty() && stdin {
        return Ok(inputs);
    }
    let paths = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    };
    let mut globs = settings.config.exclude.clone();
    globs.extend(settings::split_list(&args.exclude));
    let set = discover::excludes(&globs).map_err(|e| fail(&e))?;
    // A path that cannot be walked or read is an error of its own (said
    // at the end, exit code 2); the others are still checked.
    let (files, errors) = discover::filter(&paths, &set, args.force_exclude);
    inputs.extend(errors.into_iter().map(|e| Input {
        path: String::new(),
        abs: String::new(),
        stdin_bytes: None,
        stdin: false,
        error: Some(e),
        context_of: None,
    }));
    for f in files {
        inputs.push(Input {
            path: f.display().to_string(),
            abs: absolute(&f),
            stdin_bytes: None,
            stdin: false,
            error: None,
            context_of: None,
        });
    }
    Ok(inputs)
}

/// The configuration nearest to the first path given (a file's folder, or
/// a folder), where neither `--config` nor `--isolated` decides it.
pub(super) fn nearest_config(args: &CheckArgs) -> Option<PathBuf> {
    if args.config.config.is_some() || args.config.isolated {
        return None;
    }
    let first = args.paths.iter().find(|p| p.as_os_str() != "-")?;
    let abs = PathBuf::from(absolute(first));
    let dir = if abs.is_dir() {
        abs
    } else {
        abs.parent()?.to_path_buf()
    };
    crate::config::discover(&dir)
}

/// The paths a run was given, as the warning about an empty selection names
/// them (`.` when none).
pub(super) fn shown_paths(args: &CheckArgs) -> String {
    if args.paths.is_empty() {
        return ".".into();
    }
    args.paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The configuration of each input (an index into `table`, each
/// configuration resolved once and added there). The nearest configuration to each file
/// wins, unless `--config`/`--isolated` name one for all; the compile
/// database's settings for the file lie under it.
pub(super) fn configurations(
    args: &CheckArgs,
    settings: &Settings,
    inputs: &[Input],
    db: Option<&CompileDb>,
    table: &mut Vec<Resolved>,
) -> Result<Vec<usize>, String> {
    let mut which: Vec<usize> = Vec::new();
    for input in inputs {
        // stdin named with `--stdin-filename` is configured as that file
        // (an editor's buffer as the file it will be saved to).
        let nameless = input.stdin && input.path == "-";
        let nearest = if args.config.config.is_some()
            || args.config.isolated
            || nameless
            || input.error.is_some()
        {
            settings.config_path.clone()
        } else {
            Path::new(&input.abs)
                .parent()
                .and_then(crate::config::discover)
        };
        let build = db
            .filter(|_| input.error.is_none())
            .and_then(|db| db.flags_for(Path::new(&input.abs)))
            .cloned();
        let idx = match table
            .iter()
            .position(|t| t.config_path == nearest && t.build == build)
        {
            Some(i) => i,
            None => {
                table.push(resolve(args, settings, nearest, build)?);
                table.len() - 1
            }
        };
        which.push(idx);
    }
    Ok(which)
}

/// The files of the project that the run's files are analysed through
/// (see [`crate::project::LaunchIndex::contexts`]), as inputs checked only
/// for those files' kernels.
pub(super) fn contexts(inputs: &[Input], index: &crate::project::LaunchIndex) -> Vec<Input> {
    let files: Vec<(usize, &Path)> = inputs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.error.is_none() && !i.stdin)
        .map(|(n, i)| (n, Path::new(&i.path)))
        .collect();
    let paths: Vec<&Path> = files.iter().map(|(_, p)| *p).collect();
    index
        .contexts(&paths)
        .into_iter()
        .map(|(i, u)| Input {
            path: u.display().to_string(),
            abs: absolute(&u),
            stdin_bytes: None,
            stdin: false,
            error: None,
            context_of: Some(crate::includes::canonical(files[i].1)),
        })
        .collect()
}

/// The settings, selection and model of the configuration at `nearest`
/// over the compile database's `build`.
fn resolve(
    args: &CheckArgs,
    settings: &Settings,
    nearest: Option<PathBuf>,
    build: Option<BuildFlags>,
) -> Result<Resolved, String> {
    let cfg = ConfigArgs {
        config: nearest.clone(),
        isolated: nearest.is_none(),
    };
    let model = settings::ModelFlags {
        build: build.clone(),
        ..args.model.clone()
    };
    let mut s = if nearest == settings.config_path {
        settings::resolve_with(&args.config, &args.arch, model)
    } else {
        settings::resolve_with(&cfg, &args.arch, model)
    }?;
    if let Some(cache) = &args.parse_cache {
        s.options.frontend.parse_cache = Some(cache.clone());
    }
    let selected = selection(&s, args)?;
    let model = s.model(s.arch)?;
    Ok(Resolved {
        config_path: nearest,
        build,
        settings: s,
        selected,
        model,
    })
}

/// `p` resolved where it exists, else joined to the working folder.
pub(super) fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .map(|a| a.display().to_string())
        .unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p).display().to_string())
                .unwrap_or_else(|_| p.display().to_string())
        })
}
