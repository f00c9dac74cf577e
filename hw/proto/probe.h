#pragma once
// The observation hook (DESIGN.md decision 7): blocks report what they do, as it happens, to the
// probe installed for the run, if any. Waveform and timeline writers (tb/observe) implement it.
// With no probe installed each hook is one predictable branch, so observation off costs nothing
// measurable (docs/performance.md).
#include <cstdint>
#include <string>
#include <systemc>

#include "models/sparse/unit_model.h"

namespace wafersim::hw {

struct TransferExt;

// What a Fred switch's micro-switches do for a flow: reduce its inputs, distribute the sum.
enum class SwitchFunction { Reduce, Distribute };

class Probe {
 public:
  virtual ~Probe() = default;
  // Links (by topology link id). A unit occupies the link from `start` to `end` (serialisation;
  // both may lie ahead of the current time).
  virtual void link_unit(int link, const sc_core::sc_time& start, const sc_core::sc_time& end,
                         const TransferExt& unit) {}
  // The slots free downstream for VC `vc` of the link change by `delta` at `at` (>= now): down by a
  // unit's credits when it leaves, up again when its credit is back.
  virtual void credit_change(int link, int vc, int delta, const sc_core::sc_time& at) {}
  // The units buffered in VC `vc` at the receiving end of `link` (a router's input buffer) change
  // by `delta` at `at` (>= now): up when a unit arrives, down when it is granted.
  virtual void buffer_change(int link, int vc, int delta, const sc_core::sc_time& at) {}
  // A router's switch allocator granted output `link` to the unit arriving on `from_link`.
  virtual void grant(int link, int from_link) {}
  // NPUs (by rank): the compute engine busy from `start` to `end`; the network interface's queue
  // of messages waiting to be sent; the step of the collective whose message was last issued.
  virtual void compute_busy(int rank, const sc_core::sc_time& start, const sc_core::sc_time& end) {}
  virtual void nic_queue(int rank, int depth) {}
  virtual void collective_step(int rank, int step) {}
  // Fred switches (by topology node): a flow keeps `function` enabled from `start` to `end`;
  // the communication phase whose flow last entered the switch, from `at`: 1 + the collective's
  // instance (0 before any).
  virtual void switch_function(int node, SwitchFunction function, const sc_core::sc_time& start,
                               const sc_core::sc_time& end) {}
  virtual void switch_phase(int node, uint64_t phase, const sc_core::sc_time& at) {}
  // Sparse units (by rank): a job runs from `start`, `timing.steps` long in cycles of `cycle`.
  virtual void sparse_job(int rank, const sc_core::sc_time& start, const sc_core::sc_time& cycle,
                          const sparse::UnitTiming& timing) {}
  // Replay: trace node `node_id` of `rank` ran from `start` to now. `category` is compute, memory,
  // communication or host.
  virtual void node_span(int rank, uint64_t node_id, const std::string& name, const char* category,
                         const sc_core::sc_time& start) {}
};

// The probe of this process's run (one simulation per process), or nullptr.
inline Probe*& probe() {
  static Probe* installed = nullptr;
  return installed;
}

}  // namespace wafersim::hw
