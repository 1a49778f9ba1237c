//! Rust kernels through the real binary: discovery (a crate that depends
//! on `cuda_std`, a file named on the command line), the bundled Rust
//! fixtures' reports against their reviewed snapshots, and a padding fix
//! written into the Rust source and re-checked.

mod common;

use common::{root, stderr, stdout, temp_project, warplint};

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(root().join("fixtures/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

const FIXTURE: &str = "fixtures/rust/cuda_kernels";

#[test]
fn every_rust_fixture_report_matches_its_snapshot() {
    let dir = root().join(FIXTURE).join("src");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture crate")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs") && n != "lib.rs")
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "gemm_tile.rs",
            "reduction.rs",
            "strided_copy.rs",
            "transpose.rs"
        ]
    );
    for name in names {
        let path = format!("{FIXTURE}/src/{name}");
        let out = warplint(&["report", "--isolated", "--format", "json", &path]);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", stderr(&out));
        let stem = format!("rust_{}", name.trim_end_matches(".rs"));
        settings().bind(|| insta::assert_snapshot!(format!("report_{stem}"), stdout(&out)));
    }
}

#[test]
fn a_gpu_crate_is_searched_and_its_findings_point_at_rust_source() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--no-cache",
        "--output-format",
        "concise",
        FIXTURE,
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    for (file, code) in [
        ("reduction.rs:17:13", "SM001"),
        ("strided_copy.rs:11:21", "GM001"),
        ("transpose.rs:23:32", "SM001"),
    ] {
        assert!(
            text.lines().any(|l| l.contains(file) && l.contains(code)),
            "{file} {code} in:\n{text}"
        );
    }
    assert!(!text.contains("gemm_tile.rs"), "{text}");
}

#[test]
fn rust_outside_a_gpu_crate_is_not_searched_but_a_named_file_is_read() {
    let kernel = "#[kernel]\npub unsafe fn k(o: *mut f32) {\n    let t = cuda_std::thread::thread_idx_x() as usize;\n    *o.add(t * 32) = 0.0;\n}\n";
    let d = temp_project(
        "rust-plain",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"plain\"\n\n[dependencies]\nserde = \"1\"\n",
            ),
            ("src/lib.rs", kernel),
        ],
    );
    let dir = d.display().to_string();
    let out = warplint(&["check", "--isolated", "--no-cache", &dir]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("no CUDA files found"),
        "{}",
        stderr(&out)
    );
    let file = d.join("src/lib.rs").display().to_string();
    let named = warplint(&[
        "check",
        "--isolated",
        "--no-cache",
        "--output-format",
        "concise",
        &file,
    ]);
    assert!(stdout(&named).contains("GM001"), "{}", stdout(&named));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_padding_fix_edits_the_rust_type_and_its_initializer() {
    let src = std::fs::read_to_string(root().join(FIXTURE).join("src/transpose.rs")).unwrap();
    let d = temp_project(
        "rust-fix",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"k\"\n\n[dependencies]\ncuda_std = \"0.2\"\n",
            ),
            ("src/transpose.rs", &src),
        ],
    );
    let file = d.join("src/transpose.rs").display().to_string();
    let out = warplint(&[
        "check",
        "--isolated",
        "--no-cache",
        "--fix",
        "--unsafe-fixes",
        &file,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert!(
        fixed.contains("static mut TILE_BUF: [[f32; TILE + 1]; TILE] = [[0.0; TILE + 1]; TILE];"),
        "{fixed}"
    );
    assert_eq!(fixed.lines().count(), src.lines().count());
    let again = warplint(&["check", "--isolated", "--no-cache", &file]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_host_crates_launch_gives_the_kernel_its_block_and_arguments() {
    let out = warplint(&[
        "report",
        "--isolated",
        "--format",
        "json",
        &format!("{FIXTURE}/src/transpose.rs"),
    ]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let accesses = j["accesses"].as_array().expect("accesses");
    assert!(!accesses.is_empty());
    for a in accesses {
        assert_eq!(a["block"], serde_json::json!([32, 8, 1]), "{a}");
        // `n = 4096` at the launch: 128 x 128 blocks of 32.
        assert_eq!(a["grid"], serde_json::json!([128, 128, 1]), "{a}");
        assert_eq!(a["launch"]["origin"], "launch-site");
        assert_eq!(a["launch"]["at"], "fixtures/rust/host/src/main.rs:33");
    }
}
