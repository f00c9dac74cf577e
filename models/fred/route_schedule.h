#pragma once
// The flows that hold routes through one Fred_m(P) over time (plain C++: times are whole ticks of
// the caller's clock). A Fred switch routes each flow when it is about to stream through and keeps
// the route until the flow has passed, never moving a flow that runs (the paper's switch loads a
// configuration and streams; models/fred/flow_router.h). A new flow starts at the first time, from
// the earliest it could, at which the m middles can carry it beside the flows that hold routes on
// other ports, and each port it shares with flows has room for it: a port serves one flow at a
// time, or, given port capacities, flows slower than the port side by side while their rates fit
// in it (their packets interleave, each carrying its own phase's configuration index: PAPERS.md
// section 1; they take the port in turns, so they are not routed together). When it cannot, it
// waits for the flows in its way to pass, or the conflict is reported (`stop_on_conflict`).
#include <cstdint>
#include <vector>

#include "models/fred/flow_router.h"

namespace wafersim::fred {

// Per port, what it carries (Flow::rate's units); empty: a port serves one flow at a time.
struct PortCapacity {
  std::vector<double> inputs, outputs;
};

class RouteSchedule {
 public:
  explicit RouteSchedule(const Interconnect& net, RouteOptions options = {},
                         PortCapacity capacity = {});

  // Routes `flow` for [start, start + length) and returns start, the first time from `earliest`
  // at which it can be routed. Throws RoutingConflict (naming the flows that clash) when
  // `stop_on_conflict` and the middles cannot carry it beside the flows that hold their routes at
  // the time its ports are free; std::invalid_argument for a malformed flow.
  uint64_t book(Flow flow, uint64_t earliest, uint64_t length, bool stop_on_conflict);
  // Forgets the flows that have passed by `now`.
  void forget_before(uint64_t now);
  // Flows holding a route at `t`.
  size_t holding(uint64_t t) const;

 private:
  struct Booking {
    uint64_t start, end;
    Flow flow;
    FlowRoute route;
  };
  // Whether `flow` fits beside the flows in `others` on every port it shares with them.
  bool room_for(const Flow& flow, const std::vector<const Flow*>& others) const;

  const Interconnect& net_;
  const RouteOptions options_;
  const PortCapacity capacity_;
  std::vector<Booking> bookings_;
};

}  // namespace wafersim::fred
