// The loops around the microkernel for one thread's rectangle of C (BLIS's five loops):
//
//   jc: NC columns of B/C      → pack a KC x NC block of op(B)   (or read it in place)
//   pc: KC steps along k         (beta applies on the first step only)
//   ic: MC rows of A/C         → pack an MC x KC block of op(A)  (or read it in place)
//   jr, ir: NR x MR micro-tiles → microkernel; ragged edges go through a small C buffer
//
// After the last KC step of a micro-tile the epilogue visits it while it is still in L1.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "strata/core/cpu.hpp"
#include "strata/tile/blocking.hpp"
#include "strata/tile/matrix.hpp"
#include "strata/tile/microkernel.hpp"
#include "strata/tile/operand.hpp"
#include "strata/tile/pack.hpp"
#include "strata/tile/workspace.hpp"

STRATA_TILE_NS_BEGIN

// How the operands reach the microkernel.
struct PackPolicy {
  bool pack_a = true;  // false: read op(A) in place (needs unit row stride)
  bool pack_b = true;  // false: read op(B) in place (any strides)
  // With pack_b false, B's columns a stride apart that shares one L1 set (in_place_columns_
  // fit_l1): each column panel copied just before its tiles, column by column, kc + 16 values
  // apart, and read from there as in place (the same values in the same order: the same bits).
  bool copy_b_panels = false;
  // A prepacked A walked tile-stationary over every column panel of a block (Mainloop::
  // a_stationary), its k blocks sized to stay in L1 while B's panels stream past from L2
  // (streaming_blocks, gemm.hpp). Ignored for an A packed per call.
  bool stationary_a = false;
  // A packed per call whose next block (the next rows, or the next k block's first) is fetched
  // into L2 by this block's column panels as they compute, a line a k step (Mainloop::NextA),
  // so that its pack reads L2 instead of L3: chosen by shape for few columns against an A
  // beyond L2, whose blocks are then sized for two in L2 (streaming_blocks, gemm.hpp), and
  // dropped where A's columns would not stay there (columns_fit_l2_sets; the blocks stay, so
  // the bits do not depend on A's column stride).
  bool fetch_next_a = false;
};
// The most column panels a block walked tile-stationary by request may hold (the walk keeps
// them on the stack). Its A tiles fetch the next one's slice only where A is over a quarter of
// L2 (Mainloop::run, fetch_requested_a).
inline constexpr int64_t stationary_block_panels = 32;

// AOp/BOp: operands (operand.hpp). Only in-memory operands of the kernel's own element type
// can be read in place; everything else (narrower types, virtual matrices) is packed.
template <class Kernel, class Epilogue, class AOp, class BOp>
struct Mainloop {
  using T = typename Kernel::T;
  static constexpr bool a_in_place_ok = AOp::has_view && std::is_same_v<typename AOp::value_type, T>;
  static constexpr bool b_in_place_ok = BOp::has_view && std::is_same_v<typename BOp::value_type, T>;
  // Whether the mainloop reads B in place under `policy` (neither prepacked nor packed per call;
  // the trace's `B=in-place`).
  static bool reads_b_in_place(const PackPolicy& policy) { return b_in_place_ok && !b_prepacked && !policy.pack_b; }
  // A bf16 or f16 op(B) in memory, under f32 compute, whose columns hold their depth
  // contiguously can take the in-place route through a widened copy of each column panel
  // (b_panel, below).
  static constexpr bool b_widened_ok =
      BOp::has_view && std::is_same_v<T, float> &&
      (std::is_same_v<typename BOp::value_type, bf16> || std::is_same_v<typename BOp::value_type, f16>);
  static constexpr int MR = Kernel::mr, NR = Kernel::nr;
  // Depth values per element of an in-place B view (byte quads read as int32 slots: 4).
  static constexpr int64_t b_depth_per_value = [] {
    if constexpr (requires { BOp::depth_per_value; }) return BOp::depth_per_value;
    else return int64_t(1);
  }();
  static constexpr bool a_prepacked = is_prepacked<AOp>, b_prepacked = is_prepacked<BOp>;
  static_assert(!a_prepacked || prepacked_width<AOp>() == MR, "a prepacked A must be packed in panels of the kernel's MR rows");
  static_assert(!b_prepacked || prepacked_width<BOp>() == NR, "a prepacked B must be packed in panels of the kernel's NR columns");

  // C[0:m, 0:n] = alpha * op(A) op(B) + beta * C. (row0, col0) locate this rectangle in the
  // whole C for the epilogue and for the triangles (matrix.hpp: `tris.c` needs a packed A and
  // no epilogue, and excludes the other two). Requires k > 0.
  static void run(int64_t m, int64_t n, int64_t k, T alpha, const AOp& a, const BOp& b, T beta, T* c,
                  int64_t ldc, const BlockSizes& bs, PackPolicy policy, const Epilogue& epi, int64_t row0,
                  int64_t col0, Triangles tris = {}) {
    const Triangle tri = tris.c;
    const bool cut_depth = tris.a != Triangle::none || tris.b != Triangle::none;
    if constexpr (!a_in_place_ok) policy.pack_a = true;
    // A packed A runs the kernel's loop with constant A strides; a triangular one is at most a
    // diagonal block, cheap to pack.
    if (tri != Triangle::none || tris.a != Triangle::none) policy.pack_a = true;
    // Where the policy reads B in place, a narrow B with depth-contiguous columns has each
    // column panel widened just before its tiles, column by column (no transpose), and the
    // kernel reads that copy as it reads an f32 B in place: the same values in the same order,
    // so the same bits as packing. Packed, B went through register transposes for few rows
    // (bf16 16 x 4096 x 4096 spent half of its time there).
    bool widen_b = false;
    if constexpr (b_widened_ok) widen_b = !policy.pack_b && b.v.cs == 1;
    const bool widen_by_lines = widen_b && k * n * 2 > int64_t(cpu_features().l2_bytes);  // 2-byte B
    if constexpr (!b_in_place_ok) policy.pack_b = !widen_b;
    const bool b_read_in_place = reads_b_in_place(policy);  // any panel width
    T* bp = nullptr;
    T* ap = nullptr;
    if (policy.pack_b && !b_prepacked)
      bp = static_cast<T*>(
          thread_pack_buffer(1).get(sizeof(T) * std::size_t(panel_depth(bs.kc) * round_up(std::min(bs.nc, n), NR))));
    if (!a_prepacked)
      ap = static_cast<T*>(thread_pack_buffer(0).get(
          sizeof(T) * std::size_t(panel_depth(std::min(bs.kc, k)) * round_up(std::min(bs.mc, m), MR))));
    [[maybe_unused]] auto kernel_state = thread_state();
    alignas(64) T edge[MR * NR];
    [[maybe_unused]] SplitsForL1Ways<Kernel> splits;
    [[maybe_unused]] SplitsForL1Ways<typename decltype(half_rows_of<Kernel>())::type> half_splits;
    // A B read in place that fits in L1 is not fetched ahead: it is there after the first
    // panel, and the fetch loop was a third of the mainloop's own time at 32^3.
    const bool fetch_b = k / b_depth_per_value * n * int64_t(sizeof(T)) > l1_floor_bytes;
    // The half-height kernel's steps are half as long: its fetch of the next B panel pays only
    // where B comes from memory (16 x 4096 x 4096, 64 MB: 1.09-1.12x); from L3 it cost more than
    // the hardware prefetcher left to gain (16 x 1024 x 1024: 0.78-0.81x).
    const bool b_from_memory = k / b_depth_per_value * n * int64_t(sizeof(T)) > int64_t(cpu_features().l3_bytes);
    // Whether a walk tile-stationary by request fetches the next A tile's slice as it runs (as
    // the walk of few panels always does, a_stationary_panels): where A is over a quarter of
    // L2, so that it is not all there still from the last call.
    const bool fetch_requested_a = m * k * int64_t(sizeof(T)) > int64_t(cpu_features().l2_bytes) / 4;

    // Blocks of equal size: n = 4096 in blocks of at most 4092 columns had left a second block
    // of 4 columns that packed all of A again (4096^3: 1.03-1.05x, NT alike).
    const int64_t nc_step = balanced_step(n, bs.nc, NR), mc_step = balanced_step(m, bs.mc, MR);
    // Few rows, all in one block, on a kernel whose B is always packed (AMX): each column panel
    // of B is packed just before its tiles run, so it is still in L1 when the kernel reads it
    // (packed as a whole block first, B's block went out to L2 or L3 and came back panel by
    // panel). The same panels, the same bits. In-process, bf16 16 and 32 x 4096 x 4096
    // 1.08-1.13x, 256 x 1024 x 1024 1.05x, u8s8s32 16 x 4096 x 4096 1.08x, 128^3 1.10x; 1024
    // rows 0.97-0.98x (hence at most 8 tiles a panel); f32 0.95-1.12x (kept off).
    // A kernel whose B packer fills several panels a pass (Kernel::b_panels_per_pack: VNNI's
    // byte quads of a transposed B, four 12-column panels) packs that group before its first
    // panel's tiles, into one group's room at the buffer's start, up to 16 tiles a panel: the
    // packer's stores then hit L1, where the whole block's (64 KB at 256^3) had missed it --
    // in-process, u8s8s32 NT 64^3 1.21x, 128^3-256^3 1.06-1.09x, 512^3 1.03x, 16 x 4096 x 4096
    // 1.20x; 1024 rows in one block 0.96x, so not past 16 tiles.
    constexpr int64_t group_panels = [] {
      if constexpr (requires { Kernel::b_panels_per_pack; }) return int64_t(Kernel::b_panels_per_pack);
      else return int64_t(1);
    }();
    const bool pack_b_per_panel = (requires { Kernel::packed_depth(1); } || group_panels > 1) && policy.pack_b &&
                                  !b_prepacked && !a_prepacked && mc_step >= m &&
                                  m <= (group_panels > 1 ? 16 : 8) * MR;
    // Columns the packed-B buffer's room cycles through (0: every panel at its own offset).
    const int64_t b_room = pack_b_per_panel && group_panels > 1 ? group_panels * NR : 0;
    auto b_offset = [&](int64_t jr) { return b_room ? jr % b_room : jr; };
    for (int64_t jc = 0; jc < n; jc += nc_step) {
      const int64_t nc = std::min(nc_step, n - jc);
      for (int64_t pc = 0; pc < k; pc += bs.kc) {
        const int64_t kc = std::min(bs.kc, k - pc);
        const T beta_step = pc == 0 ? beta : T(1);
        const bool last_step = pc + kc >= k;
        if constexpr (!b_prepacked)
          if (policy.pack_b && !pack_b_per_panel) b.template pack<NR>(jc, nc, pc, kc, bp);
        for (int64_t ic = 0; ic < m; ic += mc_step) {
          const int64_t mc = std::min(mc_step, m - ic);
          // A row block with no entry in the triangle for any of these columns is not packed.
          if (tri == Triangle::upper && row0 + ic > col0 + jc + nc - 1) break;
          if (tri == Triangle::lower && row0 + ic + mc - 1 < col0 + jc) continue;
          const bool direct_a = !policy.pack_a;
          // A block no taller than the half-height kernel is packed at its height (no zero
          // rows), and one exactly as tall runs down each column panel as that kernel's own,
          // fetching the next in-place B panel (below).
          int64_t a_rows = MR;  // the packed panels' row count
          if constexpr (!a_prepacked)
            if (!direct_a && tri == Triangle::none && !cut_depth) a_rows = packed_a_rows(mc);
          // A's full panels packed by the block's first column panel as its tiles read them
          // (fused_a_packing); a ragged last panel on its own, now.
          const bool fuse_a = fused_a_packing(a, direct_a, a_rows, tri, cut_depth, mc, nc, beta_step);
          if constexpr (!a_prepacked) {
            if (fuse_a && mc % MR)
              a.template pack<MR>(ic + mc / MR * MR, mc % MR, pc, kc, ap + mc / MR * MR * panel_depth(kc));
            if (!direct_a && (a_rows != MR || !fuse_a)) pack_a_panels(a, a_rows, ic, mc, pc, kc, ap);
          }
          // A read in place still packs a partial last row panel (the kernel reads whole MR
          // rows), once per block, not once per column panel (8 x 1024 x 1024 packed its 8 rows
          // 171 times) -- unless it is exactly as tall as the half-height kernel, which then
          // reads it in place (8 x 8 x 1024 spent twice as long packing as multiplying); a
          // shorter one is packed at that kernel's height, half the zeros -- or, where the
          // columns after the block hold as many values as the kernel reads past the panel's
          // end (not in the last k block), read in place too: those rows come from the next
          // columns, which exist (the tiles are ragged, so those rows of C are computed on a
          // copied tile and dropped; the panel's own rows get the values packing would give
          // them, the same bits). Packed, 12 x 16 x 4096 spent 36% of its
          // time packing (two column panels read each packed value).
          const int64_t ragged_ir = mc / MR * MR;
          bool ragged_in_place = false;
          int64_t ragged_ps = MR;  // the packed partial panel's row count
          if constexpr (a_in_place_ok) {
            if (direct_a && ragged_ir < mc) {
              bool half = false;
              if constexpr (requires { typename Kernel::HalfRows; }) {
                ragged_in_place = mc - ragged_ir == Kernel::HalfRows::mr;
                half = Kernel::HalfRows::mr < MR && mc - ragged_ir < Kernel::HalfRows::mr;
                if (half && a.v.rs == 1 && (k - pc - kc) * a.v.cs >= Kernel::HalfRows::mr - (mc - ragged_ir))
                  ragged_in_place = true, half = false;
                if (half) {
                  ragged_ps = Kernel::HalfRows::mr;
                  a.template pack<Kernel::HalfRows::mr>(ic + ragged_ir, mc - ragged_ir, pc, kc, ap);
                }
              }
              if (!ragged_in_place && !half) a.template pack<MR>(ic + ragged_ir, mc - ragged_ir, pc, kc, ap);
            }
          }
          const NextA next_a = tri == Triangle::none && tris.b == Triangle::none && !cut_depth
                                   ? next_a_block(a, policy, m, k, ic, mc_step, pc, bs.kc, nc, fuse_a)
                                   : NextA{};
          // A prepacked A over a block of few column panels is walked tile-stationary
          // (a_stationary, below), which holds all the block's B panels at once.
          bool stationary_walk = false;
          if constexpr (a_prepacked) {
            const int64_t most_panels = policy.stationary_a ? stationary_block_panels : a_stationary_panels;
            stationary_walk = tri == Triangle::none && !cut_depth && nc <= most_panels * NR && mc > MR;
          }
          // Room in buffer 1 for a column panel made per call (copied, widened or a packed edge),
          // NR columns of up to kc + 16 values: one for all panels, or one per panel where the
          // walk holds them all at once. The same size for every panel of the block, so the
          // buffer is not reallocated under a panel still held.
          auto panel_room = [&](int64_t jr) {
            const int64_t per_panel = NR * (kc + 16), slots = stationary_walk ? (nc + NR - 1) / NR : 1;
            T* room = static_cast<T*>(thread_pack_buffer(1).get(sizeof(T) * std::size_t(slots * per_panel)));
            return room + (stationary_walk ? jr / NR : 0) * per_panel;
          };
          // B operand of the column panel at jr: packed panel, or in place (full-width tiles and
          // edges that narrower kernels cover exactly), or a packed edge.
          auto b_panel = [&](int64_t jr, int64_t nr) -> BPanel {
            if constexpr (b_prepacked) return {b.panel(jc + jr, pc), NR, 1};
            BPanel bt{bp + b_offset(jr) * panel_depth(kc), NR, 1};
            // policy.pack_b is forced for every operand read neither in place nor widened.
            if constexpr (b_in_place_ok || b_widened_ok) {
              if (!policy.pack_b && (nr == NR || covers_exactly<Kernel>(MR, nr))) {
                // b.v is panel-major: (j, p) at data + j * rs + p * cs.
                if constexpr (b_widened_ok) {  // cs 1: column j's depth run from data + j * rs
                  T* wide = panel_room(jr);
                  const auto* src = b.v.data + (jc + jr) * b.v.rs + pc;
                  // A B beyond L2 is widened a line of every column at a time: the columns'
                  // misses are then in flight together (column after column, the prefetcher met
                  // a new short stream every 43 lines: bf16 16 x 4096 x 4096 1.03-1.09x, 32 x
                  // 4096 x 4096 1.05-1.14x; within L2 0.97-1.0x, so there column by column).
                  int64_t whole = 0;
                  if (widen_by_lines) {
                    whole = kc / 32 * 32;
                    for (int64_t p = 0; p < whole; p += 32)
                      for (int64_t j = 0; j < nr; ++j) widen_run(src + j * b.v.rs + p, wide + j * kc + p, 32);
                  }
                  for (int64_t j = 0; j < nr; ++j)
                    widen_run(src + j * b.v.rs + whole, wide + j * kc + whole, kc - whole);
                  return {wide, 1, kc};
                } else {
                  bt = {b.v.data + (jc + jr) * b.v.rs + pc / b_depth_per_value * b.v.cs, b.v.cs, b.v.rs};
                  // Columns sharing an L1 set: copied, each a run the hardware prefetcher
                  // follows, 16 values further apart than their depth (the copies spread over
                  // sets); the next panel is still fetched from B itself.
                  if constexpr (b_depth_per_value == 1) {
                    if (policy.copy_b_panels && b.v.cs == 1) {
                      const int64_t ld = kc + 16;
                      T* copy = panel_room(jr);
                      for (int64_t j = 0; j < nr; ++j) std::copy_n(bt.data + j * b.v.rs, kc, copy + j * ld);
                      BPanel copied{copy, 1, ld};
                      if (fetch_b && nr == NR && jr + 2 * NR <= nc)
                        copied.next = bt.data + NR * b.v.rs, copied.next_js = b.v.rs;
                      return copied;
                    }
                  }
                  // Streaming B is latency-bound: the next panel is fetched while this one
                  // computes (by run_column, below).
                  if (fetch_b && bt.ps == 1 && nr == NR && jr + 2 * NR <= nc) bt.next = bt.data + NR * bt.js;
                }
              } else if (!policy.pack_b) {
                T* bedge = panel_room(jr);
                b.template pack<NR>(jc + jr, nr, pc, kc, bedge);
                bt.data = bedge;
              }
            }
            return bt;
          };
          if constexpr (a_prepacked) {
            if (stationary_walk) {
              const bool fetch_a = policy.stationary_a ? fetch_requested_a : nc <= a_stationary_panels * NR;
              // The A tile the next call starts with: the next row block's first, else the next k
              // block's (blocks run k block by k block, rows within).
              const T* next_slice = ic + mc < m ? a.panel(ic + mc, pc) : pc + kc < k ? a.panel(0, pc + kc) : nullptr;
              a_stationary(mc, nc, kc, a, ic, pc, b_panel, c + ic + jc * ldc, ldc, alpha, beta_step, edge, fetch_a,
                           next_slice, b_read_in_place);
              if constexpr (!Epilogue::is_identity)
                if (last_step)
                  for (int64_t jr = 0; jr < nc; jr += NR)
                    epi(c + ic + (jc + jr) * ldc, ldc, row0 + ic, col0 + jc + jr, mc, std::min<int64_t>(NR, nc - jr));
              continue;
            }
          }
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const int64_t nr = std::min<int64_t>(NR, nc - jr);
            if constexpr (!b_prepacked)
              if (pack_b_per_panel && jr % (group_panels * NR) == 0)
                b.template pack<NR>(jc + jr, std::min(group_panels * NR, nc - jr), pc, kc,
                                    bp + b_offset(jr) * panel_depth(kc));
            const BPanel bpanel = b_panel(jr, nr);
            const T* bt = bpanel.data;
            const int64_t b_ps = bpanel.ps, b_js = bpanel.js;
            // A triangular op(B): this column panel's nonzero depth within the k block, [b0, b1).
            const int64_t gj = col0 + jc + jr;
            const int64_t b0 = tris.b == Triangle::lower ? std::clamp<int64_t>(gj - pc, 0, kc) : 0;
            const int64_t b1 = tris.b == Triangle::upper ? std::clamp<int64_t>(gj + nr - pc, b0, kc) : kc;
            if constexpr (!a_prepacked && Epilogue::is_identity) {
              if (tri != Triangle::none) {
                triangle_column(tri, row0 + ic - (col0 + jc + jr), mc, nr, kc, ap, bt, b_ps, b_js,
                                c + ic + (jc + jr) * ldc, ldc, alpha, beta_step, edge);
                continue;
              }
            }
            // Full tiles of a packed A against a full B panel: one kernel call down the column
            // (B's addressing set up once; in-process A/B, NHWC 1x1 convolutions 1.03-1.04x in
            // sum, 1.13x at depth 64 with 16 tiles a column) -- a single tile too where that call
            // fetches the next in-place B panel (32 x 4096 x 4096: 1.36-1.38x on 1 thread, 1.13x on
            // 2); the rest tile by tile.
            int64_t first_ir = 0;
            if constexpr (requires { Kernel::run_column; }) {
              const int64_t full = mc / MR;
              const bool split = nr == NR && splits(b_ps, b_js);
              if (nr == NR && (full > 1 || (full == 1 && (bpanel.next || split))) && !direct_a &&
                  tris.a == Triangle::none) {
                const T* a0;
                int64_t a_panel;
                // A prepacked A (a prepared filter) comes from memory on the block's first column
                // panel, each tile's panel slice a separate run the hardware prefetcher has to
                // find again: the kernel fetches the next tile's slice (the next block's first
                // after the last) while it computes. In-process, NHWC res5 layers (49 columns,
                // 4-9 MB filters) 1.03-1.11x, res4 1x1 0.97-1.04x; fetching both lines of each
                // step's slice rather than one, res5_proj_s2 1.07-1.20x more and Winograd
                // res5_3x3 1.67-1.69x (F(2x2) at batch 1, F(4x4) at batch 8).
                const T* fetch = nullptr;
                if constexpr (a_prepacked) {
                  a0 = a.panel(ic, pc), a_panel = a.panel(ic + MR, pc) - a0;
                  if (jr == 0) fetch = ic + mc < m ? a.panel(ic + mc, pc) : a0 + (full - 1) * a_panel;
                } else {
                  a0 = ap, a_panel = MR * panel_depth(kc);
                }
                // The next B panel read in place is fetched a line per k step: in-process, NHWC
                // 1x1 layers on 56x56 images 1.02-1.04x at batch 1, 1.07-1.12x at batch 8, sgemm
                // 64x3136x256 1.04x, 128^3-1024^3 1.00x, against all its lines in a burst at the
                // panel's start. The tile-by-tile walk below fetches nothing: the burst there
                // had cost 16 x 4096 x 4096 5-11% and 8 x 1024 x 1024 11%.
                if constexpr (fuses_a_packing())
                  if (fuse_a && jr == 0) {
                    Kernel::run_column_packing_a(full, kc, &a.v(ic, pc), a.v.cs, ap, bt, b_ps, b_js, c + ic + jc * ldc,
                                                 ldc, alpha, beta_step);
                    first_ir = full * MR;
                  }
                if (split && !a_prepacked && first_ir == 0 && b0 == 0 && b1 == kc) {
                  run_column_in_fitting_widths<Kernel>(full, kc, a0, a_panel, bt, b_js, c + ic + (jc + jr) * ldc, ldc,
                                                       alpha, beta_step, bpanel.next);
                  first_ir = full * MR;
                }
                if constexpr (fetches_lines<Kernel>())
                  if (first_ir == 0 && next_a.fetches(jr) && b_ps == NR && b_js == 1) {
                    const int64_t from = next_a.first_column(jr), to = next_a.first_column(jr + NR);
                    Kernel::run_column_fetching(full, kc, a0, a_panel, bt, c + ic + (jc + jr) * ldc, ldc, alpha,
                                                beta_step, next_a.at + from * next_a.lda, next_a.lda, to - from,
                                                next_a.rows);
                    first_ir = full * MR;
                  }
                if (first_ir == 0)
                  Kernel::run_column(full, b1 - b0, a0 + b0 * MR, a_panel, bt + b0 * b_ps, b_ps, b_js,
                                     c + ic + (jc + jr) * ldc, ldc, alpha, beta_step, fetch,
                                     bpanel.next ? bpanel.next + b0 : nullptr, 0, bpanel.next_js, b_from_memory);
                first_ir = full * MR;
              }
              if constexpr (requires { typename Kernel::HalfRows; })
                if (a_rows == Kernel::HalfRows::mr && mc == a_rows && nr == NR) {
                  using Half = typename Kernel::HalfRows;
                  if (half_splits(b_ps, b_js)) {
                    run_column_in_fitting_widths<Half>(1, kc, ap, 0, bt, b_js, c + ic + (jc + jr) * ldc, ldc, alpha,
                                                       beta_step, bpanel.next);
                    first_ir = mc;
                  } else if (b_from_memory && bpanel.next) {
                    Half::run_column(1, kc, ap, 0, bt, b_ps, b_js, c + ic + (jc + jr) * ldc, ldc, alpha, beta_step,
                                     nullptr, bpanel.next, 0, 0, b_from_memory);
                    first_ir = mc;
                  }
                }
            }
            for (int64_t ir = first_ir; ir < mc; ir += MR) {
              const int64_t mr = std::min<int64_t>(MR, mc - ir);
              T* ct = c + (ic + ir) + (jc + jr) * ldc;
              // A operand: packed panel, or in place (full-height tiles), or a packed edge.
              const T* at;
              if constexpr (a_prepacked) at = a.panel(ic + ir, pc);
              else at = ap + ir * panel_depth(kc);
              int64_t a_ps = a_rows;
              if constexpr (a_in_place_ok) {  // policy.pack_a is forced for every other operand
                if (direct_a && (mr == MR || ragged_in_place)) {
                  at = a.v.data + (ic + ir) * a.v.rs + pc * a.v.cs;
                  a_ps = a.v.cs;
                } else if (direct_a) {
                  at = ap;  // the partial last panel, packed above
                  a_ps = ragged_ps;
                }
              }
              if (cut_depth) {
                // The tile's depth: op(B)'s range cut to where these rows of a triangular
                // op(A) are nonzero (a tile with none still applies beta).
                const int64_t gi = row0 + ic + ir;
                const int64_t d0 = tris.a == Triangle::upper ? std::clamp<int64_t>(gi - pc, b0, b1) : b0;
                const int64_t d1 = tris.a == Triangle::lower ? std::clamp<int64_t>(gi + mr - pc, d0, b1) : b1;
                run_tile(mr, nr, d1 - d0, at + d0 * a_ps, a_ps, bt + d0 * b_ps, b_ps, b_js, ct, ldc, alpha, beta_step,
                         edge);
                continue;
              }
              run_tile(mr, nr, kc, at, a_ps, bt, b_ps, b_js, ct, ldc, alpha, beta_step, edge);
            }
            // The epilogue visits the finished mc x nr column panel while it is still in L1/L2:
            // one program run per panel rather than per micro-tile, so its per-step cost is
            // spread over mc rows instead of MR.
            if constexpr (!Epilogue::is_identity)
              if (last_step) epi(c + ic + (jc + jr) * ldc, ldc, row0 + ic, col0 + jc + jr, mc, nr);
          }
        }
      }
    }
  }

  static int64_t round_up(int64_t x, int64_t u) { return (x + u - 1) / u * u; }

  // A's next block (PackPolicy::fetch_next_a), fetched into L2 while the current one computes:
  // `rows` x `cols` values from `at`, columns `lda` apart, split among the block's full column
  // panels from `first_panel` on (the one that packs A as it reads it, fused_a_packing, fetches
  // nothing) in equal runs of whole columns, each named a line a k step (MicroKernel::
  // run_column_fetching): a panel's tiles take kc steps each, at least the lines of its share
  // wherever two panels share a block (one panel alone names half of them). Each value of A then
  // serves at most 12 column panels (few columns), and its pack from L3 had cost as much as a
  // sixth of the product: in-process, 1 thread, Zen 4, sgemm NN 2000 x 64 x 2000 1.16x, 3000 x 32
  // x 3000 1.24x, 4000 x 64 x 4000 1.10x, 1500 x 96 x 1500 1.10x, 1000 x 48 x 3000 1.16x, 2000 x
  // 128 x 2000 1.11-1.13x; 2 threads 1.03-1.23x.
  struct NextA {
    const T* at = nullptr;  // nullptr: nothing to fetch
    int64_t lda = 0, rows = 0, cols = 0, first_panel = 0, panels = 0;
    bool fetches(int64_t jr) const { return at && jr / NR >= first_panel && jr / NR < first_panel + panels; }
    // The first column of the share of the panel at jr (and, at jr + NR, the end of it).
    int64_t first_column(int64_t jr) const { return (jr / NR - first_panel) * cols / panels; }
  };
  // Whether A's block, as blocks `bs` cut it, stays in L2 fetched (columns_fit_l2_sets): A a
  // matrix of T with unit row stride.
  static bool a_block_fits_l2_sets(const AOp& a, const BlockSizes& bs) {
    if constexpr (a_in_place_ok && !a_prepacked)
      return a.v.rs == 1 && columns_fit_this_l2(a.v.cs * int64_t(sizeof(T)), bs.mc * int64_t(sizeof(T)), bs.kc);
    return false;
  }
  static NextA next_a_block(const AOp& a, const PackPolicy& policy, int64_t m, int64_t k, int64_t ic, int64_t mc_step,
                            int64_t pc, int64_t kc_step, int64_t nc, bool fused) {
    NextA next;
    if constexpr (a_in_place_ok && !a_prepacked) {
      const bool more_rows = ic + mc_step < m;
      const int64_t row = more_rows ? ic + mc_step : 0, col = more_rows ? pc : pc + kc_step;
      if (!policy.fetch_next_a || !policy.pack_a || a.v.rs != 1 || col >= k) return next;
      next.first_panel = fused ? 1 : 0;
      next.panels = nc / NR - next.first_panel;
      if (next.panels <= 0) return next;
      next.at = &a.v(row, col);
      next.lda = a.v.cs;
      next.rows = std::min(mc_step, m - row);
      next.cols = std::min(kc_step, k - col);
    }
    return next;
  }

  // A B panel read in place whose K::nr columns fall into one L1 set (a multiple of 4 KB apart
  // on Zen 4's 32 KB 8-way L1; only few rows read B in place so, see choose_pack_policy) evicts
  // its own lines between the steps that share them: run it as two walks down the column, the
  // kernel's narrower width (8 of 12 columns, within the ways) and the rest. A's panel is read
  // twice, from L1 or L2. Each walk fetches its columns of the next panel into L2 (PanelFetch):
  // those columns share the same sets, and fetched into L1 they evicted the panel being read
  // (16 x 2048 x 4096 1.30x, 16 x 2048 x 2048 1.09x over the L1 fetch). Every such panel takes
  // the two walks, with or without a next panel, and both keep one accumulator set
  // (run_column_one_set; the 16-row kernel's 4-wide rest would otherwise alternate two,
  // MicroKernel::chains): each entry is summed as the 12-wide kernel sums it, so the bits depend
  // neither on B's column stride nor on where a part's columns end (gemm_ex's widened panels,
  // read at another stride, give sgemm's bits). In-process against the session's start, Zen 4,
  // 1 thread: sgemm 16 x 1024-4096 x 1024-4096 1.23-1.36x, 32-128 rows x 1024-4096 1.04-1.11x,
  // TN 4096 x 16 x 4096 1.31x, dgemm 8-16 rows 1.11-1.22x; 2 threads 1.02-1.48x. Whether a
  // panel splits (only where K has the two narrower kernels and they cover its width):
  template <class K>
  static bool splits_for_l1_ways(int64_t b_ps, int64_t b_js) {
    if constexpr (requires { typename K::NarrowCols::NarrowCols; K::NarrowCols::run_column_one_set; }) {
      using Wide = typename K::NarrowCols;
      if constexpr (Wide::nr + Wide::NarrowCols::nr == K::nr) {
        const int64_t col_bytes = b_js * int64_t(sizeof(T));
        return b_ps == 1 && !in_place_columns_fit_l1(col_bytes, K::nr) && in_place_columns_fit_l1(col_bytes, Wide::nr);
      }
    }
    return false;
  }
  // splits_for_l1_ways<K> asked once per way B's panels are read (their strides) in a call,
  // rather than per panel: the answer counts each column's L1 set with two divisions, twenty
  // a 6-wide panel, and at depth 64 that had been ~10% of a 64 x 3136 x 64 product (the
  // res2_1x1_64_64 convolution on AVX-512's 64x6 tiles, stand-alone 0.82 -> 0.91 of an FMA-only
  // loop).
  template <class K>
  struct SplitsForL1Ways {
    int64_t ps = -1, js = -1;
    bool split = false;
    bool operator()(int64_t b_ps, int64_t b_js) {
      if (b_ps != ps || b_js != js) ps = b_ps, js = b_js, split = splits_for_l1_ways<K>(b_ps, b_js);
      return split;
    }
  };
  template <class K>
  static auto half_rows_of() {
    if constexpr (requires { typename K::HalfRows; }) return std::type_identity<typename K::HalfRows>{};
    else return std::type_identity<K>{};
  }
  // The two walks, where splits_for_l1_ways<K> said so (B's columns b_js apart, steps adjacent).
  template <class K>
  static void run_column_in_fitting_widths(int64_t tiles, int64_t kc, const T* a, int64_t a_panel, const T* b,
                                           int64_t b_js, T* c, int64_t ldc, T alpha, T beta, const T* next_b) {
    if constexpr (requires { typename K::NarrowCols::NarrowCols; K::NarrowCols::run_column_one_set; }) {
      using Wide = typename K::NarrowCols;
      using Rest = typename Wide::NarrowCols;
      Wide::run_column_one_set(tiles, kc, a, a_panel, b, b_js, c, ldc, alpha, beta, next_b, true);
      Rest::run_column_one_set(tiles, kc, a, a_panel, b + Wide::nr * b_js, b_js, c + Wide::nr * ldc, ldc, alpha,
                               beta, next_b ? next_b + Wide::nr * b_js : nullptr, true);
    }
  }

  // Whether the kernel can pack A's panels while its first column panel reads them in place
  // (MicroKernel::run_column_packing_a): an A of the kernel's type with adjacent rows.
  static constexpr bool fuses_a_packing() {
    if constexpr (a_in_place_ok && requires { Kernel::run_column_packing_a; Kernel::chains; })
      return Kernel::chains == 1;
    return false;
  }
  // Whether this block's A is packed by its first column panel instead of before it: a packed
  // A (not a half-height block, no triangles) of at least two full tiles, a first panel of NR
  // columns, and tiles that read no C (beta 0: the block's first k step under beta 0). The copy
  // from L3 then overlaps the FMAs it feeds, one slice fetched 8 steps ahead (stand-alone, the
  // first column panel of 512 x 512 and 544 x 256 blocks 1.3-1.6x, the whole block 1.02-1.03x;
  // in-process NN 256^3-512^3 1.03-1.04x); the same values, so the same bits. Where the tiles
  // also read C, its misses joined A's: NN 1024^3 and 2048^3 0.98x fused in every k block.
  static bool fused_a_packing(const AOp& a, bool direct_a, int64_t a_rows, Triangle tri, bool cut_depth, int64_t mc,
                              int64_t nc, T beta) {
    if constexpr (fuses_a_packing())
      return !direct_a && a_rows == MR && tri == Triangle::none && !cut_depth && a.v.rs == 1 && mc >= 2 * MR &&
             nc >= NR && panel_depth(1) == 1 && beta == T(0);
    return false;
  }

  // The elements of T one row of a packed panel of depth kc takes: kc, or the kernel's own
  // count where its panels hold more or fewer (AMX's pair slots, rounded up to whole tiles).
  static int64_t panel_depth(int64_t kc) {
    if constexpr (requires { Kernel::packed_depth(kc); }) return Kernel::packed_depth(kc);
    else return kc;
  }

  // Per-thread state a kernel keeps for a whole rectangle (AMX's tile configuration, loaded
  // once rather than per tile), held by the caller for the run; nothing for other kernels.
  struct NoState {};
  static auto thread_state() {
    if constexpr (requires { typename Kernel::ThreadState; }) return typename Kernel::ThreadState{};
    else return NoState{};
  }

  // A column panel of op(B) as the kernel reads it: element (p, j) at data[p * ps + j * js].
  // next: the next panel, where it is read in place alongside and worth fetching ahead.
  struct BPanel {
    const T* data;
    int64_t ps, js;
    const T* next = nullptr;
    int64_t next_js = 0;  // the next panel's column stride, where it differs from js
  };

  // A prepacked A (a prepared filter, Winograd's transformed one) against a block of at most
  // this many column panels is walked tile-stationary: each A tile meets every column panel
  // while it is in L1, so A, streamed from memory or L3 (a block of all rows can exceed L2),
  // is read once per block rather than once per column panel. In-process at batch 1, 1 thread
  // (NHWC, prepared filters): Winograd res5_3x3 (16 tiles) 1.06-1.08x, res5_1x1_2048_512 (49
  // pixels) 1.04-1.06x, the other res5/res4 1x1 layers 0.99-1.02x; 2 threads 0.96-1.03x.
  static constexpr int64_t a_stationary_panels = 5;

  // C[0:mc, 0:nc] of one block, A tile by A tile; b_panel(jr, nr) gives the B panels (their
  // next panels fetched by the first tile only: the others find them in L2). The same kernel
  // calls per tile as the column-panel walk: the same bits. While a tile computes, its column
  // panels fetch the next tile's slice from memory (run_column's line fetch, into L2), the
  // slice split among them in proportion to their widths, so that memory is asked for it at
  // the rate the tile consumes it. In-process at batch 1, 1 thread, against the whole slice
  // fetched during the first panel (4-5 times that rate): res5_1x1_512_2048, res5_proj_s2,
  // res5_1x1_2048_512 1.04-1.07x (full panels; into L1 rather than L2 alike); Winograd
  // res5_3x3 (16 tiles, then as 12 + 4, the narrow panel taking its quarter) 1.04-1.10x.
  // fetch_a: whether the tiles fetch at all; next_slice: what the block's last tile fetches (the
  // A tile the next call starts with, or nullptr). A first tile that fetches A fetches the next
  // B panels too. A walk tile-stationary by request fetches where its A (a 1x1 layer's filter)
  // is over a quarter of L2: res4_1x1_1024_256 and res4_1x1_256_1024 (1 MB filters, 17 panels
  // a block) 1.02x in-process at batch 1, 1 thread, three runs (each build with its own x); the
  // smaller filters 0.96-0.99x when fetched, as they are mostly still in L2 from the last call.
  template <class BPanels>
  static void a_stationary(int64_t mc, int64_t nc, int64_t kc, const AOp& a, int64_t ic, int64_t pc,
                           const BPanels& b_panel, T* c, int64_t ldc, T alpha, T beta, T* edge, bool fetch_a,
                           const T* next_slice, bool any_widths) {
    // The column panels: NR wide, the last one what is left; or, where B is read in place
    // (any_widths), a remainder of NR / 3 balanced with the panel before it (panel_width, the
    // same bits: Winograd's 16 tiles as 8 + 8, not 12 + 4, whose 32x4 tiles had run at 0.8 of
    // the 12-column rate per column: res5_3x3 1.02-1.07x in-process at batch 1, 1 thread, four
    // runs; res4_3x3, its U from memory, 0.99-1.01x).
    constexpr int64_t most = stationary_block_panels + 1;
    BPanel panels[most];
    int64_t from[most], cols[most], count = 0, full = 0;
    for (int64_t j0 = 0; j0 < nc; j0 += cols[count++]) {
      cols[count] = any_widths ? panel_width<Kernel>(nc, j0, mc) : std::min<int64_t>(NR, nc - j0);
      from[count] = j0;
      full += cols[count] == NR;
    }
    // Bytes of the next slice panel q's k step names (0: it fetches nothing), from offset[q] on:
    // at most MR values a step (128 bytes for f32 and f64, two lines: LineFetch's most). A
    // narrow panel takes a share only beside at most one full panel (12 + 4, or 8 + 8 with
    // none): beside two or more their shares suffice, and a narrow one's had cost res2_3x3 (8
    // columns beside 4 full panels, its U in L2) 2-3%.
    int64_t widths[most] = {}, share[most], offset[most];
    for (int64_t q = 0; q < count; ++q) {
      const int64_t nr = cols[q];
      panels[q] = b_panel(from[q], nr);
      if (fetch_a && (nr == NR || full <= 1) && fetching_panel(nr, panels[q])) widths[q] = nr;
    }
    split_slice_fetch(widths, count, kc * MR * int64_t(sizeof(T)), kc, share, offset);
    for (int64_t ir = 0; ir < mc; ir += MR) {
      const int64_t mr = std::min<int64_t>(MR, mc - ir);
      const T* at = a.panel(ic + ir, pc);
      for (int64_t q = 0; q < count; ++q) {
        const int64_t nr = cols[q];
        const BPanel& bt = panels[q];
        T* ct = c + ir + from[q] * ldc;
        if constexpr (requires { Kernel::run_column; }) {
          const T* following = ir + MR < mc ? a.panel(ic + ir + MR, pc) : next_slice;
          if (share[q] > 0 && mr == MR && following) {
            const T* next = reinterpret_cast<const T*>(reinterpret_cast<const char*>(following) + offset[q]);
            const T* next_b = ir == 0 && nr == NR ? bt.next : nullptr;
            // One kernel covers the tile exactly (fetching_panel), with a line fetch.
            cover_narrowest<Kernel>(MR, nr, [&]<class K>(int64_t) {
              if constexpr (fetches_lines<K>())
                K::run_column(1, kc, at, 0, bt.data, bt.ps, bt.js, ct, ldc, alpha, beta, next, next_b, share[q]);
              else
                K::run(kc, at, MR, bt.data, bt.ps, bt.js, ct, ldc, alpha, beta);
            });
            continue;
          }
          // The block's first A tile meets each in-place column panel first, from L3 or memory:
          // it fetches the next panel a line a step, as the column walk does.
          if (ir == 0 && bt.next && mr == MR && nr == NR) {
            Kernel::run_column(1, kc, at, 0, bt.data, bt.ps, bt.js, ct, ldc, alpha, beta, nullptr, bt.next);
            continue;
          }
        }
        run_tile(mr, nr, kc, at, MR, bt.data, bt.ps, bt.js, ct, ldc, alpha, beta, edge);
      }
    }
  }

  // Whether kernel K's run_column takes a line fetch (one accumulator set).
  template <class K>
  static constexpr bool fetches_lines() {
    if constexpr (requires { K::run_column; K::chains; }) return K::chains == 1;
    return false;
  }
  // Whether an MR x nr tile against panel b can fetch as it runs: one kernel covers it exactly,
  // it takes a line fetch, and b's layout is one its line-fetching loops read (in place, or
  // packed NR wide).
  static bool fetching_panel(int64_t nr, const BPanel& b) {
    int kernels = 0;
    bool fetches = false;
    cover_narrowest<Kernel>(MR, nr, [&]<class K>(int64_t) {
      ++kernels;
      if constexpr (fetches_lines<K>())
        fetches = K::mr == MR && K::nr == nr && (b.ps == 1 || (b.ps == K::nr && b.js == 1));
    });
    return kernels == 1 && fetches;
  }

  // One mc x nr column panel of a triangular-output product, A packed at ap. `offset` is the
  // panel's first row minus its first column in the whole C: local entry (i, j) is in the
  // upper triangle when offset + i <= j. Tiles wholly inside run as usual (down the column in
  // one kernel call where they are full), tiles the diagonal crosses go through a buffer.
  static void triangle_column(Triangle tri, int64_t offset, int64_t mc, int64_t nr, int64_t kc, const T* ap,
                              const T* bt, int64_t b_ps, int64_t b_js, T* c, int64_t ldc, T alpha, T beta, T* edge) {
    const bool upper = tri == Triangle::upper;
    // Rows [need_lo, need_hi) hold triangle entries; [in_lo, in_hi) are wholly inside.
    const int64_t need_lo = upper ? 0 : std::clamp<int64_t>(-offset, 0, mc);
    const int64_t need_hi = upper ? std::clamp<int64_t>(nr - offset, 0, mc) : mc;
    const int64_t in_lo = upper ? 0 : std::clamp<int64_t>(nr - 1 - offset, 0, mc);
    const int64_t in_hi = upper ? std::clamp<int64_t>(1 - offset, 0, mc) : mc;
    alignas(64) T tile[MR * NR];
    for (int64_t ir = need_lo / MR * MR; ir < need_hi; ir += MR) {
      const int64_t mr = std::min<int64_t>(MR, mc - ir);
      const T* at = ap + ir * panel_depth(kc);
      T* ct = c + ir;
      if (ir >= in_lo && ir + mr <= in_hi) {
        if constexpr (requires { Kernel::run_column; }) {
          const int64_t full = (std::min(in_hi, mc) - ir) / MR;  // full tiles inside from here on
          if (nr == NR && full > 1) {
            Kernel::run_column(full, kc, at, MR * panel_depth(kc), bt, b_ps, b_js, ct, ldc, alpha, beta, nullptr);
            ir += (full - 1) * MR;
            continue;
          }
        }
        run_tile(mr, nr, kc, at, MR, bt, b_ps, b_js, ct, ldc, alpha, beta, edge);
        continue;
      }
      run_tile(mr, nr, kc, at, MR, bt, b_ps, b_js, tile, MR, alpha, T(0), edge);
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t i = 0; i < mr; ++i) {
          const int64_t d = offset + ir + i - j;  // row minus column in the whole C
          if (upper ? d > 0 : d < 0) continue;
          T& out = ct[i + j * ldc];
          out = beta == T(0) ? tile[i + j * MR] : tile[i + j * MR] + beta * out;
        }
    }
  }


  // A product that is one block of run's (its rows within bs.mc, its depth within bs.kc, its
  // columns within bs.nc) on one thread, A packed and B read in place, every column panel's
  // width covered exactly by the kernels (one_block_covers): the walk run makes for it -- A
  // packed whole, then each column panel's tiles down the rows, tile by tile, the epilogue on
  // the finished panel -- without run's blocking set-up, which for small products is a large
  // share: a batch of 1000 bf16 products, stand-alone against gemm_operands, 16^3 1.63x, 32^3
  // 1.09-1.14x, 48^3 1.08x, 64^3 1.05x, 96^3 1.04x. The same kernels and sums: the same bits.
  static bool one_block_covers(int64_t n) {
    return n % NR == 0 || covers_exactly<Kernel>(MR, n % NR);
  }
  static void run_one_block(int64_t m, int64_t n, int64_t k, T alpha, const AOp& a, const BOp& b, T beta, T* c,
                            int64_t ldc, const Epilogue& epi) {
    static_assert(!a_prepacked && b_in_place_ok, "one block packs A and reads B where it lies");
    T* ap = static_cast<T*>(thread_pack_buffer(0).get(sizeof(T) * std::size_t(panel_depth(k) * round_up(m, MR))));
    const int64_t a_rows = packed_a_rows(m);  // as run packs such a block
    pack_a_panels(a, a_rows, 0, m, 0, k, ap);
    [[maybe_unused]] auto kernel_state = thread_state();
    alignas(64) T edge[MR * NR];
    for (int64_t jr = 0; jr < n; jr += NR) {
      const int64_t nr = std::min<int64_t>(NR, n - jr);
      const T* bt = b.v.data + jr * b.v.rs;
      for (int64_t ir = 0; ir < m; ir += MR)
        run_tile(std::min<int64_t>(MR, m - ir), nr, k, ap + ir * panel_depth(k), a_rows, bt, b.v.cs, b.v.rs,
                 c + ir + jr * ldc, ldc, alpha, beta, edge);
      if constexpr (!Epilogue::is_identity) epi(c + jr * ldc, ldc, 0, jr, m, nr);
    }
  }

  // The rows of the panels A's block of mc rows is packed in: the half-height kernel's where the
  // block fits it (no zero rows; that kernel then runs its tiles), else MR.
  [[gnu::always_inline]] static int64_t packed_a_rows(int64_t mc) {
    if constexpr (requires { typename Kernel::HalfRows; })
      if (Kernel::HalfRows::mr < MR && mc <= Kernel::HalfRows::mr) return Kernel::HalfRows::mr;
    return MR;
  }
  // A's rows [i0, i0 + mc) over depth [p0, p0 + kc) into panels of a_rows (packed_a_rows) at ap.
  [[gnu::always_inline]] static void pack_a_panels(const AOp& a, int64_t a_rows, int64_t i0, int64_t mc, int64_t p0,
                                                   int64_t kc, T* ap) {
    if constexpr (requires { typename Kernel::HalfRows; })
      if (a_rows != MR) return a.template pack<Kernel::HalfRows::mr>(i0, mc, p0, kc, ap);
    a.template pack<MR>(i0, mc, p0, kc, ap);
  }

  // One micro-tile of C (mr <= MR, nr <= NR); a ragged one through narrower kernels, in place
  // when they cover it exactly, else on a copied tile. A full one calls the kernel directly:
  // the int8 kernels inline their full tile here (a call per 16-slot tile cost 6-8% of a 64^3
  // int8 GEMM).
  static void run_tile(int64_t mr, int64_t nr, int64_t kc, const T* at, int64_t a_ps, const T* bt, int64_t b_ps,
                       int64_t b_js, T* ct, int64_t ldc, T alpha, T beta, T* edge) {
    if (mr == MR && nr == NR) return Kernel::run(kc, at, a_ps, bt, b_ps, b_js, ct, ldc, alpha, beta);
    if (covers_exactly<Kernel>(mr, nr)) return run_narrowest<Kernel>(mr, nr, kc, at, a_ps, bt, b_ps, b_js, ct, ldc, alpha, beta);
    ragged_tile<MR, NR>(mr, nr, ct, ldc, beta, edge, [&](T* c, int64_t ld) {
      run_narrowest<Kernel>(mr, nr, kc, at, a_ps, bt, b_ps, b_js, c, ld, alpha, beta);
    });
  }
};

STRATA_TILE_NS_END
