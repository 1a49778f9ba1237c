#!/usr/bin/env python3
"""Why warplint gave no prediction, or `check` no diagnostic, on measured lines.

usage: misses.py --bin WARPLINT --src SRC [--truth fixtures/realprog] [--only NAME ...] [--list]
Per program of programs.json with a truth file: runs `warplint report` and `check`
(as compare.py does) and puts each measured line it did not predict in one bucket:
  unknown:<kind>       warplint reports the access as unknown (its unknown_kind)
  never-executes       records exist but with no executions / no ideal (the assumed
                       grid, parameters or guards leave no thread on the line)
  other-space-or-op    the line has records, but not of the measured space and op
  line-not-recorded    the kernel was analysed, the line got no record
  kernel-not-analysed  no kernel of that name in the report (template, macro, launch not seen...)
and each measured excess line (>= 1.5x) without a diagnostic of its space in one of:
  no-prediction / predicted-below-1.5 / predicted-excess-no-diagnostic.
Prints counts per bucket (and with --list every line).
"""
import argparse, json, os, subprocess, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RULE_SPACE = {"SM001": "shared", "GM001": "global", "GM002": "global"}

def warplint(binary, sub, args, path):
    if sub == "report":
        a = [binary, "report", "--format", "json", "--arch", "sm_90"] + args + [path]
    else:
        a = [binary, "check", "--output-format", "json", "--exit-zero", "--arch", "sm_90"] + args + [path]
    return json.loads(subprocess.run(a, capture_output=True, text=True, timeout=600).stdout)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True); ap.add_argument("--src", required=True)
    ap.add_argument("--truth", default=os.path.join(HERE, "..", "..", "fixtures", "realprog"))
    ap.add_argument("--manifest", default=os.path.join(HERE, "programs.json"))
    ap.add_argument("--only", nargs="*"); ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    man = json.load(open(a.manifest)); binary = os.path.abspath(a.bin)
    cov, rec, per_prog = Counter(), Counter(), defaultdict(Counter)
    for p in man["programs"]:
        if a.only and p["name"] not in a.only:
            continue
        r = man["repositories"][p["repo"]]; root = os.path.abspath(os.path.join(a.src, r["root"]))
        tf = os.path.join(a.truth, r["root"], p["name"] + ".truth.json")
        if not os.path.exists(tf):
            continue
        args, it = [], iter(p["args"])
        for x in it:
            v = next(it); args += [x, os.path.join(root, v) if x == "-I" else v]
        truth = defaultdict(lambda: [0.0, 0.0, set()])
        for c in json.load(open(tf))["cases"]:
            t = truth[(c["file"], c["line"], c["space"], c["op"])]
            t[0] += c["wavefronts"] if c["space"] == "shared" else c["sectors"]
            t[1] += c["ideal_wavefronts"] if c["space"] == "shared" else c["ideal_sectors"]
            t[2].update(c["kernels"])
        recs, lines, kernels, diags = defaultdict(list), set(), set(), set()
        for d in p["analyse"]:
            rep = warplint(binary, "report", args, os.path.join(root, d))
            kernels.update(k["name"] for k in rep.get("kernels", []))
            for x in rep.get("accesses", []):
                f = os.path.relpath(os.path.abspath(x["file"]), root)
                recs[(f, x["line"], x.get("space"), x.get("op"))].append(x); lines.add((f, x["line"]))
            chk = warplint(binary, "check", args, os.path.join(root, d))
            for x in (chk if isinstance(chk, list) else chk.get("diagnostics", [])):
                sp = RULE_SPACE.get(x["code"])
                f = os.path.relpath(os.path.abspath(x["filename"]), root)
                # where Nsight Compute counts it, as compare.py matches:
                # its line, the line nvcc hoists it to, its inlined call
                diags.add((f, x["location"]["row"], sp))
                for moved in ("hoisted_to_line", "counted_on_line"):
                    if x.get(moved):
                        diags.add((f, x[moved], sp))
                inl = x.get("inlined_at")
                if inl:
                    for c in [inl] + inl.get("other_calls", []):
                        diags.add((os.path.relpath(os.path.abspath(c["filename"]), root), c["location"]["row"], sp))
        for k, (c, i, kern) in sorted(truth.items()):
            if not i:
                continue
            want = c / i; rs = recs.get(k, [])
            num = den = 0.0
            for x in rs:
                if x.get("status") == "unknown":
                    continue
                b = x.get(k[2]) or {}
                cost, ideal = (b.get("wavefronts"), b.get("ideal_wavefronts")) if k[2] == "shared" else (b.get("sectors"), b.get("ideal_sectors"))
                if cost is not None and ideal:
                    w = float(x.get("executions") or 1); num += cost * w; den += ideal * w
            got = num / den if den else None
            if got is None:
                unk = [x for x in rs if x.get("status") == "unknown"]
                if unk:
                    why = "unknown:" + Counter(x.get("unknown_kind", "?") for x in unk).most_common(1)[0][0]
                elif rs:
                    why = "never-executes"
                elif (k[0], k[1]) in lines:
                    why = "other-space-or-op"
                elif {x.split("<")[0] for x in kern} & {x.split("<")[0] for x in kernels}:
                    why = "line-not-recorded"
                else:
                    why = "kernel-not-analysed"
                cov[why] += 1; per_prog[p["name"]][why] += 1
                if a.list:
                    detail = unk[0].get("unknown_reason", "") if rs and unk else ""
                    print(f"{p['name']}: {k[0]}:{k[1]} {k[2]} {k[3]} measured {want:.2f}: {why} [{', '.join(sorted(kern))}] {detail}")
            if want >= 1.5 and (k[0], k[1], k[2]) not in diags:
                why = "no-prediction" if got is None else ("predicted-below-1.5" if got < 1.5 else "predicted-excess-no-diagnostic")
                rec[why] += 1
                if a.list:
                    g = "-" if got is None else f"{got:.2f}"
                    print(f"{p['name']}: {k[0]}:{k[1]} {k[2]} {k[3]} measured {want:.2f} predicted {g}: NOT CAUGHT ({why})")
    print("measured lines without a prediction:", sum(cov.values()))
    for k, v in cov.most_common():
        print(f"  {v:5d}  {k}")
    print("measured excess lines (space, op) without a diagnostic:", sum(rec.values()))
    for k, v in rec.most_common():
        print(f"  {v:5d}  {k}")
    print("programs with uncovered lines:", ", ".join(f"{n} {sum(c.values())}" for n, c in sorted(per_prog.items(), key=lambda x: -sum(x[1].values()))))

if __name__ == "__main__":
    main()
