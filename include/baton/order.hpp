// baton/order.hpp — tile orders: which tile a stage processes n-th.
//
// A CTA takes a ticket (its position in the launch, from an atomic counter) and the order maps
// the position to a tile. Producers should finish first the tiles consumers need first, e.g.
// row-major for a row policy. Orders must be bijections over the grid; validate_order() proves
// it on the host and every launch helper calls it.
//
// The TileOrder concept: `Tile operator()(Grid g, int position) const`, host+device callable.
#pragma once

#include <concepts>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/config.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton {

template <class O>
concept TileOrder = std::copy_constructible<O> && requires(O const& o, Grid g, int pos) {
  { o(g, pos) } -> std::same_as<Tile>;
};

// n fastest, then m, then z: finishes whole rows of tiles first (good for row policies).
struct RowMajor {
  BATON_HOST_DEVICE constexpr Tile operator()(Grid g, int pos) const { return g.tile(pos); }
};

// m fastest, then n, then z: finishes whole columns first (good for column policies).
struct ColumnMajor {
  BATON_HOST_DEVICE constexpr Tile operator()(Grid g, int pos) const {
    Tile t;
    t.m = pos % g.m;
    t.n = (pos / g.m) % g.n;
    t.z = pos / (g.m * g.n);
    return t;
  }
};

// Runs `Inner` over the transposed grid and transposes the result. Transposed<RowMajor>
// visits tiles in the same sequence as ColumnMajor; Transposed<Grouped<G>> groups columns.
template <class Inner = RowMajor>
struct Transposed {
  Inner inner{};
  BATON_HOST_DEVICE constexpr Tile operator()(Grid g, int pos) const {
    Tile t = inner(g.transposed(), pos);
    return Tile{t.n, t.m, t.z};
  }
};

// Row-major within bands of `group_m` rows of tiles (CUTLASS-style swizzle for L2 reuse):
// walks a band of group_m rows column by column. group_m <= 0 is invalid.
struct Grouped {
  int group_m = 8;
  BATON_HOST_DEVICE constexpr Tile operator()(Grid g, int pos) const {
    int per_z = g.m * g.n;
    int z = pos / per_z;
    int p = pos % per_z;
    int band_rows = group_m < g.m ? group_m : g.m;  // clamp: band_rows * g.n must not overflow
    int band = p / (band_rows * g.n);
    int first_row = band * band_rows;
    int rows = (g.m - first_row) < band_rows ? (g.m - first_row) : band_rows;
    int in_band = p - first_row * g.n;
    return Tile{first_row + in_band % rows, in_band / rows, z};
  }
};

// A user-given table: position -> linear tile index (Grid::linear). The table must live where
// the code runs (device memory for kernels, host memory for the checker and the emulator).
struct Custom {
  const int* table = nullptr;
  int size = 0;
  BATON_HOST_DEVICE constexpr Tile operator()(Grid g, int pos) const {
    return g.tile(table[pos]);
  }
};

namespace detail {
template <class O>
struct is_transposed : std::false_type {};
template <class I>
struct is_transposed<Transposed<I>> : std::true_type {};
}  // namespace detail

// Proves that `order` is a bijection over `grid`: every position lands inside the grid and no
// tile is visited twice. O(grid.size()) time and memory; host only.
template <TileOrder O>
[[nodiscard]] status validate_order(const O& order, Grid grid, const char* what = "order") {
  if (!grid.valid())
    return status(errc::invalid_argument,
                  std::string(what) + ": grid " + std::to_string(grid.m) + "x" +
                      std::to_string(grid.n) + "x" + std::to_string(grid.z) +
                      " is invalid (every extent must be >= 1 and the tile count < 2^31)");
  if constexpr (detail::is_transposed<O>::value) {
    // Validate the inner order's parameters (group_m, table) before calling it.
    BATON_TRY(validate_order(order.inner, grid.transposed(), what));
  }
  if constexpr (std::is_same_v<O, Grouped>) {
    if (order.group_m <= 0)
      return status(errc::invalid_order, std::string(what) + ": Grouped::group_m must be >= 1, got " +
                                             std::to_string(order.group_m));
  }
  if constexpr (std::is_same_v<O, Custom>) {
    if (order.table == nullptr)
      return status(errc::invalid_order, std::string(what) + ": Custom order has a null table");
    if (order.size != grid.size())
      return status(errc::invalid_order, std::string(what) + ": Custom order table has " +
                                             std::to_string(order.size) + " entries but the grid has " +
                                             std::to_string(grid.size()) + " tiles");
    for (int i = 0; i < order.size; ++i)
      if (order.table[i] < 0 || order.table[i] >= grid.size())
        return status(errc::invalid_order, std::string(what) + ": Custom order entry " +
                                               std::to_string(i) + " = " + std::to_string(order.table[i]) +
                                               " is not a tile of the grid");
  }
  const int n = int(grid.size());
  std::vector<int> seen(static_cast<size_t>(n), -1);
  for (int pos = 0; pos < n; ++pos) {
    Tile t = order(grid, pos);
    if (!grid.contains(t))
      return status(errc::invalid_order,
                    std::string(what) + ": position " + std::to_string(pos) + " maps to tile (" +
                        std::to_string(t.m) + "," + std::to_string(t.n) + "," + std::to_string(t.z) +
                        ") outside the grid");
    int l = grid.linear(t);
    if (seen[size_t(l)] >= 0)
      return status(errc::invalid_order,
                    std::string(what) + ": not a bijection: positions " + std::to_string(seen[size_t(l)]) +
                        " and " + std::to_string(pos) + " both map to tile (" + std::to_string(t.m) +
                        "," + std::to_string(t.n) + "," + std::to_string(t.z) + ")");
    seen[size_t(l)] = pos;
  }
  return {};
}

}  // namespace baton
