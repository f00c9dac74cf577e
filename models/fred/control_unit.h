#pragma once
// A Fred switch's control unit (PAPERS.md section 1): the routing configurations of communication
// phases through one Fred_m(P), computed ahead of the phase and looked up by the configuration
// index a packet's header carries (plain C++).
//
// A phase (one collective) may pass a switch with several flows. Flows that share a port take it
// in turns (a port serves one flow at a time), so they cannot be one configuration: the phase's
// flows are laid, in the order given, into the first of its configurations whose flows share no
// port with them, and each configuration is routed as a whole (models/fred/flow_router.h). When
// the middles cannot carry a configuration's flows together, the phase is refused naming them
// (OnConflict::Stop), or the flow that clashes moves to a configuration of its own (otherwise): it
// runs when the others have passed, as it would waiting for them online.
//
// Phases may overlap (the paper's phase is a class's communication, MP, DP or PP, which may be
// several collectives at once: the DP all-reduces of every DP group). A configuration is therefore
// routed around the flows of the configurations held for other phases that can run beside it
// (they share no port with it), when the middles leave room for both; else alone.
//
// A flow without a configuration carries the default index: it is routed online when it streams,
// as a unicast is (models/fred/route_schedule.h).
#include <cstdint>
#include <map>
#include <vector>

#include "models/fred/flow_router.h"
#include "models/fred/route_schedule.h"

namespace wafersim::fred {

class ControlUnit {
 public:
  explicit ControlUnit(const Interconnect& net, RouteOptions options = {});

  // A flow of a phase through the switch, named by the caller's key (unique within the phase).
  struct PhaseFlow {
    uint64_t key = 0;
    Flow flow;
  };
  // Computes and stores the configurations of `phase` (replacing any it had). Throws
  // RoutingConflict naming the flows that cannot be routed together when `on_conflict` is Stop,
  // std::invalid_argument for a malformed flow or a key given twice.
  void configure(uint64_t phase, const std::vector<PhaseFlow>& flows, OnConflict on_conflict);
  // Forgets the configurations of `phase` (its flows have passed).
  void release(uint64_t phase) { phases_.erase(phase); }

  // The route configured for flow `key` of `phase`, or null (no configuration: routed online).
  const FlowRoute* route(uint64_t phase, uint64_t key) const;
  // Configurations held now, and computed so far.
  size_t held() const;
  uint64_t computed() const { return computed_; }

  // One configuration: flows routed together, and what they enable.
  struct Configuration {
    std::vector<Flow> flows;
    std::vector<uint64_t> keys;
    std::vector<FlowRoute> routes;
    Functions functions;
  };
  const std::vector<Configuration>* configurations(uint64_t phase) const;

 private:
  // Routes `config` around the other phases' flows that can run beside it, or alone; moves a
  // flow out of it into `overflow` while its own flows clash (or throws, when `stop`).
  void route(Configuration& config, std::vector<Configuration>& overflow, bool stop) const;

  const Interconnect& net_;
  const RouteOptions options_;
  std::map<uint64_t, std::vector<Configuration>> phases_;
  uint64_t computed_ = 0;
};

}  // namespace wafersim::fred
