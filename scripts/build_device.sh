#!/usr/bin/env bash
# Builds the device tests, benchmarks and examples (Release, sm_90a) and stages the binaries in
# .device/bin, the folder the device run carries to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
cmake --preset default
cmake --build --preset default -j "${BATON_JOBS:-2}" --target baton_device_tests baton_bench_sync_cost baton_bench_async baton_example_two_stage baton_example_inference_loop baton_example_file_stream baton_gemm_tests baton_ops_tests baton_bench_mlp
rm -rf .device/bin && mkdir -p .device/bin
cp build/default/bin/baton_device_tests build/default/bin/baton_bench_sync_cost build/default/bin/baton_bench_async build/default/bin/baton_example_two_stage build/default/bin/baton_example_inference_loop build/default/bin/baton_example_file_stream build/default/bin/baton_gemm_tests build/default/bin/baton_ops_tests build/default/bin/baton_bench_mlp .device/bin/
cp scripts/plot_timeline.py scripts/plot_bench.py .device/bin/
git describe --always --dirty --abbrev=12 > .device/bin/COMMIT
du -sh .device/bin
