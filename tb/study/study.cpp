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
#include "tb/config/yaml_file.h"

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
        "astra-network, astra-system) nor a platform key section.key");
  }
}

std::string scalar(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw InputError(file, "key '" + key + "'", "expected a single value");
  return n.Scalar();
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
    for (const auto& e : root["base"]) {
      std::string key = e.first.Scalar();
      if (key == "set" && e.second.IsSequence()) {
        for (const auto& s : e.second) {
          base.push_back("--set");
          base.push_back(scalar(s, path, "set"));
        }
        continue;
      }
      add_value(base, path, key, scalar(e.second, path, key));
    }
  }
  std::vector<std::map<std::string, std::string>> rows;
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
      std::vector<std::map<std::string, std::string>> next;
      for (const auto& row : rows)
        for (const auto& v : e.second) {
          auto r = row;
          r[key] = scalar(v, path, key);
          next.push_back(r);
        }
      rows = next;
    }
  }
  if (root["runs"]) {
    if (!root["runs"].IsSequence()) throw InputError(path, "runs", "expected a list of mappings");
    for (const auto& run : root["runs"]) {
      if (!run.IsMap()) throw InputError(path, "runs", "each run is a mapping of keys to values");
      std::map<std::string, std::string> r;
      for (const auto& e : run) {
        std::string key = e.first.Scalar();
        if (std::find(study.columns.begin(), study.columns.end(), key) == study.columns.end())
          study.columns.push_back(key);
        r[key] = scalar(e.second, path, key);
      }
      rows.push_back(r);
    }
  }
  if (rows.empty()) throw InputError(path, "", "no runs: give a grid or a runs list");
  if (rows.size() > kMaxRuns)
    throw InputError(path, "runs", "more than " + std::to_string(kMaxRuns) + " runs");
  int i = 0;
  for (const auto& row : rows) {
    StudyRun run;
    std::ostringstream id;
    id << "run" << std::setw(3) << std::setfill('0') << i++;
    run.id = id.str();
    run.values = row;
    run.args = base;
    for (const auto& [k, v] : row) add_value(run.args, path, k, v);
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
  std::vector<ChildJob> children;
  for (const StudyRun& run : study.runs) {
    std::string dir = out_dir + "/" + run.id;
    ChildJob job{{"run", "--quiet", "--out", dir}, dir};
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
         "max_link_busy_fraction,wall_seconds,events,error\n";
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
      csv << ",not run,,,,,,,,,\n";
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
      double exposed = 0, busiest = 0;
      for (const auto& p : r["npus"]) exposed += p["exposed_comm_ns"].get<double>();
      for (const auto& l : r["links"])
        busiest = std::max(busiest, l["busy_fraction"].get<double>());
      // Shortest round-trip text: full precision, no float noise.
      csv << fmt::format(",{},{},{},{},{},{},{}", r["makespan_ns"].get<double>(),
                         r["makespan_cycles"].get<uint64_t>(), r["simulated_ns"].get<double>(),
                         exposed / std::max<size_t>(1, r["npus"].size()), busiest,
                         r["wall_seconds"].get<double>(), r["events"].get<uint64_t>());
    } else {
      csv << ",,,,,,,";
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
