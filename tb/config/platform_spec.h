#pragma once
// Everything a run needs to know about the machine, filled from a wafersim YAML platform or from
// ASTRA-sim's network + system files. docs/config.md lists every key with its unit and default.
#include <string>
#include <vector>

#include "hw/noc/fabric_params.h"
#include "hw/npu/npu.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/hierarchical.h"
#include "models/topology/topology.h"

namespace wafersim::tb {

// How one kind of collective runs: a built-in algorithm, or an algorithm read from a file.
struct Implementation {
  enum class Source { BuiltIn, Msccl, Chakra, Tacos };
  Source source = Source::BuiltIn;
  collectives::Algorithm algorithm = collectives::Algorithm::Ring;
  // Msccl: the XML file, with `#N` for its N-th <algo> (from 1) when it holds several;
  // Chakra: the collective graph's prefix (files <path>.<rank>.et).
  std::string path;

  Implementation() = default;
  Implementation(collectives::Algorithm a) : algorithm(a) {}  // NOLINT: a built-in is the default
  // Networks of several dimensions: the built-in algorithm of each dimension, dimension 0 first
  // ("ring,direct,halving_doubling"); empty: `algorithm` on every dimension when the platform
  // file named it, else ring on Ring, direct on FullyConnected and halving-doubling on Switch.
  std::vector<collectives::Algorithm> per_dim;
  bool named = false;  // given in the platform file (not the default)

  // "ring", "ring,direct", "msccl:FILE", "chakra:PREFIX", "tacos".
  std::string name() const;
};

// Parses a built-in algorithm name (collectives::algorithm_from_string), `msccl:FILE`,
// `chakra:PREFIX` or `tacos` (synthesized for the topology). Throws std::invalid_argument.
Implementation implementation_from_string(const std::string& text);

struct CollectiveConfig {
  Implementation all_reduce = collectives::Algorithm::Ring;
  Implementation all_gather = collectives::Algorithm::Ring;
  Implementation reduce_scatter = collectives::Algorithm::Ring;
  Implementation all_to_all = collectives::Algorithm::Direct;
  Implementation broadcast = collectives::Algorithm::Ring;
  Implementation reduce = collectives::Algorithm::Ring;
  int dataset_splits = 1;
  // Chunks in flight at once per rank; on a network of several dimensions, chunk phases in flight
  // at once per dimension, both directions of a ring together (ASTRA-sim's
  // active-chunks-per-dimension). 0 = no limit. `active_chunks_per_dim`, when given, holds one
  // limit per dimension (a ring needs 2 to use both directions).
  int active_chunks = 1;
  std::vector<int> active_chunks_per_dim;
  // Networks of several dimensions (models/collectives/hierarchical.h): how an all-reduce's chunks
  // go through the dimensions, and in which order a dimension serves the chunks waiting for it.
  collectives::DimensionOrder dimension_order = collectives::DimensionOrder::Ascending;
  collectives::QueuePolicy queue_policy = collectives::QueuePolicy::Fifo;
  // Where that service order is decided: in the plan, from the load model, or at run time by each
  // NPU's scheduler (tb/replay/phase_scheduler.h), which also orders the phases of concurrent
  // collectives by `collective_priority`.
  collectives::QueueScheduler scheduler = collectives::QueueScheduler::Planned;
  collectives::CollectivePriority collective_priority = collectives::CollectivePriority::Fifo;
  // Plans up to this many ops (over all ranks) are run by the symbolic executor before the
  // simulation (models/collectives/symbolic.h); larger ones are not re-checked.
  double verify_max_ops = 1 << 20;
  // Flat ring all-reduces, reduce-scatters and all-gathers: `Ranks` goes round the communicator
  // in rank order, one way; `MeshCycle` (a mesh only) follows a cycle of the group's grid whose
  // every step is one link, odd chunks the other way round (the Fred paper's baseline), where the
  // group is a grid of the mesh that has such a cycle (else it goes in rank order, one way).
  enum class RingPath { Ranks, MeshCycle };
  RingPath ring_path = RingPath::Ranks;
  // `tacos` implementations: chunks per NPU and the matching's seed (models/tacos).
  int tacos_chunks_per_npu = 1;
  double tacos_seed = 1;
};

enum class ComputeModel { Duration, Roofline };
// How the driver hands ready compute nodes to an NPU: `NodeId` keeps one in flight and launches the
// ready node with the smallest id next (program order, as a device stream and ASTRA-sim do);
// `Ready` launches each as soon as it is ready and the NPU runs them in arrival order.
enum class ComputeOrder { NodeId, Ready };
// How the driver issues collectives and sends: `Concurrent` issues each as soon as it is ready;
// `NodeId` keeps one in flight per NPU, the ready one with the smallest id next (ASTRA-sim's way).
// Receives are never held back.
enum class CommOrder { Concurrent, NodeId };

struct PlatformSpec {
  std::string name;
  std::string source;  // file(s) it came from, for messages
  topology::NetworkSpec network;
  hw::FabricParams fabric;
  hw::NpuParams npu;
  CollectiveConfig collectives;
  ComputeModel compute = ComputeModel::Duration;
  ComputeOrder compute_order = ComputeOrder::NodeId;
  CommOrder comm_order = CommOrder::Concurrent;
  // What the reader accepted without modelling it, one sentence each, naming the file and the
  // keys: printed before a run and kept in report.json (`notices`).
  std::vector<std::string> notices;
};

// `overrides` are `section.key=value` strings applied on top of the file (the study runner and
// `--set` use them). Throws InputError naming the file and key.
PlatformSpec load_platform(const std::string& path, const std::vector<std::string>& overrides = {});
// ASTRA-sim analytical network (.yml) and system (.json) files, read unchanged.
PlatformSpec load_astra_platform(const std::string& network_yml, const std::string& system_json,
                                 const std::vector<std::string>& overrides = {});
// Checks what no single key can: a mesh's size, packets against flits and buffers. Throws
// InputError naming the keys. The loaders call it after the overrides.
void check_platform(const PlatformSpec& spec);

// Makes the relative paths of imported implementations absolute-or-joined: each is taken from the
// first of `bases` (folders) where its file exists, else from the first base.
void resolve_implementation_paths(CollectiveConfig& collectives,
                                  const std::vector<std::string>& bases);
// Applies `section.key=value` overrides to an already loaded spec.
void apply_overrides(PlatformSpec& spec, const std::vector<std::string>& overrides);

}  // namespace wafersim::tb
