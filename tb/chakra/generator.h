#pragma once
// Writes Chakra workloads of our own: collective microbenchmarks (like ASTRA-sim's examples, at any
// size) and simple compute + collective loops. The files are ordinary Chakra ET.
#include <string>
#include <vector>

#include "tb/chakra/trace.h"

namespace wafersim::chakra {

// 3-D parallelism (model, data, pipeline) and the communicator groups of one of its kinds, placed
// as the Fred paper places them (PAPERS.md section 1): MP groups on consecutive ranks, then PP,
// then DP, so rank = mp + MP x (pp + PP x dp).
struct Parallelism {
  int mp = 1, dp = 1, pp = 1;
  int ranks() const { return mp * dp * pp; }
};
enum class GroupKind { Mp, Dp, Pp };
GroupKind group_kind_from_string(const std::string& text);  // mp, dp or pp; std::invalid_argument
Parallelism parallelism_from_string(const std::string& text);  // "MP,DP,PP", e.g. "2,5,2"
// The groups of kind `kind`, each in ascending rank order, every rank in exactly one.
std::vector<std::vector<int>> parallel_groups(const Parallelism& p, GroupKind kind);

struct MicrobenchmarkSpec {
  CollectiveKind collective = CollectiveKind::AllReduce;
  uint64_t bytes = 1 << 20;  // comm_size, Chakra's convention
  int ranks = 8;
  int iterations = 1;           // collectives in sequence
  uint64_t compute_micros = 0;  // a compute node before each collective (0 = none)
  // Empty: every collective is over all ranks. Else each rank's collectives are over its group
  // (pg_name "1", "2", ... in this order), all groups at once; together they hold every rank once.
  std::vector<std::vector<int>> groups;
};

// Gives `spec` the groups of kind `group` ("mp", "dp" or "pp") of parallelism `parallelism`
// ("MP,DP,PP") and their product as its ranks; `ranks_given`: the caller set spec.ranks itself,
// which must then equal the product. Throws std::invalid_argument.
void apply_parallelism(MicrobenchmarkSpec& spec, const std::string& parallelism,
                       const std::string& group, bool ranks_given);

// Writes <prefix>.<rank>.et for every rank and, when the spec has groups, the communicator groups
// as <prefix's folder>/workload.json (where `wafersim run` looks for them).
void write_microbenchmark(const std::string& prefix, const MicrobenchmarkSpec& spec);

CollectiveKind collective_from_string(const std::string& text);  // throws std::invalid_argument

}  // namespace wafersim::chakra
