// Interleaved rounds (bench/common/rounds.hpp): every variant gets every repetition, round r starts at
// variant r mod n, a failing variant leaves alone, and drift over the run hits every variant alike.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../../bench/common/rounds.hpp"
#include "../../bench/common/stats.hpp"

using baton::errc;
using baton::status;
using baton::bench::run_rounds;
using baton::bench::stats;

TEST(BenchRounds, EveryVariantOneRepetitionPerRoundEachRoundStartingAtTheNext) {
  std::vector<int> order;
  std::vector<std::vector<double>> us;
  std::vector<status> failed;
  run_rounds(3, 4, [&](int i, double& s) { order.push_back(i); s = double(order.size()); return status{}; }, us, failed);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(us[size_t(i)].size(), 4u);
    EXPECT_TRUE(failed[size_t(i)].ok());
  }
  EXPECT_EQ(us[0], (std::vector<double>{1, 6, 8, 10}));  // the samples in the order taken
}

TEST(BenchRounds, AFailingVariantLeavesAloneWithItsError) {
  std::vector<std::vector<double>> us;
  std::vector<status> failed;
  int calls1 = 0;
  run_rounds(
      3, 5,
      [&](int i, double& s) {
        s = 1;
        if (i == 1 && ++calls1 == 2) return status(errc::cuda_error, "variant 1 broke");
        return status{};
      },
      us, failed);
  EXPECT_EQ(calls1, 2);  // not timed again after its failure
  EXPECT_EQ(us[1].size(), 1u);
  EXPECT_FALSE(failed[1].ok());
  EXPECT_NE(failed[1].to_string().find("variant 1 broke"), std::string::npos);
  EXPECT_EQ(us[0].size(), 5u);
  EXPECT_EQ(us[2].size(), 5u);
  EXPECT_TRUE(failed[0].ok() && failed[2].ok());
}

// Two equal variants on a card that slows down steadily (each repetition 1% slower than the one
// before): timed one after the other, the second's median is ~30% above the first's; in rounds the
// medians differ by less than one round's drift.
TEST(BenchRounds, DriftHitsEveryVariantAlike) {
  const int n = 2, reps = 31;
  int t = 0;
  auto drifting = [&](int, double& s) {
    s = 100.0 * (1.0 + 0.01 * t++);
    return status{};
  };
  std::vector<std::vector<double>> us;
  std::vector<status> failed;
  run_rounds(n, reps, drifting, us, failed);
  const double a = stats(us[0]).median, b = stats(us[1]).median;
  EXPECT_LT(std::abs(a / b - 1.0), 0.02) << a << " vs " << b;

  // The same drift, each variant's repetitions together (what --order in-turn does).
  t = 0;
  std::vector<double> first, second;
  for (int r = 0; r < reps; ++r) drifting(0, first.emplace_back());
  for (int r = 0; r < reps; ++r) drifting(1, second.emplace_back());
  EXPECT_GT(stats(second).median / stats(first).median, 1.25);
}
