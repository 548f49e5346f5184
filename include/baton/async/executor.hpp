// baton/async/executor.hpp — where a resumed coroutine runs.
//
//   executor        the interface: execute(h) arranges for h.resume() to run somewhere, noexcept.
//   inline_executor resumes right away on the calling thread. When the reactor completes a wait,
//                   that is the reactor thread: keep such continuations short (they delay the
//                   polling of every other source) and never block in them.
//   thread_pool     N worker threads sharing one FIFO queue. The destructor joins; it never drops
//                   work: whatever is queued, also while it is shutting down (by a worker or by
//                   another thread before the destructor returns), is still resumed.
//
// Never call sync_wait() (task.hpp) from a thread_pool worker or from the reactor thread: it
// blocks the thread that may be needed to make progress.
#pragma once

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::async {

class executor {
 public:
  virtual ~executor();
  // Resume h (exactly once), here or on some other thread. Must not throw.
  virtual void execute(std::coroutine_handle<> h) noexcept = 0;
  // Addition: true if execute(h) simply calls h.resume() on the calling thread. Awaitables use
  // it to continue without a nested resume when the result is already there.
  [[nodiscard]] virtual bool runs_inline() const noexcept { return false; }
};

inline executor::~executor() = default;

class inline_executor final : public executor {
 public:
  void execute(std::coroutine_handle<> h) noexcept override { h.resume(); }
  [[nodiscard]] bool runs_inline() const noexcept override { return true; }
};

class thread_pool final : public executor {
 public:
  // threads == 0 is treated as 1.
  explicit thread_pool(std::size_t threads = default_threads()) {
    if (threads == 0) threads = 1;
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  ~thread_pool() override {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    // Workers leave only when the queue is empty; anything a foreign thread queued after that
    // (before this destructor returns) runs here.
    for (;;) {
      std::coroutine_handle<> h;
      {
        std::lock_guard<std::mutex> lk(m_);
        if (q_.empty()) break;
        h = q_.front();
        q_.pop_front();
      }
      executed_.fetch_add(1, std::memory_order_relaxed);
      h.resume();
    }
  }

  void execute(std::coroutine_handle<> h) noexcept override {
    {
      std::lock_guard<std::mutex> lk(m_);
      q_.push_back(h);
    }
    cv_.notify_one();
  }

  [[nodiscard]] std::size_t size() const noexcept { return workers_.size(); }
  // True when called from one of this pool's worker threads.
  [[nodiscard]] bool on_worker_thread() const noexcept { return current() == this; }
  // Number of resumptions started so far.
  [[nodiscard]] std::uint64_t executed() const noexcept { return executed_.load(std::memory_order_relaxed); }

  [[nodiscard]] static std::size_t default_threads() noexcept {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
  }

 private:
  static const thread_pool*& current() noexcept {
    static thread_local const thread_pool* p = nullptr;
    return p;
  }

  void work() {
    current() = this;
    for (;;) {
      std::coroutine_handle<> h;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [this] { return stop_ || !q_.empty(); });
        if (q_.empty()) break;  // stop_ and nothing left
        h = q_.front();
        q_.pop_front();
      }
      executed_.fetch_add(1, std::memory_order_relaxed);
      h.resume();
    }
    current() = nullptr;
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::coroutine_handle<>> q_;
  bool stop_ = false;
  std::atomic<std::uint64_t> executed_{0};
  std::vector<std::thread> workers_;  // last: started after everything above exists
};

}  // namespace baton::async
