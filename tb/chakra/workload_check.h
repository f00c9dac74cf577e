#pragma once
// Everything that can be known about a workload without simulating it (`wafersim check`, and every
// `run` before it starts): each node is well formed, dependencies exist and form no cycle, the
// ranks of each communicator agree on their collectives (kind, size, in the same order), and every
// SEND has its RECV. A problem names the file, the node and what is wrong.
#include <string>
#include <vector>

#include "models/common/error.h"
#include "tb/chakra/workload.h"

namespace wafersim::chakra {

struct WorkloadProblem {
  InputError error;
  // The workload is well formed but cannot finish: a message nobody receives, a receive nobody
  // sends, a collective some member never joins. A run reports these as a stall (exit 3) with
  // what each rank waits for; `check` reports them up front.
  bool stalls = false;
};

// Every problem, up to `limit` of them (the rest are counted in a last line).
std::vector<WorkloadProblem> check_workload(const Workload& workload, size_t limit = 50);
// The problems one trace shows on its own (no rank count, peers or communicators): for `inspect`.
std::vector<WorkloadProblem> check_trace(const Trace& trace);
// Throws the first problem that makes the workload invalid. Those that only stall are left to the
// run, which reports them with the state of every rank; they are returned, one sentence each, so
// that the stall report can add them.
std::vector<std::string> validate(const Workload& workload);

}  // namespace wafersim::chakra
