#!/usr/bin/env bash
# Installs what strata needs to build, test and benchmark, from Debian packages.
# Idempotent and quiet: only missing packages are installed; prints one line when done.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config
  # libraries the build uses
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  # BLAS conformance: reference BLAS, its netlib test programs, LAPACK on top, gfortran for the ABI tests
  gfortran libblas3 libblas-dev libblas-test liblapack3
  # Debian's NumPy and SciPy (they link libblas.so.3), run on the drop-in by a test
  python3-numpy python3-scipy
  # peers measured side by side by `strata bench` (loaded with dlopen; optional at run time)
  libopenblas0-pthread libblis4-pthread libdnnl-dev libxsmm-dev
  # sanitizer runtimes and clang for the fuzzers
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all build and test dependencies present"
