#pragma once
// The Fred paper's traffic classes (PAPERS.md section 1): model-, data- and pipeline-parallel
// traffic. At packet fidelity each class's in-network flows keep to a data VC of their own (the
// class's index, modulo the VCs) and are sent in the order they were issued; NICs and Fred
// switches serve MP before PP before DP, packet by packet (docs/design.md, The Fred switch).
#include <cstdint>
#include <stdexcept>
#include <string>

namespace wafersim::hw {

enum class TrafficClass : uint8_t { Mp = 0, Dp = 1, Pp = 2 };

// The order a switch serves the classes in: 0 first.
inline int priority(TrafficClass c) {
  return c == TrafficClass::Mp ? 0 : c == TrafficClass::Pp ? 1 : 2;
}

inline const char* to_string(TrafficClass c) {
  return c == TrafficClass::Mp ? "mp" : c == TrafficClass::Dp ? "dp" : "pp";
}

// "mp", "dp" or "pp"; throws std::invalid_argument.
inline TrafficClass traffic_class_from_string(const std::string& text) {
  if (text == "mp") return TrafficClass::Mp;
  if (text == "dp") return TrafficClass::Dp;
  if (text == "pp") return TrafficClass::Pp;
  throw std::invalid_argument("unknown traffic class '" + text + "' (expected mp, dp or pp)");
}

}  // namespace wafersim::hw
