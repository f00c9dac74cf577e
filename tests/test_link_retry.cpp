// Go-Back-N on the links (fabric.link_retry: go_back_n, hw/noc/link_retry.h) against closed forms:
// one cumulative ACK per 16 packets goes back on every link, a dropped packet costs the timeout and
// a corrupted one its own serialisation (its NACK is back before it has left), and under random
// drops and corruptions every collective still delivers the reference data.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hw/noc/link_retry.h"
#include "tb/chakra/generator.h"
#include "tests/testing.h"

using namespace wafersim;
using wafersim::testing::source;
using wafersim::testing::temp_dir;
using wafersim::testing::write_flows;

namespace {

// configs/mesh_8x8.yaml at packet fidelity: 32 B per cycle everywhere, 256 B packets (8 cycles on
// a link).
nlohmann::json mesh(const std::string& prefix, const std::string& sets) {
  return wafersim::testing::run_mesh_8x8(prefix, "packet", sets);
}

const nlohmann::json& link(const nlohmann::json& report, const std::string& src,
                           const std::string& dst) {
  for (const auto& l : report["links"])
    if (l["src"] == src && l["dst"] == dst) return l;
  throw std::runtime_error("no link " + src + "->" + dst);
}

}  // namespace

// 100 packets from NPU 0 to its neighbour NPU 1 cross three links (NPU 0 into its router, router
// to router, into NPU 1); each link back carries 6 ACKs of 16 packets and one for the last 4 once
// the link has been quiet. The ACKs ride links nothing else uses: the transfer takes as long as
// without Go-Back-N.
TEST(LinkRetry, OneAckPerSixteenPacketsGoesBack) {
  const std::string prefix = write_flows(temp_dir("acks"), 64, {{0, 1, 100 * 256}});
  const auto plain = mesh(prefix, "");
  const auto gbn = mesh(prefix, "fabric.link_retry=go_back_n");
  EXPECT_EQ(gbn["makespan_ns"], plain["makespan_ns"]);
  EXPECT_EQ(link(gbn, "router0", "npu0")["controls"], 7);
  EXPECT_EQ(link(gbn, "router1", "router0")["controls"], 7);
  EXPECT_EQ(link(gbn, "npu1", "router1")["controls"], 7);
  uint64_t controls = 0, faults = 0;
  for (const auto& l : gbn["links"]) {
    controls += l["controls"].get<uint64_t>();
    faults += l["faults"].get<uint64_t>();
  }
  EXPECT_EQ(controls, 21u);
  EXPECT_EQ(faults, 0u);
  EXPECT_EQ(plain["links"][0]["controls"], 0);
}

// One packet from NPU 0 to NPU 1, with a seed under which the link out of NPU 0 loses it once and
// nothing else is lost (found with the link layer's own draws). Dropped: the sender sends it again
// retransmit_timeout_cycles (100) after it first left, so it arrives 100 cycles late. Corrupted:
// it arrives, the receiver NACKs it (1 flit back over a link of no latency), and the sender sends
// it again as soon as the link has finished the corrupted copy: 8 cycles late.
TEST(LinkRetry, ALostPacketCostsItsTimeoutOrItsNack) {
  const std::string prefix = write_flows(temp_dir("lost"), 64, {{0, 1, 256}});
  const auto plain = mesh(prefix, "");
  const int first = link(plain, "npu0", "router0")["id"];
  const int others[] = {link(plain, "router0", "router1")["id"],
                        link(plain, "router1", "npu1")["id"]};
  const double p = 0.3;
  for (const auto fault : {hw::LinkFault::Drop, hw::LinkFault::Corrupt}) {
    const bool drop = fault == hw::LinkFault::Drop;
    const double d = drop ? p : 0, c = drop ? 0 : p;
    uint64_t seed = 1;
    auto fits = [&](uint64_t s) {
      if (hw::draw_link_fault(s, first, 0, 0, d, c) != fault ||
          hw::draw_link_fault(s, first, 0, 1, d, c) != hw::LinkFault::None)
        return false;
      for (int l : others)
        if (hw::draw_link_fault(s, l, 0, 0, d, c) != hw::LinkFault::None) return false;
      return true;
    };
    while (!fits(seed)) ++seed;
    const auto lost =
        mesh(prefix,
             "fabric.link_retry=go_back_n fabric.retransmit_timeout_cycles=100 "
             "fabric.fault_seed=" +
                 std::to_string(seed) +
                 (drop ? " fabric.link_drop_probability=" : " fabric.link_corrupt_probability=") +
                 std::to_string(p));
    const auto& l = link(lost, "npu0", "router0");
    EXPECT_EQ(l["faults"], 1);
    EXPECT_EQ(l["resent"], 1);
    EXPECT_DOUBLE_EQ(lost["makespan_ns"].get<double>() - plain["makespan_ns"].get<double>(),
                     drop ? 100 : 8)
        << (drop ? "drop" : "corrupt");
  }
}

// Under random drops and corruptions on every link (1% each) nothing is lost: an all-reduce and an
// all-gather by rings on the mesh, and every in-switch collective on Fred-D, leave every rank with
// the reference result, and the links report what they lost and sent again.
TEST(LinkRetry, CollectivesDeliverTheReferenceDataUnderFaults) {
  const std::string faults =
      " fabric.link_retry=go_back_n fabric.link_drop_probability=0.01"
      " fabric.link_corrupt_probability=0.01 fabric.retransmit_timeout_cycles=200";
  struct Case {
    const char* config;
    const char* collective;
    int ranks;
    const char* sets;
  };
  for (const Case& c : {Case{"configs/wafer_mesh_5x4.yaml", "all_reduce", 20, ""},
                        Case{"configs/wafer_mesh_5x4.yaml", "all_gather", 20, ""},
                        Case{"configs/fred_d.yaml", "all_reduce", 20, ""},
                        Case{"configs/fred_d.yaml", "reduce_scatter", 20, ""},
                        Case{"configs/fred_d.yaml", "all_gather", 20, ""},
                        Case{"configs/fred_d.yaml", "broadcast", 20, ""},
                        Case{"configs/fred_d.yaml", "reduce", 20, ""}}) {
    chakra::MicrobenchmarkSpec spec;
    spec.collective = chakra::collective_from_string(c.collective);
    spec.bytes = 256 << 10;
    spec.ranks = c.ranks;
    const std::string name = std::string(c.config).substr(8) + "_" + c.collective;
    const std::string prefix = temp_dir(name) + "/w";
    chakra::write_microbenchmark(prefix, spec);
    const auto report = wafersim::testing::run_report(
        "--platform " + source(c.config) + " --workload " + prefix +
        " --fidelity packet --data --set collectives.dataset_splits=2" + faults + c.sets);
    EXPECT_EQ(report["data_check"]["status"], "pass") << name << report["data_check"];
    uint64_t lost = 0, resent = 0;
    for (const auto& l : report["links"]) {
      lost += l["faults"].get<uint64_t>();
      resent += l["resent"].get<uint64_t>();
    }
    EXPECT_GT(lost, 0u) << name;
    EXPECT_GE(resent, lost) << name;
  }
}
