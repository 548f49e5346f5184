// baton/ops/mlp.hpp — the plan of a transformer MLP op (host only, no CUDA): which sync policy,
// split-K and tile widths the op uses for a shape, and why. The op itself is baton/ops/mlp.cuh.
//
//   GeLU   (GPT-3):  Y = GeLU(X W1^T),              W1 [F, H]
//   SwiGLU (LLaMA):  Y = SiLU(X Wg^T) * (X Wu^T),   W1 [2F, H], gate/up rows interleaved
//   then             Z = Y W2^T,                    W2 [H, F]
//
//   auto plan = baton::ops::plan_mlp({.m = 16, .hidden = 8192, .ffn = 2752, .act = baton::ops::Activation::swiglu}, 132);
//   if (plan.ok()) std::puts(plan.value().log_line().c_str());
//   // baton::ops::mlp m=16 h=8192 f=2752 swiglu: policy none, split-K 2/1, tiles 128x96/128x96, ...
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/ops/mlp_cost.hpp"
#include "baton/split_k.hpp"
#include "baton/ops/tuner.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::ops {

enum class Activation { gelu, swiglu };

// How GEMM2 waits for GEMM1's output Y:
//   row     one semaphore per row of Y tiles; a GEMM2 tile waits once, before its first load
//   kblock  per 64-wide k-block of Y, just before that k-block's TMA load (weights load first)
//   none    no semaphores: the kernel boundary orders the GEMMs (GEMM2 PDL-launched with
//           griddepcontrol.wait when GEMM1 runs in one wave, else two plain launches)
//   automatic  plan_mlp chooses (see mlp_auto_policy)
enum class MlpPolicy { automatic, row, kblock, none };

using activation [[deprecated("renamed Activation, docs/naming.md")]] = Activation;
using mlp_policy [[deprecated("renamed MlpPolicy, docs/naming.md")]] = MlpPolicy;

inline const char* to_string(Activation a) { return a == Activation::gelu ? "gelu" : "swiglu"; }
inline const char* to_string(MlpPolicy p) {
  switch (p) {
    case MlpPolicy::row: return "row";
    case MlpPolicy::kblock: return "kblock";
    case MlpPolicy::none: return "none";
    default: return "auto";
  }
}

struct MlpShape {
  int m = 0;       // tokens (rows of X)
  int hidden = 0;  // H
  int ffn = 0;     // F
  Activation act = Activation::gelu;
};

// How one GEMM of the op runs.
//   plain    activations x weights^T: tiles of 128 tokens x `tile` computed columns (96, 128, 160, 192,
//            224, 256)
//   swapped  weights x activations^T: tiles of 128 weight rows x `tile` tokens (32, 144-224), the
//            output written column-major, i.e. as the row-major [tokens, features] activation
enum class GemmOperands { plain, swapped };
inline const char* to_string(GemmOperands o) { return o == GemmOperands::plain ? "plain" : "swapped"; }

// How GEMM2 is launched behind GEMM1 (policy none; row / kblock chains are always PDL-launched):
//   pdl          PDL-launched: its weights stream into its pipeline before griddepcontrol.wait (then
//                its loads of Y), so its launch, prologue and first weight loads overlap GEMM1's end;
//                its CTAs start only once every GEMM1 CTA has, i.e. in GEMM1's last wave
//   after_gemm1  a plain launch after GEMM1
enum class Gemm2Launch { pdl, after_gemm1 };
inline const char* to_string(Gemm2Launch l) { return l == Gemm2Launch::pdl ? "pdl" : "after_gemm1"; }

// One GEMM's form in a plan.
struct GemmForm {
  GemmOperands operands = GemmOperands::plain;
  int tile = 128;          // plain: computed columns per 128-row tile; swapped: tokens per tile
  int split_k = 1;         // parts of each tile's k range (summed by the last part)
  bool cta_pairs = false;  // plain 96-wide tiles as 1 x 2 clusters multicasting A
  bool band_pairs = false; // plain 192-wide tiles as 2 x 1 clusters multicasting the weights
  bool persistent = false; // one CTA per SM, each looping over tiles (sm90::GemmArguments::persistent_ctas)
  bool stream_k = false;   // with persistent: the CTAs share every tile's k-blocks (sm90::GemmArguments::stream_k)
  friend bool operator==(const GemmForm&, const GemmForm&) = default;
};

// What the caller fixes of one GEMM's form; every field left empty is plan_mlp's choice.
//   operands   empty: plain, or, with policy none and `tile` empty, swapped where the cost model
//              (mlp_cost.hpp) says wide token tiles are faster (32 < m <= kMlpSwapMaxM: one
//              160- or 192-token tile covering the batch, two tiles, or past 448 tokens three or
//              more: mlp_swap_tile_weighed).
//              The 32-token decode form measured slower than the plain GEMM at every decode M on the
//              H200 (docs/mlp.md, "The op"): it runs only when asked for or picked by tuning.
//   tile       plain: 96, 128, 160, 192, 224 or 256 (all but 128: policy none only); swapped: 32 (GEMM2, and
//              GEMM1 with GeLU), 144, 160, 176, 192, 208 or 224. Empty: the model's (plain, policy none), 128 (waits)
//              or the swapped tile that pads the fewest token columns (mlp_swap_tile).
//   split_k    empty: the model's (policy none), else choose_split_k (one wave of CTAs).
//   cta_pairs  true: a plain 96-wide GEMM runs as CTA pairs (sm90::GemmConfig<..., ClusterN = 2>): the
//              two CTAs of a 1 x 2 cluster compute adjacent tiles of one row and TMA-multicast A, so A
//              (re-read by every weight tile) crosses L2 once per pair; the grid's columns are padded
//              to an even count. Policy none; no effect on other widths. Empty / false: off (measured
//              level with the unpaired GEMMs, docs/mlp.md); MlpRunOptions::tune_cta_pairs tries them.
//   band_pairs true: a plain 192-wide GEMM runs as band pairs (sm90::GemmConfig<..., ClusterM = 2>):
//              the two CTAs of a 2 x 1 cluster compute the same columns of two row bands and
//              TMA-multicast the weight tile, so the weights cross L2 once per pair; the grid's rows
//              of tiles are padded to an even count. Policy none; no effect on other widths or at
//              one row band. Empty / false: off (the plan never picks them: they measured 0.79-1.23x
//              the unpaired GEMM's time over the MLP shapes, docs/mlp.md "Band pairs"); tuning with
//              MlpRunOptions::tune_band_pairs tries them where a GEMM is 192 wide over two or more bands.
//   persistent true: the GEMM launches at most one CTA per SM, each looping over the tiles of the
//              stage's order (sm90::GemmArguments::persistent_ctas = the plan's SM count), so a
//              tile's pipeline fill runs under the previous tile's epilogue; it matters where the
//              GEMM has more tiles than SMs. Policy none, split-K 1 (an open split_k becomes 1), no
//              CTA or band pairs. Empty: the cost model's choice (MlpCostModel::persistent_tile_us)
//              for a GEMM of more tiles than SMs at widths 128-256 or swapped, with the split-K and
//              width left open too; false: one CTA per tile. MlpRunOptions::tune_persistent also
//              times it.
//   stream_k   true: persistent CTAs that share the k-blocks of all the GEMM's tiles evenly
//              (sm90::GemmArguments::stream_k), so that a grid that is not a whole number of waves
//              keeps every SM busy to its end; a tile shared by several CTAs is summed by the last
//              of them. Implies persistent (false there is refused); the same conditions. Empty:
//              the cost model's choice where the tiles leave the last wave ragged and persistent is
//              empty too, on a model with MlpCostModel::plan_weighs_stream_k (off until its term is
//              fitted on a GPU); false: off. MlpRunOptions::tune_stream_k (off by default) has tuning
//              time it.
struct GemmFormRequest {
  std::optional<GemmOperands> operands;
  std::optional<int> tile;
  std::optional<int> split_k;
  std::optional<bool> cta_pairs;
  std::optional<bool> band_pairs;
  // A default member initializer, so that a brace list of the five fields before it (code written
  // before this one existed) stays free of -Wmissing-field-initializers.
  std::optional<bool> persistent{};
  std::optional<bool> stream_k{};
  friend bool operator==(const GemmFormRequest&, const GemmFormRequest&) = default;
};

struct MlpOptions {
  MlpPolicy policy = MlpPolicy::automatic;
  GemmFormRequest gemm1, gemm2;
  std::optional<int> group_m;  // tile order: baton::Grouped{group_m} for both GEMMs; empty: mlp_group_m
  // Megabytes of W2 that GEMM1 prefetches into L2 as it ends (sm90::NextWeights: the first
  // k-blocks of every GEMM2 tile-part), meant to keep the weight stream going across the kernel
  // boundary at decode. 0: off, the default: on the H200 it measured slower at every decode shape
  // with 8, 24 and 48 MB (docs/mlp.md, "The op").
  int l2_prefetch_mb = 0;
  // Policy none: empty is PDL when GEMM1's CTAs fit in one wave, else after GEMM1. MlpRunOptions::tune
  // also times the other choice.
  std::optional<Gemm2Launch> launch;
  friend bool operator==(const MlpOptions&, const MlpOptions&) = default;
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
// 160 and 224: plain widths between those, for GEMMs without edges. A GEMM's CTAs run in waves of one
// per SM, so the time of a GEMM of few waves follows its wave count times its tile's width; more widths
// let the plan size the tile to the waves, as cuBLASLt sizes the weight side of its tiles (96, 168,
// 192, 256 wide: docs/mlp.md, "What cuBLASLt runs"). E.g. GPT-3's GEMM1 (n = 6144) at 384 tokens, three
// row bands on 132 SMs: 128 columns make 144 CTAs (two waves), 192 make 96 (one wave of tiles half as
// wide again), 160 make 117 (one wave of tiles a sixth narrower than 192). Their GMMA width needs CuTe's
// extended shapes (kernels/mlp/kernels.cmake, the extended unit). Measured against the plan without
// them: docs/mlp.md, "Plain widths between the standard ones".
inline constexpr int kMlpTile160N = 160, kMlpTile224N = 224;
inline constexpr int kMlpExtendedTileWidths[] = {kMlpTile160N, kMlpTile224N};
// Every width the op has kernels for (plan_mlp's cost model chooses among them;
// MlpRunOptions::tune times all of them).
inline constexpr int kMlpTileWidths[] = {kMlpTileN, kMlpNarrowTileN, kMlpMidTileN, kMlpWideTileN, kMlpTile160N,
                                         kMlpTile224N};
inline constexpr bool mlp_tile_width_ok(int w) {
  for (int t : kMlpTileWidths)
    if (t == w) return true;
  return false;
}
// The widths as the errors list them.
inline constexpr const char* kMlpTileWidthsText = "96, 128, 160, 192, 224 and 256";

// Token columns per tile of the swapped GEMMs (GemmOperands::swapped): 32 at decode; 144, 160, 192
// and 224 (the wide tiles) for batches that one or two such tiles cover (the GMMA computes every
// token column of the tile, so the tile that pads the fewest columns wastes the least; cuBLASLt sizes
// its token tile to the batch the same way, docs/mlp.md). No 256-token tile: past 448 tokens the
// plain GEMMs' four row bands are full and the cost model weighs two 256-token tiles slower.
inline constexpr int kMlpSwapTileN = 32, kMlpSwapSlimTileN = 144, kMlpSwapMidTileN = 160, kMlpSwapWideTileN = 192,
                     kMlpSwapWiderTileN = 224;
// 176 and 208 tokens: past two 224-token tiles only (three or more tiles), where they pad the fewest
// columns at e.g. m = 515 (3 x 176 = 528, against 576 for 192) and 1025 (5 x 208 = 1040, against
// 1120 for 224), as cuBLASLt sizes its token tile there. Where the plan took them (46 shapes of twelve
// models, m = 515-1152) it ran 0.97x its time without them, 0.86-1.05x (docs/mlp.md, "176- and
// 208-token tiles").
inline constexpr int kMlpSwap176TileN = 176, kMlpSwap208TileN = 208;
inline constexpr int kMlpSwapWideTiles[] = {kMlpSwapSlimTileN, kMlpSwapMidTileN, kMlpSwap176TileN, kMlpSwapWideTileN,
                                            kMlpSwap208TileN, kMlpSwapWiderTileN};
// Two of the widest token tiles: up to here the plan weighs one or two swapped token tiles.
inline constexpr int kMlpSwapTwoTileM = 2 * kMlpSwapWiderTileN;
inline constexpr bool mlp_swap_wide_tile_ok(int t) {
  for (int w : kMlpSwapWideTiles)
    if (w == t) return true;
  return false;
}
// Whether the wide tile t serves a batch of m tokens: every wide tile does, but 144 only as exactly
// two tiles past two row bands (m = 257-288, 288 columns instead of 160's 320). One 144-token tile
// would replace the 160-token plans timed at m = 129-144, two at m <= 256 would put the plan's
// swapped candidates against the plain GEMMs where two row bands are full, and three or more
// were never timed.
inline constexpr bool mlp_swap_tile_serves(int t, int m) {
  if (t == kMlpSwap176TileN || t == kMlpSwap208TileN) return m > kMlpSwapTwoTileM;
  return t != kMlpSwapSlimTileN || (m > 2 * kMlpTileM && m <= 2 * kMlpSwapSlimTileN);
}
// The token tile of a swapped GEMM over m tokens: 32 when they fit and the GEMM has a 32-token
// kernel (has_narrow: GEMM2, and GEMM1 with GeLU), else the wide tile that computes the fewest padded
// token columns (of those that serve m), the wider on a tie (fewer CTAs): m = 150 takes 160, 200 one
// tile of 224, 257 two of 144 (288 columns, not 320), 300 two of 160, 330 two of 192, 400 two of
// 224, 500 three of 176, 600 three of 208.
inline constexpr int mlp_swap_tile(int m, bool has_narrow) {
  if (m <= kMlpSwapTileN && has_narrow) return kMlpSwapTileN;
  int best = 0;
  int64_t best_cols = 0;
  for (int t : kMlpSwapWideTiles) {
    if (!mlp_swap_tile_serves(t, m)) continue;
    const int64_t cols = (int64_t(m) + t - 1) / t * t;
    if (best == 0 || cols <= best_cols) best = t, best_cols = cols;
  }
  return best;
}
// The largest batch at which the plan and tuning (MlpRunOptions::tune) weigh swapped GEMMs. Up to
// two of the widest token tiles (kMlpSwapTwoTileM) any wide tile covering the batch in one or two
// tiles; past it, three or more tiles of 160-224 tokens, up to nine 128-row bands' worth.
// Past one token tile they were measured faster than the plain GEMMs on some models once the last
// tile's B box was shortened. Over three to six tiles (m = 449-1100) both GEMMs swapped ran faster
// than the plain plan at 38 of 54 shapes of nine models, by up to 32%, and up to 41% slower on GPT-3
// at 449-600, where the cost model has the plain GEMMs ahead too. So the model chooses per GEMM: 5%
// faster on average than the two-tile limit where the two plans differ (68 shapes of twelve models;
// docs/mlp.md, "Models no table lists").
inline constexpr int kMlpSwapMaxM = 9 * kMlpTileM;
// Whether the plan weighs wide token tile t for a batch of m tokens: one tile of 160 or 192 that
// covers m, or two of any wide width (a single 224-token tile measured slower than the plain GEMMs at
// m = 193-224, where the model has it faster), or past two 224-token tiles three or more of 160, 176,
// 192, 208 or 224 (never 144: three or more of those were never timed).
inline constexpr bool mlp_swap_tile_weighed(int t, int m) {
  if (!mlp_swap_tile_serves(t, m) || m <= kMlpSwapTileN || m > kMlpSwapMaxM) return false;
  if (m <= kMlpSwapTwoTileM) return m <= t ? t <= kMlpSwapWideTileN : 2 * t >= m;
  return t != kMlpSwapSlimTileN;
}

// The optional forms of the op's kernels: a kernel set (baton/ops/mlp.cuh, MlpKernelSet) may lack
// them, since plan_mlp never picks any on its own (they run only when asked for, or as tuning
// candidates):
//   cta_pairs       the 128x96 CTA-pair GEMMs (GemmFormRequest::cta_pairs; measured level with the
//                   unpaired GEMMs, docs/mlp.md)
//   narrow_swapped  the 32-token swapped GEMMs (GemmOperands::swapped at m <= 32: GEMM2, and GEMM1
//                   with GeLU; measured slower than the plain GEMMs at every decode M)
//   band_pairs      the 128x192 band-pair GEMMs (GemmFormRequest::band_pairs; tuning tries them)
// The header-only kernels (mlp_kernels::Inline) have all three; the library baton::mlp_kernels
// (mlp_kernels::Compiled) has the band pairs always and the other two only when baton is configured
// with -DBATON_MLP_EXTRA_KERNELS=ON.
struct MlpKernelForms {
  bool cta_pairs = true;
  bool narrow_swapped = true;
  bool band_pairs = true;
  constexpr bool complete() const { return cta_pairs && narrow_swapped && band_pairs; }
  friend bool operator==(const MlpKernelForms&, const MlpKernelForms&) = default;
};
// The refusal of a form the kernel set lacks (errc::not_supported): `what` names the form and who
// asked for it; the message says how to get the kernels.
inline status mlp_missing_kernels(const std::string& what) {
  return status(errc::not_supported,
                what + ", which this kernel set lacks: baton::mlp_kernels leaves out the CTA-pair and 32-token "
                       "swapped kernels, which the plan never picks on its own; to get them, configure baton with "
                       "-DBATON_MLP_EXTRA_KERNELS=ON (or use the header-only baton::ops::Mlp, which has every kernel)");
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
  MlpPolicy policy = MlpPolicy::row;
  GemmForm form1{}, form2{};    // GEMM1's and GEMM2's
  int group_m = 1;
  int l2_prefetch_mb = 0;       // MB of W2 prefetched into L2 by GEMM1 (0: none)
  int l2_prefetch_kblocks = 0;  // the same as k-blocks per GEMM2 tile-part
  Gemm2Launch launch = Gemm2Launch::pdl;
  double expected_us = 0;       // the cost model's time for the chain (mlp_cost.hpp); 0: not modeled
  // Output tiles: plain, token tiles x column tiles (GEMM1 over its n = F or 2F computed columns);
  // swapped, weight-row tiles x token tiles.
  Grid gemm1{}, gemm2{};
  std::string reason;
  std::string log_line() const {
    auto form = [](const GemmForm& f, const char* swapped_as) {
      return (f.operands == GemmOperands::swapped
                 ? "swapped 128x" + std::to_string(f.tile) + " (" + swapped_as + ")"
                 : "128x" + std::to_string(f.tile) + (f.cta_pairs ? " pairs" : "") + (f.band_pairs ? " band pairs" : "")) +
             (f.stream_k ? " stream-K" : f.persistent ? " persistent" : "");
    };
    return "baton::ops::mlp m=" + std::to_string(shape.m) + " h=" + std::to_string(shape.hidden) +
           " f=" + std::to_string(shape.ffn) + " " + to_string(shape.act) + ": policy " + to_string(policy) +
           ", split-K " + std::to_string(form1.split_k) + "/" + std::to_string(form2.split_k) + ", tiles " +
           form(form1, "W1 x X^T") + "/" + form(form2, "W2 x Y^T") + ", tile order Grouped{" +
           std::to_string(group_m) + "}, GEMM2 " + (launch == Gemm2Launch::pdl ? "PDL-launched" : "after GEMM1") +
           ", L2 prefetch of W2 " +
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
inline MlpPolicy mlp_auto_policy(const MlpShape& s, const Grid& gemm1, int sms, std::string& why, int split1 = 1) {
  (void)s;
  const int64_t ctas = gemm1.size() * int64_t(split1 > 0 ? split1 : 1);
  why = std::to_string(gemm1.size()) + " GEMM1 tiles" +
        (split1 > 1 ? " x " + std::to_string(split1) + " split-K parts" : std::string()) + " (" +
        std::to_string(double(ctas) / double(sms > 0 ? sms : 1)).substr(0, 4) +
        " waves): on the H200 per-row and per-k-block waits measured slower than two plain launches in a graph "
        "at every M (each GEMM saturates HBM or the tensor cores; docs/mlp.md), so no overlap";
  return MlpPolicy::none;
}

// MlpOptions as text and back, for the tuning cache (baton/ops/tuner.hpp): every field, a GEMM's
// request as operands/tile/split_k/cta_pairs/band_pairs/persistent/stream_k with `auto` for an empty
// field: "policy=none;gemm1=swapped/160/2/auto/auto/auto/auto;gemm2=auto/auto/auto/auto/auto/1/0;group_m=auto;
// l2_prefetch_mb=0;launch=pdl". Parsing refuses unknown, missing or malformed fields, naming them; a
// request of four to six parts (cache files written before band pairs, persistent CTAs or stream-K)
// leaves the missing fields empty.
namespace detail {
inline std::string opt_text(const std::optional<int>& v) { return v ? std::to_string(*v) : "auto"; }
inline std::string opt_text(const std::optional<bool>& v) { return v ? (*v ? "1" : "0") : "auto"; }
inline std::string request_text(const GemmFormRequest& r) {
  return std::string(r.operands ? to_string(*r.operands) : "auto") + "/" + opt_text(r.tile) + "/" +
         opt_text(r.split_k) + "/" + opt_text(r.cta_pairs) + "/" + opt_text(r.band_pairs) + "/" +
         opt_text(r.persistent) + "/" + opt_text(r.stream_k);
}
inline bool parse_opt_bool(const std::string& v, std::optional<bool>& out) {
  if (v == "auto") out.reset();
  else if (v == "0" || v == "1") out = v == "1";
  else return false;
  return true;
}
inline bool parse_opt_int(const std::string& v, std::optional<int>& out) {
  if (v == "auto") {
    out.reset();
    return true;
  }
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < 0 || x > (1L << 20)) return false;
  out = int(x);
  return true;
}
inline bool parse_request(const std::string& v, GemmFormRequest& r) {
  std::vector<std::string> parts;
  size_t p = 0;
  for (size_t q; (q = v.find('/', p)) != std::string::npos; p = q + 1) parts.push_back(v.substr(p, q - p));
  parts.push_back(v.substr(p));
  if (parts.size() < 4 || parts.size() > 7) return false;
  if (parts[0] == "auto") r.operands.reset();
  else if (parts[0] == "plain") r.operands = GemmOperands::plain;
  else if (parts[0] == "swapped") r.operands = GemmOperands::swapped;
  else return false;
  if (!parse_opt_int(parts[1], r.tile) || !parse_opt_int(parts[2], r.split_k)) return false;
  if (!parse_opt_bool(parts[3], r.cta_pairs)) return false;
  r.band_pairs.reset();
  r.persistent.reset();
  r.stream_k.reset();
  if (parts.size() >= 5 && !parse_opt_bool(parts[4], r.band_pairs)) return false;
  if (parts.size() >= 6 && !parse_opt_bool(parts[5], r.persistent)) return false;
  return parts.size() < 7 || parse_opt_bool(parts[6], r.stream_k);
}
}  // namespace detail

inline std::string mlp_options_to_string(const MlpOptions& o) {
  return std::string("policy=") + to_string(o.policy) + ";gemm1=" + detail::request_text(o.gemm1) +
         ";gemm2=" + detail::request_text(o.gemm2) + ";group_m=" + detail::opt_text(o.group_m) +
         ";l2_prefetch_mb=" + std::to_string(o.l2_prefetch_mb) +
         ";launch=" + (o.launch ? to_string(*o.launch) : "auto");
}
inline result<MlpOptions> mlp_options_from_string(const std::string& text) {
  MlpOptions o;
  const char* const names[] = {"policy", "gemm1", "gemm2", "group_m", "l2_prefetch_mb", "launch"};
  constexpr int kFields = 6;
  unsigned seen = 0;
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
    int i = 0;
    while (i < kFields && k != names[i]) ++i;
    if (i == kFields) return bad("unknown field '" + k + "'");
    bool ok = true;
    switch (i) {
      case 0:
        if (v == "auto" || v == "automatic") o.policy = MlpPolicy::automatic;
        else if (v == "row") o.policy = MlpPolicy::row;
        else if (v == "kblock") o.policy = MlpPolicy::kblock;
        else if (v == "none") o.policy = MlpPolicy::none;
        else return bad("unknown policy '" + v + "'");
        break;
      case 1: ok = detail::parse_request(v, o.gemm1); break;
      case 2: ok = detail::parse_request(v, o.gemm2); break;
      case 3: ok = detail::parse_opt_int(v, o.group_m); break;
      case 4: {
        std::optional<int> mb;
        ok = detail::parse_opt_int(v, mb) && mb.has_value();
        if (ok) o.l2_prefetch_mb = *mb;
        break;
      }
      default:
        if (v == "auto") o.launch.reset();
        else if (v == "pdl") o.launch = Gemm2Launch::pdl;
        else if (v == "after_gemm1") o.launch = Gemm2Launch::after_gemm1;
        else ok = false;
    }
    if (!ok)
      return bad(k + " = '" + v +
                 "' is malformed (a GEMM: operands/tile/split_k/cta_pairs/band_pairs/persistent/stream_k, each 'auto' or "
                 "a value)");
    seen |= 1u << i;
  }
  for (int i = 0; i < kFields; ++i)
    if (!(seen & (1u << i))) return bad(std::string("no ") + names[i]);
  return o;
}

// The tuning cache's key of an Mlp: the shape, the options the caller asked for (what tuning starts
// from), the device (tune_device_key in tuner.hpp) and, for a kernel set without every optional form,
// the forms it lacks (its tuning tried fewer candidates, so its result is not another set's; a
// complete set's key has no such field).
inline std::string mlp_tune_key(const MlpShape& s, const MlpOptions& asked, const std::string& device,
                                const MlpKernelForms& have = {}) {
  std::string lacks;
  if (!have.cta_pairs) lacks += "cta_pairs";
  if (!have.narrow_swapped) lacks += std::string(lacks.empty() ? "" : ",") + "narrow_swapped";
  if (!have.band_pairs) lacks += std::string(lacks.empty() ? "" : ",") + "band_pairs";
  return "mlp;m=" + std::to_string(s.m) + ";h=" + std::to_string(s.hidden) + ";f=" + std::to_string(s.ffn) +
         ";act=" + to_string(s.act) + ";asked=" + mlp_options_to_string(asked) + ";device=" + device +
         (lacks.empty() ? std::string() : ";kernels_lack=" + lacks);
}

// Which tuning candidate the MLP op keeps (MlpRunOptions::tune): tuning_choice (tuner.hpp), the rule
// every op's tuning uses. The margin matters here: a noise-picked row-major order at GPT-3 m = 1024
// ran 6% slower in the timed graph (docs/mlp.md).
inline size_t mlp_tuning_choice(std::vector<std::vector<double>> rounds, std::vector<double>& medians,
                                double margin = 0.02) {
  return tuning_choice(std::move(rounds), medians, margin);
}

namespace detail {
// One GEMM of the plan: D [m, n] = act(A [m, k] W [n, k]^T) in its form (plain or swapped).
struct MlpGemmPick {
  GemmForm form{};
  double us = -1;  // modeled time (policy none), -1: not modeled
};
inline Grid mlp_gemm_grid(const GemmForm& f, int m, int n) {
  if (f.operands == GemmOperands::swapped) return Grid{ceil_div(n, kMlpTileM), ceil_div(m, f.tile), 1};
  const int cols = ceil_div(n, f.tile), rows = ceil_div(m, kMlpTileM);
  return Grid{f.band_pairs ? ceil_div(rows, 2) * 2 : rows, f.cta_pairs ? ceil_div(cols, 2) * 2 : cols, 1};
}
// The form of least modeled time (mlp_cost.hpp) of one GEMM without waits, D [m, n] = A [m, k] W [n, k]^T,
// among what request `r` leaves open: plain widths x split-K (only over fewer tiles than SMs, in
// parts of >= 8 k-blocks), and, with the operands and tile open, the swapped form in wide token
// tiles, one that covers m or, past 192 tokens, up to two of either width (in at most 3 parts: 8 parts of
// GPT-3's 160-token GEMM1 at m = 129 modeled faster than 2 and ran 1.2x slower). activation: the GEMM is
// the MLP's GEMM1 (MlpGemmShape::activation). extra_us(tiles, split) adds what the caller's context costs
// a candidate (GEMM1: the serial gap when it is not PDL-launched). CTA pairs only when asked for.
// Persistent CTAs (one part) are weighed beside one CTA per tile for a GEMM of more tiles than SMs,
// unless the request says false, and not at width 96: a persistent 128x96 GEMM measured slower than
// the same GEMM one CTA per tile, where the wider and swapped tiles measured faster (docs/mlp.md,
// "Persistent CTAs"); asked for (persistent true), it is the only form weighed. Stream-K (one part)
// is weighed where the tiles leave the last wave ragged, with persistence and stream_k left open, on
// a model that says so (MlpCostModel::plan_weighs_stream_k); asked for, it is the only form weighed.
template <class Extra>
[[nodiscard]] inline MlpGemmPick mlp_pick_free_form(const MlpCostModel& model, int m, int n, int k, int sms,
                                                    const GemmFormRequest& r, int group, bool activation,
                                                    Extra&& extra_us) {
  MlpGemmPick best;
  const int k_tiles = ceil_div(k, kMlpTileK);
  auto consider = [&](GemmOperands ops, int tile) {
    const bool swapped = ops == GemmOperands::swapped;
    const int64_t tiles = mlp_gemm_grid(GemmForm{ops, tile, 1, false}, m, n).size();
    const bool asked_stream_k = r.stream_k.value_or(false);
    const bool asked_persistent = r.persistent.value_or(false) || asked_stream_k;
    const bool loop_open = r.persistent.value_or(true) && r.split_k.value_or(1) == 1 &&
                           !r.band_pairs.value_or(false) && !r.cta_pairs.value_or(false);
    const bool may_persist = asked_persistent || (loop_open && !asked_stream_k && tiles > int64_t(sms) &&
                                                  (swapped || tile != kMlpNarrowTileN));
    // Stream-K on its own: where the tiles leave the last wave ragged (a whole number of waves has
    // nothing to even out), and only with the persistence left open (persistent = true asks for whole
    // tiles).
    const bool may_stream_k = asked_stream_k || (loop_open && !r.persistent &&
                                                 r.stream_k.value_or(model.plan_weighs_stream_k) && tiles % sms != 0);
    enum class Loop { per_tile, persistent, stream_k };
    for (int sp = 1; sp <= 8; ++sp) {
      if (sp > 1 && asked_persistent) break;
      if (r.split_k ? sp != *r.split_k : (sp > 1 && (sp > k_tiles / 8 || tiles >= int64_t(sms) || (swapped && sp > 3))))
        continue;
      for (const Loop loop : {Loop::per_tile, Loop::persistent, Loop::stream_k}) {
        if (loop == Loop::per_tile && asked_persistent) continue;
        if (loop == Loop::persistent && !(may_persist && !asked_stream_k && sp == 1)) continue;
        if (loop == Loop::stream_k && !(may_stream_k && sp == 1)) continue;
        MlpGemmShape g{m, n, k, swapped ? kMlpTileN : tile, sp, group, swapped ? tile : 0};
        g.persistent = loop != Loop::per_tile;
        g.stream_k = loop == Loop::stream_k;
        g.activation = activation;
        const double us = mlp_gemm_cost_us(model, g, sms) + extra_us(tiles, sp);
        if (best.us < 0 || us < best.us) {
          best = MlpGemmPick{GemmForm{ops, tile, sp, false}, us};
          best.form.persistent = g.persistent;
          best.form.stream_k = g.stream_k;
        }
      }
    }
  };
  auto extended = [](int w) {
    for (int t : kMlpExtendedTileWidths)
      if (t == w) return true;
    return false;
  };
  for (int w : kMlpTileWidths)
    if ((!r.tile || w == *r.tile) && !extended(w)) consider(GemmOperands::plain, w);
  // The swapped token tiles mlp_swap_tile_weighed admits for m.
  if (!r.operands && !r.tile)
    for (int t : kMlpSwapWideTiles)
      if (mlp_swap_tile_weighed(t, m)) consider(GemmOperands::swapped, t);
  // The extended plain widths last: a form weighed earlier keeps a tie (the swapped tile of the same
  // width costs the same in the model, and was measured where it was chosen).
  for (int w : kMlpExtendedTileWidths)
    if (!r.tile || w == *r.tile) consider(GemmOperands::plain, w);
  best.form.cta_pairs =
      best.form.operands == GemmOperands::plain && best.form.tile == kMlpNarrowTileN && r.cta_pairs.value_or(false);
  best.form.band_pairs = best.form.operands == GemmOperands::plain && best.form.tile == kMlpMidTileN && m > kMlpTileM &&
                         r.band_pairs.value_or(false);
  if (best.form.band_pairs) best.form.persistent = best.form.stream_k = false;  // clusters do not persist
  return best;
}
}  // namespace detail

// Validates the shape and the request and decides policy and each GEMM's form (operands, tile,
// split-K, CTA pairs), the tile order and GEMM2's launch. Errors name the offending extent or field.
// `have`: the optional kernel forms of the kernel set that will run the plan (MlpKernelForms); a
// request that needs one it lacks is refused (errc::not_supported, mlp_missing_kernels), and the
// plan never uses one. `model`: the cost model of the GPU that runs the plan (mlp_cost_model_for_hbm;
// the default is the H200's fit), for the plan's expected time. The forms are chosen with the fit on
// every GPU: on an H100 the scaled model predicted memory-bound chains far better than the fit but
// chose forms that ran slower than the fit's at decode and m = 128 (docs/mlp.md, "The cost model").
[[nodiscard]] inline result<MlpPlan> plan_mlp(const MlpShape& s, int sms, const MlpOptions& opt = {},
                                              const MlpKernelForms& have = {}, const MlpCostModel& model = {}) {
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
  if (opt.group_m && *opt.group_m < 1)
    return status(errc::invalid_argument, "baton::ops::mlp: group_m must be >= 1, got " + std::to_string(*opt.group_m));
  MlpPlan p;
  p.shape = s;
  const int n1 = s.act == Activation::swiglu ? 2 * s.ffn : s.ffn;
  const int rows = ceil_div(s.m, kMlpTileM);
  const int k1 = ceil_div(s.hidden, kMlpTileK), k2 = ceil_div(s.ffn, kMlpTileK);
  if (opt.policy == MlpPolicy::automatic) {
    p.policy = mlp_auto_policy(s, Grid{rows, ceil_div(n1, kMlpTileN), 1}, sms, p.reason);
  } else {
    p.policy = opt.policy;
    p.reason = "the caller asked for it";
  }
  const bool none = p.policy == MlpPolicy::none;
  // Each request against the kernels the op has, before anything is chosen.
  auto check = [&](const GemmFormRequest& r, int which, int k_tiles) -> status {
    const std::string g = "baton::ops::mlp " + dims + ": gemm" + std::to_string(which) + " ";
    const bool swapped = r.operands == GemmOperands::swapped;
    if (r.split_k && (*r.split_k < 1 || *r.split_k > k_tiles))
      return status(errc::invalid_argument, g + "split_k " + std::to_string(*r.split_k) + " must be in [1, " +
                                                std::to_string(k_tiles) + "] (its k-blocks)");
    if (r.tile) {
      const int t = *r.tile;
      const bool narrow_ok = which == 2 || s.act == Activation::gelu;
      if (swapped && !(mlp_swap_wide_tile_ok(t) || (t == kMlpSwapTileN && narrow_ok)))
        return status(errc::invalid_argument, g + "swapped tile of " + std::to_string(t) + " tokens: the kernels have " +
                                                  (narrow_ok ? "32, 144, 160, 176, 192, 208 and 224" : "144, 160, 176, 192, 208 and 224 (32 with GeLU only)"));
      if (!swapped && !mlp_tile_width_ok(t))
        return status(errc::invalid_argument, g + "tile width " + std::to_string(t) + ": the kernels have " + kMlpTileWidthsText);
    }
    if (!none) {
      if (swapped)
        return status(errc::not_supported, g + "swapped needs policy none (the swapped GEMMs neither wait nor post), got policy " +
                                               std::string(to_string(p.policy)));
      if (r.tile && *r.tile != kMlpTileN)
        return status(errc::not_supported, g + "tiles other than 128x128 (" + std::to_string(*r.tile) + " wide) need policy none (the op "
                                               "has no kernels of those widths that wait or post), got policy " +
                                               to_string(p.policy));
      if (r.cta_pairs.value_or(false))
        return status(errc::not_supported, g + "CTA pairs need policy none (a waiting GEMM2 cannot multicast A before "
                                               "both CTAs' waits), got policy " + to_string(p.policy));
      if (r.band_pairs.value_or(false))
        return status(errc::not_supported, g + "band pairs need policy none (the op has no band-pair kernels that wait "
                                               "or post), got policy " + to_string(p.policy));
      if (r.persistent.value_or(false) || r.stream_k.value_or(false))
        return status(errc::not_supported, g + "persistent CTAs need policy none, stream-K too (a looping CTA would "
                                               "hold its SM while waiting for tiles of another), got policy " +
                                               to_string(p.policy));
    }
    if (r.stream_k.value_or(false) && !r.persistent.value_or(true))
      return status(errc::invalid_argument, g + "stream_k runs persistent CTAs; persistent = false contradicts it");
    if (r.stream_k.value_or(false) && r.split_k.value_or(1) != 1)
      return status(errc::not_supported, g + "stream-K shares each tile's k-blocks by itself; split_k " +
                                             std::to_string(*r.split_k) + " must be left open or 1");
    if (r.persistent.value_or(false) || r.stream_k.value_or(false)) {
      if (r.split_k.value_or(1) != 1)
        return status(errc::not_supported, g + "persistent CTAs run each tile in one part; split_k " +
                                               std::to_string(*r.split_k) + " needs one CTA per tile-part");
      if (r.cta_pairs.value_or(false) || r.band_pairs.value_or(false))
        return status(errc::not_supported, g + "persistent CTAs are for GEMMs without clusters (no CTA or band pairs)");
    }
    if (swapped && r.cta_pairs.value_or(false))
      return status(errc::not_supported, g + "CTA pairs are for the plain form (they multicast the activations)");
    if (swapped && r.band_pairs.value_or(false))
      return status(errc::not_supported, g + "band pairs are for the plain form (they multicast the weights)");
    if (r.band_pairs.value_or(false) && r.cta_pairs.value_or(false))
      return status(errc::not_supported, g + "CTA pairs (96 wide) and band pairs (192 wide) exclude each other");
    // Refused whatever width the plan would give the GEMM: the request is for a form the set lacks.
    if (r.cta_pairs.value_or(false) && !have.cta_pairs)
      return mlp_missing_kernels(g + "asks for CTA pairs (GemmFormRequest::cta_pairs)");
    if (r.band_pairs.value_or(false) && !have.band_pairs)
      return mlp_missing_kernels(g + "asks for band pairs (GemmFormRequest::band_pairs)");
    return {};
  };
  BATON_TRY(check(opt.gemm1, 1, k1));
  BATON_TRY(check(opt.gemm2, 2, k2));
  const int group = opt.group_m ? *opt.group_m : mlp_group_m(Grid{rows, 1, 1});
  MlpCostModel fit{};  // what chooses the forms, on every GPU (above) ...
  fit.plan_weighs_stream_k = model.plan_weighs_stream_k;  // ... weighing stream-K where `model` says so
  // One GEMM's form. With waits: plain 128x128 tiles, split-K choose_split_k (or the caller's). With
  // policy none, whatever the caller left open has the least modeled time (detail::mlp_pick_free_form);
  // GEMM1 also pays the serial gap when its CTAs make more than one wave (GEMM2 then is not PDL-launched).
  // A swapped form asked for keeps choose_split_k, and its token tile is mlp_swap_tile's.
  auto pick = [&](const GemmFormRequest& r, int n, int k, int k_tiles, bool first) {
    detail::MlpGemmPick best;
    const bool narrow_swap = !first || s.act == Activation::gelu;
    if (r.operands == GemmOperands::swapped) {
      best.form = GemmForm{GemmOperands::swapped, r.tile.value_or(mlp_swap_tile(s.m, narrow_swap)), 1, false};
      best.form.stream_k = r.stream_k.value_or(false);
      best.form.persistent = r.persistent.value_or(false) || best.form.stream_k;
      best.form.split_k = best.form.persistent
                              ? 1
                              : r.split_k.value_or(choose_split_k(detail::mlp_gemm_grid(best.form, s.m, n).size(), k_tiles, sms));
      return best;
    }
    if (!none) {
      best.form = GemmForm{GemmOperands::plain, kMlpTileN, 1, false};
      best.form.split_k = r.split_k.value_or(choose_split_k(detail::mlp_gemm_grid(best.form, s.m, n).size(), k_tiles, sms));
      return best;
    }
    auto gap = [&](int64_t tiles, int sp) {
      if (!first) return 0.0;
      const bool pdl = opt.launch ? *opt.launch == Gemm2Launch::pdl : tiles * sp <= int64_t(sms);
      return pdl ? 0.0 : fit.serial_gap_us;
    };
    return detail::mlp_pick_free_form(fit, s.m, n, k, sms, r, group, first, gap);
  };
  const detail::MlpGemmPick g1 = pick(opt.gemm1, n1, s.hidden, k1, true);
  const detail::MlpGemmPick g2 = pick(opt.gemm2, s.hidden, s.ffn, k2, false);
  p.form1 = g1.form;
  p.form2 = g2.form;
  // A swapped GEMM takes 32-token tiles when asked for them or, with the tile left open, at m <= 32
  // (mlp_swap_tile); the cost model only weighs the wide token tiles.
  for (const auto& [f, which] : {std::pair{p.form1, 1}, std::pair{p.form2, 2}})
    if (f.operands == GemmOperands::swapped && f.tile == kMlpSwapTileN && !have.narrow_swapped)
      return mlp_missing_kernels("baton::ops::mlp " + dims + ": gemm" + std::to_string(which) +
                                 " swapped in 32-token tiles (GemmOperands::swapped at m <= 32, or tile 32; a "
                                 "160-token tile, GemmFormRequest::tile = 160, runs without them)");
  p.gemm1 = detail::mlp_gemm_grid(p.form1, s.m, n1);
  p.gemm2 = detail::mlp_gemm_grid(p.form2, s.m, s.hidden);
  p.group_m = group;  // Grouped{bands of row tiles}, whichever form the GEMMs take
  // The automatic policy's reason, restated for the grid GEMM1 runs with.
  if (opt.policy == MlpPolicy::automatic) (void)mlp_auto_policy(s, p.gemm1, sms, p.reason, p.form1.split_k);
  // GEMM2's launch: row / kblock chains are always PDL-launched (their GEMM2 waits on semaphores).
  const bool one_wave = p.gemm1.size() * int64_t(p.form1.split_k) <= int64_t(sms);
  p.launch = !none ? Gemm2Launch::pdl : opt.launch ? *opt.launch : one_wave ? Gemm2Launch::pdl : Gemm2Launch::after_gemm1;
  p.l2_prefetch_mb = opt.l2_prefetch_mb;
  p.l2_prefetch_kblocks = mlp_l2_prefetch_kblocks(p.l2_prefetch_mb, s.hidden, s.ffn, p.form2.split_k);
  // The model's time for the chain it can describe (not CTA or band pairs, the L2 prefetch or 32-token tiles).
  auto modeled = [](const GemmForm& f) {
    return !f.cta_pairs && !f.band_pairs && !(f.operands == GemmOperands::swapped && f.tile == kMlpSwapTileN);
  };
  auto shape_of = [&](const GemmForm& f, int n, int k, bool activation) {
    const bool swapped = f.operands == GemmOperands::swapped;
    return MlpGemmShape{s.m, n, k, swapped ? kMlpTileN : f.tile, f.split_k, p.group_m, swapped ? f.tile : 0,
                        f.persistent, f.stream_k, activation};
  };
  if (none && modeled(p.form1) && modeled(p.form2) && p.l2_prefetch_kblocks == 0)
    p.expected_us = mlp_chain_cost_us(model, shape_of(p.form1, n1, s.hidden, true),
                                      shape_of(p.form2, s.hidden, s.ffn, false), p.launch == Gemm2Launch::pdl, sms);
  return p;
}

// One GEMM without semaphores on baton::mlp_kernels' GEMM2 forms, D [m, n] = A [m, k] W [n, k]^T with
// no activation, for another op's chain (the attention op's QKV and O-proj GEMMs when their edge
// is none): the form, its grid and tile order, and the cost model's time.
struct FreeGemmPlan {
  GemmForm form{};
  Grid grid{};        // output tiles (detail::mlp_gemm_grid); each tile runs form.split_k parts
  int group_m = 1;    // tile order Grouped{group_m} (mlp_group_m of the row tiles)
  double expected_us = 0;  // mlp_gemm_cost_us; 0: not modeled (CTA pairs, 32-token swapped tiles)
  friend bool operator==(const FreeGemmPlan&, const FreeGemmPlan&) = default;
};

// The plan of such a GEMM: request `r` checked as plan_mlp checks GEMM2's under policy none (errors
// start with `what`), everything it leaves open the cost model's (detail::mlp_pick_free_form), but a
// swapped form asked for takes the asked tile or mlp_swap_tile's (160 tokens where `have` lacks the
// 32-token kernels) and the asked split or choose_split_k's, as plan_mlp's do. `have`: the optional forms of the kernel set that will run it; a
// request that needs one it lacks is refused.
[[nodiscard]] inline result<FreeGemmPlan> plan_free_gemm(int m, int n, int k, int sms, const GemmFormRequest& r = {},
                                                         const MlpKernelForms& have = {},
                                                         const std::string& what = "baton::ops::plan_free_gemm") {
  const std::string dims = what + " (m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + "): ";
  if (m < 1 || n < 1 || k < 1) return status(errc::invalid_argument, dims + "every extent must be >= 1");
  if (n % 8 != 0 || k % 8 != 0)
    return status(errc::not_supported, dims + "n and k must be multiples of 8 (the GEMM's TMA needs 16-byte rows)");
  if (sms < 1) return status(errc::invalid_argument, dims + "sms must be >= 1, got " + std::to_string(sms));
  const int k_tiles = ceil_div(k, kMlpTileK);
  const bool swapped = r.operands == GemmOperands::swapped;
  if (r.split_k && (*r.split_k < 1 || *r.split_k > k_tiles))
    return status(errc::invalid_argument, dims + "split_k " + std::to_string(*r.split_k) + " must be in [1, " +
                                              std::to_string(k_tiles) + "] (its k-blocks)");
  if (r.tile && swapped && !(*r.tile == kMlpSwapTileN || mlp_swap_wide_tile_ok(*r.tile)))
    return status(errc::invalid_argument, dims + "swapped tile of " + std::to_string(*r.tile) + " tokens: the kernels have 32, 144, 160, 176, 192, 208 and 224");
  if (r.tile && !swapped && !mlp_tile_width_ok(*r.tile))
    return status(errc::invalid_argument, dims + "tile width " + std::to_string(*r.tile) + ": the kernels have " + kMlpTileWidthsText);
  if (r.cta_pairs.value_or(false)) {
    if (swapped) return status(errc::not_supported, dims + "CTA pairs are for the plain form (they multicast the activations)");
    if (!have.cta_pairs) return mlp_missing_kernels(dims + "asks for CTA pairs (GemmFormRequest::cta_pairs)");
  }
  if (r.band_pairs.value_or(false))
    return status(errc::not_supported, dims + "band pairs (GemmFormRequest::band_pairs) are the MLP op's GEMM1 / GEMM2 "
                                              "forms; a free GEMM has none");
  if (r.persistent.value_or(false) || r.stream_k.value_or(false))
    return status(errc::not_supported, dims + "persistent CTAs (GemmFormRequest::persistent) are the MLP op's GEMM1 / "
                                              "GEMM2 forms, stream-K (stream_k) too; a free GEMM has none");
  FreeGemmPlan p;
  p.group_m = mlp_group_m(Grid{ceil_div(m, kMlpTileM), 1, 1});
  const MlpCostModel model{};
  if (swapped) {
    p.form = GemmForm{GemmOperands::swapped, r.tile.value_or(mlp_swap_tile(m, have.narrow_swapped)), 1, false};
    p.form.split_k = r.split_k.value_or(choose_split_k(detail::mlp_gemm_grid(p.form, m, n).size(), k_tiles, sms));
  } else {
    GemmFormRequest one_cta_per_tile = r;  // a free GEMM has no persistent form (its ops launch without the SM count)
    one_cta_per_tile.persistent = false;
    p.form = detail::mlp_pick_free_form(model, m, n, k, sms, one_cta_per_tile, p.group_m, false,
                                        [](int64_t, int) { return 0.0; }).form;
  }
  const bool narrow_swapped = p.form.operands == GemmOperands::swapped && p.form.tile == kMlpSwapTileN;
  if (narrow_swapped && !have.narrow_swapped)
    return mlp_missing_kernels(dims + "swapped in 32-token tiles (GemmOperands::swapped at m <= 32, or tile 32; a "
                                      "160-token tile runs without them)");
  p.grid = detail::mlp_gemm_grid(p.form, m, n);
  if (!narrow_swapped && !p.form.cta_pairs) {
    const bool sw = p.form.operands == GemmOperands::swapped;
    p.expected_us = mlp_gemm_cost_us(
        model, MlpGemmShape{m, n, k, sw ? kMlpTileN : p.form.tile, p.form.split_k, p.group_m, sw ? p.form.tile : 0}, sms);
  }
  return p;
}

// Whether options `o` need a kernel form that `have` lacks: planned with every form they succeed,
// with `have` they are refused. Tuning skips such candidates rather than failing on them.
[[nodiscard]] inline bool mlp_needs_missing_kernels(const MlpShape& s, int sms, const MlpOptions& o,
                                                    const MlpKernelForms& have) {
  if (have.complete()) return false;
  return plan_mlp(s, sms, o).ok() && !plan_mlp(s, sms, o, have).ok();
}

}  // namespace baton::ops
