#pragma once
// Wakes the blocks of one clock domain at cycle boundaries through a single SystemC process.
//
// Routers and network interfaces sleep until a unit can move (DESIGN.md decision 1), but under load
// most of them have something to do in most cycles: with an sc_event each, every wake costs a timed
// notification in the kernel's heap and a process dispatch, about a sixth of a traffic run. Here a
// wake is an entry in a wheel of per-cycle slots, and the kernel sees one notification per cycle in
// which anything is due. Blocks due in the same cycle run in the order they asked; nothing in the
// fabric depends on that order (a block's actions reach other blocks at later cycles only).
#include <cstdint>
#include <queue>
#include <systemc>
#include <utility>
#include <vector>

namespace wafersim::hw {

class WakeCalendar : public sc_core::sc_module {
 public:
  // A block the calendar wakes. It runs on_wake() once, at the earliest cycle it asked for since it
  // last ran (an earlier request replaces a later one), so each run asks again for what it still
  // waits for.
  class Sleeper {
   public:
    virtual ~Sleeper() = default;

   protected:
    virtual void on_wake() = 0;

   private:
    friend class WakeCalendar;
    uint64_t due_ = 0;  // the cycle it is woken at, when `pending_`
    bool pending_ = false;
  };

  SC_HAS_PROCESS(WakeCalendar);
  WakeCalendar(sc_core::sc_module_name name, const sc_core::sc_time& cycle);

  // Wakes `sleeper` at the start of the first cycle at or after `t` (t >= now), unless it is
  // already due by then.
  void wake(Sleeper& sleeper, const sc_core::sc_time& t);
  // The simulated time, kept while the calendar runs its blocks: they and the blocks they call
  // read it on every unit, and the kernel's sc_time_stamp() is a library call.
  sc_core::sc_time now() const { return running_ ? now_ : kernel_now_; }

 private:
  static constexpr uint64_t kSlots = 256;  // the wheel: a power of two, in cycles
  void run_cycle();
  void file(Sleeper* sleeper, uint64_t cycle);
  void notify(uint64_t cycle);  // makes sure the process runs at `cycle`

  const sc_core::sc_time cycle_;
  // Wakes for cycle c < current_ + kSlots sit in slot c % kSlots (so a slot holds one cycle's);
  // later ones wait in `beyond_` until the wheel reaches them.
  std::vector<std::vector<Sleeper*>> slots_;
  uint64_t filled_[kSlots / 64] = {};  // bit per slot: not empty
  std::priority_queue<std::pair<uint64_t, Sleeper*>, std::vector<std::pair<uint64_t, Sleeper*>>,
                      std::greater<>>
      beyond_;
  uint64_t current_ = 0;  // the cycle being run, or run last
  sc_core::sc_time now_;  // its start
  // The kernel's time, which sc_time_stamp() returns by reference: read here without the call.
  const sc_core::sc_time& kernel_now_ = sc_core::sc_time_stamp();
  bool running_ = false;
  uint64_t notified_ = UINT64_MAX;  // the cycle the process is notified for
  sc_core::sc_event tick_;
};

}  // namespace wafersim::hw
