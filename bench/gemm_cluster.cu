// bench/gemm_cluster.cu — one bf16 GEMM D[m, n] = A[m, k] B[n, k]^T, the MLP's shapes, timed with
// CUTLASS 4.2's persistent cooperative and ping-pong sm90 kernels in several tile and cluster shapes,
// and baton's own GEMM, against cuBLASLt's heuristic choice (target baton_bench_gemm_cluster;
// docs/mlp.md, "Band pairs" and "176- and 208-token tiles").
//
// The question it answers: at M >= 256, where ops::Mlp's 128-row tiles run 5-30% behind cuBLASLt,
// how much do 2-CTA clusters that multicast the weights (cluster 2 x 1: two row bands, one weight
// tile) or 256-row tiles buy, with everything else (collectives, scheduler) the same? The answer
// decides whether the op's kernel library gets such forms. And at short k (Phi-2's GEMM1, k = 2560),
// where each 128-row tile's epilogue is a large part of its time, how much CUTLASS's ping-pong kernel
// (one MMA warp group's epilogue under the other's mainloop) buys over the cooperative one. Timing:
// rounds over all variants (interleaved, so clock drift hits every variant alike), each round
// `iters` back-to-back launches between two CUDA events, median over rounds. Inputs are random; every CUTLASS output is compared
// with cuBLASLt's (relative Frobenius error).
#include "baton/baton.cuh"
#include "baton/cutlass/sm90_gemm.cuh"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/util/packed_stride.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using bf16 = cutlass::bfloat16_t;

#define CK(x)                                                                                         \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      return 1;                                                                                       \
    }                                                                                                 \
  } while (0)
#define LK(x)                                                                                         \
  do {                                                                                                \
    cublasStatus_t s_ = (x);                                                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cublasLtGetStatusString(s_));   \
      return 1;                                                                                       \
    }                                                                                                 \
  } while (0)

struct Runner {
  virtual ~Runner() = default;
  virtual const char* name() const = 0;
  virtual int init(int m, int n, int k, const bf16* a, const bf16* b, bf16* d, int swizzle, int sms) = 0;
  virtual int run(cudaStream_t s) = 0;
};

// Pingpong = false: the cooperative kernel (both MMA warp groups on one tile, the epilogue after
// its mainloop); true: the ping-pong kernel (each MMA warp group on its own tile, one's epilogue
// under the other's mainloop), which CUTLASS picks for short k, where the epilogue is a large part
// of a tile's time.
template <int TM, int TN, int CM, int CN, bool Pingpong = false>
struct Cutlass final : Runner {
  using TileShape = cute::Shape<cute::Int<TM>, cute::Int<TN>, cute::_64>;
  using ClusterShape = cute::Shape<cute::Int<CM>, cute::Int<CN>, cute::_1>;
  using Fusion = cutlass::epilogue::fusion::LinearCombination<bf16, float, void, float>;
  using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 8, bf16,
      cutlass::layout::RowMajor, 8,
      std::conditional_t<Pingpong, cutlass::epilogue::TmaWarpSpecialized, cutlass::epilogue::TmaWarpSpecializedCooperative>,
      Fusion>::CollectiveOp;
  using Main = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, bf16, cutlass::layout::RowMajor, 8, bf16,
      cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<int(sizeof(typename Epi::SharedStorage))>,
      std::conditional_t<Pingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                         cutlass::gemm::KernelTmaWarpSpecializedCooperative>>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Main, Epi,
                                                      cutlass::gemm::PersistentScheduler>;
  using Op = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  std::string name_ = std::string(Pingpong ? "cutlass-pp-" : "cutlass-") + std::to_string(TM) + "x" +
                      std::to_string(TN) + "-c" + std::to_string(CM) + "x" + std::to_string(CN);
  Op op;
  typename Op::Arguments args{};
  void* ws = nullptr;
  ~Cutlass() override {
    if (ws) cudaFree(ws);
  }
  const char* name() const override { return name_.c_str(); }
  int init(int m, int n, int k, const bf16* a, const bf16* b, bf16* d, int swizzle, int sms) override {
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {m, n, k, 1};
    args.mainloop = {a, cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, cute::make_shape(m, k, 1)), b,
                     cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, cute::make_shape(n, k, 1))};
    args.epilogue = {{}, nullptr, cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, cute::make_shape(m, n, 1)),
                     d, cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, cute::make_shape(m, n, 1))};
    args.hw_info.device_id = 0;
    args.hw_info.sm_count = sms;
    args.scheduler.max_swizzle_size = swizzle;
    if (Op::can_implement(args) != cutlass::Status::kSuccess) return 1;
    const size_t bytes = Op::get_workspace_size(args);
    if (ws) cudaFree(ws), ws = nullptr;
    if (bytes) CK(cudaMalloc(&ws, bytes));
    if (op.initialize(args, ws) != cutlass::Status::kSuccess) return 1;
    return 0;
  }
  int run(cudaStream_t s) override { return op.run(s) == cutlass::Status::kSuccess ? 0 : 1; }
};

// baton's own GEMM (non-persistent, one CTA per tile, tiles in Grouped{8} order from the stage's
// ticket), as ops::Mlp runs it without edges: ClusterM = 2 is the band pair (weights multicast).
// Persistent: one CTA per SM looping over the tiles (GemmArguments::persistent_ctas); StreamK: the
// same CTAs sharing every tile's k-blocks evenly (GemmArguments::stream_k).
template <int TM, int TN, int CM, bool Persistent = false, bool StreamK = false>
struct Baton final : Runner {
  using Config = baton::sm90::GemmConfig<cute::Shape<cute::Int<TM>, cute::Int<TN>, cute::_64>,
                                         cutlass::epilogue::fusion::LinearCombination<bf16, float, void, float>, false,
                                         cutlass::layout::RowMajor, 1, CM>;
  using Stage = baton::Stage<baton::Grouped, baton::Outputs<>, baton::Inputs<>>;
  std::string name_ = std::string(StreamK ? "baton-streamk-" : Persistent ? "baton-persistent-" : "baton-") +
                      std::to_string(TM) + "x" + std::to_string(TN) + "-c" + std::to_string(CM) + "x1";
  std::unique_ptr<baton::Chain> chain;
  void* ws = nullptr;
  void* sk_ws = nullptr;
  baton::StageLaunch launch;
  ~Baton() override {
    if (ws) cudaFree(ws);
    if (sk_ws) cudaFree(sk_ws);
  }
  const char* name() const override { return name_.c_str(); }
  int init(int m, int n, int k, const bf16* a, const bf16* b, bf16* d, int swizzle, int sms) override {
    chain = std::make_unique<baton::Chain>();
    auto s = chain->add_stage("gemm", baton::sm90::tile_grid<Config>(m, n), baton::Grouped{swizzle});
    if (!chain->validate().ok()) return 1;
    if (ws) cudaFree(ws), ws = nullptr;
    CK(cudaMalloc(&ws, chain->workspace_bytes()));
    if (!baton::initialize_workspace(*chain, ws, chain->workspace_bytes(), nullptr).ok()) return 1;
    CK(cudaStreamSynchronize(nullptr));  // the workspace, initialized on the legacy stream
    auto bound = chain->bind(s, ws, chain->workspace_bytes(), baton::outs(), baton::ins());
    if (!bound.ok()) return std::fprintf(stderr, "%s\n", bound.error().to_string().c_str()), 1;
    baton::sm90::GemmArguments<Config> args{m, n, k, a, b, d};
    if (Persistent || StreamK) args.persistent_ctas = sms;
    if (StreamK) {
      using G = baton::sm90::Gemm<Config, Stage>;
      args.stream_k = true;
      if (sk_ws) cudaFree(sk_ws), sk_ws = nullptr;
      CK(cudaMalloc(&sk_ws, G::split_workspace_bytes(args)));
      args.split_workspace = sk_ws;
      if (!G::clear_split_workspace(args, nullptr).ok()) return 1;
      CK(cudaStreamSynchronize(nullptr));  // the counters, cleared on the legacy stream
    }
    auto l = baton::sm90::Gemm<Config, Stage>::make_launch(bound.value(), args);
    if (!l.ok()) return std::fprintf(stderr, "%s\n", l.error().to_string().c_str()), 1;
    launch = l.value();
    return 0;
  }
  int run(cudaStream_t s) override { return baton::launch_stage(launch, s).ok() ? 0 : 1; }
};

struct Lt final : Runner {
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* ws = nullptr;
  size_t wsb = 64u << 20;
  const bf16 *a_ = nullptr, *b_ = nullptr;
  bf16* d_ = nullptr;
  std::string desc;
  ~Lt() override { reset(); if (ws) cudaFree(ws); if (h) cublasLtDestroy(h); }
  void reset() {
    for (auto* l : {la, lb, ld}) if (l) cublasLtMatrixLayoutDestroy(l);
    la = lb = ld = nullptr;
    if (op) cublasLtMatmulDescDestroy(op), op = nullptr;
    if (pref) cublasLtMatmulPreferenceDestroy(pref), pref = nullptr;
  }
  const char* name() const override { return "cublaslt"; }
  int init(int m, int n, int k, const bf16* a, const bf16* b, bf16* d, int, int) override {
    if (!h) LK(cublasLtCreate(&h));
    if (!ws) CK(cudaMalloc(&ws, wsb));
    reset();
    a_ = a, b_ = b, d_ = d;
    // Column-major view: D^T [n, m] = B [n, k] (stored k x n, transposed) x A^T (stored k x m).
    LK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t T = CUBLAS_OP_T, N = CUBLAS_OP_N;
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T));
    LK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &N, sizeof N));
    LK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, uint64_t(k), uint64_t(n), int64_t(k)));
    LK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, uint64_t(k), uint64_t(m), int64_t(k)));
    LK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, uint64_t(n), uint64_t(m), int64_t(n)));
    LK(cublasLtMatmulPreferenceCreate(&pref));
    LK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    cublasLtMatmulHeuristicResult_t res{};
    int got = 0;
    LK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld, ld, pref, 1, &res, &got));
    if (got < 1) return 1;
    algo = res.algo;
    auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t at) {
      uint64_t v = 0;
      size_t w = 0;
      if (cublasLtMatmulAlgoConfigGetAttribute(&algo, at, &v, sizeof v, &w) != CUBLAS_STATUS_SUCCESS) return -1LL;
      return (long long)v;
    };
    std::ostringstream os;
    os << "tile_id=" << attr(CUBLASLT_ALGO_CONFIG_TILE_ID) << " cluster_id=" << attr(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)
       << " splitk=" << attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM) << " algo_id=" << attr(CUBLASLT_ALGO_CONFIG_ID);
    desc = os.str();
    return 0;
  }
  int run(cudaStream_t s) override {
    const float alpha = 1, beta = 0;
    LK(cublasLtMatmul(h, op, &alpha, b_, la, a_, lb, &beta, d_, ld, d_, ld, &algo, ws, wsb, s));
    return 0;
  }
};

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) v.push_back(std::atoi(t.c_str()));
  return v;
}

__global__ void fill_random(bf16* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    p[i] = bf16(scale * (float(x >> 40) / float(1u << 24) - 0.5f));
  }
}

__global__ void rel_err(const bf16* x, const bf16* ref, size_t n, double* acc) {
  double num = 0, den = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const double r = double(float(ref[i])), d = double(float(x[i])) - r;
    num += d * d + (isnan(float(x[i])) ? 1e30 : 0.0);
    den += r * r;
  }
  atomicAdd(acc, num);
  atomicAdd(acc + 1, den);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ms = {256, 384, 512, 768, 1024, 2048};
  // n,k pairs: GPT-3 TP8 GEMM1 / GEMM2, Llama-2-7B GEMM1 (SwiGLU's 2F) / GEMM2, LLaMA-65B TP8 GEMM1 / GEMM2
  std::vector<int> nk = {6144, 12288, 12288, 6144, 22016, 4096, 4096, 11008, 5504, 8192, 8192, 2752};
  int rounds = 15, iters = 10;
  std::vector<int> swizzles = {1, 8};
  const char* out = "gemm-cluster.csv";
  std::vector<std::string> only;  // --only: variants whose name contains one of these (cuBLASLt always runs)
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "%s needs a value\n", s.c_str()), std::exit(2), nullptr); };
    if (s == "--m") ms = parse_list(next());
    else if (s == "--nk") nk = parse_list(next());
    else if (s == "--rounds") rounds = std::atoi(next());
    else if (s == "--iters") iters = std::atoi(next());
    else if (s == "--swizzle") swizzles = parse_list(next());
    else if (s == "--out") out = next();
    else if (s == "--only") {
      std::stringstream ss(next());
      for (std::string t; std::getline(ss, t, ',');) only.push_back(t);
    }
    else if (s == "--help" || s == "-h") {
      std::printf("usage: baton_bench_gemm_cluster [--m 256,512] [--nk n1,k1,n2,k2...] [--rounds R] [--iters I]\n"
                  "                                [--swizzle 1,8] [--only baton-streamk,baton-persistent] [--out file.csv]\n"
                  "Times D = A B^T (bf16) with CUTLASS's persistent cooperative and ping-pong kernels in several tile /\n"
                  "cluster shapes, and baton's GEMM, against cuBLASLt; writes one CSV row per (shape, variant).\n");
      return 0;
    } else {
      std::fprintf(stderr, "unknown option %s (see --help)\n", s.c_str());
      return 2;
    }
  }
  if (nk.size() % 2 || ms.empty()) return std::fprintf(stderr, "--nk needs n,k pairs\n"), 2;
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
    std::printf("baton_bench_gemm_cluster: no CUDA device; nothing to time\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  int maxm = *std::max_element(ms.begin(), ms.end()), maxn = 0, maxk = 0;
  for (size_t i = 0; i < nk.size(); i += 2) maxn = std::max(maxn, nk[i]), maxk = std::max(maxk, nk[i + 1]);
  bf16 *a, *b, *dref, *d;
  CK(cudaMalloc(&a, size_t(maxm) * maxk * 2));
  CK(cudaMalloc(&b, size_t(maxn) * maxk * 2));
  CK(cudaMalloc(&dref, size_t(maxm) * maxn * 2));
  CK(cudaMalloc(&d, size_t(maxm) * maxn * 2));
  double* acc;
  CK(cudaMalloc(&acc, 16));
  fill_random<<<1024, 256>>>(a, size_t(maxm) * maxk, 1, 2.0f);
  fill_random<<<1024, 256>>>(b, size_t(maxn) * maxk, 2, 0.05f);
  CK(cudaStreamSynchronize(nullptr));  // the random inputs (legacy stream)
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  // One runner per (configuration, swizzle), initialized once per shape.
  std::vector<std::unique_ptr<Runner>> cut;
  std::vector<int> cut_swizzle;
  for (int s : swizzles) {
    cut.emplace_back(new Cutlass<128, 256, 1, 1>);
    cut.emplace_back(new Cutlass<128, 256, 2, 1>);
    cut.emplace_back(new Cutlass<128, 192, 2, 1>);
    cut.emplace_back(new Cutlass<256, 128, 1, 1>);
    cut.emplace_back(new Cutlass<256, 128, 1, 2>);
    cut.emplace_back(new Baton<128, 256, 1>);
    cut.emplace_back(new Baton<128, 256, 2>);
    cut.emplace_back(new Baton<128, 192, 1>);
    cut.emplace_back(new Baton<128, 192, 2>);
    cut.emplace_back(new Baton<256, 128, 1>);
    cut.emplace_back(new Cutlass<128, 128, 1, 1, true>);
    cut.emplace_back(new Cutlass<128, 128, 2, 1, true>);
    cut.emplace_back(new Cutlass<128, 128, 1, 1>);
    cut.emplace_back(new Baton<128, 128, 1>);
    cut.emplace_back(new Baton<128, 128, 1, true>);
    cut.emplace_back(new Baton<128, 256, 1, true>);
    cut.emplace_back(new Baton<128, 192, 1, true>);
    cut.emplace_back(new Baton<128, 128, 1, false, true>);
    cut.emplace_back(new Baton<128, 256, 1, false, true>);
    cut.emplace_back(new Baton<128, 192, 1, false, true>);
    cut_swizzle.resize(cut.size(), s);
  }
  Lt lt;

  FILE* f = std::fopen(out, "w");
  if (!f) return std::fprintf(stderr, "cannot write %s\n", out), 1;
  // GPU, driver and commit on every row (the file stands alone in bench/results/).
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);
#ifndef BATON_GIT_COMMIT
#define BATON_GIT_COMMIT "unknown"
#endif
  std::fprintf(f, "gpu,m,n,k,variant,swizzle,median_us,min_us,max_us,ratio_to_cublaslt,tflops,rel_err,lt_algo,driver,commit\n");
  for (size_t p = 0; p < nk.size(); p += 2) {
    const int n = nk[p], k = nk[p + 1];
    for (int m : ms) {
      struct V { Runner* r; int swz; std::string name; std::vector<double> us; double err = 0; };
      std::vector<V> vs;
      if (lt.init(m, n, k, a, b, dref, 1, sms)) return std::fprintf(stderr, "cuBLASLt init failed\n"), 1;
      vs.push_back({&lt, 0, "cublaslt", {}});
      for (size_t c = 0; c < cut.size(); ++c)
        if (only.empty() || std::any_of(only.begin(), only.end(), [&](const std::string& o) {
              return std::string(cut[c]->name()).find(o) != std::string::npos;
            }))
          vs.push_back({cut[c].get(), cut_swizzle[c], std::string(cut[c]->name()) + "-s" + std::to_string(cut_swizzle[c]), {}});
      // Correctness: every CUTLASS variant against cuBLASLt.
      if (lt.run(st)) return 1;
      for (auto& v : vs) {
        if (v.r == &lt) continue;
        if (v.r->init(m, n, k, a, b, d, v.swz, sms)) return std::fprintf(stderr, "%s init failed\n", v.name.c_str()), 1;
        CK(cudaMemsetAsync(d, 0xff, size_t(m) * n * 2, st));
        if (v.r->run(st)) return 1;
        CK(cudaMemsetAsync(acc, 0, 16, st));
        rel_err<<<264, 256, 0, st>>>(d, dref, size_t(m) * n, acc);
        double h[2];
        CK(cudaMemcpyAsync(h, acc, 16, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        v.err = std::sqrt(h[0] / std::max(h[1], 1e-30));
      }
      for (int w = 0; w < 3; ++w)
        for (auto& v : vs) {
          for (int i = 0; i < iters; ++i)
            if (v.r->run(st)) return 1;
        }
      for (int r = 0; r < rounds; ++r)
        for (auto& v : vs) {
          CK(cudaEventRecord(e0, st));
          for (int i = 0; i < iters; ++i)
            if (v.r->run(st)) return 1;
          CK(cudaEventRecord(e1, st));
          CK(cudaEventSynchronize(e1));
          float ms_ = 0;
          CK(cudaEventElapsedTime(&ms_, e0, e1));
          v.us.push_back(1000.0 * ms_ / iters);
        }
      double lt_med = 0;
      for (auto& v : vs) {
        std::sort(v.us.begin(), v.us.end());
        const double med = v.us[v.us.size() / 2];
        if (v.r == &lt) lt_med = med;
        const double tf = 2.0 * m * double(n) * k / (med * 1e-6) / 1e12;
        std::fprintf(f, "%s,%d,%d,%d,%s,%d,%.2f,%.2f,%.2f,%.4f,%.1f,%.2e,%s,%d,%s\n", prop.name, m, n, k, v.name.c_str(),
                     v.swz, med, v.us.front(), v.us.back(), med / lt_med, tf, v.err, lt.desc.c_str(), driver,
                     BATON_GIT_COMMIT);
        std::printf("m=%5d n=%5d k=%5d %-26s %9.2f us  %.3fx  %6.1f TF/s  err %.1e\n", m, n, k, v.name.c_str(), med,
                    med / lt_med, tf, v.err);
      }
      std::fflush(f);
      std::fflush(stdout);
    }
  }
  std::fclose(f);
  return 0;
}
