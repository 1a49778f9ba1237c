#!/usr/bin/env python3
"""Build and measure every program of programs.json on the GPU machine.

usage: measure_all.py --src SRC --out WORK [--jobs 6] [--build-jobs 16] [--deadline 540] [--timeout 240] [--only NAME ...]
SRC holds the extracted sources (extract.py): SRC/<root>/<dir>. Each program is
built in its folder (`build`, then `prep` when given) with
NVFLAGS='-O3 -lineinfo -arch=sm_90 -include compat.h', then measured with
measure_program.sh (ncu source counters) into WORK/truth/<repo root>/NAME.truth.json.
One failing or hanging program stops none of the others (per-step timeouts, own
process groups); nothing new starts once --deadline seconds have passed, and what
still runs then is stopped. Writes WORK/summary.tsv.
"""
import argparse, concurrent.futures as cf, json, os, shlex, signal, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.time()

def sh(cmd, cwd, log, timeout, env):
    with open(log, "a") as f:
        f.write(f"$ {cmd if isinstance(cmd, str) else shlex.join(cmd)}\n"); f.flush()
        p = subprocess.Popen(cmd, cwd=cwd, shell=isinstance(cmd, str), stdout=f, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True, executable="/bin/bash" if isinstance(cmd, str) else None)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL); p.wait()
            f.write(f"TIMEOUT after {timeout:.0f}s\n")
            return 124

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True); ap.add_argument("--out", required=True)
    ap.add_argument("--manifest", default=os.path.join(HERE, "programs.json"))
    ap.add_argument("--jobs", type=int, default=6); ap.add_argument("--build-jobs", type=int, default=16)
    ap.add_argument("--deadline", type=float, default=540); ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    man = json.load(open(a.manifest))
    progs = [p for p in man["programs"] if not a.only or p["name"] in a.only]
    src, out = os.path.abspath(a.src), os.path.abspath(a.out)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    env = dict(os.environ, TOOLS=HERE, NVFLAGS=f"-O3 -lineinfo -arch=sm_90 -include {HERE}/compat.h")
    left = lambda: a.deadline - (time.time() - T0)
    res = {p["name"]: dict(build="-", measure="-", kernels=0, lines=0, secs=0.0) for p in progs}

    def build(p):
        r = man["repositories"][p["repo"]]; cwd = os.path.join(src, r["root"], p["dir"])
        log = os.path.join(out, "logs", p["name"] + ".build.log")
        if left() < 30:
            res[p["name"]]["build"] = "skipped"; return False
        rc = sh(p["build"], cwd, log, min(300, left()), env)
        if rc == 0 and p.get("prep"):
            rc = sh(p["prep"], cwd, log, min(120, left()), env) and 200 + rc
        res[p["name"]]["build"] = rc
        return rc == 0

    def measure(p):
        r = man["repositories"][p["repo"]]; root = os.path.join(src, r["root"]); cwd = os.path.join(root, p["dir"])
        tdir = os.path.join(out, "truth", r["root"]); os.makedirs(tdir, exist_ok=True)
        log = os.path.join(out, "logs", p["name"] + ".measure.log")
        if left() < 20:
            res[p["name"]]["measure"] = "skipped"; return
        t = time.time()
        rc = sh(["bash", os.path.join(HERE, "measure_program.sh"), p["name"], root, tdir] + shlex.split(p["run"]),
                cwd, log, min(a.timeout, left()), env)
        s = res[p["name"]]; s["measure"] = rc; s["secs"] = round(time.time() - t, 1)
        try:
            s["kernels"] = open(os.path.join(tdir, p["name"] + ".ncu.log")).read().count("==PROF== Profiling")
            s["lines"] = len(json.load(open(os.path.join(tdir, p["name"] + ".truth.json")))["cases"])
        except Exception:
            pass

    with cf.ThreadPoolExecutor(a.build_jobs) as ex:
        built = [p for p, ok in zip(progs, ex.map(build, progs)) if ok]
    print(f"[{time.time() - T0:.0f}s] built {len(built)}/{len(progs)}", flush=True)
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        list(ex.map(measure, built))
    retry = [p for p in built if res[p["name"]]["lines"] == 0 and res[p["name"]]["measure"] != 124]
    print(f"[{time.time() - T0:.0f}s] measured; retrying {len(retry)} one at a time", flush=True)
    for p in retry:
        measure(p)
    with open(os.path.join(out, "summary.tsv"), "w") as f:
        f.write("name\tbuild\tmeasure\tkernels\tlines\tsecs\n")
        for n, s in res.items():
            f.write(f"{n}\t{s['build']}\t{s['measure']}\t{s['kernels']}\t{s['lines']}\t{s['secs']}\n")
    print(open(os.path.join(out, "summary.tsv")).read(), flush=True)
    print(f"[{time.time() - T0:.0f}s] done", flush=True)

if __name__ == "__main__":
    main()
