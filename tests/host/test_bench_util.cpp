// The result schema every benchmark writes (bench/bench_util.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../../bench/bench_util.hpp"

using namespace baton::bench;

namespace {
Row row(std::string wl, std::string shape, std::string variant, double us, bool baseline, bool correct = true) {
  Row r;
  r.workload = std::move(wl);
  r.shape = std::move(shape);
  r.variant = std::move(variant);
  r.median_us = r.min_us = r.max_us = us;
  r.reps = 1;
  r.floor_us = 10;
  r.baseline = baseline;
  r.correct = correct;
  return r;
}

TEST(BenchUtil, BestBaselineIsPerWorkloadAndShapeAndIgnoresIncorrectRows) {
  std::vector<Row> rows{row("pipeline", "n=1", "sync", 40, true), row("pipeline", "n=1", "fast-but-wrong", 5, true, false),
                        row("pipeline", "n=1", "baton", 20, false), row("pipeline-pageable", "n=1", "sync", 100, true),
                        row("pipeline-pageable", "n=1", "baton", 50, false)};
  finalize(rows);
  EXPECT_EQ(rows[2].best_baseline_us, 40);   // not the incorrect 5
  EXPECT_EQ(rows[4].best_baseline_us, 100);  // not pipeline's 40: same shape, other workload
}

TEST(BenchUtil, CsvHasTheCommonColumnsThenUnifiedExtras) {
  std::vector<Row> rows{row("w", "s=1", "a", 1, true), row("w", "s=1", "b", 2, false)};
  rows[0].extra = {{"x", "1"}};
  rows[1].extra = {{"y", "2"}};
  Env env;
  env.gpu = "G";
  env.commit = "c0ffee";
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(publish(rows, env, dir, "bench_util_test"));
  std::ifstream f(dir + "/bench_util_test.csv");
  std::string header, r0, r1;
  std::getline(f, header);
  std::getline(f, r0);
  std::getline(f, r1);
  EXPECT_EQ(header,
            "workload,shape,variant,median_us,min_us,max_us,reps,floor_us,best_baseline_us,ratio_to_floor,"
            "ratio_to_best_baseline,correct,gpu,driver,cuda,commit,date,x,y");
  EXPECT_NE(r1.find(",2.000,1,G,"), std::string::npos) << r1;  // ratio_to_best_baseline 2, correct 1
  EXPECT_EQ(r0.substr(r0.size() - 3), ",1,");                  // x=1, y empty
  EXPECT_EQ(r1.substr(r1.size() - 2), ",2");
  rows[1].correct = false;
  EXPECT_FALSE(publish(rows, env, dir, "bench_util_test"));
}

TEST(BenchUtil, StatsMedianMinMax) {
  auto s = stats({5, 1, 3, 2, 4});
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(stats({1, 2}).median, 1.5);
}
}  // namespace
