#include "tb/traffic/patterns.h"

#include <stdexcept>

namespace wafersim::tb {

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::Uniform:
      return "uniform";
    case Pattern::Transpose:
      return "transpose";
    case Pattern::BitComplement:
      return "bit_complement";
    case Pattern::Hotspot:
      return "hotspot";
    case Pattern::NearestNeighbour:
      return "nearest_neighbour";
  }
  return "?";
}

Pattern pattern_from_string(const std::string& text) {
  if (text == "uniform") return Pattern::Uniform;
  if (text == "transpose") return Pattern::Transpose;
  if (text == "bit_complement" || text == "bitcomp") return Pattern::BitComplement;
  if (text == "hotspot") return Pattern::Hotspot;
  if (text == "nearest_neighbour" || text == "nearest_neighbor" || text == "neighbor")
    return Pattern::NearestNeighbour;
  throw std::invalid_argument("unknown traffic pattern '" + text +
                              "' (expected uniform, transpose, bit_complement, hotspot or "
                              "nearest_neighbour)");
}

DestinationPicker::DestinationPicker(Pattern pattern, const topology::Topology& topology,
                                     int hotspot_rank, double hotspot_fraction)
    : pattern_(pattern),
      n_(topology.npu_count()),
      kx_(n_),
      ky_(1),
      hotspot_(hotspot_rank),
      hotspot_fraction_(hotspot_fraction) {
  if (topology.spec().shape == topology::Shape::Mesh) {
    kx_ = topology.spec().mesh_x;
    ky_ = topology.spec().mesh_y;
  }
  if (pattern == Pattern::Transpose && kx_ != ky_)
    throw std::invalid_argument("transpose needs a square mesh, not " + std::to_string(kx_) + "x" +
                                std::to_string(ky_));
  if (pattern == Pattern::BitComplement && (n_ & (n_ - 1)) != 0)
    throw std::invalid_argument("bit_complement needs a power-of-two NPU count, not " +
                                std::to_string(n_));
  if (pattern == Pattern::Hotspot) {
    if (hotspot_ < 0 || hotspot_ >= n_)
      throw std::invalid_argument("hotspot node " + std::to_string(hotspot_) +
                                  " is not an NPU (0.." + std::to_string(n_ - 1) + ")");
    if (!(hotspot_fraction_ >= 0 && hotspot_fraction_ <= 1))
      throw std::invalid_argument("hotspot fraction must be within 0..1");
  }
}

int DestinationPicker::pick(int src, std::mt19937_64& rng) const {
  // Ranks are laid out row by row: rank = y * kx + x (models/topology).
  const int x = src % kx_, y = src / kx_;
  std::uniform_int_distribution<int> any(0, n_ - 1);  // BookSim's uniform includes the source
  switch (pattern_) {
    case Pattern::Uniform:
      return any(rng);
    case Pattern::Transpose:
      return x * kx_ + y;
    case Pattern::BitComplement:
      return ~src & (n_ - 1);
    case Pattern::Hotspot:
      return std::uniform_real_distribution<double>(0, 1)(rng) < hotspot_fraction_ ? hotspot_
                                                                                   : any(rng);
    case Pattern::NearestNeighbour:  // one step further in every dimension, wrapping around
      return ((y + 1) % ky_) * kx_ + (x + 1) % kx_;
  }
  return src;
}

}  // namespace wafersim::tb
