// baton/dsl/affine_footprint.hpp — the footprint that batonc (the DSL compiler) generates: where a
// consumer tile reads its producer's output when both access the tensor through affine maps.
//
// Every dimension d of a tensor the edge passes through is described by
//   the consumer's read:   [lo, lo + width) with lo = cm*t.m + cn*t.n + cz*t.z + sum_j ck[j]*k_j + c0
//   the producer's write:  [pc*i + p0, pc*i + p0 + pw) for the producer tile whose `axis` index is i
//                          (axis -1: the same range for every producer tile)
// both clipped to [0, extent). k_j are the consumer's k-loop variables; k-block k is their
// mixed-radix number with the last variable fastest. rect(t, k) is the box of producer tiles whose
// writes meet the reads of k-block k (an exact inversion of the write map per dimension: the reads
// of one access are a box, and so are the tiles that meet it). An edge whose consumer reads several
// tensors of the producer (attention's K and V) takes the bounding box of their rects.
//
// The same struct runs on the device (policies call rect() before each wait) and in batonc, which
// proves the generated policy with the soundness checker against a relation it enumerates
// independently (baton/dsl/analysis.hpp). Host and device; no allocation.
#pragma once

#include <cstdint>

#include "baton/config.hpp"
#include "baton/footprint.hpp"
#include "baton/tile.hpp"

namespace baton::dsl {

inline constexpr int kMaxDims = 4;      // tensor rank
inline constexpr int kMaxKVars = 3;     // k-loop variables of a stage
inline constexpr int kMaxAccesses = 4;  // tensors one edge passes through

struct AffineDim {
  // Consumer read start: cm*t.m + cn*t.n + cz*t.z + sum_j ck[j]*k_j + c0; `width` elements.
  int cm = 0, cn = 0, cz = 0;
  int ck[kMaxKVars] = {0, 0, 0};
  int c0 = 0;
  int width = 1;
  // Producer write: [pc*i + p0, + pw) along producer grid axis `axis` (0 m, 1 n, 2 z; -1: none).
  int axis = -1;
  int pc = 1, p0 = 0, pw = 1;
  int extent = 1;  // the tensor's extent in this dimension
};

struct AffineAccess {
  int dims = 0;
  AffineDim dim[kMaxDims] = {};
};

namespace detail {
BATON_HOST_DEVICE constexpr int floor_div(int a, int b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
BATON_HOST_DEVICE constexpr int imin(int a, int b) { return a < b ? a : b; }
BATON_HOST_DEVICE constexpr int imax(int a, int b) { return a > b ? a : b; }
}  // namespace detail

struct AffineFootprint {
  Grid producer{};
  int kvars = 0;
  int kext[kMaxKVars] = {1, 1, 1};
  int accesses = 0;
  AffineAccess access[kMaxAccesses] = {};

  // Why the description cannot be used (nullptr: it can). check_soundness calls it.
  constexpr const char* invalid_reason() const {
    if (!producer.valid()) return "AffineFootprint: invalid producer grid";
    if (kvars < 0 || kvars > kMaxKVars) return "AffineFootprint: kvars out of range";
    for (int j = 0; j < kvars; ++j)
      if (kext[j] < 1) return "AffineFootprint: a k-loop extent is < 1";
    if (accesses < 1 || accesses > kMaxAccesses) return "AffineFootprint: accesses out of range";
    for (int a = 0; a < accesses; ++a) {
      if (access[a].dims < 1 || access[a].dims > kMaxDims) return "AffineFootprint: dims out of range";
      for (int d = 0; d < access[a].dims; ++d) {
        const AffineDim& x = access[a].dim[d];
        if (x.width < 1 || x.pw < 1 || x.extent < 1) return "AffineFootprint: widths and extents must be >= 1";
        if (x.axis < -1 || x.axis > 2) return "AffineFootprint: axis must be -1, 0, 1 or 2";
        if (x.axis >= 0 && x.pc < 1) return "AffineFootprint: a write stride must be >= 1";
      }
    }
    return nullptr;
  }

  BATON_HOST_DEVICE constexpr int k_blocks() const {
    int k = 1;
    for (int j = 0; j < kvars; ++j) k *= kext[j];
    return k;
  }
  // k-block k's loop variables (last fastest).
  BATON_HOST_DEVICE constexpr void k_vars(int k, int* out) const {
    for (int j = kvars - 1; j >= 0; --j) {
      out[j] = k % kext[j];
      k /= kext[j];
    }
  }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int k) const { return rect_(t, k, false); }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const { return rect_(t, 0, true); }

 private:
  // The producer warp calls this before every k-block's loads (and again while it polls), so
  // every loop runs to its compile-time bound behind a guard (BATON_UNROLL): fields are read at
  // fixed offsets and the small arrays stay in registers (runtime bounds and indices put the
  // arrays in local memory). Even so the generic evaluation is slower than footprint::GemmA's
  // closed form (docs/batonc.md), so batonc lowers GEMM-shaped edges to footprint::GemmA
  // (dsl/analysis.hpp) and this serves the other forms.
  // all_k: the union over every k-block (the extremes of an affine start lie at the loop ends).
  BATON_HOST_DEVICE constexpr TileRect rect_(Tile t, int k, bool all_k) const {
    int kv[kMaxKVars] = {0, 0, 0};  // k-block k's loop variables, last fastest
    if (!all_k) {
      if (kvars == 1) {
        kv[0] = k < kext[0] ? k : k % kext[0];
      } else {
        BATON_UNROLL
        for (int j = kMaxKVars - 1; j >= 0; --j)
          if (j < kvars) {
            kv[j] = k % kext[j];
            k /= kext[j];
          }
      }
    }
    TileRect box{};  // empty
    bool any = false;
    BATON_UNROLL
    for (int a = 0; a < kMaxAccesses; ++a) {
      if (a >= accesses) break;
      int m0 = 0, m1 = producer.m, n0 = 0, n1 = producer.n, z0 = 0, z1 = producer.z;
      bool empty = false;
      BATON_UNROLL
      for (int d = 0; d < kMaxDims; ++d) {
        if (d >= access[a].dims) break;
        const AffineDim& x = access[a].dim[d];
        int lo = x.cm * t.m + x.cn * t.n + x.cz * t.z + x.c0;
        int hi = lo + x.width;
        BATON_UNROLL
        for (int j = 0; j < kMaxKVars; ++j) {
          if (j >= kvars) break;
          if (all_k) {  // the lowest start and the highest end over the k-loop
            const int span = x.ck[j] * (kext[j] - 1);
            lo += span < 0 ? span : 0;
            hi += span > 0 ? span : 0;
          } else {
            lo += x.ck[j] * kv[j];
            hi += x.ck[j] * kv[j];
          }
        }
        lo = detail::imax(lo, 0);
        hi = detail::imin(hi, x.extent);
        if (lo >= hi) {
          empty = true;
          break;
        }
        if (x.axis < 0) {  // the same range for every producer tile: it meets the reads or none does
          if (!(x.p0 < hi && x.p0 + x.pw > lo)) {
            empty = true;
            break;
          }
          continue;
        }
        // Producer index i meets [lo, hi) iff pc*i + p0 < hi and pc*i + p0 + pw > lo.
        const int i0 = detail::floor_div(lo - x.p0 - x.pw, x.pc) + 1;
        const int i1 = detail::floor_div(hi - x.p0 - 1, x.pc) + 1;
        if (x.axis == 0) {
          m0 = detail::imax(m0, i0);
          m1 = detail::imin(m1, i1);
        } else if (x.axis == 1) {
          n0 = detail::imax(n0, i0);
          n1 = detail::imin(n1, i1);
        } else {
          z0 = detail::imax(z0, i0);
          z1 = detail::imin(z1, i1);
        }
      }
      if (empty) continue;
      TileRect r{m0, m1, n0, n1, z0, z1};
      r = r.clipped(producer);
      if (r.empty()) continue;
      if (!any) {
        box = r;
        any = true;
      } else {
        box.m0 = detail::imin(box.m0, r.m0);
        box.m1 = detail::imax(box.m1, r.m1);
        box.n0 = detail::imin(box.n0, r.n0);
        box.n1 = detail::imax(box.n1, r.n1);
        box.z0 = detail::imin(box.z0, r.z0);
        box.z1 = detail::imax(box.z1, r.z1);
      }
    }
    return box;
  }
};

static_assert(Footprint<AffineFootprint>);

}  // namespace baton::dsl
