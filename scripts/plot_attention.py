#!/usr/bin/env python3
"""Charts attention-chain result CSVs (common schema of BENCHMARKS.md; extra columns allowed): one PNG
per workload, one subplot per (phase, batch[, kv]) with the sequence length (prefill) or the new
tokens (decode) on a log2 x axis, and one series per variant (baton-auto, baton-<policy>,
cutlass-graph, cutlass-pdl-graph, cublaslt-sdpa-flash-graph, cublaslt-sdpa-cudnn-graph,
bound-concurrent, ...).

y = median_us / best baseline of that shape (log scale; below 1 beats every baseline). The best
baseline is recomputed from the rows given: the fastest correct variant per (workload, shape) whose
name starts with neither `baton` nor `bound` (bench/attention/merge.py's rule); a shape with no such
row falls back to the CSV's best_baseline_us. So CSVs written separately (baton_bench_attention,
sdpa_baseline.py) can be plotted together. Rows with correct != 1 are failures and are left out.
When the same (workload, shape, variant) appears more than once, the last one read wins.

usage: plot_attention.py IN.csv [IN2.csv ...] [--out-dir DIR] [--y ratio|us] [--title TEXT]
  writes DIR/<workload>.png (e.g. attention-gpt3.png; DIR defaults to the first CSV's folder);
  --y us plots median_us itself.
Needs matplotlib; Pillow (optional) shrinks the PNG to a 64-colour palette.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402


def panel_of(shape):
    """(sort key, label, x) of an attention shape; None when it lacks phase/batch/seq.
    Prefill panels are per batch (x = seq); decode panels per (batch, kv) (x = new tokens)."""
    kv = results.parse_shape(shape)
    try:
        phase, b, s = kv.get("phase", "prefill"), int(kv["batch"]), int(kv["seq"])
    except (KeyError, ValueError):
        return None
    model = f"{kv.get('heads', '?')} heads, hidden {kv.get('hidden', '?')}"
    if phase == "decode":
        kvl = kv.get("kv", "?")
        return (1, b, int(kvl) if kvl.isdigit() else 0, model), f"decode batch {b}, kv {kvl}", s
    return (0, b, 0, model), f"prefill batch {b}", s


def plot_workload(plt, wl, shapes, ymode, title, out_path):
    panels, keys, gpus, commits = results.chart_points(wl, shapes, ymode, panel_of, "phase/batch/seq")
    if not panels:
        return False
    models = {p[0][3] for p in map(panel_of, shapes) if p}
    model = next(iter(models)) if len(models) == 1 else "several models"
    results.draw_chart(plt, panels, keys, ymode, f"{title or wl} ({model})", gpus, commits, out_path,
                       order=lambda v: (0 if v == "baton-auto" else 1 if v.startswith("baton") else
                                        3 if v.startswith("bound") else 2, v),
                       xlabel=lambda label: "new tokens" if label.startswith("decode") else "sequence length",
                       linewidth=lambda v: 2.0 if v == "baton-auto" else 1.4 if v.startswith("baton") else 1.0,
                       legend_cols=5)
    return True


def main(argv=None):
    return results.plot_main(
        argv, "plot_attention.py",
        "Charts attention-chain CSVs (common result schema): one PNG per workload, a subplot per "
        "phase and batch, sequence length on a log2 x axis, one series per variant.",
        "result CSVs (e.g. attention-gpt3.csv, sdpa-gpt3.csv)", plot_workload)


if __name__ == "__main__":
    sys.exit(main())
