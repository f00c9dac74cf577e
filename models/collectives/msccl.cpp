#include "models/collectives/msccl.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace wafersim::collectives::msccl {

namespace {

// Limits that keep tags and op indices in range (tags hold the channel and the message's index on
// its channel in 16 bits each).
constexpr int kMaxGpus = 16384;
constexpr int kMaxChannels = 65536;
constexpr int64_t kMaxMessagesPerChannel = 65536;
constexpr int64_t kMaxChunks = int64_t{1} << 24;

std::invalid_argument problem(const std::string& where, const std::string& what) {
  return std::invalid_argument(where + ": " + what);
}

std::string line_of(int line) {
  return line > 0 ? " (line " + std::to_string(line) + ")" : "";
}

bool sends(const std::string& t) {
  return t == "s" || t == "rcs" || t == "rrs" || t == "rrcs";
}
bool receives(const std::string& t) {
  return t == "r" || t == "rcs" || t == "rrs" || t == "rrc" || t == "rrcs";
}
bool reads_src(const std::string& t) {
  return t == "s" || t == "rrc" || t == "rrs" || t == "rrcs" || t == "cpy" || t == "re";
}
bool writes_dst(const std::string& t) {
  return t == "r" || t == "rrc" || t == "rcs" || t == "rrcs" || t == "cpy" || t == "re";
}
bool known(const std::string& t) {
  return sends(t) || receives(t) || t == "cpy" || t == "re" || t == "nop";
}

Buffer buffer_of(char b) {
  return b == 'i' ? Buffer::Input : b == 'o' ? Buffer::Output : Buffer::Scratch;
}

// The per-rank buffer sizes (blocks) the collective implies for `nchunksperloop` chunks.
struct Shape {
  int64_t input, output, scratch;
  int64_t of(char b) const { return b == 'i' ? input : b == 'o' ? output : scratch; }
};

Shape shape_of(const Algorithm& a, Collective c) {
  const int64_t k = a.nchunksperloop, n = a.ngpus;
  Shape s{k, k, 0};
  for (const Gpu& g : a.gpus) s.scratch = std::max(s.scratch, g.s_chunks);
  auto per_rank = [&]() {
    if (k % n != 0)
      throw problem("algo '" + a.name + "'" + line_of(a.line),
                    coll_name(c) + " over " + std::to_string(n) +
                        " gpus needs nchunksperloop to be a multiple of ngpus, got " +
                        std::to_string(k));
    return k / n;
  };
  switch (c) {
    case Collective::AllGather:
      s.input = per_rank();
      break;
    case Collective::ReduceScatter:
      s.output = per_rank();
      break;
    case Collective::AllToAll:
      per_rank();
      break;
    case Collective::Custom:
      s.input = s.output = 0;
      for (const Gpu& g : a.gpus) {
        s.input = std::max(s.input, g.i_chunks);
        s.output = std::max(s.output, g.o_chunks);
      }
      break;
    default:
      break;
  }
  // Declared sizes must agree with the collective's (0: not declared, as in-place files write).
  for (const Gpu& g : a.gpus)
    for (auto [declared, expected, name] : {std::tuple{g.i_chunks, s.input, "i_chunks"},
                                            std::tuple{g.o_chunks, s.output, "o_chunks"}})
      if (declared != 0 && declared != expected)
        throw problem("gpu " + std::to_string(g.id) + line_of(g.line),
                      std::string(name) + " is " + std::to_string(declared) + " where " +
                          coll_name(c) + " over " + std::to_string(n) + " gpus with " +
                          std::to_string(k) + " chunks per loop has " + std::to_string(expected));
  return s;
}

// A step's address: (gpu, thread block, step).
using StepId = std::tuple<int, int, int>;

// done[][] markers: a step not emitted yet, and a nop folded into the next step.
constexpr int64_t kNotYet = -1;
constexpr int64_t kFolded = -2;

}  // namespace

std::string place(const Gpu& gpu, const ThreadBlock& tb, const Step& step) {
  return "gpu " + std::to_string(gpu.id) + " tb " + std::to_string(tb.id) + " step " +
         std::to_string(step.s) + line_of(step.line);
}

Collective collective_of(const std::string& coll) {
  if (coll == "allreduce") return Collective::AllReduce;
  if (coll == "allgather") return Collective::AllGather;
  if (coll == "reduce_scatter" || coll == "reducescatter") return Collective::ReduceScatter;
  if (coll == "alltoall") return Collective::AllToAll;
  if (coll == "broadcast") return Collective::Broadcast;
  if (coll == "reduce") return Collective::Reduce;
  if (coll == "custom") return Collective::Custom;
  throw std::invalid_argument("unknown coll '" + coll +
                              "' (expected allreduce, allgather, reduce_scatter, alltoall, "
                              "broadcast, reduce or custom)");
}

std::string coll_name(Collective c) {
  // MSCCL writes wafersim's names without the underscore, except reduce_scatter.
  std::string name = to_string(c);
  if (c != Collective::ReduceScatter)
    name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
  return name;
}

Plan to_plan(const Algorithm& a, uint64_t bytes) {
  const std::string algo_place = "algo '" + a.name + "'" + line_of(a.line);
  if (a.ngpus < 1 || a.ngpus > kMaxGpus)
    throw problem(algo_place, "ngpus must be 1 to " + std::to_string(kMaxGpus) + ", got " +
                                  std::to_string(a.ngpus));
  if (a.nchunksperloop < 1 || a.nchunksperloop > kMaxChunks)
    throw problem(algo_place, "nchunksperloop must be 1 to " + std::to_string(kMaxChunks) +
                                  ", got " + std::to_string(a.nchunksperloop));
  if (a.nchannels < 1 || a.nchannels > kMaxChannels)
    throw problem(algo_place, "nchannels must be 1 to " + std::to_string(kMaxChannels) + ", got " +
                                  std::to_string(a.nchannels));
  if (bytes == 0) throw problem(algo_place, "a collective needs a size above 0 bytes");
  const Collective collective = [&]() {
    try {
      return collective_of(a.coll);
    } catch (const std::invalid_argument& e) {
      throw problem(algo_place, e.what());
    }
  }();
  const int n = a.ngpus;
  // GPUs by id, each once.
  std::vector<const Gpu*> gpus(n, nullptr);
  for (const Gpu& g : a.gpus) {
    if (g.id < 0 || g.id >= n)
      throw problem(
          "gpu " + std::to_string(g.id) + line_of(g.line),
          "id outside 0.." + std::to_string(n - 1) + " (ngpus " + std::to_string(n) + ")");
    if (gpus[g.id]) throw problem("gpu " + std::to_string(g.id) + line_of(g.line), "appears twice");
    gpus[g.id] = &g;
  }
  for (int r = 0; r < n; ++r)
    if (!gpus[r]) throw problem(algo_place, "has no gpu " + std::to_string(r));
  const Shape shape = shape_of(a, collective);

  // Thread blocks by id, checked; steps numbered in order.
  std::vector<std::vector<const ThreadBlock*>> tbs(n);
  for (int r = 0; r < n; ++r) {
    const Gpu& g = *gpus[r];
    tbs[r].assign(g.tbs.size(), nullptr);
    std::map<std::pair<int, int>, int> send_lane, recv_lane;  // (peer, chan) -> tb
    for (const ThreadBlock& tb : g.tbs) {
      const std::string where =
          "gpu " + std::to_string(r) + " tb " + std::to_string(tb.id) + line_of(tb.line);
      if (tb.id < 0 || tb.id >= static_cast<int>(g.tbs.size()) || tbs[r][tb.id])
        throw problem(where, "thread block ids must run from 0 without gaps or repeats");
      tbs[r][tb.id] = &tb;
      for (auto [peer, name] : {std::pair{tb.send, "send"}, std::pair{tb.recv, "recv"}})
        if (peer < -1 || peer >= n || peer == r)
          throw problem(where, std::string(name) + " peer " + std::to_string(peer) +
                                   " is not another gpu of 0.." + std::to_string(n - 1));
      if (tb.chan < 0 || tb.chan >= a.nchannels)
        throw problem(where, "chan " + std::to_string(tb.chan) + " outside 0.." +
                                 std::to_string(a.nchannels - 1) + " (nchannels)");
      if (tb.send >= 0 && !send_lane.emplace(std::pair{tb.send, tb.chan}, tb.id).second)
        throw problem(where, "sends to gpu " + std::to_string(tb.send) + " on channel " +
                                 std::to_string(tb.chan) + " like tb " +
                                 std::to_string(send_lane[{tb.send, tb.chan}]));
      if (tb.recv >= 0 && !recv_lane.emplace(std::pair{tb.recv, tb.chan}, tb.id).second)
        throw problem(where, "receives from gpu " + std::to_string(tb.recv) + " on channel " +
                                 std::to_string(tb.chan) + " like tb " +
                                 std::to_string(recv_lane[{tb.recv, tb.chan}]));
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Step& st = tb.steps[k];
        const std::string at = place(g, tb, st);
        if (st.s != static_cast<int>(k))
          throw problem(at, "steps must be numbered 0, 1, 2... in order; expected s=\"" +
                                std::to_string(k) + "\"");
        if (!known(st.type))
          throw problem(at, "unknown step type '" + st.type +
                                "' (expected s, r, rrc, rcs, rrs, rrcs, cpy, re or nop)");
        if (sends(st.type) && tb.send < 0)
          throw problem(at, "'" + st.type + "' sends, but its thread block has send=\"-1\"");
        if (receives(st.type) && tb.recv < 0)
          throw problem(at, "'" + st.type + "' receives, but its thread block has recv=\"-1\"");
        if (st.type == "nop") continue;
        if (st.cnt < 1) throw problem(at, "cnt must be at least 1, got " + std::to_string(st.cnt));
        for (auto [used, buf, off, role] :
             {std::tuple{reads_src(st.type), st.srcbuf, st.srcoff, "src"},
              std::tuple{writes_dst(st.type), st.dstbuf, st.dstoff, "dst"}}) {
          if (!used) continue;
          if (buf != 'i' && buf != 'o' && buf != 's')
            throw problem(at, std::string(role) + "buf must be i, o or s");
          const int64_t size = shape.of(buf);
          if (off < 0 || off + st.cnt > size)
            throw problem(at, std::string(role) + " chunks " + std::to_string(off) + ".." +
                                  std::to_string(off + st.cnt - 1) + " are outside " + role +
                                  "buf '" + std::string(1, buf) + "', which holds " +
                                  std::to_string(size) + " chunks");
        }
      }
    }
    // Cross-block dependencies point at existing steps of another thread block.
    for (const ThreadBlock& tb : g.tbs)
      for (const Step& st : tb.steps) {
        if (st.depid == -1 && st.deps == -1) continue;
        const std::string at = place(g, tb, st);
        if (st.depid < 0 || st.depid >= static_cast<int>(g.tbs.size()))
          throw problem(at, "depends on thread block " + std::to_string(st.depid) + ", which gpu " +
                                std::to_string(r) + " does not have");
        if (st.deps < 0 || st.deps >= static_cast<int>(tbs[r][st.depid]->steps.size()))
          throw problem(at, "depends on step " + std::to_string(st.deps) + " of tb " +
                                std::to_string(st.depid) + ", which does not exist");
      }
  }

  // Bytes: block j of the collective's data (indices of the larger buffer) holds its share of
  // the whole, as the built-in algorithms cut it (the shares add up to the whole); a smaller
  // in-place buffer is rank r's slot of the larger one. Scratch blocks count as block j mod K.
  const uint64_t whole =
      collective == Collective::AllGather ? bytes * static_cast<uint64_t>(n) : bytes;
  const uint64_t per =
      static_cast<uint64_t>(std::max<int64_t>(1, std::max(shape.input, shape.output)));
  auto sized = [&](int r, char buf, int64_t off, int64_t cnt) {
    uint64_t base = 0;
    if (a.inplace && buf == 'i' && shape.input < shape.output)
      base = static_cast<uint64_t>(r) * shape.input;
    if (a.inplace && buf == 'o' && shape.output < shape.input)
      base = static_cast<uint64_t>(r) * shape.output;
    uint64_t total = 0;
    for (int64_t t = 0; t < cnt; ++t)
      total += share(whole, per, (base + static_cast<uint64_t>(off + t)) % per);
    return std::max<uint64_t>(total, 1);
  };
  std::map<StepId, uint32_t> send_tag, recv_tag;
  std::vector<std::pair<StepId, StepId>> pairs;  // (sending step, receiving step)
  for (int r = 0; r < n; ++r)
    for (const ThreadBlock* tb : tbs[r]) {
      if (tb->send < 0) continue;
      const int to = tb->send;
      const ThreadBlock* peer_tb = nullptr;
      for (const ThreadBlock* other : tbs[to])
        if (other->recv == r && other->chan == tb->chan) peer_tb = other;
      std::vector<const Step*> out, in;
      for (const Step& st : tb->steps)
        if (sends(st.type)) out.push_back(&st);
      if (peer_tb)
        for (const Step& st : peer_tb->steps)
          if (receives(st.type)) in.push_back(&st);
      const std::string where =
          "gpu " + std::to_string(r) + " tb " + std::to_string(tb->id) + line_of(tb->line);
      if (out.size() > in.size())
        throw problem(place(*gpus[r], *tb, *out[in.size()]),
                      "sends a message gpu " + std::to_string(to) + " never receives (" +
                          std::to_string(out.size()) + " sends to it on channel " +
                          std::to_string(tb->chan) + ", " + std::to_string(in.size()) +
                          " receives from it there" +
                          (peer_tb ? " in its tb " + std::to_string(peer_tb->id) + ")" : ")"));
      if (in.size() > out.size())
        throw problem(place(*gpus[to], *peer_tb, *in[out.size()]),
                      "receives a message gpu " + std::to_string(r) + " never sends (" +
                          std::to_string(in.size()) + " receives from it on channel " +
                          std::to_string(tb->chan) + ", " + std::to_string(out.size()) +
                          " sends to it there)");
      if (static_cast<int64_t>(out.size()) > kMaxMessagesPerChannel)
        throw problem(where, "more than " + std::to_string(kMaxMessagesPerChannel) +
                                 " messages on one channel");
      for (size_t k = 0; k < out.size(); ++k) {
        if (out[k]->cnt != in[k]->cnt)
          throw problem(place(*gpus[r], *tb, *out[k]), "sends " + std::to_string(out[k]->cnt) +
                                                           " chunks, but its receive " +
                                                           place(*gpus[to], *peer_tb, *in[k]) +
                                                           " takes " + std::to_string(in[k]->cnt));
        const uint32_t tag = (static_cast<uint32_t>(tb->chan) << 16) | static_cast<uint32_t>(k);
        send_tag[{r, tb->id, out[k]->s}] = tag;
        recv_tag[{to, peer_tb->id, in[k]->s}] = tag;
        pairs.push_back({{r, tb->id, out[k]->s}, {to, peer_tb->id, in[k]->s}});
      }
    }
  // A receive whose thread block's peer sends nothing on that channel.
  for (int r = 0; r < n; ++r)
    for (const ThreadBlock* tb : tbs[r])
      for (const Step& st : tb->steps)
        if (receives(st.type) && !recv_tag.count({r, tb->id, st.s}))
          throw problem(place(*gpus[r], *tb, st), "receives from gpu " + std::to_string(tb->recv) +
                                                      " on channel " + std::to_string(tb->chan) +
                                                      ", which sends nothing there");

  // Message sizes: a plain send's from its blocks; a receive takes its sender's; a step that
  // forwards what it received (rcs, rrs, rrcs) sends that size on, so sizes follow the chains.
  std::map<StepId, uint64_t> message_bytes, received_bytes;
  for (int r = 0; r < n; ++r)
    for (const ThreadBlock* tb : tbs[r])
      for (const Step& st : tb->steps)
        if (sends(st.type))
          message_bytes[{r, tb->id, st.s}] =
              st.type == "s" ? sized(r, st.srcbuf, st.srcoff, st.cnt)
                             : sized(r, st.type == "rrs" ? st.srcbuf : st.dstbuf,
                                     st.type == "rrs" ? st.srcoff : st.dstoff, st.cnt);
  for (size_t round = 0, changed = 1; changed && round <= pairs.size(); ++round) {
    changed = 0;
    for (const auto& [from, to] : pairs) {
      const uint64_t b = message_bytes.at(from);
      auto [it, added] = received_bytes.emplace(to, b);
      if (!added && it->second != b) it->second = b, changed = 1;
      if (added) changed = 1;
      auto forward = message_bytes.find(to);
      if (forward != message_bytes.end() && forward->second != b) forward->second = b, changed = 1;
    }
  }

  Plan plan;
  plan.algorithm = "msccl:" + a.name;
  plan.chunks = 1;
  plan.input_blocks = static_cast<uint32_t>(shape.input);
  plan.output_blocks = static_cast<uint32_t>(shape.output);
  plan.scratch_blocks = static_cast<uint32_t>(shape.scratch);
  plan.blocks_per_chunk = std::max(plan.input_blocks, plan.output_blocks);
  plan.in_place = a.inplace;
  plan.ranks.resize(n);
  // Each op's step, for messages about the plan.
  auto origins = std::make_shared<std::vector<std::vector<std::string>>>(n);
  for (int r = 0; r < n; ++r) {
    const Gpu& g = *gpus[r];
    RankPlan& rp = plan.ranks[r];
    // Steps in an order that respects both dependency kinds (Kahn), emitting their ops.
    const size_t t_count = tbs[r].size();
    std::vector<std::vector<int64_t>> done(t_count);      // per step: the op others wait on
    std::vector<std::vector<uint32_t>> carried(t_count);  // what a folded nop waited for
    std::vector<std::vector<int>> pending(t_count);
    // Ready steps, lowest (tb, step) first: the order is deterministic.
    std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>>
        ready;
    std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> cross;
    size_t total = 0;
    for (size_t t = 0; t < t_count; ++t) {
      const auto& steps = tbs[r][t]->steps;
      done[t].assign(steps.size(), kNotYet);
      pending[t].assign(steps.size(), 0);
      total += steps.size();
      for (const Step& st : steps) {
        if (st.s > 0) pending[t][st.s]++;
        if (st.depid >= 0) {
          pending[t][st.s]++;
          cross[{st.depid, st.deps}].push_back({static_cast<int>(t), st.s});
        }
      }
      for (const Step& st : steps)
        if (pending[t][st.s] == 0) ready.push({static_cast<int>(t), st.s});
    }
    size_t emitted = 0;
    while (!ready.empty()) {
      const auto [t, s] = ready.top();
      ready.pop();
      const ThreadBlock& tb = *tbs[r][t];
      const Step& st = tb.steps[s];
      // Dependencies in order, each once: the step before in the thread block (or what a folded
      // nop before it waited for), then the cross-block one.
      std::vector<uint32_t> deps;
      auto depend = [&](uint32_t d) {
        if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
      };
      if (s > 0) {
        if (done[t][s - 1] >= 0)
          depend(static_cast<uint32_t>(done[t][s - 1]));
        else
          for (uint32_t d : carried[t]) depend(d);
      }
      if (st.depid >= 0) depend(static_cast<uint32_t>(done[st.depid][st.deps]));
      const StepId id{r, t, s};
      const uint32_t count = st.type == "nop" ? 0 : static_cast<uint32_t>(st.cnt);
      const auto src = static_cast<uint32_t>(st.srcoff), dst = static_cast<uint32_t>(st.dstoff);
      const Buffer sb = buffer_of(st.srcbuf), db = buffer_of(st.dstbuf);
      int64_t last = -1;
      const std::string& type = st.type;
      if (receives(type)) {
        const uint32_t tag = recv_tag.at({r, t, s});
        const bool reduce = type == "rrc" || type == "rrs" || type == "rrcs";
        const Buffer into = type == "rrs" ? Buffer::Relay : db;
        // Only a combining receive reads a local operand; a plain one names its destination twice
        // (the file's src attributes are placeholders then).
        last = rp.add({OpKind::Recv, tb.recv, received_bytes.at(id), tag}, deps,
                      {0, reduce ? src : dst, dst, count, reduce ? sb : db, into, reduce});
        const uint32_t received = static_cast<uint32_t>(last);
        if (sends(type)) {
          const DataRef forward =
              type == "rrs"
                  ? DataRef{0, received, received, count, Buffer::Relay, Buffer::Relay, false}
                  : DataRef{0, dst, dst, count, db, db, false};
          last = rp.add({OpKind::Send, tb.send, message_bytes.at(id), send_tag.at(id)},
                        {static_cast<uint32_t>(last)}, forward);
        }
      } else if (type == "s") {
        // A send names only its source (its dst attributes are placeholders).
        last = rp.add({OpKind::Send, tb.send, message_bytes.at(id), send_tag.at(id)}, deps,
                      {0, src, src, count, sb, sb, false});
      } else if (type == "cpy") {
        last = rp.add({OpKind::Copy, -1, sized(r, st.srcbuf, st.srcoff, st.cnt), 0}, deps,
                      {0, src, dst, count, sb, db, false});
      } else if (type == "re") {
        last = rp.add({OpKind::Reduce, -1, sized(r, st.srcbuf, st.srcoff, st.cnt), 0}, deps,
                      {0, src, dst, count, sb, db, true});
      } else if (s + 1 < static_cast<int>(tb.steps.size()) && !cross.count({t, s})) {
        // A nop that only carries dependencies to the next step of its thread block (as MSCCL
        // writes extra dependencies): the next step waits for them itself.
        carried[t] = deps;
        last = kFolded;
      } else {
        last = rp.add({OpKind::Nop, -1, 0, 0}, deps);
      }
      done[t][s] = last;
      if (last >= 0) (*origins)[r].resize(rp.ops.size(), place(g, tb, st));
      ++emitted;
      auto release = [&](int tt, int ss) {
        if (--pending[tt][ss] == 0) ready.push({tt, ss});
      };
      if (s + 1 < static_cast<int>(tb.steps.size())) release(t, s + 1);
      auto c = cross.find({t, s});
      if (c != cross.end())
        for (auto [tt, ss] : c->second) release(tt, ss);
    }
    if (emitted != total) {
      // Name a step that never became ready: it sits on a dependency cycle or waits on one.
      for (size_t t = 0; t < t_count; ++t)
        for (const Step& st : tbs[r][t]->steps)
          if (done[t][st.s] == kNotYet)
            throw problem(place(g, *tbs[r][t], st),
                          "never runs: its dependencies form a cycle (through tb " +
                              std::to_string(st.depid >= 0 ? st.depid : static_cast<int>(t)) + ")");
    }
  }
  plan.origin = [origins](int p, uint32_t op) {
    const auto& names = (*origins)[p];
    return op < names.size() ? names[op] : std::string("?");
  };
  try {
    plan.finish();
  } catch (const std::logic_error& e) {
    throw problem(algo_place, e.what());
  }
  return plan;
}

Algorithm from_plan(const Plan& plan, Collective collective, const std::string& name) {
  if (plan.chunks != 1)
    throw std::invalid_argument(
        "MSCCL XML holds one loop of an algorithm: build the plan with "
        "one dataset split, not " +
        std::to_string(plan.chunks));
  const int n = plan.size();
  Algorithm a;
  a.name = name;
  a.coll = coll_name(collective);
  a.ngpus = n;
  a.nchunksperloop = std::max(plan.input_blocks, plan.output_blocks);
  a.inplace = plan.in_place;
  // Channels: the k-th message from a to b (by tag, then op order) travels on channel k.
  std::vector<std::vector<int>> channel(n);
  int channels = 1;
  for (int dir = 0; dir < 2; ++dir)
    for (int p = 0; p < n; ++p) {
      const RankPlan& rp = plan.of(p);
      channel[p].resize(rp.ops.size(), 0);
      const OpKind kind = dir == 0 ? OpKind::Send : OpKind::Recv;
      std::map<int, std::vector<std::pair<uint32_t, uint32_t>>> by_peer;  // peer -> (tag, op)
      for (uint32_t k = 0; k < rp.ops.size(); ++k)
        if (rp.ops[k].kind == kind)
          by_peer[plan.peer_of(p, rp.ops[k])].push_back({rp.ops[k].tag, k});
      for (auto& [peer, list] : by_peer) {
        std::sort(list.begin(), list.end());
        for (size_t i = 0; i < list.size(); ++i) channel[p][list[i].second] = static_cast<int>(i);
        channels = std::max(channels, static_cast<int>(list.size()));
      }
    }
  a.nchannels = channels;
  auto buffer_char = [](Buffer b) {
    return b == Buffer::Input ? 'i' : b == Buffer::Output ? 'o' : 's';
  };
  for (int p = 0; p < n; ++p) {
    const RankPlan& rp = plan.of(p);
    Gpu g;
    g.id = p;
    g.i_chunks = plan.input_blocks;
    g.o_chunks = plan.output_blocks;
    // Relays become scratch blocks after the plan's own: the receive's op -> its block.
    std::map<uint32_t, int64_t> relay_block;
    int64_t scratch = plan.scratch_blocks;
    for (uint32_t k = 0; k < rp.ops.size(); ++k)
      if (rp.ops[k].kind == OpKind::Recv && rp.data[k].dst == Buffer::Relay) {
        relay_block[k] = scratch;
        scratch += rp.data[k].count;
      }
    g.s_chunks = scratch;
    // (buffer, first block) of a DataRef side, absolute and checked not to wrap.
    auto side = [&](uint32_t k, Buffer b, uint32_t first) -> std::pair<char, int64_t> {
      const DataRef& d = rp.data[k];
      if (b == Buffer::Relay) {
        const uint32_t from = rp.ops[k].kind == OpKind::Recv ? k : first;
        return {'s', relay_block.at(from)};
      }
      if (d.src_runs.strided() || d.dst_runs.strided())
        throw std::invalid_argument("position " + std::to_string(p) + " op " + std::to_string(k) +
                                    " names blocks in strided runs (a hierarchical all-to-all): "
                                    "MSCCL steps name contiguous chunks");
      const uint32_t size = plan.blocks_in(b);
      const uint32_t start = plan.absolute_first(p, b, d.chunk, first, d.count);
      if (d.count > 0 && start + static_cast<uint64_t>(d.count) > size)
        throw std::invalid_argument("position " + std::to_string(p) + " op " + std::to_string(k) +
                                    " names blocks that wrap around its " + to_string(b) +
                                    ": MSCCL steps name contiguous chunks");
      return {buffer_char(b), start};
    };
    for (uint32_t k = 0; k < rp.ops.size(); ++k) {
      const Op& op = rp.ops[k];
      const DataRef& d = rp.data[k];
      ThreadBlock tb;
      tb.id = static_cast<int>(k);
      tb.chan = 0;
      Step main;
      main.cnt = d.count;
      switch (op.kind) {
        case OpKind::Send:
          main.type = "s";
          tb.send = plan.peer_of(p, op);
          tb.chan = channel[p][k];
          break;
        case OpKind::Recv:
          main.type = d.reduce ? "rrc" : "r";
          tb.recv = plan.peer_of(p, op);
          tb.chan = channel[p][k];
          break;
        case OpKind::Copy:
          main.type = "cpy";
          break;
        case OpKind::Flow:
          throw std::invalid_argument("position " + std::to_string(p) + " op " + std::to_string(k) +
                                      " is an in-network flow (in_switch): MSCCL has no step for "
                                      "a reduction or multicast in the network");
        case OpKind::Reduce:
          if (d.count == 0)
            throw std::invalid_argument("position " + std::to_string(p) + " op " +
                                        std::to_string(k) +
                                        " is a reduction's time without its data (from a Chakra "
                                        "graph): MSCCL has no step for it");
          main.type = "re";
          break;
        case OpKind::Compute:
          throw std::invalid_argument("position " + std::to_string(p) + " op " + std::to_string(k) +
                                      " is compute of a fixed duration (from a Chakra graph): "
                                      "MSCCL has no step for it");
        case OpKind::Nop:
          main.type = "nop";
          break;
      }
      if (main.type != "nop") {
        std::tie(main.srcbuf, main.srcoff) = side(k, d.src, d.src_first);
        std::tie(main.dstbuf, main.dstoff) = side(k, d.dst, d.dst_first);
      } else {
        main.srcoff = main.dstoff = -1;
        main.cnt = 0;
      }
      // Dependencies: all but the last on nop steps before the main one, the last on it.
      const DepRange deps = rp.deps(k);
      for (size_t i = 0; i < deps.size(); ++i) {
        Step& step = i + 1 < deps.size() ? tb.steps.emplace_back() : main;
        if (&step != &main) {
          step.type = "nop";
          step.srcoff = step.dstoff = -1;
          step.cnt = 0;
        }
        step.depid = static_cast<int>(deps[i]);
        step.deps = -1;  // filled below, once every thread block's length is known
      }
      tb.steps.push_back(main);
      for (size_t s = 0; s < tb.steps.size(); ++s) tb.steps[s].s = static_cast<int>(s);
      g.tbs.push_back(std::move(tb));
    }
    // A dependency names the last step of the depended-on op's thread block; mark those.
    for (ThreadBlock& tb : g.tbs)
      for (Step& st : tb.steps)
        if (st.depid >= 0) {
          ThreadBlock& target = g.tbs[st.depid];
          st.deps = static_cast<int>(target.steps.size()) - 1;
          target.steps.back().hasdep = true;
        }
    a.gpus.push_back(std::move(g));
  }
  return a;
}

}  // namespace wafersim::collectives::msccl
