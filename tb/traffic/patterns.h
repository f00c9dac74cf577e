#pragma once
// Synthetic traffic patterns, defined as BookSim defines them so that latency-load curves can be
// compared point for point: each picks the destination rank of a new packet from its source rank.
#include <random>
#include <string>

#include "models/topology/topology.h"

namespace wafersim::tb {

enum class Pattern { Uniform, Transpose, BitComplement, Hotspot, NearestNeighbour };

const char* to_string(Pattern p);
// uniform | transpose | bit_complement (bitcomp) | hotspot | nearest_neighbour (neighbor);
// throws std::invalid_argument.
Pattern pattern_from_string(const std::string& text);

class DestinationPicker {
 public:
  // Throws std::invalid_argument when the pattern does not fit the topology (transpose needs a
  // square mesh, bit complement a power-of-two NPU count, a hotspot outside the NPUs).
  DestinationPicker(Pattern pattern, const topology::Topology& topology, int hotspot_rank,
                    double hotspot_fraction);

  int pick(int src, std::mt19937_64& rng) const;

 private:
  Pattern pattern_;
  int n_;
  int kx_, ky_;  // mesh columns and rows (rings and switches: n x 1)
  int hotspot_;
  double hotspot_fraction_;
};

}  // namespace wafersim::tb
