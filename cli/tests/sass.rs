//! `--sass` and `--nvcc`: the model checked against the instructions nvcc
//! really emitted, through the real binary. The listings in
//! `fixtures/sass/` were recorded with nvcc 13.0 (`nvdisasm -gi` of
//! `nvcc -cubin -O3 -lineinfo -arch=sm_90`; see its README), so no toolkit
//! is needed; `--nvcc` runs a stand-in toolkit that hands back a recorded
//! listing.

mod common;
use common::{stderr, stdout, temp_project, warplint};
use serde_json::Value;

fn report(args: &[&str]) -> Value {
    let mut all = vec!["report", "--isolated", "--format", "json"];
    all.extend(args);
    let out = warplint(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json")
}

fn accesses(doc: &Value) -> &Vec<Value> {
    doc["accesses"].as_array().expect("accesses")
}

fn find<'a>(doc: &'a Value, kernel: &str, line: u64, op: &str) -> Option<&'a Value> {
    accesses(doc)
        .iter()
        .find(|a| a["kernel"] == kernel && a["line"] == line && a["op"] == op)
}

/// `widen.cu` as nvcc 13.0 compiled it: four neighbouring loads are one
/// `LDS.128` that nvcc gives the second load's line (the model merges them
/// on the first: the instruction is found through the accesses it covers,
/// and reported once, on the line it is counted on, naming the first),
/// an unrolled loop's stores two `STS.128`, scalar global loads `LDG`s.
/// A line with no instruction of an access's kind removes it
/// (`scalars.cu`: four stores nvcc makes one, on the last one's line).
#[test]
fn a_listing_verifies_each_access_or_says_it_runs_no_instruction() {
    let plain = report(&["fixtures/sass/widen.cu"]);
    let doc = report(&[
        "--sass",
        "fixtures/sass/widen.gi.sass",
        "fixtures/sass/widen.cu",
    ]);
    assert!(plain["accesses"][0].get("sass").is_none());
    let quad = find(&doc, "four_loads", 23, "load").expect("the merged load");
    assert_eq!(quad["access_bytes"], 16);
    assert_eq!(quad["sass"]["opcode"], "LDS.128", "{quad}");
    assert_eq!(quad["sass"]["compiler"], Value::Null);
    assert_eq!(quad["counted_from"]["line"], 22, "{quad}");
    assert!(find(&doc, "four_loads", 22, "load").is_none());
    let stores = find(&doc, "unroll8", 57, "store").expect("the unrolled store");
    assert_eq!(stores["sass"]["opcode"], "STS.128");
    let scalar = find(&doc, "global_quad", 50, "load").expect("a scalar global load");
    assert_eq!(scalar["sass"]["opcode"], "LDG.E.CONSTANT");
    // Every other shared or global access is verified, the
    // loop-invariant `in[t]` of `unroll8` too: the model hoists it out of
    // the loop, and as the kernel's first memory instruction nvcc counts
    // it on the body's first statement that emits code, `int t =
    // threadIdx.x;` (55), where the listing has its `LDG`.
    for a in accesses(&doc) {
        assert!(a.get("sass").is_some(), "{a}");
    }
    let hoisted = find(&doc, "unroll8", 55, "load").expect("the hoisted load");
    assert_eq!(hoisted["hoisted_from"]["line"], 57, "{hoisted}");
    assert!(find(&doc, "unroll8", 57, "load").is_none());
    assert_eq!(common::removed(&doc, "not-in-sass"), 0);
    let text = stdout(&warplint(&[
        "report",
        "--isolated",
        "--sass",
        "fixtures/sass/scalars.gi.sass",
        "fixtures/sass/scalars.cu",
    ]));
    assert!(
        text.contains(
            "scalars.cu:6:9 (limits `startA`, store): no instruction on its line in the SASS"
        ),
        "{text}"
    );
}

/// Arrays of a thread nvcc keeps in registers (`float kr[8]` indexed by an
/// unrolled loop's counter) run no memory instruction: the model removes
/// them (`nvcc::registers`, "registers" in the removed list), and the
/// listing agrees.
#[test]
fn register_arrays_run_no_instruction() {
    let path = "fixtures/groundtruth/sm_90/unrolled_loads.cu";
    let plain = report(&[path]);
    let doc = report(&["--sass", "fixtures/sass/unrolled_loads.gi.sass", path]);
    let local = |d: &Value| accesses(d).iter().filter(|a| a["space"] == "local").count();
    assert!(common::removed(&plain, "registers") > 0);
    assert_eq!(local(&plain), 0);
    assert_eq!(local(&doc), 0);
    // The global loads stay, verified.
    let loads: Vec<&Value> = accesses(&doc)
        .iter()
        .filter(|a| a["space"] == "global" && a["op"] == "load")
        .collect();
    assert!(!loads.is_empty());
    assert!(loads.iter().all(|a| a.get("sass").is_some()), "{loads:?}");
}

/// A diagnostic on a verified access says which instruction runs it, in
/// its notes and as data.
#[test]
fn a_verified_diagnostic_names_its_instruction() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        "--sass",
        "fixtures/sass/widen.gi.sass",
        "fixtures/sass/widen.cu",
    ]);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let sm = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "SM001" && d["kernel"] == "unroll8")
        .expect("the 2-way unrolled store");
    assert_eq!(sm["instruction"]["opcode"], "STS.128", "{sm}");
    assert_eq!(sm["instruction"]["verified_against"], "listing");
    let notes = sm["notes"].to_string();
    assert!(
        notes.contains("verified against the SASS given: `STS.128` runs it on this line"),
        "{notes}"
    );
    let plain = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        "fixtures/sass/widen.cu",
    ]);
    let p: Value = serde_json::from_str(&stdout(&plain)).expect("json");
    assert!(p
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["instruction"].is_null()));
}

/// An access in an inlined function is found at its own line of the
/// header (`-gi` names both it and the call).
#[test]
fn an_inlined_access_is_found_in_its_header() {
    let doc = report(&[
        "--sass",
        "fixtures/sass/inl.gi.sass",
        "fixtures/sass/inl.cu",
    ]);
    let in_header: Vec<&Value> = accesses(&doc)
        .iter()
        .filter(|a| a["file"].as_str().is_some_and(|f| f.ends_with("inl.cuh")))
        .collect();
    assert!(!in_header.is_empty());
    for a in in_header {
        assert!(
            a["sass"]["opcode"]
                .as_str()
                .is_some_and(|o| o.starts_with("STS") || o.starts_with("LDS")),
            "{a}"
        );
    }
}

#[test]
fn nvcc_and_sass_cannot_be_given_together() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--nvcc",
        "auto",
        "--sass",
        "fixtures/sass/widen.gi.sass",
        "fixtures/sass/widen.cu",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_file_that_is_not_a_listing_is_refused() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--sass",
        "fixtures/sass/widen.cu",
        "fixtures/sass/widen.cu",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no function in it"),
        "{}",
        stderr(&out)
    );
}

/// `--nvcc` compiles the file and disassembles the cubin with the
/// toolkit's nvdisasm: here a stand-in toolkit (shell scripts) that checks
/// the flags it is given and hands back the recorded listing. A toolkit
/// that fails to compile leaves the model alone, with a warning.
#[cfg(unix)]
#[test]
fn nvcc_compiles_the_file_and_reads_its_sass() {
    use std::os::unix::fs::PermissionsExt;
    let listing = common::root().join("fixtures/sass/widen.gi.sass");
    let nvcc = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
out=""; lineinfo=no; arch=no
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift;;
    -lineinfo) lineinfo=yes;;
    -arch=sm_90) arch=yes;;
  esac
  shift
done
[ "$lineinfo" = yes ] && [ "$arch" = yes ] || { echo "error: missing flags" >&2; exit 1; }
echo cubin > "$out"
"#;
    let nvdisasm = format!(
        "#!/bin/sh\n[ \"$1\" = \"-gi\" ] || exit 1\ncat '{}'\n",
        listing.display()
    );
    let dir = temp_project(
        "fake-toolkit",
        &[("bin/nvcc", nvcc), ("bin/nvdisasm", &nvdisasm)],
    );
    for tool in ["nvcc", "nvdisasm"] {
        let p = dir.join("bin").join(tool);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let nvcc_path = dir.join("bin/nvcc");
    let nvcc_arg = nvcc_path.to_str().unwrap();
    let doc = report(&["--nvcc", nvcc_arg, "fixtures/sass/widen.cu"]);
    let quad = find(&doc, "four_loads", 23, "load").expect("the merged load");
    assert_eq!(quad["sass"]["opcode"], "LDS.128");
    assert_eq!(quad["sass"]["compiler"], "nvcc 13.0");
    let out = warplint(&[
        "check",
        "--isolated",
        "--nvcc",
        nvcc_arg,
        "fixtures/sass/widen.cu",
    ]);
    assert!(
        stdout(&out).contains("verified against nvcc 13.0 SASS: `STS.128` runs it on this line"),
        "{}",
        stdout(&out)
    );
    // For sm_80 the stand-in refuses (it wants -arch=sm_90): the model alone.
    let out = warplint(&[
        "check",
        "--isolated",
        "--arch",
        "sm_80",
        "--nvcc",
        nvcc_arg,
        "fixtures/sass/widen.cu",
    ]);
    assert!(
        stderr(&out).contains(
            "nvcc could not compile it (error: missing flags); analysed by the model alone"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("verified against"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Four `__shared__` scalars one thread sets: nvcc lays them out together
/// and stores them as one `STS.128` on the last store's line (and loads
/// them as one `LDS.128`), which the model, one 4-byte access per
/// variable, does not know. With the listing the instruction's line is
/// costed as that 16-byte instruction, saying what the model had, and the
/// other stores' lines run nothing.
#[test]
fn an_instruction_wider_than_the_model_is_costed_as_the_instruction() {
    let path = "fixtures/sass/scalars.cu";
    let plain = report(&[path]);
    let store = find(&plain, "limits", 9, "store").expect("the model's store");
    assert_eq!(store["access_bytes"], 4);
    let doc = report(&["--sass", "fixtures/sass/scalars.gi.sass", path]);
    let store = find(&doc, "limits", 9, "store").expect("the store instruction");
    assert_eq!(store["access_bytes"], 16, "{store}");
    assert_eq!(store["sass"]["opcode"], "STS.128");
    assert_eq!(store["sass"]["modelled_bytes"], 4);
    assert_eq!(store["status"], "exact");
    assert_eq!(store["shared"]["ways"], 1, "{store}");
    for line in [6, 7, 8] {
        assert!(find(&doc, "limits", line, "store").is_none(), "line {line}");
    }
    let removed = doc["kernels"][0]["removed"].as_array().unwrap();
    let not_in_sass: Vec<u64> = removed
        .iter()
        .filter(|r| r["why"] == "not-in-sass" && r["op"] == "store")
        .filter_map(|r| r["line"].as_u64())
        .collect();
    assert_eq!(not_in_sass, vec![6, 7, 8]);
}

/// Through a `volatile` pointer or parameter nvcc emits every access as
/// written (nvcc 13.0, `vol.gi.sass`): `vs[2t]` and `vs[2t + 1]` stay two
/// `LDS`, `vs[2t]` read again is loaded again, the loop-invariant load
/// stays in the loop, and `warp_reduce`'s `s[t]` is loaded after it is
/// stored. The model keeps each of them, and the listing agrees with
/// every one (nothing removed, every width the model's).
#[test]
fn volatile_accesses_are_emitted_as_written() {
    let path = "fixtures/sass/vol.cu";
    let plain = report(&[path]);
    let loads = |d: &Value, line: u64| {
        accesses(d)
            .iter()
            .filter(|a| a["line"] == line && a["op"] == "load" && a["space"] == "shared")
            .count()
    };
    for line in [12, 13, 14, 16] {
        assert_eq!(loads(&plain, line), 1, "line {line}");
    }
    assert_eq!(
        loads(&plain, 4),
        2,
        "s[t] and s[t + 16] after s[t] is stored"
    );
    let l16 = find(&plain, "vol", 16, "load").unwrap();
    assert!(l16.get("hoisted_to").is_none(), "{l16}");
    assert!(accesses(&plain)
        .iter()
        .filter(|a| a["space"] == "shared")
        .all(|a| a["access_bytes"] == 4));
    let doc = report(&["--sass", "fixtures/sass/vol.gi.sass", path]);
    for a in accesses(&doc).iter().filter(|a| a["space"] == "shared") {
        assert_eq!(a["sass"]["width"], 4, "{a}");
        assert!(a["sass"]["modelled_bytes"].is_null(), "{a}");
    }
    assert!(doc["kernels"][0]["removed"].as_array().unwrap().is_empty());
}

/// `x = v; if (c) x = w;` is one select store; the model puts it on the
/// `if`'s line, and nvcc 13.0 put the `STG.E.64` of `dbl` on the first
/// store's line (7), where Nsight Compute counted it
/// (`fixtures/groundtruth/sm_90/overwrite2.cu`). With the listing, the
/// finding names that line, and `report` gives its one record there.
#[test]
fn an_instruction_on_a_merged_access_line_is_counted_there() {
    let file = "fixtures/groundtruth/sm_90/overwrite2.cu";
    let listing = "fixtures/sass/groundtruth/overwrite2.gi.sass";
    let doc = report(&["--sass", listing, file]);
    assert!(find(&doc, "dbl", 8, "store").is_none());
    let there = find(&doc, "dbl", 7, "store").expect("its record on line 7");
    assert_eq!(there["attribution"], "sass");
    assert_eq!(there["counted_from"]["line"], 8);
    // Without the listing: one record, on the `if`'s line, of the same cost.
    let plain = report(&[file]);
    assert!(find(&plain, "dbl", 7, "store").is_none());
    let own = find(&plain, "dbl", 8, "store").unwrap();
    assert!(own.get("counted_at").is_none());
    assert_eq!(there["global"], own["global"]);
    // `sqrt_float`'s store is on its own line in the listing: not moved.
    let f = find(&doc, "sqrt_float", 16, "store").expect("sqrt_float's store");
    assert!(f.get("counted_at").is_none(), "{f}");

    let diags = check_with_listing(listing, file);
    let d = diags
        .iter()
        .find(|d| d["kernel"] == "dbl")
        .expect("dbl's finding");
    assert_eq!(d["location"]["row"], 8);
    assert_eq!(d["counted_on_line"], 7, "{d}");
    let notes = d["notes"].to_string();
    assert!(
        notes.contains("`STG.E.64` runs it, on line 7 (the line of an access merged into it)"),
        "{notes}"
    );
}

/// In a loop nvcc unrolls, the line table gives the copies of an
/// instruction the loop header's line or a neighbouring statement's, not
/// the access's (`fixtures/groundtruth/sm_90/forward_branches.cu`'s
/// `loop_both_branches`: the merged `if`/`else` store on lines 57 and
/// 62, measured there). With the listing, the access is counted on each
/// such line of its loop; a line with an access of its own kind is not
/// taken, and without the listing nothing moves.
#[test]
fn an_unrolled_loops_copies_are_counted_on_the_lines_nvcc_gave_them() {
    let file = "fixtures/groundtruth/sm_90/forward_branches.cu";
    let listing = "fixtures/sass/groundtruth/forward_branches.gi.sass";
    let doc = report(&["--sass", listing, file]);
    assert!(find(&doc, "loop_both_branches", 61, "store").is_none());
    let own = find(&doc, "loop_both_branches", 57, "store").expect("the merged store");
    assert_eq!(
        own["also_counted_at_lines"],
        serde_json::json!([62]),
        "{own}"
    );
    for line in [57, 62] {
        let there = find(&doc, "loop_both_branches", line, "store").expect("a copy's record");
        assert_eq!(there["attribution"], "sass");
        assert_eq!(there["counted_from"]["line"], 61);
        assert_eq!(there["global"], own["global"]);
    }
    // The kernel's own store after the loop (line 64) keeps its line.
    let after = find(&doc, "loop_both_branches", 64, "store").expect("out[tx]");
    assert!(after.get("counted_at").is_none(), "{after}");
    // Nothing of the loop is said to be missing from the listing.
    assert_eq!(common::removed(&doc, "not-in-sass"), 0, "{doc}");
    let plain = report(&[file]);
    assert!(find(&plain, "loop_both_branches", 57, "store").is_none());

    let diags = check_with_listing(listing, file);
    let d = diags
        .iter()
        .find(|d| d["kernel"] == "loop_both_branches" && d["location"]["row"] == 61)
        .expect("the store's finding");
    assert_eq!(d["counted_on_line"], 57, "{d}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("on lines 57 and 62 of its loop"), "{notes}");
}

/// `check`'s JSON diagnostics of `file` checked against `listing`.
fn check_with_listing(listing: &str, file: &str) -> Vec<Value> {
    let out = warplint(&[
        "check",
        "--isolated",
        "--output-format",
        "json",
        "--exit-zero",
        "--sass",
        listing,
        file,
    ]);
    let diags: Value = serde_json::from_str(&stdout(&out)).expect("json");
    diags.as_array().expect("diagnostics").clone()
}

/// The kernels LM001 reports in `file` with the listing `sass`.
fn lm001_kernels(file: &str, sass: &str) -> Vec<String> {
    let out = warplint(&[
        "check",
        "--isolated",
        "--select",
        "LM001",
        "--output-format",
        "json",
        "--sass",
        sass,
        file,
    ]);
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let mut kernels: Vec<String> = doc
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["kernel"].as_str().unwrap_or_default().to_string())
        .collect();
    kernels.sort();
    kernels.dedup();
    kernels
}

/// With its SASS, LM001 reports a per-thread array exactly where the
/// compiled code has local-memory instructions for it: every kernel
/// measured for the rule (`fixtures/groundtruth/local/`, 67 kernels, the
/// model's misses and unknowns among them: `#pragma unroll 1`/`2`, a
/// `__noinline__` callee, `memcpy`, a 300-float array read in reverse,
/// a 512-float one summed in order, and 128 doubles or 200 floats that
/// stay in registers). The listings: `fixtures/sass/local/`.
#[test]
fn with_the_sass_local_memory_is_reported_exactly_where_nvcc_put_it() {
    let mut compared = 0;
    let mut wrong = Vec::new();
    let review: Value = serde_json::from_str(
        &std::fs::read_to_string(
            common::root().join("fixtures/groundtruth/local/review/truth.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for (file, m) in review["kernels"].as_object().unwrap() {
        let stem = file.trim_end_matches(".cu");
        let local = m["ldl"].as_u64().unwrap() + m["stl"].as_u64().unwrap() > 0;
        let found = lm001_kernels(
            &format!("fixtures/groundtruth/local/review/{file}"),
            &format!("fixtures/sass/local/{stem}.gi.sass"),
        );
        compared += 1;
        if found.is_empty() == local {
            wrong.push(format!("{file}: local {local}, reported {found:?}"));
        }
    }
    let placed: Value = serde_json::from_str(
        &std::fs::read_to_string(
            common::root().join("fixtures/groundtruth/local/placement.truth.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for (file, kernels) in placed["kernels"].as_object().unwrap() {
        let stem = file.trim_end_matches(".cu");
        let found = lm001_kernels(
            &format!("fixtures/groundtruth/local/{file}"),
            &format!("fixtures/sass/local/{stem}.gi.sass"),
        );
        for (k, m) in kernels.as_object().unwrap() {
            let local = m["ldl_stl"].as_u64().unwrap() > 0;
            compared += 1;
            if found.contains(k) != local {
                wrong.push(format!("{file} {k}: local {local}, reported {found:?}"));
            }
        }
    }
    assert_eq!(compared, 67);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A finding from the SASS says so, names the instructions and lines, and
/// for an array larger than the registers a thread has says that too.
#[test]
fn a_local_array_found_in_the_sass_is_worded_from_the_listing() {
    let out = warplint(&[
        "check",
        "--isolated",
        "--select",
        "LM001",
        "--sass",
        "fixtures/sass/local/p46_big512_fill_sum_inorder.gi.sass",
        "fixtures/groundtruth/local/review/p46_big512_fill_sum_inorder.cu",
    ]);
    let text = stdout(&out);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = flat.replace(" │ ", " ");
    for want in [
        "per-thread array `a` (512 × float, 2048 bytes a thread) is in local memory",
        "`STL.128` (line 6) and `LDL.128` (line 8)",
        "larger than the 255 registers a thread has",
        "verified against the SASS given",
    ] {
        assert!(flat.contains(want), "{want}\n{text}");
    }
    // Without the listing, size alone decides nothing (measured): no finding.
    let plain = warplint(&[
        "check",
        "--isolated",
        "--select",
        "LM001",
        "fixtures/groundtruth/local/review/p46_big512_fill_sum_inorder.cu",
    ]);
    assert!(!stdout(&plain).contains("LM001"), "{}", stdout(&plain));
}
