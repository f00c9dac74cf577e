// The runtime scheduler of chunk phases (tb/replay/phase_scheduler.h) on queues of known phases:
// the order each queue policy and collective priority serves them in, the limit of one phase per
// slot, and phases followed over that limit.
#include <gtest/gtest.h>

#include <vector>

#include "tb/replay/phase_scheduler.h"

using namespace wafersim;
using collectives::CollectivePriority;
using collectives::QueuePolicy;
using tb::PhaseScheduler;

namespace {

PhaseScheduler::Phase phase(uint32_t chunk, uint64_t bytes, uint64_t ready_ps,
                            uint64_t collective = 0, uint16_t dim = 0) {
  PhaseScheduler::Phase p;
  p.dim = dim;
  p.chunk = chunk;
  p.bytes = bytes;
  p.ready_ps = ready_ps;
  p.collective = collective;
  p.index = chunk;
  return p;
}

// Starts `running`, queues `waiting` behind it, then ends phase after phase: the chunks in the
// order the slot started them.
std::vector<uint32_t> service_order(PhaseScheduler& s, const PhaseScheduler::Phase& running,
                                    const std::vector<PhaseScheduler::Phase>& waiting) {
  EXPECT_TRUE(s.ready(running));
  for (const auto& p : waiting) EXPECT_FALSE(s.ready(p));
  std::vector<uint32_t> order;
  PhaseScheduler::Phase current = running;
  while (auto next = s.finished(current)) {
    order.push_back(next->chunk);
    current = *next;
  }
  return order;
}

}  // namespace

// Chunk 0 runs; chunks 1 (4 MiB, ready at 30 ps), 2 (1 MiB, at 20 ps) and 3 (16 MiB, at 10 ps)
// wait. FIFO serves them as they became ready (3, 2, 1); SCF the smallest first (2, 1, 3).
TEST(PhaseScheduler, FifoServesByReadinessAndScfBySize) {
  const std::vector<PhaseScheduler::Phase> waiting = {phase(1, 4 << 20, 30), phase(2, 1 << 20, 20),
                                                      phase(3, 16 << 20, 10)};
  PhaseScheduler fifo(QueuePolicy::Fifo, CollectivePriority::Fifo);
  EXPECT_EQ(service_order(fifo, phase(0, 1, 0), waiting), (std::vector<uint32_t>{3, 2, 1}));
  PhaseScheduler scf(QueuePolicy::SmallestChunkFirst, CollectivePriority::Fifo);
  EXPECT_EQ(service_order(scf, phase(0, 1, 0), waiting), (std::vector<uint32_t>{2, 1, 3}));
}

// Phases of two collectives: FIFO priority serves the collective issued first (0) before any of
// the later one's, even a smaller or earlier-ready phase; LIFO the reverse. Within one
// collective the queue policy decides.
TEST(PhaseScheduler, CollectivePriorityComesBeforeTheQueuePolicy) {
  const std::vector<PhaseScheduler::Phase> waiting = {phase(1, 8, 40, /*collective=*/0),
                                                      phase(2, 1, 10, 1), phase(3, 2, 20, 1),
                                                      phase(4, 4, 30, 0)};
  PhaseScheduler fifo(QueuePolicy::SmallestChunkFirst, CollectivePriority::Fifo);
  EXPECT_EQ(service_order(fifo, phase(0, 1, 0), waiting), (std::vector<uint32_t>{4, 1, 2, 3}));
  PhaseScheduler lifo(QueuePolicy::SmallestChunkFirst, CollectivePriority::Lifo);
  EXPECT_EQ(service_order(lifo, phase(0, 1, 0), waiting), (std::vector<uint32_t>{2, 3, 4, 1}));
}

// Slots and dimensions are separate servers; an unlimited slot starts everything at once.
TEST(PhaseScheduler, EachSlotOfEachDimensionRunsOnePhase) {
  PhaseScheduler s(QueuePolicy::Fifo, CollectivePriority::Fifo);
  EXPECT_TRUE(s.ready(phase(0, 1, 0, 0, /*dim=*/0)));
  EXPECT_TRUE(s.ready(phase(1, 1, 0, 0, /*dim=*/1)));
  auto other_slot = phase(2, 1, 0);
  other_slot.slot = 1;
  EXPECT_TRUE(s.ready(other_slot));
  EXPECT_FALSE(s.ready(phase(3, 1, 0)));
  auto unlimited = phase(4, 1, 0);
  unlimited.limited = false;
  EXPECT_TRUE(s.ready(unlimited));
  EXPECT_TRUE(s.ready(unlimited));
  EXPECT_EQ(s.waiting(0), "dimension 0 slot 0: 1 phase(s) wait (chunk 3), 1 running\n");
  EXPECT_EQ(s.waiting(1), "");
}

// A phase a peer started runs at once, over the limit; the slot starts its next waiting phase
// only when every running phase has ended. A followed phase that was waiting leaves the queue.
TEST(PhaseScheduler, FollowedPhasesRunOverTheLimit) {
  PhaseScheduler s(QueuePolicy::Fifo, CollectivePriority::Fifo);
  EXPECT_TRUE(s.ready(phase(0, 1, 0)));
  EXPECT_FALSE(s.ready(phase(1, 1, 10)));
  EXPECT_FALSE(s.ready(phase(2, 1, 20)));
  s.follow(phase(2, 1, 20), /*queued=*/true);  // a peer started chunk 2
  s.follow(phase(5, 1, 0), /*queued=*/false);  // and chunk 5, not ready here yet
  EXPECT_EQ(s.followed(), 2u);
  EXPECT_FALSE(s.finished(phase(0, 1, 0)).has_value());
  EXPECT_FALSE(s.finished(phase(5, 1, 0)).has_value());
  auto next = s.finished(phase(2, 1, 20));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->chunk, 1u);
  EXPECT_FALSE(s.finished(*next).has_value());
}
