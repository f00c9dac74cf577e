#pragma once
// Everything a run needs to know about the machine, filled from a wafersim YAML platform or from
// ASTRA-sim's network + system files. docs/config.md lists every key with its unit and default.
#include <string>
#include <vector>

#include "hw/noc/fabric_params.h"
#include "hw/npu/npu.h"
#include "models/collectives/algorithms.h"
#include "models/topology/topology.h"

namespace wafersim::tb {

struct CollectiveConfig {
  collectives::Algorithm all_reduce = collectives::Algorithm::Ring;
  collectives::Algorithm all_gather = collectives::Algorithm::Ring;
  collectives::Algorithm reduce_scatter = collectives::Algorithm::Ring;
  collectives::Algorithm all_to_all = collectives::Algorithm::Direct;
  collectives::Algorithm broadcast = collectives::Algorithm::Ring;
  collectives::Algorithm reduce = collectives::Algorithm::Ring;
  int dataset_splits = 1;
  int active_chunks = 1;
  // Plans up to this many ops (over all ranks) are run by the symbolic executor before the
  // simulation (models/collectives/symbolic.h); larger ones are not re-checked.
  double verify_max_ops = 1 << 20;
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
// Applies `section.key=value` overrides to an already loaded spec.
void apply_overrides(PlatformSpec& spec, const std::vector<std::string>& overrides);

}  // namespace wafersim::tb
