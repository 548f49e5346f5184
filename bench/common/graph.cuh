// bench/common/graph.cuh — a timed repetition as one CUDA graph: `iters` calls of an enqueue
// function captured into a baton::async::graph_exec (owning, replayable).
#pragma once

#include <cuda_runtime.h>

#include "baton/async/graph.cuh"
#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::bench {

using async::graph_exec;

// Captures `iters` calls of `enqueue()` (each enqueues its work on `stream`) and instantiates the
// graph. The first failing call ends the capture; its error is returned and the thread's last CUDA
// error cleared, so the next variant starts clean.
template <class F>
[[nodiscard]] result<graph_exec> capture_iterations(async::stream_ref stream, int iters, F&& enqueue) {
  auto g = async::capture(stream, [&](async::stream_ref) -> status {
    for (int i = 0; i < iters; ++i) BATON_TRY(enqueue());
    return {};
  });
  if (!g.ok()) (void)cudaGetLastError();
  return g;
}

}  // namespace baton::bench
