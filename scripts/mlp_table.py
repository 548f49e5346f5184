#!/usr/bin/env python3
"""Markdown summary of an MLP result CSV (bench/results/h200/mlp-*.csv): per M, baton-auto against the
floor, the best baseline and cuBLASLt, with the plan columns; then the geometric mean of baton-auto /
best baseline.   usage: mlp_table.py mlp-gpt3.csv [mlp-llama.csv ...]"""
import csv
import math
import sys

BASELINES = ("cutlass-stream", "cutlass-graph", "cutlass-pdl-graph", "cutlass-streamk-graph",
             "cutlass-persistent-graph", "cublaslt-graph", "cutlass-wide-graph", "cutlass-wide2-graph")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    for path in sys.argv[1:]:
        rows = list(csv.DictReader(open(path)))
        shapes = []
        for r in rows:
            if r["shape"] not in shapes:
                shapes.append(r["shape"])
        print(f"\n{path} (commit {rows[0]['commit']}, {rows[0]['gpu']})\n")
        print("| M | baton-auto µs | floor µs | auto/floor | best baseline | auto/best | cuBLASLt µs | auto/cuBLASLt | policy | split-K | tiles | group_m |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        ratios = []
        for s in shapes:
            at = {r["variant"]: r for r in rows if r["shape"] == s}
            a = at.get("baton-auto")
            if a is None or float(a["median_us"]) <= 0:
                continue
            base = [at[v] for v in BASELINES if v in at and float(at[v]["median_us"]) > 0]
            best = min(base, key=lambda r: float(r["median_us"]))
            lt = at.get("cublaslt-graph")
            am = float(a["median_us"])
            ratios.append(am / float(best["median_us"]))
            m = s.split(";")[0].split("=")[1]
            print(f"| {m} | {am:.1f} | {float(a['floor_us']):.1f} | {am / float(a['floor_us']):.2f} | "
                  f"{best['variant']} {float(best['median_us']):.1f} | {am / float(best['median_us']):.3f} | "
                  f"{float(lt['median_us']):.1f} | {am / float(lt['median_us']):.3f} | {a.get('policy', '-')} | "
                  f"{a.get('split_k', '-')} | {a.get('tiles', '-')} | {a.get('group_m', '-')} |")
        if ratios:
            g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"\ngeometric mean of baton-auto / best baseline over {len(ratios)} shapes: {g:.3f}; "
                  f"all rows correct: {all(r['correct'] == '1' for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
