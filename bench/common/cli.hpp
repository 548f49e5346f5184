// bench/common/cli.hpp — strict parsing of command-line values: a value that is not entirely a
// number in range is an error, never silently 0 or truncated.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace baton::bench {

// `s` as an integer in [lo, hi]; false when it is not one (no partial parses, no overflow).
inline bool parse_int(const char* s, long lo, long hi, int& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return false;
  out = int(v);
  return true;
}

// The comma-separated fields of `s`, empty fields included ("a,,b" gives three).
inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = s.find(',', p);
    out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

// Whether `v` is one of the comma-separated fields of `list` (a --variants selection, say).
inline bool in_list(const std::string& list, const std::string& v) {
  for (const auto& f : split_commas(list))
    if (f == v) return true;
  return false;
}

}  // namespace baton::bench
