#include "models/sparse/matrix.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "models/common/hash.h"

namespace wafersim::sparse {

MatrixStats stats_of(const Matrix& m, const Layout& layout) {
  MatrixStats s;
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz();
  uint64_t previous_end = 0;  // linear position after the previous non-zero
  uint64_t row = 0, in_row = 0;
  for (const Entry& e : m.entries) {
    if (e.row != row) {
      row = e.row;
      in_row = 0;
    }
    s.max_row_nnz = std::max(s.max_row_nnz, ++in_row);
    const uint64_t at = e.row * m.cols + e.col;
    s.rlc_fillers += rlc_fillers_for_gap(at - previous_end, layout.run_bits);
    previous_end = at + 1;
  }
  return s;
}

namespace {

const char* const kStructureNames[] = {"uniform", "banded", "power-law", "block"};

// A counter-based generator: the same numbers on every machine and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(mix64(seed)) {}
  uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ull); }
  // Uniform in [0, n), n > 0.
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform in [-1, 1), never zero.
  double value() {
    const double v = static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0;
    return v == 0.0 ? 0.5 : v;
  }

 private:
  uint64_t state_;
};

// `k` distinct numbers of [0, n), sorted (Floyd's sampling when sparse, else the complement's).
std::vector<uint64_t> distinct_sorted(uint64_t n, uint64_t k, Random& random) {
  std::vector<uint64_t> out;
  if (k == 0) return out;
  if (k >= n) {
    out.resize(n);
    std::iota(out.begin(), out.end(), uint64_t{0});
    return out;
  }
  const bool complement = k > n / 2;
  const uint64_t draw = complement ? n - k : k;
  std::unordered_set<uint64_t> chosen;
  chosen.reserve(draw * 2);
  for (uint64_t j = n - draw; j < n; ++j) {
    const uint64_t t = random.below(j + 1);
    chosen.insert(chosen.count(t) ? j : t);
  }
  if (complement) {
    out.reserve(k);
    for (uint64_t i = 0; i < n; ++i)
      if (!chosen.count(i)) out.push_back(i);
  } else {
    out.assign(chosen.begin(), chosen.end());
    std::sort(out.begin(), out.end());
  }
  return out;
}

Matrix from_positions(uint64_t rows, uint64_t cols, const std::vector<uint64_t>& sorted_positions,
                      Random& random) {
  Matrix m{rows, cols, {}};
  m.entries.reserve(sorted_positions.size());
  for (uint64_t p : sorted_positions) m.entries.push_back({p / cols, p % cols, random.value()});
  return m;
}

// The columns of row r inside a band of half-width w around the diagonal scaled to the shape.
std::pair<uint64_t, uint64_t> band_of(uint64_t r, uint64_t rows, uint64_t cols, uint64_t w) {
  const uint64_t centre =
      static_cast<uint64_t>(static_cast<unsigned __int128>(r) * cols / std::max<uint64_t>(rows, 1));
  const uint64_t first = centre > w ? centre - w : 0;
  const uint64_t last = std::min(cols - 1, centre + w);
  return {first, last};
}

Matrix banded(uint64_t rows, uint64_t cols, uint64_t k, Random& random) {
  auto band_positions = [&](uint64_t w) {
    uint64_t total = 0;
    for (uint64_t r = 0; r < rows; ++r) {
      auto [first, last] = band_of(r, rows, cols, w);
      total += last - first + 1;
    }
    return total;
  };
  uint64_t lo = 0, hi = cols;  // the narrowest band that holds k positions
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (band_positions(mid) >= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  std::vector<uint64_t> starts(rows + 1, 0);  // band position index where each row starts
  for (uint64_t r = 0; r < rows; ++r) {
    auto [first, last] = band_of(r, rows, cols, lo);
    starts[r + 1] = starts[r] + (last - first + 1);
  }
  std::vector<uint64_t> positions;
  positions.reserve(k);
  for (uint64_t b : distinct_sorted(starts[rows], k, random)) {
    const uint64_t r = static_cast<uint64_t>(std::upper_bound(starts.begin(), starts.end(), b) -
                                             starts.begin() - 1);
    positions.push_back(r * cols + band_of(r, rows, cols, lo).first + (b - starts[r]));
  }
  return from_positions(rows, cols, positions, random);
}

Matrix power_law(uint64_t rows, uint64_t cols, uint64_t k, Random& random) {
  std::vector<uint64_t> order(rows);  // order[i]: the row with the i-th largest share
  std::iota(order.begin(), order.end(), uint64_t{0});
  for (uint64_t i = rows; i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
  double harmonic = 0;
  for (uint64_t i = 0; i < rows; ++i) harmonic += 1.0 / static_cast<double>(i + 1);
  std::vector<uint64_t> count(rows, 0);
  uint64_t placed = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    const double share = static_cast<double>(k) / (harmonic * static_cast<double>(i + 1));
    count[order[i]] = std::min<uint64_t>(cols, static_cast<uint64_t>(share));
    placed += count[order[i]];
  }
  for (uint64_t i = 0; placed < k; i = (i + 1) % rows)  // the remainder, largest shares first
    if (count[order[i]] < cols) {
      ++count[order[i]];
      ++placed;
    }
  std::vector<uint64_t> positions;
  positions.reserve(k);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c : distinct_sorted(cols, count[r], random)) positions.push_back(r * cols + c);
  return from_positions(rows, cols, positions, random);
}

Matrix block_sparse(uint64_t rows, uint64_t cols, uint64_t k, Random& random) {
  constexpr uint64_t kBlock = 8;
  const uint64_t block_rows = (rows + kBlock - 1) / kBlock,
                 block_cols = (cols + kBlock - 1) / kBlock;
  const uint64_t blocks = block_rows * block_cols;
  const uint64_t chosen = std::min(
      blocks, static_cast<uint64_t>(std::llround(static_cast<double>(k) / (kBlock * kBlock))));
  std::vector<uint64_t> positions;
  for (uint64_t b : distinct_sorted(blocks, chosen, random)) {
    const uint64_t r0 = (b / block_cols) * kBlock, c0 = (b % block_cols) * kBlock;
    for (uint64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
      for (uint64_t c = c0; c < std::min(cols, c0 + kBlock); ++c) positions.push_back(r * cols + c);
  }
  std::sort(positions.begin(), positions.end());
  return from_positions(rows, cols, positions, random);
}

}  // namespace

const char* to_string(Structure s) {
  return kStructureNames[static_cast<int>(s)];
}

std::optional<Structure> parse_structure(const std::string& name) {
  for (int s = 0; s < 4; ++s)
    if (name == kStructureNames[s]) return static_cast<Structure>(s);
  return std::nullopt;
}

std::string structure_names() {
  return "uniform, banded, power-law, block";
}

Matrix generate(uint64_t rows, uint64_t cols, double density, Structure structure, uint64_t seed) {
  Random random(seed);
  const double positions = static_cast<double>(rows) * static_cast<double>(cols);
  const uint64_t k = static_cast<uint64_t>(std::llround(std::clamp(density, 0.0, 1.0) * positions));
  if (rows == 0 || cols == 0) return Matrix{rows, cols, {}};
  switch (structure) {
    case Structure::Uniform:
      return from_positions(rows, cols, distinct_sorted(rows * cols, k, random), random);
    case Structure::Banded:
      return banded(rows, cols, k, random);
    case Structure::PowerLaw:
      return power_law(rows, cols, k, random);
    case Structure::Block:
      return block_sparse(rows, cols, k, random);
  }
  return Matrix{rows, cols, {}};
}

}  // namespace wafersim::sparse
