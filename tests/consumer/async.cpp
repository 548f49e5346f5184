// A downstream program on the installed core + async layer (baton::async), host part only: two
// tasks on a thread pool, joined with when_all, waited on with sync_wait.
#include <baton/async/executor.hpp>
#include <baton/async/task.hpp>
#include <baton/async/when.hpp>

#include <cstdio>
#include <tuple>

namespace async = baton::async;

async::task<int> square_on(async::executor& ex, int v) {
  co_await async::schedule(ex);  // continue on a pool thread
  co_return v * v;
}

int main() {
  async::thread_pool pool(2);
  auto [a, b] = async::sync_wait(async::when_all(square_on(pool, 3), square_on(pool, 4)));
  std::printf("consumer_async: %d + %d = %d\n", a, b, a + b);
  return a + b == 25 ? 0 : 1;
}
