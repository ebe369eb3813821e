#!/usr/bin/env bash
# Interleaved A/B of sgemm between another revision's BLAS library and this tree's build
# (build/release, built beforehand): builds REV's strata_blas in a git worktree under
# build/ab/REV, compiles bench/gemm_ab.cpp against each library, and runs the two alternately
# ROUNDS times per shape (default 5), printing each side's GFLOPS and the median ratio.
# Usage: bench/compare_builds.sh REV [THREADS] MxNxK...
#   e.g. bench/compare_builds.sh a1ef895 1 64x64x64 256x196x1024 2048x2048x2048
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$1; shift
threads=1
if [[ $# -gt 0 && $1 != *x* ]]; then threads=$1; shift; fi
rounds=${ROUNDS:-5}
root=$PWD
old=$root/build/ab/$rev
if [[ ! -d $old ]]; then
  mkdir -p "$root/build/ab"
  git worktree add --detach "$old" "$rev" >/dev/null
fi
(cd "$old" && cmake --preset release >/dev/null && cmake --build --preset release --target strata_blas >/dev/null)
link() {  # $1: tree, $2: output
  local lib=$1/build/release/src
  c++ -O2 -std=c++20 -I"$1/include" bench/gemm_ab.cpp -o "$2" -L"$lib/blas" -L"$lib/core" -lstrata_blas \
    -lstrata_core -Wl,-rpath,"$lib/blas:$lib/core:$lib/rt"
}
link "$old" build/ab/gemm_ab_old
link "$root" build/ab/gemm_ab_new
printf '%-18s %-40s %-40s %s\n' shape "$rev (GFLOPS)" "this tree (GFLOPS)" "new/old (median)"
for shape in "$@"; do
  IFS=x read -r m n k <<<"$shape"
  reps=$(python3 -c "print(max(3, int(2e9 / (2 * $m * $n * $k))))")
  a=() b=()
  for ((r = 0; r < rounds; ++r)); do
    a+=("$(build/ab/gemm_ab_old "$m" "$n" "$k" "$reps" "$threads")")
    b+=("$(build/ab/gemm_ab_new "$m" "$n" "$k" "$reps" "$threads")")
  done
  ratio=$(python3 -c "import statistics as s, sys; o, n = (list(map(float, x.split())) for x in sys.argv[1:]); print(f'{s.median(n) / s.median(o):.3f}')" "${a[*]}" "${b[*]}")
  printf '%-18s %-40s %-40s %s\n' "$shape" "${a[*]}" "${b[*]}" "$ratio"
done
