#!/usr/bin/env python3
"""How much of the public corpus warplint analyses: issue 17's figures.

usage: corpus_figures.py --bin target/release/warplint CORPUS [--out DIR] [--jobs N]

CORPUS holds the repositories of shared/reference/corpus.md side by side, with
their headers (shared/reference/build_corpus_full.sh). Each repository is run
as its own project (`warplint report --isolated --format json CORPUS/REPO`,
default settings: project headers found), its report kept in DIR when given.
Prints per repository and in total: shared and global access records (one per
distinct access, kernel instantiation and launch), the share `unknown` and
`exact`, kernels with a note, the largest unknown kinds, and the seconds each
run took.
"""
import argparse, collections, json, os, subprocess, sys, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True); ap.add_argument("corpus")
    ap.add_argument("--out"); ap.add_argument("--jobs")
    a = ap.parse_args()
    total, kinds = collections.Counter(), collections.Counter()
    for repo in sorted(os.listdir(a.corpus)):
        path = os.path.join(a.corpus, repo)
        if not os.path.isdir(path):
            continue
        args = [os.path.abspath(a.bin), "report", "--isolated", "--format", "json"]
        if a.jobs:
            args += ["--jobs", a.jobs]
        start = time.time()
        p = subprocess.run(args + [path], capture_output=True, text=True)
        secs = time.time() - start
        if p.returncode not in (0, 2) or not p.stdout.strip():
            print(f"{repo}: report failed (exit {p.returncode}): {p.stderr.strip()[:200]}", file=sys.stderr)
            continue
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            with open(os.path.join(a.out, repo + ".report.json"), "w") as f:
                f.write(p.stdout)
        d = json.loads(p.stdout)
        sg = [r for r in d["accesses"] if r["space"] in ("shared", "global") and "attribution" not in r]
        c = collections.Counter(r["status"] for r in sg)
        kinds.update(r.get("unknown_kind") for r in sg if r["status"] == "unknown")
        s = d["summary"]
        row = collections.Counter(records=len(sg), unknown=c["unknown"], exact=c["exact"],
                                  kernels=s["kernels"], noted=s["kernels_with_notes"])
        total.update(row)
        print(f"{repo}: {fmt(row)}, {secs:.0f} s")
    print(f"total: {fmt(total)}")
    print("unknown kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common(8)))

def pc(x, y):
    return f"{100 * x / y:.1f}%" if y else "-"

def fmt(r):
    n = r["records"]
    return (f"{n} shared/global records, unknown {r['unknown']} ({pc(r['unknown'], n)}), "
            f"exact {r['exact']} ({pc(r['exact'], n)}), kernels with a note {r['noted']} of "
            f"{r['kernels']} ({pc(r['noted'], r['kernels'])})")

if __name__ == "__main__":
    main()
