#include "models/collectives/symbolic.h"

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace wafersim::collectives {

namespace {

constexpr uint64_t kEmpty = UINT64_MAX;

// The contributor of rank r, as a 64-bit hash (splitmix64).
uint64_t contributor(int r) {
  uint64_t z = static_cast<uint64_t>(r) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What one block holds: which block of the collective (kEmpty: nothing yet) and whose sum.
struct Value {
  uint64_t id = kEmpty;
  uint32_t count = 0;
  uint64_t hash = 0;
  bool operator==(const Value& o) const { return id == o.id && count == o.count && hash == o.hash; }
};

class Executor {
 public:
  Executor(const Plan& plan, Collective collective, int root)
      : plan_(plan),
        collective_(collective),
        root_(root),
        n_(plan.size()),
        g_(plan.blocks_per_chunk),
        blocks_(static_cast<size_t>(plan.chunks) * plan.blocks_per_chunk),
        output_(static_cast<size_t>(n_) * blocks_),
        input_(collective == Collective::AllToAll ? static_cast<size_t>(n_) * blocks_ : 0) {
    for (int r = 0; r < n_; ++r) everyone_ += contributor(r);
  }

  std::string run() {
    initialise();
    std::string problem = execute();
    return problem.empty() ? check_result() : problem;
  }

 private:
  // Block j of chunk c, as an index into one rank's buffer.
  size_t index(uint32_t chunk, uint32_t j) const { return static_cast<size_t>(chunk) * g_ + j; }
  Value& out(int r, size_t b) { return output_[static_cast<size_t>(r) * blocks_ + b]; }
  Value& in(int r, size_t b) { return input_[static_cast<size_t>(r) * blocks_ + b]; }
  Value own(int r, uint64_t id) const { return {id, 1, contributor(r)}; }
  // The logical block of all-to-all data sent from `src` to `dst` in chunk c.
  uint64_t a2a_id(uint32_t c, int src, int dst) const {
    return (static_cast<uint64_t>(c) * n_ + static_cast<uint64_t>(src)) * n_ +
           static_cast<uint64_t>(dst);
  }

  void initialise() {
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < g_; ++j) {
          const size_t b = index(c, j);
          switch (collective_) {
            case Collective::AllReduce:
            case Collective::ReduceScatter:
            case Collective::Reduce:
              out(r, b) = own(r, b);
              break;
            case Collective::Broadcast:
              if (r == root_) out(r, b) = own(r, b);
              break;
            case Collective::AllGather:
              if (static_cast<int>(j) == r) out(r, b) = own(r, b);
              break;
            case Collective::AllToAll:
              in(r, b) = own(r, a2a_id(c, r, static_cast<int>(j)));
              if (static_cast<int>(j) == r) out(r, b) = in(r, b);
              break;
          }
        }
  }

  std::string where(int r, uint32_t k) const {
    const Op& op = plan_.of(r).ops[k];
    return "rank " + std::to_string(r) + " op " + std::to_string(k) + " (" + to_string(op.kind) +
           ", step tag " + std::to_string(op.tag) + ")";
  }
  std::string block_name(size_t b) const {
    return "block " + std::to_string(b % g_) + " of chunk " + std::to_string(b / g_);
  }
  // Block t of those op k of rank r names, as a buffer index.
  size_t block_of(int r, const DataRef& d, uint32_t t) const {
    const uint32_t shift = plan_.rotation > 0 ? static_cast<uint32_t>(r) % g_ : 0;
    return index(d.chunk, static_cast<uint32_t>((uint64_t{d.first} + shift + t) % g_));
  }

  // Messages in flight, by (from, to, tag).
  using Channel = uint64_t;
  Channel channel(int from, int to, uint32_t tag) const {
    return ((static_cast<uint64_t>(from) * static_cast<uint64_t>(n_) + static_cast<uint64_t>(to))
            << 32) |
           tag;
  }

  std::string execute() {
    std::vector<std::vector<uint32_t>> waiting(n_);  // unfinished dependencies per op
    std::deque<std::pair<int, uint32_t>> ready;
    size_t left = 0;
    for (int r = 0; r < n_; ++r) {
      const RankPlan& rp = plan_.of(r);
      waiting[r].resize(rp.ops.size());
      for (uint32_t k = 0; k < rp.ops.size(); ++k) {
        waiting[r][k] = rp.ops[k].dep_count;
        if (waiting[r][k] == 0) ready.push_back({r, k});
      }
      left += rp.ops.size();
    }
    // Most channels carry one message: small vectors, not deques (which allocate a page each).
    std::unordered_map<Channel, std::vector<std::vector<Value>>> messages;
    std::unordered_map<Channel, std::vector<uint32_t>> parked;  // receives waiting for a message
    messages.reserve(left);
    parked.reserve(left);
    std::vector<std::vector<bool>> done(n_);
    for (int r = 0; r < n_; ++r) done[r].assign(plan_.of(r).ops.size(), false);
    auto finish = [&](int r, uint32_t k) {
      done[r][k] = true;
      --left;
      for (uint32_t child : plan_.of(r).children(k))
        if (--waiting[r][child] == 0) ready.push_back({r, child});
    };
    std::string problem;
    // Delivers the first message of `ch` to receive k of rank r; "" or a problem.
    auto deliver = [&](Channel ch, int r, uint32_t k) {
      auto& queue = messages[ch];
      std::vector<Value> payload = std::move(queue.front());
      queue.erase(queue.begin());
      const DataRef& d = plan_.of(r).data[k];
      if (payload.size() != d.count)
        return where(r, k) + " receives " + std::to_string(payload.size()) +
               " blocks where it names " + std::to_string(d.count);
      for (uint32_t t = 0; t < d.count; ++t) {
        const size_t b = block_of(r, d, t);
        Value& v = out(r, b);
        if (!d.reduce) {
          v = payload[t];
          continue;
        }
        if (v.id != payload[t].id)
          return where(r, k) + " combines " + block_name(b) +
                 (v.id == kEmpty ? ", which it does not hold yet" : " with other data");
        v.count += payload[t].count;
        v.hash += payload[t].hash;
        if (v.count > static_cast<uint32_t>(n_))
          return where(r, k) + " counts a rank twice in " + block_name(b);
      }
      finish(r, k);
      return std::string();
    };
    while (!ready.empty() && problem.empty()) {
      auto [r, k] = ready.front();
      ready.pop_front();
      const Op& op = plan_.of(r).ops[k];
      if (op.kind == OpKind::Send) {
        const DataRef& d = plan_.of(r).data[k];
        std::vector<Value> payload;
        payload.reserve(d.count);
        for (uint32_t t = 0; t < d.count; ++t) {
          const size_t b = block_of(r, d, t);
          const Value& v = d.src == Buffer::Input && !input_.empty() ? in(r, b) : out(r, b);
          if (v.id == kEmpty) {
            problem = where(r, k) + " sends " + block_name(b) + " before it holds it";
            break;
          }
          payload.push_back(v);
        }
        if (!problem.empty()) break;
        const int to = plan_.peer_of(r, op);
        const Channel ch = channel(r, to, op.tag);
        messages[ch].push_back(std::move(payload));
        finish(r, k);
        auto p = parked.find(ch);
        if (p != parked.end() && !p->second.empty()) {
          const uint32_t receive = p->second.front();
          p->second.erase(p->second.begin());
          problem = deliver(ch, to, receive);
        }
      } else if (op.kind == OpKind::Recv) {
        const Channel ch = channel(plan_.peer_of(r, op), r, op.tag);
        auto m = messages.find(ch);
        if (m != messages.end() && !m->second.empty())
          problem = deliver(ch, r, k);
        else
          parked[ch].push_back(k);
      } else {
        finish(r, k);
      }
    }
    if (!problem.empty()) return problem;
    if (left == 0) return "";
    for (int r = 0; r < n_; ++r)
      for (uint32_t k = 0; k < done[r].size(); ++k)
        if (!done[r][k])
          return where(r, k) + " never runs: the plan deadlocks (" + std::to_string(left) +
                 " ops never run)";
    return "";
  }

  std::string check_result() {
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < g_; ++j) {
          const size_t b = index(c, j);
          Value expected;
          const Value all{b, static_cast<uint32_t>(n_), everyone_};
          switch (collective_) {
            case Collective::AllReduce:
              expected = all;
              break;
            case Collective::ReduceScatter:
              if (static_cast<int>(j) != r) continue;
              expected = all;
              break;
            case Collective::Reduce:
              if (r != root_) continue;
              expected = all;
              break;
            case Collective::Broadcast:
              expected = own(root_, b);
              break;
            case Collective::AllGather:
              expected = own(static_cast<int>(j), b);
              break;
            case Collective::AllToAll:
              expected = own(static_cast<int>(j), a2a_id(c, static_cast<int>(j), r));
              break;
          }
          const Value& got = out(r, b);
          if (got == expected) continue;
          std::string held = got.id == kEmpty ? "nothing"
                             : got.id != expected.id
                                 ? "other data"
                                 : "the sum of " + std::to_string(got.count) + " ranks' parts";
          return "rank " + std::to_string(r) + " ends with " + held + " in " + block_name(b) +
                 " where " + to_string(collective_) + " promises " +
                 (expected.count > 1 ? "the sum over all " + std::to_string(n_) + " ranks"
                                     : std::string("rank ") +
                                           std::to_string(collective_ == Collective::Broadcast
                                                              ? root_
                                                              : static_cast<int>(j)) +
                                           "'s part");
        }
    return "";
  }

  const Plan& plan_;
  const Collective collective_;
  const int root_;
  const int n_;
  const uint32_t g_;
  const size_t blocks_;
  std::vector<Value> output_, input_;
  uint64_t everyone_ = 0;
};

}  // namespace

std::string check_plan(const Plan& plan, Collective collective, int root) {
  if (plan.size() <= 1) return "";
  return Executor(plan, collective, root).run();
}

}  // namespace wafersim::collectives
