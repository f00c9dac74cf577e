#pragma once
// Runs callbacks at given simulated times: one SystemC event for the whole queue, so the platform
// keeps all its timed completions (compute, reductions, message delivery) without a process each.
// Callbacks due at the same instant run in the order they were queued.
#include <functional>
#include <map>
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

  // Runs `fn` at `when` (now if that has passed), after the callbacks already queued for then.
  // `warm0` and `warm1` (optional) are lines `fn` reads first: they are asked for while the
  // callbacks kAhead places before it run (a large platform's NPUs finish at the same instants,
  // and each callback's NPU state has left the cache since it last ran).
  void at(const sc_core::sc_time& when, std::function<void()> fn, const void* warm0 = nullptr,
          const void* warm1 = nullptr) {
    const sc_core::sc_time now = kernel_now_;
    const sc_core::sc_time t = when < now ? now : when;
    const bool earliest = due_.empty() || t < due_.begin()->first;
    auto it = due_.lower_bound(t);
    if (it == due_.end() || it->first != t) {
      if (spare_.empty()) {
        it = due_.emplace_hint(it, t, Due::mapped_type{});
      } else {  // a node from an earlier instant, its vector's capacity kept: no allocation
        auto node = std::move(spare_.back());
        spare_.pop_back();
        node.key() = t;
        it = due_.insert(it, std::move(node));
      }
    }
    it->second.push_back({std::move(fn), {warm0, warm1}});
    if (earliest) event_.notify(t - now);
  }

 private:
  // Callbacks grouped by instant: the NPUs of a large platform often finish things at the same
  // time, and a group costs one map node however many callbacks it holds.
  void run_due() {
    const sc_core::sc_time now = kernel_now_;
    while (!due_.empty() && due_.begin()->first <= now) {
      // Taken out of the map first: callbacks may queue more for now, as a new group run next.
      auto node = due_.extract(due_.begin());
      auto& group = node.mapped();
      const size_t n = group.size();
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) {
          const Callback& next = group[i + kAhead];
          if (next.warm[0]) __builtin_prefetch(next.warm[0], 1);
          if (next.warm[1]) __builtin_prefetch(next.warm[1], 1);
        }
        count_event();
        group[i].fn();
      }
      node.mapped().clear();
      spare_.push_back(std::move(node));
    }
    if (!due_.empty()) event_.notify(due_.begin()->first - now);
  }

  struct Callback {
    std::function<void()> fn;
    const void* warm[2];  // asked for ahead (nullptr: nothing)
  };
  // How far ahead in its group a callback's lines are asked for: 2 ran 4-5% faster than none on a
  // 1,024-NPU ring (five of six alternated pairs); 4 was no better (docs/performance.md).
  static constexpr size_t kAhead = 2;
  using Due = std::map<sc_core::sc_time, std::vector<Callback>>;
  Due due_;
  std::vector<Due::node_type> spare_;  // emptied groups, map node and vector reused
  sc_core::sc_event event_;
  // The kernel's time, which sc_time_stamp() returns by reference: read here without the call.
  const sc_core::sc_time& kernel_now_ = sc_core::sc_time_stamp();
};

}  // namespace wafersim::hw
