#include "tb/plots/run_plots.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "tb/plots/gnuplot.h"

namespace wafersim::tb {

namespace {

// Busy fraction of the busier direction between two nodes, by node name.
class LinkLoad {
 public:
  explicit LinkLoad(const nlohmann::json& report) {
    for (const auto& l : report["links"])
      busy_[{l["src"].get<std::string>(), l["dst"].get<std::string>()}] =
          l["busy_fraction"].get<double>();
  }
  double between(const std::string& a, const std::string& b) const {
    return std::max(get(a, b), get(b, a));
  }
  double get(const std::string& a, const std::string& b) const {
    auto it = busy_.find({a, b});
    return it == busy_.end() ? 0 : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, double> busy_;
};

}  // namespace

std::string plot_run(const nlohmann::json& report, const topology::Topology& topology,
                     const std::string& dir) {
  const LinkLoad load(report);
  const auto& spec = topology.spec();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  int rows = 1, cols = topology.npu_count();
  std::vector<double> cells;
  std::vector<AxisTic> xtics, ytics;
  std::string title;
  auto router = [](int i) { return "router" + std::to_string(i); };
  auto npu = [](int i) { return "npu" + std::to_string(i); };
  if (spec.shape == topology::Shape::Mesh) {
    // Routers sit on even cells (showing their NPU's injection link); the links between them on
    // the odd cells in between.
    rows = 2 * spec.mesh_y - 1;
    cols = 2 * spec.mesh_x - 1;
    cells.assign(static_cast<size_t>(rows) * cols, nan);
    for (int y = 0; y < spec.mesh_y; ++y)
      for (int x = 0; x < spec.mesh_x; ++x) {
        const int r = y * spec.mesh_x + x;
        cells[(2 * y) * cols + 2 * x] = load.between(npu(r), router(r));
        if (x + 1 < spec.mesh_x)
          cells[(2 * y) * cols + 2 * x + 1] = load.between(router(r), router(r + 1));
        if (y + 1 < spec.mesh_y)
          cells[(2 * y + 1) * cols + 2 * x] = load.between(router(r), router(r + spec.mesh_x));
      }
    for (int x = 0; x < spec.mesh_x; ++x) xtics.push_back({2.0 * x, "x=" + std::to_string(x)});
    for (int y = 0; y < spec.mesh_y; ++y) ytics.push_back({2.0 * y, "y=" + std::to_string(y)});
    title = "link busy fraction: between routers the busier direction; on a router its NPU's link";
  } else if (spec.shape == topology::Shape::Ring) {
    for (int i = 0; i < cols; ++i) cells.push_back(load.between(router(i), router((i + 1) % cols)));
    title = "link utilisation: ring link i -> i+1 (busier direction)";
  } else {
    for (int i = 0; i < cols; ++i) {
      double busiest = 0;
      for (const auto& l : report["links"])
        if (l["src"] == npu(i) || l["dst"] == npu(i))
          busiest = std::max(busiest, l["busy_fraction"].get<double>());
      cells.push_back(busiest);
    }
    title = "link utilisation: each NPU's busiest link";
  }
  double top = 0;
  for (double c : cells)
    if (!std::isnan(c)) top = std::max(top, c);
  std::string problem = plot_heatmap(dir + "/link_utilisation.png", title, "busy fraction", rows,
                                     cols, cells, std::max(top, 1e-9), xtics, ytics);
  if (!problem.empty()) return problem;

  std::vector<std::string> items;
  std::vector<std::vector<double>> values;
  for (const auto& n : report["npus"]) {
    items.push_back("npu" + std::to_string(n["id"].get<int>()));
    const double compute = n["compute_ns"].get<double>() / 1e3;
    const double exposed = n["exposed_comm_ns"].get<double>() / 1e3;
    const double overlapped = n["comm_ns"].get<double>() / 1e3 - exposed;
    const double idle = n["finish_ns"].get<double>() / 1e3 - compute - exposed;
    // The bars add up to the NPU's finish time: overlapped communication runs under compute.
    values.push_back(
        {std::max(0.0, compute - overlapped), overlapped, exposed, std::max(0.0, idle)});
  }
  return plot_stacked_bars(
      dir + "/npu_time.png", "per NPU: compute, communication under compute, exposed communication",
      "time (us)", items,
      {"compute alone", "compute with communication under it", "exposed communication", "idle"},
      values);
}

}  // namespace wafersim::tb
