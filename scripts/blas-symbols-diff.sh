#!/bin/sh
# Lists the dynamic symbols of a BLAS library and diffs them against the installed reference
# libblas.so.3. Exits 1 when the candidate lacks any reference symbol (extras are listed but
# allowed).
#
#   scripts/blas-symbols-diff.sh [CANDIDATE [REFERENCE]]
set -eu
candidate=${1:-build/blas/blas-dropin/libblas.so.3}
reference=${2:-/usr/lib/x86_64-linux-gnu/blas/libblas.so.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
symbols() { nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | sort -u; }
symbols "$reference" > "$tmp/ref"
symbols "$candidate" > "$tmp/cand"
missing=$(comm -23 "$tmp/ref" "$tmp/cand")
extra=$(comm -13 "$tmp/ref" "$tmp/cand")
echo "reference: $(wc -l < "$tmp/ref") symbols ($reference)"
echo "candidate: $(wc -l < "$tmp/cand") symbols ($candidate)"
[ -z "$extra" ] || { echo "extra (allowed):"; echo "$extra" | sed 's/^/  + /'; }
if [ -n "$missing" ]; then
  echo "missing:"; echo "$missing" | sed 's/^/  - /'; exit 1
fi
echo "every reference symbol is exported"
