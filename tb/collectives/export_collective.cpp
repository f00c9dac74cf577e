#include "tb/collectives/export_collective.h"

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "models/collectives/msccl.h"
#include "models/common/error.h"
#include "models/tacos/tacos.h"
#include "tb/collectives/chakra_graph.h"
#include "tb/collectives/msccl_xml.h"
#include "tb/common/exit_codes.h"
#include "tb/common/files.h"
#include "tb/replay/plan_library.h"

namespace wafersim::tb {

int export_collective(const ExportOptions& o, std::ostream& out) {
  const PlatformSpec spec = load_platform_spec(o.platform);
  const topology::Topology topology = build_topology(spec);
  const int ranks = topology.npu_count();
  collectives::CollectiveRequest q;
  try {
    q.collective = collectives::collective_from_string(o.collective);
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "--collective", e.what());
  }
  if (o.root < 0 || o.root >= ranks)
    throw InputError("command line", "--root",
                     std::to_string(o.root) + " is not a rank of 0.." + std::to_string(ranks - 1));
  q.ranks = ranks;
  q.bytes = o.bytes;
  q.root = o.root;
  q.splits = spec.collectives.dataset_splits;
  q.active_chunks = spec.collectives.active_chunks;
  // MSCCL XML holds one loop of the algorithm (its runtime repeats it over a larger buffer).
  if (o.format == "msccl") q.splits = 1;
  PlanLibrary library(spec, &topology);
  const PlanLibrary::Entry entry = library.plan(q, "command line", "--collective " + o.collective);
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (o.format == "msccl") {
    collectives::msccl::Algorithm algo;
    try {
      algo = collectives::msccl::from_plan(*entry.plan, q.collective, entry.plan->algorithm);
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--format msccl", e.what());
    }
    const std::string path = o.out_dir + "/" + o.collective + ".xml";
    const std::string text = msccl_xml_text(algo);
    write_file_atomically(
        path, [&](std::ostream& file) { file << text; }, "--out");
    out << "wrote " << path << ": " << entry.plan->algorithm << " " << o.collective << " over "
        << ranks << " ranks, " << algo.nchunksperloop << " chunks per loop, " << algo.nchannels
        << " channels\n";
  } else {
    const std::string prefix = o.out_dir + "/" + o.collective;
    write_chakra_collective(*entry.plan, q.collective, prefix);
    out << "wrote " << prefix << ".0.et .. " << prefix << "." << ranks - 1
        << ".et: " << entry.plan->algorithm << " " << o.collective << " over " << ranks
        << " ranks, " << entry.plan->chunks << " chunks\n";
  }
  return kOk;
}

int synth_collective(const SynthOptions& o, std::ostream& out) {
  const PlatformSpec spec = load_platform_spec(o.platform);
  const topology::Topology topology = build_topology(spec);
  collectives::Collective kind;
  try {
    kind = collectives::collective_from_string(o.collective);
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "--collective", e.what());
  }
  const std::string platform_name = spec.source;
  tacos::LinkGraph graph;
  double time_ns = 0;
  collectives::Plan plan;
  const auto t0 = std::clock();
  try {
    graph = tacos::link_graph(topology, synthesis_costs(spec));
    plan = tacos::synthesize(graph, kind, o.bytes, o.chunks_per_npu, o.seed, &time_ns);
  } catch (const std::invalid_argument& e) {
    throw InputError(platform_name, "synthesis of " + o.collective, e.what());
  }
  const double cpu_seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
  // The ingress bound of each phase, where every link is alike (reduce-scatter: on the reversed
  // links, whose in-degrees are the out-degrees).
  const uint64_t parts =
      static_cast<uint64_t>(graph.npus) * static_cast<uint64_t>(o.chunks_per_npu);
  const uint64_t whole = kind == collectives::Collective::AllGather
                             ? o.bytes * static_cast<uint64_t>(graph.npus)
                             : o.bytes;
  const tacos::Options options{o.chunks_per_npu, std::max<uint64_t>(1, whole / parts), o.seed};
  const tacos::LinkGraph reversed = tacos::reduce_scatter_graph(graph, options.chunk_bytes);
  const double gather = tacos::ingress_lower_bound_ns(graph, options);
  const double scatter = tacos::ingress_lower_bound_ns(reversed, options);
  double bound = kind == collectives::Collective::AllGather       ? gather
                 : kind == collectives::Collective::ReduceScatter ? scatter
                 : gather >= 0 && scatter >= 0                    ? gather + scatter
                                                                  : -1;
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  const std::string prefix = o.out_dir + "/" + o.collective;
  {
    const auto algo = collectives::msccl::from_plan(plan, kind, "tacos");
    write_file_atomically(
        prefix + ".xml", [&](std::ostream& file) { write_msccl_xml(file, algo); }, "--out");
  }
  write_chakra_collective(plan, kind, prefix);
  nlohmann::json report = {{"collective", o.collective},
                           {"npus", graph.npus},
                           {"links", graph.links.size()},
                           {"chunks_per_npu", o.chunks_per_npu},
                           {"bytes", o.bytes},
                           {"seed", o.seed},
                           {"synthesized_time_ns", time_ns},
                           {"synthesis_cpu_seconds", cpu_seconds}};
  report["lower_bound_ns"] = bound >= 0 ? nlohmann::json(bound) : nlohmann::json(nullptr);
  write_file_atomically(
      o.out_dir + "/synth.json", [&](std::ostream& file) { file << report.dump(2) << "\n"; },
      "--out");
  out << "synthesized " << o.collective << " over " << graph.npus << " NPUs (" << graph.links.size()
      << " links), " << o.chunks_per_npu << " chunks per NPU: " << time_ns / 1e3 << " us"
      << (bound >= 0 ? " (ingress bound " + std::to_string(bound / 1e3) + " us)" : std::string())
      << " in " << cpu_seconds << " CPU-s\nwrote " << prefix << ".xml, " << prefix << ".<rank>.et, "
      << o.out_dir << "/synth.json\n";
  return kOk;
}

}  // namespace wafersim::tb
