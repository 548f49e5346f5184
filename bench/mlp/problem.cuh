// bench/mlp/problem.cuh — one MLP shape on the device: tensors, split-K, tile order, and the two
// GEMMs' arguments, grids and GEMM2's footprint on Y.
#pragma once

#include "mlp_gemms.cuh"

namespace baton_bench::mlp {

using namespace baton;


struct Problem {
  int m = 0, h = 0, f = 0;
  bf16 *x = nullptr, *w1 = nullptr, *w2 = nullptr, *y = nullptr, *z = nullptr;
  bool swiglu = false;
  bf16* t = nullptr;  // [m, 2f]: GEMM1's output before the separate SwiGLU kernel (baselines)
  int split1 = 1, split2 = 1;
  int group_m = 1;                      // tile order Grouped{group_m}
  void *sw1 = nullptr, *sw2 = nullptr;  // split-K workspaces (counters zeroed)
  Args1 args1() const {  // Y = GeLU(X W1^T)
    Args1 a{m, f, h, x, w1, y};
    a.split_k = split1;
    a.split_workspace = sw1;
    return a;
  }
  SwiArgs1 swi_args1() const {  // Y = SiLU(X Wg^T) * (X Wu^T): 2f columns computed, f written
    SwiArgs1 a{m, 2 * f, h, x, w1, y};
    a.split_k = split1;
    a.split_workspace = sw1;
    return a;
  }
  Args2 args2() const {  // Z = Y W2^T
    Args2 a{m, h, f, y, w2, z};
    a.split_k = split2;
    a.split_workspace = sw2;
    return a;
  }
  Grid g1() const { return swiglu ? sm90::tile_grid<SwiConfig1>(m, 2 * f) : sm90::tile_grid<Config1>(m, f); }
  Grid g2() const { return sm90::tile_grid<Config2>(m, h); }
  footprint::GemmA fp() const {  // GEMM2's A on Y's tiles
    return swiglu ? sm90::gemm_a_footprint<SwiConfig1, Config2>(m, f) : sm90::gemm_a_footprint<Config1, Config2>(m, f);
  }
  size_t sw1_bytes() const { return swiglu ? sm90::split_workspace_bytes(swi_args1()) : sm90::split_workspace_bytes(args1()); }
  size_t sw2_bytes() const { return sm90::split_workspace_bytes(args2()); }
  template <class Stage>
  result<StageLaunch> launch1(const Stage& s) const {
    return swiglu ? gemm1_launch(s, swi_args1()) : gemm1_launch(s, args1());
  }
};

}  // namespace baton_bench::mlp
