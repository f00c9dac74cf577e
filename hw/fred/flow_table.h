#pragma once
// In-network flows as the fabric moves them (DESIGN.md decision 2): a transfer with several inputs,
// reduced on the way by the Fred switches, and several outputs, each served by multicast. The
// table owns every flow in flight; a flow's units point at it, so its ownership survives the
// reductions (many units become one) and the multicasts (one unit becomes many).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hw/proto/traffic_class.h"
#include "hw/proto/transfer.h"
#include "models/topology/topology.h"

namespace wafersim::hw {

struct FlowTransfer {
  uint64_t tag = 0;    // the key every member names it by (the driver's)
  uint64_t bytes = 0;  // each input's contribution, and the sum every output receives
  topology::FlowEnds ends;
  TrafficClass traffic_class = TrafficClass::Mp;
  // Packet fidelity: the VC its packets keep to, of `vcs` (the class's own).
  int vc(int vcs) const { return static_cast<int>(traffic_class) % vcs; }
  // What the flow's units between switches point at: its size and the rate it streams at (the
  // narrowest link of its tree). Inputs and outputs have messages of their own.
  Message carrier;
  int deliveries_left = 0;  // outputs that have not received the sum yet
  // Inputs whose contribution has not left its NPU yet, and the contributions that have: their
  // packets point at them until the first switch has reduced them, which may be after they left
  // (a link may send a packet again: hw/noc/link_retry.h), so they are freed with the flow.
  int inputs_left = 0;
  std::vector<Message*> contributions;
};

class FlowTable {
 public:
  FlowTable(const topology::Topology& topology, MessagePool& messages)
      : topology_(topology), messages_(messages) {}

  // The flow `tag`, made on its first input's call: `ends`, `bytes` and its class as that input
  // names them. Returns nullptr when the flow already runs with other bytes (the ranks disagree).
  FlowTransfer* join(uint64_t tag, const topology::FlowEnds& ends, uint64_t bytes,
                     TrafficClass traffic_class);
  // One of the flow's outputs has the sum; an input's contribution `m` has left its NPU. The flow
  // is forgotten (its contributions freed) once every output has the sum and every input has sent.
  void delivered(FlowTransfer& flow);
  void sent(FlowTransfer& flow, Message* m);
  size_t active() const { return flows_.size(); }

 private:
  void forget_when_done(FlowTransfer& flow);
  const topology::Topology& topology_;
  MessagePool& messages_;
  std::unordered_map<uint64_t, std::unique_ptr<FlowTransfer>> flows_;
};

}  // namespace wafersim::hw
