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
#include <vector>

#include "baton/footprint.hpp"
#include "baton/policy.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"

namespace baton {

inline std::string to_string(Tile t) {
  return "(" + std::to_string(t.m) + "," + std::to_string(t.n) + "," + std::to_string(t.z) + ")";
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
          for (int p : ps) forced[size_t(p)] = 1;
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
