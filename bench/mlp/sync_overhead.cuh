// bench/mlp/sync_overhead.cuh — --sync-overhead: GEMM2 alone with every semaphore it waits on
// already posted, against the same GEMM2 without waits.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.hpp"
#include "common/graph.cuh"
#include "common/timing.cuh"
#include "mlp/baselines.cuh"
#include "mlp/baton_variants.cuh"
#include "mlp/measure.cuh"

namespace baton_bench::mlp {

using namespace baton;

// The wait path's pure cost (BENCHMARKS.md, "Sync overhead"): GEMM2 alone, in a graph of
// --iters-per-graph launches, with every semaphore it waits on already posted, against the same
// GEMM2 (same tiles, split-K, order) without waits. GEMM1 of the policy's chain runs first once for
// every epoch GEMM2 will wait on, so no wait ever blocks: what remains is the sync warp, the
// horizon checks and the proxy fences.
[[nodiscard]] inline status sync_overhead_shape(Ctx& c, Problem& p, const std::string& shape, const std::vector<int>& sample,
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
  BATON_TRY(launch_stage(plain.serial[0], c.stream));
  for (const Case& k : cases)
    if (k.gemm1)
      for (int e = 0; e < epochs; ++e) BATON_TRY(launch_stage(*k.gemm1, c.stream));
  constexpr int kCases = int(std::size(cases));
  Check chk[kCases];
  bench::graph_exec graphs[kCases];
  for (int i = 0; i < kCases; ++i) {
    const Case& k = cases[i];
    BATON_CUDA_TRY(cudaMemsetAsync(p.z, 0xFF, size_t(p.m) * p.h * sizeof(bf16), c.stream));
    BATON_TRY(launch_stage(*k.gemm2, c.stream));
    BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
    BATON_TRY(k.errors().with_context(k.name));
    BATON_TRY(check_z(c, p, sample, ref, chk[i]));
    auto g = bench::capture_iterations(c.stream, c.args.iters, [&] { return launch_stage(*k.gemm2, c.stream); });
    if (!g.ok()) return g.error();
    graphs[i] = std::move(g.value());
  }
  // Timed side by side: repetition r of every case before repetition r + 1 of any, so clocks and
  // power (sustained GEMMs run at the power limit) weigh on every case alike.
  auto timer = bench::EventTimer::create();
  if (!timer.ok()) return timer.error();
  std::vector<double> us[kCases];
  for (int r = -c.args.warmup; r < c.args.reps; ++r)
    for (int i = 0; i < kCases; ++i) {
      BATON_TRY(timer.value().start(c.stream));
      BATON_TRY(graphs[i].launch(c.stream));
      auto elapsed = timer.value().stop(c.stream);
      if (!elapsed.ok()) return elapsed.error();
      const float ms = elapsed.value();
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

}  // namespace baton_bench::mlp
