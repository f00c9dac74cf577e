#pragma once
// Collectives over a network of several dimensions (PAPERS.md sections 2 and 5). An all-reduce is
// cut into chunks; each chunk reduce-scatters through the dimensions one after the other, its data
// shrinking by each dimension's size, then all-gathers back through them in reverse. A
// reduce-scatter is the first half (dimension 0 first), an all-gather the second (dimension 0
// last), as in ASTRA-sim and Libra; rank r's share of their data then sits at the position its
// coordinates give in that order (Plan::slot_order), not at r. Which order
// each chunk takes (fixed, or Themis's least-loaded dimension first) and in which order each
// dimension serves the chunks waiting for it (FIFO or smallest chunk first) are decided when the
// plan is built, from the load model Themis itself uses (bytes over per-NPU bandwidth per
// dimension), and written into the plan as dependencies: the plan stays data, checked by the
// symbolic executor and runnable in data mode, and every rank agrees on the order by construction.
// A dimension runs at most `active_chunks` chunk phases at once (ASTRA-sim's
// active-chunks-per-dimension), chunk c in slot c % active_chunks. On a Ring dimension (ring
// algorithm, more than 2 NPUs), odd chunks go round the other way: a unidirectional ring algorithm
// uses one direction of the links, half of DimensionGroup::bandwidth_gbps, so a ring needs 2 chunks
// in flight to use both directions (with 1, as in ASTRA-sim, its chunks take turns).
#include <cstdint>
#include <vector>

#include "models/collectives/algorithms.h"

namespace wafersim::collectives {

// One dimension as a collective sees it.
struct DimensionGroup {
  int size = 1;                           // NPUs along it
  Algorithm algorithm = Algorithm::Ring;  // the algorithm a phase runs over it
  double bandwidth_gbps = 1;              // per NPU (all its links in this dimension), 1e9 bytes/s
  int active_chunks = 1;                  // chunk phases in flight at once; 0 = no limit
};

// How a chunk goes through the dimensions.
enum class DimensionOrder {
  // ASTRA-sim's collective-optimization "baseline": an all-reduce of the whole chunk in each
  // dimension, ascending.
  AllReduceEach,
  // Reduce-scatter ascending, all-gather descending (ASTRA-sim's "localBWAware", BlueConnect, the
  // Themis paper's baseline).
  Ascending,
  // Per chunk, the reduce-scatter visits the least-loaded dimension first and the all-gather the
  // reverse; the default ascending order is kept while the loads differ by less than the time of
  // a chunk/16 transfer (PAPERS.md section 2).
  Themis,
};
// In which order a dimension serves the chunk phases waiting for it.
enum class QueuePolicy { Fifo, SmallestChunkFirst };
// Where that order is decided: when the plan is built, from the load model (`Planned`), or while
// the collective runs, by each NPU's scheduler from the phases ready there (`Runtime`,
// tb/replay/phase_scheduler.h).
enum class QueueScheduler { Planned, Runtime };
// Between the phases of different collectives waiting for one dimension of an NPU (runtime
// scheduler): the collective issued first goes first (`Fifo`), or the one issued last (`Lifo`);
// ASTRA-sim's scheduling-policy.
enum class CollectivePriority { Fifo, Lifo };

const char* to_string(DimensionOrder order);
const char* to_string(QueuePolicy policy);
const char* to_string(QueueScheduler scheduler);
const char* to_string(CollectivePriority priority);

struct HierarchicalRequest {
  // all_reduce, reduce_scatter, all_gather or all_to_all. Themis orders the first three (an
  // all-gather visits its order backwards); an all-to-all keeps the ascending order.
  Collective collective = Collective::AllReduce;
  uint64_t bytes = 0;  // the collective's whole buffer (all-gather: the gathered output)
  int splits = 1;      // chunks
  std::vector<DimensionGroup> dims;  // dimension 0 first; NPU r's coordinate d varies fastest at 0
  DimensionOrder order = DimensionOrder::Ascending;
  QueuePolicy policy = QueuePolicy::Fifo;
  // Hold position 0's ops alone when every position runs them alike (Plan::symmetry): an
  // all-reduce, reduce-scatter or all-gather in reduce-scatter / all-gather phases, its dimensions
  // running ring, direct or halving-doubling (blocks of unequal sizes are sized where an op runs,
  // Plan::bytes_of). false: every position's ops, written out (the form the shared one is tested
  // against).
  bool share_positions = true;
  // Leave each dimension's service order to a scheduler at run time (tb/replay/phase_scheduler.h)
  // instead of writing it into the plan: phases wait only for their chunk's previous phase,
  // through a gate of their own that the scheduler opens (RankPlan::phases). The dimension orders
  // stay the plan's (as ASTRA-sim's Themis decides them when a collective is issued).
  bool runtime_queues = false;
};

// One step of a chunk: a collective over one dimension on the `bytes` the chunk holds then.
struct Phase {
  Collective collective = Collective::ReduceScatter;
  int dim = 0;
  uint64_t bytes = 0;
};

struct Schedule {
  std::vector<std::vector<Phase>> chunks;  // per chunk, its phases in order
  // Per dimension, the (chunk, phase index) pairs in the order it serves them.
  std::vector<std::vector<std::pair<int, int>>> served;
};

// How many directions a dimension's chunks take: 2 on a ring of more than 2 NPUs running the ring
// algorithm (chunk c goes round the other way when c is odd), else 1.
int lanes(const DimensionGroup& d);
// How many chunk phases a dimension runs at once in the load model: its limit, or one per lane
// when it has none. Chunk c runs in slot c % slots, each slot at the dimension's bandwidth over
// max(slots, lanes).
int slots(const DimensionGroup& d);

// Themis's choice for one chunk of `chunk_bytes`: the reduce-scatter's dimension order (an
// all-gather's, backwards), given the load of each dimension so far (seconds of traffic at its
// bandwidth), which it then adds the chunk's traffic to: `halves` 2 for an all-reduce (its
// reduce-scatter and its all-gather), 1 for a reduce-scatter or an all-gather alone. Loads equal
// to the picosecond count as equal (the default order decides).
std::vector<int> themis_order(const std::vector<DimensionGroup>& dims, std::vector<double>& loads,
                              uint64_t chunk_bytes, int halves = 2);

// The chunks' phases and each dimension's service order, from the load model: a dimension serves
// one phase at a time at its bandwidth, in the order the policy picks among the phases ready.
// Every chunk counts at the mean chunk size (the bytes over the splits, rounded down).
// Themis's loads count a phase's reduce-scatter and its all-gather (PAPERS.md section 2).
Schedule schedule_collective(const HierarchicalRequest& q);

// The collective's plan over the product of the dimensions' sizes (throws std::invalid_argument
// when an algorithm does not fit its dimension).
Plan build_hierarchical(const HierarchicalRequest& q);

// The time a collective of `bytes` (Chakra's comm_size: all-gather's is one rank's input) takes
// when every dimension is busy in parallel all along, in seconds: the bytes each NPU must send
// over the sum of the dimensions' bandwidths (the Themis paper's ideal; Libra's traffic model).
// Per dimension, ascending, S_0 being the buffer: all-reduce 2 S_d (n_d - 1) / n_d and
// reduce-scatter S_d (n_d - 1) / n_d, with S_{d+1} = S_d / n_d; all-gather the reduce-scatter of
// the gathered buffer; all-to-all S (n_d - 1) / n_d; broadcast and reduce S. Bandwidth
// utilisation is this over the measured time.
double ideal_seconds(Collective collective, const std::vector<DimensionGroup>& dims,
                     uint64_t bytes);

}  // namespace wafersim::collectives
