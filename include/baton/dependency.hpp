// baton/dependency.hpp — dependency relations and the soundness checker (host only).
//
// A DependencyRelation is the truth: for each consumer tile and k-block, the producer tiles whose
// output it reads. check_soundness() proves that a policy covers every read with a wait that
// cannot complete before the producer tile has posted, or returns the first counterexample. It
// also reports over-synchronization: waits that force producer tiles the consumer never reads.
//
// The proof, per wait {sem, count, per_epoch}: the semaphore gets one post per producer tile
// that maps to it (its posters). A wait for `count` posts forces a given poster p to have posted
// only if the other posters cannot reach `count` without p, i.e. count > |posters| - 1. Since
// every built-in policy waits for all posters, that means count == |posters|. per_epoch must
// equal |posters|, or epoch e+1 would start counting from the wrong base.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton {

inline std::string to_string(Tile t) {
  // Appended in place: GCC 12 at -O3 warns (-Wrestrict, a false positive) on `"(" + std::string`.
  std::string s = "(";
  s += std::to_string(t.m);
  s += ',';
  s += std::to_string(t.n);
  s += ',';
  s += std::to_string(t.z);
  s += ')';
  return s;
}
inline std::string to_string(Grid g) {
  return std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.z);
}

struct DependencyRelation {
  Grid producer{};
  Grid consumer{};
  int k_blocks = 1;
  // reads(consumer tile, k-block, emit): calls emit(producer tile) for each tile read.
  std::function<void(Tile, int, const std::function<void(Tile)>&)> reads;
  std::string description;
};

namespace deps {

// Exact relation of a footprint whose rectangles are exact (Identity, Transpose, GemmA,
// AllOfBatch): k-block k reads exactly rect(t, k).
template <Footprint F>
DependencyRelation from_footprint(Grid producer, Grid consumer, F fp, std::string description) {
  DependencyRelation d;
  d.producer = producer;
  d.consumer = consumer;
  d.k_blocks = fp.k_blocks();
  d.description = std::move(description);
  d.reads = [fp, producer](Tile t, int k, const std::function<void(Tile)>& emit) {
    TileRect r = fp.rect(t, k);
    for (int z = std::max(r.z0, 0); z < std::min(r.z1, producer.z); ++z)
      for (int m = std::max(r.m0, 0); m < std::min(r.m1, producer.m); ++m)
        for (int n = std::max(r.n0, 0); n < std::min(r.n1, producer.n); ++n) emit(Tile{m, n, z});
  };
  return d;
}

// Exact relation of a footprint that reads a union of boxes per k-block (dsl::AffineFootprint's
// rects(t, k, out), at most F::kMaxBoxes): k-block k reads each tile of the union once.
template <class F>
  requires requires(const F& f, Tile t, int k, TileRect* out) {
    { f.rects(t, k, out) } -> std::convertible_to<int>;
    { f.k_blocks() } -> std::convertible_to<int>;
    F::kMaxBoxes;
  }
DependencyRelation from_boxes(Grid producer, Grid consumer, F fp, std::string description) {
  DependencyRelation d;
  d.producer = producer;
  d.consumer = consumer;
  d.k_blocks = fp.k_blocks();
  d.description = std::move(description);
  d.reads = [fp, producer](Tile t, int k, const std::function<void(Tile)>& emit) {
    TileRect box[F::kMaxBoxes] = {};
    const int nb = fp.rects(t, k, box);
    for (int b = 0; b < nb; ++b) {
      const TileRect r = box[b].clipped(producer);
      for (int z = r.z0; z < r.z1; ++z)
        for (int m = r.m0; m < r.m1; ++m)
          for (int n = r.n0; n < r.n1; ++n) {
            bool seen = false;  // in an earlier box: emitted already
            for (int e = 0; e < b; ++e) seen = seen || box[e].clipped(producer).contains(Tile{m, n, z});
            if (!seen) emit(Tile{m, n, z});
          }
    }
  };
  return d;
}

inline DependencyRelation one_to_one(Grid grid) {
  return from_footprint(grid, grid, footprint::Identity{}, "one-to-one");
}
inline DependencyRelation transposed(Grid producer) {
  return from_footprint(producer, producer.transposed(), footprint::Transpose{}, "transposed");
}
// GEMM chain: consumer reads its rows of the producer's output, k-block by k-block.
inline DependencyRelation gemm_a(const footprint::GemmA& fp, Grid consumer) {
  return from_footprint(fp.producer_grid(consumer.z), consumer, fp, "gemm A operand");
}

// Exact implicit-GEMM convolution relation: enumerates every output pixel of the consumer tile
// and every in-bounds tap (r, s) of k-block k. Taps that land in the padding read nothing.
inline DependencyRelation conv_exact(const footprint::ConvHalo& fp, Grid consumer) {
  DependencyRelation d;
  d.producer = fp.producer_grid();
  d.consumer = consumer;
  d.k_blocks = fp.k_blocks();
  d.description = "conv " + std::to_string(fp.r) + "x" + std::to_string(fp.s) + " stride " +
                  std::to_string(fp.stride) + " pad " + std::to_string(fp.pad);
  d.reads = [fp](Tile t, int k, const std::function<void(Tile)>& emit) {
    const int64_t P = fp.out_h(), Q = fp.out_w(), total = int64_t(fp.n) * P * Q;
    const int cb = k % fp.channel_blocks();
    const int tap = k / fp.channel_blocks();
    const int r = tap / fp.s, s = tap % fp.s;
    const int c0 = cb * fp.cons_tile_k;
    const int c1 = std::min((cb + 1) * fp.cons_tile_k, fp.c);
    const int n0 = c0 / fp.prod_tile_n, n1 = (c1 - 1) / fp.prod_tile_n + 1;
    int last_m = -1;
    for (int64_t o = int64_t(t.m) * fp.cons_tile_m; o < std::min(total, int64_t(t.m + 1) * fp.cons_tile_m); ++o) {
      int64_t img = o / (P * Q), p = (o % (P * Q)) / Q, q = o % Q;
      int64_t hh = p * fp.stride - fp.pad + r, ww = q * fp.stride - fp.pad + s;
      if (hh < 0 || hh >= fp.h || ww < 0 || ww >= fp.w) continue;
      int m = int(((img * fp.h + hh) * fp.w + ww) / fp.prod_tile_m);
      if (m == last_m) continue;
      last_m = m;
      for (int n = n0; n < n1; ++n) emit(Tile{m, n, 0});
    }
  };
  return d;
}

}  // namespace deps

// Causal self-attention over a fused QKV projection. The producer writes QKV[seq, cols] in
// prod_tile_m x prod_tile_n tiles, one batch per grid z. Consumer tile (m, n, z) holds queries
// [m*block_m, +block_m) of head n in batch z; its k-block j holds keys [j*block_n, +block_n). Head
// h's Q, K and V are the columns [q_col + h*head_stride, +head_dim), [k_col + ...), [v_col + ...):
// the [Q|K|V] layout has q_col = 0, k_col = heads*head_dim, v_col = 2*heads*head_dim and
// head_stride = head_dim. Every k-block reads the tile's Q (each block's scores use it).
struct CausalAttentionShape {
  int seq = 0, cols = 0, head_dim = 0;
  int q_col = 0, k_col = 0, v_col = 0, head_stride = 0;
  int prod_tile_m = 0, prod_tile_n = 0;  // the projection's tiles
  int block_m = 0, block_n = 0;          // queries per consumer tile, keys per k-block

  constexpr const char* invalid_reason() const {
    if (seq <= 0 || cols <= 0 || head_dim <= 0) return "CausalAttentionShape: seq, cols and head_dim must be >= 1";
    if (prod_tile_m <= 0 || prod_tile_n <= 0 || block_m <= 0 || block_n <= 0)
      return "CausalAttentionShape: tile sizes (prod_tile_m, prod_tile_n, block_m, block_n) must be >= 1";
    if (q_col < 0 || k_col < 0 || v_col < 0 || head_stride < 0) return "CausalAttentionShape: columns must be >= 0";
    return nullptr;
  }
  constexpr int k_blocks() const { return ceil_div(seq, block_n); }
  constexpr Grid producer_grid(int batches = 1) const {
    return Grid{ceil_div(seq, prod_tile_m), ceil_div(cols, prod_tile_n), batches};
  }
};

namespace deps {

// Query block m reads key blocks 0..m' where m' holds its last query: a key block that starts
// after the tile's last query is never read (it is all future keys), so its k-block reads nothing.
inline DependencyRelation causal_attention(const CausalAttentionShape& s, Grid consumer) {
  DependencyRelation d;
  d.producer = s.producer_grid(consumer.z);
  d.consumer = consumer;
  d.k_blocks = s.k_blocks();
  d.description = "causal attention, " + std::to_string(s.block_m) + " queries x " + std::to_string(s.block_n) + " keys";
  d.reads = [s](Tile t, int j, const std::function<void(Tile)>& emit) {
    const int64_t q0 = int64_t(t.m) * s.block_m, q1 = std::min<int64_t>(q0 + s.block_m, s.seq);
    const int64_t k0 = int64_t(j) * s.block_n, k1 = std::min<int64_t>(k0 + s.block_n, s.seq);
    if (q0 >= q1 || k0 >= k1 || k0 > q1 - 1) return;  // no queries, no keys, or only future keys
    std::vector<Tile> tiles;
    auto box = [&](int64_t r0, int64_t r1, int64_t col) {
      const int64_t c0 = std::max<int64_t>(col, 0), c1 = std::min<int64_t>(col + s.head_dim, s.cols);
      if (c0 >= c1) return;
      for (int64_t m = r0 / s.prod_tile_m; m <= (r1 - 1) / s.prod_tile_m; ++m)
        for (int64_t n = c0 / s.prod_tile_n; n <= (c1 - 1) / s.prod_tile_n; ++n) tiles.push_back(Tile{int(m), int(n), t.z});
    };
    const int64_t head = int64_t(t.n) * s.head_stride;
    box(q0, q1, s.q_col + head);
    box(k0, k1, s.k_col + head);
    box(k0, k1, s.v_col + head);
    std::sort(tiles.begin(), tiles.end(), [](Tile a, Tile b) { return std::tie(a.z, a.m, a.n) < std::tie(b.z, b.m, b.n); });
    tiles.erase(std::unique(tiles.begin(), tiles.end(), [](Tile a, Tile b) { return a.m == b.m && a.n == b.n && a.z == b.z; }),
                tiles.end());
    for (Tile p : tiles) emit(p);
  };
  return d;
}

// A relation from a caller's model of what its kernel reads: reads(consumer tile, k-block, emit)
// calls emit(producer tile) for every producer tile that k-block reads. check_soundness proves any
// policy against it, independently of the footprint the policy waits on.
template <class Reads>
DependencyRelation custom(Grid producer, Grid consumer, int k_blocks, Reads reads, std::string description) {
  DependencyRelation d;
  d.producer = producer;
  d.consumer = consumer;
  d.k_blocks = k_blocks;
  d.description = std::move(description);
  d.reads = [reads = std::move(reads)](Tile t, int k, const std::function<void(Tile)>& emit) { reads(t, k, emit); };
  return d;
}

// Where two relations over the same grids and k-blocks disagree: the (consumer tile, k-block,
// producer tile) triples one has and the other lacks. compare(claimed, truth): `missing` are
// reads of the truth the claim lacks (a policy built from the claim may skip their waits), `extra`
// reads the claim adds (waits the truth does not need).
struct RelationDiff {
  struct Read {
    Tile consumer{};
    int k_block = 0;
    Tile producer{};
  };
  int64_t missing = 0, extra = 0;
  std::optional<Read> first_missing, first_extra;
  int64_t reads_compared = 0;
  [[nodiscard]] bool same() const { return missing == 0 && extra == 0; }
};
// Both relations must have the same grids and k-blocks (invalid_argument otherwise).
[[nodiscard]] inline result<RelationDiff> compare(const DependencyRelation& claimed, const DependencyRelation& truth) {
  if (!(claimed.producer == truth.producer) || !(claimed.consumer == truth.consumer) || claimed.k_blocks != truth.k_blocks)
    return status(errc::invalid_argument, "the relations differ in shape: producer " + to_string(claimed.producer) + " vs " +
                                              to_string(truth.producer) + ", consumer " + to_string(claimed.consumer) + " vs " +
                                              to_string(truth.consumer) + ", k-blocks " + std::to_string(claimed.k_blocks) + " vs " +
                                              std::to_string(truth.k_blocks));
  if (!claimed.reads || !truth.reads) return status(errc::invalid_argument, "a relation has no reads function");
  RelationDiff diff;
  std::vector<int> a, b;
  const Grid pg = truth.producer;
  auto collect = [&](const DependencyRelation& r, Tile t, int k, std::vector<int>& out) {
    out.clear();
    r.reads(t, k, [&](Tile p) { out.push_back(pg.contains(p) ? pg.linear(p) : -1); });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  for (int ci = 0; ci < int(truth.consumer.size()); ++ci) {
    const Tile t = truth.consumer.tile(ci);
    for (int k = 0; k < truth.k_blocks; ++k) {
      collect(claimed, t, k, a);
      collect(truth, t, k, b);
      diff.reads_compared += int64_t(a.size() + b.size());
      size_t i = 0, j = 0;
      while (i < a.size() || j < b.size()) {
        if (j == b.size() || (i < a.size() && a[i] < b[j])) {
          if (!diff.first_extra) diff.first_extra = RelationDiff::Read{t, k, a[i] < 0 ? Tile{-1, -1, -1} : pg.tile(a[i])};
          ++diff.extra;
          ++i;
        } else if (i == a.size() || b[j] < a[i]) {
          if (!diff.first_missing) diff.first_missing = RelationDiff::Read{t, k, b[j] < 0 ? Tile{-1, -1, -1} : pg.tile(b[j])};
          ++diff.missing;
          ++j;
        } else {
          ++i;
          ++j;
        }
      }
    }
  }
  return diff;
}

}  // namespace deps

// The first read that no wait covers.
struct Counterexample {
  Tile consumer{};
  int k_block = 0;
  Tile producer{};
  int producer_sem = -1;   // the semaphore the producer tile posts to
  std::string reason;      // what is wrong with the waits on that semaphore, if any were made
};

struct CheckReport {
  status result;                              // ok, or unsound_policy / invalid_policy
  std::optional<Counterexample> counterexample;
  int64_t reads_checked = 0;                  // (consumer tile, k-block, producer tile) triples
  int64_t waits = 0;                          // waits the policy performs per epoch
  int64_t over_sync_pairs = 0;                // (consumer tile, forced producer tile never read)
  std::string over_sync_example;
  // Every read of k-block k is covered by the waits of k-block k alone, not only by those of
  // k-blocks <= k. Then a split-K part that starts at k-block k_begin > 0 may skip the waits of the
  // k-blocks before it (horizon.hpp); otherwise its first k-block makes all of them, one serial
  // acquire each (docs/conv.md measures what that cost the conv chain's per-k-block waits).
  bool k_local = true;
  [[nodiscard]] bool sound() const { return result.ok(); }
  [[nodiscard]] std::string summary() const {
    std::string s = result.ok() ? "sound" : result.to_string();
    s += "; " + std::to_string(reads_checked) + " reads, " + std::to_string(waits) + " waits";
    if (over_sync_pairs > 0)
      s += "; over-synchronized: " + std::to_string(over_sync_pairs) +
           " (consumer, producer) pairs wait on tiles never read, e.g. " + over_sync_example;
    return s;
  }
};

// Proves `policy` sound for `rel`. `edge_name` prefixes every message.
template <SyncPolicy P>
[[nodiscard]] CheckReport check_soundness(const P& policy, const DependencyRelation& rel,
                                          const std::string& edge_name = "edge") {
  CheckReport rep;
  auto fail = [&](errc c, std::string msg) {
    rep.result = status(c, edge_name + ": " + msg);
    return rep;
  };
  const Grid pg = policy.producer_grid();
  if (!pg.valid() || !rel.producer.valid() || !rel.consumer.valid())
    return fail(errc::invalid_argument, "invalid grid (producer " + to_string(rel.producer) +
                                            ", consumer " + to_string(rel.consumer) + ")");
  if (!(pg == rel.producer))
    return fail(errc::invalid_policy, "policy's producer grid " + to_string(pg) +
                                          " differs from the dependency's producer grid " +
                                          to_string(rel.producer));
  if (!rel.reads) return fail(errc::invalid_argument, "dependency relation has no reads function");
  if constexpr (requires { policy.footprint.invalid_reason(); }) {
    if (const char* why = policy.footprint.invalid_reason()) return fail(errc::invalid_argument, why);
  }
  const int nsem = policy.num_semaphores();
  if (nsem <= 0) return fail(errc::invalid_policy, "policy has no semaphores");
  if (rel.k_blocks < 1) return fail(errc::invalid_argument, "dependency has k_blocks < 1");
  if (policy.k_blocks() != rel.k_blocks)
    return fail(errc::invalid_policy, "policy walks " + std::to_string(policy.k_blocks()) +
                                          " k-blocks but the consumer has " + std::to_string(rel.k_blocks));

  // Posters of each semaphore.
  const int np = int(pg.size());
  std::vector<int> sem_of(static_cast<size_t>(np));
  std::vector<std::vector<int>> posters(static_cast<size_t>(nsem));
  for (int i = 0; i < np; ++i) {
    Tile t = pg.tile(i);
    int s = policy.post_index(t);
    if (s < 0 || s >= nsem)
      return fail(errc::invalid_policy, "producer tile " + to_string(t) + " posts to semaphore " +
                                            std::to_string(s) + ", outside the array of " +
                                            std::to_string(nsem));
    sem_of[size_t(i)] = s;
    posters[size_t(s)].push_back(i);
  }

  std::vector<uint8_t> forced(static_cast<size_t>(np));
  std::vector<uint8_t> forced_here(static_cast<size_t>(np));  // by the waits of the current k-block alone
  std::vector<int> here;                                        // the entries of forced_here set
  std::vector<uint8_t> read_any(static_cast<size_t>(np));
  std::vector<std::string> sem_note(static_cast<size_t>(nsem));  // why a wait on this sem forced nothing
  std::vector<int> touched;
  const int nc = int(rel.consumer.size());
  for (int ci = 0; ci < nc; ++ci) {
    const Tile ct = rel.consumer.tile(ci);
    std::fill(forced.begin(), forced.end(), 0);
    std::fill(read_any.begin(), read_any.end(), 0);
    touched.clear();
    for (int k = 0; k < rel.k_blocks; ++k) {
      status bad;
      for (int p : here) forced_here[size_t(p)] = 0;
      here.clear();
      policy.for_each_wait(ct, k, [&](WaitSpec w) {
        ++rep.waits;
        if (w.sem < 0 || w.sem >= nsem) {
          bad = status(errc::invalid_policy,
                       "consumer tile " + to_string(ct) + " k-block " + std::to_string(k) +
                           " waits on semaphore " + std::to_string(w.sem) + ", outside the array of " +
                           std::to_string(nsem));
          return false;
        }
        const auto& ps = posters[size_t(w.sem)];
        const uint32_t have = uint32_t(ps.size());
        if (w.per_epoch != have) {
          bad = status(errc::invalid_policy,
                       "consumer tile " + to_string(ct) + " k-block " + std::to_string(k) +
                           " waits on semaphore " + std::to_string(w.sem) + " with per_epoch " +
                           std::to_string(w.per_epoch) + " but " + std::to_string(have) +
                           " producer tiles post to it per epoch (later epochs would wait for the wrong value)");
          return false;
        }
        if (w.count > have) {
          bad = status(errc::invalid_policy,
                       "consumer tile " + to_string(ct) + " k-block " + std::to_string(k) +
                           " waits for " + std::to_string(w.count) + " posts on semaphore " +
                           std::to_string(w.sem) + " which receives only " + std::to_string(have) +
                           " per epoch: it would hang");
          return false;
        }
        if (w.count + 1 > have) {  // every poster forced
          for (int p : ps) {
            forced[size_t(p)] = 1;
            if (!forced_here[size_t(p)]) {
              forced_here[size_t(p)] = 1;
              here.push_back(p);
            }
          }
        } else {
          sem_note[size_t(w.sem)] = "a wait on semaphore " + std::to_string(w.sem) + " for " +
                                    std::to_string(w.count) + " of its " + std::to_string(have) +
                                    " posts does not prove any particular tile posted";
          touched.push_back(w.sem);
        }
        return true;
      });
      if (!bad.ok()) {
        rep.result = status(bad.code(), edge_name + ": " + bad.message());
        return rep;
      }
      std::optional<Counterexample> miss;
      rel.reads(ct, k, [&](Tile pt) {
        ++rep.reads_checked;
        if (miss) return;
        if (!pg.contains(pt)) {
          miss = Counterexample{ct, k, pt, -1, "the dependency names a tile outside the producer grid"};
          return;
        }
        int pi = pg.linear(pt);
        read_any[size_t(pi)] = 1;
        if (!forced_here[size_t(pi)]) rep.k_local = false;
        if (!forced[size_t(pi)]) {
          int s = sem_of[size_t(pi)];
          bool partial = std::find(touched.begin(), touched.end(), s) != touched.end();
          miss = Counterexample{ct, k, pt, s,
                                partial ? sem_note[size_t(s)]
                                        : "no wait on semaphore " + std::to_string(s) +
                                              " before or at this k-block"};
        }
      });
      if (miss) {
        if (miss->producer_sem < 0) {
          rep.result = status(errc::invalid_argument,
                              edge_name + ": consumer tile " + to_string(miss->consumer) + " k-block " +
                                  std::to_string(miss->k_block) + " reads " + to_string(miss->producer) +
                                  ": " + miss->reason);
        } else {
          rep.result = status(
              errc::unsound_policy,
              edge_name + ": consumer tile " + to_string(miss->consumer) + " k-block " +
                  std::to_string(miss->k_block) + " reads producer tile " + to_string(miss->producer) +
                  " (posts to semaphore " + std::to_string(miss->producer_sem) +
                  ") without a wait that covers it: " + miss->reason);
        }
        rep.counterexample = miss;
        return rep;
      }
    }
    for (int i = 0; i < np; ++i)
      if (forced[size_t(i)] && !read_any[size_t(i)]) {
        if (rep.over_sync_pairs == 0)
          rep.over_sync_example = "consumer tile " + to_string(ct) + " waits for producer tile " +
                                  to_string(pg.tile(i)) + " which it never reads";
        ++rep.over_sync_pairs;
      }
  }
  return rep;
}

}  // namespace baton
