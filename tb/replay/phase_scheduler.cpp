#include "tb/replay/phase_scheduler.h"

#include <algorithm>
#include <sstream>
#include <tuple>

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

PhaseScheduler::Slot& PhaseScheduler::slot_of(const Phase& p) {
  if (p.npu >= static_cast<int>(slots_.size())) slots_.resize(static_cast<size_t>(p.npu) + 1);
  auto& slots = slots_[static_cast<size_t>(p.npu)];
  const uint32_t key = uint32_t{p.dim} << 16 | p.slot;
  for (Slot& slot : slots)
    if (slot.key == key) return slot;
  slots.push_back({key, 0, {}});
  return slots.back();
}

bool PhaseScheduler::ready(const Phase& phase) {
  if (!phase.limited) return true;
  Slot& slot = slot_of(phase);
  if (slot.running == 0) {
    slot.running = 1;
    return true;
  }
  slot.waiting.push_back(phase);
  std::push_heap(slot.waiting.begin(), slot.waiting.end(), heap_order());
  return false;
}

void PhaseScheduler::follow(const Phase& phase, bool queued) {
  ++followed_;
  if (!phase.limited) return;
  Slot& slot = slot_of(phase);
  if (queued) {
    auto it = std::find_if(slot.waiting.begin(), slot.waiting.end(), [&](const Phase& p) {
      return p.owner == phase.owner && p.index == phase.index;
    });
    if (it != slot.waiting.end()) {
      slot.waiting.erase(it);
      std::make_heap(slot.waiting.begin(), slot.waiting.end(), heap_order());
    }
  }
  slot.running++;
}

std::optional<PhaseScheduler::Phase> PhaseScheduler::finished(const Phase& phase) {
  if (!phase.limited) return std::nullopt;
  Slot& slot = slot_of(phase);
  slot.running--;
  if (slot.running > 0 || slot.waiting.empty()) return std::nullopt;
  std::pop_heap(slot.waiting.begin(), slot.waiting.end(), heap_order());
  const Phase chosen = slot.waiting.back();
  slot.waiting.pop_back();
  slot.running = 1;
  return chosen;
}

std::string PhaseScheduler::waiting(int npu) const {
  if (npu >= static_cast<int>(slots_.size())) return "";
  std::vector<const Slot*> slots;
  for (const Slot& slot : slots_[static_cast<size_t>(npu)])
    if (!slot.waiting.empty()) slots.push_back(&slot);
  std::sort(slots.begin(), slots.end(),
            [](const Slot* a, const Slot* b) { return a->key < b->key; });
  std::ostringstream out;
  for (const Slot* slot : slots) {
    // The waiting phases in the order they would start.
    std::vector<Phase> queue = slot->waiting;
    std::sort(queue.begin(), queue.end(),
              [this](const Phase& a, const Phase& b) { return before(a, b); });
    out << "dimension " << (slot->key >> 16) << " slot " << (slot->key & 0xffff) << ": "
        << queue.size() << " phase(s) wait (chunk";
    for (size_t i = 0; i < queue.size() && i < 4; ++i) out << " " << queue[i].chunk;
    if (queue.size() > 4) out << " ...";
    out << "), " << slot->running << " running\n";
  }
  return out.str();
}

}  // namespace wafersim::tb
