#pragma once
// `wafersim export-collective`: the plan a platform runs for one collective, written out as MSCCL
// XML or as per-rank Chakra collective graphs (docs/collectives.md).
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

}  // namespace wafersim::tb
