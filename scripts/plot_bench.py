#!/usr/bin/env python3
"""Charts a baton result CSV (common schema): one line per variant, median time / best baseline per shape.
usage: plot_bench.py IN.csv OUT.png [--x KEY] [--title T]   (KEY: the shape key on the x axis, default m)"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args and args[0] in ("-h", "--help") else 2
    src, out = args[0], args[1]
    xkey, title = "m", src
    if "--x" in args:
        xkey = args[args.index("--x") + 1]
    if "--title" in args:
        title = args[args.index("--title") + 1]
    rows = list(csv.DictReader(open(src)))
    if not rows:
        print("no rows in", src)
        return 1
    series = {}
    for r in rows:
        shape = dict(kv.split("=", 1) for kv in r["shape"].split(";") if "=" in kv)
        if xkey not in shape or r["correct"] != "1" or float(r["best_baseline_us"]) <= 0:
            continue
        series.setdefault(r["variant"], []).append((float(shape[xkey]), float(r["ratio_to_best_baseline"])))
    fig, ax = plt.subplots(figsize=(11, 6))
    for name, pts in sorted(series.items()):
        pts.sort()
        style = "-o" if name.startswith("baton") else "--."
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name)
    ax.set_xscale("log", base=2)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_xlabel(xkey)
    ax.set_ylabel("median time / best baseline (lower is better)")
    env = rows[0]
    ax.set_title(f"{title}\n{env['gpu']}, driver {env['driver']}, CUDA {env['cuda']}, commit {env['commit']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
