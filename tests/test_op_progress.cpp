// The replay's windowed op progress (tb/replay/op_progress.h) against the dense form it replaced:
// every op's state kept, in a vector as long as the plan.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tb/replay/op_progress.h"

namespace wafersim::tb {
namespace {

using collectives::Op;
using collectives::OpKind;
using collectives::RankPlan;

// A plan of `n` ops, each depending on some of the `reach` ops before it (none: a root).
RankPlan random_plan(uint32_t n, uint32_t reach, std::mt19937& rng) {
  RankPlan plan;
  for (uint32_t k = 0; k < n; ++k) {
    std::vector<uint32_t> deps;
    for (uint32_t d = k > reach ? k - reach : 0; d < k; ++d)
      if (rng() % 3 == 0) deps.push_back(d);
    plan.add(Op{OpKind::Nop}, deps);
  }
  return plan;
}

std::vector<std::vector<uint32_t>> children_of(const RankPlan& plan) {
  std::vector<std::vector<uint32_t>> children(plan.ops.size());
  for (uint32_t k = 0; k < plan.ops.size(); ++k)
    for (uint32_t d : plan.deps(k)) children[d].push_back(k);
  return children;
}

// Runs `plan` to the end, issuing ready ops and finishing issued ones in an order `rng` picks
// (`in_order`: always the lowest-numbered), and checks every op's state against the dense form
// after each step, and that only the window and the op aside hold ops begun and not done. Returns
// the window's largest capacity.
uint32_t run_and_compare(const RankPlan& plan, std::mt19937& rng, bool in_order) {
  const uint32_t n = static_cast<uint32_t>(plan.ops.size());
  const auto children = children_of(plan);
  std::vector<uint16_t> dense(n);
  for (uint32_t k = 0; k < n; ++k) dense[k] = static_cast<uint16_t>(plan.ops[k].dep_count);
  OpProgress progress;
  uint32_t capacity = progress.capacity();
  for (uint32_t done = 0; done < n;) {
    // Candidates: ops ready to issue (no dependency left) and ops issued.
    std::vector<uint32_t> candidates;
    for (uint32_t k = 0; k < n; ++k)
      if (dense[k] == 0 || dense[k] == OpProgress::kIssued) candidates.push_back(k);
    EXPECT_FALSE(candidates.empty());
    const uint32_t k = in_order ? candidates.front() : candidates[rng() % candidates.size()];
    if (dense[k] == 0) {
      dense[k] = OpProgress::kIssued;
      progress.issue(plan, k);
    } else {
      dense[k] = OpProgress::kDone;
      progress.finish(plan, k);
      ++done;
      for (uint32_t c : children[k]) {
        const bool ready = --dense[c] == 0;
        EXPECT_EQ(progress.release(plan, c), ready) << "op " << c;
      }
    }
    for (uint32_t j = 0; j < n; ++j) EXPECT_EQ(progress.at(plan, j), dense[j]) << "op " << j;
    EXPECT_LE(progress.first_open(), progress.end_open());
    for (uint32_t j = 0; j < progress.first_open(); ++j) EXPECT_EQ(dense[j], OpProgress::kDone);
    for (uint32_t j = progress.end_open(); j < n; ++j)
      if (j != progress.far_open()) {
        EXPECT_EQ(dense[j], plan.ops[j].dep_count);
      }
    capacity = std::max(capacity, progress.capacity());
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(progress.first_open(), n) << "every op done";
  return capacity;
}

TEST(OpProgress, AgreesWithEveryOpsStateKeptDenselyInAnyOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40 && !HasFailure(); ++trial) {
    const RankPlan plan = random_plan(60 + rng() % 60, 1 + rng() % 12, rng);
    run_and_compare(plan, rng, trial % 4 == 0);
  }
}

TEST(OpProgress, ARingsChunksStayInTheInlineWindow) {
  // A ring's shape: each step's send and receive wait for the previous step's receive; a Nop
  // closes the chunk, waiting for its sends (nothing else waits for them) and its last receive,
  // and the next chunk's first step waits for it.
  RankPlan plan;
  uint32_t last = UINT32_MAX;
  for (int chunk = 0; chunk < 3; ++chunk) {
    std::vector<uint32_t> sends;
    for (int step = 0; step < 700; ++step) {
      const std::vector<uint32_t> deps =
          last == UINT32_MAX ? std::vector<uint32_t>{} : std::vector<uint32_t>{last};
      sends.push_back(plan.add(Op{OpKind::Send}, deps));
      last = plan.add(Op{OpKind::Recv}, deps);
    }
    sends.push_back(last);
    last = plan.add(Op{OpKind::Nop}, sends);
  }
  std::mt19937 rng(1);
  EXPECT_EQ(run_and_compare(plan, rng, true), 8u);
}

TEST(OpProgress, OpsFarAheadGoAsideThenWidenTheWindow) {
  // Three independent chains, 400 ops apart.
  RankPlan plan;
  for (uint32_t k = 0; k < 1200; ++k)
    plan.add(Op{OpKind::Nop},
             k % 400 == 0 ? std::vector<uint32_t>{} : std::vector<uint32_t>{k - 1});
  OpProgress progress;
  progress.issue(plan, 0);
  progress.issue(plan, 400);  // aside
  EXPECT_EQ(progress.capacity(), 8u);
  EXPECT_EQ(progress.far_open(), 400u);
  EXPECT_EQ(progress.at(plan, 400), OpProgress::kIssued);
  progress.issue(plan, 800);  // a second: the window grows to hold both
  EXPECT_EQ(progress.capacity(), 1024u);
  EXPECT_EQ(progress.far_open(), OpProgress::kNone);
  EXPECT_EQ(progress.at(plan, 400), OpProgress::kIssued);
  EXPECT_EQ(progress.at(plan, 800), OpProgress::kIssued);
  EXPECT_EQ(progress.at(plan, 799), 1u);  // untouched in between: waits for its dependency
  progress.finish(plan, 800);
  EXPECT_EQ(progress.first_open(), 0u);  // op 0 is not done: the window keeps its start
  progress.finish(plan, 0);
  EXPECT_EQ(progress.first_open(), 1u);
  std::mt19937 rng(3);
  EXPECT_GE(run_and_compare(plan, rng, false), 512u);
}

}  // namespace
}  // namespace wafersim::tb
