// EXPECT: Outs must be baton::Outputs<Policy...>
// Passing a policy where Outputs<...> is expected (a stage wired with the wrong list).
#include "baton/stage.hpp"

using P = baton::TilePolicy<baton::footprint::Identity>;
baton::Stage<baton::RowMajor, P> s;
