// bench/common/rounds.hpp — interleaved rounds: the order in which a bench times its variants.
//
// Timed one after the other, variants meet different clocks: a card that heats up or reaches its
// power limit during a run slows whatever is timed late, and the ratio of two variants then measures
// the run's drift as much as the variants (docs/mlp.md, "Interleaved timing"). Timed in rounds, every
// variant gets one timed repetition per round, and round r starts at variant r mod n, so drift within
// a round hits no variant in one fixed position. Each sample is one repetition, as before.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "baton/status.hpp"

namespace baton::bench {

// Runs `reps` rounds over n variants. time_one(i, us) times one repetition of variant i and stores its
// per-iteration microseconds in us; a variant whose time_one fails leaves the rounds at once, with its
// error in failed[i] (the others go on), so one broken variant costs the run none of the others' rows.
// us[i] receives variant i's samples, in the order they were taken.
template <class TimeOne>
void run_rounds(int n, int reps, TimeOne&& time_one, std::vector<std::vector<double>>& us,
                std::vector<status>& failed) {
  us.assign(size_t(n), {});
  failed.assign(size_t(n), status{});
  for (int r = 0; r < reps; ++r)
    for (int j = 0; j < n; ++j) {
      const int i = (r + j) % n;
      if (!failed[size_t(i)].ok()) continue;
      double sample = 0;
      status st = time_one(i, sample);
      if (!st.ok()) {
        failed[size_t(i)] = std::move(st);
        continue;
      }
      us[size_t(i)].push_back(sample);
    }
}

}  // namespace baton::bench
