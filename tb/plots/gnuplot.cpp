#include "tb/plots/gnuplot.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tb/common/child_processes.h"

namespace wafersim::tb {

namespace {

// A gnuplot string literal. Single quotes, because gnuplot runs `commands` in back quotes and
// expands escapes inside double quotes; inside single quotes only '' (a quote) is special.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c == '\n' ? ' ' : c;
  }
  return out + "'";
}

// An output file's name for `set output`: absolute, since gnuplot pipes output to a command when
// the name starts with '|'.
std::string output_path(const std::string& png) {
  return std::filesystem::absolute(png).lexically_normal().string();
}

std::string tics(const char* axis, const std::vector<AxisTic>& list) {
  if (list.empty()) return "";
  std::ostringstream s;
  s << "set " << axis << "tics (";
  for (size_t i = 0; i < list.size(); ++i)
    s << (i ? ", " : "") << quoted(list[i].label) << " " << list[i].position;
  s << ")\n";
  return s.str();
}

std::string without_extension(const std::string& png) {
  auto dot = png.rfind('.');
  return dot == std::string::npos ? png : png.substr(0, dot);
}

std::string header(const std::string& png, const std::string& title, int width, int height) {
  std::ostringstream s;
  s << "set terminal pngcairo size " << width << "," << height << " font 'sans,10'\n"
    << "set output " << quoted(output_path(png)) << "\n"
    << "set title " << quoted(title) << "\n";
  return s.str();
}

}  // namespace

std::string run_gnuplot(const std::string& script, const std::string& script_path) {
  {
    std::ofstream f(script_path);
    f << script;
    if (!f) return "cannot write " + script_path;
  }
  if (script_path.find('\n') != std::string::npos || script.find('\0') != std::string::npos)
    return "gnuplot cannot take a file name with a line break";
  std::string output;
  // Absolute, so that a name starting with '-' is not taken for an option.
  const int status = run_program({"gnuplot", output_path(script_path)}, output);
  if (status < 0) return "gnuplot is not installed (Debian package gnuplot-nox)";
  if (status != 0) return "gnuplot failed: " + output;
  return "";
}

std::string plot_curves(const std::string& png, const std::string& title, const std::string& xlabel,
                        const std::string& ylabel, const std::vector<Curve>& curves,
                        bool log_axes) {
  const std::string base = without_extension(png);
  std::ostringstream s;
  s << header(png, title, 800, 560) << "set xlabel " << quoted(xlabel) << "\n"
    << "set ylabel " << quoted(ylabel) << "\nset grid\nset key top left\n";
  if (log_axes) s << "set logscale xy\n";
  for (size_t c = 0; c < curves.size(); ++c) {
    s << "$curve" << c << " << EOD\n";
    for (const auto& p : curves[c].points) s << p.x << " " << p.y << "\n";
    s << "EOD\n";
  }
  s << "plot ";
  for (size_t c = 0; c < curves.size(); ++c)
    s << (c ? ", " : "") << "$curve" << c << " using 1:2 with linespoints title "
      << quoted(curves[c].title);
  s << "\n";
  return run_gnuplot(s.str(), base + ".gp");
}

std::string plot_heatmap(const std::string& png, const std::string& title, const std::string& label,
                         int rows, int cols, const std::vector<double>& cells, double max_value,
                         const std::vector<AxisTic>& xtics, const std::vector<AxisTic>& ytics) {
  const std::string base = without_extension(png);
  std::ostringstream s;
  s << header(png, title, 720, 640) << "set cblabel " << quoted(label) << "\n"
    << "set cbrange [0:" << (max_value > 0 ? max_value : 1) << "]\n"
    << "set palette defined (0 'white', 0.5 'orange', 1 'red')\n"
    << "set datafile missing 'nan'\nset size ratio -1\nunset key\n"
    // Cells without a link (NaN) are transparent: grey behind them tells them from idle links.
    << "set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#c8c8c8' "
       "fillstyle solid noborder\n"
    << "set xrange [-0.5:" << cols - 0.5 << "]\nset yrange [" << rows - 0.5 << ":-0.5]\n"
    << tics("x", xtics) << tics("y", ytics) << "$grid << EOD\n";
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      double v = cells[static_cast<size_t>(r) * cols + c];
      s << (c ? " " : "") << (std::isnan(v) ? std::string("nan") : std::to_string(v));
    }
    s << "\n";
  }
  s << "EOD\nplot $grid matrix with image\n";
  return run_gnuplot(s.str(), base + ".gp");
}

std::string plot_stacked_bars(const std::string& png, const std::string& title,
                              const std::string& ylabel, const std::vector<std::string>& items,
                              const std::vector<std::string>& series,
                              const std::vector<std::vector<double>>& values) {
  const std::string base = without_extension(png);
  std::ostringstream s;
  s << header(png, title, std::max<size_t>(640, 40 + items.size() * 14), 480) << "set ylabel "
    << quoted(ylabel) << "\n"
    << "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border "
       "-1\nset boxwidth 0.8\nset key outside top center horizontal\nset xtics rotate by -60\n"
    << "$bars << EOD\n";
  for (size_t i = 0; i < items.size(); ++i) {
    s << quoted(items[i]);
    for (double v : values[i]) s << " " << v;
    s << "\n";
  }
  s << "EOD\nplot ";
  for (size_t k = 0; k < series.size(); ++k)
    s << (k ? ", " : "") << "$bars using " << k + 2 << (k ? "" : ":xtic(1)") << " title "
      << quoted(series[k]);
  s << "\n";
  return run_gnuplot(s.str(), base + ".gp");
}

}  // namespace wafersim::tb
