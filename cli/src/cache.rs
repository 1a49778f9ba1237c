//! The results cache, as ruff's: `.warplint_cache/` at the project root
//! (the folder of the run's configuration file, else the current folder;
//! `cache-dir` in the configuration, `--cache-dir`, `WARPLINT_CACHE_DIR`;
//! `--no-cache` turns it off; `warplint clean` removes it).
//!
//! What is kept: each checked unit's outcome (`check`'s work on one file:
//! its analysis, diagnostics and tallies) and each file's launch sites (the
//! project index's work). An entry is a file named after what it is about
//! (the unit's path, or the file read for its sites), so an edit replaces
//! the entry rather than adding one; it holds the key of everything the
//! result was computed from and is used only when the key is the one the
//! run computes:
//! - warplint's version and the executable itself (its size and time), so
//!   a rebuilt warplint never trusts an older one's results;
//! - the settings (configuration, architectures, selection, model), as
//!   [`settings_fingerprint`] writes them;
//! - the file's path and content, and the path and content of every header
//!   it read (and the headers it did not find);
//! - for a unit, the launch sites of other files that reach its kernels
//!   (each with its file and line), which is how an edit to a launching
//!   file re-analyses the kernels it launches and nothing else.
//!
//! Entries are written atomically (a temporary file renamed); one that
//! cannot be read, does not parse, or belongs to other data is ignored and
//! recomputed, never trusted. Writing is best effort: a cache that cannot
//! be written changes nothing but speed. Runs that write files or need what
//! a cache does not hold (`--fix`, `--diff`, `--add-noqa`, stdin, hovers,
//! `--nvcc`/`--sass`) neither read nor write it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::settings::Settings;

/// The cache folder's name at the project root.
pub const DEFAULT_DIR: &str = ".warplint_cache";

/// Bumped when an entry's layout changes (old entries then never match).
const FORMAT: u32 = 1;

/// An open cache: the version folder entries live in, and the salt every
/// key starts with.
pub struct Cache {
    root: PathBuf,
    dir: PathBuf,
    salt: String,
}

/// One entry as written: the key it was computed under and the value.
#[derive(Serialize, Deserialize)]
struct Entry<T> {
    key: String,
    value: T,
}

/// A key under construction: a 128-bit hash of everything fed to it, in
/// two independent 64-bit streams over 8-byte words (multiply and rotate;
/// headers run to megabytes per file, so a byte-at-a-time hash would be
/// the warm run's largest cost). Lengths are fed before variable parts, so
/// concatenations cannot collide by shifting bytes. Not a defence against
/// crafted collisions: a user who crafts one only fools their own cache.
pub struct Key {
    a: u64,
    b: u64,
}

const P1: u64 = 0x9E37_79B9_7F4A_7C15;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;

impl Key {
    pub fn new(kind: &str) -> Key {
        let mut k = Key {
            a: 0xcbf2_9ce4_8422_2325,
            b: 0x6c62_272e_07bb_0142,
        };
        k.text(kind);
        k
    }

    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(P1).rotate_left(29);
        self.b = (self.b ^ w.rotate_left(32) ^ 0x5555_5555_5555_5555)
            .wrapping_mul(P2)
            .rotate_left(31);
    }

    /// Feeds `bytes` (with their length).
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Key {
        self.word(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.word(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(b));
        }
        self
    }

    pub fn text(&mut self, s: &str) -> &mut Key {
        self.bytes(s.as_bytes())
    }

    pub fn finish(&self) -> String {
        // One last round each, so the final word is mixed like the others.
        let a = (self.a ^ (self.a >> 33)).wrapping_mul(P2);
        let b = (self.b ^ (self.b >> 29)).wrapping_mul(P1);
        format!("{a:016x}{b:016x}")
    }
}

impl Cache {
    /// The cache of a run whose configuration is `settings`: `dir` when
    /// given (`--cache-dir`, else `WARPLINT_CACHE_DIR`), else the
    /// configuration's `cache-dir` (relative to the configuration file),
    /// else `.warplint_cache` beside the configuration file, or in the
    /// current folder when there is none.
    pub fn open(dir: Option<&Path>, settings: &Settings) -> Cache {
        let root = location(dir, settings);
        let dir = root.join(env!("CARGO_PKG_VERSION"));
        Cache {
            root,
            dir,
            salt: salt(),
        }
    }

    /// The key of an entry about `what` (a kind and a name), fed by the
    /// caller, salted with this warplint.
    pub fn key(&self, kind: &str) -> Key {
        let mut k = Key::new(kind);
        k.text(&self.salt);
        k
    }

    /// The entry about `name` of `kind` if it was computed under `key`.
    pub fn get<T: DeserializeOwned>(&self, kind: &str, name: &str, key: &str) -> Option<T> {
        let bytes = std::fs::read(self.path(kind, name)).ok()?;
        let e: Entry<T> = serde_json::from_slice(&bytes).ok()?;
        (e.key == key).then_some(e.value)
    }

    /// Writes the entry about `name` of `kind`, computed under `key`; best
    /// effort.
    pub fn put<T: Serialize>(&self, kind: &str, name: &str, key: &str, value: &T) {
        let Ok(bytes) = serde_json::to_vec(&Entry {
            key: key.to_string(),
            value,
        }) else {
            return;
        };
        let path = self.path(kind, name);
        if let Some(parent) = path.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                return;
            }
        }
        self.mark_root();
        write_atomically(&path, &bytes);
    }

    fn path(&self, kind: &str, name: &str) -> PathBuf {
        let mut k = Key::new("name");
        k.text(name);
        let h = k.finish();
        self.dir.join(kind).join(&h[..2]).join(&h[2..])
    }

    /// A new cache folder says it is one: a `.gitignore` of `*` and a
    /// `CACHEDIR.TAG`, as ruff's.
    fn mark_root(&self) {
        let ignore = self.root.join(".gitignore");
        if ignore.exists() {
            return;
        }
        let _ = std::fs::write(&ignore, "# Automatically created by warplint.\n*\n");
        let _ = std::fs::write(
            self.root.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n\
             # This file is a cache directory tag created by warplint.\n",
        );
    }
}

/// Where the cache lives (see [`Cache::open`]).
pub fn location(dir: Option<&Path>, settings: &Settings) -> PathBuf {
    if let Some(d) = dir {
        return d.to_path_buf();
    }
    let base = settings
        .config_path
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    match &settings.config.cache_dir {
        Some(d) => base.join(d),
        None => base.join(DEFAULT_DIR),
    }
}

/// This warplint: its version, the entry format and the executable's size
/// and modification time (a rebuilt binary of the same version is another
/// warplint).
fn salt() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{t}", m.len())
        })
        .unwrap_or_default();
    format!("{}:{FORMAT}:{exe}", env!("CARGO_PKG_VERSION"))
}

/// The settings a result depends on, written out in a fixed order (the
/// configuration's maps are ordered): everything [`Settings`] holds but
/// the run's parse cache and where instructions come from (a run with
/// `--nvcc`/`--sass` uses no cache).
pub fn settings_fingerprint(s: &Settings, selected: &impl std::fmt::Debug) -> String {
    let mut options = s.options.clone();
    options.frontend.parse_cache = None;
    options.sass = None;
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{:?}",
        s.config,
        s.arch,
        s.archs,
        options,
        s.thresholds,
        s.model_options,
        s.include_dirs,
        s.project_includes,
        selected,
    )
}

/// `bytes` to `path` through a temporary file in its folder, renamed
/// (another process reads the old entry or the new one, never half of
/// one); a failure leaves no temporary file.
fn write_atomically(path: &Path, bytes: &[u8]) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("{}-{n}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// `warplint clean`: removes the cache of the configuration found from the
/// current folder (or `dir`); says what it removed.
pub fn clean(dir: Option<&Path>, settings: &Settings) -> Result<String, String> {
    let root = location(dir, settings);
    if !root.exists() {
        return Ok(format!("No cache at {}.", root.display()));
    }
    // Only a folder warplint made: it holds the tag, or nothing but
    // version folders.
    let ours = root.join("CACHEDIR.TAG").exists();
    if !ours {
        return Err(format!(
            "{} is not a warplint cache (no CACHEDIR.TAG); not removed",
            root.display()
        ));
    }
    std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    Ok(format!("Removed the cache at {}.", root.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_their_parts() {
        let k = |parts: &[&str]| {
            let mut k = Key::new("t");
            for p in parts {
                k.text(p);
            }
            k.finish()
        };
        assert_ne!(k(&["ab", "c"]), k(&["a", "bc"]));
        assert_ne!(k(&["a"]), k(&["a", ""]));
        assert_eq!(k(&["a", "b"]), k(&["a", "b"]));
        assert_eq!(k(&["x"]).len(), 32);
    }
}
