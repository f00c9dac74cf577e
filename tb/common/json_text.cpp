#include "tb/common/json_text.h"

#include <fstream>
#include <sstream>

#include "models/common/error.h"
#include "tb/common/files.h"

namespace wafersim::tb {

nlohmann::json parse_json(const std::string& text, const std::string& file,
                          const std::string& item) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file, (item.empty() ? "" : item + ", ") + "byte " + std::to_string(e.byte),
                     "invalid JSON");
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406: a number beyond 64 bits and doubles
    std::string why = e.what();
    const auto bracket = why.find("] ");
    throw InputError(
        file, item,
        "invalid JSON: " + (bracket == std::string::npos ? why : why.substr(bracket + 2)));
  }
}

nlohmann::json read_json_file(const std::string& path) {
  check_input_file(path, "");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), path);
}

}  // namespace wafersim::tb
