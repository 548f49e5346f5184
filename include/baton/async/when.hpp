// baton/async/when.hpp — run tasks concurrently.
//
//   when_all(task<T>...)                           -> task<std::tuple<V...>>
//   when_all(std::vector<task<T>>)                 -> task<std::vector<V>>
//   when_all(cancel_source, task<T>...)            -> task<result<std::tuple<V...>>>   (fail-fast)
//   when_all(cancel_source, std::vector<task<T>>)  -> task<result<std::vector<V>>>     (fail-fast)
//   when_any(std::vector<task<T>>)                 -> task<std::pair<std::size_t, V>>
// where V is T, or std::monostate for T = void.
//
// All children are started when the combined task starts, one after the other on the starting
// thread; each runs until its first suspension (e.g. a registered reactor wait) before the next
// starts, so waits overlap. (To run CPU-heavy child bodies in parallel, begin each child with
// co_await schedule(pool).) Children may complete on any threads; the bookkeeping is atomic and
// the combined task resumes on the thread of the child that finished last (when_all) / first
// (when_any), by symmetric transfer.
//
// when_all waits for every child and returns the results in argument order. If a child's body
// threw, the exception of the first such child (in order) is rethrown after all have finished.
// Failures carried as status values are simply results: check them.
//
// Fail-fast when_all(stop, ...): the same start and the same wait for EVERY child (structured: no
// child outlives it, and it never resumes before the last one finished), but the first child to
// FAIL requests stop on `stop` (a std::stop_source; copies share one state). A child fails when
// its body threw, or when its value is a status or result<U> that is not ok; for any other T only
// a throw counts. The children see the stop only through the tokens they were given: pass
// stop.get_token() to their on(..., token) / done(ctx, s, token) / ready(ctx, e, token) /
// guarded(token, ...), and those waits return errc::cancelled promptly (the GPU work itself runs
// on). Result: all values when no child failed; otherwise the FIRST failure in time (the one
// whose failure was recorded first, by an atomic exchange that happens before the stop request,
// so the siblings' resulting errc::cancelled never masks it): its exception rethrown unchanged
// (same type, no context), or its status with the context "when_all child I of N" (its code and
// cuda_code kept); the other children's values and exceptions are dropped. A stop requested from
// outside cancels the children the same way; the first child to fail then is typically one that
// reports errc::cancelled.
//
//   cancel_source stop;
//   result<std::tuple<status, status>> r = co_await when_all(
//       stop, step(ctx, s1, stop.get_token()), step(ctx, s2, stop.get_token()));
//   if (!r.ok()) co_return r.error();  // message(): "when_all child 1 of 2: <child 1's message>"
//
// when_any returns the index and result of the first child to finish (decided by an atomic
// exchange; children that finish synchronously at start win in order). Every child is started,
// and the others KEEP RUNNING in the background to their natural end: their frames stay alive
// (owned by themselves and a shared state) until they finish, and their results and exceptions
// are dropped. Whatever they reference (events, the reactor, executors, captured objects) must
// therefore outlive them, not just the when_any.
// when_any of an empty vector finishes at once with index npos (= size_t(-1)) and
// V(status(errc::invalid_argument, ...)) if V is constructible from status, else V{}.
#pragma once

#include <array>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/task.hpp"
#include "baton/status.hpp"

namespace baton::async {

template <class T>
using when_value_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

namespace detail {

// Take a finished child's value (rethrowing its exception), void -> monostate.
template <class T>
when_value_t<T> take_when_value(task<T>& t) {
  if constexpr (std::is_void_v<T>) {
    task_access::handle(t).promise().take();
    return std::monostate{};
  } else {
    return task_access::handle(t).promise().take();
  }
}

// ---- when_all ----

struct when_all_counter {
  std::atomic<std::size_t> count{0};
  std::coroutine_handle<> parent;
};

// Awaits one child; its final suspend counts down and the last one resumes the parent. The
// parent owns the runner frames and destroys them after it resumed.
class when_all_runner {
 public:
  struct promise_type {
    when_all_counter* counter = nullptr;
    when_all_runner get_return_object() noexcept {
      return when_all_runner(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
        when_all_counter* c = h.promise().counter;
        std::coroutine_handle<> parent = c->parent;  // read before the count: *c may go away after
        if (c->count.fetch_sub(1, std::memory_order_acq_rel) == 1) return parent;
        return std::noop_coroutine();
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    void unhandled_exception() const noexcept {}  // the body cannot throw (see run_for_all)
  };

  when_all_runner(when_all_runner&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  when_all_runner& operator=(when_all_runner&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  when_all_runner(const when_all_runner&) = delete;
  when_all_runner& operator=(const when_all_runner&) = delete;
  ~when_all_runner() {
    if (h_) h_.destroy();
  }
  void start(when_all_counter& c) noexcept {
    h_.promise().counter = &c;
    h_.resume();
  }

 private:
  explicit when_all_runner(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

template <class T>
when_all_runner run_for_all(task<T>& t) {
  co_await task_access::completion(t);  // the child's exception stays in its promise
}

struct when_all_start {
  when_all_runner* runners;
  std::size_t n;
  when_all_counter* counter;
  bool await_ready() const noexcept { return n == 0; }
  bool await_suspend(std::coroutine_handle<> parent) const noexcept {
    counter->parent = parent;
    counter->count.store(n + 1, std::memory_order_relaxed);  // +1: ours, so no child resumes us early
    for (std::size_t i = 0; i < n; ++i) runners[i].start(*counter);
    return counter->count.fetch_sub(1, std::memory_order_acq_rel) != 1;  // false: all done already
  }
  void await_resume() const noexcept {}
};

// ---- fail-fast when_all ----

template <class V>
struct is_result : std::false_type {};
template <class U>
struct is_result<result<U>> : std::true_type {};

// Whether a finished child failed (see the header comment). noexcept: called from a runner.
template <class T>
bool child_failed(task<T>& t) noexcept {
  auto& p = task_access::handle(t).promise();
  if (p.has_exception()) return true;
  if constexpr (std::is_same_v<T, status> || is_result<T>::value) {
    const T* v = p.peek();
    return v != nullptr && !v->ok();
  } else {
    return false;
  }
}

struct when_all_stop_state {
  cancel_source stop;
  std::atomic<std::size_t> first{npos};  // the index of the first child that failed
};

template <class T>
when_all_runner run_for_all_stop(task<T>& t, when_all_stop_state& st, std::size_t i) {
  co_await task_access::completion(t);
  if (child_failed(t)) {
    std::size_t none = npos;
    // Record first, stop second: a sibling cancelled by this stop finishes after the record.
    if (st.first.compare_exchange_strong(none, i, std::memory_order_acq_rel)) st.stop.request_stop();
  }
}

template <class... T, std::size_t... I>
std::array<when_all_runner, sizeof...(T)> make_stop_runners(when_all_stop_state& st, std::index_sequence<I...>,
                                                            task<T>&... ts) {
  return {run_for_all_stop(ts, st, I)...};
}

// The failed child's error: its exception rethrown, or its status with "when_all child i of n".
template <class T>
status child_failure(task<T>& t, std::size_t i, std::size_t n) {
  auto& p = task_access::handle(t).promise();
  if (p.has_exception()) std::rethrow_exception(p.exception());
  status s;
  if constexpr (std::is_same_v<T, status>) {
    s = *p.peek();
  } else if constexpr (is_result<T>::value) {
    s = p.peek()->error();
  }
  if (s.ok()) s = status(errc::invalid_argument, "recorded as failed but holds no error");  // cannot happen
  return s.with_context("when_all child " + std::to_string(i) + " of " + std::to_string(n));
}

// ---- when_any ----

template <class T>
struct when_any_state {
  std::atomic<bool> won{false};
  std::atomic<int> handshake{2};  // the winner and the starting parent; the second resumes it
  std::size_t index = npos;
  std::optional<when_value_t<T>> value;
  std::exception_ptr exception;
  std::coroutine_handle<> parent;
};

// Self-owned: the frame destroys itself at its final suspend, then transfers to `next` (the
// parent if this runner won and the parent is waiting, else nothing).
class when_any_runner {
 public:
  struct promise_type {
    std::coroutine_handle<> next = std::noop_coroutine();
    when_any_runner get_return_object() noexcept {
      return when_any_runner(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
        std::coroutine_handle<> next = h.promise().next;
        h.destroy();
        return next;
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    void unhandled_exception() const noexcept {}
  };
  // Start exactly once; the handle is not used afterwards.
  void start() const noexcept { h_.resume(); }

 private:
  explicit when_any_runner(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

// co_await promise_of<P>{} -> P*: the awaiting coroutine's own promise. (A pointer, not a
// reference: nvcc's front end does not treat a co_await yielding P& as an lvalue.)
template <class P>
struct promise_of {
  P* p = nullptr;
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    p = &h.promise();
    return false;
  }
  P* await_resume() const noexcept { return p; }
};

template <class T>
when_any_runner run_for_any(task<T> t, std::shared_ptr<when_any_state<T>> st, std::size_t i) {
  when_any_runner::promise_type* self = co_await promise_of<when_any_runner::promise_type>{};
  co_await task_access::completion(t);
  if (!st->won.exchange(true, std::memory_order_acq_rel)) {
    st->index = i;
    auto& p = task_access::handle(t).promise();
    if (p.has_exception()) {
      st->exception = p.exception();
    } else {
      st->value.emplace(take_when_value(t));
    }
    if (st->handshake.fetch_sub(1, std::memory_order_acq_rel) == 1) self->next = st->parent;
  }
}

template <class T>
struct when_any_start {
  std::vector<when_any_runner>* runners;
  when_any_state<T>* state;
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> parent) const noexcept {
    state->parent = parent;
    for (auto& r : *runners) r.start();
    return state->handshake.fetch_sub(1, std::memory_order_acq_rel) != 1;
  }
  void await_resume() const noexcept {}
};

}  // namespace detail

template <class... T>
task<std::tuple<when_value_t<T>...>> when_all(task<T>... tasks) {
  detail::when_all_counter counter;
  std::array<detail::when_all_runner, sizeof...(T)> runners{detail::run_for_all(tasks)...};
  co_await detail::when_all_start{runners.data(), runners.size(), &counter};
  co_return std::tuple<when_value_t<T>...>{detail::take_when_value(tasks)...};
}

template <class T>
task<std::vector<when_value_t<T>>> when_all(std::vector<task<T>> tasks) {
  detail::when_all_counter counter;
  std::vector<detail::when_all_runner> runners;
  runners.reserve(tasks.size());
  for (auto& t : tasks) runners.push_back(detail::run_for_all(t));
  co_await detail::when_all_start{runners.data(), runners.size(), &counter};
  runners.clear();
  for (auto& t : tasks) {  // rethrow the first child exception, if any, before moving values
    auto& p = detail::task_access::handle(t).promise();
    if (p.has_exception()) std::rethrow_exception(p.exception());
  }
  std::vector<when_value_t<T>> out;
  out.reserve(tasks.size());
  for (auto& t : tasks) out.push_back(detail::take_when_value(t));
  co_return std::move(out);
}

// Fail-fast forms (see the header comment).
template <class... T>
task<result<std::tuple<when_value_t<T>...>>> when_all(cancel_source stop, task<T>... tasks) {
  using R = result<std::tuple<when_value_t<T>...>>;
  [[maybe_unused]] constexpr std::size_t n = sizeof...(T);
  detail::when_all_counter counter;
  detail::when_all_stop_state st{std::move(stop)};
  auto runners = detail::make_stop_runners(st, std::index_sequence_for<T...>{}, tasks...);
  co_await detail::when_all_start{runners.data(), runners.size(), &counter};
  const std::size_t first = st.first.load(std::memory_order_acquire);
  if (first != npos) {
    status err;
    [[maybe_unused]] std::size_t i = 0;
    ((i++ == first ? (void)(err = detail::child_failure(tasks, first, n)) : (void)0), ...);
    co_return R(std::move(err));
  }
  co_return R(std::tuple<when_value_t<T>...>{detail::take_when_value(tasks)...});
}

template <class T>
task<result<std::vector<when_value_t<T>>>> when_all(cancel_source stop, std::vector<task<T>> tasks) {
  using R = result<std::vector<when_value_t<T>>>;
  detail::when_all_counter counter;
  detail::when_all_stop_state st{std::move(stop)};
  std::vector<detail::when_all_runner> runners;
  runners.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) runners.push_back(detail::run_for_all_stop(tasks[i], st, i));
  co_await detail::when_all_start{runners.data(), runners.size(), &counter};
  runners.clear();
  const std::size_t first = st.first.load(std::memory_order_acquire);
  if (first != npos) co_return R(detail::child_failure(tasks[first], first, tasks.size()));
  std::vector<when_value_t<T>> out;
  out.reserve(tasks.size());
  for (auto& t : tasks) out.push_back(detail::take_when_value(t));
  co_return R(std::move(out));
}

template <class T>
task<std::pair<std::size_t, when_value_t<T>>> when_any(std::vector<task<T>> tasks) {
  using V = when_value_t<T>;
  static_assert(std::is_constructible_v<V, status> || std::is_default_constructible_v<V>,
                "when_any needs a V constructible from status or default-constructible (for empty input)");
  if (tasks.empty()) {
    if constexpr (std::is_constructible_v<V, status>) {
      co_return std::pair<std::size_t, V>(npos, V(status(errc::invalid_argument, "when_any of no tasks")));
    } else {
      co_return std::pair<std::size_t, V>(npos, V{});
    }
  }
  auto state = std::make_shared<detail::when_any_state<T>>();
  std::vector<detail::when_any_runner> runners;
  runners.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) runners.push_back(detail::run_for_any(std::move(tasks[i]), state, i));
  tasks.clear();
  co_await detail::when_any_start<T>{&runners, state.get()};
  runners.clear();
  if (state->exception) std::rethrow_exception(state->exception);
  co_return std::pair<std::size_t, V>(state->index, std::move(*state->value));
}

}  // namespace baton::async
