#include "hw/fred/flow_table.h"

namespace wafersim::hw {

FlowTransfer* FlowTable::join(uint64_t tag, const topology::FlowEnds& ends, uint64_t bytes,
                              TrafficClass traffic_class) {
  auto [it, made] = flows_.try_emplace(tag);
  if (!made) return it->second->bytes == bytes ? it->second.get() : nullptr;
  auto flow = std::make_unique<FlowTransfer>();
  flow->tag = tag;
  flow->bytes = bytes;
  flow->ends = ends;
  flow->traffic_class = traffic_class;
  flow->deliveries_left = static_cast<int>(ends.outputs.size());
  flow->inputs_left = static_cast<int>(ends.inputs.size());
  flow->carrier.id = tag;
  flow->carrier.src = flow->carrier.dst = -1;
  flow->carrier.bytes = bytes;
  flow->carrier.tag = tag;
  flow->carrier.bytes_per_cycle = topology_.flow_bytes_per_cycle(ends);
  flow->carrier.flow = flow.get();
  it->second = std::move(flow);
  return it->second.get();
}

void FlowTable::delivered(FlowTransfer& flow) {
  --flow.deliveries_left;
  forget_when_done(flow);
}

void FlowTable::sent(FlowTransfer& flow, Message* m) {
  --flow.inputs_left;
  flow.contributions.push_back(m);
  forget_when_done(flow);
}

void FlowTable::forget_when_done(FlowTransfer& flow) {
  if (flow.deliveries_left > 0 || flow.inputs_left > 0) return;
  for (Message* m : flow.contributions) messages_.release(m);
  flows_.erase(flow.tag);
}

}  // namespace wafersim::hw
