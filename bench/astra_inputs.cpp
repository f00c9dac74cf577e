#include "bench/astra_inputs.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace wafersim::bench {

void write_ring_4chunks_system(const std::string& path, int dims) {
  nlohmann::json ring = nlohmann::json::array();
  for (int d = 0; d < dims; ++d) ring.push_back("ring");
  nlohmann::json system = {{"scheduling-policy", "LIFO"},
                           {"endpoint-delay", 10},
                           {"active-chunks-per-dimension", 1},
                           {"preferred-dataset-splits", 4},
                           {"all-reduce-implementation", ring},
                           {"all-gather-implementation", ring},
                           {"reduce-scatter-implementation", ring},
                           {"all-to-all-implementation", ring},
                           {"collective-optimization", "localBWAware"},
                           {"local-mem-bw", 1600},
                           {"boost-mode", 0},
                           {"roofline-enabled", 0},
                           {"peak-perf", 900}};
  std::ofstream(path) << system.dump(4) << "\n";
}

void write_ring_network(const std::string& path, const std::vector<int>& sizes) {
  std::ofstream out(path);
  auto list = [&](const std::string& each) {
    std::string s;
    for (size_t d = 0; d < sizes.size(); ++d)
      s += (d ? ", " : "") + (each.empty() ? std::to_string(sizes[d]) : each);
    return "[ " + s + " ]";
  };
  out << "topology: " << list("Ring") << "\nnpus_count: " << list("")
      << "\nbandwidth: " << list("50.0") << "  # GB/s\nlatency: " << list("500.0") << "  # ns\n";
}

void write_no_memory_expansion(const std::string& path) {
  std::ofstream(path) << "{\"memory-type\": \"NO_MEMORY_EXPANSION\"}\n";
}

}  // namespace wafersim::bench
