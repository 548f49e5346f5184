// A downstream project: find_package(baton) + baton::baton, then prove a policy sound.
#include <baton/baton.hpp>
#include <cstdio>

int main() {
  baton::Grid g{4, 8, 1};
  baton::TilePolicy<baton::footprint::Identity> p{g, {}};
  auto rep = baton::check_soundness(p, baton::deps::one_to_one(g), "consumer-edge");
  std::printf("%s\n", rep.summary().c_str());
  return rep.sound() ? 0 : 1;
}
