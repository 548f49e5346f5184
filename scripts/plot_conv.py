#!/usr/bin/env python3
"""Charts conv-chain result CSVs (common schema of BENCHMARKS.md; extra columns allowed): one PNG per
workload, one subplot per layer (C@HW) with the batch on a log2 x axis, and one series per variant
(baton-auto, baton-<policy>, cutlass-graph, cutlass-pdl-graph, cudnn-graph, bound-concurrent, ...).

y = median_us / best baseline of that shape (log scale; below 1 beats every baseline). The best
baseline is recomputed from the rows given: the fastest correct variant per (workload, shape) whose
name starts with neither `baton` nor `bound`; a shape with no such row falls back to the CSV's
best_baseline_us. So CSVs written separately (C++ bench, cudnn_pairs.py) can be plotted together.
Rows with correct != 1 are failures and are left out. When the same (workload, shape, variant)
appears more than once, the last one read wins (later files override earlier ones).

usage: plot_conv.py IN.csv [IN2.csv ...] [--out-dir DIR] [--y ratio|us] [--title TEXT]
  writes DIR/<workload>.png (DIR defaults to the first CSV's folder); --y us plots median_us itself.
Needs matplotlib; Pillow (optional) shrinks the PNG to a 64-colour palette.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402


def layer_of(shape):
    """(sort key, label, batch) of a conv shape; None when it lacks batch/c/hw."""
    kv = results.parse_shape(shape)
    try:
        n, c, hw = int(kv["batch"]), int(kv["c"]), int(kv["hw"])
    except (KeyError, ValueError):
        return None
    extra = sorted((k, v) for k, v in kv.items() if k not in ("batch", "c", "hw"))
    label = f"{c}@{hw}" + "".join(f" {k}={v}" for k, v in extra)
    return (-hw, c, tuple(extra)), label, n


def plot_workload(plt, wl, shapes, ymode, title, out_path):
    layers, keys, gpus, commits = results.chart_points(wl, shapes, ymode, layer_of, "batch/c/hw")
    if not layers:
        return False
    results.draw_chart(plt, layers, keys, ymode, title or wl, gpus, commits, out_path,
                       order=lambda v: (0 if v.startswith("baton") else 2 if v.startswith("bound") else 1, v),
                       xlabel=lambda _label: "batch N",
                       linewidth=lambda v: 1.4 if v.startswith("baton") else 1.0, legend_cols=6)
    return True


def main(argv=None):
    return results.plot_main(
        argv, "plot_conv.py",
        "Charts conv-chain CSVs (common result schema): one PNG per workload, "
        "subplot per layer C@HW, batch on a log2 x axis, one series per variant.",
        "result CSVs (e.g. conv-resnet38.csv and cudnn rows)", plot_workload)


if __name__ == "__main__":
    sys.exit(main())
