#include "tb/replay/phase_scheduler.h"

#include <algorithm>
#include <sstream>

namespace wafersim::tb {

bool PhaseScheduler::before(const Phase& a, const Phase& b) const {
  if (a.collective != b.collective)
    return priority_ == collectives::CollectivePriority::Fifo ? a.collective < b.collective
                                                              : a.collective > b.collective;
  if (policy_ == collectives::QueuePolicy::SmallestChunkFirst && a.bytes != b.bytes)
    return a.bytes < b.bytes;
  if (a.ready_ps != b.ready_ps) return a.ready_ps < b.ready_ps;
  return std::tie(a.chunk, a.index) < std::tie(b.chunk, b.index);
}

bool PhaseScheduler::ready(const Phase& phase) {
  if (!phase.limited) return true;
  Slot& slot = slots_[key_of(phase)];
  if (slot.running == 0) {
    slot.running = 1;
    return true;
  }
  slot.waiting.push_back(phase);
  return false;
}

void PhaseScheduler::follow(const Phase& phase, bool queued) {
  ++followed_;
  if (!phase.limited) return;
  Slot& slot = slots_[key_of(phase)];
  if (queued) {
    auto it = std::find_if(slot.waiting.begin(), slot.waiting.end(), [&](const Phase& p) {
      return p.owner == phase.owner && p.index == phase.index;
    });
    if (it != slot.waiting.end()) slot.waiting.erase(it);
  }
  slot.running++;
}

std::optional<PhaseScheduler::Phase> PhaseScheduler::finished(const Phase& phase) {
  if (!phase.limited) return std::nullopt;
  Slot& slot = slots_[key_of(phase)];
  slot.running--;
  if (slot.running > 0 || slot.waiting.empty()) return std::nullopt;
  auto next = std::min_element(slot.waiting.begin(), slot.waiting.end(),
                               [&](const Phase& a, const Phase& b) { return before(a, b); });
  const Phase chosen = *next;
  slot.waiting.erase(next);
  slot.running = 1;
  return chosen;
}

std::string PhaseScheduler::waiting(int npu) const {
  std::ostringstream out;
  for (auto it = slots_.lower_bound({npu, 0, 0});
       it != slots_.end() && std::get<0>(it->first) == npu; ++it) {
    const Slot& slot = it->second;
    if (slot.waiting.empty()) continue;
    out << "dimension " << std::get<1>(it->first) << " slot " << std::get<2>(it->first) << ": "
        << slot.waiting.size() << " phase(s) wait (chunk";
    for (size_t i = 0; i < slot.waiting.size() && i < 4; ++i) out << " " << slot.waiting[i].chunk;
    if (slot.waiting.size() > 4) out << " ...";
    out << "), " << slot.running << " running\n";
  }
  return out.str();
}

}  // namespace wafersim::tb
