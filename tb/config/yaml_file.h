#pragma once
// Loads a YAML file for any of wafersim's readers (platforms, ASTRA-sim networks, studies): a
// missing file, a folder, a syntax error or a key given twice in one mapping (which yaml-cpp would
// silently resolve to the first) is an InputError naming the file and the line.
#include <yaml-cpp/yaml.h>

#include <string>

namespace wafersim::tb {

YAML::Node load_yaml(const std::string& path);

}  // namespace wafersim::tb
