#pragma once
// Writes Chakra workloads of our own: collective microbenchmarks (like ASTRA-sim's examples, at any
// size) and simple compute + collective loops. The files are ordinary Chakra ET.
#include <string>

#include "tb/chakra/trace.h"

namespace wafersim::chakra {

struct MicrobenchmarkSpec {
  CollectiveKind collective = CollectiveKind::AllReduce;
  uint64_t bytes = 1 << 20;  // comm_size, Chakra's convention
  int ranks = 8;
  int iterations = 1;           // collectives in sequence
  uint64_t compute_micros = 0;  // a compute node before each collective (0 = none)
};

// Writes <prefix>.<rank>.et for every rank.
void write_microbenchmark(const std::string& prefix, const MicrobenchmarkSpec& spec);

CollectiveKind collective_from_string(const std::string& text);  // throws std::invalid_argument

}  // namespace wafersim::chakra
