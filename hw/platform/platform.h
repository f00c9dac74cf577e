#pragma once
// Builds the hardware from the topology graph: an NPU (with its network interface) per NPU node, a
// router per router or switch node (a Fred switch per Fred switch node), and a pair of TLM sockets
// per directed link. An I/O controller is an endpoint block like an NPU's (hw/npu: the network
// interface, its DMA and the command socket a trace drives), with no work but transfers: it
// streams to and from off-wafer memory at its link's rate (the memory behind it is not modelled).
#include <memory>
#include <systemc>
#include <vector>

#include "hw/fred/fred_switch.h"
#include "hw/noc/router.h"
#include "hw/npu/npu.h"
#include "models/topology/topology.h"

namespace wafersim::hw {

struct LinkReport {
  const topology::Link* link;
  LinkStats stats;
};

class Platform : public sc_core::sc_module {
 public:
  Platform(sc_core::sc_module_name name, const topology::Topology& topology,
           const FabricParams& fabric, const NpuParams& npu);
  ~Platform() override;

  int npu_count() const { return topology_.npu_count(); }
  // NPUs and I/O controllers (ranks npu_count() ..); rank's endpoint block.
  int endpoint_count() const { return static_cast<int>(npus_.size()); }
  Npu& npu(int rank) { return *npus_.at(rank); }
  // The NPU's sparse unit (nullptr for an I/O controller).
  const SparseUnit* sparse_unit(int rank) const { return sparse_units_.at(rank); }
  const FabricParams& fabric() const { return fabric_; }
  const topology::Topology& topology() const { return topology_; }
  std::vector<LinkReport> link_reports() const;
  size_t buffered_units() const;
  size_t payloads_allocated() const { return pool_.allocated(); }
  // In-network flows started and not yet delivered to all their outputs.
  size_t flows_active() const { return flows_.active(); }
  // Has every Fred switch compute ahead the routing configurations of a collective instance's
  // flows (FredSwitch::configure_flows; throws FlowConflict), and forget them when it is over.
  void configure_flows(const std::vector<FredSwitch::PlannedFlow>& flows);
  void release_flows(uint64_t tag);
  // The Fred switches' control units, summed.
  FredSwitch::ControlStats fred_control_stats() const;
  bool has_fred_switches() const { return !fred_switches_.empty(); }

 private:
  const topology::Topology& topology_;
  FabricParams fabric_;
  PayloadPool pool_;
  MessagePool messages_;  // every message the NPUs send, freed with the platform
  FlowTable flows_;       // in-network flows in flight
  CallbackQueue callbacks_;
  WakeCalendar calendar_;  // wakes routers and network interfaces (one fabric clock)
  // The blocks, in the order they were made; destroyed newest first (~Platform).
  std::vector<std::unique_ptr<sc_core::sc_module>> blocks_;
  std::vector<Npu*> npus_;                 // by rank: NPUs, then I/O controllers
  std::vector<SparseUnit*> sparse_units_;  // by rank; nullptr for I/O controllers
  std::vector<Router*> routers_;
  std::vector<FredSwitch*> fred_switches_;
  std::vector<std::pair<FabricNode*, int>> link_source_;  // per link: sending block and its port
};

}  // namespace wafersim::hw
