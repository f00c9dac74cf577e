#pragma once
// Entries in the order of their time `at`, equal times in the order filed: a ring that grows by
// doubling and starts again at its first slot whenever it empties. Used where entries mostly come
// in time order and leave from the front: credits on their way back over a link, heads on their
// way into a router's input VCs.
#include <cstddef>
#include <vector>

namespace wafersim::hw {

template <typename Entry>  // with a member `at` (sc_core::sc_time)
class TimedQueue {
 public:
  bool empty() const { return size_ == 0; }
  const Entry& front() const { return slots_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (slots_.size() - 1);
    if (--size_ == 0) head_ = 0;
  }
  // Files `e` after every entry due no later than it; rarely moves anything.
  void insert(const Entry& e) {
    if (size_ == slots_.size()) grow();
    size_t pos = size_;
    while (pos > 0 && slot(pos - 1).at > e.at) {
      slot(pos) = slot(pos - 1);
      --pos;
    }
    slot(pos) = e;
    ++size_;
  }

 private:
  Entry& slot(size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  void grow() {
    std::vector<Entry> bigger(slots_.empty() ? 8 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) bigger[i] = slot(i);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<Entry> slots_;  // a power of two of them
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace wafersim::hw
