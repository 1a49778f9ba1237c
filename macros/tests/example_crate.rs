//! `fixtures/rust/macros_example`, built by cargo as a user's crate would
//! be: `#[warplint::check]` passes the padded transpose, fails the build
//! on the unpadded one with warplint's error at the access, and with
//! `level = "warn"` builds with a warning.

use std::path::PathBuf;
use std::process::{Command, Output};

fn cargo_check(features: &[&str]) -> Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut c = Command::new(env!("CARGO"));
    c.args([
        "check",
        "--offline",
        "--locked",
        "--quiet",
        "--manifest-path",
    ])
    .arg(root.join("fixtures/rust/macros_example/Cargo.toml"))
    // Its own target folder, kept between runs.
    .env("CARGO_TARGET_DIR", root.join("target/macros-example"))
    .env_remove("RUSTFLAGS");
    for f in features {
        c.args(["--features", f]);
    }
    c.output().expect("cargo runs")
}

#[test]
fn the_attribute_checks_kernels_during_the_build() {
    let clean = cargo_check(&[]);
    let err = String::from_utf8_lossy(&clean.stderr);
    assert!(clean.status.success(), "{err}");
    assert!(!err.contains("warplint"), "{err}");

    let conflict = cargo_check(&["conflict"]);
    let err = String::from_utf8_lossy(&conflict.stderr);
    assert!(!conflict.status.success(), "the build must fail:\n{err}");
    assert!(
        err.contains(
            "error: warplint SM001 (shared-bank-conflict): 32-way bank conflict on `tile`"
        ),
        "{err}"
    );
    // At the access, in the user's file: `*tile.add(tx * 32 + ty)` of
    // `transpose` (line 72).
    assert!(err.contains("src/lib.rs:72:32"), "{err}");
    assert!(err.contains("a stride of 132 bytes"), "{err}");
    assert_eq!(err.matches("error: warplint").count(), 1, "{err}");

    let warned = cargo_check(&["warn"]);
    let err = String::from_utf8_lossy(&warned.stderr);
    assert!(warned.status.success(), "{err}");
    assert!(
        err.contains("warning: use of deprecated unit struct"),
        "{err}"
    );
    assert!(err.contains("32-way bank conflict on `tile`"), "{err}");
}
