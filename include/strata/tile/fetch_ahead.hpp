// The operands of the product that comes next (a batch's next entry), fetched into cache a
// few lines per k step while this one computes, so that the next product finds them there.
// A large batch of small products streams every entry from L3 or memory, and each entry is
// too short for the hardware prefetchers to get ahead of its first tiles.
//
// Spread over the k steps, not issued in a burst: the burst (every line of the entry two
// ahead, before each entry) filled the miss buffers the kernels' own loads needed and gained
// nothing here. Spread, with C fetched for writing too (its lines would otherwise be read for
// ownership as the tiles store), in-process against OpenBLAS, 1 thread, batch of 1000:
// f64 32^3 0.52x -> 0.92x, 64^3 0.77x -> 1.19x; f32 64^3 0.60x -> 0.98x, 48^3 0.98x -> 1.22x;
// f64 32^3 x 3000 (72 MB, from memory) 0.42x -> 1.17x.
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/tile/isa_namespace.hpp"
#include "strata/tile/matrix.hpp"

STRATA_TILE_NS_BEGIN

class FetchAhead {
 public:
  // The rows x cols elements of view v (contiguous along its columns when rs == 1, else along
  // its rows; a view with neither is left out); `write` for an output.
  template <class T>
  void add(MatrixView<T> v, int64_t rows, int64_t cols, bool write = false) {
    if (count_ == max_parts || rows <= 0 || cols <= 0) return;
    const bool by_columns = v.rs == 1;
    if (!by_columns && v.cs != 1) return;
    const int64_t len = by_columns ? rows : cols, runs = by_columns ? cols : rows;
    const int64_t stride = by_columns ? v.cs : v.rs;
    Part& p = parts_[count_++];
    p.at = reinterpret_cast<std::uintptr_t>(v.data);
    p.write = write;
    if (stride == len) p.len = len * runs * int64_t(sizeof(T)), p.runs = 1;  // one contiguous run
    else p.len = len * int64_t(sizeof(T)), p.stride = stride * int64_t(sizeof(T)), p.runs = runs;
    lines_ += (p.len / line + 2) * p.runs;  // at most, a run that starts mid-line included
    if (count_ == 1) start_run(cursor_);
  }

  // Lines per step: 1 where that fetches everything within `steps` k steps, else 2 (the rest
  // is left to the hardware). Four a step, where the entry has more than two lines a step (f64
  // 32^3 on the 32x6 tiles: 390 lines over 192 steps), had held the loads of the kernel's own
  // steps back: on Zen 4, in-process against four, batches of 1000 f64 32^3 1.16-1.31x (six
  // runs), of 3000 (72 MB, from memory) 1.18x; f32 32^3-64^3 and f64 48^3-64^3 0.98-1.06x.
  void pace(int64_t steps) { cursor_.per_step = lines_ <= steps ? 1 : 2; }

  bool pending() const { return !cursor_.done(); }
  int per_step() const { return cursor_.per_step; }

  // What a kernel's k loop steps through: the current run's next and last line, in registers
  // (copied out of and back into the FetchAhead around each tile's k loop). The common case,
  // a line within the run, is a compare, a prefetch and an add.
  struct Cursor {
    std::uintptr_t next = 1, last = 0;  // none yet
    FetchAhead* owner = nullptr;
    int per_step = 1;
    bool write = false;
    [[gnu::always_inline]] void step() {
      auto fetch = [](std::uintptr_t at, bool for_write) __attribute__((always_inline)) {
        if (for_write) __builtin_prefetch(reinterpret_cast<const void*>(at), 1);
        else __builtin_prefetch(reinterpret_cast<const void*>(at), 0);
      };
      one(fetch);
      if (per_step > 1) one(fetch);
    }
    bool done() const { return next > last; }
    // The next line: touch(address, for_write), unless all are done.
    template <class Touch>
    [[gnu::always_inline]] void one(Touch&& touch) {
      if (done()) return;
      touch(next, write);
      next += line;
      if (next > last) [[unlikely]] owner->next_run(*this);
    }
  };
  Cursor cursor() {
    cursor_.owner = this;
    return cursor_;
  }
  void resume(const Cursor& c) { cursor_ = c; }

 private:
  static constexpr int max_parts = 3;  // A, B and C
  static constexpr std::uintptr_t line = 64;
  struct Part {
    std::uintptr_t at = 0;
    int64_t len = 0, stride = 0, runs = 0;
    bool write = false;
  };

  // Points c at the first and last line of the current part's current run.
  [[gnu::always_inline]] void start_run(Cursor& c) const {
    const Part& p = parts_[current_];
    c.next = p.at & ~(line - 1);
    c.last = (p.at + std::uintptr_t(p.len) - 1) & ~(line - 1);
    c.write = p.write;
  }

  // Moves c on to the next run (of this part or the next), or to none (done) after the last.
  // Inlined although rarely taken: a call in the k loop would clobber every vector register,
  // and the kernels' accumulators went through the stack.
  [[gnu::always_inline]] void next_run(Cursor& c) {
    Part& p = parts_[current_];
    p.at += std::uintptr_t(p.stride);
    if (--p.runs == 0 && ++current_ == count_) return;
    start_run(c);
  }

  Part parts_[max_parts];
  int count_ = 0, current_ = 0;
  int64_t lines_ = 0;
  Cursor cursor_;
};

STRATA_TILE_NS_END
