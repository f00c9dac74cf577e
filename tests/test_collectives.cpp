// Collective plans: every algorithm produces a valid plan whose traffic matches the textbook
// formula.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/collectives/algorithms.h"
#include "models/collectives/symbolic.h"

using namespace wafersim::collectives;

namespace {

Plan plan(Collective c, Algorithm a, int n, uint64_t bytes, int splits = 1, int active = 1,
          int root = 0) {
  CollectiveRequest q;
  q.collective = c;
  q.algorithm = a;
  q.ranks = n;
  q.bytes = bytes;
  q.splits = splits;
  q.active_chunks = active;
  q.root = root;
  return build_plan(q);
}

}  // namespace

class AllReduceTraffic : public ::testing::TestWithParam<std::tuple<Algorithm, int>> {};

// Any bandwidth-optimal all-reduce sends 2(n-1)/n x S per rank: 2(n-1) x S in total.
TEST_P(AllReduceTraffic, SendsTwiceNMinusOneTimesTheBuffer) {
  auto [algorithm, n] = GetParam();
  const uint64_t bytes = 1 << 20;
  Plan p = plan(Collective::AllReduce, algorithm, n, bytes, 4);
  EXPECT_EQ(p.size(), n);
  EXPECT_EQ(p.bytes_sent(), 2ull * (n - 1) * bytes);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AllReduceTraffic,
                         ::testing::Values(std::make_tuple(Algorithm::Ring, 2),
                                           std::make_tuple(Algorithm::Ring, 5),
                                           std::make_tuple(Algorithm::Ring, 8),
                                           std::make_tuple(Algorithm::Direct, 3),
                                           std::make_tuple(Algorithm::Direct, 8),
                                           std::make_tuple(Algorithm::HalvingDoubling, 8),
                                           std::make_tuple(Algorithm::HalvingDoubling, 16),
                                           std::make_tuple(Algorithm::DoubleBinaryTree, 7),
                                           std::make_tuple(Algorithm::DoubleBinaryTree, 8)));

TEST(Collectives, AllGatherAndReduceScatterTraffic) {
  const uint64_t s = 3000;  // not a multiple of n: parts must still add up exactly
  for (int n : {2, 4, 7}) {
    // all-gather: comm_size is each rank's input; every rank receives the other n-1 inputs.
    EXPECT_EQ(plan(Collective::AllGather, Algorithm::Ring, n, s).bytes_sent(),
              1ull * n * (n - 1) * s);
    EXPECT_EQ(plan(Collective::AllGather, Algorithm::Direct, n, s).bytes_sent(),
              1ull * n * (n - 1) * s);
    EXPECT_EQ(plan(Collective::ReduceScatter, Algorithm::Ring, n, s).bytes_sent(),
              1ull * (n - 1) * s);
    EXPECT_EQ(plan(Collective::ReduceScatter, Algorithm::Direct, n, s).bytes_sent(),
              1ull * (n - 1) * s);
    EXPECT_EQ(plan(Collective::AllToAll, Algorithm::Direct, n, s).bytes_sent(), 1ull * (n - 1) * s);
    EXPECT_EQ(plan(Collective::AllToAll, Algorithm::Pairwise, n, s).bytes_sent(),
              1ull * (n - 1) * s);
    // Relayed around the ring: a block travels as many hops as its rank is away.
    EXPECT_EQ(plan(Collective::AllToAll, Algorithm::Ring, n, s).bytes_sent(),
              1ull * n * (n - 1) / 2 * s);
    EXPECT_EQ(plan(Collective::Broadcast, Algorithm::Ring, n, s).bytes_sent(), 1ull * (n - 1) * s);
    EXPECT_EQ(plan(Collective::Reduce, Algorithm::Direct, n, s).bytes_sent(), 1ull * (n - 1) * s);
  }
  EXPECT_EQ(plan(Collective::AllGather, Algorithm::HalvingDoubling, 8, s).bytes_sent(),
            8ull * 7 * s);
  EXPECT_EQ(plan(Collective::ReduceScatter, Algorithm::HalvingDoubling, 8, s * 8).bytes_sent(),
            7ull * s * 8);
}

TEST(Collectives, RingStepsFollowTheRing) {
  // 4096 bytes: rotational plan (one rank's ops); 4098: one plan per rank, blocks of 1,024 or
  // 1,025.
  for (uint64_t bytes : {4096u, 4098u}) {
    Plan p = plan(Collective::AllReduce, Algorithm::Ring, 4, bytes);
    EXPECT_EQ(p.rotation, bytes == 4096 ? 4 : 0);
    for (int r = 0; r < 4; ++r) {
      int sends = 0, recvs = 0, reduces = 0;
      uint64_t sent = 0;
      for (const Op& op : p.of(r).ops) {
        if (op.kind == OpKind::Send) {
          EXPECT_EQ(p.peer_of(r, op), (r + 1) % 4);
          EXPECT_GE(op.bytes, 1024u);
          EXPECT_LE(op.bytes, 1025u);
          sent += op.bytes;
          ++sends;
        }
        if (op.kind == OpKind::Recv) {
          EXPECT_EQ(p.peer_of(r, op), (r + 3) % 4);
          ++recvs;
        }
      }
      for (const DataRef& d : p.of(r).data) reduces += d.reduce;  // receives that combine
      EXPECT_EQ(sends, 6);                                        // 2(n-1) steps
      EXPECT_EQ(recvs, 6);
      EXPECT_EQ(reduces, 3);  // the reduce-scatter half
      EXPECT_GE(sent, 6 * 1024u);
    }
  }
}

TEST(Collectives, RingPlansOnEvenSizesHoldOneRank) {
  // The 1,024-NPU all-reduce of 1 GiB: one rank's 2 x 1,023 steps stand for all ranks.
  Plan p = plan(Collective::AllReduce, Algorithm::Ring, 1024, 1ull << 30);
  EXPECT_EQ(p.rotation, 1024);
  ASSERT_EQ(p.ranks.size(), 1u);
  EXPECT_EQ(p.size(), 1024);
  EXPECT_EQ(p.bytes_sent(), 2ull * 1023 * (1ull << 30));
  EXPECT_EQ(p.peer_of(1023, p.of(1023).ops[0]), 0) << "the last rank sends to the first";
  // Children are the reverse of dependencies.
  const RankPlan& rp = p.of(0);
  size_t edges = 0;
  for (uint32_t k = 0; k < rp.ops.size(); ++k)
    for (uint32_t child : rp.children(k)) {
      const DepRange deps = rp.deps(child);
      EXPECT_NE(std::find(deps.begin(), deps.end(), k), deps.end());
      ++edges;
    }
  EXPECT_EQ(edges, rp.dep_list.size());
  // Halving-doubling, broadcast, and uneven blocks keep one plan per rank.
  EXPECT_EQ(plan(Collective::AllReduce, Algorithm::HalvingDoubling, 8, 1 << 20).rotation, 0);
  EXPECT_EQ(plan(Collective::Broadcast, Algorithm::Ring, 8, 1 << 20).rotation, 0);
  EXPECT_EQ(plan(Collective::AllReduce, Algorithm::Ring, 8, (1 << 20) + 1).rotation, 0);
  EXPECT_EQ(plan(Collective::AllReduce, Algorithm::Ring, 8, 1 << 20, 3).rotation, 0)
      << "3 chunks of 2^20 bytes are not all multiples of 8";
}

TEST(Collectives, ValidationChecksRotationalPlans) {
  Plan p = plan(Collective::AllReduce, Algorithm::Ring, 4, 4096);
  ASSERT_EQ(p.rotation, 4);
  for (Op& op : p.ranks[0].ops)
    if (op.kind == OpKind::Recv) {
      op.tag += 1000;  // no rank sends with this tag
      break;
    }
  EXPECT_THROW(p.validate(), std::logic_error);
}

TEST(Collectives, ActiveChunksGateLaterChunks) {
  Plan p = plan(Collective::AllReduce, Algorithm::Ring, 4, 4096, 3, 1);
  // Each chunk ends with a Nop; with one active chunk, chunk c's first ops wait for chunk c-1's
  // Nop.
  const auto& ops = p.ranks[0].ops;
  std::vector<uint32_t> ends;
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::Nop) ends.push_back(i);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_TRUE(p.ranks[0].deps(0).empty()) << "the first chunk starts ungated";
  const DepRange first_of_second = p.ranks[0].deps(ends[0] + 1);
  ASSERT_EQ(first_of_second.size(), 1u);
  EXPECT_EQ(first_of_second[0], ends[0]);
  // All chunks in flight: no gate.
  Plan free = plan(Collective::AllReduce, Algorithm::Ring, 4, 4096, 3, 0);
  uint32_t first_nop = 0;
  while (free.ranks[0].ops[first_nop].kind != OpKind::Nop) ++first_nop;
  EXPECT_TRUE(free.ranks[0].deps(first_nop + 1).empty());
}

TEST(Collectives, UnsupportedCombinationsAreRefused) {
  EXPECT_THROW(plan(Collective::AllReduce, Algorithm::HalvingDoubling, 6, 1024),
               std::invalid_argument);
  EXPECT_THROW(plan(Collective::AllToAll, Algorithm::DoubleBinaryTree, 8, 1024),
               std::invalid_argument);
  EXPECT_THROW(plan(Collective::AllReduce, Algorithm::Ring, 8, 0), std::invalid_argument);
  EXPECT_THROW(algorithm_from_string("spiral"), std::invalid_argument);
  EXPECT_EQ(algorithm_from_string("halvingDoubling"), Algorithm::HalvingDoubling);
}

TEST(Collectives, ValidationCatchesUnmatchedSends) {
  Plan p = plan(Collective::AllReduce, Algorithm::Ring, 3, 301);  // uneven: a plan per rank
  p.ranks[1].add({OpKind::Send, 2, 10, 999}, {});
  EXPECT_THROW(p.validate(), std::logic_error);
}

TEST(Collectives, ValidationCatchesOrphanReceivesAndSizeMismatches) {
  Plan orphan = plan(Collective::AllReduce, Algorithm::Ring, 3, 301);
  orphan.ranks[2].add({OpKind::Recv, 0, 10, 999}, {});
  EXPECT_THROW(orphan.validate(), std::logic_error);
  Plan sizes = plan(Collective::AllReduce, Algorithm::Ring, 3, 301);
  for (Op& op : sizes.ranks[1].ops)
    if (op.kind == OpKind::Recv) {
      op.bytes += 1;
      break;
    }
  try {
    sizes.validate();
    FAIL() << "expected a size mismatch";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("bytes but the receive expects"), std::string::npos)
        << e.what();
  }
}

// More dataset splits than bytes allow: the plan takes fewer chunks rather than sending empty
// blocks, and still moves every byte (the ring all-reduce sends 2(n-1)/n of the buffer per rank).
TEST(Collectives, SplitsBeyondTheBytesMakeNoEmptyMessages) {
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllToAll,
                       Collective::AllGather, Collective::Broadcast})
    for (uint64_t bytes : {4ull, 5ull, 11ull, 1000ull}) {
      CollectiveRequest q;
      q.collective = c;
      q.algorithm = c == Collective::AllToAll ? Algorithm::Direct : Algorithm::Ring;
      q.ranks = 4;
      q.bytes = bytes;
      q.splits = 4096;
      Plan p = build_plan(q);
      for (int r = 0; r < p.size(); ++r)
        for (const Op& op : p.of(r).ops)
          if (op.kind == OpKind::Send) {
            EXPECT_GT(op.bytes, 0u) << to_string(c) << " of " << bytes << " bytes, rank " << r;
          }
      if (c == Collective::AllReduce) {
        EXPECT_EQ(p.bytes_sent(), 2 * 3 * bytes) << bytes;
      }
    }
}

// Every built-in algorithm computes its collective, on abstract data (models/collectives/symbolic):
// each kind it supports, rank counts with and without a power of two, one chunk and several,
// sizes that divide evenly (rotational plans) and sizes that do not.
TEST(Symbolic, EveryBuiltInPlanComputesItsCollective) {
  const Collective kinds[] = {Collective::AllReduce, Collective::ReduceScatter,
                              Collective::AllGather, Collective::AllToAll,
                              Collective::Broadcast, Collective::Reduce};
  const Algorithm algorithms[] = {Algorithm::Ring,
                                  Algorithm::Direct,
                                  Algorithm::HalvingDoubling,
                                  Algorithm::DoubleBinaryTree,
                                  Algorithm::Pairwise,
                                  Algorithm::InSwitch};
  int checked = 0;
  for (Collective c : kinds)
    for (Algorithm a : algorithms)
      for (int n : {2, 3, 4, 5, 7, 8, 16})
        for (int splits : {1, 3})
          for (uint64_t bytes : {4096ull * 3, 4099ull})
            for (int root : {0, n - 1}) {
              if ((c != Collective::Broadcast && c != Collective::Reduce) && root != 0) continue;
              Plan p;
              try {
                p = plan(c, a, n, bytes, splits, 1, root);
              } catch (const std::invalid_argument&) {
                continue;  // the algorithm does not implement this kind or rank count
              }
              EXPECT_EQ(check_plan(p, c, root), "")
                  << to_string(a) << " " << to_string(c) << " n=" << n << " splits=" << splits
                  << " bytes=" << bytes << " root=" << root;
              ++checked;
            }
  EXPECT_GT(checked, 300);
}

TEST(Symbolic, ALargeRotationalRingIsChecked) {
  CollectiveRequest q;
  q.ranks = 256;
  q.bytes = 1ull << 30;
  q.splits = 2;
  Plan p = build_plan(q);
  ASSERT_EQ(p.rotation, 256);
  EXPECT_EQ(check_plan(p, Collective::AllReduce), "");
}

// Broken plans are refused with the rank, the op and the data named.
TEST(Symbolic, BrokenPlansAreNamed) {
  CollectiveRequest q;
  q.ranks = 4;
  q.bytes = 4099;  // one plan per rank
  Plan p = build_plan(q);
  // Rank 1 forgets to combine what it receives first: the block's sum misses a rank.
  Plan missing_reduce = p;
  for (DataRef& d : missing_reduce.ranks[1].data)
    if (d.reduce) {
      d.reduce = false;
      break;
    }
  EXPECT_NE(check_plan(missing_reduce, Collective::AllReduce).find("ranks' parts in block"),
            std::string::npos)
      << check_plan(missing_reduce, Collective::AllReduce);
  // Rank 2 sends a block it does not hold yet (its first send names its successor's block).
  Plan early = p;
  for (size_t k = 0; k < early.ranks[2].ops.size(); ++k)
    if (early.ranks[2].ops[k].kind == OpKind::Send) {
      early.ranks[2].data[k].src_first = (early.ranks[2].data[k].src_first + 2) % 4;
      break;
    }
  const std::string problem = check_plan(early, Collective::AllReduce);
  EXPECT_NE(problem.find("rank "), std::string::npos) << problem;
  EXPECT_NE(problem.find("block "), std::string::npos) << problem;
  // A reduce-scatter is not an all-reduce: its output is a quarter of the data.
  q.collective = Collective::ReduceScatter;
  EXPECT_NE(check_plan(build_plan(q), Collective::AllReduce).find("buffers of the same size"),
            std::string::npos);
  // An all-gather plan that leaves a block behind.
  q.collective = Collective::AllGather;
  Plan short_gather = build_plan(q);
  for (size_t k = short_gather.ranks[0].ops.size(); k-- > 0;)
    if (short_gather.ranks[0].ops[k].kind == OpKind::Recv) {
      short_gather.ranks[0].data[k].dst = Buffer::Scratch;
      short_gather.scratch_blocks = 4;
      break;
    }
  EXPECT_NE(check_plan(short_gather, Collective::AllGather).find("promises a part of rank"),
            std::string::npos)
      << check_plan(short_gather, Collective::AllGather);
  // A rank that adds the full sum it receives to its own part counts itself twice.
  Plan twice = p;
  for (size_t k = twice.ranks[1].ops.size(); k-- > 0;)
    if (twice.ranks[1].ops[k].kind == OpKind::Recv) {  // the last: all-gather's, the full sum
      DataRef& d = twice.ranks[1].data[k];
      d.reduce = true;
      d.src = d.dst;
      d.src_first = d.dst_first;
      break;
    }
  EXPECT_NE(check_plan(twice, Collective::AllReduce).find("counts a rank twice in block"),
            std::string::npos)
      << check_plan(twice, Collective::AllReduce);
  // A plan whose buffers are past what the proof can number is refused, not allocated.
  Plan huge = p;
  huge.chunks = 256;
  huge.input_blocks = huge.output_blocks = huge.blocks_per_chunk = UINT32_MAX;
  EXPECT_NE(check_plan(huge, Collective::AllReduce).find("too large to prove"), std::string::npos)
      << check_plan(huge, Collective::AllReduce);
  // A receive whose send never comes: the plan deadlocks, and the executor says where.
  Plan orphan = p;
  for (Op& op : orphan.ranks[3].ops)
    if (op.kind == OpKind::Recv) {
      op.tag += 1000;
      break;
    }
  EXPECT_NE(check_plan(orphan, Collective::AllReduce).find("never runs: the plan deadlocks"),
            std::string::npos)
      << check_plan(orphan, Collective::AllReduce);
}

// In-network flows (Algorithm::InSwitch): the shape PAPERS.md section 1 gives each collective,
// and the data each rank sends and receives: D per rank for an all-reduce, where a ring sends
// 2(n - 1)/n x D.
TEST(InSwitch, EachCollectiveIsItsFlows) {
  const int n = 5;
  const Plan ar = plan(Collective::AllReduce, Algorithm::InSwitch, n, 5000, 2);
  ASSERT_EQ(ar.flows.size(), 2u);  // one per chunk
  for (const FlowSpec& f : ar.flows) {
    EXPECT_EQ(f.inputs, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(f.outputs, f.inputs);
  }
  for (int r = 0; r < n; ++r) {
    uint64_t bytes = 0;
    for (const Op& op : ar.ranks[r].ops)
      if (op.kind == OpKind::Flow) bytes += op.bytes;
    EXPECT_EQ(bytes, 5000u) << "rank " << r;
  }
  // Reduce-scatter: n serial reduce flows per chunk, flow j ending at rank j; all-gather: n
  // serial multicasts, rank j's block to the others.
  const Plan rs = plan(Collective::ReduceScatter, Algorithm::InSwitch, n, 5000);
  const Plan ag = plan(Collective::AllGather, Algorithm::InSwitch, n, 1000);
  ASSERT_EQ(rs.flows.size(), 5u);
  ASSERT_EQ(ag.flows.size(), 5u);
  for (int j = 0; j < n; ++j) {
    EXPECT_EQ(rs.flows[j].outputs, std::vector<int>{j});
    EXPECT_EQ(rs.flows[j].inputs.size(), 5u);
    EXPECT_EQ(ag.flows[j].inputs, std::vector<int>{j});
    EXPECT_EQ(ag.flows[j].outputs.size(), 4u);
    EXPECT_FALSE(ag.flows[j].has_output(j));
  }
  for (int r = 0; r < n; ++r)  // in flow order, and none waits for the one before
    for (uint32_t k = 0; k < 5; ++k) {
      ASSERT_EQ(rs.ranks[r].ops[k].kind, OpKind::Flow);
      EXPECT_EQ(rs.ranks[r].ops[k].peer, static_cast<int>(k));
      EXPECT_TRUE(rs.ranks[r].deps(k).empty());
    }
  const Plan bc = plan(Collective::Broadcast, Algorithm::InSwitch, n, 100, 1, 1, 3);
  EXPECT_EQ(bc.flows[0].inputs, std::vector<int>{3});
  EXPECT_EQ(bc.flows[0].outputs, (std::vector<int>{0, 1, 2, 4}));
  const Plan rd = plan(Collective::Reduce, Algorithm::InSwitch, n, 100, 1, 1, 3);
  EXPECT_EQ(rd.flows[0].outputs, std::vector<int>{3});
  EXPECT_THROW(plan(Collective::AllToAll, Algorithm::InSwitch, n, 5000), std::invalid_argument);
  EXPECT_EQ(algorithm_from_string("in_switch"), Algorithm::InSwitch);
}

TEST(InSwitch, ValidationAndTheSymbolicExecutorCatchBrokenFlows) {
  const Plan good = plan(Collective::AllReduce, Algorithm::InSwitch, 4, 4096);
  EXPECT_EQ(check_plan(good, Collective::AllReduce), "");
  auto refused = [](Plan p) {
    try {
      p.validate();
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  Plan no_member = good;  // rank 3 gives and takes nothing, but has an op in the flow
  no_member.flows[0].inputs.pop_back();
  no_member.flows[0].outputs.pop_back();
  EXPECT_EQ(refused(no_member),
            "rank 3 op 0 takes part in flow 0, which neither takes from nor gives to it");
  Plan missing = good;  // rank 2 is a member without an op
  missing.ranks[2].ops[0].kind = OpKind::Nop;
  EXPECT_EQ(refused(missing), "rank 2 has no op in flow 0, of which it is a member");
  Plan sizes = good;
  sizes.ranks[1].ops[0].bytes = 1;
  EXPECT_EQ(refused(sizes), "rank 1 op 0 moves 1 bytes in flow 0, another member 4096");
  Plan empty = good;
  empty.flows[0].outputs.clear();
  for (auto& rp : empty.ranks) rp.ops[0].kind = OpKind::Nop;
  EXPECT_EQ(refused(empty), "flow 0 needs at least one input and one output");
  // Rank 1 gives but no longer takes: it ends with its own part, not the sum.
  Plan short_output = good;
  auto& outs = short_output.flows[0].outputs;
  outs.erase(std::find(outs.begin(), outs.end(), 1));
  const std::string problem = check_plan(short_output, Collective::AllReduce);
  EXPECT_NE(problem.find("rank 1 ends with the sum of 1 ranks' parts"), std::string::npos)
      << problem;
}

// A ring in a given order, odd chunks the other way round: every rank sends to its successor in
// the order (its predecessor for odd chunks), and the plan still computes its collective, with
// uneven blocks; an order that is not a permutation is refused.
TEST(RingOrder, FollowsTheOrderAndAlternatesDirections) {
  const std::vector<int> order = {0, 1, 2, 5, 4, 3};  // a cycle of a 3 x 2 grid
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather}) {
    CollectiveRequest q;
    q.collective = c;
    q.algorithm = Algorithm::Ring;
    q.ranks = 6;
    q.bytes = 6 * 1000 + 7;
    q.splits = 2;
    q.active_chunks = 2;
    q.ring_order = order;
    q.ring_alternates = true;
    const Plan p = build_plan(q);
    ASSERT_FALSE(p.held_once()) << to_string(c);
    EXPECT_EQ(check_plan(p, c), "") << to_string(c);
    for (int place = 0; place < 6; ++place) {
      const int r = order[place];
      const int next = order[(place + 1) % 6], prev = order[(place + 5) % 6];
      std::vector<int> sent_to;
      for (const Op& op : p.of(r).ops)
        if (op.kind == OpKind::Send) sent_to.push_back(p.peer_of(r, op));
      ASSERT_EQ(sent_to.size(), c == Collective::AllReduce ? 20u : 10u) << to_string(c);
      const size_t half = sent_to.size() / 2;  // chunk 0's sends, then chunk 1's
      for (size_t k = 0; k < sent_to.size(); ++k)
        EXPECT_EQ(sent_to[k], k < half ? next : prev) << to_string(c) << " rank " << r;
    }
    q.ring_order = {0, 1, 2, 3, 3, 5};
    EXPECT_THROW(build_plan(q), std::invalid_argument);
  }
}
