// Host tests for structured concurrency in the async layer: the fail-fast when_all(stop, ...) and
// waits cancelled by a stop token while registered with the reactor (on(r, src, ex, token), the
// mechanism under done(ctx, s, token) / ready(ctx, e, token)), on fake events. Every test is
// bounded in time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
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
using async::cancel_source;
using async::cancel_token;
using async::fake_event;
using async::inline_executor;
using async::reactor;
using async::task;
using async::thread_pool;
using baton::errc;
using baton::result;
using baton::status;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

template <class F>
bool wait_until(F pred, std::chrono::milliseconds bound = 3000ms) {
  auto end = clock_type::now() + bound;
  while (!pred()) {
    if (clock_type::now() > end) return pred();
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::unique_ptr<fake_event[]> make_events(std::size_t n) { return std::unique_ptr<fake_event[]>(new fake_event[n]); }

// A child: waits on e with the token, counts its resumptions and its end.
task<status> wait_on(reactor& r, fake_event& e, async::executor& ex, cancel_token tok, std::atomic<int>& resumed,
                     std::atomic<int>& finished) {
  status s = co_await async::on(r, e, ex, std::move(tok));
  resumed.fetch_add(1);
  finished.fetch_add(1);
  co_return s;
}
task<result<int>> value_on(reactor& r, fake_event& e, async::executor& ex, cancel_token tok, int v,
                           std::atomic<int>& finished) {
  status s = co_await async::on(r, e, ex, std::move(tok));
  finished.fetch_add(1);
  if (!s.ok()) co_return s;
  co_return v;
}
task<int> throws_after(reactor& r, fake_event& e, async::executor& ex, std::atomic<int>& finished) {
  (void)co_await async::on(r, e, ex);
  finished.fetch_add(1);
  throw std::logic_error("child body threw");
}

// ---- (a) fail-fast when_all -----------------------------------------------------------------------

TEST(AsyncWhenAllStop, FailingChildStopsSiblingBlockedOnANeverCompletingEvent) {
  thread_pool pool(2);
  reactor r;
  fake_event never, failing, fine;
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 3; });
    fine.complete();
    (void)wait_until([&] { return r.stats().waiting == 2; });
    (void)failing.fail(status(errc::cuda_error, "kernel 'gemm' faulted", 700));
  });
  const auto t0 = clock_type::now();
  auto res = async::sync_wait(async::when_all(stop, wait_on(r, never, pool, stop.get_token(), resumed, finished),
                                              value_on(r, failing, pool, stop.get_token(), 1, finished),
                                              value_on(r, fine, pool, stop.get_token(), 2, finished)));
  const auto elapsed = clock_type::now() - t0;
  completer.join();
  EXPECT_EQ(finished.load(), 3);  // structured: every child ended before when_all returned
  EXPECT_EQ(resumed.load(), 1);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), errc::cuda_error);  // the first error, not the sibling's cancellation
  EXPECT_EQ(res.error().cuda_code(), 700);
  EXPECT_EQ(res.error().message(), "when_all child 1 of 3: kernel 'gemm' faulted");
  EXPECT_TRUE(stop.stop_requested());
  EXPECT_FALSE(never.finished());  // the work itself was not touched
  EXPECT_LT(elapsed, 2s);
  EXPECT_EQ(r.stats().waiting, 0u);
  EXPECT_EQ(r.stats().stopped, 1u);
  const auto polls = never.poll_count();
  EXPECT_TRUE(never.complete());  // a late completion: nobody waits on it any more
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(never.poll_count(), polls);
  EXPECT_EQ(resumed.load(), 1);
}

TEST(AsyncWhenAllStop, VectorFormFirstFailureInTimeWinsOverLaterOnesAndCancellations) {
  thread_pool pool(3);
  reactor r;
  constexpr int n = 6;
  auto evs = make_events(n);
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::vector<task<status>> ts;
  for (int i = 0; i < n; ++i) ts.push_back(wait_on(r, evs[i], pool, stop.get_token(), resumed, finished));
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == std::size_t(n); });
    evs[0].complete();
    (void)evs[4].fail(status(errc::watchdog_timeout, "stage 4 spun too long"));
    (void)wait_until([&] { return stop.stop_requested(); });
    (void)evs[2].fail(status(errc::invalid_policy, "a later failure"));  // may or may not be seen
  });
  auto res = async::sync_wait(async::when_all(stop, std::move(ts)));
  completer.join();
  EXPECT_EQ(finished.load(), n);
  EXPECT_EQ(resumed.load(), n);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), errc::watchdog_timeout);
  EXPECT_EQ(res.error().message(), "when_all child 4 of 6: stage 4 spun too long");
  for (int i : {1, 3, 5}) EXPECT_FALSE(evs[i].finished());
  EXPECT_EQ(r.stats().waiting, 0u);
}

TEST(AsyncWhenAllStop, ThrowingChildStopsSiblingsAndItsExceptionIsRethrownUnchanged) {
  thread_pool pool(2);
  reactor r;
  fake_event never, trigger;
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 2; });
    trigger.complete();
  });
  EXPECT_THROW((void)async::sync_wait(async::when_all(
                   stop, throws_after(r, trigger, pool, finished),
                   value_on(r, never, pool, stop.get_token(), 3, finished))),
               std::logic_error);
  completer.join();
  EXPECT_EQ(finished.load(), 2);
  EXPECT_TRUE(stop.stop_requested());
  EXPECT_FALSE(never.finished());
  EXPECT_EQ(r.stats().waiting, 0u);
}

TEST(AsyncWhenAllStop, ChildFailingAtStartCancelsSiblingsBeforeTheyRegister) {
  inline_executor inl;
  reactor r;
  fake_event pre, never;
  (void)pre.fail(status(errc::resource_exhausted, "no pinned buffers"));
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::vector<task<status>> ts;
  ts.push_back(wait_on(r, pre, inl, stop.get_token(), resumed, finished));
  ts.push_back(wait_on(r, never, inl, stop.get_token(), resumed, finished));
  auto res = async::sync_wait(async::when_all(stop, std::move(ts)));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), errc::resource_exhausted);
  EXPECT_EQ(res.error().message(), "when_all child 0 of 2: no pinned buffers");
  EXPECT_EQ(finished.load(), 2);
  EXPECT_EQ(never.poll_count(), 0u);  // stopped before its co_await: never registered nor polled
}

TEST(AsyncWhenAllStop, StopFromOutsideCancelsEveryChild) {
  thread_pool pool(2);
  reactor r;
  auto evs = make_events(3);
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::vector<task<status>> ts;
  for (int i = 0; i < 3; ++i) ts.push_back(wait_on(r, evs[i], pool, stop.get_token(), resumed, finished));
  std::thread stopper([&] {
    (void)wait_until([&] { return r.stats().waiting == 3; });
    stop.request_stop();
  });
  auto res = async::sync_wait(async::when_all(stop, std::move(ts)));
  stopper.join();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code(), errc::cancelled);
  EXPECT_NE(res.error().message().find("when_all child "), std::string::npos) << res.error().message();
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(r.stats().stopped, 3u);
}

// ---- (b) a cancelled wait returns promptly; the source is left alone --------------------------------

TEST(AsyncCancelWait, StopDuringAWaitResumesPromptlyEvenFromALongSleep) {
  // The reactor sleeps 2 s between polls: only wake() can make the cancellation prompt.
  async::reactor_options o;
  o.spin_iterations = 0;
  o.yield_iterations = 0;
  o.min_sleep = 2000ms;
  o.max_sleep = 2000ms;
  for (bool on_pool : {false, true}) {
    thread_pool pool(1);
    inline_executor inl;
    reactor r(o);
    async::executor& ex = on_pool ? static_cast<async::executor&>(pool) : inl;
    fake_event e;
    cancel_source stop;
    std::atomic<int> resumed{0}, finished{0};
    clock_type::time_point requested{};
    std::thread stopper([&] {
      (void)wait_until([&] { return r.stats().waiting == 1; });
      std::this_thread::sleep_for(50ms);  // the reactor is in its first 2 s sleep by now
      requested = clock_type::now();
      stop.request_stop();
    });
    status s = async::sync_wait(wait_on(r, e, ex, stop.get_token(), resumed, finished));
    const auto latency = clock_type::now() - requested;
    stopper.join();
    EXPECT_EQ(s.code(), errc::cancelled) << s.to_string();
    EXPECT_EQ(s.message(), "wait cancelled by its stop token");
    EXPECT_LT(latency, 500ms);
    EXPECT_FALSE(e.finished());
    EXPECT_EQ(r.stats().waiting, 0u);
    EXPECT_EQ(r.stats().stopped, 1u);
    EXPECT_EQ(r.stats().completions, 0u);
    const auto polls = e.poll_count();
    EXPECT_TRUE(e.complete());  // later completion: no resume, no poll, no crash
    std::this_thread::sleep_for(10ms);
    EXPECT_EQ(e.poll_count(), polls);
    EXPECT_EQ(resumed.load(), 1);
    EXPECT_EQ(r.stats().completions, 0u);
  }
}

TEST(AsyncCancelWait, StopAfterTheWaitEndedAndAfterTheReactorIsGoneIsHarmless) {
  thread_pool pool(1);
  fake_event a, b;
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  {
    reactor r;
    std::thread completer([&] {
      (void)wait_until([&] { return r.stats().waiting == 1; });
      a.complete();
    });
    EXPECT_TRUE(async::sync_wait(wait_on(r, a, pool, stop.get_token(), resumed, finished)).ok());
    completer.join();
    // Shut down while an armed wait is registered: the shutdown cancels it as before.
    std::thread shut([&] {
      (void)wait_until([&] { return r.stats().waiting == 1; });
      r.shutdown();
    });
    status s = async::sync_wait(wait_on(r, b, pool, stop.get_token(), resumed, finished));
    shut.join();
    EXPECT_EQ(s.code(), errc::cancelled);
    EXPECT_EQ(s.message(), "reactor shut down");
  }
  stop.request_stop();  // no armed wait is left: nothing is called back
  EXPECT_EQ(resumed.load(), 2);
}

// ---- (c) stop racing completion: exactly one resumption ---------------------------------------------

TEST(AsyncCancelWait, StopRacingCompletionResumesExactlyOnce) {
  thread_pool pool(2);
  inline_executor inl;
  reactor r;
  constexpr int rounds = 150, k = 64;
  int ok = 0, cancelled = 0;
  for (int round = 0; round < rounds; ++round) {
    auto evs = make_events(k);
    std::vector<cancel_source> stops(k);
    auto resumed = std::unique_ptr<std::atomic<int>[]>(new std::atomic<int>[k]);
    for (int i = 0; i < k; ++i) resumed[i] = 0;
    std::atomic<int> finished{0};
    std::vector<task<status>> ts;
    for (int i = 0; i < k; ++i) {
      async::executor& ex = (i + round) % 2 ? static_cast<async::executor&>(pool) : inl;
      ts.push_back(wait_on(r, evs[i], ex, stops[size_t(i)].get_token(), resumed[i], finished));
    }
    // Even rounds: race once every wait is registered. Odd rounds: race the registration too.
    const bool after_registration = round % 2 == 0;
    std::atomic<int> go{0};
    auto gate = [&] {
      go.fetch_add(1);
      while (go.load() < 2) std::this_thread::yield();
    };
    std::thread completer([&] {
      if (after_registration) (void)wait_until([&] { return r.stats().waiting == std::size_t(k); });
      gate();
      for (int i = 0; i < k; ++i) evs[i].complete();
    });
    std::thread stopper([&] {
      if (after_registration) (void)wait_until([&] { return r.stats().waiting == std::size_t(k); });
      gate();
      for (int i = 0; i < k; ++i) stops[size_t(i)].request_stop();
    });
    std::vector<status> out = async::sync_wait(async::when_all(std::move(ts)));
    completer.join();
    stopper.join();
    ASSERT_EQ(out.size(), std::size_t(k));
    EXPECT_EQ(finished.load(), k);
    for (int i = 0; i < k; ++i) {
      ASSERT_EQ(resumed[i].load(), 1) << "round " << round << " child " << i;
      if (out[size_t(i)].ok()) {
        ++ok;
      } else {
        ASSERT_EQ(out[size_t(i)].code(), errc::cancelled) << out[size_t(i)].to_string();
        ++cancelled;
      }
    }
    ASSERT_EQ(r.stats().waiting, 0u);
  }
  EXPECT_EQ(ok + cancelled, rounds * k);
  // Both outcomes should occur over this many races; report rather than fail on a skewed machine.
  std::printf("stop/complete race: %d completed, %d cancelled, %llu stopped while registered\n", ok, cancelled,
              static_cast<unsigned long long>(r.stats().stopped));
}

// ---- (d) nothing changes while no stop is requested ---------------------------------------------------

TEST(AsyncCancelWait, UnstoppedTokenWaitsAsBefore) {
  thread_pool pool(2);
  reactor r;
  fake_event a, b, c;
  cancel_source stop;
  std::atomic<int> resumed{0}, finished{0};
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == 3; });
    a.complete();
    (void)b.fail(status(errc::cuda_error, "faulted", 700));
    c.complete();
  });
  auto [sa, sb, sc] = async::sync_wait(
      async::when_all(wait_on(r, a, pool, stop.get_token(), resumed, finished),
                      wait_on(r, b, pool, stop.get_token(), resumed, finished),
                      wait_on(r, c, pool, cancel_token{}, resumed, finished)));  // no stop state: unarmed
  completer.join();
  EXPECT_TRUE(sa.ok());
  EXPECT_EQ(sb.code(), errc::cuda_error);  // plain when_all: failures are values, nothing stopped
  EXPECT_EQ(sb.message(), "faulted");
  EXPECT_TRUE(sc.ok());
  EXPECT_FALSE(stop.stop_requested());
  EXPECT_EQ(r.stats().stopped, 0u);
  EXPECT_EQ(r.stats().completions, 3u);
}

TEST(AsyncWhenAllStop, AllSucceedGivesEveryValueInOrderAndNeverStops) {
  thread_pool pool(2);
  reactor r;
  constexpr int n = 16;
  auto evs = make_events(n);
  cancel_source stop;
  std::atomic<int> finished{0};
  std::vector<task<result<int>>> ts;
  for (int i = 0; i < n; ++i) ts.push_back(value_on(r, evs[i], pool, stop.get_token(), i * 10, finished));
  std::thread completer([&] {
    (void)wait_until([&] { return r.stats().waiting == std::size_t(n); });
    for (int i = n - 1; i >= 0; --i) evs[i].complete();
  });
  auto res = async::sync_wait(async::when_all(stop, std::move(ts)));
  completer.join();
  ASSERT_TRUE(res.ok()) << res.error().to_string();
  ASSERT_EQ(res->size(), std::size_t(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE((*res)[size_t(i)].ok());
    EXPECT_EQ(*(*res)[size_t(i)], i * 10);
  }
  EXPECT_FALSE(stop.stop_requested());

  // Variadic, mixed types (void and plain values count as failures only when they throw), and empty.
  auto nothing = []() -> task<void> { co_return; };
  auto seven = []() -> task<int> { co_return 7; };
  auto okay = []() -> task<status> { co_return status{}; };
  auto mixed = async::sync_wait(async::when_all(stop, nothing(), seven(), okay()));
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(std::get<1>(*mixed), 7);
  EXPECT_TRUE(std::get<2>(*mixed).ok());
  EXPECT_TRUE(async::sync_wait(async::when_all(stop)).ok());
  EXPECT_TRUE(async::sync_wait(async::when_all(stop, std::vector<task<int>>{})).ok());
  EXPECT_FALSE(stop.stop_requested());
}

}  // namespace
