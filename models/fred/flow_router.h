#pragma once
// Routing flows over Fred_m(P) (PAPERS.md section 1). A flow is a set of input ports, whose data
// is reduced on the way, and a set of output ports, which all receive the result: an All-Reduce
// over ports {3, 4, 5} is one flow with inputs = outputs = {3, 4, 5}, a Reduce has one output, a
// multicast one input, a unicast one of each.
//
// The paper's router works from the outermost level inwards: a conflict graph with a node per
// flow and an edge where two flows share an input or an output micro-switch, coloured with m
// colours (one per middle subnetwork: a micro-switch has one link to each middle, so two flows on
// one micro-switch must go to different middles); then the flows of each colour are routed
// through their middle the same way, their ports being the micro-switches they came from. A flow
// whose two ports on one input micro-switch are both inputs is reduced there (the micro-switch's
// R function); both outputs of one output micro-switch, distributed (D).
//
// Search: a level's colourings are tried in turn (most-constrained flows first, interchangeable
// middles not tried twice) until every middle routes its flows; a routing that exists is found
// unless the step budget runs out. Flows already running can be kept where they are (`fixed`):
// with m >= 3 a new unicast between free ports always fits (strict-sense non-blocking), with
// m = 2 it may need the others moved (rearrangeably non-blocking).
#include <stdexcept>
#include <string>
#include <vector>

#include "models/fred/interconnect.h"

namespace wafersim::fred {

struct Flow {
  std::string name;          // for messages
  std::vector<int> inputs;   // ports whose data is reduced, each once
  std::vector<int> outputs;  // ports that receive the result, each once
  // What it streams at, in the units of RouteSchedule's port capacities (0: a whole port's).
  double rate = 0;
};

// Where a flow goes: at each level of recursion from the outermost, the middle subnetwork it
// crosses (levels() - 1 entries, so none in a base switch).
struct FlowRoute {
  std::vector<int> middles;
};

// What the routed flows enable: reductions (an input micro-switch whose two ports feed one flow,
// or two inputs joined in a base switch) and distributions (the same on the way out). A flow of k
// inputs and j outputs takes k - 1 of the first and j - 1 of the second wherever it is routed.
struct Functions {
  long reduces = 0;
  long distributes = 0;
};

// No routing within the budget. flows(): the indices of a set of flows that cannot be routed
// together and that routes once any one of them is left out (or, when the budget ran out, all).
class RoutingConflict : public std::runtime_error {
 public:
  RoutingConflict(const std::string& what, std::vector<int> flows)
      : std::runtime_error(what), flows_(std::move(flows)) {}
  const std::vector<int>& flows() const { return flows_; }

 private:
  std::vector<int> flows_;
};

struct RouteOptions {
  long max_steps = 1000000;  // colour assignments tried, over all levels, before giving up
};

// Whether two flows share an input port or an output port (they cannot be routed together: a
// port serves one flow at a time).
bool share_a_port(const Flow& a, const Flow& b);

// Routes `flows` over `net`, keeping the first fixed.size() flows on the routes given. Throws
// std::invalid_argument naming the flow for a port out of range, a flow without inputs or
// outputs, a port listed twice in a flow, a port that is the input (or output) of two flows, or a
// fixed route of the wrong shape; RoutingConflict when no routing is found.
std::vector<FlowRoute> route_flows(const Interconnect& net, const std::vector<Flow>& flows,
                                   const std::vector<FlowRoute>& fixed = {},
                                   const RouteOptions& options = {});

// Walks every flow along its route, independently of how the route was found, and returns the
// functions they enable. Throws std::logic_error when two flows share a link between blocks or a
// base switch's port, or a route has the wrong length or names a middle that does not exist.
Functions check_routing(const Interconnect& net, const std::vector<Flow>& flows,
                        const std::vector<FlowRoute>& routes);

}  // namespace wafersim::fred
