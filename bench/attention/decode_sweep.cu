// baton_bench_decode_sweep: the decode attention kernel (baton/ops/attention/decode_attention.cuh) and
// its combine over split-KV part counts, on random caches, each configuration checked against a CPU
// reference on sampled (sequence, head, query) rows. It is the data behind attention_kv_splits
// (attention.hpp): which part counts keep the cache streaming at the GPU's bandwidth, and where a
// partial last wave costs, and what the kernel's residency bound buys (mma: 1 CTA per SM asked, the
// compiler's 193 registers; mma3: kCtasPerSm = 3, 167). The row the op runs (mma3, the plan's parts) is
// marked `auto`.
//   baton_bench_decode_sweep [--out FILE.csv]      (default: decode-sweep.csv)
// Columns: gpu, driver, cuda, commit, date, shape (batch, heads, new tokens m, keys), kernel (mma or mma3), parts, auto,
// median microseconds of one kernel + combine (CUDA events over 10 launches, median of 7),
// TB/s of K and V read, and the largest absolute error against the reference.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baton/ops/attention/attention.hpp"
#include "baton/ops/attention/decode_attention.cuh"
#include "common/env.hpp"

using namespace baton::ops::decode;
#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

using KFn = void (*)(const Arguments);

int main(int argc, char** argv) {
  std::string out = "decode-sweep.csv";
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::printf("usage: baton_bench_decode_sweep [--out FILE.csv]\n"
                  "Times the decode attention kernel + combine over split-KV part counts at GPT-3 / LLaMA\n"
                  "decode shapes, checks each against a CPU reference, marks the plan's choice.\n");
      return 0;
    } else if (k == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "error: unknown argument '%s' (try --help)\n", k.c_str());
      return 2;
    }
  }
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
    std::printf("baton_bench_decode_sweep: no CUDA device; nothing to time\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  FILE* csv = std::fopen(out.c_str(), "w");
  if (!csv) {
    std::fprintf(stderr, "error: cannot write %s\n", out.c_str());
    return 1;
  }
  const baton::bench::Env env = baton::bench::detect_env();
  std::fprintf(csv, "gpu,driver,cuda,commit,date,shape,kernel,parts,auto,median_us,tb_per_s,max_abs_err\n");
  int worst_fail = 0;
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  struct Shape { int batch, heads, m, kv; };
  std::vector<Shape> shapes = {{1, 12, 1, 8192},  {16, 12, 1, 8192}, {16, 12, 4, 8192}, {16, 12, 4, 1024}, {16, 8, 2, 2048},
                              {1, 12, 4, 2048},  {16, 12, 16, 2048}, {16, 8, 2, 8192}, {4, 12, 8, 4096}, {1, 8, 2, 8192},
                              {8, 8, 3, 3000}, {2, 12, 16, 777}};
  for (const Shape& sh : shapes) {
    Arguments a;
    a.batch = sh.batch; a.heads = sh.heads; a.m = sh.m; a.m_pad = (sh.m + 7) / 8 * 8; a.kv_len = sh.kv; a.cache_rows = sh.kv;
    const int W = a.heads * kHeadDim;
    const size_t qkv_n = size_t(a.batch) * a.m_pad * 3 * W, cache_n = size_t(a.batch) * a.cache_rows * W, o_n = size_t(a.batch) * a.m_pad * W;
    std::vector<__nv_bfloat16> hq(qkv_n), hk(cache_n), hv(cache_n);
    std::mt19937 rng(7); std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& x : hq) x = __float2bfloat16(nd(rng));
    for (size_t i = 0; i < cache_n; ++i) { hk[i] = __float2bfloat16(nd(rng)); hv[i] = __float2bfloat16(nd(rng)); }
    __nv_bfloat16 *dq, *dk, *dv, *dout; float* dpart;
    CK(cudaMalloc(&dq, qkv_n * 2)); CK(cudaMalloc(&dk, cache_n * 2)); CK(cudaMalloc(&dv, cache_n * 2)); CK(cudaMalloc(&dout, o_n * 2));
    const size_t max_rows = size_t(a.batch) * a.heads * 64 * a.m;
    CK(cudaMalloc(&dpart, max_rows * (kHeadDim + 1) * 4));
    CK(cudaMemcpy(dq, hq.data(), qkv_n * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, hk.data(), cache_n * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, hv.data(), cache_n * 2, cudaMemcpyHostToDevice));
    a.qkv = dq; a.k_cache = dk; a.v_cache = dv; a.o = dout;
    // CPU reference for sequence 0 and the last, head 0 and the last (the new K/V from qkv at old..)
    const int old = a.kv_len - a.m;
    auto ref = [&](int b, int h, int i, std::vector<float>& out) {
      const __nv_bfloat16* qb = hq.data() + size_t(b) * a.m_pad * 3 * W;
      std::vector<float> s(a.kv_len);
      float M = -INFINITY;
      for (int j = 0; j <= old + i; ++j) {
        double acc = 0;
        for (int d = 0; d < kHeadDim; ++d) {
          float kx = j < old ? __bfloat162float(hk[(size_t(b) * a.cache_rows + j) * W + h * kHeadDim + d])
                             : __bfloat162float(qb[size_t(j - old) * 3 * W + W + h * kHeadDim + d]);
          acc += double(__bfloat162float(qb[size_t(i) * 3 * W + h * kHeadDim + d])) * kx;
        }
        s[j] = float(acc / std::sqrt(128.0)); M = std::max(M, s[j]);
      }
      out.assign(kHeadDim, 0.f); double L = 0;
      for (int j = 0; j <= old + i; ++j) {
        const double p = std::exp(double(s[j] - M)); L += p;
        for (int d = 0; d < kHeadDim; ++d) {
          float vx = j < old ? __bfloat162float(hv[(size_t(b) * a.cache_rows + j) * W + h * kHeadDim + d])
                             : __bfloat162float(qb[size_t(j - old) * 3 * W + 2 * W + h * kHeadDim + d]);
          out[d] += float(p * vx);
        }
      }
      for (auto& x : out) x = float(x / L);
    };
    std::vector<std::vector<float>> refs;
    std::vector<int> combos;
    for (int b : {0, a.batch - 1}) for (int h : {0, a.heads - 1}) for (int i : {0, a.m / 2, a.m - 1}) {
      std::vector<float> r; ref(b, h, i, r); refs.push_back(r); combos.push_back((b * 1000 + h) * 100 + i);
    }
    const int kb = (a.kv_len + kBlockKeys - 1) / kBlockKeys;
    const int ctas = a.batch * a.heads;
    const double bytes = 2.0 * a.batch * a.kv_len * double(W) * 2;
    char name[96]; std::snprintf(name, sizeof name, "b%d_h%d_m%d_kv%d", sh.batch, sh.heads, sh.m, sh.kv);
    static_assert(kCtasPerSm == 3, "the kernel column names mma3 the op's instantiation");
    const KFn op_fn = attention_kernel();
    for (const KFn fn : {KFn(decode_attention_kernel<1>), KFn(decode_attention_kernel<kCtasPerSm>)}) {
      const char* kname = fn == op_fn ? "mma3" : "mma";
      const int auto_parts = baton::ops::attention_kv_splits(ctas, kb, sms);
      for (int parts : {1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 44, 64}) {
        if (parts > kb || parts > 64) continue;
        if (ctas * parts > 16 * sms * 4 && parts != auto_parts) continue;
        a.parts = parts;
        size_t lse_off = 0; (void)part_bytes(a, lse_off);
        a.o_part = dpart; a.lse_part = reinterpret_cast<float*>(reinterpret_cast<char*>(dpart) + lse_off);
        auto launch = [&] {
          fn<<<dim3(parts, a.heads, a.batch), kThreads>>>(a);
          if (parts > 1) decode_combine_kernel<<<dim3(a.m_pad, a.heads, a.batch), kThreads>>>(a);
        };
        CK(cudaMemset(dout, 0xFF, o_n * 2));  // NaN: a configuration that writes nothing fails the check
        launch();
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(nullptr));
        // check (the append rewrites rows old.. with the same values each launch: idempotent)
        std::vector<__nv_bfloat16> ho(o_n); CK(cudaMemcpy(ho.data(), dout, o_n * 2, cudaMemcpyDeviceToHost));
        float err = 0;
        for (size_t c = 0; c < combos.size(); ++c) {
          const int b = combos[c] / 100000, h = (combos[c] / 100) % 1000, i = combos[c] % 100;
          for (int d = 0; d < kHeadDim; ++d) {
            const float e = std::fabs(__bfloat162float(ho[(size_t(b) * a.m_pad + i) * W + h * kHeadDim + d]) - refs[c][d]);
            if (!(e <= err)) err = e;  // a NaN sticks
          }
        }
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        std::vector<float> t;
        for (int rep = 0; rep < 7; ++rep) {
          CK(cudaEventRecord(e0)); for (int it = 0; it < 10; ++it) launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
          float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 100.f);
        }
        std::sort(t.begin(), t.end());
        const bool is_auto = parts == auto_parts && fn == op_fn;
        std::fprintf(csv, "%s,%s,%s,%s,%s,%s,%s,%d,%d,%.2f,%.3f,%.5f\n", prop.name, env.driver.c_str(), env.cuda.c_str(),
                     BATON_GIT_COMMIT, env.date.c_str(), name, kname, parts, int(is_auto), t[3],
                     bytes / (t[3] * 1e-6) / 1e12, err);
        std::printf("%-22s %-4s parts %2d%s %9.2f us %6.3f TB/s  max err %.5f\n", name, kname, parts, is_auto ? " (auto)" : "       ",
                    t[3], bytes / (t[3] * 1e-6) / 1e12, err);
        if (!(err < 2e-2f)) worst_fail = 1;
        CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
      }
    }
    CK(cudaFree(dq)); CK(cudaFree(dk)); CK(cudaFree(dv)); CK(cudaFree(dout)); CK(cudaFree(dpart));
  }
  std::fclose(csv);
  std::printf("wrote %s%s\n", out.c_str(), worst_fail ? "; some configuration FAILED the reference check" : "");
  return worst_fail;
}
