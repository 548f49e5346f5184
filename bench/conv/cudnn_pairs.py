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
import math
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402

WORKLOADS = {
    # name: (workload column, default layers, default batches, default pair)
    "resnet38": ("conv-resnet38", "64@56,128@28,256@14,512@7", "1,2,4,8,16,32", "resnet"),
    "vgg19": ("conv-vgg19", "64@224,128@112,256@56,512@28,512@14", "1,2,4,8,16", "vgg"),
    "custom": ("conv-custom", None, "1", "resnet"),
}

COLUMNS = results.SCHEMA + ["cudnn"]
BF16_BYTES = 2


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
    return results.floor_us_of(flops, nbytes)


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
    results.run_eager(torch, fn, args)
    # `iters` passes per graph, as baton_bench_conv captures them. Static input: x, w1, b1, w2, b2 above.
    g, static_out = results.capture_graph(torch, fn, args, iters)
    # The input buffers are not rotated. Where x and the weights fit in L2 (60 MB on the H200),
    # later replays find them L2-hot, as they would in a model's loop of graph replays; this is
    # accepted for this baseline (BENCHMARKS.md "Method" asks for rotation; the caller chose not to).
    times_us = results.time_replays(torch, g, iters, reps, warmup)

    # Correctness: an fp32 reference computed from the same bf16 values upcast (TF32 is off for
    # cuDNN, see main()) against the poisoned output after one more replay.
    with torch.no_grad():
        ref = fn(*(t.float() for t in args))
    rel, finite = results.check_replay(torch, g, static_out, ref)
    correct = 1 if (finite and math.isfinite(rel) and rel < results.REL_TOL) else 0

    del g, static_out, ref, args, x, w1, w2, b1, b2
    return {
        "median": results.median(times_us), "min": min(times_us), "max": max(times_us),
        "rel": rel, "finite": finite, "correct": correct,
    }


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
    commit = a.commit or results.default_commit()

    got = results.import_torch("cudnn_pairs.py")
    if got is None:
        return 2
    torch, F = got

    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = True
    # Only affects fp32 convs (the reference): keep it exact fp32, not TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    env = results.torch_env(torch)
    date = results.utc_date("%Y-%m-%dT%H:%M:%SZ")
    print(f"# cudnn-graph conv pairs: {wl_name} (pair {pair}), gpu {env['gpu']}, driver {env['driver'] or '?'}, "
          f"CUDA {env['cuda']}, cuDNN {env['cudnn']}, torch {torch.__version__}, commit {commit}, {date}")
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
                    print(f"warning: {wl_name} {shape}: skipped, {type(e).__name__}: {results.first_line(e)}",
                          file=sys.stderr)
                if r is None:
                    results.cleanup(torch)  # outside the except block, so the traceback's tensors can go
                    continue
                fl = floor_us(n, c, hw)
                med = r["median"]
                # best_baseline_us = own median and ratio 1.0: this script sees only its own variant;
                # the C++ conv bench merges the CSVs and recomputes both per shape.
                writer.writerow(results.schema_row(wl_name, shape, "cudnn-graph", r, a.reps, fl, med, env, commit,
                                                   date, [env["cudnn"]]))
                f.flush()
                if not r["correct"]:
                    failed += 1
                    print(f"warning: {wl_name} {shape}: output does not match the fp32 reference "
                          f"(rel_err {r['rel']:.3e}, finite {r['finite']})", file=sys.stderr)
                print(f"{shape:<28} {med:>10.2f} {r['min']:>10.2f} {r['max']:>10.2f} {fl:>9.2f} "
                      f"{(med / fl) if fl > 0 else 0.0:>8.1f} {r['rel']:>9.2e} {r['correct']}")
                sys.stdout.flush()
                results.cleanup(torch)
    finally:
        f.close()
    print(f"# wrote {a.out}; {failed} shape(s) failed or incorrect")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
