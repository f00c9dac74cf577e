// Reads ASTRA-sim's analytical network file (.yml) and system file (.json) unchanged, and maps them
// to a wafersim platform. The mapping and the differences are documented in docs/astra-sim.md.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "models/common/error.h"
#include "tb/common/files.h"
#include "tb/common/json_text.h"
#include "tb/config/platform_spec.h"
#include "tb/config/yaml_file.h"

namespace wafersim::tb {

namespace fs = std::filesystem;

namespace {

// ASTRA-sim's network "GB/s" is 2^30 bytes per second (measured: docs/astra-sim.md).
constexpr double kGiBps = 1073741824.0 / 1e9;

// ASTRA-sim charges a received block's reduction as three accesses at local-mem-bw (a write and
// two reads: PacketBundle::call), 10^9 bytes per second; wafersim's reduction unit combines at one
// rate, so it runs at a third of local-mem-bw.
double reduce_rate(double local_mem_bw_gbps) {
  return local_mem_bw_gbps / 3;
}

std::vector<std::string> list_of(const YAML::Node& root, const std::string& file, const char* key) {
  YAML::Node n = root[key];
  if (!n) throw InputError(file, std::string("key '") + key + "'", "missing");
  std::vector<std::string> out;
  auto value = [&](const YAML::Node& e) {
    if (!e.IsScalar())
      throw InputError(file, std::string("key '") + key + "'", "expected numbers or names");
    return e.Scalar();
  };
  if (n.IsSequence())
    for (const auto& e : n) out.push_back(value(e));
  else
    out.push_back(value(n));
  if (out.empty()) throw InputError(file, std::string("key '") + key + "'", "empty list");
  return out;
}

double number_in(const std::string& file, const std::string& key, const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (...) {
  }
  throw InputError(file, "key '" + key + "'", "not a number: '" + text + "'");
}

void read_network(PlatformSpec& spec, const std::string& file) {
  YAML::Node root = load_yaml(file);
  if (!root.IsMap()) throw InputError(file, "", "expected a YAML mapping");
  static const std::set<std::string> known = {"topology", "npus_count", "bandwidth", "latency"};
  for (const auto& e : root)
    if (!known.count(e.first.Scalar()))
      throw InputError(file, "key '" + e.first.Scalar() + "'",
                       "unknown key (expected topology, npus_count, bandwidth, latency)");
  auto topo = list_of(root, file, "topology");
  auto npus = list_of(root, file, "npus_count");
  auto bw = list_of(root, file, "bandwidth");
  auto lat = list_of(root, file, "latency");
  if (npus.size() != topo.size() || bw.size() != topo.size() || lat.size() != topo.size())
    throw InputError(file, "topology",
                     "topology, npus_count, bandwidth and latency need one entry per dimension");
  // One dimension: the single-shape network; several: a network of dimensions.
  for (size_t d = 0; d < topo.size(); ++d) {
    const std::string at = topo.size() == 1 ? "" : " (dimension " + std::to_string(d) + ")";
    topology::Dimension dim;
    try {
      dim.shape = topology::shape_from_string(topo[d]);
    } catch (const std::exception&) {
      dim.shape = topology::Shape::Mesh;  // refused just below
    }
    if (dim.shape != topology::Shape::Ring && dim.shape != topology::Shape::FullyConnected &&
        dim.shape != topology::Shape::Switch)
      throw InputError(file, "topology" + at,
                       "expected Ring, FullyConnected or Switch, got '" + topo[d] + "'");
    const double n = number_in(file, "npus_count" + at, npus[d]);
    const double min_npus = topo.size() == 1 ? 2 : 1;
    if (n < min_npus || n > 4096 || n != std::floor(n))
      throw InputError(
          file, "npus_count" + at,
          fmt::format("must be a whole number from {:g} to 4096, got {}", min_npus, npus[d]));
    dim.npus = static_cast<int>(n);
    if (dim.npus == 1 && dim.shape != topology::Shape::Switch)
      throw InputError(file, "npus_count" + at,
                       "a " + topo[d] + " of 1 NPU has no links: use 2 or more, or a Switch");
    const double gbps = number_in(file, "bandwidth" + at, bw[d]);
    if (!(gbps > 0)) throw InputError(file, "bandwidth" + at, "must be positive, got " + bw[d]);
    if (gbps < 1e-3 || gbps > 1e6)
      throw InputError(file, "bandwidth" + at, "must be from 0.001 to 1e6 GB/s, got " + bw[d]);
    dim.link_bandwidth_gbps = gbps * kGiBps;
    const double ns = number_in(file, "latency" + at, lat[d]);
    if (ns < 0 || ns > 1e9)
      throw InputError(file, "latency" + at, "must be from 0 to 1e9 ns, got " + lat[d]);
    dim.link_latency_ns = ns;
    spec.network.dims.push_back(dim);
  }
  double total = 1;
  for (const auto& dim : spec.network.dims) total *= dim.npus;
  if (total < 2 || total > 4096)
    throw InputError(
        file, "npus_count",
        fmt::format("the dimensions multiply to {:g} NPUs: 2 to 4096 are supported", total));
  if (topo.size() == 1) {
    const auto dim = spec.network.dims.front();
    spec.network.dims.clear();
    spec.network.shape = dim.shape;
    spec.network.npus = dim.npus;
    spec.network.link_bandwidth_gbps = dim.link_bandwidth_gbps;
    spec.network.link_latency_ns = dim.link_latency_ns;
  } else {
    spec.network.shape = topology::Shape::Dimensions;
  }
}

void read_system(PlatformSpec& spec, const std::string& file) {
  const nlohmann::json j = read_json_file(file);
  if (!j.is_object()) throw InputError(file, "", "expected a JSON object");
  auto item = [&](const std::string& key) { return "key '" + key + "'"; };
  auto integer = [&](const std::string& key, long long min, long long max) {
    const auto& v = j.at(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > 1ull << 62) ||
        v.get<long long>() < min || v.get<long long>() > max)
      throw InputError(file, item(key),
                       "expected a whole number from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", got " + shown(v));
    return v.get<long long>();
  };
  auto positive = [&](const std::string& key) {
    const auto& v = j.at(key);
    if (!v.is_number() || !(v.get<double>() >= 1e-3) || !(v.get<double>() <= 1e9))
      throw InputError(file, item(key), "expected a number from 0.001 to 1e9, got " + shown(v));
    return v.get<double>();
  };
  auto algorithm = [&](const std::string& key, Implementation& out) {
    const auto& v = j.at(key);
    if (!v.is_array() || v.empty())
      throw InputError(file, item(key), "expected a list of algorithm names, one per dimension");
    std::string names;
    for (const auto& name : v) {
      if (!name.is_string() || name.get<std::string>().empty() ||
          name.get<std::string>().find(',') != std::string::npos)
        throw InputError(file, item(key), "expected algorithm names, got " + shown(name));
      names += (names.empty() ? "" : ",") + name.get<std::string>();
    }
    try {
      out = implementation_from_string(names);
    } catch (const std::exception& e) {
      throw InputError(file, item(key), e.what());
    }
    if (out.source != Implementation::Source::BuiltIn)
      throw InputError(file, item(key), "expected built-in algorithm names, got " + shown(v));
  };
  // "<collective>-implementation-custom": [PATH], an MSCCL XML file (.xml) or the prefix of a
  // Chakra collective graph, one entry per dimension.
  auto custom = [&](const std::string& key, const nlohmann::json& v) {
    static const std::map<std::string, Implementation CollectiveConfig::*> slots = {
        {"all-reduce-implementation-custom", &CollectiveConfig::all_reduce},
        {"all-gather-implementation-custom", &CollectiveConfig::all_gather},
        {"reduce-scatter-implementation-custom", &CollectiveConfig::reduce_scatter},
        {"all-to-all-implementation-custom", &CollectiveConfig::all_to_all}};
    auto slot = slots.find(key);
    if (slot == slots.end()) throw InputError(file, item(key), "unknown ASTRA-sim system key");
    if (!v.is_array() || v.empty() || !v[0].is_string() || v[0].get<std::string>().empty())
      throw InputError(file, item(key), "expected a list of paths, one per dimension");
    if (v.size() != 1)
      throw InputError(file, item(key),
                       "one custom collective for the whole network: a list of one path (custom "
                       "collectives per dimension are not supported)");
    const std::string path = v[0].get<std::string>();
    const bool xml = path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0;
    spec.collectives.*(slot->second) =
        implementation_from_string((xml ? "msccl:" : "chakra:") + path);
  };
  // Keys real ASTRA-sim system files carry that wafersim does not model (yet): accepted, and named
  // in one notice. L, o, g, G: ASTRA-sim's LogGP parameters of its own memory-bus model;
  // model-shared-bus switches that model on; the rest are tracing, replay and scheduling options.
  static const std::set<std::string> unmodelled = {"L",
                                                   "o",
                                                   "g",
                                                   "G",
                                                   "model-shared-bus",
                                                   "trace-enabled",
                                                   "replay-only",
                                                   "track-local-mem",
                                                   "local-mem-trace-filename",
                                                   "local-reduction-delay",
                                                   "boost-mode"};
  // Themis's keys (PAPERS.md section 2), with ASTRA-sim's names for their values.
  auto named = [&](const std::string& key, const auto& names) {
    const auto& v = j.at(key);
    std::string expected;
    for (const auto& [name, value] : names) {
      if (v.is_string() && v.template get<std::string>() == name) return value;
      expected += (expected.empty() ? "" : ", ") + std::string(name);
    }
    throw InputError(file, item(key), "expected one of " + expected + ", got " + shown(v));
  };
  using collectives::DimensionOrder;
  using collectives::QueuePolicy;
  const std::vector<std::pair<const char*, DimensionOrder>> inter_names = {
      {"ascending", DimensionOrder::Ascending},
      {"baseline", DimensionOrder::Ascending},
      {"themis", DimensionOrder::Themis},
      {"offlineGreedy", DimensionOrder::Themis},
      {"offlineGreedyFlex", DimensionOrder::Themis}};
  const std::vector<std::pair<const char*, QueuePolicy>> intra_names = {
      {"FIFO", QueuePolicy::Fifo},
      {"fifo", QueuePolicy::Fifo},
      {"SCF", QueuePolicy::SmallestChunkFirst},
      {"smallestFirst", QueuePolicy::SmallestChunkFirst}};
  // baseline: every dimension all-reduces the whole buffer in turn; localBWAware:
  // reduce-scatter up the dimensions, all-gather back down (ASTRA-sim's Sys::generate_all_reduce).
  const std::vector<std::pair<const char*, DimensionOrder>> optimization_names = {
      {"baseline", DimensionOrder::AllReduceEach}, {"localBWAware", DimensionOrder::Ascending}};
  bool all_reduce_each = false;
  std::vector<std::string> ignored;
  for (const auto& [key, value] : j.items()) {
    if (unmodelled.count(key)) ignored.push_back(key);
    if (key == "scheduling-policy") {
      if (!value.is_string() || (value != "LIFO" && value != "FIFO"))
        throw InputError(file, item(key), "expected LIFO or FIFO");
      spec.collectives.collective_priority = value == "LIFO"
                                                 ? collectives::CollectivePriority::Lifo
                                                 : collectives::CollectivePriority::Fifo;
      if (value == "LIFO")
        spec.notices.push_back(
            file +
            ": scheduling-policy LIFO orders the phases of concurrent "
            "collectives under collectives.scheduler runtime only (docs/astra-sim.md)");
    } else if (key == "inter-dimension-scheduling") {
      if (!all_reduce_each) spec.collectives.dimension_order = named(key, inter_names);
    } else if (key == "intra-dimension-scheduling") {
      spec.collectives.queue_policy = named(key, intra_names);
    } else if (key == "collective-optimization") {
      all_reduce_each = named(key, optimization_names) == DimensionOrder::AllReduceEach;
    } else if (key == "endpoint-delay") {
      spec.fabric.endpoint_delay_cycles = static_cast<uint32_t>(integer(key, 0, 1000000));
    } else if (key == "active-chunks-per-dimension") {
      spec.collectives.active_chunks = static_cast<int>(integer(key, 1, 4096));
    } else if (key == "preferred-dataset-splits") {
      spec.collectives.dataset_splits = static_cast<int>(integer(key, 1, 4096));
    } else if (key == "all-reduce-implementation") {
      algorithm(key, spec.collectives.all_reduce);
    } else if (key == "all-gather-implementation") {
      algorithm(key, spec.collectives.all_gather);
    } else if (key == "reduce-scatter-implementation") {
      algorithm(key, spec.collectives.reduce_scatter);
    } else if (key == "all-to-all-implementation") {
      algorithm(key, spec.collectives.all_to_all);
    } else if (key.size() > 7 && key.compare(key.size() - 7, 7, "-custom") == 0) {
      custom(key, value);
    } else if (key == "local-mem-bw") {
      spec.npu.hbm_bandwidth_gbps = positive(key);
      spec.npu.reduce_bandwidth_gbps = reduce_rate(spec.npu.hbm_bandwidth_gbps);
    } else if (key == "peak-perf") {
      spec.npu.peak_tflops = positive(key);
    } else if (key == "roofline-enabled") {
      spec.compute = integer(key, 0, 1) != 0 ? ComputeModel::Roofline : ComputeModel::Duration;
    } else if (!unmodelled.count(key)) {
      throw InputError(file, item(key), "unknown ASTRA-sim system key");
    }
  }
  // baseline all-reduces each dimension in turn, whatever the inter-dimension order says.
  if (all_reduce_each) spec.collectives.dimension_order = DimensionOrder::AllReduceEach;
  if (!ignored.empty()) {
    std::string names;
    for (const auto& k : ignored) names += (names.empty() ? "" : ", ") + k;
    spec.notices.push_back(file + ": accepted but not modelled: " + names + " (docs/astra-sim.md)");
  }
}

}  // namespace

PlatformSpec load_astra_platform(const std::string& network_yml, const std::string& system_json,
                                 const std::vector<std::string>& overrides) {
  PlatformSpec spec;
  spec.name = "astra-sim";
  spec.source = network_yml + " + " + system_json;
  // An ASTRA-sim network has no routers to speak of: zero pipeline delays, and buffers deep enough
  // that credits never throttle a link (ASTRA-sim has no flow control). Packets of 4 KiB.
  spec.fabric.fidelity = hw::Fidelity::Packet;
  spec.fabric.flit_bytes = 256;
  spec.fabric.packet_bytes = 4096;
  spec.fabric.routing_delay_cycles = 0;
  spec.fabric.vc_alloc_delay_cycles = 0;
  spec.fabric.sw_alloc_delay_cycles = 0;
  spec.fabric.switch_traversal_delay_cycles = 0;
  spec.fabric.credit_delay_cycles = 0;
  // Nor head-of-line blocking: with 2 VCs, a packet waiting for a busy link holds the VC that
  // packets behind it, bound for other links, need (the 64-NPU FullyConnected x Ring x Switch
  // all-reduce took 1.55x its message-fidelity time); 8 bring it within 2%.
  spec.fabric.vcs = 8;
  spec.npu.peak_tflops = 900;
  spec.npu.hbm_bandwidth_gbps = 1600;
  spec.npu.reduce_bandwidth_gbps = reduce_rate(spec.npu.hbm_bandwidth_gbps);
  // ASTRA-sim reduces every received block on its own, however many arrive at once (a direct
  // reduce-scatter's 7, both dimensions' phases): as many engines as that can need.
  spec.npu.reduce_engines = 64;
  read_network(spec, network_yml);
  read_system(spec, system_json);
  // ASTRA-sim opens custom collectives from the current directory; system files copied with their
  // data name them from a folder above their own, so those are tried next.
  std::vector<std::string> bases{"."};
  for (fs::path dir = fs::path(system_json).parent_path(); bases.size() < 6;
       dir = dir.parent_path()) {
    bases.push_back(dir.empty() ? "." : dir.string());
    if (dir.empty() || dir == dir.parent_path()) break;
  }
  resolve_implementation_paths(spec.collectives, bases);
  // Buffer = twice the bandwidth-delay product of the largest link plus two packets, in flits.
  double bdp = 2 * spec.network.link_latency_ns * spec.network.link_bandwidth_gbps;
  for (const auto& dim : spec.network.dims)
    bdp = std::max(bdp, 2 * dim.link_latency_ns * dim.link_bandwidth_gbps);
  bdp += 2.0 * spec.fabric.packet_bytes;
  spec.fabric.buffer_flits = static_cast<uint32_t>(std::ceil(bdp / spec.fabric.flit_bytes)) + 1;
  apply_overrides(spec, overrides);
  check_platform(spec);
  return spec;
}

}  // namespace wafersim::tb
