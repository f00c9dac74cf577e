// The fabric against closed-form expectations: one uncongested flow costs hops x per-hop cycles
// plus serialisation; the three fidelities agree without contention and differ under a hotspot.
#include <gtest/gtest.h>

#include <type_traits>

#include "hw/noc/fabric_node.h"
#include "hw/npu/npu.h"
#include "tests/testing.h"

using namespace wafersim;
using wafersim::testing::source;
using wafersim::testing::temp_dir;
using wafersim::testing::write_flows;

namespace {

// Whether socket `Initiator` can be bound to socket `Target` (an expression the compiler accepts).
template <class Initiator, class Target, class = void>
struct Bindable : std::false_type {};
template <class Initiator, class Target>
struct Bindable<Initiator, Target,
                std::void_t<decltype(std::declval<Initiator&>().bind(std::declval<Target&>()))>>
    : std::true_type {};

}  // namespace

// Links have their own protocol type: link sockets bind to each other, but a base-protocol socket
// (an NPU's command socket, a memory) cannot be bound to a link by mistake.
TEST(Fabric, LinkSocketsTakeOnlyLinkSockets) {
  using Out = hw::FabricNode::InitiatorSocket;
  using In = hw::FabricNode::TargetSocket;
  static_assert(Bindable<Out, In>::value, "link to link");
  static_assert(
      Bindable<tlm::tlm_initiator_socket<32>, decltype(std::declval<hw::Npu&>().cmd)>::value,
      "base protocol to base protocol (the trait sees a bind that compiles)");
  static_assert(!Bindable<Out, decltype(std::declval<hw::Npu&>().cmd)>::value,
                "a link into a base-protocol target");
  static_assert(!Bindable<tlm::tlm_initiator_socket<32>, In>::value,
                "a base-protocol initiator into a link");
  EXPECT_EQ(hw::kUnit, tlm::BEGIN_REQ);
  EXPECT_EQ(hw::kCredit, tlm::END_REQ);
}

// A single packet from NPU 0 (0,0) to NPU 63 (7,7): 14 mesh hops, 15 routers, 16 links. Each router
// costs routing + VC allocation + switch allocation + traversal = 4 cycles; each network link 1
// cycle of latency (attach links 0); the head flit takes 1 cycle per link and the last link carries
// the whole packet: 256 B / 32 B per cycle = 8 cycles.
TEST(Fabric, SinglePacketLatencyMatchesThePipelineFormula) {
  const int routers = 15, network_links = 14, links = 16;
  const double expected = routers * 4 + network_links * 1 + (links - 1) * 1 + 8;
  for (const char* fidelity : {"flit", "packet", "message"}) {
    auto prefix = write_flows(temp_dir(fidelity), 64, {{0, 63, 256}});
    auto r = wafersim::testing::run_mesh_8x8(prefix, fidelity);
    EXPECT_NEAR(r["makespan_ns"].get<double>(), expected, 1.0) << fidelity;
  }
}

// A long message streams at link rate after the pipeline fills: latency + bytes / bandwidth.
TEST(Fabric, FidelitiesAgreeWithoutContention) {
  const uint64_t bytes = 256 * 1024;
  auto prefix =
      write_flows(temp_dir("flows"), 64, {{0, 63, bytes}, {7, 56, bytes}, {9, 14, bytes}});
  double t[3];
  int i = 0;
  for (const char* fidelity : {"flit", "packet", "message"})
    t[i++] = wafersim::testing::run_mesh_8x8(prefix, fidelity)["makespan_ns"];
  const double serialisation = bytes / 32.0;
  EXPECT_GT(t[0], serialisation);
  // The three fidelities agree within 2% (the bound). Flit fidelity has no per-packet
  // bubble because a message's packets alternate between two VCs (docs/validation.md).
  EXPECT_NEAR(t[2] / t[1], 1.0, 0.02);
  EXPECT_NEAR(t[0] / t[1], 1.0, 0.02);
  EXPECT_NEAR(t[0] / t[2], 1.0, 0.02);
  EXPECT_LT(t[1], serialisation * 1.02 + 100);
}

// At message fidelity a link remembers the next router's output for the last destination it
// carried a message to, and the next message to it passes through from there (docs/design.md,
// Links). Messages to other destinations on the same link take their own routes: NPU 0 sends to
// 7, 56, 7 and 63 (east, south, east, diagonally), and each arrives where it was sent, over the
// links of its own route.
TEST(Fabric, MessagesPassingThroughRoutersFollowTheirOwnRoutes) {
  const uint64_t bytes = 4096;
  auto prefix = write_flows(temp_dir("routes"), 64,
                            {{0, 7, bytes}, {0, 56, bytes}, {0, 7, bytes}, {0, 63, bytes}});
  const auto message = wafersim::testing::run_mesh_8x8(prefix, "message");
  const auto packet = wafersim::testing::run_mesh_8x8(prefix, "packet");
  // Each receive took its message (a message routed elsewhere would leave one waiting).
  for (const auto& npu : message["npus"]) EXPECT_TRUE(npu["finished"].get<bool>()) << npu["id"];
  // Every link carried at message fidelity one unit for each message whose route takes it: the
  // links packet fidelity's routing used, each with a message's packets per message.
  const uint64_t packets =
      packet["links"][0]["units"].get<uint64_t>() / message["links"][0]["units"].get<uint64_t>();
  ASSERT_EQ(message["links"].size(), packet["links"].size());
  int used = 0;
  for (size_t i = 0; i < message["links"].size(); ++i) {
    const auto& m = message["links"][i];
    EXPECT_EQ(m["units"].get<uint64_t>() * packets, packet["links"][i]["units"].get<uint64_t>())
        << m["src"] << "->" << m["dst"];
    used += m["units"].get<uint64_t>() > 0;
  }
  // NPU 0's link, 7 links east, 7 south, 7 down column 7 and the three links into the NPUs.
  EXPECT_EQ(used, 1 + 7 + 7 + 7 + 3);
}

// Seven NPUs of row 0 all send to NPU 7 at the row's end. The last mesh link into router 7 carries
// all of it: 7 x bytes / 32 B per cycle bounds the makespan in every fidelity, and that link is
// busy nearly all the time.
TEST(Fabric, HotspotIsBoundByTheEjectionLink) {
  const uint64_t bytes = 64 * 1024;
  std::vector<wafersim::testing::Flow> flows;
  for (int s = 0; s < 7; ++s) flows.push_back({s, 7, bytes});
  auto prefix = write_flows(temp_dir("hot"), 64, flows);
  double bound = 7.0 * bytes / 32.0;
  double t[3];
  int i = 0;
  for (const char* fidelity : {"flit", "packet", "message"}) {
    auto r = wafersim::testing::run_mesh_8x8(prefix, fidelity);
    t[i] = r["makespan_ns"];
    EXPECT_GE(t[i], bound) << fidelity;
    EXPECT_LT(t[i], bound * 1.05 + 200) << fidelity;
    // The ejection link into NPU 7 is the busiest link and nearly always busy.
    double busiest = 0;
    for (const auto& l : r["links"]) busiest = std::max(busiest, l["busy_fraction"].get<double>());
    EXPECT_GT(busiest, 0.95) << fidelity;
    ++i;
  }
}

// Head-of-line blocking and its relief, where the fidelities must differ. NPUs 0-6 flood NPU 7
// along row 0 while NPU 1 also sends 4 KiB to NPU 9, one hop south of its router.
// - One VC: in packet fidelity the victim's packets queue behind hotspot packets stuck at router 1,
//   so it finishes far later than it would alone.
// - Four VCs: flit and packet fidelity let the victim pass on another VC (it shares only NPU 1's
//   injection link, at half rate: about 2 x 4096 / 32 = 256 cycles); message fidelity moves NPU 1's
//   64 KiB hotspot message as one unit first, so the victim waits at least 64 KiB / 32 = 2,048
//   cycles.
TEST(Fabric, HotspotBlocksAVictimUnlessVirtualChannelsLetItPass) {
  const uint64_t bytes = 64 * 1024;
  std::vector<wafersim::testing::Flow> flows;
  for (int s = 0; s < 7; ++s) flows.push_back({s, 7, bytes});
  flows.push_back({1, 9, 4096});
  auto prefix = write_flows(temp_dir("victim"), 64, flows);
  auto victim = [&](const char* fidelity, int vcs) {
    auto r = wafersim::testing::run_report(
        "--platform " + source("configs/mesh_8x8.yaml") + " --workload " + prefix + " --fidelity " +
        fidelity + " --set network.injection_bandwidth_gbps=32 fabric.buffer_flits=32 fabric.vcs=" +
        std::to_string(vcs));
    return r["npus"][9]["finish_ns"].get<double>();
  };
  const double blocked = victim("packet", 1);
  const double flit = victim("flit", 4), packet = victim("packet", 4),
               message = victim("message", 4);
  EXPECT_LT(flit, 400);
  EXPECT_LT(packet, 400);
  EXPECT_GT(blocked, 5 * packet);
  EXPECT_GT(message, 2048);
  // With one VC, flit and packet fidelity are slower than message fidelity, which models neither
  // buffers nor the blocking they cause.
  EXPECT_GT(blocked, message);
  EXPECT_GT(victim("flit", 1), message);
}

// The Fred wafer's tree (configs/fred_a.yaml, fred_c.yaml): the 4 NPUs of leaf 0 each send B bytes
// to the NPU at the same place in leaf 1 at once, each flow on its own uplink (d-mod-k). On
// Fred-A an uplink is 375 GB/s: B / 375 cycles; on Fred-C 3 TB/s, as fast as the NPU's link: B /
// 3,000. Then all 4 send to NPU 4 alone: its downlink and its own link carry all, 4B / 375 on
// Fred-A and 4B / 3,000 on Fred-C. Latency on top: 4 links of 20 ns and 3 switches of 8 to 10
// cycles, plus packet overheads. Buffers of 400 flits (200 KB) cover the credit round trip of a 3
// TB/s link with 20 ns each way; the configs' 24 KB per VC do not (docs/validation.md, Fred).
TEST(Fabric, TreeUplinksCarryTheirShare) {
  const uint64_t bytes = 3 << 20;
  const auto spread = write_flows(temp_dir("tree_spread"), 20,
                                  {{0, 4, bytes}, {1, 5, bytes}, {2, 6, bytes}, {3, 7, bytes}});
  const auto gather = write_flows(temp_dir("tree_gather"), 20,
                                  {{0, 4, bytes}, {1, 4, bytes}, {2, 4, bytes}, {3, 4, bytes}});
  for (const char* fidelity : {"packet", "message"}) {
    const auto run = [&](const char* config, const std::string& prefix) {
      return wafersim::testing::run_report("--platform " + source(config) + " --workload " +
                                           prefix + " --fidelity " + fidelity +
                                           " --set fabric.buffer_flits=400")["makespan_ns"]
          .get<double>();
    };
    const auto expect = [&](double t, double bound, const char* what) {
      EXPECT_GE(t, bound) << fidelity << ", " << what;
      EXPECT_LT(t, bound * 1.03 + 250) << fidelity << ", " << what;
    };
    expect(run("configs/fred_a.yaml", spread), bytes / 375.0, "Fred-A, spread");
    expect(run("configs/fred_c.yaml", spread), bytes / 3000.0, "Fred-C, spread");
    expect(run("configs/fred_a.yaml", gather), 4.0 * bytes / 375, "Fred-A, gather");
    expect(run("configs/fred_c.yaml", gather), 4.0 * bytes / 3000, "Fred-C, gather");
  }
}
