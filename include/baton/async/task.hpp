// baton/async/task.hpp — lazy coroutine tasks, sync_wait, and the basic awaitables.
//
//   task<T>     a lazy coroutine: nothing runs until it is awaited (co_await std::move(t)) or
//               passed to sync_wait / when_all / when_any. Move-only; owns its frame and destroys
//               it in its destructor, so a task that is never awaited frees its frame unrun.
//               A task that finishes later resumes its awaiter by symmetric transfer; one that
//               finishes synchronously lets the awaiter continue without a nested resume (see
//               promise_base), so long loops of awaits do not grow the stack at any -O level.
//   sync_wait(t) the only blocking call, for the outermost level (main, a test): starts t on
//               the calling thread and blocks on a mutex/condition variable until it finishes.
//               Never call it from a thread_pool worker or the reactor thread.
//   on(r, src, ex)  co_await -> status: wait for a completion_source through reactor r, then
//               continue on executor ex. ok when ready; the source's error when it failed;
//               errc::cancelled when the reactor shut down, or when the stop token of
//               on(r, src, ex, token) (cancel.hpp) is stopped, before or during the wait. A
//               source that is already finished is not registered: the coroutine continues
//               through ex at once.
//   schedule(ex)    co_await -> void: continue on executor ex.
//   callback_completion   callback mode: complete() from any thread (e.g. a cudaLaunchHostFunc
//               callback), co_await cb.wait(r, ex) -> status; resumption goes through
//               reactor::post(), so the callback thread never runs the continuation itself.
//
// Errors: baton code never throws; results carry status (task<status>, task<result<T>>).
// If a coroutine body throws anyway, the exception is captured in the promise and RETHROWN
// where the task is awaited (and so, ultimately, from sync_wait). when_all rethrows a failed
// child's exception after all children finished (the fail-fast when_all(stop, ...) also stops
// the siblings first, see when.hpp); when_any rethrows only the winner's and drops the losers'
// exceptions.
#pragma once

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <exception>
#include <mutex>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <variant>

#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/async/reactor.hpp"
#include "baton/status.hpp"

namespace baton::async {

template <class T = void>
class task;

namespace detail {

struct task_access;

// Completion protocol (one atomic per await). The awaiter stores its continuation, starts the
// task with a plain resume() and then flips `rendezvous`; the task's final suspend flips it too.
// Whoever flips second knows both sides are done: if the task finished synchronously, the
// awaiter simply continues (no nested resume, so loops of synchronously completing awaits do not
// grow the stack even where the compiler does not turn symmetric transfer into a tail call:
// GCC 12 below -O2, sanitizer builds); if it finished later, its final suspend transfers to the
// continuation by symmetric transfer.
class promise_base {
 public:
  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) const noexcept {
      promise_base& p = h.promise();
      if (p.rendezvous.exchange(true, std::memory_order_acq_rel)) return p.continuation;  // awaiter waits
      return std::noop_coroutine();  // awaiter is still in await_suspend and will continue itself
    }
    void await_resume() const noexcept {}
  };

  std::suspend_always initial_suspend() const noexcept { return {}; }
  final_awaiter final_suspend() const noexcept { return {}; }

  // Start the task whose promise this is; true if the caller must suspend (the task will resume
  // `cont` when it finishes), false if the task already finished.
  bool start(std::coroutine_handle<> self, std::coroutine_handle<> cont) noexcept {
    continuation = cont;
    self.resume();
    return !rendezvous.exchange(true, std::memory_order_acq_rel);
  }

  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::atomic<bool> rendezvous{false};
};

template <class T>
class task_promise final : public promise_base {
 public:
  task<T> get_return_object() noexcept;
  void return_value(T v) noexcept(std::is_nothrow_move_constructible_v<T>) {
    result_.template emplace<1>(std::move(v));
  }
  void unhandled_exception() noexcept { result_.template emplace<2>(std::current_exception()); }

  [[nodiscard]] bool has_exception() const noexcept { return result_.index() == 2; }
  [[nodiscard]] std::exception_ptr exception() const noexcept {
    return has_exception() ? std::get<2>(result_) : std::exception_ptr{};
  }
  // The value of a finished task, without taking it; null if it has none (yet, or it threw).
  [[nodiscard]] const T* peek() const noexcept { return std::get_if<1>(&result_); }
  // The value (moved out), or the captured exception rethrown.
  T take() {
    if (result_.index() == 2) std::rethrow_exception(std::get<2>(result_));
    return std::move(std::get<1>(result_));
  }

 private:
  std::variant<std::monostate, T, std::exception_ptr> result_;
};

template <>
class task_promise<void> final : public promise_base {
 public:
  task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void unhandled_exception() noexcept { exception_ = std::current_exception(); }

  [[nodiscard]] bool has_exception() const noexcept { return bool(exception_); }
  [[nodiscard]] std::exception_ptr exception() const noexcept { return exception_; }
  void take() {
    if (exception_) std::rethrow_exception(exception_);
  }

 private:
  std::exception_ptr exception_;
};

// Continue through ex: false (= do not suspend, continue now) for an inline executor, else hand
// h to ex and suspend. Nothing may touch the awaiter after ex.execute(h).
inline bool continue_on(executor& ex, std::coroutine_handle<> h) noexcept {
  if (ex.runs_inline()) return false;
  ex.execute(h);
  return true;
}

}  // namespace detail

template <class T>
class [[nodiscard]] task {
 public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;
  static_assert(!std::is_reference_v<T>, "task<T&> is not supported; use task<T*> or std::reference_wrapper");

  task() noexcept = default;
  task(task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  task& operator=(task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  // False for a default-constructed or moved-from task (awaiting one is a precondition violation).
  [[nodiscard]] bool valid() const noexcept { return bool(h_); }

  struct awaiter {
    std::coroutine_handle<promise_type> h;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> cont) const noexcept { return h.promise().start(h, cont); }
    T await_resume() const { return h.promise().take(); }
  };
  // Start the task and wait for it; the result is moved out (await a task once).
  awaiter operator co_await() && noexcept { return awaiter{h_}; }

 private:
  friend promise_type;
  friend struct detail::task_access;
  explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  void reset() noexcept {
    if (h_) std::exchange(h_, {}).destroy();
  }

  std::coroutine_handle<promise_type> h_;
};

namespace detail {

template <class T>
task<T> task_promise<T>::get_return_object() noexcept {
  return task<T>(std::coroutine_handle<task_promise<T>>::from_promise(*this));
}
inline task<void> task_promise<void>::get_return_object() noexcept {
  return task<void>(std::coroutine_handle<task_promise<void>>::from_promise(*this));
}

// Library-internal access to a task's frame (when_all/when_any/sync_wait).
struct task_access {
  template <class T>
  static std::coroutine_handle<task_promise<T>> handle(task<T>& t) noexcept {
    return t.h_;
  }
  // co_await completion(t): run t to its end without taking its result.
  template <class T>
  struct completion_awaiter {
    std::coroutine_handle<task_promise<T>> h;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> cont) const noexcept { return h.promise().start(h, cont); }
    void await_resume() const noexcept {}
  };
  template <class T>
  static completion_awaiter<T> completion(task<T>& t) noexcept {
    return completion_awaiter<T>{t.h_};
  }
};

// sync_wait's notifier: a tiny coroutine the task continues into; its final suspend signals.
struct sync_state {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
};

class sync_notifier {
 public:
  struct promise_type {
    sync_state* state = nullptr;
    sync_notifier get_return_object() noexcept {
      return sync_notifier(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
        sync_state* s = h.promise().state;
        std::lock_guard<std::mutex> lk(s->m);
        s->done = true;
        s->cv.notify_one();  // under the lock: the waiter cannot free s before we let go of it
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    void unhandled_exception() const noexcept {}
  };

  sync_notifier(sync_notifier&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  sync_notifier(const sync_notifier&) = delete;
  sync_notifier& operator=(const sync_notifier&) = delete;
  sync_notifier& operator=(sync_notifier&&) = delete;
  ~sync_notifier() {
    if (h_) h_.destroy();
  }
  std::coroutine_handle<promise_type> handle() const noexcept { return h_; }

 private:
  explicit sync_notifier(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

inline sync_notifier make_sync_notifier() { co_return; }

}  // namespace detail

// Run t to completion, blocking the calling thread (mutex + condition variable, no spinning).
// Returns t's value; rethrows an exception that escaped t's body. Precondition: t.valid().
template <class T>
T sync_wait(task<T> t) {
  detail::sync_state state;
  detail::sync_notifier notifier = detail::make_sync_notifier();
  notifier.handle().promise().state = &state;
  auto h = detail::task_access::handle(t);
  if (h.promise().start(h, notifier.handle())) {  // not finished synchronously: block
    std::unique_lock<std::mutex> lk(state.m);
    state.cv.wait(lk, [&] { return state.done; });
  }
  return h.promise().take();
}

// ---- awaiting a completion source -------------------------------------------------------------

// With a stop token: stopped before the co_await -> errc::cancelled at once (nothing registered,
// src not polled); stopped while registered -> the reactor resumes the coroutine promptly with
// errc::cancelled, src is left as it is and never polled again (wait_cancellation, reactor.hpp,
// has the rules for a stop racing the completion: exactly one resumption). Not movable once built
// (it may hold a std::stop_callback): use it as the prvalue that on() returns.
class on_awaiter {
 public:
  on_awaiter(reactor& r, completion_source& src, executor& ex, std::stop_token token = {}) noexcept
      : r_(&r), src_(&src), ex_(&ex), token_(std::move(token)) {}
  on_awaiter(const on_awaiter&) = delete;
  on_awaiter& operator=(const on_awaiter&) = delete;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) {
    if (token_.stop_requested()) {
      out_ = poll_failed(status(errc::cancelled, "cancelled before the wait was registered"));
      return detail::continue_on(*ex_, h);
    }
    poll_result p = src_->poll();
    if (p.state != poll_state::pending) {
      out_ = std::move(p);
      return detail::continue_on(*ex_, h);
    }
    cancel_.arm(*r_, std::move(token_));  // before watch(): afterwards *this may be gone
    r_->watch(*src_, h, *ex_, out_, cancel_.flag());
    return true;  // `this` may already be gone: do not touch it
  }
  status await_resume() { return to_status(std::move(out_)); }

 private:
  reactor* r_;
  completion_source* src_;
  executor* ex_;
  std::stop_token token_;
  poll_result out_;
  wait_cancellation cancel_;  // last: its stop_callback is deregistered before the rest goes
};

// co_await on(r, src, ex) -> status. `src` must outlive the wait.
[[nodiscard]] inline on_awaiter on(reactor& r, completion_source& src, executor& ex) noexcept {
  return on_awaiter(r, src, ex);
}

class schedule_awaiter {
 public:
  explicit schedule_awaiter(executor& ex) noexcept : ex_(&ex) {}
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) const noexcept { return detail::continue_on(*ex_, h); }
  void await_resume() const noexcept {}

 private:
  executor* ex_;
};

// co_await schedule(ex): continue on ex (a no-op hop for an inline_executor).
[[nodiscard]] inline schedule_awaiter schedule(executor& ex) noexcept { return schedule_awaiter(ex); }

// ---- callback mode ----------------------------------------------------------------------------

// A one-shot completion signalled by a callback on a foreign thread:
//   callback_completion cb;                       // lives in the awaiting coroutine's frame
//   enqueue_callback([&cb] { cb.complete(); });   // e.g. cudaLaunchHostFunc
//   status s = co_await cb.wait(reactor, pool);
// complete() is thread-safe and may come before or after the co_await; only the first call
// counts. It never resumes the coroutine on the calling thread: it posts to the reactor, which
// schedules the continuation on the executor (after reactor shutdown, post() runs ex.execute on
// the completing thread instead). After complete() has posted, it touches nothing of *this, so
// the resumed coroutine may destroy it. The object must stay alive until complete() returned,
// and complete() must be called exactly once if the coroutine awaits it (or it waits forever).
class callback_completion {
 public:
  callback_completion() = default;
  callback_completion(const callback_completion&) = delete;
  callback_completion& operator=(const callback_completion&) = delete;

  void complete(poll_result r = poll_ready()) noexcept {
    if (claimed_.exchange(true, std::memory_order_acq_rel)) return;
    result_ = std::move(r);
    if (state_.exchange(done, std::memory_order_acq_rel) == armed) {
      reactor* rx = r_;
      executor* ex = ex_;
      std::coroutine_handle<> h = h_;
      rx->post(h, *ex);
    }
  }
  void complete(status s) noexcept {
    complete(s.ok() ? poll_ready() : poll_failed(std::move(s)));
  }
  [[nodiscard]] bool is_done() const noexcept { return state_.load(std::memory_order_acquire) == done; }

  class awaiter {
   public:
    awaiter(callback_completion& c, reactor& r, executor& ex) noexcept : c_(&c), r_(&r), ex_(&ex) {}
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
      if (c_->state_.load(std::memory_order_acquire) == done) return detail::continue_on(*ex_, h);
      c_->h_ = h;
      c_->r_ = r_;
      c_->ex_ = ex_;
      int expected = idle;
      if (c_->state_.compare_exchange_strong(expected, armed, std::memory_order_acq_rel)) return true;
      return detail::continue_on(*ex_, h);  // completed meanwhile
    }
    status await_resume() { return to_status(c_->result_); }

   private:
    callback_completion* c_;
    reactor* r_;
    executor* ex_;
  };
  // co_await cb.wait(r, ex) -> status (await once).
  [[nodiscard]] awaiter wait(reactor& r, executor& ex) noexcept { return awaiter(*this, r, ex); }

 private:
  enum : int { idle = 0, armed = 1, done = 2 };
  std::atomic<bool> claimed_{false};
  std::atomic<int> state_{idle};
  poll_result result_;
  std::coroutine_handle<> h_;
  reactor* r_ = nullptr;
  executor* ex_ = nullptr;
};

}  // namespace baton::async
