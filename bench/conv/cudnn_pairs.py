#!/usr/bin/env python3
"""cuDNN baseline (variant `cudnn-graph`) for the conv-chain bench: a pair of 3x3 convs
(stride 1, pad 1, C = K, bf16, NHWC / channels_last) through PyTorch's cuDNN path, captured in a
CUDA graph and timed per replay. Rows go to a CSV in the common schema of BENCHMARKS.md
("Result files"), plus an extra column `cudnn` (the cuDNN version) after `date`.

Pairs (formula of the reference too):
  resnet: y = relu(conv(x, w1, b1)); out = relu(conv(y, w2, b2) + x)
  vgg:    y = relu(conv(x, w1, b1)); out = relu(conv(y, w2, b2))

usage:
  cudnn_pairs.py --workload resnet38 --out bench/results/h200/conv-resnet38.csv --commit SHA
  cudnn_pairs.py --workload vgg19 --batch 1,16 --out conv-vgg19.csv
  cudnn_pairs.py --workload custom --layers 96@40,192@20 --batch 3 --pair resnet --out conv-custom.csv
  cudnn_pairs.py --workload custom --channels 96 --hw 40 --batch 3 --out conv-custom.csv

Needs torch with CUDA (no numpy, no matplotlib). A shape that fails (OOM, cuDNN error, ...) is
reported on stderr and skipped (no row); the others still run. Exit status 0 when every shape gave a
correct row, 1 when some shape failed or was incorrect, 2 on bad arguments / no GPU.
"""
import argparse
import csv
import datetime
import gc
import math
import os
import subprocess
import sys

WORKLOADS = {
    # name: (workload column, default layers, default batches, default pair)
    "resnet38": ("conv-resnet38", "64@56,128@28,256@14,512@7", "1,2,4,8,16,32", "resnet"),
    "vgg19": ("conv-vgg19", "64@224,128@112,256@56,512@28,512@14", "1,2,4,8,16", "vgg"),
    "custom": ("conv-custom", None, "1", "resnet"),
}

COLUMNS = [
    "workload", "shape", "variant", "median_us", "min_us", "max_us", "reps", "floor_us",
    "best_baseline_us", "ratio_to_floor", "ratio_to_best_baseline", "correct", "gpu", "driver",
    "cuda", "commit", "date", "cudnn",
]

# Ceilings of BENCHMARKS.md (H200): cuBLAS bf16 dense and device-to-device copy (read+write).
PEAK_FLOPS = 790e12
PEAK_BYTES = 4.3e12
BF16_BYTES = 2
EAGER_RUNS = 3        # eager calls before the graph: cudnn.benchmark picks its algorithms here
SIDE_STREAM_RUNS = 3  # warm-up calls on a side stream right before capture (PyTorch's recipe)
REL_TOL = 1e-2


def parse_int_list(text, what):
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            v = int(item)
        except ValueError:
            raise SystemExit(f"cudnn_pairs.py: bad {what} entry {item!r} (want integers, comma-separated)")
        if v <= 0:
            raise SystemExit(f"cudnn_pairs.py: {what} entry {v} must be > 0")
        out.append(v)
    if not out:
        raise SystemExit(f"cudnn_pairs.py: empty {what} list")
    return out


def parse_layers(text):
    layers = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.split("@")
        if len(parts) != 2:
            raise SystemExit(f"cudnn_pairs.py: bad layer {item!r} (want C@HW, e.g. 64@56)")
        try:
            c, hw = int(parts[0]), int(parts[1])
        except ValueError:
            raise SystemExit(f"cudnn_pairs.py: bad layer {item!r} (want C@HW with integers)")
        if c <= 0 or hw <= 0:
            raise SystemExit(f"cudnn_pairs.py: layer {item!r}: C and HW must be > 0")
        layers.append((c, hw))
    if not layers:
        raise SystemExit("cudnn_pairs.py: empty --layers list")
    return layers


def floor_us(n, c, hw):
    flops = 2 * (2.0 * n * hw * hw * c * c * 9)  # two convs, 2 FLOPs per MAC
    act = n * c * hw * hw
    # minimal bytes: x read once, both weights and biases read once, out written once (bf16);
    # the residual's second read of x and the intermediate y are not minimal traffic.
    nbytes = BF16_BYTES * (act + 2 * c * c * 9 + 2 * c + act)
    return max(flops / PEAK_FLOPS, nbytes / PEAK_BYTES) * 1e6


def median(values):
    s = sorted(values)
    k = len(s)
    if k == 0:
        return float("nan")
    if k % 2:
        return s[k // 2]
    return 0.5 * (s[k // 2 - 1] + s[k // 2])


def driver_version():
    try:
        r = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30, check=False,
            universal_newlines=True)
        lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
        return lines[0] if (r.returncode == 0 and lines) else ""
    except Exception:
        return ""


def default_commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10,
                           check=False, universal_newlines=True)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    except Exception:
        pass
    return "unknown"


def cudnn_version(torch):
    try:
        v = torch.backends.cudnn.version()
    except Exception:
        v = None
    if not v:
        return ""
    v = int(v)
    if v >= 90000:  # cuDNN 9: major*10000 + minor*100 + patch
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"  # cuDNN 8 and older


def make_pair(F, torch, pair):
    if pair == "resnet":
        def fn(x, w1, b1, w2, b2):
            y = torch.relu(F.conv2d(x, w1, b1, padding=1))
            return torch.relu(F.conv2d(y, w2, b2, padding=1) + x)
    else:
        def fn(x, w1, b1, w2, b2):
            y = torch.relu(F.conv2d(x, w1, b1, padding=1))
            return torch.relu(F.conv2d(y, w2, b2, padding=1))
    return fn


def run_shape(torch, dev, fn, n, c, hw, reps, warmup, seed, iters=20):
    """Times one (layer, batch) on device `dev`; returns a dict of results. Raises on any error."""
    cl = torch.channels_last
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    x = torch.randn(n, c, hw, hw, device=dev, generator=gen).to(torch.bfloat16)
    x = x.contiguous(memory_format=cl)
    wscale = 1.0 / math.sqrt(9.0 * c)
    w1 = (torch.randn(c, c, 3, 3, device=dev, generator=gen) * wscale).to(torch.bfloat16)
    w2 = (torch.randn(c, c, 3, 3, device=dev, generator=gen) * wscale).to(torch.bfloat16)
    w1 = w1.contiguous(memory_format=cl)
    w2 = w2.contiguous(memory_format=cl)
    b1 = (torch.randn(c, device=dev, generator=gen) * 0.1).to(torch.bfloat16)
    b2 = (torch.randn(c, device=dev, generator=gen) * 0.1).to(torch.bfloat16)
    args = (x, w1, b1, w2, b2)

    # Eager first: with cudnn.benchmark on, the first calls pick (and cache) the algorithms.
    with torch.no_grad():
        for _ in range(EAGER_RUNS):
            fn(*args)
    torch.cuda.synchronize()

    g = torch.cuda.CUDAGraph()
    with torch.no_grad():
        # PyTorch's recipe: warm up on a side stream right before capture.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(SIDE_STREAM_RUNS):
                fn(*args)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            # `iters` passes per graph, as baton_bench_conv captures them (one timed repetition =
            # one replay of iters passes, divided by iters): the per-launch cost of a graph is
            # amortized the same way for every variant of the merged CSV.
            for _ in range(iters):
                static_out = fn(*args)  # static input: x, w1, b1, w2, b2 above; static output: this
    torch.cuda.synchronize()

    for _ in range(warmup):
        g.replay()
    torch.cuda.synchronize()

    # Each replay (iters passes) timed on its own with an event pair; the replays run back to back on one stream
    # and the input buffers are not rotated. Where x and the weights fit in L2 (60 MB on the H200),
    # later replays find them L2-hot, as they would in a model's loop of graph replays; this is
    # accepted for this baseline (BENCHMARKS.md "Method" asks for rotation; the caller chose not to).
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stream = torch.cuda.current_stream()
    for i in range(reps):
        starts[i].record(stream)
        g.replay()
        ends[i].record(stream)
    torch.cuda.synchronize()
    times_us = [starts[i].elapsed_time(ends[i]) * 1000.0 / iters for i in range(reps)]

    # Correctness: poison the static output, replay once, compare with an fp32 reference computed
    # from the same bf16 values upcast (TF32 is off for cuDNN, see main()).
    static_out.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    with torch.no_grad():
        ref = fn(*(t.float() for t in args))
        out32 = static_out.float()
        finite = bool(torch.isfinite(out32).all().item())
        ref_norm = float(torch.linalg.vector_norm(ref.double()).item())
        err_norm = float(torch.linalg.vector_norm((out32 - ref).double()).item())
    torch.cuda.synchronize()
    if ref_norm > 0.0:
        rel = err_norm / ref_norm
    else:
        rel = 0.0 if err_norm == 0.0 else float("inf")
    correct = 1 if (finite and math.isfinite(rel) and rel < REL_TOL) else 0

    del g, static_out, ref, out32, args, x, w1, w2, b1, b2
    return {
        "median": median(times_us), "min": min(times_us), "max": max(times_us),
        "rel": rel, "finite": finite, "correct": correct,
    }


def cleanup(torch):
    gc.collect()
    try:
        torch.cuda.synchronize()
    except Exception:
        pass
    try:
        torch.cuda.empty_cache()
    except Exception:
        pass


def open_csv(path):
    """Opens `path` for appending; writes the header when the file is new or empty."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fresh = (not os.path.exists(path)) or os.path.getsize(path) == 0
    if not fresh:
        try:
            with open(path, newline="") as f:
                head = next(csv.reader(f), [])
            if head[:len(COLUMNS) - 1] != COLUMNS[:-1]:
                print(f"warning: {path}: existing header differs from this script's columns; "
                      f"appending anyway", file=sys.stderr)
        except Exception as e:
            print(f"warning: {path}: could not read the existing header: {e}", file=sys.stderr)
    f = open(path, "a", newline="")
    w = csv.writer(f)
    if fresh:
        w.writerow(COLUMNS)
        f.flush()
    return f, w


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="cuDNN conv-pair baseline (variant cudnn-graph): PyTorch/cuDNN in a CUDA graph, "
                    "bf16 NHWC, rows in the common result schema.",
        epilog="Default layers: resnet38 = 64@56,128@28,256@14,512@7 (batch 1,2,4,8,16,32); "
               "vgg19 = 64@224,128@112,256@56,512@28,512@14 (batch 1,2,4,8,16). "
               "custom needs --layers or --channels/--hw (batch default 1, pair default resnet).")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    ap.add_argument("--batch", help="comma list of batch sizes N (default per workload)")
    ap.add_argument("--layers", help="comma list of C@HW, e.g. 64@56,128@28 (overrides the default)")
    ap.add_argument("--channels", type=int, help="one layer's C (with --hw; alternative to --layers)")
    ap.add_argument("--hw", type=int, help="one layer's H = W (with --channels)")
    ap.add_argument("--pair", choices=["resnet", "vgg"],
                    help="pair formula (default: vgg for vgg19, resnet otherwise)")
    ap.add_argument("--reps", type=int, default=50, help="timed replays per shape (default 50)")
    ap.add_argument("--iters", type=int, default=20,
                    help="passes captured per graph; a replay's time / iters is one sample (default 20, as baton_bench_conv)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed replays first (default 20)")
    ap.add_argument("--out", required=True, help="CSV to write (rows appended if it exists)")
    ap.add_argument("--commit", default=None, help="project commit for the rows (default: git HEAD)")
    ap.add_argument("--seed", type=int, default=1234, help="RNG seed (default 1234)")
    a = ap.parse_args(argv)

    wl_name, def_layers, def_batch, def_pair = WORKLOADS[a.workload]
    if a.layers and (a.channels or a.hw):
        raise SystemExit("cudnn_pairs.py: give --layers or --channels/--hw, not both")
    if (a.channels is None) != (a.hw is None):
        raise SystemExit("cudnn_pairs.py: --channels and --hw go together")
    if a.layers:
        layers = parse_layers(a.layers)
    elif a.channels is not None:
        layers = parse_layers(f"{a.channels}@{a.hw}")
    elif def_layers:
        layers = parse_layers(def_layers)
    else:
        raise SystemExit("cudnn_pairs.py: --workload custom needs --layers C@HW,... or --channels/--hw")
    batches = parse_int_list(a.batch if a.batch else def_batch, "--batch")
    pair = a.pair or def_pair
    if a.reps < 1 or a.warmup < 0 or a.iters < 1:
        raise SystemExit("cudnn_pairs.py: --reps must be >= 1 and --warmup >= 0")
    commit = a.commit or default_commit()

    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:
        print(f"cudnn_pairs.py: cannot import torch: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("cudnn_pairs.py: no CUDA device visible to torch", file=sys.stderr)
        return 2

    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = True
    # Only affects fp32 convs (the reference): keep it exact fp32, not TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    gpu = torch.cuda.get_device_name()
    driver = driver_version()
    cuda = torch.version.cuda or ""
    cudnn = cudnn_version(torch)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"# cudnn-graph conv pairs: {wl_name} (pair {pair}), gpu {gpu}, driver {driver or '?'}, "
          f"CUDA {cuda}, cuDNN {cudnn}, torch {torch.__version__}, commit {commit}, {date}")
    print(f"# reps {a.reps}, warmup {a.warmup}; times in us; floor = max(FLOPs/790e12, bytes/4.3e12)")

    fn = make_pair(F, torch, pair)
    dev = torch.device("cuda")
    f, writer = open_csv(a.out)
    hdr = f"{'shape':<28} {'median':>10} {'min':>10} {'max':>10} {'floor':>9} {'x floor':>8} {'rel_err':>9} ok"
    print(hdr)
    print("-" * len(hdr))
    failed = 0
    try:
        for (c, hw) in layers:
            for n in batches:
                shape = f"batch={n};c={c};hw={hw}"
                r = None
                try:
                    r = run_shape(torch, dev, fn, n, c, hw, a.reps, a.warmup,
                                  a.seed + 7919 * n + 131 * c + hw, iters=a.iters)
                except Exception as e:  # OOM, cuDNN errors, capture errors: skip this shape
                    failed += 1
                    msg = str(e).strip().splitlines()
                    print(f"warning: {wl_name} {shape}: skipped, {type(e).__name__}: "
                          f"{msg[0] if msg else ''}", file=sys.stderr)
                if r is None:
                    cleanup(torch)  # outside the except block, so the traceback's tensors can go
                    continue
                fl = floor_us(n, c, hw)
                med = r["median"]
                # best_baseline_us = own median and ratio 1.0: this script sees only its own variant;
                # the C++ conv bench merges the CSVs and recomputes both per shape.
                writer.writerow([
                    wl_name, shape, "cudnn-graph", f"{med:.3f}", f"{r['min']:.3f}", f"{r['max']:.3f}",
                    a.reps, f"{fl:.3f}", f"{med:.3f}", f"{(med / fl) if fl > 0 else 0.0:.3f}", "1.000",
                    r["correct"], gpu, driver, cuda, commit, date, cudnn,
                ])
                f.flush()
                if not r["correct"]:
                    failed += 1
                    print(f"warning: {wl_name} {shape}: output does not match the fp32 reference "
                          f"(rel_err {r['rel']:.3e}, finite {r['finite']})", file=sys.stderr)
                print(f"{shape:<28} {med:>10.2f} {r['min']:>10.2f} {r['max']:>10.2f} {fl:>9.2f} "
                      f"{(med / fl) if fl > 0 else 0.0:>8.1f} {r['rel']:>9.2e} {r['correct']}")
                sys.stdout.flush()
                cleanup(torch)
    finally:
        f.close()
    print(f"# wrote {a.out}; {failed} shape(s) failed or incorrect")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
