// baton/footprint.hpp — where a consumer tile reads in its producer's output.
//
// A footprint maps a consumer tile (and, where the consumer walks K in blocks, a k-block) to the
// rectangle of producer tiles it reads. Built-in policies wait on the semaphores that cover the
// footprint; the same footprints also build exact dependency relations for the checker.
//
// Footprint concept:
//   int k_blocks() const;                    // >= 1
//   TileRect rect(Tile consumer, int k) const;   // tiles read by k-block k
//   TileRect rect_all(Tile consumer) const;      // union over all k-blocks
#pragma once

#include <concepts>

#include "baton/config.hpp"
#include "baton/tile.hpp"

namespace baton {

// Half-open ranges of producer tiles: [m0,m1) x [n0,n1) x [z0,z1).
struct TileRect {
  int m0 = 0, m1 = 0, n0 = 0, n1 = 0, z0 = 0, z1 = 0;
  BATON_HOST_DEVICE constexpr bool empty() const { return m0 >= m1 || n0 >= n1 || z0 >= z1; }
  BATON_HOST_DEVICE constexpr int64_t count() const {
    return empty() ? 0 : int64_t(m1 - m0) * (n1 - n0) * (z1 - z0);
  }
  BATON_HOST_DEVICE constexpr bool contains(Tile t) const {
    return t.m >= m0 && t.m < m1 && t.n >= n0 && t.n < n1 && t.z >= z0 && t.z < z1;
  }
  // The part of the rectangle inside grid g (a footprint may run past the producer's edge).
  BATON_HOST_DEVICE constexpr TileRect clipped(Grid g) const {
    TileRect r = *this;
    r.m0 = r.m0 < 0 ? 0 : r.m0;
    r.n0 = r.n0 < 0 ? 0 : r.n0;
    r.z0 = r.z0 < 0 ? 0 : r.z0;
    r.m1 = r.m1 > g.m ? g.m : r.m1;
    r.n1 = r.n1 > g.n ? g.n : r.n1;
    r.z1 = r.z1 > g.z ? g.z : r.z1;
    return r;
  }
};

template <class F>
concept Footprint = std::copy_constructible<F> && requires(F const& f, Tile t, int k) {
  { f.k_blocks() } -> std::convertible_to<int>;
  { f.rect(t, k) } -> std::same_as<TileRect>;
  { f.rect_all(t) } -> std::same_as<TileRect>;
};

namespace footprint {

// Consumer tile t reads producer tile t (same grid). The paper's chained copy test.
struct Identity {
  BATON_HOST_DEVICE constexpr int k_blocks() const { return 1; }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const {
    return TileRect{t.m, t.m + 1, t.n, t.n + 1, t.z, t.z + 1};
  }
};

// Consumer tile (m,n,z) reads producer tile (n,m,z): a transposed consumer.
struct Transpose {
  BATON_HOST_DEVICE constexpr int k_blocks() const { return 1; }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const {
    return TileRect{t.n, t.n + 1, t.m, t.m + 1, t.z, t.z + 1};
  }
};

// Every consumer tile of batch z reads every producer tile of batch z (attention reading all
// K/V tiles of its head).
struct AllOfBatch {
  Grid producer{};
  BATON_HOST_DEVICE constexpr int k_blocks() const { return 1; }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const {
    return TileRect{0, producer.m, 0, producer.n, t.z, t.z + 1};
  }
};

// GEMM chain: the consumer's A operand is the producer's output C[M, K].
// Consumer tile (m, n) covers rows [m*cons_tile_m, ...) and reads them over all K;
// k-block k covers columns [k*cons_tile_k, ...). Producer tiles are prod_tile_m x prod_tile_n.
// Ragged M and K are handled (last tiles partial).
struct GemmA {
  int rows = 0;         // M
  int cols = 0;         // K of the consumer == N of the producer
  int prod_tile_m = 0;
  int prod_tile_n = 0;
  int cons_tile_m = 0;
  int cons_tile_k = 0;  // the consumer's k-block

  // Every extent and tile size must be positive (checked by check_soundness and Chain::validate).
  constexpr const char* invalid_reason() const {
    if (rows <= 0 || cols <= 0) return "GemmA: rows and cols must be >= 1";
    if (prod_tile_m <= 0 || prod_tile_n <= 0 || cons_tile_m <= 0 || cons_tile_k <= 0)
      return "GemmA: tile sizes (prod_tile_m, prod_tile_n, cons_tile_m, cons_tile_k) must be >= 1";
    return nullptr;
  }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return ceil_div(cols, cons_tile_k); }
  BATON_HOST_DEVICE constexpr Grid producer_grid(int batches = 1) const {
    return Grid{ceil_div(rows, prod_tile_m), ceil_div(cols, prod_tile_n), batches};
  }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int k) const {
    TileRect r = rows_of(t);
    int c0 = k * cons_tile_k;
    int c1 = (k + 1) * cons_tile_k < cols ? (k + 1) * cons_tile_k : cols;
    r.n0 = c0 / prod_tile_n;
    r.n1 = c1 > c0 ? (c1 - 1) / prod_tile_n + 1 : r.n0;
    return r;
  }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const {
    TileRect r = rows_of(t);
    r.n0 = 0;
    r.n1 = ceil_div(cols, prod_tile_n);
    return r;
  }
  BATON_HOST_DEVICE constexpr TileRect rows_of(Tile t) const {
    int r0 = t.m * cons_tile_m;
    int r1 = (t.m + 1) * cons_tile_m < rows ? (t.m + 1) * cons_tile_m : rows;
    TileRect r{};
    r.m0 = r0 / prod_tile_m;
    r.m1 = r1 > r0 ? (r1 - 1) / prod_tile_m + 1 : r.m0;
    r.z0 = t.z;
    r.z1 = t.z + 1;
    return r;
  }
};

// Implicit-GEMM convolution chain, NHWC. The producer's output [N, H, W, C] is the consumer's
// input. Rows of both GEMMs are flattened pixels: producer tile m covers input pixels
// [m*prod_tile_m, ...) of N*H*W, producer tile n covers channels [n*prod_tile_n, ...).
// Consumer tile m covers output pixels [m*cons_tile_m, ...) of N*P*Q. The consumer walks K as
// (r, s, channel block): k = (r*S + s) * channel_blocks + cb.
// The footprint is the R x S halo widened to whole input rows (sound and cheap to compute on
// the device); the exact tap-by-tap relation is deps::conv_exact.
struct ConvHalo {
  int n = 1, h = 0, w = 0, c = 0;  // producer output / consumer input
  int r = 3, s = 3, stride = 1, pad = 1;
  int prod_tile_m = 0, prod_tile_n = 0;
  int cons_tile_m = 0, cons_tile_k = 0;  // cons_tile_k: channels per k-block

  constexpr const char* invalid_reason() const {
    if (n <= 0 || h <= 0 || w <= 0 || c <= 0) return "ConvHalo: n, h, w, c must be >= 1";
    if (r <= 0 || s <= 0 || stride <= 0 || pad < 0) return "ConvHalo: r, s, stride must be >= 1 and pad >= 0";
    if (prod_tile_m <= 0 || prod_tile_n <= 0 || cons_tile_m <= 0 || cons_tile_k <= 0)
      return "ConvHalo: tile sizes must be >= 1";
    if (h + 2 * pad < r || w + 2 * pad < s) return "ConvHalo: the filter is larger than the padded input";
    return nullptr;
  }

  BATON_HOST_DEVICE constexpr int out_h() const { return (h + 2 * pad - r) / stride + 1; }
  BATON_HOST_DEVICE constexpr int out_w() const { return (w + 2 * pad - s) / stride + 1; }
  BATON_HOST_DEVICE constexpr int channel_blocks() const { return ceil_div(c, cons_tile_k); }
  BATON_HOST_DEVICE constexpr int k_blocks() const { return r * s * channel_blocks(); }
  BATON_HOST_DEVICE constexpr Grid producer_grid() const {
    return Grid{ceil_div(int64_t(n) * h * w, prod_tile_m), ceil_div(c, prod_tile_n), 1};
  }
  BATON_HOST_DEVICE constexpr Grid consumer_grid(int cons_channels, int cons_tile_n) const {
    return Grid{ceil_div(int64_t(n) * out_h() * out_w(), cons_tile_m), ceil_div(cons_channels, cons_tile_n), 1};
  }
  // Producer tile rows holding input rows [first tap row .. last tap row] of the tile's pixels
  // for filter rows [r_lo, r_hi].
  BATON_HOST_DEVICE constexpr TileRect rows_for_taps(Tile t, int r_lo, int r_hi) const {
    const int64_t pq = int64_t(out_h()) * out_w();
    const int64_t total = int64_t(n) * pq;
    int64_t o0 = int64_t(t.m) * cons_tile_m;
    int64_t o1 = o0 + cons_tile_m < total ? o0 + cons_tile_m : total;  // exclusive
    TileRect rect{0, 0, 0, 0, 0, 1};
    if (o1 <= o0) return rect;
    int64_t n0 = o0 / pq, p0 = (o0 % pq) / out_w();
    int64_t n1 = (o1 - 1) / pq, p1 = ((o1 - 1) % pq) / out_w();
    int64_t h0 = p0 * stride - pad + r_lo;
    int64_t h1 = p1 * stride - pad + r_hi;
    if (n0 == n1) {
      h0 = h0 < 0 ? 0 : h0;
      h1 = h1 > h - 1 ? h - 1 : h1;
      if (h1 < h0) return rect;  // every tap falls in the padding
    } else {
      // The tile spans images: be conservative at the image seams.
      h0 = h0 < 0 ? 0 : (h0 > h - 1 ? h - 1 : h0);
      h1 = h1 > h - 1 ? h - 1 : (h1 < 0 ? 0 : h1);
    }
    int64_t i0 = (n0 * h + h0) * w;           // first input pixel
    int64_t i1 = (n1 * h + h1) * w + (w - 1);  // last input pixel
    rect.m0 = int(i0 / prod_tile_m);
    rect.m1 = int(i1 / prod_tile_m) + 1;
    return rect;
  }
  BATON_HOST_DEVICE constexpr TileRect rect(Tile t, int k) const {
    int cb = k % channel_blocks();
    int rr = (k / channel_blocks()) / s;
    TileRect rect = rows_for_taps(t, rr, rr);
    int c0 = cb * cons_tile_k;
    int c1 = (cb + 1) * cons_tile_k < c ? (cb + 1) * cons_tile_k : c;
    rect.n0 = c0 / prod_tile_n;
    rect.n1 = (c1 - 1) / prod_tile_n + 1;
    return rect;
  }
  BATON_HOST_DEVICE constexpr TileRect rect_all(Tile t) const {
    TileRect rect = rows_for_taps(t, 0, r - 1);
    rect.n0 = 0;
    rect.n1 = ceil_div(c, prod_tile_n);
    return rect;
  }
};

}  // namespace footprint
}  // namespace baton
