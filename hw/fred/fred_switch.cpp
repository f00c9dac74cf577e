#include "hw/fred/fred_switch.h"

#include <algorithm>
#include <stdexcept>

#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::sc_time;

FabricParams FredSwitch::with_datapath(FabricParams params, const fred::Interconnect& net) {
  params.switch_traversal_delay_cycles =
      static_cast<uint32_t>(net.stages()) * params.fred_stage_cycles;
  return params;
}

namespace {

// Fred_m(P) for a switch's ports.
fred::Interconnect interconnect_of(const topology::Topology& topology, int node,
                                   const FabricParams& params) {
  return fred::Interconnect(static_cast<int>(topology.out_links(node).size()), params.fred_middles);
}

// What each of the switch's ports carries, bytes per cycle: its link's rate.
fred::PortCapacity port_capacity(const topology::Topology& topology, int node) {
  fred::PortCapacity capacity;
  for (int l : topology.in_links(node))
    capacity.inputs.push_back(topology.links()[l].bytes_per_cycle);
  for (int l : topology.out_links(node))
    capacity.outputs.push_back(topology.links()[l].bytes_per_cycle);
  return capacity;
}

// "0-3, 8" for ranks {0, 1, 2, 3, 8}.
std::string ranks_text(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]) +
            (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return "{" + text + "}";
}

}  // namespace

// The router base takes its traversal time from the interconnect before the member is built.
FredSwitch::FredSwitch(sc_core::sc_module_name name, const FabricParams& params,
                       FabricShared shared, const topology::Topology& topology, int node)
    : Router(name, with_datapath(params, interconnect_of(topology, node, params)), shared, topology,
             node),
      interconnect_(interconnect_of(topology, node, params)),
      routes_(interconnect_, {}, port_capacity(topology, node)),
      reconfiguration_(cycle_ * static_cast<double>(params.fred_reconfiguration_cycles)),
      topology_(topology),
      node_(node),
      messages_(shared.messages) {}

void FredSwitch::on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                            const sc_time& arrival) {
  // The platform refuses flows below message fidelity (tb/config): one arriving here is a bug.
  if (unit.message && unit.message->flow)
    throw std::logic_error(std::string(name()) + ": in-network flows run at message fidelity only");
  Router::on_arrival(in_port, trans, unit, arrival);
}

void FredSwitch::pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                      const sc_time& head_at) {
  if (unit.message && unit.message->flow)
    reduce(in_port, unit, head_at);
  else
    Router::pass(in_port, trans, unit, head_at);
}

void FredSwitch::reduce(int in_port, const TransferExt& unit, const sc_time& head_at) {
  FlowTransfer& flow = *unit.message->flow;
  const topology::FlowHop hop = topology_.flow_hop(node_, in_port, flow.ends);
  const auto key = std::make_pair(static_cast<const FlowTransfer*>(&flow), hop.stage);
  Sum& sum = waiting_[key];
  sum.in_ports.push_back(in_port);
  sum.head = std::max(sum.head, head_at);
  sum.tail = std::max(sum.tail, unit.tail_at);
  if (static_cast<int>(sum.in_ports.size()) < hop.inputs) return;
  // The sum's head is ready once every input's head is in and the pipeline has passed; it streams
  // at the flow's rate and cannot end before the last input's tail is in (cut-through). It leaves
  // when the interconnect has a route for it.
  sc_time ready = align(sum.head) + delays_.routing + delays_.vc_alloc + delays_.switching;
  const uint64_t phase = (flow.tag >> 32) + 1;
  if (phase != phase_) ready += reconfiguration_;  // loads the new phase's configuration first
  phase_ = phase;
  const sc_time stream = cycle_ * (static_cast<double>(flow.bytes) / flow.carrier.bytes_per_cycle);
  const Departure departure = route(flow, hop.stage, std::move(sum.in_ports), hop.ports, ready,
                                    std::max(ready + stream, sum.tail));
  const sc_time depart = departure.start;
  TransferExt out = unit;
  out.tail_at = std::max(sum.tail + (depart - ready), departure.end);
  waiting_.erase(key);
  sc_time last_end = depart;
  for (int port : hop.ports) {
    const topology::Node& next = topology_.nodes()[outputs_[port].link.dst];
    if (topology::is_endpoint(next.kind)) {  // the sum for one output: a message of its own
      Message* m = messages_.acquire();
      m->id = flow.carrier.id;
      m->src = -1;
      m->dst = next.rank;
      m->bytes = flow.bytes;
      m->tag = flow.tag;
      m->bytes_per_cycle = flow.carrier.bytes_per_cycle;
      m->flow = &flow;
      out.message = m;
      out.dst = next.rank;
    } else {
      out.message = &flow.carrier;
      out.dst = -1;
    }
    const LinkSlot slot = transmit(port, out, depart);
    if (out.message != &flow.carrier) out.message->injected = slot.start;
    if (slot.start > depart) outputs_[port].stats.stall += slot.start - depart;
    last_end = std::max(last_end, slot.end);
  }
  if (Probe* p = probe()) {
    // The micro-switch functions this flow enables while its sum streams through: reductions
    // where it joins several inputs, distributions where it leaves on several outputs.
    p->switch_phase(node_, phase, depart);
    if (hop.inputs > 1) p->switch_function(node_, SwitchFunction::Reduce, depart, last_end);
    if (hop.ports.size() > 1)
      p->switch_function(node_, SwitchFunction::Distribute, depart, last_end);
  }
}

FredSwitch::Departure FredSwitch::route(const FlowTransfer& flow, int stage, std::vector<int> in,
                                        std::vector<int> out, const sc_time& ready,
                                        const sc_time& end) {
  routes_.forget_before(sc_core::sc_time_stamp().value());
  fred::Flow f;
  f.name = "flow " + std::to_string(flow.tag >> 32) + "." + std::to_string(flow.tag & 0xffffffffu) +
           (stage == 0 ? "" : " (on its way down)") + " from ranks " +
           ranks_text(flow.ends.inputs) + " to " + ranks_text(flow.ends.outputs);
  f.inputs = std::move(in);
  f.outputs = std::move(out);
  f.rate = flow.carrier.bytes_per_cycle;
  try {
    const auto admitted = routes_.admit(std::move(f), ready.value(), (end - ready).value(),
                                        params_.fred_conflicts_stop);
    return {sc_time::from_value(admitted.start),
            sc_time::from_value(admitted.start + admitted.length)};
  } catch (const fred::RoutingConflict& e) {
    throw FlowConflict(std::string(name()) + ": " + e.what() +
                       " (fabric.fred_conflicts: error; `wait` runs them one after the other)");
  }
}

}  // namespace wafersim::hw
