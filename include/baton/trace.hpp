// baton/trace.hpp — per-tile timelines as Perfetto / Chrome-trace JSON (host only).
//
// Bind stages with BindOptions::trace pointing at grid.size() TileEvents each (device memory),
// run, copy the events back, then write_chrome_trace(). Open the file at ui.perfetto.dev: one
// track per SM, one slice per tile, named after its stage, so producer and consumer tiles that
// share the machine show up side by side. scripts/plot_timeline.py draws the same as a PNG.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "baton/chain.hpp"
#include "baton/stage.hpp"

namespace baton {

// events[s] holds stage s's events. Times are made relative to the earliest start.
[[nodiscard]] inline std::string chrome_trace_json(const Chain& chain, const std::vector<std::vector<TileEvent>>& events) {
  uint64_t t0 = std::numeric_limits<uint64_t>::max();
  for (const auto& v : events)
    for (const auto& e : v)
      if (e.start_ns && e.start_ns < t0) t0 = e.start_ns;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  char buf[512];
  for (size_t s = 0; s < events.size(); ++s) {
    const std::string name = s < size_t(chain.num_stages()) ? chain.stage(int(s)).name : "stage" + std::to_string(s);
    const Grid g = s < size_t(chain.num_stages()) ? chain.stage(int(s)).grid : Grid{};
    for (const auto& e : events[s]) {
      if (e.start_ns == 0 || e.end_ns < e.start_ns) continue;  // not recorded
      const Tile t = g.valid() ? g.tile(int(e.tile)) : Tile{};
      std::snprintf(buf, sizeof buf,
                    "%s{\"name\":\"%s\",\"cat\":\"stage%zu\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"args\":{\"tile\":\"(%d,%d,%d)\",\"epoch\":%u}}",
                    first ? "" : ",", name.c_str(), s, e.sm, double(e.start_ns - t0) / 1e3,
                    double(e.end_ns - e.start_ns) / 1e3, t.m, t.n, t.z, e.epoch);
      out += buf;
      first = false;
    }
  }
  out += "]}\n";
  return out;
}

[[nodiscard]] inline status write_chrome_trace(const std::string& path, const Chain& chain,
                                               const std::vector<std::vector<TileEvent>>& events) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return status(errc::invalid_argument, "cannot write trace '" + path + "'");
  const std::string j = chrome_trace_json(chain, events);
  const bool ok = std::fwrite(j.data(), 1, j.size(), f) == j.size();
  if (std::fclose(f) != 0 || !ok) return status(errc::invalid_argument, "writing trace '" + path + "' failed");
  return {};
}

}  // namespace baton
