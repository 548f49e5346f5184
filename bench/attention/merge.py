#!/usr/bin/env python3
"""Joins the attention bench's rows (baton_bench_attention: baton-*, cutlass-*, bound-concurrent) and
the PyTorch baseline's (bench/attention/sdpa_baseline.py: cublaslt-sdpa-flash-graph,
cublaslt-sdpa-cudnn-graph) of one workload into one CSV + JSON in the common schema (BENCHMARKS.md
"Result files"), and prints issue 19's targets.

best_baseline_us and ratio_to_best_baseline are recomputed per (workload, shape) over the correct
baseline rows of both files. A baseline is every variant that starts with neither `baton-` nor
`bound-`: bound-concurrent runs the kernels with no dependency between them (BENCHMARKS.md's overlap
bound, which no dependent chain beats), so it is reported against, never picked as the best baseline.

Issue 19's targets (H200, one run), printed with pass / miss and the numbers:
  * baton-auto is never above 1.02x the best baseline, at any shape (a shape whose auto row is
    incorrect or missing is a miss);
  * geomean of baton-auto / best baseline <= 0.92 over the prefill shapes, and <= 0.95 over the
    decode shapes when there are decode rows.
Also printed per shape: auto against cutlass-pdl-graph and the share of the overlap bound it took.

  python3 bench/attention/merge.py --bench attention-gpt3.csv --sdpa sdpa-gpt3.csv --out attention-gpt3.csv

--parts joins the per-kernel files instead (the bench's --breakdown: part-qkv-gemm, part-fmha,
part-oproj-gemm, the op's flat GEMMs part-qkv-gemm-flat and part-oproj-gemm-flat; sdpa_baseline.py's --breakdown: part-qkv-cublaslt, part-sdpa-<backend>,
part-oproj-cublaslt) and prints, per shape, each of our kernels against the baseline's part:

  python3 bench/attention/merge.py --parts attention-gpt3-breakdown.csv sdpa-gpt3-breakdown.csv \
      --out attention-gpt3-breakdown.csv

The output may be one of the inputs (read first, then written). A missing or empty --sdpa file is a
warning (the bench's baselines still count). Extra columns are the union of both files' extra
columns, in first-seen order (empty where a file lacks one). Exit status 0 when the files were
merged (targets missed or not; --strict: 1 when a target is missed), 2 on unreadable input.
"""
import argparse
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402

SCHEMA = results.SCHEMA
AUTO_MAX = 1.02
GEOMEAN_TARGET = {"prefill": 0.92, "decode": 0.95}
fnum, parse_shape = results.fnum, results.parse_shape


def is_baseline(variant):
    return not variant.startswith(("baton-", "bound-"))


def counts(r):
    """Whether row r competes for its shape's best baseline: a correct baseline with a positive time."""
    return is_baseline(r["variant"]) and r["correct"] == "1" and (fnum(r["median_us"]) or 0) > 0


def read(path):
    try:
        return results.read_rows(path)
    except results.SchemaError as e:
        print(f"merge.py: {e}", file=sys.stderr)
        sys.exit(2)


def shape_sort_key(shape):
    kv = parse_shape(shape)

    def num(k):
        try:
            return int(kv.get(k, 0))
        except ValueError:
            return 0
    return (kv.get("phase", ""), num("heads"), num("hidden"), num("batch"), num("kv"), num("seq"), shape)


# Our kernel -> the baseline's part it stands against (the best SDPA backend for the attention).
PART_PAIRS = (("part-qkv-gemm", "part-qkv-cublaslt"), ("part-qkv-gemm-flat", "part-qkv-cublaslt"), ("part-fmha", "part-sdpa-"),
              ("part-oproj-gemm", "part-oproj-cublaslt"), ("part-oproj-gemm-flat", "part-oproj-cublaslt"))


def merge_parts(paths, out):
    rows = []
    for p in paths:
        if not os.path.isfile(p):
            print(f"merge.py: no such file: {p}", file=sys.stderr)
            return 2
        rows += read(p)
    extra = results.extra_columns(rows)
    rows.sort(key=lambda r: (r["workload"], shape_sort_key(r["shape"]), r["variant"]))
    json_path = results.write_rows(out, rows, SCHEMA + extra)
    by_shape = results.group_by_shape(rows)
    print(f"wrote {out} and {json_path}: {len(rows)} rows, {len(by_shape)} shapes (each kernel alone, us)")
    print(f"{'shape':<62} " + " ".join(f"{ours[5:]:>22}" for ours, _ in PART_PAIRS))
    for k in sorted(by_shape, key=lambda k: (k[0], shape_sort_key(k[1]))):
        v = by_shape[k]
        cells = []
        for ours, theirs in PART_PAIRS:
            o = fnum(v[ours]["median_us"]) if ours in v else None
            cands = [fnum(r["median_us"]) for name, r in v.items() if name.startswith(theirs) and fnum(r["median_us"])]
            t = min(cands) if cands else None
            cells.append(f"{o:.1f}/{t:.1f}={o / t:.2f}x" if o and t else "-")
        print(f"{k[1]:<62} " + " ".join(f"{c:>22}" for c in cells))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="baton_bench_attention's CSV (attention-<workload>.csv)")
    ap.add_argument("--parts", nargs="+", metavar="CSV", help="per-kernel CSVs to join instead (see above)")
    ap.add_argument("--sdpa", help="sdpa_baseline.py's CSV (sdpa-<workload>.csv); missing: a warning")
    ap.add_argument("--out", required=True, help="merged CSV (a .json twin is written next to it)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    a = ap.parse_args(argv)
    if a.parts:
        return merge_parts(a.parts, a.out)
    if not a.bench:
        ap.error("--bench (or --parts) is required")

    if not os.path.isfile(a.bench):
        print(f"merge.py: no such file: {a.bench}", file=sys.stderr)
        return 2
    rows = read(a.bench)
    if a.sdpa and os.path.isfile(a.sdpa) and os.path.getsize(a.sdpa) > 0:
        rows += read(a.sdpa)
    else:
        print(f"warning: no SDPA rows ({a.sdpa or 'no --sdpa given'}): the best baseline is the bench's own",
              file=sys.stderr)
    extra = results.extra_columns(rows)
    best = results.set_best_baseline(rows, counts, median=fnum)
    order = {"baton-auto": 0}
    rows.sort(key=lambda r: (r["workload"], shape_sort_key(r["shape"]),
                             order.get(r["variant"], 1 if r["variant"].startswith("baton-") else
                                       3 if r["variant"].startswith("bound-") else 2), r["variant"]))
    json_path = results.write_rows(a.out, rows, SCHEMA + extra)
    by_shape = results.group_by_shape(rows)
    print(f"wrote {a.out} and {json_path}: {len(rows)} rows, {len(by_shape)} shapes")
    print(f"{'shape':<62} {'auto us':>9} {'best base':>10} {'best variant':<26} {'x best':>7} {'x pdl':>6} {'bound%':>7}")
    ratios = {"prefill": [], "decode": []}
    worst = (0.0, None)
    misses = []
    for k in sorted(by_shape, key=lambda k: (k[0], shape_sort_key(k[1]))):
        v = by_shape[k]
        phase = parse_shape(k[1]).get("phase", "prefill")
        auto = v.get("baton-auto")
        b = best.get(k)
        if not auto or auto["correct"] != "1" or not b:
            why = "no baton-auto row" if not auto else "baton-auto incorrect" if auto["correct"] != "1" else "no baseline"
            misses.append(f"{k[1]}: {why}")
            print(f"{k[1]:<62} {why}")
            continue
        am = float(auto["median_us"])
        ratio = am / b
        ratios.setdefault(phase, []).append(ratio)
        worst = max(worst, (ratio, k[1]))
        bname = min((x for x in v if is_baseline(x) and v[x]["correct"] == "1" and fnum(v[x]["median_us"])),
                    key=lambda x: float(v[x]["median_us"]))
        pdl = v.get("cutlass-pdl-graph")
        x_pdl = f"{am / float(pdl['median_us']):.3f}" if pdl and pdl["correct"] == "1" and fnum(pdl["median_us"]) else "-"
        # Share of the overlap the bound shows: (serial - auto) / (serial - bound), serial = the
        # kernels one after another (cutlass-graph).
        share = "-"
        bound, serial = v.get("bound-concurrent"), v.get("cutlass-graph")
        if bound and serial and bound["correct"] == "1" and serial["correct"] == "1":
            sm, bm = float(serial["median_us"]), float(bound["median_us"])
            if sm - bm > 0:
                share = f"{100.0 * (sm - am) / (sm - bm):.0f}%"
        print(f"{k[1]:<62} {am:>9.2f} {b:>10.2f} {bname:<26} {ratio:>7.3f} {x_pdl:>6} {share:>7}")
        if ratio > AUTO_MAX:
            misses.append(f"{k[1]}: auto {ratio:.3f}x the best baseline ({bname})")
    # A shape misses when its auto row is above the bound, incorrect or missing.
    passed = not misses and worst[1] is not None
    worst_txt = f"worst {worst[0]:.3f} at {worst[1]}" if worst[1] is not None else "no comparable baton-auto row"
    print(f"target: baton-auto <= {AUTO_MAX}x the best baseline at every shape: {'pass' if passed else 'MISS'} "
          f"({worst_txt}; {len(misses)} of {len(by_shape)} shapes missed)")
    ok = passed
    for m in misses:
        print(f"  miss: {m}")
    phases = {parse_shape(k[1]).get("phase", "prefill") for k in by_shape}
    for phase in ("prefill", "decode"):
        if phase not in phases:
            print(f"target: {phase} geomean <= {GEOMEAN_TARGET[phase]}: no {phase} rows")
            ok = ok and phase != "prefill"
            continue
        if not ratios.get(phase):
            print(f"target: {phase} geomean <= {GEOMEAN_TARGET[phase]}: MISS (no correct baton-auto row with a baseline)")
            ok = False
            continue
        g = results.geomean(ratios[phase])
        passed = g <= GEOMEAN_TARGET[phase]
        ok = ok and passed
        print(f"target: {phase} geomean of baton-auto / best baseline <= {GEOMEAN_TARGET[phase]}: "
              f"{'pass' if passed else 'MISS'} ({g:.3f} over {len(ratios[phase])} shapes)")
    return 1 if (a.strict and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
