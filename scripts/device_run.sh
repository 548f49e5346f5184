#!/usr/bin/env bash
# Runs every device test and benchmark on a GPU machine in one go; writes logs, CSV/JSON and
# timelines to $DEST (default bench/results/h200/latest). Binaries come from .device/bin
# (scripts/build_device.sh).
#   BATON_SANITIZE=0 skips the compute-sanitizer passes; BATON_*_TIMEOUT bound each step.
#   BATON_ONLY="gemm mlp" runs only the named steps (tests gemm conv attention examples sync syncov mlp zoo pairs gen convbench attentionbench async sanitize);
#   BATON_EXTRA="l2sweep msweep ncu" adds opt-in experiments.
set -uo pipefail
cd "$(dirname "$0")/.."
DEST="${DEST:-bench/results/h200/latest}"
BIN="${BATON_BIN:-.device/bin}"
mkdir -p "$DEST"
log="$DEST/device-tests.log"
fail=0
step() { echo "== $* ==" | tee -a "$log"; }
want() { [ -z "${BATON_ONLY:-}" ] || [[ " $BATON_ONLY " == *" $1 "* ]]; }
{
  echo "baton device run"
  echo "commit: $(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv 2>&1
  nvcc --version 2>/dev/null | tail -1
} > "$log"
cat "$log"

if want tests; then
step "device tests (baton core + async)"
timeout "${BATON_TEST_TIMEOUT:-300}" "$BIN/baton_device_tests" --gtest_output="json:$DEST/device-tests.json" 2>&1 | tee -a "$log" || fail=1
fi

if want gemm && [ -x "$BIN/baton_gemm_tests" ]; then
  step "sm90 CUTLASS GEMM tests"
  timeout "${BATON_GEMM_TIMEOUT:-300}" "$BIN/baton_gemm_tests" --gtest_output="json:$DEST/gemm-tests.json" 2>&1 | tee -a "$log" || fail=1
fi
# CTA-pair kernels (1x2 clusters) first, on a short leash: a cluster kernel that deadlocks hangs its
# test rather than failing it. If they do not pass, the rest runs without them (pairs_ok=0).
pairs_ok=1
ops_filter='*'
if want gemm && [ -x "$BIN/baton_ops_tests" ]; then
  step "MLP op tests: CTA pairs first (timeout ${BATON_PAIRS_TIMEOUT:-90} s)"
  timeout "${BATON_PAIRS_TIMEOUT:-90}" "$BIN/baton_ops_tests" --gtest_filter='*pairs*' \
    --gtest_output="json:$DEST/ops-tests-pairs.json" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then
    pairs_ok=0
    fail=1
    ops_filter='-*pairs*'
    echo "CTA-pair op tests: exit $rc ($([ "$rc" = 124 ] && echo 'timed out: a hang' || echo failed)); the rest runs without them" | tee -a "$log"
  fi
  step "MLP op tests (baton::ops::Mlp)"
  timeout "${BATON_GEMM_TIMEOUT:-180}" "$BIN/baton_ops_tests" --gtest_filter="$ops_filter" \
    --gtest_output="json:$DEST/ops-tests.json" 2>&1 | tee -a "$log" || fail=1
fi

if want conv && [ -x "$BIN/baton_conv_tests" ]; then
  step "conv-chain op tests (baton::ops::Conv2dChain)"
  timeout "${BATON_GEMM_TIMEOUT:-300}" "$BIN/baton_conv_tests" --gtest_output="json:$DEST/conv-tests.json" 2>&1 | tee -a "$log" || fail=1
fi

if want attention && [ -x "$BIN/baton_attention_tests" ]; then
  step "attention op tests (baton::ops::Attention)"
  timeout "${BATON_GEMM_TIMEOUT:-300}" "$BIN/baton_attention_tests" --gtest_output="json:$DEST/attention-tests.json" 2>&1 | tee -a "$log" || fail=1
fi

if want examples; then
step "examples"
timeout 60 "$BIN/baton_example_two_stage" 2>&1 | tee -a "$log" || fail=1
timeout 60 "$BIN/baton_example_inference_loop" 2>&1 | tee -a "$log" || fail=1
timeout 120 "$BIN/baton_example_file_stream" --self-test 2>&1 | tee -a "$log" || fail=1
# The awaitable pipeline as a user's program: a whole run, then one cancelled part-way.
if [ -x "$BIN/baton_example_stream_process" ]; then
  timeout 120 "$BIN/baton_example_stream_process" --mib 1024 2>&1 | tee -a "$log" || fail=1
  timeout 120 "$BIN/baton_example_stream_process" --mib 4096 --cancel-after-ms 30 2>&1 | tee -a "$log" || fail=1
fi
fi

if want sync; then
step "sync-cost benchmark"
timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_sync_cost" --out-dir "$DEST" --trace-tiles 528 2>&1 | tee -a "$log" || fail=1
if [ -f "$DEST/timeline-sync-cost.json" ] && python3 -c "import matplotlib" 2>/dev/null; then
  python3 "$BIN/plot_timeline.py" "$DEST/timeline-sync-cost.json" "$DEST/timeline-sync-cost.png" \
    "baton per-tile timeline: 4 copy stages x 528 tiles, per-tile policy, PDL (H200)" 2>&1 | tee -a "$log"
fi
fi

if want mlp && [ -x "$BIN/baton_bench_mlp" ]; then
  # SM clock, power and temperature every 100 ms while the MLP benchmarks run (sustained GEMMs run
  # at the power limit: clocks explain burst vs. sustained timings).
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > "$DEST/gpu-clocks.csv" 2>/dev/null &
  smi_pid=$!
  step "MLP benchmark (GPT-3)"
  timeout "${BATON_MLP_TIMEOUT:-300}" "$BIN/baton_bench_mlp" --preset gpt3 --out-dir "$DEST" --trace 512 2>&1 | tee -a "$log" || fail=1
  step "MLP benchmark (LLaMA)"
  timeout "${BATON_MLP_TIMEOUT:-300}" "$BIN/baton_bench_mlp" --preset llama --out-dir "$DEST" 2>&1 | tee -a "$log" || fail=1
  kill "$smi_pid" 2>/dev/null
  if python3 -c "import matplotlib" 2>/dev/null; then
    for c in "$DEST"/mlp-*.csv; do
      case "$c" in *-breakdown.csv) continue ;; esac  # another schema: GEMMs alone (bench --breakdown)
      [ -f "$c" ] && python3 "$BIN/plot_bench.py" "$c" "${c%.csv}.png" 2>&1 | tee -a "$log"
    done
  fi
  if python3 -c "import matplotlib" 2>/dev/null; then
    for t in "$DEST"/timeline-mlp-*.json; do
      [ -f "$t" ] && python3 "$BIN/plot_timeline.py" "$t" "${t%.json}.png" "$(basename "${t%.json}") (H200)" 2>&1 | tee -a "$log"
    done
  fi
fi

# The wait path's pure cost (BENCHMARKS.md, "Sync overhead"): GEMM2 with every semaphore posted
# against the same GEMM2 without waits, per policy, both presets, timed side by side.
if want syncov && [ -x "$BIN/baton_bench_mlp" ]; then
  step "sync overhead (GEMM2 with every semaphore posted)"
  for preset in gpt3 llama; do
    timeout 200 "$BIN/baton_bench_mlp" --preset "$preset" --m 1,64,128,512,2048 --sync-overhead 1 --out-dir "$DEST" 2>&1 \
      | grep -E "posted|nowait|error" | tee -a "$log" || fail=1
  done
  { head -1 "$DEST/sync-overhead-gpt3.csv"; tail -n +2 -q "$DEST"/sync-overhead-gpt3.csv "$DEST"/sync-overhead-llama.csv; } \
    > "$DEST/sync-overhead.csv" 2>/dev/null
fi

# The MLP model zoo (issue 15, BENCHMARKS.md): GPT-3 TP8 (GeLU), LLaMA-65B TP8, Llama-2-7B and Llama-2-70B TP4
# (SwiGLU) at the issue's 35 batch sizes; per model one process, so `baton-auto` (tuned), `baton-plan` and the
# baselines are timed in the same interleaved rounds (docs/mlp.md, "Interleaved timing"). BATON_ZOO_M,
# BATON_ZOO_MODELS ("name:H:F:act ...") and BATON_ZOO_VARIANTS narrow it.
if want zoo && [ -x "$BIN/baton_bench_mlp" ]; then
  zoo_m="${BATON_ZOO_M:-1,2,3,4,5,8,12,16,24,32,48,64,96,100,127,128,129,160,192,200,255,256,257,320,384,500,512,640,768,1000,1024,1025,1536,2000,2048}"
  zoo_v="${BATON_ZOO_VARIANTS:-baton-auto,baton-plan,cublaslt-graph,cutlass-pdl-graph}"
  zoo_csvs=()
  for model in ${BATON_ZOO_MODELS:-gpt3-tp8:12288:6144:gelu llama65-tp8:8192:2752:swiglu llama2-7b:4096:11008:swiglu llama2-70b-tp4:8192:7168:swiglu}; do
    IFS=: read -r name h f act <<< "$model"
    step "MLP zoo: $name"
    mkdir -p "$DEST/zoo/$name"
    timeout "${BATON_ZOO_TIMEOUT:-300}" "$BIN/baton_bench_mlp" --hidden "$h" --ffn "$f" --act "$act" --m "$zoo_m" --breakdown 0 \
      --reps 30 --check-rows 4 --timeout-s "${BATON_ZOO_TIMEOUT:-300}" --variants "$zoo_v" --out-dir "$DEST/zoo/$name" \
      > "$DEST/zoo/$name.log" 2>&1 || fail=1
    grep -A150 "^workload " "$DEST/zoo/$name.log" | tee -a "$log"
    for c in "$DEST/zoo/$name"/mlp-*.csv; do [ -f "$c" ] && zoo_csvs+=("$c"); done
  done
  [ ${#zoo_csvs[@]} -gt 0 ] && python3 bench/common/concat_results.py --out "$DEST/mlp-zoo.csv" "${zoo_csvs[@]}" | tee -a "$log"
  [ -f "$DEST/mlp-zoo.csv" ] && python3 scripts/plot_zoo.py "$DEST/mlp-zoo.csv" "$DEST/mlp-zoo.png" 2>&1 | tee -a "$log"
fi

# baton-auto with CTA pairs allowed (bench --cta-pairs 1: 128x96 GEMMs as 1x2 clusters multicasting A,
# and tuning tries them) against cuBLASLt, from M = 128 on; compare with the MLP step's baton-auto.
if want pairs && [ "$pairs_ok" = 1 ] && [ -x "$BIN/baton_bench_mlp" ]; then
  for preset in gpt3 llama; do
    step "CTA pairs: $preset"
    mkdir -p "$DEST/pairs"
    timeout 150 "$BIN/baton_bench_mlp" --preset "$preset" --m 128,256,512,1024,2048 --cta-pairs 1 --breakdown 0 \
      --variants baton-auto,cublaslt-graph --out-dir "$DEST/pairs" 2>&1 | grep -E "baton::ops|baton-auto|cublaslt-graph  |error|mismatch" | tee -a "$log"
  done
fi

# Generated against hand-written policies (issue 5): the same chains on batonc's policies from
# include/baton/ops/mlp.baton (baton-*-gen) and on the hand-written GemmA ones, a second sample
# beside the MLP step's (run-to-run noise shows in the difference between the two).
if want gen && [ -x "$BIN/baton_bench_mlp" ]; then
  for preset in gpt3 llama; do
    step "generated policies: $preset"
    mkdir -p "$DEST/gen"
    timeout 150 "$BIN/baton_bench_mlp" --preset "$preset" --m 1,16,64,128,256,512,2048 --breakdown 0 \
      --variants baton-kblock,baton-kblock-gen,baton-row,baton-row-gen --out-dir "$DEST/gen" 2>&1 | grep -E "baton-|error|mismatch" | tee -a "$log"
  done
fi

# Opt-in experiments (BATON_EXTRA="l2sweep"): baton-auto at decode M with GEMM1's L2 prefetch of W2
# at several sizes (each run's tuning log also times the plan without it).
if [[ " ${BATON_EXTRA:-} " == *" l2sweep "* ]] && [ -x "$BIN/baton_bench_mlp" ]; then
  for preset in llama gpt3; do
    for mb in 0 8 48; do
      step "L2 prefetch sweep: $preset, $mb MB"
      mkdir -p "$DEST/l2sweep/mb$mb"
      timeout 120 "$BIN/baton_bench_mlp" --preset "$preset" --m 1,16,64,128,256 --variants baton-auto,cublaslt-graph \
        --l2-prefetch-mb "$mb" --out-dir "$DEST/l2sweep/mb$mb" 2>&1 | grep -E "baton::ops|baton-auto|cublaslt-graph  " | tee -a "$log"
    done
  done
fi

# BATON_EXTRA="msweep": the baton GEMMs without hooks around M = 64..128, where the time grows fastest:
# m = 64 -> 65 doubles A's TMA box (64 -> 128 rows) and wakes the second MMA warp group; 65 -> 128 only
# adds rows to the split-K partials and the epilogue. Also the split-K choice at m = 128.
if [[ " ${BATON_EXTRA:-} " == *" msweep "* ]] && [ -x "$BIN/baton_bench_mlp" ]; then
  for preset in llama gpt3; do
    step "M sweep: $preset"
    mkdir -p "$DEST/msweep"
    timeout 120 "$BIN/baton_bench_mlp" --preset "$preset" --m 32,64,65,96,128 --variants cutlass-graph,cublaslt-graph \
      --out-dir "$DEST/msweep" 2>&1 | grep -E "cutlass-graph  |cublaslt-graph  |split-K parts" | tee -a "$log"
    for sk in 1,1 2,2 4,4; do
      timeout 120 "$BIN/baton_bench_mlp" --preset "$preset" --m 128 --variants cutlass-graph --split-k "$sk" \
        --out-dir "$DEST/msweep/split$sk" 2>&1 | grep -E "cutlass-graph  |split-K parts" | tee -a "$log"
    done
  done
fi

# BATON_EXTRA="ncu": Nsight Compute sections (speed of light, memory, compute) of the baton-GEMM kernels
# (cutlass-stream: the op's GEMMs without hooks) and cuBLASLt's, one MLP pass each, at decode and at
# M = 128. The clocks are left alone (--clock-control none).
if [[ " ${BATON_EXTRA:-} " == *" ncu "* ]] && [ -x "$BIN/baton_bench_mlp" ] && command -v ncu >/dev/null 2>&1; then
  for cfg in "llama 1" "llama 128" "gpt3 128"; do
    set -- $cfg
    step "ncu: $1 m=$2"
    mkdir -p "$DEST/ncu"
    timeout 120 ncu --clock-control none --launch-count 40 --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --csv --page details --log-file "$DEST/ncu/ncu-$1-m$2.csv" \
      "$BIN/baton_bench_mlp" --preset "$1" --m "$2" --variants cutlass-stream,cublaslt-graph --reps 1 --warmup 0 \
      --iters-per-graph 1 --check-rows 1 --out-dir "$DEST/ncu/out-$1-m$2" > "$DEST/ncu/bench-$1-m$2.log" 2>&1
    echo "ncu exit $? ($(wc -l < "$DEST/ncu/ncu-$1-m$2.csv" 2>/dev/null || echo 0) lines)" | tee -a "$log"
  done
fi

# The conv chains (docs/conv.md): baton's chain and the same CUTLASS convs unsynchronized, then the
# cuDNN baseline (PyTorch in a CUDA graph) in the same call, merged into conv-<workload>.csv/.json.
if want convbench && [ -x "$BIN/baton_bench_conv" ]; then
  for w in resnet38 vgg19; do
    step "conv bench: $w"
    tl=""
    [ "$w" = resnet38 ] && tl="--timeline $DEST/timeline-conv-resnet38.json"
    timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_conv" --workload "$w" --out-dir "$DEST" $tl 2>&1 | tee -a "$log" || fail=1
    if python3 -c "import torch" 2>/dev/null; then
      timeout "${BATON_BENCH_TIMEOUT:-300}" python3 "$BIN/cudnn_pairs.py" --workload "$w" --out "$DEST/cudnn-$w.csv" \
        --commit "$(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)" 2>&1 | tee -a "$log" || fail=1
      [ -f "$DEST/conv-$w.csv" ] && [ -f "$DEST/cudnn-$w.csv" ] && \
        python3 "$BIN/merge.py" --baton "$DEST/conv-$w.csv" --cudnn "$DEST/cudnn-$w.csv" --out "$DEST/conv-$w.csv" 2>&1 | tee -a "$log"
    fi
  done
  if python3 -c "import matplotlib" 2>/dev/null; then
    python3 "$BIN/plot_conv.py" "$DEST"/conv-resnet38.csv "$DEST"/conv-vgg19.csv --out-dir "$DEST" 2>&1 | tee -a "$log"
  fi
  if [ -f "$DEST/timeline-conv-resnet38.json" ] && python3 -c "import matplotlib" 2>/dev/null; then
    python3 "$BIN/plot_timeline.py" "$DEST/timeline-conv-resnet38.json" "$DEST/timeline-conv-resnet38.png" \
      "baton per-tile timeline: ResNet 64@56, batch 1, kblock halo waits (H200)" 2>&1 | tee -a "$log"
  fi
fi

# The attention chain (issue 19): baton_bench_attention's variants, the PyTorch SDPA baselines
# (flash and cuDNN) in the same step, merged into attention-<workload>.csv with issue 19's targets.
if want attentionbench && [ -x "$BIN/baton_bench_decode_sweep" ]; then
  step "decode attention over split-KV parts"
  timeout 300 "$BIN/baton_bench_decode_sweep" --out "$DEST/decode-sweep.csv" 2>&1 | tee -a "$log" || fail=1
fi
if want attentionbench && [ -x "$BIN/baton_bench_attention" ]; then
  for w in gpt3 llama; do
    step "attention bench: $w"
    tl=""
    [ "$w" = gpt3 ] && tl="--timeline $DEST/timeline-attention-gpt3.json --timeline-shape 1x2048"
    # Prefill and decode shapes (--phase both, the default): 9 prefill and 24 decode shapes per workload.
    timeout "${BATON_BENCH_TIMEOUT:-450}" "$BIN/baton_bench_attention" --workload "$w" --out-dir "$DEST" $tl 2>&1 | tee -a "$log" || fail=1
    if python3 -c "import torch" 2>/dev/null; then
      timeout "${BATON_BENCH_TIMEOUT:-300}" python3 "$BIN/sdpa_baseline.py" --workload "$w" --out "$DEST/sdpa-$w.csv" \
        --breakdown "$DEST/sdpa-$w-breakdown.csv" \
        --commit "$(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)" 2>&1 | tee -a "$log" || fail=1
      # The kernels alone (bench --breakdown) and the baseline's parts alone, in one file.
      [ -f "$DEST/attention-$w-breakdown.csv" ] && [ -f "$DEST/sdpa-$w-breakdown.csv" ] && \
        python3 "$BIN/attention_merge.py" --parts "$DEST/attention-$w-breakdown.csv" "$DEST/sdpa-$w-breakdown.csv" \
          --out "$DEST/attention-$w-breakdown.csv" 2>&1 | tee -a "$log"
    fi
    [ -f "$DEST/attention-$w.csv" ] && \
      python3 "$BIN/attention_merge.py" --bench "$DEST/attention-$w.csv" --sdpa "$DEST/sdpa-$w.csv" --out "$DEST/attention-$w.csv" 2>&1 | tee -a "$log"
  done
  if python3 -c "import matplotlib" 2>/dev/null; then
    python3 "$BIN/plot_attention.py" "$DEST"/attention-gpt3.csv "$DEST"/attention-llama.csv --out-dir "$DEST" 2>&1 | tee -a "$log"
    [ -f "$DEST/timeline-attention-gpt3.json" ] && \
      python3 "$BIN/plot_timeline.py" "$DEST/timeline-attention-gpt3.json" "$DEST/timeline-attention-gpt3.png" \
        "baton per-tile timeline: GPT-3 TP8 attention prefill, batch 1 x 2048, auto plan (H200)" 2>&1 | tee -a "$log"
  fi
fi

if want async; then
step "async benchmark"
timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_async" --out-dir "$DEST" 2>&1 | tee -a "$log" || fail=1
# The transfers at issue 18's other sizes (16 x 64 MiB is the run above), joined into one async.csv.
sizes=()
for sz in 5x300 64x4 256x1; do
  step "async transfers: $sz (chunks x MiB)"
  mkdir -p "$DEST/async-sizes/$sz"
  timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_async" --only transfers --chunks "${sz%x*}" --chunk-mib "${sz#*x}" \
    --out-dir "$DEST/async-sizes/$sz" 2>&1 | grep -E "^pipeline|error" | tee -a "$log" || fail=1
  [ -f "$DEST/async-sizes/$sz/async.csv" ] && sizes+=("$DEST/async-sizes/$sz/async.csv")
done
[ -f "$DEST/async.csv" ] && [ ${#sizes[@]} -gt 0 ] && \
  python3 "$BIN/concat_results.py" --out "$DEST/async.csv" "$DEST/async.csv" "${sizes[@]}" 2>&1 | tee -a "$log"
fi

if want sanitize && [ "${BATON_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  slog="$DEST/sanitizer.log"
  : > "$slog"
  # Left out under the sanitizer: PdlCompletionIsTransitive (a timing experiment; the tools
  # serialize kernels), CudaErrorSurfacesWithCallSite and PipelineCaptureErrorsEndTheCapture (they
  # make failing CUDA calls on purpose, which the tools count as API errors).
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool (BATON_TEST_SCALE=1000) ==" | tee -a "$slog"
    BATON_TEST_SCALE=1000 timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$BIN/baton_device_tests" --gtest_filter='-*PdlCompletionIsTransitive*:*CudaErrorSurfacesWithCallSite*:*PipelineCaptureErrorsEndTheCapture*' >> "$slog" 2>&1
    rc=$?
    echo "compute-sanitizer $tool (baton_device_tests): exit $rc" | tee -a "$slog"
    [ $rc -ne 0 ] && fail=1
    if [ -x "$BIN/baton_gemm_tests" ]; then
      timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$BIN/baton_gemm_tests" --gtest_filter='Shapes/Sm90SingleGemm.*/m1:Shapes/Sm90SingleGemm.*/m17*:Shapes/Sm90SingleGemm.*/m129_tail*:Sm90Gemm.*:Cases/Sm90GemmSplitK.MatchesReference*/decode_m1_*:Cases/Sm90SwiGlu.*/m1_split3' >> "$slog" 2>&1
      rc=$?
      echo "compute-sanitizer $tool (baton_gemm_tests, small shapes and a ragged last band): exit $rc" | tee -a "$slog"
      [ $rc -ne 0 ] && fail=1
    fi
    if [ -x "$BIN/baton_ops_tests" ]; then
      timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$BIN/baton_ops_tests" --gtest_filter="Ragged/OpsMlp.*/*_m17:Plans/OpsMlp.*/*m129*:Plans/OpsMlp.*/*split*:Plans/OpsMlp.*/*swap*:Plans/OpsMlp.*/*pairs_m*:OpsMlpErrors.*$([ "$pairs_ok" = 1 ] || echo '-*pairs*')" >> "$slog" 2>&1
      rc=$?
      echo "compute-sanitizer $tool (baton_ops_tests, m=17, split-K and swapped-GEMM2 cases): exit $rc" | tee -a "$slog"
      [ $rc -ne 0 ] && fail=1
    fi
    if [ -x "$BIN/baton_conv_tests" ]; then
      BATON_TEST_SCALE=1000 timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$BIN/baton_conv_tests" --gtest_filter='*SplitK*:*Stress*:*NoneInTwoLaunches*:*Bad*' >> "$slog" 2>&1
      rc=$?
      echo "compute-sanitizer $tool (baton_conv_tests, split-K, the delay stress, both none launches, errors): exit $rc" | tee -a "$slog"
      [ $rc -ne 0 ] && fail=1
    fi
    if [ -x "$BIN/baton_attention_tests" ]; then
      BATON_TEST_SCALE=1000 timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$BIN/baton_attention_tests" --gtest_filter='*Stress*:*Bad*:*Decode*' >> "$slog" 2>&1
      rc=$?
      echo "compute-sanitizer $tool (baton_attention_tests, the delay stress, errors, decode): exit $rc" | tee -a "$slog"
      [ $rc -ne 0 ] && fail=1
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$slog" | tail -2
  done
fi

echo "device_run: $([ $fail = 0 ] && echo ALL OK || echo FAILURES)" | tee -a "$log"
exit $fail
