#include "models/collectives/symbolic.h"

#include <algorithm>
// GCC 12 takes a small vector's move from its inline storage for a read past it (a known false
// positive of -Wstringop-overread on Boost.Container's memmove).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#include <boost/container/small_vector.hpp>
#pragma GCC diagnostic pop
#include <boost/unordered/unordered_flat_map.hpp>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/layout.h"
#include "models/common/hash.h"

namespace wafersim::collectives {

namespace {

// The contributor of rank r, as a 64-bit hash.
uint64_t contributor(int r) {
  return mix64(static_cast<uint64_t>(r));
}

// What one block holds: which block of the collective (kEmpty: nothing yet) and whose sum (how many
// ranks' parts, and the sum of their hashes). 16 bytes: the block and the count share a word, as a
// collective's blocks are numbered below the proof's slots (at most 2^40: 16 TB of them) and its
// ranks are fewer than 2^24 (Executor::run).
class Value {
 public:
  static constexpr int kIdBits = 40;
  static constexpr uint64_t kEmpty = (uint64_t{1} << kIdBits) - 1;
  static constexpr uint64_t kMaxCount = (uint64_t{1} << (64 - kIdBits)) - 1;

  Value() = default;
  Value(uint64_t id, uint32_t count, uint64_t hash)
      : key_(id | uint64_t{count} << kIdBits), hash_(hash) {}
  uint64_t id() const { return key_ & kEmpty; }
  uint32_t count() const { return static_cast<uint32_t>(key_ >> kIdBits); }
  bool empty() const { return id() == kEmpty; }
  // Adds `part`'s ranks (of the same block; counts stay at most the rank count, checked).
  void add(const Value& part) {
    key_ += part.key_ & ~kEmpty;
    hash_ += part.hash_;
  }
  bool operator==(const Value& o) const { return key_ == o.key_ && hash_ == o.hash_; }

 private:
  uint64_t key_ = kEmpty;  // the id in the low kIdBits, the count above
  uint64_t hash_ = 0;
};
static_assert(sizeof(Value) == 16);

// The blocks one op moves: a flat ring's op moves one, a hierarchical plan's a dimension's worth
// (32 on a 32 x 32 platform), so they stay off the heap (the check runs up to a million ops before
// a run, and allocating for each took most of its time; 7% fewer instructions at 32 x 32 than
// with 4 inline).
using Blocks = boost::container::small_vector<Value, 32>;

// Messages sent before their receive runs, per channel in the order sent: a list through a pool of
// entries, as a channel mostly carries one at a time. A channel's entry goes once it is empty: a
// plan's channels are mostly used once (each step its own tag), and kept they would fill the map.
class Mailbox {
 public:
  using Channel = uint64_t;
  void post(Channel ch, Blocks&& blocks) {
    uint32_t entry = static_cast<uint32_t>(sent_.size());
    if (unused_.empty()) {
      sent_.push_back({std::move(blocks), kEnd});
    } else {
      entry = unused_.back();
      unused_.pop_back();
      sent_[entry] = {std::move(blocks), kEnd};
    }
    const auto [it, first] = channels_.try_emplace(ch, Fifo{entry, entry});
    if (!first) sent_[std::exchange(it->second.tail, entry)].next = entry;
  }
  // The blocks of the first message on `ch`, or null if none waits; valid until the next post.
  Blocks* take(Channel ch) {
    auto it = channels_.find(ch);
    if (it == channels_.end()) return nullptr;
    const uint32_t entry = it->second.head;
    it->second.head = sent_[entry].next;
    if (it->second.head == kEnd) channels_.erase(it);
    unused_.push_back(entry);
    return &sent_[entry].blocks;
  }

 private:
  static constexpr uint32_t kEnd = UINT32_MAX;
  struct Sent {
    Blocks blocks;
    uint32_t next;
  };
  struct Fifo {
    uint32_t head, tail;
  };
  std::vector<Sent> sent_;
  std::vector<uint32_t> unused_;  // entries of `sent_` free again
  boost::unordered_flat_map<Channel, Fifo> channels_;
};

class Executor {
 public:
  Executor(const Plan& plan, Collective collective, int root)
      : plan_(plan), layout_(plan, collective, root), n_(plan.size()) {
    for (int r = 0; r < n_; ++r) everyone_ += contributor(r);
  }

  std::string run() {
    std::string problem = layout_.check_shape();
    if (!problem.empty()) return problem;
    const double slots = static_cast<double>(n_) * static_cast<double>(layout_.slots_per_rank());
    if (slots >= static_cast<double>(Value::kEmpty) || static_cast<uint64_t>(n_) > Value::kMaxCount)
      return "the plan is too large to prove (" + std::to_string(n_) + " ranks of " +
             std::to_string(layout_.slots_per_rank()) +
             " blocks each): set collectives.verify_max_ops below its op count to run it unproven";
    values_.resize(static_cast<size_t>(slots));
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < plan_.input_blocks; ++j) {
          const uint64_t id = layout_.initial(r, c, j);
          if (id != Layout::kNothing) at(r, Buffer::Input, c, j) = {id, 1, contributor(r)};
        }
    problem = execute();
    return problem.empty() ? check_result() : problem;
  }

 private:
  Value& at(int r, Buffer b, uint32_t c, uint32_t j) {
    return values_[static_cast<size_t>(r) * layout_.slots_per_rank() + layout_.slot(r, b, c, j)];
  }
  std::string where(int r, uint32_t k) const { return layout_.where(r, k); }

  // The blocks side `side` of op k of rank r names (index_) and where their values are (slots_),
  // asked for at once: an op's blocks are often a line apart each, and at a thousand ranks and
  // more the values (16 bytes per block per rank) are far larger than the cache.
  std::string locate(int r, uint32_t k, Side side) {
    std::string problem = layout_.blocks(r, k, side, index_);
    if (!problem.empty()) return problem;
    const DataRef& d = plan_.of(r).data[k];
    const size_t base = static_cast<size_t>(r) * layout_.slots_per_rank() +
                        layout_.first_slot(r, d.buffer(side), d.chunk);
    slots_.resize(index_.size());
    for (size_t t = 0; t < index_.size(); ++t) {
      slots_[t] = base + index_[t];
      __builtin_prefetch(&values_[slots_[t]]);
    }
    return "";
  }

  // Reads the blocks side `side` of op k names (or, from the relay, those a receive kept).
  std::string read(int r, uint32_t k, Side side, Blocks& values) {
    values.clear();
    const DataRef& d = plan_.of(r).data[k];
    const uint32_t first = d.first(side);
    if (d.buffer(side) == Buffer::Relay) {
      auto it = relays_.find(relay_key(r, first));
      if (it == relays_.end())
        return where(r, k) + " forwards the relay of op " + std::to_string(first) +
               ", which holds nothing";
      values.assign(it->second.begin(), it->second.end());
      return "";
    }
    std::string problem = locate(r, k, side);
    if (!problem.empty()) return problem;
    for (size_t t = 0; t < index_.size(); ++t) {
      const Value& v = values_[slots_[t]];
      if (v.empty())
        return where(r, k) + " reads " + Layout::block_name(d.buffer(side), d.chunk, index_[t]) +
               " before it holds it";
      values.push_back(v);
    }
    return "";
  }

  // Writes `values` where op k of rank r names its destination.
  std::string write(int r, uint32_t k, Blocks&& values) {
    const DataRef& d = plan_.of(r).data[k];
    if (d.dst == Buffer::Relay) {
      relays_[relay_key(r, k)].assign(values.begin(), values.end());
      return "";
    }
    std::string problem = locate(r, k, Side::Destination);
    if (!problem.empty()) return problem;
    for (size_t t = 0; t < slots_.size(); ++t) values_[slots_[t]] = values[t];
    return "";
  }

  // `sum` += `part`, block by block; a problem when they are not the same block or a rank counts
  // twice.
  std::string combine(int r, uint32_t k, Blocks& sum, const Blocks& part) {
    const DataRef& d = plan_.of(r).data[k];
    for (size_t t = 0; t < sum.size(); ++t) {
      if (sum[t].id() != part[t].id())
        return where(r, k) + " combines block " + std::to_string(d.src_first + t) + " of its " +
               to_string(d.src) + " with other data";
      if (sum[t].count() + part[t].count() > static_cast<uint32_t>(n_))
        return where(r, k) + " counts a rank twice in block " + std::to_string(d.src_first + t) +
               " of its " + to_string(d.src);
      sum[t].add(part[t]);
    }
    return "";
  }

  uint64_t relay_key(int r, uint32_t k) const { return (static_cast<uint64_t>(r) << 32) | k; }

  // Messages in flight, by (from, to, tag).
  using Channel = Mailbox::Channel;
  Channel channel(int from, int to, uint32_t tag) const {
    return ((static_cast<uint64_t>(from) * static_cast<uint64_t>(n_) + static_cast<uint64_t>(to))
            << 32) |
           tag;
  }

  // Delivers `payload` to receive k of rank r.
  std::string deliver(int r, uint32_t k, Blocks&& payload) {
    const DataRef& d = plan_.of(r).data[k];
    if (payload.size() != d.count)
      return where(r, k) + " receives " + std::to_string(payload.size()) +
             " blocks where it names " + std::to_string(d.count);
    if (d.reduce) {
      Blocks local;
      std::string problem = read(r, k, Side::Source, local);
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
    Blocks values;
    std::string problem = read(r, k, Side::Source, values);
    if (!problem.empty()) return problem;
    if (op.kind == OpKind::Reduce) {
      Blocks into;
      problem = read(r, k, Side::Destination, into);
      if (problem.empty()) problem = combine(r, k, into, values);
      if (!problem.empty()) return problem;
      values = std::move(into);
    }
    return write(r, k, std::move(values));
  }

  // An in-network flow: each input adds its blocks to the flow's sum and is done (its data has
  // left); each output waits until every input has given, then holds the sum.
  struct FlowState {
    Blocks sum;
    size_t inputs = 0;                              // inputs that have given
    std::vector<std::pair<int, uint32_t>> waiting;  // outputs' ops
  };

  template <typename Finish>
  std::string flow(int r, uint32_t k, Finish& finish) {
    const Op& op = plan_.of(r).ops[k];
    const FlowSpec& spec = plan_.flows[op.peer];
    FlowState& state = flows_[op.peer];
    if (spec.has_input(r)) {
      Blocks part;
      std::string problem = read(r, k, Side::Source, part);
      if (!problem.empty()) return problem;
      if (state.inputs == 0) {
        state.sum = std::move(part);
      } else {
        if (part.size() != state.sum.size())
          return where(r, k) + " gives " + std::to_string(part.size()) + " blocks to flow " +
                 std::to_string(op.peer) + ", whose other inputs give " +
                 std::to_string(state.sum.size());
        problem = combine(r, k, state.sum, part);
        if (!problem.empty()) return problem;
      }
      ++state.inputs;
    }
    if (spec.has_output(r))
      state.waiting.push_back({r, k});
    else
      finish(r, k);
    if (state.inputs < spec.inputs.size()) return "";
    for (auto [o, ok] : state.waiting) {
      if (plan_.of(o).data[ok].count != state.sum.size())
        return where(o, ok) + " takes " + std::to_string(plan_.of(o).data[ok].count) +
               " blocks from flow " + std::to_string(op.peer) + ", which carries " +
               std::to_string(state.sum.size());
      std::string problem = write(o, ok, Blocks(state.sum));
      if (!problem.empty()) return problem;
      finish(o, ok);
    }
    state.waiting.clear();
    return "";
  }

  std::string execute() {
    flows_.assign(plan_.flows.size(), {});
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
    // Messages sent before their receive ran; and the receives that ran before their message,
    // which a send then hands its blocks to at once. A channel never has both.
    Mailbox messages;
    boost::unordered_flat_map<Channel, boost::container::small_vector<uint32_t, 2>> parked;
    std::vector<std::vector<bool>> done(n_);
    for (int r = 0; r < n_; ++r) done[r].assign(plan_.of(r).ops.size(), false);
    auto finish = [&](int r, uint32_t k) {
      done[r][k] = true;
      --left;
      for (uint32_t child : plan_.of(r).children(k))
        if (--waiting[r][child] == 0) ready.push_back({r, child});
    };
    auto receive = [&](int r, uint32_t k, Blocks&& payload) {
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
        Blocks payload;
        problem = read(r, k, Side::Source, payload);
        if (!problem.empty()) break;
        const int to = plan_.peer_of(r, op);
        const Channel ch = channel(r, to, op.tag);
        finish(r, k);
        if (auto p = parked.find(ch); p != parked.end()) {  // a receive waits: it takes them now
          const uint32_t waiting_receive = p->second.front();
          p->second.erase(p->second.begin());
          if (p->second.empty()) parked.erase(p);
          problem = receive(to, waiting_receive, std::move(payload));
          continue;
        }
        messages.post(ch, std::move(payload));
      } else if (op.kind == OpKind::Flow) {
        problem = flow(r, k, finish);
      } else if (op.kind == OpKind::Recv) {
        const Channel ch = channel(plan_.peer_of(r, op), r, op.tag);
        if (Blocks* waiting_message = messages.take(ch))
          problem = receive(r, k, std::move(*waiting_message));
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

  std::string check_result() {
    for (int r = 0; r < n_; ++r)
      for (uint32_t c = 0; c < plan_.chunks; ++c)
        for (uint32_t j = 0; j < plan_.output_blocks; ++j) {
          const Layout::Want want = layout_.expected(r, c, j);
          if (want.kind == Layout::Want::Anything) continue;
          const bool sum = want.kind == Layout::Want::SumOfAll;
          const Value expected = sum ? Value{want.block, static_cast<uint32_t>(n_), everyone_}
                                     : Value{want.block, 1, contributor(want.owner)};
          const Value& got = at(r, Buffer::Output, c, j);
          if (got == expected) continue;
          const std::string held =
              got.empty() ? "nothing"
              : got.id() != expected.id()
                  ? "other data"
                  : "the sum of " + std::to_string(got.count()) + " ranks' parts";
          const std::string promised = sum ? "the sum over all " + std::to_string(n_) + " ranks"
                                           : "a part of rank " + std::to_string(want.owner);
          return "rank " + std::to_string(r) + " ends with " + held + " in " +
                 Layout::block_name(Buffer::Output, c, j) + " where " +
                 to_string(layout_.collective()) + " promises " + promised;
        }
    return "";
  }

  const Plan& plan_;
  const Layout layout_;
  const int n_;
  std::vector<Value> values_;
  // What receives into the relay keep, for the op that forwards it: kept to the end, so in a vector
  // of their size rather than with room for 32 inline.
  boost::unordered_flat_map<uint64_t, std::vector<Value>> relays_;
  std::vector<FlowState> flows_;
  std::vector<uint32_t> index_;
  std::vector<size_t> slots_;
  uint64_t everyone_ = 0;
};
}  // namespace

std::string check_plan(const Plan& plan, Collective collective, int root) {
  if (plan.size() <= 1) return "";
  return Executor(plan, collective, root).run();
}

}  // namespace wafersim::collectives
