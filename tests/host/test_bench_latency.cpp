// The await-latency method's arithmetic (bench/common/latency.hpp, issue 18): which samples are kept,
// their value, and the drop counts.
#include <gtest/gtest.h>

#include "../../bench/common/latency.hpp"

namespace {

using baton::bench::classify_latency;
using baton::bench::LatencyObservation;
using baton::bench::LatencySeries;
using baton::bench::LatencyVerdict;

TEST(BenchLatency, KeptSampleIsResumedMinusSeen) {
  const auto s = classify_latency(LatencyObservation{1000, 1300, 3800});
  EXPECT_EQ(s.verdict, LatencyVerdict::kept);
  EXPECT_DOUBLE_EQ(s.us, 2.5);
}

TEST(BenchLatency, MonitorGapIsDropped) {
  // The monitor did not poll for 5 us around the flag: `seen` is late by up to 5 us.
  EXPECT_EQ(classify_latency(LatencyObservation{1000, 6000, 7000}).verdict, LatencyVerdict::monitor_gap);
  // Exactly at the limit still counts as gapless.
  EXPECT_EQ(classify_latency(LatencyObservation{1000, 3000, 7000}, 2000).verdict, LatencyVerdict::kept);
}

TEST(BenchLatency, WaiterInsideTheLastPollPeriodIsZeroNeverNegative) {
  const auto s = classify_latency(LatencyObservation{1000, 1400, 1200});
  EXPECT_EQ(s.verdict, LatencyVerdict::kept);
  EXPECT_DOUBLE_EQ(s.us, 0.0);
}

TEST(BenchLatency, WaiterBeforeTheFlagCouldBeSeenIsDropped) {
  EXPECT_EQ(classify_latency(LatencyObservation{1000, 1400, 900}).verdict, LatencyVerdict::before_flag);
}

TEST(BenchLatency, SeriesKeepsOnlyNonNegativeSamplesAndCountsTheRest) {
  LatencySeries s;
  s.add({0, 300, 2300});      // kept: 2 us
  s.add({0, 300, 100});       // kept: 0 (within the last poll)
  s.add({0, 9000, 9500});     // monitor gap
  s.add({5000, 5200, 4000});  // before the flag
  s.add({10, 200, 12200});    // kept: 12 us
  ASSERT_EQ(s.us.size(), 3u);
  EXPECT_DOUBLE_EQ(s.us[0], 2.0);
  EXPECT_DOUBLE_EQ(s.us[1], 0.0);
  EXPECT_DOUBLE_EQ(s.us[2], 12.0);
  EXPECT_EQ(s.monitor_gaps, 1);
  EXPECT_EQ(s.before_flag, 1);
  EXPECT_EQ(s.dropped(), 2);
  for (double v : s.us) EXPECT_GE(v, 0.0);
}

}  // namespace
