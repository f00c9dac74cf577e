#include "hw/proto/wake_calendar.h"

namespace wafersim::hw {

WakeCalendar::WakeCalendar(sc_core::sc_module_name name, const sc_core::sc_time& cycle)
    : sc_module(name), cycle_(cycle), slots_(kSlots) {
  SC_METHOD(run_cycle);
  sensitive << tick_;
  dont_initialize();
}

void WakeCalendar::wake(Sleeper& sleeper, const sc_core::sc_time& t) {
  const uint64_t c = cycle_.value();
  // Already due by then: due_ <= ceil(t / c), without the division (most wakes are of blocks
  // already due, and a 64-bit division costs dozens of cycles).
  if (sleeper.pending_ && sleeper.due_ * c < t.value() + c) return;
  const uint64_t cycle = (t.value() + c - 1) / c;
  sleeper.pending_ = true;
  sleeper.due_ = cycle;
  file(&sleeper, cycle);
  notify(cycle);
}

void WakeCalendar::file(Sleeper* sleeper, uint64_t cycle) {
  if (cycle >= current_ + kSlots) {
    beyond_.push({cycle, sleeper});
    return;
  }
  const uint64_t slot = cycle % kSlots;
  slots_[slot].push_back(sleeper);
  filled_[slot / 64] |= uint64_t{1} << (slot % 64);
}

void WakeCalendar::notify(uint64_t cycle) {
  if (running_ || cycle >= notified_) return;  // a run works out its next cycle when it ends
  notified_ = cycle;
  // In integer picoseconds: through a double, times past 2^53 ps (2.5 simulated hours) round, and
  // a wake could land before its cycle and repeat forever.
  tick_.notify(sc_core::sc_time::from_value(cycle_.value() * cycle) - sc_core::sc_time_stamp());
}

void WakeCalendar::run_cycle() {
  now_ = sc_core::sc_time_stamp();
  const uint64_t now = now_.value() / cycle_.value();
  current_ = now;
  notified_ = UINT64_MAX;
  while (!beyond_.empty() && beyond_.top().first < now + kSlots) {
    file(beyond_.top().second, beyond_.top().first);
    beyond_.pop();
  }
  running_ = true;
  const uint64_t slot = now % kSlots;
  std::vector<Sleeper*>& due = slots_[slot];
  for (size_t k = 0; k < due.size(); ++k) {  // by index: a block may wake another this cycle
    Sleeper* s = due[k];
    if (!s->pending_ || s->due_ != now) continue;  // woken earlier, or filed twice
    s->pending_ = false;
    s->on_wake();
  }
  due.clear();
  filled_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
  running_ = false;

  // The next cycle with a wake: the first filled slot after this one, else the earliest beyond.
  for (uint64_t n = 1; n < kSlots;) {
    const uint64_t s = (slot + n) % kSlots;
    const uint64_t bits = filled_[s / 64] >> (s % 64);
    if (bits) {
      notify(now + n + static_cast<uint64_t>(__builtin_ctzll(bits)));
      return;
    }
    n += 64 - s % 64;
  }
  if (!beyond_.empty()) notify(beyond_.top().first);
}

}  // namespace wafersim::hw
