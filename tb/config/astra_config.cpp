// Reads ASTRA-sim's analytical network file (.yml) and system file (.json) unchanged, and maps them
// to a wafersim platform. The mapping and the differences are documented in docs/astra-sim.md.
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

double number_in(const std::string& file, const char* key, const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (...) {
  }
  throw InputError(file, std::string("key '") + key + "'", "not a number: '" + text + "'");
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
  if (topo.size() != 1)
    throw InputError(file, "topology",
                     std::to_string(topo.size()) +
                         "-dimensional networks are not supported yet: only one dimension (Ring, "
                         "FullyConnected or Switch)");
  try {
    spec.network.shape = topology::shape_from_string(topo[0]);
  } catch (const std::exception&) {
    spec.network.shape = topology::Shape::Mesh;  // refused just below
  }
  if (spec.network.shape == topology::Shape::Mesh)
    throw InputError(file, "topology",
                     "expected Ring, FullyConnected or Switch, got '" + topo[0] + "'");
  double n = number_in(file, "npus_count", npus[0]);
  if (n < 2 || n > 4096 || n != std::floor(n))
    throw InputError(file, "npus_count", "must be a whole number from 2 to 4096, got " + npus[0]);
  spec.network.npus = static_cast<int>(n);
  double gbps = number_in(file, "bandwidth", bw[0]);
  if (!(gbps > 0)) throw InputError(file, "bandwidth", "must be positive, got " + bw[0]);
  if (gbps < 1e-3 || gbps > 1e6)
    throw InputError(file, "bandwidth", "must be from 0.001 to 1e6 GB/s, got " + bw[0]);
  spec.network.link_bandwidth_gbps = gbps * kGiBps;
  double ns = number_in(file, "latency", lat[0]);
  if (ns < 0 || ns > 1e9)
    throw InputError(file, "latency", "must be from 0 to 1e9 ns, got " + lat[0]);
  spec.network.link_latency_ns = ns;
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
    if (!v.is_array() || v.empty() || !v[0].is_string())
      throw InputError(file, item(key), "expected a list of algorithm names, one per dimension");
    if (v.size() != 1)
      throw InputError(file, item(key),
                       "one entry per dimension: only one dimension is supported yet");
    try {
      out = collectives::algorithm_from_string(v[0].get<std::string>());
    } catch (const std::exception& e) {
      throw InputError(file, item(key), e.what());
    }
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
                       "one entry per dimension: only one dimension is supported yet");
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
                                                   "boost-mode",
                                                   "collective-optimization",
                                                   "intra-dimension-scheduling",
                                                   "inter-dimension-scheduling",
                                                   "scheduling-policy"};
  std::vector<std::string> ignored;
  for (const auto& [key, value] : j.items()) {
    if (unmodelled.count(key)) ignored.push_back(key);
    if (key == "scheduling-policy") {
      if (!value.is_string() || (value != "LIFO" && value != "FIFO"))
        throw InputError(file, item(key), "expected LIFO or FIFO");
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
      spec.npu.hbm_bandwidth_gbps = spec.npu.reduce_bandwidth_gbps = positive(key);
    } else if (key == "peak-perf") {
      spec.npu.peak_tflops = positive(key);
    } else if (key == "roofline-enabled") {
      spec.compute = integer(key, 0, 1) != 0 ? ComputeModel::Roofline : ComputeModel::Duration;
    } else if (!unmodelled.count(key)) {
      throw InputError(file, item(key), "unknown ASTRA-sim system key");
    }
  }
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
  spec.npu.peak_tflops = 900;
  spec.npu.hbm_bandwidth_gbps = spec.npu.reduce_bandwidth_gbps = 1600;
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
  // Buffer = twice the bandwidth-delay product of a link plus two packets, in flits.
  double bytes_per_ns = spec.network.link_bandwidth_gbps;
  double bdp = 2 * spec.network.link_latency_ns * bytes_per_ns + 2.0 * spec.fabric.packet_bytes;
  spec.fabric.buffer_flits = static_cast<uint32_t>(std::ceil(bdp / spec.fabric.flit_bytes)) + 1;
  apply_overrides(spec, overrides);
  check_platform(spec);
  return spec;
}

}  // namespace wafersim::tb
