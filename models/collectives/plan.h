#pragma once
// Collectives are plans, plans are data (DESIGN.md decision 5): for every rank of a communicator, a
// small dependency graph of sends, receives and reductions. Built-in algorithms, imported MSCCL XML
// and Chakra collective graphs all produce this form, and the replay executes only this form.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::collectives {

enum class OpKind { Send, Recv, Reduce, Nop };

const char* to_string(OpKind kind);

struct Op {
  OpKind kind = OpKind::Nop;
  int peer = -1;       // Send: destination, Recv: source; a position in the communicator
  uint64_t bytes = 0;  // Send / Recv: message size; Reduce: bytes combined
  uint32_t tag = 0;    // a Send and its Recv carry the same (sender, receiver, tag)
  // Where this op's dependencies sit in RankPlan::dep_list (kept flat: plans of 1,000 ranks hold
  // millions of ops, so no allocation per op).
  uint32_t first_dep = 0;
  uint32_t dep_count = 0;
};

// The dependencies of one op: indices of earlier ops of the same rank that must finish first.
struct DepRange {
  const uint32_t* first;
  const uint32_t* last;
  const uint32_t* begin() const { return first; }
  const uint32_t* end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  bool empty() const { return first == last; }
  uint32_t operator[](size_t i) const { return first[i]; }
};

struct RankPlan {
  std::vector<Op> ops;
  std::vector<uint32_t> dep_list;

  // Appends an op with its dependencies; returns its index.
  uint32_t add(Op op, const std::vector<uint32_t>& deps);
  DepRange deps(uint32_t op) const {
    const uint32_t* base = dep_list.data() + ops[op].first_dep;
    return {base, base + ops[op].dep_count};
  }
};

struct Plan {
  std::string algorithm;
  std::vector<RankPlan> ranks;  // index = position in the communicator

  int size() const { return static_cast<int>(ranks.size()); }
  // Total bytes sent by all ranks (for traffic accounting and tests).
  uint64_t bytes_sent() const;
  // Checks the plan is executable: deps point backwards inside the rank, every Send has exactly one
  // Recv with the same (sender, receiver, tag) and size. Throws std::logic_error describing the
  // first problem.
  void validate() const;
};

}  // namespace wafersim::collectives
