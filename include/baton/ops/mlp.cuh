// baton/ops/mlp.cuh — a transformer MLP as one baton chain of two sm90 GEMMs (needs CUTLASS 4.2 on
// the include path: link baton::cutlass).
//
//   GeLU   (GPT-3):  Y = GeLU(X W1^T)               W1 [F, H]
//   SwiGLU (LLaMA):  Y = SiLU(X Wg^T) * (X Wu^T)    W1 [2F, H] = sm90::pack_swiglu_weights(Wg, Wu)
//   then             Z = Y W2^T                     W2 [H, F];  X [M, H], Y [M, F], Z [M, H], all bf16
//
//   using Mlp = baton::ops::Mlp<baton::ops::Activation::swiglu>;
//   auto mlp = Mlp::create({.m = 16, .hidden = 8192, .ffn = 2752, .act = baton::ops::Activation::swiglu},
//                          {x, w1_packed, w2, y, z}, stream);      // plans, proves, binds; logs its choice
//   if (!mlp.ok()) return mlp.error();                               // bad shape, alignment, ... as a status
//   BATON_TRY(mlp.value()->enqueue(stream));                         // one forward pass (graph-capturable)
//   BATON_TRY(mlp.value()->check_errors(stream));                    // watchdog reports, if any
//
// create(): plan_mlp (baton/ops/mlp.hpp) picks the policy (row, kblock or none), the split-K and
// the tile width (128x128, or 128x96 / 128x192 / 128x256 for a GEMM without edges) of each GEMM; the chain
// is validated, which runs the soundness checker on the chosen policy, before anything is bound or
// launched; the plan's log line is printed (MlpRunOptions::log) and kept
// (plan().log_line()).
//
// Kernels: the GEMM instantiations, a type satisfying mlp_kernels::MlpKernelSet. The default
// (mlp_kernels::Inline<Act>) instantiates them in the including translation unit: the GEMM1 kernels of
// one activation and every GEMM2 kernel of kernels/mlp/kernels.cmake's tables, the optional forms
// included (up: plain, kblock, row, 128x96, 128x96 pairs, 128x192, 128x256, band pairs,
// swapped with 32 (GeLU only), 144, 160, 176, 192, 208 and 224 tokens per tile; down: the same, the swapped ones plain
// and PDL-waiting, and PDL-waiting ones of every width),
// ~1 min and ~3 GB of compiler memory each. baton::ops::CompiledMlp<Act> (baton/ops/mlp_compiled.cuh)
// links them from the library baton::mlp_kernels instead, compiled once; the library has the
// forms the plan never picks itself (CTA pairs, 32-token swapped tiles: MlpKernelForms in
// baton/ops/mlp.hpp) only when baton is configured with
// -DBATON_MLP_EXTRA_KERNELS=ON, and the op refuses a request for them otherwise.
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/ops/mlp.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif

// The op's swapped 160-token tiles need CuTe's every-GMMA-width selector, defined before CuTe's first
// inclusion (baton/cutlass/sm90_gemm.cuh says why it does not define it itself). The kernel library's
// translation units of the other widths define BATON_STANDARD_MMA_SHAPES_ONLY instead
// (cmake/BatonKernelTable.cmake): the selector costs each ~30 s of compile time.
#if !defined(CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED) && !defined(BATON_STANDARD_MMA_SHAPES_ONLY)
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/chain.hpp"
#include "baton/cutlass/sm90_gemm.cuh"
#include "baton/cutlass/swiglu.cuh"
#include "baton/dependency.hpp"
#include "baton/launch.cuh"
#include "baton/ops/mlp.hpp"
#include "baton/ops/op_support.cuh"
#include "baton/ops/mlp_policies.hpp"
#include "baton/ops/tuner.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"

namespace baton::ops {

namespace mlp_kernels {
using bf16 = ::cutlass::bfloat16_t;
// The op's GEMM configurations for a tile of 128 rows x N computed columns x 64-deep k-blocks:
// GEMM1 with the GeLU epilogue or as SwiGLU pairs, GEMM2 plain. N = 128 everywhere; N = 96 / 160 /
// 192 / 224 / 256 (GemmForm::tile of plan_mlp's plain forms) for GEMMs without edges.
template <int N>
using TileN = cute::Shape<cute::_128, cute::Int<N>, cute::_64>;
using GeluFusion =
    ::cutlass::epilogue::fusion::LinCombEltAct<::cutlass::epilogue::thread::GELU, bf16, float, void, float>;
// GEMM2's epilogue (and the SwiGLU pairs', whose pair step is the kernel's): D = bf16(acc). A name of
// its own, so that a configuration naming it does not instantiate another (a width of CuTe's extended
// GMMA shapes must not be instantiated in a unit without them).
using DownFusion = ::cutlass::epilogue::fusion::LinearCombination<bf16, float, void, float>;
template <int N, int ClusterN = 1, int ClusterM = 1>
using DownConfigN = sm90::GemmConfig<TileN<N>, DownFusion, false, ::cutlass::layout::RowMajor, ClusterN, ClusterM>;
template <Activation A, int N, int ClusterN = 1, int ClusterM = 1>
using UpConfigN = std::conditional_t<
    A == Activation::gelu,
    sm90::GemmConfig<TileN<N>, GeluFusion, false, ::cutlass::layout::RowMajor, ClusterN, ClusterM>,
    sm90::GemmConfig<TileN<N>, DownFusion, /*SwiGluPairs=*/true, ::cutlass::layout::RowMajor,
                     ClusterN, ClusterM>>;

using Tile = TileN<kMlpTileN>;
using GeluConfig = UpConfigN<Activation::gelu, kMlpTileN>;
using SwiGluConfig = UpConfigN<Activation::swiglu, kMlpTileN>;
using DownConfig = DownConfigN<kMlpTileN>;
template <Activation A>
using UpConfig = UpConfigN<A, kMlpTileN>;
using MidGeluConfig = UpConfigN<Activation::gelu, kMlpMidTileN>;
using MidSwiGluConfig = UpConfigN<Activation::swiglu, kMlpMidTileN>;
using MidDownConfig = DownConfigN<kMlpMidTileN>;
template <Activation A>
using MidUpConfig = UpConfigN<A, kMlpMidTileN>;
using NarrowGeluConfig = UpConfigN<Activation::gelu, kMlpNarrowTileN>;
using NarrowSwiGluConfig = UpConfigN<Activation::swiglu, kMlpNarrowTileN>;
using NarrowDownConfig = DownConfigN<kMlpNarrowTileN>;
template <Activation A>
using NarrowUpConfig = UpConfigN<A, kMlpNarrowTileN>;
// 128x96 tiles as CTA pairs (GemmFormRequest::cta_pairs): 1x2 clusters multicasting A.
using PairGeluConfig = UpConfigN<Activation::gelu, kMlpNarrowTileN, 2>;
using PairSwiGluConfig = UpConfigN<Activation::swiglu, kMlpNarrowTileN, 2>;
using PairDownConfig = DownConfigN<kMlpNarrowTileN, 2>;
template <Activation A>
using PairUpConfig = UpConfigN<A, kMlpNarrowTileN, 2>;
// 128x192 tiles as band pairs (GemmFormRequest::band_pairs): 2x1 clusters multicasting the weights.
template <Activation A>
using BandUpConfig = UpConfigN<A, kMlpMidTileN, 1, 2>;
using BandDownConfig = DownConfigN<kMlpMidTileN, 1, 2>;
using WideGeluConfig = UpConfigN<Activation::gelu, kMlpWideTileN>;
using WideSwiGluConfig = UpConfigN<Activation::swiglu, kMlpWideTileN>;
using WideDownConfig = DownConfigN<kMlpWideTileN>;
template <Activation A>
using WideUpConfig = UpConfigN<A, kMlpWideTileN>;
// The plain widths of CuTe's extended GMMA shapes (W in kMlpExtendedTileWidths: 160, 224).
template <Activation A, int W>
using PlainUpConfigT = UpConfigN<A, W>;
template <int W>
using PlainDownConfigT = DownConfigN<W>;
// The swapped GEMMs (GemmOperands::swapped) in tiles of 128 weight rows x T tokens,
// D column-major (D^T row-major: the [tokens, features] activation): GEMM2 as W2 [H, F] x Y^T,
// GEMM1 as W1 x X^T with the GeLU epilogue or as SwiGLU pairs (W1's packed gate/up rows).
// T = kMlpSwapTileN (decode), or one of kMlpSwapWideTiles (144-224: batches that one or two such tiles
// cover, and 176 / 208 past 448 tokens).
template <int T>
using SwapTile = cute::Shape<cute::_128, cute::Int<T>, cute::_64>;
template <int T>
using SwapDownConfigT = sm90::GemmConfig<SwapTile<T>, typename DownConfig::FusionOp, false, ::cutlass::layout::ColumnMajor>;
template <Activation A, int T>
using SwapUpConfigT = std::conditional_t<
    A == Activation::gelu, sm90::GemmConfig<SwapTile<T>, GeluFusion, false, ::cutlass::layout::ColumnMajor>,
    sm90::GemmConfig<SwapTile<T>, typename DownConfig::FusionOp, /*SwiGluPairs=*/true, ::cutlass::layout::ColumnMajor>>;
using SwapDownConfig = SwapDownConfigT<kMlpSwapTileN>;
using SwapGeluConfig = SwapUpConfigT<Activation::gelu, kMlpSwapTileN>;
static_assert(GeluConfig::tile_m == kMlpTileM && GeluConfig::tile_n == kMlpTileN && GeluConfig::tile_k == kMlpTileK &&
                  WideSwiGluConfig::out_tile_n == kMlpWideTileN / 2 && NarrowSwiGluConfig::out_tile_n == kMlpNarrowTileN / 2,
              "baton::ops::mlp: plan_mlp's tile constants must match the kernels");

// The op's policies are generated: batonc compiles mlp.baton (next to this header: both chains as
// the DSL describes them) into mlp_policies.hpp, proving every candidate sound for the parameter
// sets it lists; Chain::validate proves the chosen one again, before any launch, against the
// kernel's own relation (deps::gemm_a). batonc lowers these GEMM-shaped edges to footprint::GemmA
// (its generic dsl::AffineFootprint measured 1.2-1.9x slower MLPs with per-k-block waits), so the
// types are those a hand-written policy would have; the values (tile sizes, extents) come from
// the DSL. GeLU and SwiGLU edges share the types. HandKBlock / HandRow: the hand-written policies
// the bench compares them with (sm90::gemm_a_footprint).
using KBlock = mlp_gen::gelu_up_to_gelu_down_kblock_policy;  // per-k-block waits
using Row = mlp_gen::gelu_up_to_gelu_down_row_policy;        // one wait per row of GEMM1 tiles
static_assert(std::is_same_v<KBlock, mlp_gen::swiglu_up_to_swiglu_down_kblock_policy> &&
                  std::is_same_v<Row, mlp_gen::swiglu_up_to_swiglu_down_row_policy>,
              "baton::ops::mlp: mlp.baton's GeLU and SwiGLU edges must generate the same policy types");
using HandKBlock = KBlockPolicy<footprint::GemmA>;
using HandRow = RowPolicy<footprint::GemmA>;
// The generated policies for a shape (mlp.baton's parameters M, H, F).
constexpr mlp_gen::Params gen_params(int m, int hidden, int ffn) { return mlp_gen::Params{.M = m, .H = hidden, .F = ffn}; }
template <Activation A>
constexpr KBlock kblock_policy(int m, int hidden, int ffn) {
  return A == Activation::swiglu ? mlp_gen::swiglu_up_to_swiglu_down_kblock(gen_params(m, hidden, ffn))
                                 : mlp_gen::gelu_up_to_gelu_down_kblock(gen_params(m, hidden, ffn));
}
template <Activation A>
constexpr Row row_policy(int m, int hidden, int ffn) {
  return A == Activation::swiglu ? mlp_gen::swiglu_up_to_swiglu_down_row(gen_params(m, hidden, ffn))
                                 : mlp_gen::gelu_up_to_gelu_down_row(gen_params(m, hidden, ffn));
}
using PlainStage = Stage<Grouped, Outputs<>, Inputs<>>;
template <class P>
using ProducerStage = Stage<Grouped, Outputs<P>, Inputs<>>;
template <class P>
using ConsumerStage = Stage<Grouped, Outputs<>, Inputs<P>>;

// The default kernel set: instantiated where Mlp<A> is used.
template <Activation A>
struct Inline {
  // Every optional form (MlpKernelForms, baton/ops/mlp.hpp): its kernels are instantiated on use.
  static constexpr bool has_cta_pairs = true;
  static constexpr bool has_narrow_swapped = true;
  static constexpr bool has_band_pairs = true;
  template <class S>
  static result<StageLaunch> up(const S& s, const sm90::GemmArguments<UpConfig<A>>& a) {
    return sm90::Gemm<UpConfig<A>, S>::make_launch(s, a);
  }
  template <class S>
  static result<StageLaunch> down(const S& s, const sm90::GemmArguments<DownConfig>& a) {
    return sm90::Gemm<DownConfig, S>::make_launch(s, a);
  }
  // GEMM2 without semaphores, PDL-launched: its weights fill the pipeline, then griddepcontrol.wait
  // before its first load of Y.
  static result<StageLaunch> down_after_grid(const PlainStage& s, const sm90::GemmArguments<DownConfig>& a) {
    return sm90::Gemm<DownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // 128x256 tiles, no edges.
  static result<StageLaunch> up_wide(const PlainStage& s, const sm90::GemmArguments<WideUpConfig<A>>& a) {
    return sm90::Gemm<WideUpConfig<A>, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_wide(const PlainStage& s, const sm90::GemmArguments<WideDownConfig>& a) {
    return sm90::Gemm<WideDownConfig, PlainStage>::make_launch(s, a);
  }
  // 128x96 tiles, no edges.
  static result<StageLaunch> up_narrow(const PlainStage& s, const sm90::GemmArguments<NarrowUpConfig<A>>& a) {
    return sm90::Gemm<NarrowUpConfig<A>, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_narrow(const PlainStage& s, const sm90::GemmArguments<NarrowDownConfig>& a) {
    return sm90::Gemm<NarrowDownConfig, PlainStage>::make_launch(s, a);
  }
  // ... and PDL-launched, weights first (as down_after_grid).
  static result<StageLaunch> down_narrow_after_grid(const PlainStage& s, const sm90::GemmArguments<NarrowDownConfig>& a) {
    return sm90::Gemm<NarrowDownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // 128x96 tiles as CTA pairs (A multicast), no edges; GEMM2 also PDL-launched, weights first.
  static result<StageLaunch> up_pair(const PlainStage& s, const sm90::GemmArguments<PairUpConfig<A>>& a) {
    return sm90::Gemm<PairUpConfig<A>, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_pair(const PlainStage& s, const sm90::GemmArguments<PairDownConfig>& a) {
    return sm90::Gemm<PairDownConfig, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_pair_after_grid(const PlainStage& s, const sm90::GemmArguments<PairDownConfig>& a) {
    return sm90::Gemm<PairDownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // 128x192 tiles as band pairs (weights multicast), no edges; GEMM2 also PDL-launched, weights first.
  static result<StageLaunch> up_band(const PlainStage& s, const sm90::GemmArguments<BandUpConfig<A>>& a) {
    return sm90::Gemm<BandUpConfig<A>, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_band(const PlainStage& s, const sm90::GemmArguments<BandDownConfig>& a) {
    return sm90::Gemm<BandDownConfig, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_band_after_grid(const PlainStage& s, const sm90::GemmArguments<BandDownConfig>& a) {
    return sm90::Gemm<BandDownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // 128x256 and 128x192 GEMM2s PDL-launched, weights first (as down_after_grid).
  static result<StageLaunch> down_wide_after_grid(const PlainStage& s, const sm90::GemmArguments<WideDownConfig>& a) {
    return sm90::Gemm<WideDownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  static result<StageLaunch> down_mid_after_grid(const PlainStage& s, const sm90::GemmArguments<MidDownConfig>& a) {
    return sm90::Gemm<MidDownConfig, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // 128x192 tiles, no edges.
  static result<StageLaunch> up_mid(const PlainStage& s, const sm90::GemmArguments<MidUpConfig<A>>& a) {
    return sm90::Gemm<MidUpConfig<A>, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_mid(const PlainStage& s, const sm90::GemmArguments<MidDownConfig>& a) {
    return sm90::Gemm<MidDownConfig, PlainStage>::make_launch(s, a);
  }
  // The swapped GeLU GEMM1.
  static result<StageLaunch> up_swapped(const PlainStage& s, const sm90::GemmArguments<SwapGeluConfig>& a) {
    return sm90::Gemm<SwapGeluConfig, PlainStage>::make_launch(s, a);
  }
  // The swapped GEMM2: plain, and PDL-launched (griddepcontrol.wait before any load: its B is Y).
  static result<StageLaunch> down_swapped(const PlainStage& s, const sm90::GemmArguments<SwapDownConfig>& a) {
    return sm90::Gemm<SwapDownConfig, PlainStage>::make_launch(s, a);
  }
  static result<StageLaunch> down_swapped_after_grid(const PlainStage& s, const sm90::GemmArguments<SwapDownConfig>& a) {
    return sm90::Gemm<SwapDownConfig, PlainStage, sm90::GridWaitBeforeLoads>::make_launch(s, a);
  }
  // Plain tiles of the extended widths (W in kMlpExtendedTileWidths), no edges; GEMM2 also
  // PDL-launched, weights first (as down_after_grid).
  template <int W>
  static result<StageLaunch> up_plain_wide(const PlainStage& s, const sm90::GemmArguments<PlainUpConfigT<A, W>>& a) {
    return sm90::Gemm<PlainUpConfigT<A, W>, PlainStage>::make_launch(s, a);
  }
  template <int W>
  static result<StageLaunch> down_plain_wide(const PlainStage& s, const sm90::GemmArguments<PlainDownConfigT<W>>& a) {
    return sm90::Gemm<PlainDownConfigT<W>, PlainStage>::make_launch(s, a);
  }
  template <int W>
  static result<StageLaunch> down_plain_wide_after_grid(const PlainStage& s,
                                                        const sm90::GemmArguments<PlainDownConfigT<W>>& a) {
    return sm90::Gemm<PlainDownConfigT<W>, PlainStage, sm90::GridWaitBeforeA>::make_launch(s, a);
  }
  // The same with wide token tiles (T in kMlpSwapWideTiles), GEMM1 with either epilogue.
  template <int T>
  static result<StageLaunch> up_swapped_wide(const PlainStage& s, const sm90::GemmArguments<SwapUpConfigT<A, T>>& a) {
    return sm90::Gemm<SwapUpConfigT<A, T>, PlainStage>::make_launch(s, a);
  }
  template <int T>
  static result<StageLaunch> down_swapped_wide(const PlainStage& s, const sm90::GemmArguments<SwapDownConfigT<T>>& a) {
    return sm90::Gemm<SwapDownConfigT<T>, PlainStage>::make_launch(s, a);
  }
  template <int T>
  static result<StageLaunch> down_swapped_wide_after_grid(const PlainStage& s,
                                                          const sm90::GemmArguments<SwapDownConfigT<T>>& a) {
    return sm90::Gemm<SwapDownConfigT<T>, PlainStage, sm90::GridWaitBeforeLoads>::make_launch(s, a);
  }
};
// What a kernel set of Mlp<A, Kernels> provides: static functions that make the StageLaunch of each
// GEMM the op may plan (the argument types say which configuration and stage). Inline<A> instantiates
// them where the op is used; Compiled<A> (baton/ops/mlp_compiled.cuh, target baton::mlp_kernels)
// links them from the library, compiled once. A set may lack the optional forms
// (MlpKernelForms: CTA pairs, 32-token swapped tiles) and say so at compile time with
// `static constexpr bool has_cta_pairs / has_narrow_swapped = false` (kernel_forms_of): it still
// declares their functions (they may return errc::not_supported), and the op neither plans nor
// calls them.
// The three swapped GEMMs of one wide token tile T (kMlpSwapWideTiles): GEMM1 (GeLU or SwiGLU pairs),
// GEMM2, and GEMM2 PDL-launched.
template <class K, Activation A, int T>
concept MlpSwappedWideKernels = requires(const PlainStage& plain, const sm90::GemmArguments<SwapUpConfigT<A, T>>& up,
                                         const sm90::GemmArguments<SwapDownConfigT<T>>& down) {
  { K::template up_swapped_wide<T>(plain, up) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide<T>(plain, down) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide_after_grid<T>(plain, down) } -> std::same_as<result<StageLaunch>>;
};
// The three plain GEMMs of one extended width W (kMlpExtendedTileWidths): GEMM1 (GeLU or SwiGLU
// pairs), GEMM2, and GEMM2 PDL-launched.
template <class K, Activation A, int W>
concept MlpPlainWidthKernels = requires(const PlainStage& plain, const sm90::GemmArguments<PlainUpConfigT<A, W>>& up,
                                        const sm90::GemmArguments<PlainDownConfigT<W>>& down) {
  { K::template up_plain_wide<W>(plain, up) } -> std::same_as<result<StageLaunch>>;
  { K::template down_plain_wide<W>(plain, down) } -> std::same_as<result<StageLaunch>>;
  { K::template down_plain_wide_after_grid<W>(plain, down) } -> std::same_as<result<StageLaunch>>;
};
template <class K, Activation A>
concept MlpKernelSet = requires(const PlainStage& plain, const ProducerStage<KBlock>& up_kblock,
                                const ProducerStage<Row>& up_row, const ConsumerStage<KBlock>& down_kblock,
                                const ConsumerStage<Row>& down_row, const sm90::GemmArguments<UpConfig<A>>& up,
                                const sm90::GemmArguments<DownConfig>& down,
                                const sm90::GemmArguments<WideUpConfig<A>>& up_wide,
                                const sm90::GemmArguments<WideDownConfig>& down_wide,
                                const sm90::GemmArguments<MidUpConfig<A>>& up_mid,
                                const sm90::GemmArguments<MidDownConfig>& down_mid,
                                const sm90::GemmArguments<NarrowUpConfig<A>>& up_narrow,
                                const sm90::GemmArguments<NarrowDownConfig>& down_narrow,
                                const sm90::GemmArguments<PairUpConfig<A>>& up_pair,
                                const sm90::GemmArguments<PairDownConfig>& down_pair,
                                const sm90::GemmArguments<BandUpConfig<A>>& up_band,
                                const sm90::GemmArguments<BandDownConfig>& down_band,
                                const sm90::GemmArguments<SwapGeluConfig>& up_swapped,
                                const sm90::GemmArguments<SwapDownConfig>& down_swapped,
                                const sm90::GemmArguments<SwapUpConfigT<A, kMlpSwapMidTileN>>& up_swapped_mid,
                                const sm90::GemmArguments<SwapDownConfigT<kMlpSwapMidTileN>>& down_swapped_mid,
                                const sm90::GemmArguments<SwapUpConfigT<A, kMlpSwapWideTileN>>& up_swapped_wide,
                                const sm90::GemmArguments<SwapDownConfigT<kMlpSwapWideTileN>>& down_swapped_wide) {
  { K::up(plain, up) } -> std::same_as<result<StageLaunch>>;
  { K::up(up_kblock, up) } -> std::same_as<result<StageLaunch>>;
  { K::up(up_row, up) } -> std::same_as<result<StageLaunch>>;
  { K::down(plain, down) } -> std::same_as<result<StageLaunch>>;
  { K::down(down_kblock, down) } -> std::same_as<result<StageLaunch>>;
  { K::down(down_row, down) } -> std::same_as<result<StageLaunch>>;
  { K::down_after_grid(plain, down) } -> std::same_as<result<StageLaunch>>;
  { K::up_wide(plain, up_wide) } -> std::same_as<result<StageLaunch>>;
  { K::down_wide(plain, down_wide) } -> std::same_as<result<StageLaunch>>;
  { K::down_wide_after_grid(plain, down_wide) } -> std::same_as<result<StageLaunch>>;
  { K::up_mid(plain, up_mid) } -> std::same_as<result<StageLaunch>>;
  { K::down_mid(plain, down_mid) } -> std::same_as<result<StageLaunch>>;
  { K::down_mid_after_grid(plain, down_mid) } -> std::same_as<result<StageLaunch>>;
  { K::up_narrow(plain, up_narrow) } -> std::same_as<result<StageLaunch>>;
  { K::down_narrow(plain, down_narrow) } -> std::same_as<result<StageLaunch>>;
  { K::down_narrow_after_grid(plain, down_narrow) } -> std::same_as<result<StageLaunch>>;
  { K::up_pair(plain, up_pair) } -> std::same_as<result<StageLaunch>>;
  { K::down_pair(plain, down_pair) } -> std::same_as<result<StageLaunch>>;
  { K::down_pair_after_grid(plain, down_pair) } -> std::same_as<result<StageLaunch>>;
  { K::up_band(plain, up_band) } -> std::same_as<result<StageLaunch>>;
  { K::down_band(plain, down_band) } -> std::same_as<result<StageLaunch>>;
  { K::down_band_after_grid(plain, down_band) } -> std::same_as<result<StageLaunch>>;
  { K::down_swapped(plain, down_swapped) } -> std::same_as<result<StageLaunch>>;
  { K::down_swapped_after_grid(plain, down_swapped) } -> std::same_as<result<StageLaunch>>;
  { K::template up_swapped_wide<kMlpSwapMidTileN>(plain, up_swapped_mid) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide<kMlpSwapMidTileN>(plain, down_swapped_mid) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide_after_grid<kMlpSwapMidTileN>(plain, down_swapped_mid) } -> std::same_as<result<StageLaunch>>;
  { K::template up_swapped_wide<kMlpSwapWideTileN>(plain, up_swapped_wide) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide<kMlpSwapWideTileN>(plain, down_swapped_wide) } -> std::same_as<result<StageLaunch>>;
  { K::template down_swapped_wide_after_grid<kMlpSwapWideTileN>(plain, down_swapped_wide) } -> std::same_as<result<StageLaunch>>;
} && MlpSwappedWideKernels<K, A, kMlpSwapWiderTileN> && MlpSwappedWideKernels<K, A, kMlpSwapSlimTileN> &&
    MlpSwappedWideKernels<K, A, kMlpSwap176TileN> && MlpSwappedWideKernels<K, A, kMlpSwap208TileN> &&
    MlpPlainWidthKernels<K, A, kMlpTile160N> && MlpPlainWidthKernels<K, A, kMlpTile224N> &&
    (A != Activation::gelu || requires(const PlainStage& plain, const sm90::GemmArguments<SwapGeluConfig>& a) {
  { K::up_swapped(plain, a) } -> std::same_as<result<StageLaunch>>;
});
static_assert(MlpKernelSet<Inline<Activation::gelu>, Activation::gelu> &&
              MlpKernelSet<Inline<Activation::swiglu>, Activation::swiglu>);

// The optional forms kernel set K has: its has_cta_pairs / has_narrow_swapped, each true where K
// does not say (a set written before the forms were optional has every kernel).
template <class K>
constexpr MlpKernelForms kernel_forms_of() {
  MlpKernelForms f;
  if constexpr (requires { bool{K::has_cta_pairs}; }) f.cta_pairs = K::has_cta_pairs;
  if constexpr (requires { bool{K::has_narrow_swapped}; }) f.narrow_swapped = K::has_narrow_swapped;
  if constexpr (requires { bool{K::has_band_pairs}; }) f.band_pairs = K::has_band_pairs;
  return f;
}
static_assert(kernel_forms_of<Inline<Activation::gelu>>().complete() &&
              kernel_forms_of<Inline<Activation::swiglu>>().complete());
}  // namespace mlp_kernels

namespace detail {
// One GEMM in the form it runs (tile width, CTA pairs, swapped operands) on a kernel set's plain
// stages: its split-K workspace size, whether its shape fits, and its launch without semaphores
// (after_grid: the PDL-launched form that waits with griddepcontrol.wait before its loads of the
// previous kernel's output). `can` checks the shape and pointers with the split-K workspace in place
// (split_bytes of it). Persistence::ctas > 0: at most that many CTAs, each looping over tiles
// (sm90::GemmArguments::persistent_ctas; GemmForm::persistent), sharing every tile's k-blocks with
// stream_k (GemmForm::stream_k). Mlp builds both its GEMMs this way; other ops their GEMMs without
// edges (plain_gemm_in_form).
struct Persistence {
  int ctas = 0;
  bool stream_k = false;
};
struct FormedGemm {
  size_t split_bytes = 0;
  status unformed;  // a plan no kernel implements (checked first)
  std::function<status(void* split_workspace)> can;
  std::function<result<StageLaunch>(const mlp_kernels::PlainStage&, void* split_workspace, bool after_grid)> launch;
};
template <class Config, class Launch>
FormedGemm formed_gemm(sm90::GemmArguments<Config> a, int split_k, const sm90::NextWeights& next, Launch launch,
                       Persistence persistence = {}) {
  a.split_k = split_k;
  a.next_weights = next;
  a.persistent_ctas = persistence.ctas;
  a.stream_k = persistence.ctas > 0 && persistence.stream_k;
  FormedGemm g;
  g.split_bytes = sm90::split_workspace_bytes(a);
  g.can = [a](void* ws) mutable {
    a.split_workspace = ws;
    return sm90::Gemm<Config, mlp_kernels::PlainStage>::can_implement(a);
  };
  g.launch = [a, launch](const mlp_kernels::PlainStage& st, void* ws, bool after_grid) mutable {
    a.split_workspace = ws;
    return launch(st, a, after_grid);
  };
  return g;
}
inline FormedGemm unformed_gemm(status why) { return FormedGemm{0, std::move(why), {}, {}}; }
inline std::string no_gemm_width(const std::string& what, int w) {
  return what + " has no kernel for tile width " + std::to_string(w) + " (kernels: " + kMlpTileWidthsText + ")";
}

// D [m, n] = A [m, k] W [n, k]^T without activation (MLP's GEMM2; the attention's QKV and O-proj GEMMs
// without edges) in form `f` on kernel set K's down forms: 128xN tiles (CTA pairs at N = 96), or
// swapped (A' = W, B' = A, D written as [n, m] column-major == [m, n] row-major). `what` begins
// every error ("baton::ops::mlp: gemm2"). f.persistent: at most `sms` CTAs looping over the tiles.
template <class K>
FormedGemm plain_gemm_in_form(const GemmForm& f, int m, int n, int k, const mlp_kernels::bf16* a,
                              const mlp_kernels::bf16* w, mlp_kernels::bf16* d, const std::string& what, int sms = 0) {
  using namespace mlp_kernels;
  constexpr MlpKernelForms forms = kernel_forms_of<K>();
  if (f.persistent && sms < 1)
    return unformed_gemm(status(errc::invalid_argument, what + ": persistent CTAs need the SM count (got " +
                                                            std::to_string(sms) + ")"));
  const Persistence persistence{f.persistent ? sms : 0, f.stream_k};
  auto form = [&](auto config, auto launch) {
    using C = typename decltype(config)::type;
    return formed_gemm(sm90::GemmArguments<C>{m, n, k, a, w, d}, f.split_k, {}, launch, persistence);
  };
  auto swapped_wide = [&](auto tokens) {
    constexpr int T = decltype(tokens)::value;
    return formed_gemm(sm90::GemmArguments<SwapDownConfigT<T>>{n, m, k, w, a, d}, f.split_k, {},
                       [](const auto& st, const auto& args, bool after_grid) {
                         return after_grid ? K::template down_swapped_wide_after_grid<T>(st, args)
                                           : K::template down_swapped_wide<T>(st, args);
                       }, persistence);
  };
  const bool swapped = f.operands == GemmOperands::swapped;
  if (swapped && f.tile == kMlpSwapSlimTileN) return swapped_wide(std::integral_constant<int, kMlpSwapSlimTileN>{});
  if (swapped && f.tile == kMlpSwapMidTileN) return swapped_wide(std::integral_constant<int, kMlpSwapMidTileN>{});
  if (swapped && f.tile == kMlpSwap176TileN) return swapped_wide(std::integral_constant<int, kMlpSwap176TileN>{});
  if (swapped && f.tile == kMlpSwapWideTileN) return swapped_wide(std::integral_constant<int, kMlpSwapWideTileN>{});
  if (swapped && f.tile == kMlpSwap208TileN) return swapped_wide(std::integral_constant<int, kMlpSwap208TileN>{});
  if (swapped && f.tile == kMlpSwapWiderTileN) return swapped_wide(std::integral_constant<int, kMlpSwapWiderTileN>{});
  if (swapped && f.tile != kMlpSwapTileN)
    return unformed_gemm(status(errc::not_supported, what + ": no swapped kernel of " + std::to_string(f.tile) +
                                                         "-token tiles (kernels: 32, 144, 160, 176, 192, 208, 224)"));
  if (swapped) {
    if constexpr (forms.narrow_swapped)
      return formed_gemm(sm90::GemmArguments<SwapDownConfig>{n, m, k, w, a, d}, f.split_k, {},
                         [](const auto& st, const auto& args, bool after_grid) {
                           return after_grid ? K::down_swapped_after_grid(st, args) : K::down_swapped(st, args);
                         }, persistence);
    else
      return unformed_gemm(mlp_missing_kernels(what + " swapped in 32-token tiles"));
  }
  auto plain_wide = [&](auto width) {
    constexpr int W = decltype(width)::value;
    return form(std::type_identity<PlainDownConfigT<W>>{}, [](const auto& st, const auto& args, bool after_grid) {
      return after_grid ? K::template down_plain_wide_after_grid<W>(st, args) : K::template down_plain_wide<W>(st, args);
    });
  };
  switch (f.tile) {
    case kMlpTile160N: return plain_wide(std::integral_constant<int, kMlpTile160N>{});
    case kMlpTile224N: return plain_wide(std::integral_constant<int, kMlpTile224N>{});
    case kMlpTileN:
      return form(std::type_identity<DownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
        return after_grid ? K::down_after_grid(st, args) : K::down(st, args);
      });
    case kMlpNarrowTileN:
      if (f.cta_pairs) {
        if constexpr (forms.cta_pairs)
          return form(std::type_identity<PairDownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
            return after_grid ? K::down_pair_after_grid(st, args) : K::down_pair(st, args);
          });
        else
          return unformed_gemm(mlp_missing_kernels(what + " as CTA pairs"));
      }
      return form(std::type_identity<NarrowDownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
        return after_grid ? K::down_narrow_after_grid(st, args) : K::down_narrow(st, args);
      });
    case kMlpMidTileN:
      if (f.band_pairs) {
        if constexpr (forms.band_pairs)
          return form(std::type_identity<BandDownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
            return after_grid ? K::down_band_after_grid(st, args) : K::down_band(st, args);
          });
        else
          return unformed_gemm(mlp_missing_kernels(what + " as band pairs"));
      }
      return form(std::type_identity<MidDownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
        return after_grid ? K::down_mid_after_grid(st, args) : K::down_mid(st, args);
      });
    case kMlpWideTileN:
      return form(std::type_identity<WideDownConfig>{}, [](const auto& st, const auto& args, bool after_grid) {
        return after_grid ? K::down_wide_after_grid(st, args) : K::down_wide(st, args);
      });
    default: return unformed_gemm(status(errc::invalid_argument, no_gemm_width(what, f.tile)));
  }
}
}  // namespace detail

// Non-owning bf16 device pointers, 16-byte aligned (TMA).
struct MlpTensors {
  const void* x = nullptr;   // [m, hidden]
  const void* w1 = nullptr;  // [ffn, hidden] (GeLU) or [2 ffn, hidden] interleaved (SwiGLU)
  const void* w2 = nullptr;  // [hidden, ffn]
  void* y = nullptr;         // [m, ffn]
  void* z = nullptr;         // [m, hidden]
};

struct MlpRunOptions {
  MlpOptions plan{};                  // policy and split-K (automatic by default)
  int sms = 0;                        // 0: the current device's SM count
  // Peak HBM bandwidth for the plan's cost model, bytes per microsecond (mlp_cost_model_for_hbm):
  // 0, the current device's (memory clock x bus width x 2; the H200's fit without a device).
  double hbm_peak_bytes_per_us = 0;
  uint64_t watchdog_ns = 2'000'000'000ull;  // bound on every wait (0: off)
  bool log = true;                    // print the plan's log line to stdout
  TileEvent* trace1 = nullptr;        // optional per-tile timelines (gemm1 tiles / gemm2 tiles events)
  TileEvent* trace2 = nullptr;
  // Per-shape tuning (with plan.policy automatic): create() times a few candidate plans on `stream`
  // with the given tensors (it overwrites y and z) and keeps the fastest: the planned one (none),
  // none row-major, none with the other tile widths and split-K parts, each GEMM plain and swapped
  // where a wide token tile covers m, the planned one without its L2 prefetch of W2, at
  // m <= kMlpSwapTileN the 32-token swapped GEMM2 (and GeLU GEMM1), GEMM2 launched the other way,
  // per-row waits with 1-row, 2-row and planned tile bands and per-k-block waits; a candidate that
  // needs a form the kernel set lacks (Mlp::kernel_forms) is skipped. After ~50 ms of warm-up passes
  // (the GPU settles at its sustained clock), tune_iters timed passes each, in 5 interleaved rounds
  // (median round); the planned chain is kept unless another is more than 2% faster. CUDA events,
  // per-event synchronization only.
  bool tune = false;
  int tune_iters = 40;
  // Tuning also tries CTA pairs (GemmFormRequest::cta_pairs) from m = 128 on. Off by default: they
  // measured level with the unpaired GEMMs (docs/mlp.md), so trying them only costs tuning time;
  // bench/mlp.cu --cta-pairs and the op tests exercise them.
  bool tune_cta_pairs = false;
  // Tuning also tries band pairs (GemmFormRequest::band_pairs) on the 128x192 GEMMs from two row bands
  // on: 0.79-1.23x the unpaired GEMMs' time by shape (docs/mlp.md, "Band pairs"). Off, tuning treats the
  // kernel set as lacking them (the cache key says so too) unless the caller's own options ask for them.
  // On by default: where tuning kept them on an H100 the chain ran faster than without them
  // (docs/mlp.md, "Band pairs"), and elsewhere they only cost tuning time.
  bool tune_band_pairs = true;
  // Tuning also tries persistent CTAs (GemmFormRequest::persistent) on each GEMM of more tiles than
  // SMs: the planned forms with GEMM1, GEMM2 or both persistent, and every pair of plain widths with
  // its GEMMs of more tiles than SMs persistent (docs/mlp.md, "Persistent CTAs").
  bool tune_persistent = true;
  // Tuning also tries stream-K (GemmFormRequest::stream_k) on each GEMM whose last wave of tiles is
  // under 90% full: the planned forms with GEMM1, GEMM2 or both stream-K, and every pair of plain
  // widths with those GEMMs stream-K (docs/mlp.md, "Stream-K"). Off by default: with its lanes the
  // stream-K chains time faster than the persistent ones in tuning's rounds, but the chosen chain,
  // timed again in a graph, ran up to 12% slower than tuning timed it and than the persistent plan
  // (docs/mlp.md, "Stream-K in lanes"), so tuning's pick is not yet trusted; the cache key says when
  // it is on.
  bool tune_stream_k = false;
  // Tuning results are kept in TuneCache::global() (baton/ops/tuner.hpp) per (shape, asked options,
  // GPU model and SM count): a second create() of the same shape skips the timing and builds the
  // plan found before. tune_cache_file: a file loaded before the lookup and saved after a new result,
  // so later processes skip the tuning too (empty: this process only). tune_cache = false: always tune.
  bool tune_cache = true;
  std::string tune_cache_file;
};

template <Activation Act, class Kernels = mlp_kernels::Inline<Act>>
class Mlp {
  static_assert(mlp_kernels::MlpKernelSet<Kernels, Act>,
                "baton::ops::Mlp<Act, Kernels>: Kernels must provide every launch function of "
                "baton::ops::mlp_kernels::MlpKernelSet (see mlp_kernels::Inline for the list)");
 public:
  using bf16 = mlp_kernels::bf16;
  using UpArgs = sm90::GemmArguments<mlp_kernels::UpConfig<Act>>;
  using DownArgs = sm90::GemmArguments<mlp_kernels::DownConfig>;
  // The optional kernel forms this op can run (MlpKernelForms): create() refuses a request for one it
  // lacks, naming it, and tuning skips candidates that need one.
  static constexpr MlpKernelForms kernel_forms = mlp_kernels::kernel_forms_of<Kernels>();

  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  // Plans, validates (soundness checker included), allocates the chain and split-K workspaces
  // (zeroed on `stream`), builds the launches. Nothing is launched.
  [[nodiscard]] static result<std::unique_ptr<Mlp>> create(const MlpShape& shape, const MlpTensors& t, cudaStream_t stream,
                                                           const MlpRunOptions& o = {}) {
    if (shape.act != Act)
      return status(errc::invalid_argument, std::string("baton::ops::Mlp<") + to_string(Act) + ">: shape.act is " +
                                                to_string(shape.act));
    BATON_TRY_ASSIGN(const int sms, detail::plan_sms(o.sms));
    const MlpCostModel model = mlp_cost_model_for_hbm(detail::plan_hbm_bytes_per_us(o.hbm_peak_bytes_per_us));
    if (o.tune && o.plan.policy == MlpPolicy::automatic) return tuned_(shape, t, stream, o, sms, model);
    auto plan = plan_mlp(shape, sms, o.plan, kernel_forms, model);
    if (!plan.ok()) return plan.error();
    std::unique_ptr<Mlp> m(new Mlp());
    m->plan_ = plan.value();
    m->sms_ = sms;
    BATON_TRY(m->build_(t, stream, o));
    if (o.log) std::printf("%s\n", m->plan_.log_line().c_str());
    return result<std::unique_ptr<Mlp>>(std::move(m));
  }

  // One forward pass on `stream` (one stream, capturable in a CUDA graph; PDL except for `none`
  // with a GEMM1 of more than one wave: two plain launches).
  [[nodiscard]] status enqueue(cudaStream_t stream) { return launch_chain(chain_, stream, launches_, sched_); }
  // Waits for `stream` and returns the chain's error record as a status (watchdog reports).
  [[nodiscard]] status check_errors(cudaStream_t stream) const { return ::baton::check_errors(chain_, ws_.data(), stream); }
  // One of the two GEMMs alone (which = 1 or 2), a plain launch on `stream`: for timing each GEMM
  // of the plan in isolation (bench/mlp.cu's breakdown of a pass into GEMM1, GEMM2 and the rest).
  // GEMM2 reads whatever Y holds. Plans with semaphores (row, kblock) are refused: a GEMM2 launched
  // without its GEMM1 would wait for posts that never come, and its tickets would leave the chain's
  // epochs out of step.
  [[nodiscard]] status enqueue_gemm(int which, cudaStream_t stream) {
    if (which != 1 && which != 2)
      return status(errc::invalid_argument, "baton::ops::Mlp::enqueue_gemm: which must be 1 or 2, got " +
                                                std::to_string(which));
    if (plan_.policy != MlpPolicy::none)
      return status(errc::not_supported, std::string("baton::ops::Mlp::enqueue_gemm: the plan's policy is ") +
                                             to_string(plan_.policy) +
                                             "; one GEMM alone needs policy none (no semaphores between them)");
    const StageLaunch& l = launches_[size_t(which - 1)];
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = l.grid;
    cfg.blockDim = l.block;
    cfg.dynamicSmemBytes = l.smem;
    cfg.stream = stream;
    return cuda_status(l.launch(cfg), "baton::ops::Mlp::enqueue_gemm: launching gemm" + std::to_string(which));
  }

  const MlpPlan& plan() const { return plan_; }
  const Chain& chain() const { return chain_; }

 private:
  Mlp() = default;

  [[nodiscard]] static result<std::unique_ptr<Mlp>> tuned_(const MlpShape& shape, const MlpTensors& t, cudaStream_t stream,
                                                           const MlpRunOptions& o, int sms, const MlpCostModel& model) {
    auto base = plan_mlp(shape, sms, o.plan, kernel_forms, model);
    if (!base.ok()) return base.error();
    // The forms tuning may try: the kernel set's, less the band pairs unless asked for (tune_band_pairs,
    // or the caller's options, whose plan is candidate 0).
    MlpKernelForms tuning_forms = kernel_forms;
    tuning_forms.band_pairs = kernel_forms.band_pairs && (o.tune_band_pairs || o.plan.gemm1.band_pairs.value_or(false) ||
                                                          o.plan.gemm2.band_pairs.value_or(false));
    // The tuning cache: a plan found before for this shape, these options and this GPU.
    std::string key;
    if (o.tune_cache) {
      auto device = detail::current_tune_device_key(sms);
      if (!device.ok()) return device.error().with_context("baton::ops::mlp tuning");
      key = mlp_tune_key(shape, o.plan, device.value(), tuning_forms);
      if (!o.tune_persistent) key += ";tune_persistent=0";  // fewer candidates: not another tuning's result
      if (o.tune_stream_k) key += ";tune_stream_k=1";
      if (!o.tune_cache_file.empty()) BATON_TRY(TuneCache::global().load(o.tune_cache_file).with_context("baton::ops::mlp tuning"));
      if (auto hit = TuneCache::global().find(key)) {
        auto cached = mlp_options_from_string(*hit);
        if (cached.ok()) {
          MlpRunOptions co = o;
          co.tune = false;
          co.log = false;
          co.plan = cached.value();
          auto m = create(shape, t, stream, co);
          if (m.ok()) {
            m.value()->plan_.reason = "tuned earlier on this GPU (tuning cache): " + *hit;
            if (o.log) std::printf("%s\n", m.value()->plan_.log_line().c_str());
            return m;
          }
        }
        // A cached plan that no longer parses or builds (another baton version): tune again.
      }
    }
    // The candidates, as options: the caller's, with what each candidate changes. Candidate 0 is the
    // planned chain; a candidate whose options repeat an earlier one's is skipped.
    const MlpPlan& bp = base.value();
    const MlpOptions& asked = o.plan;
    const int rows = ceil_div(shape.m, kMlpTileM);
    auto none_with = [&](auto&& edit) {
      MlpOptions c = asked;
      c.policy = MlpPolicy::none;
      c.group_m = bp.group_m;
      edit(c);
      return c;
    };
    // A waiting chain has plain 128x128 GEMMs: of the caller's requests only split-K carries over.
    auto waits = [&](MlpPolicy policy, int group) {
      MlpOptions c = asked;
      c.policy = policy;
      c.group_m = group;
      c.gemm1 = GemmFormRequest{{}, {}, asked.gemm1.split_k, {}, {}, {}};
      c.gemm2 = GemmFormRequest{{}, {}, asked.gemm2.split_k, {}, {}, {}};
      return c;
    };
    auto plain = [](int tile, const GemmFormRequest& r) {
      return GemmFormRequest{GemmOperands::plain, tile, r.split_k, r.cta_pairs, r.band_pairs, r.persistent, r.stream_k};
    };
    std::vector<MlpOptions> cands = {none_with([](MlpOptions&) {})};
    if (rows > 1) {  // with one row of tiles every order below is the same chain
      cands.push_back(none_with([](MlpOptions& c) { c.group_m = 1; }));
      for (int g : {1, 2, bp.group_m})
        if (g <= rows) cands.push_back(waits(MlpPolicy::row, g));
    } else {
      cands.push_back(waits(MlpPolicy::row, bp.group_m));
    }
    // Per-k-block waits (the sync warp's horizon: a GEMM2 tile starts on the k-blocks of Y already
    // written), in the planned order and row-major (GEMM1 finishes a row band's columns in GEMM2's
    // k order). Kept only when they measure faster than every plan without waits.
    for (int g : {bp.group_m, 1}) cands.push_back(waits(MlpPolicy::kblock, g));
    // The other plain tile widths (a wider GEMM gets its own split-K).
    const bool plain1 = bp.form1.operands == GemmOperands::plain, plain2 = bp.form2.operands == GemmOperands::plain;
    for (int t1 : kMlpTileWidths)
      for (int t2 : kMlpTileWidths)
        if (!plain1 || !plain2 || t1 != bp.form1.tile || t2 != bp.form2.tile)
          cands.push_back(none_with([&](MlpOptions& c) {
            c.gemm1 = plain(t1, asked.gemm1);
            c.gemm2 = plain(t2, asked.gemm2);
          }));
    // Split-K over the planned forms, when the caller left it to the plan: with several row bands
    // the tiles can leave a ragged last wave (a tail band of a few rows whose CTAs finish early,
    // 1.1 waves of equal tiles) that smaller CTA parts fill better; with one band, other splits than
    // the one-wave rule.
    const bool narrow_swap = (!plain1 && bp.form1.tile == kMlpSwapTileN) || (!plain2 && bp.form2.tile == kMlpSwapTileN);
    if (!asked.gemm1.split_k && !asked.gemm2.split_k && bp.policy == MlpPolicy::none && !narrow_swap &&
        !bp.form1.cta_pairs && !bp.form2.cta_pairs) {
      const int k1 = ceil_div(shape.hidden, kMlpTileK), k2 = ceil_div(shape.ffn, kMlpTileK);
      for (int s1 : {1, 2, 3})
        for (int s2 : {1, 2, 3})
          if ((s1 != bp.form1.split_k || s2 != bp.form2.split_k) && s1 <= k1 && s2 <= k2)
            cands.push_back(none_with([&](MlpOptions& c) {
              c.gemm1 = GemmFormRequest{bp.form1.operands, bp.form1.tile, s1, {}, {}, {}};
              c.gemm2 = GemmFormRequest{bp.form2.operands, bp.form2.tile, s2, {}, {}, {}};
            }));
    }
    // Up to kMlpSwapMaxM tokens, each GEMM plain (the model's width) and swapped (mlp_swap_tile's
    // token tile).
    if (bp.policy == MlpPolicy::none && shape.m > kMlpSwapTileN && shape.m <= kMlpSwapMaxM)
      for (GemmOperands o1 : {GemmOperands::plain, GemmOperands::swapped})
        for (GemmOperands o2 : {GemmOperands::plain, GemmOperands::swapped})
          cands.push_back(none_with([&](MlpOptions& c) {
            c.gemm1 = GemmFormRequest{o1, {}, asked.gemm1.split_k, {}, {}, {}};
            c.gemm2 = GemmFormRequest{o2, {}, asked.gemm2.split_k, {}, {}, {}};
          }));
    // The planned chain without its L2 prefetch of W2.
    if (bp.l2_prefetch_kblocks > 0) cands.push_back(none_with([](MlpOptions& c) { c.l2_prefetch_mb = 0; }));
    // At decode, the 32-token swapped GEMMs (measured slower, docs/mlp.md) beside plain 128x128 ones.
    if (bp.policy == MlpPolicy::none && shape.m <= kMlpSwapTileN && plain1 && plain2) {
      const GemmFormRequest swapped{GemmOperands::swapped, kMlpSwapTileN, {}, {}, {}, {}};
      cands.push_back(none_with([&](MlpOptions& c) {
        c.gemm1 = plain(kMlpTileN, asked.gemm1);
        c.gemm2 = swapped;
      }));
      if (shape.act == Activation::gelu) {
        cands.push_back(none_with([&](MlpOptions& c) {
          c.gemm1 = swapped;
          c.gemm2 = plain(kMlpTileN, asked.gemm2);
        }));
        cands.push_back(none_with([&](MlpOptions& c) { c.gemm1 = c.gemm2 = swapped; }));
      }
    }
    // A swapped plan without its swaps.
    if (!plain1 || !plain2)
      cands.push_back(none_with([](MlpOptions& c) {
        c.gemm1.operands = c.gemm2.operands = GemmOperands::plain;
        if (c.gemm1.tile && !mlp_tile_width_ok(*c.gemm1.tile)) c.gemm1.tile.reset();
        if (c.gemm2.tile && !mlp_tile_width_ok(*c.gemm2.tile)) c.gemm2.tile.reset();
      }));
    // From m = 128 on, CTA pairs for every pair of widths with a 128x96 GEMM (A multicast).
    if (o.tune_cta_pairs && shape.m >= kMlpTileM && bp.policy == MlpPolicy::none && !bp.form1.cta_pairs &&
        !bp.form2.cta_pairs && plain1 && plain2)
      for (int t1 : kMlpTileWidths)
        for (int t2 : kMlpTileWidths)
          if (t1 == kMlpNarrowTileN || t2 == kMlpNarrowTileN)
            cands.push_back(none_with([&](MlpOptions& c) {
              c.gemm1 = GemmFormRequest{GemmOperands::plain, t1, asked.gemm1.split_k, true, {}, {}};
              c.gemm2 = GemmFormRequest{GemmOperands::plain, t2, asked.gemm2.split_k, true, {}, {}};
            }));
    if (bp.form1.cta_pairs || bp.form2.cta_pairs)
      cands.push_back(none_with([](MlpOptions& c) { c.gemm1.cta_pairs = c.gemm2.cta_pairs = false; }));
    // From two row bands on, band pairs (weights multicast) on the 192-wide GEMMs of the width pairs
    // above that have one: on GEMM1, on GEMM2, on both. They measured 0.79-1.23x the unpaired GEMMs'
    // time, by shape (docs/mlp.md, "Band pairs"), so only timing decides. Skipped below unless
    // tune_band_pairs (tuning_forms).
    if (rows >= 2 && bp.policy == MlpPolicy::none && !asked.gemm1.cta_pairs.value_or(false) &&
        !asked.gemm2.cta_pairs.value_or(false))
      for (int t1 : kMlpTileWidths)
        for (int t2 : kMlpTileWidths)
          for (int which = 1; which <= 3; ++which) {
            const bool bp1 = (which & 1) && t1 == kMlpMidTileN, bp2 = (which & 2) && t2 == kMlpMidTileN;
            if ((which == 1 && !bp1) || (which == 2 && !bp2) || (which == 3 && !(bp1 && bp2))) continue;
            cands.push_back(none_with([&](MlpOptions& c) {
              c.gemm1 = GemmFormRequest{GemmOperands::plain, t1, asked.gemm1.split_k, {}, bp1, {}};
              c.gemm2 = GemmFormRequest{GemmOperands::plain, t2, asked.gemm2.split_k, {}, bp2, {}};
            }));
          }
    if (bp.form1.band_pairs || bp.form2.band_pairs)
      cands.push_back(none_with([](MlpOptions& c) { c.gemm1.band_pairs = c.gemm2.band_pairs = false; }));
    // Candidates with some GEMMs in another form: the planned forms with GEMM1, GEMM2 or both in it
    // (a GEMM of CTA or band pairs stays as planned), then every pair of plain widths with the GEMMs
    // that qualify in it. qualifies(form, n, asked request); to(form): the GEMM's request in the form.
    auto may_persist = [&](const GemmFormRequest& r) {
      return r.split_k.value_or(1) == 1 && !r.cta_pairs.value_or(false) && !r.band_pairs.value_or(false) &&
             r.persistent.value_or(true);
    };
    const int n1 = shape.act == Activation::swiglu ? 2 * shape.ffn : shape.ffn;
    auto planned_and_widths = [&](auto qualifies, auto to) {
      auto as_planned = [](const GemmForm& f) {
        return GemmFormRequest{f.operands, f.tile, f.split_k, f.cta_pairs, f.band_pairs, f.persistent, f.stream_k};
      };
      const bool p1 = !bp.form1.cta_pairs && !bp.form1.band_pairs && qualifies(bp.form1, n1, asked.gemm1);
      const bool p2 = !bp.form2.cta_pairs && !bp.form2.band_pairs && qualifies(bp.form2, shape.hidden, asked.gemm2);
      for (int which = 1; which <= 3; ++which) {
        if (((which & 1) && !p1) || ((which & 2) && !p2)) continue;
        cands.push_back(none_with([&](MlpOptions& c) {
          c.gemm1 = (which & 1) ? to(bp.form1) : as_planned(bp.form1);
          c.gemm2 = (which & 2) ? to(bp.form2) : as_planned(bp.form2);
        }));
      }
      for (int t1 : kMlpTileWidths)
        for (int t2 : kMlpTileWidths) {
          const GemmForm f1{GemmOperands::plain, t1, 1, false}, f2{GemmOperands::plain, t2, 1, false};
          const bool q1 = qualifies(f1, n1, asked.gemm1), q2 = qualifies(f2, shape.hidden, asked.gemm2);
          if (!q1 && !q2) continue;
          cands.push_back(none_with([&](MlpOptions& c) {
            c.gemm1 = q1 ? to(f1) : plain(t1, asked.gemm1);
            c.gemm2 = q2 ? to(f2) : plain(t2, asked.gemm2);
          }));
        }
    };
    auto tiles = [&](const GemmForm& f, int n) { return detail::mlp_gemm_grid(f, shape.m, n).size(); };
    // Persistent CTAs (tune_persistent) on the GEMMs of more tiles than SMs, in one part each.
    if (o.tune_persistent && bp.policy == MlpPolicy::none)
      planned_and_widths(
          [&](const GemmForm& f, int n, const GemmFormRequest& r) { return tiles(f, n) > int64_t(sms) && may_persist(r); },
          [](const GemmForm& f) { return GemmFormRequest{f.operands, f.tile, 1, {}, {}, true}; });
    // Stream-K (tune_stream_k) on the GEMMs whose tiles leave their last wave less than 90% full (or
    // make less than one).
    if (o.tune_stream_k && bp.policy == MlpPolicy::none)
      planned_and_widths(
          [&](const GemmForm& f, int n, const GemmFormRequest& r) {
            const int64_t last = tiles(f, n) % int64_t(sms);
            return !f.stream_k && last != 0 && double(last) < 0.9 * double(sms) && may_persist(r) &&
                   r.stream_k.value_or(true);
          },
          [](const GemmForm& f) { return GemmFormRequest{f.operands, f.tile, 1, {}, {}, true, true}; });
    if (bp.form1.persistent || bp.form2.persistent)
      cands.push_back(none_with([](MlpOptions& c) {
        c.gemm1.persistent = c.gemm2.persistent = false;
        c.gemm1.stream_k = c.gemm2.stream_k = false;
      }));
    // The planned chain with GEMM2's launch the other way (PDL or after GEMM1).
    if (bp.policy == MlpPolicy::none)
      cands.push_back(none_with([&](MlpOptions& c) {
        c.launch = bp.launch == Gemm2Launch::pdl ? Gemm2Launch::after_gemm1 : Gemm2Launch::pdl;
      }));
    // Build every distinct candidate first, then time them in interleaved rounds after a warm-up:
    // compute-bound shapes run at the power limit once the GPU is busy (the SM clock drops well below
    // its maximum at M >= 128: docs/mlp.md, gpu-clocks.csv), so candidates timed one after the other from
    // an idle GPU would be ranked at different clocks than the workload runs at.
    std::vector<std::unique_ptr<Mlp>> ms;
    std::vector<MlpOptions> built;  // the options each candidate was created with (for the cache)
    std::vector<MlpOptions> lacking;  // skipped: they need a kernel form this set lacks
    for (const MlpOptions& c : cands) {
      if (std::find(built.begin(), built.end(), c) != built.end()) continue;
      if (std::find(lacking.begin(), lacking.end(), c) != lacking.end()) continue;
      if (mlp_needs_missing_kernels(shape, sms, c, tuning_forms)) {
        lacking.push_back(c);
        continue;
      }
      MlpRunOptions co = o;
      co.tune = false;
      co.log = false;
      co.plan = c;
      auto m = create(shape, t, stream, co);
      if (!m.ok()) return m.error().with_context("tuning candidate " + mlp_options_to_string(c));
      ms.push_back(std::move(m.value()));
      built.push_back(c);
    }
    // ~50 ms of warm-up passes of the planned chain, then interleaved rounds (detail::time_candidates).
    auto timed = detail::time_candidates(
        ms, stream, o.tune_iters, [&](size_t i) { return std::string(to_string(ms[i]->plan_.policy)); }, 50'000.0);
    if (!timed.ok()) return timed.error();
    const std::vector<double>& med = timed.value().medians;
    const size_t best_i = timed.value().best;
    const int warm = timed.value().warm, rounds = timed.value().rounds, per_round = timed.value().per_round;
    std::string tried;
    for (size_t i = 0; i < ms.size(); ++i) {
      char buf[192];
      const MlpPlan& mp = ms[i]->plan_;
      auto swapped = [](const GemmForm& f) { return f.operands == GemmOperands::swapped; };
      auto mark = [](const GemmForm& f) {
        return f.cta_pairs ? "p" : f.band_pairs ? "b" : f.stream_k ? "S" : f.persistent ? "P" : "";
      };
      std::snprintf(buf, sizeof buf, "%s%s/Grouped{%d}/%s%d%s,%s%d%s/s%d.%d%s%s %.1f us", tried.empty() ? "" : ", ",
                    to_string(mp.policy), mp.group_m, swapped(mp.form1) ? "swapped 128x" : "128x", mp.form1.tile,
                    mark(mp.form1), swapped(mp.form2) ? "swapped 128x" : "128x",
                    mp.form2.tile, mark(mp.form2), mp.form1.split_k, mp.form2.split_k,
                    mp.l2_prefetch_kblocks > 0 ? ("/pf" + std::to_string(mp.l2_prefetch_kblocks)).c_str() : "",
                    mp.launch == Gemm2Launch::pdl ? "/pdl" : "/2 launches", med[i]);
      tried += buf;
    }
    std::unique_ptr<Mlp> best = std::move(ms[best_i]);
    ms.clear();  // the other candidates' workspaces go now
    if (o.tune_cache) {
      BATON_TRY(TuneCache::global().put(key, mlp_options_to_string(built[best_i])).with_context("baton::ops::mlp tuning"));
      if (!o.tune_cache_file.empty()) BATON_TRY(TuneCache::global().save(o.tune_cache_file).with_context("baton::ops::mlp tuning"));
    }
    best->plan_.reason = "tuned on this GPU (" + std::to_string(warm) + " warm-up passes, then the median of " +
                         std::to_string(rounds) + " interleaved rounds of " + std::to_string(per_round) +
                         " passes each; the plan unless another is > 2% faster): " + tried +
                         (!lacking.empty() ? "; not tried: " + std::to_string(lacking.size()) +
                                                 " candidates with CTA pairs or 32-token swapped tiles, which this kernel "
                                                 "set lacks (-DBATON_MLP_EXTRA_KERNELS=ON adds them to baton::mlp_kernels)"
                                           : std::string());
    if (o.log) std::printf("%s\n", best->plan_.log_line().c_str());
    return result<std::unique_ptr<Mlp>>(std::move(best));
  }

  using FormedGemm = detail::FormedGemm;

  // GEMM1, Y = act(X W1^T) in plan_.form1: 128xN tiles (CTA pairs at N = 96), or
  // swapped (m = F or 2F, n = the tokens, A = W1, B = X, Y written column-major as Y^T).
  FormedGemm gemm1_(const MlpTensors& t, const sm90::NextWeights& next) const {
    const MlpShape& s = plan_.shape;
    const int n1 = Act == Activation::swiglu ? 2 * s.ffn : s.ffn;
    const auto* x = static_cast<const bf16*>(t.x);
    const auto* w1 = static_cast<const bf16*>(t.w1);
    auto* y = static_cast<bf16*>(t.y);
    // GemmForm::persistent: one CTA per SM (sharing every tile's k-blocks with GemmForm::stream_k).
    const detail::Persistence persistence{plan_.form1.persistent ? sms_ : 0, plan_.form1.stream_k};
    auto form = [&](auto config, auto launch) {
      using C = typename decltype(config)::type;
      return detail::formed_gemm(sm90::GemmArguments<C>{s.m, n1, s.hidden, x, w1, y}, plan_.form1.split_k, next, launch,
                                 persistence);
    };
    using namespace mlp_kernels;
    auto swapped_wide = [&](auto tokens) {
      constexpr int T = decltype(tokens)::value;
      return detail::formed_gemm(sm90::GemmArguments<SwapUpConfigT<Act, T>>{n1, s.m, s.hidden, w1, x, y}, plan_.form1.split_k, next,
                     [](const auto& st, const auto& a, bool) { return Kernels::template up_swapped_wide<T>(st, a); },
                     persistence);
    };
    const GemmForm& f = plan_.form1;
    const bool swapped = f.operands == GemmOperands::swapped;
    if (swapped && f.tile == kMlpSwapSlimTileN) return swapped_wide(std::integral_constant<int, kMlpSwapSlimTileN>{});
    if (swapped && f.tile == kMlpSwapMidTileN) return swapped_wide(std::integral_constant<int, kMlpSwapMidTileN>{});
    if (swapped && f.tile == kMlpSwap176TileN) return swapped_wide(std::integral_constant<int, kMlpSwap176TileN>{});
    if (swapped && f.tile == kMlpSwapWideTileN) return swapped_wide(std::integral_constant<int, kMlpSwapWideTileN>{});
    if (swapped && f.tile == kMlpSwap208TileN) return swapped_wide(std::integral_constant<int, kMlpSwap208TileN>{});
    if (swapped && f.tile == kMlpSwapWiderTileN) return swapped_wide(std::integral_constant<int, kMlpSwapWiderTileN>{});
    if (swapped) {
      // The 32-token kernel is referenced only where the kernel set has it (plan_mlp refuses it first).
      if constexpr (Act == Activation::gelu && kernel_forms.narrow_swapped) {
        if (f.tile == kMlpSwapTileN)
          return detail::formed_gemm(sm90::GemmArguments<SwapGeluConfig>{n1, s.m, s.hidden, w1, x, y}, f.split_k, next,
                         [](const auto& st, const auto& a, bool) { return Kernels::up_swapped(st, a); }, persistence);
      } else if constexpr (Act == Activation::gelu) {
        if (f.tile == kMlpSwapTileN) return detail::unformed_gemm(mlp_missing_kernels("baton::ops::mlp: gemm1 swapped in 32-token tiles"));
      }
      return detail::unformed_gemm(status(errc::not_supported, "baton::ops::mlp: no swapped GEMM1 kernel of " +
                                                       std::to_string(f.tile) + "-token tiles for " +
                                                       to_string(Act) + " (kernels: 144, 160, 176, 192, 208, 224, and 32 with GeLU)"));
    }
    auto plain_wide = [&](auto width) {
      constexpr int W = decltype(width)::value;
      return form(std::type_identity<PlainUpConfigT<Act, W>>{},
                  [](const auto& st, const auto& a, bool) { return Kernels::template up_plain_wide<W>(st, a); });
    };
    switch (f.tile) {
      case kMlpTile160N: return plain_wide(std::integral_constant<int, kMlpTile160N>{});
      case kMlpTile224N: return plain_wide(std::integral_constant<int, kMlpTile224N>{});
      case kMlpTileN:
        return form(std::type_identity<UpConfig<Act>>{}, [](const auto& st, const auto& a, bool) { return Kernels::up(st, a); });
      case kMlpNarrowTileN:
        if (f.cta_pairs) {
          if constexpr (kernel_forms.cta_pairs)
            return form(std::type_identity<PairUpConfig<Act>>{},
                        [](const auto& st, const auto& a, bool) { return Kernels::up_pair(st, a); });
          else
            return detail::unformed_gemm(mlp_missing_kernels("baton::ops::mlp: gemm1 as CTA pairs"));
        }
        return form(std::type_identity<NarrowUpConfig<Act>>{},
                    [](const auto& st, const auto& a, bool) { return Kernels::up_narrow(st, a); });
      case kMlpMidTileN:
        if (f.band_pairs) {
          if constexpr (kernel_forms.band_pairs)
            return form(std::type_identity<BandUpConfig<Act>>{},
                        [](const auto& st, const auto& a, bool) { return Kernels::up_band(st, a); });
          else
            return detail::unformed_gemm(mlp_missing_kernels("baton::ops::mlp: gemm1 as band pairs"));
        }
        return form(std::type_identity<MidUpConfig<Act>>{}, [](const auto& st, const auto& a, bool) { return Kernels::up_mid(st, a); });
      case kMlpWideTileN:
        return form(std::type_identity<WideUpConfig<Act>>{},
                    [](const auto& st, const auto& a, bool) { return Kernels::up_wide(st, a); });
      default: return detail::unformed_gemm(status(errc::invalid_argument, detail::no_gemm_width("baton::ops::mlp: gemm1", f.tile)));
    }
  }

  // GEMM2, Z = Y W2^T in plan_.form2 (detail::plain_gemm_in_form).
  FormedGemm gemm2_(const MlpTensors& t) const {
    const MlpShape& s = plan_.shape;
    return detail::plain_gemm_in_form<Kernels>(plan_.form2, s.m, s.hidden, s.ffn, static_cast<const bf16*>(t.y),
                                               static_cast<const bf16*>(t.w2), static_cast<bf16*>(t.z),
                                               "baton::ops::mlp: gemm2", sms_);
  }

  [[nodiscard]] status build_(const MlpTensors& t, cudaStream_t stream, const MlpRunOptions& o) {
    const MlpShape& s = plan_.shape;
    // GEMM1 prefetches the first k-blocks of W2's tile-parts into L2 as it ends (plan_mlp).
    sm90::NextWeights next{};
    if (plan_.l2_prefetch_kblocks > 0)
      next = {t.w2, s.hidden, s.ffn, plan_.form2.tile, kMlpTileK, plan_.form2.split_k, plan_.l2_prefetch_kblocks};
    FormedGemm f1 = gemm1_(t, next), f2 = gemm2_(t);
    BATON_TRY(f1.unformed.with_context("gemm1"));
    BATON_TRY(f2.unformed.with_context("gemm2"));
    // The waiting (and posting) kernels are plain 128x128 ones, of any split-K.
    auto edge_ok = [](const GemmForm& f) {
      return f.operands == GemmOperands::plain && f.tile == kMlpTileN && !f.cta_pairs && !f.band_pairs;
    };
    const bool plain_forms = edge_ok(plan_.form1) && edge_ok(plan_.form2);
    if (!plain_forms && plan_.policy != MlpPolicy::none)
      return status(errc::not_supported,
                    "baton::ops::mlp: tiles other than 128x128 (96-256 wide), CTA and band pairs and the swapped GEMMs "
                    "need policy none");
    BATON_TRY(detail::alloc_zeroed(sw1_, f1.split_bytes, stream, "split-K workspace (gemm1)"));
    BATON_TRY(detail::alloc_zeroed(sw2_, f2.split_bytes, stream, "split-K workspace (gemm2)"));
    // Shapes and pointers (and the split-K workspaces) before any stage is built or bound.
    BATON_TRY(f1.can(sw1_.data()).with_context("gemm1"));
    BATON_TRY(f2.can(sw2_.data()).with_context("gemm2"));

    const Grid g1 = plan_.gemm1, g2 = plan_.gemm2;
    BindOptions b1, b2;
    b1.watchdog_ns = b2.watchdog_ns = o.watchdog_ns;
    b1.trace = o.trace1;
    b2.trace = o.trace2;
    const Grouped order{plan_.group_m};
    const footprint::GemmA fp = sm90::gemm_a_footprint<mlp_kernels::UpConfig<Act>, mlp_kernels::DownConfig>(s.m, s.ffn);
    result<StageLaunch> l1 = status(errc::invalid_argument, "unset"), l2 = status(errc::invalid_argument, "unset");
    // row / kblock: semaphores between the 128x128 GEMMs; GEMM2's producer warp waits per k-block.
    auto edge_chain = [&](auto policy) -> status {
      const int n1 = Act == Activation::swiglu ? 2 * s.ffn : s.ffn;
      UpArgs up{s.m, n1, s.hidden, static_cast<const bf16*>(t.x), static_cast<const bf16*>(t.w1), static_cast<bf16*>(t.y)};
      DownArgs down{s.m, s.hidden, s.ffn, static_cast<const bf16*>(t.y), static_cast<const bf16*>(t.w2),
                    static_cast<bf16*>(t.z)};
      up.split_k = plan_.form1.split_k;
      down.split_k = plan_.form2.split_k;
      up.split_workspace = sw1_.data();
      down.split_workspace = sw2_.data();
      up.next_weights = next;
      auto s1 = chain_.add_stage("gemm1", g1, order, {.reads = {"X", "W1"}, .writes = {"Y"}});
      auto s2 = chain_.add_stage("gemm2", g2, order, {.reads = {"Y", "W2"}, .writes = {"Z"}});
      auto e = chain_.add_edge(s1, s2, policy, deps::gemm_a(fp, g2));
      BATON_TRY(chain_.validate());  // the soundness checker proves the policy before any launch
      BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
      auto st1 = chain_.bind(s1, ws_.data(), chain_.workspace_bytes(), outs(e), ins(), b1);
      auto st2 = chain_.bind(s2, ws_.data(), chain_.workspace_bytes(), outs(), ins(e), b2);
      if (!st1.ok()) return st1.error();
      if (!st2.ok()) return st2.error();
      l1 = Kernels::up(st1.value(), up);
      l2 = Kernels::down(st2.value(), down);
      return {};
    };
    switch (plan_.policy) {
      case MlpPolicy::kblock: BATON_TRY(edge_chain(mlp_kernels::kblock_policy<Act>(s.m, s.hidden, s.ffn))); break;
      case MlpPolicy::row: BATON_TRY(edge_chain(mlp_kernels::row_policy<Act>(s.m, s.hidden, s.ffn))); break;
      default: {  // none: no semaphores; the kernel boundary orders the GEMMs
        // Gemm2Launch::pdl (by default: GEMM1 in one wave): GEMM2 PDL-launched, loading its weights and
        // then waiting with griddepcontrol.wait before its loads of Y, so its launch, prologue and
        // first weight loads overlap GEMM1's end (the PDL launch alone measured 1-2 us faster at
        // decode); otherwise two plain launches.
        const bool pdl = plan_.launch == Gemm2Launch::pdl;
        sched_ = pdl ? LaunchSchedule::pdl : LaunchSchedule::serial;
        auto s1 = chain_.add_stage("gemm1", g1, order);
        auto s2 = chain_.add_stage("gemm2", g2, order);
        BATON_TRY(chain_.validate());
        BATON_TRY(detail::alloc_chain_workspace(chain_, ws_, stream));
        auto st1 = chain_.bind(s1, ws_.data(), chain_.workspace_bytes(), outs(), ins(), b1);
        auto st2 = chain_.bind(s2, ws_.data(), chain_.workspace_bytes(), outs(), ins(), b2);
        if (!st1.ok()) return st1.error();
        if (!st2.ok()) return st2.error();
        l1 = f1.launch(st1.value(), sw1_.data(), false);
        l2 = f2.launch(st2.value(), sw2_.data(), pdl);
      }
    }
    if (!l1.ok()) return l1.error().with_context("baton::ops::mlp gemm1");
    if (!l2.ok()) return l2.error().with_context("baton::ops::mlp gemm2");
    launches_ = {l1.value(), l2.value()};
    return {};
  }

  MlpPlan plan_;
  Chain chain_;
  async::device_allocation ws_;
  async::device_allocation sw1_;
  async::device_allocation sw2_;
  std::vector<StageLaunch> launches_;
  LaunchSchedule sched_ = LaunchSchedule::pdl;
  int sms_ = 0;
};

}  // namespace baton::ops
