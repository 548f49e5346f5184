#!/usr/bin/env python3
"""Markdown summary of an MLP breakdown CSV (bench/results/h200/mlp-*-breakdown.csv, written by
baton_bench_mlp --breakdown 1): per M, baton-auto's and cuBLASLt's pass split into GEMM1 alone, GEMM2
alone and the rest (chain - GEMM1 - GEMM2), and where baton-auto's gap to cuBLASLt comes from.

usage: mlp_breakdown.py mlp-gpt3-breakdown.csv [mlp-llama-breakdown.csv ...]
"""
import csv
import sys


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.setdefault(int(r["m"]), {})[r["variant"]] = r
    return rows


def table(path):
    rows = load(path)
    out = [path, "",
           "| M | auto chain µs | = GEMM1 | + GEMM2 | + rest | cuBLASLt chain | = GEMM1 | + GEMM2 | + rest "
           "| gap | from GEMM1 | from GEMM2 | from rest | auto GEMM1 / GEMM2 TB/s | cuBLASLt TB/s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(rows):
        a, b = rows[m].get("baton-auto"), rows[m].get("cublaslt-graph")
        if a is None or b is None:
            continue
        f = lambda r, k: float(r[k])
        gap = f(a, "chain_us") - f(b, "chain_us")
        out.append("| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %+.1f | %+.1f | %+.1f | %+.1f "
                   "| %.2f / %.2f | %.2f / %.2f |" % (
                       m, f(a, "chain_us"), f(a, "gemm1_us"), f(a, "gemm2_us"), f(a, "rest_us"),
                       f(b, "chain_us"), f(b, "gemm1_us"), f(b, "gemm2_us"), f(b, "rest_us"), gap,
                       f(a, "gemm1_us") - f(b, "gemm1_us"), f(a, "gemm2_us") - f(b, "gemm2_us"),
                       f(a, "rest_us") - f(b, "rest_us"), f(a, "gemm1_tb_per_s"), f(a, "gemm2_tb_per_s"),
                       f(b, "gemm1_tb_per_s"), f(b, "gemm2_tb_per_s")))
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    for p in argv[1:]:
        try:
            print(table(p))
        except (OSError, KeyError, ValueError) as e:
            print("mlp_breakdown.py: %s: %s" % (p, e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
