//! Work shared by the files of one run: a header that many files include
//! is parsed once per distinct text (its text after `#if` resolution,
//! which is the same wherever the same macros are in force), and its
//! conditional compilation is done once per state it is entered in (the
//! macros defined and the headers already entered).
//! The caller makes one cache per run and hands it to every file's
//! analysis through [`super::Options::parse_cache`]; without one, every
//! header is parsed where it is included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tree_sitter::Tree;

use crate::budget;

#[derive(Default)]
pub struct ParseCache {
    inner: Mutex<Inner>,
    /// Headers as conditional compilation left them, by the state they
    /// were entered in (see `preprocess::Conditionals::include`).
    prepped: Mutex<Prepped>,
}

#[derive(Default)]
struct Prepped {
    entries: HashMap<super::preprocess::EntryKey, Arc<super::preprocess::Entry>>,
    /// Header text the entries hold, in bytes (bounded by
    /// `MAX_PREPROCESSED_CACHE_BYTES`).
    bytes: usize,
}

#[derive(Default)]
struct Inner {
    trees: HashMap<Vec<u8>, Arc<Tree>>,
    /// Header text held, in bytes (bounded by `MAX_PARSE_CACHE_BYTES`).
    bytes: usize,
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.inner.lock().map(|i| i.trees.len()).unwrap_or(0);
        write!(f, "ParseCache({n} trees)")
    }
}

impl ParseCache {
    pub fn new() -> ParseCache {
        ParseCache::default()
    }

    /// The tree of `text`, parsed by `parse` the first time it is seen.
    /// When the cache would pass its budget of text it is emptied first.
    pub(crate) fn get_or_parse(
        &self,
        text: &[u8],
        parse: impl FnOnce() -> Option<Tree>,
    ) -> Option<Arc<Tree>> {
        if let Ok(inner) = self.inner.lock() {
            if let Some(t) = inner.trees.get(text) {
                return Some(Arc::clone(t));
            }
        }
        let tree = Arc::new(parse()?);
        if let Ok(mut inner) = self.inner.lock() {
            if inner.bytes + text.len() > budget::MAX_PARSE_CACHE_BYTES {
                // Start a new generation: files are visited folder by
                // folder, so the headers worth keeping are the recent ones.
                inner.trees.clear();
                inner.bytes = 0;
            }
            if text.len() <= budget::MAX_PARSE_CACHE_BYTES {
                inner.bytes += text.len();
                inner.trees.insert(text.to_vec(), Arc::clone(&tree));
            }
        }
        Some(tree)
    }

    /// A header's preprocessing recorded from the same state, if kept.
    pub(crate) fn preprocessed(
        &self,
        key: &super::preprocess::EntryKey,
    ) -> Option<Arc<super::preprocess::Entry>> {
        self.prepped.lock().ok()?.entries.get(key).cloned()
    }

    /// Keeps a header's preprocessing; past the budget the set starts again.
    pub(crate) fn keep_preprocessed(
        &self,
        key: super::preprocess::EntryKey,
        entry: super::preprocess::Entry,
    ) {
        let size = entry.bytes();
        if size > budget::MAX_PREPROCESSED_CACHE_BYTES {
            return;
        }
        if let Ok(mut p) = self.prepped.lock() {
            if p.bytes + size > budget::MAX_PREPROCESSED_CACHE_BYTES {
                p.entries.clear();
                p.bytes = 0;
            }
            p.bytes += size;
            p.entries.insert(key, Arc::new(entry));
        }
    }

    /// Headers' preprocessing kept (one per header and state entered in).
    pub fn preprocessed_len(&self) -> usize {
        self.prepped.lock().map(|p| p.entries.len()).unwrap_or(0)
    }

    /// Distinct header texts parsed and kept.
    pub fn len(&self) -> usize {
        self.inner.lock().map(|i| i.trees.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
