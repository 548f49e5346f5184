// baton/async/graph.cuh — capture work on a stream into a CUDA graph and replay it.
//
//   auto g = async::capture(stream, [&](stream_ref s) -> status { /* enqueue work on s */ });
//   BATON_TRY(g.value().launch(stream));      // replay: one launch, no per-kernel host work
//   co_await async::done(ctx, stream);        // await a replay like any other GPU work
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "baton/async/stream.cuh"
#include "baton/status.hpp"

namespace baton::async {

// An instantiated, replayable graph (owning; move-only).
class graph_exec {
 public:
  graph_exec() = default;
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  graph_exec(graph_exec&& o) noexcept : g_(std::exchange(o.g_, nullptr)), e_(std::exchange(o.e_, nullptr)) {}
  graph_exec& operator=(graph_exec&& o) noexcept {
    if (this != &o) {
      reset();
      g_ = std::exchange(o.g_, nullptr);
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~graph_exec() { reset(); }
  [[nodiscard]] status launch(stream_ref s) const {
    if (!e_) return status(errc::invalid_argument, "graph_exec: empty graph");
    BATON_TRY(s.usable("graph_exec::launch"));
    return cuda_check(cudaGraphLaunch(e_, s), "cudaGraphLaunch");
  }
  [[nodiscard]] cudaGraphExec_t get() const noexcept { return e_; }
  [[nodiscard]] result<size_t> num_nodes() const {
    size_t n = 0;
    BATON_TRY(cuda_check(cudaGraphGetNodes(g_, nullptr, &n), "cudaGraphGetNodes"));
    return n;
  }

 private:
  template <class F>
  friend result<graph_exec> capture(stream_ref s, F&& enqueue);
  void reset() noexcept {
    if (e_) (void)cudaGraphExecDestroy(e_);
    if (g_) (void)cudaGraphDestroy(g_);
    e_ = nullptr;
    g_ = nullptr;
  }
  cudaGraph_t g_ = nullptr;
  cudaGraphExec_t e_ = nullptr;
};

// Captures what `enqueue(s)` puts on `s` (thread-local capture mode), instantiates it, and
// returns the replayable graph. If `enqueue` fails, the capture is ended and its error returned.
template <class F>
[[nodiscard]] result<graph_exec> capture(stream_ref s, F&& enqueue) {
  BATON_TRY(s.usable("async::capture"));  // the legacy stream cannot be captured anyway
  BATON_TRY(cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
  status st = enqueue(s);
  cudaGraph_t g = nullptr;
  status end = cuda_check(cudaStreamEndCapture(s, &g), "cudaStreamEndCapture");
  if (!st.ok()) {
    if (g) (void)cudaGraphDestroy(g);
    return st.with_context("while capturing a graph");
  }
  BATON_TRY(end);
  graph_exec ge;
  ge.g_ = g;
  BATON_TRY(cuda_check(cudaGraphInstantiate(&ge.e_, g, 0), "cudaGraphInstantiate"));
  return result<graph_exec>(std::move(ge));
}

}  // namespace baton::async
