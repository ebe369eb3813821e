#!/usr/bin/env bash
# Produces the tables of docs/PERFORMANCE.md (run on a quiet machine; takes ~15 minutes).
# Peers are loaded by `strata bench` itself, which unsets OPENBLAS_CORETYPE in its own process.
set -euo pipefail
cd "$(dirname "$0")/.."
strata=build/release/tools/strata/strata
out=${1:-build/bench-results}
mkdir -p "$out"
"$strata" info | tee "$out/info.txt"
"$strata" bench gemm -f bench/problems/gemm_issue4.txt --dtype f32,f64 -t 1,2 -r 3 --csv "$out/gemm.csv" | tee "$out/gemm.txt"
"$strata" bench gemm -p NN:1024x1024x1024 --epilogue bias+gelu_erf --peers none -r 9 | tee "$out/epilogue.txt"
"$strata" bench gemm -f bench/problems/gemm_issue4.txt --dtype u8s8s32 -t 1 -r 5 --csv "$out/gemm_u8s8s32.csv" | tee "$out/gemm_u8s8s32.txt"
"$strata" bench gemm -p NN:49x2048x512,NN:196x1024x256,NN:512x49x2048,NN:4096x16x4096,NN:2048x96x2048,NN:100x100x100 -t 1 -r 5 | tee "$out/gemm_skinny.txt"
"$strata" bench level2 | tee "$out/level2.txt"
"$strata" bench pool | tee "$out/pool.txt"
"$strata" bench pool --part-ms 0.2 | tee -a "$out/pool.txt"
# Convolution: filters prepared once for strata (oneDNN's weight reorder is untimed too), then
# the per-call filter for comparison; batch 1 and 8, 1 and 2 threads.
"$strata" bench conv -b 1,8 -t 1,2 -r 5 --csv "$out/conv.csv" | tee "$out/conv.txt"
"$strata" bench conv -b 1,8 -t 1,2 -r 5 --layout nhwc --csv "$out/conv_nhwc.csv" | tee "$out/conv_nhwc.txt"
"$strata" bench conv -b 1 -t 1 -r 5 --layout nhwc --filter per-call | tee "$out/conv_nhwc_per_call.txt"
