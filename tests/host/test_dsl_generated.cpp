// The headers batonc generates at build time (baton_generate in tests/CMakeLists.txt, from the
// programs in tests/dsl/golden) compile, their static_asserts hold, and each edge's policy is sound
// against the edge's relation when baton::Chain-style validation runs it at the defaults and at
// other parameter values.
#include <gtest/gtest.h>

#if defined(BATON_HAVE_GENERATED)
#include <type_traits>

#include "baton/ops/mlp.hpp"
#include "attention.hpp"
#include "chain3.hpp"
#include "conv3x3.hpp"
#include "conv_stride2.hpp"
#include "gemm_row.hpp"
#include "grouping.hpp"
#include "mlp.hpp"
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
  static_assert(std::is_same_v<chain3::down_stage, baton::Stage<baton::RowMajor, baton::outputs<chain3::down_to_residual_policy>,
                                                                baton::inputs<chain3::up_to_down_policy>>>);
  static_assert(std::is_same_v<gemm_row::gemm1_stage, baton::Stage<baton::RowMajor, baton::outputs<gemm_row::gemm1_to_gemm2_policy>,
                                                                   baton::inputs<>>>);
}

// ops::Mlp's hand-written policies (RowPolicy / KBlockPolicy over footprint::GemmA, on the grids
// plan_mlp gives) against the relation batonc derives from the op's description (mlp.baton).
TEST(BatoncGenerated, TheMlpOpsHandWrittenPoliciesAreSoundAgainstItsDescription) {
  using namespace baton;
  for (int m : {1, 17, 128, 200, 1000, 2048}) {
    baton_gen::mlp::Params p;
    p.M = m;
    ops::MlpOptions o;
    o.policy = ops::mlp_policy::row;
    o.split1 = o.split2 = 1;
    auto plan = ops::plan_mlp(ops::MlpShape{m, p.H, p.F, ops::activation::gelu}, 132, o);
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

}  // namespace
#endif
