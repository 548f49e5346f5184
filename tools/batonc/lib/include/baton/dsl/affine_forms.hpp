// baton/dsl/affine_forms.hpp — affine forms over a stage's index variables (host only).
//
// Owns LinForm (sum of coefficient * variable, plus a constant, the coefficients being expressions
// over parameters only), the folding constructors that build them (detail::bin, detail::neg) and
// linearize(), which turns a map's expression into one or says, located, why it is not affine.
// Rules: parameters are constants here; only sums and parameter multiples of index variables are
// affine; a constant folds only while it stays within 2^40 (eval() reports the rest).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "baton/dsl/program.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

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

// Linearizes e over the index variables `vars`; parameters are constants.
inline status linearize(const Program& prog, const Expr& e, const std::set<std::string>& vars, LinForm& out) {
  auto err = [&](Loc l, const std::string& msg) { return status(errc::invalid_argument, located(prog.file, prog.source, l, msg)); };
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
      BATON_TRY(linearize(prog, *e.a, vars, a));
      for (auto& [v, c] : a.coef) out.coef[v] = detail::neg(c);
      out.c0 = detail::neg(a.c0);
      return {};
    }
    case Expr::add:
    case Expr::sub: {
      LinForm a, b;
      BATON_TRY(linearize(prog, *e.a, vars, a));
      BATON_TRY(linearize(prog, *e.b, vars, b));
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
      BATON_TRY(linearize(prog, *e.a, vars, a));
      BATON_TRY(linearize(prog, *e.b, vars, b));
      if (!a.coef.empty() && !b.coef.empty())
        return err(e.loc, "not affine: a product of two index expressions ('" + to_string(*e.a) + "' * '" + to_string(*e.b) + "')");
      const LinForm& lin = a.coef.empty() ? b : a;
      const ExprPtr& k = a.coef.empty() ? a.c0 : b.c0;
      for (auto& [v, c] : lin.coef) out.coef[v] = detail::bin(Expr::mul, c, k);
      out.c0 = detail::bin(Expr::mul, lin.c0, k);
      return {};
    }
    default: {
      LinForm a, b;
      BATON_TRY(linearize(prog, *e.a, vars, a));
      if (e.b) BATON_TRY(linearize(prog, *e.b, vars, b));
      if (!a.coef.empty() || !b.coef.empty()) {
        const char* op = e.kind == Expr::div ? "'/'" : e.kind == Expr::mod ? "'%'" : e.kind == Expr::cdiv ? "cdiv" : e.kind == Expr::min ? "min" : "max";
        return err(e.loc, std::string("not affine: ") + op + " of an index expression ('" + to_string(e) +
                               "'): cdiv, min, max, '/' and '%' take parameters only, and tile and k indices may only be added "
                               "and scaled by parameters; ranges are clipped to the tensor, so ragged last tiles need no min, "
                               "and a causal k-loop is bounded by the tile in the k line ('k j < m + 1')");
      }
      out.c0 = std::make_shared<Expr>(e);
      return {};
    }
  }
}

}  // namespace baton::dsl
