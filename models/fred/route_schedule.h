#pragma once
// The flows that hold routes through one Fred_m(P) over time (plain C++: times are whole ticks of
// the caller's clock). A Fred switch routes each flow when it is about to stream through and keeps
// the route until the flow has passed, never moving a flow that runs (the paper's switch loads a
// configuration and streams; models/fred/flow_router.h). A new flow starts at the first time, from
// the earliest it could, at which it shares no port with a flow that holds its route then (a port
// serves one flow at a time) and the m middles can carry it beside those flows. When they cannot,
// it waits for the flows in its way to pass, or the conflict is reported (`stop_on_conflict`).
#include <cstdint>
#include <vector>

#include "models/fred/flow_router.h"

namespace wafersim::fred {

class RouteSchedule {
 public:
  explicit RouteSchedule(const Interconnect& net, RouteOptions options = {});

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
  const Interconnect& net_;
  const RouteOptions options_;
  std::vector<Booking> bookings_;
};

}  // namespace wafersim::fred
