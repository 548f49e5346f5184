// A downstream program: the MLP op from an installed baton, its kernels from baton::mlp_kernels
// (nothing compiled here but this file). On a GPU it runs one GeLU MLP of a ragged shape and
// checks sampled rows of Z against a CPU reference; without a GPU it says so and succeeds (it
// built and linked, which is what a CPU-only CI can prove). Either way it checks that the installed
// target carries which optional kernels the library has (BATON_MLP_EXTRA_KERNELS), and, where the
// library lacks them, that create() refuses them by name before touching the GPU.
#include <baton/ops/mlp_compiled.cuh>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using bf16 = ::cutlass::bfloat16_t;
using Kernels = baton::ops::mlp_kernels::Compiled<baton::ops::Activation::gelu>;

#ifdef CONSUMER_EXPECT_MLP_EXTRA_KERNELS
static_assert(Kernels::has_cta_pairs == (CONSUMER_EXPECT_MLP_EXTRA_KERNELS != 0) &&
                  Kernels::has_narrow_swapped == (CONSUMER_EXPECT_MLP_EXTRA_KERNELS != 0),
              "the installed baton::mlp_kernels must carry BATON_MLP_EXTRA_KERNELS as the build that made it had it");
#endif

int main() {
  std::printf("consumer_mlp: baton::mlp_kernels %s the CTA-pair and 32-token swapped kernels\n",
              Kernels::has_cta_pairs ? "has" : "lacks");
  if constexpr (!Kernels::has_cta_pairs) {
    // Refused by the plan (sms given: no device query), so this runs without a GPU.
    baton::ops::MlpRunOptions o;
    o.sms = 132;
    o.log = false;
    o.plan.gemm2.cta_pairs = true;
    using Mlp = baton::ops::CompiledMlp<baton::ops::Activation::gelu>;
    auto r = Mlp::create({.m = 64, .hidden = 264, .ffn = 344, .act = baton::ops::Activation::gelu}, {}, nullptr, o);
    if (r.ok() || r.error().code() != baton::errc::not_supported ||
        r.error().to_string().find("-DBATON_MLP_EXTRA_KERNELS=ON") == std::string::npos)
      return std::printf("consumer_mlp: CTA pairs without their kernels: %s\n",
                         r.ok() ? "created" : r.error().to_string().c_str()),
             1;
    std::printf("consumer_mlp: CTA pairs refused: %s\n", r.error().to_string().c_str());
  }
  if (baton::status s = baton::require_device(); !s.ok()) {
    std::printf("consumer_mlp: built against the installed baton::mlp_kernels; not run (%s)\n", s.to_string().c_str());
    return 0;
  }
  const int m = 37, h = 264, f = 344;  // ragged: neither a multiple of the 128-wide tiles nor of 64
  std::vector<bf16> x(size_t(m) * h), w1(size_t(f) * h), w2(size_t(h) * f);
  unsigned r = 12345;
  auto rnd = [&] { r = r * 1664525u + 1013904223u; return float(int(r >> 9) % 2001 - 1000) / 4000.f; };
  for (auto& v : x) v = bf16(rnd());
  for (auto& v : w1) v = bf16(rnd());
  for (auto& v : w2) v = bf16(rnd());
  void *dx, *dw1, *dw2, *dy, *dz;
  for (auto [p, n] : {std::pair{&dx, x.size()}, {&dw1, w1.size()}, {&dw2, w2.size()}, {&dy, size_t(m) * f}, {&dz, size_t(m) * h}})
    if (cudaMalloc(p, n * sizeof(bf16)) != cudaSuccess) return std::printf("cudaMalloc failed\n"), 1;
  cudaMemcpy(dx, x.data(), x.size() * sizeof(bf16), cudaMemcpyHostToDevice);
  cudaMemcpy(dw1, w1.data(), w1.size() * sizeof(bf16), cudaMemcpyHostToDevice);
  cudaMemcpy(dw2, w2.data(), w2.size() * sizeof(bf16), cudaMemcpyHostToDevice);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  using Mlp = baton::ops::CompiledMlp<baton::ops::Activation::gelu>;
  auto mlp = Mlp::create({.m = m, .hidden = h, .ffn = f, .act = baton::ops::Activation::gelu}, {dx, dw1, dw2, dy, dz}, stream);
  if (!mlp.ok()) return std::printf("create: %s\n", mlp.error().to_string().c_str()), 1;
  if (baton::status s = mlp.value()->enqueue(stream); !s.ok()) return std::printf("enqueue: %s\n", s.to_string().c_str()), 1;
  if (baton::status s = mlp.value()->check_errors(stream); !s.ok()) return std::printf("run: %s\n", s.to_string().c_str()), 1;
  std::vector<bf16> z(size_t(m) * h);
  cudaMemcpy(z.data(), dz, z.size() * sizeof(bf16), cudaMemcpyDeviceToHost);
  double num = 0, den = 0;
  for (int i : {0, m / 2, m - 1}) {
    std::vector<double> y(static_cast<size_t>(f));
    for (int j = 0; j < f; ++j) {
      double a = 0;
      for (int k = 0; k < h; ++k) a += double(float(x[size_t(i) * h + k])) * double(float(w1[size_t(j) * h + k]));
      y[size_t(j)] = double(float(bf16(float(0.5 * a * (1.0 + std::erf(a * 0.70710678118654752440))))));
    }
    for (int j = 0; j < h; ++j) {
      double e = 0;
      for (int k = 0; k < f; ++k) e += y[size_t(k)] * double(float(w2[size_t(j) * f + k]));
      const double g = double(float(z[size_t(i) * h + j]));
      num += (g - e) * (g - e);
      den += e * e;
    }
  }
  const double rel = std::sqrt(num / den);
  std::printf("consumer_mlp: %s; Z rows 0, %d, %d relative error %.2e\n", mlp.value()->plan().log_line().c_str(), m / 2,
              m - 1, rel);
  return std::isfinite(rel) && rel < 1e-2 ? 0 : 1;
}
