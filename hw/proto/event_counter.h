#pragma once
// Counts the timed activations of wafersim's own blocks (unit arrivals, credits, allocation rounds,
// completions): the "events" figure of a report and of the benchmarks. Every so many events it
// calls a poll hook when one is set: the run loop uses it to stay responsive (progress line,
// SIGINT / SIGTERM) however simulated time advances, without a clocked process.
#include <cstdint>

namespace wafersim::hw {

struct EventCounter {
  uint64_t count = 0;
  uint64_t poll_at = UINT64_MAX;  // the count at which `poll` runs next
  void (*poll)() = nullptr;       // sets poll_at again
};

inline EventCounter& events() {
  static EventCounter counter;
  return counter;
}

inline uint64_t& event_counter() {
  return events().count;
}

inline void count_event() {
  EventCounter& e = events();
  if (++e.count >= e.poll_at) e.poll();
}

}  // namespace wafersim::hw
