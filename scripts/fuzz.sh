#!/usr/bin/env bash
# Builds batonc's libFuzzer target (clang, ASan + UBSan) and fuzzes the DSL front end and analysis
# for BATON_FUZZ_SECONDS (default 600) starting from the seed corpus tests/fuzz/corpus.
# Exit 0: no crash, sanitizer report or hang (-timeout=10 s per input); the corpus grown goes to
# build/fuzz/corpus. Crashing inputs are left in build/fuzz/ (crash-*, timeout-*, leak-*).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt install clang)"; exit 2; }
mkdir -p build
cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DBATON_ENABLE_CUDA=OFF -DBATON_BUILD_TESTS=OFF -DBATON_BUILD_BENCH=OFF -DBATON_BUILD_EXAMPLES=OFF \
  -DBATON_BUILD_TOOLS=OFF -DBATON_BUILD_FUZZERS=ON > build/fuzz-configure.log 2>&1 || { cat build/fuzz-configure.log; exit 1; }
cmake --build build/fuzz --target baton_fuzz_batonc
mkdir -p build/fuzz/corpus
secs="${BATON_FUZZ_SECONDS:-600}"
cd build/fuzz
./tests/fuzz/baton_fuzz_batonc -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=4096 \
  -print_final_stats=1 corpus ../../tests/fuzz/corpus 2>&1 | tail -25
echo "fuzz.sh: ${secs} s, no crash; corpus: $(ls corpus | wc -l) inputs grown from $(ls ../../tests/fuzz/corpus | wc -l) seeds"
