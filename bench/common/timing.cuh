// bench/common/timing.cuh — GPU time of a repetition, measured with CUDA events.
//
// Method (docs/benchmarks.md): untimed warm-up repetitions first, then every timed repetition
// between two events on the bench's stream, each waited for before the next starts (so host
// overhead of one repetition never overlaps the next), divided by the iterations it holds.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <utility>
#include <vector>

#include "baton/async/stream.cuh"
#include "baton/status.hpp"
#include "rounds.hpp"

namespace baton::bench {

// A start and a stop event (baton::async::event, timing enabled) around work on one stream.
class EventTimer {
 public:
  [[nodiscard]] static result<EventTimer> create() {
    auto a = async::event::create(/*timing=*/true);
    if (!a.ok()) return a.error();
    auto b = async::event::create(/*timing=*/true);
    if (!b.ok()) return b.error();
    EventTimer t;
    t.start_ = std::move(a.value());
    t.stop_ = std::move(b.value());
    return result<EventTimer>(std::move(t));
  }
  [[nodiscard]] status start(async::stream_ref s) const { return start_.record(s); }
  // Records the stop event, waits for it, and gives the milliseconds since start().
  [[nodiscard]] result<float> stop(async::stream_ref s) const {
    BATON_TRY(stop_.record(s));
    BATON_TRY(stop_.synchronize());
    float ms = 0;
    BATON_TRY(async::cuda_check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime"));
    return ms;
  }

 private:
  async::event start_, stop_;
};

// `warmup` untimed calls of rep(), a wait for the stream, after_warmup() (a check that ends the
// measurement early, e.g. a chain's error record), then `reps` timed calls; appends each timed
// call's microseconds divided by `iters` (the iterations one call runs) to `us`.
template <class Rep, class AfterWarmup>
[[nodiscard]] status time_repetitions(async::stream_ref stream, int warmup, int reps, int iters, Rep&& rep,
                                      AfterWarmup&& after_warmup, std::vector<double>& us) {
  auto timer = EventTimer::create();
  if (!timer.ok()) return timer.error();
  for (int w = 0; w < warmup; ++w) BATON_TRY(rep());
  BATON_TRY(stream.synchronize());
  BATON_TRY(after_warmup());
  for (int r = 0; r < reps; ++r) {
    BATON_TRY(timer.value().start(stream));
    BATON_TRY(rep());
    auto ms = timer.value().stop(stream);
    if (!ms.ok()) return ms.error();
    us.push_back(1000.0 * double(ms.value()) / iters);
  }
  return {};
}
template <class Rep>
[[nodiscard]] status time_repetitions(async::stream_ref stream, int warmup, int reps, int iters, Rep&& rep,
                                      std::vector<double>& us) {
  return time_repetitions(stream, warmup, reps, iters, rep, [] { return status{}; }, us);
}

// The variants of one shape timed in interleaved rounds (rounds.hpp): `warmup` untimed calls of each
// rep function, a wait for the stream, check(i) for each (a failed one leaves before the rounds), then
// `reps` rounds, each timing one call of every variant still in, between two events and waited for;
// us[i] gets variant i's microseconds per iteration (the call's time over `iters`), failed[i] its
// error. check(i) runs once more after the rounds for every variant that finished them.
[[nodiscard]] inline status time_rounds(async::stream_ref stream, int warmup, int reps, int iters,
                                        const std::vector<std::function<status()>>& rep,
                                        const std::function<status(int)>& check,
                                        std::vector<std::vector<double>>& us, std::vector<status>& failed) {
  auto timer = EventTimer::create();
  if (!timer.ok()) return timer.error();
  const int n = int(rep.size());
  std::vector<status> before(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int w = 0; w < warmup && before[size_t(i)].ok(); ++w) before[size_t(i)] = rep[size_t(i)]();
    if (before[size_t(i)].ok()) before[size_t(i)] = stream.synchronize();
    if (before[size_t(i)].ok()) before[size_t(i)] = check(i);
  }
  run_rounds(
      n, reps,
      [&](int i, double& sample) -> status {
        if (!before[size_t(i)].ok()) return before[size_t(i)];
        BATON_TRY(timer.value().start(stream));
        BATON_TRY(rep[size_t(i)]());
        auto ms = timer.value().stop(stream);
        if (!ms.ok()) return ms.error();
        sample = 1000.0 * double(ms.value()) / iters;
        return {};
      },
      us, failed);
  for (int i = 0; i < n; ++i)
    if (failed[size_t(i)].ok()) failed[size_t(i)] = check(i);
  return {};
}

// A shape's variants timed the way a bench's --order says: in interleaved rounds (time_rounds), or one
// variant after another, each one's warm-up and repetitions together (time_repetitions, check(i) after
// its warm-up and again after its repetitions). Either way us[i] and failed[i] are variant i's samples
// and error.
[[nodiscard]] inline status time_in_order(async::stream_ref stream, bool interleaved, int warmup, int reps, int iters,
                                          const std::vector<std::function<status()>>& rep,
                                          const std::function<status(int)>& check,
                                          std::vector<std::vector<double>>& us, std::vector<status>& failed) {
  if (interleaved) return time_rounds(stream, warmup, reps, iters, rep, check, us, failed);
  const size_t n = rep.size();
  us.assign(n, {});
  failed.assign(n, status{});
  for (size_t i = 0; i < n; ++i) {
    failed[i] = time_repetitions(stream, warmup, reps, iters, rep[i], [&] { return check(int(i)); }, us[i]);
    if (failed[i].ok()) failed[i] = check(int(i));
  }
  return {};
}

}  // namespace baton::bench
