//! The results cache: a warm run prints what the cold one did, an edit
//! re-analyses exactly the units it can affect, damaged or foreign entries
//! are never trusted, and `--no-cache`, `cache-dir` and `warplint clean`
//! do what they say.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{stderr, stdout};

/// A kernel in a header, launched from `launch.cu` with a block that makes
/// its shared access conflict; `other.cu` has a kernel of its own and
/// includes nothing.
const HEADER: &str = "#pragma once\n__global__ void col(float *out) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = 1.0f;\n    __syncthreads();\n    out[threadIdx.x] = t[0][threadIdx.x];\n}\n";
const LAUNCH: &str =
    "#include \"kern.cuh\"\nvoid go(float *o) { col<<<1, dim3(32, 1, 1)>>>(o); }\n";
const OTHER: &str = "__global__ void strided(float *p) {\n    p[threadIdx.x * 33] = 0.0f;\n}\nvoid run(float *p) { strided<<<1, 32>>>(p); }\n";

fn project(tag: &str) -> PathBuf {
    let d = common::temp_project(
        tag,
        &[
            ("kern.cuh", HEADER),
            ("launch.cu", LAUNCH),
            ("other.cu", OTHER),
        ],
    );
    // A project root, so the header is found as the build finds it.
    std::fs::create_dir_all(d.join(".git")).unwrap();
    d
}

/// `warplint ARGS` run in `dir`.
fn warplint_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warplint"))
        .args(args)
        .current_dir(dir)
        .env_remove("WARPLINT_CACHE_DIR")
        .output()
        .expect("run warplint")
}

fn check(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["check", "--isolated", "--output-format", "json", "."];
    args.extend(extra);
    warplint_in(dir, &args)
}

/// Every entry file of the cache at `root`, with its content.
fn entries(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.parent() != Some(root) {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The entries whose content differs between two snapshots.
fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> usize {
    b.iter().filter(|(p, v)| a.get(*p) != Some(v)).count()
        + a.keys().filter(|p| !b.contains_key(*p)).count()
}

#[test]
fn a_warm_run_prints_what_the_cold_run_did() {
    let dir = project("cache-warm");
    let cold = check(&dir, &[]);
    assert_eq!(cold.status.code(), Some(1), "{}", stderr(&cold));
    let cache = dir.join(".warplint_cache");
    assert!(cache.join("CACHEDIR.TAG").is_file());
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore")).unwrap(),
        "# Automatically created by warplint.\n*\n"
    );
    let first = entries(&cache);
    // A unit and a launch-site entry per file that has launches.
    assert!(first.len() >= 4, "{first:?}");
    let warm = check(&dir, &[]);
    assert_eq!(stdout(&warm), stdout(&cold));
    assert_eq!(warm.status.code(), cold.status.code());
    assert_eq!(changed(&first, &entries(&cache)), 0);
    // Both findings are there: the header's kernel under launch.cu's block,
    // and other.cu's.
    let doc: serde_json::Value = serde_json::from_str(&stdout(&warm)).unwrap();
    let codes: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"SM001") && codes.contains(&"GM001"),
        "{codes:?}"
    );
    // The full format, statistics and all, is the same warm as cold.
    let full = ["check", "--isolated", "--statistics", "."];
    let (a, b) = (warplint_in(&dir, &full), warplint_in(&dir, &full));
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn an_edit_reanalyses_exactly_what_it_can_affect() {
    let dir = project("cache-edit");
    let cache = dir.join(".warplint_cache");
    let cold = check(&dir, &[]);
    let before = entries(&cache);
    // other.cu includes nothing and launches nothing of the others: only
    // its own entries change.
    std::fs::write(dir.join("other.cu"), OTHER.replace("* 33", "* 2")).unwrap();
    let after_other = check(&dir, &[]);
    let now = entries(&cache);
    assert_eq!(changed(&before, &now), 2, "other.cu's unit and its sites");
    assert_ne!(stdout(&after_other), stdout(&cold));
    // The header: launch.cu's unit reads it, and kern.cuh is a unit of its
    // own.
    std::fs::write(dir.join("kern.cuh"), HEADER.replace("[32][32]", "[32][33]")).unwrap();
    let after_header = check(&dir, &[]);
    let later = entries(&cache);
    // Recomputed: kern.cuh's unit, launch.cu's unit and its launch sites
    // (the header is part of its text); kept: other.cu's two.
    assert_eq!(later.len(), 5);
    assert_eq!(changed(&now, &later), 3);
    let kept = now.iter().filter(|(p, v)| later.get(*p) == Some(v)).count();
    assert_eq!(kept, 2, "other.cu's entries are kept");
    // The padded array no longer conflicts: the edit was seen.
    assert!(
        !stdout(&after_header).contains("SM001"),
        "{}",
        stdout(&after_header)
    );
    // And the result is what a run without the cache gives.
    let fresh = check(&dir, &["--no-cache"]);
    assert_eq!(stdout(&after_header), stdout(&fresh));
}

#[test]
fn damaged_and_foreign_entries_are_never_trusted() {
    let dir = project("cache-damaged");
    let cache = dir.join(".warplint_cache");
    let cold = check(&dir, &[]);
    let good = entries(&cache);
    // Garbage in half, another entry's valid JSON in the rest.
    let paths: Vec<&PathBuf> = good.keys().collect();
    let donor = good.values().next().unwrap().clone();
    for (i, p) in paths.iter().enumerate() {
        if i % 2 == 0 {
            std::fs::write(p, b"\x00not json{").unwrap();
        } else {
            let mut v: serde_json::Value = serde_json::from_slice(&donor).unwrap();
            v["key"] = serde_json::json!("0".repeat(32));
            std::fs::write(p, serde_json::to_vec(&v).unwrap()).unwrap();
        }
    }
    let again = check(&dir, &[]);
    assert_eq!(stdout(&again), stdout(&cold));
    // Each was recomputed and written back as it was.
    assert_eq!(entries(&cache), good);
}

#[test]
fn no_cache_writes_nothing_and_the_location_can_be_set() {
    let dir = project("cache-where");
    let out = check(&dir, &["--no-cache"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!dir.join(".warplint_cache").exists());
    // --cache-dir, then the configuration's cache-dir (beside it).
    let out = check(&dir, &["--cache-dir", "elsewhere"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(dir.join("elsewhere/CACHEDIR.TAG").is_file());
    std::fs::create_dir_all(dir.join("cfg")).unwrap();
    std::fs::write(dir.join("cfg/warplint.toml"), "cache-dir = \"../kept\"\n").unwrap();
    let out = warplint_in(
        &dir,
        &[
            "check",
            "--config",
            "cfg/warplint.toml",
            "--output-format",
            "json",
            ".",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(dir.join("kept/CACHEDIR.TAG").is_file());
    assert!(!dir.join(".warplint_cache").exists());
}

#[test]
fn clean_removes_the_cache_and_only_a_cache() {
    let dir = project("cache-clean");
    check(&dir, &[]);
    assert!(dir.join(".warplint_cache").is_dir());
    let out = warplint_in(&dir, &["clean", "--isolated"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Removed the cache at "),
        "{}",
        stdout(&out)
    );
    assert!(!dir.join(".warplint_cache").exists());
    let out = warplint_in(&dir, &["clean", "--isolated"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("No cache at "), "{}", stdout(&out));
    // A folder warplint did not make is left alone.
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "keep").unwrap();
    let out = warplint_in(&dir, &["clean", "--isolated", "--cache-dir", "mine"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a warplint cache"),
        "{}",
        stderr(&out)
    );
    assert!(dir.join("mine/notes.txt").is_file());
}
