// Host tests for batonc (baton/dsl): golden files for the generated headers and --explain texts of
// the programs in tests/dsl/golden, --check of hand-written policies (the MLP's), the exact
// message of every bad input in tests/dsl/bad, the AffineFootprint inversion against brute force
// on random maps, and GroupPolicy.
//
// BATON_UPDATE_GOLDEN=1 rewrites the expected files from what batonc produces now (review the diff).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "baton/dependency.hpp"
#include "baton/dsl/analysis.hpp"
#include "baton/dsl/check.hpp"
#include "baton/dsl/emit.hpp"
#include "baton/dsl/program.hpp"
#include "baton/policy.hpp"

namespace {

namespace fs = std::filesystem;
using namespace baton;
using namespace baton::dsl;

const fs::path kDslDir = fs::path(BATON_SOURCE_DIR) / "tests" / "dsl";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
bool update_golden() {
  const char* v = std::getenv("BATON_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}
// Compares `got` with the file (or rewrites it under BATON_UPDATE_GOLDEN=1).
void expect_golden(const fs::path& p, const std::string& got) {
  if (update_golden()) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << got;
    return;
  }
  ASSERT_TRUE(fs::exists(p)) << p << " is missing (run the host tests with BATON_UPDATE_GOLDEN=1)";
  EXPECT_EQ(slurp(p), got) << "golden file " << p << " differs (BATON_UPDATE_GOLDEN=1 rewrites it)";
}
// Paths in messages and banners are relative to the repository (stable across checkouts).
std::string rel(const fs::path& p) { return fs::relative(p, BATON_SOURCE_DIR).generic_string(); }

result<Analysis> compile(const fs::path& p) {
  auto prog = parse(rel(p), slurp(p));
  if (!prog.ok()) return prog.error();
  return analyze(std::move(prog.value()));
}

std::vector<fs::path> files(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// ---- golden programs -------------------------------------------------------------------------------

TEST(Batonc, GoldenProgramsCompileToTheCommittedHeadersAndExplanations) {
  const auto progs = files(kDslDir / "golden", ".baton");
  // The forms issue 5 lists: row GEMM, SwiGLU pair, 3x3 conv, stride-2 conv, attention, transposed,
  // 3-stage chain, custom grouping; plus the MLP op's own description.
  // Issue 23's worked programs: the ResNet basic block and its downsampling block (stride 2,
  // against conv_exact) and QKV -> causal attention -> O-proj (against causal_attention and gemm_a).
  const std::set<std::string> want{"attention", "chain3", "conv3x3",      "conv_stride2",     "gemm_row",         "grouping",
                                   "swiglu",    "transposed", "resnet_block", "resnet_downsample", "causal_attention"};
  std::set<std::string> have;
  for (const auto& p : progs) have.insert(p.stem().string());
  for (const auto& w : want) EXPECT_TRUE(have.count(w)) << "missing golden program " << w;
  for (const auto& p : progs) {
    SCOPED_TRACE(p.string());
    auto a = compile(p);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    EmitOptions eo;
    eo.command = "batonc " + rel(p) + " -o " + rel(fs::path(p).replace_extension(".hpp"));
    expect_golden(fs::path(p).replace_extension(".hpp"), emit_header(a.value(), eo));
    expect_golden(fs::path(p).replace_extension(".explain"), explain(a.value()));
  }
}

// What the choices are, independent of the golden text.
TEST(Batonc, ChoosesTheEarliestStartThenTheFewestWaits) {
  auto pick = [](const char* name) {
    auto a = compile(kDslDir / "golden" / (std::string(name) + ".baton"));
    EXPECT_TRUE(a.ok()) << a.error().to_string();
    std::vector<std::string> out;
    for (const EdgeInfo& e : a.value().edges) out.push_back(candidate_name(e.candidates[size_t(e.chosen)]));
    return out;
  };
  // GEMM chains: k-block kb of a consumer reads one producer tile: per k-block waits start it after 1 tile.
  EXPECT_EQ(pick("gemm_row"), std::vector<std::string>{"kblock"});
  EXPECT_EQ(pick("swiglu"), std::vector<std::string>{"kblock"});
  EXPECT_EQ(pick("chain3"), (std::vector<std::string>{"kblock", "tile"}));
  // No k-loop on the consumer: per tile (same start, kblock is no earlier).
  EXPECT_EQ(pick("transposed"), std::vector<std::string>{"tile"});
  // A whole head per consumer tile: one semaphore per column of tiles (the head) is one wait.
  EXPECT_EQ(pick("attention"), std::vector<std::string>{"column"});
  EXPECT_EQ(pick("grouping"), std::vector<std::string>{"group(2,4)"});
}

// Issue 23: attention over the [Q|K|V] layout reads QKV in three places per k-block (Q's, K's and
// V's column blocks of its head). Their bounding box spans every column block between Q and V (40.5
// producer tiles before a query tile starts); the union of the three boxes is 3 tiles: the query
// block and key block j's K and V. The GEMM-shaped O-projection edge keeps footprint::GemmA.
TEST(Batonc, AttentionOverQkvStartsAfterThreeProducerTiles) {
  auto a = compile(kDslDir / "golden" / "causal_attention.baton");
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_EQ(a.value().edges.size(), 2u);
  const EdgeInfo& qkv = a.value().edges[0];
  EXPECT_TRUE(qkv.boxes);
  const Candidate& c = qkv.candidates[size_t(qkv.chosen)];
  EXPECT_EQ(candidate_name(c), "kblock");
  EXPECT_TRUE(c.boxes);
  EXPECT_EQ(c.start_tiles, 3.0);
  EXPECT_EQ(c.bbox_start_tiles, 40.5);  // what the merged bounding box would cost
  EXPECT_LT(c.over_sync, c.bbox_over_sync);
  for (const Candidate& x : qkv.candidates) EXPECT_TRUE(x.sound && x.boxes) << candidate_name(x) << ": " << x.why_not;
  const EdgeInfo& oproj = a.value().edges[1];
  EXPECT_FALSE(oproj.boxes);
  EXPECT_EQ(oproj.candidates[size_t(oproj.chosen)].footprint, "gemm_a");
  // The emitted policy is the union's, its relation deps::from_boxes.
  const std::string h = emit_header(a.value());
  EXPECT_NE(h.find("using qkv_to_attention_policy = ::baton::dsl::BoxesPolicy<::baton::dsl::Grouping::tile>;"), std::string::npos);
  EXPECT_NE(h.find("::baton::deps::from_boxes(qkv_grid(p), attention_grid(p)"), std::string::npos);
  EXPECT_NE(h.find("using attention_to_oproj_policy = ::baton::KBlockPolicy<::baton::footprint::GemmA>;"), std::string::npos);
  // One access, or accesses whose boxes touch (attention.baton's K and V): the bounding box, as before.
  auto b = compile(kDslDir / "golden" / "attention.baton");
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  for (const EdgeInfo& e : b.value().edges) EXPECT_FALSE(e.boxes);
}

// Edges of GEMM form are proven and emitted over footprint::GemmA; the others, and GEMM-like edges
// whose grids have a z extent (GemmA maps consumer z to producer z), keep dsl::AffineFootprint.
TEST(Batonc, LowersGemmShapedEdgesToGemmAOnly) {
  auto footprints = [](const std::string& src) {
    auto prog = parse("inline.baton", src);
    EXPECT_TRUE(prog.ok()) << prog.error().to_string();
    auto a = analyze(std::move(prog.value()));
    EXPECT_TRUE(a.ok()) << a.error().to_string();
    std::vector<std::string> out;
    for (const EdgeInfo& e : a.value().edges) out.push_back(e.candidates[size_t(e.chosen)].footprint);
    return out;
  };
  const std::string gemm = R"(param M = 256
tensor Y[M, 512]
tensor Z[M, 256]
stage p { grid m < cdiv(M, 128), n < 4
  tile 128 x 128 x 64
  writes Y[m*128 +: 128, n*128 +: 128] }
stage c { grid m < cdiv(M, 128), n < 2
  tile 128 x 128 x 64
  k kb < 8
  reads Y[m*128 +: 128, kb*64 +: 64]
  writes Z[m*128 +: 128, n*128 +: 128] }
)";
  EXPECT_EQ(footprints(gemm), std::vector<std::string>{"gemm_a"});
  // The same consumer over 3 batches (z) that all read the one Y: sound over the affine maps only.
  std::string batched = gemm;
  batched.replace(batched.find("n < 2"), 5, "n < 2, z < 3");
  batched.replace(batched.find("tensor Z[M, 256]"), 16, "tensor Z[3, M, 256]");  // a Z per batch: no overlap
  batched.replace(batched.find("writes Z["), 9, "writes Z[z, ");
  EXPECT_EQ(footprints(batched), std::vector<std::string>{"affine"});
  // ... and --explain says what z costs and how to keep the cheaper footprint.
  auto b = analyze(parse("inline.baton", batched).value());
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  EXPECT_NE(explain(b.value()).find("hint: the maps have footprint::GemmA's form but for the grids' z axis"), std::string::npos);
  EXPECT_TRUE(analyze(parse("inline.baton", gemm).value()).value().edges[0].lowering_hint.empty());
  EXPECT_EQ(footprints(slurp(kDslDir / "golden" / "conv3x3.baton")), std::vector<std::string>{"affine"});
}

TEST(Batonc, EveryCandidateReportedSoundIsSoundAndTheOthersAreNot) {
  for (const auto& p : files(kDslDir / "golden", ".baton")) {
    SCOPED_TRACE(p.string());
    auto a = compile(p);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    for (const EdgeInfo& e : a.value().edges) {
      AffineFootprint fp;
      ASSERT_TRUE(Analyzer::footprint(a.value(), e, a.value().bindings[0], fp).ok());
      Grid cg;
      ASSERT_TRUE(Analyzer::grid(a.value().program, a.value().stages[size_t(e.consumer)], a.value().bindings[0], cg).ok());
      const DependencyRelation rel_ = Analyzer::relation(fp, cg, e.label);
      for (const Candidate& c : e.candidates) {
        const CheckReport r = with_policy(c, fp.producer, fp, [&](const auto& pol) { return check_soundness(pol, rel_); });
        // Unsound candidates may fail at another binding only; sound ones hold at the defaults.
        if (c.sound) {
          EXPECT_TRUE(r.sound()) << candidate_name(c) << ": " << r.summary();
        }
      }
    }
  }
}

// ---- --check: the MLP's hand-written policies ----------------------------------------------------

TEST(Batonc, ChecksTheMlpHandWrittenPolicies) {
  auto a = compile(kDslDir / "golden" / "gemm_row.baton");
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  // baton::ops::Mlp's policies: RowPolicy<GemmA> and KBlockPolicy<GemmA> over the GEMM1 grid.
  auto row = check_policy(a.value(), "gemm1->gemm2=row@gemm_a");
  ASSERT_TRUE(row.ok()) << row.error().to_string();
  EXPECT_EQ(row.value(), "sound: gemm1 -> gemm2 = row @ gemm_a covers every read (896 reads checked over 5 binding(s))");
  auto kb = check_policy(a.value(), "gemm1 -> gemm2 = kblock @ gemm_a");
  ASSERT_TRUE(kb.ok()) << kb.error().to_string();
  // Other sound forms: per tile over the program's own maps, row per k-block over GemmA.
  EXPECT_TRUE(check_policy(a.value(), "gemm1->gemm2=tile@affine").ok());
  EXPECT_TRUE(check_policy(a.value(), "gemm1->gemm2=row_k@gemm_a").ok());
  // A footprint of one k-block for a consumer of eight is refused before any read is checked.
  auto wrong_k = check_policy(a.value(), "gemm1->gemm2=column_k@transpose");
  ASSERT_FALSE(wrong_k.ok());
  EXPECT_EQ(wrong_k.error().code(), errc::invalid_policy);
}

// The golden form: mlp.check holds batonc's --check output for the op's two policies.
TEST(Batonc, MlpHandWrittenPoliciesCheckGolden) {
  auto a = compile(kDslDir / "golden" / "mlp.baton");
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  std::string out;
  for (const char* spec : {"gemm1->gemm2=row@gemm_a", "gemm1->gemm2=kblock@gemm_a"}) {
    auto r = check_policy(a.value(), spec);
    ASSERT_TRUE(r.ok()) << spec << ": " << r.error().to_string();
    out += r.value() + "\n";
  }
  expect_golden(kDslDir / "golden" / "mlp.check", out);
}

TEST(Batonc, CheckNamesTheMissedDependency) {
  // A policy waiting per k-block but for the wrong rows of tiles: the transposed grid's footprint
  // over a square producer.
  const std::string src =
      "param M = 256\nparam F = 256\ntensor Y[M, F]\ntensor Z[M, F]\n"
      "stage p {\n grid m < cdiv(M, 128), n < cdiv(F, 128)\n writes Y[m*128 +: 128, n*128 +: 128]\n}\n"
      "stage c {\n grid m < cdiv(M, 128), n < cdiv(F, 128)\n reads Y[m*128 +: 128, n*128 +: 128]\n writes Z[m*128 +: 128, n*128 +: 128]\n}\n";
  auto prog = parse("square.baton", src);
  ASSERT_TRUE(prog.ok()) << prog.error().to_string();
  auto a = analyze(prog.value());
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  auto r = check_policy(a.value(), "p->c=tile@transpose");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::unsound_policy);
  EXPECT_EQ(r.error().message(),
            "p -> c: consumer tile (0,1,0) k-block 0 reads producer tile (0,1,0) (posts to semaphore 1) without a wait "
            "that covers it: no wait on semaphore 1 before or at this k-block (with F=256, M=256)");
  EXPECT_TRUE(check_policy(a.value(), "p->c=tile@identity").ok());
}

TEST(Batonc, CheckRejectsBadSpecs) {
  auto a = compile(kDslDir / "golden" / "gemm_row.baton");
  ASSERT_TRUE(a.ok());
  struct C {
    const char* spec;
    const char* msg;
  } cases[] = {
      {"gemm1=row", "--check wants PRODUCER->CONSUMER=POLICY[@FOOTPRINT], got 'gemm1=row'"},
      {"gemm9->gemm2=row", "--check: unknown stage 'gemm9'"},
      {"gemm2->gemm1=row", "--check: no dependency gemm2 -> gemm1 in tests/dsl/golden/gemm_row.baton"},
      {"gemm1->gemm2=rows", "--check: unknown policy 'rows' (tile, kblock, row, row per k, column, column per k, group(GM,GN), group(GM,GN) per k)"},
      {"gemm1->gemm2=group(0,2)", "--check: unknown policy 'group(0,2)' (tile, kblock, row, row per k, column, column per k, group(GM,GN), group(GM,GN) per k)"},
      {"gemm1->gemm2=row@conv", "--check: unknown footprint 'conv' (affine, gemm_a, identity, transpose, all_of_batch)"},
  };
  for (const C& c : cases) {
    auto r = check_policy(a.value(), c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.error().message(), c.msg);
  }
}

// ---- relations given apart from the maps ---------------------------------------------------------

// The MLP op's own program (include/baton/ops/mlp.baton) against the library's exact GEMM relation:
// at every binding it lists, both chains' maps read exactly what deps::gemm_a says, and every
// candidate policy is proven against it.
TEST(Batonc, MlpOpProgramIsCrossCheckedAgainstGemmA) {
  const fs::path p = fs::path(BATON_SOURCE_DIR) / "include" / "baton" / "ops" / "mlp.baton";
  auto prog = parse(rel(p), slurp(p));
  ASSERT_TRUE(prog.ok()) << prog.error().to_string();
  ASSERT_TRUE(add_relations(prog.value(), "--relation",
                            "relation gelu_up -> gelu_down : gemm_a(rows = M, cols = F, prod_tile_m = 128, prod_tile_n = 128,"
                            " cons_tile_m = 128, cons_tile_k = 64)\n"
                            "relation swiglu_up -> swiglu_down : gemm_a(rows = M, cols = F, prod_tile_m = 128, prod_tile_n = 64,"
                            " cons_tile_m = 128, cons_tile_k = 64)")
                  .ok());
  auto a = analyze(prog.value());
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_EQ(a.value().edges.size(), 2u);
  for (const EdgeInfo& e : a.value().edges) {
    ASSERT_NE(e.relation, nullptr);
    EXPECT_EQ(e.over_reads, 0);
    for (const Candidate& c : e.candidates) EXPECT_TRUE(c.sound) << e.label << " " << candidate_name(c) << ": " << c.why_not;
  }
  // The op's hand-written policies too, named as the language spells them.
  auto chk = analyze(without_syncs(prog.value()), Analyzer::kProofBudget, AnalyzeOptions{.prove_relations = false});
  ASSERT_TRUE(chk.ok());
  for (const char* spec : {"gelu_up->gelu_down=row@gemm_a", "gelu_up->gelu_down=kblock@gemm_a", "swiglu_up->swiglu_down=row per k"}) {
    auto r = check_policy(chk.value(), spec);
    EXPECT_TRUE(r.ok()) << spec << ": " << r.error().to_string();
    if (r.ok()) { EXPECT_NE(r.value().find("of the maps and of gemm_a"), std::string::npos) << r.value(); }
  }
  // A relation that disagrees with the maps (the wrong producer tile width) is an error.
  auto wrong = parse(rel(p), slurp(p));
  ASSERT_TRUE(wrong.ok());
  ASSERT_TRUE(add_relations(wrong.value(), "--relation",
                            "relation gelu_up -> gelu_down : gemm_a(rows = M, cols = F, prod_tile_m = 128, prod_tile_n = 64,"
                            " cons_tile_m = 128, cons_tile_k = 64)")
                  .ok());
  auto bad = analyze(wrong.value());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("--relation:1:33: gemm_a gives a producer grid of 1x43x1 tiles, but stage 'gelu_up' has 1x22x1"),
            std::string::npos)
      << bad.error().message();
}

TEST(Batonc, RelationLinesAreChecked) {
  const std::string base =
      "param M = 256\ntensor Y[M, 256]\ntensor Z[M, 256]\n"
      "stage p {\n grid m < cdiv(M, 128), n < 2\n writes Y[m*128 +: 128, n*128 +: 128]\n}\n"
      "stage c {\n grid m < cdiv(M, 128), n < 2\n k kb < 4\n reads Y[m*128 +: 128, kb*64 +: 64]\n writes Z[m*128 +: 128, n*128 +: 128]\n}\n";
  auto message = [&](const std::string& line) {
    auto prog = parse("r.baton", base + line);
    if (!prog.ok()) return prog.error().message();
    auto a = analyze(prog.value());
    return a.ok() ? std::string("ok") : a.error().message();
  };
  const std::string gemm = "(rows = M, cols = 256, prod_tile_m = 128, prod_tile_n = 128, cons_tile_m = 128, cons_tile_k = 64)";
  EXPECT_EQ(message("relation p -> c : gemm_a" + gemm), "ok");
  auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };
  EXPECT_EQ(first_line(message("relation p -> c : gema" + gemm)),
            "r.baton:14:19: unknown relation 'gema'; did you mean 'gemm_a'? (conv_exact, gemm_a, causal_attention, one_to_one, transposed)");
  EXPECT_EQ(first_line(message("relation p -> c : gemm_a(rows = M)")),
            "r.baton:14:19: gemm_a needs argument 'cols' (its arguments: rows, cols, prod_tile_m, prod_tile_n, cons_tile_m, cons_tile_k)");
  EXPECT_EQ(first_line(message("relation p -> c : gemm_a(row = M)")),
            "r.baton:14:26: gemm_a has no argument 'row'; did you mean 'rows'? (its arguments: rows, cols, prod_tile_m, prod_tile_n, "
            "cons_tile_m, cons_tile_k)");
  EXPECT_EQ(first_line(message("relation c -> p : one_to_one")), "r.baton:14:10: no dependency c -> p: 'p' reads nothing 'c' writes");
  EXPECT_EQ(first_line(message("relation p -> cc : one_to_one")), "r.baton:14:10: unknown stage 'cc' in relation; did you mean 'c'?");
  EXPECT_EQ(first_line(message("relation p -> c : gemm_a" + gemm + "\nrelation p -> c : one_to_one")),
            "r.baton:15:10: a second relation for p -> c");
  // one_to_one reads one tile per consumer tile: the maps read two per k-block (more), and the
  // relation has one k-block where the consumer has four.
  EXPECT_EQ(first_line(message("relation p -> c : one_to_one")),
            "r.baton:14:19: one_to_one gives 1 k-blocks, but stage 'c' has 4: the relation and the program walk k differently");
}

// ---- bad inputs: tests/dsl/bad/<name>.baton -> the exact message in <name>.err ---------------------

TEST(Batonc, BadInputsGiveTheirExactMessages) {
  const auto progs = files(kDslDir / "bad", ".baton");
  EXPECT_GE(progs.size(), 20u);
  for (const auto& p : progs) {
    SCOPED_TRACE(p.string());
    auto prog = parse(rel(p), slurp(p));
    std::string msg;
    // <name>.args: batonc's extra arguments, one per line (--check SPEC, --relation TEXT), as the
    // batonc.bad.<name> ctest passes them.
    std::vector<std::string> checks;
    if (const fs::path args = fs::path(p).replace_extension(".args"); fs::exists(args)) {
      std::istringstream in(slurp(args));
      std::vector<std::string> lines;
      for (std::string l; std::getline(in, l);) lines.push_back(l);
      for (size_t i = 0; i + 1 < lines.size(); i += 2) {
        if (lines[i] == "--check") checks.push_back(lines[i + 1]);
        else if (lines[i] == "--relation" && prog.ok()) ASSERT_TRUE(add_relations(prog.value(), "--relation", lines[i + 1]).ok());
        else FAIL() << "unknown argument " << lines[i] << " in " << args;
      }
    }
    if (!prog.ok()) {
      msg = prog.error().to_string();
    } else if (!checks.empty()) {
      auto a = analyze(without_syncs(std::move(prog.value())), Analyzer::kProofBudget, AnalyzeOptions{.prove_relations = false});
      ASSERT_TRUE(a.ok()) << a.error().to_string();
      for (const std::string& c : checks) {
        auto r = check_policy(a.value(), c);
        if (!r.ok()) {
          msg = r.error().to_string();
          break;
        }
      }
      ASSERT_FALSE(msg.empty()) << "every --check passed";
    } else {
      auto a = analyze(std::move(prog.value()));
      ASSERT_FALSE(a.ok()) << "accepted a bad program";
      msg = a.error().to_string();
    }
    expect_golden(fs::path(p).replace_extension(".err"), msg + "\n");
  }
}

TEST(Batonc, SetOverridesAParameter) {
  auto prog = parse("s.baton", "param M = 4\nparam N = M * 2\ntensor T[N]\nstage a {\n grid m < N\n writes T[m]\n}\n");
  ASSERT_TRUE(prog.ok());
  ASSERT_TRUE(apply_set(prog.value(), "M=5").ok());
  auto a = analyze(prog.value());
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a.value().bindings[0].at("N"), 10);
  EXPECT_EQ(apply_set(prog.value(), "Q=1").message(), "--set: the program has no parameter 'Q'");
  EXPECT_EQ(apply_set(prog.value(), "M=-1").message(), "--set M: '-1' is not a non-negative integer below 2^40");
  EXPECT_EQ(apply_set(prog.value(), "M").message(), "--set wants NAME=VALUE, got 'M'");
}

// ---- AffineFootprint: the per-dimension inversion is the exact relation ----------------------------

TEST(AffineFootprint, RectsAreExactlyTheTilesWhoseWritesMeetTheReads) {
  std::mt19937 rng(1234);
  auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    AffineFootprint fp;
    fp.producer = Grid{rnd(1, 6), rnd(1, 6), rnd(1, 3)};
    fp.kvars = rnd(0, 2);
    for (int j = 0; j < fp.kvars; ++j) fp.kext[j] = rnd(1, 4);
    fp.accesses = rnd(1, 3);
    for (int a = 0; a < fp.accesses; ++a) {
      fp.access[a].dims = rnd(1, 3);
      std::vector<int> axes{0, 1, 2};
      std::shuffle(axes.begin(), axes.end(), rng);
      for (int d = 0; d < fp.access[a].dims; ++d) {
        AffineDim& x = fp.access[a].dim[d];
        x.cm = rnd(-3, 5);
        x.cn = rnd(-3, 5);
        x.cz = rnd(0, 3);
        for (int j = 0; j < fp.kvars; ++j) x.ck[j] = rnd(-2, 4);
        x.c0 = rnd(-4, 6);
        x.width = rnd(1, 9);
        x.axis = rnd(0, 3) == 0 ? -1 : axes[size_t(d)];
        x.pc = rnd(1, 6);
        x.p0 = rnd(-3, 4);
        x.pw = rnd(1, 8);
        x.extent = rnd(1, 40);
      }
    }
    // Some first dimensions are conv taps ('@conv'): images of img_h x img_w, shifts per k.
    bool conv = false;
    for (int a = 0; a < fp.accesses; ++a)
      if (rnd(0, 3) == 0) {
        AffineDim& x = fp.access[a].dim[0];
        x.img_h = rnd(1, 4);
        x.img_w = rnd(1, 5);
        for (int j = 0; j < kMaxKVars; ++j) x.ck[j] = 0;
        for (int j = 0; j < fp.kvars; ++j) {
          x.rk[j] = rnd(-1, 1);
          x.sk[j] = rnd(-1, 1);
        }
        x.r0 = rnd(-2, 2);
        x.s0 = rnd(-2, 2);
        conv = true;
      }
    ASSERT_EQ(fp.invalid_reason(), nullptr);
    const Grid cg{rnd(1, 4), rnd(1, 4), rnd(1, 2)};
    const DependencyRelation exact = Analyzer::relation(fp, cg, "random");
    for (int ci = 0; ci < int(cg.size()); ++ci) {
      const Tile t = cg.tile(ci);
      TileRect all{};
      bool any = false;
      for (int k = 0; k < fp.k_blocks(); ++k) {
        std::set<int> truth;
        exact.reads(t, k, [&](Tile p) { truth.insert(fp.producer.linear(p)); });
        const TileRect r = fp.rect(t, k);
        std::set<int> got;
        for (int z = r.z0; z < r.z1; ++z)
          for (int m = r.m0; m < r.m1; ++m)
            for (int n = r.n0; n < r.n1; ++n) got.insert(fp.producer.linear(Tile{m, n, z}));
        // One access: exact. Several: the bounding box of exact boxes (covers, may add).
        // A conv tap's box spans its first to last pixel: exact unless a producer tile fits in a
        // padding gap (covers, may add).
        if (fp.accesses == 1 && !conv) {
          ASSERT_EQ(got, truth) << "trial " << trial << " tile " << ci << " k " << k;
        }
        for (int v : truth) ASSERT_TRUE(got.count(v)) << "trial " << trial << " misses a read";
        // rects: one box per access that reads anything; their union is exact, for any number of accesses.
        TileRect box[AffineFootprint::kMaxBoxes];
        const int nb = fp.rects(t, k, box);
        std::set<int> uni;
        for (int b = 0; b < nb; ++b) {
          ASSERT_FALSE(box[b].empty());
          for (int z = box[b].z0; z < box[b].z1; ++z)
            for (int m = box[b].m0; m < box[b].m1; ++m)
              for (int n = box[b].n0; n < box[b].n1; ++n) uni.insert(fp.producer.linear(Tile{m, n, z}));
        }
        if (!conv) {
          ASSERT_EQ(uni, truth) << "trial " << trial << " tile " << ci << " k " << k;
        }
        for (int v : truth) ASSERT_TRUE(uni.count(v)) << "trial " << trial << " rects miss a read";
        if (!r.empty()) {
          all = any ? TileRect{std::min(all.m0, r.m0), std::max(all.m1, r.m1), std::min(all.n0, r.n0), std::max(all.n1, r.n1),
                               std::min(all.z0, r.z0), std::max(all.z1, r.z1)}
                    : r;
          any = true;
        }
        ++checked;
      }
      // rect_all covers every k-block's rect.
      const TileRect ra = fp.rect_all(t);
      if (any) {
        EXPECT_LE(ra.m0, all.m0);
        EXPECT_GE(ra.m1, all.m1);
        EXPECT_LE(ra.n0, all.n0);
        EXPECT_GE(ra.n1, all.n1);
        EXPECT_LE(ra.z0, all.z0);
        EXPECT_GE(ra.z1, all.z1);
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// BoxesPolicy: every grouping over the union of the boxes is sound against the exact relation,
// waits for no more than the same grouping over the bounding box, and deps::from_boxes is the
// exact relation.
TEST(AffineFootprint, BoxesPoliciesAreSoundAndNoLooserThanTheBoundingBox) {
  std::mt19937 rng(99);
  auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tighter = 0;
  for (int trial = 0; trial < 150; ++trial) {
    AffineFootprint fp;
    fp.producer = Grid{rnd(1, 5), rnd(1, 6), rnd(1, 2)};
    fp.kvars = rnd(0, 2);
    for (int j = 0; j < fp.kvars; ++j) fp.kext[j] = rnd(1, 3);
    fp.accesses = rnd(2, 4);
    for (int a = 0; a < fp.accesses; ++a) {
      fp.access[a].dims = 2;
      for (int d = 0; d < 2; ++d) {
        AffineDim& x = fp.access[a].dim[d];
        x.cm = d == 0 ? rnd(0, 4) : 0;
        x.cn = d == 1 ? rnd(0, 4) : 0;
        for (int j = 0; j < fp.kvars; ++j) x.ck[j] = rnd(-1, 3);
        x.c0 = rnd(-2, 12);
        x.width = rnd(1, 4);
        x.axis = d;
        x.pc = x.pw = rnd(1, 4);
        x.extent = rnd(4, 24);
      }
    }
    ASSERT_EQ(fp.invalid_reason(), nullptr);
    const Grid cg{rnd(1, 4), rnd(1, 4), 1};
    const DependencyRelation exact = Analyzer::relation(fp, cg, "random");
    auto diff = deps::compare(deps::from_boxes(fp.producer, cg, fp, "boxes"), exact);
    ASSERT_TRUE(diff.ok()) << diff.error().to_string();
    EXPECT_TRUE(diff.value().same()) << "trial " << trial;
    for (bool per_k : {false, true}) {
      auto both = [&](const auto& boxes, const auto& bbox) {
        const CheckReport r = check_soundness(boxes, exact, "boxes");
        const CheckReport q = check_soundness(bbox, exact, "bbox");
        ASSERT_TRUE(r.sound()) << "trial " << trial << ": " << r.summary();
        ASSERT_TRUE(q.sound()) << "trial " << trial << ": " << q.summary();
        EXPECT_LE(r.waits, q.waits) << "trial " << trial;
        EXPECT_LE(r.over_sync_pairs, q.over_sync_pairs) << "trial " << trial;
        tighter += r.over_sync_pairs < q.over_sync_pairs;
      };
      both(BoxesPolicy<Grouping::tile>{fp.producer, fp, per_k}, TilePolicy<AffineFootprint>{fp.producer, fp, per_k});
      both(BoxesPolicy<Grouping::row>{fp.producer, fp, per_k}, RowPolicy<AffineFootprint>{fp.producer, fp, per_k});
      both(BoxesPolicy<Grouping::column>{fp.producer, fp, per_k}, ColumnPolicy<AffineFootprint>{fp.producer, fp, per_k});
      both(BoxesPolicy<Grouping::group>{fp.producer, fp, per_k, 2, 3}, GroupPolicy<AffineFootprint>{fp.producer, fp, 2, 3, per_k});
    }
  }
  EXPECT_GT(tighter, 20);  // the union is often strictly tighter
}

// ---- GroupPolicy --------------------------------------------------------------------------------

TEST(GroupPolicy, BlocksAtTheEdgeHaveFewerPostersAndProofsHold) {
  const Grid g{5, 7, 2};
  GroupPolicy<footprint::Identity> p{g, {}, 2, 3, false};
  EXPECT_EQ(p.num_semaphores(), 3 * 3 * 2);
  EXPECT_EQ(p.post_index(Tile{4, 6, 1}), (1 * 3 + 2) * 3 + 2);
  EXPECT_EQ(p.block_size(2, 2), 1u);  // rows 4..4, cols 6..6
  EXPECT_EQ(p.block_size(0, 0), 6u);
  const DependencyRelation id = deps::one_to_one(g);
  const CheckReport r = check_soundness(p, id);
  EXPECT_TRUE(r.sound()) << r.summary();
  EXPECT_GT(r.over_sync_pairs, 0);  // a block forces its neighbours
  // group(1, 1) is TilePolicy: no over-synchronization.
  const CheckReport t = check_soundness(GroupPolicy<footprint::Identity>{g, {}, 1, 1, false}, id);
  EXPECT_TRUE(t.sound());
  EXPECT_EQ(t.over_sync_pairs, 0);
}

}  // namespace
