// baton/split_k.hpp — how many CTAs share an output tile's k range (split-K), for GEMM-like stages
// with fewer tiles than SMs (LLM decode: a 12288 x 6144 weight matrix is 48 tiles of 128 columns
// for 132 SMs). Host-only arithmetic; the GEMM that uses it is baton/cutlass/sm90_gemm.cuh.
#pragma once

#include <cstdint>

namespace baton {

// The number of K splits for a GEMM with `tiles` output tiles and `k_tiles` k-blocks on `sms` SMs
// running one CTA each: as many parts as fit in ONE wave, floor(sms / tiles), at most max_split
// and never parts of fewer than 8 k-blocks; 1 once the tiles fill half the machine. Measured on
// the H200 (bench/results/h200/sweep/): splits that spill into a second wave lost to no split
// (GPT-3 m = 1: 5 parts in 2 waves 95 us vs 89 us unsplit), one-wave splits won (LLaMA m = 1:
// 3 parts, 45 us vs 49 us).
constexpr int choose_split_k(int64_t tiles, int k_tiles, int sms, int max_split = 8) {
  if (tiles <= 0 || k_tiles <= 0 || sms <= 0) return 1;
  int64_t s = sms / tiles;
  if (s > max_split) s = max_split;
  if (s > k_tiles / 8) s = k_tiles / 8;
  return s < 1 ? 1 : int(s);
}

}  // namespace baton
