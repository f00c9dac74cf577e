#include "models/collectives/layout.h"

#include <algorithm>

namespace wafersim::collectives {

Layout::Layout(const Plan& plan, Collective collective, int root)
    : plan_(plan),
      collective_(collective),
      root_(root),
      n_(plan.size()),
      in_(plan.input_blocks),
      out_(plan.output_blocks),
      scratch_(plan.scratch_blocks),
      main_(plan.in_place ? std::max(in_, out_) : out_),
      per_chunk_(static_cast<size_t>(main_) + (plan.in_place ? 0 : in_) + scratch_),
      g_(std::max(in_, out_)) {
  const auto n = static_cast<uint32_t>(std::max(n_, 1));
  switch (collective_) {
    case Collective::AllGather:
      k_ = in_;
      break;
    case Collective::ReduceScatter:
      k_ = out_;
      break;
    case Collective::AllToAll:
      k_ = in_ / n;
      break;
    default:
      break;
  }
  k_ = std::max<uint32_t>(k_, 1);
  const auto& order = plan_.slot_order;
  if (order.size() == static_cast<size_t>(plan_.chunks) * n) {
    position_.assign(order.size(), UINT32_MAX);
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] < n) position_[i / n * n + order[i]] = static_cast<uint32_t>(i % n);
  }
}

uint64_t Layout::block_at(uint32_t c, uint32_t j) const {
  if (plan_.slot_order.empty()) return j;
  const size_t n = static_cast<size_t>(n_);
  return static_cast<uint64_t>(plan_.slot_order[c * n + j / k_]) * k_ + j % k_;
}

uint64_t Layout::position_of(int r, uint32_t c) const {
  return position_.empty()
             ? static_cast<uint64_t>(r)
             : position_[static_cast<size_t>(c) * static_cast<size_t>(n_) + static_cast<size_t>(r)];
}

std::string Layout::check_shape() const {
  const auto n = static_cast<uint32_t>(n_);
  if (!plan_.slot_order.empty()) {
    if (plan_.slot_order.size() != static_cast<size_t>(plan_.chunks) * n)
      return "the plan's slot order holds " + std::to_string(plan_.slot_order.size()) +
             " entries, not one per rank and chunk";
    for (uint32_t p : position_)
      if (p == UINT32_MAX) return "the plan's slot order is not a permutation of the ranks";
  }
  auto sized = [&](uint32_t small, uint32_t large, const char* what) {
    if (large % n == 0 && small == large / n) return std::string();
    return std::string(to_string(collective_)) + " over " + std::to_string(n_) + " ranks needs " +
           what + " of the size of the other over the rank count, got " + std::to_string(in_) +
           " input and " + std::to_string(out_) + " output blocks per chunk";
  };
  switch (collective_) {
    case Collective::AllGather:
      return sized(in_, out_, "an input");
    case Collective::ReduceScatter:
      return sized(out_, in_, "an output");
    case Collective::AllToAll:
      return in_ == out_ && in_ % n == 0
                 ? ""
                 : "all_to_all over " + std::to_string(n_) +
                       " ranks needs input and output buffers of equal size, a multiple of the "
                       "rank count, got " +
                       std::to_string(in_) + " and " + std::to_string(out_) + " blocks";
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
      return in_ == out_ || in_ == 0 || out_ == 0
                 ? ""
                 : std::string(to_string(collective_)) +
                       " needs input and output buffers of the same size, got " +
                       std::to_string(in_) + " and " + std::to_string(out_) + " blocks";
    case Collective::Custom:
      return "";
  }
  return "";
}

uint32_t Layout::size_of(Buffer b) const {
  return plan_.blocks_in(b);
}

size_t Layout::first_slot(int r, Buffer b, uint32_t c) const {
  const size_t base = static_cast<size_t>(c) * per_chunk_;
  switch (b) {
    case Buffer::Input:
      if (!plan_.in_place) return base + main_;
      return base + (in_ < out_ ? position_of(r, c) * in_ : 0);
    case Buffer::Output:
      return base + (plan_.in_place && out_ < in_ ? position_of(r, c) * out_ : 0);
    default:
      return base + main_ + (plan_.in_place ? 0 : in_);
  }
}

std::string Layout::where(int r, uint32_t k) const {
  const Op& op = plan_.of(r).ops[k];
  std::string text = "rank " + std::to_string(r) + " op " + std::to_string(k) + " (" +
                     to_string(op.kind) + ", step tag " + std::to_string(op.tag) + ")";
  return plan_.origin ? text + " from " + plan_.origin(r, k) : text;
}

std::string Layout::block_name(Buffer b, uint32_t c, uint32_t j) {
  return "block " + std::to_string(j) + " of chunk " + std::to_string(c) + " of its " +
         to_string(b);
}

std::string Layout::blocks(int r, uint32_t k, Side side, std::vector<uint32_t>& out) const {
  const DataRef& d = plan_.of(r).data[k];
  const Buffer b = d.buffer(side);
  const uint32_t first = d.first(side);
  const Runs runs = d.runs(side);
  const uint32_t size = size_of(b);
  out.clear();
  if (d.chunk >= plan_.chunks)
    return where(r, k) + " names chunk " + std::to_string(d.chunk) + " of " +
           std::to_string(plan_.chunks);
  if (first >= size || d.count > size)
    return where(r, k) + " names " + std::to_string(d.count) + " blocks from block " +
           std::to_string(first) + " of its " + to_string(b) + ", which holds " +
           std::to_string(size);
  // In runs, the blocks must not overlap nor wrap onto each other.
  const uint32_t run = runs.strided() ? runs.run : std::max<uint32_t>(d.count, 1);
  const uint32_t every = runs.strided() ? runs.every : run;
  if (runs.strided() &&
      (d.count % run != 0 || every < run || uint64_t{every} * (d.count / run - 1) + run > size))
    return where(r, k) + " names " + std::to_string(d.count) + " blocks of its " + to_string(b) +
           " in runs of " + std::to_string(run) + " every " + std::to_string(every) +
           ", which do not fit its " + std::to_string(size) + " blocks";
  // Run after run from `first`, each block below twice the size (the runs fit in it, checked
  // above): the wrap is a subtraction, not a division per block.
  for (uint64_t start = first, left = d.count; left > 0; start += every)
    for (uint64_t b = start, end = start + std::min<uint64_t>(run, left); b < end; ++b, --left)
      out.push_back(static_cast<uint32_t>(b >= size ? b - size : b));
  plan_.absolute_blocks(r, b, d.chunk, out);
  return "";
}

uint64_t Layout::initial(int r, uint32_t c, uint32_t j) const {
  switch (collective_) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
    case Collective::Reduce:
      return id(c, block_at(c, j));
    case Collective::Broadcast:
      return r == root_ ? id(c, j) : kNothing;
    case Collective::AllGather:
      return id(c, static_cast<uint64_t>(r) * k_ + j);
    case Collective::AllToAll:
      return a2a_id(c, r, j);
    case Collective::Custom:
      return (static_cast<uint64_t>(r) * plan_.chunks + c) * in_ + j;
  }
  return kNothing;
}

Layout::Want Layout::expected(int r, uint32_t c, uint32_t j) const {
  switch (collective_) {
    case Collective::AllReduce:
      return {Want::SumOfAll, id(c, j), -1};
    case Collective::ReduceScatter:
      return {Want::SumOfAll, id(c, static_cast<uint64_t>(r) * k_ + j), -1};
    case Collective::Reduce:
      return r == root_ ? Want{Want::SumOfAll, id(c, j), -1} : Want{};
    case Collective::Broadcast:
      return {Want::PartOf, id(c, j), root_};
    case Collective::AllGather:
      return {Want::PartOf, id(c, block_at(c, j)), static_cast<int>(block_at(c, j) / k_)};
    case Collective::AllToAll: {
      const int src = static_cast<int>(j / k_);
      return {Want::PartOf, a2a_id(c, src, static_cast<uint64_t>(r) * k_ + j % k_), src};
    }
    case Collective::Custom:
      break;
  }
  return {};
}

}  // namespace wafersim::collectives
