// bench/common/report.hpp — the result schema every baton benchmark writes (docs/benchmarks.md):
// workload,shape,variant,median_us,min_us,max_us,reps,floor_us,best_baseline_us,ratio_to_floor,
// ratio_to_best_baseline,correct,gpu,driver,cuda,commit,date[,extra columns]
// as DIR/NAME.csv, DIR/NAME.json and a table on stdout. Scripts parse all three (scripts/*.py):
// columns, their order and number formats are part of the interface.
#pragma once

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "env.hpp"
#include "stats.hpp"

namespace baton::bench {

struct Row {
  std::string workload, shape, variant;
  double median_us = 0, min_us = 0, max_us = 0;
  int reps = 0;
  double floor_us = 0;
  bool baseline = false;  // counts toward best_baseline_us
  bool correct = false;
  std::vector<std::pair<std::string, std::string>> extra;  // more columns, same order in every row
  double best_baseline_us = 0;
};

// The ceilings of BENCHMARKS.md (H200): cuBLAS bf16 dense, and device-to-device copy (read + write).
inline constexpr double kPeakFlops = 790e12;
inline constexpr double kPeakBytes = 4.3e12;

// A workload's floor_us: its FLOPs or its minimal bytes at those ceilings, whichever takes longer.
inline double floor_us_of(double flops, double bytes) { return std::max(flops / kPeakFlops, bytes / kPeakBytes) * 1e6; }

// A row of one variant from its timed repetitions `us` (median, min and max of them; reps = their
// count); extra columns are the caller's.
inline Row timed_row(std::string workload, std::string shape, std::string variant, const std::vector<double>& us,
                     double floor_us, bool baseline, bool correct) {
  const Stats st = stats(us);
  Row r;
  r.workload = std::move(workload);
  r.shape = std::move(shape);
  r.variant = std::move(variant);
  r.median_us = st.median;
  r.min_us = st.min;
  r.max_us = st.max;
  r.reps = int(us.size());
  r.floor_us = floor_us;
  r.baseline = baseline;
  r.correct = correct;
  return r;
}

// Fills best_baseline_us per (workload, shape).
inline void finalize(std::vector<Row>& rows) {
  std::map<std::string, double> best;
  auto key = [](const Row& r) { return r.workload + "|" + r.shape; };
  for (const auto& r : rows)
    if (r.baseline && r.correct) {
      auto it = best.find(key(r));
      if (it == best.end() || r.median_us < it->second) best[key(r)] = r.median_us;
    }
  for (auto& r : rows) r.best_baseline_us = best.count(key(r)) ? best[key(r)] : 0;
}

inline std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

inline void write_csv(const std::string& path, const std::vector<Row>& rows, const Env& env) {
  std::ofstream f(path);
  f << "workload,shape,variant,median_us,min_us,max_us,reps,floor_us,best_baseline_us,ratio_to_floor,"
       "ratio_to_best_baseline,correct,gpu,driver,cuda,commit,date";
  if (!rows.empty())
    for (const auto& [k, v] : rows[0].extra) f << "," << k;
  f << "\n";
  for (const auto& r : rows) {
    f << r.workload << "," << r.shape << "," << r.variant << "," << fmt(r.median_us) << "," << fmt(r.min_us) << ","
      << fmt(r.max_us) << "," << r.reps << "," << fmt(r.floor_us) << "," << fmt(r.best_baseline_us) << ","
      << fmt(r.floor_us > 0 ? r.median_us / r.floor_us : 0) << ","
      << fmt(r.best_baseline_us > 0 ? r.median_us / r.best_baseline_us : 0) << "," << (r.correct ? 1 : 0) << ","
      << env.gpu << "," << env.driver << "," << env.cuda << "," << env.commit << "," << env.date;
    for (const auto& [k, v] : r.extra) f << "," << v;
    f << "\n";
  }
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

inline void write_json(const std::string& path, const std::vector<Row>& rows, const Env& env) {
  std::ofstream f(path);
  f << "{\n  \"env\": {\"gpu\": \"" << json_escape(env.gpu) << "\", \"driver\": \"" << env.driver << "\", \"cuda\": \""
    << env.cuda << "\", \"commit\": \"" << env.commit << "\", \"date\": \"" << env.date << "\", \"sm_clock_mhz\": \""
    << env.sm_clock_mhz << "\"},\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    f << "    {\"workload\": \"" << r.workload << "\", \"shape\": \"" << r.shape << "\", \"variant\": \"" << r.variant
      << "\", \"median_us\": " << fmt(r.median_us) << ", \"min_us\": " << fmt(r.min_us) << ", \"max_us\": "
      << fmt(r.max_us) << ", \"reps\": " << r.reps << ", \"floor_us\": " << fmt(r.floor_us)
      << ", \"best_baseline_us\": " << fmt(r.best_baseline_us)
      << ", \"ratio_to_floor\": " << fmt(r.floor_us > 0 ? r.median_us / r.floor_us : 0)
      << ", \"ratio_to_best_baseline\": " << fmt(r.best_baseline_us > 0 ? r.median_us / r.best_baseline_us : 0)
      << ", \"correct\": " << (r.correct ? 1 : 0) << ", \"gpu\": \"" << json_escape(env.gpu) << "\", \"driver\": \""
      << env.driver << "\", \"cuda\": \"" << env.cuda << "\", \"commit\": \"" << env.commit << "\", \"date\": \""
      << env.date << "\"";
    for (const auto& [k, v] : r.extra) f << ", \"" << k << "\": \"" << json_escape(v) << "\"";
    f << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

inline void print_table(const std::vector<Row>& rows, const Env& env) {
  std::printf("\n%s | driver %s | CUDA %s | SM clock %s MHz | commit %s | %s\n", env.gpu.c_str(), env.driver.c_str(),
              env.cuda.c_str(), env.sm_clock_mhz.c_str(), env.commit.c_str(), env.date.c_str());
  std::printf("%-12s %-44s %-20s %10s %10s %10s %8s %8s %4s", "workload", "shape", "variant", "median_us", "min_us",
              "max_us", "x_best", "x_floor", "ok");
  if (!rows.empty())
    for (const auto& [k, v] : rows[0].extra) std::printf(" %s", k.c_str());
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("%-12s %-44s %-20s %10.2f %10.2f %10.2f %8.3f %8.2f %4d", r.workload.c_str(), r.shape.c_str(),
                r.variant.c_str(), r.median_us, r.min_us, r.max_us,
                r.best_baseline_us > 0 ? r.median_us / r.best_baseline_us : 0.0,
                r.floor_us > 0 ? r.median_us / r.floor_us : 0.0, r.correct ? 1 : 0);
    for (const auto& [k, v] : r.extra) std::printf(" %s", v.c_str());
    std::printf("\n");
  }
}

// Gives every row the same extra columns, in first-seen order (a CSV has one header).
inline void unify_extra_columns(std::vector<Row>& rows) {
  std::vector<std::string> keys;
  for (auto& r : rows)
    for (auto& kv : r.extra)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  for (auto& r : rows) {
    std::vector<std::pair<std::string, std::string>> e;
    for (auto& k : keys) {
      std::string v;
      for (auto& kv : r.extra)
        if (kv.first == k) v = kv.second;
      e.push_back({k, v});
    }
    r.extra = e;
  }
}

// Fills best_baseline_us, prints the table, writes DIR/NAME.csv and DIR/NAME.json.
// Returns true when every row was correct.
inline bool publish(std::vector<Row>& rows, const Env& env, const std::string& dir, const std::string& name) {
  unify_extra_columns(rows);
  finalize(rows);
  print_table(rows, env);
  write_csv(dir + "/" + name + ".csv", rows, env);
  write_json(dir + "/" + name + ".json", rows, env);
  bool ok = true;
  for (const auto& r : rows) ok = ok && r.correct;
  std::printf("\nwrote %s/%s.csv and .json%s\n", dir.c_str(), name.c_str(), ok ? "" : "  (SOME ROWS INCORRECT)");
  return ok;
}

}  // namespace baton::bench
