//! Reading the headers a file includes (the analyzer does no IO):
//! `#include "name"` is looked up next to the including file, then in the
//! `-I`/config `include` folders; `#include <name>` in those folders, then
//! next to the including file (a project header named with angle brackets,
//! as builds that pass `-I.` allow: `#include <common.cu>`). System headers
//! are not read: they are on no searched path. Each header is read once per
//! file, which also stops include cycles.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use warplint_analyzer::budget;
use warplint_analyzer::Header;

/// `(name, quoted)` of every `#include` in `text`.
fn includes(text: &str) -> Vec<(String, bool)> {
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

/// Every header reachable from `file` through `#include`, breadth first.
pub fn headers_for(file: &Path, bytes: &[u8], include_dirs: &[PathBuf]) -> Vec<Header> {
    let mut out: Vec<Header> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut queue: VecDeque<(PathBuf, String)> = VecDeque::new();
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    queue.push_back((dir, String::from_utf8_lossy(bytes).into_owned()));
    while let Some((dir, text)) = queue.pop_front() {
        for (name, quoted) in includes(&text) {
            if out.len() >= budget::MAX_HEADERS {
                return out;
            }
            let mut candidates = Vec::new();
            if quoted {
                candidates.push(dir.join(&name));
            }
            candidates.extend(include_dirs.iter().map(|d| d.join(&name)));
            if !quoted {
                candidates.push(dir.join(&name));
            }
            let Some(found) = candidates.into_iter().find(|c| c.is_file()) else {
                continue;
            };
            let key = canonical(&found);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let Ok(text) = read_source(&found) else {
                continue;
            };
            if text.len() > budget::MAX_FILE_BYTES {
                continue;
            }
            let next_dir = found.parent().map(Path::to_path_buf).unwrap_or_default();
            queue.push_back((next_dir, String::from_utf8_lossy(&text).into_owned()));
            out.push(Header {
                name,
                path: found.display().to_string(),
                text,
            });
        }
    }
    out
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
