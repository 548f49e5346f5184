// baton/async/cancel.hpp — cancellation of waits and of work that has not started.
//
// cancel_source / cancel_token are std::stop_source / std::stop_token. A token stops WAITING, never
// the work waited for: a GPU kernel, a copy or a fake event runs on to its own end.
//   * on(r, src, ex, token) -> status: errc::cancelled at once (continuing through ex, nothing
//     registered, src not polled) if the token is cancelled when the co_await begins; if it is
//     cancelled while the wait is registered, the reactor resumes the coroutine promptly (its next
//     loop iteration, woken at once) with errc::cancelled, and src is never polled again. A stop
//     racing the source's completion gives exactly one resumption, with whichever the reactor
//     saw first (reactor.hpp). done(ctx, s, token) / ready(ctx, e, token) (cuda_await.cuh) work
//     the same way; the when_all(stop, ...) of when.hpp stops such waits of a failed child's
//     siblings.
//   * guarded(token, t) -> task: when the guarded task starts, if the token is cancelled it
//     finishes with errc::cancelled and t's body never runs (t's frame is freed unrun);
//     otherwise it runs t to its end. Result type guarded_t<T>:
//       void -> status,  status -> status,  result<U> -> result<U>,  other T -> result<T>.
#pragma once

#include <stop_token>
#include <type_traits>
#include <utility>

#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/status.hpp"

namespace baton::async {

using cancel_source = std::stop_source;
using cancel_token = std::stop_token;

// co_await on(r, src, ex, token) -> status (see above).
[[nodiscard]] inline on_awaiter on(reactor& r, completion_source& src, executor& ex, cancel_token token) noexcept {
  return on_awaiter(r, src, ex, std::move(token));
}

namespace detail {
template <class T>
struct guarded_result {
  using type = result<T>;
};
template <>
struct guarded_result<void> {
  using type = status;
};
template <>
struct guarded_result<status> {
  using type = status;
};
template <class U>
struct guarded_result<result<U>> {
  using type = result<U>;
};
}  // namespace detail

template <class T>
using guarded_t = typename detail::guarded_result<T>::type;

template <class T>
task<guarded_t<T>> guarded(cancel_token token, task<T> work) {
  using R = guarded_t<T>;
  if (token.stop_requested()) co_return R(status(errc::cancelled, "cancelled before start"));
  if constexpr (std::is_void_v<T>) {
    co_await std::move(work);
    co_return status{};
  } else if constexpr (std::is_same_v<R, T>) {
    co_return co_await std::move(work);
  } else {
    co_return R(co_await std::move(work));
  }
}

}  // namespace baton::async
