// baton/ops/tuner.hpp — what an op's tuning found, kept per (op, shape, device) so that tuning runs
// once: a process-wide cache, optionally persisted in a file that later processes load. Host only.
//
//   auto& cache = baton::ops::TuneCache::global();
//   BATON_TRY(cache.load("tune.cache"));            // a missing file is an empty cache
//   ... create ops with tuning on: a hit skips the timing, a miss tunes and records the result ...
//   BATON_TRY(cache.save("tune.cache"));            // written to a temporary file, then renamed
//
// The ops write their keys and values (ops::Mlp: mlp_tune_key / mlp_options_to_string in mlp.hpp);
// the device part of a key is tune_device_key(), so a file copied to another GPU model or SM count
// simply misses. Keys and values are single-line text without tabs.
#pragma once

#include <algorithm>
#include <cstdio>
#include <limits>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "baton/status.hpp"

namespace baton::ops {

// Which tuning candidate an op keeps: rounds[i] holds candidate i's times (one per interleaved
// round), candidate 0 is the planned one. Each candidate's score is its median round (written to
// `medians`); the planned candidate stays unless another's median is more than `margin` below it,
// and then the fastest such candidate wins (ties: the earlier one). Candidates measured within ~1% of
// each other swap places between rounds and runs, hence the margin. Candidates with no rounds score
// +infinity; with no candidates the answer is 0.
inline size_t tuning_choice(std::vector<std::vector<double>> rounds, std::vector<double>& medians, double margin = 0.02) {
  medians.assign(rounds.size(), std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i].empty()) continue;
    std::sort(rounds[i].begin(), rounds[i].end());
    medians[i] = rounds[i][rounds[i].size() / 2];
  }
  size_t best = 0;
  for (size_t i = 1; i < rounds.size(); ++i)
    if (medians[i] < (1.0 - margin) * medians[0] && medians[i] < medians[best]) best = i;
  return best;
}

// The device part of a tuning key: the GPU's name, compute capability and SM count.
inline std::string tune_device_key(const std::string& name, int cc_major, int cc_minor, int sms) {
  std::string n = name;
  for (char& c : n)
    if (c == '\t' || c == '\n' || c == '\r' || c == ';') c = ' ';
  return n + "/sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + "/" + std::to_string(sms) + "sms";
}

class TuneCache {
 public:
  static constexpr const char* kHeader = "baton-tune-cache v1";

  // The process's cache (what create() consults when tuning).
  static TuneCache& global() {
    static TuneCache c;
    return c;
  }

  [[nodiscard]] std::optional<std::string> find(const std::string& key) const {
    std::lock_guard<std::mutex> lk(m_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  // Records (or replaces) an entry; a key or value with a tab or a line break is refused.
  [[nodiscard]] status put(const std::string& key, const std::string& value) {
    if (key.empty() || !clean_(key) || !clean_(value))
      return status(errc::invalid_argument, "TuneCache::put: keys and values must be non-empty single lines without tabs");
    std::lock_guard<std::mutex> lk(m_);
    entries_[key] = value;
    return {};
  }
  [[nodiscard]] size_t size() const {
    std::lock_guard<std::mutex> lk(m_);
    return entries_.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lk(m_);
    entries_.clear();
  }

  // Merges the entries of `path` (its entries win). A missing file is an empty cache; a file that
  // is not a cache, or a malformed line, is an error naming the file and line, and nothing of that
  // file is merged.
  [[nodiscard]] status load(const std::string& path) {
    std::ifstream f(path);
    if (!f.is_open()) return {};
    std::string line;
    if (!std::getline(f, line) || line != kHeader)
      return status(errc::invalid_argument, "TuneCache::load: " + path + " is not a baton tuning cache (first line must be '" +
                                                kHeader + "')");
    std::map<std::string, std::string> read;
    for (int n = 2; std::getline(f, line); ++n) {
      if (line.empty()) continue;
      const size_t tab = line.find('\t');
      if (tab == std::string::npos || tab == 0 || line.find('\t', tab + 1) != std::string::npos)
        return status(errc::invalid_argument,
                      "TuneCache::load: " + path + ":" + std::to_string(n) + ": expected 'key<TAB>value'");
      read[line.substr(0, tab)] = line.substr(tab + 1);
    }
    std::lock_guard<std::mutex> lk(m_);
    for (auto& [k, v] : read) entries_[k] = v;
    return {};
  }

  // Writes every entry to `path` through a temporary file renamed over it, so a reader never sees
  // half a file.
  [[nodiscard]] status save(const std::string& path) const {
    std::ostringstream out;
    out << kHeader << "\n";
    {
      std::lock_guard<std::mutex> lk(m_);
      for (const auto& [k, v] : entries_) out << k << "\t" << v << "\n";
    }
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      if (!f.is_open()) return status(errc::invalid_argument, "TuneCache::save: cannot write " + tmp);
      f << out.str();
      if (!f.good()) return status(errc::invalid_argument, "TuneCache::save: writing " + tmp + " failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return status(errc::invalid_argument, "TuneCache::save: cannot rename " + tmp + " to " + path);
    return {};
  }

 private:
  static bool clean_(const std::string& s) {
    return s.find('\t') == std::string::npos && s.find('\n') == std::string::npos && s.find('\r') == std::string::npos;
  }
  mutable std::mutex m_;
  std::map<std::string, std::string> entries_;
};

}  // namespace baton::ops
