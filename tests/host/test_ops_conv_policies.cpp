// baton::ops::Conv2dChain takes its policies from include/baton/ops/conv/conv_chain_policies.hpp,
// the header batonc generates from include/baton/ops/conv/conv_chain.baton (CI's batonc.stale.*
// test fails when it is stale). Here: for a dense sweep of shapes far outside the parameter values
// batonc proved them for (batches, odd and tiny images, channel counts that are not multiples of
// 64), the generated tile policy (per tile and per k-block) is sound against the exact tap-by-tap
// relation (deps::conv_exact, the header's conv1_to_conv2_exact_relation), and waiting per k-block
// never makes a consumer tile wait for more producer tiles before its first load. And the check is
// not vacuous: cuSync's Conv2DTileSync (consumer tile m waits for producer row m only: the 3x3
// halo forgotten) is caught, with the producer tile no wait covers named.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/footprint.hpp"
#include "baton/ops/conv/conv_chain_policies.hpp"
#include "baton/policy.hpp"
#include "host_test_printers.hpp"

namespace {
using namespace baton;
namespace conv_gen = ops::conv_gen;

std::string name_of(const conv_gen::Params& p, bool per_k) {
  return "conv1 -> conv2 N=" + std::to_string(p.N) + " H=" + std::to_string(p.H) + " W=" + std::to_string(p.W) +
         " C=" + std::to_string(p.C) + " K=" + std::to_string(p.K) + (per_k ? " per k-block" : " per tile");
}

// Producer tiles a consumer waits for before its first k-block's loads, summed over consumer tiles
// (CheckReport counts every wait of a pass, not these; the policy's own waits at k = 0 give them).
template <SyncPolicy P>
int64_t start_waits(const P& policy, Grid consumer) {
  int64_t n = 0;
  for (int i = 0; i < int(consumer.size()); ++i)
    policy.for_each_wait(consumer.tile(i), 0, [&](WaitSpec) {
      ++n;
      return true;
    });
  return n;
}

// What cuSync's Conv2DTileSync waits for: consumer tile (m, n) at k-block k waits only for producer
// tile (m, cb), its own 128 pixels' tile; the taps' reads one image row up or down (and into the
// neighbouring tiles) are forgotten. The k-blocks are the conv's (9 taps x channel blocks).
struct SameTileOnly {
  footprint::GemmA rows;  // rows N*H*W, cols K, 128/64/128/64 tiles
  int taps = 9;
  constexpr int channel_blocks() const { return rows.k_blocks(); }
  constexpr int k_blocks() const { return taps * channel_blocks(); }
  constexpr TileRect rect(Tile t, int k) const { return rows.rect(t, k % channel_blocks()); }
  constexpr TileRect rect_all(Tile t) const { return rows.rect_all(t); }
};
static_assert(Footprint<SameTileOnly>);

// The reads of `rel` enumerated once into a table, as a relation: deps::conv_exact walks the 128
// pixels of a tile per (tile, k-block) read, and the sweep checks each relation several times.
struct ReadTable {
  int k_blocks = 1;
  std::vector<int64_t> begin;  // per (consumer tile, k-block): its reads in tiles[begin[i], begin[i + 1])
  std::vector<Tile> tiles;
};
DependencyRelation tabled(const DependencyRelation& rel) {
  auto t = std::make_shared<ReadTable>();
  t->k_blocks = rel.k_blocks;
  for (int ci = 0; ci < int(rel.consumer.size()); ++ci)
    for (int k = 0; k < rel.k_blocks; ++k) {
      t->begin.push_back(int64_t(t->tiles.size()));
      rel.reads(rel.consumer.tile(ci), k, [&](Tile pt) { t->tiles.push_back(pt); });
    }
  t->begin.push_back(int64_t(t->tiles.size()));
  const Grid consumer = rel.consumer;
  return deps::custom(
      rel.producer, rel.consumer, rel.k_blocks,
      [t, consumer](Tile c, int k, const std::function<void(Tile)>& emit) {
        const size_t i = size_t(consumer.linear(c)) * size_t(t->k_blocks) + size_t(k);
        for (int64_t j = t->begin[i]; j < t->begin[i + 1]; ++j) emit(t->tiles[size_t(j)]);
      },
      rel.description + " (tabled)");
}

// Conv1's input channels C change conv1's k-loop only: the edge (conv2 reading A, K channels) is
// the same for every C. The relation is enumerated once per (N, H, W, K) and, for each C, the
// header's relation is checked to be that one (shape, and every read of a few consumer tiles)
// before the policies built at that C are proven against it.
TEST(OpsConvGeneratedPolicies, TilePolicyIsSoundPerTileAndPerKBlockOverADenseSweep) {
  const auto t0 = std::chrono::steady_clock::now();
  int shapes = 0, over_synchronized = 0;
  int64_t reads = 0;
  for (int n : {1, 2, 3, 4, 8, 32})
    for (auto [h, w] : std::vector<std::pair<int, int>>{{7, 7}, {14, 14}, {28, 28}, {56, 56}, {9, 13}, {3, 5}})
      for (int k : {8, 40, 64, 72, 128, 512}) {
        std::optional<DependencyRelation> table;
        for (int c : {8, 40, 64, 72, 128, 512}) {
          if (int64_t(n) * h * w * std::max(c, k) > (int64_t(1) << 26)) continue;
          const conv_gen::Params p{.N = n, .H = h, .W = w, .C = c, .K = k};
          const DependencyRelation rel = conv_gen::conv1_to_conv2_exact_relation(p);
          ASSERT_EQ(rel.producer, conv_gen::conv1_grid(p)) << name_of(p, false);
          ASSERT_EQ(rel.consumer, conv_gen::conv2_grid(p)) << name_of(p, false);
          ASSERT_EQ(rel.k_blocks, conv_gen::conv2_k_blocks(p)) << name_of(p, false);
          if (!table) table = tabled(rel);
          ASSERT_EQ(table->consumer, rel.consumer);
          for (int ci : {0, int(rel.consumer.size()) / 2, int(rel.consumer.size()) - 1})
            for (int kb = 0; kb < rel.k_blocks; ++kb) {
              std::vector<Tile> a, b;
              rel.reads(rel.consumer.tile(ci), kb, [&](Tile t) { a.push_back(t); });
              table->reads(rel.consumer.tile(ci), kb, [&](Tile t) { b.push_back(t); });
              ASSERT_EQ(a, b) << name_of(p, false) << " consumer tile " << ci << " k-block " << kb;
            }
          int64_t starts[2] = {0, 0};
          for (bool per_k : {false, true}) {
            const conv_gen::conv1_to_conv2_tile_policy policy{conv_gen::conv1_grid(p), conv_gen::conv1_to_conv2_footprint(p),
                                                              per_k};
            const std::string name = name_of(p, per_k);
            const CheckReport r = check_soundness(policy, *table, name);
            EXPECT_TRUE(r.sound()) << name << ": " << r.summary();
            if (r.over_sync_pairs > 0 && over_synchronized++ == 0)
              std::printf("first over-synchronized (sound) shape: %s: %s\n", name.c_str(), r.summary().c_str());
            reads += r.reads_checked;
            starts[per_k] = start_waits(policy, rel.consumer);
          }
          EXPECT_LE(starts[1], starts[0]) << name_of(p, true) << ": waits before the first load per k-block vs per tile";
          ++shapes;
        }
      }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("conv chain sweep: %d shapes x {per tile, per k-block} sound (%d checks over-synchronized), %lld reads "
              "checked, %.1f s\n",
              shapes, over_synchronized, static_cast<long long>(reads), s);
  EXPECT_GT(shapes, 1000);
}

TEST(OpsConvGeneratedPolicies, SameTileOnlyPolicyLikeConv2DTileSyncIsUnsound) {
  const conv_gen::Params p{.N = 2, .H = 14, .W = 14, .C = 64, .K = 64};
  const int rows = p.N * p.H * p.W;
  const SameTileOnly fp{footprint::GemmA{rows, p.K, 128, 64, 128, 64}};
  const DependencyRelation rel = conv_gen::conv1_to_conv2_exact_relation(p);
  ASSERT_EQ(fp.k_blocks(), rel.k_blocks);

  // Per k-block (TilePolicy, as Conv2DTileSync waits), and once per tile on the whole row
  // (RowPolicy): both only on the consumer's own row of producer tiles.
  const KBlockPolicy<SameTileOnly> tile{conv_gen::conv1_grid(p), fp};
  const RowPolicy<SameTileOnly> row{conv_gen::conv1_grid(p), fp, false};
  for (const CheckReport& r : {check_soundness(tile, rel, "conv1 -> conv2 same tile only"),
                               check_soundness(row, rel, "conv1 -> conv2 same row only")}) {
    std::printf("%s\n", r.summary().c_str());
    ASSERT_FALSE(r.sound());
    EXPECT_EQ(r.result.code(), errc::unsound_policy) << r.summary();
    EXPECT_NE(r.result.message().find("reads producer tile"), std::string::npos) << r.summary();
    ASSERT_TRUE(r.counterexample.has_value());
    EXPECT_NE(r.counterexample->producer.m, r.counterexample->consumer.m) << r.summary();
  }

  // The generated policies at the same shape are sound, so the difference is the halo.
  EXPECT_TRUE(check_soundness(conv_gen::conv1_to_conv2_tile(p), rel).sound());
  EXPECT_TRUE(check_soundness(conv_gen::conv1_to_conv2(p), rel).sound());
}

}  // namespace
