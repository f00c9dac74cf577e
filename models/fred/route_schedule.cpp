#include "models/fred/route_schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace wafersim::fred {

namespace {

// Whether `route` is the configured one.
bool is(const FlowRoute* configured, const FlowRoute& route) {
  return configured && configured->middles == route.middles;
}

}  // namespace

RouteSchedule::RouteSchedule(const Interconnect& net, RouteOptions options, PortCapacity capacity)
    : net_(net), options_(options), capacity_(std::move(capacity)) {}

bool RouteSchedule::room_for(const Flow& flow, const std::vector<const Flow*>& others) const {
  if (others.empty()) return true;
  if (capacity_.inputs.empty() || flow.rate <= 0) return false;
  const auto fits = [&](const std::vector<int> Flow::*side, const std::vector<double>& capacity) {
    for (int port : flow.*side) {
      const double limit = capacity.at(static_cast<size_t>(port));
      double used = flow.rate;
      for (const Flow* o : others) {
        const auto& ports = o->*side;
        if (std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
        used += o->rate > 0 ? o->rate : limit;
      }
      if (used > limit * (1 + 1e-9)) return false;
    }
    return true;
  };
  return fits(&Flow::inputs, capacity_.inputs) && fits(&Flow::outputs, capacity_.outputs);
}

std::optional<FlowRoute> RouteSchedule::route_at(const Flow& flow, uint64_t start, uint64_t span,
                                                 bool stop_on_conflict,
                                                 const FlowRoute* configured) const {
  // The flows beside it change when one starts within its span: it needs one route that fits
  // beside each of those sets (it cannot move while it streams).
  const std::vector<uint64_t> moments = changes_within(start, span);
  FlowRoute route;
  for (size_t m = 0; m < moments.size(); ++m) {
    std::vector<Flow> flows;
    std::vector<FlowRoute> fixed;
    std::vector<const Flow*> sharing;  // take their shared ports in turns with it
    for (const Booking& b : bookings_) {
      if (b.start > moments[m] || b.end <= moments[m]) continue;
      if (share_a_port(b.flow, flow)) {
        sharing.push_back(&b.flow);
        continue;
      }
      // Flows that share ports among themselves hold the switch in turns: the route must fit
      // beside one of them at a time (the first, as the others' routes fit beside it).
      if (std::any_of(flows.begin(), flows.end(),
                      [&](const Flow& f) { return share_a_port(f, b.flow); }))
        continue;
      flows.push_back(b.flow);
      fixed.push_back(b.route);
    }
    if (!room_for(flow, sharing)) return std::nullopt;
    flows.push_back(flow);
    if (m == 0 && configured && fits(flows, fixed, *configured)) {
      route = *configured;
    } else if (m == 0) {
      try {
        route = route_flows(net_, flows, fixed, options_).back();
      } catch (const RoutingConflict&) {
        if (stop_on_conflict) throw;
        return std::nullopt;
      }
    } else if (!fits(flows, fixed, route)) {
      return std::nullopt;  // its route clashes with a flow that starts while it streams
    }
  }
  return route;
}

std::vector<uint64_t> RouteSchedule::changes_within(uint64_t start, uint64_t span) const {
  std::vector<uint64_t> moments{start};
  for (const Booking& b : bookings_)
    if (b.start > start && b.start < start + span) moments.push_back(b.start);
  std::sort(moments.begin(), moments.end());
  return moments;
}

double RouteSchedule::spare_rate(const Flow& flow, uint64_t start, uint64_t span) const {
  double spare = flow.rate;
  // The most the others hold on a port at once within the span: their sum at each of their starts.
  const std::vector<uint64_t> moments = changes_within(start, span);
  const auto take = [&](const std::vector<int> Flow::*side, const std::vector<double>& capacity) {
    for (int port : flow.*side) {
      const double limit = capacity.at(static_cast<size_t>(port));
      for (uint64_t t : moments) {
        double used = 0;
        for (const Booking& b : bookings_) {
          if (b.start > t || b.end <= t) continue;
          const auto& ports = b.flow.*side;
          if (std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
          used += b.flow.rate > 0 ? b.flow.rate : limit;
        }
        spare = std::min(spare, limit - used);
      }
    }
  };
  take(&Flow::inputs, capacity_.inputs);
  take(&Flow::outputs, capacity_.outputs);
  return std::max(spare, 0.0);
}

bool RouteSchedule::fits(const std::vector<Flow>& flows, std::vector<FlowRoute>& fixed,
                         const FlowRoute& route) const {
  fixed.push_back(route);
  bool fit = true;
  try {
    check_routing(net_, flows, fixed);
  } catch (const std::logic_error&) {
    fit = false;
  }
  fixed.pop_back();
  return fit;
}

RouteSchedule::Admission RouteSchedule::admit(Flow flow, uint64_t earliest, uint64_t length,
                                              OnConflict on_conflict, const FlowRoute* configured) {
  Plan whole = plan(flow, earliest, length, on_conflict == OnConflict::Stop, configured);
  if (on_conflict == OnConflict::Split && whole.admission.start > earliest &&
      flow.outputs.size() > 1) {
    // One flow per output, each from when the one before has passed its input ports (they do not
    // overlap, so each is planned beside the bookings alone).
    std::vector<Plan> pieces;
    uint64_t at = earliest;
    for (int output : flow.outputs) {
      Flow piece = flow;
      piece.outputs = {output};
      piece.name += " (split: to port " + std::to_string(output) + ")";
      pieces.push_back(plan(std::move(piece), at, length, false, nullptr));
      at = pieces.back().admission.start + pieces.back().admission.length;
    }
    if (at < whole.admission.start + whole.admission.length) {
      Admission split{
          pieces.front().admission.start, at - pieces.front().admission.start, flow.rate, {}};
      for (Plan& p : pieces) {
        split.outputs.push_back(p.admission);
        bookings_.push_back(std::move(p.booking));
      }
      return split;
    }
  }
  bookings_.push_back(std::move(whole.booking));
  return whole.admission;
}

RouteSchedule::Plan RouteSchedule::plan(Flow flow, uint64_t earliest, uint64_t length,
                                        bool stop_on_conflict, const FlowRoute* configured) const {
  // Candidate starts: the earliest time, then each time a flow in the way passes. After the last
  // one passes the flow is alone, and a lone flow always routes.
  std::vector<uint64_t> starts{earliest};
  for (const Booking& b : bookings_)
    if (b.end > earliest) starts.push_back(b.end);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  const uint64_t span = std::max<uint64_t>(length, 1);
  for (uint64_t start : starts) {
    std::optional<FlowRoute> route = route_at(flow, start, span, stop_on_conflict, configured);
    if (!route) continue;
    Admission admitted{start, span, flow.rate, {}};
    if (start > earliest && !capacity_.inputs.empty() && flow.rate > 0) {
      // Slower from the earliest time, at what its shared ports have left: each lower rate
      // streams longer and may meet more flows, so lower it until it holds throughout.
      Flow slower = flow;
      uint64_t slow_span = span;
      for (size_t k = 0; k <= bookings_.size() && slower.rate > 0; ++k) {
        const double spare = spare_rate(slower, earliest, slow_span);
        if (spare >= slower.rate * (1 - 1e-9)) break;
        slower.rate = spare > flow.rate * 1e-6 ? spare : 0;
        if (slower.rate > 0)
          slow_span =
              static_cast<uint64_t>(std::ceil(static_cast<double>(span) * flow.rate / slower.rate));
      }
      if (slower.rate > 0 && earliest + slow_span < start + span) {
        if (std::optional<FlowRoute> slow_route =
                route_at(slower, earliest, slow_span, false, configured)) {
          const double rate = slower.rate;
          return {{earliest, slow_span, rate, {}, is(configured, *slow_route)},
                  {earliest, earliest + slow_span, std::move(slower), *slow_route}};
        }
      }
    }
    admitted.configured = is(configured, *route);
    return {admitted, {start, start + span, std::move(flow), *route}};
  }
  // Unreachable: at the last candidate no booking overlaps.
  throw std::logic_error("RouteSchedule: no start found for flow '" + flow.name + "'");
}

void RouteSchedule::forget_before(uint64_t now) {
  bookings_.erase(std::remove_if(bookings_.begin(), bookings_.end(),
                                 [now](const Booking& b) { return b.end <= now; }),
                  bookings_.end());
}

size_t RouteSchedule::holding(uint64_t t) const {
  return static_cast<size_t>(
      std::count_if(bookings_.begin(), bookings_.end(),
                    [t](const Booking& b) { return b.start <= t && t < b.end; }));
}

}  // namespace wafersim::fred
