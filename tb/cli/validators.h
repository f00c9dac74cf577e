#pragma once
// Command-line value checks with messages a user can act on (CLI11's own print the range of a
// double to 309 digits and accept "-2" for an unsigned option as 2^64 - 2).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

#include "tb/common/whole_number.h"

namespace wafersim::tb {

// A whole number from `min` to `max`, written in decimal.
inline CLI::Validator whole_number(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        if (parse_whole_number(text, min, max)) return "";
        return "expected a whole number from " + std::to_string(min) + " to " +
               std::to_string(max) + ", got '" + text + "'";
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

// A finite number from `min` to `max`.
inline CLI::Validator real_number(double min, double max) {
  auto shown = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return std::abs(v) >= 1e6 || (v != 0 && std::abs(v) < 1e-3) ? CLI::detail::to_string(v) : s;
  };
  const std::string range = shown(min) + " to " + shown(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min || v > max)
          return "expected a number from " + range + ", got '" + text + "'";
        return "";
      },
      "NUMBER in [" + range + "]");
}

}  // namespace wafersim::tb
