// baton/dsl/policy_kinds.hpp — the sync policies batonc knows, in one table: their names in the
// DSL and on the command line, the baton policy type each becomes, and how --explain shows it.
// The parser (`sync` lines), the analyzer (candidates), --check and the header emitter all read it.
#pragma once

#include <string_view>

namespace baton::dsl {

struct PolicyKind {
  std::string_view name;    // "row_k": the candidate's kind; a `sync` line writes "row per k"
  std::string_view family;  // tile, row, column or group: the semaphore layout
  bool per_k;               // waits per k-block
  std::string_view type;    // the baton policy template
  std::string_view shown;   // --explain's name
  std::string_view description;
};

inline constexpr PolicyKind kPolicyKinds[] = {
    {"tile", "tile", false, "TilePolicy", "tile", "TilePolicy (one semaphore per producer tile, waits once per tile)"},
    {"kblock", "tile", true, "KBlockPolicy", "kblock", "KBlockPolicy (one semaphore per producer tile, waits per k-block)"},
    {"row", "row", false, "RowPolicy", "row", "RowPolicy (one semaphore per row of producer tiles, waits once per tile)"},
    {"row_k", "row", true, "RowPolicy", "row per k", "RowPolicy per k-block"},
    {"column", "column", false, "ColumnPolicy", "column", "ColumnPolicy (one semaphore per column of producer tiles)"},
    {"column_k", "column", true, "ColumnPolicy", "column per k", "ColumnPolicy per k-block"},
    {"group", "group", false, "GroupPolicy", "group", "GroupPolicy"},
    {"group_k", "group", true, "GroupPolicy", "group per k", "GroupPolicy per k-block"},
};

// nullptr when `name` is no kind.
constexpr const PolicyKind* find_policy_kind(std::string_view name) {
  for (const PolicyKind& k : kPolicyKinds)
    if (k.name == name) return &k;
  return nullptr;
}
// The kinds batonc proposes by itself (group sizes come only from a `sync` line).
constexpr bool is_candidate_kind(const PolicyKind& k) { return k.family != "group"; }
// The kinds a `sync` line names before an optional `per k`.
constexpr bool is_sync_kind(std::string_view name) {
  const PolicyKind* k = find_policy_kind(name);
  return k && k->family != "group" && (!k->per_k || k->family == "tile");  // tile, kblock, row, column
}

}  // namespace baton::dsl
