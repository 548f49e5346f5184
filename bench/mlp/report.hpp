// bench/mlp/report.hpp — what baton_bench_mlp writes beside the common result rows: the breakdown
// (DIR/<workload>-breakdown.csv: chain = GEMM1 + GEMM2 + rest) and the per-shape summary table.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/status.hpp"
#include "bench_util.hpp"

namespace baton_bench::mlp {

using namespace baton;

// One row of DIR/<workload>-breakdown.csv: a chain's pass against its two GEMMs timed alone.
struct BreakdownRow {
  int m = 0;
  std::string variant, plan;
  double chain_us = 0, gemm1_us = 0, gemm2_us = 0;
  double gemm1_floor_us = 0, gemm2_floor_us = 0;  // max(FLOPs / 790 TFLOP/s, bytes / 4.3 TB/s) per GEMM
  double gemm1_bytes = 0, gemm2_bytes = 0;        // weights + activations read + output written
};

[[nodiscard]] inline status write_breakdown_csv(const std::string& path, const std::string& workload,
                                         const std::vector<BreakdownRow>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return status(errc::invalid_argument, "cannot write '" + path + "'");
  std::fprintf(f,
               "workload,m,variant,chain_us,gemm1_us,gemm2_us,rest_us,gemm1_floor_us,gemm2_floor_us,gemm1_tb_per_s,"
               "gemm2_tb_per_s,plan\n");
  for (const auto& r : rows)
    std::fprintf(f, "%s,%d,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%s\n", workload.c_str(), r.m, r.variant.c_str(),
                 r.chain_us, r.gemm1_us, r.gemm2_us, r.chain_us - r.gemm1_us - r.gemm2_us, r.gemm1_floor_us,
                 r.gemm2_floor_us, r.gemm1_bytes / (r.gemm1_us * 1e6), r.gemm2_bytes / (r.gemm2_us * 1e6),
                 r.plan.c_str());
  if (std::fclose(f) != 0) return status(errc::invalid_argument, "writing '" + path + "' failed");
  return {};
}

// One line per shape: every variant's median and baton-auto against the best baseline and the floor.
inline void print_summary(const std::vector<bench::Row>& rows, const std::vector<std::string>& variants) {
  std::vector<std::string> shapes;
  for (const auto& r : rows)
    if (std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end()) shapes.push_back(r.shape);
  std::printf("\nmedian us per MLP iteration (* = failed check)\n%-26s", "shape");
  for (const auto& v : variants) std::printf(" %17s", v.c_str());
  std::printf(" %10s %10s %10s\n", "best_base", "auto/best", "auto/floor");
  for (const auto& s : shapes) {
    std::printf("%-26s", s.c_str());
    double best = 0, autom = 0, floor_us = 0;
    for (const auto& v : variants) {
      const bench::Row* found = nullptr;
      for (const auto& r : rows)
        if (r.shape == s && r.variant == v) found = &r;
      if (!found) {
        std::printf(" %17s", "-");
        continue;
      }
      std::printf(" %16.2f%s", found->median_us, found->correct ? " " : "*");
      best = found->best_baseline_us;
      floor_us = found->floor_us;
      if (v == "baton-auto" && found->correct) autom = found->median_us;
    }
    std::printf(" %10.2f %10.3f %10.2f\n", best, best > 0 && autom > 0 ? autom / best : 0.0,
                floor_us > 0 && autom > 0 ? autom / floor_us : 0.0);
  }
}

}  // namespace baton_bench::mlp
