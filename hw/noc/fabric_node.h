#pragma once
// A block with link ports (a router, or an NPU's network interface). It owns the TLM-2.0 plumbing
// of the link protocol (hw/proto/link_protocol.h): units leave on an initiator socket with
// kUnit (BEGIN_REQ) whose timing annotation is their head's arrival, and their credits come back as
// kCredit (END_REQ), annotated with when the receiver frees the buffer slots (DESIGN.md decision
// 2). Neither costs an event of its own. The receiver files an arriving unit at its annotated time
// and wakes then; a returning credit is filed on the output and counted when the block next looks
// at that time or later, and wakes the block only if it is waiting for one.
//
// Message fidelity is temporally decoupled instead (TLM-2.0 loosely-timed style): a message crosses
// the whole path inside the call that sends it. Each block on the way receives the message with
// the head's arrival time, reserves its output link from then on, passes the same payload on (as
// an interconnect does), and completes at once (no credit); the sending NIC releases the payload
// when its call returns. No event per hop: the message costs one event at each end. A link books
// bandwidth over time (LinkCalendar): a message streams at its path's narrowest rate, from the
// first time at or after it reaches the link that the link has that rate to spare for as long as
// it streams; buffers are not modelled (docs/design.md).
//
// Between two fabric blocks, at every fidelity, a BEGIN_REQ is a direct call of the next block's
// arrive() and an END_REQ one of the previous block's take_credit(), the block and port found
// through the bound socket at the end of elaboration: the same effect as the call through the
// socket's port object and forward() or backward(), which cost two more cold cache lines per hop
// and per credit (docs/performance.md). A socket bound to anything else gets the phases.
#include <algorithm>
#include <climits>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/fred/flow_table.h"
#include "hw/noc/fabric_params.h"
#include "hw/noc/link_calendar.h"
#include "hw/noc/link_retry.h"
#include "hw/proto/link_protocol.h"
#include "hw/proto/timed_queue.h"
#include "hw/proto/transfer.h"
#include "hw/proto/wake_calendar.h"
#include "models/topology/topology.h"

namespace wafersim::hw {

// Counters kept for every outgoing link (reported per link).
struct LinkStats {
  uint64_t units = 0;
  uint64_t bytes = 0;     // wire bytes
  sc_core::sc_time busy;  // time spent serialising
  // Time units spent ready to cross the link but held back (no credit downstream, lost switch
  // arbitration, link still busy), summed over units.
  sc_core::sc_time stall;
  // Go-Back-N (fabric.link_retry): packets the link lost (dropped or corrupted), packets sent
  // again, and ACKs and NACKs it carried back for the link the other way.
  uint64_t faults = 0;
  uint64_t resent = 0;
  uint64_t controls = 0;
};

// What the blocks of one fabric share: the payload and message pools, the calendar that wakes
// them, the flows in flight, and the topology they were built from (message fidelity: where a
// message's path narrows).
struct FabricShared {
  PayloadPool& pool;
  MessagePool& messages;
  WakeCalendar& calendar;
  const topology::Topology& topology;
  FlowTable& flows;  // in-network flows in flight (hw/fred)
};

class FabricNode : public sc_core::sc_module, protected WakeCalendar::Sleeper {
 public:
  // Plain TLM-2.0 sockets of the link protocol, each port's transport interface a small object of
  // this block's (Port below). The utility library's simple sockets carry a payload event queue,
  // three events and a process list each, for protocols these links never use: at 1,024 NPUs,
  // 16-18% of a run's peak memory (docs/performance.md).
  using InitiatorSocket = tlm::tlm_initiator_socket<32, LinkProtocol>;
  using TargetSocket = tlm::tlm_target_socket<32, LinkProtocol>;

  // One input port per incoming link and one output port per outgoing link, in the order given.
  FabricNode(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
             const std::vector<topology::Link>& inputs, const std::vector<topology::Link>& outputs);
  // Destroys the ports newest first (see ~Platform).
  ~FabricNode() override;

  InitiatorSocket& output_socket(int port) { return *outputs_[port].socket; }
  TargetSocket& input_socket(int port) { return *inputs_[port].socket; }
  int output_count() const { return static_cast<int>(outputs_.size()); }
  const LinkStats& output_stats(int port) const { return outputs_[port].stats; }
  int output_link_id(int port) const { return outputs_[port].link.id; }

 protected:
  // One port's side of the transport interfaces: which block and port a call is for.
  class Port : public tlm::tlm_fw_transport_if<LinkProtocol>,
               public tlm::tlm_bw_transport_if<LinkProtocol> {
   public:
    Port(FabricNode& node, int index) : node_(node), index_(index) {}
    FabricNode& node() const { return node_; }
    int index() const { return index_; }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override {
      return node_.forward(index_, trans, phase, delay);
    }
    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override {
      return node_.backward(index_, trans, phase, delay);
    }
    // Links are approximately-timed only: blocking and debug transport and DMI are refused.
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) override {
      trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

   private:
    FabricNode& node_;
    const int index_;
  };

  // Output::hop_dst when the next block's hops are not remembered, and before the first (a
  // flow's unit has destination -1).
  static constexpr int kNoHop = INT_MIN;
  static constexpr int kAnyHop = INT_MIN + 1;
  // Fields in the order of use, aligned to cache lines: a message's visit reads and writes two,
  // the first (the link's rate, flight time and bookings while it holds at most one, and the next
  // router's output for the last destination) and the second (the far end, the counters); a unit
  // at flit or packet fidelity reads these and the third (the flit's time, the credits), then
  // the credits on their way back; what only reports and elaboration read comes last.
  struct alignas(64) Output {
    double bytes_per_cycle;    // link width (may be fractional when set from GB/s)
    sc_core::sc_time latency;  // the link's flight time
    LinkCalendar bookings;     // message fidelity: the link's rate, booked ahead (link_free unused)
    // Message fidelity, when the next block is a router that only routes (and keeps time as this
    // one): its output towards `hop_dst`, the last destination it routed a message from this link
    // to, through which the next message to it passes without a visit to the router itself
    // (kNoHop: never; docs/design.md, Links). In the first line: the next hop's lines are asked
    // for as soon as this one is in (prefetch_next_hop).
    Output* hop_out = nullptr;
    int hop_dst = kNoHop;
    // The fabric block and input port the link leads to (null: not a fabric block's port;
    // BEGIN_REQ through `forward` then).
    int next_port = -1;
    FabricNode* next = nullptr;
    LinkStats stats;
    sc_core::sc_time flit_time;  // serialisation of one flit, the usual unit
    sc_core::sc_time link_free;  // when the link finishes the unit it is serialising
    // The bound target's forward interface, looked up once after elaboration: a message crosses
    // thousands of sockets per simulated microsecond at message fidelity.
    tlm::tlm_fw_transport_if<LinkProtocol>* forward = nullptr;
    // Per VC, slots free downstream (returned credits counted in). (Inline up to 16 VCs they took
    // no time off flit runs and made the 1,024-NPU message runs 8% slower: docs/performance.md.)
    std::vector<int> credits;
    const char* arrival_lines = nullptr;  // the next block's line for this link's VC 0, if it files
                                          // units per input VC (prefetch_arrival)
    uint64_t free_vcs = 0;      // bit v set: no packet holds VC v (routers allocate from it)
    uint64_t draining_vcs = 0;  // bit v set: its packet's tail has left, its credit not yet back
    int rr = 0;                 // switch allocation: the input this output serves first
    int vc_rr = 0;              // VC allocation: the VC it hands out first
    // Credits on their way back, by the time they arrive (counted in lazily, when a sender finds
    // too few: up to VCs x buffer slots of them); and whether the block waits for one that has not
    // been sent yet (the next credit then wakes it). In a cache line of their own: the receiving
    // block files every credit here (take_credit), and reads nothing else of this block.
    struct Returning {
      sc_core::sc_time at;
      int vc;
      int credits;
    };
    alignas(64) TimedQueue<Returning> returning;
    bool credit_wait = false;
    RetrySender retry;  // Go-Back-N (fabric.link_retry)
    topology::Link link;
    std::unique_ptr<InitiatorSocket> socket;
    std::unique_ptr<Port> port;
  };
  struct Input {
    std::unique_ptr<TargetSocket> socket;
    std::unique_ptr<Port> port;
    // The sender's backward interface (its Port), looked up once after elaboration rather than
    // through the socket on every credit (credits cross it once per unit per hop); and the fabric
    // block, output and output port that is (null: not a fabric block's port; END_REQ through
    // `backward` then).
    tlm::tlm_bw_transport_if<LinkProtocol>* backward = nullptr;
    FabricNode* previous = nullptr;
    Output* previous_output = nullptr;
    int previous_port = -1;
    topology::Link link;
    RetryReceiver retry;  // Go-Back-N
    int reverse = -1;     // the output whose link goes back to this input's sender (its ACKs)
  };

  // Message fidelity: the rate a message streams at over an output link (its path's narrowest
  // link, or this one if narrower) and for how long.
  struct Stream {
    double bytes_per_cycle;
    sc_core::sc_time length;
  };
  Stream stream_on(const Output& out, const TransferExt& unit) const {
    const double message = unit.message ? unit.message->bytes_per_cycle : 0;
    const double rate = message > 0 ? std::min(out.bytes_per_cycle, message) : out.bytes_per_cycle;
    return {rate, cycle_ * (static_cast<double>(unit.wire_bytes) / rate)};
  }
  // Where a unit occupies an output link: from `start` (first byte) to `end` (last byte), streaming
  // at `stream`'s rate (the link's own but at message fidelity).
  struct LinkSlot {
    sc_core::sc_time start;
    sc_core::sc_time end;
    Stream stream;
  };

  // Hooks for the derived block. `unit`'s head reaches input `in_port` at `arrival` (>= now); the
  // block keeps `trans` until it releases it.
  virtual void on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                          const sc_core::sc_time& arrival) = 0;
  // A credit the block waits for comes back on `out_port` at `at` (>= now).
  virtual void on_credit_returning(int out_port, const sc_core::sc_time& at) = 0;
  // Message fidelity: `unit` (carried by `trans`) has its head reach input `in_port` at `head_at`
  // (>= now); pass it on now. A block that forwards it sends `trans` itself on, as an interconnect
  // does: the payload stays the sending NPU's, which releases it when the call returns.
  virtual void pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                    const sc_core::sc_time& head_at) = 0;
  bool decoupled() const { return decoupled_; }
  // Runs on_wake() at the first cycle boundary at or after `t` (>= now), unless it runs earlier.
  void wake_at(const sc_core::sc_time& t) { calendar_.wake(*this, t); }
  sc_core::sc_time now() const { return calendar_.now(); }

  // Counts in the credits of `out` that are back by `now`.
  void collect_credits(Output& out, const sc_core::sc_time& now);
  // For a block that cannot send on `out` for want of credits: when the next one is back, or
  // sc_max_time() if none is on its way yet (on_credit_returning then tells when it is).
  sc_core::sc_time next_credit(Output& out);

  // Serialisation time of `bytes` on an output link.
  sc_core::sc_time serialisation(const Output& out, uint64_t bytes) const {
    // (At message fidelity from the rate: the same time, without the flit's cache line.)
    if (bytes == flit_bytes_ && !decoupled_) return out.flit_time;
    // In cycles first, then time: a byte's time alone would round to the picosecond.
    return cycle_ * (static_cast<double>(bytes) / out.bytes_per_cycle);
  }
  // Whether the output link can take a unit reaching it at `t` (it may still be finishing the
  // previous one: the link starts the next unit back to back, so links of non-integral bytes per
  // cycle lose nothing).
  bool link_accepts(const Output& out, const sc_core::sc_time& t) const {
    return out.link_free <= t + cycle_;
  }
  // The earliest time from which link_accepts(out, t + ahead) holds (never before time zero).
  sc_core::sc_time accepts_from(const Output& out,
                                const sc_core::sc_time& ahead = sc_core::SC_ZERO_TIME) const {
    const sc_core::sc_time margin = cycle_ + ahead;
    return out.link_free > margin ? out.link_free - margin : sc_core::SC_ZERO_TIME;
  }
  // Where `unit` would occupy output `out`'s link if it left this block at `depart` (>= now).
  LinkSlot slot_for(const Output& out, const TransferExt& unit,
                    const sc_core::sc_time& depart) const {
    LinkSlot slot;
    if (decoupled()) {
      slot.stream = stream_on(out, unit);
      slot.start = depart;
      // A link busy with slower streams still has some rate to spare: the message may stream at
      // that, as its packets would interleave with theirs, when that ends sooner than waiting for
      // its whole rate. (Most messages find the link free.)
      if (depart < out.bookings.free_from()) {
        const auto fit = out.bookings.soonest_end(depart, static_cast<double>(unit.wire_bytes),
                                                  cycle_, slot.stream.bytes_per_cycle);
        slot.start = fit.start;
        if (fit.rate < slot.stream.bytes_per_cycle)
          slot.stream = {fit.rate, cycle_ * (static_cast<double>(unit.wire_bytes) / fit.rate)};
      }
    } else {
      slot.stream = {out.bytes_per_cycle, serialisation(out, unit.wire_bytes)};
      slot.start = std::max(depart, out.link_free);
    }
    const uint64_t head_bytes = std::min<uint64_t>(unit.wire_bytes, flit_bytes_);
    // Cut-through: the unit cannot leave faster than its own tail arrives here.
    slot.end =
        std::max(slot.start + slot.stream.length, unit.tail_at + serialisation(out, head_bytes));
    return slot;
  }
  // Puts the unit `trans` carries (its extension `unit`) on output `port` in `slot` (from
  // slot_for, with nothing sent on that output since): BEGIN_REQ to the next block. It returns what
  // the next block answered: TLM_ACCEPTED, it took the reference this block held; TLM_COMPLETED
  // (message fidelity), the unit has reached its NPU and the reference is still the sender's.
  tlm::tlm_sync_enum send(int port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                          const LinkSlot& slot) {
    return send(outputs_[port], trans, unit, slot);
  }
  tlm::tlm_sync_enum send(Output& out, tlm::tlm_generic_payload& trans, TransferExt& unit,
                          const LinkSlot& slot);
  // Message fidelity: `unit`, its head here at `head_at`, goes on on output `out`, after the
  // whole pipeline (as in an uncontended allocation round; the link may still be serialising an
  // earlier message: the wait is reported as stall).
  void pass_through(Output& out, tlm::tlm_generic_payload& trans, TransferExt& unit,
                    const sc_core::sc_time& head_at);
  // Message fidelity: a router that only routes tells the link `in_port` came in by that its
  // messages to `dst` leave on output `out_port`: the next one passes through without a visit.
  void remember_hop(int in_port, int dst, int out_port) {
    Output* from = inputs_[in_port].previous_output;
    if (from && from->hop_dst != kNoHop) {
      from->hop_dst = dst;
      from->hop_out = &outputs_[out_port];
    }
  }
  // Message fidelity: asks for the lines a message's visit to `out` reads and writes, and, once
  // `out`'s first line is in, for the next hop's when `out` knows it (for `dst`): a message's
  // links are then fetched together rather than one after the other.
  static void prefetch_visit(const Output& out) {
    __builtin_prefetch(&out, 1);
    __builtin_prefetch(reinterpret_cast<const char*>(&out) + 64, 1);
  }
  static void prefetch_next_hop(const Output& out, int dst) {
    if (out.hop_dst == dst) prefetch_visit(*out.hop_out);
  }
  // Whether the block's pass() only routes (route, then pass_through): a plain router.
  virtual bool passes_by_route() const { return false; }
  // Puts a copy of `unit` in a fresh pooled payload on output `port`, leaving this block at
  // `depart` (>= now); returns where it occupies the link (its end: the link is free again).
  LinkSlot transmit(int port, const TransferExt& unit, const sc_core::sc_time& depart);
  // Frees the buffer slots `trans` held on input `port`: the credit reaches the sender after
  // `after` plus the credit delay.
  void release(int in_port, tlm::tlm_generic_payload& trans, const sc_core::sc_time& after);
  // Asks for the line a release from input `in_port` files its credit in: the sender's, which has
  // usually left this core's caches since the unit came.
  void prefetch_release(int in_port) const {
    if (const Output* sender = inputs_[in_port].previous_output)
      __builtin_prefetch(&sender->returning, 1);
  }

  // Asks for the line the next block files a unit sent on `out` in output VC `vc` in, where it
  // keeps one line per input VC (file_arrivals_in): its arrival, within this block's grant, reads
  // and writes it, and it has usually left this core's caches since that VC's last unit.
  static void prefetch_arrival(const Output& out, int vc) {
    if (out.arrival_lines)
      __builtin_prefetch(out.arrival_lines + static_cast<size_t>(vc) * kArrivalLineBytes, 1);
  }
  // For a block that keeps one cache line per input VC, input-major (all of input 0's VCs, then
  // input 1's, ...) from `lines`: its senders ask for a line ahead of the unit they send into it.
  static constexpr size_t kArrivalLineBytes = 64;
  void file_arrivals_in(const void* lines) { arrival_lines_ = static_cast<const char*>(lines); }

  // Next cycle boundary at or after t (exact: the kernel's integer time, on every wake).
  sc_core::sc_time align(const sc_core::sc_time& t) const {
    const sc_core::sc_time r = sc_core::sc_time(t) %= cycle_;
    return r == sc_core::SC_ZERO_TIME ? t : t - r + cycle_;
  }
  // The pipeline delays as times, worked out once: sc_time's multiplication goes through a
  // volatile double.
  struct Delays {
    sc_core::sc_time routing;
    sc_core::sc_time vc_alloc;
    sc_core::sc_time switching;  // switch allocation + switch traversal
    sc_core::sc_time credit;
    sc_core::sc_time endpoint;
  };
  // What a message's or unit's visit reads, first among the block's members and together, in the
  // two cache lines after the module's own (at message fidelity every message visits several
  // blocks, each cold: spread over the parameters and the derived block's members, these took
  // five lines per visit; docs/performance.md).
  const bool decoupled_;  // message fidelity
  const bool go_back_n_;  // params_.go_back_n
  const uint32_t flit_bytes_;
  const sc_core::sc_time cycle_;
  std::vector<Output> outputs_;
  const topology::Topology& topology_;
  const int node_;  // the block's node in the topology
  // What a head pays in an uncontended allocation round: routing, VC and switch allocation, switch
  // traversal (delays_, summed once).
  sc_core::sc_time head_delay_;

 private:
  PayloadPool& pool_;
  WakeCalendar& calendar_;
  const char* arrival_lines_ = nullptr;  // file_arrivals_in

 protected:
  const Delays delays_;
  const FabricParams params_;
  const sc_core::sc_time never_;  // sc_max_time(), which is a library call
  std::vector<Input> inputs_;

 private:
  void end_of_elaboration() override;
  void add_output(const topology::Link& link);
  void add_input(const topology::Link& link);
  // Puts `unit` on output `out`'s link in `slot`: the link's time and counters, and its credits
  // downstream when it is sent for the first time (not again by Go-Back-N).
  void occupy(Output& out, TransferExt& unit, const LinkSlot& slot, bool first);
  // The BEGIN_REQ of `trans` to the next block, its head arriving after `slot` starts.
  tlm::tlm_sync_enum deliver(Output& out, tlm::tlm_generic_payload& trans, TransferExt& unit,
                             const LinkSlot& slot);

  // Go-Back-N (hw/noc/link_retry.h). Whether the link of output `port` delivers `trans`, whose
  // draw is made now: if not, the link layer keeps it to send again.
  bool survives(int port, tlm::tlm_generic_payload& trans, TransferExt& unit, const LinkSlot& slot);
  // Sends again, in order, what output `port` keeps (its lost packet and those after it).
  void resend(int port);
  // Where a unit of `wire_bytes` that the link layer sends now occupies `out`'s link: at the
  // link's rate, from when it is free.
  LinkSlot next_free_slot(const Output& out, uint64_t wire_bytes) const;
  // How long an input stays quiet before it acknowledges what it has taken: half the timeout.
  sc_core::sc_time ack_quiet() const;
  // An ACK, NACK or corrupted packet reaching input `in_port` at `at`.
  void on_control(int in_port, const TransferExt& unit, const sc_core::sc_time& at);
  // A packet taken in order on input `in_port` at `at`: acknowledged every ack_every_packets.
  void acknowledge(int in_port, const sc_core::sc_time& at);
  // What the link layer does at `at` (>= now): send an ACK or a NACK (of `seq`) on output `port`,
  // send again what output `port` keeps, or acknowledge what input `port` has taken if it has
  // been quiet since.
  struct LinkTask {
    enum class Kind : uint8_t { Ack, Nack, Resend, AckIfQuiet };
    sc_core::sc_time at;
    int port;
    Kind kind;
    uint64_t seq;
  };
  void schedule(const LinkTask& task);
  void link_layer_round();
  // The link layer wakes on its own, apart from the block's rounds.
  struct LinkClock : WakeCalendar::Sleeper {
    explicit LinkClock(FabricNode& node) : node(node) {}
    void on_wake() override { node.link_layer_round(); }
    FabricNode& node;
  };
  LinkClock link_clock_{*this};
  TimedQueue<LinkTask> link_tasks_;
  tlm::tlm_sync_enum forward(int port, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                             sc_core::sc_time& delay);
  tlm::tlm_sync_enum backward(int port, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                              sc_core::sc_time& delay);
  // What a kUnit BEGIN_REQ of `trans` on input `port` does, its head arriving at `arrival`; the
  // sending fabric block calls it directly (see the header).
  tlm::tlm_sync_enum arrive(int port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                            const sc_core::sc_time& arrival);
  // What a kCredit END_REQ of `trans` on output `port` (`out`) does, the credit back at `at`; the
  // receiving fabric block calls it directly.
  void take_credit(Output& out, int port, tlm::tlm_generic_payload& trans,
                   const sc_core::sc_time& at);
};

}  // namespace wafersim::hw
