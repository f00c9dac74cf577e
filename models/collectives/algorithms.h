#pragma once
// The built-in collective algorithms. Each returns a validated Plan for one collective of `bytes`
// over `ranks` participants, split into `splits` chunks of which at most `active_chunks` run at
// once per rank.
#include <string>
#include <vector>

#include "models/collectives/plan.h"

namespace wafersim::collectives {

// Custom: an imported algorithm (MSCCL coll="custom") that promises nothing checkable beyond
// running to its end.
enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, Custom };
// Ring all-to-all is ASTRA-sim's: blocks relayed around the ring, one hop per message; Pairwise
// (all-to-all only) sends each block straight to its destination, one peer at a time at growing
// distance. InSwitch: in-network flows (Plan::flows) that a Fred fabric's switches reduce and
// multicast: an all-reduce is one flow per chunk, a reduce-scatter n serial reduce flows (flow j:
// everyone's block j to rank j), an all-gather n serial multicast flows (rank j's block to the
// others), a broadcast and a reduce one flow each (PAPERS.md section 1); no all-to-all.
// RouteTree (broadcast and reduce only): along the tree the fabric's routes from the root form
// (CollectiveRequest::tree_parents), every member relaying to the members after it, so the links
// carry what an in-network multicast tree would (a mesh's X-Y tree: PAPERS.md section 1, the I/O
// hotspot).
enum class Algorithm {
  Ring,
  Direct,
  HalvingDoubling,
  DoubleBinaryTree,
  Pairwise,
  InSwitch,
  RouteTree
};

const char* to_string(Collective c);
// all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce; std::invalid_argument.
Collective collective_from_string(const std::string& text);
const char* to_string(Algorithm a);
// Accepts wafersim names (ring, direct, halving_doubling, double_binary_tree, pairwise, in_switch)
// and ASTRA-sim's (ring, direct, halvingDoubling, doubleBinaryTree, oneRing, oneDirect,
// oneHalvingDoubling).
Algorithm algorithm_from_string(const std::string& text);  // throws std::invalid_argument

struct CollectiveRequest {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  int ranks = 0;
  // ALL_GATHER: each rank's input; the others: the whole buffer (Chakra's comm_size convention).
  uint64_t bytes = 0;
  int splits = 1;         // chunks the collective is cut into
  int active_chunks = 1;  // chunks in flight at once per rank (0 = all)
  int root = 0;           // Broadcast / Reduce
  // Ring all-reduce, reduce-scatter and all-gather: the positions in their order round the ring
  // (empty: 0, 1, ..., n - 1), and whether odd chunks go round the other way.
  std::vector<int> ring_order;
  bool ring_alternates = false;
  // RouteTree: each position's parent (-1 at the root), from the platform's routes.
  std::vector<int> tree_parents;
};

// Throws std::invalid_argument when the algorithm does not support the request (e.g.
// halving-doubling on a rank count that is not a power of two, or double binary tree for
// all-to-all).
Plan build_plan(const CollectiveRequest& request);

// A phase of a hierarchical collective (models/collectives/hierarchical.h): an algorithm run over
// group positions 0..n-1, which are the ranks `members` of a larger plan, on blocks
// [base, base + n x scale) of a chunk, its block j standing for blocks
// [base + j x scale, base + (j + 1) x scale). Its tags are offset by `tag_offset`.
struct GroupView {
  std::vector<int> members;
  uint32_t base = 0;
  uint32_t scale = 1;
  uint32_t tag_offset = 0;
};

// Appends the ops of `request` (its collective, algorithm and group size; all_reduce,
// reduce_scatter or all_gather) over `group` to chunk `chunk` of `plan`, in buffer `work` (the one
// that holds the whole chunk), the chunk holding `chunk_bytes` over plan.blocks_per_chunk blocks.
// An op without dependencies waits for its rank's `gates` entry (-1: none). Throws
// std::invalid_argument when the algorithm does not fit the group.
void write_group_phase(Plan& plan, const GroupView& group, const CollectiveRequest& request,
                       uint32_t chunk, uint64_t chunk_bytes, const std::vector<int64_t>& gates,
                       Buffer work = Buffer::Output);

}  // namespace wafersim::collectives
