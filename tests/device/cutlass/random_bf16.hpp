// Random bf16 test data shared by the sm90 GEMM and MLP op device tests.
#pragma once

#include <cutlass/numeric_types.h>

#include <cstdint>
#include <random>
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

}  // namespace bt
