// baton/dsl/analysis.hpp — what batonc does with a parsed .baton program (host only): the entry
// point (analyze(), Analyzer) that runs the analysis's parts in order and owns nothing else.
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
//
// The parts, each in its own header:
//   model.hpp           the result types (Analysis, StageInfo, EdgeInfo, Candidate, ...)
//   affine_forms.hpp    LinForm and linearize(): maps as affine forms over index variables
//   evaluate.hpp        bindings, eval(), a stage's grid and k-blocks at a binding, message helpers
//   semantics.hpp       step 1's checks on names, forms and edges (Semantics), and the edges
//   coverage.hpp        step 1's per-binding bounds, overlap and coverage checks
//   budget.hpp          proof_cost() and the ProofBudget all proofs of a program share
//   lowering.hpp        an edge's footprint at a binding; GemmA lowering; boxes vs bounding box
//   relation_proof.hpp  the exact relation of the maps; step 2's proof against a `relation` line
//   candidates.hpp      steps 3 and 4: candidates, their proofs and costs, the choice
//   orders.hpp          step 5
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "baton/dependency.hpp"
#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/affine_forms.hpp"
#include "baton/dsl/budget.hpp"
#include "baton/dsl/candidates.hpp"
#include "baton/dsl/coverage.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/lowering.hpp"
#include "baton/dsl/model.hpp"
#include "baton/dsl/orders.hpp"
#include "baton/dsl/program.hpp"
#include "baton/dsl/relation_proof.hpp"
#include "baton/dsl/semantics.hpp"
#include "baton/status.hpp"

namespace baton::dsl {

class Analyzer {
 public:
  static constexpr int64_t kProofBudget = dsl::kProofBudget;  // default per program (all edges, bindings, candidates)

  // proof_budget: the most proof steps (proof_cost) the whole program may take.
  explicit Analyzer(Program p, int64_t proof_budget = kProofBudget, AnalyzeOptions o = {}) : opt_(o) {
    a_.program = std::move(p);
    budget_.limit = proof_budget;
  }

  // The steps in order; the first error wins.
  result<Analysis> run() {
    Semantics sem(a_);
    BATON_TRY(sem.names());
    BATON_TRY(make_bindings(a_.program, a_.bindings));
    BATON_TRY(sem.stages());
    BATON_TRY(sem.edges());
    BATON_TRY(sem.acyclic());
    for (const Binding& b : a_.bindings) BATON_TRY(check_bounds(a_, b));
    for (const Binding& b : a_.bindings) BATON_TRY(check_overlaps(a_, b));
    for (const Binding& b : a_.bindings)
      for (const EdgeInfo& e : a_.edges) BATON_TRY(check_coverage(a_, e, b, budget_));
    for (EdgeInfo& e : a_.edges) BATON_TRY(choose_policy(a_, e, budget_, opt_));
    BATON_TRY(choose_orders(a_));
    return std::move(a_);
  }

  // ---- concrete values at a binding, for --check, the emitter's self-check and the tests; each
  // forwards to the part that owns it ----
  static status eval(const Program& prog, const Expr& e, const Binding& b, int64_t& out) { return dsl::eval(prog, e, b, out); }
  static status grid(const Program& prog, const StageInfo& s, const Binding& b, Grid& g) { return stage_grid(prog, s, b, g); }
  static status k_blocks(const Program& prog, const StageInfo& s, const Binding& b, int& k) { return stage_k_blocks(prog, s, b, k); }
  static status k_first_bound(const Program& prog, const StageInfo& s, const Binding& b, std::function<int(Tile)>& out) {
    return dsl::k_first_bound(prog, s, b, out);
  }
  static status footprint(const Analysis& a, const EdgeInfo& e, const Binding& b, AffineFootprint& fp) {
    return edge_footprint(a, e, b, fp);
  }
  static DependencyRelation relation(const AffineFootprint& fp, Grid consumer, std::string description,
                                     std::function<int(Tile)> bound = nullptr) {
    return exact_relation(fp, consumer, std::move(description), std::move(bound));
  }
  static status maps_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, const AffineFootprint& fp, Grid cg,
                              DependencyRelation& out) {
    return dsl::maps_relation(a, e, b, fp, cg, out);
  }
  static status declared_relation(const Analysis& a, const EdgeInfo& e, const Binding& b, DependencyRelation& out) {
    return dsl::declared_relation(a, e, b, out);
  }
  static int64_t proof_cost(const AffineFootprint& fp, Grid consumer) { return dsl::proof_cost(fp, consumer); }
  static std::string relation_located(const Program& prog, const RelationDecl& d, Loc l, const std::string& msg) {
    return dsl::relation_located(prog, d, l, msg);
  }
  static std::string binding_note(const Analysis& a, const Binding& b) { return dsl::binding_note(a, b); }

 private:
  Analysis a_;
  ProofBudget budget_;
  AnalyzeOptions opt_;
};

[[nodiscard]] inline result<Analysis> analyze(Program p, int64_t proof_budget = Analyzer::kProofBudget, AnalyzeOptions o = {}) {
  return Analyzer(std::move(p), proof_budget, o).run();
}

}  // namespace baton::dsl
