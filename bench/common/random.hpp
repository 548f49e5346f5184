// bench/common/random.hpp — deterministic random inputs, filled on every host core.
//
// Values depend only on (tensor, index), not on the thread count or the order of filling, so a
// tensor's leading elements are the same whatever its length (a bench's smaller shapes use the
// leading rows of the largest shape's inputs, and CPU references computed once stay valid).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace baton::bench {

// body(t, nt) on nt host threads (one per core, at most 64), t = 0 .. nt - 1.
inline void parallel(const std::function<void(size_t, size_t)>& body) {
  const size_t nt = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 64));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < nt; ++t) pool.emplace_back([&, t] { body(t, nt); });
  for (auto& th : pool) th.join();
}

// SplitMix64: a 64-bit hash of x, good enough to index random streams.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// n values uniform on [-sqrt(3) std, sqrt(3) std) (standard deviation `std_dev`), converted from
// float to T; deterministic per (tensor, index). `tensor` < 2^16 names the tensor.
template <class T>
std::vector<T> random_uniform(size_t n, uint64_t tensor, double std_dev) {
  std::vector<T> v(n);
  const float a = float(std::sqrt(3.0) * std_dev);
  parallel([&](size_t t, size_t nt) {
    const size_t chunk = (n + nt - 1) / nt;
    for (size_t i = t * chunk; i < std::min(n, (t + 1) * chunk); ++i) {
      const uint64_t r = splitmix64((tensor << 48) ^ i);
      const float u = float(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
      v[i] = T((2.f * u - 1.f) * a);
    }
  });
  return v;
}

}  // namespace baton::bench
