#pragma once
// Themis's intra-dimension queues at run time (collectives.scheduler: runtime; PAPERS.md section
// 2): per NPU, network dimension and slot of that dimension, the chunk phases ready to start there
// and how many run. A limited slot runs one phase at a time and, when it frees up, starts the
// waiting phase the queue policy picks (FIFO: the first ready; SCF: the smallest chunk), phases of
// different collectives ordered first by the collective priority (ASTRA-sim's scheduling-policy).
//
// Each NPU decides alone, from what is ready on it, so two NPUs of a group can choose differently
// (congestion makes one chunk's previous phase end earlier here than there). A phase one of them
// has started is therefore followed at once by the others when its first data arrives, even over
// the limit: a NIC cannot refuse a peer's data, and holding the phase back would leave both NPUs
// waiting for each other's choice for ever (with one phase per slot). The replay learns of that
// arrival from the NPU's doorbell (Npu::on_arrival, tb/replay/replay.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/hierarchical.h"

namespace wafersim::tb {

class PhaseScheduler {
 public:
  // A phase as the scheduler sees it; `owner` and `index` name it for the caller.
  struct Phase {
    int npu = 0;
    uint16_t dim = 0, slot = 0;
    bool limited = true;      // its slot runs one phase at a time
    uint64_t collective = 0;  // the order its collective was issued in on this NPU
    uint32_t chunk = 0;
    uint64_t bytes = 0;     // the chunk's data when the phase starts (SCF)
    uint64_t ready_ps = 0;  // when it became ready (FIFO)
    void* owner = nullptr;
    size_t index = 0;
  };

  PhaseScheduler(collectives::QueuePolicy policy, collectives::CollectivePriority priority)
      : policy_(policy), priority_(priority) {}

  // `phase` is ready on its NPU: true when it starts now, false when it waits its turn.
  bool ready(const Phase& phase);
  // A phase that had not started on its NPU starts there because a peer's data for it arrived
  // (`queued`: it was waiting its turn, else it was not ready here yet).
  void follow(const Phase& phase, bool queued);
  // A running phase ended: the phase its slot starts next, if any.
  std::optional<Phase> finished(const Phase& phase);
  // The phases waiting on NPU `npu`, a line per slot ("dimension 1 slot 0: 2 phase(s) wait
  // (chunk 3 5), 1 running"), for stall reports.
  std::string waiting(int npu) const;
  // Phases started because a peer had (follow), over the run: a measure of how often NPUs chose
  // differently.
  uint64_t followed() const { return followed_; }

 private:
  struct Slot {
    uint32_t key = 0;  // dimension << 16 | slot
    int running = 0;
    std::vector<Phase> waiting;  // a heap: the phase to start next in front
  };
  // The slot serving `p` (an NPU has one per dimension and slot of it: a handful).
  Slot& slot_of(const Phase& p);
  // Whether `a` goes before `b` in a queue; the heap's order (b before a).
  bool before(const Phase& a, const Phase& b) const;
  auto heap_order() const {
    return [this](const Phase& a, const Phase& b) { return before(b, a); };
  }

  collectives::QueuePolicy policy_;
  collectives::CollectivePriority priority_;
  std::vector<std::vector<Slot>> slots_;  // per NPU
  uint64_t followed_ = 0;
};

}  // namespace wafersim::tb
