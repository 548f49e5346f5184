// baton/dsl/model.hpp — what batonc's analysis knows about a program (host only): the data the
// passes fill in and the emitter, --explain and --check read.
//
// Owns the types only: a parameter Binding; per stage its grid, k-loop and accesses as affine
// forms (StageInfo, AccessForm, DimForm); per edge its links, sync, relation and candidate
// policies (EdgeInfo, Candidate); per stage its tile order (OrderChoice); and the whole result
// (Analysis). Rules: no logic here; every expression is over parameters (index variables only as
// LinForm keys); Analysis::bindings[0] holds the defaults.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baton/dsl/affine_forms.hpp"
#include "baton/dsl/program.hpp"
#include "baton/dsl/relations.hpp"

namespace baton::dsl {

using Binding = std::map<std::string, int64_t>;

struct DimForm {
  LinForm start;
  ExprPtr width;   // over parameters only
  ExprPtr extent;  // the tensor's extent in this dimension
  Loc loc;
  // `@conv(H, W, DR, DS)` (reads): images of img_h x img_w (parameters only); the tap's row and
  // column shifts dr, ds (k-loop variables and parameters). The start then has no k terms.
  bool conv = false;
  ExprPtr img_h, img_w;
  LinForm dr, ds;
  // `@conv(..., stride = U, pad = E)`: the range counts output pixels (conv_geometry gives their
  // images at a binding). conv_loc is at 'conv'.
  bool strided = false;
  ExprPtr conv_stride, conv_pad;  // over parameters (1 and 0 where not given)
  Loc conv_loc, dr_loc, ds_loc, stride_loc, pad_loc;  // at 'conv' and where each argument starts
};
struct AccessForm {
  std::string tensor;
  Loc loc;
  bool clip = false;
  bool accumulate = false;
  std::vector<DimForm> dims;
};
struct StageInfo {
  std::string name;
  Loc loc;
  ExprPtr ext[3];  // grid m, n, z (never null: 1 where not given)
  std::vector<std::string> kvars;
  std::vector<ExprPtr> kext;  // over parameters; a tile-dependent bound's largest value
  // `k j < m + 1`: the first k-loop variable's extent, affine in the tile indices (causal
  // attention's key blocks up to the query block). kext[0] is its largest value over the grid, the
  // k-blocks every policy walks; a tile's k-blocks past its own bound read nothing.
  bool kbound = false;
  LinForm kbound_form;
  ExprPtr kbound_min;  // its smallest value over the grid (must be >= 1)
  std::vector<AccessForm> reads, writes;
  std::vector<int64_t> tile;
  std::string order;  // as written ("" = batonc chooses)
  ExprPtr order_group;
  Loc order_loc;
};

struct Candidate {
  std::string kind;  // a PolicyKind's name (policy_kinds.hpp): tile, kblock, row, row_k, ...
  int64_t group_m = 0, group_n = 0;
  std::string footprint = "affine";  // a built-in footprint named by a sync (gemm_a, identity, ...)
  bool lowered = false;              // footprint chosen by batonc (GEMM form), not named by a sync
  // Waits on the union of the reads' boxes (dsl::BoxesPolicy) instead of their bounding box: the
  // edge's reads lie apart in the producer's grid (EdgeInfo::boxes).
  bool boxes = false;
  bool sound = true;
  std::string why_not;     // the first failing binding's counterexample
  double start_tiles = 0;  // producer tiles forced before a consumer's first k-block, mean (default binding)
  int64_t waits = 0;       // waits per pass (default binding)
  int64_t over_sync = 0;   // (consumer, producer never read) pairs forced (default binding)
  int64_t reads = 0;       // reads checked, all bindings
  // boxes: what the same kind over the bounding box would cost (default binding), for --explain.
  double bbox_start_tiles = 0;
  int64_t bbox_over_sync = 0;
};

struct EdgeInfo {
  int producer = -1, consumer = -1;
  std::vector<std::pair<int, int>> links;  // (consumer read index, producer write index)
  std::string tensors;                     // "Y" or "K, V"
  const SyncDecl* sync = nullptr;          // a policy chosen by hand
  const RelationDecl* relation = nullptr;  // the exact relation given apart from the maps
  const RelationKind* relation_kind = nullptr;
  int64_t over_reads = 0;                  // reads the maps add to the relation (loose), default binding
  std::string lowering_hint;               // why a nearly GEMM-shaped edge keeps dsl::AffineFootprint
  // The consumer reads the producer's output in several places whose bounding box holds producer
  // tiles none of them reads (at the default binding): its dsl::AffineFootprint candidates wait on
  // the union of the boxes (dsl::BoxesPolicy).
  bool boxes = false;
  std::vector<Candidate> candidates;
  int chosen = -1;
  std::string label;  // "gemm1 -> gemm2"
};

struct OrderChoice {
  std::string kind;  // row, column, grouped
  int64_t group = 0;
  std::string why;
};

// What analyze() proves besides the maps.
struct AnalyzeOptions {
  // Prove each edge's maps and candidates against its `relation` (batonc --check proves its
  // policy against the relation itself, so it turns this off to reach the policy).
  bool prove_relations = true;
};

struct Analysis {
  Program program;
  std::vector<Binding> bindings;  // [0] = the defaults
  std::vector<StageInfo> stages;
  std::vector<EdgeInfo> edges;
  std::vector<OrderChoice> orders;  // per stage
};

}  // namespace baton::dsl
