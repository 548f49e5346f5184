// baton/dsl/relations.hpp — the exact relations a `relation` line (or batonc --relation) names
// (host only). Each is one of the library's relations in baton/dependency.hpp, built from named
// arguments; batonc proves an edge's maps and policies against it, independently of the maps.
//
//   relation conv1 -> conv2 : conv_exact(h = H, w = W, c = C, prod_tile_m = 128, prod_tile_n = 64,
//                                        cons_tile_m = 128, cons_tile_k = 64) loose
//
// The argument names are the fields of the library's shape struct (footprint::ConvHalo,
// footprint::GemmA, CausalAttentionShape), so a generated header initializes it with the same
// names (designated initializers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/footprint.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

struct RelationArgSpec {
  std::string_view name;
  bool required;
  int64_t fallback;  // when not required and not given
};

struct RelationKind {
  std::string_view name;
  std::string_view cxx_shape;  // the shape struct a generated header fills ("" = none)
  std::string_view cxx_make;   // the deps:: function that builds the relation
  std::vector<RelationArgSpec> args;
};

inline const std::vector<RelationKind>& relation_kinds() {
  static const std::vector<RelationKind> kinds = {
      {"conv_exact",
       "::baton::footprint::ConvHalo",
       "::baton::deps::conv_exact",
       {{"n", false, 1},
        {"h", true, 0},
        {"w", true, 0},
        {"c", true, 0},
        {"r", false, 3},
        {"s", false, 3},
        {"stride", false, 1},
        {"pad", false, 1},
        {"prod_tile_m", true, 0},
        {"prod_tile_n", true, 0},
        {"cons_tile_m", true, 0},
        {"cons_tile_k", true, 0}}},
      {"gemm_a",
       "::baton::footprint::GemmA",
       "::baton::deps::gemm_a",
       {{"rows", true, 0},
        {"cols", true, 0},
        {"prod_tile_m", true, 0},
        {"prod_tile_n", true, 0},
        {"cons_tile_m", true, 0},
        {"cons_tile_k", true, 0}}},
      {"causal_attention",
       "::baton::CausalAttentionShape",
       "::baton::deps::causal_attention",
       {{"seq", true, 0},
        {"cols", true, 0},
        {"head_dim", true, 0},
        {"q_col", true, 0},
        {"k_col", true, 0},
        {"v_col", true, 0},
        {"head_stride", true, 0},
        {"prod_tile_m", true, 0},
        {"prod_tile_n", true, 0},
        {"block_m", true, 0},
        {"block_n", true, 0}}},
      {"one_to_one", "", "::baton::deps::one_to_one", {}},
      {"transposed", "", "::baton::deps::transposed", {}},
  };
  return kinds;
}

inline const RelationKind* find_relation_kind(const std::string& name) {
  for (const RelationKind& k : relation_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

inline std::string relation_kind_names() {
  std::string s;
  for (const RelationKind& k : relation_kinds()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

// The relation with its arguments' values (every argument of the kind, fallbacks filled in), for
// a consumer grid (and the producer grid, which one_to_one and transposed take from the program).
[[nodiscard]] inline result<DependencyRelation> make_relation(const RelationKind& kind, const std::map<std::string, int64_t>& v,
                                                              Grid producer, Grid consumer) {
  auto get = [&](std::string_view n) -> int {
    auto it = v.find(std::string(n));
    return it == v.end() ? 0 : int(it->second);
  };
  if (kind.name == "conv_exact") {
    footprint::ConvHalo f{};
    f.n = get("n"), f.h = get("h"), f.w = get("w"), f.c = get("c");
    f.r = get("r"), f.s = get("s"), f.stride = get("stride"), f.pad = get("pad");
    f.prod_tile_m = get("prod_tile_m"), f.prod_tile_n = get("prod_tile_n");
    f.cons_tile_m = get("cons_tile_m"), f.cons_tile_k = get("cons_tile_k");
    if (const char* why = f.invalid_reason()) return status(errc::invalid_argument, why);
    return deps::conv_exact(f, consumer);
  }
  if (kind.name == "gemm_a") {
    footprint::GemmA f{get("rows"), get("cols"), get("prod_tile_m"), get("prod_tile_n"), get("cons_tile_m"), get("cons_tile_k")};
    if (const char* why = f.invalid_reason()) return status(errc::invalid_argument, why);
    return deps::gemm_a(f, consumer);
  }
  if (kind.name == "causal_attention") {
    CausalAttentionShape s{};
    s.seq = get("seq"), s.cols = get("cols"), s.head_dim = get("head_dim");
    s.q_col = get("q_col"), s.k_col = get("k_col"), s.v_col = get("v_col"), s.head_stride = get("head_stride");
    s.prod_tile_m = get("prod_tile_m"), s.prod_tile_n = get("prod_tile_n");
    s.block_m = get("block_m"), s.block_n = get("block_n");
    if (const char* why = s.invalid_reason()) return status(errc::invalid_argument, why);
    return deps::causal_attention(s, consumer);
  }
  if (kind.name == "one_to_one") {
    if (!(producer == consumer))
      return status(errc::invalid_argument, "one_to_one needs equal grids (producer " + to_string(producer) + ", consumer " +
                                                to_string(consumer) + ")");
    return deps::one_to_one(producer);
  }
  if (kind.name == "transposed") {
    if (!(producer.transposed() == consumer))
      return status(errc::invalid_argument, "transposed needs the consumer grid to be the producer's transposed (producer " +
                                                to_string(producer) + ", consumer " + to_string(consumer) + ")");
    return deps::transposed(producer);
  }
  return status(errc::invalid_argument, "unknown relation '" + std::string(kind.name) + "'");
}

// Levenshtein distance, for "did you mean" hints.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}
// "; did you mean 'X'?" for the closest of `names` within a third of the word's length (at least
// two edits, fewer edits than the word has letters: 'Q' is no typo of 'Y'), or "".
inline std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_d && d < word.size()) {
      best_d = d;
      best = n;
    }
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

}  // namespace baton::dsl
