// baton/dsl/analysis.hpp — what batonc does with a parsed .baton program (host only):
//
//   1. semantic checks, each a located error: unknown or duplicate names, rank mismatches, maps
//      that are not affine, writes that depend on k, a tensor written twice, a cyclic dependency,
//      a map that leaves the tensor (the producer's grid) for some tile;
//      then, per binding, overlap (no two tiles of a stage write one element unless the write
//      says `accumulate`) and coverage (every element a consumer reads is written by a producer
//      tile), each naming the region;
//   2. the edges: a stage that reads a tensor another stage writes depends on it; an edge with a
//      `relation` line is proven to have maps that read exactly that relation (or more, `loose`),
//      and its candidates are proven against it too;
//   3. per edge, the candidate policies (tile, kblock, row, column, per tile or per k-block, and
//      any group(GM, GN) the program names), each proven with check_soundness against the exact
//      relation, enumerated here from the element boxes, for every parameter binding the program
//      asks to prove ("param M = 128 in {1, 17, 128}");
//   4. the choice: sound, then the earliest start (fewest producer tiles forced before a
//      consumer's first k-block), then the fewest waits, then the least over-synchronization;
//   5. tile orders: each producer walks its tiles in the order (row- or column-major) in which its
//      consumers first need them, unless the stage names one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <tuple>
#include <type_traits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/policy_kinds.hpp"
#include "baton/dsl/program.hpp"
#include "baton/dsl/relations.hpp"
#include "baton/footprint.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

using Binding = std::map<std::string, int64_t>;

// ---- affine forms ------------------------------------------------------------------------------

// sum_v coef[v] * v + c0 where v ranges over the index variables (m, n, z, k-loop variables) and
// the coefficients are expressions over parameters only.
struct LinForm {
  std::map<std::string, ExprPtr> coef;
  ExprPtr c0;
};

namespace detail {
inline ExprPtr bin(Expr::Kind k, ExprPtr a, ExprPtr b) {
  if (a->kind == Expr::num && b->kind == Expr::num) {
    const int64_t x = a->value, y = b->value;
    int64_t r = 0;
    constexpr int64_t lim = int64_t(1) << 40;
    // Fold only what stays in range; the rest is left to eval(), which reports it.
    const bool over = k == Expr::mul ? __builtin_mul_overflow(x, y, &r) : k == Expr::add ? __builtin_add_overflow(x, y, &r)
                                                                         : __builtin_sub_overflow(x, y, &r);
    if ((k == Expr::add || k == Expr::sub || k == Expr::mul) && !over && r <= lim && r >= -lim) return make_num(r, a->loc);
  }
  if (k == Expr::add && a->kind == Expr::num && a->value == 0) return b;
  if ((k == Expr::add || k == Expr::sub) && b->kind == Expr::num && b->value == 0) return a;
  if (k == Expr::mul && a->kind == Expr::num && a->value == 1) return b;
  if (k == Expr::mul && b->kind == Expr::num && b->value == 1) return a;
  if (k == Expr::mul && ((a->kind == Expr::num && a->value == 0) || (b->kind == Expr::num && b->value == 0)))
    return make_num(0, a->loc);
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->a = std::move(a);
  e->b = std::move(b);
  e->loc = e->a->loc;
  return e;
}
inline ExprPtr neg(ExprPtr a) {
  if (a->kind == Expr::num) return make_num(-a->value, a->loc);
  return bin(Expr::sub, make_num(0, a->loc), std::move(a));
}
}  // namespace detail

// ---- the analysis result -------------------------------------------------------------------------

struct DimForm {
  LinForm start;
  ExprPtr width;   // over parameters only
  ExprPtr extent;  // the tensor's extent in this dimension
  Loc loc;
  // `@conv(H, W, DR, DS)` (reads): images of img_h x img_w (parameters only); the tap's row and
  // column shifts dr, ds (k-loop variables and parameters). The start then has no k terms.
  bool conv = false;
  ExprPtr img_h, img_w;
  LinForm dr, ds;
};
struct AccessForm {
  std::string tensor;
  Loc loc;
  bool clip = false;
  bool accumulate = false;
  std::vector<DimForm> dims;
};
struct StageInfo {
  std::string name;
  Loc loc;
  ExprPtr ext[3];  // grid m, n, z (never null: 1 where not given)
  std::vector<std::string> kvars;
  std::vector<ExprPtr> kext;  // over parameters; a tile-dependent bound's largest value
  // `k j < m + 1`: the first k-loop variable's extent, affine in the tile indices (causal
  // attention's key blocks up to the query block). kext[0] is its largest value over the grid, the
  // k-blocks every policy walks; a tile's k-blocks past its own bound read nothing.
  bool kbound = false;
  LinForm kbound_form;
  ExprPtr kbound_min;  // its smallest value over the grid (must be >= 1)
  std::vector<AccessForm> reads, writes;
  std::vector<int64_t> tile;
  std::string order;  // as written ("" = batonc chooses)
  ExprPtr order_group;
  Loc order_loc;
};

struct Candidate {
  std::string kind;  // a PolicyKind's name (policy_kinds.hpp): tile, kblock, row, row_k, ...
  int64_t group_m = 0, group_n = 0;
  std::string footprint = "affine";  // a built-in footprint named by a sync (gemm_a, identity, ...)
  bool lowered = false;              // footprint chosen by batonc (GEMM form), not named by a sync
  // Waits on the union of the reads' boxes (dsl::BoxesPolicy) instead of their bounding box: the
  // edge's reads lie apart in the producer's grid (EdgeInfo::boxes).
  bool boxes = false;
  bool sound = true;
  std::string why_not;     // the first failing binding's counterexample
  double start_tiles = 0;  // producer tiles forced before a consumer's first k-block, mean (default binding)
  int64_t waits = 0;       // waits per pass (default binding)
  int64_t over_sync = 0;   // (consumer, producer never read) pairs forced (default binding)
  int64_t reads = 0;       // reads checked, all bindings
  // boxes: what the same kind over the bounding box would cost (default binding), for --explain.
  double bbox_start_tiles = 0;
  int64_t bbox_over_sync = 0;
};

struct EdgeInfo {
  int producer = -1, consumer = -1;
  std::vector<std::pair<int, int>> links;  // (consumer read index, producer write index)
  std::string tensors;                     // "Y" or "K, V"
  const SyncDecl* sync = nullptr;          // a policy chosen by hand
  const RelationDecl* relation = nullptr;  // the exact relation given apart from the maps
  const RelationKind* relation_kind = nullptr;
  int64_t over_reads = 0;                  // reads the maps add to the relation (loose), default binding
  std::string lowering_hint;               // why a nearly GEMM-shaped edge keeps dsl::AffineFootprint
  // The consumer reads the producer's output in several places whose bounding box holds producer
  // tiles none of them reads (at the default binding): its dsl::AffineFootprint candidates wait on
  // the union of the boxes (dsl::BoxesPolicy).
  bool boxes = false;
  std::vector<Candidate> candidates;
  int chosen = -1;
  std::string label;  // "gemm1 -> gemm2"
};

struct OrderChoice {
  std::string kind;  // row, column, grouped
  int64_t group = 0;
  std::string why;
};

// What analyze() proves besides the maps.
struct AnalyzeOptions {
  // Prove each edge's maps and candidates against its `relation` (batonc --check proves its
  // policy against the relation itself, so it turns this off to reach the policy).
  bool prove_relations = true;
};

struct Analysis {
  Program program;
  std::vector<Binding> bindings;  // [0] = the defaults
  std::vector<StageInfo> stages;
  std::vector<EdgeInfo> edges;
  std::vector<OrderChoice> orders;  // per stage
};

// Policies by name, over any footprint: f(policy). A candidate with `boxes` over an
// AffineFootprint is the BoxesPolicy of its kind's grouping.
template <class F, class Fn>
auto with_policy(const Candidate& c, Grid producer, const F& fp, Fn&& fn) {
  const PolicyKind* k = find_policy_kind(c.kind);
  const bool per_k = k != nullptr && k->per_k;
  if constexpr (std::is_same_v<F, AffineFootprint>) {
    if (c.boxes) {
      if (k != nullptr && k->family == "tile") return fn(BoxesPolicy<Grouping::tile>{producer, fp, per_k});
      if (k != nullptr && k->family == "row") return fn(BoxesPolicy<Grouping::row>{producer, fp, per_k});
      if (k != nullptr && k->family == "column") return fn(BoxesPolicy<Grouping::column>{producer, fp, per_k});
      return fn(BoxesPolicy<Grouping::group>{producer, fp, per_k, int(c.group_m), int(c.group_n)});
    }
  }
  if (k != nullptr && k->family == "tile") return fn(TilePolicy<F>{producer, fp, per_k});
  if (k != nullptr && k->family == "row") return fn(RowPolicy<F>{producer, fp, per_k});
  if (k != nullptr && k->family == "column") return fn(ColumnPolicy<F>{producer, fp, per_k});
  return fn(GroupPolicy<F>{producer, fp, int(c.group_m), int(c.group_n), per_k});
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

inline std::string describe_policy(const Candidate& c) {
  const PolicyKind* k = find_policy_kind(c.kind);
  const std::string boxes = c.boxes ? ", over the union of the reads' boxes (dsl::BoxesPolicy)" : "";
  if (k != nullptr && k->family != "group") return std::string(k->description) + boxes;
  return "GroupPolicy (one semaphore per " + std::to_string(c.group_m) + "x" + std::to_string(c.group_n) +
         " block of producer tiles" + (c.kind == "group_k" ? ", waits per k-block)" : ")") + boxes;
}
inline std::string candidate_name(const Candidate& c) {
  if (c.kind == "group" || c.kind == "group_k")
    return "group(" + std::to_string(c.group_m) + "," + std::to_string(c.group_n) + ")" + (c.kind == "group_k" ? " per k" : "") +
           (c.footprint == "affine" ? "" : " @ " + c.footprint);
  const std::string fp = c.footprint == "affine" || c.lowered ? "" : " @ " + c.footprint;
  const PolicyKind* k = find_policy_kind(c.kind);
  return (k != nullptr ? std::string(k->shown) : c.kind) + fp;
}

// ---- the analyzer --------------------------------------------------------------------------------

class Analyzer {
 public:
  // proof_budget: the most proof steps (proof_cost) the whole program may take.
  explicit Analyzer(Program p, int64_t proof_budget = kProofBudget, AnalyzeOptions o = {}) : budget_(proof_budget), opt_(o) {
    a_.program = std::move(p);
  }

  result<Analysis> run() {
    BATON_TRY(names_());
    BATON_TRY(bindings_());
    BATON_TRY(stages_());
    BATON_TRY(edges_());
    BATON_TRY(acyclic_());
    for (const Binding& b : a_.bindings) BATON_TRY(bounds_(b));
    for (const Binding& b : a_.bindings) BATON_TRY(overlaps_(b));
    for (const Binding& b : a_.bindings)
      for (const EdgeInfo& e : a_.edges) BATON_TRY(coverage_(e, b));
    for (EdgeInfo& e : a_.edges) BATON_TRY(choose_(e));
    BATON_TRY(orders_());
    return std::move(a_);
  }

  // ---- concrete values (also used by the emitter's self-check and by --check) ----
  static status eval(const Program& prog, const Expr& e, const Binding& b, int64_t& out) {
    auto err = [&](const std::string& m) { return status(errc::invalid_argument, located(prog.file, prog.source, e.loc, m)); };
    int64_t x = 0, y = 0;
    if (e.kind == Expr::num) {
      out = e.value;
      return {};
    }
    if (e.kind == Expr::name) {
      auto it = b.find(e.id);
      if (it == b.end()) return err("'" + e.id + "' has no value here");
      out = it->second;
      return {};
    }
    BATON_TRY(eval(prog, *e.a, b, x));
    if (e.kind == Expr::neg) {
      out = -x;
      return {};
    }
    BATON_TRY(eval(prog, *e.b, b, y));
    constexpr int64_t lim = int64_t(1) << 40;
    switch (e.kind) {
      case Expr::add: out = x + y; break;
      case Expr::sub: out = x - y; break;
      case Expr::mul:
        if (__builtin_mul_overflow(x, y, &out)) return err("value too large (|v| > 2^40)");
        break;
      case Expr::div:
      case Expr::mod:
      case Expr::cdiv:
        if (y <= 0) return err("division by " + std::to_string(y) + " (divisors must be >= 1)");
        if (x < 0) return err("division of a negative value " + std::to_string(x));
        out = e.kind == Expr::div ? x / y : e.kind == Expr::mod ? x % y : (x + y - 1) / y;
        break;
      case Expr::min: out = std::min(x, y); break;
      case Expr::max: out = std::max(x, y); break;
      default: return err("bad expression");
    }
    if (out > lim || out < -lim) return err("value too large (|v| > 2^40)");
    return {};
  }

  // The edge's footprint under binding b.
  static status footprint(const Analysis& a, const EdgeInfo& e, const Binding& b, AffineFootprint& fp) {
    const Program& prog = a.program;
    const StageInfo& ps = a.stages[size_t(e.producer)];
    const StageInfo& cs = a.stages[size_t(e.consumer)];
    fp = AffineFootprint{};
    BATON_TRY(grid(prog, ps, b, fp.producer));
    fp.kvars = int(cs.kvars.size());
    for (size_t j = 0; j < cs.kvars.size(); ++j) BATON_TRY(eval_int_(prog, *cs.kext[j], b, fp.kext[j]));
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
        BATON_TRY(coef_(prog, rd.start, "m", b, x.cm));
        BATON_TRY(coef_(prog, rd.start, "n", b, x.cn));
        BATON_TRY(coef_(prog, rd.start, "z", b, x.cz));
        for (size_t j = 0; j < cs.kvars.size(); ++j) BATON_TRY(coef_(prog, rd.start, cs.kvars[j], b, x.ck[j]));
        BATON_TRY(eval_int_(prog, *rd.start.c0, b, x.c0));
        BATON_TRY(eval_int_(prog, *rd.width, b, x.width));
        BATON_TRY(eval_int_(prog, *rd.extent, b, x.extent));
        if (rd.conv) {
          BATON_TRY(eval_int_(prog, *rd.img_h, b, x.img_h));
          BATON_TRY(eval_int_(prog, *rd.img_w, b, x.img_w));
          // At most 2^28 pixels an image: the device's int arithmetic on pixel indices (below 2^30)
          // steps up to two images past one.
          if (x.img_h < 1 || x.img_w < 1 || int64_t(x.img_h) * x.img_w > (int64_t(1) << 28))
            return status(errc::invalid_argument, located(prog.file, prog.source, rd.img_h->loc,
                                                          "'@conv' images of " + std::to_string(x.img_h) + " x " + std::to_string(x.img_w) +
                                                              " pixels (each extent must be >= 1, their product at most 2^28)"));
          for (size_t j = 0; j < cs.kvars.size(); ++j) {
            BATON_TRY(coef_(prog, rd.dr, cs.kvars[j], b, x.rk[j]));
            BATON_TRY(coef_(prog, rd.ds, cs.kvars[j], b, x.sk[j]));
          }
          BATON_TRY(eval_int_(prog, *rd.dr.c0, b, x.r0));
          BATON_TRY(eval_int_(prog, *rd.ds.c0, b, x.s0));
        }
        x.axis = -1;
        static const char* axes[] = {"m", "n", "z"};
        for (int ax = 0; ax < 3; ++ax)
          if (wd.start.coef.count(axes[ax])) {
            x.axis = ax;
            BATON_TRY(coef_(prog, wd.start, axes[ax], b, x.pc));
          }
        if (x.axis < 0) x.pc = 1;
        BATON_TRY(eval_int_(prog, *wd.start.c0, b, x.p0));
        BATON_TRY(eval_int_(prog, *wd.width, b, x.pw));
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
    BATON_TRY(grid(prog, cs, b, cg));
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

  // The exact relation, enumerated from the element boxes (independent of AffineFootprint's
  // inversion): consumer tile t, k-block k reads producer tile p iff, for one linked access, p's
  // write box meets t's read box (both clipped to the tensor) in every dimension.
  // k_first_bound (optional): tile t's k-blocks whose first k-loop variable reaches it read nothing.
  static DependencyRelation relation(const AffineFootprint& fp, Grid consumer, std::string description,
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
          lo = std::max<int64_t>(lo, 0);
          hi = std::min<int64_t>(hi, x.extent);
          if (lo >= hi) {
            none = true;
            break;
          }
          auto meets = [&](int64_t w0) {  // the write box, clipped to the tensor, meets [lo, hi)
            const int64_t w0c = std::max<int64_t>(w0, 0), w1c = std::min<int64_t>(w0 + x.pw, x.extent);
            return std::max(w0c, lo) < std::min(w1c, hi);
          };
          if (x.img_w > 0) {
            // A conv tap, pixel by pixel: pixel o (n, h, w) is read at (h + dr, w + ds) when that
            // stays inside its image (independent of AffineFootprint's first/last formula).
            int64_t dr = x.r0, ds = x.s0;
            for (int j = 0; j < fp.kvars; ++j) {
              dr += int64_t(x.rk[j]) * kv[j];
              ds += int64_t(x.sk[j]) * kv[j];
            }
            const int64_t hw = int64_t(x.img_h) * x.img_w;
            const int64_t o0 = lo, o1 = hi;
            const int n_ext = x.axis < 0 ? 1 : ext[x.axis];
            std::vector<char> mine(size_t(n_ext), 0);
            bool any = false;
            for (int64_t o = o0; o < o1; ++o) {
              const int64_t h = (o % hw) / x.img_w + dr, w = o % x.img_w + ds;
              if (h < 0 || h >= x.img_h || w < 0 || w >= x.img_w) continue;
              const int64_t e = o + dr * x.img_w + ds;
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

  // What proving one policy against relation(fp, consumer) costs (check_soundness's loops and the
  // relation's scans), in elementary steps: the proofs are bounded by it, so no program hangs batonc.
  static constexpr int64_t kProofBudget = int64_t(1) << 28;  // default per program (all edges, bindings, candidates)
  static int64_t proof_cost(const AffineFootprint& fp, Grid consumer) {
    const int64_t nc = consumer.size(), np = fp.producer.size(), nk = fp.k_blocks();
    const int64_t ext = int64_t(fp.producer.m) + fp.producer.n + fp.producer.z;
    if (nc * nk > (int64_t(1) << 22) || nc * np > (int64_t(1) << 24)) return int64_t(1) << 40;  // do not even count
    int64_t cost = 2 * nc * np + nc * nk * (4 + ext * fp.accesses);
    for (int a = 0; a < fp.accesses; ++a)  // a conv tap's relation visits each pixel of the read
      for (int d = 0; d < fp.access[a].dims; ++d)
        if (fp.access[a].dim[d].img_w > 0) cost += nc * nk * 4 * int64_t(fp.access[a].dim[d].width);
    for (int i = 0; i < int(nc); ++i)
      for (int k = 0; k < int(nk); ++k) cost += fp.rect(consumer.tile(i), k).count();
    return cost;
  }

  // A message located in a relation's text (the program's, or batonc --relation's).
  static std::string relation_located(const Program& prog, const RelationDecl& d, Loc l, const std::string& msg) {
    return d.origin_file.empty() ? located(prog.file, prog.source, l, msg) : located(d.origin_file, d.origin_source, l, msg);
  }
  // " (with M = 17)" for a binding other than the defaults.
  static std::string binding_note(const Analysis& a, const Binding& b) {
    std::string s;
    for (auto& [k, v] : b)
      if (a.bindings.front().at(k) != v) s += (s.empty() ? "" : ", ") + k + " = " + std::to_string(v);
    return s.empty() ? "" : " (with " + s + ")";
  }

  // The relation edge e's `relation` line gives at binding b, over the program's grids; an error
  // when its shape (producer grid, k-blocks) is not the program's.
  static status declared_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, DependencyRelation& out) {
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
    BATON_TRY(grid(prog, ps, b, pg));
    BATON_TRY(grid(prog, cs, b, cg));
    int kb = 1;
    BATON_TRY(k_blocks(prog, cs, b, kb));
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

  // A tile-dependent first k-loop bound at binding b as a function of the tile (empty: none).
  static status k_first_bound(const Program& prog, const StageInfo& s, const Binding& b, std::function<int(Tile)>& out) {
    out = nullptr;
    if (!s.kbound) return {};
    int64_t c[4] = {0, 0, 0, 0};
    BATON_TRY(eval(prog, *s.kbound_form.c0, b, c[3]));
    static const char* axes[] = {"m", "n", "z"};
    for (int ax = 0; ax < 3; ++ax)
      if (auto it = s.kbound_form.coef.find(axes[ax]); it != s.kbound_form.coef.end()) BATON_TRY(eval(prog, *it->second, b, c[ax]));
    out = [c0 = c[3], cm = c[0], cn = c[1], cz = c[2]](Tile t) { return int(cm * t.m + cn * t.n + cz * t.z + c0); };
    return {};
  }
  // The maps' relation for edge e at binding b (fp and cg at that binding): k-blocks past a
  // tile-dependent bound read nothing.
  static status maps_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, const AffineFootprint& fp, Grid cg,
                              DependencyRelation& out) {
    std::function<int(Tile)> bound;
    BATON_TRY(k_first_bound(a.program, a.stages[size_t(e.consumer)], b, bound));
    out = relation(fp, cg, e.label, std::move(bound));
    return {};
  }

  static status grid(const Program& prog, const StageInfo& s, const Binding& b, Grid& g) {
    int v[3] = {1, 1, 1};
    for (int ax = 0; ax < 3; ++ax) BATON_TRY(eval_int_(prog, *s.ext[ax], b, v[ax]));
    g = Grid{v[0], v[1], v[2]};
    if (!g.valid())
      return status(errc::invalid_argument, located(prog.file, prog.source, s.loc,
                                                    "stage '" + s.name + "' has grid " + to_string(g) +
                                                        " (every extent must be >= 1, at most 2^31 - 1 tiles)"));
    return {};
  }
  static status k_blocks(const Program& prog, const StageInfo& s, const Binding& b, int& k) {
    int64_t kk = 1;
    for (const ExprPtr& e : s.kext) {
      int v = 0;
      BATON_TRY(eval_int_(prog, *e, b, v));
      if (v < 1)
        return status(errc::invalid_argument,
                      located(prog.file, prog.source, e->loc, "a k-loop extent of stage '" + s.name + "' is " + std::to_string(v) + " (must be >= 1)"));
      kk *= v;
      if (kk > 0x7fffffff) return status(errc::invalid_argument, "stage '" + s.name + "' has too many k-blocks");
    }
    k = int(kk);
    return {};
  }

 private:
  status err_(Loc l, const std::string& msg, errc c = errc::invalid_argument) const {
    return status(c, located(a_.program.file, a_.program.source, l, msg));
  }
  static status eval_int_(const Program& prog, const Expr& e, const Binding& b, int& out) {
    int64_t v = 0;
    BATON_TRY(eval(prog, e, b, v));
    if (v > 0x7fffffff || v < -0x7fffffff)
      return status(errc::invalid_argument, located(prog.file, prog.source, e.loc, "value " + std::to_string(v) + " does not fit in int"));
    out = int(v);
    return {};
  }
  static status coef_(const Program& prog, const LinForm& f, const std::string& v, const Binding& b, int& out) {
    auto it = f.coef.find(v);
    if (it == f.coef.end()) {
      out = 0;
      return {};
    }
    return eval_int_(prog, *it->second, b, out);
  }

  // Names: parameters, tensors and stages are unique; expressions name only what is in scope.
  status names_() {
    std::set<std::string> seen;
    for (const Param& p : a_.program.params) {
      if (!seen.insert(p.name).second) return err_(p.loc, "parameter '" + p.name + "' is declared twice");
      BATON_TRY(scope_(*p.value, params_before_(p.name), "a parameter's value"));
      for (const ExprPtr& v : p.proven) BATON_TRY(scope_(*v, params_before_(p.name), "a parameter's value"));
    }
    for (const TensorDecl& t : a_.program.tensors) {
      if (seen.count(t.name)) return err_(t.loc, "'" + t.name + "' is declared twice");
      seen.insert(t.name);
      if (t.extents.size() > size_t(kMaxDims))
        return err_(t.loc, "tensor '" + t.name + "' has rank " + std::to_string(t.extents.size()) + " (at most " + std::to_string(kMaxDims) + ")");
      for (const ExprPtr& e : t.extents) BATON_TRY(scope_(*e, all_params_(), "a tensor extent"));
    }
    for (const StageDecl& s : a_.program.stages) {
      if (seen.count(s.name)) return err_(s.loc, "'" + s.name + "' is declared twice");
      seen.insert(s.name);
    }
    return {};
  }
  std::set<std::string> params_before_(const std::string& name) const {
    std::set<std::string> s;
    for (const Param& p : a_.program.params) {
      if (p.name == name) break;
      s.insert(p.name);
    }
    return s;
  }
  std::set<std::string> all_params_() const {
    std::set<std::string> s;
    for (const Param& p : a_.program.params) s.insert(p.name);
    return s;
  }
  status scope_(const Expr& e, const std::set<std::string>& names, const char* where, const RelationDecl* origin = nullptr) const {
    auto err_ = [&](Loc l, const std::string& m) { return status(errc::invalid_argument, origin ? relation_located(a_.program, *origin, l, m)
                                                                                               : located(a_.program.file, a_.program.source, l, m)); };
    if (e.kind == Expr::name && !names.count(e.id)) {
      bool is_param = false;
      for (const Param& p : a_.program.params) is_param |= p.name == e.id;
      if (is_param) return err_(e.loc, "'" + e.id + "' is used before its declaration in " + where);
      const bool tile_index = e.id == "m" || e.id == "n" || e.id == "z";
      if (std::string(where) == "the first k-loop extent" && (tile_index || index_vars_.count(e.id)))
        return err_(e.loc, "'" + e.id + "' is a k-loop variable; the first k-loop extent may name parameters and the tile indices m, n, z ('k j < m + 1')");
      if (std::string(where) == "a k-loop extent other than the first" && tile_index)
        return err_(e.loc, "'" + e.id + "' is a tile index, but only the first (outermost) k-loop variable may have a tile-dependent bound: "
                               "'k j < m + 1, cb < cdiv(C, 64)'");
      if (tile_index || index_vars_.count(e.id))
        return err_(e.loc, "'" + e.id + "' is a tile or k index, but " + where + " may name parameters only (it is the same for every tile)");
      return err_(e.loc, "unknown name '" + e.id + "' in " + where + did_you_mean(e.id, std::vector<std::string>(names.begin(), names.end())));
    }
    if (e.a) BATON_TRY(scope_(*e.a, names, where, origin));
    if (e.b) BATON_TRY(scope_(*e.b, names, where, origin));
    return {};
  }

  // Bindings: the defaults, then each proven value of each parameter (others at their default).
  status bindings_() {
    Binding def;
    for (const Param& p : a_.program.params) {
      int64_t v = 0;
      BATON_TRY(eval(a_.program, *p.value, def, v));
      def[p.name] = v;
    }
    a_.bindings.push_back(def);
    for (const Param& p : a_.program.params)
      for (const ExprPtr& e : p.proven) {
        Binding b = def;
        int64_t v = 0;
        BATON_TRY(eval(a_.program, *e, def, v));
        if (v == def[p.name]) continue;
        b[p.name] = v;
        // Later parameters defined from this one follow it.
        bool after = false;
        for (const Param& q : a_.program.params) {
          if (q.name == p.name) {
            after = true;
            continue;
          }
          if (after) BATON_TRY(eval(a_.program, *q.value, b, b[q.name]));
        }
        a_.bindings.push_back(b);
      }
    if (a_.bindings.size() > 64) return status(errc::invalid_argument, "more than 64 parameter bindings to prove");
    return {};
  }

  // Linearizes e over the index variables `vars`; parameters are constants.
  status linearize_(const Expr& e, const std::set<std::string>& vars, LinForm& out) const {
    out = LinForm{};
    switch (e.kind) {
      case Expr::num: out.c0 = make_num(e.value, e.loc); return {};
      case Expr::name:
        if (vars.count(e.id)) {
          out.coef[e.id] = make_num(1, e.loc);
          out.c0 = make_num(0, e.loc);
        } else {
          out.c0 = std::make_shared<Expr>(e);
        }
        return {};
      case Expr::neg: {
        LinForm a;
        BATON_TRY(linearize_(*e.a, vars, a));
        for (auto& [v, c] : a.coef) out.coef[v] = detail::neg(c);
        out.c0 = detail::neg(a.c0);
        return {};
      }
      case Expr::add:
      case Expr::sub: {
        LinForm a, b;
        BATON_TRY(linearize_(*e.a, vars, a));
        BATON_TRY(linearize_(*e.b, vars, b));
        out = a;
        for (auto& [v, c] : b.coef) {
          ExprPtr rhs = e.kind == Expr::add ? c : detail::neg(c);
          out.coef[v] = out.coef.count(v) ? detail::bin(Expr::add, out.coef[v], rhs) : rhs;
        }
        out.c0 = detail::bin(e.kind, a.c0, b.c0);
        return {};
      }
      case Expr::mul: {
        LinForm a, b;
        BATON_TRY(linearize_(*e.a, vars, a));
        BATON_TRY(linearize_(*e.b, vars, b));
        if (!a.coef.empty() && !b.coef.empty())
          return err_(e.loc, "not affine: a product of two index expressions ('" + to_string(*e.a) + "' * '" + to_string(*e.b) + "')");
        const LinForm& lin = a.coef.empty() ? b : a;
        const ExprPtr& k = a.coef.empty() ? a.c0 : b.c0;
        for (auto& [v, c] : lin.coef) out.coef[v] = detail::bin(Expr::mul, c, k);
        out.c0 = detail::bin(Expr::mul, lin.c0, k);
        return {};
      }
      default: {
        LinForm a, b;
        BATON_TRY(linearize_(*e.a, vars, a));
        if (e.b) BATON_TRY(linearize_(*e.b, vars, b));
        if (!a.coef.empty() || !b.coef.empty()) {
          const char* op = e.kind == Expr::div ? "'/'" : e.kind == Expr::mod ? "'%'" : e.kind == Expr::cdiv ? "cdiv" : e.kind == Expr::min ? "min" : "max";
          return err_(e.loc, std::string("not affine: ") + op + " of an index expression ('" + to_string(e) +
                                 "'): cdiv, min, max, '/' and '%' take parameters only, and tile and k indices may only be added "
                                 "and scaled by parameters; ranges are clipped to the tensor, so ragged last tiles need no min, "
                                 "and a causal k-loop is bounded by the tile in the k line ('k j < m + 1')");
        }
        out.c0 = std::make_shared<Expr>(e);
        return {};
      }
    }
  }

  status access_(const StageDecl& s, const Access& acc, bool write, const std::set<std::string>& vars, AccessForm& out) {
    const TensorDecl* t = nullptr;
    for (const TensorDecl& d : a_.program.tensors)
      if (d.name == acc.tensor) t = &d;
    if (!t) {
      std::vector<std::string> names;
      for (const TensorDecl& d : a_.program.tensors) names.push_back(d.name);
      const std::string hint = did_you_mean(acc.tensor, names);
      const std::string declare = "declare it: tensor " + acc.tensor + "[...]";
      return err_(acc.loc, "unknown tensor '" + acc.tensor + "'" + (hint.empty() ? " (" + declare + ")" : hint + " (or " + declare + ")"));
    }
    if (acc.ranges.size() != t->extents.size())
      return err_(acc.loc, "tensor '" + acc.tensor + "' has rank " + std::to_string(t->extents.size()) + " but the access gives " +
                               std::to_string(acc.ranges.size()) + " ranges");
    if (write && acc.clip) return err_(acc.loc, "'clip' is for reads (padding); a write must stay inside its tensor");
    if (!write && acc.accumulate)
      return err_(acc.loc, "'accumulate' is for writes (tiles adding into the same elements, split-K); remove it from the read");
    out.tensor = acc.tensor;
    out.loc = acc.loc;
    out.clip = acc.clip;
    out.accumulate = acc.accumulate;
    std::map<std::string, size_t> axis_dim;  // (writes) the dimension each tile index places
    std::set<std::string> names = all_params_();
    names.insert(vars.begin(), vars.end());
    for (size_t d = 0; d < acc.ranges.size(); ++d) {
      const Range& r = acc.ranges[d];
      DimForm f;
      f.loc = r.loc;
      f.extent = t->extents[d];
      if (r.whole) {
        f.start.c0 = make_num(0, r.loc);
        f.width = t->extents[d];
      } else {
        BATON_TRY(scope_(*r.start, names, "an access"));
        BATON_TRY(linearize_(*r.start, vars, f.start));
        if (r.width) {
          BATON_TRY(scope_(*r.width, names, "an access width"));
          LinForm w;
          BATON_TRY(linearize_(*r.width, vars, w));
          if (!w.coef.empty()) return err_(r.width->loc, "a width must not depend on tile or k indices");
          f.width = r.width;
        } else {
          f.width = make_num(1, r.loc);
        }
      }
      if (r.conv) {
        const ConvRange& c = *r.conv;
        if (write) return err_(c.loc, "'@conv' is for reads (a convolution's taps); a write is a plain range: start +: width");
        for (auto& [v, co] : f.start.coef)
          if (v != "m" && v != "n" && v != "z")
            return err_(r.loc, "with '@conv' the range's start depends on the tile only, but it has k-loop variable '" + v +
                                   "': put the tap's shift in DR and DS (@conv(H, W, r - 1, s - 1))");
        for (const ExprPtr* e : {&c.h, &c.w}) {
          BATON_TRY(scope_(**e, all_params_(), "an image extent of '@conv'"));
          f.conv = true;
        }
        f.img_h = c.h;
        f.img_w = c.w;
        for (auto [e, out] : {std::pair{&c.dr, &f.dr}, std::pair{&c.ds, &f.ds}}) {
          BATON_TRY(scope_(**e, names, "a tap shift of '@conv'"));
          BATON_TRY(linearize_(**e, vars, *out));
          for (auto& [v, co] : out->coef)
            if (v == "m" || v == "n" || v == "z")
              return err_((*e)->loc, "a tap shift of '@conv' depends on tile index '" + v +
                                         "'; it may use k-loop variables and parameters only (the tap, e.g. r - 1)");
        }
      }
      if (write) {
        int axes = 0;
        for (auto& [v, c] : f.start.coef) {
          if (v != "m" && v != "n" && v != "z")
            return err_(r.loc, "stage '" + s.name + "' writes " + acc.tensor + " at a place that depends on k-loop variable '" + v +
                                   "'; a tile's output must not depend on its k-blocks");
          ++axes;
        }
        if (axes > 1)
          return err_(r.loc, "stage '" + s.name + "' writes dimension " + std::to_string(d) + " of " + acc.tensor +
                                 " at a place that depends on two tile indices; use one index per dimension (c*m + b)");
        // A tile's write is a box whose dimensions move with distinct tile indices: the written
        // region is then a product of per-dimension sets (coverage and overlap are checked per
        // dimension).
        for (auto& [v, c] : f.start.coef)
          if (auto [it, fresh] = axis_dim.emplace(v, d); !fresh)
            return err_(r.loc, "stage '" + s.name + "' writes " + acc.tensor + " with tile index '" + v + "' in dimensions " +
                                   std::to_string(it->second) + " and " + std::to_string(d) +
                                   "; a tile writes a box: place each tile index in one dimension");
      }
      out.dims.push_back(std::move(f));
    }
    return {};
  }

  status stages_() {
    for (const StageDecl& s : a_.program.stages)
      for (const KVar& v : s.kvars) index_vars_.insert(v.name);
    for (const StageDecl& s : a_.program.stages) {
      StageInfo si;
      si.name = s.name;
      si.loc = s.loc;
      si.tile = s.tile;
      si.order = s.order;
      si.order_group = s.order_group;
      si.order_loc = s.order_loc;
      for (ExprPtr& e : si.ext) e = make_num(1, s.loc);
      if (s.grid.empty()) return err_(s.loc, "stage '" + s.name + "' has no grid (grid m < ..., n < ...)");
      const std::set<std::string> params = all_params_();
      for (const Axis& ax : s.grid) {
        BATON_TRY(scope_(*ax.extent, params, "a grid extent"));
        si.ext[ax.name == 'm' ? 0 : ax.name == 'n' ? 1 : 2] = ax.extent;
      }
      if (s.kvars.size() > size_t(kMaxKVars))
        return err_(s.kvars[size_t(kMaxKVars)].loc, "at most " + std::to_string(kMaxKVars) + " k-loop variables");
      std::set<std::string> vars;
      for (const Axis& ax : s.grid) vars.insert(std::string(1, ax.name));
      for (const KVar& v : s.kvars) {
        if (params.count(v.name)) return err_(v.loc, "k-loop variable '" + v.name + "' shadows a parameter");
        if (!vars.insert(v.name).second) return err_(v.loc, "k-loop variable '" + v.name + "' declared twice");
        si.kvars.push_back(v.name);
        if (si.kvars.size() > 1) {  // later (inner) variables keep one extent: k-blocks stay a mixed-radix number
          BATON_TRY(scope_(*v.extent, params, "a k-loop extent other than the first"));
          si.kext.push_back(v.extent);
          continue;
        }
        std::set<std::string> with_tile = params;
        for (const Axis& ax : s.grid) with_tile.insert(std::string(1, ax.name));
        BATON_TRY(scope_(*v.extent, with_tile, "the first k-loop extent"));
        static const std::set<std::string> tile_vars{"m", "n", "z"};
        LinForm f;
        BATON_TRY(linearize_(*v.extent, tile_vars, f));
        if (f.coef.empty()) {
          si.kext.push_back(v.extent);
          continue;
        }
        // Its largest and smallest values over the grid: c0 + sum of c * (extent - 1) over the
        // tile indices, taking each term's positive (largest) or negative (smallest) part.
        si.kbound = true;
        si.kbound_form = f;
        ExprPtr hi = f.c0, lo = f.c0;
        for (auto& [var, coef] : f.coef) {
          const ExprPtr span = detail::bin(Expr::sub, si.ext[var == "m" ? 0 : var == "n" ? 1 : 2], make_num(1, v.loc));
          const ExprPtr c = coef;  // (a structured binding cannot be captured before C++20 compilers catch up)
          auto part = [&](Expr::Kind k) {
            auto e = std::make_shared<Expr>();
            e->kind = k;
            e->a = make_num(0, v.loc);
            e->b = c;
            e->loc = v.loc;
            return detail::bin(Expr::mul, ExprPtr(e), span);
          };
          hi = detail::bin(Expr::add, hi, part(Expr::max));
          lo = detail::bin(Expr::add, lo, part(Expr::min));
        }
        si.kext.push_back(hi);
        si.kbound_min = lo;
      }
      if (s.order == "grouped") BATON_TRY(scope_(*s.order_group, params, "an order"));
      if (s.reads.empty() && s.writes.empty()) return err_(s.loc, "stage '" + s.name + "' neither reads nor writes a tensor");
      for (const Access& acc : s.reads) {
        AccessForm f;
        BATON_TRY(access_(s, acc, false, vars, f));
        si.reads.push_back(std::move(f));
      }
      for (const Access& acc : s.writes) {
        AccessForm f;
        BATON_TRY(access_(s, acc, true, vars, f));
        si.writes.push_back(std::move(f));
      }
      a_.stages.push_back(std::move(si));
    }
    return {};
  }

  int stage_index_(const std::string& n) const {
    for (size_t i = 0; i < a_.stages.size(); ++i)
      if (a_.stages[i].name == n) return int(i);
    return -1;
  }

  status edges_() {
    std::map<std::string, std::pair<int, int>> writer;  // tensor -> (stage, write index)
    for (size_t s = 0; s < a_.stages.size(); ++s)
      for (size_t w = 0; w < a_.stages[s].writes.size(); ++w) {
        const AccessForm& acc = a_.stages[s].writes[w];
        auto it = writer.find(acc.tensor);
        if (it != writer.end())
          return err_(acc.loc, "tensor '" + acc.tensor + "' is written by stage '" + a_.stages[size_t(it->second.first)].name +
                                   "' and by stage '" + a_.stages[s].name + "' (each tensor has one producer)");
        writer[acc.tensor] = {int(s), int(w)};
      }
    for (size_t c = 0; c < a_.stages.size(); ++c)
      for (size_t r = 0; r < a_.stages[c].reads.size(); ++r) {
        const AccessForm& acc = a_.stages[c].reads[r];
        auto it = writer.find(acc.tensor);
        if (it == writer.end()) continue;  // an input of the chain
        const int p = it->second.first;
        if (p == int(c))
          return err_(acc.loc, "stage '" + a_.stages[c].name + "' reads " + acc.tensor + ", which it writes itself");
        EdgeInfo* e = nullptr;
        for (EdgeInfo& x : a_.edges)
          if (x.producer == p && x.consumer == int(c)) e = &x;
        if (!e) {
          a_.edges.push_back(EdgeInfo{});
          e = &a_.edges.back();
          e->producer = p;
          e->consumer = int(c);
          e->label = a_.stages[size_t(p)].name + " -> " + a_.stages[c].name;
        }
        if (e->links.size() == size_t(kMaxAccesses))
          return err_(acc.loc, "edge " + e->label + " passes through more than " + std::to_string(kMaxAccesses) + " accesses");
        e->links.push_back({int(r), it->second.second});
        if ((", " + e->tensors + ", ").find(", " + acc.tensor + ", ") == std::string::npos)
          e->tensors += (e->tensors.empty() ? "" : ", ") + acc.tensor;
      }
    for (const SyncDecl& d : a_.program.syncs) {
      const int p = stage_index_(d.producer), c = stage_index_(d.consumer);
      if (p < 0) return err_(d.loc, "unknown stage '" + d.producer + "' in sync");
      if (c < 0) return err_(d.loc, "unknown stage '" + d.consumer + "' in sync");
      EdgeInfo* e = nullptr;
      for (EdgeInfo& x : a_.edges)
        if (x.producer == p && x.consumer == c) e = &x;
      if (!e)
        return err_(d.loc, "no dependency " + d.producer + " -> " + d.consumer + ": '" + d.consumer + "' reads nothing '" + d.producer +
                               "' writes");
      if (e->sync) return err_(d.loc, "a second sync for " + e->label);
      e->sync = &d;
    }
    for (const RelationDecl& d : a_.program.relations) BATON_TRY(relation_decl_(d));
    return {};
  }

  // A `relation` line: its stages, edge, kind and arguments (parameter expressions).
  status relation_decl_(const RelationDecl& d) {
    auto err = [&](Loc l, const std::string& m) { return status(errc::invalid_argument, relation_located(a_.program, d, l, m)); };
    std::vector<std::string> stage_names;
    for (const StageInfo& s : a_.stages) stage_names.push_back(s.name);
    const int p = stage_index_(d.producer), c = stage_index_(d.consumer);
    if (p < 0) return err(d.loc, "unknown stage '" + d.producer + "' in relation" + did_you_mean(d.producer, stage_names));
    if (c < 0) return err(d.loc, "unknown stage '" + d.consumer + "' in relation" + did_you_mean(d.consumer, stage_names));
    EdgeInfo* e = nullptr;
    for (EdgeInfo& x : a_.edges)
      if (x.producer == p && x.consumer == c) e = &x;
    if (!e)
      return err(d.loc, "no dependency " + d.producer + " -> " + d.consumer + ": '" + d.consumer + "' reads nothing '" + d.producer +
                            "' writes");
    if (e->relation) return err(d.loc, "a second relation for " + e->label);
    const RelationKind* k = find_relation_kind(d.name);
    if (!k) {
      std::vector<std::string> names;
      for (const RelationKind& x : relation_kinds()) names.push_back(std::string(x.name));
      return err(d.name_loc, "unknown relation '" + d.name + "'" + did_you_mean(d.name, names) + " (" + relation_kind_names() + ")");
    }
    std::vector<std::string> arg_names;
    for (const RelationArgSpec& x : k->args) arg_names.push_back(std::string(x.name));
    std::string all;
    for (const std::string& n : arg_names) all += (all.empty() ? "" : ", ") + n;
    for (const RelationArg& a : d.args) {
      if (!std::count(arg_names.begin(), arg_names.end(), a.name))
        return err(a.loc, d.name + " has no argument '" + a.name + "'" + did_you_mean(a.name, arg_names) +
                              (all.empty() ? " (it takes none)" : " (its arguments: " + all + ")"));
      BATON_TRY(scope_(*a.value, all_params_(), "a relation's argument", &d));
    }
    for (const RelationArgSpec& x : k->args) {
      if (!x.required) continue;
      bool given = false;
      for (const RelationArg& a : d.args) given |= a.name == x.name;
      if (!given) return err(d.name_loc, d.name + " needs argument '" + std::string(x.name) + "' (its arguments: " + all + ")");
    }
    e->relation = &d;
    e->relation_kind = k;
    return {};
  }

  status acyclic_() {
    // Depth-first search for a back edge; the message walks the cycle.
    const size_t n = a_.stages.size();
    std::vector<int> state(n, 0), parent(n, -1);
    std::vector<std::vector<int>> out(n);
    for (const EdgeInfo& e : a_.edges) out[size_t(e.producer)].push_back(e.consumer);
    status bad;
    std::function<bool(int)> dfs = [&](int u) -> bool {
      state[size_t(u)] = 1;
      for (int v : out[size_t(u)]) {
        if (state[size_t(v)] == 1) {
          std::vector<std::string> cyc{a_.stages[size_t(v)].name};
          for (int x = u; x != v && x >= 0; x = parent[size_t(x)]) cyc.push_back(a_.stages[size_t(x)].name);
          std::reverse(cyc.begin() + 1, cyc.end());
          std::string path;
          for (const std::string& s : cyc) path += s + " -> ";
          path += a_.stages[size_t(v)].name;
          Loc l = a_.stages[size_t(v)].loc;
          for (const AccessForm& r : a_.stages[size_t(v)].reads)
            for (const AccessForm& w : a_.stages[size_t(u)].writes)
              if (r.tensor == w.tensor) l = r.loc;
          bad = err_(l, "cyclic dependency: " + path, errc::invalid_chain);
          return false;
        }
        if (state[size_t(v)] == 0) {
          parent[size_t(v)] = u;
          if (!dfs(v)) return false;
        }
      }
      state[size_t(u)] = 2;
      return true;
    };
    for (size_t s = 0; s < n; ++s)
      if (state[s] == 0 && !dfs(int(s))) return bad;
    return {};
  }

  // Every access starts inside its tensor for every tile and k-block (reads marked `clip` may run
  // into padding), and every write lies inside it.
  status bounds_(const Binding& b) {
    const Program& prog = a_.program;
    for (const StageInfo& s : a_.stages) {
      Grid g;
      BATON_TRY(grid(prog, s, b, g));
      if (s.kbound) {
        int64_t lo = 0;
        BATON_TRY(eval(prog, *s.kbound_min, b, lo));
        if (lo < 1)
          return err_(s.kbound_form.c0->loc, "the bound of k-loop variable '" + s.kvars[0] + "' of stage '" + s.name + "' is " +
                                                 std::to_string(lo) + " for some tile; every tile needs at least one k-block (bound >= 1)" +
                                                 binding_note_(b));
      }
      int kb = 1;
      BATON_TRY(k_blocks(prog, s, b, kb));
      std::map<std::string, int64_t> hi{{"m", g.m - 1}, {"n", g.n - 1}, {"z", g.z - 1}};
      for (size_t j = 0; j < s.kvars.size(); ++j) {
        int v = 0;
        BATON_TRY(eval_int_(prog, *s.kext[j], b, v));
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
            return err_(acc.loc, "tensor '" + acc.tensor + "' has extent " + std::to_string(extent) + " in dimension " + std::to_string(d) + binding_note_(b));
          if (width < 1) return err_(f.loc, "width " + std::to_string(width) + " (must be >= 1)" + binding_note_(b));
          lo = hi_start = c0;
          std::string arg_lo, arg_hi;
          for (auto& [v, ce] : f.start.coef) {
            int64_t c = 0, span = 0;
            BATON_TRY(eval(prog, *ce, b, c));
            if (__builtin_mul_overflow(c, hi[v], &span) || span > (int64_t(1) << 40) || span < -(int64_t(1) << 40))
              return err_(f.loc, "stage '" + s.name + "': an access reaches past 2^40 elements" + binding_note_(b));
            (span < 0 ? lo : hi_start) += span;
          }
          const std::string what = std::string(write ? "writes" : "reads") + " " + acc.tensor + " dimension " + std::to_string(d);
          if (acc.clip) {
            if (hi_start + width <= 0 || lo >= extent)
              return err_(f.loc, "stage '" + s.name + "' " + what + " entirely outside [0, " + std::to_string(extent) + ") for some tile" + binding_note_(b));
            continue;
          }
          if (lo < 0)
            return err_(f.loc, "stage '" + s.name + "' " + what + " from " + std::to_string(lo) +
                                   " for some tile: the map leaves the tensor (and the producer's grid); mark padding reads 'clip'" + binding_note_(b));
          if (hi_start >= extent)
            return err_(f.loc, "stage '" + s.name + "' " + what + " from " + std::to_string(hi_start) + ", past its extent " +
                                   std::to_string(extent) + ": the map leaves the tensor (and the producer's grid)" + binding_note_(b));
        }
        return {};
      };
      for (const AccessForm& acc : s.reads) BATON_TRY(check(acc, false));
      for (const AccessForm& acc : s.writes) BATON_TRY(check(acc, true));
    }
    return {};
  }
  // ---- coverage and overlap: what the producer's tiles write --------------------------------

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
  static std::string box_text_(const std::string& tensor, const std::vector<std::pair<int64_t, int64_t>>& box) {
    std::string s = tensor + "[";
    for (size_t d = 0; d < box.size(); ++d) s += (d ? ", " : "") + std::to_string(box[d].first) + ":" + std::to_string(box[d].second);
    return s + "]";
  }

  // Proof steps: the checks of a program share one budget (kProofBudget).
  status charge_(int64_t cost, const EdgeInfo& e, const Binding& b, Grid cg, const AffineFootprint& fp) {
    work_ += cost;
    if (work_ <= budget_) return {};
    return err_(a_.stages[size_t(e.consumer)].loc,
                "edge " + e.label + " is too large to prove (" + std::to_string(cg.size()) + " consumer tiles x " +
                    std::to_string(fp.k_blocks()) + " k-blocks, " + std::to_string(fp.producer.size()) + " producer tiles" +
                    binding_note_(b) + "; the proofs of a program may take " + std::to_string(budget_) +
                    " steps); prove it at smaller parameter values ('in {...}' or --set)");
  }

  // No two tiles of a stage write the same element, unless the write says `accumulate` (split-K:
  // the tiles add partial sums, and a consumer waits for all of them). With each tile index in at
  // most one dimension, tiles i and i+1 along an axis overlap iff the dimension that moves with it
  // advances by less than its width, or no dimension moves with it.
  status overlaps_(const Binding& b) {
    const Program& prog = a_.program;
    for (const StageInfo& s : a_.stages) {
      Grid g;
      BATON_TRY(grid(prog, s, b, g));
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
            return err_(w.loc, "tiles (0,0,0) and " + to_string(t1) + " of stage '" + s.name + "' both write " + box_text_(w.tensor, box) +
                                   ": the write does not move with tile index '" + axes[ax] + "' (grid " + to_string(g) + ")" + fix +
                                   binding_note_(b));
          int64_t pc = 0;
          BATON_TRY(eval(prog, *w.dims[d].start.coef.at(axes[ax]), b, pc));
          const int64_t p0 = box[d].first, pw = box[d].second - box[d].first;
          if (pc != 0 && pw <= (pc < 0 ? -pc : pc)) continue;
          std::vector<std::pair<int64_t, int64_t>> both = box;
          both[d] = {std::max(p0, p0 + pc), std::min(box[d].second, p0 + pc + pw)};
          return err_(w.dims[d].loc, "tiles (0,0,0) and " + to_string(t1) + " of stage '" + s.name + "' both write " +
                                         box_text_(w.tensor, both) + ": along '" + axes[ax] + "' the write advances " +
                                         std::to_string(pc) + " per tile but is " + std::to_string(pw) + " wide" + fix +
                                         binding_note_(b));
        }
      }
    }
    return {};
  }

  // Every element of the tensor that a consumer tile reads (clipped to the tensor) is written by
  // some producer tile: otherwise the consumer would wait for tiles that do not exist, or for none,
  // and read what nobody wrote. The writes are a product of per-dimension sets (one tile index per
  // dimension), so a read box is covered iff each of its dimensions is.
  status coverage_(const EdgeInfo& e, const Binding& b) {
    const Program& prog = a_.program;
    const StageInfo& ps = a_.stages[size_t(e.producer)];
    const StageInfo& cs = a_.stages[size_t(e.consumer)];
    AffineFootprint fp;
    BATON_TRY(footprint(a_, e, b, fp));
    Grid cg;
    BATON_TRY(grid(prog, cs, b, cg));
    const int64_t nk = fp.k_blocks();
    BATON_TRY(charge_(cg.size() * nk > (int64_t(1) << 22) ? int64_t(1) << 40 : cg.size() * nk * fp.accesses, e, b, cg, fp));
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
            box[size_t(d)] = {std::max<int64_t>(lo, 0), std::min<int64_t>(lo + x.width, x.extent)};
            if (x.img_w > 0 && box[size_t(d)].first < box[size_t(d)].second) {  // a conv tap: its pixels' span, shifted
              int dr = x.r0, ds = x.s0;
              for (int j = 0; j < fp.kvars; ++j) {
                dr += x.rk[j] * kv[j];
                ds += x.sk[j] * kv[j];
              }
              const int b0 = int(box[size_t(d)].first), b1 = int(box[size_t(d)].second);
              const int first = detail::conv_valid(b0, b1, x.img_h, x.img_w, dr, ds, false);
              const int last = first < 0 ? -1 : detail::conv_valid(b0, b1, x.img_h, x.img_w, dr, ds, true);
              const int64_t shift = int64_t(dr) * x.img_w + ds;
              box[size_t(d)] = first < 0 ? std::pair<int64_t, int64_t>{0, 0}
                                         : std::pair<int64_t, int64_t>{std::max<int64_t>(first + shift, 0),
                                                                       std::min<int64_t>(last + shift + 1, x.extent)};
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
                            box_text_(tensor, box) + "; the " + std::to_string(fp.producer.size()) + " tiles of '" + ps.name +
                            "' (grid " + to_string(fp.producer) + ") write " + w.text() + " of that dimension: make " + ps.name +
                            "'s grid or write map cover every element " + cs.name + " reads" + binding_note_(b));
          }
        }
      }
    }
    return {};
  }

  std::string binding_note_(const Binding& b) const {
    if (&b == &a_.bindings.front()) return "";
    std::string s;
    for (auto& [k, v] : b)
      if (a_.bindings.front().at(k) != v) s += (s.empty() ? "" : ", ") + k + " = " + std::to_string(v);
    return " (with " + s + ")";
  }

  // Does the edge have GemmA's form at every binding? (GemmA maps consumer tile z to producer
  // tile z, so both grids must be flat in z.)
  // An edge that has the form but for a z axis gets a hint (a stage's heads or batches on z lose
  // the cheaper footprint; on n, or folded into m, they keep it).
  bool gemm_form_(EdgeInfo& e) {
    if (a_.stages[size_t(e.consumer)].kbound) return false;  // GemmA walks every k-block of every tile
    bool z_only = false;
    for (const Binding& b : a_.bindings) {
      AffineFootprint fp;
      Grid cg;
      if (!footprint(a_, e, b, fp).ok() || !grid(a_.program, a_.stages[size_t(e.consumer)], b, cg).ok()) return false;
      if (!with_named_footprint("gemm_a", fp, e.label, [](const auto&) { return status{}; }).ok()) return false;
      z_only |= fp.producer.z != 1 || cg.z != 1;
    }
    if (z_only)
      e.lowering_hint = "the maps have footprint::GemmA's form but for the grids' z axis (GemmA maps consumer z to producer z "
                        "over one 2-D tensor): put what z counts on n, or fold it into m, to get the cheaper footprint "
                        "(docs/batonc.md, 'Footprints: lowered where the maps allow')";
    return !z_only;
  }

  status choose_(EdgeInfo& e) {
    std::vector<Candidate> cands;
    if (e.sync) {
      Candidate c;
      c.kind = e.sync->kind;
      c.group_m = e.sync->group_m;
      c.group_n = e.sync->group_n;
      c.footprint = e.sync->footprint;
      cands.push_back(c);
    } else {
      // An edge of GEMM form (the consumer reads a row band and one k-block of columns of a 2-D
      // tensor the producer writes in tiles) is lowered to the built-in footprint::GemmA, for
      // every binding, else it keeps the generic dsl::AffineFootprint. The device evaluates the
      // footprint before every k-block's loads: the generic one measured much slower MLPs with
      // per-k-block waits on the H200 (docs/batonc.md).
      // The candidates are proven with the footprint they are emitted with. `sync ... @ affine`
      // keeps the generic one.
      const std::string fp_name = gemm_form_(e) ? "gemm_a" : "affine";
      for (const PolicyKind& k : kPolicyKinds) {
        if (!is_candidate_kind(k)) continue;
        Candidate c;
        c.kind = std::string(k.name);
        c.footprint = fp_name;
        c.lowered = fp_name != "affine";
        cands.push_back(c);
      }
    }
    // Reads that lie apart in the producer's grid: the generic footprint's candidates wait on the
    // union of their boxes instead of the bounding box (a named footprint keeps its own rectangle).
    boxes_(e);
    for (Candidate& c : cands) c.boxes = e.boxes && c.footprint == "affine";
    // The relation given apart from the maps: the maps must read what it says (all of it, and no
    // more unless it is `loose`), and every candidate is proven against it as well.
    std::vector<DependencyRelation> truths;
    if (e.relation && opt_.prove_relations)
      for (size_t bi = 0; bi < a_.bindings.size(); ++bi) {
        const Binding& b = a_.bindings[bi];
        AffineFootprint fp;
        BATON_TRY(footprint(a_, e, b, fp));
        Grid cg;
        BATON_TRY(grid(a_.program, a_.stages[size_t(e.consumer)], b, cg));
        const int64_t cost = proof_cost(fp, cg);
        BATON_TRY(charge_(cost > budget_ ? cost : 2 * cost, e, b, cg, fp));
        DependencyRelation truth;
        BATON_TRY(declared_relation(a_, e, b, truth));
        DependencyRelation maps;
        BATON_TRY(maps_relation(a_, e, b, fp, cg, maps));
        BATON_TRY(compare_maps_(e, b, maps, truth));
        truths.push_back(std::move(truth));
      }
    for (Candidate& c : cands) {
      for (size_t bi = 0; bi < a_.bindings.size(); ++bi) {
        const Binding& b = a_.bindings[bi];
        AffineFootprint fp;
        BATON_TRY(footprint(a_, e, b, fp));
        Grid cg;
        BATON_TRY(grid(a_.program, a_.stages[size_t(e.consumer)], b, cg));
        // Proofs enumerate (consumer tile, k-block) pairs and the producer grid per consumer tile:
        // bounded for the whole program (kProofBudget).
        if (&c == &cands.front()) {
          const int64_t cost = proof_cost(fp, cg);
          BATON_TRY(charge_(cost > budget_ ? cost : cost * int64_t(cands.size()), e, b, cg, fp));
        }
        DependencyRelation rel;
        BATON_TRY(maps_relation(a_, e, b, fp, cg, rel));
        const status st = with_named_footprint(c.footprint, fp, e.label, [&](const auto& f) -> status {
          CheckReport rep = with_policy(c, fp.producer, f, [&](const auto& pol) { return check_soundness(pol, rel, e.label); });
          c.reads += rep.reads_checked;
          if (!rep.sound()) {
            if (c.sound) c.why_not = rep.result.message() + binding_note_(b);
            c.sound = false;
          }
          if (bi < truths.size() && rep.sound()) {
            const CheckReport t = with_policy(c, fp.producer, f, [&](const auto& pol) {
              return check_soundness(pol, truths[bi], e.label + " against " + e.relation->name);
            });
            if (!t.sound()) {
              if (c.sound) c.why_not = t.result.message() + binding_note_(b);
              c.sound = false;
            }
          }
          if (bi == 0 && rep.sound()) {
            c.waits = rep.waits;
            c.over_sync = rep.over_sync_pairs;
            c.start_tiles = with_policy(c, fp.producer, f, [&](const auto& pol) { return start_tiles_(pol, cg); });
          }
          if (bi == 0 && rep.sound() && c.boxes) {  // what the bounding box would cost, for --explain
            BATON_TRY(charge_(proof_cost(fp, cg), e, b, cg, fp));
            Candidate bbox = c;
            bbox.boxes = false;
            const CheckReport r = with_policy(bbox, fp.producer, f, [&](const auto& pol) { return check_soundness(pol, rel, e.label); });
            c.bbox_over_sync = r.over_sync_pairs;
            c.bbox_start_tiles = with_policy(bbox, fp.producer, f, [&](const auto& pol) { return start_tiles_(pol, cg); });
          }
          return {};
        });
        if (!st.ok()) return err_(e.sync ? e.sync->footprint_loc : a_.stages[size_t(e.consumer)].loc, st.message());
      }
    }
    e.candidates = cands;
    int best = -1;
    for (size_t i = 0; i < cands.size(); ++i) {
      const Candidate& c = cands[i];
      if (!c.sound) continue;
      if (best < 0) {
        best = int(i);
        continue;
      }
      const Candidate& bc = cands[size_t(best)];
      auto key = [](const Candidate& x) { return std::make_tuple(x.start_tiles, x.waits, x.over_sync); };
      if (key(c) < key(bc)) best = int(i);
    }
    if (best < 0) {
      if (e.sync)
        return err_(e.sync->loc, "the policy for " + e.label + " (" + candidate_name(cands[0]) + ") is unsound: " + cands[0].why_not,
                    errc::unsound_policy);
      return status(errc::unsound_policy, "no candidate policy is sound for " + e.label + " (first: " + cands[0].why_not + ")");
    }
    e.chosen = best;
    return {};
  }

  // Does the bounding box of the edge's boxes hold a producer tile that no box holds, for some
  // consumer tile and k-block at the default binding? Then waiting on the union forces fewer
  // producer tiles (the [Q|K|V] layout: Q's and V's column blocks with K's and all between them).
  // Either form is sound; an edge too large to scan keeps the bounding box (its proofs fail on the
  // budget anyway).
  void boxes_(EdgeInfo& e) {
    e.boxes = false;
    if (e.links.size() < 2) return;
    const Binding& b = a_.bindings.front();
    AffineFootprint fp;
    Grid cg;
    if (!footprint(a_, e, b, fp).ok() || !grid(a_.program, a_.stages[size_t(e.consumer)], b, cg).ok()) return;
    if (proof_cost(fp, cg) > budget_ - work_) return;
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

  // The maps' relation against the one the `relation` line gives: a read the maps miss is an
  // error (a policy built from them may skip its wait); a read they add is one too, unless the
  // line says `loose` (the maps may over-approximate, e.g. a flattened conv halo across image rows).
  status compare_maps_(EdgeInfo& e, const Binding& b, const DependencyRelation& maps, const DependencyRelation& truth) {
    auto diff = deps::compare(maps, truth);
    const RelationDecl& d = *e.relation;
    const StageInfo& ps = a_.stages[size_t(e.producer)];
    const StageInfo& cs = a_.stages[size_t(e.consumer)];
    if (!diff.ok()) return status(errc::invalid_argument, relation_located(a_.program, d, d.name_loc, d.name + ": " + diff.error().message()));
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
                                binding_note_(b));
    if (df.extra && !d.loose) {
      int64_t truth_reads = 0;
      truth.reads(df.first_extra->consumer, df.first_extra->k_block, [&](Tile) { ++truth_reads; });
      return err_(read_loc, "stage '" + cs.name + "' reads " + tensors + " through maps that read more than relation " + d.name + " (" +
                                where + ") says: its tile " + to_string(df.first_extra->consumer) + " k-block " +
                                std::to_string(df.first_extra->k_block) + " reads producer tile " + to_string(df.first_extra->producer) + " of '" +
                                ps.name + "' by the maps, not by " + d.name +
                                (truth_reads ? "" : ", which says that k-block reads nothing") + " (" + std::to_string(df.extra) +
                                " such reads" + (d.name == "causal_attention" ? "; a causal tile reads no key block after its last query" : "") +
                                "): fix the maps, or end the relation line with 'loose' if they may over-approximate" + binding_note_(b));
    }
    if (&b == &a_.bindings.front()) e.over_reads = df.extra;
    return {};
  }

  // Mean number of producer tiles a consumer tile's first k-block waits for.
  template <class P>
  static double start_tiles_(const P& pol, Grid consumer) {
    const Grid pg = pol.producer_grid();
    std::vector<int64_t> posters(size_t(pol.num_semaphores()), 0);
    for (int i = 0; i < int(pg.size()); ++i) ++posters[size_t(pol.post_index(pg.tile(i)))];
    double total = 0;
    std::vector<int> sems;
    for (int i = 0; i < int(consumer.size()); ++i) {
      sems.clear();
      pol.for_each_wait(consumer.tile(i), 0, [&](WaitSpec w) {
        sems.push_back(w.sem);
        return true;
      });
      std::sort(sems.begin(), sems.end());
      sems.erase(std::unique(sems.begin(), sems.end()), sems.end());
      for (int s : sems) total += double(posters[size_t(s)]);
    }
    return consumer.size() ? total / double(consumer.size()) : 0.0;
  }

  // Orders: a stage that names one keeps it. Otherwise a producer takes row- or column-major,
  // whichever has its consumers' inputs complete sooner: the mean over consumer tiles, taken in
  // the consumer's order, of the position in the producer's order of the last tile the consumer
  // tile reads (over all its k-blocks; a consumer tile cannot be ready before the one before it).
  // Stages that feed nothing walk row-major.
  status orders_() {
    const Program& prog = a_.program;
    const Binding& b = a_.bindings.front();
    a_.orders.assign(a_.stages.size(), OrderChoice{});
    // Consumers first: reverse topological order (edges go producer -> consumer).
    std::vector<int> topo;
    {
      std::vector<int> indeg(a_.stages.size(), 0);
      for (const EdgeInfo& e : a_.edges) ++indeg[size_t(e.consumer)];
      std::vector<int> q;
      for (size_t i = 0; i < indeg.size(); ++i)
        if (indeg[i] == 0) q.push_back(int(i));
      while (!q.empty()) {
        int u = q.back();
        q.pop_back();
        topo.push_back(u);
        for (const EdgeInfo& e : a_.edges)
          if (e.producer == u && --indeg[size_t(e.consumer)] == 0) q.push_back(e.consumer);
      }
    }
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      const int s = *it;
      const StageInfo& si = a_.stages[size_t(s)];
      OrderChoice& oc = a_.orders[size_t(s)];
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
      BATON_TRY(grid(prog, si, b, pg));
      double cost[2] = {0, 0};
      int feeds = 0;
      for (const EdgeInfo& e : a_.edges) {
        if (e.producer != s) continue;
        ++feeds;
        AffineFootprint fp;
        BATON_TRY(footprint(a_, e, b, fp));
        Grid cg;
        BATON_TRY(grid(prog, a_.stages[size_t(e.consumer)], b, cg));
        const OrderChoice& co = a_.orders[size_t(e.consumer)];
        for (int o = 0; o < 2; ++o) cost[o] += need_cost_(fp, e.boxes, pg, cg, o == 0, co);
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
  static Tile order_tile_(const OrderChoice& o, Grid g, int pos) {
    if (o.kind == "column") return ColumnMajor{}(g, pos);
    if (o.kind == "grouped") return Grouped{int(o.group)}(g, pos);
    return RowMajor{}(g, pos);
  }
  // boxes: the consumer waits on the union of fp's boxes (BoxesPolicy), else on their bounding box.
  static double need_cost_(const AffineFootprint& fp, bool boxes, Grid pg, Grid cg, bool row_major, const OrderChoice& consumer_order) {
    std::vector<int> pos(size_t(pg.size()));
    for (int i = 0; i < int(pg.size()); ++i) {
      const Tile t = row_major ? RowMajor{}(pg, i) : ColumnMajor{}(pg, i);
      pos[size_t(pg.linear(t))] = i;
    }
    double total = 0;
    int ready = 0;  // the consumer runs in order: it cannot be ready before the one before it
    for (int i = 0; i < int(cg.size()); ++i) {
      const Tile t = order_tile_(consumer_order, cg, i);
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

  Analysis a_;
  std::set<std::string> index_vars_;  // the k-loop variables of every stage (for messages)
  int64_t budget_ = kProofBudget;
  AnalyzeOptions opt_;
  int64_t work_ = 0;  // proof steps spent
};

[[nodiscard]] inline result<Analysis> analyze(Program p, int64_t proof_budget = Analyzer::kProofBudget, AnalyzeOptions o = {}) {
  return Analyzer(std::move(p), proof_budget, o).run();
}

}  // namespace baton::dsl
