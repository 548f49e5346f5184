#!/usr/bin/env bash
# Builds the device tests, benchmarks and examples (Release, sm_90a) and stages the binaries in
# .device/bin, the folder the device run carries to the GPU machine. The MLP kernel library is built
# with every kernel (-DBATON_MLP_EXTRA_KERNELS=ON: the CTA-pair and 32-token swapped GEMMs CI leaves
# out), so the device tests and benchmarks keep covering them; .device/bin/BUILD_OPTIONS records it
# (scripts/run.sh rebuilds staged binaries that lack it).
#   BATON_JOBS=N          parallel compile jobs (default: the machine's cores, capped at one job per
#                         6 GiB of memory: a kernel translation unit peaks at 4-7 GB)
#   BATON_CUTLASS_DIR=D   a CUTLASS 4.2 tree (D/include, D/tools/util/include) instead of pip (offline machines)
#   GTEST_ROOT=D          GoogleTest under D/include, D/lib when it is not installed system-wide
#   BATON_COMMIT=C        the commit to record when git cannot tell (a copied working tree)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
jobs="${BATON_JOBS:-$(baton_default_jobs)}"
extra=()
[ -n "${BATON_CUTLASS_DIR:-}" ] && extra+=("-DBATON_CUTLASS_DIR=$(realpath "$BATON_CUTLASS_DIR")")
[ -n "${GTEST_ROOT:-}" ] && extra+=("-DGTEST_ROOT=$(realpath "$GTEST_ROOT")")
echo "build_device: $jobs jobs"
cmake --preset default -DBATON_MLP_EXTRA_KERNELS=ON "${extra[@]}"
# The attention chain's kernels need CUTLASS's example 88 (cmake/BatonCutlass.cmake): built when there.
attention=()
grep -q "baton_attention_tests" build/default/build.ninja && attention=(baton_attention_tests)
grep -q "baton_bench_attention" build/default/build.ninja && attention+=(baton_bench_attention)
cmake --build --preset default -j "$jobs" --target "${attention[@]}" baton_device_tests baton_bench_sync_cost baton_bench_async baton_bench_decode_sweep baton_example_two_stage baton_example_inference_loop baton_example_file_stream baton_example_stream_process baton_gemm_tests baton_ops_tests baton_bench_mlp baton_conv_tests baton_bench_conv
rm -rf .device/bin && mkdir -p .device/bin
cp build/default/bin/baton_device_tests build/default/bin/baton_bench_sync_cost build/default/bin/baton_bench_async build/default/bin/baton_bench_decode_sweep build/default/bin/baton_example_two_stage build/default/bin/baton_example_inference_loop build/default/bin/baton_example_file_stream build/default/bin/baton_example_stream_process build/default/bin/baton_gemm_tests build/default/bin/baton_ops_tests build/default/bin/baton_bench_mlp build/default/bin/baton_conv_tests build/default/bin/baton_bench_conv .device/bin/
[ ${#attention[@]} -gt 0 ] && cp build/default/bin/baton_attention_tests .device/bin/
[[ " ${attention[*]} " == *" baton_bench_attention "* ]] && cp build/default/bin/baton_bench_attention .device/bin/
cp scripts/plot_timeline.py scripts/plot_bench.py scripts/plot_conv.py bench/conv/cudnn_pairs.py bench/conv/merge.py .device/bin/
# The attention bench's merge.py is staged as attention_merge.py (bench/conv/merge.py holds the name).
cp scripts/plot_attention.py bench/attention/sdpa_baseline.py .device/bin/
cp bench/attention/merge.py .device/bin/attention_merge.py
cp bench/common/results.py bench/common/concat_results.py .device/bin/  # the bench scripts' shared module
echo "${BATON_COMMIT:-$(git describe --always --dirty --abbrev=12)}" > .device/bin/COMMIT
echo "BATON_MLP_EXTRA_KERNELS=ON" > .device/bin/BUILD_OPTIONS
du -sh .device/bin
