// baton/dsl/check.hpp — batonc --check and --set (host only): prove a hand-written policy, with
// one of baton's built-in footprints or the program's own maps, against a .baton program's relation.
#pragma once

#include <cctype>
#include <optional>
#include <string>

#include "baton/dependency.hpp"
#include "baton/dsl/analysis.hpp"
#include "baton/footprint.hpp"

namespace baton::dsl {

// "NAME=VALUE": the parameter's default becomes VALUE (its `in {...}` list is kept).
[[nodiscard]] inline status apply_set(Program& p, const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return status(errc::invalid_argument, "--set wants NAME=VALUE, got '" + spec + "'");
  const std::string name = spec.substr(0, eq), val = spec.substr(eq + 1);
  int64_t v = 0;
  for (char c : val) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || v > (int64_t(1) << 40))
      return status(errc::invalid_argument, "--set " + name + ": '" + val + "' is not a non-negative integer below 2^40");
    v = v * 10 + (c - '0');
  }
  for (Param& q : p.params)
    if (q.name == name) {
      q.value = make_num(v, q.loc);
      return {};
    }
  return status(errc::invalid_argument, "--set: the program has no parameter '" + name + "'");
}

// The program without its `sync` lines (--check proves the policy given on the command line).
inline Program without_syncs(Program p) {
  p.syncs.clear();
  return p;
}

// batonc --relation TEXT: `relation` lines given apart from the program (messages point into
// TEXT, named `origin`). One for an edge the program already relates replaces the program's.
[[nodiscard]] inline status add_relations(Program& p, const std::string& origin, const std::string& text) {
  auto frag = parse(origin, text);
  if (!frag.ok()) return frag.error();
  Program& f = frag.value();
  if (!f.params.empty() || !f.tensors.empty() || !f.stages.empty() || !f.syncs.empty() || f.relations.empty())
    return status(errc::invalid_argument, origin + ": --relation takes relation lines only ('relation P -> C : NAME(ARG = value, ...)')");
  for (RelationDecl& d : f.relations) {
    d.origin_file = origin;
    d.origin_source = text;
    std::erase_if(p.relations, [&](const RelationDecl& x) { return x.producer == d.producer && x.consumer == d.consumer; });
    p.relations.push_back(std::move(d));
  }
  return {};
}

namespace detail {
// A policy as the language spells it ("row per k", "group(2, 4) per k") or in the kind names
// ("row_k", "group_k(2,4)"); whitespace is free.
inline bool parse_candidate(const std::string& spelled, Candidate& c) {
  std::string s;
  for (char ch : spelled)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "perk") == 0) {  // "row per k" -> "row_k", "kblock" has no "per k" form
    s.resize(s.size() - 4);
    if (const size_t paren = s.find('('); paren != std::string::npos) s.insert(paren, "_k");
    else if (s == "row" || s == "column") s += "_k";
    else return false;
  }
  for (const PolicyKind& k : kPolicyKinds)
    if (is_candidate_kind(k) && s == k.name) {
      c.kind = std::string(k.name);
      return true;
    }
  for (const char* k : {"group_k", "group"}) {
    const std::string pre = std::string(k) + "(";
    if (s.rfind(pre, 0) == 0 && s.back() == ')') {
      const std::string in = s.substr(pre.size(), s.size() - pre.size() - 1);
      const size_t comma = in.find(',');
      if (comma == std::string::npos) return false;
      try {
        c.group_m = std::stoll(in.substr(0, comma));
        c.group_n = std::stoll(in.substr(comma + 1));
      } catch (...) {
        return false;
      }
      if (c.group_m < 1 || c.group_n < 1 || c.group_m > 65536 || c.group_n > 65536) return false;
      c.kind = k;
      return true;
    }
  }
  return false;
}
}  // namespace detail

// --check "P->C=POLICY[@FOOTPRINT]": "sound: ..." or an unsound_policy status naming the consumer
// tile, k-block and producer tile that no wait covers. Bad specs are invalid_argument.
[[nodiscard]] inline result<std::string> check_policy(const Analysis& a, const std::string& spec_in,
                                                      int64_t proof_budget = Analyzer::kProofBudget) {
  auto strip = [](const std::string& x) {
    std::string out;
    for (char ch : x)
      if (!std::isspace(static_cast<unsigned char>(ch))) out += ch;
    return out;
  };
  const size_t arrow = spec_in.find("->"), eq = spec_in.find('=');
  if (arrow == std::string::npos || eq == std::string::npos || eq < arrow)
    return status(errc::invalid_argument, "--check wants PRODUCER->CONSUMER=POLICY[@FOOTPRINT], got '" + spec_in + "'");
  const std::string pn = strip(spec_in.substr(0, arrow)), cn = strip(spec_in.substr(arrow + 2, eq - arrow - 2));
  std::string pol = spec_in.substr(eq + 1), fpn = "affine";
  if (const size_t at = pol.find('@'); at != std::string::npos) {
    fpn = strip(pol.substr(at + 1));
    pol = pol.substr(0, at);
  }
  while (!pol.empty() && std::isspace(static_cast<unsigned char>(pol.back()))) pol.pop_back();
  while (!pol.empty() && std::isspace(static_cast<unsigned char>(pol.front()))) pol.erase(pol.begin());
  const EdgeInfo* e = nullptr;
  for (const EdgeInfo& x : a.edges)
    if (a.stages[size_t(x.producer)].name == pn && a.stages[size_t(x.consumer)].name == cn) e = &x;
  if (!e) {
    bool known_p = false, known_c = false;
    for (const StageInfo& s : a.stages) {
      known_p |= s.name == pn;
      known_c |= s.name == cn;
    }
    if (!known_p) return status(errc::invalid_argument, "--check: unknown stage '" + pn + "'");
    if (!known_c) return status(errc::invalid_argument, "--check: unknown stage '" + cn + "'");
    return status(errc::invalid_argument, "--check: no dependency " + pn + " -> " + cn + " in " + a.program.file);
  }
  if (fpn != "affine" && fpn != "gemm_a" && fpn != "identity" && fpn != "transpose" && fpn != "all_of_batch")
    return status(errc::invalid_argument, "--check: unknown footprint '" + fpn + "' (affine, gemm_a, identity, transpose, all_of_batch)");
  Candidate c;
  c.footprint = fpn;
  c.boxes = e->boxes && fpn == "affine";  // the form batonc emits: the union of the reads' boxes
  if (!detail::parse_candidate(pol, c))
    return status(errc::invalid_argument, "--check: unknown policy '" + pol +
                                              "' (tile, kblock, row, row per k, column, column per k, group(GM,GN), group(GM,GN) per k)");
  int64_t reads = 0, work = 0;
  for (size_t bi = 0; bi < a.bindings.size(); ++bi) {
    const Binding& b = a.bindings[bi];
    AffineFootprint fp;
    BATON_TRY(Analyzer::footprint(a, *e, b, fp));
    Grid cg;
    BATON_TRY(Analyzer::grid(a.program, a.stages[size_t(e->consumer)], b, cg));
    work += Analyzer::proof_cost(fp, cg);
    if (work > proof_budget)
      return status(errc::invalid_argument, "--check: edge " + e->label + " is too large to prove (" + std::to_string(cg.size()) +
                                                " consumer tiles, " + std::to_string(fp.producer.size()) +
                                                " producer tiles; at most " + std::to_string(proof_budget) + " proof steps); use --set for smaller values");
    DependencyRelation rel;
    BATON_TRY(Analyzer::maps_relation(a, *e, b, fp, cg, rel));
    std::string where;
    for (auto& [k, v] : b) where += (where.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    // Against the maps, and against the relation given apart from them (`relation` or --relation).
    std::optional<DependencyRelation> truth;
    if (e->relation) {
      DependencyRelation t;
      BATON_TRY(Analyzer::declared_relation(a, *e, b, t));
      work += Analyzer::proof_cost(fp, cg);
      truth = std::move(t);
    }
    auto prove = [&](const auto& footprint_) -> status {
      CheckReport rep = with_policy(c, fp.producer, footprint_, [&](const auto& p) { return check_soundness(p, rel, e->label); });
      reads += rep.reads_checked;
      if (!rep.sound()) return status(rep.result.code(), rep.result.message() + " (with " + where + ")");
      if (truth) {
        rep = with_policy(c, fp.producer, footprint_, [&](const auto& p) { return check_soundness(p, *truth, e->label); });
        reads += rep.reads_checked;
        if (!rep.sound()) {
          // Located at the relation, with the fix: the maps miss the read, or the policy waits too little.
          std::string fix;
          if (rep.counterexample) {
            bool maps_read = false;
            rel.reads(rep.counterexample->consumer, rep.counterexample->k_block, [&](Tile t) { maps_read |= t == rep.counterexample->producer; });
            const StageInfo& cs = a.stages[size_t(e->consumer)];
            fix = maps_read ? "; the maps read it but " + candidate_name(c) + " does not wait for it: choose a policy that waits for more"
                            : "; the maps of '" + cs.name + "' (line " + std::to_string(cs.reads[size_t(e->links.front().first)].loc.line) +
                                  ") miss this read, so no policy built from them waits for it: fix the read map";
          }
          return status(rep.result.code(), Analyzer::relation_located(a.program, *e->relation, e->relation->name_loc,
                                                                      e->label + " = " + candidate_name(c) + " is unsound against " +
                                                                          e->relation->name + ": " +
                                                                          rep.result.message().substr(e->label.size() + 2) + " (with " + where +
                                                                          ")" + fix));
        }
      }
      return {};
    };
    BATON_TRY(with_named_footprint(fpn, fp, e->label, [&](const auto& f) { return prove(f); }));
  }
  return "sound: " + e->label + " = " + candidate_name(c) + " covers every read" +
         (e->relation ? " of the maps and of " + e->relation->name : std::string()) + " (" + std::to_string(reads) +
         " reads checked over " + std::to_string(a.bindings.size()) + " binding(s))";
}

}  // namespace baton::dsl
