// The names docs/batonc.md's blocks use: the MLP op's generated policies and a shape.
#pragma once
#include "baton/ops/mlp_policies.hpp"

namespace doc {
namespace mlp_gen = ::baton::ops::mlp_gen;
struct batonc_env {
  int m = 128, hidden = 8192, ffn = 2752;
  mlp_gen::swiglu_up_to_swiglu_down_kblock_policy policy = mlp_gen::swiglu_up_to_swiglu_down_kblock();
};
}  // namespace doc
