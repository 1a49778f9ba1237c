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

/// `warplint report --format json` of `path`, which must succeed.
fn report_json(path: &str) -> serde_json::Value {
    let out = warplint(&["report", "--isolated", "--format", "json", path]);
    assert_eq!(out.status.code(), Some(0), "{path}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json")
}

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
fn the_cubecl_fixture_report_matches_its_snapshot() {
    let path = "fixtures/rust/cubecl_kernels/src/lib.rs";
    let out = warplint(&["report", "--isolated", "--format", "json", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let kernels: Vec<&str> = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(
        ["transpose_tile", "strided_read", "scale"]
            .iter()
            .all(|k| kernels.iter().any(|n| n.starts_with(k))),
        "{kernels:?}"
    );
    settings().bind(|| insta::assert_snapshot!("report_rust_cubecl", stdout(&out)));
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
    let j = report_json(&format!("{FIXTURE}/src/transpose.rs"));
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

/// The fixture kernels' CUDA C++ twins measured on an H200
/// (`fixtures/groundtruth/rust/`): each Rust line's prediction (the mean per
/// executed instruction, as check.py takes it) against its twin's measured
/// line. Every line agrees; the reduction's conditional update (twin line
/// 52) since its side is known to be predicated (issued by warps with no
/// lane active, at no cost, which Nsight Compute's mean counts).
#[test]
fn rust_fixture_predictions_agree_with_the_h200_measurements_of_their_twins() {
    const KNOWN_MISSES: [(u32, &str, &str); 0] = [];
    // Twin line -> (Rust file, line).
    let lines: [(u32, &str, u32); 10] = [
        (16, "gemm_tile.rs", 21),
        (17, "gemm_tile.rs", 22),
        (20, "gemm_tile.rs", 25),
        (24, "gemm_tile.rs", 29),
        (31, "transpose.rs", 19),
        (34, "transpose.rs", 23),
        (39, "strided_copy.rs", 11),
        (46, "reduction.rs", 11),
        (52, "reduction.rs", 17),
        (58, "reduction.rs", 23),
    ];
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/groundtruth/rust/rustfixtures.truth.json"))
            .unwrap(),
    )
    .unwrap();
    let report = report_json(&format!("{FIXTURE}/src"));
    let accesses = report["accesses"].as_array().unwrap();
    let mut misses = Vec::new();
    let cases = truth["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 18);
    for c in cases {
        let line = c["line"].as_u64().unwrap() as u32;
        let (space, op) = (c["space"].as_str().unwrap(), c["op"].as_str().unwrap());
        let (_, file, rs_line) = lines.iter().find(|l| l.0 == line).expect("mapped line");
        let key = if space == "shared" {
            "wavefronts"
        } else {
            "sectors"
        };
        let (mut sum, mut n) = (0.0, 0.0);
        for a in accesses.iter().filter(|a| {
            a["file"].as_str().unwrap().ends_with(file)
                && a["line"] == *rs_line
                && a["space"] == space
                && a["op"] == op
        }) {
            let e = a["executions"].as_f64().unwrap();
            sum += a[space][key].as_f64().expect("a cost") * e;
            n += e;
        }
        assert!(n > 0.0, "no prediction for {file}:{rs_line} {space} {op}");
        let (predicted, measured) = (sum / n, c[key].as_f64().unwrap());
        if (predicted - measured).abs() > 0.05 * measured.max(1.0) {
            misses.push((line, space, op));
        }
    }
    assert_eq!(misses, KNOWN_MISSES);
}

/// CubeCL's host launches (`fixtures/rust/cubecl_host`): `launch_unchecked
/// ::<R>` with `CubeCount::Static` and a `CubeDim` bound to a variable
/// gives `transpose_tile` its grid, block and `#[comptime] n` (so its
/// column read is a proven 32-way conflict), and `launch::<f32, R>` binds
/// `scale`'s element type.
#[test]
fn a_cubecl_host_launch_gives_the_kernel_its_shape_types_and_arguments() {
    let j = report_json("fixtures/rust/cubecl_kernels/src/lib.rs");
    let accesses = j["accesses"].as_array().expect("accesses");
    let of = |k: &'static str| accesses.iter().filter(move |a| a["kernel"] == k);
    let t: Vec<_> = of("transpose_tile").collect();
    assert_eq!(t.len(), 4);
    for a in &t {
        assert_eq!(a["block"], serde_json::json!([32, 32, 1]), "{a}");
        assert_eq!(a["grid"], serde_json::json!([128, 128, 1]), "{a}");
        assert_eq!(a["status"], "exact", "{a}");
        assert_eq!(
            a["launch"]["at"],
            "fixtures/rust/cubecl_host/src/main.rs:10"
        );
    }
    assert!(t
        .iter()
        .any(|a| a["line"] == 11 && a["array"] == "tile" && a["shared"]["ways"] == 32));
    let s: Vec<_> = of("scale<float>").collect();
    assert_eq!(s.len(), 2, "{j}");
    for a in &s {
        assert_eq!(a["block"], serde_json::json!([256, 1, 1]), "{a}");
        assert_eq!(a["access_bytes"], 4);
        assert_eq!(
            a["launch"]["at"],
            "fixtures/rust/cubecl_host/src/main.rs:23"
        );
    }
    // A kernel no launch reaches keeps the default shapes, assumed.
    assert!(of("strided_read").all(|a| a["status"] == "assumed"));
    assert_eq!(of("strided_read").count(), 2);
}

/// Help and labels on Rust kernels name what their author writes: the
/// thread index as Rust-CUDA's `thread::thread_idx_x()` and CubeCL's
/// `UNIT_POS_X`, never CUDA C++'s `threadIdx.x`.
#[test]
fn rust_findings_are_worded_in_the_kernels_own_terms() {
    let check = |path: &str| {
        let out = warplint(&["check", "--isolated", "--exit-zero", path]);
        stdout(&out)
    };
    let rust = check(&format!("{FIXTURE}/src/strided_copy.rs"));
    assert!(
        rust.contains("thread::thread_idx_x() is multiplied by 4"),
        "{rust}"
    );
    assert!(
        rust.contains("make thread::thread_idx_x() the fastest-varying index"),
        "{rust}"
    );
    let cube = check("fixtures/rust/cubecl_kernels/src/lib.rs");
    assert!(cube.contains("UNIT_POS_X is multiplied by 8"), "{cube}");
    for text in [&rust, &cube] {
        assert!(!text.contains("threadIdx"), "{text}");
    }
}

/// A CubeCL kernel launched in its own crate takes that launch only; a
/// function of the same name another crate launches (each backend's tests
/// define their own `add_one`) is another kernel. A kernel crate without
/// launches (Rust-CUDA's host and kernels apart) still takes the others'.
#[test]
fn a_crates_own_launch_is_preferred_to_another_crates() {
    let kernel = |block: u32| {
        format!(
            "use cubecl::prelude::*;\n#[cube(launch)]\nfn add_one(out: &mut Array<f32>) {{\n    out[UNIT_POS * 2] = 1.0;\n}}\nfn run<R: Runtime>(c: &C) {{\n    add_one::launch::<R>(c, CubeCount::Static(1, 1, 1), CubeDim::new_1d({block}), 5);\n}}\n"
        )
    };
    let manifest =
        |n: &str| format!("[package]\nname = \"{n}\"\n\n[dependencies]\ncubecl = \"0.6\"\n");
    let (a, b) = (kernel(64), kernel(128));
    let (ma, mb) = (manifest("a"), manifest("b"));
    let lone = "use cubecl::prelude::*;\n#[cube(launch)]\nfn add_one(out: &mut Array<f32>) {\n    out[UNIT_POS * 2] = 1.0;\n}\n";
    let mc = manifest("c");
    let d = temp_project(
        "rust-crates",
        &[
            ("a/Cargo.toml", &ma),
            ("a/src/lib.rs", &a),
            ("b/Cargo.toml", &mb),
            ("b/src/lib.rs", &b),
            ("c/Cargo.toml", &mc),
            ("c/src/lib.rs", lone),
        ],
    );
    let blocks = |krate: &str| {
        let out = warplint(&[
            "report",
            "--isolated",
            "--format",
            "json",
            &d.display().to_string(),
        ]);
        let j: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        let mut v: Vec<u64> = j["accesses"]
            .as_array()
            .expect("accesses")
            .iter()
            .filter(|a| {
                a["file"]
                    .as_str()
                    .unwrap_or("")
                    .contains(&format!("{krate}/src"))
            })
            .map(|a| a["block"][0].as_u64().unwrap())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert_eq!(blocks("a"), [64]);
    assert_eq!(blocks("b"), [128]);
    // No launch of its own: both others'.
    assert_eq!(blocks("c"), [64, 128]);
    let _ = std::fs::remove_dir_all(&d);
}

/// A CubeCL `Line` buffer's element is as wide as its launch's
/// vectorisation factor (`ArrayArg::from_raw_parts(&h, len, 4)`): one
/// 16-byte access per unit for four `f32`s, costed as its `float4` twin
/// (`a[2 * i]`: 32 sectors, 16 needed); a factor not given as a constant
/// leaves that buffer's accesses unknown, saying whose line width it is;
/// a kernel without lines is not changed by the widths its launch gives
/// (one instantiation, named as before).
#[test]
fn a_line_buffer_is_as_wide_as_its_launchs_vectorisation() {
    let rust = |width: &str| {
        format!(
            r#"use cubecl::prelude::*;
#[cube(launch)]
fn add_lines<F: Float>(a: &Array<Line<F>>, out: &mut Array<Line<F>>) {{
    out[ABSOLUTE_POS] = a[ABSOLUTE_POS * 2];
}}
#[cube(launch)]
fn plain(a: &Array<f32>, out: &mut Array<f32>) {{
    out[ABSOLUTE_POS] = a[ABSOLUTE_POS];
}}
fn run<R: Runtime>(client: &ComputeClient<R::Server, R::Channel>, a: &Handle, b: &Handle, w: u8) {{
    add_lines::launch::<f32, R>(client, CubeCount::Static(64, 1, 1), CubeDim::new_1d(256),
        unsafe {{ ArrayArg::from_raw_parts::<f32>(a, 65536, {width}) }},
        unsafe {{ ArrayArg::from_raw_parts::<f32>(b, 65536, 4) }});
    plain::launch::<R>(client, CubeCount::Static(64, 1, 1), CubeDim::new_1d(256),
        unsafe {{ ArrayArg::from_raw_parts::<f32>(a, 16384, 4) }},
        unsafe {{ ArrayArg::from_raw_parts::<f32>(b, 16384, 1) }});
}}
"#
        )
    };
    let d = temp_project(
        "rust-lines",
        &[
            ("w4.rs", &rust("4")),
            ("w2.rs", &rust("2")),
            ("wn.rs", &rust("w")),
        ],
    );
    let at = |f: &str| d.join(f).display().to_string();
    let get = |doc: &serde_json::Value, array: &str, kernel: &str| -> serde_json::Value {
        doc["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["array"] == array && a["kernel"].as_str().unwrap().starts_with(kernel))
            .unwrap_or_else(|| panic!("no {array} in {kernel}: {doc}"))
            .clone()
    };
    let four = report_json(&at("w4.rs"));
    let a = get(&four, "a", "add_lines");
    assert_eq!(
        (
            &a["kernel"],
            &a["access_bytes"],
            &a["global"]["sectors"],
            &a["status"]
        ),
        (
            &"add_lines<float, 4, 4>".into(),
            &16.into(),
            &32.into(),
            &"exact".into()
        ),
        "{a}"
    );
    assert_eq!(get(&four, "out", "add_lines")["global"]["sectors"], 16);
    let plain = get(&four, "a", "plain");
    assert_eq!(
        (
            &plain["kernel"],
            &plain["access_bytes"],
            &plain["global"]["sectors"]
        ),
        (&"plain".into(), &4.into(), &4.into()),
        "{plain}"
    );
    assert_eq!(
        get(&report_json(&at("w2.rs")), "a", "add_lines")["access_bytes"],
        8
    );
    let unknown = report_json(&at("wn.rs"));
    let a = get(&unknown, "a", "add_lines");
    assert_eq!(a["status"], "unknown", "{a}");
    assert_eq!(a["unknown_kind"], "line-width", "{a}");
    assert!(
        a["unknown_reason"]
            .as_str()
            .unwrap()
            .contains("the line width of `a`"),
        "{a}"
    );
    assert_eq!(a["kernel"], "add_lines<float, ?, 4>");
    assert_eq!(get(&unknown, "out", "add_lines")["access_bytes"], 16);
    let _ = std::fs::remove_dir_all(&d);
}
