#pragma once
// An NPU's reduction engines: `engines` alike, each combining `bandwidth_gbps` bytes per ns, a
// received block taking the first one free. Only when each is free matters, so it keeps the free
// times of those busy, a heap with the first to free on top (an ASTRA-sim platform has 64
// engines, mostly idle: scanning them all cost 5% of a 1,024-NPU run), and when the last of them
// frees: a reduction that comes later finds them all idle without reading the heap. Everything a
// reduction reads is in one cache line, cold at every ring step of a 4,096-NPU run (the other
// NPUs' steps ran since).
#include <algorithm>
#include <cmath>
#include <functional>
#include <systemc>
#include <vector>

namespace wafersim::hw {

// `ns` in whole cycles of a clock of `clock_ghz` (period `cycle`), rounding up: a partial cycle
// still occupies the engine.
inline sc_core::sc_time whole_cycles(double ns, double clock_ghz, const sc_core::sc_time& cycle) {
  const double cycles = std::ceil(ns * clock_ghz - 1e-9);
  return cycle * std::max(0.0, cycles);
}

class alignas(64) ReductionEngines {
 public:
  ReductionEngines(int engines, double bandwidth_gbps, double clock_ghz, sc_core::sc_time cycle)
      : engines_(static_cast<size_t>(std::max(1, engines))),
        bandwidth_gbps_(bandwidth_gbps),
        clock_ghz_(clock_ghz),
        cycle_(cycle) {}

  // The time to combine `bytes`, in whole cycles of the NPU's clock.
  sc_core::sc_time time_for(uint64_t bytes) const {
    return whole_cycles(bytes / bandwidth_gbps_, clock_ghz_, cycle_);
  }
  // Takes the first engine free for a reduction that arrives at `now`: when it is free (zero: one
  // is idle). Give it back with busy_until().
  sc_core::sc_time take(const sc_core::sc_time& now) {
    if (now >= all_free_at_) {
      busy_.clear();
    } else {
      while (!busy_.empty() && busy_.front() <= now) {
        std::pop_heap(busy_.begin(), busy_.end(), std::greater<>());
        busy_.pop_back();
      }
    }
    sc_core::sc_time free_at = sc_core::SC_ZERO_TIME;
    if (busy_.size() == engines_) {
      free_at = busy_.front();
      std::pop_heap(busy_.begin(), busy_.end(), std::greater<>());
      busy_.pop_back();
    }
    return free_at;
  }
  // The engine take() gave is busy until `end`.
  void busy_until(const sc_core::sc_time& end) {
    busy_.push_back(end);
    std::push_heap(busy_.begin(), busy_.end(), std::greater<>());
    all_free_at_ = std::max(all_free_at_, end);
  }

 private:
  sc_core::sc_time all_free_at_;  // every engine is idle from then on
  std::vector<sc_core::sc_time> busy_;
  size_t engines_;
  double bandwidth_gbps_;
  double clock_ghz_;
  sc_core::sc_time cycle_;
};

}  // namespace wafersim::hw
