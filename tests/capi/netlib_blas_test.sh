#!/bin/sh
# Runs one netlib BLAS test program (Debian's libblas-test) against the strata drop-in
# library and decides pass/fail from its output, since the programs exit 0 even on failure.
#
#   netlib_blas_test.sh DROPIN_DIR PROGRAM [INPUT_FILE]
#
# Pass means: no line reports a failure, and every routine the input file enables reported
# PASSED (Level 2/3: error exits + computational tests per layout; Level 1: one PASS per
# subprogram tested).
set -eu
dropin=$1 program=$2 input=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The library under test must be the one loaded.
if ! LD_LIBRARY_PATH="$dropin" ldd "$program" | grep -q "libblas.so.3 => $dropin/"; then
  echo "FAIL: $program does not load libblas.so.3 from $dropin"; exit 1
fi

if [ -n "$input" ]; then
  LD_LIBRARY_PATH="$dropin" "$program" < "$input" > stdout.txt 2>&1
else
  LD_LIBRARY_PATH="$dropin" "$program" > stdout.txt 2>&1
fi
cat stdout.txt *.out 2>/dev/null > all.txt || true
cat all.txt

fail_lines=$(grep -E 'FAIL|WRONG|SUSPECT|\*\*\*\*\*\*|NOT FOUND' all.txt | grep -v 'PASSED' || true)
if [ -n "$fail_lines" ]; then
  echo "FAIL: the test program reported failures:"; echo "$fail_lines"; exit 1
fi

passed=$(grep -c 'PASS' all.txt || true)
if [ -n "$input" ]; then
  routines=$(grep -cE '^[A-Za-z_0-9]+ +T ' "$input" || true)
  # CBLAS inputs test both layouts when their layout line says 2; Fortran ones have no layout.
  per_routine=2
  if grep -qE '^ *2 +0 TO TEST COLUMN-MAJOR' "$input"; then per_routine=3; fi
  grep -q 'END OF TESTS' all.txt || { echo "FAIL: the program did not reach END OF TESTS"; exit 1; }
  expected=$((routines * per_routine))
else
  expected=$(grep -c 'Test of subprogram' all.txt || true)
fi
if [ "$passed" -lt "$expected" ] || [ "$expected" -eq 0 ]; then
  echo "FAIL: $passed PASSED lines, expected $expected"; exit 1
fi
echo "netlib: $(basename "$program"): $passed PASSED lines, all routines passed"
