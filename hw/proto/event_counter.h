#pragma once
// Counts the timed activations of wafersim's own blocks (unit arrivals, credits, allocation rounds,
// completions): the "events" figure of a report and of the benchmarks.
#include <cstdint>

namespace wafersim::hw {

inline uint64_t& event_counter() {
  static uint64_t count = 0;
  return count;
}

}  // namespace wafersim::hw
