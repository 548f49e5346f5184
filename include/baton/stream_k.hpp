// baton/stream_k.hpp — stream-K: the k-blocks of all of a GEMM's output tiles shared evenly among
// a fixed number of persistent CTAs, so that a grid of T tiles on S SMs takes T/S of a tile's time
// rather than ceil(T/S) (wave quantization: 96 tiles on 132 SMs leave 36 idle for the whole GEMM).
// Host- and device-side arithmetic only; the GEMM that uses it is baton/cutlass/sm90_gemm.cuh
// (GemmArguments::stream_k), and its host tests are tests/host/test_stream_k.cpp.
//
// The work is the sequence of iterations x = position * k_blocks + k over the stage's order of tiles
// (position) and each tile's k-blocks (k). CTA c of C takes [c*I/C, (c+1)*I/C) with I = tiles *
// k_blocks: ranges differ by at most one k-block. A tile whose k-blocks fall to several CTAs is
// finished by the last of them to arrive: each writes its fp32 partial tile to a slot of the
// workspace and counts itself in; the last one adds every part in the order of the CTAs (so the
// result does not depend on who arrives last) and runs the epilogue. Nobody waits for anybody.
//
// A CTA's range starts in one tile and ends in another, so at most its first and its last tile are
// shared: each CTA needs two partial slots (slot 2c for its first tile, 2c + 1 for its last), and a
// tile's part p is CTA first_cta(tile) + p.
#pragma once

#include <cstdint>

#include "baton/config.hpp"

namespace baton {

struct StreamK {
  int64_t iterations = 0;  // tiles * k_blocks
  int k_blocks = 1;        // per tile
  int ctas = 1;            // persistent CTAs sharing them (1 <= ctas <= iterations)

  // The first iteration of CTA c (c == ctas: one past the last).
  BATON_HOST_DEVICE int64_t begin(int c) const { return int64_t(c) * iterations / ctas; }
  // The CTA that runs iteration x: the largest c with begin(c) <= x.
  BATON_HOST_DEVICE int cta_of(int64_t x) const { return int(((x + 1) * ctas - 1) / iterations); }
  // The CTAs that share the tile at `position`, and how many.
  BATON_HOST_DEVICE int first_cta(int position) const { return cta_of(int64_t(position) * k_blocks); }
  BATON_HOST_DEVICE int parts(int position) const {
    return cta_of(int64_t(position) * k_blocks + k_blocks - 1) - first_cta(position) + 1;
  }
  // The workspace slot of CTA c's partial of the tile at `position` (c must share that tile):
  // 2c when the tile is c's first, 2c + 1 when it is c's last.
  BATON_HOST_DEVICE int slot(int c, int position) const {
    return 2 * c + (begin(c) >= int64_t(position) * k_blocks ? 0 : 1);
  }
  // Partial slots a workspace needs.
  BATON_HOST_DEVICE int slots() const { return 2 * ctas; }
};

// One tile's share of a CTA's range: the tile at `position`, k-blocks [k_begin, k_begin + k_count).
struct StreamKSegment {
  int position = 0;
  int k_begin = 0;
  int k_count = 0;
  int part = 0;   // this CTA's index among the tile's CTAs
  int parts = 1;  // how many CTAs share the tile (1: this CTA runs the whole tile)
};

// The segments of one CTA's range, in order: `for (StreamKWalk w{sk, c}; w.next(s);) ...`.
struct StreamKWalk {
  StreamK sk;
  int cta = 0;
  int64_t x = -1, end = 0;
  BATON_HOST_DEVICE StreamKWalk(StreamK const& s, int c) : sk(s), cta(c), x(s.begin(c)), end(s.begin(c + 1)) {}
  BATON_HOST_DEVICE bool next(StreamKSegment& seg) {
    if (x >= end) return false;
    seg.position = int(x / sk.k_blocks);
    seg.k_begin = int(x - int64_t(seg.position) * sk.k_blocks);
    const int64_t tile_end = int64_t(seg.position + 1) * sk.k_blocks;
    seg.k_count = int((tile_end < end ? tile_end : end) - x);
    const int first = sk.first_cta(seg.position);
    seg.part = cta - first;
    seg.parts = sk.parts(seg.position);
    x += seg.k_count;
    return true;
  }
};

// The CTAs a stream-K GEMM of `tiles` tiles x `k_blocks` k-blocks runs with on `sms` CTAs at most:
// every CTA gets at least one k-block.
constexpr int stream_k_ctas(int64_t tiles, int k_blocks, int sms) {
  const int64_t it = tiles * int64_t(k_blocks);
  if (it <= 0 || sms <= 0) return 0;
  return int(it < sms ? it : sms);
}

}  // namespace baton
