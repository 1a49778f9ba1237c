//! Work shared by the files of one run: a header that many files include
//! is parsed once per distinct text while its tree is kept (its text after `#if` resolution,
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

/// The trees kept, by a hash of their text. Which to keep is decided by
/// how often each text was asked for (least-frequently used out first):
/// a run's files reach a set of headers far larger than the budget over
/// and over (each CUTLASS file reaches 4 MiB of them), so the headers that
/// nearly every file includes are the ones worth keeping, and anything
/// that evicts by recency or starts again keeps only what the next file
/// does not need.
struct Inner {
    trees: HashMap<u64, Kept>,
    /// How many times each text was asked for (kept or not), by hash.
    asked: HashMap<u64, u32>,
    /// Requests so far, the clock of `Kept::last`.
    clock: u64,
    /// Header text held, in bytes (bounded by `budget`).
    bytes: usize,
    /// `MAX_PARSE_CACHE_BYTES` (smaller in tests).
    budget: usize,
}

impl Default for Inner {
    fn default() -> Inner {
        Inner {
            trees: HashMap::new(),
            asked: HashMap::new(),
            clock: 0,
            bytes: 0,
            budget: budget::MAX_PARSE_CACHE_BYTES,
        }
    }
}

struct Kept {
    text: Vec<u8>,
    tree: Arc<Tree>,
    /// The request that last used it, to break ties between equally
    /// frequent texts in favour of the recent one.
    last: u64,
}

impl Inner {
    /// Counts a request for `text` (hash `h`) and returns the kept tree.
    fn ask(&mut self, h: u64, text: &[u8]) -> Option<Arc<Tree>> {
        self.clock += 1;
        if self.asked.len() < budget::MAX_PARSE_CACHE_COUNTED || self.asked.contains_key(&h) {
            *self.asked.entry(h).or_insert(0) += 1;
        }
        let clock = self.clock;
        let kept = self.trees.get_mut(&h).filter(|k| k.text == text)?;
        kept.last = clock;
        Some(Arc::clone(&kept.tree))
    }

    fn uses(&self, h: u64) -> u32 {
        self.asked.get(&h).copied().unwrap_or(0)
    }

    /// Keeps `tree` if room can be made for it by evicting only trees
    /// asked for less often (or as often, and less recently).
    fn admit(&mut self, h: u64, text: &[u8], tree: &Arc<Tree>) {
        let budget = self.budget;
        if text.len() > budget || self.trees.contains_key(&h) {
            return;
        }
        let uses = self.uses(h);
        while self.bytes + text.len() > budget {
            let victim = self
                .trees
                .iter()
                .map(|(k, kept)| ((self.uses(*k), kept.last), *k))
                .min();
            match victim {
                Some(((u, _), k)) if u <= uses => {
                    if let Some(v) = self.trees.remove(&k) {
                        self.bytes -= v.text.len();
                    }
                }
                _ => return,
            }
        }
        self.bytes += text.len();
        self.trees.insert(
            h,
            Kept {
                text: text.to_vec(),
                tree: Arc::clone(tree),
                last: self.clock,
            },
        );
    }
}

fn hash(text: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // Fixed keys: the same text hashes alike on every thread.
    let mut h =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    h.write(text);
    h.finish()
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

    /// The tree of `text`, parsed by `parse` unless it is kept. A tree
    /// is kept while the cache has room, or in place of trees whose texts
    /// were asked for less often (see `Inner`).
    pub(crate) fn get_or_parse(
        &self,
        text: &[u8],
        parse: impl FnOnce() -> Option<Tree>,
    ) -> Option<Arc<Tree>> {
        let h = hash(text);
        if let Ok(mut inner) = self.inner.lock() {
            if let Some(t) = inner.ask(h, text) {
                return Some(t);
            }
        }
        let tree = Arc::new(parse()?);
        if let Ok(mut inner) = self.inner.lock() {
            inner.admit(h, text, &tree);
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

    /// Whether the tree of `text` is kept.
    #[cfg(test)]
    fn holds(&self, text: &[u8]) -> bool {
        let h = hash(text);
        self.inner
            .lock()
            .is_ok_and(|i| i.trees.get(&h).is_some_and(|k| k.text == text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(budget: usize) -> ParseCache {
        let c = ParseCache::new();
        c.inner.lock().expect("fresh").budget = budget;
        c
    }

    fn ask(c: &ParseCache, text: &str) -> bool {
        let mut parsed = false;
        let tree = c.get_or_parse(text.as_bytes(), || {
            parsed = true;
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_cuda::LANGUAGE.into()).ok()?;
            p.parse(text, None)
        });
        assert!(tree.is_some());
        parsed
    }

    fn text(i: usize) -> String {
        format!("int header_{i:04} = {i:08};\n")
    }

    /// The run's pattern: a few headers every file includes, and more
    /// headers than the budget holds that each file includes once.
    #[test]
    fn headers_asked_for_often_stay_while_others_pass_through() {
        let len = text(0).len();
        let c = cache(4 * len);
        for file in 0..20 {
            ask(&c, &text(0));
            ask(&c, &text(1));
            for i in 0..5 {
                ask(&c, &text(100 + file * 5 + i));
            }
        }
        assert!(c.holds(text(0).as_bytes()) && c.holds(text(1).as_bytes()));
        // The next file parses neither again.
        assert!(!ask(&c, &text(0)) && !ask(&c, &text(1)));
        assert!(c.inner.lock().expect("lock").bytes <= 4 * len);
    }

    /// A text asked for once takes no place from one asked for more often,
    /// and one asked for more often than a kept one replaces it.
    #[test]
    fn a_text_is_kept_in_place_of_one_asked_for_less() {
        let len = text(0).len();
        let c = cache(2 * len);
        ask(&c, &text(0));
        ask(&c, &text(0));
        ask(&c, &text(1));
        ask(&c, &text(2));
        assert!(c.holds(text(0).as_bytes()), "asked twice, kept");
        assert!(c.holds(text(2).as_bytes()), "as often as 1 and more recent");
        assert!(!c.holds(text(1).as_bytes()));
        for _ in 0..3 {
            assert!(ask(&c, &text(3)) || c.holds(text(3).as_bytes()));
        }
        assert!(c.holds(text(3).as_bytes()) && c.holds(text(0).as_bytes()));
        assert!(!c.holds(text(2).as_bytes()));
    }
}
