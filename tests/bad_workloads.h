#pragma once
// The malformed Chakra workloads of the bad-input corpus (tests/data/bad/cases.tsv names them as
// @gen/<name>): each is written by the project's own trace writer, from the same 4-rank all-reduce,
// with one thing broken, so the corpus stays small and every case says what it breaks.
#include <string>
#include <vector>

namespace wafersim::testing {

// Writes every workload of the corpus under `dir` as <dir>/<name>.<rank>.et, and the deeply nested
// files deep.json, deep_system.json and deep.yaml. Returns the workloads' names.
std::vector<std::string> write_bad_workloads(const std::string& dir);

}  // namespace wafersim::testing
