// EXPECT: (constraints not satisfied|SyncPolicy)
// add_edge needs a SyncPolicy; a footprint alone is not one.
#include "baton/chain.hpp"

void f(baton::Chain& c) {
  (void)c.add_edge(0, 1, baton::footprint::Identity{}, baton::deps::one_to_one({2, 2, 1}));
}
