#!/usr/bin/env bash
# Produces the tables of docs/PERFORMANCE.md (run on a quiet machine; takes ~10 minutes).
# Peers are loaded by `strata bench` itself, which unsets OPENBLAS_CORETYPE in its own process.
set -euo pipefail
cd "$(dirname "$0")/.."
strata=build/release/tools/strata/strata
out=${1:-build/bench-results}
mkdir -p "$out"
"$strata" info | tee "$out/info.txt"
"$strata" bench gemm -f bench/problems/gemm_issue4.txt --dtype f32,f64 -t 1,2 -r 3 --csv "$out/gemm.csv" | tee "$out/gemm.txt"
"$strata" bench gemm -p NN:1024x1024x1024 --epilogue bias+gelu_erf --peers none -r 9 | tee "$out/epilogue.txt"
"$strata" bench conv -b 1 -t 1 -r 3 --csv "$out/conv.csv" | tee "$out/conv.txt"
