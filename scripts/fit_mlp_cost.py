#!/usr/bin/env python3
"""Fit baton::ops::MlpCostModel (include/baton/ops/mlp_cost.hpp) to chains the H200 timed.

usage: scripts/fit_mlp_cost.py [bench/results/h200/mlp-cost-fit.csv] [--fit]

The CSV holds every chain (policy none, not swapped, no CTA pairs) that the op's tuning timed in the
zoo run (`baton::ops::mlp ... tuned on this GPU` log lines): the shape, the widths, splits, tile order
and GEMM2's launch, the measured median (us) and the model's prediction with the header's constants
(model_us). Without --fit it reports the model's rms log error and how close its choice per shape is
to the fastest chain timed there; with --fit (numpy + scipy) it re-fits the eight constants by
Nelder-Mead on the log error and prints them for mlp_cost.hpp. The model here is the header's,
line for line.
"""
import csv, heapq, math, sys
from collections import defaultdict

# MlpCostModel's defaults, in its order.
P0 = [0.4078, 0.0269, 2.631, 57136.0, 3.6942e6, 8.95, 1.81, 6.50]
NAMES = ["kblock_mma_us", "kblock_fixed_us", "cta_us", "sm_bytes_per_us", "hbm_bytes_per_us", "split_reduce_us",
         "launch_us", "serial_gap_us"]
SMS = 132


def cdiv(a, b):
    return (a + b - 1) // b


def gemm_us(P, m, n, k, w, split, group, sms=SMS):
    mma, fixed, cta, sm_bw, hbm, red = P[:6]
    rows, cols, kb = cdiv(m, 128), cdiv(n, w), cdiv(k, 64)
    group = max(1, min(group, rows))
    stream = w * 64 * 2 / sm_bw
    per_kb = {h: max(mma * w / 128 * h / 2, stream) + fixed for h in (1, 2)}
    free = [0.0] * sms
    span = 0.0
    for r0 in range(0, rows, group):
        for _ in range(cols):
            for r in range(r0, min(rows, r0 + group)):
                h = 1 if m - r * 128 <= 64 else 2
                for part in range(split):
                    blocks = kb // split + (1 if part < kb % split else 0)
                    t = heapq.heappop(free) + cta + blocks * per_kb[h]
                    heapq.heappush(free, t)
                    span = max(span, t)
    if split > 1:
        span += red * w / 128
    hbm_us = (n * k * 2 * cdiv(rows, group) + m * k * 2 + m * n * 2) / hbm
    return max(span, hbm_us)


def chain_us(P, r):
    n1 = 2 * r["f"] if r["act"] == "swiglu" else r["f"]
    return (gemm_us(P, r["m"], n1, r["h"], r["tile_n1"], r["split1"], r["group_m"]) +
            gemm_us(P, r["m"], r["h"], r["f"], r["tile_n2"], r["split2"], r["group_m"]) + P[6] + (0 if r["pdl"] else P[7]))


def load(path):
    rows = []
    for r in csv.DictReader(open(path)):
        for k in ("h", "f", "m", "group_m", "tile_n1", "split1", "tile_n2", "split2", "pdl"):
            r[k] = int(r[k])
        r["us"] = float(r["us"])
        rows.append(r)
    return rows


def report(P, rows):
    err = [math.log(chain_us(P, r) / r["us"]) for r in rows]
    by = defaultdict(list)
    for r in rows:
        by[(r["h"], r["f"], r["m"])].append(r)
    picks = []
    for rs in by.values():
        best = min(x["us"] for x in rs)
        pick = min(rs, key=lambda x: chain_us(P, x))
        picks.append(pick["us"] / best)
    g = math.exp(sum(math.log(x) for x in picks) / len(picks))
    print(f"{len(rows)} chains, {len(by)} shapes: rms log error {math.sqrt(sum(e * e for e in err) / len(err)):.4f}; "
          f"the model's choice among the timed chains: geomean {g:.4f}, max {max(picks):.3f} x the fastest")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = load(args[0] if args else "bench/results/h200/mlp-cost-fit.csv")
    report(P0, rows)
    if "--fit" in sys.argv:
        import numpy as np
        from scipy.optimize import minimize
        sample = rows[::3]
        loss = lambda lp: float(np.mean([math.log(chain_us(np.exp(lp), r) / r["us"]) ** 2 for r in sample]))
        res = minimize(loss, np.log(P0), method="Nelder-Mead", options=dict(maxiter=1500, xatol=1e-3, fatol=1e-6))
        P = list(np.exp(res.x))
        for n, v in zip(NAMES, P):
            print(f"  {n} = {v:.6g}")
        report(P, rows)


if __name__ == "__main__":
    main()
