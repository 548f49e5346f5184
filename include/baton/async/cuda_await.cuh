// baton/async/cuda_await.cuh — co_await GPU work without blocking a thread.
//
//   gpu_context ctx{reactor, executor, events};           // once
//   status s = co_await async::done(ctx, stream);         // all work enqueued on `stream` so far
//   status s = co_await async::ready(ctx, event);         // a user-recorded event
//   status s = co_await chain_runner(chain, ws, bytes)(ctx, stream, launches);  // a baton chain
//                                                         // (baton/async/chain_await.cuh)
//
// Two completion modes (gpu_context::mode):
//   poll           (default) a pooled event is recorded on the stream and the reactor polls it with
//                  cudaEventQuery, backing off spin -> yield -> sleep;
//   host_callback  cudaLaunchHostFunc resumes the coroutine from the CUDA driver's callback thread
//                  through reactor::post (no polling); the event is still recorded to report errors.
// A failed CUDA operation surfaces from await_resume as a status naming the CUDA error and the
// call site (file:line of the co_await). Pooled events go back to the pool on every path.
//
// Cancellation: done(ctx, stream, token) / ready(ctx, event, token) take a cancel_token
// (std::stop_token). Stopped before the co_await: errc::cancelled at once, nothing registered.
// Stopped during the wait: the reactor resumes the coroutine promptly with errc::cancelled (the
// message names the co_await's file:line). Either way the GPU work is NOT stopped and runs to its
// end; a cancelled done() returns its pooled event to the pool while the stream may still be
// working towards it (harmless: the next record() re-arms it), and nothing polls or calls back
// into the freed awaiter afterwards. A stop racing the completion gives exactly one resumption
// (reactor.hpp: whichever the reactor observes first). A token that can be stopped makes the wait
// use poll mode even in host_callback mode: an enqueued cudaLaunchHostFunc cannot be withdrawn,
// and it would call back into the awaiter after a cancelled co_await had freed it.
#pragma once

#include <cuda_runtime.h>

#include <coroutine>
#include <optional>
#include <source_location>
#include <stop_token>
#include <string>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/async/reactor.hpp"
#include "baton/async/stream.cuh"
#include "baton/async/task.hpp"
#include "baton/status.hpp"

namespace baton::async {

enum class completion_mode { poll, host_callback };

struct gpu_context {
  reactor& r;
  executor& ex;
  event_pool& events;
  completion_mode mode = completion_mode::poll;
};

inline std::string where(const std::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

// A CUDA event as a completion_source (non-blocking cudaEventQuery).
class cuda_event_source final : public completion_source {
 public:
  cuda_event_source() = default;
  cuda_event_source(cudaEvent_t e, std::string where) : e_(e), where_(std::move(where)) {}
  poll_result poll() noexcept override {
    cudaError_t q = cudaEventQuery(e_);
    if (q == cudaSuccess) return poll_ready();
    if (q == cudaErrorNotReady) return poll_result{};
    return poll_failed(cuda_check(q, ("GPU work awaited at " + where_).c_str()));
  }

 private:
  cudaEvent_t e_ = nullptr;
  std::string where_;
};

// Awaiter for "the event `e` (or a pooled event recorded on a stream) has completed". Not movable
// (it may hold a std::stop_callback): use it as the prvalue that done()/ready() return.
class gpu_awaiter {
 public:
  gpu_awaiter(gpu_context& ctx, stream_ref s, std::source_location loc, cancel_token token = {})
      : ctx_(ctx), stream_(s), loc_(loc), token_(std::move(token)) {
    auto pe = ctx.events.acquire();
    if (!pe.ok()) {
      early_ = pe.error().with_context(where(loc));
      return;
    }
    ev_ = std::move(pe.value());
    status st = ev_.record(s);
    if (!st.ok()) {
      early_ = st.with_context(where(loc));
      return;
    }
    event_ = ev_.get();
    src_ = cuda_event_source(event_, where(loc));
  }
  gpu_awaiter(gpu_context& ctx, cudaEvent_t e, std::source_location loc, cancel_token token = {})
      : ctx_(ctx), event_(e), loc_(loc), src_(e, where(loc)), token_(std::move(token)) {}
  gpu_awaiter(const gpu_awaiter&) = delete;
  gpu_awaiter& operator=(const gpu_awaiter&) = delete;

  bool await_ready() {
    if (early_) return true;
    if (token_.stop_requested()) {
      early_ = status(errc::cancelled, "GPU work awaited at " + where(loc_) +
                                           ": cancelled before the wait was registered (the GPU work runs on)");
      return true;
    }
    poll_result r = src_.poll();  // fast path: already done
    if (r.state == poll_state::pending) return false;
    out_ = std::move(r);
    return true;
  }
  void await_suspend(std::coroutine_handle<> h) {
    if (ctx_.mode == completion_mode::host_callback && stream_.get() != nullptr && !token_.stop_possible()) {
      h_ = h;
      ctx_.r.expect_post();  // the reactor backs off rather than blocks until the callback posts
      cudaError_t e = cudaLaunchHostFunc(stream_, &gpu_awaiter::callback, this);
      if (e == cudaSuccess) return;
      early_ = cuda_check(e, "cudaLaunchHostFunc").with_context(where(loc_));
      ctx_.r.post(h, ctx_.ex, /*expected=*/true);
      return;
    }
    cancel_.arm(ctx_.r, token_);  // before watch(): afterwards *this may be gone
    ctx_.r.watch(src_, h, ctx_.ex, out_, cancel_.flag());
  }
  [[nodiscard]] status await_resume() {
    if (early_) return *early_;
    if (out_.state == poll_state::pending) out_ = src_.poll();  // host_callback mode: final word
    if (out_.state == poll_state::pending)
      return status(errc::cuda_error, "GPU work awaited at " + where(loc_) + " resumed before completion");
    status st = to_status(std::move(out_));
    if (st.code() == errc::cancelled && cancel_.requested())
      return st.with_context("GPU work awaited at " + where(loc_) + " (the GPU work runs on)");
    return st;
  }

 private:
  static void CUDART_CB callback(void* self) {
    auto* a = static_cast<gpu_awaiter*>(self);
    a->ctx_.r.post(a->h_, a->ctx_.ex, /*expected=*/true);  // no CUDA calls allowed here
  }
  gpu_context& ctx_;
  stream_ref stream_{cudaStream_t{}};  // set by the awaitable that uses it
  cudaEvent_t event_ = nullptr;
  std::source_location loc_;
  pooled_event ev_;
  cuda_event_source src_;
  poll_result out_;
  std::optional<status> early_;
  std::coroutine_handle<> h_{};
  cancel_token token_;
  wait_cancellation cancel_;  // last: its stop_callback is deregistered before the rest goes
};

// Completes when all work enqueued on `s` before this call has finished.
[[nodiscard]] inline gpu_awaiter done(gpu_context& ctx, stream_ref s,
                                      std::source_location loc = std::source_location::current()) {
  return gpu_awaiter(ctx, s, loc);
}
// The same, or errc::cancelled promptly once `token` is stopped (the GPU work runs on; see above).
[[nodiscard]] inline gpu_awaiter done(gpu_context& ctx, stream_ref s, cancel_token token,
                                      std::source_location loc = std::source_location::current()) {
  return gpu_awaiter(ctx, s, loc, std::move(token));
}
// Completes when the user-recorded event `e` has completed (always polled).
[[nodiscard]] inline gpu_awaiter ready(gpu_context& ctx, cudaEvent_t e,
                                       std::source_location loc = std::source_location::current()) {
  return gpu_awaiter(ctx, e, loc);
}
// The same, or errc::cancelled promptly once `token` is stopped (the event is left as it is).
[[nodiscard]] inline gpu_awaiter ready(gpu_context& ctx, cudaEvent_t e, cancel_token token,
                                       std::source_location loc = std::source_location::current()) {
  return gpu_awaiter(ctx, e, loc, std::move(token));
}

}  // namespace baton::async
