//! Resolving what a run uses: configuration file, architecture, analysis
//! options, thresholds and rule selection. CLI flags beat the file.

use std::collections::BTreeSet;
use std::path::PathBuf;

use warplint_analyzer::hardware::ModelOptions;
use warplint_analyzer::{Arch, FrontendOptions, MemoryModel, Options};
use warplint_lints::Thresholds;

use crate::config::{self, Config};

/// Where the configuration comes from.
pub struct ConfigArgs {
    pub config: Option<PathBuf>,
    pub isolated: bool,
}

pub struct Settings {
    pub config_path: Option<PathBuf>,
    pub config: Config,
    /// The first architecture (the one `report` and fixes use).
    pub arch: Arch,
    /// Every architecture to check (at least one).
    pub archs: Vec<Arch>,
    pub options: Options,
    pub thresholds: Thresholds,
    /// Bank mode (3.x) and global caching (2.x/3.x).
    pub model_options: ModelOptions,
    /// Where `#include` looks besides the including file's folder.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// Quoted includes found nowhere else are looked up in the project's
    /// files (`include-search = "project"`, the default where the compile
    /// database gives the file no settings).
    pub project_includes: bool,
    /// Where the instructions nvcc emits come from (`--nvcc`, `--sass`).
    pub sass: Option<crate::sass::SassSource>,
}

/// Model settings and macros given on the command line (beat the file's).
#[derive(Clone, Debug, Default)]
pub struct ModelFlags {
    pub bank_mode: Option<u32>,
    pub global_caching: Option<bool>,
    /// `-D NAME[=VALUE]`.
    pub defines: Vec<String>,
    /// `-I DIR`.
    pub include_dirs: Vec<PathBuf>,
    /// `--include-search paths|project`.
    pub include_search: Option<String>,
    /// `--compile-commands PATH`.
    pub compile_commands: Option<PathBuf>,
    /// The file's settings from the compile database, under the
    /// configuration's and the command line's.
    pub build: Option<crate::compile_db::BuildFlags>,
    /// `--nvcc` or `--sass`, resolved once for the run.
    pub sass: Option<crate::sass::SassSource>,
}

/// `NAME=VALUE` or `NAME` (which means `NAME=1`).
fn parse_define(d: &str) -> Result<(String, String), String> {
    let (name, value) = match d.split_once('=') {
        Some((n, v)) => (n.trim(), v.trim()),
        None => (d.trim(), "1"),
    };
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !ok {
        return Err(format!("-D {d}: `{name}` is not a macro name"));
    }
    Ok((name.to_string(), value.to_string()))
}

pub fn load_config(args: &ConfigArgs) -> Result<(Option<PathBuf>, Config), String> {
    if args.isolated {
        return Ok((None, Config::default()));
    }
    let path = match &args.config {
        Some(p) => Some(p.clone()),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| config::discover(&d)),
    };
    match path {
        Some(p) => Ok((Some(p.clone()), config::load(&p)?)),
        None => Ok((None, Config::default())),
    }
}

pub fn resolve_with(
    args: &ConfigArgs,
    archs: &[String],
    flags: ModelFlags,
) -> Result<Settings, String> {
    let (config_path, config) = load_config(args)?;
    // A bad value in the configuration names the file it is in.
    let in_config = |e: String| match &config_path {
        Some(p) => format!("{}: {e}", p.display()),
        None => e,
    };
    let model_options = ModelOptions {
        bank_bytes: flags.bank_mode.or(config.analysis.bank_mode),
        l1_cached: flags
            .global_caching
            .or(match config.analysis.global_caching.as_deref() {
                None => None,
                Some("l1") => Some(true),
                Some("l2") => Some(false),
                Some(other) => {
                    return Err(in_config(format!(
                        "global-caching = \"{other}\": expected \"l1\" or \"l2\""
                    )))
                }
            }),
    };
    let build = flags.build.clone().unwrap_or_default();
    let from_config =
        archs.is_empty() && (config.analysis.arch.is_some() || !config.analysis.archs.is_empty());
    let names: Vec<String> = if !archs.is_empty() {
        split_list(archs)
    } else if let Some(a) = &config.analysis.arch {
        a.to_vec()
    } else if !config.analysis.archs.is_empty() {
        config.analysis.archs.clone()
    } else if !build.archs.is_empty() {
        build.archs.clone()
    } else {
        vec!["sm_90".into()]
    };
    if names.is_empty() {
        return Err("no architecture given (arch = [] in the configuration)".into());
    }
    let mut parsed = Vec::new();
    for n in &names {
        let named = |e: String| if from_config { in_config(e) } else { e };
        let a = Arch::parse(n).map_err(named)?;
        a.model_with(model_options).map_err(named)?;
        if !parsed.contains(&a) {
            parsed.push(a);
        }
    }
    let arch = parsed[0];
    let options = Options {
        frontend: FrontendOptions {
            language: Default::default(),
            kernels: config.kernel_overrides(),
            block_defaults: config.block_defaults(),
            // nvcc's predefined macros for `arch` (the analyzer's), then
            // the compile database's, the configuration's, then `-D`: a
            // later one wins.
            arch: Some(arch),
            defines: {
                let mut d = build.defines.clone();
                d.extend(
                    config
                        .analysis
                        .defines
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone())),
                );
                for x in &flags.defines {
                    d.push(parse_define(x)?);
                }
                d
            },
            only_kernel: None,
            only_file: None,
            headers: Vec::new(),
            // Set per file from the run's launch index.
            project_launches: Vec::new(),
            host_callees: Vec::new(),
            host_calls: Vec::new(),
            extern_values: Default::default(),
            // One per resolved configuration: the files of a run share
            // their headers' parse trees.
            parse_cache: Some(std::sync::Arc::new(
                warplint_analyzer::frontend::cache::ParseCache::new(),
            )),
            reparse: None,
        },
        engine: config.engine_options(),
        // Set per file where a toolkit compiles it (`--nvcc`) or a listing
        // is given (`--sass`).
        sass: None,
    };
    let thresholds = config.thresholds();
    let include_dirs = {
        let base = config_path
            .as_ref()
            .and_then(|p| p.parent())
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        // Searched in this order: `-I`, the configuration's, the compile
        // database's.
        let mut dirs = flags.include_dirs.clone();
        dirs.extend(config.analysis.include.iter().map(|d| base.join(d)));
        dirs.extend(build.include_dirs.iter().cloned());
        dirs
    };
    let search = flags
        .include_search
        .as_deref()
        .or(config.analysis.include_search.as_deref());
    // By default the project's files are searched, unless the compile
    // database gives the file's include folders.
    let project_includes = match search {
        Some("project") => true,
        None => flags.build.is_none(),
        Some("paths") => false,
        Some(other) => {
            return Err(in_config(format!(
                "`include-search = \"{other}\"`: expected \"project\" or \"paths\""
            )))
        }
    };
    Ok(Settings {
        config_path,
        config,
        arch,
        archs: parsed,
        options,
        thresholds,
        model_options,
        include_dirs,
        project_includes,
        sass: flags.sass,
    })
}

/// What the command line gave that these settings cannot use: a model
/// option for other architectures than the run's, an include folder that is
/// not there. Said as warnings, the run goes on.
pub fn ignored_flags(s: &Settings, flags: &ModelFlags) -> Vec<String> {
    let names = || {
        s.archs
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    if let Some(b) = flags.bank_mode {
        if !s.archs.iter().any(|a| a.major == 3) {
            out.push(format!(
                "--bank-mode {b} is ignored: only compute capability 3.x has a bank mode (4 or 8 bytes), and {} has 4-byte banks",
                names()
            ));
        }
    }
    if flags.global_caching.is_some() && !s.archs.iter().any(|a| matches!(a.major, 2 | 3)) {
        out.push(format!(
            "--global-caching is ignored: only compute capability 2.x and 3.x choose between L1 and L2 for global loads, and {} uses 32-byte sectors",
            names()
        ));
    }
    for d in &flags.include_dirs {
        if !d.is_dir() {
            out.push(format!("-I {}: no such folder", d.display()));
        }
    }
    out
}

impl Settings {
    /// The cost model of `arch` with this run's bank mode and caching.
    pub fn model(&self, arch: Arch) -> Result<Box<dyn MemoryModel>, String> {
        arch.model_with(self.model_options)
    }

    /// The selected rule codes: the file's `[lint]`, then the CLI's flags.
    pub fn selection(
        &self,
        select: &[String],
        extend_select: &[String],
        ignore: &[String],
    ) -> Result<BTreeSet<&'static str>, String> {
        let lint = &self.config.lint;
        let base: Vec<String> = if !select.is_empty() {
            select.to_vec()
        } else {
            lint.select.clone().unwrap_or_default()
        };
        let mut extend = lint.extend_select.clone();
        extend.extend(extend_select.iter().cloned());
        let mut ign = lint.ignore.clone();
        ign.extend(ignore.iter().cloned());
        warplint_lints::resolve_selection(&base, &extend, &ign)
    }
}

/// Splits comma-separated flag values: `--select SM001,GM`.
pub fn split_list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}
