#include "models/collectives/algorithms.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace wafersim::collectives {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "all_reduce";
    case Collective::AllGather:
      return "all_gather";
    case Collective::ReduceScatter:
      return "reduce_scatter";
    case Collective::AllToAll:
      return "all_to_all";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::Reduce:
      return "reduce";
    case Collective::Custom:
      return "custom";
  }
  return "?";
}

Collective collective_from_string(const std::string& text) {
  for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                       Collective::AllToAll, Collective::Broadcast, Collective::Reduce})
    if (text == to_string(c)) return c;
  throw std::invalid_argument("unknown collective '" + text +
                              "' (expected all_reduce, all_gather, reduce_scatter, all_to_all, "
                              "broadcast or reduce)");
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Direct:
      return "direct";
    case Algorithm::HalvingDoubling:
      return "halving_doubling";
    case Algorithm::DoubleBinaryTree:
      return "double_binary_tree";
    case Algorithm::Pairwise:
      return "pairwise";
    case Algorithm::InSwitch:
      return "in_switch";
    case Algorithm::RouteTree:
      return "route_tree";
  }
  return "?";
}

Algorithm algorithm_from_string(const std::string& text) {
  if (text == "ring" || text == "oneRing") return Algorithm::Ring;
  if (text == "direct" || text == "oneDirect") return Algorithm::Direct;
  if (text == "halving_doubling" || text == "halvingDoubling" || text == "oneHalvingDoubling")
    return Algorithm::HalvingDoubling;
  if (text == "double_binary_tree" || text == "doubleBinaryTree")
    return Algorithm::DoubleBinaryTree;
  if (text == "pairwise") return Algorithm::Pairwise;
  if (text == "in_switch") return Algorithm::InSwitch;
  if (text == "route_tree") return Algorithm::RouteTree;
  throw std::invalid_argument("unknown collective algorithm '" + text +
                              "' (expected ring, direct, halving_doubling, double_binary_tree, "
                              "pairwise, in_switch or route_tree)");
}

namespace {

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

// A cyclic range of blocks of one chunk: (first + t) mod blocks_per_chunk for t < count.
struct Blocks {
  int first;
  int count;
};

// Appends ops to one chunk of a plan, naming the blocks each moves; block j of the chunk holds
// share(chunk_bytes, blocks_per_chunk, j) bytes, and an op's size is that of its blocks. The
// algorithms work in one buffer holding the whole data (`work`: the input of reduce-scatter, the
// output of the others). Tags are offset per chunk so chunks never cross-match. An op written
// without dependencies waits for its rank's gate, when it has one (active chunks). Ranks the plan
// does not hold (all but position 0 of a rotational or symmetric plan) are skipped.
class ChunkWriter {
 public:
  // `gates`: per rank, the op an op written without dependencies waits for (-1: none).
  ChunkWriter(Plan& plan, uint32_t chunk, uint64_t chunk_bytes, Buffer work,
              const std::vector<int64_t>& gates, const GroupView* group = nullptr)
      : plan_(plan),
        chunk_(chunk),
        chunk_bytes_(chunk_bytes),
        blocks_(static_cast<int>(plan.blocks_per_chunk)),
        tag_base_((chunk << 16) + (group ? group->tag_offset : 0)),
        work_(work),
        gates_(gates),
        group_(group) {}

  uint32_t send(int rank, int peer, Blocks b, uint32_t step, std::vector<uint32_t> deps = {}) {
    return send_from(work_, rank, peer, b, step, std::move(deps));
  }
  uint32_t send_from(Buffer src, int rank, int peer, Blocks b, uint32_t step,
                     std::vector<uint32_t> deps = {}) {
    return add(rank, {OpKind::Send, peer, bytes(b), tag_base_ + step}, std::move(deps),
               data(b, src, src, false));
  }
  // Receives into `b` of the work buffer, replacing it or, with `reduce`, combining into it.
  uint32_t recv(int rank, int peer, Blocks b, uint32_t step, std::vector<uint32_t> deps = {},
                bool reduce = false) {
    return add(rank, {OpKind::Recv, peer, bytes(b), tag_base_ + step}, std::move(deps),
               data(b, work_, work_, reduce));
  }
  // All-to-all's receive: data lands in block `b` of the output, but the message is sized as the
  // sender's block `sized_as` (the receiver's own index), so both ends agree on its bytes.
  uint32_t recv_sized(int rank, int peer, Blocks b, Blocks sized_as, uint32_t step,
                      std::vector<uint32_t> deps = {}) {
    return add(rank, {OpKind::Recv, peer, bytes(sized_as), tag_base_ + step}, std::move(deps),
               data(b, Buffer::Output, Buffer::Output, false));
  }
  // A relayed all-to-all block, kept in scratch block `slot` until it is forwarded; sized as
  // block `sized_as` (its destination's index in the sender's input).
  uint32_t recv_to_scratch(int rank, int peer, uint32_t slot, Blocks sized_as, uint32_t step,
                           std::vector<uint32_t> deps) {
    return add(rank, {OpKind::Recv, peer, bytes(sized_as), tag_base_ + step}, std::move(deps),
               {chunk_, slot, slot, 1, Buffer::Scratch, Buffer::Scratch, false});
  }
  uint32_t send_from_scratch(int rank, int peer, uint32_t slot, Blocks sized_as, uint32_t step,
                             std::vector<uint32_t> deps) {
    return add(rank, {OpKind::Send, peer, bytes(sized_as), tag_base_ + step}, std::move(deps),
               {chunk_, slot, slot, 1, Buffer::Scratch, Buffer::Scratch, false});
  }
  // A rank's own all-to-all block, from its input to its output, through the NPU's memory (no
  // other op waits for it).
  uint32_t copy_own(int rank, Blocks b, std::vector<uint32_t> deps = {}) {
    return add(rank, {OpKind::Copy, -1, bytes(b), 0}, std::move(deps),
               data(b, Buffer::Input, Buffer::Output, false));
  }
  // A new in-network flow of this chunk; its members' ops come from flow().
  int new_flow(FlowSpec spec) {
    if (group_) throw std::logic_error("in-network flows are not built over groups");
    plan_.flows.push_back(std::move(spec));
    return static_cast<int>(plan_.flows.size() - 1);
  }
  // Rank `rank`'s part in flow `f`, on blocks `b` of the work buffer: what it gives (an input)
  // and where the sum lands (an output).
  uint32_t flow(int rank, int f, Blocks b, uint32_t step, std::vector<uint32_t> deps = {}) {
    return add(rank, {OpKind::Flow, f, bytes(b), tag_base_ + step}, std::move(deps),
               data(b, work_, work_, false));
  }
  // An op that only waits for `deps` (several receives that combine into one block).
  uint32_t join(int rank, std::vector<uint32_t> deps) {
    return add(rank, {OpKind::Nop, -1, 0, 0}, std::move(deps), {});
  }
  // Whether the plan holds the ops of `rank` (a place in the group, when there is one): all but
  // position 0 of a rotational or symmetric plan are not held.
  uint32_t chunk() const { return chunk_; }
  bool holds(int rank) const {
    if (group_) rank = group_->members[rank];
    return rank < static_cast<int>(plan_.ranks.size());
  }
  int blocks() const { return blocks_; }

 private:
  // Bytes of a cyclic block range, in constant time: every block holds chunk / blocks bytes, and
  // blocks below chunk % blocks one more.
  uint64_t bytes(Blocks b) const {
    b = in_chunk(b);
    const uint64_t base = chunk_bytes_ / blocks_, extra = chunk_bytes_ % blocks_;
    auto extras_below = [&](int64_t end) {  // blocks j < end (end <= blocks) holding one more
      return static_cast<uint64_t>(std::min<int64_t>(end, static_cast<int64_t>(extra)));
    };
    const int64_t first = b.first, last = first + b.count;  // first in [0, blocks)
    uint64_t extras = last <= blocks_ ? extras_below(last) - extras_below(first)
                                      : extras_below(blocks_) - extras_below(first) +
                                            extras_below(last - blocks_);
    return base * static_cast<uint64_t>(b.count) + extras;
  }
  DataRef data(Blocks b, Buffer src, Buffer dst, bool reduce) const {
    b = in_chunk(b);
    const auto first = static_cast<uint32_t>(b.first);
    return {chunk_, first, first, static_cast<uint32_t>(b.count), src, dst, reduce};
  }
  // A group's blocks as the chunk's (a group's range never wraps: its algorithms name ranges that
  // wrap only within a whole chunk).
  Blocks in_chunk(Blocks b) const {
    if (!group_) return b;
    const int n = static_cast<int>(group_->members.size());
    if (b.first + b.count > n)
      throw std::logic_error("a group's block range wraps: " + std::to_string(b.first) + "+" +
                             std::to_string(b.count) + " of " + std::to_string(n));
    const int scale = static_cast<int>(group_->scale);
    return {static_cast<int>(group_->base) + b.first * scale, b.count * scale};
  }
  uint32_t add(int rank, Op op, std::vector<uint32_t> deps, DataRef moved) {
    if (!holds(rank)) return 0;
    if (group_) {
      rank = group_->members[rank];
      if (op.peer >= 0) op.peer = group_->members[op.peer];
    }
    if (deps.empty() && gates_[rank] >= 0) deps.push_back(static_cast<uint32_t>(gates_[rank]));
    return plan_.ranks[rank].add(op, deps, moved);
  }
  Plan& plan_;
  uint32_t chunk_;
  uint64_t chunk_bytes_;
  int blocks_;
  uint32_t tag_base_;
  Buffer work_;
  const std::vector<int64_t>& gates_;
  const GroupView* group_;
};

// Index of the op that precedes the next one, wrapped for optional dependencies.
std::vector<uint32_t> after(int64_t op) {
  return op < 0 ? std::vector<uint32_t>{} : std::vector<uint32_t>{static_cast<uint32_t>(op)};
}

Blocks block(int j, int n) {
  return {mod(j, n), 1};
}

// Step-by-step algorithms post each receive when the step before it is done, as a real ring or
// butterfly does: a message that arrives earlier waits in the NPU's mailbox, so timing is
// unchanged, but a rank never holds thousands of posted receives at once.

// ---- ring
// ----------------------------------------------------------------------------------------

// A ring's places in order: the position at each place (RingPath::at wraps round).
struct RingPath {
  std::vector<int> order;
  int size() const { return static_cast<int>(order.size()); }
  int at(int place) const { return order[static_cast<size_t>(mod(place, size()))]; }
};

// The ring chunk `chunk` goes round: the positions in the request's ring order (or 0, 1, ...),
// backwards for odd chunks when the ring alternates (both directions of its links then carry a
// chunk, as the Fred paper's baseline runs 2 chunks in opposite directions).
RingPath ring_path(const CollectiveRequest& q, uint32_t chunk) {
  RingPath path{q.ring_order};
  if (path.order.empty()) {
    path.order.resize(static_cast<size_t>(q.ranks));
    std::iota(path.order.begin(), path.order.end(), 0);
  }
  if (q.ring_alternates && chunk % 2 == 1) std::reverse(path.order.begin(), path.order.end());
  return path;
}

// Reduce-scatter around the ring, the rank at place q ending with its own block reduced over all
// ranks: at step k it sends the block of the rank k + 1 places behind it and combines the block of
// the rank k + 2 places behind from its predecessor (a receive that combines takes the reduction
// engine's time for its bytes). Blocks are named by position, so a position ends with its own
// block whatever the order. Returns per rank the index of its last receive.
std::vector<int64_t> ring_reduce_scatter(ChunkWriter& w, const RingPath& path, uint32_t step0) {
  const int n = path.size();
  std::vector<int64_t> last(n, -1);
  for (int q = 0; q < n; ++q) {
    const int i = path.at(q);
    if (!w.holds(i)) continue;
    int64_t prev = -1;
    for (int k = 0; k < n - 1; ++k) {
      w.send(i, path.at(q + 1), block(path.at(q - k - 1), n), step0 + k, after(prev));
      prev = w.recv(i, path.at(q - 1), block(path.at(q - k - 2), n), step0 + k, after(prev), true);
    }
    last[i] = prev;
  }
  return last;
}

// All-gather around the ring, each rank starting from its own block: at step k the rank at place
// q sends the block of the rank k places behind it and receives the one k + 1 places behind.
void ring_all_gather(ChunkWriter& w, const RingPath& path, uint32_t step0,
                     const std::vector<int64_t>& start) {
  const int n = path.size();
  for (int q = 0; q < n; ++q) {
    const int i = path.at(q);
    if (!w.holds(i)) continue;
    int64_t prev = start.empty() ? -1 : start[i];
    for (int k = 0; k < n - 1; ++k) {
      w.send(i, path.at(q + 1), block(path.at(q - k), n), step0 + k, after(prev));
      prev = w.recv(i, path.at(q - 1), block(path.at(q - k - 1), n), step0 + k, after(prev));
    }
  }
}

// ---- direct
// --------------------------------------------------------------------------------------

// Rank i sends to i + 1 first, then i + 2, ... (no rank is everyone's first destination), and
// posts its receives from i - 1, i - 2, ...: every rank's ops are rank 0's moved by i, so the plan
// is the same at every place of a ring of positions (Symmetry).
std::vector<int64_t> direct_reduce_scatter(ChunkWriter& w, int n, uint32_t step) {
  std::vector<int64_t> last(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!w.holds(i)) continue;
    for (int k = 1; k < n; ++k) w.send(i, mod(i + k, n), block(i + k, n), step);
    // Every peer's part combines into block i as it arrives (one reduction engine serialises
    // them); the chunk's next phase waits for them all.
    std::vector<uint32_t> combined;
    for (int k = 1; k < n; ++k)
      combined.push_back(w.recv(i, mod(i - k, n), block(i, n), step, {}, true));
    last[i] = w.join(i, combined);
  }
  return last;
}

void direct_all_gather(ChunkWriter& w, int n, uint32_t step, const std::vector<int64_t>& start) {
  for (int i = 0; i < n; ++i) {
    if (!w.holds(i)) continue;
    int64_t prev = start.empty() ? -1 : start[i];
    for (int k = 1; k < n; ++k) w.send(i, mod(i + k, n), block(i, n), step, after(prev));
    for (int k = 1; k < n; ++k) w.recv(i, mod(i - k, n), block(i - k, n), step);
  }
}

// ---- halving-doubling
// ----------------------------------------------------------------------------

// Recursive halving over blocks [0, n): at distance d the partner whose bit d is clear keeps the
// lower half of the pair's range, so rank i ends with block i.
std::vector<int64_t> halving_reduce_scatter(ChunkWriter& w, int n, uint32_t step0) {
  std::vector<int64_t> last(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!w.holds(i)) continue;
    Blocks range{0, n};
    int64_t prev = -1;
    uint32_t step = step0;
    for (int d = n / 2; d >= 1; d /= 2, ++step) {
      const int half = range.count / 2;
      const Blocks low{range.first, half}, high{range.first + half, half};
      const bool lower = (i & d) == 0;
      const Blocks keep = lower ? low : high, give = lower ? high : low;
      w.send(i, i ^ d, give, step, after(prev));
      prev = w.recv(i, i ^ d, keep, step, after(prev), true);
      range = keep;
    }
    last[i] = prev;
  }
  return last;
}

// Recursive doubling from block i: the reverse of the halving, the range doubling each step.
void doubling_all_gather(ChunkWriter& w, int n, uint32_t step0, const std::vector<int64_t>& start) {
  for (int i = 0; i < n; ++i) {
    if (!w.holds(i)) continue;
    Blocks range{i, 1};
    int64_t prev = start.empty() ? -1 : start[i];
    uint32_t step = step0;
    for (int d = 1; d < n; d *= 2, ++step) {
      const bool lower = (i & d) == 0;
      const Blocks theirs{lower ? range.first + range.count : range.first - range.count,
                          range.count};
      w.send(i, i ^ d, range, step, after(prev));
      prev = w.recv(i, i ^ d, theirs, step, after(prev));
      range = {lower ? range.first : theirs.first, 2 * range.count};
    }
  }
}

// ---- double binary tree
// --------------------------------------------------------------------------

// Reduce `b` to the root then broadcast it, on the heap-shaped tree over `order`.
void tree_all_reduce(ChunkWriter& w, const std::vector<int>& order, Blocks b, uint32_t step) {
  const int n = static_cast<int>(order.size());
  if (b.count == 0) return;
  for (int p = 0; p < n; ++p) {
    int rank = order[p];
    std::vector<uint32_t> reduced;  // the children's parts, combined as they arrive
    for (int c : {2 * p + 1, 2 * p + 2})
      if (c < n) reduced.push_back(w.recv(rank, order[c], b, step, {}, true));
    std::vector<uint32_t> ready = reduced;
    if (p > 0) {
      int parent = order[(p - 1) / 2];
      w.send(rank, parent, b, step, reduced);
      ready = {w.recv(rank, parent, b, step + 1)};
    }
    for (int c : {2 * p + 1, 2 * p + 2})
      if (c < n) w.send(rank, order[c], b, step + 1, ready);
  }
}

// A broadcast of `b` down the tree `parent` (each position's parent, -1 at the root): every
// position receives it from its parent and sends it on to each child; a reduce, up it: every
// position combines its children's parts into its own and sends the sum to its parent.
void parent_tree(ChunkWriter& w, const std::vector<int>& parent, bool reduce, Blocks b) {
  const int n = static_cast<int>(parent.size());
  std::vector<std::vector<int>> children(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p)
    if (parent[p] >= 0) children[parent[p]].push_back(p);
  for (int p = 0; p < n; ++p) {
    if (reduce) {
      std::vector<uint32_t> parts;
      for (int c : children[p]) parts.push_back(w.recv(p, c, b, 0, {}, true));
      if (parent[p] >= 0) w.send(p, parent[p], b, 0, parts);
    } else {
      const int64_t got = parent[p] >= 0 ? int64_t{w.recv(p, parent[p], b, 0)} : -1;
      for (int c : children[p]) w.send(p, c, b, 0, after(got));
    }
  }
}

// All-to-all as ASTRA-sim's ring runs it: every message goes to the next rank, one at a time (a
// rank sends its next message when its previous receive has arrived). In phase p rank i sends the
// blocks rank i - p addressed beyond i, nearest first: its own in phase 0, then those it received
// in phase p - 1, n(n - 1) / 2 messages in all. The block addressed to i itself lands in its
// output; the others wait in scratch blocks, one each ((n - 1)(n - 2) / 2 per chunk).
void ring_relay_all_to_all(ChunkWriter& w, int n) {
  for (int i = 0; i < n; ++i) {
    if (!w.holds(i)) continue;
    w.copy_own(i, block(i, n));
    const int next = mod(i + 1, n), prev = mod(i - 1, n);
    // Last phase's relayed blocks by distance from i: (receive op, scratch slot).
    std::vector<std::pair<uint32_t, uint32_t>> held, kept;
    int64_t last_recv = -1;
    uint32_t step = 0, slots = 0;
    for (int p = 0; p + 1 < n; ++p) {
      for (int m = 1; m <= n - 1 - p; ++m, ++step) {
        const Blocks dst = block(i + m, n);
        std::vector<uint32_t> deps = after(last_recv);
        if (p == 0) {
          w.send_from(Buffer::Input, i, next, dst, step, deps);
        } else {
          const auto [received, slot] = held[m];
          if (deps.empty() || deps[0] != received) deps.push_back(received);
          w.send_from_scratch(i, next, slot, dst, step, deps);
        }
        // The matching receive: the previous rank's m-th message of phase p, addressed m - 1
        // ranks beyond i.
        if (m == 1) {
          last_recv =
              w.recv_sized(i, prev, block(i - 1 - p, n), block(i, n), step, after(last_recv));
          kept.push_back({0, 0});
        } else {
          last_recv =
              w.recv_to_scratch(i, prev, slots, block(i + m - 1, n), step, after(last_recv));
          kept.push_back({static_cast<uint32_t>(last_recv), slots++});
        }
      }
      held.assign(1, {0, 0});  // held[m]: the block at distance m, forwarded next phase
      for (size_t k = 1; k < kept.size(); ++k) held.push_back(kept[k]);
      kept.clear();
    }
  }
}

// ---- one chunk of each collective
// ----------------------------------------------------------------

// ---- in-network flows (a Fred fabric's switches reduce and multicast)
// ----------------------------

void in_switch_chunk(const CollectiveRequest& q, ChunkWriter& w) {
  const int n = q.ranks;
  std::vector<int> everyone(n);
  for (int i = 0; i < n; ++i) everyone[i] = i;
  auto all_but = [&](int j) {
    std::vector<int> others;
    for (int i = 0; i < n; ++i)
      if (i != j) others.push_back(i);
    return others;
  };
  // Flows one after another: each rank issues its ops in flow order and its network interface
  // sends them in that order, so they follow each other on every link without a wait between
  // them (a dependency on the flow before would add a trip through the tree to every flow).
  auto serial = [&](auto spec_of) {
    for (int j = 0; j < n; ++j) {
      const int f = w.new_flow(spec_of(j));
      for (int i = 0; i < n; ++i) w.flow(i, f, block(j, n), static_cast<uint32_t>(j));
    }
  };
  switch (q.collective) {
    case Collective::AllReduce: {
      const int f = w.new_flow({everyone, everyone});
      for (int i = 0; i < n; ++i) w.flow(i, f, {0, n}, 0);
      return;
    }
    case Collective::ReduceScatter:
      serial([&](int j) { return FlowSpec{everyone, {j}}; });
      return;
    case Collective::AllGather:
      serial([&](int j) { return FlowSpec{{j}, all_but(j)}; });
      return;
    case Collective::Broadcast:
    case Collective::Reduce: {
      const bool reduce = q.collective == Collective::Reduce;
      const int f =
          w.new_flow(reduce ? FlowSpec{everyone, {q.root}} : FlowSpec{{q.root}, all_but(q.root)});
      for (int i = 0; i < n; ++i) w.flow(i, f, {0, 1}, 0);
      return;
    }
    default:
      throw std::invalid_argument(std::string("in_switch does not implement ") +
                                  to_string(q.collective) +
                                  " (an all-to-all is unicasts: direct or pairwise)");
  }
}

void build_chunk(const CollectiveRequest& q, ChunkWriter& w) {
  const int n = q.ranks;
  if (q.algorithm == Algorithm::InSwitch) return in_switch_chunk(q, w);
  const RingPath path = q.algorithm == Algorithm::Ring ? ring_path(q, w.chunk()) : RingPath{};
  auto unsupported = [&]() {
    return std::invalid_argument(std::string(to_string(q.algorithm)) + " does not implement " +
                                 to_string(q.collective));
  };
  switch (q.collective) {
    case Collective::AllReduce:
      switch (q.algorithm) {
        case Algorithm::Ring:
          ring_all_gather(w, path, n, ring_reduce_scatter(w, path, 0));
          return;
        case Algorithm::Direct:
          direct_all_gather(w, n, 1, direct_reduce_scatter(w, n, 0));
          return;
        case Algorithm::HalvingDoubling:
          doubling_all_gather(w, n, 64, halving_reduce_scatter(w, n, 0));
          return;
        case Algorithm::DoubleBinaryTree: {
          std::vector<int> a(n), b(n);
          for (int i = 0; i < n; ++i) a[i] = i, b[i] = n - 1 - i;
          tree_all_reduce(w, a, {0, n / 2}, 0);
          tree_all_reduce(w, b, {n / 2, n - n / 2}, 2);
          return;
        }
        case Algorithm::Pairwise:
        case Algorithm::RouteTree:
        case Algorithm::InSwitch:  // built by in_switch_chunk
          break;
      }
      break;
    case Collective::ReduceScatter:
      switch (q.algorithm) {
        case Algorithm::Ring:
          ring_reduce_scatter(w, path, 0);
          return;
        case Algorithm::Direct:
          direct_reduce_scatter(w, n, 0);
          return;
        case Algorithm::HalvingDoubling:
          halving_reduce_scatter(w, n, 0);
          return;
        default:
          throw unsupported();
      }
    case Collective::AllGather:  // block i is rank i's input
      switch (q.algorithm) {
        case Algorithm::Ring:
          ring_all_gather(w, path, 0, {});
          return;
        case Algorithm::Direct:
          direct_all_gather(w, n, 0, {});
          return;
        case Algorithm::HalvingDoubling:
          doubling_all_gather(w, n, 0, {});
          return;
        default:
          throw unsupported();
      }
    case Collective::AllToAll:  // input block j goes to rank j, into its output block i
      switch (q.algorithm) {
        case Algorithm::Ring:
          ring_relay_all_to_all(w, n);
          return;
        case Algorithm::Pairwise:  // one peer at a time, at growing distance
          for (int i = 0; i < n; ++i) {
            if (!w.holds(i)) continue;
            int64_t prev = -1, prev_recv = -1;
            w.copy_own(i, block(i, n));
            for (int k = 1; k < n; ++k) {
              prev = w.send_from(Buffer::Input, i, mod(i + k, n), block(i + k, n), k, after(prev));
              prev_recv =
                  w.recv_sized(i, mod(i - k, n), block(i - k, n), block(i, n), k, after(prev_recv));
            }
          }
          return;
        case Algorithm::Direct:
          for (int i = 0; i < n; ++i) {
            w.copy_own(i, block(i, n));
            for (int k = 1; k < n; ++k) {
              w.send_from(Buffer::Input, i, mod(i + k, n), block(i + k, n), 0);
              w.recv_sized(i, mod(i - k, n), block(i - k, n), block(i, n), 0);
            }
          }
          return;
        default:
          throw unsupported();
      }
    case Collective::Broadcast:
    case Collective::Reduce: {
      const bool reduce = q.collective == Collective::Reduce;
      const Blocks all{0, 1};
      switch (q.algorithm) {
        case Algorithm::Ring:  // a chain starting after the root (reduce) or at the root
                               // (broadcast)
          for (int i = 0; i < n; ++i) {
            int pos = mod(i - q.root, n);
            int64_t prev = -1;
            if (reduce) {
              if (pos != 1 && n > 1) prev = w.recv(i, mod(i - 1, n), all, 0, {}, true);
              if (pos != 0) w.send(i, mod(i + 1, n), all, 0, after(prev));
            } else {
              if (pos != 0) prev = w.recv(i, mod(i - 1, n), all, 0);
              if (pos != n - 1) w.send(i, mod(i + 1, n), all, 0, after(prev));
            }
          }
          return;
        case Algorithm::Direct:
          for (int j = 0; j < n; ++j) {
            if (j == q.root) continue;
            if (reduce) {
              w.send(j, q.root, all, 0);
              w.recv(q.root, j, all, 0, {}, true);
            } else {
              w.send(q.root, j, all, 0);
              w.recv(j, q.root, all, 0);
            }
          }
          return;
        case Algorithm::RouteTree:
          parent_tree(w, q.tree_parents, reduce, all);
          return;
        default:
          throw unsupported();
      }
    }
    case Collective::Custom:
      break;
  }
  throw unsupported();
}

bool power_of_two(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// Whether every rank runs position 0's plan shifted by its position: the ring algorithms (their
// peers are the next and previous ranks, or a fixed distance away) when every block of every chunk
// has the same size.
bool rotational(const CollectiveRequest& q, int splits) {
  if (q.algorithm != Algorithm::Ring || !q.ring_order.empty() || q.ring_alternates) return false;
  switch (q.collective) {
    case Collective::AllGather:  // each rank's block is comm_size
      return true;
    case Collective::AllReduce:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      for (int c = 0; c < splits; ++c)
        if (share(q.bytes, splits, c) % static_cast<uint64_t>(q.ranks) != 0) return false;
      return true;
    default:  // broadcast and reduce depend on the root
      return false;
  }
}

}  // namespace

void write_group_phase(Plan& plan, const GroupView& group, const CollectiveRequest& q,
                       uint32_t chunk, uint64_t chunk_bytes, const std::vector<int64_t>& gates,
                       Buffer work) {
  if (q.algorithm == Algorithm::HalvingDoubling && !power_of_two(q.ranks))
    throw std::invalid_argument("halving_doubling needs a power-of-two group, got " +
                                std::to_string(q.ranks));
  if (q.algorithm == Algorithm::DoubleBinaryTree && q.collective != Collective::AllReduce)
    throw std::invalid_argument("double_binary_tree implements only all_reduce");
  ChunkWriter writer(plan, chunk, chunk_bytes, work, gates, &group);
  build_chunk(q, writer);
}

Plan build_plan(const CollectiveRequest& q) {
  if (q.ranks < 1) throw std::invalid_argument("a collective needs at least one rank");
  if (q.collective == Collective::Custom)
    throw std::invalid_argument("a custom collective has no built-in algorithm");
  if (q.bytes == 0) throw std::invalid_argument("a collective needs a size above 0 bytes");
  if (q.splits < 1) throw std::invalid_argument("dataset splits must be at least 1");
  if (q.active_chunks < 0) throw std::invalid_argument("active chunks must not be negative");
  // A chunk's closing Nop waits on each rank's last ops (up to 2(n - 1) of them, direct
  // all-to-all), at most RankPlan::kMaxDeps; tags hold the chunk in 16 bits.
  if (q.ranks > 16384) throw std::invalid_argument("at most 16384 ranks per collective");
  if (q.splits > 65535) throw std::invalid_argument("at most 65535 dataset splits per collective");
  if (q.root < 0 || q.root >= q.ranks) throw std::invalid_argument("root outside the communicator");
  if (q.algorithm == Algorithm::RouteTree) {
    if (q.collective != Collective::Broadcast && q.collective != Collective::Reduce)
      throw std::invalid_argument("route_tree implements only broadcast and reduce");
    if (static_cast<int>(q.tree_parents.size()) != q.ranks)
      throw std::invalid_argument("route_tree needs the platform's routes (a parent per rank)");
    for (int p = 0; p < q.ranks; ++p)
      if ((p == q.root) != (q.tree_parents[p] < 0) || q.tree_parents[p] >= q.ranks)
        throw std::invalid_argument("route_tree: position " + std::to_string(p) +
                                    " has no parent inside the group, or the root has one");
  }
  if (q.algorithm == Algorithm::Pairwise && q.collective != Collective::AllToAll)
    throw std::invalid_argument("pairwise implements only all_to_all");
  // Relayed all-to-all tags its n(n - 1) / 2 messages per chunk in 16 bits.
  if (q.algorithm == Algorithm::Ring && q.collective == Collective::AllToAll && q.ranks > 362)
    throw std::invalid_argument(
        "ring all_to_all (relayed around the ring) supports at most 362 ranks; pairwise or direct "
        "send each block straight to its rank");
  if (q.algorithm == Algorithm::HalvingDoubling && !power_of_two(q.ranks))
    throw std::invalid_argument("halving_doubling needs a power-of-two rank count, got " +
                                std::to_string(q.ranks));
  if (!q.ring_order.empty()) {
    std::vector<int> sorted = q.ring_order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < q.ranks; ++i)
      if (sorted.size() != static_cast<size_t>(q.ranks) || sorted[i] != i)
        throw std::invalid_argument("the ring order must list every position once");
  }
  Plan plan;
  plan.algorithm = to_string(q.algorithm);
  plan.ranks.resize(q.ranks);
  if (q.ranks == 1) return plan;  // nothing to exchange

  // Never more chunks than leave every block a byte: the collectives that cut each chunk into one
  // block per rank need `ranks` bytes per chunk (a smaller collective still sends empty blocks).
  const bool blocks_per_rank = q.collective == Collective::AllReduce ||
                               q.collective == Collective::ReduceScatter ||
                               q.collective == Collective::AllToAll;
  const uint64_t min_chunk = blocks_per_rank ? static_cast<uint64_t>(q.ranks) : 1;
  const int splits =
      static_cast<int>(std::min<uint64_t>(q.splits, std::max<uint64_t>(1, q.bytes / min_chunk)));
  if (rotational(q, splits)) {
    plan.ranks.resize(1);
    plan.rotation = q.ranks;
  }
  plan.chunks = static_cast<uint32_t>(splits);
  const uint32_t g =
      blocks_per_rank || q.collective == Collective::AllGather ? static_cast<uint32_t>(q.ranks) : 1;
  plan.blocks_per_chunk = plan.input_blocks = plan.output_blocks = g;
  if (q.collective == Collective::AllGather) plan.input_blocks = 1;
  if (q.collective == Collective::ReduceScatter) plan.output_blocks = 1;
  plan.in_place = q.collective != Collective::AllToAll;
  if (q.collective == Collective::AllToAll && q.algorithm == Algorithm::Ring)
    plan.scratch_blocks = static_cast<uint32_t>((q.ranks - 1) * (q.ranks - 2) / 2);
  const Buffer work = q.collective == Collective::ReduceScatter ? Buffer::Input : Buffer::Output;
  const int held = static_cast<int>(plan.ranks.size());
  std::vector<std::vector<uint32_t>> chunk_end(held);  // per rank: the Nop closing each chunk
  std::vector<int64_t> gates(q.ranks, -1);
  for (int c = 0; c < splits; ++c) {
    std::vector<size_t> first(held);
    for (int r = 0; r < held; ++r) {
      first[r] = plan.ranks[r].ops.size();
      // At most `active_chunks` chunks in flight: this chunk starts when chunk c - A has ended.
      gates[r] = q.active_chunks > 0 && c >= q.active_chunks
                     ? static_cast<int64_t>(chunk_end[r][c - q.active_chunks])
                     : int64_t{-1};
    }
    // All-gather's comm_size is each rank's input: the chunk holds every rank's part of it.
    const uint64_t chunk_bytes =
        share(q.bytes, splits, c) * (q.collective == Collective::AllGather ? q.ranks : 1);
    ChunkWriter writer(plan, static_cast<uint32_t>(c), chunk_bytes, work, gates);
    build_chunk(q, writer);
    // The chunk ends when its sinks (ops nothing else in the chunk waits for) have finished.
    for (int r = 0; r < held; ++r) chunk_end[r].push_back(plan.ranks[r].close(first[r]));
  }
  plan.finish();
  return plan;
}

}  // namespace wafersim::collectives
