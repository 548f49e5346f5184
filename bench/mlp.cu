// mlp: transformer MLPs, bf16 in/out, fp32 accumulation. X [M, H], W2 [H, F] (nn.Linear layout
// [N, K]), Y [M, F], Z [M, H]:
//   --act gelu    (GPT-3)  Y = GeLU(X W1^T),               W1 [F, H]
//   --act swiglu  (LLaMA)  Y = SiLU(X Wg^T) * (X Wu^T),   W1 [2F, H] = Wg, Wu rows interleaved
//                          (baton::sm90::pack_swiglu_weights), one GEMM with a SwiGLU pair epilogue
//   then Z = Y W2^T.
// Presets (tensor-parallel shards): gpt3 H = 12288, F = 6144 (GeLU); llama H = 8192, F = 2752
// (SwiGLU); M in {1, 2, 4, ..., 2048}. See docs/mlp.md.
//
// Every variant built on the baton sm90 GEMM uses the same split-K per GEMM
// (sm90::choose_split_k for the shape, or --split-k), so the variants differ only in how the
// two GEMMs are synchronized.
//
// Variants, all in the same run, the activation fused into GEMM1 except where noted:
//   cutlass-stream     baseline: the sm90 CUTLASS GEMMs of include/baton/cutlass (stages without
//                      edges: same kernel code, no waits, no posts) back-to-back on one stream
//   cutlass-graph      baseline: the same, captured in a CUDA graph
//   cutlass-pdl-graph  baseline: the same, GEMM2 PDL-launched; its load warp executes
//                      griddepcontrol.wait before its first load (Gemm<..., GridDependencyWait>);
//                      GEMM1 triggers its dependents first thing. In a graph.
//   cublaslt-graph     baseline: cuBLASLt, GEMM1 with CUBLASLT_EPILOGUE_GELU, GEMM2 plain, bf16 in/out,
//                      fp32 compute, the heuristic's top algorithm, 32 MiB workspace. In a graph.
//   baton-kblock       KBlockPolicy<GemmA>: GEMM2 waits per k-block of Y; launch_chain (PDL), graph
//   baton-row          RowPolicy<GemmA>: GEMM2 waits once per row of Y tiles; same
//   baton-kblock-gen   the same chains on the policies batonc generates from include/baton/ops/mlp.baton
//   baton-row-gen      (the op's; lowered to footprint::GemmA by batonc, so the same kernels)
//   baton-auto         baton::ops::Mlp with per-shape tuning (MlpRunOptions::tune: times none and per-row
//                      candidate plans at create(), keeps the fastest, logs why), timed as its own graph
//   baton-plan         the op as create() gives it with default options and no tuning (what a user
//                      who does not tune gets)
//   cutlass-streamk-graph     baseline: CUTLASS 4.2 GemmUniversal, cooperative kernel with the
//                      StreamKScheduler in Stream-K mode (persistent; partial tiles reduced
//                      through a workspace), same collectives; SwiGLU: GEMM1 plain into [M, 2F],
//                      then an elementwise SwiGLU kernel. In a graph.
//   cutlass-persistent-graph  baseline: the same GemmUniversal, data-parallel decomposition (the
//                      persistent kernel; our baton GEMM is the non-persistent one). In a graph.
//   cutlass-wide-graph baseline: the baton sm90 GEMM on 128x256 tiles for both GEMMs (no edges, no
//                      split-K), two launches in a graph
//   cutlass-wide2-graph baseline: GEMM1 on 128x128 tiles (planned split-K), GEMM2 on 128x256
// cuBLASLt for SwiGLU: GEMM1 into [M, 2F], the same SwiGLU kernel, GEMM2.
//
// Method (BENCHMARKS.md): CUDA events, warm-up, median of --reps timed repetitions (each rep is
// --iters-per-graph MLP iterations, in one graph or launched back to back, divided). Inputs are
// random (X ~ U with std 1, W ~ U with std 1/sqrt(K): GeLU's input has std ~1). The weights
// (2 x 151 MB for gpt3) exceed the 60 MB L2, so inputs are not rotated. Before timing and again
// after it, Y and Z are poisoned (NaN) and one iteration runs (graph variants: a one-iteration
// graph); Z must have no NaN anywhere and match a CPU fp64 reference (erf GeLU, Y rounded to bf16)
// on sampled rows (one in every 128-row tile up to M = 128 x --check-rows): ||Z - ref||_F / ||ref||_F < 1e-2.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <chrono>
#include <ctime>
#include <utility>
#include <vector>

#include <cutlass/version.h>

#include "baton/trace.hpp"
#include "bench_util.hpp"
#include "mlp_gemms.cuh"

using namespace baton;
using namespace baton_bench::mlp;

namespace {

const std::vector<int> kGpt3M = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
constexpr int kGpt3Hidden = 12288, kGpt3Ffn = 6144;
constexpr int kLlamaHidden = 8192, kLlamaFfn = 2752;
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;
constexpr uint64_t kWatchdogNs = 2'000'000'000ull;  // a sync bug reports instead of hanging
const std::vector<std::string> kVariants = {"cutlass-stream",        "cutlass-graph",           "cutlass-pdl-graph",
                                            "cutlass-streamk-graph", "cutlass-persistent-graph", "cublaslt-graph",
                                            "baton-kblock",          "baton-row",               "baton-auto",
                                            "cutlass-wide-graph",    "cutlass-wide2-graph",     "baton-kblock-gen",
                                            "baton-row-gen",         "baton-plan"};

struct Args {
  std::vector<int> ms = kGpt3M;
  int hidden = kGpt3Hidden, ffn = kGpt3Ffn;
  bool swiglu = false;
  int split1 = 0, split2 = 0;  // 0: sm90::choose_split_k per shape
  int group_m = 0;             // 0: baton::ops::mlp_group_m per shape
  int l2_prefetch_mb = 0;      // baton-auto's L2 prefetch of W2 (0: off, the op's default)
  int swap_gemm2 = 0;          // baton-auto's swapped GEMM2 (0: off, the op's default; tuning tries it)
  int swap_gemm1 = 0;          // baton-auto's swapped GeLU GEMM1 (the same)
  int cta_pairs = 0;           // baton-auto's MlpOptions::cta_pairs (0: off, the op's default; tuning tries it)
  int pdl = -1;                // baton-auto's MlpOptions::pdl (-1: the op's rule; tuning tries the other)
  int breakdown = 1;           // time each GEMM of baton-auto and cuBLASLt alone (mlp-*-breakdown.csv)
  int sync_overhead = 0;       // 1: only the wait path's cost, GEMM2 with every semaphore posted (sync-overhead-*)
  int reps = 50;
  int iters = 10;  // MLP iterations per timed repetition (per graph)
  int warmup = 3;  // untimed repetitions first
  int check_rows = 16;
  int trace_m = 0;
  int timeout_s = 300;
  std::vector<std::string> variants = kVariants;
  std::string out_dir = ".";
};

void usage() {
  std::printf(
      "usage: baton_bench_mlp [--preset gpt3|llama] [--m M1,M2,...] [--hidden H] [--ffn F] [--act gelu|swiglu]\n"
      "                       [--split-k auto|S1,S2] [--group-m auto|G] [--l2-prefetch-mb MB] [--swap-gemm2 0|1]\n"
      "                       [--swap-gemm1 0|1] [--cta-pairs 0|1] [--pdl auto|0|1]\n"
      "                       [--breakdown 0|1] [--sync-overhead 0|1] [--reps R]\n"
      "                       [--iters-per-graph I] [--warmup W] [--check-rows N]\n"
      "                       [--variants V1,V2,...] [--trace M] [--timeout-s S] [--out-dir DIR]\n"
      "Transformer MLP, bf16 with fp32 accumulation, X [M,H], W2 [H,F], Z = Y W2^T with\n"
      "  gelu:   Y = GeLU(X W1^T), W1 [F,H]                  (GPT-3)\n"
      "  swiglu: Y = SiLU(X Wg^T) * (X Wu^T), one GEMM over W1 [2F,H] with gate/up rows interleaved (LLaMA)\n"
      "CUTLASS sm90 GEMMs on a stream / in a graph / with PDL, CUTLASS Stream-K and persistent GemmUniversal,\n"
      "cuBLASLt in a graph, and baton (KBlockPolicy, RowPolicy, and a rule-picked 'auto') chains with PDL in\n"
      "a graph. Every variant's Z is checked (NaN-poisoned outputs, CPU fp64 reference on sampled rows) before\n"
      "and after timing. Writes DIR/mlp-gpt3.csv and .json (mlp-llama.*; mlp-custom.* for other shapes).\n"
      "  --preset gpt3        H=12288, F=6144, GeLU, M=1,2,4,...,2048 (the default)\n"
      "  --preset llama       H=8192, F=2752, SwiGLU, M=1,2,4,...,2048\n"
      "  --m, --hidden, --ffn any shape; H and F must be multiples of 8 (16-byte TMA rows); M >= 1\n"
      "  --act gelu|swiglu    GEMM1's activation (default: the preset's)\n"
      "  --split-k auto|S1,S2 split-K parts of GEMM1 and GEMM2 for every baton-GEMM variant (default auto:\n"
      "                       baton::sm90::choose_split_k for the shape and the SM count)\n"
      "  --group-m auto|G     tile order baton::Grouped{G} of both GEMMs for every baton-GEMM variant (1: row-major;\n"
      "                       default auto: baton::ops::mlp_group_m)\n"
      "  --l2-prefetch-mb MB  megabytes of W2 that baton-auto's GEMM1 prefetches into L2 as it ends (default 0: off);\n"
      "                       its tuning also times the plan without it\n"
      "  --swap-gemm2 0|1     baton-auto's GEMM2 as W2 x Y^T in 128x32 tiles (default 0; at m <= 32 its tuning tries\n"
      "                       it either way)\n"
      "  --swap-gemm1 0|1     the same for GEMM1 with GeLU (W1 x X^T)\n"
      "  --cta-pairs 0|1      baton-auto's 128x96 GEMMs as CTA pairs (1x2 clusters multicasting A; default 0;\n"
      "                       1: asked for, and tuning tries them against the other plans from M = 128 on)\n"
      "  --pdl auto|0|1       baton-auto's GEMM2 launch with policy none: PDL (weights first) or after GEMM1\n"
      "                       (default auto: PDL when GEMM1 runs in one wave; tuning times the other too)\n"
      "  --breakdown 0|1      also time baton-auto's and cuBLASLt's GEMM1 and GEMM2 alone, each in a graph of\n"
      "                       its own, and write DIR/<workload>-breakdown.csv: chain = GEMM1 + GEMM2 + rest\n"
      "                       (rest: what the chain costs beyond its GEMMs run alone; default 1)\n"
      "  --sync-overhead 0|1  instead of the chains: GEMM2 alone with every semaphore it waits on already posted\n"
      "                       (GEMM1 run first for every epoch GEMM2 will wait on), per policy (kblock, row),\n"
      "                       against the same GEMM2 without waits: the wait path's pure cost. Writes\n"
      "                       DIR/sync-overhead-<preset>.csv and .json (default 0)\n"
      "  --reps R             timed repetitions, median reported (default 50; BENCHMARKS.md wants >= 50)\n"
      "  --iters-per-graph I  MLP iterations per repetition / per graph (default 10)\n"
      "  --warmup W           untimed repetitions before timing (default 3)\n"
      "  --check-rows N       rows of Z checked against the CPU reference, spread evenly, plus the last (default 16)\n"
      "  --variants ...       subset of: cutlass-stream,cutlass-graph,cutlass-pdl-graph,cutlass-streamk-graph,\n"
      "                       cutlass-persistent-graph,cublaslt-graph,baton-kblock,baton-row,baton-auto,\n"
      "                       cutlass-wide-graph,cutlass-wide2-graph,baton-kblock-gen,baton-row-gen,baton-plan\n"
      "                       (default: all; baton-plan is the op as create() gives it with no tuning)\n"
      "  --trace M            also write DIR/timeline-<workload>-m<M>.json (per-tile Perfetto timeline of the\n"
      "                       baton-row chain) and ...-m<M>-cutlass-pdl.json (the PDL baseline); M must be one\n"
      "                       of the measured M; plot with scripts/plot_timeline.py\n"
      "  --timeout-s S        abort the whole run after S seconds (default 300; 0: never)\n");
}

bool parse_int(const char* s, long lo, long hi, int& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return false;
  out = int(v);
  return true;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = s.find(',', p);
    out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

bool parse(int argc, char** argv, Args& a) {
  auto bad = [](const std::string& what) {
    std::fprintf(stderr, "error: %s (see --help)\n", what.c_str());
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      usage();
      std::exit(0);
    }
    if (i + 1 >= argc) return bad(k + " needs a value");
    const char* v = argv[++i];
    auto int_opt = [&](long lo, long hi, int& out) {
      if (!parse_int(v, lo, hi, out))
        return bad(k + " '" + v + "': expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return true;
    };
    if (k == "--preset") {
      const std::string name = v;
      if (name == "gpt3") {
        a.hidden = kGpt3Hidden;
        a.ffn = kGpt3Ffn;
        a.swiglu = false;
      } else if (name == "llama") {
        a.hidden = kLlamaHidden;
        a.ffn = kLlamaFfn;
        a.swiglu = true;
      } else {
        return bad("unknown preset '" + name + "' (known: gpt3, llama)");
      }
      a.ms = kGpt3M;
    } else if (k == "--act") {
      const std::string act = v;
      if (act != "gelu" && act != "swiglu") return bad("--act '" + act + "': expected gelu or swiglu");
      a.swiglu = act == "swiglu";
    } else if (k == "--group-m") {
      if (std::string(v) == "auto") a.group_m = 0;
      else if (!int_opt(1, 1 << 20, a.group_m)) return false;
    } else if (k == "--l2-prefetch-mb") {
      if (!int_opt(0, 4096, a.l2_prefetch_mb)) return false;
    } else if (k == "--swap-gemm1") {
      if (!int_opt(0, 1, a.swap_gemm1)) return false;
    } else if (k == "--swap-gemm2") {
      if (!int_opt(0, 1, a.swap_gemm2)) return false;
    } else if (k == "--cta-pairs") {
      if (!int_opt(0, 1, a.cta_pairs)) return false;
    } else if (k == "--pdl") {
      if (std::string(v) == "auto") a.pdl = -1;
      else if (!int_opt(0, 1, a.pdl)) return false;
    } else if (k == "--breakdown") {
      if (!int_opt(0, 1, a.breakdown)) return false;
    } else if (k == "--sync-overhead") {
      if (!int_opt(0, 1, a.sync_overhead)) return false;
    } else if (k == "--split-k") {
      const std::string sk = v;
      if (sk == "auto") {
        a.split1 = a.split2 = 0;
      } else {
        const auto parts = split(sk);
        if (parts.size() != 2 || !parse_int(parts[0].c_str(), 1, 64, a.split1) || !parse_int(parts[1].c_str(), 1, 64, a.split2))
          return bad("--split-k '" + sk + "': expected auto or S1,S2 with 1 <= S <= 64");
      }
    } else if (k == "--m") {
      a.ms.clear();
      for (const auto& t : split(v)) {
        int m = 0;
        if (!parse_int(t.c_str(), 1, 1 << 20, m)) return bad("--m entry '" + t + "': expected an integer in [1, 1048576]");
        a.ms.push_back(m);
      }
    } else if (k == "--hidden") {
      if (!int_opt(8, 1 << 20, a.hidden)) return false;
    } else if (k == "--ffn") {
      if (!int_opt(8, 1 << 20, a.ffn)) return false;
    } else if (k == "--reps") {
      if (!int_opt(1, 100000, a.reps)) return false;
    } else if (k == "--iters-per-graph") {
      if (!int_opt(1, 10000, a.iters)) return false;
    } else if (k == "--warmup") {
      if (!int_opt(0, 10000, a.warmup)) return false;
    } else if (k == "--check-rows") {
      if (!int_opt(1, 1024, a.check_rows)) return false;
    } else if (k == "--trace") {
      if (!int_opt(1, 1 << 20, a.trace_m)) return false;
    } else if (k == "--timeout-s") {
      if (!int_opt(0, 86400, a.timeout_s)) return false;
    } else if (k == "--variants") {
      a.variants.clear();
      for (const auto& t : split(v)) {
        if (std::find(kVariants.begin(), kVariants.end(), t) == kVariants.end())
          return bad("unknown variant '" + t + "'");
        a.variants.push_back(t);
      }
    } else if (k == "--out-dir") {
      a.out_dir = v;
    } else {
      return bad("unknown option " + k);
    }
  }
  // GEMM1 has n = F, k = H; GEMM2 n = H, k = F: TMA needs 16-byte row strides of A, B and D.
  if (a.hidden % 8 != 0 || a.ffn % 8 != 0)
    return bad("--hidden " + std::to_string(a.hidden) + " / --ffn " + std::to_string(a.ffn) +
               ": both must be multiples of 8 (the sm90 GEMM's TMA needs 16-byte row strides; pad the weights)");
  if (a.trace_m != 0 && std::find(a.ms.begin(), a.ms.end(), a.trace_m) == a.ms.end())
    return bad("--trace " + std::to_string(a.trace_m) + " is not one of the measured M (add it to --m)");
  std::sort(a.ms.begin(), a.ms.end());
  a.ms.erase(std::unique(a.ms.begin(), a.ms.end()), a.ms.end());
  std::error_code ec;
  std::filesystem::create_directories(a.out_dir, ec);
  if (!std::filesystem::is_directory(a.out_dir, ec)) return bad("--out-dir '" + a.out_dir + "' is not a directory and cannot be created");
  if (a.reps < 50) std::fprintf(stderr, "note: --reps %d < 50 (BENCHMARKS.md wants >= 50 for reported numbers)\n", a.reps);
  return true;
}

// ---- small owners ----------------------------------------------------------------------------

struct DevMem {
  void* p = nullptr;
  DevMem() = default;
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  ~DevMem() {
    if (p) (void)cudaFree(p);
  }
  [[nodiscard]] status alloc(size_t bytes, const char* what) {
    return cuda_status(cudaMalloc(&p, bytes), std::string("cudaMalloc(") + what + ", " + std::to_string(bytes) + " bytes)");
  }
};

struct GraphExec {
  cudaGraphExec_t exec = nullptr;
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() {
    if (exec) (void)cudaGraphExecDestroy(exec);
  }
};

struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  ~Events() {
    if (a) (void)cudaEventDestroy(a);
    if (b) (void)cudaEventDestroy(b);
  }
};

[[nodiscard]] status lt_status(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return status(errc::cuda_error, "cuBLASLt " + what + ": " + cublasLtGetStatusString(s) + " (" + std::to_string(int(s)) + ")");
}
#define LT_TRY(expr) BATON_TRY(lt_status((expr), #expr))

// ---- inputs and the CPU reference --------------------------------------------------------------

// body(t, nt) on nt host threads.
void parallel(const std::function<void(size_t, size_t)>& body) {
  const size_t nt = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 64));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < nt; ++t) pool.emplace_back([&, t] { body(t, nt); });
  for (auto& th : pool) th.join();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform on [-sqrt(3) std, sqrt(3) std) (standard deviation `std`), deterministic per (tensor, index).
std::vector<bf16> random_bf16(size_t n, uint64_t tensor, double std_dev) {
  std::vector<bf16> v(n);
  const float a = float(std::sqrt(3.0) * std_dev);
  parallel([&](size_t t, size_t nt) {
    const size_t chunk = (n + nt - 1) / nt;
    for (size_t i = t * chunk; i < std::min(n, (t + 1) * chunk); ++i) {
      const uint64_t r = splitmix64((tensor << 48) ^ i);
      const float u = float(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
      v[i] = bf16((2.f * u - 1.f) * a);
    }
  });
  return v;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)); }

double dot(const double* a, const double* b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four chains: throughput-bound, not latency-bound
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Z rows `rows` of the reference: Y = bf16(GeLU(X W1^T)) (or bf16(SiLU(X Wg^T) * (X Wu^T)) with
// W1's rows 2j = gate j, 2j + 1 = up j) in fp64, then Z = Y W2^T in fp64.
std::vector<std::vector<double>> reference_rows(const std::vector<bf16>& x, const std::vector<bf16>& w1,
                                                const std::vector<bf16>& w2, int h, int f, bool swiglu,
                                                const std::vector<int>& rows) {
  const size_t R = rows.size();
  std::vector<std::vector<double>> xr(R, std::vector<double>(size_t(h)));
  for (size_t r = 0; r < R; ++r)
    for (int k = 0; k < h; ++k) xr[r][size_t(k)] = double(float(x[size_t(rows[r]) * h + k]));
  std::vector<std::vector<double>> y(R, std::vector<double>(size_t(f)));
  parallel([&](size_t t, size_t nt) {
    std::vector<double> w(static_cast<size_t>(h)), u(static_cast<size_t>(h));
    for (size_t j = t; j < size_t(f); j += nt) {  // one W1 row (pair) for every sampled row
      if (!swiglu) {
        for (int k = 0; k < h; ++k) w[size_t(k)] = double(float(w1[j * size_t(h) + size_t(k)]));
        for (size_t r = 0; r < R; ++r)
          y[r][j] = double(float(bf16(float(gelu(dot(xr[r].data(), w.data(), h))))));  // Y is stored in bf16
      } else {
        for (int k = 0; k < h; ++k) {
          w[size_t(k)] = double(float(w1[(2 * j) * size_t(h) + size_t(k)]));
          u[size_t(k)] = double(float(w1[(2 * j + 1) * size_t(h) + size_t(k)]));
        }
        for (size_t r = 0; r < R; ++r)
          y[r][j] = double(float(bf16(float(silu(dot(xr[r].data(), w.data(), h)) * dot(xr[r].data(), u.data(), h)))));
      }
    }
  });
  std::vector<std::vector<double>> z(R, std::vector<double>(size_t(h)));
  parallel([&](size_t t, size_t nt) {
    std::vector<double> w(static_cast<size_t>(f));
    for (size_t j = t; j < size_t(h); j += nt) {
      for (int k = 0; k < f; ++k) w[size_t(k)] = double(float(w2[j * size_t(f) + size_t(k)]));
      for (size_t r = 0; r < R; ++r) z[r][j] = dot(y[r].data(), w.data(), f);
    }
  });
  return z;
}

// `n` rows spread over [0, m): one in every m/n stretch (so one in every 128-row tile when
// m <= 128 n), at a pseudo-random offset, plus the last row (the ragged tile's edge).
std::vector<int> sample_rows(int m, int n) {
  std::vector<int> rows;
  if (m <= n) {
    for (int i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  for (int i = 0; i < n; ++i) {
    const int64_t lo = int64_t(i) * m / n, hi = int64_t(i + 1) * m / n;
    rows.push_back(int(lo + int64_t(splitmix64(uint64_t(m) * 131 + uint64_t(i)) % uint64_t(std::max<int64_t>(1, hi - lo)))));
  }
  rows.push_back(m - 1);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// ---- the problem -------------------------------------------------------------------------------

struct Problem {
  int m = 0, h = 0, f = 0;
  bf16 *x = nullptr, *w1 = nullptr, *w2 = nullptr, *y = nullptr, *z = nullptr;
  bool swiglu = false;
  bf16* t = nullptr;  // [m, 2f]: GEMM1's output before the separate SwiGLU kernel (baselines)
  int split1 = 1, split2 = 1;
  int group_m = 1;                      // tile order Grouped{group_m}
  void *sw1 = nullptr, *sw2 = nullptr;  // split-K workspaces (counters zeroed)
  Args1 args1() const {  // Y = GeLU(X W1^T)
    Args1 a{m, f, h, x, w1, y};
    a.split_k = split1;
    a.split_workspace = sw1;
    return a;
  }
  SwiArgs1 swi_args1() const {  // Y = SiLU(X Wg^T) * (X Wu^T): 2f columns computed, f written
    SwiArgs1 a{m, 2 * f, h, x, w1, y};
    a.split_k = split1;
    a.split_workspace = sw1;
    return a;
  }
  Args2 args2() const {  // Z = Y W2^T
    Args2 a{m, h, f, y, w2, z};
    a.split_k = split2;
    a.split_workspace = sw2;
    return a;
  }
  Grid g1() const { return swiglu ? sm90::tile_grid<SwiConfig1>(m, 2 * f) : sm90::tile_grid<Config1>(m, f); }
  Grid g2() const { return sm90::tile_grid<Config2>(m, h); }
  footprint::GemmA fp() const {  // GEMM2's A on Y's tiles
    return swiglu ? sm90::gemm_a_footprint<SwiConfig1, Config2>(m, f) : sm90::gemm_a_footprint<Config1, Config2>(m, f);
  }
  size_t sw1_bytes() const { return swiglu ? sm90::split_workspace_bytes(swi_args1()) : sm90::split_workspace_bytes(args1()); }
  size_t sw2_bytes() const { return sm90::split_workspace_bytes(args2()); }
  template <class Stage>
  result<StageLaunch> launch1(const Stage& s) const {
    return swiglu ? gemm1_launch(s, swi_args1()) : gemm1_launch(s, args1());
  }
};

// y [m, f] = SiLU(t[:, 2c]) * t[:, 2c + 1] (the baselines' separate SwiGLU kernel).
__global__ void swiglu_pairs_kernel(const bf16* __restrict__ t, bf16* __restrict__ y, int64_t m, int64_t f) {
  const int64_t n = m * f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / f, c = i % f;
    const float g = float(t[r * 2 * f + 2 * c]), u = float(t[r * 2 * f + 2 * c + 1]);
    y[i] = bf16(g / (1.f + __expf(-g)) * u);
  }
}
[[nodiscard]] status swiglu_pairs(const Problem& p, cudaStream_t s) {
  const int64_t n = int64_t(p.m) * p.f;
  const int blocks = int(std::min<int64_t>((n + 255) / 256, 8192));
  swiglu_pairs_kernel<<<blocks, 256, 0, s>>>(p.t, p.y, p.m, p.f);
  return cuda_status(cudaGetLastError(), "launching the SwiGLU kernel");
}

// The CUTLASS baselines: two stages without edges (each still takes its tile from a ticket).
struct PlainMlp {
  Chain chain;
  DevMem ws;
  std::vector<StageLaunch> serial, pdl;  // {gemm1, gemm2}, {gemm1, gemm2 with griddepcontrol.wait}
  std::unique_ptr<status> built;         // the first build's outcome (three variants share it)

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream, TileEvent* trace1 = nullptr,
                             TileEvent* trace2 = nullptr) {
    const Grid g1 = p.g1(), g2 = p.g2();
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m});
    BATON_TRY(chain.validate());
    BATON_TRY(ws.alloc(chain.workspace_bytes(), "plain workspace"));
    BATON_TRY(initialize_workspace(chain, ws.p, chain.workspace_bytes(), stream));
    BindOptions o1, o2;
    o1.trace = trace1;
    o2.trace = trace2;
    auto b1 = chain.bind(s1, ws.p, chain.workspace_bytes(), outs(), ins(), o1);
    auto b2 = chain.bind(s2, ws.p, chain.workspace_bytes(), outs(), ins(), o2);
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
  DevMem ws;
  std::vector<StageLaunch> launches;

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream) {
    const Grid g1 = !wide1 ? p.g1()
                    : p.swiglu ? sm90::tile_grid<WideSwiConfig1>(p.m, 2 * p.f)
                               : sm90::tile_grid<WideConfig1>(p.m, p.f);
    const Grid g2 = sm90::tile_grid<WideConfig2>(p.m, p.h);
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m});
    BATON_TRY(chain.validate());
    BATON_TRY(ws.alloc(chain.workspace_bytes(), "wide workspace"));
    BATON_TRY(initialize_workspace(chain, ws.p, chain.workspace_bytes(), stream));
    auto b1 = chain.bind(s1, ws.p, chain.workspace_bytes(), outs(), ins());
    auto b2 = chain.bind(s2, ws.p, chain.workspace_bytes(), outs(), ins());
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
  [[nodiscard]] status enqueue(cudaStream_t stream) { return launch_chain(chain, stream, launches, launch_schedule::serial); }
};

// A baton chain: GEMM1 posts its tiles of Y, GEMM2 waits on them under policy P; PDL. Generated:
// the policy comes from the header batonc generates from include/baton/ops/mlp.baton (the op's),
// else it is built by hand from sm90::gemm_a_footprint.
template <class P, bool Generated>
P make_policy(const Problem& p, Grid g1, const footprint::GemmA& fp) {
  if constexpr (Generated && std::is_same_v<P, KBlock>)
    return p.swiglu ? ops::mlp_kernels::kblock_policy<ops::activation::swiglu>(p.m, p.h, p.f)
                    : ops::mlp_kernels::kblock_policy<ops::activation::gelu>(p.m, p.h, p.f);
  else if constexpr (Generated && std::is_same_v<P, Row>)
    return p.swiglu ? ops::mlp_kernels::row_policy<ops::activation::swiglu>(p.m, p.h, p.f)
                    : ops::mlp_kernels::row_policy<ops::activation::gelu>(p.m, p.h, p.f);
  else
    return P{g1, fp};
}

template <class P, bool Generated = false>
struct BatonMlp {
  Chain chain;
  DevMem ws;
  std::vector<StageLaunch> launches;

  [[nodiscard]] status build(const Problem& p, cudaStream_t stream, TileEvent* trace1 = nullptr,
                             TileEvent* trace2 = nullptr) {
    const Grid g1 = p.g1(), g2 = p.g2();
    const footprint::GemmA fp = p.fp();  // GEMM2's A on Y's tiles
    auto s1 = chain.add_stage("gemm1", g1, Grouped{p.group_m}, {.reads = {"X", "W1"}, .writes = {"Y"}});
    auto s2 = chain.add_stage("gemm2", g2, Grouped{p.group_m}, {.reads = {"Y", "W2"}, .writes = {"Z"}});
    auto e = chain.add_edge(s1, s2, make_policy<P, Generated>(p, g1, fp), deps::gemm_a(fp, g2));
    BATON_TRY(chain.validate());  // includes the soundness checker
    BATON_TRY(ws.alloc(chain.workspace_bytes(), "baton workspace"));
    BATON_TRY(initialize_workspace(chain, ws.p, chain.workspace_bytes(), stream));
    BindOptions o1, o2;
    o1.watchdog_ns = o2.watchdog_ns = kWatchdogNs;
    o1.trace = trace1;
    o2.trace = trace2;
    auto b1 = chain.bind(s1, ws.p, chain.workspace_bytes(), outs(e), ins(), o1);
    auto b2 = chain.bind(s2, ws.p, chain.workspace_bytes(), outs(), ins(e), o2);
    if (!b1.ok()) return b1.error();
    if (!b2.ok()) return b2.error();
    auto l1 = p.launch1(b1.value());
    auto l2 = gemm2_launch(b2.value(), p.args2());
    if (!l1.ok()) return l1.error().with_context("gemm1");
    if (!l2.ok()) return l2.error().with_context("gemm2");
    launches = {l1.value(), l2.value()};
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) { return launch_chain(chain, s, launches, launch_schedule::pdl); }
  [[nodiscard]] status errors(cudaStream_t s) { return check_errors(chain, ws.p, s); }
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

// ---- running and timing one variant ------------------------------------------------------------

struct Ctx {
  Args args;
  cudaStream_t stream = nullptr;
  int num_sms = 0;
  cublasLtHandle_t lt = nullptr;
  void* lt_ws = nullptr;
  std::vector<bf16> x, w1, w2;  // host copies (the reference); w1 [2F, H] interleaved for SwiGLU
  std::map<int, std::vector<double>> ref_cache;  // row of Z -> its fp64 reference
  bf16 *dx = nullptr, *dw1 = nullptr, *dw2 = nullptr, *dy = nullptr, *dz = nullptr, *dt = nullptr;
  std::string workload;
};

struct Variant {
  std::string name;
  bool baseline = false;
  bool graph = true;
  std::string policy = "-";
  std::function<status()> enqueue;                       // one MLP iteration on ctx.stream
  std::function<status()> errors = [] { return status{}; };  // the chain's error record (baton)
};

[[nodiscard]] status capture(cudaStream_t s, int iters, const std::function<status()>& enqueue, GraphExec& out) {
  BATON_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  status st;
  for (int i = 0; i < iters && st.ok(); ++i) st = enqueue();
  cudaGraph_t g = nullptr;
  const cudaError_t e = cudaStreamEndCapture(s, &g);
  if (st.ok()) st = cuda_status(e, "cudaStreamEndCapture");
  if (st.ok()) st = cuda_status(cudaGraphInstantiate(&out.exec, g, 0), "cudaGraphInstantiate");
  if (g) (void)cudaGraphDestroy(g);
  if (!st.ok()) (void)cudaGetLastError();
  return st;
}

struct Check {
  bool ok = false;
  double rel_err = 0;
  size_t nonfinite = 0;
};

// Z's sampled rows against the reference (after whatever last wrote Z).
[[nodiscard]] status check_z(Ctx& c, const Problem& p, const std::vector<int>& rows,
                             const std::vector<std::vector<double>>& ref, Check& out) {
  std::vector<bf16> z(size_t(p.m) * p.h);
  BATON_CUDA_TRY(cudaMemcpy(z.data(), p.z, z.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  out = Check{};
  for (const bf16& e : z) out.nonfinite += !std::isfinite(float(e));
  double num = 0, den = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    for (int j = 0; j < p.h; ++j) {
      const double g = double(float(z[size_t(rows[r]) * p.h + j])), e = ref[r][size_t(j)];
      if (std::isfinite(g)) num += (g - e) * (g - e);
      den += e * e;
    }
  out.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  out.ok = out.nonfinite == 0 && out.rel_err < 1e-2;
  return {};
}

// Poisons Y and Z, runs one iteration the variant's way, compares Z with the reference rows.
[[nodiscard]] status check(Ctx& c, const Problem& p, Variant& v, const std::vector<int>& rows,
                           const std::vector<std::vector<double>>& ref, Check& out) {
  BATON_CUDA_TRY(cudaMemsetAsync(p.y, 0xFF, size_t(p.m) * p.f * sizeof(bf16), c.stream));  // 0xFFFF: bf16 NaN
  BATON_CUDA_TRY(cudaMemsetAsync(p.z, 0xFF, size_t(p.m) * p.h * sizeof(bf16), c.stream));
  if (v.graph) {
    GraphExec g;
    BATON_TRY(capture(c.stream, 1, v.enqueue, g));
    BATON_CUDA_TRY(cudaGraphLaunch(g.exec, c.stream));
  } else {
    BATON_TRY(v.enqueue());
  }
  BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
  BATON_TRY(v.errors());
  return check_z(c, p, rows, ref, out);
}

[[nodiscard]] status time_variant(Ctx& c, Variant& v, std::vector<double>& us) {
  const int iters = c.args.iters;
  Events ev;
  BATON_CUDA_TRY(cudaEventCreate(&ev.a));
  BATON_CUDA_TRY(cudaEventCreate(&ev.b));
  GraphExec g;
  if (v.graph) BATON_TRY(capture(c.stream, iters, v.enqueue, g));
  auto rep = [&]() -> status {
    if (v.graph) return cuda_status(cudaGraphLaunch(g.exec, c.stream), "cudaGraphLaunch");
    for (int i = 0; i < iters; ++i) BATON_TRY(v.enqueue());
    return {};
  };
  for (int w = 0; w < c.args.warmup; ++w) BATON_TRY(rep());
  BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
  BATON_TRY(v.errors());  // a watchdog report ends the variant before the timed loop
  for (int r = 0; r < c.args.reps; ++r) {
    BATON_CUDA_TRY(cudaEventRecord(ev.a, c.stream));
    BATON_TRY(rep());
    BATON_CUDA_TRY(cudaEventRecord(ev.b, c.stream));
    BATON_CUDA_TRY(cudaEventSynchronize(ev.b));
    float ms = 0;
    BATON_CUDA_TRY(cudaEventElapsedTime(&ms, ev.a, ev.b));
    us.push_back(1000.0 * double(ms) / iters);
  }
  BATON_TRY(v.errors());
  return {};
}

// baton-auto: baton::ops::Mlp, the op with its own plan (policy, split-K, tile order; the bench's
// --split-k / --group-m are passed on when given), its kernels the bench's instantiations.
struct OpMlp {
  std::unique_ptr<ops::Mlp<ops::activation::gelu, OpKernels<ops::activation::gelu>>> gelu;
  std::unique_ptr<ops::Mlp<ops::activation::swiglu, OpKernels<ops::activation::swiglu>>> swiglu;
  // tune = false: what create() gives a user with default options (the bench's baton-plan).
  [[nodiscard]] status build(const Problem& p, const Args& a, int sms, cudaStream_t stream, bool tune = true) {
    ops::MlpRunOptions o;
    o.sms = sms;
    o.plan.split1 = a.split1;
    o.plan.split2 = a.split2;
    o.plan.group_m = a.group_m;
    o.plan.l2_prefetch_mb = a.l2_prefetch_mb;
    o.plan.swap_gemm2 = a.swap_gemm2;
    o.plan.swap_gemm1 = a.swap_gemm1;
    o.plan.pdl = a.pdl;
    o.plan.cta_pairs = a.cta_pairs;
    o.tune_cta_pairs = a.cta_pairs == 1;  // --cta-pairs 1: tuning also weighs them against the rest
    o.watchdog_ns = kWatchdogNs;
    o.tune = tune;  // per-shape: times the candidate plans, keeps the fastest (logged)
    const ops::MlpTensors t{p.x, p.w1, p.w2, p.y, p.z};
    const ops::MlpShape shape{p.m, p.h, p.f, p.swiglu ? ops::activation::swiglu : ops::activation::gelu};
    if (p.swiglu) {
      auto m = ops::Mlp<ops::activation::swiglu, OpKernels<ops::activation::swiglu>>::create(shape, t, stream, o);
      if (!m.ok()) return m.error();
      swiglu = std::move(m.value());
    } else {
      auto m = ops::Mlp<ops::activation::gelu, OpKernels<ops::activation::gelu>>::create(shape, t, stream, o);
      if (!m.ok()) return m.error();
      gelu = std::move(m.value());
    }
    return {};
  }
  [[nodiscard]] status enqueue(cudaStream_t s) { return gelu ? gelu->enqueue(s) : swiglu->enqueue(s); }
  [[nodiscard]] status enqueue_gemm(int which, cudaStream_t s) {
    return gelu ? gelu->enqueue_gemm(which, s) : swiglu->enqueue_gemm(which, s);
  }
  const ops::MlpPlan& plan() const { return gelu ? gelu->plan() : swiglu->plan(); }
  [[nodiscard]] status errors(cudaStream_t s) { return gelu ? gelu->check_errors(s) : swiglu->check_errors(s); }
};

// Per-tile timelines of one iteration (the last of three) of a bound chain.
template <class Mlp>
[[nodiscard]] status write_timeline(Ctx& c, const Problem& p, const std::string& path, const char* what,
                                    const std::function<status(Mlp&)>& enqueue) {
  const Grid g1 = p.g1(), g2 = p.g2();
  DevMem t1, t2;
  BATON_TRY(t1.alloc(size_t(g1.size()) * sizeof(TileEvent), "trace gemm1"));
  BATON_TRY(t2.alloc(size_t(g2.size()) * sizeof(TileEvent), "trace gemm2"));
  BATON_CUDA_TRY(cudaMemsetAsync(t1.p, 0, size_t(g1.size()) * sizeof(TileEvent), c.stream));
  BATON_CUDA_TRY(cudaMemsetAsync(t2.p, 0, size_t(g2.size()) * sizeof(TileEvent), c.stream));
  Mlp mlp;
  BATON_TRY(mlp.build(p, c.stream, static_cast<TileEvent*>(t1.p), static_cast<TileEvent*>(t2.p)));
  for (int i = 0; i < 3; ++i) BATON_TRY(enqueue(mlp));  // events are per position: the last epoch wins
  BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
  BATON_TRY(check_errors(mlp.chain, mlp.ws.p, c.stream));
  std::vector<std::vector<TileEvent>> ev(2);
  ev[0].resize(size_t(g1.size()));
  ev[1].resize(size_t(g2.size()));
  BATON_CUDA_TRY(cudaMemcpy(ev[0].data(), t1.p, ev[0].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost));
  BATON_CUDA_TRY(cudaMemcpy(ev[1].data(), t2.p, ev[1].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost));
  size_t missing = 0;
  uint64_t t0 = UINT64_MAX, t_end = 0;
  for (const auto& s : ev)
    for (const auto& e : s) {
      if (e.start_ns == 0 || e.end_ns < e.start_ns) {
        ++missing;
        continue;
      }
      t0 = std::min(t0, e.start_ns);
      t_end = std::max(t_end, e.end_ns);
    }
  BATON_TRY(write_chrome_trace(path, mlp.chain, ev));
  std::printf("wrote %s (%s, m=%d: %lld + %lld tiles, first start to last end %.1f us%s)\n", path.c_str(), what, p.m,
              (long long)g1.size(), (long long)g2.size(), t_end > t0 ? double(t_end - t0) / 1e3 : 0.0,
              missing ? (", " + std::to_string(missing) + " tiles unrecorded").c_str() : "");
  return {};
}

// One row of DIR/<workload>-breakdown.csv: a chain's pass against its two GEMMs timed alone.
struct BreakdownRow {
  int m = 0;
  std::string variant, plan;
  double chain_us = 0, gemm1_us = 0, gemm2_us = 0;
  double gemm1_floor_us = 0, gemm2_floor_us = 0;  // max(FLOPs / 790 TFLOP/s, bytes / 4.3 TB/s) per GEMM
  double gemm1_bytes = 0, gemm2_bytes = 0;        // weights + activations read + output written
};

[[nodiscard]] status write_breakdown_csv(const std::string& path, const std::string& workload,
                                         const std::vector<BreakdownRow>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return status(errc::invalid_argument, "cannot write '" + path + "'");
  std::fprintf(f,
               "workload,m,variant,chain_us,gemm1_us,gemm2_us,rest_us,gemm1_floor_us,gemm2_floor_us,gemm1_tb_per_s,"
               "gemm2_tb_per_s,plan\n");
  for (const auto& r : rows)
    std::fprintf(f, "%s,%d,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%s\n", workload.c_str(), r.m, r.variant.c_str(),
                 r.chain_us, r.gemm1_us, r.gemm2_us, r.chain_us - r.gemm1_us - r.gemm2_us, r.gemm1_floor_us,
                 r.gemm2_floor_us, r.gemm1_bytes / (r.gemm1_us * 1e6), r.gemm2_bytes / (r.gemm2_us * 1e6),
                 r.plan.c_str());
  if (std::fclose(f) != 0) return status(errc::invalid_argument, "writing '" + path + "' failed");
  return {};
}

bool wanted(const Ctx& c, const std::string& v) {
  return std::find(c.args.variants.begin(), c.args.variants.end(), v) != c.args.variants.end();
}

// One stage launched alone, without PDL (after everything before it on `s`).
[[nodiscard]] status launch_alone(const StageLaunch& l, cudaStream_t s) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = l.grid;
  cfg.blockDim = l.block;
  cfg.dynamicSmemBytes = l.smem;
  cfg.stream = s;
  return cuda_status(l.launch(cfg), "launching a stage alone");
}

// The wait path's pure cost (BENCHMARKS.md, "Sync overhead"): GEMM2 alone, in a graph of
// --iters-per-graph launches, with every semaphore it waits on already posted, against the same
// GEMM2 (same tiles, split-K, order) without waits. GEMM1 of the policy's chain runs first once for
// every epoch GEMM2 will wait on, so no wait ever blocks: what remains is the sync warp, the
// horizon checks and the proxy fences.
[[nodiscard]] status sync_overhead_shape(Ctx& c, Problem& p, const std::string& shape, const std::vector<int>& sample,
                                         const std::vector<std::vector<double>>& ref, std::vector<bench::Row>& rows) {
  PlainMlp plain;
  BATON_TRY(plain.build(p, c.stream).with_context("plain chain"));
  BatonMlp<HandKBlock> kblock;
  BatonMlp<HandRow> row;
  BATON_TRY(kblock.build(p, c.stream).with_context("kblock chain"));
  BATON_TRY(row.build(p, c.stream).with_context("row chain"));
  const int epochs = (c.args.warmup + c.args.reps) * c.args.iters + 1;  // GEMM2 launches: the check + timing
  struct Case {
    const char* name;
    const char* policy;
    const StageLaunch* gemm1;  // null: no waits
    const StageLaunch* gemm2;
    std::function<status()> errors;
  };
  const Case cases[] = {
      {"gemm2-nowait", "none", nullptr, &plain.serial[1], [] { return status{}; }},
      {"gemm2-kblock-posted", "kblock", &kblock.launches[0], &kblock.launches[1], [&] { return kblock.errors(c.stream); }},
      {"gemm2-row-posted", "row", &row.launches[0], &row.launches[1], [&] { return row.errors(c.stream); }},
  };
  // GEMM1 first: Y for every case, and every epoch the waiting GEMM2s will wait on, posted.
  BATON_TRY(launch_alone(plain.serial[0], c.stream));
  for (const Case& k : cases)
    if (k.gemm1)
      for (int e = 0; e < epochs; ++e) BATON_TRY(launch_alone(*k.gemm1, c.stream));
  constexpr int kCases = int(std::size(cases));
  Check chk[kCases];
  GraphExec graphs[kCases];
  for (int i = 0; i < kCases; ++i) {
    const Case& k = cases[i];
    BATON_CUDA_TRY(cudaMemsetAsync(p.z, 0xFF, size_t(p.m) * p.h * sizeof(bf16), c.stream));
    BATON_TRY(launch_alone(*k.gemm2, c.stream));
    BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
    BATON_TRY(k.errors().with_context(k.name));
    BATON_TRY(check_z(c, p, sample, ref, chk[i]));
    BATON_TRY(capture(c.stream, c.args.iters, [&] { return launch_alone(*k.gemm2, c.stream); }, graphs[i]));
  }
  // Timed side by side: repetition r of every case before repetition r + 1 of any, so clocks and
  // power (sustained GEMMs run at the power limit) weigh on every case alike.
  Events ev;
  BATON_CUDA_TRY(cudaEventCreate(&ev.a));
  BATON_CUDA_TRY(cudaEventCreate(&ev.b));
  std::vector<double> us[kCases];
  for (int r = -c.args.warmup; r < c.args.reps; ++r)
    for (int i = 0; i < kCases; ++i) {
      BATON_CUDA_TRY(cudaEventRecord(ev.a, c.stream));
      BATON_CUDA_TRY(cudaGraphLaunch(graphs[i].exec, c.stream));
      BATON_CUDA_TRY(cudaEventRecord(ev.b, c.stream));
      BATON_CUDA_TRY(cudaEventSynchronize(ev.b));
      float ms = 0;
      BATON_CUDA_TRY(cudaEventElapsedTime(&ms, ev.a, ev.b));
      if (r >= 0) us[i].push_back(1000.0 * double(ms) / c.args.iters);
    }
  for (int i = 0; i < kCases; ++i) {
    const Case& k = cases[i];
    BATON_TRY(k.errors().with_context(k.name));
    std::sort(us[i].begin(), us[i].end());
    bench::Row r;
    r.workload = "sync-overhead";
    r.shape = shape + ";act=" + (p.swiglu ? "swiglu" : "gelu");
    r.variant = k.name;
    r.median_us = us[i][us[i].size() / 2];
    r.min_us = us[i].front();
    r.max_us = us[i].back();
    r.reps = int(us[i].size());
    r.baseline = k.gemm1 == nullptr;
    r.correct = chk[i].ok;
    r.extra = {{"policy", k.policy}, {"split2", std::to_string(p.split2)},
               {"k_blocks2", std::to_string(ceil_div(p.f, Config2::tile_k))}, {"rel_err", std::to_string(chk[i].rel_err)}};
    std::printf("[m=%d] %-20s %9.2f us (min %.2f, max %.2f) x%.3f%s\n", p.m, k.name, r.median_us, r.min_us, r.max_us,
                r.median_us / us[0][us[0].size() / 2], chk[i].ok ? "" : "  INCORRECT");
    rows.push_back(r);
  }
  return {};
}

// Returns false on a fatal error (the CUDA context is unusable); failed variants give rows with correct = 0.
bool run_shape(Ctx& c, int m, std::vector<bench::Row>& rows, std::vector<BreakdownRow>& parts) {
  Problem p{m, c.args.hidden, c.args.ffn, c.dx, c.dw1, c.dw2, c.dy, c.dz};
  p.swiglu = c.args.swiglu;
  p.t = c.dt;
  const Grid g1 = p.g1(), g2 = p.g2();
  // Split-K, the same for every variant on the baton GEMM: chosen for the shape unless --split-k.
  const int k1_blocks = ceil_div(p.h, Config1::tile_k), k2_blocks = ceil_div(p.f, Config2::tile_k);
  p.split1 = c.args.split1 > 0 ? std::min(c.args.split1, k1_blocks) : sm90::choose_split_k(g1.size(), k1_blocks, c.num_sms);
  p.split2 = c.args.split2 > 0 ? std::min(c.args.split2, k2_blocks) : sm90::choose_split_k(g2.size(), k2_blocks, c.num_sms);
  p.group_m = c.args.group_m > 0 ? c.args.group_m : ops::mlp_group_m(g1);
  DevMem sw1, sw2;
  for (auto [mem, bytes, ptr] : {std::tuple{&sw1, p.sw1_bytes(), &p.sw1}, std::tuple{&sw2, p.sw2_bytes(), &p.sw2}}) {
    if (bytes == 0) continue;
    status st = mem->alloc(bytes, "split-K workspace");
    if (st.ok()) st = cuda_status(cudaMemsetAsync(mem->p, 0, bytes, c.stream), "zeroing the split-K workspace");
    if (!st.ok()) {
      std::fprintf(stderr, "error: [m=%d] %s\n", m, st.to_string().c_str());
      return false;
    }
    *ptr = mem->p;
  }
  const std::string shape = "m=" + std::to_string(m) + ";h=" + std::to_string(p.h) + ";f=" + std::to_string(p.f);
  // GeLU: 2 GEMMs of M x H x F; SwiGLU: GEMM1 is M x H x 2F. Weights read once, X and Z once.
  const double w_mats = p.swiglu ? 3.0 : 2.0;
  const double flops = 2.0 * w_mats * double(m) * p.h * p.f;
  const double bytes = 2.0 * (2.0 * double(m) * p.h + w_mats * double(p.h) * p.f);
  const double floor_us = std::max(flops / 790e12, bytes / 4.3e12) * 1e6;

  // Reference rows, cached across shapes (every M uses the leading rows of the same X).
  const std::vector<int> sample = sample_rows(m, c.args.check_rows);
  std::vector<int> missing;
  for (int r : sample)
    if (!c.ref_cache.count(r)) missing.push_back(r);
  if (!missing.empty()) {
    auto z = reference_rows(c.x, c.w1, c.w2, p.h, p.f, p.swiglu, missing);
    for (size_t i = 0; i < missing.size(); ++i) c.ref_cache[missing[i]] = std::move(z[i]);
  }
  std::vector<std::vector<double>> ref;
  for (int r : sample) ref.push_back(c.ref_cache[r]);

  {
    // UTC time of day: lines up the shapes with a clock/power log (scripts/device_run.sh samples nvidia-smi).
    const auto now = std::chrono::system_clock::now();
    const std::time_t tt = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    const int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    std::printf("[m=%d] %02d:%02d:%02d.%03d UTC: GEMM1 %lld tiles x %d split-K parts, GEMM2 %lld tiles x %d parts (%s), "
                "tile order Grouped{%d}\n",
                m, tm.tm_hour, tm.tm_min, tm.tm_sec, ms, (long long)g1.size(), p.split1, (long long)g2.size(), p.split2,
                c.args.split1 > 0 ? "--split-k" : "choose_split_k", p.group_m);
  }
  if (c.args.sync_overhead) {
    const status st = sync_overhead_shape(c, p, shape, sample, ref, rows);
    if (!st.ok()) {
      std::fprintf(stderr, "error: [m=%d] sync overhead: %s\n", m, st.to_string().c_str());
      if (st.code() == errc::cuda_error && cudaStreamSynchronize(c.stream) != cudaSuccess) return false;
    }
    return true;
  }
  ops::MlpOptions plan_opts;
  plan_opts.split1 = c.args.split1;
  plan_opts.split2 = c.args.split2;
  plan_opts.group_m = c.args.group_m;
  const auto auto_plan = ops::plan_mlp({m, p.h, p.f, p.swiglu ? ops::activation::swiglu : ops::activation::gelu},
                                       c.num_sms, plan_opts);
  const std::string auto_policy = auto_plan.ok() ? ops::to_string(auto_plan.value().policy) : "?";

  PlainMlp plain;
  auto kblock = std::make_unique<BatonMlp<HandKBlock>>();
  auto row = std::make_unique<BatonMlp<HandRow>>();
  auto kblock_gen = std::make_unique<BatonMlp<KBlock, true>>();  // batonc's, from include/baton/ops/mlp.baton
  auto row_gen = std::make_unique<BatonMlp<Row, true>>();
  auto op = std::make_unique<OpMlp>();
  auto plan_op = std::make_unique<OpMlp>();  // baton-plan: the op untuned
  LtMlp lt;
  UniversalMlp streamk, persistent;
  WideMlp wide, wide2;
  wide2.wide1 = false;

  std::vector<Variant> vs;
  {
    Variant v;
    v.baseline = true;
    v.name = "cutlass-stream";
    v.graph = false;
    v.enqueue = [&] { return launch_chain(plain.chain, c.stream, plain.serial, launch_schedule::serial); };
    vs.push_back(v);
    v.name = "cutlass-graph";
    v.graph = true;
    vs.push_back(v);
    v.name = "cutlass-pdl-graph";
    v.enqueue = [&] { return launch_chain(plain.chain, c.stream, plain.pdl, launch_schedule::pdl); };
    vs.push_back(v);
    v.name = "cutlass-streamk-graph";
    v.enqueue = [&] { return streamk.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cutlass-persistent-graph";
    v.enqueue = [&] { return persistent.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cublaslt-graph";
    v.enqueue = [&] { return lt.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cutlass-wide-graph";
    v.enqueue = [&] { return wide.enqueue(c.stream); };
    vs.push_back(v);
    v.name = "cutlass-wide2-graph";
    v.enqueue = [&] { return wide2.enqueue(c.stream); };
    vs.push_back(v);
  }
  auto baton_variant = [&](const std::string& name, auto* mlp, const std::string& policy) {
    Variant v;
    v.name = name;
    v.policy = policy;
    v.enqueue = [&c, mlp] { return mlp->enqueue(c.stream); };
    v.errors = [&c, mlp] { return mlp->errors(c.stream); };
    vs.push_back(v);
  };
  baton_variant("baton-kblock", kblock.get(), "kblock");
  baton_variant("baton-row", row.get(), "row");
  baton_variant("baton-kblock-gen", kblock_gen.get(), "kblock");
  baton_variant("baton-row-gen", row_gen.get(), "row");
  baton_variant("baton-auto", op.get(), auto_policy);
  baton_variant("baton-plan", plan_op.get(), auto_policy);

  // Builds what the wanted variants need (host work: validation, TMA descriptors, heuristics).
  auto build_for = [&](const std::string& name) -> status {
    if (name == "cutlass-streamk-graph") return streamk.build(p, SchedulerMode::stream_k, c.num_sms, c.stream);
    if (name == "cutlass-persistent-graph") return persistent.build(p, SchedulerMode::data_parallel, c.num_sms, c.stream);
    if (name == "cutlass-wide-graph") return wide.build(p, c.stream);
    if (name == "cutlass-wide2-graph") return wide2.build(p, c.stream);
    if (name.rfind("cutlass-", 0) == 0) {
      if (!plain.built) plain.built = std::make_unique<status>(plain.build(p, c.stream));
      return *plain.built;
    }
    if (name == "cublaslt-graph") return lt.build(p, c.lt, c.lt_ws);
    if (name == "baton-kblock") return kblock->build(p, c.stream);
    if (name == "baton-row") return row->build(p, c.stream);
    if (name == "baton-kblock-gen") return kblock_gen->build(p, c.stream);
    if (name == "baton-row-gen") return row_gen->build(p, c.stream);
    if (name == "baton-plan") return plan_op->build(p, c.args, c.num_sms, c.stream, /*tune=*/false);
    return op->build(p, c.args, c.num_sms, c.stream);
  };

  bool fatal = false;
  for (auto& v : vs) {
    if (!wanted(c, v.name)) continue;
    bench::Row r;
    r.workload = c.workload;
    r.shape = shape;
    r.variant = v.name;
    r.floor_us = floor_us;
    r.baseline = v.baseline;
    Check before, after;
    std::vector<double> us;
    status st = build_for(v.name).with_context("building " + v.name);
    // One iteration outside any capture first: loads the kernels (lazy module loading) and
    // cuBLASLt's, so nothing is loaded while a graph is captured.
    if (st.ok()) st = [&]() -> status {
      BATON_TRY(v.enqueue());
      BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
      return v.errors();
    }().with_context("first run of " + v.name);
    if (st.ok() && v.name == "baton-auto") v.policy = ops::to_string(op->plan().policy);  // tuned at build
    if (st.ok() && v.name == "baton-plan") v.policy = ops::to_string(plan_op->plan().policy);
    if (st.ok()) st = check(c, p, v, sample, ref, before).with_context("checking " + v.name + " before timing");
    if (st.ok()) st = time_variant(c, v, us).with_context("timing " + v.name);
    if (st.ok()) st = check(c, p, v, sample, ref, after).with_context("checking " + v.name + " after timing");
    if (st.ok()) {
      const auto s = bench::stats(us);
      r.median_us = s.median;
      r.min_us = s.min;
      r.max_us = s.max;
      r.reps = int(us.size());
      r.correct = before.ok && after.ok;
    } else {
      std::fprintf(stderr, "error: [m=%d] %s\n", m, st.to_string().c_str());
      (void)cudaGetLastError();
      // A sticky error (illegal address, ...) leaves the context unusable: stop after this row.
      if (st.code() == errc::cuda_error && cudaStreamSynchronize(c.stream) != cudaSuccess) fatal = true;
      (void)cudaGetLastError();
    }
    const double rel = std::max(before.rel_err, after.rel_err);
    const size_t nonfinite = std::max(before.nonfinite, after.nonfinite);
    std::printf("[m=%d] %-18s median %9.2f us  (min %9.2f, max %9.2f)  rel_err %.2e%s%s\n", m, v.name.c_str(),
                r.median_us, r.min_us, r.max_us, rel, nonfinite ? (" NaN/Inf " + std::to_string(nonfinite)).c_str() : "",
                r.correct ? "" : "  FAILED");
    char relbuf[32];
    std::snprintf(relbuf, sizeof relbuf, "%.3e", rel);
    const bool on_baton_gemm = v.name.rfind("baton-", 0) == 0 || v.name == "cutlass-stream" || v.name == "cutlass-graph" ||
                               v.name == "cutlass-pdl-graph";
    // The op's rows (baton-auto tuned, baton-plan untuned) report the plan the op runs.
    const OpMlp* op_of_v = v.name == "baton-auto" && (op->gelu || op->swiglu)             ? op.get()
                           : v.name == "baton-plan" && (plan_op->gelu || plan_op->swiglu) ? plan_op.get()
                                                                                           : nullptr;
    auto op_tiles = [](const ops::MlpPlan& pl) {
      return (pl.swap_gemm1 ? "swap128x" + std::to_string(ops::kMlpSwapTileN)
                            : "128x" + std::to_string(pl.tile_n1) + (pl.pairs1 ? "p" : "")) +
             (pl.swap_gemm2 ? "/swap128x" + std::to_string(ops::kMlpSwapTileN)
                            : "/128x" + std::to_string(pl.tile_n2) + (pl.pairs2 ? "p" : ""));
    };
    r.extra = {{"policy", v.policy},
               {"act", p.swiglu ? "swiglu" : "gelu"},
               {"group_m", op_of_v        ? std::to_string(op_of_v->plan().group_m)
                           : on_baton_gemm ? std::to_string(p.group_m)
                                           : "-"},
               {"split_k", op_of_v ? std::to_string(op_of_v->plan().split1) + "/" + std::to_string(op_of_v->plan().split2)
                           : on_baton_gemm ? std::to_string(p.split1) + "/" + std::to_string(p.split2)
                                           : "-"},
               {"tiles", op_of_v                           ? op_tiles(op_of_v->plan())
                         : v.name == "cutlass-wide-graph"  ? "128x256/128x256"
                         : v.name == "cutlass-wide2-graph" ? "128x128/128x256"
                         : on_baton_gemm                   ? "128x128/128x128"
                                                           : "-"},
               {"gemm2_pdl", op_of_v ? (op_of_v->plan().pdl ? "1" : "0")
                             : v.name == "cutlass-pdl-graph" || v.name.starts_with("baton-kblock") || v.name.starts_with("baton-row") ? "1"
                             : on_baton_gemm ? "0"
                                             : "-"},
               {"l2_prefetch_kblocks", op_of_v ? std::to_string(op_of_v->plan().l2_prefetch_kblocks) : "0"},
               {"rel_err", relbuf},
               {"gemm1_tiles", std::to_string(g1.size())},
               {"gemm2_tiles", std::to_string(g2.size())},
               {"iters_per_rep", std::to_string(c.args.iters)},
               {"timing", v.graph ? "graph" : "stream"},
               {"cutlass", std::to_string(CUTLASS_MAJOR) + "." + std::to_string(CUTLASS_MINOR) + "." +
                               std::to_string(CUTLASS_PATCH)},
               {"cublaslt", std::to_string(cublasLtGetVersion())}};
    rows.push_back(r);
    if (fatal) return false;
  }

  // The breakdown: baton-auto's and cuBLASLt's GEMMs each timed alone (a graph of --iters-per-graph
  // launches of that GEMM, the same method), against the chain's median above. rest = chain - GEMM1
  // - GEMM2 is what chaining costs beyond the GEMMs themselves (launch and ramp between them, tails
  // that do not overlap; negative where the chain overlaps them, PDL).
  if (c.args.breakdown) {
    auto chain_median = [&](const std::string& v) {
      for (const auto& r : rows)
        if (r.shape == shape && r.variant == v && r.correct) return r.median_us;
      return 0.0;
    };
    auto time_alone = [&](const std::string& what, std::function<status()> f, double& med) -> status {
      Variant v;
      v.name = what;
      v.enqueue = std::move(f);
      std::vector<double> us;
      BATON_TRY(time_variant(c, v, us).with_context("timing " + what + " alone"));
      med = bench::stats(us).median;
      return {};
    };
    const double n1 = p.swiglu ? 2.0 * p.f : double(p.f);
    BreakdownRow base;
    base.m = m;
    base.gemm1_bytes = 2.0 * (n1 * p.h + double(m) * p.h + double(m) * p.f);
    base.gemm2_bytes = 2.0 * (double(p.h) * p.f + double(m) * p.f + double(m) * p.h);
    base.gemm1_floor_us = std::max(2.0 * m * n1 * p.h / 790e12, base.gemm1_bytes / 4.3e12) * 1e6;
    base.gemm2_floor_us = std::max(2.0 * m * double(p.h) * p.f / 790e12, base.gemm2_bytes / 4.3e12) * 1e6;
    struct Who {
      std::string name;
      std::function<status(int)> gemm;
      std::string plan;
    };
    std::vector<Who> who;
    if (wanted(c, "baton-auto") && chain_median("baton-auto") > 0 && (op->gelu || op->swiglu)) {
      const auto& pl = op->plan();
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s split-K %d/%d tiles %s/%s%s", ops::to_string(pl.policy), pl.split1, pl.split2,
                    pl.swap_gemm1 ? "swap128x32" : ("128x" + std::to_string(pl.tile_n1) + (pl.pairs1 ? "p" : "")).c_str(),
                    pl.swap_gemm2 ? "swap128x32" : ("128x" + std::to_string(pl.tile_n2) + (pl.pairs2 ? "p" : "")).c_str(),
                    pl.pdl ? " pdl" : "");
      who.push_back({"baton-auto", [&](int g) { return op->enqueue_gemm(g, c.stream); }, buf});
    }
    if (wanted(c, "cublaslt-graph") && chain_median("cublaslt-graph") > 0)
      who.push_back({"cublaslt-graph",
                     [&](int g) { return g == 1 ? lt.enqueue_gemm1(c.stream) : lt.enqueue_gemm2(c.stream); },
                     p.swiglu ? "heuristic's top algorithm; GEMM1 includes the SwiGLU kernel" : "heuristic's top algorithm"});
    for (auto& w : who) {
      BreakdownRow r = base;
      r.variant = w.name;
      r.plan = w.plan;
      r.chain_us = chain_median(w.name);
      status st = time_alone(w.name + " GEMM1", [&] { return w.gemm(1); }, r.gemm1_us);
      if (st.ok()) st = time_alone(w.name + " GEMM2", [&] { return w.gemm(2); }, r.gemm2_us);
      if (!st.ok()) {
        std::fprintf(stderr, "error: [m=%d] breakdown: %s\n", m, st.to_string().c_str());
        (void)cudaGetLastError();
        continue;
      }
      std::printf("[m=%d] breakdown %-14s chain %8.2f us = GEMM1 %8.2f (%.2f TB/s) + GEMM2 %8.2f (%.2f TB/s) + rest %7.2f\n",
                  m, w.name.c_str(), r.chain_us, r.gemm1_us, r.gemm1_bytes / (r.gemm1_us * 1e6), r.gemm2_us,
                  r.gemm2_bytes / (r.gemm2_us * 1e6), r.chain_us - r.gemm1_us - r.gemm2_us);
      parts.push_back(r);
    }
  }

  if (c.args.trace_m == m) {
    const std::string base = c.args.out_dir + "/timeline-" + c.workload + "-m" + std::to_string(m);
    status st = write_timeline<BatonMlp<HandRow>>(c, p, base + ".json", "baton-row",
                                                  [&](BatonMlp<HandRow>& b) { return b.enqueue(c.stream); });
    if (!st.ok()) std::fprintf(stderr, "error: timeline: %s\n", st.to_string().c_str());
    st = write_timeline<PlainMlp>(c, p, base + "-cutlass-pdl.json", "cutlass-pdl", [&](PlainMlp& b) {
      return launch_chain(b.chain, c.stream, b.pdl, launch_schedule::pdl);
    });
    if (!st.ok()) std::fprintf(stderr, "error: timeline (cutlass-pdl): %s\n", st.to_string().c_str());
  }
  return true;
}

// One line per shape: every variant's median and baton-auto against the best baseline and the floor.
void print_summary(const std::vector<bench::Row>& rows, const std::vector<std::string>& variants) {
  std::vector<std::string> shapes;
  for (const auto& r : rows)
    if (std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end()) shapes.push_back(r.shape);
  std::printf("\nmedian us per MLP iteration (* = failed check)\n%-26s", "shape");
  for (const auto& v : variants) std::printf(" %17s", v.c_str());
  std::printf(" %10s %10s %10s\n", "best_base", "auto/best", "auto/floor");
  for (const auto& s : shapes) {
    std::printf("%-26s", s.c_str());
    double best = 0, autom = 0, floor_us = 0;
    for (const auto& v : variants) {
      const bench::Row* found = nullptr;
      for (const auto& r : rows)
        if (r.shape == s && r.variant == v) found = &r;
      if (!found) {
        std::printf(" %17s", "-");
        continue;
      }
      std::printf(" %16.2f%s", found->median_us, found->correct ? " " : "*");
      best = found->best_baseline_us;
      floor_us = found->floor_us;
      if (v == "baton-auto" && found->correct) autom = found->median_us;
    }
    std::printf(" %10.2f %10.3f %10.2f\n", best, best > 0 && autom > 0 ? autom / best : 0.0,
                floor_us > 0 && autom > 0 ? autom / floor_us : 0.0);
  }
}

extern "C" void on_timeout(int) {
  const char msg[] = "\nbaton_bench_mlp: --timeout-s reached, aborting (a hang? rerun with fewer --m / --variants)\n";
  ssize_t rc = write(2, msg, sizeof msg - 1);
  (void)rc;
  _exit(124);
}

}  // namespace

int main(int argc, char** argv) {
  Ctx c;
  if (!parse(argc, argv, c.args)) return 2;
  if (c.args.timeout_s > 0) {
    std::signal(SIGALRM, on_timeout);
    alarm(unsigned(c.args.timeout_s));
  }
  status dev = require_device();
  if (!dev.ok()) {
    std::fprintf(stderr, "baton_bench_mlp: %s. This benchmark needs an NVIDIA Hopper GPU (sm_90a).\n", dev.to_string().c_str());
    return 3;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
    std::fprintf(stderr, "baton_bench_mlp: device 0 (%s) is not sm_90; the CUTLASS kernels are built for sm_90a only\n",
                 prop.name);
    return 3;
  }
  c.num_sms = prop.multiProcessorCount;
  c.workload = !c.args.swiglu && c.args.hidden == kGpt3Hidden && c.args.ffn == kGpt3Ffn  ? "mlp-gpt3"
               : c.args.swiglu && c.args.hidden == kLlamaHidden && c.args.ffn == kLlamaFfn ? "mlp-llama"
                                                                                          : "mlp-custom";
  const bench::Env env = bench::detect_env();
  auto fail = [](const status& s) {
    std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    return 1;
  };
  const int H = c.args.hidden, F = c.args.ffn, M = c.args.ms.back();
  std::printf("baton_bench_mlp: %s, %d SMs; H=%d F=%d, %zu shapes (M up to %d), reps %d x %d iterations\n", prop.name,
              c.num_sms, H, F, c.args.ms.size(), M, c.args.reps, c.args.iters);
  if (cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking) != cudaSuccess) return fail(status(errc::cuda_error, "cudaStreamCreate"));
  if (status s = lt_status(cublasLtCreate(&c.lt), "cublasLtCreate"); !s.ok()) return fail(s);

  // Inputs for the largest M; smaller M use the leading rows of X.
  c.x = random_bf16(size_t(M) * H, 1, 1.0);
  // SwiGLU: W1 = [Wg; Wu] with rows interleaved (what baton::sm90::pack_swiglu_weights makes
  // from separate Wg, Wu): a random matrix either way.
  c.w1 = random_bf16(size_t(c.args.swiglu ? 2 : 1) * size_t(F) * H, 2, 1.0 / std::sqrt(double(H)));
  c.w2 = random_bf16(size_t(H) * F, 3, 1.0 / std::sqrt(double(F)));
  DevMem x, w1, w2, y, z, t, ltws;
  for (auto [mem, bytes, what] : {std::tuple{&x, c.x.size() * sizeof(bf16), "X"}, std::tuple{&w1, c.w1.size() * sizeof(bf16), "W1"},
                                  std::tuple{&w2, c.w2.size() * sizeof(bf16), "W2"},
                                  std::tuple{&y, size_t(M) * F * sizeof(bf16), "Y"},
                                  std::tuple{&t, size_t(M) * F * (c.args.swiglu ? 2 : 1) * sizeof(bf16), "T"},
                                  std::tuple{&z, size_t(M) * H * sizeof(bf16), "Z"},
                                  std::tuple{&ltws, kLtWorkspaceBytes, "cuBLASLt workspace"}})
    if (status s = mem->alloc(bytes, what); !s.ok()) return fail(s);
  c.dx = static_cast<bf16*>(x.p);
  c.dw1 = static_cast<bf16*>(w1.p);
  c.dw2 = static_cast<bf16*>(w2.p);
  c.dy = static_cast<bf16*>(y.p);
  c.dz = static_cast<bf16*>(z.p);
  c.dt = static_cast<bf16*>(t.p);
  c.lt_ws = ltws.p;
  // On c.stream and synchronized: a pageable cudaMemcpy may return before its DMA lands, and the
  // non-blocking stream would not wait for it.
  for (auto [dst, src] : {std::pair{c.dx, &c.x}, std::pair{c.dw1, &c.w1}, std::pair{c.dw2, &c.w2}})
    if (status s = cuda_status(cudaMemcpyAsync(dst, src->data(), src->size() * sizeof(bf16), cudaMemcpyHostToDevice, c.stream),
                               "uploading the inputs");
        !s.ok())
      return fail(s);
  if (status s = cuda_status(cudaStreamSynchronize(c.stream), "uploading the inputs"); !s.ok()) return fail(s);

  std::vector<bench::Row> rows;
  std::vector<BreakdownRow> parts;
  if (c.args.sync_overhead) c.workload = "sync-overhead-" + c.workload.substr(4);  // mlp-gpt3 -> sync-overhead-gpt3
  const std::string out = c.args.out_dir + "/" + c.workload;
  bool fatal = false;
  for (int m : c.args.ms) {
    fatal = !run_shape(c, m, rows, parts);
    bench::finalize(rows);  // written after every shape: a run killed later keeps what it measured
    bench::write_csv(out + ".csv", rows, env);
    bench::write_json(out + ".json", rows, env);
    if (c.args.breakdown && !parts.empty())
      if (status s = write_breakdown_csv(out + "-breakdown.csv", c.workload, parts); !s.ok())
        std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
    if (fatal) break;
  }
  (void)cublasLtDestroy(c.lt);

  bench::print_table(rows, env);
  std::vector<std::string> shown;
  for (const auto& v : kVariants)
    if (wanted(c, v)) shown.push_back(v);
  print_summary(rows, shown);
  bool ok = !fatal;
  for (const auto& r : rows) ok = ok && r.correct;
  std::printf("\nwrote %s/%s.csv and .json%s\n", c.args.out_dir.c_str(), c.workload.c_str(),
              ok ? "" : fatal ? "  (ABORTED: CUDA context unusable)" : "  (SOME ROWS INCORRECT)");
  return ok ? 0 : 1;
}
