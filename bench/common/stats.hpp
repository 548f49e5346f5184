// bench/common/stats.hpp — the statistics every result row reports: median, min and max of the
// timed repetitions.
#pragma once

#include <algorithm>
#include <vector>

namespace baton::bench {

struct Stats {
  double median = 0, min = 0, max = 0;
};

// The median of an even count is the mean of the two middle values; an empty sample gives zeros.
inline Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}

}  // namespace baton::bench
