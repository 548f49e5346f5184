// baton/dsl/explain.hpp — batonc --explain (host only): what batonc chose and why, from an
// Analysis (baton/dsl/analysis.hpp).
//
// Owns explain() (per edge: the chosen policy, why, its footprint, the `relation` proof and every
// candidate's soundness and cost; per stage: its tile order and why) and the text helpers the
// generated header's banner and comments share with it (detail::bindings_text, detail::fmt).
// Rules: the text reads the Analysis only (it proves nothing); numbers print with one decimal.
#pragma once

#include <cstdio>
#include <string>

#include "baton/dsl/analysis.hpp"
#include "baton/dsl/candidates.hpp"
#include "baton/dsl/model.hpp"

namespace baton::dsl {

namespace detail {
inline std::string bindings_text(const Analysis& a) {
  std::string s;
  for (size_t i = 0; i < a.bindings.size(); ++i) {
    std::string one;
    for (auto& [k, v] : a.bindings[i])
      if (i == 0 || a.bindings[0].at(k) != v) one += (one.empty() ? "" : " ") + k + "=" + std::to_string(v);
    s += (s.empty() ? "" : "; ") + (i == 0 ? "defaults" + (one.empty() ? std::string() : " (" + one + ")") : one);
  }
  return s;
}
inline std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}
}  // namespace detail

// What batonc chose and why, per edge and per stage.
inline std::string explain(const Analysis& a) {
  std::string out = "batonc: " + a.program.file + ": " + std::to_string(a.stages.size()) + " stage(s), " +
                    std::to_string(a.edges.size()) + " edge(s); proven for " + std::to_string(a.bindings.size()) +
                    " parameter binding(s): " + detail::bindings_text(a) + "\n";
  for (const EdgeInfo& e : a.edges) {
    const Candidate& c = e.candidates[size_t(e.chosen)];
    out += "\nedge " + e.label + " (through " + e.tensors + "): " + candidate_name(c) + " = " + describe_policy(c) + "\n";
    out += e.sync ? "  why: chosen by hand (sync); proven sound\n"
                  : "  why: sound for every binding; consumers start after " + detail::fmt(c.start_tiles) +
                        " producer tile(s) on average, the earliest of the sound candidates; then the fewest waits (" +
                        std::to_string(c.waits) + " per pass)" + (c.over_sync ? "" : ", no over-synchronization") + "\n";
    if (c.boxes)
      out += "  footprint: the union of the " + std::to_string(e.links.size()) +
             " reads' boxes per k-block (dsl::BoxesPolicy): they lie apart in the producer's grid; their bounding box would start after " +
             detail::fmt(c.bbox_start_tiles) + " producer tile(s) with " + std::to_string(c.bbox_over_sync) +
             " (consumer tile, producer tile never read) pairs over-synchronized\n";
    if (c.over_sync && e.links.size() > 1 && !c.boxes)
      out += "  over-synchronization: " + std::to_string(c.over_sync) +
             " (consumer tile, producer tile never read) pairs: the footprint waits on one box of producer tiles per k-block, "
             "the bounding box of the edge's " + std::to_string(e.links.size()) +
             " reads; reads that lie apart in the producer's grid (e.g. [Q|K|V] column blocks) widen it (a layout that keeps "
             "them together, such as heads interleaved, narrows it)\n";
    if (c.lowered)
      out += "  footprint: " + detail::footprint_type(c).substr(2) +
             " (the maps have its form at every binding; cheaper on the device than the generic dsl::AffineFootprint)\n";
    if (!e.lowering_hint.empty()) out += "  hint: " + e.lowering_hint + "\n";
    if (e.relation)
      out += "  relation: " + e.relation->name + " (" +
             (e.relation->origin_file.empty() ? "line " + std::to_string(e.relation->loc.line) : e.relation->origin_file) +
             "), given apart from the maps: " +
             (e.over_reads ? "the maps read all it reads and " + std::to_string(e.over_reads) +
                                 " (tile, k-block, producer tile) reads more (loose)"
                           : std::string("the maps read exactly what it reads")) +
             "; every candidate is proven against it too\n";
    out += "  candidate         sound  start-tiles  waits/pass  over-sync\n";
    for (const Candidate& x : e.candidates) {
      char line[200];
      std::snprintf(line, sizeof line, "  %-17s %-6s %11s  %10lld  %9lld%s\n", candidate_name(x).c_str(), x.sound ? "yes" : "NO",
                    x.sound ? detail::fmt(x.start_tiles).c_str() : "-", static_cast<long long>(x.sound ? x.waits : 0),
                    static_cast<long long>(x.sound ? x.over_sync : 0), &x == &c ? "   <- chosen" : "");
      out += line;
      if (!x.sound) out += "      unsound: " + x.why_not + "\n";
    }
  }
  out += "\norders:\n";
  for (size_t s = 0; s < a.stages.size(); ++s) {
    const OrderChoice& o = a.orders[s];
    out += "  " + a.stages[s].name + ": " + (o.kind == "grouped" ? "grouped(" + std::to_string(o.group) + ")" : o.kind + "-major") +
           " (" + o.why + ")\n";
  }
  return out;
}

}  // namespace baton::dsl
