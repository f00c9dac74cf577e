#include "models/fred/flow_router.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace wafersim::fred {

namespace {

// A flow inside one subnetwork: its ports there.
struct SubFlow {
  int flow;  // index into the caller's flows
  std::vector<int> inputs, outputs;
};

std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The ports of the middle subnetwork that `ports` of `net` reach.
std::vector<int> middle_ports(const Interconnect& net, const std::vector<int>& ports) {
  std::vector<int> out;
  for (int p : ports) out.push_back(net.middle_port(p));
  return sorted_unique(out);
}

// The outer stage's micro-switches a flow's ports sit on (the odd port has none).
std::vector<int> micro_switches(const Interconnect& net, const std::vector<int>& ports) {
  std::vector<int> out;
  for (int p : ports)
    if (p < 2 * net.pairs()) out.push_back(p / 2);
  return sorted_unique(out);
}

std::string quoted(const std::vector<Flow>& flows, int f) {
  return "'" + flows[f].name + "'";
}

enum class Outcome { Routed, NoRoute, OutOfSteps };

// Depth-first search over each level's colourings, inner levels routed at each complete one.
class Search {
 public:
  Search(long max_steps, std::vector<FlowRoute>& routes, const std::vector<bool>& fixed)
      : max_steps_(max_steps), routes_(routes), fixed_(fixed) {}

  bool route(const Interconnect& net, const std::vector<SubFlow>& flows, size_t level) {
    // In a base switch every flow fits: flows that shared a micro-switch went to different middles,
    // so the flows of one middle share no port.
    if (net.is_base()) return true;
    const int n = static_cast<int>(flows.size());
    // Two flows on one micro-switch conflict; ports belong to one flow each, so a micro-switch
    // has at most two users per side.
    std::vector<std::vector<int>> adjacent(n);
    for (bool in : {true, false}) {
      std::vector<std::vector<int>> users(net.pairs());
      for (int i = 0; i < n; ++i)
        for (int s : micro_switches(net, in ? flows[i].inputs : flows[i].outputs))
          users[s].push_back(i);
      for (const auto& u : users)
        if (u.size() == 2) {
          adjacent[u[0]].push_back(u[1]);
          adjacent[u[1]].push_back(u[0]);
        }
    }
    std::vector<int> colours(n, -1), order;
    bool any_fixed = false;
    for (int i = 0; i < n; ++i)
      if (fixed_[flows[i].flow]) {
        colours[i] = routes_[flows[i].flow].middles[level];
        any_fixed = true;
        for (int j : adjacent[i])
          if (colours[j] == colours[i]) return false;  // the fixed flows themselves conflict
      } else {
        order.push_back(i);
      }
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return adjacent[a].size() > adjacent[b].size(); });
    Level at{net, flows, level, adjacent, order, colours, any_fixed};
    return colour(at, 0, 0);
  }

  bool exhausted() const { return steps_ > max_steps_; }

 private:
  struct Level {
    const Interconnect& net;
    const std::vector<SubFlow>& flows;
    size_t level;
    const std::vector<std::vector<int>>& adjacent;
    const std::vector<int>& order;
    std::vector<int>& colours;
    // Without fixed flows the middles are interchangeable: a flow may open at most the next unused
    // one, so no colouring is tried under another numbering of the middles.
    bool any_fixed;
  };

  bool colour(Level& at, size_t next, int opened) {
    if (next == at.order.size()) return route_middles(at);
    const int i = at.order[next];
    const int limit = at.any_fixed ? at.net.middles() : std::min(opened + 1, at.net.middles());
    for (int c = 0; c < limit; ++c) {
      if (std::any_of(at.adjacent[i].begin(), at.adjacent[i].end(),
                      [&](int j) { return at.colours[j] == c; }))
        continue;
      if (++steps_ > max_steps_) return false;
      at.colours[i] = c;
      if (colour(at, next + 1, std::max(opened, c + 1))) return true;
      if (exhausted()) return false;
    }
    at.colours[i] = -1;
    return false;
  }

  // Every flow has a middle at this level: record them and route each middle's flows.
  bool route_middles(Level& at) {
    std::vector<std::vector<SubFlow>> inner(at.net.middles());
    for (size_t i = 0; i < at.flows.size(); ++i) {
      const SubFlow& f = at.flows[i];
      routes_[f.flow].middles[at.level] = at.colours[i];
      inner[at.colours[i]].push_back(
          {f.flow, middle_ports(at.net, f.inputs), middle_ports(at.net, f.outputs)});
    }
    for (const auto& flows : inner)
      if (!route(at.net.middle(), flows, at.level + 1)) return false;
    return true;
  }

  const long max_steps_;
  long steps_ = 0;
  std::vector<FlowRoute>& routes_;
  const std::vector<bool>& fixed_;
};

// Routes the flows `subset` (indices into `flows`), those below fixed.size() where `fixed` has
// them; `routes` receives every flow's route (others untouched).
Outcome attempt(const Interconnect& net, const std::vector<Flow>& flows,
                const std::vector<int>& subset, const std::vector<FlowRoute>& fixed, long max_steps,
                std::vector<FlowRoute>& routes) {
  std::vector<bool> is_fixed(flows.size(), false);
  std::vector<SubFlow> top;
  for (int f : subset) {
    if (static_cast<size_t>(f) < fixed.size()) {
      routes[f] = fixed[f];
      is_fixed[f] = true;
    } else {
      routes[f].middles.assign(net.levels() - 1, -1);
    }
    top.push_back({f, sorted_unique(flows[f].inputs), sorted_unique(flows[f].outputs)});
  }
  Search search(max_steps, routes, is_fixed);
  if (search.route(net, top, 0)) return Outcome::Routed;
  return search.exhausted() ? Outcome::OutOfSteps : Outcome::NoRoute;
}

void validate(const Interconnect& net, const std::vector<Flow>& flows,
              const std::vector<FlowRoute>& fixed) {
  const std::string range = net.name() + " has ports 0 to " + std::to_string(net.ports() - 1);
  std::vector<int> input_of(net.ports(), -1), output_of(net.ports(), -1);
  for (size_t f = 0; f < flows.size(); ++f) {
    const std::string who = "flow " + quoted(flows, static_cast<int>(f));
    for (bool in : {true, false}) {
      const std::vector<int>& ports = in ? flows[f].inputs : flows[f].outputs;
      const char* side = in ? "input" : "output";
      if (ports.empty()) throw std::invalid_argument(who + " has no " + side + " port");
      std::vector<int>& owner = in ? input_of : output_of;
      for (int p : ports) {
        if (p < 0 || p >= net.ports())
          throw std::invalid_argument(who + ": " + side + " port " + std::to_string(p) +
                                      " does not exist (" + range + ")");
        if (owner[p] == static_cast<int>(f))
          throw std::invalid_argument(who + " lists " + side + " port " + std::to_string(p) +
                                      " twice");
        if (owner[p] >= 0)
          throw std::invalid_argument("flows " + quoted(flows, owner[p]) + " and " +
                                      quoted(flows, static_cast<int>(f)) + " both take " + side +
                                      " port " + std::to_string(p));
        owner[p] = static_cast<int>(f);
      }
    }
  }
  if (fixed.size() > flows.size())
    throw std::invalid_argument(std::to_string(fixed.size()) + " fixed routes for " +
                                std::to_string(flows.size()) + " flows");
  for (size_t f = 0; f < fixed.size(); ++f) {
    const auto& m = fixed[f].middles;
    if (m.size() != static_cast<size_t>(net.levels() - 1) ||
        std::any_of(m.begin(), m.end(), [&](int c) { return c < 0 || c >= net.middles(); }))
      throw std::invalid_argument("flow " + quoted(flows, static_cast<int>(f)) +
                                  ": a fixed route on " + net.name() + " names " +
                                  std::to_string(net.levels() - 1) + " middles, each 0 to " +
                                  std::to_string(net.middles() - 1));
  }
}

// Why the flows `conflict` (a set that does not route) clash in the outer stage.
std::string outer_clashes(const Interconnect& net, const std::vector<Flow>& flows,
                          const std::vector<int>& conflict) {
  if (net.is_base()) return "";
  std::string text;
  for (bool in : {true, false})
    for (size_t a = 0; a < conflict.size(); ++a)
      for (size_t b = a + 1; b < conflict.size(); ++b) {
        const auto sa =
            micro_switches(net, in ? flows[conflict[a]].inputs : flows[conflict[a]].outputs);
        const auto sb =
            micro_switches(net, in ? flows[conflict[b]].inputs : flows[conflict[b]].outputs);
        for (int s : sa)
          if (std::binary_search(sb.begin(), sb.end(), s))
            text += std::string(text.empty() ? "" : "; ") + quoted(flows, conflict[a]) + " and " +
                    quoted(flows, conflict[b]) + " share " + (in ? "input" : "output") +
                    " micro-switch " + std::to_string(s) + " (ports " + std::to_string(2 * s) +
                    " and " + std::to_string(2 * s + 1) + ")";
      }
  return text;
}

}  // namespace

bool share_a_port(const Flow& a, const Flow& b) {
  const auto meet = [](const std::vector<int>& x, const std::vector<int>& y) {
    for (int p : x)
      if (std::find(y.begin(), y.end(), p) != y.end()) return true;
    return false;
  };
  return meet(a.inputs, b.inputs) || meet(a.outputs, b.outputs);
}

std::vector<FlowRoute> route_flows(const Interconnect& net, const std::vector<Flow>& flows,
                                   const std::vector<FlowRoute>& fixed,
                                   const RouteOptions& options) {
  validate(net, flows, fixed);
  std::vector<int> all(flows.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<FlowRoute> routes(flows.size());
  const Outcome outcome = attempt(net, flows, all, fixed, options.max_steps, routes);
  if (outcome == Outcome::Routed) return routes;
  const std::string where = net.name() + " (" + std::to_string(net.middles()) + " middle networks)";
  if (outcome == Outcome::OutOfSteps)
    throw RoutingConflict("routing " + std::to_string(flows.size()) + " flows on " + where +
                              ": no routing found in " + std::to_string(options.max_steps) +
                              " colour assignments (RouteOptions::max_steps)",
                          all);
  // Leave out each flow in turn while the rest still fails: what remains is a set that clashes
  // and routes without any one of its flows (adding flows never helps, so one pass suffices).
  // (A flow whose leaving out ran out of steps stays in, and the message says less.)
  std::vector<int> conflict = all;
  bool minimal = true;
  for (int f : all) {
    std::vector<int> rest;
    for (int g : conflict)
      if (g != f) rest.push_back(g);
    std::vector<FlowRoute> scratch(flows.size());
    const Outcome without = attempt(net, flows, rest, fixed, options.max_steps, scratch);
    if (without == Outcome::NoRoute) conflict = rest;
    if (without == Outcome::OutOfSteps) minimal = false;
  }
  std::string names;
  for (int f : conflict) names += std::string(names.empty() ? "" : ", ") + quoted(flows, f);
  const std::string clashes = outer_clashes(net, flows, conflict);
  throw RoutingConflict(
      "flows " + names + " cannot all be routed on " + where +
          (minimal ? "; without any one of them the rest route" : "") +
          (clashes.empty() ? std::string(" (they clash inside the middle networks)")
                           : ". In the outer stage: " + clashes),
      conflict);
}

namespace {

class Walk {
 public:
  explicit Walk(const std::vector<Flow>& flows) : flows_(flows) {}

  void flow(const Interconnect& net, int f, const std::vector<int>& inputs,
            const std::vector<int>& outputs, const FlowRoute& route, size_t level,
            const std::string& where) {
    if (net.is_base()) {
      if (level != route.middles.size()) fail(f, "its route names too many middles");
      for (int p : inputs) take(where + ": input port " + std::to_string(p), f);
      for (int p : outputs) take(where + ": output port " + std::to_string(p), f);
      functions_.reduces += static_cast<long>(inputs.size()) - 1;
      functions_.distributes += static_cast<long>(outputs.size()) - 1;
      return;
    }
    if (level >= route.middles.size()) fail(f, "its route names too few middles");
    const int c = route.middles[level];
    if (c < 0 || c >= net.middles()) fail(f, "its route names middle " + std::to_string(c));
    const std::string to_middle = " -> middle " + std::to_string(c);
    for (bool in : {true, false}) {
      const std::vector<int>& ports = in ? inputs : outputs;
      const std::string side = in ? "input" : "output";
      for (int s : micro_switches(net, ports)) {
        take(where + ": " + side + " micro-switch " + std::to_string(s) + to_middle, f);
        const bool both = std::binary_search(ports.begin(), ports.end(), 2 * s) &&
                          std::binary_search(ports.begin(), ports.end(), 2 * s + 1);
        if (both) (in ? functions_.reduces : functions_.distributes)++;
      }
      if (net.has_odd_port() && std::binary_search(ports.begin(), ports.end(), net.ports() - 1))
        take(where + ": " + (in ? "demux" : "mux") + to_middle, f);
    }
    flow(net.middle(), f, middle_ports(net, inputs), middle_ports(net, outputs), route, level + 1,
         where + " / middle " + std::to_string(c) + " " + net.middle().name());
  }

  const Functions& functions() const { return functions_; }

 private:
  void take(const std::string& place, int f) {
    const auto [it, fresh] = owner_.emplace(place, f);
    if (!fresh && it->second != f)
      throw std::logic_error("flows " + quoted(flows_, it->second) + " and " + quoted(flows_, f) +
                             " share " + place);
  }
  [[noreturn]] void fail(int f, const std::string& problem) {
    throw std::logic_error("flow " + quoted(flows_, f) + ": " + problem);
  }

  const std::vector<Flow>& flows_;
  std::map<std::string, int> owner_;
  Functions functions_;
};

}  // namespace

Functions check_routing(const Interconnect& net, const std::vector<Flow>& flows,
                        const std::vector<FlowRoute>& routes) {
  if (routes.size() != flows.size())
    throw std::logic_error(std::to_string(routes.size()) + " routes for " +
                           std::to_string(flows.size()) + " flows");
  Walk walk(flows);
  for (size_t f = 0; f < flows.size(); ++f)
    walk.flow(net, static_cast<int>(f), sorted_unique(flows[f].inputs),
              sorted_unique(flows[f].outputs), routes[f], 0, net.name());
  return walk.functions();
}

}  // namespace wafersim::fred
