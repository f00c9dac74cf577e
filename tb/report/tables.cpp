#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "models/common/error.h"
#include "tb/common/child_processes.h"
#include "tb/common/files.h"
#include "tb/report/report.h"

namespace wafersim::tb {

namespace {

// One CSV: the header names report keys (each carries its unit); rows are the objects of `items`.
void write_csv(const std::string& path, const nlohmann::json& items,
               const std::vector<std::string>& columns) {
  std::ostringstream f;
  for (size_t c = 0; c < columns.size(); ++c) f << (c ? "," : "") << columns[c];
  f << "\n";
  for (const auto& item : items) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto& v = item.contains(columns[c]) ? item[columns[c]] : nlohmann::json();
      f << (c ? "," : "");
      if (v.is_string())
        f << csv_escape(v.get<std::string>());
      else if (!v.is_null())
        f << v.dump();
    }
    f << "\n";
  }
  write_file_atomically(path, f.str());
}

// Cycles from nanoseconds: whole when the time is a whole number of cycles (it is, but for the
// last bits of a double).
double cycles(double ns, double clock_ghz) {
  const double c = ns * clock_ghz;
  const double whole = std::round(c);
  return std::abs(c - whole) <= 1e-9 * std::max(1.0, whole) ? whole : c;
}

}  // namespace

void write_tables(const nlohmann::json& r, const std::string& dir) {
  const double clock_ghz = r["clock_ghz"].get<double>();
  nlohmann::json npus = r["npus"], links = r["links"];
  for (auto& n : npus)
    n["overlapped_comm_ns"] =
        std::round((n["comm_ns"].get<double>() - n["exposed_comm_ns"].get<double>()) * 1e3) / 1e3;
  for (auto& l : links) {
    l["busy_cycles"] = cycles(l["busy_ns"].get<double>(), clock_ghz);
    l["stall_cycles"] = cycles(l["stall_ns"].get<double>(), clock_ghz);
  }
  write_csv(dir + "/npus.csv", npus,
            {"id", "finish_ns", "compute_ns", "comm_ns", "exposed_comm_ns", "overlapped_comm_ns",
             "reduce_busy_ns", "messages_sent", "bytes_sent", "nodes", "nodes_done"});
  write_csv(dir + "/links.csv", links,
            {"id", "src", "dst", "attach", "bandwidth_gbps", "latency_cycles", "units", "bytes",
             "busy_ns", "busy_cycles", "busy_fraction", "stall_ns", "stall_cycles", "faults",
             "resent", "controls"});
  write_csv(
      dir + "/collectives.csv", r["collectives"],
      {"name", "kind", "algorithm", "group", "ranks", "bytes", "start_ns", "end_ns", "duration_ns",
       "algbw_gbps", "busbw_gbps", "ideal_ns", "bw_utilization", "finished_ranks"});
}

}  // namespace wafersim::tb
