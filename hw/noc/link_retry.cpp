#include "hw/noc/link_retry.h"

namespace wafersim::hw {

namespace {
// SplitMix64's finaliser: well mixed for consecutive inputs.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

LinkFault draw_link_fault(uint64_t seed, int link, uint64_t seq, uint32_t attempt, double drop,
                          double corrupt) {
  if (drop <= 0 && corrupt <= 0) return LinkFault::None;
  const uint64_t h = mix(mix(mix(seed) ^ static_cast<uint64_t>(link)) ^ seq) ^ attempt;
  const double u = static_cast<double>(mix(h) >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  if (u < drop) return LinkFault::Drop;
  if (u < drop + corrupt) return LinkFault::Corrupt;
  return LinkFault::None;
}

}  // namespace wafersim::hw
