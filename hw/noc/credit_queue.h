#pragma once
// The credits coming back over one link, in the order they arrive: a ring that grows by doubling
// and starts again at its first slot whenever it empties. Credits are counted in lazily (when a
// sender finds too few), so it holds up to the link's VCs x buffer slots entries.
#include <cstddef>
#include <systemc>
#include <vector>

namespace wafersim::hw {

class CreditQueue {
 public:
  struct Entry {
    sc_core::sc_time at;  // when the credit is back at the sender
    int vc;
    int credits;
  };

  bool empty() const { return size_ == 0; }
  const Entry& front() const { return slots_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (slots_.size() - 1);
    if (--size_ == 0) head_ = 0;
  }
  // Files `e` after every entry due no later than it. Credits of one link mostly come back in the
  // order their units left, so this rarely moves anything.
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
