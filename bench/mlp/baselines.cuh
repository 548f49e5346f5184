// bench/mlp/baselines.cuh — the MLP without baton's waits: the CUTLASS sm90 GEMMs back to back or
// PDL-launched (PlainMlp), on 128x256 tiles (WideMlp), cuBLASLt (LtMlp) and CUTLASS GemmUniversal
// Stream-K / persistent (UniversalMlp); the separate SwiGLU kernel the non-fused ones need.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baton/trace.hpp"
#include "common/device_memory.cuh"
#include "mlp/problem.cuh"
#include "mlp_universal.cuh"

namespace baton_bench::mlp {

using namespace baton;

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;  // cuBLASLt's workspace

[[nodiscard]] inline status lt_status(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return status(errc::cuda_error, "cuBLASLt " + what + ": " + cublasLtGetStatusString(s) + " (" + std::to_string(int(s)) + ")");
}
#define LT_TRY(expr) BATON_TRY(lt_status((expr), #expr))

// y [m, f] = SiLU(t[:, 2c]) * t[:, 2c + 1] (the baselines' separate SwiGLU kernel).
__global__ void swiglu_pairs_kernel(const bf16* __restrict__ t, bf16* __restrict__ y, int64_t m, int64_t f) {
  const int64_t n = m * f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / f, c = i % f;
    const float g = float(t[r * 2 * f + 2 * c]), u = float(t[r * 2 * f + 2 * c + 1]);
    y[i] = bf16(g / (1.f + __expf(-g)) * u);
  }
}
[[nodiscard]] inline status swiglu_pairs(const Problem& p, cudaStream_t s) {
  const int64_t n = int64_t(p.m) * p.f;
  const int blocks = int(std::min<int64_t>((n + 255) / 256, 8192));
  swiglu_pairs_kernel<<<blocks, 256, 0, s>>>(p.t, p.y, p.m, p.f);
  return cuda_status(cudaGetLastError(), "launching the SwiGLU kernel");
}

// The CUTLASS baselines: two stages without edges (each still takes its tile from a ticket).
struct PlainMlp {
  Chain chain;
  bench::device_buffer ws;
  std::vector<StageLaunch> serial, pdl;  // {gemm1, gemm2}, {gemm1, gemm2 with griddepcontrol.wait}
  std::unique_ptr<status> built;         // the first build's outcome (three variants share it)

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream, TileEvent* trace1 = nullptr,
                             TileEvent* trace2 = nullptr) {
    const Grid g1 = p.g1(), g2 = p.g2();
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m});
    BATON_TRY(chain.validate());
    BATON_TRY(bench::device_alloc(ws, chain.workspace_bytes(), stream, "plain workspace"));
    BATON_TRY(initialize_workspace(chain, ws.data(), chain.workspace_bytes(), stream));
    BindOptions o1, o2;
    o1.trace = trace1;
    o2.trace = trace2;
    auto b1 = chain.bind(s1, ws.data(), chain.workspace_bytes(), outs(), ins(), o1);
    auto b2 = chain.bind(s2, ws.data(), chain.workspace_bytes(), outs(), ins(), o2);
    if (!b1.ok()) return b1.error();
    if (!b2.ok()) return b2.error();
    auto l1 = p.launch1(b1.value());
    auto l2 = gemm2_launch(b2.value(), p.args2());
    auto l2w = gemm2_pdl_wait_launch(b2.value(), p.args2());
    if (!l1.ok()) return l1.error().with_context("gemm1");
    if (!l2.ok()) return l2.error().with_context("gemm2");
    if (!l2w.ok()) return l2w.error().with_context("gemm2 (PDL wait)");
    serial = {l1.value(), l2.value()};
    pdl = {l1.value(), l2w.value()};
    return {};
  }
};

// Two plain GEMMs on 128x256 tiles (wide1 = false: GEMM1 keeps 128x128 tiles and the planned
// split-K), launched one after the other; no split-K on the wide GEMMs.
struct WideMlp {
  bool wide1 = true;
  Chain chain;
  bench::device_buffer ws;
  std::vector<StageLaunch> launches;

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream) {
    const Grid g1 = !wide1 ? p.g1()
                    : p.swiglu ? sm90::tile_grid<WideSwiConfig1>(p.m, 2 * p.f)
                               : sm90::tile_grid<WideConfig1>(p.m, p.f);
    const Grid g2 = sm90::tile_grid<WideConfig2>(p.m, p.h);
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m});
    BATON_TRY(chain.validate());
    BATON_TRY(bench::device_alloc(ws, chain.workspace_bytes(), stream, "wide workspace"));
    BATON_TRY(initialize_workspace(chain, ws.data(), chain.workspace_bytes(), stream));
    auto b1 = chain.bind(s1, ws.data(), chain.workspace_bytes(), outs(), ins());
    auto b2 = chain.bind(s2, ws.data(), chain.workspace_bytes(), outs(), ins());
    if (!b1.ok()) return b1.error();
    if (!b2.ok()) return b2.error();
    auto l1 = !wide1   ? p.launch1(b1.value())
              : p.swiglu ? gemm1_wide_launch(b1.value(), WideSwiArgs1{p.m, 2 * p.f, p.h, p.x, p.w1, p.y})
                         : gemm1_wide_launch(b1.value(), WideArgs1{p.m, p.f, p.h, p.x, p.w1, p.y});
    auto l2 = gemm2_wide_launch(b2.value(), WideArgs2{p.m, p.h, p.f, p.y, p.w2, p.z});
    if (!l1.ok()) return l1.error().with_context("gemm1");
    if (!l2.ok()) return l2.error().with_context("gemm2 (128x256)");
    launches = {l1.value(), l2.value()};
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t stream) { return launch_chain(chain, stream, launches, LaunchSchedule::serial); }
};

// cuBLASLt: column-major view. Y^T [F, M] = op(W1) X^T with W1 stored [F, H] row-major, i.e. an
// H x F column-major matrix used transposed; X [M, H] row-major is X^T as H x M column-major.
struct LtMlp {
  cublasLtHandle_t h = nullptr;
  void* workspace = nullptr;
  cublasLtMatmulDesc_t op1 = nullptr, op2 = nullptr;
  cublasLtMatrixLayout_t a1 = nullptr, b1 = nullptr, d1 = nullptr, a2 = nullptr, b2 = nullptr, d2 = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo1{}, algo2{};
  Problem p;
  ~LtMlp() {
    for (auto l : {a1, b1, d1, a2, b2, d2})
      if (l) (void)cublasLtMatrixLayoutDestroy(l);
    if (op1) (void)cublasLtMatmulDescDestroy(op1);
    if (op2) (void)cublasLtMatmulDescDestroy(op2);
    if (pref) (void)cublasLtMatmulPreferenceDestroy(pref);
  }
  [[nodiscard]] status build(const Problem& prob, cublasLtHandle_t handle, void* ws) {
    p = prob;
    h = handle;
    workspace = ws;
    const cublasOperation_t T = CUBLAS_OP_T, N = CUBLAS_OP_N;
    const cublasLtEpilogue_t gelu = CUBLASLT_EPILOGUE_GELU;
    LT_TRY(cublasLtMatmulDescCreate(&op1, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_TRY(cublasLtMatmulDescCreate(&op2, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    for (auto op : {op1, op2}) {
      LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T));
      LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &N, sizeof N));
    }
    if (!p.swiglu) LT_TRY(cublasLtMatmulDescSetAttribute(op1, CUBLASLT_MATMUL_DESC_EPILOGUE, &gelu, sizeof gelu));
    const uint64_t n1 = uint64_t(p.swiglu ? 2 * p.f : p.f);  // SwiGLU: [M, 2F] then the SwiGLU kernel
    LT_TRY(cublasLtMatrixLayoutCreate(&a1, CUDA_R_16BF, uint64_t(p.h), n1, int64_t(p.h)));            // W1
    LT_TRY(cublasLtMatrixLayoutCreate(&b1, CUDA_R_16BF, uint64_t(p.h), uint64_t(p.m), int64_t(p.h)));  // X
    LT_TRY(cublasLtMatrixLayoutCreate(&d1, CUDA_R_16BF, n1, uint64_t(p.m), int64_t(n1)));              // Y or T
    LT_TRY(cublasLtMatrixLayoutCreate(&a2, CUDA_R_16BF, uint64_t(p.f), uint64_t(p.h), int64_t(p.f)));  // W2
    LT_TRY(cublasLtMatrixLayoutCreate(&b2, CUDA_R_16BF, uint64_t(p.f), uint64_t(p.m), int64_t(p.f)));  // Y
    LT_TRY(cublasLtMatrixLayoutCreate(&d2, CUDA_R_16BF, uint64_t(p.h), uint64_t(p.m), int64_t(p.h)));  // Z
    LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t wsb = kLtWorkspaceBytes;
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    BATON_TRY(top_algo_(op1, a1, b1, d1, algo1, p.swiglu ? "GEMM1 (gate/up)" : "GEMM1 (GELU epilogue)"));
    BATON_TRY(top_algo_(op2, a2, b2, d2, algo2, "GEMM2"));
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) const {
    BATON_TRY(enqueue_gemm1(s));
    return enqueue_gemm2(s);
  }
  // GEMM1 (and the SwiGLU kernel after it), GEMM2: each alone for the breakdown.
  [[nodiscard]] status enqueue_gemm1(cudaStream_t s) const {
    const float alpha = 1.f, beta = 0.f;
    bf16* out1 = p.swiglu ? p.t : p.y;
    LT_TRY(cublasLtMatmul(h, op1, &alpha, p.w1, a1, p.x, b1, &beta, out1, d1, out1, d1, &algo1, workspace,
                          kLtWorkspaceBytes, s));
    if (p.swiglu) BATON_TRY(swiglu_pairs(p, s));
    return {};
  }
  [[nodiscard]] status enqueue_gemm2(cudaStream_t s) const {
    const float alpha = 1.f, beta = 0.f;
    LT_TRY(cublasLtMatmul(h, op2, &alpha, p.w2, a2, p.y, b2, &beta, p.z, d2, p.z, d2, &algo2, workspace,
                          kLtWorkspaceBytes, s));
    return {};
  }

 private:
  [[nodiscard]] status top_algo_(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                 cublasLtMatrixLayout_t d, cublasLtMatmulAlgo_t& out, const char* what) {
    cublasLtMatmulHeuristicResult_t res{};
    int n = 0;
    LT_TRY(cublasLtMatmulAlgoGetHeuristic(h, op, a, b, d, d, pref, 1, &res, &n));
    if (n < 1 || res.state != CUBLAS_STATUS_SUCCESS)
      return status(errc::not_supported, std::string("cuBLASLt found no algorithm for ") + what);
    out = res.algo;
    // What the heuristic chose, as cublasLt.h ids (tile: cublasLtMatmulTile_t, stages:
    // cublasLtMatmulStages_t, cluster: cublasLtClusterShape_t): where our kernels differ.
    auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t a) {
      // The buffer size must match the attribute's: ask for it first (integers of 2, 4 or 8 bytes).
      size_t size = 0;
      if (cublasLtMatmulAlgoConfigGetAttribute(&out, a, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 ||
          size > 8)
        return -1LL;
      uint64_t v = 0;  // little-endian: the low `size` bytes
      size_t written = 0;
      if (cublasLtMatmulAlgoConfigGetAttribute(&out, a, &v, size, &written) != CUBLAS_STATUS_SUCCESS) return -1LL;
      return (long long)(size == 2 ? (v & 0xffff) : size == 4 ? (v & 0xffffffffu) : v);
    };
    std::printf("cuBLASLt %s: algo %lld tile %lld stages %lld split-K %lld reduction %lld swizzle %lld cluster %lld "
                "inner %lld (waves %.2f)\n",
                what, attr(CUBLASLT_ALGO_CONFIG_ID), attr(CUBLASLT_ALGO_CONFIG_TILE_ID), attr(CUBLASLT_ALGO_CONFIG_STAGES_ID),
                attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), attr(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                attr(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), attr(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
                attr(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID), double(res.wavesCount));
    return {};
  }
};

// CUTLASS GemmUniversal (Stream-K or persistent data-parallel): GEMM1 (GeLU fused, or plain into
// [M, 2F] followed by the SwiGLU kernel), then GEMM2.
struct UniversalMlp {
  std::unique_ptr<UniversalGemm> g1, g2;
  Problem p;
  [[nodiscard]] status build(const Problem& prob, SchedulerMode mode, int sms, cudaStream_t stream) {
    p = prob;
    auto a = p.swiglu ? make_universal_plain(p.m, 2 * p.f, p.h, p.x, p.w1, p.t, mode, sms, stream)
                      : make_universal_gelu(p.m, p.f, p.h, p.x, p.w1, p.y, mode, sms, stream);
    if (!a.ok()) return a.error().with_context("gemm1");
    auto b = make_universal_plain(p.m, p.h, p.f, p.y, p.w2, p.z, mode, sms, stream);
    if (!b.ok()) return b.error().with_context("gemm2");
    g1 = std::move(a.value());
    g2 = std::move(b.value());
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) const {
    BATON_TRY(g1->run(s));
    if (p.swiglu) BATON_TRY(swiglu_pairs(p, s));
    return g2->run(s);
  }
};

}  // namespace baton_bench::mlp
