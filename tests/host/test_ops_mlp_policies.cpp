// baton::ops::Mlp takes its policies from include/baton/ops/mlp_policies.hpp, the header batonc
// generates from include/baton/ops/mlp.baton (CI's batonc.stale.* test fails when it is stale).
// Here: for the presets and ragged shapes far outside the parameter values batonc proved them for,
// the generated policies sit on the grids plan_mlp gives, walk GEMM2's k-blocks, and are sound
// against the relation the kernels themselves imply (deps::gemm_a of the sm90 GEMMs' tiles): the
// same check Chain::validate makes before the op's first launch.
#include <gtest/gtest.h>

#include <string>

#include "baton/dependency.hpp"
#include "baton/ops/mlp.hpp"
#include "baton/ops/mlp_policies.hpp"

namespace {
using namespace baton;

struct Shape {
  int m, hidden, ffn;
  ops::Activation act;
};

// GEMM2's A operand (Y) on GEMM1's output tiles, as sm90::gemm_a_footprint gives it for the op's
// 128x128x64 GEMMs: a SwiGLU GEMM1 tile yields 64 columns of Y.
footprint::GemmA kernel_footprint(const Shape& s) {
  const int out_n = s.act == ops::Activation::swiglu ? ops::kMlpTileN / 2 : ops::kMlpTileN;
  return footprint::GemmA{s.m, s.ffn, ops::kMlpTileM, out_n, ops::kMlpTileM, ops::kMlpTileK};
}

ops::mlp_gen::Params params(const Shape& s) { return ops::mlp_gen::Params{.M = s.m, .H = s.hidden, .F = s.ffn}; }

template <class P>
std::string check(const P& policy, const Shape& s, const ops::MlpPlan& plan) {
  const footprint::GemmA fp = kernel_footprint(s);
  const DependencyRelation rel = deps::gemm_a(fp, plan.gemm2);
  if (!(policy.producer_grid() == plan.gemm1)) return "producer grid " + to_string(policy.producer_grid()) + " != " + to_string(plan.gemm1);
  if (policy.k_blocks() != fp.k_blocks()) return "k-blocks " + std::to_string(policy.k_blocks()) + " != " + std::to_string(fp.k_blocks());
  const CheckReport r = check_soundness(policy, rel, "gemm1 -> gemm2");
  return r.sound() ? std::string() : r.summary();
}

std::vector<Shape> shapes() {
  std::vector<Shape> v;
  for (int m : {1, 2, 17, 64, 127, 128, 129, 300, 1000, 2048}) {
    v.push_back({m, 12288, 6144, ops::Activation::gelu});    // GPT-3
    v.push_back({m, 8192, 2752, ops::Activation::swiglu});   // LLaMA
    v.push_back({m, 1000, 712, ops::Activation::gelu});      // ragged: F not a multiple of 64 or 128
    v.push_back({m, 1032, 440, ops::Activation::swiglu});    // ragged SwiGLU
  }
  return v;
}

TEST(OpsMlpGeneratedPolicies, SitOnThePlannedGridsAndAreSoundAgainstTheKernelsRelation) {
  for (const Shape& s : shapes()) {
    for (ops::MlpPolicy pol : {ops::MlpPolicy::row, ops::MlpPolicy::kblock}) {
      ops::MlpOptions o;
      o.policy = pol;
      o.gemm1.split_k = o.gemm2.split_k = 1;
      auto plan = ops::plan_mlp(ops::MlpShape{s.m, s.hidden, s.ffn, s.act}, 132, o);
      ASSERT_TRUE(plan.ok()) << plan.error().to_string();
      const bool swiglu = s.act == ops::Activation::swiglu;
      const std::string what = "m=" + std::to_string(s.m) + " h=" + std::to_string(s.hidden) + " f=" +
                               std::to_string(s.ffn) + (swiglu ? " swiglu" : " gelu");
      const auto p = params(s);
      if (pol == ops::MlpPolicy::row)
        EXPECT_EQ(check(swiglu ? ops::mlp_gen::swiglu_up_to_swiglu_down_row(p) : ops::mlp_gen::gelu_up_to_gelu_down_row(p),
                        s, plan.value()), "") << what;
      else
        EXPECT_EQ(check(swiglu ? ops::mlp_gen::swiglu_up_to_swiglu_down_kblock(p) : ops::mlp_gen::gelu_up_to_gelu_down_kblock(p),
                        s, plan.value()), "") << what;
    }
  }
}

// The check above can fail: a GeLU edge's policy (Y in 128-column tiles) on a SwiGLU chain (64
// columns per GEMM1 tile) sits on the wrong grid, and with the SwiGLU grid forced under it, it
// waits for the wrong tiles; the checker names the read no wait covers.
TEST(OpsMlpGeneratedPolicies, TheWrongEdgesPolicyIsRejected) {
  const Shape s{256, 8192, 2752, ops::Activation::swiglu};
  ops::MlpOptions o;
  o.policy = ops::MlpPolicy::kblock;
  o.gemm1.split_k = o.gemm2.split_k = 1;
  auto plan = ops::plan_mlp(ops::MlpShape{s.m, s.hidden, s.ffn, s.act}, 132, o);
  ASSERT_TRUE(plan.ok());
  auto gelu = ops::mlp_gen::gelu_up_to_gelu_down_kblock(params(s));
  EXPECT_NE(check(gelu, s, plan.value()).find("producer grid"), std::string::npos);
  gelu.producer = plan.value().gemm1;
  const std::string why = check(gelu, s, plan.value());
  EXPECT_NE(why, "");
  EXPECT_NE(why.find("gemm1 -> gemm2"), std::string::npos) << why;
}

}  // namespace
