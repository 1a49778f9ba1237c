#!/usr/bin/env python3
"""warplint's benchmark: wall time, throughput and peak memory.

usage: bench/run.py CORPUS_DIR [--bin target/release/warplint] [--jobs N]
                    [--single FILE] [--runs 20]

On CORPUS_DIR (the public corpus, or one written by bench/gen_corpus.py) it
times `warplint check --isolated` and `warplint debug parse-only` (the
floor: the same walker and thread pool, parsing only), each once after a
warm-up run, and prints wall time, MB/s over the .cu/.cuh bytes, peak RSS
and the check/parse-only ratio; `check` runs with no results cache. Then,
hyperfine-style, it runs `check` on one file of about 500 lines (the
corpus file nearest 500 lines, or --single) --runs times, process start
included, cold (no cache) and warm (a cache the first run filled), and
prints mean, standard deviation, median, min and max of each. Standard
library only; Linux (wait4) for peak RSS.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def sources(root):
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".cu", ".cuh")):
                yield os.path.join(d, f)


def measure(cmd):
    """(seconds, peak RSS in MiB, exit code) of one run of cmd."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def nearest_500(files):
    best, gap = None, None
    for f in files:
        try:
            with open(f, "rb") as h:
                n = h.read().count(b"\n")
        except OSError:
            continue
        if gap is None or abs(n - 500) < gap:
            best, gap = f, abs(n - 500)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--bin", default="target/release/warplint")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--single", default=None)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        sys.exit(f"{a.bin}: not built (cargo build --release)")
    files = list(sources(a.corpus))
    size = sum(os.path.getsize(f) for f in files)
    jobs = ["-j", str(a.jobs)] if a.jobs else []
    print(f"corpus: {a.corpus}: {len(files)} files, {size / 1e6:.1f} MB; jobs: {a.jobs or 'one per core'}")
    results = {}
    failed = []
    for name, cmd in [
        ("parse-only", [a.bin, "debug", "parse-only", *jobs, a.corpus]),
        ("check", [a.bin, "check", "--isolated", "--exit-zero", "--no-cache", "--output-format", "concise", *jobs, a.corpus]),
    ]:
        measure(cmd)  # warm the file cache
        wall, rss, code = measure(cmd)
        results[name] = wall
        if code != 0:
            failed.append(f"{name} exited {code}")
        print(f"{name:>11}: {wall:8.2f} s  {size / 1e6 / wall:8.2f} MB/s  peak RSS {rss:7.1f} MiB  (exit {code})")
    print(f"{'ratio':>11}: check / parse-only = {results['check'] / results['parse-only']:.2f}")
    single = a.single or nearest_500(files)
    if single:
        with open(single, "rb") as h:
            lines = h.read().count(b"\n")
        print(f"single file: {single} ({lines} lines), {a.runs} runs")
        base = [a.bin, "check", "--isolated", "--exit-zero", "--output-format", "concise", single]
        cache = tempfile.mkdtemp(prefix="warplint-cache-")
        try:
            # Cold: no cache (the analysis itself); warm: an unchanged file
            # whose results the cache holds (the first run fills it).
            for name, cmd in [("cold", base + ["--no-cache"]), ("warm", base + ["--cache-dir", cache])]:
                measure(cmd)
                runs = [measure(cmd) for _ in range(a.runs)]
                failed.extend(f"check {single} exited {c}" for _, _, c in runs if c != 0)
                times = [w * 1000 for w, _, _ in runs]
                sd = statistics.stdev(times) if len(times) > 1 else 0.0
                print(
                    f"  {name}: time (mean ± σ): {statistics.mean(times):7.1f} ms ± {sd:5.1f} ms   "
                    f"median {statistics.median(times):7.1f} ms   range {min(times):.1f} … {max(times):.1f} ms"
                )
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    if failed:
        sys.exit("failed: " + "; ".join(sorted(set(failed))))


if __name__ == "__main__":
    main()
