#!/usr/bin/env bash
# The tile templates are compiled into several libraries; each must keep its own copies
# hidden (kernel files build with -fvisibility=hidden). An exported copy would be bound by
# the dynamic linker for every library that has one, silently running another library's code.
# Usage: no_tile_exports.sh lib.so...
set -euo pipefail
status=0
for lib in "$@"; do
  exported=$(nm -D --defined-only "$lib" | c++filt | grep -E 'strata::tile::(portable|avx2|avx512|avx512bf16|avxvnni)::' || true)
  if [ -n "$exported" ]; then
    echo "$lib exports tile instantiations:"
    echo "$exported" | head -20
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "no tile instantiations exported by: $*"
exit "$status"
