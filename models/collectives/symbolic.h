#pragma once
// The symbolic executor: runs a plan on abstract data and checks that it computes its collective,
// without the fabric. Every block of every buffer holds which block of the collective it is and
// which ranks' contributions it sums; sends carry those, receives store or combine them. At the end
// every rank must hold what the collective promises: the full reduction of every block
// (all-reduce), of its own block (reduce-scatter: rank r gets block r of every chunk), every rank's
// input (all-gather), the block each rank addressed to it (all-to-all), the root's data
// (broadcast), or the full reduction at the root (reduce).
//
// Contributor sets are fingerprints (a count and a sum of 64-bit hashes of the ranks), so memory is
// 16 bytes per block per rank whatever the rank count; a wrong sum escapes only by a hash collision
// (about 2^-64). The execution order is one valid order of the plan's dependencies and matching;
// a plan whose result depended on the order (a race) is not detected.
#include <string>

#include "models/collectives/algorithms.h"
#include "models/collectives/plan.h"

namespace wafersim::collectives {

// "" when `plan` computes `collective` (rooted at `root` for broadcast and reduce); otherwise the
// first problem, naming the rank, the op (with its step tag), the chunk and the block.
std::string check_plan(const Plan& plan, Collective collective, int root = 0);

}  // namespace wafersim::collectives
