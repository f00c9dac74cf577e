#pragma once
// Runs callbacks at given simulated times: one SystemC event for the whole queue, so a block can
// keep many timed completions (compute, reductions, message delivery) without a process each.
#include <functional>
#include <queue>
#include <systemc>
#include <vector>

#include "hw/proto/event_counter.h"

namespace wafersim::hw {

class CallbackQueue : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CallbackQueue);
  explicit CallbackQueue(sc_core::sc_module_name name) : sc_module(name) {
    SC_METHOD(run_due);
    sensitive << event_;
    dont_initialize();
  }

  void at(const sc_core::sc_time& when, std::function<void()> fn) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time t = when < now ? now : when;
    bool earliest = queue_.empty() || t < queue_.top().when;
    queue_.push({t, seq_++, std::move(fn)});
    if (earliest) event_.notify(t - now);
  }
  size_t pending() const { return queue_.size(); }

 private:
  struct Entry {
    sc_core::sc_time when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Entry& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void run_due() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (!queue_.empty() && queue_.top().when <= now) {
      auto fn = std::move(const_cast<Entry&>(queue_.top()).fn);
      queue_.pop();
      ++event_counter();
      fn();
    }
    if (!queue_.empty()) event_.notify(queue_.top().when - now);
  }
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  uint64_t seq_ = 0;
  sc_core::sc_event event_;
};

}  // namespace wafersim::hw
