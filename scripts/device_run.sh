#!/usr/bin/env bash
# Runs every device test and benchmark on a GPU machine in one go; writes logs and CSV/JSON to
# $OUT (default bench/results/h200/latest). Binaries come from .device/bin (scripts/build_device.sh).
#   BATON_SANITIZE=0 skips the compute-sanitizer passes.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench/results/h200/latest}"
BIN="${BATON_BIN:-.device/bin}"
mkdir -p "$OUT"
log="$OUT/device-tests.log"
fail=0
{
  echo "baton device run"
  echo "commit: $(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv 2>&1
  nvcc --version 2>/dev/null | tail -1
} > "$log"
cat "$log"

echo "== device tests ==" | tee -a "$log"
timeout "${BATON_TEST_TIMEOUT:-300}" "$BIN/baton_device_tests" --gtest_output="json:$OUT/device-tests.json" 2>&1 | tee -a "$log" || fail=1

echo "== example ==" | tee -a "$log"
timeout 60 "$BIN/baton_example_two_stage" 2>&1 | tee -a "$log" || fail=1
timeout 60 "$BIN/baton_example_inference_loop" 2>&1 | tee -a "$log" || fail=1
timeout 120 "$BIN/baton_example_file_stream" --self-test 2>&1 | tee -a "$log" || fail=1

echo "== sync-cost benchmark ==" | tee -a "$log"
timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_sync_cost" --out-dir "$OUT" 2>&1 | tee -a "$log" || fail=1
echo "== async benchmark ==" | tee -a "$log"
timeout "${BATON_BENCH_TIMEOUT:-300}" "$BIN/baton_bench_async" --out-dir "$OUT" 2>&1 | tee -a "$log" || fail=1
if [ "${BATON_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  slog="$OUT/sanitizer.log"
  : > "$slog"
  # Left out under the sanitizer: PdlCompletionIsTransitive (a timing experiment; the tools
  # serialize kernels) and CudaErrorSurfacesWithCallSite (makes a failing CUDA call on purpose,
  # which the tools count as an API error).
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool (BATON_TEST_SCALE=1000) ==" | tee -a "$slog"
    BATON_TEST_SCALE=1000 timeout "${BATON_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$BIN/baton_device_tests" --gtest_filter='-*PdlCompletionIsTransitive*:*CudaErrorSurfacesWithCallSite*' >> "$slog" 2>&1
    rc=$?
    echo "compute-sanitizer $tool: exit $rc" | tee -a "$slog"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED|FAILED" "$slog" | tail -4
    [ $rc -ne 0 ] && fail=1
  done
fi

echo "device_run: $([ $fail = 0 ] && echo ALL OK || echo FAILURES)" | tee -a "$log"
exit $fail
