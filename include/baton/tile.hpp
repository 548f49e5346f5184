// baton/tile.hpp — tile and grid coordinates (host + device, constexpr).
//
// A stage's output is split into tiles; a Grid counts tiles along m (rows of tiles), n (columns
// of tiles) and z (batch / image / head). Tile coordinates are plain ints. linear() is row-major
// with n fastest, then m, then z.
#pragma once

#include <cstdint>

#include "baton/config.hpp"

namespace baton {

struct Tile {
  int m = 0;  // row of tiles (M dimension of a GEMM output)
  int n = 0;  // column of tiles (N dimension)
  int z = 0;  // batch / image / head
  friend BATON_HOST_DEVICE constexpr bool operator==(Tile a, Tile b) {
    return a.m == b.m && a.n == b.n && a.z == b.z;
  }
  friend BATON_HOST_DEVICE constexpr bool operator!=(Tile a, Tile b) { return !(a == b); }
};

struct Grid {
  int m = 1;
  int n = 1;
  int z = 1;

  BATON_HOST_DEVICE constexpr int64_t size() const {
    return int64_t(m) * int64_t(n) * int64_t(z);
  }
  BATON_HOST_DEVICE constexpr bool valid() const {
    // Every extent positive and the count fits the int tile indices used everywhere.
    return m > 0 && n > 0 && z > 0 && size() <= int64_t(0x7fffffff);
  }
  BATON_HOST_DEVICE constexpr bool contains(Tile t) const {
    return t.m >= 0 && t.m < m && t.n >= 0 && t.n < n && t.z >= 0 && t.z < z;
  }
  BATON_HOST_DEVICE constexpr int linear(Tile t) const { return (t.z * m + t.m) * n + t.n; }
  BATON_HOST_DEVICE constexpr Tile tile(int linear_index) const {
    Tile t;
    t.n = linear_index % n;
    t.m = (linear_index / n) % m;
    t.z = linear_index / (n * m);
    return t;
  }
  BATON_HOST_DEVICE constexpr Grid transposed() const { return Grid{n, m, z}; }
  friend BATON_HOST_DEVICE constexpr bool operator==(Grid a, Grid b) {
    return a.m == b.m && a.n == b.n && a.z == b.z;
  }
};

// Number of tiles of size `tile` needed to cover `extent` elements (ragged last tile included).
// A non-positive tile size gives 0 (an invalid grid extent that validation reports) instead of
// dividing by zero.
BATON_HOST_DEVICE constexpr int ceil_div(int64_t extent, int64_t tile) {
  return tile > 0 ? int((extent + tile - 1) / tile) : 0;
}

}  // namespace baton
