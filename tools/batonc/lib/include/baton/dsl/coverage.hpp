// baton/dsl/coverage.hpp — the checks on what a program's maps read and write (host only), per
// parameter binding, each a located error that names the region.
//
// Owns check_bounds() (every access starts inside its tensor for every tile and k-block, `clip`
// reads aside, and a tile-dependent k-loop bound is >= 1), check_overlaps() (no two tiles of a
// stage write one element unless the write says `accumulate`) and check_coverage() (every element
// a consumer tile reads is written by some producer tile), with WrittenDim, the elements one
// dimension of a write covers.
// Rules: a tile's write is a box with each tile index in at most one dimension, so writes are a
// product of per-dimension sets and each check runs per dimension; check_coverage is charged to
// the program's ProofBudget.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/budget.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/lowering.hpp"
#include "baton/dsl/model.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

// The elements one dimension of a write covers: tile i < count (along its axis) writes
// [pc*i + p0, + pw), clipped to [0, extent); `fixed` (no tile index): every tile writes [p0, + pw).
struct WrittenDim {
  int64_t pc = 1, p0 = 0, pw = 1, extent = 1, count = 1;
  bool fixed = false;
  bool contiguous() const { return fixed || pw >= pc; }
  int64_t lo() const { return std::max<int64_t>(p0, 0); }  // contiguous only
  int64_t hi() const { return std::min<int64_t>(fixed ? p0 + pw : pc * (count - 1) + p0 + pw, extent); }
  static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
  // The first element of [a, b) no tile writes, or -1.
  int64_t first_unwritten(int64_t a, int64_t b) const {
    if (contiguous()) return a < lo() ? a : b > hi() ? std::max(a, hi()) : -1;
    for (int64_t x = a;;) {  // the tiles leave gaps (pw < pc): at most two steps
      const int64_t i = floor_div(x - p0, pc);
      if (i < 0 || i >= count || x >= pc * i + p0 + pw) return x;
      x = pc * i + p0 + pw;
      if (x >= b) return -1;
    }
  }
  // The unwritten range around unwritten element x.
  std::pair<int64_t, int64_t> gap(int64_t x) const {
    if (contiguous()) return x < lo() ? std::pair<int64_t, int64_t>{0, lo()} : std::pair<int64_t, int64_t>{hi(), extent};
    const int64_t i = floor_div(x - p0, pc);
    if (i < 0) return {0, p0};
    if (i >= count) return {std::max<int64_t>(pc * (count - 1) + p0 + pw, 0), extent};
    return {pc * i + p0 + pw, std::min(i + 1 < count ? pc * (i + 1) + p0 : extent, extent)};
  }
  std::string text() const {
    if (contiguous()) return "[" + std::to_string(lo()) + ", " + std::to_string(hi()) + ")";
    return "[" + std::to_string(pc) + "*i + " + std::to_string(p0) + ", +" + std::to_string(pw) + ") for i < " + std::to_string(count);
  }
};
inline std::string box_text(const std::string& tensor, const std::vector<std::pair<int64_t, int64_t>>& box) {
  std::string s = tensor + "[";
  for (size_t d = 0; d < box.size(); ++d) s += (d ? ", " : "") + std::to_string(box[d].first) + ":" + std::to_string(box[d].second);
  return s + "]";
}

// Every access starts inside its tensor for every tile and k-block (reads marked `clip` may run
// into padding), and every write lies inside it.
inline status check_bounds(const Analysis& a, const Binding& b) {
  const Program& prog = a.program;
  auto err_ = [&](Loc l, const std::string& m) { return program_error(prog, l, m); };
  for (const StageInfo& s : a.stages) {
    Grid g;
    BATON_TRY(stage_grid(prog, s, b, g));
    if (s.kbound) {
      int64_t lo = 0;
      BATON_TRY(eval(prog, *s.kbound_min, b, lo));
      if (lo < 1)
        return err_(s.kbound_form.c0->loc, "the bound of k-loop variable '" + s.kvars[0] + "' of stage '" + s.name + "' is " +
                                               std::to_string(lo) + " for some tile; every tile needs at least one k-block (bound >= 1)" +
                                               binding_note(a, b));
    }
    int kb = 1;
    BATON_TRY(stage_k_blocks(prog, s, b, kb));
    std::map<std::string, int64_t> hi{{"m", g.m - 1}, {"n", g.n - 1}, {"z", g.z - 1}};
    for (size_t j = 0; j < s.kvars.size(); ++j) {
      int v = 0;
      BATON_TRY(eval_int(prog, *s.kext[j], b, v));
      hi[s.kvars[j]] = v - 1;
    }
    auto check = [&](const AccessForm& acc, bool write) -> status {
      for (size_t d = 0; d < acc.dims.size(); ++d) {
        const DimForm& f = acc.dims[d];
        int64_t c0 = 0, width = 0, extent = 0, lo = 0, hi_start = 0;
        BATON_TRY(eval(prog, *f.start.c0, b, c0));
        BATON_TRY(eval(prog, *f.width, b, width));
        BATON_TRY(eval(prog, *f.extent, b, extent));
        if (extent < 1)
          return err_(acc.loc, "tensor '" + acc.tensor + "' has extent " + std::to_string(extent) + " in dimension " + std::to_string(d) + binding_note(a, b));
        if (f.conv) {  // a '@conv' range counts output pixels: the strided form has fewer than the tensor
          ConvGeometry geo;
          BATON_TRY(conv_geometry(a, s, f, extent, b, geo));
          extent = geo.out_extent;
        }
        if (width < 1) return err_(f.loc, "width " + std::to_string(width) + " (must be >= 1)" + binding_note(a, b));
        lo = hi_start = c0;
        std::string arg_lo, arg_hi;
        for (auto& [v, ce] : f.start.coef) {
          int64_t c = 0, span = 0;
          BATON_TRY(eval(prog, *ce, b, c));
          if (__builtin_mul_overflow(c, hi[v], &span) || span > (int64_t(1) << 40) || span < -(int64_t(1) << 40))
            return err_(f.loc, "stage '" + s.name + "': an access reaches past 2^40 elements" + binding_note(a, b));
          (span < 0 ? lo : hi_start) += span;
        }
        const std::string what = std::string(write ? "writes" : "reads") + " " + acc.tensor + " dimension " + std::to_string(d);
        if (acc.clip) {
          if (hi_start + width <= 0 || lo >= extent)
            return err_(f.loc, "stage '" + s.name + "' " + what + " entirely outside [0, " + std::to_string(extent) + ") for some tile" + binding_note(a, b));
          continue;
        }
        if (lo < 0)
          return err_(f.loc, "stage '" + s.name + "' " + what + " from " + std::to_string(lo) +
                                 " for some tile: the map leaves the tensor (and the producer's grid); mark padding reads 'clip'" + binding_note(a, b));
        if (hi_start >= extent)
          return err_(f.loc, "stage '" + s.name + "' " + what + " from " + std::to_string(hi_start) + ", past its extent " +
                                 std::to_string(extent) + ": the map leaves the tensor (and the producer's grid)" + binding_note(a, b));
      }
      return {};
    };
    for (const AccessForm& acc : s.reads) BATON_TRY(check(acc, false));
    for (const AccessForm& acc : s.writes) BATON_TRY(check(acc, true));
  }
  return {};
}

// No two tiles of a stage write the same element, unless the write says `accumulate` (split-K:
// the tiles add partial sums, and a consumer waits for all of them). With each tile index in at
// most one dimension, tiles i and i+1 along an axis overlap iff the dimension that moves with it
// advances by less than its width, or no dimension moves with it.
inline status check_overlaps(const Analysis& a, const Binding& b) {
  const Program& prog = a.program;
  auto err_ = [&](Loc l, const std::string& m) { return program_error(prog, l, m); };
  for (const StageInfo& s : a.stages) {
    Grid g;
    BATON_TRY(stage_grid(prog, s, b, g));
    const int64_t gext[3] = {g.m, g.n, g.z};
    static const char* axes[] = {"m", "n", "z"};
    for (const AccessForm& w : s.writes) {
      if (w.accumulate) continue;
      // Tile 0's box, clipped (every write starts inside its tensor: bounds_).
      std::vector<std::pair<int64_t, int64_t>> box;
      for (const DimForm& f : w.dims) {
        int64_t c0 = 0, width = 0, extent = 0;
        BATON_TRY(eval(prog, *f.start.c0, b, c0));
        BATON_TRY(eval(prog, *f.width, b, width));
        BATON_TRY(eval(prog, *f.extent, b, extent));
        box.push_back({std::max<int64_t>(c0, 0), std::min(c0 + width, extent)});
      }
      for (int ax = 0; ax < 3; ++ax) {
        if (gext[ax] < 2) continue;
        const Tile t1{ax == 0 ? 1 : 0, ax == 1 ? 1 : 0, ax == 2 ? 1 : 0};
        const std::string fix = "; give each tile its own elements, or mark the write 'accumulate' if its tiles add partial sums (split-K)";
        size_t d = 0;
        while (d < w.dims.size() && !w.dims[d].start.coef.count(axes[ax])) ++d;
        if (d == w.dims.size())
          return err_(w.loc, "tiles (0,0,0) and " + to_string(t1) + " of stage '" + s.name + "' both write " + box_text(w.tensor, box) +
                                 ": the write does not move with tile index '" + axes[ax] + "' (grid " + to_string(g) + ")" + fix +
                                 binding_note(a, b));
        int64_t pc = 0;
        BATON_TRY(eval(prog, *w.dims[d].start.coef.at(axes[ax]), b, pc));
        const int64_t p0 = box[d].first, pw = box[d].second - box[d].first;
        if (pc != 0 && pw <= (pc < 0 ? -pc : pc)) continue;
        std::vector<std::pair<int64_t, int64_t>> both = box;
        both[d] = {std::max(p0, p0 + pc), std::min(box[d].second, p0 + pc + pw)};
        return err_(w.dims[d].loc, "tiles (0,0,0) and " + to_string(t1) + " of stage '" + s.name + "' both write " +
                                       box_text(w.tensor, both) + ": along '" + axes[ax] + "' the write advances " +
                                       std::to_string(pc) + " per tile but is " + std::to_string(pw) + " wide" + fix +
                                       binding_note(a, b));
      }
    }
  }
  return {};
}

// Every element of the tensor that a consumer tile reads (clipped to the tensor) is written by
// some producer tile: otherwise the consumer would wait for tiles that do not exist, or for none,
// and read what nobody wrote. The writes are a product of per-dimension sets (one tile index per
// dimension), so a read box is covered iff each of its dimensions is.
inline status check_coverage(const Analysis& a, const EdgeInfo& e, const Binding& b, ProofBudget& budget) {
  const Program& prog = a.program;
  auto err_ = [&](Loc l, const std::string& m) { return program_error(prog, l, m); };
  const StageInfo& ps = a.stages[size_t(e.producer)];
  const StageInfo& cs = a.stages[size_t(e.consumer)];
  AffineFootprint fp;
  BATON_TRY(edge_footprint(a, e, b, fp));
  Grid cg;
  BATON_TRY(stage_grid(prog, cs, b, cg));
  const int64_t nk = fp.k_blocks();
  BATON_TRY(budget.charge(a, cg.size() * nk > (int64_t(1) << 22) ? int64_t(1) << 40 : cg.size() * nk * fp.accesses, e, b, cg, fp));
  const int64_t gext[3] = {fp.producer.m, fp.producer.n, fp.producer.z};
  std::function<int(Tile)> kbound;
  BATON_TRY(k_first_bound(prog, cs, b, kbound));
  for (int l = 0; l < fp.accesses; ++l) {
    const AffineAccess& acc = fp.access[l];
    std::vector<WrittenDim> wd(size_t(acc.dims));
    for (int d = 0; d < acc.dims; ++d) {
      const AffineDim& x = acc.dim[d];
      wd[size_t(d)] = WrittenDim{x.pc, x.p0, x.pw, x.extent, x.axis < 0 ? 1 : gext[x.axis], x.axis < 0};
    }
    std::vector<std::pair<int64_t, int64_t>> box(size_t(acc.dims));
    int kv[kMaxKVars] = {0, 0, 0};
    for (int ci = 0; ci < int(cg.size()); ++ci) {
      const Tile t = cg.tile(ci);
      for (int k = 0; k < int(nk); ++k) {
        fp.k_vars(k, kv);
        if (kbound && kv[0] >= kbound(t)) continue;  // past the tile's own k-loop bound
        bool empty = false;
        for (int d = 0; d < acc.dims && !empty; ++d) {
          const AffineDim& x = acc.dim[d];
          int64_t lo = int64_t(x.cm) * t.m + int64_t(x.cn) * t.n + int64_t(x.cz) * t.z + x.c0;
          for (int j = 0; j < fp.kvars; ++j) lo += int64_t(x.ck[j]) * kv[j];
          // A conv range counts output pixels (the tensor's own in the stride-1 form).
          box[size_t(d)] = {std::max<int64_t>(lo, 0), std::min<int64_t>(lo + x.width, x.img_w > 0 ? detail::conv_out_extent(x) : x.extent)};
          if (x.img_w > 0 && box[size_t(d)].first < box[size_t(d)].second) {  // a conv tap: the input pixels' span
            int dr = x.r0, ds = x.s0;
            for (int j = 0; j < fp.kvars; ++j) {
              dr += x.rk[j] * kv[j];
              ds += x.sk[j] * kv[j];
            }
            int first = 0, last = -1;
            const bool any = detail::conv_span(x, int(box[size_t(d)].first), int(box[size_t(d)].second), dr, ds, first, last);
            box[size_t(d)] = !any ? std::pair<int64_t, int64_t>{0, 0}
                                  : std::pair<int64_t, int64_t>{std::max<int64_t>(first, 0), std::min<int64_t>(int64_t(last) + 1, x.extent)};
          }
          empty = box[size_t(d)].first >= box[size_t(d)].second;  // a read entirely in the padding
        }
        if (empty) continue;
        for (int d = 0; d < acc.dims; ++d) {
          const WrittenDim& w = wd[size_t(d)];
          const int64_t x = w.first_unwritten(box[size_t(d)].first, box[size_t(d)].second);
          if (x < 0) continue;
          const auto [g0, g1] = w.gap(x);
          const std::string& tensor = cs.reads[size_t(e.links[size_t(l)].first)].tensor;
          return err_(ps.writes[size_t(e.links[size_t(l)].second)].dims[size_t(d)].loc,
                      "stage '" + ps.name + "' writes no element of " + tensor + " in [" + std::to_string(g0) + ", " +
                          std::to_string(g1) + ") of dimension " + std::to_string(d) + ", but stage '" + cs.name +
                          "' reads there: its tile " + to_string(t) + " k-block " + std::to_string(k) + " reads " +
                          box_text(tensor, box) + "; the " + std::to_string(fp.producer.size()) + " tiles of '" + ps.name +
                          "' (grid " + to_string(fp.producer) + ") write " + w.text() + " of that dimension: make " + ps.name +
                          "'s grid or write map cover every element " + cs.name + " reads" + binding_note(a, b));
        }
      }
    }
  }
  return {};
}

}  // namespace baton::dsl
