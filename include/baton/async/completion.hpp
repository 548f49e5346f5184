// baton/async/completion.hpp — the polling interface of the async layer.
//
// A completion_source is something that finishes at some point and can be asked, without
// blocking, whether it has: a CUDA event (cudaEventQuery), a fake event in tests, a host flag.
// The reactor (reactor.hpp) polls registered sources and resumes the coroutine waiting on each.
//
// poll() must be non-blocking, noexcept and cheap: the reactor calls it on every registered
// source on every iteration of its loop. It is called from the reactor thread only, but a
// source may be completed from any thread, so implementations synchronise their state
// (atomics with acquire/release). Once poll() has returned ready or failed, the reactor stops
// polling that registration.
#pragma once

#include <atomic>
#include <utility>

#include "baton/status.hpp"

namespace baton::async {

enum class poll_state { pending, ready, failed };

struct poll_result {
  poll_state state = poll_state::pending;
  status error;  // meaningful when state == failed
};

class completion_source {
 public:
  virtual ~completion_source() = default;
  // Non-blocking: returns pending, ready, or failed with the error.
  virtual poll_result poll() noexcept = 0;
};

// ---- small helpers (additions) ----------------------------------------------------------------

[[nodiscard]] inline poll_result poll_ready() { return poll_result{poll_state::ready, status{}}; }
[[nodiscard]] inline poll_result poll_failed(status s) { return poll_result{poll_state::failed, std::move(s)}; }

// The status a finished wait reports: ok when ready, the error when failed. A failed result that
// carries an ok status (a source bug) becomes errc::invalid_argument rather than a false success.
[[nodiscard]] inline status to_status(poll_result r) {
  switch (r.state) {
    case poll_state::ready: return status{};
    case poll_state::failed:
      if (r.error.ok()) return status(errc::invalid_argument, "completion source failed without an error status");
      return std::move(r.error);
    case poll_state::pending: break;
  }
  return status(errc::invalid_argument, "wait finished while the source was still pending");
}

// The finished-state of a source that a thread completes (fake_event, host_signal): pending until
// the first complete() or fail(status), from any thread (later calls return false); poll() reads
// it with acquire, so what the finishing thread wrote before is visible to the resumed waiter.
class finish_state {
 public:
  [[nodiscard]] poll_result poll() const noexcept {
    switch (state_.load(std::memory_order_acquire)) {
      case ready: return poll_ready();
      case failed: return poll_failed(error_);
      default: return poll_result{};  // pending, or a fail() in the middle of storing its status
    }
  }
  bool complete() noexcept {
    int expected = pending;
    return state_.compare_exchange_strong(expected, ready, std::memory_order_acq_rel);
  }
  bool fail(status s) {
    int expected = pending;
    if (!state_.compare_exchange_strong(expected, failing, std::memory_order_acq_rel)) return false;
    error_ = std::move(s);
    state_.store(failed, std::memory_order_release);  // after error_: poll() reads it only then
    return true;
  }
  // Pending again. Only while nobody is waiting on it.
  void reset() noexcept { state_.store(pending, std::memory_order_release); }
  [[nodiscard]] bool finished() const noexcept {
    const int v = state_.load(std::memory_order_acquire);
    return v == ready || v == failed;
  }

 private:
  enum : int { pending = 0, failing = 1, ready = 2, failed = 3 };
  std::atomic<int> state_{pending};
  status error_;
};

}  // namespace baton::async
