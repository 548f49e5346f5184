// bench/mlp/reference.hpp — the CPU fp64 reference of the MLP (erf GeLU or SwiGLU, Y rounded to bf16
// as the GPU stores it) on sampled rows of Z, and which rows are sampled.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/random.hpp"

namespace baton_bench::mlp {

using namespace baton;

inline double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)); }

inline double dot(const double* a, const double* b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four chains: throughput-bound, not latency-bound
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

inline double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Z rows `rows` of the reference: Y = bf16(GeLU(X W1^T)) (or bf16(SiLU(X Wg^T) * (X Wu^T)) with
// W1's rows 2j = gate j, 2j + 1 = up j) in fp64, then Z = Y W2^T in fp64.
template <class bf16>
inline std::vector<std::vector<double>> reference_rows(const std::vector<bf16>& x, const std::vector<bf16>& w1,
                                                const std::vector<bf16>& w2, int h, int f, bool swiglu,
                                                const std::vector<int>& rows) {
  const size_t R = rows.size();
  std::vector<std::vector<double>> xr(R, std::vector<double>(size_t(h)));
  for (size_t r = 0; r < R; ++r)
    for (int k = 0; k < h; ++k) xr[r][size_t(k)] = double(float(x[size_t(rows[r]) * h + k]));
  std::vector<std::vector<double>> y(R, std::vector<double>(size_t(f)));
  bench::parallel([&](size_t t, size_t nt) {
    std::vector<double> w(static_cast<size_t>(h)), u(static_cast<size_t>(h));
    for (size_t j = t; j < size_t(f); j += nt) {  // one W1 row (pair) for every sampled row
      if (!swiglu) {
        for (int k = 0; k < h; ++k) w[size_t(k)] = double(float(w1[j * size_t(h) + size_t(k)]));
        for (size_t r = 0; r < R; ++r)
          y[r][j] = double(float(bf16(float(gelu(dot(xr[r].data(), w.data(), h))))));  // Y is stored in bf16
      } else {
        for (int k = 0; k < h; ++k) {
          w[size_t(k)] = double(float(w1[(2 * j) * size_t(h) + size_t(k)]));
          u[size_t(k)] = double(float(w1[(2 * j + 1) * size_t(h) + size_t(k)]));
        }
        for (size_t r = 0; r < R; ++r)
          y[r][j] = double(float(bf16(float(silu(dot(xr[r].data(), w.data(), h)) * dot(xr[r].data(), u.data(), h)))));
      }
    }
  });
  std::vector<std::vector<double>> z(R, std::vector<double>(size_t(h)));
  bench::parallel([&](size_t t, size_t nt) {
    std::vector<double> w(static_cast<size_t>(f));
    for (size_t j = t; j < size_t(h); j += nt) {
      for (int k = 0; k < f; ++k) w[size_t(k)] = double(float(w2[j * size_t(f) + size_t(k)]));
      for (size_t r = 0; r < R; ++r) z[r][j] = dot(y[r].data(), w.data(), f);
    }
  });
  return z;
}

// `n` rows spread over [0, m): one in every m/n stretch (so one in every 128-row tile when
// m <= 128 n), at a pseudo-random offset, plus the last row (the ragged tile's edge).
inline std::vector<int> sample_rows(int m, int n) {
  std::vector<int> rows;
  if (m <= n) {
    for (int i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  for (int i = 0; i < n; ++i) {
    const int64_t lo = int64_t(i) * m / n, hi = int64_t(i + 1) * m / n;
    rows.push_back(int(lo + int64_t(bench::splitmix64(uint64_t(m) * 131 + uint64_t(i)) % uint64_t(std::max<int64_t>(1, hi - lo)))));
  }
  rows.push_back(m - 1);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace baton_bench::mlp
