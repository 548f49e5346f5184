// baton/policy.hpp — sync policies.
//
// A policy is the contract on one producer→consumer edge:
//   * producer side: each producer tile posts (+1) to one semaphore, post_index(tile);
//   * consumer side: before k-block k of consumer tile t, for_each_wait(t, k, f) names the
//     semaphores to wait on, each as a WaitSpec {sem, count, per_epoch}: wait until the
//     semaphore reaches epoch * per_epoch + count (mod 2^32).
// Waits given for k-block k also cover every later k-block. Policies that wait per tile give all
// their waits at k == 0 and none after.
//
// Built-in policies combine a grouping (which producer tiles share a semaphore) with a
// footprint (which producer tiles a consumer reads, see footprint.hpp):
//   TilePolicy<F>   one semaphore per producer tile        (per tile; per k-block with F's k)
//   RowPolicy<F>    one semaphore per row of tiles         (count = tiles per row)
//   ColumnPolicy<F> one semaphore per column of tiles      (count = tiles per column)
//   KBlockPolicy<F> TilePolicy that waits per k-block, just before the k-block is loaded
//   ConvPolicy      RowPolicy over the R x S halo of an implicit-GEMM convolution
//   GroupPolicy<F>  one semaphore per GM x GN block of tiles  (custom grouping)
//
// User-defined policies satisfy the SyncPolicy concept below; the soundness checker
// (dependency.hpp) proves them against the true dependency relation before any launch.
#pragma once

#include <concepts>
#include <cstdint>

#include "baton/config.hpp"
#include "baton/footprint.hpp"
#include "baton/tile.hpp"

namespace baton {

struct WaitSpec {
  int sem = 0;             // index into the edge's semaphore array
  uint32_t count = 0;      // posts to wait for in this epoch
  uint32_t per_epoch = 0;  // posts the semaphore receives per epoch (its number of posters)
};

namespace detail {
// Archetype of the callable passed to for_each_wait: returns false to stop early.
struct wait_sink_archetype {
  BATON_HOST_DEVICE bool operator()(WaitSpec) const { return true; }
};

// The producer tiles a built-in policy waits for before k-block k: the footprint of that k-block
// (per-k-block policies) or of the whole tile at k == 0 (per-tile policies; nothing after), clipped
// to the producer grid so a footprint running past the edge never aliases another tile's semaphore.
template <class F>
BATON_HOST_DEVICE constexpr TileRect waited_rect(const F& fp, Grid producer, bool per_k_block, Tile t, int k) {
  if (!per_k_block && k != 0) return TileRect{};
  return (per_k_block ? fp.rect(t, k) : fp.rect_all(t)).clipped(producer);
}
}  // namespace detail

// The SyncPolicy concept. See the file comment for the meaning of each member.
template <class P>
concept SyncPolicy = std::copy_constructible<P> &&
    requires(P const& p, Tile t, int k, detail::wait_sink_archetype f) {
      { p.producer_grid() } -> std::same_as<Grid>;
      { p.num_semaphores() } -> std::convertible_to<int>;
      { p.post_index(t) } -> std::convertible_to<int>;
      { p.k_blocks() } -> std::convertible_to<int>;
      { p.for_each_wait(t, k, f) } -> std::same_as<bool>;
    };

template <Footprint F>
struct TilePolicy {
  Grid producer{};
  F footprint{};
  bool per_k_block = false;  // wait per k-block (just in time) instead of once per tile

  BATON_HOST_DEVICE constexpr Grid producer_grid() const { return producer; }
  BATON_HOST_DEVICE constexpr int num_semaphores() const { return int(producer.size()); }
  BATON_HOST_DEVICE constexpr int post_index(Tile t) const { return producer.linear(t); }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return footprint.k_blocks(); }
  template <class Fn>
  BATON_HOST_DEVICE bool for_each_wait(Tile t, int k, Fn&& f) const {
    const TileRect r = detail::waited_rect(footprint, producer, per_k_block, t, k);
    for (int z = r.z0; z < r.z1; ++z)
      for (int m = r.m0; m < r.m1; ++m)
        for (int n = r.n0; n < r.n1; ++n)
          if (!f(WaitSpec{producer.linear(Tile{m, n, z}), 1u, 1u})) return false;
    return true;
  }
};

template <Footprint F>
struct KBlockPolicy : TilePolicy<F> {
  constexpr KBlockPolicy() { this->per_k_block = true; }
  constexpr KBlockPolicy(Grid producer_grid, F fp) : TilePolicy<F>{producer_grid, fp, true} {}
};

template <Footprint F>
struct RowPolicy {
  Grid producer{};
  F footprint{};
  bool per_k_block = false;

  BATON_HOST_DEVICE constexpr Grid producer_grid() const { return producer; }
  BATON_HOST_DEVICE constexpr int num_semaphores() const { return producer.m * producer.z; }
  BATON_HOST_DEVICE constexpr int post_index(Tile t) const { return t.z * producer.m + t.m; }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return footprint.k_blocks(); }
  template <class Fn>
  BATON_HOST_DEVICE bool for_each_wait(Tile t, int k, Fn&& f) const {
    const TileRect r = detail::waited_rect(footprint, producer, per_k_block, t, k);
    if (r.empty()) return true;
    const uint32_t per_row = uint32_t(producer.n);
    for (int z = r.z0; z < r.z1; ++z)
      for (int m = r.m0; m < r.m1; ++m)
        if (!f(WaitSpec{z * producer.m + m, per_row, per_row})) return false;
    return true;
  }
};

template <Footprint F>
struct ColumnPolicy {
  Grid producer{};
  F footprint{};
  bool per_k_block = false;

  BATON_HOST_DEVICE constexpr Grid producer_grid() const { return producer; }
  BATON_HOST_DEVICE constexpr int num_semaphores() const { return producer.n * producer.z; }
  BATON_HOST_DEVICE constexpr int post_index(Tile t) const { return t.z * producer.n + t.n; }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return footprint.k_blocks(); }
  template <class Fn>
  BATON_HOST_DEVICE bool for_each_wait(Tile t, int k, Fn&& f) const {
    const TileRect r = detail::waited_rect(footprint, producer, per_k_block, t, k);
    if (r.empty()) return true;
    const uint32_t per_col = uint32_t(producer.m);
    for (int z = r.z0; z < r.z1; ++z)
      for (int n = r.n0; n < r.n1; ++n)
        if (!f(WaitSpec{z * producer.n + n, per_col, per_col})) return false;
    return true;
  }
};

// Custom grouping (cuSync's custom policies): one semaphore per block of group_m x group_n producer
// tiles (blocks at the grid's edge are clipped and have fewer posters). TilePolicy is group(1, 1),
// RowPolicy group(1, grid.n), ColumnPolicy group(grid.m, 1). batonc's `sync a -> b : group(GM, GN)`.
template <Footprint F>
struct GroupPolicy {
  Grid producer{};
  F footprint{};
  int group_m = 1;
  int group_n = 1;
  bool per_k_block = false;

  BATON_HOST_DEVICE constexpr int blocks_m() const { return group_m > 0 ? (producer.m + group_m - 1) / group_m : 0; }
  BATON_HOST_DEVICE constexpr int blocks_n() const { return group_n > 0 ? (producer.n + group_n - 1) / group_n : 0; }
  BATON_HOST_DEVICE constexpr Grid producer_grid() const { return producer; }
  BATON_HOST_DEVICE constexpr int num_semaphores() const { return blocks_m() * blocks_n() * producer.z; }
  BATON_HOST_DEVICE constexpr int post_index(Tile t) const {
    return (t.z * blocks_m() + t.m / group_m) * blocks_n() + t.n / group_n;
  }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return footprint.k_blocks(); }
  // Posters of the block holding tile (bm * group_m, bn * group_n).
  BATON_HOST_DEVICE constexpr uint32_t block_size(int bm, int bn) const {
    const int m1 = (bm + 1) * group_m < producer.m ? (bm + 1) * group_m : producer.m;
    const int n1 = (bn + 1) * group_n < producer.n ? (bn + 1) * group_n : producer.n;
    return uint32_t(m1 - bm * group_m) * uint32_t(n1 - bn * group_n);
  }
  template <class Fn>
  BATON_HOST_DEVICE bool for_each_wait(Tile t, int k, Fn&& f) const {
    const TileRect r = detail::waited_rect(footprint, producer, per_k_block, t, k);
    if (r.empty()) return true;
    for (int z = r.z0; z < r.z1; ++z)
      for (int bm = r.m0 / group_m; bm <= (r.m1 - 1) / group_m; ++bm)
        for (int bn = r.n0 / group_n; bn <= (r.n1 - 1) / group_n; ++bn) {
          const uint32_t c = block_size(bm, bn);
          if (!f(WaitSpec{(z * blocks_m() + bm) * blocks_n() + bn, c, c})) return false;
        }
    return true;
  }
};

// Convolution R x S halo: one semaphore per row of producer tiles; consumer k-block (r, s, cb)
// waits for the rows holding filter row r's input rows (per_k_block), or the whole halo.
struct ConvPolicy : RowPolicy<footprint::ConvHalo> {
  constexpr ConvPolicy() = default;
  constexpr ConvPolicy(footprint::ConvHalo fp, bool per_k = false)
      : RowPolicy<footprint::ConvHalo>{fp.producer_grid(), fp, per_k} {}
};

}  // namespace baton
