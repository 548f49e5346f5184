// baton/dsl/budget.hpp — the proof budget (host only): what proving a program costs, and the
// one budget all of its proofs share so that no program hangs batonc.
//
// Owns kProofBudget (the default per program), proof_cost() (the elementary steps one proof of a
// policy against an edge's exact relation takes: check_soundness's loops and the relation's scans)
// and ProofBudget, which the passes charge before each proof and which fails, located at the
// consumer stage, once the program's proofs would pass the limit.
// Rules: every proof is charged before it runs; a cost too large to count is 2^40 (over any limit).
#pragma once

#include <cstdint>
#include <string>

#include "baton/dsl/affine_footprint.hpp"
#include "baton/dsl/evaluate.hpp"
#include "baton/dsl/model.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton::dsl {

// What proving one policy against exact_relation(fp, consumer) costs (check_soundness's loops and the
// relation's scans), in elementary steps: the proofs are bounded by it, so no program hangs batonc.
inline constexpr int64_t kProofBudget = int64_t(1) << 28;  // default per program (all edges, bindings, candidates)
inline int64_t proof_cost(const AffineFootprint& fp, Grid consumer) {
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

// The proof steps a program has spent against its limit.
struct ProofBudget {
  int64_t limit = kProofBudget;
  int64_t spent = 0;

  int64_t left() const { return limit - spent; }
  // Spends cost on a proof of edge e at binding b (cg: the consumer grid, fp: the footprint there).
  status charge(const Analysis& a, int64_t cost, const EdgeInfo& e, const Binding& b, Grid cg, const AffineFootprint& fp) {
    spent += cost;
    if (spent <= limit) return {};
    return program_error(a.program, a.stages[size_t(e.consumer)].loc,
                         "edge " + e.label + " is too large to prove (" + std::to_string(cg.size()) + " consumer tiles x " +
                             std::to_string(fp.k_blocks()) + " k-blocks, " + std::to_string(fp.producer.size()) + " producer tiles" +
                             binding_note(a, b) + "; the proofs of a program may take " + std::to_string(limit) +
                             " steps); prove it at smaller parameter values ('in {...}' or --set)");
  }
};

}  // namespace baton::dsl
