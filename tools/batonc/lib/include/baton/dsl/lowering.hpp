// baton/dsl/lowering.hpp — an edge's footprint (host only): the concrete footprint the maps give
// at a binding, and the footprint the edge's policies are emitted with.
//
// Owns conv_geometry() (a '@conv' dimension's images, and the strided form's output images, at a
// binding, with located errors for its stride, pad and output size), edge_footprint() (the edge's
// dsl::AffineFootprint at a binding, '@conv' taps included),
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

// A '@conv' dimension at a binding: its images and, in the strided form, its output images.
struct ConvGeometry {
  int img_h = 0, img_w = 0;
  int out_h = 0, out_w = 0;  // 0: the stride-1 form (the output pixels are the input's)
  int stride = 1, pad = 0;
  int64_t out_extent = 0;  // the read range's extent: the output pixels of the input's images
};

// The geometry of '@conv' dimension f (extent: the tensor's, in that dimension) of a read of stage
// s under binding b, or a located error. The strided form's output is P x Q with
// P = (H + 2*pad - R)/stride + 1, R being the rows the row shift spans over the k-loop (its lowest
// value must be -pad: the first tap lies pad rows above output row p's anchor p*stride), and Q
// likewise; the dimension holds whole images.
inline status conv_geometry(const Analysis& a, const StageInfo& s, const DimForm& f, int64_t extent, const Binding& b, ConvGeometry& g) {
  const Program& prog = a.program;
  auto err_ = [&](Loc l, const std::string& m) { return program_error(prog, l, m); };
  g = ConvGeometry{};
  BATON_TRY(eval_int(prog, *f.img_h, b, g.img_h));
  BATON_TRY(eval_int(prog, *f.img_w, b, g.img_w));
  // At most 2^28 pixels an image: the device's int arithmetic on pixel indices (below 2^30)
  // steps up to two images past one.
  if (g.img_h < 1 || g.img_w < 1 || int64_t(g.img_h) * g.img_w > (int64_t(1) << 28))
    return err_(f.img_h->loc, "'@conv' images of " + std::to_string(g.img_h) + " x " + std::to_string(g.img_w) +
                                  " pixels (each extent must be >= 1, their product at most 2^28)");
  g.out_extent = extent;
  if (!f.strided) return {};
  BATON_TRY(eval_int(prog, *f.conv_stride, b, g.stride));
  BATON_TRY(eval_int(prog, *f.conv_pad, b, g.pad));
  if (g.stride < 1)
    return err_(f.stride_loc, "'@conv' stride " + std::to_string(g.stride) + " (it must be >= 1)" + binding_note(a, b));
  if (g.pad < 0)
    return err_(f.pad_loc, "'@conv' pad " + std::to_string(g.pad) + " (it must be >= 0: the zero rows and columns around an image)" +
                               binding_note(a, b));
  int64_t span[2][2] = {};  // the row and column shifts' lowest and highest values over the k-loop
  const LinForm* shift[2] = {&f.dr, &f.ds};
  const Loc at[2] = {f.dr_loc, f.ds_loc};
  const char* what[2] = {"row", "column"};
  const int img[2] = {g.img_h, g.img_w};
  int out[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    BATON_TRY(eval(prog, *shift[d]->c0, b, span[d][0]));
    span[d][1] = span[d][0];
    for (size_t j = 0; j < s.kvars.size(); ++j) {
      int c = 0, ext = 0;
      BATON_TRY(eval_coef(prog, *shift[d], s.kvars[j], b, c));
      if (c == 0) continue;
      if (j == 0 && s.kbound)
        return err_(at[d], "the " + std::string(what[d]) + " shift of a strided '@conv' uses k-loop variable '" + s.kvars[0] +
                               "', whose bound depends on the tile; the filter's taps need k-loop variables with parameter bounds");
      BATON_TRY(eval_int(prog, *s.kext[j], b, ext));
      span[d][c < 0 ? 0 : 1] += int64_t(c) * (ext - 1);  // each term below 2^62, the sum checked below
      if (span[d][0] < -(int64_t(1) << 40) || span[d][1] > (int64_t(1) << 40))
        return err_(at[d], "the tap's " + std::string(what[d]) + " shift of '@conv' reaches past 2^40" + binding_note(a, b));
    }
    if (span[d][0] != -g.pad)
      return err_(at[d], "the tap's " + std::string(what[d]) + " shift runs from " + std::to_string(span[d][0]) + " to " +
                             std::to_string(span[d][1]) + ", but pad = " + std::to_string(g.pad) + " puts the first tap " +
                             std::to_string(g.pad) + " " + what[d] + (g.pad == 1 ? "" : "s") +
                             " before the output pixel's anchor (p*stride): its lowest value must be " + std::to_string(-g.pad) +
                             " (filter " + what[d] + " " + (d ? "s" : "r") + " shifts by " + (d ? "s" : "r") + " - pad: " + (d ? "s" : "r") +
                             " - " + std::to_string(g.pad) + " here)" + binding_note(a, b));
    const int64_t taps = span[d][1] - span[d][0] + 1;  // the filter's rows (columns), dilation included
    const int64_t room = int64_t(img[d]) + 2 * int64_t(g.pad) - taps;
    if (room < 0) {
      const std::string I = d ? "W" : "H", F = d ? "S" : "R";
      return err_(f.conv_loc, "'@conv' has no output " + std::string(what[d]) + "s: (" + I + " + 2*pad - " + F + ")/stride + 1 = (" +
                                  std::to_string(img[d]) + " + " + std::to_string(2 * int64_t(g.pad)) + " - " + std::to_string(taps) + ")/" +
                                  std::to_string(g.stride) + " + 1 < 1, with " + F + " = " + std::to_string(taps) + " the " + what[d] +
                                  "s the shift spans (" + std::to_string(span[d][0]) + " to " + std::to_string(span[d][1]) +
                                  "): the filter must fit the padded image (a larger image or more padding)" + binding_note(a, b));
    }
    if (room / g.stride + 1 > (int64_t(1) << 28))
      return err_(f.conv_loc, "'@conv' output images of more than 2^28 " + std::string(what[d]) + "s" + binding_note(a, b));
    out[d] = int(room / g.stride + 1);
  }
  g.out_h = out[0];
  g.out_w = out[1];
  const int64_t hw = int64_t(g.img_h) * g.img_w;
  if (int64_t(g.out_h) * g.out_w > (int64_t(1) << 28))
    return err_(f.conv_loc, "'@conv' output images of " + std::to_string(g.out_h) + " x " + std::to_string(g.out_w) +
                                " pixels (their product must be at most 2^28)" + binding_note(a, b));
  if (extent % hw != 0)
    return err_(f.loc, "a strided '@conv' reads whole images, but the dimension's extent " + std::to_string(extent) +
                           " is not a multiple of H*W = " + std::to_string(hw) + binding_note(a, b));
  if (__builtin_mul_overflow(extent / hw, int64_t(g.out_h) * g.out_w, &g.out_extent) || g.out_extent > (int64_t(1) << 40))
    return err_(f.loc, "a strided '@conv' reads " + std::to_string(extent / hw) + " images of " + std::to_string(g.out_h) + " x " +
                           std::to_string(g.out_w) + " output pixels, past 2^40" + binding_note(a, b));
  return {};
}

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
        ConvGeometry g;
        BATON_TRY(conv_geometry(a, cs, rd, x.extent, b, g));
        x.img_h = g.img_h;
        x.img_w = g.img_w;
        if (rd.strided) {
          x.out_h = g.out_h;
          x.out_w = g.out_w;
          x.stride = g.stride;
        }
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
        if (x.out_h > 0)  // the output pixels, and an output row's anchor p*stride, in input pixels
          span += double(x.extent) / (double(x.img_h) * x.img_w) * x.out_h * x.out_w + double(x.out_h) * x.out_w +
                  double(x.stride) * (double(x.img_h) * x.img_w + x.img_w);
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
