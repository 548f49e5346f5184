// baton/dsl/evaluate.hpp — parameter bindings and the concrete values of a program under one
// (host only), and where messages about them point.
//
// Owns: the bindings to prove (make_bindings: the defaults, then each `in {...}` value of each
// parameter); eval() of a parameter expression; a stage's grid, k-blocks and tile-dependent first
// k-loop bound at a binding; the located messages (program_error, relation_located) and the
// " (with M = 17)" note a message about a binding other than the defaults carries.
// Rules: every value stays within 2^40 and every division is by >= 1 (or a located error); a value
// the device computes in int must fit in int (eval_int); grids are valid baton::Grids.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baton/dsl/model.hpp"
#include "baton/dsl/program.hpp"
#include "baton/status.hpp"
#include "baton/dependency.hpp"

namespace baton::dsl {

// A message located in the program's text.
inline status program_error(const Program& prog, Loc l, const std::string& msg, errc c = errc::invalid_argument) {
  return status(c, located(prog.file, prog.source, l, msg));
}
// A message located in a relation's text (the program's, or batonc --relation's).
inline std::string relation_located(const Program& prog, const RelationDecl& d, Loc l, const std::string& msg) {
  return d.origin_file.empty() ? located(prog.file, prog.source, l, msg) : located(d.origin_file, d.origin_source, l, msg);
}
// " (with M = 17)" for a binding other than the defaults.
inline std::string binding_note(const Analysis& a, const Binding& b) {
  std::string s;
  for (auto& [k, v] : b)
    if (a.bindings.front().at(k) != v) s += (s.empty() ? "" : ", ") + k + " = " + std::to_string(v);
  return s.empty() ? "" : " (with " + s + ")";
}

// The value of parameter expression e under binding b.
inline status eval(const Program& prog, const Expr& e, const Binding& b, int64_t& out) {
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
// eval(), and the value fits in int.
inline status eval_int(const Program& prog, const Expr& e, const Binding& b, int& out) {
  int64_t v = 0;
  BATON_TRY(eval(prog, e, b, v));
  if (v > 0x7fffffff || v < -0x7fffffff)
    return status(errc::invalid_argument, located(prog.file, prog.source, e.loc, "value " + std::to_string(v) + " does not fit in int"));
  out = int(v);
  return {};
}
// The coefficient of index variable v in f under binding b (0 where f does not name v).
inline status eval_coef(const Program& prog, const LinForm& f, const std::string& v, const Binding& b, int& out) {
  auto it = f.coef.find(v);
  if (it == f.coef.end()) {
    out = 0;
    return {};
  }
  return eval_int(prog, *it->second, b, out);
}

// Stage s's grid of tiles under binding b.
inline status stage_grid(const Program& prog, const StageInfo& s, const Binding& b, Grid& g) {
  int v[3] = {1, 1, 1};
  for (int ax = 0; ax < 3; ++ax) BATON_TRY(eval_int(prog, *s.ext[ax], b, v[ax]));
  g = Grid{v[0], v[1], v[2]};
  if (!g.valid())
    return status(errc::invalid_argument, located(prog.file, prog.source, s.loc,
                                                  "stage '" + s.name + "' has grid " + to_string(g) +
                                                      " (every extent must be >= 1, at most 2^31 - 1 tiles)"));
  return {};
}
inline status stage_k_blocks(const Program& prog, const StageInfo& s, const Binding& b, int& k) {
  int64_t kk = 1;
  for (const ExprPtr& e : s.kext) {
    int v = 0;
    BATON_TRY(eval_int(prog, *e, b, v));
    if (v < 1)
      return status(errc::invalid_argument,
                    located(prog.file, prog.source, e->loc, "a k-loop extent of stage '" + s.name + "' is " + std::to_string(v) + " (must be >= 1)"));
    kk *= v;
    if (kk > 0x7fffffff) return status(errc::invalid_argument, "stage '" + s.name + "' has too many k-blocks");
  }
  k = int(kk);
  return {};
}

// A tile-dependent first k-loop bound at binding b as a function of the tile (empty: none).
inline status k_first_bound(const Program& prog, const StageInfo& s, const Binding& b, std::function<int(Tile)>& out) {
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

// Bindings: the defaults, then each proven value of each parameter (others at their default).
inline status make_bindings(const Program& prog, std::vector<Binding>& bindings) {
  Binding def;
  for (const Param& p : prog.params) {
    int64_t v = 0;
    BATON_TRY(eval(prog, *p.value, def, v));
    def[p.name] = v;
  }
  bindings.push_back(def);
  for (const Param& p : prog.params)
    for (const ExprPtr& e : p.proven) {
      Binding b = def;
      int64_t v = 0;
      BATON_TRY(eval(prog, *e, def, v));
      if (v == def[p.name]) continue;
      b[p.name] = v;
      // Later parameters defined from this one follow it.
      bool after = false;
      for (const Param& q : prog.params) {
        if (q.name == p.name) {
          after = true;
          continue;
        }
        if (after) BATON_TRY(eval(prog, *q.value, b, b[q.name]));
      }
      bindings.push_back(b);
    }
  if (bindings.size() > 64) return status(errc::invalid_argument, "more than 64 parameter bindings to prove");
  return {};
}

}  // namespace baton::dsl
