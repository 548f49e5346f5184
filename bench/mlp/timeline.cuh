// bench/mlp/timeline.cuh — per-tile Perfetto timelines of a chain (--trace M).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "baton/trace.hpp"
#include "common/device_memory.cuh"
#include "mlp/measure.cuh"

namespace baton_bench::mlp {

using namespace baton;

// Per-tile timelines of one iteration (the last of three) of a bound chain.
template <class Mlp>
[[nodiscard]] inline status write_timeline(Ctx& c, const Problem& p, const std::string& path, const char* what,
                                    const std::function<status(Mlp&)>& enqueue) {
  const Grid g1 = p.g1(), g2 = p.g2();
  bench::device_buffer t1, t2;
  BATON_TRY(bench::device_alloc(t1, size_t(g1.size()) * sizeof(TileEvent), c.stream, "trace gemm1"));
  BATON_TRY(bench::device_alloc(t2, size_t(g2.size()) * sizeof(TileEvent), c.stream, "trace gemm2"));
  BATON_CUDA_TRY(cudaMemsetAsync(t1.data(), 0, size_t(g1.size()) * sizeof(TileEvent), c.stream));
  BATON_CUDA_TRY(cudaMemsetAsync(t2.data(), 0, size_t(g2.size()) * sizeof(TileEvent), c.stream));
  Mlp mlp;
  BATON_TRY(mlp.build(p, c.stream, static_cast<TileEvent*>(t1.data()), static_cast<TileEvent*>(t2.data())));
  for (int i = 0; i < 3; ++i) BATON_TRY(enqueue(mlp));  // events are per position: the last epoch wins
  BATON_CUDA_TRY(cudaStreamSynchronize(c.stream));
  BATON_TRY(check_errors(mlp.chain, mlp.ws.data(), c.stream));
  std::vector<std::vector<TileEvent>> ev(2);
  ev[0].resize(size_t(g1.size()));
  ev[1].resize(size_t(g2.size()));
  BATON_CUDA_TRY(cudaMemcpy(ev[0].data(), t1.data(), ev[0].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost));
  BATON_CUDA_TRY(cudaMemcpy(ev[1].data(), t2.data(), ev[1].size() * sizeof(TileEvent), cudaMemcpyDeviceToHost));
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

}  // namespace baton_bench::mlp
