// baton/dsl/emit.hpp — batonc's generated C++ header (host only), from an Analysis
// (baton/dsl/analysis.hpp); the --explain text is explain.hpp's (included here).
//
// The header holds, in a namespace of its own:
//   struct Params             the program's parameters, defaulting to their values in the file;
//   <stage>_grid(p)           the stage's grid of tiles, <stage>_k_blocks(p) its k-blocks;
//   <stage>_order             its tile order;
//   <p>_to_<c>_footprint(p)   the edge's baton::dsl::AffineFootprint;
//   <p>_to_<c>(p)             the chosen policy (its type: <p>_to_<c>_policy);
//   <p>_to_<c>_<kind>(p)      every other sound candidate (row, kblock, ...), proven as well;
//   <p>_to_<c>_relation(p)    the dependency relation for baton::Chain::add_edge (deps::from_boxes,
//                             the union of the reads' boxes, where the policies wait on it);
//   <stage>_stage             baton::Stage<order, Outputs<its out-edges' policies>, Inputs<its in-edges'>>;
// plus static_asserts that the policies satisfy SyncPolicy and agree with the grids.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/dsl/analysis.hpp"
#include "baton/dsl/candidates.hpp"
#include "baton/dsl/explain.hpp"

namespace baton::dsl {

struct EmitOptions {
  std::string ns;       // the namespace ("" = from the file name: examples/dsl/mlp.baton -> baton_gen::mlp)
  std::string command;  // how to regenerate, for the banner
};

namespace detail {
// C++ text of a parameter expression inside the generated header (parameters are p.NAME).
inline std::string cxx(const Expr& e) {
  auto bin = [&](const char* op) { return "(" + cxx(*e.a) + " " + op + " " + cxx(*e.b) + ")"; };
  switch (e.kind) {
    case Expr::num: return std::to_string(e.value);
    case Expr::name: return "p." + e.id;
    case Expr::add: return bin("+");
    case Expr::sub: return bin("-");
    case Expr::mul: return bin("*");
    case Expr::div: return bin("/");
    case Expr::mod: return bin("%");
    case Expr::neg: return "(-" + cxx(*e.a) + ")";
    case Expr::cdiv: return "::baton::ceil_div(" + cxx(*e.a) + ", " + cxx(*e.b) + ")";
    case Expr::min: return "::baton::dsl::detail::imin(" + cxx(*e.a) + ", " + cxx(*e.b) + ")";
    case Expr::max: return "::baton::dsl::detail::imax(" + cxx(*e.a) + ", " + cxx(*e.b) + ")";
  }
  return "0";
}
// A strided '@conv' dimension's output rows (columns): (H + 2*pad - R)/stride + 1 with R = 1 + the
// span of the row (column) shift over the k-loop, as conv_geometry computes it.
inline ExprPtr conv_out_size(const DimForm& f, const StageInfo& s, bool rows) {
  const LinForm& shift = rows ? f.dr : f.ds;
  ExprPtr taps = make_num(1);
  for (size_t j = 0; j < s.kvars.size(); ++j) {
    auto it = shift.coef.find(s.kvars[j]);
    if (it == shift.coef.end()) continue;
    const ExprPtr& c = it->second;
    const ExprPtr mag = c->kind == Expr::num ? make_num(c->value < 0 ? -c->value : c->value) : bin(Expr::max, c, neg(c));
    taps = bin(Expr::add, taps, bin(Expr::mul, mag, bin(Expr::sub, s.kext[j], make_num(1))));
  }
  const ExprPtr padded = bin(Expr::add, rows ? f.img_h : f.img_w, bin(Expr::mul, make_num(2), f.conv_pad));
  return bin(Expr::add, bin(Expr::div, bin(Expr::sub, padded, taps), f.conv_stride), make_num(1));
}
inline std::string coef(const LinForm& f, const std::string& v) {
  auto it = f.coef.find(v);
  return it == f.coef.end() ? "0" : cxx(*it->second);
}
inline std::string base_name(const std::string& path) {
  std::string b = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (b.size() > 6 && b.compare(b.size() - 6, 6, ".baton") == 0) b.resize(b.size() - 6);
  std::string id;
  for (char c : b) id += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "_" + id;
  return id;
}
inline std::string policy_type(const Candidate& c) {
  const std::string F = footprint_type(c);
  const PolicyKind* k = find_policy_kind(c.kind);
  if (c.boxes) return "::baton::dsl::BoxesPolicy<::baton::dsl::Grouping::" + std::string(k != nullptr ? k->family : "group") + ">";
  return "::baton::" + std::string(k != nullptr ? k->type : "GroupPolicy") + "<" + F + ">";
}
inline std::string policy_init(const Candidate& c, const std::string& grid, const std::string& fp) {
  const PolicyKind* k = find_policy_kind(c.kind);
  const bool per_k = k != nullptr && k->per_k;
  if (c.boxes)  // BoxesPolicy{producer, footprint, per_k_block, group_m, group_n}
    return "{" + grid + ", " + fp + (per_k ? ", true" : ", false") +
           (k == nullptr || k->family == "group" ? ", " + std::to_string(c.group_m) + ", " + std::to_string(c.group_n) : "") + "}";
  if (k != nullptr && k->type == "KBlockPolicy") return "{" + grid + ", " + fp + "}";  // per k-block by construction
  if (k != nullptr && k->family != "group") return "{" + grid + ", " + fp + (per_k ? ", true}" : ", false}");
  return "{" + grid + ", " + fp + ", " + std::to_string(c.group_m) + ", " + std::to_string(c.group_n) + ", " +
         (per_k ? "true" : "false") + "}";
}
}  // namespace detail

// The generated header.
inline std::string emit_header(const Analysis& a, const EmitOptions& o = {}) {
  using detail::cxx;
  const std::string ns = o.ns.empty() ? "baton_gen::" + detail::base_name(a.program.file) : o.ns;
  std::string h;
  h += "// generated by batonc from " + a.program.file + ", do not edit\n";
  if (!o.command.empty()) h += "// regenerate: " + o.command + "\n";
  h += "// proven sound by batonc (baton::check_soundness) for: " + detail::bindings_text(a) + "\n";
  h += "#pragma once\n\n#include \"baton/dependency.hpp\"\n#include \"baton/dsl/affine_footprint.hpp\"\n"
       "#include \"baton/order.hpp\"\n#include \"baton/policy.hpp\"\n#include \"baton/stage.hpp\"\n#include \"baton/tile.hpp\"\n\n";
  h += "namespace " + ns + " {\n\n";
  h += "struct Params {\n";
  for (const Param& p : a.program.params) h += "  int " + p.name + " = " + std::to_string(a.bindings[0].at(p.name)) + ";\n";
  h += "};\n";
  for (size_t s = 0; s < a.stages.size(); ++s) {
    const StageInfo& st = a.stages[s];
    h += "\n// ---- stage " + st.name;
    if (!st.tile.empty()) {
      h += " (tile ";
      for (size_t i = 0; i < st.tile.size(); ++i) h += (i ? " x " : "") + std::to_string(st.tile[i]);
      h += ")";
    }
    h += "\n";
    h += "[[maybe_unused]] constexpr ::baton::Grid " + st.name + "_grid(const Params& p = {}) {\n  (void)p;\n  return ::baton::Grid{" +
         cxx(*st.ext[0]) + ", " + cxx(*st.ext[1]) + ", " + cxx(*st.ext[2]) + "};\n}\n";
    std::string kb = "1";
    for (const ExprPtr& e : st.kext) kb += " * " + cxx(*e);
    h += "[[maybe_unused]] constexpr int " + st.name + "_k_blocks(const Params& p = {}) {\n  (void)p;\n  return " + kb + ";\n}\n";
    if (st.kbound) {
      // A tile's own k-blocks (its first k-loop variable's bound times the inner extents); the
      // policies walk <stage>_k_blocks(p), the largest, and the k-blocks past a tile's own read nothing.
      std::string own = "(" + cxx(*st.kbound_form.c0);
      for (auto& [v, c] : st.kbound_form.coef) own += " + " + cxx(*c) + " * t." + v;
      own += ")";
      for (size_t j = 1; j < st.kext.size(); ++j) own += " * " + cxx(*st.kext[j]);
      h += "[[maybe_unused]] constexpr int " + st.name + "_k_blocks_of(::baton::Tile t, const Params& p = {}) {\n  (void)p;\n  return " + own +
           ";\n}\n";
    }
    const OrderChoice& oc = a.orders[s];
    h += "// order: " + oc.why + "\n";
    if (oc.kind == "column") h += "inline constexpr ::baton::ColumnMajor " + st.name + "_order{};\n";
    else if (oc.kind == "grouped") h += "inline constexpr ::baton::Grouped " + st.name + "_order{" + std::to_string(oc.group) + "};\n";
    else h += "inline constexpr ::baton::RowMajor " + st.name + "_order{};\n";
  }
  for (const EdgeInfo& e : a.edges) {
    const StageInfo& ps = a.stages[size_t(e.producer)];
    const StageInfo& cs = a.stages[size_t(e.consumer)];
    const std::string id = ps.name + "_to_" + cs.name;
    const Candidate& c = e.candidates[size_t(e.chosen)];
    h += "\n// ---- edge " + e.label + " through " + e.tensors + ": " + candidate_name(c) + " (" + describe_policy(c) + ")\n";
    h += "//   " + std::string(e.sync ? "chosen by hand (sync)" : "chosen by batonc") + "; candidates (sound / start tiles / waits):";
    for (const Candidate& x : e.candidates)
      h += " " + candidate_name(x) + (x.sound ? " " + detail::fmt(x.start_tiles) + "/" + std::to_string(x.waits) : " unsound") + ";";
    h += "\n";
    h += "[[maybe_unused]] constexpr ::baton::dsl::AffineFootprint " + id + "_footprint(const Params& p = {}) {\n";
    h += "  (void)p;\n  ::baton::dsl::AffineFootprint f{};\n  f.producer = " + ps.name + "_grid(p);\n";
    h += "  f.kvars = " + std::to_string(cs.kvars.size()) + ";\n";
    for (size_t j = 0; j < cs.kvars.size(); ++j)
      h += "  f.kext[" + std::to_string(j) + "] = " + cxx(*cs.kext[j]) + ";  // " + cs.kvars[j] + "\n";
    h += "  f.accesses = " + std::to_string(e.links.size()) + ";\n";
    for (size_t l = 0; l < e.links.size(); ++l) {
      const AccessForm& r = cs.reads[size_t(e.links[l].first)];
      const AccessForm& w = ps.writes[size_t(e.links[l].second)];
      const std::string acc = "  f.access[" + std::to_string(l) + "]";
      h += acc + ".dims = " + std::to_string(r.dims.size()) + ";  // " + r.tensor + "\n";
      for (size_t d = 0; d < r.dims.size(); ++d) {
        const DimForm& rd = r.dims[d];
        const DimForm& wd = w.dims[d];
        std::string ck;
        for (int j = 0; j < kMaxKVars; ++j)
          ck += (j ? ", " : "") + (size_t(j) < cs.kvars.size() ? detail::coef(rd.start, cs.kvars[size_t(j)]) : std::string("0"));
        int axis = -1;
        std::string pc = "1";
        for (int ax = 0; ax < 3; ++ax) {
          static const char* names[] = {"m", "n", "z"};
          if (wd.start.coef.count(names[ax])) {
            axis = ax;
            pc = cxx(*wd.start.coef.at(names[ax]));
          }
        }
        // Labelled (designated, in AffineDim's field order): the read's coefficients, then the write's.
        h += acc + ".dim[" + std::to_string(d) + "] = {.cm = " + detail::coef(rd.start, "m") + ", .cn = " + detail::coef(rd.start, "n") +
             ", .cz = " + detail::coef(rd.start, "z") + ", .ck = {" + ck + "}, .c0 = " + cxx(*rd.start.c0) + ", .width = " + cxx(*rd.width) +
             ",\n" + std::string(acc.size() + 12, ' ') + ".axis = " + std::to_string(axis) + ", .pc = " + pc + ", .p0 = " + cxx(*wd.start.c0) +
             ", .pw = " + cxx(*wd.width) + ", .extent = " + cxx(*rd.extent);
        if (rd.conv) {  // the tap's image and shifts (fields omitted elsewhere: zero)
          std::string rk, sk;
          for (int j = 0; j < kMaxKVars; ++j) {
            rk += (j ? ", " : "") + (size_t(j) < cs.kvars.size() ? detail::coef(rd.dr, cs.kvars[size_t(j)]) : std::string("0"));
            sk += (j ? ", " : "") + (size_t(j) < cs.kvars.size() ? detail::coef(rd.ds, cs.kvars[size_t(j)]) : std::string("0"));
          }
          h += ",\n" + std::string(acc.size() + 12, ' ') + ".img_h = " + cxx(*rd.img_h) + ", .img_w = " + cxx(*rd.img_w) + ", .rk = {" + rk +
               "}, .r0 = " + cxx(*rd.dr.c0) + ", .sk = {" + sk + "}, .s0 = " + cxx(*rd.ds.c0);
          if (rd.strided)  // the output images (fields omitted in the stride-1 form)
            h += ",\n" + std::string(acc.size() + 12, ' ') + ".out_h = " + cxx(*detail::conv_out_size(rd, cs, true)) +
                 ", .out_w = " + cxx(*detail::conv_out_size(rd, cs, false)) + ", .stride = " + cxx(*rd.conv_stride);
        }
        h += "};\n";
      }
    }
    h += "  return f;\n}\n";
    std::string policy_fp = id + "_footprint(p)";
    if (c.footprint != "affine") {
      // The hand-written footprint the sync names (proven against the maps above).
      policy_fp = id + "_policy_footprint(p)";
      std::string init = "{}";
      if (c.footprint == "all_of_batch") init = "{" + ps.name + "_grid(p)}";
      if (c.footprint == "gemm_a") {
        const AccessForm& r = cs.reads[size_t(e.links[0].first)];
        const AccessForm& w = ps.writes[size_t(e.links[0].second)];
        init = "{.rows = " + cxx(*r.dims[0].extent) + ", .cols = " + cxx(*r.dims[1].extent) + ", .prod_tile_m = " + cxx(*w.dims[0].width) +
               ", .prod_tile_n = " + cxx(*w.dims[1].width) + ", .cons_tile_m = " + cxx(*r.dims[0].width) +
               ", .cons_tile_k = " + cxx(*r.dims[1].width) + "}";
      }
      h += "[[maybe_unused]] constexpr " + detail::footprint_type(c) + " " + id + "_policy_footprint(const Params& p = {}) {\n  (void)p;\n  return " +
           detail::footprint_type(c) + init + ";\n}\n";
    }
    h += "using " + id + "_policy = " + detail::policy_type(c) + ";\n";
    h += "[[maybe_unused]] constexpr " + id + "_policy " + id + "(const Params& p = {}) {\n  return " + id + "_policy" +
         detail::policy_init(c, ps.name + "_grid(p)", policy_fp) + ";\n}\n";
    // Every sound candidate under its kind's name (<edge>_row, <edge>_kblock, ...): proven
    // alternatives a caller may pick at run time (ops::Mlp picks row, kblock or none by shape).
    if (!e.sync)
      for (const Candidate& x : e.candidates) {
        if (!x.sound) continue;
        const std::string alt = id + "_" + x.kind;
        if (&x == &c) {  // the chosen one under its kind's name too, so callers may name kinds only
          h += "// " + candidate_name(x) + ": the chosen policy, under its kind's name\n";
          h += "using " + alt + "_policy = " + id + "_policy;\n";
          h += "[[maybe_unused]] constexpr " + alt + "_policy " + alt + "(const Params& p = {}) { return " + id + "(p); }\n";
          continue;
        }
        h += "// alternative " + candidate_name(x) + ": sound; starts after " + detail::fmt(x.start_tiles) + " tiles, " +
             std::to_string(x.waits) + " waits per pass\n";
        h += "using " + alt + "_policy = " + detail::policy_type(x) + ";\n";
        h += "[[maybe_unused]] constexpr " + alt + "_policy " + alt + "(const Params& p = {}) {\n  return " + alt + "_policy" +
             detail::policy_init(x, ps.name + "_grid(p)", policy_fp) + ";\n}\n";
      }
    h += "inline ::baton::DependencyRelation " + id + "_relation(const Params& p = {}) {\n  return ::baton::deps::" +
         (e.boxes ? "from_boxes(" : "from_footprint(") +
         ps.name + "_grid(p), " + cs.name + "_grid(p), " + id + "_footprint(p), \"" + e.label + " (" + e.tensors + ")\");\n}\n";
    if (e.relation) {
      // The relation given apart from the maps, for Chain::add_edge or check_soundness in C++.
      const RelationKind& k = *e.relation_kind;
      std::string arg;
      if (k.cxx_shape.empty()) {
        arg = ps.name + "_grid(p)";
      } else {
        std::string init;
        for (const RelationArgSpec& x : k.args) {
          std::string v = std::to_string(x.fallback);
          for (const RelationArg& ra : e.relation->args)
            if (ra.name == x.name) v = cxx(*ra.value);
          init += (init.empty() ? "" : ", ") + std::string(".") + std::string(x.name) + " = " + v;
        }
        arg = std::string(k.cxx_shape) + "{" + init + "}, " + cs.name + "_grid(p)";
      }
      h += "// " + e.relation->name + ": the relation given apart from the maps (" +
           (e.relation->origin_file.empty() ? "line " + std::to_string(e.relation->loc.line) : e.relation->origin_file) +
           "); batonc proved the maps and every policy above against it\n";
      h += "inline ::baton::DependencyRelation " + id + "_exact_relation(const Params& p = {}) {\n  (void)p;\n  return " +
           std::string(k.cxx_make) + "(" + arg + ");\n}\n";
    }
    h += "static_assert(::baton::SyncPolicy<" + id + "_policy>);\n";
    h += "static_assert(" + id + "_footprint().invalid_reason() == nullptr, \"" + e.label + ": invalid footprint\");\n";
    if (c.footprint == "gemm_a")
      h += "static_assert(" + id + "_policy_footprint().invalid_reason() == nullptr, \"" + e.label + ": invalid GemmA\");\n";
    h += "static_assert(" + id + "().k_blocks() == " + cs.name + "_k_blocks(), \"" + e.label + ": k-blocks differ\");\n";
    h += "static_assert(" + id + "().producer_grid() == " + ps.name + "_grid(), \"" + e.label + ": grids differ\");\n";
  }
  // Stage types: each stage's order, the policies it posts for (outputs) and waits on (inputs).
  h += "\n// ---- stage types (baton::Stage<Order, Outputs<...>, Inputs<...>>)\n";
  for (size_t s = 0; s < a.stages.size(); ++s) {
    const StageInfo& st = a.stages[s];
    const OrderChoice& oc = a.orders[s];
    const std::string order = oc.kind == "column" ? "::baton::ColumnMajor" : oc.kind == "grouped" ? "::baton::Grouped" : "::baton::RowMajor";
    std::string outs, ins;
    for (const EdgeInfo& e : a.edges) {
      const std::string id = a.stages[size_t(e.producer)].name + "_to_" + a.stages[size_t(e.consumer)].name + "_policy";
      if (e.producer == int(s)) outs += (outs.empty() ? "" : ", ") + id;
      if (e.consumer == int(s)) ins += (ins.empty() ? "" : ", ") + id;
    }
    h += "using " + st.name + "_stage = ::baton::Stage<" + order + ", ::baton::Outputs<" + outs + ">, ::baton::Inputs<" + ins + ">>;\n";
  }
  h += "\n}  // namespace " + ns + "\n";
  return h;
}

}  // namespace baton::dsl
