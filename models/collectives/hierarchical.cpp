#include "models/collectives/hierarchical.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace wafersim::collectives {

const char* to_string(DimensionOrder order) {
  switch (order) {
    case DimensionOrder::AllReduceEach:
      return "all_reduce_each";
    case DimensionOrder::Ascending:
      return "ascending";
    case DimensionOrder::Themis:
      return "themis";
  }
  return "?";
}

const char* to_string(QueuePolicy policy) {
  return policy == QueuePolicy::Fifo ? "fifo" : "scf";
}

const char* to_string(QueueScheduler scheduler) {
  return scheduler == QueueScheduler::Planned ? "planned" : "runtime";
}

const char* to_string(CollectivePriority priority) {
  return priority == CollectivePriority::Fifo ? "fifo" : "lifo";
}

namespace {

double bytes_per_second(const DimensionGroup& d) {
  return d.bandwidth_gbps * 1e9;
}

// Bytes one NPU sends in a phase: a reduce-scatter of S sends S (n - 1) / n, an all-gather that
// starts from S sends S (n - 1), an all-reduce both of a reduce-scatter's.
double phase_traffic(const Phase& p, int n) {
  const double s = static_cast<double>(p.bytes);
  switch (p.collective) {
    case Collective::ReduceScatter:
      return s * (n - 1) / n;
    case Collective::AllGather:
      return s * (n - 1);
    case Collective::AllToAll:
      return s * (n - 1) / n;
    default:
      return 2 * s * (n - 1) / n;
  }
}

}  // namespace

int lanes(const DimensionGroup& d) {
  return d.algorithm == Algorithm::Ring && d.size > 2 ? 2 : 1;
}

int slots(const DimensionGroup& d) {
  return d.active_chunks > 0 ? d.active_chunks : lanes(d);
}

namespace {

// What a dimension can deliver with its chunks in flight: a ring with one chunk at a time uses one
// direction, half its bandwidth. Themis's loads are weighed by it, or it would send chunks to a
// ring first for a bandwidth the ring cannot give them (4d_ring_switch_switch_switch at 64 NPUs:
// utilisation 43% against 77% with this weight).
double usable_bytes_per_second(const DimensionGroup& d) {
  return bytes_per_second(d) * std::min(slots(d), lanes(d)) / lanes(d);
}

}  // namespace

std::vector<int> themis_order(const std::vector<DimensionGroup>& dims, std::vector<double>& loads,
                              uint64_t chunk_bytes, int halves) {
  const int count = static_cast<int>(dims.size());
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  // Dimensions of one NPU carry nothing and keep their place.
  std::vector<int> active;
  for (int d : order)
    if (dims[d].size > 1) active.push_back(d);
  if (active.size() > 1) {
    // Loads are compared in whole picoseconds: sums of the same traffic in another order differ
    // in their last bits, and that noise must not reorder dimensions whose loads are equal.
    auto picoseconds = [&](int d) { return std::llround(loads[d] * 1e12); };
    std::vector<int> by_load = active;
    std::stable_sort(by_load.begin(), by_load.end(),
                     [&](int a, int b) { return picoseconds(a) < picoseconds(b); });
    // The bytes the least-loaded dimension could reduce-scatter in the gap to the most loaded one:
    // below a sixteenth of the chunk, the gap is noise and the default order stays.
    const int least = by_load.front(), most = by_load.back();
    const DimensionGroup& d = dims[least];
    const double gap_bytes = (loads[most] - loads[least]) * usable_bytes_per_second(d) /
                             (static_cast<double>(d.size - 1) / d.size);
    if (gap_bytes >= static_cast<double>(chunk_bytes) / 16) {
      size_t k = 0;
      for (int& slot : order)
        if (dims[slot].size > 1) slot = by_load[k++];
    }
  }
  double s = static_cast<double>(chunk_bytes);
  for (int d : order) {
    const int n = dims[d].size;
    if (n <= 1) continue;
    // Its reduce-scatter sends s (n - 1) / n, its all-gather (from s / n) as much again.
    loads[d] += halves * s * (n - 1) / n / usable_bytes_per_second(dims[d]);
    s /= n;
  }
  return order;
}

Schedule schedule_collective(const HierarchicalRequest& q) {
  const int count = static_cast<int>(q.dims.size());
  Schedule schedule;
  schedule.served.resize(count);
  std::vector<double> loads(count, 0.0);
  // The model sees every chunk at the mean size: chunks a byte apart (a size the splits do not
  // divide) would otherwise decide ties between equally loaded dimensions, and SCF's choice
  // between chunks, on that byte (the 0.20 GiB all-reduce on 4d_ring_fc_ring_switch reached 57%
  // utilisation, against 75% now). The plan still moves each chunk's own bytes.
  const uint64_t chunk = std::max<uint64_t>(1, q.bytes / static_cast<uint64_t>(q.splits));
  const bool all_reduce = q.collective == Collective::AllReduce;
  for (int c = 0; c < q.splits; ++c) {
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    // An all-reduce counts both halves; a reduce-scatter or an all-gather (which visits the order
    // backwards, the most loaded dimension first) one, as ASTRA-sim's OfflineGreedy does.
    if (q.order == DimensionOrder::Themis && q.collective != Collective::AllToAll)
      order = themis_order(q.dims, loads, chunk, all_reduce ? 2 : 1);
    std::vector<Phase> phases;
    if (all_reduce && q.order == DimensionOrder::AllReduceEach) {
      for (int d : order)
        if (q.dims[d].size > 1) phases.push_back({Collective::AllReduce, d, chunk});
    } else if (q.collective == Collective::AllToAll) {
      // Every phase moves the whole chunk, a share of it to each peer of the dimension.
      for (int d : order)
        if (q.dims[d].size > 1) phases.push_back({Collective::AllToAll, d, chunk});
    } else {
      // The reduce-scatter half shrinks the data by each size, the all-gather half grows it back.
      uint64_t s = chunk;
      for (int d : order)
        if (q.dims[d].size > 1) {
          if (q.collective != Collective::AllGather)
            phases.push_back({Collective::ReduceScatter, d, s});
          s /= static_cast<uint64_t>(q.dims[d].size);
        }
      for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (q.dims[*it].size > 1) {
          if (q.collective != Collective::ReduceScatter)
            phases.push_back({Collective::AllGather, *it, s});
          s *= static_cast<uint64_t>(q.dims[*it].size);
        }
    }
    schedule.chunks.push_back(std::move(phases));
  }
  // Each dimension serves one phase at a time; a chunk's next phase is ready when its previous one
  // ends. Among the phases ready when a dimension frees up it takes the one that became ready
  // first (FIFO) or the smallest (SCF), ties to the lower chunk.
  struct Waiting {
    double ready;
    int chunk;
    int phase;
  };
  // One server per dimension and slot (each with its share of the bandwidth; on a ring, a slot
  // has at most one direction's half).
  std::vector<int> first_server(count + 1, 0);
  for (int d = 0; d < count; ++d) first_server[d + 1] = first_server[d] + slots(q.dims[d]);
  const int servers = first_server[count];
  auto server_of = [&](int d, int c) { return first_server[d] + c % slots(q.dims[d]); };
  std::vector<std::vector<Waiting>> queue(servers);
  std::vector<double> free_at(servers, 0.0);
  for (int c = 0; c < q.splits; ++c)
    if (!schedule.chunks[c].empty())
      queue[server_of(schedule.chunks[c][0].dim, c)].push_back({0.0, c, 0});
  for (;;) {
    int server = -1;
    double start = std::numeric_limits<double>::infinity();
    for (int k = 0; k < servers; ++k) {
      if (queue[k].empty()) continue;
      double first_ready = std::numeric_limits<double>::infinity();
      for (const Waiting& w : queue[k]) first_ready = std::min(first_ready, w.ready);
      const double t = std::max(free_at[k], first_ready);
      if (t < start) start = t, server = k;
    }
    if (server < 0) break;
    auto& waiting = queue[server];
    auto better = [&](const Waiting& a, const Waiting& b) {
      if (q.policy == QueuePolicy::SmallestChunkFirst) {
        const uint64_t sa = schedule.chunks[a.chunk][a.phase].bytes;
        const uint64_t sb = schedule.chunks[b.chunk][b.phase].bytes;
        if (sa != sb) return sa < sb;
      }
      if (a.ready != b.ready) return a.ready < b.ready;
      return a.chunk < b.chunk;
    };
    auto pick = waiting.end();
    for (auto it = waiting.begin(); it != waiting.end(); ++it)
      if (it->ready <= start && (pick == waiting.end() || better(*it, *pick))) pick = it;
    const Waiting w = *pick;
    waiting.erase(pick);
    const Phase& p = schedule.chunks[w.chunk][w.phase];
    const DimensionGroup& dim = q.dims[p.dim];
    const double share = bytes_per_second(dim) / std::max(slots(dim), lanes(dim));
    const double end = start + phase_traffic(p, dim.size) / share;
    free_at[server] = end;
    schedule.served[p.dim].push_back({w.chunk, w.phase});
    if (w.phase + 1 < static_cast<int>(schedule.chunks[w.chunk].size())) {
      const int next_dim = schedule.chunks[w.chunk][w.phase + 1].dim;
      queue[server_of(next_dim, w.chunk)].push_back({end, w.chunk, w.phase + 1});
    }
  }
  return schedule;
}

namespace {

// A hierarchical all-to-all's data between phases. Block (s, t) of a chunk goes from rank s to
// rank t and holds share(chunk bytes, n, t) bytes. Once the dimensions marked `done` have run,
// a rank holds the blocks whose destinations share its coordinates in them and whose sources share
// its coordinates in the others, numbered by the digits [destination digits of the dimensions
// still to run][source digits of those done], each part highest dimension first. Before the first
// phase that is the input (block t goes to t), after the last the output (block s came from s).
// A phase over dimension d sends each peer the blocks whose destination digit d is the peer's, and
// files what arrives from a peer as the blocks whose source digit d is the peer's: both strided
// sets, enumerated in the same order, so no message needs unpacking.
class AllToAllStage {
 public:
  AllToAllStage(const std::vector<DimensionGroup>& dims, const std::vector<int>& stride,
                std::vector<bool> done)
      : dims_(dims), stride_(stride), done_(std::move(done)) {
    for (const DimensionGroup& d : dims_) ranks_ *= static_cast<uint32_t>(d.size);
  }

  // The weight of dimension d's destination digit (d still to run) before it runs, and of its
  // source digit once it has run (counting d as done).
  uint32_t destination_weight(int d) const {
    uint32_t w = 1;
    for (size_t i = 0; i < dims_.size(); ++i)
      if (done_[i] || static_cast<int>(i) < d) w *= static_cast<uint32_t>(dims_[i].size);
    return w;
  }
  uint32_t source_weight(int d) const {
    uint32_t w = 1;
    for (int i = 0; i < d; ++i)
      if (done_[i]) w *= static_cast<uint32_t>(dims_[i].size);
    return w;
  }

  // The blocks whose digit of weight `weight` in dimension d is `value`: a ref side's first block
  // and runs.
  std::pair<uint32_t, Runs> digit_set(int d, uint32_t weight, int value) const {
    const uint32_t count = ranks_ / static_cast<uint32_t>(dims_[d].size);
    const Runs runs = weight == count ? Runs{}
                                      : Runs{static_cast<uint16_t>(weight),
                                             static_cast<uint16_t>(weight * dims_[d].size)};
    return {static_cast<uint32_t>(value) * weight, runs};
  }

  // The bytes of the blocks rank `r` holds whose destination digit d is `value`, in a chunk of
  // `chunk_bytes`: those of every destination t with t's coordinates of the done dimensions
  // r's and t's coordinate d `value`, once per source the done dimensions hold.
  uint64_t bytes(int r, int d, int value, uint64_t chunk_bytes) const {
    uint64_t sources = 1, destinations = 1;
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (done_[i])
        sources *= static_cast<uint64_t>(dims_[i].size);
      else if (static_cast<int>(i) != d)
        destinations *= static_cast<uint64_t>(dims_[i].size);
    }
    // share(): the first chunk_bytes mod n destinations carry a byte more.
    const uint64_t larger = below(r, d, value, chunk_bytes % ranks_);
    return sources * (destinations * (chunk_bytes / ranks_) + larger);
  }

 private:
  // How many of those destinations are below `limit`: digit by digit from the highest dimension,
  // a fixed digit under the limit's admits every value of the free digits below it.
  uint64_t below(int r, int d, int value, uint64_t limit) const {
    uint64_t count = 0;
    for (int i = static_cast<int>(dims_.size()) - 1; i >= 0; --i) {
      const uint64_t n = static_cast<uint64_t>(dims_[i].size);
      const uint64_t digit = limit / static_cast<uint64_t>(stride_[i]) % n;
      uint64_t free_below = 1;
      for (int k = 0; k < i; ++k)
        if (!done_[k] && k != d) free_below *= static_cast<uint64_t>(dims_[k].size);
      const bool fixed = done_[i] || i == d;
      if (!fixed) {
        count += digit * free_below;
        continue;
      }
      const uint64_t f = i == d ? static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(r / stride_[i] % dims_[i].size);
      if (f < digit) return count + free_below;
      if (f > digit) return count;
    }
    return count;
  }

  const std::vector<DimensionGroup>& dims_;
  const std::vector<int>& stride_;
  const std::vector<bool> done_;
  uint32_t ranks_ = 1;
};

// One all-to-all phase over dimension d for the group `members` (coordinate i of d at members[i]),
// from buffer `from` into `to`: each rank sends every peer its share (all at once with direct,
// one peer at a time at growing distance with pairwise) and copies its own share across.
void write_all_to_all_phase(Plan& plan, const AllToAllStage& stage, const std::vector<int>& members,
                            int d, Algorithm algorithm, uint32_t chunk, uint64_t chunk_bytes,
                            Buffer from, Buffer to, uint32_t tag,
                            const std::vector<int64_t>& gates) {
  const int n = static_cast<int>(members.size());
  const uint32_t count = plan.blocks_per_chunk / static_cast<uint32_t>(n);
  const uint32_t sent_weight = stage.destination_weight(d);
  const uint32_t kept_weight = stage.source_weight(d);
  for (int i = 0; i < n; ++i) {
    const int r = members[i];
    RankPlan& rp = plan.ranks[r];
    auto after = [&](int64_t previous) {
      if (previous >= 0) return std::vector<uint32_t>{static_cast<uint32_t>(previous)};
      if (gates[r] >= 0) return std::vector<uint32_t>{static_cast<uint32_t>(gates[r])};
      return std::vector<uint32_t>{};
    };
    // The blocks whose destination digit is `sent_to` (in `from`) and whose source digit is
    // `came_from` (in `to`); a send names only its source, a receive only its destination.
    auto source = [&](int sent_to) { return stage.digit_set(d, sent_weight, sent_to); };
    auto destination = [&](int came_from) { return stage.digit_set(d, kept_weight, came_from); };
    auto ref = [&](Buffer src, std::pair<uint32_t, Runs> read, Buffer dst,
                   std::pair<uint32_t, Runs> written) {
      DataRef data{chunk, read.first, written.first, count, src, dst, false};
      data.src_runs = read.second;
      data.dst_runs = written.second;
      return data;
    };
    rp.add({OpKind::Copy, -1, stage.bytes(r, d, i, chunk_bytes), 0}, after(-1),
           ref(from, source(i), to, destination(i)));
    int64_t sent = -1, received = -1;
    const bool chained = algorithm == Algorithm::Pairwise;
    for (int k = 1; k < n; ++k) {
      const int to_peer = (i + k) % n, from_peer = (i - k + n) % n;
      const int64_t send =
          rp.add({OpKind::Send, members[to_peer], stage.bytes(r, d, to_peer, chunk_bytes), tag},
                 after(chained ? sent : -1), ref(from, source(to_peer), from, source(to_peer)));
      const int64_t recv =
          rp.add({OpKind::Recv, members[from_peer], stage.bytes(r, d, i, chunk_bytes), tag},
                 after(chained ? received : -1),
                 ref(to, destination(from_peer), to, destination(from_peer)));
      sent = send, received = recv;
    }
  }
}

}  // namespace

Plan build_hierarchical(const HierarchicalRequest& q) {
  if (q.collective != Collective::AllReduce && q.collective != Collective::ReduceScatter &&
      q.collective != Collective::AllGather && q.collective != Collective::AllToAll)
    throw std::invalid_argument(std::string("no hierarchical ") + to_string(q.collective));
  if (q.dims.empty()) throw std::invalid_argument("a hierarchical collective needs dimensions");
  if (q.bytes == 0) throw std::invalid_argument("a collective needs a size above 0 bytes");
  if (q.splits < 1) throw std::invalid_argument("dataset splits must be at least 1");
  if (q.splits > 65535) throw std::invalid_argument("at most 65535 dataset splits per collective");
  int ranks = 1, span = 0;
  for (const DimensionGroup& d : q.dims) {
    if (d.size < 1) throw std::invalid_argument("a dimension needs at least one NPU");
    if (!(d.bandwidth_gbps > 0)) throw std::invalid_argument("a dimension needs a bandwidth");
    if (d.active_chunks < 0) throw std::invalid_argument("active chunks must not be negative");
    ranks *= d.size;
    // Tags a phase may use: a ring all-reduce's 2(n - 1) steps, halving-doubling's 64 + log n.
    span = std::max(span, 2 * d.size + 80);
  }
  if (ranks > 16384) throw std::invalid_argument("at most 16384 ranks per collective");
  // Each dimension's algorithm must serve the phases it will run, on its group's size: said here,
  // naming the dimension, rather than from deep inside the first phase that fails.
  for (size_t d = 0; d < q.dims.size(); ++d) {
    // The phases it will run: an all-reduce's two halves, or the collective itself.
    std::vector<Collective> kinds = {q.collective};
    if (q.collective == Collective::AllReduce && q.order != DimensionOrder::AllReduceEach)
      kinds = {Collective::ReduceScatter, Collective::AllGather};
    // An all-to-all phase is written here (the data is transposed phase by phase), as a direct or
    // pairwise exchange.
    if (q.collective == Collective::AllToAll && q.dims[d].size > 1 &&
        q.dims[d].algorithm != Algorithm::Direct && q.dims[d].algorithm != Algorithm::Pairwise)
      throw std::invalid_argument("dimension " + std::to_string(d) +
                                  ": a hierarchical all_to_all exchanges directly or pairwise "
                                  "within a dimension, not with " +
                                  to_string(q.dims[d].algorithm));
    for (Collective kind : kinds) {
      CollectiveRequest probe;
      probe.collective = kind;
      probe.algorithm = q.dims[d].algorithm;
      probe.ranks = q.dims[d].size;
      probe.bytes = static_cast<uint64_t>(q.dims[d].size);
      try {
        if (probe.ranks > 1) build_plan(probe);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("dimension " + std::to_string(d) + " (" +
                                    std::to_string(q.dims[d].size) + " NPUs): " + e.what());
      }
    }
  }
  HierarchicalRequest request = q;
  // Every block of every chunk holds a byte at least.
  request.splits = static_cast<int>(
      std::min<uint64_t>(static_cast<uint64_t>(q.splits), std::max<uint64_t>(1, q.bytes / ranks)));
  const Schedule schedule = schedule_collective(request);
  const bool all_reduce = q.collective == Collective::AllReduce;

  Plan plan;
  std::string algorithms;
  for (const DimensionGroup& d : q.dims)
    algorithms += (algorithms.empty() ? "" : ",") + std::string(to_string(d.algorithm));
  plan.algorithm = std::string("hierarchical(") + algorithms + ";" + to_string(q.order) + "," +
                   (q.runtime_queues ? "runtime" : to_string(q.policy)) + ")";
  plan.chunks = static_cast<uint32_t>(request.splits);
  plan.blocks_per_chunk = plan.input_blocks = plan.output_blocks = static_cast<uint32_t>(ranks);
  if (q.collective == Collective::AllGather) plan.input_blocks = 1;
  if (q.collective == Collective::ReduceScatter) plan.output_blocks = 1;
  // The buffer that holds the whole chunk: a reduce-scatter's input, the others' output.
  const Buffer work = q.collective == Collective::ReduceScatter ? Buffer::Input : Buffer::Output;
  const bool all_to_all = q.collective == Collective::AllToAll;
  plan.in_place = !all_to_all;
  plan.ranks.resize(ranks);
  if (ranks == 1) return plan;
  // An all-to-all's phases go from the input through the output and the scratch in turn, the
  // last into the output.
  auto all_to_all_buffer = [&](size_t c, int p) {
    const int last = static_cast<int>(schedule.chunks[c].size()) - 1;
    return (last - p) % 2 == 0 ? Buffer::Output : Buffer::Scratch;
  };
  if (all_to_all)
    for (const auto& phases : schedule.chunks)
      if (phases.size() > 1) plan.scratch_blocks = static_cast<uint32_t>(ranks);

  const int count = static_cast<int>(q.dims.size());
  std::vector<int> stride(count, 1);
  for (int d = 1; d < count; ++d) stride[d] = stride[d - 1] * q.dims[d - 1].size;
  auto coordinate = [&](int r, int d) { return r / stride[d] % q.dims[d].size; };
  // A ring dimension runs odd chunks the other way round (ASTRA-sim's queues alternate directions
  // too), so both directions of its links carry traffic. A rank's place in a phase's group: its
  // coordinate, counted from the other end on a reversed ring.
  auto reversed = [&](size_t c, int d) { return lanes(q.dims[d]) == 2 && c % 2 == 1; };
  auto place = [&](int r, int d, size_t c) {
    return reversed(c, d) ? q.dims[d].size - 1 - coordinate(r, d) : coordinate(r, d);
  };
  // Per chunk, the dimensions from the most significant digit of its block numbering down: the
  // reduce-scatter's order, or the reverse of the all-gather's. A phase's group works on the
  // blocks whose digits of the dimensions before its own are the rank's places there.
  std::vector<std::vector<int>> digits(schedule.chunks.size());
  for (size_t c = 0; c < schedule.chunks.size(); ++c) {
    for (const Phase& p : schedule.chunks[c])
      if (p.collective == Collective::ReduceScatter) digits[c].push_back(p.dim);
    if (q.collective == Collective::AllGather) {
      for (const Phase& p : schedule.chunks[c]) digits[c].push_back(p.dim);
      std::reverse(digits[c].begin(), digits[c].end());
    }
  }
  // Where each rank's share sits (Plan::slot_order): the number its places make, digit by digit.
  if (!all_reduce && !all_to_all) {
    plan.slot_order.resize(schedule.chunks.size() * static_cast<size_t>(ranks));
    for (size_t c = 0; c < schedule.chunks.size(); ++c)
      for (int r = 0; r < ranks; ++r) {
        uint32_t position = 0;
        for (int d : digits[c])
          position = position * static_cast<uint32_t>(q.dims[d].size) +
                     static_cast<uint32_t>(place(r, d, c));
        plan.slot_order[c * static_cast<size_t>(ranks) + position] = static_cast<uint32_t>(r);
      }
  }
  // Position 0's ops stand for every position's when each dimension's algorithm treats its places
  // alike (Plan::symmetry); blocks of unequal sizes are sized where they run (Plan::bytes_of).
  bool symmetric = q.share_positions && !all_to_all && q.order != DimensionOrder::AllReduceEach;
  for (const DimensionGroup& d : q.dims)
    if (d.size > 1 && d.algorithm != Algorithm::Ring && d.algorithm != Algorithm::Direct &&
        d.algorithm != Algorithm::HalvingDoubling)
      symmetric = false;
  if (symmetric) {
    Symmetry& sym = plan.symmetry;
    sym.positions = ranks;
    for (int d = 0; d < count; ++d) {
      sym.sizes.push_back(q.dims[d].size);
      sym.strides.push_back(stride[d]);
      sym.by_xor.push_back(q.dims[d].algorithm == Algorithm::HalvingDoubling);
    }
    for (size_t c = 0; c < schedule.chunks.size(); ++c) {
      sym.digits.emplace_back();
      for (int d : digits[c])
        sym.digits.back().push_back({static_cast<uint16_t>(d), reversed(c, d)});
    }
    std::vector<uint64_t> chunk_bytes;
    bool even = true;
    for (size_t c = 0; c < schedule.chunks.size(); ++c) {
      chunk_bytes.push_back(share(request.bytes, request.splits, c));
      even = even && chunk_bytes.back() % static_cast<uint64_t>(ranks) == 0;
    }
    if (!even) sym.uneven_chunk_bytes = std::move(chunk_bytes);
    plan.ranks.resize(1);
  }
  // The positions whose ops the plan holds: all, or position 0 alone.
  const int held = static_cast<int>(plan.ranks.size());
  size_t most_phases = 0;
  for (const auto& phases : schedule.chunks) most_phases = std::max(most_phases, phases.size());
  if (most_phases * static_cast<size_t>(span) >= 65536)
    throw std::invalid_argument("the dimensions are too large for one chunk's tags");

  // Writes phase p of chunk c, over every group of its dimension; an op without dependencies
  // waits for its rank's gate.
  auto write_phase = [&](size_t c, int p, const std::vector<int64_t>& gates) {
    const Phase& phase = schedule.chunks[c][p];
    const int d = phase.dim, n = q.dims[d].size;
    const uint64_t chunk_bytes = share(request.bytes, request.splits, c);
    const uint32_t tag_offset = static_cast<uint32_t>(p * span);
    // One group per set of the other dimensions' coordinates: the ranks at coordinate 0 of d
    // stand for them.
    // (Position 0 alone when it stands for all.)
    std::vector<int> group_bases;
    for (int r = 0; r < ranks; ++r)
      if (coordinate(r, d) == 0 && (held == ranks || r == 0)) group_bases.push_back(r);
    if (phase.collective == Collective::AllToAll) {
      std::vector<bool> done(count, false);
      for (int earlier = 0; earlier < p; ++earlier) done[schedule.chunks[c][earlier].dim] = true;
      const AllToAllStage stage(q.dims, stride, done);
      const Buffer from = p == 0 ? Buffer::Input : all_to_all_buffer(c, p - 1);
      for (int r : group_bases) {
        std::vector<int> members;
        for (int i = 0; i < n; ++i) members.push_back(r + i * stride[d]);
        write_all_to_all_phase(plan, stage, members, d, q.dims[d].algorithm,
                               static_cast<uint32_t>(c), chunk_bytes, from, all_to_all_buffer(c, p),
                               (static_cast<uint32_t>(c) << 16) + tag_offset, gates);
      }
      return;
    }
    // The blocks this phase works on: the chunk's blocks are numbered with its digits, so every
    // phase's range is contiguous. A rank's range: fixed by its places in the dimensions of the
    // digits before this phase's.
    std::vector<int> before;  // digits before this phase's dimension
    if (phase.collective != Collective::AllReduce)
      for (int other : digits[c]) {
        if (other == d) break;
        before.push_back(other);
      }
    CollectiveRequest sub;
    sub.collective = phase.collective;
    sub.algorithm = q.dims[d].algorithm;
    sub.ranks = n;
    for (int r : group_bases) {
      GroupView group;
      uint32_t base = 0, size = static_cast<uint32_t>(ranks);
      for (int b : before) {
        size /= static_cast<uint32_t>(q.dims[b].size);
        base += static_cast<uint32_t>(place(r, b, c)) * size;
      }
      group.base = base;
      group.scale = size / static_cast<uint32_t>(n);
      group.tag_offset = tag_offset;
      for (int i = 0; i < n; ++i)
        group.members.push_back(r + (reversed(c, d) ? n - 1 - i : i) * stride[d]);
      write_group_phase(plan, group, sub, static_cast<uint32_t>(c), chunk_bytes, gates, work);
    }
  };

  // Per chunk and phase, per rank: the op that closes it (a Nop after its last ops).
  std::vector<std::vector<std::vector<int64_t>>> ends(schedule.chunks.size());
  for (size_t c = 0; c < schedule.chunks.size(); ++c)
    ends[c].assign(schedule.chunks[c].size(), std::vector<int64_t>(held, -1));
  // Phases are written in each dimension's service order, interleaved so that every phase's
  // predecessors (its chunk's previous phase, the previous phase in its slot of the dimension) are
  // written before it.
  std::vector<size_t> next(count, 0);
  // Per dimension and slot, the last phase written (chunk -1: none yet).
  std::vector<std::vector<std::pair<int, int>>> slot_last(count);
  for (int d = 0; d < count; ++d) slot_last[d].assign(slots(q.dims[d]), {-1, 0});
  size_t written = 0, total = 0;
  for (const auto& phases : schedule.chunks) total += phases.size();
  while (written < total) {
    bool progressed = false;
    for (int d = 0; d < count; ++d) {
      while (next[d] < schedule.served[d].size()) {
        const auto [c, p] = schedule.served[d][next[d]];
        if (p > 0 && ends[c][p - 1][0] < 0) break;  // its chunk's previous phase is not written
        // This phase's waits, per rank: its chunk's previous phase, and (with a limit of chunks
        // in flight) the phase before it in its slot of this dimension.
        // (Built for the runtime scheduler, a phase waits only for its chunk's previous one,
        // through a gate of its own that the scheduler opens: RankPlan::phases.)
        const size_t slot_index = static_cast<size_t>(c) % slot_last[d].size();
        auto& slot = slot_last[d][slot_index];
        const bool limited = !q.runtime_queues && q.dims[d].active_chunks > 0 && slot.first >= 0;
        std::vector<int64_t> gates(ranks, -1);
        std::vector<size_t> first(held);
        for (int r = 0; r < held; ++r) {
          std::vector<uint32_t> waits;
          if (p > 0) waits.push_back(static_cast<uint32_t>(ends[c][p - 1][r]));
          if (limited) waits.push_back(static_cast<uint32_t>(ends[slot.first][slot.second][r]));
          if (q.runtime_queues || waits.size() > 1)
            gates[r] = plan.ranks[r].add({OpKind::Nop, -1, 0, 0}, waits);
          else if (waits.size() == 1)
            gates[r] = waits[0];
          // A gate of its own belongs to the phase (closing waits for it if nothing else does).
          first[r] = q.runtime_queues ? static_cast<size_t>(gates[r]) : plan.ranks[r].ops.size();
        }
        write_phase(c, p, gates);
        // The phase ends, on each rank, when its ops nothing else in it waits for have finished.
        // (A rank with no ops in it, outside every group, passes its gate on.)
        for (int r = 0; r < held; ++r) {
          ends[c][p][r] = plan.ranks[r].close(first[r], gates[r]);
          if (q.runtime_queues)
            plan.ranks[r].phases.push_back(
                {static_cast<uint32_t>(gates[r]), static_cast<uint32_t>(ends[c][p][r]),
                 static_cast<uint32_t>(c), static_cast<uint16_t>(d),
                 static_cast<uint16_t>(slot_index), q.dims[d].active_chunks > 0,
                 schedule.chunks[c][p].bytes});
        }
        slot = {static_cast<int>(c), p};
        ++next[d];
        ++written;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("hierarchical schedule: phases wait on each other");
  }
  plan.finish();
  return plan;
}

double ideal_seconds(Collective collective, const std::vector<DimensionGroup>& dims,
                     uint64_t bytes) {
  double ranks = 1;
  for (const DimensionGroup& d : dims) ranks *= d.size;
  double traffic = 0, bandwidth = 0;
  double s = collective == Collective::AllGather ? static_cast<double>(bytes) * ranks
                                                 : static_cast<double>(bytes);
  for (const DimensionGroup& d : dims) {
    if (d.size <= 1) continue;
    bandwidth += bytes_per_second(d);
    const double share = static_cast<double>(d.size - 1) / d.size;
    switch (collective) {
      case Collective::AllReduce:
        traffic += 2 * s * share;
        s /= d.size;
        break;
      case Collective::ReduceScatter:
      case Collective::AllGather:
        traffic += s * share;
        s /= d.size;
        break;
      case Collective::AllToAll:
        traffic += s * share;
        break;
      default:  // broadcast, reduce: every NPU receives (or sends) the buffer once
        traffic = s;
        break;
    }
  }
  return bandwidth > 0 ? traffic / bandwidth : 0;
}

}  // namespace wafersim::collectives
