#pragma once
// The Fred switch (PAPERS.md section 1) as a fabric block: a switch of the wafer's tree that routes
// unicasts as a router does and, for in-network flows, reduces the inputs that reach it and
// multicasts the sum (hw/fred/flow_table.h). The flow's tree (which inputs it waits for, which
// outputs the sum leaves on) comes from the topology's rules (Topology::flow_hop).
//
// Its control unit (models/fred/control_unit.h) holds the routing configurations of the phases
// (collectives) under way: when a collective with flows is issued, before any of its units move,
// the platform hands every switch the flows' ends (configure_flows) and the switch routes those
// that pass it through Fred_m(P), refusing the phase there and then when they clash and
// fabric.fred_conflicts is error.
//
// Its pipeline is the router's (routing + VC allocation + switch allocation) followed by the
// traversal of its Fred_m(P) interconnect (models/fred): P = its ports, m = fabric.fred_middles,
// every unit crossing the interconnect's stages() blocks of fabric.fred_stage_cycles each. A flow's
// sum is routed through Fred_m(P) when it is ready to leave and holds that route while it streams
// (models/fred/route_schedule.h) on its phase's configured route, or online around flows of other
// phases that hold the middles it was given (the paper runs one phase at a time; here phases on
// other ports run beside it): it waits while a port it needs serves another flow, or while
// the middles cannot carry it beside the flows that run (fabric.fred_conflicts: wait), or stops
// the run naming the flows that clash (error), or goes as one flow per output (unicast). A flow of
// another communication phase (another collective) than the last one through the switch first waits
// fabric.fred_reconfiguration_cycles for the switch to load that phase's configuration.
//
// At packet fidelity a flow moves packet by packet: each input's packet waits in its input buffer
// (holding its credits) until the packets of the same number from every input are in, then one
// packet of the sum leaves on every output of the flow's tree at once, when each has its link
// free and its traffic class's VC has room downstream, and the inputs' slots are freed. A flow's
// packets leave in order; the ready sums are offered the outputs in class order (MP, PP, DP), so
// a higher class preempts a lower one at the next packet boundary.
//
// Simplified (docs/design.md, The Fred switch): at message fidelity the sum streams out once the
// heads of all its inputs are in and cannot finish before their tails (the reduction runs at line
// rate, as the micro-switches do); at packet fidelity the output links and credits arbitrate and
// routes through Fred_m(P) are not checked. Unicasts do not take routes in Fred_m(P) (m >= 3
// carries any unicast beside the rest). Links retransmit what they lose (hw/noc/link_retry.h).
#include <map>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

#include "hw/fred/flow_table.h"
#include "hw/noc/router.h"
#include "models/fred/control_unit.h"
#include "models/fred/interconnect.h"
#include "models/fred/route_schedule.h"

namespace wafersim::hw {

// Flows that a Fred switch's interconnect cannot carry together (fabric.fred_conflicts: error).
class FlowConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FredSwitch : public Router {
 public:
  FredSwitch(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
             const topology::Topology& topology, int node);

  // The interconnect inside: Fred_m(P) for its P ports.
  const fred::Interconnect& interconnect() const { return interconnect_; }

  // A flow of a collective instance about to start: its tag and ends (FlowTransfer's).
  struct PlannedFlow {
    uint64_t tag = 0;
    topology::FlowEnds ends;
  };
  // Computes ahead the routing configurations of `flows`, all of one collective instance, that
  // pass this switch. Throws FlowConflict naming the flows that clash when the middles cannot carry
  // them and fabric.fred_conflicts is error.
  void configure_flows(const std::vector<PlannedFlow>& flows);
  // Forgets the configurations of instance `tag >> 32` (the collective is over).
  void release_flows(uint64_t tag) { control_.release(phase_of_tag(tag)); }

  // What the control unit did: configurations computed, and flows (message fidelity) that took
  // their configured route or were routed online (around flows of other phases, or without one).
  struct ControlStats {
    uint64_t configurations = 0;
    uint64_t configured_routes = 0;
    uint64_t online_routes = 0;
  };
  ControlStats control_stats() const {
    return {control_.computed(), configured_routes_, online_routes_};
  }
  // Units buffered: the router's and, at packet fidelity, flow packets waiting for their partners.
  size_t buffered_units() const override;

 private:
  // A router's parameters with the traversal replaced by that of `net`.
  static FabricParams with_datapath(FabricParams params, const fred::Interconnect& net);
  void on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                  const sc_core::sc_time& arrival) override;
  void pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
            const sc_core::sc_time& head_at) override;
  bool passes_by_route() const override { return false; }  // it takes its flows' units itself
  struct FlowStream;
  void on_wake() override;
  // Message fidelity: a flow's unit, counted into its sum, which leaves when the last input is in.
  void reduce(int in_port, const TransferExt& unit, const sc_core::sc_time& head_at);
  // Packet fidelity: a flow's packet, held in its input buffer until its partners are in.
  void gather(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
              const sc_core::sc_time& arrival);
  // Packet fidelity: sends every packet of a sum that is ready and whose outputs take it now.
  void send_sums();
  // Whether `out` can take a packet of `flow` needing `credits` slots downstream on the flow's
  // class VC now: its VC, or -1.
  int class_vc(Output& out, const FlowTransfer& flow, uint32_t credits) const;
  // Shows on the probe the micro-switch functions a flow at `hop` enables from `start` to `end`.
  void show_functions(const topology::FlowHop& hop, const sc_core::sc_time& start,
                      const sc_core::sc_time& end) const;
  // The message that carries a flow's sum to the endpoint at the end of output `port`.
  Message* delivery(FlowTransfer& flow, int port);
  // Sends the ready packets of `stream` that its outputs take now; notes in `next` when to look
  // again. Returns whether it sent any.
  bool send_packets(FlowStream& stream, const sc_core::sc_time& now, sc_core::sc_time& next);
  // Whether `stream` has a packet whose inputs are all in (ready or not).
  static bool has_gathered(const FlowStream& stream);
  // The configuration index a flow's units carry: 1 + its collective's instance (0, the default
  // index, is for unicasts).
  static uint64_t phase_of_tag(uint64_t tag) { return (tag >> 32) + 1; }
  static uint64_t phase_of(const FlowTransfer& flow) { return phase_of_tag(flow.tag); }
  // A flow's key in its phase's configurations: its index in the plan and its stage here.
  static uint64_t config_key(uint64_t tag, int stage) {
    return ((tag & 0xffffffffu) << 1) | static_cast<uint64_t>(stage);
  }
  // The flow as messages name it.
  static std::string flow_name(uint64_t tag, const topology::FlowEnds& ends, int stage);
  // What fabric.fred_conflicts asks of a flow the middles cannot carry.
  fred::OnConflict on_conflict() const;
  // A routing conflict as the run reports it.
  FlowConflict conflict(const fred::RoutingConflict& e) const;
  // Loads the configuration of `phase` from `at`: returns when it is loaded.
  sc_core::sc_time load_phase(uint64_t phase, const sc_core::sc_time& at);

  // When the flow whose sum is ready at `ready` and streams until `end` gets its route through
  // the interconnect from input ports `in` to output ports `out`, and when it has streamed
  // through: `end` moved with its start, or later when it streams slower beside flows that share
  // its ports; split into one flow per output (fred_conflicts: unicast), each output's too.
  struct Departure {
    struct Span {
      sc_core::sc_time start, end;
    };
    Span whole;
    std::vector<Span> outputs;  // per port of `out`, when split
  };
  Departure route(const FlowTransfer& flow, int stage, std::vector<int> in, std::vector<int> out,
                  const sc_core::sc_time& ready, const sc_core::sc_time& end);

  // A sum being gathered: the input ports its units came in on, the last head and the last tail
  // among them.
  struct Sum {
    std::vector<int> in_ports;
    sc_core::sc_time head;
    sc_core::sc_time tail;
  };
  std::map<std::pair<const FlowTransfer*, int>, Sum> waiting_;  // by flow and stage

  // Packet fidelity: one packet of a sum being gathered, with its inputs' buffered payloads
  // (their slots are freed when the sum leaves) and when it can leave.
  struct Part {
    int in_port;
    int vc;
    tlm::tlm_generic_payload* trans;
  };
  struct PacketSum {
    std::vector<Part> parts;
    sc_core::sc_time head;   // the last input's head in
    sc_core::sc_time tail;   // the last input's tail in
    sc_core::sc_time ready;  // pipeline passed (set once every part is in)
    TransferExt unit;        // sizes of the packet (the inputs' are alike)
  };
  // A flow's packets through this switch at one stage (on the way up, or down to be multicast).
  struct FlowStream {
    FlowTransfer* flow = nullptr;
    topology::FlowHop hop;
    std::vector<Message*> deliveries;  // per port of hop.ports: the endpoint's message, or null
    std::vector<int> in_ports;         // the inputs its packets come in on (stream_of_'s keys)
    std::map<uint64_t, PacketSum> packets;  // by packet number, until sent
    uint64_t next = 0;                      // the packet that leaves next
    uint64_t count = 0;                     // the flow's packets
  };
  // By class priority, flow tag and stage: served in that order (MP, then PP, then DP; within a
  // class, by tag), which is the same in every run.
  using StreamKey = std::tuple<int, uint64_t, int>;
  std::map<StreamKey, FlowStream> streams_;
  // The stream a flow's packets on an input belong to, by flow tag and input port: worked out from
  // the topology (flow_hop) for the first packet only.
  std::map<std::pair<uint64_t, int>, StreamKey> stream_of_;
  size_t buffered_packets_ = 0;
  std::vector<int> vcs_;  // scratch: the VC a multicast takes on each of its outputs
  const fred::Interconnect interconnect_;
  fred::RouteSchedule routes_;
  fred::ControlUnit control_;
  uint64_t configured_routes_ = 0, online_routes_ = 0;
  uint64_t phase_ = 0;  // the communication phase whose configuration is loaded: 1 + its instance
  sc_core::sc_time loaded_at_;  // packet fidelity: when the configuration being loaded is in
  const sc_core::sc_time reconfiguration_;
  MessagePool& messages_;
};

}  // namespace wafersim::hw
