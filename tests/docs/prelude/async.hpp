// The host async layer for docs/async.md's host blocks: tasks, reactor, executors, combinators and
// the fake event source; its names are in scope (namespace doc uses baton::async).
#pragma once
#include <string>
#include <thread>

#include "baton/async/cancel.hpp"
#include "baton/async/completion.hpp"
#include "baton/async/executor.hpp"
#include "baton/async/fake_source.hpp"
#include "baton/async/reactor.hpp"
#include "baton/async/task.hpp"
#include "baton/async/when.hpp"

namespace doc {
using namespace ::baton::async;
struct async_env {};
}  // namespace doc
