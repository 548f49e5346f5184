// bench/common/latency.hpp — the await-latency method of baton_bench_async (issue 18), on one clock.
//
// A kernel sets a flag in mapped pinned memory as its last act; a monitor thread, pinned to a core of
// its own, busy-polls that flag and stamps, on the host's steady clock, both its last poll that saw no
// flag (prev) and the poll that saw it (seen). The flag became visible to the host in (prev, seen].
// The waiter under test stamps the moment it runs again (resumed), on the same clock. Latency of a
// sample = resumed - seen: how long after the host could first see the kernel finished the waiter ran.
//
// A sample is kept only when it is well defined:
//  - the monitor polled without a gap around the flag (seen - prev <= max_gap_ns): otherwise the
//    monitor was descheduled and `seen` is late by an unknown amount, which is what made earlier
//    runs' minima negative (down to -18 us);
//  - the waiter did not run before the flag could be seen (resumed >= prev). The kernel writes the flag
//    before it completes, so a waiter that learns of the completion runs after the write is visible:
//    a sample with resumed < prev is a clock or ordering anomaly, counted, never averaged in. A waiter
//    that ran inside the monitor's last poll period (prev <= resumed < seen) was faster than the
//    monitor can resolve: kept as 0.
// Dropped samples are counted per variant and reported beside the statistics (column `dropped`), so a
// method that loses many is visible. Every kept sample is >= 0 by construction.
#pragma once

#include <cstdint>
#include <vector>

namespace baton::bench {

struct LatencyObservation {
  int64_t prev_ns = 0;     // the monitor's last poll that did not see the flag
  int64_t seen_ns = 0;     // the monitor's poll that saw it
  int64_t resumed_ns = 0;  // the waiter running again
};

enum class LatencyVerdict { kept, monitor_gap, before_flag };

struct LatencySample {
  LatencyVerdict verdict = LatencyVerdict::kept;
  double us = 0;  // resumed - seen in microseconds, 0 when within the monitor's last poll (kept only)
};

// The monitor's polls are ~0.1-0.5 us apart while it runs; 2 us means it was not running.
inline constexpr int64_t kMaxMonitorGapNs = 2000;

inline LatencySample classify_latency(const LatencyObservation& o, int64_t max_gap_ns = kMaxMonitorGapNs) {
  if (o.seen_ns - o.prev_ns > max_gap_ns) return {LatencyVerdict::monitor_gap, 0};
  if (o.resumed_ns < o.prev_ns) return {LatencyVerdict::before_flag, 0};
  return {LatencyVerdict::kept, o.resumed_ns < o.seen_ns ? 0.0 : double(o.resumed_ns - o.seen_ns) / 1e3};
}

// The kept samples of one variant and how many were dropped, by reason.
struct LatencySeries {
  std::vector<double> us;
  int monitor_gaps = 0;
  int before_flag = 0;
  void add(const LatencyObservation& o, int64_t max_gap_ns = kMaxMonitorGapNs) {
    const LatencySample s = classify_latency(o, max_gap_ns);
    switch (s.verdict) {
      case LatencyVerdict::kept: us.push_back(s.us); break;
      case LatencyVerdict::monitor_gap: ++monitor_gaps; break;
      case LatencyVerdict::before_flag: ++before_flag; break;
    }
  }
  [[nodiscard]] int dropped() const { return monitor_gaps + before_flag; }
};

}  // namespace baton::bench
