#!/usr/bin/env bash
# Installs the built tree into a temporary prefix, then builds and runs a consumer against it
# through find_package(strata) and through pkg-config.
set -euo pipefail
build_dir=$1 src_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$src_dir/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/app"
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs strata)
c++ -std=c++20 "$src_dir/tests/install/consumer/main.cpp" -o "$work/app_pc" $flags -Wl,-rpath,"$work/prefix/lib"
"$work/app_pc"
echo "install, find_package and pkg-config: ok"
