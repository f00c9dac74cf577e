#pragma once
// An NPU's network interface: cuts messages into units for the fidelity in force (flits of packets,
// packets, or whole messages), injects them with credit flow control, interleaving messages to
// different destinations packet by packet over its VCs (messages to one destination leave in
// order, as on one RDMA queue pair), and reassembles what arrives. Messages are delivered when
// their last byte is in. At message fidelity a message is sent whole, within send(): it leaves once
// the injection link has finished the messages sent before it (FabricNode's temporal decoupling).
// It has one port per network dimension, each with its own group: injection queue, VCs, round
// robin and credits. A message leaves on the port of the dimension its route starts in. A flow's
// contribution (hw/fred) keeps to its traffic class's VC, after the class's earlier flows, and
// goes only when no flow of a higher class can (hw/proto/traffic_class.h).
#include <algorithm>
#include <array>
#include <boost/unordered/unordered_flat_map.hpp>
#include <deque>
#include <functional>
#include <systemc>

#include "hw/noc/fabric_node.h"
#include "hw/proto/callback_queue.h"

namespace wafersim::hw {

class NetworkInterface : public FabricNode {
 public:
  // `from_network` / `to_network`: the NPU's links in each direction, one per dimension, in the
  // order of the topology's out links of the NPU node (its ports).
  NetworkInterface(sc_core::sc_module_name name, const FabricParams& params, FabricShared shared,
                   CallbackQueue& callbacks, const std::vector<topology::Link>& from_network,
                   const std::vector<topology::Link>& to_network);

  // Queues a message. `on_sent` runs when its last unit has left; on the receiving side,
  // `on_delivered` when it has fully arrived (each set once per NIC, or left empty).
  void send(Message* message);

 private:
  // What sending and receiving a message read, first among the NIC's own members and in two cache
  // lines (FabricNode's parameters and delays, where these come from, are cold at every message
  // of a large run).
  alignas(64) CallbackQueue& callbacks_;
  const sc_core::sc_time endpoint_delay_;  // delays_.endpoint
  const uint64_t packet_bytes_;            // params_.packet_bytes
  const uint64_t header_bytes_;            // params_.header_bytes

 public:
  std::function<void(Message*)> on_sent;
  std::function<void(Message*)> on_delivered;

 private:
  // What the NIC knows of its route to a destination rank: the port it leaves on, and (message
  // fidelity) the narrowest link on the way, from a small cache (peer_route()). An NPU sends to
  // few peers at a time (a ring's neighbour, a mesh's four).
  struct PeerRoute {
    int dst = -1;
    int port = 0;
    double bytes_per_cycle = 0;
  };
  // The last route asked for, beside on_delivered in the line a delivery has just read: the send
  // it leads to finds its route here when it goes to the same rank, as a ring's always does (from
  // the cache, a line of its own in each NIC, it cost a last-level miss a message at 4,096 NPUs:
  // docs/performance.md).
  PeerRoute last_route_;

 private:
  struct Outgoing {
    Message* message;
    sc_core::sc_time eligible;
    uint64_t sent_bytes = 0;  // payload bytes of completed packets
    uint64_t packet = 0;
    uint32_t flit = 0;    // next flit of the current packet (flit fidelity)
    int vc = -1;          // VC held mid-packet (flit fidelity)
    int lane = -1;        // the first of its two injection VCs, chosen with its first packet
    bool behind = false;  // an earlier message to the same destination is still leaving
  };

  void on_arrival(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
                  const sc_core::sc_time& arrival) override;
  void on_credit_returning(int out_port, const sc_core::sc_time& at) override;
  void pass(int in_port, tlm::tlm_generic_payload& trans, TransferExt& unit,
            const sc_core::sc_time& head_at) override;
  // Messages to one destination leave in order, and so do the flows of one class (which keep to
  // its VC): the key they queue by.
  static int order_key(const Message& m) {
    return m.flow ? -1 - static_cast<int>(m.flow->traffic_class) : m.dst;
  }
  // The best priority (TrafficClass) among the flows `port` could send a packet of now; INT_MAX
  // if none.
  int first_class_ready(int port, const sc_core::sc_time& now) const;
  // Counts a unit's payload in; delivers its message when it is complete.
  void receive(const TransferExt& unit);
  // What one port injects: its own queue, VC state and round robin.
  struct PortGroup {
    std::deque<Outgoing> outgoing;
    // Messages in `outgoing` per order_key: open addressing, as every message adds a key and its
    // last unit removes it (a node-based map allocated and freed a node per message).
    boost::unordered_flat_map<int, int> queued_to;
    int flows_queued = 0;  // flows' contributions in `outgoing`
    std::vector<bool> vc_locked;
    std::vector<int> lane_users;  // per lane, messages in progress whose pair includes it
    // Where the next round starts looking: just past the message served last, wrapped only when
    // used. Wrapping at once would make the order depend on whether a message queued in the same
    // cycle (not yet eligible) was queued before or after this round ran.
    size_t rr = 0;
    bool credit_stalled = false;  // units wait and no VC has a credit (counted as link stall)
    sc_core::sc_time credit_stalled_since;
  };

  void send_whole(int port, Message* message);
  void sent(Message* message, const sc_core::sc_time& at);
  void on_wake() override;
  void inject_round(int port);
  // Fills `unit` with the next unit of `o` for the fidelity in force; true when it is the last one.
  bool next_unit(const Outgoing& o, TransferExt& unit) const;
  // Lanes: the VCs of the injection class (0, classes, 2 x classes, ...); a message uses two.
  int lane_count() const { return params_.vcs / params_.vc_classes; }
  int lane_spread() const { return std::min(2, lane_count()); }
  int first_lane(int port, const Outgoing& o) const;
  // Counts a message in (+1) or out (-1) of its lanes.
  void use_lanes(PortGroup& group, int first, int delta);
  int pick_vc(int port, const Outgoing& o, int first, uint32_t credits) const;
  // Messages queued in all groups (for the queue-depth probe).
  int queued() const;

  // The route of `m` (from this NIC's rank): the last one asked for if it is to the same rank, else
  // the cache's.
  const PeerRoute& peer_route(const Message& m) {
    if (last_route_.dst != m.dst) last_route_ = cached_route(m);
    return last_route_;
  }
  PeerRoute cached_route(const Message& m);
  std::vector<PortGroup> groups_;  // one per output port
  // 64: an NPU of a 4-D platform exchanges with a dozen or more peers (8 thrashed: 4% of a
  // 1,024-NPU run walked routes).
  std::array<PeerRoute, 64> peer_routes_{};
};

}  // namespace wafersim::hw
