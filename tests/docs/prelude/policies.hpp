// The names docs/policies.md's blocks use: a GEMM A-operand edge and a policy for it.
#pragma once
#include <cstdio>

#include "baton/baton.hpp"

namespace doc {
struct policies_env {
  baton::footprint::GemmA fp{.rows = 256, .cols = 512, .prod_tile_m = 128, .prod_tile_n = 128,
                             .cons_tile_m = 128, .cons_tile_k = 64};
  baton::Grid consumer_grid{2, 4, 1};
  baton::KBlockPolicy<baton::footprint::GemmA> policy{fp.producer_grid(), fp};
};
}  // namespace doc
