// baton/stream_k.hpp — stream-K: the k-blocks of all of a GEMM's output tiles shared evenly among
// a fixed number of persistent CTAs, so that a grid of T tiles on S SMs takes T/S of a tile's time
// rather than ceil(T/S) (wave quantization: 96 tiles on 132 SMs leave 36 idle for the whole GEMM).
// Host- and device-side arithmetic only; the GEMM that uses it is baton/cutlass/sm90_gemm.cuh
// (GemmArguments::stream_k), and its host tests are tests/host/test_stream_k.cpp.
//
// Blocks and lanes. The tiles that read one block of the weights (a column block of B; a row block
// of A in the swapped form) are one *block* of `lanes` tiles, one per token tile. The work is the
// sequence of iterations x = block * k_blocks + k over the blocks and each block's k-blocks, shared
// among `groups` groups of `lanes` CTAs: group g takes [g*I/G, (g+1)*I/G) with I = blocks *
// k_blocks (ranges differ by at most one k-block), and lane l of the group runs that range on the
// block's tile l. So the CTAs that read the same weight k-block read it about the same time (they
// start together and run the same k-blocks; nothing holds them in step), and L2 can serve a weight
// byte to every token tile from one HBM read. Spread over the tiles one by one (lanes = 1 over a grid
// of several token tiles), the CTAs sharing a weight block run different k-blocks at any moment, and
// stream-K measured slower than persistent CTAs past one token tile; in lanes, faster (docs/mlp.md,
// "Stream-K" and "Stream-K in lanes").
//
// A tile whose k-blocks fall to several groups is finished by the last of its CTAs to arrive: each
// writes its fp32 partial tile to a slot of the workspace and counts itself in; the last one adds
// every part in the order of the groups (so the result does not depend on who arrives last) and
// runs the epilogue. Nobody waits for anybody.
//
// A group's range starts in one block and ends in another, so at most each CTA's first and last
// tile are shared: each CTA needs two partial slots (slot 2c for its first tile, 2c + 1 for its
// last), and part p of the tile at position b * lanes + l is CTA (first_group(b) + p) * lanes + l.
#pragma once

#include <cstdint>

#include "baton/config.hpp"

namespace baton {

struct StreamK {
  int64_t iterations = 0;  // blocks * k_blocks
  int k_blocks = 1;        // per tile
  int groups = 1;          // groups of `lanes` CTAs sharing them (1 <= groups <= iterations)
  int lanes = 1;           // tiles per block, CTAs per group (1: a block is one tile, a group one CTA)

  // CTAs: groups x lanes; CTA c is lane c % lanes of group c / lanes.
  BATON_HOST_DEVICE int ctas() const { return groups * lanes; }
  // The first iteration of group g (g == groups: one past the last).
  BATON_HOST_DEVICE int64_t begin(int g) const { return int64_t(g) * iterations / groups; }
  // The group that runs iteration x: the largest g with begin(g) <= x.
  BATON_HOST_DEVICE int group_of(int64_t x) const { return int(((x + 1) * groups - 1) / iterations); }
  // The groups that share block b, and how many.
  BATON_HOST_DEVICE int first_group(int b) const { return group_of(int64_t(b) * k_blocks); }
  BATON_HOST_DEVICE int parts(int b) const {
    return group_of(int64_t(b) * k_blocks + k_blocks - 1) - first_group(b) + 1;
  }
  // The tile position of lane l of block b, and back.
  BATON_HOST_DEVICE int position(int b, int l) const { return b * lanes + l; }
  BATON_HOST_DEVICE int block_of(int position) const { return position / lanes; }
  BATON_HOST_DEVICE int lane_of(int position) const { return position % lanes; }
  // The CTA that runs part p of the tile at `position`.
  BATON_HOST_DEVICE int cta_of_part(int position, int p) const {
    return (first_group(block_of(position)) + p) * lanes + lane_of(position);
  }
  // The workspace slot of CTA c's partial of the tile at `position` (c must share that tile):
  // 2c when the tile is c's first, 2c + 1 when it is c's last.
  BATON_HOST_DEVICE int slot(int c, int position) const {
    return 2 * c + (begin(c / lanes) >= int64_t(block_of(position)) * k_blocks ? 0 : 1);
  }
  // Partial slots a workspace needs.
  BATON_HOST_DEVICE int slots() const { return 2 * ctas(); }
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
  int group = 0, lane = 0;
  int64_t x = -1, end = 0;
  BATON_HOST_DEVICE StreamKWalk(StreamK const& s, int c)
      : sk(s), group(c / s.lanes), lane(c % s.lanes), x(s.begin(c / s.lanes)), end(s.begin(c / s.lanes + 1)) {}
  BATON_HOST_DEVICE bool next(StreamKSegment& seg) {
    if (x >= end) return false;
    const int b = int(x / sk.k_blocks);
    seg.position = sk.position(b, lane);
    seg.k_begin = int(x - int64_t(b) * sk.k_blocks);
    const int64_t block_end = int64_t(b + 1) * sk.k_blocks;
    seg.k_count = int((block_end < end ? block_end : end) - x);
    seg.part = group - sk.first_group(b);
    seg.parts = sk.parts(b);
    x += seg.k_count;
    return true;
  }
};

// The lanes of a stream-K GEMM whose grid has `token_tiles` tiles per weight block, on `sms` CTAs at
// most: every token tile when a group of them fits (1 <= token_tiles <= sms), else 1.
constexpr int stream_k_lanes(int64_t token_tiles, int sms) {
  return token_tiles >= 1 && token_tiles <= sms ? int(token_tiles) : 1;
}

// The CTAs a stream-K GEMM of `tiles` tiles x `k_blocks` k-blocks runs with on `sms` CTAs at most,
// `lanes` tiles per block (stream_k_lanes): whole groups of lanes, each group at least one k-block.
constexpr int stream_k_ctas(int64_t tiles, int k_blocks, int sms, int lanes = 1) {
  if (lanes < 1 || tiles % lanes != 0) return 0;
  const int64_t it = tiles / lanes * int64_t(k_blocks);
  const int64_t most = sms / lanes;
  if (it <= 0 || most <= 0) return 0;
  return int((it < most ? it : most) * lanes);
}

}  // namespace baton
