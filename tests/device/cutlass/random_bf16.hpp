// Random bf16 test data and a host parallel loop for CPU references, shared by the sm90 GEMM, MLP
// op and conv op device tests.
#pragma once

#include <cutlass/numeric_types.h>

#include <cstdint>
#include <algorithm>
#include <random>
#include <thread>
#include <vector>

namespace bt {

// n values uniform in [-scale, scale], reproducible from `seed`.
inline std::vector<::cutlass::bfloat16_t> random_bf16(size_t n, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<::cutlass::bfloat16_t> v(n);
  for (auto& x : v) x = ::cutlass::bfloat16_t(u(rng) * scale);
  return v;
}

// Runs body(i) for i in [0, n) on all cores (at most 32 threads): the CPU references.
template <class F>
void parallel_for(size_t n, F body) {
  const unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < nt; ++t)
    pool.emplace_back([&, t] {
      for (size_t i = t; i < n; i += nt) body(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace bt
