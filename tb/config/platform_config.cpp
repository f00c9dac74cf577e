// Reads wafersim YAML platforms. Every key is dispatched through one table, so an unknown or
// mistyped key is an error rather than a silent default (docs/config.md).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>

#include "models/common/error.h"
#include "tb/config/platform_spec.h"

namespace wafersim::tb {

namespace {

using Setter = std::function<void(PlatformSpec&, const std::string& value)>;

double to_double(const std::string& v) {
  size_t used = 0;
  double d = std::stod(v, &used);
  if (used != v.size()) throw std::invalid_argument("not a number: '" + v + "'");
  return d;
}

long long to_int(const std::string& v) {
  size_t used = 0;
  long long i = std::stoll(v, &used);
  if (used != v.size()) throw std::invalid_argument("not an integer: '" + v + "'");
  return i;
}

template <typename Field>
Setter number(Field field, double min, bool inclusive) {
  return [field, min, inclusive](PlatformSpec& s, const std::string& v) {
    using T = std::remove_reference_t<decltype(field(s))>;
    double d = to_double(v);
    if (inclusive ? d < min : d <= min)
      throw std::invalid_argument("must be " + std::string(inclusive ? ">= " : "> ") +
                                  fmt::format("{:g}", min) + ", got " + v);
    if constexpr (!std::is_floating_point_v<T>)
      if (static_cast<double>(to_int(v)) != d)
        throw std::invalid_argument("must be a whole number, got " + v);
    field(s) = static_cast<T>(d);
  };
}

#define FIELD(path)               \
  [](PlatformSpec & s) -> auto& { \
    return s.path;                \
  }

// A key whose value is one of a few names.
template <typename E>
Setter choice(E PlatformSpec::*field, std::vector<std::pair<std::string, E>> names) {
  return [field, names](PlatformSpec& s, const std::string& v) {
    std::string expected;
    for (const auto& [name, value] : names) {
      if (v == name) {
        s.*field = value;
        return;
      }
      expected += (expected.empty() ? "" : " or ") + name;
    }
    throw std::invalid_argument("expected " + expected + ", got '" + v + "'");
  };
}

Setter algorithm(collectives::Algorithm CollectiveConfig::*field) {
  return [field](PlatformSpec& s, const std::string& v) {
    s.collectives.*field = collectives::algorithm_from_string(v);
  };
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"network.topology",
       [](PlatformSpec& s, const std::string& v) {
         s.network.shape = topology::shape_from_string(v);
       }},
      {"network.npus", number(FIELD(network.npus), 1, true)},
      {"network.mesh_x", number(FIELD(network.mesh_x), 1, true)},
      {"network.mesh_y", number(FIELD(network.mesh_y), 1, true)},
      {"network.clock_ghz", number(FIELD(network.clock_ghz), 0, false)},
      {"network.link_bandwidth_gbps", number(FIELD(network.link_bandwidth_gbps), 0, false)},
      {"network.link_latency_ns", number(FIELD(network.link_latency_ns), 0, true)},
      {"network.injection_bandwidth_gbps",
       number(FIELD(network.injection_bandwidth_gbps), 0, true)},
      {"network.injection_latency_ns", number(FIELD(network.injection_latency_ns), 0, true)},
      {"fabric.fidelity",
       [](PlatformSpec& s, const std::string& v) {
         s.fabric.fidelity = hw::fidelity_from_string(v);
       }},
      {"fabric.flit_bytes", number(FIELD(fabric.flit_bytes), 1, true)},
      {"fabric.packet_bytes", number(FIELD(fabric.packet_bytes), 1, true)},
      {"fabric.header_bytes", number(FIELD(fabric.header_bytes), 0, true)},
      {"fabric.vcs", number(FIELD(fabric.vcs), 1, true)},
      {"fabric.buffer_flits", number(FIELD(fabric.buffer_flits), 1, true)},
      {"fabric.routing_delay_cycles", number(FIELD(fabric.routing_delay_cycles), 0, true)},
      {"fabric.vc_alloc_delay_cycles", number(FIELD(fabric.vc_alloc_delay_cycles), 0, true)},
      {"fabric.sw_alloc_delay_cycles", number(FIELD(fabric.sw_alloc_delay_cycles), 0, true)},
      {"fabric.switch_traversal_delay_cycles",
       number(FIELD(fabric.switch_traversal_delay_cycles), 0, true)},
      {"fabric.credit_delay_cycles", number(FIELD(fabric.credit_delay_cycles), 0, true)},
      {"fabric.endpoint_delay_cycles", number(FIELD(fabric.endpoint_delay_cycles), 0, true)},
      {"npu.clock_ghz", number(FIELD(npu.clock_ghz), 0, false)},
      {"npu.peak_tflops", number(FIELD(npu.peak_tflops), 0, false)},
      {"npu.hbm_bandwidth_gbps", number(FIELD(npu.hbm_bandwidth_gbps), 0, false)},
      {"npu.reduce_bandwidth_gbps", number(FIELD(npu.reduce_bandwidth_gbps), 0, false)},
      {"npu.compute_model", choice(&PlatformSpec::compute, {{"duration", ComputeModel::Duration},
                                                            {"roofline", ComputeModel::Roofline}})},
      {"npu.compute_order", choice(&PlatformSpec::compute_order, {{"node_id", ComputeOrder::NodeId},
                                                                  {"ready", ComputeOrder::Ready}})},
      {"npu.comm_order", choice(&PlatformSpec::comm_order, {{"concurrent", CommOrder::Concurrent},
                                                            {"node_id", CommOrder::NodeId}})},
      {"collectives.all_reduce", algorithm(&CollectiveConfig::all_reduce)},
      {"collectives.all_gather", algorithm(&CollectiveConfig::all_gather)},
      {"collectives.reduce_scatter", algorithm(&CollectiveConfig::reduce_scatter)},
      {"collectives.all_to_all", algorithm(&CollectiveConfig::all_to_all)},
      {"collectives.broadcast", algorithm(&CollectiveConfig::broadcast)},
      {"collectives.reduce", algorithm(&CollectiveConfig::reduce)},
      {"collectives.dataset_splits", number(FIELD(collectives.dataset_splits), 1, true)},
      {"collectives.active_chunks", number(FIELD(collectives.active_chunks), 0, true)},
  };
  return table;
}

void set_key(PlatformSpec& spec, const std::string& file, const std::string& key,
             const std::string& value) {
  auto it = setters().find(key);
  if (it == setters().end())
    throw InputError(file, "key '" + key + "'", "unknown key (see docs/config.md)");
  try {
    it->second(spec, value);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(file, "key '" + key + "'", e.what());
  }
}

}  // namespace

void apply_overrides(PlatformSpec& spec, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos) throw InputError("--set", o, "expected section.key=value");
    set_key(spec, "--set", o.substr(0, eq), o.substr(eq + 1));
  }
}

PlatformSpec load_platform(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, "", "cannot open file");
  } catch (const YAML::Exception& e) {
    throw InputError(path, "line " + std::to_string(e.mark.line + 1), e.msg);
  }
  if (!root.IsMap()) throw InputError(path, "", "expected a YAML mapping at the top level");
  PlatformSpec spec;
  spec.source = path;
  for (const auto& section : root) {
    std::string name = section.first.as<std::string>();
    if (name == "name") {
      spec.name = section.second.as<std::string>();
      continue;
    }
    if (!section.second.IsMap())
      throw InputError(path, "key '" + name + "'",
                       "unknown section (expected network, fabric, npu or collectives)");
    for (const auto& entry : section.second) {
      std::string key = name + "." + entry.first.as<std::string>();
      if (!entry.second.IsScalar())
        throw InputError(path, "key '" + key + "'", "expected a single value");
      set_key(spec, path, key, entry.second.Scalar());
    }
  }
  apply_overrides(spec, overrides);
  if (spec.name.empty()) spec.name = path;
  return spec;
}

}  // namespace wafersim::tb
