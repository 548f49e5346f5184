// baton::status / result and the macros that propagate them (baton/status.hpp).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "baton/async/task.hpp"
#include "baton/status.hpp"

namespace {

using baton::errc;
using baton::result;
using baton::status;

result<int> parse_positive(int x) {
  if (x <= 0) return status(errc::invalid_argument, "not positive: " + std::to_string(x));
  return x;
}

// A declaration: the value on success; the callee's error, unchanged, on failure.
result<int> twice(int x) {
  BATON_TRY_ASSIGN(const int v, parse_positive(x));
  return 2 * v;
}

// Into an existing variable, a move-only value, two on one function (distinct temporaries), and
// into a status-returning caller.
status sum_into(int a, int b, int& out) {
  int total = 0;
  BATON_TRY_ASSIGN(total, parse_positive(a));
  BATON_TRY_ASSIGN(const int second, parse_positive(b));
  out = total + second;
  return {};
}

result<std::unique_ptr<int>> boxed(int x) {
  if (x < 0) return status(errc::not_supported, "negative");
  return std::make_unique<int>(x);
}
result<int> unbox(int x) {
  BATON_TRY_ASSIGN(std::unique_ptr<int> p, boxed(x));
  return *p + 1;
}

TEST(Status, TryAssignUnwrapsOrPropagates) {
  auto ok = twice(21);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), 42);
  auto bad = twice(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), errc::invalid_argument);
  EXPECT_EQ(bad.error().message(), "not positive: -1");

  int out = 0;
  EXPECT_TRUE(sum_into(2, 3, out).ok());
  EXPECT_EQ(out, 5);
  out = 7;
  const status s = sum_into(2, 0, out);
  EXPECT_EQ(s.code(), errc::invalid_argument);
  EXPECT_EQ(out, 7);  // nothing written on failure

  EXPECT_EQ(unbox(4).value(), 5);
  EXPECT_EQ(unbox(-4).error().code(), errc::not_supported);
}

// Inside a coroutine: co_return of the error.
baton::async::task<result<int>> co_twice(int x) {
  BATON_CO_TRY_ASSIGN(const int v, parse_positive(x));
  co_return 2 * v;
}

TEST(Status, CoTryAssignUnwrapsOrPropagates) {
  EXPECT_EQ(baton::async::sync_wait(co_twice(5)).value(), 10);
  const result<int> bad = baton::async::sync_wait(co_twice(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "not positive: 0");
}

}  // namespace
