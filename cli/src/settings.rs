//! Resolving what a run uses: configuration file, architecture, analysis
//! options, thresholds and rule selection. CLI flags beat the file.

use std::collections::BTreeSet;
use std::path::PathBuf;

use warplint_analyzer::{Arch, FrontendOptions, Options};
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

pub fn resolve(args: &ConfigArgs, archs: &[String]) -> Result<Settings, String> {
    let (config_path, config) = load_config(args)?;
    let names: Vec<String> = if !archs.is_empty() {
        split_list(archs)
    } else if !config.analysis.archs.is_empty() {
        config.analysis.archs.clone()
    } else {
        vec![config
            .analysis
            .arch
            .clone()
            .unwrap_or_else(|| "sm_90".into())]
    };
    let mut parsed = Vec::new();
    for n in &names {
        let a = Arch::parse(n)?;
        a.model()?;
        if !parsed.contains(&a) {
            parsed.push(a);
        }
    }
    let arch = parsed[0];
    let options = Options {
        frontend: FrontendOptions {
            kernels: config.kernel_overrides(),
            defines: config
                .analysis
                .defines
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            only_kernel: None,
        },
        engine: config.engine_options(),
    };
    let thresholds = config.thresholds();
    Ok(Settings {
        config_path,
        config,
        arch,
        archs: parsed,
        options,
        thresholds,
    })
}

impl Settings {
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
