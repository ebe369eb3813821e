#!/usr/bin/env bash
# In-process A/B of the convolutions between another revision's libstrata_dnn and this tree's
# build (build/release, built beforehand): builds REV's strata_dnn in a git worktree under
# build/ab/REV, copies it aside and runs `strata bench conv --peers strata:COPY` with the other
# arguments, so each layer is timed call for call against the other build with the same
# algorithm, each build reading its own copy of x as oneDNN reads its own (ratio = other /
# this: > 1 means this tree is faster). REV "." runs the A/A (this build against a copy of
# itself), which shows the spread of the measurement. Both builds use this tree's strata_core,
# strata_rt and strata_blas; the convolution code is each build's own.
# Usage: bench/compare_conv_builds.sh REV [strata bench conv options]
#   e.g. bench/compare_conv_builds.sh b58748a -b 1 -t 1 -r 15 --layout nhwc -f bench/problems/conv_resnet50.txt
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/ab_tree.sh
rev=$1; shift
old=$(ab_tree "$rev" strata_dnn)
mkdir -p build/ab/libs
cp -L "$old/build/release/src/dnn/libstrata_dnn.so" build/ab/libs/dnn_other.so
build/release/tools/strata/strata bench conv --peers strata:build/ab/libs/dnn_other.so "$@"
