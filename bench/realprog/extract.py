#!/usr/bin/env python3
"""Extract the program sources named in programs.json from bare git mirrors.

usage: extract.py [--mirror DIR] [--manifest programs.json] DEST
For each repository of the manifest, the paths its programs list (`paths`, plus
the repository's `common` paths) are written under DEST/<root>/ from the
commit the manifest pins. Mirrors are looked up as DIR/<owner>+<name>/repo
(the layout of /work/.mirror) or DIR/<owner>+<name> (a bare clone).
Blobs a partial mirror lacks (large data files) are skipped with a note.
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def git_dir(mirror, repo):
    base = os.path.join(mirror, repo.replace("/", "+"))
    for d in (os.path.join(base, "repo"), base):
        if os.path.isdir(os.path.join(d, "objects")):
            return d
    return None

def extract(gd, commit, paths, dest):
    ls = subprocess.run(["git", "--git-dir", gd, "ls-tree", "-r", "-z", commit, "--"] + paths,
                        capture_output=True, check=True).stdout.split(b"\0")
    entries = []
    for e in ls:
        if not e:
            continue
        meta, path = e.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and b"/doc/" not in path and b"/.vscode/" not in path:
            entries.append((mode, sha.decode(), path.decode()))
    if not entries:
        return 0, 0
    chk = subprocess.run(["git", "--git-dir", gd, "cat-file", "--batch-check"],
                         input="".join(s + "\n" for _, s, _ in entries), capture_output=True, text=True).stdout.splitlines()
    n = missing = 0
    for (mode, sha, path), c in zip(entries, chk):
        if c.endswith("missing"):
            missing += 1
            continue
        data = subprocess.run(["git", "--git-dir", gd, "cat-file", "blob", sha], capture_output=True, check=True).stdout
        out = os.path.join(dest, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
        if mode == b"100755":
            os.chmod(out, 0o755)
        n += 1
    return n, missing

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dest")
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--manifest", default=os.path.join(HERE, "programs.json"))
    ap.add_argument("--only", action="append", help="program names (default: all)")
    a = ap.parse_args()
    man = json.load(open(a.manifest))
    for rname, r in man["repositories"].items():
        progs = [p for p in man["programs"] if p["repo"] == rname and (not a.only or p["name"] in a.only)]
        if not progs:
            continue
        gd = git_dir(a.mirror, rname)
        if gd is None:
            print(f"{rname}: no mirror under {a.mirror}; clone it and check out {r['commit']}", file=sys.stderr)
            continue
        paths = sorted(set(r.get("common", []) + [x for p in progs for x in p["paths"]]))
        n, missing = extract(gd, r["commit"], paths, os.path.join(a.dest, r["root"]))
        print(f"{rname}@{r['commit'][:10]}: {n} files -> {os.path.join(a.dest, r['root'])}" + (f" ({missing} blobs absent from the mirror, skipped)" if missing else ""))

if __name__ == "__main__":
    main()
