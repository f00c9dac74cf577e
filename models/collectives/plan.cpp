#include "models/collectives/plan.h"

#include <map>
#include <stdexcept>
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
    case OpKind::Nop:
      return "nop";
  }
  return "?";
}

uint64_t Plan::bytes_sent() const {
  uint64_t total = 0;
  for (const auto& r : ranks)
    for (const auto& op : r.ops)
      if (op.kind == OpKind::Send) total += op.bytes;
  return total;
}

void Plan::validate() const {
  using Key = std::tuple<int, int, uint32_t>;     // sender, receiver, tag
  std::map<Key, std::pair<uint64_t, int>> sends;  // size, count
  std::map<Key, std::pair<uint64_t, int>> recvs;
  const int n = size();
  for (int r = 0; r < n; ++r) {
    const auto& ops = ranks[r].ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      for (uint32_t d : op.deps)
        if (d >= i)
          throw std::logic_error("rank " + std::to_string(r) + " op " + std::to_string(i) +
                                 " depends on op " + std::to_string(d) +
                                 " that does not precede it");
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        if (op.peer < 0 || op.peer >= n || op.peer == r)
          throw std::logic_error("rank " + std::to_string(r) + " op " + std::to_string(i) +
                                 " has invalid peer " + std::to_string(op.peer));
        auto& table = op.kind == OpKind::Send ? sends : recvs;
        Key key = op.kind == OpKind::Send ? Key{r, op.peer, op.tag} : Key{op.peer, r, op.tag};
        auto& entry = table[key];
        entry.first = op.bytes;
        entry.second++;
      }
    }
  }
  for (const auto& [key, send] : sends) {
    auto it = recvs.find(key);
    auto [from, to, tag] = key;
    std::string what =
        "send " + std::to_string(from) + "->" + std::to_string(to) + " tag " + std::to_string(tag);
    if (it == recvs.end()) throw std::logic_error(what + " has no matching receive");
    if (it->second.second != send.second)
      throw std::logic_error(what + " is sent " + std::to_string(send.second) +
                             " times but received " + std::to_string(it->second.second));
    if (it->second.first != send.first)
      throw std::logic_error(what + " sends " + std::to_string(send.first) +
                             " bytes but the receive expects " + std::to_string(it->second.first));
  }
  if (recvs.size() != sends.size()) {
    for (const auto& [key, recv] : recvs)
      if (!sends.count(key))
        throw std::logic_error("receive " + std::to_string(std::get<0>(key)) + "->" +
                               std::to_string(std::get<1>(key)) + " tag " +
                               std::to_string(std::get<2>(key)) + " has no matching send");
  }
}

}  // namespace wafersim::collectives
