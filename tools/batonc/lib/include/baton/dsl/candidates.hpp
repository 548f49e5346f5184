// baton/dsl/candidates.hpp — an edge's candidate policies (host only): which there are, whether
// each is sound, what each costs, and the choice among them.
//
// Owns with_policy() (a candidate's policy over any footprint), its names (candidate_name,
// describe_policy, detail::footprint_type), make_candidates() (the hand-chosen sync's policy, or
// every candidate kind of policy_kinds.hpp over the footprint the edge lowers to),
// prove_candidates() (check_soundness of each against the maps' exact relation, and the declared
// one, at every binding; its start tiles, waits and over-synchronization at the defaults) and
// choose_policy(), which runs them and picks.
// Rules: a candidate is proven with the footprint it is emitted with; the choice is sound, then
// the earliest start (fewest producer tiles before a consumer's first k-block), then the fewest
// waits, then the least over-synchronization, the first listed on a tie; every proof is charged to
// the program's ProofBudget.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/budget.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/lowering.hpp"
#include "baton/dsl/model.hpp"
#include "baton/dsl/policy_kinds.hpp"
#include "baton/dsl/relation_proof.hpp"
#include "baton/policy.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

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

namespace detail {
// The C++ type of candidate c's footprint, as generated headers and --explain spell it.
inline std::string footprint_type(const Candidate& c) {
  if (c.footprint == "gemm_a") return "::baton::footprint::GemmA";
  if (c.footprint == "identity") return "::baton::footprint::Identity";
  if (c.footprint == "transpose") return "::baton::footprint::Transpose";
  if (c.footprint == "all_of_batch") return "::baton::footprint::AllOfBatch";
  return "::baton::dsl::AffineFootprint";
}
}  // namespace detail

// Mean number of producer tiles a consumer tile's first k-block waits for.
template <class P>
inline double start_tiles(const P& pol, Grid consumer) {
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

// The candidates of edge e, not yet proven.
inline std::vector<Candidate> make_candidates(const Analysis& a, EdgeInfo& e, const ProofBudget& budget) {
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
    const std::string fp_name = lowers_to_gemm_a(a, e) ? "gemm_a" : "affine";
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
  choose_boxes(a, e, budget);
  for (Candidate& c : cands) c.boxes = e.boxes && c.footprint == "affine";
  return cands;
}

// Proves every candidate at every binding against the maps' exact relation and, where given, the
// declared relations truths (truths[i] at a.bindings[i]); measures the sound ones at the defaults.
inline status prove_candidates(const Analysis& a, const EdgeInfo& e, std::vector<Candidate>& cands,
                               const std::vector<DependencyRelation>& truths, ProofBudget& budget) {
  auto err_ = [&](Loc l, const std::string& m) { return program_error(a.program, l, m); };
  for (Candidate& c : cands) {
    for (size_t bi = 0; bi < a.bindings.size(); ++bi) {
      const Binding& b = a.bindings[bi];
      AffineFootprint fp;
      BATON_TRY(edge_footprint(a, e, b, fp));
      Grid cg;
      BATON_TRY(stage_grid(a.program, a.stages[size_t(e.consumer)], b, cg));
      // Proofs enumerate (consumer tile, k-block) pairs and the producer grid per consumer tile:
      // bounded for the whole program (kProofBudget).
      if (&c == &cands.front()) {
        const int64_t cost = proof_cost(fp, cg);
        BATON_TRY(budget.charge(a, cost > budget.limit ? cost : cost * int64_t(cands.size()), e, b, cg, fp));
      }
      DependencyRelation rel;
      BATON_TRY(maps_relation(a, e, b, fp, cg, rel));
      const status st = with_named_footprint(c.footprint, fp, e.label, [&](const auto& f) -> status {
        CheckReport rep = with_policy(c, fp.producer, f, [&](const auto& pol) { return check_soundness(pol, rel, e.label); });
        c.reads += rep.reads_checked;
        if (!rep.sound()) {
          if (c.sound) c.why_not = rep.result.message() + binding_note(a, b);
          c.sound = false;
        }
        if (bi < truths.size() && rep.sound()) {
          const CheckReport t = with_policy(c, fp.producer, f, [&](const auto& pol) {
            return check_soundness(pol, truths[bi], e.label + " against " + e.relation->name);
          });
          if (!t.sound()) {
            if (c.sound) c.why_not = t.result.message() + binding_note(a, b);
            c.sound = false;
          }
        }
        if (bi == 0 && rep.sound()) {
          c.waits = rep.waits;
          c.over_sync = rep.over_sync_pairs;
          c.start_tiles = with_policy(c, fp.producer, f, [&](const auto& pol) { return start_tiles(pol, cg); });
        }
        if (bi == 0 && rep.sound() && c.boxes) {  // what the bounding box would cost, for --explain
          BATON_TRY(budget.charge(a, proof_cost(fp, cg), e, b, cg, fp));
          Candidate bbox = c;
          bbox.boxes = false;
          const CheckReport r = with_policy(bbox, fp.producer, f, [&](const auto& pol) { return check_soundness(pol, rel, e.label); });
          c.bbox_over_sync = r.over_sync_pairs;
          c.bbox_start_tiles = with_policy(bbox, fp.producer, f, [&](const auto& pol) { return start_tiles(pol, cg); });
        }
        return {};
      });
      if (!st.ok()) return err_(e.sync ? e.sync->footprint_loc : a.stages[size_t(e.consumer)].loc, st.message());
    }
  }
  return {};
}

// The sound candidate that starts earliest, then waits least, then over-synchronizes least (the
// first listed on a tie); -1 when none is sound.
inline int best_candidate(const std::vector<Candidate>& cands) {
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
  return best;
}

// Edge e's candidates, proven, and the one chosen (e.candidates, e.chosen); the maps proven
// against the edge's `relation` first, when opt asks.
inline status choose_policy(const Analysis& a, EdgeInfo& e, ProofBudget& budget, const AnalyzeOptions& opt) {
  auto err_ = [&](Loc l, const std::string& m, errc c) { return program_error(a.program, l, m, c); };
  std::vector<Candidate> cands = make_candidates(a, e, budget);
  // The relation given apart from the maps: the maps must read what it says (all of it, and no
  // more unless it is `loose`), and every candidate is proven against it as well.
  std::vector<DependencyRelation> truths;
  if (e.relation && opt.prove_relations) BATON_TRY(prove_maps_against_relation(a, e, budget, truths));
  BATON_TRY(prove_candidates(a, e, cands, truths, budget));
  e.candidates = cands;
  const int best = best_candidate(cands);
  if (best < 0) {
    if (e.sync)
      return err_(e.sync->loc, "the policy for " + e.label + " (" + candidate_name(cands[0]) + ") is unsound: " + cands[0].why_not,
                  errc::unsound_policy);
    return status(errc::unsound_policy, "no candidate policy is sound for " + e.label + " (first: " + cands[0].why_not + ")");
  }
  e.chosen = best;
  return {};
}

}  // namespace baton::dsl
