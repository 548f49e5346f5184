// baton/dsl/lowering.hpp — an edge's footprint (host only): the concrete footprint the maps give
// at a binding, and the footprint the edge's policies are emitted with.
//
// Owns edge_footprint() (the edge's dsl::AffineFootprint at a binding, '@conv' taps included),
// with_named_footprint() (baton's built-in footprints by name, made from it), the lowering of
// GEMM-shaped edges to footprint::GemmA (lowers_to_gemm_a) and the choice to wait on the union of
// an edge's read boxes rather than their bounding box (choose_boxes).
// Rules: every start and end a footprint computes fits in int (it runs in int on the device),
// '@conv' images hold at most 2^28 pixels; an edge is lowered only when the maps have GemmA's form
// at every binding; a named footprint keeps its own rectangle (only "affine" takes the boxes).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/budget.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/model.hpp"
#include "baton/footprint.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

// The edge's footprint under binding b.
inline status edge_footprint(const Analysis& a, const EdgeInfo& e, const Binding& b, AffineFootprint& fp) {
  const Program& prog = a.program;
  const StageInfo& ps = a.stages[size_t(e.producer)];
  const StageInfo& cs = a.stages[size_t(e.consumer)];
  fp = AffineFootprint{};
  BATON_TRY(stage_grid(prog, ps, b, fp.producer));
  fp.kvars = int(cs.kvars.size());
  for (size_t j = 0; j < cs.kvars.size(); ++j) BATON_TRY(eval_int(prog, *cs.kext[j], b, fp.kext[j]));
  fp.accesses = int(e.links.size());
  for (size_t l = 0; l < e.links.size(); ++l) {
    const AccessForm& r = cs.reads[size_t(e.links[l].first)];
    const AccessForm& w = ps.writes[size_t(e.links[l].second)];
    AffineAccess& acc = fp.access[l];
    acc.dims = int(r.dims.size());
    for (size_t d = 0; d < r.dims.size(); ++d) {
      AffineDim& x = acc.dim[d];
      const DimForm& rd = r.dims[d];
      const DimForm& wd = w.dims[d];
      BATON_TRY(eval_coef(prog, rd.start, "m", b, x.cm));
      BATON_TRY(eval_coef(prog, rd.start, "n", b, x.cn));
      BATON_TRY(eval_coef(prog, rd.start, "z", b, x.cz));
      for (size_t j = 0; j < cs.kvars.size(); ++j) BATON_TRY(eval_coef(prog, rd.start, cs.kvars[j], b, x.ck[j]));
      BATON_TRY(eval_int(prog, *rd.start.c0, b, x.c0));
      BATON_TRY(eval_int(prog, *rd.width, b, x.width));
      BATON_TRY(eval_int(prog, *rd.extent, b, x.extent));
      if (rd.conv) {
        BATON_TRY(eval_int(prog, *rd.img_h, b, x.img_h));
        BATON_TRY(eval_int(prog, *rd.img_w, b, x.img_w));
        // At most 2^28 pixels an image: the device's int arithmetic on pixel indices (below 2^30)
        // steps up to two images past one.
        if (x.img_h < 1 || x.img_w < 1 || int64_t(x.img_h) * x.img_w > (int64_t(1) << 28))
          return status(errc::invalid_argument, located(prog.file, prog.source, rd.img_h->loc,
                                                        "'@conv' images of " + std::to_string(x.img_h) + " x " + std::to_string(x.img_w) +
                                                            " pixels (each extent must be >= 1, their product at most 2^28)"));
        for (size_t j = 0; j < cs.kvars.size(); ++j) {
          BATON_TRY(eval_coef(prog, rd.dr, cs.kvars[j], b, x.rk[j]));
          BATON_TRY(eval_coef(prog, rd.ds, cs.kvars[j], b, x.sk[j]));
        }
        BATON_TRY(eval_int(prog, *rd.dr.c0, b, x.r0));
        BATON_TRY(eval_int(prog, *rd.ds.c0, b, x.s0));
      }
      x.axis = -1;
      static const char* axes[] = {"m", "n", "z"};
      for (int ax = 0; ax < 3; ++ax)
        if (wd.start.coef.count(axes[ax])) {
          x.axis = ax;
          BATON_TRY(eval_coef(prog, wd.start, axes[ax], b, x.pc));
        }
      if (x.axis < 0) x.pc = 1;
      BATON_TRY(eval_int(prog, *wd.start.c0, b, x.p0));
      BATON_TRY(eval_int(prog, *wd.width, b, x.pw));
      if (x.axis >= 0 && x.pc < 1)
        return status(errc::invalid_argument,
                      located(prog.file, prog.source, wd.loc,
                              "stage '" + ps.name + "' writes " + w.tensor + " with a stride of " + std::to_string(x.pc) +
                                  " per tile in dimension " + std::to_string(d) + " (it must be >= 1)"));
    }
  }
  if (const char* why = fp.invalid_reason())
    return status(errc::invalid_argument, "edge " + e.label + ": " + why);
  // Every start and end the footprint computes must fit in int (it runs in int on the device).
  const int64_t gext[3] = {fp.producer.m, fp.producer.n, fp.producer.z};
  Grid cg;
  BATON_TRY(stage_grid(prog, cs, b, cg));
  for (int l = 0; l < fp.accesses; ++l)
    for (int d = 0; d < fp.access[l].dims; ++d) {
      const AffineDim& x = fp.access[l].dim[d];
      // In double: the terms are below 2^62 each and only their size matters.
      double span = std::abs(double(x.cm)) * cg.m + std::abs(double(x.cn)) * cg.n + std::abs(double(x.cz)) * cg.z +
                    std::abs(double(x.c0)) + x.width + x.extent;
      for (int j = 0; j < fp.kvars; ++j) span += std::abs(double(x.ck[j])) * fp.kext[j];
      if (x.img_w > 0) {  // a conv tap's shift: at most its extreme rows and columns
        double dr = std::abs(double(x.r0)), ds = std::abs(double(x.s0));
        for (int j = 0; j < fp.kvars; ++j) {
          dr += std::abs(double(x.rk[j])) * fp.kext[j];
          ds += std::abs(double(x.sk[j])) * fp.kext[j];
        }
        span += dr * x.img_w + ds + double(x.img_h) * x.img_w;
      }
      const double wspan = (x.axis >= 0 ? double(x.pc) * double(gext[x.axis]) : 0.0) + std::abs(double(x.p0)) + x.pw;
      if (span > double(int64_t(1) << 30) || wspan > double(int64_t(1) << 30))
        return status(errc::invalid_argument, "edge " + e.label + ": the access to " + cs.reads[size_t(e.links[size_t(l)].first)].tensor +
                                                  " reaches past 2^30 elements in dimension " + std::to_string(d) +
                                                  " (the footprint computes in int)");
    }
  return {};
}

// baton's built-in footprints by name, made from the edge's concrete AffineFootprint (their
// parameters come from the program's maps): returns fn(footprint), or why the edge does not have
// that footprint's form. "affine" is the AffineFootprint itself.
template <class Fn>
status with_named_footprint(const std::string& name, const AffineFootprint& fp, const std::string& edge, Fn&& fn) {
  if (name == "affine") return fn(fp);
  if (name == "identity") return fn(footprint::Identity{});
  if (name == "transpose") return fn(footprint::Transpose{});
  if (name == "all_of_batch") return fn(footprint::AllOfBatch{fp.producer});
  if (name == "gemm_a") {
    // GemmA: the consumer reads rows m*TM +: TM and k-block columns kb*TK +: TK of a 2-D tensor
    // the producer writes in TPM x TPN tiles at (m*TPM, n*TPN).
    if (fp.accesses != 1 || fp.access[0].dims != 2 || fp.kvars != 1)
      return status(errc::invalid_argument, "footprint gemm_a: edge " + edge + " is not one 2-D tensor read per k-block");
    const AffineDim& r = fp.access[0].dim[0];
    const AffineDim& k = fp.access[0].dim[1];
    if (r.img_w || k.img_w || r.axis != 0 || k.axis != 1 || r.cm != r.width || r.cn || r.cz || r.ck[0] || r.c0 || k.cm || k.cn || k.cz ||
        k.ck[0] != k.width || k.c0 || r.pc != r.pw || k.pc != k.pw || r.p0 || k.p0)
      return status(errc::invalid_argument, "footprint gemm_a: edge " + edge +
                                                " does not read rows m*TM +: TM and columns kb*TK +: TK of tiles written at "
                                                "m*TPM +: TPM, n*TPN +: TPN");
    return fn(footprint::GemmA{r.extent, k.extent, r.pw, k.pw, r.width, k.width});
  }
  return status(errc::invalid_argument, "unknown footprint '" + name + "' (affine, gemm_a, identity, transpose, all_of_batch)");
}

// Does the edge have GemmA's form at every binding? (GemmA maps consumer tile z to producer
// tile z, so both grids must be flat in z.)
// An edge that has the form but for a z axis gets a hint (a stage's heads or batches on z lose
// the cheaper footprint; on n, or folded into m, they keep it).
inline bool lowers_to_gemm_a(const Analysis& a, EdgeInfo& e) {
  if (a.stages[size_t(e.consumer)].kbound) return false;  // GemmA walks every k-block of every tile
  bool z_only = false;
  for (const Binding& b : a.bindings) {
    AffineFootprint fp;
    Grid cg;
    if (!edge_footprint(a, e, b, fp).ok() || !stage_grid(a.program, a.stages[size_t(e.consumer)], b, cg).ok()) return false;
    if (!with_named_footprint("gemm_a", fp, e.label, [](const auto&) { return status{}; }).ok()) return false;
    z_only |= fp.producer.z != 1 || cg.z != 1;
  }
  if (z_only)
    e.lowering_hint = "the maps have footprint::GemmA's form but for the grids' z axis (GemmA maps consumer z to producer z "
                      "over one 2-D tensor): put what z counts on n, or fold it into m, to get the cheaper footprint "
                      "(docs/batonc.md, 'Footprints: lowered where the maps allow')";
  return !z_only;
}

// Does the bounding box of the edge's boxes hold a producer tile that no box holds, for some
// consumer tile and k-block at the default binding? Then waiting on the union forces fewer
// producer tiles (the [Q|K|V] layout: Q's and V's column blocks with K's and all between them).
// Either form is sound; an edge too large to scan keeps the bounding box (its proofs fail on the
// budget anyway).
inline void choose_boxes(const Analysis& a, EdgeInfo& e, const ProofBudget& budget) {
  e.boxes = false;
  if (e.links.size() < 2) return;
  const Binding& b = a.bindings.front();
  AffineFootprint fp;
  Grid cg;
  if (!edge_footprint(a, e, b, fp).ok() || !stage_grid(a.program, a.stages[size_t(e.consumer)], b, cg).ok()) return;
  if (proof_cost(fp, cg) > budget.left()) return;
  TileRect box[AffineFootprint::kMaxBoxes] = {};
  for (int i = 0; i < int(cg.size()); ++i)
    for (int k = 0; k < fp.k_blocks(); ++k) {
      const Tile t = cg.tile(i);
      const int nb = fp.rects(t, k, box);
      const TileRect r = fp.rect(t, k);
      for (int z = r.z0; z < r.z1; ++z)
        for (int m = r.m0; m < r.m1; ++m)
          for (int n = r.n0; n < r.n1; ++n) {
            bool in = false;
            for (int x = 0; x < nb && !in; ++x) in = box[x].contains(Tile{m, n, z});
            if (!in) {
              e.boxes = true;
              return;
            }
          }
    }
}

}  // namespace baton::dsl
