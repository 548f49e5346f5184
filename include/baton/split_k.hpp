// baton/split_k.hpp — how many CTAs share an output tile's k range (split-K), for GEMM-like stages
// with fewer tiles than SMs (LLM decode: a 12288 x 6144 weight matrix is 48 tiles of 128 columns
// for 132 SMs). Host-only arithmetic; the GEMM that uses it is baton/cutlass/sm90_gemm.cuh.
#pragma once

#include <cstdint>

namespace baton {

// The number of K splits that minimizes the estimated time of a GEMM with `tiles` output tiles
// and `k_tiles` k-blocks on `sms` SMs running one CTA each:
//   waves(tiles * s) * (ceil(k_tiles / s) + fixed per-CTA cost)
// with a fixed cost of ~6 k-blocks per CTA (launch, pipeline fill, epilogue) and ~8 with a split
// (plus the partial tile's write and the last part's reduction). 1 once the tiles fill the
// machine. Never more than max_split, nor than k_tiles / 4 (parts of fewer than 4 k-blocks are
// all overhead); a split must beat the best smaller one by more than 3%.
constexpr int choose_split_k(int64_t tiles, int k_tiles, int sms, int max_split = 8) {
  if (tiles <= 0 || k_tiles <= 0 || sms <= 0) return 1;
  int best = 1;
  double best_cost = 0;
  for (int s = 1; s <= max_split && (s == 1 || s * 4 <= k_tiles); ++s) {
    const int64_t ctas = tiles * s;
    const int64_t waves = (ctas + sms - 1) / sms;
    const double per_cta = double((k_tiles + s - 1) / s) + (s > 1 ? 8.0 : 6.0);
    const double cost = double(waves) * per_cta;
    if (s == 1 || cost < best_cost * 0.97) {
      best = s;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace baton
