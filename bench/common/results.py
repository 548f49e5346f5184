"""What the benchmark scripts share (stdlib only; torch and matplotlib are passed in or imported inside
the functions that draw): the result files of BENCHMARKS.md ("Result files": the schema's columns in
order, extra columns after them, a CSV and its .json twin), the best baseline per shape, where a row
was measured (GPU, driver, CUDA, cuDNN, commit, date), the CUDA-graph timing of the PyTorch
baselines, and the charts of median / best baseline per shape.

Used by bench/conv/{cudnn_pairs,merge}.py, bench/attention/{sdpa_baseline,merge}.py and
scripts/plot_{conv,attention}.py. Each finds this file next to itself (.device/bin, where
scripts/build_device.sh stages the scripts side by side) or in bench/common/ of the repo.
"""
import argparse
import csv
import datetime
import gc
import json
import math
import os
import subprocess
import sys

# ---- the result schema ----------------------------------------------------------------------------

SCHEMA = ["workload", "shape", "variant", "median_us", "min_us", "max_us", "reps", "floor_us", "best_baseline_us",
          "ratio_to_floor", "ratio_to_best_baseline", "correct", "gpu", "driver", "cuda", "commit", "date"]

# Ceilings of BENCHMARKS.md (H200): cuBLAS bf16 dense and device-to-device copy (read + write).
PEAK_FLOPS = 790e12
PEAK_BYTES = 4.3e12
REL_TOL = 1e-2  # ||out - ref|| / ||ref|| of a bf16 chain (BENCHMARKS.md, Method)


class SchemaError(Exception):
    """A result CSV that lacks some of the schema's columns."""


def fnum(text):
    """`text` as a finite float, else None."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def parse_shape(text):
    """A shape column (`key=value` pairs joined by `;`) as a dict of stripped strings."""
    out = {}
    for kv in (text or "").split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def shape_key(r):
    return (r["workload"], r["shape"])


def floor_us_of(flops, nbytes):
    """The floor of BENCHMARKS.md: the larger of the FLOPs and the bytes at the H200's ceilings, in us."""
    return max(flops / PEAK_FLOPS, nbytes / PEAK_BYTES) * 1e6


def read_rows(path):
    """The rows of a result CSV as dicts; SchemaError when a row lacks a schema column."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        missing = [c for c in SCHEMA if c not in r]
        if missing:
            raise SchemaError(f"{path}: missing columns {missing}")
    return rows


def extra_columns(rows):
    """The columns after the schema's, in first-seen order over all rows (a CSV has one header)."""
    extra = []
    for r in rows:
        for k in r:
            if k not in SCHEMA and k not in extra:
                extra.append(k)
    return extra


def set_best_baseline(rows, counts, median=fnum):
    """Recomputes best_baseline_us and ratio_to_best_baseline of every row per (workload, shape): the
    least median_us of the rows for which counts(row) holds (each merge's rule of what is a correct
    baseline); "0.000" for both where a shape has none. `median` reads median_us (float: a bad value
    raises; fnum: it gives no ratio). Returns {(workload, shape): best us}."""
    best = {}
    for r in rows:
        if counts(r):
            k = shape_key(r)
            best[k] = min(best.get(k, float("inf")), median(r["median_us"]))
    for r in rows:
        b = best.get(shape_key(r))
        r["best_baseline_us"] = f"{b:.3f}" if b else "0.000"
        r["ratio_to_best_baseline"] = f"{med / b:.3f}" if b and (med := median(r["median_us"])) is not None else "0.000"
    return best


def group_by_shape(rows):
    """{(workload, shape): {variant: row}} in first-seen order; a later row of a variant wins."""
    by_shape = {}
    for r in rows:
        by_shape.setdefault(shape_key(r), {})[r["variant"]] = r
    return by_shape


def json_twin(csv_path):
    """The .json next to a CSV: x.csv -> x.json, anything else -> itself + .json."""
    return (csv_path[:-4] if csv_path.endswith(".csv") else csv_path) + ".json"


def write_rows(csv_path, rows, cols, json_path=None):
    """Writes `rows` (dicts) with the columns `cols` to csv_path and, as {"rows": [...]}, to json_path
    (default: json_twin(csv_path)); a column a row lacks is empty. Returns json_path."""
    json_path = json_path or json_twin(csv_path)
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})
    with open(json_path, "w") as f:
        json.dump({"rows": [{c: r.get(c, "") for c in cols} for r in rows]}, f, indent=1)
    return json_path


def geomean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def schema_row(workload, shape, variant, t, reps, floor, best, env, commit, date, extra=()):
    """One CSV row in the schema's order from a timing `t` (median, min, max in us; correct), then
    `extra`. env: gpu, driver, cuda (torch_env)."""
    med = t["median"]
    return [workload, shape, variant, f"{med:.3f}", f"{t['min']:.3f}", f"{t['max']:.3f}", reps, f"{floor:.3f}",
            f"{best:.3f}", f"{med / floor if floor > 0 else 0.0:.3f}", f"{med / best if best > 0 else 0.0:.3f}",
            t["correct"], env["gpu"], env["driver"], env["cuda"], commit, date, *extra]


# ---- where a result was measured --------------------------------------------------------------------

def driver_version():
    """The NVIDIA driver's version as nvidia-smi states it; empty where it cannot tell."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30, check=False,
                           universal_newlines=True)
        lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
        return lines[0] if (r.returncode == 0 and lines) else ""
    except Exception:
        return ""


def default_commit():
    """The git HEAD of the checkout this file is in (12 hex digits), else "unknown"."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=10, check=False, universal_newlines=True)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    except Exception:
        pass
    return "unknown"


def cudnn_version(torch):
    """torch's cuDNN as major.minor.patch; empty without one."""
    try:
        v = int(torch.backends.cudnn.version() or 0)
    except Exception:
        v = 0
    if not v:
        return ""
    if v >= 90000:  # cuDNN 9: major*10000 + minor*100 + patch
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"  # cuDNN 8 and older


def import_torch(prog):
    """(torch, torch.nn.functional), or None (said on stderr) without torch or a CUDA device it sees."""
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:
        print(f"{prog}: cannot import torch: {e}", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{prog}: no CUDA device visible to torch", file=sys.stderr)
        return None
    return torch, F


def torch_env(torch):
    """{gpu, driver, cuda, cudnn} of torch's current CUDA device."""
    return {"gpu": torch.cuda.get_device_name(), "driver": driver_version(), "cuda": torch.version.cuda or "",
            "cudnn": cudnn_version(torch)}


def utc_date(fmt="%Y-%m-%d"):
    return datetime.datetime.now(datetime.timezone.utc).strftime(fmt)


# ---- timing a PyTorch baseline in CUDA graphs ------------------------------------------------------

EAGER_RUNS = 3        # eager calls first: library heuristics (cudnn.benchmark), lazy initialization
SIDE_STREAM_RUNS = 3  # PyTorch's recipe: warm-up calls on a side stream right before capture


def median(values):
    s = sorted(values)
    k = len(s)
    if k == 0:
        return float("nan")
    return s[k // 2] if k % 2 else 0.5 * (s[k // 2 - 1] + s[k // 2])


def run_eager(torch, fn, args, runs=EAGER_RUNS):
    """fn(*args) `runs` times without autograd, then a wait for the device."""
    with torch.no_grad():
        for _ in range(runs):
            fn(*args)
    torch.cuda.synchronize()


def capture_graph(torch, fn, args, iters):
    """A CUDA graph of `iters` calls of fn(*args) (one timed repetition = one replay, divided by iters,
    as the C++ benches capture theirs: a graph's per-launch cost is amortized alike for every variant
    of a merged CSV). Returns (graph, the last call's output: the graph's static output)."""
    g = torch.cuda.CUDAGraph()
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(SIDE_STREAM_RUNS):
                fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            for _ in range(iters):
                out = fn(*args)
    torch.cuda.synchronize()
    return g, out


def time_replays(torch, graph, iters, reps, warmup):
    """`warmup` untimed replays, then `reps` replays back to back on the current stream, each between
    its own pair of events; returns each replay's us / iters. Inputs are not rotated (each caller
    says why that is acceptable for its shapes)."""
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stream = torch.cuda.current_stream()
    for i in range(reps):
        starts[i].record(stream)
        graph.replay()
        ends[i].record(stream)
    torch.cuda.synchronize()
    return [starts[i].elapsed_time(ends[i]) * 1000.0 / iters for i in range(reps)]


def check_replay(torch, graph, out, ref):
    """NaN-poisons the graph's static output `out`, replays the graph once and compares `out` with the
    fp32 reference: returns (||out - ref|| / ||ref||, whether out is all finite)."""
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    with torch.no_grad():
        out32 = out.float()
        finite = bool(torch.isfinite(out32).all().item())
        ref_norm = float(torch.linalg.vector_norm(ref.double()).item())
        err_norm = float(torch.linalg.vector_norm((out32 - ref).double()).item())
    if ref_norm > 0.0:
        return err_norm / ref_norm, finite
    return (0.0 if err_norm == 0.0 else float("inf")), finite


def cleanup(torch):
    """Frees what a failed or finished shape left on the device."""
    gc.collect()
    try:
        torch.cuda.synchronize()
    except Exception:
        pass
    try:
        torch.cuda.empty_cache()
    except Exception:
        pass


def first_line(exc):
    """The first line of an exception's message ('' when it has none)."""
    msg = str(exc).strip().splitlines()
    return msg[0] if msg else ""


# ---- charts: median / best baseline per shape --------------------------------------------------------

def chart_is_baseline(variant):
    """The charts' baseline rule: a variant whose name starts with neither `baton` nor `bound`."""
    return not variant.startswith(("baton", "bound"))


def load_results(paths):
    """Returns {(workload, shape): {variant: row}} in first-seen order (a later file's row of the same
    variant wins), plus counts of the rows left out: incorrect (correct != 1) and malformed."""
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


def chart_points(wl, shapes, ymode, panel_of, needs):
    """The points of one workload's chart. shapes: {shape: {variant: row}}; panel_of(shape) gives
    (sort key, panel label, x) or None (warned about: the shape lacks the keys `needs` names).
    y = median_us (ymode "us") or median / the shape's best baseline, recomputed from the rows given
    (chart_is_baseline) and else the row's best_baseline_us. Returns (panels {label: {variant:
    [(x, y)]}}, keys {label: sort key}, gpus, commits); panels is empty (and warned about) when
    nothing is left to plot."""
    panels, keys = {}, {}
    gpus, commits = [], []
    for shape, rows in shapes.items():
        pan = panel_of(shape)
        if pan is None:
            print(f"warning: {wl}: shape {shape!r} lacks {needs}; left out", file=sys.stderr)
            continue
        key, label, x = pan
        keys[label] = key
        base = [fnum(r["median_us"]) for v, r in rows.items() if chart_is_baseline(v)]
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
    return panels, keys, gpus, commits


def label_2_5(v, _pos=None):
    """Minor-tick label on a wide log axis: only the 2s and 5s of each decade."""
    if not (v > 0 and math.isfinite(v)):
        return ""
    mant = v / 10 ** math.floor(math.log10(v) + 1e-9)
    return f"{v:.3g}" if round(mant) in (2, 5) and abs(mant - round(mant)) < 1e-6 else ""


def _line_style(v):
    return "-" if v.startswith("baton") else ":" if v.startswith("bound") else "--"


def _marker(v):
    return "o" if v.startswith("baton") else "s"


def draw_chart(plt, panels, keys, ymode, head, gpus, commits, out_path, order, xlabel, linewidth, legend_cols):
    """One PNG: a subplot per panel (sorted by keys), x on a log2 axis with a tick per x, y on a log
    axis (a line at 1 for ratios), a series per variant (sorted by order(variant); baton-* solid
    circles, bound-* dotted, baselines dashed squares; linewidth(variant)), xlabel(panel label), a
    legend of legend_cols columns below. Pillow (optional) shrinks the PNG to a 64-colour palette."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter
    labels = sorted(panels, key=lambda lb: keys[lb])
    variants = sorted({v for pan in panels.values() for v in pan}, key=order)
    cmap = plt.get_cmap("tab10" if len(variants) <= 10 else "tab20")
    colors = {v: cmap(i % cmap.N) for i, v in enumerate(variants)}

    ncols = min(len(labels), 3)
    nrows = (len(labels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.4 * nrows + 0.9), squeeze=False)
    for i, label in enumerate(labels):
        ax = axes[i // ncols][i % ncols]
        for var in variants:
            pts = sorted(panels[label].get(var, []))
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], _line_style(var) + _marker(var), color=colors[var],
                    markersize=4, linewidth=linewidth(var), label=var)
        xs = sorted({p[0] for pan in panels[label].values() for p in pan})
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.minorticks_off()
        ax.set_yscale("log")
        if ymode != "us":
            ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(xlabel(label), fontsize=9)
        if i % ncols == 0:
            ax.set_ylabel("median / best baseline" if ymode != "us" else "median us", fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        # plain numbers on the log y axis; label minor ticks only when the range is under a decade
        plain = FuncFormatter(lambda v, _pos: f"{v:.3g}")
        ax.yaxis.set_major_formatter(plain)
        lo, hi = ax.get_ylim()
        ax.yaxis.set_minor_formatter(plain if (lo > 0 and hi / lo < 10) else FuncFormatter(label_2_5))
        ax.tick_params(labelsize=8)
    for j in range(len(labels), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    handles = [Line2D([], [], color=colors[v], linestyle=_line_style(v), marker=_marker(v), markersize=4, label=v)
               for v in variants]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(variants), legend_cols), fontsize=8, frameon=False)
    what = "median time / best baseline (lower is better)" if ymode != "us" else "median time, us"
    fig.suptitle(f"{head}: {what}\n{', '.join(gpus) or '?'}; commit {', '.join(commits) or '?'}", fontsize=10)
    legend_rows = (len(variants) + legend_cols - 1) // legend_cols
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


def plot_main(argv, prog, description, csv_help, plot_workload):
    """A chart script's command line: result CSVs in, one PNG per workload out through
    plot_workload(plt, workload, {shape: {variant: row}}, ymode, title, out_path) -> whether it drew.
    Exit status: 0 when some chart was written, 1 when none, 2 without matplotlib or an input."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("csv", nargs="+", help=csv_help)
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
        print(f"{prog}: needs matplotlib ({e}); e.g. pip install --target /tmp/mpl matplotlib "
              f"and run with PYTHONPATH=/tmp/mpl", file=sys.stderr)
        return 2
    for p in a.csv:
        if not os.path.isfile(p):
            print(f"{prog}: no such file: {p}", file=sys.stderr)
            return 2
    table, skipped = load_results(a.csv)
    if skipped["incorrect"] or skipped["malformed"]:
        print(f"note: left out {skipped['incorrect']} row(s) with correct != 1 and "
              f"{skipped['malformed']} malformed row(s)", file=sys.stderr)
    if not table:
        print(f"{prog}: no usable rows", file=sys.stderr)
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
