#include "models/collectives/plan.h"

#include <algorithm>
#include <iterator>
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
    case OpKind::Flow:
      return "flow";
  }
  return "?";
}

bool FlowSpec::has_input(int p) const {
  return std::binary_search(inputs.begin(), inputs.end(), p);
}

bool FlowSpec::has_output(int p) const {
  return std::binary_search(outputs.begin(), outputs.end(), p);
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

size_t RankPlan::phase_of_tag(uint32_t tag) const {
  const auto after = std::upper_bound(phase_tag_starts.begin(), phase_tag_starts.end(), tag);
  if (after == phase_tag_starts.begin()) return phases.size();
  const uint32_t phase = phases_by_tag[static_cast<size_t>(after - phase_tag_starts.begin()) - 1];
  return tag <= phases[phase].last_tag ? phase : phases.size();
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

int Symmetry::move(int p, int g) const {
  int moved = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int a = coordinate(p, d), b = coordinate(g, d);
    moved += (by_xor[d] ? a ^ b : (a + b) % sizes[d]) * strides[d];
  }
  return moved;
}

int Symmetry::inverse(int g) const {
  int inverse = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int b = coordinate(g, d);
    inverse += (by_xor[d] ? b : (sizes[d] - b) % sizes[d]) * strides[d];
  }
  return inverse;
}

namespace {

// Digit value v (< n) seen from coordinate c (< n) of its dimension: exclusive or, or a turn of
// the ring by c one way or the other (the modulo of a sum below 2n as a subtraction).
uint32_t moved_digit(uint32_t v, uint32_t c, uint32_t n, bool by_xor, bool backwards) {
  if (by_xor) return v ^ c;
  if (backwards) return v >= c ? v - c : v + n - c;
  return v + c >= n ? v + c - n : v + c;
}

}  // namespace

uint32_t Symmetry::move_digit(int p, BlockDigit digit, uint32_t v) const {
  return moved_digit(v, static_cast<uint32_t>(coordinate(p, digit.dim)),
                     static_cast<uint32_t>(sizes[digit.dim]), by_xor[digit.dim], digit.backwards);
}

uint32_t Symmetry::move_digits(int p, uint32_t chunk, uint32_t j, size_t count) const {
  const std::vector<BlockDigit>& number = digits[chunk];
  uint32_t moved = 0, weight = 1;
  for (size_t i = 0; i < count; ++i) {
    const BlockDigit digit = number[number.size() - 1 - i];
    const auto n = static_cast<uint32_t>(sizes[digit.dim]);
    moved += move_digit(p, digit, j % n) * weight;
    j /= n;
    weight *= n;
  }
  return moved;
}

uint32_t Symmetry::move_block(int p, uint32_t chunk, uint32_t j) const {
  return move_digits(p, chunk, j, digits[chunk].size());
}

void Symmetry::move_blocks(int p, uint32_t chunk, std::vector<uint32_t>& blocks) const {
  const std::vector<BlockDigit>& number = digits[chunk];
  // Per digit, least significant first: its base, p's coordinate and how it moves.
  struct Digit {
    uint32_t n, c;
    bool by_xor, backwards;
  };
  constexpr size_t kMaxDigits = 16;
  if (number.size() > kMaxDigits) {
    for (uint32_t& j : blocks) j = move_block(p, chunk, j);
    return;
  }
  Digit moves[kMaxDigits];
  const size_t count = number.size();
  for (size_t i = 0; i < count; ++i) {
    const BlockDigit digit = number[count - 1 - i];
    moves[i] = {static_cast<uint32_t>(sizes[digit.dim]),
                static_cast<uint32_t>(coordinate(p, digit.dim)),
                static_cast<bool>(by_xor[digit.dim]), digit.backwards};
  }
  // Ops name runs of consecutive blocks: the next block's digits come from the last one's as on an
  // odometer (the least significant turns, carrying over), without a division per digit.
  uint32_t value[kMaxDigits], part[kMaxDigits];  // per digit: its value, its moved value x weight
  uint32_t last = 0, moved = 0;
  bool first = true;
  for (uint32_t& j : blocks) {
    const uint32_t block = j;
    if (!first && block == last + 1 && count > 0 && value[0] + 1 < moves[0].n) {
      // (Most steps turn the least significant digit alone, whose weight is 1.)
      const Digit& d = moves[0];
      const uint32_t turned = moved_digit(++value[0], d.c, d.n, d.by_xor, d.backwards);
      moved += turned - part[0];
      part[0] = turned;
    } else if (!first && block == last + 1) {
      uint32_t weight = 1;
      for (size_t i = 0; i < count; ++i) {
        const Digit& d = moves[i];
        const bool carry = ++value[i] == d.n;
        if (carry) value[i] = 0;
        moved -= part[i];
        part[i] = moved_digit(value[i], d.c, d.n, d.by_xor, d.backwards) * weight;
        moved += part[i];
        if (!carry) break;
        weight *= d.n;
      }
    } else {
      uint32_t weight = 1, rest = block;
      moved = 0;
      for (size_t i = 0; i < count; ++i) {
        const Digit& d = moves[i];
        value[i] = rest % d.n;
        part[i] = moved_digit(value[i], d.c, d.n, d.by_xor, d.backwards) * weight;
        moved += part[i];
        rest /= d.n;
        weight *= d.n;
      }
    }
    first = false;
    last = block;
    j = moved;
  }
}

uint32_t Plan::absolute_first(int p, Buffer b, uint32_t chunk, uint32_t first,
                              uint32_t count) const {
  if (symmetry.positions == 0 || blocks_in(b) != blocks_per_chunk || count == 0)
    return absolute_block(p, b, chunk, first);
  uint32_t low = UINT32_MAX, high = 0;
  for (uint32_t t = 0; t < count; ++t) {
    const uint32_t j = absolute_block(p, b, chunk, (first + t) % blocks_per_chunk);
    low = std::min(low, j);
    high = std::max(high, j);
  }
  if (high - low + 1 != count)
    throw std::logic_error("position " + std::to_string(p) + " names " + std::to_string(count) +
                           " blocks from block " + std::to_string(first) + " of chunk " +
                           std::to_string(chunk) + " that are not in a row once moved");
  return low;
}

namespace {

// How many of the values [start, start + length) taken modulo n (a range that may wrap round) are
// below `limit` (0 <= limit <= n).
uint64_t below(uint64_t start, uint64_t length, uint64_t n, uint64_t limit) {
  const uint64_t end = start + length;
  if (end <= n) return limit > start ? std::min(end, limit) - start : 0;
  return (limit > start ? limit - start : 0) + std::min(end - n, limit);
}

}  // namespace

uint64_t Plan::moved_bytes(int p, uint32_t k) const {
  const Op& op = ranks[0].ops[k];
  const DataRef& d = ranks[0].data[k];
  if (op.kind != OpKind::Send && op.kind != OpKind::Recv) return op.bytes;
  const uint32_t blocks = blocks_per_chunk;
  if (blocks_in(d.src) != blocks || d.count == 0) return op.bytes;
  const uint64_t chunk = symmetry.uneven_chunk_bytes[d.chunk];
  const uint64_t extra = chunk % blocks;  // blocks below it hold a byte more
  const uint64_t bytes = chunk / blocks * d.count;
  // The range's lowest digits that it covers whole (`low` of them, `whole` blocks): moving only
  // permutes them, so each stretch of `whole` blocks stays a stretch, at the place its upper digits
  // move to.
  const std::vector<BlockDigit>& number = symmetry.digits[d.chunk];
  uint32_t whole = 1;
  size_t low = 0;
  for (; low < number.size(); ++low) {
    const uint32_t wider =
        whole * static_cast<uint32_t>(symmetry.sizes[number[number.size() - 1 - low].dim]);
    if (d.src_first % wider != 0 || d.count % wider != 0) break;
    whole = wider;
  }
  // What the plans name: stretches that differ in one digit only (the next one up), over values
  // [x, x + m) that a ring or direct step moves to a range round the digit's values, and a
  // halving-doubling step (an aligned block of a power of two) to another aligned block. Then the
  // stretches below `extra` are counted, not visited.
  const uint32_t stretches = d.count / whole;
  if (low < number.size()) {
    const BlockDigit digit = number[number.size() - 1 - low];
    const auto n = static_cast<uint32_t>(symmetry.sizes[digit.dim]);
    const uint32_t x = d.src_first / whole % n, m = stretches;
    const bool aligned = (m & (m - 1)) == 0 && x % m == 0;
    if (x + m <= n && (!symmetry.by_xor[digit.dim] || aligned)) {
      // The digits above it are the same for every stretch: where they move to.
      const uint64_t above = symmetry.move_block(p, d.chunk, d.src_first) / whole / n *
                             static_cast<uint64_t>(n) * whole;
      // Where the stretches' digit values start once moved (an aligned block stays aligned).
      const uint32_t align = symmetry.by_xor[digit.dim] ? m : 1;
      const uint64_t first = symmetry.move_digit(p, digit, x) / align * align;
      if (extra <= above) return bytes;
      const uint64_t e = extra - above;
      if (e >= static_cast<uint64_t>(n) * whole) return bytes + d.count;
      const uint64_t full = e / whole, rest = e % whole;
      // Stretches wholly below `extra`, and the one it cuts (if the range has it).
      return bytes + whole * below(first, m, n, full) +
             rest * (below(first, m, n, full + 1) - below(first, m, n, full));
    }
  }
  uint64_t extras = 0;
  for (uint32_t s = d.src_first; s < d.src_first + d.count; s += whole) {
    const uint64_t start = symmetry.move_block(p, d.chunk, s % blocks) / whole * whole;
    if (start < extra) extras += std::min<uint64_t>(whole, extra - start);
  }
  return bytes + extras;
}

uint64_t Plan::bytes_sent() const {
  // Position 0's sends times the positions when it stands for all, unless their sizes differ.
  const bool each = !held_once() || !symmetry.uneven_chunk_bytes.empty();
  uint64_t total = 0;
  for (int p = 0; p < (each ? size() : 1); ++p)
    for (uint32_t k = 0; k < of(p).ops.size(); ++k)
      if (of(p).ops[k].kind == OpKind::Send) total += bytes_of(p, k);
  return each ? total : total * static_cast<uint64_t>(size());
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
    rp.roots.clear();
    for (uint32_t k = 0; k < n; ++k)
      if (rp.ops[k].dep_count == 0) rp.roots.push_back(k);
    // Each phase's gate and close, its tags, and the phases in their order.
    rp.phases_by_tag.clear();
    rp.phase_tag_starts.clear();
    rp.phase_marks.assign(rp.phases.empty() ? 0 : n, static_cast<uint32_t>(rp.phases.size()));
    for (uint32_t i = 0; i < rp.phases.size(); ++i) {
      PhaseGate& g = rp.phases[i];
      rp.phase_marks[g.gate] = rp.phase_marks[g.close] = i;
      for (uint32_t k = g.gate; k <= g.close; ++k)
        if (rp.ops[k].kind == OpKind::Send || rp.ops[k].kind == OpKind::Recv) {
          g.first_tag = std::min(g.first_tag, rp.ops[k].tag);
          g.last_tag = std::max(g.last_tag, rp.ops[k].tag);
        }
      if (g.first_tag <= g.last_tag) rp.phases_by_tag.push_back(i);
    }
    std::sort(rp.phases_by_tag.begin(), rp.phases_by_tag.end(), [&](uint32_t a, uint32_t b) {
      return rp.phases[a].first_tag < rp.phases[b].first_tag;
    });
    for (size_t j = 0; j < rp.phases_by_tag.size(); ++j) {
      if (j > 0 &&
          rp.phases[rp.phases_by_tag[j]].first_tag <= rp.phases[rp.phases_by_tag[j - 1]].last_tag)
        throw std::logic_error("two phases of a plan share message tags");
      rp.phase_tag_starts.push_back(rp.phases[rp.phases_by_tag[j]].first_tag);
    }
  }
}

void Plan::validate_flows() const {
  if (flows.empty()) return;
  if (held_once()) throw std::logic_error("a plan with flows must hold every position's ops");
  const std::string flow = "flow ";
  for (size_t f = 0; f < flows.size(); ++f)
    for (const std::vector<int>* list : {&flows[f].inputs, &flows[f].outputs})
      if (std::adjacent_find(list->begin(), list->end(), std::greater_equal<int>()) != list->end())
        throw std::logic_error(flow + std::to_string(f) +
                               " lists its inputs or outputs out of ascending order or twice");
  std::vector<std::vector<int>> ops_of(flows.size());  // per flow, the positions with an op on it
  std::vector<uint64_t> bytes(flows.size(), 0);
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (size_t i = 0; i < ranks[r].ops.size(); ++i) {
      const Op& op = ranks[r].ops[i];
      if (op.kind != OpKind::Flow) continue;
      const std::string where = "rank " + std::to_string(r) + " op " + std::to_string(i);
      if (op.peer < 0 || op.peer >= static_cast<int>(flows.size()))
        throw std::logic_error(where + " names flow " + std::to_string(op.peer) + " of " +
                               std::to_string(flows.size()));
      const FlowSpec& f = flows[op.peer];
      if (!f.has_input(r) && !f.has_output(r))
        throw std::logic_error(where + " takes part in " + flow + std::to_string(op.peer) +
                               ", which neither takes from nor gives to it");
      if (!ops_of[op.peer].empty() && bytes[op.peer] != op.bytes)
        throw std::logic_error(where + " moves " + std::to_string(op.bytes) + " bytes in " + flow +
                               std::to_string(op.peer) + ", another member " +
                               std::to_string(bytes[op.peer]));
      bytes[op.peer] = op.bytes;
      ops_of[op.peer].push_back(r);
    }
  const int n = size();
  for (size_t f = 0; f < flows.size(); ++f) {
    const std::string name = flow + std::to_string(f);
    if (flows[f].inputs.empty() || flows[f].outputs.empty())
      throw std::logic_error(name + " needs at least one input and one output");
    std::vector<int> members = flows[f].inputs;
    members.insert(members.end(), flows[f].outputs.begin(), flows[f].outputs.end());
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    for (int p : members)
      if (p < 0 || p >= n)
        throw std::logic_error(name + " names position " + std::to_string(p) + " of " +
                               std::to_string(n));
    std::vector<int>& have = ops_of[f];
    std::sort(have.begin(), have.end());
    for (size_t k = 0; k < have.size(); ++k)
      if (k > 0 && have[k] == have[k - 1])
        throw std::logic_error("rank " + std::to_string(have[k]) + " has two ops in " + name);
    for (int p : members)
      if (!std::binary_search(have.begin(), have.end(), p))
        throw std::logic_error("rank " + std::to_string(p) + " has no op in " + name +
                               ", of which it is a member");
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
  // A rotational or symmetric plan's position 0 stands for all: its send to g must meet position
  // g's receive from 0, which is position 0's receive from the inverse of g, moved by g.
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
        // (A symmetric plan of uneven blocks: the receive is position g's, sized there.)
        if (op.kind == OpKind::Send)
          sends.push_back({r, op.peer, op.tag, bytes_of(r, static_cast<uint32_t>(i))});
        else if (rotation > 0)
          recvs.push_back({0, (n - op.peer) % n, op.tag, op.bytes});
        else if (symmetry.positions > 0)
          recvs.push_back({0, symmetry.inverse(op.peer), op.tag,
                           bytes_of(symmetry.inverse(op.peer), static_cast<uint32_t>(i))});
        else
          recvs.push_back({op.peer, r, op.tag, op.bytes});
      }
    }
  }
  validate_flows();
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
