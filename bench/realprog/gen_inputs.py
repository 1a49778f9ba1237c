#!/usr/bin/env python3
"""Small deterministic inputs for the Rodinia programs whose data sets are not in the repository.

  gen_inputs.py grid FILE ROWS COLS LAYERS BASE   hotspot/hotspot3D temperature or power: one float a line
  gen_inputs.py bfs FILE NODES                    Rodinia BFS graph (its text format, ~6 edges a node)
  gen_inputs.py pgm FILE ROWS COLS                ASCII PGM (P2) image for srad_v1
  gen_inputs.py btree KEYS CMDS N                 b+tree: N keys, then a command file (k: 10000 finds, j: 6000 range queries)
"""
import random, sys

def main():
    r = random.Random(1)
    k = sys.argv[1]
    if k == "grid":
        f, rows, cols, layers, base = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        with open(f, "w") as o:
            o.write("".join(f"{base * (1 + 0.1 * r.random()):.6f}\n" for _ in range(rows * cols * layers)))
    elif k == "bfs":
        f, n = sys.argv[2], int(sys.argv[3])
        adj = [[r.randrange(n) for _ in range(r.randint(2, 10))] for _ in range(n)]
        with open(f, "w") as o:
            o.write(f"{n}\n")
            s = 0
            for a in adj:
                o.write(f"{s} {len(a)}\n"); s += len(a)
            o.write(f"\n0\n\n{s}\n")
            o.write("".join(f"{d} {r.randint(1, 10)}\n" for a in adj for d in a))
    elif k == "pgm":
        f, rows, cols = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        with open(f, "w") as o:
            o.write(f"P2\n{cols} {rows}\n255\n")
            for i in range(rows):
                o.write(" ".join(str(r.randint(0, 255)) for _ in range(cols)) + "\n")
    elif k == "btree":
        keys, cmds, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        v = list(range(1, n + 1)); r.shuffle(v)
        with open(keys, "w") as o:
            o.write(f"{n}\n" + "".join(f"{x}\n" for x in v))
        with open(cmds, "w") as o:
            o.write("k 10000\nj 6000 3000\n")
    else:
        raise SystemExit(__doc__)

if __name__ == "__main__":
    main()
