#include "models/collectives/symbolic.h"

#include <algorithm>
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

std::string str(uint64_t v) {
  return std::to_string(v);
}

class Executor {
 public:
  Executor(const Plan& plan, Collective collective, int root)
      : plan_(plan),
        collective_(collective),
        root_(root),
        n_(plan.size()),
        in_(plan.input_blocks),
        out_(plan.output_blocks),
        scratch_(plan.scratch_blocks),
        // In place, the input and the output are one array of the larger size.
        main_(plan.in_place ? std::max(in_, out_) : out_) {
    for (int r = 0; r < n_; ++r) everyone_ += contributor(r);
  }

  std::string run() {
    std::string problem = check_shape();
    if (!problem.empty()) return problem;
    const size_t per_rank = static_cast<size_t>(plan_.chunks) * n_;
    main_values_.resize(per_rank * main_);
    if (!plan_.in_place) input_values_.resize(per_rank * in_);
    scratch_values_.resize(per_rank * scratch_);
    initialise();
    problem = execute();
    return problem.empty() ? check_result() : problem;
  }

 private:
  // The collectives whose buffers hold one slot per rank: the slot's blocks, k = g / n.
  std::string check_shape() {
    auto sized = [&](uint32_t small, uint32_t large, const char* what) {
      if (large % static_cast<uint32_t>(n_) == 0 && small == large / static_cast<uint32_t>(n_))
        return std::string();
      return std::string(to_string(collective_)) + " over " + std::to_string(n_) + " ranks needs " +
             what + " of the size of the other over the rank count, got " + std::to_string(in_) +
             " input and " + std::to_string(out_) + " output blocks per chunk";
    };
    switch (collective_) {
      case Collective::AllGather:
        k_ = in_;
        return sized(in_, out_, "an input");
      case Collective::ReduceScatter:
        k_ = out_;
        return sized(out_, in_, "an output");
      case Collective::AllToAll:
        k_ = in_ / static_cast<uint32_t>(n_);
        return in_ == out_ && in_ % static_cast<uint32_t>(n_) == 0
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

  // The ids of the collective's blocks: g = the size of the larger buffer per chunk.
  uint64_t g() const { return std::max(in_, out_); }
  uint64_t id(uint32_t c, uint64_t b) const { return c * g() + b; }
  // All-to-all: the block `j` of rank `src`'s input (addressed to rank j / k).
  uint64_t a2a_id(uint32_t c, int src, uint64_t j) const {
    return (static_cast<uint64_t>(c) * n_ + static_cast<uint64_t>(src)) * g() + j;
  }
  Value own(int r, uint64_t id) const { return {id, 1, contributor(r)}; }

  // The size of buffer `b` per chunk, as the plan names it.
  uint32_t size_of(Buffer b) const {
    switch (b) {
      case Buffer::Input:
        return in_;
      case Buffer::Output:
        return out_;
      case Buffer::Scratch:
        return scratch_;
      case Buffer::Relay:
        break;
    }
    return 0;
  }
  // Block j of buffer `b` of chunk c of rank r.
  Value& at(int r, Buffer b, uint32_t c, uint32_t j) {
    const size_t slot = static_cast<size_t>(r) * plan_.chunks + c;
    switch (b) {
      case Buffer::Input:
        if (!plan_.in_place) return input_values_[slot * in_ + j];
        return main_values_[slot * main_ + (in_ < out_ ? static_cast<size_t>(r) * in_ : 0) + j];
      case Buffer::Output:
        return main_values_[slot * main_ +
                            (plan_.in_place && out_ < in_ ? static_cast<size_t>(r) * out_ : 0) + j];
      default:
        return scratch_values_[slot * scratch_ + j];
    }
  }

  void initialise() {
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < in_; ++j) {
          Value& v = at(r, Buffer::Input, c, j);
          switch (collective_) {
            case Collective::AllReduce:
            case Collective::ReduceScatter:
            case Collective::Reduce:
              v = own(r, id(c, j));
              break;
            case Collective::Broadcast:
              if (r == root_) v = own(r, id(c, j));
              break;
            case Collective::AllGather:
              v = own(r, id(c, static_cast<uint64_t>(r) * k_ + j));
              break;
            case Collective::AllToAll:
              v = own(r, a2a_id(c, r, j));
              break;
            case Collective::Custom:
              v = own(r, (static_cast<uint64_t>(r) * plan_.chunks + c) * in_ + j);
              break;
          }
        }
  }

  std::string where(int r, uint32_t k) const {
    const Op& op = plan_.of(r).ops[k];
    std::string text = "rank " + std::to_string(r) + " op " + std::to_string(k) + " (" +
                       to_string(op.kind) + ", step tag " + std::to_string(op.tag) + ")";
    return plan_.origin ? text + " from " + plan_.origin(r, k) : text;
  }
  static std::string block_name(Buffer b, uint32_t c, uint32_t j) {
    return "block " + std::to_string(j) + " of chunk " + std::to_string(c) + " of its " +
           to_string(b);
  }

  // The blocks op k of rank r names in buffer `b` from `first` on, checked against the buffer's
  // size; cyclic in the buffer, shifted by the position in a rotational plan.
  std::string blocks(int r, uint32_t k, Buffer b, uint32_t first, std::vector<uint32_t>& out) {
    const DataRef& d = plan_.of(r).data[k];
    const uint32_t size = size_of(b);
    out.clear();
    if (d.chunk >= plan_.chunks)
      return where(r, k) + " names chunk " + std::to_string(d.chunk) + " of " +
             std::to_string(plan_.chunks);
    if (first >= size || d.count > size)
      return where(r, k) + " names " + std::to_string(d.count) + " blocks from block " +
             str(first) + " of its " + to_string(b) + ", which holds " + std::to_string(size);
    const uint64_t shift = plan_.rotation > 0 ? static_cast<uint64_t>(r) : 0;
    for (uint32_t t = 0; t < d.count; ++t)
      out.push_back(static_cast<uint32_t>((first + shift + t) % size));
    return "";
  }

  // Reads the blocks an op names in `b` (or the relay of op `first`).
  std::string read(int r, uint32_t k, Buffer b, uint32_t first, std::vector<Value>& values) {
    values.clear();
    if (b == Buffer::Relay) {
      auto it = relays_.find(relay_key(r, first));
      if (it == relays_.end())
        return where(r, k) + " forwards the relay of op " + std::to_string(first) +
               ", which holds nothing";
      values = it->second;
      return "";
    }
    const DataRef& d = plan_.of(r).data[k];
    std::string problem = blocks(r, k, b, first, index_);
    if (!problem.empty()) return problem;
    for (uint32_t j : index_) {
      const Value& v = at(r, b, d.chunk, j);
      if (v.id == kEmpty)
        return where(r, k) + " reads " + block_name(b, d.chunk, j) + " before it holds it";
      values.push_back(v);
    }
    return "";
  }

  // Writes `values` where op k of rank r names its destination.
  std::string write(int r, uint32_t k, std::vector<Value>&& values) {
    const DataRef& d = plan_.of(r).data[k];
    if (d.dst == Buffer::Relay) {
      relays_[relay_key(r, k)] = std::move(values);
      return "";
    }
    std::string problem = blocks(r, k, d.dst, d.dst_first, index_);
    if (!problem.empty()) return problem;
    for (size_t t = 0; t < index_.size(); ++t) at(r, d.dst, d.chunk, index_[t]) = values[t];
    return "";
  }

  // `sum` += `part`, block by block; a problem when they are not the same block or a rank counts
  // twice.
  std::string combine(int r, uint32_t k, std::vector<Value>& sum, const std::vector<Value>& part) {
    const DataRef& d = plan_.of(r).data[k];
    for (size_t t = 0; t < sum.size(); ++t) {
      if (sum[t].id != part[t].id)
        return where(r, k) + " combines block " + std::to_string(d.src_first + t) + " of its " +
               to_string(d.src) + " with other data";
      sum[t].count += part[t].count;
      sum[t].hash += part[t].hash;
      if (sum[t].count > static_cast<uint32_t>(n_))
        return where(r, k) + " counts a rank twice in block " + std::to_string(d.src_first + t) +
               " of its " + to_string(d.src);
    }
    return "";
  }

  uint64_t relay_key(int r, uint32_t k) const { return (static_cast<uint64_t>(r) << 32) | k; }

  // Messages in flight, by (from, to, tag).
  using Channel = uint64_t;
  Channel channel(int from, int to, uint32_t tag) const {
    return ((static_cast<uint64_t>(from) * static_cast<uint64_t>(n_) + static_cast<uint64_t>(to))
            << 32) |
           tag;
  }

  // Delivers `payload` to receive k of rank r.
  std::string deliver(int r, uint32_t k, std::vector<Value>&& payload) {
    const DataRef& d = plan_.of(r).data[k];
    if (payload.size() != d.count)
      return where(r, k) + " receives " + std::to_string(payload.size()) +
             " blocks where it names " + std::to_string(d.count);
    if (d.reduce) {
      std::vector<Value> local;
      std::string problem = read(r, k, d.src, d.src_first, local);
      if (problem.empty()) problem = combine(r, k, local, payload);
      if (!problem.empty()) return problem;
      payload = std::move(local);
    }
    return write(r, k, std::move(payload));
  }

  // Runs a local op (copy, reduce, nop).
  std::string local(int r, uint32_t k) {
    const Op& op = plan_.of(r).ops[k];
    const DataRef& d = plan_.of(r).data[k];
    if (d.count == 0 || op.kind == OpKind::Nop) return "";
    std::vector<Value> values;
    std::string problem = read(r, k, d.src, d.src_first, values);
    if (!problem.empty()) return problem;
    if (op.kind == OpKind::Reduce) {
      std::vector<Value> into;
      problem = read(r, k, d.dst, d.dst_first, into);
      if (problem.empty()) problem = combine(r, k, into, values);
      if (!problem.empty()) return problem;
      values = std::move(into);
    }
    return write(r, k, std::move(values));
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
    // Delivers the first message of `ch` to receive k of rank r.
    auto take = [&](Channel ch, int r, uint32_t k) {
      auto& queue = messages[ch];
      std::vector<Value> payload = std::move(queue.front());
      queue.erase(queue.begin());
      std::string problem = deliver(r, k, std::move(payload));
      if (problem.empty()) finish(r, k);
      return problem;
    };
    std::string problem;
    while (!ready.empty() && problem.empty()) {
      auto [r, k] = ready.front();
      ready.pop_front();
      const Op& op = plan_.of(r).ops[k];
      if (op.kind == OpKind::Send) {
        const DataRef& d = plan_.of(r).data[k];
        std::vector<Value> payload;
        problem = read(r, k, d.src, d.src_first, payload);
        if (!problem.empty()) break;
        const int to = plan_.peer_of(r, op);
        const Channel ch = channel(r, to, op.tag);
        messages[ch].push_back(std::move(payload));
        finish(r, k);
        auto p = parked.find(ch);
        if (p != parked.end() && !p->second.empty()) {
          const uint32_t receive = p->second.front();
          p->second.erase(p->second.begin());
          problem = take(ch, to, receive);
        }
      } else if (op.kind == OpKind::Recv) {
        const Channel ch = channel(plan_.peer_of(r, op), r, op.tag);
        auto m = messages.find(ch);
        if (m != messages.end() && !m->second.empty())
          problem = take(ch, r, k);
        else
          parked[ch].push_back(k);
      } else {
        problem = local(r, k);
        if (problem.empty()) finish(r, k);
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

  // What block j of chunk c of rank r's output must hold at the end (`checked` false: anything).
  Value expected(int r, uint32_t c, uint32_t j, bool& checked) const {
    checked = true;
    const Value all{id(c, j), static_cast<uint32_t>(n_), everyone_};
    switch (collective_) {
      case Collective::AllReduce:
        return all;
      case Collective::ReduceScatter:
        return {id(c, static_cast<uint64_t>(r) * k_ + j), static_cast<uint32_t>(n_), everyone_};
      case Collective::Reduce:
        checked = r == root_;
        return all;
      case Collective::Broadcast:
        return own(root_, id(c, j));
      case Collective::AllGather:
        return own(static_cast<int>(j / k_), id(c, j));
      case Collective::AllToAll: {
        const int src = static_cast<int>(j / k_);
        return own(src, a2a_id(c, src, static_cast<uint64_t>(r) * k_ + j % k_));
      }
      case Collective::Custom:
        break;
    }
    checked = false;
    return {};
  }

  std::string check_result() {
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < out_; ++j) {
          bool checked = false;
          const Value want = expected(r, c, j, checked);
          const Value& got = at(r, Buffer::Output, c, j);
          if (!checked || got == want) continue;
          const std::string held =
              got.id == kEmpty    ? "nothing"
              : got.id != want.id ? "other data"
                                  : "the sum of " + std::to_string(got.count) + " ranks' parts";
          const std::string promised =
              want.count > 1
                  ? "the sum over all " + std::to_string(n_) + " ranks"
                  : "a part of rank " +
                        std::to_string(collective_ == Collective::Broadcast ? root_ : j / k_);
          return "rank " + std::to_string(r) + " ends with " + held + " in " +
                 block_name(Buffer::Output, c, j) + " where " + to_string(collective_) +
                 " promises " + promised;
        }
    return "";
  }

  const Plan& plan_;
  const Collective collective_;
  const int root_;
  const int n_;
  const uint32_t in_, out_, scratch_, main_;
  uint32_t k_ = 1;  // blocks per rank slot (all-gather, reduce-scatter, all-to-all)
  std::vector<Value> main_values_, input_values_, scratch_values_;
  std::unordered_map<uint64_t, std::vector<Value>> relays_;
  std::vector<uint32_t> index_;
  uint64_t everyone_ = 0;
};

}  // namespace

std::string check_plan(const Plan& plan, Collective collective, int root) {
  if (plan.size() <= 1) return "";
  return Executor(plan, collective, root).run();
}

}  // namespace wafersim::collectives
