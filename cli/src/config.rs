//! `warplint.toml`: discovery and parsing.
//!
//! Looked up like ruff does: `--config FILE` if given, else the first
//! `warplint.toml` or `.warplint.toml` in the current directory or one of
//! its ancestors. Unknown keys are errors, so typos do not pass silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use warplint_analyzer::budget::MAX_THREADS_PER_BLOCK;
use warplint_analyzer::frontend::BlockDefaults;
use warplint_analyzer::{EngineOptions, KernelOverride};

pub const FILE_NAMES: [&str; 2] = ["warplint.toml", ".warplint.toml"];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    #[serde(default)]
    pub analysis: Analysis,
    /// Per-kernel overrides: `[kernel.NAME]`.
    #[serde(default)]
    pub kernel: BTreeMap<String, KernelSection>,
    #[serde(default)]
    pub lint: LintSection,
    /// Globs of files and folders to skip (relative to the current directory).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Where the results cache lives, relative to this file
    /// (default `.warplint_cache` beside it).
    pub cache_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LintSection {
    /// Rules to run (codes, prefixes, names or `ALL`); default all.
    pub select: Option<Vec<String>>,
    #[serde(default)]
    pub extend_select: Vec<String>,
    #[serde(default)]
    pub ignore: Vec<String>,
    #[serde(default)]
    pub thresholds: ThresholdSection,
    /// Glob -> rules ignored in matching files.
    #[serde(default)]
    pub per_file_ignores: BTreeMap<String, Vec<String>>,
    /// The severity of a finding that rests on an assumption.
    pub assumed_severity: Option<AssumedSeverityKey>,
}

/// `assumed-severity`: `lower` (one level below a proven finding's, the
/// default), `same`, or a fixed `error`, `warning` or `info`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssumedSeverityKey {
    Lower,
    Same,
    Error,
    Warning,
    Info,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ThresholdSection {
    pub shared_ways_warning: Option<f64>,
    pub shared_ways_error: Option<f64>,
    pub global_efficiency_warning: Option<f64>,
    pub global_efficiency_error: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Analysis {
    /// One architecture or a list: `arch = "sm_90"`, `arch = ["sm_35", "sm_90"]`.
    pub arch: Option<OneOrMany>,
    /// Several architectures: each is checked, differences are reported.
    #[serde(default)]
    pub archs: Vec<String>,
    /// Shared-memory bank width on 3.x: 4 (default) or 8 bytes.
    pub bank_mode: Option<u32>,
    /// Global loads on 2.x/3.x: "l1" (128-byte lines) or "l2" (32-byte).
    pub global_caching: Option<String>,
    /// Folders `#include` searches (relative to this file).
    #[serde(default)]
    pub include: Vec<String>,
    /// Where a quoted `#include` that neither the including file's folder
    /// nor `include` holds is looked for: "project" (the project's files,
    /// by the end of their path; the default, unless the compile database
    /// gives the file's settings) or "paths" (nowhere else).
    pub include_search: Option<String>,
    pub default_block: Option<[u64; 3]>,
    pub default_block_2d: Option<[u64; 3]>,
    pub default_grid: Option<[u64; 3]>,
    pub default_param: Option<i64>,
    /// Object-like macros, as with `-D NAME=VALUE`.
    #[serde(default)]
    pub defines: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelSection {
    pub block: Option<[u64; 3]>,
    pub grid: Option<[u64; 3]>,
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// Template arguments (integers) when no launch instantiates the kernel.
    #[serde(default)]
    pub template: Vec<i64>,
}

/// Finds the configuration file for the current directory.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        for name in FILE_NAMES {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        dir = d.parent();
    }
    None
}

pub fn load(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cfg: Config = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    cfg.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(cfg)
}

fn check_dims(what: &str, d: &[u64; 3]) -> Result<(), String> {
    if d.contains(&0) {
        return Err(format!(
            "{what} = {d:?}: every dimension must be at least 1"
        ));
    }
    Ok(())
}

/// A block of more threads than CUDA allows (`MAX_THREADS_PER_BLOCK`)
/// cannot be launched, so a configuration that gives one is an error.
fn check_block_threads(what: &str, b: &[u64; 3]) -> Result<(), String> {
    if b.iter().fold(1u64, |a, x| a.saturating_mul(*x)) > MAX_THREADS_PER_BLOCK {
        return Err(format!(
            "{what} = {b:?}: more than {MAX_THREADS_PER_BLOCK} threads"
        ));
    }
    Ok(())
}

impl Config {
    fn validate(&self) -> Result<(), String> {
        for (what, d) in [
            ("default-block", &self.analysis.default_block),
            ("default-block-2d", &self.analysis.default_block_2d),
            ("default-grid", &self.analysis.default_grid),
        ] {
            if let Some(d) = d {
                check_dims(what, d)?;
            }
        }
        for (name, k) in &self.kernel {
            if let Some(b) = &k.block {
                let what = format!("kernel.{name}.block");
                check_dims(&what, b)?;
                check_block_threads(&what, b)?;
            }
            if let Some(g) = &k.grid {
                check_dims(&format!("kernel.{name}.grid"), g)?;
            }
        }
        for (what, b) in [
            ("default-block", &self.analysis.default_block),
            ("default-block-2d", &self.analysis.default_block_2d),
        ] {
            if let Some(b) = b {
                check_block_threads(what, b)?;
            }
        }
        Ok(())
    }

    /// The blocks kernels are analysed with when nothing says (the front
    /// end's launch resolver decides with them).
    pub fn block_defaults(&self) -> BlockDefaults {
        let mut d = BlockDefaults::default();
        if let Some(b) = self.analysis.default_block {
            d.one_d = b;
        }
        if let Some(b) = self.analysis.default_block_2d {
            d.two_d = b;
        }
        d
    }

    pub fn engine_options(&self) -> EngineOptions {
        let mut o = EngineOptions::default();
        if let Some(g) = self.analysis.default_grid {
            o.default_grid = g;
        }
        o.default_param = self.analysis.default_param;
        // A block the user configured is used, and assumed; else a kernel
        // no launch gives a block is analysed over the common shapes.
        o.vary_default_block =
            self.analysis.default_block.is_none() && self.analysis.default_block_2d.is_none();
        // One per resolved configuration, as the parse cache: a kernel that
        // several files lower alike is analysed once.
        o.kernel_memo = Some(std::sync::Arc::default());
        o
    }

    pub fn thresholds(&self) -> warplint_lints::Thresholds {
        let mut t = warplint_lints::Thresholds::default();
        let s = &self.lint.thresholds;
        if let Some(v) = s.shared_ways_warning {
            t.shared_ways_warning = v;
        }
        if let Some(v) = s.shared_ways_error {
            t.shared_ways_error = v;
        }
        if let Some(v) = s.global_efficiency_warning {
            t.global_efficiency_warning = v;
        }
        if let Some(v) = s.global_efficiency_error {
            t.global_efficiency_error = v;
        }
        if let Some(k) = self.lint.assumed_severity {
            use warplint_lints::{AssumedSeverity as A, Severity as S};
            t.assumed_severity = match k {
                AssumedSeverityKey::Lower => A::Lower,
                AssumedSeverityKey::Same => A::Same,
                AssumedSeverityKey::Error => A::Fixed(S::Error),
                AssumedSeverityKey::Warning => A::Fixed(S::Warning),
                AssumedSeverityKey::Info => A::Fixed(S::Info),
            };
        }
        t
    }

    pub fn kernel_overrides(&self) -> BTreeMap<String, KernelOverride> {
        self.kernel
            .iter()
            .map(|(name, k)| {
                (
                    name.clone(),
                    KernelOverride {
                        block: k.block,
                        grid: k.grid,
                        params: k.params.clone(),
                        template: k.template.clone(),
                    },
                )
            })
            .collect()
    }
}
