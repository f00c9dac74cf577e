#include "tb/study/study.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "models/common/error.h"
#include "tb/common/child_processes.h"
#include "tb/common/exit_codes.h"
#include "tb/common/files.h"
#include "tb/common/stop_signals.h"
#include "tb/common/whole_number.h"
#include "tb/config/yaml_file.h"
#include "tb/report/report.h"

namespace wafersim::tb {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxRuns = 10000;

const std::set<std::string> kRunOptions = {"platform",      "workload",    "fidelity",
                                           "size-unit",     "deps",        "comm-groups",
                                           "astra-network", "astra-system"};
// Run options that name files: relative paths are relative to the study file's folder.
const std::set<std::string> kPathOptions = {"platform", "workload", "comm-groups", "astra-network",
                                            "astra-system"};

void add_value(std::vector<std::string>& args, const std::string& file, const std::string& key,
               const std::string& value) {
  if (key.find('.') != std::string::npos) {
    args.push_back("--set");
    args.push_back(key + "=" + value);
  } else if (kRunOptions.count(key)) {
    args.push_back("--" + key);
    fs::path p(value);
    if (kPathOptions.count(key) && p.is_relative()) p = fs::path(file).parent_path() / p;
    args.push_back(kPathOptions.count(key) ? p.lexically_normal().string() : value);
  } else {
    throw InputError(
        file, "key '" + key + "'",
        "not a run option (platform, workload, fidelity, size-unit, deps, comm-groups, "
        "astra-network, astra-system) nor a platform key section.key; a grid column of "
        "another name takes its values as mappings {value: NAME, <options>}");
  }
}

std::string scalar(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw InputError(file, "key '" + key + "'", "expected a single value");
  return n.Scalar();
}

uint64_t whole_number(const YAML::Node& n, const std::string& file, const std::string& key,
                      uint64_t lo, uint64_t hi) {
  const std::string text = scalar(n, file, key);
  if (const auto v = parse_whole_number(text, lo, hi)) return *v;
  throw InputError(file, "key '" + key + "'",
                   fmt::format("'{}' is not a whole number in [{}, {}]", text, lo, hi));
}

// A `generate` mapping: {collective, bytes, ranks, iterations, compute_us, parallelism, group,
// placement, snake_columns, io_controllers},
// the options of `wafersim generate`, over `spec` (base.generate's, for a grid value's).
chakra::MicrobenchmarkSpec load_generate(const YAML::Node& n, const std::string& file,
                                         const std::string& item,
                                         chakra::MicrobenchmarkSpec spec = {}) {
  if (!n.IsMap())
    throw InputError(file, item,
                     "expected a mapping: collective, bytes, ranks, iterations, compute_us, "
                     "parallelism, group, placement, snake_columns, io_controllers");
  chakra::ParallelOptions parallel;
  bool ranks_given = false;
  for (const auto& e : n) {
    const std::string key = e.first.Scalar(), where = item + "." + key;
    if (key == "collective") {
      try {
        spec.collective = chakra::collective_from_string(scalar(e.second, file, where));
      } catch (const std::invalid_argument& ex) {
        throw InputError(file, "key '" + where + "'", ex.what());
      }
    } else if (key == "bytes") {
      spec.bytes = whole_number(e.second, file, where, 1, 1ull << 50);
    } else if (key == "ranks") {
      spec.ranks = static_cast<int>(whole_number(e.second, file, where, 1, 4096));
      ranks_given = true;
    } else if (key == "parallelism") {
      parallel.parallelism = scalar(e.second, file, where);
    } else if (key == "group") {
      parallel.group = scalar(e.second, file, where);
    } else if (key == "placement") {
      parallel.placement = scalar(e.second, file, where);
    } else if (key == "snake_columns") {
      parallel.snake_columns = static_cast<int>(whole_number(e.second, file, where, 1, 4096));
    } else if (key == "iterations") {
      spec.iterations = static_cast<int>(whole_number(e.second, file, where, 1, 1000000));
    } else if (key == "compute_us") {
      spec.compute_micros = whole_number(e.second, file, where, 0, 1ull << 44);
    } else if (key == "io_controllers") {
      spec.io_controllers = static_cast<int>(whole_number(e.second, file, where, 0, 4096));
    } else {
      throw InputError(file, "key '" + where + "'",
                       "unknown key (expected collective, bytes, ranks, iterations, compute_us, "
                       "parallelism, group, placement, snake_columns, io_controllers)");
    }
  }
  try {
    if (!parallel.parallelism.empty() || !parallel.group.empty()) spec.groups.clear();
    chakra::apply_parallelism(spec, parallel, ranks_given);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, "key '" + item + ".parallelism'", e.what());
  }
  try {
    chakra::check_microbenchmark(spec);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, "key '" + item + "'", e.what());
  }
  return spec;
}

// Run options from a mapping: run options, platform keys and `set: [key=value, ...]`. `skip` names
// a key that is not an option (a grid value's `value`).
void add_options(std::vector<std::string>& args, const YAML::Node& map, const std::string& file,
                 const std::string& skip = "") {
  for (const auto& e : map) {
    std::string key = e.first.Scalar();
    if (key == skip || key == "generate") continue;  // a workload the study writes (load_generate)
    if (key == "set") {
      if (!e.second.IsSequence())
        throw InputError(file, "key 'set'", "expected a list of section.key=value");
      for (const auto& s : e.second) {
        args.push_back("--set");
        args.push_back(scalar(s, file, "set"));
      }
      continue;
    }
    add_value(args, file, key, scalar(e.second, file, key));
  }
}

struct Row {
  std::map<std::string, std::string> values;
  std::vector<std::string> args;
  int workload = -1;  // index into Study::workloads, or -1
};

// One grid value: a scalar sets the key itself; a mapping {value: NAME, <options>} shows NAME in
// the column and applies its options, so one column can switch platform and settings together.
// Its `generate` (over base.generate's options) is a workload of its own, added to `study`.
Row grid_value(const std::string& key, const YAML::Node& v, const std::string& file, Study& study) {
  Row r;
  if (v.IsMap()) {
    if (!v["value"])
      throw InputError(file, "grid key '" + key + "'",
                       "a value given as a mapping needs 'value:' (the text of its column)");
    r.values[key] = scalar(v["value"], file, key + ".value");
    if (v["generate"]) {
      if (v["workload"])
        throw InputError(file, "grid key '" + key + "'",
                         "a value gives either workload or generate");
      study.workloads.push_back(
          load_generate(v["generate"], file, key + ".generate",
                        study.generate.value_or(chakra::MicrobenchmarkSpec{})));
      r.workload = static_cast<int>(study.workloads.size()) - 1;
    }
    add_options(r.args, v, file, "value");
  } else {
    r.values[key] = scalar(v, file, key);
    add_value(r.args, file, key, r.values[key]);
  }
  return r;
}

}  // namespace

Study load_study(const std::string& path) {
  YAML::Node root = load_yaml(path);
  if (!root.IsMap()) throw InputError(path, "", "expected a YAML mapping");
  Study study;
  std::vector<std::string> base;
  for (const auto& e : root) {
    std::string key = e.first.Scalar();
    if (key != "name" && key != "base" && key != "grid" && key != "runs")
      throw InputError(path, "key '" + key + "'", "unknown key (expected name, base, grid, runs)");
  }
  study.name = root["name"] ? scalar(root["name"], path, "name") : fs::path(path).stem().string();
  if (root["base"]) {
    if (!root["base"].IsMap()) throw InputError(path, "base", "expected a mapping of run options");
    if (root["base"]["generate"]) {
      if (root["base"]["workload"])
        throw InputError(path, "base.generate", "give either base.workload or base.generate");
      study.generate = load_generate(root["base"]["generate"], path, "base.generate");
    }
    add_options(base, root["base"], path, "generate");
  }
  std::vector<Row> rows;
  if (root["grid"]) {
    if (!root["grid"].IsMap())
      throw InputError(path, "grid", "expected a mapping of keys to lists of values");
    rows.push_back({});
    for (const auto& e : root["grid"]) {
      std::string key = e.first.Scalar();
      if (!e.second.IsSequence() || e.second.size() == 0)
        throw InputError(path, "grid key '" + key + "'", "expected a non-empty list of values");
      study.columns.push_back(key);
      if (rows.size() * e.second.size() > kMaxRuns)
        throw InputError(path, "grid", "more than " + std::to_string(kMaxRuns) + " runs");
      std::vector<Row> values, next;
      for (const auto& v : e.second) values.push_back(grid_value(key, v, path, study));
      for (const auto& row : rows)
        for (const auto& value : values) {
          Row r = row;
          r.values.insert(value.values.begin(), value.values.end());
          r.args.insert(r.args.end(), value.args.begin(), value.args.end());
          if (value.workload >= 0) r.workload = value.workload;
          next.push_back(r);
        }
      rows = next;
    }
  }
  if (root["runs"]) {
    if (!root["runs"].IsSequence()) throw InputError(path, "runs", "expected a list of mappings");
    for (const auto& run : root["runs"]) {
      if (!run.IsMap()) throw InputError(path, "runs", "each run is a mapping of keys to values");
      Row r;
      for (const auto& e : run) {
        std::string key = e.first.Scalar();
        if (std::find(study.columns.begin(), study.columns.end(), key) == study.columns.end())
          study.columns.push_back(key);
        r.values[key] = scalar(e.second, path, key);
        add_value(r.args, path, key, r.values[key]);
      }
      rows.push_back(r);
    }
  }
  if (rows.empty()) throw InputError(path, "", "no runs: give a grid or a runs list");
  if (!study.workloads.empty() && root["base"] && root["base"]["workload"])
    throw InputError(path, "base.workload",
                     "given with grid values that generate their own workload: use "
                     "base.generate for the rest");
  if (rows.size() > kMaxRuns)
    throw InputError(path, "runs", "more than " + std::to_string(kMaxRuns) + " runs");
  int i = 0;
  for (const auto& row : rows) {
    StudyRun run;
    std::ostringstream id;
    id << "run" << std::setw(3) << std::setfill('0') << i++;
    run.id = id.str();
    run.values = row.values;
    run.args = base;
    run.args.insert(run.args.end(), row.args.begin(), row.args.end());
    run.workload = row.workload;
    study.runs.push_back(run);
  }
  return study;
}

int run_study(const Study& study, const std::string& self, const std::string& out_dir, int jobs,
              std::ostream& log, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir))
    throw InputError(out_dir, "--out", "cannot make this folder" + (ec ? ": " + ec.message() : ""));
  std::vector<std::string> workload;
  if (study.generate) {
    const std::string prefix = out_dir + "/workload/microbenchmark";
    chakra::write_microbenchmark(prefix, *study.generate);
    workload = {"--workload", prefix};
  }
  std::vector<std::string> own;  // per grid value's workload, its prefix
  for (size_t k = 0; k < study.workloads.size(); ++k) {
    own.push_back(out_dir + "/workload/" + std::to_string(k) + "/microbenchmark");
    chakra::write_microbenchmark(own.back(), study.workloads[k]);
  }
  std::vector<ChildJob> children;
  for (const StudyRun& run : study.runs) {
    std::string dir = out_dir + "/" + run.id;
    ChildJob job{{"run", "--quiet", "--out", dir}, dir};
    if (run.workload >= 0) {
      job.args.push_back("--workload");
      job.args.push_back(own[static_cast<size_t>(run.workload)]);
    } else {
      job.args.insert(job.args.end(), workload.begin(), workload.end());
    }
    job.args.insert(job.args.end(), run.args.begin(), run.args.end());
    children.push_back(job);
  }
  std::vector<int> exit_codes = run_children(self, children, jobs, [&](size_t i, int code) {
    log << study.runs[i].id << ": "
        << (code == 0 ? "ok" : "failed (exit " + std::to_string(code) + ")") << "\n";
  });

  std::ostringstream csv;
  csv << "run";
  for (const auto& c : study.columns) csv << "," << csv_escape(c);
  csv << ",status,exit_code,makespan_ns,makespan_cycles,simulated_ns,mean_exposed_comm_ns,"
         "max_link_busy_fraction,bw_utilization,effective_bw_per_npu_gbps,io_line_rate_fraction,"
         "wall_seconds,events,error\n";
  int failed = 0, not_run = 0;
  for (size_t i = 0; i < study.runs.size(); ++i) {
    const StudyRun& run = study.runs[i];
    std::string dir = out_dir + "/" + run.id;
    csv << run.id;
    for (const auto& c : study.columns) {
      auto v = run.values.find(c);
      csv << "," << csv_escape(v == run.values.end() ? "" : v->second);
    }
    if (exit_codes[i] == kNotRun) {
      ++not_run;
      csv << ",not run,,,,,,,,,,,,\n";
      continue;
    }
    std::ifstream rf(dir + "/report.json");
    nlohmann::json r;
    bool have = false;
    if (rf) {
      try {
        rf >> r;
        have = r.is_object() && r.contains("status");
      } catch (...) {
      }
    }
    std::string status = have ? r["status"].get<std::string>() : "error";
    if (exit_codes[i] != 0) ++failed;
    csv << "," << status << "," << exit_codes[i];
    if (have) {
      double exposed = 0, busiest = 0, utilisation = 0, sent = 0;
      int senders = 0;
      for (const auto& p : r["npus"]) {
        exposed += p["exposed_comm_ns"].get<double>();
        const double bytes = p["bytes_sent"].get<double>();
        sent += bytes;
        senders += bytes > 0 ? 1 : 0;
      }
      // The Fred paper's effective per-NPU bandwidth: what an NPU that sends puts into the
      // network, over the run (bytes per ns = GB/s).
      const double makespan = r["makespan_ns"].get<double>();
      const double effective = senders > 0 && makespan > 0 ? sent / senders / makespan : 0;
      for (const auto& l : r["links"])
        busiest = std::max(busiest, l["busy_fraction"].get<double>());
      for (const auto& c : r["collectives"]) utilisation += c["bw_utilization"].get<double>();
      const std::optional<double> streamed = io_line_rate_fraction(r);
      const std::string io = streamed ? fmt::format("{}", *streamed) : "";
      // Shortest round-trip text: full precision, no float noise.
      csv << fmt::format(",{},{},{},{},{},{},{},{},{},{}", makespan,
                         r["makespan_cycles"].get<uint64_t>(), r["simulated_ns"].get<double>(),
                         exposed / std::max<size_t>(1, r["npus"].size()), busiest,
                         utilisation / std::max<size_t>(1, r["collectives"].size()), effective, io,
                         r["wall_seconds"].get<double>(), r["events"].get<uint64_t>());
    } else {
      csv << ",,,,,,,,,,";
    }
    csv << "," << csv_escape(exit_codes[i] != 0 ? first_error_line(dir) : "") << "\n";
  }
  write_file_atomically(out_dir + "/results.csv", csv.str());
  log << study.runs.size() << " runs, " << failed << " failed";
  if (not_run) log << ", " << not_run << " not run";
  log << "; table: " << out_dir << "/results.csv\n";
  if (StopSignals::received()) {
    // Runs the signal stopped are not failures of theirs.
    err << "wafersim: study stopped by a signal; results.csv lists the runs done\n";
    return StopSignals::exit_code();
  }
  if (failed > 0)
    err << "wafersim: " << failed << " of " << study.runs.size()
        << " runs failed; their errors are in " << out_dir << "/results.csv\n";
  return failed > 0 ? kStudyFailures : kOk;
}

}  // namespace wafersim::tb
