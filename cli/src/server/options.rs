//! The server's settings: `initializationOptions` (or the `warplint`
//! section of `workspace/didChangeConfiguration`), each the command line
//! option of the same name. What they leave unset comes from the
//! `warplint.toml` nearest to each document, as for `check`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use warplint_analyzer::frontend::cache::ParseCache;

use crate::check::CheckArgs;
use crate::settings::{ConfigArgs, ModelFlags};
use crate::Format;

/// A setting given as one string or a list of them.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum List {
    One(String),
    Many(Vec<String>),
}

impl Default for List {
    fn default() -> Self {
        List::Many(Vec::new())
    }
}

impl List {
    fn items(&self) -> Vec<String> {
        match self {
            List::One(s) => vec![s.clone()],
            List::Many(v) => v.clone(),
        }
    }
}

/// The settings a client may give, in the protocol's camelCase.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerOptions {
    arch: List,
    select: List,
    extend_select: List,
    ignore: List,
    /// A configuration file for every document (`--config`).
    configuration: Option<PathBuf>,
    /// No configuration file (`--isolated`).
    isolated: bool,
    define: List,
    include: List,
    include_search: Option<String>,
    /// "Fix all" also applies unsafe fixes (padding).
    unsafe_fixes: bool,
}

/// Keys [`ServerOptions`] reads.
const KEYS: &[&str] = &[
    "arch",
    "select",
    "extendSelect",
    "ignore",
    "configuration",
    "isolated",
    "define",
    "include",
    "includeSearch",
    "unsafeFixes",
];

impl ServerOptions {
    /// The options in `value` (a `settings` object, or one under `settings`
    /// or `warplint`), and the keys it has that are not settings. A value
    /// that is not such an object gives the defaults and says so.
    pub fn from_value(value: Option<&Value>) -> (ServerOptions, Vec<String>) {
        let Some(v) = value.map(settings_object) else {
            return (ServerOptions::default(), Vec::new());
        };
        let unknown = v
            .as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| !KEYS.contains(&k.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        match ServerOptions::deserialize(v) {
            Ok(o) => (o, unknown),
            Err(e) => (ServerOptions::default(), vec![format!("(invalid: {e})")]),
        }
    }

    /// Whether "fix all" applies a fix of this kind.
    pub fn fix_all_applies(&self, a: warplint_lints::Applicability) -> bool {
        match a {
            warplint_lints::Applicability::Safe => true,
            warplint_lints::Applicability::Unsafe => self.unsafe_fixes,
            warplint_lints::Applicability::DisplayOnly => false,
        }
    }

    /// `check`'s arguments for `text`, the buffer of the file `path` (`None`:
    /// a buffer not yet saved anywhere):
    /// diagnostics (and hovers), or with `fix` its fixed text.
    pub fn check_args(
        &self,
        path: Option<&str>,
        text: &str,
        fix: bool,
        cache: &Arc<ParseCache>,
    ) -> CheckArgs {
        CheckArgs {
            paths: vec![PathBuf::from("-")],
            select: self.select.items(),
            extend_select: self.extend_select.items(),
            ignore: self.ignore.items(),
            format: Format::Json,
            exit_zero: true,
            color: crate::render::ColorChoice::Never,
            arch: self.arch.items(),
            statistics: false,
            show_settings: false,
            quiet: true,
            stdin_filename: path.map(str::to_string),
            show_unknown: false,
            only_proven: false,
            fix,
            unsafe_fixes: fix && self.unsafe_fixes,
            diff: false,
            add_noqa: false,
            exclude: Vec::new(),
            force_exclude: false,
            jobs: None,
            model: ModelFlags {
                defines: self.define.items(),
                include_dirs: self
                    .include
                    .items()
                    .into_iter()
                    .map(PathBuf::from)
                    .collect(),
                include_search: self.include_search.clone(),
                ..ModelFlags::default()
            },
            config: ConfigArgs {
                config: self.configuration.clone(),
                isolated: self.isolated,
            },
            stdin_text: Some(text.as_bytes().to_vec()),
            keep_hovers: !fix,
            parse_cache: Some(cache.clone()),
            // The server keeps its own caches in memory.
            no_cache: true,
            cache_dir: None,
        }
    }
}

/// The settings object in `v`: itself, or the one under `settings` and
/// then `warplint`.
pub fn settings_object(mut v: &Value) -> &Value {
    for wrapper in ["settings", "warplint"] {
        if let Some(inner) = v.get(wrapper).filter(|i| i.is_object()) {
            v = inner;
        }
    }
    v
}

/// `base`'s settings with `change`'s keys on top: a configuration change
/// keeps what `initializationOptions` set and it does not mention.
pub fn layered(base: Option<&Value>, change: Option<&Value>) -> Value {
    let mut out = base
        .map(settings_object)
        .filter(|v| v.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    if let (Some(o), Some(Value::Object(c))) = (out.as_object_mut(), change.map(settings_object)) {
        for (k, v) in c {
            o.insert(k.clone(), v.clone());
        }
    }
    out
}

/// What the editor is told of settings it gave that do nothing.
pub fn unknown_message(unknown: &[String]) -> String {
    format!(
        "warplint: ignoring unknown settings: {} (known: {})",
        unknown.join(", "),
        KEYS.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_change_keeps_the_initialization_options() {
        let init = serde_json::json!({"settings": {"unsafeFixes": true, "select": ["ALL"]}});
        let change = serde_json::json!({"warplint": {"select": ["GM001"]}});
        let (o, unknown) = ServerOptions::from_value(Some(&layered(Some(&init), Some(&change))));
        assert!(o.unsafe_fixes && unknown.is_empty());
        assert_eq!(o.select.items(), ["GM001"]);
    }

    #[test]
    fn settings_nest_and_unknown_keys_are_named() {
        let v =
            serde_json::json!({"settings": {"arch": "sm_80", "select": ["SM001"], "colour": 1}});
        let (o, unknown) = ServerOptions::from_value(Some(&v));
        assert_eq!(o.arch.items(), ["sm_80"]);
        assert_eq!(o.select.items(), ["SM001"]);
        assert_eq!(unknown, ["colour"]);
        let v = serde_json::json!({"warplint": {"isolated": "yes"}});
        let (o, unknown) = ServerOptions::from_value(Some(&v));
        assert!(!o.isolated);
        assert!(unknown[0].starts_with("(invalid:"), "{unknown:?}");
    }
}
