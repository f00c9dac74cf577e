#include "tb/collectives/chakra_graph.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "models/common/error.h"
#include "tb/chakra/trace.h"
#include "tb/chakra/workload.h"

namespace wafersim::tb {

using chakra::NodeKind;
using chakra::TraceNode;
using collectives::Buffer;
using collectives::DataRef;
using collectives::Op;
using collectives::OpKind;

namespace {

constexpr int kMaxRanks = 16384;
constexpr size_t kDataFields = 7;
// Then, for an op that names strided blocks (a hierarchical all-to-all): src run, src every, dst
// run, dst every (collectives::Runs).
constexpr size_t kRunsFields = 4;

std::string node_item(const TraceNode& n) {
  return "node " + std::to_string(n.id) + " ('" + n.name + "')";
}

// The nodes of one trace in dependency order (data and control), ties by node id.
std::vector<const TraceNode*> ordered(const chakra::Trace& t) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (!index.emplace(t.nodes[i].id, i).second)
      throw InputError(t.file, node_item(t.nodes[i]), "node id appears twice");
  std::vector<std::vector<size_t>> children(t.nodes.size());
  std::vector<size_t> waiting(t.nodes.size(), 0);
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    std::set<uint64_t> deps(t.nodes[i].data_deps.begin(), t.nodes[i].data_deps.end());
    deps.insert(t.nodes[i].ctrl_deps.begin(), t.nodes[i].ctrl_deps.end());
    for (uint64_t d : deps) {
      auto it = index.find(d);
      if (it == index.end())
        throw InputError(t.file, node_item(t.nodes[i]),
                         "depends on node " + std::to_string(d) + ", which the file does not hold");
      children[it->second].push_back(i);
      waiting[i]++;
    }
  }
  using Item = std::pair<uint64_t, size_t>;  // (id, index)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (waiting[i] == 0) ready.push({t.nodes[i].id, i});
  std::vector<const TraceNode*> order;
  while (!ready.empty()) {
    const size_t i = ready.top().second;
    ready.pop();
    order.push_back(&t.nodes[i]);
    for (size_t c : children[i])
      if (--waiting[c] == 0) ready.push({t.nodes[c].id, c});
  }
  if (order.size() != t.nodes.size())
    for (size_t i = 0; i < t.nodes.size(); ++i)
      if (waiting[i] > 0)
        throw InputError(t.file, node_item(t.nodes[i]),
                         "never runs: its dependencies form a cycle");
  return order;
}

int peer_of(const chakra::Trace& t, const TraceNode& n, const std::optional<int64_t>& peer,
            const char* name, int rank, int ranks) {
  if (!peer) throw InputError(t.file, node_item(n), std::string("has no ") + name + " attribute");
  if (*peer < 0 || *peer >= ranks || *peer == rank)
    throw InputError(t.file, node_item(n),
                     std::string(name) + " " + std::to_string(*peer) +
                         " is not another rank of 0.." + std::to_string(ranks - 1) +
                         " (the graph has " + std::to_string(ranks) + " files)");
  return static_cast<int>(*peer);
}

uint64_t size_of(const chakra::Trace& t, const TraceNode& n) {
  if (!n.comm_size) throw InputError(t.file, node_item(n), "has no comm_size attribute");
  if (*n.comm_size == 0) throw InputError(t.file, node_item(n), "comm_size is 0");
  return *n.comm_size;
}

DataRef data_of(const chakra::Trace& t, const TraceNode& n) {
  const auto& v = n.data_ref;
  if (v.size() != kDataFields && v.size() != kDataFields + kRunsFields)
    throw InputError(t.file, node_item(n),
                     "wafersim_data holds " + std::to_string(v.size()) + " values, expected " +
                         std::to_string(kDataFields) + " (or " +
                         std::to_string(kDataFields + kRunsFields) + " with strided runs)");
  for (size_t k : {1u, 3u})
    if (v[k] < 0 || v[k] > static_cast<int64_t>(Buffer::Relay))
      throw InputError(t.file, node_item(n), "wafersim_data names an unknown buffer");
  for (size_t k : {0u, 2u, 4u, 5u})
    if (v[k] < 0 || v[k] > UINT32_MAX)
      throw InputError(t.file, node_item(n), "wafersim_data holds a value out of range");
  for (size_t k = kDataFields; k < v.size(); ++k)
    if (v[k] < 0 || v[k] > UINT16_MAX)
      throw InputError(t.file, node_item(n), "wafersim_data holds a run out of range");
  DataRef d{static_cast<uint32_t>(v[0]),
            static_cast<uint32_t>(v[2]),
            static_cast<uint32_t>(v[4]),
            static_cast<uint32_t>(v[5]),
            static_cast<Buffer>(v[1]),
            static_cast<Buffer>(v[3]),
            v[6] != 0};
  if (v.size() > kDataFields) {
    auto run = [&](size_t k) { return static_cast<uint16_t>(v[k]); };
    d.src_runs = {run(7), run(8)};
    d.dst_runs = {run(9), run(10)};
  }
  return d;
}

}  // namespace

ChakraCollective read_chakra_collective(const std::string& prefix) {
  std::vector<chakra::Trace> traces;
  for (int r = 0; r <= kMaxRanks; ++r) {
    const std::string path = chakra::trace_path(prefix, r);
    if (path.empty()) break;
    if (r == kMaxRanks)
      throw InputError(prefix, "", "more than " + std::to_string(kMaxRanks) + " rank files");
    traces.push_back(chakra::read_trace(path));
  }
  if (traces.empty())
    throw InputError(prefix + ".0.et", "",
                     "no such file: a Chakra collective graph needs "
                     "<prefix>.<rank>.et files from rank 0 on");
  const int n = static_cast<int>(traces.size());
  ChakraCollective out;
  collectives::Plan& plan = out.plan;
  plan.algorithm = "chakra:" + prefix.substr(prefix.find_last_of('/') + 1);
  plan.ranks.resize(n);
  // The shape a wafersim-written graph records.
  const auto& shape = traces[0].plan_shape;
  out.data_known = shape.size() == 7;
  if (out.data_known) {
    if (shape[0] < 0 || shape[0] > static_cast<int64_t>(collectives::Collective::Custom))
      throw InputError(traces[0].file, "metadata wafersim_plan", "unknown collective");
    for (size_t k = 1; k < 6; ++k)
      if (shape[k] < 0 || shape[k] > UINT32_MAX)
        throw InputError(traces[0].file, "metadata wafersim_plan", "a value out of range");
    out.collective = static_cast<collectives::Collective>(shape[0]);
    plan.chunks = static_cast<uint32_t>(shape[1]);
    plan.blocks_per_chunk = static_cast<uint32_t>(shape[2]);
    plan.input_blocks = static_cast<uint32_t>(shape[3]);
    plan.output_blocks = static_cast<uint32_t>(shape[4]);
    plan.scratch_blocks = static_cast<uint32_t>(shape[5]);
    plan.in_place = shape[6] != 0;
  }
  // Messages: the k-th of (from, to, comm_tag) gets one plan tag, the same at both ends: the
  // comm_tag itself when no pair of ranks uses it twice (graphs wafersim writes), else a count.
  using Key = std::tuple<int, int, int64_t, uint32_t>;
  std::map<Key, std::pair<int, const TraceNode*>> unreceived;  // the sends, until received
  std::vector<std::vector<const TraceNode*>> orders(n);
  bool tags_unique = true;
  for (int r = 0; r < n; ++r) {
    orders[r] = ordered(traces[r]);
    std::map<std::tuple<int, int64_t>, uint32_t> sent;
    for (const TraceNode* node : orders[r])
      if (node->kind == NodeKind::Send) {
        const int to = peer_of(traces[r], *node, node->comm_dst, "comm_dst", r, n);
        const int64_t tag = node->comm_tag.value_or(0);
        const uint32_t k = sent[{to, tag}]++;
        tags_unique = tags_unique && k == 0 && tag >= 0 && tag <= UINT32_MAX;
        unreceived[{r, to, tag, k}] = {r, node};
      }
  }
  std::map<Key, uint32_t> tags;
  std::unordered_map<const TraceNode*, uint32_t> send_tag;
  std::map<std::pair<int, int>, uint32_t> next_tag;
  for (const auto& [key, where] : unreceived) {
    const uint32_t tag = tags_unique ? static_cast<uint32_t>(std::get<2>(key))
                                     : next_tag[{std::get<0>(key), std::get<1>(key)}]++;
    tags[key] = send_tag[where.second] = tag;
  }
  for (int r = 0; r < n; ++r) {
    const chakra::Trace& t = traces[r];
    collectives::RankPlan& rp = plan.ranks[r];
    std::unordered_map<uint64_t, uint32_t> op_of;  // node id -> op index
    std::map<std::tuple<int, int64_t>, uint32_t> received;
    for (const TraceNode* node : orders[r]) {
      std::vector<uint32_t> deps;  // in the file's order, each once
      for (auto list : {&node->data_deps, &node->ctrl_deps})
        for (uint64_t d : *list)
          if (std::find(deps.begin(), deps.end(), op_of.at(d)) == deps.end())
            deps.push_back(op_of.at(d));
      Op op;
      switch (node->kind) {
        case NodeKind::Send: {
          const int to = peer_of(t, *node, node->comm_dst, "comm_dst", r, n);
          op = {OpKind::Send, to, size_of(t, *node), send_tag.at(node)};
          break;
        }
        case NodeKind::Recv: {
          const int from = peer_of(t, *node, node->comm_src, "comm_src", r, n);
          const int64_t tag = node->comm_tag.value_or(0);
          const Key key{from, r, tag, received[{from, tag}]++};
          auto it = tags.find(key);
          if (it == tags.end())
            throw InputError(t.file, node_item(*node),
                             "receives message " + std::to_string(std::get<3>(key) + 1) +
                                 " with comm_tag " + std::to_string(tag) + " from rank " +
                                 std::to_string(from) + ", which rank " + std::to_string(from) +
                                 " never sends");
          unreceived.erase(key);
          op = {OpKind::Recv, from, size_of(t, *node), it->second};
          break;
        }
        case NodeKind::Compute:
          if (node->tensor_size)
            op = {OpKind::Reduce, -1, *node->tensor_size, 0};
          else if (node->duration_micros > 0)
            op = {OpKind::Compute, -1, node->duration_micros * 1000000, 0};
          else
            op = {OpKind::Nop, -1, 0, 0};
          break;
        case NodeKind::MemLoad:
        case NodeKind::MemStore:
          op = {OpKind::Copy, -1, node->tensor_size.value_or(0), 0};
          break;
        default:
          throw InputError(t.file, node_item(*node),
                           std::string("a ") + chakra::to_string(node->kind) +
                               " has no place in a collective graph (expected COMM_SEND, "
                               "COMM_RECV, COMP or MEM nodes)");
      }
      if (node->duration_micros > UINT64_MAX / 1000000)
        throw InputError(t.file, node_item(*node), "duration_micros is too large");
      DataRef data;
      if (out.data_known && !node->data_ref.empty()) data = data_of(t, *node);
      try {
        op_of[node->id] = rp.add(op, deps, data);
      } catch (const std::invalid_argument& e) {
        throw InputError(t.file, node_item(*node), e.what());
      }
    }
  }
  if (!unreceived.empty()) {
    const auto& [key, where] = *unreceived.begin();
    throw InputError(traces[where.first].file, node_item(*where.second),
                     "sends to rank " + std::to_string(std::get<1>(key)) + " with comm_tag " +
                         std::to_string(std::get<2>(key)) + " a message rank " +
                         std::to_string(std::get<1>(key)) + " never receives");
  }
  try {
    plan.finish();
  } catch (const std::logic_error& e) {
    throw InputError(prefix, "", e.what());
  }
  return out;
}

void write_chakra_collective(const collectives::Plan& plan, collectives::Collective collective,
                             const std::string& prefix) {
  const int n = plan.size();
  for (int p = 0; p < n; ++p) {
    chakra::Trace t;
    t.version = "1.0.0";
    t.plan_shape = {static_cast<int64_t>(collective),
                    plan.chunks,
                    plan.blocks_per_chunk,
                    plan.input_blocks,
                    plan.output_blocks,
                    plan.scratch_blocks,
                    plan.in_place ? 1 : 0};
    const collectives::RankPlan& rp = plan.of(p);
    for (uint32_t k = 0; k < rp.ops.size(); ++k) {
      const Op& op = rp.ops[k];
      TraceNode node;
      node.id = k;
      node.name = std::string(collectives::to_string(op.kind)) + "_" + std::to_string(k);
      for (uint32_t d : rp.deps(k)) node.data_deps.push_back(d);
      switch (op.kind) {
        case OpKind::Send:
          node.kind = NodeKind::Send;
          node.comm_dst = plan.peer_of(p, op);
          node.comm_src = p;
          break;
        case OpKind::Recv:
          node.kind = NodeKind::Recv;
          node.comm_src = plan.peer_of(p, op);
          node.comm_dst = p;
          break;
        case OpKind::Reduce:
          node.kind = NodeKind::Compute;
          node.tensor_size = op.bytes;
          break;
        case OpKind::Copy:
          node.kind = NodeKind::MemStore;
          node.tensor_size = op.bytes;
          break;
        case OpKind::Compute:
          node.kind = NodeKind::Compute;
          node.duration_micros = op.bytes / 1000000;
          break;
        case OpKind::Nop:
          node.kind = NodeKind::Compute;
          break;
        case OpKind::Flow:
          throw std::invalid_argument("position " + std::to_string(p) + " op " + std::to_string(k) +
                                      " is an in-network flow (in_switch): a Chakra collective "
                                      "graph has no node for a reduction in the network");
      }
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        node.comm_size = plan.bytes_of(p, k);
        node.comm_tag = op.tag;
      }
      const DataRef& d = rp.data[k];
      // A rotational or symmetric plan's ranges move with the position; written out, they are
      // absolute.
      auto absolute = [&](Buffer b, uint32_t first) -> int64_t {
        return plan.absolute_first(p, b, d.chunk, first, d.count);
      };
      node.data_ref = {d.chunk,
                       static_cast<int64_t>(d.src),
                       absolute(d.src, d.src_first),
                       static_cast<int64_t>(d.dst),
                       absolute(d.dst, d.dst_first),
                       d.count,
                       d.reduce ? 1 : 0};
      if (d.src_runs.strided() || d.dst_runs.strided())
        node.data_ref.insert(node.data_ref.end(),
                             {d.src_runs.run, d.src_runs.every, d.dst_runs.run, d.dst_runs.every});
      t.nodes.push_back(std::move(node));
    }
    chakra::write_trace(prefix + "." + std::to_string(p) + ".et", t);
  }
}

}  // namespace wafersim::tb
