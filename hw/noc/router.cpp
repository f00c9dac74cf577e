#include "hw/noc/router.h"

#include <algorithm>
#include <stdexcept>

#include "hw/proto/event_counter.h"
#include "hw/proto/probe.h"

namespace wafersim::hw {

using sc_core::sc_time;

namespace {

// Calls fn(v) for each set bit v of `mask`, starting at `first` and wrapping round:
// round-robin order without visiting empty VCs; stops when fn returns false.
template <typename Fn>
void for_each_vc_from(uint64_t mask, int first, Fn&& fn) {
  const uint64_t high = mask >> first;
  const uint64_t low = first == 0 ? 0 : mask & ((uint64_t{1} << first) - 1);
  for (uint64_t m = high; m; m &= m - 1)
    if (!fn(first + __builtin_ctzll(m))) return;
  for (uint64_t m = low; m; m &= m - 1)
    if (!fn(__builtin_ctzll(m))) return;
}

// i + 1, wrapped to [0, n): the round-robin step, without a division on every grant.
int after(int i, int n) {
  return i + 1 == n ? 0 : i + 1;
}

// The first set bit of `mask` (not empty) at or after `first`, wrapping round.
int first_from(uint64_t mask, int first) {
  const uint64_t high = first >= 64 ? 0 : mask >> first;
  return high ? first + __builtin_ctzll(high) : __builtin_ctzll(mask);
}

}  // namespace

Router::Router(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
               const topology::Topology& topology, int node)
    : FabricNode(name, params, shared, topology.links_of(topology.in_links(node)),
                 topology.links_of(topology.out_links(node))) {
  if (params_.vcs > 64)
    throw std::invalid_argument("vcs: at most 64 virtual channels per port, got " +
                                std::to_string(params_.vcs));
  class_vcs_.assign(params_.vc_classes, 0);
  for (int v = 0; v < params_.vcs; ++v) class_vcs_[v % params_.vc_classes] |= uint64_t{1} << v;
  in_.resize(inputs_.size());
  vcs_.resize(inputs_.size() * params_.vcs);
  static_assert(sizeof(InputVc) == kArrivalLineBytes, "one line per input VC (file_arrivals_in)");
  file_arrivals_in(vcs_.data());
  if (!decoupled()) {
    depth_ = params_.buffer_flits - 1;
    slab_.reset(new Buffered[vcs_.size() * depth_]);
  }
  pick_.assign(outputs_.size(), -1);
  for (size_t i = 0; i < in_.size(); ++i)
    in_[i].read_rate =
        std::max(static_cast<double>(params_.flit_bytes), inputs_[i].link.bytes_per_cycle);
  if (params_.sw_alloc_iterations > 1) taken_.assign(outputs_.size(), 0);
  if (output_count() > kMaxPorts)
    throw std::invalid_argument(std::string(basename()) + ": more than 65,535 ports");
}

size_t Router::buffered_units() const {
  size_t n = 0;
  for (const auto& vc : vcs_) n += vc.size;
  return n;
}

void Router::on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                        const sc_time& arrival) {
  InputVc& ivc = input_vc(in_port, unit.vc);
  if (ivc.size == params_.buffer_flits)
    throw std::logic_error(std::string(name()) + ": input " + std::to_string(in_port) + " VC " +
                           std::to_string(unit.vc) + " received a unit without a credit");
  // Only a head is routed: the rest of its packet follows the VC it holds.
  const int port = unit.head ? route(in_port, unit.dst) : 0;
  const int vc_class = unit.head ? out_class(in_port, port, unit.vc_class) : 0;
  const Summary summary{arrival, unit.credits, static_cast<uint16_t>(port), unit.head,
                        static_cast<int8_t>(vc_class)};
  if (ivc.size++ == 0) {
    ivc.head = {&trans, summary};
    expect_head(in_port, unit.vc, arrival);
  } else {
    uint32_t slot = ivc.first + ivc.size - 2;
    if (slot >= depth_) slot -= depth_;
    ring(in_port, unit.vc)[slot] = {&trans, summary};
  }
  if (Probe* p = probe()) p->buffer_change(inputs_[in_port].link.id, unit.vc, 1, arrival);
  wake_at(arrival);
}

void Router::on_credit_returning(int, const sc_time& at) {
  wake_at(at);
}

void Router::pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                  const sc_time& head_at) {
  const int o = route(in_port, unit.dst);
  if (passes_by_route()) remember_hop(in_port, unit.dst, o);
  pass_through(outputs_[o], trans, unit, head_at);
}

void Router::expect_head(int in_port, int vc, const sc_time& at) {
  landing_.insert({at, static_cast<uint16_t>(in_port), static_cast<uint16_t>(vc)});
}

Router::Buffered Router::pop_front(int in_port, int vc, InputVc& ivc, const sc_time& now) {
  const Buffered unit = ivc.head;
  const uint64_t bit = uint64_t{1} << vc;
  if (--ivc.size == 0) {
    in_[in_port].occupied &= ~bit;
  } else {
    ivc.head = ring(in_port, vc)[ivc.first];
    ivc.first = ivc.size == 1 ? 0 : after(static_cast<int>(ivc.first), static_cast<int>(depth_));
    if (ivc.head.summary.arrived > now) {  // the next unit is still on its way
      in_[in_port].occupied &= ~bit;
      expect_head(in_port, vc, ivc.head.summary.arrived);
    }
  }
  return unit;
}

bool Router::has_credits(Output& out, int vc, int need, const sc_time& now) {
  if (out.credits[vc] >= need) return true;
  collect_credits(out, now);  // only when short: credits only ever grow by collecting
  return out.credits[vc] >= need;
}

bool Router::allocate_vc(InputVc& ivc, const sc_time& now, sc_time& next) {
  // The first free VC of the packet's class at or after the output's round-robin pointer.
  Output& out = outputs_[ivc.out_port];
  uint64_t candidates = out.free_vcs & class_vcs_[ivc.out_class];
  if (!candidates && (out.draining_vcs & class_vcs_[ivc.out_class])) {
    // VCs whose tails' credits are back (all of the VC's slots free downstream) are free again.
    collect_credits(out, now);
    for (uint64_t m = out.draining_vcs; m; m &= m - 1) {
      const int v = __builtin_ctzll(m);
      if (out.credits[v] == static_cast<int>(params_.buffer_flits)) {
        out.draining_vcs &= ~(uint64_t{1} << v);
        out.free_vcs |= uint64_t{1} << v;
      }
    }
    candidates = out.free_vcs & class_vcs_[ivc.out_class];
    if (!candidates) later(next, next_credit(out));
  }
  if (!candidates) return false;
  const int v = first_from(candidates, out.vc_rr);
  out.free_vcs &= ~(uint64_t{1} << v);
  out.vc_rr = after(v, params_.vcs);
  ivc.out_vc = static_cast<int16_t>(v);
  return true;
}

void Router::allocation_round() {
  count_event();
  const sc_time now = this->now();
  sc_time next = never_;
  // A round only changes state where a unit moves on, and every unit that waits has asked for a
  // wake at the time it can move on, except for what a grant frees in this very round: an output
  // VC another head waits for (`va_blocked`), the switch an input lost (`lost`).
  bool va_blocked = false;

  // Per input: route computation and VC allocation for the packet at the head of each VC, then
  // the input stage of switch allocation (one request per input, round-robin over its VCs). One
  // pass serves both: an input's requests depend only on its own VCs and on the outputs' credits
  // and links, which VC allocation does not touch.
  requests_.clear();
  bidders_.clear();
  // Heads that have arrived join their inputs' occupied VCs.
  while (!landing_.empty() && landing_.front().at <= now) {
    in_[landing_.front().in_port].occupied |= uint64_t{1} << landing_.front().vc;
    landing_.pop_front();
  }
  if (!landing_.empty()) later(next, landing_.front().at);
  for (int i = 0; i < static_cast<int>(in_.size()); ++i) {
    InputState& in = in_[i];
    uint64_t bidding = 0;  // VCs whose head may cross the switch now, credits and link allowing
    for (uint64_t m = in.occupied; m; m &= m - 1) {
      const int v = __builtin_ctzll(m);
      InputVc& ivc = input_vc(i, v);  // occupied: its head has arrived
      if (ivc.out_port < 0) {
        if (!ivc.head.summary.head)
          throw std::logic_error(std::string(name()) + ": body flit without route");
        ivc.out_port = ivc.head.summary.route;
        ivc.out_class = ivc.head.summary.out_class;
        ivc.va_ready = ivc.head.summary.arrived + delays_.routing;
      }
      if (ivc.out_vc < 0) {
        if (ivc.va_ready > now) {
          later(next, ivc.va_ready);
          continue;
        }
        if (!allocate_vc(ivc, now, next)) {
          va_blocked = true;  // until a tail leaves this router
          continue;
        }
        ivc.sa_ready = now + delays_.vc_alloc;
      }
      if (ivc.sa_ready > now) {
        later(next, ivc.sa_ready);
        continue;
      }
      bidding |= uint64_t{1} << v;
      // A bidding head is likely granted at the end of this round, which reads and writes its
      // extension (the payload's line has usually left the cache since the unit arrived).
      __builtin_prefetch(transfer(*ivc.head.trans), 1);
    }
    if (!bidding) continue;
    if (in.busy_until >= now + cycle_) {  // still reading a unit past this cycle
      later(next, in.busy_until - cycle_);
      continue;
    }
    prefetch_release(i);
    if (request(i, bidding, now, next) && params_.sw_alloc_iterations > 1)
      bidders_.push_back({i, bidding});
  }

  bool lost = false, released = false;
  grant(now, true, lost, released, next);
  // Further iterations (iSLIP's): inputs no output granted bid again, with their other VCs, for
  // the outputs no input took.
  bool iterated = false;
  for (int iteration = 1; iteration < params_.sw_alloc_iterations && lost; ++iteration) {
    iterated = true;
    for (int o : requested_) taken_[o] = 1;
    requests_.clear();
    bool asked = false;
    for (const Bidder& b : bidders_)
      if (!in_[b.input].matched) asked |= request(b.input, b.vcs, now, next);
    if (!asked) break;
    lost = false;
    grant(now, false, lost, released, next);
  }
  if (params_.sw_alloc_iterations > 1) {
    for (const Bidder& b : bidders_) in_[b.input].matched = false;
    if (iterated) std::fill(taken_.begin(), taken_.end(), 0);  // most rounds grant every request
  }

  if (lost || (released && va_blocked)) later(next, now + cycle_);
  if (next != never_) wake_at(std::max(next, now + cycle_));
}

bool Router::request(int i, uint64_t bids, const sc_time& now, sc_time& next) {
  const sc_time& pipeline = delays_.switching;
  bool asked = false;
  for_each_vc_from(bids, in_[i].rr, [&](int v) {
    InputVc& ivc = input_vc(i, v);
    Output& out = outputs_[ivc.out_port];
    if (!taken_.empty() && taken_[ivc.out_port]) return true;  // granted in an earlier iteration
    if (!has_credits(out, ivc.out_vc, static_cast<int>(ivc.head.summary.credits), now)) {
      later(next, next_credit(out));
      return true;
    }
    if (!link_accepts(out, now + pipeline)) {
      later(next, accepts_from(out, pipeline));
      return true;
    }
    requests_.push_back({ivc.out_port, i, v});
    prefetch_arrival(out, ivc.out_vc);  // most requests are granted at the end of the round
    asked = true;
    return false;  // one request per input
  });
  return asked;
}

void Router::grant(const sc_time& now, bool first_iteration, bool& lost, bool& released,
                   sc_time& next) {
  // Output stage: each output grants one requesting input, round-robin over inputs.
  const sc_time& pipeline = delays_.switching;
  const int n_in = static_cast<int>(in_.size());
  // Each output's pick: its first requester at or after its pointer.
  requested_.clear();
  for (size_t k = 0; k < requests_.size(); ++k) {
    const Request& r = requests_[k];
    int& pick = pick_[r.out];
    if (pick < 0) {
      pick = static_cast<int>(k);
      requested_.push_back(r.out);
      continue;
    }
    lost = true;
    const int rr = outputs_[r.out].rr;
    if ((r.input - rr + n_in) % n_in < (requests_[pick].input - rr + n_in) % n_in)
      pick = static_cast<int>(k);
  }
  for (int o : requested_) {
    const int i = requests_[pick_[o]].input, v = requests_[pick_[o]].vc;
    pick_[o] = -1;
    Output& out = outputs_[o];
    if (first_iteration) out.rr = after(i, n_in);
    InputState& in = in_[i];
    in.matched = true;
    InputVc& ivc = input_vc(i, v);
    const Buffered unit = pop_front(i, v, ivc, now);
    // Stall: how long past its earliest possible grant (pipeline only) the unit waited.
    const sc_time earliest =
        unit.summary.head ? ivc.va_ready + delays_.vc_alloc : unit.summary.arrived;
    if (now > earliest) out.stats.stall += now - earliest;
    if (Probe* p = probe()) {
      p->buffer_change(inputs_[i].link.id, v, -1, now);
      p->grant(out.link.id, inputs_[i].link.id);
    }
    // The unit goes on in its own payload: the credit upstream (kCredit) is sent first, while the
    // extension still says which VC it frees, with a reference kept for the next hop. No copy, and
    // the payload is still in cache.
    TransferExt& ext = *transfer(*unit.trans);
    const uint64_t wire_bytes = ext.wire_bytes;
    const bool tail = ext.tail;
    // The crossbar input reads one unit at a time, at least a cycle each, at a flit per cycle or
    // at its input's or output's link rate if faster (the datapath keeps up with its links); the
    // next follows back to back, also on links that take a fractional number of cycles per flit.
    // A packet bound for a slower link does not hold the input while it drains: its flits wait in
    // the VC buffer (credits are returned as they leave), and another VC's packet may cross to
    // another output meanwhile, so one NIC port can feed a ring's two directions at once.
    const sc_time read_from = std::max(now, in.busy_until);
    const LinkSlot slot = slot_for(out, ext, read_from + pipeline);
    unit.trans->acquire();
    release(i, *unit.trans, slot.end);
    ext.vc = ivc.out_vc;
    ext.vc_class = ivc.out_class;
    ext.credits = std::min(ext.flits, params_.buffer_flits);
    send(o, *unit.trans, ext, slot);  // the payload belongs to the next block from here on
    if (first_iteration) in.rr = after(v, params_.vcs);
    const double read_rate = std::max(in.read_rate, out.bytes_per_cycle);
    if (read_from == now && static_cast<double>(wire_bytes) <= read_rate) {
      in.busy_until = now + cycle_;  // read within the cycle (most units: no division)
    } else {
      const sc_time read = cycle_ * (static_cast<double>(wire_bytes) / read_rate);
      in.busy_until = std::max(now + cycle_, read_from + read);
    }
    // What the grant uncovered: the VC's next unit (routed and allocated from its arrival on) and
    // the input's other bids (from when the crossbar input is free again).
    if (ivc.size) later(next, ivc.head.summary.arrived);
    if (in.occupied) later(next, in.busy_until - cycle_);
    if (tail) {
      (params_.vc_release_on_tail_credit ? out.draining_vcs : out.free_vcs) |= uint64_t{1}
                                                                               << ivc.out_vc;
      ivc.out_port = -1;
      ivc.out_vc = -1;
      released = true;
    }
  }
}

}  // namespace wafersim::hw
