// Device tests (label gpu) of the sm90 CUTLASS GEMM with baton hooks (include/baton/cutlass/):
//   * one GEMM against a CPU reference (ragged m, n, k), every tile posted once per launch;
//   * a 2-GEMM chain Y = X W1^T -> Z = Y W2^T with per-k-block waits, launched with PDL on one
//     stream, 100 iterations with poisoned outputs, fresh inputs in the first and the last;
//   * the same chain with random producer-tile delays; serial vs PDL; the watchdog draining a
//     consumer whose producer never runs; unsupported shapes rejected before launch.
// Between the fresh iterations the producer's alpha changes (powers of two), so every iteration
// has a different Y and Z that are exact multiples of a verified result: a consumer reading a
// stale or unwritten (NaN-poisoned) tile of Y shows up as a bitwise mismatch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../device_test_util.cuh"
#include "random_bf16.hpp"
#include "gemm_test_types.cuh"

using namespace baton;
using bt::gemm::Args;
using bt::gemm::bf16;
using bt::gemm::Config;
using bt::gemm::Edge;

namespace {

// ---- host reference and comparisons ----------------------------------------------------------

using bt::random_bf16;

// out[i][j] = alpha * sum_k a[i][k] * b[j][k] (a [m, k], b [n, k]), accumulated in double.
std::vector<float> reference_gemm(const std::vector<bf16>& a, const std::vector<bf16>& b, int m, int n, int k,
                                  float alpha) {
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = float(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bf[i] = float(b[i]);
  std::vector<float> out(size_t(m) * n);
  const size_t total = out.size();
  const unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < nt; ++t)
    pool.emplace_back([&, t] {
      for (size_t idx = t; idx < total; idx += nt) {
        const float* ar = &af[(idx / n) * size_t(k)];
        const float* br = &bf[(idx % n) * size_t(k)];
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) acc += double(ar[kk]) * double(br[kk]);
        out[idx] = float(double(alpha) * acc);
      }
    });
  for (auto& th : pool) th.join();
  return out;
}

std::vector<bf16> to_bf16(const std::vector<float>& v) {
  std::vector<bf16> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = bf16(v[i]);
  return o;
}

struct Error {
  double rel_frobenius = 0;  // ||got - ref||_F / ||ref||_F
  size_t nonfinite = 0;      // NaN/Inf in `got` (the poison is NaN)
};
Error compare(const std::vector<bf16>& got, const std::vector<float>& ref) {
  double num = 0, den = 0;
  Error e;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = double(float(got[i]));
    if (!std::isfinite(g)) {
      ++e.nonfinite;
      continue;
    }
    num += (g - ref[i]) * (g - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  e.rel_frobenius = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return e;
}

uint16_t bits(bf16 v) {
  uint16_t b;
  std::memcpy(&b, &v, 2);
  return b;
}

// Elements of `got` that are not exactly s * base (s a power of two: the scaling is exact).
size_t scaled_mismatches(const std::vector<bf16>& got, const std::vector<bf16>& base, float s) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += bits(got[i]) != bits(bf16(float(base[i]) * s));
  return bad;
}

// ---- fixture ------------------------------------------------------------------------------------

// Bounds every wait in these tests: a sync bug reports through the error record instead of hanging.
const BindOptions kBind{5'000'000'000ull};

// A chain of one stage without edges, its workspace and the bound stage: what the persistent and
// stream-K tests launch a GEMM on.
struct OneStage {
  Chain chain;
  bt::dev_ptr<unsigned char> wsh;
  void* ws = nullptr;
  bt::gemm::PlainStage stage{};
};

class Sm90Gemm : public bt::DeviceTest {
 protected:
  template <class T>
  void upload(T* dst, const std::vector<T>& src) {
    ASSERT_EQ(cudaSuccess, cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void poison(bf16* p, size_t n) {  // 0xFFFF is a bf16 NaN
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(p, 0xFF, n * sizeof(bf16), stream));
  }
  void* workspace(Chain& chain, bt::dev_ptr<unsigned char>& holder) {
    holder = bt::dev_alloc<unsigned char>(chain.workspace_bytes());
    EXPECT_TRUE(initialize_workspace(chain, holder.get(), chain.workspace_bytes(), stream, 0).ok());
    return holder.get();
  }
  // OneStage over `g` (tiles in Grouped{8} order), validated, initialized and bound; null after a
  // reported failure.
  std::unique_ptr<OneStage> bind_plain(const char* name, Grid g) {
    auto o = std::make_unique<OneStage>();
    auto a = o->chain.add_stage(name, g, Grouped{8});
    if (auto v = o->chain.validate(); !v.ok()) {
      ADD_FAILURE() << v.to_string();
      return nullptr;
    }
    o->ws = workspace(o->chain, o->wsh);
    auto st = o->chain.bind(a, o->ws, o->chain.workspace_bytes(), outs(), ins(), kBind);
    if (!st.ok()) {
      ADD_FAILURE() << st.error().to_string();
      return nullptr;
    }
    o->stage = st.value();
    return o;
  }
};

// ---- (a) one GEMM ------------------------------------------------------------------------------

struct GemmShape {
  const char* name;
  int m, n, k;
};

class Sm90SingleGemm : public Sm90Gemm, public ::testing::WithParamInterface<GemmShape> {};

TEST_P(Sm90SingleGemm, MatchesReferenceAndPostsEveryTile) {
  const GemmShape s = GetParam();
  const Grid g = sm90::tile_grid<Config>(s.m, s.n);
  // A chain whose second stage is never launched: the GEMM is bound as a producer, so every tile
  // also posts, and the semaphores count the posts.
  const Grid reader = sm90::tile_grid<Config>(s.m, 128);
  const footprint::GemmA fp = sm90::gemm_a_footprint<Config>(s.m, s.n);
  Chain chain;
  auto a = chain.add_stage("gemm", g, RowMajor{});
  auto r = chain.add_stage("reader", reader, RowMajor{});
  auto e = chain.add_edge(a, r, Edge{g, fp}, deps::gemm_a(fp, reader));
  BT_ASSERT_OK(chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(chain, wsh);
  auto st = chain.bind(a, ws, chain.workspace_bytes(), outs(e), ins(), kBind);
  ASSERT_TRUE(st.ok()) << st.error().to_string();

  const auto x = random_bf16(size_t(s.m) * s.k, 1, 1.f);
  const auto w = random_bf16(size_t(s.n) * s.k, 2, 1.f / std::sqrt(float(s.k)));
  auto dx = bt::dev_alloc<bf16>(x.size()), dw = bt::dev_alloc<bf16>(w.size()), dd = bt::dev_alloc<bf16>(size_t(s.m) * s.n);
  upload(dx.get(), x);
  upload(dw.get(), w);
  const auto ref = reference_gemm(x, w, s.m, s.n, s.k, 1.f);

  std::vector<bf16> first;
  const float alphas[2] = {1.f, -2.f};
  for (int launch = 0; launch < 2; ++launch) {  // epochs 0 and 1
    poison(dd.get(), size_t(s.m) * s.n);
    Args args{s.m, s.n, s.k, dx.get(), dw.get(), dd.get()};
    args.fusion.alpha = alphas[launch];
    auto l = bt::gemm::producer_launch(st.value(), args);
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    BT_ASSERT_OK(launch_stage(l.value(), stream));
    auto got = download(dd.get(), size_t(s.m) * s.n);
    BT_CUDA(cudaGetLastError());
    if (launch == 0) {
      const Error err = compare(got, ref);
      EXPECT_EQ(err.nonfinite, 0u) << "tiles left unwritten (NaN poison)";
      EXPECT_LT(err.rel_frobenius, 1e-2) << s.name;
      std::printf("[ gemm ] %s m=%d n=%d k=%d: rel Frobenius error %.2e\n", s.name, s.m, s.n, s.k, err.rel_frobenius);
      first = got;
    } else {
      EXPECT_EQ(scaled_mismatches(got, first, alphas[1]), 0u) << "alpha=-2 is not exactly -2x the alpha=1 result";
    }
  }
  BT_ASSERT_OK(check_errors(chain, ws, stream));
  {  // a stage with edges takes a ticket per tile (its epoch): no persistent loop
    Args bad{s.m, s.n, s.k, dx.get(), dw.get(), dd.get()};
    bad.persistent_ctas = 4;
    auto l = bt::gemm::producer_launch(st.value(), bad);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message().find("persistent CTAs"), std::string::npos) << l.error().to_string();
  }
  // Every tile posted exactly once per launch; every CTA took exactly one ticket.
  std::vector<uint32_t> sems(size_t(g.size()));
  BT_CUDA(cudaMemcpy(sems.data(), static_cast<unsigned char*>(ws) + chain.semaphore_offset(e.index), sems.size() * 4,
                     cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (uint32_t v : sems) wrong += v != 2u;
  EXPECT_EQ(wrong, 0u) << "semaphores that did not receive exactly one post per launch";
  uint64_t ticket = 0;
  BT_CUDA(cudaMemcpy(&ticket, static_cast<unsigned char*>(ws) + chain.ticket_offset(a.index), 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(ticket, uint64_t(2 * g.size()));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Sm90SingleGemm,
                         ::testing::Values(GemmShape{"m1", 1, 256, 512}, GemmShape{"m17_ragged_nk", 17, 136, 520},
                                           GemmShape{"m200_one_kblock", 200, 384, 64},
                                           GemmShape{"m1000_ragged", 1000, 392, 136},
                                           // ragged last bands: A's box shortened to 8 / 64 rows for them
                                           GemmShape{"m129_tail_box8", 129, 256, 520},
                                           GemmShape{"m300_tail_box64", 300, 392, 136},
                                           GemmShape{"m384_k2048", 384, 1024, 2048}),
                         [](const auto& info) { return std::string(info.param.name); });


// Persistent CTAs (GemmArguments::persistent_ctas) on a stage without edges: fewer CTAs than tiles,
// each looping over the stage's order, must write exactly what one CTA per tile writes (same tiles,
// same k order, so bit for bit), for 1, 7 and 132 CTAs, ragged and decode bands (shortened A boxes,
// an idle MMA half), and the SwiGLU pair epilogue; and they are refused under split-K (a stage with
// edges refuses them too: Sm90SingleGemm).
TEST_F(Sm90Gemm, PersistentCtasMatchOneCtaPerTile) {
  using bt::gemm::PlainStage;
  for (const GemmShape s : {GemmShape{"m300_tail_box64", 300, 392, 136}, GemmShape{"m1000_ragged", 1000, 392, 136},
                            GemmShape{"m17_decode", 17, 520, 344}, GemmShape{"m384_k2048", 384, 1024, 2048}}) {
    const Grid g = sm90::tile_grid<Config>(s.m, s.n);
    auto one = bind_plain("gemm", g);
    ASSERT_TRUE(one);
    const auto x = random_bf16(size_t(s.m) * s.k, 31, 1.f);
    const auto w = random_bf16(size_t(s.n) * s.k, 32, 1.f / std::sqrt(float(s.k)));
    auto dx = bt::dev_alloc<bf16>(x.size()), dw = bt::dev_alloc<bf16>(w.size()), dd = bt::dev_alloc<bf16>(size_t(s.m) * s.n);
    upload(dx.get(), x);
    upload(dw.get(), w);
    std::vector<bf16> one_per_tile;
    for (int ctas : {0, 1, 7, 132}) {
      poison(dd.get(), size_t(s.m) * s.n);
      Args args{s.m, s.n, s.k, dx.get(), dw.get(), dd.get()};
      args.persistent_ctas = ctas;
      auto l = bt::gemm::plain_launch(one->stage, args);
      ASSERT_TRUE(l.ok()) << l.error().to_string();
      EXPECT_EQ(l.value().loops_over_tiles, ctas > 0);
      if (ctas > 0) EXPECT_EQ(int64_t(l.value().grid.x), std::min<int64_t>(ctas, g.size()));
      BT_ASSERT_OK(launch_chain(one->chain, stream, {l.value()}));
      auto got = download(dd.get(), size_t(s.m) * s.n);
      BT_CUDA(cudaGetLastError());
      if (ctas == 0) {
        const Error err = compare(got, reference_gemm(x, w, s.m, s.n, s.k, 1.f));
        EXPECT_EQ(err.nonfinite, 0u) << s.name;
        EXPECT_LT(err.rel_frobenius, 1e-2) << s.name;
        one_per_tile = got;
      } else {
        EXPECT_EQ(scaled_mismatches(got, one_per_tile, 1.f), 0u) << s.name << " with " << ctas << " persistent CTAs";
      }
    }
    BT_ASSERT_OK(check_errors(one->chain, one->ws, stream));
  }
  // SwiGLU pairs (D written from registers, tile by tile).
  {
    const int m = 200, f = 344, k = 520;
    const Grid g = sm90::tile_grid<bt::gemm::SwiConfig>(m, 2 * f);
    auto one = bind_plain("gate_up", g);
    ASSERT_TRUE(one);
    const auto x = random_bf16(size_t(m) * k, 33, 1.f);
    const auto w1 = random_bf16(size_t(2 * f) * k, 34, 1.f / std::sqrt(float(k)));
    auto dx = bt::dev_alloc<bf16>(x.size()), dw = bt::dev_alloc<bf16>(w1.size()), dh = bt::dev_alloc<bf16>(size_t(m) * f);
    upload(dx.get(), x);
    upload(dw.get(), w1);
    std::vector<bf16> one_per_tile;
    for (int ctas : {0, 5}) {
      poison(dh.get(), size_t(m) * f);
      bt::gemm::SwiArgs args{m, 2 * f, k, dx.get(), dw.get(), dh.get()};
      args.persistent_ctas = ctas;
      auto l = bt::gemm::swiglu_plain_launch(one->stage, args);
      ASSERT_TRUE(l.ok()) << l.error().to_string();
      BT_ASSERT_OK(launch_chain(one->chain, stream, {l.value()}));
      auto got = download(dh.get(), size_t(m) * f);
      if (ctas == 0) {
        size_t nonfinite = 0;
        for (bf16 v : got) nonfinite += !std::isfinite(float(v));
        EXPECT_EQ(nonfinite, 0u) << "SwiGLU tiles left unwritten";
        one_per_tile = got;
      } else {
        EXPECT_EQ(scaled_mismatches(got, one_per_tile, 1.f), 0u) << "SwiGLU with 5 persistent CTAs";
      }
    }
  }
  // Refused: split-K.
  {
    const int m = 64, n = 256, k = 512;
    const Grid g = sm90::tile_grid<Config>(m, n);
    auto one = bind_plain("gemm", g);
    ASSERT_TRUE(one);
    auto dx = bt::dev_alloc<bf16>(size_t(m) * k), dw = bt::dev_alloc<bf16>(size_t(n) * k), dd = bt::dev_alloc<bf16>(size_t(m) * n);
    Args args{m, n, k, dx.get(), dw.get(), dd.get()};
    args.persistent_ctas = 4;
    args.split_k = 2;
    auto ws2 = bt::dev_alloc<unsigned char>(sm90::Gemm<Config, PlainStage>::split_workspace_bytes(args));
    args.split_workspace = ws2.get();
    auto l = bt::gemm::plain_launch(one->stage, args);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message().find("persistent CTAs"), std::string::npos) << l.error().to_string();
  }
}
// Stream-K (GemmArguments::stream_k): the persistent CTAs share every tile's k-blocks evenly
// (baton/stream_k.hpp), one CTA per row band in each group (lanes; one lane with a single CTA), the
// last of a tile's CTAs to arrive adds the parts and stores it. Against the reference for 1, 7, 37
// and 132 CTAs and more CTAs than tiles (capped at tiles x k-blocks),
// ragged and decode bands; a second run is bit-identical (the parts are added in a fixed order and
// the counters return to zero); SwiGLU pairs; refused without persistent CTAs, with split-K and
// without a workspace.
TEST_F(Sm90Gemm, StreamKMatchesReference) {
  using bt::gemm::PlainStage;
  using G = sm90::Gemm<Config, PlainStage>;
  for (const GemmShape s : {GemmShape{"m300_tail_box64", 300, 392, 136}, GemmShape{"m1000_ragged", 1000, 392, 136},
                            GemmShape{"m17_decode", 17, 520, 344}, GemmShape{"m384_k2048", 384, 1024, 2048},
                            GemmShape{"m129_tail_box8", 129, 256, 520}}) {
    const Grid g = sm90::tile_grid<Config>(s.m, s.n);
    const int k_blocks = (s.k + Config::tile_k - 1) / Config::tile_k;
    auto one = bind_plain("gemm", g);
    ASSERT_TRUE(one);
    const auto x = random_bf16(size_t(s.m) * s.k, 41, 1.f);
    const auto w = random_bf16(size_t(s.n) * s.k, 42, 1.f / std::sqrt(float(s.k)));
    auto dx = bt::dev_alloc<bf16>(x.size()), dw = bt::dev_alloc<bf16>(w.size()), dd = bt::dev_alloc<bf16>(size_t(s.m) * s.n);
    upload(dx.get(), x);
    upload(dw.get(), w);
    const auto ref = reference_gemm(x, w, s.m, s.n, s.k, 1.f);
    for (int ctas : {1, 7, 37, 132, 100000}) {
      Args args{s.m, s.n, s.k, dx.get(), dw.get(), dd.get()};
      args.persistent_ctas = ctas;
      args.stream_k = true;
      // Lanes: one CTA per row band in each group when the bands fit (all but 1 CTA here), whole
      // groups, each group at least one k-block of a column block.
      const int64_t lanes = g.m <= ctas ? g.m : 1;
      const int64_t want_ctas = std::min<int64_t>(ctas / lanes, int64_t(g.n) * k_blocks) * lanes;
      EXPECT_EQ(sm90::stream_k_lanes(args), int(lanes));
      EXPECT_EQ(sm90::stream_k_ctas(args), want_ctas);
      auto sk_ws = bt::dev_alloc<unsigned char>(G::split_workspace_bytes(args));
      args.split_workspace = sk_ws.get();
      BT_ASSERT_OK(G::clear_split_workspace(args, stream));
      std::vector<bf16> first;
      for (int run = 0; run < 2; ++run) {
        poison(dd.get(), size_t(s.m) * s.n);
        auto l = bt::gemm::plain_launch(one->stage, args);
        ASSERT_TRUE(l.ok()) << l.error().to_string();
        EXPECT_TRUE(l.value().loops_over_tiles);
        EXPECT_EQ(int64_t(l.value().grid.x), want_ctas);
        BT_ASSERT_OK(launch_chain(one->chain, stream, {l.value()}));
        auto got = download(dd.get(), size_t(s.m) * s.n);
        BT_CUDA(cudaGetLastError());
        if (run == 0) {
          const Error err = compare(got, ref);
          EXPECT_EQ(err.nonfinite, 0u) << s.name << " with " << ctas << " stream-K CTAs";
          EXPECT_LT(err.rel_frobenius, 1e-2) << s.name << " with " << ctas << " stream-K CTAs";
          first = got;
        } else {
          EXPECT_EQ(scaled_mismatches(got, first, 1.f), 0u) << s.name << " with " << ctas
                                                            << " stream-K CTAs: the second run differs";
        }
      }
    }
    BT_ASSERT_OK(check_errors(one->chain, one->ws, stream));
  }
  // SwiGLU pairs: the parts are added before the pair epilogue.
  {
    const int m = 200, f = 344, k = 520;
    const Grid g = sm90::tile_grid<bt::gemm::SwiConfig>(m, 2 * f);
    auto one = bind_plain("gate_up", g);
    ASSERT_TRUE(one);
    const auto x = random_bf16(size_t(m) * k, 43, 1.f);
    const auto w1 = random_bf16(size_t(2 * f) * k, 44, 1.f / std::sqrt(float(k)));
    auto dx = bt::dev_alloc<bf16>(x.size()), dw = bt::dev_alloc<bf16>(w1.size()), dh = bt::dev_alloc<bf16>(size_t(m) * f);
    upload(dx.get(), x);
    upload(dw.get(), w1);
    std::vector<float> one_per_tile;
    for (int ctas : {0, 5, 132}) {
      poison(dh.get(), size_t(m) * f);
      bt::gemm::SwiArgs args{m, 2 * f, k, dx.get(), dw.get(), dh.get()};
      args.persistent_ctas = ctas;
      args.stream_k = ctas > 0;
      bt::dev_ptr<unsigned char> sk_ws;
      if (ctas > 0) {
        sk_ws = bt::dev_alloc<unsigned char>(sm90::Gemm<bt::gemm::SwiConfig, PlainStage>::split_workspace_bytes(args));
        args.split_workspace = sk_ws.get();
        BT_ASSERT_OK((sm90::Gemm<bt::gemm::SwiConfig, PlainStage>::clear_split_workspace(args, stream)));
      }
      auto l = bt::gemm::swiglu_plain_launch(one->stage, args);
      ASSERT_TRUE(l.ok()) << l.error().to_string();
      BT_ASSERT_OK(launch_chain(one->chain, stream, {l.value()}));
      auto got = download(dh.get(), size_t(m) * f);
      if (ctas == 0) {
        for (bf16 v : got) one_per_tile.push_back(float(v));
      } else {
        const Error err = compare(got, one_per_tile);
        EXPECT_EQ(err.nonfinite, 0u) << "SwiGLU with " << ctas << " stream-K CTAs";
        EXPECT_LT(err.rel_frobenius, 1e-2) << "SwiGLU with " << ctas << " stream-K CTAs";
      }
    }
  }
  // Refused: without persistent CTAs, with split-K, without a workspace.
  {
    const int m = 64, n = 256, k = 512;
    const Grid g = sm90::tile_grid<Config>(m, n);
    auto one = bind_plain("gemm", g);
    ASSERT_TRUE(one);
    auto dx = bt::dev_alloc<bf16>(size_t(m) * k), dw = bt::dev_alloc<bf16>(size_t(n) * k), dd = bt::dev_alloc<bf16>(size_t(m) * n);
    auto big = bt::dev_alloc<unsigned char>(1 << 22);
    Args args{m, n, k, dx.get(), dw.get(), dd.get()};
    args.stream_k = true;
    args.split_workspace = big.get();
    auto l = bt::gemm::plain_launch(one->stage, args);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message().find("persistent_ctas > 0"), std::string::npos) << l.error().to_string();
    args.persistent_ctas = 8;
    args.split_k = 2;
    l = bt::gemm::plain_launch(one->stage, args);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message().find("split_k = 1"), std::string::npos) << l.error().to_string();
    args.split_k = 1;
    args.split_workspace = nullptr;
    l = bt::gemm::plain_launch(one->stage, args);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message().find("stream_k needs a 16-byte aligned split_workspace"), std::string::npos)
        << l.error().to_string();
  }
}
// ---- (b) two chained GEMMs ---------------------------------------------------------------------

struct ChainShape {
  const char* name;
  int m, n1, k1, n2;  // Y[m, n1] = X[m, k1] W1[n1, k1]^T;  Z[m, n2] = Y W2[n2, n1]^T
};

struct TwoGemms {
  ChainShape s;
  Grid g1, g2;
  footprint::GemmA fp;
  Chain chain;
  StageRef<RowMajor> a, b;
  EdgeRef<Edge> e;
  // per_k_block = false: the same policy type waiting for all of a consumer tile's producer
  // tiles before k-block 0 (per-tile waits, which split-K parts past k-block 0 must also make).
  explicit TwoGemms(ChainShape shape, bool per_k_block = true) : s(shape) {
    g1 = sm90::tile_grid<Config>(s.m, s.n1);
    g2 = sm90::tile_grid<Config>(s.m, s.n2);
    fp = sm90::gemm_a_footprint<Config>(s.m, s.n1);
    a = chain.add_stage("gemm1", g1, RowMajor{}, {.reads = {"X", "W1"}, .writes = {"Y"}});
    b = chain.add_stage("gemm2", g2, RowMajor{}, {.reads = {"Y", "W2"}, .writes = {"Z"}});
    Edge policy{g1, fp};
    policy.per_k_block = per_k_block;
    e = chain.add_edge(a, b, policy, deps::gemm_a(fp, g2));
  }
};

struct ChainRun {
  int iterations = 100;
  uint32_t producer_delay_ns = 0;
  LaunchSchedule sched = LaunchSchedule::pdl;
  int split1 = 1, split2 = 1;  // split-K parts of GEMM1 and GEMM2
  bool per_k_block = true;
};

class Sm90GemmChains : public Sm90Gemm {
 protected:
  // Runs `run.iterations` chain iterations; returns Z of the last one.
  std::vector<bf16> run_chain(const ChainShape& shape, const ChainRun& run) {
    TwoGemms t(shape, run.per_k_block);
    const ChainShape& s = t.s;
    std::vector<bf16> z_last;
    status v = t.chain.validate();
    EXPECT_TRUE(v.ok()) << v.to_string();
    if (!v.ok()) return z_last;
    bt::dev_ptr<unsigned char> wsh;
    void* ws = workspace(t.chain, wsh);
    const size_t wb = t.chain.workspace_bytes();
    auto sa = t.chain.bind(t.a, ws, wb, outs(t.e), ins(), kBind);
    auto sb = t.chain.bind(t.b, ws, wb, outs(), ins(t.e), kBind);
    EXPECT_TRUE(sa.ok() && sb.ok()) << sa.error().to_string() << sb.error().to_string();
    if (!sa.ok() || !sb.ok()) return z_last;

    const size_t nx = size_t(s.m) * s.k1, ny = size_t(s.m) * s.n1, nz = size_t(s.m) * s.n2;
    auto dx = bt::dev_alloc<bf16>(nx), dw1 = bt::dev_alloc<bf16>(size_t(s.n1) * s.k1), dy = bt::dev_alloc<bf16>(ny);
    auto dw2 = bt::dev_alloc<bf16>(size_t(s.n2) * s.n1), dz = bt::dev_alloc<bf16>(nz);
    const auto w1 = random_bf16(size_t(s.n1) * s.k1, 11, 1.f / std::sqrt(float(s.k1)));
    const auto w2 = random_bf16(size_t(s.n2) * s.n1, 12, 1.f / std::sqrt(float(s.n1)));
    upload(dw1.get(), w1);
    upload(dw2.get(), w2);
    // Split-K workspaces, zeroed once: the counters must return to zero after every run.
    Args split_shape1{s.m, s.n1, s.k1, dx.get(), dw1.get(), dy.get()}, split_shape2{s.m, s.n2, s.n1, dy.get(), dw2.get(), dz.get()};
    split_shape1.split_k = run.split1;
    split_shape2.split_k = run.split2;
    const size_t sw1 = sm90::split_workspace_bytes(split_shape1), sw2 = sm90::split_workspace_bytes(split_shape2);
    auto dsw1 = bt::dev_alloc<unsigned char>(std::max<size_t>(sw1, 16)), dsw2 = bt::dev_alloc<unsigned char>(std::max<size_t>(sw2, 16));
    EXPECT_EQ(cudaSuccess, cudaMemsetAsync(dsw1.get(), 0, std::max<size_t>(sw1, 16), stream));
    EXPECT_EQ(cudaSuccess, cudaMemsetAsync(dsw2.get(), 0, std::max<size_t>(sw2, 16), stream));

    // alpha of the producer between fresh iterations: powers of two, never the previous value.
    const float scales[8] = {2.f, -1.f, 0.5f, -4.f, 0.25f, -0.5f, 4.f, -2.f};
    std::vector<bf16> y0, z0;
    size_t bad_iterations = 0;
    for (int it = 0; it < run.iterations; ++it) {
      const bool fresh = it == 0 || it == run.iterations - 1;
      std::vector<bf16> x;
      if (fresh) {
        x = random_bf16(nx, 100 + uint64_t(it), 1.f);
        upload(dx.get(), x);
      }
      const float alpha = fresh ? 1.f : scales[it % 8];
      poison(dy.get(), ny);
      poison(dz.get(), nz);
      Args a1{s.m, s.n1, s.k1, dx.get(), dw1.get(), dy.get()};
      a1.fusion.alpha = alpha;
      a1.debug_max_tile_delay_ns = run.producer_delay_ns;
      a1.split_k = run.split1;
      a1.split_workspace = dsw1.get();
      Args a2{s.m, s.n2, s.n1, dy.get(), dw2.get(), dz.get()};
      a2.split_k = run.split2;
      a2.split_workspace = dsw2.get();
      auto l1 = bt::gemm::producer_launch(sa.value(), a1);
      auto l2 = bt::gemm::consumer_launch(sb.value(), a2);
      EXPECT_TRUE(l1.ok() && l2.ok()) << l1.error().to_string() << l2.error().to_string();
      if (!l1.ok() || !l2.ok()) return z_last;
      status ls = launch_chain(t.chain, stream, {l1.value(), l2.value()}, run.sched);
      EXPECT_TRUE(ls.ok()) << ls.to_string();
      if (!ls.ok()) return z_last;
      auto y = download(dy.get(), ny);
      auto z = download(dz.get(), nz);
      EXPECT_EQ(cudaSuccess, cudaGetLastError());
      if (fresh) {
        const auto y_ref = reference_gemm(x, w1, s.m, s.n1, s.k1, 1.f);
        const auto z_ref = reference_gemm(to_bf16(y_ref), w2, s.m, s.n2, s.n1, 1.f);
        const Error ey = compare(y, y_ref), ez = compare(z, z_ref);
        EXPECT_EQ(ey.nonfinite, 0u) << s.name << " iteration " << it << ": Y tiles left unwritten";
        EXPECT_EQ(ez.nonfinite, 0u) << s.name << " iteration " << it << ": Z has NaN (read an unwritten Y tile?)";
        EXPECT_LT(ey.rel_frobenius, 1e-2) << s.name << " iteration " << it << " (Y)";
        EXPECT_LT(ez.rel_frobenius, 1e-2) << s.name << " iteration " << it << " (Z)";
        std::printf("[ chain ] %s iteration %d: rel Frobenius error Y %.2e, Z %.2e\n", s.name, it, ey.rel_frobenius,
                    ez.rel_frobenius);
        y0 = y;
        z0 = z;
      } else {
        const size_t by = scaled_mismatches(y, y0, alpha), bz = scaled_mismatches(z, z0, alpha);
        if (by != 0 || bz != 0) {
          if (bad_iterations < 5)
            ADD_FAILURE() << s.name << " iteration " << it << " (alpha " << alpha << "): " << by << " Y and " << bz
                          << " Z elements differ from alpha x the verified result (rel Frobenius "
                          << compare(z, [&] {
                               std::vector<float> r(z0.size());
                               for (size_t i = 0; i < r.size(); ++i) r[i] = float(z0[i]) * alpha;
                               return r;
                             }()).rel_frobenius
                          << "): a consumer read a stale or unwritten tile";
          ++bad_iterations;
        }
      }
      z_last = std::move(z);
    }
    EXPECT_EQ(bad_iterations, 0u) << s.name << ": iterations with wrong results";
    status es = check_errors(t.chain, ws, stream);
    EXPECT_TRUE(es.ok()) << es.to_string();
    uint64_t tickets[2] = {0, 0};
    EXPECT_EQ(cudaSuccess, cudaMemcpy(&tickets[0], static_cast<unsigned char*>(ws) + t.chain.ticket_offset(0), 8,
                                      cudaMemcpyDeviceToHost));
    EXPECT_EQ(cudaSuccess, cudaMemcpy(&tickets[1], static_cast<unsigned char*>(ws) + t.chain.ticket_offset(1), 8,
                                      cudaMemcpyDeviceToHost));
    EXPECT_EQ(tickets[0], uint64_t(run.iterations) * uint64_t(t.g1.size()) * uint64_t(run.split1));
    EXPECT_EQ(tickets[1], uint64_t(run.iterations) * uint64_t(t.g2.size()) * uint64_t(run.split2));
    // Every split-K counter is back at zero (the last part of each tile reset it).
    for (auto [ptr, bytes, tiles] : {std::tuple{dsw1.get(), sw1, t.g1.size()}, std::tuple{dsw2.get(), sw2, t.g2.size()}}) {
      if (bytes == 0) continue;
      std::vector<uint32_t> counters(static_cast<size_t>(tiles));
      EXPECT_EQ(cudaSuccess, cudaMemcpy(counters.data(), ptr, counters.size() * 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(size_t(std::count(counters.begin(), counters.end(), 0u)), counters.size())
          << s.name << ": split-K counters not reset";
    }
    return z_last;
  }
};

// wide: 128 producer tiles (one wave), 32 k-blocks per consumer tile; ragged: every extent ragged
// (k-blocks straddle producer tiles, partial last tiles); decode: m = 1; two_waves: 256 producer
// tiles on 132 SMs, so consumers start while the second producer wave still runs.
const ChainShape kWide{"wide", 1024, 2048, 256, 512};
const ChainShape kRagged{"ragged", 200, 392, 136, 264};
const ChainShape kDecode{"decode_m1", 1, 1024, 512, 256};
const ChainShape kTwoWaves{"two_waves", 2048, 2048, 128, 256};

class Sm90GemmChain : public Sm90GemmChains, public ::testing::WithParamInterface<ChainShape> {};

TEST_P(Sm90GemmChain, KBlockWaits100Iterations) {
  (void)run_chain(GetParam(), ChainRun{bt::scaled(100), 0, LaunchSchedule::pdl});
}

INSTANTIATE_TEST_SUITE_P(Shapes, Sm90GemmChain, ::testing::Values(kWide, kRagged, kDecode, kTwoWaves),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- (b2) split-K -------------------------------------------------------------------------------

// Split-K on either side of the edge: the producer's parts reduce in the last CTA to arrive, which
// alone publishes the tile; the consumer's parts past k-block 0 wait only for their own k-blocks
// (per-k-block policy) or also for the waits of k-block 0 (per-tile policy). Parts of uneven
// length (k-blocks not divisible by the split), m = 1 and m = 17 (short A boxes of 8 and 32 rows).
struct SplitCase {
  const char* name;
  ChainShape shape;
  int split1, split2;
  bool per_k_block;
};
class Sm90GemmSplitK : public Sm90GemmChains, public ::testing::WithParamInterface<SplitCase> {
 protected:
  void run_case(uint32_t producer_delay_ns) {
    const SplitCase c = GetParam();
    ChainRun run{bt::scaled(100), producer_delay_ns, LaunchSchedule::pdl};
    run.split1 = c.split1;
    run.split2 = c.split2;
    run.per_k_block = c.per_k_block;
    (void)run_chain(c.shape, run);
  }
};

TEST_P(Sm90GemmSplitK, MatchesReferenceOver100Iterations) { run_case(0); }
TEST_P(Sm90GemmSplitK, RandomProducerDelays) { run_case(20000); }

INSTANTIATE_TEST_SUITE_P(
    Cases, Sm90GemmSplitK,
    ::testing::Values(SplitCase{"decode_m1_kblock", {"decode_m1", 1, 1024, 512, 256}, 4, 3, true},
                      SplitCase{"decode_m1_tile", {"decode_m1", 1, 1024, 512, 256}, 3, 5, false},
                      SplitCase{"m17_kblock", {"m17", 17, 768, 1536, 512}, 5, 2, true},
                      SplitCase{"ragged_kblock", {"ragged", 200, 392, 136, 264}, 2, 3, true},
                      SplitCase{"ragged_tile", {"ragged", 200, 392, 136, 264}, 3, 2, false},
                      SplitCase{"m64_producer_only", {"m64", 64, 512, 2048, 384}, 8, 1, true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(Sm90Gemm, SplitKRejectsBadArguments) {
  TwoGemms t(ChainShape{"small", 256, 256, 256, 256});
  BT_ASSERT_OK(t.chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(t.chain, wsh);
  auto sa = t.chain.bind(t.a, ws, t.chain.workspace_bytes(), outs(t.e), ins());
  ASSERT_TRUE(sa.ok());
  auto buf = bt::dev_alloc<bf16>(1 << 20);
  bf16* p = buf.get();
  Args no_ws{256, 256, 256, p, p, p};
  no_ws.split_k = 2;
  auto r = bt::gemm::producer_launch(sa.value(), no_ws);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("split_workspace"), std::string::npos) << r.error().message();
  Args too_many{256, 256, 256, p, p, p};
  too_many.split_k = 5;  // 4 k-blocks
  too_many.split_workspace = p;
  r = bt::gemm::producer_launch(sa.value(), too_many);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("split_k=5 must be in [1, 4]"), std::string::npos) << r.error().message();
  // The launch carries the CTA count: tiles x parts.
  Args ok{256, 256, 256, p, p, p};
  ok.split_k = 3;
  ok.split_workspace = p;
  r = bt::gemm::producer_launch(sa.value(), ok);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().grid.x, unsigned(3 * t.g1.size()));
  EXPECT_EQ(r.value().ctas_per_tile, 3);
}

// ---- (b3) SwiGLU producer -------------------------------------------------------------------------

// H = SiLU(X Wg^T) * (X Wu^T) from one GEMM over interleaved weights, then Z = H W2^T with
// per-k-block waits; with and without split-K on the SwiGLU GEMM; ragged F (not a multiple of 64).
struct SwiCase {
  const char* name;
  int m, f, k, n2, split1;
};
class Sm90SwiGlu : public Sm90Gemm, public ::testing::WithParamInterface<SwiCase> {};

TEST_P(Sm90SwiGlu, ChainMatchesReference) {
  const SwiCase c = GetParam();
  using bt::gemm::SwiArgs;
  using bt::gemm::SwiConfig;
  const Grid g1 = sm90::tile_grid<SwiConfig>(c.m, 2 * c.f), g2 = sm90::tile_grid<Config>(c.m, c.n2);
  const footprint::GemmA fp = sm90::gemm_a_footprint<SwiConfig, Config>(c.m, c.f);
  Chain chain;
  auto a = chain.add_stage("gate_up", g1, RowMajor{}, {.reads = {"X", "Wgu"}, .writes = {"H"}});
  auto b = chain.add_stage("down", g2, RowMajor{}, {.reads = {"H", "W2"}, .writes = {"Z"}});
  auto e = chain.add_edge(a, b, Edge{g1, fp}, deps::gemm_a(fp, g2));
  BT_ASSERT_OK(chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(chain, wsh);
  auto sa = chain.bind(a, ws, chain.workspace_bytes(), outs(e), ins(), kBind);
  auto sb = chain.bind(b, ws, chain.workspace_bytes(), outs(), ins(e), kBind);
  ASSERT_TRUE(sa.ok() && sb.ok());

  const auto x = random_bf16(size_t(c.m) * c.k, 21, 1.f);
  const auto wg = random_bf16(size_t(c.f) * c.k, 22, 1.f / std::sqrt(float(c.k)));
  const auto wu = random_bf16(size_t(c.f) * c.k, 23, 1.f / std::sqrt(float(c.k)));
  const auto w2 = random_bf16(size_t(c.n2) * c.f, 24, 1.f / std::sqrt(float(c.f)));
  auto dx = bt::dev_alloc<bf16>(x.size()), dwg = bt::dev_alloc<bf16>(wg.size()), dwu = bt::dev_alloc<bf16>(wu.size());
  auto dw1 = bt::dev_alloc<bf16>(2 * wg.size()), dw2 = bt::dev_alloc<bf16>(w2.size());
  auto dh = bt::dev_alloc<bf16>(size_t(c.m) * c.f), dz = bt::dev_alloc<bf16>(size_t(c.m) * c.n2);
  upload(dx.get(), x);
  upload(dwg.get(), wg);
  upload(dwu.get(), wu);
  upload(dw2.get(), w2);
  BT_ASSERT_OK(sm90::pack_swiglu_weights(dwg.get(), dwu.get(), dw1.get(), c.f, c.k, stream));

  SwiArgs a1{c.m, 2 * c.f, c.k, dx.get(), dw1.get(), dh.get()};
  a1.split_k = c.split1;
  const size_t swb = sm90::split_workspace_bytes(a1);
  auto dsw = bt::dev_alloc<unsigned char>(std::max<size_t>(swb, 16));
  BT_CUDA(cudaMemsetAsync(dsw.get(), 0, std::max<size_t>(swb, 16), stream));
  a1.split_workspace = dsw.get();
  const Args a2{c.m, c.n2, c.f, dh.get(), dw2.get(), dz.get()};
  auto l1 = bt::gemm::swiglu_producer_launch(sa.value(), a1);
  auto l2 = bt::gemm::consumer_launch(sb.value(), a2);
  ASSERT_TRUE(l1.ok() && l2.ok()) << (l1.ok() ? "" : l1.error().to_string()) << (l2.ok() ? "" : l2.error().to_string());

  const auto g_ref = reference_gemm(x, wg, c.m, c.f, c.k, 1.f), u_ref = reference_gemm(x, wu, c.m, c.f, c.k, 1.f);
  std::vector<float> h_ref(g_ref.size());
  for (size_t i = 0; i < h_ref.size(); ++i) h_ref[i] = g_ref[i] / (1.f + std::exp(-g_ref[i])) * u_ref[i];
  const auto z_ref = reference_gemm(to_bf16(h_ref), w2, c.m, c.n2, c.f, 1.f);
  for (int it = 0; it < 20; ++it) {
    poison(dh.get(), size_t(c.m) * c.f);
    poison(dz.get(), size_t(c.m) * c.n2);
    BT_ASSERT_OK(launch_chain(chain, stream, {l1.value(), l2.value()}));
    const auto h = download(dh.get(), size_t(c.m) * c.f), z = download(dz.get(), size_t(c.m) * c.n2);
    const Error eh = compare(h, h_ref), ez = compare(z, z_ref);
    ASSERT_EQ(eh.nonfinite, 0u) << c.name << " iteration " << it << ": H tiles left unwritten";
    ASSERT_EQ(ez.nonfinite, 0u) << c.name << " iteration " << it << ": Z has NaN";
    ASSERT_LT(eh.rel_frobenius, 1e-2) << c.name << " iteration " << it << " (H)";
    ASSERT_LT(ez.rel_frobenius, 1e-2) << c.name << " iteration " << it << " (Z)";
    if (it == 0)
      std::printf("[ swiglu ] %s: rel Frobenius error H %.2e, Z %.2e\n", c.name, eh.rel_frobenius, ez.rel_frobenius);
  }
  BT_ASSERT_OK(check_errors(chain, ws, stream));
}

INSTANTIATE_TEST_SUITE_P(Cases, Sm90SwiGlu,
                         ::testing::Values(SwiCase{"m1_split3", 1, 344, 1024, 256, 3},
                                           SwiCase{"m200_ragged_f", 200, 344, 520, 264, 1},
                                           SwiCase{"m512_split2", 512, 512, 1024, 384, 2}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- (c) stress: random producer delays ----------------------------------------------------------

// Each producer tile starts its loads 0..20 us late (pseudo-random per tile and epoch), so the
// order in which Y's tiles land changes every iteration while consumers are already running.
TEST_F(Sm90GemmChains, RandomProducerDelays) {
  (void)run_chain(kTwoWaves, ChainRun{bt::scaled(200), 20000, LaunchSchedule::pdl});
  (void)run_chain(kRagged, ChainRun{bt::scaled(200), 20000, LaunchSchedule::pdl});
}

// Bitwise comparison of two bf16 arrays (as 16-bit patterns: NaN poison never compares equal).
__global__ void count_mismatches(const uint16_t* got, const uint16_t* want, size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += got[i] != want[i];
  if (local) atomicAdd(bad, local);
}

// The MLP issue's stress mode: 10^4 chained runs (Y = X W1^T with 2-part split-K, Z = Y W2^T with
// per-k-block waits; 256 producer tiles x 2 parts on 132 SMs, so consumers start while producer
// parts still run) with 0-10 us pseudo-random delays before every producer part's loads, Y and Z
// NaN-poisoned before each run; every Z compared bitwise on the GPU with the verified first run.
TEST_F(Sm90GemmChains, Stress10kRunsRandomDelaysSplitK) {
  const int runs = bt::scaled(10000);
  const ChainShape s = kTwoWaves;
  TwoGemms t(s);
  BT_ASSERT_OK(t.chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(t.chain, wsh);
  auto sa = t.chain.bind(t.a, ws, t.chain.workspace_bytes(), outs(t.e), ins(), kBind);
  auto sb = t.chain.bind(t.b, ws, t.chain.workspace_bytes(), outs(), ins(t.e), kBind);
  ASSERT_TRUE(sa.ok() && sb.ok());
  const size_t nx = size_t(s.m) * s.k1, ny = size_t(s.m) * s.n1, nz = size_t(s.m) * s.n2;
  const auto x = random_bf16(nx, 31, 1.f), w1 = random_bf16(size_t(s.n1) * s.k1, 32, 1.f / std::sqrt(float(s.k1)));
  const auto w2 = random_bf16(size_t(s.n2) * s.n1, 33, 1.f / std::sqrt(float(s.n1)));
  auto dx = bt::dev_alloc<bf16>(nx), dw1 = bt::dev_alloc<bf16>(w1.size()), dy = bt::dev_alloc<bf16>(ny);
  auto dw2 = bt::dev_alloc<bf16>(w2.size()), dz = bt::dev_alloc<bf16>(nz), dz0 = bt::dev_alloc<bf16>(nz);
  auto bad = bt::dev_alloc<unsigned long long>(1);
  upload(dx.get(), x);
  upload(dw1.get(), w1);
  upload(dw2.get(), w2);
  Args a1{s.m, s.n1, s.k1, dx.get(), dw1.get(), dy.get()};
  a1.split_k = 2;
  const size_t swb = sm90::split_workspace_bytes(a1);
  auto dsw = bt::dev_alloc<unsigned char>(swb);
  BT_CUDA(cudaMemsetAsync(dsw.get(), 0, swb, stream));
  a1.split_workspace = dsw.get();
  const Args a2{s.m, s.n2, s.n1, dy.get(), dw2.get(), dz.get()};
  auto quiet = bt::gemm::producer_launch(sa.value(), a1);
  a1.debug_max_tile_delay_ns = 10000;
  auto delayed = bt::gemm::producer_launch(sa.value(), a1);
  auto l2 = bt::gemm::consumer_launch(sb.value(), a2);
  ASSERT_TRUE(quiet.ok() && delayed.ok() && l2.ok());

  // The reference run (no delays), verified against the CPU.
  poison(dy.get(), ny);
  poison(dz.get(), nz);
  BT_ASSERT_OK(launch_chain(t.chain, stream, {quiet.value(), l2.value()}));
  const auto z0 = download(dz.get(), nz);
  const auto y_ref = reference_gemm(x, w1, s.m, s.n1, s.k1, 1.f);
  const Error ez = compare(z0, reference_gemm(to_bf16(y_ref), w2, s.m, s.n2, s.n1, 1.f));
  ASSERT_EQ(ez.nonfinite, 0u);
  ASSERT_LT(ez.rel_frobenius, 1e-2);
  BT_CUDA(cudaMemcpyAsync(dz0.get(), dz.get(), nz * sizeof(bf16), cudaMemcpyDeviceToDevice, stream));
  BT_CUDA(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream));

  cudaEvent_t e0, e1;
  BT_CUDA(cudaEventCreate(&e0));
  BT_CUDA(cudaEventCreate(&e1));
  BT_CUDA(cudaEventRecord(e0, stream));
  for (int r = 0; r < runs; ++r) {
    poison(dy.get(), ny);
    poison(dz.get(), nz);
    BT_ASSERT_OK(launch_chain(t.chain, stream, {delayed.value(), l2.value()}));
    count_mismatches<<<264, 256, 0, stream>>>(reinterpret_cast<const uint16_t*>(dz.get()),
                                              reinterpret_cast<const uint16_t*>(dz0.get()), nz, bad.get());
  }
  BT_CUDA(cudaEventRecord(e1, stream));
  BT_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  BT_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  unsigned long long mismatches = ~0ull;
  BT_CUDA(cudaMemcpy(&mismatches, bad.get(), sizeof mismatches, cudaMemcpyDeviceToHost));
  BT_ASSERT_OK(check_errors(t.chain, ws, stream));
  EXPECT_EQ(mismatches, 0ull) << "elements of Z that differ from the verified run, over " << runs << " runs";
  std::printf("[ stress ] %d chained runs with random producer delays (split-K 2 / per-k-block waits): %llu mismatching "
              "elements of Z, %.1f ms\n", runs, mismatches, ms);
}

// The serial schedule (no overlap) gives bit-identical results; prints both times for reference.
TEST_F(Sm90GemmChains, SerialScheduleMatchesPdl) {
  const auto pdl = run_chain(kWide, ChainRun{2, 0, LaunchSchedule::pdl});
  const auto serial = run_chain(kWide, ChainRun{2, 0, LaunchSchedule::serial});
  ASSERT_EQ(pdl.size(), serial.size());
  EXPECT_EQ(scaled_mismatches(pdl, serial, 1.f), 0u);

  // Timing (informational): one chain launch, median-free mean over 50 launches each.
  TwoGemms t(kTwoWaves);
  BT_ASSERT_OK(t.chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(t.chain, wsh);
  auto sa = t.chain.bind(t.a, ws, t.chain.workspace_bytes(), outs(t.e), ins(), kBind);
  auto sb = t.chain.bind(t.b, ws, t.chain.workspace_bytes(), outs(), ins(t.e), kBind);
  ASSERT_TRUE(sa.ok() && sb.ok());
  const ChainShape& s = t.s;
  auto dx = bt::dev_alloc<bf16>(size_t(s.m) * s.k1), dw1 = bt::dev_alloc<bf16>(size_t(s.n1) * s.k1);
  auto dy = bt::dev_alloc<bf16>(size_t(s.m) * s.n1), dw2 = bt::dev_alloc<bf16>(size_t(s.n2) * s.n1);
  auto dz = bt::dev_alloc<bf16>(size_t(s.m) * s.n2);
  BT_CUDA(cudaMemsetAsync(dx.get(), 0, size_t(s.m) * s.k1 * 2, stream));
  BT_CUDA(cudaMemsetAsync(dw1.get(), 0, size_t(s.n1) * s.k1 * 2, stream));
  BT_CUDA(cudaMemsetAsync(dw2.get(), 0, size_t(s.n2) * s.n1 * 2, stream));
  auto l1 = bt::gemm::producer_launch(sa.value(), Args{s.m, s.n1, s.k1, dx.get(), dw1.get(), dy.get()});
  auto l2 = bt::gemm::consumer_launch(sb.value(), Args{s.m, s.n2, s.n1, dy.get(), dw2.get(), dz.get()});
  ASSERT_TRUE(l1.ok() && l2.ok());
  cudaEvent_t e0, e1;
  BT_CUDA(cudaEventCreate(&e0));
  BT_CUDA(cudaEventCreate(&e1));
  for (LaunchSchedule sc : {LaunchSchedule::serial, LaunchSchedule::pdl, LaunchSchedule::serial, LaunchSchedule::pdl}) {
    for (int i = 0; i < 5; ++i) BT_ASSERT_OK(launch_chain(t.chain, stream, {l1.value(), l2.value()}, sc));  // warm-up
    BT_CUDA(cudaEventRecord(e0, stream));
    for (int i = 0; i < 50; ++i) BT_ASSERT_OK(launch_chain(t.chain, stream, {l1.value(), l2.value()}, sc));
    BT_CUDA(cudaEventRecord(e1, stream));
    BT_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BT_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("[ timing ] %s %s: %.1f us per chain\n", s.name, sc == LaunchSchedule::pdl ? "pdl   " : "serial", ms * 1000.f / 50);
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  BT_ASSERT_OK(check_errors(t.chain, ws, stream));
}

// ---- failure paths ------------------------------------------------------------------------------

// A consumer launched without its producer: the first wait's watchdog fires, every other wait
// bails out, the kernel drains its pipeline (loads without waiting) and exits; nothing hangs.
TEST_F(Sm90GemmChains, WatchdogDrainsConsumerWithoutProducer) {
  TwoGemms t(kWide);
  BT_ASSERT_OK(t.chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(t.chain, wsh);
  auto sb = t.chain.bind(t.b, ws, t.chain.workspace_bytes(), outs(), ins(t.e), BindOptions{20'000'000ull});
  ASSERT_TRUE(sb.ok());
  const ChainShape& s = t.s;
  auto dy = bt::dev_alloc<bf16>(size_t(s.m) * s.n1), dw2 = bt::dev_alloc<bf16>(size_t(s.n2) * s.n1);
  auto dz = bt::dev_alloc<bf16>(size_t(s.m) * s.n2);
  auto l2 = bt::gemm::consumer_launch(sb.value(), Args{s.m, s.n2, s.n1, dy.get(), dw2.get(), dz.get()});
  ASSERT_TRUE(l2.ok()) << l2.error().to_string();
  BT_ASSERT_OK(launch_stage(l2.value(), stream));
  status st = check_errors(t.chain, ws, stream);  // returns: the kernel exited
  EXPECT_EQ(st.code(), errc::watchdog_timeout) << st.to_string();
  EXPECT_NE(st.message().find("stage 1 'gemm2'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("k-block 0"), std::string::npos) << st.message();
  BT_CUDA(cudaStreamSynchronize(stream));
  BT_CUDA(cudaGetLastError());
  std::printf("[ watchdog ] %s\n", st.to_string().c_str());
}

TEST_F(Sm90Gemm, RejectsUnsupportedShapes) {
  TwoGemms t(ChainShape{"small", 256, 256, 256, 256});
  BT_ASSERT_OK(t.chain.validate());
  bt::dev_ptr<unsigned char> wsh;
  void* ws = workspace(t.chain, wsh);
  auto sa = t.chain.bind(t.a, ws, t.chain.workspace_bytes(), outs(t.e), ins());
  auto sb = t.chain.bind(t.b, ws, t.chain.workspace_bytes(), outs(), ins(t.e));
  ASSERT_TRUE(sa.ok() && sb.ok());
  auto buf = bt::dev_alloc<bf16>(1 << 20);
  bf16* p = buf.get();
  auto expect_error = [&](baton::result<StageLaunch> r, errc code, const char* text) {
    ASSERT_FALSE(r.ok()) << "expected: " << text;
    EXPECT_EQ(r.error().code(), code) << r.error().to_string();
    EXPECT_NE(r.error().message().find(text), std::string::npos) << r.error().message();
  };
  // k not a multiple of 8 (the TMA row stride of A and B would not be 16-byte aligned).
  expect_error(bt::gemm::producer_launch(sa.value(), Args{256, 256, 100, p, p, p}), errc::not_supported, "multiples of 8");
  // n not a multiple of 8.
  expect_error(bt::gemm::producer_launch(sa.value(), Args{256, 252, 256, p, p, p}), errc::not_supported, "multiples of 8");
  // A pointer that TMA cannot use.
  expect_error(bt::gemm::producer_launch(sa.value(), Args{256, 256, 256, p + 1, p, p}), errc::not_supported, "16-byte aligned");
  // Shapes that do not match the stage's grid.
  expect_error(bt::gemm::producer_launch(sa.value(), Args{256, 512, 256, p, p, p}), errc::invalid_argument, "grid");
  // Null pointers.
  expect_error(bt::gemm::producer_launch(sa.value(), Args{256, 256, 256, nullptr, p, p}), errc::invalid_argument, "non-null");
  // beta != 0 without a C source.
  Args with_beta{256, 256, 256, p, p, p};
  with_beta.fusion.beta = 1.f;
  expect_error(bt::gemm::producer_launch(sa.value(), with_beta), errc::not_supported, "beta");
  // The consumer's k differs from the footprint the policy was built for.
  expect_error(bt::gemm::consumer_launch(sb.value(), Args{256, 256, 512, p, p, p}), errc::invalid_policy, "GemmA footprint");

  // A policy whose k-blocks are not this GEMM's (32-wide instead of 64): rejected, since waits
  // for k-block k would guard the wrong columns.
  const Grid g1 = sm90::tile_grid<Config>(256, 256), g2 = g1;
  footprint::GemmA narrow = sm90::gemm_a_footprint<Config>(256, 256);
  narrow.cons_tile_k = 32;
  Chain c2;
  auto a2 = c2.add_stage("gemm1", g1, RowMajor{});
  auto b2 = c2.add_stage("gemm2", g2, RowMajor{});
  auto e2 = c2.add_edge(a2, b2, Edge{g1, narrow}, deps::gemm_a(narrow, g2));
  BT_ASSERT_OK(c2.validate());
  bt::dev_ptr<unsigned char> ws2h;
  void* ws2 = workspace(c2, ws2h);
  auto sb2 = c2.bind(b2, ws2, c2.workspace_bytes(), outs(), ins(e2));
  ASSERT_TRUE(sb2.ok());
  expect_error(bt::gemm::consumer_launch(sb2.value(), Args{256, 256, 256, p, p, p}), errc::invalid_policy, "k-blocks");
}

}  // namespace

// The old spellings of renamed names (docs/naming.md) are the new types (host-only names:
// tests/host/test_deprecated_names.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(std::is_same_v<baton::launch_schedule, baton::LaunchSchedule>);
static_assert(baton::launch_schedule::pdl == baton::LaunchSchedule::pdl);
static_assert(std::is_same_v<baton::sm90::grid_wait::none, baton::sm90::NoGridWait>);
static_assert(std::is_same_v<baton::sm90::grid_wait::before_loads, baton::sm90::GridWaitBeforeLoads>);
static_assert(std::is_same_v<baton::sm90::grid_wait::before_a, baton::sm90::GridWaitBeforeA>);
static_assert(baton::sm90::GridWait<baton::sm90::grid_wait::before_a>);
#pragma GCC diagnostic pop
