#!/usr/bin/env bash
# Split-K and tile-order sweep of the MLP benchmark on a GPU machine (one device call): each
# configuration writes DEST/<config>/mlp-{gpt3,llama}.{csv,json}. Binaries from .device/bin.
#   DEST=/tmp/sweep bash scripts/mlp_sweep.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEST="${DEST:-bench/results/h200/sweep}"
BIN="${BATON_BIN:-.device/bin}"
VARIANTS="${VARIANTS:-cutlass-graph,cublaslt-graph,baton-kblock,baton-row,baton-auto}"
for cfg in "auto auto" "1,1 auto" "auto 1" "1,1 1"; do
  set -- $cfg
  name="split-${1/,/x}-group-$2"
  mkdir -p "$DEST/$name"
  for preset in gpt3 llama; do
    echo "== $name $preset =="
    timeout 200 "$BIN/baton_bench_mlp" --preset "$preset" --split-k "$1" --group-m "$2" --variants "$VARIANTS" \
      --reps 30 --out-dir "$DEST/$name" > "$DEST/$name/$preset.log" 2>&1
    echo "exit $?"
    grep -A14 "median us per MLP" "$DEST/$name/$preset.log"
  done
done
