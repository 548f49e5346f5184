// The headers batonc generates at build time (baton_generate in tests/CMakeLists.txt, from the
// programs in tests/dsl/golden) compile, their static_asserts hold, and each edge's policy is sound
// against the edge's relation when baton::Chain-style validation runs it at the defaults and at
// other parameter values.
#include <gtest/gtest.h>

#if defined(BATON_HAVE_GENERATED)
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "baton/ops/mlp.hpp"
#include "attention.hpp"
#include "causal_attention.hpp"
#include "chain3.hpp"
#include "conv3x3.hpp"
#include "conv_stride2.hpp"
#include "gemm_row.hpp"
#include "grouping.hpp"
#include "mlp.hpp"
#include "resnet_block.hpp"
#include "resnet_downsample.hpp"
#include "swiglu.hpp"
#include "transposed.hpp"

namespace {

template <class P>
void expect_sound(const P& policy, const baton::DependencyRelation& rel) {
  const baton::CheckReport r = baton::check_soundness(policy, rel, rel.description);
  EXPECT_TRUE(r.sound()) << r.summary();
}

TEST(BatoncGenerated, PoliciesAreSoundAtTheDefaults) {
  using namespace baton_gen;
  expect_sound(gemm_row::gemm1_to_gemm2(), gemm_row::gemm1_to_gemm2_relation());
  expect_sound(swiglu::gate_up_to_down(), swiglu::gate_up_to_down_relation());
  expect_sound(conv3x3::conv1_to_conv2(), conv3x3::conv1_to_conv2_relation());
  expect_sound(conv_stride2::pointwise_to_down(), conv_stride2::pointwise_to_down_relation());
  expect_sound(attention::qkv_to_attention(), attention::qkv_to_attention_relation());
  expect_sound(transposed::produce_to_transpose(), transposed::produce_to_transpose_relation());
  expect_sound(chain3::up_to_down(), chain3::up_to_down_relation());
  expect_sound(chain3::down_to_residual(), chain3::down_to_residual_relation());
  expect_sound(grouping::produce_to_reduce(), grouping::produce_to_reduce_relation());
  // The other sound candidates are emitted as alternatives.
  expect_sound(gemm_row::gemm1_to_gemm2_row(), gemm_row::gemm1_to_gemm2_relation());
  expect_sound(gemm_row::gemm1_to_gemm2_tile(), gemm_row::gemm1_to_gemm2_relation());
  expect_sound(mlp::gemm1_to_gemm2_row(), mlp::gemm1_to_gemm2_relation());
  static_assert(std::is_same_v<mlp::gemm1_to_gemm2_row_policy, baton::RowPolicy<baton::footprint::GemmA>>);
}

TEST(BatoncGenerated, PoliciesFollowTheParameters) {
  using namespace baton_gen;
  for (int m : {1, 17, 129, 1000, 2048}) {
    gemm_row::Params p;
    p.M = m;
    EXPECT_EQ(gemm_row::gemm1_grid(p).m, (m + 127) / 128);
    expect_sound(gemm_row::gemm1_to_gemm2(p), gemm_row::gemm1_to_gemm2_relation(p));
  }
  conv3x3::Params c;
  c.H = 30;
  c.W = 17;
  expect_sound(conv3x3::conv1_to_conv2(c), conv3x3::conv1_to_conv2_relation(c));
  // The generated types are the ones batonc chose (see the .explain files).
  // GEMM-shaped edges are lowered to footprint::GemmA; the others keep dsl::AffineFootprint.
  static_assert(std::is_same_v<gemm_row::gemm1_to_gemm2_policy, baton::KBlockPolicy<baton::footprint::GemmA>>);
  static_assert(std::is_same_v<conv3x3::conv1_to_conv2_policy, baton::KBlockPolicy<baton::dsl::AffineFootprint>>);
  static_assert(std::is_same_v<transposed::produce_to_transpose_policy, baton::TilePolicy<baton::dsl::AffineFootprint>>);
  static_assert(std::is_same_v<grouping::produce_to_reduce_policy, baton::GroupPolicy<baton::dsl::AffineFootprint>>);
  // Stage types wire the policies: chain3's middle stage waits on one edge and posts for the next.
  static_assert(std::is_same_v<chain3::down_stage, baton::Stage<baton::RowMajor, baton::Outputs<chain3::down_to_residual_policy>,
                                                                baton::Inputs<chain3::up_to_down_policy>>>);
  static_assert(std::is_same_v<gemm_row::gemm1_stage, baton::Stage<baton::RowMajor, baton::Outputs<gemm_row::gemm1_to_gemm2_policy>,
                                                                   baton::Inputs<>>>);
}

// ops::Mlp's hand-written policies (RowPolicy / KBlockPolicy over footprint::GemmA, on the grids
// plan_mlp gives) against the relation batonc derives from the op's description (mlp.baton).
TEST(BatoncGenerated, TheMlpOpsHandWrittenPoliciesAreSoundAgainstItsDescription) {
  using namespace baton;
  for (int m : {1, 17, 128, 200, 1000, 2048}) {
    baton_gen::mlp::Params p;
    p.M = m;
    ops::MlpOptions o;
    o.policy = ops::MlpPolicy::row;
    o.gemm1.split_k = o.gemm2.split_k = 1;
    auto plan = ops::plan_mlp(ops::MlpShape{m, p.H, p.F, ops::Activation::gelu}, 132, o);
    ASSERT_TRUE(plan.ok()) << plan.error().to_string();
    EXPECT_EQ(plan.value().gemm1, baton_gen::mlp::gemm1_grid(p));
    EXPECT_EQ(plan.value().gemm2, baton_gen::mlp::gemm2_grid(p));
    const footprint::GemmA fp{m, p.F, 128, 128, 128, 64};  // sm90::gemm_a_footprint of the op's 128x128x64 GEMMs
    const DependencyRelation rel = baton_gen::mlp::gemm1_to_gemm2_relation(p);
    expect_sound(RowPolicy<footprint::GemmA>{plan.value().gemm1, fp}, rel);
    expect_sound(KBlockPolicy<footprint::GemmA>(plan.value().gemm1, fp), rel);
    expect_sound(baton_gen::mlp::gemm1_to_gemm2(p), rel);
  }
}

// The C++ checker proves generated policies against relations given apart from the maps: the
// library's exact ones, which the headers emit as <edge>_exact_relation (from the program's
// `relation` lines), and a caller's own callback (deps::custom).
TEST(BatoncGenerated, PoliciesAreSoundAgainstTheLibrarysExactRelations) {
  using namespace baton_gen;
  for (int h : {14, 28, 56}) {
    resnet_block::Params p;
    p.H = p.W = h;
    p.N = h == 14 ? 3 : 1;  // '@conv' skips the taps that cross from one image to the next
    // The maps ('@conv') are exactly conv_exact: nothing over-read at image-row ends or seams.
    auto diff = baton::deps::compare(resnet_block::conv1_to_conv2_relation(p), resnet_block::conv1_to_conv2_exact_relation(p));
    ASSERT_TRUE(diff.ok()) << diff.error().to_string();
    EXPECT_TRUE(diff.value().same()) << diff.value().missing << " missing, " << diff.value().extra << " extra";
    expect_sound(resnet_block::conv1_to_conv2(p), resnet_block::conv1_to_conv2_exact_relation(p));
    expect_sound(resnet_block::conv1_to_conv2_row(p), resnet_block::conv1_to_conv2_exact_relation(p));
  }
  // The downsampling block: conv1 (3x3, stride 2, pad 1) and the projection (1x1, stride 2) read x
  // through strided taps, conv2 (3x3, stride 1) at the output's size; odd images and batches too.
  for (auto [n, h, w] : {std::tuple{1, 56, 56}, std::tuple{2, 15, 13}, std::tuple{3, 9, 28}}) {
    resnet_downsample::Params p;
    p.N = n, p.H = h, p.W = w;
    p.P = (h + 2 - 3) / 2 + 1, p.Q = (w + 2 - 3) / 2 + 1;
    for (auto [maps, exact] : {std::pair{resnet_downsample::prev_to_conv1_relation(p), resnet_downsample::prev_to_conv1_exact_relation(p)},
                               std::pair{resnet_downsample::prev_to_proj_relation(p), resnet_downsample::prev_to_proj_exact_relation(p)},
                               std::pair{resnet_downsample::conv1_to_conv2_relation(p), resnet_downsample::conv1_to_conv2_exact_relation(p)}}) {
      auto diff = baton::deps::compare(maps, exact);
      ASSERT_TRUE(diff.ok()) << diff.error().to_string();
      EXPECT_TRUE(diff.value().same()) << exact.description << ": " << diff.value().missing << " missing, " << diff.value().extra << " extra";
    }
    expect_sound(resnet_downsample::prev_to_conv1(p), resnet_downsample::prev_to_conv1_exact_relation(p));
    expect_sound(resnet_downsample::prev_to_proj(p), resnet_downsample::prev_to_proj_exact_relation(p));
    expect_sound(resnet_downsample::conv1_to_conv2(p), resnet_downsample::conv1_to_conv2_exact_relation(p));
    expect_sound(resnet_downsample::proj_to_conv2(p), resnet_downsample::proj_to_conv2_relation(p));
  }
  for (int t : {128, 300, 1024, 2048}) {
    causal_attention::Params p;
    p.T = t;
    expect_sound(causal_attention::qkv_to_attention(p), causal_attention::qkv_to_attention_exact_relation(p));
    expect_sound(causal_attention::attention_to_oproj(p), causal_attention::attention_to_oproj_exact_relation(p));
    // A tile's own k-blocks: key blocks up to its query block.
    EXPECT_EQ(causal_attention::attention_k_blocks_of(baton::Tile{0, 3, 0}, p), 1);
    EXPECT_EQ(causal_attention::attention_k_blocks_of(baton::Tile{(t - 1) / 128, 0, 0}, p), causal_attention::attention_k_blocks(p));
  }
  static_assert(std::is_same_v<causal_attention::attention_to_oproj_policy, baton::KBlockPolicy<baton::footprint::GemmA>>);
}

// The [Q|K|V] edge waits on the union of its three reads' boxes: each query tile's first k-block
// waits for 3 producer tiles (its Q block, key block 0's K and V), and the union is exactly the
// library's causal relation on every k-block a tile walks.
TEST(BatoncGenerated, AttentionOverQkvWaitsForThreeProducerTilesToStart) {
  using namespace baton_gen;
  static_assert(std::is_same_v<causal_attention::qkv_to_attention_policy, baton::dsl::BoxesPolicy<baton::dsl::Grouping::tile>>);
  // The downsampling block: conv1 (3x3, stride 2, pad 1) and the projection (1x1, stride 2) read x
  // through strided taps, conv2 (3x3, stride 1) at the output's size; odd images and batches too.
  for (auto [n, h, w] : {std::tuple{1, 56, 56}, std::tuple{2, 15, 13}, std::tuple{3, 9, 28}}) {
    resnet_downsample::Params p;
    p.N = n, p.H = h, p.W = w;
    p.P = (h + 2 - 3) / 2 + 1, p.Q = (w + 2 - 3) / 2 + 1;
    for (auto [maps, exact] : {std::pair{resnet_downsample::prev_to_conv1_relation(p), resnet_downsample::prev_to_conv1_exact_relation(p)},
                               std::pair{resnet_downsample::prev_to_proj_relation(p), resnet_downsample::prev_to_proj_exact_relation(p)},
                               std::pair{resnet_downsample::conv1_to_conv2_relation(p), resnet_downsample::conv1_to_conv2_exact_relation(p)}}) {
      auto diff = baton::deps::compare(maps, exact);
      ASSERT_TRUE(diff.ok()) << diff.error().to_string();
      EXPECT_TRUE(diff.value().same()) << exact.description << ": " << diff.value().missing << " missing, " << diff.value().extra << " extra";
    }
    expect_sound(resnet_downsample::prev_to_conv1(p), resnet_downsample::prev_to_conv1_exact_relation(p));
    expect_sound(resnet_downsample::prev_to_proj(p), resnet_downsample::prev_to_proj_exact_relation(p));
    expect_sound(resnet_downsample::conv1_to_conv2(p), resnet_downsample::conv1_to_conv2_exact_relation(p));
    expect_sound(resnet_downsample::proj_to_conv2(p), resnet_downsample::proj_to_conv2_relation(p));
  }
  for (int t : {128, 300, 1024, 2048}) {
    causal_attention::Params p;
    p.T = t;
    const auto pol = causal_attention::qkv_to_attention(p);
    const baton::Grid cg = causal_attention::attention_grid(p);
    for (int i = 0; i < int(cg.size()); ++i) {
      int waits = 0;
      pol.for_each_wait(cg.tile(i), 0, [&](baton::WaitSpec) { return ++waits, true; });
      EXPECT_EQ(waits, 3) << "T = " << t << ", tile " << baton::to_string(cg.tile(i));
    }
    // The maps' relation (from_boxes) against the exact one, on the k-blocks each tile walks.
    const baton::DependencyRelation maps = causal_attention::qkv_to_attention_relation(p);
    const baton::DependencyRelation exact = causal_attention::qkv_to_attention_exact_relation(p);
    const baton::DependencyRelation own = baton::deps::custom(
        maps.producer, maps.consumer, maps.k_blocks,
        [&](baton::Tile c, int k, const std::function<void(baton::Tile)>& emit) {
          if (k < causal_attention::attention_k_blocks_of(c, p)) maps.reads(c, k, emit);
        },
        "maps, own k-blocks");
    auto diff = baton::deps::compare(own, exact);
    ASSERT_TRUE(diff.ok()) << diff.error().to_string();
    EXPECT_TRUE(diff.value().same()) << diff.value().missing << " missing, " << diff.value().extra << " extra";
    expect_sound(pol, exact);
    expect_sound(causal_attention::qkv_to_attention_row_k(p), exact);
  }
}

TEST(BatoncGenerated, TheCheckerCatchesAForgottenHaloAndAcceptsACallerRelation) {
  using namespace baton;
  // The forgotten halo: conv2's maps without the tap shift (each k-block reads only its own 128
  // pixels). The per-k-block policy over them is sound against those maps and unsound against
  // conv_exact, which a tile at an image's inner rows reads from the tiles next to it.
  const baton_gen::resnet_block::Params p;
  dsl::AffineFootprint no_halo = baton_gen::resnet_block::conv1_to_conv2_footprint(p);
  no_halo.access[0].dim[0].img_h = no_halo.access[0].dim[0].img_w = 0;  // '@conv' dropped: no tap shifts
  const KBlockPolicy<dsl::AffineFootprint> forgot{baton_gen::resnet_block::conv1_grid(p), no_halo};
  expect_sound(forgot, deps::from_footprint(forgot.producer_grid(), baton_gen::resnet_block::conv2_grid(p), no_halo, "no halo"));
  const CheckReport r = check_soundness(forgot, baton_gen::resnet_block::conv1_to_conv2_exact_relation(p), "conv1 -> conv2");
  ASSERT_FALSE(r.sound());
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_NE(r.counterexample->producer, r.counterexample->consumer);  // a neighbour's pixels

  // A caller's callback: the causal relation written by hand agrees with the library's, and the
  // generated policy is proven against it.
  const baton_gen::causal_attention::Params cp;
  const CausalAttentionShape s{.seq = cp.T, .cols = 3 * cp.NH * cp.D, .head_dim = cp.D, .q_col = 0, .k_col = cp.NH * cp.D,
                               .v_col = 2 * cp.NH * cp.D, .head_stride = cp.D, .prod_tile_m = 128, .prod_tile_n = 128,
                               .block_m = 128, .block_n = 128};
  const Grid pg = baton_gen::causal_attention::qkv_grid(cp), cg = baton_gen::causal_attention::attention_grid(cp);
  const DependencyRelation mine = deps::custom(
      pg, cg, s.k_blocks(),
      [&](Tile t, int j, const std::function<void(Tile)>& emit) {
        if (j > t.m) return;  // key block j after query block m: future keys only (block_m == block_n)
        for (int col : {s.q_col, s.k_col, s.v_col}) emit(Tile{col == s.q_col ? t.m : j, (col + t.n * s.head_stride) / s.prod_tile_n, t.z});
      },
      "causal, by hand");
  auto diff = deps::compare(mine, deps::causal_attention(s, cg));
  ASSERT_TRUE(diff.ok()) << diff.error().to_string();
  EXPECT_TRUE(diff.value().same()) << diff.value().missing << " missing, " << diff.value().extra << " extra";
  expect_sound(baton_gen::causal_attention::qkv_to_attention(cp), mine);
}

}  // namespace
#endif
