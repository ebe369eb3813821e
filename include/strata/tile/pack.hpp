// Packing policies: copy a block of op(A) or op(B) into the micro-panel order the microkernel
// streams, padding the ragged edge with zeros so the kernel never branches on size.
//
//   A block (mc x kc) → ceil(mc/MR) panels; panel r holds, for each p, MR rows r*MR..r*MR+MR-1
//   B block (kc x nc) → ceil(nc/NR) panels; panel s holds, for each p, NR columns
#pragma once
#include <algorithm>
#include <cstdint>

#include "strata/tile/matrix.hpp"

STRATA_TILE_NS_BEGIN

template <int MR, class T>
void pack_a(int64_t mc, int64_t kc, MatrixView<T> a, T* __restrict dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t rows = std::min<int64_t>(MR, mc - i0);
    if (a.rs == 1 && rows == MR) {  // columns are contiguous: straight copies
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = a.data + i0 + p * a.cs;
        // Each p starts a new, distant line: fetch a few columns ahead.
        __builtin_prefetch(src + 8 * a.cs);
        for (int i = 0; i < MR; ++i) dst[p * MR + i] = src[i];
      }
    } else {  // rows contiguous (transposed A) or an edge: walk each row along p
      for (int64_t i = 0; i < MR; ++i) {
        if (i < rows) {
          const T* src = a.data + (i0 + i) * a.rs;
          if (a.cs == 1 && i0 + i + MR < mc)  // rows of A^T: fetch the next panel's row
            for (int64_t p = 0; p < kc; p += int64_t(64 / sizeof(T))) __builtin_prefetch(src + MR * a.rs + p);
          for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = src[p * a.cs];
        } else {
          for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = T(0);
        }
      }
    }
    dst += MR * kc;
  }
}

template <int NR, class T>
void pack_b(int64_t kc, int64_t nc, MatrixView<T> b, T* __restrict dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    const int64_t cols = std::min<int64_t>(NR, nc - j0);
    if (b.cs == 1 && cols == NR) {  // rows of op(B) contiguous
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = b.data + p * b.rs + j0;
        for (int j = 0; j < NR; ++j) dst[p * NR + j] = src[j];
      }
    } else {
      for (int64_t j = 0; j < NR; ++j) {
        if (j < cols) {
          const T* src = b.data + (j0 + j) * b.cs;
          // Columns are short streams the hardware prefetcher barely learns: while copying
          // this column, fetch the same column of the next panel.
          if (b.rs == 1 && j0 + j + NR < nc)
            for (int64_t p = 0; p < kc; p += int64_t(64 / sizeof(T))) __builtin_prefetch(src + NR * b.cs + p);
          for (int64_t p = 0; p < kc; ++p) dst[p * NR + j] = src[p * b.rs];
        } else {
          for (int64_t p = 0; p < kc; ++p) dst[p * NR + j] = T(0);
        }
      }
    }
    dst += NR * kc;
  }
}

STRATA_TILE_NS_END
