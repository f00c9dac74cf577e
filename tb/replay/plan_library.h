#pragma once
// The plans of a workload's collectives: one per distinct (collective, implementation, ranks,
// bytes, splits, root), built from the platform's `collectives` section (a built-in algorithm, an
// MSCCL XML file or a Chakra collective graph) and shared by every rank and every repetition.
// `prepare` builds them all before the simulation starts, so a collective the configured algorithm
// cannot run (halving-doubling on 6 ranks, double binary tree for all-gather) is reported with its
// trace file and node instead of stopping a run half way.
#include <map>
#include <memory>
#include <string>

#include "models/collectives/algorithms.h"
#include "models/collectives/msccl.h"
#include "models/tacos/tacos.h"
#include "tb/chakra/workload.h"
#include "tb/collectives/chakra_graph.h"
#include "tb/config/platform_spec.h"

namespace wafersim::tb {

// Per dimension of `topology`, how many of its coordinates the group `members` spans (1 where it
// spans none), when the group is every combination of those coordinates listed by ascending NPU
// id: position p then decomposes like an NPU id, dimension 0 varying fastest, as a hierarchical
// plan numbers its positions. Empty when the group is not such a grid. A mesh counts as the grid
// of its columns (dimension 0) and rows, a tree as that of the places in a leaf and the leaves.
std::vector<int> grid_extents(const topology::Topology& topology, const std::vector<int>& members);

// What a transfer costs on the fabric beyond its links, for TACOS synthesis (models/tacos).
tacos::FabricCosts synthesis_costs(const PlatformSpec& spec);

class PlanLibrary {
 public:
  struct Entry {
    std::shared_ptr<const collectives::Plan> plan;
    collectives::Collective kind;
    bool data_known = true;  // false: a foreign Chakra graph, which names no data
  };

  // The plans `spec`'s collectives section chooses. `topology`: the platform's, for `tacos`
  // implementations (nullptr: they are refused), which synthesize with the fabric's costs.
  explicit PlanLibrary(const PlatformSpec& spec, const topology::Topology* topology = nullptr);

  // The plan of collective node `node` (from `file`) over the NPUs `members` (position p is NPU
  // members[p]). Throws InputError naming the file, the node and the setting that chose the
  // algorithm.
  Entry get(const std::string& file, const chakra::TraceNode& node,
            const std::vector<int>& members);
  // The plan of collective `q` (its algorithm field is ignored: the configuration chooses) over
  // `members` (nullptr: NPUs 0 to q.ranks - 1); problems are reported naming `file` and `item`.
  Entry plan(collectives::CollectiveRequest q, const std::string& file, const std::string& item,
             const std::vector<int>* members = nullptr);
  // Builds the plan of every collective in `workload`.
  void prepare(const chakra::Workload& workload);

 private:
  // An all-reduce, reduce-scatter, all-gather or all-to-all with built-in algorithms on a network
  // of several dimensions is hierarchical (models/collectives/hierarchical.h) when its group is a
  // grid of the dimensions (grid_extents): its dimensions as the plan sees them, each of the
  // group's extent in it and with its algorithm (the setting's per-dimension list; the one named
  // algorithm; or ring on a Ring, direct on a FullyConnected and halving-doubling on a Switch).
  // Empty: a flat plan.
  // collectives.ring_path mesh_cycle: a flat ring over a grid of the mesh follows a cycle of its
  // links (topology::grid_cycle), odd chunks the other way round. Returns what the plan's cache
  // key needs of it ("" when the ring keeps rank order).
  std::string mesh_cycle(collectives::CollectiveRequest& q, const Implementation& impl,
                         const std::vector<int>& members) const;
  std::vector<collectives::DimensionGroup> hierarchical_dims(
      const collectives::CollectiveRequest& q, const Implementation& impl,
      const std::vector<int>& members) const;
  // The plan of an imported implementation; the second member says whether its data is known
  // (false: a Chakra graph of another tool, checked only for running to its end).
  std::pair<collectives::Plan, bool> imported(const Implementation& impl,
                                              collectives::Collective kind, int ranks,
                                              uint64_t bytes);

  const CollectiveConfig config_;
  const topology::Topology* topology_;
  const tacos::FabricCosts fabric_costs_;
  std::map<std::string, std::vector<collectives::msccl::Algorithm>> msccl_files_;
  std::map<std::string, ChakraCollective> chakra_graphs_;
  const std::string source_;
  std::map<std::string, Entry> plans_;
  // The last group grid_extents worked out, and its answer: every rank of a collective asks for
  // its plan with the same group (1,024 ranks x 1,024 members, worked out once).
  mutable std::vector<int> grid_members_, grid_;
};

}  // namespace wafersim::tb
