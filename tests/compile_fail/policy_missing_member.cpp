// EXPECT: must satisfy baton::SyncPolicy
// A user policy without for_each_wait/k_blocks is not a SyncPolicy: the Stage refuses it.
#include "baton/stage.hpp"

struct HalfAPolicy {
  baton::Grid producer_grid() const { return {}; }
  int num_semaphores() const { return 1; }
  int post_index(baton::Tile) const { return 0; }
};

baton::Stage<baton::RowMajor, baton::Outputs<>, baton::Inputs<HalfAPolicy>> s;
