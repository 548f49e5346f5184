// EXPECT: (constraints not satisfied|TileOrder)
// An order must map (Grid, position) -> Tile.
#include "baton/stage.hpp"

struct NotAnOrder {
  int operator()(int pos) const { return pos; }
};
baton::Stage<NotAnOrder> s;
