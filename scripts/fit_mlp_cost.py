#!/usr/bin/env python3
"""Fit baton::ops::MlpCostModel (include/baton/ops/mlp_cost.hpp) to chains the H200 timed.

usage: scripts/fit_mlp_cost.py [CSV] [--fit] [--rewrite-model]
       scripts/fit_mlp_cost.py --from-logs LOG... --run N --commit C [--append CSV]

CSV (default bench/results/h200/mlp-cost-fit.csv) holds chains without waits (policy none, no CTA
pairs, no L2 prefetch) that the op's tuning timed (`baton::ops::mlp ... tuned on this GPU` log lines):
the shape, each GEMM's width, split-K and swapped token tile (swap1/swap2: tokens per tile, 0 = plain;
a swapped GEMM's tile_n is its 128 weight rows), the tile order and GEMM2's launch, the measured median
(us), the model's prediction with the header's constants (model_us), and the run and commit it came from.

Without --fit it reports the model's rms log error (plain and swapped chains apart) and how close its
choice per shape (one run's timings of one model at one M; among the chains plan_mlp weighs, so the
plan's own choice) is to the fastest chain timed there; with
--fit (numpy + scipy) it re-fits the constants (but HELD) by least squares on the log error of every
other row and prints them for mlp_cost.hpp. --rewrite-model recomputes model_us with P0 (after the header changed). The model here is
the header's, line for line.

--from-logs turns bench logs into CSV rows (stdout, or appended to --append CSV): policy-none chains only,
without CTA or band pairs (`128x96p`, `128x192b`), persistent GEMMs (`128x256P`: the header's
persistent_tile_us was fitted apart, docs/mlp.md "Persistent CTAs"), the L2 prefetch (`/pf`) or 32-token
swapped tiles (the model here does not describe them); a chain timed twice at one shape (the plan is timed first and may recur among the candidates) is
one row with the mean of its medians.
"""
import gzip
import argparse, csv, heapq, math, re, sys
from collections import defaultdict

# MlpCostModel's defaults, in its order.
P0 = [0.39777, 0.0269, 3.9486, 57136.0, 3.6942e6, 5.5751, 1.81, 3.7821, 0.63995, 0.36789, 0.94124]
NAMES = ["kblock_mma_us", "kblock_fixed_us", "cta_us", "sm_bytes_per_us", "hbm_bytes_per_us", "split_reduce_us",
         "launch_us", "serial_gap_us", "split_part_us", "mma_power_gain", "swapped_act_split_part_us"]
# Held at P0 by --fit: not separable from cta_us / the GEMMs (a free fit drives them to 0).
HELD = ("kblock_fixed_us", "sm_bytes_per_us", "hbm_bytes_per_us", "launch_us")
SMS = 132
HBM_PEAK_FIT = 4.8e6  # kMlpCostFitHbmPeakBytesPerUs: the H200's peak, bytes per microsecond
TILE_M, TILE_K = 128, 64
COLUMNS = ["h", "f", "act", "m", "group_m", "tile_n1", "split1", "tile_n2", "split2", "pdl", "us", "model_us", "run",
           "commit", "swap1", "swap2"]
INTS = ("h", "f", "m", "group_m", "tile_n1", "split1", "tile_n2", "split2", "pdl", "swap1", "swap2")


HBM_FLOOR_BLEND = 8.0  # MlpCostModel::hbm_floor_blend (chosen, held: not among P)


def with_hbm_floor(t, hbm_us, p=None):
    """detail::with_hbm_floor: the smooth max (t^p + hbm^p)^(1/p) of the SM-side time and the HBM floor."""
    p = HBM_FLOOR_BLEND if p is None else p
    if p <= 0 or t <= 0 or hbm_us <= 0:
        return max(t, hbm_us)
    hi, lo = max(t, hbm_us), min(t, hbm_us)
    return hi * (1 + (lo / hi) ** p) ** (1 / p)


def cdiv(a, b):
    return (a + b - 1) // b


def mma_scale(P, duty, ctas, sms=SMS):
    """detail::mma_power_scale: the tensor cores' k-block time at the GEMM's MMA load (its CTAs' mean tensor-core
    duty times the share of SMs they fill), 1 at full load."""
    load = duty * min(1.0, ctas / sms)
    return 1 - P[9] * (1 - load)


def swapped_gemm_us(P, m, n, k, tokens, split, sms=SMS, act=False):
    """mlp_swapped_gemm_cost_us: waves of equal (weight tile, token tile, part) CTAs."""
    mma, fixed, cta, sm_bw, hbm, red = P[:6]
    token_tiles, weight_tiles, kb = cdiv(m, tokens), cdiv(n, TILE_M), cdiv(k, TILE_K)
    stream = TILE_M * TILE_K * 2 / sm_bw
    ctas = token_tiles * weight_tiles * split
    mma_kb = mma * tokens / 128
    per_kb = max(mma_kb * mma_scale(P, min(1.0, mma_kb / stream), ctas, sms), stream) + fixed
    longest = cdiv(kb, split)
    t = cdiv(ctas, sms) * (cta + longest * per_kb)
    if split > 1:
        t += (red + (P[8] + (P[10] if act else 0)) * split) * tokens / 128
    hbm_us = (n * k * 2 + m * k * 2 + m * n * 2) / hbm
    return with_hbm_floor(t, hbm_us)


def gemm_us(P, m, n, k, w, split, group, swap=0, act=False, sms=SMS):
    """mlp_gemm_cost_us: the list schedule of the plain GEMM's CTAs, or the swapped form (act: GEMM1)."""
    if swap > 0:
        return swapped_gemm_us(P, m, n, k, swap, split, sms, act)
    mma, fixed, cta, sm_bw, hbm, red = P[:6]
    rows, cols, kb = cdiv(m, TILE_M), cdiv(n, w), cdiv(k, TILE_K)
    group = max(1, min(group, rows))
    stream = w * TILE_K * 2 / sm_bw
    mma_kb = {h: mma * w / 128 * h / 2 for h in (1, 2)}
    halves = [1 if m - r * TILE_M <= TILE_M // 2 else 2 for r in range(rows)]
    duty = sum(min(1.0, mma_kb[h] / stream) for h in halves) / rows
    scale = mma_scale(P, duty, rows * cols * split, sms)
    per_kb = {h: max(mma_kb[h] * scale, stream) + fixed for h in (1, 2)}
    free = [0.0] * sms
    span = 0.0
    for r0 in range(0, rows, group):
        for _ in range(cols):
            for r in range(r0, min(rows, r0 + group)):
                h = 1 if m - r * TILE_M <= TILE_M // 2 else 2
                for part in range(split):
                    blocks = kb // split + (1 if part < kb % split else 0)
                    t = heapq.heappop(free) + cta + blocks * per_kb[h]
                    heapq.heappush(free, t)
                    span = max(span, t)
    if split > 1:
        span += (red + P[8] * split) * w / 128
    hbm_us = (n * k * 2 * cdiv(rows, group) + m * k * 2 + m * n * 2) / hbm
    return with_hbm_floor(span, hbm_us)


def gemms(r):
    """The chain's two GEMMs as gemm_us arguments (m, n, k, width, split, group, swap, act)."""
    n1 = 2 * r["f"] if r["act"] == "swiglu" else r["f"]
    return ((r["m"], n1, r["h"], r["tile_n1"], r["split1"], r["group_m"], r["swap1"], True),
            (r["m"], r["h"], r["f"], r["tile_n2"], r["split2"], r["group_m"], r["swap2"], False))


def chain_us(P, r, cache=None):
    """mlp_chain_cost_us. cache: a dict for one P (GEMMs recur across chains)."""
    total = 0.0
    for g in gemms(r):
        if cache is None:
            total += gemm_us(P, *g)
        else:
            if g not in cache:
                cache[g] = gemm_us(P, *g)
            total += cache[g]
    return total + P[6] + (0 if r["pdl"] else P[7])


def load(path):
    rows = []
    for r in csv.DictReader(open_text(path)):
        for k in INTS:
            r[k] = int(r.get(k) or 0)  # rows from before the swapped GEMMs: swap1 = swap2 = 0
        r["us"] = float(r["us"])
        rows.append(r)
    return rows


def swapped(r):
    return r["swap1"] > 0 or r["swap2"] > 0


SWAP_TILES = (144, 160, 192, 224)  # kMlpSwapWideTiles


SWAP_TWO_TILE_M, SWAP_MAX_M = 2 * max(SWAP_TILES), 9 * TILE_M  # kMlpSwapTwoTileM, kMlpSwapMaxM


def swap_weighed(t, m):
    """mlp_swap_tile_weighed: at 32 < m <= 448 (kMlpSwapTwoTileM), one tile of 160 or 192 (or 144) that covers
    m, or two of any wide width; 144 only as two tiles at m = 257-288 (mlp_swap_tile_serves); at 448 < m <=
    1152 (kMlpSwapMaxM) three or more tiles of 160, 192 or 224."""
    if t not in SWAP_TILES or not 32 < m <= SWAP_MAX_M:
        return False
    if t == 144 and not 2 * TILE_M < m <= 2 * 144:
        return False
    if m > SWAP_TWO_TILE_M:
        return True
    return t <= 192 if m <= t else 2 * t >= m


def plan_may_choose(r, sms=SMS):
    """Whether plan_mlp (include/baton/ops/mlp.hpp) weighs this chain: its tile order, split-K only over
    fewer tiles than SMs in parts of >= 8 k-blocks (a swapped GEMM in at most 3), a swapped GEMM where
    swap_weighed says, GEMM2 PDL-launched iff GEMM1's CTAs make one wave."""
    m, rows = r["m"], cdiv(r["m"], TILE_M)
    if r["group_m"] != (rows if rows < 8 else 8):
        return False
    ctas1 = None
    for (_, n, k, w, split, _, swap, _) in gemms(r):
        if swap and not swap_weighed(swap, m):
            return False
        tiles = cdiv(n, TILE_M) * cdiv(m, swap) if swap else rows * cdiv(n, w)
        if split > 8 or (split > 1 and (split > cdiv(k, TILE_K) // 8 or tiles >= sms or (swap and split > 3))):
            return False
        if ctas1 is None:
            ctas1 = tiles * split
    return r["pdl"] == int(ctas1 <= sms)


def rms(errs):
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else float("nan")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def report(P, rows, detail=False):
    cache = {}
    model = [chain_us(P, r, cache) for r in rows]
    err = [math.log(u / r["us"]) for u, r in zip(model, rows)]
    plain = [e for e, r in zip(err, rows) if not swapped(r)]
    swap = [e for e, r in zip(err, rows) if swapped(r)]
    print(f"{len(rows)} chains: rms log error {rms(err):.4f} (plain {len(plain)}: {rms(plain):.4f}, mean "
          f"{sum(plain) / max(1, len(plain)):+.4f}; swapped {len(swap)}: {rms(swap):.4f}, mean "
          f"{sum(swap) / max(1, len(swap)):+.4f})")
    # The choice per shape (one run's timings of one model at one M): the chain with the least modeled time
    # among those plan_mlp weighs (what the plan runs), against the fastest chain timed there.
    by = defaultdict(list)
    for u, r in zip(model, rows):
        by[(r["run"], r["h"], r["f"], r["m"])].append((u, r))
    picks = {}
    for key, rs in by.items():
        best = min(rs, key=lambda x: x[1]["us"])[1]
        weighed = [x for x in rs if plan_may_choose(x[1])] or rs
        pick = min(weighed, key=lambda x: x[0])[1]
        picks[key] = (pick["us"] / best["us"], pick, best)

    def line(name, keys):
        xs = [picks[k][0] for k in keys]
        if xs:
            print(f"  {name}: {len(xs)} shapes, the plan's choice geomean {geomean(xs):.4f}, max {max(xs):.3f} x the "
                  f"fastest timed; within 5% at {sum(x <= 1.05 for x in xs)}")

    line("all", list(picks))
    line("with swapped candidates", [k for k, rs in by.items() if any(swapped(r) for _, r in rs)])
    line("M = 129..192", [k for k in picks if 129 <= k[3] <= 192])
    for run in sorted({k[0] for k in picks}, key=int):
        line(f"run {run}", [k for k in picks if k[0] == run])
    if detail:
        def form(r):
            g = lambda w, sw: f"swapped {sw}" if sw else f"{w}"
            return f"{g(r['tile_n1'], r['swap1'])},{g(r['tile_n2'], r['swap2'])}/s{r['split1']}.{r['split2']}" \
                   f"{'/pdl' if r['pdl'] else '/2 launches'}"
        for k in sorted(picks, key=lambda k: (int(k[0]), k[1], k[2], k[3])):
            x, pick, best = picks[k]
            if x > 1.03:
                print(f"    run {k[0]} h={k[1]} f={k[2]} m={k[3]}: {form(pick)} {pick['us']} us, the fastest "
                      f"{form(best)} {best['us']} us ({x:.3f})")
    return rms(err), rms(plain), rms(swap), geomean([x[0] for x in picks.values()])


# ---- bench logs -> CSV rows ----------------------------------------------------------------------------
HEAD = re.compile(r"baton::ops::mlp m=(\d+) h=(\d+) f=(\d+) (gelu|swiglu): .*tuned on this GPU \([^)]*\): (.*)$")
CAND = re.compile(r"^(\w+)/Grouped\{(\d+)\}/(swapped )?128x(\d+)([pbPS]?),(swapped )?128x(\d+)([pbPS]?)/s(\d+)\.(\d+)(/pf\d+)?"
                  r"/(pdl|2 launches) ([0-9.]+)$")


def from_logs(paths, run, commit):
    out = []
    for path in paths:
        for text in open(path):
            head = HEAD.search(text)
            if not head:
                continue
            m, h, f, act = int(head[1]), int(head[2]), int(head[3]), head[4]
            chains = {}
            # The list may end with "; not tried: ..." (candidates the kernel set lacks).
            for cand in re.split(r" us(?:, |$)", head[5].split("; not tried")[0].strip()):
                if not cand:
                    continue
                c = CAND.match(cand)
                if not c:
                    sys.exit(f"{path}: cannot parse candidate '{cand}'")
                policy, group, sw1, w1, p1, sw2, w2, p2, s1, s2, pf, launch, us = c.groups()
                if policy != "none" or p1 or p2 or pf:
                    continue
                swap1, swap2 = (int(w1) if sw1 else 0), (int(w2) if sw2 else 0)
                if 32 in (swap1, swap2):
                    continue
                key = (int(group), 128 if sw1 else int(w1), int(s1), 128 if sw2 else int(w2), int(s2),
                       int(launch == "pdl"), swap1, swap2)
                chains.setdefault(key, []).append(float(us))
            for (group, w1, s1, w2, s2, pdl, swap1, swap2), uss in chains.items():
                r = dict(h=h, f=f, act=act, m=m, group_m=group, tile_n1=w1, split1=s1, tile_n2=w2, split2=s2, pdl=pdl,
                         us=round(sum(uss) / len(uss), 1), run=run, commit=commit, swap1=swap1, swap2=swap2)
                out.append(r)
    return out


def row_text(r, P):
    v = dict(r)
    v["model_us"] = f"{chain_us(P, r):.1f}"
    v["us"] = f"{r['us']:.1f}"
    return [str(v[c]) for c in COLUMNS]


def open_text(path, mode="r"):
    """The CSV, gzip-compressed when its name ends in .gz (bench/results stays small)."""
    if str(path).endswith(".gz"):
        return gzip.open(path, mode + "t", newline="")
    return open(path, mode, newline="")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="?", default="bench/results/h200/mlp-cost-fit.csv.gz")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--detail", action="store_true", help="list the shapes where the plan's choice is > 3%% off")
    ap.add_argument("--rewrite-model", action="store_true", help="recompute model_us with P0 and rewrite CSV")
    ap.add_argument("--from-logs", nargs="+", metavar="LOG")
    ap.add_argument("--run")
    ap.add_argument("--commit")
    ap.add_argument("--append", metavar="CSV")
    ap.add_argument("--hbm-peak", type=float, default=0, metavar="BYTES_PER_US",
                    help="score the model for a GPU of this peak HBM bandwidth (mlp_cost_model_for_hbm: the memory "
                         "floor scaled by its ratio to the H200's 4.8e6), e.g. 3.35e6 for the H100")
    a = ap.parse_args()
    if a.from_logs:
        if not a.run or not a.commit:
            ap.error("--from-logs needs --run and --commit")
        rows = from_logs(a.from_logs, a.run, a.commit)
        if a.append:
            with open_text(a.append, "a") as f:
                csv.writer(f, lineterminator="\n").writerows(row_text(r, P0) for r in rows)
            print(f"{len(rows)} chains appended to {a.append}", file=sys.stderr)
        else:
            w = csv.writer(sys.stdout, lineterminator="\n")
            w.writerow(COLUMNS)
            w.writerows(row_text(r, P0) for r in rows)
        return
    rows = load(a.csv)
    if a.rewrite_model:
        with open_text(a.csv, "w") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(COLUMNS)
            w.writerows(row_text(r, P0) for r in rows)
    if a.hbm_peak > 0:
        P = list(P0)
        P[4] *= a.hbm_peak / HBM_PEAK_FIT
        report(P, rows, a.detail)
        return
    report(P0, rows, a.detail)
    if a.fit:
        import numpy as np
        from scipy.optimize import least_squares
        sample = rows[::2]
        free = [i for i, n in enumerate(NAMES) if n not in HELD]

        def full(lp):
            P = list(P0)
            for i, v in zip(free, np.exp(lp)):
                P[i] = float(v)
            return P

        def residuals(lp):
            P, cache = full(lp), {}
            return np.array([math.log(chain_us(P, r, cache) / r["us"]) for r in sample])

        res = least_squares(residuals, np.log([P0[i] for i in free]), diff_step=1e-3, max_nfev=60)
        P = full(res.x)
        for n, v in zip(NAMES, P):
            print(f"  {n} = {v:.6g}")
        report(P, rows, a.detail)


if __name__ == "__main__":
    main()
