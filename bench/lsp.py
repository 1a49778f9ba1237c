#!/usr/bin/env python3
"""The language server's re-check latency: didChange to publishDiagnostics.

usage: bench/lsp.py FILE_OR_CORPUS_DIR [--bin target/release/warplint] [--runs 50]

Starts `warplint server`, opens one file (FILE, or the .cu file of the
folder nearest 500 lines), then --runs times sends one edit (a comment on the
last line grows by a character, as a keystroke does) and waits for the
diagnostics of that version. Prints the median, mean, min and max of the time
from sending the edit to receiving its diagnostics: the debounce
(`server::DEBOUNCE`), the analysis of the buffer with its headers and
project, and the protocol both ways. Edits are sent one after another's
result, so none is superseded. Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def nearest_500(root):
    best = None
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".cu"):
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    n = fh.read().count(b"\n")
                if best is None or abs(n - 500) < abs(best[0] - 500):
                    best = (n, p)
    return best[1] if best else None


class Server:
    def __init__(self, binary):
        self.p = subprocess.Popen([binary, "server"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def recv(self):
        length = 0
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("the server stopped")
            line = line.strip()
            if not line:
                break
            if line.startswith(b"Content-Length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            m = self.recv()
            if m.get("id") == i:
                return m.get("result")

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, uri, version):
        while True:
            m = self.recv()
            p = m.get("params") or {}
            if m.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri \
                    and p.get("version") == version:
                return p["diagnostics"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--bin", default="target/release/warplint")
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    path = os.path.abspath(a.path if os.path.isfile(a.path) else nearest_500(a.path) or "")
    if not os.path.isfile(path):
        sys.exit(f"no .cu file in {a.path}")
    text = open(path, encoding="utf-8", errors="replace").read()
    lines = text.count("\n")
    uri = "file://" + path
    s = Server(os.path.abspath(a.bin))
    folder = "file://" + os.path.dirname(path)
    s.request("initialize", {"processId": None, "rootUri": folder, "capabilities": {},
                             "workspaceFolders": [{"uri": folder, "name": "bench"}]})
    s.notify("initialized", {})
    text += "\n//"
    start = time.perf_counter()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "cuda",
                                                       "version": 0, "text": text}})
    n = len(s.diagnostics(uri, 0))
    first = time.perf_counter() - start
    end_line = text.count("\n")
    times = []
    for v in range(1, a.runs + 1):
        col = 2 + v - 1
        change = {"range": {"start": {"line": end_line, "character": col},
                            "end": {"line": end_line, "character": col}}, "text": "x"}
        t0 = time.perf_counter()
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                            "contentChanges": [change]})
        s.diagnostics(uri, v)
        times.append(time.perf_counter() - t0)
    s.request("shutdown", None)
    s.notify("exit", None)
    s.p.wait(timeout=30)
    ms = [t * 1000 for t in times]
    print(f"{path}: {lines} lines, {n} diagnostics; open to first diagnostics {first * 1000:.1f} ms")
    print(f"re-check after an edit, {a.runs} runs: median {statistics.median(ms):.1f} ms, "
          f"mean {statistics.mean(ms):.1f} ms, min {min(ms):.1f} ms, max {max(ms):.1f} ms")


if __name__ == "__main__":
    main()
