// baton/dsl/semantics.hpp — the semantic checks of a parsed program and the forms they build
// (host only), each failure a located error.
//
// Owns Semantics, which fills an Analysis's stages and edges from its Program: names() (parameters,
// tensors and stages are unique; expressions name only what is in scope), stages() (each stage's
// grid, k-loop and accesses as affine forms: ranks match, maps are affine, writes do not depend on
// k and place each tile index in one dimension, '@conv' only on reads), edges() (a stage reading
// a tensor another writes depends on it; each tensor has one producer; syncs and `relation` lines
// name existing edges, kinds and arguments) and acyclic() (no cyclic dependency).
// Rules: run in that order (names, the bindings, stages, edges, acyclic; the first error wins);
// nothing here evaluates a parameter: values and bounds are checked per binding later
// (coverage.hpp).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/affine_forms.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/model.hpp"
#include "baton/dsl/program.hpp"
#include "baton/dsl/relations.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

class Semantics {
 public:
  explicit Semantics(Analysis& a) : a_(a) {}

  // Names: parameters, tensors and stages are unique; expressions name only what is in scope.
  status names() {
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

  // Stages: each one's grid, k-loop (a tile-dependent first bound with its extremes over the
  // grid) and accesses as affine forms.
  status stages() {
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
        BATON_TRY(linearize(a_.program, *v.extent, tile_vars, f));
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

  // Edges: who reads what another stage writes; then the syncs and `relation` lines on them.
  status edges() {
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

  // No stage depends on itself through the edges.
  status acyclic() {
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

 private:
  status err_(Loc l, const std::string& msg, errc c = errc::invalid_argument) const {
    return program_error(a_.program, l, msg, c);
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
        BATON_TRY(linearize(a_.program, *r.start, vars, f.start));
        if (r.width) {
          BATON_TRY(scope_(*r.width, names, "an access width"));
          LinForm w;
          BATON_TRY(linearize(a_.program, *r.width, vars, w));
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
          BATON_TRY(linearize(a_.program, **e, vars, *out));
          for (auto& [v, co] : out->coef)
            if (v == "m" || v == "n" || v == "z")
              return err_((*e)->loc, "a tap shift of '@conv' depends on tile index '" + v +
                                         "'; it may use k-loop variables and parameters only (the tap, e.g. r - 1)");
        }
        if (c.named) {  // the strided form: its stride and padding, parameters only
          f.strided = true;
          f.conv_loc = c.loc;
          f.dr_loc = c.dr_loc;
          f.ds_loc = c.ds_loc;
          f.stride_loc = c.stride_loc;
          f.pad_loc = c.pad_loc;
          for (const ExprPtr* e : {&c.stride, &c.pad})
            if (*e) BATON_TRY(scope_(**e, all_params_(), "the stride and padding of '@conv'"));
          f.conv_stride = c.stride ? c.stride : make_num(1, c.loc);
          f.conv_pad = c.pad ? c.pad : make_num(0, c.loc);
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

  int stage_index_(const std::string& n) const {
    for (size_t i = 0; i < a_.stages.size(); ++i)
      if (a_.stages[i].name == n) return int(i);
    return -1;
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

  Analysis& a_;
  std::set<std::string> index_vars_;  // the k-loop variables of every stage (for messages)
};

}  // namespace baton::dsl
