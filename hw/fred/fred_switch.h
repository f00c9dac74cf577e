#pragma once
// The Fred switch (PAPERS.md section 1) as a fabric block: a switch of the wafer's tree that routes
// unicasts as a router does and, for in-network flows, reduces the inputs that reach it and
// multicasts the sum (hw/fred/flow_table.h). The flow's tree (which inputs it waits for, which
// outputs the sum leaves on) comes from the topology's rules (Topology::flow_hop).
//
// Simplified (docs/design.md, The Fred switch): flows move at message fidelity only, the sum
// streams out once the heads of all its inputs are in and cannot finish before their tails (the
// reduction runs at line rate, as the micro-switches do), and the switch's pipeline is the
// router's (routing + VC allocation + switch allocation + traversal delays). The per-phase routing
// configurations of Fred_m(P) (models/fred), class VCs, preemption and Go-Back-N are not modelled
// yet.
#include <map>
#include <systemc>
#include <utility>

#include "hw/fred/flow_table.h"
#include "hw/noc/router.h"

namespace wafersim::hw {

class FredSwitch : public Router {
 public:
  FredSwitch(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
             const topology::Topology& topology, int node);

 private:
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
  const topology::Topology& topology_;
  const int node_;
  MessagePool& messages_;
};

}  // namespace wafersim::hw
