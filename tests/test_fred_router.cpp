// Fred_m(P) and its flow router (models/fred): block counts against the Benes network's and
// hand-worked ones, the non-blocking properties Clos theory gives (strict-sense for m >= 3,
// rearrangeable for m = 2), the reductions and distributions a flow must take wherever it is
// routed, clear errors for flows that clash or are malformed, and the schedule of routes a Fred
// switch keeps over time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

#include "models/fred/control_unit.h"
#include "models/fred/flow_router.h"
#include "models/fred/route_schedule.h"

using namespace wafersim::fred;

namespace {

Flow unicast(int from, int to) {
  return {std::to_string(from) + "->" + std::to_string(to), {from}, {to}};
}

Flow all_reduce(const std::string& name, const std::vector<int>& ports) {
  return {name, ports, ports};
}

// Routes `flows` and checks the result independently; returns the functions it enables.
Functions route_and_check(const Interconnect& net, const std::vector<Flow>& flows,
                          const std::vector<FlowRoute>& fixed = {}) {
  const std::vector<FlowRoute> routes = route_flows(net, flows, fixed);
  EXPECT_EQ(routes.size(), flows.size());
  for (size_t f = 0; f < fixed.size(); ++f) EXPECT_EQ(routes[f].middles, fixed[f].middles);
  return check_routing(net, flows, routes);
}

std::vector<int> shuffled(int n, std::mt19937& rng) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

}  // namespace

TEST(FredInterconnect, PowersOfTwoWithTwoMiddlesAreBenesNetworks) {
  // A Benes network of N = 2^k ports has 2k - 1 stages of N / 2 2x2 switches.
  for (int k = 1; k <= 7; ++k) {
    const int n = 1 << k;
    const Interconnect net(n, 2);
    const Inventory inv = net.inventory();
    EXPECT_EQ(inv.input_switches + inv.output_switches + inv.base_switches,
              static_cast<long>(n / 2) * (2 * k - 1))
        << net.name();
    EXPECT_EQ(net.stages(), 2 * k - 1) << net.name();
    EXPECT_EQ(net.levels(), k) << net.name();
    EXPECT_EQ(inv.demuxes + inv.muxes, 0) << net.name();
    // Between consecutive stages, one link per port.
    EXPECT_EQ(inv.links, static_cast<long>(n) * (2 * k - 2)) << net.name();
  }
}

TEST(FredInterconnect, CountsHandWorkedForThreeMiddlesAndOddPorts) {
  // Fred_3(8): 4 + 4 micro-switches outside, three Fred_3(4), each 2 + 2 around three Fred_3(2).
  const Inventory eight = Interconnect(8, 3).inventory();
  EXPECT_EQ(eight.input_switches, 4 + 3 * 2);
  EXPECT_EQ(eight.output_switches, 4 + 3 * 2);
  EXPECT_EQ(eight.base_switches, 3 * 3);
  EXPECT_EQ(eight.links, 2 * 4 * 3 + 3 * (2 * 2 * 3));
  EXPECT_EQ(Interconnect(8, 3).stages(), 5);

  // Fred_3(5): ports 0-3 on two micro-switches each side, port 4 on a demux and a mux; three
  // Fred_3(3) base switches in the middle.
  const Interconnect five(5, 3);
  EXPECT_TRUE(five.has_odd_port());
  EXPECT_EQ(five.middle().ports(), 3);
  EXPECT_TRUE(five.middle().is_base());
  const Inventory inv = five.inventory();
  EXPECT_EQ(inv.input_switches, 2);
  EXPECT_EQ(inv.output_switches, 2);
  EXPECT_EQ(inv.base_switches, 3);
  EXPECT_EQ(inv.demuxes, 1);
  EXPECT_EQ(inv.muxes, 1);
  EXPECT_EQ(inv.links, 2 * 3 * 3);
  EXPECT_EQ(five.stages(), 3);

  // Fred_2(7): three pairs and an odd port around two Fred_2(4), each around two Fred_2(2).
  const Interconnect seven(7, 2);
  EXPECT_EQ(seven.middle().ports(), 4);
  const Inventory s = seven.inventory();
  EXPECT_EQ(s.input_switches, 3 + 2 * 2);
  EXPECT_EQ(s.base_switches, 2 * 2);
  EXPECT_EQ(s.demuxes, 1);
  EXPECT_EQ(s.links, 2 * 4 * 2 + 2 * (2 * 2 * 2));
  EXPECT_EQ(seven.stages(), 5);
  EXPECT_EQ(seven.name(), "Fred_2(7)");
}

TEST(FredInterconnect, RefusesTooFewPortsOrMiddles) {
  EXPECT_THROW(Interconnect(1, 3), std::invalid_argument);
  EXPECT_THROW(Interconnect(8, 1), std::invalid_argument);
}

TEST(FredRouter, ThreeMiddlesAddAnyUnicastWithoutMovingTheOthers) {
  // m = 3 = 2n - 1 for micro-switches of n = 2 ports: strict-sense non-blocking (Clos). Unicasts
  // come and go at random; each new one is routed with every running one kept where it is.
  std::mt19937 rng(7);
  for (int ports : {4, 5, 8, 11, 16, 20}) {
    const Interconnect net(ports, 3);
    std::vector<Flow> flows;
    std::vector<FlowRoute> routes;
    for (int step = 0; step < 400; ++step) {
      if (!flows.empty() && rng() % 3 == 0) {
        const size_t gone = rng() % flows.size();
        flows.erase(flows.begin() + static_cast<long>(gone));
        routes.erase(routes.begin() + static_cast<long>(gone));
        continue;
      }
      std::vector<bool> in_used(ports), out_used(ports);
      for (const Flow& f : flows) {
        in_used[f.inputs[0]] = true;
        out_used[f.outputs[0]] = true;
      }
      std::vector<int> free_in, free_out;
      for (int p : shuffled(ports, rng)) {
        if (!in_used[p]) free_in.push_back(p);
        if (!out_used[p]) free_out.push_back(p);
      }
      if (free_in.empty()) continue;
      flows.push_back(unicast(free_in[0], free_out[0]));
      ASSERT_NO_THROW(routes = route_flows(net, flows, routes))
          << net.name() << ", step " << step << ", " << flows.size() << " flows";
      const Functions fn = check_routing(net, flows, routes);
      EXPECT_EQ(fn.reduces, 0);
      EXPECT_EQ(fn.distributes, 0);
    }
  }
}

TEST(FredRouter, TwoMiddlesRoutePermutationsButMayNeedToMoveOthers) {
  // m = 2: rearrangeably non-blocking. Every permutation routes when routed whole...
  std::mt19937 rng(11);
  for (int ports : {4, 7, 8, 16, 20}) {
    const Interconnect net(ports, 2);
    for (int trial = 0; trial < 50; ++trial) {
      const std::vector<int> to = shuffled(ports, rng);
      std::vector<Flow> flows;
      for (int p = 0; p < ports; ++p) flows.push_back(unicast(p, to[p]));
      route_and_check(net, flows);
    }
  }
  // ...but unicasts that come and go, each added with the running ones kept where they are, get
  // stuck at times where routing the same flows afresh succeeds.
  const Interconnect net(4, 2);
  bool stuck = false;
  std::vector<Flow> flows;
  std::vector<FlowRoute> routes;
  for (int step = 0; step < 1000 && !stuck; ++step) {
    if (flows.size() == 4 || (!flows.empty() && rng() % 2 == 0)) {
      const size_t gone = rng() % flows.size();
      flows.erase(flows.begin() + static_cast<long>(gone));
      routes.erase(routes.begin() + static_cast<long>(gone));
      continue;
    }
    std::vector<bool> in_used(4), out_used(4);
    for (const Flow& f : flows) in_used[f.inputs[0]] = out_used[f.outputs[0]] = true;
    int from = 0, to = 0;
    while (in_used[from]) ++from;
    for (int p : shuffled(4, rng))
      if (!out_used[p]) to = p;
    flows.push_back(unicast(from, to));
    try {
      routes = route_flows(net, flows, routes);
    } catch (const RoutingConflict&) {
      stuck = true;
      route_and_check(net, flows);
    }
  }
  EXPECT_TRUE(stuck) << "Fred_2(4) would be strict-sense non-blocking";
}

TEST(FredRouter, FlowsReduceAndDistributeOncePerExtraPort) {
  // Wherever a flow goes, k inputs take k - 1 reductions and j outputs j - 1 distributions.
  std::mt19937 rng(3);
  int routed = 0, clashed = 0;
  for (int ports : {5, 8, 12, 20}) {
    for (int middles : {3, 4}) {
      const Interconnect net(ports, middles);
      for (int trial = 0; trial < 40; ++trial) {
        const std::vector<int> in = shuffled(ports, rng), out = shuffled(ports, rng);
        std::vector<Flow> flows;
        long reduces = 0, distributes = 0;
        for (size_t i = 0, o = 0; i < in.size() && o < out.size();) {
          const size_t k = 1 + rng() % 3, j = 1 + rng() % 3;
          Flow f{"f" + std::to_string(flows.size()), {}, {}};
          for (size_t t = 0; t < k && i < in.size(); ++t) f.inputs.push_back(in[i++]);
          for (size_t t = 0; t < j && o < out.size(); ++t) f.outputs.push_back(out[o++]);
          reduces += static_cast<long>(f.inputs.size()) - 1;
          distributes += static_cast<long>(f.outputs.size()) - 1;
          flows.push_back(f);
        }
        try {
          const Functions fn = route_and_check(net, flows);
          EXPECT_EQ(fn.reduces, reduces) << net.name();
          EXPECT_EQ(fn.distributes, distributes) << net.name();
          ++routed;
        } catch (const RoutingConflict& e) {
          ++clashed;
          // Multi-port flows can clash; the set named must be one that fails as a whole and
          // routes without any one of its flows.
          std::vector<Flow> clash;
          for (int f : e.flows()) clash.push_back(flows[f]);
          EXPECT_THROW(route_flows(net, clash), RoutingConflict) << e.what();
          for (size_t drop = 0; drop < clash.size(); ++drop) {
            std::vector<Flow> rest = clash;
            rest.erase(rest.begin() + static_cast<long>(drop));
            EXPECT_NO_THROW(route_and_check(net, rest)) << e.what();
          }
        }
      }
    }
  }
  // Both outcomes were seen (320 sets).
  EXPECT_GT(routed, 100);
  EXPECT_GT(clashed, 0);
  std::printf("%d flow sets routed, %d clashed\n", routed, clashed);
}

TEST(FredRouter, InSwitchCollectivesOfThePaper) {
  // A wafer-wide All-Reduce is one flow: 7 reductions on the way in, 7 distributions out.
  const Interconnect net(8, 3);
  const Functions whole = route_and_check(net, {all_reduce("mp8", {0, 1, 2, 3, 4, 5, 6, 7})});
  EXPECT_EQ(whole.reduces, 7);
  EXPECT_EQ(whole.distributes, 7);
  // MP groups of 2 on consecutive ports: each reduced in its own micro-switch, even with m = 2.
  const Functions pairs =
      route_and_check(Interconnect(8, 2), {all_reduce("mp0", {0, 1}), all_reduce("mp1", {2, 3}),
                                           all_reduce("mp2", {4, 5}), all_reduce("mp3", {6, 7})});
  EXPECT_EQ(pairs.reduces, 4);
  EXPECT_EQ(pairs.distributes, 4);
  // The paper's All-Reduce over {3, 4, 5} beside unicasts and a multicast on the other ports.
  route_and_check(net, {all_reduce("ar345", {3, 4, 5}),
                        unicast(0, 6),
                        unicast(6, 0),
                        {"bcast", {7}, {1, 7}},
                        {"reduce", {1, 2}, {2}}});
}

TEST(FredRouter, NamesTheFlowsThatClash) {
  // On Fred_2(8) three flows clash pairwise in the outer stage: a and b on input micro-switch 0,
  // a and c on output micro-switch 0, b and c on output micro-switch 1. Two middles cannot hold
  // them; d, on other micro-switches, is not part of the clash.
  const std::vector<Flow> flows = {
      {"a", {0}, {0}}, {"b", {1}, {2}}, {"c", {2}, {1, 3}}, {"d", {7}, {7}}};
  try {
    route_flows(Interconnect(8, 2), flows);
    FAIL() << "routed a clash";
  } catch (const RoutingConflict& e) {
    EXPECT_EQ(e.flows(), (std::vector<int>{0, 1, 2}));
    const std::string what = e.what();
    EXPECT_NE(what.find("'a', 'b', 'c' cannot all be routed on Fred_2(8)"), std::string::npos)
        << what;
    EXPECT_NE(what.find("'a' and 'b' share input micro-switch 0"), std::string::npos) << what;
    EXPECT_NE(what.find("'b' and 'c' share output micro-switch 1"), std::string::npos) << what;
    EXPECT_EQ(what.find("'d'"), std::string::npos) << what;
  }
  // A third middle network separates them.
  route_and_check(Interconnect(8, 3), flows);
}

TEST(FredRouter, GivesUpAtItsStepBudget) {
  std::vector<Flow> flows;
  for (int p = 0; p < 8; ++p) flows.push_back(unicast(p, (p + 3) % 8));
  RouteOptions tight;
  tight.max_steps = 2;
  try {
    route_flows(Interconnect(8, 2), flows, {}, tight);
    FAIL() << "routed within 2 steps";
  } catch (const RoutingConflict& e) {
    EXPECT_NE(std::string(e.what()).find("no routing found in 2 colour assignments"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.flows().size(), flows.size());
  }
}

TEST(FredRouter, RefusesMalformedFlows) {
  const Interconnect net(4, 3);
  auto message = [&](const std::vector<Flow>& flows, const std::vector<FlowRoute>& fixed = {}) {
    try {
      route_flows(net, flows, fixed);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"x", {4}, {0}}}),
            "flow 'x': input port 4 does not exist (Fred_3(4) has ports 0 to 3)");
  EXPECT_EQ(message({{"x", {0}, {}}}), "flow 'x' has no output port");
  EXPECT_EQ(message({{"x", {1, 1}, {0}}}), "flow 'x' lists input port 1 twice");
  EXPECT_EQ(message({{"x", {0}, {2}}, {"y", {1}, {2}}}),
            "flows 'x' and 'y' both take output port 2");
  EXPECT_EQ(message({{"x", {0}, {2}}}, {FlowRoute{{0, 0}}}),
            "flow 'x': a fixed route on Fred_3(4) names 1 middles, each 0 to 2");
}

TEST(FredRouter, CheckFindsFlowsSharingALink) {
  const Interconnect net(8, 3);
  const std::vector<Flow> flows = {{"a", {0}, {0}}, {"b", {1}, {2}}};
  std::vector<FlowRoute> routes = route_flows(net, flows);
  ASSERT_NE(routes[0].middles[0], routes[1].middles[0]);  // they share input micro-switch 0
  routes[1].middles[0] = routes[0].middles[0];
  try {
    check_routing(net, flows, routes);
    FAIL() << "accepted two flows on one link";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'a' and 'b' share Fred_3(8): input micro-switch 0 ->"),
              std::string::npos)
        << e.what();
  }
  routes[1].middles.pop_back();
  EXPECT_THROW(check_routing(net, flows, routes), std::logic_error);
}

// A port serves one flow at a time: a flow that needs a port in use starts when the flow there
// has passed, and a flow on other ports starts at once.
TEST(FredRouteSchedule, APortServesOneFlowAtATime) {
  const Interconnect net(8, 3);
  RouteSchedule s(net);
  EXPECT_EQ(s.book({"a", {0, 1}, {4}}, 0, 100, false), 0u);
  EXPECT_EQ(s.book({"b", {1}, {5}}, 50, 100, false), 100u);      // input port 1 is a's until 100
  EXPECT_EQ(s.book({"c", {6}, {4}}, 20, 10, false), 100u);       // output 4 is a's until 100
  EXPECT_EQ(s.book({"d", {2, 3}, {6, 7}}, 10, 10, false), 10u);  // ports of its own
  EXPECT_EQ(s.holding(60), 1u);
  EXPECT_EQ(s.holding(150), 1u);
  s.forget_before(150);
  EXPECT_EQ(s.holding(120), 1u);  // b, still running
  EXPECT_EQ(s.holding(60), 0u);   // a is forgotten
}

// Given port capacities, flows slower than a port share it while their rates fit (their packets
// take the port in turns), and a flow that does not fit streams slower at what is left when that
// ends sooner than waiting for its whole rate.
TEST(FredRouteSchedule, SlowerFlowsShareAPortAndTheLastTakesWhatIsLeft) {
  const Interconnect net(8, 3);
  PortCapacity capacity;
  capacity.inputs.assign(8, 10);
  capacity.outputs.assign(8, 10);
  RouteSchedule s(net, {}, capacity);
  Flow a{"a", {0}, {4}, 4}, b{"b", {1}, {4}, 3}, c{"c", {2}, {4}, 4}, d{"d", {3}, {4}, 10};
  EXPECT_EQ(s.book(a, 0, 100, false), 0u);  // 4 of output 4's 10
  EXPECT_EQ(s.book(b, 0, 100, false), 0u);  // 7 of 10
  // 3 left: at 3 instead of 4 it streams 100 x 4 / 3 from 0, ending at 134, sooner than from 100
  // (a and b gone) at its whole rate, ending at 200.
  const auto slow = s.admit(c, 0, 100, OnConflict::Wait);
  EXPECT_EQ(slow.start, 0u);
  EXPECT_EQ(slow.length, 134u);
  EXPECT_DOUBLE_EQ(slow.rate, 3);
  // At 0 a, b and c take all 10, and a slower stream is tried only from the time asked: d waits
  // for its whole rate, until c (3 of 10 until 134) has passed.
  const auto waits = s.admit(d, 0, 10, OnConflict::Wait);
  EXPECT_EQ(waits.start, 134u);
  EXPECT_DOUBLE_EQ(waits.rate, 10);
}

// The clash of NamesTheFlowsThatClash, over time: a and b hold routes through Fred_2(8) when c
// could start, and two middles cannot carry c beside both. It waits until b has passed (a alone
// leaves it a middle), or the schedule reports the three; with a third middle it starts at once.
TEST(FredRouteSchedule, AFlowTheMiddlesCannotCarryWaitsOrIsReported) {
  const Flow a{"a", {0}, {0}}, b{"b", {1}, {2}}, c{"c", {2}, {1, 3}};
  {
    const Interconnect net(8, 2);
    RouteSchedule s(net);
    s.book(a, 0, 100, false);
    s.book(b, 0, 50, false);
    EXPECT_EQ(s.book(c, 10, 100, false), 50u);
  }
  {
    const Interconnect net(8, 2);
    RouteSchedule s(net);
    s.book(a, 0, 100, true);
    s.book(b, 0, 50, true);
    try {
      s.book(c, 10, 100, true);
      FAIL() << "routed a clash";
    } catch (const RoutingConflict& e) {
      EXPECT_EQ(e.flows(), (std::vector<int>{0, 1, 2}));
      EXPECT_NE(std::string(e.what()).find("'a', 'b', 'c' cannot all be routed on Fred_2(8)"),
                std::string::npos)
          << e.what();
    }
  }
  const Interconnect net(8, 3);
  RouteSchedule s(net);
  s.book(a, 0, 100, true);
  s.book(b, 0, 50, true);
  EXPECT_EQ(s.book(c, 10, 100, true), 10u);
}

// The same clash with a and b running long: c waits until a passes at 300 and ends at 400. Split
// into one flow per output (OnConflict::Split, fabric.fred_conflicts: unicast), c goes to output 1
// at once and to output 3 when that has passed its input port, each a unicast the two middles
// carry beside a and b, ending at 210. A flow that can start at once is not split, nor one whose
// pieces would end later than the whole (a passing at 100: the whole ends at 200).
TEST(FredRouteSchedule, AFlowSplitIntoUnicastsGoesAtOnceWhenThatEndsSooner) {
  const Flow a{"a", {0}, {0}}, b{"b", {1}, {2}}, c{"c", {2}, {1, 3}};
  const Interconnect net(8, 2);
  auto schedule = [&](OnConflict on_conflict, uint64_t a_length) {
    RouteSchedule s(net);
    s.book(a, 0, a_length, false);
    s.book(b, 0, 1000, false);
    return s.admit(c, 10, 100, on_conflict);
  };
  const auto waits = schedule(OnConflict::Wait, 300);
  EXPECT_EQ(waits.start, 300u);
  EXPECT_TRUE(waits.outputs.empty());
  const auto split = schedule(OnConflict::Split, 300);
  ASSERT_EQ(split.outputs.size(), 2u);
  EXPECT_EQ(split.outputs[0].start, 10u);
  EXPECT_EQ(split.outputs[1].start, 110u);
  EXPECT_EQ(split.start, 10u);
  EXPECT_EQ(split.length, 200u);
  const auto whole = schedule(OnConflict::Split, 100);
  EXPECT_TRUE(whole.outputs.empty());
  EXPECT_EQ(whole.start, 100u);
  RouteSchedule alone(net);
  EXPECT_TRUE(alone.admit(c, 10, 100, OnConflict::Split).outputs.empty());
}

// A flow keeps its route while it streams: one booked to start later that its route would clash
// with holds it back too. b is booked at 50 first; c, wanting to start at 10 for 100 ticks, would
// overlap a (to 100) and, from 50, b: it waits for a to pass at 100, then fits beside b.
TEST(FredRouteSchedule, ARouteMustFitBesideFlowsThatStartWhileItStreams) {
  const Interconnect net(8, 2);
  RouteSchedule s(net);
  s.book({"a", {0}, {0}}, 0, 100, false);
  s.book({"b", {1}, {2}}, 50, 100, false);
  EXPECT_EQ(s.book({"c", {2}, {1, 3}}, 10, 100, false), 100u);
}

// A flow with its phase's configured route takes it when it fits beside the flows that hold
// theirs; one whose configured route clashes with theirs is routed online around them. On
// Fred_3(8) a and b share input micro-switch 0, so they need different middles: b configured on
// a's middle goes on another, at once.
TEST(FredRouteSchedule, AConfiguredRouteIsTakenWhenItFitsElseTheFlowIsRoutedOnline) {
  const Interconnect net(8, 3);
  RouteSchedule s(net);
  const FlowRoute first{{0, 0}}, second{{1, 0}};
  const auto a = s.admit({"a", {0}, {0}}, 0, 100, OnConflict::Stop, &first);
  EXPECT_TRUE(a.configured);
  const auto b = s.admit({"b", {1}, {2}}, 0, 100, OnConflict::Stop, &first);
  EXPECT_FALSE(b.configured);
  EXPECT_EQ(b.start, 0u);
  const auto c = s.admit({"c", {4}, {4}}, 0, 100, OnConflict::Stop, &second);
  EXPECT_TRUE(c.configured);
}

// The control unit lays a phase's flows into configurations: flows sharing a port take it in
// turns (r1 after r0, both reducing ports 0-3), the rest join the first configuration they fit
// (m, on ports 4-7, beside r0). Each configuration routes as a whole and enables the functions of
// its flows: r0 reduces 4 inputs (3 reductions), m reduces 2 and distributes to 2.
TEST(FredControlUnit, FlowsSharingAPortTakeConfigurationsInTurn) {
  const Interconnect net(8, 3);
  ControlUnit unit(net);
  unit.configure(1,
                 {{10, {"r0", {0, 1, 2, 3}, {0}}},
                  {11, {"r1", {0, 1, 2, 3}, {1}}},
                  {12, {"m", {4, 5}, {6, 7}}}},
                 OnConflict::Stop);
  const auto* configs = unit.configurations(1);
  ASSERT_NE(configs, nullptr);
  ASSERT_EQ(configs->size(), 2u);
  EXPECT_EQ((*configs)[0].keys, (std::vector<uint64_t>{10, 12}));
  EXPECT_EQ((*configs)[1].keys, (std::vector<uint64_t>{11}));
  EXPECT_EQ((*configs)[0].functions.reduces, 3 + 1);
  EXPECT_EQ((*configs)[0].functions.distributes, 1);
  for (const auto& c : *configs) EXPECT_NO_THROW(check_routing(net, c.flows, c.routes));
  ASSERT_NE(unit.route(1, 11), nullptr);
  EXPECT_EQ(unit.route(1, 11)->middles, (*configs)[1].routes[0].middles);
  EXPECT_EQ(unit.route(1, 13), nullptr);  // no such flow: the default index
  EXPECT_EQ(unit.route(2, 10), nullptr);  // no such phase
  EXPECT_EQ(unit.held(), 2u);
  unit.release(1);
  EXPECT_EQ(unit.held(), 0u);
  EXPECT_EQ(unit.route(1, 10), nullptr);
  EXPECT_EQ(unit.computed(), 2u);
  EXPECT_THROW(unit.configure(2, {{1, {"x", {0}, {0}}}, {1, {"y", {1}, {1}}}}, OnConflict::Stop),
               std::invalid_argument);
}

// The clash of FredRouter.NamesTheFlowsThatClash within one phase: refused naming a, b and c
// before any of them runs, or c (the latest of them) goes in a configuration of its own after the
// others.
TEST(FredControlUnit, AClashWithinAPhaseIsRefusedOrWaits) {
  const Interconnect net(8, 2);
  const std::vector<ControlUnit::PhaseFlow> flows = {
      {0, {"a", {0}, {0}}}, {1, {"b", {1}, {2}}}, {2, {"c", {2}, {1, 3}}}, {3, {"d", {7}, {7}}}};
  ControlUnit strict(net);
  try {
    strict.configure(1, flows, OnConflict::Stop);
    FAIL() << "configured a clash";
  } catch (const RoutingConflict& e) {
    EXPECT_NE(std::string(e.what()).find("'a', 'b', 'c' cannot all be routed on Fred_2(8)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(strict.held(), 0u);
  for (OnConflict on_conflict : {OnConflict::Wait, OnConflict::Split}) {
    ControlUnit unit(net);
    unit.configure(1, flows, on_conflict);
    const auto& configs = *unit.configurations(1);
    ASSERT_EQ(configs.size(), 2u);
    EXPECT_EQ(configs[0].keys, (std::vector<uint64_t>{0, 1, 3}));
    EXPECT_EQ(configs[1].keys, (std::vector<uint64_t>{2}));
  }
}

// Phases that overlap (the DP all-reduces of several groups at once) are routed around each
// other: on Fred_2(8) a and b share input micro-switch 0, so routed alone each would take the
// first middle and clash; b, configured while a's phase is held, takes the other. c clashes with
// the pair whatever its route: it is routed alone, to meet them online.
TEST(FredControlUnit, APhaseIsRoutedAroundThePhasesHeld) {
  const Interconnect net(8, 2);
  const Flow a{"a", {0}, {0}}, b{"b", {1}, {2}}, c{"c", {2}, {1, 3}};
  ControlUnit just_a(net), just_b(net);
  just_a.configure(1, {{0, a}}, OnConflict::Stop);
  just_b.configure(2, {{0, b}}, OnConflict::Stop);
  EXPECT_THROW(check_routing(net, {a, b}, {*just_a.route(1, 0), *just_b.route(2, 0)}),
               std::logic_error);
  ControlUnit unit(net);
  unit.configure(1, {{0, a}}, OnConflict::Stop);
  unit.configure(2, {{0, b}}, OnConflict::Stop);
  EXPECT_NO_THROW(check_routing(net, {a, b}, {*unit.route(1, 0), *unit.route(2, 0)}));
  EXPECT_NE(unit.route(1, 0)->middles, unit.route(2, 0)->middles);
  unit.configure(3, {{0, c}}, OnConflict::Stop);
  EXPECT_NE(unit.route(3, 0), nullptr);
  // A flow sharing a port with a held phase's takes it in turns with it: it is not routed around.
  ControlUnit turns(net);
  turns.configure(1, {{0, a}}, OnConflict::Stop);
  turns.configure(2, {{0, {"a again", {0}, {0}}}}, OnConflict::Stop);
  EXPECT_EQ(turns.route(2, 0)->middles, turns.route(1, 0)->middles);
}
