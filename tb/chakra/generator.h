#pragma once
// Writes Chakra workloads of our own: collective microbenchmarks (like ASTRA-sim's examples, at any
// size) and simple compute + collective loops. The files are ordinary Chakra ET.
#include <array>
#include <string>
#include <vector>

#include "tb/chakra/trace.h"

namespace wafersim::chakra {

// 3-D parallelism (model, data, pipeline) and the communicator groups of one of its kinds.
enum class GroupKind { Mp, Dp, Pp };
struct Parallelism {
  int mp = 1, dp = 1, pp = 1;
  int ranks() const { return mp * dp * pp; }
  // The size of kind `k`'s groups.
  int size(GroupKind k) const { return k == GroupKind::Mp ? mp : k == GroupKind::Dp ? dp : pp; }
};
GroupKind group_kind_from_string(const std::string& text);  // mp, dp or pp; std::invalid_argument
Parallelism parallelism_from_string(const std::string& text);  // "MP,DP,PP", e.g. "2,5,2"

// Where each (mp, dp, pp) coordinate runs. `order` nests the kinds, innermost first: the Fred
// paper's rule (PAPERS.md section 1) puts MP groups on consecutive positions, then PP, then DP, so
// position = mp + MP x (pp + PP x dp). Position i is rank i, or with `snake_columns` > 0 the i-th
// NPU along a boustrophedon of a mesh of that many columns (row 0 left to right, row 1 right to
// left, ...; rank = x + columns x y), on which consecutive positions are neighbours.
struct Placement {
  std::array<GroupKind, 3> order{GroupKind::Mp, GroupKind::Pp, GroupKind::Dp};
  int snake_columns = 0;
  int rank(const Parallelism& p, int mp, int dp, int pp) const;
};
// "mp,pp,dp" or any other order of the three; throws std::invalid_argument.
Placement placement_from_string(const std::string& order, int snake_columns = 0);

// The groups of kind `kind`, each in ascending rank order, every rank in exactly one.
std::vector<std::vector<int>> parallel_groups(const Parallelism& p, GroupKind kind,
                                              const Placement& placement = {});

struct MicrobenchmarkSpec {
  CollectiveKind collective = CollectiveKind::AllReduce;
  uint64_t bytes = 1 << 20;  // comm_size, Chakra's convention
  int ranks = 8;
  int iterations = 1;           // collectives in sequence
  uint64_t compute_micros = 0;  // a compute node before each collective (0 = none)
  // Empty: every collective is over all ranks. Else each rank's collectives are over its group
  // (pg_name "1", "2", ... in this order), all groups at once; together they hold every rank once.
  std::vector<std::vector<int>> groups;
  // Above 0: the platform's I/O controllers (ranks `ranks` .. ranks + io_controllers - 1) stream:
  // each runs the collective (a broadcast: weights streamed in; a reduce: gradients out) with every
  // NPU as its root, all controllers at once (group "io<i>": the NPUs, then controller i).
  int io_controllers = 0;
};

// The generator's options for a 3-D parallel workload (`wafersim generate --parallelism ...`).
struct ParallelOptions {
  std::string parallelism;             // "MP,DP,PP"; empty: no groups
  std::string group;                   // mp | dp | pp: the kind whose groups run the collective
  std::string placement = "mp,pp,dp";  // Placement::order
  int snake_columns = 0;               // Placement::snake_columns
};

// Gives `spec` the groups `options` name and their product as its ranks; `ranks_given`: the
// caller set spec.ranks itself, which must then equal the product. Throws std::invalid_argument.
void apply_parallelism(MicrobenchmarkSpec& spec, const ParallelOptions& options, bool ranks_given);

// Writes <prefix>.<rank>.et for every rank (and I/O controller) and, when the spec has groups or
// I/O streams, the communicator groups as <prefix's folder>/workload.json (where `wafersim run`
// looks for them). Throws std::invalid_argument on a spec it cannot write.
void write_microbenchmark(const std::string& prefix, const MicrobenchmarkSpec& spec);
// The checks write_microbenchmark makes before it writes anything; std::invalid_argument.
void check_microbenchmark(const MicrobenchmarkSpec& spec);

CollectiveKind collective_from_string(const std::string& text);  // throws std::invalid_argument

}  // namespace wafersim::chakra
