#!/usr/bin/env python3
"""The MLP model zoo against cuBLASLt: bench/results/h200/mlp-zoo.csv -> mlp-zoo.png and a summary.

usage: scripts/plot_zoo.py [mlp-zoo.csv] [out.png]

One line per model: baton-auto (tuned, solid) and baton-plan (untuned, dashed) as the ratio of their
median to cublaslt-graph's at the same M (below 1: baton faster). Prints per model the geomean and
maximum of both ratios and the M where the maximum is, which is what docs/mlp.md quotes.
"""
import csv
import math
import sys
from collections import defaultdict

MODELS = {  # (hidden, ffn) -> name, as in the issue and BENCHMARKS.md
    (12288, 6144): "GPT-3 TP8",
    (8192, 2752): "LLaMA-65B TP8",
    (4096, 11008): "Llama-2-7B",
    (8192, 7168): "Llama-2-70B TP4",
    # the models no table lists (bench/results/h100/mlp-unseen.csv.gz, docs/mlp.md)
    (4096, 14336): "Llama-3-8B",
    (4544, 18176): "Falcon-7B",
    (5120, 13824): "Llama-2-13B",
    (3584, 18944): "Qwen2-7B",
    (2560, 10240): "Phi-2",
    (8192, 3584): "Llama-3-70B TP8",
    (4096, 16384): "GPT-J-6B",
    (2600, 6920): "ragged 2600/6920",
}


def load(path):
    by = defaultdict(dict)  # (h, f) -> m -> variant -> median
    for r in csv.DictReader(open(path)):
        kv = dict(x.split("=") for x in r["shape"].split(";"))
        key = (int(kv["h"]), int(kv["f"]))
        if r["correct"] != "1":
            continue
        by[key].setdefault(int(kv["m"]), {})[r["variant"]] = float(r["median_us"])
    return by


def summary(by):
    out = {}
    for key, ms in sorted(by.items()):
        rows = []
        for m, v in sorted(ms.items()):
            if "cublaslt-graph" in v and "baton-auto" in v and "baton-plan" in v:
                lt = v["cublaslt-graph"]
                rows.append((m, v["baton-auto"] / lt, v["baton-plan"] / lt))
        out[key] = rows
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/h200/mlp-zoo.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.replace(".csv", ".png")
    rows = summary(load(src))
    print("model | M | auto/cuBLASLt geomean | max (at M) | plan/cuBLASLt geomean | max (at M)")
    for key, rs in rows.items():
        if not rs:
            continue
        g = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
        ma = max(rs, key=lambda r: r[1])
        mp = max(rs, key=lambda r: r[2])
        print(f"{MODELS.get(key, key)} | {rs[0][0]}-{rs[-1][0]} ({len(rs)}) | {g([r[1] for r in rs]):.3f} | "
              f"{ma[1]:.2f} ({ma[0]}) | {g([r[2] for r in rs]):.3f} | {mp[2]:.2f} ({mp[0]})")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for i, (key, rs) in enumerate(rows.items()):
        if not rs:
            continue
        color = f"C{i}"
        ms = [r[0] for r in rs]
        ax.plot(ms, [r[1] for r in rs], "-o", ms=3, color=color, label=f"{MODELS.get(key, key)}: baton-auto")
        ax.plot(ms, [r[2] for r in rs], "--", color=color, alpha=0.6, label=f"{MODELS.get(key, key)}: baton-plan")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axhline(1.02, color="gray", lw=0.8, ls=":")
    ax.axhline(1.10, color="gray", lw=0.8, ls="-.")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("median time / cuBLASLt-graph")
    ax.set_title("MLP zoo on the H200: baton::ops::Mlp against cuBLASLt in a CUDA graph")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("wrote", dst)


if __name__ == "__main__":
    main()
