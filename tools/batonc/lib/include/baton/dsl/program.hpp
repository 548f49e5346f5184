// baton/dsl/program.hpp — the .baton language: syntax tree, lexer and parser (host only).
//
// A program declares parameters, tensors and stages; each stage has a grid of tiles, optional
// k-loop variables (its k-blocks) and the boxes of tensor elements one tile reads and writes, as
// affine maps of its tile and k indices. The grammar is in docs/batonc.md; a short example:
//
//   param M = 128 in {1, 17, 128, 2048}    # the value the header defaults to; the values proved
//   param F = 6144
//   tensor Y[M, F]
//   stage gemm1 {
//     grid m < cdiv(M, 128), n < cdiv(F, 128)
//     writes Y[m*128 +: 128, n*128 +: 128]
//   }
//   stage gemm2 {
//     grid m < cdiv(M, 128), n < cdiv(H, 128)
//     k kb < cdiv(F, 64)
//     reads Y[m*128 +: 128, kb*64 +: 64]
//   }
//
// parse() returns the tree or a parse_error status "file:line:col: message", the offending line
// and a caret under the column. It never throws and bounds its recursion.
#pragma once

#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/dsl/policy_kinds.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

struct Loc {
  int line = 1, col = 1;
};

// ---- expressions -------------------------------------------------------------------------------

struct Expr {
  enum Kind { num, name, add, sub, mul, div, mod, neg, cdiv, min, max } kind = num;
  int64_t value = 0;        // num
  std::string id;           // name
  Loc loc;
  std::shared_ptr<const Expr> a, b;
};
using ExprPtr = std::shared_ptr<const Expr>;

inline ExprPtr make_num(int64_t v, Loc l = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::num;
  e->value = v;
  e->loc = l;
  return e;
}

// C-like text of an expression; `name_prefix` goes before every name (the emitter's "p.").
inline std::string to_string(const Expr& e, const std::string& name_prefix = "") {
  auto bin = [&](const char* op) {
    return "(" + to_string(*e.a, name_prefix) + " " + op + " " + to_string(*e.b, name_prefix) + ")";
  };
  switch (e.kind) {
    case Expr::num: return std::to_string(e.value);
    case Expr::name: return name_prefix + e.id;
    case Expr::add: return bin("+");
    case Expr::sub: return bin("-");
    case Expr::mul: return bin("*");
    case Expr::div: return bin("/");
    case Expr::mod: return bin("%");
    case Expr::neg: return "(-" + to_string(*e.a, name_prefix) + ")";
    case Expr::cdiv: return "cdiv(" + to_string(*e.a, name_prefix) + ", " + to_string(*e.b, name_prefix) + ")";
    case Expr::min: return "min(" + to_string(*e.a, name_prefix) + ", " + to_string(*e.b, name_prefix) + ")";
    case Expr::max: return "max(" + to_string(*e.a, name_prefix) + ", " + to_string(*e.b, name_prefix) + ")";
  }
  return "?";
}

// ---- declarations ------------------------------------------------------------------------------

struct Param {
  std::string name;
  Loc loc;
  ExprPtr value;                 // the default (may name earlier params)
  std::vector<ExprPtr> proven;   // `in {...}`: every value the proof covers (the default too)
};

struct TensorDecl {
  std::string name;
  Loc loc;
  std::vector<ExprPtr> extents;
};

// One dimension of an access: [start, start + width); `whole` covers the tensor's extent.
// `start +: width @conv(H, W, DR, DS)` (reads): the dimension counts the pixels of images of H x W
// (pixel n*H*W + h*W + w); each pixel of [start, start + width) is read at DR rows and DS columns
// from it (a stride-1 convolution's tap), and one whose shifted row or column leaves its image
// reads nothing (padding). `@conv(H, W, DR, DS, stride = U, pad = E)` (either name, in any order):
// the range counts output pixels instead, of images of P x Q (P = (H + 2*E - R)/U + 1, R the rows
// the shifts DR span), and output pixel (p, q) reads input pixel (p*U + DR, q*U + DS).
struct ConvRange {
  ExprPtr h, w, dr, ds;
  Loc loc;  // at 'conv'
  bool named = false;    // stride or pad given: the strided form
  ExprPtr stride, pad;   // null: 1 and 0
  Loc dr_loc, ds_loc, stride_loc, pad_loc;  // where each argument starts
};
struct Range {
  ExprPtr start;
  ExprPtr width;  // null: 1
  bool whole = false;
  std::shared_ptr<ConvRange> conv;  // null: a plain range
  Loc loc;
};

struct Access {
  std::string tensor;
  Loc loc;
  std::vector<Range> ranges;
  bool clip = false;        // ranges may run past the tensor (padding): the part outside reads nothing
  bool accumulate = false;  // (writes) tiles may write the same elements, adding into them (split-K)
};

struct Axis {
  char name = 'm';  // m, n or z
  ExprPtr extent;
  Loc loc;
};

struct KVar {
  std::string name;
  ExprPtr extent;
  Loc loc;
};

struct StageDecl {
  std::string name;
  Loc loc;
  std::vector<Axis> grid;
  std::vector<int64_t> tile;  // informational tile shape (tile 128 x 128 x 64)
  std::vector<KVar> kvars;
  std::vector<Access> reads, writes;
  std::string order;          // "", "row", "column" or "grouped"
  ExprPtr order_group;        // grouped(G)
  Loc order_loc;
};

// `sync a -> b : kind`: the policy of an edge chosen by hand (batonc still proves it).
struct SyncDecl {
  std::string producer, consumer;
  Loc loc;
  std::string kind;         // tile, kblock, row, row_k, column, column_k, group, group_k
  int64_t group_m = 0, group_n = 0;
  std::string footprint = "affine";  // @ affine | gemm_a | identity | transpose | all_of_batch
  Loc footprint_loc;
};

// `relation p -> c : NAME(ARG = expr, ...) [loose]`: the edge's dependency relation given apart
// from the maps (one of the library's exact relations, baton/dsl/relations.hpp). batonc proves the
// maps against it and every policy against both. `loose` lets the maps read more than it says.
struct RelationArg {
  std::string name;
  ExprPtr value;
  Loc loc;
};
struct RelationDecl {
  std::string producer, consumer;
  Loc loc;
  std::string name;  // conv_exact, gemm_a, causal_attention, one_to_one, transposed
  Loc name_loc;
  std::vector<RelationArg> args;
  bool loose = false;
  // Where the text came from when not from the program (batonc --relation): messages point there.
  std::string origin_file, origin_source;
};

struct Program {
  std::string file;
  std::string source;
  std::vector<Param> params;
  std::vector<TensorDecl> tensors;
  std::vector<StageDecl> stages;
  std::vector<SyncDecl> syncs;
  std::vector<RelationDecl> relations;
};

// "file:line:col: message", then the line and a caret under the column.
inline std::string located(const std::string& file, const std::string& source, Loc l, const std::string& msg) {
  std::string out = file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col) + ": " + msg;
  size_t pos = 0;
  for (int i = 1; i < l.line && pos != std::string::npos; ++i) {
    pos = source.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || pos > source.size()) return out;
  size_t end = source.find('\n', pos);
  std::string text = source.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  std::string caret;
  for (int i = 1; i < l.col && size_t(i - 1) < text.size(); ++i) caret += text[size_t(i - 1)] == '\t' ? '\t' : ' ';
  return out + "\n  " + text + "\n  " + caret + "^";
}

// ---- lexer -------------------------------------------------------------------------------------

struct Token {
  enum Kind { end, ident, number, punct } kind = end;
  std::string text;
  int64_t value = 0;
  Loc loc;
};

class Lexer {
 public:
  explicit Lexer(const std::string& src) : s_(src) {}
  // Next token, or a status with the location of a character that starts none.
  status next(Token& t) {
    skip_();
    t = Token{};
    t.loc = {line_, col_};
    if (i_ >= s_.size()) return {};
    const char c = s_[i_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i_;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) ++j;
      t.kind = Token::ident;
      t.text = s_.substr(i_, j - i_);
      advance_(j - i_);
      return {};
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i_;
      int64_t v = 0;
      while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
        if (v > (int64_t(1) << 40)) {
          err_loc_ = t.loc;
          return status(errc::parse_error, "number too large (the limit is 2^40)");
        }
        v = v * 10 + (s_[j] - '0');
        ++j;
      }
      if (j < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) {
        err_loc_ = t.loc;
        return status(errc::parse_error, "a number runs into a name: '" + s_.substr(i_, j - i_ + 1) + "'");
      }
      t.kind = Token::number;
      t.value = v;
      t.text = s_.substr(i_, j - i_);
      advance_(j - i_);
      return {};
    }
    static const char* two[] = {"->", "+:"};
    for (const char* p : two)
      if (s_.compare(i_, 2, p) == 0) {
        t.kind = Token::punct;
        t.text = p;
        advance_(2);
        return {};
      }
    if (std::string("{}[](),:<=+-*/%;@").find(c) != std::string::npos) {
      t.kind = Token::punct;
      t.text = std::string(1, c);
      advance_(1);
      return {};
    }
    err_loc_ = t.loc;
    std::string shown = std::isprint(static_cast<unsigned char>(c)) ? std::string("'") + c + "'"
                                                                    : "byte " + std::to_string(int(static_cast<unsigned char>(c)));
    return status(errc::parse_error, "unexpected character " + shown);
  }
  Loc error_loc() const { return err_loc_; }

 private:
  void advance_(size_t n) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  void skip_() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') advance_(1);
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance_(1);
      } else {
        break;
      }
    }
  }
  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  Loc err_loc_;
};

// ---- parser ------------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::string file, std::string source) {
    prog_.file = std::move(file);
    prog_.source = std::move(source);
  }

  result<Program> run() {
    Lexer lx(prog_.source);
    for (;;) {
      Token t;
      status st = lx.next(t);
      if (!st.ok()) return error_at_(lx.error_loc(), st.message());
      toks_.push_back(t);
      if (t.kind == Token::end) break;
    }
    while (!at_end_()) {
      status st = item_();
      if (!st.ok()) return st;
    }
    return std::move(prog_);
  }

 private:
  static constexpr int kMaxDepth = 64;

  const Token& peek_(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  bool at_end_() const { return peek_().kind == Token::end; }
  bool is_(const char* text) const {
    return (peek_().kind == Token::punct || peek_().kind == Token::ident) && peek_().text == text;
  }
  bool accept_(const char* text) {
    if (!is_(text)) return false;
    ++pos_;
    return true;
  }
  static std::string describe_(const Token& t) {
    switch (t.kind) {
      case Token::end: return "the end of the file";
      case Token::number: return "number " + t.text;
      case Token::ident: return "'" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }
  status error_at_(Loc l, const std::string& msg) const {
    return status(errc::parse_error, located(prog_.file, prog_.source, l, msg));
  }
  status expected_(const std::string& what) const {
    return error_at_(peek_().loc, "expected " + what + ", found " + describe_(peek_()));
  }
  status expect_(const char* text) {
    if (accept_(text)) return {};
    return expected_(std::string("'") + text + "'");
  }
  status ident_(std::string& out, Loc& loc, const std::string& what) {
    if (peek_().kind != Token::ident) return expected_(what);
    if (keyword_(peek_().text)) return error_at_(peek_().loc, "'" + peek_().text + "' is a keyword, not a valid " + what);
    out = peek_().text;
    loc = peek_().loc;
    ++pos_;
    return {};
  }
  static bool keyword_(const std::string& s) {
    static const char* kw[] = {"param", "tensor", "stage", "sync", "grid", "tile", "k", "reads", "writes",
                               "order", "in", "clip", "cdiv", "min", "max"};
    for (const char* k : kw)
      if (s == k) return true;
    return false;
  }

  status item_() {
    if (accept_("param")) return param_();
    if (accept_("tensor")) return tensor_();
    if (accept_("stage")) return stage_();
    if (accept_("sync")) return sync_();
    // `relation` is a keyword only here, where a name could not stand.
    if (accept_("relation")) return relation_();
    if (accept_(";")) return {};
    return expected_("'param', 'tensor', 'stage', 'sync' or 'relation'");
  }

  status param_() {
    Param p;
    BATON_TRY(ident_(p.name, p.loc, "parameter name"));
    if (accept_("=")) {
      BATON_TRY(expr_(p.value, 0));
    }
    if (accept_("in")) {
      BATON_TRY(expect_("{"));
      do {
        ExprPtr v;
        BATON_TRY(expr_(v, 0));
        p.proven.push_back(v);
      } while (accept_(","));
      BATON_TRY(expect_("}"));
    }
    if (!p.value && p.proven.empty())
      return error_at_(p.loc, "parameter '" + p.name + "' needs a value ('= 128') or values to prove ('in {1, 128}')");
    if (!p.value) p.value = p.proven.front();
    prog_.params.push_back(std::move(p));
    return {};
  }

  status tensor_() {
    TensorDecl t;
    BATON_TRY(ident_(t.name, t.loc, "tensor name"));
    BATON_TRY(expect_("["));
    do {
      ExprPtr e;
      BATON_TRY(expr_(e, 0));
      t.extents.push_back(e);
    } while (accept_(","));
    BATON_TRY(expect_("]"));
    prog_.tensors.push_back(std::move(t));
    return {};
  }

  status stage_() {
    StageDecl s;
    BATON_TRY(ident_(s.name, s.loc, "stage name"));
    BATON_TRY(expect_("{"));
    while (!accept_("}")) {
      if (at_end_()) return expected_("'}' closing stage '" + s.name + "'");
      if (accept_(";")) continue;
      if (accept_("grid")) {
        do {
          Axis a;
          a.loc = peek_().loc;
          if (peek_().kind != Token::ident || (peek_().text != "m" && peek_().text != "n" && peek_().text != "z"))
            return expected_("a grid axis 'm', 'n' or 'z'");
          a.name = peek_().text[0];
          ++pos_;
          for (const Axis& b : s.grid)
            if (b.name == a.name) return error_at_(a.loc, std::string("grid axis '") + a.name + "' given twice");
          BATON_TRY(expect_("<"));
          BATON_TRY(expr_(a.extent, 0));
          s.grid.push_back(a);
        } while (accept_(","));
      } else if (accept_("tile")) {
        if (peek_().kind != Token::number) return expected_("a tile size");
        s.tile.push_back(peek_().value);
        ++pos_;
        while (accept_("x")) {
          if (peek_().kind != Token::number) return expected_("a tile size after 'x'");
          s.tile.push_back(peek_().value);
          ++pos_;
        }
      } else if (accept_("k")) {
        do {
          KVar v;
          BATON_TRY(ident_(v.name, v.loc, "k-loop variable name"));
          if (v.name == "m" || v.name == "n" || v.name == "z")
            return error_at_(v.loc, "'" + v.name + "' is a grid axis; name the k-loop variable otherwise");
          BATON_TRY(expect_("<"));
          BATON_TRY(expr_(v.extent, 0));
          s.kvars.push_back(v);
        } while (accept_(","));
      } else if (is_("reads") || is_("writes")) {
        const bool reads = peek_().text == "reads";
        ++pos_;
        do {
          Access a;
          BATON_TRY(access_(a));
          (reads ? s.reads : s.writes).push_back(std::move(a));
        } while (accept_(","));
      } else if (accept_("order")) {
        s.order_loc = peek_().loc;
        if (accept_("row")) s.order = "row";
        else if (accept_("column")) s.order = "column";
        else if (accept_("grouped")) {
          s.order = "grouped";
          BATON_TRY(expect_("("));
          BATON_TRY(expr_(s.order_group, 0));
          BATON_TRY(expect_(")"));
        } else {
          return expected_("'row', 'column' or 'grouped(G)'");
        }
      } else {
        return expected_("'grid', 'tile', 'k', 'reads', 'writes', 'order' or '}'");
      }
    }
    prog_.stages.push_back(std::move(s));
    return {};
  }

  status access_(Access& a) {
    BATON_TRY(ident_(a.tensor, a.loc, "tensor name"));
    BATON_TRY(expect_("["));
    do {
      Range r;
      r.loc = peek_().loc;
      if (accept_(":")) {
        r.whole = true;
      } else {
        BATON_TRY(expr_(r.start, 0));
        if (accept_("+:")) BATON_TRY(expr_(r.width, 0));
        if (accept_("@")) {
          auto c = std::make_shared<ConvRange>();
          c->loc = peek_().loc;
          if (!is_("conv")) return expected_("'conv(H, W, DR, DS)' after '@' in a range (a stride-1 convolution's tap: rows DR and columns DS away in images of H x W)");
          ++pos_;
          auto sep = [&](const char* t) {
            return accept_(t) ? status{}
                              : expected_(std::string("'") + t +
                                          "': '@conv' takes four arguments, the images' H and W and the tap's row and column "
                                          "shifts, e.g. @conv(H, W, r - 1, s - 1)");
          };
          BATON_TRY(sep("("));
          BATON_TRY(expr_(c->h, 0));
          BATON_TRY(sep(","));
          BATON_TRY(expr_(c->w, 0));
          BATON_TRY(sep(","));
          c->dr_loc = peek_().loc;
          BATON_TRY(expr_(c->dr, 0));
          BATON_TRY(sep(","));
          c->ds_loc = peek_().loc;
          BATON_TRY(expr_(c->ds, 0));
          while (accept_(",")) {  // the strided form's named arguments
            std::string name;
            Loc nl;
            BATON_TRY(ident_(name, nl, "'stride = U' or 'pad = E' after the tap's shifts"));
            ExprPtr* slot = name == "stride" ? &c->stride : name == "pad" ? &c->pad : nullptr;
            if (!slot)
              return error_at_(nl, "'@conv' takes 'stride' and 'pad' after the tap's shifts, not '" + name +
                                       "': e.g. @conv(H, W, r - 1, s - 1, stride = 2, pad = 1)");
            if (*slot) return error_at_(nl, "argument '" + name + "' given twice");
            BATON_TRY(expect_("="));
            (name == "stride" ? c->stride_loc : c->pad_loc) = peek_().loc;
            BATON_TRY(expr_(*slot, 0));
            c->named = true;
          }
          BATON_TRY(sep(")"));
          r.conv = std::move(c);
        }
      }
      a.ranges.push_back(r);
    } while (accept_(","));
    BATON_TRY(expect_("]"));
    if (accept_("clip")) a.clip = true;
    // `accumulate` is a keyword only after an access, where a name could not stand.
    if (accept_("accumulate")) a.accumulate = true;
    return {};
  }

  status relation_() {
    RelationDecl d;
    d.loc = peek_().loc;
    Loc l;
    BATON_TRY(ident_(d.producer, l, "producer stage name"));
    BATON_TRY(expect_("->"));
    BATON_TRY(ident_(d.consumer, l, "consumer stage name"));
    BATON_TRY(expect_(":"));
    BATON_TRY(ident_(d.name, d.name_loc, "a relation (conv_exact, gemm_a, causal_attention, one_to_one, transposed)"));
    if (accept_("(") && !accept_(")")) {
      do {
        RelationArg a;
        BATON_TRY(ident_(a.name, a.loc, "an argument name (NAME = value)"));
        BATON_TRY(expect_("="));
        BATON_TRY(expr_(a.value, 0));
        for (const RelationArg& b : d.args)
          if (b.name == a.name) return error_at_(a.loc, "argument '" + a.name + "' given twice");
        d.args.push_back(std::move(a));
      } while (accept_(","));
      BATON_TRY(expect_(")"));
    }
    if (accept_("loose")) d.loose = true;
    prog_.relations.push_back(std::move(d));
    return {};
  }

  status sync_() {
    SyncDecl d;
    d.loc = peek_().loc;
    Loc l;
    BATON_TRY(ident_(d.producer, l, "producer stage name"));
    BATON_TRY(expect_("->"));
    BATON_TRY(ident_(d.consumer, l, "consumer stage name"));
    BATON_TRY(expect_(":"));
    if (peek_().kind != Token::ident) return expected_("a policy: tile, kblock, row, column or group(GM, GN)");
    const std::string k = peek_().text;
    const Loc kl = peek_().loc;
    ++pos_;
    if (is_sync_kind(k)) {
      d.kind = k;
    } else if (k == "group") {
      d.kind = "group";
      BATON_TRY(expect_("("));
      for (int64_t* out : {&d.group_m, &d.group_n}) {
        if (peek_().kind != Token::number || peek_().value < 1 || peek_().value > 65536)
          return expected_("a group size in [1, 65536]");
        *out = peek_().value;
        ++pos_;
        if (out == &d.group_m) BATON_TRY(expect_(","));
      }
      BATON_TRY(expect_(")"));
    } else {
      return error_at_(kl, "unknown policy '" + k + "' (tile, kblock, row, column or group(GM, GN))");
    }
    // `per k` makes row, column and group wait per k-block (kblock is tile per k-block).
    if (accept_("per")) {
      if (!accept_("k")) return expected_("'k' after 'per'");
      if (find_policy_kind(d.kind)->family == "tile")
        return error_at_(kl, "'per k' goes with row, column or group ('kblock' is tile per k-block)");
      d.kind += "_k";
    }
    if (accept_("@")) {
      d.footprint_loc = peek_().loc;
      if (peek_().kind != Token::ident) return expected_("a footprint: affine, gemm_a, identity, transpose or all_of_batch");
      d.footprint = peek_().text;
      ++pos_;
      if (d.footprint != "affine" && d.footprint != "gemm_a" && d.footprint != "identity" && d.footprint != "transpose" &&
          d.footprint != "all_of_batch")
        return error_at_(d.footprint_loc, "unknown footprint '" + d.footprint + "' (affine, gemm_a, identity, transpose or all_of_batch)");
    }
    prog_.syncs.push_back(std::move(d));
    return {};
  }

  // expr := term { (+|-) term };  term := unary { (*|/|%) unary };  unary := - unary | primary
  // One precedence level: operand { op operand }, left-associative; `kind` maps an operator to its node
  // (Expr::num: not an operator of this level).
  template <class Operand, class Kind>
  status binary_(ExprPtr& out, int depth, Operand operand, Kind kind) {
    if (depth > kMaxDepth) return error_at_(peek_().loc, "expression nested too deeply");
    BATON_TRY((this->*operand)(out, depth + 1));
    while (peek_().kind == Token::punct && kind(peek_().text) != Expr::num) {
      auto e = std::make_shared<Expr>();
      e->loc = peek_().loc;
      e->kind = kind(peek_().text);
      ++pos_;
      e->a = out;
      ExprPtr rhs;
      BATON_TRY((this->*operand)(rhs, depth + 1));
      e->b = rhs;
      out = e;
    }
    return {};
  }
  status expr_(ExprPtr& out, int depth) {
    return binary_(out, depth, &Parser::term_, [](const std::string& t) {
      return t == "+" ? Expr::add : t == "-" ? Expr::sub : Expr::num;
    });
  }
  status term_(ExprPtr& out, int depth) {
    return binary_(out, depth, &Parser::unary_, [](const std::string& t) {
      return t == "*" ? Expr::mul : t == "/" ? Expr::div : t == "%" ? Expr::mod : Expr::num;
    });
  }
  status unary_(ExprPtr& out, int depth) {
    if (depth > kMaxDepth) return error_at_(peek_().loc, "expression nested too deeply");
    if (is_("-")) {
      auto e = std::make_shared<Expr>();
      e->loc = peek_().loc;
      e->kind = Expr::neg;
      ++pos_;
      ExprPtr a;
      BATON_TRY(unary_(a, depth + 1));
      e->a = a;
      out = e;
      return {};
    }
    return primary_(out, depth + 1);
  }
  status primary_(ExprPtr& out, int depth) {
    const Token& t = peek_();
    if (t.kind == Token::number) {
      out = make_num(t.value, t.loc);
      ++pos_;
      return {};
    }
    if (accept_("(")) {
      BATON_TRY(expr_(out, depth + 1));
      return expect_(")");
    }
    if (t.kind == Token::ident && (t.text == "cdiv" || t.text == "min" || t.text == "max")) {
      auto e = std::make_shared<Expr>();
      e->loc = t.loc;
      e->kind = t.text == "cdiv" ? Expr::cdiv : t.text == "min" ? Expr::min : Expr::max;
      ++pos_;
      BATON_TRY(expect_("("));
      ExprPtr a, b;
      BATON_TRY(expr_(a, depth + 1));
      BATON_TRY(expect_(","));
      BATON_TRY(expr_(b, depth + 1));
      BATON_TRY(expect_(")"));
      e->a = a;
      e->b = b;
      out = e;
      return {};
    }
    if (t.kind == Token::ident && !keyword_(t.text)) {
      auto e = std::make_shared<Expr>();
      e->kind = Expr::name;
      e->id = t.text;
      e->loc = t.loc;
      ++pos_;
      out = e;
      return {};
    }
    return expected_("an expression");
  }

  Program prog_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
};

// Parses `source` (named `file` in messages).
[[nodiscard]] inline result<Program> parse(const std::string& file, const std::string& source) {
  return Parser(file, source).run();
}

}  // namespace baton::dsl
