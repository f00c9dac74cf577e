#include "tb/replay/op_progress.h"

#include <algorithm>

namespace wafersim::tb {

uint16_t& OpProgress::far_entry(const collectives::RankPlan& plan, uint32_t k) {
  if (far_op_ == k) return far_state_;
  if (far_op_ == kNone) {
    far_op_ = k;
    far_state_ = static_cast<uint16_t>(plan.ops[k].dep_count);
    return far_state_;
  }
  // A second op far ahead: the window grows to hold both (to the next power of two).
  const uint32_t last = std::max(k, far_op_);
  uint8_t shift = shift_;
  while ((uint64_t{1} << shift) <= last - first_) ++shift;
  auto* grown = new uint16_t[size_t{1} << shift];
  const uint32_t grown_mask = (1u << shift) - 1;
  const uint16_t* old = slots();
  for (uint32_t j = first_; j < end_; ++j) grown[j & grown_mask] = old[j & mask()];
  if (on_heap()) delete[] heap_;
  heap_ = grown;
  shift_ = shift;
  extend(plan, last);
  return slots()[k & mask()];
}

void OpProgress::extend(const collectives::RankPlan& plan, uint32_t k) {
  uint16_t* s = slots();
  for (uint32_t j = end_; j <= k; ++j)
    s[j & mask()] = j == far_op_ ? far_state_ : static_cast<uint16_t>(plan.ops[j].dep_count);
  if (far_op_ <= k) far_op_ = kNone;
  end_ = k + 1;
}

}  // namespace wafersim::tb
