// EXPECT: this stage has no Outputs<...>; it is the last stage
// The last stage of a chain has nothing to publish: post() does not compile.
#include "baton/stage.hpp"

using P = baton::TilePolicy<baton::footprint::Identity>;
void f(const baton::Stage<baton::RowMajor, baton::Outputs<>, baton::Inputs<P>>& s) {
  baton::Assignment a;
  s.post(a);
}
