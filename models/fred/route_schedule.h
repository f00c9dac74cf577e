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
// waits for the flows in its way to pass, or the conflict is reported (OnConflict::Stop); or,
// given port capacities, it streams slower from the earliest time at what its shared ports have
// left, when that ends sooner than waiting for its whole rate. With OnConflict::Split a flow with
// several outputs that cannot start at once is split into one flow per output (for a broadcast,
// unicasts), which go one after the other through its input ports, each routed when it goes,
// when that ends sooner than waiting for the whole.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/fred/flow_router.h"

namespace wafersim::fred {

// Per port, what it carries (Flow::rate's units); empty: a port serves one flow at a time.
struct PortCapacity {
  std::vector<double> inputs, outputs;
};

// What a flow the middles cannot carry at once does: wait for the flows in its way, stop the run
// (RoutingConflict), or go as one flow per output.
enum class OnConflict { Wait, Stop, Split };

class RouteSchedule {
 public:
  explicit RouteSchedule(const Interconnect& net, RouteOptions options = {},
                         PortCapacity capacity = {});

  // Routes `flow` for [start, start + length) and returns start, the first time from `earliest`
  // at which it can be routed. Throws RoutingConflict (naming the flows that clash) when
  // `stop_on_conflict` and the middles cannot carry it beside the flows that hold their routes at
  // the time its ports are free; std::invalid_argument for a malformed flow.
  uint64_t book(Flow flow, uint64_t earliest, uint64_t length, bool stop_on_conflict) {
    return admit(std::move(flow), earliest, length,
                 stop_on_conflict ? OnConflict::Stop : OnConflict::Wait)
        .start;
  }
  // As book(), and how long the flow streams from then at what rate: `length` at flow.rate, or
  // longer at what the ports it shares have left (longer x flow.rate / rate). Split: the whole
  // span, and per output (flow.outputs' order) its own. With a `configured` route (its phase's,
  // computed ahead: models/fred/control_unit.h) the flow takes that route when it fits beside the
  // flows that hold theirs, else it is routed online around them, as a flow without one is.
  struct Admission {
    uint64_t start = 0, length = 0;
    double rate = 0;
    std::vector<Admission> outputs;  // empty unless split
    bool configured = false;         // it took its configured route
  };
  Admission admit(Flow flow, uint64_t earliest, uint64_t length, OnConflict on_conflict,
                  const FlowRoute* configured = nullptr);
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
  // Where `flow` would go (not booked yet): its admission and the booking it makes.
  struct Plan {
    Admission admission;
    Booking booking;
  };
  Plan plan(Flow flow, uint64_t earliest, uint64_t length, bool stop_on_conflict,
            const FlowRoute* configured) const;
  // `start` and the starts of the flows booked within (start, start + span), in order: the times
  // at which the flows beside one over that span change.
  std::vector<uint64_t> changes_within(uint64_t start, uint64_t span) const;
  // The route `flow` can hold over [start, start + span) beside the flows booked then, if any.
  std::optional<FlowRoute> route_at(const Flow& flow, uint64_t start, uint64_t span,
                                    bool stop_on_conflict, const FlowRoute* configured) const;
  // The rate up to flow.rate that the ports `flow` shares have left throughout
  // [start, start + span).
  double spare_rate(const Flow& flow, uint64_t start, uint64_t span) const;
  // Whether the last of `flows` can take `route` beside the others on theirs (`fixed`).
  bool fits(const std::vector<Flow>& flows, std::vector<FlowRoute>& fixed,
            const FlowRoute& route) const;
  // Whether `flow` fits beside the flows in `others` on every port it shares with them.
  bool room_for(const Flow& flow, const std::vector<const Flow*>& others) const;

  const Interconnect& net_;
  const RouteOptions options_;
  const PortCapacity capacity_;
  std::vector<Booking> bookings_;
};

}  // namespace wafersim::fred
