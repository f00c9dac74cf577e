#pragma once
// `wafersim check` and `wafersim inspect`: looking at a workload without simulating it.
#include <iosfwd>
#include <string>

#include "tb/run/run.h"

namespace wafersim::tb {

// Loads the platform (for the rank count and the collective algorithms) and the workload, and
// lists every problem: exit 0 when there is none, 1 for problems of the input, 3 when the workload
// is well formed but would stall (a SEND nobody receives, a collective a rank never joins).
int check_workload_command(const RunOptions& options, std::ostream& out, std::ostream& err);

// Prints one trace's nodes with their enum names, then the problems it shows on its own; exit 1
// when there are any (the nodes are printed all the same).
int inspect_trace(const std::string& file, std::ostream& out, std::ostream& err);

}  // namespace wafersim::tb
