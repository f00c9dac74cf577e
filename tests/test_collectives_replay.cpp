// Collectives as the replay runs them: the root of a broadcast or reduce comes from the trace.
#include <gtest/gtest.h>

#include "tb/chakra/generator.h"
#include "tb/chakra/trace.h"
#include "tests/testing.h"

using namespace wafersim;

// A direct broadcast rooted at position 2 (the trace's `root` attribute): only rank 2 sends, one
// message to each other rank. Without the attribute, position 0 is the root.
TEST(CollectiveReplay, BroadcastRootComesFromTheTrace) {
  for (int root : {2, -1}) {
    const std::string dir = wafersim::testing::temp_dir("root" + std::to_string(root + 1));
    chakra::MicrobenchmarkSpec spec;
    spec.ranks = 4;
    spec.collective = chakra::CollectiveKind::Broadcast;
    spec.bytes = 1 << 16;
    chakra::write_microbenchmark(dir + "/b", spec);
    if (root >= 0)
      for (int r = 0; r < 4; ++r) {
        const std::string file = dir + "/b." + std::to_string(r) + ".et";
        chakra::Trace t = chakra::read_trace(file);
        t.nodes.front().root = root;
        chakra::write_trace(file, t);
      }
    auto report = wafersim::testing::run_report(
        "--platform " + wafersim::testing::source("configs/ring_8npus.yaml") +
        " --set network.npus=4 collectives.broadcast=direct collectives.dataset_splits=1 "
        "--workload " +
        dir + "/b");
    const int expected_root = root >= 0 ? root : 0;
    for (int r = 0; r < 4; ++r)
      EXPECT_EQ(report["npus"][r]["messages_sent"].get<int>(), r == expected_root ? 3 : 0)
          << "rank " << r << ", root " << expected_root;
  }
}
