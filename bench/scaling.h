#pragma once
// How wafersim's cost grows with the system: message fidelity from 16 to 4,096 NPUs (ring
// all-reduce of 1 GiB, 4 chunks) and flit fidelity from 4x4 to 32x32 meshes (uniform traffic at
// 0.1 flits/node/cycle, BookSim's meshconfig): wall and CPU time, peak RSS, events per simulated
// message or router crossing, and the fitted growth exponent. Writes scaling.csv and a log-log
// plot, scaling.png, into `out_dir`.
#include <string>

namespace wafersim::bench {

void scaling(const std::string& wafersim, const std::string& dir, const std::string& out_dir);

}  // namespace wafersim::bench
