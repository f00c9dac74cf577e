// Hierarchical all-reduce over several dimensions and the Themis scheduler
// (models/collectives/hierarchical), against hand-worked expectations.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/collectives/hierarchical.h"
#include "models/collectives/layout.h"
#include "models/collectives/symbolic.h"

namespace wafersim::collectives {
namespace {

using Dims = std::vector<DimensionGroup>;

// Every dimension order, queue policy and algorithm mix computes an all-reduce, and the two
// halves alone a reduce-scatter and an all-gather: the symbolic executor follows abstract values
// through the plan and checks every rank's output (a reduce-scatter's share and an all-gather's
// input where Plan::slot_order puts them).
TEST(Hierarchical, EveryOrderAndPolicyComputesItsCollective) {
  const std::vector<Dims> platforms = {
      {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}},
      {{2, Algorithm::HalvingDoubling, 200}, {3, Algorithm::Direct, 100}, {2, Algorithm::Ring, 50}},
      {{3, Algorithm::Direct, 175}, {4, Algorithm::Ring, 100}, {2, Algorithm::HalvingDoubling, 50}},
      {{2, Algorithm::Ring, 100}, {1, Algorithm::Ring, 100}, {4, Algorithm::HalvingDoubling, 25}},
  };
  for (Collective collective :
       {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather})
    for (const Dims& dims : platforms)
      for (DimensionOrder order :
           {DimensionOrder::AllReduceEach, DimensionOrder::Ascending, DimensionOrder::Themis})
        for (QueuePolicy policy : {QueuePolicy::Fifo, QueuePolicy::SmallestChunkFirst})
          for (int active : {0, 1, 2}) {
            HierarchicalRequest q;
            q.collective = collective;
            q.dims = Dims(dims);  // a copy assigned into an empty vector trips GCC 12's -Wnonnull
            for (DimensionGroup& d : q.dims) d.active_chunks = active;
            q.splits = 5;
            q.order = order;
            q.policy = policy;
            // Blocks of unequal and of equal sizes; position 0's ops alone (Plan::symmetry) where
            // the order allows, and every position's written out.
            for (uint64_t bytes : {uint64_t{100003}, uint64_t{5 * 96 * 211}})
              for (bool share : {true, false}) {
                q.bytes = bytes;
                q.share_positions = share;
                const Plan plan = build_hierarchical(q);
                EXPECT_EQ(check_plan(plan, collective), "")
                    << to_string(collective) << " " << plan.algorithm << " active " << active
                    << " bytes " << bytes << " symmetric " << plan.symmetry.positions;
              }
          }
}

// A plan that holds position 0's ops alone (Plan::symmetry) stands for the plan written out for
// every position: the same ops with the same peers, sizes, tags, dependencies and blocks,
// position by position. Rings whose odd chunks go round the other way, direct exchanges and
// halving-doubling butterflies (which pair positions by exclusive or), in Themis's orders.
TEST(Hierarchical, SymmetricPlanIsEveryPositionsPlanMoved) {
  const std::vector<Dims> platforms = {
      {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}},
      {{2, Algorithm::HalvingDoubling, 200}, {3, Algorithm::Direct, 100}, {4, Algorithm::Ring, 50}},
      {{3, Algorithm::Direct, 175}, {4, Algorithm::HalvingDoubling, 25}, {1, Algorithm::Ring, 9}},
  };
  int compared = 0;
  for (Collective collective :
       {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather})
    for (const Dims& dims : platforms)
      for (DimensionOrder order : {DimensionOrder::Ascending, DimensionOrder::Themis})
        for (int active : {0, 1})
          for (uint64_t odd : {0, 7, 4999}) {  // bytes beyond equal blocks
            HierarchicalRequest q;
            q.collective = collective;
            q.dims = Dims(dims);
            for (DimensionGroup& d : q.dims) d.active_chunks = active;
            int ranks = 1;
            for (const DimensionGroup& d : dims) ranks *= d.size;
            q.splits = 6;
            q.bytes = static_cast<uint64_t>(ranks) * 6 * 1000 + odd;
            q.order = order;
            q.policy = QueuePolicy::SmallestChunkFirst;
            const Plan shared = build_hierarchical(q);
            q.share_positions = false;
            const Plan full = build_hierarchical(q);
            const std::string what = std::string(to_string(collective)) + " " + shared.algorithm +
                                     " active " + std::to_string(active) + " bytes " +
                                     std::to_string(q.bytes);
            ASSERT_EQ(shared.symmetry.positions, ranks) << what;
            ASSERT_EQ(shared.ranks.size(), 1u) << what;
            ASSERT_EQ(full.ranks.size(), static_cast<size_t>(ranks)) << what;
            EXPECT_EQ(shared.bytes_sent(), full.bytes_sent()) << what;
            EXPECT_EQ(check_plan(shared, collective), "") << what;
            const Layout in_shared(shared, collective, 0), in_full(full, collective, 0);
            std::vector<uint32_t> a, b;
            for (int p = 0; p < ranks; ++p) {
              const RankPlan &s = shared.of(p), &f = full.of(p);
              ASSERT_EQ(s.ops.size(), f.ops.size()) << what << " position " << p;
              for (uint32_t k = 0; k < s.ops.size(); ++k) {
                const std::string at =
                    what + " position " + std::to_string(p) + " op " + std::to_string(k);
                const Op &x = s.ops[k], &y = f.ops[k];
                ASSERT_EQ(x.kind, y.kind) << at;
                if (x.kind == OpKind::Send || x.kind == OpKind::Recv) {
                  ASSERT_EQ(shared.peer_of(p, x), full.peer_of(p, y)) << at;
                }
                ASSERT_EQ(shared.bytes_of(p, k), full.bytes_of(p, k)) << at;
                ASSERT_EQ(x.tag, y.tag) << at;
                const DepRange dx = s.deps(k), dy = f.deps(k);
                ASSERT_EQ(std::vector<uint32_t>(dx.begin(), dx.end()),
                          std::vector<uint32_t>(dy.begin(), dy.end()))
                    << at;
                ASSERT_EQ(s.data[k].reduce, f.data[k].reduce) << at;
                for (Side side : {Side::Source, Side::Destination}) {
                  ASSERT_EQ(s.data[k].buffer(side), f.data[k].buffer(side)) << at;
                  ASSERT_EQ(in_shared.blocks(p, k, side, a), "") << at;
                  ASSERT_EQ(in_full.blocks(p, k, side, b), "") << at;
                  // The same blocks; in another order where moving permutes a range's lower digits,
                  // which it does alike at both ends of a message.
                  std::sort(a.begin(), a.end());
                  std::sort(b.begin(), b.end());
                  ASSERT_EQ(a, b) << at;
                }
              }
            }
            ++compared;
          }
  EXPECT_EQ(compared, 3 * 3 * 2 * 2 * 3);
}

// Moving a list of blocks at once (the plan proof's path) moves each as move_block does: rings
// whose odd chunks go the other way, direct exchanges, halving-doubling's exclusive or; in a row
// (each block's digits from the last one's, carrying over), and in runs that jump and wrap.
TEST(Hierarchical, MovingBlocksTogetherMovesEachAlike) {
  HierarchicalRequest q;
  q.dims = {
      {2, Algorithm::HalvingDoubling, 200}, {3, Algorithm::Direct, 100}, {4, Algorithm::Ring, 50}};
  q.splits = 2;
  q.bytes = 24 * 2 * 1000;
  const Plan plan = build_hierarchical(q);
  ASSERT_EQ(plan.symmetry.positions, 24);
  int moved = 0;
  for (int p = 0; p < 24; ++p)
    for (uint32_t c = 0; c < plan.chunks; ++c) {
      std::vector<uint32_t> blocks(plan.blocks_per_chunk);
      for (uint32_t j = 0; j < blocks.size(); ++j) blocks[j] = j;
      plan.symmetry.move_blocks(p, c, blocks);
      for (uint32_t j = 0; j < blocks.size(); ++j, ++moved)
        ASSERT_EQ(blocks[j], plan.symmetry.move_block(p, c, j))
            << "position " << p << " chunk " << c << " block " << j;
      // Runs of 3 every 7 blocks, wrapping round the chunk, and a block alone between them.
      const auto n = plan.blocks_per_chunk;
      std::vector<uint32_t> runs;
      for (uint32_t start = 0; start < 2 * n; start += 7) {
        for (uint32_t t = 0; t < 3; ++t) runs.push_back((start + t) % n);
        runs.push_back((start * 5) % n);
      }
      std::vector<uint32_t> moved_runs = runs;
      plan.symmetry.move_blocks(p, c, moved_runs);
      for (size_t t = 0; t < runs.size(); ++t, ++moved)
        ASSERT_EQ(moved_runs[t], plan.symmetry.move_block(p, c, runs[t]))
            << "position " << p << " chunk " << c << " block " << runs[t];
    }
  EXPECT_EQ(moved, 24 * 2 * (24 + 7 * 4));
}

// Position 0's plan stands for all only where it can: an all-to-all (its blocks transpose) and
// an all-reduce in each dimension (every phase works on the whole chunk) write every position's
// ops. Blocks of unequal sizes are sized where they run.
TEST(Hierarchical, WritesEveryPositionWhereItsPlanDiffers) {
  HierarchicalRequest q;
  q.dims = {{4, Algorithm::Ring, 100}, {2, Algorithm::Direct, 50}};
  q.splits = 2;
  q.bytes = 8 * 2 * 64;
  EXPECT_EQ(build_hierarchical(q).symmetry.positions, 8);
  EXPECT_TRUE(build_hierarchical(q).symmetry.uneven_chunk_bytes.empty());
  q.bytes += 3;  // chunks of 513 and 514 bytes: blocks of 64 and 65
  const Plan uneven = build_hierarchical(q);
  EXPECT_EQ(uneven.symmetry.positions, 8);
  EXPECT_EQ(uneven.symmetry.uneven_chunk_bytes, (std::vector<uint64_t>{514, 513}));
  EXPECT_EQ(uneven.ranks.size(), 1u);
  q.bytes -= 3;
  q.order = DimensionOrder::AllReduceEach;
  EXPECT_EQ(build_hierarchical(q).symmetry.positions, 0);
  q.order = DimensionOrder::Ascending;
  q.dims[0].algorithm = Algorithm::Direct;
  q.collective = Collective::AllToAll;
  EXPECT_EQ(build_hierarchical(q).symmetry.positions, 0);
}

// A reduce-scatter over Ring 4 x Ring 2 goes up the dimensions: rank r = (x, y) ends with the block
// numbered by its places, dimension 0 the most significant digit: 2x + y (chunk 0, whose rings
// run forwards), so rank 1 = (1, 0) holds position 2 and rank 4 = (0, 1) position 1.
TEST(Hierarchical, ReduceScatterSharesSitWhereTheDimensionsPutThem) {
  HierarchicalRequest q;
  q.collective = Collective::ReduceScatter;
  q.dims = {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}};
  q.bytes = 1 << 20;
  const Plan plan = build_hierarchical(q);
  ASSERT_EQ(plan.slot_order.size(), 8u);
  EXPECT_EQ(plan.slot_order, (std::vector<uint32_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(plan.input_blocks, 8u);
  EXPECT_EQ(plan.output_blocks, 1u);
  EXPECT_EQ(check_plan(plan, Collective::ReduceScatter), "");
  // Read with rank r's share at position r, the same plan is wrong.
  Plan at_ranks = plan;
  at_ranks.slot_order.clear();
  EXPECT_NE(check_plan(at_ranks, Collective::ReduceScatter), "");
  // Each NPU sends S 3/4 over dimension 0 and S/4 1/2 over dimension 1.
  const double per_npu = q.bytes * 3.0 / 4 + q.bytes / 4.0 / 2;
  EXPECT_EQ(plan.bytes_sent(), static_cast<uint64_t>(per_npu * 8));
}

// Bytes each NPU sends: per dimension, a reduce-scatter and an all-gather of the data held then,
// 2 S_d (n_d - 1) / n_d, S shrinking by each size (the Libra / ASTRA-sim traffic formula).
TEST(Hierarchical, SendsTheTrafficOfTheFormula) {
  HierarchicalRequest q;
  q.dims = {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}, {2, Algorithm::Direct, 25}};
  q.bytes = 1 << 20;
  q.splits = 4;
  const Plan plan = build_hierarchical(q);
  const double s0 = q.bytes, s1 = s0 / 4, s2 = s1 / 2;
  const double per_npu = 2 * s0 * 3 / 4 + 2 * s1 * 1 / 2 + 2 * s2 * 1 / 2;
  EXPECT_EQ(plan.bytes_sent(), static_cast<uint64_t>(per_npu * 16));
}

// Themis on three dimensions of bandwidths 100, 50 and 25 GB/s, each of 2 NPUs, chunks of 1 MB.
// A dimension's load counts the chunk's reduce-scatter and its all-gather (as much again).
// Chunk 0: all loads 0, the gap is nothing, ascending (0, 1, 2); it adds 2 x 0.5 MB / 100 GB/s =
// 10 us to dim 0, 2 x 0.25 MB / 50 = 10 us to dim 1, 2 x 0.125 MB / 25 = 10 us to dim 2. Chunk 1:
// equal loads, ascending again. So the loads stay equal and the order stays ascending.
// With bandwidths 25, 50, 100 instead: chunk 0 ascending adds 40 us to dim 0, 10 us to dim 1,
// 2.5 us to dim 2. Chunk 1: least loaded first: dim 2 (2.5), dim 1 (10), dim 0 (40); the gap of
// 37.5 us lets dim 2 move 37.5 us x 100 GB/s / (1/2) = 7.5 MB >= 1 MB / 16: order (2, 1, 0).
TEST(Themis, OrdersLeastLoadedFirstAboveTheThreshold) {
  const uint64_t mb = 1000000;
  {
    Dims dims = {{2, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}, {2, Algorithm::Ring, 25}};
    std::vector<double> loads(3, 0.0);
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{0, 1, 2}));
    EXPECT_NEAR(loads[0], 10e-6, 1e-12);
    EXPECT_NEAR(loads[1], 10e-6, 1e-12);
    EXPECT_NEAR(loads[2], 10e-6, 1e-12);
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{0, 1, 2}));
  }
  {
    Dims dims = {{2, Algorithm::Ring, 25}, {2, Algorithm::Ring, 50}, {2, Algorithm::Ring, 100}};
    std::vector<double> loads(3, 0.0);
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{0, 1, 2}));
    EXPECT_NEAR(loads[0], 40e-6, 1e-12);
    EXPECT_NEAR(loads[1], 10e-6, 1e-12);
    EXPECT_NEAR(loads[2], 2.5e-6, 1e-12);
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{2, 1, 0}));
    // Chunk 1 went 2, 1, 0: dim 2 took 2 x 0.5 MB (10 us), dim 1 2 x 0.25 MB (10 us), dim 0
    // 2 x 0.125 MB (10 us).
    EXPECT_NEAR(loads[0], 50e-6, 1e-12);
    EXPECT_NEAR(loads[1], 20e-6, 1e-12);
    EXPECT_NEAR(loads[2], 12.5e-6, 1e-12);
  }
}

// Below the threshold the default order stays: loads 0 and 1 ns apart on two dimensions of
// 100 GB/s and 2 NPUs: the gap moves 1 ns x 100 GB/s / (1/2) = 200 bytes < 16 KB / 16.
TEST(Themis, KeepsTheDefaultOrderBelowAChunkOverSixteen) {
  Dims dims = {{2, Algorithm::Ring, 100}, {2, Algorithm::Ring, 100}};
  std::vector<double> loads = {1e-9, 0.0};
  EXPECT_EQ(themis_order(dims, loads, 16384), (std::vector<int>{0, 1}));
  std::vector<double> far = {1e-6, 0.0};  // 200 KB: above
  EXPECT_EQ(themis_order(dims, far, 16384), (std::vector<int>{1, 0}));
}

// A ring of 4 NPUs at 100 GB/s per NPU (50 per direction) with one chunk phase at a time uses one
// direction: a 1 MB chunk's reduce-scatter and all-gather load it 2 x 0.75 MB / 50 GB/s = 30 us;
// with 2 in flight (both directions) 15 us. A switch of 2 at 100 GB/s takes 2 x 0.5 x 0.25 MB /
// 100 = 2.5 us either way. So with one chunk at a time the next chunk goes to the switch first.
TEST(Themis, WeighsARingByTheDirectionsItsChunksCanUse) {
  const uint64_t mb = 1000000;
  for (int active : {1, 2}) {
    Dims dims = {{4, Algorithm::Ring, 100, active}, {2, Algorithm::HalvingDoubling, 100, active}};
    std::vector<double> loads(2, 0.0);
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{0, 1}));
    EXPECT_NEAR(loads[0], active == 1 ? 30e-6 : 15e-6, 1e-12) << active;
    EXPECT_NEAR(loads[1], 2.5e-6, 1e-12) << active;
    EXPECT_EQ(themis_order(dims, loads, mb), (std::vector<int>{1, 0})) << active;
  }
}

// Dimension 0 of 2 NPUs and dimension 1 of 4, both 1 GB/s per NPU, four chunks of 8 KiB in
// ascending order. Phase times (1 KiB = 1.024 us): reduce-scatter on dim 0 sends 4 KiB (4.096 us),
// on dim 1 3 KiB (3.072 us); the all-gather on dim 1 from 1 KiB sends 3 KiB, on dim 0 from
// 4 KiB 4 KiB. Dim 0 serves the reduce-scatters of chunks 0, 1, 2 until 12.288 us. Dim 1 serves
// chunk 0's reduce-scatter [4.096, 7.168] and all-gather [7.168, 10.240], then chunk 1's
// [10.240, 13.312] and [13.312, 16.384]. At 12.288 dim 0 has chunk 3's reduce-scatter (8 KiB,
// ready at 0) and chunk 0's all-gather (4 KiB, ready at 10.240) waiting: FIFO takes the
// reduce-scatter, SCF the all-gather; at 16.384 SCF again prefers chunk 1's all-gather (4 KiB,
// ready just then) to chunk 3's reduce-scatter.
TEST(Themis, SmallestChunkFirstServesSmallPhasesBeforeLargeOnes) {
  HierarchicalRequest q;
  q.dims = {{2, Algorithm::HalvingDoubling, 1}, {4, Algorithm::HalvingDoubling, 1}};
  q.bytes = 4 * 8192;
  q.splits = 4;
  q.order = DimensionOrder::Ascending;
  q.policy = QueuePolicy::Fifo;
  const Schedule fifo = schedule_collective(q);
  q.policy = QueuePolicy::SmallestChunkFirst;
  const Schedule scf = schedule_collective(q);
  using Served = std::vector<std::pair<int, int>>;
  // (chunk, phase): phase 0 = RS dim 0, 1 = RS dim 1, 2 = AG dim 1, 3 = AG dim 0.
  EXPECT_EQ(fifo.served[0],
            (Served{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 3}, {1, 3}, {2, 3}, {3, 3}}));
  EXPECT_EQ(scf.served[0],
            (Served{{0, 0}, {1, 0}, {2, 0}, {0, 3}, {1, 3}, {3, 0}, {2, 3}, {3, 3}}));
}

// Utilisation's ideal: 2 dimensions, 4 x 100 GB/s and 2 x 50 GB/s, 1 GB: traffic
// 2 (3/4) 1e9 + 2 (1/2) 0.25e9 = 1.75e9 bytes over 150 GB/s.
TEST(Hierarchical, IdealTimeKeepsEveryDimensionBusy) {
  EXPECT_DOUBLE_EQ(ideal_seconds(Collective::AllReduce,
                                 {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}}, 1000000000),
                   1.75e9 / 150e9);
}

// The other collectives on the same dimensions: reduce-scatter (3/4) 1e9 + (1/2) 0.25e9 bytes;
// all-gather of 125 MB per rank, the reverse of that reduce-scatter; all-to-all (3/4 + 1/2) 1e9;
// broadcast the buffer once.
TEST(Hierarchical, IdealTimeOfEachCollective) {
  const std::vector<DimensionGroup> dims = {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}};
  EXPECT_DOUBLE_EQ(ideal_seconds(Collective::ReduceScatter, dims, 1000000000), 0.875e9 / 150e9);
  EXPECT_DOUBLE_EQ(ideal_seconds(Collective::AllGather, dims, 125000000), 0.875e9 / 150e9);
  EXPECT_DOUBLE_EQ(ideal_seconds(Collective::AllToAll, dims, 1000000000), 1.25e9 / 150e9);
  EXPECT_DOUBLE_EQ(ideal_seconds(Collective::Broadcast, dims, 1000000000), 1e9 / 150e9);
}

TEST(Hierarchical, RefusesHalvingDoublingOnAGroupThatIsNotAPowerOfTwo) {
  HierarchicalRequest q;
  q.dims = {{2, Algorithm::Ring, 1}, {3, Algorithm::HalvingDoubling, 1}};
  q.bytes = 1 << 20;
  try {
    build_hierarchical(q);
    ADD_FAILURE() << "halving-doubling on 3 NPUs was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1 (3 NPUs): halving_doubling"),
              std::string::npos)
        << e.what();
  }
  // A tree has no reduce-scatter phase to give; it serves when each dimension all-reduces whole.
  q.dims = {{2, Algorithm::Ring, 1}, {4, Algorithm::DoubleBinaryTree, 1}};
  EXPECT_THROW(build_hierarchical(q), std::invalid_argument);
  q.order = DimensionOrder::AllReduceEach;
  EXPECT_EQ(check_plan(build_hierarchical(q), Collective::AllReduce), "");
}

// A hierarchical all-to-all moves each block through the dimensions where its source and
// destination differ, one phase per dimension, the data transposed between phases (strided block
// sets). The symbolic executor proves every rank ends with each source's block for it, in every
// shape, algorithm and limit of chunks in flight; and every block (s, t), of share(chunk, n, t)
// bytes, is sent once per dimension in which s and t differ, so the bytes sent add up to that.
TEST(Hierarchical, AllToAllMovesEachBlockOnceThroughEveryDimensionItCrosses) {
  const std::vector<Dims> platforms = {
      {{4, Algorithm::Direct, 100}, {2, Algorithm::Direct, 50}},
      {{2, Algorithm::Pairwise, 200}, {3, Algorithm::Direct, 100}, {2, Algorithm::Pairwise, 50}},
      {{3, Algorithm::Direct, 175}, {1, Algorithm::Direct, 100}, {4, Algorithm::Pairwise, 50}},
  };
  for (const Dims& dims : platforms)
    for (int active : {0, 1, 2})
      for (int splits : {1, 5}) {
        HierarchicalRequest q;
        q.collective = Collective::AllToAll;
        q.dims = Dims(dims);  // a copy assigned into an empty vector trips GCC 12's -Wnonnull
        for (DimensionGroup& d : q.dims) d.active_chunks = active;
        q.bytes = 100003;  // blocks of unequal sizes
        q.splits = splits;
        const Plan plan = build_hierarchical(q);
        const std::string what = plan.algorithm + " active " + std::to_string(active) + " splits " +
                                 std::to_string(splits);
        EXPECT_EQ(check_plan(plan, Collective::AllToAll), "") << what;
        int n = 1;
        for (const DimensionGroup& d : dims) n *= d.size;
        uint64_t expected = 0;
        for (int c = 0; c < splits; ++c)
          for (int src = 0; src < n; ++src)
            for (int dst = 0; dst < n; ++dst) {
              int crossed = 0;
              for (int d = 0, stride = 1; d < static_cast<int>(dims.size());
                   stride *= dims[d].size, ++d)
                crossed += src / stride % dims[d].size != dst / stride % dims[d].size;
              expected += share(share(q.bytes, splits, c), n, dst) * crossed;
            }
        EXPECT_EQ(plan.bytes_sent(), expected) << what;
      }
}

// The checker reads the strides: a receive that files its blocks one place off is caught, and so
// is a set of runs that does not fit its buffer.
TEST(Hierarchical, AllToAllStridesAreChecked) {
  HierarchicalRequest q;
  q.collective = Collective::AllToAll;
  q.dims = {{2, Algorithm::Direct, 100}, {4, Algorithm::Direct, 50}};
  q.bytes = 1 << 16;
  const Plan plan = build_hierarchical(q);
  ASSERT_EQ(check_plan(plan, Collective::AllToAll), "");
  // The first phase's receives (over dimension 0, of 2 NPUs) file the blocks from a peer one in
  // every 2: the source's digit 0 is the lowest of the numbering after it (the second phase's
  // blocks per peer are in a row).
  auto find_strided_receive = [](Plan& p) -> DataRef& {
    for (size_t k = 0; k < p.ranks[0].ops.size(); ++k)
      if (p.ranks[0].ops[k].kind == OpKind::Recv && p.ranks[0].data[k].dst_runs.strided())
        return p.ranks[0].data[k];
    throw std::logic_error("no strided receive");
  };
  Plan shifted = plan;
  DataRef& receive = find_strided_receive(shifted);
  EXPECT_EQ(receive.count, 4u);
  EXPECT_EQ(receive.dst_runs.run, 1);
  EXPECT_EQ(receive.dst_runs.every, 2);
  receive.dst_first += 1;
  EXPECT_NE(check_plan(shifted, Collective::AllToAll), "");
  Plan overflowing = plan;
  find_strided_receive(overflowing).dst_runs.every = 3;  // blocks up to 3 x 3 of 8
  EXPECT_NE(check_plan(overflowing, Collective::AllToAll).find("do not fit"), std::string::npos);
  // A ring is not an all-to-all phase: named, with its dimension.
  q.dims[1].algorithm = Algorithm::Ring;
  try {
    build_hierarchical(q);
    ADD_FAILURE() << "a ring all-to-all phase was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1"), std::string::npos) << e.what();
  }
}

// Themis orders a reduce-scatter on its own too, its loads counting its one half (as ASTRA-sim's
// OfflineGreedy does): bandwidths 25, 50 and 100 GB/s, 2 NPUs each, chunks of 1 MB. Chunk 0 goes
// ascending and loads dimension 0 with 0.5 MB / 25 GB/s = 20 us, dimension 1 with 5 us and
// dimension 2 with 1.25 us; chunk 1 then visits 2, 1, 0 (the gap, 18.75 us, moves 3.75 MB on
// dimension 2, above 1 MB / 16). An all-gather visits the same orders backwards. Both plans compute
// their collective, each chunk's shares where its own order puts them.
TEST(Themis, OrdersReduceScattersAndAllGathersAlone) {
  for (Collective collective : {Collective::ReduceScatter, Collective::AllGather}) {
    HierarchicalRequest q;
    q.collective = collective;
    q.dims = {{2, Algorithm::Direct, 25}, {2, Algorithm::Direct, 50}, {2, Algorithm::Direct, 100}};
    q.bytes = 4000000;
    q.splits = 4;
    q.order = DimensionOrder::Themis;
    const Schedule schedule = schedule_collective(q);
    auto dims_of = [&](int c) {
      std::vector<int> dims;
      for (const Phase& p : schedule.chunks[c]) dims.push_back(p.dim);
      return dims;
    };
    const std::vector<int> ascending = {0, 1, 2}, reversed = {2, 1, 0};
    const bool rs = collective == Collective::ReduceScatter;
    EXPECT_EQ(dims_of(0), rs ? ascending : reversed) << to_string(collective);
    EXPECT_EQ(dims_of(1), rs ? reversed : ascending) << to_string(collective);
    const Plan plan = build_hierarchical(q);
    EXPECT_EQ(check_plan(plan, collective), "") << to_string(collective);
    ASSERT_EQ(plan.slot_order.size(), 4u * 8u);
    EXPECT_NE(std::vector<uint32_t>(plan.slot_order.begin(), plan.slot_order.begin() + 8),
              std::vector<uint32_t>(plan.slot_order.begin() + 8, plan.slot_order.begin() + 16));
  }
}

// A size the splits do not divide leaves some chunks a byte larger than the rest. That byte must
// not change Themis's choices: the same dimension orders and service orders as for the size
// rounded down to a multiple of the splits (4d_ring_fc_ring_switch's per-NPU bandwidths).
TEST(Themis, ChunksAByteApartAreScheduledAsEqualChunks) {
  for (QueuePolicy policy : {QueuePolicy::Fifo, QueuePolicy::SmallestChunkFirst}) {
    HierarchicalRequest q;
    q.dims = {{4, Algorithm::Ring, 375},
              {8, Algorithm::Direct, 175},
              {4, Algorithm::Ring, 150},
              {8, Algorithm::HalvingDoubling, 100}};
    q.splits = 64;
    q.order = DimensionOrder::Themis;
    q.policy = policy;
    q.bytes = 214748352;  // 0.2 GiB rounded down to a multiple of 64
    const Schedule even = schedule_collective(q);
    q.bytes += 13;  // round(0.2 GiB): 13 chunks one byte larger
    const Schedule uneven = schedule_collective(q);
    for (size_t c = 0; c < even.chunks.size(); ++c)
      for (size_t p = 0; p < even.chunks[c].size(); ++p)
        EXPECT_EQ(even.chunks[c][p].dim, uneven.chunks[c][p].dim)
            << "chunk " << c << " phase " << p;
    EXPECT_EQ(even.served, uneven.served);
  }
}

}  // namespace
}  // namespace wafersim::collectives

namespace wafersim::collectives {
namespace {

// Whether op `a` of `rp` waits, directly or through others, for op `b`.
bool waits_for(const RankPlan& rp, uint32_t a, uint32_t b) {
  std::vector<uint32_t> stack = {a};
  std::vector<bool> seen(rp.ops.size(), false);
  while (!stack.empty()) {
    const uint32_t k = stack.back();
    stack.pop_back();
    for (uint32_t d : rp.deps(k)) {
      if (d == b) return true;
      if (!seen[d]) seen[d] = true, stack.push_back(d);
    }
  }
  return false;
}

}  // namespace

// Built for the runtime scheduler, a plan leaves each dimension's service order out: a phase
// waits only for its chunk's previous phase, never for another chunk's, whatever the limit of
// chunks in flight; every op of it waits for its gate, which the scheduler opens. Each phase's
// messages carry tags of their own. It still computes its collective.
TEST(Hierarchical, RuntimeQueuesLeaveTheServiceOrderToTheScheduler) {
  const std::vector<Dims> platforms = {
      {{4, Algorithm::Ring, 100}, {2, Algorithm::Ring, 50}},
      {{2, Algorithm::HalvingDoubling, 200}, {3, Algorithm::Direct, 100}, {2, Algorithm::Ring, 50}},
  };
  for (Collective collective :
       {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather})
    for (const Dims& dims : platforms)
      for (DimensionOrder order : {DimensionOrder::Ascending, DimensionOrder::Themis})
        for (bool share : {true, false}) {
          HierarchicalRequest q;
          q.collective = collective;
          q.dims = Dims(dims);
          for (DimensionGroup& d : q.dims) d.active_chunks = 1;
          q.splits = 5;
          q.bytes = 100003;
          q.order = order;
          q.share_positions = share;
          q.runtime_queues = true;
          const Plan plan = build_hierarchical(q);
          const std::string what = std::string(to_string(collective)) + " " + plan.algorithm;
          EXPECT_EQ(check_plan(plan, collective), "") << what;
          const Schedule schedule = schedule_collective(q);
          size_t phases = 0;
          for (const auto& chunk : schedule.chunks) phases += chunk.size();
          for (const RankPlan& rp : plan.ranks) {
            ASSERT_EQ(rp.phases.size(), phases) << what;
            std::vector<uint32_t> previous_close(schedule.chunks.size(), UINT32_MAX);
            for (size_t i = 0; i < rp.phases.size(); ++i) {
              const PhaseGate& g = rp.phases[i];
              EXPECT_EQ(rp.phase_at(g.gate), i);
              EXPECT_EQ(rp.phase_at(g.close), i);
              ASSERT_LT(g.gate, g.close);
              EXPECT_EQ(rp.ops[g.gate].kind, OpKind::Nop);
              EXPECT_EQ(rp.ops[g.close].kind, OpKind::Nop);
              EXPECT_EQ(g.slot, 0u);
              for (uint32_t d : rp.deps(g.gate)) EXPECT_EQ(d, previous_close[g.chunk]) << what;
              for (uint32_t k = g.gate + 1; k <= g.close; ++k) {
                for (uint32_t d : rp.deps(k))
                  EXPECT_GE(d, g.gate) << what << ": op " << k << " of chunk " << g.chunk;
                EXPECT_TRUE(waits_for(rp, k, g.gate)) << what << ": op " << k;
                if (rp.ops[k].kind == OpKind::Send || rp.ops[k].kind == OpKind::Recv) {
                  EXPECT_EQ(rp.phase_of_tag(rp.ops[k].tag), i) << what;
                }
              }
              previous_close[g.chunk] = g.close;
            }
          }
        }
}

}  // namespace wafersim::collectives
