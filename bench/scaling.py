#!/usr/bin/env python3
"""warplint's scaling benchmark: time at 1x, 2x, 4x (...) corpus size.

usage: bench/scaling.py OUT_DIR [--files 200] [--factors 1,2,4] [--seed 1]
                        [--bin target/release/warplint] [--jobs N] [--repeat 3]

Writes synthetic corpora of FILES x each factor with bench/gen_corpus.py
(the same seed: the 2x corpus is the 1x one plus as many files again),
then times `warplint check` and `warplint debug parse-only` on each, the
best of --repeat runs after a warm-up, and prints seconds, seconds per
file, peak RSS, and each size's time against the linear prediction from
the smallest (`+4.2%`: 4.2% slower than linear). Exits non-zero when a run
fails. Standard library only; Linux (wait4) for peak RSS.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import measure  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--factors", default="1,2,4")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default="target/release/warplint")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        sys.exit(f"{a.bin}: not built (cargo build --release)")
    factors = [int(f) for f in a.factors.split(",")]
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_corpus.py")
    jobs = ["-j", str(a.jobs)] if a.jobs else []
    rows = []
    failed = []
    for f in factors:
        corpus = os.path.join(a.out, f"x{f}")
        n = a.files * f
        subprocess.run(
            [sys.executable, gen, corpus, "--files", str(n), "--seed", str(a.seed)], check=True
        )
        row = {"factor": f, "files": n}
        for name, cmd in [
            ("parse-only", [a.bin, "debug", "parse-only", *jobs, corpus]),
            ("check", [a.bin, "check", "--isolated", "--exit-zero", "--no-cache", "--output-format", "concise", *jobs, corpus]),
        ]:
            measure(cmd)  # warm the file cache
            runs = [measure(cmd) for _ in range(a.repeat)]
            failed.extend(f"{name} x{f} exited {c}" for _, _, c in runs if c != 0)
            row[name] = min(w for w, _, _ in runs)
            row[name + " rss"] = max(r for _, r, _ in runs)
        rows.append(row)
    base = rows[0]
    print(f"{'size':>6} {'files':>6} {'check s':>9} {'per file ms':>12} {'vs linear':>10} "
          f"{'RSS MiB':>8} {'parse-only s':>13} {'vs linear':>10}")
    for r in rows:
        scale = r["files"] / base["files"]
        dev = lambda k: (r[k] / (base[k] * scale) - 1) * 100  # noqa: E731
        print(f"{str(r['factor']) + 'x':>6} {r['files']:>6} {r['check']:>9.2f} "
              f"{r['check'] / r['files'] * 1000:>12.2f} {dev('check'):>+9.1f}% "
              f"{r['check rss']:>8.1f} {r['parse-only']:>13.2f} {dev('parse-only'):>+9.1f}%")
    if failed:
        sys.exit("failed: " + "; ".join(sorted(set(failed))))


if __name__ == "__main__":
    main()
