#pragma once
// Parameters shared by every block that moves units over links: fidelity, sizes and router
// pipeline. Plain data: hw/platform fills it from the platform spec; the config reader documents
// every field.
#include <cstdint>
#include <string>

namespace wafersim::hw {

// DESIGN.md decision 3: what one TLM transaction on a link stands for.
enum class Fidelity { Flit, Packet, Message };

const char* to_string(Fidelity f);
Fidelity fidelity_from_string(const std::string& text);  // throws std::invalid_argument

struct FabricParams {
  Fidelity fidelity = Fidelity::Packet;
  double clock_ghz = 1.0;        // network clock
  uint32_t flit_bytes = 64;      // flow-control unit
  uint32_t packet_bytes = 4096;  // payload bytes per packet
  uint32_t header_bytes = 0;     // added to every packet on the wire
  int vcs = 2;                   // virtual channels per port
  uint32_t buffer_flits = 64;    // input buffer depth per VC, in flits: one default packet
  uint32_t routing_delay_cycles = 1;
  uint32_t vc_alloc_delay_cycles = 1;
  uint32_t sw_alloc_delay_cycles = 1;
  uint32_t switch_traversal_delay_cycles = 1;
  uint32_t credit_delay_cycles = 1;
  // Iterations of the separable switch allocator per cycle: inputs left unmatched by one
  // iteration bid again (another of their VCs) for the outputs still free, as in iSLIP with
  // BookSim's `alloc_iters`. Round-robin pointers move in the first iteration only.
  int sw_alloc_iterations = 1;
  // When a router may hand an output VC to another packet: once the holder's tail has left
  // (false), or only once the tail's credit is back, the VC empty downstream (true; BookSim's
  // `wait_for_tail_credit = 1`).
  bool vc_release_on_tail_credit = false;
  uint32_t endpoint_delay_cycles =
      0;               // per message, at the sending NIC (ASTRA-sim's endpoint-delay)
  int vc_classes = 1;  // 2 on rings with multi-hop routes (dateline)
  // Fred switches (hw/fred): the middle subnetworks m of their Fred_m(P) interconnect, and the
  // pipeline cycles of each block a unit crosses in it (a Fred switch's traversal takes its
  // interconnect's stages x fred_stage_cycles instead of switch_traversal_delay_cycles). Flows
  // that cannot be routed through it beside those it carries then wait for them to end, stop the
  // run, or go as one flow per output when that ends sooner (`fred_conflicts`).
  enum class FredConflicts { Wait, Error, Unicast };
  int fred_middles = 3;
  uint32_t fred_stage_cycles = 1;
  FredConflicts fred_conflicts = FredConflicts::Wait;
  // Cycles a Fred switch takes to load the configuration of another communication phase (another
  // collective) before that phase's first flow through it leaves.
  uint32_t fred_reconfiguration_cycles = 0;
  // Link-level retransmission, packet fidelity (hw/noc/link_retry.h): Go-Back-N, with one
  // cumulative ACK per `ack_every_packets` packets on the reverse link's control VC (the last);
  // a link drops or corrupts each packet it carries with these probabilities (drawn from
  // `fault_seed`, the link and the packet: the same in every run). A corrupted packet is NACKed on
  // arrival; a dropped one is sent again `retransmit_timeout_cycles` after it left.
  bool go_back_n = false;
  uint32_t ack_every_packets = 16;
  uint32_t retransmit_timeout_cycles = 1000;
  double drop_probability = 0;
  double corrupt_probability = 0;
  uint64_t fault_seed = 1;
};

}  // namespace wafersim::hw
