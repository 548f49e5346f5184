// Host tests of the attention chain's groundwork (issue 19): QKV GEMM -> causal attention -> O-proj.
// No kernel exists yet; what is tested is what the kernel will sit on:
//   * validate_attention: every shape the kernels cannot take is refused, naming the shape and field;
//   * plan_attention: the per-edge policy rule, split-KV for decode, requests kept or refused;
//   * the policies batonc generates from include/baton/ops/attention/attention_chain.baton
//     (attention_chain_policies.hpp), per tile and per k-block, proven with check_soundness against
//     the op's exact relations (deps::causal_attention over the QKV tiles, deps::gemm_a over O) for a
//     dense sweep of shapes far outside the bindings batonc proved; each per-k-block wait set
//     covers its k-block's reads on its own (so a loader may take key blocks out of order);
//   * a policy that forgets the causal structure's K/V blocks (waits for the query's own row band
//     of QKV, or its Q tile only) refused with the missed read named;
//   * the whole chain in the CPU emulator: QKV CTAs write their tiles with a random delay in the
//     middle and post; attention CTAs run the sync warp's lanes (run_sync_lanes<32>) and load key
//     block j (keys [j*128, +128) of its head's K and V, plus its queries' Q at the first) as the
//     horizon allows, then write their O tile and post; O-proj CTAs load O per 64-column k-block as
//     their horizon allows. Every element read is checked to be written in this epoch.
#define BATON_ENABLE_WATCHDOG 1

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "baton/baton.hpp"
#include "baton/emu/emulator.hpp"
#include "baton/horizon.hpp"
#include "baton/ops/attention/attention.hpp"
#include "baton/ops/attention/attention_chain_policies.hpp"
#include "host_test_printers.hpp"

namespace {

using namespace baton;
using ops::AttentionEdgePolicy;
using ops::AttentionMode;
using ops::AttentionShape;
namespace gen = baton::ops::attention_gen;

AttentionShape prefill(int batch, int seq, int heads, int tp = 1) {
  return AttentionShape{.mode = AttentionMode::prefill, .batch = batch, .seq = seq, .kv_len = 0, .heads = heads,
                        .head_dim = 128, .hidden = tp * heads * 128, .causal = true};
}
AttentionShape decode(int batch, int m, int kv_len, int heads, int tp = 1) {
  return AttentionShape{.mode = AttentionMode::decode, .batch = batch, .seq = m, .kv_len = kv_len, .heads = heads,
                        .head_dim = 128, .hidden = tp * heads * 128, .causal = true};
}
// GPT-3 175B and LLaMA-65B under 8-way tensor parallelism (issue 19's shapes).
AttentionShape gpt3(int batch, int seq) { return prefill(batch, seq, 12, 8); }
AttentionShape llama(int batch, int seq) { return prefill(batch, seq, 8, 8); }

// ---- validation ------------------------------------------------------------------------------------

TEST(AttentionPlan, RefusesWhatTheKernelsCannotTake) {
  struct Bad {
    AttentionShape s;
    errc code;
    const char* mentions;
  };
  auto with = [](AttentionShape s, auto edit) {
    edit(s);
    return s;
  };
  const AttentionShape g = gpt3(1, 2048), d = decode(16, 1, 8192, 12, 8);
  const Bad cases[] = {
      {with(g, [](auto& s) { s.head_dim = 64; s.hidden = 8 * 12 * 64; }), errc::not_supported, "head_dim 128 only"},
      {with(g, [](auto& s) { s.head_dim = 256; s.hidden = 12 * 256; }), errc::not_supported, "head_dim 256 is not supported"},
      {with(g, [](auto& s) { s.hidden = 12000; }), errc::invalid_argument, "must be heads*head_dim = 1536"},
      {with(g, [](auto& s) { s.hidden = 768; }), errc::invalid_argument, "tensor parallelism"},
      {with(g, [](auto& s) { s.seq = 0; }), errc::invalid_argument, ">= 1"},
      {with(g, [](auto& s) { s.batch = -1; }), errc::invalid_argument, ">= 1"},
      {with(g, [](auto& s) { s.heads = 0; }), errc::invalid_argument, ">= 1"},
      {with(g, [](auto& s) { s.kv_len = 4096; }), errc::invalid_argument, "attending a KV cache is decode"},
      {with(g, [](auto& s) { s.causal = false; }), errc::not_supported, "non-causal"},
      {with(d, [](auto& s) { s.kv_len = 0; }), errc::invalid_argument, "must be >= the new tokens m = 1"},
      {with(d, [](auto& s) { s.seq = 4; s.kv_len = 3; }), errc::invalid_argument, "kv_len 3 must be >= the new tokens m = 4"},
      {with(d, [](auto& s) { s.seq = 17; s.kv_len = 8192; }), errc::not_supported, "at most 16 new tokens"},
      {with(g, [](auto& s) { s.batch = 1 << 12; s.seq = 1 << 12; }), errc::not_supported, "2^31"},
      {with(d, [](auto& s) { s.batch = 1 << 10; s.kv_len = 1 << 21; }), errc::not_supported, "2^31"},
  };
  for (const Bad& b : cases) {
    const status st = ops::validate_attention(b.s);
    EXPECT_EQ(st.code(), b.code) << b.s.str() << ": " << st.to_string();
    EXPECT_NE(st.to_string().find(b.mentions), std::string::npos) << st.to_string();
    EXPECT_NE(st.to_string().find(b.s.str()), std::string::npos) << "the message names the shape: " << st.to_string();
    EXPECT_FALSE(ops::plan_attention(b.s, 132).ok());
  }
  std::printf("e.g. %s\n", ops::validate_attention(cases[0].s).to_string().c_str());
  // The shapes: GPT-3 and LLaMA TP8, prefill and decode; one GPU's model without TP.
  for (int b : {1, 4, 8})
    for (int s : {512, 1024, 2048}) {
      EXPECT_TRUE(ops::validate_attention(gpt3(b, s)).ok());
      EXPECT_TRUE(ops::validate_attention(llama(b, s)).ok());
    }
  for (int b : {1, 16})
    for (int m : {1, 2, 4})
      for (int kv : {512, 1024, 2048, 8192}) EXPECT_TRUE(ops::validate_attention(decode(b, m, kv, 12, 8)).ok());
  EXPECT_TRUE(ops::validate_attention(prefill(3, 1, 16)).ok());
  EXPECT_TRUE(ops::validate_attention(decode(2, 16, 128, 4)).ok());
  EXPECT_EQ(ops::validate_attention(decode(2, 17, 128, 4)).code(), errc::not_supported);
  // A cache with room past kv_len; one smaller than kv_len, or a cache in prefill, is refused.
  AttentionShape roomy = decode(2, 4, 100, 4);
  roomy.kv_capacity = 4096;
  EXPECT_TRUE(ops::validate_attention(roomy).ok());
  EXPECT_EQ(roomy.cache_rows(), 4096);
  EXPECT_EQ(roomy.old_keys(), 96);
  EXPECT_NE(roomy.str().find("cache=4096"), std::string::npos);
  roomy.kv_capacity = 99;
  EXPECT_NE(ops::validate_attention(roomy).to_string().find("kv_capacity 99 must be 0 (= kv_len) or >= kv_len 100"),
            std::string::npos);
  AttentionShape cached_prefill = gpt3(1, 512);
  cached_prefill.kv_capacity = 1024;
  EXPECT_EQ(ops::validate_attention(cached_prefill).code(), errc::invalid_argument);
  AttentionShape bidir = decode(1, 1, 100, 8);
  bidir.causal = false;  // a single new token sees every key either way
  EXPECT_TRUE(ops::validate_attention(bidir).ok());
}

TEST(AttentionPlan, PadsQueriesToAMultipleOfEight) {
  // Decode: m = 1, 2, 4 new tokens run as 8 query rows per sequence; prefill alike when seq % 8 != 0.
  EXPECT_EQ(decode(16, 1, 8192, 12).padded_seq(), 8);
  EXPECT_EQ(decode(16, 4, 8192, 12).padded_seq(), 8);
  EXPECT_EQ(decode(16, 9, 8192, 12).padded_seq(), 16);
  EXPECT_EQ(prefill(1, 1000, 12).padded_seq(), 1000);
  EXPECT_EQ(prefill(2, 7, 12).padded_seq(), 8);
  EXPECT_TRUE(prefill(1, 2048, 12).padding().empty());
  const std::string pad = decode(16, 1, 8192, 12).padding();
  EXPECT_NE(pad.find("queries padded 1 -> 8 per sequence"), std::string::npos) << pad;
  EXPECT_NE(pad.find("rows 1..7"), std::string::npos) << pad;
  EXPECT_NE(pad.find("keys past 8192 are masked"), std::string::npos) << pad;
  // The padded rows are the kernel's Sq: the grids count them.
  EXPECT_EQ(prefill(3, 7, 2).attention_grid(), (Grid{1, 2, 3}));
  EXPECT_EQ(decode(16, 1, 8192, 12).qkv_grid(), (Grid{1, 36, 1}));  // 16 x 8 = 128 rows: one band, flat
  EXPECT_EQ(decode(17, 1, 8192, 12).qkv_grid(), (Grid{2, 36, 1}));
  EXPECT_EQ(decode(16, 1, 8192, 12).key_blocks(), 128);  // decode: 64-key blocks
  EXPECT_EQ(gpt3(1, 2048).key_blocks(), 16);
}

// ---- the plan ----------------------------------------------------------------------------------------

// The cost model's time of a GEMM as the chain's batched 128 x 128 kernel (what plan_attention
// weighs a flat GEMM against), recomputed here from mlp_cost.hpp.
double tiled_us(int tokens, int n, int k, int sms) {
  return ops::mlp_gemm_cost_us(ops::MlpCostModel{}, ops::MlpGemmShape{tokens, n, k, 128, 1, 1, 0}, sms);
}

TEST(AttentionPlan, PrefillWaitsWhereTheProducerLeavesSMsIdle) {
  // GPT-3 TP8, 1 x 2048: QKV 16 x 36 = 576 CTAs (last wave: 48 of 132, 84 idle); attention 192
  // tiles, causal over 16 query blocks. The waits' rule says kblock on both edges; then the flat
  // GEMMs (128x192 / 128x256 tiles) are modeled far faster than the 128 x 128 ones the waits need.
  ops::AttentionOptions waits;
  waits.qkv_to_attention = waits.attention_to_oproj = AttentionEdgePolicy::kblock;
  auto p = ops::plan_attention(gpt3(1, 2048), 132);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  std::printf("%s\n", p.value().log_line().c_str());
  EXPECT_NE(p.value().log_line().find("qkv's last wave leaves 84 of 132 SMs idle -> none: the flat qkv GEMM is modeled"),
            std::string::npos) << p.value().log_line();
  EXPECT_NE(p.value().log_line().find("attention's last wave leaves 72 of 132 SMs idle -> none"), std::string::npos)
      << p.value().log_line();
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_EQ(p.value().attention_to_oproj, AttentionEdgePolicy::none);
  EXPECT_TRUE(p.value().qkv_flat() && p.value().oproj_flat());
  EXPECT_LT(p.value().qkv_gemm.expected_us, 0.95 * tiled_us(2048, 3 * 12 * 128, 12288, 132));
  // Asked for, the waits keep the batched 128 x 128 kernels (the program's tiles and grids).
  p = ops::plan_attention(gpt3(1, 2048), 132, waits);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::kblock);
  EXPECT_EQ(p.value().qkv_gemm.form, (ops::GemmForm{ops::GemmOperands::plain, 128, 1, false}));
  EXPECT_EQ(p.value().qkv_gemm.grid, gpt3(1, 2048).qkv_grid());
  EXPECT_EQ(p.value().oproj_gemm.grid, gpt3(1, 2048).oproj_grid());
  EXPECT_NE(p.value().log_line().find("GEMMs 128x128 batched / 128x128 batched"), std::string::npos) << p.value().log_line();
  // On 96 SMs the QKV GEMM's 576 CTAs and the attention's 192 tiles fill whole waves, and neither
  // consumer fits one: no semaphores on qkv -> attention; the causal attention's tail (tiles of 1
  // to 16 key blocks) would still feed O-proj.
  p = ops::plan_attention(gpt3(1, 2048), 96);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::none) << p.value().log_line();
  EXPECT_NE(p.value().log_line().find("causal over 16 query blocks"), std::string::npos) << p.value().log_line();
  EXPECT_NE(p.value().log_line().find("192 attention CTAs and a full last wave of qkv"), std::string::npos) << p.value().log_line();
  // A small prefill: every consumer fits one wave.
  p = ops::plan_attention(llama(1, 512), 132);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p.value().reason.find("attention's 32 CTAs fit one wave"), std::string::npos) << p.value().reason;
}

// Over a sweep of shapes and SM counts, an automatic edge ends none exactly when the waits' rule
// says none or the flat GEMM is modeled more than kAttentionFlatGemmGain faster than the 128 x 128
// one; a flat GEMM's plan is plan_free_gemm's for the flat extents, a batched one the chain's tiles.
TEST(AttentionPlan, FlatGemmsReplaceTheWaitsOnlyWhereTheModelSaysSo) {
  int flat = 0, kept = 0;
  for (int sms : {66, 114, 132})
    for (int heads : {4, 8, 12, 16})
      for (int b : {1, 2, 4, 8})
        for (int seq : {100, 512, 1000, 2048}) {
          const AttentionShape s = prefill(b, seq, heads, 8);
          auto p = ops::plan_attention(s, sms);
          ASSERT_TRUE(p.ok()) << s.str();
          const auto& pl = p.value();
          const int tokens = int(s.padded_tokens());
          struct Edge {
            bool is_flat;
            const ops::FreeGemmPlan& g;
            int n, k;
            const char* name;
          };
          for (const Edge& e : {Edge{pl.qkv_flat(), pl.qkv_gemm, 3 * s.width(), s.hidden, "qkv"},
                                Edge{pl.oproj_flat(), pl.oproj_gemm, s.hidden, s.width(), "oproj"}}) {
            const double tiled = tiled_us(tokens, e.n, e.k, sms);
            auto free = ops::plan_free_gemm(tokens, e.n, e.k, sms);
            ASSERT_TRUE(free.ok());
            if (e.is_flat) {
              EXPECT_EQ(e.g, free.value()) << pl.log_line();
              const bool by_model = pl.reason.find(std::string("the flat ") + e.name + " GEMM is modeled") != std::string::npos;
              if (by_model) { EXPECT_LT(free.value().expected_us, (1 - ops::kAttentionFlatGemmGain) * tiled) << pl.log_line(); }
              flat += by_model;
            } else {
              EXPECT_GE(free.value().expected_us, (1 - ops::kAttentionFlatGemmGain) * tiled) << e.name << ": " << pl.log_line();
              EXPECT_EQ(e.g.form, (ops::GemmForm{ops::GemmOperands::plain, 128, 1, false})) << pl.log_line();
              ++kept;
            }
          }
        }
  std::printf("flat GEMMs over the waits' kblock: %d edges; kblock kept: %d edges\n", flat, kept);
  EXPECT_GT(flat, 0);
}

// docs/attention.md quotes this test's lines (an excerpt marker: they must stay here, in order).
TEST(AttentionPlan, DocExample) {
  using namespace baton::ops;
  AttentionShape s{.mode = AttentionMode::prefill, .batch = 1, .seq = 2048, .heads = 12, .head_dim = 128, .hidden = 12288};
  result<AttentionPlan> plan = plan_attention(s, /*sms=*/132);  // a status for a shape the kernels cannot take
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  std::puts(plan.value().log_line().c_str());
  EXPECT_EQ(plan.value().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_EQ(plan.value().attention_to_oproj, AttentionEdgePolicy::none);
  EXPECT_EQ(plan.value().log_line(),
            "baton::ops::Attention prefill b=1 s=2048 heads=12 d=128 hidden=12288 causal: qkv->attention none, "
            "attention->oproj none, GEMMs 128x192 flat / 128x256 flat (qkv->attention: qkv's last wave leaves 84 of "
            "132 SMs idle -> none: the flat qkv GEMM is modeled 371 us against 523 us for the 128x128 one the waits "
            "need; attention->oproj: attention's last wave leaves 72 of 132 SMs idle -> none: the flat oproj GEMM is "
            "modeled 142 us against 190 us for the 128x128 one the waits need)");
}

TEST(AttentionPlan, RequestsAreCheckedAndKept) {
  ops::AttentionOptions o;
  o.qkv_to_attention = AttentionEdgePolicy::none;
  o.attention_to_oproj = AttentionEdgePolicy::kblock;
  auto p = ops::plan_attention(gpt3(64, 128), 128, o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_EQ(p.value().attention_to_oproj, AttentionEdgePolicy::kblock);
  EXPECT_NE(p.value().reason.find("asked"), std::string::npos);
  o = {};
  o.kv_splits = 2;
  p = ops::plan_attention(gpt3(1, 2048), 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("kv_splits is for decode"), std::string::npos) << p.error().to_string();
  o = {};
  o.qkv_to_attention = AttentionEdgePolicy::kblock;
  p = ops::plan_attention(decode(1, 1, 8192, 12), 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), errc::not_supported);
  EXPECT_NE(p.error().to_string().find("not in attention_chain.baton"), std::string::npos) << p.error().to_string();
  o = {};
  o.kv_splits = 65;
  p = ops::plan_attention(decode(1, 1, 4096, 12), 132, o);  // 64 key blocks of 64
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("kv_splits = 65 must be in [1, 64]"), std::string::npos) << p.error().to_string();
  o.kv_splits = 5;
  p = ops::plan_attention(decode(1, 1, 8192, 12), 132, o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().kv_splits, 5);
  EXPECT_FALSE(ops::plan_attention(gpt3(1, 2048), 0).ok());
  // A GEMM's form: kept on a none edge, turning an automatic edge none, refused on a kblock edge.
  o = {};
  o.qkv_gemm.tile = 256;
  o.qkv_gemm.split_k = 2;
  p = ops::plan_attention(gpt3(1, 512), 132, o);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_EQ(p.value().qkv_gemm.form, (ops::GemmForm{ops::GemmOperands::plain, 256, 2, false}));
  EXPECT_EQ(p.value().qkv_gemm.grid, (Grid{4, 18, 1}));
  EXPECT_NE(p.value().log_line().find("128x256 split-K 2 flat"), std::string::npos) << p.value().log_line();
  o.qkv_to_attention = AttentionEdgePolicy::kblock;
  p = ops::plan_attention(gpt3(1, 512), 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), errc::not_supported);
  EXPECT_NE(p.error().to_string().find("qkv GEMM: a form request"), std::string::npos) << p.error().to_string();
  o = {};
  o.oproj_gemm.tile = 100;
  p = ops::plan_attention(gpt3(1, 512), 132, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("oproj GEMM (m=512 n=12288 k=1536): tile width 100"), std::string::npos)
      << p.error().to_string();
  o = {};
  o.oproj_gemm.split_k = 25;  // k = 1536: 24 k-blocks
  EXPECT_NE(ops::plan_attention(gpt3(1, 512), 132, o).error().to_string().find("split_k 25 must be in [1, 24]"),
            std::string::npos);
  // The CTA pairs need the kernels that have them.
  o = {};
  o.oproj_gemm.tile = 96;
  o.oproj_gemm.cta_pairs = true;
  EXPECT_TRUE(ops::plan_attention(gpt3(1, 512), 132, o).ok());
  p = ops::plan_attention(gpt3(1, 512), 132, o, ops::MlpKernelForms{false, false});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("BATON_MLP_EXTRA_KERNELS"), std::string::npos) << p.error().to_string();
}

TEST(AttentionPlan, FreeGemmPlans) {
  // What plan_mlp picks for GEMM2 under policy none, without persistent CTAs (a free GEMM has none),
  // is plan_free_gemm's for the same extents.
  ops::MlpOptions one_cta_per_tile;
  one_cta_per_tile.gemm2.persistent = false;
  for (int m : {1, 16, 100, 129, 512, 4096})
    for (auto [h, f] : {std::pair{12288, 49152}, std::pair{8192, 22016}, std::pair{4096, 1376}}) {
      auto mp = ops::plan_mlp(ops::MlpShape{m, h, f, ops::Activation::gelu}, 132, one_cta_per_tile);
      auto fp = ops::plan_free_gemm(m, h, f, 132);
      ASSERT_TRUE(mp.ok() && fp.ok());
      EXPECT_EQ(mp.value().form2, fp.value().form) << m << " " << h << " " << f;
      EXPECT_EQ(mp.value().gemm2, fp.value().grid);
      EXPECT_EQ(mp.value().group_m, fp.value().group_m);
      EXPECT_GT(fp.value().expected_us, 0);
    }
  // Swapped asked for at m <= 32: 32-token tiles where the kernels have them, else 160.
  ops::GemmFormRequest sw;
  sw.operands = ops::GemmOperands::swapped;
  EXPECT_EQ(ops::plan_free_gemm(16, 4096, 4096, 132, sw).value().form.tile, 32);
  EXPECT_EQ(ops::plan_free_gemm(16, 4096, 4096, 132, sw, ops::MlpKernelForms{false, false}).value().form.tile, 160);
  EXPECT_EQ(ops::plan_free_gemm(16, 4096, 4096, 132, sw).value().expected_us, 0);  // 32-token tiles: not modeled
  sw.tile = 32;
  auto r = ops::plan_free_gemm(16, 4096, 4096, 132, sw, ops::MlpKernelForms{false, false});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("BATON_MLP_EXTRA_KERNELS"), std::string::npos);
  // Bad extents and alignment name the GEMM.
  r = ops::plan_free_gemm(0, 64, 64, 132, {}, {}, "my gemm");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("my gemm (m=0 n=64 k=64): every extent must be >= 1"), std::string::npos)
      << r.error().to_string();
  EXPECT_EQ(ops::plan_free_gemm(8, 60, 64, 132).error().code(), errc::not_supported);
  EXPECT_EQ(ops::plan_free_gemm(8, 64, 64, 0).error().code(), errc::invalid_argument);
}

TEST(AttentionPlan, DecodeSplitsTheKeysToFillTheSMs) {
  // 1 sequence x 12 heads on 132 SMs: 12 CTAs; one wave is 3 x 132 = 396, 33 parts, but a part keeps
  // at least 4 of the cache's 128 64-key blocks: 32 parts.
  auto p = ops::plan_attention(decode(1, 1, 8192, 12, 8), 132);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().kv_splits, 32) << p.value().log_line();
  EXPECT_EQ(p.value().qkv_to_attention, AttentionEdgePolicy::none);
  EXPECT_EQ(p.value().attention_to_oproj, AttentionEdgePolicy::none);
  EXPECT_TRUE(p.value().qkv_flat() && p.value().oproj_flat());
  EXPECT_NE(p.value().log_line().find("split-KV 32"), std::string::npos) << p.value().log_line();
  EXPECT_NE(p.value().log_line().find("queries padded 1 -> 8"), std::string::npos) << p.value().log_line();
  std::printf("%s\n", p.value().log_line().c_str());
  // One wave of 3 CTAs per SM (396 on 132 SMs), at least 4 64-key blocks per part, at most 64 parts.
  EXPECT_EQ(ops::plan_attention(decode(1, 2, 512, 12, 8), 132).value().kv_splits, 2);      // 8 blocks: 2 parts
  EXPECT_EQ(ops::plan_attention(decode(16, 4, 8192, 12, 8), 132).value().kv_splits, 2);    // 192 CTAs: 396 / 192
  EXPECT_EQ(ops::plan_attention(decode(16, 2, 2048, 8, 8), 132).value().kv_splits, 3);     // 128 CTAs: 396 / 128
  EXPECT_EQ(ops::plan_attention(decode(4, 8, 4096, 12, 8), 132).value().kv_splits, 8);     // 48 CTAs
  EXPECT_EQ(ops::plan_attention(decode(2, 16, 777, 12, 8), 132).value().kv_splits, 3);     // 13 blocks: 3 parts
  EXPECT_EQ(ops::attention_kv_splits(1, 1000, 132), 64);  // the cap
  EXPECT_EQ(ops::attention_kv_splits(1200, 1000, 132), 1);  // the CTAs alone fill the SMs
  EXPECT_EQ(ops::attention_kv_splits(396, 1000, 132), 1);   // exactly one wave
  EXPECT_EQ(ops::attention_kv_splits(395, 1000, 132), 1);
  EXPECT_EQ(ops::attention_kv_splits(198, 1000, 132), 2);
  EXPECT_EQ(ops::attention_kv_splits(12, 3, 132), 1);     // fewer than 4 blocks: one part
  for (int sms : {78, 114, 132, 144})
    for (int b : {1, 2, 3, 4, 16, 32, 64})
      for (int heads : {1, 8, 12, 16, 40})
        for (int kv : {1, 100, 512, 1000, 2048, 3000, 8192, 16384, 32768}) {
          const auto s = decode(b, 1, kv, heads);
          auto plan = ops::plan_attention(s, sms);
          if (int64_t(b) * kv * heads * 128 >= (int64_t(1) << 31)) {  // the caches pass int32 extents
            EXPECT_FALSE(plan.ok()) << s.str();
            continue;
          }
          ASSERT_TRUE(plan.ok()) << s.str() << ": " << plan.error().to_string();
          const int parts = plan.value().kv_splits;
          const int64_t ctas = int64_t(b) * heads;
          EXPECT_GE(parts, 1);
          EXPECT_LE(parts, 64);
          // Every part has at least 4 blocks of keys, unless there is only one part.
          if (parts > 1) { EXPECT_GE(s.key_blocks() / parts, ops::kAttentionDecodeMinBlocksPerPart) << s.str(); }
          // Never past one wave of resident CTAs, unless the CTAs alone pass it.
          if (parts > 1) { EXPECT_LE(ctas * parts, int64_t(ops::kAttentionDecodeCtasPerSm) * sms) << s.str(); }
          // And as many parts as fit: one more would pass the wave, the key blocks or the cap.
          EXPECT_TRUE(ctas * (parts + 1) > int64_t(ops::kAttentionDecodeCtasPerSm) * sms ||
                      s.key_blocks() / (parts + 1) < ops::kAttentionDecodeMinBlocksPerPart || parts == 64)
              << s.str() << " parts " << parts;
        }
}

// ---- the generated policies --------------------------------------------------------------------------

// The program's parameters for a shape are its grids and k-blocks, and the header's exact relation
// is the op's (the same deps::causal_attention / gemm_a over the shape's constants); the maps'
// relation (batonc's, from the .baton reads) is exactly it.
TEST(OpsAttentionGeneratedPolicies, ProgramParamsMatchTheShapeAndItsRelations) {
  for (const AttentionShape& s : {gpt3(1, 2048), llama(2, 1000), prefill(3, 7, 2), prefill(1, 129, 3, 2), prefill(2, 300, 1)}) {
    const gen::Params p = s.program_params();
    EXPECT_EQ(gen::qkv_grid(p), s.qkv_grid()) << s.str();
    EXPECT_EQ(gen::attn_grid(p), s.attention_grid()) << s.str();
    EXPECT_EQ(gen::oproj_grid(p), s.oproj_grid()) << s.str();
    EXPECT_EQ(gen::qkv_k_blocks(p), s.qkv_k_blocks()) << s.str();
    EXPECT_EQ(gen::attn_k_blocks(p), s.key_blocks()) << s.str();
    EXPECT_EQ(gen::oproj_k_blocks(p), s.oproj_k_blocks()) << s.str();
    const Grid ag = s.attention_grid();
    for (int i = 0; i < int(ag.size()); ++i) EXPECT_EQ(gen::attn_k_blocks_of(ag.tile(i), p), ag.tile(i).m + 1);
    const DependencyRelation exact1 = deps::causal_attention(s.causal_attention_shape(), ag);
    const DependencyRelation exact2 = deps::gemm_a(s.oproj_footprint(), s.oproj_grid());
    // The maps' relation (deps::from_boxes over the footprint) walks every k-block of every tile: past
    // a tile's causal bound it still reads (key blocks j > m, never loaded: the kernel runs
    // attn_k_blocks_of(t) of them). Within the bound it is the exact relation.
    const DependencyRelation maps1 = gen::qkv_to_attn_relation(p);
    const DependencyRelation maps1_bounded = deps::custom(
        maps1.producer, maps1.consumer, maps1.k_blocks,
        [maps1, p](Tile t, int k, const std::function<void(Tile)>& emit) {
          if (k < gen::attn_k_blocks_of(t, p)) maps1.reads(t, k, emit);
        },
        "maps within the causal bound");
    auto unbounded = deps::compare(maps1, exact1);
    ASSERT_TRUE(unbounded.ok());
    EXPECT_EQ(unbounded.value().missing, 0) << s.str();
    if (ag.m > 1) { EXPECT_GT(unbounded.value().extra, 0) << s.str(); }
    for (auto [header, op] : {std::pair{gen::qkv_to_attn_exact_relation(p), exact1}, std::pair{maps1_bounded, exact1},
                              std::pair{gen::attn_to_oproj_exact_relation(p), exact2}, std::pair{gen::attn_to_oproj_relation(p), exact2}}) {
      auto d = deps::compare(header, op);
      ASSERT_TRUE(d.ok()) << s.str() << ": " << d.error().to_string();
      EXPECT_TRUE(d.value().same()) << s.str() << " " << header.description << ": " << d.value().missing << " missing, "
                                    << d.value().extra << " extra";
      EXPECT_GT(d.value().reads_compared, 0);
    }
  }
}

// Producer tiles a consumer waits for before its first k-block's loads, summed over consumer tiles.
template <SyncPolicy P>
int64_t start_waits(const P& policy, Grid consumer) {
  int64_t n = 0;
  for (int i = 0; i < int(consumer.size()); ++i)
    policy.for_each_wait(consumer.tile(i), 0, [&](WaitSpec) {
      ++n;
      return true;
    });
  return n;
}

// Does k-block k's own wait set (no earlier k-block's) cover every producer tile k-block k reads?
// Then a loader may issue the loads of any k-block whose waits are satisfied, in any order: "load
// the K/V blocks already published before the pending ones". Returns the first uncovered read.
template <SyncPolicy P>
std::string first_read_not_covered_locally(const P& policy, const DependencyRelation& rel, int (*k_of)(Tile, const gen::Params&),
                                           const gen::Params& p) {
  std::vector<int> covered;
  for (int ci = 0; ci < int(rel.consumer.size()); ++ci) {
    const Tile t = rel.consumer.tile(ci);
    const int kb = k_of ? k_of(t, p) : rel.k_blocks;
    for (int k = 0; k < kb; ++k) {
      covered.clear();
      policy.for_each_wait(t, k, [&](WaitSpec w) {
        if (w.count >= w.per_epoch) covered.push_back(w.sem);  // every poster of the semaphore
        return true;
      });
      std::string miss;
      rel.reads(t, k, [&](Tile pt) {
        if (miss.empty() && std::find(covered.begin(), covered.end(), policy.post_index(pt)) == covered.end())
          miss = "consumer tile " + to_string(t) + " k-block " + std::to_string(k) + " reads producer tile " + to_string(pt);
      });
      if (!miss.empty()) return miss;
    }
  }
  return {};
}

int attn_k_of(Tile t, const gen::Params& p) { return gen::attn_k_blocks_of(t, p); }

// Far outside batonc's bindings: batches 1-8, sequences from 1 to 2048 (ragged, one token, exactly
// one block, one past it), 1 to 16 heads, TP 1 and 8 (O-proj's width). Each edge's chosen policy
// (per k-block) and its per-tile alternative, against the op's exact relation.
TEST(OpsAttentionGeneratedPolicies, SoundPerTileAndPerKBlockOverADenseSweep) {
  const auto t0 = std::chrono::steady_clock::now();
  int shapes = 0, over_synchronized = 0;
  int64_t reads = 0;
  for (int b : {1, 2, 3, 8})
    for (int seq : {1, 7, 8, 100, 127, 128, 129, 200, 256, 300, 512, 1000, 1024, 2048})
      for (int heads : {1, 2, 3, 8, 12, 16}) {
        if (int64_t(b) * seq * heads > int64_t(2048) * 16 * 3) continue;  // keeps the sweep under a few seconds
        for (int tp : {1, 8}) {
          if (tp == 8 && (b > 2 || heads > 12)) continue;  // TP changes only O-proj's columns
          const AttentionShape s = prefill(b, seq, heads, tp);
          ASSERT_TRUE(ops::validate_attention(s).ok()) << s.str();
          const gen::Params p = s.program_params();
          const std::string name = s.str();
          int64_t starts[2][2] = {};
          if (tp == 1) {  // qkv -> attn does not depend on TP
            const DependencyRelation rel = deps::causal_attention(s.causal_attention_shape(), s.attention_grid());
            const auto kblock = gen::qkv_to_attn(p);
            const auto tile = gen::qkv_to_attn_tile(p);
            for (const CheckReport& r : {check_soundness(kblock, rel, name + " qkv->attn kblock"),
                                         check_soundness(tile, rel, name + " qkv->attn tile")}) {
              EXPECT_TRUE(r.sound()) << r.summary();
              reads += r.reads_checked;
            }
            EXPECT_EQ(first_read_not_covered_locally(kblock, rel, attn_k_of, p), "") << name;
            starts[0][0] = start_waits(tile, rel.consumer);
            starts[0][1] = start_waits(kblock, rel.consumer);
            EXPECT_LE(starts[0][1], starts[0][0]) << name << ": waits before the first load, per k-block vs per tile";
            // Per k-block, an attention tile starts after 3 producer tiles: its Q, and key block 0's
            // K and V (three column tiles apart, whatever the query block).
            EXPECT_EQ(starts[0][1], 3 * int64_t(rel.consumer.size())) << name;
          }
          const DependencyRelation rel2 = deps::gemm_a(s.oproj_footprint(), s.oproj_grid());
          const auto kblock2 = gen::attn_to_oproj(p);
          const auto tile2 = gen::attn_to_oproj_tile(p);
          for (const CheckReport& r : {check_soundness(kblock2, rel2, name + " attn->oproj kblock"),
                                       check_soundness(tile2, rel2, name + " attn->oproj tile")}) {
            EXPECT_TRUE(r.sound()) << r.summary();
            if (r.over_sync_pairs > 0 && over_synchronized++ == 0)
              std::printf("first over-synchronized (sound) check: %s\n", r.summary().c_str());
            reads += r.reads_checked;
          }
          EXPECT_EQ(first_read_not_covered_locally(kblock2, rel2, nullptr, p), "") << name;
          starts[1][0] = start_waits(tile2, rel2.consumer);
          starts[1][1] = start_waits(kblock2, rel2.consumer);
          EXPECT_EQ(starts[1][1], int64_t(rel2.consumer.size())) << name << ": O-proj's k-block 0 reads one attention tile";
          EXPECT_LE(starts[1][1], starts[1][0]) << name;
          ++shapes;
        }
      }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("attention chain sweep: %d shapes x {per tile, per k-block} x 2 edges sound (%d checks over-synchronized), "
              "%lld reads checked, %.1f s\n",
              shapes, over_synchronized, static_cast<long long>(reads), secs);
  EXPECT_GT(shapes, 300);
}

// Where each sequence is whole 128-row blocks (S % 128 == 0), the batched grids number their tiles
// as the flat ones over [B*S, ...] do (Grid::linear is z-major): O-proj may run flat, rows B*S, on
// KBlockPolicy<footprint::GemmA> (the policy, cheaper on the device than the generated
// dsl::AffineFootprint) and wait on exactly the semaphores the batched attention posts.
TEST(OpsAttentionGeneratedPolicies, FlatGemmAPolicyForOProjWaitsOnTheSameSemaphoresWhenSequencesAreWholeBlocks) {
  for (const AttentionShape& s : {gpt3(4, 512), llama(2, 2048), prefill(3, 128, 5), prefill(1, 1024, 16, 2)}) {
    ASSERT_EQ(s.padded_seq() % 128, 0);
    const gen::Params p = s.program_params();
    const int blocks = s.padded_seq() / 128;
    const Grid flat_attn{s.batch * blocks, s.heads, 1}, flat_oproj{s.batch * blocks, s.oproj_grid().n, 1};
    const footprint::GemmA fa{s.batch * s.padded_seq(), s.width(), 128, s.head_dim, 128, 64};
    const KBlockPolicy<footprint::GemmA> flat{flat_attn, fa};
    const auto batched = gen::attn_to_oproj(p);
    ASSERT_EQ(flat.num_semaphores(), batched.num_semaphores());
    ASSERT_EQ(flat.k_blocks(), batched.k_blocks());
    EXPECT_TRUE(check_soundness(flat, deps::gemm_a(fa, flat_oproj), s.str() + " flat").sound());
    auto unflatten = [&](Tile t) { return Tile{t.m % blocks, t.n, t.m / blocks}; };
    for (int i = 0; i < int(flat_attn.size()); ++i)  // producers post to the same semaphore
      ASSERT_EQ(flat.post_index(flat_attn.tile(i)), batched.post_index(unflatten(flat_attn.tile(i))));
    for (int i = 0; i < int(flat_oproj.size()); ++i)
      for (int k = 0; k < flat.k_blocks(); ++k) {
        std::vector<WaitSpec> a, b;
        flat.for_each_wait(flat_oproj.tile(i), k, [&](WaitSpec w) { return a.push_back(w), true; });
        batched.for_each_wait(unflatten(flat_oproj.tile(i)), k, [&](WaitSpec w) { return b.push_back(w), true; });
        ASSERT_EQ(a.size(), b.size()) << s.str();
        for (size_t j = 0; j < a.size(); ++j) {
          EXPECT_EQ(a[j].sem, b[j].sem);
          EXPECT_EQ(a[j].count, b[j].count);
          EXPECT_EQ(a[j].per_epoch, b[j].per_epoch);
        }
      }
  }
}

// ---- policies that forget the causal structure ----------------------------------------------------

// Waits for the consumer's own row band of QKV (every column tile of rows [m*128, +128) of its
// sequence): its Q and its own key block's K and V, but not the K and V of the earlier key blocks
// that causal attention also reads.
struct OwnRowBandOnly {
  int k_total = 1, qkv_cols = 1;
  constexpr const char* invalid_reason() const { return k_total > 0 ? nullptr : "empty"; }
  constexpr int k_blocks() const { return k_total; }
  constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  constexpr TileRect rect_all(Tile t) const { return TileRect{t.m, t.m + 1, 0, ceil_div(qkv_cols, 128), t.z, t.z + 1}; }
};
// Waits for the consumer's Q tile only.
struct QTileOnly {
  int k_total = 1, head_dim = 128;
  constexpr const char* invalid_reason() const { return k_total > 0 ? nullptr : "empty"; }
  constexpr int k_blocks() const { return k_total; }
  constexpr TileRect rect(Tile t, int) const { return rect_all(t); }
  constexpr TileRect rect_all(Tile t) const {
    const int n = t.n * head_dim / 128;
    return TileRect{t.m, t.m + 1, n, n + 1, t.z, t.z + 1};
  }
};
static_assert(Footprint<OwnRowBandOnly>);
static_assert(Footprint<QTileOnly>);

TEST(OpsAttentionGeneratedPolicies, PoliciesThatForgetTheKeyBlocksAreRefusedWithTheMissedReadNamed) {
  const AttentionShape s = gpt3(2, 1000);  // 8 query blocks, 12 heads: K of head h at column tile 12 + h
  const DependencyRelation rel = deps::causal_attention(s.causal_attention_shape(), s.attention_grid());
  const OwnRowBandOnly band{s.key_blocks(), 3 * s.width()};
  const QTileOnly q{s.key_blocks(), s.head_dim};
  {
    const CheckReport r = check_soundness(KBlockPolicy<OwnRowBandOnly>{s.qkv_grid(), band}, rel, "own row band");
    ASSERT_EQ(r.result.code(), errc::unsound_policy) << r.summary();
    // Query block 1 reads key block 0 (K of head 0: QKV tile (0,12,0)) at k-block 0; its band is 1.
    EXPECT_NE(r.result.to_string().find("consumer tile (1,0,0) k-block 0 reads producer tile (0,12,0)"), std::string::npos)
        << r.result.to_string();
    std::printf("checker (own row band): %s\n", r.result.to_string().c_str());
    EXPECT_FALSE(check_soundness(RowPolicy<OwnRowBandOnly>{s.qkv_grid(), band, false}, rel, "own row band").sound());
    EXPECT_FALSE(first_read_not_covered_locally(KBlockPolicy<OwnRowBandOnly>{s.qkv_grid(), band}, rel, attn_k_of,
                                                s.program_params())
                     .empty());
  }
  {
    const CheckReport r = check_soundness(TilePolicy<QTileOnly>{s.qkv_grid(), q, false}, rel, "Q tile only");
    ASSERT_EQ(r.result.code(), errc::unsound_policy) << r.summary();
    // Even query block 0 reads its own key block's K (tile (0,12,0)) without a wait.
    EXPECT_NE(r.result.to_string().find("consumer tile (0,0,0) k-block 0 reads producer tile (0,12,0)"), std::string::npos)
        << r.result.to_string();
    std::printf("checker (Q tile only): %s\n", r.result.to_string().c_str());
  }
}

// ---- the chain in the emulator ---------------------------------------------------------------------

uint32_t produce_qkv(int z, int row, int col, uint32_t epoch) {
  return uint32_t(z) * 2654435761u + uint32_t(row) * 7919u + uint32_t(col) * 104729u + epoch * 31u + 1u;
}
uint32_t produce_o(int z, int row, int col, uint32_t epoch) {
  return uint32_t(z) * 40503u + uint32_t(row) * 6151u + uint32_t(col) * 12289u + epoch * 97u + 3u;
}

enum class KeyOrder { horizon, published_first };

// O1: the QKV GEMM's tile order. The program's is row-major; column-major (Q's columns, then K's,
// then V's, each band by band) leaves the V tiles of several key blocks in flight when the attention
// starts, so key blocks are published out of order and a missed one is read early.
template <class P1, class P2, class O1 = RowMajor>
struct AttentionChainFixture {
  AttentionShape s;
  gen::Params gp;
  int S, HD, C3;  // rows per sequence (padded), O's and QKV's columns
  Grid G1, G2, G3;
  Chain chain;
  StageRef<O1> q;
  StageRef<RowMajor> a, o;
  EdgeRef<P1> e1;
  EdgeRef<P2> e2;
  std::vector<unsigned char> ws;
  std::vector<uint32_t> QKV, O;  // [batch, S, 3*HD], [batch, S, HD]
  std::atomic<uint64_t> wrong_qkv{0}, reads_qkv{0}, wrong_o{0}, reads_o{0}, failed{0}, out_of_order{0}, tiles{0};
  bool consumer_delays = true;
  KeyOrder key_order = KeyOrder::horizon;
  int sm_slots = 6;  // the emulator's CTAs at once

  AttentionChainFixture(const AttentionShape& shape, P1 p1, DependencyRelation r1, P2 p2, DependencyRelation r2)
      : s(shape), gp(shape.program_params()), S(shape.padded_seq()), HD(shape.width()), C3(3 * shape.width()),
        G1(shape.qkv_grid()), G2(shape.attention_grid()), G3(shape.oproj_grid()),
        QKV(size_t(shape.batch) * size_t(S) * size_t(C3), 0u), O(size_t(shape.batch) * size_t(S) * size_t(HD), 0u) {
    q = chain.add_stage("qkv", G1, O1{}, {.reads = {"X"}, .writes = {"QKV"}});
    a = chain.add_stage("attn", G2, RowMajor{}, {.reads = {"QKV"}, .writes = {"O"}});
    o = chain.add_stage("oproj", G3, RowMajor{}, {.reads = {"O"}, .writes = {"Y"}});
    e1 = chain.add_edge(q, a, p1, std::move(r1));
    e2 = chain.add_edge(a, o, p2, std::move(r2));
  }
  uint32_t& qkv(int z, int r, int c) { return QKV[(size_t(z) * S + r) * C3 + c]; }
  uint32_t& out(int z, int r, int c) { return O[(size_t(z) * S + r) * HD + c]; }
  // Rows [r0, r1) x columns [c0, c1) of QKV (or O), each checked against this epoch's value.
  template <class Ref, class Want>
  void check_box(int r0, int r1, int c0, int c1, Ref ref, Want want, std::atomic<uint64_t>& wrong, std::atomic<uint64_t>& n) {
    uint64_t bad = 0, cnt = 0;
    for (int r = r0; r < r1; ++r)
      for (int c = c0; c < c1; ++c, ++cnt) bad += std::atomic_ref<uint32_t>(ref(r, c)).load(std::memory_order_relaxed) != want(r, c);
    wrong += bad;
    n += cnt;
  }

  std::vector<emu::StageLaunch> launches() {
    BindOptions ob;
    ob.watchdog_ns = 2'000'000'000ull;
    auto Q = chain.bind(q, ws.data(), ws.size(), outs(e1), ins()).value();
    auto A = chain.bind(a, ws.data(), ws.size(), outs(e2), ins(e1), ob).value();
    auto Y = chain.bind(o, ws.data(), ws.size(), outs(), ins(e2), ob).value();
    emu::Body pq = [this, Q](emu::CtaContext& c) {
      const auto t = Q.tile();
      const int z = t.tile.z, r0 = t.tile.m * 128, r1 = std::min(S, r0 + 128), c0 = t.tile.n * 128, c1 = std::min(C3, c0 + 128);
      for (int r = r0; r < r1; ++r) {
        if (r == (r0 + r1) / 2) c.random_delay();  // a torn tile if read early
        for (int col = c0; col < c1; ++col)
          std::atomic_ref<uint32_t>(qkv(z, r, col)).store(produce_qkv(z, r, col, t.epoch), std::memory_order_relaxed);
      }
      Q.post(t);
    };
    emu::Body pa = [this, A](emu::CtaContext& c) {
      const Assignment as = A.tile();
      const int z = as.tile.z, h = as.tile.n, D = s.head_dim;
      const int q0 = as.tile.m * 128, q1 = std::min(S, q0 + 128);
      const int count = gen::attn_k_blocks_of(as.tile, gp);  // key blocks 0..m: causal
      auto want = [&](int r, int col) { return produce_qkv(z, r, col, as.epoch); };
      auto ref = [&](int r, int col) -> uint32_t& { return qkv(z, r, col); };
      // Key block j: K and V rows [j*128, +128) of head h (and Q with the first block loaded).
      auto load = [&](int j, bool with_q) {
        if (with_q) check_box(q0, q1, h * D, h * D + D, ref, want, wrong_qkv, reads_qkv);
        const int k0 = j * 128, k1 = std::min(S, k0 + 128);
        check_box(k0, k1, HD + h * D, HD + h * D + D, ref, want, wrong_qkv, reads_qkv);
        check_box(k0, k1, 2 * HD + h * D, 2 * HD + h * D + D, ref, want, wrong_qkv, reads_qkv);
      };
      bool ok = true;
      if (key_order == KeyOrder::horizon) {
        // The sync warp proves k-blocks and publishes the horizon; the load thread takes them in order.
        HorizonWord word;
        const HorizonTile<decltype(A)> t{&A, as, 0, count};
        std::thread sync([&] { run_sync_lanes<32>(t, &word, 0); });
        HorizonWaits w{&word.ready};
        for (int j = 0; j < count; ++j) {
          w.wait(j);
          w.fence_for_tma_reads();
          if (std::atomic_ref<uint32_t>(word.failed).load(std::memory_order_relaxed)) break;
          if (consumer_delays && (j & 1) == 0) c.random_delay();
          load(j, j == 0);
        }
        sync.join();
        ok = word.failed == 0;
      } else {
        // "Load the K/V blocks already published before the pending ones", as the FMHA's loader does
        // with FmhaArguments::load_published_first: the sync lanes also publish the proven k-blocks of
        // [0, 32) past the prefix (HorizonTile::publish_ahead); the loader takes the lowest proven one
        // not yet issued (HorizonWaits::first_proven) among the key blocks below the diagonal, then
        // the rest in order (k-block j's wait set covers its reads on its own:
        // OpsAttentionGeneratedPolicies above; the diagonal block m stays last, as the FMHA's masked
        // step needs).
        HorizonWord word;
        const HorizonTile<decltype(A)> t{&A, as, 0, count, /*publish_ahead=*/true};
        std::thread sync([&] { run_sync_lanes<32>(t, &word, 0); });
        HorizonWaits w{&word.ready, 0, &word.ahead};
        const int window = count - 1 < 32 ? count - 1 : 32;
        std::vector<int> order;
        uint32_t issued = 0;
        auto failed_now = [&] { return std::atomic_ref<uint32_t>(word.failed).load(std::memory_order_relaxed) != 0; };
        for (int n = 0; n < window && !failed_now(); ++n) {
          int j;
          while ((j = w.first_proven(issued, window)) < 0) w.pause();
          if (failed_now()) break;
          issued |= 1u << j;
          if (consumer_delays && (order.size() & 1) == 0) c.random_delay();
          load(j, order.empty());
          order.push_back(j);
        }
        for (int j = window; j < count && !failed_now(); ++j) {
          w.wait(j);
          if (failed_now()) break;
          if (consumer_delays && (order.size() & 1) == 0) c.random_delay();
          load(j, order.empty());
          order.push_back(j);
        }
        sync.join();
        ok = word.failed == 0;
        if (!std::is_sorted(order.begin(), order.end())) ++out_of_order;
      }
      if (!ok) {
        ++failed;
        return;  // a failed wait: the tile holds garbage, do not publish it
      }
      // The output tile: O rows [q0, q1) x head h's columns, then the post (after the stores).
      for (int r = q0; r < q1; ++r) {
        if (r == (q0 + q1) / 2) c.random_delay();
        for (int col = h * D; col < h * D + D; ++col)
          std::atomic_ref<uint32_t>(out(z, r, col)).store(produce_o(z, r, col, as.epoch), std::memory_order_relaxed);
      }
      A.post(as);
      ++tiles;
    };
    emu::Body po = [this, Y](emu::CtaContext& c) {
      const Assignment as = Y.tile();
      const int z = as.tile.z, r0 = as.tile.m * 128, r1 = std::min(S, r0 + 128), count = gen::oproj_k_blocks(gp);
      HorizonWord word;
      const HorizonTile<decltype(Y)> t{&Y, as, 0, count};
      std::thread sync([&] { run_sync_lanes<32>(t, &word, 0); });
      HorizonWaits w{&word.ready};
      for (int kb = 0; kb < count; ++kb) {
        w.wait(kb);
        w.fence_for_tma_reads();
        if (std::atomic_ref<uint32_t>(word.failed).load(std::memory_order_relaxed)) break;
        if (consumer_delays && (kb & 1) == 0) c.random_delay();
        check_box(r0, r1, kb * 64, std::min(HD, kb * 64 + 64), [&](int r, int col) -> uint32_t& { return out(z, r, col); },
                  [&](int r, int col) { return produce_o(z, r, col, as.epoch); }, wrong_o, reads_o);
      }
      sync.join();
      if (word.failed) ++failed;
    };
    return {{q.index, int(G1.size()), pq}, {a.index, int(G2.size()), pa}, {o.index, int(G3.size()), po}};
  }
};

template <class P1, class P2, class O1>
void run_chain(AttentionChainFixture<P1, P2, O1>& fx, uint64_t seed, int iters) {
  const status v = fx.chain.validate();
  ASSERT_TRUE(v.ok()) << v.to_string();
  ASSERT_TRUE(fx.chain.workspace_image(0, fx.ws).ok());
  const auto launches = fx.launches();
  emu::Emulator em({.sm_slots = fx.sm_slots, .co_schedule = true, .seed = seed, .max_delay_us = 40});
  for (int it = 0; it < iters; ++it) {
    const status st = em.run_iteration(fx.chain, fx.ws, launches);
    ASSERT_TRUE(st.ok()) << "iteration " << it << ": " << st.to_string();
  }
  EXPECT_EQ(fx.failed.load(), 0u);
}

// What every pass reads, for the count check: each attention tile Q once and K, V of key blocks 0..m;
// each O-proj tile its rows of all of O.
uint64_t expected_qkv_reads(const AttentionShape& s) {
  const int S = s.padded_seq(), blocks = ceil_div(S, 128);
  uint64_t n = 0;
  for (int m = 0; m < blocks; ++m) {
    const uint64_t rows = uint64_t(std::min(S, m * 128 + 128) - m * 128);
    n += rows * 128;                                                  // Q
    n += 2 * 128 * uint64_t(std::min(S, m * 128 + 128));              // K and V of keys 0..end of block m
  }
  return n * uint64_t(s.heads) * uint64_t(s.batch);
}

template <class O1 = RowMajor, class P1, class P2>
void run_generated(const AttentionShape& s, P1 p1, P2 p2, uint64_t seed, int iters, KeyOrder order = KeyOrder::horizon,
                   int sm_slots = 6, bool consumer_delays = true) {
  AttentionChainFixture<P1, P2, O1> fx(s, p1, deps::causal_attention(s.causal_attention_shape(), s.attention_grid()), p2,
                                       deps::gemm_a(s.oproj_footprint(), s.oproj_grid()));
  fx.key_order = order;
  fx.sm_slots = sm_slots;
  fx.consumer_delays = consumer_delays;
  run_chain(fx, seed, iters);
  EXPECT_EQ(fx.wrong_qkv.load(), 0u) << s.str() << ": QKV elements read before the QKV tile holding them posted";
  EXPECT_EQ(fx.wrong_o.load(), 0u) << s.str() << ": O elements read before the attention tile holding them posted";
  EXPECT_EQ(fx.reads_qkv.load(), uint64_t(iters) * expected_qkv_reads(s)) << s.str();
  EXPECT_EQ(fx.reads_o.load(), uint64_t(iters) * uint64_t(s.padded_tokens()) * uint64_t(s.width()) * uint64_t(s.oproj_grid().n))
      << s.str();
  EXPECT_EQ(fx.tiles.load(), uint64_t(iters) * uint64_t(s.attention_grid().size()));
  if (order == KeyOrder::published_first) {
    std::printf("%s: %llu of %llu attention tiles loaded their key blocks out of order\n", s.str().c_str(),
                (unsigned long long)fx.out_of_order.load(), (unsigned long long)fx.tiles.load());
    if constexpr (std::is_same_v<O1, ColumnMajor>) { EXPECT_GT(fx.out_of_order.load(), 0u) << "the test should reorder some"; }
  }
}

// Ragged: 300 tokens per sequence (3 query blocks, the last of 44), 2 sequences, 3 heads (QKV 9
// column tiles: Q, K, V of head h at h, 3 + h, 6 + h).
TEST(AttentionChainEmulator, KBlockBothEdgesRagged) {
  const auto s = prefill(2, 300, 3);
  const auto p = s.program_params();
  run_generated(s, gen::qkv_to_attn(p), gen::attn_to_oproj(p), 41, 25);
}
TEST(AttentionChainEmulator, TileBothEdgesRagged) {
  const auto s = prefill(2, 300, 3);
  const auto p = s.program_params();
  run_generated(s, gen::qkv_to_attn_tile(p), gen::attn_to_oproj_tile(p), 42, 25);
}
// Whole blocks (4 query blocks), TP 2 (O-proj twice as wide as O), one head per QKV column tile.
TEST(AttentionChainEmulator, KBlockWholeBlocksTensorParallel) {
  const auto s = prefill(1, 512, 2, 2);
  const auto p = s.program_params();
  run_generated(s, gen::qkv_to_attn(p), gen::attn_to_oproj(p), 43, 15);
}
// Padded: 7 tokens (run as 8), 3 sequences of one query block each.
TEST(AttentionChainEmulator, KBlockPaddedShortSequences) {
  const auto s = prefill(3, 7, 2);
  const auto p = s.program_params();
  run_generated(s, gen::qkv_to_attn(p), gen::attn_to_oproj(p), 44, 30);
}
// The QKV GEMM column-major: the attention starts while V tiles of several key blocks are in flight.
TEST(AttentionChainEmulator, KBlockBothEdgesQkvColumnMajor) {
  const auto s = prefill(2, 1000, 2);
  const auto p = s.program_params();
  run_generated<ColumnMajor>(s, gen::qkv_to_attn(p), gen::attn_to_oproj(p), 47, 20);
}
// The loader takes whichever key blocks are published first, not in order.
TEST(AttentionChainEmulator, KeyBlocksPublishedFirstAreLoadedFirst) {
  const auto s = prefill(1, 1000, 2);  // 8 query blocks: tile m walks m + 1 key blocks
  const auto p = s.program_params();
  run_generated(s, gen::qkv_to_attn(p), gen::attn_to_oproj(p), 45, 20, KeyOrder::published_first);
  // One head of 16 key blocks, the QKV GEMM column-major on 12 slots: V's last 12 key blocks are in
  // flight when the attention starts, and finish in any order.
  const auto one = prefill(1, 2048, 1);
  const auto q = one.program_params();
  run_generated<ColumnMajor>(one, gen::qkv_to_attn(q), gen::attn_to_oproj(q), 48, 30, KeyOrder::published_first, 12, false);
}

// The own-row-band policy of the checker test, run anyway (against the relation it believes, its
// own footprint, so Chain::validate passes): attention tiles read K and V of earlier key blocks
// before the QKV GEMM wrote them. (With the QKV GEMM row-major it would read nothing early here:
// under PDL co-scheduling the attention starts once every QKV tile has started, and those still
// in flight are then the last band's, which that policy waits for. Column-major leaves earlier
// bands' V tiles in flight.)
TEST(AttentionChainEmulator, OwnRowBandPolicyReadsUnwrittenKeyBlocks) {
  const auto s = prefill(1, 2048, 1);  // one head, 16 key blocks (the reordering recipe above)
  const auto p = s.program_params();
  const OwnRowBandOnly band{s.key_blocks(), 3 * s.width()};
  const KBlockPolicy<OwnRowBandOnly> policy{s.qkv_grid(), band};
  // Against the exact relation the checker refuses it (PoliciesThatForgetTheKeyBlocks... above).
  ASSERT_FALSE(check_soundness(policy, deps::causal_attention(s.causal_attention_shape(), s.attention_grid())).sound());
  AttentionChainFixture<KBlockPolicy<OwnRowBandOnly>, gen::attn_to_oproj_policy, ColumnMajor> fx(
      s, policy, deps::from_footprint(s.qkv_grid(), s.attention_grid(), band, "own row band"), gen::attn_to_oproj(p),
      deps::gemm_a(s.oproj_footprint(), s.oproj_grid()));
  fx.consumer_delays = false;
  fx.sm_slots = 12;
  run_chain(fx, 46, 60);
  EXPECT_GT(fx.wrong_qkv.load(), 0u) << "the own-row-band policy should read some K/V blocks before they are written";
  std::printf("own-row-band policy: %llu of %llu QKV elements read before the QKV GEMM wrote them\n",
              (unsigned long long)fx.wrong_qkv.load(), (unsigned long long)fx.reads_qkv.load());
}

}  // namespace
