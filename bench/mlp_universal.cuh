// bench/mlp_universal.cuh — the CUTLASS GemmUniversal baselines of bench/mlp.cu: the cooperative
// sm90 kernel with CUTLASS's StreamKScheduler (persistent CTAs; Stream-K, data-parallel or
// heuristic decomposition), built from the same collectives as the baton GEMM (Config::BaseMainloop,
// Config::BaseEpilogue). Included by mlp_universal.cu.
#pragma once

#include "mlp_gemms.cuh"  // first: baton/ops/mlp.cuh must precede CuTe's first inclusion

#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

#include <string>

namespace baton_bench::mlp {

template <class Config>
class UniversalGemmImpl final : public UniversalGemm {
 public:
  using Kernel = ::cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, typename Config::BaseMainloop,
                                                        typename Config::BaseEpilogue, ::cutlass::gemm::StreamKScheduler>;
  using Op = ::cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  ~UniversalGemmImpl() override {
    if (workspace_) (void)cudaFree(workspace_);
  }

  [[nodiscard]] baton::status init(int m, int n, int k, const bf16* a, const bf16* b, bf16* d, SchedulerMode mode, int sms,
                                   cudaStream_t stream) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    using StrideC = typename Kernel::StrideC;
    using StrideD = typename Kernel::StrideD;
    using Decomposition = typename Kernel::TileScheduler::DecompositionMode;
    args_.mode = ::cutlass::gemm::GemmUniversalMode::kGemm;
    args_.problem_shape = {m, n, k, 1};
    args_.mainloop = {a, ::cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m, k, 1)), b,
                      ::cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n, k, 1))};
    args_.epilogue = {{}, nullptr, ::cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(m, n, 1)), d,
                      ::cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, n, 1))};
    args_.hw_info.device_id = 0;
    args_.hw_info.sm_count = sms;
    args_.scheduler.decomposition_mode = mode == SchedulerMode::stream_k        ? Decomposition::StreamK
                                         : mode == SchedulerMode::data_parallel ? Decomposition::DataParallel
                                                                                : Decomposition::Heuristic;
    const std::string what = "CUTLASS GemmUniversal m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
    if (Op::can_implement(args_) != ::cutlass::Status::kSuccess)
      return baton::status(baton::errc::not_supported, what + ": can_implement failed");
    const size_t bytes = Op::get_workspace_size(args_);
    if (bytes > 0) BATON_TRY(baton::cuda_status(cudaMalloc(&workspace_, bytes), what + ": workspace"));
    if (op_.initialize(args_, workspace_, stream) != ::cutlass::Status::kSuccess)
      return baton::status(baton::errc::cuda_error, what + ": initialize failed");
    what_ = what;
    return {};
  }

  [[nodiscard]] baton::status run(cudaStream_t stream) override {
    // Stream-K's reduction barriers are not reset by the kernel: zero them before every run.
    if (Kernel::initialize_workspace(args_, workspace_, stream) != ::cutlass::Status::kSuccess)
      return baton::status(baton::errc::cuda_error, what_ + ": initialize_workspace failed");
    if (op_.run(stream) != ::cutlass::Status::kSuccess)
      return baton::status(baton::errc::cuda_error, what_ + ": run failed: " + cudaGetErrorString(cudaGetLastError()));
    return {};
  }

 private:
  Op op_;
  typename Op::Arguments args_{};
  void* workspace_ = nullptr;
  std::string what_;
};

template <class Config>
baton::result<std::unique_ptr<UniversalGemm>> make_universal(int m, int n, int k, const bf16* a, const bf16* b, bf16* d,
                                                             SchedulerMode mode, int sms, cudaStream_t stream) {
  auto g = std::make_unique<UniversalGemmImpl<Config>>();
  BATON_TRY(g->init(m, n, k, a, b, d, mode, sms, stream));
  return std::unique_ptr<UniversalGemm>(std::move(g));
}

}  // namespace baton_bench::mlp
