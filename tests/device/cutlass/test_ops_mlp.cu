// Device tests (label gpu) of the MLP op, baton::ops::Mlp (include/baton/ops/mlp.cuh), as
// baton::ops::CompiledMlp over the library baton::mlp_kernels (kernels/mlp/), the kernels the MLP
// benchmark times, so what is measured is what is tested:
//   * both activations (GeLU; SwiGLU over interleaved gate/up weights) x every policy the op has
//     (none, row, kblock, automatic) x ragged shapes: M = 1, 17, 200, 1000 with H = 520 and F = 344
//     (neither a multiple of the 128-wide tile nor of the 64-deep k-block);
//   * forced split-K on both GEMMs, under row and kblock waits; tile bands of 1 and 3 rows;
//   * 64 < m < 128 (A's TMA box shortened to 80, 96, 112 rows) under each policy;
//   * 128x96, 128x160, 128x192, 128x224 and 128x256 tiles (policy none) on either GEMM or both,
//     ragged, with and without split-K;
//   * `none` on both of its paths: GEMM2 PDL-launched (weights first; by default when GEMM1 runs in
//     one wave) and two plain launches (more waves, here by planning for 8 SMs), for every width,
//     and forced either way (MlpOptions::pdl), PDL also over a GEMM1 of several waves;
//   * each GEMM alone (Mlp::enqueue_gemm) gives the same Z; refused under row / kblock;
//   * 128x96 GEMMs as CTA pairs (MlpOptions::cta_pairs: 1x2 clusters multicasting A): odd tile
//     columns padded, split-K, m < 128, both GEMM2 launches, mixed widths;
//   * GEMM1 prefetching W2 into L2 (sm90::NextWeights): part of W2, all of it, off;
//   * the swapped GEMMs (W x activations^T, the output column-major) in 32-, 160-, 192- and 224-token
//     tiles, one or several (a ragged last one): ragged, split-K, PDL and plain paths;
//   * persistent CTAs and stream-K (GemmFormRequest::persistent / stream_k) on either GEMM or both,
//     with few SMs (each CTA loops over many tiles) and the full SM count;
//   * per-shape tuning (MlpRunOptions::tune): the op it keeps is correct;
//   * the legacy stream 0 for create(), tuning and enqueue (OpsMlpStreams);
//   * shape and argument errors reported by create() / can_implement before anything runs;
//   * the kernel forms baton::mlp_kernels has only with -DBATON_MLP_EXTRA_KERNELS=ON (CTA pairs,
//     32-token swapped tiles): without them the cases that ask for them are skipped (after checking
//     that create() refuses them, naming the option), tuning runs without them, and a request for
//     them is refused by name (OpsMlpErrors.KernelFormsTheLibraryLacksAreRefusedNamingTheOption).
// Each case runs the op 5 times, Z NaN-poisoned before every run, and compares Z with an fp64 CPU
// reference of bf16(act(X W1^T)) W2^T: relative (Frobenius) error < 1e-2 and every element within
// 2e-2 * max|Zref| (a stale or unwritten tile of Y shows as NaN or as a large error).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../device_test_util.cuh"
#include "random_bf16.hpp"
#include "baton/ops/mlp_compiled.cuh"  // the op over the library's kernels (baton::mlp_kernels)

using namespace baton;
using baton::ops::Activation;
using baton::ops::MlpPolicy;
using bf16 = ::cutlass::bfloat16_t;

namespace {

template <Activation A>
using TestMlp = ops::CompiledMlp<A>;

using bt::random_bf16;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }

using bt::parallel_for;

// The problem data of one (activation, H, F), with M_max rows of X; a case with m rows uses the
// leading m rows (the reference of a row does not depend on m).
struct Data {
  Activation act;
  int m_max, h, f;
  std::vector<bf16> x, w1, w2;  // x [m_max, h]; w1 gelu [f, h], swiglu gate [f, h] then up [f, h]; w2 [h, f]
  std::vector<double> zref;     // [m_max, h]
};

Data make_data(Activation act, int m_max, int h, int f) {
  Data d{act, m_max, h, f, {}, {}, {}, {}};
  const float s1 = 2.0f / std::sqrt(float(h)), s2 = 2.0f / std::sqrt(float(f));
  d.x = random_bf16(size_t(m_max) * h, 11, 1.0f);
  d.w1 = random_bf16(size_t(act == Activation::swiglu ? 2 : 1) * f * h, 12, s1);
  d.w2 = random_bf16(size_t(h) * f, 13, s2);
  std::vector<float> x(d.x.size()), w1(d.w1.size()), w2(d.w2.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(d.x[i]);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = float(d.w1[i]);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = float(d.w2[i]);
  // Y = bf16(act(X W1^T)): the kernel rounds Y to bf16 before GEMM2 reads it.
  std::vector<float> y(size_t(m_max) * f);
  parallel_for(y.size(), [&](size_t idx) {
    const size_t r = idx / size_t(f), c = idx % size_t(f);
    auto dot = [&](const float* w) {
      double acc = 0;
      for (int k = 0; k < h; ++k) acc += double(x[r * h + k]) * double(w[k]);
      return acc;
    };
    double v;
    if (act == Activation::gelu) {
      v = gelu(dot(&w1[c * h]));
    } else {
      v = silu(dot(&w1[c * h])) * dot(&w1[(size_t(f) + c) * h]);
    }
    y[idx] = float(bf16(float(v)));
  });
  d.zref.resize(size_t(m_max) * h);
  parallel_for(d.zref.size(), [&](size_t idx) {
    const size_t r = idx / size_t(h), c = idx % size_t(h);
    double acc = 0;
    for (int k = 0; k < f; ++k) acc += double(y[r * f + k]) * double(w2[c * f + k]);
    d.zref[idx] = acc;
  });
  return d;
}

const Data& data(Activation act, int h, int f, int m) {
  static std::map<std::tuple<int, int, int, int>, Data> cache;
  const int m_max = std::max(m, 1000);
  const auto key = std::tuple{int(act), h, f, m_max};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_data(act, m_max, h, f)).first;
  return it->second;
}

struct Case {
  const char* name;
  Activation act;
  int m, h, f;
  MlpPolicy policy;
  int split1 = 0, split2 = 0, group_m = 0;
  int sms = 0;  // 0: the device's
  bool tune = false;
  int tile_n1 = 0, tile_n2 = 0;  // 0: the plan's
  int expect_n1 = 0, expect_n2 = 0;  // the plan's tile widths, where the case checks them
  int l2_mb = 0;       // MlpOptions::l2_prefetch_mb
  int expect_pf = -1;  // the plan's L2 prefetch k-blocks (-1: not checked, -2: > 0)
  int swap2 = 0;       // GEMM2 operands: 0 plain, 1 swapped, -1 the plan's
  int expect_swap = -1;  // the plan's GEMM2 swapped (-1: not checked)
  int swap1 = 0;         // the same for GEMM1
  int expect_swap1 = -1; // the plan's GEMM1 swapped (-1: not checked)
  int pdl = -1;          // MlpOptions::pdl
  int expect_pdl = -1;   // the plan's pdl (-1: not checked)
  int pairs = 0;         // MlpOptions::cta_pairs
  int expect_pairs = -1; // the plan's CTA pairs: GEMM1 + 2 x GEMM2 (-1: not checked)
  bool tune_pairs = false;  // MlpRunOptions::tune_cta_pairs (tuning also times CTA pairs)
  int bands = 0;          // MlpOptions' band_pairs (1: band pairs for a 192-wide GEMM; 2: tuning tries them)
  int expect_bands = -1;  // the plan's band pairs: GEMM1 + 2 x GEMM2 (-1: not checked)
  int persist = 0;          // GemmFormRequest::persistent: GEMM1 + 2 x GEMM2 asked to persist
  int expect_persist = -1;  // the plan's persistent GEMMs, GEMM1 + 2 x GEMM2 (-1: not checked)
  int stream = 0;           // GemmFormRequest::stream_k: GEMM1 + 2 x GEMM2 asked for stream-K
  int expect_stream = -1;   // the plan's stream-K GEMMs, GEMM1 + 2 x GEMM2 (-1: not checked)
  bool tune_stream = false; // MlpRunOptions::tune_stream_k (tuning also times stream-K)
};

std::string case_name(const ::testing::TestParamInfo<Case>& i) { return i.param.name; }

// The optional kernel forms (ops::MlpKernelForms) a case asks for that `have` lacks, in words (empty:
// none): CTA pairs (pairs = 1), or a swapped GEMM in 32-token tiles (asked for with the tile left open
// at m <= 32, or tile 32; GEMM1 only with GeLU). Tuning cases never need them: tuning skips
// candidates the kernel set lacks.
std::string lacking_kernels(const Case& c, const ops::MlpKernelForms& have) {
  std::string what;
  if (c.pairs == 1 && !have.cta_pairs) what = "CTA pairs";
  const auto narrow = [&](int swap, int tile) { return swap == 1 && (tile == 32 || (tile == 0 && c.m <= 32)); };
  if (!have.narrow_swapped && (narrow(c.swap2, c.tile_n2) || (c.act == Activation::gelu && narrow(c.swap1, c.tile_n1))))
    what += std::string(what.empty() ? "" : " and ") + "32-token swapped tiles";
  return what;
}

class OpsMlp : public bt::DeviceTest, public ::testing::WithParamInterface<Case> {
 protected:
  template <Activation A>
  void run_case(const Case& c);
};

template <Activation A>
void OpsMlp::run_case(const Case& c) {
  const Data& d = data(A, c.h, c.f, c.m);
  ASSERT_LE(c.m, d.m_max);
  const int m = c.m, h = c.h, f = c.f;
  auto dx = bt::dev_alloc<bf16>(size_t(m) * h);
  auto dw1 = bt::dev_alloc<bf16>(d.w1.size());
  auto dw2 = bt::dev_alloc<bf16>(d.w2.size());
  auto dy = bt::dev_alloc<bf16>(size_t(m) * f);
  auto dz = bt::dev_alloc<bf16>(size_t(m) * h);
  ASSERT_TRUE(dx && dw1 && dw2 && dy && dz);
  BT_CUDA(cudaMemcpyAsync(dx.get(), d.x.data(), size_t(m) * h * sizeof(bf16), cudaMemcpyHostToDevice, stream));
  BT_CUDA(cudaMemcpyAsync(dw2.get(), d.w2.data(), d.w2.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream));
  if (A == Activation::gelu) {
    BT_CUDA(cudaMemcpyAsync(dw1.get(), d.w1.data(), d.w1.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream));
  } else {  // gate and up, interleaved by rows for the SwiGLU-pair GEMM
    auto staged = bt::dev_alloc<bf16>(d.w1.size());
    ASSERT_TRUE(staged);
    BT_CUDA(cudaMemcpyAsync(staged.get(), d.w1.data(), d.w1.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream));
    BT_ASSERT_OK(sm90::pack_swiglu_weights(staged.get(), staged.get() + size_t(f) * h, dw1.get(), f, h, stream));
    BT_CUDA(cudaStreamSynchronize(stream));
  }

  ops::MlpRunOptions o;
  o.plan.policy = c.policy;
  // The case's ints as the op's requests: 0 / -1 leave a field to the plan, except swap (0: plain,
  // 1: swapped, -1: the plan's) and pairs (1: CTA pairs for a 96-wide GEMM).
  auto request = [&](int split, int tile, int swap, int which) {
    ops::GemmFormRequest r;
    if (c.persist & which) r.persistent = true;
    if (c.stream & which) r.stream_k = true;
    // A case that asks for persistent or stream-K CTAs on one GEMM pins the other to one CTA per tile:
    // the plan weighs persistent CTAs itself on a GEMM of more tiles than SMs (which a cost-model
    // refit may tip either way), and the case checks exactly what it asked for.
    if ((c.persist | c.stream) != 0 && ((c.persist | c.stream) & which) == 0) r.persistent = false;
    if (split > 0) r.split_k = split;
    if (tile > 0) r.tile = tile;
    if (swap >= 0) r.operands = swap == 1 ? ops::GemmOperands::swapped : ops::GemmOperands::plain;
    if (c.pairs == 1) r.cta_pairs = true;
    if (c.bands == 1) r.band_pairs = true;
    return r;
  };
  o.plan.gemm1 = request(c.split1, c.tile_n1, c.swap1, 1);
  o.plan.gemm2 = request(c.split2, c.tile_n2, c.swap2, 2);
  if (c.group_m > 0) o.plan.group_m = c.group_m;
  o.sms = c.sms;
  o.tune = c.tune;
  o.tune_iters = 3;
  o.plan.l2_prefetch_mb = c.l2_mb;
  if (c.pdl >= 0) o.plan.launch = c.pdl == 1 ? ops::Gemm2Launch::pdl : ops::Gemm2Launch::after_gemm1;
  o.tune_cta_pairs = c.tune_pairs;
  o.tune_band_pairs = c.bands == 2;
  o.tune_stream_k = c.tune_stream;
  o.log = true;
  auto op = TestMlp<A>::create({m, h, f, A}, {dx.get(), dw1.get(), dw2.get(), dy.get(), dz.get()}, stream, o);
  if (const std::string lacks = lacking_kernels(c, TestMlp<A>::kernel_forms); !lacks.empty()) {
    ASSERT_FALSE(op.ok()) << c.name << ": created without the kernels for " << lacks;
    EXPECT_EQ(op.error().code(), errc::not_supported) << op.error().to_string();
    EXPECT_NE(op.error().message().find("-DBATON_MLP_EXTRA_KERNELS=ON"), std::string::npos) << op.error().to_string();
    GTEST_SKIP() << c.name << " needs " << lacks
                 << ", which baton::mlp_kernels lacks (configure baton with -DBATON_MLP_EXTRA_KERNELS=ON); create() "
                    "refused it: "
                 << op.error().to_string();
  }
  ASSERT_TRUE(op.ok()) << op.error().to_string();
  const ops::MlpPlan& plan = op.value()->plan();
  if (c.policy != MlpPolicy::automatic) EXPECT_EQ(plan.policy, c.policy);
  const auto swapped = [](const ops::GemmForm& f) { return f.operands == ops::GemmOperands::swapped; };
  if (c.split1 > 0) EXPECT_EQ(plan.form1.split_k, c.split1);
  if (c.split2 > 0) EXPECT_EQ(plan.form2.split_k, c.split2);
  if (c.group_m > 0) EXPECT_EQ(plan.group_m, c.group_m);
  if (c.tile_n1 > 0) EXPECT_EQ(plan.form1.tile, c.tile_n1);
  if (c.tile_n2 > 0) EXPECT_EQ(plan.form2.tile, c.tile_n2);
  if (c.expect_n1 > 0) EXPECT_EQ(plan.form1.tile, c.expect_n1) << plan.log_line();
  if (c.expect_n2 > 0) EXPECT_EQ(plan.form2.tile, c.expect_n2) << plan.log_line();
  if (c.expect_pf >= 0) EXPECT_EQ(plan.l2_prefetch_kblocks, c.expect_pf) << plan.log_line();
  if (c.expect_pf == -2) EXPECT_GT(plan.l2_prefetch_kblocks, 0) << plan.log_line();
  if (c.expect_swap >= 0) EXPECT_EQ(swapped(plan.form2), c.expect_swap == 1) << plan.log_line();
  if (c.expect_swap1 >= 0) EXPECT_EQ(swapped(plan.form1), c.expect_swap1 == 1) << plan.log_line();
  if (c.expect_pdl >= 0) EXPECT_EQ(plan.launch == ops::Gemm2Launch::pdl, c.expect_pdl == 1) << plan.log_line();
  if (c.expect_pairs >= 0)
    EXPECT_EQ(int(plan.form1.cta_pairs) + 2 * int(plan.form2.cta_pairs), c.expect_pairs) << plan.log_line();
  if (c.expect_bands >= 0)
    EXPECT_EQ(int(plan.form1.band_pairs) + 2 * int(plan.form2.band_pairs), c.expect_bands) << plan.log_line();
  if (c.expect_persist >= 0)
    EXPECT_EQ(int(plan.form1.persistent) + 2 * int(plan.form2.persistent), c.expect_persist) << plan.log_line();
  if (c.expect_stream >= 0)
    EXPECT_EQ(int(plan.form1.stream_k) + 2 * int(plan.form2.stream_k), c.expect_stream) << plan.log_line();

  double max_ref = 0, ref_sq = 0;
  for (size_t i = 0; i < size_t(m) * h; ++i) {
    max_ref = std::max(max_ref, std::fabs(d.zref[i]));
    ref_sq += d.zref[i] * d.zref[i];
  }
  ASSERT_GT(max_ref, 0.0);
  // Z against the reference (after the stream's work, which the caller synchronized).
  auto verify = [&](const char* what, int run) {
    const std::vector<bf16> z = download(dz.get(), size_t(m) * h);
    double err_sq = 0, worst = 0;
    size_t worst_at = 0, bad = 0;
    for (size_t i = 0; i < z.size(); ++i) {
      const double v = double(float(z[i]));
      const double e = std::isfinite(v) ? std::fabs(v - d.zref[i]) : INFINITY;
      err_sq += e * e;
      if (!(e <= 2e-2 * max_ref)) ++bad;
      if (!(e <= worst)) {
        worst = e;
        worst_at = i;
      }
    }
    const double rel = std::sqrt(err_sq / ref_sq);
    EXPECT_TRUE(rel < 1e-2 && bad == 0) << c.name << " (" << what << ") run " << run << ": relative error " << rel
                                        << ", " << bad << " elements off, worst at row " << worst_at / size_t(h)
                                        << " col " << worst_at % size_t(h) << ": " << float(z[worst_at]) << " vs "
                                        << d.zref[worst_at] << "; plan: " << plan.log_line();
    return rel < 1e-2 && bad == 0;
  };
  for (int run = 0; run < 5; ++run) {
    BT_CUDA(cudaMemsetAsync(dz.get(), 0xff, size_t(m) * h * sizeof(bf16), stream));  // NaN
    BT_ASSERT_OK(op.value()->enqueue(stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    ASSERT_TRUE(verify("the chain", run));
  }
  // The GEMMs one at a time (Mlp::enqueue_gemm, what the bench's breakdown times): the same Z with
  // Y and Z poisoned first, and the chain still right after them (split-K counters and tickets in
  // step). Refused for plans with semaphores.
  EXPECT_EQ(op.value()->enqueue_gemm(3, stream).code(), errc::invalid_argument);
  if (plan.policy == MlpPolicy::none) {
    BT_CUDA(cudaMemsetAsync(dy.get(), 0xff, size_t(m) * f * sizeof(bf16), stream));
    BT_CUDA(cudaMemsetAsync(dz.get(), 0xff, size_t(m) * h * sizeof(bf16), stream));
    BT_ASSERT_OK(op.value()->enqueue_gemm(1, stream));
    BT_ASSERT_OK(op.value()->enqueue_gemm(2, stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    ASSERT_TRUE(verify("GEMM1 then GEMM2 alone", 0));
    BT_CUDA(cudaMemsetAsync(dz.get(), 0xff, size_t(m) * h * sizeof(bf16), stream));
    BT_ASSERT_OK(op.value()->enqueue(stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    ASSERT_TRUE(verify("the chain after the GEMMs alone", 0));
  } else {
    const status st = op.value()->enqueue_gemm(2, stream);
    EXPECT_EQ(st.code(), errc::not_supported) << st.to_string();
  }
}

TEST_P(OpsMlp, MatchesReferenceOverRepeatedRuns) {
  const Case c = GetParam();
  if (c.act == Activation::gelu) {
    run_case<Activation::gelu>(c);
  } else {
    run_case<Activation::swiglu>(c);
  }
}

constexpr Activation G = Activation::gelu, S = Activation::swiglu;
constexpr MlpPolicy None = MlpPolicy::none, RowP = MlpPolicy::row, KB = MlpPolicy::kblock,
                     Auto = MlpPolicy::automatic;

// Ragged H = 520 and F = 344 for every policy and M.
std::vector<Case> ragged_cases() {
  std::vector<Case> v;
  static std::vector<std::string> names;  // storage for the generated names
  names.reserve(64);
  for (Activation a : {G, S})
    for (MlpPolicy p : {None, RowP, KB, Auto})
      for (int m : {1, 17, 200, 1000}) {
        names.push_back(std::string(a == G ? "gelu" : "swiglu") + "_" + (p == Auto ? "auto" : ops::to_string(p)) +
                        "_m" + std::to_string(m));
        v.push_back(Case{names.back().c_str(), a, m, 520, 344, p});
      }
  return v;
}
INSTANTIATE_TEST_SUITE_P(Ragged, OpsMlp, ::testing::ValuesIn(ragged_cases()), case_name);

// 128x192 GEMMs as band pairs (2x1 clusters, the weights multicast), H = 1032 and F = 440 (ragged
// against 192): two bands with the ragged tail in the pair's second CTA (m = 200), an odd band count
// whose padded band loads no A (m = 300, 257), eight bands, split-K, GEMM2 after GEMM1 and PDL-launched,
// few SMs (clusters over many waves), one GEMM paired, one band (nothing to pair), and tuning with the
// band-pair candidates (m = 384: three bands).
Case band_case(const char* name, Activation a, int m, int t1, int t2, int expect, int split1 = 0, int split2 = 0,
               int pdl = -1, int sms = 0) {
  Case c{name, a, m, 1032, 440, None, split1, split2, 0, sms};
  c.tile_n1 = t1;
  c.tile_n2 = t2;
  c.pdl = pdl;
  c.bands = 1;
  c.expect_bands = expect;
  return c;
}
INSTANTIATE_TEST_SUITE_P(
    BandPairs, OpsMlp,
    ::testing::Values(band_case("gelu_none_bands_m200", G, 200, 192, 192, 3),
                      band_case("swiglu_none_bands_m300", S, 300, 192, 192, 3),
                      band_case("gelu_none_bands_pdloff_m1000", G, 1000, 192, 192, 3, 0, 0, 0),
                      band_case("swiglu_none_bands_pdl_m1000", S, 1000, 192, 192, 3, 0, 0, 1),
                      band_case("gelu_none_bands_split2x3_m257", G, 257, 192, 192, 3, 2, 3),
                      band_case("swiglu_none_bands_8sms_m1000", S, 1000, 192, 192, 3, 0, 0, -1, 8),
                      band_case("gelu_none_bands1_m640", G, 640, 192, 256, 1),
                      band_case("swiglu_none_bands2_m640", S, 640, 128, 192, 2),
                      band_case("gelu_none_bands_oneband_m100", G, 100, 192, 192, 0),
                      [] {
                        Case c{"swiglu_tuned_bands_m384", S, 384, 1032, 440, Auto, 0, 0, 0, 0, true};
                        c.bands = 2;
                        return c;
                      }()),
    case_name);

// Persistent CTAs (GemmFormRequest::persistent): planned for 8 SMs, so each of the 8 CTAs loops over
// many tiles (m = 1000: 8 x 3 GEMM1 tiles of 128 columns, 8 x 5 of GEMM2), on either GEMM or both,
// ragged H = 520 / F = 344, every plain width, GEMM2 PDL-launched and after GEMM1, swapped GEMMs in
// 208- and 160-token tiles, one band (m = 1, 65) and a stage of fewer tiles than CTAs (the full SM
// count), and tuning with the persistent candidates (8 SMs: every GEMM has more tiles than SMs).
Case persist_case(const char* name, Activation a, int m, int persist, int t1 = 0, int t2 = 0, int pdl = -1,
                  int sms = 8, int swap = 0) {
  Case c{name, a, m, 520, 344, None, 0, 0, 0, sms};
  c.tile_n1 = t1;
  c.tile_n2 = t2;
  c.pdl = pdl;
  c.swap1 = c.swap2 = swap;
  c.persist = persist;
  c.expect_persist = persist;
  return c;
}
INSTANTIATE_TEST_SUITE_P(
    Persistent, OpsMlp,
    ::testing::Values(persist_case("gelu_none_persist12_m1000", G, 1000, 3),
                      persist_case("swiglu_none_persist12_m1000", S, 1000, 3),
                      persist_case("gelu_none_persist1_pdl_m1000", G, 1000, 1, 128, 128, 1),
                      persist_case("swiglu_none_persist2_pdl_m1000", S, 1000, 2, 128, 128, 1),
                      persist_case("swiglu_none_persist12_after_m300", S, 300, 3, 128, 128, 0),
                      persist_case("gelu_none_persist12_96x192_m777", G, 777, 3, 96, 192),
                      persist_case("swiglu_none_persist12_256x96_m777", S, 777, 3, 256, 96),
                      persist_case("gelu_none_persist12_swap208_m1000", G, 1000, 3, 208, 208, -1, 8, 1),
                      persist_case("swiglu_none_persist12_swap160_m300", S, 300, 3, 160, 160, -1, 8, 1),
                      persist_case("gelu_none_persist12_m1", G, 1, 3),
                      persist_case("swiglu_none_persist12_m65", S, 65, 3),
                      persist_case("gelu_none_persist12_fullsms_m200", G, 200, 3, 0, 0, -1, 0),
                      [] {
                        Case c{"swiglu_tuned_persist_8sms_m1000", S, 1000, 520, 344, Auto, 0, 0, 0, 8, true};
                        return c;
                      }()),
    case_name);

// The plain widths of CuTe's extended GMMA shapes (kMlpExtendedTileWidths: 128x160 and 128x224 tiles,
// 80 and 112 output columns per SwiGLU tile), ragged H = 520 / F = 344 (GEMM1 n = 344 = 2 x 160 + 24
// = 224 + 120, SwiGLU 688 = 4 x 160 + 48 = 3 x 224 + 16; GEMM2 n = 520 = 3 x 160 + 40 = 2 x 224 + 72),
// alone and mixed with each other and the standard widths, split-K, GEMM2 PDL-launched, after GEMM1
// and PDL-launched over several waves (8 SMs), persistent CTAs, several bands of a wider shape.
INSTANTIATE_TEST_SUITE_P(
    ExtendedWidths, OpsMlp,
    ::testing::Values(
        Case{"gelu_none_w160_m1", G, 1, 520, 344, None, 0, 0, 0, 0, false, 160, 160},
        Case{"swiglu_none_w160_m200", S, 200, 520, 344, None, 0, 0, 0, 0, false, 160, 160},
        Case{"gelu_none_w224_m17", G, 17, 520, 344, None, 0, 0, 0, 0, false, 224, 224},
        Case{"swiglu_none_w224_m1000", S, 1000, 520, 344, None, 0, 0, 0, 0, false, 224, 224},
        Case{"gelu_none_w160_w224_m1000", G, 1000, 520, 344, None, 0, 0, 0, 0, false, 160, 224},
        Case{"swiglu_none_w224_w96_m65", S, 65, 520, 344, None, 0, 0, 0, 0, false, 224, 96},
        Case{"gelu_none_w256_w160_m300", G, 300, 520, 344, None, 0, 0, 0, 0, false, 256, 160},
        Case{"swiglu_none_w224_w160_split2x3_m200", S, 200, 520, 344, None, 2, 3, 0, 0, false, 224, 160},
        Case{"gelu_none_w160_split3x2_m1", G, 1, 520, 344, None, 3, 2, 0, 0, false, 160, 160},
        Case{"gelu_none_w224_pdloff_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 224, 224, 0, 0, 0, -1, 0, -1, 0, -1, 0, 0},
        Case{"swiglu_none_w160_pdlon_m1000_8sms", S, 1000, 520, 344, None, 0, 0, 0, 8, false, 160, 160, 0, 0, 0, -1, 0, -1, 0, -1, 1, 1},
        Case{"gelu_none_w160_m384_h1536_f768", G, 384, 1536, 768, None, 0, 0, 0, 0, false, 160, 160},
        Case{"swiglu_none_w224_m513_h1024_f1536", S, 513, 1024, 1536, None, 0, 0, 0, 0, false, 224, 224},
        persist_case("gelu_none_persist12_160x224_m777", G, 777, 3, 160, 224),
        persist_case("swiglu_none_persist12_224x160_m777", S, 777, 3, 224, 160),
        persist_case("swiglu_none_persist12_160_fullsms_m1000", S, 1000, 3, 160, 160, -1, 0)),
    case_name);

// Stream-K (GemmFormRequest::stream_k): the persistent CTAs share every tile's k-blocks. With 8 SMs
// and the full SM count (more CTAs than tiles: several CTAs per tile), either GEMM or both, ragged
// H = 520 / F = 344, every plain width, GEMM2 PDL-launched and after GEMM1, swapped GEMMs, one band
// (m = 1, 65), and tuning with the stream-K candidates.
Case stream_case(const char* name, Activation a, int m, int stream, int t1 = 0, int t2 = 0, int pdl = -1,
                 int sms = 8, int swap = 0) {
  Case c = persist_case(name, a, m, 0, t1, t2, pdl, sms, swap);
  c.stream = stream;
  c.expect_stream = stream;
  c.expect_persist = stream;
  return c;
}
INSTANTIATE_TEST_SUITE_P(
    StreamK, OpsMlp,
    ::testing::Values(stream_case("gelu_none_stream12_m1000", G, 1000, 3),
                      stream_case("swiglu_none_stream12_m1000", S, 1000, 3),
                      stream_case("gelu_none_stream1_pdl_m1000", G, 1000, 1, 128, 128, 1),
                      stream_case("swiglu_none_stream2_pdl_m1000", S, 1000, 2, 128, 128, 1),
                      stream_case("swiglu_none_stream12_after_m300", S, 300, 3, 128, 128, 0),
                      stream_case("gelu_none_stream12_96x192_m777", G, 777, 3, 96, 192),
                      stream_case("swiglu_none_stream12_256x96_m777", S, 777, 3, 256, 96),
                      stream_case("gelu_none_stream12_swap208_m1000", G, 1000, 3, 208, 208, -1, 8, 1),
                      stream_case("swiglu_none_stream12_swap160_m300", S, 300, 3, 160, 160, -1, 0, 1),
                      stream_case("gelu_none_stream12_m1", G, 1, 3, 0, 0, -1, 0),
                      stream_case("swiglu_none_stream12_m65", S, 65, 3, 0, 0, -1, 0),
                      stream_case("gelu_none_stream12_fullsms_m200", G, 200, 3, 0, 0, -1, 0),
                      stream_case("swiglu_none_stream12_fullsms_m257", S, 257, 3, 0, 0, 1, 0),
                      [] {
                        Case c{"gelu_tuned_stream_m257", G, 257, 520, 344, Auto, 0, 0, 0, 0, true};
                        c.tune_stream = true;
                        return c;
                      }()),
    case_name);

INSTANTIATE_TEST_SUITE_P(
    Plans, OpsMlp,
    ::testing::Values(
        // forced split-K on both GEMMs (H = 520: 9 k-blocks, F = 344: 6), both wait granularities
        Case{"gelu_row_split3x2_m17", G, 17, 520, 344, RowP, 3, 2},
        Case{"gelu_kblock_split3x2_m200", G, 200, 520, 344, KB, 3, 2},
        Case{"swiglu_row_split4x3_m1", S, 1, 520, 344, RowP, 4, 3},
        Case{"swiglu_kblock_split2x2_m1000", S, 1000, 520, 344, KB, 2, 2},
        // tile bands of 1 and 3 rows of tiles (m = 1000: 8 rows)
        Case{"gelu_row_group1_m1000", G, 1000, 520, 344, RowP, 0, 0, 1},
        Case{"swiglu_row_group3_m1000", S, 1000, 520, 344, RowP, 0, 0, 3},
        Case{"gelu_none_group3_m1000", G, 1000, 520, 344, None, 0, 0, 3},
        // `none` planned for 8 SMs: GEMM1 has more than one wave, two plain launches instead of PDL
        Case{"gelu_none_serial_m1000", G, 1000, 520, 344, None, 0, 0, 0, 8},
        Case{"swiglu_none_serial_m200", S, 200, 520, 344, None, 0, 0, 0, 8},
        // a wider shape (GEMM2 k = 2048: 32 k-blocks per wait list)
        Case{"gelu_row_m256_h1024_f2048", G, 256, 1024, 2048, RowP},
        Case{"swiglu_kblock_m256_h1024_f2048", S, 256, 1024, 2048, KB},
        // 128x256 tiles (policy none), ragged: GEMM1 n = 344 (GeLU) / 688 (SwiGLU), GEMM2 n = 520
        Case{"gelu_none_wide_m1", G, 1, 520, 344, None, 0, 0, 0, 0, false, 256, 256},
        Case{"gelu_none_wide_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 256, 256},
        Case{"swiglu_none_wide_m17", S, 17, 520, 344, None, 0, 0, 0, 0, false, 256, 256},
        Case{"swiglu_none_wide_m1000", S, 1000, 520, 344, None, 0, 0, 0, 0, false, 256, 256},
        Case{"gelu_none_wide2_m1000", G, 1000, 520, 344, None, 0, 0, 0, 0, false, 128, 256},
        Case{"swiglu_none_wide1_m200", S, 200, 520, 344, None, 0, 0, 0, 0, false, 256, 128},
        // 128x256 tiles with split-K (the wide GEMM's own split, or forced)
        Case{"gelu_none_wide_split3x2_m1", G, 1, 520, 344, None, 3, 2, 0, 0, false, 256, 256},
        Case{"swiglu_none_wide_split2x3_m200", S, 200, 520, 344, None, 2, 3, 0, 0, false, 256, 256},
        Case{"gelu_none_wide_autosplit_m17_h2048_f2048", G, 17, 2048, 2048, None, 0, 0, 0, 0, false, 256, 256},
        // 128x192 tiles, alone and mixed with 128x256, with and without split-K
        Case{"gelu_none_mid_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 192, 192},
        Case{"swiglu_none_mid_m1000", S, 1000, 520, 344, None, 0, 0, 0, 0, false, 192, 192},
        Case{"swiglu_none_mid_split3x2_m1", S, 1, 520, 344, None, 3, 2, 0, 0, false, 192, 192},
        Case{"gelu_none_mid_wide_m17", G, 17, 520, 344, None, 0, 0, 0, 0, false, 192, 256},
        Case{"swiglu_none_wide_mid_m1000", S, 1000, 520, 344, None, 0, 0, 0, 0, false, 256, 192},
        // 128x96 tiles (48 output columns per SwiGLU tile), alone and mixed with 128x128 / 128x256,
        // ragged (GEMM1 n = 344 = 3 x 96 + 56, 688 = 7 x 96 + 16; GEMM2 n = 520 = 5 x 96 + 40),
        // with and without split-K, on the PDL path (one wave) and the serial one (8 SMs)
        Case{"gelu_none_narrow_m1", G, 1, 520, 344, None, 0, 0, 0, 0, false, 96, 96},
        Case{"swiglu_none_narrow_m17", S, 17, 520, 344, None, 0, 0, 0, 0, false, 96, 96},
        Case{"gelu_none_narrow_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 96, 96},
        Case{"swiglu_none_narrow_m1000", S, 1000, 520, 344, None, 0, 0, 0, 0, false, 96, 96},
        Case{"swiglu_none_narrow_split3x2_m1", S, 1, 520, 344, None, 3, 2, 0, 0, false, 96, 96},
        Case{"gelu_none_narrow1_m65", G, 65, 520, 344, None, 0, 0, 0, 0, false, 96, 128},
        Case{"swiglu_none_narrow2_m200", S, 200, 520, 344, None, 0, 0, 0, 0, false, 128, 96},
        Case{"gelu_none_narrow_wide_m200_8sms", G, 200, 520, 344, None, 0, 0, 0, 8, false, 96, 256},
        // GEMM2's launch (MlpOptions::pdl) for every width: PDL-launched with weights first (the default
        // when GEMM1 fits one wave), forced off, and forced on over a GEMM1 of several waves (8 SMs:
        // GEMM2's CTAs start during GEMM1's last wave)
        Case{"gelu_none_mid_pdl_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 128, 192, 0, 0, 0, -1, 0, -1, 0, -1, -1, 1},
        Case{"swiglu_none_wide_pdl_m17", S, 17, 520, 344, None, 0, 0, 0, 0, false, 128, 256, 0, 0, 0, -1, 0, -1, 0, -1, -1, 1},
        Case{"gelu_none_mid_pdloff_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 192, 192, 0, 0, 0, -1, 0, -1, 0, -1, 0, 0},
        Case{"swiglu_none_wide_pdlon_m1000_8sms", S, 1000, 520, 344, None, 0, 0, 0, 8, false, 128, 256, 0, 0, 0, -1, 0, -1, 0, -1, 1, 1},
        Case{"gelu_none_narrow_pdlon_split2x2_m1000_8sms", G, 1000, 520, 344, None, 2, 2, 0, 8, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, 1, 1},
        Case{"gelu_none_pdlon_m1000_8sms", G, 1000, 520, 344, None, 0, 0, 0, 8, false, 128, 128, 0, 0, 0, -1, 0, -1, 0, -1, 1, 1},
        Case{"swiglu_none_pdlauto_m1000_8sms", S, 1000, 520, 344, None, 0, 0, 0, 8, false, 0, 0, 0, 0, 0, -1, 0, -1, 0, -1, -1, 0},
        Case{"swiglu_none_narrow_autosplit_m17_h2048_f2048", S, 17, 2048, 2048, None, 0, 0, 0, 0, false, 96, 96},
        // 128x96 tiles as CTA pairs (1x2 clusters, A multicast): odd tile columns padded (GeLU GEMM1
        // 440 = 4 x 96 + 56: 5 -> 6 tiles; GEMM2 1032 = 10 x 96 + 72: 11 -> 12), SwiGLU (880: 10),
        // split-K, m < 128 (full A box), GEMM2 after GEMM1 and PDL-launched, mixed with 128x192
        Case{"gelu_none_pairs_m200_h1032_f440", G, 200, 1032, 440, None, 0, 0, 0, 0, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, -1, 1, 3},
        Case{"swiglu_none_pairs_m1000_h1032_f440", S, 1000, 1032, 440, None, 0, 0, 0, 0, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, -1, 1, 3},
        Case{"gelu_none_pairs_split2x3_m128_h1032_f440", G, 128, 1032, 440, None, 2, 3, 0, 0, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, 1, 1, 3},
        Case{"swiglu_none_pairs_m17_h1032_f440", S, 17, 1032, 440, None, 0, 0, 0, 0, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, -1, 1, 3},
        Case{"gelu_none_pairs_pdloff_m300_h1032_f440", G, 300, 1032, 440, None, 0, 0, 0, 0, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, 0, 0, 1, 3},
        Case{"swiglu_none_pairs_serial_m1000_h1032_f440_8sms", S, 1000, 1032, 440, None, 0, 0, 0, 8, false, 96, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, 0, 1, 3},
        Case{"gelu_none_pairs1_mid2_m200_h1032_f440", G, 200, 1032, 440, None, 0, 0, 0, 0, false, 96, 192, 0, 0, 0, -1, 0, -1, 0, -1, -1, -1, 1, 1},
        Case{"swiglu_none_pairs2_m256_h1032_f440", S, 256, 1032, 440, None, 0, 0, 0, 0, false, 128, 96, 0, 0, 0, -1, 0, -1, 0, -1, -1, -1, 1, 2},
        Case{"gelu_tuned_m128_h1032_f440", G, 128, 1032, 440, Auto, 0, 0, 0, 0, true},
        // ... and with CTA pairs among the candidates (MlpRunOptions::tune_cta_pairs).
        Case{"swiglu_tuned_pairs_m256_h1032_f440", S, 256, 1032, 440, Auto, 0, 0, 0, 0, true, 0, 0, 0, 0, 0, -1, 0, -1,
             0, -1, -1, -1, 0, -1, true},
        // the plan's own choice of 128x256 tiles at a larger shape (m = 2048: both GEMMs wide)
        Case{"gelu_auto_m2048_h2048_f2048", G, 2048, 2048, 2048, Auto, 0, 0, 0, 0, false, 0, 0, 256, 256},
        // GEMM1 prefetching W2 into L2 as it ends: part of W2 (1 MB = 3 k-blocks of each of the
        // 2 x 8 tile-parts), 24 MB (all of it here; `none`, one wave: the PDL path whose GEMM2
        // loads its weights before griddepcontrol.wait), off (the default), and with wide GEMM2 tiles
        Case{"gelu_none_pf1mb_split2_m1_h1024_f2048", G, 1, 1024, 2048, None, 0, 2, 0, 0, false, 0, 0, 0, 0, 1, 3, 0},
        Case{"swiglu_none_pf24mb_m17_h1024_f2048", S, 17, 1024, 2048, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 24, -2, 1, 1},
        Case{"swiglu_none_pfoff_m1", S, 1, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, 0},
        Case{"gelu_none_pf2mb_wide2_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 128, 256, 0, 0, 2, -2},
        // the swapped GEMM2 (W2 x Y^T, 128x32 tiles, Z written column-major as Z^T): ragged hidden
        // (520 = 4 x 128 + 8) and tokens (1 and 12: Y's box shortened to 8 and 16 rows; 17, 32,
        // 200 = 6 x 32 + 8), forced split-K, its PDL path (one
        // wave) and its plain path (planned for 8 SMs), off
        Case{"swiglu_none_swap_m1", S, 1, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1},
        Case{"gelu_none_swap_m17", G, 17, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 0, 0},
        Case{"gelu_none_swap_m12", G, 12, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1},
        Case{"swiglu_none_swap_split3_m32", S, 32, 520, 344, None, 0, 3, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1},
        Case{"gelu_none_swap_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1},
        Case{"swiglu_none_swap_serial_m200", S, 200, 520, 344, None, 0, 0, 0, 8, false, 0, 0, 0, 0, 0, -1, 1, 1},
        Case{"gelu_none_swap_pf1mb_m1_h1024_f2048", G, 1, 1024, 2048, None, 0, 2, 0, 0, false, 0, 0, 0, 0, 1, 3, 1, 1},
        Case{"swiglu_tuned_m17_h1024_f2048", S, 17, 1024, 2048, Auto, 0, 0, 0, 0, true},
        Case{"swiglu_none_swapoff_m17", S, 17, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0},
        // the swapped GeLU GEMM1 (W1 x X^T, Y written column-major as Y^T), alone and with the swapped
        // GEMM2: ragged F (344 = 2 x 128 + 88) and tokens, split-K, tuning that tries them
        Case{"gelu_none_swap1_m1", G, 1, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0, 1, 1},
        Case{"gelu_none_swap1off_m1", G, 1, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0},
        Case{"gelu_none_swap12_m17", G, 17, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap12_split3x2_m32", G, 32, 520, 344, None, 3, 2, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap1_m200", G, 200, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0, 1, 1},
        // wide token tiles (160 and 192 tokens; SwiGLU GEMM1's pair epilogue swapped: gate/up rows
        // four lanes apart): one token tile just past a 128-row band, a full tile, shortened token
        // boxes (8, 128, 160 rows), split-K, PDL and plain launches, ragged F / 2F / H weight tiles
        Case{"swiglu_none_swap160_m129", S, 129, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap160_m160", S, 160, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap192_split3x2_m180", S, 180, 520, 344, None, 3, 2, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap1_160_m8", S, 8, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0, 1, 1},
        Case{"swiglu_none_swap1_192_serial_m192", S, 192, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 0, 0, 1, 1, 0, 0},
        Case{"gelu_none_swap160_m100", G, 100, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap160_pdl_m150", G, 150, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1, 1, 1},
        Case{"gelu_none_swap192_serial_split2_m170", G, 170, 520, 344, None, 2, 2, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1, 0, 0},
        Case{"swiglu_none_swap2_m300", S, 300, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 0, 0},
        // several token tiles with a ragged last one, loaded through a shortened B box (tail_b_box_):
        // 257 = 192 + 65 (a 96-row box), 329 = 2 x 160 + 9 (a 16-row box) under split-K; 300 with the
        // tile left open: two 160-token tiles (mlp_swap_tile: 320 columns, not 384), the last of 140
        Case{"gelu_none_swap12_192_m257", G, 257, 520, 344, None, 0, 0, 0, 0, false, 192, 192, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_m300", S, 300, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_160_split2_m329", S, 329, 520, 344, None, 2, 2, 0, 0, false, 160, 160, 0, 0, 0, -1, 1, 1, 1, 1},
        // 224-token tiles: one (m = 200, split-K) and two with a ragged last one (m = 400: 224 + 176,
        // a 192-row box; 416: 224 + 192, the box full, split-K)
        Case{"swiglu_none_swap12_224_split2_m200", S, 200, 520, 344, None, 2, 2, 0, 0, false, 224, 224, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap12_m400", G, 400, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_224_split2_m416", S, 416, 520, 344, None, 2, 2, 0, 0, false, 224, 224, 0, 0, 0, -1, 1, 1, 1, 1},
        // 144-token tiles (two, m = 257-288): 270 = 144 + 126 (a 128-row box) with the tile left
        // open (mlp_swap_tile), 257 = 144 + 113 under split-K (GeLU), 288 = 2 x 144 (the box full)
        Case{"swiglu_none_swap12_m270", S, 270, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap12_144_split2_m257", G, 257, 520, 344, None, 2, 2, 0, 0, false, 144, 144, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_144_m288", S, 288, 520, 344, None, 0, 0, 0, 0, false, 144, 144, 0, 0, 0, -1, 1, 1, 1, 1},
        // three or more token tiles past 448 tokens (mlp_swap_tile_weighed): 515 = 2 x 176 + 163 with
        // the tile left open (mlp_swap_tile: 528 columns), 600 = 3 x 160 + 120 under split-K, 1100 =
        // 4 x 224 + 204 (a 208-row box); and the plan's own choice at Phi-2's shape, m = 515 (both
        // GEMMs swapped: 176-token tiles)
        Case{"gelu_none_swap12_m515", G, 515, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_160_split2_m600", S, 600, 520, 344, None, 2, 2, 0, 0, false, 160, 160, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_224_m1100", S, 1100, 520, 344, None, 0, 0, 0, 0, false, 224, 224, 0, 0, 0, -1, 1, 1, 1, 1},
        // 176- and 208-token tiles (past 448 tokens only): 460 = 2 x 176 + 108 (a 112-row box) under
        // split-K, 1000 = 4 x 208 + 168 (a 168-row box), and 600 with the tile left open: three of
        // 208 (624 columns, against 640 for 160 and 672 for 224)
        Case{"swiglu_none_swap12_176_split2_m460", S, 460, 520, 344, None, 2, 2, 0, 0, false, 176, 176, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"gelu_none_swap12_208_m1000", G, 1000, 520, 344, None, 0, 0, 0, 0, false, 208, 208, 0, 0, 0, -1, 1, 1, 1, 1},
        Case{"swiglu_none_swap12_m600", S, 600, 520, 344, None, 0, 0, 0, 0, false, 0, 0, 208, 208, 0, -1, 1, 1, 1, 1},
        Case{"gelu_auto_swap_m515_h2560_f10240", G, 515, 2560, 10240, Auto, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, -1, 1, -1, 1},
        // the swap left to the plan (automatic), as the op runs by default, on a Llama-2-70B-like
        // shape where the model picks it
        Case{"swiglu_auto_swap_m144_h2048_f5632", S, 144, 2048, 5632, Auto, 0, 0, 0, 0, false, 0, 0, 0, 0, 0, -1, -1, -1, -1, 1},
        Case{"gelu_tuned_m8_h1024_f2048", G, 8, 1024, 2048, Auto, 0, 0, 0, 0, true},
        // a ragged last band of one row (m = 129, 257): its A box shortened to 8 rows, the other bands
        // full, under waits, split-K and wide tiles
        Case{"swiglu_kblock_m129", S, 129, 520, 344, KB},
        Case{"gelu_row_split2x2_m257", G, 257, 520, 344, RowP, 2, 2},
        Case{"swiglu_none_wide_m129", S, 129, 520, 344, None, 0, 0, 0, 0, false, 256, 256},
        // 64 < m < 128: A's TMA box shortened to 80, 96 or 112 rows (the upper MMA warp group reads
        // stale shared-memory rows past the box, which feed only rows >= m), under every policy
        Case{"gelu_none_m65", G, 65, 520, 344, None},
        Case{"swiglu_row_m96", S, 96, 520, 344, RowP},
        Case{"gelu_kblock_split3x2_m100", G, 100, 520, 344, KB, 3, 2},
        Case{"swiglu_none_m112_h1024_f2048", S, 112, 1024, 2048, None},
        // per-shape tuning keeps a correct plan
        Case{"gelu_tuned_m1000", G, 1000, 520, 344, Auto, 0, 0, 0, 0, true},
        Case{"swiglu_tuned_m200_h1024_f2048", S, 200, 1024, 2048, Auto, 0, 0, 0, 0, true}),
    case_name);

// ---- errors ---------------------------------------------------------------------------------------

class OpsMlpErrors : public bt::DeviceTest {};

TEST_F(OpsMlpErrors, ShapesAndArgumentsRejectedBeforeAnyLaunch) {
  auto buf = bt::dev_alloc<bf16>(1 << 20);
  ASSERT_TRUE(buf);
  bf16* p = buf.get();
  const ops::MlpTensors t{p, p, p, p, p};
  auto msg = [](const auto& r) { return r.ok() ? std::string("(ok)") : r.error().to_string(); };
  // H not a multiple of 8: TMA rows must be 16-byte multiples.
  auto r1 = TestMlp<G>::create({4, 100, 64, G}, t, stream);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().code(), errc::not_supported);
  EXPECT_NE(msg(r1).find("hidden and ffn must be multiples of 8"), std::string::npos) << msg(r1);
  // M = 0.
  auto r2 = TestMlp<G>::create({0, 128, 64, G}, t, stream);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(msg(r2).find("every extent must be >= 1"), std::string::npos) << msg(r2);
  // The activation of the shape must match the op's.
  auto r3 = TestMlp<S>::create({4, 128, 64, G}, t, stream);
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(msg(r3).find("shape.act is gelu"), std::string::npos) << msg(r3);
  // More split-K parts than k-blocks (H = 128: 2 k-blocks).
  ops::MlpRunOptions o;
  o.plan.gemm1.split_k = 3;
  auto r4 = TestMlp<G>::create({4, 128, 64, G}, t, stream, o);
  ASSERT_FALSE(r4.ok());
  EXPECT_NE(msg(r4).find("gemm1 split_k 3 must be in [1, 2]"), std::string::npos) << msg(r4);
  // A null tensor is caught by the GEMM's checks, named by GEMM.
  auto r5 = TestMlp<G>::create({4, 128, 64, G}, {p, p, p, p, nullptr}, stream);
  ASSERT_FALSE(r5.ok());
  EXPECT_NE(msg(r5).find("gemm2"), std::string::npos) << msg(r5);
  // An L2 prefetch amount out of range.
  ops::MlpRunOptions o6;
  o6.plan.l2_prefetch_mb = -2;
  auto r6 = TestMlp<G>::create({4, 128, 64, G}, t, stream, o6);
  ASSERT_FALSE(r6.ok());
  EXPECT_NE(msg(r6).find("l2_prefetch_mb must be"), std::string::npos) << msg(r6);
  // The swapped GEMM2 has no waiting form.
  ops::MlpRunOptions o7;
  o7.plan.policy = MlpPolicy::row;
  o7.plan.gemm2.operands = ops::GemmOperands::swapped;
  auto r7 = TestMlp<G>::create({4, 128, 64, G}, t, stream, o7);
  ASSERT_FALSE(r7.ok());
  EXPECT_EQ(r7.error().code(), errc::not_supported);
  EXPECT_NE(msg(r7).find("gemm2 swapped needs policy none"), std::string::npos) << msg(r7);
}

// Without -DBATON_MLP_EXTRA_KERNELS=ON, baton::mlp_kernels lacks the CTA-pair and 32-token swapped
// kernels: create() refuses a request for them (errc::not_supported, naming the form and the option)
// before anything is allocated, the library's functions for them return the same instead of
// launching, the forms that remain (160-token swapped tiles, unpaired 128x96) still build, and
// tuning skips the candidates that need them (saying so in its reason) instead of failing.
TEST_F(OpsMlpErrors, KernelFormsTheLibraryLacksAreRefusedNamingTheOption) {
  constexpr ops::MlpKernelForms have = TestMlp<G>::kernel_forms;
  static_assert(TestMlp<S>::kernel_forms == have, "one library, one set of forms for both activations");
  if (have.complete())
    GTEST_SKIP() << "baton::mlp_kernels has the CTA-pair and 32-token swapped kernels (BATON_MLP_EXTRA_KERNELS=ON): "
                    "nothing to refuse; the OpsMlp cases run them";
  constexpr int h = 264, f = 344, m_max = 128;
  auto buf = bt::dev_alloc<bf16>(size_t(1) << 20);
  ASSERT_TRUE(buf);
  bf16* p = buf.get();
  // Separate regions (x, w1 for SwiGLU, w2, y, z) in one buffer, zeroed: the tuned ops run.
  BT_CUDA(cudaMemsetAsync(p, 0, (size_t(1) << 20) * sizeof(bf16), stream));
  const ops::MlpTensors t{p, p + (1 << 16), p + (1 << 18), p + (3 << 17), p + (7 << 17)};
  static_assert(size_t(m_max) * h <= (1 << 16) && 2 * f * h <= (1 << 17) + (1 << 16) && size_t(h) * f <= (1 << 17) &&
                size_t(m_max) * f <= (1 << 17) && size_t(m_max) * h <= (1 << 17));
  auto refused = [&](const auto& r, const char* what) {
    ASSERT_FALSE(r.ok()) << what << ": created";
    EXPECT_EQ(r.error().code(), errc::not_supported) << r.error().to_string();
    EXPECT_NE(r.error().message().find(what), std::string::npos) << r.error().to_string();
    EXPECT_NE(r.error().message().find("configure baton with -DBATON_MLP_EXTRA_KERNELS=ON"), std::string::npos)
        << r.error().to_string();
  };
  auto none = [] {
    ops::MlpRunOptions o;
    o.plan.policy = MlpPolicy::none;
    return o;
  };
  if (!have.cta_pairs) {
    ops::MlpRunOptions o = none();
    o.plan.gemm1.tile = 96;
    o.plan.gemm1.cta_pairs = true;
    refused(TestMlp<G>::create({m_max, h, f, G}, t, stream, o), "gemm1 asks for CTA pairs");
    o = none();
    o.plan.gemm2.cta_pairs = true;  // whatever width the plan would give it
    refused(TestMlp<S>::create({m_max, h, f, S}, t, stream, o), "gemm2 asks for CTA pairs");
    auto direct = ops::mlp_kernels::Compiled<G>::up_pair(ops::mlp_kernels::PlainStage{}, {});
    refused(direct, "up_pair");
    // The unpaired 128x96 GEMMs are there.
    o = none();
    o.plan.gemm1.tile = o.plan.gemm2.tile = 96;
    auto narrow = TestMlp<G>::create({m_max, h, f, G}, t, stream, o);
    EXPECT_TRUE(narrow.ok()) << narrow.error().to_string();
  }
  if (!have.narrow_swapped) {
    ops::MlpRunOptions o = none();
    o.plan.gemm2.operands = ops::GemmOperands::swapped;  // tile left open: 32 tokens at m <= 32
    refused(TestMlp<S>::create({4, h, f, S}, t, stream, o), "gemm2 swapped in 32-token tiles");
    o = none();
    o.plan.gemm1.operands = ops::GemmOperands::swapped;
    refused(TestMlp<G>::create({17, h, f, G}, t, stream, o), "gemm1 swapped in 32-token tiles");
    o = none();
    o.plan.gemm2.operands = ops::GemmOperands::swapped;
    o.plan.gemm2.tile = 32;  // asked for by width, past 32 tokens
    refused(TestMlp<G>::create({100, h, f, G}, t, stream, o), "gemm2 swapped in 32-token tiles");
    auto direct = ops::mlp_kernels::Compiled<G>::down_swapped_after_grid(ops::mlp_kernels::PlainStage{}, {});
    refused(direct, "down_swapped_after_grid");
    // The 160-token tile at decode, and SwiGLU's swapped GEMM1 (160 tokens at any m), are there.
    o.plan.gemm2.tile = 160;
    auto wide = TestMlp<G>::create({4, h, f, G}, t, stream, o);
    EXPECT_TRUE(wide.ok()) << wide.error().to_string();
    o = none();
    o.plan.gemm1.operands = ops::GemmOperands::swapped;
    auto swiglu = TestMlp<S>::create({4, h, f, S}, t, stream, o);
    EXPECT_TRUE(swiglu.ok()) << swiglu.error().to_string();
  }
  // Tuning where it would try them (CTA pairs from m = 128 with tune_cta_pairs; the 32-token swapped
  // GEMMs at m <= 32): it keeps a plan of the kernels there are and says what it left out.
  for (int m : {8, m_max}) {
    ops::MlpRunOptions o;
    o.tune = true;
    o.tune_iters = 3;
    o.tune_cache = false;
    o.tune_cta_pairs = true;
    auto r = TestMlp<G>::create({m, h, f, G}, t, stream, o);
    ASSERT_TRUE(r.ok()) << "m=" << m << ": " << r.error().to_string();
    const ops::MlpPlan& pl = r.value()->plan();
    for (const ops::GemmForm& fm : {pl.form1, pl.form2}) {
      EXPECT_FALSE(fm.cta_pairs && !have.cta_pairs) << pl.log_line();
      EXPECT_FALSE(fm.operands == ops::GemmOperands::swapped && fm.tile == 32 && !have.narrow_swapped) << pl.log_line();
    }
    if (m <= 32 ? !have.narrow_swapped : !have.cta_pairs)
      EXPECT_NE(pl.reason.find("not tried"), std::string::npos) << pl.log_line();
    BT_ASSERT_OK(r.value()->enqueue(stream));
    BT_ASSERT_OK(r.value()->check_errors(stream));
  }
}

// GemmArguments::next_weights is checked with the GEMM's other arguments, and its size is what the
// kernel prefetches.
TEST_F(OpsMlpErrors, NextWeightsChecked) {
  using Cfg = ops::mlp_kernels::GeluConfig;
  using G1 = sm90::Gemm<Cfg, ops::mlp_kernels::PlainStage>;
  auto buf = bt::dev_alloc<bf16>(1 << 16);
  ASSERT_TRUE(buf);
  bf16* p = buf.get();
  sm90::GemmArguments<Cfg> a{4, 128, 128, p, p, p};
  a.next_weights = {p, 128, 128, 128, 64, 1, 2};
  {
    const status st = G1::can_implement(a);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  EXPECT_EQ(a.next_weights.bytes(), size_t(128) * 128 * 2);
  a.next_weights.k_blocks = 1;
  EXPECT_EQ(a.next_weights.bytes(), size_t(128) * 64 * 2);
  a.next_weights.split_k = 2;  // each of the 2 parts: its first k-block
  EXPECT_EQ(a.next_weights.bytes(), size_t(128) * 128 * 2);
  auto fails_with = [&](const char* what) {
    const status st = G1::can_implement(a);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_NE(st.to_string().find(what), std::string::npos) << st.to_string();
  };
  a.next_weights.split_k = 3;
  fails_with("split_k=3 must be in [1, 2]");
  a.next_weights.split_k = 1;
  a.next_weights.k = 100;
  fails_with("k a multiple of 8");
  a.next_weights.k = 128;
  a.next_weights.b = nullptr;
  fails_with("b non-null");
  a.next_weights.b = p;
  a.next_weights.k_blocks = -1;
  fails_with("k_blocks must be >= 0");
  a.next_weights.k_blocks = 0;  // off: nothing else is looked at
  a.next_weights.b = nullptr;
  {
    const status st = G1::can_implement(a);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
}

}  // namespace

namespace {
// A small GeLU MLP with random operands on the device (the tuning-cache and stream tests): X, W1,
// W2 copied up, Y and Z allocated.
struct SmallGeluMlp {
  int m, h, f;
  bt::dev_ptr<bf16> dx, dw1, dw2, dy, dz;
  SmallGeluMlp(int m_, int h_, int f_, unsigned seed)
      : m(m_), h(h_), f(f_), dx(bt::dev_alloc<bf16>(size_t(m) * h)), dw1(bt::dev_alloc<bf16>(size_t(f) * h)),
        dw2(bt::dev_alloc<bf16>(size_t(h) * f)), dy(bt::dev_alloc<bf16>(size_t(m) * f)), dz(bt::dev_alloc<bf16>(size_t(m) * h)) {
    unsigned r = seed;
    auto rnd = [&] { r = r * 1664525u + 1013904223u; return bf16(float(int(r >> 9) % 2001 - 1000) / 4000.f); };
    auto up = [&](bt::dev_ptr<bf16>& d, size_t n) {
      std::vector<bf16> v(n);
      for (auto& e : v) e = rnd();
      if (d) (void)cudaMemcpy(d.get(), v.data(), n * sizeof(bf16), cudaMemcpyHostToDevice);
    };
    up(dx, size_t(m) * h);
    up(dw1, size_t(f) * h);
    up(dw2, size_t(h) * f);
  }
  bool ok() const { return dx && dw1 && dw2 && dy && dz; }
  ops::MlpShape shape() const { return {m, h, f, Activation::gelu}; }
  ops::MlpTensors tensors() const { return {dx.get(), dw1.get(), dw2.get(), dy.get(), dz.get()}; }
  size_t z_elems() const { return size_t(m) * h; }
};

// The tuning cache (MlpRunOptions::tune_cache, baton/ops/tuner.hpp): a second tuned create() of a
// shape builds the plan found by the first without timing anything, bit-identical Z; with a cache
// file, a "later process" (the global cache cleared) finds it too.
TEST(OpsMlpTuneCache, SecondCreateHitsTheCacheAndTheFileOutlivesTheProcessCache) {
  if (!baton::require_device().ok()) GTEST_SKIP() << "no device";
  SmallGeluMlp t(40, 264, 344, 7);
  ASSERT_TRUE(t.ok());
  cudaStream_t stream = nullptr;
  BT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::string file = std::string(::testing::TempDir()) + "baton_ops_tune_cache.txt";
  std::remove(file.c_str());
  ops::TuneCache::global().clear();
  ops::MlpRunOptions o;
  o.tune = true;
  o.tune_iters = 3;
  o.log = false;
  o.tune_cache_file = file;
  auto run = [&](std::vector<bf16>& z, std::string& reason) {
    auto op = TestMlp<Activation::gelu>::create(t.shape(), t.tensors(), stream, o);
    ASSERT_TRUE(op.ok()) << op.error().to_string();
    reason = op.value()->plan().reason;
    BT_CUDA(cudaMemsetAsync(t.dz.get(), 0xFF, t.z_elems() * sizeof(bf16), stream));
    BT_ASSERT_OK(op.value()->enqueue(stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    z.resize(t.z_elems());
    BT_CUDA(cudaMemcpy(z.data(), t.dz.get(), z.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  };
  std::vector<bf16> z1, z2, z3;
  std::string why1, why2, why3;
  run(z1, why1);
  EXPECT_NE(why1.find("tuned on this GPU"), std::string::npos) << why1;
  EXPECT_EQ(ops::TuneCache::global().size(), 1u);
  run(z2, why2);
  EXPECT_NE(why2.find("tuned earlier on this GPU (tuning cache)"), std::string::npos) << why2;
  ops::TuneCache::global().clear();  // a later process: only the file remains
  run(z3, why3);
  EXPECT_NE(why3.find("tuning cache"), std::string::npos) << why3;
  EXPECT_EQ(std::memcmp(z1.data(), z2.data(), z1.size() * sizeof(bf16)), 0) << "the cached plan is the tuned plan";
  EXPECT_EQ(std::memcmp(z1.data(), z3.data(), z1.size() * sizeof(bf16)), 0);
  std::remove(file.c_str());
  ops::TuneCache::global().clear();
  (void)cudaStreamDestroy(stream);
}

// The ops take any cudaStream_t, the legacy stream 0 included (the async layer refuses 0, but the
// op's tuning records raw events, so it never reaches that refusal): create() with tuning and with
// none on stream 0, then enqueue on it; the untuned op gives Z bit-identical to the same plan on a
// stream of its own, the tuned one a correct Z (its plan may split differently).
TEST(OpsMlpStreams, TheLegacyStreamZeroServesCreateTuningAndEnqueue) {
  if (!baton::require_device().ok()) GTEST_SKIP() << "no device";
  SmallGeluMlp t(72, 264, 344, 11);
  ASSERT_TRUE(t.ok());
  cudaStream_t own = nullptr;
  BT_CUDA(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  ops::TuneCache::global().clear();
  auto run = [&](cudaStream_t s, bool tune, std::vector<bf16>& z) {
    ops::MlpRunOptions o;
    o.tune = tune;
    o.tune_iters = 3;
    o.log = false;
    auto op = TestMlp<Activation::gelu>::create(t.shape(), t.tensors(), s, o);
    ASSERT_TRUE(op.ok()) << (s ? "own stream: " : "stream 0: ") << op.error().to_string();
    BT_CUDA(cudaMemsetAsync(t.dz.get(), 0xFF, t.z_elems() * sizeof(bf16), s));
    BT_ASSERT_OK(op.value()->enqueue(s));
    BT_ASSERT_OK(op.value()->check_errors(s));
    BT_CUDA(cudaStreamSynchronize(s));
    z.resize(t.z_elems());
    BT_CUDA(cudaMemcpy(z.data(), t.dz.get(), z.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  };
  std::vector<bf16> z_own, z_zero, z_tuned;
  run(own, false, z_own);
  run(nullptr, false, z_zero);
  run(nullptr, true, z_tuned);
  EXPECT_EQ(std::memcmp(z_own.data(), z_zero.data(), z_own.size() * sizeof(bf16)), 0) << "same plan, stream 0";
  double num = 0, den = 0;
  for (size_t i = 0; i < z_own.size(); ++i) {
    const double a = float(z_tuned[i]), b = float(z_own[i]);
    ASSERT_TRUE(std::isfinite(a)) << "Z[" << i << "] of the op tuned on stream 0 is not written";
    num += (a - b) * (a - b);
    den += b * b;
  }
  EXPECT_LT(std::sqrt(num / std::max(den, 1e-30)), 1e-2) << "the op tuned on stream 0 against the untuned one";
  ops::TuneCache::global().clear();
  (void)cudaStreamDestroy(own);
}
}  // namespace
