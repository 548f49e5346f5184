// Chain description, validation, workspace and binding: every bad input gets a clear error.
#include <gtest/gtest.h>

#include <cstring>

#include "baton/chain.hpp"

using namespace baton;
using footprint::GemmA;
using footprint::Identity;

namespace {

using TP = TilePolicy<Identity>;

void expect_error(const status& s, errc code, const std::string& needle) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << "missing '" << needle << "' in: " << s.message();
}

TEST(Chain, ValidTwoStageChainValidatesAndBinds) {
  Grid g{4, 4, 1};
  Chain c;
  auto a = c.add_stage("a", g, RowMajor{});
  auto b = c.add_stage("b", g, RowMajor{});
  auto e = c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  ASSERT_TRUE(c.validate().ok());
  EXPECT_TRUE(c.validated());
  EXPECT_TRUE(c.edge(0).report.sound());
  std::vector<unsigned char> ws;
  ASSERT_TRUE(c.workspace_image(0, ws).ok());
  EXPECT_EQ(ws.size(), c.workspace_bytes());
  EXPECT_EQ(ws.size() % 128, 0u);
  auto sa = c.bind(a, ws.data(), ws.size(), outs(e), ins());
  auto sb = c.bind(b, ws.data(), ws.size(), outs(), ins(e));
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(reinterpret_cast<unsigned char*>(detail::get<0>(sa.value().out).sems),
            ws.data() + c.semaphore_offset(0));
  EXPECT_EQ(detail::get<0>(sb.value().in).sems, detail::get<0>(sa.value().out).sems);
  EXPECT_EQ(reinterpret_cast<unsigned char*>(sb.value().ticket), ws.data() + c.ticket_offset(1));
}

TEST(Chain, WorkspaceImageStartsAtTheGivenEpoch) {
  Grid pg{3, 5, 1}, cg{3, 1, 1};
  GemmA fp{96, 160, 32, 32, 32, 32};
  Chain c;
  auto a = c.add_stage("a", pg, RowMajor{});
  auto b = c.add_stage("b", cg, RowMajor{});
  (void)c.add_edge(a, b, RowPolicy<GemmA>{pg, fp}, deps::gemm_a(fp, cg));
  ASSERT_TRUE(c.validate().ok());
  std::vector<unsigned char> ws;
  const uint32_t epoch = 0xFFFFFFF0u;
  ASSERT_TRUE(c.workspace_image(epoch, ws).ok());
  uint64_t t0, t1;
  std::memcpy(&t0, ws.data() + c.ticket_offset(0), 8);
  std::memcpy(&t1, ws.data() + c.ticket_offset(1), 8);
  EXPECT_EQ(t0, uint64_t(epoch) * 15u);
  EXPECT_EQ(t1, uint64_t(epoch) * 3u);
  for (int i = 0; i < 3; ++i) {
    uint32_t v;
    std::memcpy(&v, ws.data() + c.semaphore_offset(0) + 4 * size_t(i), 4);
    EXPECT_EQ(v, uint32_t(epoch * 5u));  // 5 posters per row, wraps mod 2^32
  }
}

TEST(Chain, RejectsEmptyChainAndInvalidGrids) {
  Chain empty;
  expect_error(empty.validate(), errc::invalid_chain, "no stages");
  Chain c;
  (void)c.add_stage("bad", Grid{0, 4, 1}, RowMajor{});
  expect_error(c.validate(), errc::invalid_argument, "stage 'bad' has invalid grid 0x4x1");
  Chain n;
  (void)n.add_stage("neg", Grid{2, -1, 1}, RowMajor{});
  expect_error(n.validate(), errc::invalid_argument, "invalid grid");
}

TEST(Chain, RejectsNonBijectiveOrder) {
  Grid g{2, 2, 1};
  int table[4] = {0, 1, 1, 3};
  Chain c;
  (void)c.add_stage("s", g, Custom{table, 4});
  expect_error(c.validate(), errc::invalid_order, "not a bijection");
}

TEST(Chain, RejectsSelfBackwardDuplicateAndUnknownEdges) {
  Grid g{2, 2, 1};
  {
    Chain c;
    auto a = c.add_stage("a", g, RowMajor{});
    (void)c.add_edge(a, a, TP{g, {}}, deps::one_to_one(g));
    expect_error(c.validate(), errc::invalid_chain, "a stage cannot wait on itself");
  }
  {
    Chain c;
    auto a = c.add_stage("a", g, RowMajor{});
    auto b = c.add_stage("b", g, RowMajor{});
    (void)c.add_edge(b, a, TP{g, {}}, deps::one_to_one(g));
    expect_error(c.validate(), errc::invalid_chain, "goes backwards");
  }
  {
    Chain c;
    auto a = c.add_stage("a", g, RowMajor{});
    auto b = c.add_stage("b", g, RowMajor{});
    (void)c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
    (void)c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
    expect_error(c.validate(), errc::invalid_chain, "duplicates edge 0");
  }
  {
    Chain c;
    (void)c.add_stage("a", g, RowMajor{});
    (void)c.add_edge(0, 7, TP{g, {}}, deps::one_to_one(g));
    expect_error(c.validate(), errc::invalid_chain, "names a stage that is not in the chain");
  }
}

TEST(Chain, RejectsUnsoundPolicyWithCounterexample) {
  Grid g{4, 1, 1};
  Chain c;
  auto a = c.add_stage("a", g, RowMajor{});
  auto b = c.add_stage("b", g, RowMajor{});
  // Consumer tile m reads producer tile m, but the policy waits on the transposed tile.
  (void)c.add_edge(a, b, TilePolicy<footprint::Transpose>{g, {}}, deps::one_to_one(g));
  status s = c.validate();
  EXPECT_EQ(s.code(), errc::unsound_policy) << s.to_string();  // transposed tiles fall outside the 4x1 grid
  Grid sq{3, 3, 1};
  Chain d;
  auto x = d.add_stage("x", sq, RowMajor{});
  auto y = d.add_stage("y", sq, RowMajor{});
  (void)d.add_edge(x, y, TilePolicy<footprint::Transpose>{sq, {}}, deps::one_to_one(sq));
  expect_error(d.validate(), errc::unsound_policy, "edge 0 'x' -> 'y': consumer tile (0,1,0) k-block 0 reads producer tile (0,1,0)");
  EXPECT_FALSE(d.validated());
}

TEST(Chain, RejectsDependencyForOtherGrids) {
  Grid g{4, 4, 1};
  Chain c;
  auto a = c.add_stage("a", g, RowMajor{});
  auto b = c.add_stage("b", Grid{4, 2, 1}, RowMajor{});
  (void)c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  expect_error(c.validate(), errc::invalid_chain, "the dependency relation is for grids 4x4x1 -> 4x4x1 but the stages have 4x4x1 -> 4x2x1");
}

TEST(Chain, RejectsZeroTileSizesWithoutCrashing) {
  GemmA fp{128, 128, 32, 0, 32, 32};  // prod_tile_n = 0
  Grid pg = fp.producer_grid(), cg{4, 1, 1};
  EXPECT_FALSE(pg.valid());
  Chain c;
  auto a = c.add_stage("a", Grid{4, 4, 1}, RowMajor{});
  auto b = c.add_stage("b", cg, RowMajor{});
  (void)c.add_edge(a, b, RowPolicy<GemmA>{pg, fp}, deps::gemm_a(fp, cg));
  status s = c.validate();
  EXPECT_FALSE(s.ok());
  GemmA fk{128, 128, 32, 32, 32, 0};  // cons_tile_k = 0
  CheckReport r = check_soundness(KBlockPolicy<GemmA>{fk.producer_grid(), fk}, deps::gemm_a(fk, cg), "zero-k");
  EXPECT_EQ(r.result.code(), errc::invalid_argument) << r.summary();
  EXPECT_NE(r.result.message().find("tile sizes"), std::string::npos) << r.summary();
  footprint::ConvHalo bad;  // all-zero conv
  ConvPolicy cp{bad};
  CheckReport rc = check_soundness(cp, deps::conv_exact(bad, Grid{1, 1, 1}), "conv");
  EXPECT_FALSE(rc.sound());
}

TEST(Chain, RejectsReadWithoutEdge) {
  Grid g{2, 2, 1};
  Chain c;
  auto a = c.add_stage("A", g, RowMajor{}, {.writes = {"X"}});
  auto b = c.add_stage("B", g, RowMajor{}, {.reads = {"X"}, .writes = {"Y"}});
  (void)c.add_stage("C", g, RowMajor{}, {.reads = {"Y", "X"}});
  (void)c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  (void)c.add_edge(1, 2, TP{g, {}}, deps::one_to_one(g));
  expect_error(c.validate(), errc::invalid_chain, "stage 'C' reads 'X' written by stage 'A' but has no edge from it");
}

TEST(Chain, BindRejectsMiswiringAndSmallWorkspace) {
  Grid g{2, 2, 1};
  Chain c;
  auto a = c.add_stage("a", g, RowMajor{});
  auto b = c.add_stage("b", g, RowMajor{});
  auto e = c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  std::vector<unsigned char> ws(c.workspace_bytes());
  auto early = c.bind(a, ws.data(), ws.size(), outs(e), ins());
  expect_error(early.error(), errc::invalid_chain, "before a successful validate()");
  ASSERT_TRUE(c.validate().ok());
  expect_error(c.bind(b, ws.data(), ws.size(), outs(e), ins()).error(), errc::invalid_chain,
               "bound as an output, but this stage is not its producer");
  expect_error(c.bind(a, ws.data(), ws.size(), outs(), ins(e)).error(), errc::invalid_chain,
               "bound as an input, but this stage is not its consumer");
  expect_error(c.bind(b, ws.data(), ws.size(), outs(), ins()).error(), errc::invalid_chain,
               "stage 'b' has 1 input edges but 0 were bound");
  expect_error(c.bind(a, ws.data(), 8, outs(e), ins()).error(), errc::workspace_too_small, "the chain needs");
  expect_error(c.bind(a, nullptr, ws.size(), outs(e), ins()).error(), errc::workspace_too_small, "null");
}

TEST(Chain, AddingAStageInvalidatesTheCachedValidation) {
  Grid g{2, 2, 1};
  Chain c;
  (void)c.add_stage("a", g, RowMajor{});
  ASSERT_TRUE(c.validate().ok());
  (void)c.add_stage("b", Grid{0, 1, 1}, RowMajor{});
  EXPECT_FALSE(c.validated());
  EXPECT_FALSE(c.validate().ok());
}

TEST(Chain, ErrorStatusNamesEverything) {
  Grid g{2, 2, 1};
  Chain c;
  auto a = c.add_stage("gemm1", g, RowMajor{});
  auto b = c.add_stage("gemm2", g, RowMajor{});
  (void)c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  ErrorRecord r{};
  EXPECT_TRUE(c.error_status(r).ok());
  r.code = uint32_t(DeviceError::watchdog);
  r.stage = 1;
  r.tile_m = 1;
  r.tile_n = 0;
  r.k_block = 3;
  r.edge = 0;
  r.semaphore = 2;
  r.expected = 10;
  r.seen = 9;
  r.epoch = 4;
  expect_error(c.error_status(r), errc::watchdog_timeout,
               "stage 1 'gemm2' tile (1,0,0) k-block 3 waited on semaphore 2 of edge 0 'gemm1' -> 'gemm2': "
               "expected >= 10, seen 9, epoch 4");
  r.code = uint32_t(DeviceError::aborted);
  EXPECT_EQ(c.error_status(r).code(), errc::deadlock);
}

}  // namespace

#include "baton/trace.hpp"

namespace {
TEST(Trace, StagesRecordTilesAndExportChromeJson) {
  Grid g{2, 2, 1};
  Chain c;
  auto a = c.add_stage("producer", g, RowMajor{});
  auto b = c.add_stage("consumer", g, RowMajor{});
  auto e = c.add_edge(a, b, TP{g, {}}, deps::one_to_one(g));
  ASSERT_TRUE(c.validate().ok());
  std::vector<unsigned char> ws;
  ASSERT_TRUE(c.workspace_image(0, ws).ok());
  std::vector<std::vector<TileEvent>> ev(2, std::vector<TileEvent>(4, TileEvent{}));
  BindOptions oa, ob;
  oa.trace = ev[0].data();
  ob.trace = ev[1].data();
  auto sa = c.bind(a, ws.data(), ws.size(), outs(e), ins(), oa);
  auto sb = c.bind(b, ws.data(), ws.size(), outs(), ins(e), ob);
  ASSERT_TRUE(sa.ok() && sb.ok());
  for (int i = 0; i < 4; ++i) {
    Assignment t = sa.value().tile();
    sa.value().post(t);
  }
  for (int i = 0; i < 4; ++i) {
    Assignment t = sb.value().tile();
    ASSERT_TRUE(sb.value().wait(t));
    sb.value().done(t);
  }
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 4; ++i) {
      EXPECT_GT(ev[size_t(s)][size_t(i)].start_ns, 0u);
      EXPECT_GE(ev[size_t(s)][size_t(i)].end_ns, ev[size_t(s)][size_t(i)].start_ns);
      EXPECT_EQ(ev[size_t(s)][size_t(i)].stage, uint32_t(s));
      EXPECT_EQ(ev[size_t(s)][size_t(i)].tile, uint32_t(i));  // RowMajor: position == linear tile
    }
  const std::string j = chrome_trace_json(c, ev);
  EXPECT_NE(j.find("\"traceEvents\":["), std::string::npos);
  EXPECT_NE(j.find("\"name\":\"consumer\""), std::string::npos);
  EXPECT_NE(j.find("\"tile\":\"(1,1,0)\""), std::string::npos);
  size_t slices = 0;
  for (size_t p = j.find("\"ph\":\"X\""); p != std::string::npos; p = j.find("\"ph\":\"X\"", p + 1)) ++slices;
  EXPECT_EQ(slices, 8u);
}
}  // namespace
