#include "tb/replay/plan_library.h"

#include "models/collectives/symbolic.h"
#include "models/common/error.h"

namespace wafersim::tb {

using chakra::CollectiveKind;
using collectives::Collective;

PlanLibrary::PlanLibrary(const CollectiveConfig& config, std::string config_source)
    : config_(config), source_(std::move(config_source)) {}

PlanLibrary::Entry PlanLibrary::get(const std::string& file, const chakra::TraceNode& node,
                                    int group_size) {
  collectives::CollectiveRequest q;
  q.ranks = group_size;
  q.bytes = node.comm_size.value_or(0);
  q.splits = config_.dataset_splits;
  q.active_chunks = config_.active_chunks;
  // Which algorithm setting serves each Chakra collective.
  struct Choice {
    Collective collective;
    collectives::Algorithm CollectiveConfig::*algorithm;
    const char* setting;
  };
  Choice choice;
  switch (static_cast<CollectiveKind>(node.comm_type.value_or(-1))) {
    case CollectiveKind::AllReduce:
      choice = {Collective::AllReduce, &CollectiveConfig::all_reduce, "collectives.all_reduce"};
      break;
    case CollectiveKind::Barrier:  // a one-byte-per-rank all-reduce
      choice = {Collective::AllReduce, &CollectiveConfig::all_reduce, "collectives.all_reduce"};
      q.bytes = static_cast<uint64_t>(group_size);
      q.splits = 1;
      break;
    case CollectiveKind::AllGather:
      choice = {Collective::AllGather, &CollectiveConfig::all_gather, "collectives.all_gather"};
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::ReduceScatterBlock:
      choice = {Collective::ReduceScatter, &CollectiveConfig::reduce_scatter,
                "collectives.reduce_scatter"};
      break;
    case CollectiveKind::AllToAll:
      choice = {Collective::AllToAll, &CollectiveConfig::all_to_all, "collectives.all_to_all"};
      break;
    case CollectiveKind::Broadcast:
      choice = {Collective::Broadcast, &CollectiveConfig::broadcast, "collectives.broadcast"};
      break;
    case CollectiveKind::Reduce:
      choice = {Collective::Reduce, &CollectiveConfig::reduce, "collectives.reduce"};
      break;
    default:
      throw InputError(file, "node " + std::to_string(node.id),
                       "collective comm_type " + std::to_string(node.comm_type.value_or(-1)) +
                           " is not supported");
  }
  q.collective = choice.collective;
  q.algorithm = config_.*choice.algorithm;
  const char* setting = choice.setting;
  if (node.root) q.root = static_cast<int>(*node.root);
  // Everything the plan depends on: a barrier (one split) must not meet an all-reduce of the same
  // size cut into chunks, nor a broadcast one with another root.
  const std::string key = std::string(to_string(q.collective)) + "/" + to_string(q.algorithm) +
                          "/" + std::to_string(q.ranks) + "/" + std::to_string(q.bytes) + "/" +
                          std::to_string(q.splits) + "/" + std::to_string(q.active_chunks) + "/" +
                          std::to_string(q.root);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Entry entry{nullptr, q.collective};
  const std::string item = "node " + std::to_string(node.id) + " ('" + node.name + "')";
  const std::string what =
      std::string(to_string(q.collective)) + " over " + std::to_string(q.ranks) + " ranks";
  try {
    entry.plan = std::make_shared<const collectives::Plan>(collectives::build_plan(q));
  } catch (const std::invalid_argument& e) {
    throw InputError(file, item, what + ": " + e.what() + " (" + setting + " in " + source_ + ")");
  }
  // Proven on abstract data before it runs (the executor's cost grows with the ops of all ranks).
  size_t ops = 0;
  for (const auto& rank : entry.plan->ranks) ops += rank.ops.size();
  if (entry.plan->rotation > 0) ops *= static_cast<size_t>(entry.plan->rotation);
  if (static_cast<double>(ops) <= config_.verify_max_ops) {
    const std::string problem = collectives::check_plan(*entry.plan, q.collective, q.root);
    if (!problem.empty())
      throw InputError(file, item,
                       what + ": the " + entry.plan->algorithm + " plan is wrong: " + problem);
  }
  plans_.emplace(key, entry);
  return entry;
}

void PlanLibrary::prepare(const chakra::Workload& workload) {
  for (const auto& trace : workload.ranks)
    for (const auto& node : trace.nodes)
      if (node.kind == chakra::NodeKind::Collective && !node.is_cpu_op)
        get(trace.file, node, static_cast<int>(workload.members(node.pg_name).size()));
}

}  // namespace wafersim::tb
