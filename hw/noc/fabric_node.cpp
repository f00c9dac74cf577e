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
      decoupled_(params.fidelity == Fidelity::Message),
      go_back_n_(params.go_back_n),
      flit_bytes_(params.flit_bytes),
      cycle_(1.0 / params.clock_ghz, SC_NS),
      topology_(shared.topology),
      node_(!outputs.empty()  ? outputs.front().src
            : !inputs.empty() ? inputs.front().dst
                              : -1),
      pool_(shared.pool),
      calendar_(shared.calendar),
      delays_{cycle_ * static_cast<double>(params.routing_delay_cycles),
              cycle_ * static_cast<double>(params.vc_alloc_delay_cycles),
              cycle_ * static_cast<double>(params.sw_alloc_delay_cycles +
                                           params.switch_traversal_delay_cycles),
              cycle_ * static_cast<double>(params.credit_delay_cycles),
              cycle_ * static_cast<double>(params.endpoint_delay_cycles)},
      params_(params),
      never_(sc_core::sc_max_time()) {
  head_delay_ = delays_.routing + delays_.vc_alloc + delays_.switching;
  for (const auto& l : inputs) add_input(l);
  for (const auto& l : outputs) add_output(l);
  // Each input's way back: the k-th output to its sender for the k-th input from it (links come in
  // pairs, and parallel links, such as a leaf's uplinks, pair up in order).
  for (size_t i = 0; i < inputs_.size(); ++i) {
    int k = 0;
    for (size_t j = 0; j < i; ++j) k += inputs_[j].link.src == inputs_[i].link.src;
    for (size_t o = 0; o < outputs_.size() && inputs_[i].reverse < 0; ++o)
      if (outputs_[o].link.dst == inputs_[i].link.src && k-- == 0)
        inputs_[i].reverse = static_cast<int>(o);
    if (params_.go_back_n && inputs_[i].reverse < 0)
      throw std::invalid_argument(std::string(basename()) + ": link " + inputs_[i].link.name +
                                  " has no link back for its ACKs (fabric.link_retry: go_back_n)");
  }
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
  for (Output& out : outputs_) {
    out.forward = out.socket->operator->();
    if (const auto* port = dynamic_cast<const Port*>(out.forward)) {
      out.next = &port->node();
      out.next_port = port->index();
      if (const char* lines = out.next->arrival_lines_)
        out.arrival_lines =
            lines + static_cast<size_t>(out.next_port) * params_.vcs * kArrivalLineBytes;
      // Passing through the next router from here uses this block's timing and no go-back-N.
      const FabricNode& next = *out.next;
      if (decoupled_ && next.passes_by_route() && next.decoupled_ && !go_back_n_ &&
          !next.go_back_n_ && next.cycle_ == cycle_ && next.head_delay_ == head_delay_ &&
          next.flit_bytes_ == flit_bytes_)
        out.hop_dst = kAnyHop;
    }
  }
  for (Input& in : inputs_) {
    in.backward = in.socket->operator->();
    if (const auto* port = dynamic_cast<const Port*>(in.backward)) {
      in.previous = &port->node();
      in.previous_port = port->index();
      in.previous_output = &in.previous->outputs_[in.previous_port];
    }
  }
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

void FabricNode::occupy(Output& out, TransferExt& unit, const LinkSlot& slot, bool first) {
  const sc_time now = this->now();
  unit.tail_at = slot.end + out.latency;
  // The link's work: the unit's bytes at the link's own rate (a message streaming slower leaves the
  // rest of the link to others).
  const sc_time work = decoupled() ? serialisation(out, unit.wire_bytes) : slot.stream.length;
  if (decoupled()) {
    out.bookings.forget_until(now);
    out.bookings.book(slot.start, slot.stream.length, slot.stream.bytes_per_cycle);
  } else {
    if (first) out.credits[unit.vc] -= static_cast<int>(unit.credits);
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
    if (!decoupled() && first && unit.credits)
      p->credit_change(out.link.id, unit.vc, -static_cast<int>(unit.credits), now);
  }
}

tlm::tlm_sync_enum FabricNode::deliver(Output& out, tlm::tlm_generic_payload& trans,
                                       TransferExt& unit, const LinkSlot& slot) {
  const uint64_t head_bytes = std::min<uint64_t>(unit.wire_bytes, flit_bytes_);
  const sc_time arrival = slot.start + serialisation(out, head_bytes) + out.latency;
  if (out.next) {       // the BEGIN_REQ's effect, without the socket (see the header)
    if (decoupled()) {  // arrive()'s first step, without reading the next block's fidelity
      if (out.hop_dst == unit.dst)  // the next router's route for it, known: through it from here
        pass_through(*out.hop_out, trans, unit, arrival);
      else
        out.next->pass(out.next_port, trans, unit, arrival);
      return tlm::TLM_COMPLETED;
    }
    return out.next->arrive(out.next_port, trans, unit, arrival);
  }
  tlm::tlm_phase phase = kUnit;
  sc_time delay = arrival - now();
  return out.forward->nb_transport_fw(trans, phase, delay);
}

tlm::tlm_sync_enum FabricNode::send(Output& out, tlm::tlm_generic_payload& trans, TransferExt& unit,
                                    const LinkSlot& slot) {
  occupy(out, unit, slot, true);
  if (go_back_n_) {  // (this block's own outputs only: passing through is off with go-back-N)
    const int port = static_cast<int>(&out - outputs_.data());
    unit.link_seq = static_cast<uint32_t>(out.retry.next_seq++);
    unit.attempt = 0;
    if (!survives(port, trans, unit, slot)) return tlm::TLM_ACCEPTED;  // the link layer keeps it
  }
  return deliver(out, trans, unit, slot);
}

void FabricNode::pass_through(Output& out, tlm::tlm_generic_payload& trans, TransferExt& unit,
                              const sc_time& head_at) {
  prefetch_next_hop(out, unit.dst);
  const sc_time depart = align(head_at) + head_delay_;
  const LinkSlot slot = slot_for(out, unit, depart);
  send(out, trans, unit, slot);
  if (slot.start > depart) out.stats.stall += slot.start - depart;
}

bool FabricNode::survives(int port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                          const LinkSlot& slot) {
  Output& out = outputs_[port];
  RetrySender& retry = out.retry;
  if (!retry.held.empty()) {  // after a lost packet: the receiver discards it, it goes again
    retry.held.push_back(&trans);
    return false;
  }
  const LinkFault fault =
      draw_link_fault(params_.fault_seed, out.link.id, unit.link_seq, unit.attempt,
                      params_.drop_probability, params_.corrupt_probability);
  if (fault == LinkFault::None) return true;
  out.stats.faults++;
  retry.held.push_back(&trans);
  if (fault == LinkFault::Drop) {  // the sender finds out when the timeout passes
    retry.resend_on_nack = false;
    retry.resend_at = slot.start + cycle_ * static_cast<double>(params_.retransmit_timeout_cycles);
    schedule({retry.resend_at, port, LinkTask::Kind::Resend, 0});
  } else {  // it arrives, fails its check, and the receiver NACKs it
    retry.resend_on_nack = true;
    LinkPayload* copy = pool_.acquire();
    copy->unit = unit;
    copy->unit.control = TransferExt::Control::Corrupted;
    if (deliver(out, *copy, copy->unit, slot) == tlm::TLM_COMPLETED) copy->release();
  }
  return false;
}

void FabricNode::resend(int port) {
  Output& out = outputs_[port];
  std::vector<tlm::tlm_generic_payload*> again;
  again.swap(out.retry.held);
  for (tlm::tlm_generic_payload* trans : again) {
    TransferExt& unit = *transfer(*trans);
    unit.attempt++;
    out.stats.resent++;
    const LinkSlot slot = next_free_slot(out, unit.wire_bytes);
    occupy(out, unit, slot, false);
    if (survives(port, *trans, unit, slot)) deliver(out, *trans, unit, slot);
  }
}

FabricNode::LinkSlot FabricNode::next_free_slot(const Output& out, uint64_t wire_bytes) const {
  LinkSlot slot;
  slot.stream = {out.bytes_per_cycle, serialisation(out, wire_bytes)};
  slot.start = std::max(now(), out.link_free);
  slot.end = slot.start + slot.stream.length;
  return slot;
}

sc_time FabricNode::ack_quiet() const {
  return cycle_ * (params_.retransmit_timeout_cycles / 2.0);
}

void FabricNode::acknowledge(int in_port, const sc_time& at) {
  RetryReceiver& retry = inputs_[in_port].retry;
  retry.in_order++;
  retry.last_in = at;
  if (retry.in_order - retry.acked >= params_.ack_every_packets) {
    retry.acked = retry.in_order;
    schedule({at, inputs_[in_port].reverse, LinkTask::Kind::Ack, retry.acked});
  } else if (!retry.flush_due) {  // acknowledges the rest once the link has been quiet a while
    retry.flush_due = true;
    schedule({at + ack_quiet(), in_port, LinkTask::Kind::AckIfQuiet, 0});
  }
}

void FabricNode::on_control(int in_port, const TransferExt& unit, const sc_time& at) {
  switch (unit.control) {
    case TransferExt::Control::Ack: {  // for what this block sent the other way
      RetrySender& retry = outputs_[inputs_[in_port].reverse].retry;
      retry.acked = unit.link_seq;  // ACKs come in order (the 32 bits wrap on a long run)
      break;
    }
    case TransferExt::Control::Nack: {  // the lost packet and those after it go again
      const int port = inputs_[in_port].reverse;
      RetrySender& retry = outputs_[port].retry;
      if (!retry.held.empty() && retry.resend_on_nack) {
        retry.resend_on_nack = false;
        retry.resend_at = at;
        schedule({at, port, LinkTask::Kind::Resend, 0});
      }
      break;
    }
    case TransferExt::Control::Corrupted:  // fails its check: discarded, and NACKed
      schedule({at, inputs_[in_port].reverse, LinkTask::Kind::Nack, unit.link_seq});
      break;
    case TransferExt::Control::Data:
      break;
  }
}

void FabricNode::schedule(const LinkTask& task) {
  link_tasks_.insert(task);
  calendar_.wake(link_clock_, task.at);
}

void FabricNode::link_layer_round() {
  count_event();
  const sc_time now = this->now();
  while (!link_tasks_.empty() && link_tasks_.front().at <= now) {
    const LinkTask task = link_tasks_.front();
    link_tasks_.pop_front();
    switch (task.kind) {
      case LinkTask::Kind::Resend: {  // a timeout or NACK: send again (unless done since)
        RetrySender& retry = outputs_[task.port].retry;
        if (!retry.held.empty() && !retry.resend_on_nack && retry.resend_at <= now)
          resend(task.port);
        break;
      }
      case LinkTask::Kind::AckIfQuiet: {  // input task.port quiet long enough: ACK the rest
        RetryReceiver& retry = inputs_[task.port].retry;
        if (retry.last_in + ack_quiet() > now) {
          schedule({retry.last_in + ack_quiet(), task.port, task.kind, 0});
          break;
        }
        retry.flush_due = false;
        if (retry.in_order > retry.acked) {
          retry.acked = retry.in_order;
          schedule({now, inputs_[task.port].reverse, LinkTask::Kind::Ack, retry.acked});
        }
        break;
      }
      case LinkTask::Kind::Ack:
      case LinkTask::Kind::Nack: {  // one flit on the control VC of the link back
        Output& out = outputs_[task.port];
        LinkPayload* control = pool_.acquire();
        TransferExt& unit = control->unit;
        unit = TransferExt{};
        unit.control = task.kind == LinkTask::Kind::Ack ? TransferExt::Control::Ack
                                                        : TransferExt::Control::Nack;
        unit.link_seq = static_cast<uint32_t>(task.seq);
        unit.bytes = 0;
        unit.wire_bytes = params_.flit_bytes;
        unit.flits = 1;
        unit.credits = 0;
        unit.vc = params_.vcs - 1;
        unit.dst = -1;
        const LinkSlot slot = next_free_slot(out, unit.wire_bytes);
        occupy(out, unit, slot, false);
        out.stats.controls++;
        if (deliver(out, *control, unit, slot) == tlm::TLM_COMPLETED) control->release();
        break;
      }
    }
  }
  if (!link_tasks_.empty()) calendar_.wake(link_clock_, link_tasks_.front().at);
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
  const Input& in = inputs_[in_port];
  const sc_time at = after + delays_.credit;
  if (in.previous) {  // the END_REQ's effect, without the socket (see the header)
    in.previous->take_credit(*in.previous_output, in.previous_port, trans, at);
    return;
  }
  tlm::tlm_phase phase = kCredit;
  sc_time delay = at - now();
  in.backward->nb_transport_bw(trans, phase, delay);
}

tlm::tlm_sync_enum FabricNode::forward(int port, tlm::tlm_generic_payload& trans,
                                       tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != kUnit) throw std::logic_error(std::string(name()) + ": unexpected phase");
  return arrive(port, trans, *transfer(trans), now() + delay);
}

tlm::tlm_sync_enum FabricNode::arrive(int port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                                      const sc_time& arrival) {
  if (decoupled()) {
    pass(port, trans, unit, arrival);
    return tlm::TLM_COMPLETED;
  }
  count_event();
  if (go_back_n_) {
    if (unit.control != TransferExt::Control::Data) {  // the link layer's, not the block's
      on_control(port, unit, arrival);
      return tlm::TLM_COMPLETED;
    }
    acknowledge(port, arrival);
  }
  on_arrival(port, trans, unit, arrival);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum FabricNode::backward(int port, tlm::tlm_generic_payload& trans,
                                        tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != kCredit || decoupled())
    throw std::logic_error(std::string(name()) + ": unexpected phase");
  take_credit(outputs_[port], port, trans, now() + delay);
  return tlm::TLM_ACCEPTED;
}

void FabricNode::take_credit(Output& out, int port, tlm::tlm_generic_payload& trans,
                             const sc_time& at) {
  const TransferExt& unit = *transfer(trans);
  const int credits = static_cast<int>(unit.credits);
  out.returning.insert({at, unit.vc, credits});
  if (Probe* p = probe()) p->credit_change(out.link.id, unit.vc, credits, at);
  trans.release();
  if (out.credit_wait) {
    out.credit_wait = false;
    on_credit_returning(port, at);
  }
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
