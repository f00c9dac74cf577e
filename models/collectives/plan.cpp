#include "models/collectives/plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace wafersim::collectives {

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Send:
      return "send";
    case OpKind::Recv:
      return "recv";
    case OpKind::Reduce:
      return "reduce";
    case OpKind::Copy:
      return "copy";
    case OpKind::Compute:
      return "compute";
    case OpKind::Nop:
      return "nop";
  }
  return "?";
}

const char* to_string(Buffer buffer) {
  switch (buffer) {
    case Buffer::Input:
      return "input";
    case Buffer::Output:
      return "output";
    case Buffer::Scratch:
      return "scratch";
    case Buffer::Relay:
      return "relay";
  }
  return "?";
}

uint32_t RankPlan::close(size_t first, int64_t otherwise) {
  std::vector<bool> waited_on(ops.size() - first, false);
  for (size_t i = first; i < ops.size(); ++i)
    for (uint32_t d : deps(static_cast<uint32_t>(i)))
      if (d >= first) waited_on[d - first] = true;
  std::vector<uint32_t> sinks;
  for (size_t i = first; i < ops.size(); ++i)
    if (!waited_on[i - first]) sinks.push_back(static_cast<uint32_t>(i));
  if (sinks.empty() && otherwise >= 0) sinks.push_back(static_cast<uint32_t>(otherwise));
  return add({OpKind::Nop, -1, 0, 0}, sinks);
}

uint32_t RankPlan::add(Op op, const std::vector<uint32_t>& deps, DataRef moved) {
  if (deps.size() > kMaxDeps)
    throw std::invalid_argument("a plan op may wait on at most " + std::to_string(kMaxDeps) +
                                " others, got " + std::to_string(deps.size()));
  op.first_dep = static_cast<uint32_t>(dep_list.size());
  op.dep_count = static_cast<uint32_t>(deps.size());
  dep_list.insert(dep_list.end(), deps.begin(), deps.end());
  ops.push_back(op);
  data.push_back(moved);
  return static_cast<uint32_t>(ops.size() - 1);
}

uint64_t Plan::bytes_sent() const {
  uint64_t total = 0;
  for (const auto& r : ranks)
    for (const auto& op : r.ops)
      if (op.kind == OpKind::Send) total += op.bytes;
  return rotation > 0 ? total * static_cast<uint64_t>(rotation) : total;
}

void Plan::finish() {
  validate();
  for (RankPlan& rp : ranks) {
    const uint32_t n = static_cast<uint32_t>(rp.ops.size());
    rp.child_offsets.assign(n + 1, 0);
    for (uint32_t d : rp.dep_list) rp.child_offsets[d + 1]++;
    for (uint32_t k = 0; k < n; ++k) rp.child_offsets[k + 1] += rp.child_offsets[k];
    rp.child_list.resize(rp.child_offsets.back());
    std::vector<uint32_t> fill(rp.child_offsets.begin(), rp.child_offsets.end() - 1);
    for (uint32_t k = 0; k < n; ++k)
      for (uint32_t d : rp.deps(k)) rp.child_list[fill[d]++] = k;
  }
}

void Plan::validate() const {
  // Every Send must pair with exactly one Recv of the same (sender, receiver, tag) and size: sort
  // both sides and walk them together (sorted vectors: plans of 1,000 ranks hold millions of ops).
  struct Transfer {
    int from, to;
    uint32_t tag;
    uint64_t bytes;
    bool operator<(const Transfer& o) const {
      return std::tie(from, to, tag, bytes) < std::tie(o.from, o.to, o.tag, o.bytes);
    }
    bool same_key(const Transfer& o) const { return from == o.from && to == o.to && tag == o.tag; }
    std::string name() const {
      return std::to_string(from) + "->" + std::to_string(to) + " tag " + std::to_string(tag);
    }
  };
  // A rotational plan's position 0 stands for all: its send to p must meet position p's receive
  // from 0, which is position 0's receive from n - p, shifted by p.
  std::vector<Transfer> sends, recvs;
  const int n = size();
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const auto& ops = ranks[r].ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      for (uint32_t d : ranks[r].deps(static_cast<uint32_t>(i)))
        if (d >= i)
          throw std::logic_error("rank " + std::to_string(r) + " op " + std::to_string(i) +
                                 " depends on op " + std::to_string(d) +
                                 " that does not precede it");
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        if (op.peer < 0 || op.peer >= n || op.peer == r)
          throw std::logic_error("rank " + std::to_string(r) + " op " + std::to_string(i) +
                                 " has invalid peer " + std::to_string(op.peer));
        if (op.kind == OpKind::Send)
          sends.push_back({r, op.peer, op.tag, op.bytes});
        else if (rotation > 0)
          recvs.push_back({0, (n - op.peer) % n, op.tag, op.bytes});
        else
          recvs.push_back({op.peer, r, op.tag, op.bytes});
      }
    }
  }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
    if (k >= recvs.size() ||
        (k < sends.size() && sends[k] < recvs[k] && !sends[k].same_key(recvs[k])))
      throw std::logic_error("send " + sends[k].name() + " has no matching receive");
    if (k >= sends.size() || (recvs[k] < sends[k] && !sends[k].same_key(recvs[k])))
      throw std::logic_error("receive " + recvs[k].name() + " has no matching send");
    if (sends[k].bytes != recvs[k].bytes)
      throw std::logic_error("send " + sends[k].name() + " sends " +
                             std::to_string(sends[k].bytes) + " bytes but the receive expects " +
                             std::to_string(recvs[k].bytes));
  }
}

}  // namespace wafersim::collectives
