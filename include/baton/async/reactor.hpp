// baton/async/reactor.hpp — one background thread that polls completion sources.
//
// watch(src, h, ex, out) registers a waiter: when src.poll() returns ready or failed, the reactor
// stores the result into `out` and calls ex.execute(h). post(h, ex) is the callback mode: some
// other thread (e.g. a cudaLaunchHostFunc callback, which must not call CUDA itself) hands the
// reactor a coroutine to schedule on `ex`; the reactor is woken at once.
//
// The loop, per iteration: take the registration queue (watch()/post() only append to it under
// a short lock; the loop takes it when an atomic flag says it is non-empty), run posted handles,
// poll every registered waiter once and drop the finished ones in one compacting pass: O(n) per
// iteration, O(1) per completion. While nothing completes it backs off adaptively:
//   spin_iterations busy polls (with a cpu pause) -> yield_iterations std::this_thread::yield()
//   (and, with yield_for, yields until that long since the last progress) -> timed sleeps on a
//   condition variable, min_sleep doubling up to max_sleep (~1 ms).
// Any completion, registration or post resets the backoff to spinning; a registration or post
// also cuts a sleep short. A post announced with expect_post() (callback mode announces each
// before cudaLaunchHostFunc) keeps the thread in that backoff too, so a latency-tuned reactor
// (large spin_iterations) picks the post up without a wake-up. With nothing registered and no
// post announced the thread blocks on the condition variable without a timeout (an idle reactor
// uses no CPU) until watch(), expect_post(), post() or shutdown.
//
// Cancellation of a registered wait (watch(..., cancel) with a wait_cancellation, below): the
// waiter's owner sets its flag from any thread and calls wake(); the reactor thread, the only one
// that ever resumes a registered waiter, drops it at its next iteration and resumes it once with
// poll_state::failed and status(errc::cancelled, ...). The rule for a cancel racing a completion:
// in each iteration a waiter is polled first and its flag read only if the poll says pending, so
// whichever the reactor observes first wins and the waiter is resumed exactly once; a completion
// that comes after the cancelled resumption is never seen (the reactor no longer holds the waiter).
// What the cancelled wait was waiting for (a CUDA event, a fake event) is left as it is.
//
// Shutdown (shutdown() or the destructor): posted handles still run; every registered waiter,
// and every watch() made after that, completes at once with poll_state::failed and
// status(errc::cancelled, "reactor shut down"), resumed on its executor. Continuations that
// react to cancellation by watching again are cancelled again (do not retry in a loop).
//
// Lifetimes and threads (caller's duties):
//   * a watched source, its `out` and its executor must stay alive until the waiter is resumed;
//   * destroy the reactor before the executors it resumes onto (declare executors first), and
//     make sure nothing calls watch()/post() once the destructor has returned;
//   * never destroy/shut down the reactor from the reactor thread (e.g. from a continuation that
//     runs on an inline_executor): it joins that thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/status.hpp"

namespace baton::async {

struct reactor_options {
  std::uint32_t spin_iterations = 256;                       // busy polls before yielding
  std::uint32_t yield_iterations = 64;                       // yielding polls before sleeping
  std::chrono::microseconds max_sleep{1000};                 // cap of the growing sleep
  std::chrono::microseconds min_sleep{8};                    // addition: first sleep
  // Keep yielding (no sleeps) until this long after the last progress, whatever yield_iterations
  // says: a wait that ends within the window is seen within a yield, not a sleep step (the p99 of
  // an await is set by the sleep step it lands in). The cost: a core busy while waits are pending
  // and nothing completes, up to the window; an idle reactor (nothing registered) still blocks.
  // 0: off (iterations only). The trade-off against latency is measured by bench/async_bench.cu
  // (await-latency rows poll-yieldT).
  std::chrono::microseconds yield_for{0};
};

struct reactor_stats {
  std::uint64_t polls = 0;        // completion_source::poll() calls by the loop
  std::uint64_t completions = 0;  // waiters finished by a poll (ready or failed)
  std::uint64_t sleeps = 0;       // timed backoff sleeps
  std::uint64_t posted = 0;       // handles scheduled through post()
  std::uint64_t cancelled = 0;    // waiters cancelled by shutdown
  std::uint64_t stopped = 0;      // waiters resumed early by their cancel flag (a stop token)
  std::uint64_t idle_waits = 0;   // untimed waits because nothing was registered
  std::uint64_t iterations = 0;   // loop iterations
  std::size_t waiting = 0;        // registered waiters not yet resumed (queued ones included)
};

namespace detail {
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}
}  // namespace detail

class reactor {
 public:
  explicit reactor(reactor_options opts = {}) : opts_(opts) {
    if (opts_.min_sleep.count() <= 0) opts_.min_sleep = std::chrono::microseconds(1);
    if (opts_.max_sleep < opts_.min_sleep) opts_.max_sleep = opts_.min_sleep;
    thread_ = std::thread([this] { run(); });
  }
  reactor(const reactor&) = delete;
  reactor& operator=(const reactor&) = delete;
  ~reactor() { shutdown(); }

  // Register a waiter. Thread-safe; does not poll `src` itself. After shutdown began it resumes
  // h (through ex) with the cancelled status — on the reactor thread while the shutdown is
  // draining, or on the calling thread once the reactor thread has finished.
  // cancel (optional): a flag the reactor reads while the source is pending; once it reads true
  // it resumes h with the cancelled status instead of waiting on (see the header comment). The
  // flag must stay alive until h is resumed, like src and out; set it, then call wake().
  void watch(completion_source& src, std::coroutine_handle<> h, executor& ex, poll_result& out,
             const std::atomic<bool>* cancel = nullptr) {
    waiting_.fetch_add(1, std::memory_order_relaxed);
    bool wake = false;
    bool closed = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      closed = closed_;
      if (!closed) {
        incoming_.push_back(waiter{&src, h, &ex, &out, cancel});
        has_work_.store(true, std::memory_order_release);
        wake = sleeping_;
      }
    }
    if (closed) {  // the reactor thread is gone: complete here, outside the lock
      waiting_.fetch_sub(1, std::memory_order_relaxed);
      cancelled_.fetch_add(1, std::memory_order_relaxed);
      out = shutdown_result();
      ex.execute(h);
    } else if (wake) {
      cv_.notify_one();
    }
  }

  // Cut the loop's backoff or idle wait short so that it looks at its waiters again: call it after
  // setting a registered waiter's cancel flag. Thread-safe, cheap, harmless when spurious; it
  // touches no waiter. A no-op once the reactor thread has finished.
  void wake() {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (closed_) return;
      has_work_.store(true, std::memory_order_release);
      wake = sleeping_;
    }
    if (wake) cv_.notify_one();
  }

  // Announce a post() that will come (callback mode, before handing the callback to CUDA): until
  // it arrives the loop backs off (spin, yield, timed sleeps) instead of blocking. Pass
  // expected = true to that post().
  void expect_post() {
    expected_posts_.fetch_add(1, std::memory_order_relaxed);
    bool wake = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      has_work_.store(true, std::memory_order_release);
      wake = sleeping_;
    }
    if (wake) cv_.notify_one();
  }

  // Schedule h on ex from any thread (callback mode), promptly: wakes a sleeping reactor. Once
  // the reactor thread has finished, runs ex.execute(h) on the calling thread. expected: this is
  // the post an expect_post() announced.
  void post(std::coroutine_handle<> h, executor& ex, bool expected = false) {
    posted_count_.fetch_add(1, std::memory_order_relaxed);
    bool wake = false;
    bool closed = false;
    {
      std::lock_guard<std::mutex> lk(m_);
      closed = closed_;
      if (!closed) {
        posted_.push_back(posted{h, &ex});
        has_work_.store(true, std::memory_order_release);
        wake = sleeping_;
      }
      if (expected) expected_posts_.fetch_sub(1, std::memory_order_relaxed);  // queued (or closed)
    }
    if (closed) {
      ex.execute(h);
    } else if (wake) {
      cv_.notify_one();
    }
  }

  [[nodiscard]] reactor_stats stats() const noexcept {
    reactor_stats s;
    s.polls = polls_.load(std::memory_order_relaxed);
    s.completions = completions_.load(std::memory_order_relaxed);
    s.sleeps = sleeps_.load(std::memory_order_relaxed);
    s.posted = posted_count_.load(std::memory_order_relaxed);
    s.cancelled = cancelled_.load(std::memory_order_relaxed);
    s.stopped = stopped_.load(std::memory_order_relaxed);
    s.idle_waits = idle_waits_.load(std::memory_order_relaxed);
    s.iterations = iterations_.load(std::memory_order_relaxed);
    s.waiting = waiting_.load(std::memory_order_relaxed);
    return s;
  }

  [[nodiscard]] const reactor_options& options() const noexcept { return opts_; }
  // The polling thread (continuations on an inline_executor run here).
  [[nodiscard]] std::thread::id thread_id() const noexcept { return thread_.get_id(); }
  [[nodiscard]] bool on_reactor_thread() const noexcept { return std::this_thread::get_id() == thread_id(); }

  // Stop the thread, cancelling every registered waiter (see the header comment). Idempotent;
  // the destructor calls it. Must not be called from the reactor thread.
  void shutdown() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
      has_work_.store(true, std::memory_order_release);
    }
    cv_.notify_one();
    std::lock_guard<std::mutex> jl(join_m_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct waiter {
    completion_source* src;
    std::coroutine_handle<> h;
    executor* ex;
    poll_result* out;
    const std::atomic<bool>* cancel;  // null: not cancellable
  };
  struct posted {
    std::coroutine_handle<> h;
    executor* ex;
  };

  static poll_result shutdown_result() {
    return poll_result{poll_state::failed, status(errc::cancelled, "reactor shut down")};
  }
  static poll_result stopped_result() {
    return poll_result{poll_state::failed, status(errc::cancelled, "wait cancelled by its stop token")};
  }

  // Take the queues (caller holds m_). Returns stop_.
  bool take_queues_locked(std::vector<waiter>& active, std::vector<posted>& posts) {
    if (!incoming_.empty()) {
      active.insert(active.end(), incoming_.begin(), incoming_.end());
      incoming_.clear();
    }
    posts.swap(posted_);  // posts is empty on entry
    has_work_.store(false, std::memory_order_relaxed);
    return stop_;
  }

  void run() {
    std::vector<waiter> active;
    std::vector<posted> posts;
    std::uint64_t polls = 0, sleeps = 0, idle_waits = 0, iterations = 0;
    std::uint32_t idle = 0;
    std::chrono::steady_clock::time_point idle_since{};  // when the current run of idle iterations began
    auto sleep_for = opts_.min_sleep;
    const std::uint64_t spin_end = opts_.spin_iterations;
    const std::uint64_t yield_end = spin_end + opts_.yield_iterations;
    auto publish = [&] {
      polls_.store(polls, std::memory_order_relaxed);
      sleeps_.store(sleeps, std::memory_order_relaxed);
      idle_waits_.store(idle_waits, std::memory_order_relaxed);
      iterations_.store(iterations, std::memory_order_relaxed);
    };

    for (;;) {
      ++iterations;
      bool progress = false;
      bool stop = false;
      if (has_work_.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lk(m_);
        stop = take_queues_locked(active, posts);
        progress = true;  // new registrations or posts: reset the backoff
      }
      for (auto& p : posts) p.ex->execute(p.h);
      posts.clear();
      if (stop) break;

      // Poll every waiter once; compact the survivors in place (O(n)).
      std::size_t keep = 0;
      const std::size_t n = active.size();
      for (std::size_t i = 0; i < n; ++i) {
        waiter w = active[i];
        poll_result r = w.src->poll();
        ++polls;
        if (r.state == poll_state::pending) {
          // Completion first, then the flag: a source that finished is reported as finished even
          // if a stop came meanwhile. Either way this is the waiter's one and only resumption.
          if (w.cancel == nullptr || !w.cancel->load(std::memory_order_acquire)) {
            active[keep++] = w;
            continue;
          }
          r = stopped_result();
          stopped_.fetch_add(1, std::memory_order_relaxed);
        } else {
          completions_.fetch_add(1, std::memory_order_relaxed);  // counted before the resume
        }
        progress = true;
        *w.out = std::move(r);
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        w.ex->execute(w.h);  // may run the continuation right here (inline_executor)
      }
      active.resize(keep);
      publish();

      if (progress) {
        idle = 0;
        sleep_for = opts_.min_sleep;
        continue;
      }
      if (active.empty() && expected_posts_.load(std::memory_order_relaxed) == 0) {
        std::unique_lock<std::mutex> lk(m_);
        if (!has_work_.load(std::memory_order_relaxed)) {
          ++idle_waits;
          idle_waits_.store(idle_waits, std::memory_order_relaxed);
          sleeping_ = true;
          cv_.wait(lk, [this] { return has_work_.load(std::memory_order_relaxed); });
          sleeping_ = false;
        }
        continue;
      }
      if (++idle == 1 && opts_.yield_for.count() > 0) idle_since = std::chrono::steady_clock::now();
      if (idle <= spin_end) {
        detail::cpu_relax();
      } else if (idle <= yield_end ||
                 (opts_.yield_for.count() > 0 && std::chrono::steady_clock::now() - idle_since < opts_.yield_for)) {
        std::this_thread::yield();
      } else {
        std::unique_lock<std::mutex> lk(m_);
        if (!has_work_.load(std::memory_order_relaxed)) {
          ++sleeps;
          sleeping_ = true;
          cv_.wait_for(lk, sleep_for, [this] { return has_work_.load(std::memory_order_relaxed); });
          sleeping_ = false;
        }
        sleep_for = std::min(sleep_for * 2, opts_.max_sleep);
      }
    }

    // Shutdown: cancel every waiter; continuations run now may watch or post again, so repeat
    // until the queues stay empty, then close them (later calls complete on their caller).
    for (;;) {
      for (auto& w : active) {
        *w.out = shutdown_result();
        cancelled_.fetch_add(1, std::memory_order_relaxed);
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        w.ex->execute(w.h);
      }
      active.clear();
      for (auto& p : posts) p.ex->execute(p.h);
      posts.clear();
      std::lock_guard<std::mutex> lk(m_);
      if (incoming_.empty() && posted_.empty()) {
        closed_ = true;
        break;
      }
      (void)take_queues_locked(active, posts);
    }
    publish();
  }

  reactor_options opts_;

  std::mutex m_;  // guards incoming_, posted_, stop_, closed_, sleeping_
  std::condition_variable cv_;
  std::vector<waiter> incoming_;
  std::vector<posted> posted_;
  bool stop_ = false;
  bool closed_ = false;
  bool sleeping_ = false;
  std::atomic<std::size_t> expected_posts_{0};  // expect_post() minus the expected post()s that came
  std::atomic<bool> has_work_{false};  // incoming_/posted_ non-empty or stop_ (set under m_)

  std::atomic<std::uint64_t> polls_{0}, completions_{0}, sleeps_{0}, posted_count_{0}, cancelled_{0}, stopped_{0},
      idle_waits_{0}, iterations_{0};
  std::atomic<std::size_t> waiting_{0};

  std::mutex join_m_;
  std::thread thread_;  // last: started after everything above exists
};

// The cancellation side of one registered wait, owned by its awaiter (in the coroutine frame):
//
//   wait_cancellation c;                     // an awaiter member
//   c.arm(r, token);                         // in await_suspend, BEFORE r.watch(..., c.flag())
//   r.watch(src, h, ex, out, c.flag());      // nothing of the awaiter may be touched after this
//
// arm() registers a std::stop_callback that sets the flag and wakes the reactor; the reactor
// resumes the waiter (see reactor's header comment). Lifetime rule: the callback touches the flag
// and the reactor only. The flag lives until the awaiter is destroyed, which comes after the
// reactor resumed the waiter (so the reactor never reads a freed flag), and ~stop_callback waits
// for a callback running on another thread to return (so the callback never writes a freed
// flag). A stop requested before arm() runs the callback inside arm(): the flag is set before the
// waiter is even registered, and the reactor cancels it at its first look. The reactor must
// outlive the armed wait (it already must outlive every registered waiter).
class wait_cancellation {
 public:
  wait_cancellation() = default;
  wait_cancellation(const wait_cancellation&) = delete;
  wait_cancellation& operator=(const wait_cancellation&) = delete;

  // No-op for a token that can never be stopped (then flag() stays null: not cancellable).
  void arm(reactor& r, std::stop_token token) {
    if (!token.stop_possible()) return;
    r_ = &r;
    armed_ = true;
    (void)cb_.emplace(std::move(token), on_stop{this});  // (void): stop_callback is [[nodiscard]]
  }
  // The flag to pass to reactor::watch (null when not armed).
  [[nodiscard]] const std::atomic<bool>* flag() const noexcept { return armed_ ? &requested_ : nullptr; }
  [[nodiscard]] bool requested() const noexcept { return requested_.load(std::memory_order_acquire); }

 private:
  struct on_stop {
    wait_cancellation* self;
    void operator()() const noexcept {
      reactor* r = self->r_;
      self->requested_.store(true, std::memory_order_release);
      r->wake();  // the reactor outlives the wait; *self is not touched after the store
    }
  };
  std::atomic<bool> requested_{false};
  bool armed_ = false;
  reactor* r_ = nullptr;
  std::optional<std::stop_callback<on_stop>> cb_;  // last: deregistered first on destruction
};

// A completion_source that a host thread finishes (a worker's result), seen by the reactor at
// its next look instead of at the end of a backoff sleep (up to max_sleep, ~1 ms, late: for a
// wait that lasts milliseconds the loop is in its capped sleeps when the result comes).
//
//   auto sig = std::make_shared<host_signal>();   // shared with the worker
//   { host_signal::attachment a(*sig, r);         // in the waiting coroutine's frame
//     co_await on(r, *sig, ex); }                 // worker: sig->complete() or sig->fail(st)
//
// complete()/fail() publish the result, then wake the attached reactor. Lifetime rule: the
// attachment detaches when the waiter's frame leaves its scope (resumed or destroyed), under the
// same lock that the wake holds, so a worker finishing after the waiter left (a reactor
// shutdown cancelled it, say) never touches a reactor that may be gone. The first finish wins.
class host_signal final : public completion_source {
 public:
  host_signal() = default;
  host_signal(const host_signal&) = delete;
  host_signal& operator=(const host_signal&) = delete;

  poll_result poll() noexcept override { return state_.poll(); }
  // Thread-safe; false if the signal had already finished.
  bool complete() {
    if (!state_.complete()) return false;
    wake_();
    return true;
  }
  bool fail(status s) {
    if (!state_.fail(std::move(s))) return false;
    wake_();
    return true;
  }
  [[nodiscard]] bool finished() const noexcept { return state_.finished(); }

  // Scoped attachment of the reactor to wake; detaches on destruction.
  class attachment {
   public:
    attachment(host_signal& s, reactor& r) : s_(&s) {
      std::lock_guard<std::mutex> lk(s.m_);
      s.r_ = &r;
    }
    attachment(const attachment&) = delete;
    attachment& operator=(const attachment&) = delete;
    ~attachment() {
      std::lock_guard<std::mutex> lk(s_->m_);
      s_->r_ = nullptr;
    }

   private:
    host_signal* s_;
  };

 private:
  void wake_() {
    std::lock_guard<std::mutex> lk(m_);
    if (r_) r_->wake();
  }
  finish_state state_;
  std::mutex m_;          // guards r_ against the waiter leaving while a finish wakes it
  reactor* r_ = nullptr;  // the reactor to wake (null: none attached)
};

}  // namespace baton::async
