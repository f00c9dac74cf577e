#pragma once
// `wafersim export-collective`: the plan a platform runs for one collective, written out as MSCCL
// XML or as per-rank Chakra collective graphs; `wafersim synth`: a TACOS-synthesized plan for the
// platform's topology, written out both ways with synth.json (docs/collectives.md).
#include <cstdint>
#include <iosfwd>
#include <string>

#include "tb/run/run.h"

namespace wafersim::tb {

struct ExportOptions {
  RunOptions platform;  // --platform / --astra-network + --astra-system, --set
  std::string collective = "all_reduce";
  uint64_t bytes = 1 << 20;  // Chakra's comm_size convention (all-gather: each rank's part)
  int root = 0;              // broadcast / reduce
  std::string format = "msccl";
  std::string out_dir;
};

// Writes OUT/<collective>.xml (msccl) or OUT/<collective>.<rank>.et (chakra) for the platform's
// NPUs and prints what it wrote. Returns an exit code; throws InputError.
int export_collective(const ExportOptions& options, std::ostream& out);

struct SynthOptions {
  RunOptions platform;
  std::string collective = "all_reduce";  // all_gather | reduce_scatter | all_reduce
  uint64_t bytes = 1 << 20;
  int chunks_per_npu = 1;
  uint64_t seed = 1;
  std::string out_dir;
};

// Synthesizes the collective over all the platform's NPUs and writes OUT/<collective>.xml,
// OUT/<collective>.<rank>.et and OUT/synth.json. Returns an exit code; throws InputError.
int synth_collective(const SynthOptions& options, std::ostream& out);

}  // namespace wafersim::tb
