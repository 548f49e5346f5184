// baton/chain.hpp — describing, validating and wiring a chain of stages (host only, no CUDA).
//
//   baton::Chain chain;
//   auto a = chain.add_stage("gemm1", grid1, baton::RowMajor{}, {.writes = {"Y"}});
//   auto b = chain.add_stage("gemm2", grid2, baton::RowMajor{}, {.reads = {"Y"}});
//   auto e = chain.add_edge(a, b, policy, baton::deps::gemm_a(fp, grid2));
//   BATON_TRY(chain.validate());          // grids, orders, wiring, soundness checker
//   auto sa = chain.bind(a, ws, bytes, baton::outs(e), baton::ins());   // -> Stage<...>
//
// Workspace (caller-owned device memory, chain.workspace_bytes()):
//   [ErrorRecord][u64 ticket per stage][u32 semaphores per edge]
// chain.workspace_image(epoch) gives its initial contents; copy it once before the first launch.
// Semaphores are never reset afterwards: epochs advance on the device.
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/error_record.hpp"
#include "baton/order.hpp"
#include "baton/policy.hpp"
#include "baton/stage.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton {

// Tensors a stage reads and writes, by name. validate() uses them to demand an edge from every
// earlier writer to every later reader: with PDL, stage C may run while A is still running, so a
// stage must wait on every earlier stage whose output it reads, not only the adjacent one.
struct StageIO {
  std::vector<std::string> reads = {};
  std::vector<std::string> writes = {};
};

template <TileOrder O>
struct StageRef {
  int index = -1;
  Grid grid{};
  O order{};
};

template <SyncPolicy P>
struct EdgeRef {
  int index = -1;
  int producer = -1;
  int consumer = -1;
  P policy{};
};

template <class... Ps>
struct out_refs {
  std::tuple<EdgeRef<Ps>...> refs;
};
template <class... Ps>
struct in_refs {
  std::tuple<EdgeRef<Ps>...> refs;
};
template <class... Ps>
out_refs<Ps...> outs(const EdgeRef<Ps>&... e) {
  return {std::tuple<EdgeRef<Ps>...>(e...)};
}
template <class... Ps>
in_refs<Ps...> ins(const EdgeRef<Ps>&... e) {
  return {std::tuple<EdgeRef<Ps>...>(e...)};
}

// Options every bound stage gets.
struct BindOptions {
  uint64_t watchdog_ns = BATON_DEFAULT_WATCHDOG_NS;  // 0: off (default: 10 s in debug builds, off with NDEBUG)
  bool async_proxy_reads = false;  // inputs read by TMA
  bool trigger_dependents = true;
  TileEvent* trace = nullptr;      // per-tile timeline buffer of the stage's tile count (device memory)
};

class Chain {
 public:
  struct StageInfo {
    std::string name;
    Grid grid{};
    StageIO io;
    std::function<status()> validate_order;
  };
  struct EdgeInfo {
    int producer = -1, consumer = -1;
    int num_semaphores = 0;
    Grid dep_producer{}, dep_consumer{};  // grids of the dependency relation
    std::function<CheckReport(const std::string&)> check;
    std::function<status(std::vector<uint32_t>&)> posters;  // per-semaphore posts per epoch
    CheckReport report;
  };

  template <TileOrder O = RowMajor>
  StageRef<O> add_stage(std::string name, Grid grid, O order = {}, StageIO io = {}) {
    validated_ = false;
    StageInfo s;
    s.name = std::move(name);
    s.grid = grid;
    s.io = std::move(io);
    std::string what = "stage '" + s.name + "' order";
    s.validate_order = [order, grid, what] { return validate_order(order, grid, what.c_str()); };
    stages_.push_back(std::move(s));
    return StageRef<O>{int(stages_.size()) - 1, grid, order};
  }

  // producer -> consumer, synchronized by `policy`, which must cover `rel` (the reads).
  template <class PO, class CO, SyncPolicy P>
  EdgeRef<P> add_edge(const StageRef<PO>& producer, const StageRef<CO>& consumer, P policy,
                      DependencyRelation rel) {
    return add_edge(producer.index, consumer.index, std::move(policy), std::move(rel));
  }
  template <SyncPolicy P>
  EdgeRef<P> add_edge(int producer, int consumer, P policy, DependencyRelation rel) {
    validated_ = false;
    EdgeInfo e;
    e.producer = producer;
    e.consumer = consumer;
    e.num_semaphores = policy.num_semaphores();
    e.dep_producer = rel.producer;
    e.dep_consumer = rel.consumer;
    e.check = [policy, rel](const std::string& name) { return check_soundness(policy, rel, name); };
    e.posters = [policy](std::vector<uint32_t>& out) -> status {
      const Grid g = policy.producer_grid();
      if (!g.valid()) return status(errc::invalid_argument, "policy producer grid " + to_string(g) + " is invalid");
      out.assign(size_t(policy.num_semaphores() > 0 ? policy.num_semaphores() : 0), 0u);
      for (int i = 0; i < int(g.size()); ++i) {
        int s = policy.post_index(g.tile(i));
        if (s < 0 || s >= int(out.size()))
          return status(errc::invalid_policy, "producer tile " + to_string(g.tile(i)) + " posts to semaphore " +
                                                  std::to_string(s) + " outside the array of " +
                                                  std::to_string(out.size()));
        ++out[size_t(s)];
      }
      return {};
    };
    edges_.push_back(std::move(e));
    return EdgeRef<P>{int(edges_.size()) - 1, producer, consumer, std::move(policy)};
  }

  [[nodiscard]] int num_stages() const { return int(stages_.size()); }
  [[nodiscard]] int num_edges() const { return int(edges_.size()); }
  [[nodiscard]] const StageInfo& stage(int i) const { return stages_[size_t(i)]; }
  [[nodiscard]] const EdgeInfo& edge(int i) const { return edges_[size_t(i)]; }
  [[nodiscard]] bool validated() const { return validated_; }
  [[nodiscard]] std::string edge_name(int i) const {
    const auto& e = edges_[size_t(i)];
    auto nm = [&](int s) { return s >= 0 && s < num_stages() ? "'" + stages_[size_t(s)].name + "'" : std::to_string(s); };
    return "edge " + std::to_string(i) + " " + nm(e.producer) + " -> " + nm(e.consumer);
  }

  // Grids, orders, wiring (no self edges, edges go forward in launch order, every earlier writer
  // of a tensor a stage reads has an edge), policies in bounds, and the soundness checker on every
  // edge. Caches success until the chain changes.
  [[nodiscard]] status validate() {
    if (validated_) return {};
    if (stages_.empty()) return status(errc::invalid_chain, "chain has no stages");
    for (int i = 0; i < num_stages(); ++i) {
      const auto& s = stages_[size_t(i)];
      if (!s.grid.valid())
        return status(errc::invalid_argument, "stage '" + s.name + "' has invalid grid " + to_string(s.grid) +
                                                  " (every extent must be >= 1)");
      BATON_TRY(s.validate_order());
    }
    for (int i = 0; i < num_edges(); ++i) {
      auto& e = edges_[size_t(i)];
      const std::string nm = edge_name(i);
      if (e.producer < 0 || e.producer >= num_stages() || e.consumer < 0 || e.consumer >= num_stages())
        return status(errc::invalid_chain, nm + ": names a stage that is not in the chain");
      if (e.producer == e.consumer)
        return status(errc::invalid_chain, nm + ": a stage cannot wait on itself (it would wait for "
                                                "tiles of its own grid that may never be scheduled)");
      if (e.producer > e.consumer)
        return status(errc::invalid_chain, nm + ": goes backwards; stages launch in the order they were "
                                                "added, so a consumer must come after its producer");
      for (int j = 0; j < i; ++j)
        if (edges_[size_t(j)].producer == e.producer && edges_[size_t(j)].consumer == e.consumer)
          return status(errc::invalid_chain, nm + ": duplicates " + edge_name(j));
      const Grid pg = stages_[size_t(e.producer)].grid, cg = stages_[size_t(e.consumer)].grid;
      if (!(e.dep_producer == pg) || !(e.dep_consumer == cg))
        return status(errc::invalid_chain, nm + ": the dependency relation is for grids " + to_string(e.dep_producer) +
                                               " -> " + to_string(e.dep_consumer) + " but the stages have " +
                                               to_string(pg) + " -> " + to_string(cg));
      std::vector<uint32_t> posters;
      BATON_TRY(e.posters(posters).with_context(nm));
      e.report = e.check(nm);
      if (!e.report.sound()) return e.report.result;
    }
    for (int c = 0; c < num_stages(); ++c)
      for (const auto& t : stages_[size_t(c)].io.reads)
        for (int p = 0; p < c; ++p)
          for (const auto& w : stages_[size_t(p)].io.writes)
            if (w == t && !has_edge(p, c))
              return status(errc::invalid_chain,
                            "stage '" + stages_[size_t(c)].name + "' reads '" + t + "' written by stage '" +
                                stages_[size_t(p)].name + "' but has no edge from it: with PDL it may run "
                                "while '" + stages_[size_t(p)].name + "' still runs");
    validated_ = true;
    return {};
  }

  // ---- workspace -------------------------------------------------------------------------------
  [[nodiscard]] static constexpr size_t error_offset() { return 0; }
  [[nodiscard]] size_t ticket_offset(int stage) const { return 64 + 8 * size_t(stage); }
  [[nodiscard]] size_t semaphore_offset(int edge) const {
    size_t off = 64 + 8 * size_t(num_stages());
    for (int i = 0; i < edge; ++i) off += 4 * size_t(edges_[size_t(i)].num_semaphores > 0 ? edges_[size_t(i)].num_semaphores : 0);
    return off;
  }
  [[nodiscard]] size_t workspace_bytes() const { return (semaphore_offset(num_edges()) + 127) / 128 * 128; }

  // Initial contents of the workspace for a chain whose next launch is epoch `start_epoch`:
  // tickets = epoch * tiles, semaphores = epoch * posts-per-epoch (mod 2^32), no error.
  [[nodiscard]] status workspace_image(uint32_t start_epoch, std::vector<unsigned char>& out) const {
    out.assign(workspace_bytes(), 0);
    for (int s = 0; s < num_stages(); ++s) {
      uint64_t t = uint64_t(start_epoch) * uint64_t(stages_[size_t(s)].grid.size());
      std::memcpy(out.data() + ticket_offset(s), &t, 8);
    }
    for (int e = 0; e < num_edges(); ++e) {
      std::vector<uint32_t> posters;
      BATON_TRY(edges_[size_t(e)].posters(posters).with_context(edge_name(e)));
      for (size_t i = 0; i < posters.size(); ++i) {
        uint32_t v = start_epoch * posters[i];
        std::memcpy(out.data() + semaphore_offset(e) + 4 * i, &v, 4);
      }
    }
    return {};
  }

  // Kernel-side stage object for stage `s`, producing the `outs` edges and consuming the `ins`
  // edges. Every edge into `s` must be bound (else its reads would be unsynchronized).
  template <class O, class... OutPs, class... InPs>
  [[nodiscard]] result<Stage<O, Outputs<OutPs...>, Inputs<InPs...>>> bind(const StageRef<O>& s, void* workspace,
                                                                          size_t workspace_size,
                                                                          const out_refs<OutPs...>& o,
                                                                          const in_refs<InPs...>& i,
                                                                          BindOptions opt = {}) const {
    using S = Stage<O, Outputs<OutPs...>, Inputs<InPs...>>;
    if (!validated_) return status(errc::invalid_chain, "bind() before a successful validate()");
    if (s.index < 0 || s.index >= num_stages()) return status(errc::invalid_chain, "bind(): unknown stage");
    const std::string sn = "stage '" + stages_[size_t(s.index)].name + "'";
    if (workspace == nullptr) return status(errc::workspace_too_small, sn + ": workspace is null");
    if (workspace_size < workspace_bytes())
      return status(errc::workspace_too_small, sn + ": workspace has " + std::to_string(workspace_size) +
                                                   " bytes, the chain needs " + std::to_string(workspace_bytes()));
    auto* base = static_cast<unsigned char*>(workspace);
    S st;
    st.grid = stages_[size_t(s.index)].grid;
    st.order = s.order;
    st.ticket = reinterpret_cast<uint64_t*>(base + ticket_offset(s.index));
    st.error = reinterpret_cast<ErrorRecord*>(base + error_offset());
    st.stage_index = uint32_t(s.index);
    st.watchdog_ns = opt.watchdog_ns;
    st.async_proxy_reads = opt.async_proxy_reads;
    st.trigger_dependents = opt.trigger_dependents;
    st.trace = opt.trace;
    status bad;
    fill_edges_<true>(st.out, o.refs, s.index, base, bad, std::index_sequence_for<OutPs...>{});
    if (!bad.ok()) return bad.with_context(sn);
    fill_edges_<false>(st.in, i.refs, s.index, base, bad, std::index_sequence_for<InPs...>{});
    if (!bad.ok()) return bad.with_context(sn);
    int in_edges = 0, out_edges = 0;
    for (const auto& e : edges_) {
      in_edges += e.consumer == s.index;
      out_edges += e.producer == s.index;
    }
    if (in_edges != int(sizeof...(InPs)))
      return status(errc::invalid_chain, sn + " has " + std::to_string(in_edges) + " input edges but " +
                                             std::to_string(sizeof...(InPs)) + " were bound");
    if (out_edges != int(sizeof...(OutPs)))
      return status(errc::invalid_chain, sn + " has " + std::to_string(out_edges) + " output edges but " +
                                             std::to_string(sizeof...(OutPs)) + " were bound");
    return st;
  }

  // Turns a device error record into a status naming stage, tile, edge, semaphore and values.
  [[nodiscard]] status error_status(const ErrorRecord& r) const {
    if (r.code == uint32_t(DeviceError::none)) return {};
    if (r.code == uint32_t(DeviceError::aborted))
      return status(errc::deadlock, "chain aborted by the host (deadlock detector)");
    std::string stage = r.stage < uint32_t(num_stages()) ? "'" + stages_[r.stage].name + "'" : std::to_string(r.stage);
    std::string edge = r.edge < uint32_t(num_edges()) ? edge_name(int(r.edge)) : "edge " + std::to_string(r.edge);
    return status(errc::watchdog_timeout,
                  "stage " + std::to_string(r.stage) + " " + stage + " tile " +
                      to_string(Tile{r.tile_m, r.tile_n, r.tile_z}) + " k-block " + std::to_string(r.k_block) +
                      " waited on semaphore " + std::to_string(r.semaphore) + " of " + edge + ": expected >= " +
                      std::to_string(r.expected) + ", seen " + std::to_string(r.seen) + ", epoch " +
                      std::to_string(r.epoch) + " (the producer tile never posted: unsound policy, a crashed "
                      "producer, or a watchdog bound too short)");
  }

 private:
  [[nodiscard]] bool has_edge(int p, int c) const {
    for (const auto& e : edges_)
      if (e.producer == p && e.consumer == c) return true;
    return false;
  }
  template <bool Out, class List, class Tuple, size_t... I>
  void fill_edges_(List& list, const Tuple& refs, int stage, unsigned char* base, status& bad,
                   std::index_sequence<I...>) const {
    (void)stage;
    (void)base;
    (fill_edge_<Out>(detail::get<int(I)>(list), std::get<I>(refs), stage, base, bad), ...);
  }
  template <bool Out, class E, class P>
  void fill_edge_(E& slot, const EdgeRef<P>& ref, int stage, unsigned char* base, status& bad) const {
    if (!bad.ok()) return;
    if (ref.index < 0 || ref.index >= num_edges()) {
      bad = status(errc::invalid_chain, "bound edge " + std::to_string(ref.index) + " is not in the chain");
      return;
    }
    const auto& e = edges_[size_t(ref.index)];
    if (Out && e.producer != stage) {
      bad = status(errc::invalid_chain, edge_name(ref.index) + " bound as an output, but this stage is not its "
                                                               "producer (wired backwards?)");
      return;
    }
    if (!Out && e.consumer != stage) {
      bad = status(errc::invalid_chain, edge_name(ref.index) + " bound as an input, but this stage is not its "
                                                               "consumer (wired backwards?)");
      return;
    }
    slot.policy = ref.policy;
    slot.edge_index = uint32_t(ref.index);
    if constexpr (requires { slot.k_local; }) slot.k_local = e.report.sound() && e.report.k_local;
    using SemPtr = decltype(slot.sems);
    slot.sems = reinterpret_cast<SemPtr>(base + semaphore_offset(ref.index));
  }

  std::vector<StageInfo> stages_;
  std::vector<EdgeInfo> edges_;
  bool validated_ = false;
};

}  // namespace baton
