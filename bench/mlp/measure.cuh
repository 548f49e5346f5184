// bench/mlp/measure.cuh — running one variant: the bench's context, a variant's enqueue, the
// correctness check (NaN-poisoned Y and Z, one iteration, Z against the CPU reference) and the timing
// (bench/common/timing.cuh over a graph of --iters-per-graph iterations, or launched back to back).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/graph.cuh"
#include "common/timing.cuh"
#include "mlp/args.hpp"
#include "mlp/problem.cuh"

namespace baton_bench::mlp {

using namespace baton;

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

struct Check {
  bool ok = false;
  double rel_err = 0;
  size_t nonfinite = 0;
};

// Z's sampled rows against the reference (after whatever last wrote Z).
[[nodiscard]] inline status check_z(Ctx& c, const Problem& p, const std::vector<int>& rows,
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
[[nodiscard]] inline status check(Ctx& c, const Problem& p, Variant& v, const std::vector<int>& rows,
                           const std::vector<std::vector<double>>& ref, Check& out) {
  BATON_CUDA_TRY(cudaMemsetAsync(p.y, 0xFF, size_t(p.m) * p.f * sizeof(bf16), c.stream));  // 0xFFFF: bf16 NaN
  BATON_CUDA_TRY(cudaMemsetAsync(p.z, 0xFF, size_t(p.m) * p.h * sizeof(bf16), c.stream));
  if (v.graph) {
    auto g = bench::capture_iterations(c.stream, 1, v.enqueue);
    if (!g.ok()) return g.error();
    BATON_TRY(g.value().launch(c.stream));
  } else {
    BATON_TRY(v.enqueue());
  }
  BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
  BATON_TRY(v.errors());
  return check_z(c, p, rows, ref, out);
}

[[nodiscard]] inline status time_variant(Ctx& c, Variant& v, std::vector<double>& us) {
  const int iters = c.args.iters;
  bench::graph_exec g;
  if (v.graph) {
    auto captured = bench::capture_iterations(c.stream, iters, v.enqueue);
    if (!captured.ok()) return captured.error();
    g = std::move(captured.value());
  }
  auto rep = [&]() -> status {
    if (v.graph) return g.launch(c.stream);
    for (int i = 0; i < iters; ++i) BATON_TRY(v.enqueue());
    return {};
  };
  // A watchdog report after the warm-up ends the variant before the timed loop.
  BATON_TRY(bench::time_repetitions(c.stream, c.args.warmup, c.args.reps, iters, rep, [&] { return v.errors(); }, us));
  BATON_TRY(v.errors());
  return {};
}

// The variants of one shape timed together: each graph variant captured once, then
// bench::time_in_order, in interleaved rounds (bench/common/rounds.hpp; --order interleaved, the
// default) or one after another (--order in-turn). us[i] and failed[i] are variant i's samples and
// error; a capture that fails fails that variant alone.
[[nodiscard]] inline status time_variants(Ctx& c, const std::vector<Variant*>& vs, std::vector<std::vector<double>>& us,
                                          std::vector<status>& failed) {
  const int iters = c.args.iters;
  std::vector<bench::graph_exec> graphs(vs.size());
  std::vector<status> captured(vs.size());
  std::vector<std::function<status()>> rep;
  for (size_t i = 0; i < vs.size(); ++i) {
    Variant& v = *vs[i];
    if (v.graph) {
      auto g = bench::capture_iterations(c.stream, iters, v.enqueue);
      if (g.ok())
        graphs[i] = std::move(g.value());
      else
        captured[i] = g.error();
    }
    rep.push_back([&c, &v, &g = graphs[i], &st = captured[i], iters]() -> status {
      if (!st.ok()) return st;
      if (v.graph) return g.launch(c.stream);
      for (int k = 0; k < iters; ++k) BATON_TRY(v.enqueue());
      return {};
    });
  }
  // A watchdog report (a variant's error record) after the warm-up or the rounds fails that variant.
  return bench::time_in_order(c.stream, c.args.interleave != 0, c.args.warmup, c.args.reps, iters, rep,
                              [&](int i) { return vs[size_t(i)]->errors(); }, us, failed);
}

inline bool wanted(const Ctx& c, const std::string& v) {
  return std::find(c.args.variants.begin(), c.args.variants.end(), v) != c.args.variants.end();
}

}  // namespace baton_bench::mlp
