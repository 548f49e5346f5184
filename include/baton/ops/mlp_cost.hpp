// baton/ops/mlp_cost.hpp — what an MLP chain without waits is expected to cost on the GPU, so that
// plan_mlp can choose tile widths and split-K without timing anything (host only, no CUDA).
//
//   baton::ops::MlpCostModel model;                                  // the H200 fit (docs/mlp.md)
//   double us = baton::ops::mlp_gemm_cost_us(model, {.m = 129, .n = 14336, .k = 8192, .tile_n = 256,
//                                                    .split = 1, .group_m = 2}, 132);
//
// The model follows how the op's GEMMs run: one CTA per (tile, split-K part), dispatched in the
// stage's tile order (Grouped{group_m}) onto the SMs as they free up, each CTA walking its k-blocks.
// - A CTA costs cta_us + kblocks * (max(mma, stream) + kblock_fixed_us), where mma is the tensor-core
//   time of one k-block of its tile (128 rows x tile_n columns x 64; half of it when the tile's rows
//   past m leave one MMA warp group idle, rows <= 64), shorter under a light MMA load (mma_power_gain),
//   and stream is the weight bytes of one k-block at one SM's share of the memory system (sm_bytes_per_us).
// - The GEMM's time is the makespan of that list schedule on `sms` SMs (a wave quantizes, a ragged
//   last band of few rows finishes early), plus split_reduce_us + split_part_us x parts per 128
//   columns when split-K parts are summed (the last part reads each part's partial tile), joined by a
//   smooth max (hbm_floor_blend) with the HBM time of what it must read once (weights once per group
//   of row bands, activations, output) at hbm_bytes_per_us.
// - Split-K is for GEMMs with fewer tiles than SMs (plan_mlp only weighs it there): the fit saw it
//   only in that range and across several waves of tiles it only adds partial-tile traffic, which the
//   once-per-GEMM reduction term does not charge.
// - A swapped GEMM (MlpGemmShape::swap_tokens = T: weights x tokens^T in tiles of 128 weight rows x
//   T tokens, what the op runs for a batch that one T-token tile covers) is the same list schedule
//   over (weight tile, token tile, part) CTAs. Its k-block's MMA covers all T token columns (the
//   GMMA's N is fixed, so tokens past m are computed and dropped), it streams 128 weight rows per
//   k-block, and it reads the weights from HBM once. Its tile has the shape and shared-memory stages
//   of a plain 128 x T tile, so the plain fit's constants carry over; the op's tuning times it
//   against the plain chains wherever the model would pick it.
// - A persistent GEMM (MlpGemmShape::persistent: at most one CTA per SM, each looping over the tiles
//   blockIdx.x, blockIdx.x + CTAs, ... of the order; one part per tile) assigns the tiles round-robin
//   instead of to the SM that frees up first, and pays cta_us once per CTA plus persistent_tile_us
//   for each further tile (its pipeline fill runs under the previous tile's epilogue).
// - A stream-K GEMM (MlpGemmShape::stream_k, with persistent) shares the k-blocks of all weight
//   blocks evenly among groups of CTAs, one CTA per token tile in each (baton/stream_k.hpp): each
//   runs its lane's k-block work over the groups, cta_us once, persistent_tile_us per further block
//   it touches, and stream_k_fixup_us per 128 columns for the partial tiles it writes and the parts
//   it sums (docs/mlp.md, "Stream-K"); the weights are read once.
// - A chain is GEMM1 + GEMM2 + launch_us, plus serial_gap_us when GEMM2 is launched after GEMM1
//   instead of PDL-launched.
// The constants are a least-squares fit (log error) to the chains the op's tuning timed on the H200
// over four models and 35 batch sizes, plain and swapped (bench/results/h200/mlp-cost-fit.csv.gz;
// scripts/fit_mlp_cost.py; docs/mlp.md, "The cost model" and the sections after it have the data
// and the scores of each term).
// Other GPUs get the same model with their SM count and, through mlp_cost_model_for_hbm, their memory
// bandwidth; MlpRunOptions::tune measures instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "baton/stream_k.hpp"

namespace baton::ops {

struct MlpCostModel {
  double kblock_mma_us = 0.39777;      // one 128 x 128 x 64 k-block on the tensor cores (both warp groups), at full load
  double kblock_fixed_us = 0.0269;     // per k-block, whatever its width
  double cta_us = 3.9486;              // per CTA: start, pipeline fill, epilogue
  double sm_bytes_per_us = 57136.0;    // weight bytes one SM streams per microsecond
  double hbm_bytes_per_us = 3.6942e6;  // the whole GPU's
  double split_reduce_us = 5.5751;     // summing a split GEMM's parts, per 128 columns of a tile
  double launch_us = 1.81;             // per chain
  double serial_gap_us = 3.7821;       // GEMM2 launched after GEMM1 (not PDL)
  // ... plus this per split-K part, per 128 columns: the last part to arrive reads every part's fp32
  // partial tile back (128 x 128 x 4 bytes at one SM's share of the memory system is ~1 us).
  double split_part_us = 0.63995;
  // A swapped GEMM1 in split-K parts pays this per part, per 128 tokens, on top: the last part sums
  // the parts and applies the activation to the transposed tile. Without it the timed chains with a
  // swapped GEMM1 in parts ran slower than modeled, more so the more parts, while a swapped GEMM2 so
  // split did not. Fitted with the other constants (docs/mlp.md, "A swapped GEMM1 in parts").
  double swapped_act_split_part_us = 0.94124;
  // How much faster the tensor cores run a k-block when the GEMM keeps fewer of them busy: the k-block's
  // MMA time is scaled by 1 - mma_power_gain x (1 - load), load being the mean tensor-core duty of the
  // GEMM's CTAs (1 where the MMA bounds a k-block, MMA over streaming time where streaming does: a
  // tile whose rows fill one warp group of two) times the share of the SMs they fill. The GPU runs at
  // its power limit under a full MMA load and clocks up under a lighter one; without the term the
  // model over-priced the GEMMs whose last row band holds <= 64 rows, in one wave. Fitted with the
  // other constants (docs/mlp.md, "The MMA's clock under a light load", has the clocks and the fit).
  double mma_power_gain = 0.36789;
  // A persistent CTA's cost per tile after its first: what of the start, fill and epilogue (cta_us) the
  // loop does not hide. Fitted alone, the other constants held, so that the persistent chains the op's
  // tuning timed have no mean error against the other chains of their shape (docs/mlp.md, "Persistent
  // CTAs", has the fit and its data).
  double persistent_tile_us = 1.5;
  // A stream-K CTA's partial-tile traffic per 128 columns: its own partial written, the parts of
  // the tile it finishes read back (about three of split_part_us). Not fitted (docs/mlp.md,
  // "Stream-K" and "Stream-K in lanes").
  double stream_k_fixup_us = 2.1;
  // Whether plan_mlp weighs stream-K on its own (GemmFormRequest::stream_k left empty) beside one CTA
  // per tile and persistent CTAs. False: stream_k_fixup_us is not fitted, and the stream-K chains in
  // lanes, faster than persistent ones in tuning's rounds, ran up to 12% slower timed again in a graph
  // (docs/mlp.md, "Stream-K in lanes"), so the model must not choose the default plan's kernels.
  bool plan_weighs_stream_k = false;
  // How a GEMM's SM-side time t (its CTAs' schedule) and its HBM floor h join: (t^p + h^p)^(1/p), a
  // smooth max, so that near the floor the form whose CTAs leave more slack models faster, as the GPU
  // runs it (at decode a width with more CTAs pulls more of the bandwidth, where max(t, h) called the
  // widths level). Chosen with the other constants held, where the rms log error of the fit's chains
  // is low (docs/mlp.md, "The HBM floor, joined smoothly"). p <= 0: max(t, h).
  double hbm_floor_blend = 8;
  // kblock_fixed_us, sm_bytes_per_us, hbm_bytes_per_us and launch_us are held when refitting: a free
  // fit trades the first and last for cta_us (both to 0), and faster streaming or a slower HBM puts
  // decode chains on the HBM floor, where the model no longer tells widths and splits apart (GPT-3 at
  // M = 1 then ties 128x128 with the 128x96 tiles measured 3% faster).
};

// The peak HBM bandwidth of the GPU the constants were fitted on (the H200's datasheet: 4.8 TB/s),
// in bytes per microsecond.
inline constexpr double kMlpCostFitHbmPeakBytesPerUs = 4.8e6;

// The model for a GPU of the same SM (Hopper) whose peak HBM bandwidth is `hbm_peak_bytes_per_us`
// (memory clock x bus width x 2): the memory floor (hbm_bytes_per_us) scaled by its ratio to the
// H200's. The SM's terms stay, its streaming rate too: scaled, it would make prefill ~6% slower on
// an H100 than on an H200, which the zoo did not show. On the H100 (3.35 TB/s) this took the model's
// error on the zoo's 7,486 tuned chains from 18.6% to 9.4% rms (plain chains 13.6% too fast before,
// 2.4% after) and left its choices as they were (docs/mlp.md, "The cost model"). A ratio within 5%
// of 1 is taken for the fit's own GPU (the H200's datasheet says 4.8 TB/s; what its memory clock and
// bus width give was not read on an H200 here, ~4.9 if they are 3.2 GHz and 6,144 bits), and 0 or
// less is unknown: the fit as it is, then.
[[nodiscard]] inline MlpCostModel mlp_cost_model_for_hbm(double hbm_peak_bytes_per_us, MlpCostModel m = {}) {
  const double ratio = hbm_peak_bytes_per_us / kMlpCostFitHbmPeakBytesPerUs;
  if (!(hbm_peak_bytes_per_us > 0) || (ratio > 0.95 && ratio < 1.05)) return m;
  m.hbm_bytes_per_us *= ratio;
  return m;
}

// One GEMM as the op runs it without waits: D[m, n] = A[m, k] B[n, k]^T in 128 x tile_n tiles, or
// swapped (swap_tokens > 0): D^T = B A^T in tiles of 128 rows of B (n) x swap_tokens rows of A (m);
// tile_n is then unused.
struct MlpGemmShape {
  int m = 0, n = 0, k = 0;
  int tile_n = 128;
  int split = 1;
  int group_m = 1;
  int swap_tokens = 0;
  bool persistent = false;  // one CTA per SM looping over the tiles (split 1 only; see above)
  bool stream_k = false;    // with persistent: the CTAs share all tiles' k-blocks (see above)
  bool activation = false;  // the epilogue applies the MLP's activation (GEMM1; swapped_act_split_part_us)
};

inline constexpr int kMlpCostTileM = 128, kMlpCostTileK = 64;

namespace detail {
// A GEMM's time from its SM-side time and its HBM floor (MlpCostModel::hbm_floor_blend).
inline double with_hbm_floor(const MlpCostModel& c, double t, double hbm) {
  const double p = c.hbm_floor_blend;
  if (!(p > 0) || !(t > 0) || !(hbm > 0)) return t > hbm ? t : hbm;
  const double hi = t > hbm ? t : hbm, lo = t > hbm ? hbm : t;  // hi * (1 + (lo / hi)^p)^(1/p): no overflow
  return hi * std::pow(1.0 + std::pow(lo / hi, p), 1.0 / p);
}
// The factor on a k-block's MMA time for a GEMM of `ctas` CTAs whose mean tensor-core duty is `duty`
// (MlpCostModel::mma_power_gain).
inline double mma_power_scale(const MlpCostModel& c, double duty, int64_t ctas, int sms) {
  const double filled = ctas < sms ? double(ctas) / double(sms) : 1.0;
  return 1.0 - c.mma_power_gain * (1.0 - duty * filled);
}
// The tensor cores' share of a k-block whose MMA takes `mma_us` and whose weights stream in `stream_us`.
inline double mma_duty(double mma_us, double stream_us) { return mma_us < stream_us ? mma_us / stream_us : 1.0; }
// The makespan of `ctas` CTAs of `per_cta_us` each (equal CTAs: the list schedule is round-robin).
inline double equal_ctas_makespan_us(int64_t ctas, int sms, double per_cta_us) {
  return double((ctas + sms - 1) / sms) * per_cta_us;
}
// Stream-K (baton/stream_k.hpp): `tiles` tiles of `k_blocks` each in blocks of `lanes` (the token
// tiles that run a weight block side by side; stream_k_lanes), the blocks' k-blocks shared by
// groups of `lanes` CTAs, whole groups on at most `sms` CTAs. `lane_work_us` is a lane's k-block work
// over all blocks (the slowest lane's); `columns` the tile's computed columns (its partial tile's
// size).
inline double stream_k_makespan_us(const MlpCostModel& c, int64_t tiles, int64_t k_blocks, double lane_work_us,
                                   int sms, int columns, int lanes) {
  if (lanes < 1 || tiles % lanes != 0) return 0;
  const int64_t blocks = tiles / lanes;
  const int64_t ctas = ::baton::stream_k_ctas(tiles, int(k_blocks), sms, lanes);
  const int64_t groups = ctas / lanes;
  if (groups < 1) return 0;
  // Blocks a group touches: its share of blocks, one more where its range straddles a block boundary.
  const int64_t touched = (blocks + groups - 1) / groups + (blocks % groups != 0 ? 1 : 0);
  const bool shared = blocks % groups != 0;
  return c.cta_us + lane_work_us / double(groups) + double(touched - 1) * c.persistent_tile_us +
         (shared ? c.stream_k_fixup_us * double(columns) / 128.0 : 0.0);
}
}  // namespace detail

// A swapped GEMM (g.swap_tokens > 0; see above). Every CTA has the same 128 x T tile, so the list
// schedule reduces to waves of CTAs (a split's parts differ by at most one k-block: the longest is
// charged).
inline double mlp_swapped_gemm_cost_us(const MlpCostModel& c, const MlpGemmShape& g, int sms) {
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t token_tiles = cdiv(g.m, g.swap_tokens), weight_tiles = cdiv(g.n, kMlpCostTileM);
  const int64_t kb = cdiv(g.k, kMlpCostTileK);
  const double stream_us = double(kMlpCostTileM) * kMlpCostTileK * 2 / c.sm_bytes_per_us;
  const int64_t longest = cdiv(kb, g.split);
  const int64_t ctas = token_tiles * weight_tiles * g.split;
  const double mma_full = c.kblock_mma_us * double(g.swap_tokens) / 128.0;
  const int sk_lanes = ::baton::stream_k_lanes(token_tiles, sms);
  const double mma = mma_full * detail::mma_power_scale(
                                    c, detail::mma_duty(mma_full, stream_us),
                                    g.persistent && g.stream_k ? ::baton::stream_k_ctas(ctas, int(kb), sms, sk_lanes) : ctas,
                                    sms);
  const double per_kb = (mma > stream_us ? mma : stream_us) + c.kblock_fixed_us;
  // Persistent (one part per tile): the busiest CTA loops over ceil(tiles / SMs) tiles.
  const int64_t per_sm = cdiv(ctas, sms);
  double t = g.persistent && g.split == 1 && g.stream_k
                 ? detail::stream_k_makespan_us(c, ctas, kb, double((sk_lanes > 1 ? weight_tiles : ctas) * kb) * per_kb,
                                                sms, g.swap_tokens, sk_lanes)
             : g.persistent && g.split == 1
                 ? c.cta_us + double(per_sm - 1) * c.persistent_tile_us + double(per_sm * longest) * per_kb
                 : detail::equal_ctas_makespan_us(ctas, sms, c.cta_us + double(longest) * per_kb);
  if (g.split > 1)
    t += (c.split_reduce_us + (c.split_part_us + (g.activation ? c.swapped_act_split_part_us : 0.0)) * g.split) *
         double(g.swap_tokens) / 128.0;
  const double bytes = double(g.n) * g.k * 2 + double(g.m) * g.k * 2 + double(g.m) * g.n * 2;
  const double hbm = bytes / c.hbm_bytes_per_us;
  return detail::with_hbm_floor(c, t, hbm);
}

// The GEMM's expected time in microseconds (see above); 0 for an empty or invalid shape.
inline double mlp_gemm_cost_us(const MlpCostModel& c, const MlpGemmShape& g, int sms) {
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.tile_n < 1 || g.split < 1 || sms < 1 || g.swap_tokens < 0) return 0;
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if (g.swap_tokens > 0) return mlp_swapped_gemm_cost_us(c, g, sms);
  const int rows = int(cdiv(g.m, kMlpCostTileM)), cols = int(cdiv(g.n, g.tile_n));
  const int kb = int(cdiv(g.k, kMlpCostTileK));
  const int group = g.group_m < 1 ? 1 : (g.group_m > rows ? rows : g.group_m);
  const double stream_us = double(g.tile_n) * kMlpCostTileK * 2 / c.sm_bytes_per_us;
  auto mma_us = [&](int halves) { return c.kblock_mma_us * double(g.tile_n) / 128.0 * double(halves) / 2.0; };
  // A tile's MMA runs on one warp group of two where at most 64 of its 128 rows are below m.
  auto halves_of = [&](int r) { return g.m - r * kMlpCostTileM <= kMlpCostTileM / 2 ? 1 : 2; };
  double duty = 0;
  for (int r = 0; r < rows; ++r) duty += detail::mma_duty(mma_us(halves_of(r)), stream_us) / rows;
  // The CTAs: one per (tile, part); persistent, one per tile (at most one per SM); stream-K, whole
  // groups of one CTA per row band (stream_k_ctas; at most one per SM).
  const int sk_lanes = ::baton::stream_k_lanes(rows, sms);
  const int64_t ctas = g.persistent && g.stream_k && g.split == 1
                           ? int64_t(::baton::stream_k_ctas(int64_t(rows) * cols, kb, sms, sk_lanes))
                           : int64_t(rows) * cols * (g.persistent ? 1 : g.split);
  const double power = detail::mma_power_scale(c, duty, ctas, sms);
  auto kblock_us = [&](int halves) {
    const double mma = mma_us(halves) * power;
    return (mma > stream_us ? mma : stream_us) + c.kblock_fixed_us;
  };
  const double full_kb = kblock_us(2), half_kb = kblock_us(1);
  if (g.persistent && g.split == 1 && g.stream_k) {
    // With one lane per row band the groups run in step with the first (full) band, and every
    // weight block is read once; with one lane the CTAs' tiles mix full and half bands.
    double work = 0;
    if (sk_lanes > 1) {
      work = double(cols) * kb * full_kb;
    } else {
      for (int r = 0; r < rows; ++r) work += double(cols) * kb * (halves_of(r) == 1 ? half_kb : full_kb);
    }
    const double t = detail::stream_k_makespan_us(c, int64_t(rows) * cols, kb, work, sms, g.tile_n, sk_lanes);
    const double weight_reads = sk_lanes > 1 ? 1.0 : double(cdiv(rows, group));
    const double bytes = double(g.n) * g.k * 2 * weight_reads + double(g.m) * g.k * 2 + double(g.m) * g.n * 2;
    const double hbm = bytes / c.hbm_bytes_per_us;
    return detail::with_hbm_floor(c, t, hbm);
  }
  if (g.persistent && g.split == 1) {
    // Round-robin: the tile at position i of the order goes to CTA i mod ctas.
    const int64_t tiles = int64_t(rows) * cols;
    const int ctas = int(tiles < sms ? tiles : sms);
    std::vector<double> busy(size_t(ctas), c.cta_us - c.persistent_tile_us);
    int64_t pos = 0;
    double makespan = 0;
    for (int r0 = 0; r0 < rows; r0 += group)
      for (int col = 0; col < cols; ++col)
        for (int r = r0; r < rows && r < r0 + group; ++r, ++pos) {
          double& b = busy[size_t(pos % ctas)];
          b += c.persistent_tile_us + kb * (halves_of(r) == 1 ? half_kb : full_kb);
          if (b > makespan) makespan = b;
        }
    const double bytes = double(g.n) * g.k * 2 * double(cdiv(rows, group)) + double(g.m) * g.k * 2 + double(g.m) * g.n * 2;
    const double hbm = bytes / c.hbm_bytes_per_us;
    return detail::with_hbm_floor(c, makespan, hbm);
  }
  // The list schedule: a min-heap of the times at which each SM frees up.
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int i = 0; i < sms; ++i) free_at.push(0.0);
  double makespan = 0;
  for (int r0 = 0; r0 < rows; r0 += group)
    for (int col = 0; col < cols; ++col)
      for (int r = r0; r < rows && r < r0 + group; ++r) {
        const double per_kb = halves_of(r) == 1 ? half_kb : full_kb;
        for (int part = 0; part < g.split; ++part) {
          const int blocks = kb / g.split + (part < kb % g.split ? 1 : 0);
          const double t = free_at.top() + c.cta_us + blocks * per_kb;
          free_at.pop();
          free_at.push(t);
          if (t > makespan) makespan = t;
        }
      }
  if (g.split > 1) makespan += (c.split_reduce_us + c.split_part_us * g.split) * double(g.tile_n) / 128.0;
  const double weight_passes = double(cdiv(rows, group));
  const double bytes = double(g.n) * g.k * 2 * weight_passes + double(g.m) * g.k * 2 + double(g.m) * g.n * 2;
  const double hbm = bytes / c.hbm_bytes_per_us;
  return detail::with_hbm_floor(c, makespan, hbm);
}

// A chain of two such GEMMs: GEMM2 PDL-launched (pdl) or after GEMM1.
inline double mlp_chain_cost_us(const MlpCostModel& c, const MlpGemmShape& gemm1, const MlpGemmShape& gemm2, bool pdl,
                                int sms) {
  return mlp_gemm_cost_us(c, gemm1, sms) + mlp_gemm_cost_us(c, gemm2, sms) + c.launch_us + (pdl ? 0.0 : c.serial_gap_us);
}

}  // namespace baton::ops
