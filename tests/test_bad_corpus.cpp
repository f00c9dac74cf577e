// The bad-input corpus (tests/data/bad/README.md): every malformed input and hostile command line
// in tests/data/bad/cases.tsv ends with its exit code and a message naming the problem, never with
// a signal, a hang, or text from SystemC's or the C++ runtime's own error reports. One test per
// case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tb/common/child_processes.h"
#include "tests/bad_workloads.h"
#include "tests/testing.h"

namespace {

struct Case {
  std::string name;
  int exit_code = 0;
  std::string fragment;  // a part of what the run prints (stdout and stderr)
  std::vector<std::string> args;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// Splits a command line on blanks; "..." keeps blanks inside one argument.
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string current;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(current);
      current.clear();
      any = false;
    } else {
      current += c;
      any = true;
    }
  }
  if (any) out.push_back(current);
  return out;
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::ifstream in(std::string(WAFERSIM_SOURCE_DIR) + "/tests/data/bad/cases.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
    if (line.back() == '\t') fields.push_back("");  // an empty command line
    if (fields.size() != 4) throw std::runtime_error("cases.tsv: 4 tab-separated fields: " + line);
    cases.push_back({fields[0], std::stoi(fields[1]), fields[2], split(fields[3])});
  }
  return cases;
}

// Placeholders: @bad/ the corpus folder, @data/ tests/data, @configs/ configs, @gen/ the generated
// workloads, @out/ a fresh folder for this case.
std::string expand(std::string arg, const std::string& gen, const std::string& out) {
  const std::string src = WAFERSIM_SOURCE_DIR;
  const std::pair<std::string, std::string> places[] = {{"@bad/", src + "/tests/data/bad/"},
                                                        {"@data/", src + "/tests/data/"},
                                                        {"@configs/", src + "/configs/"},
                                                        {"@gen/", gen + "/"},
                                                        {"@out/", out + "/"}};
  for (const auto& [from, to] : places)
    for (size_t at; (at = arg.find(from)) != std::string::npos;) arg.replace(at, from.size(), to);
  return arg;
}

class Corpus : public ::testing::TestWithParam<Case> {};

TEST_P(Corpus, EndsWithItsExitCodeAndMessage) {
  const Case& c = GetParam();
  const std::string gen = wafersim::testing::temp_dir("gen");
  const std::string out = wafersim::testing::temp_dir("out");
  wafersim::testing::write_bad_workloads(gen);
  std::vector<std::string> argv = {std::string(WAFERSIM_BINARY_DIR) + "/wafersim"};
  for (const auto& a : c.args) argv.push_back(expand(a, gen, out));
  std::string output;
  const int code = wafersim::tb::run_program(argv, output);
  EXPECT_EQ(code, c.exit_code) << output;
  EXPECT_NE(output.find(expand(c.fragment, gen, out)), std::string::npos)
      << "'" << c.fragment << "' not in:\n"
      << output;
  for (const char* leak : {"Error: (E", "Info: ", "In file: ", "terminate called",
                           "what():", "Segmentation", "sc_except", "std::", "basic_"})
    EXPECT_EQ(output.find(leak), std::string::npos) << "leaked '" << leak << "':\n" << output;
  if (c.exit_code != 0) {
    EXPECT_NE(output.find("wafersim: "), std::string::npos) << output;
  }
  // Hostile paths hold `touch NAME` in back quotes and after semicolons: nothing may run them, in
  // the output folder or in the current one (where a shell would have run them).
  for (const std::string& dir : {out, std::filesystem::current_path().string()})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
      for (const char* name : {"pwned", "bq"})
        EXPECT_NE(entry.path().filename(), name) << "a shell ran a user's path: " << entry.path();
}

INSTANTIATE_TEST_SUITE_P(BadInput, Corpus, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
