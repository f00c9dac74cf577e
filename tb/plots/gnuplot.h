#pragma once
// PNG pictures through gnuplot (Debian's gnuplot-nox). Each function writes the data it plots next
// to the picture, so a user can re-plot it with another tool.
#include <string>
#include <vector>

namespace wafersim::tb {

// Runs a gnuplot script; returns "" on success, else what went wrong (gnuplot missing, or its
// message).
std::string run_gnuplot(const std::string& script, const std::string& script_path);

struct CurvePoint {
  double x, y;
};
struct Curve {
  std::string title;
  std::vector<CurvePoint> points;
};
// A line chart of one or more curves (e.g. latency against offered load), on logarithmic axes if
// `log_axes` (e.g. run time against system size).
std::string plot_curves(const std::string& png, const std::string& title, const std::string& xlabel,
                        const std::string& ylabel, const std::vector<Curve>& curves,
                        bool log_axes = false);

struct AxisTic {
  double position;
  std::string label;
};
// A heat map of a grid of values (row-major, rows x cols), e.g. link utilisation laid out as the
// mesh; NaN cells are shown grey. Tics label chosen rows / columns (default: their indices).
std::string plot_heatmap(const std::string& png, const std::string& title, const std::string& label,
                         int rows, int cols, const std::vector<double>& cells, double max_value,
                         const std::vector<AxisTic>& xtics = {},
                         const std::vector<AxisTic>& ytics = {});

// Stacked bars per item (e.g. each NPU's compute and exposed communication).
std::string plot_stacked_bars(const std::string& png, const std::string& title,
                              const std::string& ylabel, const std::vector<std::string>& items,
                              const std::vector<std::string>& series,
                              const std::vector<std::vector<double>>& values);

}  // namespace wafersim::tb
