// baton/ops/mlp.hpp — the plan of a transformer MLP op (host only, no CUDA): which sync policy,
// split-K and tile widths the op uses for a shape, and why. The op itself is baton/ops/mlp.cuh.
//
//   GeLU   (GPT-3):  Y = GeLU(X W1^T),              W1 [F, H]
//   SwiGLU (LLaMA):  Y = SiLU(X Wg^T) * (X Wu^T),   W1 [2F, H], gate/up rows interleaved
//   then             Z = Y W2^T,                    W2 [H, F]
//
//   auto plan = baton::ops::plan_mlp({.m = 16, .hidden = 8192, .ffn = 2752, .act = baton::ops::activation::swiglu}, 132);
//   if (plan.ok()) std::puts(plan.value().log_line().c_str());
//   // baton::ops::mlp m=16 h=8192 f=2752 swiglu: policy none, split-K 2/1, tiles 128x96/128x96, ...
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "baton/ops/mlp_cost.hpp"
#include "baton/split_k.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::ops {

enum class activation { gelu, swiglu };

// How GEMM2 waits for GEMM1's output Y:
//   row     one semaphore per row of Y tiles; a GEMM2 tile waits once, before its first load
//   kblock  per 64-wide k-block of Y, just before that k-block's TMA load (weights load first)
//   none    no semaphores: the kernel boundary orders the GEMMs (GEMM2 PDL-launched with
//           griddepcontrol.wait when GEMM1 runs in one wave, else two plain launches)
//   automatic  plan_mlp chooses (see mlp_auto_policy)
enum class mlp_policy { automatic, row, kblock, none };

inline const char* to_string(activation a) { return a == activation::gelu ? "gelu" : "swiglu"; }
inline const char* to_string(mlp_policy p) {
  switch (p) {
    case mlp_policy::row: return "row";
    case mlp_policy::kblock: return "kblock";
    case mlp_policy::none: return "none";
    default: return "auto";
  }
}

struct MlpShape {
  int m = 0;       // tokens (rows of X)
  int hidden = 0;  // H
  int ffn = 0;     // F
  activation act = activation::gelu;
};

struct MlpOptions {
  mlp_policy policy = mlp_policy::automatic;
  // Split-K parts of GEMM1 / GEMM2; 0: with policy none the cost model's (mlp_cost.hpp), with waits
  // choose_split_k.
  int split1 = 0, split2 = 0;
  int group_m = 0;             // tile order: baton::Grouped{group_m} for both GEMMs; 0: mlp_group_m
  // Tile width (computed columns) of GEMM1 / GEMM2: 96, 128, 192 or 256 (all but 128: policy none
  // only); 0: with policy none the width (and split-K) with the least modeled time (mlp_cost.hpp),
  // with waits 128.
  int tile_n1 = 0, tile_n2 = 0;
  // Megabytes of W2 that GEMM1 prefetches into L2 as it ends (sm90::NextWeights: the first
  // k-blocks of every GEMM2 tile-part), meant to keep the weight stream going across the kernel
  // boundary at decode. 0: off, the default: on the H200 it measured slower at every decode shape
  // with 8, 24 and 48 MB (docs/mlp.md, "The op").
  int l2_prefetch_mb = 0;
  // GEMM2 with its operands swapped (sm90 GEMM of W2 [H, F] times Y^T, D column-major = Z row-major)
  // in tiles of 128 hidden units x mlp_swap_tile(m) tokens: 32 at decode, 192 above (one token tile
  // then covers a batch of up to 192 tokens, where the plain GEMM's 128-row tiles make two bands that
  // stream the weights twice and leave the second band's CTAs half idle). -1: automatic (the default):
  // with policy none and the width left open, the cost model (mlp_cost.hpp) weighs the 192-token
  // form against the plain widths at 32 < m <= 192; the 32-token form measured slower than the plain
  // GEMM at every decode M on the H200 (docs/mlp.md, "The op"), so it runs only when asked for or
  // picked by MlpRunOptions::tune. 0: off; 1: on (policy none; GEMM2 then keeps 128-row tiles).
  int swap_gemm2 = -1;
  // The same for GEMM1 (X W1^T as W1 X^T, Y written as Y^T column-major; with SwiGLU the packed
  // gate/up rows of W1 pair up as adjacent accumulator rows). The 32-token form exists for GeLU
  // only; a swapped SwiGLU GEMM1 always has 192-token tiles.
  int swap_gemm1 = -1;
  // Policy none: GEMM2 PDL-launched, its weights streaming into its pipeline before
  // griddepcontrol.wait (then its loads of Y), so its launch, prologue and first weight loads overlap
  // GEMM1's last tiles; otherwise launched after GEMM1. -1: automatic (PDL when GEMM1's CTAs fit in
  // one wave), 0: never, 1: always (GEMM2's CTAs only start once every GEMM1 CTA has, i.e. in GEMM1's
  // last wave, on the SMs it frees). MlpRunOptions::tune also times the other choice.
  int pdl = -1;
  // The GEMMs with 128 x 96 tiles as CTA pairs (sm90::GemmConfig<..., ClusterN = 2>): the two CTAs
  // of a 1 x 2 cluster compute adjacent tiles of one row and TMA-multicast A to each other, so A
  // (the activations, re-read by every weight tile) crosses L2 once per pair. Their grid's columns
  // are padded to an even count. 0: off (the default); 1: on (policy none; no effect on GEMMs of
  // other widths). MlpRunOptions::tune tries it at m >= 128.
  int cta_pairs = 0;
};


// The tile order of both GEMMs, Grouped{group_m}: bands of group_m rows of tiles walked column by
// column, so the group_m tiles that read the same weight columns run together and share them in
// L2 (1: row-major). Weight traffic dominates an MLP, so a band covers every row of tiles up to 8.
inline int mlp_group_m(const Grid& gemm1) { return gemm1.m < 8 ? (gemm1.m > 0 ? gemm1.m : 1) : 8; }

// The tile shapes of the op's GEMMs (baton/ops/mlp.cuh static_asserts that its kernels match):
// 128 x 128 x 64, and 128 x 96 x 64 / 128 x 192 x 64 / 128 x 256 x 64 ("narrow" / "mid" / "wide")
// for GEMMs without edges.
inline constexpr int kMlpTileM = 128, kMlpTileN = 128, kMlpTileK = 64, kMlpNarrowTileN = 96, kMlpMidTileN = 192,
                     kMlpWideTileN = 256;
// Every width the op has kernels for (plan_mlp's cost model chooses among them;
// MlpRunOptions::tune times all of them).
inline constexpr int kMlpTileWidths[] = {kMlpTileN, kMlpNarrowTileN, kMlpMidTileN, kMlpWideTileN};
inline constexpr bool mlp_tile_width_ok(int w) {
  return w == kMlpTileN || w == kMlpNarrowTileN || w == kMlpMidTileN || w == kMlpWideTileN;
}

// Token columns per tile of the swapped GEMMs (MlpOptions::swap_gemm1 / swap_gemm2): 32 at decode,
// 160 and 192 for batches that one wide token tile covers (the GMMA computes every token column of
// the tile, so the narrowest tile that covers m wastes the least).
inline constexpr int kMlpSwapTileN = 32, kMlpSwapMidTileN = 160, kMlpSwapWideTileN = 192;
inline constexpr int kMlpSwapWideTiles[] = {kMlpSwapMidTileN, kMlpSwapWideTileN};
// The token tile of a swapped GEMM over m tokens: 32 when they fit and the GEMM has a 32-token
// kernel (has_narrow: GEMM2, and GEMM1 with GeLU), else the narrowest wide tile that covers m (192
// past it: several token tiles).
inline constexpr int mlp_swap_tile(int m, bool has_narrow) {
  return m <= kMlpSwapTileN && has_narrow ? kMlpSwapTileN : m <= kMlpSwapMidTileN ? kMlpSwapMidTileN : kMlpSwapWideTileN;
}

static_assert(kMlpCostTileM == kMlpTileM && kMlpCostTileK == kMlpTileK,
              "baton::ops::mlp: the cost model's tile constants must match the op's");

// k-blocks per GEMM2 tile-part that `mb` megabytes of prefetch cover (0 for mb <= 0; at least 1
// and at most the longest part otherwise): one k-block of every tile-part is n2 x split2 x tile_k
// bf16 values.
inline int mlp_l2_prefetch_kblocks(int mb, int n2, int k2, int split2) {
  if (mb <= 0 || n2 < 1 || k2 < 1 || split2 < 1) return 0;
  const int64_t per_kblock = int64_t(n2) * split2 * kMlpTileK * 2;
  const int longest = ceil_div(ceil_div(k2, kMlpTileK), split2);
  const int64_t kb = int64_t(mb) * 1000000 / per_kblock;
  return int(std::clamp<int64_t>(kb, 1, longest));
}

struct MlpPlan {
  MlpShape shape{};
  mlp_policy policy = mlp_policy::row;
  int split1 = 1, split2 = 1;
  int group_m = 1;
  int tile_n1 = kMlpTileN, tile_n2 = kMlpTileN;  // computed columns per tile of GEMM1 / GEMM2
  int l2_prefetch_mb = 0;       // MB of W2 prefetched into L2 by GEMM1 (0: none)
  int l2_prefetch_kblocks = 0;  // the same as k-blocks per GEMM2 tile-part
  bool swap_gemm2 = false;      // GEMM2 as W2 x Y^T (gemm2 then counts hidden tiles x token tiles)
  bool swap_gemm1 = false;      // GEMM1 as W1 x X^T (gemm1 then counts F (or 2F) tiles x token tiles)
  int swap_tile2 = 0, swap_tile1 = 0;  // tokens per tile of a swapped GEMM (mlp_swap_tile), else 0
  bool pdl = true;              // GEMM2 PDL-launched (row / kblock chains always are)
  bool pairs1 = false, pairs2 = false;  // GEMM1 / GEMM2 as CTA pairs (MlpOptions::cta_pairs)
  double expected_us = 0;       // the cost model's time for the chain (mlp_cost.hpp); 0: not modeled
  Grid gemm1{}, gemm2{};  // output tiles (GEMM1 over its n = F or 2F computed columns)
  std::string reason;
  std::string log_line() const {
    return "baton::ops::mlp m=" + std::to_string(shape.m) + " h=" + std::to_string(shape.hidden) +
           " f=" + std::to_string(shape.ffn) + " " + to_string(shape.act) + ": policy " + to_string(policy) +
           ", split-K " + std::to_string(split1) + "/" + std::to_string(split2) + ", tiles " +
           (swap_gemm1 ? "swapped 128x" + std::to_string(swap_tile1) + " (W1 x X^T)"
                       : "128x" + std::to_string(tile_n1) + (pairs1 ? " pairs" : "")) +
           "/" +
           (swap_gemm2 ? "swapped 128x" + std::to_string(swap_tile2) + " (W2 x Y^T)"
                       : "128x" + std::to_string(tile_n2) + (pairs2 ? " pairs" : "")) +
           ", tile order Grouped{" +
           std::to_string(group_m) + "}, GEMM2 " + (pdl ? "PDL-launched" : "after GEMM1") + ", L2 prefetch of W2 " +
           (l2_prefetch_kblocks > 0 ? std::to_string(l2_prefetch_kblocks) + " k-blocks per tile-part" : std::string("off")) +
           (expected_us > 0 ? ", expected " + std::to_string(int(expected_us + 0.5)) + " us (cost model)" : std::string()) +
           ", because " + reason;
  }
};

// The automatic policy, from the H200 measurements (bench/results/h200/mlp-*.csv, the split-K and
// tile-order sweeps and the wait path's cost: docs/mlp.md, docs/waits.md):
// with these GEMMs, per-row waits measured 0-10% slower than two plain launches in a CUDA graph at
// almost every M of both presets (the exception, LLaMA m = 512 with 2-row tile bands, is left to
// MlpRunOptions::tune), and per-k-block waits 1.2-1.8x slower (an acquire per producer
// tile on GEMM2's TMA issue path). Each GEMM alone saturates HBM (decode) or the tensor cores
// (prefill) and a kernel boundary inside a graph costs a few microseconds, so overlap has nothing
// to win: the op runs without it (none) and says so. row / kblock stay available on request.
inline mlp_policy mlp_auto_policy(const MlpShape& s, const Grid& gemm1, int sms, std::string& why, int split1 = 1) {
  (void)s;
  const int64_t ctas = gemm1.size() * int64_t(split1 > 0 ? split1 : 1);
  why = std::to_string(gemm1.size()) + " GEMM1 tiles" +
        (split1 > 1 ? " x " + std::to_string(split1) + " split-K parts" : std::string()) + " (" +
        std::to_string(double(ctas) / double(sms > 0 ? sms : 1)).substr(0, 4) +
        " waves): on the H200 per-row and per-k-block waits measured slower than two plain launches in a graph "
        "at every M (each GEMM saturates HBM or the tensor cores; docs/mlp.md), so no overlap";
  return mlp_policy::none;
}

// Which tuning candidate the op keeps (MlpRunOptions::tune): rounds[i] holds candidate i's times
// (one per interleaved round), candidate 0 is the planned chain. Each candidate's score is its
// median round (written to `medians`); the planned chain stays unless another candidate's median is
// more than `margin` below it, and then the fastest such candidate wins (ties: the earlier one).
// Run 18 measured candidates within ~1% of each other swapping places between rounds and runs, and a
// noise-picked row-major order at GPT-3 m = 1024 ran 6% slower in the timed graph. Candidates with
// no rounds score +infinity; with no candidates the answer is 0.
// MlpOptions as text and back, for the tuning cache (baton/ops/tuner.hpp): every field,
// "policy=row;split1=0;split2=0;group_m=2;tile_n1=128;tile_n2=128;l2_prefetch_mb=0;swap_gemm2=0;
// swap_gemm1=0;pdl=-1;cta_pairs=0". Parsing refuses unknown, missing or malformed fields, naming them.
inline std::string mlp_options_to_string(const MlpOptions& o) {
  return std::string("policy=") + to_string(o.policy) + ";split1=" + std::to_string(o.split1) +
         ";split2=" + std::to_string(o.split2) + ";group_m=" + std::to_string(o.group_m) +
         ";tile_n1=" + std::to_string(o.tile_n1) + ";tile_n2=" + std::to_string(o.tile_n2) +
         ";l2_prefetch_mb=" + std::to_string(o.l2_prefetch_mb) + ";swap_gemm2=" + std::to_string(o.swap_gemm2) +
         ";swap_gemm1=" + std::to_string(o.swap_gemm1) + ";pdl=" + std::to_string(o.pdl) +
         ";cta_pairs=" + std::to_string(o.cta_pairs);
}
inline result<MlpOptions> mlp_options_from_string(const std::string& text) {
  MlpOptions o;
  int* const ints[] = {&o.split1, &o.split2, &o.group_m, &o.tile_n1, &o.tile_n2, &o.l2_prefetch_mb,
                       &o.swap_gemm2, &o.swap_gemm1, &o.pdl, &o.cta_pairs};
  const char* const names[] = {"split1", "split2", "group_m", "tile_n1", "tile_n2", "l2_prefetch_mb",
                               "swap_gemm2", "swap_gemm1", "pdl", "cta_pairs"};
  constexpr int kInts = 10;
  unsigned seen = 0;  // bit i: ints[i]; bit kInts: policy
  auto bad = [&](const std::string& why) { return status(errc::invalid_argument, "mlp options '" + text + "': " + why); };
  size_t p = 0;
  while (p < text.size()) {
    size_t q = text.find(';', p);
    if (q == std::string::npos) q = text.size();
    const std::string item = text.substr(p, q - p);
    p = q + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return bad("'" + item + "' is not name=value");
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    if (k == "policy") {
      if (v == "auto" || v == "automatic") o.policy = mlp_policy::automatic;
      else if (v == "row") o.policy = mlp_policy::row;
      else if (v == "kblock") o.policy = mlp_policy::kblock;
      else if (v == "none") o.policy = mlp_policy::none;
      else return bad("unknown policy '" + v + "'");
      seen |= 1u << kInts;
      continue;
    }
    int i = 0;
    while (i < kInts && k != names[i]) ++i;
    if (i == kInts) return bad("unknown field '" + k + "'");
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x < -1 || x > (1L << 20)) return bad(k + " = '" + v + "' is not an integer in [-1, 2^20]");
    *ints[i] = int(x);
    seen |= 1u << i;
  }
  if (!(seen & (1u << kInts))) return bad("no policy");
  for (int i = 0; i < kInts; ++i)
    if (!(seen & (1u << i))) return bad(std::string("no ") + names[i]);
  return o;
}

// The tuning cache's key of an Mlp: the shape, the options the caller asked for (what tuning starts
// from) and the device (tune_device_key in tuner.hpp).
inline std::string mlp_tune_key(const MlpShape& s, const MlpOptions& asked, const std::string& device) {
  return "mlp;m=" + std::to_string(s.m) + ";h=" + std::to_string(s.hidden) + ";f=" + std::to_string(s.ffn) +
         ";act=" + to_string(s.act) + ";asked=" + mlp_options_to_string(asked) + ";device=" + device;
}

inline size_t mlp_tuning_choice(std::vector<std::vector<double>> rounds, std::vector<double>& medians,
                                double margin = 0.02) {
  medians.assign(rounds.size(), std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i].empty()) continue;
    std::sort(rounds[i].begin(), rounds[i].end());
    medians[i] = rounds[i][rounds[i].size() / 2];
  }
  size_t best = 0;
  for (size_t i = 1; i < rounds.size(); ++i)
    if (medians[i] < (1.0 - margin) * medians[0] && medians[i] < medians[best]) best = i;
  return best;
}

// Validates the shape and decides policy, split-K and tile widths. Errors name the offending extent.
[[nodiscard]] inline result<MlpPlan> plan_mlp(const MlpShape& s, int sms, const MlpOptions& opt = {}) {
  const std::string dims = "m=" + std::to_string(s.m) + " hidden=" + std::to_string(s.hidden) +
                           " ffn=" + std::to_string(s.ffn);
  if (s.m < 1 || s.hidden < 1 || s.ffn < 1)
    return status(errc::invalid_argument, "baton::ops::mlp " + dims + ": every extent must be >= 1");
  if (s.hidden % 8 != 0 || s.ffn % 8 != 0)
    return status(errc::not_supported, "baton::ops::mlp " + dims +
                                           ": hidden and ffn must be multiples of 8 (the GEMMs' TMA needs 16-byte "
                                           "rows); pad the weights with zero rows/columns");
  if (sms < 1) return status(errc::invalid_argument, "baton::ops::mlp: sms must be >= 1, got " + std::to_string(sms));
  if (opt.l2_prefetch_mb < 0 || opt.l2_prefetch_mb > 4096)
    return status(errc::invalid_argument, "baton::ops::mlp: l2_prefetch_mb must be 0 (off) to 4096, got " +
                                              std::to_string(opt.l2_prefetch_mb));
  if (opt.swap_gemm1 < -1 || opt.swap_gemm1 > 1)
    return status(errc::invalid_argument, "baton::ops::mlp: swap_gemm1 must be -1 (automatic), 0 (off) or 1 (on), got " +
                                              std::to_string(opt.swap_gemm1));
  if (opt.swap_gemm2 < -1 || opt.swap_gemm2 > 1)
    return status(errc::invalid_argument, "baton::ops::mlp: swap_gemm2 must be -1 (automatic), 0 (off) or 1 (on), got " +
                                              std::to_string(opt.swap_gemm2));
  if (opt.cta_pairs < 0 || opt.cta_pairs > 1)
    return status(errc::invalid_argument, "baton::ops::mlp: cta_pairs must be 0 (off) or 1 (on), got " +
                                              std::to_string(opt.cta_pairs));
  if (opt.pdl < -1 || opt.pdl > 1)
    return status(errc::invalid_argument, "baton::ops::mlp: pdl must be -1 (automatic), 0 (off) or 1 (on), got " +
                                              std::to_string(opt.pdl));
  if (opt.split1 < 0 || opt.split2 < 0 || opt.group_m < 0)
    return status(errc::invalid_argument, "baton::ops::mlp: split-K parts and group_m must be >= 0 (0: automatic)");
  for (int t : {opt.tile_n1, opt.tile_n2})
    if (t != 0 && !mlp_tile_width_ok(t))
      return status(errc::invalid_argument,
                    "baton::ops::mlp: tile widths must be 0 (automatic), 96, 128, 192 or 256, got " + std::to_string(t));
  MlpPlan p;
  p.shape = s;
  const int n1 = s.act == activation::swiglu ? 2 * s.ffn : s.ffn;
  const int rows = ceil_div(s.m, kMlpTileM);
  const int k1 = ceil_div(s.hidden, kMlpTileK), k2 = ceil_div(s.ffn, kMlpTileK);
  if (opt.split1 > k1 || opt.split2 > k2)
    return status(errc::invalid_argument, "baton::ops::mlp " + dims + ": split-K " + std::to_string(opt.split1) + "/" +
                                              std::to_string(opt.split2) + " exceeds the k-blocks " +
                                              std::to_string(k1) + "/" + std::to_string(k2));
  if (opt.policy == mlp_policy::automatic) {
    p.policy = mlp_auto_policy(s, Grid{rows, ceil_div(n1, kMlpTileN), 1}, sms, p.reason);
  } else {
    p.policy = opt.policy;
    p.reason = "the caller asked for it";
  }
  // Tiles other than 128 x 128 exist for GEMMs without edges only.
  const bool want_other = (opt.tile_n1 != 0 && opt.tile_n1 != kMlpTileN) || (opt.tile_n2 != 0 && opt.tile_n2 != kMlpTileN);
  if (want_other && p.policy != mlp_policy::none)
    return status(errc::not_supported, "baton::ops::mlp " + dims + ": 128x96, 128x192 and 128x256 tiles need policy " +
                                           "none (the op has no kernels of those widths that wait or post), got policy " +
                                           to_string(p.policy));
  const Grid narrow1{rows, ceil_div(n1, kMlpTileN), 1}, narrow2{rows, ceil_div(s.hidden, kMlpTileN), 1};
  const int auto_split1 = opt.split1 > 0 ? opt.split1 : choose_split_k(narrow1.size(), k1, sms);
  const int auto_split2 = opt.split2 > 0 ? opt.split2 : choose_split_k(narrow2.size(), k2, sms);
  const bool may_widen = p.policy == mlp_policy::none;
  // Policy none: each GEMM's tile width and split-K, where the caller left them open, are the ones
  // with the least modeled time (mlp_cost.hpp; GEMM1 also pays the serial gap when its CTAs make more
  // than one wave, so GEMM2 is not PDL-launched). A swapped GEMM keeps 128-row tiles of its own.
  const int group = opt.group_m > 0 ? opt.group_m : mlp_group_m(Grid{rows, 1, 1});
  struct Choice {
    int width = kMlpTileN, split = 1;
    int swap = 0;  // tokens per tile of the swapped form, 0: plain
    double us = -1;
  };
  const MlpCostModel model{};
  // weigh_swap: the swapped form with a wide token tile that covers m is a candidate too.
  auto choose = [&](int n, int k_tiles, int want_width, int want_split, bool first, bool weigh_swap) {
    Choice best;
    auto consider = [&](int w, int swap) {
      const int64_t tiles = swap > 0 ? int64_t(ceil_div(n, kMlpTileM)) * ceil_div(s.m, swap)
                                     : int64_t(rows) * ceil_div(n, w);
      for (int sp = 1; sp <= 8; ++sp) {
        // Split-K only over fewer tiles than SMs, in parts of >= 8 k-blocks (mlp_cost.hpp); a swapped
        // GEMM in at most 3 parts, the splits its fit and tuning measured (8 parts of GPT-3's
        // 160-token GEMM1 at m = 129 modeled faster than 2 and ran 1.2x slower).
        if (want_split > 0 ? sp != want_split
                           : (sp > 1 && (sp > k_tiles / 8 || tiles >= int64_t(sms) || (swap > 0 && sp > 3))))
          continue;
        double us = mlp_gemm_cost_us(model, MlpGemmShape{s.m, n, first ? s.hidden : s.ffn, w, sp, group, swap}, sms);
        if (first) {
          const int64_t ctas = tiles * sp;
          const bool pdl = opt.pdl == 1 || (opt.pdl == -1 && ctas <= int64_t(sms));
          if (!pdl) us += model.serial_gap_us;
        }
        if (best.us < 0 || us < best.us) best = Choice{w, sp, swap, us};
      }
    };
    for (int w : kMlpTileWidths)
      if (want_width <= 0 || w == want_width) consider(w, 0);
    if (weigh_swap)
      for (int t : kMlpSwapWideTiles)
        if (s.m <= t) consider(kMlpTileN, t);
    return best;
  };
  const bool model1 = may_widen && opt.swap_gemm1 != 1, model2 = may_widen && opt.swap_gemm2 != 1;
  // The automatic swap: a wide token tile (160 or 192) where one covers the batch (32 < m <= 192),
  // unless the caller fixed the width or said no.
  const bool wide_swap_range = s.m > kMlpSwapTileN && s.m <= kMlpSwapWideTileN;
  const bool weigh_swap1 = model1 && opt.swap_gemm1 == -1 && opt.tile_n1 == 0 && wide_swap_range;
  const bool weigh_swap2 = model2 && opt.swap_gemm2 == -1 && opt.tile_n2 == 0 && wide_swap_range;
  const Choice c1 = model1 ? choose(n1, k1, opt.tile_n1, opt.split1, true, weigh_swap1) : Choice{};
  const Choice c2 = model2 ? choose(s.hidden, k2, opt.tile_n2, opt.split2, false, weigh_swap2) : Choice{};
  p.tile_n1 = model1 ? c1.width : opt.tile_n1 > 0 ? opt.tile_n1 : kMlpTileN;
  p.tile_n2 = model2 ? c2.width : opt.tile_n2 > 0 ? opt.tile_n2 : kMlpTileN;
  if (opt.cta_pairs == 1 && p.policy != mlp_policy::none)
    return status(errc::not_supported, "baton::ops::mlp " + dims + ": CTA pairs need policy none (a waiting GEMM2 "
                                           "cannot multicast A before both CTAs' waits), got policy " + to_string(p.policy));
  // CTA pairs for the 128x96 GEMMs: their grids padded to an even number of tile columns.
  p.pairs1 = opt.cta_pairs == 1 && p.tile_n1 == kMlpNarrowTileN && opt.swap_gemm1 != 1;
  p.pairs2 = opt.cta_pairs == 1 && p.tile_n2 == kMlpNarrowTileN && opt.swap_gemm2 != 1;
  auto cols = [](int n, int w, bool pairs) { return pairs ? ceil_div(ceil_div(n, w), 2) * 2 : ceil_div(n, w); };
  p.gemm1 = Grid{rows, cols(n1, p.tile_n1, p.pairs1), 1};
  p.gemm2 = Grid{rows, cols(s.hidden, p.tile_n2, p.pairs2), 1};
  // Split-K: the model's (with the width), else the caller's or choose_split_k over the GEMM's tiles.
  p.split1 = model1 ? c1.split : p.tile_n1 == kMlpTileN ? auto_split1 : opt.split1 > 0 ? opt.split1 : choose_split_k(p.gemm1.size(), k1, sms);
  p.split2 = model2 ? c2.split : p.tile_n2 == kMlpTileN ? auto_split2 : opt.split2 > 0 ? opt.split2 : choose_split_k(p.gemm2.size(), k2, sms);
  p.group_m = opt.group_m > 0 ? opt.group_m : mlp_group_m(p.gemm1);
  // A swapped GEMM: weight tiles x token tiles, its own split-K (the model's when it chose the
  // swap, else the caller's or choose_split_k).
  if (opt.swap_gemm2 == 1 && (p.policy != mlp_policy::none || p.tile_n2 != kMlpTileN))
    return status(errc::not_supported, "baton::ops::mlp " + dims + ": the swapped GEMM2 needs policy none and 128-wide "
                                           "GEMM2 tiles (it neither waits nor posts), got policy " + to_string(p.policy) +
                                           " and 128x" + std::to_string(p.tile_n2));
  p.swap_gemm2 = opt.swap_gemm2 == 1 || (model2 && c2.swap > 0);
  if (p.swap_gemm2) {
    p.swap_tile2 = model2 ? c2.swap : mlp_swap_tile(s.m, true);
    p.gemm2 = Grid{ceil_div(s.hidden, kMlpTileM), ceil_div(s.m, p.swap_tile2), 1};
    p.split2 = model2 ? c2.split : opt.split2 > 0 ? opt.split2 : choose_split_k(p.gemm2.size(), k2, sms);
  }
  if (opt.swap_gemm1 == 1 && (p.policy != mlp_policy::none || p.tile_n1 != kMlpTileN))
    return status(errc::not_supported, "baton::ops::mlp " + dims + ": the swapped GEMM1 needs policy none and 128-wide "
                                           "GEMM1 tiles, got policy " + to_string(p.policy) + " and 128x" +
                                           std::to_string(p.tile_n1));
  p.swap_gemm1 = opt.swap_gemm1 == 1 || (model1 && c1.swap > 0);
  if (p.swap_gemm1) {
    p.swap_tile1 = model1 ? c1.swap : mlp_swap_tile(s.m, s.act == activation::gelu);
    p.gemm1 = Grid{ceil_div(n1, kMlpTileM), ceil_div(s.m, p.swap_tile1), 1};
    p.split1 = model1 ? c1.split : opt.split1 > 0 ? opt.split1 : choose_split_k(p.gemm1.size(), k1, sms);
  }
  // The automatic policy's reason, restated for the grid GEMM1 runs with.
  if (opt.policy == mlp_policy::automatic) (void)mlp_auto_policy(s, p.gemm1, sms, p.reason, p.split1);
  // GEMM2's launch: row / kblock chains are always PDL-launched (their GEMM2 waits on semaphores).
  p.pdl = p.policy != mlp_policy::none || opt.pdl == 1 ||
          (opt.pdl == -1 && p.gemm1.size() * int64_t(p.split1) <= int64_t(sms));
  p.l2_prefetch_mb = opt.l2_prefetch_mb;
  p.l2_prefetch_kblocks = mlp_l2_prefetch_kblocks(p.l2_prefetch_mb, s.hidden, s.ffn, p.split2);
  // The model's time for the chain it can describe (not CTA pairs, the L2 prefetch or 32-token tiles).
  if (p.policy == mlp_policy::none && p.swap_tile1 != kMlpSwapTileN && p.swap_tile2 != kMlpSwapTileN && !p.pairs1 &&
      !p.pairs2 && p.l2_prefetch_kblocks == 0)
    p.expected_us = mlp_chain_cost_us(model, MlpGemmShape{s.m, n1, s.hidden, p.tile_n1, p.split1, p.group_m, p.swap_tile1},
                                      MlpGemmShape{s.m, s.hidden, s.ffn, p.tile_n2, p.split2, p.group_m, p.swap_tile2},
                                      p.pdl, sms);
  return p;
}

}  // namespace baton::ops
