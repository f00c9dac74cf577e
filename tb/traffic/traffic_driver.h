#pragma once
// The synthetic-traffic testbench: every NPU's network interface becomes a packet source and sink.
// Packets are created by a Bernoulli process per node and cycle (BookSim's default injection
// process), wait in the NIC's source queue, and are measured BookSim's way: packets created during
// the measurement window are followed until they are ejected, and the run stops when they all are
// (or when the drain limit says the network is saturated).
#include <cstdint>
#include <memory>
#include <queue>
#include <random>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/platform/platform.h"
#include "tb/traffic/patterns.h"

namespace wafersim::tb {

struct TrafficSpec {
  Pattern pattern = Pattern::Uniform;
  double rate = 0.1;                    // offered load, flits per node per cycle
  int packet_flits = 1;                 // packet length, flits
  uint64_t warmup_cycles = 1000;        // before measurement: packets created here not measured
  uint64_t measure_cycles = 10000;      // measurement window
  uint64_t drain_cycles = 20000;        // after the window: time allowed for measured packets
  double latency_threshold_cycles = 0;  // average packet latency above this = saturated (0: off)
  uint64_t seed = 1;
  int hotspot = -1;               // hotspot pattern: destination NPU (-1 = the middle one)
  double hotspot_fraction = 0.5;  // hotspot pattern: share of packets sent to it
};

struct TrafficResult {
  double offered_flits_per_node_cycle = 0;   // flits created during the window / nodes / cycles
  double accepted_flits_per_node_cycle = 0;  // flits ejected during the window / nodes / cycles
  double avg_packet_latency_cycles = 0;      // creation to ejection of the tail, measured packets
  double avg_network_latency_cycles = 0;     // injection of the head to ejection of the tail
  double max_packet_latency_cycles = 0;
  double avg_hops = 0;  // router-to-router links crossed per measured packet
  uint64_t measured_packets = 0;
  uint64_t delivered_measured_packets = 0;
  uint64_t simulated_cycles = 0;
  bool saturated = false;
};

class TrafficDriver : public sc_core::sc_module, private tlm::tlm_bw_transport_if<> {
 public:
  SC_HAS_PROCESS(TrafficDriver);
  // Throws std::invalid_argument for a spec that does not fit the platform.
  TrafficDriver(sc_core::sc_module_name name, const TrafficSpec& spec,
                const topology::Topology& topology, hw::Platform& platform);
  ~TrafficDriver() override;

  // Valid once the simulation has stopped.
  TrafficResult result() const;

 private:
  struct NextPacket {
    uint64_t cycle;
    int node;
    bool operator>(const NextPacket& o) const {
      return cycle != o.cycle ? cycle > o.cycle : node > o.node;
    }
  };

  void generate();
  void schedule_next(int node, uint64_t after_cycle);
  void delivered(hw::Message* m);
  uint64_t cycle_of(const sc_core::sc_time& t) const;
  bool in_window(uint64_t cycle) const;
  void stop_if_done();

  // The NPUs' command sockets must be bound; synthetic traffic issues no commands on them, so
  // nothing comes back on their backward path.
  std::vector<std::unique_ptr<tlm::tlm_initiator_socket<32>>> idle_hosts_;
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&,
                                     sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
  const TrafficSpec spec_;
  const topology::Topology& topology_;
  hw::Platform& platform_;
  DestinationPicker picker_;
  const sc_core::sc_time cycle_;
  const uint64_t payload_bytes_;  // one packet: the fabric's packet_bytes, set by the caller
  // Router-to-router links per (source, destination), walked the first time a measured packet
  // takes the route (a table of every route's path up front took 3,100 M instructions at
  // 32 x 32; a walk for every packet, 3% of a 16 x 16 run); up to 4,096 NPUs (32 MB), beyond
  // which every packet walks.
  static constexpr uint16_t kUnknownHops = 0xffff;
  static constexpr int kHopTableMaxNpus = 4096;
  std::vector<uint16_t> hops_;
  uint16_t hops(int src, int dst);
  std::mt19937_64 rng_;
  std::geometric_distribution<uint64_t> gap_;  // idle cycles before a node's next packet
  std::priority_queue<NextPacket, std::vector<NextPacket>, std::greater<NextPacket>> next_;
  sc_core::sc_event wake_;
  sc_core::sc_event deadline_;
  // Messages are recycled: one per packet, millions per run.
  hw::Message* new_message();
  std::vector<std::unique_ptr<hw::Message>> messages_;
  std::vector<hw::Message*> spare_;
  uint64_t next_id_ = 0;
  uint64_t in_flight_ = 0;

  // Measurement
  uint64_t created_in_window_flits_ = 0;
  uint64_t ejected_in_window_flits_ = 0;
  uint64_t measured_ = 0, measured_done_ = 0;
  double latency_sum_ = 0, network_latency_sum_ = 0, latency_max_ = 0;
  uint64_t hops_sum_ = 0;
  bool saturated_ = false;
  uint64_t stopped_at_ = 0;
  bool stopped_ = false;
};

}  // namespace wafersim::tb
