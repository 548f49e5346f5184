// EXPECT: input index out of range
// Waiting on input 1 of a stage that consumes one edge.
#include "baton/stage.hpp"

using P = baton::TilePolicy<baton::footprint::Identity>;
bool f(const baton::Stage<baton::RowMajor, baton::Outputs<>, baton::Inputs<P>>& s) {
  baton::Assignment a;
  return s.wait_input_leader<1>(a, 0);
}
