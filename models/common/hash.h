#pragma once
// splitmix64: a well-mixed 64-bit hash of a 64-bit value, for fingerprints and reproducible inputs.
#include <cstdint>

namespace wafersim {

inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace wafersim
