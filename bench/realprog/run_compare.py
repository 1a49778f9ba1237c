#!/usr/bin/env python3
"""compare.py over every program of programs.json that has a truth file.

usage: run_compare.py --bin target/release/warplint --src SRC [--truth fixtures/realprog]
                      [--extract] [--only NAME ...] [--rows FILE] [--json FILE] [--markdown] [--extra=ARG ...]
SRC holds the sources as extract.py writes them (SRC/<root>/...); with --extract
they are extracted there first from /work/.mirror (or --mirror). Per program:
compare.py's headline figures; then the totals over all programs. --rows writes
each disagreeing line (compare.py --show -1) under a '## NAME' heading.
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = ["lines", "covered", "agree", "close", "excess_lines", "excess_predicted", "diagnostics", "diagnostics_on_measured",
        "diagnostics_right", "diagnostics_shown", "diagnostics_unmeasured", "excess_lines_with_diagnostic", "excess_line_count"]

def pc(x, y):
    return f"{100 * x / y:.0f}%" if y else "-"

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True); ap.add_argument("--src", required=True)
    ap.add_argument("--truth", default=os.path.join(HERE, "..", "..", "fixtures", "realprog"))
    ap.add_argument("--manifest", default=os.path.join(HERE, "programs.json"))
    ap.add_argument("--extract", action="store_true"); ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--only", nargs="*"); ap.add_argument("--rows"); ap.add_argument("--json"); ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--extra", action="append", default=[], help="an argument passed to every warplint run (--extra=--nvcc=auto)")
    a = ap.parse_args()
    man = json.load(open(a.manifest))
    if a.extract:
        subprocess.run([sys.executable, os.path.join(HERE, "extract.py"), "--mirror", a.mirror, "--manifest", a.manifest, a.src], check=True)
    binary = os.path.abspath(a.bin)
    results, rows = {}, []
    for p in man["programs"]:
        if a.only and p["name"] not in a.only:
            continue
        r = man["repositories"][p["repo"]]
        root = os.path.abspath(os.path.join(a.src, r["root"]))
        truth = os.path.join(a.truth, r["root"], p["name"] + ".truth.json")
        if not os.path.exists(truth):
            continue
        if not json.load(open(truth))["cases"]:
            continue
        args, it = [], iter(p["args"])
        for x in it:   # -I DIR / -D NAME, DIR relative to the repository root
            v = next(it)
            args += ["--arg=" + x, "--arg=" + (os.path.join(root, v) if x == "-I" else v)]
        args += ["--arg=" + x for x in a.extra]
        with tempfile.NamedTemporaryFile(suffix=".json") as t:
            cmd = [sys.executable, os.path.join(HERE, "compare.py"), "--bin", binary, "--root", root, truth, "--json", t.name] + \
                  [f"--analyse={d}" for d in p["analyse"]] + args + (["--show", "-1"] if a.rows else [])
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{p['name']}: compare failed: {out.stderr.strip()[-300:]}", file=sys.stderr); continue
            res = json.load(open(t.name))
        res["repo"] = p["repo"]
        results[p["name"]] = res
        if a.rows:
            rows.append(f"## {p['name']}\n" + "\n".join(out.stdout.splitlines()[:-1]) + "\n")
    tot = {k: sum(r[k] for r in results.values()) for k in KEYS}
    def line(name, r, repo=""):
        return (f"| {name} | {repo} | {r['lines']} | {r['covered']} ({pc(r['covered'], r['lines'])}) | {r['agree']}/{r['covered']} | "
                f"{r['close']}/{r['covered']} | {r['excess_predicted']}/{r['excess_lines']} | "
                f"{r['diagnostics_right']}/{r['diagnostics_on_measured']} | {r['excess_lines_with_diagnostic']}/{r['excess_line_count']} |")
    if a.markdown:
        print("| program | repository | measured lines | predicted | flags agree | within 10% | excess predicted | check precision | check recall |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n, r in results.items():
            print(line(n, r, r["repo"]))
        for repo in sorted({r["repo"] for r in results.values()}):
            sub = {k: sum(r[k] for r in results.values() if r["repo"] == repo) for k in KEYS}
            print(line(f"**{repo}**", sub, f"{sum(r['repo'] == repo for r in results.values())} programs"))
        print(line("**total**", tot, f"{len(results)} programs"))
    else:
        for n, r in results.items():
            print(f"{n:24s} lines {r['lines']:4d} predicted {r['covered']:4d} agree {r['agree']:4d} close {r['close']:4d} "
                  f"excess {r['excess_predicted']}/{r['excess_lines']} check {r['diagnostics_right']}/{r['diagnostics_on_measured']} "
                  f"caught {r['excess_lines_with_diagnostic']}/{r['excess_line_count']}")
    print(f"\n{len(results)} programs: measured lines {tot['lines']}: predicted {tot['covered']} ({pc(tot['covered'], tot['lines'])}), "
          f"flags agree {tot['agree']}/{tot['covered']} ({pc(tot['agree'], tot['covered'])}), within 10% {tot['close']}/{tot['covered']} "
          f"({pc(tot['close'], tot['covered'])}); excess lines {tot['excess_lines']}: predicted {tot['excess_predicted']} "
          f"({pc(tot['excess_predicted'], tot['excess_lines'])}); check: {tot['diagnostics_right']}/{tot['diagnostics_on_measured']} "
          f"diagnostics on measured lines right ({pc(tot['diagnostics_right'], tot['diagnostics_on_measured'])}; "
          f"{tot['diagnostics_shown']} show the excess predicted for their line: {pc(tot['diagnostics_shown'], tot['diagnostics_on_measured'])}), "
          f"{tot['excess_lines_with_diagnostic']}/{tot['excess_line_count']} excess lines caught "
          f"({pc(tot['excess_lines_with_diagnostic'], tot['excess_line_count'])})")
    if a.rows:
        open(a.rows, "w").write("\n".join(rows))
    if a.json:
        json.dump(dict(programs=results, total=tot), open(a.json, "w"), indent=1)

if __name__ == "__main__":
    main()
