// emu_demo — baton's CPU emulator, no GPU needed.
//
// Runs a 3-stage chain (A -> B -> C, where C also reads A) with every CTA a host thread on a few
// emulated SM slots, calling the same baton::Stage tile()/wait()/post() code the GPU runs:
//   1. with co-scheduling (the PDL rule) for a few hundred iterations under random delays,
//      checking every element of every iteration;
//   2. without co-scheduling, with a consumer-first scheduler: consumers take every slot, their
//      producers are never scheduled, and the emulator's deadlock detector reports it.
// Exit status: 0 when both behaved as expected, 1 otherwise, 2 on bad arguments.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "baton/baton.hpp"
#include "baton/emu/emulator.hpp"

namespace {

namespace emu = baton::emu;
namespace fp = baton::footprint;

struct Options {
  int slots = 4;
  int iterations = 300;
  uint64_t seed = 1;
  uint32_t max_delay_us = 20;
  uint32_t deadlock_timeout_ms = 200;
};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: emu_demo [--slots N] [--iterations N] [--seed N] [--max-delay-us N] [--deadlock-ms N]\n"
               "\n"
               "Runs a 3-stage baton chain (A -> B -> C, C also reads A) on the CPU emulator: CTAs are host\n"
               "threads on N emulated SM slots, running the real baton::Stage tile()/wait()/post() code.\n"
               "  1. co-scheduling on (the PDL rule): many iterations with random delays; every element is\n"
               "     checked against a reference; expected: 0 mismatches;\n"
               "  2. co-scheduling off, consumer-first scheduler: expected: a deadlock, detected and reported.\n"
               "\n"
               "  --slots N          emulated SM slots (CTAs running at once), 1..64      [4]\n"
               "  --iterations N     chain iterations in part 1, 1..1000000              [300]\n"
               "  --seed N           seed of the random delays                           [1]\n"
               "  --max-delay-us N   random delay bound inside each CTA, 0..100000       [20]\n"
               "  --deadlock-ms N    no-progress time that counts as a deadlock, 1..60000 [200]\n"
               "  --help             this text\n"
               "Exit status: 0 as expected, 1 not as expected, 2 bad arguments.\n");
}

bool parse_u64(const char* s, uint64_t lo, uint64_t hi, uint64_t& out) {
  if (s == nullptr || *s == '\0' || *s == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

// Returns 0 to run, 1 for --help, 2 on errors.
int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return 1;
    auto value = [&](uint64_t lo, uint64_t hi, uint64_t& out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "emu_demo: %s needs a value\n", a.c_str());
        return false;
      }
      if (!parse_u64(argv[++i], lo, hi, out)) {
        std::fprintf(stderr, "emu_demo: %s: '%s' is not an integer in [%llu, %llu]\n", a.c_str(), argv[i],
                     (unsigned long long)lo, (unsigned long long)hi);
        return false;
      }
      return true;
    };
    uint64_t v = 0;
    if (a == "--slots") {
      if (!value(1, 64, v)) return 2;
      o.slots = int(v);
    } else if (a == "--iterations") {
      if (!value(1, 1000000, v)) return 2;
      o.iterations = int(v);
    } else if (a == "--seed") {
      if (!value(0, UINT64_MAX, v)) return 2;
      o.seed = v;
    } else if (a == "--max-delay-us") {
      if (!value(0, 100000, v)) return 2;
      o.max_delay_us = uint32_t(v);
    } else if (a == "--deadlock-ms") {
      if (!value(1, 60000, v)) return 2;
      o.deadlock_timeout_ms = uint32_t(v);
    } else {
      std::fprintf(stderr, "emu_demo: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  return 0;
}

struct Mat {
  int rows, cols;
  std::vector<uint32_t> v;
  Mat(int r, int c) : rows(r), cols(c), v(size_t(r) * size_t(c), 0u) {}
  uint32_t& operator()(int i, int j) { return v[size_t(i) * size_t(cols) + size_t(j)]; }
  uint32_t operator()(int i, int j) const { return v[size_t(i) * size_t(cols) + size_t(j)]; }
};

// The chain: A: a = 3 in + 7e + 1 (R x C, tiles TM x TN); B: b = transpose(a) + 2e (C x R, tiles
// TN x TM; tile (m,n) reads A's tile (n,m)); C: c = 5a + transpose(b) + e (reads A and B).
// Values depend on the epoch e, so a read that comes too early sees last epoch's data.
struct Demo {
  static constexpr int R = 32, C = 40, TM = 8, TN = 8;
  const baton::Grid P{R / TM, C / TN, 1}, Pt{C / TN, R / TM, 1};
  baton::Chain chain;
  baton::StageRef<baton::RowMajor> sa, sc;
  baton::StageRef<baton::ColumnMajor> sb;
  baton::EdgeRef<baton::TilePolicy<fp::Transpose>> e_ab, e_bc;
  baton::EdgeRef<baton::TilePolicy<fp::Identity>> e_ac;
  std::vector<unsigned char> ws;
  Mat in{R, C}, a{R, C}, b{C, R}, c{R, C};
  std::vector<emu::StageLaunch> launches;

  Demo() {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) in(i, j) = uint32_t(i * 131 + j * 7919) & 0xffffu;
    sa = chain.add_stage("A", P, baton::RowMajor{}, {.reads = {}, .writes = {"a"}});
    sb = chain.add_stage("B", Pt, baton::ColumnMajor{}, {.reads = {"a"}, .writes = {"b"}});
    sc = chain.add_stage("C", P, baton::RowMajor{}, {.reads = {"a", "b"}, .writes = {"c"}});
    e_ab = chain.add_edge(sa, sb, baton::TilePolicy<fp::Transpose>{P, {}}, baton::deps::transposed(P));
    e_ac = chain.add_edge(sa, sc, baton::TilePolicy<fp::Identity>{P, {}}, baton::deps::one_to_one(P));
    e_bc = chain.add_edge(sb, sc, baton::TilePolicy<fp::Transpose>{Pt, {}}, baton::deps::transposed(Pt));
  }

  [[nodiscard]] baton::status init(uint32_t start_epoch) {
    BATON_TRY(chain.validate());
    BATON_TRY(chain.workspace_image(start_epoch, ws));
    auto A = chain.bind(sa, ws.data(), ws.size(), baton::outs(e_ab, e_ac), baton::ins());
    auto B = chain.bind(sb, ws.data(), ws.size(), baton::outs(e_bc), baton::ins(e_ab));
    auto Cs = chain.bind(sc, ws.data(), ws.size(), baton::outs(), baton::ins(e_ac, e_bc));
    if (!A) return A.error();
    if (!B) return B.error();
    if (!Cs) return Cs.error();
    auto sA = A.value();
    auto sB = B.value();
    auto sC = Cs.value();
    launches = {
        {sa.index, int(P.size()),
         [this, sA](emu::CtaContext& cx) {
           const auto t = sA.tile();
           for (int i = t.tile.m * TM; i < (t.tile.m + 1) * TM; ++i) {
             if (i == t.tile.m * TM + TM / 2) cx.random_delay();  // a torn tile if read early
             for (int j = t.tile.n * TN; j < (t.tile.n + 1) * TN; ++j) a(i, j) = in(i, j) * 3u + t.epoch * 7u + 1u;
           }
           sA.post(t);
         }},
        {sb.index, int(Pt.size()),
         [this, sB](emu::CtaContext& cx) {
           const auto t = sB.tile();
           cx.random_delay();
           if (!sB.wait(t)) return;  // the chain was aborted
           for (int i = t.tile.m * TN; i < (t.tile.m + 1) * TN; ++i)
             for (int j = t.tile.n * TM; j < (t.tile.n + 1) * TM; ++j) b(i, j) = a(j, i) + 2u * t.epoch;
           cx.random_delay();
           sB.post(t);
         }},
        {sc.index, int(P.size()),
         [this, sC](emu::CtaContext& cx) {
           const auto t = sC.tile();
           cx.random_delay();
           if (!sC.wait(t)) return;
           for (int i = t.tile.m * TM; i < (t.tile.m + 1) * TM; ++i)
             for (int j = t.tile.n * TN; j < (t.tile.n + 1) * TN; ++j) c(i, j) = 5u * a(i, j) + b(j, i) + t.epoch;
         }},
    };
    return {};
  }

  // Elements of a, b, c that differ from the reference of epoch e.
  [[nodiscard]] int64_t mismatches(uint32_t e) const {
    int64_t bad = 0;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) {
        const uint32_t wa = in(i, j) * 3u + e * 7u + 1u;
        const uint32_t wb = wa + 2u * e;  // b(j, i)
        bad += a(i, j) != wa;
        bad += b(j, i) != wb;
        bad += c(i, j) != 5u * wa + wb + e;
      }
    return bad;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const int p = parse(argc, argv, o);
  if (p == 1) {
    usage(stdout);
    return 0;
  }
  if (p != 0) return 2;

  Demo d;
  const uint32_t start_epoch = uint32_t(0) - uint32_t(o.iterations / 2);  // wraps mid-run
  std::printf("baton CPU emulator demo\n");
  std::printf("  A 3-stage chain A -> B -> C (B transposes A's output, C reads A and B; %d + %d + %d tiles)\n",
              int(d.P.size()), int(d.Pt.size()), int(d.P.size()));
  std::printf("  runs with every CTA a host thread on %d emulated SM slots, calling the same baton::Stage\n"
              "  tile()/wait()/post() code as the GPU, with random delays (0..%u us) inside every CTA.\n",
              o.slots, o.max_delay_us);
  std::printf("  Semaphores are never reset; the run starts at epoch %u so the u32 semaphores wrap mid-run.\n\n",
              start_epoch);

  bool as_expected = true;

  // ---- 1. co-scheduling on ---------------------------------------------------------------------
  std::printf("[1/2] co-scheduling on (PDL rule: a stage's CTAs start only once every CTA of the previous\n"
              "      stage has started), %d iterations, consumer-first dispatch\n",
              o.iterations);
  {
    baton::status s = d.init(start_epoch);
    if (!s.ok()) {
      std::printf("      setup failed: %s\n", s.to_string().c_str());
      return 1;
    }
    emu::Emulator em({.sm_slots = o.slots,
                      .co_schedule = true,
                      .dispatch = emu::Dispatch::consumer_first,
                      .seed = o.seed,
                      .max_delay_us = o.max_delay_us,
                      .deadlock_timeout_ms = std::max<uint32_t>(o.deadlock_timeout_ms, 1000u + 3u * o.max_delay_us / 1000u)});
    const auto t0 = std::chrono::steady_clock::now();
    int64_t mismatches = 0, bad_iterations = 0;
    uint64_t overlapped = 0;
    int done = 0;
    for (int it = 0; it < o.iterations; ++it) {
      s = em.run_iteration(d.chain, d.ws, d.launches);
      if (!s.ok()) {
        std::printf("      iteration %d failed: %s\n", it, s.to_string().c_str());
        break;
      }
      overlapped += em.last_stats().ctas_overlapped;
      const int64_t m = d.mismatches(start_epoch + uint32_t(it));
      mismatches += m;
      bad_iterations += m != 0;
      ++done;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("      iterations: %d   CTAs run: %llu   CTAs that overlapped an earlier stage: %llu\n", done,
                (unsigned long long)em.total_ctas_run(), (unsigned long long)overlapped);
    std::printf("      mismatches: %lld (in %lld iterations)   time: %.2f s\n", (long long)mismatches,
                (long long)bad_iterations, secs);
    const bool ok = s.ok() && done == o.iterations && mismatches == 0;
    std::printf("      -> %s\n\n", ok ? "as expected: no deadlock, every element of every iteration correct"
                                       : "NOT as expected");
    as_expected = as_expected && ok;
  }

  // ---- 2. co-scheduling off ----------------------------------------------------------------------
  // Consumer-first, the slots fill with CTAs of C, then B; all of them wait (directly or not) on A.
  // With more slots than B and C have CTAs, A gets a slot and there is no deadlock.
  const int waiting_ctas = int(d.Pt.size() + d.P.size());
  const bool expect_deadlock = o.slots <= waiting_ctas;
  std::printf("[2/2] co-scheduling off, consumer-first dispatch (a scheduler that may start consumers before\n"
              "      their producers), same chain, %d slots\n",
              o.slots);
  {
    baton::status s = d.init(0);
    if (!s.ok()) {
      std::printf("      setup failed: %s\n", s.to_string().c_str());
      return 1;
    }
    emu::Emulator em({.sm_slots = o.slots,
                      .co_schedule = false,
                      .dispatch = emu::Dispatch::consumer_first,
                      .seed = o.seed,
                      .max_delay_us = o.max_delay_us,
                      .deadlock_timeout_ms = o.deadlock_timeout_ms});
    const auto t0 = std::chrono::steady_clock::now();
    s = em.run_iteration(d.chain, d.ws, d.launches);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s.code() == baton::errc::deadlock) {
      std::printf("      deadlock detected after %.2f s; the chain was aborted through its error record and\n"
                  "      every spinning wait returned false (%llu CTAs drained, %llu never started). Report:\n"
                  "        %s\n",
                  secs, (unsigned long long)em.last_stats().ctas_run,
                  (unsigned long long)em.last_stats().ctas_cancelled, s.message().c_str());
    } else if (s.ok()) {
      std::printf("      completed without deadlock in %.2f s (%lld mismatches)\n", secs, (long long)d.mismatches(0));
    } else {
      std::printf("      failed: %s\n", s.to_string().c_str());
    }
    bool ok;
    if (expect_deadlock) {
      ok = s.code() == baton::errc::deadlock;
      std::printf("      -> %s\n\n", ok ? "as expected: deadlock detected and reported, nothing hung"
                                         : "NOT as expected: a deadlock was expected");
    } else {
      ok = s.ok() && d.mismatches(0) == 0;
      std::printf("      -> %s (with %d slots every CTA of B and C fits at once, so A always gets a slot;\n"
                  "         use --slots <= %d to see the deadlock)\n\n",
                  ok ? "as expected" : "NOT as expected", o.slots, waiting_ctas);
    }
    as_expected = as_expected && ok;
  }

  std::printf("result: %s\n", as_expected ? "as expected" : "NOT as expected");
  return as_expected ? 0 : 1;
}
