//! A kernel analysed once per run: the files of a run that include one
//! header lower its kernels again (each in its own macro state), and where
//! two lowerings are the same kernel, under the same launches, model and
//! options, their reports are the same. [`KernelMemo`] keeps each kernel's
//! reports by a hash of everything the engine reads
//! (`analyze_access` reads the kernel, its indices, the model and the
//! options, nothing of the rest of the program): the kernel's IR as its
//! `Debug` text (spans with their file numbers included, so a header
//! numbered otherwise is analysed again; each expression as its 64-bit
//! structural digest, `ir::with_expr_digests`), the model's and the
//! options'.
//! A report carries its kernel's index in its program, set again on reuse.
//! Only a header's kernels are keyed: one of the file analysed (file 0)
//! is met once per run and configuration.
//!
//! The caller owns the memo (one per run and configuration, like the parse
//! cache); a run without one analyses every kernel. The fix search's
//! re-analyses (`only_array`, `stop_above_ways`) neither read nor write it.
//! Bounded by `MAX_MEMO_REPORTS`: past it, nothing more is kept (speed
//! only).

use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::{Arc, Mutex};

use super::{AccessReport, EngineOptions};
use crate::budget;
use crate::hardware::MemoryModel;
use crate::ir::Kernel;

#[derive(Default)]
pub struct KernelMemo {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    by_key: HashMap<(u64, u64), Arc<Vec<AccessReport>>>,
    /// Reports held.
    reports: usize,
}

impl std::fmt::Debug for KernelMemo {
    // Constant: options that hold a memo print the same however full it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelMemo")
    }
}

/// A `fmt::Write` that hashes what is written into two independently
/// seeded 64-bit hashes (128 bits in all). `Debug` writes many short
/// pieces: they are gathered into `HASH_CHUNK`-byte chunks, each hashed
/// whole (per-piece SipHash was 12% of a ggml run), and a chunk's
/// boundaries depend only on the text, so equal texts give equal keys.
struct HashWriter {
    a: foldhash::quality::FoldHasher<'static>,
    b: foldhash::quality::FoldHasher<'static>,
    buf: Vec<u8>,
}

const HASH_CHUNK: usize = 16 * 1024;

impl HashWriter {
    fn new() -> HashWriter {
        use std::hash::BuildHasher;
        HashWriter {
            a: foldhash::quality::FixedState::with_seed(0x243f_6a88_85a3_08d3).build_hasher(),
            b: foldhash::quality::FixedState::with_seed(0x9e37_79b9_7f4a_7c15).build_hasher(),
            buf: Vec::with_capacity(HASH_CHUNK),
        }
    }

    fn flush(&mut self) {
        self.a.write(&self.buf);
        self.b.write(&self.buf);
        self.buf.clear();
    }

    fn finish(mut self) -> (u64, u64) {
        self.flush();
        (self.a.finish(), self.b.finish())
    }
}

impl std::fmt::Write for HashWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let mut rest = s.as_bytes();
        while !rest.is_empty() {
            let n = rest.len().min(HASH_CHUNK - self.buf.len());
            self.buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.buf.len() == HASH_CHUNK {
                self.flush();
            }
        }
        Ok(())
    }
}

/// The key of `k` analysed under `model` and `opts`.
pub(super) fn key(k: &Kernel, model: &dyn MemoryModel, opts: &EngineOptions) -> (u64, u64) {
    use std::fmt::Write as _;
    let mut w = HashWriter::new();
    crate::ir::with_expr_digests(|| {
        let _ = write!(w, "{}|{model:?}|{opts:?}|{k:?}", model.name());
    });
    w.finish()
}

impl KernelMemo {
    pub fn new() -> KernelMemo {
        KernelMemo::default()
    }

    /// Kernels kept.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.by_key.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn get(&self, key: (u64, u64)) -> Option<Arc<Vec<AccessReport>>> {
        self.inner.lock().ok()?.by_key.get(&key).cloned()
    }

    pub(super) fn put(&self, key: (u64, u64), reports: Vec<AccessReport>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.reports + reports.len() > budget::MAX_MEMO_REPORTS {
            return;
        }
        inner.reports += reports.len();
        inner.by_key.insert(key, Arc::new(reports));
    }
}
