#!/usr/bin/env bash
# In-process A/B of sgemm between another revision's BLAS library and this tree's build
# (build/release, built beforehand): builds REV's strata_blas in a git worktree under
# build/ab/REV, copies both libraries aside and runs bench/gemm_ab.cpp, which loads the two
# side by side and alternates batches of calls between them ROUNDS times per shape (default
# 20), printing each side's median GFLOPS and the ratio. REV may be "." for an A/A run (this
# build against itself), which shows the harness's own spread.
# AB_TYPE=u8s8s32 (full-range u8 A) or u7s8s32 (A below 128) times the integer gemm_ex instead;
# AB_TYPE=strsm, strmm or ssyrk a Level 3 routine, ssymv, ssyr, sgemv_n, sgemv_t or sger a Level 2 one (shapes
# as in bench/gemm_ab.cpp). AB_LD=N gives the f32 gemm's A, B and C a leading dimension of at least N
# (blocks of a larger matrix, as Level 3 routines and LAPACK pass them); AB_LDC=N gives C alone
# a leading dimension of at least N, for every type but the batches. AB_TYPE=sbatch or dbatch
# times gemm_strided_batched (f32 or f64) over AB_BATCH entries (default 1000) of each shape,
# AB_TYPE=bf16batch or u8batch gemm_strided_batched_ex (bf16, or u8 x s8 -> s32) likewise.
# AB_QUANTILE=0.1 reports a low quantile of the times instead of the median (bench/gemm_ab.cpp).
# Usage: bench/compare_builds.sh REV [THREADS] [OPS] MxNxK...
#   e.g. bench/compare_builds.sh a1ef895 1 NN 64x64x64 256x196x1024 2048x2048x2048
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$1; shift
threads=1 ops=NN
if [[ $# -gt 0 && $1 != *x* ]]; then threads=$1; shift; fi
if [[ $# -gt 0 && $1 != *x* ]]; then ops=$1; shift; fi
rounds=${ROUNDS:-20}
root=$PWD
source bench/ab_tree.sh
old=$(ab_tree "$rev" strata_blas)
# Distinct files, so the loader keeps two copies; strata_core and strata_rt come from this build.
mkdir -p build/ab/libs
cp -L "$old/build/release/src/blas/libstrata_blas.so" build/ab/libs/old.so
cp -L "$root/build/release/src/blas/libstrata_blas.so" build/ab/libs/new.so
c++ -O2 -std=c++20 -I"$root/include" bench/gemm_ab.cpp -o build/ab/gemm_ab -ldl
shapes=()
for shape in "$@"; do shapes+=(${shape//x/ }); done
LD_LIBRARY_PATH=$root/build/release/src/core:$root/build/release/src/rt \
  build/ab/gemm_ab build/ab/libs/old.so build/ab/libs/new.so "$rounds" "$ops" "$threads" "${shapes[@]}"
