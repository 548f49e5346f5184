// A deterministic byte pattern for the host tests of the staging copies (CopyTeam, CopyPool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bt_host {
inline std::vector<std::uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = std::uint8_t(x >> 24);
  }
  return v;
}
}  // namespace bt_host
