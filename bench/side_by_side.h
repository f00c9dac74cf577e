#pragma once
// wafersim against the reference tools, side by side: each case runs the reference and wafersim
// alternately on the same configuration, `repeats` times each, and prints the median and minimum
// CPU seconds, the peak RSS and the ratio (docs/performance.md reports only ratios measured so).
#include <string>

namespace wafersim::bench {

struct Tools {
  std::string wafersim;           // the wafersim binary
  std::string booksim;            // BookSim 2's booksim binary ("" = skip its cases)
  std::string booksim_config;     // its runfiles/meshconfig
  std::string astra_sim;          // an ASTRA-sim analytical binary ("" = skip its cases)
  std::string astra_sim_unaware;  // its congestion-unaware backend, for several dimensions
  std::string dir;                // scratch folder
  int repeats = 3;
};

// BookSim's runfiles/meshconfig (uniform, 1-flit packets) at 0.1 and 0.3 on 8x8 and at 0.1 on
// 16x16, against wafersim on configs/booksim_meshconfig.yaml for the same warm-up and
// measurement: simulated cycles per CPU second, latency, peak RSS.
void booksim_side_by_side(const Tools& tools);

// Ring all-reduce of 1 MiB and 1 GiB on 16, 64, 256 and 1,024 NPUs (50 GB/s, 500 ns ring links)
// with ASTRA-sim's Ring_4chunks.json semantics (4 dataset splits, 1 active chunk), and a 2-D
// Ring 32 x Ring 32 all-reduce of 1 GiB: the same Chakra files and ASTRA-sim input files fed to
// both; wafersim at message fidelity.
void astra_sim_side_by_side(const Tools& tools);

}  // namespace wafersim::bench
