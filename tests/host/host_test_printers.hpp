// Shared gtest helpers for the host tests (all tests/host/test_*.cpp link into one binary, so
// these must be defined once, here): readable printing of baton value types, and equality for
// the plain structs that the library does not compare.
#pragma once

#include <ostream>

#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/tile.hpp"

namespace baton {
inline void PrintTo(const Tile& t, std::ostream* os) { *os << "(" << t.m << "," << t.n << "," << t.z << ")"; }
inline void PrintTo(const Grid& g, std::ostream* os) { *os << g.m << "x" << g.n << "x" << g.z; }
inline void PrintTo(const TileRect& r, std::ostream* os) {
  *os << "[" << r.m0 << "," << r.m1 << ")x[" << r.n0 << "," << r.n1 << ")x[" << r.z0 << "," << r.z1 << ")";
}
inline void PrintTo(const WaitSpec& w, std::ostream* os) {
  *os << "{sem " << w.sem << ", count " << w.count << ", per_epoch " << w.per_epoch << "}";
}
inline bool operator==(const TileRect& a, const TileRect& b) {
  return a.m0 == b.m0 && a.m1 == b.m1 && a.n0 == b.n0 && a.n1 == b.n1 && a.z0 == b.z0 && a.z1 == b.z1;
}
inline bool operator==(const WaitSpec& a, const WaitSpec& b) {
  return a.sem == b.sem && a.count == b.count && a.per_epoch == b.per_epoch;
}
}  // namespace baton
