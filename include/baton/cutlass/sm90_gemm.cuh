// baton/cutlass/sm90_gemm.cuh — a Hopper (sm_90a) warp-specialized GEMM whose tiles are ordered,
// waited on and published by a baton Stage. bf16 in, fp32 accumulate, bf16 out:
//
//   D[m, n] = fusion(A[m, k] * B[n, k]^T)     A row-major [M, K] (activations),
//                                             B row-major [N, K] (weights, nn.Linear layout),
//                                             D row-major [M, N]
//
// Built from CUTLASS 4.2 collectives (CollectiveBuilder, cooperative schedule, 1x1x1 cluster):
//   mainloop  = WaitingMainloop<CUTLASS mainloop>   (sm90_waiting_mainloop.cuh: per-k-block waits)
//   epilogue  = PostingEpilogue<CUTLASS epilogue>   (sm90_posting_epilogue.cuh: release after stores)
//   kernel    = GemmKernel below: the warp roles of CUTLASS's cooperative kernel (one producer
//               warp group, two MMA warp groups), one output tile per CTA (non-persistent), the
//               tile taken from the stage's ticket instead of blockIdx.
//
// A chain of two GEMMs (Y = X W1^T, then Z = Y W2^T; see docs/cutlass.md):
//
//   using Cfg  = baton::sm90::GemmConfig<>;                       // 128x128x64 tiles
//   using Edge = baton::KBlockPolicy<baton::footprint::GemmA>;
//   auto fp = baton::sm90::gemm_a_footprint<Cfg>(M, N1);          // Z's A operand on Y's tiles
//   Grid g1 = baton::sm90::tile_grid<Cfg>(M, N1), g2 = baton::sm90::tile_grid<Cfg>(M, N2);
//   baton::Chain chain;
//   auto s1 = chain.add_stage("gemm1", g1, baton::RowMajor{}, {.reads = {"X"}, .writes = {"Y"}});
//   auto s2 = chain.add_stage("gemm2", g2, baton::RowMajor{}, {.reads = {"Y"}, .writes = {"Z"}});
//   auto e  = chain.add_edge(s1, s2, Edge{g1, fp}, baton::deps::gemm_a(fp, g2));
//   chain.validate(); initialize_workspace(chain, ws, bytes, stream);
//   auto st1 = chain.bind(s1, ws, bytes, baton::outs(e), baton::ins());
//   auto st2 = chain.bind(s2, ws, bytes, baton::outs(), baton::ins(e));
//   using G1 = baton::sm90::Gemm<Cfg, std::remove_cvref_t<decltype(st1.value())>>;  // one kernel each
//   using G2 = baton::sm90::Gemm<Cfg, std::remove_cvref_t<decltype(st2.value())>>;
//   auto l1 = G1::make_launch(st1.value(), {M, N1, K1, x, w1, y});   // once, not per launch
//   auto l2 = G2::make_launch(st2.value(), {M, N2, N1, y, w2, z});
//   baton::launch_chain(chain, stream, {l1.value(), l2.value()});   // PDL, one stream
//
// Requirements (checked by Gemm::to_params): k and n multiples of 8 (16-byte TMA strides), 16-byte
// aligned pointers; any m. The stage's grid must be tile_grid<Config>(m, n); input policies must
// walk A in k-blocks of Config::tile_k (gemm_a_footprint gives that).
//
// Decode shapes (docs/cutlass.md): GemmArguments::split_k shares each tile's k-blocks among CTAs
// (reduced in a workspace by the last part, which alone posts); for m <= 64 A's TMA box is
// shortened and the MMA warp group of the all-padding upper half skips its GMMAs.
// GemmConfig<Tile, FusionOp, /*SwiGluPairs=*/true>: SiLU(gate) * up over interleaved weights.
// GemmConfig<Tile, FusionOp, false, cutlass::layout::ColumnMajor>: D [m, n] column-major, i.e. the
// swapped form of a decode GEMM: m = the weights' rows, n = the tokens, A = the weights, B = the
// activations, D^T = the row-major output (baton::ops::Mlp's swapped GEMM2).
//
// Gemm<Config, Stage, GridWaitBeforeLoads>: the kernel-granular PDL baseline (no baton waits).
// The mainloop's load warp executes griddepcontrol.wait before its first TMA load, as CUTLASS does
// with CUTLASS_ENABLE_GDC_FOR_SM90, so the GEMM may be PDL-launched behind the GEMM that writes its
// A. Gemm<Config, Stage, GridWaitBeforeA>: the same wait before the first load of A only; B
// (weights) fills the pipeline first (GridDependencyWaits). Only for stages without inputs (a baton
// consumer waits on semaphores instead). The default, NoGridWait, never waits on a grid.
//
// GemmArguments::next_weights: an L2 prefetch of the next GEMM's weights as this one ends
// (NextWeights), so HBM keeps streaming weights across a decode chain's kernel boundary.
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/cutlass/sm90_gemm.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif

// Tile widths: CuTe's GMMA selector knows N = 8, 16, 32, 64, 96, 128, 192 and 256 as one instruction;
// any other width (the MLP's swapped 160-token tiles) needs CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED defined
// before CuTe's first inclusion, else CuTe builds it from n32 GMMAs that re-read A from shared memory
// five times per k-step (measured 1.3x slower than the wider 192-token tile, docs/mlp.md). This header
// does not define it: it costs ~30 s of compile time in every CUTLASS translation unit (docs/cutlass.md),
// so only the headers whose kernels need it do (baton/ops/mlp.cuh, baton/ops/attention/attention.cuh).
// GemmConfig static_asserts that a tile is one GMMA instruction wide.

#include <cuda_runtime.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/numeric_types.h>
#include <cutlass/pipeline/pipeline.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "baton/cutlass/sm90_posting_epilogue.cuh"
#include "baton/cutlass/sm90_waiting_mainloop.cuh"
#include "baton/dependency.hpp"
#include "baton/device/flags.hpp"
#include "baton/footprint.hpp"
#include "baton/launch.cuh"
#include "baton/split_k.hpp"
#include "baton/stream_k.hpp"
#include "baton/stage.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::sm90 {

// ---- configuration: the CUTLASS collectives -----------------------------------------------------

// TileShape: (BLK_M, BLK_N, BLK_K); BLK_M >= 128 (cooperative kernel: two MMA warp groups split M).
// FusionOp: the epilogue's elementwise op, a CUTLASS fusion operation without a C source, e.g.
//   cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::GELU, bf16, float, void, float>
// (the hook for the GeLU MLP). Its Arguments are GemmArguments::fusion.
// SwiGluPairs: the B rows (weights) interleave gate and up projections, row 2c = gate_c and row
// 2c + 1 = up_c (pack_swiglu_weights below), so the GEMM computes n = 2F columns and every MMA
// thread holds (gate_c, up_c) in adjacent accumulators. The epilogue then writes
// D[m, c] = SiLU(gate_c) * up_c, a [M, F] tensor, straight from registers (FusionOp is unused).
// In the swapped form (SwiGluPairs with a column-major D) the weights are A: its rows interleave
// gate and up, the GEMM computes m = 2F rows, the pairs are adjacent accumulator rows (lanes 4
// apart in the GMMA fragment, one shuffle per pair) and the epilogue writes D^T [n, m / 2]
// row-major, i.e. the [tokens, F] activations.
// LayoutD: RowMajor (D [m, n] row-major, the default) or ColumnMajor (D's m extent contiguous).
// ClusterN: 1, or 2 for CTA pairs (1 x 2 x 1 clusters): the two CTAs of a cluster compute the
// tiles (m, 2j) and (m, 2j + 1), which read the same rows of A, and each TMA-loads half of A's
// box and multicasts it to both, so A crosses L2 once per pair (at m >= 128 every weight tile
// re-reads all of A: GPT-3 GEMM1 at m = 128 moves more A than weights through L2). The grid of
// tiles is padded to an even number of columns (tile_grid); the tile order walks pairs. Stages
// without inputs only (a waiting consumer would need both CTAs' waits before either loads A), and
// A's box is never shortened (m < tile_m then zero-fills).
// ClusterM: 1, or 2 for band pairs (2 x 1 x 1 clusters): the two CTAs of a cluster compute the tiles
// (2i, j) and (2i + 1, j), which read the same weight tile, and each TMA-loads half of B's box and
// multicasts it to both, so the weights cross L2 once per pair (what cuBLASLt's 2-CTA clusters do
// from M = 128 on: docs/mlp.md, "Band pairs"). The grid's rows of tiles are padded to an even count;
// a CTA whose band lies wholly past m loads no A (its slot's A bytes are completed without a copy),
// skips its GMMAs and stores nothing, but still multicasts its half of B. Stages without edges only.
template <class TileShape_ = cute::Shape<cute::_128, cute::_128, cute::_64>,
          class FusionOp_ = ::cutlass::epilogue::fusion::LinearCombination<::cutlass::bfloat16_t, float, void, float>,
          bool SwiGluPairs_ = false, class LayoutD_ = ::cutlass::layout::RowMajor, int ClusterN_ = 1, int ClusterM_ = 1>
struct GemmConfig {
  using Element = ::cutlass::bfloat16_t;
  using ElementAccumulator = float;
  using TileShape = TileShape_;
  static constexpr int cluster_n = ClusterN_;
  static constexpr int cluster_m = ClusterM_;
  static constexpr int cluster_size = ClusterM_ * ClusterN_;
  static_assert(ClusterN_ == 1 || ClusterN_ == 2, "baton::sm90::GemmConfig: ClusterN must be 1 or 2");
  static_assert(ClusterM_ == 1 || ClusterM_ == 2, "baton::sm90::GemmConfig: ClusterM must be 1 or 2");
  static_assert(cluster_size <= 2, "baton::sm90::GemmConfig: CTA pairs along N or band pairs along M, not both");
  using ClusterShape = cute::Shape<cute::Int<ClusterM_>, cute::Int<ClusterN_>, cute::_1>;
  using FusionOp = FusionOp_;
  using LayoutA = ::cutlass::layout::RowMajor;     // A [M, K]
  using LayoutB = ::cutlass::layout::ColumnMajor;  // B as a K x N column-major matrix == [N, K] row-major
  using LayoutD = LayoutD_;                        // D [M, N], row- or column-major
  static constexpr bool d_column_major = std::is_same_v<LayoutD_, ::cutlass::layout::ColumnMajor>;
  static_assert(d_column_major || std::is_same_v<LayoutD_, ::cutlass::layout::RowMajor>,
                "baton::sm90::GemmConfig: LayoutD must be cutlass::layout::RowMajor or ColumnMajor");
  static_assert(ClusterN_ == 1 || !d_column_major,
                "baton::sm90::GemmConfig: CTA pairs (ClusterN = 2) are for the row-major form (A = activations)");
  static_assert(ClusterM_ == 1 || !d_column_major,
                "baton::sm90::GemmConfig: band pairs (ClusterM = 2) are for the row-major form (B = weights)");
  static constexpr int kAlignment = 8;             // elements: 16 bytes, what TMA needs
  static constexpr int tile_m = int(cute::size<0>(TileShape{}));
  static constexpr int tile_n = int(cute::size<1>(TileShape{}));
  static constexpr int tile_k = int(cute::size<2>(TileShape{}));
  static constexpr bool swiglu_pairs = SwiGluPairs_;
  // SwiGLU pairs along M (the swapped form: the weights are A), not along N.
  static constexpr bool swiglu_rows = swiglu_pairs && d_column_major;
  // Columns of D per tile, and D's width for a GEMM computing n columns (row-major D; a swapped
  // GEMM never posts, so its output footprint is not asked for).
  static constexpr int out_tile_n = swiglu_pairs && !swiglu_rows ? tile_n / 2 : tile_n;
  static constexpr int out_cols(int n) { return swiglu_pairs && !swiglu_rows ? n / 2 : n; }

  using BaseEpilogue = typename ::cutlass::epilogue::collective::CollectiveBuilder<
      ::cutlass::arch::Sm90, ::cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      ::cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
      void, LayoutD, kAlignment,  // no C source: nothing the epilogue reads can come from a stage
      Element, LayoutD, kAlignment, ::cutlass::epilogue::TmaWarpSpecializedCooperative, FusionOp>::CollectiveOp;

  using BaseMainloop = typename ::cutlass::gemm::collective::CollectiveBuilder<
      ::cutlass::arch::Sm90, ::cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlignment, Element, LayoutB,
      kAlignment, ElementAccumulator, TileShape, ClusterShape,
      ::cutlass::gemm::collective::StageCountAutoCarveout<int(sizeof(typename BaseEpilogue::SharedStorage))>,
      ::cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

  using FusionArguments = typename BaseEpilogue::FusionCallbacks::Arguments;
  using ProblemShape = cute::Shape<int, int, int, int>;  // M, N, K, L (L == 1): GemmKernel's problem
  static_assert(int(cute::size<1>(typename BaseMainloop::TiledMma::AtomShape_MNK{})) == tile_n,
                "baton::sm90::GemmConfig: the tile's width is not one GMMA instruction wide: a width other than 8, 16, "
                "32, 64, 96, 128, 192 or 256 needs CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED defined before CuTe's first "
                "inclusion (define it for the whole translation unit, or include baton/ops/mlp.cuh first, which "
                "defines it)");
};

// The weights of the GEMM that runs next, for an L2 prefetch at the end of this one
// (GemmArguments::next_weights). At decode both GEMMs of an MLP stream weights from HBM, and the
// kernel boundary leaves HBM idle while this grid drains and the next one starts; the prefetch
// keeps the stream going across it. After issuing its last load, each CTA's producer warp
// prefetches into L2 (cp.async.bulk.prefetch.L2) the first k_blocks k-blocks of the next GEMM's B
// for that GEMM's tile-parts j = blockIdx.x, blockIdx.x + gridDim.x, ... (tile column j / split_k,
// split-K part j % split_k, its k range as Gemm computes it). A hint only: it reads memory no
// kernel of the chain writes, and it changes no result.
struct NextWeights {
  const void* b = nullptr;  // the next GEMM's B [n, k] row-major, 2-byte elements, 16-byte aligned
  int n = 0, k = 0;         // its extents (k a multiple of 8)
  int tile_n = 0;           // its tile's columns (B rows per tile)
  int tile_k = 64;          // its k-block
  int split_k = 1;          // its split-K parts
  int k_blocks = 0;         // k-blocks prefetched per tile-part, from the part's first (0: off)
  // Bytes the prefetch covers (0 when off).
  constexpr size_t bytes() const {
    if (k_blocks <= 0 || n <= 0 || k <= 0 || tile_n <= 0 || tile_k <= 0 || split_k <= 0) return 0;
    const int k_tiles = (k + tile_k - 1) / tile_k;
    size_t cols = 0;
    for (int part = 0; part < split_k; ++part) {
      const int base = k_tiles / split_k, rem = k_tiles % split_k;
      const int kb0 = part * base + (part < rem ? part : rem), count = base + (part < rem ? 1 : 0);
      const int c0 = kb0 * tile_k, c1 = std::min(k, (kb0 + std::min(count, k_blocks)) * tile_k);
      cols += size_t(c1 > c0 ? c1 - c0 : 0);
    }
    return cols * size_t(n) * 2;
  }
};

// Host arguments of one GEMM.
template <class Config>
struct GemmArguments {
  int m = 0, n = 0, k = 0;
  const ::cutlass::bfloat16_t* a = nullptr;  // [m, k] row-major; may be produced by an earlier stage
  const ::cutlass::bfloat16_t* b = nullptr;  // [n, k] row-major (weights); must exist before the chain starts
  ::cutlass::bfloat16_t* d = nullptr;        // [m, n] row-major ([m, n / 2] with Config::swiglu_pairs);
                                             // column-major: [n, m] row-major ([n, m / 2] with pairs)
  typename Config::FusionArguments fusion{}; // alpha (default 1), beta must stay 0 (no C source)
  // Split-K: each output tile's k-blocks are shared by split_k CTAs that run side by side (for
  // shapes with fewer tiles than SMs, e.g. LLM decode). Each writes its fp32 partial tile to
  // split_workspace; the last to arrive adds them in a fixed order (bit-reproducible), runs the
  // epilogue and publishes the tile. split_workspace: Gemm::split_workspace_bytes(args) bytes,
  // 16-byte aligned, its counters zeroed once before first use (Gemm::clear_split_workspace);
  // they return to zero after every run. 1: no split, no workspace.
  int split_k = 1;
  void* split_workspace = nullptr;
  // Tests only: each tile's loads start after a pseudo-random delay in [0, this] (0: off).
  uint32_t debug_max_tile_delay_ns = 0;
  // Optional: prefetch the next GEMM's weights into L2 as this one ends (NextWeights above).
  NextWeights next_weights{};
  // Persistent CTAs (0: one CTA per tile, the default). > 0: at most this many CTAs (e.g. the SM
  // count), each looping over the positions blockIdx.x, blockIdx.x + gridDim.x, ... of the stage's
  // order; the load warp runs ahead into the next tile while the MMA warp groups store this one, so
  // a tile's pipeline fill hides under the previous tile's epilogue (what CUTLASS's persistent kernel
  // has over one CTA per tile at short k: docs/cutlass.md, "Not done yet"). Stages without edges
  // only, no split-K, no clusters, no batch, no C source; the stage's ticket is not taken (no epoch)
  // and its trace stays empty.
  int persistent_ctas = 0;
  // Stream-K (with persistent_ctas > 0, split_k 1): the k-blocks of all weight blocks shared evenly
  // among groups of CTAs, one CTA of a group per token tile, all of a group on the same k-blocks at
  // once (baton/stream_k.hpp, stream_k_lanes), so that a grid of fewer or not a whole number of waves
  // of tiles keeps every SM busy to the end (T < S tiles on S SMs: each CTA runs T/S of a tile
  // instead of S - T SMs idling through a whole one) and every weight k-block is read from HBM once. A
  // tile shared by several CTAs is finished by the last to arrive, as under split-K: it needs
  // split_workspace of split_workspace_bytes(args) bytes, counters cleared once
  // (clear_split_workspace). Launches stream_k_ctas(args) CTAs: whole groups, at most
  // persistent_ctas, which may be more than the tiles.
  bool stream_k = false;
  // Batched GEMM: `batch` independent products sharing the weights, A [batch, m, k] and D [batch,
  // m, n] packed (batch strides m*k and m*n), B [n, k] read by every batch. The tile grid's z is
  // the batch (tile_grid), so a chain can name (row band, column, sequence) tiles as attention
  // programs do. Plain row-major GEMMs only (no split-K, SwiGLU pairs, swapped form, CTA pairs or
  // next_weights).
  int batch = 1;
};

// The split-K choice for a shape: baton::choose_split_k (baton/split_k.hpp).
using ::baton::choose_split_k;

// The grid of output tiles of an m x n GEMM (the stage's grid): with CTA pairs (ClusterN = 2) the
// columns are padded to an even count (a pair's second tile past n computes nothing it stores);
// a batched GEMM (GemmArguments::batch) has its batches on z.
template <class Config>
constexpr Grid tile_grid(int m, int n, int batch = 1) {
  return Grid{ceil_div(ceil_div(m, Config::tile_m), Config::cluster_m) * Config::cluster_m,
              ceil_div(ceil_div(n, Config::tile_n), Config::cluster_n) * Config::cluster_n, batch};
}

// Where a consumer GEMM's A operand [m, k] lies on the tiles of the producer GEMM that wrote it
// (the producer's n is the consumer's k). Use it with KBlockPolicy (per-k-block waits) or
// RowPolicy / TilePolicy.
template <class ProducerConfig, class ConsumerConfig = ProducerConfig>
constexpr footprint::GemmA gemm_a_footprint(int m, int k) {
  return footprint::GemmA{m, k, ProducerConfig::tile_m, ProducerConfig::out_tile_n, ConsumerConfig::tile_m,
                          ConsumerConfig::tile_k};
}

namespace detail {
// The tests' random per-tile delay (GemmArguments::debug_max_tile_delay_ns and the other kernels'
// equivalents): pseudo-random per (tile, epoch), so every run of a test sees a different interleaving.
CUTLASS_DEVICE void debug_tile_delay(uint32_t max_ns, Assignment const& a) {
  uint32_t h = uint32_t(a.position) * 0x9E3779B1u ^ (a.epoch + 0x7F4A7C15u) * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  const uint64_t delay = uint64_t(h % (max_ns + 1u));
  const uint64_t start = device::global_timer_ns();
  while (device::global_timer_ns() - start < delay) __nanosleep(1000);
}
// Bytes of GemmArguments::split_workspace for args.split_k (0 without split): a 32-bit counter per
// output tile (padded to 256 bytes), then split_k fp32 partial tiles per output tile.
// The counters' part of a split-K workspace for a grid of output tiles (the partials follow it).
constexpr size_t split_counters_bytes(Grid g) { return (size_t(g.size()) * sizeof(uint32_t) + 255) / 256 * 256; }
// The whole workspace: the counters, then split_k fp32 partial tiles of tile_m x tile_n per tile.
constexpr size_t split_workspace_bytes(Grid g, int split_k, int tile_m, int tile_n) {
  if (split_k <= 1) return 0;
  return split_counters_bytes(g) + size_t(g.size()) * size_t(split_k) * size_t(tile_m) * size_t(tile_n) * sizeof(float);
}
// Stream-K's workspace: the counters, then two fp32 partial tiles per CTA (StreamK::slots).
constexpr size_t stream_k_workspace_bytes(Grid g, int ctas, int tile_m, int tile_n) {
  if (ctas <= 0) return 0;
  return split_counters_bytes(g) + size_t(2) * size_t(ctas) * size_t(tile_m) * size_t(tile_n) * sizeof(float);
}
// Zeroes a workspace's counters (stream-ordered) when the kernel uses them (split-K or stream-K).
[[nodiscard]] inline status clear_counters(bool used, void* workspace, Grid g, cudaStream_t stream, const char* what) {
  if (!used) return {};
  if (workspace == nullptr)
    return status(errc::invalid_argument, std::string(what) + " clear_split_workspace: split_workspace is null");
  return cuda_status(cudaMemsetAsync(workspace, 0, split_counters_bytes(g), stream), "cudaMemsetAsync(split-K counters)");
}
// Zeroes a split-K workspace's counters (stream-ordered); `what` names the kernel in errors.
[[nodiscard]] inline status clear_split_counters(int split_k, void* workspace, Grid g, cudaStream_t stream,
                                                 const char* what) {
  return clear_counters(split_k > 1, workspace, g, stream, what);
}
// The launch of a GemmKernel over `tiles` output tiles, split_k CTAs each: sets the kernel's shared
// memory limit (once per call, not per launch) and returns the StageLaunch.
template <class Kernel>
[[nodiscard]] result<StageLaunch> kernel_launch(const typename Kernel::Params& params, int tiles, int split_k,
                                                const char* what);
}  // namespace detail

// Stream-K's lanes (baton/stream_k.hpp): the token tiles per weight block, i.e. the row bands (the
// tile grid's m) of a row-major GEMM and the token tiles (its n) of the swapped form, when that many
// CTAs fit in persistent_ctas; else 1. 1 without stream-K.
template <class Config>
constexpr int stream_k_lanes(const GemmArguments<Config>& args) {
  if (!args.stream_k || args.persistent_ctas <= 0 || args.batch != 1) return 1;
  const Grid g = tile_grid<Config>(args.m, args.n, args.batch);
  return ::baton::stream_k_lanes(Config::d_column_major ? g.n : g.m, args.persistent_ctas);
}

// The CTAs a stream-K GEMM launches (GemmArguments::stream_k; 0 without it): whole groups of
// stream_k_lanes(args) CTAs, at most persistent_ctas.
template <class Config>
constexpr int stream_k_ctas(const GemmArguments<Config>& args) {
  if (!args.stream_k || args.persistent_ctas <= 0) return 0;
  return ::baton::stream_k_ctas(tile_grid<Config>(args.m, args.n, args.batch).size(), ceil_div(args.k, Config::tile_k),
                                args.persistent_ctas, stream_k_lanes(args));
}

// Bytes of GemmArguments::split_workspace: split-K's (split_k > 1) or stream-K's; 0 for neither.
template <class Config>
constexpr size_t split_workspace_bytes(const GemmArguments<Config>& args) {
  if (args.stream_k)
    return detail::stream_k_workspace_bytes(tile_grid<Config>(args.m, args.n), stream_k_ctas(args), Config::tile_m,
                                            Config::tile_n);
  return detail::split_workspace_bytes(tile_grid<Config>(args.m, args.n), args.split_k, Config::tile_m, Config::tile_n);
}

// ---- the kernel --------------------------------------------------------------------------------

// Whether and where a GEMM's load warp waits for the previous grid (griddepcontrol.wait), the third
// template argument of GemmKernel / Gemm:
struct NoGridWait {};           // never: a baton stage (semaphore waits, or no inputs at all)
struct GridWaitBeforeLoads {};  // before its first load of anything (PDL, as CUTLASS does)
struct GridWaitBeforeA {};      // before its first load of A; B (weights) streams into the free slots first
template <class W>
concept GridWait = std::same_as<W, NoGridWait> || std::same_as<W, GridWaitBeforeLoads> ||
                   std::same_as<W, GridWaitBeforeA>;
// The old spellings (docs/naming.md).
namespace grid_wait {
using none [[deprecated("renamed sm90::NoGridWait, docs/naming.md")]] = NoGridWait;
using before_loads [[deprecated("renamed sm90::GridWaitBeforeLoads, docs/naming.md")]] = GridWaitBeforeLoads;
using before_a [[deprecated("renamed sm90::GridWaitBeforeA, docs/naming.md")]] = GridWaitBeforeA;
}  // namespace grid_wait

template <class Config, class StageT, GridWait Wait = NoGridWait>
struct GemmKernel {
  static constexpr bool GridDependencyWait = !std::is_same_v<Wait, NoGridWait>;
  static constexpr bool WeightsFirst = std::is_same_v<Wait, GridWaitBeforeA>;
  using Mainloop = WaitingMainloop<typename Config::BaseMainloop>;
  using Epilogue = PostingEpilogue<typename Config::BaseEpilogue>;
  using TileShape = typename Mainloop::TileShape;
  using TiledMma = typename Mainloop::TiledMma;
  using ClusterShape = typename Mainloop::DispatchPolicy::ClusterShape;
  // (M, N, K, L): four ints for a GEMM; for a convolution (sm90_conv.cuh) CUTLASS's linearized
  // fprop shape (N*P*Q, K, (C, S, R), 1), whose k-blocks walk (channel block, s, r).
  using ProblemShape = typename Config::ProblemShape;
  using MainloopPipeline = typename Mainloop::MainloopPipeline;
  using EpiLoadPipeline = typename Epilogue::LoadPipeline;
  using EpiStorePipeline = typename Epilogue::StorePipeline;

  // A C source (a residual: D = f(acc, C)) is loaded by the producer warp group's third warp, as in
  // CUTLASS's cooperative kernel. Nothing waits for it: C must be written before the chain starts
  // (no stage of the chain may produce it), like the weights.
  static constexpr bool HasSource = !std::is_void_v<typename Epilogue::ElementC>;
  static_assert(!Config::swiglu_rows || StageT::num_outputs == 0,
                "baton::sm90::GemmKernel: the swapped SwiGLU GEMM writes D^T from registers and has no posting form");
  static_assert(!Config::d_column_major || (StageT::num_inputs == 0 && !WeightsFirst),
                "baton::sm90::GemmKernel: in the swapped (column-major D) form the activations are B, which the "
                "load warp issues before its waits (baton waits and GridWaitBeforeA wait before A only)");
  static constexpr int kClusterN = Config::cluster_n;
  static constexpr int kClusterM = Config::cluster_m;
  static constexpr int kClusterSize = Config::cluster_size;
  static_assert(kClusterN == 1 || StageT::num_inputs == 0,
                "baton::sm90::GemmKernel: CTA pairs (ClusterN = 2) multicast A, so both CTAs would have to finish their "
                "waits before either loads it: waiting stages take ClusterN = 1");
  static_assert(kClusterM == 1 || (StageT::num_inputs == 0 && StageT::num_outputs == 0),
                "baton::sm90::GemmKernel: band pairs (ClusterM = 2) are for stages without edges (a padded band's CTA "
                "computes nothing it could post, and one CTA's waits would stall its partner's weights)");
  static_assert(!GridDependencyWait || StageT::num_inputs == 0,
                "baton::sm90::GemmKernel: a grid wait other than NoGridWait is for stages without inputs (a baton "
                "consumer waits on its producer's semaphores; griddepcontrol.wait would serialize it behind the whole "
                "producer grid)");

  static constexpr uint32_t NumMmaThreads = uint32_t(cute::size(TiledMma{}));
  static constexpr uint32_t NumLoadWarpGroups = 1;
  static constexpr uint32_t MaxThreadsPerBlock = NumMmaThreads + NumLoadWarpGroups * ::cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t MinBlocksPerMultiprocessor = 1;
  static_assert(NumMmaThreads == 256, "cooperative schedule: two MMA warp groups");
  // As in CUTLASS's cooperative kernel (64 fp32 accumulators per MMA thread at 128x128).
  static constexpr uint32_t LoadRegisterRequirement = 40;
  static constexpr uint32_t MmaRegisterRequirement = 232;

  struct SharedStorage {
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename Mainloop::PipelineStorage mainloop;
      alignas(16) typename Epilogue::PipelineStorage epi_load;
    } pipelines;
    alignas(16) Assignment assignment;  // the tile, broadcast from the thread that took the ticket
    uint32_t split_part;                // this CTA's part of the tile's k range (split-K)
    uint32_t split_last;                // split-K: this CTA arrived last and finishes the tile
    HorizonWord horizon;                // the sync warp's horizon, read by the load warp (waiting stages)
    struct TensorStorage : cute::aligned_struct<128, cute::_1> {
      typename Epilogue::TensorStorage epilogue;
      typename Mainloop::TensorStorage mainloop;
    } tensors;
  };
  static constexpr int SharedStorageSize = int(sizeof(SharedStorage));
  static_assert(SharedStorageSize <= 232448, "exceeds the 227 KB of shared memory an sm90 CTA may use");

  // Trivially copyable; passed as a __grid_constant__ kernel parameter (the TMA descriptors must
  // stay in parameter space).
  struct Params {
    ProblemShape problem_shape{};
    typename Mainloop::Params mainloop{};
    typename Epilogue::Params epilogue{};
    StageT stage{};
    uint32_t debug_max_tile_delay_ns = 0;
    // Split-K (split_k > 1): per-tile arrival counters and fp32 partial tiles.
    int split_k = 1;
    uint32_t* split_counters = nullptr;
    float* split_partials = nullptr;
    // SwiGLU pairs: D [m, n / 2] written from registers.
    ::cutlass::bfloat16_t* swiglu_d = nullptr;
    NextWeights next_weights{};
    // Ragged row bands (m > tile_m, m % tile_m != 0): the last band's A box, shortened as for decode
    // shapes (Gemm::tail_a_box_). tail_tile_m < 0: none.
    cute::TmaDescriptor tail_a_desc{};
    int tail_tile_m = -1;
    uint32_t tail_a_missing_bytes = 0;
    // The same for B in a swapped GEMM over several token tiles (D column-major, n > tile_n,
    // n % tile_n != 0): the last token tile's B box (Gemm::tail_b_box_). tail_tile_n < 0: none.
    cute::TmaDescriptor tail_b_desc{};
    int tail_tile_n = -1;
    uint32_t tail_b_missing_bytes = 0;
    // GemmArguments::persistent_ctas > 0: every CTA loops over tiles (persistent_ below); with
    // stream_k, over its share of all tiles' k-blocks (split_counters / split_partials its workspace).
    bool persistent = false;
    bool stream_k = false;
    // Stream-K's lanes (baton/stream_k.hpp): the token tiles that run each weight block's k-blocks
    // side by side, one CTA each (stream_k_lanes(args)); 1: the tiles one by one in the stage's order.
    int stream_k_lanes = 1;
  };

  // Whether this kernel has the persistent loop (GemmArguments::persistent_ctas).
  static constexpr bool kCanPersist =
      StageT::num_inputs == 0 && StageT::num_outputs == 0 && kClusterSize == 1 && !HasSource;

  // Partial tile of one CTA: the fp32 accumulators, stored thread-major in float2 pairs so that
  // each warp's stores are contiguous (element pair j of MMA thread t at [j * NumMmaThreads + t]).
  static constexpr int kAccumulators = Config::tile_m * Config::tile_n / int(NumMmaThreads);
  static constexpr size_t kPartialBytes = size_t(Config::tile_m) * Config::tile_n * sizeof(float);

  // The kernel's three pipelines, built by every thread of the CTA (each constructor initializes its
  // barriers from one thread). Roles: `load_producer` for the warp whose TMA loads A and B, `epi_producer`
  // for the warp that loads C (HasSource), `consumer` for the MMA warp groups; a thread with none keeps
  // the default role. The epilogue load pipeline is unused without a source, but store() takes it.
  struct Pipelines {
    MainloopPipeline mainloop;
    EpiLoadPipeline epi_load;
    EpiStorePipeline epi_store;
  };
  CUTLASS_DEVICE static Pipelines make_pipelines_(SharedStorage& shared_storage, Params const& params, bool load_producer,
                                                  bool epi_producer, bool consumer, int warp_group_thread_idx) {
    typename MainloopPipeline::Params mainloop_params;
    if (load_producer) mainloop_params.role = MainloopPipeline::ThreadCategory::Producer;
    if (consumer) mainloop_params.role = MainloopPipeline::ThreadCategory::Consumer;
    mainloop_params.is_leader = warp_group_thread_idx == 0;
    mainloop_params.num_consumers = NumMmaThreads;
    mainloop_params.transaction_bytes = params.mainloop.tma_transaction_bytes;
    typename EpiLoadPipeline::Params epi_load_params;
    if (epi_producer) epi_load_params.role = EpiLoadPipeline::ThreadCategory::Producer;
    if (consumer) epi_load_params.role = EpiLoadPipeline::ThreadCategory::Consumer;
    epi_load_params.dst_blockid = cute::block_rank_in_cluster();
    epi_load_params.producer_arv_count = ::cutlass::NumThreadsPerWarp;
    epi_load_params.consumer_arv_count = NumMmaThreads;
    if constexpr (Epilogue::RequiresTransactionBytes)
      epi_load_params.transaction_bytes = params.epilogue.tma_transaction_bytes;
    typename EpiStorePipeline::Params epi_store_params;
    epi_store_params.always_wait = true;
    // The pipeline's cluster shape is the one the kernel is launched with: CTA and band pairs are
    // clusters of 2 x 1 x 1 consecutive blockIdx.x (make_launch), while the collectives of CTA pairs
    // are built for 1 x 2 x 1 (A multicast along N). PipelineTmaAsync decides which CTAs' empty
    // barriers a consumer arrives on from %cluster_ctaid and this shape; given 1 x 2 x 1 the second CTA
    // of a pair (cluster_ctaid.x = 1) would skip its own barrier and both would wait forever
    // (docs/cutlass.md, "CTA pairs"). Either way both CTAs of a pair arrive on both CTAs' barriers.
    return Pipelines{MainloopPipeline(shared_storage.pipelines.mainloop, mainloop_params,
                                      cute::Shape<cute::Int<kClusterSize>, cute::_1, cute::_1>{}),
                     EpiLoadPipeline(shared_storage.pipelines.epi_load, epi_load_params),
                     EpiStorePipeline(epi_store_params)};
  }

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) const {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();  // GMMA/TMA need sm_90a; compiled for another architecture
#else
    if constexpr (kCanPersist) {
      if (params.persistent) {
        persistent_(params, smem_buf);
        return;
      }
    }
    using namespace cute;
    enum class WarpGroupRole { Producer = 0, Consumer0 = 1, Consumer1 = 2 };
    enum class ProducerWarpRole { Mainloop = 0, Warp1 = 1, Epilogue = 2, Warp3 = 3 };

    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    StageT const& stage = params.stage;

    // PDL: the next stage's CTAs may be scheduled once every CTA of this grid runs. They wait on
    // per-tile semaphores (never on griddepcontrol.wait, except the GridDependencyWait baseline,
    // which has no semaphores), so they cannot starve this grid.
    if (stage.trigger_dependents) device::launch_dependents();

    const int thread_idx = int(threadIdx.x);
    const int warp_idx = ::cutlass::canonical_warp_idx_sync();
    const int warp_idx_in_warp_group = warp_idx % ::cutlass::NumWarpsPerWarpGroup;
    const int warp_group_thread_idx = thread_idx % ::cutlass::NumThreadsPerWarpGroup;
    const int mma_thread_idx = thread_idx % int(NumMmaThreads);
    const auto warp_group_role = WarpGroupRole(::cutlass::canonical_warp_group_idx());
    const auto producer_warp_role = ProducerWarpRole(warp_idx_in_warp_group);
    const int lane_predicate = cute::elect_one_sync();

    if (warp_idx == 0 && lane_predicate) {
      Mainloop::prefetch_tma_descriptors(params.mainloop);
      Epilogue::prefetch_tma_descriptors(params.epilogue);
      if (params.tail_tile_m >= 0) cute::prefetch_tma_descriptor(&params.tail_a_desc);
      if (params.tail_tile_n >= 0) cute::prefetch_tma_descriptor(&params.tail_b_desc);
      // The tile comes from the stage's ticket (the stage's order), not from blockIdx; with
      // split-K, split_k consecutive tickets share a tile. CTA pairs take theirs from the cluster
      // index instead (both CTAs must agree, and a stage without inputs needs no ticket).
      uint32_t part = 0;
      if constexpr (kClusterSize > 1) shared_storage.assignment = pair_assignment_(stage, uint32_t(params.split_k), &part);
      else shared_storage.assignment = stage.acquire_tile_leader(uint32_t(params.split_k), &part);
      shared_storage.split_part = part;
      shared_storage.horizon = HorizonWord{};
    }

    const bool mma_warp_group = warp_group_role == WarpGroupRole::Consumer0 || warp_group_role == WarpGroupRole::Consumer1;
    auto [mainloop_pipeline, epi_load_pipeline, epi_store_pipeline] = make_pipelines_(
        shared_storage, params,
        warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Mainloop,
        HasSource && warp_group_role == WarpGroupRole::Producer && producer_warp_role == ProducerWarpRole::Epilogue,
        mma_warp_group, warp_group_thread_idx);

    typename Mainloop::PipelineState mainloop_pipe_consumer_state;
    typename Epilogue::LoadPipelineState epi_load_pipe_consumer_state;
    auto mainloop_pipe_producer_state = ::cutlass::make_producer_start_state<MainloopPipeline>();
    auto epi_store_pipe_producer_state = ::cutlass::make_producer_start_state<EpiStorePipeline>();

    const ProblemShape problem_shape_MNKL = params.problem_shape;
    TiledMma tiled_mma;
    const auto blk_shape = TileShape{};
    Mainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);  // (BLK_M,BLK_K,m,k,l)

    // Pipeline barriers initialized, and the assignment written, before any role reads them; with
    // CTA pairs, before the other CTA multicasts into this one's shared memory or arrives on its
    // barriers.
    __syncthreads();
    if constexpr (kClusterSize > 1) cute::cluster_sync();
    const Assignment assignment = shared_storage.assignment;
    const auto blk_coord = make_coord(assignment.tile.m, assignment.tile.n, _, assignment.tile.z);
    // This CTA's k-blocks: all of them, or its part of a split (parts differ by at most one).
    const int k_tiles_total = int(size<3>(gA_mkl));
    const int split_part = int(shared_storage.split_part);
    const int k_base = k_tiles_total / params.split_k, k_rem = k_tiles_total % params.split_k;
    const int k_begin = split_part * k_base + (split_part < k_rem ? split_part : k_rem);
    const int k_tile_count = k_base + (split_part < k_rem ? 1 : 0);
    auto k_tile_iter = cute::make_coord_iterator(idx2crd(k_begin, shape<3>(gA_mkl)), shape<3>(gA_mkl));

    if (warp_group_role == WarpGroupRole::Producer) {
      ::cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      if (producer_warp_role == ProducerWarpRole::Mainloop) {
        if (params.debug_max_tile_delay_ns != 0) detail::debug_tile_delay(params.debug_max_tile_delay_ns, assignment);
        // The last band of a ragged M loads A through its shortened box (rows past it are never stored).
        // A band pair's padded band (wholly past m) loads no A at all.
        const ABox a_box = [&] {
          if constexpr (kClusterM > 1)
            if (assignment.tile.m * Config::tile_m >= int(get<0>(problem_shape_MNKL)))
              return ABox{nullptr, params.mainloop.tma_transaction_bytes_mk, /*skip=*/true};
          return assignment.tile.m == params.tail_tile_m ? ABox{&params.tail_a_desc, params.tail_a_missing_bytes} : ABox{};
        }();
        // The last token tile of a swapped GEMM loads B through its shortened box the same way.
        const BBox b_box = assignment.tile.n == params.tail_tile_n
                               ? BBox{&params.tail_b_desc, params.tail_b_missing_bytes}
                               : BBox{};
        if constexpr (StageT::num_inputs > 0) {
          HorizonWaits waiter{&shared_storage.horizon.ready};
          collective_mainloop.load(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                   blk_coord, k_tile_iter, k_tile_count, shared_storage.tensors.mainloop,
                                   shared_storage.pipelines.mainloop, waiter, a_box, b_box);
        } else if constexpr (GridDependencyWait && WeightsFirst) {
          // PDL: A may be written by the previous grid. B streams into the free slots, then
          // griddepcontrol.wait (the previous grid complete, its writes visible) before A(0).
          GridDependencyWaits waiter;
          collective_mainloop.load(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                   blk_coord, k_tile_iter, k_tile_count, shared_storage.tensors.mainloop,
                                   shared_storage.pipelines.mainloop, waiter, a_box, b_box);
        } else {
          // PDL as CUTLASS does it: the previous grid complete before any load.
          if constexpr (GridDependencyWait) device::grid_dependency_wait();
          NoInputWaits waiter;
          collective_mainloop.load(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                   blk_coord, k_tile_iter, k_tile_count, shared_storage.tensors.mainloop,
                                   shared_storage.pipelines.mainloop, waiter, a_box, b_box);
        }
        __syncwarp();
        if (params.next_weights.k_blocks > 0) prefetch_next_weights_(params.next_weights, int(threadIdx.x % 32));
        mainloop_pipe_producer_state.advance(k_tile_count);
        collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);
      } else if (producer_warp_role == ProducerWarpRole::Warp1) {
        // The sync warp: every semaphore wait of the tile, published as a horizon the load warp
        // compares k-blocks with (baton/horizon.hpp).
        if constexpr (StageT::num_inputs > 0)
          run_sync_lanes<1>(HorizonTile<StageT>{&stage, assignment, k_begin, k_tile_count}, &shared_storage.horizon,
                            int(threadIdx.x % 32));
      } else if (producer_warp_role == ProducerWarpRole::Epilogue) {
        if constexpr (HasSource) load_source_(params, epi_load_pipeline, blk_coord, shared_storage);
      }
    } else if (warp_group_role == WarpGroupRole::Consumer0 || warp_group_role == WarpGroupRole::Consumer1) {
      ::cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
      Epilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));  // (MMA,MMA_M,MMA_N)
      // Decode shapes: each MMA warp group computes one 64-row half of the tile. A warp group whose
      // half lies entirely past m (m - tile row <= 64 for the upper half) only consumes the
      // pipeline (wait, release) and skips its GMMAs: half the tensor-core work per k-block. Its
      // accumulators stay zero; rows >= m are never stored. The half's first row comes from the
      // accumulator coordinates (uniform over the warp group: its rows are one aligned 64-row block).
      const int half_row0 = int(get<0>(accumulator_coords_(tiled_mma, mma_thread_idx, accumulators)(0))) /
                            (Config::tile_m / 2) * (Config::tile_m / 2);
      const bool idle_half =
          int(get<0>(problem_shape_MNKL)) - assignment.tile.m * Config::tile_m <= half_row0;
      if (idle_half) {
        cute::clear(accumulators);
        for (int k = 0; k < k_tile_count; ++k) {
          mainloop_pipeline.consumer_wait(mainloop_pipe_consumer_state);
          mainloop_pipeline.consumer_release(mainloop_pipe_consumer_state);
          ++mainloop_pipe_consumer_state;
        }
      } else {
        collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tile_count,
                                mma_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
        collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tile_count);
      }
      // Split-K: every part but the last to arrive leaves after writing its partial tile.
      if (params.split_k > 1) {
        const bool last = split_reduce_(params, accumulators, tiled_mma, assignment, split_part, mma_thread_idx, shared_storage);
        // The source loader waits for this decision: only the last part runs the epilogue.
        if constexpr (HasSource)
          ::cutlass::arch::NamedBarrier::arrive(NumMmaThreads + ::cutlass::NumThreadsPerWarp, kSplitDecidedBarrier);
        if (!last) return;
      }
      if constexpr (Config::swiglu_pairs) {
        swiglu_store_and_post_(params, accumulators, tiled_mma, assignment, mma_thread_idx);
      } else {
        auto [epi_load_state_next, epi_store_state_next] = collective_epilogue.store(
            epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
            problem_shape_MNKL, blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx,
            shared_storage.tensors.epilogue);
        collective_epilogue.store_tail_and_post(epi_load_pipeline, epi_load_state_next, epi_store_pipeline,
                                                epi_store_state_next, mma_thread_idx, int(NumMmaThreads), stage,
                                                assignment);
      }
    }
#endif
  }

 private:
  // This CTA's work in the persistent loop, one segment (a tile, or a run of its k-blocks) at a
  // time: the positions blockIdx.x + j * gridDim.x of the stage's order, whole; or under stream-K
  // its share of every tile's k-blocks (baton/stream_k.hpp). The load warp and the MMA warp groups
  // walk the same sequence.
  struct PersistentWork {
    StreamKWalk walk;
    bool stream_k;
    int position, tiles;
    CUTLASS_DEVICE PersistentWork(Params const& params, int tiles_, int k_blocks)
        : walk(stream_k_of_(params, tiles_, k_blocks), int(blockIdx.x)),
          stream_k(params.stream_k),
          position(int(blockIdx.x)),
          tiles(tiles_) {}
    CUTLASS_DEVICE bool next(StreamKSegment& seg) {
      if (stream_k) return walk.next(seg);
      if (position >= tiles) return false;
      seg = StreamKSegment{position, 0, walk.sk.k_blocks, 0, 1};
      position += int(gridDim.x);
      return true;
    }
  };
  // The launch's stream-K partition: gridDim.x CTAs in groups of params.stream_k_lanes.
  CUTLASS_DEVICE static StreamK stream_k_of_(Params const& params, int tiles, int k_blocks) {
    const int lanes = params.stream_k_lanes;
    return StreamK{int64_t(tiles / lanes) * k_blocks, k_blocks, int(gridDim.x) / lanes, lanes};
  }
  // The tile at a segment's position: with lanes, lane l of weight block b is the tile of token tile
  // l in that block (StreamK::position: b * lanes + l, which is also the grid's row-major index);
  // otherwise the position in the stage's order.
  CUTLASS_DEVICE static Tile persistent_tile_(Params const& params, int position) {
    const int lanes = params.stream_k_lanes;
    if (params.stream_k && lanes > 1) {
      const int b = position / lanes, l = position % lanes;
      return Config::d_column_major ? Tile{b, l, 0} : Tile{l, b, 0};
    }
    return params.stage.order(params.stage.grid, position);
  }

  // The persistent loop (GemmArguments::persistent_ctas; kCanPersist stages only): the roles of
  // operator() without waits, tickets or split-K, over this CTA's segments (PersistentWork). The
  // pipeline states run on across tiles, as in CUTLASS's persistent cooperative kernel: the load
  // warp fills the slots the MMA warp groups free while they store the previous tile, and the
  // epilogue's store pipeline orders each tile's shared-memory reuse after the previous tile's TMA
  // stores have read it; its tail runs once, after the last tile. Under stream-K a segment that is
  // part of a tile ends in stream_k_reduce_: the last of the tile's CTAs to arrive runs its epilogue.
  CUTLASS_DEVICE void persistent_(Params const& params, char* smem_buf) const {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if constexpr (kCanPersist) {
      using namespace cute;
      enum class WarpGroupRole { Producer = 0, Consumer0 = 1, Consumer1 = 2 };
      SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);
      StageT const& stage = params.stage;
      if (stage.trigger_dependents) device::launch_dependents();

      const int thread_idx = int(threadIdx.x);
      const int warp_idx = ::cutlass::canonical_warp_idx_sync();
      const int warp_idx_in_warp_group = warp_idx % ::cutlass::NumWarpsPerWarpGroup;
      const int warp_group_thread_idx = thread_idx % ::cutlass::NumThreadsPerWarpGroup;
      const int mma_thread_idx = thread_idx % int(NumMmaThreads);
      const auto warp_group_role = WarpGroupRole(::cutlass::canonical_warp_group_idx());
      const int lane_predicate = cute::elect_one_sync();
      if (warp_idx == 0 && lane_predicate) {
        Mainloop::prefetch_tma_descriptors(params.mainloop);
        Epilogue::prefetch_tma_descriptors(params.epilogue);
        if (params.tail_tile_m >= 0) cute::prefetch_tma_descriptor(&params.tail_a_desc);
        if (params.tail_tile_n >= 0) cute::prefetch_tma_descriptor(&params.tail_b_desc);
      }
      const bool load_warp = warp_group_role == WarpGroupRole::Producer && warp_idx_in_warp_group == 0;
      const bool mma_warp = warp_group_role != WarpGroupRole::Producer;

      // As in operator(), with no source (kCanPersist) and no cluster.
      auto [mainloop_pipeline, epi_load_pipeline, epi_store_pipeline] =
          make_pipelines_(shared_storage, params, load_warp, false, mma_warp, warp_group_thread_idx);

      typename Mainloop::PipelineState mainloop_pipe_consumer_state;
      typename Epilogue::LoadPipelineState epi_load_pipe_consumer_state;
      auto mainloop_pipe_producer_state = ::cutlass::make_producer_start_state<MainloopPipeline>();
      auto epi_store_pipe_producer_state = ::cutlass::make_producer_start_state<EpiStorePipeline>();

      const ProblemShape problem_shape_MNKL = params.problem_shape;
      TiledMma tiled_mma;
      const auto blk_shape = TileShape{};
      Mainloop collective_mainloop;
      auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
      Tensor gA_mkl = get<0>(load_inputs);  // (BLK_M,BLK_K,m,k,l)
      const int k_tiles_total = int(size<3>(gA_mkl));
      const int tiles = int(stage.grid.size());
      __syncthreads();  // pipeline barriers initialized before any role uses them

      if (warp_group_role == WarpGroupRole::Producer) {
        ::cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
        if (load_warp) {
          if constexpr (GridDependencyWait && !WeightsFirst) device::grid_dependency_wait();
          StreamKSegment seg;
          for (PersistentWork work(params, tiles, k_tiles_total); work.next(seg);) {
            const Tile t = persistent_tile_(params, seg.position);
            const auto blk_coord = make_coord(t.m, t.n, _, t.z);
            const int k_tile_count = seg.k_count;
            auto k_tile_iter = cute::make_coord_iterator(idx2crd(seg.k_begin, shape<3>(gA_mkl)), shape<3>(gA_mkl));
            const ABox a_box = t.m == params.tail_tile_m ? ABox{&params.tail_a_desc, params.tail_a_missing_bytes} : ABox{};
            const BBox b_box = t.n == params.tail_tile_n ? BBox{&params.tail_b_desc, params.tail_b_missing_bytes} : BBox{};
            if constexpr (GridDependencyWait && WeightsFirst) {
              GridDependencyWaits waiter;  // griddepcontrol.wait before A(0); a no-op once the grid is done
              collective_mainloop.load(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                       blk_coord, k_tile_iter, k_tile_count, shared_storage.tensors.mainloop,
                                       shared_storage.pipelines.mainloop, waiter, a_box, b_box);
            } else {
              NoInputWaits waiter;
              collective_mainloop.load(params.mainloop, mainloop_pipeline, mainloop_pipe_producer_state, load_inputs,
                                       blk_coord, k_tile_iter, k_tile_count, shared_storage.tensors.mainloop,
                                       shared_storage.pipelines.mainloop, waiter, a_box, b_box);
            }
            mainloop_pipe_producer_state.advance(k_tile_count);
          }
          __syncwarp();
          if (params.next_weights.k_blocks > 0) prefetch_next_weights_(params.next_weights, int(threadIdx.x % 32));
          collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);
        }
      } else {
        ::cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
        Epilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
        StreamKSegment seg;
        for (PersistentWork work(params, tiles, k_tiles_total); work.next(seg);) {
          const Tile t = persistent_tile_(params, seg.position);
          const auto blk_coord = make_coord(t.m, t.n, _, t.z);
          const int k_tile_count = seg.k_count;
          auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
          // As in operator(): a warp group whose 64-row half lies past m only frees the slots.
          const int half_row0 = int(get<0>(accumulator_coords_(tiled_mma, mma_thread_idx, accumulators)(0))) /
                                (Config::tile_m / 2) * (Config::tile_m / 2);
          if (int(get<0>(problem_shape_MNKL)) - t.m * Config::tile_m <= half_row0) {
            cute::clear(accumulators);
            for (int k = 0; k < k_tile_count; ++k) {
              mainloop_pipeline.consumer_wait(mainloop_pipe_consumer_state);
              mainloop_pipeline.consumer_release(mainloop_pipe_consumer_state);
              ++mainloop_pipe_consumer_state;
            }
          } else {
            collective_mainloop.mma(mainloop_pipeline, mainloop_pipe_consumer_state, accumulators, k_tile_count,
                                    mma_thread_idx, shared_storage.tensors.mainloop, params.mainloop);
            collective_mainloop.mma_tail(mainloop_pipeline, mainloop_pipe_consumer_state, k_tile_count);
            mainloop_pipe_consumer_state.advance(k_tile_count);
          }
          // Stream-K: a part of a tile; only the last of its CTAs to arrive goes on to the epilogue.
          if (seg.parts > 1 && !stream_k_reduce_(params, accumulators, tiled_mma, t, seg, k_tiles_total, mma_thread_idx,
                                                   shared_storage))
            continue;
          if constexpr (Config::swiglu_pairs) {
            Assignment a{};
            a.tile = t;
            a.position = seg.position;
            swiglu_store_and_post_(params, accumulators, tiled_mma, a, mma_thread_idx);
          } else {
            auto [epi_load_next, epi_store_next] = collective_epilogue.store(
                epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline, epi_store_pipe_producer_state,
                problem_shape_MNKL, blk_shape, blk_coord, accumulators, tiled_mma, mma_thread_idx,
                shared_storage.tensors.epilogue);
            epi_load_pipe_consumer_state = epi_load_next;
            epi_store_pipe_producer_state = epi_store_next;
          }
        }
        if constexpr (!Config::swiglu_pairs)
          collective_epilogue.store_tail(epi_load_pipeline, epi_load_pipe_consumer_state, epi_store_pipeline,
                                         epi_store_pipe_producer_state);
      }
    }
#else
    (void)params, (void)smem_buf;
#endif
  }

  // CTA and band pairs: cluster c = blockIdx.x / 2 takes position c / split_k of the stage's order
  // over the grid of pairs (its part of the k range: c % split_k); its CTAs compute the tiles
  // (m, 2j + rank) (CTA pairs) or (2i + rank, n) (band pairs). Clusters are consecutive blockIdx.x
  // (cluster dims 2 x 1 x 1).
  CUTLASS_DEVICE static Assignment pair_assignment_(StageT const& stage, uint32_t split_k, uint32_t* part) {
    const uint32_t parts = split_k == 0 ? 1u : split_k;
    const uint32_t rank = blockIdx.x % uint32_t(kClusterSize), cluster = blockIdx.x / uint32_t(kClusterSize);
    const Grid pairs{stage.grid.m / kClusterM, stage.grid.n / kClusterN, stage.grid.z};
    Assignment a;
    const int pair_position = int(cluster / parts);
    *part = cluster % parts;
    const Tile t = stage.order(pairs, pair_position);
    a.tile = kClusterM > 1 ? Tile{t.m * kClusterM + int(rank), t.n, t.z} : Tile{t.m, t.n * kClusterN + int(rank), t.z};
    a.position = pair_position * kClusterSize + int(rank);
    a.epoch = 0;
    if (stage.trace) a.start_ns = device::global_timer_ns();
    return a;
  }

  // Named barrier (user id) between the MMA threads and the source-loading warp under split-K.
  static constexpr uint32_t kSplitDecidedBarrier = 0;

  // The epilogue's C source for this CTA's tile, by the producer warp group's third warp (CUTLASS's
  // cooperative kernel does the same). Under split-K only the part that arrives last runs the
  // epilogue, so the loads wait until split_reduce_ has decided (loads nobody consumes would leave
  // load_tail waiting forever).
  template <class EpiLoadPipelineT, class BlkCoord>
  CUTLASS_DEVICE static void load_source_(Params const& params, EpiLoadPipelineT& pipeline, BlkCoord const& blk_coord,
                                          SharedStorage& shared_storage) {
    Epilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
    if (!collective_epilogue.is_producer_load_needed()) return;
    if (params.split_k > 1) {
      ::cutlass::arch::NamedBarrier::sync(NumMmaThreads + ::cutlass::NumThreadsPerWarp, kSplitDecidedBarrier);
      if (shared_storage.split_last == 0) return;
    }
    auto state = ::cutlass::make_producer_start_state<EpiLoadPipelineT>();
    state = collective_epilogue.load(pipeline, state, params.problem_shape, TileShape{}, blk_coord, TiledMma{},
                                     int(threadIdx.x % ::cutlass::NumThreadsPerWarp), shared_storage.tensors.epilogue);
    collective_epilogue.load_tail(pipeline, state);
  }

  // The (row, column) inside the tile of each accumulator of this MMA thread.
  template <class Accumulators>
  CUTLASS_DEVICE static auto accumulator_coords_(TiledMma const& tiled_mma, int mma_thread_idx, Accumulators const&) {
    using namespace cute;
    Tensor cD = make_identity_tensor(take<0, 2>(TileShape{}));  // (BLK_M,BLK_N) -> (m,n)
    return tiled_mma.get_thread_slice(mma_thread_idx).partition_C(cD);
  }

  // Split-K reduction, by the 256 MMA threads after their mainloop. Accumulator pairs (2j, 2j+1)
  // are adjacent columns of one row (the GMMA C fragment), so rows past m are skipped per pair.
  //   1. store this part's partial tile (plain stores);
  //   2. MMA-thread barrier; thread 0: atom.acq_rel.gpu.add on the tile's counter. Release
  //      publishes the CTA's partial (ordered before it by the barrier); acquire makes every
  //      earlier part's partial visible. The last part resets the counter (everyone has arrived);
  //   3. barrier; the last part sums parts 0..split_k-1 in that order, all read back through L2
  //      with ld.global.cg (its own too: the thread reads what it stored), into its accumulators.
  //      Returns true for it.
  template <class Accumulators>
  CUTLASS_DEVICE static bool split_reduce_(Params const& params, Accumulators& acc, TiledMma const& tiled_mma,
                                           Assignment const& a, int part, int mma_thread_idx,
                                           SharedStorage& shared_storage) {
    const int tile = params.stage.grid.linear(a.tile);
    const int parts = params.split_k;
    return reduce_parts_(params, acc, tiled_mma, a.tile, params.split_counters + tile, part, parts,
                         [&](int p) { return size_t(tile) * size_t(parts) + size_t(p); }, mma_thread_idx,
                         shared_storage);
  }
  // Stream-K: the same over the CTAs sharing the tile at seg.position (counter per position; part
  // p's partial in the slot of CTA StreamK::cta_of_part, StreamK::slot).
  template <class Accumulators>
  CUTLASS_DEVICE static bool stream_k_reduce_(Params const& params, Accumulators& acc, TiledMma const& tiled_mma,
                                              Tile const& t, StreamKSegment const& seg, int k_blocks,
                                              int mma_thread_idx, SharedStorage& shared_storage) {
    const StreamK sk = stream_k_of_(params, int(params.stage.grid.size()), k_blocks);
    return reduce_parts_(params, acc, tiled_mma, t, params.split_counters + seg.position, seg.part, seg.parts,
                         [&](int p) { return size_t(sk.slot(sk.cta_of_part(seg.position, p), seg.position)); },
                         mma_thread_idx, shared_storage);
  }
  // `parts` CTAs' partials of tile t, part `part` this CTA's, counted on `counter`; slot_of(p) is
  // part p's partial tile in split_partials.
  template <class Accumulators, class SlotOf>
  CUTLASS_DEVICE static bool reduce_parts_(Params const& params, Accumulators& acc, TiledMma const& tiled_mma,
                                           Tile const& t, uint32_t* counter, int part, int parts, SlotOf const& slot_of,
                                           int mma_thread_idx, SharedStorage& shared_storage) {
    using namespace cute;
    static_assert(int(size(Accumulators{})) == kAccumulators, "unexpected accumulator fragment");
    auto coords = accumulator_coords_(tiled_mma, mma_thread_idx, acc);
    const int rows = int(get<0>(params.problem_shape)) - t.m * Config::tile_m;
    auto partial = [&](int p) {
      return reinterpret_cast<float2*>(params.split_partials) +
             slot_of(p) * size_t(kAccumulators / 2) * NumMmaThreads + mma_thread_idx;
    };
    float2* mine = partial(part);
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < kAccumulators / 2; ++j)
      if (get<0>(coords(2 * j)) < rows) mine[size_t(j) * NumMmaThreads] = make_float2(acc(2 * j), acc(2 * j + 1));
    ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    if (mma_thread_idx == 0) {
      const uint32_t arrived = device::fetch_add_acq_rel_gpu(counter, 1u) + 1u;
      const bool last = arrived == uint32_t(parts);
      if (last) device::store_relaxed_gpu(counter, 0u);  // every part has arrived: nobody else touches it
      shared_storage.split_last = last ? 1u : 0u;
    }
    ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    if (shared_storage.split_last == 0) return false;
    // Part by part (a fixed order), each part's loads issued back to back: the reduction costs
    // split_k L2 round trips, not one per accumulator pair. The sum is built in the accumulators
    // themselves (this part's own partial is re-read from L2 like the others): a second array of
    // kAccumulators floats would spill at 128x256 tiles (128 accumulators per thread).
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kAccumulators; ++i) acc(i) = 0.f;
    for (int p = 0; p < parts; ++p) {
      const float2* src = partial(p);
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kAccumulators / 2; ++j) {
        const float2 v = get<0>(coords(2 * j)) < rows ? __ldcg(src + size_t(j) * NumMmaThreads) : make_float2(0.f, 0.f);
        acc(2 * j) += v.x;
        acc(2 * j + 1) += v.y;
      }
    }
    return true;
  }

  // SwiGLU epilogue: D[m, c] = SiLU(gate) * up with (gate, up) = accumulators (2j, 2j+1) at tile
  // columns (2c', 2c' + 1). Plain stores from registers, then the MMA-thread barrier orders them
  // before thread 0's release (generic proxy on both sides of the semaphore; the consumer's TMA
  // reads fence after their acquire).
  template <class Accumulators>
  CUTLASS_DEVICE static void swiglu_store_and_post_(Params const& params, Accumulators const& acc,
                                                    TiledMma const& tiled_mma, Assignment const& a,
                                                    int mma_thread_idx) {
    using namespace cute;
    auto coords = accumulator_coords_(tiled_mma, mma_thread_idx, acc);
    const int m = int(get<0>(params.problem_shape)), n = int(get<1>(params.problem_shape));
    const int row0 = a.tile.m * Config::tile_m, col0 = a.tile.n * Config::tile_n;
    auto silu_times = [](float g, float u) { return g / (1.0f + __expf(-g)) * u; };
    if constexpr (Config::swiglu_rows) {
      // Swapped: rows (2c, 2c + 1) = (gate_c, up_c) of the tokens in columns (t, t + 1) of the pair
      // (2j, 2j + 1). Tile rows r and r + 1 sit in lanes 4 apart (the GMMA C fragment gives lane l
      // rows l / 4 and l / 4 + 8 of its warp's 16), with the same columns at the same index. One
      // shuffle per pair: the even-row thread sends its gate of token t + 1 and gets the up of
      // token t; the odd-row thread the reverse. Each then writes one value: D^T[t][c] (even) and
      // D^T[t + 1][c] (odd), D^T = [n, m / 2] row-major. Every lane shuffles (the bounds come after).
      // The value shuffled is a copy made by an add (x + 0, which only turns -0 into +0): a shfl whose
      // source is an accumulator register makes ptxas serialize every wgmma of the kernel ("C7514:
      // wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator
      // registers"), the mainloop's included. A plain read, as the other epilogues make, does not.
      const int ld = m / 2;
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kAccumulators / 2; ++j) {
        const int r = row0 + int(get<0>(coords(2 * j)));
        const int t = col0 + int(get<1>(coords(2 * j)));
        const bool odd = (r & 1) != 0;
        const float mine_g_or_u = __fadd_rn(odd ? acc(2 * j) : acc(2 * j + 1), 0.0f);  // what the partner needs
        const float other = __shfl_xor_sync(0xffffffffu, mine_g_or_u, 4);
        const float g = odd ? other : acc(2 * j), u = odd ? acc(2 * j + 1) : other;
        const int token = odd ? t + 1 : t;
        if (r < m && token < n)
          params.swiglu_d[size_t(token) * size_t(ld) + size_t(r / 2)] = ::cutlass::bfloat16_t(silu_times(g, u));
      }
    } else {
      const int ld = n / 2;
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kAccumulators / 2; ++j) {
        const int r = row0 + int(get<0>(coords(2 * j)));
        const int c = col0 + int(get<1>(coords(2 * j)));
        if (r < m && c < n)
          params.swiglu_d[size_t(r) * size_t(ld) + size_t(c / 2)] = ::cutlass::bfloat16_t(silu_times(acc(2 * j), acc(2 * j + 1)));
      }
    }
    StageT const& stage = params.stage;
    if constexpr (StageT::num_outputs > 0) {
      ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
      if (mma_thread_idx == 0 &&
          !(stage.error != nullptr && device::load_relaxed_gpu(&stage.error->code) != 0))
        stage.post_leader(a);
    } else if (stage.trace != nullptr) {
      ::cutlass::arch::NamedBarrier::sync(NumMmaThreads, ::cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
      if (mma_thread_idx == 0) stage.record_end_leader(a);
    }
  }

  // NextWeights: this CTA's share of the next GEMM's B, one cp.async.bulk.prefetch.L2 per row of a
  // tile-part's first k-blocks, the 32 lanes of the producer warp taking rows in turn.
  CUTLASS_DEVICE static void prefetch_next_weights_(NextWeights const& nw, int lane) {
    const int tiles_n = (nw.n + nw.tile_n - 1) / nw.tile_n;
    const int k_tiles = (nw.k + nw.tile_k - 1) / nw.tile_k;
    const int parts = tiles_n * nw.split_k;
    const int k_base = k_tiles / nw.split_k, k_rem = k_tiles % nw.split_k;
    for (int j = int(blockIdx.x); j < parts; j += int(gridDim.x)) {
      const int tn = j / nw.split_k, part = j % nw.split_k;
      const int kb0 = part * k_base + (part < k_rem ? part : k_rem);
      const int count = k_base + (part < k_rem ? 1 : 0);
      const int c0 = kb0 * nw.tile_k, c1 = min(nw.k, (kb0 + min(count, nw.k_blocks)) * nw.tile_k);
      if (c1 <= c0) continue;
      const uint32_t bytes = uint32_t(c1 - c0) * 2u;  // k % 8 == 0 and c0 % 64 == 0: a multiple of 16
      const int r1 = min(nw.n, (tn + 1) * nw.tile_n);
      for (int r = tn * nw.tile_n + lane; r < r1; r += 32) {
        const char* p = static_cast<const char*>(nw.b) + (size_t(r) * size_t(nw.k) + size_t(c0)) * 2;
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
      }
    }
  }

};

template <class Kernel>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerMultiprocessor)
    gemm_kernel(const __grid_constant__ typename Kernel::Params params) {
  extern __shared__ char smem[];
  Kernel{}(params, smem);
}

template <class Kernel>
[[nodiscard]] result<StageLaunch> detail::kernel_launch(const typename Kernel::Params& params, int tiles, int split_k,
                                                        const char* what) {
  auto* kernel = &gemm_kernel<Kernel>;
  constexpr size_t smem = size_t(Kernel::SharedStorageSize);
  BATON_TRY(cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
                        std::string("cudaFuncSetAttribute(") + what + ", MaxDynamicSharedMemorySize)"));
  auto l = baton::make_launch(kernel, dim3(unsigned(tiles * split_k)), dim3(Kernel::MaxThreadsPerBlock), smem, params);
  l.ctas_per_tile = split_k;
  return l;
}

// ---- host side ----------------------------------------------------------------------------------

namespace detail {
template <class P>
concept has_gemm_a_footprint = requires(P const& p) {
  { p.footprint } -> std::convertible_to<footprint::GemmA>;
};
}  // namespace detail

template <class Config, class StageT, GridWait Wait = NoGridWait>
class Gemm {
 public:
  using Kernel = GemmKernel<Config, StageT, Wait>;
  using Params = typename Kernel::Params;
  using Arguments = GemmArguments<Config>;
  static constexpr size_t smem_bytes = size_t(Kernel::SharedStorageSize);
  static constexpr unsigned threads = Kernel::MaxThreadsPerBlock;

  // Shapes, pointers and alignment that this kernel supports.
  [[nodiscard]] static status can_implement(const Arguments& args) {
    const std::string dims = "m=" + std::to_string(args.m) + " n=" + std::to_string(args.n) + " k=" + std::to_string(args.k);
    if (args.m < 1 || args.n < 1 || args.k < 1 || args.batch < 1)
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": every extent (and batch) must be >= 1");
    if (args.batch > 1 && (args.split_k > 1 || Config::swiglu_pairs || Config::d_column_major || Config::cluster_size > 1 ||
                           args.next_weights.k_blocks != 0))
      return status(errc::not_supported, "sm90 GEMM " + dims + " batch=" + std::to_string(args.batch) +
                                             ": a batched GEMM is a plain row-major one (no split-K, SwiGLU pairs, "
                                             "swapped form, CTA pairs or next_weights)");
    if (int64_t(args.batch) * args.m * (args.k > args.n ? args.k : args.n) >= (int64_t(1) << 31))
      return status(errc::not_supported, "sm90 GEMM " + dims + " batch=" + std::to_string(args.batch) +
                                             ": A or D has 2^31 elements or more (32-bit extents)");
    if (args.a == nullptr || args.b == nullptr || args.d == nullptr)
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": a, b and d must be non-null");
    // TMA needs 16-byte strides: A and B are K-major (k), D's leading extent is n (row-major) or m.
    const int d_lead = Config::d_column_major ? args.m : args.n;
    if (args.k % Config::kAlignment != 0 || d_lead % Config::kAlignment != 0)
      return status(errc::not_supported, "sm90 GEMM " + dims + ": k and " + (Config::d_column_major ? "m" : "n") +
                                             " must be multiples of " + std::to_string(Config::kAlignment) +
                                             " (TMA needs 16-byte row strides); pad the tensors");
    if (Config::swiglu_rows && args.m % 2 != 0)
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": the swapped SwiGLU GEMM needs an even m (gate and "
                                                                  "up rows interleaved: m = 2F)");
    auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (misaligned(args.a) || misaligned(args.b) || misaligned(args.d))
      return status(errc::not_supported, "sm90 GEMM " + dims + ": a, b and d must be 16-byte aligned (TMA)");
    if (args.split_k < 1 || args.split_k > ceil_div(args.k, Config::tile_k))
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": split_k=" + std::to_string(args.split_k) +
                                                " must be in [1, " + std::to_string(ceil_div(args.k, Config::tile_k)) +
                                                "] (the number of " + std::to_string(Config::tile_k) +
                                                "-wide k-blocks)");
    if (const NextWeights& nw = args.next_weights; nw.k_blocks != 0) {
      const std::string what = "sm90 GEMM " + dims + ": next_weights (L2 prefetch of the next GEMM's B, n=" +
                               std::to_string(nw.n) + " k=" + std::to_string(nw.k) + ")";
      if (nw.k_blocks < 0 || nw.b == nullptr || misaligned(nw.b))
        return status(errc::invalid_argument, what + ": k_blocks must be >= 0 and b non-null and 16-byte aligned");
      if (nw.n < 1 || nw.k < 1 || nw.k % 8 != 0 || nw.tile_n < 1 || nw.tile_k < 8 || nw.tile_k % 8 != 0)
        return status(errc::invalid_argument, what + ": needs n, k >= 1, k a multiple of 8, tile_n >= 1 and "
                                                     "tile_k a multiple of 8");
      if (nw.split_k < 1 || nw.split_k > ceil_div(nw.k, nw.tile_k))
        return status(errc::invalid_argument, what + ": split_k=" + std::to_string(nw.split_k) + " must be in [1, " +
                                                  std::to_string(ceil_div(nw.k, nw.tile_k)) + "]");
    }
    if (args.split_k > 1 && (args.split_workspace == nullptr || misaligned(args.split_workspace)))
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": split_k=" + std::to_string(args.split_k) +
                                                " needs a 16-byte aligned split_workspace of split_workspace_bytes() = " +
                                                std::to_string(split_workspace_bytes(args)) + " bytes");
    if (args.stream_k && (args.persistent_ctas <= 0 || args.split_k > 1))
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": stream_k shares k-blocks among persistent CTAs: "
                                                                  "it needs persistent_ctas > 0 and split_k = 1 (got " +
                                                std::to_string(args.persistent_ctas) + ", " +
                                                std::to_string(args.split_k) + ")");
    if (args.stream_k && (args.split_workspace == nullptr || misaligned(args.split_workspace)))
      return status(errc::invalid_argument, "sm90 GEMM " + dims +
                                                ": stream_k needs a 16-byte aligned split_workspace of "
                                                "split_workspace_bytes() = " +
                                                std::to_string(split_workspace_bytes(args)) + " bytes");
    if (args.persistent_ctas < 0)
      return status(errc::invalid_argument, "sm90 GEMM " + dims + ": persistent_ctas must be >= 0 (0: one CTA per tile)");
    if (args.persistent_ctas > 0 && (!Kernel::kCanPersist || args.split_k > 1 || args.batch > 1))
      return status(errc::not_supported, "sm90 GEMM " + dims + ": persistent CTAs (persistent_ctas=" +
                                             std::to_string(args.persistent_ctas) +
                                             ") are for stages without edges, without split-K, clusters, batch or a "
                                             "C source");
    const auto shape = problem_shape_(args);
    if (!Kernel::Mainloop::can_implement(shape, mainloop_args_(args)) ||
        !Kernel::Epilogue::can_implement(shape, epilogue_args_(args)))
      return status(errc::not_supported, "sm90 GEMM " + dims + ": rejected by the CUTLASS collectives "
                                                               "(alignment, or beta != 0 without a C source)");
    return {};
  }

  // Validates the arguments against the stage and builds the kernel parameters (TMA descriptors).
  [[nodiscard]] static result<Params> to_params(const StageT& stage, const Arguments& args) {
    BATON_TRY(can_implement(args));
    const Grid want = tile_grid<Config>(args.m, args.n, args.batch);
    if (!(stage.grid == want))
      return status(errc::invalid_argument, "sm90 GEMM: the stage's grid " + to_string(stage.grid) + " is not the " +
                                                to_string(want) + " tiles of " + std::to_string(Config::tile_m) + "x" +
                                                std::to_string(Config::tile_n) + " this GEMM computes");
    if (stage.ticket == nullptr) return status(errc::invalid_argument, "sm90 GEMM: the stage has no ticket counter (bind it)");
    BATON_TRY(check_inputs_(stage, args, std::make_integer_sequence<int, StageT::num_inputs>{}));
    BATON_TRY(check_outputs_(stage, args, std::make_integer_sequence<int, StageT::num_outputs>{}));
    const auto shape = problem_shape_(args);
    Params p{};
    p.problem_shape = shape;
    p.mainloop = Kernel::Mainloop::to_underlying_arguments(shape, mainloop_args_(args), nullptr);
    p.epilogue = Kernel::Epilogue::to_underlying_arguments(shape, epilogue_args_(args), nullptr);
    p.stage = stage;
    p.debug_max_tile_delay_ns = args.debug_max_tile_delay_ns;
    p.next_weights = args.next_weights;
    p.split_k = args.split_k;
    p.persistent = args.persistent_ctas > 0;
    p.stream_k = args.stream_k;
    p.stream_k_lanes = stream_k_lanes(args);
    if (p.persistent && stage.trace != nullptr)
      return status(errc::not_supported, "sm90 GEMM: persistent CTAs record no per-tile trace (unset the stage's trace)");
    if (args.split_k > 1 || args.stream_k) {
      auto* base = static_cast<unsigned char*>(args.split_workspace);
      p.split_counters = reinterpret_cast<uint32_t*>(base);
      p.split_partials = reinterpret_cast<float*>(base + detail::split_counters_bytes(stage.grid));
    }
    if constexpr (Config::swiglu_pairs) p.swiglu_d = args.d;
    shorten_a_box_(p, args);
    tail_a_box_(p, args);
    shorten_b_box_(p, args);
    tail_b_box_(p, args);
    return p;
  }

  // Bytes of split_workspace for args.split_k or args.stream_k (0 for neither): a counter per
  // tile, then split_k fp32 partial tiles per tile (split-K) or two per CTA (stream-K).
  [[nodiscard]] static size_t split_workspace_bytes(const Arguments& args) {
    return ::baton::sm90::split_workspace_bytes<Config>(args);
  }
  // Zeroes the split-K / stream-K counters (stream-ordered). Once, before the workspace's first
  // use; a completed run leaves them at zero.
  [[nodiscard]] static status clear_split_workspace(const Arguments& args, cudaStream_t stream) {
    return detail::clear_counters(args.split_k > 1 || args.stream_k, args.split_workspace,
                                  tile_grid<Config>(args.m, args.n), stream, "sm90 GEMM");
  }

  // A launch for baton::launch_chain: one CTA per output tile, 384 threads, smem_bytes of
  // dynamic shared memory. Sets the kernel's shared-memory limit (once per call, not per launch).
  [[nodiscard]] static result<StageLaunch> make_launch(const StageT& stage, const Arguments& args) {
    auto params = to_params(stage, args);
    if (!params.ok()) return params.error();
    auto launched = detail::kernel_launch<Kernel>(params.value(), stage.grid.size(), args.split_k, "sm90 GEMM");
    if (!launched.ok()) return launched.error();
    StageLaunch l = std::move(launched.value());
    if (args.persistent_ctas > 0) {
      l.grid = dim3(unsigned(args.stream_k ? int64_t(stream_k_ctas(args))
                                           : std::min<int64_t>(stage.grid.size(), args.persistent_ctas)));
      l.loops_over_tiles = true;
      // Stream-K may run more CTAs than tiles (each at least one k-block).
      if (args.stream_k) l.max_ctas = int64_t(stage.grid.size()) * ceil_div(args.k, Config::tile_k);
    }
    if constexpr (Config::cluster_size > 1) {
      auto* kernel = &gemm_kernel<Kernel>;
      // CTA and band pairs: the cluster dimension joins whatever attributes launch_chain passes (PDL).
      const Params kp = params.value();
      l.launch = [kernel, kp](const cudaLaunchConfig_t& cfg) {
        cudaLaunchAttribute attrs[8];
        unsigned n = 0;
        for (unsigned i = 0; i < cfg.numAttrs && n < 7; ++i) attrs[n++] = cfg.attrs[i];
        attrs[n].id = cudaLaunchAttributeClusterDimension;
        attrs[n].val.clusterDim.x = unsigned(Config::cluster_size);
        attrs[n].val.clusterDim.y = 1;
        attrs[n].val.clusterDim.z = 1;
        ++n;
        cudaLaunchConfig_t c = cfg;
        c.attrs = attrs;
        c.numAttrs = n;
        return cudaLaunchKernelEx(&c, kernel, kp);
      };
    }
    return l;
  }

 private:
  // Decode shapes (m < tile_m): the CUTLASS A descriptor loads a tile_m-row box, so TMA zero-fills
  // up to 127 out-of-bounds rows per k-block, which costs more than the rows it replaces (measured in
  // docs/cutlass.md, "Decode shapes"). For m < tile_m the A descriptor is re-encoded with the
  // smallest box of 8, 16, 32, 64, 80, 96 or 112 rows that covers m: the same coordinates and
  // shared-memory destination (the 128B swizzle atom is 8 rows, so the box's rows land where the full
  // box would put them), fewer bytes; the pipeline's expected transaction bytes shrink to match.
  // Rows past the box keep stale shared memory; they only feed accumulator rows >= m, which are
  // never stored. Also for 64 < m < tile_m, in boxes of 80, 96 or 112 rows: with the full box the
  // MLP at m = 65 measured slower than at m = 128 (the zero fill of 63 rows per k-block costs more
  // than the rows it replaces).
  static void shorten_a_box_(Params& p, const Arguments& args) {
    if (args.m >= Config::tile_m) return;
    const int rows = a_box_rows_(args.m);
    if (rows == 0) return;
    p.mainloop.tma_load_a.tma_desc_ = a_desc_(args, rows);
    p.mainloop.tma_transaction_bytes_mk = uint32_t(rows * Config::tile_k * sizeof(typename Config::Element));
    p.mainloop.tma_transaction_bytes = p.mainloop.tma_transaction_bytes_mk + p.mainloop.tma_transaction_bytes_nk;
  }
  // The same for the last band of a ragged M (m > tile_m, r = m % tile_m rows in its band): M = 129
  // would otherwise zero-fill 127 rows of A per k-block in every tile of its second band. Its tiles
  // load A through a second descriptor with the short box; the pipeline still arms each slot for the
  // full box (one transaction count for every tile), and the load thread takes the missing bytes off
  // with mbarrier.complete_tx before it issues the short load (WaitingMainloop::load, ABox).
  static void tail_a_box_(Params& p, const Arguments& args) {
    const int r = args.m % Config::tile_m;
    if (args.m <= Config::tile_m || r == 0) return;
    const int rows = a_box_rows_(r);
    if (rows == 0) return;
    p.tail_a_desc = a_desc_(args, rows);
    p.tail_tile_m = args.m / Config::tile_m;
    p.tail_a_missing_bytes = uint32_t((Config::tile_m - rows) * Config::tile_k * sizeof(typename Config::Element));
  }
  // The box (rows) for r < tile_m rows of A, 0 for the full box (no shorter box covers r, or the
  // kernel multicasts A to a CTA pair, whose halves are fixed).
  static int a_box_rows_(int r) {
    if constexpr (Config::tile_m <= 64 || Config::cluster_n > 1) {
      return 0;
    } else {
      for (int rows : {8, 16, 32, 64, 80, 96, 112})
        if (r <= rows && rows < Config::tile_m && (rows <= 64 || Config::tile_m == 128)) return rows;
      return 0;
    }
  }
  static cute::TmaDescriptor a_desc_(const Arguments& args, int rows) {
    switch (rows) {
      case 8: return a_desc_of_<8>(args);
      case 16: return a_desc_of_<16>(args);
      case 32: return a_desc_of_<32>(args);
      case 64: return a_desc_of_<64>(args);
      case 80: return a_desc_of_<80>(args);
      case 96: return a_desc_of_<96>(args);
      default: return a_desc_of_<112>(args);
    }
  }
  template <int Rows>
  static cute::TmaDescriptor a_desc_of_(const Arguments& args) {
    using namespace cute;
    if constexpr (Rows >= Config::tile_m) {
      return {};  // never asked for (a_box_rows_ returns boxes below tile_m only)
    } else {
      using Mainloop = typename Kernel::Mainloop;
      using StrideA = typename Mainloop::StrideA;
      auto tensor_a = make_tensor(args.a, make_layout(make_shape(args.m, args.k, args.batch),
                                                      ::cutlass::make_cute_packed_stride(StrideA{}, make_shape(args.m, args.k, args.batch))));
      auto smem_a = tile_to_shape(typename Mainloop::SmemLayoutAtomA{}, make_shape(Int<Rows>{}, Int<Config::tile_k>{}));
      auto tma = make_tma_copy_A_sm90(typename Mainloop::GmemTiledCopyA{}, tensor_a, smem_a,
                                      Shape<Int<Rows>, Int<Config::tile_n>, Int<Config::tile_k>>{},
                                      typename Config::ClusterShape{});
      return tma.tma_desc_;
    }
  }

  // The swapped decode form (D column-major: B holds the tokens): B's box shortened the same way
  // when n < tile_n (8 or 16 rows of a 32-row tile, ...). Rows past the box feed only accumulator
  // columns >= n, which are never stored.
  // Boxes of 8, 16, 32 rows, then every multiple of 16 up to 208 (the 128B swizzle atom is 8 rows;
  // each box is one host-side descriptor encoding, no kernel code): TMA's zero fill of the rows
  // between r and the box costs about 10% of the chain at 31 rows (m = 289: 160 + 129 tokens with
  // 128- and 160-row boxes, docs/mlp.md), so the box leaves at most 15.
  static void shorten_b_box_(Params& p, const Arguments& args) {
    if constexpr (Config::d_column_major) {
      if (args.n >= Config::tile_n) return;
      const int rows = b_box_rows_(args.n);
      if (rows == 0) return;
      p.mainloop.tma_load_b.tma_desc_ = b_desc_(args, rows);
      p.mainloop.tma_transaction_bytes_nk = uint32_t(rows * Config::tile_k * sizeof(typename Config::Element));
      p.mainloop.tma_transaction_bytes = p.mainloop.tma_transaction_bytes_mk + p.mainloop.tma_transaction_bytes_nk;
    }
  }
  // The last token tile of a swapped GEMM over several (n > tile_n, r = n % tile_n tokens in it)
  // loads B through a second descriptor with the shortest box covering r, as tail_a_box_ does for
  // A: with the full box TMA zero-fills the tile_n - r missing rows at every k-block, which costs
  // more than the rows it replaces (the chain got slower as M fell on the same grid: docs/mlp.md,
  // "Swapped GEMMs over several token tiles").
  static void tail_b_box_(Params& p, const Arguments& args) {
    if constexpr (Config::d_column_major) {
      const int r = args.n % Config::tile_n;
      if (args.n <= Config::tile_n || r == 0) return;
      const int rows = b_box_rows_(r);
      if (rows == 0) return;
      p.tail_b_desc = b_desc_(args, rows);
      p.tail_tile_n = args.n / Config::tile_n;
      p.tail_b_missing_bytes = uint32_t((Config::tile_n - rows) * Config::tile_k * sizeof(typename Config::Element));
    }
  }
  // The box (rows) for r < tile_n tokens of B, 0 for the full box (no shorter box covers r).
  static constexpr int kBBoxCount = 14;
  static constexpr int kBBoxRows[kBBoxCount] = {8, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208};
  static int b_box_rows_(int r) {
    for (int rows : kBBoxRows)
      if (r <= rows && rows < Config::tile_n) return rows;
    return 0;
  }
  static cute::TmaDescriptor b_desc_(const Arguments& args, int rows) {
    return b_desc_dispatch_(args, rows, std::make_index_sequence<kBBoxCount>{});
  }
  template <size_t... I>
  static cute::TmaDescriptor b_desc_dispatch_(const Arguments& args, int rows, std::index_sequence<I...>) {
    cute::TmaDescriptor d{};
    ((rows == kBBoxRows[I] ? (d = b_desc_of_<kBBoxRows[I]>(args), true) : false) || ...);
    return d;
  }
  template <int Rows>
  static cute::TmaDescriptor b_desc_of_(const Arguments& args) {
    if constexpr (Rows >= Config::tile_n) {
      return {};  // never asked for (b_box_rows_ returns boxes below tile_n only)
    } else {
      using namespace cute;
      using Mainloop = typename Kernel::Mainloop;
      using StrideB = typename Mainloop::StrideB;
      auto tensor_b = make_tensor(args.b, make_layout(make_shape(args.n, args.k, 1),
                                                      ::cutlass::make_cute_packed_stride(StrideB{}, make_shape(args.n, args.k, 1))));
      auto smem_b = tile_to_shape(typename Mainloop::SmemLayoutAtomB{}, make_shape(Int<Rows>{}, Int<Config::tile_k>{}));
      auto tma = make_tma_copy_B_sm90(typename Mainloop::GmemTiledCopyB{}, tensor_b, smem_b,
                                      Shape<Int<Config::tile_m>, Int<Rows>, Int<Config::tile_k>>{},
                                      typename Config::ClusterShape{});
      return tma.tma_desc_;
    }
  }

  static typename Kernel::ProblemShape problem_shape_(const Arguments& args) {
    return typename Kernel::ProblemShape{args.m, args.n, args.k, args.batch};
  }
  static typename Kernel::Mainloop::Arguments mainloop_args_(const Arguments& args) {
    using StrideA = typename Kernel::Mainloop::StrideA;
    using StrideB = typename Kernel::Mainloop::StrideB;
    // The weights are shared by every batch: the load warp reads B at batch 0 only
    // (WaitingMainloop::load). B's descriptor is given the packed batch stride n*k so that TMA
    // accepts it (rather than 0: every tensor map takes a nonzero stride);
    // no load ever uses a batch past 0.
    return {args.a, ::cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(args.m, args.k, args.batch)), args.b,
            ::cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(args.n, args.k, args.batch))};
  }
  static typename Kernel::Epilogue::Arguments epilogue_args_(const Arguments& args) {
    using StrideC = typename Kernel::Epilogue::StrideC;
    using StrideD = typename Kernel::Epilogue::StrideD;
    return {args.fusion, nullptr, ::cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(args.m, args.n, args.batch)),
            args.d, ::cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(args.m, args.n, args.batch))};
  }

  // Every input policy must walk A in this GEMM's k-blocks: the waits for k-block k are made just
  // before A's columns [k*tile_k, (k+1)*tile_k) are loaded.
  template <int... I>
  static status check_inputs_(const StageT& stage, const Arguments& args, std::integer_sequence<int, I...>) {
    status s;
    ((s.ok() ? (void)(s = check_input_<I>(stage, args)) : (void)0), ...);
    return s;
  }
  template <int I>
  static status check_input_(const StageT& stage, const Arguments& args) {
    const auto& policy = baton::detail::get<I>(stage.in).policy;
    const std::string what = "sm90 GEMM input " + std::to_string(I) + ": ";
    const int k_tiles = ceil_div(args.k, Config::tile_k);
    if (policy.k_blocks() > k_tiles)
      return status(errc::invalid_policy, what + "the policy has " + std::to_string(policy.k_blocks()) +
                                              " k-blocks but the GEMM walks " + std::to_string(k_tiles) +
                                              " (waits past the last k-block would never be made)");
    if constexpr (detail::has_gemm_a_footprint<std::remove_cvref_t<decltype(policy)>>) {
      const footprint::GemmA& f = policy.footprint;
      if (f.cons_tile_m != Config::tile_m || f.cons_tile_k != Config::tile_k || f.rows != args.m || f.cols != args.k)
        return status(errc::invalid_policy,
                      what + "GemmA footprint (rows " + std::to_string(f.rows) + ", cols " + std::to_string(f.cols) +
                          ", consumer tile " + std::to_string(f.cons_tile_m) + "x k-block " +
                          std::to_string(f.cons_tile_k) + ") does not describe this GEMM's A [" +
                          std::to_string(args.m) + ", " + std::to_string(args.k) + "] in " +
                          std::to_string(Config::tile_m) + "-row tiles and " + std::to_string(Config::tile_k) +
                          "-wide k-blocks (use gemm_a_footprint)");
    }
    return {};
  }
  template <int... I>
  static status check_outputs_(const StageT& stage, const Arguments& args, std::integer_sequence<int, I...>) {
    status s;
    ((s.ok() ? (void)(s = check_output_<I>(stage, args)) : (void)0), ...);
    return s;
  }
  template <int I>
  static status check_output_(const StageT& stage, const Arguments& args) {
    const auto& policy = baton::detail::get<I>(stage.out).policy;
    const std::string what = "sm90 GEMM output " + std::to_string(I) + ": ";
    if (!(policy.producer_grid() == stage.grid))
      return status(errc::invalid_policy, what + "the policy's producer grid " + to_string(policy.producer_grid()) +
                                              " is not this GEMM's tile grid " + to_string(stage.grid));
    if constexpr (detail::has_gemm_a_footprint<std::remove_cvref_t<decltype(policy)>>) {
      const footprint::GemmA& f = policy.footprint;
      const int d_cols = Config::out_cols(args.n);
      if (f.prod_tile_m != Config::tile_m || f.prod_tile_n != Config::out_tile_n || f.rows != args.m || f.cols != d_cols)
        return status(errc::invalid_policy,
                      what + "GemmA footprint (rows " + std::to_string(f.rows) + ", cols " + std::to_string(f.cols) +
                          ", producer tile " + std::to_string(f.prod_tile_m) + "x" + std::to_string(f.prod_tile_n) +
                          ") does not describe this GEMM's D [" + std::to_string(args.m) + ", " +
                          std::to_string(d_cols) + "] in " + std::to_string(Config::tile_m) + "x" +
                          std::to_string(Config::out_tile_n) + " tiles (use gemm_a_footprint)");
    }
    return {};
  }
};

}  // namespace baton::sm90
