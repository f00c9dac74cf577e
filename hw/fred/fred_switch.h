#pragma once
// The Fred switch (PAPERS.md section 1) as a fabric block: a switch of the wafer's tree that routes
// unicasts as a router does and, for in-network flows, reduces the inputs that reach it and
// multicasts the sum (hw/fred/flow_table.h). The flow's tree (which inputs it waits for, which
// outputs the sum leaves on) comes from the topology's rules (Topology::flow_hop).
//
// Its pipeline is the router's (routing + VC allocation + switch allocation) followed by the
// traversal of its Fred_m(P) interconnect (models/fred): P = its ports, m = 3 (the paper's), every
// unit crossing the interconnect's stages() blocks of fabric.fred_stage_cycles each (the stages
// depend on P only, so m matters for routing flows, which is not modelled yet, not for timing).
//
// Simplified (docs/design.md, The Fred switch): flows move at message fidelity only, the sum
// streams out once the heads of all its inputs are in and cannot finish before their tails (the
// reduction runs at line rate, as the micro-switches do). The per-phase routing configurations of
// Fred_m(P), class VCs, preemption and Go-Back-N are not modelled yet.
#include <map>
#include <systemc>
#include <utility>

#include "hw/fred/flow_table.h"
#include "hw/noc/router.h"
#include "models/fred/interconnect.h"

namespace wafersim::hw {

class FredSwitch : public Router {
 public:
  FredSwitch(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
             const topology::Topology& topology, int node);

  static constexpr int kMiddles = 3;  // m of the paper's evaluation
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

  // A sum being gathered: the inputs in so far, the last head and the last tail among them.
  struct Sum {
    int arrived = 0;
    sc_core::sc_time head;
    sc_core::sc_time tail;
  };
  std::map<std::pair<const FlowTransfer*, int>, Sum> waiting_;  // by flow and stage
  const fred::Interconnect interconnect_;
  const topology::Topology& topology_;
  const int node_;
  MessagePool& messages_;
};

}  // namespace wafersim::hw
