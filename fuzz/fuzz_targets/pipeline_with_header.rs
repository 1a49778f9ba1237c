//! Two files from one input: the bytes after the first `\0` are a header
//! `h.cuh` that the file may include (`#include "h.cuh"`), so macros,
//! types and device functions crossing files are fuzzed too.
#![no_main]

#[path = "common.rs"]
mod common;

use warplint_analyzer::Header;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (file, header) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let headers = vec![Header {
        name: "h.cuh".into(),
        path: "h.cuh".into(),
        text: header.to_vec(),
    }];
    common::run(file, headers);
});
