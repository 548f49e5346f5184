// bench/common/timing.cuh — GPU time of a repetition, measured with CUDA events.
//
// Method (docs/benchmarks.md): untimed warm-up repetitions first, then every timed repetition
// between two events on the bench's stream, each waited for before the next starts (so host
// overhead of one repetition never overlaps the next), divided by the iterations it holds.
#pragma once

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "baton/async/stream.cuh"
#include "baton/status.hpp"

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

}  // namespace baton::bench
