#pragma once
// Parameter studies: a YAML file lists runs, or a grid of values, over any platform key, workload
// or option; `wafersim study` runs them N processes at a time and writes DIR/results.csv plus each
// run's own output folder. A failed run is a row with its error, not the end of the study.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tb/chakra/generator.h"

namespace wafersim::tb {

struct StudyRun {
  std::string id;
  std::map<std::string, std::string> values;  // the swept values, by name
  std::vector<std::string> args;              // `wafersim run` arguments
  int workload = -1;                          // a workload of its own (Study::workloads), or -1
};

struct Study {
  std::string name;
  std::vector<std::string> columns;  // names of the swept values, in order
  std::vector<StudyRun> runs;
  // `base.generate`: a microbenchmark the study writes to <out>/workload/microbenchmark and every
  // run replays, so that a study of 1,024 ranks needs no trace in the repository.
  std::optional<chakra::MicrobenchmarkSpec> generate;
  // Grid values' own `generate`: each written to <out>/workload/<index>/microbenchmark.
  std::vector<chakra::MicrobenchmarkSpec> workloads;
};

// Expands a study file into runs. Throws InputError naming the file and key.
Study load_study(const std::string& path);
// Runs every run as a child `wafersim run` (the executable at `self`), `jobs` at a time; writes
// out_dir/results.csv and out_dir/<id>/. On SIGINT / SIGTERM it starts no more runs, lets those
// running stop (they write their reports, marked incomplete) and writes results.csv for all.
// Returns the exit code (tb/common/exit_codes.h): 0, 2 when runs failed, 130 / 143 when stopped.
int run_study(const Study& study, const std::string& self, const std::string& out_dir, int jobs,
              std::ostream& log, std::ostream& err);

}  // namespace wafersim::tb
