#pragma once
// Where a plan's data lives and what it must hold: the addressing both executors of a plan's data
// share (the symbolic executor, models/collectives/symbolic, and the data plane of `run --data`,
// models/collectives/data_plane). Per rank, every chunk's buffers sit in one flat array of slots:
// the output (in place: the larger of input and output, the smaller one a slot of it), the input
// when not in place, then the scratch.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/plan.h"

namespace wafersim::collectives {

class Layout {
 public:
  static constexpr uint64_t kNothing = UINT64_MAX;

  Layout(const Plan& plan, Collective collective, int root);

  // "" when the buffers fit the collective (all-gather's input is 1/n of its output...), else why.
  std::string check_shape() const;

  const Plan& plan() const { return plan_; }
  Collective collective() const { return collective_; }
  int ranks() const { return n_; }
  int root() const { return root_; }
  // Slots of one rank, all chunks and buffers.
  size_t slots_per_rank() const { return static_cast<size_t>(plan_.chunks) * per_chunk_; }
  uint32_t size_of(Buffer b) const;
  // The slot of block j of buffer b (not the relay) of chunk c of rank r: a buffer's blocks sit
  // in a row, from the slot of its block 0.
  size_t slot(int r, Buffer b, uint32_t c, uint32_t j) const { return first_slot(r, b, c) + j; }
  size_t first_slot(int r, Buffer b, uint32_t c) const;

  // The blocks (indices into its buffer) that side `side` of op k of position r names: from its
  // first block on, in a row or in runs (DataRef), cyclic in the buffer, moved with the position
  // in a rotational or symmetric plan (Plan::absolute_block). "" or the problem. Not for relays
  // (their `first` is an op).
  std::string blocks(int r, uint32_t k, Side side, std::vector<uint32_t>& out) const;

  // The collective's block that input block j of chunk c of rank r starts with (kNothing: none).
  uint64_t initial(int r, uint32_t c, uint32_t j) const;

  // What output block j of chunk c of rank r must end with.
  struct Want {
    enum Kind { Anything, SumOfAll, PartOf } kind = Anything;
    uint64_t block = kNothing;  // the collective's block
    int owner = -1;             // PartOf: whose
  };
  Want expected(int r, uint32_t c, uint32_t j) const;

  // "rank 3 op 7 (recv, step tag 2)" and, for imported plans, where the op came from.
  std::string where(int r, uint32_t k) const;
  static std::string block_name(Buffer b, uint32_t c, uint32_t j);

 private:
  uint64_t id(uint32_t c, uint64_t b) const { return c * g_ + b; }
  // The collective's block at position j of chunk c's data (Plan::slot_order), and the position of
  // rank r's own slot.
  uint64_t block_at(uint32_t c, uint32_t j) const;
  uint64_t position_of(int r, uint32_t c) const;
  uint64_t a2a_id(uint32_t c, int src, uint64_t j) const {
    return (static_cast<uint64_t>(c) * n_ + static_cast<uint64_t>(src)) * g_ + j;
  }

  const Plan& plan_;
  const Collective collective_;
  const int root_;
  const int n_;
  const uint32_t in_, out_, scratch_;
  const uint32_t main_;             // the output array (in place: the larger buffer)
  const size_t per_chunk_;          // slots per chunk
  const uint64_t g_;                // the collective's blocks per chunk (the larger buffer)
  uint32_t k_ = 1;                  // blocks per rank slot (all-gather, reduce-scatter, all-to-all)
  std::vector<uint32_t> position_;  // per chunk and rank, the inverse of Plan::slot_order
};

}  // namespace wafersim::collectives
