// baton::StreamK (baton/stream_k.hpp): the partition of a GEMM's (tile, k-block) iterations among
// persistent CTAs. Every iteration is run by exactly one CTA, ranges differ by at most one k-block,
// a tile's parts are consecutive groups numbered from 0, no two partials of one run share a slot,
// and the lanes of a group run the same (block, k-block) iterations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "baton/stream_k.hpp"

namespace {

using baton::StreamK;
using baton::StreamKSegment;
using baton::StreamKWalk;

// Walks every CTA's range and checks the partition's invariants; `lanes` tiles per block.
void check_partition(int tiles, int k_blocks, int groups, int lanes = 1) {
  SCOPED_TRACE("tiles=" + std::to_string(tiles) + " k_blocks=" + std::to_string(k_blocks) +
               " groups=" + std::to_string(groups) + " lanes=" + std::to_string(lanes));
  ASSERT_EQ(tiles % lanes, 0);
  const StreamK sk{int64_t(tiles / lanes) * k_blocks, k_blocks, groups, lanes};
  ASSERT_EQ(sk.ctas(), groups * lanes);
  std::vector<int> runs(size_t(tiles) * size_t(k_blocks), 0);
  std::vector<std::vector<int>> parts_seen(static_cast<size_t>(tiles));
  std::set<int> slots;
  int64_t lo = INT64_MAX, hi = 0;
  // Per group, the (block, k) iterations of its lane 0: every lane must run the same ones.
  std::vector<std::vector<std::pair<int, int>>> group_work(static_cast<size_t>(groups));
  for (int c = 0; c < sk.ctas(); ++c) {
    int64_t mine = 0;
    int shared_segments = 0;
    std::vector<std::pair<int, int>> work;
    StreamKSegment s;
    for (StreamKWalk w{sk, c}; w.next(s);) {
      ASSERT_GE(s.position, 0);
      ASSERT_LT(s.position, tiles);
      ASSERT_EQ(sk.lane_of(s.position), c % lanes) << "a CTA runs only its own lane's tiles";
      ASSERT_GE(s.k_begin, 0);
      ASSERT_GT(s.k_count, 0);
      ASSERT_LE(s.k_begin + s.k_count, k_blocks);
      for (int k = s.k_begin; k < s.k_begin + s.k_count; ++k) {
        ++runs[size_t(s.position) * k_blocks + size_t(k)];
        work.emplace_back(sk.block_of(s.position), k);
      }
      mine += s.k_count;
      ASSERT_EQ(s.parts, sk.parts(sk.block_of(s.position)));
      ASSERT_EQ(sk.first_group(sk.block_of(s.position)) + s.part, c / lanes);
      ASSERT_EQ(sk.cta_of_part(s.position, s.part), c);
      if (s.parts == 1) {
        EXPECT_EQ(s.k_begin, 0);
        EXPECT_EQ(s.k_count, k_blocks);
      } else {
        ++shared_segments;
        parts_seen[size_t(s.position)].push_back(s.part);
        const int slot = sk.slot(c, s.position);
        EXPECT_TRUE(slot == 2 * c || slot == 2 * c + 1);
        EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " taken twice";
      }
    }
    EXPECT_LE(shared_segments, 2) << "cta " << c;
    if (c % lanes == 0)
      group_work[size_t(c / lanes)] = work;
    else
      EXPECT_EQ(work, group_work[size_t(c / lanes)]) << "cta " << c << " is not in step with its group";
    lo = std::min(lo, mine);
    hi = std::max(hi, mine);
  }
  EXPECT_LE(hi - lo, 1) << "ranges uneven";
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i], 1) << "iteration " << i;
  for (int t = 0; t < tiles; ++t) {
    auto& p = parts_seen[size_t(t)];
    if (p.empty()) continue;
    std::sort(p.begin(), p.end());
    ASSERT_EQ(int(p.size()), sk.parts(sk.block_of(t)));
    for (int i = 0; i < int(p.size()); ++i) EXPECT_EQ(p[size_t(i)], i);
  }
  for (int s : slots) EXPECT_LT(s, sk.slots());
}

TEST(StreamK, EveryIterationOnceRangesEvenPartsNumbered) {
  // Fewer tiles than CTAs (the wave-quantized shapes it is for), more tiles than CTAs, one tile,
  // one k-block, a CTA per iteration, and ragged divisions.
  for (auto [tiles, kb, ctas] : std::vector<std::tuple<int, int, int>>{
           {96, 96, 132}, {144, 192, 132}, {1, 40, 7}, {1, 1, 1}, {5, 1, 5}, {13, 7, 91}, {200, 40, 132},
           {43, 128, 132}, {3, 5, 2}, {1000, 3, 132}, {129, 64, 132}, {7, 100, 1}})
    check_partition(tiles, kb, ctas);
}

// Lanes: the row bands of one weight block run its k-blocks side by side, so the CTAs reading the
// same weight k-block read it at once. GPT-3's GEMM1 at 384 tokens (3 bands x 24 blocks of 256
// columns, 192 k-blocks: 44 groups of 3), at 768 (6 x 24: 22 groups), ragged bands and groups,
// one group, and more groups than blocks.
TEST(StreamK, LanesRunTheirBlockInStep) {
  for (auto [tiles, kb, groups, lanes] : std::vector<std::tuple<int, int, int, int>>{
           {72, 192, 44, 3}, {144, 192, 22, 6}, {27, 13, 14, 9}, {10, 7, 1, 5}, {8, 3, 5, 2}, {4, 1, 1, 4},
           {132, 64, 1, 132}, {66, 5, 13, 2}})
    check_partition(tiles, kb, groups, lanes);
}

TEST(StreamK, LanesAreTheTokenTilesWhenAGroupFits) {
  EXPECT_EQ(baton::stream_k_lanes(3, 132), 3);
  EXPECT_EQ(baton::stream_k_lanes(1, 132), 1);
  EXPECT_EQ(baton::stream_k_lanes(132, 132), 132);
  EXPECT_EQ(baton::stream_k_lanes(133, 132), 1);  // no group fits: tile by tile
  EXPECT_EQ(baton::stream_k_lanes(0, 132), 1);
  // Whole groups: 132 SMs hold 14 groups of 9 bands (126 CTAs), 44 of 3.
  EXPECT_EQ(baton::stream_k_ctas(9 * 24, 192, 132, 9), 126);
  EXPECT_EQ(baton::stream_k_ctas(3 * 24, 192, 132, 3), 132);
  // Fewer block iterations than groups: one group per iteration.
  EXPECT_EQ(baton::stream_k_ctas(4 * 2, 3, 132, 4), 24);
  // A grid that is not whole blocks of lanes is refused (0).
  EXPECT_EQ(baton::stream_k_ctas(10, 3, 132, 4), 0);
}

TEST(StreamK, GroupOfInvertsBegin) {
  const StreamK sk{96 * 96, 96, 132};
  for (int g = 0; g < sk.groups; ++g) {
    EXPECT_EQ(sk.group_of(sk.begin(g)), g);
    EXPECT_EQ(sk.group_of(sk.begin(g + 1) - 1), g);
  }
}

TEST(StreamK, CtasNeverExceedIterations) {
  EXPECT_EQ(baton::stream_k_ctas(96, 96, 132), 132);
  EXPECT_EQ(baton::stream_k_ctas(2, 3, 132), 6);
  EXPECT_EQ(baton::stream_k_ctas(0, 3, 132), 0);
  EXPECT_EQ(baton::stream_k_ctas(5, 5, 0), 0);
}

// The shape it is for: 96 tiles of 96 k-blocks on 132 CTAs run 69 or 70 k-blocks each, 0.73 of a
// tile, where one CTA per tile takes a whole tile's time with 36 SMs idle.
TEST(StreamK, WaveQuantizedShapeGetsAnEvenShare) {
  const StreamK sk{96 * 96, 96, 132};
  for (int c = 0; c < sk.groups; ++c) {
    const int64_t n = sk.begin(c + 1) - sk.begin(c);
    EXPECT_TRUE(n == 69 || n == 70) << n;
  }
  // Every tile is shared by two CTAs (69.8 < 96 < 2 * 69.8 + 1) and at most three.
  for (int t = 0; t < 96; ++t) {
    EXPECT_GE(sk.parts(t), 2);
    EXPECT_LE(sk.parts(t), 3);
  }
}

}  // namespace
