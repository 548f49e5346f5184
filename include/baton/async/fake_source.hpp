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
    return state_.poll();
  }

  // Thread-safe. Returns false if the event had already finished.
  bool complete() noexcept { return state_.complete(); }
  bool fail(status s) { return state_.fail(std::move(s)); }
  // Make it pending again. Only while nobody is waiting on it.
  void reset() noexcept { state_.reset(); }

  [[nodiscard]] bool finished() const noexcept { return state_.finished(); }
  [[nodiscard]] std::uint64_t poll_count() const noexcept { return polls_.load(std::memory_order_relaxed); }

 private:
  finish_state state_;
  std::atomic<std::uint64_t> polls_{0};
};

}  // namespace baton::async
