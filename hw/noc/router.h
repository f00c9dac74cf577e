#pragma once
// Input-queued virtual-channel router: per-VC input buffers, routing by the topology graph's rules
// (dimension order on meshes, shorter way on rings), separable round-robin VC and switch
// allocation, credit flow control, and a delay in cycles for every pipeline stage. Event-driven: it
// runs an allocation round only at cycles where something can move, and sleeps while it holds
// nothing. At message fidelity it only routes: a message passes through within the sender's call
// (FabricNode), leaving after the pipeline delays once its output link is free.
#include <algorithm>
#include <array>
#include <memory>
#include <systemc>
#include <vector>

#include "hw/noc/fabric_node.h"

namespace wafersim::hw {

class Router : public FabricNode {
 public:
  Router(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
         const topology::Topology& topology, int node);

  // Units currently buffered (for deadlock reports).
  virtual size_t buffered_units() const;

 protected:
  // A switch that does more than route (hw/fred) takes its own units and hands the rest to these.
  void on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                  const sc_core::sc_time& arrival) override;
  void pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
            const sc_core::sc_time& head_at) override;
  bool passes_by_route() const override { return true; }
  // Every wake runs an allocation round; a derived switch adds its own work to the same wake.
  void on_wake() override { allocation_round(); }
  void on_credit_returning(int out_port, const sc_core::sc_time& at) override;

 private:
  // What a round needs of a buffered unit, taken when it is filed (the payload is in cache then; by
  // the round it has usually left it).
  struct Summary {
    sc_core::sc_time arrived;  // the head's arrival (may lie ahead: units are filed when sent)
    uint32_t credits;          // credits it needs downstream
    uint16_t route;            // output port towards its destination
    bool head;
    int8_t out_class;  // VC class downstream (the dateline moves a packet up on rings)
  };
  // A unit waiting in an input VC (its TransferExt is the payload's, transfer()).
  struct Buffered {
    tlm::tlm_generic_payload* trans;
    Summary summary;
  };
  // One input VC, one cache line: rounds look at every occupied VC in every cycle. It holds the
  // unit at its head itself, and the units behind it in a ring in the router's slab (`depth_`
  // slots: a VC holds at most `buffer_flits` units, since each takes a credit), restarted at slot
  // 0 whenever it empties. A lightly loaded VC, as every VC of a network below saturation mostly
  // is, holds one unit at a time: its arrival and departure touch this line only (with a ring
  // for every unit, two; docs/performance.md).
  struct alignas(64) InputVc {
    Buffered head;              // valid when size > 0
    sc_core::sc_time va_ready;  // routing done
    sc_core::sc_time sa_ready;  // VC allocation done
    uint32_t first = 0;         // ring position of the unit behind the head
    uint32_t size = 0;          // units held, the head included
    int out_port = -1;          // route of the packet at the head (-1 = not computed)
    int16_t out_vc = -1;        // output VC held by that packet (-1 = not allocated)
    int16_t out_class = 0;
  };
  struct InputState {
    uint64_t occupied = 0;  // bit v set: VC v's head unit has arrived (rounds visit only those)
    sc_core::sc_time busy_until;  // crossbar input still reading the previous unit
    int rr = 0;
    bool matched = false;  // granted in this round (read only with several allocator iterations)
    double read_rate = 0;  // bytes per cycle the crossbar input reads: a flit, or its link's rate
  };

  InputVc& input_vc(int in_port, int vc) { return vcs_[in_port * params_.vcs + vc]; }
  Buffered* ring(int in_port, int vc) {
    return &slab_[static_cast<size_t>(in_port * params_.vcs + vc) * depth_];
  }
  Buffered pop_front(int in_port, int vc, InputVc& ivc, const sc_core::sc_time& now);
  // Makes VC `vc` of `in_port` occupied once its head unit arrives, at `at`.
  void expect_head(int in_port, int vc, const sc_core::sc_time& at);
  // Whether output VC `vc` of `out` has `need` credits now (counting in those back by now).
  bool has_credits(Output& out, int vc, int need, const sc_core::sc_time& now);

  void allocation_round();
  // Switch allocation's input stage: input `i` asks for one output, for the first of its VCs in
  // `bids` (round-robin from its pointer) whose output has credits, accepts on its link and has
  // not granted an earlier iteration. False if it could ask for none.
  bool request(int i, uint64_t bids, const sc_core::sc_time& now, sc_core::sc_time& next);
  // The output stage: each requested output grants one input and the unit crosses. `lost`: some
  // input was refused; `released`: a tail freed an output VC. Pointers move in the first
  // iteration only.
  void grant(const sc_core::sc_time& now, bool first_iteration, bool& lost, bool& released,
             sc_core::sc_time& next);
  static void later(sc_core::sc_time& next, const sc_core::sc_time& t) { next = std::min(next, t); }
  // VC allocation for the packet at the head of `ivc` (routed): true if it got an output VC. With
  // fabric.vc_release: tail_credit, a VC whose tail has left is free once its credits are all
  // back; a head that finds none asks for a wake at the next credit.
  bool allocate_vc(InputVc& ivc, const sc_core::sc_time& now, sc_core::sc_time& next);

  // Routes taken lately (see route()), by a hash of the destination; first among the router's
  // members, next to FabricNode's: eight of 8 bytes in one cache line (a port fits in 16 bits,
  // kMaxPorts; 0xffff for none).
  struct RouteMemo {
    int dst = -1;
    uint16_t in_port = 0xffff;
    uint16_t out_port = 0xffff;
  };
  alignas(64) mutable std::array<RouteMemo, 8> routes_{};
  std::vector<InputState> in_;
  // Heads filed ahead of their arrival, by arrival time: a round looks at a VC only once its head
  // is in (every round used to look at each such VC only to note when to come back).
  struct Landing {
    sc_core::sc_time at;
    uint16_t in_port;
    uint16_t vc;
  };
  TimedQueue<Landing> landing_;
  std::vector<InputVc> vcs_;  // input-major: all VCs of input 0, then input 1, ...
  uint32_t depth_ = 0;        // ring slots per input VC (behind its head: buffer_flits - 1)
  std::unique_ptr<Buffered[]> slab_;
  std::vector<uint64_t> class_vcs_;  // per VC class, its VCs (v % classes == class)
  // The output towards a destination rank, by the topology's rules (no table: memory grows with
  // the links, not routers x NPUs), and whether its link is a dateline (the packet moves up a VC
  // class). A router sees few destinations at a time (a ring's two, a 4-D platform's dozen): it
  // remembers the last few routes, as the rules' tables and the input's link are cold at every
  // message of a large run (docs/performance.md).
  int route(int in_port, int dst) const {
    RouteMemo& memo = routes_[(static_cast<uint32_t>(dst) * 2654435761u) >> 29];
    if (memo.dst != dst || memo.in_port != static_cast<uint16_t>(in_port))
      memo = {dst, static_cast<uint16_t>(in_port),
              static_cast<uint16_t>(topology_.next_port(node_, dst, inputs_[in_port].link.dim))};
    return memo.out_port == 0xffff ? -1 : memo.out_port;
  }
  bool moves_up(int port) const { return outputs_[port].link.dateline && params_.vc_classes > 1; }
  // The VC class a head leaving on `out_port` takes: it moves up at a dateline, and starts again
  // from class 0 in a new dimension (dimension order already breaks cycles between dimensions).
  int out_class(int in_port, int out_port, int vc_class) const {
    if (params_.vc_classes == 1) return 0;  // (without reading the two links' cold lines)
    const int base = inputs_[in_port].link.dim == outputs_[out_port].link.dim ? vc_class : 0;
    return std::min(base + (moves_up(out_port) ? 1 : 0), params_.vc_classes - 1);
  }
  static constexpr int kMaxPorts = 0xffff;  // a port is two bytes in a unit's summary
  // Switch allocation's requests in this iteration (an input's VC `vc` asks for output `out`; one
  // per input at most), per output the one it grants so far (-1: none, again once granted), and
  // the outputs asked for, in the order first asked. A flat list, as a round has a handful.
  struct Request {
    int out;
    int input;
    int vc;
  };
  std::vector<Request> requests_;
  std::vector<int> pick_;
  std::vector<int> requested_;
  // With several allocator iterations: the inputs that bid in this round and their bidding VCs,
  // and the outputs granted in an earlier iteration.
  struct Bidder {
    int input;
    uint64_t vcs;
  };
  std::vector<Bidder> bidders_;
  std::vector<char> taken_;
};

}  // namespace wafersim::hw
