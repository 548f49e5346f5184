// Host tests for baton/order.hpp: built-in tile orders and validate_order().
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "baton/order.hpp"
#include "baton/status.hpp"
#include "baton/tile.hpp"
#include "host_test_printers.hpp"

namespace {

using baton::ColumnMajor;
using baton::Custom;
using baton::errc;
using baton::Grid;
using baton::Grouped;
using baton::RowMajor;
using baton::Tile;
using baton::Transposed;

template <class O>
std::vector<Tile> sequence(const O& order, Grid g) {
  std::vector<Tile> out;
  for (int p = 0; p < int(g.size()); ++p) out.push_back(order(g, p));
  return out;
}

// Independent reference for Grouped: bands of group_m rows, each band walked column by column.
std::vector<Tile> grouped_reference(Grid g, int group_m) {
  std::vector<Tile> out;
  for (int z = 0; z < g.z; ++z)
    for (int r0 = 0; r0 < g.m; r0 += group_m) {
      int r1 = std::min(g.m, r0 + group_m);
      for (int n = 0; n < g.n; ++n)
        for (int m = r0; m < r1; ++m) out.push_back(Tile{m, n, z});
    }
  return out;
}

std::string str(Tile t) {
  return "(" + std::to_string(t.m) + "," + std::to_string(t.n) + "," + std::to_string(t.z) + ")";
}

void expect_same(const std::vector<Tile>& a, const std::vector<Tile>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "position " << i << ": " << str(a[i]) << " vs " << str(b[i]);
}

const std::vector<Grid> kGrids = {
    {1, 1, 1}, {1, 7, 1}, {7, 1, 1}, {3, 5, 1}, {5, 3, 1}, {4, 4, 1}, {3, 5, 2}, {2, 3, 4}, {7, 11, 3}, {1, 1, 5},
};

// ---------------------------------------------------------------- RowMajor / ColumnMajor

TEST(Order, RowMajorExplicitSequence) {
  Grid g{2, 3, 2};
  std::vector<Tile> want = {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {1, 0, 0}, {1, 1, 0}, {1, 2, 0},
                            {0, 0, 1}, {0, 1, 1}, {0, 2, 1}, {1, 0, 1}, {1, 1, 1}, {1, 2, 1}};
  expect_same(sequence(RowMajor{}, g), want);
  for (int p = 0; p < int(g.size()); ++p) EXPECT_EQ(g.linear(RowMajor{}(g, p)), p);
}

TEST(Order, ColumnMajorExplicitSequence) {
  Grid g{2, 3, 2};
  std::vector<Tile> want = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 2, 0}, {1, 2, 0},
                            {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}, {0, 2, 1}, {1, 2, 1}};
  expect_same(sequence(ColumnMajor{}, g), want);
}

TEST(Order, BuiltinsAreBijectionsOnManyGrids) {
  for (Grid g : kGrids) {
    SCOPED_TRACE("grid " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.z));
    EXPECT_TRUE(validate_order(RowMajor{}, g).ok());
    EXPECT_TRUE(validate_order(ColumnMajor{}, g).ok());
    EXPECT_TRUE(validate_order(Transposed<RowMajor>{}, g).ok());
    EXPECT_TRUE(validate_order(Transposed<ColumnMajor>{}, g).ok());
    for (int gm : {1, 2, 3, 4, 8, 100}) {
      EXPECT_TRUE(validate_order(Grouped{gm}, g).ok()) << "group_m " << gm;
      EXPECT_TRUE(validate_order(Transposed<Grouped>{Grouped{gm}}, g).ok()) << "group_m " << gm;
    }
  }
}

TEST(Order, SingleTileGrid) {
  Grid g{1, 1, 1};
  EXPECT_EQ(RowMajor{}(g, 0), (Tile{0, 0, 0}));
  EXPECT_EQ(ColumnMajor{}(g, 0), (Tile{0, 0, 0}));
  EXPECT_EQ(Transposed<RowMajor>{}(g, 0), (Tile{0, 0, 0}));
  EXPECT_EQ(Grouped{8}(g, 0), (Tile{0, 0, 0}));
  int table[] = {0};
  EXPECT_TRUE(validate_order(Custom{table, 1}, g).ok());
}

// ---------------------------------------------------------------- Transposed

TEST(Order, TransposedRowMajorEqualsColumnMajor) {
  for (Grid g : kGrids) {
    SCOPED_TRACE("grid " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.z));
    expect_same(sequence(Transposed<RowMajor>{}, g), sequence(ColumnMajor{}, g));
  }
}

TEST(Order, TransposedColumnMajorEqualsRowMajor) {
  for (Grid g : kGrids) expect_same(sequence(Transposed<ColumnMajor>{}, g), sequence(RowMajor{}, g));
}

TEST(Order, TransposedGroupedGroupsColumns) {
  // Grid 3x5: Transposed<Grouped{2}> walks bands of 2 columns, row by row within the band.
  Grid g{3, 5, 1};
  std::vector<Tile> want;
  for (int c0 = 0; c0 < 5; c0 += 2)
    for (int m = 0; m < 3; ++m)
      for (int n = c0; n < std::min(5, c0 + 2); ++n) want.push_back(Tile{m, n, 0});
  expect_same(sequence(Transposed<Grouped>{Grouped{2}}, g), want);
  EXPECT_TRUE(validate_order(Transposed<Grouped>{Grouped{2}}, g).ok());
  // And it is the transposition of Grouped over the transposed grid, for z > 1 too.
  Grid g3{4, 7, 3};
  auto a = sequence(Transposed<Grouped>{Grouped{3}}, g3);
  auto b = sequence(Grouped{3}, g3.transposed());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], (Tile{b[i].n, b[i].m, b[i].z}));
}

TEST(Order, TransposedGroupedRejectsBadGroup) {
  // The inner order's parameters must be validated too (group_m = 0 would divide by zero).
  auto s = validate_order(Transposed<Grouped>{Grouped{0}}, Grid{3, 4, 1}, "t");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("group_m must be >= 1, got 0"), std::string::npos) << s.message();
}

TEST(Order, TransposedCustomRejectsNullTable) {
  auto s = validate_order(Transposed<Custom>{Custom{nullptr, 6}}, Grid{2, 3, 1});
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("null table"), std::string::npos) << s.message();
  // A valid table (over the transposed grid) is accepted.
  int table[] = {5, 4, 3, 2, 1, 0};
  EXPECT_TRUE(validate_order(Transposed<Custom>{Custom{table, 6}}, Grid{2, 3, 1}).ok());
}

// ---------------------------------------------------------------- Grouped

TEST(Order, GroupedExplicitRaggedBand) {
  // 5 rows, group_m 2: bands {0,1}, {2,3}, {4} (ragged last band).
  Grid g{5, 3, 1};
  std::vector<Tile> want = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 2, 0}, {1, 2, 0},
                            {2, 0, 0}, {3, 0, 0}, {2, 1, 0}, {3, 1, 0}, {2, 2, 0}, {3, 2, 0},
                            {4, 0, 0}, {4, 1, 0}, {4, 2, 0}};
  expect_same(sequence(Grouped{2}, g), want);
  EXPECT_TRUE(validate_order(Grouped{2}, g).ok());
}

TEST(Order, GroupedMatchesReferenceVariousGroupSizes) {
  for (Grid g : kGrids)
    for (int gm : {1, 2, 3, 4, 5, 7, 8, 64}) {
      SCOPED_TRACE("grid " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                   std::to_string(g.z) + " group_m " + std::to_string(gm));
      expect_same(sequence(Grouped{gm}, g), grouped_reference(g, gm));
    }
}

TEST(Order, GroupedOneIsRowMajorOfColumns) {
  // group_m 1: each band is one row, so Grouped{1} == RowMajor.
  for (Grid g : kGrids) expect_same(sequence(Grouped{1}, g), sequence(RowMajor{}, g));
}

TEST(Order, GroupedLargerThanGridIsColumnMajor) {
  // One band holds every row: the band is walked column by column == ColumnMajor.
  for (Grid g : kGrids)
    for (int gm : {g.m, g.m + 1, 1000, INT_MAX}) {
      SCOPED_TRACE("group_m " + std::to_string(gm));
      expect_same(sequence(Grouped{gm}, g), sequence(ColumnMajor{}, g));
      EXPECT_TRUE(validate_order(Grouped{gm}, g).ok());
    }
}

TEST(Order, GroupedRejectsNonPositiveGroup) {
  for (int gm : {0, -1, INT_MIN}) {
    auto s = validate_order(Grouped{gm}, Grid{4, 4, 1}, "gemm1");
    EXPECT_EQ(s.code(), errc::invalid_order);
    EXPECT_NE(s.message().find("gemm1: Grouped::group_m must be >= 1, got " + std::to_string(gm)),
              std::string::npos)
        << s.message();
  }
}

// ---------------------------------------------------------------- Custom

TEST(Order, CustomValidPermutation) {
  Grid g{2, 3, 1};
  int table[] = {5, 0, 3, 1, 4, 2};
  Custom c{table, 6};
  ASSERT_TRUE(validate_order(c, g).ok());
  EXPECT_EQ(c(g, 0), (Tile{1, 2, 0}));
  EXPECT_EQ(c(g, 1), (Tile{0, 0, 0}));
  EXPECT_EQ(c(g, 2), (Tile{1, 0, 0}));
  // z > 1
  Grid g2{1, 2, 2};
  int t2[] = {3, 2, 1, 0};
  ASSERT_TRUE(validate_order(Custom{t2, 4}, g2).ok());
  EXPECT_EQ((Custom{t2, 4}(g2, 0)), (Tile{0, 1, 1}));
}

TEST(Order, CustomDuplicateRejected) {
  Grid g{2, 2, 1};
  int table[] = {1, 0, 2, 1};  // position 3 repeats tile 1 == (0,1,0); tile 3 never visited
  auto s = validate_order(Custom{table, 4}, g, "custom");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("not a bijection: positions 0 and 3 both map to tile (0,1,0)"), std::string::npos)
      << s.message();
}

TEST(Order, CustomOutOfRangeRejected) {
  Grid g{2, 2, 1};
  int hi[] = {0, 1, 2, 4};
  auto s = validate_order(Custom{hi, 4}, g, "custom");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("Custom order entry 3 = 4 is not a tile of the grid"), std::string::npos)
      << s.message();
  int lo[] = {0, -1, 2, 3};
  s = validate_order(Custom{lo, 4}, g, "custom");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("entry 1 = -1 is not a tile"), std::string::npos) << s.message();
}

TEST(Order, CustomWrongSizeRejected) {
  Grid g{2, 2, 1};
  int table[] = {0, 1, 2, 3, 4};
  for (int size : {3, 5, 0}) {
    auto s = validate_order(Custom{table, size}, g, "custom");
    EXPECT_EQ(s.code(), errc::invalid_order);
    EXPECT_NE(s.message().find("table has " + std::to_string(size) + " entries but the grid has 4 tiles"),
              std::string::npos)
        << s.message();
  }
}

TEST(Order, CustomNullTableRejected) {
  auto s = validate_order(Custom{nullptr, 4}, Grid{2, 2, 1}, "custom");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("custom: Custom order has a null table"), std::string::npos) << s.message();
}

// ---------------------------------------------------------------- user-defined orders

// Maps every position to tile 0: not a bijection.
struct AllToZero {
  Tile operator()(Grid, int) const { return Tile{0, 0, 0}; }
};
static_assert(baton::TileOrder<AllToZero>);

// Maps past the grid.
struct OffByOne {
  Tile operator()(Grid g, int pos) const { return g.tile(pos + 1); }
};

// Reverse row-major: a valid user order.
struct Reverse {
  Tile operator()(Grid g, int pos) const { return g.tile(int(g.size()) - 1 - pos); }
};

TEST(Order, BrokenUserOrderRejected) {
  auto s = validate_order(AllToZero{}, Grid{2, 3, 1}, "broken");
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("broken: not a bijection: positions 0 and 1 both map to tile (0,0,0)"),
            std::string::npos)
      << s.message();
  // 1x1x1 grid: a constant order IS a bijection.
  EXPECT_TRUE(validate_order(AllToZero{}, Grid{1, 1, 1}).ok());
}

TEST(Order, OutOfGridUserOrderRejected) {
  auto s = validate_order(OffByOne{}, Grid{2, 3, 1});
  EXPECT_EQ(s.code(), errc::invalid_order);
  EXPECT_NE(s.message().find("position 5 maps to tile (0,0,1) outside the grid"), std::string::npos) << s.message();
}

TEST(Order, ValidUserOrderAccepted) {
  for (Grid g : kGrids) EXPECT_TRUE(validate_order(Reverse{}, g).ok());
  EXPECT_TRUE(validate_order(Transposed<Reverse>{}, Grid{3, 4, 2}).ok());
}

// ---------------------------------------------------------------- invalid grids

TEST(Order, InvalidGridsRejected) {
  const std::vector<Grid> bad = {{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {-1, 4, 1}, {4, -2, 1}, {2, 2, -3},
                                 {0, 0, 0}, {65536, 65536, 1}};
  for (Grid g : bad) {
    SCOPED_TRACE("grid " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.z));
    EXPECT_EQ(validate_order(RowMajor{}, g).code(), errc::invalid_argument);
    EXPECT_EQ(validate_order(ColumnMajor{}, g).code(), errc::invalid_argument);
    EXPECT_EQ(validate_order(Grouped{4}, g).code(), errc::invalid_argument);
    EXPECT_EQ(validate_order(Transposed<RowMajor>{}, g).code(), errc::invalid_argument);
    EXPECT_EQ(validate_order(Custom{nullptr, 0}, g).code(), errc::invalid_argument);
    auto s = validate_order(RowMajor{}, g, "stage");
    EXPECT_NE(s.message().find("stage: grid " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                               std::to_string(g.z) + " is invalid"),
              std::string::npos)
        << s.message();
  }
}

TEST(Order, ConceptAcceptsBuiltins) {
  static_assert(baton::TileOrder<RowMajor>);
  static_assert(baton::TileOrder<ColumnMajor>);
  static_assert(baton::TileOrder<Grouped>);
  static_assert(baton::TileOrder<Custom>);
  static_assert(baton::TileOrder<Transposed<RowMajor>>);
  static_assert(baton::TileOrder<Transposed<Grouped>>);
  static_assert(!baton::TileOrder<int>);
  // constexpr usable.
  static_assert(RowMajor{}(Grid{2, 3, 1}, 4) == Tile{1, 1, 0});
  static_assert(ColumnMajor{}(Grid{2, 3, 1}, 3) == Tile{1, 1, 0});
  static_assert(Grouped{2}(Grid{5, 3, 1}, 12) == Tile{4, 0, 0});
  SUCCEED();
}

}  // namespace
