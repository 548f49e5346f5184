// baton/async/fake_source.hpp — a deterministic completion source for tests.
//
// fake_event is pending until complete() or fail(status) is called (from any thread; the first
// call wins, later ones return false). There is no clock: tests decide when things finish.
// poll_count() says how often the reactor (or anyone) polled it.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "baton/async/completion.hpp"
#include "baton/status.hpp"

namespace baton::async {

class fake_event final : public completion_source {
 public:
  fake_event() = default;
  fake_event(const fake_event&) = delete;
  fake_event& operator=(const fake_event&) = delete;

  poll_result poll() noexcept override {
    polls_.fetch_add(1, std::memory_order_relaxed);
    switch (state_.load(std::memory_order_acquire)) {
      case ready: return poll_result{poll_state::ready, status{}};
      case failed: return poll_result{poll_state::failed, error_};
      default: return poll_result{};  // pending, or a fail() in the middle of storing its status
    }
  }

  // Thread-safe. Returns false if the event had already finished.
  bool complete() noexcept {
    int expected = pending;
    return state_.compare_exchange_strong(expected, ready, std::memory_order_acq_rel);
  }
  bool fail(status s) {
    int expected = pending;
    if (!state_.compare_exchange_strong(expected, failing, std::memory_order_acq_rel)) return false;
    error_ = std::move(s);
    state_.store(failed, std::memory_order_release);
    return true;
  }
  // Make it pending again. Only while nobody is waiting on it.
  void reset() noexcept { state_.store(pending, std::memory_order_release); }

  [[nodiscard]] bool finished() const noexcept {
    int s = state_.load(std::memory_order_acquire);
    return s == ready || s == failed;
  }
  [[nodiscard]] std::uint64_t poll_count() const noexcept { return polls_.load(std::memory_order_relaxed); }

 private:
  enum : int { pending = 0, failing = 1, ready = 2, failed = 3 };
  std::atomic<int> state_{pending};
  std::atomic<std::uint64_t> polls_{0};
  status error_;
};

}  // namespace baton::async
