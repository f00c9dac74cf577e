#pragma once
// Users' JSON: read from a file or a string with every failure an InputError, and shown in
// messages.
#include <nlohmann/json.hpp>
#include <string>

namespace wafersim::tb {

// Parses `text`; any problem (syntax, a number too large for 64 bits) is an InputError naming
// `file`, `item` and the byte where it was found.
nlohmann::json parse_json(const std::string& text, const std::string& file,
                          const std::string& item = "");
// Reads and parses a JSON file (checked with check_input_file first).
nlohmann::json read_json_file(const std::string& path);

// A user's JSON value shown in a message: scalars as written, containers by kind only. Dumping a
// container would recurse as deep as the user nested it (a stack overflow on hostile input) and
// could print megabytes.
inline std::string shown(const nlohmann::json& value) {
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  std::string text = value.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

}  // namespace wafersim::tb
