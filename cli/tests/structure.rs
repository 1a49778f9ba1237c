//! The code's shape, checked: rooms small enough to hold in one's head.
//! No source file of analyzer/, lints/ or cli/ is over `MAX_FILE_LINES`
//! lines (functions are held under 150 lines of code by clippy's
//! `too_many_lines`, configured in the workspace lints and clippy.toml).

use std::path::{Path, PathBuf};

/// A file over this many lines is split by concern.
const MAX_FILE_LINES: usize = 1000;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for room in ["analyzer/src", "lints/src", "cli/src"] {
        rust_files(&root.join(room), &mut files);
    }
    assert!(files.len() > 30, "only {} source files found", files.len());
    let over: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).expect("a source file");
            let n = text.lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(
        over.is_empty(),
        "split by concern (over {MAX_FILE_LINES} lines):\n{}",
        over.join("\n")
    );
}

/// One version, three places: the workspace's version, the tag the README's
/// pre-commit snippet pins (`rev: vX.Y.Z`, the tag scheme) and a section of
/// the changelog; the license the manifests name is in the repository.
#[test]
fn the_release_version_is_the_same_everywhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let readme = read("README.md");
    let revs: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rev: "))
        .collect();
    assert!(!revs.is_empty(), "the README pins no pre-commit rev");
    for r in revs {
        assert_eq!(r, format!("v{version}"), "README rev");
    }
    // The action builds itself at the ref it is used at; the README's
    // example pins this version's tag.
    assert!(read("action.yml").contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\""));
    assert!(readme.contains(&format!("uses: OWNER/warplint@v{version}")));
    assert!(
        read("CHANGELOG.md").contains(&format!("## [{version}]")),
        "CHANGELOG.md has no section for {version}"
    );
    assert!(read("LICENSE").starts_with("MIT License"));
    assert!(read("Cargo.toml").contains("license = \"MIT\""));
}
