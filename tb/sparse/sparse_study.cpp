#include "tb/sparse/sparse_study.h"

#include <fmt/format.h>

#include <Eigen/Sparse>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>

#include "models/common/error.h"
#include "models/sparse/codec.h"
#include "models/sparse/unit_model.h"
#include "tb/config/yaml_file.h"
#include "tb/plots/gnuplot.h"
#include "tb/run/run.h"
#include "tb/sparse/sparse_advise.h"

namespace wafersim::tb {

namespace {

using RowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using ColMajor = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

struct Shape {
  std::string text;
  uint64_t rows, cols;
};

struct StudySpec {
  std::vector<Shape> shapes;
  std::vector<double> densities;
  std::vector<sparse::Structure> structures;
  std::vector<std::pair<sparse::Format, sparse::Format>> conversions;
  uint64_t seed = 1;
  int repeats = 3;
  uint64_t spmm_n = 64;
  sparse::UnitParams unit;
};

StudySpec load_spec(const std::string& file) {
  const YAML::Node y = load_yaml(file);
  StudySpec s;
  auto item = [&](const std::string& key) {
    if (!y[key]) throw InputError(file, key, "missing");
    return y[key];
  };
  for (const auto& n : y) {
    static const std::set<std::string> known = {
        "name",    "shapes", "densities",   "structures",  "conversions", "seed",
        "repeats", "spmm_n", "index_bytes", "value_bytes", "platform",    "set"};
    if (!known.count(n.first.as<std::string>()))
      throw InputError(file, n.first.as<std::string>(), "unknown key");
  }
  for (const auto& n : item("shapes")) {
    const std::string text = n.as<std::string>();
    const auto [rows, cols] = parse_shape(text, file, "shapes");
    // Every conversion's software side may hold the dense matrix.
    if (rows == 0 || cols == 0 ||
        static_cast<double>(rows) * static_cast<double>(cols) >
            static_cast<double>(sparse::kMaxEncodedEntries))
      throw InputError(file, "shapes", "'" + text + "' must have between 1 and 2^28 positions");
    s.shapes.push_back({text, rows, cols});
  }
  for (const auto& n : item("densities")) {
    const double d = n.as<double>();
    if (!(d > 0 && d <= 1))
      throw InputError(file, "densities", fmt::format("{} is outside (0, 1]", d));
    s.densities.push_back(d);
  }
  for (const auto& n : item("structures")) {
    auto st = sparse::parse_structure(n.as<std::string>());
    if (!st)
      throw InputError(file, "structures",
                       "'" + n.as<std::string>() + "' is not one of " + sparse::structure_names());
    s.structures.push_back(*st);
  }
  for (const auto& n : item("conversions")) {
    const std::string text = n.as<std::string>();
    const size_t dash = text.find("->");
    auto from = sparse::parse_format(text.substr(0, dash));
    auto to =
        dash == std::string::npos ? std::nullopt : sparse::parse_format(text.substr(dash + 2));
    if (!from || !to)
      throw InputError(
          file, "conversions",
          "'" + text + "' is not FORMAT->FORMAT (formats: " + sparse::format_names() + ")");
    s.conversions.push_back({*from, *to});
  }
  if (y["seed"]) s.seed = y["seed"].as<uint64_t>();
  if (y["repeats"]) s.repeats = std::max(1, y["repeats"].as<int>());
  if (y["spmm_n"]) s.spmm_n = y["spmm_n"].as<uint64_t>();
  if (y["platform"]) {
    RunOptions o;
    o.platform =
        (std::filesystem::path(file).parent_path() / y["platform"].as<std::string>()).string();
    if (y["set"])
      for (const auto& n : y["set"]) o.overrides.push_back(n.as<std::string>());
    const PlatformSpec p = load_platform_spec(o);
    s.unit = p.npu.sparse_unit_params();
  }
  s.unit.layout.index_bytes = y["index_bytes"] ? y["index_bytes"].as<int>() : 4;
  s.unit.layout.value_bytes = y["value_bytes"] ? y["value_bytes"].as<int>() : 8;
  return s;
}

// The fastest of `repeats` timings of `fn` (each repeated until it spans a millisecond), in ns.
double time_ns(int repeats, const std::function<void()>& fn) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    int calls = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      fn();
      ++calls;
      elapsed = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                    .count();
    } while (elapsed < 1e6);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

// Software conversion on the CPU: Eigen where it has both formats (COO as triplets, CSR / CSC as
// its row- / column-major compressed matrices, dense as a dense matrix), else models/sparse's
// codecs. Returns (ns, implementation).
std::pair<double, std::string> software_ns(const sparse::Matrix& m, sparse::Format from,
                                           sparse::Format to, const sparse::Layout& layout,
                                           int repeats) {
  using sparse::Format;
  auto eigen = [](Format f) {
    return f == Format::Coo || f == Format::Csr || f == Format::Csc || f == Format::Dense;
  };
  if (eigen(from) && eigen(to)) {
    std::vector<Eigen::Triplet<double, int>> triplets;
    triplets.reserve(m.nnz());
    for (const auto& e : m.entries)
      triplets.emplace_back(static_cast<int>(e.row), static_cast<int>(e.col), e.value);
    const int r = static_cast<int>(m.rows), c = static_cast<int>(m.cols);
    RowMajor csr(r, c);
    csr.setFromTriplets(triplets.begin(), triplets.end());
    ColMajor csc(csr);
    const Eigen::MatrixXd dense = from == Format::Dense ? Eigen::MatrixXd(csr) : Eigen::MatrixXd();
    std::function<void()> fn;
    volatile double sink = 0;
    auto keep = [&sink](double v) { sink = sink + v; };
    if (from == Format::Coo && to == Format::Csr)
      fn = [&] {
        RowMajor x(r, c);
        x.setFromTriplets(triplets.begin(), triplets.end());
        keep(x.nonZeros());
      };
    else if (from == Format::Coo && to == Format::Csc)
      fn = [&] {
        ColMajor x(r, c);
        x.setFromTriplets(triplets.begin(), triplets.end());
        keep(x.nonZeros());
      };
    else if (from == Format::Csr && to == Format::Csc)
      fn = [&] {
        ColMajor x(csr);
        keep(x.nonZeros());
      };
    else if (from == Format::Csc && to == Format::Csr)
      fn = [&] {
        RowMajor x(csc);
        keep(x.nonZeros());
      };
    else if (from == Format::Csr && to == Format::Dense)
      fn = [&] {
        Eigen::MatrixXd x(csr);
        keep(x(0, 0));
      };
    else if (from == Format::Csc && to == Format::Dense)
      fn = [&] {
        Eigen::MatrixXd x(csc);
        keep(x(0, 0));
      };
    else if (from == Format::Dense && to == Format::Csr)
      fn = [&] {
        RowMajor x = dense.sparseView();
        keep(x.nonZeros());
      };
    else if (from == Format::Dense && to == Format::Csc)
      fn = [&] {
        ColMajor x = dense.sparseView();
        keep(x.nonZeros());
      };
    else if (to == Format::Coo && from == Format::Csr)
      fn = [&] {
        std::vector<Eigen::Triplet<double, int>> out;
        out.reserve(static_cast<size_t>(csr.nonZeros()));
        for (int k = 0; k < csr.outerSize(); ++k)
          for (RowMajor::InnerIterator it(csr, k); it; ++it)
            out.emplace_back(it.row(), it.col(), it.value());
        keep(static_cast<double>(out.size()));
      };
    if (fn) return {time_ns(repeats, fn), "eigen"};
  }
  const sparse::Encoded input = sparse::encode(m, from, layout);
  return {time_ns(repeats,
                  [&] {
                    sparse::Encoded x = sparse::convert(input, to, layout);
                    (void)x;
                  }),
          "wafersim-codecs"};
}

}  // namespace

int run_sparse_study(const std::string& file, const std::string& out_dir, std::ostream& out) {
  const StudySpec s = load_spec(file);
  std::filesystem::create_directories(out_dir);
  std::ofstream csv(out_dir + "/results.csv");
  csv << "shape,structure,density,nnz,from,to,hw_ns,sw_ns,speedup,sw_impl,hw_bound\n";
  std::ofstream map(out_dir + "/compactness.csv");
  map << "shape,density,smallest,smallest_bytes,dense_bytes,fastest_spmv,fastest_spmm\n";
  const sparse::Layout& layout = s.unit.layout;
  const auto& formats = sparse::all_formats();
  std::vector<double> smallest_cells, spmv_cells;
  for (const Shape& shape : s.shapes) {
    for (double d : s.densities) {
      // The compactness map: the size formulas and the unit's kernels on an even spread.
      const sparse::MatrixStats even = sparse::MatrixStats::even(shape.rows, shape.cols, d, layout);
      const sparse::Advice size = sparse::advise(even, std::nullopt, 1, s.unit);
      const sparse::Advice spmv = sparse::advise(even, sparse::SparseOp::Spmv, 1, s.unit);
      const sparse::Advice spmm = sparse::advise(even, sparse::SparseOp::Spmm, s.spmm_n, s.unit);
      map << fmt::format("{},{},{},{},{},{},{}\n", shape.text, d,
                         sparse::to_string(size.recommended),
                         sparse::format_bytes(size.recommended, even, layout),
                         sparse::format_bytes(sparse::Format::Dense, even, layout),
                         sparse::to_string(spmv.recommended), sparse::to_string(spmm.recommended));
      smallest_cells.push_back(static_cast<double>(size.recommended));
      spmv_cells.push_back(static_cast<double>(spmv.recommended));
      for (sparse::Structure st : s.structures) {
        const sparse::Matrix m = sparse::generate(shape.rows, shape.cols, d, st, s.seed);
        const sparse::MatrixStats stats = sparse::stats_of(m, layout);
        for (auto [from, to] : s.conversions) {
          sparse::SparseJob job;
          job.op = sparse::SparseOp::Convert;
          job.in = from;
          job.out = to;
          job.a = stats;
          job.a_data = &m;
          const sparse::UnitTiming t = sparse::time_job(job, s.unit);
          const double hw = t.ns(s.unit.clock_ghz);
          auto [sw, impl] = software_ns(m, from, to, layout, s.repeats);
          const char* bound = t.memory_cycles >= t.datapath_cycles ? "hbm" : "datapath";
          csv << fmt::format("{},{},{},{},{},{},{:.1f},{:.1f},{:.3f},{},{}\n", shape.text,
                             sparse::to_string(st), d, m.nnz(), sparse::to_string(from),
                             sparse::to_string(to), hw, sw, sw / hw, impl, bound);
        }
        csv.flush();
        out << fmt::format("{} {} density {}: {} conversions\n", shape.text, sparse::to_string(st),
                           d, s.conversions.size());
      }
    }
  }
  // Pictures: one cell per (shape, density), coloured by the format's index.
  std::vector<AxisTic> xtics, ytics;
  for (size_t i = 0; i < s.densities.size(); ++i)
    xtics.push_back({static_cast<double>(i), fmt::format("{}", s.densities[i])});
  for (size_t i = 0; i < s.shapes.size(); ++i)
    ytics.push_back({static_cast<double>(i), s.shapes[i].text});
  std::string legend;
  for (sparse::Format f : formats)
    legend += fmt::format("{}={} ", static_cast<int>(f), sparse::to_string(f));
  const int rows = static_cast<int>(s.shapes.size()), cols = static_cast<int>(s.densities.size());
  for (auto [png, title, cells] :
       {std::make_tuple("smallest_format.png", "smallest format", &smallest_cells),
        std::make_tuple("fastest_spmv.png", "fastest SpMV on the unit", &spmv_cells)}) {
    const std::string problem =
        plot_heatmap(out_dir + "/" + png, std::string(title) + " (" + legend + ")", "format", rows,
                     cols, *cells, static_cast<double>(formats.size() - 1), xtics, ytics);
    if (!problem.empty()) out << "note: " << png << " not drawn: " << problem << "\n";
  }
  out << "wrote " << out_dir << "/results.csv and compactness.csv\n";
  return 0;
}

}  // namespace wafersim::tb
