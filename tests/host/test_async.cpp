// Host tests for the CUDA-agnostic async layer: baton/async/*.hpp (tasks, reactor, executors,
// when_all/when_any, cancellation, fake events). Every test is bounded in time.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "baton/async/cancel.hpp"
#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/async/fake_source.hpp"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"
#include "baton/status.hpp"

namespace {

namespace async = baton::async;
using async::fake_event;
using async::inline_executor;
using async::reactor;
using async::task;
using async::thread_pool;
using baton::errc;
using baton::status;
using namespace std::chrono_literals;

// Counts live coroutine frames: pass one by value (the frame keeps a copy) or declare one.
struct frame_probe {
  static std::atomic<int>& live() {
    static std::atomic<int> n{0};
    return n;
  }
  frame_probe() { live().fetch_add(1); }
  frame_probe(const frame_probe&) { live().fetch_add(1); }
  frame_probe(frame_probe&&) noexcept { live().fetch_add(1); }
  frame_probe& operator=(const frame_probe&) = default;
  ~frame_probe() { live().fetch_sub(1); }
};

// Poll pred with 1 ms naps until it holds or the bound passes.
template <class F>
bool wait_until(F pred, std::chrono::milliseconds bound = 3000ms) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::unique_ptr<fake_event[]> make_events(std::size_t n) { return std::unique_ptr<fake_event[]>(new fake_event[n]); }

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// ---- tasks ----------------------------------------------------------------------------------------

task<int> answer() { co_return 42; }
task<int> add(int a, int b) { co_return a + b; }
task<void> nothing(int& touched) {
  touched = 1;
  co_return;
}
task<int> nested() {
  int a = co_await answer();
  int b = co_await add(a, 8);
  co_return b;
}

TEST(AsyncTask, ValuesVoidAndNesting) {
  EXPECT_EQ(async::sync_wait(answer()), 42);
  EXPECT_EQ(async::sync_wait(nested()), 50);
  int touched = 0;
  async::sync_wait(nothing(touched));
  EXPECT_EQ(touched, 1);
  auto t = add(1, 2);
  EXPECT_TRUE(t.valid());
  auto u = std::move(t);
  EXPECT_FALSE(t.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(async::sync_wait(std::move(u)), 3);
}

task<int> lazy_body(frame_probe, bool& ran) {
  ran = true;
  co_return 1;
}

TEST(AsyncTask, LazyAndFrameFreedIfNeverAwaited) {
  frame_probe::live() = 0;
  bool ran = false;
  {
    auto t = lazy_body(frame_probe{}, ran);
    EXPECT_EQ(frame_probe::live().load(), 1);
    EXPECT_FALSE(ran);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(frame_probe::live().load(), 0);
}

task<int> one() { co_return 1; }
task<long> many_sync_awaits(int n) {
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += co_await one();
  co_return sum;
}

TEST(AsyncTask, LongSynchronousChainUsesSymmetricTransfer) {
  // 200k synchronously completing awaits: without symmetric transfer this overflows the stack.
  EXPECT_EQ(async::sync_wait(many_sync_awaits(200000)), 200000);
}

task<int> thrower() {
  throw std::runtime_error("boom");
  co_return 0;
}
task<int> awaits_thrower() { co_return co_await thrower() + 1; }

TEST(AsyncTask, ExceptionIsRethrownAtAwaitAndSyncWait) {
  EXPECT_THROW((void)async::sync_wait(awaits_thrower()), std::runtime_error);
}

// ---- ordering and executors ----------------------------------------------------------------------

task<status> chain(reactor& r, fake_event* evs, int n, async::executor& ex, std::vector<int>& log) {
  for (int i = 0; i < n; ++i) {
    status s = co_await async::on(r, evs[i], ex);
    if (!s.ok()) co_return s;
    log.push_back(i);
  }
  co_return status{};
}

TEST(AsyncOrder, ChainOfAwaitsCompletesInOrder) {
  thread_pool pool(2);
  reactor r;
  constexpr int n = 6;
  auto evs = make_events(n);
  std::vector<int> log;
  std::thread completer([&] {
    // Let the chain register its first wait, then finish all events in reverse order.
    (void)wait_until([&] { return r.stats().waiting == 1; });
    for (int i = n - 1; i >= 0; --i) evs[i].complete();
  });
  status s = async::sync_wait(chain(r, evs.get(), n, pool, log));
  completer.join();
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

struct where {
  std::thread::id after_reactor_wait;
  bool on_pool_after_wait = false;
  std::thread::id after_inline_wait;
  bool on_pool_after_schedule = false;
  std::thread::id after_ready_wait;
};

task<where> hop_around(reactor& r, fake_event& a, fake_event& b, fake_event& done, thread_pool& pool,
                       inline_executor& inl) {
  where w;
  (void)co_await async::on(r, a, pool);  // registered: the reactor resumes us on the pool
  w.after_reactor_wait = std::this_thread::get_id();
  w.on_pool_after_wait = pool.on_worker_thread();
  (void)co_await async::on(r, b, inl);  // inline: we continue on the reactor thread
  w.after_inline_wait = std::this_thread::get_id();
  co_await async::schedule(pool);
  w.on_pool_after_schedule = pool.on_worker_thread();
  (void)co_await async::on(r, done, inl);  // already complete: continues right here
  w.after_ready_wait = std::this_thread::get_id();
  co_return w;
}

TEST(AsyncOrder, ContinuationRunsOnTheChosenExecutor) {
  thread_pool pool(2);
  inline_executor inl;
  reactor r;
  fake_event a, b, done;
  done.complete();
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 1; });
    a.complete();
    (void)wait_until([&] { return r.stats().completions == 1 && r.stats().waiting == 1; });
    b.complete();
  });
  where w = async::sync_wait(hop_around(r, a, b, done, pool, inl));
  completer.join();
  const auto main_id = std::this_thread::get_id();
  EXPECT_TRUE(w.on_pool_after_wait);
  EXPECT_NE(w.after_reactor_wait, main_id);
  EXPECT_NE(w.after_reactor_wait, r.thread_id());
  EXPECT_EQ(w.after_inline_wait, r.thread_id());
  EXPECT_TRUE(w.on_pool_after_schedule);
  EXPECT_NE(w.after_ready_wait, r.thread_id());  // the ready wait did not go through the reactor
  EXPECT_EQ(r.stats().completions, 2u);
}

TEST(AsyncOrder, SinglePoolThreadRunsEveryContinuation) {
  thread_pool pool(1);
  reactor r;
  auto evs = make_events(8);
  std::vector<task<std::thread::id>> ts;
  for (int i = 0; i < 8; ++i) {
    ts.push_back([](reactor& r, fake_event& e, thread_pool& p) -> task<std::thread::id> {
      (void)co_await async::on(r, e, p);
      co_return std::this_thread::get_id();
    }(r, evs[i], pool));
  }
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 8; });
    for (int i = 0; i < 8; ++i) evs[i].complete();
  });
  auto ids = async::sync_wait(async::when_all(std::move(ts)));
  completer.join();
  std::set<std::thread::id> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), 1u);
  EXPECT_NE(*distinct.begin(), std::this_thread::get_id());
}

// ---- when_all / when_any ---------------------------------------------------------------------------

task<int> value_after(reactor& r, fake_event& e, async::executor& ex, int v) {
  status s = co_await async::on(r, e, ex);
  co_return s.ok() ? v : -1;
}
task<status> status_after(reactor& r, fake_event& e, async::executor& ex) { co_return co_await async::on(r, e, ex); }
task<void> void_after(reactor& r, fake_event& e, async::executor& ex, std::atomic<int>& hits) {
  (void)co_await async::on(r, e, ex);
  hits.fetch_add(1);
}

TEST(AsyncWhen, AllVariadicMixedTypes) {
  thread_pool pool(2);
  reactor r;
  fake_event a, b, c;
  std::atomic<int> hits{0};
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 3; });
    c.complete();
    b.complete();
    a.complete();
  });
  auto [x, s, v] = async::sync_wait(
      async::when_all(value_after(r, a, pool, 7), status_after(r, b, pool), void_after(r, c, pool, hits)));
  completer.join();
  EXPECT_EQ(x, 7);
  EXPECT_TRUE(s.ok());
  (void)v;
  EXPECT_EQ(hits.load(), 1);
  auto empty = async::sync_wait(async::when_all());
  EXPECT_EQ(std::tuple_size_v<decltype(empty)>, 0u);
}

TEST(AsyncWhen, AllVectorStartsConcurrentlyAndKeepsOrder) {
  thread_pool pool(2);
  reactor r;
  constexpr int n = 64;
  auto evs = make_events(n);
  std::vector<task<int>> ts;
  for (int i = 0; i < n; ++i) ts.push_back(value_after(r, evs[i], pool, i * 10));
  bool all_registered = false;
  std::thread completer([&] {
    // Only concurrent start can have every child registered before any event completes.
    all_registered = wait_until([&] { return r.stats().waiting == std::size_t(n); });
    for (int i = n - 1; i >= 0; --i) evs[i].complete();
  });
  std::vector<int> out = async::sync_wait(async::when_all(std::move(ts)));
  completer.join();
  EXPECT_TRUE(all_registered);
  ASSERT_EQ(out.size(), std::size_t(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], i * 10);
  EXPECT_TRUE(async::sync_wait(async::when_all(std::vector<task<int>>{})).empty());
}

task<int> probed_value_after(reactor& r, fake_event& e, async::executor& ex, int v, frame_probe) {
  (void)co_await async::on(r, e, ex);
  co_return v;
}

TEST(AsyncWhen, AnyReturnsFirstAndLosersFinishHarmlessly) {
  frame_probe::live() = 0;
  thread_pool pool(2);
  reactor r;
  constexpr int n = 5;
  auto evs = make_events(n);
  std::vector<task<int>> ts;
  for (int i = 0; i < n; ++i) ts.push_back(probed_value_after(r, evs[i], pool, 100 + i, frame_probe{}));
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == std::size_t(n); });
    evs[3].complete();
  });
  auto [index, value] = async::sync_wait(async::when_any(std::move(ts)));
  completer.join();
  EXPECT_EQ(index, 3u);
  EXPECT_EQ(value, 103);
  EXPECT_EQ(frame_probe::live().load(), n - 1);  // the losers are still running
  for (int i = n - 1; i >= 0; --i) evs[i].complete();  // later completions: harmless
  EXPECT_TRUE(wait_until([] { return frame_probe::live().load() == 0; }));
  EXPECT_TRUE(wait_until([&] { return r.stats().waiting == 0; }));
}

TEST(AsyncWhen, AnyOfReadyChildrenAndEmpty) {
  std::vector<task<int>> ts;
  ts.push_back(add(1, 1));
  ts.push_back(add(2, 2));
  auto [i, v] = async::sync_wait(async::when_any(std::move(ts)));
  EXPECT_EQ(i, 0u);
  EXPECT_EQ(v, 2);
  auto [ei, ev] = async::sync_wait(async::when_any(std::vector<task<status>>{}));
  EXPECT_EQ(ei, async::npos);
  EXPECT_EQ(ev.code(), errc::invalid_argument);
}

// ---- errors --------------------------------------------------------------------------------------

TEST(AsyncError, FailedEventStatusSurfacesWithItsMessage) {
  thread_pool pool(1);
  reactor r;
  fake_event e;
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 1; });
    EXPECT_TRUE(e.fail(status(errc::cuda_error, "kernel 'gemm' faulted", 700)));
    EXPECT_FALSE(e.complete());  // first finish wins
  });
  status s = async::sync_wait(status_after(r, e, pool));
  completer.join();
  EXPECT_EQ(s.code(), errc::cuda_error);
  EXPECT_EQ(s.message(), "kernel 'gemm' faulted");
  EXPECT_EQ(s.cuda_code(), 700);

  fake_event pre;  // failed before the await: no registration, same status
  (void)pre.fail(status(errc::resource_exhausted, "no pinned buffers"));
  status s2 = async::sync_wait(status_after(r, pre, pool));
  EXPECT_EQ(s2.code(), errc::resource_exhausted);
  EXPECT_EQ(s2.message(), "no pinned buffers");
}

task<baton::result<int>> checked_value(reactor& r, fake_event& e, async::executor& ex, int v) {
  status s = co_await async::on(r, e, ex);
  if (!s.ok()) co_return s.with_context("child " + std::to_string(v));
  co_return v;
}

TEST(AsyncError, FailingChildOfWhenAllSurfaces) {
  thread_pool pool(2);
  reactor r;
  auto evs = make_events(4);
  std::vector<task<baton::result<int>>> ts;
  for (int i = 0; i < 4; ++i) ts.push_back(checked_value(r, evs[i], pool, i));
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 4; });
    evs[0].complete();
    (void)evs[2].fail(status(errc::watchdog_timeout, "stage 2 spun too long"));
    evs[1].complete();
    evs[3].complete();
  });
  auto out = async::sync_wait(async::when_all(std::move(ts)));
  completer.join();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].ok());
  EXPECT_TRUE(out[1].ok());
  EXPECT_TRUE(out[3].ok());
  ASSERT_FALSE(out[2].ok());
  EXPECT_EQ(out[2].error().code(), errc::watchdog_timeout);
  EXPECT_EQ(out[2].error().message(), "child 2: stage 2 spun too long");
}

TEST(AsyncError, ThrowingChildOfWhenAllRethrowsAfterAllFinished) {
  std::vector<task<int>> ts;
  ts.push_back(add(1, 2));
  ts.push_back(thrower());
  EXPECT_THROW((void)async::sync_wait(async::when_all(std::move(ts))), std::runtime_error);
}

// ---- cancellation --------------------------------------------------------------------------------

task<int> body_that_records(std::atomic<bool>& ran) {
  ran = true;
  co_return 5;
}
task<void> void_body(std::atomic<bool>& ran) {
  ran = true;
  co_return;
}

TEST(AsyncCancel, GuardedCancelledBeforeStartNeverRunsTheBody) {
  async::cancel_source src;
  std::atomic<bool> ran{false};
  auto g = async::guarded(src.get_token(), body_that_records(ran));
  src.request_stop();  // after creation, before start: still counts as "before start"
  baton::result<int> r = async::sync_wait(std::move(g));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::cancelled);
  EXPECT_FALSE(ran.load());

  status vs = async::sync_wait(async::guarded(src.get_token(), void_body(ran)));
  EXPECT_EQ(vs.code(), errc::cancelled);
  EXPECT_FALSE(ran.load());

  async::cancel_source live;
  baton::result<int> ok = async::sync_wait(async::guarded(live.get_token(), body_that_records(ran)));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  EXPECT_TRUE(ran.load());
}

TEST(AsyncCancel, OnWithCancelledTokenDoesNotRegister) {
  inline_executor inl;
  reactor r;
  fake_event e;
  async::cancel_source src;
  src.request_stop();
  auto t = [](reactor& r, fake_event& e, inline_executor& ex, async::cancel_token tok) -> task<status> {
    co_return co_await async::on(r, e, ex, tok);
  };
  status s = async::sync_wait(t(r, e, inl, src.get_token()));
  EXPECT_EQ(s.code(), errc::cancelled);
  EXPECT_EQ(e.poll_count(), 0u);
  EXPECT_EQ(r.stats().waiting, 0u);
}

task<status> probed_wait(reactor& r, fake_event& e, async::executor& ex, frame_probe) {
  frame_probe inside;
  co_return co_await async::on(r, e, ex);
}

TEST(AsyncCancel, ReactorShutdownCancelsPendingWaitersWithoutLeaks) {
  frame_probe::live() = 0;
  thread_pool pool(2);  // outlives the reactor: cancelled continuations run here
  inline_executor inl;
  constexpr int n = 16;
  auto evs = make_events(n);
  auto r = std::make_unique<reactor>();
  reactor* rp = r.get();
  std::vector<status> results;
  std::thread waiter([&] {
    std::vector<task<status>> ts;
    for (int i = 0; i < n; ++i) {
      async::executor& ex = i % 2 ? static_cast<async::executor&>(pool) : inl;
      ts.push_back(probed_wait(*rp, evs[i], ex, frame_probe{}));
    }
    results = async::sync_wait(async::when_all(std::move(ts)));
  });
  ASSERT_TRUE(wait_until([&] { return rp->stats().waiting == std::size_t(n); }));
  EXPECT_GT(frame_probe::live().load(), 0);
  r.reset();  // never completes the events
  waiter.join();
  ASSERT_EQ(results.size(), std::size_t(n));
  for (const auto& s : results) {
    EXPECT_EQ(s.code(), errc::cancelled);
    EXPECT_EQ(s.message(), "reactor shut down");
  }
  EXPECT_EQ(frame_probe::live().load(), 0);
}

TEST(AsyncCancel, WatchAfterShutdownCompletesAtOnce) {
  inline_executor inl;
  reactor r;
  r.shutdown();
  fake_event e;
  status s = async::sync_wait(status_after(r, e, inl));
  EXPECT_EQ(s.code(), errc::cancelled);
  EXPECT_EQ(r.stats().cancelled, 1u);
}

// ---- scale ---------------------------------------------------------------------------------------

task<void> count_once(reactor& r, fake_event& e, async::executor& ex, std::atomic<int>& slot) {
  status s = co_await async::on(r, e, ex);
  if (s.ok()) slot.fetch_add(1, std::memory_order_relaxed);
}

TEST(AsyncScale, TenThousandTasksOnTenThousandEvents) {
  constexpr int n = 10000;
  thread_pool pool(2);
  reactor r;
  auto evs = make_events(n);
  auto slots = std::unique_ptr<std::atomic<int>[]>(new std::atomic<int>[n]);
  for (int i = 0; i < n; ++i) slots[i] = 0;
  std::vector<task<void>> ts;
  ts.reserve(n);
  for (int i = 0; i < n; ++i) ts.push_back(count_once(r, evs[i], pool, slots[i]));
  const auto t0 = std::chrono::steady_clock::now();
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == std::size_t(n); });
    for (int i = 0; i < n; ++i) evs[(i * 7919) % n].complete();  // a scrambled order
  });
  auto out = async::sync_wait(async::when_all(std::move(ts)));
  completer.join();
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(out.size(), std::size_t(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(slots[i].load(), 1) << "task " << i;
  const auto st = r.stats();
  EXPECT_EQ(st.completions, std::uint64_t(n));
  EXPECT_EQ(st.waiting, 0u);
  EXPECT_LT(elapsed, 4s);
}

TEST(AsyncScale, OneThreadPoolRunsTenThousandQueuedResumptions) {
  constexpr int n = 10000;
  thread_pool pool(1);
  std::atomic<int> ran{0};
  std::vector<task<int>> ts;
  ts.reserve(n);
  for (int i = 0; i < n; ++i) {
    ts.push_back([](thread_pool& p, std::atomic<int>& ran, int i) -> task<int> {
      co_await async::schedule(p);
      ran.fetch_add(1, std::memory_order_relaxed);
      co_return i;
    }(pool, ran, i));
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto out = async::sync_wait(async::when_all(std::move(ts)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
  EXPECT_EQ(ran.load(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], i);
  EXPECT_GE(pool.executed(), std::uint64_t(n));
}

// A detached coroutine (runs eagerly, frees itself at the end): lets a test leave work in flight.
struct detached {
  struct promise_type {
    detached get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() const noexcept { return {}; }
    std::suspend_never final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    void unhandled_exception() const noexcept {}
  };
};

detached hop_twice(thread_pool& p, std::atomic<int>& ran, frame_probe) {
  co_await async::schedule(p);
  ran.fetch_add(1);
  co_await async::schedule(p);  // queued by a worker, typically while the destructor runs
  ran.fetch_add(1);
}

TEST(AsyncExecutor, ThreadPoolRunsWorkQueuedDuringShutdown) {
  frame_probe::live() = 0;
  std::atomic<int> ran{0};
  {
    thread_pool pool(2);
    for (int i = 0; i < 200; ++i) hop_twice(pool, ran, frame_probe{});
  }  // destructor: joins, but first runs everything, including the second hops
  EXPECT_EQ(ran.load(), 400);
  EXPECT_EQ(frame_probe::live().load(), 0);
}

// ---- reactor behaviour ---------------------------------------------------------------------------

TEST(AsyncReactor, IdleReactorUsesAlmostNoCpu) {
  inline_executor inl;
  reactor r;
  fake_event e;
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 1; });
    e.complete();
  });
  EXPECT_TRUE(async::sync_wait(status_after(r, e, inl)).ok());  // exercise the loop once
  completer.join();
  std::this_thread::sleep_for(20ms);  // let the loop fall back to its untimed wait
  const double c0 = process_cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(200ms);
  const double cpu = process_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  EXPECT_LT(cpu, 0.05 * wall) << "cpu " << cpu << " s over " << wall << " s";
  EXPECT_GE(r.stats().idle_waits, 1u);
}

TEST(AsyncReactor, BacksOffWhileAWaitIsPending) {
  inline_executor inl;
  reactor r(async::reactor_options{64, 16, std::chrono::microseconds(1000), std::chrono::microseconds(8)});
  fake_event e;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    EXPECT_TRUE(async::sync_wait(status_after(r, e, inl)).ok());
    done = true;
  });
  ASSERT_TRUE(wait_until([&] { return r.stats().waiting == 1; }));
  std::this_thread::sleep_for(30ms);  // reach the capped sleeps
  const double c0 = process_cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(100ms);
  const double cpu = process_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const auto st = r.stats();
  EXPECT_GT(st.sleeps, 10u);
  EXPECT_LT(st.polls, 20000u);  // a spinning loop would poll millions of times
  EXPECT_LT(cpu, 0.25 * wall) << "cpu " << cpu << " s over " << wall << " s";
  e.complete();
  waiter.join();
  EXPECT_TRUE(done.load());
}

// reactor_options::yield_for: while a wait is pending the loop yields (no timed sleeps) until the
// window since the last progress has passed, then backs off to sleeps as before; after a
// completion the window starts again. Without it the same wait reaches the sleeps at once.
TEST(AsyncReactor, YieldWindowKeepsThePendingWaitOutOfSleeps) {
  inline_executor inl;
  async::reactor_options o{64, 16, std::chrono::microseconds(1000), std::chrono::microseconds(8)};
  o.yield_for = std::chrono::microseconds(400'000);
  reactor r(o);
  fake_event e;
  std::thread waiter([&] { EXPECT_TRUE(async::sync_wait(status_after(r, e, inl)).ok()); });
  ASSERT_TRUE(wait_until([&] { return r.stats().waiting == 1; }));
  std::this_thread::sleep_for(50ms);  // well inside the window
  EXPECT_EQ(r.stats().sleeps, 0u) << "a pending wait inside yield_for must not sleep";
  e.complete();
  waiter.join();
  // A second wait outlives the window: the loop sleeps after it.
  fake_event e2;
  std::thread waiter2([&] { EXPECT_TRUE(async::sync_wait(status_after(r, e2, inl)).ok()); });
  ASSERT_TRUE(wait_until([&] { return r.stats().waiting == 1; }));
  ASSERT_TRUE(wait_until([&] { return r.stats().sleeps > 0; }, 5s)) << "sleeps resume after the window";
  e2.complete();
  waiter2.join();
  // The same first wait without the window sleeps within 50 ms.
  reactor plain(async::reactor_options{64, 16, std::chrono::microseconds(1000), std::chrono::microseconds(8)});
  fake_event e3;
  std::thread waiter3([&] { EXPECT_TRUE(async::sync_wait(status_after(plain, e3, inl)).ok()); });
  ASSERT_TRUE(wait_until([&] { return plain.stats().waiting == 1; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_GT(plain.stats().sleeps, 0u);
  e3.complete();
  waiter3.join();
}

// Suspends a coroutine and hands its handle to another thread (which post()s it), like a
// cudaLaunchHostFunc callback would.
struct park {
  std::atomic<void*>* slot;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const noexcept { slot->store(h.address()); }
  void await_resume() const noexcept {}
};

// Callback mode announces its post (expect_post) before handing the callback to CUDA: until the
// post comes the reactor backs off (spin, yield, timed sleeps) instead of blocking, so a
// latency-tuned reactor sees it without a wake-up; once it came, the reactor blocks again.
TEST(AsyncReactor, AnnouncedPostKeepsTheLoopInBackoffThenItBlocksAgain) {
  thread_pool pool(1);
  reactor r(async::reactor_options{64, 16, std::chrono::microseconds(1000), std::chrono::microseconds(8)});
  ASSERT_TRUE(wait_until([&] { return r.stats().idle_waits >= 1; }));  // blocked: nothing to do
  std::this_thread::sleep_for(5ms);
  const auto before = r.stats();
  r.expect_post();
  std::this_thread::sleep_for(30ms);
  const auto during = r.stats();
  EXPECT_EQ(during.idle_waits, before.idle_waits) << "the loop blocked with a post announced";
  EXPECT_GT(during.sleeps, before.sleeps + 5) << "no timed backoff sleeps while the post was due";
  EXPECT_GT(during.iterations, before.iterations + 64);

  std::atomic<void*> handle{nullptr};
  std::thread callback([&] {
    (void)wait_until([&] { return handle.load() != nullptr; });
    r.post(std::coroutine_handle<>::from_address(handle.load()), pool, /*expected=*/true);
  });
  const bool on_pool = async::sync_wait([](std::atomic<void*>& slot, thread_pool& p) -> task<bool> {
    co_await park{&slot};
    co_return p.on_worker_thread();
  }(handle, pool));
  callback.join();
  EXPECT_TRUE(on_pool);
  EXPECT_TRUE(wait_until([&] { return r.stats().idle_waits > during.idle_waits; }))
      << "the loop kept backing off after the announced post came";
  const auto after = r.stats();
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.stats().sleeps, after.sleeps) << "timed sleeps with nothing due";
}

struct posted_flag {
  std::atomic<bool> resumed{false};
  std::thread::id on;
};

// host_signal: a worker thread's result. Attached, its finish wakes the reactor out of a timed
// backoff sleep at once; unattached (a plain completion source) it is seen when the sleep ends.
// The reactor here sleeps 400 ms per step, so the two differ by hundreds of milliseconds.
task<status> signal_wait(reactor& r, async::host_signal& s, async::executor& ex, bool attach) {
  if (attach) {
    async::host_signal::attachment a(s, r);
    co_return co_await async::on(r, s, ex);
  }
  co_return co_await async::on(r, s, ex);
}

double seconds_to_resume(bool attach, bool fail) {
  inline_executor inl;
  reactor r(async::reactor_options{0, 0, std::chrono::microseconds(400'000), std::chrono::microseconds(400'000)});
  async::host_signal sig;
  status got;
  std::atomic<bool> resumed{false};
  std::thread waiter([&] {
    got = async::sync_wait(signal_wait(r, sig, inl, attach));
    resumed = true;
  });
  EXPECT_TRUE(wait_until([&] { return r.stats().sleeps >= 1; }));  // inside a 400 ms sleep
  std::this_thread::sleep_for(20ms);
  const auto t0 = std::chrono::steady_clock::now();
  if (fail) EXPECT_TRUE(sig.fail(status(errc::invalid_argument, "worker failed")));
  else EXPECT_TRUE(sig.complete());
  EXPECT_FALSE(sig.complete()) << "the first finish wins";
  waiter.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(resumed.load());
  if (fail) {
    EXPECT_EQ(got.code(), errc::invalid_argument);
    EXPECT_NE(got.message().find("worker failed"), std::string::npos) << got.message();
  } else {
    EXPECT_TRUE(got.ok()) << got.message();
  }
  return s;
}

TEST(AsyncReactor, HostSignalWakesASleepingReactor) {
  const double attached = seconds_to_resume(true, false);
  const double attached_fail = seconds_to_resume(true, true);
  const double plain = seconds_to_resume(false, false);
  EXPECT_LT(attached, 0.15) << "an attached signal must cut the 400 ms sleep short";
  EXPECT_LT(attached_fail, 0.15);
  EXPECT_GT(plain, 0.15) << "control: without the attachment the completion waits for the sleep to end";
}

// The waiter leaves (its reactor shut down and destroyed) before the worker finishes: the
// attachment detached with the frame, so the late finish touches no reactor.
TEST(AsyncReactor, HostSignalFinishedAfterItsReactorIsGone) {
  inline_executor inl;
  async::host_signal sig;
  status got;
  {
    reactor r;
    std::thread waiter([&] { got = async::sync_wait(signal_wait(r, sig, inl, true)); });
    ASSERT_TRUE(wait_until([&] { return r.stats().waiting == 1; }));
    r.shutdown();
    waiter.join();
  }
  EXPECT_EQ(got.code(), errc::cancelled);
  EXPECT_TRUE(sig.complete());
  EXPECT_TRUE(sig.finished());
}

TEST(AsyncReactor, PostFromForeignThreadResumesOnTheExecutor) {
  thread_pool pool(1);
  reactor r;
  // Raw post(): a coroutine suspends, a foreign thread posts its handle.
  std::atomic<void*> handle{nullptr};
  std::thread foreign([&] {
    (void)wait_until([&] { return handle.load() != nullptr; });
    r.post(std::coroutine_handle<>::from_address(handle.load()), pool);
  });
  bool on_pool = async::sync_wait([](std::atomic<void*>& slot, thread_pool& p) -> task<bool> {
    co_await park{&slot};
    co_return p.on_worker_thread();
  }(handle, pool));
  foreign.join();
  EXPECT_TRUE(on_pool);
  EXPECT_EQ(r.stats().posted, 1u);

  // callback_completion: the callback may come after or before the co_await.
  for (bool early : {false, true}) {
    async::callback_completion cb;
    std::thread cb_thread;
    if (early) cb.complete(status(errc::cuda_error, "launch failed", 1));
    auto t = [](async::callback_completion& cb, reactor& r, thread_pool& p) -> task<std::pair<status, bool>> {
      status s = co_await cb.wait(r, p);
      co_return std::pair<status, bool>(s, p.on_worker_thread());
    };
    if (!early) {
      cb_thread = std::thread([&] {
        std::this_thread::sleep_for(2ms);
        cb.complete();
      });
    }
    auto [s, pooled] = async::sync_wait(t(cb, r, pool));
    if (cb_thread.joinable()) cb_thread.join();
    EXPECT_TRUE(pooled);
    if (early) {
      EXPECT_EQ(s.code(), errc::cuda_error);
      EXPECT_EQ(s.message(), "launch failed");
    } else {
      EXPECT_TRUE(s.ok()) << s.to_string();
    }
  }
}

TEST(AsyncFake, EventStatesAndPollCount) {
  fake_event e;
  EXPECT_EQ(e.poll().state, async::poll_state::pending);
  EXPECT_FALSE(e.finished());
  EXPECT_TRUE(e.complete());
  EXPECT_FALSE(e.complete());
  EXPECT_FALSE(e.fail(status(errc::cancelled, "x")));
  EXPECT_EQ(e.poll().state, async::poll_state::ready);
  EXPECT_EQ(e.poll_count(), 2u);
  e.reset();
  EXPECT_TRUE(e.fail(status(errc::deadlock, "y")));
  auto p = e.poll();
  EXPECT_EQ(p.state, async::poll_state::failed);
  EXPECT_EQ(p.error.code(), errc::deadlock);
  EXPECT_EQ(async::to_status(async::poll_result{async::poll_state::failed, status{}}).code(), errc::invalid_argument);
}

}  // namespace
