// The tile scheduler: splits C among threads into rectangles whose borders fall on whole
// micro-tiles, so every element sees the same arithmetic whatever the thread count
// (bitwise-reproducible results). Splits the longer side, which keeps redundant packing (of
// A when splitting N, of B when splitting M) on the cheaper operand, or from four parts on a
// grid of both when that packs less — unless only one operand
// is packed per call (the other prepacked, as a convolution's prepared filter): then the split
// goes across the gathered one, so no part gathers what another gathers too; where neither is
// packed, across the columns when the rows would give each part fewer than four tiles.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "strata/core/load_balance.hpp"
#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"

STRATA_TILE_NS_BEGIN

// [begin, end) of piece `i` of `pieces` along a dimension of length len, borders on multiples
// of unit.
inline void piece_range(int64_t len, int64_t unit, int i, int pieces, int64_t& begin, int64_t& end) {
  const int64_t units = (len + unit - 1) / unit;
  begin = std::min(len, units * i / pieces * unit);
  end = std::min(len, units * (i + 1) / pieces * unit);
}

struct Partition {
  int parts = 1;
  bool split_n = true;  // split columns (else rows)
  int64_t unit = 1;     // borders are multiples of this (NR or MR)
  // A grid instead (grid_m x grid_n == parts, both > 1): rows in grid_m bands on multiples of
  // MR, columns in grid_n on multiples of NR; part p is band p / grid_n, column group p % grid_n.
  int grid_m = 1, grid_n = 1;
  bool grid() const { return grid_m > 1 && grid_n > 1; }

  // [begin, end) of part p along the split dimension of length len.
  void range(int64_t len, int p, int64_t& begin, int64_t& end) const { piece_range(len, unit, p, parts, begin, end); }
  // Columns of an n-column product one part covers (the widest part of equal pieces).
  int64_t part_columns(int64_t n) const {
    const int groups = grid() ? grid_n : split_n ? parts : 1;
    return (n + groups - 1) / groups;
  }
};

// Borders of `parts` pieces of [0, len) for threads whose speeds are in proportion to
// shares[0, parts) (core/load_balance.hpp), each on a multiple of unit: border q at the multiple
// nearest len x (shares[0] + ... + shares[q - 1]) (a piece may be empty), but equal pieces
// (piece_range) unless those promise the slowest piece at least 5% less time -- a unit moved on
// a speed measured a few percent off made two equally fast threads unequal (256^3 f32 on 2
// threads: a unit is 5% of a part; with a 2% threshold quiet runs read 0.94-1.04x of equal
// strips). borders[0] = 0, borders[parts] = len; then shares[p] := the fraction piece p got,
// what the timed run learns from.
inline void share_borders(int64_t len, int64_t unit, int parts, double* shares, int64_t* borders) {
  auto slowest = [&](const int64_t* b) {  // the last part's finish, in units of len / speed
    double t = 0;
    for (int p = 0; p < parts; ++p) t = std::max(t, double(b[p + 1] - b[p]) / shares[p]);
    return t;
  };
  double before = 0;
  borders[0] = 0;
  for (int q = 1; q < parts; ++q) {
    before += shares[q - 1];
    const int64_t at = int64_t(double(len) * before / double(unit) + 0.5) * unit;
    borders[q] = std::clamp(at, borders[q - 1], len);
  }
  borders[parts] = len;
  int64_t equal[kMaxBalancedParts + 1];
  for (int p = 0; p < parts; ++p) piece_range(len, unit, p, parts, equal[p], equal[p + 1]);
  if (slowest(borders) > 0.95 * slowest(equal)) std::copy(equal, equal + parts + 1, borders);
  for (int p = 0; p < parts; ++p) shares[p] = double(borders[p + 1] - borders[p]) / double(len);
}

// Columns [begin, end) of part p of `parts` for a triangular-output product of order n: equal
// shares of the triangle's entries (the upper triangle's columns grow, the lower's shrink), borders
// on multiples of `unit`.
inline void triangle_columns(Triangle tri, int64_t n, int64_t unit, int p, int parts, int64_t& begin,
                             int64_t& end) {
  auto border = [&](int q) -> int64_t {
    if (q <= 0) return 0;
    if (q >= parts) return n;
    const double share = double(q) / parts;  // of the entries left of the border
    const double x = tri == Triangle::upper ? std::sqrt(share) : 1.0 - std::sqrt(1.0 - share);
    return std::min(n, int64_t(x * double(n) / double(unit) + 0.5) * unit);
  };
  begin = border(p);
  end = border(p + 1);
}

// Threads are only worth waking for enough work: ~0.25 MFLOP each. A spinning worker starts
// within a microsecond or two (a sleeping one takes tens); measured with two threads, 64^3
// (0.5 MFLOP) ran 1.3x faster than on one, 100^3 and 128^3 1.5-1.8x. 48^3 stays on one.
// The operand gathered into panels per call while the other is prepacked, if either.
enum class GatheredAlone { neither, a, b };

inline constexpr double min_part_flops = 0.25e6;

// What each part copies of its operands besides the split itself: by default A's rows and B's
// columns it covers (so splitting across an operand makes every part pack all of it); neither
// (the tile-stationary walk of a prepacked A over a B read in place), so that its split can
// follow balance alone; or B alone (a prepacked A against a B the policy packs), so that a
// split of the columns copies nothing twice (the last two rules below).
enum class PartPacks { both, neither, b_only };

inline Partition plan_partition(int64_t m, int64_t n, int64_t k, int mr, int nr, int threads,
                                GatheredAlone gathered = GatheredAlone::neither, PartPacks packs = PartPacks::both) {
  Partition p;
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const int useful = int(std::clamp(flops / min_part_flops, 1.0, double(threads)));
  p.split_n = n >= m;
  // Splitting the gathered operand's dimension needs a few tiles per part to stay balanced.
  if (gathered == GatheredAlone::b && n >= int64_t(4) * nr * useful) p.split_n = true;
  if (gathered == GatheredAlone::a && m >= int64_t(4) * mr * useful) p.split_n = false;
  p.unit = p.split_n ? nr : mr;
  const int64_t units = ((p.split_n ? n : m) + p.unit - 1) / p.unit;
  p.parts = int(std::min<int64_t>(useful, units));
  // From four parts on, a grid when it packs less: each column group packs all of its rows' A
  // and each row band all of its columns' B, so a grid_m x grid_n split packs A grid_n times
  // and B grid_m times, where one strip per part packs the split-across operand `parts` times
  // (16 threads on 2048^3: 4 + 4 copies instead of 16 + 1; OpenBLAS ran 1.2-1.4x faster than
  // the strips on 4-16 cores of an Emerald Rapids VM). Bands and groups keep at least two
  // micro-tiles each.
  if (gathered == GatheredAlone::neither && p.parts >= 4) {
    const double a = double(m) * double(k), b = double(k) * double(n);
    double best = p.split_n ? p.parts * a + b : a + p.parts * b;
    const int64_t m_units = (m + mr - 1) / mr, n_units = (n + nr - 1) / nr;
    for (int gm = 2; gm <= p.parts / 2; ++gm) {
      const int gn = p.parts / gm;
      if (gm * gn != p.parts || m_units < 2 * gm || n_units < 2 * gn) continue;
      const double cost = gn * a + gm * b;
      if (cost < best) best = cost, p.grid_m = gm, p.grid_n = gn;
    }
  }
  // Rows split into fewer than four tiles a part (res4_1x1_1024_256: 256 channels, 2 + 2 tiles of
  // 64) leave the load balancer no border to move when one core runs slower, so a walk that packs
  // neither operand splits its columns (pixels, 6 apart) instead. 2 threads, in-process against
  // the row split, ten runs each beside an A/A run: median 1.10x (0.97-1.18x) against the A/A's
  // 1.02x (0.89-1.14x); with eight tiles a part (res4_1x1_256_1024) the rows stay: the column
  // split read 0.92-0.99x there, each core then reading the whole 1 MB filter.
  if (packs == PartPacks::neither && p.parts > 1 && !p.split_n && !p.grid() && m < int64_t(4) * mr * p.parts &&
      n >= int64_t(4) * nr * p.parts)
    p.split_n = true, p.unit = nr;
  // A prepacked A (a prepared filter) split by rows leaves every part packing all of B; split
  // by columns, each packs its own columns and only reads all of A, which the walk fetches
  // ahead while it computes. The 1x1 layers whose 1024 input channels put B's columns 4 KB
  // apart (packed: in_place_columns_fit_l1) on 2 threads of Zen 4, in-process against the row
  // split, four runs: res4_1x1_1024_256 1.06-1.37x, res5_1x1_1024_512 1.06-1.13x; the other
  // layers within the spread (0.95-1.06x), 1 thread unchanged (one part).
  if (packs == PartPacks::b_only && p.parts > 1 && !p.split_n && !p.grid() && n >= int64_t(4) * nr * p.parts)
    p.split_n = true, p.unit = nr;
  return p;
}

STRATA_TILE_NS_END
