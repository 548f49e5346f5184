// EXPECT: Outs must be baton::outputs<Policy...>
// Passing a policy where outputs<...> is expected (a stage wired with the wrong list).
#include "baton/stage.hpp"

using P = baton::TilePolicy<baton::footprint::Identity>;
baton::Stage<baton::RowMajor, P> s;
