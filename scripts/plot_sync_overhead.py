#!/usr/bin/env python3
"""Plots sync-overhead.csv (bench --sync-overhead): GEMM2 with every semaphore posted, per policy,
as a ratio to the same GEMM2 without waits, against M, one panel per preset.

usage: plot_sync_overhead.py sync-overhead.csv out.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    panels = defaultdict(lambda: defaultdict(list))  # (h, f, act) -> variant -> [(m, ratio)]
    for r in rows:
        kv = dict(p.split("=") for p in r["shape"].split(";"))
        key = (int(kv["h"]), int(kv["f"]), kv["act"])
        panels[key][r["variant"]].append((int(kv["m"]), float(r["ratio_to_best_baseline"])))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (key, series) in zip(axes[0], sorted(panels.items())):
        for variant, pts in sorted(series.items()):
            pts.sort()
            ax.plot([m for m, _ in pts], [v for _, v in pts], marker="o", label=variant)
        ax.axhline(1.02, color="grey", linestyle="--", linewidth=0.8, label="kblock target 1.02")
        ax.axhline(1.01, color="grey", linestyle=":", linewidth=0.8, label="row target 1.01")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M (tokens)")
        ax.set_ylabel("time / GEMM2 without waits")
        ax.set_title("h=%d f=%d %s" % key)
        ax.legend(fontsize=8)
    fig.suptitle("baton wait path, every semaphore posted (H200)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
