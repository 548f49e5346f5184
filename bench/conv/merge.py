#!/usr/bin/env python3
"""Joins the conv bench's rows (baton_bench_conv: cutlass-*, baton-*) and the cuDNN baseline's
(bench/conv/cudnn_pairs.py: cudnn-graph) of one workload into one CSV + JSON in the common schema
(BENCHMARKS.md "Result files"), recomputing best_baseline_us and ratio_to_best_baseline per shape
over every correct baseline row of both files (cutlass-stream, cutlass-graph, cutlass-pdl-graph,
cudnn-graph), and prints the targets of issue 17 per shape:

  python3 bench/conv/merge.py --baton conv-resnet38.csv --cudnn cudnn-resnet38.csv --out conv-resnet38.csv

The output may be one of the inputs (read first, then written). Extra columns are the union of
both files' extra columns, in first-seen order (empty where a file lacks one).
"""
import argparse
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402

SCHEMA = results.SCHEMA
BASELINES = {"cutlass-stream", "cutlass-graph", "cutlass-pdl-graph", "cudnn-graph"}


def counts(r):
    """Whether row r competes for its shape's best baseline."""
    return r["variant"] in BASELINES and r["correct"] == "1" and r["median_us"]


def read(path):
    try:
        return results.read_rows(path)
    except results.SchemaError as e:
        sys.exit(f"merge.py: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baton", required=True, help="baton_bench_conv's CSV")
    ap.add_argument("--cudnn", required=True, help="cudnn_pairs.py's CSV (may be missing rows)")
    ap.add_argument("--out", required=True, help="merged CSV (a .json twin is written next to it)")
    a = ap.parse_args()
    rows = read(a.baton) + read(a.cudnn)
    extra = results.extra_columns(rows)
    best = results.set_best_baseline(rows, counts, median=float)
    rows.sort(key=lambda r: (r["workload"], int(r["shape"].split(";")[1].split("=")[1]),
                             int(r["shape"].split(";")[0].split("=")[1]), r["variant"]))
    results.write_rows(a.out, rows, SCHEMA + extra, json_path=a.out.rsplit(".", 1)[0] + ".json")
    # Issue 17's targets, per shape and over N <= 8.
    by_shape = results.group_by_shape(rows)
    auto_ratio, small = [], []
    worst = (0.0, None)
    wins = {}
    for k, v in by_shape.items():
        n = int(k[1].split(";")[0].split("=")[1])
        layer = k[1].split(";", 1)[1]
        if "baton-auto" in v and v["baton-auto"]["correct"] == "1" and best.get(k):
            ratio = float(v["baton-auto"]["median_us"]) / best[k]
            auto_ratio.append(ratio)
            worst = max(worst, (ratio, k[1]))
            if n <= 8:
                small.append(ratio)
        if n <= 4 and "cutlass-pdl-graph" in v:
            pdl = float(v["cutlass-pdl-graph"]["median_us"])
            synced = [float(v[x]["median_us"]) for x in ("baton-tile", "baton-kblock") if x in v and v[x]["correct"] == "1"]
            if synced:
                wins.setdefault(layer, []).append(min(synced) <= 0.85 * pdl)
    print(f"wrote {a.out} and its .json: {len(rows)} rows, {len(by_shape)} shapes")
    print(f"baton-auto / best baseline: worst {worst[0]:.3f} at {worst[1]} (target <= 1.02)")
    print(f"geomean over N <= 8: {results.geomean(small):.3f} (target <= 0.75)")
    won = [layer for layer, w in wins.items() if w and all(w)]
    print(f"layers where a synchronized chain beats cutlass-pdl-graph by >= 15% at every N <= 4: {len(won)} of "
          f"{len(wins)} {won} (target: at least half)")


if __name__ == "__main__":
    main()
