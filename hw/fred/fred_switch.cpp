#include "hw/fred/fred_switch.h"

#include <algorithm>
#include <iterator>
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
      control_(interconnect_),
      reconfiguration_(cycle_ * static_cast<double>(params.fred_reconfiguration_cycles)),
      messages_(shared.messages) {}

void FredSwitch::on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                            const sc_time& arrival) {
  if (!unit.message || !unit.message->flow)
    return Router::on_arrival(in_port, trans, unit, arrival);
  // The platform refuses flows at flit fidelity (tb/config): a flit arriving here is a bug.
  if (!unit.head || !unit.tail)
    throw std::logic_error(std::string(name()) +
                           ": in-network flows run at packet or message "
                           "fidelity, not flit");
  gather(in_port, trans, unit, arrival);
}

void FredSwitch::pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                      const sc_time& head_at) {
  if (unit.message && unit.message->flow)
    reduce(in_port, unit, head_at);
  else
    Router::pass(in_port, trans, unit, head_at);
}

size_t FredSwitch::buffered_units() const {
  return Router::buffered_units() + buffered_packets_;
}

Message* FredSwitch::delivery(FlowTransfer& flow, int port) {
  Message* m = messages_.acquire();
  m->id = flow.carrier.id;
  m->src = -1;
  m->dst = topology_.nodes()[outputs_[port].link.dst].rank;
  m->bytes = flow.bytes;
  m->tag = flow.tag;
  m->bytes_per_cycle = flow.carrier.bytes_per_cycle;
  m->flow = &flow;
  return m;
}

sc_time FredSwitch::load_phase(uint64_t phase, const sc_time& at) {
  if (phase == phase_) return at;
  phase_ = phase;
  if (Probe* p = probe()) p->switch_phase(node_, phase, at);
  return at + reconfiguration_;
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
  // The sum's head is ready once every input's head is in and the pipeline has passed, and the
  // switch has its phase's configuration loaded; it streams at the flow's rate and cannot end
  // before the last input's tail is in (cut-through). It leaves when the interconnect has a route
  // for it.
  const sc_time ready = load_phase(phase_of(flow), align(sum.head) + head_delay_);
  const sc_time stream = cycle_ * (static_cast<double>(flow.bytes) / flow.carrier.bytes_per_cycle);
  const Departure departure = route(flow, hop.stage, std::move(sum.in_ports), hop.ports, ready,
                                    std::max(ready + stream, sum.tail));
  TransferExt out = unit;
  sc_time last_end = departure.whole.start;
  for (size_t k = 0; k < hop.ports.size(); ++k) {
    const int port = hop.ports[k];
    // Split into one flow per output (fred_conflicts: unicast), each output has its own span.
    const Departure::Span& span =
        departure.outputs.empty() ? departure.whole : departure.outputs[k];
    out.tail_at = std::max(sum.tail + (span.start - ready), span.end);
    // Each endpoint gets the sum as a message of its own; switches get the flow's carrier.
    out.message = topology::is_endpoint(topology_.nodes()[outputs_[port].link.dst].kind)
                      ? delivery(flow, port)
                      : &flow.carrier;
    out.dst = out.message->dst;
    const LinkSlot slot = transmit(port, out, span.start);
    if (out.message != &flow.carrier) out.message->injected = slot.start;
    if (slot.start > span.start) outputs_[port].stats.stall += slot.start - span.start;
    last_end = std::max(last_end, slot.end);
  }
  waiting_.erase(key);
  show_functions(hop, departure.whole.start, last_end);
}

void FredSwitch::show_functions(const topology::FlowHop& hop, const sc_time& start,
                                const sc_time& end) const {
  // The micro-switch functions a flow enables while its sum streams through: reductions where it
  // joins several inputs, distributions where it leaves on several outputs.
  Probe* p = probe();
  if (!p) return;
  if (hop.inputs > 1) p->switch_function(node_, SwitchFunction::Reduce, start, end);
  if (hop.ports.size() > 1) p->switch_function(node_, SwitchFunction::Distribute, start, end);
}

void FredSwitch::gather(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                        const sc_time& arrival) {
  FlowTransfer& flow = *unit.message->flow;
  auto known = stream_of_.find({flow.tag, in_port});
  if (known == stream_of_.end()) {
    topology::FlowHop hop = topology_.flow_hop(node_, in_port, flow.ends);
    const StreamKey key{priority(flow.traffic_class), flow.tag, hop.stage};
    known = stream_of_.emplace(std::make_pair(flow.tag, in_port), key).first;
    FlowStream& stream = streams_[key];
    if (!stream.flow) {
      stream.flow = &flow;
      stream.deliveries.assign(hop.ports.size(), nullptr);
      stream.hop = std::move(hop);
      const uint64_t packet = params_.packet_bytes;
      stream.count = std::max<uint64_t>(1, (flow.bytes + packet - 1) / packet);
    }
    stream.in_ports.push_back(in_port);
  }
  FlowStream& stream = streams_[known->second];
  const topology::FlowHop& hop = stream.hop;
  PacketSum& sum = stream.packets[unit.packet];
  sum.parts.push_back({in_port, unit.vc, &trans});
  sum.head = std::max(sum.head, arrival);
  sum.tail = std::max(sum.tail, unit.tail_at);
  sum.unit = unit;
  ++buffered_packets_;
  if (Probe* p = probe()) p->buffer_change(inputs_[in_port].link.id, unit.vc, 1, arrival);
  if (static_cast<int>(sum.parts.size()) < hop.inputs) return;
  sum.ready = align(sum.head) + head_delay_;
  wake_at(sum.ready);
}

void FredSwitch::on_wake() {
  Router::on_wake();
  if (!streams_.empty()) send_sums();
}

bool FredSwitch::has_gathered(const FlowStream& stream) {
  const auto p = stream.packets.find(stream.next);
  return p != stream.packets.end() && static_cast<int>(p->second.parts.size()) == stream.hop.inputs;
}

void FredSwitch::send_sums() {
  const sc_time now = this->now();
  sc_time next = never_;
  if (loaded_at_ > now) {  // a configuration is loading
    wake_at(loaded_at_);
    return;
  }
  // The switch serves the loaded phase's flows while they have packets to send, and loads
  // another phase's configuration when they have none (without a reconfiguration latency every
  // phase runs at once).
  bool served = false;
  for (auto& [key, stream] : streams_)
    if (reconfiguration_ == sc_core::SC_ZERO_TIME || phase_of(*stream.flow) == phase_)
      served |= send_packets(stream, now, next) || has_gathered(stream);
  if (!served)
    for (auto& [key, stream] : streams_)
      if (has_gathered(stream) && stream.packets.at(stream.next).ready <= now) {
        loaded_at_ = load_phase(phase_of(*stream.flow), now);
        next = std::min(next, loaded_at_);
        break;
      }
  for (auto it = streams_.begin(); it != streams_.end();) {
    const FlowStream& stream = it->second;
    if (stream.next < stream.count) {
      ++it;
      continue;
    }
    for (int in_port : stream.in_ports) stream_of_.erase({stream.flow->tag, in_port});
    it = streams_.erase(it);
  }
  if (next != never_) wake_at(std::max(next, now + cycle_));
}

bool FredSwitch::send_packets(FlowStream& stream, const sc_time& now, sc_time& next) {
  FlowTransfer& flow = *stream.flow;
  const std::vector<int>& ports = stream.hop.ports;
  bool sent = false;
  while (has_gathered(stream)) {
    auto packet = stream.packets.find(stream.next);
    PacketSum& sum = packet->second;
    if (sum.ready > now) {
      next = std::min(next, sum.ready);
      break;
    }
    if (phase_ != phase_of(flow)) load_phase(phase_of(flow), now);  // no latency: see send_sums
    // A multicast leaves on all its outputs at once: each needs its link and a VC with room for
    // the packet downstream.
    const uint32_t credits = std::min(sum.unit.flits, params_.buffer_flits);
    vcs_.assign(ports.size(), -1);
    bool go = true;
    for (size_t k = 0; k < ports.size(); ++k) {
      Output& out = outputs_[ports[k]];
      collect_credits(out, now);
      if (!link_accepts(out, now)) {
        next = std::min(next, accepts_from(out));
        go = false;
      } else if ((vcs_[k] = class_vc(out, flow, credits)) < 0) {
        next = std::min(next, next_credit(out));
        go = false;
      }
    }
    if (!go) break;
    TransferExt unit = sum.unit;
    unit.packet = stream.next;
    unit.tail_at = sum.tail;
    unit.vc_class = 0;
    unit.credits = credits;
    sc_time last_end = now;
    for (size_t k = 0; k < ports.size(); ++k) {
      const int port = ports[k];
      Message*& delivery = stream.deliveries[k];
      if (!delivery && topology::is_endpoint(topology_.nodes()[outputs_[port].link.dst].kind))
        delivery = this->delivery(flow, port);
      unit.message = delivery ? delivery : &flow.carrier;
      unit.dst = unit.message->dst;
      unit.vc = vcs_[k];
      const LinkSlot slot = transmit(port, unit, now);
      if (delivery && stream.next == 0) delivery->injected = slot.start;
      if (now > sum.ready) outputs_[port].stats.stall += now - sum.ready;
      last_end = std::max(last_end, slot.end);
    }
    // The inputs' slots are free once the sum has been read out of them.
    for (const Part& part : sum.parts) {
      if (Probe* p = probe()) p->buffer_change(inputs_[part.in_port].link.id, part.vc, -1, now);
      release(part.in_port, *part.trans, last_end);
    }
    buffered_packets_ -= sum.parts.size();
    show_functions(stream.hop, now, last_end);
    stream.packets.erase(packet);
    ++stream.next;
    sent = true;
  }
  return sent;
}

int FredSwitch::class_vc(Output& out, const FlowTransfer& flow, uint32_t credits) const {
  // A class's flows keep to its VC on every link, in the order the NICs sent them: flows that
  // wait for each other's packets then never hold the slots of another class's.
  const int v = flow.vc(params_.vcs);
  return (out.free_vcs >> v & 1) && out.credits[v] >= static_cast<int>(credits) ? v : -1;
}

std::string FredSwitch::flow_name(uint64_t tag, const topology::FlowEnds& ends, int stage) {
  return "flow " + std::to_string(tag >> 32) + "." + std::to_string(tag & 0xffffffffu) +
         (stage == 0 ? "" : " (on its way down)") + " from ranks " + ranks_text(ends.inputs) +
         " to " + ranks_text(ends.outputs);
}

fred::OnConflict FredSwitch::on_conflict() const {
  using Conflicts = FabricParams::FredConflicts;
  return params_.fred_conflicts == Conflicts::Error     ? fred::OnConflict::Stop
         : params_.fred_conflicts == Conflicts::Unicast ? fred::OnConflict::Split
                                                        : fred::OnConflict::Wait;
}

FlowConflict FredSwitch::conflict(const fred::RoutingConflict& e) const {
  return FlowConflict(std::string(name()) + ": " + e.what() +
                      " (fabric.fred_conflicts: error; `wait` runs them one after the other, "
                      "`unicast` splits a flow into one per output)");
}

void FredSwitch::configure_flows(const std::vector<PlannedFlow>& flows) {
  if (flows.empty()) return;
  std::vector<fred::ControlUnit::PhaseFlow> here;
  for (const PlannedFlow& planned : flows)
    for (topology::FlowPassage& passage : topology_.flow_passages(node_, planned.ends)) {
      fred::Flow f;
      f.name = flow_name(planned.tag, planned.ends, passage.hop.stage);
      f.inputs = std::move(passage.in_ports);
      f.outputs = std::move(passage.hop.ports);
      here.push_back({config_key(planned.tag, passage.hop.stage), std::move(f)});
    }
  if (here.empty()) return;
  try {
    control_.configure(phase_of_tag(flows.front().tag), here, on_conflict());
  } catch (const fred::RoutingConflict& e) {
    throw conflict(e);
  }
}

FredSwitch::Departure FredSwitch::route(const FlowTransfer& flow, int stage, std::vector<int> in,
                                        std::vector<int> out, const sc_time& ready,
                                        const sc_time& end) {
  routes_.forget_before(sc_core::sc_time_stamp().value());
  fred::Flow f;
  f.name = flow_name(flow.tag, flow.ends, stage);
  f.inputs = std::move(in);
  f.outputs = std::move(out);
  f.rate = flow.carrier.bytes_per_cycle;
  try {
    const auto admitted =
        routes_.admit(std::move(f), ready.value(), (end - ready).value(), on_conflict(),
                      control_.route(phase_of(flow), config_key(flow.tag, stage)));
    (admitted.configured ? configured_routes_ : online_routes_) += 1;
    const auto span = [](const fred::RouteSchedule::Admission& a) {
      return Departure::Span{sc_time::from_value(a.start), sc_time::from_value(a.start + a.length)};
    };
    Departure departure{span(admitted), {}};
    for (const auto& piece : admitted.outputs) departure.outputs.push_back(span(piece));
    return departure;
  } catch (const fred::RoutingConflict& e) {
    throw conflict(e);
  }
}

}  // namespace wafersim::hw
