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
// of one access are a box, and so are the tiles that meet it). An edge whose consumer reads the
// producer's output in several places (attention's Q, K and V) has one such box per access:
// rects(t, k) gives them (their union is exact), rect(t, k) their bounding box (the Footprint
// concept's one rectangle, which the policies of baton/policy.hpp wait on). BoxesPolicy below waits
// on the union instead: with the [Q|K|V] layout the bounding box spans every column block between
// Q and V, the union only the three that are read.
//
// The same struct runs on the device (policies call rect() or rects() before each wait) and in batonc, which
// proves the generated policy with the soundness checker against a relation it enumerates
// independently (baton/dsl/analysis.hpp). Host and device; no allocation.
#pragma once

#include <cstdint>

#include "baton/config.hpp"
#include "baton/footprint.hpp"
#include "baton/policy.hpp"
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
  // A convolution's tap (`@conv(H, W, DR, DS)` on a read; img_w > 0): the dimension counts the
  // pixels of images of img_h x img_w (pixel n*img_h*img_w + h*img_w + w) and the read start has no
  // k terms; each pixel of the read is read dr = r0 + sum_j rk[j]*k_j rows and ds = s0 +
  // sum_j sk[j]*k_j columns away, and one whose shifted row or column leaves its image reads nothing
  // (padding). Omitted (zero) for every other dimension.
  int img_h = 0, img_w = 0;
  int rk[kMaxKVars] = {0, 0, 0};
  int r0 = 0;
  int sk[kMaxKVars] = {0, 0, 0};
  int s0 = 0;
  // A strided (or not "same"-padded) tap (`@conv(..., stride = U, pad = E)`; out_h > 0): the read's
  // range counts the pixels of output images of out_h x out_w instead, and output pixel
  // (n, p, q) reads input pixel (n, p*stride + dr, q*stride + ds) of the img_h x img_w images. The
  // extent is the input's (a whole number of images); the output has as many images. Omitted
  // (out_h = out_w = 0, stride 1): the output pixels are the input's (stride 1, "same" padding).
  int out_h = 0, out_w = 0;
  int stride = 1;
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
// The first (last_ = false) or last output pixel o of [lo, hi), in output images of oh x ow, whose
// tap (dr, ds) at the given stride reads inside its input image of h x w, or -1. Output row p reads
// input row p*stride + dr, so the valid rows are [max(0, ceil(-dr / stride)), min(oh, floor((h - 1 -
// dr) / stride) + 1)), and likewise the columns: the nearest valid pixel is in o's row, the next
// (previous) valid row, or the next (previous) image. lo >= 0.
BATON_HOST_DEVICE constexpr int conv_valid_strided(int lo, int hi, int h, int w, int oh, int ow, int stride, int dr, int ds,
                                                   bool last_) {
  const int plo = imax(0, -floor_div(dr, stride)), phi = imin(oh, floor_div(h - 1 - dr, stride) + 1);
  const int qlo = imax(0, -floor_div(ds, stride)), qhi = imin(ow, floor_div(w - 1 - ds, stride) + 1);
  if (plo >= phi || qlo >= qhi || lo >= hi) return -1;
  const int hw = oh * ow;
  const int o = last_ ? hi - 1 : lo;
  const int n = o / hw, p = (o % hw) / ow, q = o % ow;
  int c = o;
  if (!last_) {
    if (p < plo) c = n * hw + plo * ow + qlo;
    else if (p >= phi) c = (n + 1) * hw + plo * ow + qlo;
    else if (q < qlo) c = n * hw + p * ow + qlo;
    else if (q >= qhi) c = p + 1 < phi ? n * hw + (p + 1) * ow + qlo : (n + 1) * hw + plo * ow + qlo;
    return c < hi ? c : -1;
  }
  if (p >= phi) c = n * hw + (phi - 1) * ow + qhi - 1;
  else if (p < plo) c = (n - 1) * hw + (phi - 1) * ow + qhi - 1;
  else if (q >= qhi) c = n * hw + p * ow + qhi - 1;
  else if (q < qlo) c = p - 1 >= plo ? n * hw + (p - 1) * ow + qhi - 1 : (n - 1) * hw + (phi - 1) * ow + qhi - 1;
  return c >= lo ? c : -1;
}
// conv_valid_strided at stride 1 with the output images the input's ("same" padding).
BATON_HOST_DEVICE constexpr int conv_valid(int lo, int hi, int h, int w, int dr, int ds, bool last_) {
  return conv_valid_strided(lo, hi, h, w, h, w, 1, dr, ds, last_);
}
// The input pixel that output pixel o (of a tap that stays inside its image) reads.
BATON_HOST_DEVICE constexpr int conv_input(int o, int h, int w, int oh, int ow, int stride, int dr, int ds) {
  const int hw = oh * ow;
  const int n = o / hw, p = (o % hw) / ow, q = o % ow;
  return (n * h + p * stride + dr) * w + q * stride + ds;
}
// The input pixels [first, last] a conv dimension's output pixels [lo, hi) read at tap (dr, ds)
// (valid pixels read increasing input pixels, so these are the extremes); false when none is read.
BATON_HOST_DEVICE constexpr bool conv_span(const AffineDim& x, int lo, int hi, int dr, int ds, int& first, int& last) {
  const bool strided = x.out_h > 0;
  const int oh = strided ? x.out_h : x.img_h, ow = strided ? x.out_w : x.img_w, u = strided ? x.stride : 1;
  const int o0 = conv_valid_strided(lo, hi, x.img_h, x.img_w, oh, ow, u, dr, ds, false);
  if (o0 < 0) return false;
  const int o1 = conv_valid_strided(lo, hi, x.img_h, x.img_w, oh, ow, u, dr, ds, true);
  first = conv_input(o0, x.img_h, x.img_w, oh, ow, u, dr, ds);
  last = conv_input(o1, x.img_h, x.img_w, oh, ow, u, dr, ds);
  return true;
}
// The extent of a conv dimension's read range: the output pixels of as many images as the input
// holds (the input's extent in the stride-1 form).
BATON_HOST_DEVICE constexpr int conv_out_extent(const AffineDim& x) {
  return x.out_h > 0 ? x.extent / (x.img_h * x.img_w) * (x.out_h * x.out_w) : x.extent;
}
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
        if (x.img_w < 0 || x.img_h < 0 || (x.img_w > 0) != (x.img_h > 0))
          return "AffineFootprint: a conv tap's image needs img_h >= 1 and img_w >= 1 (or both 0)";
        if (x.out_h < 0 || x.out_w < 0 || (x.out_h > 0) != (x.out_w > 0) || (x.out_h > 0 && x.img_w == 0))
          return "AffineFootprint: a strided conv tap's output needs out_h >= 1 and out_w >= 1 (or both 0) and an image";
        if (x.out_h > 0 && (x.stride < 1 || x.extent % (int64_t(x.img_h) * x.img_w) != 0))
          return "AffineFootprint: a strided conv tap needs stride >= 1 and an extent of whole images";
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

  // The producer tiles k-block k reads, as up to kMaxBoxes non-empty boxes clipped to the producer
  // grid, one per access that reads anything (boxes may overlap; their union is what the k-block
  // reads): writes them to out[0..n) and returns n. rects_all: the same over every k-block (per
  // access, the box over the whole k-loop).
  static constexpr int kMaxBoxes = kMaxAccesses;
  BATON_HOST_DEVICE constexpr int rects(Tile t, int k, TileRect* out) const { return boxes_(t, k, false, out); }
  BATON_HOST_DEVICE constexpr int rects_all(Tile t, TileRect* out) const { return boxes_(t, 0, true, out); }

 private:
  // The producer warp calls this before every k-block's loads (and again while it polls), so
  // every loop runs to its compile-time bound behind a guard (BATON_UNROLL): fields are read at
  // fixed offsets and the small arrays stay in registers (runtime bounds and indices put the
  // arrays in local memory). Even so the generic evaluation is slower than footprint::GemmA's
  // closed form (docs/batonc.md), so batonc lowers GEMM-shaped edges to footprint::GemmA
  // (dsl/analysis.hpp) and this serves the other forms.
  // all_k: the union over every k-block (the extremes of an affine start lie at the loop ends).
  BATON_HOST_DEVICE constexpr void kv_of_(int k, bool all_k, int* kv) const {
    if (all_k) return;
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
  // The producer tiles access a reads at k-block variables kv (or over every k-block), clipped to
  // the producer grid; empty when it reads nothing.
  BATON_HOST_DEVICE constexpr TileRect access_rect_(int a, Tile t, const int* kv, bool all_k) const {
    int m0 = 0, m1 = producer.m, n0 = 0, n1 = producer.n, z0 = 0, z1 = producer.z;
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
      if (x.img_w > 0) {  // a conv tap: the pixels it reads, shifted (start and width have no k terms)
        lo = detail::imax(lo, 0);
        hi = detail::imin(hi, detail::conv_out_extent(x));
        int dr = x.r0, ds = x.s0, dr_hi = x.r0, ds_hi = x.s0;
        BATON_UNROLL
        for (int j = 0; j < kMaxKVars; ++j) {
          if (j >= kvars) break;
          if (all_k) {  // the lowest and highest shifts over the k-loop
            const int rs = x.rk[j] * (kext[j] - 1), ss = x.sk[j] * (kext[j] - 1);
            dr += rs < 0 ? rs : 0;
            dr_hi += rs > 0 ? rs : 0;
            ds += ss < 0 ? ss : 0;
            ds_hi += ss > 0 ? ss : 0;
          } else {
            dr += x.rk[j] * kv[j];
            ds += x.sk[j] * kv[j];
          }
        }
        if (all_k && x.out_h > 0) {
          // Strided: from the first output pixel's lowest tap to the last one's highest. Input row
          // h0 = p0*stride + dr (the lowest shift) is read only by output row p0, from its column
          // q0 on; clamped into the image (a row past an image's edge holds no read, and the
          // clamped row, taken whole, still bounds the reads of the neighbouring image). Likewise
          // the last row.
          if (lo >= hi) return TileRect{};
          const int ohw = x.out_h * x.out_w;
          const int n0 = lo / ohw, p0 = (lo % ohw) / x.out_w, q0 = lo % x.out_w;
          const int n1 = (hi - 1) / ohw, p1 = ((hi - 1) % ohw) / x.out_w, q1 = (hi - 1) % x.out_w;
          const int r0 = p0 * x.stride + dr, r1 = p1 * x.stride + dr_hi;
          const bool in0 = r0 >= 0 && r0 < x.img_h, in1 = r1 >= 0 && r1 < x.img_h;
          const int h0 = detail::imin(detail::imax(r0, 0), x.img_h - 1), h1 = detail::imin(detail::imax(r1, 0), x.img_h - 1);
          const int w0 = in0 ? detail::imin(detail::imax(q0 * x.stride + ds, 0), x.img_w - 1) : 0;
          const int w1 = in1 ? detail::imin(detail::imax(q1 * x.stride + ds_hi, 0), x.img_w - 1) : x.img_w - 1;
          lo = (n0 * x.img_h + h0) * x.img_w + w0;
          hi = (n1 * x.img_h + h1) * x.img_w + w1 + 1;
        } else if (all_k) {  // every tap's pixels lie in the span of the extreme shifts
          lo += dr * x.img_w + ds;
          hi += dr_hi * x.img_w + ds_hi;
        } else {
          int first = 0, last = -1;
          if (!detail::conv_span(x, lo, hi, dr, ds, first, last)) return TileRect{};
          lo = first;
          hi = last + 1;
        }
      }
      lo = detail::imax(lo, 0);
      hi = detail::imin(hi, x.extent);
      if (lo >= hi) return TileRect{};
      if (x.axis < 0) {  // the same range for every producer tile: it meets the reads or none does
        if (!(x.p0 < hi && x.p0 + x.pw > lo)) return TileRect{};
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
    return TileRect{m0, m1, n0, n1, z0, z1}.clipped(producer);
  }
  BATON_HOST_DEVICE constexpr TileRect rect_(Tile t, int k, bool all_k) const {
    int kv[kMaxKVars] = {0, 0, 0};  // k-block k's loop variables, last fastest
    kv_of_(k, all_k, kv);
    TileRect box{};  // empty
    bool any = false;
    BATON_UNROLL
    for (int a = 0; a < kMaxAccesses; ++a) {
      if (a >= accesses) break;
      const TileRect r = access_rect_(a, t, kv, all_k);
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
  BATON_HOST_DEVICE constexpr int boxes_(Tile t, int k, bool all_k, TileRect* out) const {
    int kv[kMaxKVars] = {0, 0, 0};
    kv_of_(k, all_k, kv);
    int n = 0;
    BATON_UNROLL
    for (int a = 0; a < kMaxAccesses; ++a) {
      if (a >= accesses) break;
      const TileRect r = access_rect_(a, t, kv, all_k);
      if (!r.empty()) out[n++] = r;
    }
    return n;
  }
};

static_assert(Footprint<AffineFootprint>);

// How a policy groups producer tiles into semaphores: the layouts of TilePolicy (and KBlockPolicy),
// RowPolicy, ColumnPolicy and GroupPolicy (baton/policy.hpp).
enum class Grouping { tile, row, column, group };

// A built-in policy's semaphore layout over an AffineFootprint's union of boxes: before k-block k
// (per_k_block) or once at k == 0, it waits on each semaphore that a producer tile of any box posts
// to, once (a semaphore that several boxes share is waited on for the first of them). Posts,
// counts and per-epoch values are the base layout's, so the producer side is unchanged; only the
// waits shrink from the bounding box to the boxes. batonc emits it for an edge whose reads lie
// apart in the producer's grid (docs/batonc.md, "Several reads of one tensor").
template <Grouping G>
struct BoxesPolicy {
  Grid producer{};
  AffineFootprint footprint{};
  bool per_k_block = false;
  int group_m = 1, group_n = 1;  // Grouping::group only

  BATON_HOST_DEVICE constexpr int blocks_m() const { return G == Grouping::group ? (producer.m + group_m - 1) / group_m : producer.m; }
  BATON_HOST_DEVICE constexpr int blocks_n() const { return G == Grouping::group ? (producer.n + group_n - 1) / group_n : producer.n; }
  BATON_HOST_DEVICE constexpr Grid producer_grid() const { return producer; }
  BATON_HOST_DEVICE constexpr int num_semaphores() const {
    if constexpr (G == Grouping::tile) return int(producer.size());
    if constexpr (G == Grouping::row) return producer.m * producer.z;
    if constexpr (G == Grouping::column) return producer.n * producer.z;
    return blocks_m() * blocks_n() * producer.z;
  }
  BATON_HOST_DEVICE constexpr int post_index(Tile t) const {
    if constexpr (G == Grouping::tile) return producer.linear(t);
    if constexpr (G == Grouping::row) return t.z * producer.m + t.m;
    if constexpr (G == Grouping::column) return t.z * producer.n + t.n;
    return (t.z * blocks_m() + t.m / group_m) * blocks_n() + t.n / group_n;
  }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return footprint.k_blocks(); }
  template <class Fn>
  BATON_HOST_DEVICE bool for_each_wait(Tile t, int k, Fn&& f) const {
    if (!per_k_block && k != 0) return true;
    TileRect cell[AffineFootprint::kMaxBoxes] = {};
    const int nb = per_k_block ? footprint.rects(t, k, cell) : footprint.rects_all(t, cell);
    BATON_UNROLL
    for (int b = 0; b < AffineFootprint::kMaxBoxes; ++b)
      if (b < nb) cell[b] = cells_(cell[b]);
    for (int b = 0; b < nb; ++b)
      for (int z = cell[b].z0; z < cell[b].z1; ++z)
        for (int m = cell[b].m0; m < cell[b].m1; ++m)
          for (int n = cell[b].n0; n < cell[b].n1; ++n) {
            bool seen = false;  // an earlier box waits on this semaphore already
            for (int e = 0; e < b; ++e) seen = seen || cell[e].contains(Tile{m, n, z});
            if (!seen && !f(wait_(m, n, z))) return false;
          }
    return true;
  }

 private:
  // A box of producer tiles (clipped to the grid) as the box of semaphore cells it posts to:
  // (m, n, z) of a tile, (m, 0, z) of a row, (0, n, z) of a column, the block of a group.
  BATON_HOST_DEVICE constexpr TileRect cells_(TileRect r) const {
    if (r.empty()) return TileRect{};
    if constexpr (G == Grouping::row) return TileRect{r.m0, r.m1, 0, 1, r.z0, r.z1};
    if constexpr (G == Grouping::column) return TileRect{0, 1, r.n0, r.n1, r.z0, r.z1};
    if constexpr (G == Grouping::group)
      return TileRect{r.m0 / group_m, (r.m1 - 1) / group_m + 1, r.n0 / group_n, (r.n1 - 1) / group_n + 1, r.z0, r.z1};
    return r;
  }
  BATON_HOST_DEVICE constexpr WaitSpec wait_(int m, int n, int z) const {
    if constexpr (G == Grouping::tile) return WaitSpec{producer.linear(Tile{m, n, z}), 1u, 1u};
    if constexpr (G == Grouping::row) return WaitSpec{z * producer.m + m, uint32_t(producer.n), uint32_t(producer.n)};
    if constexpr (G == Grouping::column) return WaitSpec{z * producer.n + n, uint32_t(producer.m), uint32_t(producer.m)};
    // Posters of block (m, n): clipped at the grid's edge.
    const int m1 = (m + 1) * group_m < producer.m ? (m + 1) * group_m : producer.m;
    const int n1 = (n + 1) * group_n < producer.n ? (n + 1) * group_n : producer.n;
    const uint32_t c = uint32_t(m1 - m * group_m) * uint32_t(n1 - n * group_n);
    return WaitSpec{(z * blocks_m() + m) * blocks_n() + n, c, c};
  }
};

static_assert(SyncPolicy<BoxesPolicy<Grouping::tile>>);
static_assert(SyncPolicy<BoxesPolicy<Grouping::group>>);

}  // namespace baton::dsl
