#include "models/fred/control_unit.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace wafersim::fred {

ControlUnit::ControlUnit(const Interconnect& net, RouteOptions options)
    : net_(net), options_(options) {}

void ControlUnit::route(Configuration& config, std::vector<Configuration>& overflow,
                        bool stop) const {
  // The configurations held for other phases, as far as they can run beside this one: the flows
  // sharing no port with it nor with each other (flows that share a port take it in turns).
  std::vector<Flow> beside;
  std::vector<FlowRoute> fixed;
  const size_t ports = static_cast<size_t>(net_.ports());
  std::vector<bool> in_taken(ports), out_taken(ports);  // by the flows gathered so far
  const auto free = [&](const Flow& f) {
    return std::none_of(f.inputs.begin(), f.inputs.end(), [&](int p) { return in_taken[p]; }) &&
           std::none_of(f.outputs.begin(), f.outputs.end(), [&](int p) { return out_taken[p]; });
  };
  const auto take = [&](const Flow& f) {
    for (int p : f.inputs) in_taken[p] = true;
    for (int p : f.outputs) out_taken[p] = true;
  };
  for (const Flow& f : config.flows) take(f);
  for (const auto& [phase, configs] : phases_)
    for (const Configuration& c : configs)
      for (size_t f = 0; f < c.flows.size(); ++f) {
        if (!free(c.flows[f])) continue;
        take(c.flows[f]);
        beside.push_back(c.flows[f]);
        fixed.push_back(c.routes[f]);
      }
  for (;;) {
    try {
      if (!beside.empty()) {  // around the flows of other phases, when they leave room
        std::vector<Flow> all = beside;
        all.insert(all.end(), config.flows.begin(), config.flows.end());
        try {
          std::vector<FlowRoute> routes = route_flows(net_, all, fixed, options_);
          config.routes.assign(routes.begin() + static_cast<long>(beside.size()), routes.end());
          config.functions = check_routing(net_, config.flows, config.routes);
          return;
        } catch (const RoutingConflict&) {
          // they do not: routed alone, it is rerouted online where it meets them
        }
      }
      config.routes = route_flows(net_, config.flows, {}, options_);
      config.functions = check_routing(net_, config.flows, config.routes);
      return;
    } catch (const RoutingConflict& e) {
      if (stop) throw;
      // The latest flow among those that clash waits for the others: a configuration of its own
      // (a lone flow always routes), run after them.
      const int last = *std::max_element(e.flows().begin(), e.flows().end());
      overflow.push_back({{config.flows[last]}, {config.keys[last]}, {}, {}});
      config.flows.erase(config.flows.begin() + last);
      config.keys.erase(config.keys.begin() + last);
    }
  }
}

void ControlUnit::configure(uint64_t phase, const std::vector<PhaseFlow>& flows,
                            OnConflict on_conflict) {
  std::set<uint64_t> keys;
  for (const PhaseFlow& f : flows)
    if (!keys.insert(f.key).second)
      throw std::invalid_argument("phase " + std::to_string(phase) + " names flow key " +
                                  std::to_string(f.key) + " twice ('" + f.flow.name + "')");
  // First fit: a flow joins the first configuration none of whose flows shares a port with it.
  std::vector<Configuration> configs;
  for (const PhaseFlow& f : flows) {
    auto fits = std::find_if(configs.begin(), configs.end(), [&](const Configuration& c) {
      return std::none_of(c.flows.begin(), c.flows.end(),
                          [&](const Flow& other) { return share_a_port(other, f.flow); });
    });
    if (fits == configs.end()) fits = configs.insert(configs.end(), Configuration{});
    fits->flows.push_back(f.flow);
    fits->keys.push_back(f.key);
  }
  phases_.erase(phase);
  std::vector<Configuration> routed;
  // The same ports as a configuration routed before in this phase (a collective's chunks): the
  // flows beside are the same too (none shares a port with either), and so is the routing.
  const auto same_ports = [](const Configuration& a, const Configuration& b) {
    return a.flows.size() == b.flows.size() &&
           std::equal(a.flows.begin(), a.flows.end(), b.flows.begin(),
                      [](const Flow& x, const Flow& y) {
                        return x.inputs == y.inputs && x.outputs == y.outputs;
                      });
  };
  while (!configs.empty()) {
    std::vector<Configuration> overflow;
    for (Configuration& c : configs) {
      auto twin = std::find_if(routed.begin(), routed.end(),
                               [&](const Configuration& r) { return same_ports(r, c); });
      if (twin != routed.end()) {
        c.routes = twin->routes;
        c.functions = twin->functions;
      } else {
        route(c, overflow, on_conflict == OnConflict::Stop);
      }
      routed.push_back(std::move(c));
    }
    configs = std::move(overflow);
  }
  computed_ += routed.size();
  phases_[phase] = std::move(routed);
}

const FlowRoute* ControlUnit::route(uint64_t phase, uint64_t key) const {
  auto it = phases_.find(phase);
  if (it == phases_.end()) return nullptr;
  for (const Configuration& c : it->second)
    for (size_t f = 0; f < c.keys.size(); ++f)
      if (c.keys[f] == key) return &c.routes[f];
  return nullptr;
}

size_t ControlUnit::held() const {
  size_t n = 0;
  for (const auto& [phase, configs] : phases_) n += configs.size();
  return n;
}

const std::vector<ControlUnit::Configuration>* ControlUnit::configurations(uint64_t phase) const {
  auto it = phases_.find(phase);
  return it == phases_.end() ? nullptr : &it->second;
}

}  // namespace wafersim::fred
