#!/usr/bin/env bash
# Fuzzes warplint's whole pipeline with cargo-fuzz (libFuzzer).
#   fuzz/run.sh [TARGET] [SECONDS] [JOBS]
# TARGET: pipeline (default) or pipeline_with_header; SECONDS per job
# (default 600); JOBS parallel fuzzers (default 2). Seeds: every fixture
# (`fixtures/**/*.cu*`), flattened into fuzz/seeds/; the corpus grows in
# fuzz/corpus/TARGET and crashes land in fuzz/artifacts/TARGET. Needs the
# nightly toolchain and `cargo install cargo-fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-pipeline}
secs=${2:-600}
jobs=${3:-2}
mkdir -p fuzz/seeds "fuzz/corpus/$target"
find fixtures -type f \( -name '*.cu' -o -name '*.cuh' \) | while read -r f; do
    cp "$f" "fuzz/seeds/$(echo "$f" | tr '/' '_')"
done
# -timeout: one input past 10 s is a hang; -rss_limit_mb: past 2 GiB an OOM.
cargo +nightly fuzz run "$target" "fuzz/corpus/$target" fuzz/seeds -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -jobs="$jobs" -workers="$jobs" -print_final_stats=1
