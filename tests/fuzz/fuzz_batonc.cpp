// libFuzzer target for batonc's front end and analysis: any input must give a program or a
// located error, never a crash, a sanitizer report or a hang (docs/batonc.md, "Fuzzing").
//   cmake -B build/fuzz -DBATON_BUILD_FUZZERS=ON -DCMAKE_CXX_COMPILER=clang++ -DBATON_ENABLE_CUDA=OFF
//   cmake --build build/fuzz --target baton_fuzz_batonc
//   build/fuzz/tests/fuzz/baton_fuzz_batonc -max_total_time=600 -timeout=10 corpus/ tests/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/dsl/analysis.hpp"
#include "baton/dsl/check.hpp"
#include "baton/dsl/emit.hpp"
#include "baton/dsl/program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  const std::string src(reinterpret_cast<const char*>(data), size);
  auto prog = baton::dsl::parse("fuzz.baton", src);
  if (!prog.ok()) return 0;
  // A small proof budget (the CLI's is 2^28 steps): big programs are refused quickly, small ones
  // go through every path.
  constexpr int64_t budget = int64_t(1) << 22;
  auto a = baton::dsl::analyze(prog.value(), budget);
  if (!a.ok()) return 0;
  (void)baton::dsl::emit_header(a.value());
  (void)baton::dsl::explain(a.value());
  for (const auto& e : a.value().edges) {
    const std::string spec = a.value().stages[size_t(e.producer)].name + "->" + a.value().stages[size_t(e.consumer)].name;
    (void)baton::dsl::check_policy(a.value(), spec + "=row@gemm_a", budget);
    (void)baton::dsl::check_policy(a.value(), spec + "=group_k(2,3)", budget);
  }
  return 0;
}
