#include "hw/npu/network_interface.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "hw/proto/event_counter.h"
#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::sc_time;

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

NetworkInterface::NetworkInterface(sc_core::sc_module_name name, const FabricParams& params,
                                   FabricShared shared, CallbackQueue& callbacks,
                                   const std::vector<topology::Link>& from_network,
                                   const std::vector<topology::Link>& to_network)
    : FabricNode(name, params, shared, from_network, to_network),
      callbacks_(callbacks),
      endpoint_delay_(delays_.endpoint),
      packet_bytes_(params.packet_bytes),
      header_bytes_(params.header_bytes),
      groups_(to_network.size()) {
  for (PortGroup& g : groups_) {
    g.vc_locked.assign(params.vcs, false);
    g.lane_users.assign(lane_count(), 0);
  }
}

void NetworkInterface::send(Message* message) {
  // A message to itself (synthetic traffic sends some) goes out to the router and back.
  // A flow's contribution leaves on the NPU's one port into the tree.
  const int port = message->flow ? 0 : peer_route(*message).port;
  if (decoupled()) {
    send_whole(port, message);
    return;
  }
  PortGroup& g = groups_[port];
  Outgoing o;
  o.message = message;
  o.eligible = now() + endpoint_delay_;
  o.behind = g.queued_to[order_key(*message)]++ > 0;
  if (message->flow) ++g.flows_queued;
  g.outgoing.push_back(std::move(o));
  if (Probe* p = probe()) p->nic_queue(message->src, queued());
  wake_at(g.outgoing.back().eligible);
}

int NetworkInterface::queued() const {
  size_t n = 0;
  for (const PortGroup& g : groups_) n += g.outgoing.size();
  return static_cast<int>(n);
}

void NetworkInterface::on_wake() {
  for (size_t port = 0; port < groups_.size(); ++port)
    if (!groups_[port].outgoing.empty()) inject_round(static_cast<int>(port));
}

void NetworkInterface::sent(Message* message, const sc_time& at) {
  if (on_sent)
    callbacks_.at(
        at, [this, message]() { on_sent(message); }, &on_sent, message);
}

void NetworkInterface::send_whole(int port, Message* message) {
  prefetch_visit(outputs_[port]);
  Outgoing whole;
  whole.message = message;
  TransferExt unit;
  next_unit(whole, unit);
  const sc_time depart = align(now() + endpoint_delay_);
  if (message->flow) {
    message->bytes_per_cycle = message->flow->carrier.bytes_per_cycle;
  } else {
    message->bytes_per_cycle = peer_route(*message).bytes_per_cycle;
  }
  unit.vc = 0;
  unit.credits = 0;
  unit.tail_at = depart;
  prefetch_next_hop(outputs_[port], message->dst);
  const LinkSlot slot = transmit(port, unit, depart);
  message->injected = slot.start;
  if (slot.start > depart) outputs_[port].stats.stall += slot.start - depart;
  sent(message, slot.end);
}

NetworkInterface::PeerRoute NetworkInterface::cached_route(const Message& m) {
  // Hashed: peers of a dimension sit a stride apart, and strides are often a multiple of the size.
  const uint32_t h = static_cast<uint32_t>(m.dst) * 2654435761u;
  PeerRoute& route = peer_routes_[h >> 26];
  if (route.dst != m.dst)
    route = {m.dst, std::max(0, topology_.next_port(node_, m.dst)),
             decoupled() ? topology_.path_bytes_per_cycle(m.src, m.dst) : 0};
  return route;
}

bool NetworkInterface::next_unit(const Outgoing& o, TransferExt& unit) const {
  const Message& m = *o.message;
  const uint64_t flit = flit_bytes_;
  unit.message = o.message;
  unit.dst = m.dst;
  unit.vc_class = 0;
  unit.packet = o.packet;
  switch (decoupled() ? Fidelity::Message : params_.fidelity) {
    case Fidelity::Message: {
      uint64_t packets = std::max<uint64_t>(1, ceil_div(m.bytes, packet_bytes_));
      unit.bytes = m.bytes;
      unit.wire_bytes = std::max<uint64_t>(1, m.bytes + packets * header_bytes_);
      unit.flits = static_cast<uint32_t>(ceil_div(unit.wire_bytes, flit));
      unit.head = unit.tail = true;
      return true;
    }
    case Fidelity::Packet:
    case Fidelity::Flit: {
      uint64_t payload = std::min<uint64_t>(packet_bytes_, m.bytes - o.sent_bytes);
      uint64_t wire = std::max<uint64_t>(1, payload + header_bytes_);
      bool last_packet = o.sent_bytes + payload >= m.bytes;
      if (params_.fidelity == Fidelity::Packet) {
        unit.bytes = payload;
        unit.wire_bytes = wire;
        unit.flits = static_cast<uint32_t>(ceil_div(wire, flit));
        unit.head = unit.tail = true;
        return last_packet;
      }
      uint64_t flits = ceil_div(wire, flit);
      unit.head = o.flit == 0;
      unit.tail = o.flit + 1 == flits;
      unit.wire_bytes = unit.tail ? wire - (flits - 1) * flit : flit;
      unit.bytes = unit.tail ? payload : 0;
      unit.flits = 1;
      return last_packet && unit.tail;
    }
  }
  return true;
}

// A message's packets alternate between two VCs of the injection class ("lanes"): while one packet
// streams, the next waits at the head of the other VC and is routed and allocated, so packets
// follow each other without a pipeline bubble; and a message never holds more than two VCs, so
// another message can pass it when it is blocked (docs/validation.md). Its pair is chosen when its
// first packet leaves: the one fewest other messages in this NIC use (so that it does not queue
// behind one of them if that one blocks), then the one with the most free buffer downstream, then
// the one its id points at (which spreads messages over the VCs).
int NetworkInterface::first_lane(int port, const Outgoing& o) const {
  if (o.lane >= 0) return o.lane;
  const PortGroup& g = groups_[port];
  const int classes = params_.vc_classes, lanes = lane_count(), spread = lane_spread();
  int best = 0;
  std::pair<int, int> best_score{INT_MAX, 0};  // (users, -free credits): lower is better
  for (int k = 0; k < lanes; ++k) {
    const int lane = static_cast<int>((o.message->id + k) % lanes);
    std::pair<int, int> score{0, 0};
    for (int j = 0; j < spread; ++j) {
      const int l = (lane + j) % lanes;
      score.first += g.lane_users[l];
      score.second -= outputs_[port].credits[l * classes];
    }
    if (score < best_score) {
      best = lane;
      best_score = score;
      if (score.first == 0 && -score.second == spread * static_cast<int>(params_.buffer_flits))
        break;  // unused and empty downstream: nothing beats it
    }
  }
  return best;
}

void NetworkInterface::use_lanes(PortGroup& group, int first, int delta) {
  for (int j = 0; j < lane_spread(); ++j) group.lane_users[(first + j) % lane_count()] += delta;
}

int NetworkInterface::pick_vc(int port, const Outgoing& o, int first, uint32_t credits) const {
  const Output& out = outputs_[port];
  if (o.vc >= 0) return out.credits[o.vc] >= static_cast<int>(credits) ? o.vc : -1;
  if (const FlowTransfer* flow = o.message->flow) {  // its class's VC
    const int v = flow->vc(params_.vcs);
    return !groups_[port].vc_locked[v] && out.credits[v] >= static_cast<int>(credits) ? v : -1;
  }
  const int classes = params_.vc_classes, lanes = lane_count(), spread = lane_spread();
  for (int k = 0; k < spread; ++k) {
    const uint64_t lane = (first + (o.packet + k) % spread) % lanes;
    const int v = static_cast<int>(lane) * classes;
    if (!groups_[port].vc_locked[v] && out.credits[v] >= static_cast<int>(credits)) return v;
  }
  return -1;
}

void NetworkInterface::inject_round(int port) {
  count_event();
  const sc_time now = this->now();
  PortGroup& g = groups_[port];
  std::deque<Outgoing>& outgoing = g.outgoing;
  if (outgoing.empty()) return;
  Output& out = outputs_[port];
  collect_credits(out, now);
  if (!link_accepts(out, now)) {
    wake_at(accepts_from(out));
    return;
  }
  // Without a credit on any VC nothing can go until one is back: skip the scan of what may be a
  // long source queue.
  if (std::none_of(out.credits.begin(), out.credits.end(), [](int c) { return c > 0; })) {
    if (!g.credit_stalled) g.credit_stalled_since = now;
    g.credit_stalled = true;
    const sc_time back = next_credit(out);
    if (back != never_) wake_at(back);
    return;
  }
  sc_time next_eligible = never_;
  bool wants_credit = false;
  const size_t n = outgoing.size();
  const size_t first = g.rr < n ? g.rr : 0;
  // Flows go by class, MP before PP before DP: of those that can send now, only the first class's.
  const int served_class = g.flows_queued ? first_class_ready(port, now) : 0;
  for (size_t k = 0; k < n; ++k) {
    size_t idx = (first + k) % n;
    Outgoing& o = outgoing[idx];
    if (o.behind) continue;  // goes once the one before it to its destination has left
    if (o.eligible > now) {
      next_eligible = std::min(next_eligible, o.eligible);
      continue;
    }
    if (g.flows_queued && o.message->flow &&
        priority(o.message->flow->traffic_class) > served_class)
      continue;
    TransferExt unit;
    bool last = next_unit(o, unit);
    unit.credits = std::min(unit.flits, params_.buffer_flits);
    const int lane = first_lane(port, o);
    int vc = pick_vc(port, o, lane, unit.credits);
    if (vc < 0) {
      wants_credit = true;
      continue;
    }
    unit.vc = vc;
    if (o.lane < 0) use_lanes(g, lane, +1);
    o.lane = lane;
    unit.tail_at = now;
    if (g.credit_stalled) out.stats.stall += now - g.credit_stalled_since;
    g.credit_stalled = false;
    if (o.packet == 0 && o.flit == 0) o.message->injected = now;
    sc_time leaves = transmit(port, unit, now).end;
    // Advance the cursor past the unit just sent.
    if (params_.fidelity == Fidelity::Flit) {
      if (unit.tail) {
        o.sent_bytes += unit.bytes;
        o.packet++;
        o.flit = 0;
        g.vc_locked[vc] = false;
        o.vc = -1;
      } else {
        o.flit++;
        g.vc_locked[vc] = true;
        o.vc = vc;
      }
    } else {
      o.sent_bytes += unit.bytes;
      o.packet++;
    }
    if (last) {
      Message* m = o.message;
      use_lanes(g, o.lane, -1);
      if (idx == 0)
        outgoing.pop_front();  // the common case, without the general erase
      else
        outgoing.erase(outgoing.begin() + static_cast<long>(idx));
      // The next message to the same destination (or flow of the same class) may go now (none
      // before idx had it).
      const int key = order_key(*m);
      if (m->flow) --g.flows_queued;
      auto queued = g.queued_to.find(key);
      if (--queued->second == 0) {
        g.queued_to.erase(queued);
      } else {
        for (size_t j = idx; j < outgoing.size(); ++j)
          if (order_key(*outgoing[j].message) == key) {
            outgoing[j].behind = false;
            break;
          }
      }
      if (Probe* p = probe()) p->nic_queue(m->src, this->queued());
      sent(m, leaves);
      g.rr = idx;
    } else {
      g.rr = idx + 1;
    }
    if (!outgoing.empty()) wake_at(std::max(now + cycle_, accepts_from(out)));
    return;
  }
  if (wants_credit) next_eligible = std::min(next_eligible, next_credit(out));
  if (next_eligible != never_) wake_at(next_eligible);
}

int NetworkInterface::first_class_ready(int port, const sc_time& now) const {
  const PortGroup& g = groups_[port];
  int best = INT_MAX;
  for (const Outgoing& o : g.outgoing) {
    if (!o.message->flow || o.behind || o.eligible > now) continue;
    const int p = priority(o.message->flow->traffic_class);
    if (p >= best) continue;
    TransferExt unit;
    next_unit(o, unit);
    if (pick_vc(port, o, 0, std::min(unit.flits, params_.buffer_flits)) >= 0) best = p;
  }
  return best;
}

void NetworkInterface::on_credit_returning(int out_port, const sc_time& at) {
  if (!groups_[out_port].outgoing.empty()) wake_at(at);
}

void NetworkInterface::on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                                  const sc_time&) {
  receive(unit);
  release(in_port, trans, unit.tail_at);
}

void NetworkInterface::pass(int, tlm::tlm_generic_payload&, TransferExt& unit, const sc_time&) {
  receive(unit);
}

void NetworkInterface::receive(const TransferExt& unit) {
  Message* m = unit.message;
  m->received_bytes += unit.bytes;
  if (unit.tail_at > m->delivered) m->delivered = unit.tail_at;
  if (unit.tail && m->received_bytes == m->bytes) {
    callbacks_.at(
        m->delivered,
        [this, m]() {
          if (on_delivered) on_delivered(m);
        },
        &on_delivered, m);
  }
}

}  // namespace wafersim::hw
