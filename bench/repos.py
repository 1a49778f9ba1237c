#!/usr/bin/env python3
"""Issue 20's floor benchmark: `check` against the floor, one repository at a time.

usage: bench/repos.py CORPUS [--bin target/release/warplint] [--jobs N]
                      [--only NAME[,NAME...]] [--repeat 1] [--cache]

CORPUS holds the repositories of shared/reference/corpus.md side by side,
with their headers (shared/reference/build_corpus_full.sh). For each
repository, with the same files, settings (`--isolated`, headers found in
the project) and threads, it times the floor, `warplint debug parse-only
--follow-includes` (every distinct file the run reads, parsed once), and
`warplint check` with no cache (`--no-cache`), each after a warm-up run
(best of --repeat), and prints seconds, peak RSS and check / floor. With
--cache it also times a cold run into an empty cache and a warm run over
it, and checks the warm output is byte-identical to the cold one. Exits
non-zero when a run fails or a warm output differs. Standard library only;
Linux (wait4) for peak RSS.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import measure  # noqa: E402


def timed(cmd, repeat):
    measure(cmd)  # warm the file cache
    runs = [measure(cmd) for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def output(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p.stdout, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--bin", default="target/release/warplint")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cache", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        sys.exit(f"{a.bin}: not built (cargo build --release)")
    jobs = ["-j", str(a.jobs)] if a.jobs else []
    only = set(a.only.split(",")) if a.only else None
    repos = sorted(
        r for r in os.listdir(a.corpus)
        if os.path.isdir(os.path.join(a.corpus, r)) and (only is None or r in only)
    )
    failed = []
    total = {"floor": 0.0, "check": 0.0, "cold": 0.0, "warm": 0.0}
    peak = 0.0
    print(f"{'repository':<32} {'floor s':>8} {'check s':>8} {'ratio':>6} {'RSS MiB':>8}"
          + (f" {'cold s':>7} {'warm s':>7} {'warm/cold':>9}" if a.cache else ""))
    for r in repos:
        path = os.path.join(a.corpus, r)
        floor = [a.bin, "debug", "parse-only", "--follow-includes", "--isolated", *jobs, path]
        base = [a.bin, "check", "--isolated", "--exit-zero", "--output-format", "json", *jobs, path]
        fw, _, fc = timed(floor, a.repeat)
        cw, crss, cc = timed(base + ["--no-cache"], a.repeat)
        failed += [f"{r}: parse-only exited {fc}"] * (fc != 0) + [f"{r}: check exited {cc}"] * (cc != 0)
        total["floor"] += fw
        total["check"] += cw
        peak = max(peak, crss)
        line = f"{r:<32} {fw:8.2f} {cw:8.2f} {cw / fw:6.2f} {crss:8.1f}"
        if a.cache:
            d = tempfile.mkdtemp(prefix="warplint-cache-")
            try:
                cached = base + ["--cache-dir", d]
                start = time.perf_counter()
                cold_out, _ = output(cached)
                cold = time.perf_counter() - start
                start = time.perf_counter()
                warm_out, _ = output(cached)
                warm = time.perf_counter() - start
            finally:
                shutil.rmtree(d, ignore_errors=True)
            if warm_out != cold_out:
                failed.append(f"{r}: the warm output differs from the cold one")
            total["cold"] += cold
            total["warm"] += warm
            line += f" {cold:7.2f} {warm:7.2f} {warm / cold:9.2f}"
        print(line, flush=True)
    line = f"{'total':<32} {total['floor']:8.2f} {total['check']:8.2f} {total['check'] / total['floor']:6.2f} {peak:8.1f}"
    if a.cache:
        line += f" {total['cold']:7.2f} {total['warm']:7.2f} {total['warm'] / total['cold']:9.2f}"
    print(line)
    if failed:
        sys.exit("failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
