// TACOS synthesis: causal schedules that reach the ingress lower bound where the paper says they
// do, plans that prove correct, and clear errors for graphs it cannot serve.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>

#include "models/collectives/symbolic.h"
#include "models/tacos/tacos.h"
#include "tb/chakra/generator.h"
#include "tests/testing.h"

using namespace wafersim;
using namespace wafersim::tacos;

namespace {

constexpr double kAlpha = 500;  // ns
constexpr double kGbps = 50;

// NPUs on a grid of `dims` (row-major), a link each way between neighbours; `wrap`: a torus.
LinkGraph grid(const std::vector<int>& dims, bool wrap) {
  LinkGraph g;
  g.npus = 1;
  for (int d : dims) g.npus *= d;
  for (int v = 0; v < g.npus; ++v) {
    int stride = 1;
    for (int d : dims) {
      const int coord = (v / stride) % d;
      for (int step : {-1, 1}) {
        int c = coord + step;
        if (c < 0 || c >= d) {
          if (!wrap || d < 3) continue;
          c = (c + d) % d;
        }
        g.links.push_back({v, v + (c - coord) * stride, kAlpha, kGbps});
      }
      stride *= d;
    }
  }
  return g;
}

LinkGraph hypercube(int dims) {
  LinkGraph g;
  g.npus = 1 << dims;
  for (int v = 0; v < g.npus; ++v)
    for (int d = 0; d < dims; ++d) g.links.push_back({v, v ^ (1 << d), kAlpha, kGbps});
  return g;
}

LinkGraph one_way_ring(int n) {
  LinkGraph g;
  g.npus = n;
  for (int v = 0; v < n; ++v) g.links.push_back({v, (v + 1) % n, kAlpha, kGbps});
  return g;
}

// Every transfer starts after its source holds the chunk (own chunks at 0), never twice to one
// NPU, and at the end every NPU holds every chunk.
void expect_causal(const LinkGraph& g, const Schedule& s) {
  std::map<std::pair<int, uint32_t>, double> arrived;
  const uint32_t total = static_cast<uint32_t>(s.npus * s.chunks_per_npu);
  for (int v = 0; v < s.npus; ++v)
    for (int k = 0; k < s.chunks_per_npu; ++k)
      arrived[{v, static_cast<uint32_t>(v * s.chunks_per_npu + k)}] = 0;
  std::vector<Transfer> by_end = s.transfers;
  for (const Transfer& t : s.transfers) {
    const Link& l = g.links[t.link];
    EXPECT_TRUE(arrived.emplace(std::make_pair(l.dst, t.chunk), t.end_ns).second)
        << "chunk " << t.chunk << " reaches NPU " << l.dst << " twice";
  }
  for (const Transfer& t : s.transfers) {
    const Link& l = g.links[t.link];
    auto it = arrived.find({l.src, t.chunk});
    ASSERT_NE(it, arrived.end());
    EXPECT_LE(it->second, t.start_ns + 1e-9) << "link " << t.link << " sends chunk " << t.chunk
                                             << " before NPU " << l.src << " holds it";
  }
  EXPECT_EQ(arrived.size(), size_t(s.npus) * total);
}

}  // namespace

// The ingress bound, ceil((N-1) C / min in-degree) x (alpha + chunk / bandwidth), is reached on
// 2D and 3D meshes and the unidirectional ring.
TEST(Tacos, ReachesTheIngressBoundOnMeshesAndRings) {
  struct Case {
    std::string name;
    LinkGraph graph;
  };
  const std::vector<Case> cases = {{"mesh 4x4", grid({4, 4}, false)},
                                   {"mesh 8x8", grid({8, 8}, false)},
                                   {"mesh 3x5", grid({3, 5}, false)},
                                   {"mesh 3x3x3", grid({3, 3, 3}, false)},
                                   {"ring 8 one way", one_way_ring(8)}};
  for (const Case& c : cases)
    for (int chunks : {1, 2}) {
      const Options o{chunks, 1 << 16, 7};
      const Schedule s = all_gather(c.graph, o);
      const double bound = ingress_lower_bound_ns(c.graph, o);
      EXPECT_NEAR(s.time_ns, bound, 1e-6) << c.name << ", " << chunks << " chunks per NPU";
      expect_causal(c.graph, s);
    }
}

// Tori and hypercubes come within two steps of it.
TEST(Tacos, ComesWithinTwoStepsOnToriAndHypercubes) {
  const double step = kAlpha + (1 << 16) / kGbps;
  for (const auto& [name, graph] :
       std::vector<std::pair<std::string, LinkGraph>>{{"torus 4x4", grid({4, 4}, true)},
                                                      {"torus 5x5", grid({5, 5}, true)},
                                                      {"torus 3x3x3", grid({3, 3, 3}, true)},
                                                      {"hypercube 16", hypercube(4)},
                                                      {"hypercube 64", hypercube(6)}})
    for (int chunks : {1, 2}) {
      const Options o{chunks, 1 << 16, 3};
      const Schedule s = all_gather(graph, o);
      const double bound = ingress_lower_bound_ns(graph, o);
      EXPECT_GE(s.time_ns, bound - 1e-6) << name;
      EXPECT_LE(s.time_ns, bound + 2 * step + 1e-6) << name << ", " << chunks << " chunks";
      expect_causal(graph, s);
    }
}

// Heterogeneous and asymmetric links stay causal; no bound applies.
TEST(Tacos, HeterogeneousLinksStayCausal) {
  LinkGraph g = grid({4, 4}, false);
  for (Link& l : g.links) l.bandwidth_gbps = (l.dst - l.src == 1 || l.src - l.dst == 1) ? 100 : 25;
  g.links[3].alpha_ns = 2000;  // one slow link
  const Options o{2, 1 << 16, 11};
  EXPECT_LT(ingress_lower_bound_ns(g, o), 0);
  const Schedule s = all_gather(g, o);
  expect_causal(g, s);
  // Deterministic for a seed.
  const Schedule again = all_gather(g, o);
  ASSERT_EQ(again.transfers.size(), s.transfers.size());
  for (size_t i = 0; i < s.transfers.size(); ++i) {
    EXPECT_EQ(again.transfers[i].link, s.transfers[i].link);
    EXPECT_EQ(again.transfers[i].chunk, s.transfers[i].chunk);
  }
}

// The plans of all three collectives prove correct on abstract data.
TEST(Tacos, PlansComputeTheirCollectives) {
  using collectives::Collective;
  for (const LinkGraph& g : {grid({3, 3}, false), grid({2, 4}, true), one_way_ring(5)})
    for (Collective c : {Collective::AllGather, Collective::ReduceScatter, Collective::AllReduce})
      for (int chunks : {1, 3}) {
        double time = 0;
        const collectives::Plan plan = synthesize(g, c, 1000003, chunks, 5, &time);
        EXPECT_EQ(collectives::check_plan(plan, c), "")
            << collectives::to_string(c) << " on " << g.npus << " NPUs, " << chunks << " chunks";
        EXPECT_GT(time, 0);
      }
}

// A graph where some NPU cannot be reached is refused, naming both NPUs.
TEST(Tacos, UnreachableNpusAreNamed) {
  LinkGraph g = one_way_ring(4);
  g.links.erase(g.links.begin() + 2);  // 2 -> 3 gone: nothing reaches NPU 3
  try {
    all_gather(g, {1, 1024, 1});
    ADD_FAILURE() << "synthesized on a graph with an unreachable NPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("can never receive NPU 1's data: no path of links from NPU 1"),
        std::string::npos)
        << e.what();
  }
  LinkGraph loop = one_way_ring(3);
  loop.links.push_back({1, 1, 0, 1});
  EXPECT_THROW(all_gather(loop, {1, 1024, 1}), std::invalid_argument);
}

// `wafersim synth` writes MSCCL XML, Chakra graphs and synth.json for a platform's mesh; the files
// run back on the fabric with their values right, and `tacos` as a platform's implementation runs
// the same plan.
TEST(TacosCommand, SynthWritesFilesThatRunBack) {
  const std::string dir = wafersim::testing::temp_dir("synth");
  const std::string platform = wafersim::testing::source("configs/mesh_8x8.yaml");
  const auto r = wafersim::testing::wafersim("synth --platform " + platform +
                                             " --collective all_gather --size 65536 --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/synth.json");
  nlohmann::json synth;
  in >> synth;
  EXPECT_EQ(synth["npus"], 64);
  EXPECT_EQ(synth["chunks_per_npu"], 1);
  // 8x8 mesh, corners of in-degree 2: ceil(63 / 2) = 32 steps of alpha + 65536 B / 32 GB/s.
  // Alpha, in 1 GHz cycles: the head flit into the router (32 B at 32-128 B a cycle, rounded up to
  // the cycle: 1), its 4-cycle pipeline, one flit and 1 ns over the link, the far router's 4-cycle
  // pipeline.
  const double alpha = 1 + 4 + 1 + 1 + 4;
  EXPECT_NEAR(synth["lower_bound_ns"].get<double>(), 32 * (alpha + 65536 / 32.0), 1e-6);
  EXPECT_NEAR(synth["synthesized_time_ns"].get<double>(), synth["lower_bound_ns"].get<double>(),
              1e-6);
  EXPECT_GE(synth["synthesis_cpu_seconds"].get<double>(), 0);
  chakra::MicrobenchmarkSpec spec;
  spec.collective = chakra::CollectiveKind::AllGather;
  spec.bytes = 65536;
  spec.ranks = 64;
  chakra::write_microbenchmark(dir + "/wl/ag", spec);
  const std::string run = "--data --fidelity message --platform " + platform + " --workload " +
                          dir + "/wl/ag --set collectives.all_gather=";
  const auto from_xml = wafersim::testing::run_report(run + "msccl:" + dir + "/all_gather.xml");
  const auto from_et = wafersim::testing::run_report(run + "chakra:" + dir + "/all_gather");
  const auto direct = wafersim::testing::run_report(run + "tacos");
  EXPECT_EQ(from_xml["data_check"]["status"], "pass");
  EXPECT_EQ(from_et["data_check"]["status"], "pass");
  EXPECT_EQ(direct["data_check"]["status"], "pass");
  EXPECT_EQ(direct["collectives"][0]["algorithm"], "tacos");
  EXPECT_EQ(from_xml["makespan_ns"], direct["makespan_ns"]);
  EXPECT_EQ(from_et["makespan_ns"], direct["makespan_ns"]);
  // The fabric runs the plan in the synthesized time: causal transfers, and links that carry
  // them in the order of the schedule. Only a little faster, as it pipelines the latency of a
  // link's back-to-back chunks, which the synthesis charges each one in full.
  const double synthesized = synth["synthesized_time_ns"].get<double>();
  EXPECT_LE(direct["makespan_ns"].get<double>(), synthesized);
  EXPECT_GE(direct["makespan_ns"].get<double>(), synthesized - 32 * alpha);
  // Beats the ring on the same mesh.
  const auto ring = wafersim::testing::run_report(run + "ring");
  EXPECT_LT(direct["makespan_ns"].get<double>(), ring["makespan_ns"].get<double>());
  // What it cannot do is refused, naming the setting.
  chakra::MicrobenchmarkSpec a2a = spec;
  a2a.collective = chakra::CollectiveKind::AllToAll;
  chakra::write_microbenchmark(dir + "/wl/a2a", a2a);
  const auto a2a_run = wafersim::testing::wafersim(
      "run --platform " + platform + " --set collectives.all_to_all=tacos --workload " + dir +
      "/wl/a2a --out " + dir + "/o");
  EXPECT_EQ(a2a_run.exit_code, 1);
  EXPECT_NE(a2a_run.err.find("TACOS synthesizes all_gather, reduce_scatter and all_reduce, not "
                             "all_to_all (collectives.all_to_all"),
            std::string::npos)
      << a2a_run.err;
}

// On the heterogeneous mesh (100 GB/s x links, 25 GB/s y links) the synthesized all-reduce beats
// the ring all-reduce on the fabric, with its values right, and the fabric runs it in the time
// the synthesis gives it.
TEST(TacosCommand, BeatsTheRingOnAHeterogeneousMesh) {
  const std::string dir = wafersim::testing::temp_dir("hetero");
  chakra::MicrobenchmarkSpec spec;
  spec.bytes = 4 << 20;
  spec.ranks = 64;
  chakra::write_microbenchmark(dir + "/ar", spec);
  const std::string run = "--data --fidelity message --platform " +
                          wafersim::testing::source("configs/mesh_8x8_hetero.yaml") +
                          " --workload " + dir + "/ar --set collectives.all_reduce=";
  const auto tacos = wafersim::testing::run_report(run + "tacos");
  const auto ring = wafersim::testing::run_report(run + "ring");
  EXPECT_EQ(tacos["data_check"]["status"], "pass");
  EXPECT_LT(tacos["makespan_ns"].get<double>(), ring["makespan_ns"].get<double>());
  const auto r = wafersim::testing::wafersim(
      "synth --platform " + wafersim::testing::source("configs/mesh_8x8_hetero.yaml") +
      " --collective all_reduce --size " + std::to_string(spec.bytes) + " --out " + dir + "/s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/s/synth.json");
  nlohmann::json synth;
  in >> synth;
  // As on the uniform mesh: a little faster, pipelining back-to-back chunks' latency.
  const double synthesized = synth["synthesized_time_ns"].get<double>();
  EXPECT_LE(tacos["makespan_ns"].get<double>(), synthesized);
  EXPECT_NEAR(tacos["makespan_ns"].get<double>() / synthesized, 1.0, 0.02);
}
