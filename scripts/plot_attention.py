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
import argparse
import csv
import math
import os
import sys

BASELINE_EXCLUDE = ("baton", "bound")


def is_baseline(variant):
    return not variant.startswith(BASELINE_EXCLUDE)


def fnum(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def parse_shape(text):
    out = {}
    for kv in (text or "").split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def load(paths):
    """Returns {(workload, shape): {variant: row}} in first-seen order, plus counts of skipped rows."""
    table = {}
    skipped = {"incorrect": 0, "malformed": 0}
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                wl, shape, var = r.get("workload"), r.get("shape"), r.get("variant")
                if not wl or not shape or not var or fnum(r.get("median_us")) is None:
                    skipped["malformed"] += 1
                    continue
                if (r.get("correct") or "").strip() != "1":
                    skipped["incorrect"] += 1
                    continue
                table.setdefault((wl, shape), {})[var] = r
    return table, skipped


def panel_of(shape):
    """(sort key, label, x) of an attention shape; None when it lacks phase/batch/seq.
    Prefill panels are per batch (x = seq); decode panels per (batch, kv) (x = new tokens)."""
    kv = parse_shape(shape)
    try:
        phase, b, s = kv.get("phase", "prefill"), int(kv["batch"]), int(kv["seq"])
    except (KeyError, ValueError):
        return None
    model = f"{kv.get('heads', '?')} heads, hidden {kv.get('hidden', '?')}"
    if phase == "decode":
        kvl = kv.get("kv", "?")
        return (1, b, int(kvl) if kvl.isdigit() else 0, model), f"decode batch {b}, kv {kvl}", s
    return (0, b, 0, model), f"prefill batch {b}", s


def label_2_5(v, _pos=None):
    """Minor-tick label on a wide log axis: only the 2s and 5s of each decade."""
    if not (v > 0 and math.isfinite(v)):
        return ""
    mant = v / 10 ** math.floor(math.log10(v) + 1e-9)
    return f"{v:.3g}" if round(mant) in (2, 5) and abs(mant - round(mant)) < 1e-6 else ""


def plot_workload(plt, wl, shapes, ymode, title, out_path):
    panels, keys, models = {}, {}, set()
    gpus, commits = [], []
    for shape, rows in shapes.items():
        pan = panel_of(shape)
        if pan is None:
            print(f"warning: {wl}: shape {shape!r} lacks phase/batch/seq; left out", file=sys.stderr)
            continue
        key, label, x = pan
        models.add(key[3])
        keys[label] = key
        base = [fnum(r["median_us"]) for v, r in rows.items() if is_baseline(v)]
        base = [b for b in base if b and b > 0]
        best = min(base) if base else None
        for var, r in rows.items():
            med = fnum(r["median_us"])
            for field, acc in (("gpu", gpus), ("commit", commits)):
                val = (r.get(field) or "").strip()
                if val and val not in acc:
                    acc.append(val)
            if ymode == "us":
                y = med
            else:
                b = best if best else fnum(r.get("best_baseline_us"))
                y = med / b if (med is not None and b and b > 0) else None
            if y is None or y <= 0:
                continue
            panels.setdefault(label, {}).setdefault(var, []).append((x, y))
    if not panels:
        print(f"warning: {wl}: nothing to plot", file=sys.stderr)
        return False

    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter
    labels = sorted(panels, key=lambda lb: keys[lb])
    variants = sorted({v for pan in panels.values() for v in pan},
                      key=lambda v: (0 if v == "baton-auto" else 1 if v.startswith("baton") else
                                     3 if v.startswith("bound") else 2, v))
    cmap = plt.get_cmap("tab10" if len(variants) <= 10 else "tab20")
    colors = {v: cmap(i % cmap.N) for i, v in enumerate(variants)}

    def style(v):
        return "-" if v.startswith("baton") else ":" if v.startswith("bound") else "--"

    ncols = min(len(labels), 3)
    nrows = (len(labels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.4 * nrows + 0.9), squeeze=False)
    for i, label in enumerate(labels):
        ax = axes[i // ncols][i % ncols]
        for var in variants:
            pts = sorted(panels[label].get(var, []))
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style(var) + ("o" if var.startswith("baton") else "s"),
                    color=colors[var], markersize=4, linewidth=2.0 if var == "baton-auto" else
                    1.4 if var.startswith("baton") else 1.0, label=var)
        xs = sorted({p[0] for pan in panels[label].values() for p in pan})
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.minorticks_off()
        ax.set_yscale("log")
        if ymode != "us":
            ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("new tokens" if label.startswith("decode") else "sequence length", fontsize=9)
        if i % ncols == 0:
            ax.set_ylabel("median / best baseline" if ymode != "us" else "median us", fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        plain = FuncFormatter(lambda v, _pos: f"{v:.3g}")
        ax.yaxis.set_major_formatter(plain)
        lo, hi = ax.get_ylim()
        ax.yaxis.set_minor_formatter(plain if (lo > 0 and hi / lo < 10) else FuncFormatter(label_2_5))
        ax.tick_params(labelsize=8)
    for j in range(len(labels), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    handles = [Line2D([], [], color=colors[v], linestyle=style(v), marker="o" if v.startswith("baton") else "s",
                      markersize=4, label=v) for v in variants]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(variants), 5), fontsize=8, frameon=False)
    head = title or wl
    what = "median time / best baseline (lower is better)" if ymode != "us" else "median time, us"
    model = next(iter(models)) if len(models) == 1 else "several models"
    fig.suptitle(f"{head} ({model}): {what}\n{', '.join(gpus) or '?'}; commit {', '.join(commits) or '?'}", fontsize=10)
    legend_rows = (len(variants) + 4) // 5
    fig.tight_layout(rect=(0, 0.03 + 0.035 * legend_rows, 1, 1))
    fig.savefig(out_path, dpi=90)
    plt.close(fig)
    try:
        from PIL import Image
        with Image.open(out_path) as im:
            small = im.convert("RGB").quantize(64)
        small.save(out_path, optimize=True)
    except Exception as e:  # Pillow absent or failing: keep the full-colour PNG
        print(f"note: {out_path}: not reduced to 64 colours ({type(e).__name__}: {e})", file=sys.stderr)
    print(f"wrote {out_path} ({os.path.getsize(out_path) // 1024} KB)")
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Charts attention-chain CSVs (common result schema): one PNG per workload, a subplot per "
                    "phase and batch, sequence length on a log2 x axis, one series per variant.")
    ap.add_argument("csv", nargs="+", help="result CSVs (e.g. attention-gpt3.csv, sdpa-gpt3.csv)")
    ap.add_argument("--out-dir", help="folder for <workload>.png (default: the first CSV's folder)")
    ap.add_argument("--y", choices=["ratio", "us"], default="ratio",
                    help="ratio: median / best baseline per shape (default); us: median_us")
    ap.add_argument("--title", help="title prefix instead of the workload name")
    a = ap.parse_args(argv)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print(f"plot_attention.py: needs matplotlib ({e})", file=sys.stderr)
        return 2
    for p in a.csv:
        if not os.path.isfile(p):
            print(f"plot_attention.py: no such file: {p}", file=sys.stderr)
            return 2
    table, skipped = load(a.csv)
    if skipped["incorrect"] or skipped["malformed"]:
        print(f"note: left out {skipped['incorrect']} row(s) with correct != 1 and "
              f"{skipped['malformed']} malformed row(s)", file=sys.stderr)
    if not table:
        print("plot_attention.py: no usable rows", file=sys.stderr)
        return 1
    out_dir = a.out_dir or os.path.dirname(os.path.abspath(a.csv[0]))
    os.makedirs(out_dir, exist_ok=True)
    by_wl = {}
    for (wl, shape), rows in table.items():
        by_wl.setdefault(wl, {})[shape] = rows
    wrote = 0
    for wl in sorted(by_wl):
        safe = "".join(ch if (ch.isalnum() or ch in "-_.") else "_" for ch in wl)
        if plot_workload(plt, wl, by_wl[wl], a.y, a.title, os.path.join(out_dir, safe + ".png")):
            wrote += 1
    return 0 if wrote else 1


if __name__ == "__main__":
    sys.exit(main())
