// baton/cutlass/sm90_conv.cuh — a Hopper (sm_90a) implicit-GEMM 2-D convolution (fprop) whose tiles
// are ordered, waited on and published by a baton Stage. NHWC bf16 in, fp32 accumulate, bf16 out:
//
//   D[n, p, q, k] = act(sum_{r, s, c} X[n, p*U - E + r, q*U - E + s, c] * F[k, r, s, c] + bias[k] (+ R[n, p, q, k]))
//
//   X  activations [N, H, W, C]   (may be produced by an earlier stage: the waits cover the R x S halo)
//   F  filters     [K, R, S, C]   (must exist before the chain starts)
//   D  output      [N, P, Q, K]   = a row-major [N*P*Q, K] matrix: GEMM rows are output pixels
//   bias [K], R (ConvConfig<..., Residual = true>) [N, P, Q, K]: read by the epilogue, never waited
//   for (chain inputs, like the filters)
//
// Built from CUTLASS 4.2 collectives: the mainloop is CUTLASS's sm90 implicit-GEMM fprop collective
// (A through SM90_TMA_LOAD_IM2COL, filters through plain TMA), wrapped in WaitingMainloop so that
// the filters stream first and each k-block of A is loaded only once the stage's horizon says the
// producer tiles it reads (halo included) have posted; the epilogue is CUTLASS's TMA epilogue with
// the per-channel bias + ReLU fusion (and the residual as its C source), wrapped in PostingEpilogue.
// The kernel is GemmKernel (sm90_gemm.cuh): the same warp roles, ticket, sync warp, split-K.
//
// The k-loop walks (channel block, s, r), channel blocks fastest: k = (r*S + s) * ceil(C/BLK_K) + cb,
// the order of baton::footprint::ConvHalo, deps::conv_exact and batonc's `k r < R, s < S, cb < ...`.
//
// Requirements (Conv::can_implement): C and K multiples of 8 (16-byte TMA strides), 16-byte aligned
// pointers, the filter and padding within the im2col TMA's limits (pad < 128, R, S <= 255).
#pragma once

#if !__has_include(<cutlass/cutlass.h>)
#error "baton/cutlass/sm90_conv.cuh needs CUTLASS 4.2 on the include path: link the CMake target baton::cutlass (configure baton with -DBATON_WITH_CUTLASS=ON, or -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>), or add <cutlass>/include and <cutlass>/tools/util/include (pip: nvidia-cutlass==4.2.0.0, under cutlass_library/source/)"
#endif

#include "baton/cutlass/sm90_gemm.cuh"  // first: it sets CuTe's extended GMMA shapes

#include <cstdint>
#include <string>
#include <type_traits>

#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/detail.hpp>
#include <cutlass/conv/dispatch_policy.hpp>
#include <cutlass/epilogue/thread/activation.h>

namespace baton::sm90 {

// TileShape: (output pixels, output channels, (input channels per k-block)); 128 pixels (the
// cooperative kernel's two MMA warp groups split them). The k extent is a nested shape, as CUTLASS's
// conv tests write it: local_tile then tiles the (C, S, R) k mode by its channel mode only.
// Residual: the epilogue adds R (its C source).
template <class TileShape_ = cute::Shape<cute::_128, cute::_64, cute::Shape<cute::_64>>, bool Residual_ = false>
struct ConvConfig {
  using Element = ::cutlass::bfloat16_t;
  using ElementAccumulator = float;
  using TileShape = TileShape_;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  static constexpr int cluster_n = 1;
  static constexpr int cluster_m = 1;
  static constexpr int cluster_size = 1;
  static constexpr int kAlignment = 8;
  static constexpr int tile_m = int(cute::size<0>(TileShape{}));
  static constexpr int tile_n = int(cute::size<1>(TileShape{}));
  static constexpr int tile_k = int(cute::size<2>(TileShape{}));
  static_assert(tile_m == 128, "baton::sm90::ConvConfig: 128-pixel tiles (the cooperative schedule's two warp groups)");
  // GemmKernel's GEMM-only forms, off.
  static constexpr bool swiglu_pairs = false, swiglu_rows = false, d_column_major = false;
  static constexpr int out_tile_n = tile_n;
  static constexpr int out_cols(int n) { return n; }
  static constexpr bool residual = Residual_;

  using LayoutD = ::cutlass::layout::RowMajor;  // [N*P*Q, K]
  using ElementC = std::conditional_t<Residual_, Element, void>;
  // D = ReLU(acc + bias[k] + beta * R): beta = 1 with a residual, no source without.
  using FusionOp = ::cutlass::epilogue::fusion::LinCombPerColBiasEltAct<::cutlass::epilogue::thread::ReLu, Element,
                                                                         float, Element, Element, float>;
  using BaseEpilogue = typename ::cutlass::epilogue::collective::CollectiveBuilder<
      ::cutlass::arch::Sm90, ::cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      ::cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator, ElementC, LayoutD,
      kAlignment, Element, LayoutD, kAlignment, ::cutlass::epilogue::TmaWarpSpecializedCooperative, FusionOp>::CollectiveOp;
  // CUTLASS 4.2 builds sm90 convolutions for its one-MMA-warp-group schedule only (the cooperative
  // and ping-pong dispatch policies static_assert). GemmKernel runs two MMA warp groups over a
  // 128-row tile, so the collective is the builder's with its TiledMma laid out 2 x 1 x 1 (each warp
  // group 64 rows), as the GEMM builder does for KernelTmaWarpSpecializedCooperative. Nothing else
  // in the collective depends on the schedule: load(), mma() and the shared-memory layouts are the
  // same code; mma() partitions by the MMA thread index over the TiledMma it is given.
  using ConvBuilder = ::cutlass::conv::collective::CollectiveBuilder<
      ::cutlass::arch::Sm90, ::cutlass::arch::OpClassTensorOp, ::cutlass::conv::Operator::kFprop, Element,
      ::cutlass::layout::TensorNHWC, kAlignment, Element, ::cutlass::layout::TensorNHWC, kAlignment, ElementAccumulator,
      TileShape, ClusterShape,
      ::cutlass::conv::collective::StageCountAutoCarveout<int(sizeof(typename BaseEpilogue::SharedStorage))>,
      ::cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>;
  using CooperativeTiledMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<Element, Element, ElementAccumulator, TileShape, cute::GMMA::Major::K,
                                 cute::GMMA::Major::K>(),
      cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}));
  using BaseMainloop = ::cutlass::conv::collective::CollectiveConv<
      typename ConvBuilder::DispatchPolicy, TileShape, Element, Element, CooperativeTiledMma,
      ::cutlass::conv::collective::detail::Sm90ImplicitGemmTileTraits<typename ConvBuilder::GmemTiledCopyA,
                                                                       typename ConvBuilder::SmemLayoutA>,
      ::cutlass::conv::collective::detail::Sm90ImplicitGemmTileTraits<typename ConvBuilder::GmemTiledCopyB,
                                                                       typename ConvBuilder::SmemLayoutB>>;
  using FusionArguments = typename BaseEpilogue::FusionCallbacks::Arguments;
  using CutlassProblemShape = ::cutlass::conv::ConvProblemShape<::cutlass::conv::Operator::kFprop, 2>;
  // (N*P*Q, K, (C, S, R), 1): CUTLASS's linearized fprop problem, with L a run-time 1 (the epilogue's
  // TMA types are built for a dynamic L, as for a GEMM).
  using LinearShape = decltype(::cutlass::conv::detail::get_linearized_problem_shape_MNKL(CutlassProblemShape{}));
  using ProblemShape = cute::Shape<int, int, std::remove_cvref_t<decltype(cute::get<2>(LinearShape{}))>, int>;
};

// One convolution's extents: X [n, h, w, c], filters [k, r, s, c], output [n, p, q, k].
struct ConvShape {
  int n = 1, h = 0, w = 0, c = 0;  // input
  int k = 0;                       // output channels
  int r = 3, s = 3;                // filter
  int stride = 1, pad = 1;
  constexpr int p() const { return (h + 2 * pad - r) / stride + 1; }
  constexpr int q() const { return (w + 2 * pad - s) / stride + 1; }
  constexpr int64_t pixels() const { return int64_t(n) * p() * q(); }  // GEMM rows
  std::string str() const {
    return "n=" + std::to_string(n) + " h=" + std::to_string(h) + " w=" + std::to_string(w) + " c=" +
           std::to_string(c) + " k=" + std::to_string(k) + " r=" + std::to_string(r) + " s=" + std::to_string(s) +
           " stride=" + std::to_string(stride) + " pad=" + std::to_string(pad);
  }
};

// Host arguments of one convolution.
template <class Config>
struct ConvArguments {
  ConvShape shape{};
  const ::cutlass::bfloat16_t* x = nullptr;         // [n, h, w, c]; may be produced by an earlier stage
  const ::cutlass::bfloat16_t* filter = nullptr;    // [k, r, s, c]
  const ::cutlass::bfloat16_t* bias = nullptr;      // [k]
  const ::cutlass::bfloat16_t* residual = nullptr;  // [n, p, q, k] (Config::residual only; a chain input)
  ::cutlass::bfloat16_t* d = nullptr;               // [n, p, q, k]
  // Split-K over the (channel block, s, r) k-blocks, reduced as in GemmArguments::split_k.
  int split_k = 1;
  void* split_workspace = nullptr;
  uint32_t debug_max_tile_delay_ns = 0;  // tests only (GemmArguments)
};

// The stage's grid: 128-pixel x tile_n-channel output tiles.
template <class Config>
constexpr Grid conv_tile_grid(const ConvShape& s) {
  return Grid{int(ceil_div(s.pixels(), int64_t(Config::tile_m))), ceil_div(s.k, Config::tile_n), 1};
}
// The k-blocks a tile walks: R * S * ceil(C / tile_k).
template <class Config>
constexpr int conv_k_blocks(const ConvShape& s) {
  return s.r * s.s * ceil_div(s.c, Config::tile_k);
}
// Where a consumer convolution's input lies on the tiles of the producer that wrote it (the
// producer's output [n, h, w, c] row-major in ProducerConfig's tiles): for ConvPolicy.
template <class ProducerConfig, class ConsumerConfig = ProducerConfig>
constexpr footprint::ConvHalo conv_halo_footprint(const ConvShape& consumer) {
  return footprint::ConvHalo{consumer.n, consumer.h, consumer.w, consumer.c, consumer.r, consumer.s, consumer.stride,
                             consumer.pad, ProducerConfig::tile_m, ProducerConfig::tile_n, ConsumerConfig::tile_m,
                             ConsumerConfig::tile_k};
}

template <class Config>
constexpr size_t conv_split_workspace_bytes(const ConvArguments<Config>& args) {
  return detail::split_workspace_bytes(conv_tile_grid<Config>(args.shape), args.split_k, Config::tile_m, Config::tile_n);
}

template <class Config, class StageT, GridWait Wait = NoGridWait>
class Conv {
 public:
  using Kernel = GemmKernel<Config, StageT, Wait>;
  using Params = typename Kernel::Params;
  using Arguments = ConvArguments<Config>;
  static constexpr size_t smem_bytes = size_t(Kernel::SharedStorageSize);
  static constexpr unsigned threads = Kernel::MaxThreadsPerBlock;

  [[nodiscard]] static status can_implement(const Arguments& args) {
    const ConvShape& s = args.shape;
    const std::string what = "sm90 conv " + s.str();
    if (s.n < 1 || s.h < 1 || s.w < 1 || s.c < 1 || s.k < 1 || s.r < 1 || s.s < 1)
      return status(errc::invalid_argument, what + ": every extent must be >= 1");
    if (s.stride < 1 || s.pad < 0)
      return status(errc::invalid_argument, what + ": stride must be >= 1 and pad >= 0");
    if (s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.s)
      return status(errc::invalid_argument, what + ": the filter is larger than the padded input");
    if (s.c % Config::kAlignment != 0 || s.k % Config::kAlignment != 0)
      return status(errc::not_supported, what + ": c and k must be multiples of " + std::to_string(Config::kAlignment) +
                                             " (TMA needs 16-byte strides); pad the channels");
    // The im2col TMA's limits (CUTLASS's can_implement): corners in [-128, 127], filter offsets < 255.
    if (s.pad > 127 || s.r > 255 || s.s > 255)
      return status(errc::not_supported, what + ": pad must be <= 127 and r, s <= 255 (im2col TMA limits)");
    if (s.pixels() > int64_t(INT32_MAX))
      return status(errc::not_supported, what + ": n*p*q exceeds 2^31 - 1 output pixels");
    if (args.x == nullptr || args.filter == nullptr || args.bias == nullptr || args.d == nullptr)
      return status(errc::invalid_argument, what + ": x, filter, bias and d must be non-null");
    if (Config::residual && args.residual == nullptr)
      return status(errc::invalid_argument, what + ": this kernel adds a residual; residual must be non-null");
    auto misaligned = [](const void* p) { return p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (misaligned(args.x) || misaligned(args.filter) || misaligned(args.bias) || misaligned(args.d) ||
        misaligned(args.residual))
      return status(errc::not_supported, what + ": x, filter, bias, residual and d must be 16-byte aligned (TMA)");
    const int k_tiles = conv_k_blocks<Config>(s);
    if (args.split_k < 1 || args.split_k > k_tiles)
      return status(errc::invalid_argument, what + ": split_k=" + std::to_string(args.split_k) + " must be in [1, " +
                                                std::to_string(k_tiles) + "] (the number of k-blocks)");
    if (args.split_k > 1 && args.split_workspace == nullptr)
      return status(errc::invalid_argument, what + ": split_k > 1 needs split_workspace (split_workspace_bytes)");
    if (!Kernel::Mainloop::can_implement(cutlass_shape_(s), typename Kernel::Mainloop::Arguments{args.x, args.filter}))
      return status(errc::not_supported, what + ": CUTLASS's sm90 implicit-GEMM fprop cannot implement this shape");
    return {};
  }

  [[nodiscard]] static result<Params> to_params(const StageT& stage, const Arguments& args) {
    BATON_TRY(can_implement(args));
    const ConvShape& s = args.shape;
    const Grid g = conv_tile_grid<Config>(s);
    if (!(stage.grid == g))
      return status(errc::invalid_argument, "sm90 conv " + s.str() + ": the stage's grid " + to_string(stage.grid) +
                                                " is not conv_tile_grid (" + to_string(g) + ")");
    if (stage.ticket == nullptr) return status(errc::invalid_argument, "sm90 conv: the stage has no ticket counter (bind it)");
    BATON_TRY(check_inputs_(stage, args, std::make_integer_sequence<int, StageT::num_inputs>{}));
    BATON_TRY(check_outputs_(stage, std::make_integer_sequence<int, StageT::num_outputs>{}));
    const auto cps = cutlass_shape_(s);
    const auto linear = ::cutlass::conv::detail::get_linearized_problem_shape_MNKL(cps);
    const typename Config::ProblemShape shape{int(cute::get<0>(linear)), int(cute::get<1>(linear)), cute::get<2>(linear), 1};
    Params p{};
    p.problem_shape = shape;
    p.mainloop = Kernel::Mainloop::to_underlying_arguments(cps, {args.x, args.filter}, nullptr);
    const int m = int(s.pixels());
    using StrideC = typename Kernel::Epilogue::StrideC;
    using StrideD = typename Kernel::Epilogue::StrideD;
    typename Config::FusionArguments fusion{};
    fusion.alpha = 1.0f;
    fusion.beta = Config::residual ? 1.0f : 0.0f;
    fusion.bias_ptr = args.bias;
    typename Kernel::Epilogue::Arguments epi{fusion, Config::residual ? args.residual : nullptr,
                                             ::cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(m, s.k, 1)),
                                             args.d,
                                             ::cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, s.k, 1))};
    p.epilogue = Kernel::Epilogue::to_underlying_arguments(shape, epi, nullptr);
    p.stage = stage;
    p.debug_max_tile_delay_ns = args.debug_max_tile_delay_ns;
    p.split_k = args.split_k;
    if (args.split_k > 1) {
      auto* base = static_cast<unsigned char*>(args.split_workspace);
      p.split_counters = reinterpret_cast<uint32_t*>(base);
      p.split_partials = reinterpret_cast<float*>(base + detail::split_counters_bytes(stage.grid));
    }
    return p;
  }

  [[nodiscard]] static size_t split_workspace_bytes(const Arguments& args) { return conv_split_workspace_bytes<Config>(args); }
  // Zeroes the split-K counters (stream-ordered), once before the workspace's first use.
  [[nodiscard]] static status clear_split_workspace(const Arguments& args, cudaStream_t stream) {
    return detail::clear_split_counters(args.split_k, args.split_workspace, conv_tile_grid<Config>(args.shape), stream,
                                        "sm90 conv");
  }

  // A launch for baton::launch_chain: split_k CTAs per output tile, 384 threads.
  [[nodiscard]] static result<StageLaunch> make_launch(const StageT& stage, const Arguments& args) {
    auto params = to_params(stage, args);
    if (!params.ok()) return params.error();
    return detail::kernel_launch<Kernel>(params.value(), stage.grid.size(), args.split_k, "sm90 conv");
  }


 private:
  static typename Config::CutlassProblemShape cutlass_shape_(const ConvShape& s) {
    using CPS = typename Config::CutlassProblemShape;
    return CPS(::cutlass::conv::Mode::kCrossCorrelation, typename CPS::TensorExtent{s.n, s.h, s.w, s.c},
               typename CPS::TensorExtent{s.k, s.r, s.s, s.c}, typename CPS::ShapePadding{s.pad, s.pad},
               typename CPS::ShapePadding{s.pad, s.pad}, typename CPS::TraversalStride{s.stride, s.stride},
               typename CPS::ShapeDilation{1, 1}, 1);
  }

  // Every input policy must walk exactly this convolution's k-blocks (channel block, s, r).
  template <int... I>
  static status check_inputs_(const StageT& stage, const Arguments& args, std::integer_sequence<int, I...>) {
    status st;
    ((st.ok() ? (void)(st = check_input_<I>(stage, args)) : (void)0), ...);
    return st;
  }
  template <int I>
  static status check_input_(const StageT& stage, const Arguments& args) {
    const auto& policy = baton::detail::get<I>(stage.in).policy;
    const int k_tiles = conv_k_blocks<Config>(args.shape);
    if (policy.k_blocks() != k_tiles)
      return status(errc::invalid_policy, "sm90 conv input " + std::to_string(I) + ": the policy has " +
                                              std::to_string(policy.k_blocks()) + " k-blocks but the convolution " +
                                              args.shape.str() + " walks " + std::to_string(k_tiles) + " (R*S*ceil(C/" +
                                              std::to_string(Config::tile_k) + ")): it describes another shape");
    return {};
  }
  template <int... I>
  static status check_outputs_(const StageT& stage, std::integer_sequence<int, I...>) {
    status st;
    ((st.ok() ? (void)(st = check_output_<I>(stage)) : (void)0), ...);
    return st;
  }
  template <int I>
  static status check_output_(const StageT& stage) {
    const auto& policy = baton::detail::get<I>(stage.out).policy;
    if (!(policy.producer_grid() == stage.grid))
      return status(errc::invalid_policy, "sm90 conv output " + std::to_string(I) + ": the policy's producer grid " +
                                              to_string(policy.producer_grid()) + " is not this convolution's tile grid " +
                                              to_string(stage.grid));
    return {};
  }
};

}  // namespace baton::sm90
