#include "tb/config/yaml_file.h"

#include <set>

#include "models/common/error.h"
#include "tb/common/files.h"

namespace wafersim::tb {

namespace {

std::string line_of(const YAML::Node& n) {
  return "line " + std::to_string(n.Mark().line + 1);
}

void reject_duplicate_keys(const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar())
        throw InputError(path, line_of(entry.first), "a key must be a plain name");
      if (!seen.insert(entry.first.Scalar()).second)
        throw InputError(path, line_of(entry.first) + " key '" + entry.first.Scalar() + "'",
                         "given twice in the same mapping");
      reject_duplicate_keys(entry.second, path);
    }
  } else if (node.IsSequence()) {
    for (const auto& element : node) reject_duplicate_keys(element, path);
  }
}

}  // namespace

YAML::Node load_yaml(const std::string& path) {
  check_input_file(path, "");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, "", "cannot open file");
  } catch (const YAML::Exception& e) {
    throw InputError(path, "line " + std::to_string(e.mark.line + 1), e.msg);
  }
  reject_duplicate_keys(root, path);
  return root;
}

}  // namespace wafersim::tb
