#include "hw/noc/fabric_node.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "hw/proto/event_counter.h"
#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::SC_NS;
using sc_core::sc_time;

const char* to_string(Fidelity f) {
  switch (f) {
    case Fidelity::Flit:
      return "flit";
    case Fidelity::Packet:
      return "packet";
    case Fidelity::Message:
      return "message";
  }
  return "?";
}

Fidelity fidelity_from_string(const std::string& text) {
  if (text == "flit") return Fidelity::Flit;
  if (text == "packet") return Fidelity::Packet;
  if (text == "message") return Fidelity::Message;
  throw std::invalid_argument("unknown fidelity '" + text + "' (expected flit, packet or message)");
}

FabricNode::FabricNode(sc_core::sc_module_name name, const FabricParams& params,
                       FabricShared shared, const std::vector<topology::Link>& inputs,
                       const std::vector<topology::Link>& outputs)
    : sc_module(name),
      params_(params),
      cycle_(1.0 / params.clock_ghz, SC_NS),
      delays_{cycle_ * static_cast<double>(params.routing_delay_cycles),
              cycle_ * static_cast<double>(params.vc_alloc_delay_cycles),
              cycle_ * static_cast<double>(params.sw_alloc_delay_cycles +
                                           params.switch_traversal_delay_cycles),
              cycle_ * static_cast<double>(params.credit_delay_cycles),
              cycle_ * static_cast<double>(params.endpoint_delay_cycles)},
      never_(sc_core::sc_max_time()),
      pool_(shared.pool),
      calendar_(shared.calendar) {
  for (const auto& l : inputs) add_input(l);
  for (const auto& l : outputs) add_output(l);
}

FabricNode::~FabricNode() {
  while (!outputs_.empty()) outputs_.pop_back();
  while (!inputs_.empty()) inputs_.pop_back();
}

void FabricNode::add_output(const topology::Link& link) {
  int port = static_cast<int>(outputs_.size());
  Output out;
  out.socket = std::make_unique<InitiatorSocket>(("out_" + std::to_string(port)).c_str());
  out.port = std::make_unique<Port>(*this, port);
  out.socket->bind(*out.port);
  out.link = link;
  out.latency = cycle_ * static_cast<double>(link.latency_cycles);
  out.bytes_per_cycle = link.bytes_per_cycle;
  out.bookings = LinkCalendar(link.bytes_per_cycle, cycle_);
  out.flit_time = cycle_ * (static_cast<double>(params_.flit_bytes) / out.bytes_per_cycle);
  out.credits.assign(params_.vcs, static_cast<int>(params_.buffer_flits));
  out.free_vcs = params_.vcs >= 64 ? ~uint64_t{0} : (uint64_t{1} << params_.vcs) - 1;
  outputs_.push_back(std::move(out));
}

void FabricNode::end_of_elaboration() {
  for (Output& out : outputs_) out.forward = out.socket->operator->();
  for (Input& in : inputs_) in.backward = in.socket->operator->();
}

void FabricNode::add_input(const topology::Link& link) {
  int port = static_cast<int>(inputs_.size());
  Input in;
  in.socket = std::make_unique<TargetSocket>(("in_" + std::to_string(port)).c_str());
  in.port = std::make_unique<Port>(*this, port);
  in.socket->bind(*in.port);
  in.link = link;
  inputs_.push_back(std::move(in));
}

tlm::tlm_sync_enum FabricNode::send(int port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                                    const LinkSlot& slot) {
  Output& out = outputs_[port];
  const sc_time now = this->now();
  const uint64_t head_bytes = std::min<uint64_t>(unit.wire_bytes, params_.flit_bytes);
  unit.tail_at = slot.end + out.latency;
  // The link's work: the unit's bytes at the link's own rate (a message streaming slower leaves the
  // rest of the link to others).
  const sc_time work = decoupled() ? serialisation(out, unit.wire_bytes) : slot.stream.length;
  if (decoupled()) {
    out.bookings.forget_until(now);
    out.bookings.book(slot.start, slot.stream.length, slot.stream.bytes_per_cycle);
  } else {
    out.credits[unit.vc] -= static_cast<int>(unit.credits);
    // A packet fed slower than this link (its tail still arriving) takes the link for its own
    // serialisation only: the rest of the link's rate goes to other VCs' packets, whose flits
    // interleave with its own. A flit is the link's unit and holds it whole.
    out.link_free =
        params_.fidelity == Fidelity::Packet ? slot.start + slot.stream.length : slot.end;
  }
  out.stats.units++;
  out.stats.bytes += unit.wire_bytes;
  out.stats.busy += work;
  if (Probe* p = probe()) {
    p->link_unit(out.link.id, slot.start, slot.start + work, unit);
    if (!decoupled()) p->credit_change(out.link.id, unit.vc, -static_cast<int>(unit.credits), now);
  }

  tlm::tlm_phase phase = kUnit;
  sc_time delay = slot.start + serialisation(out, head_bytes) + out.latency - now;
  return out.forward->nb_transport_fw(trans, phase, delay);
}

FabricNode::LinkSlot FabricNode::transmit(int port, const TransferExt& unit,
                                          const sc_time& depart) {
  const LinkSlot slot = slot_for(outputs_[port], unit, depart);
  LinkPayload* trans = pool_.acquire();
  trans->unit = unit;
  if (send(port, *trans, trans->unit, slot) == tlm::TLM_COMPLETED) trans->release();
  return slot;
}

void FabricNode::release(int in_port, tlm::tlm_generic_payload& trans, const sc_time& after) {
  tlm::tlm_phase phase = kCredit;
  sc_time delay = after - now() + delays_.credit;
  inputs_[in_port].backward->nb_transport_bw(trans, phase, delay);
}

tlm::tlm_sync_enum FabricNode::forward(int port, tlm::tlm_generic_payload& trans,
                                       tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != kUnit) throw std::logic_error(std::string(name()) + ": unexpected phase");
  TransferExt* unit = transfer(trans);
  unit->port = port;
  const sc_time arrival = now() + delay;
  if (decoupled()) {
    pass(port, trans, *unit, arrival);
    return tlm::TLM_COMPLETED;
  }
  count_event();
  on_arrival(port, trans, *unit, arrival);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum FabricNode::backward(int port, tlm::tlm_generic_payload& trans,
                                        tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != kCredit || decoupled())
    throw std::logic_error(std::string(name()) + ": unexpected phase");
  const TransferExt& unit = *transfer(trans);
  Output& out = outputs_[port];
  const sc_time at = now() + delay;
  const int credits = static_cast<int>(unit.credits);
  out.returning.insert({at, unit.vc, credits});
  if (Probe* p = probe()) p->credit_change(out.link.id, unit.vc, credits, at);
  trans.release();
  if (out.credit_wait) {
    out.credit_wait = false;
    on_credit_returning(port, at);
  }
  return tlm::TLM_ACCEPTED;
}

void FabricNode::collect_credits(Output& out, const sc_time& now) {
  while (!out.returning.empty() && out.returning.front().at <= now) {
    out.credits[out.returning.front().vc] += out.returning.front().credits;
    out.returning.pop_front();
  }
}

sc_time FabricNode::next_credit(Output& out) {
  if (!out.returning.empty()) return out.returning.front().at;
  out.credit_wait = true;
  return never_;
}

}  // namespace wafersim::hw
