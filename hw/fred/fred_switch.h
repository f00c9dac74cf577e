#pragma once
// The Fred switch (PAPERS.md section 1) as a fabric block: a switch of the wafer's tree that routes
// unicasts as a router does and, for in-network flows, reduces the inputs that reach it and
// multicasts the sum (hw/fred/flow_table.h). The flow's tree (which inputs it waits for, which
// outputs the sum leaves on) comes from the topology's rules (Topology::flow_hop).
//
// Its pipeline is the router's (routing + VC allocation + switch allocation) followed by the
// traversal of its Fred_m(P) interconnect (models/fred): P = its ports, m = fabric.fred_middles,
// every unit crossing the interconnect's stages() blocks of fabric.fred_stage_cycles each. A flow's
// sum is routed through Fred_m(P) when it is ready to leave and holds that route while it streams
// (models/fred/route_schedule.h): it waits while a port it needs serves another flow, or while
// the middles cannot carry it beside the flows that run (fabric.fred_conflicts: wait), or stops
// the run naming the flows that clash (error). A flow of another communication phase (another
// collective) than the last one through the switch first waits fabric.fred_reconfiguration_cycles
// for the switch to load that phase's configuration.
//
// Simplified (docs/design.md, The Fred switch): flows move at message fidelity only, the sum
// streams out once the heads of all its inputs are in and cannot finish before their tails (the
// reduction runs at line rate, as the micro-switches do). Unicasts do not take routes in
// Fred_m(P) (m >= 3 carries any unicast beside the rest); class VCs, preemption and Go-Back-N are
// not modelled yet.
#include <map>
#include <stdexcept>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "hw/fred/flow_table.h"
#include "hw/noc/router.h"
#include "models/fred/interconnect.h"
#include "models/fred/route_schedule.h"

namespace wafersim::hw {

// Flows that a Fred switch's interconnect cannot carry together (fabric.fred_conflicts: error).
class FlowConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FredSwitch : public Router {
 public:
  FredSwitch(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
             const topology::Topology& topology, int node);

  // The interconnect inside: Fred_m(P) for its P ports.
  const fred::Interconnect& interconnect() const { return interconnect_; }

 private:
  // A router's parameters with the traversal replaced by that of `net`.
  static FabricParams with_datapath(FabricParams params, const fred::Interconnect& net);
  void on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                  const sc_core::sc_time& arrival) override;
  void pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
            const sc_core::sc_time& head_at) override;
  // A flow's unit: counted into its sum, which leaves when the last input is in.
  void reduce(int in_port, const TransferExt& unit, const sc_core::sc_time& head_at);

  // When the flow whose sum is ready at `ready` and streams until `end` gets its route through
  // the interconnect from input ports `in` to output ports `out`, and when it has streamed
  // through: `end` moved with its start, or later when it streams slower beside flows that share
  // its ports.
  struct Departure {
    sc_core::sc_time start, end;
  };
  Departure route(const FlowTransfer& flow, int stage, std::vector<int> in, std::vector<int> out,
                  const sc_core::sc_time& ready, const sc_core::sc_time& end);

  // A sum being gathered: the input ports its units came in on, the last head and the last tail
  // among them.
  struct Sum {
    std::vector<int> in_ports;
    sc_core::sc_time head;
    sc_core::sc_time tail;
  };
  std::map<std::pair<const FlowTransfer*, int>, Sum> waiting_;  // by flow and stage
  const fred::Interconnect interconnect_;
  fred::RouteSchedule routes_;
  uint64_t phase_ = 0;  // the communication phase whose configuration is loaded: 1 + its instance
  const sc_core::sc_time reconfiguration_;
  const topology::Topology& topology_;
  const int node_;
  MessagePool& messages_;
};

}  // namespace wafersim::hw
