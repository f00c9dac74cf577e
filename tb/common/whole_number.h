#pragma once
// A whole number typed by a user (a command-line option, a study file's value), checked in one
// place: decimal digits only (no sign, no blanks), within [lo, hi].
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace wafersim::tb {

inline std::optional<uint64_t> parse_whole_number(const std::string& text, uint64_t lo,
                                                  uint64_t hi) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) return {};
  return v;
}

}  // namespace wafersim::tb
