#include "tb/replay/plan_library.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "models/collectives/symbolic.h"
#include "models/common/error.h"
#include "models/tacos/tacos.h"
#include "tb/collectives/msccl_xml.h"

namespace wafersim::tb {

using chakra::CollectiveKind;
using collectives::Collective;

tacos::FabricCosts synthesis_costs(const PlatformSpec& spec) {
  const hw::FabricParams& f = spec.fabric;
  tacos::FabricCosts c;
  c.endpoint_cycles = f.endpoint_delay_cycles;
  c.router_cycles = f.routing_delay_cycles + f.vc_alloc_delay_cycles + f.sw_alloc_delay_cycles +
                    f.switch_traversal_delay_cycles;
  c.flit_bytes = f.flit_bytes;
  c.reduce_gbps = spec.npu.reduce_bandwidth_gbps;
  return c;
}

namespace {

// The group's dimensions for a plan's cache key: each one's size (1 where the group does not span
// it), algorithm and chunk limit; "flat" when the plan is not hierarchical.
std::string grid_name(const std::vector<collectives::DimensionGroup>& dims) {
  if (dims.empty()) return "flat";
  std::string name;
  for (const collectives::DimensionGroup& g : dims)
    name += std::to_string(g.size) + collectives::to_string(g.algorithm) +
            std::to_string(g.active_chunks) + ",";
  return name;
}

}  // namespace

namespace {
// A mesh's columns or a tree's NPUs per leaf: the size of dimension 0 of the grid it counts as;
// 0 for a network of dimensions.
int line_length(const topology::Topology& topology) {
  const auto& n = topology.spec();
  return n.shape == topology::Shape::Mesh   ? n.mesh_x
         : n.shape == topology::Shape::Tree ? n.leaf_npus
                                            : 0;
}
}  // namespace

std::vector<int> grid_extents(const topology::Topology& topology, const std::vector<int>& members) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] < 0 || members[i] >= topology.npu_count() ||
        (i > 0 && members[i] <= members[i - 1]))
      return {};
  // A mesh's grid: its columns and rows (rank = x + mesh_x * y); a tree's: the places in a leaf
  // and the leaves (rank = place + leaf_npus * leaf).
  std::vector<int> extents;
  if (const int columns = line_length(topology); columns > 0) {
    std::set<int> xs, ys;
    for (int r : members) {
      xs.insert(r % columns);
      ys.insert(r / columns);
    }
    extents = {static_cast<int>(xs.size()), static_cast<int>(ys.size())};
  } else {
    extents = topology.extents(members);
  }
  // Distinct members, each a combination of the coordinates they have: as many as the
  // combinations means every combination is there.
  uint64_t combinations = 1;
  for (int e : extents) combinations *= static_cast<uint64_t>(e);
  if (members.empty() || combinations != members.size()) return {};
  return extents;
}

PlanLibrary::PlanLibrary(const PlatformSpec& spec, const topology::Topology* topology)
    : config_(spec.collectives),
      topology_(topology),
      fabric_costs_(synthesis_costs(spec)),
      source_(spec.source) {}

PlanLibrary::Entry PlanLibrary::get(const std::string& file, const chakra::TraceNode& node,
                                    const std::vector<int>& members) {
  const int group_size = static_cast<int>(members.size());
  collectives::CollectiveRequest q;
  q.ranks = group_size;
  q.bytes = node.comm_size.value_or(0);
  q.splits = config_.dataset_splits;
  q.active_chunks = config_.active_chunks;
  switch (static_cast<CollectiveKind>(node.comm_type.value_or(-1))) {
    case CollectiveKind::AllReduce:
      q.collective = Collective::AllReduce;
      break;
    case CollectiveKind::Barrier:  // a one-byte-per-rank all-reduce
      q.collective = Collective::AllReduce;
      q.bytes = static_cast<uint64_t>(group_size);
      q.splits = 1;
      break;
    case CollectiveKind::AllGather:
      q.collective = Collective::AllGather;
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::ReduceScatterBlock:
      q.collective = Collective::ReduceScatter;
      break;
    case CollectiveKind::AllToAll:
      q.collective = Collective::AllToAll;
      break;
    case CollectiveKind::Broadcast:
      q.collective = Collective::Broadcast;
      break;
    case CollectiveKind::Reduce:
      q.collective = Collective::Reduce;
      break;
    default:
      throw InputError(file, "node " + std::to_string(node.id),
                       "collective comm_type " + std::to_string(node.comm_type.value_or(-1)) +
                           " is not supported");
  }
  if (node.root) q.root = static_cast<int>(*node.root);
  return plan(q, file, "node " + std::to_string(node.id) + " ('" + node.name + "')", &members);
}

PlanLibrary::Entry PlanLibrary::plan(collectives::CollectiveRequest q, const std::string& file,
                                     const std::string& item, const std::vector<int>* members) {
  // Which setting serves each collective.
  static const std::map<Collective, std::pair<Implementation CollectiveConfig::*, const char*>>
      settings = {
          {Collective::AllReduce, {&CollectiveConfig::all_reduce, "collectives.all_reduce"}},
          {Collective::AllGather, {&CollectiveConfig::all_gather, "collectives.all_gather"}},
          {Collective::ReduceScatter,
           {&CollectiveConfig::reduce_scatter, "collectives.reduce_scatter"}},
          {Collective::AllToAll, {&CollectiveConfig::all_to_all, "collectives.all_to_all"}},
          {Collective::Broadcast, {&CollectiveConfig::broadcast, "collectives.broadcast"}},
          {Collective::Reduce, {&CollectiveConfig::reduce, "collectives.reduce"}}};
  const auto& [field, setting] = settings.at(q.collective);
  const Implementation& impl = config_.*field;
  q.algorithm = impl.algorithm;
  std::vector<int> everyone;
  if (!members) {
    everyone.resize(static_cast<size_t>(std::max(q.ranks, 0)));
    std::iota(everyone.begin(), everyone.end(), 0);
  }
  const std::vector<int>& group = members ? *members : everyone;
  const std::vector<collectives::DimensionGroup> dims = hierarchical_dims(q, impl, group);
  std::string cycle = dims.empty() ? mesh_cycle(q, impl, group) : "";
  if (q.algorithm == collectives::Algorithm::RouteTree &&
      impl.source == Implementation::Source::BuiltIn && topology_ && q.root >= 0 &&
      q.root < q.ranks) {
    try {  // the tree the routes form: part of the plan, so of its key
      q.tree_parents = topology::route_tree(*topology_, group, q.root);
    } catch (const std::invalid_argument& e) {
      throw InputError(file, item,
                       std::string(to_string(q.collective)) + ": " + e.what() + " (collectives." +
                           to_string(q.collective) + " in " + source_ + ")");
    }
    cycle += "/tree:";
    for (int p : q.tree_parents) cycle += std::to_string(p) + ",";
  }
  // Everything the plan depends on: a barrier (one split) must not meet an all-reduce of the same
  // size cut into chunks, nor a broadcast one with another root. (Imported files are read once per
  // run, so their name stands for their content.)
  const std::string key = std::string(to_string(q.collective)) + "/" + impl.name() + "/" +
                          std::to_string(q.ranks) + "/" + std::to_string(q.bytes) + "/" +
                          std::to_string(q.splits) + "/" + std::to_string(q.active_chunks) + "/" +
                          std::to_string(q.root) + "/" + grid_name(dims) + cycle;
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Entry entry{nullptr, q.collective, true};
  const std::string what =
      std::string(to_string(q.collective)) + " over " + std::to_string(q.ranks) + " ranks";
  bool data_known = true;
  try {
    if (!dims.empty()) {
      collectives::HierarchicalRequest h;
      h.collective = q.collective;
      // All-gather's comm_size is one rank's input; the plan's buffer is the gathered output.
      h.bytes = q.bytes * (q.collective == Collective::AllGather ? q.ranks : 1);
      h.splits = q.splits;
      h.dims = dims;
      h.order = config_.dimension_order;
      h.policy = config_.queue_policy;
      h.runtime_queues = config_.scheduler == collectives::QueueScheduler::Runtime;
      entry.plan = std::make_shared<const collectives::Plan>(collectives::build_hierarchical(h));
    } else if (impl.source == Implementation::Source::BuiltIn) {
      entry.plan = std::make_shared<const collectives::Plan>(collectives::build_plan(q));
    } else {
      auto [plan, known] = imported(impl, q.collective, q.ranks, q.bytes);
      entry.plan = std::make_shared<const collectives::Plan>(std::move(plan));
      data_known = entry.data_known = known;
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(file, item, what + ": " + e.what() + " (" + setting + " in " + source_ + ")");
  }
  // Proven on abstract data before it runs (the executor's cost grows with the ops of all ranks).
  size_t ops = 0;
  for (const auto& rank : entry.plan->ranks) ops += rank.ops.size();
  if (entry.plan->held_once()) ops *= static_cast<size_t>(entry.plan->size());
  if (static_cast<double>(ops) <= config_.verify_max_ops) {
    const std::string problem = collectives::check_plan(
        *entry.plan, data_known ? q.collective : Collective::Custom, q.root);
    if (!problem.empty())
      throw InputError(file, item,
                       what + ": the " + entry.plan->algorithm + " plan is wrong: " + problem +
                           " (" + setting + " = " + impl.name() + ")");
  }
  plans_.emplace(key, entry);
  return entry;
}

std::string PlanLibrary::mesh_cycle(collectives::CollectiveRequest& q, const Implementation& impl,
                                    const std::vector<int>& members) const {
  const bool ring_collective = q.collective == Collective::AllReduce ||
                               q.collective == Collective::ReduceScatter ||
                               q.collective == Collective::AllGather;
  if (config_.ring_path != CollectiveConfig::RingPath::MeshCycle || !topology_ ||
      !ring_collective || impl.source != Implementation::Source::BuiltIn ||
      q.algorithm != collectives::Algorithm::Ring)
    return "";
  // A group that is no grid of the mesh, or a grid with no such cycle (a line, both sides odd),
  // keeps the logical ring in rank order, one way round (the paper's ring for NPU subsets).
  const std::vector<int> extents = grid_extents(*topology_, members);
  if (extents.size() != 2) return "";
  q.ring_order = topology::grid_cycle(extents[0], extents[1]);
  q.ring_alternates = !q.ring_order.empty();
  // Groups of one size but another shape go round other cycles: the shape is part of the plan.
  return q.ring_alternates
             ? "/cycle:" + std::to_string(extents[0]) + "x" + std::to_string(extents[1])
             : "";
}

std::vector<collectives::DimensionGroup> PlanLibrary::hierarchical_dims(
    const collectives::CollectiveRequest& q, const Implementation& impl,
    const std::vector<int>& members) const {
  const bool all_to_all = q.collective == Collective::AllToAll;
  // An all-to-all named `ring` is ASTRA-sim's relay, flat around the whole communicator; direct
  // and pairwise all-to-alls go through the dimensions one after the other.
  const bool relayed = all_to_all && (impl.algorithm == collectives::Algorithm::Ring ||
                                      std::count(impl.per_dim.begin(), impl.per_dim.end(),
                                                 collectives::Algorithm::Ring) > 0);
  const bool hierarchical = q.collective == Collective::AllReduce ||
                            q.collective == Collective::ReduceScatter ||
                            q.collective == Collective::AllGather || (all_to_all && !relayed);
  if (!topology_ || !hierarchical || impl.source != Implementation::Source::BuiltIn) return {};
  // A mesh is a grid of its columns and rows, a tree of the places in a leaf and the leaves, when
  // the platform names an algorithm per dimension (`ring,ring`): hierarchical rings, on a mesh's
  // lines (routed X then Y), or within each leaf and then across the leaves (the NPUs at one place
  // of every leaf, over the uplink of that place under d-mod-k).
  const bool grid = line_length(*topology_) > 0;
  if (grid ? impl.per_dim.size() != 2 : topology_->dims().size() < 2) return {};
  if (members != grid_members_) {
    grid_ = grid_extents(*topology_, members);
    grid_members_ = members;
  }
  const std::vector<int>& extents = grid_;
  if (extents.empty()) return {};
  std::vector<collectives::DimensionGroup> dims;
  for (size_t d = 0; d < extents.size(); ++d) {
    collectives::DimensionGroup g;
    g.size = extents[d];
    g.active_chunks = config_.active_chunks_per_dim.empty() ? config_.active_chunks
                                                            : config_.active_chunks_per_dim[d];
    if (grid) {  // mesh: an NPU's two links along the line; tree: its link, its uplink share
      const auto& n = topology_->spec();
      if (n.shape == topology::Shape::Tree)
        g.bandwidth_gbps =
            d == 0 ? n.link_bandwidth_gbps : n.uplink_bandwidth_gbps * n.uplinks / n.leaf_npus;
      else
        g.bandwidth_gbps = 2 * (d == 1 && n.link_bandwidth_y_gbps > 0 ? n.link_bandwidth_y_gbps
                                                                      : n.link_bandwidth_gbps);
      g.algorithm = impl.per_dim[d];
      dims.push_back(g);
      continue;
    }
    const topology::Dimension& dim = topology_->dims()[d];
    g.bandwidth_gbps = topology_->npu_bandwidth_gbps(static_cast<int>(d));
    if (!impl.per_dim.empty())
      g.algorithm = impl.per_dim[d];
    else if (impl.named || all_to_all)
      g.algorithm = impl.algorithm;
    else if (dim.shape == topology::Shape::Ring)
      g.algorithm = collectives::Algorithm::Ring;
    else  // halving-doubling needs a power of two: a switch of 6 (or 6 NPUs of one) goes direct
      g.algorithm = dim.shape != topology::Shape::FullyConnected && (g.size & (g.size - 1)) == 0
                        ? collectives::Algorithm::HalvingDoubling
                        : collectives::Algorithm::Direct;
    dims.push_back(g);
  }
  return dims;
}

std::pair<collectives::Plan, bool> PlanLibrary::imported(const Implementation& impl,
                                                         Collective kind, int ranks,
                                                         uint64_t bytes) {
  namespace msccl = collectives::msccl;
  if (impl.source == Implementation::Source::Chakra) {
    auto found = chakra_graphs_.find(impl.path);
    if (found == chakra_graphs_.end())
      found = chakra_graphs_.emplace(impl.path, read_chakra_collective(impl.path)).first;
    const ChakraCollective& graph = found->second;
    if (graph.plan.size() != ranks)
      throw std::invalid_argument("the Chakra collective graph " + impl.path + " has " +
                                  std::to_string(graph.plan.size()) + " ranks");
    if (graph.data_known && graph.collective != kind && graph.collective != Collective::Custom)
      throw std::invalid_argument("the Chakra collective graph " + impl.path + " computes " +
                                  to_string(graph.collective));
    // The graph's sizes are its own (FORMATS.md): the workload's comm_size does not rescale it.
    return {graph.plan, graph.data_known};
  }
  if (impl.source == Implementation::Source::Tacos) {
    if (!topology_) throw std::invalid_argument("tacos needs the platform's topology");
    if (ranks != topology_->npu_count())
      throw std::invalid_argument("tacos synthesizes collectives over all " +
                                  std::to_string(topology_->npu_count()) +
                                  " NPUs of the platform, not a group of " + std::to_string(ranks));
    return {
        tacos::synthesize(tacos::link_graph(*topology_, fabric_costs_), kind, bytes,
                          config_.tacos_chunks_per_npu, static_cast<uint64_t>(config_.tacos_seed)),
        true};
  }
  // MSCCL XML: FILE or FILE#N.
  std::string path = impl.path;
  size_t pick = 0;
  const size_t hash = path.rfind('#');
  if (hash != std::string::npos) {
    const std::string index = path.substr(hash + 1);
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
        index.size() > 6 || std::stoul(index) == 0)
      throw std::invalid_argument("'#" + index + "' after " + path.substr(0, hash) +
                                  " must be an <algo> number from 1");
    pick = std::stoul(index) - 1;
    path = path.substr(0, hash);
  }
  auto found = msccl_files_.find(path);
  if (found == msccl_files_.end()) found = msccl_files_.emplace(path, read_msccl_xml(path)).first;
  const auto& algos = found->second;
  if (hash == std::string::npos && algos.size() > 1)
    throw std::invalid_argument(path + " holds " + std::to_string(algos.size()) +
                                " <algo> elements: name one as msccl:" + path + "#1 to #" +
                                std::to_string(algos.size()));
  if (pick >= algos.size())
    throw std::invalid_argument(path + " holds " + std::to_string(algos.size()) +
                                " <algo> elements, not " + std::to_string(pick + 1));
  const msccl::Algorithm& algo = algos[pick];
  const Collective coll = msccl::collective_of(algo.coll);
  if (coll != kind && coll != Collective::Custom)
    throw std::invalid_argument(path + " implements " + algo.coll + ", not " + to_string(kind));
  if (algo.ngpus != ranks)
    throw std::invalid_argument(path + " is written for " + std::to_string(algo.ngpus) + " gpus");
  try {
    return {msccl::to_plan(algo, bytes), true};
  } catch (const std::invalid_argument& e) {
    throw InputError(path, "", e.what());
  }
}

void PlanLibrary::prepare(const chakra::Workload& workload) {
  for (const auto& trace : workload.ranks)
    for (const auto& node : trace.nodes)
      if (node.kind == chakra::NodeKind::Collective && !node.is_cpu_op)
        get(trace.file, node, workload.members(node.pg_name));
}

}  // namespace wafersim::tb
