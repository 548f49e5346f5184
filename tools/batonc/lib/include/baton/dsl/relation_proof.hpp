// baton/dsl/relation_proof.hpp — an edge's dependency relations (host only): the one its maps
// read, enumerated exactly, and the one its `relation` line gives apart from the maps, and the
// proof that the two agree.
//
// Owns exact_relation() (consumer tile t, k-block k reads producer tile p iff, for one linked
// access, p's write box meets t's read box in every dimension: enumerated from the element boxes,
// independent of AffineFootprint's inversion), maps_relation() (that relation at a binding, with a
// tile-dependent k-loop bound), declared_relation() (the `relation` line's, built by
// relations.hpp, checked to have the program's shape) and compare_maps() (the maps read all of it,
// and no more unless the line says `loose`); prove_maps_against_relation() runs that proof at
// every binding and keeps the declared relations, which every candidate is proven against too.
// Rules: the exact relation scans every producer index and every '@conv' pixel (never the
// footprint's own formulas), so it can judge them; a read the maps miss is always an error.
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
#include "baton/dsl/relations.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

// The exact relation, enumerated from the element boxes (independent of AffineFootprint's
// inversion): consumer tile t, k-block k reads producer tile p iff, for one linked access, p's
// write box meets t's read box (both clipped to the tensor) in every dimension.
// k_first_bound (optional): tile t's k-blocks whose first k-loop variable reaches it read nothing.
inline DependencyRelation exact_relation(const AffineFootprint& fp, Grid consumer, std::string description,
                                         std::function<int(Tile)> k_first_bound = nullptr) {
  DependencyRelation d;
  d.producer = fp.producer;
  d.consumer = consumer;
  d.k_blocks = fp.k_blocks();
  d.description = std::move(description);
  d.reads = [fp, k_first_bound](Tile t, int k, const std::function<void(Tile)>& emit) {
    int kv[kMaxKVars] = {0, 0, 0};
    fp.k_vars(k, kv);
    if (k_first_bound && fp.kvars > 0 && kv[0] >= k_first_bound(t)) return;
    const int ext[3] = {fp.producer.m, fp.producer.n, fp.producer.z};
    for (int a = 0; a < fp.accesses; ++a) {
      // Per producer axis, the indices whose writes meet the reads in every dimension on that
      // axis: each dimension's set is contiguous (stride >= 1), so their intersection is [lo, hi).
      int lo_i[3] = {0, 0, 0}, hi_i[3] = {ext[0], ext[1], ext[2]};
      std::vector<char> hit[3];  // conv dims: the producer indices a read pixel meets (empty: no such dim)
      bool none = false;
      for (int di = 0; di < fp.access[a].dims && !none; ++di) {
        const AffineDim& x = fp.access[a].dim[di];
        int64_t lo = int64_t(x.cm) * t.m + int64_t(x.cn) * t.n + int64_t(x.cz) * t.z + x.c0;
        for (int j = 0; j < fp.kvars; ++j) lo += int64_t(x.ck[j]) * kv[j];
        int64_t hi = lo + x.width;
        // A strided conv range counts the output pixels of the input's images.
        const int64_t range_ext = x.img_w > 0 && x.out_h > 0 ? x.extent / (int64_t(x.img_h) * x.img_w) * x.out_h * x.out_w : x.extent;
        lo = std::max<int64_t>(lo, 0);
        hi = std::min<int64_t>(hi, range_ext);
        if (lo >= hi) {
          none = true;
          break;
        }
        auto meets = [&](int64_t w0) {  // the write box, clipped to the tensor, meets [lo, hi)
          const int64_t w0c = std::max<int64_t>(w0, 0), w1c = std::min<int64_t>(w0 + x.pw, x.extent);
          return std::max(w0c, lo) < std::min(w1c, hi);
        };
        if (x.img_w > 0) {
          // A conv tap, pixel by pixel: output pixel o (n, p, q) reads input pixel
          // (n, p*stride + dr, q*stride + ds) when that stays inside its image (independent of
          // AffineFootprint's first/last formula); in the stride-1 form the output pixels are the
          // input's.
          int64_t dr = x.r0, ds = x.s0;
          for (int j = 0; j < fp.kvars; ++j) {
            dr += int64_t(x.rk[j]) * kv[j];
            ds += int64_t(x.sk[j]) * kv[j];
          }
          const bool strided = x.out_h > 0;
          const int64_t oh = strided ? x.out_h : x.img_h, ow = strided ? x.out_w : x.img_w, u = strided ? x.stride : 1;
          const int64_t o0 = lo, o1 = hi;
          const int n_ext = x.axis < 0 ? 1 : ext[x.axis];
          std::vector<char> mine(size_t(n_ext), 0);
          bool any = false;
          for (int64_t o = o0; o < o1; ++o) {
            const int64_t img = o / (oh * ow), h = (o % (oh * ow)) / ow * u + dr, w = o % ow * u + ds;
            if (h < 0 || h >= x.img_h || w < 0 || w >= x.img_w) continue;
            const int64_t e = (img * x.img_h + h) * x.img_w + w;
            lo = e;
            hi = e + 1;
            if (x.axis < 0) {
              any |= meets(x.p0);
              continue;
            }
            const int64_t i0 = std::max<int64_t>(0, (e - x.p0 - x.pw) / x.pc - 1);
            for (int64_t i = i0; i < n_ext && int64_t(x.pc) * i + x.p0 <= e; ++i)
              if (meets(int64_t(x.pc) * i + x.p0)) mine[size_t(i)] = 1, any = true;
          }
          if (!any) {
            none = true;
            break;
          }
          if (x.axis >= 0) {
            if (hit[x.axis].empty()) hit[x.axis].assign(size_t(n_ext), 1);
            for (int i = 0; i < n_ext; ++i) hit[x.axis][size_t(i)] &= mine[size_t(i)];
          }
          continue;
        }
        if (x.axis < 0) {
          if (!meets(x.p0)) none = true;
          continue;
        }
        int first = -1, last = -2;  // by scanning every index: independent of AffineFootprint's formula
        for (int i = 0; i < ext[x.axis]; ++i)
          if (meets(int64_t(x.pc) * i + x.p0)) {
            if (first < 0) first = i;
            last = i;
          }
        lo_i[x.axis] = std::max(lo_i[x.axis], first < 0 ? ext[x.axis] : first);
        hi_i[x.axis] = std::min(hi_i[x.axis], last + 1);
      }
      if (none) continue;
      auto in = [&](int ax, int i) { return hit[ax].empty() || hit[ax][size_t(i)]; };
      for (int z = lo_i[2]; z < hi_i[2]; ++z)
        for (int m = lo_i[0]; m < hi_i[0]; ++m)
          for (int n = lo_i[1]; n < hi_i[1]; ++n)
            if (in(0, m) && in(1, n) && in(2, z)) emit(Tile{m, n, z});
    }
  };
  return d;
}

// The maps' relation for edge e at binding b (fp and cg at that binding): k-blocks past a
// tile-dependent bound read nothing.
inline status maps_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, const AffineFootprint& fp, Grid cg,
                            DependencyRelation& out) {
  std::function<int(Tile)> bound;
  BATON_TRY(k_first_bound(a.program, a.stages[size_t(e.consumer)], b, bound));
  out = exact_relation(fp, cg, e.label, std::move(bound));
  return {};
}

// The relation edge e's `relation` line gives at binding b, over the program's grids; an error
// when its shape (producer grid, k-blocks) is not the program's.
inline status declared_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, DependencyRelation& out) {
  const RelationDecl& d = *e.relation;
  const Program& prog = a.program;
  Program origin;
  origin.file = d.origin_file;
  origin.source = d.origin_source;
  const Program& text = d.origin_file.empty() ? prog : origin;
  auto err = [&](Loc l, const std::string& m) { return status(errc::invalid_argument, relation_located(prog, d, l, m + binding_note(a, b))); };
  std::map<std::string, int64_t> v;
  for (const RelationArgSpec& x : e.relation_kind->args) v[std::string(x.name)] = x.fallback;
  for (const RelationArg& x : d.args) {
    int64_t val = 0;
    BATON_TRY(eval(text, *x.value, b, val));
    if (val > 0x7fffffff || val < -0x7fffffff) return err(x.value->loc, "value " + std::to_string(val) + " does not fit in int");
    v[x.name] = val;
  }
  const StageInfo& ps = a.stages[size_t(e.producer)];
  const StageInfo& cs = a.stages[size_t(e.consumer)];
  Grid pg, cg;
  BATON_TRY(stage_grid(prog, ps, b, pg));
  BATON_TRY(stage_grid(prog, cs, b, cg));
  int kb = 1;
  BATON_TRY(stage_k_blocks(prog, cs, b, kb));
  auto r = make_relation(*e.relation_kind, v, pg, cg);
  if (!r.ok()) return err(d.name_loc, d.name + ": " + r.error().message());
  out = std::move(r.value());
  if (!(out.producer == pg))
    return err(d.name_loc, d.name + " gives a producer grid of " + to_string(out.producer) + " tiles, but stage '" + ps.name + "' has " +
                               to_string(pg) + ": the relation and the program describe different shapes (check the tile sizes and extents on both)");
  if (out.k_blocks != kb)
    return err(d.name_loc, d.name + " gives " + std::to_string(out.k_blocks) + " k-blocks, but stage '" + cs.name + "' has " +
                               std::to_string(kb) + ": the relation and the program walk k differently");
  out.description = d.name;
  return {};
}

// The maps' relation against the one the `relation` line gives: a read the maps miss is an
// error (a policy built from them may skip its wait); a read they add is one too, unless the
// line says `loose` (the maps may over-approximate, e.g. a flattened conv halo across image rows).
inline status compare_maps(const Analysis& a, EdgeInfo& e, const Binding& b, const DependencyRelation& maps,
                           const DependencyRelation& truth) {
  auto err_ = [&](Loc l, const std::string& m) { return program_error(a.program, l, m); };
  auto diff = deps::compare(maps, truth);
  const RelationDecl& d = *e.relation;
  const StageInfo& ps = a.stages[size_t(e.producer)];
  const StageInfo& cs = a.stages[size_t(e.consumer)];
  if (!diff.ok()) return status(errc::invalid_argument, relation_located(a.program, d, d.name_loc, d.name + ": " + diff.error().message()));
  const deps::RelationDiff& df = diff.value();
  const std::string where = d.origin_file.empty() ? "line " + std::to_string(d.loc.line) : d.origin_file;
  const Loc read_loc = cs.reads[size_t(e.links.front().first)].loc;
  std::string tensors;  // each once
  for (auto [r, w] : e.links) {
    const std::string& t = cs.reads[size_t(r)].tensor;
    if ((", " + tensors + ", ").find(", " + t + ", ") == std::string::npos) tensors += (tensors.empty() ? "" : ", ") + t;
  }
  if (df.missing)
    return err_(read_loc, "stage '" + cs.name + "' reads " + tensors + " through maps that miss what relation " + d.name + " (" + where +
                              ") says it reads: its tile " + to_string(df.first_missing->consumer) + " k-block " +
                              std::to_string(df.first_missing->k_block) + " reads producer tile " + to_string(df.first_missing->producer) +
                              " of '" + ps.name + "' (" + std::to_string(df.missing) +
                              " such reads); a policy built from these maps need not wait for them: fix the read maps (a convolution reads its R x S halo) or the relation" +
                              binding_note(a, b));
  if (df.extra && !d.loose) {
    int64_t truth_reads = 0;
    truth.reads(df.first_extra->consumer, df.first_extra->k_block, [&](Tile) { ++truth_reads; });
    return err_(read_loc, "stage '" + cs.name + "' reads " + tensors + " through maps that read more than relation " + d.name + " (" +
                              where + ") says: its tile " + to_string(df.first_extra->consumer) + " k-block " +
                              std::to_string(df.first_extra->k_block) + " reads producer tile " + to_string(df.first_extra->producer) + " of '" +
                              ps.name + "' by the maps, not by " + d.name +
                              (truth_reads ? "" : ", which says that k-block reads nothing") + " (" + std::to_string(df.extra) +
                              " such reads" + (d.name == "causal_attention" ? "; a causal tile reads no key block after its last query" : "") +
                              "): fix the maps, or end the relation line with 'loose' if they may over-approximate" + binding_note(a, b));
  }
  if (&b == &a.bindings.front()) e.over_reads = df.extra;
  return {};
}

// The relation given apart from the maps, at every binding: the maps must read what it says (all
// of it, and no more unless it is `loose`); truths[i] is the relation at a.bindings[i], for the
// candidates' proofs.
inline status prove_maps_against_relation(const Analysis& a, EdgeInfo& e, ProofBudget& budget, std::vector<DependencyRelation>& truths) {
  for (size_t bi = 0; bi < a.bindings.size(); ++bi) {
    const Binding& b = a.bindings[bi];
    AffineFootprint fp;
    BATON_TRY(edge_footprint(a, e, b, fp));
    Grid cg;
    BATON_TRY(stage_grid(a.program, a.stages[size_t(e.consumer)], b, cg));
    const int64_t cost = proof_cost(fp, cg);
    BATON_TRY(budget.charge(a, cost > budget.limit ? cost : 2 * cost, e, b, cg, fp));
    DependencyRelation truth;
    BATON_TRY(declared_relation(a, e, b, truth));
    DependencyRelation maps;
    BATON_TRY(maps_relation(a, e, b, fp, cg, maps));
    BATON_TRY(compare_maps(a, e, b, maps, truth));
    truths.push_back(std::move(truth));
  }
  return {};
}

}  // namespace baton::dsl
