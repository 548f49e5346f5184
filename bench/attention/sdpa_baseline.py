#!/usr/bin/env python3
"""PyTorch baseline of the attention-chain bench (BENCHMARKS.md baseline 4): the prefill block

    qkv = x @ w_qkv.T                                   (torch.matmul: cuBLAS/cuBLASLt, bf16)
    q, k, v = heads of qkv's [Q | K | V] columns        (views, no copy)
    o = scaled_dot_product_attention(q, k, v, is_causal=True)
    y = o (heads merged) @ w_o.T

with SDPA's backend picked explicitly (torch.nn.attention.sdpa_kernel): FLASH_ATTENTION for the row
`cublaslt-sdpa-flash-graph`, CUDNN_ATTENTION for `cublaslt-sdpa-cudnn-graph`. Each pass is captured
in a CUDA graph (`iters` passes per graph) and timed per replay with CUDA events, as
baton_bench_attention times its variants: warm-up replays, then median, min and max of --reps
replays divided by the passes. Rows go to DIR/sdpa-<workload>.csv in the common schema
(BENCHMARKS.md "Result files") with the bench's extra columns (policy, launch, iters, rel_err) and
torch, cudnn; bench/attention/merge.py joins them with the bench's rows.

Decode (--phase decode or both, the default): m new tokens per sequence against a KV cache of kv
keys after the step, the block being qkv = x @ w_qkv.T, the new K and V copied into the caches
(rows kv-m..kv-1, inside the graph), then SDPA of the m queries against the kv cached keys with the
causal mask aligned to the cache's end, then the O-proj: the shapes batch {1, 16} x m {1, 2, 4} x kv
{512, 1024, 2048, 8192}. At m = 1 no mask is needed and the forced backends run as in prefill. At m > 1
the forced backends get the mask as a boolean tensor (flash takes none: no flash row), and one more
row, `cublaslt-sdpa-lowerright-graph`, passes torch.nn.attention.bias.causal_lower_right with no
backend forced: PyTorch's CausalBias picks flash or the memory-efficient kernel itself.

Shapes and data as the bench: GPT-3 175B TP8 (hidden 12288, 12 heads of 128) or LLaMA-65B TP8 (8192,
8 heads), B x S in {1, 4, 8} x {512, 1024, 2048}, or custom --heads/--hidden; x uniform on [-1, 1],
w_qkv on +-3/sqrt(hidden), w_o on +-3/sqrt(heads*128). Inputs are not padded (PyTorch needs no
padding); the floor counts the same real tokens as the bench's.

Check: y against an fp32 reference from the same bf16 inputs (qkv rounded to bf16, causal softmax in
fp32, o rounded to bf16, y = o @ w_o.T; TF32 off): ||y - ref|| / ||ref|| < 1e-2 and no NaN, after
NaN-poisoning the graph's output and replaying it once.

usage:
  sdpa_baseline.py --workload gpt3 --out-dir bench/results/h200/latest --commit SHA
  sdpa_baseline.py --workload llama --batch 1 --seq 2048
  sdpa_baseline.py --batch 3 --seq 1000 --heads 4 --hidden 4096        (workload custom)

A backend that cannot run a shape (not built in, or refusing the inputs) is a warning and no row.
Exit status: 0 when every row that was measured is correct, 1 when a shape failed (OOM, capture
error, ...) or a row is incorrect, 2 on bad arguments, no torch or no GPU.
"""
import argparse
import contextlib
import csv
import math
import os
import sys
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))
# bench/common/results.py: next to this script in .device/bin (scripts/build_device.sh), else in the repo.
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "common"), os.path.join(_HERE, "..", "bench", "common")]
import results  # noqa: E402

HEAD_DIM = 128
MODELS = {"gpt3": (12, 12288), "llama": (8, 8192)}  # heads per GPU, hidden (TP8 shards)
COLUMNS = results.SCHEMA + ["policy", "launch", "iters", "rel_err", "torch", "cudnn"]
BACKENDS = {  # name: (variant, SDPBackend member)
    "flash": ("cublaslt-sdpa-flash-graph", "FLASH_ATTENTION"),
    "cudnn": ("cublaslt-sdpa-cudnn-graph", "CUDNN_ATTENTION"),
}


def fail_args(msg):
    print(f"sdpa_baseline.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_int_list(text, what, hi):
    out = []
    for item in text.split(","):
        try:
            v = int(item.strip())
        except ValueError:
            fail_args(f"bad {what} entry {item!r} (want integers, comma-separated)")
        if not 1 <= v <= hi:
            fail_args(f"{what} entry {v} must be in [1, {hi}]")
        out.append(v)
    return out


def floor_us(b, s, heads, hidden):
    """The bench's floor (bench/attention.cu, floor_us): FLOPs of the two GEMMs and the causal
    attention over T = b*s real tokens; bytes of x, w_qkv, w_o read once and y written once."""
    t, w = float(b) * s, float(heads) * HEAD_DIM
    flops = 2 * t * hidden * 3 * w + 2.0 * 2.0 * b * heads * (s * (s + 1) / 2) * HEAD_DIM + 2 * t * w * hidden
    nbytes = 2.0 * (t * hidden + 3 * w * hidden + hidden * w + t * hidden)
    return results.floor_us_of(flops, nbytes)


def decode_floor_us(b, m, kv, heads, hidden):
    """The bench's decode floor: the GEMMs' and the attention's FLOPs (each new token i sees kv - m + i + 1
    keys), bytes of x, the weights and y plus the K/V caches read once."""
    t, w = float(b) * m, float(heads) * HEAD_DIM
    keys = sum(kv - m + i + 1 for i in range(m))
    flops = 2 * t * hidden * 3 * w + 2.0 * 2.0 * b * heads * keys * HEAD_DIM + 2 * t * w * hidden
    nbytes = 2.0 * (t * hidden + 3 * w * hidden + hidden * w + t * hidden) + 2.0 * 2.0 * b * kv * w
    return results.floor_us_of(flops, nbytes)


def make_decode_inputs(torch, dev, b, m, kv, heads, hidden, seed):
    """x, w_qkv, w_o as make_inputs, and the K and V caches [b, kv, heads, 128] (the old rows random,
    the rows the step writes too: it overwrites them)."""
    x, wqkv, wo = make_inputs(torch, dev, b, m, heads, hidden, seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed + 1)
    kc = ((torch.rand(b, kv, heads, HEAD_DIM, device=dev, generator=gen) * 2 - 1) * 1.7).to(torch.bfloat16)
    vc = ((torch.rand(b, kv, heads, HEAD_DIM, device=dev, generator=gen) * 2 - 1) * 1.7).to(torch.bfloat16)
    return x, wqkv, wo, kc, vc


def make_decode_block(torch, F, b, m, kv, heads, dev, lower_right=False):
    """lower_right: the mask as causal_lower_right (CausalBias), else a boolean [m, kv] tensor (True:
    attend); none at m = 1."""
    w, old = heads * HEAD_DIM, kv - m
    mask = None
    if m > 1 and lower_right:
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(m, kv)
    elif m > 1:
        mask = torch.arange(kv, device=dev)[None, :] <= (old + torch.arange(m, device=dev))[:, None]

    def block(x, wqkv, wo, kc, vc):
        qkv = x @ wqkv.T                                        # [b, m, 3w]
        q, k, v = qkv.view(b, m, 3, heads, HEAD_DIM).unbind(2)  # [b, m, heads, 128]
        kc[:, old:].copy_(k)                                    # the cache append
        vc[:, old:].copy_(v)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), kc.transpose(1, 2), vc.transpose(1, 2), attn_mask=mask)
        return o.transpose(1, 2).reshape(b, m, w) @ wo.T
    return block


def decode_reference(torch, x, wqkv, wo, kc, vc, heads):
    """fp32 reference: qkv rounded to bf16, the keys the cache's old rows then the new ones, softmax over
    the keys each new token sees (aligned to the cache's end), o rounded to bf16, y = o @ w_o.T."""
    b, m, _ = x.shape
    kv, w = kc.shape[1], heads * HEAD_DIM
    old = kv - m
    qkv = (x.float() @ wqkv.float().T).bfloat16().float().view(b, m, 3, heads, HEAD_DIM)
    k = torch.cat([kc[:, :old].float(), qkv[:, :, 1]], dim=1).transpose(1, 2)  # [b, heads, kv, 128]
    v = torch.cat([vc[:, :old].float(), qkv[:, :, 2]], dim=1).transpose(1, 2)
    q = qkv[:, :, 0].transpose(1, 2)                                           # [b, heads, m, 128]
    p = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(HEAD_DIM))
    j = torch.arange(kv, device=x.device)
    i = torch.arange(m, device=x.device)
    p.masked_fill_(j[None, :] > (old + i)[:, None], float("-inf"))
    o = (p.softmax(-1) @ v).transpose(1, 2).reshape(b, m, w).bfloat16().float()
    return o @ wo.float().T


def auto_iters(floor):
    """Passes per graph: about 1 ms of floor time, 2..20 (the bench's auto_iters)."""
    return int(min(20, max(2, math.ceil(1000.0 / max(floor, 1e-3)))))


def make_inputs(torch, dev, b, s, heads, hidden, seed):
    w = heads * HEAD_DIM
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)

    def uniform(shape, scale):
        return ((torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale).to(torch.bfloat16)

    x = uniform((b, s, hidden), 1.0)
    wqkv = uniform((3 * w, hidden), 3.0 / math.sqrt(hidden))
    wo = uniform((hidden, w), 3.0 / math.sqrt(w))
    return x, wqkv, wo


def make_block(torch, F, b, s, heads):
    w = heads * HEAD_DIM

    def block(x, wqkv, wo):
        qkv = x @ wqkv.T                                   # [b, s, 3w]: Q | K | V, head h at h*128
        q, k, v = qkv.view(b, s, 3, heads, HEAD_DIM).unbind(2)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return o.transpose(1, 2).reshape(b, s, w) @ wo.T   # [b, s, hidden]
    return block


def reference(torch, x, wqkv, wo, heads):
    """fp32 reference from the bf16 inputs: qkv rounded to bf16, causal softmax in fp32 (one sequence
    at a time), o rounded to bf16, y = o @ w_o.T in fp32."""
    b, s, _ = x.shape
    w = heads * HEAD_DIM
    wqkv32, wo32 = wqkv.float(), wo.float()
    mask = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
    y = torch.empty(b, s, wo.shape[0], device=x.device, dtype=torch.float32)
    for i in range(b):
        qkv = (x[i].float() @ wqkv32.T).bfloat16().float().view(s, 3, heads, HEAD_DIM)
        q, k, v = (qkv[:, j].transpose(0, 1) for j in range(3))  # [heads, s, 128]
        p = (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(HEAD_DIM))
        p.masked_fill_(mask, float("-inf"))
        o = (p.softmax(-1) @ v).transpose(0, 1).reshape(s, w).bfloat16().float()
        y[i] = o @ wo32.T
        del qkv, q, k, v, p, o
    return y


def run_backend(torch, sdpa_kernel, backend, block, args, ref, iters, reps, warmup):
    """Times one backend on one shape (backend None: PyTorch's own choice). Returns a dict, or None with
    a reason when the backend cannot run the shape (raised by its first eager call). Other errors
    propagate."""
    with (sdpa_kernel([backend]) if backend is not None else contextlib.nullcontext()):
        # SDPA raises (after warnings that say why) when the forced backend cannot take the inputs
        # or is not built in: that backend is unavailable for this shape. Running out of memory is
        # a failure, not unavailability.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                results.run_eager(torch, block, args)
            except torch.cuda.OutOfMemoryError:
                raise
            except RuntimeError as e:
                why = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
                return None, "; ".join([results.first_line(e) or type(e).__name__] + why[:3])
        g, out = results.capture_graph(torch, block, args, iters)  # iters passes per replay, as the bench's graphs
    times = results.time_replays(torch, g, iters, reps, warmup)
    rel, finite = float("nan"), False
    if ref is not None:
        rel, finite = results.check_replay(torch, g, out, ref)
        rel = rel if finite else float("nan")
    del g, out
    correct = 1 if (ref is not None and finite and rel < results.REL_TOL) else 0
    return {"median": results.median(times), "min": min(times), "max": max(times), "rel": rel, "correct": correct}, None


def part_floors(b, s, heads, hidden):
    """Floors of the block's three parts, as bench/attention.cu's --breakdown counts them."""
    t, w = float(b) * s, float(heads) * HEAD_DIM
    return {
        "qkv": results.floor_us_of(2 * t * hidden * 3 * w, 2.0 * (t * hidden + 3 * w * hidden + t * 3 * w)),
        "sdpa": results.floor_us_of(2.0 * 2.0 * b * heads * (s * (s + 1) / 2) * HEAD_DIM, 2.0 * (t * 3 * w + t * w)),
        "oproj": results.floor_us_of(2 * t * w * hidden, 2.0 * (t * w + hidden * w + t * hidden)),
    }


def time_parts(torch, F, sdpa_kernel, chosen, x, wqkv, wo, b, s, heads, iters, reps, warmup):
    """--breakdown: the block's parts alone, each `iters` calls per CUDA graph as the whole block:
    x @ w_qkv.T, SDPA per chosen backend on the same (strided) q, k, v views the block passes it, and
    o @ w_o.T. Returns [(part, variant, timing)]; nothing is compared (the block's rows check them)."""
    w = heads * HEAD_DIM
    with torch.no_grad():
        qkv = x @ wqkv.T
        q, k, v = (t.transpose(1, 2) for t in qkv.view(b, s, 3, heads, HEAD_DIM).unbind(2))
        o = torch.empty(b, s, w, device=x.device, dtype=torch.bfloat16).uniform_(-1, 1)
    out = []

    def timed(fn, args):
        g, res = results.capture_graph(torch, fn, args, iters)
        times = results.time_replays(torch, g, iters, reps, warmup)
        del g, res
        return {"median": results.median(times), "min": min(times), "max": max(times), "rel": float("nan"),
                "correct": 0}

    out.append(("qkv", "part-qkv-cublaslt", timed(lambda a, m: a @ m.T, (x, wqkv))))
    for name, _, member in chosen:
        with sdpa_kernel([member]):
            try:
                results.run_eager(torch, lambda a, bb, c: F.scaled_dot_product_attention(a, bb, c, is_causal=True),
                                  (q, k, v))
            except RuntimeError:
                continue  # the backend cannot take the shape: its block row says why
            t = timed(lambda a, bb, c: F.scaled_dot_product_attention(a, bb, c, is_causal=True), (q, k, v))
        out.append(("sdpa", f"part-sdpa-{name}", t))
    out.append(("oproj", "part-oproj-cublaslt", timed(lambda a, m: a @ m.T, (o, wo))))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="PyTorch baseline of the attention-chain bench: cuBLASLt GEMMs + SDPA (flash and cuDNN "
                    "backends, picked explicitly) in a CUDA graph; rows in the common result schema.",
        epilog="Default shapes: batch 1,4,8 x seq 512,1024,2048 (gpt3: hidden 12288, 12 heads; llama: hidden 8192, "
               "8 heads). --heads/--hidden make a custom workload (batch default 1, --seq required).")
    ap.add_argument("--workload", choices=["gpt3", "llama", "custom"],
                    help="gpt3 (default), llama, or custom (implied by --heads/--hidden)")
    ap.add_argument("--batch", help="comma list of sequences per shape (default 1,4,8; custom 1)")
    ap.add_argument("--seq", help="comma list of tokens per sequence (default 512,1024,2048; custom: required)")
    ap.add_argument("--heads", type=int, help="custom: heads of 128 on this GPU")
    ap.add_argument("--hidden", type=int, help="custom: hidden = tp * heads * 128")
    ap.add_argument("--phase", choices=["prefill", "decode", "both"], default="both",
                    help="which shapes (default both)")
    ap.add_argument("--decode-batch", help="decode: comma list of sequences (default 1,16)")
    ap.add_argument("--new-tokens", help="decode: comma list of new tokens per sequence, 1..16 (default 1,2,4)")
    ap.add_argument("--kv", help="decode: comma list of keys per sequence after the step (default 512,1024,2048,8192)")
    ap.add_argument("--backends", default="flash,cudnn", help="comma list of flash, cudnn (default both)")
    ap.add_argument("--reps", type=int, default=50, help="timed replays per shape and backend (default 50)")
    ap.add_argument("--iters", type=int, default=0,
                    help="passes per graph (default 0: about 1 ms of floor time, 2..20, as the bench)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed replays first (default 5)")
    ap.add_argument("--check", choices=["on", "off"], default="on",
                    help="compare y with the fp32 reference (default on; off: rows say correct 0)")
    ap.add_argument("--out-dir", default=".", help="writes DIR/sdpa-<workload>.csv (default .)")
    ap.add_argument("--out", help="CSV path instead of DIR/sdpa-<workload>.csv (overwritten)")
    ap.add_argument("--commit", help="project commit for the rows (default: git HEAD)")
    ap.add_argument("--seed", type=int, default=1234, help="RNG seed (default 1234)")
    ap.add_argument("--breakdown", metavar="CSV",
                    help="also time the block's parts alone (the QKV and O-proj matmuls, SDPA per backend) and "
                         "write them to CSV (rows say correct 0: the block's rows check them)")
    a = ap.parse_args(argv)

    model_given = a.heads is not None or a.hidden is not None
    workload = a.workload or ("custom" if model_given else "gpt3")
    if workload == "custom":
        if a.heads is None or a.hidden is None:
            fail_args("a custom workload needs --heads and --hidden")
        if not a.seq and a.phase != "decode":
            fail_args("a custom workload needs --seq")
        heads, hidden = a.heads, a.hidden
        if heads < 1 or hidden < 1:
            fail_args("--heads and --hidden must be >= 1")
    else:
        if model_given:
            fail_args(f"--heads/--hidden define a custom model; drop --workload {workload} or use --workload custom")
        heads, hidden = MODELS[workload]
    if hidden % (heads * HEAD_DIM):
        fail_args(f"--hidden {hidden} must be a multiple of heads * 128 = {heads * HEAD_DIM}")
    batches = parse_int_list(a.batch, "--batch", 65535) if a.batch else ([1] if workload == "custom" else [1, 4, 8])
    seqs = parse_int_list(a.seq, "--seq", 1 << 20) if a.seq else [512, 1024, 2048]
    dbatches = parse_int_list(a.decode_batch, "--decode-batch", 65535) if a.decode_batch else [1, 16]
    news = parse_int_list(a.new_tokens, "--new-tokens", 16) if a.new_tokens else [1, 2, 4]
    kvs = parse_int_list(a.kv, "--kv", 1 << 20) if a.kv else [512, 1024, 2048, 8192]
    # (phase, batch, queries, keys): the prefill shapes, then decode's (a cache shorter than m is skipped).
    cases = [("prefill", b, s, s) for b in batches for s in seqs] if a.phase != "decode" else []
    if a.phase != "prefill":
        cases += [("decode", b, m, kv) for b in dbatches for m in news for kv in kvs if kv >= m]
    backends = [x.strip() for x in a.backends.split(",") if x.strip()]
    for x in backends:
        if x not in BACKENDS:
            fail_args(f"unknown backend {x!r} (flash, cudnn)")
    if a.reps < 1 or a.warmup < 0 or a.iters < 0:
        fail_args("--reps must be >= 1, --warmup and --iters >= 0")
    out_path = a.out or os.path.join(a.out_dir, f"sdpa-{workload}.csv")
    commit = a.commit or results.default_commit()

    got = results.import_torch("sdpa_baseline.py")
    if got is None:
        return 2
    torch, F = got
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:
        print(f"warning: torch.nn.attention.sdpa_kernel is not available ({e}): no SDPA rows", file=sys.stderr)
        return 0
    chosen = []
    for x in backends:
        member = getattr(SDPBackend, BACKENDS[x][1], None)
        if member is None:
            print(f"warning: this torch has no SDPBackend.{BACKENDS[x][1]}: no {BACKENDS[x][0]} rows", file=sys.stderr)
        else:
            chosen.append((x, BACKENDS[x][0], member))

    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference stays fp32
    torch.backends.cudnn.allow_tf32 = False
    env = results.torch_env(torch)
    date = results.utc_date()
    wl = f"attention-{workload}"
    print(f"# {wl}: cuBLASLt + SDPA ({', '.join(c[0] for c in chosen) or 'no backend'}) in CUDA graphs; "
          f"gpu {env['gpu']}, driver {env['driver'] or '?'}, CUDA {env['cuda']}, cuDNN {env['cudnn']}, "
          f"torch {torch.__version__}, commit {commit}, {date}")
    d = os.path.dirname(out_path)
    if d:
        os.makedirs(d, exist_ok=True)
    dev = torch.device("cuda")
    failed = 0
    bf = open(a.breakdown, "w", newline="") if a.breakdown else None
    bwriter = csv.writer(bf) if bf else None
    if bwriter:
        bwriter.writerow(COLUMNS)
    with open(out_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for phase, b, s, kv in cases:
            decode = phase == "decode"
            shape = f"phase={phase};batch={b};seq={s};kv={kv};heads={heads};hidden={hidden}"
            fl = decode_floor_us(b, s, kv, heads, hidden) if decode else floor_us(b, s, heads, hidden)
            iters = a.iters or auto_iters(fl)
            measured = []
            try:
                if decode:
                    args = make_decode_inputs(torch, dev, b, s, kv, heads, hidden, a.seed + 7919 * b + 31 * s + kv)
                    ref = decode_reference(torch, *args, heads) if a.check == "on" else None
                    block = make_decode_block(torch, F, b, s, kv, heads, dev)
                else:
                    args = make_inputs(torch, dev, b, s, heads, hidden, a.seed + 7919 * b + s)
                    ref = reference(torch, *args, heads) if a.check == "on" else None
                    block = make_block(torch, F, b, s, heads)
                runs = [(name, variant, member, block) for name, variant, member in chosen]
                if decode and s > 1:  # PyTorch's lower-right causal bias, backend its own choice
                    runs.append(("lowerright", "cublaslt-sdpa-lowerright-graph", None,
                                 make_decode_block(torch, F, b, s, kv, heads, dev, lower_right=True)))
                for name, variant, member, blk in runs:
                    try:
                        r, why = run_backend(torch, sdpa_kernel, member, blk, args, ref, iters, a.reps, a.warmup)
                    except Exception as e:  # OOM, capture errors: this backend's row fails
                        failed += 1
                        print(f"warning: {wl} {shape} {variant}: failed, {type(e).__name__}: "
                              f"{results.first_line(e)}", file=sys.stderr)
                        results.cleanup(torch)
                        continue
                    if r is None:
                        print(f"warning: {wl} {shape}: SDPA backend {name} unavailable ({why}); no {variant} row",
                              file=sys.stderr)
                        continue
                    measured.append((name, variant, r))
                    if a.check == "on" and not r["correct"]:
                        failed += 1
                        print(f"warning: {wl} {shape} {variant}: y does not match the fp32 reference "
                              f"(rel_err {r['rel']:.3e})", file=sys.stderr)
                if bwriter and not decode:
                    pf = part_floors(b, s, heads, hidden)
                    for part, variant, t in time_parts(torch, F, sdpa_kernel, chosen, *args, b, s, heads, iters,
                                                       a.reps, a.warmup):
                        bwriter.writerow(results.schema_row(
                            wl, shape, variant, t, a.reps, pf[part], 0.0, env, commit, date,
                            ["sdpa-part", "graph", iters, "unchecked", torch.__version__, env["cudnn"]]))
                        print(f"{shape:<62} {variant:<26} {t['median']:>10.2f} us  x{t['median'] / pf[part]:<6.2f} "
                              f"floor  (part alone)")
                    bf.flush()
                del args, ref
            except Exception as e:  # inputs or reference (OOM): the shape fails
                failed += 1
                print(f"warning: {wl} {shape}: skipped, {type(e).__name__}: {results.first_line(e)}",
                      file=sys.stderr)
            # best_baseline_us over this script's correct rows of the shape; merge.py recomputes
            # it over every baseline of the bench's and this file.
            good = [r["median"] for _, _, r in measured if r["correct"]]
            best = min(good) if good else 0.0
            for name, variant, r in measured:
                med = r["median"]
                writer.writerow(results.schema_row(
                    wl, shape, variant, r, a.reps, fl, best, env, commit, date,
                    [f"sdpa-{name}", "graph", iters, f"{r['rel']:.3e}" if a.check == "on" else "unchecked",
                     torch.__version__, env["cudnn"]]))
                print(f"{shape:<62} {variant:<26} {med:>10.2f} us  x{med / fl:<6.2f} floor  "
                      f"{'unchecked' if a.check == 'off' else ('ok' if r['correct'] else 'WRONG')}")
            f.flush()
            sys.stdout.flush()
            results.cleanup(torch)
    if bf:
        bf.close()
        print(f"# wrote {a.breakdown} (the parts alone)")
    print(f"# wrote {out_path}; {failed} row(s) failed or incorrect")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
