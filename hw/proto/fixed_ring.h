#pragma once
// A FIFO of fixed capacity in one contiguous allocation: a router's input VC holds at most as many
// units as it has buffer slots (every unit takes at least one credit), so its queue never grows,
// and contiguous storage keeps a large mesh's thousands of buffers cache-friendly (std::deque
// allocates a 512-byte block per queue).
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace wafersim::hw {

template <typename T>
class FixedRing {
 public:
  explicit FixedRing(size_t capacity = 0) : slots_(capacity) {}
  void reserve_exactly(size_t capacity) { slots_.assign(capacity, T{}); }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  void push_back(const T& value) {
    if (size_ == slots_.size())
      throw std::logic_error("buffer overflow: a unit arrived without credit");
    slots_[(head_ + size_) % slots_.size()] = value;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }

 private:
  std::vector<T> slots_;
  size_t head_ = 0, size_ = 0;
};

}  // namespace wafersim::hw
