//! `warplint debug parse-only`: the floor of the pipeline's cost. The same
//! walker and thread pool as `check`; each file parsed with tree-sitter and
//! nothing else. With `--follow-includes`, also every header the files
//! reach, found by `check`'s include resolution (the configuration's and
//! `-I` folders, the project's files), each distinct file parsed once: what
//! any tool that honours includes must at least do.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::settings::{ConfigArgs, ModelFlags};
use crate::{discover, fail, includes, worker_pool, ParseOnlyArgs};

/// Counts over the files parsed.
#[derive(Default)]
struct Totals {
    files: u64,
    bytes: u64,
    nodes: u64,
    with_errors: u64,
}

impl Totals {
    fn add(&mut self, s: &warplint_analyzer::ParseStats) {
        self.files += 1;
        self.bytes += s.bytes;
        self.nodes += s.nodes;
        self.with_errors += u64::from(s.has_error);
    }
}

/// One line of counts on stdout; exit 2 if a path or file could not be read.
pub fn parse_only_cmd(a: ParseOnlyArgs) -> ExitCode {
    let (files, errors) = discover::files(&a.paths);
    for e in &errors {
        eprintln!("warplint: error: {e}");
    }
    let pool = match worker_pool(a.jobs) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    use rayon::prelude::*;
    let read: Vec<Result<Vec<u8>, String>> = pool.install(|| {
        files
            .par_iter()
            .map(|f| includes::read_source(f).map_err(|e| format!("{}: {e}", f.display())))
            .collect()
    });
    let mut unreadable = 0u64;
    let mut sources: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (f, r) in files.iter().zip(read) {
        match r {
            Ok(b) => sources.push((f.clone(), b)),
            Err(e) => {
                eprintln!("warplint: error: {e}");
                unreadable += 1;
            }
        }
    }
    let headers = if a.follow_includes {
        match distinct_headers(&a, &sources, &pool) {
            Ok(h) => h,
            Err(e) => return fail(&e),
        }
    } else {
        Vec::new()
    };
    let named = sources.len();
    let texts: Vec<&[u8]> = sources
        .iter()
        .map(|(_, b)| b.as_slice())
        .chain(headers.iter().map(Vec::as_slice))
        .collect();
    let stats: Vec<warplint_analyzer::ParseStats> = pool.install(|| {
        texts
            .par_iter()
            .map(|b| warplint_analyzer::parse_only(b))
            .collect()
    });
    let mut t = Totals::default();
    stats.iter().for_each(|s| t.add(s));
    let followed = if a.follow_includes {
        format!(" ({named} named, {} distinct headers)", headers.len())
    } else {
        String::new()
    };
    println!(
        "parsed {} files{followed}, {} bytes, {} syntax nodes; {} with syntax errors",
        t.files, t.bytes, t.nodes, t.with_errors
    );
    if errors.is_empty() && unreadable == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// The text of every header the files reach, each distinct file (by
/// canonical path) once; not the named files.
fn distinct_headers(
    a: &ParseOnlyArgs,
    sources: &[(PathBuf, Vec<u8>)],
    pool: &rayon::ThreadPool,
) -> Result<Vec<Vec<u8>>, String> {
    let flags = ModelFlags {
        include_dirs: a.include.clone(),
        include_search: a.include_search.clone(),
        ..ModelFlags::default()
    };
    let config = ConfigArgs {
        config: None,
        isolated: a.isolated,
    };
    let settings = crate::settings::resolve_with(&config, &[], flags)?;
    let project = includes::ProjectHeaders::new(&a.paths);
    use rayon::prelude::*;
    let named: HashSet<PathBuf> = sources
        .iter()
        .map(|(f, _)| includes::canonical(f))
        .collect();
    // Each header is kept the first time a file reaches it; what a file
    // reaches is dropped as soon as it is sifted, so the run holds the
    // distinct headers, not every file's copy of them.
    let seen: std::sync::Mutex<HashSet<PathBuf>> = std::sync::Mutex::new(HashSet::new());
    let firsts: Vec<Vec<Vec<u8>>> = pool.install(|| {
        sources
            .par_iter()
            .map(|(f, b)| {
                let r = includes::headers_for(
                    f,
                    b,
                    &settings.include_dirs,
                    &project,
                    settings.project_includes,
                );
                let Ok(mut seen) = seen.lock() else {
                    return Vec::new();
                };
                r.headers
                    .into_iter()
                    .zip(r.canonical)
                    .filter(|(_, key)| !named.contains(key) && seen.insert(key.clone()))
                    .map(|(h, _)| h.text)
                    .collect()
            })
            .collect()
    });
    let out: Vec<Vec<u8>> = firsts.into_iter().flatten().collect();
    Ok(out)
}
