#pragma once
// A user's JSON value shown in a message: scalars as written, containers by kind only. Dumping a
// container would recurse as deep as the user nested it (a stack overflow on hostile input) and
// could print megabytes.
#include <nlohmann/json.hpp>
#include <string>

namespace wafersim::tb {

inline std::string shown(const nlohmann::json& value) {
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  std::string text = value.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

}  // namespace wafersim::tb
