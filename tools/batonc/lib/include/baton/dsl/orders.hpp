// baton/dsl/orders.hpp — the tile order each stage walks (host only).
//
// Owns choose_orders() (each stage's OrderChoice and why) and need_cost(), the cost it compares
// for a producer's row- and column-major orders.
// Rules: decided at the default binding, consumers before producers (reverse topological order);
// an edge that waits on the union of its read boxes is costed on those boxes, else on their
// bounding box; a tie goes to row-major.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/lowering.hpp"
#include "baton/dsl/model.hpp"
#include "baton/order.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

// The tile at position pos of grid g in order o.
inline Tile order_tile(const OrderChoice& o, Grid g, int pos) {
  if (o.kind == "column") return ColumnMajor{}(g, pos);
  if (o.kind == "grouped") return Grouped{int(o.group)}(g, pos);
  return RowMajor{}(g, pos);
}
// boxes: the consumer waits on the union of fp's boxes (BoxesPolicy), else on their bounding box.
inline double need_cost(const AffineFootprint& fp, bool boxes, Grid pg, Grid cg, bool row_major, const OrderChoice& consumer_order) {
  std::vector<int> pos(size_t(pg.size()));
  for (int i = 0; i < int(pg.size()); ++i) {
    const Tile t = row_major ? RowMajor{}(pg, i) : ColumnMajor{}(pg, i);
    pos[size_t(pg.linear(t))] = i;
  }
  double total = 0;
  int ready = 0;  // the consumer runs in order: it cannot be ready before the one before it
  for (int i = 0; i < int(cg.size()); ++i) {
    const Tile t = order_tile(consumer_order, cg, i);
    TileRect box[AffineFootprint::kMaxBoxes] = {};
    int nb = 1;
    if (boxes) nb = fp.rects_all(t, box);
    else box[0] = fp.rect_all(t);
    int last = 0;
    for (int x = 0; x < nb; ++x) {
      const TileRect r = box[x].clipped(pg);
      for (int z = r.z0; z < r.z1; ++z)
        for (int m = r.m0; m < r.m1; ++m)
          for (int n = r.n0; n < r.n1; ++n) last = std::max(last, pos[size_t(pg.linear(Tile{m, n, z}))] + 1);
    }
    ready = std::max(ready, last);
    total += ready;
  }
  return cg.size() ? total / double(cg.size()) : 0.0;
}

// Orders: a stage that names one keeps it. Otherwise a producer takes row- or column-major,
// whichever has its consumers' inputs complete sooner: the mean over consumer tiles, taken in
// the consumer's order, of the position in the producer's order of the last tile the consumer
// tile reads (over all its k-blocks; a consumer tile cannot be ready before the one before it).
// Stages that feed nothing walk row-major.
inline status choose_orders(Analysis& a) {
  auto err_ = [&](Loc l, const std::string& m) { return program_error(a.program, l, m); };
  const Program& prog = a.program;
  const Binding& b = a.bindings.front();
  a.orders.assign(a.stages.size(), OrderChoice{});
  // Consumers first: reverse topological order (edges go producer -> consumer).
  std::vector<int> topo;
  {
    std::vector<int> indeg(a.stages.size(), 0);
    for (const EdgeInfo& e : a.edges) ++indeg[size_t(e.consumer)];
    std::vector<int> q;
    for (size_t i = 0; i < indeg.size(); ++i)
      if (indeg[i] == 0) q.push_back(int(i));
    while (!q.empty()) {
      int u = q.back();
      q.pop_back();
      topo.push_back(u);
      for (const EdgeInfo& e : a.edges)
        if (e.producer == u && --indeg[size_t(e.consumer)] == 0) q.push_back(e.consumer);
    }
  }
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int s = *it;
    const StageInfo& si = a.stages[size_t(s)];
    OrderChoice& oc = a.orders[size_t(s)];
    if (!si.order.empty()) {
      oc.kind = si.order;
      if (si.order == "grouped") {
        BATON_TRY(eval(prog, *si.order_group, b, oc.group));
        if (oc.group < 1) return err_(si.order_loc, "grouped(G) needs G >= 1");
      }
      oc.why = "as written";
      continue;
    }
    Grid pg;
    BATON_TRY(stage_grid(prog, si, b, pg));
    double cost[2] = {0, 0};
    int feeds = 0;
    for (const EdgeInfo& e : a.edges) {
      if (e.producer != s) continue;
      ++feeds;
      AffineFootprint fp;
      BATON_TRY(edge_footprint(a, e, b, fp));
      Grid cg;
      BATON_TRY(stage_grid(prog, a.stages[size_t(e.consumer)], b, cg));
      const OrderChoice& co = a.orders[size_t(e.consumer)];
      for (int o = 0; o < 2; ++o) cost[o] += need_cost(fp, e.boxes, pg, cg, o == 0, co);
    }
    if (feeds == 0) {
      oc.kind = "row";
      oc.why = "feeds no stage";
      continue;
    }
    oc.kind = cost[1] < cost[0] ? "column" : "row";
    char buf[160];
    std::snprintf(buf, sizeof buf, "consumers' inputs complete after %.1f producer tiles on average row-major, %.1f column-major",
                  cost[0], cost[1]);
    oc.why = buf;
  }
  return {};
}

}  // namespace baton::dsl
