// baton::async refuses the stream handle 0 (an empty baton::async::stream, or a literal 0) before any
// CUDA call, naming the call and the default streams to use instead. Host logic: runs in CI with no
// GPU (no CUDA call is made on these paths; the binary links the CUDA runtime only for the others).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "baton/async/graph.cuh"
#include "baton/async/memory.cuh"
#include "baton/async/stream.cuh"

namespace {

using namespace baton;
using namespace baton::async;

void expect_refused(const status& st, const char* call) {
  ASSERT_FALSE(st.ok()) << call;
  EXPECT_EQ(st.code(), errc::invalid_argument) << st.message();
  EXPECT_NE(st.message().find(call), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("stream_ref::legacy()"), std::string::npos) << st.message();
  EXPECT_EQ(st.cuda_code(), 0) << "refused before any CUDA call";
}

TEST(AsyncStreamGuard, EmptyOwningStreamIsRefusedNotTakenAsTheLegacyStream) {
  const stream empty;
  const stream_ref r = empty;  // converts, as it did: the call that uses it refuses it
  EXPECT_EQ(r.get(), nullptr);
  expect_refused(r.usable("my call"), "my call");
  expect_refused(r.ready().error(), "stream_ref::ready");
  expect_refused(r.synchronize(), "stream_ref::synchronize");
  expect_refused(r.wait(nullptr), "stream_ref::wait");
  expect_refused(empty.priority().error(), "stream::priority");
}

TEST(AsyncStreamGuard, MovedFromStreamIsRefused) {
  stream a;
  stream b = std::move(a);
  expect_refused(a.ref().usable("after a move"), "after a move");  // NOLINT(bugprone-use-after-move): on purpose
}

TEST(AsyncStreamGuard, EveryCallThatEnqueuesRefusesIt) {
  const stream_ref zero{cudaStream_t{}};
  const event e;
  expect_refused(e.record(zero), "event record");
  expect_refused(device_buffer::create(256, zero).error(), "device_buffer::create");
  bool enqueued = false;
  auto g = capture(zero, [&](stream_ref) -> status {
    enqueued = true;
    return {};
  });
  expect_refused(g.error(), "async::capture");
  EXPECT_FALSE(enqueued) << "nothing captured, nothing enqueued";
}

TEST(AsyncStreamGuard, NamedDefaultStreamsAreUsable) {
  EXPECT_TRUE(stream_ref::legacy().usable("legacy").ok());
  EXPECT_TRUE(stream_ref::per_thread().usable("per_thread").ok());
  EXPECT_NE(stream_ref::legacy().get(), nullptr);
}

}  // namespace
