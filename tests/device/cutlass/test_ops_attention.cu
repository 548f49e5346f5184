// Device tests (label gpu) of the attention op, baton::ops::Attention (include/baton/ops/attention/),
// as CompiledAttention over the library baton::attention_kernels (kernels/attention/):
//   * the GEMMs without edges flat on baton::mlp_kernels' forms (every width, split-K, swapped);
//   * every pair of edge policies (none / kblock on QKV -> attention and attention -> O-proj: the
//     four FMHA forms) x shapes: one query block, whole blocks, ragged sequences (seq not a multiple
//     of 128, and not of 8: padded), several sequences (grid z), tensor parallelism (hidden =
//     2 * heads * 128), several heads;
//   * a 10^4-pass random-delay stress of the waiting chain (each tile's loads start after up to 3 us;
//     BATON_TEST_SCALE divides the count): every checked run's output equals the first's bit for bit
//     (the loads are in order, so the sums are too);
//   * key blocks loaded as they are published (load_published_first), with and without delays;
//   * tuning (AttentionRunOptions::tune): the pair it keeps is correct, a fixed edge stays fixed;
//   * decode: m = 1..16 new tokens against a KV cache (split-KV or not, a cache with room past kv_len):
//     O and Y against the reference, the new K/V appended to the caches, nothing else written;
//   * errors: decode without caches, a head_dim other than 128, null, misaligned or overlapping tensors are refused
//     by create() with the field named, and nothing is launched (the output keeps its poison).
// Each case NaN-poisons QKV, O and Y before every run and compares Y (and O) with a CPU reference
// that rounds QKV and O to bf16 where the kernels store them: relative Frobenius error < 1e-2 and
// every element within 3e-2 * max|ref|; padding rows are not compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../device_test_util.cuh"
#include "random_bf16.hpp"
#include "baton/ops/attention/attention.cuh"

using namespace baton;
using baton::ops::AttentionEdgePolicy;
using bf16 = ::cutlass::bfloat16_t;
using Op = ops::CompiledAttention;

namespace {

using bt::parallel_for;

struct Data {
  ops::AttentionShape shape;
  std::vector<bf16> x, wqkv, wo;      // x [batch, padded_seq, hidden] (padding rows random too)
  std::vector<double> o_ref, y_ref;   // [batch, seq, width] and [batch, seq, hidden] (real rows only)
};

float bf(double v) { return float(bf16(float(v))); }

// QKV = X W_qkv^T for the real rows (seq of each sequence's padded_seq() rows of x), each value rounded
// to bf16 as the GEMM stores it: [batch, seq, 3 * width].
std::vector<float> qkv_reference(const ops::AttentionShape& s, const std::vector<bf16>& x, const std::vector<bf16>& wqkv) {
  const int S = s.padded_seq(), W = s.width(), H = s.hidden;
  std::vector<float> qkv(size_t(s.batch) * s.seq * 3 * W);
  parallel_for(size_t(s.batch) * s.seq, [&](size_t r) {
    const size_t b = r / s.seq, i = r % s.seq;
    const bf16* xr = &x[(b * S + i) * H];
    for (int c = 0; c < 3 * W; ++c) {
      double acc = 0;
      const bf16* wr = &wqkv[size_t(c) * H];
      for (int k = 0; k < H; ++k) acc += double(float(xr[k])) * double(float(wr[k]));
      qkv[r * 3 * W + c] = bf(acc);
    }
  });
  return qkv;
}

Data make_data(const ops::AttentionShape& s) {
  Data d{s, {}, {}, {}, {}, {}};
  const int S = s.padded_seq(), W = s.width(), H = s.hidden, D = s.head_dim;
  d.x = bt::random_bf16(size_t(s.batch) * S * H, 31, 1.0f);
  d.wqkv = bt::random_bf16(size_t(3) * W * H, 32, 2.0f / std::sqrt(float(H)));
  d.wo = bt::random_bf16(size_t(H) * W, 33, 1.0f / std::sqrt(float(W)));
  // QKV for the real rows (padding rows are never attended: causal, and real queries come first).
  const std::vector<float> qkv = qkv_reference(s, d.x, d.wqkv);
  // Causal attention per (sequence, head, query), O rounded to bf16.
  d.o_ref.assign(size_t(s.batch) * s.seq * W, 0.0);
  const double scale = 1.0 / std::sqrt(double(D));
  parallel_for(size_t(s.batch) * s.heads * s.seq, [&](size_t job) {
    const size_t i = job % s.seq, h = job / s.seq % s.heads, b = job / (size_t(s.seq) * s.heads);
    const float* q = &qkv[(b * s.seq + i) * 3 * W + h * D];
    std::vector<double> p(i + 1);
    double mx = -1e300;
    for (size_t j = 0; j <= i; ++j) {
      const float* k = &qkv[(b * s.seq + j) * 3 * W + W + h * D];
      double dot = 0;
      for (int c = 0; c < D; ++c) dot += double(q[c]) * double(k[c]);
      p[j] = dot * scale;
      mx = std::max(mx, p[j]);
    }
    double sum = 0;
    for (auto& v : p) sum += (v = std::exp(v - mx));
    for (int c = 0; c < D; ++c) {
      double acc = 0;
      for (size_t j = 0; j <= i; ++j) acc += p[j] * double(qkv[(b * s.seq + j) * 3 * W + 2 * W + h * D + c]);
      d.o_ref[(b * s.seq + i) * W + h * D + c] = acc / sum;
    }
  });
  d.y_ref.assign(size_t(s.batch) * s.seq * H, 0.0);
  parallel_for(size_t(s.batch) * s.seq, [&](size_t r) {
    for (int c = 0; c < H; ++c) {
      double acc = 0;
      const bf16* wr = &d.wo[size_t(c) * W];
      for (int k = 0; k < W; ++k) acc += double(bf(d.o_ref[r * W + k])) * double(float(wr[k]));
      d.y_ref[r * H + c] = acc;
    }
  });
  return d;
}

const Data& data(const ops::AttentionShape& s) {
  static std::map<std::string, Data> cache;
  auto it = cache.find(s.str());
  if (it == cache.end()) it = cache.emplace(s.str(), make_data(s)).first;
  return it->second;
}

struct Buffers {
  bt::dev_ptr<bf16> x, wqkv, qkv, o, wo, y;
  ops::AttentionTensors t;
};

Buffers upload(const Data& d, cudaStream_t stream) {
  Buffers b;
  const ops::AttentionShape& s = d.shape;
  const size_t rows = size_t(s.padded_tokens());
  b.x = bt::dev_alloc<bf16>(d.x.size());
  b.wqkv = bt::dev_alloc<bf16>(d.wqkv.size());
  b.qkv = bt::dev_alloc<bf16>(rows * 3 * s.width());
  b.o = bt::dev_alloc<bf16>(rows * s.width());
  b.wo = bt::dev_alloc<bf16>(d.wo.size());
  b.y = bt::dev_alloc<bf16>(rows * s.hidden);
  auto put = [&](bf16* dst, const std::vector<bf16>& v) {
    (void)cudaMemcpyAsync(dst, v.data(), v.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream);
  };
  put(b.x.get(), d.x);
  put(b.wqkv.get(), d.wqkv);
  put(b.wo.get(), d.wo);
  b.t = {b.x.get(), b.wqkv.get(), b.qkv.get(), b.o.get(), b.wo.get(), b.y.get()};
  return b;
}

// Compares the real rows of `got` ([batch, padded_seq, cols]) with `ref` ([batch, seq, cols]).
::testing::AssertionResult close(const ops::AttentionShape& s, const std::vector<bf16>& got, const std::vector<double>& ref,
                                 int cols, const char* what) {
  double err = 0, norm = 0, maxref = 0;
  for (double v : ref) maxref = std::max(maxref, std::abs(v));
  size_t bad = 0, first_bad = 0;
  for (int b = 0; b < s.batch; ++b)
    for (int i = 0; i < s.seq; ++i)
      for (int c = 0; c < cols; ++c) {
        const size_t ri = (size_t(b) * s.seq + i) * cols + c, gi = (size_t(b) * s.padded_seq() + i) * cols + c;
        const double v = double(float(got[gi])), e = v - ref[ri];
        err += e * e;
        norm += ref[ri] * ref[ri];
        if (!(std::abs(e) <= 3e-2 * maxref + 1e-3) && bad++ == 0) first_bad = ri;
      }
  const double rel = std::sqrt(err / std::max(norm, 1e-30));
  if (rel < 1e-2 && bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": relative error " << rel << ", " << bad << " elements off, first at "
                                       << first_bad << " (ref " << ref[first_bad] << ")";
}

class AttentionTest : public bt::DeviceTest {
 protected:
  void run_and_check(const ops::AttentionShape& s, ops::AttentionRunOptions o, int runs = 2) {
    const Data& d = data(s);
    Buffers b = upload(d, stream);
    o.log = false;
    auto op = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(op.ok()) << s.str() << ": " << op.error().to_string();
    const std::string plan = op.value()->plan().log_line();
    const size_t rows = size_t(s.padded_tokens());
    for (int run = 0; run < runs; ++run) {
      BT_CUDA(cudaMemsetAsync(b.qkv.get(), 0xFF, rows * 3 * s.width() * sizeof(bf16), stream));  // NaN
      BT_CUDA(cudaMemsetAsync(b.o.get(), 0xFF, rows * s.width() * sizeof(bf16), stream));
      BT_CUDA(cudaMemsetAsync(b.y.get(), 0xFF, rows * s.hidden * sizeof(bf16), stream));
      BT_ASSERT_OK(op.value()->enqueue(stream));
      BT_ASSERT_OK(op.value()->check_errors(stream));
      ASSERT_TRUE(close(s, download(b.o.get(), rows * s.width()), d.o_ref, s.width(), "O")) << plan;
      ASSERT_TRUE(close(s, download(b.y.get(), rows * s.hidden), d.y_ref, s.hidden, "Y")) << plan;
    }
  }
};

ops::AttentionShape prefill(int batch, int seq, int heads, int tp = 1) {
  return ops::AttentionShape{.batch = batch, .seq = seq, .heads = heads, .hidden = tp * heads * 128};
}

const ops::AttentionShape kShapes[] = {
    prefill(1, 128, 1),     // one query block, one head
    prefill(1, 512, 2),     // whole blocks: query blocks walk 1..4 key blocks
    prefill(2, 200, 2),     // ragged: 2 blocks per sequence, the second partial; 2 sequences on grid z
    prefill(1, 77, 1),      // padded 77 -> 80 queries
    prefill(3, 8, 1),       // one 8-query block per sequence
    prefill(1, 384, 2, 2),  // tensor parallelism: hidden = 2 * heads * 128
};

TEST_F(AttentionTest, EveryEdgePolicyPairMatchesTheReference) {
  for (const auto& s : kShapes)
    for (auto p1 : {AttentionEdgePolicy::none, AttentionEdgePolicy::kblock})
      for (auto p2 : {AttentionEdgePolicy::none, AttentionEdgePolicy::kblock}) {
        SCOPED_TRACE(s.str() + " qkv->attn " + ops::to_string(p1) + " attn->oproj " + ops::to_string(p2));
        ops::AttentionRunOptions o;
        o.plan.qkv_to_attention = p1;
        o.plan.attention_to_oproj = p2;
        run_and_check(s, o);
      }
}

// The GEMMs without edges run flat on baton::mlp_kernels' GEMM2 forms: every tile width (the plain
// 160 and 224 of kMlpExtendedTileWidths included: plan_free_gemm weighs them too), split-K,
// the swapped forms at small M, each GEMM on its own and with the other edge waiting.
TEST_F(AttentionTest, FlatGemmFormsMatchTheReference) {
  using ops::GemmOperands;
  struct Form {
    std::optional<GemmOperands> operands;
    int tile, split;
  };
  const Form forms[] = {{GemmOperands::plain, 96, 1},    {GemmOperands::plain, 128, 2},  {GemmOperands::plain, 192, 1},
                        {GemmOperands::plain, 256, 3},   {GemmOperands::plain, 160, 1},  {GemmOperands::plain, 224, 2},
                        {GemmOperands::swapped, 160, 1}, {GemmOperands::swapped, 192, 2}};
  for (const auto& s : {prefill(1, 128, 1), prefill(2, 200, 2), prefill(1, 77, 1, 2)})
    for (const Form& f : forms) {
      if (f.operands == GemmOperands::swapped && s.padded_tokens() > f.tile) continue;
      // Split-K parts up to each GEMM's k-blocks.
      const ops::GemmFormRequest rq{f.operands, f.tile, std::min(f.split, s.qkv_k_blocks()), std::nullopt, std::nullopt};
      const ops::GemmFormRequest ro{f.operands, f.tile, std::min(f.split, s.oproj_k_blocks()), std::nullopt, std::nullopt};
      for (int which = 0; which < 3; ++which) {  // qkv flat, oproj flat, both (the other edge kblock)
        ops::AttentionRunOptions o;
        o.plan.qkv_to_attention = which == 1 ? AttentionEdgePolicy::kblock : AttentionEdgePolicy::none;
        o.plan.attention_to_oproj = which == 0 ? AttentionEdgePolicy::kblock : AttentionEdgePolicy::none;
        if (which != 1) o.plan.qkv_gemm = rq;
        if (which != 0) o.plan.oproj_gemm = ro;
        SCOPED_TRACE(s.str() + " form " + std::to_string(f.tile) + (f.operands == GemmOperands::swapped ? " swapped" : "") +
                     " split " + std::to_string(f.split) + " case " + std::to_string(which));
        run_and_check(s, o);
      }
    }
  // The stages one at a time (enqueue_stage, the bench's breakdown) compute the chain; with a kblock
  // edge they are refused.
  {
    const ops::AttentionShape s = prefill(2, 200, 2);
    const Data& d = data(s);
    Buffers b = upload(d, stream);
    ops::AttentionRunOptions o;
    o.log = false;
    o.plan.qkv_to_attention = o.plan.attention_to_oproj = AttentionEdgePolicy::none;
    auto op = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(op.ok()) << op.error().to_string();
    const size_t rows = size_t(s.padded_tokens());
    BT_CUDA(cudaMemsetAsync(b.y.get(), 0xFF, rows * s.hidden * sizeof(bf16), stream));
    for (int i = 0; i < 3; ++i) BT_ASSERT_OK(op.value()->enqueue_stage(i, stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    EXPECT_TRUE(close(s, download(b.y.get(), rows * s.hidden), d.y_ref, s.hidden, "Y (stages one at a time)"));
    EXPECT_EQ(op.value()->enqueue_stage(3, stream).code(), errc::invalid_argument);
    o.plan.qkv_to_attention = AttentionEdgePolicy::kblock;
    auto waiting = Op::create(s, b.t, stream, o);
    ASSERT_TRUE(waiting.ok()) << waiting.error().to_string();
    EXPECT_EQ(waiting.value()->enqueue_stage(0, stream).code(), errc::not_supported);
  }
  // A form the library lacks (CTA pairs without BATON_MLP_EXTRA_KERNELS) is refused by name.
  if constexpr (!Op::gemm_forms.cta_pairs) {
    const ops::AttentionShape s = prefill(1, 128, 1);
    Buffers b = upload(data(s), stream);
    ops::AttentionRunOptions o;
    o.log = false;
    o.plan.oproj_gemm = ops::GemmFormRequest{ops::GemmOperands::plain, 96, 1, true, {}, {}};
    auto op = Op::create(s, b.t, stream, o);
    ASSERT_FALSE(op.ok());
    EXPECT_NE(op.error().to_string().find("BATON_MLP_EXTRA_KERNELS"), std::string::npos) << op.error().to_string();
  }
}

TEST_F(AttentionTest, AutomaticPlanMatchesTheReference) {
  for (const auto& s : kShapes) run_and_check(s, {});
}

// Key blocks loaded as they are published (FmhaArguments::load_published_first): every checked run
// matches the reference (not bit for bit: the online softmax sums in arrival order), under the
// random delays that reorder the QKV tiles' posts.
TEST_F(AttentionTest, KeyBlocksLoadedAsPublishedMatchTheReference) {
  for (const auto& s : {prefill(1, 1024, 2), prefill(2, 200, 2), prefill(1, 77, 1)}) {
    ops::AttentionRunOptions o;
    o.plan.qkv_to_attention = o.plan.attention_to_oproj = AttentionEdgePolicy::kblock;
    o.load_published_first = true;
    run_and_check(s, o);
    o.debug_max_tile_delay_ns = 3000;
    run_and_check(s, o, bt::scaled(200));
  }
}

TEST_F(AttentionTest, TunedChainIsCorrect) {
  for (const auto& s : {prefill(1, 512, 2), prefill(2, 200, 2)}) {
    ops::AttentionRunOptions o;
    o.tune = true;
    o.tune_cache = false;
    o.tune_iters = 10;
    run_and_check(s, o);
  }
  // A fixed edge stays fixed: only the other edge is tuned.
  ops::AttentionRunOptions o;
  o.tune = true;
  o.tune_cache = false;
  o.tune_iters = 10;
  o.plan.qkv_to_attention = AttentionEdgePolicy::none;
  const ops::AttentionShape s = prefill(1, 256, 2);
  Buffers b = upload(data(s), stream);
  o.log = false;
  auto op = Op::create(s, b.t, stream, o);
  ASSERT_TRUE(op.ok()) << op.error().to_string();
  EXPECT_EQ(op.value()->plan().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_NE(op.value()->plan().reason.find("tuned"), std::string::npos) << op.value()->plan().reason;
}

TEST_F(AttentionTest, RandomDelayStressMatchesBitForBit) {
  const ops::AttentionShape s = prefill(2, 320, 2);
  const Data& d = data(s);
  Buffers b = upload(d, stream);
  ops::AttentionRunOptions o;
  o.log = false;
  o.plan.qkv_to_attention = o.plan.attention_to_oproj = AttentionEdgePolicy::kblock;
  o.debug_max_tile_delay_ns = 3000;
  auto op = Op::create(s, b.t, stream, o);
  ASSERT_TRUE(op.ok()) << op.error().to_string();
  const size_t n = size_t(s.padded_tokens()) * s.hidden;
  std::vector<bf16> first;
  const int runs = bt::scaled(10000);
  for (int run = 0; run < runs; ++run) {
    BT_CUDA(cudaMemsetAsync(b.y.get(), 0xFF, n * sizeof(bf16), stream));
    BT_ASSERT_OK(op.value()->enqueue(stream));
    if (run == 0 || run == runs - 1 || run % 97 == 0) {
      BT_ASSERT_OK(op.value()->check_errors(stream));
      auto y = download(b.y.get(), n);
      if (run == 0) {
        ASSERT_TRUE(close(s, y, d.y_ref, s.hidden, "Y"));
        first = y;
      } else {
        ASSERT_EQ(0, std::memcmp(first.data(), y.data(), n * sizeof(bf16))) << "run " << run << " differs from run 0";
      }
    }
  }
  BT_ASSERT_OK(op.value()->check_errors(stream));
}

// ---- decode ------------------------------------------------------------------------------------------

ops::AttentionShape decode_shape(int batch, int m, int kv_len, int heads, int tp = 1, int capacity = 0) {
  return ops::AttentionShape{.mode = ops::AttentionMode::decode, .batch = batch, .seq = m, .kv_len = kv_len,
                             .kv_capacity = capacity, .heads = heads, .hidden = tp * heads * 128};
}

struct DecodeData {
  ops::AttentionShape shape;
  std::vector<bf16> x, wqkv, wo, kc, vc;  // kc / vc: the caches before the step (rows >= old: poison)
  std::vector<bf16> k_new, v_new;         // [batch, m, width]: what the step appends (bf16 QKV)
  std::vector<double> o_ref, y_ref;       // [batch, m, width], [batch, m, hidden]
};

DecodeData make_decode(const ops::AttentionShape& s) {
  DecodeData d;
  d.shape = s;
  const int M = s.padded_seq(), W = s.width(), H = s.hidden, D = 128, R = s.cache_rows(), old = s.old_keys();
  d.x = bt::random_bf16(size_t(s.batch) * M * H, 41, 1.0f);
  d.wqkv = bt::random_bf16(size_t(3) * W * H, 42, 2.0f / std::sqrt(float(H)));
  d.wo = bt::random_bf16(size_t(H) * W, 43, 1.0f / std::sqrt(float(W)));
  d.kc = bt::random_bf16(size_t(s.batch) * R * W, 44, 1.0f);
  d.vc = bt::random_bf16(size_t(s.batch) * R * W, 45, 1.0f);
  for (int b = 0; b < s.batch; ++b)  // rows the step writes or never reads: NaN, so a stray read shows
    for (int r = old; r < R; ++r)
      for (int c = 0; c < W; ++c) {
        d.kc[(size_t(b) * R + r) * W + c] = bf16(std::nanf(""));
        d.vc[(size_t(b) * R + r) * W + c] = bf16(std::nanf(""));
      }
  const std::vector<float> qkv = qkv_reference(s, d.x, d.wqkv);
  d.k_new.resize(size_t(s.batch) * s.seq * W);
  d.v_new.resize(d.k_new.size());
  for (size_t r = 0; r < size_t(s.batch) * s.seq; ++r)
    for (int c = 0; c < W; ++c) {
      d.k_new[r * W + c] = bf16(qkv[r * 3 * W + W + c]);
      d.v_new[r * W + c] = bf16(qkv[r * 3 * W + 2 * W + c]);
    }
  auto key = [&](size_t b, int j, int h, int c, bool v) -> double {  // key j of sequence b after the append
    if (j < old) return double(float((v ? d.vc : d.kc)[(b * R + j) * W + h * D + c]));
    return double(qkv[(b * s.seq + (j - old)) * 3 * W + (v ? 2 : 1) * W + h * D + c]);
  };
  d.o_ref.assign(size_t(s.batch) * s.seq * W, 0.0);
  parallel_for(size_t(s.batch) * s.heads * s.seq, [&](size_t job) {
    const int i = int(job % s.seq), h = int(job / s.seq % s.heads);
    const size_t b = job / (size_t(s.seq) * s.heads);
    const float* q = &qkv[(b * s.seq + i) * 3 * W + h * D];
    const int n = old + i + 1;  // causal, aligned to the cache's end
    std::vector<double> p(static_cast<size_t>(n), 0.0);
    double mx = -1e300;
    for (int j = 0; j < n; ++j) {
      double dot = 0;
      for (int c = 0; c < D; ++c) dot += double(q[c]) * key(b, j, h, c, false);
      p[size_t(j)] = dot / std::sqrt(double(D));
      mx = std::max(mx, p[size_t(j)]);
    }
    double sum = 0;
    for (auto& v : p) sum += (v = std::exp(v - mx));
    for (int c = 0; c < D; ++c) {
      double acc = 0;
      for (int j = 0; j < n; ++j) acc += p[size_t(j)] * key(b, j, h, c, true);
      d.o_ref[(b * s.seq + i) * W + h * D + c] = acc / sum;
    }
  });
  d.y_ref.assign(size_t(s.batch) * s.seq * H, 0.0);
  parallel_for(size_t(s.batch) * s.seq, [&](size_t r) {
    for (int c = 0; c < H; ++c) {
      double acc = 0;
      for (int k = 0; k < W; ++k) acc += double(bf(d.o_ref[r * W + k])) * double(float(d.wo[size_t(c) * W + k]));
      d.y_ref[r * H + c] = acc;
    }
  });
  return d;
}

// One decode step (twice: the append is idempotent) against the reference: O and Y, O's padding rows
// zero, the caches' rows old..kv_len-1 equal to the new K / V (bf16 QKV) and every other row as it was.
void check_decode(cudaStream_t stream, const ops::AttentionShape& s, std::optional<int> kv_splits) {
  SCOPED_TRACE(s.str() + " kv_splits " + (kv_splits ? std::to_string(*kv_splits) : std::string("planned")));
  const DecodeData d = make_decode(s);
  const size_t rows = size_t(s.padded_tokens()), W = size_t(s.width()), R = size_t(s.cache_rows());
  auto x = bt::dev_alloc<bf16>(d.x.size()), wqkv = bt::dev_alloc<bf16>(d.wqkv.size()), wo = bt::dev_alloc<bf16>(d.wo.size());
  auto qkv = bt::dev_alloc<bf16>(rows * 3 * W), o = bt::dev_alloc<bf16>(rows * W), y = bt::dev_alloc<bf16>(rows * s.hidden);
  auto kc = bt::dev_alloc<bf16>(d.kc.size()), vc = bt::dev_alloc<bf16>(d.vc.size());
  auto put = [&](bf16* dst, const std::vector<bf16>& v) {
    ASSERT_EQ(cudaSuccess, cudaMemcpyAsync(dst, v.data(), v.size() * sizeof(bf16), cudaMemcpyHostToDevice, stream));
  };
  put(x.get(), d.x);
  put(wqkv.get(), d.wqkv);
  put(wo.get(), d.wo);
  put(kc.get(), d.kc);
  put(vc.get(), d.vc);
  ops::AttentionTensors t{x.get(), wqkv.get(), qkv.get(), o.get(), wo.get(), y.get(), kc.get(), vc.get()};
  ops::AttentionRunOptions opt;
  opt.log = false;
  opt.plan.kv_splits = kv_splits;
  auto op = Op::create(s, t, stream, opt);
  ASSERT_TRUE(op.ok()) << op.error().to_string();
  const std::string plan = op.value()->plan().log_line();
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(o.get(), 0xFF, rows * W * sizeof(bf16), stream));
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(y.get(), 0xFF, rows * s.hidden * sizeof(bf16), stream));
    BT_ASSERT_OK(op.value()->enqueue(stream));
    BT_ASSERT_OK(op.value()->check_errors(stream));
    std::vector<bf16> oh(rows * W), yh(rows * s.hidden), kh(d.kc.size()), vh(d.vc.size());
    ASSERT_EQ(cudaSuccess, cudaMemcpy(oh.data(), o.get(), oh.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(yh.data(), y.get(), yh.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(kh.data(), kc.get(), kh.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(vh.data(), vc.get(), vh.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(close(s, oh, d.o_ref, int(W), "O")) << plan;
    ASSERT_TRUE(close(s, yh, d.y_ref, s.hidden, "Y")) << plan;
    for (int b = 0; b < s.batch; ++b)
      for (int i = s.seq; i < s.padded_seq(); ++i)
        for (size_t c = 0; c < W; ++c) ASSERT_EQ(float(oh[(size_t(b) * s.padded_seq() + i) * W + c]), 0.f) << "padding row " << i;
    // The caches: old rows as they were, the new rows the step's K / V (within bf16 of the
    // reference's: the GEMM's sums differ in order), rows past kv_len untouched (NaN).
    for (int b = 0; b < s.batch; ++b)
      for (size_t r = 0; r < R; ++r)
        for (size_t c = 0; c < W; ++c) {
          const size_t at = (size_t(b) * R + r) * W + c;
          if (int(r) < s.old_keys() || int(r) >= s.kv_len) {
            ASSERT_EQ(0, std::memcmp(&kh[at], &d.kc[at], sizeof(bf16))) << "k_cache row " << r << " was written";
            ASSERT_EQ(0, std::memcmp(&vh[at], &d.vc[at], sizeof(bf16))) << "v_cache row " << r << " was written";
          } else {
            const size_t nr = (size_t(b) * s.seq + (r - size_t(s.old_keys()))) * W + c;
            ASSERT_NEAR(float(kh[at]), float(d.k_new[nr]), 2e-2f * (1.f + std::abs(float(d.k_new[nr])))) << "k_cache row " << r;
            ASSERT_NEAR(float(vh[at]), float(d.v_new[nr]), 2e-2f * (1.f + std::abs(float(d.v_new[nr])))) << "v_cache row " << r;
          }
        }
  }
}

TEST_F(AttentionTest, DecodeMatchesTheReference) {
  // One key; keys within one 64-key block; ragged; several sequences and heads; 16 new tokens; tensor
  // parallelism; a cache with room past kv_len. Each planned (split-KV as the rule says) and with one
  // part (O written directly, no combine) and with more parts than blocks allow to be even.
  for (const auto& s : {decode_shape(1, 1, 1, 1), decode_shape(1, 1, 100, 2), decode_shape(2, 3, 200, 2),
                        decode_shape(1, 7, 1000, 1), decode_shape(3, 16, 130, 2), decode_shape(1, 4, 4096, 2, 2),
                        decode_shape(2, 2, 300, 1, 1, 1024)}) {
    check_decode(stream, s, std::nullopt);
    check_decode(stream, s, 1);
    check_decode(stream, s, s.key_blocks());
  }
}

TEST_F(AttentionTest, BadShapesAndPointersAreRefusedAndNothingRuns) {
  const ops::AttentionShape s = prefill(1, 128, 1);
  const Data& d = data(s);
  Buffers b = upload(d, stream);
  const size_t n = size_t(s.padded_tokens()) * s.hidden;
  BT_CUDA(cudaMemsetAsync(b.y.get(), 0xFF, n * sizeof(bf16), stream));
  auto refused = [&](const ops::AttentionShape& shape, const ops::AttentionTensors& t, const char* needle) {
    ops::AttentionRunOptions o;
    o.log = false;
    auto op = Op::create(shape, t, stream, o);
    ASSERT_FALSE(op.ok()) << shape.str() << " was accepted";
    EXPECT_NE(op.error().to_string().find(needle), std::string::npos) << op.error().to_string();
  };
  ops::AttentionShape decode = s;  // decode without its caches
  decode.mode = ops::AttentionMode::decode;
  decode.seq = 1;
  decode.kv_len = 512;
  refused(decode, b.t, "k_cache is null");
  ops::AttentionShape d64 = s;
  d64.head_dim = 64;
  d64.hidden = 64;
  refused(d64, b.t, "head_dim");
  ops::AttentionTensors t = b.t;
  t.w_o = nullptr;
  refused(s, t, "w_o is null");
  t = b.t;
  t.qkv = static_cast<char*>(t.qkv) + 2;
  refused(s, t, "qkv is not 16-byte aligned");
  t = b.t;
  t.o = t.qkv;
  refused(s, t, "overlap");
  // Nothing ran: Y keeps its poison.
  auto y = download(b.y.get(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(float(y[i]))) << "element " << i << " was written";
}

}  // namespace
